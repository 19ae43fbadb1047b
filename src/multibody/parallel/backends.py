"""Where the points of a sweep run: the code that runs on a worker, and the three backends.

:func:`run_chunk` evaluates the point function at a chunk of points on a worker and returns one row per point:
nothing the function does ends the sweep (any exception, also ``SystemExit`` and, on a worker,
``KeyboardInterrupt``, is that point's error message). With a timeout, the workers report each point's start:
into a ``multiprocessing`` queue (local processes) or as an event on a topic of the sweep (Dask).

A backend has ``submit(fn_bytes, names, points, stop_on_error, token) -> future``, ``wait(futures, timeout) ->
done futures``, ``started() -> [(token, point, worker)]`` (the starts reported since the last call),
``replace(future, worker)`` (stop a worker that runs a point for too long), ``restart()``, ``cancel(futures)``
and ``close(interrupted)``; :func:`backend_starter` checks the arguments of :func:`~multibody.parallel.sweep`
that choose one and returns the function that starts it.
"""
import collections
import math
import numbers
import os
import pickle
import sys
import time

import numpy as np

from multibody.errors import ModelError, SweepError, shown
from multibody.parallel.table import RESERVED

#: an error message longer than this is cut (a table row is not a log)
MAX_MESSAGE = 2000


class _BadOutput(Exception):
    pass


def _numbers(out, names):
    """The function's result as ``{key: float}`` (None -> NaN); anything else is an error of that point."""
    if not isinstance(out, collections.abc.Mapping):
        raise _BadOutput(f"the function returned {type(out).__name__}; expected a dict of numbers")
    row = {}
    for key, val in out.items():
        if not isinstance(key, str) or not key.strip() or not key.isprintable():
            raise _BadOutput(f"the function returned the key {key!r}; expected a dict whose keys are names (non-empty "
                             "printable strings)")
        if key in names or key in RESERVED:
            raise _BadOutput(f"the function returned key '{key}', which is a grid parameter or a column of the "
                             "table; expected other names")
        if val is None:
            row[key] = math.nan
            continue
        if isinstance(val, np.ndarray) and val.ndim == 0:
            val = val[()]
        if not isinstance(val, (numbers.Real, np.bool_)):
            raise _BadOutput(f"the function returned {key}={_short(val)} ({type(val).__name__}); expected a real "
                             "number or None")
        row[key] = float(val)
    return row


def _short(value, limit=80):
    """``repr(value)``, cut to ``limit`` characters (and never raising)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _message(exc):
    """The ``error`` cell of a point whose function raised ``exc``: ``"TypeName: message"``, cut to
    ``MAX_MESSAGE`` characters; ``SystemExit`` says that the function called ``sys.exit``."""
    if isinstance(exc, _BadOutput):
        text = str(exc)
    elif isinstance(exc, SystemExit):
        text = f"SystemExit: the function called sys.exit({_short(exc.code)})"
    else:
        try:
            detail = str(exc)
        except Exception:
            detail = "<its message cannot be shown>"
        if isinstance(exc, KeyboardInterrupt):
            detail = "raised by the function on a worker" + (f" ({detail})" if detail else "")
        text = f"{type(exc).__name__}: {detail}"
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE - 3] + "..."


def _limit_numba_threads():
    """One thread for numba's parallel regions on this thread; returns the function that restores it."""
    nb = sys.modules.get("numba")
    if nb is None:
        return lambda: None
    try:
        old = nb.get_num_threads()
        nb.set_num_threads(1)
    except Exception:   # numba without a threading layer: nothing to limit
        return lambda: None
    return lambda: nb.set_num_threads(old)


def _raisable(exc, message):
    """``exc`` as the parent can raise it: picklable both ways, and an ``Exception`` (a ``SystemExit`` or another
    ``BaseException`` of the function must not end the program that runs the sweep): else a ``SweepError``."""
    if not isinstance(exc, Exception):
        return SweepError(message)
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        return SweepError(message)


