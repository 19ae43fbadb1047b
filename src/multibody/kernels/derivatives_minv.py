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

from multibody.kernels.aba import articulate_joint, weighted_rows
from multibody.kernels.blas import MATMUL_SCRATCH
from multibody.kernels.derivatives import DB_WIDTH, DD_DFQ, DD_WIDTH, check_configuration_sizes
from multibody.kernels.kinematics import (B_IA, D_DINV, D_U, D_UD, IV, NV, PARENT, armature, body_inertia_world,
                                          joint_placement_world, set_ground, workspace_views)
from multibody.kernels.spatial import (COMPILED, INLINE, KERNEL, helper, load6, store6, store_rigid_inertia_sym6,
                                       sym6_add_rank1_update, sym6_times)
from multibody.kernels.views import rows_view

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


@njit(**COMPILED, inline=INLINE)
def minv_views(dwork, n, nv):
    """F (6, nv) and P (n, 6, nv) of the derivative workspace."""
    o = n * DB_WIDTH + nv * DD_WIDTH
    F = rows_view(dwork[o:o + 6 * nv], (nv,))
    P = rows_view(dwork[o + 6 * nv:o + 6 * nv + n * 6 * nv], (6, nv))
    return F, P


@njit(**COMPILED, inline=INLINE)
def scratch_views(dwork, n, nv):
    """The two nv x nv scratch matrices, the three nv scratch vectors and the ``blas.matmul`` scratch of the
    derivative workspace."""
    o = n * DB_WIDTH + nv * DD_WIDTH + 6 * nv + n * 6 * nv
    A = rows_view(dwork[o:o + nv * nv], (nv,))
    B = rows_view(dwork[o + nv * nv:o + 2 * nv * nv], (nv,))
    o += 2 * nv * nv
    return (A, B, dwork[o:o + nv], dwork[o + nv:o + 2 * nv], dwork[o + 2 * nv:o + 3 * nv],
            dwork[o + 3 * nv:o + 3 * nv + MATMUL_SCRATCH])


# The passes below sweep rows of contiguous entries (a row of M⁻¹ from a column on, a row of F or P over a range of
# columns) in loops of their own, starting at 0 over slices: LLVM turns such loops into SIMD instructions, where one
# loop over the columns that reads and writes seven rows at once, or one that starts at a column k, stays scalar.
#: below this many columns a pass runs as one loop (vectorized loops cost more than they save on few)
SHORT = 16


@helper
def _backward_one_dof(i, iv, s0, s1, hand_over, wd, F, Minv, coord, xs):
    """The backward pass of M⁻¹ for a joint of one coordinate iv (module docstring): M⁻¹[iv, iv] = D⁻¹ and, for the
    columns at the positions s0 + 1 .. s1 − 1 of its subtree, M⁻¹[iv, c] = −D⁻¹ Sᵀ F[:, p] (``xs``: a scratch row
    by position); with ``hand_over`` (a parent that is not the ground) F[:, p] += U M⁻¹[iv, c] and F[:, s0] = U D⁻¹."""
    S = load6(wd, iv, 0)
    U = load6(wd, iv, D_U)
    dinv = wd[iv, D_DINV]
    Minv[iv, iv] = dinv
    if s1 - s0 - 1 < SHORT:
        for p in range(s0 + 1, s1):
            x = -dinv * (S[0] * F[0, p] + S[1] * F[1, p] + S[2] * F[2, p] + S[3] * F[3, p] + S[4] * F[4, p]
                         + S[5] * F[5, p])
            Minv[iv, coord[p]] = x
            if hand_over:
                for r in range(6):
                    F[r, p] += U[r] * x
        if hand_over:
            for r in range(6):
                F[r, s0] = U[r] * dinv
        return
    x = xs[s0 + 1:s1]
    F0, F1, F2 = F[0, s0 + 1:s1], F[1, s0 + 1:s1], F[2, s0 + 1:s1]
    F3, F4, F5 = F[3, s0 + 1:s1], F[4, s0 + 1:s1], F[5, s0 + 1:s1]
    for p in range(x.shape[0]):
        x[p] = -dinv * (S[0] * F0[p] + S[1] * F1[p] + S[2] * F2[p] + S[3] * F3[p] + S[4] * F4[p] + S[5] * F5[p])
    for p in range(x.shape[0]):
        Minv[iv, coord[s0 + 1 + p]] = x[p]
    if hand_over:
        for r in range(6):
            Fr = F[r, s0 + 1:s1]
            u = U[r]
            for p in range(x.shape[0]):
                Fr[p] += u * x[p]
            F[r, s0] = u * dinv


