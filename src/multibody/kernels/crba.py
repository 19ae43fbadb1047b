"""Composite-rigid-body algorithm: the joint-space mass matrix M(q).

Featherstone, *Rigid Body Dynamics Algorithms* (RBDA), ch. 6 and Table 6.2, in the ground-frame form: the
composite inertia of the subtree of body i is I^c_i = I_i + Σ_children I^c_j (a plain sum, since all
inertias are about the ground origin in ground coordinates; a sum of rigid-body inertias is one, so it is kept
as (mass, first moment, rotational inertia)), F = I^c_i S_i, and M_ji = S_jᵀ F for j = i and every ancestor
of i. M is the matrix A of seed 001 eq. 3.167 (A q̈ = B for trees with general joints, §3.4.4), and
T = ½ q̇ᵀ M q̇. The armature of each coordinate (``kinematics.armature``) is added to its diagonal entry.
"""
from numba import njit

from multibody.kernels.kinematics import (B_IA, IQ, IV, NQ, NV, PARENT, armature, body_inertia_world, joint_placement_world,
                                          set_ground, strided, workspace_views)
from multibody.kernels.rnea import newton_euler, workspace_len
from multibody.kernels.spatial import KERNEL, helper, load_rigid_inertia, rigid_inertia_times_motion, store_rigid_inertia


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
    # ---- pass 1: placements, motion subspaces, the bodies' inertias in ground coordinates
    for i in range(1, n):
        joint_placement_world(i, mi, mf, q, wb, wd)
        m, h, I = body_inertia_world(i, mf, wb)
        store_rigid_inertia(wb, i, B_IA, m, h, I)
    for r in range(nv):
        for c in range(nv):
            M[r, c] = 0.0
    composite_columns(mi, mf, wb, wd, M)
    return 0


@njit(**KERNEL)
def bias_and_mass_matrix(mi, mf, q, v, zero, fext, work, bias, M):
    """RNEA's τ at q̈ = 0 (``zero``: nv zeros) into ``bias`` — C(q, q̇) q̇ + g(q) − Jᵀ f_ext — and M(q) into ``M``
    from that pass's kinematics and the bodies' inertias in ground coordinates, which it leaves in the workspace
    (``rnea.newton_euler``): the time-stepping step, which needs both (``contact/stepping_solver.py``). Only the
    entries of M on the tree's paths are written (:func:`composite_columns`): the others, zero in a tree, keep what
    ``M`` held (the step's M, zeros from its allocation; its factor reads the paths alone). Returns RNEA's 0 or the
    position of a bad argument (``kinematics.check_sizes``; nothing computed then)."""
    err = newton_euler(mi, mf, q, v, zero, fext, work, bias, True)
    if err == 0:
        wb, wd = workspace_views(work, mi.shape[0], M.shape[0])
        composite_columns(mi, mf, wb, wd, M)
    return err


@helper
def composite_columns(mi, mf, wb, wd, M):
    """From the leaves, the composite inertias (summed into the bodies' inertias in ground coordinates in the
    columns ``B_IA`` of ``wb``) and the entries of M on the tree's paths (M[l, k] and M[k, l] for l = k and every
    coordinate before k on its path); the others are not written."""
    n = mi.shape[0]
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
