"""Distance and penetration of two convex shapes from their support maps: GJK and EPA, compiled.

The signed distance of convex sets A and B is read on their Minkowski difference ``D = A − B`` (whose support
point in a direction u is ``s_A(u) − s_B(−u)``): when the origin is outside D, the distance is the distance of
the origin to D; inside, it is minus the penetration depth, the distance of the origin to the boundary of D
(the shortest translation of B that separates the sets). In both cases

    d = max_{|u| = 1} −(h_A(u) + h_B(−u)),        h_X(u) = max_{x ∈ X} u·x  (support function),

attained at the contact normal u = n, pointing from A to B; the witness points p_A ∈ A, p_B ∈ B satisfy
``p_B − p_A = d n``.

* :func:`gjk` — Gilbert, Johnson & Keerthi's algorithm (IEEE J. Robotics Autom. 4 (1988) 193–203) in van den
  Bergen's form (*Collision Detection in Interactive 3D Environments*, 2004, §4.3): a simplex of support points
  of D whose closest point v to the origin approaches D's; it stops when the upper bound |v| and the lower bound
  v·w/|v| (w the support point in −v) of the distance agree to ``tol``, or when the simplex encloses the origin.
  The closest point of a simplex comes from Ericson's Voronoi-region tests (*Real-Time Collision Detection*,
  2005, §5.1.2, §5.1.5, §5.1.6), kept with its barycentric weights, which give the witness points. For polytopes
  it ends in finitely many steps at the exact distance (to round-off); for curved shapes at ``tol``.
* :func:`epa` — the expanding polytope algorithm (van den Bergen, "Proximity queries and penetration depth
  computation on 3D game objects", GDC 2001): from a tetrahedron of D that encloses the origin, the face
  nearest to the origin is pushed out to the support point along its normal until that point lies on the face's
  plane within ``tol`` (then the face is on D's boundary: the distance of its plane is the depth). Exact for
  polytopes; for curved shapes each expansion refines the polytope near the answer.

Neither allocates: the simplex and the polytope live in a workspace made once by :func:`gjk_workspace`.
"""
import math

import numpy as np
from numba import njit

from multibody.contact.shapes import GF_RAD, GW_P, support
from multibody.kernels.spatial import KERNEL, cross3, helper

#: EPA's polytope: at most this many vertices and faces (a face list and a horizon-edge list of this size)
EPA_VERTICES = 200
EPA_FACES = 2 * EPA_VERTICES + 8
EPA_EDGES = 3 * EPA_FACES
#: GJK iterations (exact polytopes need a few; curved shapes converge linearly)
GJK_ITERATIONS = 128
#: two support points closer than this (relative to the sizes) are one for GJK's simplex
CLOSE = 1e-6
#: results of :func:`gjk`
SEPARATED, INTERSECTING = 0, 1


def gjk_workspace():
    """The scratch arrays of :func:`gjk` and :func:`epa`: ``(simplex (3, 4, 3), weights (2, 4), polytope vertices
    (3, EPA_VERTICES, 3), faces (EPA_FACES, 3), face normals and distances (EPA_FACES, 5), edges (EPA_EDGES,
    2))``; row 0 of a vertex array is the point of D, rows 1 and 2 the support points on A and B."""
    return (np.zeros((3, 4, 3)), np.zeros((2, 4)), np.zeros((3, EPA_VERTICES, 3)), np.zeros((EPA_FACES, 3), np.int64),
            np.zeros((EPA_FACES, 5)), np.zeros((EPA_EDGES, 2), np.int64))


@helper
def dot3(a0, a1, a2, b0, b1, b2):
    return a0 * b0 + a1 * b1 + a2 * b2


@njit(**KERNEL)
def _copy_vertex(sx, src, dst):
    for r in range(3):
        for c in range(3):
            sx[r, dst, c] = sx[r, src, c]