@helper(inline=False)
def _backward_multi_dof(iv, nvi, s0, s1, hand_over, wd, dd, F, Minv, coord):
    """:func:`_backward_one_dof` for a joint of several coordinates (D⁻¹ and U D⁻¹ in its rows of ``wd``; S D⁻¹
    into the ``DD_DFQ`` columns of ``dd``)."""
    for k in range(nvi):
        store6(dd, iv + k, DD_DFQ, weighted_rows(wd, iv, iv + nvi, 0, D_DINV + k))
        for l in range(nvi):
            Minv[iv + k, iv + l] = wd[iv + k, D_DINV + l]
    for k in range(iv, iv + nvi):
        d = load6(dd, k, DD_DFQ)     # read once: for all the compiler knows, a store to Minv could change it
        for p in range(s0 + nvi, s1):
            Minv[k, coord[p]] = -(d[0] * F[0, p] + d[1] * F[1, p] + d[2] * F[2, p] + d[3] * F[3, p] + d[4] * F[4, p]
                                  + d[5] * F[5, p])
    if hand_over:
        for p in range(s0 + nvi, s1):
            c = coord[p]
            for k in range(iv, iv + nvi):
                x = Minv[k, c]
                for r in range(6):
                    F[r, p] += wd[k, D_U + r] * x
    if hand_over:
        for k in range(nvi):
            for r in range(6):
                F[r, s0 + k] = wd[iv + k, D_UD + r]


@helper
def _forward_one_dof(i, par, k, keep, wd, Minv, P):
    """The forward pass of M⁻¹ for a joint of one coordinate k: M⁻¹[k, c] −= (U D⁻¹)ᵀ P_λ[:, c] and, ``keep``,
    P_i[:, c] = P_λ[:, c] + S M⁻¹[k, c], for c ≥ k (module docstring)."""
    d = wd[k, D_DINV]
    m = Minv[k, k:]
    u0, u1, u2 = wd[k, D_U] * d, wd[k, D_U + 1] * d, wd[k, D_U + 2] * d
    u3, u4, u5 = wd[k, D_U + 3] * d, wd[k, D_U + 4] * d, wd[k, D_U + 5] * d
    if m.shape[0] < SHORT:
        S = load6(wd, k, 0)
        for c in range(m.shape[0]):
            if par > 0:
                p0, p1, p2 = P[par, 0, k + c], P[par, 1, k + c], P[par, 2, k + c]
                p3, p4, p5 = P[par, 3, k + c], P[par, 4, k + c], P[par, 5, k + c]
                x = m[c] - (u0 * p0 + u1 * p1 + u2 * p2 + u3 * p3 + u4 * p4 + u5 * p5)
                m[c] = x
            else:
                p0 = p1 = p2 = p3 = p4 = p5 = 0.0
                x = m[c]
            if keep:
                P[i, 0, k + c] = p0 + S[0] * x
                P[i, 1, k + c] = p1 + S[1] * x
                P[i, 2, k + c] = p2 + S[2] * x
                P[i, 3, k + c] = p3 + S[3] * x
                P[i, 4, k + c] = p4 + S[4] * x
                P[i, 5, k + c] = p5 + S[5] * x
        return
    if par > 0:
        P0, P1, P2 = P[par, 0, k:], P[par, 1, k:], P[par, 2, k:]
        P3, P4, P5 = P[par, 3, k:], P[par, 4, k:], P[par, 5, k:]
        for c in range(m.shape[0]):
            m[c] -= u0 * P0[c] + u1 * P1[c] + u2 * P2[c] + u3 * P3[c] + u4 * P4[c] + u5 * P5[c]
    if keep:
        for r in range(6):
            Pi = P[i, r, k:]
            s = wd[k, r]
            if par > 0:
                Pp = P[par, r, k:]
                for c in range(m.shape[0]):
                    Pi[c] = Pp[c] + s * m[c]
            else:
                for c in range(m.shape[0]):
                    Pi[c] = s * m[c]


@helper
def _inherit(i, par, iv, P):
    """P_i ← P_λ (zeros under the root) on the columns from iv: the accelerations body i starts from."""
    for r in range(6):
        Pi = P[i, r, iv:]
        if par > 0:
            Pp = P[par, r, iv:]
            for c in range(Pi.shape[0]):
                Pi[c] = Pp[c]
        else:
            for c in range(Pi.shape[0]):
                Pi[c] = 0.0


