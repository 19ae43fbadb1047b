"""The tree's right-hand side for ``LANES`` runs at once, one run per SIMD lane (the fast path of ``simulate_batch``).

Many runs of one model (a Monte-Carlo study, a sweep of initial states) execute the same operations on
different numbers. :func:`lanes_rhs` evaluates ẋ = [q̇; q̈] for ``LANES`` runs together, with every quantity
stored lane-innermost — entry k of body i of lane b at ``(i * LW + k) * LANES + b`` of one flat workspace — so
that the innermost loop of every step of the articulated-body algorithm runs over the lanes, with unit stride
and no branch, and the compiler turns it into vector instructions (AVX: 4 or 8 doubles per instruction).

Each lane does *exactly* the floating-point operations of ``aba.aba_kernel`` and ``tree_rhs.tree_rhs_plain`` for
its run, in the same order: the arithmetic is the same inline helpers (``spatial``: ``mat3_mul``,
``rigid_inertia_world``, ``sym6_times_packed``, ``rank1_downdate_packed``, ...; ``energy.body_energy_at``), fed
from the lane workspace instead of the per-run one, and ``cos``/``sin`` are the same scalar library calls. A run
therefore gives the numbers of ``simulate`` bit for bit (``tests/test_simulate_batch.py`` checks it on random
trees), and the lane count and the number of threads change nothing.

Scope (:func:`lanes_supported`): trees of Revolute, Prismatic and Fixed joints on a fixed ground, with gravity,
joint spring-dampers and efforts, constant generalized forces and PD controllers with or without gravity
compensation (``kernels/control.py``: the gravity torques from the subtrees' masses and first moments summed in the
backward pass, before each body's articulated-body step), without point-to-point springs, loads, computed-torque
controllers or external spatial forces; the runs may differ in their initial states, constant generalized forces,
body masses and gravity (every parameter ``simulate_batch`` varies). Other models take the per-run compiled loop
(``integrate/rk_template.py``).

The passes are those of ``kernels/aba.py`` (RBDA Table 7.1 in ground coordinates; seed 001 §3.5, eqs.
3.172–3.179); the lane loops are written per joint kind, with the model's numbers of that body read before the
loop, so the loop body touches the lane workspace alone.
"""
import numpy as np
from numba import njit

from multibody.kernels.control import (C_KNOT, C_MODE, C_NKNOT, C_ROW, MODE_COMPUTED_TORQUE, MODE_PD_GRAVITY,
                                       first_moment, gravity_torque, pd_torque, reference_at)
from multibody.kernels.energy import body_energy_at
from multibody.kernels.kinematics import (AXIS, DOF_TRANS_CHILD, DOF_ROT_CHILD, DOF_ROT_JOINT, F_A1, F_ARM, F_COM,
                                          F_DAX, F_IC, F_JP, F_MASS, FIXED, IQ, IV, JTYPE, M_DOF, NQ, NV, PARENT,
                                          PRISMATIC, REVOLUTE, ROT_ID)
from multibody.kernels.spatial import (COMPILED, KERNEL, cross3, force_cross_motion, load9, mat3_mul,
                                       mat3_times_axis_rotation, mat3_vec, motion_cross_motion, rank1_downdate_packed,
                                       rigid_inertia_sym6, rigid_inertia_times_motion, rigid_inertia_world,
                                       rotation_axis_angle, sym6_times_packed)

#: runs per lane group: two AVX-512 or four AVX2 vectors of doubles
LANES = 8
# entries of a body's row in the lane workspace (each LANES wide)
L_R, L_P, L_V, L_C, L_A, L_F, L_IA, L_S, L_U, L_u, L_DINV, L_RJ, L_O, L_COS, L_SIN, L_Q, L_QD, L_QDD = (
    0, 9, 12, 18, 24, 30, 36, 57, 63, 69, 70, 71, 80, 83, 84, 85, 86, 87)