@njit(**KERNEL)
def _segment(sx, i, j, lam):
    """Closest point to the origin of the segment of simplex vertices i, j: weights into lam[i], lam[j]."""
    a0, a1, a2 = sx[0, i, 0], sx[0, i, 1], sx[0, i, 2]
    e0, e1, e2 = sx[0, j, 0] - a0, sx[0, j, 1] - a1, sx[0, j, 2] - a2
    ee = dot3(e0, e1, e2, e0, e1, e2)
    t = 0.0 if ee == 0.0 else min(1.0, max(0.0, -dot3(a0, a1, a2, e0, e1, e2) / ee))
    lam[i] = 1.0 - t
    lam[j] = t
    return (a0 + t * e0) ** 2 + (a1 + t * e1) ** 2 + (a2 + t * e2) ** 2


@njit(**KERNEL)
def _triangle(sx, i, j, k, lam):
    """Closest point to the origin of the triangle of simplex vertices i, j, k (Ericson §5.1.5, the point being
    the origin): weights into lam[i], lam[j], lam[k]; returns its squared distance."""
    a0, a1, a2 = sx[0, i, 0], sx[0, i, 1], sx[0, i, 2]
    ab0, ab1, ab2 = sx[0, j, 0] - a0, sx[0, j, 1] - a1, sx[0, j, 2] - a2
    ac0, ac1, ac2 = sx[0, k, 0] - a0, sx[0, k, 1] - a1, sx[0, k, 2] - a2
    lam[i] = lam[j] = lam[k] = 0.0
    d1 = -dot3(ab0, ab1, ab2, a0, a1, a2)
    d2 = -dot3(ac0, ac1, ac2, a0, a1, a2)
    if d1 <= 0.0 and d2 <= 0.0:
        lam[i] = 1.0
        return a0 * a0 + a1 * a1 + a2 * a2
    b0, b1, b2 = sx[0, j, 0], sx[0, j, 1], sx[0, j, 2]
    d3 = -dot3(ab0, ab1, ab2, b0, b1, b2)
    d4 = -dot3(ac0, ac1, ac2, b0, b1, b2)
    if d3 >= 0.0 and d4 <= d3:
        lam[j] = 1.0
        return b0 * b0 + b1 * b1 + b2 * b2
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        return _segment(sx, i, j, lam)
    c0, c1, c2 = sx[0, k, 0], sx[0, k, 1], sx[0, k, 2]
    d5 = -dot3(ab0, ab1, ab2, c0, c1, c2)
    d6 = -dot3(ac0, ac1, ac2, c0, c1, c2)
    if d6 >= 0.0 and d5 <= d6:
        lam[k] = 1.0
        return c0 * c0 + c1 * c1 + c2 * c2
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        return _segment(sx, i, k, lam)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        return _segment(sx, j, k, lam)
    den = va + vb + vc
    if not den > 0.0:  # a degenerate (flat) triangle: the best of its edges
        return _flat_triangle(sx, i, j, k, lam)
    v = vb / den
    w = vc / den
    lam[i] = 1.0 - v - w
    lam[j] = v
    lam[k] = w
    p0, p1, p2 = a0 + ab0 * v + ac0 * w, a1 + ab1 * v + ac1 * w, a2 + ab2 * v + ac2 * w
    return p0 * p0 + p1 * p1 + p2 * p2


@njit(**KERNEL)
def _flat_triangle(sx, i, j, k, lam):
    """Closest point to the origin of a triangle without area: the best of its three edges."""
    s_ij = _segment(sx, i, j, lam)
    li, lj = lam[i], lam[j]
    s_jk = _segment(sx, j, k, lam)
    mj, mk = lam[j], lam[k]
    s_ik = _segment(sx, i, k, lam)
    ni, nk = lam[i], lam[k]
    if s_ij <= s_jk and s_ij <= s_ik:
        lam[i], lam[j], lam[k] = li, lj, 0.0
        return s_ij
    if s_jk <= s_ik:
        lam[i], lam[j], lam[k] = 0.0, mj, mk
        return s_jk
    lam[i], lam[j], lam[k] = ni, 0.0, nk
    return s_ik


