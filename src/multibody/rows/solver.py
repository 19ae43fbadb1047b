"""The solver of one step's rows: bilateral, unilateral and friction rows in one problem at velocity level.

A step with rows (``contact/stepping_solver.py``) solves, in the tree's velocity coordinates,

    M (v⁺ − v_f) = Jᵀ λ,        u = J v⁺ = b + W λ,    W = J M⁻¹ Jᵀ,   b = J v_f (+ each row's bias),

with one *kind* per row (``kind``, beside the rows; the rows of one contact consecutive):

* :data:`BILATERAL` — λ free, ``w = u = 0`` (loop joints and constraints, latched or held coordinates; the bias
  in ``b`` carries the drift correction);
* :data:`UNILATERAL` — ``0 ≤ λ ⊥ w ≥ 0`` (joint stops, contact normals; the bias carries the gap and the
  restitution target);
* :data:`FRICTION` — two rows right after their normal row r: ``|λ_t| ≤ μ_r λ_r`` with maximal dissipation
  (``λ_t = −μ λ_n u_t/|u_t|`` when sliding), ``mu[r]`` on the normal row;
* :data:`COMPLIANT` — a contact normal of the compliant model's implicit step: λ the impulse of its force law at
  the step's end (``rows/kinds.py``; its gap in ``gap``, the law's parameters in the solver's ``law``).

The bilateral rows come first. They are eliminated exactly: a Cholesky factorization of their block W_BB with
diagonal pivoting keeps the independent rows (redundant loop rows, as a planar loop closed by a spatial joint
has, get λ = 0: their conditions follow from the others), and the other rows see the Schur complement
``W_UU − W_UB W_BB⁻¹ W_BU`` (the Delassus operator of the system with its bilateral constraints; Featherstone,
RBDA §8.3), on which the unilateral, friction and compliant conditions are solved. Finally the bilateral impulses
follow from the others: ``λ_B = −W_BB⁻¹ (b_B + W_BU λ_U)``.

Two solvers share the other rows, both from the impulses in ``lam`` at the call (a warm start: the last step's):

* projected Gauss–Seidel, row after row: the normal impulse ``λ_n ← max(0, λ_n − w_n / W_nn)`` (a compliant row's
  from its force law, ``rows/kinds.compliant_row``), then the pair of friction impulses
  ``λ_t ← proj_{|·| ≤ μ λ_n}(λ_t − w_t / ρ)`` with ρ the largest eigenvalue of their 2×2 block (a fixed point of
  these updates satisfies the conditions exactly: Alart & Curnier, Comput. Methods Appl. Mech. Eng. 92 (1991)
  353–375; Jourdan, Alart & Jean, ibid. 155 (1998) 31–47). Cheap per sweep, but its sweeps crawl when W is badly
  scaled (a hub of small inertia on spokes: 1e-4 m l²; masses 1e4 apart);
* semi-smooth Newton on the same conditions (``rows/newton.py``): a few iterations whatever the scaling, each a
  dense solve of the rows.

The warm start is checked first: when its residual is already below ``WARM`` times the tolerance — the impulses
of contacts at rest, which repeat from step to step to round-off — it is the solution, and no sweep runs (only
that far below: impulses that merely meet the tolerance are refined as below, so that a resting contact's forces
do not drift to the tolerance's size over the steps). Otherwise, up to ``DIRECT_ROWS`` rows (a quadruped's feet,
a stack of a few boxes, a wheel's two feet) the solve is direct: ``SWEEPS`` sweeps (they settle which contacts
stick, slide or open); when they leave every contact pressed and sticking without meeting the tolerance, that guess
is solved at once (``_sticking_solve``: every row active, ``W λ = −b`` by Cholesky — the step semi-smooth Newton
would take from there, without its Jacobian, pivoting and line search), kept when its impulses are feasible and its
residual meets the tolerance (a standing robot's feet while its posture still moves); else Newton; when Newton stalls (no descent: the conditions' kinks) or does not converge
within ``NEWTON_ITERATIONS``, Newton again from zero impulses (an impact, whose impulses owe nothing to the last
step's), then from sliding contacts (``_sliding_start``: where the rows outnumber the freedoms they move, a
sticking iterate can be a false minimum of the merit), then sweeps from the best iterate with the rest of the
budget (at a stick–slip transition of redundant contacts, where Newton's steps wander among equivalent impulses,
the sweeps settle; ``iterations`` sweeps of their own, not the rest of the attempts' budget: two feet of a
walker's legs landing side by side make two nearly equal normal rows, on which Newton crawls through its
iterations and the sweeps need some hundred to leave one foot open), and last Newton with the rows that the best
iterate pushes apart held open (``_opened_attempt``, from the rest of the attempts' budget: rows more than the
freedoms they move, whose data are inconsistent by a hair — a box tilted by 6e-13 rad between two pads of two
balls each, whose four gaps cannot close together in a step while both pads stick — have their solution on
another piece, with some rows open, O(λ) away; on the piece of the iterates the velocities miss by that hair in
the rows' null space, where Newton's steps stall; one principal pivot reaches the piece: K. G. Murty, *Linear
Complementarity, Linear and Nonlinear Programming*, Heldermann 1988, ch. 4); the impulses kept are the best
iterate of any stage. Larger sets sweep until no impulse changes by more than ``tolerance`` times the largest.
Either way the solve ends within ``iterations`` (a sweep or a Newton iteration counts one; twice that for a direct
solve whose Newton attempts fail) and reports its residual: the largest distance of the impulses from the conditions
(``rows/newton.residual``: the Alart–Curnier function, in impulse units) relative to the largest impulse. A step
whose residual is above ``tolerance`` is unconverged; the run counts such steps (:data:`RowSolver` ``stats``) and
says so.

This module is the one home of that numerics; which rows a step has, their J, kinds and biases, is the
assembly's (``contact/stepping_solver.py``, with the builders of ``rows/unit_rows.py`` and
``rows/point_rows.py`` and the loop rows of ``rows/constraint_rows.py``).
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from multibody.kernels.kkt import backward_sub_T, cholesky_lower, forward_sub
from multibody.kernels.spatial import KERNEL
from multibody.rows.kinds import BILATERAL, COMPLIANT, FRICTION, LAW_WIDTH, OPEN, UNILATERAL, compliant_row
from multibody.rows.newton import REGULARIZE, newton_rows, newton_scratch, row_scales, row_velocities, scaled_residual

__all__ = ["BILATERAL", "UNILATERAL", "FRICTION", "COMPLIANT", "RowSolver", "row_solver", "solve_rows",
           "DIRECT_ROWS", "ST_WORST", "ST_UNCONVERGED", "ST_MOST", "ST_LAST", "ST_STEPS", "ST_FIRST"]

#: the relative size of a pivot below which a bilateral row depends on the rows before it (and is dropped)
PIVOT_TOL = 1e-10
#: the most unilateral, friction and compliant rows solved directly (module docstring), and the sweeps before
#: each Newton start
DIRECT_ROWS, SWEEPS = 60, 2
#: the most iterations of one Newton attempt (where semi-smooth Newton converges, it does in a few tens)
NEWTON_ITERATIONS = 40
#: a warm start is kept as it is when its residual is below this fraction of the tolerance (module docstring)
WARM = 1e-3
#: the sweeps of the normal rows that start the last Newton attempt from sliding contacts (``_sliding_start``)
SLIDING_SWEEPS = 10
#: entries of a :class:`RowSolver`'s ``stats`` (over the steps of a run): the worst relative residual, the steps
#: that ended above the tolerance, the most iterations a step used, the last step's relative residual, the steps
#: solved, the time of the first unconverged step (set by the caller, which knows the time)
ST_WORST, ST_UNCONVERGED, ST_MOST, ST_LAST, ST_STEPS, ST_FIRST = range(6)

#: the solver's scratch for ``n`` rows: the pivoted factor ``L`` of W_BB, its row order ``perm``, the solved
#: columns ``Z`` (n, n) and a vector ``y``; Newton's scratch (``rows.newton.NewtonScratch``); the compliant rows'
#: law (``rows.kinds.K_*``; zeros without them) and the run's convergence ``stats`` (``ST_*``)
RowSolver = namedtuple("RowSolver", "L perm Z y newton law stats")


def row_solver(n, law=None):
    """A :class:`RowSolver` for up to ``n`` rows; ``law`` the compliant rows' (k, p, α) (``rows/kinds.py``)."""
    n = max(int(n), 1)
    laws = np.zeros(LAW_WIDTH)
    if law is not None:
        laws[:3] = law
    return RowSolver(np.zeros((n, n)), np.zeros(n, dtype=np.int64), np.zeros((n, n)), np.zeros(n),
                     newton_scratch(n), laws, np.zeros(6))


