"""Cartesian (absolute) coordinates with Lagrange multipliers (seed 001, ch. 2).

Every body carries its own absolute coordinates; joints are written as constraint equations at the
acceleration level, each one in the book's form ``Q_i Ẍ_i + Q_j Ẍ_j = b`` (seed 001, eqs. 2.22, 2.28,
2.43), and the Newton–Euler equations of all bodies are solved together with them for the
accelerations and the multipliers at every step (seed 001, eq. 2.49).

Coordinates (stated once, used everywhere in this module)
---------------------------------------------------------
* The body frame has its origin at the **centre of mass** (the book's convention, seed 001 §2.2);
  every point of a body is given relative to its centre of mass, in body axes.
* **Planar** systems (``dim=2``): body i has ``X_i = (x_i, y_i, φ_i)``, velocity ``(ẋ, ẏ, φ̇)``,
  acceleration ``Ẍ_i = (ẍ, ÿ, φ̈)``, mass matrix ``diag(m, m, J)`` (seed 001 §2.5).
* **Spatial** systems (``dim=3``): body i has position ``r_i`` (3, inertial) and a unit quaternion
  (4, scalar first, body → inertial rotation ``A_i``): 7 coordinates.  Its velocity is
  ``V_i = [ṙ_i (inertial); ω_i (body axes)]`` (6) and ``Ẍ_i = [r̈_i; ω̇_i]`` — the book's mixed-frame
  generalized acceleration (seed 001 §0.2, eq. 2.9).  The quaternion moves by
  ``q̇ = ½ q ⊗ (0, ω)``.
* Ground is body 0 / the name ``"ground"``: ``A = E``, ``r = 0``, at rest.

Sign convention of the multipliers: ``M Ẍ = F + Qᵀ λ`` (seed 001, eq. 2.45, gyroscopic sign
corrected).  The generalized reaction of a joint on body i is ``Q_iᵀ λ`` (seed 001, eq. 2.26):
force in inertial axes, moment about the centre of mass in body axes (planar: a scalar).

Linear solvers (``solver=``)
----------------------------
``"tree"``   the block LDLᵀ of the reordered KKT matrix without fill-in (seed 001 §2.7, eqs. 2.55–2.61,
             after Baraff 1996), for constraint graphs that are trees once the joints to the ground
             are merged into their body's block (this avoids the singular zero pivot of a constraint
             leaf, see the notes on §2.7);
``"sparse"`` scipy.sparse LU of the KKT matrix (general fallback, any topology);
``"dense"``  dense LU of the KKT matrix;
``"schur"``  range-space form ``λ = (Q M⁻¹ Qᵀ)⁻¹ (Q M⁻¹ F − b)`` (seed 001, eqs. 2.52–2.54);
``"al"``     augmented Lagrangian on the quasi-definite ``[[M, Qᵀ], [Q, −εI]]`` (Bayo, García de Jalón
             & Serna 1988), three iterations: exact for independent constraints, bounded for redundant
             constraints (A04 Bricard) and at singular positions (A02);
``"robust"`` rank-revealing least squares (small systems) or an augmented-Lagrangian iteration on
             ``M + α QᵀQ`` (large systems);
``"auto"``   ``"tree"`` when the constraint graph allows it, else ``"al"`` (dense LU up to 300 unknowns,
             sparse LU above).  The tree, dense, sparse and Schur solves are checked by their residual
             and fall back to ``"al"`` when the matrix is singular.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..errors import ConstraintError, ModelError
from ..analysis.reactions import cut_joint_frames, in_joint_frame
from .base import MAX_INITIAL_CORRECTION, POLISH, register_formulation

__all__ = [
    "CartesianSystem", "RowBlock",
    "PlanarPointLine", "PlanarRevolute", "PlanarAngle", "PlanarPrismatic",
    "PointPlane", "RelativeRotation", "SphericalJoint", "HingeJoint", "UniversalJoint", "PlanarJoint",
    "PrismaticJoint", "FixedJoint",
    "PointSpring", "BodyTorque", "RelativeTorque",
    "quat_to_matrix", "matrix_to_quat", "tree_ldlt_solve", "cartesian_from_model",
]

_OMEGA = np.array([[0.0, -1.0], [1.0, 0.0]])


# ----------------------------------------------------------------------------------------------
# small rotation helpers (vectorized over a leading axis)
# ----------------------------------------------------------------------------------------------
def _rot2(phi):
    c, s = np.cos(phi), np.sin(phi)
    out = np.empty(np.shape(phi) + (2, 2))
    out[..., 0, 0] = c
    out[..., 0, 1] = -s
    out[..., 1, 0] = s
    out[..., 1, 1] = c
    return out


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


def _quat_mul(a, b):
    w1, x1, y1, z1 = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    w2, x2, y2, z2 = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack([w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
                     w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
                     w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                     w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2], axis=-1)


def _quat_exp(theta):
    """Quaternion of the rotation vector ``theta`` (..., 3)."""
    ang = np.linalg.norm(theta, axis=-1)
    half = 0.5 * ang
    with np.errstate(invalid="ignore", divide="ignore"):
        k = np.where(ang > 1e-12, np.sin(half) / np.where(ang > 0, ang, 1.0), 0.5 - ang * ang / 48.0)
    return np.concatenate([np.cos(half)[..., None], theta * k[..., None]], axis=-1)


def _unit(v):
    v = np.asarray(v, dtype=float)
    n = np.linalg.norm(v)
    if n == 0:
        raise ModelError("a joint axis or normal must be a non-zero vector", element=str(v))
    return v / n


def _perp_frame(a):
    """Two unit vectors n2, n3 with (a, n2, n3) right-handed and orthonormal."""
    a = _unit(a)
    t = np.array([1.0, 0, 0]) if abs(a[0]) < 0.9 else np.array([0, 1.0, 0])
    n2 = np.cross(a, t)
    n2 /= np.linalg.norm(n2)
    n3 = np.cross(a, n2)
    return n2, n3


# ----------------------------------------------------------------------------------------------
# constraint primitives: vectorized evaluation of (Q_i, Q_j, b, position residual)
# ----------------------------------------------------------------------------------------------
def _eval_planar_pointline(P, K):
    """Planar point–line constraints, seed 001 eq. 2.43 (verified form of §2.5).

    ``n`` (k, m, 2) normals fixed in body i, ``p`` (k, 2) a point of the line (body i, from c_i),
    ``rho`` (k, 2) the point of body j (body j axes, from c_j).  Position residual
    ``nᵀ(A_iᵀ ρ_ik − p)`` (eq. 2.34, sign chosen so its time derivative is ``Q_i V_i + Q_j V_j``).
    """
    n, p, rho = P["n"], P["p"], P["rho"]
    Ai, ri, vi, wi = K["Ai"], K["ri"], K["vi"], K["wi"]
    Aj, rj, vj, wj = K["Aj"], K["rj"], K["vj"], K["wj"]
    Ajrho = np.einsum("kab,kb->ka", Aj, rho)
    rho_ik = rj + Ajrho - ri
    nA = np.einsum("kma,kba->kmb", n, Ai)                      # nᵀ A_iᵀ
    OT_rho = np.stack([rho_ik[:, 1], -rho_ik[:, 0]], axis=-1)  # Ωᵀ ρ_ik
    O_Ajrho = np.stack([-Ajrho[:, 1], Ajrho[:, 0]], axis=-1)   # Ω A_j ρ_jk
    k, m = n.shape[0], n.shape[1]
    Qi = np.empty((k, m, 3))
    Qj = np.empty((k, m, 3))
    Qi[:, :, :2] = -nA
    Qi[:, :, 2] = np.einsum("kmb,kb->km", nA, OT_rho)
    Qj[:, :, :2] = nA
    Qj[:, :, 2] = np.einsum("kmb,kb->km", nA, O_Ajrho)
    rhod = vj - vi + wj[:, None] * O_Ajrho                       # eq. 2.39
    OT_rhod = np.stack([rhod[:, 1], -rhod[:, 0]], axis=-1)
    vec = (wi ** 2)[:, None] * rho_ik - 2.0 * wi[:, None] * OT_rhod + (wj ** 2)[:, None] * Ajrho
    b = np.einsum("kmb,kb->km", nA, vec)
    phi = np.einsum("kmb,kb->km", nA, rho_ik) - np.einsum("kma,ka->km", n, p)
    return Qi, Qj, b, phi


def _eval_planar_angle(P, K):
    """Planar relative rotation ``φ_j − φ_i − θ0 = 0`` (seed 001, eq. 2.32; the book writes φ_i − φ_j)."""
    k = P["theta0"].shape[0]
    Qi = np.zeros((k, 1, 3))
    Qj = np.zeros((k, 1, 3))
    Qi[:, 0, 2] = -1.0
    Qj[:, 0, 2] = 1.0
    b = np.zeros((k, 1))
    phi = (K["phj"] - K["phi"] - P["theta0"])[:, None]
    return Qi, Qj, b, phi


def _eval_point_plane(P, K):
    """Spatial point–plane constraints, seed 001 eq. 2.22 (one row per normal; 3 rows = spherical, eq. 2.44).

    ``n`` (k, m, 3) normals fixed in body i, ``p`` (k, 3) a point of the plane (body i axes, from c_i),
    ``rho`` (k, 3) the point of body j (ρ_ji, body j axes).  Position residual ``nᵀ(ρ_ij^(i) − p)``.
    """
    n, p, rho = P["n"], P["p"], P["rho"]
    Ai, ri, vi, wi = K["Ai"], K["ri"], K["vi"], K["wi"]
    Aj, rj, vj, wj = K["Aj"], K["rj"], K["vj"], K["wj"]
    Ajrho = np.einsum("kab,kb->ka", Aj, rho)
    d0 = Ajrho + rj - ri                                     # ρ_ij^(0), eq. 2.15
    di = np.einsum("kba,kb->ka", Ai, d0)                     # ρ_ij^(i)
    nA = np.einsum("kma,kba->kmb", n, Ai)                    # nᵀ A_iᵀ  (= (A_i n)ᵀ)
    nj = np.einsum("kba,kmb->kma", Aj, nA)                   # A_jᵀ A_i n
    k, m = n.shape[0], n.shape[1]
    Qi = np.empty((k, m, 6))
    Qj = np.empty((k, m, 6))
    Qi[:, :, :3] = -nA
    Qi[:, :, 3:] = np.cross(n, di[:, None, :])               # nᵀ ρ̃_ij^(i)
    Qj[:, :, :3] = nA
    Qj[:, :, 3:] = np.cross(rho[:, None, :], nj)             # −nᵀ A_iᵀ A_j ρ̃_ji
    d0dot = np.einsum("kab,kb->ka", Aj, np.cross(wj, rho)) + vj - vi   # eq. 2.16
    wxr = np.cross(wj, np.cross(wj, rho))
    vec_i = 2.0 * np.cross(wi, np.einsum("kba,kb->ka", Ai, d0dot)) - np.cross(wi, np.cross(wi, di))
    b = np.einsum("kma,ka->km", n, vec_i) - np.einsum("kma,ka->km", nj, wxr)
    phi = np.einsum("kma,ka->km", n, di - p)
    return Qi, Qj, b, phi


def _rotation_rows(n, K):
    Ai, wi, Aj, wj = K["Ai"], K["wi"], K["Aj"], K["wj"]
    Rrel = np.einsum("kba,kbc->kac", Ai, Aj)                  # A_iᵀ A_j
    nj = np.einsum("kba,kmb->kma", Rrel, n)                   # A_jᵀ A_i n
    k, m = n.shape[0], n.shape[1]
    Qi = np.zeros((k, m, 6))
    Qj = np.zeros((k, m, 6))
    Qi[:, :, 3:] = -n
    Qj[:, :, 3:] = nj
    wj_i = np.einsum("kab,kb->ka", Rrel, wj)
    b = np.einsum("kma,ka->km", n, np.cross(wi, wj_i))       # eq. 2.29
    return Qi, Qj, b, Rrel


def _eval_rotation_lock(P, K):
    """Relative-rotation constraints about normals fixed in body i, seed 001 eqs. 2.27–2.29.

    Position residual ``nᵀ vee(A_iᵀ A_j R0ᵀ)`` with ``R0`` the locked relative orientation: its time
    derivative equals ``nᵀ(A_iᵀA_jω_j − ω_i)`` where the relative rotation is R0.
    """
    Qi, Qj, b, Rrel = _rotation_rows(P["n"], K)
    Rerr = np.einsum("kab,kcb->kac", Rrel, P["R0"])
    vee = 0.5 * np.stack([Rerr[:, 2, 1] - Rerr[:, 1, 2], Rerr[:, 0, 2] - Rerr[:, 2, 0],
                          Rerr[:, 1, 0] - Rerr[:, 0, 1]], axis=-1)
    phi = np.einsum("kma,ka->km", P["n"], vee)
    return Qi, Qj, b, phi


def _eval_rotation_align(P, K):
    """The two rotation rows of a hinge (seed 001 §2.6.1, k = 4, 5): rotation blocked about n2, n3 ⟂ axis.

    Position residual ``−(a_i × n)ᵀ A_iᵀ A_j a_j`` (axis a_i in body i, a_j in body j): zero when the
    axes are aligned, and its derivative there is ``nᵀ(A_iᵀA_jω_j − ω_i)``.
    """
    Qi, Qj, b, Rrel = _rotation_rows(P["n"], K)
    aj_i = np.einsum("kab,kb->ka", Rrel, P["aj"])
    phi = -np.einsum("kma,ka->km", np.cross(P["ai"][:, None, :], P["n"]), aj_i)
    return Qi, Qj, b, phi


def _eval_rotation_perp(P, K):
    """Axis ``u`` of body i and axis ``w`` of body j keep a constant angle: ``uᵀ A_iᵀ A_j w = c`` (1 row).

    The book's relative-rotation row (seed 001 §2.4, eqs. 2.27–2.29) about the common normal
    ``n = (A_iᵀA_j w) × u``, which is not fixed in body i: its time derivative is
    ``ḟ = nᵀ(A_iᵀA_jω_j − ω_i)`` exactly, and the second derivative adds ``ṅᵀ ω_rel`` to eq. 2.29,
    ``b = nᵀ ω̃_i A_iᵀA_j ω_j − ṅᵀ ω_rel`` with ``ω_rel = A_iᵀA_jω_j − ω_i`` (body i axes) and
    ``ṅ = (ω_rel × A_iᵀA_j w) × u``.  Used for the cross of a universal joint.
    """
    u, w = P["u"], P["w"]
    Rrel = np.einsum("kba,kbc->kac", K["Ai"], K["Aj"])        # A_iᵀ A_j
    w_i = np.einsum("kab,kb->ka", Rrel, w)                     # w in body i axes
    n = np.cross(w_i, u)
    Qi, Qj, b, Rrel = _rotation_rows(n[:, None, :], K)
    w_rel = np.einsum("kab,kb->ka", Rrel, K["wj"]) - K["wi"]
    ndot = np.cross(np.cross(w_rel, w_i), u)
    b = b - np.einsum("ka,ka->k", ndot, w_rel)[:, None]
    phi = (np.einsum("ka,ka->k", u, w_i) - P["c"])[:, None]
    return Qi, Qj, b, phi


_EVALUATORS = {
    "pl": _eval_planar_pointline, "pa": _eval_planar_angle,
    "pp": _eval_point_plane, "rl": _eval_rotation_lock, "ra": _eval_rotation_align,
    "rp": _eval_rotation_perp,
}


class _Joint:
    """Base of the user-facing joints: a name, two bodies (``"ground"`` allowed) and primitives; joints
    acting at a point keep it as ``p`` (in body i) and ``rho`` (in body j)."""
    dim = None

    def __init__(self, name, body_i, body_j, point_i=None, point_j=None):
        self.name = str(name)
        self.body_i = body_i
        self.body_j = body_j
        if point_i is not None:
            self.p = np.asarray(point_i, float)
        if point_j is not None:
            self.rho = np.asarray(point_j, float)

    def primitives(self, system):  # list of (kind, nrows, params dict)
        raise NotImplementedError

    @property
    def nrows(self):
        return sum(m for _, m, _ in self.primitives(None))


class PlanarPointLine(_Joint):
    """A point of body j stays on a line fixed in body i (seed 001 §2.5, eqs. 2.33–2.43): 1 equation.

    ``point_i``: a point of the line, ``normal_i``: its normal (body i axes, from c_i); ``point_j``:
    the point of body j (body j axes, from c_j).
    """
    dim = 2

    def __init__(self, name, body_i, body_j, point_i, normal_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.n = _unit(normal_i)

    def primitives(self, system):
        return [("pl", 1, dict(n=self.n[None, :], p=self.p, rho=self.rho))]


class PlanarRevolute(_Joint):
    """Planar pin joint = two point–line constraints with the same point (seed 001 §2.5, slider-crank n1..n6)."""
    dim = 2

    def __init__(self, name, body_i, body_j, point_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)

    def primitives(self, system):
        return [("pl", 2, dict(n=np.eye(2), p=self.p, rho=self.rho))]


class PlanarAngle(_Joint):
    """Relative rotation locked: ``φ_j − φ_i = θ0`` (seed 001, eq. 2.32; slider-crank constraint 8)."""
    dim = 2

    def __init__(self, name, body_i, body_j, theta0=0.0):
        super().__init__(name, body_i, body_j)
        self.theta0 = float(theta0)

    def primitives(self, system):
        return [("pa", 1, dict(theta0=np.array(self.theta0)))]


class PlanarPrismatic(_Joint):
    """Planar slider: point–line along ``axis_i`` + locked relative angle (seed 001 §2.6.2, constraints 7, 8)."""
    dim = 2

    def __init__(self, name, body_i, body_j, point_i, axis_i, point_j, theta0=0.0):
        super().__init__(name, body_i, body_j)
        a = _unit(axis_i)
        self.line = PlanarPointLine(name, body_i, body_j, point_i, (-a[1], a[0]), point_j)
        self.angle = PlanarAngle(name, body_i, body_j, theta0)

    def primitives(self, system):
        return self.line.primitives(system) + self.angle.primitives(system)


class PointPlane(_Joint):
    """A point of body j stays on a plane fixed in body i (seed 001 §2.3, eq. 2.22): 1 equation."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, normal_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.n = _unit(normal_i)

    def primitives(self, system):
        return [("pp", 1, dict(n=self.n[None, :], p=self.p, rho=self.rho))]


