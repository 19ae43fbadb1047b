"""``sweep``: one function evaluated over the Cartesian product of a parameter grid, in parallel, into one table.

The points run in chunks on one of three backends:

* local worker processes (the default): a ``concurrent.futures.ProcessPoolExecutor`` with the ``spawn``
  start method, one process per CPU. It needs nothing beyond the standard library (Dask is an optional
  extra), has no scheduler, ports or dashboard to start, and a fresh interpreter per worker is safe with
  numba's threads (``fork`` after numba started its thread pool is not). A worker that dies (killed, out of
  memory) breaks the pool: the pool is started again and the chunks that were running are sent again.
* an existing Dask distributed cluster: ``scheduler="tcp://host:port"`` (any address ``distributed.Client``
  accepts), a ``distributed.Client`` or a cluster object (e.g. ``LocalCluster``). The scheduler reassigns the
  tasks of a lost worker; a chunk is accepted once, when its future completes.
* ``scheduler="serial"``: this process, one point after the other (debugging, and the one-process baseline).

Chunks adapt to the cost of a point: the first ones hold one point; afterwards each chunk holds about
``TARGET_CHUNK_SECONDS`` of work, as measured on the workers (so the per-task overhead of about a
millisecond never dominates a cheap function), but at most a quarter of the remaining points per worker (so
the work stays balanced to the end). Inside a worker, numba's parallel regions run on one thread per point
(the sweep is parallel over points; the setting is per thread and restored after the chunk).

Finished points stream into the table ``out`` (:mod:`multibody.parallel.table`): an interrupted sweep keeps
them, and ``resume=True`` computes only the points that are not in it. Points are identified by their flat
index in the grid (the ``point`` column) and checked against their grid values on resume.
"""
import collections
import math
import numbers
import os
import pickle
import sys
import time

import numpy as np

from multibody.errors import ModelError, SweepError

#: seconds of work per chunk, once the cost of a point is known
TARGET_CHUNK_SECONDS = 0.25
#: times a chunk is sent again after its worker was lost, before the sweep gives up
RETRIES = 3
#: columns the table adds to the grid's and the function's
RESERVED = ("point", "error")


# ----------------------------------------------------------------------------------------------------
# The grid
# ----------------------------------------------------------------------------------------------------

class Grid:
    """The Cartesian product of named value sequences; the last name varies fastest (``itertools.product``).

    Point ``i`` (0 <= i < ``size``) has the values ``[values[k][j_k]]`` with ``(j_0, j_1, ...) =
    numpy.unravel_index(i, shape)``. A scalar (a number or a string) is a fixed parameter: a one-value sequence.
    """

    def __init__(self, grid):
        if not isinstance(grid, collections.abc.Mapping) or not grid:
            raise ModelError(f"sweep: grid must be a non-empty mapping of parameter names to sequences of values, "
                             f"got {type(grid).__name__}", element="grid")
        names, values = [], []
        for name, seq in grid.items():
            if not isinstance(name, str) or not name.isidentifier():
                raise ModelError(f"sweep: grid parameter name {name!r} must be a Python identifier (it is passed "
                                 "as a keyword argument)", element=f"grid parameter {name!r}")
            if name in RESERVED:
                raise ModelError(f"sweep: grid parameter '{name}' clashes with the table's own column '{name}'; "
                                 f"expected a name other than {', '.join(RESERVED)}",
                                 element=f"grid parameter '{name}'")
            if isinstance(seq, (str, bytes, numbers.Number)):
                seq = [seq]
            try:
                arr = np.asarray(list(seq))
            except TypeError:
                raise ModelError(f"sweep: grid parameter '{name}' must be a sequence of values or a scalar, got "
                                 f"{type(seq).__name__}", element=f"grid parameter '{name}'") from None
            if arr.ndim != 1 or arr.size == 0 or arr.dtype == object:
                raise ModelError(f"sweep: grid parameter '{name}' must be a non-empty 1-D sequence of numbers or "
                                 f"strings, got shape {arr.shape} of {arr.dtype}", element=f"grid parameter '{name}'")
            if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                raise ModelError(f"sweep: grid parameter '{name}' holds non-finite values; expected finite numbers",
                                 element=f"grid parameter '{name}'")
            names.append(name)
            values.append(arr)
        self.names = tuple(names)
        self.values = tuple(values)
        self.shape = tuple(v.size for v in values)
        self.size = math.prod(self.shape)
        self._lists = [v.tolist() for v in values]     # Python scalars, handed to the function

    def __len__(self):
        return self.size

    def point(self, i):
        """The values of point ``i`` as a tuple of Python scalars (in the order of ``names``)."""
        idx = np.unravel_index(i, self.shape)
        return tuple(lst[j] for lst, j in zip(self._lists, idx))

    def columns(self, points):
        """``{name: array of the values at points}`` for an integer array of point indices."""
        idx = np.unravel_index(np.asarray(points, dtype=np.int64), self.shape)
        return {name: vals[j] for name, vals, j in zip(self.names, self.values, idx)}


