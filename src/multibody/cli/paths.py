"""Output files named on the command line, checked before the work that fills them (not a sub-command).

A computation of minutes must not end in ``IsADirectoryError`` when its result is written: every sub-command
that writes a file calls :func:`output_file` (or :func:`output_folder`) on it first.
"""
import os

from multibody.errors import ModelError


def output_file(path, option):
    """Check that ``path`` can be written as a file (its folder exists, it is not a folder, and opening it for
    writing works: an existing file is opened to append, without a change; a new one is created and removed);
    returns ``path``. ``option`` names the argument in the one-line ModelError."""
    if path is None:
        return None
    text = os.fspath(path)
    if not text or text.endswith(os.sep) or os.path.isdir(text):
        raise ModelError(f"{option} '{text}' is a folder; expected a file name", element=option)
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise ModelError(f"{option} '{text}': the folder '{folder}' does not exist", element=option)
    try:   # a real test, also where permissions do not tell (root, /proc, read-only mounts)
        if os.path.exists(text):
            if os.path.isfile(text):     # not a device or a pipe, which opening may block or change
                with open(text, "ab"):
                    pass
        else:
            with open(text, "xb"):
                pass
            os.remove(text)
    except OSError as exc:
        raise ModelError(f"{option} '{text}' cannot be written ({exc.strerror})", element=option) from None
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
    probe = os.path.join(text, f".multibody-write-test-{os.getpid()}")
    try:
        with open(probe, "xb"):
            pass
        os.remove(probe)
    except OSError as exc:
        raise ModelError(f"{option} '{text}': files cannot be written in the folder ({exc.strerror})",
                         element=option) from None
    return path
