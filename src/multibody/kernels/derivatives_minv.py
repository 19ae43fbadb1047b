"""M(q)⁻¹ in O(N²) by the articulated-body recursion, without forming M.

Column c of M⁻¹ is the q̈ of ABA (RBDA Table 7.1) for τ = e_c, with q̇ = 0 and no gravity; running the passes
for all columns at once (J. Carpentier, "Analytical inverse of the joint space inertia matrix", 2018; Pinocchio's
``computeMinverse``) costs O(N²) when each column is carried only where it is not zero. In the ground frame
(``kernels/aba.py``), with U, D⁻¹ from ABA's articulation of the bodies (they depend on q alone):

backward, leaves -> root: the bias force pA[:, c] of a column is zero below its joint; at joint i, for the
  columns c of its subtree, u_i[c] = δ_ic − S_iᵀ pA_i[:, c], M⁻¹[i, c] ← D_i⁻¹ u_i[c] (provisional), and the
  parent's pA[:, c] = pA_i[:, c] + U_i M⁻¹[i, c]. Sibling subtrees own disjoint columns, so one 6 x nv array
  ``F`` holds every column's pA at the body its column has reached (its columns in depth-first order, where a
  subtree is a contiguous range: ``subtree_tables``).
forward, root -> leaves: the acceleration P_i[:, c] of body i for τ = e_c; M⁻¹[i, c] −= (U_i D_i⁻¹)ᵀ P_λ[:, c] and
  P_i[:, c] = P_λ[:, c] + S_i M⁻¹[i, c], for the columns c ≥ idx_v(i) only (the upper triangle; a parent's
  columns come first in the regular numbering). Then M⁻¹ is made symmetric.
"""
import numpy as np
from numba import njit

from multibody.kernels.aba import articulate_joint
from multibody.kernels.blas import MATMUL_SCRATCH
from multibody.kernels.derivatives import DB_WIDTH, DD_DFQ, DD_WIDTH, check_configuration_sizes
from multibody.kernels.kinematics import (B_IA, D_DINV, D_U, D_UD, IV, NV, PARENT, body_inertia_world,
                                          joint_placement_world, set_ground, workspace_views)
from multibody.kernels.spatial import INLINE, KERNEL, helper, load6, store_rigid_inertia_sym6

@njit(**KERNEL)
def derivative_workspace_size(n, nv):
    """Floats of the derivative workspace of a tree of n bodies (ground included) and nv coordinates: the per-body
    and per-coordinate rows of ``kernels/derivatives.py``, then F (6 x nv) and P (n x 6 x nv) of the M⁻¹
    recursion, two nv x nv scratch matrices, three nv scratch vectors and the scratch of ``blas.matmul``."""
    return n * DB_WIDTH + nv * DD_WIDTH + 6 * nv + n * 6 * nv + 2 * nv * nv + 3 * nv + MATMUL_SCRATCH


def subtree_tables(parent, idx_v, nv_j):
    """The integer tables of the derivative kernels (int64, one array): per body its first position in the
    depth-first (preorder) order of the coordinates and the number of coordinates in its subtree, its joint's
    included; the coordinate at each position; the body of each coordinate; and nv + nv scratch entries."""
    n = len(parent)
    nv = int(np.sum(nv_j[1:])) if n > 1 else 0
    children = [[] for _ in range(n)]
    for i in range(1, n):
        children[int(parent[i])].append(i)
    start = np.zeros(n, dtype=np.int64)
    sub = np.array(nv_j, dtype=np.int64).copy()
    sub[0] = 0
    for i in range(n - 1, 0, -1):
        if parent[i] > 0:
            sub[int(parent[i])] += sub[i]
    coord = np.zeros(nv, dtype=np.int64)
    body = np.zeros(nv, dtype=np.int64)
    pos = 0
    stack = list(reversed(children[0]))
    while stack:
        i = stack.pop()
        start[i] = pos
        for k in range(int(nv_j[i])):
            coord[pos] = int(idx_v[i]) + k
            body[int(idx_v[i]) + k] = i
            pos += 1
        stack.extend(reversed(children[i]))
    return np.concatenate([start, sub, coord, body, np.zeros(2 * nv, dtype=np.int64)])


@njit(inline=INLINE, cache=True)
def minv_views(dwork, n, nv):
    """F (6, nv) and P (n, 6, nv) of the derivative workspace."""
    o = n * DB_WIDTH + nv * DD_WIDTH
    F = dwork[o:o + 6 * nv].reshape((6, nv))
    P = dwork[o + 6 * nv:o + 6 * nv + n * 6 * nv].reshape((n, 6, nv))
    return F, P


