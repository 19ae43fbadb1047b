"""Rows of the velocity of a point of one body relative to another along a direction, in tree coordinates.

A contact between body a and body b at the point x (ground coordinates) with normal n (from a to b) has three
rows: ``u = e · (ẋ_b − ẋ_a)`` for e = n, t1, t2 (:func:`contact_rows`, the normal row first, the two tangents
after it, as ``rows/solver.py`` takes them). The velocity of the material point x of body b per unit velocity
coordinate k of a joint on its path to the root is ``s_v + s_ω × x`` with the joint's ground-frame motion
subspace column S_k = [s_ω; s_v] (seed 001 §3.4; RBDA §2.9, §8.1), so ``e·ẋ = Σ_k v_k (e·s_v + s_ω·(x × e))``.
"""
from numba import njit

from multibody.kernels.kinematics import D_S, IV, NV, PARENT
from multibody.kernels.spatial import KERNEL, cross3, helper, unit_perpendicular

__all__ = ["tangent_basis", "add_point_rows", "contact_rows"]


@helper
def tangent_basis(n0, n1, n2):
    """Two unit tangents t1, t2 with (n, t1, t2) right-handed (t1 ⊥ the axis n is least aligned with)."""
    a0, a1, a2 = unit_perpendicular(n0, n1, n2)
    b0, b1, b2 = cross3(n0, n1, n2, a0, a1, a2)
    return a0, a1, a2, b0, b1, b2


@njit(**KERNEL, forceinline=True)
def add_point_rows(mi, wd, body, sign, x0, x1, x2, n0, n1, n2, a0, a1, a2, b0, b1, b2, J, r):
    """Rows r, r + 1, r + 2 of J += sign · (the velocity of the point x of ``body`` along n, a, b per unit velocity
    coordinate): for every coordinate k of the joints from the body to the root, e·(s_v + s_ω × x) = e·s_v +
    s_ω·(x × e) with S's ground-frame columns in ``wd`` (``kinematics``). One walk along the path for the three
    rows: a coordinate's column is read once."""
    c0, c1, c2 = cross3(x0, x1, x2, n0, n1, n2)
    d0, d1, d2 = cross3(x0, x1, x2, a0, a1, a2)
    e0, e1, e2 = cross3(x0, x1, x2, b0, b1, b2)
    rn, ra, rb = J[r], J[r + 1], J[r + 2]
    j = body
    while j > 0:
        for k in range(mi[j, IV], mi[j, IV] + mi[j, NV]):
            w0, w1, w2, u0, u1, u2 = wd[k, D_S], wd[k, D_S + 1], wd[k, D_S + 2], wd[k, D_S + 3], wd[k, D_S + 4], \
                wd[k, D_S + 5]
            rn[k] += sign * (w0 * c0 + w1 * c1 + w2 * c2 + u0 * n0 + u1 * n1 + u2 * n2)
            ra[k] += sign * (w0 * d0 + w1 * d1 + w2 * d2 + u0 * a0 + u1 * a1 + u2 * a2)
            rb[k] += sign * (w0 * e0 + w1 * e1 + w2 * e2 + u0 * b0 + u1 * b1 + u2 * b2)
        j = mi[j, PARENT]


@njit(**KERNEL, forceinline=True)
def contact_rows(mi, wd, body_a, body_b, x0, x1, x2, n0, n1, n2, J, r):
    """Rows r, r + 1, r + 2 of J ← the velocity of body b relative to body a at the point x along n, t1, t2
    (``tangent_basis(n)``; module docstring)."""
    a0, a1, a2, b0, b1, b2 = tangent_basis(n0, n1, n2)
    nv = J.shape[1]
    for d in range(3):
        row = J[r + d]
        for k in range(nv):
            row[k] = 0.0
    add_point_rows(mi, wd, body_b, 1.0, x0, x1, x2, n0, n1, n2, a0, a1, a2, b0, b1, b2, J, r)
    add_point_rows(mi, wd, body_a, -1.0, x0, x1, x2, n0, n1, n2, a0, a1, a2, b0, b1, b2, J, r)
