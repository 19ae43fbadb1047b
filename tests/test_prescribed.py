"""Prescribed (driven) coordinates and their drive forces (seed 001 §3.3.1, eqs. 3.92–3.94; RBDA §9.2).

The O(N) hybrid kernel (``kernels/hybrid.py``, ``mb.hybrid_dynamics``) against the book's dense partition of
M q̈ + b = τ (eq. 3.94 for the free accelerations, eq. 3.93 for the drive forces, M and b from ``crba`` and
``rnea``) on random trees of every joint type; ``simulate(..., prescribed=...)`` on the seed 001 triple pendulum
and a random 6-body tree: the driven coordinates follow their functions, the work of the drive forces is the
change of T + V, and the free system driven by the recorded forces as torques runs along the same trajectory.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.integrate import simpson
from scipy.interpolate import CubicSpline

import multibody as mb
from multibody.bench.dynamics import random_tree
from multibody.errors import ModelError
from multibody.systems.pendulums import triple_pendulum_seed001

from models import moving_random_tree

EPS = np.finfo(float).eps
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _dense_hybrid(model, q, v, tau, known, qdd_known):
    """The book's reduced system: M_ff q̈_f = τ_f − b_f − M_fp q̈_p (eq. 3.94) and the drive forces
    τ_p = M_pf q̈_f + M_pp q̈_p + b_p − τ_p (eq. 3.93, with the sign of a generalized force), M = crba, b = rnea(q,
    v, 0). Returns (q̈, forces, M, b)."""
    M = mb.crba(model, q)
    b = mb.rnea(model, q, v, np.zeros(model.nv))
    K, F = known, ~known
    qdd = np.where(K, qdd_known, 0.0)
    Mff = M[np.ix_(F, F)]
    qdd[F] = np.linalg.solve(Mff, tau[F] - b[F] - M[np.ix_(F, K)] @ qdd[K]) if F.any() else qdd[F]
    forces = np.zeros(model.nv)
    forces[K] = M[K] @ qdd + b[K] - tau[K]
    return qdd, forces, M, b


@SETTINGS
@given(st.integers(1, 20), st.integers(0, 2**32 - 1), st.floats(0.0, 1.0))
def test_hybrid_kernel_equals_the_dense_reduced_system(n, seed, share):
    """Every joint type, any subset of velocity coordinates known (also parts of Spherical/Free joints). Both
    are backward-stable solves of the same system: they differ by O(n eps cond(M)) relatively."""
    model, rng = moving_random_tree(n, seed)
    q = model.random_configuration(rng)
    v, tau, qdd_known = (rng.uniform(-1.0, 1.0, model.nv) for _ in range(3))
    known = rng.random(model.nv) < share
    qdd, forces = mb.hybrid_dynamics(model, q, v, tau, known, qdd_known)
    ref, fref, M, b = _dense_hybrid(model, q, v, tau, known, qdd_known)
    # the two solutions differ by the forward errors of the solves, ≲ n eps cond(M) (cond(M_ff) ≤ cond(M));
    # the residual of M q̈ + b = τ + forces is a backward error, ≲ n eps (|M| |q̈| + |b| + |τ|)
    tol = 16 * (model.nv + 1) * EPS * np.linalg.cond(M)
    assert np.array_equal(qdd[known], qdd_known[known])
    assert np.all(forces[~known] == 0.0)
    assert np.abs(qdd - ref).max() <= tol * max(1.0, np.abs(ref).max())
    assert np.abs(forces - fref).max() <= tol * max(1.0, np.abs(fref).max(), np.abs(tau).max())
    scale = np.abs(M).max() * np.abs(qdd).max() + np.abs(b).max() + np.abs(tau).max()
    res = np.abs(mb.rnea(model, q, v, qdd) - tau - forces).max()
    assert res <= 16 * (model.nv + 1) * EPS * scale


@pytest.mark.parametrize("seed", range(5))
def test_hybrid_with_nothing_or_everything_known_is_aba_or_rnea(seed):
    model, rng = moving_random_tree(12, seed)
    q = model.random_configuration(rng)
    v, tau, a = (rng.uniform(-1.0, 1.0, model.nv) for _ in range(3))
    none = np.zeros(model.nv, dtype=bool)
    qdd, forces = mb.hybrid_dynamics(model, q, v, tau, none, a)
    ref = mb.aba(model, q, v, tau)
    assert np.abs(qdd - ref).max() <= 64 * EPS * max(1.0, np.abs(ref).max())   # the same passes, same order
    assert not forces.any()
    qdd, forces = mb.hybrid_dynamics(model, q, v, tau, ~none, a)
    assert np.array_equal(qdd, a)
    ref = mb.rnea(model, q, v, a) - tau
    assert np.abs(forces - ref).max() <= 1e-12 * max(1.0, np.abs(ref).max())
    # indices work as the mask does
    idx = np.flatnonzero(rng.random(model.nv) < 0.5)
    mask = np.zeros(model.nv, dtype=bool)
    mask[idx] = True
    for x, y in zip(mb.hybrid_dynamics(model, q, v, tau, idx, a), mb.hybrid_dynamics(model, q, v, tau, mask, a)):
        assert np.array_equal(x, y)


def test_hybrid_dynamics_bad_input():
    model = triple_pendulum_seed001()
    q = v = tau = np.zeros(3)
    with pytest.raises(ModelError, match="known must be 3 booleans or indices") as e:
        mb.hybrid_dynamics(model, q, v, tau, [True, False], np.zeros(3))
    assert "joint1.angle" in str(e.value)
    with pytest.raises(ModelError, match="known"):
        mb.hybrid_dynamics(model, q, v, tau, [0, 5], np.zeros(3))
    with pytest.raises(ModelError, match="qdd_known must be finite"):
        mb.hybrid_dynamics(model, q, v, tau, [1], [0.0, np.nan, 0.0])
    qdd, _ = mb.hybrid_dynamics(model, q, v, tau, [0], [0.0, np.nan, 0.0])   # free entries are not read
    assert np.all(np.isfinite(qdd))
    with pytest.raises(ModelError, match="qdd_known must have shape"):
        mb.hybrid_dynamics(model, q, v, tau, [0], np.zeros(2))


# ---- simulate(..., prescribed=...) ---------------------------------------------------------------------------
def _drive(a, w, phi, c):
    """q = c + a sin(w t + phi) with its derivatives."""
    def f(t):
        s, co = np.sin(w * t + phi), np.cos(w * t + phi)
        return c + a * s, a * w * co, -a * w * w * s
    return f


RTOL = 1e-12


def _check_run(model, q0, v0, prescribed, t_end, n_out=2001):
    """The three claims on one model: exact drive, work = Δ(T + V), replay by the recorded forces."""
    res = mb.simulate(model, q0, v0, t_end, method="DOP853", rtol=RTOL, atol=RTOL, n_out=n_out,
                      prescribed=prescribed)
    names = model.coordinate_names()
    vnames = model.velocity_names()
    assert res.info["prescribed"] == sorted(prescribed, key=names.index)
    assert set(res.drive_forces) == set(prescribed)
    # 1. the driven coordinates are their functions, to the last bit (filled in, not integrated)
    for name, f in prescribed.items():
        vals = np.array([f(t) for t in res.t])
        assert np.array_equal(res.q[:, names.index(name)], vals[:, 0])
        assert np.array_equal(res.v[:, vnames.index(name)], vals[:, 1])
    # 2. the drive forces' work is the change of T + V: W(t) = ∫ Σ τ_p q̇_p dt by Simpson's rule on the outputs,
    #    whose error is estimated by Richardson (the same rule on every other output); the states carry the
    #    integrator's global error, at most (steps) x (local tolerance) relative to the state's size, which
    #    enters T + V and the forces through the same scale
    power = sum(res.drive_forces[name] * res.v[:, vnames.index(name)] for name in prescribed)
    E = res.energy["total"]
    work = simpson(power, x=res.t)
    coarse = simpson(power[::2], x=res.t[::2])
    scale = np.abs(res.energy["kinetic"]).max() + np.abs(res.energy["potential"]).max() \
        + simpson(np.abs(power), x=res.t)
    tol = abs(work - coarse) + res.info["steps"] * RTOL * scale
    balance = abs(work - (E[-1] - E[0]))
    assert balance <= tol / 3, (balance, tol)
    assert abs(E[-1] - E[0]) > 1e3 * tol     # the drives did change the energy: the check is not trivial
    # 3. the free system driven by the recorded forces (a spline through them: its error h⁴ f⁗ · 5/384 is far
    #    below the tolerance at 2000 outputs) runs along the same trajectory
    splines = {vnames.index(name): CubicSpline(res.t, res.drive_forces[name]) for name in prescribed}

    def torque(t, q, v):
        out = np.zeros(model.nv)
        for k, s in splines.items():
            out[k] = s(t)
        return out

    free = mb.simulate(model, res.q[0], res.v[0], t_end, method="DOP853", rtol=RTOL, atol=RTOL, t_eval=res.t,
                       tau=torque)
    dev = max(np.abs(free.q - res.q).max(), np.abs(free.v - res.v).max())
    assert dev <= 1e-8 / 3, dev
    return res, balance, tol, dev


def test_triple_pendulum_driven_joints():
    """Seed 001's triple pendulum (§3.5, Fig. 3.20) with the middle joint driven (a motor between rods 1 and 2,
    the book's §3.3.1 example of a controlled coordinate) and, in a second run, the first one too."""
    model = triple_pendulum_seed001()
    res, *_ = _check_run(model, [0.2, 0.0, -0.1], [0.0, 0.0, 0.3],
                         {"joint2.angle": _drive(0.6, 2.0, 0.0, 0.1)}, 2.0)
    assert res.q[0, 1] == pytest.approx(0.1, abs=1e-15)     # q0's entry is replaced by f(t0)
    _check_run(model, [0.2, 0.0, -0.1], [0.0, 0.0, 0.3],
               {"joint1.angle": _drive(0.3, 1.5, 0.4, -0.2), "joint2.angle": _drive(0.6, 2.0, 0.0, 0.1)}, 2.0)


