"""Joint configuration spaces: joint transforms, motion subspaces, and motion of q on its manifold.

For every joint type of ``docs/model-arrays.md`` (codes in ``multibody.model.joints``):

* ``joint_transform``: the child body frame in the joint frame, (R, p) with R child -> joint rotation;
* ``motion_subspace``: S (6 x nv_j) in child coordinates, v_J = S v_j is the child's spatial velocity
  [ω; v] relative to the joint frame (seed 001 §3.4.2, eqs. 3.101 and 3.104: the joint's linear and angular
  partial velocities k_ak, p_ak); S depends on q for the Universal and Planar joints;
* ``joint_bias``: c_J = Ṡ v_j in child coordinates (RBDA ch. 4, zero unless S depends on q);
* ``neutral``, ``integrate`` (q ⊕ v dt: the exponential map for quaternions; SE(3) for the Free joint with its
  body-frame twist), ``difference`` (its inverse, q1 ⊖ q0), ``qdot`` (q̇ for v: q̇ = ½ q ⊗ (0, ω) for
  quaternions) and ``normalize``. The texts leave the attitude parameterization open (seed 001 ch. 2); the
  design fixes Euler parameters (w, x, y, z).

Model-level entry points: ``neutral(model)``, ``integrate(model, q, v, dt)``, ``difference(model, q0, q1)``,
``qdot(model, q, v)``, ``normalize(model, q)`` (thin wrappers over the njit kernels ``*_kernel(mi, ...)``,
which compiled code such as a fixed-step integrator calls with the packed ``mi``, ``kernels/packing.py``).

Velocity conventions: Spherical v = ω in the child frame; Free v = [ω; v] with v the velocity of the child
origin, both in the child frame, and position p in the joint frame, so ṗ = R v; Planar v = q̇.
"""

import numpy as np
from numba import njit

from multibody.errors import ModelError
from multibody.kernels.kinematics import (CYLINDRICAL, FIXED, FREE, IQ, IV, JTYPE, NQ, PLANAR, PRISMATIC, REVOLUTE,
                                          SPHERICAL, UNIVERSAL)
from multibody.kernels.packing import packed_integers
from multibody.kernels.spatial import (KERNEL, cross3, helper, mat3_mul, mat3_vec, mat3T_vec, quat_exp, quat_log,
                                       quat_mul, quat_to_rotation, rotation_axis_angle, rotation_z, store_placement)

__all__ = ["neutral", "integrate", "difference", "qdot", "normalize", "joint_transform", "motion_subspace",
           "joint_bias", "integrate_kernel", "difference_kernel", "qdot_kernel", "normalize_kernel",
           "neutral_kernel"]


# ---- SE(3) exponential helpers (Free joint) ---------------------------------------------------------------
@helper
def _se3_V_coeffs(th):
    """A = (1 − cos θ)/θ², B = (θ − sin θ)/θ³ of V(φ) = E + A φ̃ + B φ̃² (left Jacobian of SO(3))."""
    if th < 1e-4:
        t2 = th * th
        return 0.5 - t2 / 24.0, 1.0 / 6.0 - t2 / 120.0
    return (1.0 - np.cos(th)) / (th * th), (th - np.sin(th)) / (th * th * th)


@helper
def _se3_Vinv_coeff(th):
    """C of V(φ)⁻¹ = E − ½ φ̃ + C φ̃², C = (1 − θ sin θ / (2 (1 − cos θ))) / θ²."""
    if th < 1e-4:
        return 1.0 / 12.0 + th * th / 720.0
    return (1.0 - th * np.sin(th) / (2.0 * (1.0 - np.cos(th)))) / (th * th)


@helper
def _normalized_quat(q, k):
    w = q[k]
    x = q[k + 1]
    y = q[k + 2]
    z = q[k + 3]
    s = 1.0 / np.sqrt(w * w + x * x + y * y + z * z)
    return w * s, x * s, y * s, z * s


