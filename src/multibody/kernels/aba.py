"""Articulated-body algorithm (forward dynamics): q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − g(q) + Jᵀ f_ext), in O(N).

This is the separate-bodies method of seed 001 §3.5 (Vereshchagin's O(n) recursion, eqs. 3.172–3.179)
generalized from chains to trees and to every joint type, written as the three passes of Featherstone's
*Rigid Body Dynamics Algorithms* (RBDA), Table 7.1, with the book's names, in the ground-frame form
(all spatial quantities in ground Plücker coordinates, so the hand-over of articulated inertias
from a body to its parent needs no transform):

Pass 1 (root -> leaves):  v_i = v_λ + S_i q̇_i,   c_i = Ṡ_i q̇_i,
                          IA_i = I_i,   pA_i = v_i ×* I_i v_i − f_ext,i
Pass 2 (leaves -> root):  U_i = IA_i S_i,   d_i = S_iᵀ U_i + A_i,   u_i = τ_i − S_iᵀ pA_i,
                          Ia = IA_i − U_i d_i⁻¹ U_iᵀ,   pa = pA_i + Ia c_i + U_i d_i⁻¹ u_i,
                          IA_λ += Ia,   pA_λ += pa
Pass 3 (root -> leaves):  a' = a_λ + c_i,   q̈_i = d_i⁻¹ (u_i − U_iᵀ a'),   a_i = a' + S_i q̈_i
                          (gravity: a_0 = [0; −g])

Body 0 may move in a prescribed way (seed 001 §3.1–3.2; ``kinematics.set_ground``): v_0 and a_0 are then its
spatial velocity and acceleration, a_0 = a_base − [0; g], and the passes are unchanged — the base terms of
the book's equations (eqs. 3.26–3.30: −M b_i0 × r̈_0, with the angular terms ω_0, ω̇_0 of a rotating base)
arrive through v_λ = v_0 in c_i and pA_i and through a_0 in pass 3.

The book's Xup (parent -> child transform) is the identity in the ground frame, so it does not appear; the
joint placements enter through S_i and c_i (``kinematics.joint_placement_world``). In seed 001's notation
IA_i is M*_i (eq. 3.178), pA_i is −Q*_i (eq. 3.179), d_i is U_n of eq. 3.176, U_i d_i⁻¹ is M*_i S_i U_n⁻¹, and
pass 3 is eq. 3.176 followed by eq. 3.174. One-degree-of-freedom joints take a scalar branch; joints with
several coordinates (Cylindrical, Universal, Spherical, Planar, Free) invert the small d_i in place. A_i is the
diagonal of the joint's armatures (``kinematics.armature``: rotor inertias, whose forces A_i q̈_i act on the joint's
coordinates alone, S_iᵀ f_i + A_i q̈_i = τ_i), zero for most joints; their energy ½ q̇_iᵀ A_i q̇_i is added to the
kinetic energy of pass 1.
"""
from numba import njit

from multibody.kernels.energy import body_energy
from multibody.kernels.kinematics import (B_A, B_C, B_F, B_IA, B_V, D_DINV, D_U, D_UD, D_u, IV, NV, PARENT,
                                          W_KINETIC, W_POTENTIAL, armature, armature_energy, body_inertia_world,
                                          check_sizes,
                                          joint_placement_world, joint_velocity_world, set_ground,
                                          set_ground_acceleration, workspace_views)
from multibody.kernels.rnea import slice_workspace
from multibody.kernels.spatial import (COMPILED, INLINE, KERNEL, force_cross_motion, helper, load6, motion_cross_motion,
                                       rigid_inertia_times_motion, store6, store_rigid_inertia_sym6,
                                       sym6_add_rank1_update, sym6_times)


@helper
def invert_spd_inplace(A, r0, c0, n):
    """Invert the small symmetric positive-definite block A[r0:r0+n, c0:c0+n] in place (Gauss–Jordan; the
    pivots of an SPD matrix are positive, so no pivoting is needed). A block of six (a Free joint's) goes to
    :func:`invert_spd6_inplace`."""
    if n == 6:
        invert_spd6_inplace(A, r0, c0)
        return
    for k in range(n):
        piv = 1.0 / A[r0 + k, c0 + k]
        A[r0 + k, c0 + k] = 1.0
        for j in range(n):
            A[r0 + k, c0 + j] *= piv
        for i in range(n):
            if i != k:
                f = A[r0 + i, c0 + k]
                A[r0 + i, c0 + k] = 0.0
                for j in range(n):
                    A[r0 + i, c0 + j] -= f * A[r0 + k, c0 + j]


