"""Equations of motion in Poisson impulses (seed 002): q̇ from the impulses p by the sweep or the block LᵀDL
(Cholesky) solution of system (6), and ṗ from eq. (7), both in O(N) with no N×N matrix.

Seed 002 (Ivanov 2017, reference notes §A.3–A.7) writes, for a tree of N bodies with body velocities V,
subtree momenta μ (the Lagrange multipliers) and generalized impulses p = ∂T/∂q̇:

    M V − Sᵀ μ = 0,    −S V + A q̇ = −V*,    Aᵀ μ = p                         (6)
    ṗ = (Ȧᵀ − Aᵀ Ω) μ + Q                                                  (7)

in body frames, with the body-to-parent transforms C_i inside the kinematic-structure matrix S. The kernels
use the ground-frame ("world") Plücker coordinates of ``kernels/kinematics.py`` instead (spatial vectors
[angular; linear], the paper's are [linear; angular]), in which every C_i is the identity:

==============================  ===========================================================================
paper (body frame i)            here (ground frame, moments about the ground origin)
==============================  ===========================================================================
V_i, A_i q̇_i                    body velocity v_i = v_λ + S_i q̇_i (columns s_k of S_i, ``wd[k, 0:6]``)
M_i                             rigid-body inertia I_i
μ_i = M_i V_i + Σ C_jᵀ μ_j      subtree momentum h_i = I_i v_i + Σ_children h_j
M_i*, φ_i*                      articulated inertia IA_i and bias momentum φ_i: h_i = IA_i v_i + φ_i
F_i*                            subtree gravity force f*_i = Σ [c_b × m_b g; m_b g]
(Ȧ_iᵀ − A_iᵀ Ω_i) μ_i            −s_kᵀ (u_k ×* h_i): a column fixed in the body moving with u_k turns as
                                ṡ_k = u_k × s_k, and (u × s)ᵀ h = −sᵀ (u ×* h); Ω_i, the transport term of
                                the moving frame i, vanishes in the fixed ground frame
==============================  ===========================================================================

so ṗ_k = s_kᵀ (f*_i − u_k ×* h_i) for coordinate k of joint i (eq. 7), where u_k is the velocity of the frame
that carries column k: u_k = v_i for a column fixed in the child (``kinematics.DOF_*_CHILD``: the second hinge
of a Universal joint, Spherical, Free), u_k = v_λ + t_J for a column fixed in the joint frame, t_J = [0; Σ d_l
q̇_l] the joint's own translations along joint-frame axes (they carry the hinge of a Planar joint; the first
hinge of a Universal joint turns with the parent only). These are the columns whose derivatives make the
bias c_J of ``kinematics.joint_velocity_world``. The applied generalized forces Q of the joint and point
springs, dampers and efforts are added by the formulation, since they need v.

The two solvers (§A.6, §A.7.3) share the passes of the paper's tables:

Pass 1 (root -> leaves):  placements, columns S_i, IA_i = I_i, φ_i = 0, f*_i = gravity of body i
Pass 2 (leaves -> root):  U_i = IA_i S_i,  N_i = S_iᵀ U_i,  r_i = p_i − S_iᵀ φ_i, then
    sweep ("метод прогонки"):  D_i = N_i⁻¹,  IA_λ += IA_i − U_i D_i U_iᵀ,  φ_λ += φ_i + U_i D_i r_i
    Cholesky (LᵀDL):  L_i L_iᵀ = N_i,  Y_i = L_i⁻¹ U_iᵀ,  x_i = L_i⁻¹ r_i,
                      IA_λ += IA_i − Y_iᵀ Y_i,  φ_λ += φ_i + Y_iᵀ x_i
    and f*_λ += f*_i
Pass 3 (root -> leaves):
    sweep:    q̇_i = D_i (r_i − U_iᵀ v_λ)          Cholesky:  q̇_i = L_i⁻ᵀ (x_i − Y_i v_λ)
    v_i = v_λ + S_i q̇_i,   h_i = IA_i v_i + φ_i,   ṗ_k = s_kᵀ (f*_i − u_k ×* h_i)

IA_i is Featherstone's articulated-body inertia and pass 2 is the inertia recursion of the ABA (``aba.py``),
here at the velocity level (notes §A.6). "q̇" of the paper is the velocity v of ``docs/model-arrays.md`` (for
Spherical and Free joints the angular velocity in the child frame, and p its conjugate impulse ∂T/∂v).

Workspace: the kinematics layout (``kinematics.workspace_views``), so that the force kernels can reuse the
placements and velocities: per body ``B_R``, ``B_P``, ``B_V`` (v_i), ``B_IA`` (IA_i), and ``B_PHI``,
``B_FSTAR``, ``B_H`` below; per coordinate the column s_k, ``D_U`` (U), ``D_UD`` (U D for the sweep, the row
of Y for Cholesky), ``D_u`` (r, or x), ``D_DINV`` (D, or the rows of L).
"""
import math

