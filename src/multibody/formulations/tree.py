"""The ``"tree"`` formulation: minimal coordinates on a tree (seed 001 §3.4–3.5).

State ``x = [q, v]``, ``ẋ = [q̇(q, v), aba(q, v, τ)]`` with ``τ = τ_applied(q, v) + τ_extra``: the joint
spring-dampers and efforts and the point spring-dampers of the model (``kernels/forces.py``), gravity being
inside ``aba``. The right-hand side :func:`tree_rhs` is a numba function, so fixed-step runs are one compiled
loop; the model's controllers and a numba torque law run in it too (:func:`tree_rhs_control`,
``formulations/tree_control.py``); a Python torque callback forces the Python right-hand side (see
``multibody.simulation``). Prescribed
(driven) coordinates, ``prescribed={name: f}``, are in ``formulations/prescribed.py``.


A model whose ground moves in a prescribed way (``model.base_motion``; seed 001 §3.1–3.2) runs the Python
right-hand side too: at every evaluation it writes the base's state at t into the workspace's base block
(``Data.set_time``), then calls the same compiled right-hand side. Its energies are absolute (inertial frame)
and are not conserved: the base does work on the system.

General joints (seed 001 §3.4.2) force the Python right-hand side as well: before each evaluation their
kinematics at (q, q̇, t) are written into the workspace (``Data.fill``), which needs the time the compiled
right-hand side does not pass on.
"""
import numpy as np
from numba import njit

from multibody.data import Data
from multibody.errors import ModelError
from multibody.formulations.base import OdeSystem, callback_forces, check_state, register_formulation
from multibody.formulations.tree_control import (P_CONTROL, control_extra, control_params, is_compiled_torque,
                                                 run_controls)
from multibody.integrate.fixed_step import no_project
from multibody.integrate.manifold import has_quaternions, normalize_quaternions, normalize_quaternions_q, qdot_kernel
from multibody.kernels.aba import aba_kernel
from multibody.kernels.energy import energy_kernel
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.hybrid import hybrid_kernel
from multibody.kernels.kinematics import F_MASS, GENERAL, W_KINETIC, W_POTENTIAL
from multibody.kernels.spatial import KERNEL
from multibody.result import Result

__all__ = ["tree_system", "tree_rhs", "tree_rhs_plain", "tree_rhs_extra", "tree_rhs_hybrid", "tree_rhs_control",
           "tree_control_run_params", "tree_params", "tree_energy",
           "tree_energies", "tree_energies_plain", "tree_observe", "tree_run_params", "tree_batch", "tree_joint_forces",
           "BATCH_PARAMS"]

#: position in the parameter tuple of :func:`tree_params` of the flag "the model has applied forces" (joint
#: springs, dampers or efforts, point springs): without them the right-hand side skips their pass
P_APPLIED = 17
#: position of the constant generalized forces (``tau`` of ``simulate``)
P_TAU = 16
#: position of a 1-vector holding the potential energy of the applied forces at the last evaluation
P_VAPPLIED = 18


@njit(inline="always", cache=True)
def _qdot_aba(p, x, tau, out):
    """out = [q̇(q, v), aba(q, v, τ)] for x = [q, v]."""
    nq = p[2].shape[0]
    qdot_kernel(p[0], x[:nq], x[nq:], out[:nq])
    aba_kernel(p[0], p[1], x[:nq], x[nq:], tau, p[15], p[13], out[nq:])


@njit(inline="always", cache=True)
def _applied_tau(p, x, tau_extra):
    """τ_applied(q, v) + τ_extra for x = [q, v] (the model's joint and point forces, ``kernels/forces.py``; in
    the buffer ``p[12]``), or ``tau_extra`` itself when the model has none."""
    tau = tau_extra
    if p[P_APPLIED]:
        nq = p[2].shape[0]
        tau = p[12]
        Va, _ = applied_forces_kernel(p[0], p[1], x[:nq], x[nq:], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10],
                                      p[11], p[13], p[14], tau)
        p[P_VAPPLIED][0] = Va
        for k in range(tau.shape[0]):
            tau[k] += tau_extra[k]
    return tau


@njit(**KERNEL)
def tree_rhs_extra(t, x, p, tau_extra, out):
    """ẋ for x = [q, v] on a tree: out[:nq] = q̇(q, v), out[nq:] = aba(q, v, τ_applied(q, v) + τ_extra)
    (seed 001 §3.5 separate-bodies / articulated-body forward dynamics; kernels/aba.py)."""
    _qdot_aba(p, x, _applied_tau(p, x, tau_extra), out)


