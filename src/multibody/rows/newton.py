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
conditions, not the size of the last change. A Jacobian row that depends on the others (redundant contacts: the
four corners of a box's face and more) has no pivot; its step is 0 (the system is consistent: any solution will
do, the impulses among redundant contacts are not unique).

A compliant normal row (a contact of the ``"compliant"`` model in its implicit step) has no complementarity: its
impulse is the Hunt–Crossley force (``contact/compliant_forces.py``) at the step's end, with the penetration
δ⁺ = −φ − h u_n (φ the gap at the step's start) and the approach speed −u_n,

    Φ_n = λ_n − h k (δ⁺)^p (1 − (3/2) α u_n)   (0 when δ⁺ ≤ 0 or the bracket is negative),

an implicit (backward Euler) treatment of the contact force: a stiffness that would make an explicit step unstable
costs nothing here. Its friction rows stay Coulomb's, exact (sticking is sticking: the documented alternative to a
regularized friction that creeps).

Scratch (``NewtonScratch``): the Jacobian (n, n) and a copy, its pivot order, Φ, the step, a trial λ and u.
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from multibody.kernels.spatial import KERNEL, helper

__all__ = ["NewtonScratch", "newton_scratch", "newton_rows", "residual", "COMPLIANT", "K_STIFF", "K_EXP", "K_DAMP",
           "K_H"]

#: the kinds of rows (``rows/solver.py``), and the compliant normal row of this module
BILATERAL, UNILATERAL, FRICTION, COMPLIANT = 0, 1, 2, 3
#: entries of a compliant row's law: stiffness k, exponent p, damping α, the step h
K_STIFF, K_EXP, K_DAMP, K_H = 0, 1, 2, 3
#: a pivot below this (relative to the largest diagonal of the Jacobian) belongs to a row that depends on the others
PIVOT = 1e-12
#: the regularization ε of W (W + ε diag W): rows that depend on others (redundant contacts) then share their impulse
#: evenly instead of making the Newton system singular; it moves a resting contact by ε times its velocity change, a
#: relative 1e-10, below the solve's tolerance
REGULARIZE = 1e-10
#: the line search's sufficient decrease and its halvings; the damping's first and largest value (the rows of Φ are
#: impulses scaled by ρ, so their Jacobian's diagonal is of order 1)
ARMIJO, TRIES, DAMPING_MIN, DAMPING_MAX = 1e-4, 10, 1e-8, 1e4
#: the sweeps of projected Gauss–Seidel before each Newton start
SWEEPS = 2

NewtonScratch = namedtuple("NewtonScratch", "jac saved perm phi step trial u best")


def newton_scratch(n):
    """The scratch of :func:`newton_rows` for up to ``n`` rows."""
    n = max(int(n), 1)
    return NewtonScratch(np.zeros((n, n)), np.zeros((n, n)), np.zeros(n, dtype=np.int64),
                         *(np.zeros(n) for _ in range(5)))


@njit(**KERNEL)
def _velocities(W, b, lam, n0, n, u, eps):
    """u = b + (W + ε diag W) λ on rows n0 .. n − 1."""
    for r in range(n0, n):
        s = b[r] + eps * W[r, r] * lam[r]
        for j in range(n0, n):
            s += W[r, j] * lam[j]
        u[r] = s


@njit(**KERNEL)
def _tangent_scale(W, r):
    """1 / the largest eigenvalue of the 2×2 block of friction rows r, r + 1 (0 for an empty block)."""
    a, bb, d = W[r, r], W[r, r + 1], W[r + 1, r + 1]
    top = 0.5 * (a + d) + math.sqrt(0.25 * (a - d) * (a - d) + bb * bb)
    return 1.0 / top if top > 0.0 else 0.0