@njit(**KERNEL)
def _pivoted_cholesky(W, nb, L, perm):
    """L Lᵀ = W[perm[:r], perm[:r]] of the bilateral block W[:nb, :nb] by Cholesky with diagonal pivoting (the
    largest remaining pivot first), stopping at the first pivot below PIVOT_TOL times the largest diagonal: r is the
    number of independent rows (returned); ``perm`` their order, then the dropped rows. L holds the factor in its
    first r columns (rows in the order of ``perm``)."""
    big = 0.0
    for i in range(nb):
        perm[i] = i
        big = max(big, W[i, i])
        for j in range(nb):
            L[i, j] = W[i, j]    # the working copy: its trailing block is updated in place
    if big <= 0.0:
        return 0
    r = 0
    for k in range(nb):
        p = k
        for i in range(k + 1, nb):
            if L[i, i] > L[p, p]:
                p = i
        if L[p, p] <= PIVOT_TOL * big:
            break
        if p != k:
            perm[k], perm[p] = perm[p], perm[k]
            for j in range(nb):
                L[k, j], L[p, j] = L[p, j], L[k, j]
            for i in range(nb):
                L[i, k], L[i, p] = L[i, p], L[i, k]
        d = math.sqrt(L[k, k])
        L[k, k] = d
        for i in range(k + 1, nb):
            L[i, k] /= d
        for j in range(k + 1, nb):     # the whole trailing block (both triangles: later pivots swap them)
            for i in range(k + 1, nb):
                L[i, j] -= L[i, k] * L[j, k]
        r = k + 1
    return r


