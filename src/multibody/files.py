"""The files of runs — Result files and checkpoints — written without loss, read with one clear error.

* :func:`check_writable` checks a place before anything is computed: the path is not a folder, its folder exists
  and a file can be made in it (by making and removing one), so that a run never fails at its end, or in its
  middle, for want of a place to write to.
* :func:`atomic_write` writes a file to a temporary file in the same folder, flushed to the disk, then puts it in
  place with ``os.replace``: a write that fails, or a process killed while writing, leaves the previous file or
  the new one, never a torn one. The file keeps the permissions of the file it replaces (a new one: those the
  process's umask gives).
* :func:`writable_file` readies a place for a file that a view or a writer makes (a page, a figure, a model
  file): not a folder, its folder made when missing; :func:`write_text` writes text there atomically.
* :func:`check_readable` and :func:`unreadable` turn a missing file, a folder, a truncated, foreign or damaged file
  into one :class:`~multibody.errors.ResultFileError` line that names the file and what is wrong.
* :func:`check_options` refuses a keyword that a function passing ``**options`` on does not take, naming it and
  those it takes (a ``ModelError``), instead of the inner function's ``TypeError``.

Every failure is a ``ResultFileError`` (a ``ModelError`` and an ``OSError``) naming the file.
"""
import os
import stat
import tempfile
from pathlib import Path

from multibody.errors import ModelError, ResultFileError

__all__ = ["as_path", "check_writable", "writable_file", "write_text", "atomic_write", "check_readable",
           "unreadable", "check_options"]


def as_path(path, what):
    """``path`` as a ``Path``, or a ``ResultFileError`` saying that ``what`` must be a file name."""
    try:
        return Path(path)
    except TypeError:
        raise ResultFileError(f"{what} must be a file name (str or path), got {path!r}", element=what) from None


def _reason(exc):
    """One line saying why an OSError happened (its strerror when it has one)."""
    text = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())


def check_writable(path, what):
    """Check that the file ``path`` can be written (see the module docstring); returns it as a ``Path``."""
    path = as_path(path, what)
    if path.is_dir():
        raise ResultFileError(f"{what} '{path}' is a folder; give the name of a file in it", path=path)
    folder = path.parent
    if not folder.is_dir():
        state = "is not a folder" if folder.exists() else "does not exist"
        raise ResultFileError(f"{what} '{path}': its folder '{folder}' {state}", path=path)
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ResultFileError(f"{what} '{path}' cannot be written: {_reason(exc)} (folder '{folder}')",
                              path=path) from None
    return path


def writable_file(path, what):
    """``path`` as a ``Path`` a file can be written to: a ``ResultFileError`` naming ``what`` when it is a folder or
    its folder cannot be made (a file in the way, no permission); its missing folders are made."""
    path = as_path(path, what)
    if path.is_dir():
        raise ResultFileError(f"{what} '{path}' is a folder; give the name of a file in it", path=path)
    folder = path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
        why = f"'{blocking}' is a file, not a folder" if blocking is not None else _reason(exc)
        raise ResultFileError(f"{what} '{path}': its folder '{folder}' cannot be made: {why}", path=path) from None
    return path


def write_text(path, text, what):
    """Write ``text`` (UTF-8) to the file ``path`` (:func:`writable_file`, then :func:`atomic_write`); returns the
    path."""
    path = writable_file(path, what)
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")), what)


def check_options(options, function, what, exclude=()):
    """A ``ModelError`` for the first keyword of ``options`` that ``function`` (to which ``what`` passes them on)
    does not take, naming it and the keywords it takes (those in ``exclude`` left out of the list)."""
    import inspect

    params = inspect.signature(function).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return
    takes = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    unknown = sorted(set(options) - set(takes))
    if unknown:
        listed = [n for n in takes if n not in exclude]
        raise ModelError(f"{what}: no option {unknown[0]!r}; it takes {', '.join(listed)}", element=unknown[0])


def _umask():
    """The process's umask, read without changing it (Linux: /proc/self/status; elsewhere the usual 022)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def atomic_write(path, write, what, mode="wb"):
    """Write the file ``path`` by ``write(fh)`` on a temporary file opened with ``mode`` in the same folder, then
    replace ``path`` by it (see the module docstring). An ``OSError`` is a ``ResultFileError`` naming ``what`` and
    the file; nothing is left behind but the previous file. Returns ``path`` as a ``Path``."""
    path = as_path(path, what)
    if path.is_dir():
        raise ResultFileError(f"{what} '{path}' is a folder; give the name of a file in it", path=path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ResultFileError(f"{what} '{path}' cannot be written: {_reason(exc)}", path=path) from None
    try:
        with os.fdopen(fd, mode) as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            perms = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            perms = 0o666 & ~_umask()
        os.chmod(tmp, perms)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ResultFileError(f"{what} '{path}' could not be written: {_reason(exc)}", path=path) from exc
        raise
    return path


def check_readable(path, what):
    """``path`` as a ``Path`` when it is an existing file, else a ``ResultFileError`` saying what it is."""
    path = as_path(path, what)
    if path.is_dir():
        raise ResultFileError(f"{what} '{path}' is a folder, not a file", path=path)
    if not path.is_file():
        raise ResultFileError(f"{what} '{path}' does not exist", path=path)
    return path


def unreadable(path, what, exc, kind):
    """The ``ResultFileError`` for an exception ``exc`` met while reading ``path`` as a ``kind`` (e.g. "multibody
    Result file"): one line with the file and the cause."""
    cause = f"{type(exc).__name__}: {' '.join(str(exc).split())}" if str(exc) else type(exc).__name__
    if isinstance(exc, ResultFileError):
        return exc
    return ResultFileError(f"{what} '{path}' is not a readable {kind} (truncated, damaged or not written by "
                           f"multibody): {cause}", path=path)
