"""Benchmark: symbolic equations of the 6-DoF universal manipulator of seed 004 (Example 6), ours against
sympy's own mechanics module in the same run.

Ours: :func:`multibody.symbolic.equations_of_motion` (CRBA and RNEA recursions on polynomials) followed by
:func:`multibody.symbolic.split_inertial_forces` (the centrifugal / Coriolis / gyroscopic split, eqs. 2–5)
and the sympy expressions of H. Peer: ``sympy.physics.mechanics.KanesMethod`` on the same model, written as
a user of that module writes it (:func:`kanes_method`: one frame per body turned about its joint axis, points
located from the parent's, u = q̇, gravity loads) up to its mass matrix and forcing vector. Both start from
sympy's cache cleared. Reported: the wall times, their ratio and the operation counts (``sympy.count_ops``) of
the two mass matrices; both mass matrices are checked against ``multibody.crba`` at a random state.
Targets (issue 11): faster than KanesMethod, a mass matrix with at most a fifth of its operations.
"""
import time

import numpy as np


def kanes_method(model):
    """``(KanesMethod, q, u)`` with ``kanes_equations`` done for ``model`` (a tree of Revolute and Prismatic
    joints; numeric or sympy parameters): the peer's formulation of the same system."""
    import sympy as sp
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

    from multibody.errors import ModelError
    from multibody.model import Prismatic, Revolute

    n = model.nbodies
    q = dynamicsymbols(f"q1:{n + 1}")
    u = dynamicsymbols(f"u1:{n + 1}")
    N = ReferenceFrame("N")
    O = Point("O")
    O.set_vel(N, 0)
    frames, points = {0: N}, {0: O}
    bodies, loads = [], []
    g = [sp.nsimplify(x) for x in model.gravity]

    def vector(frame, x):
        return sum((sp.nsimplify(c) * e for c, e in zip(x, (frame.x, frame.y, frame.z))), sp.S(0) * frame.x)

    for i in range(1, n + 1):
        parent = frames[model.parent[i]]
        R = sp.Matrix(model.jplace_R[i]).applyfunc(sp.nsimplify)
        J = parent if R == sp.eye(3) else parent.orientnew(f"J{i}", "DCM", R.T)
        axis = vector(J, model.jaxis[i, 0])
        offset = vector(parent, model.jplace_p[i])
        joint = model.joints[i].joint
        if isinstance(joint, Revolute):
            F = J.orientnew(f"F{i}", "Axis", (q[i - 1], axis))
        elif isinstance(joint, Prismatic):
            F = J
            offset = offset + q[i - 1] * axis
        else:
            raise ModelError(f"joint '{model.joint_names[i]}': kanes_method takes Revolute and Prismatic joints",
                             element=f"joint '{model.joint_names[i]}'")
        P = points[model.parent[i]].locatenew(f"P{i}", offset)
        P.set_vel(N, P.pos_from(O).dt(N))
        C = P.locatenew(f"C{i}", vector(F, model.com[i]))
        C.set_vel(N, C.pos_from(O).dt(N))
        I = sp.Matrix(model.inertia_com[i]).applyfunc(sp.nsimplify)
        m = sp.nsimplify(model.mass[i])
        bodies.append(RigidBody(f"B{i}", C, F, m, (inertia(F, I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[1, 2], I[0, 2]), C)))
        loads.append((C, m * vector(N, g)))
        frames[i], points[i] = F, P
    km = KanesMethod(N, q_ind=q, u_ind=u, kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)])
    km.kanes_equations(bodies, loads)
    return km, q, u


def _check(model, H_of_q, rng):
    """max |H(q) − crba(q)| at a random state, for H_of_q a function of q (numbers)."""
    import multibody as mb

    q = model.random_configuration(rng)
    return float(np.max(np.abs(np.asarray(H_of_q(q), dtype=float) - mb.crba(model, q))))


def bench_symbolic(verbose=True):
    """Derive and split the universal manipulator (symbolic parameters) with ours and with KanesMethod;
    returns a dict of times and operation counts."""
    import sympy as sp
    from sympy.core.cache import clear_cache

    from multibody.symbolic import equations_of_motion, split_inertial_forces
    from multibody.systems import manipulators

    numeric = manipulators.universal()
    values = manipulators.DEFAULTS["universal"]
    rng = np.random.default_rng(0)
    split_inertial_forces(manipulators.polar(symbolic=True))  # imports and first-use costs of both sides
    kanes_method(manipulators.polar(symbolic=True))

    clear_cache()
    model = manipulators.universal(symbolic=True)
    t0 = time.perf_counter()
    eqs = equations_of_motion(model)
    split = split_inertial_forces(model)
    H = split.mass_matrix
    ours = time.perf_counter() - t0
    ops_ours = int(sp.count_ops(H))
    f_ours = sp.lambdify([eqs.q, eqs.parameters], H, "numpy")
    err_ours = _check(numeric, lambda q: f_ours(q, [values[str(s)] for s in eqs.parameters]), rng)

    clear_cache()
    model = manipulators.universal(symbolic=True)
    t0 = time.perf_counter()
    km, q, u = kanes_method(model)
    M = km.mass_matrix
    peer = time.perf_counter() - t0
    ops_peer = int(sp.count_ops(M))
    params = sorted(M.free_symbols - {sp.Symbol("t")}, key=str)
    f_peer = sp.lambdify([q, params], M, "numpy")
    err_peer = _check(numeric, lambda x: f_peer(x, [values[str(s)] for s in params]), rng)

    result = {
        "name": "symbolic equations of the 6-DoF universal manipulator (seed 004, Example 6)",
        "ours_derive_and_split_s": ours,
        "kanes_method_s": peer,
        "ratio_kanes_over_ours": peer / ours,
        "mass_matrix_ops_ours": ops_ours,
        "mass_matrix_ops_kanes": ops_peer,
        "ops_ratio_ours_over_kanes": ops_ours / ops_peer,
        "max_error_vs_crba_ours": err_ours,
        "max_error_vs_crba_kanes": err_peer,
        "gyroscopic_power": str(split.gyroscopic_power),
        "meets_targets": bool(ours < peer and ops_ours <= ops_peer / 5),
    }
    if verbose:
        print(result["name"])
        print(f"{'':34s} {'time s':>8s} {'count_ops(H)':>13s} {'|H - crba|':>11s}")
        print(f"{'ours: equations + split':34s} {ours:8.3f} {ops_ours:13d} {err_ours:11.1e}")
        print(f"{'sympy KanesMethod':34s} {peer:8.3f} {ops_peer:13d} {err_peer:11.1e}")
        print(f"time ratio KanesMethod / ours: {peer / ours:.1f}; operations ours / KanesMethod: "
              f"{ops_ours / ops_peer:.3f} (targets: > 1 and <= 0.2)")
    return result
