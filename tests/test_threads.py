"""Batches in slices on threads of Python (``kernels/threads.py``): every row computed once, the slices' return
values in their order, and the batches' numbers the same bits whatever the number of threads and of slices."""
import multiprocessing
import threading

import numba
import numpy as np
import pytest

import multibody as mb
from multibody.kernels import threads
from multibody.kernels.threads import first_error, in_threads
from multibody.systems import bicycle

from models import sprung_model

THREADS = min(2, numba.config.NUMBA_NUM_THREADS)


def _record(seen, lo, hi):
    seen.append((lo, hi))
    return lo


def _in(threads, func, *args, **kw):
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return func(*args, **kw)
    finally:
        numba.set_num_threads(old)


@pytest.mark.parametrize("threads", sorted({1, THREADS}))
@pytest.mark.parametrize("count, slices", [(0, None), (1, None), (7, None), (7, 3), (5, 9), (100, 32)])
def test_slices_cover_each_row_once_and_return_in_order(threads, count, slices):
    seen = []
    out = _in(threads, in_threads, _record, (seen,), count, slices)
    seen.sort()
    assert [lo for lo, _ in seen] == out
    assert [r for lo, hi in seen for r in range(lo, hi)] == list(range(count))
    assert all(hi > lo for lo, hi in seen)
    expected = 0 if count == 0 else min(count, slices) if slices else 1 if threads == 1 else min(count, 4 * threads)
    assert len(out) == expected
    assert first_error([0, 0, 3, 5]) == 3 and first_error([0, 0]) == 0 and first_error([]) == 0


@pytest.mark.skipif(THREADS < 2, reason="numba allows one thread here")
@pytest.mark.parametrize("count", [1, 2, 127, 255, 256, 1000])
def test_short_rows_first_then_alone_or_in_threads(count, monkeypatch):
    """``short_rows``: below ``PROBED_BELOW`` rows the first row alone, then the others in one slice (all of them
    would take less than ``SERIAL_SECONDS``) or in slices on threads (they would not); from it, slices on threads."""
    for serial_seconds, alone in ((3600.0, True), (0.0, False)):
        monkeypatch.setattr(threads, "SERIAL_SECONDS", serial_seconds)
        seen = []
        out = _in(THREADS, in_threads, _record, (seen,), count, short_rows=True)
        seen_first = seen[0]
        seen.sort()
        assert [lo for lo, _ in seen] == out
        assert [r for lo, hi in seen for r in range(lo, hi)] == list(range(count))
        if count >= threads.PROBED_BELOW:
            assert len(out) == 4 * THREADS
            continue
        assert seen_first == (0, 1) and out[0] == 0
        rest = count - 1
        assert len(out) == 1 + (min(1, rest) if alone else min(rest, 4 * THREADS))


def _meet(barrier, seen, lo, hi):
    """A slice that waits for a slice of another thread: it passes only when two threads run slices at once."""
    barrier.wait(timeout=60)
    seen.append(threading.get_ident())
    return lo


def _two_threads_at_once():
    seen = []
    out = _in(2, in_threads, _meet, (threading.Barrier(2), seen), 10, 4)
    return out, len(set(seen))


def _in_child(queue):
    try:
        queue.put(_two_threads_at_once())
    except threading.BrokenBarrierError:
        queue.put("one thread")


@pytest.mark.skipif(THREADS < 2, reason="numba allows one thread here")
def test_slices_run_at_once_in_two_threads_and_in_a_forked_child():
    """The pool of threads is the process's own: a child forked after the parent used it (the sweep's workers,
    the warm-up's processes) makes its own instead of queueing slices for the parent's threads, which it does not
    have."""
    assert _two_threads_at_once() == ([0, 2, 5, 7], 2)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_in_child, args=(queue,))
    child.start()
    child.join(120)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive and child.exitcode == 0
    assert queue.get(timeout=5) == ([0, 2, 5, 7], 2)


def test_batches_are_the_same_bits_on_one_thread_and_on_several():
    model = sprung_model()
    rng = np.random.default_rng(5)
    B = 23
    Q = np.array([model.random_configuration(rng) for _ in range(B)])
    V, X = rng.uniform(-1, 1, (B, model.nv)), rng.uniform(-1, 1, (B, model.nv))
    speeds = np.linspace(0.0, 10.0, 200)  # three slices of continuation, whatever the threads
    p = bicycle.benchmark_parameters()

    def run():
        return [mb.aba_batch(model, Q, V, X), mb.rnea_batch(model, Q, V, X), *mb.rnea_derivatives_batch(model, Q, V, X),
                *mb.aba_derivatives_batch(model, Q, V, X), *mb.aba_derivatives_batch(model, Q, V, X, applied=True),
                bicycle.eigenvalues(p, speeds).values]

    one, several = _in(1, run), _in(THREADS, run)
    for a, b in zip(one, several):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(one[0][B - 1], mb.aba(model, Q[B - 1], V[B - 1], X[B - 1]))
