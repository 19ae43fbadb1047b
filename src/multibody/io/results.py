"""Result files: ``.npz`` and ``.csv`` (``Result.save``) and HDF5 (``.h5``, ``.hdf5``; needs h5py).

The HDF5 layout mirrors the NPZ one: datasets ``t``, ``q``, ``v``, ``energy/<kind>``, ``residual/<k>``,
``reaction/<k>``, ``series/<k>``, ``contacts/<field>`` (k numbering the names, which are kept with the layout and ``info`` as JSON in
the file's attribute ``meta``), so :func:`load_result` gives back the same arrays bit for bit.
"""
import json
import numpy as np

from multibody.errors import ModelError, ResultFileError
from multibody.files import as_path, atomic_write, check_readable, unreadable
from multibody.result import Result, checked_meta

__all__ = ["save_result", "load_result", "HDF5_SUFFIXES", "have_h5py"]

HDF5_SUFFIXES = (".h5", ".hdf5")


def have_h5py():
    """True when h5py can be imported (HDF5 files are optional)."""
    try:
        import h5py  # noqa: F401
    except ImportError:
        return False
    return True


def _h5py(path):
    try:
        import h5py
    except ImportError:
        raise ModelError(f"'{path}': HDF5 files need h5py (pip install h5py); .npz and .csv need nothing",
                         element=str(path)) from None
    return h5py


def save_result(result, path):
    """Write ``result`` to ``path`` by its suffix: ``.npz``, ``.csv`` (``Result.save``) or ``.h5``/``.hdf5``; the
    file is replaced atomically, and a place that cannot be written is a ``ResultFileError`` naming the file."""
    path = as_path(path, "Result file")
    if path.suffix.lower() not in HDF5_SUFFIXES:
        return result.save(path)
    h5py = _h5py(path)
    meta = result.metadata_json()

    def write(fh):
        with h5py.File(fh, "w") as f:
            f.attrs["meta"] = meta
            for key in ("t", "q", "v"):
                f.create_dataset(key, data=getattr(result, key))
            for k, val in result.energy.items():
                f.create_dataset(f"energy/{k}", data=val)
            for group, d in (("residual", result.residuals), ("reaction", result.reactions),
                             ("series", result.series)):
                for i, val in enumerate(d.values()):
                    f.create_dataset(f"{group}/{i}", data=val)
            for key, val in (result.contacts.arrays() if result.contacts is not None else {}).items():
                f.create_dataset(key, data=val)

    return atomic_write(path, write, "Result file", mode="w+b")


def load_result(path):
    """Read a Result from ``.npz``, ``.csv`` or ``.h5``/``.hdf5`` (as written by :func:`save_result`). A missing,
    truncated, foreign or damaged file is a ``ResultFileError`` (a ``ModelError``) naming the file."""
    path = as_path(path, "Result file")
    if path.suffix.lower() not in HDF5_SUFFIXES:
        return Result.load(path)
    h5py = _h5py(path)
    check_readable(path, "Result file")
    try:
        with h5py.File(path, "r") as f:
            if "meta" not in f.attrs:
                raise ResultFileError(f"Result file '{path}' is not a multibody Result file (an HDF5 file without "
                                      "the Result's metadata)", path=path)
            meta = checked_meta(json.loads(f.attrs["meta"]), path)

            def get(key):
                if key not in f:
                    raise ResultFileError(f"Result file '{path}' is damaged: it has no dataset '{key}'", path=path)
                return np.asarray(f[key])

            return Result.from_file(get, meta, path)
    except Exception as exc:  # not an HDF5 file, truncated, a misfit shape, ...
        raise unreadable(path, "Result file", exc, "multibody Result file (HDF5)") from None