# ----------------------------------------------------------------------------------------------------
# What runs on a worker
# ----------------------------------------------------------------------------------------------------

class _BadOutput(Exception):
    pass


def _numbers(out, names):
    """The function's result as ``{key: float}`` (None -> NaN); anything else is an error of that point."""
    if not isinstance(out, collections.abc.Mapping):
        raise _BadOutput(f"the function returned {type(out).__name__}; expected a dict of numbers")
    row = {}
    for key, val in out.items():
        if not isinstance(key, str):
            raise _BadOutput(f"the function returned a non-string key {key!r}; expected a dict of named numbers")
        if key in names or key in RESERVED:
            raise _BadOutput(f"the function returned key '{key}', which is a grid parameter or a column of the "
                             "table; expected other names")
        if val is None:
            row[key] = math.nan
            continue
        if isinstance(val, np.ndarray) and val.ndim == 0:
            val = val[()]
        if not isinstance(val, (numbers.Real, np.bool_)):
            raise _BadOutput(f"the function returned {key}={val!r} ({type(val).__name__}); expected a real number "
                             "or None")
        row[key] = float(val)
    return row


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


def _picklable(exc):
    try:
        pickle.dumps(exc)
        return exc
    except Exception:
        return SweepError(f"{type(exc).__name__}: {exc}")


def _run_chunk(fn_bytes, names, points, stop_on_error, one_thread):
    """Evaluate the function at ``points`` (a list of ``(index, values)``); runs on a worker.

    Returns a dict: ``rows`` (``(index, outputs or None, error message or None)`` per point), ``seconds``
    (the work's duration), and, when ``stop_on_error`` and a point raised, ``raised`` (the exception) and
    ``raised_at`` (its index). When the function cannot be loaded here, only ``load_error``.
    """
    t0 = time.perf_counter()
    try:
        fn = pickle.loads(fn_bytes)
    except Exception as exc:
        return {"load_error": f"{type(exc).__name__}: {exc}"}
    restore = _limit_numba_threads() if one_thread else (lambda: None)
    rows = []
    try:
        for i, vals in points:
            try:
                rows.append((i, _numbers(fn(**dict(zip(names, vals))), names), None))
            except Exception as exc:
                msg = str(exc) if isinstance(exc, _BadOutput) else f"{type(exc).__name__}: {exc}"
                rows.append((i, None, msg))
                if stop_on_error:
                    return {"rows": rows, "seconds": time.perf_counter() - t0, "raised": _picklable(exc),
                            "raised_at": i}
    finally:
        restore()
    return {"rows": rows, "seconds": time.perf_counter() - t0}


