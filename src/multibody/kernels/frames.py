"""Frames fixed on bodies: placement, spatial velocity and acceleration, 6-D Jacobian and its time derivative.

A frame F is fixed on body b at the placement (R_bF, p_bF) in b's kernel frame. After the forward pass of
``kinematics.kinematics_kernel`` the workspace holds, in ground Plücker coordinates ("world convention", see
``kernels/kinematics.py``), the body's placement (R_b, p_b), its spatial velocity v_b = [ω; v_O] and spatial
acceleration a_b = [ω̇; a_O] (v_O, a_O of the body point at the ground origin), and the columns S_k of the
motion subspaces. The frame's quantities are then these, read in one of three references (the names and
meanings of Pinocchio's ``ReferenceFrame``; the order here is ours, ``[angular; linear]``):

``WORLD`` (0)
    ground Plücker coordinates: m = [w; u] as it is (u: the velocity of the body point at the ground origin);
``LOCAL`` (1)
    the frame's own Plücker coordinates: [Rᵀ w; Rᵀ (u + w × p)], R, p the frame's placement in the ground;
``LOCAL_WORLD_ALIGNED`` (2)
    at the frame's origin, ground axes: [w; u + w × p] (for a velocity, [ω; ṗ] of the frame's origin).

Jacobian (RBDA §4.1.3, the body Jacobian; seed 001 §3.4.4, the partial velocities): the world column of a
velocity coordinate k on the path from b to the ground is S_k, zero elsewhere, so v_F = J v (plus a moving
base's velocity); each column is read in the reference like a velocity.

Time derivative of the Jacobian along (q, v). A column of S fixed in the parent body λ(i) of its joint moves
with it, Ṡ_k = v_λ × S_k; one fixed in the child moves with the child, Ṡ_k = v_i × S_k (the split of
``kinematics``' module docstring: Σ_k Ṡ_k q̇_k = v_λ × vJ + c_J). The planar joint's hinge column passes through
the child origin: it moves with the child. In the frame's references, with X the frame's Plücker transform and
v_b the body velocity: LOCAL J = X⁻¹ S, J̇ = X⁻¹ (Ṡ − v_b × S); LOCAL_WORLD_ALIGNED J = [s_ω; s_v + s_ω × p],
J̇ = [ṡ_ω; ṡ_v + ṡ_ω × p + s_ω × ṗ] with ṗ the velocity of the frame's origin. These are the time derivatives of
each reference's Jacobian (Pinocchio's ``getFrameJacobianTimeVariation``): J̇ v is the frame's spatial
acceleration at q̈ = 0 in WORLD and LOCAL, its classical acceleration [ω̇; p̈] in LOCAL_WORLD_ALIGNED.
"""
from numba import njit

from multibody.kernels.kinematics import (B_A, B_P, B_V, BASE_WIDTH, DOF_ROT_JOINT, DOF_TRANS_CHILD, IQ, IV, JTYPE,
                                          M_DOF, NQ, NV, PARENT, PLANAR, WB_WIDTH, WD_WIDTH, body_kinematics,
                                          set_ground, strided, workspace_views)
from multibody.kernels.spatial import KERNEL, cross3, helper, load6, load9, mat3_mul, mat3_vec, mat3T_vec, \
    motion_cross_motion, store_placement

WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2
#: ``out`` of :func:`frame_kernel`: the frame's rotation (9, row-major), origin (3), velocity (6), acceleration (6)
O_R, O_P, O_VEL, O_ACC = 0, 9, 12, 18
OUT_WIDTH = 24
#: columns of the frame table ``fi`` (module docstring): the frame's body, the length of its path, the path
FI_BODY, FI_DEPTH, FI_PATH = 0, 1, 2
#: the codes the kernels called from Python return: 0 done, else the first argument that does not fit
#: (``ERR_Q``: q's length or stride, ``ERR_V``: v's or a's, ``ERR_WORK``: the workspace, ``ERR_OUT``: the output's
#: shape, ``ERR_FRAME``: a frame number outside the table, ``ERR_REFERENCE``: an unknown reference code)
ERR_Q, ERR_V, ERR_WORK, ERR_OUT, ERR_FRAME, ERR_REFERENCE = 1, 2, 5, 6, 8, 9