@helper
def _side(sx, p, a, b, c):
    """(o − a)·((b − a) × (c − a)) · (p − a)·((b − a) × (c − a)) for o the origin: negative when the origin and
    vertex p lie on opposite sides of the plane of a, b, c."""
    u0, u1, u2 = sx[0, b, 0] - sx[0, a, 0], sx[0, b, 1] - sx[0, a, 1], sx[0, b, 2] - sx[0, a, 2]
    v0, v1, v2 = sx[0, c, 0] - sx[0, a, 0], sx[0, c, 1] - sx[0, a, 1], sx[0, c, 2] - sx[0, a, 2]
    n0, n1, n2 = cross3(u0, u1, u2, v0, v1, v2)
    so = -dot3(sx[0, a, 0], sx[0, a, 1], sx[0, a, 2], n0, n1, n2)
    sp = dot3(sx[0, p, 0] - sx[0, a, 0], sx[0, p, 1] - sx[0, a, 1], sx[0, p, 2] - sx[0, a, 2], n0, n1, n2)
    return so * sp


@njit(**KERNEL)
def _tetrahedron(sx, lam, tmp):
    """Closest point to the origin of the tetrahedron 0..3 (Ericson §5.1.6): 0 when the origin is inside (weights
    unused then); else the best of the faces the origin lies outside of (all four for a flat tetrahedron)."""
    faces = ((0, 1, 2, 3), (0, 2, 3, 1), (0, 3, 1, 2), (1, 3, 2, 0))
    best = math.inf
    inside = True
    flat = _flat(sx)
    for f in range(4):
        a, b, c, p = faces[f]
        if flat or _side(sx, p, a, b, c) < 0.0:
            inside = False
            for k in range(4):
                tmp[k] = 0.0
            d = _triangle(sx, a, b, c, tmp)
            if d < best:
                best = d
                for k in range(4):
                    lam[k] = tmp[k]
    if inside:
        for k in range(4):
            lam[k] = 0.25
        return 0.0
    return best