class RelativeRotation(_Joint):
    """Relative rotation about ``normal_i`` (fixed in body i) blocked (seed 001 §2.4, eqs. 2.27–2.29): 1 equation.

    ``R0`` is the relative orientation ``A_iᵀ A_j`` at which the position residual vanishes.
    """
    dim = 3

    def __init__(self, name, body_i, body_j, normal_i, R0=None):
        super().__init__(name, body_i, body_j)
        self.n = _unit(normal_i)
        self.R0 = np.eye(3) if R0 is None else np.asarray(R0, float)

    def primitives(self, system):
        return [("rl", 1, dict(n=self.n[None, :], R0=self.R0))]


class SphericalJoint(_Joint):
    """Ball joint = three point–plane constraints with normals e1, e2, e3 of body i (seed 001, eq. 2.44)."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)

    def primitives(self, system):
        return [("pp", 3, dict(n=np.eye(3), p=self.p, rho=self.rho))]


class HingeJoint(_Joint):
    """Revolute ("cylindrical" in the book) joint: spherical + 2 rotation constraints (seed 001 eq. 2.46): 5 equations.

    ``axis_i`` / ``axis_j``: the hinge axis in body i / body j axes (they coincide in space).
    """
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, axis_i, axis_j):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.ai = _unit(axis_i)
        self.aj = _unit(axis_j)

    def primitives(self, system):
        n2, n3 = _perp_frame(self.ai)
        return [("pp", 3, dict(n=np.eye(3), p=self.p, rho=self.rho)),
                ("ra", 2, dict(n=np.array([n2, n3]), ai=self.ai, aj=self.aj))]


class UniversalJoint(_Joint):
    """Universal (Hooke) joint = spherical joint (3 point–plane rows, seed 001 eq. 2.44) + 1 relative-rotation
    row (seed 001 §2.4) about the common normal of the two axes: 4 equations, 2 relative DoF.

    ``axis_i`` (body i axes) and ``axis_j`` (body j axes) are the two hinge axes of the cross; they keep the
    angle they have in the reference configuration, ``cos_angle = axis_iᵀ A_iᵀ A_j axis_j`` (0 for the
    usual perpendicular cross).
    """
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, axis_i, axis_j, cos_angle=0.0):
        super().__init__(name, body_i, body_j)
        self.ball = SphericalJoint(name, body_i, body_j, point_i, point_j)
        self.ai = _unit(axis_i)
        self.aj = _unit(axis_j)
        self.cos_angle = float(cos_angle)
        if abs(self.cos_angle) > 1.0 - 1e-9:
            raise ModelError(f"universal joint {name!r}: the two axes must not be parallel "
                             f"(cos_angle = {self.cos_angle})", element=f"joint {name!r}")

    def primitives(self, system):
        return self.ball.primitives(system) + [
            ("rp", 1, dict(u=self.ai, w=self.aj, c=np.array(self.cos_angle)))]


class PlanarJoint(_Joint):
    """Spatial plane joint: a point of body j slides in a plane of body i and body j turns only about the
    plane's normal.  1 point–plane row (seed 001 eq. 2.22) with the normal ``normal_i`` + 2 relative-rotation
    rows (seed 001 §2.4, as the hinge's k = 4, 5 of eq. 2.46) keeping ``normal_j`` (body j) along
    ``normal_i``: 3 equations, 3 relative DoF.  (Not to be confused with the ``dim=2`` planar systems.)
    """
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, normal_i, normal_j):
        super().__init__(name, body_i, body_j)
        self.plane = PointPlane(name, body_i, body_j, point_i, normal_i, point_j)
        self.ni = self.plane.n
        self.nj = _unit(normal_j)

    def primitives(self, system):
        n2, n3 = _perp_frame(self.ni)
        return self.plane.primitives(system) + [
            ("ra", 2, dict(n=np.array([n2, n3]), ai=self.ni, aj=self.nj))]


class PrismaticJoint(_Joint):
    """Spatial slider along ``axis_i``: 2 point–plane (normals ⟂ axis) + 3 rotation constraints: 5 equations."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, axis_i, R0=None):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.ai = _unit(axis_i)
        self.R0 = np.eye(3) if R0 is None else np.asarray(R0, float)

    def primitives(self, system):
        n2, n3 = _perp_frame(self.ai)
        return [("pp", 2, dict(n=np.array([n2, n3]), p=self.p, rho=self.rho)),
                ("rl", 3, dict(n=np.eye(3), R0=self.R0))]


class FixedJoint(_Joint):
    """Welded bodies: spherical + 3 rotation constraints (6 equations)."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, R0=None):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.R0 = np.eye(3) if R0 is None else np.asarray(R0, float)

    def primitives(self, system):
        return [("pp", 3, dict(n=np.eye(3), p=self.p, rho=self.rho)),
                ("rl", 3, dict(n=np.eye(3), R0=self.R0))]


class _Composite(_Joint):
    """A joint given directly by its primitive rows (used by :func:`cartesian_from_model`)."""

    def __init__(self, name, body_i, body_j, dim, prims):
        super().__init__(name, body_i, body_j)
        self.dim = dim
        self._prims = prims

    def primitives(self, system):
        return list(self._prims)


class RowBlock:
    """Rows given by a provider object rather than by the joint library (the Model's constraints that are not
    joints, :class:`ModelConstraintRows`). ``rows(x, V, need_b) -> (Q (m × nv) dense, b (m), φ (m))`` with
    ``Q Ẍ = b`` the acceleration-level rows and φ their residuals; ``names``/``slices`` within the block."""

    name = "rows"
    m = 0

    def rows(self, x, V, need_b=True):
        raise NotImplementedError


# ----------------------------------------------------------------------------------------------
# forces
# ----------------------------------------------------------------------------------------------
class PointSpring:
    """Spring–damper between a point of body a and a point of body b (``"ground"`` allowed).

    ``F = −(k (l − l0) + c l̇)`` along the line; points in the bodies' own axes, from the centre of mass
    (for the ground: inertial coordinates).
    """

    def __init__(self, body_a, point_a, body_b, point_b, k, c=0.0, l0=0.0):
        self.body_a, self.body_b = body_a, body_b
        self.pa = np.asarray(point_a, float)
        self.pb = np.asarray(point_b, float)
        self.k, self.c, self.l0 = float(k), float(c), float(l0)


class BodyTorque:
    """A constant moment on a body (planar: scalar; spatial: 3-vector in body axes)."""

    def __init__(self, body, torque):
        self.body = body
        self.torque = np.atleast_1d(np.asarray(torque, float))


class RelativeTorque:
    """A moment ``τ`` on body j and ``−τ`` on body i (a drive in a joint; planar: scalar)."""

    def __init__(self, body_i, body_j, torque):
        self.body_i, self.body_j = body_i, body_j
        self.torque = np.atleast_1d(np.asarray(torque, float))


# ----------------------------------------------------------------------------------------------
# the system
# ----------------------------------------------------------------------------------------------
@dataclass
class _Body:
    name: str
    mass: float
    inertia: np.ndarray
    x0: np.ndarray
    v0: np.ndarray


class CartesianSystem:
    """Bodies in absolute coordinates + the book's constraint library (seed 001, ch. 2).

    >>> s = CartesianSystem(dim=2, gravity=(0, -9.81))
    >>> s.add_body("rod", mass=1.0, inertia=1 / 12, position=(0.5, 0.0, 0.0))
    1
    >>> s.add_joint(PlanarRevolute("pin", "ground", "rod", (0, 0), (-0.5, 0)))
    >>> xdd, lam = s.accelerations(0.0, s.x0, s.v0)
    >>> round(float(xdd[2]), 4)   # φ̈ = −(3/2) g / L for a rod pinned at its end
    -14.715
    """

    def __init__(self, dim=2, gravity=None, solver="auto"):
        if dim not in (2, 3):
            raise ModelError(f"dim must be 2 (planar) or 3 (spatial), got {dim}", element="CartesianSystem")
        self.dim = dim
        self.nd = 3 if dim == 2 else 6          # velocity coordinates per body
        self.nx = 3 if dim == 2 else 7          # position coordinates per body
        if gravity is None:
            gravity = (0.0, -9.81) if dim == 2 else (0.0, 0.0, -9.81)
        self.gravity = np.asarray(gravity, float)
        self.solver = solver
        self.bodies: list[_Body] = []
        self.joints = []
        self.user_constraints = []
        self.springs = []
        self.torques = []
        self.rel_torques = []
        self.force_callback = None
        self._final = False
        self.stats = {"solves": 0, "fallbacks": 0}

    # -------------------------------------------------------------------- description
    def add_body(self, name, mass, inertia, position, velocity=None):
        """Add a body; returns its index (1-based; 0 is the ground).

        planar: ``inertia`` = J about the centre of mass, ``position = (x, y, φ)``, ``velocity = (ẋ, ẏ, φ̇)``;
        spatial: ``inertia`` 3x3 about the centre of mass in body axes, ``position = (r, R)`` with R a
        rotation matrix or a quaternion (w, x, y, z), ``velocity = (ṙ inertial, ω body axes)``.
        """
        if self._final:
            raise ModelError("the system is finalized; add bodies before the first computation", element=name)
        if name == "ground" or name in [b.name for b in self.bodies]:
            raise ModelError(f"body name {name!r} is reserved or already used", element=f"body {name!r}")
        if not mass > 0:
            raise ModelError(f"mass must be positive, got {mass}", element=f"body {name!r}")
        if self.dim == 2:
            J = float(inertia)
            if J < 0:
                raise ModelError(f"inertia must be >= 0, got {J}", element=f"body {name!r}")
            x0 = np.asarray(position, float).reshape(3)
            v0 = np.zeros(3) if velocity is None else np.asarray(velocity, float).reshape(3)
            I = np.array(J)
        else:
            I = np.asarray(inertia, float).reshape(3, 3)
            if not np.allclose(I, I.T) or np.linalg.eigvalsh(I).min() < 0:
                raise ModelError("inertia must be symmetric positive semi-definite", element=f"body {name!r}")
            r, R = position
            R = np.asarray(R, float)
            q = matrix_to_quat(R) if R.shape == (3, 3) else R / np.linalg.norm(R)
            x0 = np.concatenate([np.asarray(r, float).reshape(3), q])
            v0 = np.zeros(6) if velocity is None else np.concatenate(
                [np.asarray(velocity[0], float), np.asarray(velocity[1], float)])
        self.bodies.append(_Body(name, float(mass), I, x0, v0))
        return len(self.bodies)

    def add_joint(self, joint):
        """Add a joint of the library (a :class:`RowBlock` is accepted too)."""
        if self._final:
            raise ModelError("the system is finalized; add joints before the first computation",
                             element=getattr(joint, "name", "?"))
        if isinstance(joint, RowBlock):
            self.user_constraints.append(joint)
            return
        if joint.dim != self.dim:
            raise ModelError(f"joint {joint.name!r} is {joint.dim}-D, the system is {self.dim}-D",
                             element=f"joint {joint.name!r}")
        self.joints.append(joint)

    def add_force(self, force):
        if isinstance(force, PointSpring):
            self.springs.append(force)
        elif isinstance(force, BodyTorque):
            self.torques.append(force)
        elif isinstance(force, RelativeTorque):
            self.rel_torques.append(force)
        elif callable(force):
            self.force_callback = force
        else:
            raise ModelError(f"unknown force element {force!r}", element="force")

    def body_index(self, name):
        """0 for the ground, 1..nb for bodies (names or indices accepted)."""
        if isinstance(name, (int, np.integer)):
            if not 0 <= name <= len(self.bodies):
                raise ModelError(f"no body with index {name}", element=f"body {name}")
            return int(name)
        if name == "ground":
            return 0
        for k, b in enumerate(self.bodies):
            if b.name == name:
                return k + 1
        raise ModelError(f"no body named {name!r}; known: ground, "
                         + ", ".join(b.name for b in self.bodies), element=f"body {name!r}")

    # -------------------------------------------------------------------- set-up
    @property
    def nb(self):
        return len(self.bodies)

    @property
    def nv(self):
        return self.nd * self.nb

    @property
    def nq(self):
        return self.nx * self.nb

    @property
    def x0(self):
        return np.concatenate([b.x0 for b in self.bodies])

    @property
    def v0(self):
        return np.concatenate([b.v0 for b in self.bodies])

    def finalize(self):
        """Group the constraint primitives by kind, build the sparsity pattern and the tree ordering."""
        if self._final:
            return
        nb, nd = self.nb, self.nd
        if nb == 0:
            raise ModelError("the system has no bodies", element="CartesianSystem")
        # mass matrix (dense blocks per body)
        self.mass = np.array([b.mass for b in self.bodies])
        if self.dim == 2:
            self.J = np.array([float(b.inertia) for b in self.bodies])
            self.Mdiag = np.repeat(self.mass, 3).reshape(nb, 3)
            self.Mdiag[:, 2] = self.J
            self.Mdiag = self.Mdiag.ravel()
            Mblocks = np.zeros((nb, 3, 3))
            Mblocks[:, 0, 0] = Mblocks[:, 1, 1] = self.mass
            Mblocks[:, 2, 2] = self.J
        else:
            self.J = np.array([b.inertia for b in self.bodies])
            Mblocks = np.zeros((nb, 6, 6))
            for k in range(3):
                Mblocks[:, k, k] = self.mass
            Mblocks[:, 3:, 3:] = self.J
        self.Mblocks = Mblocks
        self.M = sp.block_diag(list(Mblocks), format="csc")
        self._Minv_diag = 1.0 / np.maximum(self.M.diagonal(), 1e-300 + 0 * self.M.diagonal().max())
        self._Minv_diag[self.M.diagonal() <= 0] = 1.0 / max(self.M.diagonal().max(), 1e-300)
        self._Minv_clip = 1.0 / np.maximum(self.M.diagonal(), 1e-3 * self.M.diagonal().max())
        self.Mdense_ok = nb * nd <= 400
        # constraint primitives
        groups = {}
        row = 0
        self.joint_rows = {}
        self.joint_bodies = {}
        for jt in self.joints:
            bi, bj = self.body_index(jt.body_i), self.body_index(jt.body_j)
            if bi == bj:
                raise ModelError(f"joint {jt.name!r} connects body {jt.body_i!r} to itself",
                                 element=f"joint {jt.name!r}")
            start = row
            for kind, m, params in jt.primitives(self):
                g = groups.setdefault((kind, m), dict(bi=[], bj=[], rows=[], params=[]))
                g["bi"].append(bi)
                g["bj"].append(bj)
                g["rows"].append(np.arange(row, row + m))
                g["params"].append(params)
                row += m
            if jt.name in self.joint_rows:
                raise ModelError(f"joint name {jt.name!r} used twice", element=f"joint {jt.name!r}")
            self.joint_rows[jt.name] = np.arange(start, row)
            self.joint_bodies[jt.name] = (bi, bj)
        self.n_lib_rows = row
        self.groups = []
        for (kind, m), g in groups.items():
            params = {key: np.array([p[key] for p in g["params"]], dtype=float) for key in g["params"][0]}
            bi = np.array(g["bi"])
            bj = np.array(g["bj"])
            rows = np.array(g["rows"])
            # ground slot = index nb in the gathered arrays
            gi = np.where(bi == 0, nb, bi - 1)
            gj = np.where(bj == 0, nb, bj - 1)
            self.groups.append(dict(kind=kind, m=m, params=params, gi=gi, gj=gj, bi=bi, bj=bj, rows=rows))
        vel_rows = []
        for uc in self.user_constraints:
            for name, sl in uc.slices.items():
                self.joint_rows[name] = np.arange(row + sl.start, row + sl.stop)
                self.joint_bodies[name] = None
            vel_rows += [row + k for k in np.flatnonzero(np.asarray(getattr(uc, "level", np.full(uc.m, 2))) == 1)]
            row += uc.m
        self.velocity_rows = np.array(vel_rows, dtype=int)
        self.nc = row
        # COO pattern of Q for the library rows
        r_list, c_list = [], []
        for g in self.groups:
            k, m = g["rows"].shape
            cols_i = (g["bi"] - 1)[:, None] * nd + np.arange(nd)[None, :]
            cols_j = (g["bj"] - 1)[:, None] * nd + np.arange(nd)[None, :]
            rr = np.broadcast_to(g["rows"][:, :, None], (k, m, nd))
            ci = np.broadcast_to(cols_i[:, None, :], (k, m, nd))
            cj = np.broadcast_to(cols_j[:, None, :], (k, m, nd))
            mi = np.broadcast_to((g["bi"] > 0)[:, None, None], (k, m, nd))
            mj = np.broadcast_to((g["bj"] > 0)[:, None, None], (k, m, nd))
            g["mask_i"], g["mask_j"] = mi.ravel(), mj.ravel()
            r_list += [rr.ravel()[g["mask_i"]], rr.ravel()[g["mask_j"]]]
            c_list += [ci.ravel()[g["mask_i"]], cj.ravel()[g["mask_j"]]]
        self._qrows = np.concatenate(r_list) if r_list else np.zeros(0, int)
        self._qcols = np.concatenate(c_list) if c_list else np.zeros(0, int)
        self._qflat = self._qrows * self.nv + self._qcols
        self.dense = self.nv + self.nc <= 300
        if self.dense:
            self._Mdense = self.M.toarray()
            self._Kbuf = np.zeros((self.nv + self.nc, self.nv + self.nc))
            self._Kbuf[: self.nv, : self.nv] = self._Mdense
        self._final = True
        self._setup_tree()
        if self.solver == "auto":
            self._solver = "tree" if self.tree is not None else "al"
        else:
            self._solver = self.solver
        # redundancy check at the initial configuration (rank of Q)
        self.redundant = False
        if self.nc:
            Q = self.constraint_jacobian(self.x0)
            Q = Q if self.dense else Q.toarray()
            if min(Q.shape) <= 600:
                sv = np.linalg.svd(Q, compute_uv=False)
                rank = int(np.sum(sv > sv[0] * 1e-10)) if sv.size else 0
                self.redundant = rank < self.nc
                self.rank0 = rank
        if self.redundant and self.solver == "auto":
            self._solver = "al"

    def _setup_tree(self):
        """Tree ordering of the KKT graph (seed 001 §2.7).

        Vertices: the bodies and the body–body joints.  The joints to the ground are merged into their
        body's block, which is made the root of its connected component, so no constraint vertex is a
        leaf with a zero pivot.  Usable when the graph *with the ground* is a tree (a forest after the
        ground is removed, with at most one grounded body per component); otherwise ``self.tree`` is None.
        """
        self.tree = None
        if self.user_constraints or self.nc == 0:
            return
        nb, nd = self.nb, self.nd
        ground_rows = [[] for _ in range(nb)]
        grounded = [0] * nb
        jverts = []
        for name, rows in self.joint_rows.items():
            bi, bj = self.joint_bodies[name]
            if bi == 0 or bj == 0:
                k = (bj if bi == 0 else bi) - 1
                ground_rows[k].extend(rows.tolist())
                grounded[k] += 1
            else:
                jverts.append((name, rows, bi - 1, bj - 1))
        nvert = nb + len(jverts)
        adj = [[] for _ in range(nvert)]
        for k, (_, _, a, b) in enumerate(jverts):
            v = nb + k
            adj[v] += [a, b]
            adj[a].append(v)
            adj[b].append(v)
        parent = [-2] * nvert
        order = []
        starts = [k for k in range(nb) if grounded[k]] + list(range(nb))
        for root in starts:
            if parent[root] != -2:
                continue
            parent[root] = -1
            comp, stack = [], [root]
            while stack:
                v = stack.pop()
                comp.append(v)
                for w in adj[v]:
                    if parent[w] == -2:
                        parent[w] = v
                        stack.append(w)
                    elif w != parent[v] and parent[w] != v:
                        return  # a loop among the bodies
            if sum(grounded[v] > 0 for v in comp if v < nb) > 1:
                return      # a loop closed through the ground
            order += comp[::-1]
        nvar = self.nv + self.nc
        idx = []
        for v in range(nvert):
            if v < nb:
                idx.append(np.concatenate([np.arange(v * nd, (v + 1) * nd),
                                           self.nv + np.array(ground_rows[v], dtype=int)]))
            else:
                idx.append(self.nv + jverts[v - nb][1])
        children = [[] for _ in range(nvert)]
        for v in range(nvert):
            if parent[v] >= 0:
                children[parent[v]].append(v)
        self.tree = dict(order=order, parent=parent, children=children, idx=idx, nvar=nvar, nb=nb)

    # -------------------------------------------------------------------- kinematics
    def _body_state(self, x, V):
        """Per-body arrays with one extra slot (index nb) for the ground."""
        nb = self.nb
        if self.dim == 2:
            X = x.reshape(nb, 3)
            W = V.reshape(nb, 3)
            ph = np.append(X[:, 2], 0.0)
            A = _rot2(ph)
            r = np.vstack([X[:, :2], np.zeros((1, 2))])
            v = np.vstack([W[:, :2], np.zeros((1, 2))])
            w = np.append(W[:, 2], 0.0)
            return dict(A=A, r=r, v=v, w=w, ph=ph)
        X = x.reshape(nb, 7)
        W = V.reshape(nb, 6)
        A = np.concatenate([quat_to_matrix(X[:, 3:]), np.eye(3)[None]], axis=0)
        r = np.vstack([X[:, :3], np.zeros((1, 3))])
        v = np.vstack([W[:, :3], np.zeros((1, 3))])
        w = np.vstack([W[:, 3:], np.zeros((1, 3))])
        return dict(A=A, r=r, v=v, w=w)

    def _eval_groups(self, x, V):
        B = self._body_state(x, V)
        out = []
        for g in self.groups:
            gi, gj = g["gi"], g["gj"]
            K = dict(Ai=B["A"][gi], ri=B["r"][gi], vi=B["v"][gi], wi=B["w"][gi],
                     Aj=B["A"][gj], rj=B["r"][gj], vj=B["v"][gj], wj=B["w"][gj])
            if self.dim == 2:
                K["phi"], K["phj"] = B["ph"][gi], B["ph"][gj]
            out.append(_EVALUATORS[g["kind"]](g["params"], K))
        return out

    def _assemble(self, x, V, need_b=True):
        """Q (sparse csr, nc × nv), b (nc,), position residual (nc,) (seed 001 eq. 2.48 stacked)."""
        ev = self._eval_groups(x, V if V is not None else np.zeros(self.nv))
        data = []
        b = np.zeros(self.nc)
        phi = np.zeros(self.nc)
        for g, (Qi, Qj, bb, ph) in zip(self.groups, ev):
            data += [Qi.ravel()[g["mask_i"]], Qj.ravel()[g["mask_j"]]]
            b[g["rows"].ravel()] = bb.ravel()
            phi[g["rows"].ravel()] = ph.ravel()
        vals = np.concatenate(data) if data else np.zeros(0)
        if self.dense:
            Q = np.zeros(self.nc * self.nv)
            Q[self._qflat] = vals
            Q = Q.reshape(self.nc, self.nv)
        else:
            Q = sp.csr_matrix((vals, (self._qrows, self._qcols)), shape=(self.nc, self.nv))
        if self.user_constraints:
            bu, pu = [], []
            Qu = [Q[: self.n_lib_rows]]
            for uc in self.user_constraints:
                Ju, bb, ph = self._user_rows(uc, x, V, need_b)
                Qu.append(Ju if self.dense else sp.csr_matrix(Ju))
                bu.append(bb)
                pu.append(ph)
            Q = np.vstack(Qu) if self.dense else sp.vstack(Qu, format="csr")
            b[self.n_lib_rows:] = np.concatenate(bu)
            phi[self.n_lib_rows:] = np.concatenate(pu)
        return Q, b, phi

    def _user_rows(self, uc, x, V, need_b):
        return uc.rows(x, V if V is not None else np.zeros(self.nv), need_b)

    def constraint_jacobian(self, x):
        self.finalize()
        return self._assemble(x, None, need_b=False)[0]

    def retract(self, x, dv):
        """Move coordinates x by a velocity-space increment dv (quaternions by the exponential map)."""
        if self.dim == 2:
            return x + dv
        X = x.reshape(self.nb, 7).copy()
        D = dv.reshape(self.nb, 6)
        X[:, :3] += D[:, :3]
        q = _quat_mul(X[:, 3:], _quat_exp(D[:, 3:]))
        X[:, 3:] = q / np.linalg.norm(q, axis=1)[:, None]
        return X.ravel()

    def qdot(self, x, V):
        """Time derivative of the coordinates (quaternion kinematics for spatial bodies)."""
        if self.dim == 2:
            return V.copy()
        X = x.reshape(self.nb, 7)
        W = V.reshape(self.nb, 6)
        out = np.empty((self.nb, 7))
        out[:, :3] = W[:, :3]
        w0 = np.zeros((self.nb, 4))
        w0[:, 1:] = W[:, 3:]
        out[:, 3:] = 0.5 * _quat_mul(X[:, 3:], w0)
        return out.ravel()

    # -------------------------------------------------------------------- forces
    def point_position(self, x, body, point):
        """Inertial position of a point of a body (point from the centre of mass, body axes)."""
        k = self.body_index(body)
        point = np.asarray(point, float)
        if k == 0:
            return point.copy()
        if self.dim == 2:
            X = x[3 * (k - 1): 3 * k]
            return X[:2] + _rot2(X[2]) @ point
        X = x[7 * (k - 1): 7 * k]
        return X[:3] + quat_to_matrix(X[3:]) @ point

    def _point_vel(self, x, V, k, point):
        if k == 0:
            return point.copy(), np.zeros(self.dim), None
        if self.dim == 2:
            X = x[3 * (k - 1): 3 * k]
            W = V[3 * (k - 1): 3 * k]
            Ap = _rot2(X[2]) @ point
            return X[:2] + Ap, W[:2] + W[2] * (_OMEGA @ Ap), Ap
        X = x[7 * (k - 1): 7 * k]
        W = V[6 * (k - 1): 6 * k]
        A = quat_to_matrix(X[3:])
        return X[:3] + A @ point, W[:3] + A @ np.cross(W[3:], point), A

    def applied_forces(self, t, x, V):
        """Generalized applied forces F (gravity, springs, torques, callback) minus gyroscopic terms (eq. 2.9)."""
        nb, nd = self.nb, self.nd
        F = np.zeros((nb, nd))
        F[:, : self.dim] = self.mass[:, None] * self.gravity[None, :]
        if self.dim == 3:
            W = V.reshape(nb, 6)[:, 3:]
            Jw = np.einsum("kab,kb->ka", self.J, W)
            F[:, 3:] -= np.cross(W, Jw)
        for s in self.springs:
            ka, kb = self.body_index(s.body_a), self.body_index(s.body_b)
            pa, va, Aa = self._point_vel(x, V, ka, s.pa)
            pb, vb, Ab = self._point_vel(x, V, kb, s.pb)
            d = pb - pa
            L = np.linalg.norm(d)
            u = d / L
            f = -(s.k * (L - s.l0) + s.c * float(u @ (vb - va))) * u   # force on b
            for kk, ff, A, pt in ((kb, f, Ab, s.pb), (ka, -f, Aa, s.pa)):
                if kk == 0:
                    continue
                F[kk - 1, : self.dim] += ff
                if self.dim == 2:
                    Ap = A
                    F[kk - 1, 2] += Ap[0] * ff[1] - Ap[1] * ff[0]
                else:
                    F[kk - 1, 3:] += np.cross(pt, A.T @ ff)
        for tq in self.torques:
            k = self.body_index(tq.body)
            F[k - 1, self.dim:] += tq.torque
        for tq in self.rel_torques:
            ki, kj = self.body_index(tq.body_i), self.body_index(tq.body_j)
            if self.dim == 2:
                if kj:
                    F[kj - 1, 2] += tq.torque[0]
                if ki:
                    F[ki - 1, 2] -= tq.torque[0]
            else:  # torque given in body-i axes
                Ai = np.eye(3) if ki == 0 else quat_to_matrix(x[7 * (ki - 1) + 3: 7 * ki])
                Aj = np.eye(3) if kj == 0 else quat_to_matrix(x[7 * (kj - 1) + 3: 7 * kj])
                if kj:
                    F[kj - 1, 3:] += Aj.T @ Ai @ tq.torque
                if ki:
                    F[ki - 1, 3:] -= tq.torque
        F = F.ravel()
        if self.force_callback is not None:
            F = F + np.asarray(self.force_callback(t, x, V), float)
        return F

    # -------------------------------------------------------------------- linear algebra
    def _kkt(self, Q):
        if self.dense:
            K = self._Kbuf
            nv = self.nv
            K[nv:, :nv] = Q
            K[:nv, nv:] = Q.T
            return K
        return sp.bmat([[self.M, Q.T], [Q, None]], format="csc")

    def solve_kkt(self, Q, rhs_f, rhs_b, solver=None, t=None):
        """Solve ``[[M, Qᵀ], [Q, 0]] [Ẍ; μ] = [F; b]`` (seed 001, eq. 2.49); returns (Ẍ, μ).

        Singular systems (redundant constraints, singular positions) are detected by the residual
        check and solved again by the rank-revealing / augmented-Lagrangian path.
        """
        solver = solver or self._solver
        nv = self.nv
        rhs = np.concatenate([rhs_f, rhs_b])
        self.stats["solves"] += 1
        if self.nc == 0:
            return np.concatenate([np.linalg.solve(B, f) for B, f in
                                   zip(self.Mblocks, rhs_f.reshape(self.nb, self.nd))]), np.zeros(0)
        sol = None
        K = None
        try:
            if solver == "tree":
                sol = tree_ldlt_solve(self, Q, rhs)
            elif solver == "dense":
                K = self._kkt(Q)
                sol = np.linalg.solve(K, rhs)
            elif solver == "sparse":
                K = self._kkt(Q)
                sol = spla.splu(sp.csc_matrix(K)).solve(rhs)
            elif solver == "schur":
                Qd = Q if self.dense else Q.toarray()
                Minv = sla.block_diag(*[np.linalg.inv(B) for B in self.Mblocks])
                S = Qd @ Minv @ Qd.T
                a0 = Minv @ rhs_f
                mu = np.linalg.solve(S, Qd @ a0 - rhs_b)
                sol = np.concatenate([a0 - Minv @ (Qd.T @ mu), mu])
            elif solver == "al":
                return self._al_solve(Q, rhs_f, rhs_b)
            elif solver != "robust":
                raise ModelError(f"unknown solver {solver!r}", element="solver")
        except (np.linalg.LinAlgError, RuntimeError):
            sol = None
        if sol is not None and np.all(np.isfinite(sol)):
            if K is None:
                K = self._kkt(Q)
            res = np.abs(K @ sol - rhs).max()
            scale = np.abs(rhs).max() + abs(K).max() * np.abs(sol).max()
            if res <= 1e-11 * scale:
                return sol[:nv], sol[nv:]
        self.stats["fallbacks"] += 1
        if solver == "robust":
            return self._robust_solve(Q, rhs_f, rhs_b, t)
        return self._al_solve(Q, rhs_f, rhs_b)

    al_eps = 1e-10
    al_iterations = 3

    def _al_solve(self, Q, F, b):
        """Augmented-Lagrangian solve of the KKT system (quasi-definite, never singular).

        ``[[M, Qᵀ], [Q, −εI]] [Ẍ; μ_{k+1}] = [F; b − ε μ_k]``, μ_0 = 0, a fixed number of iterations
        (Bayo, García de Jalón & Serna 1988).  Each iteration divides the error of a constraint
        direction with singular value σ (of Q M^-1/2) by ``1 + σ²/ε``: well-conditioned directions are
        exact after two iterations, while directions that vanish — redundant constraints (A04) and
        singular positions (A02) — stay bounded instead of blowing up.  ε is relative to the mean
        diagonal of ``Q M⁻¹ Qᵀ``; the fixed iteration count keeps the right-hand side smooth.
        """
        nv, nc = self.nv, self.nc
        # scale of Q M⁻¹ Qᵀ (mean diagonal), with M's diagonal clipped at 1e-3 of its largest entry so
        # that a tiny inertia about a thin bar's axis does not dominate
        w = self._Minv_clip
        scale = float(np.mean((Q * Q) @ w)) if self.dense else float(np.mean(Q.multiply(Q) @ w))
        eps = self.al_eps * max(scale, 1e-300)
        if self.dense:
            K = self._kkt(Q).copy()
            K[nv:, nv:] = -eps * np.eye(nc)
            lu = sla.lu_factor(K, check_finite=False)   # LU, not an explicit inverse: K is ill-conditioned
            solve = lambda r: sla.lu_solve(lu, r, check_finite=False)
        else:
            K = sp.bmat([[self.M, Q.T], [Q, -eps * sp.identity(nc)]], format="csc")
            solve = spla.splu(K).solve
        mu = np.zeros(nc)
        for _ in range(self.al_iterations):
            sol = solve(np.concatenate([F, b - eps * mu]))
            mu = sol[nv:]
        return sol[:nv], mu

    def _robust_solve(self, Q, F, b, t=None):
        """Least squares for dependent constraints: minimum-norm multipliers, unique accelerations."""
        nv = self.nv
        if nv + self.nc <= 800:
            K = self._kkt(Q)
            K = K if self.dense else K.toarray()
            sol, *_ = sla.lstsq(K, np.concatenate([F, b]), cond=1e-12, lapack_driver="gelsd")
            return sol[:nv], sol[nv:]
        # augmented Lagrangian on M + α QᵀQ (sparse, SPD)
        alpha = 1e7 * float(self.M.diagonal().mean()) / max(float(Q.multiply(Q).sum()) / max(self.nc, 1), 1e-300)
        A = (self.M + alpha * (Q.T @ Q)).tocsc()
        lu = spla.splu(A)
        mu = np.zeros(self.nc)
        xdd = lu.solve(F + alpha * (Q.T @ b))
        for _ in range(30):
            r = Q @ xdd - b
            if np.linalg.norm(r) <= 1e-12 * (np.linalg.norm(b) + 1e-300) + 1e-14:
                break
            mu += alpha * r
            xdd = lu.solve(F - Q.T @ mu + alpha * (Q.T @ b))
        return xdd, mu

    # -------------------------------------------------------------------- dynamics
    def accelerations(self, t, x, V, baumgarte=None):
        """Accelerations Ẍ and multipliers λ (``M Ẍ = F + Qᵀλ``, ``Q Ẍ = b``; seed 001 eqs. 2.45, 2.49).

        ``baumgarte=(alpha, beta)`` replaces b by ``b − 2α Q V − β² φ`` (Baumgarte stabilization).
        """
        self.finalize()
        Q, b, phi = self._assemble(x, V)
        if baumgarte is not None:
            a, bt = baumgarte
            b = b - 2.0 * a * (Q @ V) - bt * bt * phi
        F = self.applied_forces(t, x, V)
        xdd, mu = self.solve_kkt(Q, F, b, t=t)
        return xdd, -mu

    def rhs(self, t, y, baumgarte=None):
        """State derivative of ``y = [x; V]`` for an ODE integrator.

        Quiet about floating-point overflow: an adaptive method's trial step on a stiff model (A05's
        spring-dampers) may reach a state far off, whose derivative overflows; the method rejects that step,
        and a state that stays non-finite ends the run with its reason."""
        x, V = y[: self.nq], y[self.nq:]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            xdd, _ = self.accelerations(t, x, V, baumgarte)
            return np.concatenate([self.qdot(x, V), xdd])

    def residuals(self, t, x, V):
        """Position, velocity and acceleration constraint residuals (max-abs each)."""
        self.finalize()
        Q, b, phi = self._assemble(x, V)
        xdd, _ = self.accelerations(t, x, V)
        return (float(np.abs(phi).max(initial=0.0)), float(np.abs(Q @ V).max(initial=0.0)),
                float(np.abs(Q @ xdd - b).max(initial=0.0)))

    def reactions(self, t, x, V):
        """Per joint: ``{name: [(body_i, Q_iᵀλ), (body_j, Q_jᵀλ)]}`` (seed 001, eqs. 2.23–2.26).

        Planar: (F_x, F_y, M_z) on the body; spatial: (force inertial, moment about c in body axes).
        Ground entries are omitted.
        """
        self.finalize()
        Q, b, phi = self._assemble(x, V)
        xdd, lam = self.accelerations(t, x, V)
        Qd = Q if self.dense else Q.tocsr()
        out = {}
        nd = self.nd
        for name, rows in self.joint_rows.items():
            gen = np.asarray(Qd[rows].T @ lam[rows]).ravel()   # contributions to all bodies of this joint
            pairs = []
            bodies = self.joint_bodies[name]
            if bodies is None:
                bodies = [k + 1 for k in range(self.nb) if np.any(gen[k * nd:(k + 1) * nd])]
            for k in bodies:
                if k == 0:
                    continue
                pairs.append((self.bodies[k - 1].name, np.asarray(gen[(k - 1) * nd: k * nd]).ravel()))
            out[name] = pairs
        return out

    def energy(self, x, V):
        """Kinetic + potential energy (gravity, springs)."""
        self.finalize()
        nb = self.nb
        if self.dim == 2:
            W = V.reshape(nb, 3)
            X = x.reshape(nb, 3)
            T = 0.5 * np.sum(self.mass * (W[:, 0] ** 2 + W[:, 1] ** 2) + self.J * W[:, 2] ** 2)
            U = -np.sum(self.mass * (X[:, :2] @ self.gravity))
        else:
            W = V.reshape(nb, 6)
            X = x.reshape(nb, 7)
            T = 0.5 * np.sum(self.mass * np.sum(W[:, :3] ** 2, axis=1)) + 0.5 * np.einsum(
                "ka,kab,kb->", W[:, 3:], self.J, W[:, 3:])
            U = -np.sum(self.mass * (X[:, :3] @ self.gravity))
        for s in self.springs:
            d = self.point_position(x, s.body_b, s.pb) - self.point_position(x, s.body_a, s.pa)
            U += 0.5 * s.k * (np.linalg.norm(d) - s.l0) ** 2
        return float(T + U)

    # -------------------------------------------------------------------- projections
    def _min_norm_correction(self, Q, rhs_b):
        """Δ minimizing ΔᵀMΔ with Q Δ = rhs_b (the KKT system with zero force)."""
        d, _ = self.solve_kkt(Q, np.zeros(self.nv), rhs_b)
        return d

    def project_position(self, x, tol=0.0, maxiter=20, t=None):
        """Newton projection of the coordinates onto φ(x) = 0 (mass-weighted least change), down to
        ``|φ| ≤ tol`` (0: round-off: once below ``POLISH``, until a step no longer halves ``|φ|``; near a
        singular position a small residual alone is no small distance, see ``formulations/base.py``)."""
        self.finalize()
        x = x.copy()
        if self.dim == 3:  # renormalize quaternions
            X = x.reshape(self.nb, 7)
            X[:, 3:] /= np.linalg.norm(X[:, 3:], axis=1)[:, None]
        prev = np.inf
        for it in range(maxiter):
            Q, phi = self._position_rows(x)
            err = np.abs(phi).max(initial=0.0)
            if err <= tol or (prev <= POLISH and not err < 0.5 * prev):
                return x
            prev = err
            x = self.retract(x, self._min_norm_correction(Q, -phi))
        Q, phi = self._position_rows(x)
        err = np.abs(phi).max(initial=0.0)
        if err > max(tol, 1e-8):
            bad = self._worst_joints(phi)
            raise ConstraintError(f"position projection did not converge (max residual {err:.3e}) in "
                                  f"joints {', '.join(bad)}: the positions cannot be assembled",
                                  time=t, joints=bad)
        return x

    def _position_rows(self, x):
        """Q and φ with the velocity-level rows (rolling without slip: not derivatives of positions) zeroed, so
        that a position projection leaves them alone."""
        Q, _, phi = self._assemble(x, None, need_b=False)
        vel = self.velocity_rows
        if len(vel):
            Q = Q.copy() if self.dense else Q.tolil()
            Q[vel] = 0.0
            Q = Q if self.dense else Q.tocsr()
            phi = phi.copy()
            phi[vel] = 0.0
        return Q, phi

    def project_velocity(self, x, V):
        """Mass-orthogonal projection of the velocities onto Q V = 0."""
        self.finalize()
        Q = self._assemble(x, None, need_b=False)[0]
        return V + self._min_norm_correction(Q, -(Q @ V))

    def _worst_joints(self, phi):
        out = []
        for name, rows in self.joint_rows.items():
            if np.abs(phi[rows]).max(initial=0) > 1e-8:
                out.append(name)
        return out or list(self.joint_rows)[:1]

    def consistent_initial(self, x0=None, v0=None):
        """Project user initial values onto the position and velocity constraint manifolds."""
        x0 = self.x0 if x0 is None else np.asarray(x0, float)
        v0 = self.v0 if v0 is None else np.asarray(v0, float)
        x = self.project_position(x0, t=0.0)
        return x, self.project_velocity(x, v0)


# ----------------------------------------------------------------------------------------------
# tree-ordered block LDLᵀ without fill-in (seed 001 §2.7, after Baraff 1996)
# ----------------------------------------------------------------------------------------------
def tree_ldlt_solve(system, Q, rhs):
    """Solve the KKT system by the block LDLᵀ of the tree-ordered matrix (seed 001, eqs. 2.55–2.61).

    Vertices are the bodies (each with the rows of its joints to the ground merged into its block, so
    that no constraint vertex is a leaf with a zero pivot) and the body–body joints; children are
    eliminated before parents, so the factor has nonzero blocks only where H has them:
    ``D_v = H_vv − Σ_c L_cᵀ D_c L_c``, ``L_c = D_c⁻¹ H_{c,par(c)}`` (eq. 2.60 corrected, 2.61);
    forward ``b'_v = b_v − Σ_c L_cᵀ b'_c``, back ``x_c = D_c⁻¹ b'_c − L_c x_par(c)``.
    """
    tr = system.tree
    if tr is None:
        raise np.linalg.LinAlgError("the constraint graph is not a tree")
    nb, nd, nv = system.nb, system.nd, system.nv
    Qd = Q if isinstance(Q, np.ndarray) else Q.toarray()
    idx, parent, children, order = tr["idx"], tr["parent"], tr["children"], tr["order"]
    nvert = len(idx)

    def H_vv(v):
        iv = idx[v]
        D = np.zeros((len(iv), len(iv)))
        if v < nb:
            D[:nd, :nd] = system.Mblocks[v]
            rows = iv[nd:] - nv
            if len(rows):
                G = Qd[rows, v * nd:(v + 1) * nd]
                D[nd:, :nd] = G
                D[:nd, nd:] = G.T
        return D

    def H_cp(c, p):
        """Off-diagonal block H_{c,p} (rows of vertex c, columns of vertex p)."""
        ic, ip = idx[c], idx[p]
        H = np.zeros((len(ic), len(ip)))
        if c < nb:   # body c below joint p: Qᵀ block
            H[:nd, :] = Qd[ip - nv, c * nd:(c + 1) * nd].T
        else:        # joint c below body p
            H[:, :nd] = Qd[ic - nv, p * nd:(p + 1) * nd]
        return H

    Dinv = [None] * nvert
    L = [None] * nvert
    Hc = [None] * nvert
    for v in order:                       # factorization, children before parents (eqs. 2.60, 2.61)
        D = H_vv(v)
        for c in children[v]:
            D -= L[c].T @ Hc[c]
        Dinv[v] = np.linalg.inv(D)
        if parent[v] >= 0:
            Hcp = H_cp(v, parent[v])
            L[v] = Dinv[v] @ Hcp
            Hc[v] = Hcp
    bprime = [None] * nvert
    y = [None] * nvert
    for v in order:                       # forward: b'_v = b_v − Σ_c L_cᵀ b'_c
        bv = rhs[idx[v]].copy()
        for c in children[v]:
            bv -= L[c].T @ bprime[c]
        bprime[v] = bv
        y[v] = Dinv[v] @ bv
    x = np.zeros(tr["nvar"])
    for v in reversed(order):             # back: x_c = D_c⁻¹ b'_c − L_c x_par(c)
        xv = y[v]
        if parent[v] >= 0:
            xv = xv - L[v] @ x[idx[parent[v]]]
        x[idx[v]] = xv
    return x


# ----------------------------------------------------------------------------------------------
# the Cartesian system of a Model: simulate(model, ..., formulation="cartesian")
# ----------------------------------------------------------------------------------------------
_FIXED, _REVOLUTE, _PRISMATIC, _CYLINDRICAL, _UNIVERSAL, _SPHERICAL, _PLANAR, _FREE = range(8)


@dataclass
class Embedding:
    """How the Model's bodies sit in the Cartesian system. Spatial (``dim = 3``): every body at its centre of
    mass with its own axes. Planar (``dim = 2``): every body moves parallel to the plane through ``origin``
    spanned by ``e1``, ``e2`` (normal ``n = e1 × e2``); body k's planar coordinates are its centre's
    ``(x, y)`` along e1, e2 and its rotation angle φ about n from its orientation ``R0[k]`` at the initial
    configuration (φ = 0 there); ``depth[k]`` is its constant offset along n."""

    dim: int
    e1: np.ndarray = None
    e2: np.ndarray = None
    n: np.ndarray = None
    origin: np.ndarray = None
    R0: np.ndarray = None
    depth: np.ndarray = None

    def placements(self, model, x):
        """(R, p) of every body's kernel frame (ground first) for the Cartesian coordinates x."""
        nb = model.nbodies
        com = np.asarray(model.com)
        R = np.zeros((nb + 1, 3, 3))
        P = np.zeros((nb + 1, 3))
        R[0] = np.eye(3)
        if self.dim == 3:
            X = x.reshape(nb, 7)
            R[1:] = quat_to_matrix(X[:, 3:])
            C = X[:, :3]
        else:
            X = x.reshape(nb, 3)
            R[1:] = np.einsum("kab,kbc->kac", _rotations_about(self.n, X[:, 2]), self.R0[1:])
            C = self.origin + X[:, :1] * self.e1 + X[:, 1:2] * self.e2 + self.depth[1:, None] * self.n
        P[1:] = C - np.einsum("kab,kb->ka", R[1:], com[1:])
        return R, P

    def velocities(self, model, x, V):
        """(ω, v_C) of every body (ground first), ground axes: angular velocity and centre-of-mass velocity."""
        nb = model.nbodies
        w = np.zeros((nb + 1, 3))
        vc = np.zeros((nb + 1, 3))
        if self.dim == 3:
            W = V.reshape(nb, 6)
            R = quat_to_matrix(x.reshape(nb, 7)[:, 3:])
            w[1:] = np.einsum("kab,kb->ka", R, W[:, 3:])
            vc[1:] = W[:, :3]
        else:
            W = V.reshape(nb, 3)
            w[1:] = W[:, 2:3] * self.n
            vc[1:] = W[:, :1] * self.e1 + W[:, 1:2] * self.e2
        return w, vc