@helper
def frame_placement_world(wb, body, F):
    """(R, p0, p1, p2): the frame at ``F`` = (R_bF row-major (9), p_bF (3)) on ``body``, in ground coordinates:
    R = R_b R_bF, p = p_b + R_b p_bF."""
    Rb = load9(wb, body)
    R = mat3_mul(Rb, (F[0], F[1], F[2], F[3], F[4], F[5], F[6], F[7], F[8]))
    d0, d1, d2 = mat3_vec(Rb, F[9], F[10], F[11])
    return R, wb[body, B_P] + d0, wb[body, B_P + 1] + d1, wb[body, B_P + 2] + d2


@helper
def motion_in_reference(reference, R, p0, p1, p2, w0, w1, w2, u0, u1, u2):
    """The ground Plücker motion [w; u] in ``reference`` (module docstring) of the frame at (R, p)."""
    if reference == WORLD:
        return w0, w1, w2, u0, u1, u2
    c0, c1, c2 = cross3(w0, w1, w2, p0, p1, p2)
    if reference == LOCAL_WORLD_ALIGNED:
        return w0, w1, w2, u0 + c0, u1 + c1, u2 + c2
    a0, a1, a2 = mat3T_vec(R, w0, w1, w2)
    b0, b1, b2 = mat3T_vec(R, u0 + c0, u1 + c1, u2 + c2)
    return a0, a1, a2, b0, b1, b2


@helper
def column_rate(i, k, mi, wb, wd):
    """Ṡ_k, the time derivative of the ground-frame column k of body i's joint (module docstring): v_λ × S_k for a
    column fixed in the parent, v_i × S_k for one fixed in the child (velocities from ``wb``)."""
    kind = mi[i, M_DOF + k - mi[i, IV]]
    moves_with_child = kind >= DOF_TRANS_CHILD or (mi[i, JTYPE] == PLANAR and kind == DOF_ROT_JOINT)
    b = i if moves_with_child else mi[i, PARENT]
    v = load6(wb, b, B_V)
    return motion_cross_motion(v[0], v[1], v[2], v[3], v[4], v[5],
                               wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5])


@helper
def check_frame_call(mi, fi, q, nv, work, f, reference):
    """0 when q, the workspace (for ``nv`` velocity coordinates), the frame ``f`` and the reference code fit the model
    and its frame table, else an ``ERR_*`` code (numba does not check bounds, so every kernel called from Python checks
    its arguments first)."""
    n = mi.shape[0]
    if q.shape[0] != mi[n - 1, IQ] + mi[n - 1, NQ] or strided(q):
        return ERR_Q
    if nv != mi[n - 1, IV] + mi[n - 1, NV]:
        return ERR_OUT
    if work.shape[0] < n * WB_WIDTH + nv * WD_WIDTH + BASE_WIDTH:
        return ERR_WORK
    if f < 0 or f >= fi.shape[0]:
        return ERR_FRAME
    if reference < WORLD or reference > LOCAL_WORLD_ALIGNED:
        return ERR_REFERENCE
    return 0


@helper
def check_velocity(v, nv):
    """0 when v has nv adjacent entries, else ``ERR_V``."""
    return ERR_V if v.shape[0] != nv or strided(v) else 0


@helper
def path_kinematics(mi, mf, fi, f, q, v, a, work, wb, wd, level):
    """The forward pass (``kinematics.body_kinematics``, at ``level``) over the bodies on the path of frame ``f``
    only (the frame table's ``FI_PATH``, root first)."""
    set_ground(mf, work, wb, v.shape[0])
    for k in range(fi[f, FI_DEPTH]):
        body_kinematics(fi[f, FI_PATH + k], mi, mf, q, v, a, wb, wd, level)


