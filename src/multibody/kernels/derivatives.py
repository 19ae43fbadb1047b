"""Analytical derivatives of inverse dynamics, ∂τ/∂q, ∂τ/∂q̇ and M = ∂τ/∂q̈, and the Coriolis matrix C(q, q̇), by
recursions over the tree in O(N·depth).

The recursion is that of J. Carpentier and N. Mansard, "Analytical derivatives of rigid body dynamics
algorithms", Robotics: Science and Systems 2018 (the RNEA derivatives in the ground frame), derived here again
for our joints and written as two passes over the RNEA quantities (``kernels/rnea.py``; RBDA Table 5.1) that
another kernel left in the workspace: the placements, the ground-frame columns S_k of the motion subspaces,
the body velocities v_i and accelerations a_i (gravity included as a_0 = a_base − [0; g]).

Tangent derivatives. A change δ_j of coordinate j (along the tangent space: q ⊕ δ, as ``linearize`` and
Pinocchio do for quaternion joints) moves every body after it rigidly by the ground-frame twist S_j δ_j. A
column S_k moves with it when coordinate j comes before k — j's joint is an ancestor of k's, or the same joint
with j ≤ k (the joints of several coordinates are chains of one-coordinate motions: Cylindrical, Universal,
Planar), or any j of the same Spherical or Free joint (its columns are fixed in the child, and δ moves the
child): then ∂S_k/∂q_j = S_j × S_k. With u_j and a⁻_j the velocity and acceleration of the frame in which S_j
is fixed (the parent's, or the chain's frame before j) and Ṡ_j = dS_j/dt, every body i after j has

    ∂v_i/∂q_j = S_j × v_i + dV_j,          dV_j = u_j × S_j
    ∂a_i/∂q_j = S_j × a_i + dV_j × v_i + dA_j,   dA_j = a⁻_j × S_j + u_j × dV_j
    ∂v_i/∂q̇_j = S_j,   ∂a_i/∂q̇_j = S_j × v_i + dAv_j,   dAv_j = Ṡ_j + dV_j

and the body force f_i = I_i a_i + v_i ×* I_i v_i − f_ext,i (f_ext fixed in ground coordinates) changes by

    ∂f_i/∂q_j = S_j ×* (f_i + f_ext,i) + I_i dA_j + D_i dV_j,    ∂f_i/∂q̇_j = I_i dAv_j + D_i S_j

with D_i x = v_i ×* I_i x − I_i (v_i × x) + x ×* I_i v_i. D_i reads the angular part ω_x of x only:
D_i x = [Dω ω_x; 2 ω_x × p_i] with Dω = [ω]Ī − Ī[ω] − [Īω] − 2[h][v_O] (Ī, h: rotational inertia and first
moment about the ground origin, p_i = I_i v_i's linear part, the momentum), 12 numbers per body where
Pinocchio keeps a 6x6 matrix. Sums over a subtree (composite Ic, Bc, F = Σ (f + f_ext), Fe = Σ f_ext) are
plain sums, and τ_k = S_kᵀ F_k gives, for coordinates l, j with l before or beside j in j's joint or on its path
to the root (F, Ic, Bc, Fe of the body of the coordinate named last):

    ∂τ_l/∂q_j = S_lᵀ dFq_j,   dFq_j = S_j ×* F_j + Ic_j dA_j + Bc_j dV_j        (S_l not moved by q_j)
    ∂τ_j/∂q_l = dA_lᵀ α_j + dV_lᵀ β_j − S_lᵀ (S_j ×* Fe_j)                     (S_j moved by q_l)
    ∂τ_l/∂q̇_j = S_lᵀ dFv_j,   dFv_j = Ic_j dAv_j + Bc_j S_j
    ∂τ_j/∂q̇_l = dAv_lᵀ α_j + S_lᵀ β_j,   M_lj = S_lᵀ α_j,   α_j = Ic_j S_j,   β_j = Bc_jᵀ S_j

(in the second line the rigid motion of S_j and of F cancel, (S_l × S_j)ᵀ F + S_jᵀ (S_l ×* F) = 0, but for
the external forces, which do not move). Coordinates in different branches do not see each other.

The Coriolis matrix is Pinocchio's ``computeCoriolisMatrix`` convention, C = Σ_i J_iᵀ (I_i J̇_i + ½ D_i J_i)
(J_i the body's ground-frame Jacobian, J̇_i its columns Ṡ_k): C q̇ = C(q, q̇) q̇ of the equations of motion
(RNEA without gravity), and Ṁ − 2C = −Σ J_iᵀ H(I_i v_i) J_i is skew-symmetric (H(h) x = x ×* h).
"""
import numpy as np
from numba import njit

