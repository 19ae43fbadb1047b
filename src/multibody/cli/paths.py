"""Output files named on the command line, checked before the work that fills them (not a sub-command).

A computation of minutes must not end in ``IsADirectoryError`` when its result is written: every sub-command
that writes a file calls :func:`output_file` (or :func:`output_folder`) on it first.
"""
import os

from multibody.errors import ModelError


def output_file(path, option):
    """Check that ``path`` can be written as a file (its folder exists and is writable, it is not a folder, an
    existing file is writable); returns ``path``. ``option`` names the argument in the one-line ModelError."""
    if path is None:
        return None
    text = os.fspath(path)
    if not text or text.endswith(os.sep) or os.path.isdir(text):
        raise ModelError(f"{option} '{text}' is a folder; expected a file name", element=option)
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise ModelError(f"{option} '{text}': the folder '{folder}' does not exist", element=option)
    if os.path.exists(text):
        if not os.access(text, os.W_OK):
            raise ModelError(f"{option} '{text}' exists and cannot be written (permissions)", element=option)
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise ModelError(f"{option} '{text}': the folder '{folder}' cannot be written (permissions)", element=option)
    return path


def output_folder(path, option):
    """Create the folder ``path`` (and its parents) if needed and check that files can be written in it;
    returns ``path``."""
    text = os.fspath(path)
    if os.path.exists(text) and not os.path.isdir(text):
        raise ModelError(f"{option} '{text}' is a file; expected a folder", element=option)
    try:
        os.makedirs(text, exist_ok=True)
    except OSError as exc:
        raise ModelError(f"{option} '{text}': cannot create the folder ({exc.strerror})", element=option) from None
    if not os.access(text, os.W_OK | os.X_OK):
        raise ModelError(f"{option} '{text}': the folder cannot be written (permissions)", element=option)
    return path