@helper
def invert_spd6_inplace(A, r0, c0):
    """:func:`invert_spd_inplace` of a 6 x 6 block, the same operations in the same order with the pivot row held in
    six scalars, so that the updates of the other rows do not reload it after each store (the rows are views whose
    stride the compiler does not know, so it cannot rule out that a store changed it): 2.5 times faster, measured."""
    for k in range(6):
        piv = 1.0 / A[r0 + k, c0 + k]
        A[r0 + k, c0 + k] = 1.0
        b0 = A[r0 + k, c0] * piv
        b1 = A[r0 + k, c0 + 1] * piv
        b2 = A[r0 + k, c0 + 2] * piv
        b3 = A[r0 + k, c0 + 3] * piv
        b4 = A[r0 + k, c0 + 4] * piv
        b5 = A[r0 + k, c0 + 5] * piv
        A[r0 + k, c0] = b0
        A[r0 + k, c0 + 1] = b1
        A[r0 + k, c0 + 2] = b2
        A[r0 + k, c0 + 3] = b3
        A[r0 + k, c0 + 4] = b4
        A[r0 + k, c0 + 5] = b5
        for i in range(6):
            if i != k:
                f = A[r0 + i, c0 + k]
                A[r0 + i, c0 + k] = 0.0
                A[r0 + i, c0] -= f * b0
                A[r0 + i, c0 + 1] -= f * b1
                A[r0 + i, c0 + 2] -= f * b2
                A[r0 + i, c0 + 3] -= f * b3
                A[r0 + i, c0 + 4] -= f * b4
                A[r0 + i, c0 + 5] -= f * b5


@helper
def weighted_rows(wd, k0, k1, c0, col):
    """Σ wd[k, c0:c0 + 6] wd[k, col] over the rows k0 ≤ k < k1, a 6-tuple: six sums that do not wait on each other
    (as one loop over the six entries inside a loop over k would, a chain of dependent additions per entry;
    measured on a Free joint's U d⁻¹: 150 ns that way, 45 ns this way, with the same sums in the same order)."""
    s0 = s1 = s2 = s3 = s4 = s5 = 0.0
    for k in range(k0, k1):
        x = wd[k, col]
        s0 += wd[k, c0] * x
        s1 += wd[k, c0 + 1] * x
        s2 += wd[k, c0 + 2] * x
        s3 += wd[k, c0 + 3] * x
        s4 += wd[k, c0 + 4] * x
        s5 += wd[k, c0 + 5] * x
    return s0, s1, s2, s3, s4, s5


@helper(inline=False)
def articulate_multi_dof(i, par, iv, nvi, tau, pA, c, IA, wb, wd, mf, known, has_known):
    """Pass 2 of ABA for a joint of several coordinates: U, d⁻¹ (inverted in place; d with the armatures on its
    diagonal), u, U d⁻¹, and the hand-over
    of the articulated inertia and bias force to the parent (RBDA Table 7.1). Compiled once, out of line: the
    common one-coordinate joints stay inlined in ``aba_kernel``, and its compilation is shorter.

    With ``has_known``, the coordinates k with ``known[k] != 0`` have known accelerations (hybrid dynamics,
    RBDA §9.2; ``kernels/hybrid.py``, which passes ``c`` with their S_k q̈_k added): the joint is articulated
    over its free coordinates only. Their rows of U and u are zero and their rows and columns of d are those of
    the identity, so U d⁻¹ has zero columns for them and the hand-over and pass 3 see the free coordinates
    alone. ``aba_kernel`` passes ``has_known = False`` (``known`` is then not read)."""
    for k in range(iv, iv + nvi):
        if has_known and known[k] != 0.0:
            for r in range(6):
                wd[k, D_U + r] = 0.0
            wd[k, D_u] = 0.0
            continue
        U = sym6_times(IA, i, wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5])
        store6(wd, k, D_U, U)
        wd[k, D_u] = tau[k] - (wd[k, 0] * pA[0] + wd[k, 1] * pA[1] + wd[k, 2] * pA[2] + wd[k, 3] * pA[3]
                               + wd[k, 4] * pA[4] + wd[k, 5] * pA[5])
    for k in range(nvi):
        S = load6(wd, iv + k, 0)     # read once: for all the compiler knows, a store to wd could change it
        for l in range(nvi):
            if has_known and (known[iv + k] != 0.0 or known[iv + l] != 0.0):
                wd[iv + k, D_DINV + l] = 1.0 if k == l else 0.0
                continue
            U = load6(wd, iv + l, D_U)
            s = 0.0 + S[0] * U[0] + S[1] * U[1] + S[2] * U[2] + S[3] * U[3] + S[4] * U[4] + S[5] * U[5]
            wd[iv + k, D_DINV + l] = s + armature(i, mf, k) if k == l else s
    invert_spd_inplace(wd, iv, D_DINV, nvi)
    # UD = U d⁻¹ (column k of UD in row iv + k)
    for k in range(nvi):
        store6(wd, iv + k, D_UD, weighted_rows(wd, iv, iv + nvi, D_U, D_DINV + k))
    if par > 0:
        IAc = sym6_times(IA, i, c[0], c[1], c[2], c[3], c[4], c[5])
        for k in range(6):
            wb[par, B_F + k] += pA[k] + IAc[k]
        for k in range(iv, iv + nvi):
            s = wd[k, D_u] - (wd[k, D_U] * c[0] + wd[k, D_U + 1] * c[1] + wd[k, D_U + 2] * c[2]
                              + wd[k, D_U + 3] * c[3] + wd[k, D_U + 4] * c[4] + wd[k, D_U + 5] * c[5])
            for r in range(6):
                wb[par, B_F + r] += wd[k, D_UD + r] * s
        e = 0
        for r in range(6):
            for cc in range(r, 6):
                s = IA[i, e]
                for k in range(iv, iv + nvi):
                    s -= wd[k, D_UD + r] * wd[k, D_U + cc]
                IA[par, e] += s
                e += 1