from numba import njit

from multibody.kernels.aba import invert_spd_inplace
from multibody.kernels.kinematics import (B_A, B_C, B_F, B_IA, B_V, D_DINV, D_U, D_UD, D_u, DOF_TRANS_CHILD,
                                          DOF_TRANS_JOINT, IQ, IV, M_DOF, NQ, NV, PARENT, armature, body_inertia_world,
                                          joint_placement_world, joint_velocity_world, set_ground, workspace_views)
from multibody.kernels.rnea import workspace_len
from multibody.kernels.spatial import (COMPILED, INLINE, cross3, dot6, force_cross_motion, helper, load6, store6,
                                       store_rigid_inertia_sym6, sym6_add_low_rank_update, sym6_add_rank1_update,
                                       sym6_times)

# per-body workspace columns of the Poisson passes (they reuse the acceleration-level columns of ``wb``)
B_PHI = B_C  # φ_i, bias momentum of the articulated body
B_FSTAR = B_A  # f*_i, gravity force of the subtree
B_H = B_F  # h_i, momentum of the subtree (the paper's μ_i)

#: solver codes of ``poisson_kernel``: the sweep (§A.6) and the block LᵀDL / Cholesky scheme (§A.7.3)
SWEEP, CHOLESKY = 0, 1


@njit(**COMPILED)
def check_poisson_sizes(mi, q, p, work, v, pdot):
    """0 when the argument sizes fit the model, else the position of the first bad one: 1 q (nq), 2 p (nv),
    3 work (``kinematics.workspace_size``), 4 v (nv), 5 pdot (nv). Numba does not check bounds."""
    n = mi.shape[0]
    nv = mi[n - 1, IV] + mi[n - 1, NV]
    if q.shape[0] != mi[n - 1, IQ] + mi[n - 1, NQ]:
        return 1
    if p.shape[0] != nv:
        return 2
    if work.shape[0] < workspace_len(n, nv):
        return 3
    if v.shape[0] != nv:
        return 4
    if pdot.shape[0] != nv:
        return 5
    return 0