@njit(**KERNEL)
def tree_rhs_hybrid(t, x, p, tau_extra, known, qdd, force, out):
    """:func:`tree_rhs_extra` with prescribed coordinates: the velocity coordinates with ``known[k] != 0`` have
    the accelerations ``qdd[k]`` (x holds their prescribed q and v); out[nq:] = q̈ by hybrid dynamics
    (``kernels/hybrid.py``; seed 001 §3.3.1, eqs. 3.92–3.94; RBDA §9.2), ``qdd`` the same q̈, and ``force`` the
    drive forces of the prescribed coordinates (besides the applied ones). Returns the kernel's error code."""
    nq = p[2].shape[0]
    tau = _applied_tau(p, x, tau_extra)
    qdot_kernel(p[0], x[:nq], x[nq:], out[:nq])
    err = hybrid_kernel(p[0], p[1], x[:nq], x[nq:], tau, known, p[15], p[13], qdd, force)
    for k in range(qdd.shape[0]):
        out[nq + k] = qdd[k]
    return err


@njit(**KERNEL)
def tree_rhs(t, x, p, out):
    """The compiled right-hand side ``rhs(t, x, params, out)``: :func:`tree_rhs_extra` with the constant
    generalized forces ``params[16]``."""
    tree_rhs_extra(t, x, p, p[P_TAU], out)


@njit(**KERNEL)
def tree_rhs_control(t, x, p, out):
    """:func:`tree_rhs` with the model's controllers and a compiled torque law (``formulations/tree_control.py``;
    their tuple at ``params[P_CONTROL]``) added to the constant generalized forces."""
    tree_rhs_extra(t, x, p, control_extra(t, x, p[P_TAU], p[P_CONTROL], p[0], p[2].shape[0], p[13]), out)


@njit(**KERNEL)
def tree_rhs_plain(t, x, p, out):
    """:func:`tree_rhs` of a model without joint springs, dampers, efforts or point springs (``params[17]``
    false): the same numbers, and its first compilation skips the applied-forces pass (and the kinematics
    that point springs need) — several seconds on a fresh install."""
    _qdot_aba(p, x, p[P_TAU], out)


@njit(**KERNEL)
def tree_energies(p, Q, V, out):
    """Per sample: out[s] = (T, V_gravity + V_springs, dissipated power) (kernels/energy.py, kernels/forces.py)."""
    mi = p[0]
    mf = p[1]
    for s in range(Q.shape[0]):
        q = Q[s]
        v = V[s]
        T, Vg = energy_kernel(mi, mf, q, v, p[13])
        Vs, P = applied_forces_kernel(mi, mf, q, v, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[13],
                                      p[14], p[12])
        out[s, 0] = T
        out[s, 1] = Vg + Vs
        out[s, 2] = P


@njit(**KERNEL)
def tree_energies_plain(p, Q, V, out):
    """:func:`tree_energies` of a model without applied forces, from ABA's first pass (the numbers of
    ``energy_kernel``; ``kernels/aba.py``): it compiles nothing but a loop around the ABA already compiled for
    the right-hand side. out[s] = (T, V_gravity, 0)."""
    for s in range(Q.shape[0]):
        aba_kernel(p[0], p[1], Q[s], V[s], p[P_TAU], p[15], p[13], p[12])
        out[s, 0] = p[13][W_KINETIC]
        out[s, 1] = p[13][W_POTENTIAL] + p[P_VAPPLIED][0]
        out[s, 2] = 0.0


@njit(**KERNEL)
def tree_observe(x, p, obs, k):
    """What the compiled loop records with saved state k: obs[k] = (kinetic, potential) energy at x, read from
    what :func:`tree_rhs` just left in the workspaces at x (``aba_kernel``'s energies, the applied forces'
    potential): the numbers :func:`tree_energy` computes for the saved q and v."""
    work = p[13]
    obs[k, 0] = work[W_KINETIC]
    obs[k, 1] = work[W_POTENTIAL] + p[P_VAPPLIED][0]


def general_fill(model):
    """``Data.fill`` of ``model`` (the compiled writer of its general joints' kinematics, seed 001 §3.4.2) or
    None for a model without general joints; kept out of the parameter tuple, whose numba type it would
    change."""
    from multibody.data import default_data

    return default_data(model).fill if GENERAL in np.asarray(model.jtype) else None


