"""A run across switches (joint limits, latches, releases): event location to machine precision, the switch, the
restart — for any system of modes that keeps the protocol below (the tree's: ``switching/structure.py``).

The run goes from mode to mode. It integrates the mode until one of its guards — functions of (t, x) that are
≥ 0 while the mode holds — crosses zero, locates that instant as the root of the guard by a bracketing solver
(Brent's method) on the integrator's dense output, has the system make the switch at the state there, and
restarts from the state after it:

* adaptive methods (DOP853, RK45, ...): each mode is a run of :func:`~multibody.integrate.adaptive.solve_adaptive`
  with the least watched guard as a terminal event, located on the step's interpolant (``solve_ivp``'s
  protocol, Brent to 4 eps);
* fixed-step methods (RK4, RK2, HEUN, VERLET): each mode runs in the system's loop (compiled, or
  ``switching/python_steps.py``'s Python loop of the same arithmetic), which checks the
  guards after every step and stops before the step in which one crosses. The dense output of that step is the
  step itself taken with a smaller size s ∈ (0, h] (of the method's order): the event is its root, and from the
  state after the switch one step of the rest of the interval brings the run back onto the grid ``t0 + k h``.

Outputs: the states at the requested output times and, with ``event_rows``, two rows at each switch, the states
just before and just after it. A switch may end a system and start another (a joint separates: a new Model with
other coordinates): the rows say which system each belongs to.

User events (adaptive methods): functions ``g(t, x, system)`` with the attributes ``terminal`` and ``direction`` of
``solve_ivp`` are located in each mode on the same dense output as the guards, listed before them (a user root
at the instant of a guard's is kept). At a switch at t_e, a user event is reported once: its root in the mode
before, when it lies at the switch to the location precision (:data:`SAME_ROOT`: brentq's ``4 eps (1 + |t|)``
for either root), else the switch instant when g changes sign across the switch (its values at the states just
before and just after; a jump of a velocity, or an arrival at zero); the zero the next mode starts from is then
not a new root (the departure from it is not reported). A terminal user event (its count of roots reached
over the whole run) ends the run at its root — after the switch when it is reported at one — with status
``"event"``; a terminal root that lies on a switch ends the run after that switch.

The protocol of a system (a mode of one structure): ``index`` (its place in the run's list of structures),
``nq``, ``nv``, ``quaternions``, ``projects`` (call ``project`` after each adaptive step); ``start(t, x, fresh) -> reached`` (arm it at the start of the run or of the
structure; the guards reached there), ``arm(t, x)`` (watch the guards ≥ 0 at the start of a mode), ``snap(x)``
(put, in place, what round-off left a hair past a guard back on it), ``rhs(t, x)``, ``project(t, x)``,
``guards(t, x) -> least watched guard``, ``reached(t, x) -> bool array``, ``switch(t, x, reached, log) -> (x,
next system or None)``, ``run_steps(x, t0, h, first, nsteps, save, method, ts, xs, xt, K) -> (rows, status,
done)`` (the compiled loop; status :data:`EVENT` when a guard crossed in the step after ``done``) and
``step(t, x, h, method, xt, K)`` (one step from (t, x), ``K[0]`` = rhs(t, x)). A structure with no compiled loop
takes both from ``switching/python_steps.py`` (a Python loop of the same arithmetic; its exceptions carry the rows
it saved, which the run keeps).
"""
import math
from dataclasses import dataclass, field

import numpy as np

from multibody.errors import ConstraintError, ModelError
from multibody.integrate.adaptive import PROJECTABLE, nonfinite_entries, solve_adaptive
from multibody.integrate.progress import progress_bar
from multibody.integrate.tableaux import METHODS, STAGES

__all__ = ["run_hybrid", "HybridRun", "EVENT", "MAX_SWITCHES_AT_ONCE", "MAX_SWITCHES_PER_STEP", "SAME_ROOT"]

