"""Forward kinematics of a tree: placements, velocities, accelerations of every body, and points fixed in bodies.

The kernels read the packed model arrays of ``multibody.model.data`` (``mi`` integers, ``mf`` floats, one row per
body, see ``kernels/packing.py``) and write into a preallocated workspace. Bodies are numbered
regularly (seed 001 §1.1.2), so one loop ``for i in range(1, n)`` sweeps from the root to the leaves.

World convention. Spatial vectors are ``[angular; linear]`` Plücker coordinates of the *ground* frame: a body
velocity is ``[ω; v_O]`` with v_O the velocity of the body point at the ground origin, so the velocity of
a child is its parent's plus the joint's, ``v_i = v_λ(i) + S_i q̇_i`` with the columns of ``S_i`` (the joint's
motion subspace, seed 001 §3.4.2, eqs. 3.101, 3.104: the partial velocities k_ak, p_ak) expressed in ground coordinates.
Featherstone's RBDA algorithms written in these coordinates (as Pinocchio's world-frame algorithms are) need no
6x6 transforms between bodies, only the joint placements.

Acceleration: ``a_i = a_λ(i) + S_i q̈_i + c_i`` with the bias ``c_i = Ṡ_i q̇_i`` (RBDA ch. 7). A column of
S fixed in the parent moves with the parent, d/dt s = v_λ × s; a column fixed in the child moves with the
child, d/dt s = v_i × s. Hence ``c_i = v_λ × (S_i q̇_i) + c_J`` where the intra-joint term ``c_J`` is zero
except for the Universal joint (θ̇₁θ̇₂ s₁ × s₂: s₁ is fixed in the parent, s₂ in the child) and the Planar
joint ((s_x ẋ + s_y ẏ) × s_θ θ̇).

Body 0 is at rest at the origin, or, when the model's ground moves in a prescribed way (seed 001 §3.1–3.2),
it has the placement, spatial velocity and spatial acceleration of the workspace's base block
(:func:`set_ground`): the recursions above then give absolute placements, velocities and accelerations.

General joints (``model.joints.GeneralJoint``, seed 001 §3.4.2) carry their local kinematics in a block of
rows of ``wd`` after the nv coordinate rows, which a generated function (``kernels/general_joint.py``) fills
for the current (q, q̇, t) before a kernel runs; the block's first row is ``mi[i, AXIS]``. Everything in it is
in the joint frame J (Plücker coordinates at J's origin): row 0 holds the rotation R_J (9, row-major), the
joint vector z (3), the rheonomic twist σ = [p_a0; k_a0 + z × p_a0] (6) and the bias β (6); row 1 + k holds
column k of S_J, [p_ak; k_ak + z × p_ak] (eqs. 3.101, 3.104). The joint's relative twist is S_J q̇ + σ and
its time derivative in J is S_J q̈ + β (β from s_a and w_a, eqs. 3.103, 3.107), so with the frame J fixed in
the parent, vJ = X (S_J q̇ + σ) and c_J = X β (X: J to ground). ``joint_placement_world`` leaves X σ and X β
in columns GEN_SIGMA and GEN_BIAS of the block's row 1.
"""

import numpy as np
from numba import njit

from multibody.kernels.spatial import (COMPILED, INLINE, KERNEL, cross3, helper, load9, mat3_mul,
                                       mat3_times_axis_rotation, mat3_vec, motion_cross_motion, quat_to_rotation,
                                       rigid_inertia_times_motion, rigid_inertia_world, rotation_axis_angle)
from multibody.kernels.views import rows_view

# ``joint_placement_world`` / ``joint_velocity_world`` / ``body_inertia_world`` (the switch over the joint types)
# are helpers (``spatial.helper``): compiled once, inlined by LLVM into the hot kernels (ABA, RNEA, CRBA; RNEA
# runs about twice as fast as with a call per body); the other kernels call the compiled-once ``*_call`` twins,
# which keeps the machine code of those kernels small

# joint type codes (multibody.model.joints)
FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE, GENERAL = range(9)

