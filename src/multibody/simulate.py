"""``simulate(model, q0, v0, t_end, ...)``: integrate a model's equations of motion, return a ``Result``.

Formulations
------------
``formulation=`` picks how the state derivative is formed. Each formulation is a factory registered in
:data:`FORMULATIONS` (``register_formulation(name, factory)``), called as
``factory(model, q0, v0, tau=..., **options)`` and returning an :class:`OdeSystem`: the initial state, a
compiled right-hand side ``rhs(t, x, params, out)`` for the fixed-step loop (or ``None``), a Python
right-hand side ``fun(t, x)`` for the adaptive solvers, projections, and ``make_result`` which turns the
integrated states into a ``Result``. Other modules plug in without editing this file.

``"tree"`` (built in): minimal coordinates on a tree (seed 001 §3.4–3.5), state ``x = [q, v]``,
``ẋ = [q̇(q, v), aba(q, v, τ)]`` with ``τ = τ_applied(q, v) + τ_extra``: the joint spring-dampers and
efforts and the point spring-dampers of the model (``kernels/forces.py``), gravity being inside ``aba``.

Methods
-------
* fixed step ``"RK4"``, ``"RK2"`` (explicit midpoint), ``"HEUN"``, ``"VERLET"`` with step ``h``: the whole run
  is one compiled loop (``integrate/fixed_step.py``) — unless a Python torque callback is present, see below.
  ``"VERLET"`` (kick-drift-kick on [q, v]) is of order 2 only when the accelerations do not depend on the
  velocities; in tree coordinates the centripetal/Coriolis terms make it first order (measured on the
  seed 001 triple pendulum: the error halves with h). Prefer RK4 there;
* adaptive ``"DOP853"``, ``"RK45"``, ``"RK23"``, ``"Radau"``, ``"BDF"``, ``"LSODA"`` (``rtol``, ``atol``) via
  ``integrate/adaptive.py``, each step calling the compiled right-hand side.

Quaternions (Spherical, Free joints) are normalised after every step (fixed-step methods and the one-step
adaptive methods; BDF and LSODA keep multistep histories that a projection would invalidate, so there the
outputs only are normalised).

Torques
-------
``tau`` is either an array (nv,) of constant generalized forces — kept in the compiled path — or a callable
``tau(t, q, v) -> (nv,)``; it replaces ``model.torque_callback`` when given. A Python callable cannot be
called from compiled code, so it forces the *Python right-hand side path*: each evaluation calls the
compiled forces + ABA kernels once, plus the callback; fixed-step methods then run as a Python loop
(``fixed_step.rk_fixed_python``), about two orders of magnitude slower per step than the compiled loop.

Failures
--------
A failed integration (non-finite state, solver failure, ``max_steps`` exceeded, an exception in a callback)
raises ``IntegrationError`` whose ``result`` is the partial ``Result`` up to the failure and ``reason`` says
why.
"""
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from multibody.data import Data
from multibody.errors import IntegrationError, ModelError
from multibody.integrate.adaptive import PROJECTABLE, SOLVERS, solve_adaptive
from multibody.integrate.fixed_step import (METHODS as FIXED_METHODS, STATUS_MESSAGES, STATUS_OK, integrate_fixed,
                                            no_project, rk_fixed_python)
from multibody.integrate.manifold import (has_quaternions, normalize_quaternions, normalize_quaternions_q,
                                          qdot_kernel)
from multibody.kernels.aba import aba_kernel
from multibody.kernels.energy import energy_kernel
from multibody.kernels.forces import applied_forces_kernel
from multibody.result import Result

__all__ = ["simulate", "OdeSystem", "FORMULATIONS", "register_formulation", "tree_system"]


@dataclass
class OdeSystem:
    """What a formulation hands to :func:`simulate`.

    ``x0``: initial state. ``rhs``/``project``/``params``: numba functions ``rhs(t, x, params, out)`` and
    ``project(x, params)`` for the compiled fixed-step loop (``rhs=None``: no compiled path). ``fun(t, x)``:
    the Python right-hand side (adaptive methods; the fixed-step Python loop when ``rhs`` is None or
    ``python_only``). ``project_py(t, x) -> x`` or None. ``nsplit``: number of position coordinates
    (VERLET). ``make_result(t, X, info) -> Result``. ``split(x) -> (q, v)`` for event functions.
    """

    x0: np.ndarray
    fun: object
    make_result: object
    split: object
    rhs: object = None
    project: object = no_project
    params: tuple = ()
    project_py: object = None
    nsplit: int = 0
    python_only: bool = False
    info: dict = field(default_factory=dict)