@njit(**COMPILED, inline=INLINE)
def _workspace(mi, mf, work, nv):
    """(n, wb, wd, IA): the number of bodies and the views of the flat workspace (``kinematics.workspace_views``;
    IA the packed articulated inertias), with the ground set (``kinematics.set_ground``: at rest at the
    origin, or in its prescribed motion)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, nv)
    set_ground(mf, work, wb, nv)
    return n, wb, wd, wb[:, B_IA:B_IA + 21]


@helper
def _body_pass(i, mi, mf, q, wb, wd, IA):
    """Pass 1 for body i (seed 002 §A.6, §A.7.3: the leaf values M_i* = M_i, φ_i* = 0, F_i = the active
    force): placement and columns S_i, IA_i = I_i, φ_i = 0, and f*_i = the gravity force [c × m g; m g] =
    [h × g; m g] about the ground origin (h = m c, the first moment)."""
    joint_placement_world(i, mi, mf, q, wb, wd)
    m, h, I = body_inertia_world(i, mf, wb)
    store_rigid_inertia_sym6(IA, i, m, h, I)
    g0 = mf[0, 0]
    g1 = mf[0, 1]
    g2 = mf[0, 2]
    n0, n1, n2 = cross3(h[0], h[1], h[2], g0, g1, g2)
    store6(wb, i, B_FSTAR, (n0, n1, n2, m * g0, m * g1, m * g2))
    store6(wb, i, B_PHI, (0.0, 0.0, 0.0, 0.0, 0.0, 0.0))


@helper
def _impulse_rates(i, mi, wd, v, vp, vi, h, f, pdot):
    """ṗ_k = s_kᵀ (f*_i − u_k ×* h_i) for the coordinates k of joint i (seed 002, eq. 7 in the ground frame; see
    the module docstring), from v_λ = ``vp``, v_i = ``vi``, h_i = ``h`` and f*_i = ``f`` (6-tuples): u_k = v_i
    for a column fixed in the child, u_k = v_λ + t_J for a column fixed in the joint frame, t_J = Σ [0; d_l] v_l
    the joint's translations along joint-frame axes (they carry the hinge of a Planar joint; the hinge of a
    Universal joint moves with the parent)."""
    iv = mi[i, IV]
    nvi = mi[i, NV]
    t0 = 0.0
    t1 = 0.0
    t2 = 0.0
    for k in range(nvi):
        if mi[i, M_DOF + k] == DOF_TRANS_JOINT:
            t0 += wd[iv + k, 3] * v[iv + k]
            t1 += wd[iv + k, 4] * v[iv + k]
            t2 += wd[iv + k, 5] * v[iv + k]
    # g_a = f − (v_λ + [0; t]) ×* h,  g_b = f − v_i ×* h;  [0; t] ×* h = [t × h_lin; 0]
    a = force_cross_motion(vp[0], vp[1], vp[2], vp[3] + t0, vp[4] + t1, vp[5] + t2, h[0], h[1], h[2], h[3], h[4],
                           h[5])
    b = force_cross_motion(vi[0], vi[1], vi[2], vi[3], vi[4], vi[5], h[0], h[1], h[2], h[3], h[4], h[5])
    ga0, ga1, ga2, ga3, ga4, ga5 = f[0] - a[0], f[1] - a[1], f[2] - a[2], f[3] - a[3], f[4] - a[4], f[5] - a[5]
    gb0, gb1, gb2, gb3, gb4, gb5 = f[0] - b[0], f[1] - b[1], f[2] - b[2], f[3] - b[3], f[4] - b[4], f[5] - b[5]
    for k in range(nvi):
        kk = iv + k
        if mi[i, M_DOF + k] >= DOF_TRANS_CHILD:
            pdot[kk] = dot6(wd[kk, 0], wd[kk, 1], wd[kk, 2], wd[kk, 3], wd[kk, 4], wd[kk, 5],
                            gb0, gb1, gb2, gb3, gb4, gb5)
        else:
            pdot[kk] = dot6(wd[kk, 0], wd[kk, 1], wd[kk, 2], wd[kk, 3], wd[kk, 4], wd[kk, 5],
                            ga0, ga1, ga2, ga3, ga4, ga5)


@helper
def _body_velocity(i, mi, wb, wd, v):
    """v_i = v_λ + S_i q̇_i into ``wb`` (seed 002, eq. 1 with C_i = E); returns (v_λ, v_i) as 6-tuples."""
    vp = load6(wb, mi[i, PARENT], B_V)
    vJ, cJ = joint_velocity_world(i, mi, v, wd)
    vi = (vp[0] + vJ[0], vp[1] + vJ[1], vp[2] + vJ[2], vp[3] + vJ[3], vp[4] + vJ[4], vp[5] + vJ[5])
    store6(wb, i, B_V, vi)
    return vp, vi


@helper
def _momentum_pass(i, mi, wb, wd, IA, v, pdot):
    """Pass 3 for body i (seed 002 §A.6, §A.7.3) once its q̇_i (= v) is known: v_i = v_λ + S_i q̇_i,
    h_i = IA_i v_i + φ_i (the paper's μ_i = M_i* V_i + φ_i*), and ṗ of its coordinates (eq. 7)."""
    vp, vi = _body_velocity(i, mi, wb, wd, v)
    if mi[i, NV] > 0:
        Iv = sym6_times(IA, i, vi[0], vi[1], vi[2], vi[3], vi[4], vi[5])
        h = (Iv[0] + wb[i, B_PHI], Iv[1] + wb[i, B_PHI + 1], Iv[2] + wb[i, B_PHI + 2], Iv[3] + wb[i, B_PHI + 3],
             Iv[4] + wb[i, B_PHI + 4], Iv[5] + wb[i, B_PHI + 5])
        _impulse_rates(i, mi, wd, v, vp, vi, h, load6(wb, i, B_FSTAR), pdot)


@helper
def _project_joint(i, mi, mf, wb, wd, IA, p):
    """U_k = IA_i s_k into ``D_U``, r_k = p_k − s_kᵀ φ_i into ``D_u`` and N = S_iᵀ U_i + A_i into ``D_DINV`` for
    the coordinates of joint i (seed 002 §A.6: A_iᵀ M_i* A_i and p_i − A_iᵀ φ_i*; A_i the diagonal of the joint's
    armatures, ``kinematics.armature``, whose impulses A_i q̇_i are part of p_i)."""
    iv = mi[i, IV]
    nvi = mi[i, NV]
    phi = load6(wb, i, B_PHI)
    for k in range(iv, iv + nvi):
        U = sym6_times(IA, i, wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5])
        store6(wd, k, D_U, U)
        wd[k, D_u] = p[k] - dot6(wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5],
                                 phi[0], phi[1], phi[2], phi[3], phi[4], phi[5])
    for k in range(iv, iv + nvi):
        for l in range(nvi):
            x = dot6(wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5], wd[iv + l, D_U], wd[iv + l, D_U + 1],
                     wd[iv + l, D_U + 2], wd[iv + l, D_U + 3], wd[iv + l, D_U + 4], wd[iv + l, D_U + 5])
            wd[k, D_DINV + l] = x + armature(i, mf, l) if k == iv + l else x


