"""Derivatives of the applied generalized forces of ``kernels/forces.py`` with respect to q (tangent space) and q̇.

Joint spring-dampers, τ_k = −K_k (q_k − rest_k) − C_k q̇_k + effort_k: ∂τ_k/∂q_k = −K_k (on joints whose
coordinates are plain numbers, where the stiffness acts), ∂τ_k/∂q̇_k = −C_k.

A point-to-point spring-damper between x_a on body a and x_b on body b, with d = x_b − x_a, l = |d|, e = d/l,
l̇ = eᵀ ḋ and the tension S = K (l − l0) + C l̇, has τ = −S J_dᵀ e, J_d = J_b − J_a the difference of the points'
Jacobians (ḋ = J_d q̇ + the ground's share when it moves). Hence

    ∂τ_k/∂q̇_j = −C (eᵀ J_d,k)(eᵀ J_d,j)
    ∂τ_k/∂q_j = −(eᵀ J_d,k) ∂S_j − S (J_d,jᵀ J_d,k − (eᵀ J_d,j)(eᵀ J_d,k)) / l − S eᵀ ∂J_d,k/∂q_j

with ∂l/∂q_j = eᵀ J_d,j, ∂l̇/∂q_j = (J_d,j − e eᵀ J_d,j)ᵀ ḋ / l + eᵀ ∂ḋ/∂q_j, ∂S_j = K ∂l/∂q_j + C ∂l̇/∂q_j.
The column J_p,k = s_v,k + s_ω,k × x_p of a point on the path of coordinates j and k changes as
∂J_p,k/∂q_j = s_ω,j × J_p,k when q_j moves S_k (j before k: ``kernels/derivatives.py``), else
s_ω,k × J_p,j (only the point moves), and ∂ẋ_p/∂q_j = Σ_k ∂J_p,k/∂q_j q̇_k + ω_0 × J_p,j (ω_0: the ground's
angular velocity when it moves). Per spring O(L²) for the L coordinates on the paths of its two bodies.

A load (``model/loads.py``) — the force F at the point x_p of body b and the torque T — has τ_k = J_p,kᵀ F + s_ω,kᵀ T
for the coordinates k on the path of b, so

    ∂τ_k/∂q_j = (∂J_p,k/∂q_j)ᵀ F + J_p,kᵀ ∂F/∂q_j + (∂s_ω,k/∂q_j)ᵀ T + s_ω,kᵀ ∂T/∂q_j

with ∂s_ω,k/∂q_j = s_ω,j × s_ω,k when q_j moves S_k (else 0), and ∂F/∂q_j = s_ω,j × F, ∂T/∂q_j = s_ω,j × T for a
follower load (its vectors turn with body b), zero for a dead one; ∂τ/∂q̇ = 0. O(L²) per load.
"""
from numba import njit

from multibody.kernels.forces import LI_LOCAL, load_vectors, spring_points
from multibody.kernels.kinematics import B_V, FREE, IV, JTYPE, NQ, NV, PARENT, SPHERICAL, workspace_views
from multibody.kernels.spatial import KERNEL, cross3, helper

# per-coordinate scratch columns (of the derivative workspace's coordinate rows, free once the RNEA derivatives
# are done): the columns of J_a and J_b at the spring's points, and ∂ẋ_a/∂q, ∂ẋ_b/∂q
S_JA, S_JB, S_DXA, S_DXB = 0, 3, 6, 9


@helper
def _difference_column(sc, k):
    """Column k of J_d = J_b − J_a."""
    return sc[k, S_JB] - sc[k, S_JA], sc[k, S_JB + 1] - sc[k, S_JA + 1], sc[k, S_JB + 2] - sc[k, S_JA + 2]


@helper
def _moves(mi, cb, j, k):
    """Whether coordinate j moves the column S_k, for j and k on one path to the root (``kernels/derivatives.py``):
    j's joint comes first, or it is the same joint and j ≤ k or the joint is Spherical or Free."""
    bj = cb[j]
    bk = cb[k]
    if bj != bk:
        return bj < bk
    jt = mi[bj, JTYPE]
    return jt == SPHERICAL or jt == FREE or j <= k


