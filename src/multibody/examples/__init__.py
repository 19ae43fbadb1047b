"""Model files of the bundled systems (``multibody examples`` lists them).

Each ``<name>.yaml`` here describes one system of :mod:`multibody.systems` as data, with its initial state and
simulation settings; ``tests/test_io_examples.py`` loads each and checks it against the Python-built model
(the same packed arrays, the same trajectory).
"""
from pathlib import Path

from multibody.errors import ModelError

__all__ = ["folder", "names", "path", "description"]


def folder():
    """The folder of the example files."""
    return Path(__file__).resolve().parent


def names():
    """The examples' names (file names without ``.yaml``), sorted."""
    return sorted(p.stem for p in folder().glob("*.yaml"))


def path(name):
    """The file of example ``name``; a ``ModelError`` listing the names when there is none."""
    p = folder() / f"{name}.yaml"
    if not p.is_file():
        raise ModelError(f"no example named '{name}'; the examples are: {', '.join(names())}", element=str(name))
    return p


def description(name):
    """The first line of the example's leading comment."""
    for line in path(name).read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            text = line.lstrip("#").strip()
            if text:
                return text
        else:
            break
    return ""