from multibody.kernels.kinematics import (B_A, B_V, FREE, IQ, IV, JTYPE, NQ, NV, PARENT, SPHERICAL, armature,
                                          body_inertia_world, check_sizes, kinematics_kernel, strided, workspace_views)
from multibody.kernels.rnea import rnea_kernel, slice_workspace, workspace_len
from multibody.kernels.spatial import (COMPILED, INLINE, KERNEL, cross3, force_cross_motion, helper, load6,
                                       load_rigid_inertia, motion_cross_motion, rigid_inertia_times_motion, store6,
                                       store_rigid_inertia)
from multibody.kernels.views import rows_view

# columns of the per-body rows of the derivative workspace: the composite rigid inertia (m, h, Ī), Dω (9,
# row-major) and the momentum p of D, the composite force F = Σ (f + f_ext) and the composite external force
DB_IC, DB_D, DB_P, DB_F, DB_FE = 0, 10, 19, 22, 28
DB_WIDTH = 34
#: columns of the first part of a body row that the hand-over to the parent adds (without external forces)
DB_SUM = DB_FE
# columns of the per-coordinate rows: dV, dA, dAv (forward pass), dFq, dFv, α, β (3), γ = S ×* Fe (backward)
DD_DV, DD_DA, DD_DAV, DD_DFQ, DD_DFV, DD_AL, DD_BE, DD_GA = 0, 6, 12, 18, 24, 30, 36, 39
DD_WIDTH = 45


@helper
def _m6(a, b):
    """a × b of two spatial motion 6-tuples."""
    return motion_cross_motion(a[0], a[1], a[2], a[3], a[4], a[5], b[0], b[1], b[2], b[3], b[4], b[5])