#: status of a system's ``run_steps``: a guard crossed zero during the step after the last one done
EVENT = 3
#: the pieces a fixed-step run is stepped in when it shows a progress bar (the bar moves between them)
PIECES = 100
#: the switches allowed at one instant (to round-off) before the run is declared chattering
MAX_SWITCHES_AT_ONCE = 64
#: the switches allowed within one step of the integrator — between two points of a fixed-step run's grid, or with
#: no step of an adaptive run completed between them — before the run is declared chattering (a Zeno sequence:
#: the modes change faster than the step resolves). A cascade of rebounds off one stop ends by itself at the rest
#: velocity v_r after log(h g (1 − e) / (2 v_r)) / log(1/e) bounces in its last step h: fewer than this for
#: e ≤ 0.99 and steps up to 0.1 s under gravity (``switching/structure.py``, REST_VELOCITY)
MAX_SWITCHES_PER_STEP = 1000
_EPS = np.finfo(float).eps
#: two roots located by brentq (``xtol = rtol = 4 eps``, as ``solve_adaptive`` does) on the same dense output are
#: the same instant when they are within ``SAME_ROOT (1 + |t|)`` (each within 4 eps (1 + |t|) of the true root)
SAME_ROOT = 8 * _EPS


@dataclass
class HybridRun:
    """Outcome of :func:`run_hybrid`: the output rows — times ``t``, the index of the system each row belongs to
    ``system``, the states ``x`` (in that system's coordinates) —, ``systems`` [(t from when, system)], the switch
    ``log``, ``status`` ("success", "event": a terminal user event ended it, or "failed"), ``reason`` of a
    failure, ``error`` (the exception that stopped a failed run, else None), ``element`` (the joint or law that failed it,
    when one did), ``steps``, ``nfev``, ``location_steps`` (fixed-step runs: the steps of other sizes taken to
    locate the switches on the dense output) and ``t_events`` (the times of each user event)."""

    t: list = field(default_factory=list)
    system: list = field(default_factory=list)
    x: list = field(default_factory=list)
    systems: list = field(default_factory=list)
    log: list = field(default_factory=list)
    status: str = "success"
    reason: str = None
    error: BaseException = None
    steps: int = 0
    nfev: int = 0
    t_events: list = field(default_factory=list)
    t_stop: float = None
    element: str = None
    location_steps: int = 0

    def add(self, t, s, x):
        self.t.append(float(t))
        self.system.append(s)
        self.x.append(np.array(x, dtype=float))


class _Failure(Exception):
    def __init__(self, reason, element=None):
        super().__init__(reason)
        self.reason, self.element = reason, element


def run_hybrid(system, x0, t0, t_end, method, h=None, nsteps=None, save=None, rtol=1e-9, atol=1e-12, t_eval=None,
               max_steps=None, event_rows=True, checkpoint=None, every=None, resume=None, events=None, progress=False):
    """Integrate ``system`` (the protocol of the module docstring) from ``x0`` at ``t0`` to ``t_end`` across its
    switches; return a :class:`HybridRun`. ``method``: an adaptive method (``rtol``, ``atol``, output times
    ``t_eval`` or every step, ``max_steps`` over all the modes) or a fixed-step one (``h`` and ``nsteps`` of the
    grid, ``save`` the step numbers to output; ``max_steps``: the budget of the grid's steps and those that locate
    the switches, together). Never raises on a failed integration (a non-finite state, the
    step limit, an exception of the right-hand side or of a switch, chattering: more than
    ``MAX_SWITCHES_AT_ONCE`` switches at one instant): the outcome's status and reason say why, with the rows and
    the log up to it. Bad input met on the way (a ``ModelError``; a ``ConstraintError`` for an initial state that
    ``system.start`` cannot bring onto its constraints) is raised.

    ``checkpoint(t, step, system, x, run, finished)``: called every ``every`` of simulated time — a fixed-step run
    at the step numbers that are multiples of ``round(every / h)``, an adaptive one after the first accepted step
    past each multiple — with the state reached (the system's mode armed: the run goes on from it as it is), the
    :class:`HybridRun` so far, and at the end (``finished``). ``resume = (t, step, x, run)``: go on with a run from
    such a state, the system's mode restored (armed) and ``run`` the outcome so far.

    ``progress``: a tqdm bar (None: after two seconds, on a terminal; True; False; ``integrate/progress.py``) of
    the steps of a fixed-step run, moving between :data:`PIECES` pieces of the run, or of the simulated time of an
    adaptive one, moving after each step.

    ``events``: user events ``g(t, x, system)`` (module docstring; adaptive methods only). A ``ModelError`` met
    during the run (e.g. an event's bad value) is raised with the outcome so far as its ``run``."""
    key = str(method).upper()
    if events and key in METHODS:
        raise ModelError("events need an adaptive method (DOP853, RK45, Radau, ...)", element="events")
    run = _Runner(system, t0, t_end, key, h, nsteps, save, rtol, atol, t_eval, max_steps,
                  event_rows, checkpoint, every, events or [])
    run.progress = progress
    bad_start = None
    try:
        if resume is not None:
            t, step, x, run.out = resume
            if every:
                run.next_write = t0 + every * (np.floor((t - t0) / every) + 1)
            run.out.status, run.out.reason, run.out.error = "success", None, None
            if run.fixed:
                run.fixed_steps(np.array(x, dtype=np.float64), int(step), armed=True)
            else:
                run.adaptive(float(t), np.array(x, dtype=np.float64), first=False, armed=True)
        else:
            x = np.array(x0, dtype=np.float64)
            try:
                reached = system.start(t0, x, True)
            except ConstraintError as exc:   # an initial state off the constraints: bad input, raised as such
                exc.run = run.out
                bad_start = exc
                raise
            if reached.any():
                x = run.switch(t0, x, reached, initial=True)
            if run.fixed:
                run.fixed_steps(x)
            else:
                run.adaptive(t0, x)
    except ModelError as exc:
        exc.run = run.out
        raise
    except _Failure as exc:
        run.fail(exc.reason, exc.__cause__)
        run.out.element = exc.element
    except Exception as exc:  # an exception of a callback, of the solver or of a switch: keep what was done
        if exc is bad_start:
            raise
        run.fail(f"{type(exc).__name__} raised during the run: {exc}", exc)
    return run.out