@njit(**KERNEL)
def _row_value(W, lam, b, r, n0, n):
    s = b[r]
    for j in range(n0, n):
        s += W[r, j] * lam[j]
    return s


@njit(**KERNEL, forceinline=True)
def projected_gauss_seidel(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scale, u, current):
    """The unilateral, friction and compliant conditions (module docstring) of rows ``n0 .. n − 1`` by projected
    Gauss–Seidel on W, b from the impulses in ``lam``, until no impulse changes by more than ``tol`` times the
    largest, at most ``iterations`` sweeps; ``scale`` the rows' 1 / W_rr and their friction pairs' 1 / ρ
    (``rows.newton.row_scales``). ``u`` holds the rows' velocities b + W λ throughout (computed first unless
    ``current``: a residual at these impulses left them there), each change of an impulse added along its column of
    W (its row: W is symmetric): a row's value is read, not summed, so that the sweep's path from row to row is a
    few operations instead of a dot product of the rows' length. Returns the number of sweeps made; ``u`` is left
    at the impulses reached, to the round-off of its updates (about ε |W| |Δλ| each: the residual after a direct
    solve's two sweeps reads it; after many sweeps the solver sums the velocities afresh)."""
    if not current:
        row_velocities(W, b, lam, n0, n, u)
    for it in range(iterations):
        change = 0.0
        top = 0.0
        r = n0
        while r < n:
            old = lam[r]
            if W[r, r] > 0.0:
                if kind[r] == COMPLIANT:
                    lam[r] = compliant_row(old, u[r], W[r, r], gap[r], law)
                elif kind[r] == BILATERAL:
                    lam[r] = old - u[r] * scale[r]
                else:
                    lam[r] = max(0.0, old - u[r] * scale[r])
            d = lam[r] - old
            if d != 0.0:
                w = W[r]
                for j in range(n0, n):
                    u[j] += w[j] * d
            change = max(change, abs(d))
            top = max(top, abs(lam[r]))
            if r + 2 < n and kind[r + 1] == FRICTION:
                o1, o2 = lam[r + 1], lam[r + 2]
                x1, x2 = o1 - u[r + 1] * scale[r + 1], o2 - u[r + 2] * scale[r + 1]    # (scale 0: an empty block)
                lim = mu[r] * max(lam[r], 0.0)
                norm = math.sqrt(x1 * x1 + x2 * x2)
                if norm > lim:
                    s = lim / norm
                    x1 *= s
                    x2 *= s
                lam[r + 1], lam[r + 2] = x1, x2
                d1, d2 = x1 - o1, x2 - o2
                if d1 != 0.0 or d2 != 0.0:
                    w1, w2 = W[r + 1], W[r + 2]
                    for j in range(n0, n):
                        u[j] += w1[j] * d1 + w2[j] * d2
                change = max(change, abs(d1), abs(d2))
                top = max(top, abs(x1), abs(x2))
                r += 3
            else:
                r += 1
        if change <= tol * top or top == 0.0:
            return it + 1
    return iterations


