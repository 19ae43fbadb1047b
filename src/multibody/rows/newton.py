"""A direct solve of one step's unilateral, friction and compliant rows: semi-smooth Newton on the Alart–Curnier
function, with a line search.

The rows (``rows/solver.py``'s kinds; W the Delassus matrix, b the rows' free velocities with their biases) ask for

    u = b + W λ,   0 ≤ λ_n ⊥ u_n ≥ 0 (unilateral),   |λ_t| ≤ μ λ_n with maximal dissipation (friction),
    λ_n = h f(δ⁺, u_n) (compliant: the impulse of a Hunt–Crossley force at the step's end, below).

Alart and Curnier (Comput. Methods Appl. Mech. Eng. 92 (1991) 353–375) write these as one equation Φ(λ) = 0:

    Φ_n = λ_n − max(0, λ_n − ρ_n u_n),        Φ_t = λ_t − proj_{|·| ≤ μ λ_n⁺}(λ_t − ρ_t u_t),

(ρ > 0 any scale; here ρ_n = 1/W_nn and ρ_t = 1/the largest eigenvalue of the contact's 2×2 tangential block,
so that Φ is an impulse of the row's own size whatever the masses: the scaling that keeps the solve insensitive to
badly scaled W). Φ is piecewise smooth; Newton's method with its generalized Jacobian (each piece's derivative:
sticking or sliding, active or not) converges locally quadratically (Alart & Curnier; Hüeber, Stadler & Wohlmuth,
SIAM J. Sci. Comput. 30 (2008) 572–596), and a backtracking line search on ½|Φ|² globalizes it. Unlike projected
Gauss–Seidel, whose sweeps crawl when W is badly scaled — a hub of small inertia on long spokes, mass ratios of
1e4 — Newton's iterations do not depend on the conditioning, and its residual |Φ| is the true distance from the
conditions, not the size of the last change.

A compliant normal row (``rows/kinds.py``: a contact of the ``"compliant"`` model in its implicit step) has no
complementarity: Φ_n = λ_n − h f(u_n), its impulse less the Hunt–Crossley force's at the step's end, whose
derivative makes its Jacobian row; its friction rows are Coulomb's as above.

Newton's linear system is regularized: W + ε diag W for W in the Jacobian, with ε = ``REGULARIZE`` (not in Φ,
whose root is unchanged). Rows that depend on others (the four corners of a box's face on a floor; a wheel's two
feet and its hub: more rows than the body has freedoms) otherwise make the system singular in the directions in
which the contacts could trade impulses among themselves, where a Newton step leaps; regularized, the step keeps
near the impulses there are in those directions.

Scratch (``NewtonScratch``): the Jacobian (n, n) and a copy, its pivot order, Φ, the step, a trial λ, u, a best
λ, a copy of the rows' kinds (``rows/solver.py``'s) and the rows' scales ρ (:func:`row_scales`: they depend on W
alone, so a solve computes them once for its residuals, sweeps and Newton iterations; each is a division, and a
friction pair's a square root too, on the path of every sweep's row after row).
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from multibody.kernels.spatial import KERNEL, helper
from multibody.rows.kinds import BILATERAL, COMPLIANT, FRICTION, OPEN, compliant_impulse

__all__ = ["NewtonScratch", "newton_scratch", "newton_rows", "residual", "row_scales", "row_velocities",
           "scaled_residual"]

#: a pivot below this (relative to the largest entry of the Jacobian) belongs to a row that depends on the others
PIVOT = 1e-12
#: the regularization ε of W (W + ε diag W; the module docstring)
REGULARIZE = 1e-8
#: the line search's sufficient decrease and its halvings; the damping's first and largest value (the rows of Φ are
#: impulses scaled by ρ, so their Jacobian's diagonal is of order 1)
ARMIJO, TRIES, DAMPING_MIN, DAMPING_MAX = 1e-4, 10, 1e-8, 1e4

NewtonScratch = namedtuple("NewtonScratch", "jac saved perm phi step trial u best kinds scale")


def newton_scratch(n):
    """The scratch of :func:`newton_rows` for up to ``n`` rows."""
    n = max(int(n), 1)
    return NewtonScratch(np.zeros((n, n)), np.zeros((n, n)), np.zeros(n, dtype=np.int64),
                         *(np.zeros(n) for _ in range(5)), np.zeros(n, dtype=np.int64), np.zeros(n))


@njit(**KERNEL, forceinline=True)
def row_velocities(W, b, lam, n0, n, u):
    """u = b + W λ on rows n0 .. n − 1, each row's sum in the order of the columns, two rows at a time (two sums that
    do not wait for each other)."""
    r = n0
    while r + 1 < n:
        s0, s1 = b[r], b[r + 1]
        w0, w1 = W[r], W[r + 1]
        for j in range(n0, n):
            x = lam[j]
            s0 += w0[j] * x
            s1 += w1[j] * x
        u[r], u[r + 1] = s0, s1
        r += 2
    if r < n:
        s0 = b[r]
        for j in range(n0, n):
            s0 += W[r, j] * lam[j]
        u[r] = s0


@njit(**KERNEL, forceinline=True)
def row_scales(W, kind, n0, n, scale):
    """``scale`` ← each row's ρ of Φ (module docstring) for rows n0 .. n − 1: 1 / W_rr of a normal, bilateral or
    compliant row (0 where W_rr ≤ 0: a row that moves nothing), 1 / the largest eigenvalue of the 2×2 block of a
    friction pair after its normal row, on both its rows (:func:`_tangent_scale`; 0 for an empty block)."""
    r = n0
    while r < n:
        scale[r] = 1.0 / W[r, r] if W[r, r] > 0.0 else 0.0
        if r + 2 < n and kind[r + 1] == FRICTION:     # (the sweeps' walk: any row with a friction pair after it)
            scale[r + 1] = scale[r + 2] = _tangent_scale(W, r + 1)
            r += 3
        else:
            r += 1


@njit(**KERNEL)
def _tangent_scale(W, r):
    """1 / the largest eigenvalue of the 2×2 block of friction rows r, r + 1 (0 for an empty block)."""
    a, bb, d = W[r, r], W[r, r + 1], W[r + 1, r + 1]
    top = 0.5 * (a + d) + math.sqrt(0.25 * (a - d) * (a - d) + bb * bb)
    return 1.0 / top if top > 0.0 else 0.0


@helper
def _w(W, eps, r, j):
    """Entry (r, j) of W + ε diag W."""
    return W[r, j] * (1.0 + eps) if r == j else W[r, j]


@njit(**KERNEL, forceinline=True)
def _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, jac, with_jac, scale):
    """Φ (module docstring) of rows n0 .. n − 1 at λ with u = b + (W + ε diag W) λ, into ``phi``; with ``with_jac`` its
    generalized Jacobian into ``jac``; ``scale`` the rows' ρ (:func:`row_scales`). Returns ½|Φ|²."""
    merit = 0.0
    r = n0
    while r < n:
        kr = kind[r]
        if with_jac:
            for j in range(n0, n):
                jac[r, j] = 0.0
        if kr == FRICTION or kr == OPEN:    # a row held open, or a friction pair without its normal row: no force
            phi[r] = lam[r]
            if with_jac:
                jac[r, r] = 1.0
            merit += 0.5 * phi[r] * phi[r]
            r += 1
            continue
        if kr == BILATERAL:
            rho = scale[r] if scale[r] > 0.0 else 1.0
            phi[r] = rho * u[r]
            if with_jac:
                for j in range(n0, n):
                    jac[r, j] = rho * _w(W, eps, r, j)
        elif kr == COMPLIANT:
            f, df = compliant_impulse(u[r], gap[r], law)
            phi[r] = lam[r] - f
            if with_jac:
                for j in range(n0, n):
                    jac[r, j] = -df * _w(W, eps, r, j)
                jac[r, r] += 1.0
        else:                   # UNILATERAL
            rho = scale[r] if scale[r] > 0.0 else 1.0
            if lam[r] - rho * u[r] > 0.0:
                phi[r] = rho * u[r]
                if with_jac:
                    for j in range(n0, n):
                        jac[r, j] = rho * _w(W, eps, r, j)
            else:
                phi[r] = lam[r]
                if with_jac:
                    jac[r, r] = 1.0
        merit += 0.5 * phi[r] * phi[r]
        if r + 2 < n and kind[r + 1] == FRICTION:
            t = r + 1
            rho = scale[t]
            x1 = lam[t] - rho * u[t]
            x2 = lam[t + 1] - rho * u[t + 1]
            radius = mu[r] * max(lam[r], 0.0)
            norm = math.sqrt(x1 * x1 + x2 * x2)
            if radius <= 0.0:           # no normal impulse: no friction, Φ_t = λ_t
                phi[t], phi[t + 1] = lam[t], lam[t + 1]
                if with_jac:
                    for j in range(n0, n):
                        jac[t, j] = 0.0
                        jac[t + 1, j] = 0.0
                    jac[t, t] = 1.0
                    jac[t + 1, t + 1] = 1.0
            elif norm <= radius:        # sticking: Φ_t = ρ u_t
                phi[t], phi[t + 1] = rho * u[t], rho * u[t + 1]
                if with_jac:
                    for j in range(n0, n):
                        jac[t, j] = rho * _w(W, eps, t, j)
                        jac[t + 1, j] = rho * _w(W, eps, t + 1, j)
            else:                       # sliding: Φ_t = λ_t − R x/|x|
                e1, e2 = x1 / norm, x2 / norm
                phi[t], phi[t + 1] = lam[t] - radius * e1, lam[t + 1] - radius * e2
                if with_jac:
                    s = radius / norm
                    p11, p12, p22 = s * (1.0 - e1 * e1), -s * e1 * e2, s * (1.0 - e2 * e2)
                    for j in range(n0, n):   # −s (I − x̂x̂ᵀ)(E_t − ρ W_t)
                        jac[t, j] = rho * (p11 * _w(W, eps, t, j) + p12 * _w(W, eps, t + 1, j))
                        jac[t + 1, j] = rho * (p12 * _w(W, eps, t, j) + p22 * _w(W, eps, t + 1, j))
                    jac[t, t] += 1.0 - p11
                    jac[t, t + 1] -= p12
                    jac[t + 1, t] -= p12
                    jac[t + 1, t + 1] += 1.0 - p22
                    if lam[r] > 0.0:
                        jac[t, r] -= mu[r] * e1
                        jac[t + 1, r] -= mu[r] * e2
            merit += 0.5 * (phi[t] * phi[t] + phi[t + 1] * phi[t + 1])
            r += 3
        else:
            r += 1
    return merit


