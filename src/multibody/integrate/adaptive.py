"""Adaptive integration with scipy's solvers (DOP853, RK45, RK23, Radau, BDF, LSODA), stepped from Python.

:func:`solve_adaptive` is ``scipy.integrate.solve_ivp`` rewritten as an explicit step loop over scipy's
``OdeSolver`` classes, so that it can do what ``solve_ivp`` cannot:

* stop after ``max_steps`` steps and return what was computed (``solve_ivp`` has no step limit);
* return the partial trajectory and a reason on *any* failure (solver failure, an exception raised by the
  right-hand side, a step limit), instead of losing it;
* apply a projection ``project(t, y)`` after every accepted step (quaternion normalisation, constraint
  projection) for the one-step methods (RK23, RK45, DOP853, Radau);
* show a tqdm progress bar (in simulated time) for long runs.

Output: at ``t_eval`` (from each step's dense interpolant), else at every accepted step. Events follow
``solve_ivp``'s protocol (``event(t, y)`` with optional attributes ``terminal`` and ``direction``); roots
are located by Brent's method on the step interpolant to ``4 eps`` relative (as in ``solve_ivp``).
The right-hand side ``fun(t, y)`` is typically a thin Python wrapper around a numba-compiled kernel.
"""
from dataclasses import dataclass, field

import numpy as np

#: method name (upper case) -> the name of its ``scipy.integrate`` solver class; scipy's integrators are
#: imported when an adaptive run starts (:func:`solver_class`), not with the package
SOLVERS = {"DOP853": "DOP853", "RK45": "RK45", "RK23": "RK23", "RADAU": "Radau", "BDF": "BDF", "LSODA": "LSODA"}
#: one-step methods whose state may be replaced between steps (projection)
PROJECTABLE = {"DOP853", "RK45", "RK23", "RADAU"}

