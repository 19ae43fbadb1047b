"""Bad input (hypothesis): malformed model files and bad builder calls end in a valid Model or in a ModelError
that names the element, never in another exception, a hang or a crash.

The files are the bundled examples (src/multibody/examples/*.yaml) mutated by ``tests/fuzz_cases.py``: deleted
keys, wrong types, negative, NaN, infinite and huge numbers, wrong-length vectors, non-orthonormal rotations,
unknown joint types, cycles and missing parents, duplicate names, forbidden and injected expressions
(``__import__('os').system('x')``, ``().__class__.__bases__``, lambdas, attribute access, very long and deeply
nested ones), YAML tags that construct Python objects, alias bombs, random bytes, truncated and non-UTF-8 files;
written as YAML or JSON. Each example runs under a bound of CPU time (SIGPROF) and the number of files fed is
counted (at least 200). ``multibody validate`` is run in-process on bad files: status 2, one line per problem.

A longer, coverage-guided run: ``python tests/fuzz/fuzz_model_files.py`` (atheris).
"""
import signal
import tempfile
import threading
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from fuzz_cases import builder_calls, check_file, make_file, run_builder
from multibody.cli import main
from multibody.errors import ModelError

#: CPU seconds one generated case may take (a case takes milliseconds to a second or two; the bound finds hangs)
TIME_BOUND = 10
FILES = 240
FUZZ = settings(max_examples=FILES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


class FuzzCaseHang(BaseException):
    """A fuzz case over its CPU bound: a BaseException, so no ``except Exception`` in the library can take it."""


@contextmanager
def time_bound(seconds=TIME_BOUND):
    """A hang becomes a failure: SIGPROF after ``seconds`` of this process's CPU time (``ITIMER_PROF``: the
    machine's load does not count; main thread, POSIX; elsewhere no bound) raises :class:`FuzzCaseHang`, and
    again every CPU second until the case ends; a case that caught it anyway fails when it ends."""
    if not hasattr(signal, "SIGPROF") or threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = []

    def expired(signum, frame):
        fired.append(signum)
        raise FuzzCaseHang(f"a fuzz case took more than {seconds} CPU seconds")

    old = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds, 1.0)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    if fired:
        raise FuzzCaseHang(f"a fuzz case took more than {seconds} CPU seconds (and its exception was caught)")


@pytest.fixture(scope="module")
def workdir():
    with tempfile.TemporaryDirectory() as d:
        yield d


@FUZZ
@given(rnd=st.randoms(use_true_random=False))
def feed_malformed_file(rnd, workdir, count):
    case = make_file(rnd)
    with time_bound():
        out = check_file(case, workdir)
    count["files"] += 1
    count["valid"] += not isinstance(out, ModelError)


def test_malformed_model_files(workdir):
    """The hypothesis search over malformed files, then its count: at least 200 files fed (hypothesis may stop
    early; this says so), most of them bad. One test, so the count never depends on which tests ran before."""
    count = {"files": 0, "valid": 0}
    feed_malformed_file(workdir=workdir, count=count)
    assert count["files"] >= 200, count
    assert count["valid"] < count["files"], count   # most mutations must give bad files


@settings(max_examples=120, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(rnd=st.randoms(use_true_random=False))
def test_random_builder_calls(rnd):
    with time_bound():
        run_builder(builder_calls(rnd, mb), mb)


@settings(max_examples=25, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(rnd=st.randoms(use_true_random=False))
def test_validate_command_on_bad_files(rnd, workdir, capsys):
    """``multibody validate FILE`` (in-process): a bad file is status 2 and one line per problem, each naming the
    file, never a traceback."""
    case = make_file(rnd)
    with time_bound():
        out = check_file(case, workdir)
        path = f"{workdir}/model{case.suffix}"
        capsys.readouterr()
        status = main(["validate", "-q", path])
    captured = capsys.readouterr()
    if not isinstance(out, ModelError):
        assert status == 0, captured.err
        return
    assert status == 2
    lines = captured.err.splitlines()
    assert lines and "Traceback" not in captured.err + captured.out
    assert len(lines) == max(1, len(getattr(out, "problems", ()))), captured.err
    assert all(line.startswith(path) for line in lines), captured.err
    assert "could not be checked" not in captured.err, captured.err


def test_time_bound_cannot_be_swallowed():
    """The hang guard itself: a case that catches every Exception and goes on spinning still ends, as a
    FuzzCaseHang (one CPU second bound, a loop of at most 60 CPU seconds)."""
    import time

    if not hasattr(signal, "SIGPROF"):
        pytest.skip("no SIGPROF on this platform")

    def spin(until):
        while time.process_time() < until:
            try:
                sum(range(1000))
            except Exception:       # what a careless library might do
                pass

    with pytest.raises(FuzzCaseHang):
        with time_bound(1):
            spin(time.process_time() + 60)