def test_random_tree_driven_coordinates():
    """A random 6-body tree (joint types chosen at random, random gravity): two of its plain coordinates
    driven — one of the two angles of a Universal joint (a joint articulated over its other coordinate) and a
    hinge below a Fixed joint — while a Spherical joint moves freely."""
    rng = np.random.default_rng(7)
    model = random_tree(6, rng)
    refused = {f"{j.name}.{c}" for j in model.joints[1:] if not j.joint.linear_coordinates
               for c in j.joint.coordinate_names}
    plain = [n for n in model.coordinate_names() if n not in refused]
    assert len(plain) >= 2 and len(plain) < model.nv
    drives = {plain[0]: _drive(0.4, 1.7, 0.3, 0.1), plain[-1]: _drive(0.3, 2.3, -0.5, 0.0)}
    assert sorted(drives) == ["joint1.angle1", "joint5.angle"] and {type(j.joint).__name__ for j in model.joints[1:]} \
        >= {"Universal", "Fixed", "Spherical"}
    q0 = model.random_configuration(rng, scale=0.5)
    v0 = rng.uniform(-0.3, 0.3, model.nv)
    _check_run(model, q0, v0, drives, 1.0)


def test_fixed_step_and_events():
    """RK4 (the Python fixed-step loop) agrees with DOP853 to RK4's error; an event on a driven coordinate
    fires where its function crosses."""
    model = triple_pendulum_seed001()
    drive = {"joint2.angle": _drive(0.5, 2.0, 0.0, 0.0)}
    ref = mb.simulate(model, [0.2, 0, 0], None, 1.0, method="DOP853", rtol=RTOL, atol=RTOL, n_out=11,
                      prescribed=drive)
    errs = []
    for h in (0.02, 0.01):
        res = mb.simulate(model, [0.2, 0, 0], None, 1.0, method="RK4", h=h, n_out=11, prescribed=drive)
        assert res.info["path"] == "python"
        errs.append(np.abs(res.q - ref.q).max())
    assert 2 ** 4 / 1.5 < errs[0] / errs[1] < 2 ** 4 * 1.5      # fourth order

    def crossing(t, q, v):
        return q[1] - 0.25

    res = mb.simulate(model, [0.2, 0, 0], None, 1.0, rtol=RTOL, atol=RTOL, events=crossing, prescribed=drive)
    assert res.info["t_events"][0][0] == pytest.approx(np.arcsin(0.5) / 2.0, abs=1e-10)


