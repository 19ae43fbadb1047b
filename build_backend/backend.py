"""The package's build backend: setuptools' own, plus the compilation of the kernels for the building machine.

When a wheel is built (``pip install .`` builds one), :class:`BuildPy` runs ``python -m multibody.warmup`` on the
freshly built package (``build/lib``): numba writes what it compiles beside each module there
(``__pycache__/*.nbi``, ``*.nbc``), the generated modules (``multibody.cache``) are moved into
``multibody/precompiled/``, and the wheel ships both. numba's cache is keyed on each source file's content, the
function's bytecode, the numba version and the CPU, so right after the install the first calls load compiled
code; on another CPU, or with another numba, the caches miss and numba compiles on first use as before.

``MULTIBODY_NO_PRECOMPILE=1`` skips the step (and the runtime dependencies it needs in the build environment);
editable installs (``pip install -e .``) skip it too: their sources change.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

from setuptools import build_meta
from setuptools.build_meta import *  # noqa: F401,F403  (the PEP 517 hooks not redefined here)
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
#: roughly how long the compilation takes on a 2-core machine, for the notice
MINUTES = "5-15"
#: warm-up processes at once (``MULTIBODY_PRECOMPILE_JOBS``, default: the number of CPUs, at most 4)
JOBS = int(os.environ.get("MULTIBODY_PRECOMPILE_JOBS") or min(4, os.cpu_count() or 1))


def precompile():
    """False when ``MULTIBODY_NO_PRECOMPILE`` is set to anything but ``0`` or the empty string."""
    return os.environ.get("MULTIBODY_NO_PRECOMPILE", "") in ("", "0")


def runtime_requirements():
    """The ``[project] dependencies`` of pyproject.toml: the warm-up imports the whole package."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        return list(tomllib.load(fh)["project"]["dependencies"])


def get_requires_for_build_wheel(config_settings=None):
    extra = runtime_requirements() if precompile() else []
    return build_meta.get_requires_for_build_wheel(config_settings) + extra


def say(message):
    """``message`` on stderr (pip shows it with ``-v``) and on the terminal, when there is one (pip captures the
    build's output, and a silent install of several minutes looks like a hang)."""
    print(message, file=sys.stderr, flush=True)
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(message + "\n")
    except OSError:
        pass


def compile_into(build_lib):
    """Run the warm-up on the package in ``build_lib``; its caches stay there (see the module docstring)."""
    package = os.path.join(build_lib, "multibody")
    for folder, _, files in os.walk(package):        # nothing compiled by an earlier build of other sources
        for name in files:
            if name.endswith((".nbi", ".nbc")):
                os.remove(os.path.join(folder, name))
    shutil.rmtree(os.path.join(package, "precompiled"), ignore_errors=True)
    say(f"multibody: compiling the kernels for this machine (about {MINUTES} min; MULTIBODY_NO_PRECOMPILE=1 "
        "skips it, and they then compile on first use)...")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="multibody-build-") as tmp:
        # pip's isolated build environment reaches its packages through PYTHONPATH: keep it, after build_lib
        path = [os.path.abspath(build_lib)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        env.update(PYTHONPATH=os.pathsep.join(path), MULTIBODY_CACHE=os.path.join(tmp, "generated"),
                   PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg", MULTIBODY_COMPILE_NOTICE="0")
        proc = subprocess.run([sys.executable, "-m", "multibody.warmup", "--jobs", str(JOBS)], cwd=tmp, env=env,
                              stdout=sys.stderr, stderr=sys.stderr)
        generated = os.path.join(tmp, "generated")
        fingerprints = os.listdir(generated) if os.path.isdir(generated) else []
        for fp in fingerprints:   # one: the package's fingerprint (multibody.cache.package_fingerprint)
            shutil.copytree(os.path.join(generated, fp), os.path.join(package, "precompiled"), dirs_exist_ok=True)
    minutes = (time.perf_counter() - t0) / 60
    if proc.returncode:
        say(f"multibody: some kernels did not compile ({minutes:.1f} min; `pip install -v` shows which): they "
            "compile on first use")
    else:
        say(f"multibody: kernels compiled in {minutes:.1f} min")


class BuildPy(build_py):
    """setuptools' ``build_py``, then :func:`compile_into` the build folder (wheels only)."""

    def run(self):
        super().run()
        if not getattr(self, "editable_mode", False) and precompile():
            compile_into(self.build_lib)