def run_chunk(fn_bytes, names, points, stop_on_error, worker, started=None):
    """Evaluate the function at ``points`` (a list of ``(index, values)``); runs on a worker.

    ``worker``: this is a worker process or thread (numba's parallel regions then run on one thread, and a
    ``KeyboardInterrupt`` is the function's own: the workers ignore Ctrl-C); in the process that runs the sweep
    (``scheduler="serial"``), a ``KeyboardInterrupt`` is Ctrl-C and stops the sweep. ``started(index)``, when
    given, is called as each point starts (the parent's clock for ``timeout``).

    Returns a dict: ``rows`` (``(index, outputs or None, error message or None)`` per point), ``seconds``
    (the work's duration), and, when ``stop_on_error`` and a point raised, ``raised`` (the exception) and
    ``raised_at`` (its index). When the function cannot be loaded here, only ``load_error``.
    """
    t0 = time.perf_counter()
    try:
        fn = pickle.loads(fn_bytes)
    except BaseException as exc:   # a module that calls sys.exit when imported, too
        if isinstance(exc, KeyboardInterrupt) and not worker:
            raise
        return {"load_error": _message(exc)}
    restore = _limit_numba_threads() if worker else (lambda: None)
    rows = []
    try:
        for i, vals in points:
            if started is not None:
                started(i)
            try:
                rows.append((i, _numbers(fn(**dict(zip(names, vals))), names), None))
            except BaseException as exc:   # SystemExit too: a point never ends the sweep
                if isinstance(exc, KeyboardInterrupt) and not worker:
                    raise
                msg = _message(exc)
                rows.append((i, None, msg))
                if stop_on_error:
                    return {"rows": rows, "seconds": time.perf_counter() - t0, "raised": _raisable(exc, msg),
                            "raised_at": i}
    finally:
        restore()
    return {"rows": rows, "seconds": time.perf_counter() - t0}


#: on a local worker process: the queue its points' starts are reported into (set by ``_worker_init``)
_STARTS = None


def _worker_init(starts):
    """Local worker initializer: Ctrl-C stops the sweep in the parent, which then stops the workers; point starts
    go to ``starts`` (a ``multiprocessing`` queue)."""
    import signal

    global _STARTS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _STARTS = starts


class _QueueStarts:
    """``started(i)`` on a local worker: puts ``(token, i, pid)`` into the worker's queue."""

    def __init__(self, token):
        self.token = token

    def __call__(self, i):
        _STARTS.put((self.token, i, os.getpid()))


class _EventStarts:
    """``started(i)`` on a Dask worker: an event ``(token, i, worker address)`` on the sweep's topic."""

    def __init__(self, topic, token):
        self.topic, self.token = topic, token

    def __call__(self, i):
        from distributed import get_worker

        w = get_worker()
        w.log_event(self.topic, (self.token, i, w.address))


# ----------------------------------------------------------------------------------------------------
# Backends: submit(chunk) -> future, wait(futures) -> done futures; with a timeout, started() -> the point starts
# reported since the last call, replace(future, worker) -> stop a worker that runs a point for too long
# ----------------------------------------------------------------------------------------------------

class SerialBackend:
    """This process, one chunk at a time (the future is complete when ``submit`` returns)."""

    workers = 1
    worker = False
    lost = ()
    lost_hint = ""
    pool_breaks = False
    per_worker = 1     # a chunk is computed when submitted: one at a time, so an interruption loses none

    def submit(self, fn_bytes, names, points, stop_on_error, token):
        from concurrent.futures import Future

        fut = Future()
        fut.set_result(run_chunk(fn_bytes, names, points, stop_on_error, False))
        return fut

    def wait(self, futures, timeout=None):
        return list(futures)

    def restart(self):
        pass

    def cancel(self, futures):
        pass

    def close(self, interrupted=False):
        pass