# copies of the parent's entries (its R and p, v or a), and what a body hands to its parent (force, articulated
# inertia, energies): every long loop over the lanes then touches the body's own row alone, at constant distances,
# which the compiler vectorizes without tests; short loops copy between the rows
L_PAR, L_DF, L_DIA, L_DE = 88, 100, 106, 127
# the mass of the body and the gravity, per lane (runs may differ in them)
L_MASS, L_G = 129, 130
# the controllers (``kernels/control.py``): the PD torque of the body's coordinate, the subtree's mass and first
# moment (M, H) of the gravity compensation
L_PD, L_GM = 133, 134
#: entries per body
LW = 138
#: where the kinetic and the potential energy of the last evaluation are, and the joint springs' potential
#: (the ground's force entries)
L_KINETIC, L_POTENTIAL, L_VAPPLIED = L_F, L_F + 1, L_F + 2
#: _K[k] = k LANES: the offset of the k-th of consecutive entries in a body's row
_K = tuple(k * LANES for k in range(21))
#: offsets of the entries in a body's row
O_R, O_P, O_V, O_C, O_A, O_F, O_IA, O_S, O_U, O_u, O_DINV, O_RJ, O_O, O_COS, O_SIN, O_Q, O_QD, O_QDD = (
    k * LANES for k in (L_R, L_P, L_V, L_C, L_A, L_F, L_IA, L_S, L_U, L_u, L_DINV, L_RJ, L_O, L_COS, L_SIN, L_Q, L_QD,
                        L_QDD))
O_PAR, O_DF, O_DIA, O_DE, O_VAPPLIED, O_MASS, O_G, O_PD, O_GM = (
    k * LANES for k in (L_PAR, L_DF, L_DIA, L_DE, L_VAPPLIED, L_MASS, L_G, L_PD, L_GM))


#: the lane kernels: those of every kernel, with numpy's error model (1/0 is inf, as in a vector instruction,
#: where python's model tests the divisor in the loop and keeps it from being vectorized)
LANE_KERNEL = dict(KERNEL, error_model="numpy")


@njit(**COMPILED)
def lanes_workspace_size(n):
    """Floats of the lane workspace of a tree of n bodies (the ground included)."""
    return n * LW * LANES


def lanes_supported(model):
    """None when :func:`lanes_rhs` computes ``model`` (see the module docstring), else the reason it does not."""
    jt = np.asarray(model.jtype)
    names = model.joint_names if hasattr(model, "joint_names") else None
    for k, t in enumerate(jt[1:], start=1):
        if int(t) not in (REVOLUTE, PRISMATIC, FIXED):
            what = f"joint '{names[k]}'" if names is not None else f"the joint of body {k}"
            return f"{what} is not a Revolute, Prismatic or Fixed joint"
    if getattr(model, "base_motion", None) is not None:
        return "the ground moves"
    if np.asarray(model.spring_k).shape[0]:
        return "the model has point-to-point springs"
    if getattr(model, "loads", ()):
        return "the model has loads"
    for c in getattr(model, "controllers", ()):
        if c.controller.mode == MODE_COMPUTED_TORQUE:
            return f"controller '{c.name}' computes torques (an inverse dynamics per lane is not written)"
    return None


@njit(**COMPILED, inline="always")
def _row(W, i):
    """The row of body i of the lane workspace (a view). The kernels index a row with a constant offset plus the
    lane, which the compiler sees as never negative; its loops over the lanes run to a bound it cannot see
    (``nl``, the workspace's lane count, always LANES), so it vectorizes them — with one overlap test of the
    rows they touch — instead of unrolling them into scalar code."""
    return W[i * LW * LANES:(i + 1) * LW * LANES]


@njit(**COMPILED, inline="always")
def _load6(W, o, b):
    return (W[o + b], W[o + _K[1] + b], W[o + _K[2] + b], W[o + _K[3] + b], W[o + _K[4] + b], W[o + _K[5] + b])


@njit(**COMPILED, inline="always")
def _load9(W, o, b):
    return (W[o + b], W[o + _K[1] + b], W[o + _K[2] + b], W[o + _K[3] + b], W[o + _K[4] + b], W[o + _K[5] + b],
            W[o + _K[6] + b], W[o + _K[7] + b], W[o + _K[8] + b])