@helper(inline=False)
def _forward_multi_dof(i, par, iv, nvi, keep, wd, Minv, P):
    """:func:`_forward_one_dof` for a joint of several coordinates (U D⁻¹ in its rows of ``wd``), for c ≥ iv."""
    if par > 0:
        for k in range(iv, iv + nvi):
            m = Minv[k, iv:]
            UD = load6(wd, k, D_UD)
            P0, P1, P2 = P[par, 0, iv:], P[par, 1, iv:], P[par, 2, iv:]
            P3, P4, P5 = P[par, 3, iv:], P[par, 4, iv:], P[par, 5, iv:]
            for c in range(m.shape[0]):
                m[c] -= UD[0] * P0[c] + UD[1] * P1[c] + UD[2] * P2[c] + UD[3] * P3[c] + UD[4] * P4[c] + UD[5] * P5[c]
    if keep:
        _inherit(i, par, iv, P)
        for r in range(6):
            Pi = P[i, r, iv:]
            for k in range(iv, iv + nvi):
                s = wd[k, r]
                m = Minv[k, iv:]
                for c in range(Pi.shape[0]):
                    Pi[c] += s * m[c]


@njit(**KERNEL)
def minv_passes(mi, work, dwork, dint, Minv):
    """M⁻¹ into ``Minv`` (nv, nv) from the articulation of the bodies that ``aba_kernel`` left in ``work`` (S, U,
    D⁻¹, U D⁻¹ of every coordinate; module docstring). ``dint``: ``subtree_tables``."""
    n = mi.shape[0]
    nv = Minv.shape[0]
    wb, wd = workspace_views(work, n, nv)
    F, P = minv_views(dwork, n, nv)
    dd = rows_view(dwork[n * DB_WIDTH:n * DB_WIDTH + nv * DD_WIDTH], (DD_WIDTH,))
    start = dint[:n]
    sub = dint[n:2 * n]
    coord = dint[2 * n:2 * n + nv]
    xs = scratch_views(dwork, n, nv)[3]     # the second scratch vector (``minv_kernel`` passes the first to ABA)
    for r in range(nv):
        m = Minv[r, r:]
        for c in range(m.shape[0]):
            m[c] = 0.0
    # ---- backward: provisional rows over each subtree, the bias forces F of the columns
    for i in range(n - 1, 0, -1):
        nvi = mi[i, NV]
        hand_over = mi[i, PARENT] > 0     # the root's F is not read
        if nvi == 1:
            _backward_one_dof(i, mi[i, IV], start[i], start[i] + sub[i], hand_over, wd, F, Minv, coord, xs)
        elif nvi > 1:
            _backward_multi_dof(mi[i, IV], nvi, start[i], start[i] + sub[i], hand_over, wd, dd, F, Minv, coord)
    # ---- forward: the accelerations P of the columns, the rows of the upper triangle
    for i in range(1, n):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        nvi = mi[i, NV]
        keep = sub[i] > nvi   # the subtree has more coordinates: its bodies read P_i
        if nvi == 1:
            _forward_one_dof(i, par, iv, keep, wd, Minv, P)
        elif nvi > 1:
            _forward_multi_dof(i, par, iv, nvi, keep, wd, Minv, P)
        elif keep:   # a Fixed joint: the body moves with its parent
            _inherit(i, par, iv, P)
    for r in range(nv):
        for c in range(r + 1, nv):
            Minv[c, r] = Minv[r, c]


@helper
def _articulate_inertia_one_dof(i, par, iv, arm, IA, wd):
    """ABA's pass 2 for a joint of one coordinate, the inertias alone (RBDA Table 7.1): U = IA S and
    D⁻¹ = 1 / (Sᵀ U + a) (a: the coordinate's armature) into the workspace, and the hand-over IA_λ += IA − U Uᵀ D⁻¹."""
    S = load6(wd, iv, 0)
    U = sym6_times(IA, i, S[0], S[1], S[2], S[3], S[4], S[5])
    dinv = 1.0 / (S[0] * U[0] + S[1] * U[1] + S[2] * U[2] + S[3] * U[3] + S[4] * U[4] + S[5] * U[5] + arm)
    store6(wd, iv, D_U, U)
    wd[iv, D_DINV] = dinv
    if par > 0:
        sym6_add_rank1_update(IA, par, IA, i, dinv, U[0], U[1], U[2], U[3], U[4], U[5])


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
        if mi[i, NV] == 1:
            _articulate_inertia_one_dof(i, mi[i, PARENT], mi[i, IV], armature(i, mf, 0), IA, wd)
        else:
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
