"""pytest settings of the test suite.

- The on-demand fuzzing harnesses under ``tests/fuzz/`` (atheris) are not collected; ``test_fuzz_harness.py``
  runs them for a fixed budget.
- Generated code: the package writes the modules it generates (fixed-step loops, stabilized DAEs, general
  joints; ``multibody.cache``) and numba's on-disk cache of them under ``$MULTIBODY_CACHE`` (by default
  ``~/.cache/multibody``). A test session writes them to a folder of its own instead, made here and removed at
  the end, so that the suite writes nothing into the user's home and never runs code compiled by an earlier
  session. It is set in ``os.environ`` when this file is imported, before any test module, so every process a
  test starts (``subprocess``, process pools, Dask workers) inherits it. ``MULTIBODY_TEST_CACHE=DIR`` keeps the
  session's generated code in ``DIR`` instead (kept afterwards: a developer's warm cache between runs). The
  workers of pytest-xdist (``-n``) share the folder of the session that started them.
- hypothesis runs under one settings profile, ``"multibody"`` (loaded here, so every ``@given`` test inherits
  it; a test's own ``@settings`` changes only what it names): derandomized (the draws are a function of the test
  alone, the same on every machine and every run), no example database (nothing carried from one run to the
  next), no deadline and no health check of the time a draw takes (a verdict never depends on timing or on the
  machine's load). A failure is reproduced by running the test again. Every run a drawn test makes carries its
  own step budget (``max_steps``) where the model could switch without end.
- hypothesis keeps its other files (the constants it collects) in the same session folder, not in
  ``.hypothesis/`` of the working directory.
- The suite compiles at the optimization level the install's warm-up compiles the package at
  (``multibody.cache.use_package_opt_level``: LLVM -O1 unless ``NUMBA_OPT`` is set), set here before numba is
  imported: what a test compiles is what a user's install runs, and compiles in less time.
- numba functions defined in the tests themselves are compiled without ``cache=True`` (numba would write their
  cache beside the test file, into ``tests/__pycache__``); a test that needs a cached one writes its module
  to a temporary folder (``test_integrate.py``).
"""
import os
import shutil
import tempfile

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir

from multibody.cache import use_package_opt_level

use_package_opt_level()

collect_ignore = ["fuzz"]

_KEEP = os.environ.get("MULTIBODY_TEST_CACHE")
# a pytest-xdist worker inherits the folder of the session that started it (made and removed there)
_WORKER = os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("MULTIBODY_TEST_SESSION_CACHE")
SESSION_CACHE = _KEEP or _WORKER or tempfile.mkdtemp(prefix="multibody-tests-")
os.environ["MULTIBODY_CACHE"] = os.environ["MULTIBODY_TEST_SESSION_CACHE"] = SESSION_CACHE
set_hypothesis_home_dir(os.path.join(SESSION_CACHE, "hypothesis"))

#: the settings every hypothesis test runs under (module docstring)
settings.register_profile("multibody", derandomize=True, database=None, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow], print_blob=False)
settings.load_profile("multibody")


def pytest_report_header(config):
    return f"multibody generated code: {SESSION_CACHE}" + (" (kept)" if _KEEP else " (removed at the end)")


def pytest_unconfigure(config):
    if not _KEEP and not _WORKER:
        shutil.rmtree(SESSION_CACHE, ignore_errors=True)