@helper
def _flat(sx):
    """Whether the tetrahedron 0..3 has (numerically) no volume."""
    u0, u1, u2 = sx[0, 1, 0] - sx[0, 0, 0], sx[0, 1, 1] - sx[0, 0, 1], sx[0, 1, 2] - sx[0, 0, 2]
    v0, v1, v2 = sx[0, 2, 0] - sx[0, 0, 0], sx[0, 2, 1] - sx[0, 0, 1], sx[0, 2, 2] - sx[0, 0, 2]
    w0, w1, w2 = sx[0, 3, 0] - sx[0, 0, 0], sx[0, 3, 1] - sx[0, 0, 1], sx[0, 3, 2] - sx[0, 0, 2]
    n0, n1, n2 = cross3(u0, u1, u2, v0, v1, v2)
    vol = abs(dot3(n0, n1, n2, w0, w1, w2))
    scale = (math.sqrt(u0 * u0 + u1 * u1 + u2 * u2) * math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
             * math.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    return vol <= 1e-13 * scale


@njit(**KERNEL)
def _closest(sx, lam, n, tmp):
    """The closest point of the simplex (n vertices) to the origin: its squared distance, with the simplex reduced
    to the vertices of positive weight (weights in lam[:m]); returns (squared distance, m)."""
    for k in range(4):
        lam[k] = 0.0
    if n == 1:
        lam[0] = 1.0
        d = sx[0, 0, 0] ** 2 + sx[0, 0, 1] ** 2 + sx[0, 0, 2] ** 2
    elif n == 2:
        d = _segment(sx, 0, 1, lam)
    elif n == 3:
        d = _triangle(sx, 0, 1, 2, lam)
    else:
        d = _tetrahedron(sx, lam, tmp)
        if d == 0.0:
            return 0.0, 4
    m = 0
    for k in range(n):
        if lam[k] > 0.0:
            if m != k:
                _copy_vertex(sx, k, m)
                lam[m] = lam[k]
            m += 1
    return d, m


@njit(**KERNEL)
def _combination(sx, lam, m, row):
    """Σ lam[k] sx[row, k] over the m simplex vertices."""
    x0 = x1 = x2 = 0.0
    for k in range(m):
        x0 += lam[k] * sx[row, k, 0]
        x1 += lam[k] * sx[row, k, 1]
        x2 += lam[k] * sx[row, k, 2]
    return x0, x1, x2


@njit(**KERNEL)
def gjk(gi, gf, gw, verts, ga, gb, tol, ws):
    """GJK on the cores of geometries ga (A) and gb (B) (see the module docstring). Returns ``(status, d, m)``:
    ``SEPARATED`` with the distance d of the cores and the m vertices of the final simplex in ``ws[0]`` with
    their weights in ``ws[1]`` (:func:`witness`), or ``INTERSECTING`` with the simplex that encloses (or touches)
    the origin, m of its vertices (EPA's start)."""
    sx, lam, tmp = ws[0], ws[1][0], ws[1][1]
    close = CLOSE * (gf[ga, GF_RAD] + gf[gb, GF_RAD])
    v0 = gw[ga, GW_P] - gw[gb, GW_P]
    v1 = gw[ga, GW_P + 1] - gw[gb, GW_P + 1]
    v2 = gw[ga, GW_P + 2] - gw[gb, GW_P + 2]
    if v0 * v0 + v1 * v1 + v2 * v2 == 0.0:
        v0 = 1.0
    m = 0
    vv = math.inf
    for _ in range(GJK_ITERATIONS):
        support_vertex(gi, gf, gw, verts, ga, gb, -v0, -v1, -v2, sx, m)
        if m > 0:
            w0, w1, w2 = sx[0, m, 0], sx[0, m, 1], sx[0, m, 2]
            vn = math.sqrt(vv)
            lower = dot3(v0, v1, v2, w0, w1, w2) / vn
            if vn - lower <= tol:
                return SEPARATED, vn, m
            # a support point within ``close`` of a vertex of the simplex replaces it (on a curved surface the
            # last support points crowd together, and a simplex with two such vertices is a sliver whose
            # closest point loses digits: ~ eps · size / spacing); an equal one ends the search
            near = -1
            for k in range(m):
                e = (sx[0, k, 0] - w0) ** 2 + (sx[0, k, 1] - w1) ** 2 + (sx[0, k, 2] - w2) ** 2
                if e == 0.0:
                    return SEPARATED, vn, m
                if e <= close * close:
                    near = k
            if near >= 0:
                m -= 1
                _copy_vertex(sx, m, near)
                _copy_vertex(sx, m + 1, m)
        dd, m = _closest(sx, lam, m + 1, tmp)
        if m == 4 or dd <= (1e-6 * tol) ** 2:
            return INTERSECTING, 0.0, m
        if dd >= vv:  # round-off: the distance no longer decreases
            return SEPARATED, math.sqrt(dd), m
        vv = dd
        v0, v1, v2 = _combination(sx, lam, m, 0)
    return SEPARATED, math.sqrt(vv), m


@njit(**KERNEL)
def witness(ws, m):
    """The witness points (on the cores of A and B) of GJK's final simplex: Σ λ_k a_k and Σ λ_k b_k."""
    a0, a1, a2 = _combination(ws[0], ws[1][0], m, 1)
    b0, b1, b2 = _combination(ws[0], ws[1][0], m, 2)
    return a0, a1, a2, b0, b1, b2


# ---- EPA --------------------------------------------------------------------------------------------------------
@njit(**KERNEL)
def support_vertex(gi, gf, gw, verts, ga, gb, d0, d1, d2, pv, k):
    """pv[:, k] ← the support point of D = A − B (cores) in direction d and its parts s_A(d), s_B(−d) (a simplex's
    or a polytope's vertex arrays: row 0 the point of D, rows 1 and 2 its parts)."""
    a0, a1, a2 = support(gi, gf, gw, verts, ga, d0, d1, d2, True)
    b0, b1, b2 = support(gi, gf, gw, verts, gb, -d0, -d1, -d2, True)
    pv[1, k, 0], pv[1, k, 1], pv[1, k, 2] = a0, a1, a2
    pv[2, k, 0], pv[2, k, 1], pv[2, k, 2] = b0, b1, b2
    pv[0, k, 0], pv[0, k, 1], pv[0, k, 2] = a0 - b0, a1 - b1, a2 - b2


@njit(**KERNEL)
def _face(pv, faces, fn, f, i, j, k, c0, c1, c2):
    """Face f = (i, j, k) with its unit normal oriented away from the interior point c and its plane's distance
    to the origin (may be slightly negative when the origin lies on it); a degenerate face gets distance +inf."""
    u0, u1, u2 = pv[0, j, 0] - pv[0, i, 0], pv[0, j, 1] - pv[0, i, 1], pv[0, j, 2] - pv[0, i, 2]
    v0, v1, v2 = pv[0, k, 0] - pv[0, i, 0], pv[0, k, 1] - pv[0, i, 1], pv[0, k, 2] - pv[0, i, 2]
    n0, n1, n2 = cross3(u0, u1, u2, v0, v1, v2)
    nn = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if dot3(n0, n1, n2, pv[0, i, 0] - c0, pv[0, i, 1] - c1, pv[0, i, 2] - c2) < 0.0:
        j, k = k, j
        n0, n1, n2 = -n0, -n1, -n2
    faces[f, 0], faces[f, 1], faces[f, 2] = i, j, k
    fn[f, 4] = 1.0
    if nn == 0.0:
        fn[f, 0] = fn[f, 1] = fn[f, 2] = 0.0
        fn[f, 3] = math.inf
        return
    fn[f, 0], fn[f, 1], fn[f, 2] = n0 / nn, n1 / nn, n2 / nn
    fn[f, 3] = dot3(fn[f, 0], fn[f, 1], fn[f, 2], pv[0, i, 0], pv[0, i, 1], pv[0, i, 2])


@njit(**KERNEL)
def _blow_up(gi, gf, gw, verts, ga, gb, pv, m, tol):
    """Complete GJK's simplex that touches the origin (m < 4 vertices) to a tetrahedron of D around it: a second
    point far along an axis, a third off the line, then the support points on both sides of the triangle.
    Returns the number of vertices (4, or 5 with both sides: a double pyramid)."""
    if m == 1:
        best = -1.0
        for a in range(6):
            d0 = 1.0 if a == 0 else -1.0 if a == 1 else 0.0
            d1 = 1.0 if a == 2 else -1.0 if a == 3 else 0.0
            d2 = 1.0 if a == 4 else -1.0 if a == 5 else 0.0
            support_vertex(gi, gf, gw, verts, ga, gb, d0, d1, d2, pv, 1)
            e = (pv[0, 1, 0] - pv[0, 0, 0]) ** 2 + (pv[0, 1, 1] - pv[0, 0, 1]) ** 2 + (pv[0, 1, 2] - pv[0, 0, 2]) ** 2
            if e > best:
                best = e
                _copy_vertex(pv, 1, 3)
        _copy_vertex(pv, 3, 1)
        m = 2
    if m == 2:
        e0, e1, e2 = pv[0, 1, 0] - pv[0, 0, 0], pv[0, 1, 1] - pv[0, 0, 1], pv[0, 1, 2] - pv[0, 0, 2]
        ax = 0 if abs(e0) <= abs(e1) and abs(e0) <= abs(e2) else 1 if abs(e1) <= abs(e2) else 2
        p0, p1, p2 = cross3(e0, e1, e2, 1.0 if ax == 0 else 0.0, 1.0 if ax == 1 else 0.0, 1.0 if ax == 2 else 0.0)
        q0, q1, q2 = cross3(e0, e1, e2, p0, p1, p2)
        pn = math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
        qn = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2)
        best = -1.0
        for s in range(6):
            c, sn = math.cos(s * math.pi / 3.0), math.sin(s * math.pi / 3.0)
            d0 = c * p0 / pn + sn * q0 / qn
            d1 = c * p1 / pn + sn * q1 / qn
            d2 = c * p2 / pn + sn * q2 / qn
            support_vertex(gi, gf, gw, verts, ga, gb, d0, d1, d2, pv, 2)
            f0, f1, f2 = cross3(e0, e1, e2, pv[0, 2, 0] - pv[0, 0, 0], pv[0, 2, 1] - pv[0, 0, 1],
                                pv[0, 2, 2] - pv[0, 0, 2])
            off = f0 * f0 + f1 * f1 + f2 * f2
            if off > best:
                best = off
                _copy_vertex(pv, 2, 3)
        _copy_vertex(pv, 3, 2)
        m = 3
    if m == 3:
        n0, n1, n2 = cross3(pv[0, 1, 0] - pv[0, 0, 0], pv[0, 1, 1] - pv[0, 0, 1], pv[0, 1, 2] - pv[0, 0, 2],
                            pv[0, 2, 0] - pv[0, 0, 0], pv[0, 2, 1] - pv[0, 0, 1], pv[0, 2, 2] - pv[0, 0, 2])
        support_vertex(gi, gf, gw, verts, ga, gb, n0, n1, n2, pv, 3)
        support_vertex(gi, gf, gw, verts, ga, gb, -n0, -n1, -n2, pv, 4)
        return 5
    return 4


