"""Where generated, numba-compiled modules are kept between processes.

numba's on-disk cache of a function is keyed on that function's own source file only: a generated module
that calls the package's kernels would silently keep stale machine code after a kernel changes. The
folder is therefore keyed on a fingerprint of the whole installed package (its ``.py`` sources and the
numba version), so a changed package never meets the compiled code of another.
"""
import functools
import hashlib
import os
import pathlib


@functools.lru_cache(maxsize=1)
def package_fingerprint():
    """16 hex digits hashing every ``.py`` file of the installed package and the numba version."""
    import numba

    root = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha1(numba.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir(kind):
    """``$MULTIBODY_CACHE/<fingerprint>/<kind>`` (default base ``~/.cache/multibody``)."""
    base = os.environ.get("MULTIBODY_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "multibody")
    return os.path.join(base, package_fingerprint(), kind)