@njit(**KERNEL)
def compliant_impulse(lam_n, u_n, gap, law):
    """The Hunt–Crossley impulse h f of a compliant row at the end-of-step velocity u_n (module docstring) and its
    derivative with respect to u_n: ``(impulse, d impulse / d u_n)``."""
    k, p, alpha, h = law[K_STIFF], law[K_EXP], law[K_DAMP], law[K_H]
    delta = -gap - h * u_n
    damp = 1.0 - 1.5 * alpha * u_n
    if delta <= 0.0 or damp <= 0.0:
        return 0.0, 0.0
    elastic = k * delta ** p
    return h * elastic * damp, h * (-h * p * k * delta ** (p - 1.0) * damp - 1.5 * alpha * elastic)


@helper
def _w(W, eps, r, j):
    """Entry (r, j) of W + ε diag W."""
    return W[r, j] * (1.0 + eps) if r == j else W[r, j]


@njit(**KERNEL)
def _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, jac, with_jac):
    """Φ (module docstring) of rows n0 .. n − 1 at λ with u = b + (W + ε diag W) λ, into ``phi``; with ``with_jac`` its
    generalized Jacobian into ``jac``. Returns ½|Φ|²."""
    merit = 0.0
    r = n0
    while r < n:
        kr = kind[r]
        if with_jac:
            for j in range(n0, n):
                jac[r, j] = 0.0
        if kr == FRICTION:      # a friction pair without its normal row before it (not assembled so): no force
            phi[r] = lam[r]
            if with_jac:
                jac[r, r] = 1.0
            merit += 0.5 * phi[r] * phi[r]
            r += 1
            continue
        if kr == BILATERAL:
            rho = 1.0 / W[r, r] if W[r, r] > 0.0 else 1.0
            phi[r] = rho * u[r]
            if with_jac:
                for j in range(n0, n):
                    jac[r, j] = rho * _w(W, eps, r, j)
        elif kr == COMPLIANT:
            f, df = compliant_impulse(lam[r], u[r], gap[r], law)
            phi[r] = lam[r] - f
            if with_jac:
                for j in range(n0, n):
                    jac[r, j] = -df * _w(W, eps, r, j)
                jac[r, r] += 1.0
        else:                   # UNILATERAL
            rho = 1.0 / W[r, r] if W[r, r] > 0.0 else 1.0
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
            rho = _tangent_scale(W, t)
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


@njit(**KERNEL)
def _solve(jac, perm, n0, n, x):
    """x ← −jac⁻¹ x on rows n0 .. n − 1 by Gaussian elimination with partial pivoting (jac overwritten); the
    unknown of a pivot below PIVOT (a dependent row) is set to 0."""
    big = 0.0
    for i in range(n0, n):
        perm[i] = i
        big = max(big, abs(jac[i, i]))
    tiny = PIVOT * max(big, 1e-300)
    for k in range(n0, n):
        p = k
        for i in range(k + 1, n):
            if abs(jac[i, k]) > abs(jac[p, k]):
                p = i
        if p != k:
            for j in range(n0, n):
                jac[k, j], jac[p, j] = jac[p, j], jac[k, j]
            x[k], x[p] = x[p], x[k]
        d = jac[k, k]
        if abs(d) <= tiny:
            continue
        for i in range(k + 1, n):
            f = jac[i, k] / d
            if f != 0.0:
                jac[i, k] = f
                for j in range(k + 1, n):
                    jac[i, j] -= f * jac[k, j]
                x[i] -= f * x[k]
    for k in range(n - 1, n0 - 1, -1):
        d = jac[k, k]
        if abs(d) <= tiny:
            x[k] = 0.0
            continue
        s = x[k]
        for j in range(k + 1, n):
            s -= jac[k, j] * x[j]
        x[k] = s / d
    for k in range(n0, n):
        x[k] = -x[k]


