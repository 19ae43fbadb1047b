"""Recursive Newton–Euler algorithm (inverse dynamics): τ = M(q) q̈ + C(q, q̇) q̇ + g(q) − Jᵀ f_ext.

Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), ch. 5 and Table 5.1, in the ground-frame ("world")
form; it is the inverse of the separate-bodies recursion of seed 001 §3.5: each body's
Newton–Euler equation (seed 001 eq. 3.172, M_n w_n = Q_n + R_n) is solved for the joint reaction, and the
joint torque is its projection on the motion subspace (seed 001 eq. 3.175, S_nᵀ R_n).

Pass 1 (root -> leaves): v_i = v_λ + S_i q̇_i,  a_i = a_λ + S_i q̈_i + c_i,
                         f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i           (gravity: a_0 = [0; −g])
With a prescribed motion of body 0 (seed 001 §3.1–3.2, ``kinematics.set_ground``) v_0 and a_0 are its spatial
velocity and acceleration, a_0 = a_base − [0; g]: the base-acceleration terms of eqs. 3.26–3.30.
Pass 2 (leaves -> root): τ_i = S_iᵀ f_i + a_i q̈_i,  f_λ += f_i      (a_i: the armature, ``kinematics.armature``)
"""
import numpy as np
from numba import njit

from multibody.kernels.kinematics import (B_A, B_F, B_IA, B_V, BASE_WIDTH, IV, NV, PARENT, WB_WIDTH, WD_WIDTH, armature,
                                          body_inertia_world, check_sizes, joint_placement_world,
                                          joint_velocity_world, set_ground, set_ground_acceleration, workspace_views)
from multibody.kernels.spatial import (COMPILED, KERNEL, force_cross_motion, helper, load6, motion_cross_motion,
                                       rigid_inertia_times_motion, store6, store_rigid_inertia)


@njit(**KERNEL)
def rnea_kernel(mi, mf, q, v, a, fext, work, tau):
    """τ for (q, q̇ = v, q̈ = a) into ``tau``. ``fext`` is (n, 6) — spatial forces [moment about the ground
    origin; force] on each body in ground coordinates — or (0, 6) for none. Returns 0, or the position of the
    first argument whose size does not fit the model (``kinematics.check_sizes``; nothing is computed)."""
    return newton_euler(mi, mf, q, v, a, fext, work, tau, False)


@helper
def newton_euler(mi, mf, q, v, a, fext, work, tau, keep_inertias):
    """:func:`rnea_kernel`; with ``keep_inertias`` (a constant of the caller) each body's inertia in ground
    coordinates, which pass 1 computes, is left in the workspace's ``B_IA`` columns for the composite inertias of
    CRBA (``crba.bias_and_mass_matrix``)."""
    err = check_sizes(mi, q, v, a, fext, work, tau)
    if err != 0:
        return err
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    set_ground(mf, work, wb, v.shape[0])
    set_ground_acceleration(mf, wb)
    has_fext = fext.shape[0] == n
    # ---- pass 1: velocities, accelerations, body forces
    for i in range(1, n):
        par = mi[i, PARENT]
        iv = mi[i, IV]
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
        for k in range(iv, iv + mi[i, NV]):
            ak = a[k]
            a0 += wd[k, 0] * ak
            a1 += wd[k, 1] * ak
            a2 += wd[k, 2] * ak
            a3 += wd[k, 3] * ak
            a4 += wd[k, 4] * ak
            a5 += wd[k, 5] * ak
        vi = (vp[0] + vJ[0], vp[1] + vJ[1], vp[2] + vJ[2], vp[3] + vJ[3], vp[4] + vJ[4], vp[5] + vJ[5])
        store6(wb, i, B_V, vi)
        store6(wb, i, B_A, (a0, a1, a2, a3, a4, a5))
        m, h, I = body_inertia_world(i, mf, wb)
        if keep_inertias:
            store_rigid_inertia(wb, i, B_IA, m, h, I)
        Iv = rigid_inertia_times_motion(m, h, I, vi[0], vi[1], vi[2], vi[3], vi[4], vi[5])
        Ia = rigid_inertia_times_motion(m, h, I, a0, a1, a2, a3, a4, a5)
        g = force_cross_motion(vi[0], vi[1], vi[2], vi[3], vi[4], vi[5], Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5])
        if has_fext:
            store6(wb, i, B_F, (Ia[0] + g[0] - fext[i, 0], Ia[1] + g[1] - fext[i, 1], Ia[2] + g[2] - fext[i, 2],
                                Ia[3] + g[3] - fext[i, 3], Ia[4] + g[4] - fext[i, 4], Ia[5] + g[5] - fext[i, 5]))
        else:
            store6(wb, i, B_F, (Ia[0] + g[0], Ia[1] + g[1], Ia[2] + g[2], Ia[3] + g[3], Ia[4] + g[4], Ia[5] + g[5]))
    # ---- pass 2: joint forces
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        f = load6(wb, i, B_F)
        iv = mi[i, IV]
        for k in range(iv, iv + mi[i, NV]):
            tau[k] = (wd[k, 0] * f[0] + wd[k, 1] * f[1] + wd[k, 2] * f[2] + wd[k, 3] * f[3] + wd[k, 4] * f[4]
                      + wd[k, 5] * f[5]) + armature(i, mf, k - iv) * a[k]
        if par > 0:
            for k in range(6):
                wb[par, B_F + k] += f[k]
    return 0


@njit(**KERNEL)
def workspace_len(n, nv):
    """``kinematics.workspace_size`` in compiled code."""
    return n * WB_WIDTH + nv * WD_WIDTH + BASE_WIDTH


@njit(**COMPILED)
def slice_workspace(mi, nv, base):
    """A workspace of ``workspace_len`` floats for a slice of the rows of a batch, with the base block ``base``
    (``kinematics.BASE_WIDTH`` floats; read only when the base moves)."""
    work = np.empty(workspace_len(mi.shape[0], nv))
    o = work.shape[0] - BASE_WIDTH
    for k in range(BASE_WIDTH):
        work[o + k] = base[k]
    return work


@njit(**COMPILED, nogil=True)
def rnea_batch_kernel(mi, mf, Q, V, A, fext, base, TAU, lo, hi):
    """``rnea_kernel`` for the rows lo ≤ b < hi of Q, V, A (leading batch axis) into TAU, with a workspace of its
    own (``base``: the base block, :func:`slice_workspace`). Compiled without the GIL: threads run slices of the
    rows at once (``kernels.threads.in_threads``)."""
    work = slice_workspace(mi, V.shape[1], base)
    for b in range(lo, hi):
        rnea_kernel(mi, mf, Q[b], V[b], A[b], fext, work, TAU[b])