# ---- configuration-space kernels --------------------------------------------------------------------------
@njit(**KERNEL)
def neutral_kernel(mi, out):
    """The neutral configuration: zeros, unit quaternions (1, 0, 0, 0)."""
    for k in range(out.shape[0]):
        out[k] = 0.0
    for i in range(1, mi.shape[0]):
        jt = mi[i, JTYPE]
        if jt == SPHERICAL:
            out[mi[i, IQ]] = 1.0
        elif jt == FREE:
            out[mi[i, IQ] + 3] = 1.0


@njit(**KERNEL, forceinline=True)
def integrate_kernel(mi, q, v, dt, out, straight):
    """out = q ⊕ v dt: q + v dt for plain coordinates; for a quaternion Q ⊗ exp(ω dt) (ω in the child
    frame); for the Free joint the SE(3) exponential of the body twist [ω; v] dt, which moves the
    position by R V(ω dt) v dt, or with ``straight`` along a straight line, by R v dt (the velocity at the start in
    ground coordinates: the time-stepping model's step, ``contact/stepping_solver.integrate_step``). Quaternions of
    the result are normalized."""
    for i in range(1, mi.shape[0]):
        jt = mi[i, JTYPE]
        iq = mi[i, IQ]
        iv = mi[i, IV]
        if jt == SPHERICAL or jt == FREE:
            k = iq if jt == SPHERICAL else iq + 3
            kv = iv
            w0 = v[kv] * dt
            w1 = v[kv + 1] * dt
            w2 = v[kv + 2] * dt
            a0, a1, a2, a3 = _normalized_quat(q, k)
            e0, e1, e2, e3 = quat_exp(w0, w1, w2)
            b0, b1, b2, b3 = quat_mul(a0, a1, a2, a3, e0, e1, e2, e3)
            s = 1.0 / np.sqrt(b0 * b0 + b1 * b1 + b2 * b2 + b3 * b3)
            out[k] = b0 * s
            out[k + 1] = b1 * s
            out[k + 2] = b2 * s
            out[k + 3] = b3 * s
            if jt == FREE and straight:
                R = quat_to_rotation(a0, a1, a2, a3)
                x0, x1, x2 = mat3_vec(R, v[iv + 3], v[iv + 4], v[iv + 5])
                out[iq] = q[iq] + dt * x0
                out[iq + 1] = q[iq + 1] + dt * x1
                out[iq + 2] = q[iq + 2] + dt * x2
            elif jt == FREE:
                u0 = v[iv + 3] * dt
                u1 = v[iv + 4] * dt
                u2 = v[iv + 5] * dt
                th = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
                A, B = _se3_V_coeffs(th)
                c0, c1, c2 = cross3(w0, w1, w2, u0, u1, u2)
                d0, d1, d2 = cross3(w0, w1, w2, c0, c1, c2)
                R = quat_to_rotation(a0, a1, a2, a3)
                x0, x1, x2 = mat3_vec(R, u0 + A * c0 + B * d0, u1 + A * c1 + B * d1, u2 + A * c2 + B * d2)
                out[iq] = q[iq] + x0
                out[iq + 1] = q[iq + 1] + x1
                out[iq + 2] = q[iq + 2] + x2
        else:
            for k in range(mi[i, NQ]):
                out[iq + k] = q[iq + k] + v[iv + k] * dt


@njit(**KERNEL)
def difference_kernel(mi, q0, q1, out):
    """out = q1 ⊖ q0, the v with integrate(q0, v, 1) = q1 (the logarithm of ``integrate_kernel``; rotation
    angles are taken in [0, π])."""
    for i in range(1, mi.shape[0]):
        jt = mi[i, JTYPE]
        iq = mi[i, IQ]
        iv = mi[i, IV]
        if jt == SPHERICAL or jt == FREE:
            k = iq if jt == SPHERICAL else iq + 3
            a0, a1, a2, a3 = _normalized_quat(q0, k)
            b0, b1, b2, b3 = _normalized_quat(q1, k)
            r0, r1, r2, r3 = quat_mul(a0, -a1, -a2, -a3, b0, b1, b2, b3)
            w0, w1, w2 = quat_log(r0, r1, r2, r3)
            out[iv] = w0
            out[iv + 1] = w1
            out[iv + 2] = w2
            if jt == FREE:
                R = quat_to_rotation(a0, a1, a2, a3)
                u0, u1, u2 = mat3T_vec(R, q1[iq] - q0[iq], q1[iq + 1] - q0[iq + 1], q1[iq + 2] - q0[iq + 2])
                th = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
                C = _se3_Vinv_coeff(th)
                c0, c1, c2 = cross3(w0, w1, w2, u0, u1, u2)
                d0, d1, d2 = cross3(w0, w1, w2, c0, c1, c2)
                out[iv + 3] = u0 - 0.5 * c0 + C * d0
                out[iv + 4] = u1 - 0.5 * c1 + C * d1
                out[iv + 5] = u2 - 0.5 * c2 + C * d2
        else:
            for k in range(mi[i, NQ]):
                out[iv + k] = q1[iq + k] - q0[iq + k]