@njit(**COMPILED, inline=INLINE)
def articulated_pass1(mi, mf, q, v, fext, work):
    """Pass 1 of ABA (root -> leaves): the joint placements, v_i, c_i, the rigid IA_i and pA_i = v_i ×* I_i v_i
    − f_ext,i of every body into the workspace (RBDA Table 7.1), and the kinetic and gravitational energy of
    (q, v), a by-product (the numbers of ``energy.energy_kernel``), into ``work[W_KINETIC]``,
    ``work[W_POTENTIAL]``. Returns the views (wb, wd, IA) of ``work``. Shared by ``aba_kernel`` and
    ``hybrid.hybrid_kernel`` (inlined into them by numba, as it returns arrays)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    IA = wb[:, B_IA:B_IA + 21]
    set_ground(mf, work, wb, v.shape[0])
    has_fext = fext.shape[0] == n
    T = 0.0
    V = 0.0
    for i in range(1, n):
        par = mi[i, PARENT]
        joint_placement_world(i, mi, mf, q, wb, wd)
        vJ, cJ = joint_velocity_world(i, mi, v, wd)
        vp = load6(wb, par, B_V)
        vi = (vp[0] + vJ[0], vp[1] + vJ[1], vp[2] + vJ[2], vp[3] + vJ[3], vp[4] + vJ[4], vp[5] + vJ[5])
        store6(wb, i, B_V, vi)
        c = motion_cross_motion(vp[0], vp[1], vp[2], vp[3], vp[4], vp[5], vJ[0], vJ[1], vJ[2], vJ[3], vJ[4], vJ[5])
        store6(wb, i, B_C, (c[0] + cJ[0], c[1] + cJ[1], c[2] + cJ[2], c[3] + cJ[3], c[4] + cJ[4], c[5] + cJ[5]))
        m, h, I = body_inertia_world(i, mf, wb)
        store_rigid_inertia_sym6(IA, i, m, h, I)
        Iv = rigid_inertia_times_motion(m, h, I, vi[0], vi[1], vi[2], vi[3], vi[4], vi[5])
        dT, dV = body_energy(i, mf, wb, vi)
        T += dT + armature_energy(i, mi, mf, v)
        V += dV
        pA = force_cross_motion(vi[0], vi[1], vi[2], vi[3], vi[4], vi[5], Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5])
        if has_fext:
            store6(wb, i, B_F, (pA[0] - fext[i, 0], pA[1] - fext[i, 1], pA[2] - fext[i, 2],
                                pA[3] - fext[i, 3], pA[4] - fext[i, 4], pA[5] - fext[i, 5]))
        else:
            store6(wb, i, B_F, pA)
    work[W_KINETIC] = T
    work[W_POTENTIAL] = V
    return wb, wd, IA


# inlined by numba (into ``articulate_joint``), for the reason given there
@njit(**COMPILED, inline=INLINE)
def articulate_one_dof(i, par, iv, tau_i, arm, pA, c, IA, wb, wd):
    """Pass 2 of ABA for a joint of one free coordinate: U = IA S, d = Sᵀ U + a (a: its armature ``arm``),
    u = τ − Sᵀ pA into the workspace, and the hand-over IA_λ += IA − U Uᵀ/d, pA_λ += pA + Ia c + U u/d (RBDA
    Table 7.1)."""
    S = load6(wd, iv, 0)
    U = sym6_times(IA, i, S[0], S[1], S[2], S[3], S[4], S[5])
    d = (S[0] * U[0] + S[1] * U[1] + S[2] * U[2] + S[3] * U[3] + S[4] * U[4] + S[5] * U[5]) + arm
    dinv = 1.0 / d
    u = tau_i - (S[0] * pA[0] + S[1] * pA[1] + S[2] * pA[2] + S[3] * pA[3] + S[4] * pA[4] + S[5] * pA[5])
    store6(wd, iv, D_U, U)
    wd[iv, D_u] = u
    wd[iv, D_DINV] = dinv
    if par > 0:
        # pa = pA + Ia c + U d⁻¹ u  with  Ia c = IA c − U d⁻¹ Uᵀ c
        IAc = sym6_times(IA, i, c[0], c[1], c[2], c[3], c[4], c[5])
        s = (u - (U[0] * c[0] + U[1] * c[1] + U[2] * c[2] + U[3] * c[3] + U[4] * c[4] + U[5] * c[5])) * dinv
        for k in range(6):
            wb[par, B_F + k] += pA[k] + IAc[k] + U[k] * s
        sym6_add_rank1_update(IA, par, IA, i, dinv, U[0], U[1], U[2], U[3], U[4], U[5])


@helper
def hand_over_whole(i, par, pA, c, IA, wb):
    """Pass 2 for a joint without free coordinates — a Fixed joint, or (hybrid dynamics, RBDA §9.2) one whose
    accelerations are all known, ``c`` then holding c_i + S_i q̈_i: the body's whole articulated inertia goes to
    the parent, IA_λ += IA, pA_λ += pA + IA c."""
    if par > 0:
        IAc = sym6_times(IA, i, c[0], c[1], c[2], c[3], c[4], c[5])
        for k in range(6):
            wb[par, B_F + k] += pA[k] + IAc[k]
        for k in range(21):
            IA[par, k] += IA[i, k]


# inlined by numba rather than a helper: called from two kernels only, and as a helper of its own it would put
# its three branches' code once more through LLVM (half a second of the first aba; each compiled function is
# optimized and translated by LLVM with a copy of all it calls)
@njit(**COMPILED, inline=INLINE)
def articulate_joint(i, par, iv, nvi, tau, pA, c, IA, wb, wd, mf):
    """Pass 2 of ABA for the joint of body i, all of whose coordinates are free: by its number of coordinates,
    ``articulate_one_dof``, ``hand_over_whole`` (none) or ``articulate_multi_dof``."""
    if nvi == 1:
        articulate_one_dof(i, par, iv, tau[iv], armature(i, mf, 0), pA, c, IA, wb, wd)
    elif nvi == 0:
        hand_over_whole(i, par, pA, c, IA, wb)
    else:
        articulate_multi_dof(i, par, iv, nvi, tau, pA, c, IA, wb, wd, mf, tau, False)


@helper
def one_dof_acceleration(iv, wd, a0, a1, a2, a3, a4, a5):
    """Pass 3 of ABA for a joint of one free coordinate: q̈ = d⁻¹ (u − Uᵀ a') with a' = a_λ + c."""
    return wd[iv, D_DINV] * (wd[iv, D_u] - (wd[iv, D_U] * a0 + wd[iv, D_U + 1] * a1 + wd[iv, D_U + 2] * a2
                                            + wd[iv, D_U + 3] * a3 + wd[iv, D_U + 4] * a4 + wd[iv, D_U + 5] * a5))


@helper
def multi_dof_accelerations(iv, nvi, wd, qdd, known, has_known, a0, a1, a2, a3, a4, a5):
    """Pass 3 of ABA for a joint of several coordinates: q̈ = d⁻¹ u − (U d⁻¹)ᵀ a' into qdd[iv:iv + nvi]; with
    ``has_known``, the entries with ``known[k] != 0`` are left as they are (see ``articulate_multi_dof``)."""
    for k in range(iv, iv + nvi):
        if has_known and known[k] != 0.0:
            continue
        x = -(wd[k, D_UD] * a0 + wd[k, D_UD + 1] * a1 + wd[k, D_UD + 2] * a2 + wd[k, D_UD + 3] * a3
              + wd[k, D_UD + 4] * a4 + wd[k, D_UD + 5] * a5)
        for l in range(nvi):
            x += wd[k, D_DINV + l] * wd[iv + l, D_u]
        qdd[k] = x


@helper
def add_joint_motion(k0, k1, wd, qdd, a0, a1, a2, a3, a4, a5):
    """a + Σ_k S_k q̈_k over the coordinates k0 ≤ k < k1, as a 6-tuple."""
    for k in range(k0, k1):
        x = qdd[k]
        a0 += wd[k, 0] * x
        a1 += wd[k, 1] * x
        a2 += wd[k, 2] * x
        a3 += wd[k, 3] * x
        a4 += wd[k, 4] * x
        a5 += wd[k, 5] * x
    return a0, a1, a2, a3, a4, a5


@helper
def parent_acceleration_plus_bias(i, par, wb):
    """a' = a_λ + c_i (pass 3 of ABA), as a 6-tuple."""
    return (wb[par, B_A] + wb[i, B_C], wb[par, B_A + 1] + wb[i, B_C + 1], wb[par, B_A + 2] + wb[i, B_C + 2],
            wb[par, B_A + 3] + wb[i, B_C + 3], wb[par, B_A + 4] + wb[i, B_C + 4], wb[par, B_A + 5] + wb[i, B_C + 5])


@njit(**KERNEL)
def aba_kernel(mi, mf, q, v, tau, fext, work, qdd):
    """q̈ for (q, q̇ = v, τ) into ``qdd``. ``fext`` is (n, 6) — spatial forces [moment about the ground
    origin; force] on each body in ground coordinates — or (0, 6) for none. ``work`` is a flat workspace of
    ``kinematics.workspace_size(n, nv)`` floats (see ``multibody.model.data.Data``). Returns 0, or the position of
    the first argument whose size does not fit the model (``kinematics.check_sizes``; nothing is computed).
    The first pass also leaves the kinetic and gravitational energy of (q, v) in ``work[W_KINETIC]`` and
    ``work[W_POTENTIAL]`` (the numbers of ``energy.energy_kernel``): a fixed-step loop records them with its
    outputs at almost no cost (``formulations/tree.py``)."""
    err = check_sizes(mi, q, v, tau, fext, work, qdd)
    if err != 0:
        return err
    n = mi.shape[0]
    # ---- pass 1: velocities v, biases c, rigid-body IA and pA (and the energies, a by-product)
    wb, wd, IA = articulated_pass1(mi, mf, q, v, fext, work)
    # ---- pass 2: articulated-body inertias IA and bias forces pA
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        nvi = mi[i, NV]
        c = load6(wb, i, B_C)
        pA = load6(wb, i, B_F)
        articulate_joint(i, par, iv, nvi, tau, pA, c, IA, wb, wd, mf)
    # ---- pass 3: accelerations
    set_ground_acceleration(mf, wb)
    for i in range(1, n):
        iv = mi[i, IV]
        nvi = mi[i, NV]
        a0, a1, a2, a3, a4, a5 = parent_acceleration_plus_bias(i, mi[i, PARENT], wb)
        if nvi == 1:
            qdd[iv] = one_dof_acceleration(iv, wd, a0, a1, a2, a3, a4, a5)
        elif nvi > 1:
            multi_dof_accelerations(iv, nvi, wd, qdd, tau, False, a0, a1, a2, a3, a4, a5)
        store6(wb, i, B_A, add_joint_motion(iv, iv + nvi, wd, qdd, a0, a1, a2, a3, a4, a5))
    return 0


@njit(**COMPILED, nogil=True)
def aba_batch_kernel(mi, mf, Q, V, TAU, fext, base, QDD, lo, hi):
    """``aba_kernel`` for the rows lo ≤ b < hi of Q, V, TAU (leading batch axis) into QDD, with a workspace of its
    own (``base``: the base block, ``rnea.slice_workspace``). Compiled without the GIL: threads run slices of the
    rows at once (``kernels.threads.in_threads``)."""
    work = slice_workspace(mi, V.shape[1], base)
    for b in range(lo, hi):
        aba_kernel(mi, mf, Q[b], V[b], TAU[b], fext, work, QDD[b])
