"""The arguments of a run, checked before anything is computed: one ``ModelError`` naming the argument.

``simulate``, ``simulate_batch`` and ``resume`` check every argument here first, so that a bad one never
reaches scipy or the compiled loops, where it would hang (a NaN tolerance), fail with a bare Python error
(``max_steps=0``, a string), or be silently changed (a 2-D ``q0`` flattened, ``n_out = 1`` run as one output,
the imaginary part of a complex torque dropped):

* times: ``t0`` < ``t_end``, both finite; ``t_eval`` a non-empty 1-D array of finite, strictly increasing times
  in ``[t0, t_end]``;
* tolerances: ``rtol`` > 0 and ``atol`` > 0, finite real numbers (or 1-D arrays of them, one per state entry);
* counts: ``n_out`` >= 2, ``output_every`` >= 1 and ``max_steps`` >= 1 whole numbers (``max_steps`` may be
  ``math.inf``, no limit); switches ``energy``, ``progress`` booleans (``progress`` may be None);
* the fixed step: ``h`` > 0, finite, not longer than the span; the steps it makes within the step budget
  (:func:`fixed_budget`);
* ``q0``, ``v0`` vectors (not 2-D), ``tau`` a callable or real numbers (never complex), ``events`` callables;
* the outputs' memory: a run whose outputs would take more than :func:`memory_limit` (half this machine's
  memory) is refused before anything is allocated (:func:`check_output_size`), with what to ask for instead.

Step budgets (``max_steps=None``): adaptive runs :data:`multibody.integrate.adaptive.DEFAULT_MAX_STEPS`;
fixed-step runs :data:`FIXED_MAX_STEPS`, by the loop that runs them (compiled, or Python with a torque
callback): the budget is scaled to what a step costs, so that a run within it ends in minutes, not days.
"""
import math
import numbers
import os

import numpy as np

from multibody.errors import ModelError, shown
from multibody.integrate.adaptive import step_budget
from multibody.integrate.fixed_step import save_steps

__all__ = ["number", "time_span", "tolerance", "whole", "flag", "output_times", "state_vector", "real_forces",
           "event_functions", "event_value", "memory_limit", "check_output_size", "fixed_step_count", "fixed_budget",
           "output_count", "output_steps", "batch_states", "FIXED_MAX_STEPS"]

#: the step budgets of fixed-step runs when ``max_steps`` is None, by loop: a compiled step costs ~0.1–10 µs, a
#: step of the Python loop (torque callbacks) ~0.1 ms
FIXED_MAX_STEPS = {"compiled": 1_000_000_000, "python": 10_000_000}


def number(value, element, what):
    """``value`` as a float, or a ModelError ``"<what> must be a number, got ..."`` naming ``element``."""
    if isinstance(value, (complex, np.complexfloating)):
        raise ModelError(f"{what} must be a real number, got {shown(value)!r}", element=element)
    if isinstance(value, (str, bytes)):
        raise ModelError(f"{what} must be a number, got {shown(value)!r}", element=element)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be a number, got {shown(value)!r}", element=element) from None


def time_span(t0, t_end):
    """(t0, t_end) as floats with t0 < t_end, both finite, or a ModelError naming the bad one."""
    t0, t_end = number(t0, "t0", "t0"), number(t_end, "t_end", "t_end")
    if not math.isfinite(t0):
        raise ModelError(f"t0 must be a finite time, got {t0}", element="t0")
    if not (math.isfinite(t_end) and t_end > t0):
        raise ModelError(f"t_end must be a finite time after t0 = {t0}, got {t_end}", element="t_end")
    return t0, t_end


def _reals(value, name, what):
    """``value`` as a float array (0-d or 1-D) of real numbers, or a ModelError naming ``name``."""
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = np.asarray(None)
    if arr.dtype.kind not in "iuf" or arr.ndim > 1:
        raise ModelError(f"{name} must be {what}, got {shown(value)!r}", element=name)
    return arr.astype(float)