@njit(**COMPILED, inline="always")
def _load21(W, o, b):
    return (W[o + b], W[o + _K[1] + b], W[o + _K[2] + b], W[o + _K[3] + b], W[o + _K[4] + b], W[o + _K[5] + b],
            W[o + _K[6] + b], W[o + _K[7] + b], W[o + _K[8] + b], W[o + _K[9] + b], W[o + _K[10] + b],
            W[o + _K[11] + b], W[o + _K[12] + b], W[o + _K[13] + b], W[o + _K[14] + b], W[o + _K[15] + b],
            W[o + _K[16] + b], W[o + _K[17] + b], W[o + _K[18] + b], W[o + _K[19] + b], W[o + _K[20] + b])


@njit(**COMPILED, inline="always")
def _store3(W, o, b, x):
    W[o + b] = x[0]
    W[o + _K[1] + b] = x[1]
    W[o + _K[2] + b] = x[2]


@njit(**COMPILED, inline="always")
def _store6(W, o, b, x):
    _store3(W, o, b, (x[0], x[1], x[2]))
    _store3(W, o + _K[3], b, (x[3], x[4], x[5]))


@njit(**COMPILED, inline="always")
def _store9(W, o, b, x):
    _store6(W, o, b, (x[0], x[1], x[2], x[3], x[4], x[5]))
    _store3(W, o + _K[6], b, (x[6], x[7], x[8]))


@njit(**COMPILED, inline="always")
def _store21(W, o, b, x):
    _store9(W, o, b, (x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]))
    _store6(W, o + _K[9], b, (x[9], x[10], x[11], x[12], x[13], x[14]))
    _store6(W, o + _K[15], b, (x[15], x[16], x[17], x[18], x[19], x[20]))


@njit(**COMPILED, inline="always")
def _copy(dst, od, src, os_, m, nl):
    """m entries of every lane from offset os_ of the row src to offset od of the row dst."""
    for k in range(m * nl):
        dst[od + k] = src[os_ + k]


@njit(**COMPILED, inline="always")
def _add_into(dst, od, src, os_, m, nl):
    """dst[od + ...] += src[os_ + ...] for m entries of every lane."""
    for k in range(m * nl):
        dst[od + k] += src[os_ + k]


@njit(**LANE_KERNEL)
def _ground(W, nl):
    """Body 0 of every lane: at the origin, identity rotation, at rest; its acceleration −g (``kinematics.set_ground``
    and ``set_ground_acceleration`` of a fixed ground), with the lane's g, which the caller wrote in the entries
    L_G of body 1."""
    W0 = _row(W, 0)
    W1 = _row(W, 1)
    for k in range(LW * LANES):
        W0[k] = 0.0
    for b in range(nl):
        W0[O_R + b] = 1.0
        W0[O_R + _K[4] + b] = 1.0
        W0[O_R + _K[8] + b] = 1.0
        W0[O_A + _K[3] + b] = 0.0 - W1[O_G + b]
        W0[O_A + _K[4] + b] = 0.0 - W1[O_G + _K[1] + b]
        W0[O_A + _K[5] + b] = 0.0 - W1[O_G + _K[2] + b]


@njit(**COMPILED, inline="always")
def _joint_frame_lane(Wi, b, jp0, jp1, jp2, jR, same):
    """Lane b of the joint frame Rj = Rp jR (Rp itself when ``same``), o = pp + Rp jp (``kinematics._joint_frame``)."""
    Rp = _load9(Wi, O_PAR, b)
    d0, d1, d2 = mat3_vec(Rp, jp0, jp1, jp2)
    _store9(Wi, O_RJ, b, Rp if same else mat3_mul(Rp, jR))
    _store3(Wi, O_O, b, (Wi[O_PAR + _K[9] + b] + d0, Wi[O_PAR + _K[10] + b] + d1, Wi[O_PAR + _K[11] + b] + d2))


@njit(**COMPILED, inline="always")
def _axis_rotation_lanes(Wi, nl, axis):
    """R_i = Rj rot(±e_k, q), p_i = o for every lane (a Revolute joint about a coordinate axis; ``axis`` a
    constant at each call, so each loop holds its own case of ``mat3_times_axis_rotation``)."""
    for b in range(nl):
        _store9(Wi, O_R, b, mat3_times_axis_rotation(_load9(Wi, O_RJ, b), axis, Wi[O_COS + b], Wi[O_SIN + b]))
        _store3(Wi, O_P, b, (Wi[O_O + b], Wi[O_O + _K[1] + b], Wi[O_O + _K[2] + b]))