#: formulation name -> factory(model, q0, v0, tau=None, **options) -> OdeSystem
FORMULATIONS = {}


def register_formulation(name, factory):
    """Make ``simulate(..., formulation=name)`` use ``factory`` (see :class:`OdeSystem`)."""
    FORMULATIONS[str(name)] = factory
    return factory


# ----------------------------------------------------------------------------------------------------------
# the tree formulation


@njit(cache=True)
def tree_rhs_extra(t, x, p, tau_extra, out):
    """ẋ for x = [q, v] on a tree: out[:nq] = q̇(q, v), out[nq:] = aba(q, v, τ_applied(q, v) + τ_extra)
    (seed 001 §3.5 separate-bodies / articulated-body forward dynamics; kernels/aba.py)."""
    mi = p[0]
    mf = p[1]
    nq = p[2].shape[0]
    q = x[:nq]
    v = x[nq:]
    tau = p[12]
    qdot_kernel(mi, q, v, out[:nq])
    applied_forces_kernel(mi, mf, q, v, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[13], p[14], tau)
    for k in range(tau.shape[0]):
        tau[k] += tau_extra[k]
    aba_kernel(mi, mf, q, v, tau, p[15], p[13], out[nq:])


@njit(cache=True)
def tree_rhs(t, x, p, out):
    """The compiled right-hand side ``rhs(t, x, params, out)``: :func:`tree_rhs_extra` with the constant
    generalized forces ``params[16]``."""
    tree_rhs_extra(t, x, p, p[16], out)


@njit(cache=True)
def tree_energies(p, Q, V, out):
    """Per sample: out[s] = (T, V_gravity + V_springs, dissipated power) (kernels/energy.py, kernels/forces.py)."""
    mi = p[0]
    mf = p[1]
    tau = p[12]
    for s in range(Q.shape[0]):
        q = Q[s]
        v = V[s]
        T, Vg = energy_kernel(mi, mf, q, v, p[13])
        Vs, P = applied_forces_kernel(mi, mf, q, v, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[13],
                                      p[14], tau)
        out[s, 0] = T
        out[s, 1] = Vg + Vs
        out[s, 2] = P


def tree_params(model, tau_const=None):
    """The parameter tuple of :func:`tree_rhs` for ``model`` (packed arrays, force arrays, fresh workspaces)."""
    d = Data(model)
    n = model.nbodies + 1
    nv = model.nv
    tc = np.zeros(nv) if tau_const is None else np.ascontiguousarray(tau_const, dtype=np.float64)
    return (d.mi, d.mf, np.zeros(model.nq),
            np.ascontiguousarray(model.dof_stiffness, dtype=np.float64),
            np.ascontiguousarray(model.dof_damping, dtype=np.float64),
            np.ascontiguousarray(model.dof_rest, dtype=np.float64),
            np.ascontiguousarray(model.dof_effort, dtype=np.float64),
            np.ascontiguousarray(model.spring_body, dtype=np.int64).reshape(-1, 2),
            np.ascontiguousarray(model.spring_point, dtype=np.float64).reshape(-1, 2, 3),
            np.ascontiguousarray(model.spring_k, dtype=np.float64),
            np.ascontiguousarray(model.spring_c, dtype=np.float64),
            np.ascontiguousarray(model.spring_l0, dtype=np.float64),
            np.zeros(nv),  # 12: τ buffer
            d.work,  # 13: kinematics / ABA workspace
            np.zeros((n, 6)),  # 14: per-body force accumulator
            np.zeros((0, 6)),  # 15: no external spatial forces
            tc)  # 16: constant generalized forces


