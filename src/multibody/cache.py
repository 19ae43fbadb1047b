"""Where generated, numba-compiled modules are kept between processes.

numba's on-disk cache of a function is keyed on that function's own source file only: a generated module
that calls the package's kernels would silently keep stale machine code after a kernel changes. The
folder is therefore keyed on a fingerprint of the whole installed package (its ``.py`` sources and the
numba version), so a changed package never meets the compiled code of another.

A built package also ships the generated modules that its build compiled (``precompiled/<kind>/``, see
``multibody.warmup``): :func:`import_generated` imports a module from there when it has the same source (the
module name is a hash of it), with the numba caches compiled beside it.
"""
import functools
import hashlib
import os
import pathlib

#: LLVM's optimization level of the package's own compilations (numba's ``NUMBA_OPT``, default 3): the install's
#: warm-up, the command line and the test suite compile at -O1 (:func:`use_package_opt_level`). Measured on the
#: whole warm-up in one process from empty caches, the two levels side by side at the same load: -O1 spent 14 %
#: less CPU than -O3 (414 against 482 CPU s; the derivatives 53 -> 32, the formulations 76 -> 63), and
#: `multibody bench` (dynamics, derivatives, simulate, contact) gives the same ratios within their noise — the
#: kernels are scalar code that -O1 already inlines and keeps in registers — and the same bits (no level reorders
#: floating-point operations: numba does not allow fast-math by default). The level is not part of numba's cache
#: key: a process at any level loads what another compiled.
PACKAGE_OPT_LEVEL = "1"

#: the generated modules shipped with the package (filled when the wheel is built)
PRECOMPILED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "precompiled")


@functools.lru_cache(maxsize=1)
def package_fingerprint():
    """16 hex digits hashing every ``.py`` file of the installed package and the numba version."""
    import numba

    root = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha1(numba.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        if path.parts[len(root.parts)] == "precompiled":
            continue
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir(kind):
    """``$MULTIBODY_CACHE/<fingerprint>/<kind>`` (default base ``~/.cache/multibody``)."""
    base = os.environ.get("MULTIBODY_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "multibody")
    return os.path.join(base, package_fingerprint(), kind)


def import_generated(prefix, source, kind, cache_dir=None):
    """Write ``source`` (once) as module ``<prefix><hash of source>`` under ``cache_dir`` (default
    ``cache_dir(kind)``, or the package's ``precompiled/<kind>`` when it holds the module) and import it; returns
    the module. The write is atomic, so concurrent processes
    share one file and numba's on-disk cache of its ``@njit(cache=True)`` functions. Raises ``OSError``
    when the folder cannot be written."""
    import importlib.util
    import sys

    from multibody.compile_notice import install

    install()
    modname = prefix + hashlib.sha1(source.encode()).hexdigest()[:16]
    if modname in sys.modules:
        return sys.modules[modname]
    folder = cache_dir
    if folder is None:
        shipped = os.path.join(PRECOMPILED, kind)
        folder = shipped if os.path.exists(os.path.join(shipped, modname + ".py")) else globals()["cache_dir"](kind)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, modname + ".py")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w") as fh:
            fh.write(source)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[modname] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        sys.modules.pop(modname, None)
        raise
    return mod


def use_package_opt_level():
    """Set ``NUMBA_OPT`` to :data:`PACKAGE_OPT_LEVEL` unless the environment already sets it: for the processes the
    package runs as a whole (the warm-up, the ``multibody`` command, the test suite), before numba is imported
    (numba reads it when it makes its code generator). A user's own process keeps numba's setting."""
    os.environ.setdefault("NUMBA_OPT", PACKAGE_OPT_LEVEL)
