"""Checkpoint files of long runs: ``simulate(..., checkpoint=path, every=...)`` writes one, ``resume(path)``
continues the run from it (``multibody.simulation``).

A checkpoint holds everything needed to continue: the model (the data of a model file,
:func:`multibody.io.model_to_dict`), the arguments of the call, the time (and, for fixed steps, the step number)
reached with the state there, the outputs produced so far, and a format version. The file is a numpy ``.npz``
archive read with ``allow_pickle=False`` — numbers in arrays, settings in JSON text, never pickle:

==============  ===========================================================================================
``meta``        JSON: ``format`` ("multibody.checkpoint"), ``version``, ``model`` (model-file data),
                ``settings`` (the keyword arguments of ``simulate``), ``t``, ``step`` (fixed-step methods,
                else null), ``finished``, ``stats`` (steps and evaluations so far)
``x``           the state reached (the formulation's state vector, e.g. ``[q, v]``)
``out_t``       the output times so far; ``out_x`` the states there; ``out_obs`` what the compiled loop
                recorded with them (the energies)
``q0``, ``v0``  the initial state of the call (absent: the defaults)
``tau``         constant generalized forces of the call (absent: none)
``t_eval``      the output times asked for (absent: none)
==============  ===========================================================================================

Files are replaced atomically (written to a temporary file in the same folder, then ``os.replace``): a run
killed at any moment leaves the previous checkpoint or the new one, never a torn file. What cannot be written
as data is refused before the run starts with a ``ModelError`` saying why: a Python torque callback (``tau`` or
the model's), event functions, a symbolic model, formulation options that are not numbers or text.
"""
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from multibody.errors import ModelError

FORMAT = "multibody.checkpoint"
#: the format version written; files of a larger version are refused (written by a newer multibody)
VERSION = 1

#: the keyword arguments of ``simulate`` a checkpoint keeps in its JSON settings (arrays are kept apart)
SETTINGS = ("method", "h", "rtol", "atol", "n_out", "output_every", "formulation", "options", "t0", "t_end",
            "energy", "max_steps", "every")


@dataclass
class Checkpoint:
    """The content of a checkpoint file (see the module docstring); ``read`` returns it."""

    model: object
    settings: dict
    q0: np.ndarray
    v0: np.ndarray
    tau: np.ndarray
    t_eval: np.ndarray
    t: float
    step: int
    x: np.ndarray
    out_t: np.ndarray
    out_x: np.ndarray
    out_obs: np.ndarray
    stats: dict
    finished: bool
    path: str = None


def _json(value, what):
    try:
        return json.loads(json.dumps(value, default=_plain))
    except (TypeError, ValueError) as exc:
        raise ModelError(f"checkpoint=: {what} cannot be written to a checkpoint file ({exc}); only numbers, text "
                         "and arrays of numbers can", element=what) from None


def _plain(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray) and obj.dtype.kind in "biuf":
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} {obj!r} is not data")