# columns of the packed integer model array ``mi``: per body, then the kind of each of its (≤ 6) velocity
# coordinates (columns M_DOF..M_DOF+5): its column of S is a rotation about, or a translation along, an axis
# fixed in the joint frame or in the child frame; rotation axes pass through the child origin
PARENT, JTYPE, IQ, NQ, IV, NV, ROT_ID, M_DOF = range(8)
#: column of ``mi``: ±(k + 1) when the joint is a Revolute or Cylindrical joint about the coordinate axis ±e_k
#: of its frame (the rotation then turns two columns of the joint frame; ``spatial.mat3_times_axis_rotation``),
#: 0 otherwise; for a general joint the first row of its block in ``wd`` (see the module docstring)
AXIS = M_DOF + 6
MI_WIDTH = AXIS + 1
DOF_TRANS_JOINT, DOF_ROT_JOINT, DOF_TRANS_CHILD, DOF_ROT_CHILD = range(4)
# columns of the packed float model array ``mf`` (row 0 holds the gravity in columns 0..2 and the moving-base
# flag in column G_MOVING); F_DAX + 3 k is the axis of velocity coordinate k (in the frame its kind names), F_ARM + k
# its armature (the rotor inertia that the mass matrix carries on its diagonal: :func:`armature`)
F_JR, F_JP, F_A1, F_A2, F_MASS, F_COM, F_IC, F_DAX = 0, 9, 12, 15, 18, 19, 22, 28
F_ARM = F_DAX + 18
MF_WIDTH = F_ARM + 6
#: column of row 0 of ``mf``: 1.0 when body 0 (the ground) moves in a prescribed way (``model.base_motion``):
#: its state is then read from the base block of the workspace (:func:`set_ground`), 0.0 for a fixed ground
G_MOVING = 3

# per-body workspace columns (array ``wb`` of shape (n, WB_WIDTH))
B_R, B_P, B_V, B_C, B_A, B_F, B_IA = 0, 9, 12, 18, 24, 30, 36
WB_WIDTH = 57
#: positions in the flat workspace (the ground's row, whose force columns no pass uses) where ABA leaves the
#: kinetic and the gravitational potential energy of the state it was given (``kernels/energy.py``)
W_KINETIC, W_POTENTIAL = B_F, B_F + 1
# per-velocity-coordinate workspace columns (array ``wd`` of shape (nv, WD_WIDTH))
D_S, D_U, D_UD, D_u, D_DINV = 0, 6, 12, 18, 19
WD_WIDTH = 25
#: the base block, the last BASE_WIDTH floats of the flat workspace (after ``wb``, ``wd`` and the general joints'
#: blocks; BASE_WIDTH < WD_WIDTH, so ``workspace_views`` never reads it as a row of ``wd``): the state of body 0 when it moves in a
#: prescribed way (seed 001 §3.1–3.2: body 0 with prescribed motion), written by the caller before a kernel
#: runs (``multibody.model.base_motion.BaseMotion.block``): its rotation R0 (row-major, body 0 to ground
#: coordinates), its origin p0, its spatial velocity [ω0; ṗ0 − ω0 × p0] and spatial acceleration
#: [ω̇0; p̈0 − ω̇0 × p0 − ω0 × ṗ0] (ground Plücker coordinates, the velocity and acceleration of the body-0
#: point at the ground origin, as every body's in ``wb``)
X_R, X_P, X_V, X_A = 0, 9, 12, 18
BASE_WIDTH = 24
# a general joint's block (rows of ``wd`` after the nv coordinate rows; module docstring): columns of its first
# row, and of its second row the ground-frame twist X σ and bias X β that ``joint_placement_world`` leaves there
GEN_R, GEN_Z, GEN_SIGMA_J, GEN_BIAS_J = 0, 9, 12, 18
GEN_SIGMA, GEN_BIAS = 6, 12


def general_rows(nv_joint):
    """Rows of ``wd`` in the block of a general joint of ``nv_joint`` coordinates."""
    return 1 + nv_joint


