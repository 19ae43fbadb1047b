"""``sweep``: one function evaluated over the Cartesian product of a parameter grid, in parallel, into one table.

The points run in chunks on one of three backends (:mod:`multibody.parallel.backends`):

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

Nothing a point function does ends the sweep silently: any exception it raises, also ``SystemExit`` (a
``sys.exit`` call) and, on a worker, ``KeyboardInterrupt``, becomes that point's ``error``. With ``timeout``,
the workers report when each point starts; a point that runs longer is recorded with the error ``"timeout
after N s"`` and its worker is replaced (killed and started again), since a running Python function cannot
be stopped from outside its process.
"""
import collections
import inspect
import itertools
import math
import numbers
import pickle
import sys
import time

import numpy as np

from multibody.errors import ModelError, SweepError, shown
from multibody.parallel.backends import backend_starter
from multibody.parallel.table import RESERVED

#: seconds of work per chunk, once the cost of a point is known
TARGET_CHUNK_SECONDS = 0.25
#: times a chunk is sent again after its worker was lost, before the sweep gives up
RETRIES = 3
#: the largest grid one sweep takes (its point indices alone are 8 bytes each)
MAX_POINTS = 10**8


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
            where = f"grid parameter '{name}'"
            if isinstance(seq, (str, bytes, numbers.Number)):
                seq = [seq]
            if hasattr(seq, "__len__") and not isinstance(seq, np.ndarray) and len(seq) > MAX_POINTS:
                raise ModelError(f"sweep: {where} has {len(seq)} values; at most {MAX_POINTS} points fit in one "
                                 "sweep", element=where)
            try:
                items = seq if isinstance(seq, np.ndarray) else list(seq)
            except TypeError:
                raise ModelError(f"sweep: {where} must be a sequence of values or a scalar, got "
                                 f"{type(seq).__name__}", element=where) from None
            words = [isinstance(v, str) for v in items] if not isinstance(seq, np.ndarray) else [True]
            if any(words) and not all(words):
                raise ModelError(f"sweep: {where} mixes numbers and strings; expected numbers only or strings only",
                                 element=where)
            try:
                arr = np.asarray(items)
            except (TypeError, ValueError, OverflowError):
                arr = np.asarray(None, dtype=object)
            if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "biufU":
                raise ModelError(f"sweep: {where} must be a non-empty 1-D sequence of real numbers or strings, got "
                                 f"{_describe(items, arr)}", element=where)
            if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                raise ModelError(f"sweep: {where} holds non-finite values; expected finite numbers", element=where)
            if arr.dtype.kind == "U" and not all(v.strip() and v.isprintable() for v in items):
                raise ModelError(f"sweep: {where} holds an empty or unprintable string; expected words (a table "
                                 "cell cannot tell an empty string from a missing value)", element=where)
            names.append(name)
            values.append(arr)
        self.names = tuple(names)
        self.values = tuple(values)
        self.shape = tuple(v.size for v in values)
        self.size = math.prod(self.shape)
        if self.size > MAX_POINTS:
            raise ModelError(f"sweep: the grid has {' x '.join(map(str, self.shape))} = {self.size} points; at most "
                             f"{MAX_POINTS} fit in one sweep (split it into several)", element="grid")
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


def _describe(items, arr):
    """What a refused grid sequence holds, for the message."""
    if arr.ndim == 1 and arr.size:
        kinds = sorted({type(v).__name__ for v in items})
        return f"values of type {', '.join(kinds)}"
    return f"shape {arr.shape}" if arr.ndim != 1 else "no values"


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
          timeout=None, progress=True):
    """Evaluate ``fn(**point)`` at every point of the Cartesian product of ``grid``; one table row per point.

    Parameters
    ----------
    fn : callable
        ``fn(**point) -> dict`` of numbers (``None`` is stored as NaN). It is sent to worker processes by
        pickling, so it must be a module-level function of an importable module (``functools.partial`` of
        one also works); otherwise :class:`~multibody.errors.ModelError`. A function whose signature cannot
        take the grid's names as keyword arguments is refused before anything runs.
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
        file is replaced (once the first points finish) unless ``resume``. The table is locked while the sweep
        runs (``<out>.lock``): a second sweep into it raises ``SweepError``. See
        :mod:`multibody.parallel.table`.
    resume : bool
        Keep the points already in ``out`` (checked against the grid) and compute only the others.
    on_error : ``"record"`` or ``"raise"``
        ``"record"``: a point whose function raises gets its message (``"ValueError: ..."``) in the
        ``error`` column and NaN outputs, and the sweep goes on. ``"raise"``: the first such exception is
        raised (with a note naming the point) after the points that finished are written.
    workers : int, optional
        Number of local processes (``scheduler=None`` only; default one per CPU, never more than the points).
    chunk_size : int, optional
        Points per task; default adaptive (about ``TARGET_CHUNK_SECONDS`` of work per task).
    timeout : float, optional
        Seconds a point may run on its worker (counted from the point's start, so the workers' start-up is
        not included, a first call's compilation is). A point that runs longer gets the error ``"timeout
        after N s"`` and its worker is replaced: killed, with local processes (the pool restarts and the other
        running chunks are sent again), or restarted through its nanny on Dask. Not with
        ``scheduler="serial"``.
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
    a chunk lost its worker more than ``RETRIES`` times, the cluster cannot be reached or another sweep writes
    ``out``. A point's ``SystemExit`` (or any other exception) never ends the sweep: it is that point's
    ``error`` (with ``on_error="raise"``, a ``SweepError`` naming the point).

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
    if timeout is not None and not (isinstance(timeout, numbers.Real) and math.isfinite(timeout) and timeout > 0):
        raise ModelError(f"sweep: timeout must be a positive number of seconds, got {shown(timeout)!r}", element="timeout")
    g = Grid(grid)
    fn_bytes = _function_bytes(fn)
    _check_signature(fn, g)
    start = backend_starter(scheduler, workers, timeout)   # checks the arguments; starts nothing yet
    table = open_table(out, g, resume)          # validates and locks out; reads what a resumed sweep already has
    backend = None
    bar = None
    interrupted = True
    t0 = time.perf_counter()
    try:
        todo = np.setdiff1d(np.arange(g.size, dtype=np.int64), table.done, assume_unique=True)
        backend = start(todo.size) if todo.size else None
        if backend is not None:
            bar = _progress_bar(progress, g.size, g.size - todo.size)
            _drive(backend, fn_bytes, g, todo, table, bar, on_error == "raise", chunk_size, timeout)
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


def _check_signature(fn, grid):
    """Refuse a function that cannot take the grid's names as keyword arguments (when its signature is known)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(**dict(zip(grid.names, grid.point(0))))
    except TypeError as exc:
        name = getattr(fn, "__qualname__", None) or repr(fn)
        raise ModelError(f"sweep: the function {name}{sig} cannot take the grid's parameters "
                         f"{', '.join(grid.names)} as keyword arguments ({exc})", element="fn") from None


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


