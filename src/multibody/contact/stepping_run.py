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
  chunks of at most ``contact.models.BASE_TABLE_ROWS`` steps).

A state that becomes non-finite ends the run with an ``IntegrationError`` that carries the outputs so far.
"""
import time
from dataclasses import dataclass, field

import numpy as np

from multibody.contact.stepping_loop import (STEPPING_EVENT, STEPPING_NONFINITE, STEPPING_OK, compiled_events,
                                             empty_outputs, python_steps, stepping_loop)
from multibody.errors import IntegrationError, ModelError, ResultFileError
from multibody.integrate import arguments as arg
from multibody.formulations.tree_control import compiled_event, is_compiled_torque
from multibody.integrate.arguments import fixed_step_count, output_steps

__all__ = ["SteppingRun", "run_stepping", "simulate_stepping", "EVENT_CHUNK"]

#: the steps of a chunk when the run has Python events (each of its states is kept for them)
EVENT_CHUNK = 512
#: the most times each compiled event can find in a chunk (the chunk's steps when the run has compiled events)
COMPILED_EVENT_TIMES = 4096


@dataclass
class SteppingRun:
    """The outcome of :func:`run_stepping`: the outputs (times, Q, V, dissipated energy, contact counts and
    records), ``status`` ("success", "event", "failed"), the last step done, the event times (one list per event)
    and the time of a terminal event (or None)."""

    t: np.ndarray
    Q: np.ndarray
    V: np.ndarray
    D: np.ndarray
    counts: np.ndarray
    recs: np.ndarray
    status: str
    done: int
    t_events: list = field(default_factory=list)
    t_stop: float = None


class _Events:
    """The events of a run evaluated at every step of a chunk (module docstring)."""

    def __init__(self, events, t0, q0, v0):
        self.events = events
        self.times = [[] for _ in events]
        self.last = [self._value(k, t0, q0, v0) for k in range(len(events))]

    def _value(self, k, t, q, v):
        return arg.event_value(self.events[k](t, q.copy(), v.copy()), k, self.events[k], t)

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
                direction = getattr(ev, "direction", 0.0)
                up, down = g0 < 0.0 <= g1, g0 > 0.0 >= g1
                if not ((up and direction >= 0) or (down and direction <= 0)) or g0 == g1:
                    continue
                te = t - h + h * g0 / (g0 - g1)
                self.times[k].append(te)
                if getattr(ev, "terminal", False):
                    return step, te
        return None, None


def run_stepping(system, t0, h, nsteps, save, progress=False, events=None, writer=None, every=None, restart=None):
    """Run ``system`` for ``nsteps`` steps of ``h`` from ``t0`` (or from the checkpoint ``restart``), saving the
    step numbers ``save``, with the services of the module docstring. Returns a :class:`SteppingRun`."""
    nq, nv = system.q0.shape[0], system.v0.shape[0]
    save = np.ascontiguousarray(save, dtype=np.int64)
    ts, Q, V, D, counts, recs = empty_outputs(save.shape[0] + 1, nq, nv, system.capacity)
    tau = np.ascontiguousarray(system.tau, dtype=np.float64)
    q, v = system.q0.copy(), system.v0.copy()
    done, rows, dissipated = 0, 0, 0.0
    if restart is not None and restart.step > 0:
        done, rows, dissipated = _restored(system, restart, q, v, (ts, Q, V, D, counts, recs))
    chunks = [nsteps - done]
    if progress:
        chunks.append(max(1, nsteps // 100))
    if writer is not None:
        chunks.append(max(1, int(round(every / h))))
        if done == 0:
            _write(writer, system, t0, h, 0, q, v, dissipated, (ts, Q, V, D, counts, recs), 0)
    ev, E, which = _events(system, events, t0 + done * h, q, v)
    if ev is not None:
        chunks.append(EVENT_CHUNK)
    if E.address.shape[0]:
        chunks.append(E.times.shape[1])
    if system.table_rows:
        chunks.append(system.table_rows)
    chunk = max(1, min(chunks))
    trace = np.empty((chunk if ev is not None else 0, nq + nv + 1))
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=nsteps, initial=done, unit="step", desc=f"stepping h={h:g}")
    status, t_stop = STEPPING_OK, None
    times = [[] for _ in events or ()]
    loop = (lambda P, tau_, *a: python_steps(system, *a)) if system.python_steps else stepping_loop
    try:
        while done < nsteps:
            stop = min(done + chunk, nsteps)
            part = save[(save >= (done if done == 0 else done + 1)) & (save <= stop)]
            outputs = (ts[rows:], Q[rows:], V[rows:], D[rows:], counts[rows:], recs[rows:])
            if system.table_rows:
                system.write_base(float(t0), float(h), done, stop)
            j, status, last, dissipated = loop(system.params, tau, q, v, float(t0), float(h), done, stop, part,
                                               dissipated, *outputs, trace[:stop - done], E)
            rows += j
            if bar is not None:
                bar.update(last - done)
            ended = _drain(E, which, times)
            if status == STEPPING_NONFINITE:
                done = last
                break
            if ev is not None:
                hit, te = ev.scan(float(t0), float(h), done, trace[:last - done], nq)
                if hit is not None:
                    rows = _end_at_event(hit, done, trace, nq, t0, h, save, rows, (ts, Q, V, D, counts, recs))
                    done, t_stop = hit, te
                    break
            done = last
            if status == STEPPING_EVENT:
                t_stop = ended
                break
            if writer is not None and done < nsteps:
                _write(writer, system, t0, h, done, q, v, dissipated, (ts, Q, V, D, counts, recs), rows)
    finally:
        if bar is not None:
            bar.close()
    if ev is not None:
        for k, te in zip(which[1], ev.times):
            times[k] = te
    times = [[t for t in te if t_stop is None or t <= t_stop] for te in times]
    out = SteppingRun(ts[:rows], Q[:rows], V[:rows], D[:rows], counts[:rows], recs[:rows],
                      "failed" if status == STEPPING_NONFINITE else "event" if t_stop is not None else "success", done,
                      times, t_stop)
    if writer is not None and out.status != "failed":
        _write(writer, system, t0, h, done, q, v, dissipated, (ts, Q, V, D, counts, recs), rows, finished=True)
    return out


def _events(system, events, t, q, v):
    """The run's events split: the Python ones (:class:`_Events`, evaluated here on the chunks' states), the
    numba-compiled ones (``stepping_loop.CompiledEvents``, evaluated inside the compiled loop after every step;
    in a Python loop of steps, every event is a Python one) and ``which``: (indices of the compiled, of the Python
    ones) in ``events``."""
    events = list(events or ())
    compiled = [] if system.python_steps else [k for k, g in enumerate(events) if is_compiled_torque(g)]
    python = [k for k in range(len(events)) if k not in compiled]
    ev = _Events([events[k] for k in python], t, q, v) if python else None
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


def _end_at_event(hit, first, trace, nq, t0, h, save, rows, outputs):
    """The outputs up to the step ``hit`` of a terminal event (the chunk started at step ``first``), its state the
    last one. Returns the number of rows."""
    ts, Q, V, D, counts, recs = outputs
    kept = int(np.count_nonzero(save <= hit))
    rows = min(rows, kept)
    if rows == 0 or abs(ts[rows - 1] - (t0 + hit * h)) > 1e-9 * h:
        state = trace[hit - first - 1]
        ts[rows], Q[rows], V[rows], D[rows] = t0 + hit * h, state[:nq], state[nq:-1], state[-1]
        counts[rows] = 0   # (the contacts of the chunk's steps are not kept)
        rows += 1
    return rows


def _write(writer, system, t0, h, step, q, v, dissipated, outputs, rows, finished=False):
    ts, Q, V, D, counts, recs = outputs
    x = np.concatenate([q, v, [dissipated]])
    out_x = np.concatenate([Q[:rows], V[:rows], D[:rows, None]], axis=1)
    state = system.run_state()
    extra = {"counts": counts[:rows], "records": recs[:rows], **{f"state_{k}": a for k, a in state.items()}}
    writer.write(t0 + step * h, step, x, ts[:rows], out_x, None, {"steps": int(step)}, finished=finished,
                 extra=extra)


def _restored(system, ck, q, v, outputs):
    """The state, outputs and run state of the checkpoint ``ck`` put into q, v, the outputs and the system;
    returns (step, rows, dissipated). A ``ResultFileError`` names what does not fit."""
    nq, nv = q.shape[0], v.shape[0]
    ts, Q, V, D, counts, recs = outputs
    try:
        extra = ck.extra or {}
        x = np.asarray(ck.x, dtype=np.float64)
        if x.shape != (nq + nv + 1,):
            raise ValueError(f"x has {x.size} entries, the run's state has {nq + nv + 1}")
        rows = ck.out_t.shape[0]
        if rows > ts.shape[0] - 1:
            raise ValueError(f"{rows} outputs, the run has {ts.shape[0] - 1}")
        q[:], v[:] = x[:nq], x[nq:nq + nv]
        ts[:rows], Q[:rows], V[:rows], D[:rows] = ck.out_t, ck.out_x[:, :nq], ck.out_x[:, nq:nq + nv], ck.out_x[:, -1]
        counts[:rows] = extra["counts"]
        recs[:rows, :, :] = extra["records"]
        system.restore({k[len("state_"):]: a for k, a in extra.items() if k.startswith("state_")})
    except (KeyError, ValueError, IndexError, TypeError) as exc:
        raise ResultFileError(f"checkpoint '{ck.path}' does not fit its run: its stepping state ({type(exc).__name__}:"
                              f" {exc}) (edited or damaged?)", path=ck.path, element="checkpoint x") from None
    return int(ck.step), rows, float(x[-1])


def simulate_stepping(system, model, t0, t_end, method, h, t_eval, n_out, output_every, progress, events=None,
                      writer=None, every=None, restart=None, max_steps=None):
    """``simulate`` with the time-stepping model: its own semi-implicit Euler step of size ``h``
    (``contact/stepping_solver.py``), the services of the module docstring; ``restart``: a checkpoint that
    ``simulate`` has checked (``io.checkpoints.check_resumable``) to continue from."""
    if str(method).upper() not in ("DOP853", "STEPPING"):
        how = "contact='stepping'" if system.info.get("contact") == "stepping" else "the implicit compliant model"
        raise ModelError(f"{how} makes its own steps (semi-implicit Euler); method {method!r} does not apply: give h "
                         "only", element="method")
    t0, t_end = arg.time_span(t0, t_end)
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
        reason = (f"the state became non-finite (NaN or inf) at step {run.done + 1} "
                  f"(t = {t0 + (run.done + 1) * h_used:.17g})")
        info.update(status="failed", message=reason)
        raise IntegrationError(f"stepping integration of model '{model.name}' failed: {reason}",
                               result=system.make_result(run.t, run.Q, run.V, run.D, run.counts, run.recs, info),
                               reason=reason)
    message = "completed" if run.status == "success" else f"a terminal event occurred at t = {run.t_stop:.17g}"
    info.update(status=run.status, message=message)
    return system.make_result(run.t, run.Q, run.V, run.D, run.counts, run.recs, info)
