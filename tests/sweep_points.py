"""Module-level point functions for the sweep tests (worker processes import them by name).

``logged`` leaves one file per call in ``$SWEEP_LOG`` (``<x>_<y>.<pid>.<ns>``), sleeps ``$SWEEP_SLEEP``
seconds, and raises KeyboardInterrupt at ``x == $SWEEP_STOP_AT``: the tests count the calls of every point.
"""
import os
import time


def square(x, y=0.0):
    return {"sq": x * x + y, "neg": -x}


def flaky(x):
    if x == 3:
        raise ValueError("x = 3 is not allowed")
    if x == 4:
        return {"sq": None}
    return {"sq": x * x}


def bad_value(x):
    return {"v": "text"} if x == 1 else {"v": x}


def not_a_dict(x):
    return x


def logged(x, y=0):
    log = os.environ.get("SWEEP_LOG")
    if os.environ.get("SWEEP_STOP_AT") not in (None, "") and x == int(os.environ["SWEEP_STOP_AT"]):
        raise KeyboardInterrupt
    time.sleep(float(os.environ.get("SWEEP_SLEEP", "0")))
    if log:
        with open(os.path.join(log, f"{x}_{y}.{os.getpid()}.{time.time_ns()}"), "w"):
            pass
    return {"s": x + 1000 * y}


def calls(log):
    """{(x, y): number of calls} and the set of worker pids, from a log folder of ``logged``."""
    counts, pids = {}, set()
    for name in os.listdir(log):
        point, pid, _ = name.split(".")
        x, y = point.split("_")
        counts[(int(x), int(y))] = counts.get((int(x), int(y)), 0) + 1
        pids.add(int(pid))
    return counts, pids