@njit(**KERNEL)
def epa(gi, gf, gw, verts, ga, gb, m, tol, ws):
    """The penetration of the cores of ga (A) and gb (B) from GJK's simplex (``m`` vertices in ``ws[0]``) that
    encloses the origin. Returns ``(depth, n0, n1, n2, pA (3), pB (3))``: the normal n from A to B (translating
    B by depth·n separates the cores) and the witness points, ``pA − pB = depth·n``."""
    sx, _, pv, faces, fn, edges = ws
    for k in range(m):
        for r in range(3):
            for c in range(3):
                pv[r, k, c] = sx[r, k, c]
    nv = 4 if m == 4 else _blow_up(gi, gf, gw, verts, ga, gb, pv, m, tol)
    c0 = c1 = c2 = 0.0
    for k in range(nv):
        c0 += pv[0, k, 0] / nv
        c1 += pv[0, k, 1] / nv
        c2 += pv[0, k, 2] / nv
    if nv == 4:
        nf = 4
        _face(pv, faces, fn, 0, 0, 1, 2, c0, c1, c2)
        _face(pv, faces, fn, 1, 0, 1, 3, c0, c1, c2)
        _face(pv, faces, fn, 2, 0, 2, 3, c0, c1, c2)
        _face(pv, faces, fn, 3, 1, 2, 3, c0, c1, c2)
    else:  # double pyramid over the triangle 0, 1, 2 with apexes 3 and 4
        nf = 6
        for e in range(3):
            i, j = e, (e + 1) % 3
            _face(pv, faces, fn, 2 * e, i, j, 3, c0, c1, c2)
            _face(pv, faces, fn, 2 * e + 1, i, j, 4, c0, c1, c2)
    best = 0
    last = -math.inf
    while True:
        found = -1
        dmin = math.inf
        for f in range(nf):
            if fn[f, 4] > 0.0 and fn[f, 3] < dmin:
                dmin = fn[f, 3]
                found = f
        if found < 0 or dmin < last - tol:
            # the polytope only grows, so its distance to the origin never decreases: a decrease means round-off
            # broke its surface (faces seen from a new point within round-off): keep the last good face
            return _face_result(pv, faces, fn, best, sx, ws[1][0], tol)
        best = found
        last = dmin
        if nv >= EPA_VERTICES:
            break
        n0, n1, n2 = fn[best, 0], fn[best, 1], fn[best, 2]
        support_vertex(gi, gf, gw, verts, ga, gb, n0, n1, n2, pv, nv)
        w0, w1, w2 = pv[0, nv, 0], pv[0, nv, 1], pv[0, nv, 2]
        if dot3(n0, n1, n2, w0, w1, w2) - dmin <= tol:
            break
        # remove the faces that see the new point; the edges seen once form the horizon
        ne = 0
        for f in range(nf):
            if fn[f, 4] > 0.0:
                i0 = faces[f, 0]
                if dot3(fn[f, 0], fn[f, 1], fn[f, 2], w0 - pv[0, i0, 0], w1 - pv[0, i0, 1], w2 - pv[0, i0, 2]) > 0.0:
                    fn[f, 4] = 0.0
                    for e in range(3):
                        a, b = faces[f, e], faces[f, (e + 1) % 3]
                        shared = -1
                        for x in range(ne):
                            if edges[x, 0] == b and edges[x, 1] == a:
                                shared = x
                                break
                        if shared >= 0:
                            ne -= 1
                            edges[shared, 0], edges[shared, 1] = edges[ne, 0], edges[ne, 1]
                        elif ne < edges.shape[0]:
                            edges[ne, 0], edges[ne, 1] = a, b
                            ne += 1
        if nf + ne > faces.shape[0]:
            break
        for x in range(ne):
            _face(pv, faces, fn, nf, edges[x, 0], edges[x, 1], nv, c0, c1, c2)
            nf += 1
        nv += 1
    return _epa_result(pv, faces, fn, nf, sx, ws[1][0], tol)