@helper
def frame_state(wb, body, F, level, reference, classical, out):
    """Placement (level 0), spatial velocity (level ≥ 1) and acceleration (level 2) of the frame ``F`` on ``body``
    (see :func:`frame_placement_world`) from the kinematics in ``wb``, the latter two in ``reference``; with
    ``classical`` the acceleration's linear part is that of the classical acceleration, + w × u of the velocity
    [w; u] in the same reference (Pinocchio's ``getFrameClassicalAcceleration``; in LOCAL_WORLD_ALIGNED, p̈ of the
    frame's origin). Writes ``out`` (``O_R``, ...; OUT_WIDTH)."""
    R, p0, p1, p2 = frame_placement_world(wb, body, F)
    for k in range(9):
        out[O_R + k] = R[k]
    out[O_P] = p0
    out[O_P + 1] = p1
    out[O_P + 2] = p2
    if level >= 1:
        m = motion_in_reference(reference, R, p0, p1, p2, wb[body, B_V], wb[body, B_V + 1], wb[body, B_V + 2],
                                wb[body, B_V + 3], wb[body, B_V + 4], wb[body, B_V + 5])
        for k in range(6):
            out[O_VEL + k] = m[k]
    if level >= 2:
        m = motion_in_reference(reference, R, p0, p1, p2, wb[body, B_A], wb[body, B_A + 1], wb[body, B_A + 2],
                                wb[body, B_A + 3], wb[body, B_A + 4], wb[body, B_A + 5])
        for k in range(6):
            out[O_ACC + k] = m[k]
        if classical:
            c0, c1, c2 = cross3(out[O_VEL], out[O_VEL + 1], out[O_VEL + 2], out[O_VEL + 3], out[O_VEL + 4],
                                out[O_VEL + 5])
            out[O_ACC + 3] += c0
            out[O_ACC + 4] += c1
            out[O_ACC + 5] += c2


@helper
def jacobian_columns(mi, wb, wd, body, F, reference, J, dJ):
    """The columns of the frame's Jacobian ``J`` in ``reference`` (module docstring) and, when ``dJ`` has columns,
    of its time derivative along v, for the coordinates on the path from ``body`` to the ground (the others are
    left as they are), from the kinematics in ``wb`` (velocities needed for ``dJ`` only)."""
    rate = dJ.shape[1] > 0
    R, p0, p1, p2 = frame_placement_world(wb, body, F)
    vb = load6(wb, body, B_V)
    # the velocity of the frame's origin (LOCAL_WORLD_ALIGNED's J̇)
    e0, e1, e2 = cross3(vb[0], vb[1], vb[2], p0, p1, p2)
    pd0 = vb[3] + e0
    pd1 = vb[4] + e1
    pd2 = vb[5] + e2
    i = body
    while i > 0:
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            s = (wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5])
            m = motion_in_reference(reference, R, p0, p1, p2, s[0], s[1], s[2], s[3], s[4], s[5])
            for r in range(6):
                J[r, k] = m[r]
            if rate:
                ds = column_rate(i, k, mi, wb, wd)
                if reference == LOCAL:       # X⁻¹ (Ṡ − v_b × S)
                    x = motion_cross_motion(vb[0], vb[1], vb[2], vb[3], vb[4], vb[5],
                                            s[0], s[1], s[2], s[3], s[4], s[5])
                    m = motion_in_reference(LOCAL, R, p0, p1, p2, ds[0] - x[0], ds[1] - x[1], ds[2] - x[2],
                                            ds[3] - x[3], ds[4] - x[4], ds[5] - x[5])
                else:
                    m = motion_in_reference(reference, R, p0, p1, p2, ds[0], ds[1], ds[2], ds[3], ds[4], ds[5])
                for r in range(6):
                    dJ[r, k] = m[r]
                if reference == LOCAL_WORLD_ALIGNED:     # + s_ω × ṗ
                    c0, c1, c2 = cross3(s[0], s[1], s[2], pd0, pd1, pd2)
                    dJ[3, k] += c0
                    dJ[4, k] += c1
                    dJ[5, k] += c2
        i = mi[i, PARENT]