def _rotations_about(n, angles):
    """Rotation matrices about the unit axis n by each of ``angles`` (Rodrigues), shape (k, 3, 3)."""
    K = np.array([[0.0, -n[2], n[1]], [n[2], 0.0, -n[0]], [-n[1], n[0], 0.0]])
    s = np.sin(angles)[:, None, None]
    c = np.cos(angles)[:, None, None]
    return np.eye(3)[None] + s * K[None] + (1.0 - c) * (K @ K)[None]


def planar_embedding(model, K, tol=1e-10):
    """The planar :class:`Embedding` of ``model`` when every body moves parallel to one plane (joints:
    revolute about parallel axes, prismatic along and planar joints in the plane, fixed; gravity in the plane;
    spring ends at equal depth; no constraints other than cut joints), else None. ``K``: forward kinematics at
    the initial configuration (placements in kernel frames)."""
    if any(type(c).__name__ != "LoopJoint" for c in model.constraints):
        return None
    joints = list(model.joints[1:]) + list(model.cut_joints)
    normal = None
    axes = []
    for j in joints:
        code = j.joint.code
        if code not in (_REVOLUTE, _PRISMATIC, _PLANAR, _FIXED):
            return None
        Pa, _ = model.joint_frames(j)
        RJ = K.R[j.parent] @ Pa.rotation
        if code == _REVOLUTE:
            axes.append(("rot", RJ @ j.joint.axis))
        elif code == _PRISMATIC:
            axes.append(("slide", RJ @ j.joint.axis))
        elif code == _PLANAR:
            axes.append(("rot", RJ[:, 2]))
    rots = [a for kind, a in axes if kind == "rot"]
    if rots:
        normal = rots[0]
    else:
        slides = [a for kind, a in axes if kind == "slide"]
        for a in slides[1:]:
            c = np.cross(slides[0], a)
            if np.linalg.norm(c) > 1e-6:
                normal = c / np.linalg.norm(c)
                break
    if normal is None:
        return None
    for kind, a in axes:
        if kind == "rot" and np.linalg.norm(np.cross(a, normal)) > tol:
            return None
        if kind == "slide" and abs(a @ normal) > tol:
            return None
    if abs(np.asarray(model.gravity) @ normal) > tol * max(1.0, np.linalg.norm(model.gravity)):
        return None
    nb = model.nbodies
    depth = np.zeros(nb + 1)
    com_w = K.p + np.einsum("kab,kb->ka", K.R, np.asarray(model.com))
    depth[1:] = com_w[1:] @ normal
    for (ia, ib), (pa, pb) in zip(model.spring_body, model.spring_point):
        if abs((K.R[ia] @ pa + K.p[ia] - K.R[ib] @ pb - K.p[ib]) @ normal) > tol:
            return None
    e1 = np.array([1.0, 0, 0]) - normal[0] * normal
    if np.linalg.norm(e1) < 0.5:
        e1 = np.array([0, 1.0, 0]) - normal[1] * normal
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    return Embedding(dim=2, e1=e1, e2=e2, n=normal, origin=np.zeros(3), R0=K.R.copy(), depth=depth)


