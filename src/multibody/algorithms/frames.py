"""Frame algorithms: the placement, spatial velocity and acceleration, 6-D Jacobian and its time derivative of a
named frame (``Model.frames``: every URDF link and fixed frame, the frames added with ``ModelBuilder.add_frame``,
and every body's own frame under the body's name).

| function | result |
|---|---|
| ``frame_placement(model, q, frame)`` | (R, p): the frame's axes and origin in ground coordinates |
| ``frame_jacobian(model, q, frame, reference)`` | J (6, nv) with the frame's velocity = J v |
| ``frame_velocity(model, q, v, frame, reference)`` | (6,) spatial velocity |
| ``frame_acceleration(model, q, v, a, frame, reference, classical)`` | (6,) spatial or classical acceleration |
| ``frame_jacobian_time_variation(model, q, v, frame, reference)`` | J̇ (6, nv), the time derivative of J along v |
| ``frame_jacobians(model, q, frames=None, reference)`` | J (nf, 6, nv) of many frames (default: all) |
| ``frame_placements(model, q, frames=None)`` | (R (nf, 3, 3), p (nf, 3)) |
| ``frame_velocities(model, q, v, frames=None, reference)`` | (nf, 6) |
| ``frame_accelerations(model, q, v, a, frames=None, reference, classical)`` | (nf, 6) |

A frame is named by its name, by its handle ``model.frame_id(name)`` (an int, the fastest: no look-up per call) or by
a ``Frame``; ``model.frame_names`` lists them in the order of the handles (every frame of ``model.frames``, then the
bodies' own frames). The calls for one frame compute the kinematics of the bodies on its path from the ground only
(Pinocchio's ``computeFrameJacobian``); those for many frames make one pass over all the bodies (Pinocchio's
``computeJointJacobians`` + ``getFrameJacobian`` per frame). Called with a float64 q (and v, a) and the Data kept on
the model (or ``data=``), a call goes straight to the compiled kernel.

Every 6-vector and every Jacobian row is ``[angular; linear]`` (Pinocchio's are ``[linear; angular]``). The
``reference`` is one of (Pinocchio's ``ReferenceFrame``, with its meaning):

* ``"local"`` (the default, as in Pinocchio): the frame's own Plücker coordinates, [ω; v] of the frame's origin
  in the frame's axes;
* ``"world"``: ground Plücker coordinates, [ω; v_O] with v_O the velocity of the body point that is at the
  ground origin (the coordinates in which spatial vectors add along a chain);
* ``"local_world_aligned"``: the frame's origin, ground axes: [ω; ṗ].

Accelerations: the *spatial* acceleration (``classical=False``) is the time derivative of the spatial velocity
in "world" and "local" ([ω̇; v̇_O] in "world"); ``classical=True`` adds ω × v to its linear part (the velocity
[ω; v] in the same reference), which gives the acceleration p̈ of the frame's origin in "local_world_aligned"
(in "local", its frame components) — Pinocchio's ``getFrameAcceleration`` and ``getFrameClassicalAcceleration``.
J̇ is the time derivative of each reference's Jacobian (Pinocchio's ``getFrameJacobianTimeVariation``), so
J̇ v is the frame's acceleration at q̈ = 0: spatial in "world" and "local", classical in "local_world_aligned".
The methods are in ``kernels/frames.py`` (RBDA §4.1.3; seed 001 §3.4.4, the partial velocities).

With a moving base (``model.base_motion``, at time ``t``) velocities and accelerations are absolute; J is the
part of the velocity that v makes.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder(gravity=(0, 0, -9.81))
>>> b.add_body("arm", mass=1.0, com=(0.5, 0, 0), inertia=np.diag([0.01, 0.1, 0.1]))
'arm'
>>> b.add_joint("shoulder", mb.Revolute(axis=(0, 0, 1)), parent="ground", child="arm")
'shoulder'
>>> b.add_frame("tip", "arm", mb.Placement(translation=(1, 0, 0)))
'tip'
>>> model = b.build()
>>> q, v = np.array([np.pi / 2]), np.array([2.0])
>>> R, p = frame_placement(model, q, "tip")
>>> np.round(p, 12).tolist()
[0.0, 1.0, 0.0]
>>> np.round(frame_velocity(model, q, v, "tip", "local_world_aligned"), 12).tolist()   # [ω; ṗ]
[0.0, 0.0, 2.0, -2.0, 0.0, 0.0]
>>> (np.round(frame_acceleration(model, q, v, [0.0], "tip", "local_world_aligned", classical=True), 12) + 0).tolist()
[0.0, 0.0, 0.0, 0.0, -4.0, 0.0]
"""
import numpy as np