class Writer:
    """Writes the checkpoints of one run to ``path``. Made before the run starts, it checks that the run can be
    written (the model as a model file, the arguments as data) and refuses it with a ``ModelError`` otherwise."""

    def __init__(self, path, model, settings, q0=None, v0=None, tau=None, t_eval=None, events=None):
        self.path = Path(path)
        if callable(tau):
            raise ModelError(f"checkpoint=: tau is a Python callable ({tau!r}); a checkpoint holds data, not code, "
                             "so the run could not be continued from it. Give constant torques as an array, or "
                             "time-varying ones as expressions in the model (a model file's joint efforts, "
                             "multibody.io.ExpressionTorque), or run without checkpoint=", element="tau")
        if events is not None:
            raise ModelError("checkpoint=: event functions are Python code, which a checkpoint cannot hold; run "
                             "without events or without checkpoint=", element="events")
        from multibody.io.writer import model_to_dict

        try:
            model_data = model_to_dict(model)
        except ModelError as exc:
            raise ModelError(f"checkpoint=: the model cannot be written to a checkpoint (it is stored as a model "
                             f"file): {exc}", element=getattr(exc, "element", None)) from exc
        self.meta = {"format": FORMAT, "version": VERSION, "model": _json(model_data, "the model"),
                     "settings": _json({k: settings.get(k) for k in SETTINGS}, "the settings (formulation options)")}
        self.arrays = {}
        for name, value in (("q0", q0), ("v0", v0), ("tau", tau), ("t_eval", t_eval)):
            if value is not None:
                try:
                    self.arrays[name] = np.array(value, dtype=np.float64)
                except (TypeError, ValueError):
                    raise ModelError(f"checkpoint=: {name} must be an array of numbers", element=name) from None
        folder = self.path.parent
        if not folder.is_dir():
            raise ModelError(f"checkpoint=: the folder of '{self.path}' does not exist", element="checkpoint")

    def write(self, t, step, x, out_t, out_x, out_obs=None, stats=None, finished=False):
        """Replace the checkpoint file by the state ``x`` at time ``t`` (step number ``step`` of a fixed-step run,
        else None) and the outputs so far; ``finished``: the run is complete."""
        meta = dict(self.meta, t=float(t), step=None if step is None else int(step), finished=bool(finished),
                    stats={k: int(v) for k, v in (stats or {}).items()})
        n = np.asarray(x).shape[0]
        arrays = dict(self.arrays, meta=np.array(json.dumps(meta)), x=np.asarray(x, dtype=np.float64),
                      out_t=np.asarray(out_t, dtype=np.float64).reshape(-1),
                      out_x=np.asarray(out_x, dtype=np.float64).reshape(-1, n))
        if out_obs is not None:
            arrays["out_obs"] = np.asarray(out_obs, dtype=np.float64)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **arrays)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


def read(path):
    """The :class:`Checkpoint` in the file ``path``; a ``ModelError`` saying what is wrong for a missing, corrupt
    or foreign file or one of a newer format version."""
    path = Path(path)
    where = f"checkpoint '{path}'"
    if not path.is_file():
        raise ModelError(f"{where} does not exist", element=str(path))
    try:
        with np.load(path, allow_pickle=False) as z:
            if "meta" not in z.files:
                raise ModelError(f"{where} is not a multibody checkpoint (no metadata)", element=str(path))
            meta = json.loads(str(z["meta"]))
            arrays = {name: z[name] for name in z.files if name != "meta"}
    except ModelError:
        raise
    except Exception as exc:  # not a zip file, truncated, pickled objects, bad JSON, ...
        raise ModelError(f"{where} is not a readable multibody checkpoint: {type(exc).__name__}: {exc}",
                         element=str(path)) from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ModelError(f"{where} is not a multibody checkpoint (format {meta.get('format') if isinstance(meta, dict) else None!r})",
                         element=str(path))
    version = meta.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise ModelError(f"{where} has format version {version!r}; this multibody reads versions up to {VERSION} "
                         "(it was written by a newer multibody: upgrade to resume it)", element=str(path))
    try:
        from multibody.io.model_files import model_from_dict

        model = model_from_dict(meta["model"], source=f"{where}: model").model
        settings = {k: meta["settings"][k] for k in SETTINGS}
        ck = Checkpoint(model=model, settings=settings, q0=arrays.get("q0"), v0=arrays.get("v0"),
                        tau=arrays.get("tau"), t_eval=arrays.get("t_eval"), t=float(meta["t"]),
                        step=None if meta["step"] is None else int(meta["step"]), x=arrays["x"],
                        out_t=arrays["out_t"], out_x=arrays["out_x"], out_obs=arrays.get("out_obs"),
                        stats=dict(meta["stats"]), finished=bool(meta["finished"]), path=str(path))
    except ModelError as exc:
        raise ModelError(f"{where} is damaged: {exc}", element=str(path)) from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelError(f"{where} is damaged or incomplete ({type(exc).__name__}: {exc})",
                         element=str(path)) from None
    if ck.out_x.shape[0] != ck.out_t.shape[0] or ck.x.ndim != 1 or ck.out_x.shape[1:] != ck.x.shape:
        raise ModelError(f"{where} is damaged: its arrays do not fit together", element=str(path))
    return ck
