"""The solver of one step's rows: bilateral, unilateral and friction rows in one problem at velocity level.

A step with rows (``contact/stepping_solver.py``) solves, in the tree's velocity coordinates,

    M (v⁺ − v_f) = Jᵀ λ,        u = J v⁺ = b + W λ,    W = J M⁻¹ Jᵀ,   b = J v_f (+ each row's bias),

with one *kind* per row (``kind``, beside the rows; the rows of one contact consecutive):

* :data:`BILATERAL` — λ free, ``w = u = 0`` (loop joints and constraints, latched or held coordinates; the bias
  in ``b`` carries the drift correction);
* :data:`UNILATERAL` — ``0 ≤ λ ⊥ w ≥ 0`` (joint stops, contact normals; the bias carries the gap and the
  restitution target);
* :data:`FRICTION` — two rows right after their normal row r: ``|λ_t| ≤ μ_r λ_r`` with maximal dissipation
  (``λ_t = −μ λ_n u_t/|u_t|`` when sliding), ``mu[r]`` on the normal row.

The bilateral rows come first. They are eliminated exactly: a Cholesky factorization of their block W_BB with
diagonal pivoting keeps the independent rows (redundant loop rows, as a planar loop closed by a spatial joint
has, get λ = 0: their conditions follow from the others), and the other rows see the Schur complement
``W_UU − W_UB W_BB⁻¹ W_BU`` (the Delassus operator of the system with its bilateral constraints; Featherstone,
RBDA §8.3), on which projected Gauss–Seidel solves the unilateral and friction conditions, row after row: the
normal impulse ``λ_n ← max(0, λ_n − w_n / W_nn)``, then the pair of friction impulses
``λ_t ← proj_{|·| ≤ μ λ_n}(λ_t − w_t / ρ)`` with ρ the largest eigenvalue of their 2×2 block (a fixed point of
these updates satisfies the conditions exactly: Alart & Curnier, Comput. Methods Appl. Mech. Eng. 92 (1991)
353–375; Jourdan, Alart & Jean, ibid. 155 (1998) 31–47). Sweeps stop when no impulse changes by more than
``tolerance`` times the largest impulse; the impulses in ``lam`` at the call start them (a warm start).
Finally the bilateral impulses follow from the others: ``λ_B = −W_BB⁻¹ (b_B + W_BU λ_U)``.

This module is the one home of that numerics; which rows a step has, their J, kinds and biases, is the
assembly's (``contact/stepping_solver.py``, with the builders of ``rows/unit_rows.py`` and
``rows/point_rows.py`` and the loop rows of ``rows/constraint_rows.py``).
"""
import math
from collections import namedtuple

import numpy as np
from numba import njit

from multibody.kernels.spatial import KERNEL

__all__ = ["BILATERAL", "UNILATERAL", "FRICTION", "RowSolver", "row_solver", "solve_rows"]

#: the kinds of rows
BILATERAL, UNILATERAL, FRICTION = 0, 1, 2
#: the relative size of a pivot below which a bilateral row depends on the rows before it (and is dropped)
PIVOT_TOL = 1e-10

#: the solver's scratch for ``n`` rows: the pivoted factor ``L`` of W_BB, its row order ``perm``, the solved
#: columns ``Z`` (n, n) and a vector ``y``
RowSolver = namedtuple("RowSolver", "L perm Z y")


def row_solver(n):
    """A :class:`RowSolver` for up to ``n`` rows."""
    n = max(int(n), 1)
    return RowSolver(np.zeros((n, n)), np.zeros(n, dtype=np.int64), np.zeros((n, n)), np.zeros(n))


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
def _forward(L, r, x):
    """x[:r] ← L[:r, :r]⁻¹ x[:r]."""
    for i in range(r):
        s = x[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]


@njit(**KERNEL)
def _backward(L, r, x):
    """x[:r] ← L[:r, :r]⁻ᵀ x[:r]."""
    for i in range(r - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, r):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@njit(**KERNEL)
def _row_value(W, lam, b, r, n0, n):
    s = b[r]
    for j in range(n0, n):
        s += W[r, j] * lam[j]
    return s


@njit(**KERNEL)
def projected_gauss_seidel(W, b, lam, kind, mu, n0, n, tol, iterations):
    """The unilateral and friction conditions (module docstring) of rows ``n0 .. n − 1`` by projected Gauss–Seidel
    on W, b from the impulses in ``lam``. Returns the number of sweeps made."""
    for it in range(iterations):
        change = 0.0
        top = 0.0
        r = n0
        while r < n:
            wn = _row_value(W, lam, b, r, n0, n)
            old = lam[r]
            if W[r, r] > 0.0:
                lam[r] = max(0.0, old - wn / W[r, r])
            change = max(change, abs(lam[r] - old))
            top = max(top, lam[r])
            if r + 2 < n and kind[r + 1] == FRICTION:
                a, bb, d = W[r + 1, r + 1], W[r + 1, r + 2], W[r + 2, r + 2]
                rho = 0.5 * (a + d) + math.sqrt(0.25 * (a - d) * (a - d) + bb * bb)
                w1 = _row_value(W, lam, b, r + 1, n0, n)
                w2 = _row_value(W, lam, b, r + 2, n0, n)
                o1, o2 = lam[r + 1], lam[r + 2]
                x1, x2 = (o1 - w1 / rho, o2 - w2 / rho) if rho > 0.0 else (o1, o2)
                lim = mu[r] * lam[r]
                norm = math.sqrt(x1 * x1 + x2 * x2)
                if norm > lim:
                    s = lim / norm
                    x1 *= s
                    x2 *= s
                lam[r + 1], lam[r + 2] = x1, x2
                change = max(change, abs(x1 - o1), abs(x2 - o2))
                top = max(top, abs(x1), abs(x2))
                r += 3
            else:
                r += 1
        if change <= tol * top or top == 0.0:
            return it + 1
    return iterations


@njit(**KERNEL)
def solve_rows(W, b, lam, kind, mu, nb, n, tol, iterations, R):
    """λ of the n rows (module docstring; the first ``nb`` bilateral) from W (n × n, overwritten by the Schur
    complement of the others), b (overwritten likewise) and the warm start in ``lam`` (its bilateral entries are
    not used). ``R``: a :class:`RowSolver`. Returns ``(sweeps, independent bilateral rows)``."""
    if nb == 0:
        return projected_gauss_seidel(W, b, lam, kind, mu, 0, n, tol, iterations), 0
    L, perm, Z, y = R.L, R.perm, R.Z, R.y
    rank = _pivoted_cholesky(W, nb, L, perm)
    for i in range(rank):          # y = L⁻¹ b_B (kept rows)
        y[i] = b[perm[i]]
    _forward(L, rank, y)
    for u in range(nb, n):        # z_u = L⁻¹ W_B,u; the Schur complement of the other rows
        z = Z[u]
        for i in range(rank):
            z[i] = W[perm[i], u]
        _forward(L, rank, z)
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
    sweeps = 0
    if n > nb:
        sweeps = projected_gauss_seidel(W, b, lam, kind, mu, nb, n, tol, iterations)
    for i in range(rank):          # λ_B = −L⁻ᵀ (y + Σ_u z_u λ_u), the dropped rows 0
        s = y[i]
        for u in range(nb, n):
            s += Z[u, i] * lam[u]
        y[i] = -s
    _backward(L, rank, y)
    for i in range(nb):
        lam[i] = 0.0
    for i in range(rank):
        lam[perm[i]] = y[i]
    return sweeps, rank
