"""The maps between a Model's tree coordinates and its Cartesian coordinates: the bodies' velocities of a tree
state (and their Jacobian), and the tree state of a Cartesian one."""
import numpy as np

from multibody.model.joints import CYLINDRICAL, FREE, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from multibody.model.rotations import matrix_to_quat, rotation_angle, rotations_about


def cartesian_velocity_map(model, emb, q, v):
    """(J, J̇v): the Cartesian velocities V = J v of the tree velocities v at q, and their rate at v̇ = 0."""
    from multibody.algorithms.dynamics import forward_kinematics

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
    return cartesian_jacobian(model, emb, q, com), Jdv


def cartesian_jacobian(model, emb, q, com):
    """∂V/∂v at q, all columns at once from one placement pass: the motion subspace s_k = [s_ω; s_v] (ground
    frame, about the ground origin; ``kernels/kinematics.py``) of every coordinate k on the path of body i gives
    body i the angular velocity s_ω and its centre of mass c_i the velocity s_v + s_ω × c_i (seed 001 §3.4, the
    partial velocities)."""
    from multibody.model.data import default_data
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


def model_state_from_cartesian(model, emb, x, V=None, previous=None):
    """Model coordinates (q, v) of a Cartesian state: joint coordinates from the relative placements of the
    tree joints' frames; v by least squares from the Cartesian velocities. ``previous`` (a q) unwraps angles
    (:func:`nearest_branch`)."""
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
        if code in (REVOLUTE, CYLINDRICAL):
            q[sl.start] = rotation_angle(ax[0], Rrel)
            if code == CYLINDRICAL:
                q[sl.start + 1] = ax[0] @ prel
        elif code == PRISMATIC:
            q[sl.start] = ax[0] @ prel
        elif code == UNIVERSAL:
            # R = rot(a1, θ1) rot(a2, θ2): R a2 = rot(a1, θ1) a2 gives θ1, then rot(a1, θ1)ᵀ R = rot(a2, θ2)
            a1, a2 = ax[0], ax[1]
            c12 = a1 @ a2
            u0, u1 = a2 - c12 * a1, Rrel @ a2 - c12 * a1
            th1 = float(np.arctan2(a1 @ np.cross(u0, u1), u0 @ u1))
            th2 = rotation_angle(a2, rotations_about(a1, np.array([th1]))[0].T @ Rrel)
            q[sl] = (th1, th2)
        elif code == PLANAR:
            th = float(np.arctan2(Rrel[1, 0] - Rrel[0, 1], Rrel[0, 0] + Rrel[1, 1]))
            q[sl] = (prel[0], prel[1], th)
        elif code in (SPHERICAL, FREE):
            quat = matrix_to_quat(Rrel)
            q[sl] = quat if code == SPHERICAL else np.concatenate([prel, quat])
    if previous is not None:
        q = nearest_branch(model, q, previous)
    if V is None:
        return q, None
    J, _ = cartesian_velocity_map(model, emb, q, np.zeros(model.nv))
    return q, np.linalg.lstsq(J, V, rcond=None)[0]


#: the entries of a joint's q that are angles (defined up to 2π), by joint code
ANGLES = {REVOLUTE: (0,), CYLINDRICAL: (0,), UNIVERSAL: (0, 1), PLANAR: (2,)}


def nearest_branch(model, q, previous):
    """The coordinates ``q`` (angles from a placement, in (−π, π]; quaternions of either sign) on the branch
    nearest ``previous``: each joint angle moved by the multiple of 2π that brings it closest to its previous
    value, each quaternion given the sign of the previous one (q and −q are the same rotation). This follows
    the motion when ``previous`` is the state less than half a turn of every angle earlier (the previous
    accepted step of the integrator)."""
    q = np.array(q, dtype=float)
    for i in range(1, model.nbodies + 1):
        j = model.joints[i]
        start, code = j.q_slice.start, j.joint.code
        for k in ANGLES.get(code, ()):
            th = q[start + k]
            q[start + k] = th + 2 * np.pi * np.round((previous[start + k] - th) / (2 * np.pi))
        if code in (SPHERICAL, FREE):
            quat = q[j.q_slice][-4:]
            if quat @ previous[j.q_slice][-4:] < 0:
                q[j.q_slice.stop - 4:j.q_slice.stop] = -quat
    return q