def tree_params(model, tau_const=None, data=None):
    """The parameter tuple of :func:`tree_rhs` for ``model`` (packed arrays, force arrays, fresh workspaces;
    ``data``: the Data whose arrays to use, default a new one)."""
    d = Data(model) if data is None else data
    n = model.nbodies + 1
    nv = model.nv
    tc = np.zeros(nv) if tau_const is None else np.ascontiguousarray(tau_const, dtype=np.float64)
    forces = [np.ascontiguousarray(getattr(model, name), dtype=np.float64)
              for name in ("dof_stiffness", "dof_damping", "dof_rest", "dof_effort")]
    springs = np.ascontiguousarray(model.spring_k, dtype=np.float64)
    applied = bool(np.any(forces[0]) or np.any(forces[1]) or np.any(forces[3]) or springs.shape[0])
    return (d.mi, d.mf, np.zeros(model.nq), *forces,
            np.ascontiguousarray(model.spring_body, dtype=np.int64).reshape(-1, 2),
            np.ascontiguousarray(model.spring_point, dtype=np.float64).reshape(-1, 2, 3),
            springs,
            np.ascontiguousarray(model.spring_c, dtype=np.float64),
            np.ascontiguousarray(model.spring_l0, dtype=np.float64),
            np.zeros(nv),  # 12: τ buffer
            d.work,  # 13: kinematics / ABA workspace
            np.zeros((n, 6)),  # 14: per-body force accumulator
            d.no_fext,  # 15: no external spatial forces
            tc,  # 16 (P_TAU): constant generalized forces
            applied,  # 17 (P_APPLIED)
            np.zeros(1))  # 18 (P_VAPPLIED)


def tree_joint_forces(p):
    """The joint spring-dampers and efforts of the parameter tuple ``p`` of :func:`tree_params` as one (4, nv) array
    (stiffness, damping, rest, effort), or (0, nv) when the model has no applied forces (``p[P_APPLIED]`` false:
    the right-hand side skips them) — the ``F`` of ``kernels.lanes.lanes_rhs``."""
    F = np.array(p[3:7])
    return F if p[P_APPLIED] else F[:0]


def tree_energy(model, Q, V, params=None, t=None):
    """(kinetic, potential, dissipated power) arrays along the samples Q (n, nq), V (n, nv): potential =
    gravity (``kernels/energy.py``, zero at the ground origin) + joint and point springs. ``t``: the time of each
    sample (n,), which a model with a moving base needs (its energies are absolute) and rheonomic general joints
    use (default 0)."""
    moving = getattr(model, "base_motion", None) is not None
    d = Data(model) if params is None or moving else None
    p = tree_params(model, data=d) if params is None else params
    Q = np.ascontiguousarray(Q, dtype=np.float64).reshape(-1, model.nq)
    V = np.ascontiguousarray(V, dtype=np.float64).reshape(-1, model.nv)
    out = np.empty((Q.shape[0], 3))
    energies = tree_energies if p[P_APPLIED] else tree_energies_plain
    fill = general_fill(model)
    if not moving and fill is None:
        energies(p, Q, V, out)
    else:  # the base's state and the general joints' kinematics at each sample first
        if moving and (t is None or np.shape(t) != (Q.shape[0],)):
            raise ModelError(f"model '{model.name}' has a moving base: its energies need the time of each of the "
                             f"{Q.shape[0]} samples", element="t")
        t = np.zeros(Q.shape[0]) if t is None else np.asarray(t, dtype=np.float64).reshape(-1)
        for s in range(Q.shape[0]):
            if moving:
                d.set_time(float(t[s]), p[13])
            if fill is not None:
                fill(Q[s], V[s], float(t[s]), p[13])
            energies(p, Q[s:s + 1], V[s:s + 1], out[s:s + 1])
    return out[:, 0], out[:, 1], out[:, 2]


# ---- many runs at once (simulate_batch) ------------------------------------------------------------------
#: what ``simulate_batch(..., params=...)`` may vary per run: name -> (columns, meaning); each value is an
#: array (runs, columns). The rest of the model is the same in every run.
BATCH_PARAMS = {
    "tau": ("nv", "constant generalized forces, added to the model's efforts (as simulate's tau array)"),
    "mass": ("nbodies", "the mass of every body (the centre of mass and the inertia about it are the model's)"),
    "gravity": ("3", "the gravity vector in ground coordinates"),
}