@njit(**LANE_KERNEL)
def _placement(i, mi, mf, W, nl):
    """Pass 1, first half, for body i: its placement (R_i, p_i) and its column of S in ground coordinates
    (``kinematics.joint_placement_world`` for the Revolute, Prismatic and Fixed joints, the same operations)."""
    Wi = _row(W, i)
    _copy(Wi, O_PAR, _row(W, mi[i, PARENT]), O_R, 12, nl)  # the parent's R and p (entries L_R..L_P + 2)
    jt = mi[i, JTYPE]
    jp0 = mf[i, F_JP]
    jp1 = mf[i, F_JP + 1]
    jp2 = mf[i, F_JP + 2]
    jR = load9(mf, i)
    # the joint frame: Rj = Rp jR, o = pp + Rp jp (the uniform branches are taken out of the loops over the lanes,
    # which would otherwise compute both sides)
    if mi[i, ROT_ID] == 1:
        for b in range(nl):
            _joint_frame_lane(Wi, b, jp0, jp1, jp2, jR, True)
    else:
        for b in range(nl):
            _joint_frame_lane(Wi, b, jp0, jp1, jp2, jR, False)
    a0 = mf[i, F_A1]
    a1 = mf[i, F_A1 + 1]
    a2 = mf[i, F_A1 + 2]
    axis = mi[i, AXIS]
    # the child frame: R_i, p_i
    if jt == REVOLUTE:
        for b in range(nl):  # the library's cos and sin, lane by lane (the scalar kernel's numbers)
            Wi[O_COS + b] = np.cos(Wi[O_Q + b])
            Wi[O_SIN + b] = np.sin(Wi[O_Q + b])
        if axis < 0:  # rot(−e_k, q) = rot(e_k, q) with −sin q, as ``mat3_times_axis_rotation`` does it
            for b in range(nl):
                Wi[O_SIN + b] = -Wi[O_SIN + b]
        if axis == 1 or axis == -1:
            _axis_rotation_lanes(Wi, nl, 1)
        elif axis == 2 or axis == -2:
            _axis_rotation_lanes(Wi, nl, 2)
        elif axis == 3 or axis == -3:
            _axis_rotation_lanes(Wi, nl, 3)
        else:
            for b in range(nl):
                RJ = rotation_axis_angle(a0, a1, a2, Wi[O_COS + b], Wi[O_SIN + b])
                _store9(Wi, O_R, b, mat3_mul(_load9(Wi, O_RJ, b), RJ))
                _store3(Wi, O_P, b, (Wi[O_O + b], Wi[O_O + _K[1] + b], Wi[O_O + _K[2] + b]))
    elif jt == PRISMATIC:
        for b in range(nl):
            Rj = _load9(Wi, O_RJ, b)
            x = Wi[O_Q + b]
            e0, e1, e2 = mat3_vec(Rj, x * a0, x * a1, x * a2)
            _store9(Wi, O_R, b, Rj)
            _store3(Wi, O_P, b, (Wi[O_O + b] + e0, Wi[O_O + _K[1] + b] + e1, Wi[O_O + _K[2] + b] + e2))
    else:  # FIXED
        for b in range(nl):
            _store9(Wi, O_R, b, _load9(Wi, O_RJ, b))
            _store3(Wi, O_P, b, (Wi[O_O + b], Wi[O_O + _K[1] + b], Wi[O_O + _K[2] + b]))
    if mi[i, NV] == 0:
        return
    # the column of S: [e; p × e] for a rotation about e through the child origin, [0; e] for a translation
    kind = mi[i, M_DOF]
    x0 = mf[i, F_DAX]
    x1 = mf[i, F_DAX + 1]
    x2 = mf[i, F_DAX + 2]
    oframe = O_R if kind >= DOF_TRANS_CHILD else O_RJ
    rotation = kind == DOF_ROT_JOINT or kind == DOF_ROT_CHILD
    for b in range(nl):
        w0, w1, w2 = mat3_vec(_load9(Wi, oframe, b), x0, x1, x2)
        if rotation:
            m0, m1, m2 = cross3(Wi[O_P + b], Wi[O_P + _K[1] + b], Wi[O_P + _K[2] + b], w0, w1, w2)
            _store6(Wi, O_S, b, (w0, w1, w2, m0, m1, m2))
        else:
            _store6(Wi, O_S, b, (0.0, 0.0, 0.0, w0, w1, w2))