@njit(**KERNEL)
def qdot_kernel(mi, q, v, out):
    """out = q̇ for the velocity v: q̇ = v for plain coordinates; Q̇ = ½ Q ⊗ (0, ω) for a quaternion
    (the kinematic equations of the Euler parameters); ṗ = R(Q) v for the Free joint."""
    for i in range(1, mi.shape[0]):
        jt = mi[i, JTYPE]
        iq = mi[i, IQ]
        iv = mi[i, IV]
        if jt == SPHERICAL or jt == FREE:
            k = iq if jt == SPHERICAL else iq + 3
            a0 = q[k]
            a1 = q[k + 1]
            a2 = q[k + 2]
            a3 = q[k + 3]
            b0, b1, b2, b3 = quat_mul(a0, a1, a2, a3, 0.0, v[iv], v[iv + 1], v[iv + 2])
            out[k] = 0.5 * b0
            out[k + 1] = 0.5 * b1
            out[k + 2] = 0.5 * b2
            out[k + 3] = 0.5 * b3
            if jt == FREE:
                c0, c1, c2, c3 = _normalized_quat(q, k)
                R = quat_to_rotation(c0, c1, c2, c3)
                x0, x1, x2 = mat3_vec(R, v[iv + 3], v[iv + 4], v[iv + 5])
                out[iq] = x0
                out[iq + 1] = x1
                out[iq + 2] = x2
        else:
            for k in range(mi[i, NQ]):
                out[iq + k] = v[iv + k]


@njit(**KERNEL)
def normalize_kernel(mi, q, out):
    """out = q with every quaternion scaled to unit length."""
    for k in range(q.shape[0]):
        out[k] = q[k]
    for i in range(1, mi.shape[0]):
        jt = mi[i, JTYPE]
        if jt == SPHERICAL or jt == FREE:
            k = mi[i, IQ] if jt == SPHERICAL else mi[i, IQ] + 3
            a0, a1, a2, a3 = _normalized_quat(q, k)
            out[k] = a0
            out[k + 1] = a1
            out[k + 2] = a2
            out[k + 3] = a3


# ---- single joints: transform, motion subspace, bias -------------------------------------------------------
@njit(**KERNEL)
def joint_transform_kernel(jt, axes, qj, R_out, p_out):
    """Child frame in the joint frame: R_out (3x3, child -> joint), p_out (child origin, joint frame)."""
    a0 = axes[0, 0]
    a1 = axes[0, 1]
    a2 = axes[0, 2]
    R = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    p0 = 0.0
    p1 = 0.0
    p2 = 0.0
    if jt == REVOLUTE:
        R = rotation_axis_angle(a0, a1, a2, np.cos(qj[0]), np.sin(qj[0]))
    elif jt == PRISMATIC:
        p0, p1, p2 = qj[0] * a0, qj[0] * a1, qj[0] * a2
    elif jt == CYLINDRICAL:
        R = rotation_axis_angle(a0, a1, a2, np.cos(qj[0]), np.sin(qj[0]))
        p0, p1, p2 = qj[1] * a0, qj[1] * a1, qj[1] * a2
    elif jt == UNIVERSAL:
        R = mat3_mul(rotation_axis_angle(a0, a1, a2, np.cos(qj[0]), np.sin(qj[0])),
                     rotation_axis_angle(axes[1, 0], axes[1, 1], axes[1, 2], np.cos(qj[1]), np.sin(qj[1])))
    elif jt == SPHERICAL:
        w, x, y, z = _normalized_quat(qj, 0)
        R = quat_to_rotation(w, x, y, z)
    elif jt == PLANAR:
        R = rotation_z(np.cos(qj[2]), np.sin(qj[2]))
        p0, p1 = qj[0], qj[1]
    elif jt == FREE:
        w, x, y, z = _normalized_quat(qj, 3)
        R = quat_to_rotation(w, x, y, z)
        p0, p1, p2 = qj[0], qj[1], qj[2]
    store_placement(R, p0, p1, p2, R_out, p_out)


