"""Python objects named on the command line: ``MODULE:NAME`` or ``FILE.py:NAME`` (not a sub-command).

One loader for every sub-command that takes Python code by name (``multibody animate --model``, ``multibody
sweep TARGET``):

* ``MODULE:NAME`` — an importable module (``package.module``; the current folder is importable, as with
  ``python -m``) and a name in it (dotted names reach into it: ``module:Class.method``);
* ``FILE.py:NAME`` — a Python file and a name in it; the file's folder is importable while it runs, as for
  ``python FILE.py``.

:func:`load_object` returns the object. :func:`load_function` returns a function that can be sent to worker
processes: for ``MODULE:NAME`` the function itself (pickled by reference), for ``FILE.py:NAME`` a
:class:`FileFunction`, which loads the file again where it is called (the file must be readable there at the
same path: true for local processes and a local Dask cluster).
"""
import importlib
import importlib.util
import inspect
import os
import sys
import zlib

from multibody.errors import ModelError, shown

#: files loaded by this process: absolute path -> module
_LOADED = {}


def split_spec(spec, option):
    """``(where, name)`` of ``MODULE:NAME`` or ``FILE.py:NAME``; ``option`` names the argument in messages."""
    spec = str(spec).strip()
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name or not all(p.isidentifier() for p in name.split(".")):
        raise ModelError(f"{option} {shown(spec)!r}: expected MODULE:FUNCTION or FILE.py:FUNCTION (e.g. "
                         "multibody.parallel.studies:bicycle_stability or study.py:point)", element=option)
    if not where.endswith(".py") and not all(p.isidentifier() for p in where.split(".")):
        raise ModelError(f"{option} {shown(spec)!r}: '{where}' is neither a module name (package.module) nor a Python "
                         "file (FILE.py)", element=option)
    return where, name


def load_file(path, option="FILE"):
    """The module of the Python file ``path`` (executed once per process; its folder importable meanwhile)."""
    path = os.path.abspath(path)
    if path in _LOADED:
        return _LOADED[path]
    if not os.path.isfile(path):
        raise ModelError(f"{option}: no such Python file '{path}'", element=option)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    stem = "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    modname = f"_multibody_file_{stem}_{zlib.crc32(path.encode()):08x}"   # two files named alike stay apart
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module          # as an import does (dataclasses, pickling look the module up there)
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:           # a file that calls sys.exit, too
        del sys.modules[modname]
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ModelError(f"{option}: running '{path}' failed ({type(exc).__name__}: {exc})", element=option) from None
    _LOADED[path] = module
    return module


def import_module(modname, option):
    """``importlib.import_module`` with the current folder importable; failures are one-line ModelErrors."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:   # as `python -m` does: modules of the current folder
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        raise ModelError(f"{option}: cannot import module '{modname}' ({exc})", element=option) from None
    except BaseException as exc:           # a module that calls sys.exit, too
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ModelError(f"{option}: importing module '{modname}' failed ({type(exc).__name__}: {exc})",
                         element=option) from None


def _attribute(module, where, name, option):
    obj = module
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ModelError(f"{option} {where}:{name}: '{where}' has no '{name}'", element=option)
        obj = getattr(obj, part)
    return obj


def load_object(spec, option):
    """The object named by ``MODULE:NAME`` or ``FILE.py:NAME``."""
    where, name = split_spec(spec, option)
    module = load_file(where, option) if where.endswith(".py") else import_module(where, option)
    return _attribute(module, where, name, option)


def load_function(spec, option):
    """The function named by ``spec``, in a form worker processes can load (see the module docstring)."""
    where, name = split_spec(spec, option)
    fn = load_object(spec, option)
    if not callable(fn):
        raise ModelError(f"{option} {spec}: '{name}' is a {type(fn).__name__}, expected a function", element=option)
    return FileFunction(where, name) if where.endswith(".py") else fn


class FileFunction:
    """The function ``name`` of the Python file ``path``, picklable by the file's path: called in another
    process, it loads the file there first (once per process)."""

    def __init__(self, path, name):
        self.path, self.name = os.path.abspath(path), name

    def function(self):
        return _attribute(load_file(self.path, "FILE"), self.path, self.name, "FILE")

    def __call__(self, *args, **kwargs):
        return self.function()(*args, **kwargs)

    @property
    def __signature__(self):
        return inspect.signature(self.function())

    def __repr__(self):
        return f"{self.path}:{self.name}"