def tree_energy(model, Q, V, params=None):
    """(kinetic, potential, dissipated power) arrays along the samples Q (n, nq), V (n, nv): potential =
    gravity (``kernels/energy.py``, zero at the ground origin) + joint and point springs."""
    p = tree_params(model) if params is None else params
    Q = np.ascontiguousarray(Q, dtype=np.float64).reshape(-1, model.nq)
    V = np.ascontiguousarray(V, dtype=np.float64).reshape(-1, model.nv)
    out = np.empty((Q.shape[0], 3))
    tree_energies(p, Q, V, out)
    return out[:, 0], out[:, 1], out[:, 2]


def _check_state(model, q0, v0):
    q0 = model.neutral() if q0 is None else np.array(q0, dtype=float).reshape(-1)
    v0 = np.zeros(model.nv) if v0 is None else np.array(v0, dtype=float).reshape(-1)
    if q0.shape != (model.nq,):
        raise ModelError(f"q0 must have {model.nq} entries (model '{model.name}', nq={model.nq}), got {q0.shape[0]}",
                         element="q0")
    if v0.shape != (model.nv,):
        raise ModelError(f"v0 must have {model.nv} entries (model '{model.name}', nv={model.nv}), got {v0.shape[0]}",
                         element="v0")
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(v0))):
        raise ModelError(f"initial state of model '{model.name}' must be finite", element="q0/v0")
    return q0, v0


def tree_system(model, q0=None, v0=None, tau=None, energy=True):
    """The ``"tree"`` formulation (see the module docstring). Models with loop-closing (cut) joints or
    constraints are refused: minimal tree coordinates would silently ignore them."""
    extra = [f"cut joint '{j.name}'" for j in getattr(model, "cut_joints", ())]
    extra += [f"constraint {getattr(c, 'name', type(c).__name__)!r}" for c in getattr(model, "constraints", ())]
    if extra:
        raise ModelError(f"model '{model.name}' has {', '.join(extra)}; the 'tree' formulation integrates "
                         "tree coordinates only (use a constrained formulation)", element=extra[0])
    q0, v0 = _check_state(model, q0, v0)
    nq, nv = model.nq, model.nv
    callback = model.torque_callback if tau is None else tau
    tau_const = None
    if callback is not None and not callable(callback):
        tau_const = np.array(callback, dtype=float).reshape(-1)
        if tau_const.shape != (nv,) or not np.all(np.isfinite(tau_const)):
            raise ModelError(f"tau must be a callable tau(t, q, v) or {nv} finite numbers (model '{model.name}'), "
                             f"got {callback!r}", element="tau")
        callback = None
    params = tree_params(model, tau_const)
    mi = params[0]
    quats = has_quaternions(mi)
    x0 = np.concatenate([q0, v0])
    if quats:
        normalize_quaternions(x0, params)

    if callback is None:
        def fun(t, x):
            out = np.empty(nq + nv)
            tree_rhs(float(t), np.ascontiguousarray(x, dtype=np.float64), params, out)
            return out
    else:
        def fun(t, x):
            x = np.ascontiguousarray(x, dtype=np.float64)
            extra = np.asarray(callback(t, x[:nq].copy(), x[nq:].copy()), dtype=np.float64).reshape(-1)
            if extra.shape != (nv,):
                raise ModelError(f"torque callback of model '{model.name}' returned {extra.shape[0]} values at "
                                 f"t = {t}, expected nv = {nv}", element="torque callback")
            if tau_const is not None:
                extra = extra + tau_const
            out = np.empty(nq + nv)
            tree_rhs_extra(float(t), x, params, np.ascontiguousarray(extra), out)
            return out

    def project_py(t, x):
        x = np.array(x, dtype=np.float64)
        normalize_quaternions(x, params)
        return x

    def make_result(t, X, info):
        X = np.asarray(X, dtype=float).reshape(len(t), nq + nv)
        Q = X[:, :nq].copy()
        V = X[:, nq:].copy()
        if quats:
            for row in Q:
                normalize_quaternions_q(mi, row)
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V)
            en = {"kinetic": T, "potential": Vp}
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model)

    return OdeSystem(x0=x0, fun=fun, make_result=make_result, split=lambda x: (x[:nq], x[nq:]),
                     rhs=tree_rhs, project=normalize_quaternions if quats else no_project, params=params,
                     project_py=project_py if quats else None, nsplit=nq, python_only=callback is not None,
                     info={"formulation": "tree", "torque_callback": callback is not None})


