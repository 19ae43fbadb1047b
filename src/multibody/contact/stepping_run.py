"""``simulate`` with the time-stepping model: the run loop and its services, whatever rows the model has.

The compiled loop (``contact/stepping_loop.py``) makes the steps; this loop drives it in chunks of whole steps
and gives every run the same services:

* outputs on the step grid, as for the fixed-step methods (``t_eval``, ``n_out``, ``output_every``);
* a progress bar (chunks of a hundredth of the run);
* checkpoints every ``every`` simulated seconds (chunks of ``round(every / h)`` steps): the state, the outputs so
  far with their contacts, and what the next steps depend on besides the state (the last impulses, which start
  the next solve; the latches' sides; ``SteppingSystem.run_state``), so that ``resume`` continues bit for bit;
* events ``g(t, q, v)`` (``terminal``, ``direction`` as for ``solve_ivp``), evaluated after every step: a sign
  change between two steps is an event, its time interpolated linearly between them (the scheme is first order
  in h); a terminal one ends the run at the step after it, whose state is the last output. A numba function
  (``@numba.njit``) is called inside the compiled loop through its C address (as a compiled torque law is): an
  event that never happens costs nothing measurable. A Python one is evaluated here on the states of each chunk,
  which the compiled loop keeps: about a microsecond per step;
* a moving base: its states at the chunk's steps tabled before the compiled loop runs them (``BaseMotion.block``;
  chunks of at most ``contact.models.BASE_TABLE_ROWS`` steps);
* releases that separate a joint: the run goes on in the structure after the separation, the step that holds the
  release split at it (``contact/stepping_structures.py``).

A state that becomes non-finite, a callback or event that raises and a checkpoint that cannot be written end
the run with an ``IntegrationError`` that carries the outputs so far (a callback's bad output: its ``ModelError``,
with the outputs as ``result``).
"""
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from multibody.contact.models import check_stepping_method
from multibody.contact.stepping_loop import (NO_EVENTS, STEPPING_EVENT, STEPPING_NONFINITE, STEPPING_OK,
                                             compiled_events, python_steps, step_scratch, stepping_loop)
from multibody.contact.stepping_solver import N_CONTACTS
from multibody.contact.stepping_structures import Structures
from multibody.errors import IntegrationError, ModelError, ModelWarning, ResultFileError
from multibody.integrate import arguments as arg
from multibody.formulations.tree_control import compiled_event, is_compiled_torque
from multibody.integrate.adaptive import nonfinite_entries
from multibody.integrate.arguments import fixed_step_count, output_steps

__all__ = ["SteppingRun", "run_stepping", "simulate_stepping", "EVENT_CHUNK"]

#: the steps of a chunk when the run has Python events (each of its states is kept for them)
EVENT_CHUNK = 512
#: the most times each compiled event can find in a chunk (the chunk's steps when the run has compiled events)
COMPILED_EVENT_TIMES = 4096


@dataclass
class SteppingRun:
    """The outcome of :func:`run_stepping`: its structures and their outputs
    (``contact/stepping_structures.Structures``), ``status`` ("success", "event", "failed"), the last step done, the
    event times (one list per event) and the time of a terminal event (or None)."""

    structures: object
    status: str
    done: int
    t_events: list = field(default_factory=list)
    t_stop: float = None
    #: the exception that ended a failed run (a callback's, a checkpoint that could not be written), or None
    error: Exception = None
    #: the non-finite entries of the velocity a failed step computed (``"v 'hinge.angle' = nan"``), or ""
    nonfinite: str = ""


