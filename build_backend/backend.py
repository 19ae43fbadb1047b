"""The package's build backend: setuptools' own, plus the compilation of the kernels for the building machine.

When a wheel is built (``pip install .`` builds one), :class:`BuildPy` runs ``python -m multibody.warmup`` on the
freshly built package (``build/lib``): numba writes what it compiles beside each module there
(``__pycache__/*.nbi``, ``*.nbc``), the generated modules (``multibody.cache``) are moved into
``multibody/precompiled/``, and the wheel ships both. numba's cache is keyed on each source file's content, the
function's bytecode, the numba version and the CPU, so right after the install the first calls load compiled
code; on another CPU, or with another numba, the caches miss and numba compiles on first use as before.

The build cache: what a build compiled is kept in a folder of the user's cache keyed on the whole package
(:func:`build_key`: every file of the built package, and the versions of Python, numba, llvmlite and numpy, the
CPU as numba sees it and numba's settings), and a later build of the same sources on the same machine copies it
instead of compiling again — the README's second command (``pip install ".[test]"``) rebuilds the wheel. A
changed file, another numba or another CPU is another key: a changed source never meets machine code compiled for
another one (numba's own cache keys a function on its own file only, not on the kernels it calls). An entry is
written whole or not at all (a folder renamed into place) and checked against its list of SHA-256 digests
before use; the :data:`KEEP` most recently used entries stay.

``MULTIBODY_NO_PRECOMPILE=1`` skips the step (and the runtime dependencies it needs in the build environment);
editable installs (``pip install -e .``) skip it too: their sources change. ``MULTIBODY_BUILD_CACHE=DIR`` puts the
build cache in DIR, ``MULTIBODY_BUILD_CACHE=0`` turns it off (every build compiles).
"""
import hashlib
import json
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
#: CPU seconds the warm-up takes on the 2-core machine of docs/first-use.md (its processes together); the notice
#: divides them among the processes it runs
CPU_SECONDS = 250
#: warm-up processes at once (``MULTIBODY_PRECOMPILE_JOBS``, default: the number of CPUs, at most 2)
JOBS = int(os.environ.get("MULTIBODY_PRECOMPILE_JOBS") or min(2, os.cpu_count() or 1))
#: build cache entries kept (the most recently used)
KEEP = 3
#: what the warm-up writes into the package: numba's caches, and the generated modules' folder
ARTIFACT_SUFFIXES = (".nbi", ".nbc")
PRECOMPILED = "precompiled"

#: printed by the warm-up's Python: what numba compiles for, besides the package's own files
_MACHINE = r"""
import json, os, platform, sys
import llvmlite, numba, numpy
from numba.core.registry import cpu_target
magic = cpu_target.target_context.codegen().magic_tuple()
print(json.dumps(dict(python=sys.version, implementation=sys.implementation.cache_tag, machine=platform.machine(),
                      numba=numba.__version__, llvmlite=llvmlite.__version__, numpy=numpy.__version__,
                      magic=[str(m) for m in magic],
                      settings=sorted((k, v) for k, v in os.environ.items()
                                      if k.startswith("NUMBA_") and k != "NUMBA_CACHE_DIR"))))
"""


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
    if extra:    # the first hook of the build: the notice comes before pip installs what the warm-up imports
        say(f"multibody: this build compiles the kernels for this machine after installing numba and the package's "
            f"dependencies for it: about {estimate()} unless a build of the same sources on this machine kept them "
            "(MULTIBODY_NO_PRECOMPILE=1 skips it: they then compile on first use)")
    return build_meta.get_requires_for_build_wheel(config_settings) + extra


def estimate():
    """About how long the warm-up takes here: :data:`CPU_SECONDS` shared by :data:`JOBS` processes."""
    minutes = max(1, round(CPU_SECONDS / JOBS / 60))
    return f"{minutes} min on {JOBS} idle core{'s' * (JOBS > 1)}"


def say(message):
    """``message`` on stderr (pip shows it with ``-v``) and on the terminal, when there is one (pip captures the
    build's output, and a silent install of several minutes looks like a hang)."""
    print(message, file=sys.stderr, flush=True)
    try:
        with open("/dev/tty", "w") as tty:
            tty.write(message + "\n")
    except OSError:
        pass


def cache_root():
    """The build cache's folder, or None when ``MULTIBODY_BUILD_CACHE=0``."""
    setting = os.environ.get("MULTIBODY_BUILD_CACHE", "")
    if setting == "0":
        return None
    if setting:
        return setting
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "multibody", "build")


def is_artifact(relpath):
    """Whether a path inside the built package (``multibody/...``) is written by the warm-up."""
    parts = relpath.split(os.sep)
    return relpath.endswith(ARTIFACT_SUFFIXES) or (len(parts) > 1 and parts[1] == PRECOMPILED)


def package_files(build_lib):
    """``{path relative to build_lib: SHA-256}`` of the built package's own files (no artifacts, no bytecode)."""
    digests = {}
    package = os.path.join(build_lib, "multibody")
    for folder, dirs, files in os.walk(package):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, build_lib)
            if is_artifact(rel) or name.endswith((".pyc", ".pyo")):
                continue
            with open(path, "rb") as fh:
                digests[rel] = hashlib.sha256(fh.read()).hexdigest()
    return digests