@njit(**KERNEL)
def motion_subspace_kernel(jt, axes, qj, S):
    """S (6 x nv_j) of the joint in child coordinates: v_J = S v_j (see the module docstring)."""
    for r in range(6):
        for c in range(S.shape[1]):
            S[r, c] = 0.0
    a0 = axes[0, 0]
    a1 = axes[0, 1]
    a2 = axes[0, 2]
    if jt == REVOLUTE:
        S[0, 0], S[1, 0], S[2, 0] = a0, a1, a2
    elif jt == PRISMATIC:
        S[3, 0], S[4, 0], S[5, 0] = a0, a1, a2
    elif jt == CYLINDRICAL:
        S[0, 0], S[1, 0], S[2, 0] = a0, a1, a2
        S[3, 1], S[4, 1], S[5, 1] = a0, a1, a2
    elif jt == UNIVERSAL:
        R2 = rotation_axis_angle(axes[1, 0], axes[1, 1], axes[1, 2], np.cos(qj[1]), np.sin(qj[1]))
        S[0, 0], S[1, 0], S[2, 0] = mat3T_vec(R2, a0, a1, a2)
        S[0, 1], S[1, 1], S[2, 1] = axes[1, 0], axes[1, 1], axes[1, 2]
    elif jt == SPHERICAL:
        S[0, 0] = S[1, 1] = S[2, 2] = 1.0
    elif jt == PLANAR:
        c = np.cos(qj[2])
        s = np.sin(qj[2])
        # child coordinates of the joint frame's x and y directions: rot(z, θ)ᵀ e_x, rot(z, θ)ᵀ e_y
        S[3, 0], S[4, 0] = c, -s
        S[3, 1], S[4, 1] = s, c
        S[2, 2] = 1.0
    elif jt == FREE:
        for k in range(6):
            S[k, k] = 1.0


@njit(**KERNEL)
def joint_bias_kernel(jt, axes, qj, vj, out):
    """c_J = Ṡ v_j (child coordinates): θ̇₁θ̇₂ [(R₂ᵀa₁) × a₂; 0] for the Universal joint,
    [0; −θ̇ e_z × rot(z, θ)ᵀ (ẋ, ẏ, 0)] for the Planar joint, zero otherwise."""
    for k in range(6):
        out[k] = 0.0
    if jt == UNIVERSAL:
        R2 = rotation_axis_angle(axes[1, 0], axes[1, 1], axes[1, 2], np.cos(qj[1]), np.sin(qj[1]))
        b0, b1, b2 = mat3T_vec(R2, axes[0, 0], axes[0, 1], axes[0, 2])
        c0, c1, c2 = cross3(b0, b1, b2, axes[1, 0], axes[1, 1], axes[1, 2])
        k = vj[0] * vj[1]
        out[0], out[1], out[2] = k * c0, k * c1, k * c2
    elif jt == PLANAR:
        c = np.cos(qj[2])
        s = np.sin(qj[2])
        u0 = c * vj[0] + s * vj[1]
        u1 = -s * vj[0] + c * vj[1]
        # −θ̇ e_z × (u0, u1, 0) = θ̇ (u1, −u0, 0)
        out[3] = vj[2] * u1
        out[4] = -vj[2] * u0


# ---- Python entry points ---------------------------------------------------------------------------------
_DIMS = {FIXED: (0, 0), REVOLUTE: (1, 1), PRISMATIC: (1, 1), CYLINDRICAL: (2, 2), UNIVERSAL: (2, 2),
         SPHERICAL: (4, 3), PLANAR: (3, 3), FREE: (7, 6)}