class ProcessBackend:
    """Local worker processes (``ProcessPoolExecutor``, ``spawn``). With ``timed``, the workers report each point's
    start into a queue (a new one with every pool: a killed worker may leave a queue unusable)."""

    worker = True
    per_worker = 2     # chunks in flight per worker: the next one is queued while one runs
    pool_breaks = True  # a lost process breaks the whole pool: every chunk in flight is lost with it
    lost_hint = (" (a script that calls sweep must do so under `if __name__ == '__main__':`, since the workers "
                 "import it)")

    def __init__(self, workers, timed):
        from concurrent.futures.process import BrokenProcessPool

        self.workers, self.timed = workers, timed
        self.lost = (BrokenProcessPool,)
        self._start()

    def _start(self):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("spawn")
        self.starts = ctx.Queue() if self.timed else None
        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=_worker_init,
                                        initargs=(self.starts,))

    def submit(self, fn_bytes, names, points, stop_on_error, token):
        started = _QueueStarts(token) if self.timed else None
        return self.pool.submit(run_chunk, fn_bytes, names, points, stop_on_error, True, started)

    def wait(self, futures, timeout=None):
        from concurrent.futures import FIRST_COMPLETED, wait

        return wait(futures, timeout=timeout, return_when=FIRST_COMPLETED).done

    def started(self):
        import queue

        out = []
        while True:
            try:
                out.append(self.starts.get_nowait())
            except queue.Empty:
                return out

    def replace(self, future, pid):
        """Kill the worker process ``pid``; this breaks the pool, which the caller restarts (returns True)."""
        proc = (getattr(self.pool, "_processes", None) or {}).get(pid)
        if proc is not None:
            proc.kill()
        return True

    def restart(self):
        self.close(interrupted=True)
        self._start()

    def cancel(self, futures):
        for fut in futures:
            fut.cancel()

    def close(self, interrupted=False):
        if interrupted:   # stop the running points now instead of waiting for their chunks
            for proc in list((getattr(self.pool, "_processes", None) or {}).values()):
                try:
                    proc.kill()
                except Exception:
                    pass
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.starts is not None:
            self.starts.close()
            self.starts.cancel_join_thread()


class DaskBackend:
    """A Dask distributed cluster, through a ``distributed.Client`` (closed at the end when created here). With
    ``timed``, the workers report each point's start as an event on a topic of this sweep."""

    worker = True
    per_worker = 2
    pool_breaks = False
    lost_hint = ""

    def __init__(self, client, own, timed):
        import uuid

        import distributed

        self.client, self.own = client, own
        self.lost = (distributed.KilledWorker,)
        self._wait = distributed.wait
        self._workers, self._asked = 1, -math.inf
        self.topic = f"multibody-sweep-{uuid.uuid4().hex}" if timed else None
        self._events = collections.deque()
        self._warned = False
        if timed:
            client.subscribe_topic(self.topic, self._events.append)

    @property
    def workers(self):
        """Threads of the cluster's workers (asked again every 2 s: workers may join or leave during a sweep)."""
        if time.monotonic() - self._asked > 2.0 and self.client.status == "running":
            self._asked = time.monotonic()
            self._workers = max(1, sum(self.client.nthreads().values()))
        return self._workers

    def submit(self, fn_bytes, names, points, stop_on_error, token):
        started = _EventStarts(self.topic, token) if self.topic else None
        return self.client.submit(run_chunk, fn_bytes, names, points, stop_on_error, True, started, pure=False)

    def wait(self, futures, timeout=None):
        try:
            return self._wait(futures, timeout=timeout, return_when="FIRST_COMPLETED").done
        except TimeoutError:
            return []

    def started(self):
        out = []
        while self._events:
            _, msg = self._events.popleft()
            out.append(tuple(msg))
        return out

    def replace(self, future, address):
        """Cancel ``future`` and have the nanny of the worker at ``address`` restart it (without waiting for it to
        come back: it returns under a new address). Returns False: the other tasks go on, the scheduler moves
        those of that worker. A worker without a nanny (e.g. a ``LocalCluster(processes=False)``) cannot be
        restarted: its thread stays busy, with a message."""
        self.client.cancel([future])
        try:
            try:
                identity = self.client.sync(self.client.scheduler.identity, n_workers=-1)
            except TypeError:     # distributed before n_workers: every worker is listed anyway
                identity = self.client.sync(self.client.scheduler.identity)
            info = identity["workers"].get(address, {})
            if info.get("nanny") is None:
                status = "it has no nanny"
            else:
                status = self.client.sync(self.client.scheduler.restart_workers, workers=[address], timeout=30,
                                          wait_for_workers=False, on_error="return",
                                          stimulus_id=f"multibody-sweep-timeout-{time.time()}").get(address, "OK")
        except Exception as exc:
            status = f"{type(exc).__name__}: {exc}"
        if status != "OK" and not self._warned:
            self._warned = True
            print(f"sweep: the Dask worker {address} could not be replaced ({status}): the thread running the "
                  "timed-out point stays busy", file=sys.stderr)
        return False

    def restart(self):
        pass

    def cancel(self, futures):
        self.client.cancel(futures)

    def close(self, interrupted=False):
        if self.topic is not None and self.client.status == "running":
            self.client.unsubscribe_topic(self.topic)
        if self.own:
            self.client.close()