@njit(inline=INLINE, cache=True)
def scratch_views(dwork, n, nv):
    """The two nv x nv scratch matrices, the three nv scratch vectors and the ``blas.matmul`` scratch of the
    derivative workspace."""
    o = n * DB_WIDTH + nv * DD_WIDTH + 6 * nv + n * 6 * nv
    A = dwork[o:o + nv * nv].reshape((nv, nv))
    B = dwork[o + nv * nv:o + 2 * nv * nv].reshape((nv, nv))
    o += 2 * nv * nv
    return (A, B, dwork[o:o + nv], dwork[o + nv:o + 2 * nv], dwork[o + 2 * nv:o + 3 * nv],
            dwork[o + 3 * nv:o + 3 * nv + MATMUL_SCRATCH])


@helper
def _one_dof_forward(i, par, k, nv, keep, wd, Minv, P):
    """The forward pass of M⁻¹ for a joint of one coordinate k: M⁻¹[k, c] −= (U d⁻¹)ᵀ P_λ[:, c] and, ``keep``,
    P_i[:, c] = P_λ[:, c] + S M⁻¹[k, c], for c ≥ k, in one sweep along the rows (module docstring)."""
    d = wd[k, D_DINV]
    u0 = wd[k, D_U] * d
    u1 = wd[k, D_U + 1] * d
    u2 = wd[k, D_U + 2] * d
    u3 = wd[k, D_U + 3] * d
    u4 = wd[k, D_U + 4] * d
    u5 = wd[k, D_U + 5] * d
    S = load6(wd, k, 0)
    if par > 0:
        for c in range(k, nv):
            p0 = P[par, 0, c]
            p1 = P[par, 1, c]
            p2 = P[par, 2, c]
            p3 = P[par, 3, c]
            p4 = P[par, 4, c]
            p5 = P[par, 5, c]
            x = Minv[k, c] - (u0 * p0 + u1 * p1 + u2 * p2 + u3 * p3 + u4 * p4 + u5 * p5)
            Minv[k, c] = x
            if keep:
                P[i, 0, c] = p0 + S[0] * x
                P[i, 1, c] = p1 + S[1] * x
                P[i, 2, c] = p2 + S[2] * x
                P[i, 3, c] = p3 + S[3] * x
                P[i, 4, c] = p4 + S[4] * x
                P[i, 5, c] = p5 + S[5] * x
    elif keep:
        for c in range(k, nv):
            x = Minv[k, c]
            P[i, 0, c] = S[0] * x
            P[i, 1, c] = S[1] * x
            P[i, 2, c] = S[2] * x
            P[i, 3, c] = S[3] * x
            P[i, 4, c] = S[4] * x
            P[i, 5, c] = S[5] * x


@helper(inline=False)
def _multi_dof_forward(i, par, iv, nvi, nv, keep, wd, Minv, P):
    """:func:`_one_dof_forward` for a joint of several coordinates (U d⁻¹ in its rows of ``wd``)."""
    if par > 0:
        for k in range(iv, iv + nvi):
            UD = load6(wd, k, D_UD)
            for c in range(iv, nv):
                Minv[k, c] -= (UD[0] * P[par, 0, c] + UD[1] * P[par, 1, c] + UD[2] * P[par, 2, c]
                               + UD[3] * P[par, 3, c] + UD[4] * P[par, 4, c] + UD[5] * P[par, 5, c])
    if keep:
        for c in range(iv, nv):
            for r in range(6):
                x = P[par, r, c] if par > 0 else 0.0
                for k in range(iv, iv + nvi):
                    x += wd[k, r] * Minv[k, c]
                P[i, r, c] = x