@njit(cache=True)
def tree_run_params(p, batch, b):
    """The parameters of run b of a batch: those of the model (``p``, from :func:`tree_params`) with the run's
    row of each varied quantity of ``batch = (tau, mass, gravity)`` (arrays (runs, k), or (0, k) when not
    varied) and workspaces of its own."""
    tau, mass, gravity = batch
    mf = p[1]
    if mass.shape[0] > 0 or gravity.shape[0] > 0:
        mf = p[1].copy()
        if mass.shape[0] > 0:
            for i in range(1, mf.shape[0]):
                mf[i, F_MASS] = mass[b, i - 1]
        if gravity.shape[0] > 0:
            for k in range(3):
                mf[0, k] = gravity[b, k]
    tc = p[P_TAU]
    if tau.shape[0] > 0:
        tc = tau[b]
    return (p[0], mf, p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], np.zeros_like(p[12]),
            np.zeros_like(p[13]), np.zeros_like(p[14]), p[15], tc, p[P_APPLIED], np.zeros(1))


@njit(cache=True)
def tree_control_run_params(p, batch, b):
    """:func:`tree_run_params` of a model with controllers: the run's tree parameters and controllers' tuple."""
    return tree_run_params(p[:P_CONTROL], batch, b) + (run_controls(p[P_CONTROL]),)


def tree_batch(model, runs, params):
    """``batch`` tuple of :func:`tree_run_params` for ``runs`` runs from the dict ``params`` (keys of
    :data:`BATCH_PARAMS`), validated: a ``ModelError`` names the key, the shape expected, or the bad value."""
    params = {} if params is None else params
    if getattr(model, "base_motion", None) is not None:
        raise ModelError(f"model '{model.name}' has a moving base (base motion), which runs the Python right-hand "
                         "side: simulate_batch runs the compiled loop only; use simulate for each run",
                         element="base motion")
    if not isinstance(params, dict):
        raise ModelError(f"params must be a dict with keys among {sorted(BATCH_PARAMS)}, got {params!r}",
                         element="params")
    unknown = sorted(set(params) - set(BATCH_PARAMS))
    if unknown:
        raise ModelError(f"params: {', '.join(map(repr, unknown))} cannot vary per run; params may vary "
                         + "; ".join(f"'{k}' ({v[1]})" for k, v in BATCH_PARAMS.items()), element=unknown[0])
    width = {"nv": model.nv, "nbodies": model.nbodies, "3": 3}
    out = []
    for key, (cols, _) in BATCH_PARAMS.items():
        k = width[cols]
        if key not in params:
            out.append(np.zeros((0, k)))
            continue
        try:
            arr = np.array(params[key], dtype=np.float64, order="C")
        except (TypeError, ValueError):
            raise ModelError(f"params['{key}'] must be a ({runs}, {k}) array of numbers", element=key) from None
        if arr.shape != (runs, k):
            raise ModelError(f"params['{key}'] must have shape ({runs}, {k}) (runs, {cols}) for model "
                             f"'{model.name}', got {arr.shape}", element=key)
        if not np.all(np.isfinite(arr)):
            raise ModelError(f"params['{key}'] must be finite", element=key)
        if key == "mass" and np.any(arr <= 0.0):
            b, i = np.argwhere(arr <= 0.0)[0]
            raise ModelError(f"params['mass'][{b}, {i}] (body '{model.body_names[i + 1]}') must be positive, got "
                             f"{arr[b, i]}", element=model.body_names[i + 1])
        out.append(arr)
    return tuple(out)