from multibody.algorithms.dynamics import (FAST_PATH_MISSES, as_output, as_vector, bind_on_first_call, data_at,
                                           fill_general)
from multibody.model.data import no_entry, refuse_general_joints
from multibody.errors import ModelError
from multibody.kernels.frames import (LOCAL, LOCAL_WORLD_ALIGNED, O_ACC, O_P, O_R, O_VEL, OUT_WIDTH, WORLD,
                                      frame_jacobian_kernel, frame_jacobian_rate_kernel, frame_jacobians_kernel,
                                      frame_kernel, frame_placement_kernel, frame_states_kernel)
from multibody.kernels.packing import pack_frames
from multibody.model.geometry import Frame

__all__ = ["frame_placement", "frame_jacobian", "frame_velocity", "frame_acceleration",
           "frame_jacobian_time_variation", "frame_jacobians", "frame_placements", "frame_velocities",
           "frame_accelerations", "REFERENCES"]

#: the names of the references and their codes in ``kernels/frames.py``
REFERENCES = {"world": WORLD, "local": LOCAL, "local_world_aligned": LOCAL_WORLD_ALIGNED}
_F64 = np.dtype(np.float64)
_empty = np.empty
#: as ``FAST_PATH_MISSES``, and KeyError: a frame's name or a reference not in the tables (the slow path names it)
_MISSES = FAST_PATH_MISSES + (KeyError,)
#: no placements wanted from ``frame_jacobians_kernel``
_NO_STATES = np.zeros((0, OUT_WIDTH))
# the compiled entry points of the fast paths (``algorithms.dynamics``, "the fast path")
_FJ = bind_on_first_call(frame_jacobian_kernel, "_FJ", globals())
_FS = bind_on_first_call(frame_kernel, "_FS", globals())
_FJS = bind_on_first_call(frame_jacobians_kernel, "_FJS", globals())
_FP = bind_on_first_call(frame_placement_kernel, "_FP", globals())
_R_SHAPE = (3, 3)


def frame_in_body(model, frame):
    """``(body, F)``: the body index of ``frame`` (a name of ``model.frame``, or a ``Frame``) and the frame's
    placement in the body's kernel frame as the 12 numbers the kernels read (R row-major, p): the placement on
    the user's body frame composed with ``model.body_frames`` (see ``Model``)."""
    if isinstance(frame, Frame):
        f = frame
        if not 0 <= f.body <= model.nbodies or model.body_names[f.body] != f.body_name:
            raise ModelError(f"frame '{f.name}' is on body '{f.body_name}', which model '{model.name}' does not have "
                             f"at index {f.body}", element=f"frame '{f.name}'")
    elif isinstance(frame, str):
        f = model.frame(frame)
    else:
        raise ModelError(f"frame must be a frame's name (a string), a handle (model.frame_id(name)) or a Frame, got "
                         f"{frame!r}", element="frame")
    P = model.body_frames[f.body] * f.placement
    return f.body, np.concatenate([np.asarray(P.rotation, dtype=float).reshape(9),
                                   np.asarray(P.translation, dtype=float)])


def reference_code(reference):
    """The kernels' code of ``reference`` (a key of ``REFERENCES``), or a ``ModelError`` listing them."""
    try:
        return REFERENCES[reference]
    except (KeyError, TypeError):
        raise ModelError(f"reference must be one of {', '.join(map(repr, REFERENCES))}, got {reference!r}",
                         element="reference") from None