@njit(**KERNEL, forceinline=True)
def _relative(W, b, lam, kind, mu, gap, law, n0, n, scratch, current):
    """The residual of rows n0 .. n − 1 relative to the largest impulse (0 without impulses or rows); the rows'
    scales already in ``scratch.scale`` (``rows.newton.row_scales``, once per solve), and with ``current`` their
    velocities at λ in ``scratch.u``."""
    return _relative_to(scaled_residual(W, b, lam, kind, mu, gap, law, n0, n, scratch, current), lam, n0, n)


@njit(**KERNEL)
def _relative_to(top, lam, n0, n):
    """The residual ``top`` relative to the largest impulse of rows n0 .. n − 1 (:func:`_relative`)."""
    big = 0.0
    for r in range(n0, n):
        big = max(big, abs(lam[r]))
    return top / big if big > 0.0 else (0.0 if top == 0.0 else math.inf)


@njit(**KERNEL)
def _keep_if_better(lam, best, rel, best_rel, n0, n):
    """``best`` ← ``lam`` when its relative residual ``rel`` is below ``best_rel``; returns the better residual."""
    if rel < best_rel:
        for r in range(n0, n):
            best[r] = lam[r]
        return rel
    return best_rel


@njit(**KERNEL)
def _sliding_start(W, b, best, lam, kind, mu, n0, n):
    """``lam`` ← the best iterate with every contact sliding against its slip velocity, λ_t = −μ λ_n u_t/|u_t|, by
    sweeps on the normal rows: each normal impulse solved with its friction pair on the cone's edge against the slip
    at the current impulses (the slip's direction settles once the normal rows are met). Newton's start where the
    rows outnumber the freedoms they move and the normal rows ask for a velocity that the freedoms give only with a
    slip — a pendulum's tip pressed into the floor. There the merit ½|Φ|² has a false minimum at a sticking iterate
    (its residual the tiny slip velocity), where Newton's Jacobian is singular and from which a sticking start does
    not leave."""
    for r in range(n0, n):
        lam[r] = best[r]
    for sweep in range(SLIDING_SWEEPS):
        r = n0
        while r < n:
            if r + 2 < n and kind[r + 1] == FRICTION:
                at = best if sweep == 0 else lam
                u1, u2 = _row_value(W, at, b, r + 1, n0, n), _row_value(W, at, b, r + 2, n0, n)
                norm = math.sqrt(u1 * u1 + u2 * u2)
                if norm > 0.0:
                    d1, d2 = u1 / norm, u2 / norm
                    diag = W[r, r] - mu[r] * (W[r, r + 1] * d1 + W[r, r + 2] * d2)
                    if diag > 0.0:     # (else the slip would press the contact harder: left as it is)
                        ln = max(lam[r], 0.0)
                        lam[r], lam[r + 1], lam[r + 2] = ln, -mu[r] * ln * d1, -mu[r] * ln * d2
                        ln = max(0.0, ln - _row_value(W, lam, b, r, n0, n) / diag)
                        lam[r], lam[r + 1], lam[r + 2] = ln, -mu[r] * ln * d1, -mu[r] * ln * d2
                r += 3
            else:
                r += 1


@njit(**KERNEL)
def _opened_attempt(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scratch):
    """Newton (``rows.newton.newton_rows``, at most ``iterations``) from the best iterate ``scratch.best`` with the
    unilateral rows that it pushes apart held open (module docstring): those rows :data:`OPEN` in a copy of the
    kinds (``scratch.kinds``), their impulses (a contact's three) 0. A row is pushed apart when its Alart–Curnier
    value ρ u (ρ = 1 / W_rr) is above the tolerance the other way than a penetration, u > ``tol`` max|λ| W_rr: a row
    that fails the convergence test by separating. The iterate is left in ``lam``; returns the iterations made (0
    when no row was pushed apart)."""
    best, opened = scratch.best, scratch.kinds
    big = 0.0
    for r in range(n0, n):
        lam[r] = best[r]
        opened[r] = kind[r]
        big = max(big, abs(best[r]))
    count = 0
    for r in range(n0, n):
        if kind[r] == UNILATERAL and W[r, r] > 0.0 and _row_value(W, best, b, r, n0, n) > tol * big * W[r, r]:
            opened[r] = OPEN
            lam[r] = 0.0
            if r + 2 < n and kind[r + 1] == FRICTION:
                lam[r + 1] = lam[r + 2] = 0.0
            count += 1
    if count == 0:
        return 0
    it, _ = newton_rows(W, b, lam, opened, mu, gap, law, n0, n, tol, iterations, scratch)
    return abs(it)