def backend_starter(scheduler, workers, timeout):
    """Check the scheduler arguments; returns ``start(points)``, which starts the backend for that many points."""
    timed = timeout is not None
    if scheduler is None or (isinstance(scheduler, str) and scheduler == "processes"):
        if workers is not None and not (isinstance(workers, numbers.Integral) and workers >= 1):
            raise ModelError(f"sweep: workers must be a positive integer, got {shown(workers)!r}", element="workers")

        def start(points):   # never more processes than points
            n = workers
            if n is None:
                n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            return ProcessBackend(int(min(n, points)), timed)
        return start
    if isinstance(scheduler, str) and scheduler == "serial":
        if timed:
            raise ModelError("sweep: timeout needs worker processes, which can be stopped and replaced; "
                             "scheduler='serial' runs the points in this process (use local processes or Dask)",
                             element="timeout")
        return lambda points: SerialBackend()
    if workers is not None:
        raise ModelError("sweep: workers sets the number of local processes; a Dask cluster has its own workers "
                         f"(got scheduler={scheduler!r})", element="workers")
    try:
        import distributed
    except ImportError:
        raise ModelError(f"sweep: scheduler={scheduler!r} needs dask.distributed; install it with "
                         "`pip install multibody[distributed]`", element="scheduler") from None
    if isinstance(scheduler, distributed.Client):
        return lambda points: DaskBackend(scheduler, own=False, timed=timed)
    if isinstance(scheduler, str):
        if "://" not in scheduler and scheduler.count(":") != 1:
            raise ModelError(f"sweep: scheduler {scheduler!r} is not an address; expected None or 'processes' "
                             "(local processes), 'serial' (this process), a Dask scheduler address such as "
                             "'tcp://host:8786', or a distributed.Client", element="scheduler")

        def connect(points):
            try:
                client = distributed.Client(scheduler, timeout="20s")
            except (OSError, TimeoutError) as exc:
                raise SweepError(f"sweep: cannot connect to the Dask scheduler at {scheduler!r}: {exc}") from None
            return DaskBackend(client, own=True, timed=timed)
        return connect
    if hasattr(scheduler, "scheduler_address"):   # a cluster object (LocalCluster, ...)
        return lambda points: DaskBackend(distributed.Client(scheduler), own=True, timed=timed)
    raise ModelError(f"sweep: scheduler must be None, 'processes', 'serial', a Dask scheduler address or a "
                     f"distributed.Client, got {type(scheduler).__name__}", element="scheduler")
