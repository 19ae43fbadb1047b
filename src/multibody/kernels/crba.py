"""Composite-rigid-body algorithm: the joint-space mass matrix M(q).

Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), ch. 6 and Table 6.2, in the ground-frame form: the
composite inertia of the subtree of body i is I^c_i = I_i + Σ_children I^c_j (a plain sum, since all
inertias are about the ground origin in ground coordinates; a sum of rigid-body inertias is one, so it is kept
as (mass, first moment, rotational inertia)), F = I^c_i S_i, and M_ji = S_jᵀ F for j = i and every ancestor
of i. M is the matrix A of seed 001 eq. 3.167 (A q̈ = B for trees with general joints, §3.4.4), and
T = ½ q̇ᵀ M q̇. The armature of each coordinate (``kinematics.armature``) is added to its diagonal entry.
"""
from numba import njit

from multibody.kernels.kinematics import (B_A, B_F, B_IA, B_V, IQ, IV, NQ, NV, PARENT, armature, body_inertia_world,
                                          joint_placement_world, joint_velocity_world, set_ground,
                                          set_ground_acceleration, strided, workspace_views)
from multibody.kernels.rnea import workspace_len
from multibody.kernels.spatial import (KERNEL, force_cross_motion, load6, load_rigid_inertia, motion_cross_motion,
                                       rigid_inertia_times_motion, store6, store_rigid_inertia)


@njit(**KERNEL)
def crba_kernel(mi, mf, q, work, M):
    """M(q) into the (nv, nv) array ``M``. Returns 0, or 1 when q, 5 when ``work``, 6 when M does not fit
    the model, 7 when q is not contiguous (``kinematics.check_sizes``; nothing is computed)."""
    n = mi.shape[0]
    nv = M.shape[0]
    if q.shape[0] != mi[n - 1, IQ] + mi[n - 1, NQ]:
        return 1
    if work.shape[0] < workspace_len(n, nv):
        return 5
    if nv != mi[n - 1, IV] + mi[n - 1, NV] or M.shape[1] != nv:
        return 6
    if strided(q):
        return 7
    wb, wd = workspace_views(work, n, nv)
    set_ground(mf, work, wb, nv)
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    # ---- pass 1: placements, motion subspaces, body inertias
    for i in range(1, n):
        joint_placement_world(i, mi, mf, q, wb, wd)
        m, h, I = body_inertia_world(i, mf, wb)
        store_rigid_inertia(wb, i, B_IA, m, h, I)
    # ---- pass 2: composite inertias and the columns of M
    for i in range(n - 1, 0, -1):
        m, h, I = load_rigid_inertia(wb, i, B_IA)
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            F = rigid_inertia_times_motion(m, h, I, wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5])
            j = i
            while j > 0:
                for l in range(mi[j, IV], mi[j, IV] + mi[j, NV]):
                    x = (wd[l, 0] * F[0] + wd[l, 1] * F[1] + wd[l, 2] * F[2] + wd[l, 3] * F[3]
                         + wd[l, 4] * F[4] + wd[l, 5] * F[5])
                    M[l, k] = x
                    M[k, l] = x
                j = mi[j, PARENT]
            M[k, k] += armature(i, mf, k - mi[i, IV])
        par = mi[i, PARENT]
        if par > 0:
            for c in range(B_IA, B_IA + 10):
                wb[par, c] += wb[i, c]
    return 0


@njit(**KERNEL)
def crba_bias_kernel(mi, mf, q, v, work, M, C):
    """M(q) into ``M`` and the bias forces C(q, q̇) q̇ + g(q) (``rnea.rnea_kernel`` at q̈ = 0, no external forces)
    into ``C``, in the same two passes over the bodies: one pass of kinematics for both (placements, motion
    subspaces, velocities, the bias accelerations a_i = a_λ + c_i with a_0 = [0; −g], the body forces
    f_i = I_i a_i + v_i ×* I_i v_i), then from the leaves C_i = S_iᵀ f_i with f_λ += f_i beside the composite
    inertias and the columns of M (RBDA Tables 5.1 and 6.2). What ``M⁻¹ (τ − C)``, the free accelerations of a
    time step, needs when M is factored anyway. The sizes are the caller's to check."""
    n = mi.shape[0]
    nv = M.shape[0]
    wb, wd = workspace_views(work, n, nv)
    set_ground(mf, work, wb, nv)
    set_ground_acceleration(mf, wb)
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    # ---- pass 1: placements, velocities, bias accelerations, body inertias and forces
    for i in range(1, n):
        par = mi[i, PARENT]
        joint_placement_world(i, mi, mf, q, wb, wd)
        vJ, cJ = joint_velocity_world(i, mi, v, wd)
        vp = load6(wb, par, B_V)
        c = motion_cross_motion(vp[0], vp[1], vp[2], vp[3], vp[4], vp[5], vJ[0], vJ[1], vJ[2], vJ[3], vJ[4], vJ[5])
        a0 = wb[par, B_A] + c[0] + cJ[0]
        a1 = wb[par, B_A + 1] + c[1] + cJ[1]
        a2 = wb[par, B_A + 2] + c[2] + cJ[2]
        a3 = wb[par, B_A + 3] + c[3] + cJ[3]
        a4 = wb[par, B_A + 4] + c[4] + cJ[4]
        a5 = wb[par, B_A + 5] + c[5] + cJ[5]
        vi = (vp[0] + vJ[0], vp[1] + vJ[1], vp[2] + vJ[2], vp[3] + vJ[3], vp[4] + vJ[4], vp[5] + vJ[5])
        store6(wb, i, B_V, vi)
        store6(wb, i, B_A, (a0, a1, a2, a3, a4, a5))
        m, h, I = body_inertia_world(i, mf, wb)
        store_rigid_inertia(wb, i, B_IA, m, h, I)
        Iv = rigid_inertia_times_motion(m, h, I, vi[0], vi[1], vi[2], vi[3], vi[4], vi[5])
        Ia = rigid_inertia_times_motion(m, h, I, a0, a1, a2, a3, a4, a5)
        g = force_cross_motion(vi[0], vi[1], vi[2], vi[3], vi[4], vi[5], Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5])
        store6(wb, i, B_F, (Ia[0] + g[0], Ia[1] + g[1], Ia[2] + g[2], Ia[3] + g[3], Ia[4] + g[4], Ia[5] + g[5]))
    # ---- pass 2: joint forces, composite inertias and the columns of M
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        f = load6(wb, i, B_F)
        m, h, I = load_rigid_inertia(wb, i, B_IA)
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            C[k] = (wd[k, 0] * f[0] + wd[k, 1] * f[1] + wd[k, 2] * f[2] + wd[k, 3] * f[3] + wd[k, 4] * f[4]
                    + wd[k, 5] * f[5])
            F = rigid_inertia_times_motion(m, h, I, wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5])
            j = i
            while j > 0:
                for l in range(mi[j, IV], mi[j, IV] + mi[j, NV]):
                    x = (wd[l, 0] * F[0] + wd[l, 1] * F[1] + wd[l, 2] * F[2] + wd[l, 3] * F[3]
                         + wd[l, 4] * F[4] + wd[l, 5] * F[5])
                    M[l, k] = x
                    M[k, l] = x
                j = mi[j, PARENT]
            M[k, k] += armature(i, mf, k - mi[i, IV])
        if par > 0:
            for k in range(6):
                wb[par, B_F + k] += f[k]
            for c in range(B_IA, B_IA + 10):
                wb[par, c] += wb[i, c]