@njit(**COMPILED, inline="always")
def _velocity_inertia_lane(Wi, b, moving, com, Ic, arm):
    """Lane b of :func:`_velocity_inertia` (``arm``: the armature of the body's coordinate)."""
    m = Wi[O_MASS + b]
    g = (Wi[O_G + b], Wi[O_G + _K[1] + b], Wi[O_G + _K[2] + b])
    vJ = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if moving:  # vJ = S q̇ as ``kinematics._subspace_times`` sums it, from 0.0
        vk = Wi[O_QD + b]
        S = _load6(Wi, O_S, b)
        vJ = (0.0 + S[0] * vk, 0.0 + S[1] * vk, 0.0 + S[2] * vk, 0.0 + S[3] * vk, 0.0 + S[4] * vk,
              0.0 + S[5] * vk)
    vp = _load6(Wi, O_PAR, b)
    vi = (vp[0] + vJ[0], vp[1] + vJ[1], vp[2] + vJ[2], vp[3] + vJ[3], vp[4] + vJ[4], vp[5] + vJ[5])
    _store6(Wi, O_V, b, vi)
    c = motion_cross_motion(vp[0], vp[1], vp[2], vp[3], vp[4], vp[5], vJ[0], vJ[1], vJ[2], vJ[3], vJ[4], vJ[5])
    _store6(Wi, O_C, b, (c[0] + 0.0, c[1] + 0.0, c[2] + 0.0, c[3] + 0.0, c[4] + 0.0, c[5] + 0.0))
    R = _load9(Wi, O_R, b)
    p = (Wi[O_P + b], Wi[O_P + _K[1] + b], Wi[O_P + _K[2] + b])
    h, I = rigid_inertia_world(R, p, m, com, Ic)
    _store21(Wi, O_IA, b, rigid_inertia_sym6(m, h, I))
    Iv = rigid_inertia_times_motion(m, h, I, vi[0], vi[1], vi[2], vi[3], vi[4], vi[5])
    dT, dV = body_energy_at(R, p[0], p[1], p[2], com, Ic, m, g, vi)
    e = 0.0   # the rotor's ½ a q̇² (``kinematics.armature_energy``, the same operations)
    if moving:
        e += 0.5 * arm * Wi[O_QD + b] * Wi[O_QD + b]
    Wi[O_DE + b] = dT + e
    Wi[O_DE + _K[1] + b] = dV
    _store6(Wi, O_F, b, force_cross_motion(vi[0], vi[1], vi[2], vi[3], vi[4], vi[5],
                                          Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5]))


@njit(**LANE_KERNEL)
def _velocity_inertia(i, mi, mf, W, nl):
    """Pass 1, second half, for body i: v_i, c_i, the rigid IA_i, pA_i = v_i ×* I_i v_i and the body's energies
    added to the totals (``aba.articulated_pass1``, the same operations)."""
    Wi = _row(W, i)
    _copy(Wi, O_PAR, _row(W, mi[i, PARENT]), O_V, 6, nl)  # the parent's v
    com = (mf[i, F_COM], mf[i, F_COM + 1], mf[i, F_COM + 2])
    Ic = (mf[i, F_IC], mf[i, F_IC + 1], mf[i, F_IC + 2], mf[i, F_IC + 3], mf[i, F_IC + 4], mf[i, F_IC + 5])
    moving = mi[i, NV] == 1
    arm = mf[i, F_ARM]
    if Ic[1] == 0.0 and Ic[2] == 0.0 and Ic[4] == 0.0:  # the branch of ``rigid_inertia_world``, out of the loop
        for b in range(nl):
            _velocity_inertia_lane(Wi, b, moving, com, Ic, arm)
    else:
        for b in range(nl):
            _velocity_inertia_lane(Wi, b, moving, com, Ic, arm)
    _add_into(_row(W, 0), O_F, Wi, O_DE, 2, nl)  # T += dT, V += dV (entries L_KINETIC, L_POTENTIAL)