class ModelConstraintRows(RowBlock):
    """The Model's constraints that are not joints, as rows of the Cartesian system (seed 001 ch. 2: any
    constraint in the bodies' absolute coordinates). Compiled elements are evaluated by
    ``kernels/constraints.py`` on a workspace filled from the Cartesian state (placements, velocities, and the
    bias accelerations at Ẍ = 0), and each covector c = [c_ω; c_v] of a body becomes its block of Q:
    ``[c_v; Aᵀ(c_ω + c_v × r_C)]`` (spatial) or ``[c_v·e1, c_v·e2, (c_ω + c_v × r_C)·n]`` (planar). Python
    constraints (functions of q) are evaluated at the model coordinates of the state and carried over by
    ``Q = G L``, ``b = γ + G L J̇ v`` with V = J v the Cartesian velocities of the tree and L = J⁺."""

    name = "constraints"

    def __init__(self, model, emb, system):
        from multibody.formulations.constrained import ConstraintRows, make_work

        self.model, self.emb, self.system = model, emb, system
        tab = model.constraint_table
        keep = [k for k, c in enumerate(model.constraints) if type(c).__name__ != "LoopJoint"]
        self.rows_src = ConstraintRows(model, work=make_work(model))
        self.m_c = tab.m_compiled
        self.loop_rows = sum(c.nrows for c in model.constraints if type(c).__name__ == "LoopJoint")
        # rows of the non-joint constraints: compiled ones after the loop joints' rows, then the Python ones
        self.idx = np.array([r for r in range(tab.m) if tab.owner[r] in keep], dtype=int)
        self.m = len(self.idx)
        where = {r: j for j, r in enumerate(self.idx)}
        self.slices = {}
        for k in keep:
            sl = tab.slices[model.constraints[k].name]
            self.slices[model.constraints[k].name] = slice(where[sl.start], where[sl.start] + sl.stop - sl.start)
        self.level = tab.level[self.idx]
        self.python = bool(tab.python)
        self._q_prev = None

    def _fill_workspace(self, x, V):
        from multibody.kernels.kinematics import B_A, B_P, B_R, B_V, WB_WIDTH

        model, emb = self.model, self.emb
        w = self.rows_src.w
        wb = w.tree[13][: (model.nbodies + 1) * WB_WIDTH].reshape(model.nbodies + 1, WB_WIDTH)
        R, P = emb.placements(model, x)
        om, vc = emb.velocities(model, x, V)
        C = P + np.einsum("kab,kb->ka", R, np.asarray(model.com))
        C[0] = 0.0
        wb[:, B_R:B_R + 9] = R.reshape(-1, 9)
        wb[:, B_P:B_P + 3] = P
        wb[:, B_V:B_V + 3] = om
        wb[:, B_V + 3:B_V + 6] = vc + np.cross(C, om)              # v_O = v_C + r_C × ω
        wb[:, B_A:B_A + 3] = 0.0
        wb[:, B_A + 3:B_A + 6] = np.cross(vc, om)                   # at Ẍ = 0: ȧ_O = v_C × ω
        return R, C, om

    def rows(self, x, V, need_b=True):
        from multibody.kernels.constraints import constraint_rows_kernel

        model, emb, sysm = self.model, self.emb, self.system
        w = self.rows_src.w
        nvc = sysm.nv
        Q = np.zeros((self.m, nvc))
        b = np.zeros(self.m)
        phi = np.zeros(self.m)
        if self.m_c > self.loop_rows:
            R, C, om = self._fill_workspace(x, V)
            if not self.rows_src._aux_ready:
                from multibody.kernels.constraints import initial_contact_angles
                initial_contact_angles(w.tree[13], model.nbodies + 1, 0, w.ci, w.cf, w.pi, w.pt, w.s)
                self.rows_src._aux_ready = True
            constraint_rows_kernel(w.tree[13], model.nbodies + 1, 0, w.ci, w.cf, w.pi, w.pt, w.s, 0, w.f, w.cb, w.cv,
                                   w.gam, w.ucoef, w.auxd)
            nd = sysm.nd
            for j, r in enumerate(self.idx):
                if r >= self.m_c:
                    break
                phi[j] = w.f[r]
                b[j] = w.gam[r]
                for slot in range(2):
                    k = w.cb[r, slot]
                    if k <= 0:
                        continue
                    cw, cvv = w.cv[r, slot, :3], w.cv[r, slot, 3:]
                    rot = cw + np.cross(cvv, C[k])
                    blk = slice((k - 1) * nd, k * nd)
                    if emb.dim == 3:
                        Q[j, blk] += np.concatenate([cvv, R[k].T @ rot])
                    else:
                        Q[j, blk] += [cvv @ emb.e1, cvv @ emb.e2, rot @ emb.n]
        if self.python:
            self._python_rows(x, V, Q, b, phi)
        return Q, b, phi

    def _python_rows(self, x, V, Q, b, phi):
        """Rows of the Python constraints through the model coordinates (class docstring)."""
        model = self.model
        q, v = model_state_from_cartesian(model, self.emb, x, V, previous=self._q_prev)
        self._q_prev = q
        J, Jdv = cartesian_velocity_map(model, self.emb, q, v)
        L = np.linalg.pinv(J)
        for c, r0 in model.constraint_table.python:
            val, G, gam, _ = c.rows(model, q, v, 0.0)
            rows = [j for j, r in enumerate(self.idx) if r0 <= r < r0 + c.nrows]
            GL = G @ L
            Q[rows] = GL
            b[rows] = gam + GL @ Jdv
            phi[rows] = val