@helper
def zero_rows(J):
    """J[:, :] = 0 (a 2-D array)."""
    for r in range(J.shape[0]):
        for k in range(J.shape[1]):
            J[r, k] = 0.0


@njit(**KERNEL)
def frame_kernel(mi, mf, fi, ff, q, v, a, work, f, level, reference, classical, out):
    """Placement, velocity and acceleration of frame ``f`` of the table (``fi``, ``ff``), as :func:`frame_state`,
    from the kinematics of the bodies on its path (``level`` 0, 1, 2: placement, + velocity, + acceleration).
    Returns 0, or the ``ERR_*`` code of the first argument that does not fit."""
    nv = v.shape[0]
    err = check_frame_call(mi, fi, q, nv, work, f, reference) or check_velocity(v, nv) or check_velocity(a, nv)
    if err != 0:
        return err
    if out.shape[0] != OUT_WIDTH:
        return ERR_OUT
    wb, wd = workspace_views(work, mi.shape[0], nv)
    path_kinematics(mi, mf, fi, f, q, v, a, work, wb, wd, level)
    frame_state(wb, fi[f, FI_BODY], ff[f], level, reference, classical, out)
    return 0


@njit(**KERNEL)
def frame_placement_kernel(mi, mf, fi, ff, q, work, f, R, p):
    """The axes ``R`` (3 x 3, frame to ground coordinates) and origin ``p`` (3) of frame ``f`` of the table
    (:func:`frame_placement_world`), from the placements of the bodies on its path. Returns 0 or an ``ERR_*`` code."""
    n = mi.shape[0]
    nv = mi[n - 1, IV] + mi[n - 1, NV]
    err = check_frame_call(mi, fi, q, nv, work, f, WORLD)
    if err != 0:
        return err
    if R.shape[0] != 3 or R.shape[1] != 3 or p.shape[0] != 3:
        return ERR_OUT
    wb, wd = workspace_views(work, n, nv)
    path_kinematics(mi, mf, fi, f, q, q, q, work, wb, wd, 0)
    Rf, p0, p1, p2 = frame_placement_world(wb, fi[f, FI_BODY], ff[f])
    store_placement(Rf, p0, p1, p2, R, p)
    return 0


@njit(**KERNEL)
def frame_jacobian_kernel(mi, mf, fi, ff, q, work, f, reference, J):
    """The 6 x nv Jacobian ``J`` of frame ``f`` of the table in ``reference`` (module docstring), from the placements
    of the bodies on its path (Pinocchio's ``computeFrameJacobian``). Columns off the path are zero. Returns 0 or an
    ``ERR_*`` code."""
    nv = J.shape[1]
    err = check_frame_call(mi, fi, q, nv, work, f, reference)
    if err != 0:
        return err
    if J.shape[0] != 6:
        return ERR_OUT
    wb, wd = workspace_views(work, mi.shape[0], nv)
    path_kinematics(mi, mf, fi, f, q, q, q, work, wb, wd, 0)
    zero_rows(J)
    jacobian_columns(mi, wb, wd, fi[f, FI_BODY], ff[f], reference, J, J[:, :0])
    return 0


@njit(**KERNEL)
def frame_jacobian_rate_kernel(mi, mf, fi, ff, q, v, work, f, reference, J, dJ):
    """:func:`frame_jacobian_kernel` and J̇ (``dJ``, 6 x nv), its time derivative along v. Returns 0 or an
    ``ERR_*`` code."""
    nv = v.shape[0]
    err = check_frame_call(mi, fi, q, nv, work, f, reference) or check_velocity(v, nv)
    if err != 0:
        return err
    if J.shape[0] != 6 or J.shape[1] != nv or dJ.shape[0] != 6 or dJ.shape[1] != nv:
        return ERR_OUT
    wb, wd = workspace_views(work, mi.shape[0], nv)
    path_kinematics(mi, mf, fi, f, q, v, v, work, wb, wd, 1)
    zero_rows(J)
    zero_rows(dJ)
    jacobian_columns(mi, wb, wd, fi[f, FI_BODY], ff[f], reference, J, dJ)
    return 0