def frame_row(model, d, frame):
    """``(fi, ff, k)``: a frame table and the row of ``frame`` in it — the model's table (``Data.frame_table``) for
    a name or a handle, a table of one row for a ``Frame`` — or a ``ModelError`` naming what was expected."""
    fi, ff, ids, every, _ = d.frame_table()
    if isinstance(frame, (int, np.integer)) and not isinstance(frame, (bool, np.bool_)):
        k = int(frame)
        if not 0 <= k < fi.shape[0]:
            raise ModelError(f"frame handle {k} out of range 0..{fi.shape[0] - 1} for model '{model.name}' "
                             "(model.frame_id(name) gives a frame's handle)", element=f"frame {k}")
        return fi, ff, k
    if isinstance(frame, str):
        k = ids.get(frame)
        if k is None:
            model.frame(frame)          # the ModelError naming the frames
        return fi, ff, k
    body, F = frame_in_body(model, frame)
    fi1, ff1 = pack_frames(model.parent, [(body, F[:9], F[9:])])
    return fi1, ff1, 0


def frame_rows(model, d, frames):
    """``(fi, ff, rows)``: the model's frame table and the rows (int64) of ``frames`` (None: every frame, in the order
    of the handles; else a sequence of names and handles)."""
    fi, ff, ids, every, _ = d.frame_table()
    if frames is None:
        return fi, ff, every
    if isinstance(frames, (str, Frame)) or not hasattr(frames, "__len__"):
        raise ModelError(f"frames must be a sequence of frame names or handles (or None: every frame), got "
                         f"{frames!r}", element="frames")
    rows = np.empty(len(frames), dtype=np.int64)
    for k, f in enumerate(frames):
        if isinstance(f, Frame):
            f = f.name
        rows[k] = frame_row(model, d, f)[2]
    return fi, ff, rows


def _state_arguments(model, q, v, a, reference, data, t):
    """``(d, code, q, v, a, level)``: the arguments of the kernels of frame states, checked (level 0: placements,
    1: + velocities, 2: + accelerations), the general joints' kinematics written into the workspace."""
    d = data_at(model, data, t)
    code = reference_code(reference)
    q = as_vector(q, d.nq, "q", model)
    level = 0 if v is None else 1 if a is None else 2
    v = np.zeros(d.nv) if v is None else as_vector(v, d.nv, "v", model)
    a = v if a is None else as_vector(a, d.nv, "a", model)
    fill_general(d, q, v, t)
    return d, code, q, v, a, level


def _frame_call(model, q, v, a, frame, reference, classical, data, t):
    d, code, q, v, a, level = _state_arguments(model, q, v, a, reference, data, t)
    fi, ff, k = frame_row(model, d, frame)
    out = np.empty(OUT_WIDTH)
    try:
        frame_kernel(d.mi, d.mf, fi, ff, q, v, a, d.work, k, level, code, bool(classical), out)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    return out


def frame_placement(model, q, frame, data=None, t=None, out=None):
    """``(R, p)``: the axes (R rotates frame coordinates into ground coordinates) and the origin of ``frame``
    (a name, a handle ``model.frame_id(name)`` or a ``Frame``) in ground coordinates at q (with a moving base: at
    time ``t``). ``out``: a tuple of arrays (3 x 3 and 3) to write R and p into, returned as it is
    (``algorithms.dynamics``)."""
    # the C-level entry (``algorithms.dynamics``)
    if data is None and (Rp := getattr(model, "_multibody_entry_frame_placement", no_entry)(q, frame, out)) is not None:
        return Rp
    try:  # the fast path (``algorithms.dynamics``): a float64 q, a handle or a name, a Data made for the model
        if q.dtype is _F64 and q.ndim == 1:
            mi, mf, fi, ff, work, nv, ids, zero, owner, _ = (model._multibody_frame_fast if data is None
                                                             else data.frame_fast)
            if owner is model:
                if out is None:
                    R, p = _empty(_R_SHAPE), _empty(3)
                    if _FP(mi, mf, fi, ff, q, work, frame if frame.__class__ is int else ids[frame], R, p) == 0:
                        return R, p
                elif out.__class__ is tuple and len(out) == 2:
                    R, p = out
                    if (R.dtype is p.dtype is _F64 and R.ndim == 2 and p.ndim == 1 and R.flags.carray
                            and p.flags.carray and _FP(mi, mf, fi, ff, q, work,
                                                       frame if frame.__class__ is int else ids[frame], R, p) == 0):
                        return out
    except _MISSES:
        pass
    R, p = _placement_output(model, out)
    state = _frame_call(model, q, None, None, frame, "world", False, data, t)
    R[...] = state[O_R:O_R + 9].reshape(3, 3)
    p[...] = state[O_P:O_P + 3]
    return (R, p) if out is None else out