def cartesian_velocity_map(model, emb, q, v):
    """(J, J̇v): the Cartesian velocities V = J v of the tree velocities v at q, and their rate at v̇ = 0."""
    from multibody.algorithms import forward_kinematics

    nb, nv = model.nbodies, model.nv
    nd = 6 if emb.dim == 3 else 3
    com = np.asarray(model.com)

    def cart(K, level):
        R = K.R[1:]
        rc = np.einsum("bij,bj->bi", R, com[1:])
        vec = (K.velocity if level == 1 else K.acceleration)[1:]
        w = vec[:, :3]
        lin = vec[:, 3:] + np.cross(w, rc)
        if level == 2:   # classical acceleration of the centre: p̈ + ω̇ × rc + ω × (ω × rc)
            om = K.velocity[1:, :3]
            lin = lin + np.cross(om, np.cross(om, rc))
        if emb.dim == 3:
            out = np.concatenate([lin, np.einsum("bji,bj->bi", R, w)], axis=1)   # [ṗ_c; Rᵀω] per body
        else:
            out = np.stack([lin @ emb.e1, lin @ emb.e2, w @ emb.n], axis=1)
        return out.reshape(nb * nd)

    Jdv = cart(forward_kinematics(model, q, v, np.zeros(nv), frames="kernel"), 2)
    return _cartesian_jacobian(model, emb, q, com), Jdv