@helper
def check_frames(fi, frames):
    """0 when every entry of ``frames`` is a row of the frame table, else ``ERR_FRAME``."""
    for k in range(frames.shape[0]):
        if frames[k] < 0 or frames[k] >= fi.shape[0]:
            return ERR_FRAME
    return 0


@helper
def pass_for_frames(mi, mf, fi, q, v, a, work, frames, level, reference):
    """The checks of the kernels of many frames (0, or an ``ERR_*`` code) and, when they pass, the forward pass over
    all the bodies at ``level`` (``kinematics.body_kinematics``)."""
    n = mi.shape[0]
    nv = v.shape[0]
    err = check_frame_call(mi, fi, q, nv, work, 0, reference) if fi.shape[0] > 0 else 0
    if err == 0:
        err = check_velocity(v, nv) or check_velocity(a, nv) or check_frames(fi, frames)
    if err == 0:
        wb, wd = workspace_views(work, n, nv)
        set_ground(mf, work, wb, nv)
        for i in range(1, n):
            body_kinematics(i, mi, mf, q, v, a, wb, wd, level)
    return err


@njit(**KERNEL)
def frame_jacobians_kernel(mi, mf, fi, ff, q, zero, work, frames, reference, J, out):
    """The Jacobians J[k] (6 x nv) of the frames ``frames[k]`` of the table in ``reference``, from one pass of
    placements over all the bodies (Pinocchio's ``computeJointJacobians`` and a ``getFrameJacobian`` per frame), and,
    when ``out`` has a row per frame (not 0 rows), their placements into ``out[k]`` (as :func:`frame_state`).
    ``zero``: nv numbers (the pass computes no velocities). Returns 0 or an ``ERR_*`` code."""
    if J.shape[0] != frames.shape[0] or J.shape[1] != 6 or J.shape[2] != zero.shape[0] or (out.shape[0] != 0 and (
            out.shape[0] != frames.shape[0] or out.shape[1] != OUT_WIDTH)):
        return ERR_OUT
    err = pass_for_frames(mi, mf, fi, q, zero, zero, work, frames, 0, reference)
    if err != 0:
        return err
    wb, wd = workspace_views(work, mi.shape[0], zero.shape[0])
    for k in range(frames.shape[0]):
        Jk = J[k]
        zero_rows(Jk)
        jacobian_columns(mi, wb, wd, fi[frames[k], FI_BODY], ff[frames[k]], reference, Jk, Jk[:, :0])
        if out.shape[0] != 0:
            frame_state(wb, fi[frames[k], FI_BODY], ff[frames[k]], 0, reference, False, out[k])
    return 0


@njit(**KERNEL)
def frame_states_kernel(mi, mf, fi, ff, q, v, a, work, frames, level, reference, classical, out):
    """:func:`frame_kernel` for the frames ``frames[k]`` of the table into the rows ``out[k]`` (OUT_WIDTH), from one
    forward pass over all the bodies (Pinocchio's ``forwardKinematics`` then ``updateFramePlacements`` /
    ``getFrameVelocity``). Returns 0 or an ``ERR_*`` code."""
    if out.shape[0] != frames.shape[0] or out.shape[1] != OUT_WIDTH:
        return ERR_OUT
    err = pass_for_frames(mi, mf, fi, q, v, a, work, frames, level, reference)
    if err != 0:
        return err
    wb, wd = workspace_views(work, mi.shape[0], v.shape[0])
    for k in range(frames.shape[0]):
        frame_state(wb, fi[frames[k], FI_BODY], ff[frames[k]], level, reference, classical, out[k])
    return 0