def tolerance(value, name, default):
    """The tolerance ``value`` (None: ``default``): a finite real number > 0, or a 1-D array of them; a
    ModelError naming ``name`` otherwise. Zero is refused for ``atol`` too: the error scale of a state entry is
    ``atol + rtol |y|``, zero where the entry is zero (a body at rest), and scipy's first step is then NaN."""
    if value is None:
        return default
    arr = _reals(value, name, "a finite real number > 0 (or a 1-D array of them, one per state entry)")
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        why = " (with atol = 0 a state entry that is zero has no error scale)" if name == "atol" else ""
        raise ModelError(f"{name} must be a finite number > 0{why}, got {shown(value)!r}", element=name)
    return float(arr) if arr.ndim == 0 else arr


def whole(value, name, lowest):
    """``value`` as an int >= ``lowest`` (an int, or a float with a whole value; not a bool), or a ModelError
    naming ``name``."""
    ok = not isinstance(value, (bool, np.bool_)) and isinstance(value, (numbers.Integral, numbers.Real))
    if ok:
        f = float(value)
        ok = math.isfinite(f) and f == math.floor(f) and f >= lowest
    if not ok:
        raise ModelError(f"{name} must be a whole number >= {lowest}, got {shown(value)!r}", element=name)
    return int(value)


def flag(value, name, none_allowed=False):
    """``value`` as a bool (True, False, numpy booleans; None too when ``none_allowed``), or a ModelError."""
    if value is None and none_allowed:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ModelError(f"{name} must be {'True, False or None' if none_allowed else 'True or False'}, got {shown(value)!r}",
                     element=name)


def output_times(t_eval, t0, t_end):
    """``t_eval`` as a 1-D float array: non-empty, finite, strictly increasing, inside ``[t0, t_end]`` (to
    1e-12 relative); a ModelError naming ``t_eval`` otherwise."""
    te = _reals(t_eval, "t_eval", "a 1-D array of times")
    te = te.reshape(-1) if te.ndim == 0 else te
    if te.size == 0:
        raise ModelError("t_eval must hold at least one time", element="t_eval")
    if not np.all(np.isfinite(te)):
        raise ModelError(f"t_eval must be finite times, got {te[~np.isfinite(te)][0]}", element="t_eval")
    slack = 1e-12 * max(1.0, abs(t0), abs(t_end))
    if te[0] < t0 - slack or te[-1] > t_end + slack or np.any(te < t0 - slack) or np.any(te > t_end + slack):
        out = te[(te < t0 - slack) | (te > t_end + slack)][0]
        raise ModelError(f"t_eval must lie in [t0, t_end] = [{t0}, {t_end}], got {out}", element="t_eval")
    if np.any(np.diff(te) <= 0):
        raise ModelError("t_eval must be strictly increasing times", element="t_eval")
    return te


def state_vector(x, name):
    """``x`` unchanged when it is None or has at most one axis; a 2-D (or more) array is a ModelError naming
    ``name`` (it is not flattened: a (1, n) row and an (n, 1) column are different things)."""
    if x is not None and np.ndim(x) > 1:
        raise ModelError(f"{name} must be a vector (1-D), got an array of shape {np.shape(x)}; for many initial "
                         "states use simulate_batch", element=name)
    return x


def real_forces(tau):
    """``tau`` (None, a callable, or constant generalized forces) with constant forces as a float array of real
    numbers; complex numbers, text and other objects are a ModelError naming ``tau``."""
    if tau is None or callable(tau):
        return tau
    arr = np.asarray(tau) if not isinstance(tau, (str, bytes)) else np.asarray(None)
    if arr.dtype.kind == "c":
        raise ModelError(f"tau must be real generalized forces, got complex numbers {shown(tau)!r}", element="tau")
    if arr.dtype.kind not in "iuf":
        raise ModelError(f"tau must be a callable tau(t, q, v) or an array of numbers, got {shown(tau)!r}", element="tau")
    return arr.astype(float)