@njit(**KERNEL)
def _epa_result(pv, faces, fn, nf, sx, lam, tol):
    """Depth, normal and witness points at the end of EPA: the point of the polytope's boundary nearest to the
    origin (the origin's projection on the nearest face: of the faces in that plane, the one that holds it),
    found as the nearest of the faces' closest points (Voronoi-region tests of :func:`_triangle`, robust for thin
    faces), and the same barycentric combination of the face's points on A and on B."""
    best = -1
    qmin = math.inf
    for f in range(nf):
        if fn[f, 4] > 0.0:
            for v in range(3):
                i = faces[f, v]
                for c in range(3):
                    sx[0, v, c] = pv[0, i, c]
            q2 = _triangle(sx, 0, 1, 2, lam)
            if q2 < qmin:
                qmin = q2
                best = f
    if best < 0:
        return 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    return _face_result(pv, faces, fn, best, sx, lam, tol)


@njit(**KERNEL)
def _face_result(pv, faces, fn, f, sx, lam, tol):
    """Depth, normal and witness points of face f: its point nearest to the origin q (the normal along it; the
    face's own when q is within 1000 tol of the origin, where its direction is round-off) and the same
    barycentric combination of its points on A and on B."""
    for v in range(3):
        i = faces[f, v]
        for r in range(3):
            for c in range(3):
                sx[r, v, c] = pv[r, i, c]
    q2 = _triangle(sx, 0, 1, 2, lam)
    a0, a1, a2 = _combination(sx, lam, 3, 1)
    b0, b1, b2 = _combination(sx, lam, 3, 2)
    depth = math.sqrt(q2)
    if depth > 1e3 * tol:
        n0, n1, n2 = a0 - b0, a1 - b1, a2 - b2
        s = 1.0 / math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
        return depth, n0 * s, n1 * s, n2 * s, a0, a1, a2, b0, b1, b2
    return fn[f, 3], fn[f, 0], fn[f, 1], fn[f, 2], a0, a1, a2, b0, b1, b2