@helper
def _larger(a, lo, hi, top, at):
    """(|a[i]|, i) of the largest |a[i]| for lo ≤ i < hi that exceeds ``top`` (the first, when several), else
    (top, at): one scan of a row or a column (a view) of :func:`_solve`'s rook search."""
    for i in range(lo, hi):
        if abs(a[i]) > top:
            top, at = abs(a[i]), i
    return top, at


@njit(**KERNEL)
def _solve(A, perm, n0, n, x):
    """x ← −A⁻¹ x on rows n0 .. n − 1 by Gaussian elimination with rook pivoting (A overwritten; ``perm`` the columns'
    order). Each pivot is an entry that is the largest of both its row and its column in the block left, found by
    searching a column, then a row, ... from the diagonal until neither moves (Poole & Neal, "The rook's pivoting
    strategy", J. Comput. Appl. Math. 123 (2000) 353–369; Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd
    ed., §9.1): its growth factor is below 1.5 n^(3/4 ln n), nearly complete pivoting's bound (L. V. Foster, J. Comput.
    Appl. Math. 86 (1997) 177–194), and it reveals rank as complete pivoting does in practice, at a few scans of a row
    and a column per pivot instead of the whole block (Solo12's 12 rows while it settles: the system formed and solved
    in 0.86 µs instead of 1.39). The elimination stops where complete pivoting would: at the first block whose largest
    entry is below PIVOT times the largest of A (the block searched in full only when the rook's pivot is that small);
    the unknowns left (rows that depend on the others: redundant contacts) are 0 — a bounded solution of the consistent
    system."""
    for i in range(n0, n):
        perm[i] = i
    big = 0.0
    for i in range(n0, n):
        for j in range(n0, n):
            big = max(big, abs(A[i, j]))
    rank = n
    for k in range(n0, n):
        q = k
        top, p = _larger(A[:, k], k + 1, n, abs(A[k, k]), k)    # the largest of column k ...
        while True:                    # ... then of its row, of that column, until neither moves
            top, j = _larger(A[p], k, n, top, q)
            if j == q:
                break
            q = j
            top, i = _larger(A[:, q], k, n, top, p)
            if i == p:
                break
            p = i
        if top <= PIVOT * big:         # complete pivoting's test: the block's largest entry
            for i in range(k, n):
                for j in range(k, n):
                    if abs(A[i, j]) > top:
                        top, p, q = abs(A[i, j]), i, j
            if top <= PIVOT * big:
                rank = k
                break
        if p != k:
            for j in range(n0, n):
                A[k, j], A[p, j] = A[p, j], A[k, j]
            x[k], x[p] = x[p], x[k]
        if q != k:
            for i in range(n0, n):
                A[i, k], A[i, q] = A[i, q], A[i, k]
            perm[k], perm[q] = perm[q], perm[k]
        d = A[k, k]
        for i in range(k + 1, n):
            f = A[i, k] / d
            if f != 0.0:
                for j in range(k + 1, n):
                    A[i, j] -= f * A[k, j]
                x[i] -= f * x[k]
    for k in range(rank, n):
        x[k] = 0.0
    for k in range(rank - 1, n0 - 1, -1):
        s = x[k]
        for j in range(k + 1, rank):
            s -= A[k, j] * x[j]
        x[k] = s / A[k, k]
    for k in range(n0, n):      # undo the columns' order: the unknown of column perm[k] is x[k]
        A[k, n0] = x[k]
    for k in range(n0, n):
        x[perm[k]] = -A[k, n0]