@helper
def _column_change(mi, cb, wd, sc, col, j, k):
    """∂J_p,k/∂q_j for the point whose Jacobian columns are in ``sc[:, col:col+3]`` (both on its path)."""
    if _moves(mi, cb, j, k):
        return cross3(wd[j, 0], wd[j, 1], wd[j, 2], sc[k, col], sc[k, col + 1], sc[k, col + 2])
    return cross3(wd[k, 0], wd[k, 1], wd[k, 2], sc[j, col], sc[j, col + 1], sc[j, col + 2])


@helper
def _collect_path(mi, wd, body, x0, x1, x2, bit, col, flag, lst, m, sc):
    """Add the coordinates on the path of ``body`` to the list ``lst`` (m entries so far; ``flag[k]`` |= ``bit``)
    with the columns of the Jacobian of the point x in ``sc[k, col:col+3]``; returns the new m."""
    i = body
    while i > 0:
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            if flag[k] == 0:
                lst[m] = k
                m += 1
                for c in range(12):
                    sc[k, c] = 0.0
            flag[k] |= bit
            e0, e1, e2 = cross3(wd[k, 0], wd[k, 1], wd[k, 2], x0, x1, x2)
            sc[k, col] = wd[k, 3] + e0
            sc[k, col + 1] = wd[k, 4] + e1
            sc[k, col + 2] = wd[k, 5] + e2
        i = mi[i, PARENT]
    return m


@helper
def _velocity_change(mi, cb, wd, sc, flag, lst, m, v, w0, w1, w2, bit, col, dcol):
    """∂ẋ_p/∂q_j into ``sc[j, dcol:dcol+3]`` for the coordinates j on the path of point p (flag ``bit``)."""
    for a in range(m):
        j = lst[a]
        if flag[j] & bit == 0:
            continue
        s0, s1, s2 = cross3(w0, w1, w2, sc[j, col], sc[j, col + 1], sc[j, col + 2])
        for b in range(m):
            k = lst[b]
            if flag[k] & bit == 0:
                continue
            c0, c1, c2 = _column_change(mi, cb, wd, sc, col, j, k)
            s0 += c0 * v[k]
            s1 += c1 * v[k]
            s2 += c2 * v[k]
        sc[j, dcol] = s0
        sc[j, dcol + 1] = s1
        sc[j, dcol + 2] = s2


