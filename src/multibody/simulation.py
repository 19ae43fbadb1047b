"""``simulate(model, q0, v0, t_end, ...)``: integrate a model's equations of motion, return a ``Result``.

Formulations
------------
``formulation=`` picks how the state derivative is formed (``multibody.formulations``): each formulation is a
factory registered in :data:`multibody.formulations.base.FORMULATIONS` that turns the Model into an
:class:`~multibody.formulations.base.OdeSystem`. This module only validates the arguments, dispatches to the
formulation and integrates. The registered formulations and their options are listed at the end of
``help(simulate)``.

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
import math
import time

import numpy as np

import multibody.formulations  # noqa: F401  (registers every formulation)
from multibody.errors import IntegrationError, ModelError
from multibody.formulations.base import FORMULATIONS, describe_formulations, formulation_options
from multibody.integrate.adaptive import PROJECTABLE, SOLVERS, solve_adaptive
from multibody.integrate.fixed_step import METHODS as FIXED_METHODS, STATUS_MESSAGES, STATUS_OK, integrate_fixed
from multibody.integrate.fixed_step import rk_fixed_python

__all__ = ["simulate", "fixed_step_count"]


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
    formulation : name of a registered formulation (default ``"tree"``; the list is at the end of this
        docstring); ``options`` are its own keyword options.
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
        raise ModelError(f"formulation {formulation!r} is unknown; registered: {', '.join(sorted(FORMULATIONS))}",
                         element="formulation")
    accepted = formulation_options(formulation)
    if accepted is not None:
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise ModelError(f"formulation {formulation!r} has no option {', '.join(map(repr, unknown))}; it accepts: "
                             f"{', '.join(accepted) or 'no options'}", element=unknown[0])
    t0 = float(t0)
    t_end = float(t_end)
    if not (np.isfinite(t0) and np.isfinite(t_end) and t_end > t0):
        raise ModelError(f"t_end must be a finite time after t0 = {t0}, got {t_end}", element="t_end")
    mkey = str(method).upper()
    if mkey in FIXED_METHODS:
        nsteps, h_used = fixed_step_count(t0, t_end, h, method)
    elif _adaptive_key(method) is None:
        raise ModelError(f"method {method!r} is unknown; adaptive: DOP853, RK45, RK23, Radau, BDF, LSODA; "
                         f"fixed step: {', '.join(sorted(set(FIXED_METHODS)))}", element="method")
    system = FORMULATIONS[formulation](model, q0, v0, tau=tau, energy=energy, **options)
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
        if events is not None:
            raise ModelError("events need an adaptive method (DOP853, RK45, Radau, ...)", element="events")
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
                         events=ev_wrapped, max_steps=max_steps, project=project, progress=bool(progress),
                         project_output=system.project_output if project is not None else None)
    extra = {"rtol": rtol, "atol": atol, "steps": run.nsteps, "nfev": run.nfev, "njev": run.njev, "nlu": run.nlu}
    if ev_wrapped is not None:
        extra["t_events"] = [te.tolist() for te in run.t_events]
    if run.status == "failed":
        res = finish(run.t, run.y, "failed", run.reason, extra)
        raise IntegrationError(f"{method} integration of model '{info['model']}' failed: {run.reason}", result=res,
                               reason=run.reason)
    return finish(run.t, run.y, run.status, run.message, extra)


simulate.__doc__ += "\n    Formulations\n    ------------\n" + "\n".join(
    "    " + line for line in describe_formulations().splitlines()) + "\n"


def fixed_step_count(t0, t_end, h, method="fixed-step"):
    """The step rule of the fixed-step methods: ``nsteps = ceil((t_end − t0)/h)`` steps of
    ``(t_end − t0)/nsteps`` (≤ h), so that the run ends at ``t_end`` exactly. Returns ``(nsteps, h_used)``;
    a missing, non-finite or non-positive ``h`` is a ``ModelError``."""
    if h is None:
        raise ModelError(f"fixed-step method {method!r} needs the step h", element="h")
    try:
        h = float(h)
    except (TypeError, ValueError):
        raise ModelError(f"the step h must be a number, got {h!r}", element="h") from None
    if not (math.isfinite(h) and h > 0.0):
        raise ModelError(f"the step h must be positive and finite, got {h}", element="h")
    span = float(t_end) - float(t0)
    nsteps = max(1, int(math.ceil(span / h - 1e-9)))
    return nsteps, span / nsteps


def _stages(mkey):
    from multibody.integrate.fixed_step import STAGES

    return STAGES[FIXED_METHODS[mkey]]