def event_value(value, k, ev, t):
    """The value ``value`` that the user event ``ev`` (``events[k]``) returned at time ``t`` as a float, or a
    ModelError naming the event when it is not one finite real number."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        out = math.nan
    if isinstance(value, (complex, np.complexfloating)) or not math.isfinite(out):
        raise ModelError(f"event {k} ({getattr(ev, '__name__', ev)!r}) returned {shown(value)!r} at t = {t}, expected "
                         "one finite real number", element=f"events[{k}]")
    return out


def event_functions(events):
    """``events`` as a list of callables (None stays None), or a ModelError naming ``events``."""
    if events is None:
        return None
    evs = [events] if callable(events) else events
    try:
        evs = list(evs)
    except TypeError:
        evs = None
    if not evs or not all(callable(ev) for ev in evs):
        raise ModelError(f"events must be a callable g(t, q, v) or a list of them, got {events!r}", element="events")
    return evs


def memory_limit():
    """The most a run's outputs may take: half the physical memory of this machine (8 GiB where unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return 8 * 2 ** 30


def check_output_size(rows, width, element, runs=1):
    """Refuse, before anything is allocated, outputs of ``rows`` times ``width`` float64 numbers (per run, for
    ``runs`` runs) that would take more than :func:`memory_limit`: a ModelError naming ``element`` (the argument
    that sets the outputs) that says how much and what to ask for instead."""
    need = float(rows) * float(width) * 8.0 * float(runs)
    limit = memory_limit()
    if need > limit:
        per = f" for each of {runs} runs" if runs > 1 else ""
        raise ModelError(f"the outputs of this run would take {need / 2 ** 30:.3g} GiB ({float(rows):.3g} outputs of "
                         f"{width} numbers{per}), more than {limit / 2 ** 30:.3g} GiB (half this machine's memory): "
                         "keep fewer outputs (output_every= or n_out= for fixed steps, n_out= or t_eval= for adaptive "
                         "methods)", element=element)


def fixed_step_count(t0, t_end, h, method="fixed-step"):
    """The step rule of the fixed-step methods: ``nsteps = ceil((t_end − t0)/h)`` steps of
    ``(t_end − t0)/nsteps`` (≤ h), so that the run ends at ``t_end`` exactly. Returns ``(nsteps, h_used)``;
    a missing, non-finite or non-positive ``h``, or one longer than the span, is a ``ModelError``."""
    if h is None:
        raise ModelError(f"fixed-step method {method!r} needs the step h", element="h")
    h = number(h, "h", "the step h")
    if not (math.isfinite(h) and h > 0.0):
        raise ModelError(f"the step h must be positive and finite, got {h}", element="h")
    span = float(t_end) - float(t0)
    if h > span * (1.0 + 1e-9):
        raise ModelError(f"the step h = {h:g} is longer than the span t_end - t0 = {span:g} of the run",
                         element="h")
    nsteps = max(1, int(math.ceil(span / h - 1e-9)))
    return nsteps, span / nsteps


def fixed_budget(nsteps, h, max_steps, path):
    """Refuse a fixed-step run of ``nsteps`` steps beyond its step budget (``max_steps``, or
    :data:`FIXED_MAX_STEPS` of its ``path`` when None): a ModelError naming ``h`` (or ``max_steps`` when it
    was given) before anything runs."""
    budget = FIXED_MAX_STEPS[path] if max_steps is None else step_budget(max_steps)
    if nsteps > budget:
        given = "" if max_steps is not None else f" (the default for the {path} loop)"
        raise ModelError(f"the step h = {h:.3g} makes {float(nsteps):.4g} steps, more than max_steps = {budget}"
                         f"{given}: take a larger h or a shorter span, or allow them with max_steps=",
                         element="max_steps" if max_steps is not None else "h")