@njit(**KERNEL)
def residual(W, b, lam, kind, mu, gap, law, n0, n, scratch):
    """The largest |Φ| of rows n0 .. n − 1 at λ (module docstring): how far the impulses are from the conditions,
    in impulse units."""
    eps = REGULARIZE
    _velocities(W, b, lam, n0, n, scratch.u, eps)
    _phi(W, eps, lam, scratch.u, kind, mu, gap, law, n0, n, scratch.phi, scratch.jac, False)
    top = 0.0
    for r in range(n0, n):
        top = max(top, abs(scratch.phi[r]))
    return top


@njit(**KERNEL)
def compliant_row(lam, w, diag, gap, law):
    """The impulse λ of a compliant row whose velocity is ``w`` at the impulse ``lam`` and varies as ``diag`` (W_nn)
    with it: the root of λ = h f(w + diag (λ − lam)) (module docstring), by Newton's method kept in a bracket
    (the left side grows with λ, the right side falls: one root, in [0, h f(w − diag lam)])."""
    lo, hi = 0.0, compliant_impulse(0.0, w - diag * lam, gap, law)[0]
    x = min(max(lam, lo), hi)
    for _ in range(60):
        f, df = compliant_impulse(x, w + diag * (x - lam), gap, law)
        g = x - f
        if g > 0.0:
            hi = x
        else:
            lo = x
        if g == 0.0 or hi - lo <= 1e-15 * hi:
            break
        slope = 1.0 - df * diag
        y = x - g / slope if slope > 0.0 else 0.5 * (lo + hi)
        x = y if lo < y < hi else 0.5 * (lo + hi)
    return x


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
def newton_rows(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scratch):
    """Solve the conditions of rows n0 .. n − 1 (module docstring) by semi-smooth Newton from the impulses in
    ``lam`` (a warm start), until the largest |Φ| is at most ``tol`` times the largest impulse (or exactly 0), or
    ``iterations`` iterations. ``gap`` and ``law`` (:data:`K_STIFF` ...) serve the compliant rows.

    Each iteration takes the step x of (∂Φ + δ I) x = −Φ with a backtracking line search on ½|Φ|² (at most
    ``TRIES`` halvings); when it finds no decrease, the damping δ grows a hundredfold and the step is solved again
    (Levenberg–Marquardt's globalization: a damped step is shorter and turns towards the steepest descent, and stays
    out of the directions in which Φ barely changes — the impulses that redundant contacts could trade among
    themselves, where a pure Newton step leaps). δ starts at 0 and falls tenfold after each success, so the last
    iterations are Newton's and converge quadratically. Returns ``(iterations made, largest |Φ| at the end)``, the
    iterations counted negative when the damping passed ``DAMPING_MAX`` without a decrease (stalled: a few sweeps of
    projected Gauss–Seidel, ``rows/solver.py``, then a new start, get past such a point)."""
    u, phi, step, trial, jac = scratch.u, scratch.phi, scratch.step, scratch.trial, scratch.jac
    eps = REGULARIZE
    _velocities(W, b, lam, n0, n, u, eps)
    merit = _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, scratch.saved, True)
    damping = 0.0
    for it in range(iterations + 1):
        top, big = _largest(phi, lam, n0, n)
        if top <= tol * big or top == 0.0 or it == iterations:
            return it, top
        while True:
            for r in range(n0, n):
                step[r] = phi[r]
                for j in range(n0, n):
                    jac[r, j] = scratch.saved[r, j]
                jac[r, r] += damping
            _solve(jac, scratch.perm, n0, n, step)
            t = 1.0
            for _ in range(TRIES):
                for r in range(n0, n):
                    trial[r] = lam[r] + t * step[r]
                _velocities(W, b, trial, n0, n, u, eps)
                trial_merit = _phi(W, eps, trial, u, kind, mu, gap, law, n0, n, phi, jac, False)
                if trial_merit <= (1.0 - 2.0 * ARMIJO * t) * merit:
                    break
                t *= 0.5
            if trial_merit <= (1.0 - 2.0 * ARMIJO * t) * merit:
                break
            damping = max(100.0 * damping, DAMPING_MIN)
            if damping > DAMPING_MAX:
                _velocities(W, b, lam, n0, n, u, eps)
                _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, jac, False)
                return -(it + 1), top
        damping = 0.1 * damping if damping > DAMPING_MIN else 0.0
        for r in range(n0, n):
            lam[r] = trial[r]
        merit = _phi(W, eps, lam, u, kind, mu, gap, law, n0, n, phi, scratch.saved, True)
    return iterations, 0.0