register_formulation("tree", tree_system)


# ----------------------------------------------------------------------------------------------------------
def _adaptive_key(method):
    key = str(method).upper()
    return key if key in SOLVERS else None


def simulate(model, q0=None, v0=None, t_end=1.0, method="DOP853", h=None, rtol=1e-9, atol=1e-12, t_eval=None,
             n_out=None, formulation="tree", tau=None, progress=None, max_steps=None, events=None, t0=0.0,
             energy=True, **options):
    """Integrate ``model`` from ``(q0, v0)`` at ``t0`` to ``t_end``; return a :class:`multibody.Result`.

    Parameters
    ----------
    q0, v0 : initial configuration (default ``model.neutral()``) and velocity (default zero).
    method : adaptive ``"DOP853"`` (default), ``"RK45"``, ``"RK23"``, ``"Radau"``, ``"BDF"``, ``"LSODA"`` or fixed
        step ``"RK4"``, ``"RK2"`` (explicit midpoint), ``"HEUN"``, ``"VERLET"`` (these need ``h``).
    h : fixed step; the run uses ``nsteps = ceil((t_end − t0)/h)`` steps of ``(t_end − t0)/nsteps`` (≤ h) so
        that it ends at ``t_end`` exactly.
    rtol, atol : tolerances of the adaptive methods.
    t_eval, n_out : output times (adaptive: any times in the span, from the dense output; fixed step: every
        ``k``-th step, ``n_out`` points equally spaced, which needs ``nsteps`` divisible by ``n_out − 1``). Default:
        every step.
    formulation : key of :data:`FORMULATIONS` (``"tree"``).
    tau : constant generalized forces (nv,) or a callable ``tau(t, q, v)`` (see the module docstring).
    progress : tqdm bar; default on for runs over a million fixed steps.
    max_steps : adaptive methods: the step limit (``IntegrationError`` when reached).
    events : callables ``g(t, q, v)`` (attributes ``terminal``, ``direction`` as for ``solve_ivp``), adaptive
        methods only; the event times are in ``result.info["t_events"]`` (one list per event).
    energy : compute the energies of the outputs (``result.energy``).
    options : passed to the formulation's factory.

    Raises ``IntegrationError`` (with the partial result and the reason) when the integration fails.

    Example
    -------
    >>> import numpy as np
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> model = simple_pendulum(length=1.0, mass=1.0, g=9.81)
    >>> res = simulate(model, [0.1], [0.0], 2.0, method="DOP853", rtol=1e-10, n_out=5)
    >>> res.q.shape, res.info["status"]
    ((5, 1), 'success')
    >>> bool(res.energy_drift() < 1e-8)
    True
    >>> res = simulate(model, [0.1], [0.0], 2.0, method="RK4", h=1e-3, n_out=5)   # one compiled loop
    >>> res.info["path"], res.info["steps"]
    ('compiled', 2000)
    """
    if formulation not in FORMULATIONS:
        import multibody.formulations.constrained  # noqa: F401  registers "constrained" and "cartesian"
    if formulation not in FORMULATIONS:
        raise ModelError(f"formulation {formulation!r} is unknown; registered: {sorted(FORMULATIONS)}")
    t0 = float(t0)
    t_end = float(t_end)
    if not (np.isfinite(t_end) and t_end > t0):
        raise ModelError(f"t_end must be a finite time after t0 = {t0}, got {t_end}")
    system = FORMULATIONS[formulation](model, q0, v0, tau=tau, energy=energy, **options)
    mkey = str(method).upper()
    info = {"method": str(method), "model": getattr(model, "name", ""), **system.info}
    cpu = time.process_time()
    wall = time.perf_counter()

    def finish(t, X, status, message, extra):
        info.update(extra)
        info["status"] = status
        info["message"] = message
        info["cpu_seconds"] = time.process_time() - cpu
        info["wall_seconds"] = time.perf_counter() - wall
        return system.make_result(np.asarray(t, dtype=float), np.asarray(X, dtype=float), info)

    if mkey in FIXED_METHODS:
        if h is None:
            raise ModelError(f"fixed-step method {method!r} needs the step h")
        if events is not None:
            raise ModelError("events need an adaptive method (DOP853, RK45, Radau, ...)")
        span = t_end - t0
        nsteps = max(1, int(np.ceil(span / float(h) - 1e-9)))
        h_used = span / nsteps
        save_every = 1
        if t_eval is not None:
            raise ModelError("fixed-step methods take n_out (equally spaced outputs), not t_eval")
        if n_out is not None:
            n_out = int(n_out)
            if n_out < 2 or nsteps % (n_out - 1) != 0:
                raise ModelError(f"n_out = {n_out} must be >= 2 with nsteps = {nsteps} divisible by n_out - 1")
            save_every = nsteps // (n_out - 1)
        if progress is None:
            progress = nsteps >= 1_000_000
        extra = {"h": h_used, "nsteps_requested": nsteps}
        if system.rhs is not None and not system.python_only:
            t, X, status, done = integrate_fixed(system.rhs, system.x0, t0, h_used, nsteps, system.params,
                                                 method=mkey, project=system.project, save_every=save_every,
                                                 nsplit=system.nsplit, progress=progress)
            extra["path"] = "compiled"
        else:
            extra["path"] = "python"
            try:
                t, X, status, done = rk_fixed_python(system.fun, system.project_py and
                                                     (lambda x: system.project_py(None, x)), system.x0, t0,
                                                     h_used, nsteps, save_every, mkey, nsplit=system.nsplit,
                                                     progress=progress)
            except Exception as exc:
                if isinstance(exc, ModelError) or not hasattr(exc, "partial"):
                    raise
                t, X, done = exc.partial
                extra.update(steps=done, nfev=done * _stages(mkey))
                reason = f"{type(exc).__name__} raised at step {done + 1} (t = {t0 + done * h_used:.17g}): {exc}"
                res = finish(t, X, "failed", reason, extra)
                raise IntegrationError(f"{method} integration of model '{info['model']}' failed: {reason}",
                                       result=res, reason=reason) from exc
        extra.update(steps=int(done), nfev=int(done) * _stages(mkey))
        if status != STATUS_OK:
            reason = (f"{STATUS_MESSAGES[status]} at step {done + 1} (t = {t0 + (done + 1) * h_used:.17g}); "
                      f"the step h = {h_used:g} may be too large or the forces unbounded")
            res = finish(t, X, "failed", reason, extra)
            raise IntegrationError(f"{method} integration of model '{info['model']}' failed: {reason}", result=res,
                                   reason=reason)
        return finish(t, X, "success", "completed", extra)

    key = _adaptive_key(method)
    if key is None:
        raise ModelError(f"method {method!r} is unknown; adaptive: DOP853, RK45, RK23, Radau, BDF, LSODA; "
                         f"fixed step: {sorted(set(FIXED_METHODS))}")
    if t_eval is not None and n_out is not None:
        raise ModelError("give t_eval or n_out, not both")
    if n_out is not None:
        t_eval = np.linspace(t0, t_end, int(n_out))
    ev_wrapped = None
    if events is not None:
        evs = [events] if callable(events) else list(events)
        ev_wrapped = []
        for ev in evs:
            def g(t, x, ev=ev):
                q, v = system.split(x)
                return ev(t, q, v)

            g.terminal = getattr(ev, "terminal", False)
            g.direction = getattr(ev, "direction", 0.0)
            ev_wrapped.append(g)
    project = system.project_py if key in PROJECTABLE else None
    run = solve_adaptive(system.fun, (t0, t_end), system.x0, method=key, rtol=rtol, atol=atol, t_eval=t_eval,
                         events=ev_wrapped, max_steps=max_steps, project=project, progress=bool(progress))
    extra = {"rtol": rtol, "atol": atol, "steps": run.nsteps, "nfev": run.nfev, "njev": run.njev, "nlu": run.nlu}
    if ev_wrapped is not None:
        extra["t_events"] = [te.tolist() for te in run.t_events]
    if run.status == "failed":
        res = finish(run.t, run.y, "failed", run.reason, extra)
        raise IntegrationError(f"{method} integration of model '{info['model']}' failed: {run.reason}", result=res,
                               reason=run.reason)
    return finish(run.t, run.y, run.status, run.message, extra)


def _stages(mkey):
    from multibody.integrate.fixed_step import STAGES

    return STAGES[FIXED_METHODS[mkey]]