@njit(**KERNEL)
def applied_force_derivatives(mi, v, dof_k, dof_c, spring_body, spring_point, spring_k, spring_c, spring_l0, loads,
                              t, work, sc, dint, dq, dv):
    """Subtract ∂τ/∂q and ∂τ/∂q̇ of the joint spring-dampers, of the point spring-dampers and of the loads at time
    ``t`` (module docstring) from ``dq`` and ``dv`` (nv, nv) — the derivatives of rnea − τ_app that the ABA
    derivatives need — from the placements, velocities and motion subspaces that a forward pass left in ``work``.
    ``sc``: (nv, ≥ 12) scratch; ``dint``: ``derivatives_minv.subtree_tables`` (the body of each coordinate, and
    2 nv scratch entries)."""
    n = mi.shape[0]
    nv = v.shape[0]
    wb, wd = workspace_views(work, n, nv)
    for i in range(1, n):
        linear = mi[i, NQ] == mi[i, NV]
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            dv[k, k] += dof_c[k]
            if linear:
                dq[k, k] += dof_k[k]
    ns = spring_k.shape[0]
    if ns == 0 and loads[0].shape[0] == 0:
        return
    cb = dint[2 * n + nv:2 * n + 2 * nv]
    flag = dint[2 * n + 2 * nv:2 * n + 3 * nv]
    lst = dint[2 * n + 3 * nv:2 * n + 4 * nv]
    for k in range(nv):
        flag[k] = 0
    _load_derivatives(mi, cb, wb, wd, loads, t, sc, flag, lst, dq)
    w0 = wb[0, B_V]
    w1 = wb[0, B_V + 1]
    w2 = wb[0, B_V + 2]
    for s in range(ns):
        (a, b, xa0, xa1, xa2, xb0, xb1, xb2, r0, r1, r2, d0, d1, d2,
         length) = spring_points(wb, spring_body, spring_point, s)
        if length < 1e-300:
            continue
        e0 = d0 / length
        e1 = d1 / length
        e2 = d2 / length
        K = spring_k[s]
        C = spring_c[s]
        S = K * (length - spring_l0[s]) + C * (e0 * r0 + e1 * r1 + e2 * r2)
        m = _collect_path(mi, wd, a, xa0, xa1, xa2, 1, S_JA, flag, lst, 0, sc)
        m = _collect_path(mi, wd, b, xb0, xb1, xb2, 2, S_JB, flag, lst, m, sc)
        _velocity_change(mi, cb, wd, sc, flag, lst, m, v, w0, w1, w2, 1, S_JA, S_DXA)
        _velocity_change(mi, cb, wd, sc, flag, lst, m, v, w0, w1, w2, 2, S_JB, S_DXB)
        for cj in range(m):
            j = lst[cj]
            J0, J1, J2 = _difference_column(sc, j)
            ej = e0 * J0 + e1 * J1 + e2 * J2
            # ∂l̇/∂q_j and ∂S/∂q_j
            dl = ((J0 - e0 * ej) * r0 + (J1 - e1 * ej) * r1 + (J2 - e2 * ej) * r2) / length
            dl += (e0 * (sc[j, S_DXB] - sc[j, S_DXA]) + e1 * (sc[j, S_DXB + 1] - sc[j, S_DXA + 1])
                   + e2 * (sc[j, S_DXB + 2] - sc[j, S_DXA + 2]))
            dS = K * ej + C * dl
            for ck in range(m):
                k = lst[ck]
                L0, L1, L2 = _difference_column(sc, k)
                ek = e0 * L0 + e1 * L1 + e2 * L2
                dv[k, j] += C * ek * ej
                # −∂τ_k/∂q_j
                x = ek * dS + S * (J0 * L0 + J1 * L1 + J2 * L2 - ej * ek) / length
                # S eᵀ ∂J_d,k/∂q_j = S eᵀ (∂J_b,k − ∂J_a,k)/∂q_j, each point's with both coordinates on its path
                both = flag[j] & flag[k]
                for bit, col, sign in ((2, S_JB, S), (1, S_JA, -S)):
                    if both & bit:
                        c0, c1, c2 = _column_change(mi, cb, wd, sc, col, j, k)
                        x += sign * (e0 * c0 + e1 * c1 + e2 * c2)
                dq[k, j] += x
        for c in range(m):
            flag[lst[c]] = 0


@helper
def _load_derivatives(mi, cb, wb, wd, loads, t, sc, flag, lst, dq):
    """dq[k, j] −= ∂τ_k/∂q_j of every load (module docstring)."""
    ints, floats, knots = loads
    for r in range(ints.shape[0]):
        b, x0, x1, x2, F0, F1, F2, T0, T1, T2 = load_vectors(wb, ints, floats, knots, r, t)
        if b <= 0:
            continue
        local = ints[r, LI_LOCAL] != 0
        m = _collect_path(mi, wd, b, x0, x1, x2, 1, S_JA, flag, lst, 0, sc)
        for cj in range(m):
            j = lst[cj]
            dF0 = dF1 = dF2 = dT0 = dT1 = dT2 = 0.0
            if local:
                dF0, dF1, dF2 = cross3(wd[j, 0], wd[j, 1], wd[j, 2], F0, F1, F2)
                dT0, dT1, dT2 = cross3(wd[j, 0], wd[j, 1], wd[j, 2], T0, T1, T2)
            for ck in range(m):
                k = lst[ck]
                c0, c1, c2 = _column_change(mi, cb, wd, sc, S_JA, j, k)
                d = (c0 * F0 + c1 * F1 + c2 * F2 + sc[k, S_JA] * dF0 + sc[k, S_JA + 1] * dF1 + sc[k, S_JA + 2] * dF2
                     + wd[k, 0] * dT0 + wd[k, 1] * dT1 + wd[k, 2] * dT2)
                if _moves(mi, cb, j, k):
                    s0, s1, s2 = cross3(wd[j, 0], wd[j, 1], wd[j, 2], wd[k, 0], wd[k, 1], wd[k, 2])
                    d += s0 * T0 + s1 * T1 + s2 * T2
                dq[k, j] -= d
        for c in range(m):
            flag[lst[c]] = 0