def _cartesian_jacobian(model, emb, q, com):
    """∂V/∂v at q, all columns at once from one placement pass: the motion subspace s_k = [s_ω; s_v] (ground
    frame, about the ground origin; ``kernels/kinematics.py``) of every coordinate k on the path of body i gives
    body i the angular velocity s_ω and its centre of mass c_i the velocity s_v + s_ω × c_i (seed 001 §3.4, the
    partial velocities)."""
    from multibody.data import default_data
    from multibody.kernels.kinematics import B_P, B_R, IV, NV, PARENT, WB_WIDTH, WD_WIDTH, kinematics_kernel

    d = default_data(model)
    nb, nv = model.nbodies, model.nv
    n = nb + 1
    zero = np.zeros(nv)
    kinematics_kernel(d.mi, d.mf, np.ascontiguousarray(q, dtype=float), zero, zero, d.work, 0)
    wb = d.work[:n * WB_WIDTH].reshape(n, WB_WIDTH)
    S = d.work[n * WB_WIDTH:n * WB_WIDTH + nv * WD_WIDTH].reshape(nv, WD_WIDTH)[:, :6]   # (nv, 6)
    R = wb[1:, B_R:B_R + 9].reshape(nb, 3, 3)
    c = wb[1:, B_P:B_P + 3] + np.einsum("bij,bj->bi", R, com[1:])
    on_path = np.zeros((n, nv), dtype=bool)      # coordinate k moves body i
    for i in range(1, n):
        on_path[i] = on_path[d.mi[i, PARENT]]
        on_path[i, d.mi[i, IV]:d.mi[i, IV] + d.mi[i, NV]] = True
    on_path = on_path[1:, :, None]
    w = np.where(on_path, S[None, :, :3], 0.0)                                 # (nb, nv, 3)
    lin = np.where(on_path, S[None, :, 3:] + np.cross(S[None, :, :3], c[:, None, :]), 0.0)
    if emb.dim == 3:
        blocks = np.concatenate([lin, np.einsum("bji,bkj->bki", R, w)], axis=2)  # [ṗ_c; Rᵀω]
    else:
        blocks = np.stack([lin @ emb.e1, lin @ emb.e2, w @ emb.n], axis=2)
    return np.ascontiguousarray(blocks.transpose(0, 2, 1).reshape(-1, nv))