def output_count(nsteps, t_eval=None, n_out=None, output_every=None):
    """The number of states a fixed-step run of ``nsteps`` steps saves with these (checked) output arguments."""
    if t_eval is not None:
        return len(t_eval)
    if n_out is not None:
        return n_out
    if output_every is not None:
        return nsteps // output_every + 2
    return nsteps + 1


def output_steps(nsteps, h, t0, t_eval=None, n_out=None, output_every=None):
    """The step numbers a fixed-step run saves (ascending, for ``integrate.fixed_step.run_fixed``): every step
    by default; every ``output_every``-th step and the last; ``n_out`` equally spaced (``nsteps`` divisible by
    ``n_out − 1``); or the steps of the times ``t_eval``, which must lie on the grid ``t0 + k h`` (to 1e-9 h).
    Anything else is a ``ModelError`` naming the argument."""
    given = [name for name, x in (("t_eval", t_eval), ("n_out", n_out), ("output_every", output_every))
             if x is not None]
    if len(given) > 1:
        raise ModelError(f"give one of t_eval, n_out, output_every, not {' and '.join(given)}", element=given[1])
    if n_out is not None:
        n_out = whole(n_out, "n_out", 2)
        if nsteps % (n_out - 1) != 0:
            raise ModelError(f"n_out = {n_out} must be >= 2 with nsteps = {nsteps} divisible by n_out - 1",
                             element="n_out")
        return save_steps(nsteps, nsteps // (n_out - 1))
    if output_every is not None:
        return save_steps(nsteps, whole(output_every, "output_every", 1))
    if t_eval is None:
        return save_steps(nsteps)
    te = output_times(t_eval, t0, t0 + nsteps * h)
    k = np.rint((te - t0) / h)
    off = np.abs(t0 + k * h - te) > 1e-9 * h
    if np.any(off) or k[0] < 0 or k[-1] > nsteps or np.any(np.diff(k) <= 0):
        bad = te[np.argmax(off)] if np.any(off) else None
        raise ModelError("t_eval of a fixed-step run must be increasing times of the step grid t0 + k h "
                         f"(t0 = {t0}, h = {h:.17g}, k = 0..{nsteps})"
                         + (f"; {bad!r} is not on it" if bad is not None else ""), element="t_eval")
    return k.astype(np.int64)


def batch_states(model, X, n, what, runs):
    """``X`` (``Q0`` or ``V0`` of ``simulate_batch``, ``what``) as (runs, n) real finite numbers: (n,) -> the same row
    for every run; a ModelError naming ``what`` otherwise."""
    try:
        arr = np.asarray(X)
    except (TypeError, ValueError):
        arr = np.asarray(None)
    if arr.dtype.kind not in "biuf":
        raise ModelError(f"{what} must be an array of real numbers, (runs, {n}) or ({n},), got dtype {arr.dtype}",
                         element=what)
    arr = np.array(arr, dtype=float)
    if arr.ndim == 1 and arr.shape == (n,):
        arr = np.broadcast_to(arr, (runs, n))
    if arr.shape != (runs, n):
        raise ModelError(f"{what} must have shape ({runs}, {n}) (runs, {'nq' if what == 'Q0' else 'nv'}) or ({n},) "
                         f"for model '{model.name}' (nq={model.nq}, nv={model.nv}), got {arr.shape}", element=what)
    if not np.all(np.isfinite(arr)):
        names = model.coordinate_names() if what == "Q0" else model.velocity_names()
        raise ModelError(non_finite_entry(arr, what, names), element=what)
    return arr


def non_finite_entry(arr, what, names):
    """The message of a per-run array ``arr`` (runs, n) of ``simulate_batch`` (``what``: ``Q0``, ``params['tau']``,
    ...) holding NaN or inf: its first such entry by run and column, the column's name (``names[j]``), and how many
    more there are."""
    bad = np.argwhere(~np.isfinite(arr))
    b, j = (int(i) for i in bad[0])
    more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
    return f"{what} must be finite: {what}[{b}, {j}] ('{names[j]}') = {arr[b, j]}{more}"