@helper
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@helper
def _add6(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@helper
def _axpy6(a, s, x):
    """a + s x."""
    return a[0] + s * x[0], a[1] + s * x[1], a[2] + s * x[2], a[3] + s * x[3], a[4] + s * x[4], a[5] + s * x[5]


@helper
def _inertia_times(m, h, I, x):
    return rigid_inertia_times_motion(m, h, I, x[0], x[1], x[2], x[3], x[4], x[5])


@helper
def momentum_variation(m, h, I, v):
    """(Dω, p) of D x = v ×* I x − I (v × x) + x ×* I v for the rigid inertia (m, h, Ī) and velocity
    v = [ω; v_O] (module docstring): D x = [Dω ω_x; 2 ω_x × p], Dω = [ω]Ī − Ī[ω] − [Īω] − 2[h][v_O] (9-tuple,
    row-major) and p = m v_O − h × ω, the linear momentum."""
    w0, w1, w2, u0, u1, u2 = v
    # A = [ω] Ī; then [ω]Ī − Ī[ω] = A + Aᵀ
    A00 = w1 * I[2] - w2 * I[1]
    A01 = w1 * I[4] - w2 * I[3]
    A02 = w1 * I[5] - w2 * I[4]
    A10 = w2 * I[0] - w0 * I[2]
    A11 = w2 * I[1] - w0 * I[4]
    A12 = w2 * I[2] - w0 * I[5]
    A20 = w0 * I[1] - w1 * I[0]
    A21 = w0 * I[3] - w1 * I[1]
    A22 = w0 * I[4] - w1 * I[2]
    k0 = I[0] * w0 + I[1] * w1 + I[2] * w2
    k1 = I[1] * w0 + I[3] * w1 + I[4] * w2
    k2 = I[2] * w0 + I[4] * w1 + I[5] * w2
    # −2[h][u] = 2 (h·u) E − 2 u hᵀ
    s = 2.0 * (h[0] * u0 + h[1] * u1 + h[2] * u2)
    a0 = 2.0 * u0
    a1 = 2.0 * u1
    a2 = 2.0 * u2
    D = (2.0 * A00 + s - a0 * h[0], A01 + A10 + k2 - a0 * h[1], A02 + A20 - k1 - a0 * h[2],
         A10 + A01 - k2 - a1 * h[0], 2.0 * A11 + s - a1 * h[1], A12 + A21 + k0 - a1 * h[2],
         A20 + A02 + k1 - a2 * h[0], A21 + A12 - k0 - a2 * h[1], 2.0 * A22 + s - a2 * h[2])
    c0, c1, c2 = cross3(h[0], h[1], h[2], w0, w1, w2)
    return D, (m * u0 - c0, m * u1 - c1, m * u2 - c2)


@helper
def _variation_times(D, P, x0, x1, x2):
    """D x for x with angular part (x0, x1, x2): [Dω x_ω; 2 x_ω × p]."""
    c0, c1, c2 = cross3(x0, x1, x2, P[0], P[1], P[2])
    return (D[0] * x0 + D[1] * x1 + D[2] * x2, D[3] * x0 + D[4] * x1 + D[5] * x2,
            D[6] * x0 + D[7] * x1 + D[8] * x2, 2.0 * c0, 2.0 * c1, 2.0 * c2)


@helper
def _variation_T_times(D, P, S):
    """β = Dᵀ S, a 3-vector (the angular slot; the linear one is zero): Dωᵀ s_ω + 2 p × s_v."""
    c0, c1, c2 = cross3(P[0], P[1], P[2], S[3], S[4], S[5])
    return (D[0] * S[0] + D[3] * S[1] + D[6] * S[2] + 2.0 * c0,
            D[1] * S[0] + D[4] * S[1] + D[7] * S[2] + 2.0 * c1,
            D[2] * S[0] + D[5] * S[1] + D[8] * S[2] + 2.0 * c2)


@helper
def _load_body(db, i, has_fext):
    """The composites of body i: (m, h, Ī), Dω, p, F, Fe."""
    m, h, I = load_rigid_inertia(db, i, DB_IC)
    D = (db[i, DB_D], db[i, DB_D + 1], db[i, DB_D + 2], db[i, DB_D + 3], db[i, DB_D + 4], db[i, DB_D + 5],
         db[i, DB_D + 6], db[i, DB_D + 7], db[i, DB_D + 8])
    P = (db[i, DB_P], db[i, DB_P + 1], db[i, DB_P + 2])
    F = load6(db, i, DB_F)
    Fe = load6(db, i, DB_FE) if has_fext else (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    return m, h, I, D, P, F, Fe


@njit(**COMPILED, inline=INLINE)
def derivative_views(dwork, n, nv):
    """The per-body (n, DB_WIDTH) and per-coordinate (nv, DD_WIDTH) parts of a derivative workspace."""
    db = rows_view(dwork[:n * DB_WIDTH], (DB_WIDTH,))
    dd = rows_view(dwork[n * DB_WIDTH:n * DB_WIDTH + nv * DD_WIDTH], (DD_WIDTH,))
    return db, dd


@njit(**KERNEL)
def derivative_forward(mi, mf, v, a, fext, work, dwork):
    """The forward pass of the derivatives, root -> leaves, from the placements, S_k, v_i and a_i that an RNEA
    or ABA pass left in ``work``: dV_k, dA_k, dAv_k of every coordinate (module docstring; u and a⁻ advance
    along the chain of a joint of several coordinates, and stay the parent's for a Spherical or Free joint,
    whose Ṡ_k = v_i × S_k), and each body's own rigid inertia, Dω, p, f + f_ext and f_ext, which the backward
    pass sums over the subtrees. ``a``: the joint accelerations that made a_i."""
    n = mi.shape[0]
    nv = v.shape[0]
    wb, wd = workspace_views(work, n, nv)
    db, dd = derivative_views(dwork, n, nv)
    has_fext = fext.shape[0] == n
    for i in range(1, n):
        par = mi[i, PARENT]
        jt = mi[i, JTYPE]
        lie = jt == SPHERICAL or jt == FREE
        u = load6(wb, par, B_V)
        am = load6(wb, par, B_A)
        vi = load6(wb, i, B_V)
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            S = load6(wd, k, 0)
            dV = _m6(u, S)
            dA = _add6(_m6(am, S), _m6(u, dV))
            Sd = _m6(vi, S) if lie else dV
            store6(dd, k, DD_DV, dV)
            store6(dd, k, DD_DA, dA)
            store6(dd, k, DD_DAV, _add6(Sd, dV))
            if not lie:
                u = _axpy6(u, v[k], S)
                am = _axpy6(_axpy6(am, a[k], S), v[k], Sd)
        m, h, I = body_inertia_world(i, mf, wb)
        store_rigid_inertia(db, i, DB_IC, m, h, I)
        ai = load6(wb, i, B_A)
        Iv = _inertia_times(m, h, I, vi)
        Ia = _inertia_times(m, h, I, ai)
        g = force_cross_motion(vi[0], vi[1], vi[2], vi[3], vi[4], vi[5], Iv[0], Iv[1], Iv[2], Iv[3], Iv[4], Iv[5])
        store6(db, i, DB_F, _add6(Ia, g))
        D, P = momentum_variation(m, h, I, vi)
        for c in range(9):
            db[i, DB_D + c] = D[c]
        db[i, DB_P] = P[0]
        db[i, DB_P + 1] = P[1]
        db[i, DB_P + 2] = P[2]
        if has_fext:
            store6(db, i, DB_FE, load6(fext, i, 0))


@helper
def _hand_over(db, i, par, has_fext):
    """Add body i's composites to its parent's."""
    if par > 0:
        for c in range(DB_SUM):
            db[par, c] += db[i, c]
        if has_fext:
            for c in range(DB_FE, DB_FE + 6):
                db[par, c] += db[i, c]


@njit(**KERNEL)
def derivative_backward(mi, work, dwork, has_fext, with_M, dq, dv, M):
    """The backward pass, leaves -> root: the composites of each subtree, and for every coordinate j the
    entries it shares with the coordinates before it in its joint and on its path to the root (module
    docstring) into ``dq`` = ∂τ/∂q, ``dv`` = ∂τ/∂q̇ and, ``with_M``, ``M`` (all (nv, nv), overwritten; the
    entries between different branches are zero)."""
    n = mi.shape[0]
    nv = dq.shape[0]
    wb, wd = workspace_views(work, n, nv)
    db, dd = derivative_views(dwork, n, nv)
    for r in range(nv):
        for c in range(nv):
            dq[r, c] = 0.0
            dv[r, c] = 0.0
            if with_M:
                M[r, c] = 0.0
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        ive = iv + mi[i, NV]
        jt = mi[i, JTYPE]
        lie = jt == SPHERICAL or jt == FREE
        m, h, I, D, P, F, Fe = _load_body(db, i, has_fext)
        for k in range(iv, ive):
            S = load6(wd, k, 0)
            dV = load6(dd, k, DD_DV)
            al = _inertia_times(m, h, I, S)
            store6(dd, k, DD_AL, al)
            be = _variation_T_times(D, P, S)
            dd[k, DD_BE] = be[0]
            dd[k, DD_BE + 1] = be[1]
            dd[k, DD_BE + 2] = be[2]
            if has_fext:
                store6(dd, k, DD_GA, force_cross_motion(S[0], S[1], S[2], S[3], S[4], S[5],
                                                        Fe[0], Fe[1], Fe[2], Fe[3], Fe[4], Fe[5]))
            SF = force_cross_motion(S[0], S[1], S[2], S[3], S[4], S[5], F[0], F[1], F[2], F[3], F[4], F[5])
            dFq = _add6(_add6(SF, _inertia_times(m, h, I, load6(dd, k, DD_DA))),
                        _variation_times(D, P, dV[0], dV[1], dV[2]))
            store6(dd, k, DD_DFQ, dFq)
            dFv = _add6(_inertia_times(m, h, I, load6(dd, k, DD_DAV)), _variation_times(D, P, S[0], S[1], S[2]))
            store6(dd, k, DD_DFV, dFv)
        # pairs within the joint: S_l moves with q_j when j ≤ l, or always in a Spherical or Free joint
        for l in range(iv, ive):
            Sl = load6(wd, l, 0)
            for j in range(iv, ive):
                if lie or j <= l:
                    x = (_dot6(load6(dd, j, DD_DA), load6(dd, l, DD_AL)) + dd[j, DD_DV] * dd[l, DD_BE]
                         + dd[j, DD_DV + 1] * dd[l, DD_BE + 1] + dd[j, DD_DV + 2] * dd[l, DD_BE + 2])
                    if has_fext:
                        x -= _dot6(load6(wd, j, 0), load6(dd, l, DD_GA))
                    dq[l, j] = x
                else:
                    dq[l, j] = _dot6(Sl, load6(dd, j, DD_DFQ))
                dv[l, j] = _dot6(Sl, load6(dd, j, DD_DFV))
                if with_M:
                    M[l, j] = _dot6(Sl, load6(dd, j, DD_AL))
        # pairs with the coordinates of the ancestors
        for j in range(iv, ive):
            al = load6(dd, j, DD_AL)
            b0 = dd[j, DD_BE]
            b1 = dd[j, DD_BE + 1]
            b2 = dd[j, DD_BE + 2]
            dFq = load6(dd, j, DD_DFQ)
            dFv = load6(dd, j, DD_DFV)
            ga = load6(dd, j, DD_GA) if has_fext else al
            anc = par
            while anc > 0:
                for l in range(mi[anc, IV], mi[anc, IV] + mi[anc, NV]):
                    Sl = load6(wd, l, 0)
                    dq[l, j] = _dot6(Sl, dFq)
                    x = (_dot6(load6(dd, l, DD_DA), al) + dd[l, DD_DV] * b0 + dd[l, DD_DV + 1] * b1
                         + dd[l, DD_DV + 2] * b2)
                    if has_fext:
                        x -= _dot6(Sl, ga)
                    dq[j, l] = x
                    dv[l, j] = _dot6(Sl, dFv)
                    dv[j, l] = _dot6(load6(dd, l, DD_DAV), al) + Sl[0] * b0 + Sl[1] * b1 + Sl[2] * b2
                    if with_M:
                        x = _dot6(Sl, al)
                        M[l, j] = x
                        M[j, l] = x
                anc = mi[anc, PARENT]
        _hand_over(db, i, par, has_fext)


@njit(**KERNEL)
def coriolis_backward(mi, work, dwork, C):
    """The backward pass of the Coriolis matrix C = Σ J_iᵀ (I_i J̇_i + ½ D_i J_i) (module docstring) from
    the forward pass at a = 0 (Ṡ_k = dAv_k − dV_k): C_lj = S_lᵀ (Ic_j Ṡ_j + ½ Bc_j S_j) for l before j or in
    its joint, C_jl = Ṡ_lᵀ α_j + ½ S_lᵀ β_j for l on the path of j's joint to the root."""
    n = mi.shape[0]
    nv = C.shape[0]
    wb, wd = workspace_views(work, n, nv)
    db, dd = derivative_views(dwork, n, nv)
    for r in range(nv):
        for c in range(nv):
            C[r, c] = 0.0
        store6(dd, r, DD_DA, _axpy6(load6(dd, r, DD_DAV), -1.0, load6(dd, r, DD_DV)))  # Ṡ_r
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        iv = mi[i, IV]
        ive = iv + mi[i, NV]
        m, h, I, D, P, F, Fe = _load_body(db, i, False)
        for k in range(iv, ive):
            S = load6(wd, k, 0)
            Sd = load6(dd, k, DD_DA)
            store6(dd, k, DD_AL, _inertia_times(m, h, I, S))
            be = _variation_T_times(D, P, S)
            dd[k, DD_BE] = 0.5 * be[0]
            dd[k, DD_BE + 1] = 0.5 * be[1]
            dd[k, DD_BE + 2] = 0.5 * be[2]
            BS = _variation_times(D, P, S[0], S[1], S[2])
            store6(dd, k, DD_DFV, _axpy6(_inertia_times(m, h, I, Sd), 0.5, BS))
        for l in range(iv, ive):
            Sl = load6(wd, l, 0)
            for j in range(iv, ive):
                C[l, j] = _dot6(Sl, load6(dd, j, DD_DFV))
        for j in range(iv, ive):
            al = load6(dd, j, DD_AL)
            cF = load6(dd, j, DD_DFV)
            b0 = dd[j, DD_BE]
            b1 = dd[j, DD_BE + 1]
            b2 = dd[j, DD_BE + 2]
            anc = par
            while anc > 0:
                for l in range(mi[anc, IV], mi[anc, IV] + mi[anc, NV]):
                    Sl = load6(wd, l, 0)
                    C[l, j] = _dot6(Sl, cF)
                    C[j, l] = _dot6(load6(dd, l, DD_DA), al) + Sl[0] * b0 + Sl[1] * b1 + Sl[2] * b2
                anc = mi[anc, PARENT]
        _hand_over(db, i, par, False)


@helper
def check_derivative_sizes(mi, q, v, x, fext, work, dwork, out):
    """``kinematics.check_sizes`` for the derivative kernels, then 8 when ``dwork`` is too short and 6 when an
    output is not (nv, nv)."""
    err = check_sizes(mi, q, v, x, fext, work, x)
    if err != 0:
        return err
    n = mi.shape[0]
    nv = v.shape[0]
    if dwork.shape[0] < n * DB_WIDTH + nv * DD_WIDTH:
        return 8
    if out.shape[0] != nv or out.shape[1] != nv:
        return 6
    return 0


@njit(**KERNEL)
def rnea_derivatives_kernel(mi, mf, q, v, a, fext, work, dwork, tau, dq, dv, M):
    """∂τ/∂q (tangent space), ∂τ/∂q̇ and M = ∂τ/∂q̈ of τ = rnea(q, q̇ = v, q̈ = a) into ``dq``, ``dv``, ``M``
    (nv, nv), and τ into ``tau`` (nv): an RNEA pass (``rnea_kernel``), then the derivative passes. ``fext``:
    (n, 6) spatial forces fixed in ground coordinates, or (0, 6). Returns 0, or the position of the first
    argument that does not fit (``check_derivative_sizes``; nothing is computed)."""
    err = check_derivative_sizes(mi, q, v, a, fext, work, dwork, dq)
    if err != 0:
        return err
    if dv.shape != dq.shape or M.shape != dq.shape or tau.shape[0] != v.shape[0]:
        return 6
    rnea_kernel(mi, mf, q, v, a, fext, work, tau)
    derivative_forward(mi, mf, v, a, fext, work, dwork)
    derivative_backward(mi, work, dwork, fext.shape[0] == mi.shape[0], True, dq, dv, M)
    for i in range(1, mi.shape[0]):   # the armatures on M's diagonal (τ_k = ... + a_k q̈_k; RNEA's pass 2)
        for k in range(mi[i, NV]):
            M[mi[i, IV] + k, mi[i, IV] + k] += armature(i, mf, k)
    return 0


@helper
def check_configuration_sizes(mi, q, work, dwork, out):
    """0 when q (nq), ``work``, ``dwork`` (the rows of this module) and ``out`` (nv, nv) fit the model, else the
    codes of ``kinematics.check_sizes`` (1 q, 5 work, 6 out, 7 q not contiguous) or 8 (dwork)."""
    n = mi.shape[0]
    nv = mi[n - 1, IV] + mi[n - 1, NV]
    if q.shape[0] != mi[n - 1, IQ] + mi[n - 1, NQ]:
        return 1
    if work.shape[0] < workspace_len(n, nv):
        return 5
    if out.shape[0] != nv or out.shape[1] != nv:
        return 6
    if strided(q):
        return 7
    if dwork.shape[0] < n * DB_WIDTH + nv * DD_WIDTH:
        return 8
    return 0


@njit(**KERNEL)
def coriolis_kernel(mi, mf, q, v, work, dwork, C):
    """The Coriolis matrix C(q, q̇ = v) into ``C`` (nv, nv) (module docstring), for the tree relative to its base
    (a moving base changes neither M nor C: the velocities are taken relative to body 0). Returns 0 or the
    position of the first argument that does not fit."""
    err = check_configuration_sizes(mi, q, work, dwork, C)
    if err != 0:
        return err
    if v.shape[0] != C.shape[0]:
        return 2
    if strided(v):
        return 7
    n = mi.shape[0]
    kinematics_kernel(mi, mf, q, v, v, work, 1)
    wb, wd = workspace_views(work, n, v.shape[0])
    for i in range(n - 1, -1, -1):
        for k in range(6):
            wb[i, B_V + k] -= wb[0, B_V + k]
            wb[i, B_A + k] = 0.0
    # C reads dV and dAv of the forward pass, which the accelerations do not enter: v stands in for them
    derivative_forward(mi, mf, v, v, rows_view(work[:0], (6,)), work, dwork)
    coriolis_backward(mi, work, dwork, C)
    return 0


@njit(**COMPILED, nogil=True)
def rnea_derivatives_batch_kernel(mi, mf, Q, V, A, fext, base, DQ, DV, M, lo, hi):
    """``rnea_derivatives_kernel`` for the rows lo ≤ b < hi of Q, V, A (leading batch axis) into DQ, DV, M
    (B, nv, nv), with workspaces of its own (``base``: the base block, ``rnea.slice_workspace``). Returns the first
    nonzero error code of the rows, or 0. Compiled without the GIL: threads run slices of the rows at once
    (``kernels.threads.in_threads``)."""
    nv = V.shape[1]
    work = slice_workspace(mi, nv, base)
    dwork = np.zeros(mi.shape[0] * DB_WIDTH + nv * DD_WIDTH)
    tau = np.empty(nv)
    err = 0
    for b in range(lo, hi):
        e = rnea_derivatives_kernel(mi, mf, Q[b], V[b], A[b], fext, work, dwork, tau, DQ[b], DV[b], M[b])
        if err == 0:
            err = e
    return err