def cartesian_from_model(model, q=None, v=None, solver="auto", planar=None):
    """The :class:`CartesianSystem` of a Model at the state (q, v), and its :class:`Embedding`.

    Every body becomes a body of the system with its frame at the centre of mass; every joint, tree or cut,
    becomes the book's constraint rows between its two bodies (seed 001 ch. 2): in space Revolute → hinge
    (5 rows), Spherical → 3 point–plane, Prismatic → 2 point–plane + 3 rotation, Cylindrical → 2 point–plane +
    2 rotation, Fixed → 6, Universal → spherical + 1 rotation about the cross's common normal (4), Planar →
    1 point–plane + 2 rotation (3), Free → none; in the plane (``planar``: None detects it, see
    :func:`planar_embedding`) Revolute → 2 point–line rows (seed 001 §2.5), Prismatic → point–line + locked
    angle, Fixed → 3. The Model's other constraints follow as a :class:`ModelConstraintRows` block. Gravity,
    point springs and the constant efforts of revolute joints carry over; joint spring-dampers and torque
    callbacks (generalized forces) have no Cartesian form (``ModelError``).
    """
    from multibody.algorithms import forward_kinematics

    q = model.neutral() if q is None else np.asarray(q, float)
    v = np.zeros(model.nv) if v is None else np.asarray(v, float)
    K = forward_kinematics(model, q, v, frames="kernel")
    emb = planar_embedding(model, K) if planar in (None, True) else None
    if planar and emb is None:
        raise ModelError(f"model '{model.name}' is not planar", element="planar")
    if emb is None:
        emb = Embedding(dim=3)
    if np.any(np.asarray(model.dof_stiffness)) or np.any(np.asarray(model.dof_damping)):
        raise ModelError(f"model '{model.name}': joint spring-dampers are not available in the Cartesian "
                         "formulation", element="joint spring-damper")
    if model.torque_callback is not None:
        raise ModelError(f"model '{model.name}': a torque callback (generalized forces) has no Cartesian form",
                         element="torque callback")
    dim = emb.dim
    g = np.asarray(model.gravity, float)
    s = CartesianSystem(dim=dim, gravity=g if dim == 3 else np.array([g @ emb.e1, g @ emb.e2]), solver=solver)
    nb = model.nbodies
    com = np.asarray(model.com)
    for i in range(1, nb + 1):
        if not model.mass[i] > 0:
            raise ModelError(f"body '{model.body_names[i]}' has no mass; the Cartesian formulation needs a mass "
                             "on every body", element=f"body '{model.body_names[i]}'")
        R, p = K.R[i], K.p[i]
        w = K.velocity[i, :3]
        c = p + R @ com[i]
        vc = K.velocity[i, 3:] + np.cross(w, R @ com[i])
        if dim == 3:
            s.add_body(model.body_names[i], float(model.mass[i]), np.asarray(model.inertia_com[i]), position=(c, R),
                       velocity=(vc, R.T @ w))
        else:
            J = float(emb.n @ (R @ model.inertia_com[i] @ R.T) @ emb.n)
            s.add_body(model.body_names[i], float(model.mass[i]), J, position=(c @ emb.e1, c @ emb.e2, 0.0),
                       velocity=(vc @ emb.e1, vc @ emb.e2, w @ emb.n))
    for jinfo in list(model.joints[1:]) + list(model.cut_joints):
        joint = (_planar_joint if dim == 2 else _spatial_joint)(model, jinfo, K, emb)
        if joint is not None:
            s.add_joint(joint)
        _joint_effort(model, jinfo, K, emb, s)
    for (ia, ib), (pa, pb), sp_ in zip(model.spring_body, model.spring_point, model.springs):
        ends = []
        for i, pt in ((ia, pa), (ib, pb)):
            rel = pt - (com[i] if i else 0.0)
            if dim == 2:
                rel = K.R[i] @ rel if i else rel
                rel = np.array([rel @ emb.e1, rel @ emb.e2])
            ends.append(rel)
        s.add_force(PointSpring(model.body_names[ia], ends[0], model.body_names[ib], ends[1], sp_.stiffness,
                                sp_.damping, sp_.rest_length))
    block = ModelConstraintRows(model, emb, s)
    if block.m:
        s.add_joint(block)
    s.finalize()
    return s, emb


def _joint_points(model, jinfo, K):
    """The joint frame of ``jinfo`` on its two bodies: (R_a, point_a, R_b, point_b), points from each body's
    centre of mass in that body's kernel axes (ground: ground coordinates)."""
    a, b = jinfo.parent, jinfo.child
    Pa, Pb = model.joint_frames(jinfo)
    com = np.asarray(model.com)
    pa = Pa.translation - (com[a] if a > 0 else 0.0)
    pb = Pb.translation - com[b]
    return Pa.rotation, pa, Pb.rotation, pb


def _spatial_joint(model, jinfo, K, emb):
    a, b = jinfo.parent, jinfo.child
    Ra, pi, Rb, pj = _joint_points(model, jinfo, K)
    jt = jinfo.joint
    code = jt.code
    ax = np.asarray(jt.axes())
    na, nb_ = model.body_names[a], model.body_names[b]
    prims = []
    if code in (_REVOLUTE, _SPHERICAL, _FIXED):
        prims.append(("pp", 3, dict(n=Ra.copy(), p=pi, rho=pj)))
    if code in (_REVOLUTE, _CYLINDRICAL):
        ua = Ra @ ax[0]
        n2, n3 = _perp_frame(ua)
        if code == _CYLINDRICAL:
            prims.append(("pp", 2, dict(n=np.array([n2, n3]), p=pi, rho=pj)))
        prims.append(("ra", 2, dict(n=np.array([n2, n3]), ai=ua, aj=Rb @ ax[0])))
    if code == _PRISMATIC:
        ua = Ra @ ax[0]
        n2, n3 = _perp_frame(ua)
        prims.append(("pp", 2, dict(n=np.array([n2, n3]), p=pi, rho=pj)))
    if code in (_PRISMATIC, _FIXED):
        prims.append(("rl", 3, dict(n=np.eye(3), R0=Ra @ Rb.T)))
    if code == _UNIVERSAL:
        return UniversalJoint(jinfo.name, na, nb_, pi, pj, Ra @ ax[0], Rb @ ax[1], cos_angle=float(ax[0] @ ax[1]))
    if code == _PLANAR:
        ez = np.array([0.0, 0.0, 1.0])
        return PlanarJoint(jinfo.name, na, nb_, pi, pj, Ra @ ez, Rb @ ez)
    return _Composite(jinfo.name, na, nb_, 3, prims) if prims else None


def _in_plane(emb, K, body, vec):
    """A vector of ``body``'s kernel axes as planar body coordinates at φ = 0 (ground: ground axes)."""
    w = K.R[body] @ vec if body > 0 else vec
    return np.array([w @ emb.e1, w @ emb.e2])


def _planar_joint(model, jinfo, K, emb):
    a, b = jinfo.parent, jinfo.child
    Ra, pi, Rb, pj = _joint_points(model, jinfo, K)
    code = jinfo.joint.code
    na, nb_ = model.body_names[a], model.body_names[b]
    if a == 0:   # a point of the ground in plane coordinates (from the plane origin)
        pi2 = _in_plane(emb, K, 0, pi - emb.origin)
    else:
        pi2 = _in_plane(emb, K, a, pi)
    pj2 = _in_plane(emb, K, b, pj)
    if code == _REVOLUTE:
        return PlanarRevolute(jinfo.name, na, nb_, pi2, pj2)
    if code == _PRISMATIC:
        axis = _in_plane(emb, K, a, Ra @ jinfo.joint.axis) if a > 0 else _in_plane(emb, K, 0, Ra @ jinfo.joint.axis)
        return PlanarPrismatic(jinfo.name, na, nb_, pi2, axis, pj2, theta0=0.0)
    if code == _FIXED:
        return _Composite(jinfo.name, na, nb_, 2, PlanarRevolute(jinfo.name, na, nb_, pi2, pj2).primitives(None)
                          + PlanarAngle(jinfo.name, na, nb_, 0.0).primitives(None))
    return None   # a Planar joint leaves the plane's three coordinates free