def _drive(backend, fn_bytes, grid, todo, table, bar, stop_on_error, chunk_size, timeout):
    """Keep two chunks per worker in flight until every point of ``todo`` is in ``table``; with ``timeout``, a
    point that runs longer is recorded as failed and its worker replaced (the rest of its chunk is sent again)."""
    names = grid.names
    chunks = _Chunker(grid, todo, chunk_size)
    tokens = itertools.count()
    in_flight = {}                         # future -> (points, attempts, token)
    running = {}                           # token -> (index of the point running, worker, since when)
    tick = None if timeout is None else min(0.5, max(0.05, timeout / 10))
    try:
        while chunks.pending() or in_flight:
            workers = backend.workers
            while chunks.pending() and len(in_flight) < backend.per_worker * workers:
                points, attempts = chunks.next(workers)
                token = next(tokens)
                in_flight[backend.submit(fn_bytes, names, points, stop_on_error, token)] = (points, attempts, token)
            broken = False
            for fut in backend.wait(list(in_flight), tick):
                points, attempts, token = in_flight.pop(fut)
                running.pop(token, None)
                try:
                    res = fut.result()
                except backend.lost as exc:
                    if attempts >= RETRIES:
                        raise SweepError(f"sweep: points {points[0][0]}..{points[-1][0]} lost their worker "
                                         f"{attempts + 1} times ({type(exc).__name__}: {exc}); the finished points "
                                         "are kept, run again with resume=True" +
                                         (backend.lost_hint if chunks.per_point is None else "")) from None
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
                    raise _noted(res["raised"], res["raised_at"], grid)
            if timeout is not None:
                broken |= _expire(backend, in_flight, running, timeout, chunks, table, bar, stop_on_error, grid)
            if broken and backend.pool_breaks:
                # a lost local process breaks the whole pool: every chunk still in flight is lost with it
                for points, attempts, _ in in_flight.values():
                    chunks.retry.append((points, attempts))
                in_flight.clear()
                running.clear()
                backend.restart()
            table.maybe_flush()
    finally:
        if in_flight:   # interrupted or raised: the chunks still out are not wanted any more
            backend.cancel(list(in_flight))


def _expire(backend, in_flight, running, timeout, chunks, table, bar, stop_on_error, grid):
    """Note the point starts the workers reported; record every point running longer than ``timeout`` as failed,
    replace its worker and send the rest of its chunk again. Returns True when that lost the local pool."""
    now = time.monotonic()
    live = {task[2] for task in in_flight.values()}
    for token, i, where in backend.started():
        if token in live:
            running[token] = (i, where, now)
    lost_pool = False
    for fut, (points, attempts, token) in list(in_flight.items()):
        if token not in running or now - running[token][2] <= timeout:
            continue
        i, where, _ = running.pop(token)
        del in_flight[fut]
        message = f"timeout after {timeout:g} s"
        table.add([(i, None, message)])
        bar.update(1)
        rest = [p for p in points if p[0] != i]    # those before i ran, but their rows went with the worker
        if rest:
            chunks.retry.append((rest, attempts))
        lost_pool |= backend.replace(fut, where)
        for other, (_, w, _) in list(running.items()):   # that worker's other chunks start again elsewhere
            if w == where:
                del running[other]
        if stop_on_error:
            raise _noted(SweepError(f"sweep: {message}"), i, grid)
    return lost_pool


def _noted(exc, i, grid):
    """``exc`` with a note naming sweep point ``i`` and its values."""
    values = ", ".join(f"{k}={shown(v)!r}" for k, v in zip(grid.names, grid.point(i)))
    if hasattr(exc, "add_note"):   # Python >= 3.11
        exc.add_note(f"at sweep point {i}: {values}")
    else:
        exc.__notes__ = [*getattr(exc, "__notes__", ()), f"at sweep point {i}: {values}"]
    return exc