@njit(**LANE_KERNEL)
def _articulate(i, mi, mf, W, nl):
    """Pass 2 for body i (``aba.articulate_one_dof`` and ``aba.hand_over_whole``, the same operations): what the
    body hands to its parent is formed in its row, then added to the parent's."""
    par = mi[i, PARENT]
    Wi = _row(W, i)
    if mi[i, NV] == 1:
        arm = mf[i, F_ARM]
        for b in range(nl):
            S = _load6(Wi, O_S, b)
            pA = _load6(Wi, O_F, b)
            IA = _load21(Wi, O_IA, b)
            U = sym6_times_packed(IA, S[0], S[1], S[2], S[3], S[4], S[5])
            d = (S[0] * U[0] + S[1] * U[1] + S[2] * U[2] + S[3] * U[3] + S[4] * U[4] + S[5] * U[5]) + arm
            dinv = 1.0 / d
            # τ is in the q̈ entry until pass 3 writes q̈ over it
            u = Wi[O_QDD + b] - (S[0] * pA[0] + S[1] * pA[1] + S[2] * pA[2] + S[3] * pA[3] + S[4] * pA[4]
                                 + S[5] * pA[5])
            _store6(Wi, O_U, b, U)
            Wi[O_u + b] = u
            Wi[O_DINV + b] = dinv
            c = _load6(Wi, O_C, b)
            IAc = sym6_times_packed(IA, c[0], c[1], c[2], c[3], c[4], c[5])
            s = (u - (U[0] * c[0] + U[1] * c[1] + U[2] * c[2] + U[3] * c[3] + U[4] * c[4] + U[5] * c[5])) * dinv
            _store6(Wi, O_DF, b, (pA[0] + IAc[0] + U[0] * s, pA[1] + IAc[1] + U[1] * s, pA[2] + IAc[2] + U[2] * s,
                                  pA[3] + IAc[3] + U[3] * s, pA[4] + IAc[4] + U[4] * s, pA[5] + IAc[5] + U[5] * s))
            _store21(Wi, O_DIA, b, rank1_downdate_packed(IA, dinv, U[0], U[1], U[2], U[3], U[4], U[5]))
        if par > 0:
            Wp = _row(W, par)
            _add_into(Wp, O_F, Wi, O_DF, 6, nl)
            _add_into(Wp, O_IA, Wi, O_DIA, 21, nl)
    elif par > 0:
        for b in range(nl):
            c = _load6(Wi, O_C, b)
            pA = _load6(Wi, O_F, b)
            IAc = sym6_times_packed(_load21(Wi, O_IA, b), c[0], c[1], c[2], c[3], c[4], c[5])
            _store6(Wi, O_DF, b, (pA[0] + IAc[0], pA[1] + IAc[1], pA[2] + IAc[2], pA[3] + IAc[3], pA[4] + IAc[4],
                                  pA[5] + IAc[5]))
        Wp = _row(W, par)
        _add_into(Wp, O_F, Wi, O_DF, 6, nl)
        _add_into(Wp, O_IA, Wi, O_IA, 21, nl)


@njit(**LANE_KERNEL)
def _accelerate(i, mi, W, nl):
    """Pass 3 for body i: q̈_i = d⁻¹ (u − Uᵀ a'), a_i = a' + S q̈_i with a' = a_λ + c_i (``aba.aba_kernel``)."""
    Wi = _row(W, i)
    _copy(Wi, O_PAR, _row(W, mi[i, PARENT]), O_A, 6, nl)  # the parent's a
    moving = mi[i, NV] == 1
    for b in range(nl):
        ap = _load6(Wi, O_PAR, b)
        c = _load6(Wi, O_C, b)
        a = (ap[0] + c[0], ap[1] + c[1], ap[2] + c[2], ap[3] + c[3], ap[4] + c[4], ap[5] + c[5])
        if moving:
            U = _load6(Wi, O_U, b)
            x = Wi[O_DINV + b] * (Wi[O_u + b] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3]
                                                 + U[4] * a[4] + U[5] * a[5]))
            Wi[O_QDD + b] = x
            S = _load6(Wi, O_S, b)
            a = (a[0] + S[0] * x, a[1] + S[1] * x, a[2] + S[2] * x, a[3] + S[3] * x, a[4] + S[4] * x,
                 a[5] + S[5] * x)
        _store6(Wi, O_A, b, a)