class _UserEvents:
    """The user events of a run across switches (module docstring): their functions for each mode, their roots so
    far (``t_events``, a list each) and what they do at a switch."""

    def __init__(self, events, t_events):
        self.events, self.t_events = list(events), t_events
        n = len(self.events)
        self.count = [_terminal_count(ev) for ev in self.events]
        self.direction = [float(getattr(ev, "direction", 0.0)) for ev in self.events]
        self.hits = [0] * n
        self.last = [None] * n        # the last root of each, of any direction, in the mode just done
        self.handled = [False] * n    # reported at the switch the next mode starts from
        self.layout = []

    def functions(self, st, t_start):
        """The events of the mode of ``st`` that starts at ``t_start``, for ``solve_adaptive``: each one's copy of
        any direction (its roots say whether one lies on the switch that ends the mode) and, when it has a
        direction or is terminal, a copy with its direction and its roots still to go before it ends the run. An
        event reported at the switch ``t_start`` is not a number there (the zero it starts from is no root)."""
        out, self.layout = [], []
        for i, ev in enumerate(self.events):
            skip = t_start if self.handled[i] else None

            def g(t, y, ev=ev, skip=skip):
                return math.nan if t == skip else ev(t, y, st)

            def g_dir(t, y, ev=ev, skip=skip):
                return math.nan if t == skip else ev(t, y, st)

            g.terminal, g.direction = False, 0.0
            out.append(g)
            if self.direction[i] != 0.0 or self.count[i]:
                left = self.count[i] - self.hits[i]
                g_dir.terminal, g_dir.direction = (left if self.count[i] and left > 0 else False), self.direction[i]
                out.append(g_dir)
                self.layout.append((len(out) - 2, len(out) - 1))
            else:
                self.layout.append((len(out) - 1, len(out) - 1))
        return out

    def record(self, run):
        """Record the roots of the mode just done (``run``: its ``AdaptiveRun``); return ``(t, x)`` of the root at
        which a terminal event reached its count (the earliest), else None."""
        stop = None
        self.handled = [False] * len(self.events)
        for i, (a, b) in enumerate(self.layout):
            self.last[i] = float(run.t_events[a][-1]) if len(run.t_events[a]) else None
            for r, y in zip(run.t_events[b], run.y_events[b]):
                self.t_events[i].append(float(r))
                self.hits[i] += 1
                if self.count[i] and self.hits[i] == self.count[i] and (stop is None or r < stop[0]):
                    stop = (float(r), y)
        return stop

    def values(self, t, x, st):
        return [ev(t, x, st) for ev in self.events]

    def at_switch(self, t, before, after):
        """The user events at the switch at t (their values at the states just before and just after it; module
        docstring). Returns True when a terminal one reached its count there."""
        end = False
        for i, (a, b) in enumerate(zip(before, after)):
            if self.last[i] is not None and t - self.last[i] <= SAME_ROOT * (1.0 + abs(t)):
                self.handled[i] = True        # its root in the mode before lies on the switch
                continue
            up, down = a <= 0.0 <= b and a != b, a >= 0.0 >= b and a != b
            if not (up or down):
                continue
            self.handled[i] = True
            d = self.direction[i]
            if (up and d >= 0.0) or (down and d <= 0.0):
                self.t_events[i].append(float(t))
                self.hits[i] += 1
                end = end or self.hits[i] == self.count[i]
        return end


