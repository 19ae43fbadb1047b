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

import numpy as np
from numba import njit

from multibody.kernels.kinematics import IV, NV, PARENT
from multibody.kernels.spatial import KERNEL

__all__ = ["dof_parents", "dof_paths", "ltl_factor", "ltl_solve_transposed_columns", "ltl_solve_transposed", "ltl_solve"]


def dof_parents(mi):
    """λ(k) of each velocity coordinate k: the coordinate before it on its path to the root (the previous one of its
    joint, or the last of the nearest ancestor joint that has coordinates), −1 at a root; ``mi`` the packed tree
    (``model.packing``)."""
    nv = int(mi[1:, NV].sum())
    out = np.empty(nv, dtype=np.int64)
    for i in range(1, mi.shape[0]):
        j = mi[i, PARENT]
        while j > 0 and mi[j, NV] == 0:
            j = mi[j, PARENT]
        prev = mi[j, IV] + mi[j, NV] - 1 if j > 0 else -1
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            out[k] = prev
            prev = k
    return out


def dof_paths(mi):
    """The paths of the velocity coordinates to the root, in one uint64 array: entries ``path[k] .. path[k + 1]``
    (k < nv) of it are the coordinates before k on its path, nearest first (λ(k), λ(λ(k)), …; none at a root),
    after the nv + 1 offsets themselves. The kernels below read a coordinate's ancestors from this list instead of
    walking ``λ`` one step at a time: those loads do not wait for each other (a walk's next index waits for the
    last load), and unsigned indices need no test for a negative one (Solo12's factor: 430 → 380 ns). A model
    keeps its own (``kernels.packing.packed_paths``)."""
    parent = dof_parents(mi)
    nv = parent.shape[0]
    paths = []
    for k in range(nv):
        chain = []
        j = parent[k]
        while j >= 0:
            chain.append(j)
            j = parent[j]
        paths.append(chain)
    out = np.empty(nv + 1 + sum(map(len, paths)), dtype=np.uint64)
    at = nv + 1
    for k, chain in enumerate(paths):
        out[k] = at
        out[at:at + len(chain)] = chain
        at += len(chain)
    out[nv] = at
    return out


@njit(**KERNEL)
def ltl_factor(H, path, L, inv):
    """L with LᵀL = H (H symmetric positive definite with the tree's sparsity; its lower triangle is read on the
    paths ``path``, :func:`dof_paths`) and ``inv[k]`` = 1 / L[k, k], which the solves multiply by (a division's
    latency on their paths from coordinate to coordinate, three times a multiplication's); returns False when a
    pivot is not positive (RBDA Algorithm 6.3)."""
    n = H.shape[0]
    for k in range(n):
        L[k, k] = H[k, k]
        for a in range(path[k], path[k + 1]):
            i = path[a]
            L[k, i] = H[k, i]
    for k in range(n - 1, -1, -1):
        if not L[k, k] > 0.0:
            return False
        a = math.sqrt(L[k, k])
        L[k, k] = a
        d = inv[k] = 1.0 / a
        first, end = path[k], path[k + 1]
        for p in range(first, end):
            L[k, path[p]] *= d
        for p in range(first, end):      # i = λ(k), λ(λ(k)), …: L[i, j] −= L[k, i] L[k, j] for j on i's path
            i = path[p]
            f = L[k, i]
            for r in range(p, end):
                j = path[r]
                L[i, j] -= f * L[k, j]
    return True


@njit(**KERNEL, forceinline=True)
def ltl_solve_transposed_columns(L, path, inv, X, m):
    """X[:, :m] ← L⁻ᵀ X[:, :m] (the first half of M⁻¹ X = L⁻¹ L⁻ᵀ X; RBDA Algorithm 6.4), m columns at once: from
    the last coordinate to the first, each passing its part on to its ancestors, one walk along each coordinate's
    path for the columns from its first to its last nonzero entry; a coordinate whose entries are all 0 costs a
    check. L⁻ᵀ passes a coordinate's entry only to the coordinates of its path, which come before it: a column is 0
    after its last nonzero coordinate before the solve as after it, and a contact's rows (consecutive columns) are
    nonzero only on its bodies' paths — a leg's coordinates carry its own contacts' three or six columns of a
    quadruped's twelve."""
    for i in range(X.shape[0] - 1, -1, -1):
        x = X[i]
        lo = 0
        while lo < m and x[lo] == 0.0:
            lo += 1
        if lo == m:
            continue
        hi = m
        while x[hi - 1] == 0.0:
            hi -= 1
        d = inv[i]
        xs = x[lo:hi]
        for c in range(hi - lo):
            xs[c] *= d
        for p in range(path[i], path[i + 1]):
            f = L[i, path[p]]
            y = X[path[p], lo:hi]
            for c in range(hi - lo):
                y[c] -= f * xs[c]


@njit(**KERNEL)
def ltl_solve_transposed(L, path, inv, x):
    """x ← L⁻ᵀ x (the first half of M⁻¹ x; RBDA Algorithm 6.4), from the last coordinate to the first; ``inv`` the
    pivots' inverses (:func:`ltl_factor`)."""
    for i in range(x.shape[0] - 1, -1, -1):
        s = x[i] * inv[i]
        x[i] = s
        for p in range(path[i], path[i + 1]):
            j = path[p]
            x[j] -= L[i, j] * s


@njit(**KERNEL)
def ltl_solve(L, path, inv, x):
    """x ← L⁻¹ x (the second half of M⁻¹ x; RBDA Algorithm 6.4), from the first coordinate to the last; ``inv`` the
    pivots' inverses (:func:`ltl_factor`)."""
    for i in range(x.shape[0]):
        s = x[i]
        for p in range(path[i], path[i + 1]):
            j = path[p]
            s -= L[i, j] * x[j]
        x[i] = s * inv[i]