def _placement_output(model, out):
    """The arrays ``(R, p)`` that :func:`frame_placement` writes: new ones, or the pair ``out`` checked."""
    if out is None:
        return np.empty(_R_SHAPE), np.empty(3)
    if not isinstance(out, tuple) or len(out) != 2:
        raise ModelError(f"out must be a tuple (R, p) of writeable C-contiguous float64 arrays of shapes (3, 3) and "
                         f"(3,), got {type(out).__name__}", element="out")
    return as_output(out[0], _R_SHAPE, model, "out[0] (R)"), as_output(out[1], (3,), model, "out[1] (p)")


def frame_velocity(model, q, v, frame, reference="local", data=None, t=None):
    """The spatial velocity [ω; v] (6,) of ``frame`` at (q, v) in ``reference`` (module docstring)."""
    try:  # the fast path, as in frame_placement
        if q.dtype is v.dtype is _F64 and q.ndim == v.ndim == 1:
            mi, mf, fi, ff, work, nv, ids, zero, owner, _ = (model._multibody_frame_fast if data is None
                                                             else data.frame_fast)
            if owner is model:
                out = _empty(OUT_WIDTH)
                if _FS(mi, mf, fi, ff, q, v, v, work, frame if frame.__class__ is int else ids[frame], 1,
                       REFERENCES[reference], False, out) == 0:
                    return out[O_VEL:O_VEL + 6]
    except _MISSES:
        pass
    return _frame_call(model, q, v, None, frame, reference, False, data, t)[O_VEL:O_VEL + 6]


def frame_acceleration(model, q, v, a, frame, reference="local", classical=False, data=None, t=None):
    """The acceleration (6,) of ``frame`` at (q, v, q̈ = a) in ``reference``: spatial, or with ``classical=True``
    the classical one (the linear part + ω × v; in "local_world_aligned" [ω̇; p̈] of the frame's origin). Without
    gravity (module docstring)."""
    return _frame_call(model, q, v, a, frame, reference, classical, data, t)[O_ACC:O_ACC + 6]


def _jacobian_call(model, q, v, frame, reference, rate, data, t, out=None):
    d = data_at(model, data, t)
    fi, ff, k = frame_row(model, d, frame)
    code = reference_code(reference)
    q = as_vector(q, d.nq, "q", model)
    v = np.zeros(d.nv) if v is None else as_vector(v, d.nv, "v", model)
    if rate:
        refuse_general_joints(model, "frame_jacobian_time_variation")
    J = as_output(out, (6, d.nv), model)
    fill_general(d, q, v, t)
    try:
        if rate:
            dJ = np.empty((6, d.nv))
            frame_jacobian_rate_kernel(d.mi, d.mf, fi, ff, q, v, d.work, k, code, J, dJ)
            return J, dJ
        frame_jacobian_kernel(d.mi, d.mf, fi, ff, q, d.work, k, code, J)
        return J, None
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise


def frame_jacobian(model, q, frame, reference="local", data=None, t=None, out=None):
    """The 6 x nv Jacobian of ``frame`` at q in ``reference``: its spatial velocity is J v (rows
    ``[angular; linear]``; columns of the coordinates that do not move the frame are zero). ``frame``: a name, a
    handle ``model.frame_id(name)`` or a ``Frame``. ``out``: an array to write J into and return
    (``algorithms.dynamics``)."""
    if data is None:  # the C-level entry (``algorithms.dynamics``)
        try:
            J = getattr(model, "_multibody_entry_frame_jacobian", no_entry)(q, frame, REFERENCES[reference], out)
        except _MISSES:  # a reference that is not a name (the general path names it)
            J = None
        if J is not None:
            return J
    try:  # the fast path, as in frame_placement
        if q.dtype is _F64 and q.ndim == 1:
            mi, mf, fi, ff, work, nv, ids, zero, owner, shape = (model._multibody_frame_fast if data is None
                                                                 else data.frame_fast)
            if owner is model:
                if out is None:
                    J = _empty(shape)
                    if _FJ(mi, mf, fi, ff, q, work, frame if frame.__class__ is int else ids[frame],
                           REFERENCES[reference], J) == 0:
                        return J
                elif out.dtype is _F64 and out.ndim == 2 and out.flags.carray and _FJ(
                        mi, mf, fi, ff, q, work, frame if frame.__class__ is int else ids[frame],
                        REFERENCES[reference], out) == 0:
                    return out
    except _MISSES:
        pass
    return _jacobian_call(model, q, None, frame, reference, False, data, t, out)[0]