def machine(env):
    """What numba compiles for, as the warm-up's environment ``env`` sees it (a JSON line: the versions of Python,
    numba, llvmlite, numpy, the CPU's name and features, numba's settings), or None when it cannot tell."""
    proc = subprocess.run([sys.executable, "-c", _MACHINE], env=env, capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else None


def build_key(build_lib, env):
    """The key of the build cache: a digest of every file of the package and of :func:`machine`; None when the
    machine cannot be told (then nothing is cached)."""
    what = machine(env)
    if what is None:
        return None
    digest = hashlib.sha256(what.encode())
    for rel, sha in package_files(build_lib).items():
        digest.update(f"{rel}\0{sha}\n".encode())
    return digest.hexdigest()[:32]


def artifacts(build_lib):
    """The warm-up's files in the built package, relative to ``build_lib``."""
    found = []
    for folder, _, files in os.walk(os.path.join(build_lib, "multibody")):
        for name in files:
            rel = os.path.relpath(os.path.join(folder, name), build_lib)
            if is_artifact(rel):
                found.append(rel)
    return sorted(found)


def _sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def restore(root, key, build_lib):
    """Copy the cached entry ``key`` into ``build_lib``; False when there is none or it does not match its list."""
    entry = os.path.join(root, key)
    try:
        with open(os.path.join(entry, "manifest.json")) as fh:
            manifest = json.load(fh)
    except (OSError, ValueError):
        return False
    files = os.path.join(entry, "files")
    for rel, sha in manifest.items():
        src = os.path.join(files, rel)
        if not os.path.isfile(src) or _sha256(src) != sha:
            return False
    for rel in manifest:
        dest = os.path.join(build_lib, rel)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(files, rel), dest)
    os.utime(entry)          # recently used: kept by prune
    return True


def store(root, key, build_lib):
    """Keep the warm-up's files of ``build_lib`` as entry ``key`` (written aside, then renamed into place); then
    only the :data:`KEEP` most recently used entries stay."""
    os.makedirs(root, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".incoming-", dir=root)
    try:
        manifest = {}
        for rel in artifacts(build_lib):
            dest = os.path.join(tmp, "files", rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(build_lib, rel), dest)
            manifest[rel] = _sha256(dest)
        with open(os.path.join(tmp, "manifest.json"), "w") as fh:
            json.dump(manifest, fh, indent=0)
        try:
            os.rename(tmp, os.path.join(root, key))
        except OSError:      # another build stored the same key meanwhile
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    prune(root)


def prune(root, keep=KEEP):
    entries = [os.path.join(root, name) for name in os.listdir(root) if not name.startswith(".")]
    entries.sort(key=os.path.getmtime, reverse=True)
    for old in entries[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def warmup_env(build_lib, tmp):
    """The environment of the warm-up: the built package first on the path, then pip's isolated build
    environment (which it reaches through PYTHONPATH)."""
    path = [os.path.abspath(build_lib)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=os.pathsep.join(path), MULTIBODY_CACHE=os.path.join(tmp, "generated"),
               PYTHONDONTWRITEBYTECODE="1", MPLBACKEND="Agg", MULTIBODY_COMPILE_NOTICE="0")
    return env


def clear(build_lib):
    """Remove from ``build_lib`` what an earlier build of this checkout compiled into it (setuptools reuses its
    ``build/lib``), so that a wheel carries only what this build compiled, or nothing."""
    for rel in artifacts(build_lib):
        os.remove(os.path.join(build_lib, rel))
    shutil.rmtree(os.path.join(build_lib, "multibody", PRECOMPILED), ignore_errors=True)


def compile_into(build_lib):
    """Fill the package in ``build_lib`` with compiled code: from the build cache when it holds this package for
    this machine, else by running the warm-up (then kept in the cache; see the module docstring)."""
    package = os.path.join(build_lib, "multibody")
    clear(build_lib)
    t0 = time.perf_counter()
    root = cache_root()
    with tempfile.TemporaryDirectory(prefix="multibody-build-") as tmp:
        env = warmup_env(build_lib, tmp)
        key = build_key(build_lib, env) if root else None
        if key and restore(root, key, build_lib):
            say(f"multibody: kernels already compiled for these sources on this machine: reused from {root} "
                f"({time.perf_counter() - t0:.0f} s)")
            return
        say(f"multibody: compiling the kernels for this machine, about {estimate()} (MULTIBODY_NO_PRECOMPILE=1 "
            "skips it: they then compile on first use)...")
        proc = subprocess.run([sys.executable, "-m", "multibody.warmup", "--jobs", str(JOBS)], cwd=tmp, env=env,
                              stdout=sys.stderr, stderr=sys.stderr)
        generated = os.path.join(tmp, "generated")
        fingerprints = os.listdir(generated) if os.path.isdir(generated) else []
        for fp in fingerprints:   # one: the package's fingerprint (multibody.cache.package_fingerprint)
            shutil.copytree(os.path.join(generated, fp), os.path.join(package, PRECOMPILED), dirs_exist_ok=True)
    minutes = (time.perf_counter() - t0) / 60
    if proc.returncode:
        say(f"multibody: some kernels did not compile ({minutes:.1f} min; `pip install -v` shows which): they "
            "compile on first use")
        return
    say(f"multibody: kernels compiled in {minutes:.1f} min")
    if key:
        try:
            store(root, key, build_lib)
        except OSError as exc:     # a full or read-only disk: the next build compiles again
            say(f"multibody: the compiled kernels could not be kept in {root} ({exc})")


class BuildPy(build_py):
    """setuptools' ``build_py``, then :func:`compile_into` the build folder (wheels only)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        if precompile():
            compile_into(self.build_lib)
        else:
            clear(self.build_lib)