class _Events:
    """The events of a run evaluated at every step of a chunk (module docstring); ``row(q, v)``: the state as the
    events see it (the union's columns of a run across separations)."""

    def __init__(self, events, t0, q0, v0, row):
        self.events, self.row = events, row
        self.times = [[] for _ in events]
        self.last = [self._value(k, t0, q0, v0) for k in range(len(events))]

    def _value(self, k, t, q, v):
        qr, vr = self.row(q, v)
        return arg.event_value(self.events[k](t, qr.copy(), vr.copy()), k, self.events[k], t)

    def _crossed(self, k, g0, g1):
        direction = getattr(self.events[k], "direction", 0.0)
        up, down = g0 < 0.0 <= g1, g0 > 0.0 >= g1
        return ((up and direction >= 0) or (down and direction <= 0)) and g0 != g1

    def scan(self, t0, h, first, trace, nq):
        """The events of the steps first + 1 .. first + len(trace); returns the step of the first terminal event
        (or None) and its time."""
        for i in range(trace.shape[0]):
            step = first + 1 + i
            t = t0 + step * h
            q, v = trace[i, :nq], trace[i, nq:-1]
            for k, ev in enumerate(self.events):
                g0, g1 = self.last[k], self._value(k, t, q, v)
                self.last[k] = g1
                if not self._crossed(k, g0, g1):
                    continue
                te = t - h + h * g0 / (g0 - g1)
                self.times[k].append(te)
                if getattr(ev, "terminal", False):
                    return step, te
        return None, None

    def at_switch(self, t, q, v):
        """The events at a separation at t, the state after it (q, v) (``row`` its structure's): a sign change
        across it is an event at t (as in a run across switches). Returns whether a terminal one happened."""
        end = False
        for k, ev in enumerate(self.events):
            g0, g1 = self.last[k], self._value(k, t, q, v)
            self.last[k] = g1
            if self._crossed(k, g0, g1):
                self.times[k].append(float(t))
                end = end or bool(getattr(ev, "terminal", False))
        return end


class _Run:
    """The state of a run of :func:`run_stepping` between its chunks: the structures and the current one's system,
    its loop and forces, the state, the step done, the dissipated energy, the events and the trace of the chunk."""

    def __init__(self, st, t0, h, save, chunk, events, python_events):
        self.st, self.t0, self.h, self.save, self.chunk = st, float(t0), float(h), save, chunk
        self.events, self.python_events = events, python_events
        self.done, self.dissipated = 0, 0.0
        self.status, self.t_stop, self.ev, self.error = STEPPING_OK, None, None, None

    def enter(self, q, v):
        """Step on in the current structure from (q, v)."""
        system = self.system = self.st.current.system
        self.q, self.v = np.array(q, dtype=np.float64), np.array(v, dtype=np.float64)
        self.nq = self.q.shape[0]
        self.tau = np.ascontiguousarray(system.tau, dtype=np.float64)
        self.loop = ((lambda P, tau_, *a: python_steps(system, *a)) if system.python_steps else
                     stepping_loop if system.torque is None else _calling(system.torque))
        self.trace = np.empty((self.chunk if self.python_events else 0, self.nq + self.v.shape[0] + 1))
        self.scratch = step_scratch(self.q, self.v)

    def steps(self, t0, h, first, stop, part, E):
        """The loop from step ``first`` to ``stop`` of the grid t0 + k h, saving the steps ``part`` into the current
        structure's outputs; the Python events scanned. Returns the terminal Python event's (step, time) or
        (None, None)."""
        out = self.st.current
        if self.system.table_rows:
            self.system.write_base(t0, h, first, stop)
        try:
            j, self.status, last, self.dissipated = self.loop(self.system.params, self.tau, self.q, self.v, t0, h,
                                                              first, stop, part, self.dissipated,
                                                              *(a[out.rows:] for a in out.outputs),
                                                              self.trace[:stop - first], E, self.scratch)
        except Exception as exc:    # a callback of the Python loop raised: the steps before it kept
            if not hasattr(exc, "partial"):     # (not a callback's: nothing to keep)
                raise
            j, last, self.dissipated = exc.partial
            out.rows += j
            self.last = self.done = last
            raise
        out.rows += j
        self.last = last
        if self.status == STEPPING_NONFINITE or self.ev is None:
            return None, None
        try:
            return self.ev.scan(t0, h, first, self.trace[:last - first], self.nq)
        except Exception:           # an event raised: the chunk's steps were made
            self.done = last
            raise

    def contacts(self):
        """The contact records of the last step (its count, the records)."""
        S = self.system.params.solver
        return int(S.count[N_CONTACTS]), S.rec

    def release(self, k, s, t_r, joint):
        """The separations at t_r (of ``joint``, and any other due then), in the step after step k (s after its
        start; s = 0: at step k's time): the step split at t_r, the rows before and after, the events across.
        Returns whether the run goes on."""
        st, t0, h = self.st, self.t0, self.h
        before = st.current
        if s > 0.0:      # the first piece of the step, to t_r
            hit, te = self.steps(t0 + k * h, s, 0, 1, ONE, NO_EVENTS)
            before.outputs[0][before.rows - 1] = t_r
            if self.status == STEPPING_NONFINITE or hit is not None:
                self.t_stop = te
                return False
        elif before.rows == 0 or before.outputs[0][before.rows - 1] != t_r:
            before.record(t_r, self.q, self.v, self.dissipated, *self.contacts())
        q, v = st.separate(t_r, self.q, self.v)
        self.enter(q, v)
        st.current.record(t_r, q, v, self.dissipated, 0, before.outputs[5][0])
        st.carry_contacts(before)
        if self.ev is not None and self.ev.at_switch(t_r, q, v):
            self.t_stop = t_r
            return False
        if s > 0.0:      # the rest of the step, back onto the grid
            part = ONE if np.any(self.save == k + 1) else NONE
            hit, te = self.steps(t_r, t0 + (k + 1) * h - t_r, 0, 1, part, NO_EVENTS)
            if self.status == STEPPING_NONFINITE:
                return False
            self.done = k + 1
            if part.size:
                st.current.outputs[0][st.current.rows - 1] = t0 + (k + 1) * h
            elif hit is not None:       # a terminal event in the piece: its end is the last output
                st.current.record(t0 + (k + 1) * h, self.q, self.v, self.dissipated, *self.contacts())
            if hit is not None:
                self.t_stop = te
                return False
        return True


