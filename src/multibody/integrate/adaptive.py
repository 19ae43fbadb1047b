"""Adaptive integration with scipy's solvers (DOP853, RK45, RK23, Radau, BDF, LSODA), stepped from Python.

:func:`solve_adaptive` is ``scipy.integrate.solve_ivp`` rewritten as an explicit step loop over scipy's
``OdeSolver`` classes, so that it can do what ``solve_ivp`` cannot:

* stop after ``max_steps`` steps and return what was computed (``solve_ivp`` has no step limit); every run has a
  step budget, :data:`DEFAULT_MAX_STEPS` unless told otherwise, and a run that at its rate so far would need
  more than :data:`HOPELESS` times its budget stops early (see :func:`solve_adaptive`): a span of 1e300 s ends
  after a thousand steps with a reason, not never;
* check the right-hand side at the initial state before scipy sees it: scipy's DOP853 and RK45 make a NaN
  initial step from a NaN derivative and then loop forever (a NaN step size is never "too small"); and after
  every step, so that a run fails at the first state where its derivative is not finite, with a reason that
  names the entries (``names``) and the time;
* return the partial trajectory and a reason on *any* failure (solver failure, an exception raised by the
  right-hand side, a step limit, outputs that would not fit in memory), instead of losing it;
* apply a projection ``project(t, y)`` after every accepted step (quaternion normalisation, constraint
  projection) for the one-step methods (RK23, RK45, DOP853, Radau);
* show a tqdm progress bar (in simulated time) on long runs (``integrate/progress.py``).

Output: at ``t_eval`` (from each step's dense interpolant), else at every accepted step. Events follow
``solve_ivp``'s protocol (``event(t, y)`` with optional attributes ``terminal`` and ``direction``); roots
are located by Brent's method on the step interpolant to ``4 eps`` relative (as in ``solve_ivp``).
The right-hand side ``fun(t, y)`` is typically a thin Python wrapper around a numba-compiled kernel.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from multibody.errors import ModelError, shown
from multibody.integrate.progress import progress_bar

#: method name (upper case) -> the name of its ``scipy.integrate`` solver class; scipy's integrators are
#: imported when an adaptive run starts (:func:`solver_class`), not with the package
SOLVERS = {"DOP853": "DOP853", "RK45": "RK45", "RK23": "RK23", "RADAU": "Radau", "BDF": "BDF", "LSODA": "LSODA"}
#: one-step methods whose state may be replaced between steps (projection)
PROJECTABLE = {"DOP853", "RK45", "RK23", "RADAU"}

EPS = np.finfo(float).eps

#: the step budget of a run when ``max_steps`` is None: a million accepted steps (at the ~10 µs to 1 ms a step of
#: a compiled right-hand side costs from Python, seconds to a quarter of an hour, each step shown by the bar)
DEFAULT_MAX_STEPS = 1_000_000
#: a run stops early when, from a thousandth of its budget on (and at least ``EARLY_CHECK`` steps), both its mean
#: step so far and its last step would need more than ``HOPELESS`` times its budget to reach the end
HOPELESS = 100
EARLY_CHECK = 1000


def step_budget(max_steps):
    """``max_steps`` as a step budget: None -> :data:`DEFAULT_MAX_STEPS`, ``math.inf`` -> no limit (returned as
    inf), else a whole number >= 1 (a ``ModelError`` naming ``max_steps`` otherwise)."""
    if max_steps is None:
        return DEFAULT_MAX_STEPS
    if isinstance(max_steps, (bool, np.bool_)):
        raise ModelError(f"max_steps must be a whole number of steps >= 1 (or math.inf), got {shown(max_steps)!r}",
                         element="max_steps")
    try:
        value = float(max_steps)
    except (TypeError, ValueError):
        value = math.nan
    if value == math.inf:
        return math.inf
    if not (math.isfinite(value) and value >= 1 and value == math.floor(value)):
        raise ModelError(f"max_steps must be a whole number of steps >= 1 (or math.inf for no limit), got "
                         f"{shown(max_steps)!r}", element="max_steps")
    return int(value)


def nonfinite_entries(values, names=None, at_most=3):
    """The non-finite entries of ``values`` as text, ``"v 'hinge.angle' = nan, x[4] = inf"`` (``names`` label
    the entries; default ``x[i]``)."""
    values = np.asarray(values, dtype=float).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(values))
    label = [names[i] if names is not None and i < len(names) else f"x[{i}]" for i in bad[:at_most]]
    text = ", ".join(f"{name} = {values[i]}" for name, i in zip(label, bad[:at_most]))
    return text + (f" and {bad.size - at_most} more" if bad.size > at_most else "")


def solver_class(key):
    """The ``scipy.integrate`` solver class of the method ``key`` (a key of :data:`SOLVERS`)."""
    import scipy.integrate

    return getattr(scipy.integrate, SOLVERS[key])


@dataclass
class AdaptiveRun:
    """Outcome of :func:`solve_adaptive`.

    ``t`` (n,), ``y`` (n, ny) with time as the first axis; ``status`` is ``"success"``, ``"event"`` (a
    terminal event stopped the run) or ``"failed"``; ``reason`` explains a failure (else ``None``);
    ``t_events`` / ``y_events``: one array per event function; ``sol``: an ``OdeSolution`` over the
    computed span when ``dense_output`` was requested; ``error``: the exception that stopped a failed run (raised
    by the right-hand side, an event or the projection), else ``None``.
    """

    t: np.ndarray
    y: np.ndarray
    status: str
    message: str
    reason: str = None
    nsteps: int = 0
    nfev: int = 0
    njev: int = 0
    nlu: int = 0
    t_events: list = field(default_factory=list)
    y_events: list = field(default_factory=list)
    sol: object = None
    error: BaseException = None

    @property
    def success(self):
        return self.status != "failed"


def _prepare_events(events):
    if events is None:
        return []
    if callable(events):
        events = [events]
    out = []
    for ev in events:
        terminal = getattr(ev, "terminal", False)
        count = int(terminal) if not isinstance(terminal, bool) else (1 if terminal else 0)
        out.append((ev, count, float(getattr(ev, "direction", 0.0))))
    return out


def _crossings(g_old, g_new, direction):
    """Indices of the events whose value changed sign in the requested direction over a step."""
    idx = []
    for i, (a, b) in enumerate(zip(g_old, g_new)):
        up = a <= 0 <= b and a != b
        down = a >= 0 >= b and a != b
        if (up and direction[i] >= 0) or (down and direction[i] <= 0):
            idx.append(i)
    return idx


class _CountingFun:
    """Wrap ``fun``: pass contiguous float64 states, remember the first time it returned a non-finite value and
    that value (for failure reasons)."""

    def __init__(self, fun, args):
        self.fun = fun
        self.args = args
        self.first_nonfinite = None

    def __call__(self, t, y):
        # scipy's finite-difference Jacobians (Radau, BDF) pass columns of a 2-D array: make them contiguous,
        # or a compiled right-hand side would be compiled again for non-contiguous arrays
        f = np.asarray(self.fun(float(t), np.ascontiguousarray(y), *self.args), dtype=float)
        if self.first_nonfinite is None and not np.all(np.isfinite(f)):
            self.first_nonfinite = (t, f.copy())
        return f

    def note(self, names=None):
        """``" (the right-hand side returned non-finite values from t = ...: the derivative of ...)"`` when it did,
        else ``""``: what a failure reason adds."""
        if self.first_nonfinite is None:
            return ""
        t, f = self.first_nonfinite
        return (f" (the right-hand side returned non-finite values from t = {t:.17g}: the derivative of "
                f"{nonfinite_entries(f, names)})")


class ForwardDifferenceJacobian:
    """∂f/∂y by forward differences with the fixed steps ``√ε · max(|y_j|, 1)``, for the implicit methods.

    scipy's own estimate (``num_jac``) enlarges its step tenfold at every call for a column that is exactly
    zero — the column of a cyclic coordinate, such as a freely spinning shaft's angle — until the step
    overflows to inf and the solve fails with NaNs; a fixed step has no such memory.
    """

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, t, y):
        f0 = self.fun(t, y)
        J = np.empty((f0.size, y.size))
        yh = np.array(y, dtype=float)
        for j in range(y.size):
            h = _SQRT_EPS * max(abs(y[j]), 1.0)
            yh[j] = y[j] + h
            h = yh[j] - y[j]  # the step actually taken in floating point
            J[:, j] = (self.fun(t, yh) - f0) / h
            yh[j] = y[j]
        return J


_SQRT_EPS = float(np.sqrt(np.finfo(float).eps))


def solve_adaptive(fun, t_span, y0, method="DOP853", rtol=1e-9, atol=1e-12, t_eval=None, events=None,
                   dense_output=False, max_steps=None, project=None, progress=False, args=(), first_step=None,
                   max_step=np.inf, jac=None, project_output=None, callback=None, names=None,
                   max_output_bytes=None):
    """Integrate ``dy/dt = fun(t, y, *args)`` over ``t_span`` with an adaptive scipy method.

    Parameters
    ----------
    method : ``"DOP853"``, ``"RK45"``, ``"RK23"``, ``"Radau"``, ``"BDF"`` or ``"LSODA"`` (case-insensitive).
    t_eval : output times (monotone in the direction of integration, inside ``t_span``); default: every
        accepted step.
    events : callable or list of callables ``g(t, y)``; attributes ``terminal`` (bool or count) and
        ``direction`` as in ``scipy.integrate.solve_ivp``.
    dense_output : keep the steps' interpolants as ``sol`` (an ``OdeSolution``); a whole number N: only while the
        run has at most N steps (a longer run keeps none, ``sol`` None).
    max_steps : the step budget: stop with status ``"failed"`` after this many accepted steps (None:
        :data:`DEFAULT_MAX_STEPS`; ``math.inf``: no limit). From ``max(EARLY_CHECK, max_steps // 1000)`` steps
        on, a run that would need more than ``HOPELESS`` times its budget to reach the end both at its mean step so
        far and at its last step stops at once, with the same status and a reason that says so (a span of 1e300 s
        at steps of a millisecond: 1e303 steps); it can only be wrong for a run whose steps later grow more than a
        hundredfold beyond both.
    project : ``project(t, y) -> y`` applied to the state after each accepted step and to every output
        (one-step methods only; a ``ValueError`` for BDF and LSODA, whose internal history would be
        invalidated).
    project_output : ``project_output(t, y) -> y`` for the interpolated outputs and event states (default:
        ``project``); a projection without the per-step bookkeeping.
    progress : a tqdm bar in simulated time: None (after two seconds, on a terminal), True or False
        (``integrate/progress.py``).
    callback : ``callback(t, y, ts, ys, stats)`` after every accepted step that the run goes on from: the time and
        (projected) state reached, the outputs so far (lists of times and states, every output time up to t
        included) and ``stats`` (dict of ``steps``, ``nfev``, ``njev``, ``nlu`` so far); e.g. to write a
        checkpoint. An exception it raises fails the run like one of the right-hand side.
    names : labels of the state entries for the reasons of failures (default ``x[i]``).
    max_output_bytes : the memory the outputs may take (every step's state is kept when ``t_eval`` is None): a
        run whose outputs would take more stops with status ``"failed"`` and a reason that says so (None: no
        limit).

    The right-hand side is evaluated at the initial state before the solver starts, and after every accepted
    step the state (and the derivative there, which the one-step methods keep) must be finite: the run stops at
    the first non-finite one with a reason naming the entries and the time.

    Never raises on a failed integration: the caller inspects ``status`` and ``reason`` (see
    :class:`AdaptiveRun`). Invalid arguments raise ``ModelError`` (a ``ValueError``).
    """
    key = str(method).upper()
    if key not in SOLVERS:
        raise ModelError(f"adaptive method {method!r} is unknown; expected one of {sorted(SOLVERS.values())}",
                         element="method")
    if project is not None and key not in PROJECTABLE:
        raise ModelError(f"projection after each step is not supported by method {method!r} (multistep "
                         f"history); use one of {sorted(PROJECTABLE)}", element="method")
    t0, tf = map(float, t_span)
    if not (np.isfinite(t0) and np.isfinite(tf)) or t0 == tf:
        raise ModelError(f"t_span must be two distinct finite times, got {t_span}", element="t_span")
    y0 = np.array(y0, dtype=float)
    if y0.ndim != 1 or not np.all(np.isfinite(y0)):
        raise ModelError(f"initial state must be a finite 1-D array, got shape {y0.shape}", element="y0")
    direction = np.sign(tf - t0)
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float)
        if t_eval.ndim != 1:
            raise ModelError("t_eval must be 1-D", element="t_eval")
        lo, hi = min(t0, tf), max(t0, tf)
        if np.any(t_eval < lo - 1e-12 * max(1.0, abs(lo))) or np.any(t_eval > hi + 1e-12 * max(1.0, abs(hi))):
            raise ModelError(f"t_eval must lie inside t_span = {t_span}", element="t_eval")
        d = np.diff(t_eval)
        if (direction > 0 and np.any(d <= 0)) or (direction < 0 and np.any(d >= 0)):
            raise ModelError("t_eval must be strictly monotone in the direction of integration", element="t_eval")
    budget = step_budget(max_steps)
    early = max(EARLY_CHECK, budget // 1000) if budget != math.inf else math.inf
    if t_eval is not None and np.any(~np.isfinite(t_eval)):
        raise ModelError("t_eval must be finite times", element="t_eval")

    f = _CountingFun(fun, args)
    if project_output is None:
        project_output = project
    if project is not None:
        y0 = np.array(project(t0, y0), dtype=float)
    opts = {"rtol": rtol, "atol": atol, "max_step": max_step}
    if first_step is not None:
        opts["first_step"] = first_step
    if key in ("RADAU", "BDF", "LSODA"):
        if jac is None and key != "LSODA":
            jac = ForwardDifferenceJacobian(f)
        if jac is not None:
            opts["jac"] = jac
    evs = _prepare_events(events)
    ev_dir = [d for _, _, d in evs]
    t_events = [[] for _ in evs]
    y_events = [[] for _ in evs]
    remaining = [c for _, c, _ in evs]

    ts, ys = [], []
    ie = 0  # next t_eval index
    if t_eval is None:
        ts.append(t0)
        ys.append(y0.copy())
    interpolants, tnodes = [], [t0]
    dense_cap = math.inf if dense_output is True else int(dense_output or 0)
    keep_dense = dense_cap > 0
    status, message, reason, error = "running", "", None, None
    nsteps = 0

    def failed_at_start(message, reason, error=None):
        return AdaptiveRun(np.array([t0]), y0[None, :], "failed", message, reason=reason, error=error, nfev=1)

    try:  # the derivative at the initial state, checked before scipy sees it (see the module docstring)
        f0 = f(t0, y0)
    except Exception as exc:
        return failed_at_start(f"failed at t = {t0}: {exc!r}", f"the right-hand side raised {exc!r} at t = {t0}",
                               exc)
    if f0.shape != y0.shape:
        raise ModelError(f"the right-hand side returned shape {f0.shape} for a state of shape {y0.shape}",
                         element="fun")
    if not np.all(np.isfinite(f0)):
        return failed_at_start("non-finite derivative at the initial state",
                               f"the right-hand side is not finite at the initial state (t = {t0:.17g}): the "
                               f"derivative of {nonfinite_entries(f0, names)} (a force, torque or effort law "
                               "undefined there?)")
    try:
        solver = solver_class(key)(f, t0, y0, tf, vectorized=False, **opts)
    except Exception as exc:  # the right-hand side failed at the initial state
        return failed_at_start(f"failed at t = {t0}: {exc!r}", f"the right-hand side raised {exc!r} at t = {t0}",
                               exc)
    if not np.isfinite(getattr(solver, "h_abs", 1.0) or 1.0):
        return failed_at_start("no initial step", f"the {method} solver found no finite initial step at t = "
                               f"{t0:.17g} (an error scale atol + rtol |y| of zero, or a derivative too large?)")
    bar = progress_bar(progress, abs(tf - t0), f"{method}", "s",
                       bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
    row_bytes = 8 * (y0.size + 1) + 200     # a state and its time, kept as arrays in lists
    if t_eval is not None:
        while ie < len(t_eval) and t_eval[ie] == t0:
            ts.append(t0)
            ys.append(y0.copy())
            ie += 1

    try:
        g_old = [ev(t0, y0) for ev, _, _ in evs]
        while status == "running":
            t_prev = solver.t
            msg = solver.step()
            if solver.status == "failed":
                status, message = "failed", msg
                reason = f"the {method} solver failed at t = {solver.t:.17g}: {msg}"
                reason += f.note(names)
                break
            nsteps += 1
            t_new = solver.t
            sol = solver.dense_output() if keep_dense else None   # else made when needed, as solve_ivp does
            y_new = solver.y
            if project is not None:
                y_proj = np.array(project(t_new, y_new), dtype=float)
                if not np.array_equal(y_proj, y_new):
                    solver.y = y_proj
                    solver.f = solver.fun(t_new, y_proj)
                y_new = solver.y
            if not np.all(np.isfinite(y_new)):
                status, message = "failed", "non-finite state"
                reason = f"the state became non-finite at t = {t_new:.17g}: {nonfinite_entries(y_new, names)}"
                break
            t_stop = None
            if evs:
                g_new = [ev(t_new, y_new) for ev, _, _ in evs]
                active = _crossings(g_old, g_new, ev_dir)
                if active:
                    sol = solver.dense_output() if sol is None else sol
                    roots = []
                    for i in active:
                        ev = evs[i][0]
                        from scipy.optimize import brentq

                        r = brentq(lambda s: ev(s, sol(s)), t_prev, t_new, xtol=4 * EPS, rtol=4 * EPS)
                        roots.append((r, i))
                    roots.sort(key=lambda p: direction * p[0])
                    for r, i in roots:
                        yr = sol(r)
                        if project_output is not None:
                            yr = np.array(project_output(r, yr), dtype=float)
                        t_events[i].append(r)
                        y_events[i].append(yr)
                        if evs[i][1] > 0:
                            remaining[i] -= 1
                            if remaining[i] == 0:
                                t_stop = r
                                break
                g_old = g_new
            t_end_step = t_new if t_stop is None else t_stop
            if t_eval is None:
                if t_stop is None:
                    ts.append(t_new)
                    ys.append(y_new.copy())
                else:
                    yr = sol(t_stop)
                    ts.append(t_stop)
                    if project_output is not None:
                        yr = np.array(project_output(t_stop, yr), dtype=float)
                    ys.append(yr)
            else:
                i1 = ie
                while i1 < len(t_eval) and direction * (t_eval[i1] - t_end_step) <= 0:
                    i1 += 1
                if i1 > ie:                   # the interpolant at all of this step's output times at once
                    sol = solver.dense_output() if sol is None else sol
                    Yi = sol(t_eval[ie:i1]).T
                    for te, yi in zip(t_eval[ie:i1], Yi):
                        if te == t_new:
                            yi = y_new.copy()
                        elif project_output is not None:
                            yi = np.array(project_output(te, yi), dtype=float)
                        ts.append(te)
                        ys.append(yi)
                    ie = i1
            if keep_dense and len(interpolants) < dense_cap:
                interpolants.append(sol)
                tnodes.append(t_new)
            elif keep_dense:             # more steps than the dense output is kept for: none is kept
                keep_dense = False
                interpolants.clear()
            if bar is not None:
                bar.update(abs(t_end_step - t_prev))
            if t_stop is not None:
                status, message = "event", f"a terminal event occurred at t = {t_stop:.17g}"
            elif solver.status == "finished":
                status, message = "success", "the end of the interval was reached"
            elif not np.all(np.isfinite(getattr(solver, "f", 0.0))):  # the one-step methods keep f(t, y)
                status, message = "failed", "non-finite derivative"
                reason = (f"the right-hand side is not finite at the state reached at t = {t_new:.17g}: the "
                          f"derivative of {nonfinite_entries(solver.f, names)}")
            elif nsteps >= budget:
                status, message = "failed", f"max_steps = {budget} reached"
                reason = f"the step limit max_steps = {budget} was reached at t = {t_new:.17g} " \
                         f"before t_end = {tf:.17g} (a larger max_steps, or math.inf, lets it go on)"
            elif nsteps >= early and nsteps * abs(tf - t0) > HOPELESS * budget * abs(t_new - t0) and \
                    abs(tf - t_new) > HOPELESS * budget * abs(t_new - t_prev):   # at the mean and at the last step
                status, message = "failed", f"max_steps = {budget} cannot be met"
                need = nsteps * abs(tf - t0) / max(abs(t_new - t0), np.finfo(float).tiny)
                reason = (f"the step limit max_steps = {budget} cannot be met: {nsteps} steps reached t = "
                          f"{t_new:.6g} of the span [{t0:.6g}, {tf:.6g}]; at that rate the run needs about "
                          f"{need:.3g} steps (is t_end meant? a larger max_steps, or math.inf, lets it go on)")
            elif max_output_bytes is not None and len(ts) * row_bytes > max_output_bytes:
                status, message = "failed", "outputs too large"
                reason = (f"the outputs of every step would take more than {max_output_bytes / 2**30:.3g} GiB at "
                          f"t = {t_new:.6g} ({len(ts)} outputs of {y0.size} numbers): ask for fewer outputs (n_out "
                          "or t_eval)")
            if callback is not None and status == "running":
                callback(t_new, y_new, ts, ys, {"steps": nsteps, "nfev": int(getattr(solver, "nfev", 0)),
                                                "njev": int(getattr(solver, "njev", 0)),
                                                "nlu": int(getattr(solver, "nlu", 0))})
    except Exception as exc:  # an exception from the right-hand side, an event or the projection
        status, message, error = "failed", f"exception: {exc!r}", exc
        reason = f"{type(exc).__name__} raised during the step from t = {solver.t:.17g}: {exc}"
        reason += f.note(names)   # e.g. the LU factorization of a Jacobian made of NaNs
    finally:
        if bar is not None:
            bar.close()

    ny = y0.shape[0]
    t_arr = np.array(ts, dtype=float)
    y_arr = np.array(ys, dtype=float).reshape(len(ts), ny)
    dense = None
    if keep_dense and interpolants:
        from scipy.integrate import OdeSolution

        dense = OdeSolution(np.array(tnodes), interpolants)
    return AdaptiveRun(
        t=t_arr, y=y_arr, status=status, message=message, reason=reason, nsteps=nsteps,
        nfev=int(getattr(solver, "nfev", 0)), njev=int(getattr(solver, "njev", 0)),
        nlu=int(getattr(solver, "nlu", 0)),
        t_events=[np.array(v) for v in t_events],
        y_events=[np.array(v).reshape(len(v), ny) for v in y_events], sol=dense, error=error,
    )