def _ignore_sigint():
    """Worker initializer: Ctrl-C stops the sweep in the parent, which then stops the workers."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


# ----------------------------------------------------------------------------------------------------
# Backends: submit(chunk) -> future, wait(futures) -> done futures
# ----------------------------------------------------------------------------------------------------

class _SerialBackend:
    """This process, one chunk at a time (the future is complete when ``submit`` returns)."""

    workers = 1
    one_thread = False
    lost = ()
    per_worker = 1     # a chunk is computed when submitted: one at a time, so an interruption loses none

    def submit(self, *args):
        from concurrent.futures import Future

        fut = Future()
        fut.set_result(_run_chunk(*args))
        return fut

    def wait(self, futures):
        return list(futures)

    def restart(self):
        pass

    def cancel(self, futures):
        pass

    def close(self, interrupted=False):
        pass


class _ProcessBackend:
    """Local worker processes (``ProcessPoolExecutor``, ``spawn``)."""

    one_thread = True
    per_worker = 2     # chunks in flight per worker: the next one is queued while one runs

    def __init__(self, workers):
        from concurrent.futures.process import BrokenProcessPool

        self.workers = workers
        self.lost = (BrokenProcessPool,)
        self._start()

    def _start(self):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"),
                                        initializer=_ignore_sigint)

    def submit(self, *args):
        return self.pool.submit(_run_chunk, *args)

    def wait(self, futures):
        from concurrent.futures import FIRST_COMPLETED, wait

        return wait(futures, return_when=FIRST_COMPLETED).done

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


class _DaskBackend:
    """A Dask distributed cluster, through a ``distributed.Client`` (closed at the end when created here)."""

    one_thread = True
    per_worker = 2

    def __init__(self, client, own):
        import distributed

        self.client, self.own = client, own
        self.lost = (distributed.KilledWorker,)
        self._wait = distributed.wait
        self._workers, self._asked = 1, -math.inf

    @property
    def workers(self):
        """Threads of the cluster's workers (asked again every 2 s: workers may join or leave during a sweep)."""
        if time.monotonic() - self._asked > 2.0 and self.client.status == "running":
            self._asked = time.monotonic()
            self._workers = max(1, sum(self.client.nthreads().values()))
        return self._workers

    def submit(self, *args):
        return self.client.submit(_run_chunk, *args, pure=False)

    def wait(self, futures):
        return self._wait(futures, return_when="FIRST_COMPLETED").done

    def restart(self):
        pass

    def cancel(self, futures):
        self.client.cancel(futures)

    def close(self, interrupted=False):
        if self.own:
            self.client.close()


def _backend(scheduler, workers, points):
    if scheduler is None or (isinstance(scheduler, str) and scheduler == "processes"):
        if workers is None:
            workers = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            workers = min(workers, points)
        if not (isinstance(workers, numbers.Integral) and workers >= 1):
            raise ModelError(f"sweep: workers must be a positive integer, got {workers!r}", element="workers")
        return _ProcessBackend(int(workers))
    if isinstance(scheduler, str) and scheduler == "serial":
        return _SerialBackend()
    if workers is not None:
        raise ModelError("sweep: workers sets the number of local processes; a Dask cluster has its own workers "
                         f"(got scheduler={scheduler!r})", element="workers")
    try:
        import distributed
    except ImportError:
        raise ModelError(f"sweep: scheduler={scheduler!r} needs dask.distributed; install it with "
                         "`pip install multibody[distributed]`", element="scheduler") from None
    if isinstance(scheduler, distributed.Client):
        return _DaskBackend(scheduler, own=False)
    if isinstance(scheduler, str):
        if "://" not in scheduler and scheduler.count(":") != 1:
            raise ModelError(f"sweep: scheduler {scheduler!r} is not an address; expected None or 'processes' "
                             "(local processes), 'serial' (this process), a Dask scheduler address such as "
                             "'tcp://host:8786', or a distributed.Client", element="scheduler")
        try:
            client = distributed.Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise SweepError(f"sweep: cannot connect to the Dask scheduler at {scheduler!r}: {exc}") from None
        return _DaskBackend(client, own=True)
    if hasattr(scheduler, "scheduler_address"):   # a cluster object (LocalCluster, ...)
        return _DaskBackend(distributed.Client(scheduler), own=True)
    raise ModelError(f"sweep: scheduler must be None, 'processes', 'serial', a Dask scheduler address or a "
                     f"distributed.Client, got {type(scheduler).__name__}", element="scheduler")


# ----------------------------------------------------------------------------------------------------
# sweep
# ----------------------------------------------------------------------------------------------------

def _function_bytes(fn):
    if not callable(fn):
        raise ModelError(f"sweep: fn must be a callable, got {type(fn).__name__}", element="fn")
    name = getattr(fn, "__qualname__", None) or repr(fn)
    try:
        return pickle.dumps(fn)
    except Exception as exc:
        raise ModelError(f"sweep: the function {name!r} cannot be sent to worker processes ({type(exc).__name__}: "
                         f"{exc}); expected a function defined at module level in an importable module (not a "
                         "lambda, a nested function or a local class)", element="fn") from None


