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

from multibody.algorithms.dynamics import as_vector, data_at, fill_general
from multibody.model.data import refuse_general_joints
from multibody.errors import ModelError
from multibody.kernels.frames import (LOCAL, LOCAL_WORLD_ALIGNED, O_ACC, O_P, O_R, O_VEL, OUT_WIDTH, WORLD,
                                      frame_jacobian_kernel, frame_kernel)
from multibody.model.geometry import Frame

__all__ = ["frame_placement", "frame_jacobian", "frame_velocity", "frame_acceleration",
           "frame_jacobian_time_variation", "REFERENCES"]

#: the names of the references and their codes in ``kernels/frames.py``
REFERENCES = {"world": WORLD, "local": LOCAL, "local_world_aligned": LOCAL_WORLD_ALIGNED}
_EMPTY = np.zeros((6, 0))


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
        raise ModelError(f"frame must be a frame's name (a string) or a Frame, got {frame!r}", element="frame")
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


def _frame_call(model, q, v, a, frame, reference, classical, data, t):
    d = data_at(model, data, t)
    body, F = frame_in_body(model, frame)
    code = reference_code(reference)
    q = as_vector(q, d.nq, "q", model)
    level = 0 if v is None else 1 if a is None else 2
    v = np.zeros(d.nv) if v is None else as_vector(v, d.nv, "v", model)
    a = v if a is None else as_vector(a, d.nv, "a", model)
    fill_general(d, q, v, t)
    out = np.empty(OUT_WIDTH)
    try:
        frame_kernel(d.mi, d.mf, q, v, a, d.work, body, F, level, code, bool(classical), out)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    return out


def frame_placement(model, q, frame, data=None, t=None):
    """``(R, p)``: the axes (R rotates frame coordinates into ground coordinates) and the origin of ``frame``
    (a name or a ``Frame``) in ground coordinates at q (with a moving base: at time ``t``)."""
    out = _frame_call(model, q, None, None, frame, "world", False, data, t)
    return out[O_R:O_R + 9].reshape(3, 3).copy(), out[O_P:O_P + 3].copy()


def frame_velocity(model, q, v, frame, reference="local", data=None, t=None):
    """The spatial velocity [ω; v] (6,) of ``frame`` at (q, v) in ``reference`` (module docstring)."""
    out = _frame_call(model, q, v, None, frame, reference, False, data, t)
    return out[O_VEL:O_VEL + 6].copy()


def frame_acceleration(model, q, v, a, frame, reference="local", classical=False, data=None, t=None):
    """The acceleration (6,) of ``frame`` at (q, v, q̈ = a) in ``reference``: spatial, or with ``classical=True``
    the classical one (the linear part + ω × v; in "local_world_aligned" [ω̇; p̈] of the frame's origin). Without
    gravity (module docstring)."""
    out = _frame_call(model, q, v, a, frame, reference, classical, data, t)
    return out[O_ACC:O_ACC + 6].copy()


def _jacobian_call(model, q, v, frame, reference, rate, data, t):
    d = data_at(model, data, t)
    body, F = frame_in_body(model, frame)
    code = reference_code(reference)
    q = as_vector(q, d.nq, "q", model)
    v = np.zeros(d.nv) if v is None else as_vector(v, d.nv, "v", model)
    if rate:
        refuse_general_joints(model, "frame_jacobian_time_variation")
    fill_general(d, q, v, t)
    J = np.empty((6, d.nv))
    dJ = np.empty((6, d.nv)) if rate else _EMPTY
    try:
        frame_jacobian_kernel(d.mi, d.mf, q, v, d.work, body, F, code, J, dJ)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    return J, dJ


def frame_jacobian(model, q, frame, reference="local", data=None, t=None):
    """The 6 x nv Jacobian of ``frame`` at q in ``reference``: its spatial velocity is J v (rows
    ``[angular; linear]``; columns of the coordinates that do not move the frame are zero)."""
    return _jacobian_call(model, q, None, frame, reference, False, data, t)[0]


def frame_jacobian_time_variation(model, q, v, frame, reference="local", data=None, t=None):
    """J̇ (6 x nv), the time derivative of :func:`frame_jacobian` along the motion with velocity v (Pinocchio's
    ``getFrameJacobianTimeVariation``). J̇ v is the frame's acceleration at q̈ = 0: spatial in "world" and
    "local", classical ([ω̇; p̈] of its origin) in "local_world_aligned" (the module docstring). General joints
    (seed 001 §3.4.2) are refused: their columns' rates are not formed."""
    return _jacobian_call(model, q, v, frame, reference, True, data, t)[1]
