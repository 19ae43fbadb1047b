"""The centre of mass's Jacobian and the centroidal momentum: its matrix A_G(q), the momentum h_G = A_G v, the time
derivative Ȧ_G(q, v) and the bias Ȧ_G v.

| function | result |
|---|---|
| ``com_jacobian(model, q)`` | J_c (3, nv): the velocity of the centre of mass is J_c v |
| ``centroidal_map(model, q)`` | A_G (6, nv) |
| ``centroidal_momentum(model, q, v)`` | h_G (6,) = A_G v |
| ``centroidal_map_time_variation(model, q, v)`` | Ȧ_G (6, nv) |
| ``centroidal_bias(model, q, v)`` | Ȧ_G v (6,): the rate of h_G at q̈ = 0 |

Order: ``[angular; linear]`` — the angular momentum about the centre of mass, then the linear momentum, in ground
axes. **Pinocchio's** ``computeCentroidalMap`` / ``hg`` / ``dhg`` are ``[linear; angular]``: swap the row
blocks to compare. ``multibody.center_of_mass`` gives the total mass, the centre of mass and the linear momentum.
The method (composite rigid bodies in ground coordinates, Orin & Goswami's centroidal momentum matrix) is in
``kernels/centroidal.py``. With a moving base (at time ``t``) h_G is absolute and the matrices are the parts that
v makes.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> b.add_body("wheel", mass=2.0, inertia=np.diag([0.5, 0.5, 1.0]))
'wheel'
>>> b.add_joint("axle", mb.Revolute(axis=(0, 0, 1)), parent="ground", child="wheel")
'axle'
>>> model = b.build()
>>> centroidal_momentum(model, [0.0], [3.0]).tolist()     # I_zz ω about the centre of mass, no linear momentum
[0.0, 0.0, 3.0, 0.0, 0.0, 0.0]
"""
import numpy as np

from multibody.algorithms.dynamics import (FAST_PATH_MISSES, as_output, as_vector, bind_on_first_call, data_at,
                                           fill_general)
from multibody.model.data import no_entry, refuse_general_joints, refuse_kinematics_only
from multibody.kernels.centroidal import (O_H, O_HDOT, O_MASS, OUT_WIDTH, centroidal_kernel, centroidal_map_kernel,
                                          com_jacobian_kernel)

__all__ = ["com_jacobian", "centroidal_map", "centroidal_momentum", "centroidal_map_time_variation",
           "centroidal_bias"]

_EMPTY = np.zeros((6, 0))
_F64 = np.dtype(np.float64)
_empty = np.empty
#: the compiled entry points of the fast paths (``algorithms.dynamics``, "the fast path")
_CMAP = bind_on_first_call(centroidal_map_kernel, "_CMAP", globals())
_COMJ = bind_on_first_call(com_jacobian_kernel, "_COMJ", globals())


def _centroidal(model, q, v, a, level, with_map, with_rate, data, t, out=None):
    d = data_at(model, data, t)
    refuse_kinematics_only(model, "the centroidal momentum")
    q = as_vector(q, d.nq, "q", model)
    v = np.zeros(d.nv) if v is None else as_vector(v, d.nv, "v", model)
    a = v if a is None else a
    Ag = as_output(out, (6, d.nv), model) if with_map else _EMPTY
    fill_general(d, q, v, t)
    dAg = np.empty((6, d.nv)) if with_rate else _EMPTY
    out = np.empty(OUT_WIDTH)
    try:
        centroidal_kernel(d.mi, d.mf, q, v, a, d.work, level, Ag, dAg, out)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    return Ag, dAg, out


def com_jacobian(model, q, data=None, t=None, out=None):
    """The 3 x nv Jacobian of the centre of mass (ground coordinates): ċ = J_c v (Pinocchio's
    ``jacobianCenterOfMass``). It is the linear rows of :func:`centroidal_map` over the total mass. ``out``: an
    array to write J_c into and return (``algorithms.dynamics``)."""
    # the C-level entry (``algorithms.dynamics``)
    if data is None and (Jc := getattr(model, "_multibody_entry_com_jacobian", no_entry)(q, out)) is not None:
        return Jc
    try:  # the fast path, as in centroidal_map
        if q.dtype is _F64 and q.ndim == 1:
            mi, mf, no_fext, work, nv, shape, owner = model._multibody_fast if data is None else data.fast
            if owner is model:
                if out is None:
                    Jc = _empty((3, nv))
                    if _COMJ(mi, mf, q, work, Jc) == 0:
                        return Jc
                elif out.dtype is _F64 and out.ndim == 2 and out.flags.carray and _COMJ(mi, mf, q, work, out) == 0:
                    return out
    except FAST_PATH_MISSES:
        pass
    d = data_at(model, data, t)
    Jc = as_output(out, (3, d.nv), model)
    Ag, _, state = _centroidal(model, q, None, None, 0, True, False, d, t)
    m = state[O_MASS]
    if m > 0.0:
        np.divide(Ag[3:], m, out=Jc)
    else:
        Jc[...] = 0.0
    return Jc


def centroidal_map(model, q, data=None, t=None, out=None):
    """A_G (6 x nv), the centroidal momentum matrix: h_G = A_G v, rows ``[angular about the centre of mass;
    linear]`` (Pinocchio's ``computeCentroidalMap`` with its two row blocks swapped). ``out``: an array to write
    A_G into and return (``algorithms.dynamics``)."""
    # the C-level entry (``algorithms.dynamics``)
    if data is None and (Ag := getattr(model, "_multibody_entry_centroidal_map", no_entry)(q, out)) is not None:
        return Ag
    try:  # the fast path (``algorithms.dynamics``): a float64 q, a Data made for the model without a step before
        if q.dtype is _F64 and q.ndim == 1:
            mi, mf, no_fext, work, nv, shape, owner = model._multibody_fast if data is None else data.fast
            if owner is model:
                if out is None:
                    Ag = _empty(shape)
                    if _CMAP(mi, mf, q, work, Ag) == 0:
                        return Ag
                elif out.dtype is _F64 and out.ndim == 2 and out.flags.carray and _CMAP(mi, mf, q, work, out) == 0:
                    return out
    except FAST_PATH_MISSES:
        pass
    return _centroidal(model, q, None, None, 0, True, False, data, t, out)[0]


def centroidal_momentum(model, q, v, data=None, t=None):
    """h_G (6,): the angular momentum about the centre of mass and the linear momentum, ground axes."""
    return _centroidal(model, q, v, None, 1, False, False, data, t)[2][O_H:O_H + 6].copy()


def centroidal_map_time_variation(model, q, v, data=None, t=None):
    """Ȧ_G (6 x nv), the time derivative of :func:`centroidal_map` along the motion with velocity v (Pinocchio's
    ``computeCentroidalMapTimeVariation`` with its row blocks swapped). General joints are refused (their
    columns' rates are not formed)."""
    refuse_general_joints(model, "centroidal_map_time_variation")
    return _centroidal(model, q, v, None, 1, False, True, data, t)[1]


def centroidal_bias(model, q, v, data=None, t=None):
    """Ȧ_G v (6,): the rate of the centroidal momentum at q̈ = 0 (the rate at q̈ = a is A_G a + Ȧ_G v), from one
    Newton–Euler pass over the bodies (``kernels/centroidal.py``), without forming Ȧ_G. With a moving base the
    base's acceleration is in it."""
    d = data_at(model, data, t)
    _, _, out = _centroidal(model, q, v, np.zeros(d.nv), 2, False, False, d, t)
    return out[O_HDOT:O_HDOT + 6].copy()
