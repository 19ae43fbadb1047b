"""Rotations in Python (numpy), in one place: axis-angle, roll-pitch-yaw, quaternions (Euler parameters).

The conventions of the package (DESIGN.md): a rotation matrix R turns child (body) coordinates into parent
(ground) coordinates; quaternions are scalar first, ``(w, x, y, z)``. The compiled kernels have their own
scalar forms (``kernels/spatial.py``); these serve the builder (:func:`rotation_about`), the model files and
URDF (:func:`rpy_matrix`, :func:`quat_to_matrix`), the Cartesian formulation (quaternions, planar rotations,
vectorized over a leading axis) and the viewer (:func:`matrix_to_quat`).
"""
import math

import numpy as np

from multibody.errors import ModelError, shown

__all__ = ["rotation_about", "rotations_about", "rotation_angle", "perpendicular_axes", "rpy_matrix", "quat_to_matrix",
           "matrix_to_quat", "quat_mul", "quat_exp", "rotation_2d"]


def direction(a):
    """The unit vector along the non-zero finite 3-vector ``a``: a / |a|, scaled first by its largest entry when |a|
    overflows or underflows (so that (1e308, 1e308, 0) and (0, 0, 1e-200) are directions too)."""
    with np.errstate(over="ignore", under="ignore"):
        n = np.linalg.norm(a)
    if not (np.isfinite(n) and n > 1e-150):
        a = a / np.max(np.abs(a))
        n = np.linalg.norm(a)
    return a / n


def rotation_about(axis, angle):
    """Rotation matrix of ``angle`` (rad) about ``axis`` (3 finite numbers, not all zero; made a unit vector:
    :func:`direction`) (Rodrigues' formula); anything else is a ``ModelError`` naming the axis."""
    try:
        a = np.asarray(axis, dtype=float).reshape(3)
    except (TypeError, ValueError):
        raise ModelError(f"rotation axis must be 3 numbers, got {shown(axis)!r}", element="axis") from None
    if not (np.all(np.isfinite(a)) and np.any(a != 0.0)):
        raise ModelError(f"rotation axis must be 3 finite numbers, not all zero, got {a.tolist()}", element="axis")
    a = direction(a)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def rotations_about(n, angles):
    """Rotation matrices about the unit axis n by each of ``angles`` (Rodrigues), shape (k, 3, 3)."""
    K = np.array([[0.0, -n[2], n[1]], [n[2], 0.0, -n[0]], [-n[1], n[0], 0.0]])
    s = np.sin(angles)[:, None, None]
    c = np.cos(angles)[:, None, None]
    return np.eye(3)[None] + s * K[None] + (1.0 - c) * (K @ K)[None]


def rotation_angle(a, R):
    """The angle θ of the rotation R = rot(a, θ) about the unit axis a."""
    vee = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return float(np.arctan2(a @ vee, 0.5 * (np.trace(R) - 1.0)))


def perpendicular_axes(u):
    """Two unit vectors n2, n3 with (u, n2, n3) right-handed and orthonormal, for the unit vector ``u``."""
    t = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
    n2 = np.cross(u, t)
    n2 /= np.linalg.norm(n2)
    return n2, np.cross(u, n2)


def rpy_matrix(roll, pitch, yaw):
    """R = Rz(yaw) Ry(pitch) Rx(roll): roll, pitch, yaw about the fixed x, y, z axes (the URDF convention)."""
    cr, sr, cp, sp_, cy, sy = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw), \
        math.sin(yaw)
    return np.array([[cy * cp, cy * sp_ * sr - sy * cr, cy * sp_ * cr + sy * sr],
                     [sy * cp, sy * sp_ * sr + cy * cr, sy * sp_ * cr - cy * sr],
                     [-sp_, cp * sr, cp * cr]])


def quat_to_matrix(q):
    """Rotation matrix (body → inertial) of unit quaternions ``q = (w, x, y, z)``, shape (..., 4)."""
    q = np.asarray(q, dtype=float)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    R = np.empty(q.shape[:-1] + (3, 3))
    R[..., 0, 0] = 1 - 2 * (y * y + z * z)
    R[..., 0, 1] = 2 * (x * y - w * z)
    R[..., 0, 2] = 2 * (x * z + w * y)
    R[..., 1, 0] = 2 * (x * y + w * z)
    R[..., 1, 1] = 1 - 2 * (x * x + z * z)
    R[..., 1, 2] = 2 * (y * z - w * x)
    R[..., 2, 0] = 2 * (x * z - w * y)
    R[..., 2, 1] = 2 * (y * z + w * x)
    R[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return R


def matrix_to_quat(R):
    """Unit quaternion (w, x, y, z) of a rotation matrix (Shepperd's method)."""
    R = np.asarray(R, dtype=float)
    tr = np.trace(R)
    if tr > 0:
        s = 2.0 * math.sqrt(tr + 1.0)
        q = [0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s]
    elif R[0, 0] > R[1, 1] and R[0, 0] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[0, 0] - R[1, 1] - R[2, 2])
        q = [(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s]
    elif R[1, 1] > R[2, 2]:
        s = 2.0 * math.sqrt(1.0 + R[1, 1] - R[0, 0] - R[2, 2])
        q = [(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + R[2, 2] - R[0, 0] - R[1, 1])
        q = [(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q / np.linalg.norm(q) * (1.0 if q[0] >= 0 else -1.0)


def quat_mul(a, b):
    """The quaternion products a ⊗ b (scalar first), over a leading axis."""
    w1, x1, y1, z1 = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    w2, x2, y2, z2 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def quat_exp(theta):
    """Quaternion of the rotation vector ``theta`` (..., 3)."""
    ang = np.linalg.norm(theta, axis=-1)
    half = 0.5 * ang
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(ang > 1e-12, np.sin(half) / np.where(ang > 0, ang, 1.0), 0.5 - ang * ang / 48.0)
    return np.concatenate([np.cos(half)[..., None], theta * k[..., None]], axis=-1)


def rotation_2d(phi):
    """The planar rotation matrices [[cos φ, −sin φ], [sin φ, cos φ]] of the angles ``phi``, shape (..., 2, 2)."""
    c, s = np.cos(phi), np.sin(phi)
    out = np.empty(np.shape(phi) + (2, 2))
    out[..., 0, 0] = c
    out[..., 0, 1] = -s
    out[..., 1, 0] = s
    out[..., 1, 1] = c
    return out
