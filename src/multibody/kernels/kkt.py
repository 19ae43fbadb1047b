"""Dense linear algebra of the constrained equations of motion in compiled code (no allocation).

The equations ``M v̇ = M a + Gᵀλ``, ``G v̇ = b`` (seed 001 §3.6, eqs. 3.189–3.192: the tree's equations plus
the constraint rows with multipliers; the KKT form of eq. 2.49) are solved in the range space of the
constraints: with ``M = L Lᵀ`` (Cholesky) and ``Y = L⁻¹Gᵀ``, ``S = G M⁻¹ Gᵀ = YᵀY`` and

    (S + εI) λ_{k+1} = b − G a + ε λ_k,   λ_0 = 0,   v̇ = a + L⁻ᵀ Y λ,

the augmented-Lagrangian iteration of Bayo, García de Jalón & Serna (1988) on the quasi-definite
``[[M, Gᵀ], [G, −εI]]``: exact to round-off after a few iterations when the rows are independent, bounded
for redundant rows (A04 Bricard) and at singular positions (A02). Rows of G that vanish identically (the
out-of-plane rows of a cut hinge in a planar loop) are dropped first; ε is relative to the mean diagonal of
``G M⁻¹ Gᵀ`` estimated with M's diagonal clipped at 1e-3 of its largest entry.
"""

import numpy as np
from numba import njit

from multibody.kernels.spatial import KERNEL


@njit(**KERNEL)
def cholesky_lower(A, n, L):
    """L (lower) with L Lᵀ = A[:n, :n] (symmetric positive definite); returns False if A is not."""
    for j in range(n):
        s = A[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s.real > 0.0:
            return False
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, n):
            t = A[i, j]
            for k in range(j):
                t -= L[i, k] * L[j, k]
            L[i, j] = t / d
        for i in range(j):
            L[i, j] = 0.0
    return True


@njit(**KERNEL)
def forward_sub(L, n, x):
    """x ← L⁻¹ x (L lower triangular n × n)."""
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]


@njit(**KERNEL)
def backward_sub_T(L, n, x):
    """x ← L⁻ᵀ x."""
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@njit(**KERNEL)
def kept_rows(G, rows, keep, sel):
    """Indices of the rows r (``sel[r] != 0``) of G[:rows] that do not vanish identically, into ``keep``;
    returns their number."""
    nv = G.shape[1]
    big = 0.0
    for r in range(rows):
        if sel[r] == 0:
            continue
        for k in range(nv):
            a = abs(G[r, k])
            if a > big:
                big = a
    mk = 0
    for r in range(rows):
        if sel[r] == 0:
            continue
        rn = 0.0
        for k in range(nv):
            a = abs(G[r, k])
            if a > rn:
                rn = a
        if rn > 1e-12 * big and rn > 0.0:
            keep[mk] = r
            mk += 1
    return mk


@njit(**KERNEL)
def kkt_solve(M, G, rows, sel, a, b, eps_rel, iterations, L, Y, S, LS, keep, tmp, w, lam, out):
    """``out`` = v̇ and ``lam`` (per row, 0 on dropped rows) of ``M v̇ = M a + Gᵀλ``, ``G v̇ = b`` over the rows
    r < ``rows`` with ``sel[r] != 0`` (see the module docstring). Workspaces: L (nv, nv), Y (nv, m),
    S and LS (m, m), keep (m,) int, tmp and w (m,). Returns False when M is not positive definite or the
    regularized S is singular (both mean a broken model)."""
    nv = M.shape[0]
    if not cholesky_lower(M, nv, L):
        return False
    for r in range(rows):
        lam[r] = 0.0
    mk = kept_rows(G, rows, keep, sel)
    for k in range(nv):
        out[k] = a[k]
    if mk == 0:
        return True
    # Y = L⁻¹ Gᵀ (one column per kept row) and the scale of S for ε
    dmax = 0.0
    for k in range(nv):
        if M[k, k].real > dmax:
            dmax = M[k, k].real
    scale = 0.0
    for j in range(mk):
        r = keep[j]
        for k in range(nv):
            scale += G[r, k].real * G[r, k].real / max(M[k, k].real, 1e-3 * dmax)
        for i in range(nv):
            s = G[r, i]
            for k in range(i):
                s -= L[i, k] * Y[k, j]
            Y[i, j] = s / L[i, i]
    eps = eps_rel * max(scale / mk, 1e-300)
    for i in range(mk):
        for j in range(i + 1):
            s = 0.0
            for k in range(nv):
                s += Y[k, i] * Y[k, j]
            S[i, j] = s
            S[j, i] = s
        S[i, i] += eps
    if not cholesky_lower(S, mk, LS):
        return False
    for j in range(mk):                       # b − G a on the kept rows
        r = keep[j]
        s = b[r]
        for k in range(nv):
            s -= G[r, k] * a[k]
        tmp[j] = s
    for it in range(iterations):              # (S + εI) λ ← b − G a + ε λ
        for j in range(mk):
            w[j] = tmp[j] + eps * lam[keep[j]]
        forward_sub(LS, mk, w)
        backward_sub_T(LS, mk, w)
        for j in range(mk):
            lam[keep[j]] = w[j]
    for i in range(nv):                       # v̇ = a + L⁻ᵀ (Y λ)
        s = 0.0
        for j in range(mk):
            s += Y[i, j] * lam[keep[j]]
        out[i] = s
    backward_sub_T(L, nv, out)
    for i in range(nv):
        out[i] += a[i]
    return True
