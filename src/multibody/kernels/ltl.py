"""The LᵀL factorization of a tree's joint-space inertia matrix, which keeps its sparsity (R. Featherstone, "Efficient
factorization of the joint-space inertia matrix for branched kinematic trees", Int. J. Robotics Research 24 (2005)
487–500; RBDA §6.5, Algorithms 6.3 and 6.4).

In a kinematic tree, M[i, j] ≠ 0 only when coordinate j lies on the path from i to the root (or i on j's): with the
coordinates numbered so that each comes after its parent λ(i) (the coordinate before it on its path; −1 at a root),
the factorization M = LᵀL computed from the last coordinate to the first fills in nothing — L[i, j] ≠ 0 only for
j = i or j an ancestor of i — and costs Σ_i depth(i)² instead of n³/6. Solving with it touches only ancestors too:
L⁻ᵀ x of a vector that lives on a path from a coordinate to the root (a contact row's J, the velocity of a point of
one leg of a quadruped) lives on the same path, so the rows Y = L⁻ᵀ Jᵀ of a step's contacts, and their products
W = YᵀY, cost a leg's length each, not the whole tree's.

Only the entries on the paths are read and written (``L`` may hold anything elsewhere).
"""
import math

from numba import njit

from multibody.kernels.kinematics import IV, NV, PARENT
from multibody.kernels.spatial import KERNEL

__all__ = ["dof_parents", "ltl_factor", "ltl_solve_transposed_columns", "ltl_solve_transposed", "ltl_solve"]


@njit(**KERNEL)
def dof_parents(mi, out):
    """out[k] ← λ(k): the velocity coordinate before k on its path to the root (the previous one of its joint, or
    the last of the nearest ancestor joint that has coordinates), −1 at a root."""
    for i in range(1, mi.shape[0]):
        j = mi[i, PARENT]
        while j > 0 and mi[j, NV] == 0:
            j = mi[j, PARENT]
        prev = mi[j, IV] + mi[j, NV] - 1 if j > 0 else -1
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            out[k] = prev
            prev = k


@njit(**KERNEL)
def ltl_factor(H, parent, L):
    """L with LᵀL = H (H symmetric positive definite with the tree's sparsity; its lower triangle is read on the
    paths); returns False when a pivot is not positive (RBDA Algorithm 6.3)."""
    n = H.shape[0]
    for k in range(n):
        L[k, k] = H[k, k]
        i = parent[k]
        while i >= 0:
            L[k, i] = H[k, i]
            i = parent[i]
    for k in range(n - 1, -1, -1):
        if not L[k, k] > 0.0:
            return False
        a = math.sqrt(L[k, k])
        L[k, k] = a
        i = parent[k]
        while i >= 0:
            L[k, i] /= a
            i = parent[i]
        i = parent[k]
        while i >= 0:
            f = L[k, i]
            j = i
            while j >= 0:
                L[i, j] -= f * L[k, j]
                j = parent[j]
            i = parent[i]
    return True


@njit(**KERNEL)
def ltl_solve_transposed_columns(L, parent, X, m):
    """X[:, :m] ← L⁻ᵀ X[:, :m] (the first half of M⁻¹ X = L⁻¹ L⁻ᵀ X; RBDA Algorithm 6.4), m columns at once: from
    the last coordinate to the first, each passing its part on to its ancestors, one walk along each coordinate's
    path for all the columns; a coordinate whose entries are all 0 costs a check."""
    for i in range(X.shape[0] - 1, -1, -1):
        x = X[i]
        nonzero = False
        for c in range(m):
            if x[c] != 0.0:
                nonzero = True
                break
        if not nonzero:
            continue
        d = 1.0 / L[i, i]      # (one division for the m columns)
        for c in range(m):
            x[c] *= d
        j = parent[i]
        while j >= 0:
            f = L[i, j]
            y = X[j]
            for c in range(m):
                y[c] -= f * x[c]
            j = parent[j]


@njit(**KERNEL)
def ltl_solve_transposed(L, parent, x):
    """x ← L⁻ᵀ x (the first half of M⁻¹ x; RBDA Algorithm 6.4), from the last coordinate to the first."""
    for i in range(x.shape[0] - 1, -1, -1):
        s = x[i] / L[i, i]
        x[i] = s
        j = parent[i]
        while j >= 0:
            x[j] -= L[i, j] * s
            j = parent[j]


@njit(**KERNEL)
def ltl_solve(L, parent, x):
    """x ← L⁻¹ x (the second half of M⁻¹ x; RBDA Algorithm 6.4), from the first coordinate to the last."""
    for i in range(x.shape[0]):
        s = x[i]
        j = parent[i]
        while j >= 0:
            s -= L[i, j] * x[j]
            j = parent[j]
        x[i] = s / L[i, i]