@helper
def _hand_over(i, par, wb, wd, IA, cw, cz, s1, iv, nvi):
    """Pass 2, body i to its parent (seed 002 §A.6 and §A.7.3: the recursions of M_i*, φ_i*, F_i* with C_j = E):
    IA_λ += IA_i − Σ_k w_k z_kᵀ, φ_λ += φ_i + Σ_k w_k ρ_k, f*_λ += f*_i, with
    w_k = wd[iv + k, cw:cw+6], z_k = wd[iv + k, cz:cz+6], ρ_k = wd[iv + k, D_u] (sweep: w = U D, z = U,
    ρ = r; Cholesky: w = z = the rows of Y, ρ = x). One coordinate: w = s1 z (the unrolled rank-1 update)."""
    if nvi == 1:
        sym6_add_rank1_update(IA, par, IA, i, s1, wd[iv, cz], wd[iv, cz + 1], wd[iv, cz + 2], wd[iv, cz + 3],
                              wd[iv, cz + 4], wd[iv, cz + 5])
    else:
        sym6_add_low_rank_update(IA, par, IA, i, wd, cw, wd, cz, iv, nvi)
    for r in range(6):
        s = wb[i, B_PHI + r]
        for k in range(iv, iv + nvi):
            s += wd[k, cw + r] * wd[k, D_u]
        wb[par, B_PHI + r] += s
        wb[par, B_FSTAR + r] += wb[i, B_FSTAR + r]


@helper
def cholesky_small(A, r0, c0, n):
    """The lower Cholesky factor L (L Lᵀ = A) of the n×n SPD block A[r0:r0+n, c0:c0+n], in place in its lower
    triangle (Golub & Van Loan, Alg. 4.2.1; the strict upper triangle is left as it was and never read).
    Returns False if a pivot is not positive."""
    for j in range(n):
        s = A[r0 + j, c0 + j]
        for k in range(j):
            s -= A[r0 + j, c0 + k] * A[r0 + j, c0 + k]
        if not s > 0.0:
            return False
        d = math.sqrt(s)
        A[r0 + j, c0 + j] = d
        for i in range(j + 1, n):
            s = A[r0 + i, c0 + j]
            for k in range(j):
                s -= A[r0 + i, c0 + k] * A[r0 + j, c0 + k]
            A[r0 + i, c0 + j] = s / d
    return True