def _terminal_count(ev):
    """The number of roots after which the event ``ev`` ends the run (0: never), from its ``terminal``."""
    terminal = getattr(ev, "terminal", False)
    if isinstance(terminal, (bool, np.bool_)) or terminal is None:
        return 1 if terminal else 0
    return max(int(terminal), 0)


class _Runner:
    def __init__(self, system, t0, t_end, key, h, nsteps, save, rtol, atol, t_eval, max_steps, event_rows,
                 checkpoint, every, events):
        self.sys, self.t0, self.t_end, self.key = system, float(t0), float(t_end), key
        self.fixed = key in METHODS
        self.h, self.nsteps, self.save = h, nsteps, save
        self.rtol, self.atol, self.t_eval, self.max_steps = rtol, atol, t_eval, max_steps
        self.event_rows = event_rows
        self.out = HybridRun(systems=[(self.t0, system)], t_events=[[] for _ in events])
        self.user = _UserEvents(events, self.out.t_events)
        self.at_once = (None, 0)
        self.burst = (0, 0, self.t0)     # switches within the current step, the log's length and t at its start
        self.checkpoint, self.every = checkpoint, every
        self.chunk = None if checkpoint is None or not self.fixed else max(1, int(round(every / float(h))))
        self.next_write = self.t0 + every if every else np.inf     # (adaptive runs)
        self.progress, self.bar = False, None

    def fail(self, reason, error):
        self.out.status, self.out.reason, self.out.error = "failed", reason, error

    def finished(self, x):
        bar = getattr(self, "bar", None)
        if bar is not None and not self.fixed:
            bar.update(self.t_end - self.t0 - bar.n)
        if self.checkpoint is not None:
            step = int(self.nsteps) if self.fixed else None
            self.checkpoint(self.t_end, step, self.sys, x, self.out, True)

    def switch(self, t, x, reached, initial=False):
        """The system's switch at (t, x), with the rows before and after it; a switch that starts another system
        (a separation) continues in it. Returns the state after it."""
        out = self.out
        before = len(out.log)
        if self.event_rows and not initial:
            out.add(t, self.sys.index, x)
        x, nxt = self.sys.switch(t, x, reached, out.log)
        if nxt is not None:
            self.sys = nxt
            out.systems.append((float(t), nxt))
        if self.event_rows and not initial:
            out.add(t, self.sys.index, x)
        self.count(t, len(out.log) - before)
        return x

    def count(self, t, n):
        """Fail when more than MAX_SWITCHES_AT_ONCE switches happen at one instant, or more than
        MAX_SWITCHES_PER_STEP within one step (chattering), naming the joints that switched."""
        t_prev, count = self.at_once
        same = t_prev is not None and abs(t - t_prev) <= 16 * _EPS * max(1.0, abs(t))
        count = (count if same else 0) + max(n, 1)
        self.at_once = (t, count)
        if count > MAX_SWITCHES_AT_ONCE:
            raise self.chattering(f"{count} switches at t = {t:.17g} (the mode changes again at the same instant)",
                                  len(self.out.log) - count)
        in_step, first, t_first = self.burst
        self.burst = (in_step + max(n, 1), first, t_first)
        if in_step + max(n, 1) > MAX_SWITCHES_PER_STEP:
            step = f"one step (h = {self.h:g})" if self.fixed else "one step of the integrator"
            raise self.chattering(f"{in_step + max(n, 1)} switches within {step}, from t = {t_first:.10g} to "
                                  f"{t:.10g} (a Zeno sequence: the modes change faster than the step resolves; too "
                                  "large a step for stiff gains or springs?)", first)

    def step_done(self, t):
        """A step completed with no switch in it: the count of switches within one step starts again."""
        self.burst = (0, len(self.out.log), t)

    def chattering(self, what, first):
        """The failure of a chattering run: ``what`` happened, the joints of the switches logged from ``first`` on
        named, most switches first."""
        from collections import Counter

        counts = Counter(e.get("element") for e in self.out.log[max(first, 0):] if e.get("element"))
        joints = ", ".join(f"'{j}' ({c})" for j, c in counts.most_common(4))
        head = counts.most_common(1)[0][0] if counts else None
        return _Failure(f"chattering: {what}; switches at {joints or 'no joint'}", f"joint '{head}'" if head else None)

    # ---- adaptive methods ----------------------------------------------------------------------------------
    def adaptive(self, t, x, first=True, armed=False):
        """The adaptive run from (t, x) across its modes, with a progress bar in simulated time (as a run without
        switches has: ``integrate/progress.py``)."""
        self.bar = progress_bar(self.progress, self.t_end - self.t0, self.key, "s", initial=t - self.t0,
                                bar_format="{l_bar}{bar}| {n:.3g}/{total:.3g} s [{elapsed}<{remaining}]")
        try:
            self.adaptive_modes(t, x, first, armed)
        finally:
            if self.bar is not None:
                self.bar.close()

    def adaptive_modes(self, t, x, first, armed):
        te = None if self.t_eval is None else np.asarray(self.t_eval, dtype=float)
        out = self.out
        while True:
            st = self.sys
            x = np.array(x, dtype=np.float64)
            if not armed:
                st.snap(x)
                st.arm(t, x)
            armed = False

            def event(tt, y, st=st):
                return st.guards(tt, y)

            event.terminal, event.direction = True, -1.0
            user = self.user.functions(st, t)
            rest = None if te is None else te[(te >= t) if first else (te > t)]
            left = None if self.max_steps is None else self.max_steps - out.steps
            if left is not None and left < 1:
                raise _Failure(f"the step limit max_steps = {self.max_steps} was reached at t = {t:.17g} before "
                               f"t_end = {self.t_end:.17g}")
            project = st.project if self.key in PROJECTABLE and st.projects else None
            run = solve_adaptive(st.rhs, (t, self.t_end), x, method=self.key, rtol=self.rtol, atol=self.atol,
                                 t_eval=rest, events=user + [event], max_steps=left, project=project,
                                 callback=self.writer(st, rest is None and not first))
            out.steps += run.nsteps
            out.nfev += run.nfev
            if run.nsteps >= 2:   # a step completed before the one that ended the mode
                self.step_done(float(run.t[-1]) if len(run.t) else t)
            stop = self.user.record(run)
            stop = None if run.status == "failed" else stop
            guard = run.status == "event" and len(run.t_events[-1]) > 0
            if stop is not None and not guard:   # a terminal user event: a switch there too when one is due
                t_e, x_e = stop
                due = getattr(st, "due", None)
                guard = due is not None and bool(due(t_e, x_e))
            elif guard:
                t_e, x_e = float(run.t_events[-1][-1]), run.y_events[-1][-1]
            ts, ys = run.t, run.y
            if rest is None:   # every step: the switches add the rows at their instants (before, after)
                ts, ys = ts[0 if first else 1:len(ts) - guard], ys[0 if first else 1:len(ys) - guard]
            for tt, yy in zip(ts, ys):
                out.add(tt, st.index, yy)
            if run.status == "failed":
                if isinstance(run.error, ModelError):
                    raise run.error
                if left is not None and run.nsteps >= left:   # the run's budget, over all its modes
                    raise _Failure(f"the step limit max_steps = {self.max_steps} was reached at t = "
                                   f"{float(run.t[-1]):.17g} before t_end = {self.t_end:.17g}, across "
                                   f"{len(out.log)} switches (a larger max_steps, or math.inf, lets it go on)")
                raise _Failure(run.reason) from run.error
            if not guard:
                x_end = run.y[-1] if len(run.y) else x
                if stop is not None:
                    out.status, out.t_stop = "event", stop[0]
                elif len(run.t) and run.t[-1] == self.t_end:   # a switch due at t_end is made (end_switch)
                    x_end = self.end_switch(np.array(x_end, dtype=np.float64))
                self.finished(x_end)
                return
            before = self.user.values(t_e, x_e, st)
            x = self.switch(t_e, x_e, st.reached(t_e, x_e))
            if self.user.at_switch(t_e, before, self.user.values(t_e, x, self.sys)) or stop is not None:
                out.status, out.t_stop = "event", t_e
                self.finished(x)
                return
            if t_e >= self.t_end:   # a switch at the end of the span: the run ends after it
                self.finished(x)
                return
            t, first = t_e, False

    def writer(self, st, skip_first):
        """The ``callback`` of an adaptive mode after each step: it moves the progress bar, and calls ``checkpoint``
        every ``every`` of simulated time with the rows so far (``skip_first``: the mode's first row is the one its
        switch added already)."""
        bar = self.bar
        if self.checkpoint is None and bar is None:
            return None
        out, every, t0 = self.out, self.every, self.t0

        def callback(t, y, ts, ys, stats):
            if bar is not None:
                bar.update(t - t0 - bar.n)
            if self.checkpoint is None or t < self.next_write:
                return
            self.next_write = t0 + every * (np.floor((t - t0) / every) + 1)
            lo = 1 if skip_first else 0
            snapshot = HybridRun(t=out.t + [float(x) for x in ts[lo:]], system=out.system + [st.index] * len(ts[lo:]),
                                 x=out.x + [np.array(x) for x in ys[lo:]], systems=list(out.systems),
                                 log=list(out.log), steps=out.steps + stats["steps"], nfev=out.nfev + stats["nfev"])
            self.checkpoint(t, None, st, y, snapshot, False)

        return callback

    # ---- fixed-step methods --------------------------------------------------------------------------------
    def fixed_steps(self, x, k=0, armed=False):
        h, nsteps = float(self.h), int(self.nsteps)
        bar = progress_bar(self.progress, nsteps, f"{self.key} h={h:g}", "step", initial=k)
        try:
            self.fixed_pieces(x, k, armed, bar)
        finally:
            if bar is not None:
                bar.close()

    def budget_left(self, t):
        """The steps a fixed-step run may still take (``max_steps`` less the grid's steps and the location's); a
        failure naming the budget when none is left at t."""
        if self.max_steps is None:
            return math.inf
        left = self.max_steps - self.out.steps - self.out.location_steps
        if left < 1:
            raise _Failure(f"the step limit max_steps = {self.max_steps} was reached at t = {t:.17g} before t_end = "
                           f"{self.t_end:.17g} ({self.out.steps} steps of the grid, {self.out.location_steps} to "
                           f"locate {len(self.out.log)} switches)")
        return left

    def fixed_pieces(self, x, k, armed, bar):
        """The fixed-step run from x at step k (``armed``: its mode armed already), in pieces: the modes, and within
        a mode the checkpoints' chunks and, with a progress ``bar``, :data:`PIECES` pieces of the run; at most
        ``max_steps`` steps in all (:meth:`budget_left`)."""
        out = self.out
        h, nsteps, save = float(self.h), int(self.nsteps), np.asarray(self.save, dtype=np.int64)
        code = METHODS[self.key]
        t0 = self.t0
        piece = None if bar is None else max(1, nsteps // PIECES)
        if k == 0 and save.size and save[0] == 0:
            out.add(t0, self.sys.index, x)
        while k < nsteps:
            if bar is not None:
                bar.update(k - bar.n)
            st = self.sys
            n = st.nq + st.nv
            x = np.array(x, dtype=np.float64)
            if not armed:
                st.snap(x)
                st.arm(t0 + k * h, x)
            armed = False
            stop = nsteps if self.chunk is None else min(nsteps, (k // self.chunk + 1) * self.chunk)
            stop = stop if piece is None else min(stop, (k // piece + 1) * piece)
            stop = int(min(stop, k + self.budget_left(t0 + k * h)))
            todo = save[(save > k) & (save <= stop)]
            ts, xs, xt = np.empty(todo.shape[0] + 1), np.empty((todo.shape[0] + 1, n)), np.empty(n)
            error = None
            try:
                rows, status, done = st.run_steps(x, t0, h, k, stop, todo, code, ts, xs, xt, np.empty((5, n)))
            except Exception as exc:  # noqa: BLE001 -- of a Python loop's rhs or projection: keep its rows, re-raise
                (rows, done), status, error = getattr(exc, "steps_done", (0, k)), 0, exc
            out.steps += done - k
            out.nfev += (done - k) * STAGES[code]
            for r in range(rows):
                out.add(ts[r], st.index, xs[r])
            if error is not None:
                raise error
            if status == 1:    # xt: the step's non-finite state
                raise _Failure(f"the state became non-finite (NaN or inf) at step {done + 1} (t = "
                               f"{t0 + (done + 1) * h:.17g}): {nonfinite_entries(xt, st.entry_names()) or 'the state'}; the step "
                               f"h = {h:g} may be too large for the model's stiffest force or the forces unbounded")
            k = done
            if status != EVENT:
                if k < nsteps:   # a piece done: write its checkpoint, go on in the same mode
                    if self.checkpoint is not None and k % self.chunk == 0:
                        self.checkpoint(t0 + k * h, k, st, x, out, False)
                    armed = True
                continue
            # the event lies in step k + 1: locate it, switch, and step on to the grid point k + 1
            x = self.to_grid(t0 + k * h, x, t0 + (k + 1) * h, code)
            k += 1
            out.steps += 1
            self.step_done(t0 + k * h)
            if np.any(save == k):
                out.add(t0 + k * h, self.sys.index, x)
        if bar is not None:
            bar.update(k - bar.n)
        self.finished(self.end_switch(x))

    def end_switch(self, x):
        """The state at t_end after the switch due there, if one is (a release at t_end, a stop reached at the last
        step's end: a guard at zero there, which no step after it would cross): made and logged with its rows, so
        that the run ends after it."""
        st, t, out = self.sys, self.t_end, self.out
        due = getattr(st, "due", None)
        if due is None or not due(t, x):
            return x
        if self.event_rows and out.t and out.t[-1] == t and out.system[-1] == st.index and \
                np.array_equal(out.x[-1], x):
            for rows in (out.t, out.system, out.x):   # the last output is the switch's row before it
                rows.pop()
        return self.switch(t, x, st.reached(t, x))

    def to_grid(self, t_a, x_a, t_b, code):
        """From (t_a, x_a) to the grid time t_b in one step of the method, across the switches inside it: each is
        located on the step of a smaller size (the dense output), switched, and the rest stepped. Returns x(t_b)."""
        from scipy.optimize import brentq

        while True:
            st = self.sys
            n = st.nq + st.nv
            K, xt = np.empty((5, n)), np.empty(n)
            xa = np.ascontiguousarray(x_a, dtype=np.float64)
            K[0] = st.rhs(t_a, xa)

            def g(s):
                self.budget_left(t_a)
                self.out.location_steps += 1
                st.step(t_a, xa, s, code, xt, K)
                return st.guards(t_a + s, xt)

            dt = t_b - t_a
            if dt <= 4 * _EPS * max(1.0, abs(t_b)):
                return x_a
            if g(dt) >= 0.0:
                if not np.all(np.isfinite(xt)):
                    raise _Failure(f"the state became non-finite (NaN or inf) before t = {t_b:.17g}")
                return xt.copy()
            s = brentq(g, 0.0, dt, xtol=4 * _EPS * max(1.0, abs(t_a)), rtol=4 * _EPS)
            g(s)
            t_e, x_e = t_a + s, xt.copy()
            x_a = self.switch(t_e, x_e, st.reached(t_e, x_e))
            t_a = t_e
            self.sys.snap(x_a)
            self.sys.arm(t_a, x_a)
