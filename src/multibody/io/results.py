"""Result files: ``.npz`` and ``.csv`` (``Result.save``) and HDF5 (``.h5``, ``.hdf5``; needs h5py).

The HDF5 layout mirrors the NPZ one: datasets ``t``, ``q``, ``v``, ``energy/<kind>``, ``residual/<k>``,
``reaction/<k>``, ``series/<k>`` (k numbering the names, which are kept with the layout and ``info`` as JSON in
the file's attribute ``meta``), so :func:`load_result` gives back the same arrays bit for bit.
"""
import json
from pathlib import Path

import numpy as np

from multibody.errors import ModelError
from multibody.result import Result

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
    """Write ``result`` to ``path`` by its suffix: ``.npz``, ``.csv`` (``Result.save``) or ``.h5``/``.hdf5``."""
    path = Path(path)
    if path.suffix.lower() not in HDF5_SUFFIXES:
        return result.save(path)
    h5py = _h5py(path)
    with h5py.File(path, "w") as f:
        f.attrs["meta"] = result.meta_json()
        for key in ("t", "q", "v"):
            f.create_dataset(key, data=getattr(result, key))
        for k, val in result.energy.items():
            f.create_dataset(f"energy/{k}", data=val)
        for group, d in (("residual", result.residuals), ("reaction", result.reactions), ("series", result.series)):
            for i, val in enumerate(d.values()):
                f.create_dataset(f"{group}/{i}", data=val)
    return path


def load_result(path):
    """Read a Result from ``.npz``, ``.csv`` or ``.h5``/``.hdf5`` (as written by :func:`save_result`)."""
    path = Path(path)
    if path.suffix.lower() not in HDF5_SUFFIXES:
        return Result.load(path)
    h5py = _h5py(path)
    with h5py.File(path, "r") as f:
        meta = json.loads(f.attrs["meta"])
        if meta.get("format") != "multibody.Result":
            raise ModelError(f"'{path}' is not a multibody Result file", element=str(path))
        get = lambda key: np.asarray(f[key])  # noqa: E731
        return Result(get("t"), get("q"), get("v"), energy={k: get(f"energy/{k}") for k in meta["energy"]},
                      residuals={k: get(f"residual/{i}") for i, k in enumerate(meta["residuals"])},
                      reactions={k: get(f"reaction/{i}") for i, k in enumerate(meta["reactions"])},
                      series={k: get(f"series/{i}") for i, k in enumerate(meta.get("series", {}))},
                      info=meta["info"], q_names=meta["q_names"], v_names=meta["v_names"])
