"""Impacts on the tree: the impulse equation ``M Δv = Jᵀ Λ`` with Λ from the restitution law, and its twin at
the acceleration level that decides which stops hold.

Seed 002 writes the equations of motion in impulses (reference seed002-004.md §A.4): the state is (q, p), with
``p = ∂T/∂q̇ = M q̇`` (fixed base), the generalized momenta. An impact is a finite jump of p in an instant, at
fixed q: ``Δp = Jᵀ Λ`` (:func:`momentum_jump`), where the rows of J are the directions in which the impulses Λ
act — here, for a joint stop or a latch on coordinate r, the row ``σ e_rᵀ`` selecting that coordinate (σ = +1 on
a lower stop, −1 on an upper one, so that the stop's gap velocity is ``u = J v`` and a pushing impulse is
``Λ ≥ 0``). In velocities: ``Δv = M⁻¹ Jᵀ Λ`` — the response of the whole tree (every coordinate moves), not of
the one coordinate.

With ``Y = M⁻¹ Jᵀ`` and the Delassus matrix ``D = J M⁻¹ Jᵀ`` (:func:`delassus`), the gap velocities jump by
``u⁺ = u⁻ + D Λ``. Newton's law with restitution e on the rows that hit (``u⁺ = −e u⁻`` unless the others let
the row leave faster) and the rows already resting on their stops (u⁻ = 0) is the linear complementarity
problem

    w = D Λ + (1 + e) u⁻,    Λ ≥ 0,  w ≥ 0,  Λᵀ w = 0            (w = u⁺ + e u⁻)

with equality rows (latched or held coordinates: ``u⁺ = 0``, Λ of any sign) mixed in. D is symmetric positive
definite (M is, and distinct coordinates give independent rows), so the problem has exactly one solution, which
:func:`mixed_lcp` finds by Murty's principal pivoting with the least-index rule (finite for such matrices;
K. G. Murty, *Linear Complementarity, Linear and Nonlinear Programming*, 1988, §4.2): the active set is changed
one index at a time and each trial solves the active rows exactly, so the solution is exact to round-off — no
penalty, no iteration tolerance. A single row gives ``Λ = −(1 + e) u⁻ / D`` and ``u⁺ = −e u⁻``.

At the acceleration level the same D decides which resting rows hold: with ``a₀`` the accelerations of the
free tree, ``ü = J a₀ + D λ``, and ``λ ≥ 0, ü ≥ 0, λᵀ ü = 0`` (contact or separation, exactly complementary).
"""
import numpy as np
from numba import njit

from multibody.kernels.spatial import COMPILED
from multibody.kernels.crba import crba_kernel
from multibody.kernels.kkt import backward_sub_T, cholesky_lower, forward_sub

__all__ = ["delassus", "mixed_lcp", "momentum_jump"]

#: the relative round-off below which a multiplier or a gap rate counts as zero in the pivoting (64 eps)
LCP_TOL = 64.0 * np.finfo(float).eps
#: status codes of :func:`delassus`
OK, ERR_SIZES, ERR_NOT_SPD = 0, 1, 2


@njit(**COMPILED)
def delassus(mi, mf, q, work, rows, sign, M, Y, D):
    """The impulse response of the tree at q: ``M`` ← M(q) factored (CRBA, ``kernels/crba.py``; its Cholesky
    factor, ``kernels/kkt.py``), ``Y`` (nv, m) ← M⁻¹ Jᵀ and ``D`` (m, m) ← J M⁻¹ Jᵀ, for the rows
    ``J_k = sign[k] e_{rows[k]}ᵀ`` (velocity coordinates ``rows``). Returns 0, 1 when the arrays do not fit the
    model, 2 when M is not positive definite (a singular model)."""
    nv = M.shape[0]
    m = rows.shape[0]
    if crba_kernel(mi, mf, q, work, M) != 0 or Y.shape[0] != nv or Y.shape[1] != m or D.shape[0] != m:
        return ERR_SIZES
    if not cholesky_lower(M, nv, M):   # (in place: the factor's lower triangle, zeros above)
        return ERR_NOT_SPD
    col = np.empty(nv)
    for k in range(m):
        for i in range(nv):
            col[i] = 0.0
        col[rows[k]] = sign[k]
        forward_sub(M, nv, col)
        backward_sub_T(M, nv, col)
        for i in range(nv):
            Y[i, k] = col[i]
    for a in range(m):
        for b in range(m):
            D[a, b] = sign[a] * Y[rows[a], b]
    return OK


@njit(**COMPILED)
def _solve_active(D, b, active, lam, w):
    """λ on the active rows from D_AA λ_A = −b_A (zero elsewhere), then w = D λ + b. False: D_AA singular."""
    m = b.shape[0]
    idx = np.empty(m, dtype=np.int64)
    na = 0
    for i in range(m):
        lam[i] = 0.0
        if active[i]:
            idx[na] = i
            na += 1
    A = np.empty((na, na))
    r = np.empty(na)
    for a in range(na):
        r[a] = -b[idx[a]]
        for c in range(na):
            A[a, c] = D[idx[a], idx[c]]
    if not cholesky_lower(A, na, A):
        return False
    forward_sub(A, na, r)
    backward_sub_T(A, na, r)
    for a in range(na):
        lam[idx[a]] = r[a]
    for i in range(m):
        s = b[i]
        for k in range(m):
            s += D[i, k] * lam[k]
        w[i] = s
    return True


@njit(**COMPILED)
def mixed_lcp(D, b, bilateral, lam, w):
    """Solve ``w = D λ + b`` with ``w_i = 0`` (λ_i free) on the rows where ``bilateral[i]`` is true and
    ``λ_i ≥ 0, w_i ≥ 0, λ_i w_i = 0`` on the others, for a symmetric positive definite D: Murty's principal
    pivoting, least-index rule (module docstring). ``lam`` and ``w`` receive the solution, and on the active
    rows ``w`` is set to exactly zero, on the others ``lam``. Returns the number of pivots, or −1 when D is
    not positive definite on the active rows, −2 without convergence (neither happens for an SPD D)."""
    m = b.shape[0]
    active = np.zeros(m, dtype=np.bool_)
    scale_b = 0.0
    for i in range(m):
        scale_b = max(scale_b, abs(b[i]))
        active[i] = bilateral[i] or b[i] < 0.0
    for it in range(2 ** min(m, 20) + 2 * m + 2):
        if not _solve_active(D, b, active, lam, w):
            return -1
        scale_l = 0.0
        for i in range(m):
            scale_l = max(scale_l, abs(lam[i]))
        flip = -1
        for i in range(m):
            if bilateral[i]:
                continue
            if active[i] and lam[i] < -LCP_TOL * scale_l:
                flip = i
                break
            if not active[i] and w[i] < -LCP_TOL * scale_b:
                flip = i
                break
        if flip < 0:
            for i in range(m):
                if active[i]:
                    w[i] = 0.0
                    if not bilateral[i] and lam[i] < 0.0:
                        lam[i] = 0.0
                else:
                    lam[i] = 0.0
            return it
        active[flip] = not active[flip]
    return -2


@njit(**COMPILED)
def momentum_jump(rows, sign, lam, dp):
    """dp ← Jᵀ Λ, the jump of the generalized momenta p (seed 002's Poisson impulses) by the impulses Λ on the
    rows ``J_k = sign[k] e_{rows[k]}ᵀ``: an impact changes p by a finite amount at fixed q."""
    for i in range(dp.shape[0]):
        dp[i] = 0.0
    for k in range(rows.shape[0]):
        dp[rows[k]] += sign[k] * lam[k]