def _calling(torque):
    """:func:`stepping_loop` for a loop that calls the Python torque callback ``torque`` (a ``PythonTorque``): an
    exception the callback raised, which stopped the loop at its step, raised with the steps made before it (as
    :func:`python_steps` does)."""
    def loop(*args):
        j, status, last, dissipated = stepping_loop(*args)
        if torque.error is not None:
            exc, torque.error = torque.error, None
            exc.partial = (j, last, dissipated)
            raise exc
        return j, status, last, dissipated
    return loop


#: the step numbers of a one-step piece: its end saved, nothing saved
ONE, NONE = np.array([1], dtype=np.int64), np.zeros(0, dtype=np.int64)


def run_stepping(system, t0, h, nsteps, save, progress=False, events=None, writer=None, every=None, restart=None):
    """Run ``system`` for ``nsteps`` steps of ``h`` from ``t0`` (or from the checkpoint ``restart``), saving the
    step numbers ``save``, with the services of the module docstring; a model whose joints separate goes on in its
    structures after them (``contact/stepping_structures.py``). Returns a :class:`SteppingRun`."""
    save = np.ascontiguousarray(save, dtype=np.int64)
    st = Structures(system, t0, h, save.shape[0] + 1)
    q, v = system.q0.copy(), system.v0.copy()
    done, dissipated = 0, 0.0
    if restart is not None and restart.step > 0:
        q, v, done, dissipated = _restored(st, restart, nsteps)
    elif _release_at(st, t0, h, 0):    # releases at or before t0: made before the first step, without rows
        q, v = st.separate(t0, q, v)
    chunks = [nsteps - done]
    if progress:
        chunks.append(max(1, nsteps // 100))
    if writer is not None:
        chunks.append(max(1, int(round(every / h))))
        if done == 0:
            _write(writer, st, t0, h, 0, q, v, dissipated)
    ev, E, which = _events(st.current.system, events, t0 + done * h, q, v, st)
    if ev is not None:
        chunks.append(EVENT_CHUNK)
    if E.address.shape[0]:
        chunks.append(E.times.shape[1])
    if system.table_rows:
        chunks.append(system.table_rows)
    run = _Run(st, t0, h, save, max(1, min(chunks)), events, ev is not None)
    run.ev, run.done, run.dissipated = ev, done, dissipated
    run.enter(q, v)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=nsteps, initial=done, unit="step", desc=f"stepping h={h:g}")
    times = [[] for _ in events or ()]
    try:
        _loop(run, st, t0, h, nsteps, save, E, which, times, bar, writer)
    except Exception as exc:    # a callback, an event or a checkpoint failed: what was computed is kept
        run.error = exc
    finally:
        if bar is not None:
            bar.close()
    if ev is not None:
        for k, te in zip(which[1], ev.times):
            times[k] = te
    t_stop = run.t_stop
    times = [[t for t in te if t_stop is None or t <= t_stop] for te in times]
    failed = run.status == STEPPING_NONFINITE or run.error is not None
    out = SteppingRun(st, "failed" if failed else "event" if t_stop is not None else "success", run.done, times,
                      t_stop, run.error)
    if run.status == STEPPING_NONFINITE:    # the step's velocity (the loop's scratch after q, v) names what failed
        names = [f"v '{n}'" for n in run.system.model.velocity_names()]
        out.nonfinite = nonfinite_entries(run.scratch[run.nq:run.nq + run.v.shape[0]], names)
    if writer is not None and not failed:
        try:
            _write(writer, st, t0, h, run.done, run.q, run.v, run.dissipated, finished=True)
        except ResultFileError as exc:      # the run is kept (IntegrationError with the Result)
            out.status, out.error = "failed", exc
    return out


def _loop(run, st, t0, h, nsteps, save, E, which, times, bar, writer):
    """The chunks of :func:`run_stepping` from ``run.done`` on (its releases, events, progress, checkpoints)."""
    while run.done < nsteps or _release_at(st, t0, h, run.done):
        release = st.next_release() if st.union else None
        if release is not None and release[0] == run.done:
            if not run.release(*release):
                break
            continue
        done = run.done
        stop = min(done + run.chunk, nsteps, release[0] if release is not None else nsteps)
        part = save[(save >= (done if done == 0 else done + 1)) & (save <= stop)]
        rows = st.current.rows
        hit, te = run.steps(float(t0), float(h), done, stop, part, E)
        if bar is not None:
            bar.update(run.last - done)
        ended = _drain(E, which, times)
        if run.status == STEPPING_NONFINITE:
            run.done = run.last
            break
        if hit is not None:
            _end_at_event(st.current, rows + int(np.count_nonzero(part <= hit)), run.trace[hit - done - 1],
                          run.nq, t0 + hit * h, h)
            run.done, run.t_stop = hit, te
            break
        run.done = run.last
        if run.status == STEPPING_EVENT:
            run.t_stop = ended
            break
        if writer is not None and run.done < nsteps:
            _write(writer, st, t0, h, run.done, run.q, run.v, run.dissipated)


def _release_at(st, t0, h, done):
    """Whether a separation lies at the grid time of step ``done`` (the end of the run)."""
    release = st.next_release() if st.union else None
    return release is not None and release[0] == done and release[1] == 0.0


def _events(system, events, t, q, v, st):
    """The run's events split: the Python ones (:class:`_Events`, evaluated here on the chunks' states), the
    numba-compiled ones (``stepping_loop.CompiledEvents``, evaluated inside the compiled loop after every step;
    in a Python loop of steps or a run across separations, every event is a Python one) and ``which``: (indices of
    the compiled, of the Python ones) in ``events``."""
    events = list(events or ())
    compiled = [] if system.python_steps or st.union else [k for k, g in enumerate(events) if is_compiled_torque(g)]
    python = [k for k in range(len(events)) if k not in compiled]
    ev = _Events([events[k] for k in python], t, q, v, st.row) if python else None
    E = compiled_events([compiled_event(events[k], k).address for k in compiled],
                        [getattr(events[k], "direction", 0.0) for k in compiled],
                        [bool(getattr(events[k], "terminal", False)) for k in compiled],
                        [arg.event_value(events[k](t, q.copy(), v.copy()), k, events[k], t) for k in compiled],
                        COMPILED_EVENT_TIMES)
    return ev, E, (compiled, python)


def _drain(E, which, times):
    """Move the event times the compiled loop found into ``times`` (by the events' indices); returns the time of a
    terminal one among them (the last found), or None."""
    ended = None
    for i, k in enumerate(which[0]):
        found = E.times[i, :E.count[i]].tolist()
        times[k] += found
        if found and E.terminal[i]:
            ended = found[-1]
        E.count[i] = 0
    return ended


def _end_at_event(part, kept, state, nq, t, h):
    """The outputs of ``part`` up to the step of a terminal event at time t (its first ``kept`` rows), its state
    (``state``: q, v, dissipated) the last one."""
    part.rows = kept
    ts = part.outputs[0]
    if part.rows == 0 or abs(ts[part.rows - 1] - t) > 1e-9 * h:
        part.record(t, state[:nq], state[nq:-1], state[-1], 0, part.outputs[5][0])   # (its contacts not kept)


def _write(writer, st, t0, h, step, q, v, dissipated, finished=False):
    if st.union:
        x, out_t, out_x, extra, switching = st.checkpoint(q, v, dissipated)
    else:
        ts, Q, V, D, counts, recs = st.current.trimmed()
        x, out_t, out_x = np.concatenate([q, v, [dissipated]]), ts, np.concatenate([Q, V, D[:, None]], axis=1)
        extra, switching = {"counts": counts, "records": recs}, None
    state = st.current.system.run_state()
    extra.update({f"state_{k}": a for k, a in state.items()})
    writer.write(t0 + step * h, step, x, out_t, out_x, None, {"steps": int(step)}, finished=finished, extra=extra,
                 switching=switching)


def _restored(st, ck, nsteps):
    """The state, outputs and run state of the checkpoint ``ck`` put into the structures ``st`` (a separating run's
    rebuilt, ``Structures.restore``); returns (q, v, step, dissipated). A ``ResultFileError`` names what does not
    fit."""
    part = st.current
    system = part.system
    nq, nv = system.q0.shape[0], system.v0.shape[0]
    try:
        extra = ck.extra or {}
        if st.union:
            q, v, dissipated = st.restore(ck, nsteps)
            part = st.current
        else:
            x = np.asarray(ck.x, dtype=np.float64)
            if x.shape != (nq + nv + 1,):
                raise ValueError(f"x has {x.size} entries, the run's state has {nq + nv + 1}")
            rows = ck.out_t.shape[0]
            if rows > part.outputs[0].shape[0] - 1:
                raise ValueError(f"{rows} outputs, the run has {part.outputs[0].shape[0] - 1}")
            q, v, dissipated = x[:nq].copy(), x[nq:nq + nv].copy(), float(x[-1])
            ts, Q, V, D, counts, recs = part.outputs
            ts[:rows], Q[:rows], V[:rows], D[:rows] = ck.out_t, ck.out_x[:, :nq], ck.out_x[:, nq:nq + nv], \
                ck.out_x[:, -1]
            counts[:rows] = extra["counts"]
            recs[:rows, :, :] = extra["records"]
            part.rows = rows
        part.system.restore({k[len("state_"):]: a for k, a in extra.items() if k.startswith("state_")})
    except (KeyError, ValueError, IndexError, TypeError, ModelError) as exc:
        raise ResultFileError(f"checkpoint '{ck.path}' does not fit its run: its stepping state ({type(exc).__name__}:"
                              f" {exc}) (edited or damaged?)", path=ck.path, element="checkpoint x") from None
    return q, v, int(ck.step), dissipated


def warn_start(model, problems, info=None):
    """Say (a ``ModelWarning``, and ``info["start_outside_stops"]``) when runs start beyond a joint's stop or moving on
    a coordinate an unlock release holds: the stepping model brings such a state back as it does an overlap (the stop's
    row pushes the coordinate back within its limits over ``recovery`` at the position level; a held coordinate's
    velocity is set to zero by its row at the first step), where the run across switches refuses it. ``problems``:
    one list of ``Unilateral.start_problems`` per run."""
    bad = [b for b, p in enumerate(problems) if p]
    if not bad:
        return
    first = problems[bad[0]][0][0]
    runs = "" if len(problems) == 1 else f" (run {bad[0]}" + (f" and {len(bad) - 1} more)" if len(bad) > 1 else ")")
    if info is not None:
        info["start_outside_stops"] = [m for m, _ in problems[bad[0]]]
    warnings.warn(f"model '{model.name}': {first}{runs}: the stepping model brings it back (a stop by its row over "
                  "recovery at the position level, a held velocity set to 0 at the first step)", ModelWarning,
                  stacklevel=5)


def simulate_stepping(system, model, t0, t_end, method, h, t_eval, n_out, output_every, progress, events=None,
                      writer=None, every=None, restart=None, max_steps=None):
    """``simulate`` with the time-stepping model: its own semi-implicit Euler step of size ``h``
    (``contact/stepping_solver.py``), the services of the module docstring; ``restart``: a checkpoint that
    ``simulate`` has checked (``io.checkpoints.check_resumable``; a separating run's ``Structures.restore``) to
    continue from."""
    check_stepping_method("contact='stepping'" if system.info.get("contact") == "stepping" else
                          "the implicit compliant model", method)
    t0, t_end = arg.time_span(t0, t_end)
    if restart is None and model.unilateral:   # beyond its stops, or moving while held: brought back, and said
        warn_start(model, [model.unilateral.start_problems(model, system.q0, system.v0, t0)], system.info)
    nsteps, h_used = fixed_step_count(t0, t_end, h, "stepping")
    arg.fixed_budget(nsteps, h_used, max_steps, "python" if system.python_steps else "compiled")
    events = arg.event_functions(events)
    given = [name for name, x in (("t_eval", t_eval), ("n_out", n_out), ("output_every", output_every))
             if x is not None]
    arg.check_output_size(arg.output_count(nsteps, t_eval, n_out, output_every),
                          system.q0.shape[0] + system.v0.shape[0] + 2 + 13 * max(system.capacity, 1),
                          given[0] if given else "output_every")
    save = output_steps(nsteps, h_used, t0, t_eval, n_out, output_every)
    cpu, wall = time.process_time(), time.perf_counter()
    run = run_stepping(system, t0, h_used, nsteps, save, progress=bool(progress) or nsteps >= 1_000_000,
                       events=events, writer=writer, every=every, restart=restart)
    info = {"method": "stepping", "model": model.name, **system.info, "h": h_used, "nsteps_requested": nsteps,
            "steps": int(run.done), "path": "python" if system.python_steps else "compiled",
            "cpu_seconds": time.process_time() - cpu, "wall_seconds": time.perf_counter() - wall}
    if events is not None:
        info["t_events"] = [list(te) for te in run.t_events]
    if writer is not None:
        info["checkpoint"] = str(writer.path)
    if restart is not None:
        info["resumed_from"] = restart.t
    if run.status == "failed":
        exc = run.error
        if exc is None:
            reason = (f"the state became non-finite (NaN or inf) at step {run.done + 1} "
                      f"(t = {t0 + (run.done + 1) * h_used:.17g}): {run.nonfinite or 'the velocity'}; the step "
                      f"h = {h_used:g} may be too large for the model's stiffest force (a controller's kd h / inertia "
                      "beyond 2 makes its explicit damping unstable) or the forces unbounded")
        elif isinstance(exc, ResultFileError):
            reason = f"the checkpoint could not be written at step {run.done}: {exc}"
        else:
            reason = f"{type(exc).__name__} raised after step {run.done} (t = {t0 + run.done * h_used:.17g}): {exc}"
        info.update(status="failed", message=reason)
        result = run.structures.result(info)
        if isinstance(exc, ModelError) and not isinstance(exc, ResultFileError):
            exc.result = result     # bad input met during the run (a callback's output): with what was computed
            raise exc
        raise IntegrationError(f"stepping integration of model '{model.name}' failed: {reason}", result=result,
                               reason=reason) from exc
    message = "completed" if run.status == "success" else f"a terminal event occurred at t = {run.t_stop:.17g}"
    info.update(status=run.status, message=message)
    return run.structures.result(info)
