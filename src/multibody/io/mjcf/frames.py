"""Poses of MJCF elements: ``pos`` and one of MuJoCo's orientation forms, as a ``Placement``.

The forms (MuJoCo's "frame orientations"): ``quat`` (w x y z, normalized), ``axisangle`` (a unit axis, the angle in
the compiler's unit), ``euler`` (three angles about the axes of the compiler's ``eulerseq``: lowercase axes move
with the frame, uppercase ones are fixed), ``xyaxes`` (the x axis and a y axis made orthogonal to it; z = x × y)
and ``zaxis`` (the smallest rotation taking z to the given axis). At most one may be given. ``fromto`` (capsules,
cylinders, boxes, ellipsoids, sites) places the element at the segment's midpoint with its z axis along
``from − to``, the smallest rotation again. Each is computed as MuJoCo's compiler does (``mjuu_z2quat``, the
quaternion products of the euler sequence), so that what is built from them equals MuJoCo's to round-off.
"""
import math

import numpy as np

from multibody.io.mjcf.document import fail, numbers
from multibody.model import Placement
from multibody.model.rotations import quat_to_matrix

__all__ = ["ORIENTATIONS", "rotation", "placement", "z_rotation", "quat_product"]

ORIENTATIONS = ("quat", "axisangle", "euler", "xyaxes", "zaxis")


def quat_product(a, b):
    """The quaternion product a ⊗ b (w, x, y, z)."""
    return np.array([a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
                     a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
                     a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
                     a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0]])


def _unit(v, where, source, what):
    n = float(np.linalg.norm(v))
    if not n > 1e-14:
        fail(source, where, f"the {what} must not be zero, got {v.tolist()}")
    return v / n


def z_rotation(vec):
    """The quaternion of the smallest rotation taking (0, 0, 1) to the direction of ``vec`` (MuJoCo's
    ``mjuu_z2quat``; a rotation by π about x when ``vec`` points down z)."""
    axis = np.cross([0.0, 0.0, 1.0], vec)
    s = float(np.linalg.norm(axis))
    axis = np.array([1.0, 0.0, 0.0]) if s < 1e-10 else axis / s
    ang = math.atan2(s, float(vec[2]))
    return np.concatenate([[math.cos(ang / 2)], axis * math.sin(ang / 2)])


def _quaternion(attrs, compiler, where, source):
    """The unit quaternion of the element's orientation (identity when it gives none)."""
    given = [k for k in ORIENTATIONS if k in attrs]
    if len(given) > 1:
        fail(source, where, f"give one orientation, got {', '.join(given)}")
    if not given:
        return np.array([1.0, 0.0, 0.0, 0.0])
    key = given[0]
    at = f"{where}/@{key}"
    if key == "quat":
        return _unit(numbers(attrs[key], 4, at, source), at, source, "quaternion")
    if key == "axisangle":
        v = numbers(attrs[key], 4, at, source)
        axis = _unit(v[:3], at, source, "axis")
        a = compiler.angle_value(v[3])
        return np.concatenate([[math.cos(a / 2)], axis * math.sin(a / 2)])
    if key == "euler":
        angles = [compiler.angle_value(a) for a in numbers(attrs[key], 3, at, source)]
        quat = np.array([1.0, 0.0, 0.0, 0.0])
        for axis, a in zip(compiler.eulerseq, angles):
            rot = np.array([math.cos(a / 2), 0.0, 0.0, 0.0])
            rot[1 + "xyz".index(axis.lower())] = math.sin(a / 2)
            quat = quat_product(quat, rot) if axis.islower() else quat_product(rot, quat)
        return quat
    return z_rotation(_unit(numbers(attrs[key], 3, at, source), at, source, "z axis"))


def rotation(attrs, compiler, where, source):
    """The rotation matrix of the element's orientation (module docstring)."""
    if "xyaxes" in attrs and not any(k in attrs for k in ORIENTATIONS if k != "xyaxes"):
        at = f"{where}/@xyaxes"
        v = numbers(attrs["xyaxes"], 6, at, source)
        x = _unit(v[:3], at, source, "x axis")
        y = _unit(v[3:] - np.dot(x, v[3:]) * x, at, source, "y axis (made orthogonal to x)")
        return np.column_stack([x, y, np.cross(x, y)])
    return quat_to_matrix(_quaternion(attrs, compiler, where, source))


def placement(attrs, compiler, where, source, fromto=False):
    """The element's pose in its parent's frame: ``pos`` and its orientation; with ``fromto`` (allowed by the
    caller), ``(placement, half length)`` when the element has a ``fromto``, else ``(placement, None)``."""
    if fromto and "fromto" in attrs:
        v = numbers(attrs["fromto"], 6, f"{where}/@fromto", source)
        d = v[:3] - v[3:]
        half = float(np.linalg.norm(d)) / 2
        if not half > 0:
            fail(source, f"{where}/@fromto", "the two ends of fromto coincide")
        return Placement(quat_to_matrix(z_rotation(d / (2 * half))), (v[:3] + v[3:]) / 2), half
    pos = numbers(attrs["pos"], 3, f"{where}/@pos", source) if "pos" in attrs else np.zeros(3)
    out = Placement(rotation(attrs, compiler, where, source), pos)
    return (out, None) if fromto else out