@njit(**KERNEL, forceinline=True)
def _sticking_solve(W, b, lam, kind, mu, n0, n, A, y, x):
    """``x`` ← the impulses of rows n0 .. n − 1 with every contact pressed and sticking, the guess of the iterate
    ``lam`` when it has every unilateral row pressed (λ > 0) and every friction pair strictly inside its cone: then
    every row is active, u = b + W λ = 0, and λ = −W⁻¹ b by Cholesky (``kernels.kkt``, the block in ``A``, ``y``
    its scratch) — the step that semi-smooth Newton takes from that iterate (``rows/newton.py``: on the sticking
    piece Φ = ρ u, linear). Returns whether the guess holds: the iterate sticking, W positive definite and not nearly
    singular (no squared pivot below ``REGULARIZE`` times its row's diagonal, the scale at which Newton regularizes
    its system: more rows than the freedoms they move make W singular, their impulses not unique, and the sweeps and
    Newton take them) and the result feasible (λ_n ≥ 0, |λ_t| ≤ μ λ_n). Only rows of those two kinds take part
    (else False)."""
    r = n0
    while r < n:
        if kind[r] != UNILATERAL or not lam[r] > 0.0:
            return False
        if r + 2 < n and kind[r + 1] == FRICTION:
            if kind[r + 2] != FRICTION or not lam[r + 1] * lam[r + 1] + lam[r + 2] * lam[r + 2] < (mu[r] * lam[r]) ** 2:
                return False
            r += 3
        else:
            r += 1
    m = n - n0
    for i in range(m):
        y[i] = -b[n0 + i]
        for j in range(i + 1):
            A[i, j] = W[n0 + i, n0 + j]
    if not cholesky_lower(A, m, A):
        return False
    for i in range(m):
        if not A[i, i] * A[i, i] > REGULARIZE * W[n0 + i, n0 + i]:
            return False
    forward_sub(A, m, y)
    backward_sub_T(A, m, y)
    for i in range(m):
        x[n0 + i] = y[i]
    r = n0
    while r < n:
        if not x[r] >= 0.0:
            return False
        if r + 2 < n and kind[r + 1] == FRICTION:
            if not x[r + 1] * x[r + 1] + x[r + 2] * x[r + 2] <= (mu[r] * x[r]) ** 2:
                return False
            r += 3
        else:
            r += 1
    return True