def sweep(fn, grid, *, scheduler=None, out=None, resume=False, on_error="record", workers=None, chunk_size=None,
          progress=True):
    """Evaluate ``fn(**point)`` at every point of the Cartesian product of ``grid``; one table row per point.

    Parameters
    ----------
    fn : callable
        ``fn(**point) -> dict`` of numbers (``None`` is stored as NaN). It is sent to worker processes by
        pickling, so it must be a module-level function of an importable module (``functools.partial`` of
        one also works); otherwise :class:`~multibody.errors.ModelError`.
    grid : mapping
        Parameter name -> sequence of values (numbers or strings); a scalar is a fixed parameter. The
        product is swept with the last name varying fastest; point ``i`` is the ``i``-th of
        ``itertools.product(*grid.values())``.
    scheduler : None, str or distributed.Client
        ``None`` or ``"processes"``: local worker processes (``workers`` of them, default one per CPU);
        ``"serial"``: this process; ``"tcp://host:port"`` (any Dask scheduler address), a
        ``distributed.Client`` or a Dask cluster object: that cluster's workers.
    out : str or path, optional
        The table the points stream into while they finish: ``.parquet`` (pyarrow) or ``.csv``. An existing
        file is replaced unless ``resume``. See :mod:`multibody.parallel.table`.
    resume : bool
        Keep the points already in ``out`` (checked against the grid) and compute only the others.
    on_error : ``"record"`` or ``"raise"``
        ``"record"``: a point whose function raises gets its message (``"ValueError: ..."``) in the
        ``error`` column and NaN outputs, and the sweep goes on. ``"raise"``: the first such exception is
        raised (with a note naming the point) after the points that finished are written.
    workers : int, optional
        Number of local processes (``scheduler=None`` only).
    chunk_size : int, optional
        Points per task; default adaptive (about ``TARGET_CHUNK_SECONDS`` of work per task).
    progress : bool
        Show a tqdm progress bar (on stderr).

    Returns
    -------
    pandas.DataFrame
        One row per grid point (with ``resume``, also those of the earlier runs), indexed by ``point`` and
        sorted by it; the grid columns first, then the function's outputs, then ``error`` (None where
        the point succeeded). ``attrs`` holds ``computed`` (points computed by this call), ``seconds``
        (its duration) and ``workers``.

    Raises ``KeyboardInterrupt`` when interrupted (the finished points are in ``out``), ``SweepError`` when
    a chunk lost its worker more than ``RETRIES`` times or the cluster cannot be reached.

    Example
    -------
    >>> import multibody as mb
    >>> from multibody.parallel.studies import bicycle_stability
    >>> df = mb.sweep(bicycle_stability, {"c": [0.04, 0.08], "lam": [0.314159]}, scheduler="serial",
    ...               progress=False)
    >>> list(df.columns)
    ['c', 'lam', 'v_w', 'v_c', 'stable', 'error']
    """
    from multibody.parallel.table import open_table

    if on_error not in ("record", "raise"):
        raise ModelError(f"sweep: on_error must be 'record' or 'raise', got {on_error!r}", element="on_error")
    if chunk_size is not None and not (isinstance(chunk_size, numbers.Integral) and chunk_size >= 1):
        raise ModelError(f"sweep: chunk_size must be a positive integer, got {chunk_size!r}", element="chunk_size")
    if resume and out is None:
        raise ModelError("sweep: resume=True needs the table of the interrupted sweep (out=...)", element="resume")
    g = Grid(grid)
    fn_bytes = _function_bytes(fn)
    table = open_table(out, g, resume)          # validates out; reads what a resumed sweep already has
    todo = np.setdiff1d(np.arange(g.size, dtype=np.int64), table.done, assume_unique=True)
    backend = None
    bar = None
    interrupted = True
    t0 = time.perf_counter()
    try:
        backend = _backend(scheduler, workers, todo.size) if todo.size else None
        if backend is not None:
            bar = _progress_bar(progress, g.size, g.size - todo.size)
            _drive(backend, fn_bytes, g, todo, table, bar, on_error == "raise", chunk_size)
        interrupted = False
    finally:
        if bar is not None:
            bar.close()
        nworkers = 0
        if backend is not None:
            nworkers = backend.workers
            backend.close(interrupted=interrupted)
        result = table.close()
    result.attrs.update(computed=table.computed, seconds=time.perf_counter() - t0, workers=nworkers)
    return result