def test_drive_forces_are_saved(tmp_path):
    model = triple_pendulum_seed001()
    res = mb.simulate(model, None, None, 0.5, n_out=6, prescribed={"joint3.angle": _drive(0.2, 3.0, 0.0, 0.0)})
    path = tmp_path / "run.npz"
    res.save(path)
    back = mb.Result.load(path)
    assert np.array_equal(back.drive_forces["joint3.angle"], res.drive_forces["joint3.angle"])
    assert mb.simulate(model, None, None, 0.1, n_out=2).drive_forces == {}


def test_prescribed_bad_input(tmp_path):
    model = triple_pendulum_seed001()
    f = _drive(0.1, 1.0, 0.0, 0.0)
    with pytest.raises(ModelError, match="no coordinate 'joint9.angle'") as e:
        mb.simulate(model, None, None, 0.1, prescribed={"joint9.angle": f})
    assert "joint1.angle, joint2.angle, joint3.angle" in str(e.value) and e.value.element == "joint9.angle"
    with pytest.raises(ModelError, match="must be a dict"):
        mb.simulate(model, None, None, 0.1, prescribed=[f])
    with pytest.raises(ModelError, match="must be a callable"):
        mb.simulate(model, None, None, 0.1, prescribed={"joint1.angle": 0.3})
    with pytest.raises(ModelError, match="cannot be written to a checkpoint"):   # a checkpoint holds data only
        mb.simulate(model, None, None, 0.1, checkpoint=tmp_path / "run.ckpt", prescribed={"joint1.angle": f})
    with pytest.raises(ModelError, match="every coordinate"):
        mb.simulate(model, None, None, 0.1, prescribed={n: f for n in model.coordinate_names()})
    for bad, what in ((lambda t: (0.0, 0.0), "3 numbers"), (lambda t: (0.0, np.inf, 0.0), "non-finite"),
                      (lambda t: None, "3 numbers")):
        for method, h in (("DOP853", None), ("RK4", 0.01)):
            with pytest.raises(ModelError, match=what) as e:
                mb.simulate(model, None, None, 0.1, method=method, h=h, prescribed={"joint2.angle": bad})
            assert e.value.element == "joint2.angle"
    # a quaternion coordinate cannot be driven
    b = mb.ModelBuilder()
    b.add_body("ball", mass=1.0, com=(0, 0, -1), inertia=np.eye(3))
    b.add_joint("socket", mb.Spherical(), parent="ground", child="ball")
    b.add_body("tip", mass=1.0, com=(0, 0, -1), inertia=np.eye(3))
    b.add_joint("hinge", mb.Revolute((0, 1, 0)), parent="ball", child="tip")
    model = b.build()
    with pytest.raises(ModelError, match="cannot be prescribed") as e:
        mb.simulate(model, None, None, 0.1, prescribed={"socket.qx": f})
    assert e.value.element == "socket.qx"
    res = mb.simulate(model, None, [0.1, 0.0, 0.2, 0.0], 0.2, n_out=3, prescribed={"hinge.angle": f})
    assert np.allclose(np.linalg.norm(res.q[:, :4], axis=1), 1.0, rtol=0, atol=1e-12)
