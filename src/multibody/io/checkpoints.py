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
``extra_*``     arrays a run keeps besides (the time-stepping model's contacts and the impulses that start its
                next solve; ``Checkpoint.extra``)
==============  ===========================================================================================

A run across switches (joint limits, latches, releases) also has ``switching`` in ``meta``: its structures (the
joints separated so far, with their times), the state of its mode and its switch log; its ``x`` and ``out_x`` are
then rows of the run's full coordinate set (``switching/run.py``), NaN where the structure of the
moment has no such coordinate.

Files are replaced atomically (``multibody.files.atomic_write``: written to a temporary file in the same folder,
then ``os.replace``): a run killed at any moment leaves the previous checkpoint or the new one, never a torn file.
Refused before the run starts: what cannot be written as data, with a ``ModelError`` saying why (a Python torque
callback (``tau`` or the model's), event functions, a symbolic model, formulation options that are not numbers or
text); and a place that cannot be written (a folder, a missing folder, no permission), with a
``ResultFileError`` naming the file. A checkpoint that cannot be written in the middle of a run fails the run with
an ``IntegrationError`` that carries what was computed.

Reading: a missing, truncated, foreign or damaged file, or one of a newer format version, is a
``ResultFileError`` (a ``ModelError``) naming the file; before a run is resumed, :func:`check_resumable` checks
that the checkpoint is a state of the run its settings describe (its step and time agree, its outputs are those
of the steps up to it, ...), naming the field that does not fit.
"""
import json
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError, ResultFileError, shown
from multibody.files import as_path, atomic_write, check_readable, check_writable, unreadable

FORMAT = "multibody.checkpoint"
#: the prefix of the names of the extra arrays in the file
EXTRA = "extra_"
#: the format version written; files of a larger version are refused (written by a newer multibody)
VERSION = 1

#: the keyword arguments of ``simulate`` a checkpoint keeps in its JSON settings (arrays are kept apart)
SETTINGS = ("method", "h", "rtol", "atol", "n_out", "output_every", "formulation", "options", "t0", "t_end",
            "energy", "max_steps", "every", "contact")
#: the settings that files written before them lack (read as None)
LATER_SETTINGS = ("contact",)


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
    #: the state of a run across switches (limits, latches, releases): its structures, mode and switch log, as
    #: JSON data (``switching/run.py``); None for other runs
    switching: dict = None
    #: arrays a run keeps besides its state and outputs (the time-stepping model's contacts and the impulses that
    #: start its next solve, ``contact/stepping_run.py``), by name
    extra: dict = None


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
        self.path = as_path(path, "checkpoint")
        if callable(tau):
            raise ModelError(f"checkpoint=: tau is a Python callable ({shown(tau)!r}); a checkpoint holds data, not code, "
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
        self.path = check_writable(self.path, "checkpoint")   # before the run: never fail at its first write

    def write(self, t, step, x, out_t, out_x, out_obs=None, stats=None, finished=False, switching=None, extra=None):
        """Replace the checkpoint file by the state ``x`` at time ``t`` (step number ``step`` of a fixed-step run,
        else None) and the outputs so far; ``finished``: the run is complete; ``switching``: the JSON data of a run
        across switches (its structures, mode, switch log); ``extra``: named arrays of numbers the run keeps besides
        (``Checkpoint.extra``)."""
        meta = dict(self.meta, t=float(t), step=None if step is None else int(step), finished=bool(finished),
                    stats={k: int(v) for k, v in (stats or {}).items()})
        if switching is not None:
            meta["switching"] = _json(switching, "the state of the switches")
        n = np.asarray(x).shape[0]
        arrays = dict(self.arrays, meta=np.array(json.dumps(meta)), x=np.asarray(x, dtype=np.float64),
                      out_t=np.asarray(out_t, dtype=np.float64).reshape(-1),
                      out_x=np.asarray(out_x, dtype=np.float64).reshape(-1, n))
        if out_obs is not None:
            arrays["out_obs"] = np.asarray(out_obs, dtype=np.float64)
        for name, value in (extra or {}).items():
            arrays[EXTRA + name] = np.asarray(value)
        atomic_write(self.path, lambda fh: np.savez(fh, **arrays), "checkpoint")


def read(path):
    """The :class:`Checkpoint` in the file ``path``; a ``ResultFileError`` (a ``ModelError``) saying what is wrong
    for a missing, corrupt or foreign file or one of a newer format version."""
    path = check_readable(path, "checkpoint")
    where = f"checkpoint '{path}'"
    try:
        with np.load(path, allow_pickle=False) as z:
            if "meta" not in z.files:
                raise ResultFileError(f"{where} is not a multibody checkpoint (no metadata)", path=path)
            meta = json.loads(str(z["meta"]))
            arrays = {name: z[name] for name in z.files if name != "meta"}
    except Exception as exc:  # not a zip file, truncated, pickled objects, bad JSON, ...
        raise unreadable(path, "checkpoint", exc, "multibody checkpoint") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        found = meta.get("format") if isinstance(meta, dict) else None
        raise ResultFileError(f"{where} is not a multibody checkpoint (format {shown(found)!r})", path=path)
    version = meta.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise ResultFileError(f"{where} has format version {version!r}; this multibody reads versions up to "
                              f"{VERSION} (it was written by a newer multibody: upgrade to resume it)", path=path)
    try:
        from multibody.io.model_files import model_from_dict

        model = model_from_dict(meta["model"], source=f"{where}: model").model
        settings = {k: meta["settings"].get(k) if k in LATER_SETTINGS else meta["settings"][k] for k in SETTINGS}
        ck = Checkpoint(model=model, settings=settings, q0=arrays.get("q0"), v0=arrays.get("v0"),
                        tau=arrays.get("tau"), t_eval=arrays.get("t_eval"), t=float(meta["t"]),
                        step=None if meta["step"] is None else int(meta["step"]), x=arrays["x"],
                        out_t=arrays["out_t"], out_x=arrays["out_x"], out_obs=arrays.get("out_obs"),
                        stats=dict(meta["stats"]), finished=bool(meta["finished"]), path=str(path),
                        switching=meta.get("switching"),
                        extra={k[len(EXTRA):]: a for k, a in arrays.items() if k.startswith(EXTRA)})
    except ModelError as exc:
        raise ResultFileError(f"{where} is damaged: {exc}", path=path) from exc
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResultFileError(f"{where} is damaged or incomplete ({type(exc).__name__}: {exc})", path=path) from None
    if ck.x.ndim != 1 or ck.out_t.ndim != 1 or ck.out_x.shape != (ck.out_t.shape[0],) + ck.x.shape:
        raise ResultFileError(f"{where} is damaged: its arrays x {ck.x.shape}, out_t {ck.out_t.shape} and out_x "
                              f"{ck.out_x.shape} do not fit together", path=path, element="checkpoint x")
    return ck


def check_resumable(ck, size, t0, t_end, grid=None, t_eval=None, nobs=0):
    """Check that the checkpoint ``ck`` is a state of the run its settings describe, before it is resumed: a
    ``ResultFileError`` naming the field that does not fit (a file edited by hand, or damaged) otherwise.

    ``size``: the length of the run's state; ``t0``, ``t_end``: its span; ``grid = (nsteps, h, save)`` for a
    fixed-step run (its step count, step and saved step numbers), None for an adaptive one; ``t_eval``: its output
    times (adaptive), or None; ``nobs``: the numbers the compiled loop records with each output (fixed steps).
    Checked: x has the run's size and is finite; t lies in [t0, t_end]; the outputs are finite, increasing and not
    after t; a fixed-step checkpoint's t is the time of its step, and its outputs are those of the steps up to it;
    an adaptive one's outputs are its ``t_eval`` up to t (or end at t); a finished one has reached the end.
    """
    where = f"checkpoint '{ck.path}'"

    def bad(field, what):
        raise ResultFileError(f"{where} does not fit its run: {field} {what} (edited or damaged?)", path=ck.path,
                              element=f"checkpoint {field}")

    if ck.x.shape != (size,):
        bad("x", f"has {ck.x.size} entries, the state of the run has {size}")
    if not np.all(np.isfinite(ck.x)):
        bad("x", "is not finite")
    if not (np.isfinite(ck.t) and t0 <= ck.t <= t_end):
        bad("t", f"= {ck.t} is outside the run's span [t0, t_end] = [{t0}, {t_end}]")
    if not (np.all(np.isfinite(ck.out_t)) and np.all(np.isfinite(ck.out_x))):
        bad("out_t/out_x", "are not finite")
    if ck.out_t.size and (np.any(np.diff(ck.out_t) <= 0) or ck.out_t[0] < t0 or ck.out_t[-1] > ck.t):
        bad("out_t", f"are not increasing times in [t0, t] = [{t0}, {ck.t}]")
    if any(not isinstance(v, int) or v < 0 for v in ck.stats.values()):
        bad("stats", f"= {ck.stats} are not counts")
    if grid is not None:
        nsteps, h, save = grid
        if ck.step is None or not 0 <= ck.step <= nsteps:
            bad("step", f"= {ck.step} is not a step number of the run (0..{nsteps})")
        if abs(ck.t - (t0 + ck.step * h)) > 1e-9 * h:
            bad("t", f"= {shown(ck.t)!r} is not the time of step {ck.step} (t0 + step h = {t0 + ck.step * h!r})")
        if ck.step > 0:
            want = t0 + save[save <= ck.step] * h
            if ck.out_t.shape != want.shape or np.any(np.abs(ck.out_t - want) > 1e-9 * h):
                bad("out_t", f"are not the outputs of steps 0..{ck.step} ({want.size} times)")
            if nobs and (ck.out_obs is None or ck.out_obs.shape != (want.size, nobs)):
                bad("out_obs", f"do not hold {nobs} numbers for each of the {want.size} outputs")
        if ck.finished and ck.step != nsteps:
            bad("finished", f"is set at step {ck.step} of {nsteps}")
        return
    if ck.step is not None:
        bad("step", f"= {ck.step} is set, and the run is adaptive (no step numbers)")
    if ck.t > t0:
        if t_eval is not None:
            want = np.asarray(t_eval, dtype=float)
            want = want[want <= ck.t]
            if ck.out_t.shape != want.shape or np.any(ck.out_t != want):
                bad("out_t", f"are not the output times t_eval up to t = {ck.t}")
        elif not ck.out_t.size or ck.out_t[-1] != ck.t:
            bad("t", f"= {shown(ck.t)!r} is not the time of the last output")
    if ck.finished and ck.t != t_end:
        bad("finished", f"is set at t = {ck.t} before t_end = {t_end}")