def _progress_bar(progress, total, initial):
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, unit="pt", desc="sweep", disable=not progress, mininterval=0.5,
                smoothing=0.1, file=sys.stderr)


class _Chunker:
    """Cuts the points to compute into chunks: one point while the cost of a point is unknown, then about
    ``TARGET_CHUNK_SECONDS`` of work, at most a quarter of the remaining points per worker; chunks that lost
    their worker come first."""

    def __init__(self, grid, todo, chunk_size):
        self.grid, self.todo, self.chunk_size = grid, todo, chunk_size
        self.cursor = 0
        self.retry = collections.deque()   # (points, attempts) sent again after their worker was lost
        self.per_point = None              # seconds per point, as measured on the workers

    def pending(self):
        return self.cursor < self.todo.size or bool(self.retry)

    def observe(self, seconds, n):
        if n:
            t = seconds / n
            self.per_point = t if self.per_point is None else 0.5 * (self.per_point + t)

    def next(self, workers):
        if self.retry:
            return self.retry.popleft()
        left = self.todo.size - self.cursor
        if self.chunk_size is not None:
            k = self.chunk_size
        elif self.per_point is None:
            k = 1
        else:
            k = int(TARGET_CHUNK_SECONDS / max(self.per_point, 1e-9))
            k = max(1, min(k, -(-left // (4 * workers))))
        idx = self.todo[self.cursor:self.cursor + k]
        self.cursor += idx.size
        return [(int(i), self.grid.point(int(i))) for i in idx], 0


def _drive(backend, fn_bytes, grid, todo, table, bar, stop_on_error, chunk_size):
    """Keep two chunks per worker in flight until every point of ``todo`` is in ``table``."""
    names = grid.names
    chunks = _Chunker(grid, todo, chunk_size)
    in_flight = {}                         # future -> (points, attempts)
    try:
        while chunks.pending() or in_flight:
            workers = backend.workers
            while chunks.pending() and len(in_flight) < backend.per_worker * workers:
                points, attempts = chunks.next(workers)
                in_flight[backend.submit(fn_bytes, names, points, stop_on_error, backend.one_thread)] = \
                    (points, attempts)
            broken = False
            for fut in backend.wait(list(in_flight)):
                points, attempts = in_flight.pop(fut)
                try:
                    res = fut.result()
                except backend.lost as exc:
                    if attempts >= RETRIES:
                        raise SweepError(f"sweep: points {points[0][0]}..{points[-1][0]} lost their worker "
                                         f"{attempts + 1} times ({type(exc).__name__}: {exc}); the finished points "
                                         "are kept, run again with resume=True" + _hint(backend)) from None
                    chunks.retry.append((points, attempts + 1))
                    broken = True
                    continue
                if "load_error" in res:
                    raise ModelError(f"sweep: the function cannot be loaded on a worker ({res['load_error']}); "
                                     "expected a module-level function of a module the workers can import",
                                     element="fn")
                rows = res["rows"]
                table.add(rows)
                bar.update(len(rows))
                chunks.observe(res["seconds"], len(rows))
                if "raised" in res:
                    exc = res["raised"]
                    values = dict(zip(names, grid.point(res["raised_at"])))
                    if hasattr(exc, "add_note"):   # Python >= 3.11
                        exc.add_note(f"at sweep point {res['raised_at']}: " +
                                     ", ".join(f"{k}={v!r}" for k, v in values.items()))
                    raise exc
            if broken and isinstance(backend, _ProcessBackend):
                # a lost local process breaks the whole pool: every chunk still in flight is lost with it
                for points, attempts in in_flight.values():
                    chunks.retry.append((points, attempts))
                in_flight.clear()
                backend.restart()
            table.maybe_flush()
    finally:
        if in_flight:   # interrupted or raised: the chunks still out are not wanted any more
            backend.cancel(list(in_flight))


def _hint(backend):
    if isinstance(backend, _ProcessBackend):
        return (" (a script that calls sweep must do so under `if __name__ == '__main__':`, since the workers "
                "import it)")
    return ""