EPS = np.finfo(float).eps


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
    """Wrap ``fun``: pass contiguous float64 states, remember the first time it returned a non-finite value
    (for failure reasons)."""

    def __init__(self, fun, args):
        self.fun = fun
        self.args = args
        self.first_nonfinite = None

    def __call__(self, t, y):
        # scipy's finite-difference Jacobians (Radau, BDF) pass columns of a 2-D array: make them contiguous,
        # or a compiled right-hand side would be compiled again for non-contiguous arrays
        f = np.asarray(self.fun(float(t), np.ascontiguousarray(y), *self.args), dtype=float)
        if self.first_nonfinite is None and not np.all(np.isfinite(f)):
            self.first_nonfinite = t
        return f


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
                   max_step=np.inf, jac=None, project_output=None, callback=None):
    """Integrate ``dy/dt = fun(t, y, *args)`` over ``t_span`` with an adaptive scipy method.

    Parameters
    ----------
    method : ``"DOP853"``, ``"RK45"``, ``"RK23"``, ``"Radau"``, ``"BDF"`` or ``"LSODA"`` (case-insensitive).
    t_eval : output times (monotone in the direction of integration, inside ``t_span``); default: every
        accepted step.
    events : callable or list of callables ``g(t, y)``; attributes ``terminal`` (bool or count) and
        ``direction`` as in ``scipy.integrate.solve_ivp``.
    max_steps : stop with status ``"failed"`` after this many accepted steps.
    project : ``project(t, y) -> y`` applied to the state after each accepted step and to every output
        (one-step methods only; a ``ValueError`` for BDF and LSODA, whose internal history would be
        invalidated).
    project_output : ``project_output(t, y) -> y`` for the interpolated outputs and event states (default:
        ``project``); a projection without the per-step bookkeeping.
    progress : show a tqdm bar in simulated time.
    callback : ``callback(t, y, ts, ys, stats)`` after every accepted step that the run goes on from: the time and
        (projected) state reached, the outputs so far (lists of times and states, every output time up to t
        included) and ``stats`` (dict of ``steps``, ``nfev``, ``njev``, ``nlu`` so far); e.g. to write a
        checkpoint. An exception it raises fails the run like one of the right-hand side.

    Never raises on a failed integration: the caller inspects ``status`` and ``reason`` (see
    :class:`AdaptiveRun`). Invalid arguments raise ``ValueError``.
    """
    key = str(method).upper()
    if key not in SOLVERS:
        raise ValueError(f"adaptive method {method!r} is unknown; expected one of "
                         f"{sorted(SOLVERS.values())}")
    if project is not None and key not in PROJECTABLE:
        raise ValueError(f"projection after each step is not supported by method {method!r} (multistep "
                         f"history); use one of {sorted(PROJECTABLE)}")
    t0, tf = map(float, t_span)
    if not (np.isfinite(t0) and np.isfinite(tf)) or t0 == tf:
        raise ValueError(f"t_span must be two distinct finite times, got {t_span}")
    y0 = np.array(y0, dtype=float)
    if y0.ndim != 1 or not np.all(np.isfinite(y0)):
        raise ValueError(f"initial state must be a finite 1-D array, got shape {y0.shape}")
    direction = np.sign(tf - t0)
    if t_eval is not None:
        t_eval = np.asarray(t_eval, dtype=float)
        if t_eval.ndim != 1:
            raise ValueError("t_eval must be 1-D")
        lo, hi = min(t0, tf), max(t0, tf)
        if np.any(t_eval < lo - 1e-12 * max(1.0, abs(lo))) or np.any(t_eval > hi + 1e-12 * max(1.0, abs(hi))):
            raise ValueError(f"t_eval must lie inside t_span = {t_span}")
        d = np.diff(t_eval)
        if (direction > 0 and np.any(d <= 0)) or (direction < 0 and np.any(d >= 0)):
            raise ValueError("t_eval must be strictly monotone in the direction of integration")
    if max_steps is not None and int(max_steps) < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")

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
    status, message, reason, error = "running", "", None, None
    nsteps = 0

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=abs(tf - t0), unit="s", desc=f"{method}", bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s")

    try:
        solver = solver_class(key)(f, t0, y0, tf, vectorized=False, **opts)
    except Exception as exc:  # the right-hand side failed at the initial state
        return AdaptiveRun(np.array([t0]), y0[None, :], "failed", f"failed at t = {t0}: {exc!r}",
                           reason=f"the right-hand side raised {exc!r} at t = {t0}", error=exc)
    g_old = [ev(t0, y0) for ev, _, _ in evs]
    if t_eval is not None:
        while ie < len(t_eval) and t_eval[ie] == t0:
            ts.append(t0)
            ys.append(y0.copy())
            ie += 1

    try:
        while status == "running":
            t_prev = solver.t
            msg = solver.step()
            if solver.status == "failed":
                status, message = "failed", msg
                reason = f"the {method} solver failed at t = {solver.t:.17g}: {msg}"
                if f.first_nonfinite is not None:
                    reason += f" (the right-hand side returned non-finite values from t = {f.first_nonfinite:.17g})"
                break
            nsteps += 1
            t_new = solver.t
            sol = solver.dense_output() if (evs or t_eval is not None or dense_output) else None
            y_new = solver.y
            if project is not None:
                y_proj = np.array(project(t_new, y_new), dtype=float)
                if not np.array_equal(y_proj, y_new):
                    solver.y = y_proj
                    solver.f = solver.fun(t_new, y_proj)
                y_new = solver.y
            if not np.all(np.isfinite(y_new)):
                status, message = "failed", "non-finite state"
                reason = f"the state became non-finite at t = {t_new:.17g}"
                break
            t_stop = None
            if evs:
                g_new = [ev(t_new, y_new) for ev, _, _ in evs]
                active = _crossings(g_old, g_new, ev_dir)
                if active:
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
                    Yi = sol(t_eval[ie:i1]).T
                    for te, yi in zip(t_eval[ie:i1], Yi):
                        if te == t_new:
                            yi = y_new.copy()
                        elif project_output is not None:
                            yi = np.array(project_output(te, yi), dtype=float)
                        ts.append(te)
                        ys.append(yi)
                    ie = i1
            if dense_output:
                interpolants.append(sol)
                tnodes.append(t_new)
            if bar is not None:
                bar.update(abs(t_end_step - t_prev))
            if t_stop is not None:
                status, message = "event", f"a terminal event occurred at t = {t_stop:.17g}"
            elif solver.status == "finished":
                status, message = "success", "the end of the interval was reached"
            elif max_steps is not None and nsteps >= int(max_steps):
                status, message = "failed", f"max_steps = {int(max_steps)} reached"
                reason = f"the step limit max_steps = {int(max_steps)} was reached at t = {t_new:.17g} " \
                         f"before t_end = {tf:.17g}"
            if callback is not None and status == "running":
                callback(t_new, y_new, ts, ys, {"steps": nsteps, "nfev": int(getattr(solver, "nfev", 0)),
                                                "njev": int(getattr(solver, "njev", 0)),
                                                "nlu": int(getattr(solver, "nlu", 0))})
    except Exception as exc:  # an exception from the right-hand side, an event or the projection
        status, message, error = "failed", f"exception: {exc!r}", exc
        reason = f"{type(exc).__name__} raised during the step from t = {solver.t:.17g}: {exc}"
    finally:
        if bar is not None:
            bar.close()

    ny = y0.shape[0]
    t_arr = np.array(ts, dtype=float)
    y_arr = np.array(ys, dtype=float).reshape(len(ts), ny)
    dense = None
    if dense_output and interpolants:
        from scipy.integrate import OdeSolution

        dense = OdeSolution(np.array(tnodes), interpolants)
    return AdaptiveRun(
        t=t_arr, y=y_arr, status=status, message=message, reason=reason, nsteps=nsteps,
        nfev=int(getattr(solver, "nfev", 0)), njev=int(getattr(solver, "njev", 0)),
        nlu=int(getattr(solver, "nlu", 0)),
        t_events=[np.array(v) for v in t_events],
        y_events=[np.array(v).reshape(len(v), ny) for v in y_events], sol=dense, error=error,
    )