@njit(**LANE_KERNEL)
def lanes_parameters(mi, MG, W):
    """Write the lanes' body masses and gravity into the lane workspace W, where :func:`lanes_rhs` reads them (the
    passes do not overwrite them): ``MG`` holds the masses of bodies 1..n−1, then the gravity vector, entry j of
    lane b at ``j * LANES + b``."""
    n = mi.shape[0]
    nl = W.shape[0] // (n * LW)
    for i in range(1, n):  # the masses, and the gravity in every row
        Wi = _row(W, i)
        m = MG[(i - 1) * LANES:]
        g = MG[(n - 1) * LANES:]
        for b in range(nl):
            Wi[O_MASS + b] = m[b]
            Wi[O_G + b] = g[b]
            Wi[O_G + _K[1] + b] = g[LANES + b]
            Wi[O_G + _K[2] + b] = g[2 * LANES + b]


@njit(**LANE_KERNEL)
def _first_moments(i, mf, W, nl):
    """(M, H) of body i alone in every lane, with the model's mass (the controllers' model), for the gravity
    compensation (``control.gravity_kernel``, the same operations)."""
    Wi = _row(W, i)
    m = mf[i, F_MASS]
    c0 = mf[i, F_COM]
    c1 = mf[i, F_COM + 1]
    c2 = mf[i, F_COM + 2]
    for b in range(nl):
        h = first_moment(_load9(Wi, O_R, b), Wi[O_P + b], Wi[O_P + _K[1] + b], Wi[O_P + _K[2] + b], m, c0, c1, c2)
        Wi[O_GM + b] = m
        _store3(Wi, O_GM + _K[1], b, h)


@njit(**LANE_KERNEL)
def _gravity_compensation(i, mi, mf, W, TAU, applied, nl):
    """τ of body i's coordinate, controlled with gravity compensation: its applied part (when ``applied``) + (the
    run's τ + (PD + g)) with g the gravity torque of the subtree's (M, H) (``control.control_kernel``, the same
    operations); then the subtree's (M, H) handed to the parent."""
    Wi = _row(W, i)
    g0 = mf[0, 0]
    g1 = mf[0, 1]
    g2 = mf[0, 2]
    tau = TAU[mi[i, IV] * LANES:]
    for b in range(nl):
        S = _load6(Wi, O_S, b)
        g = gravity_torque(S[0], S[1], S[2], S[3], S[4], S[5], Wi[O_GM + b], Wi[O_GM + _K[1] + b],
                           Wi[O_GM + _K[2] + b], Wi[O_GM + _K[3] + b], g0, g1, g2)
        extra = tau[b] + (Wi[O_PD + b] + g)
        Wi[O_QDD + b] = Wi[O_QDD + b] + extra if applied else extra


@njit(**COMPILED, inline="always")
def _gravity_control(C):
    """Whether a controller of the table C compensates gravity."""
    CI = C[0]
    for r in range(CI.shape[0]):
        if CI[r, C_MODE] == MODE_PD_GRAVITY:
            return True
    return False


