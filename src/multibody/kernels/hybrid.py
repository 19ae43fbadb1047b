"""Hybrid dynamics: the accelerations of the free coordinates and the forces of the prescribed ones, in O(N).

Seed 001 §3.3.1 (reference seed001-part2.md §7) drives some coordinates φ_k(t) — motors make them known
functions of time — and asks for the other accelerations and for the drive torques. The book partitions the
equations A φ̈ = B (eq. 3.92, the drive torque M_k^m entering row k) into the reduced system of the free
coordinates, A' φ̈' = B' − η φ̈_k(t) (eq. 3.94), and the drive torque M_k^m = B*_k − A_k φ̈ (eq. 3.93): a dense
solve of size n − 1. This kernel gets the same numbers in O(N) with the hybrid articulated-body algorithm of
Featherstone's *Rigid Body Dynamics Algorithms* (RBDA) §9.2, the three passes of ``aba.py`` in which a joint
with known accelerations is not articulated:

Pass 1 (root -> leaves):  as in ABA (``aba.articulated_pass1``).
Pass 2 (leaves -> root):  a free joint as in ABA; a joint whose accelerations q̈_i are known hands its whole
                          articulated inertia to the parent:  IA_λ += IA_i,  pA_λ += pA_i + IA_i (c_i + S_i q̈_i);
                          a joint with some coordinates known is articulated over the free ones, with
                          c_i + S_K q̈_K in place of c_i (``aba.articulate_multi_dof``).
Pass 3 (root -> leaves):  a' = a_λ + c_i + S_K q̈_K,  q̈_F = d⁻¹ (u − Uᵀ a') for the free coordinates,
                          a_i = a' + S_F q̈_F,   and for the known ones  τ_K = S_Kᵀ (IA_i a_i + pA_i).

τ_K is the whole generalized force the known coordinates need (the row of M q̈ + C q̇ + g − Jᵀ f_ext); the
kernel returns it minus the given τ_K (the forces already applied there: springs, efforts), i.e. the drive
force of eq. 3.93 with the sign of a generalized force (positive: positive work on q̇_K).
"""
from numba import njit

from multibody.kernels.aba import (add_joint_motion, articulate_joint, articulate_multi_dof, articulated_pass1,
                                   hand_over_whole, multi_dof_accelerations, one_dof_acceleration,
                                   parent_acceleration_plus_bias)
from multibody.kernels.kinematics import (B_A, B_C, B_F, IV, NV, PARENT, armature, check_sizes,
                                          set_ground_acceleration, strided)
from multibody.kernels.spatial import KERNEL, load6, store6, sym6_times

#: error codes of ``hybrid_kernel`` beyond those of ``kinematics.check_sizes``
ERR_KNOWN = 8
ERR_FORCE = 9


@njit(**KERNEL)
def hybrid_kernel(mi, mf, q, v, tau, known, fext, work, qdd, force):
    """Hybrid dynamics at (q, q̇ = v): ``known`` (nv floats, nonzero = the coordinate's acceleration is known)
    marks the prescribed velocity coordinates, whose accelerations ``qdd`` holds on entry; on return ``qdd``
    holds every acceleration (the free ones computed, the known ones as given) and ``force[k]`` the generalized
    force the known coordinate k needs besides ``tau[k]`` (0 for the free ones), so that
    M q̈ + C q̇ + g − Jᵀ f_ext = τ + force. ``tau`` of the free coordinates is applied as in ``aba_kernel``.

    Returns 0, or the code of the first bad argument (``kinematics.check_sizes``; 8: ``known``, 9: ``force``
    not of nv entries or ``qdd`` strided); nothing is computed then. Leaves the energies in ``work`` as
    ``aba_kernel`` does. (Seed 001 §3.3.1, eqs. 3.92–3.94; RBDA §9.2; see the module docstring.)"""
    err = check_sizes(mi, q, v, tau, fext, work, qdd)
    if err != 0:
        return err
    nv = v.shape[0]
    if known.shape[0] != nv or strided(known):
        return ERR_KNOWN
    if force.shape[0] != nv or strided(qdd):
        return ERR_FORCE
    n = mi.shape[0]
    # ---- pass 1: as in ABA
    wb, wd, IA = articulated_pass1(mi, mf, q, v, fext, work)
    # ---- pass 2: articulated inertias; a known coordinate is not articulated
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        nvi = mi[i, NV]
        nk = 0
        for k in range(iv, iv + nvi):
            if known[k] != 0.0:
                nk += 1
        c = load6(wb, i, B_C)
        pA = load6(wb, i, B_F)
        if nk == 0:
            articulate_joint(i, par, iv, nvi, tau, pA, c, IA, wb, wd, mf)
            continue
        # c + S_K q̈_K: the known accelerations act as a bias of the joint
        ck = c
        for k in range(iv, iv + nvi):
            if known[k] != 0.0:
                ck = add_joint_motion(k, k + 1, wd, qdd, ck[0], ck[1], ck[2], ck[3], ck[4], ck[5])
        if nk == nvi:
            hand_over_whole(i, par, pA, ck, IA, wb)
        else:
            articulate_multi_dof(i, par, iv, nvi, tau, pA, ck, IA, wb, wd, mf, known, True)
    # ---- pass 3: accelerations of the free coordinates, forces of the known ones
    set_ground_acceleration(mf, wb)
    for i in range(1, n):
        iv = mi[i, IV]
        nvi = mi[i, NV]
        a0, a1, a2, a3, a4, a5 = parent_acceleration_plus_bias(i, mi[i, PARENT], wb)
        nk = 0
        for k in range(iv, iv + nvi):
            force[k] = 0.0
            if known[k] != 0.0:
                nk += 1
                a0, a1, a2, a3, a4, a5 = add_joint_motion(k, k + 1, wd, qdd, a0, a1, a2, a3, a4, a5)
        if nk == nvi:  # every coordinate known (or none at all): a = a' already
            pass
        elif nvi == 1:
            qdd[iv] = one_dof_acceleration(iv, wd, a0, a1, a2, a3, a4, a5)
            a0, a1, a2, a3, a4, a5 = add_joint_motion(iv, iv + 1, wd, qdd, a0, a1, a2, a3, a4, a5)
        else:
            multi_dof_accelerations(iv, nvi, wd, qdd, known, True, a0, a1, a2, a3, a4, a5)
            for k in range(iv, iv + nvi):
                if known[k] == 0.0:
                    a0, a1, a2, a3, a4, a5 = add_joint_motion(k, k + 1, wd, qdd, a0, a1, a2, a3, a4, a5)
        store6(wb, i, B_A, (a0, a1, a2, a3, a4, a5))
        if nk > 0:
            # τ_K = S_Kᵀ (IA_i a_i + pA_i) + A_K q̈_K, IA_i and pA_i the articulated quantities of pass 2, A_K the
            # armatures
            f = sym6_times(IA, i, a0, a1, a2, a3, a4, a5)
            for k in range(iv, iv + nvi):
                if known[k] != 0.0:
                    s = 0.0
                    for r in range(6):
                        s += wd[k, r] * (f[r] + wb[i, B_F + r])
                    force[k] = (s + armature(i, mf, k - iv) * qdd[k]) - tau[k]
    return 0