def frame_jacobian_time_variation(model, q, v, frame, reference="local", data=None, t=None):
    """J̇ (6 x nv), the time derivative of :func:`frame_jacobian` along the motion with velocity v (Pinocchio's
    ``getFrameJacobianTimeVariation``). J̇ v is the frame's acceleration at q̈ = 0: spatial in "world" and
    "local", classical ([ω̇; p̈] of its origin) in "local_world_aligned" (the module docstring). General joints
    (seed 001 §3.4.2) are refused: their columns' rates are not formed."""
    return _jacobian_call(model, q, v, frame, reference, True, data, t)[1]


# ---- many frames from one pass --------------------------------------------------------------------------------
def frame_jacobians(model, q, frames=None, reference="local", data=None, t=None, out=None):
    """The Jacobians (nf, 6, nv) of ``frames`` (a sequence of names or handles; None, the default: every frame,
    ``model.frame_names``) at q in ``reference``, from one pass of placements over the bodies (Pinocchio's
    ``computeJointJacobians`` and ``getFrameJacobian`` per frame). J[k] is :func:`frame_jacobian` of frame k.
    ``out``: an array to write them into and return (``algorithms.dynamics``)."""
    try:  # the fast path for every frame
        if frames is None and q.dtype is _F64 and q.ndim == 1:
            d = model._multibody_data if data is None else data
            mi, mf, fi, ff, work, nv, ids, zero, owner, _ = d.frame_fast
            if owner is model:
                every = d.frames[3]
                if out is None:
                    J = _empty((every.shape[0], 6, nv))
                    if _FJS(mi, mf, fi, ff, q, zero, work, every, REFERENCES[reference], J, _NO_STATES) == 0:
                        return J
                elif out.dtype is _F64 and out.ndim == 3 and out.flags.carray and _FJS(
                        mi, mf, fi, ff, q, zero, work, every, REFERENCES[reference], out, _NO_STATES) == 0:
                    return out
    except _MISSES:
        pass
    d = data_at(model, data, t)
    fi, ff, rows = frame_rows(model, d, frames)
    code = reference_code(reference)
    q = as_vector(q, d.nq, "q", model)
    J = as_output(out, (rows.shape[0], 6, d.nv), model)
    fill_general(d, q, np.zeros(d.nv), t)
    try:
        frame_jacobians_kernel(d.mi, d.mf, fi, ff, q, np.zeros(d.nv), d.work, rows, code, J, _NO_STATES)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    return J


def _states(model, q, v, a, frames, reference, classical, data, t):
    d, code, q, v, a, level = _state_arguments(model, q, v, a, reference, data, t)
    fi, ff, rows = frame_rows(model, d, frames)
    out = np.empty((rows.shape[0], OUT_WIDTH))
    try:
        frame_states_kernel(d.mi, d.mf, fi, ff, q, v, a, d.work, rows, level, code, bool(classical), out)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    return out


def frame_placements(model, q, frames=None, data=None, t=None):
    """``(R, p)`` of ``frames`` (names or handles; None: every frame, ``model.frame_names``): rotations (nf, 3, 3)
    and origins (nf, 3) in ground coordinates, from one pass over the bodies (Pinocchio's
    ``framesForwardKinematics``)."""
    out = _states(model, q, None, None, frames, "world", False, data, t)
    return out[:, O_R:O_R + 9].reshape(-1, 3, 3), out[:, O_P:O_P + 3]


def frame_velocities(model, q, v, frames=None, reference="local", data=None, t=None):
    """The spatial velocities (nf, 6) of ``frames`` (None: every frame) at (q, v) in ``reference``, from one pass."""
    return _states(model, q, v, None, frames, reference, False, data, t)[:, O_VEL:O_VEL + 6]


def frame_accelerations(model, q, v, a, frames=None, reference="local", classical=False, data=None, t=None):
    """The accelerations (nf, 6) of ``frames`` (None: every frame) at (q, v, q̈ = a) in ``reference``, as
    :func:`frame_acceleration`, from one pass."""
    return _states(model, q, v, a, frames, reference, classical, data, t)[:, O_ACC:O_ACC + 6]