@njit(**COMPILED, inline=INLINE)
def workspace_views(work, n, nv):
    """Split the flat workspace into the per-body array ``wb`` (n, WB_WIDTH) and per-coordinate ``wd`` (nv rows,
    and the general joints' blocks when the workspace has room for them: every whole row of the rest)."""
    wb = rows_view(work[: n * WB_WIDTH], (WB_WIDTH,))
    rows = max(nv, (work.shape[0] - n * WB_WIDTH) // WD_WIDTH)
    wd = rows_view(work[n * WB_WIDTH: n * WB_WIDTH + rows * WD_WIDTH], (WD_WIDTH,))
    return wb, wd


@helper
def strided(a):
    """Whether the elements of the 1-D array ``a`` are not adjacent in memory (code 7 of :func:`check_sizes`).
    A kernel compiled for contiguous arrays reads them as if they were; the Python wrappers call the compiled
    code directly (``multibody.algorithms.dynamics``), so the kernels check it themselves."""
    return a.shape[0] > 1 and a.strides[0] != a.itemsize


@helper
def check_sizes(mi, q, v, x, fext, work, out):
    """0 when the arguments fit the model, else the position of the first bad one: 1 q (nq), 2 v (nv),
    3 x (nv: τ or q̈), 4 fext ((0, 6) or (n, 6)), 5 work (``workspace_size``), 6 out (nv), or 7 when q, v or x
    is not contiguous. Numba does not check bounds, so every kernel called from Python checks its arguments
    with this first."""
    n = mi.shape[0]
    nq = mi[n - 1, IQ] + mi[n - 1, NQ]
    nv = mi[n - 1, IV] + mi[n - 1, NV]
    if q.shape[0] != nq:
        return 1
    if v.shape[0] != nv:
        return 2
    if x.shape[0] != nv:
        return 3
    if fext.shape[1] != 6 or (fext.shape[0] != 0 and fext.shape[0] != n):
        return 4
    if work.shape[0] < n * WB_WIDTH + nv * WD_WIDTH + BASE_WIDTH:
        return 5
    if out.shape[0] != nv:
        return 6
    if strided(q) or strided(v) or strided(x):
        return 7
    return 0


def workspace_size(n, nv, general_rows=0):
    """Length of the flat workspace for n bodies (ground included), nv velocity coordinates and the rows of the
    general joints' blocks: ``wb``, ``wd`` and the base block."""
    return n * WB_WIDTH + (nv + general_rows) * WD_WIDTH + BASE_WIDTH


@helper
def base_offset(work):
    """Position of the base block (the last ``BASE_WIDTH`` floats) in the flat workspace."""
    return work.shape[0] - BASE_WIDTH


@helper
def _store_R_p(wb, i, R, p0, p1, p2):
    for k in range(9):
        wb[i, B_R + k] = R[k]
    wb[i, B_P] = p0
    wb[i, B_P + 1] = p1
    wb[i, B_P + 2] = p2


@helper
def _store_col(wd, k, w0, w1, w2, v0, v1, v2):
    wd[k, 0] = w0
    wd[k, 1] = w1
    wd[k, 2] = w2
    wd[k, 3] = v0
    wd[k, 4] = v1
    wd[k, 5] = v2


@helper
def _store_rotation_col(wd, k, p0, p1, p2, a0, a1, a2):
    """Column of a rotation about the unit axis a through the point p: [a; p × a]."""
    m0, m1, m2 = cross3(p0, p1, p2, a0, a1, a2)
    _store_col(wd, k, a0, a1, a2, m0, m1, m2)


@helper
def _joint_frame(i, mi, mf, wb):
    """(Rj, o0, o1, o2): the joint frame of body i in ground coordinates, Rj = Rp jR, o = pp + Rp jp, from the
    parent's placement in ``wb``."""
    par = mi[i, PARENT]
    Rp = load9(wb, par)
    d0, d1, d2 = mat3_vec(Rp, mf[i, F_JP], mf[i, F_JP + 1], mf[i, F_JP + 2])
    if mi[i, ROT_ID] == 1:
        Rj = Rp
    else:
        Rj = mat3_mul(Rp, load9(mf, i))
    return Rj, wb[par, B_P] + d0, wb[par, B_P + 1] + d1, wb[par, B_P + 2] + d2


@helper
def _motion_to_ground(Rj, o0, o1, o2, a0, a1, a2, b0, b1, b2):
    """The motion vector [a; b] in Plücker coordinates of the frame (Rj, o) in ground coordinates:
    [Rj a; Rj b + o × Rj a]."""
    w0, w1, w2 = mat3_vec(Rj, a0, a1, a2)
    u0, u1, u2 = mat3_vec(Rj, b0, b1, b2)
    m0, m1, m2 = cross3(o0, o1, o2, w0, w1, w2)
    return w0, w1, w2, u0 + m0, u1 + m1, u2 + m2


@helper(inline=False)
def _general_joint_placement(i, mi, mf, wb, wd):
    """``joint_placement_world`` of a general joint (compiled once, out of line, so that the hot kernels' code
    for the other joints is as before): R_i = Rj R_J and p_i = o + Rj z from the joint's block (module
    docstring), the ground-frame columns of S (seed 001 eqs. 3.101, 3.104: the partial velocities p_ak, k_ak)
    into ``wd[iv + k, 0:6]``, and its twist X σ and bias X β into the block's row r0 + 1."""
    Rj, o0, o1, o2 = _joint_frame(i, mi, mf, wb)
    r0 = mi[i, AXIS]
    iv = mi[i, IV]
    nvi = mi[i, NV]
    e0, e1, e2 = mat3_vec(Rj, wd[r0, GEN_Z], wd[r0, GEN_Z + 1], wd[r0, GEN_Z + 2])
    _store_R_p(wb, i, mat3_mul(Rj, load9(wd, r0)), o0 + e0, o1 + e1, o2 + e2)
    for k in range(nvi):
        r = r0 + 1 + k
        c = _motion_to_ground(Rj, o0, o1, o2, wd[r, 0], wd[r, 1], wd[r, 2], wd[r, 3], wd[r, 4], wd[r, 5])
        _store_col(wd, iv + k, c[0], c[1], c[2], c[3], c[4], c[5])
    for src, dst in ((GEN_SIGMA_J, GEN_SIGMA), (GEN_BIAS_J, GEN_BIAS)):
        c = _motion_to_ground(Rj, o0, o1, o2, wd[r0, src], wd[r0, src + 1], wd[r0, src + 2], wd[r0, src + 3],
                              wd[r0, src + 4], wd[r0, src + 5])
        for k in range(6):
            wd[r0 + 1, dst + k] = c[k]


@helper
def axis_column(R, axis):
    """±column k of the row-major R for ``axis`` = ±(k + 1): R e_k or −R e_k, the unit vector of a coordinate axis
    (``AXIS``) in the coordinates R maps into."""
    k = abs(axis) - 1
    if k == 0:
        x = (R[0], R[3], R[6])
    elif k == 1:
        x = (R[1], R[4], R[7])
    else:
        x = (R[2], R[5], R[8])
    if axis < 0:
        return -x[0], -x[1], -x[2]
    return x


@helper
def joint_placement_world(i, mi, mf, q, wb, wd):
    """Placement (R_i, p_i) of body i in ground coordinates and the ground-frame columns of its motion subspace.

    Reads the parent's placement from ``wb``; writes R_i (row-major) and p_i into ``wb[i]`` and the joint's
    columns S_k = [s_ω; s_v] into ``wd[idx_v + k, 0:6]``. The joint frame is the placement (jR, jp) in the
    parent; the child frame is the joint frame moved by the joint transform (R_J, p_J) of the coordinates
    (docs/model-arrays.md). Column k is [e; p_i × e] for a rotation about the ground-frame axis e through the
    child origin, [0; e] for a translation along e (seed 001 eqs. 3.101, 3.104: the partial velocities).
    """
    jt = mi[i, JTYPE]
    if jt == GENERAL:
        _general_joint_placement(i, mi, mf, wb, wd)
        return
    iq = mi[i, IQ]
    # joint frame in ground coordinates: Rj = Rp jR, oj = pp + Rp jp
    Rj, o0, o1, o2 = _joint_frame(i, mi, mf, wb)
    # joint transform: the child frame in the joint frame
    a0 = mf[i, F_A1]
    a1 = mf[i, F_A1 + 1]
    a2 = mf[i, F_A1 + 2]
    RJ = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
    Ri = Rj
    rotates = True  # Ri = Rj RJ below
    translates = False
    x = 0.0
    y = 0.0
    z = 0.0
    if jt == REVOLUTE or jt == CYLINDRICAL:
        if mi[i, AXIS] != 0:
            Ri = mat3_times_axis_rotation(Rj, mi[i, AXIS], np.cos(q[iq]), np.sin(q[iq]))
            rotates = False
        else:
            RJ = rotation_axis_angle(a0, a1, a2, np.cos(q[iq]), np.sin(q[iq]))
        if jt == CYLINDRICAL:
            translates = True
            x, y, z = q[iq + 1] * a0, q[iq + 1] * a1, q[iq + 1] * a2
    elif jt == PRISMATIC:
        rotates = False
        translates = True
        x, y, z = q[iq] * a0, q[iq] * a1, q[iq] * a2
    elif jt == UNIVERSAL:
        RJ = mat3_mul(rotation_axis_angle(a0, a1, a2, np.cos(q[iq]), np.sin(q[iq])),
                      rotation_axis_angle(mf[i, F_A2], mf[i, F_A2 + 1], mf[i, F_A2 + 2], np.cos(q[iq + 1]),
                                          np.sin(q[iq + 1])))
    elif jt == SPHERICAL or jt == FREE:
        k = iq if jt == SPHERICAL else iq + 3
        s = 1.0 / np.sqrt(q[k] * q[k] + q[k + 1] * q[k + 1] + q[k + 2] * q[k + 2] + q[k + 3] * q[k + 3])
        RJ = quat_to_rotation(q[k] * s, q[k + 1] * s, q[k + 2] * s, q[k + 3] * s)
        if jt == FREE:
            translates = True
            x, y, z = q[iq], q[iq + 1], q[iq + 2]
    elif jt == PLANAR:
        Ri = mat3_times_axis_rotation(Rj, 3, np.cos(q[iq + 2]), np.sin(q[iq + 2]))
        rotates = False
        translates = True
        x, y = q[iq], q[iq + 1]
    else:  # FIXED
        rotates = False
    if rotates:
        Ri = mat3_mul(Rj, RJ)
    p0 = o0
    p1 = o1
    p2 = o2
    if translates:
        e0, e1, e2 = mat3_vec(Rj, x, y, z)
        p0 += e0
        p1 += e1
        p2 += e2
    _store_R_p(wb, i, Ri, p0, p1, p2)
    # motion subspace, ground frame
    iv = mi[i, IV]
    for k in range(mi[i, NV]):
        kind = mi[i, M_DOF + k]
        c = F_DAX + 3 * k
        if k == 0 and mi[i, AXIS] != 0:
            # a Revolute or Cylindrical joint about ±e_a of its frame (``AXIS``), which keeps column a of Rj: the
            # axis is ±that column
            w0, w1, w2 = axis_column(Ri, mi[i, AXIS])
        elif kind >= DOF_TRANS_CHILD:
            w0, w1, w2 = mat3_vec(Ri, mf[i, c], mf[i, c + 1], mf[i, c + 2])
        else:
            w0, w1, w2 = mat3_vec(Rj, mf[i, c], mf[i, c + 1], mf[i, c + 2])
        if kind == DOF_ROT_JOINT or kind == DOF_ROT_CHILD:
            _store_rotation_col(wd, iv + k, p0, p1, p2, w0, w1, w2)
        else:
            _store_col(wd, iv + k, 0.0, 0.0, 0.0, w0, w1, w2)


@helper
def _subspace_times(wd, iv, nv, v):
    """S q̇ of the nv coordinates from ``iv`` (the ground-frame columns of S in ``wd``), a 6-tuple."""
    j0 = 0.0
    j1 = 0.0
    j2 = 0.0
    j3 = 0.0
    j4 = 0.0
    j5 = 0.0
    for k in range(iv, iv + nv):
        vk = v[k]
        j0 += wd[k, 0] * vk
        j1 += wd[k, 1] * vk
        j2 += wd[k, 2] * vk
        j3 += wd[k, 3] * vk
        j4 += wd[k, 4] * vk
        j5 += wd[k, 5] * vk
    return j0, j1, j2, j3, j4, j5


@helper(inline=False)
def _general_joint_velocity(i, mi, v, wd):
    """``joint_velocity_world`` of a general joint (compiled once, out of line): vJ = S q̇ + X σ and c_J = X β, the
    rheonomic twist and the bias that ``joint_placement_world`` left in the joint's block (module docstring;
    seed 001 eqs. 3.101–3.107)."""
    j = _subspace_times(wd, mi[i, IV], mi[i, NV], v)
    r = mi[i, AXIS] + 1
    return ((j[0] + wd[r, GEN_SIGMA], j[1] + wd[r, GEN_SIGMA + 1], j[2] + wd[r, GEN_SIGMA + 2],
             j[3] + wd[r, GEN_SIGMA + 3], j[4] + wd[r, GEN_SIGMA + 4], j[5] + wd[r, GEN_SIGMA + 5]),
            (wd[r, GEN_BIAS], wd[r, GEN_BIAS + 1], wd[r, GEN_BIAS + 2], wd[r, GEN_BIAS + 3], wd[r, GEN_BIAS + 4],
             wd[r, GEN_BIAS + 5]))


@helper
def joint_velocity_world(i, mi, v, wd):
    """The joint's spatial velocity vJ = S_i q̇_i and intra-joint bias c_J (ground frame), as two 6-tuples.

    The bias of body i is c_i = v_λ(i) × vJ + c_J (see the module docstring)."""
    jt = mi[i, JTYPE]
    if jt == GENERAL:
        return _general_joint_velocity(i, mi, v, wd)
    iv = mi[i, IV]
    j0, j1, j2, j3, j4, j5 = _subspace_times(wd, iv, mi[i, NV], v)
    c0 = 0.0
    c1 = 0.0
    c2 = 0.0
    c3 = 0.0
    c4 = 0.0
    c5 = 0.0
    if jt == UNIVERSAL:
        # θ̇1 θ̇2 (s1 × s2): s1 is fixed in the parent, s2 in the child
        k = v[iv] * v[iv + 1]
        c0, c1, c2, c3, c4, c5 = motion_cross_motion(
            k * wd[iv, 0], k * wd[iv, 1], k * wd[iv, 2], k * wd[iv, 3], k * wd[iv, 4], k * wd[iv, 5],
            wd[iv + 1, 0], wd[iv + 1, 1], wd[iv + 1, 2], wd[iv + 1, 3], wd[iv + 1, 4], wd[iv + 1, 5])
    elif jt == PLANAR:
        # (s_x ẋ + s_y ẏ) × s_θ θ̇: the sliding directions are fixed in the parent, the hinge in the child
        vx = v[iv]
        vy = v[iv + 1]
        vt = v[iv + 2]
        c0, c1, c2, c3, c4, c5 = motion_cross_motion(
            0.0, 0.0, 0.0, wd[iv, 3] * vx + wd[iv + 1, 3] * vy, wd[iv, 4] * vx + wd[iv + 1, 4] * vy,
            wd[iv, 5] * vx + wd[iv + 1, 5] * vy,
            vt * wd[iv + 2, 0], vt * wd[iv + 2, 1], vt * wd[iv + 2, 2], vt * wd[iv + 2, 3], vt * wd[iv + 2, 4],
            vt * wd[iv + 2, 5])
    return (j0, j1, j2, j3, j4, j5), (c0, c1, c2, c3, c4, c5)


@helper
def set_ground(mf, work, wb, nv):
    """Row 0 of ``wb``: body 0 at the origin with identity rotation, at rest; or, when it moves in a prescribed
    way (``mf[0, G_MOVING]``), its placement, spatial velocity and spatial acceleration copied from the base
    block of ``work`` (see ``X_R``; seed 001 §3.1–3.2: body 0's motion r_0(t), ω_0(t) is given). The passes
    then carry it to every body: the bodies' placements, velocities and accelerations are absolute (ground
    coordinates), and the base acceleration enters the equations as the book's terms in r̈_0 (eqs.
    3.26–3.30, −M b_i0 × r̈_0 ...) enter them, through a_0. The kernels that add gravity make a_0 = a_base − [0; g]
    (the ground's "acceleration" −g of RBDA §5.3) afterwards."""
    for k in range(WB_WIDTH):
        wb[0, k] = 0.0
    if mf[0, G_MOVING] != 0.0:
        o = base_offset(work)
        for k in range(12):
            wb[0, B_R + k] = work[o + X_R + k]   # R (9), then p (3): B_P = B_R + 9, X_P = X_R + 9
        for k in range(6):
            wb[0, B_V + k] = work[o + X_V + k]
            wb[0, B_A + k] = work[o + X_A + k]
    else:
        wb[0, 0] = 1.0
        wb[0, 4] = 1.0
        wb[0, 8] = 1.0


@helper
def set_ground_acceleration(mf, wb):
    """a_0 = a_base − [0; g]: gravity as an upward acceleration of the ground (RBDA §5.3), ``mf[0, 0:3]`` being g,
    added to the base's own acceleration that :func:`set_ground` left in row 0 (zero for a fixed ground)."""
    wb[0, B_A + 3] -= mf[0, 0]
    wb[0, B_A + 4] -= mf[0, 1]
    wb[0, B_A + 5] -= mf[0, 2]


@helper
def body_inertia_world(i, mf, wb):
    """(m, h, I_O) of body i about the ground origin in ground coordinates (see ``rigid_inertia_world``)."""
    R = load9(wb, i)
    p = (wb[i, B_P], wb[i, B_P + 1], wb[i, B_P + 2])
    c = (mf[i, F_COM], mf[i, F_COM + 1], mf[i, F_COM + 2])
    Ic = (mf[i, F_IC], mf[i, F_IC + 1], mf[i, F_IC + 2], mf[i, F_IC + 3], mf[i, F_IC + 4], mf[i, F_IC + 5])
    m = mf[i, F_MASS]
    h, I = rigid_inertia_world(R, p, m, c, Ic)
    return m, h, I


@helper
def armature(i, mf, k):
    """The armature a of velocity coordinate k (0 ≤ k < 6) of body i's joint: the inertia of a rotor geared to the
    coordinate (a motor's, reflected through its gearbox), which adds ½ a q̇_k² to the kinetic energy, a to the
    diagonal entry of the mass matrix, a q̈_k to the generalized force and nothing to the bias (as MuJoCo's
    ``armature``, mj_fullM). Zero for a coordinate without one: every kernel then computes what it computes
    without armature, bit for bit (x + 0.0 = x)."""
    return mf[i, F_ARM + k]


@helper
def armature_energy(i, mi, mf, v):
    """½ Σ_k a_k v_k², the kinetic energy of the rotors of body i's joint (:func:`armature`)."""
    iv = mi[i, IV]
    e = 0.0
    for k in range(mi[i, NV]):
        x = v[iv + k]
        e += 0.5 * mf[i, F_ARM + k] * x * x
    return e


@njit(**KERNEL)
def joint_placement_world_call(i, mi, mf, q, wb, wd):
    """``joint_placement_world`` compiled once, for the kernels off the hot path."""
    joint_placement_world(i, mi, mf, q, wb, wd)


@njit(**KERNEL)
def joint_velocity_world_call(i, mi, v, wd):
    """``joint_velocity_world`` compiled once, for the kernels off the hot path."""
    return joint_velocity_world(i, mi, v, wd)


@njit(**KERNEL)
def body_inertia_world_call(i, mf, wb):
    """``body_inertia_world`` compiled once, for the kernels off the hot path."""
    return body_inertia_world(i, mf, wb)


@helper
def body_kinematics(i, mi, mf, q, v, qdd, wb, wd, level):
    """One body of the forward pass (RBDA Table 5.1; seed 001 §3.4): the placement of body i (level 0), its
    velocity v_i = v_λ + vJ (level ≥ 1) and spatial acceleration a_i = a_λ + v_λ × vJ + c_J + S q̈ without gravity
    (level 2), ground frame, from its parent's in ``wb`` (the motion subspace's columns into ``wd``)."""
    par = mi[i, PARENT]
    joint_placement_world(i, mi, mf, q, wb, wd)
    if level >= 1:
        vJ, cJ = joint_velocity_world(i, mi, v, wd)
        vp = (wb[par, B_V], wb[par, B_V + 1], wb[par, B_V + 2], wb[par, B_V + 3], wb[par, B_V + 4],
              wb[par, B_V + 5])
        for k in range(6):
            wb[i, B_V + k] = vp[k] + vJ[k]
        if level >= 2:
            c = motion_cross_motion(vp[0], vp[1], vp[2], vp[3], vp[4], vp[5],
                                    vJ[0], vJ[1], vJ[2], vJ[3], vJ[4], vJ[5])
            for k in range(6):
                wb[i, B_A + k] = wb[par, B_A + k] + c[k] + cJ[k]
            for kk in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
                for k in range(6):
                    wb[i, B_A + k] += wd[kk, k] * qdd[kk]


@njit(**KERNEL)
def body_kinematics_call(i, mi, mf, q, v, qdd, wb, wd, level):
    """``body_kinematics`` compiled once, for the kernels off the hot path."""
    body_kinematics(i, mi, mf, q, v, qdd, wb, wd, level)


@njit(**KERNEL)
def kinematics_kernel(mi, mf, q, v, qdd, work, level):
    """Forward kinematics (the first pass of RBDA Table 5.1; seed 001 §3.4): placements (level 0), body
    velocities (level ≥ 1) and spatial accelerations without gravity (level 2) of every body, ground frame,
    into the workspace (``wb`` columns B_R, B_P, B_V, B_A; the motion subspaces into ``wd``)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    set_ground(mf, work, wb, v.shape[0])
    for i in range(1, n):
        body_kinematics_call(i, mi, mf, q, v, qdd, wb, wd, level)


@njit(**KERNEL)
def body_frames_kernel(mi, mf, q, v, qdd, work, level, R_out, p_out, vel_out, acc_out):
    """Placements (R, p), classical velocities [ω; ṗ] and accelerations [ω̇; p̈] of every body origin in
    ground coordinates (``level`` 0: placements, 1: + velocities, 2: + accelerations)."""
    kinematics_kernel(mi, mf, q, v, qdd, work, level)
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    for i in range(n):
        for r in range(3):
            for c in range(3):
                R_out[i, r, c] = wb[i, B_R + 3 * r + c]
            p_out[i, r] = wb[i, B_P + r]
        if level >= 1:
            w0, w1, w2 = wb[i, B_V], wb[i, B_V + 1], wb[i, B_V + 2]
            # velocity of the body origin p: v_O + ω × p
            x0, x1, x2 = cross3(w0, w1, w2, p_out[i, 0], p_out[i, 1], p_out[i, 2])
            vel_out[i, 0] = w0
            vel_out[i, 1] = w1
            vel_out[i, 2] = w2
            vel_out[i, 3] = wb[i, B_V + 3] + x0
            vel_out[i, 4] = wb[i, B_V + 4] + x1
            vel_out[i, 5] = wb[i, B_V + 5] + x2
            if level >= 2:
                # p̈ = a_O + ω̇ × p + ω × ṗ
                al0, al1, al2 = wb[i, B_A], wb[i, B_A + 1], wb[i, B_A + 2]
                y0, y1, y2 = cross3(al0, al1, al2, p_out[i, 0], p_out[i, 1], p_out[i, 2])
                z0, z1, z2 = cross3(w0, w1, w2, vel_out[i, 3], vel_out[i, 4], vel_out[i, 5])
                acc_out[i, 0] = al0
                acc_out[i, 1] = al1
                acc_out[i, 2] = al2
                acc_out[i, 3] = wb[i, B_A + 3] + y0 + z0
                acc_out[i, 4] = wb[i, B_A + 4] + y1 + z1
                acc_out[i, 5] = wb[i, B_A + 5] + y2 + z2


@njit(**KERNEL)
def point_kernel(mi, mf, q, v, work, body, r0, r1, r2, with_velocity, pos_out, vel_out, jac_out):
    """Position (ground coordinates) of the point r fixed in ``body`` (body coordinates), its velocity, and
    the Jacobian ∂ṙ/∂v (3 x nv): column k is s_v + s_ω × x for the coordinates on the path from the body to
    the ground (seed 001 §3.4: the linear partial velocities of a point), zero elsewhere."""
    n = mi.shape[0]
    nv = v.shape[0]
    wb, wd = workspace_views(work, n, nv)
    set_ground(mf, work, wb, nv)
    # placements of the bodies on the path only would suffice; the bodies are few and the pass is O(N)
    for i in range(1, body + 1):
        joint_placement_world_call(i, mi, mf, q, wb, wd)
    R = load9(wb, body)
    d0, d1, d2 = mat3_vec(R, r0, r1, r2)
    x0 = wb[body, B_P] + d0
    x1 = wb[body, B_P + 1] + d1
    x2 = wb[body, B_P + 2] + d2
    pos_out[0] = x0
    pos_out[1] = x1
    pos_out[2] = x2
    for k in range(jac_out.shape[1]):
        jac_out[0, k] = 0.0
        jac_out[1, k] = 0.0
        jac_out[2, k] = 0.0
    # the velocity of the body-0 point at x (zero unless the base moves): v_O + ω0 × x
    b0, b1, b2 = cross3(wb[0, B_V], wb[0, B_V + 1], wb[0, B_V + 2], x0, x1, x2)
    vel_out[0] = wb[0, B_V + 3] + b0
    vel_out[1] = wb[0, B_V + 4] + b1
    vel_out[2] = wb[0, B_V + 5] + b2
    i = body
    while i > 0:
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            e0, e1, e2 = cross3(wd[k, 0], wd[k, 1], wd[k, 2], x0, x1, x2)
            j0 = wd[k, 3] + e0
            j1 = wd[k, 4] + e1
            j2 = wd[k, 5] + e2
            if jac_out.shape[1] > 0:
                jac_out[0, k] = j0
                jac_out[1, k] = j1
                jac_out[2, k] = j2
            if with_velocity:
                vel_out[0] += j0 * v[k]
                vel_out[1] += j1 * v[k]
                vel_out[2] += j2 * v[k]
        i = mi[i, PARENT]


@njit(**KERNEL)
def com_kernel(mi, mf, q, v, work, out):
    """Total mass, centre of mass and linear momentum of the system in ground coordinates:
    out = (M, c (3), p (3))."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    set_ground(mf, work, wb, v.shape[0])
    for k in range(7):
        out[k] = 0.0
    for i in range(1, n):
        par = mi[i, PARENT]
        joint_placement_world_call(i, mi, mf, q, wb, wd)
        vJ, cJ = joint_velocity_world_call(i, mi, v, wd)
        for k in range(6):
            wb[i, B_V + k] = wb[par, B_V + k] + vJ[k]
        m, h, I = body_inertia_world_call(i, mf, wb)
        f = rigid_inertia_times_motion(m, h, I, wb[i, B_V], wb[i, B_V + 1], wb[i, B_V + 2],
                                       wb[i, B_V + 3], wb[i, B_V + 4], wb[i, B_V + 5])
        out[0] += m
        out[1] += h[0]
        out[2] += h[1]
        out[3] += h[2]
        out[4] += f[3]
        out[5] += f[4]
        out[6] += f[5]
    if out[0] > 0.0:
        out[1] /= out[0]
        out[2] /= out[0]
        out[3] /= out[0]