@njit(**KERNEL)
def residual(W, b, lam, kind, mu, gap, law, n0, n, scratch):
    """The largest |Φ| of rows n0 .. n − 1 at λ (module docstring): how far the impulses are from the conditions,
    in impulse units."""
    row_scales(W, kind, n0, n, scratch.scale)
    return scaled_residual(W, b, lam, kind, mu, gap, law, n0, n, scratch, False)


@njit(**KERNEL, forceinline=True)
def scaled_residual(W, b, lam, kind, mu, gap, law, n0, n, scratch, current):
    """:func:`residual` with the rows' scales already in ``scratch.scale`` (:func:`row_scales` of this W), and with
    ``current`` the rows' velocities b + W λ already in ``scratch.u`` (``rows.solver.projected_gauss_seidel``
    leaves them)."""
    if not current:
        row_velocities(W, b, lam, n0, n, scratch.u)
    _phi(W, REGULARIZE, lam, scratch.u, kind, mu, gap, law, n0, n, scratch.phi, scratch.jac, False, scratch.scale)
    top = 0.0
    for r in range(n0, n):
        top = max(top, abs(scratch.phi[r]))
    return top


@njit(**KERNEL)
def _largest(phi, lam, n0, n):
    """(largest |Φ|, largest |λ|)."""
    top = 0.0
    big = 0.0
    for r in range(n0, n):
        top = max(top, abs(phi[r]))
        big = max(big, abs(lam[r]))
    return top, big