@helper
def _sweep_eliminate(wd, iv, nvi):
    """Sweep, pass 2 for one joint (seed 002 §A.6): D = N⁻¹ = (A_iᵀ M_i* A_i)⁻¹ in place of N, and U D into
    ``D_UD``. Returns False if N is not positive definite (a non-positive pivot)."""
    for k in range(iv, iv + nvi):
        if not wd[k, D_DINV + k - iv] > 0.0:
            return False
    if nvi == 1:
        dinv = 1.0 / wd[iv, D_DINV]
        wd[iv, D_DINV] = dinv
        for r in range(6):
            wd[iv, D_UD + r] = wd[iv, D_U + r] * dinv
        return True
    invert_spd_inplace(wd, iv, D_DINV, nvi)
    for k in range(nvi):  # UD = U D, column k in row iv + k
        for r in range(6):
            s = 0.0
            for l in range(nvi):
                s += wd[iv + l, D_U + r] * wd[iv + l, D_DINV + k]
            wd[iv + k, D_UD + r] = s
    return True


@helper
def _cholesky_eliminate(wd, iv, nvi):
    """Cholesky, pass 2 for one joint (seed 002 §A.7.3, eq. 10): L Lᵀ = N in place of N, the rows of
    Y = L⁻¹ Uᵀ into ``D_UD`` and x = L⁻¹ r in place of r. Returns False if N is not positive definite."""
    if nvi == 1:
        if not wd[iv, D_DINV] > 0.0:
            return False
        d = math.sqrt(wd[iv, D_DINV])
        wd[iv, D_DINV] = d
        dinv = 1.0 / d
        for r in range(6):
            wd[iv, D_UD + r] = wd[iv, D_U + r] * dinv
        wd[iv, D_u] *= dinv
        return True
    if not cholesky_small(wd, iv, D_DINV, nvi):
        return False
    for k in range(nvi):  # forward substitution: row k of Y and x_k
        kk = iv + k
        dinv = 1.0 / wd[kk, D_DINV + k]
        for r in range(6):
            s = wd[kk, D_U + r]
            for l in range(k):
                s -= wd[kk, D_DINV + l] * wd[iv + l, D_UD + r]
            wd[kk, D_UD + r] = s * dinv
        s = wd[kk, D_u]
        for l in range(k):
            s -= wd[kk, D_DINV + l] * wd[iv + l, D_u]
        wd[kk, D_u] = s * dinv
    return True


@helper
def _sweep_velocity(wd, iv, nvi, vp, v):
    """Sweep, pass 3 (seed 002 §A.6): q̇_i = D_i (r_i − U_iᵀ v_λ) = D_i r_i − (U_i D_i)ᵀ v_λ."""
    for k in range(iv, iv + nvi):
        x = -dot6(wd[k, D_UD], wd[k, D_UD + 1], wd[k, D_UD + 2], wd[k, D_UD + 3], wd[k, D_UD + 4],
                  wd[k, D_UD + 5], vp[0], vp[1], vp[2], vp[3], vp[4], vp[5])
        for l in range(nvi):
            x += wd[k, D_DINV + l] * wd[iv + l, D_u]
        v[k] = x


@helper
def _cholesky_velocity(wd, iv, nvi, vp, v):
    """Cholesky, pass 3 (seed 002 §A.7.3, eq. 11): back substitution L_iᵀ q̇_i = x_i − Y_i v_λ."""
    for k in range(nvi - 1, -1, -1):
        kk = iv + k
        x = wd[kk, D_u] - dot6(wd[kk, D_UD], wd[kk, D_UD + 1], wd[kk, D_UD + 2], wd[kk, D_UD + 3],
                               wd[kk, D_UD + 4], wd[kk, D_UD + 5], vp[0], vp[1], vp[2], vp[3], vp[4], vp[5])
        for l in range(k + 1, nvi):
            x -= wd[iv + l, D_DINV + k] * v[iv + l]
        v[kk] = x / wd[kk, D_DINV + k]