@njit(**LANE_KERNEL)
def lanes_rhs(mi, mf, X, TAU, F, W, OUT, t, C):
    """ẋ = [q̇; q̈] of ``LANES`` runs at time t: X, TAU and OUT hold entry j of lane b at ``j * LANES + b`` (X the
    states [q; v], TAU the generalized forces τ, nv entries); W is the lane workspace (:func:`lanes_workspace_size`).
    ``F`` (4, nv): the joint spring-dampers and efforts (stiffness, damping, rest, effort; see
    ``forces.joint_forces_kernel``), or (0, nv) for a model without them. ``C``: the controllers' table
    (``model.controllers.ControllerTable.arrays``: CI, CF, RT, RC, CROW; PD controllers with or without gravity
    compensation, ``kernels/control.py``, with the model's masses and gravity of ``mf``), empty without them.
    Leaves each lane's kinetic and
    potential energy at ``L_KINETIC * LANES + b`` and ``L_POTENTIAL * LANES + b`` of W (the numbers
    ``aba_kernel`` leaves in its workspace) and the potential of the joint springs at ``L_VAPPLIED * LANES + b``.
    The lanes' masses and gravity are those :func:`lanes_parameters` wrote into W (``mf``'s are read by the
    controllers only)."""
    n = mi.shape[0]
    nl = W.shape[0] // (n * LW)
    nq = 0
    for i in range(1, n):
        nq += mi[i, NQ]
    CI, CF, RT, RC, CROW = C
    gravity = _gravity_control(C)
    _ground(W, nl)
    W0 = _row(W, 0)
    for i in range(1, n):
        if mi[i, NV] == 1:
            Wi = _row(W, i)
            iv = mi[i, IV]
            xq = X[mi[i, IQ] * LANES:]
            xv = X[(nq + iv) * LANES:]
            tau = TAU[iv * LANES:]
            dq = OUT[mi[i, IQ] * LANES:]
            r = CROW[iv]
            for b in range(nl):
                Wi[O_Q + b] = xq[b]
                Wi[O_QD + b] = xv[b]
                dq[b] = xv[b]  # q̇ = v (``configuration.qdot_kernel``)
            if r >= 0:   # the controller's PD torque (``control.control_kernel``)
                qr, vr, _ = reference_at(t, RT, RC, CI[r, C_KNOT], CI[r, C_NKNOT], CI[r, C_ROW])
                kp = CF[r, 0]
                kd = CF[r, 1]
                for b in range(nl):
                    Wi[O_PD + b] = pd_torque(kp, kd, qr, vr, xq[b], xv[b])
            if F.shape[0] == 0:
                if r < 0:
                    for b in range(nl):
                        Wi[O_QDD + b] = tau[b]
                elif CI[r, C_MODE] != MODE_PD_GRAVITY:
                    for b in range(nl):
                        Wi[O_QDD + b] = tau[b] + Wi[O_PD + b]
            else:  # τ = (0 + effort − c q̇ − k (q − rest)) + τ_extra (``tree_rhs._applied_tau``, the same operations)
                k = F[0, iv]
                c = F[1, iv]
                rest = F[2, iv]
                effort = F[3, iv]
                for b in range(nl):
                    f = effort - c * xv[b]
                    if k != 0.0:
                        d = xq[b] - rest
                        f -= k * d
                        W0[O_VAPPLIED + b] += 0.5 * k * d * d
                    Wi[O_QDD + b] = 0.0 + f
                if r < 0:
                    for b in range(nl):
                        Wi[O_QDD + b] = Wi[O_QDD + b] + tau[b]
                elif CI[r, C_MODE] != MODE_PD_GRAVITY:
                    for b in range(nl):
                        Wi[O_QDD + b] = Wi[O_QDD + b] + (tau[b] + Wi[O_PD + b])
        _placement(i, mi, mf, W, nl)
        if gravity:
            _first_moments(i, mf, W, nl)
        _velocity_inertia(i, mi, mf, W, nl)
    for i in range(n - 1, 0, -1):
        if gravity:
            if mi[i, NV] == 1:
                r = CROW[mi[i, IV]]
                if r >= 0 and CI[r, C_MODE] == MODE_PD_GRAVITY:
                    _gravity_compensation(i, mi, mf, W, TAU, F.shape[0] > 0, nl)
            par = mi[i, PARENT]
            if par > 0:
                _add_into(_row(W, par), O_GM, _row(W, i), O_GM, 4, nl)
        _articulate(i, mi, mf, W, nl)
    for i in range(1, n):
        _accelerate(i, mi, W, nl)
        if mi[i, NV] == 1:
            Wi = _row(W, i)
            dv = OUT[(nq + mi[i, IV]) * LANES:]
            for b in range(nl):
                dv[b] = Wi[O_QDD + b]