@njit(**KERNEL)
def _system(J, phi, damping, n0, n, A, x):
    """A, x ← Newton's system J x = −Φ (undamped: A = J, x = Φ, solved as ``A x = −x``), or Levenberg–Marquardt's
    (JᵀJ + δ I) x = −JᵀΦ for a damping δ > 0."""
    if damping == 0.0:
        for r in range(n0, n):
            x[r] = phi[r]
            for j in range(n0, n):
                A[r, j] = J[r, j]
        return
    for r in range(n0, n):
        s = 0.0
        for k in range(n0, n):
            s += J[k, r] * phi[k]
        x[r] = s
        for j in range(n0, r + 1):
            s = 0.0
            for k in range(n0, n):
                s += J[k, r] * J[k, j]
            A[r, j] = s
            A[j, r] = s
        A[r, r] += damping


@njit(**KERNEL)
def newton_rows(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scratch):
    """Solve the conditions of rows n0 .. n − 1 (module docstring) by semi-smooth Newton from the impulses in
    ``lam`` (a warm start), until the largest |Φ| is at most ``tol`` times the largest impulse (or exactly 0), or
    ``iterations`` iterations. ``gap`` and ``law`` (:data:`K_STIFF` ...) serve the compliant rows.

    Each iteration takes Newton's step, ∂Φ x = −Φ, with a backtracking line search on ½|Φ|² (at most ``TRIES``
    halvings); when it finds no decrease, the step of Levenberg–Marquardt, (∂Φᵀ∂Φ + δ I) x = −∂ΦᵀΦ, with a damping
    δ that grows a hundredfold until it does (a damped step is shorter, turns towards the steepest descent and stays
    out of the directions in which Φ barely changes — two contacts on one line that could trade opposite friction
    impulses, where Newton's step leaps). δ falls tenfold after each success, and Newton's own step returns below
    ``DAMPING_MIN``, so the last iterations converge quadratically. Returns ``(iterations made, largest |Φ| at the
    end)``, the iterations counted negative when δ passed ``DAMPING_MAX`` without a decrease (stalled)."""
    u, phi, step, trial, jac, scale = scratch.u, scratch.phi, scratch.step, scratch.trial, scratch.jac, scratch.scale
    eps = REGULARIZE
    row_scales(W, kind, n0, n, scale)
    row_velocities(W, b, lam, n0, n, u)
    merit = _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, jac, False, scale)
    damping = 0.0
    for it in range(iterations + 1):
        top, big = _largest(phi, lam, n0, n)
        if top <= tol * big or top == 0.0 or it == iterations:
            return it, top
        # the Jacobian at λ, only for an iteration that is made (Φ evaluated again: the same numbers)
        _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, scratch.saved, True, scale)
        while True:
            _system(scratch.saved, phi, damping, n0, n, jac, step)
            _solve(jac, scratch.perm, n0, n, step)
            t = 1.0
            # Armijo's decrease along Newton's step (whose slope is −2 merit), any decrease along a damped one
            cut = 2.0 * ARMIJO if damping == 0.0 else 0.0
            for _ in range(TRIES):
                for r in range(n0, n):
                    trial[r] = lam[r] + t * step[r]
                row_velocities(W, b, trial, n0, n, u)
                trial_merit = _phi(W, eps, trial, u, kind, mu, gap, law, n0, n, phi, jac, False, scale)
                if trial_merit < (1.0 - cut * t) * merit:
                    break
                t *= 0.5
            if trial_merit < (1.0 - cut * t) * merit:
                break
            # no decrease: Φ and u back at λ (the line search left the last trial's), for the damped step or the end
            row_velocities(W, b, lam, n0, n, u)
            _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, jac, False, scale)
            damping = max(100.0 * damping, DAMPING_MIN)
            if damping > DAMPING_MAX:
                return -(it + 1), top
        damping = 0.1 * damping if damping >= 10.0 * DAMPING_MIN else 0.0
        for r in range(n0, n):
            lam[r] = trial[r]
        merit = trial_merit     # (Φ and u are the trial's, now λ's)
    return iterations, 0.0