@njit(**COMPILED)
def poisson_kernel(mi, mf, q, p, work, v, pdot, solver):
    """q̇ (= v) and ṗ (gravity only) at (q, p): system (6) solved by the sweep method, block Gaussian
    elimination over the tree (``solver`` = ``SWEEP``; seed 002 §A.6, "метод прогонки"), or by the block LᵀDL
    (Cholesky) factorization (``CHOLESKY``; §A.7.3, "Алгоритм метода Холецкого", eqs. 10, 11); ṗ by eq. (7).
    The two share passes 1 and 3 and differ in the elimination of each joint block (see the module
    docstring). Returns 0, a size error of ``check_poisson_sizes``, or −i when the joint block N_i of body i is
    not positive definite (nothing further computed)."""
    err = check_poisson_sizes(mi, q, p, work, v, pdot)
    if err != 0:
        return err
    n, wb, wd, IA = _workspace(mi, mf, work, v.shape[0])
    sweep = solver == SWEEP
    # ---- pass 1: placements, S, IA = I, φ = 0, f* = gravity
    for i in range(1, n):
        _body_pass(i, mi, mf, q, wb, wd, IA)
    # ---- pass 2: eliminate μ from the leaves to the root; IA, φ, f* to the parent
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        nvi = mi[i, NV]
        _project_joint(i, mi, mf, wb, wd, IA, p)
        if sweep:
            if not _sweep_eliminate(wd, iv, nvi):
                return -i
            if par > 0:  # IA − U D Uᵀ, φ + U D r
                _hand_over(i, par, wb, wd, IA, D_UD, D_U, wd[iv, D_DINV], iv, nvi)
        else:
            if not _cholesky_eliminate(wd, iv, nvi):
                return -i
            if par > 0:  # IA − Yᵀ Y, φ + Yᵀ x
                _hand_over(i, par, wb, wd, IA, D_UD, D_UD, 1.0, iv, nvi)
    # ---- pass 3: q̇, v_i, h_i = μ_i, ṗ
    for i in range(1, n):
        iv = mi[i, IV]
        nvi = mi[i, NV]
        vp = load6(wb, mi[i, PARENT], B_V)
        if sweep:
            _sweep_velocity(wd, iv, nvi, vp, v)
        else:
            _cholesky_velocity(wd, iv, nvi, vp, v)
        _momentum_pass(i, mi, wb, wd, IA, v, pdot)
    return 0


@njit(**COMPILED)
def impulses_kernel(mi, mf, q, v, work, p, pdot):
    """The Poisson impulses p = ∂T/∂v and their rate ṗ (gravity only, eq. 7) at (q, v): one forward pass for
    the velocities v_i, one backward accumulation of the subtree momenta h_i = I_i v_i + Σ_children h_j
    (μ = Tᵀ M V; seed 002 §A.4 and §A.11, "initial data"), p_k = s_kᵀ h_i + a_k v_k (a_k the armature). Returns 0 or a size error of
    ``check_poisson_sizes`` (p, pdot and v swapped in the roles of p and v)."""
    err = check_poisson_sizes(mi, q, v, work, p, pdot)
    if err != 0:
        return err
    n, wb, wd, IA = _workspace(mi, mf, work, v.shape[0])
    for i in range(1, n):
        _body_pass(i, mi, mf, q, wb, wd, IA)
        vp, vi = _body_velocity(i, mi, wb, wd, v)
        store6(wb, i, B_H, sym6_times(IA, i, vi[0], vi[1], vi[2], vi[3], vi[4], vi[5]))
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        for k in range(iv, iv + mi[i, NV]):
            p[k] = dot6(wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5], wb[i, B_H], wb[i, B_H + 1],
                        wb[i, B_H + 2], wb[i, B_H + 3], wb[i, B_H + 4], wb[i, B_H + 5]) + armature(i, mf, k - iv) * v[k]
        _impulse_rates(i, mi, wd, v, load6(wb, par, B_V), load6(wb, i, B_V), load6(wb, i, B_H),
                       load6(wb, i, B_FSTAR), pdot)
        if par > 0:
            for r in range(6):
                wb[par, B_H + r] += wb[i, B_H + r]
                wb[par, B_FSTAR + r] += wb[i, B_FSTAR + r]
    return 0