@njit(**KERNEL)
def minv_passes(mi, work, dwork, dint, Minv):
    """M⁻¹ into ``Minv`` (nv, nv) from the articulation of the bodies that ``aba_kernel`` left in ``work`` (S, U,
    D⁻¹, U D⁻¹ of every coordinate; module docstring). ``dint``: ``subtree_tables``."""
    n = mi.shape[0]
    nv = Minv.shape[0]
    wb, wd = workspace_views(work, n, nv)
    F, P = minv_views(dwork, n, nv)
    dd = dwork[n * DB_WIDTH:n * DB_WIDTH + nv * DD_WIDTH].reshape((nv, DD_WIDTH))
    start = dint[:n]
    sub = dint[n:2 * n]
    coord = dint[2 * n:2 * n + nv]
    for r in range(nv):
        for c in range(r, nv):
            Minv[r, c] = 0.0
    # ---- backward: provisional rows over each subtree, the bias forces F of the columns
    for i in range(n - 1, 0, -1):
        iv = mi[i, IV]
        nvi = mi[i, NV]
        if nvi == 0:
            continue
        s0 = start[i]
        s1 = s0 + sub[i]
        if nvi == 1:
            S = load6(wd, iv, 0)
            U = load6(wd, iv, D_U)
            dinv = wd[iv, D_DINV]
            Minv[iv, iv] = dinv
            for p in range(s0 + 1, s1):
                x = -dinv * (S[0] * F[0, p] + S[1] * F[1, p] + S[2] * F[2, p] + S[3] * F[3, p] + S[4] * F[4, p]
                             + S[5] * F[5, p])
                Minv[iv, coord[p]] = x
                for r in range(6):
                    F[r, p] += U[r] * x
            for r in range(6):
                F[r, s0] = U[r] * dinv
        else:
            # S D⁻¹ (column k in row iv + k of dd, columns DD_DFQ..)
            for k in range(nvi):
                for r in range(6):
                    s = 0.0
                    for l in range(nvi):
                        s += wd[iv + l, r] * wd[iv + l, D_DINV + k]
                    dd[iv + k, DD_DFQ + r] = s
                for l in range(nvi):
                    Minv[iv + k, iv + l] = wd[iv + k, D_DINV + l]
            for p in range(s0 + nvi, s1):
                c = coord[p]
                for k in range(iv, iv + nvi):
                    Minv[k, c] = -(dd[k, DD_DFQ] * F[0, p] + dd[k, DD_DFQ + 1] * F[1, p] + dd[k, DD_DFQ + 2] * F[2, p]
                                   + dd[k, DD_DFQ + 3] * F[3, p] + dd[k, DD_DFQ + 4] * F[4, p]
                                   + dd[k, DD_DFQ + 5] * F[5, p])
                for k in range(iv, iv + nvi):
                    x = Minv[k, c]
                    for r in range(6):
                        F[r, p] += wd[k, D_U + r] * x
            for k in range(nvi):
                for r in range(6):
                    F[r, s0 + k] = wd[iv + k, D_UD + r]
    # ---- forward: the accelerations P of the columns, the rows of the upper triangle
    for i in range(1, n):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        nvi = mi[i, NV]
        keep = sub[i] > nvi   # the subtree has more coordinates: its bodies read P_i
        if nvi == 1:
            _one_dof_forward(i, par, iv, nv, keep, wd, Minv, P)
        elif nvi > 1:
            _multi_dof_forward(i, par, iv, nvi, nv, keep, wd, Minv, P)
        elif keep:   # a Fixed joint: the body moves with its parent
            for r in range(6):
                for c in range(iv, nv):
                    P[i, r, c] = P[par, r, c] if par > 0 else 0.0
    for r in range(nv):
        for c in range(r + 1, nv):
            Minv[c, r] = Minv[r, c]


@njit(**KERNEL)
def articulate(mi, mf, q, zeros, work):
    """ABA's articulation of the bodies at q alone (RBDA Table 7.1, passes 1 and 2 without the velocity terms,
    which M⁻¹ does not need): the placements, S, the rigid and then articulated inertias, U, D⁻¹ and U D⁻¹ of every
    coordinate into ``work``. ``zeros``: nv zeros (τ)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, zeros.shape[0])
    IA = wb[:, B_IA:B_IA + 21]
    set_ground(mf, work, wb, zeros.shape[0])
    for i in range(1, n):
        joint_placement_world(i, mi, mf, q, wb, wd)
        m, h, I = body_inertia_world(i, mf, wb)
        store_rigid_inertia_sym6(IA, i, m, h, I)
    z = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(n - 1, 0, -1):
        articulate_joint(i, mi[i, PARENT], mi[i, IV], mi[i, NV], zeros, z, z, IA, wb, wd, mf)


@njit(**KERNEL)
def minv_kernel(mi, mf, q, work, dwork, dint, Minv):
    """M(q)⁻¹ into ``Minv`` (nv, nv): the articulation of the bodies at q (:func:`articulate`), then
    :func:`minv_passes`. Returns 0 or the position of the first argument that does not fit (``dint``: 8)."""
    err = check_configuration_sizes(mi, q, work, dwork, Minv)
    if err != 0:
        return err
    n = mi.shape[0]
    nv = Minv.shape[0]
    if dwork.shape[0] < derivative_workspace_size(n, nv) or dint.shape[0] < 2 * n + 4 * nv:
        return 8
    A, B, zeros, x, y, blas = scratch_views(dwork, n, nv)
    for k in range(nv):
        zeros[k] = 0.0
    articulate(mi, mf, q, zeros, work)
    minv_passes(mi, work, dwork, dint, Minv)
    return 0
