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


class Escape(BaseException):
    """A BaseException that is neither SystemExit nor KeyboardInterrupt."""


def escapes(x):
    """Point 1 calls sys.exit(3), point 2 raises KeyboardInterrupt, point 3 a bare BaseException: none of them may
    end a sweep."""
    if x == 1:
        raise SystemExit(3)
    if x == 2:
        raise KeyboardInterrupt
    if x == 3:
        raise Escape("escaped")
    return {"s": x}


def faulty(x):
    """``escapes``, and point 4 never returns (a sleep loop, as a stuck solver would)."""
    while x == 4:
        time.sleep(0.05)
    return escapes(x)


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no message")


def odd_outputs(x):
    """Outputs no table can hold: an empty key, a key with a line break, an int beyond float; and an exception
    whose message cannot be shown."""
    if x == 3:
        raise Unprintable()
    return [{"": 1.0}, {"a\nb": 1.0}, {"v": 10**400}][x]
