"""Timing for the benchmarks: ours against a peer in the same process, in interleaved rounds of process time,
reported as the median and the range over the rounds (not the best round), so that a busy machine — other
processes on the same cores — shows as a wider range rather than a flattering number (DESIGN.md, performance
rules)."""
import os
import time

import numpy as np


def interleaved(calls, number=1, rounds=7, clock=time.process_time):
    """Seconds per call of each zero-argument function in ``calls`` (process time; pass ``time.perf_counter``
    for calls that run on several threads), timed in alternating blocks of ``number`` calls: an array
    (rounds, len(calls))."""
    out = np.empty((rounds, len(calls)))
    for r in range(rounds):
        for k, f in enumerate(calls):
            t0 = clock()
            for _ in range(number):
                f()
            out[r, k] = (clock() - t0) / number
    return out


def number_for(f, budget=0.02):
    """How many calls of ``f`` make a block of about ``budget`` seconds (at least 3): from the time of repeated
    calls over at least a millisecond, so that a slow first call (cold caches) or the clock's granularity does
    not make the blocks of a microsecond call a few calls long."""
    f()
    calls = 0
    t0 = time.perf_counter()
    while True:
        f()
        calls += 1
        dt = time.perf_counter() - t0
        if dt >= 1e-3 or dt >= budget:
            break
    return int(max(3, min(200000, budget * calls / max(dt, 1e-9))))


def spread(values):
    """(median, min, max) of ``values``."""
    v = np.asarray(values, dtype=float)
    return float(np.median(v)), float(v.min()), float(v.max())


def fmt_spread(values, digits=2):
    """``median (min–max)`` of ``values``."""
    m, lo, hi = spread(values)
    return f"{m:.{digits}f} ({lo:.{digits}f}–{hi:.{digits}f})"


def environment(*peers):
    """One line naming the machine (CPU, cores) and the versions of Python, numpy, numba and of the ``peers``
    (module names) that are importable."""
    import importlib
    import platform

    import numba

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    parts = [f"{cpu}, {os.cpu_count()} cores", f"Python {platform.python_version()}", f"numpy {np.__version__}",
             f"numba {numba.__version__} ({numba.get_num_threads()} threads)"]
    for name in peers:
        try:
            mod = importlib.import_module(name)
            parts.append(f"{name} {getattr(mod, '__version__', '?')}")
        except ImportError:
            parts.append(f"{name} not installed")
    return "; ".join(parts)
