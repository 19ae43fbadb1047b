"""Batches on several cores: a compiled function run over slices of rows in threads of Python.

A function compiled with ``nogil=True`` releases the GIL while it runs, so threads of Python run its slices of a
batch at once. Each slice has its own workspaces and each row is computed by the same compiled code in the same
order, so the results do not depend on the number of threads. numba's ``prange`` runs the same loop, but its
lowering compiles the loop's body as a function of its own that links the whole tree of kernels it calls, and then
the function around it again: the batch of ABA derivatives took 8 CPU s to compile at -O1 with it and half of that as
a slice compiled ``nogil`` (docs/first-use.md).

The threads are those of one pool kept for the process (a new pool for each call costs about 0.4 ms, as much as a
batch of a hundred ABA rows of a 30-body chain); the calling thread computes slices too.
"""
import os
import threading

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


def in_threads(func, args, count, slices=None, tail=()):
    """``func(*args, lo, hi, *tail)`` over contiguous slices [lo, hi) of ``range(count)``, in
    ``numba.get_num_threads()`` threads of Python (``func``: compiled with ``nogil=True``, each slice independent
    of the others, so the results do not depend on the number of threads). ``slices``: how many, bounds
    ``count * k // slices`` (default four per thread, so that a slow one does not hold the others up; one slice
    when one thread runs them). Returns the slices' return values, in the order of the slices."""
    import numba

    if count <= 0:
        return []
    threads = max(1, min(count, numba.get_num_threads()))
    if slices is None:
        slices = 4 * threads if threads > 1 else 1
    slices = max(1, min(count, int(slices)))
    bounds = [count * k // slices for k in range(slices + 1)]
    out = [None] * slices
    todo = iter(range(slices))  # shared by the threads: each takes the next slice when it is done with one

    def work():
        for k in todo:
            out[k] = func(*args, bounds[k], bounds[k + 1], *tail)

    threads = min(threads, slices)
    futures = [_pool().submit(work) for _ in range(threads - 1)]
    try:
        work()
    finally:  # a worker that has not started by now has nothing left to do: not waited for
        for f in futures:
            if not f.cancel():
                f.result()
    return out


def first_error(codes):
    """The first nonzero of the error codes that slices returned (in the order of the slices: the first row's
    error), or 0."""
    return next((c for c in codes if c), 0)