def _joint_effort(model, jinfo, K, emb, s):
    """A constant effort of a revolute joint as a pair of opposite moments about its axis."""
    if jinfo.v_slice is None:
        return
    eff = np.asarray(model.dof_effort)[jinfo.v_slice]
    if not eff.size or not np.any(eff):
        return
    if jinfo.joint.code != _REVOLUTE:
        raise ModelError(f"joint '{jinfo.name}': constant efforts are carried over to the Cartesian formulation for "
                         "revolute joints only", element=f"joint '{jinfo.name}'")
    Ra, _, _, _ = _joint_points(model, jinfo, K)
    axis = Ra @ jinfo.joint.axis               # in the parent's kernel axes
    na, nb_ = model.body_names[jinfo.parent], model.body_names[jinfo.child]
    if emb.dim == 3:
        s.add_force(RelativeTorque(na, nb_, eff[0] * axis))
    else:
        w = K.R[jinfo.parent] @ axis if jinfo.parent > 0 else axis
        s.add_force(RelativeTorque(na, nb_, eff[0] * float(w @ emb.n)))


def model_state_from_cartesian(model, emb, x, V=None, previous=None):
    """Model coordinates (q, v) of a Cartesian state: joint coordinates from the relative placements of the
    tree joints' frames; v by least squares from the Cartesian velocities. ``previous`` (a q) unwraps angles."""
    R, P = emb.placements(model, x)
    q = model.neutral()
    for i in range(1, model.nbodies + 1):
        j = model.joints[i]
        a = j.parent
        RJ = R[a] @ model.jplace_R[i]
        pJ = P[a] + R[a] @ model.jplace_p[i]
        Rrel = RJ.T @ R[i]
        prel = RJ.T @ (P[i] - pJ)
        code = j.joint.code
        ax = np.asarray(j.joint.axes())
        sl = j.q_slice
        prev = None if previous is None else previous[sl]
        if code in (_REVOLUTE, _CYLINDRICAL):
            q[sl.start] = _unwrap(_axis_angle(ax[0], Rrel), prev, 0)
            if code == _CYLINDRICAL:
                q[sl.start + 1] = ax[0] @ prel
        elif code == _PRISMATIC:
            q[sl.start] = ax[0] @ prel
        elif code == _UNIVERSAL:
            # R = rot(a1, θ1) rot(a2, θ2): R a2 = rot(a1, θ1) a2 gives θ1, then rot(a1, θ1)ᵀ R = rot(a2, θ2)
            a1, a2 = ax[0], ax[1]
            c12 = a1 @ a2
            u0, u1 = a2 - c12 * a1, Rrel @ a2 - c12 * a1
            th1 = _unwrap(float(np.arctan2(a1 @ np.cross(u0, u1), u0 @ u1)), prev, 0)
            th2 = _unwrap(_axis_angle(a2, _rotations_about(a1, np.array([th1]))[0].T @ Rrel), prev, 1)
            q[sl] = (th1, th2)
        elif code == _PLANAR:
            th = _unwrap(float(np.arctan2(Rrel[1, 0] - Rrel[0, 1], Rrel[0, 0] + Rrel[1, 1])), prev, 2)
            q[sl] = (prel[0], prel[1], th)
        elif code in (_SPHERICAL, _FREE):
            quat = matrix_to_quat(Rrel)
            if prev is not None and quat @ prev[-4:] < 0:    # the sign of the previous sample (q and −q agree)
                quat = -quat
            q[sl] = quat if code == _SPHERICAL else np.concatenate([prel, quat])
    if V is None:
        return q, None
    J, _ = cartesian_velocity_map(model, emb, q, np.zeros(model.nv))
    return q, np.linalg.lstsq(J, V, rcond=None)[0]


def _axis_angle(a, R):
    """The angle θ of the rotation R = rot(a, θ) about the unit axis a."""
    vee = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return float(np.arctan2(a @ vee, 0.5 * (np.trace(R) - 1.0)))


def _unwrap(th, prev, k):
    return th if prev is None else th + 2 * np.pi * np.round((prev[k] - th) / (2 * np.pi))


def cartesian_system(model, q0=None, v0=None, tau=None, energy=True, solver="auto", consistent=True, planar=None,
                     stabilization="projection", baumgarte=(10.0, 10.0), al_eps=None, max_correction=MAX_INITIAL_CORRECTION):
    """Absolute coordinates of every body + multipliers (seed 001 ch. 2), built from the Model.

    The outputs are converted back to the model's q and v. ``planar``: None detects a planar model and uses
    the three planar coordinates per body (seed 001 §2.5); False forces the spatial form. ``stabilization``:
    ``"projection"`` (positions and velocities projected onto the constraints after every step), ``"baumgarte"``
    (``b − 2α Q V − β² φ``, gains ``baumgarte``) or ``"none"`` (the acceleration-level rows alone). ``al_eps``:
    the relative regularization of the augmented-Lagrangian solve (default 1e-10; through singular positions see
    ``multibody.systems.iftomm.A02_AL_EPS``). ``solver``: the KKT
    solver of :class:`CartesianSystem` (``"auto"``: the tree-ordered block LDLᵀ when the joint graph allows
    it, else the augmented Lagrangian). Residuals: ``position``, ``velocity``, ``acceleration`` (max over the
    rows) and per non-joint constraint. ``consistent``, ``max_correction``: as in the constrained formulation
    (the correction measured on the model's coordinates). Reactions: per joint and constraint, the generalized reactions
    ``Q_iᵀλ`` on its two bodies (seed 001, eq. 2.26), shape (samples, 2, 3 or 6): force along the ground
    (planar: plane) axes and moment about the centre of mass (spatial: body axes).
    """
    from multibody.formulations.base import OdeSystem, check_state, initial_correction
    from multibody.result import Result

    if tau is not None:
        raise ModelError("the Cartesian formulation takes no generalized torques tau", element="tau")
    q0, v0 = check_state(model, q0, v0)
    if stabilization not in ("projection", "baumgarte", "none"):
        raise ModelError(f"stabilization must be 'projection', 'baumgarte' or 'none', got {stabilization!r}",
                         element="stabilization")
    s, emb = cartesian_from_model(model, q0, v0, solver=solver, planar=planar)
    if al_eps is not None:
        s.al_eps = float(al_eps)
    gains = tuple(map(float, baumgarte)) if stabilization == "baumgarte" else None
    x0, V0 = s.x0, s.v0
    correction = None
    if consistent:
        x0, V0 = s.consistent_initial(x0, V0)
        q1, v1 = model_state_from_cartesian(model, emb, x0, V0, previous=q0)
        correction = initial_correction(model, q0, q1, v0, v1, max_correction,
                                        [c.name for c in model.constraints])
    nq = s.nq

    def project_py(t, y):
        x = s.project_position(y[:nq], t=t)
        return np.concatenate([x, s.project_velocity(x, y[nq:])])

    def make_result(t, Y, info):
        Y = np.asarray(Y, float).reshape(len(t), -1)
        Q = np.zeros((len(t), model.nq))
        Vm = np.zeros((len(t), model.nv))
        prev = q0
        E_T, E_V, reac = [], [], {}
        res = {"position": [], "velocity": [], "acceleration": []}
        names = list(s.joint_rows)
        # sums the rows of each joint: (joints x rows); the generalized reaction of joint j is row j of A diag(λ) Q
        A = _row_sums(names, s.joint_rows, s.nc)
        com = np.asarray(model.com)
        for k in range(len(t)):
            x, V = Y[k, :nq], Y[k, nq:]
            Q[k], Vm[k] = model_state_from_cartesian(model, emb, x, V, prev)
            prev = Q[k]
            if energy:
                Etot = s.energy(x, V)
                T = _kinetic(s, V)
                E_T.append(T)
                E_V.append(Etot - T)
            Qc, b, phi = s._assemble(x, V)
            xdd, lam = s.accelerations(t[k], x, V)
            res["position"].append(np.abs(phi).max(initial=0))
            res["velocity"].append(np.abs(Qc @ V).max(initial=0))
            res["acceleration"].append(np.abs(Qc @ xdd - b).max(initial=0))
            if isinstance(Qc, np.ndarray):
                gens = A @ (lam[:, None] * Qc)
            else:
                gens = (A @ Qc.tocsr().multiply(lam[:, None]).tocsr()).toarray()
            R, P = emb.placements(model, x)
            cut = cut_joint_frames(model, R, P)
            for jn, (name, rows) in enumerate(s.joint_rows.items()):
                if s.joint_bodies[name] is None:          # a constraint that is not a joint: its multipliers
                    reac.setdefault(name, []).append(lam[rows])
                    res.setdefault(name, []).append(np.abs(phi[rows]).max(initial=0))
                    continue
                b, Rj, oj = cut[name] if name in cut else (model.joint(name).child, None, None)
                if Rj is None:
                    Rj, oj = R[b], P[b]
                reac.setdefault(name, []).append(_joint_reaction(emb, gens[jn].reshape(s.nb, s.nd)[b - 1], R[b],
                                                                 P[b] + R[b] @ com[b], Rj, oj))
        info = dict(info)
        info["cartesian"] = dict(bodies=s.nb, coordinates=s.nq, constraint_rows=s.nc, solver=s._solver,
                                 planar=emb.dim == 2, redundant=bool(s.redundant), rank=int(getattr(s, "rank0", s.nc)))
        en = {"kinetic": np.array(E_T), "potential": np.array(E_V)} if energy and len(t) else {}
        return Result(t, Q, Vm, energy=en, residuals={k: np.array(v) for k, v in res.items()},
                      reactions={k: np.array(v) for k, v in reac.items()}, info=info,
                      q_names=model.coordinate_names(), v_names=model.velocity_names(), model=model)

    return OdeSystem(x0=np.concatenate([x0, V0]), fun=lambda t, y: s.rhs(t, y, gains), make_result=make_result,
                     split=lambda y: (y[:nq], y[nq:]), rhs=None,
                     project_py=project_py if stabilization == "projection" else None, nsplit=nq,
                     python_only=True, info={"formulation": "cartesian", "planar": emb.dim == 2,
                                             "stabilization": stabilization, "initial_correction": correction})


def _joint_reaction(emb, gen, Rb, c, Rj, oj):
    """The generalized reaction ``Q_bᵀλ`` of a joint on its child body b (seed 001 eq. 2.26: planar (F_x, F_y,
    M_z), spatial (force in ground axes, moment about the centre of mass c in body axes R_b)) as the joint
    reaction of ``multibody.analysis.reactions``: [moment about the joint origin oj; force] in the joint axes Rj."""
    if emb.dim == 2:
        F = gen[0] * emb.e1 + gen[1] * emb.e2
        Mc = gen[2] * emb.n
    else:
        F, Mc = gen[:3], Rb @ gen[3:]
    return in_joint_frame(np.concatenate([Mc + np.cross(c, F), F]), Rj, oj)


def _row_sums(names, joint_rows, nc):
    """The sparse (len(names) x nc) matrix whose row j adds the constraint rows of joint ``names[j]``."""
    from scipy.sparse import csr_matrix

    cols = [np.arange(nc)[joint_rows[name]] for name in names]
    rows = np.concatenate([np.full(len(c), j) for j, c in enumerate(cols)]) if cols else np.zeros(0, int)
    cols = np.concatenate(cols) if cols else np.zeros(0, int)
    return csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(names), nc))


def _kinetic(s, V):
    W = V.reshape(s.nb, s.nd)
    if s.dim == 2:
        return 0.5 * float(np.sum(s.mass * (W[:, 0] ** 2 + W[:, 1] ** 2) + s.J * W[:, 2] ** 2))
    return 0.5 * float(np.sum(s.mass * np.sum(W[:, :3] ** 2, axis=1)) + np.einsum("ka,kab,kb->", W[:, 3:], s.J,
                                                                                    W[:, 3:]))


register_formulation("cartesian", cartesian_system)
