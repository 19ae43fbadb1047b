"""The ``"tree"`` formulation: minimal coordinates on a tree (seed 001 §3.4–3.5).

State ``x = [q, v]``, ``ẋ = [q̇(q, v), aba(q, v, τ)]`` with ``τ = τ_applied(q, v) + τ_extra``: the joint
spring-dampers and efforts and the point spring-dampers of the model (``kernels/forces.py``), gravity being
inside ``aba``. The right-hand side ``tree_rhs`` (``formulations/tree_rhs.py``) is a numba function, so
fixed-step runs are one compiled loop; the model's controllers and a numba torque law run in it too
(``tree_rhs_control``, ``formulations/tree_control.py``); a Python torque callback forces the Python right-hand
side (see ``multibody.simulation``). Prescribed (driven) coordinates, ``prescribed={name: f}``, are in
``formulations/prescribed.py``.


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

from multibody.kernels.spatial import COMPILED
from multibody.model.data import Data
from multibody.errors import ModelError, shown
from multibody.formulations.base import OdeSystem, callback_forces, check_state, register_formulation
from multibody.formulations.prescribed import prescribed_system
from multibody.formulations.tree_control import (control_params, is_compiled_torque, law_failure, run_controls,
                                                 tree_rhs_control, tree_rhs_control_extra)
from multibody.formulations.tree_rhs import tree_energy, tree_observe, tree_rhs, tree_rhs_extra, tree_rhs_plain
from multibody.integrate.arguments import non_finite_entry
from multibody.integrate.fixed_step import no_project
from multibody.integrate.manifold import (has_quaternions, normalize_quaternions, normalize_quaternions_q,
                                         quaternion_projection)
from multibody.kernels.kinematics import F_MASS
from multibody.result import Result
from multibody.model.packing import ControlledParams, TreeParams, tree_params

__all__ = ["tree_system", "tree_run_params", "tree_control_run_params", "tree_batch", "BATCH_PARAMS"]


# ---- many runs at once (simulate_batch) ------------------------------------------------------------------
#: what ``simulate_batch(..., params=...)`` may vary per run: name -> (columns, meaning); each value is an
#: array (runs, columns). The rest of the model is the same in every run.
BATCH_PARAMS = {
    "tau": ("nv", "constant generalized forces, added to the model's efforts (as simulate's tau array)"),
    "mass": ("nbodies", "the mass of every body (the centre of mass and the inertia about it are the model's)"),
    "gravity": ("3", "the gravity vector in ground coordinates"),
}


@njit(**COMPILED)
def tree_run_params(p, batch, b):
    """The parameters of run b of a batch: those of the model (``p``, from ``model.packing.tree_params``) with
    the run's row of each varied quantity of ``batch = (tau, mass, gravity)`` (arrays (runs, k), or (0, k) when not
    varied) and workspaces of its own."""
    tau, mass, gravity = batch
    mf = p.mf
    if mass.shape[0] > 0 or gravity.shape[0] > 0:
        mf = p.mf.copy()
        if mass.shape[0] > 0:
            for i in range(1, mf.shape[0]):
                mf[i, F_MASS] = mass[b, i - 1]
        if gravity.shape[0] > 0:
            for k in range(3):
                mf[0, k] = gravity[b, k]
    tc = p.tau
    if tau.shape[0] > 0:
        tc = tau[b]
    return TreeParams(p.mi, mf, p.q, p.forces, np.zeros_like(p.tau_buffer), np.zeros_like(p.work),
                      np.zeros_like(p.body_forces), p.no_fext, tc, p.applied, np.zeros(1))


@njit(**COMPILED)
def tree_control_run_params(p, batch, b):
    """:func:`tree_run_params` of a model with controllers: the run's tree parameters and controllers' tuple."""
    r = tree_run_params(p, batch, b)
    return ControlledParams(r.mi, r.mf, r.q, r.forces, r.tau_buffer, r.work, r.body_forces, r.no_fext, r.tau,
                            r.applied, r.vapplied, run_controls(p.control))


def tree_batch(model, runs, params, moving_base=False):
    """``batch`` tuple of :func:`tree_run_params` for ``runs`` runs from the dict ``params`` (keys of
    :data:`BATCH_PARAMS`), validated: a ``ModelError`` names the key, the shape expected, or the bad value.
    ``moving_base``: the runs take a moving base (the time-stepping model's batch tables its states)."""
    params = {} if params is None else params
    if getattr(model, "base_motion", None) is not None and not moving_base:
        raise ModelError(f"model '{model.name}' has a moving base (base motion), which runs the Python right-hand "
                         "side: simulate_batch runs the compiled loop only; use simulate for each run",
                         element="base motion")
    if not isinstance(params, dict):
        raise ModelError(f"params must be a dict with keys among {sorted(BATCH_PARAMS)}, got {shown(params)!r}",
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
            names = {"nv": model.velocity_names(), "nbodies": model.body_names[1:], "3": ("x", "y", "z")}[cols]
            raise ModelError(non_finite_entry(arr, f"params['{key}']", names), element=key)
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
        return prescribed_system(model, q0, v0, params, callback, tau_const, prescribed, energy, data)
    mi = params.mi
    quats = has_quaternions(mi)
    x0 = np.concatenate([q0, v0])
    if quats:
        normalize_quaternions(x0, params)

    rhs = tree_rhs if params.applied else tree_rhs_plain
    if controlled:
        params = control_params(model, params, compiled)
        rhs = tree_rhs_control
    work = params.work
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
            # the model's controllers act besides the callback
            (tree_rhs_control_extra if controlled else tree_rhs_extra)(float(t), x, params,
                                                                       np.ascontiguousarray(extra), out)
            return out

    project_py = quaternion_projection(params)

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
        """The joint reactions at the samples (``multibody.rows.reactions``), q̈ from the right-hand side."""
        from multibody.rows.reactions import tree_reactions_along

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
                     batch=lambda runs, values: tree_batch(model, runs, values),
                     diagnose=None if compiled is None else
                     lambda: law_failure(params.control, compiled, model.velocity_names()))


register_formulation("tree", tree_system, supports=("moving base", "general joints", "batch", "controllers"))