def tree_system(model, q0=None, v0=None, tau=None, energy=True, prescribed=None):
    """The ``"tree"`` formulation (see the module docstring). Models with loop-closing (cut) joints or
    constraints are refused: minimal tree coordinates would silently ignore them.

    ``prescribed={"joint.coordinate": f}`` drives those coordinates along ``f(t) -> (q, q̇, q̈)`` and integrates
    the others; ``result.drive_forces`` holds the forces of the drives (seed 001 §3.3.1, eqs. 3.92–3.94, by
    hybrid dynamics, RBDA §9.2; ``formulations/prescribed.py``)."""
    extra = [f"cut joint '{j.name}'" for j in getattr(model, "cut_joints", ())]
    extra += [f"constraint {getattr(c, 'name', type(c).__name__)!r}" for c in getattr(model, "constraints", ())]
    if extra:
        raise ModelError(f"model '{model.name}' has {', '.join(extra)}; the 'tree' formulation integrates "
                         "tree coordinates only (use a constrained formulation)", element=extra[0])
    q0, v0 = check_state(model, q0, v0)
    nq, nv = model.nq, model.nv
    callback = model.torque_callback if tau is None else tau
    tau_const = None
    compiled = None      # a numba torque law (formulations/tree_control.py)
    if is_compiled_torque(callback):
        compiled, callback = callback, None
    if callback is not None and not callable(callback):
        tau_const = np.array(callback, dtype=float).reshape(-1)
        if tau_const.shape != (nv,) or not np.all(np.isfinite(tau_const)):
            raise ModelError(f"tau must be a callable tau(t, q, v) or {nv} finite numbers (model '{model.name}'), "
                             f"got {callback!r}", element="tau")
        callback = None
    data = Data(model)
    params = tree_params(model, tau_const, data)
    moving = data.base_motion is not None
    fill = data.fill
    controlled = bool(model.controllers) or compiled is not None
    if prescribed is not None:
        if controlled:
            raise ModelError(f"model '{model.name}': prescribed coordinates with controllers or a compiled torque law "
                             "are not supported (drive the coordinates or control them)", element="prescribed")
        from multibody.formulations.prescribed import prescribed_system

        return prescribed_system(model, q0, v0, params, callback, tau_const, prescribed, energy, data)
    mi = params[0]
    quats = has_quaternions(mi)
    x0 = np.concatenate([q0, v0])
    if quats:
        normalize_quaternions(x0, params)

    rhs = tree_rhs if params[P_APPLIED] else tree_rhs_plain
    if controlled:
        params = control_params(model, params, compiled)
        rhs = tree_rhs_control
    work = params[13]
    if callback is None:
        def fun(t, x):
            out = np.empty(nq + nv)
            x = np.ascontiguousarray(x, dtype=np.float64)
            if moving:
                data.set_time(float(t))
            if fill is not None:
                fill(x[:nq], x[nq:], float(t), work)
            rhs(float(t), x, params, out)
            return out
    else:
        def fun(t, x):
            if moving:
                data.set_time(float(t))
            x = np.ascontiguousarray(x, dtype=np.float64)
            if fill is not None:
                fill(x[:nq], x[nq:], float(t), work)
            extra = callback_forces(callback, t, x[:nq], x[nq:], nv, model.name)
            if tau_const is not None:
                extra = extra + tau_const
            out = np.empty(nq + nv)
            tree_rhs_extra(float(t), x, params, np.ascontiguousarray(extra), out)
            return out

    def project_py(t, x):
        x = np.array(x, dtype=np.float64)
        normalize_quaternions(x, params)
        return x

    def make_result(t, X, info, obs=None):
        """The Result; ``obs`` (kinetic, potential) from the compiled loop, whose states are projected already."""
        X = np.asarray(X, dtype=float).reshape(len(t), nq + nv)
        Q = X[:, :nq].copy()
        V = X[:, nq:].copy()
        en = {}
        if obs is not None:
            if energy:
                en = {"kinetic": obs[:, 0].copy(), "potential": obs[:, 1].copy()}
        else:
            if quats:
                for row in Q:
                    normalize_quaternions_q(mi, row)
            if energy and len(t):
                T, Vp, _ = tree_energy(model, Q, V, t=t)
                en = {"kinetic": T, "potential": Vp}
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model, reactions=lambda: reactions_along(t, Q, V))

    def reactions_along(t, Q, V):
        """The joint reactions at the samples (``multibody.analysis.reactions``), q̈ from the right-hand side."""
        from multibody.analysis.reactions import tree_reactions_along

        A = np.array([fun(t[k], np.concatenate([Q[k], V[k]]))[nq:] for k in range(len(t))]).reshape(len(t), nv)
        return tree_reactions_along(model, Q, V, A, t=t)

    return OdeSystem(x0=x0, fun=fun, make_result=make_result, split=lambda x: (x[:nq], x[nq:]),
                     rhs=rhs, project=normalize_quaternions if quats else no_project, params=params,
                     project_py=project_py if quats else None, nsplit=nq,
                     python_only=callback is not None or moving or fill is not None,
                     info={"formulation": "tree", "torque_callback": callback is not None,
                           **({"compiled_torque": getattr(compiled, "__name__", "")} if compiled is not None else {}),
                           **({"controllers": [c.name for c in model.controllers]} if model.controllers else {}),
                           **({"base_motion": repr(data.base_motion)} if moving else {})},
                     observe=tree_observe if energy else None, nobs=2 if energy else 0,
                     run_params=tree_control_run_params if controlled else tree_run_params,
                     batch=lambda runs, values: tree_batch(model, runs, values))


register_formulation("tree", tree_system)