@njit(**KERNEL, forceinline=True)
def solve_unilateral(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scratch):
    """Rows n0 .. n − 1 (no bilateral rows among them) solved to ``tol`` within ``iterations`` (module docstring:
    directly up to DIRECT_ROWS rows, else by sweeps). Returns ``(iterations used, relative residual)``; the impulses
    left in ``lam`` are the best iterate any stage reached."""
    row_scales(W, kind, n0, n, scratch.scale)     # (W's alone: for every sweep and residual below)
    if n - n0 > DIRECT_ROWS:
        used = projected_gauss_seidel(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scratch.scale, scratch.u,
                                      False)
        return used, _relative(W, b, lam, kind, mu, gap, law, n0, n, scratch, False)    # (u afresh: many sweeps)
    best = scratch.best
    rel = _relative(W, b, lam, kind, mu, gap, law, n0, n, scratch, False)
    if rel <= WARM * tol:          # the warm start already solves them (a resting contact's last impulses)
        return 0, rel
    used = min(SWEEPS, iterations)
    projected_gauss_seidel(W, b, lam, kind, mu, gap, law, n0, n, 0.0, used, scratch.scale, scratch.u, True)
    best_rel = _keep_if_better(lam, best, _relative(W, b, lam, kind, mu, gap, law, n0, n, scratch, True), math.inf, n0,
                               n)
    if not best_rel <= tol and used < iterations and _sticking_solve(W, b, lam, kind, mu, n0, n, scratch.jac,
                                                                     scratch.trial, scratch.step):    # they stick
        used += 1
        best_rel = _keep_if_better(scratch.step, best, _relative(W, b, scratch.step, kind, mu, gap, law, n0, n,
                                                                 scratch, False), best_rel, n0, n)
    for attempt in range(3):       # from the sweeps' iterate, from zero impulses (an impact's owe nothing), sliding
        if best_rel <= tol or used >= iterations:
            break
        if attempt == 1:
            for r in range(n0, n):
                lam[r] = 0.0
        elif attempt == 2:
            _sliding_start(W, b, best, lam, kind, mu, n0, n)
        it, top = newton_rows(W, b, lam, kind, mu, gap, law, n0, n, tol, min(NEWTON_ITERATIONS, iterations - used),
                              scratch)
        used += abs(it)
        # (Newton's last |Φ| is the residual at the impulses it leaves: the same rows' kinds)
        best_rel = _keep_if_better(lam, best, _relative_to(top, lam, n0, n), best_rel, n0, n)
    attempts = used
    if not best_rel <= tol:    # sweeps from the best iterate, a budget of ``iterations`` sweeps of their own
        for r in range(n0, n):
            lam[r] = best[r]
        used += projected_gauss_seidel(W, b, lam, kind, mu, gap, law, n0, n, tol, iterations, scratch.scale,
                                       scratch.u, False)
        best_rel = _keep_if_better(lam, best, _relative(W, b, lam, kind, mu, gap, law, n0, n, scratch, False), best_rel,
                                   n0, n)
    if not best_rel <= tol and attempts < iterations:    # the rows it pushes apart held open: the attempts' rest
        used += _opened_attempt(W, b, lam, kind, mu, gap, law, n0, n, tol,
                                min(NEWTON_ITERATIONS, iterations - attempts), scratch)
        best_rel = _keep_if_better(lam, best, _relative(W, b, lam, kind, mu, gap, law, n0, n, scratch, False), best_rel,
                                   n0, n)
    for r in range(n0, n):
        lam[r] = best[r]
    return used, best_rel


@njit(**KERNEL)
def solve_rows(W, b, lam, kind, mu, gap, nb, n, tol, iterations, R):
    """λ of the n rows (module docstring; the first ``nb`` bilateral) from W (n × n, overwritten by the Schur
    complement of the others), b (overwritten likewise), the gaps of the compliant rows and the warm start in
    ``lam`` (its bilateral entries are not used). ``R``: a :class:`RowSolver`, whose ``stats`` gain this solve.
    Returns ``(iterations, independent bilateral rows, relative residual)``."""
    rank = 0
    L, perm, Z, y = R.L, R.perm, R.Z, R.y
    if nb > 0:
        rank = _pivoted_cholesky(W, nb, L, perm)
        for i in range(rank):          # y = L⁻¹ b_B (kept rows)
            y[i] = b[perm[i]]
        forward_sub(L, rank, y)
        for u in range(nb, n):        # z_u = L⁻¹ W_B,u; the Schur complement of the other rows
            z = Z[u]
            for i in range(rank):
                z[i] = W[perm[i], u]
            forward_sub(L, rank, z)
            s = 0.0
            for i in range(rank):
                s += z[i] * y[i]
            b[u] -= s
        for u in range(nb, n):
            for v in range(nb, u + 1):
                s = 0.0
                for i in range(rank):
                    s += Z[u, i] * Z[v, i]
                W[u, v] -= s
                if v != u:
                    W[v, u] -= s
    used, rel = 0, 0.0
    if n > nb:
        used, rel = solve_unilateral(W, b, lam, kind, mu, gap, R.law, nb, n, tol, iterations, R.newton)
    if nb > 0:
        for i in range(rank):          # λ_B = −L⁻ᵀ (y + Σ_u z_u λ_u), the dropped rows 0
            s = y[i]
            for u in range(nb, n):
                s += Z[u, i] * lam[u]
            y[i] = -s
        backward_sub_T(L, rank, y)
        for i in range(nb):
            lam[i] = 0.0
        for i in range(rank):
            lam[perm[i]] = y[i]
    st = R.stats
    st[ST_WORST] = max(st[ST_WORST], rel)
    st[ST_LAST] = rel
    st[ST_MOST] = max(st[ST_MOST], float(used))
    st[ST_STEPS] += 1.0
    if not rel <= tol:
        st[ST_UNCONVERGED] += 1.0
    return used, rank, rel