@njit(**KERNEL)
def gauss_seidel(W, b, lam, kind, mu, gap, law, n0, n, sweeps):
    """``sweeps`` sweeps of projected Gauss–Seidel over rows n0 .. n − 1: a unilateral row's impulse
    ``max(0, λ − w / W_rr)``, a compliant row's by :func:`compliant_row`, then its friction pair projected on its
    disc, ``proj(λ_t − w_t / ρ)``."""
    for _ in range(sweeps):
        r = n0
        while r < n:
            kr = kind[r]
            w = b[r]
            for j in range(n0, n):
                w += W[r, j] * lam[j]
            if W[r, r] > 0.0:
                if kr == UNILATERAL:
                    lam[r] = max(0.0, lam[r] - w / W[r, r])
                elif kr == COMPLIANT:
                    lam[r] = compliant_row(lam[r], w, W[r, r], gap[r], law)
                elif kr == BILATERAL:
                    lam[r] -= w / W[r, r]
                else:
                    lam[r] = 0.0
            if kr != FRICTION and r + 2 < n and kind[r + 1] == FRICTION:
                t = r + 1
                rho = _tangent_scale(W, t)
                w1, w2 = b[t], b[t + 1]
                for j in range(n0, n):
                    w1 += W[t, j] * lam[j]
                    w2 += W[t + 1, j] * lam[j]
                x1, x2 = lam[t] - rho * w1, lam[t + 1] - rho * w2
                lim = mu[r] * max(lam[r], 0.0)
                norm = math.sqrt(x1 * x1 + x2 * x2)
                if norm > lim:
                    s = lim / norm
                    x1 *= s
                    x2 *= s
                lam[t], lam[t + 1] = x1, x2
                r += 3
            else:
                r += 1


@njit(**KERNEL)
def solve_contact(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scratch):
    """Rows n0 .. n − 1 solved to ``tol`` (the largest |Φ| relative to the largest impulse): a few sweeps of
    :func:`gauss_seidel` from the warm start in ``lam`` (they settle which contacts stick, slide or open), then
    :func:`newton_rows`; when Newton stalls, Newton again from zero impulses (an impact, whose impulses have nothing
    to do with the last step's), then sweeps and Newton in turn, within ``iterations`` in all (a sweep counts as an
    iteration). Returns ``(iterations used, largest |Φ|)``."""
    gauss_seidel(W, b, lam, kind, mu, gap, law, n0, n, SWEEPS)
    used = SWEEPS
    it, top = newton_rows(W, b, lam, kind, mu, gap, law, n0, n, tol, max(1, iterations - used), scratch)
    used += abs(it)
    if it >= 0 or used >= iterations:
        return used, top
    for r in range(n0, n):
        scratch.best[r] = lam[r]
        lam[r] = 0.0
    best = top
    it, top = newton_rows(W, b, lam, kind, mu, gap, law, n0, n, tol, max(1, iterations - used), scratch)
    used += abs(it)
    if it >= 0:
        return used, top
    if best < top:
        for r in range(n0, n):
            lam[r] = scratch.best[r]
    while used < iterations:
        gauss_seidel(W, b, lam, kind, mu, gap, law, n0, n, SWEEPS)
        used += SWEEPS
        it, top = newton_rows(W, b, lam, kind, mu, gap, law, n0, n, tol, max(1, iterations - used), scratch)
        used += abs(it)
        if it >= 0:
            break
    return used, top
