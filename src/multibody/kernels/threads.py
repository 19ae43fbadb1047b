"""Batches on several cores: a compiled function run over slices of rows in threads of Python.

A function compiled with ``nogil=True`` releases the GIL while it runs, so threads of Python run its slices of a
batch at once. Each slice has its own workspaces and each row is computed by the same compiled code in the same
order, so the results do not depend on the number of threads. numba's ``prange`` runs the same loop, but its
lowering compiles the loop's body as a function of its own that links the whole tree of kernels it calls, and then
the function around it again: the batch of ABA derivatives took 8.2 CPU s to compile (-O1) as a ``prange`` loop,
2.0 as a slice compiled ``nogil`` (docs/first-use.md).

The threads are those of one pool kept for the process (a new pool for each call cost 0.4 ms, as much as a batch
of a hundred ABA rows of a 30-body chain); the calling thread computes slices too.
"""
import os
import threading
import time

#: a batch of short rows (``in_threads(..., short_rows=True)``) whose rows would take less than this in all, in
#: seconds, runs in the calling thread: a thread of the pool starts 0.02–0.03 ms after it is asked to on a 2-core
#: virtual machine (0.13 ms when its core was idle for 10 ms), and the caller may wait as long for its last
#: slice, when numba's OpenMP threads spin between calls (burning about 4 ms of CPU after each)
SERIAL_SECONDS = 2e-4
#: only a batch of fewer rows than this is timed so; a larger one starts its threads at once (timing first delays
#: them by about 0.02 ms, 1 % of 1000 ABA rows of a 30-body chain): it takes 0.2 ms or more unless its model has
#: a few bodies only (0.1 µs a row of one body)
PROBED_BELOW = 256

_POOL = [None, None]  # the pool of worker threads and the process that made it (a forked child makes its own)
_POOL_LOCK = threading.Lock()


def _pool():
    """The process's pool of worker threads (numba's ``NUMBA_NUM_THREADS`` less one: the caller is the other)."""
    import numba

    with _POOL_LOCK:
        if _POOL[0] is None or _POOL[1] != os.getpid():
            from concurrent.futures import ThreadPoolExecutor

            _POOL[:] = [ThreadPoolExecutor(max_workers=max(1, numba.config.NUMBA_NUM_THREADS - 1),
                                           thread_name_prefix="multibody-batch"), os.getpid()]
        return _POOL[0]


def in_threads(func, args, count, slices=None, tail=(), short_rows=False):
    """``func(*args, lo, hi, *tail)`` over contiguous slices [lo, hi) of ``range(count)``, in
    ``numba.get_num_threads()`` threads of Python (``func``: compiled with ``nogil=True``, each slice independent
    of the others, so the results do not depend on the number of threads). ``slices``: how many, bounds
    ``count * k // slices`` (default four per thread, so that a slow one does not hold the others up; one slice
    when one thread runs them). Returns the slices' return values, in the order of the slices.

    ``short_rows``: rows of microseconds (the algorithms' batches, ``slices`` left to the default): below
    :data:`PROBED_BELOW` rows, the calling thread computes the first row alone, timing it, and the others after it
    in one slice when they would take less than :data:`SERIAL_SECONDS` in all, in slices on threads otherwise."""
    import numba

    if count <= 0:
        return []
    threads = max(1, min(count, numba.get_num_threads()))
    if threads == 1 and slices is None:
        return [func(*args, 0, count, *tail)]
    first = []
    lo = 0
    if short_rows and count < PROBED_BELOW:
        t0 = time.perf_counter()
        first.append(func(*args, 0, 1, *tail))
        lo = 1
        if (time.perf_counter() - t0) * (count - 1) < SERIAL_SECONDS:
            return first + ([func(*args, 1, count, *tail)] if count > 1 else [])
    slices = max(1, min(count - lo, 4 * threads if slices is None else int(slices)))
    bounds = [lo + (count - lo) * k // slices for k in range(slices + 1)]
    out = [None] * slices
    todo = iter(range(slices))  # shared by the threads: each takes the next slice when it is done with one

    def work():
        for k in todo:
            out[k] = func(*args, bounds[k], bounds[k + 1], *tail)

    futures = [_pool().submit(work) for _ in range(min(threads, slices) - 1)]
    try:
        work()
    finally:  # a worker that has not started by now has nothing left to do: not waited for
        for f in futures:
            if not f.cancel():
                f.result()
    return first + out


def first_error(codes):
    """The first nonzero of the error codes that slices returned (in the order of the slices: the first row's
    error), or 0."""
    return next((c for c in codes if c), 0)