def _joint_args(joint, qj, vj=None):
    """(code, axes (2, 3), qj, vj) from a joint object (``multibody.model.joints``) and its coordinates."""
    code = int(joint.code)
    if code not in _DIMS:
        raise ModelError(f"{type(joint).__name__} joint: its transform, motion subspace and bias are those of "
                         "multibody.kernels.general_joint.joint_kinematics, not of these built-in formulas",
                         element=repr(joint))
    nq, nv = _DIMS[code]
    axes = np.ascontiguousarray(joint.axes(), dtype=np.float64)
    qj = np.ascontiguousarray(qj, dtype=np.float64).reshape(-1)
    if qj.shape != (nq,):
        raise ModelError(f"{type(joint).__name__} joint: expected {nq} coordinates, got {qj.shape[0]}",
                         element=repr(joint))
    if vj is not None:
        vj = np.ascontiguousarray(vj, dtype=np.float64).reshape(-1)
        if vj.shape != (nv,):
            raise ModelError(f"{type(joint).__name__} joint: expected {nv} velocities, got {vj.shape[0]}",
                             element=repr(joint))
    return code, axes, qj, vj, nv


def joint_transform(joint, qj):
    """(R, p): the child frame in the joint frame for the joint's coordinates ``qj``."""
    code, axes, qj, _, _ = _joint_args(joint, qj)
    R = np.empty((3, 3))
    p = np.empty(3)
    joint_transform_kernel(code, axes, qj, R, p)
    return R, p


def motion_subspace(joint, qj):
    """S (6 x nv_j), child coordinates, ``[angular; linear]`` rows."""
    code, axes, qj, _, nv = _joint_args(joint, qj)
    S = np.empty((6, nv))
    motion_subspace_kernel(code, axes, qj, S)
    return S


def joint_bias(joint, qj, vj):
    """c_J = Ṡ(q) v_j in child coordinates (6,)."""
    code, axes, qj, vj, _ = _joint_args(joint, qj, vj)
    out = np.empty(6)
    joint_bias_kernel(code, axes, qj, vj, out)
    return out


_ndarray = np.ndarray
_F64 = np.dtype(np.float64)


def _vec(model, x, n, what):
    """x as a float64 vector of length n (no copy when it already is one), or a ModelError."""
    if x.__class__ is _ndarray and x.dtype is _F64 and x.shape == (n,):
        return x
    arr = np.ascontiguousarray(x, dtype=np.float64)
    if arr.shape != (n,):
        raise ModelError(f"{what} must have shape ({n},) for model '{model.name}' (nq={model.nq}, nv={model.nv}), "
                         f"got shape {arr.shape}", element=what)
    return arr


def neutral(model):
    """The neutral configuration of ``model`` (zeros, unit quaternions (1, 0, 0, 0))."""
    out = np.empty(model.nq)
    neutral_kernel(packed_integers(model), out)
    return out


def integrate(model, q, v, dt=1.0):
    """q ⊕ v·dt on the configuration manifold (see ``integrate_kernel``)."""
    q = _vec(model, q, model.nq, "q")
    v = _vec(model, v, model.nv, "v")
    out = np.empty(model.nq)
    integrate_kernel(packed_integers(model), q, v, float(dt), out, False)
    return out


def difference(model, q0, q1):
    """q1 ⊖ q0: the velocity v with integrate(q0, v, 1) = q1 (see ``difference_kernel``)."""
    q0 = _vec(model, q0, model.nq, "q0")
    q1 = _vec(model, q1, model.nq, "q1")
    out = np.empty(model.nv)
    difference_kernel(packed_integers(model), q0, q1, out)
    return out


def qdot(model, q, v):
    """q̇ for the velocity v (see ``qdot_kernel``)."""
    q = _vec(model, q, model.nq, "q")
    v = _vec(model, v, model.nv, "v")
    out = np.empty(model.nq)
    qdot_kernel(packed_integers(model), q, v, out)
    return out


def normalize(model, q):
    """q with unit quaternions."""
    q = _vec(model, q, model.nq, "q")
    out = np.empty(model.nq)
    normalize_kernel(packed_integers(model), q, out)
    return out
