"""Contact detection, compiled: for every allowed pair of collision geometries, the signed distance, the contact
normal and the witness points — one contact for a pair of convex shapes, a contact manifold (several points)
for a shape on a half-space.

Convention (every pair, every routine): the pair (A, B) is stored with A's shape code not larger than B's
(``contact/shapes.py``), so a half-space is always A. The normal n (unit, world) points from A to B; the witness
points p_A on A and p_B on B satisfy ``p_B − p_A = d n`` with d the signed distance (negative: penetration
depth). The contact point is their midpoint.

Narrow phase, by pair of shape codes:

* half-space with anything: the points of B deepest along −n (its support point: exact) — one for a sphere,
  the two end spheres of a capsule, the eight corners of a box, eight rim points of a cylinder (on each cap the
  deepest rim point, the opposite one and the two at right angles), and for a convex hull its deepest vertex and
  the vertices extreme along eight directions of the plane among those within the margin
  (``manifolds.hull_patch``);
* sphere and capsule with sphere and capsule: the closest points of their core segments (Ericson, *Real-Time
  Collision Detection*, 2005, §5.1.9) less the radii; cores that meet are parted along the common normal of the
  segments (the shortest separating translation of two crossing segments is zero along it);
* sphere with box and with cylinder: the closest point of the solid to the sphere's centre (clamping in its
  axes), or, from inside, its nearest face;
* every other pair (capsule, cylinder, box, hull): GJK on the cores, EPA when they overlap (``contact/gjk.py``):
  exact for polytopes, to ``GJK_TOL`` relative for cylinders. When the normal is a face normal of either shape
  (a box's face, a cylinder's cap, a hull's face: a capsule or a cylinder lying on a box, a box on a box, a hull
  on a face), the pair gives a manifold (``contact/manifolds.py``): the other shape's nearest feature clipped to
  the face (Sutherland–Hodgman), each point of it within the margin a contact along the face normal, at most
  ``MAX_MANIFOLD``.

Candidates of a time step (``swept_distance``): a step of h can close the gap of two shapes by at most h times the
sum of their points' largest speeds over the step; a pair enters the step's problem when its distance is below
the margin plus twice the largest such distance, with the speeds at the start of the step and at its free velocity
(the velocity the step ends with when no contact acts), so that a step as long as the fall itself still sees the
floor it would pass (``swept_distance``).

Broad phase: the world bounding boxes (``shapes.bounds``) of the two geometries, widened by the margin, must
overlap; pairs with a half-space skip it (their narrow phase is one support point). Which pairs are tried at all
(not on the same body, not parent and child, the user's filters) is decided once, when the geometry is packed
(``multibody.contact.collision_sets``).

Output: rows of ``out`` (:data:`C_WIDTH` columns: the pair's index, d, n, p_A, p_B, the friction coefficient).
"""
import math

from numba import njit

from multibody.contact.gjk import INTERSECTING, epa, gjk, witness
from multibody.contact.manifolds import MAX_MANIFOLD, PATCH, emit, face_contacts, hull_patch, in_plane_axes
from multibody.contact.shapes import (BOX, CAPSULE, CYLINDER, GF_MU, GF_RAD, GF_SIZE, GI_BODY, GI_TYPE, GW_P,
                                      HALFSPACE, HULL, SPHERE, axis_z, bounds, core_radius, support, to_local, to_world)
from multibody.kernels.kinematics import B_V, D_S, IV, NV, PARENT
from multibody.kernels.spatial import INLINE, KERNEL, cross3, helper, unit_perpendicular

#: columns of a contact row: pair index, signed distance, normal (3), witness point on A (3), on B (3), friction,
#: and the feature of the pair it comes from (a box's corner, a cylinder's rim point, a hull's vertex, a capsule's
#: end: the same feature keeps its number from one evaluation to the next)
C_PAIR, C_DIST, C_N, C_PA, C_PB, C_MU, C_FEAT = 0, 1, 2, 5, 8, 11, 12
C_WIDTH = 13
#: relative tolerance of GJK and EPA (times the sum of the two bounding radii)
GJK_TOL = 1e-12
#: EPA's depth is checked against the overlap along its normal (``overlap_along``), to this fraction of the two
#: shapes' sizes (a correct result agrees to GJK_TOL for polytopes, to 2e-4 for curved shapes, whose polytope EPA
#: refines to its vertex budget: tests/test_contact_detection.py)
EPA_CHECK = 1e-3
#: the rows a pair of shapes can give: a half-space's manifolds, the face manifolds of two shapes with faces
PLANE_ROWS = {SPHERE: 1, CAPSULE: 2, CYLINDER: 8, BOX: 8, HULL: PATCH}
FACED = (CYLINDER, BOX, HULL)

__all__ = ["detect", "swept_distance", "pair_distance", "manifold_size", "unit_perpendicular", "MAX_MANIFOLD",
           "GJK_TOL"]


def manifold_size(type_a, type_b):
    """The most contact rows a pair of shape codes gives (to size the output)."""
    if type_a == HALFSPACE:
        return PLANE_ROWS.get(type_b, 0)
    if type_a != SPHERE and (type_a in FACED or type_b in FACED):
        return MAX_MANIFOLD
    return 1


# ---- half-space with a shape: manifolds ------------------------------------------------------------------------
@helper
def _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, x0, x1, x2, margin, mu, feature):
    """The contact of the point x of B (world) with the plane through o of normal n, if within the margin."""
    d = n0 * (x0 - o0) + n1 * (x1 - o1) + n2 * (x2 - o2)
    if d < margin:
        return emit(out, k, pair, d, n0, n1, n2, x0 - d * n0, x1 - d * n1, x2 - d * n2, x0, x1, x2, mu, feature)
    return k


@helper
def plane_contacts(gi, gf, gw, verts, pair, ga, gb, margin, mu, out, k, poly):
    """The contact manifold of the half-space ga with geometry gb (see the module docstring); ``poly``: scratch
    (``contact/manifolds.py``). The one or two points of a sphere or a capsule are found in the caller's own code
    (``detect``'s loop over the pairs); the manifolds of the shapes with faces by a call of :func:`_plane_faces`,
    a large function called by address with a dozen arrays. Through that call, Solo12's four feet on the floor cost
    0.4 µs more of a 5.9 µs time step (the compiled loop's steps at rest, measured side by side)."""
    t = gi[gb, GI_TYPE]
    if t != SPHERE and t != CAPSULE:
        return _plane_faces(gi, gf, gw, verts, pair, ga, gb, margin, mu, out, k, poly)
    n0, n1, n2 = axis_z(gw, ga)
    o0, o1, o2 = gw[ga, GW_P], gw[ga, GW_P + 1], gw[ga, GW_P + 2]
    c0, c1, c2 = gw[gb, GW_P], gw[gb, GW_P + 1], gw[gb, GW_P + 2]
    r = gf[gb, GF_SIZE]
    if t == SPHERE:
        return _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, c0 - r * n0, c1 - r * n1, c2 - r * n2, margin, mu, 0)
    h = gf[gb, GF_SIZE + 1]
    a0, a1, a2 = axis_z(gw, gb)
    for s in (-1.0, 1.0):
        k = _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, c0 + s * h * a0 - r * n0, c1 + s * h * a1 - r * n1,
                         c2 + s * h * a2 - r * n2, margin, mu, 0 if s < 0.0 else 1)
    return k


@njit(**KERNEL)
def _plane_faces(gi, gf, gw, verts, pair, ga, gb, margin, mu, out, k, poly):
    """:func:`plane_contacts` of a box, a cylinder or a hull."""
    n0, n1, n2 = axis_z(gw, ga)
    o0, o1, o2 = gw[ga, GW_P], gw[ga, GW_P + 1], gw[ga, GW_P + 2]
    t = gi[gb, GI_TYPE]
    c0, c1, c2 = gw[gb, GW_P], gw[gb, GW_P + 1], gw[gb, GW_P + 2]
    if t == BOX:
        for corner in range(8):
            x0 = gf[gb, GF_SIZE] * (1.0 if corner & 1 else -1.0)
            x1 = gf[gb, GF_SIZE + 1] * (1.0 if corner & 2 else -1.0)
            x2 = gf[gb, GF_SIZE + 2] * (1.0 if corner & 4 else -1.0)
            w0, w1, w2 = to_world(gw, gb, x0, x1, x2)
            k = _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, w0, w1, w2, margin, mu, corner)
        return k
    if t == CYLINDER:
        r = gf[gb, GF_SIZE]
        h = gf[gb, GF_SIZE + 1]
        a0, a1, a2 = axis_z(gw, gb)
        # u: −n without its axial part, towards the plane
        u0, u1, u2, w0, w1, w2 = in_plane_axes(a0, a1, a2, -n0, -n1, -n2)
        feature = 0
        for s in (-1.0, 1.0):
            e0, e1, e2 = c0 + s * h * a0, c1 + s * h * a1, c2 + s * h * a2
            for cu, cw in ((1.0, 0.0), (0.0, 1.0), (0.0, -1.0), (-1.0, 0.0)):
                k = _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, e0 + r * (cu * u0 + cw * w0),
                                 e1 + r * (cu * u1 + cw * w1), e2 + r * (cu * u2 + cw * w2), margin, mu, feature)
                feature += 1
        return k
    # HULL: its deepest vertex and the extreme ones among those within the margin
    m = hull_patch(gi, gw, verts, gb, n0, n1, n2, math.inf, n0 * o0 + n1 * o1 + n2 * o2 + margin, True, poly, 0)
    for a in range(m):
        k = _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, poly[0, a, 0], poly[0, a, 1], poly[0, a, 2], margin,
                         mu, a)
    return k


@njit(**KERNEL)
def plane_distance(gi, gf, gw, verts, ga, gb):
    """The signed distance of geometry gb from the half-space ga, the normal and the witness points (its
    support point along −n and that point's projection on the plane): ``(d, n (3), pA (3), pB (3))``."""
    n0, n1, n2 = axis_z(gw, ga)
    x0, x1, x2 = support(gi, gf, gw, verts, gb, -n0, -n1, -n2, False)
    d = n0 * (x0 - gw[ga, GW_P]) + n1 * (x1 - gw[ga, GW_P + 1]) + n2 * (x2 - gw[ga, GW_P + 2])
    return d, n0, n1, n2, x0 - d * n0, x1 - d * n1, x2 - d * n2, x0, x1, x2


# ---- spheres and capsules: segments --------------------------------------------------------------------------
@helper
def _clamp01(x):
    return 0.0 if x < 0.0 else 1.0 if x > 1.0 else x


@njit(**KERNEL)
def segment_closest(p0, p1, p2, d0, d1, d2, q0, q1, q2, e0, e1, e2):
    """The parameters (s, t) in [0, 1]² of the closest points p + s d and q + t e of two segments
    (Ericson §5.1.9; a segment may be a point)."""
    r0, r1, r2 = p0 - q0, p1 - q1, p2 - q2
    a = d0 * d0 + d1 * d1 + d2 * d2
    e = e0 * e0 + e1 * e1 + e2 * e2
    f = e0 * r0 + e1 * r1 + e2 * r2
    if a == 0.0 and e == 0.0:
        return 0.0, 0.0
    if a == 0.0:
        return 0.0, _clamp01(f / e)
    c = d0 * r0 + d1 * r1 + d2 * r2
    if e == 0.0:
        return _clamp01(-c / a), 0.0
    b = d0 * e0 + d1 * e1 + d2 * e2
    den = a * e - b * b
    s = _clamp01((b * f - c * e) / den) if den > 0.0 else 0.0
    t = (b * s + f) / e
    if t < 0.0:
        return _clamp01(-c / a), 0.0
    if t > 1.0:
        return _clamp01((b - c) / a), 1.0
    return s, t


@helper
def _core_segment(gi, gf, gw, g):
    """The core of a sphere (a point) or a capsule (a segment) as (start, direction): start + [0, 1] direction."""
    c0, c1, c2 = gw[g, GW_P], gw[g, GW_P + 1], gw[g, GW_P + 2]
    if gi[g, GI_TYPE] == SPHERE:
        return c0, c1, c2, 0.0, 0.0, 0.0
    h = gf[g, GF_SIZE + 1]
    a0, a1, a2 = axis_z(gw, g)
    return c0 - h * a0, c1 - h * a1, c2 - h * a2, 2.0 * h * a0, 2.0 * h * a1, 2.0 * h * a2


@njit(**KERNEL)
def segments_distance(gi, gf, gw, ga, gb):
    """Sphere or capsule A with sphere or capsule B: ``(d, n (3), pA (3), pB (3))``."""
    p0, p1, p2, d0, d1, d2 = _core_segment(gi, gf, gw, ga)
    q0, q1, q2, e0, e1, e2 = _core_segment(gi, gf, gw, gb)
    s, t = segment_closest(p0, p1, p2, d0, d1, d2, q0, q1, q2, e0, e1, e2)
    a0, a1, a2 = p0 + s * d0, p1 + s * d1, p2 + s * d2
    b0, b1, b2 = q0 + t * e0, q1 + t * e1, q2 + t * e2
    w0, w1, w2 = b0 - a0, b1 - a1, b2 - a2
    dc = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    scale = gf[ga, GF_RAD] + gf[gb, GF_RAD]
    if dc > 1e-12 * scale:
        n0, n1, n2 = w0 / dc, w1 / dc, w2 / dc
    else:   # the cores meet: part them along the common normal of the segments
        c0, c1, c2 = cross3(d0, d1, d2, e0, e1, e2)
        cn = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
        dn = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
        en = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        if cn > 1e-9 * dn * en:
            n0, n1, n2 = c0 / cn, c1 / cn, c2 / cn
        elif dn > 0.0:
            n0, n1, n2 = unit_perpendicular(d0, d1, d2)
        elif en > 0.0:
            n0, n1, n2 = unit_perpendicular(e0, e1, e2)
        else:
            n0, n1, n2 = 0.0, 0.0, 1.0
        dc = n0 * w0 + n1 * w1 + n2 * w2
    ra = gf[ga, GF_SIZE]
    rb = gf[gb, GF_SIZE]
    return (dc - ra - rb, n0, n1, n2, a0 + ra * n0, a1 + ra * n1, a2 + ra * n2, b0 - rb * n0, b1 - rb * n1,
            b2 - rb * n2)


# ---- a sphere with a box or a cylinder: the closest point of the solid -------------------------------------------
@njit(**KERNEL)
def point_solid(gi, gf, gw, g, x0, x1, x2):
    """The signed distance of the world point x from the box or cylinder g, the outward normal of g there and
    the nearest point of g's surface: ``(d, n (3), s (3))`` with ``x = s + d n``."""
    l0, l1, l2 = to_local(gw, g, x0 - gw[g, GW_P], x1 - gw[g, GW_P + 1], x2 - gw[g, GW_P + 2])
    if gi[g, GI_TYPE] == BOX:
        h0, h1, h2 = gf[g, GF_SIZE], gf[g, GF_SIZE + 1], gf[g, GF_SIZE + 2]
        c0, c1, c2 = min(max(l0, -h0), h0), min(max(l1, -h1), h1), min(max(l2, -h2), h2)
        e0, e1, e2 = l0 - c0, l1 - c1, l2 - c2
        d = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        if d > 0.0:
            m0, m1, m2 = e0 / d, e1 / d, e2 / d
        else:   # inside: the nearest face
            g0, g1, g2 = h0 - abs(l0), h1 - abs(l1), h2 - abs(l2)
            m0 = m1 = m2 = 0.0
            if g0 <= g1 and g0 <= g2:
                d = -g0
                m0 = 1.0 if l0 >= 0.0 else -1.0
                c0 = m0 * h0
            elif g1 <= g2:
                d = -g1
                m1 = 1.0 if l1 >= 0.0 else -1.0
                c1 = m1 * h1
            else:
                d = -g2
                m2 = 1.0 if l2 >= 0.0 else -1.0
                c2 = m2 * h2
    else:   # CYLINDER, axis z
        r, h = gf[g, GF_SIZE], gf[g, GF_SIZE + 1]
        rho = math.sqrt(l0 * l0 + l1 * l1)
        u0, u1 = (l0 / rho, l1 / rho) if rho > 0.0 else (1.0, 0.0)
        sz = 1.0 if l2 >= 0.0 else -1.0
        dr, dz = rho - r, abs(l2) - h
        if dr > 0.0 and dz > 0.0:   # off the rim
            d = math.sqrt(dr * dr + dz * dz)
            c0, c1, c2 = r * u0, r * u1, sz * h
            m0, m1, m2 = dr * u0 / d, dr * u1 / d, sz * dz / d
        elif dr > dz:   # the side is nearest (outside or inside)
            d = dr
            c0, c1, c2 = r * u0, r * u1, l2
            m0, m1, m2 = u0, u1, 0.0
        else:           # a cap is nearest
            d = dz
            rc = min(rho, r)
            c0, c1, c2 = rc * u0, rc * u1, sz * h
            m0, m1, m2 = 0.0, 0.0, sz
    s0, s1, s2 = to_world(gw, g, c0, c1, c2)
    n0 = gw[g, 0] * m0 + gw[g, 1] * m1 + gw[g, 2] * m2
    n1 = gw[g, 3] * m0 + gw[g, 4] * m1 + gw[g, 5] * m2
    n2 = gw[g, 6] * m0 + gw[g, 7] * m1 + gw[g, 8] * m2
    return d, n0, n1, n2, s0, s1, s2


# ---- the pair's distance, and its contacts ------------------------------------------------------------------------
@njit(**KERNEL)
def overlap_along(gi, gf, gw, verts, ga, gb, n0, n1, n2):
    """How far the cores of ga (A) and gb (B) overlap along the unit direction n (from A to B): the largest x·n on
    A less the smallest on B (the penetration depth is the least of these over n). Returns ``(overlap, pA (3),
    pB (3))``, the support points."""
    a0, a1, a2 = support(gi, gf, gw, verts, ga, n0, n1, n2, True)
    b0, b1, b2 = support(gi, gf, gw, verts, gb, -n0, -n1, -n2, True)
    return (a0 - b0) * n0 + (a1 - b1) * n1 + (a2 - b2) * n2, a0, a1, a2, b0, b1, b2


@njit(**KERNEL)
def pair_distance(gi, gf, gw, verts, ga, gb, ws):
    """The signed distance of geometries ga (A) and gb (B), with A's shape code <= B's: ``(d, n (3), pA (3),
    pB (3))`` (the module docstring's convention; for a half-space, B's deepest point)."""
    ta = gi[ga, GI_TYPE]
    tb = gi[gb, GI_TYPE]
    if ta == HALFSPACE:
        return plane_distance(gi, gf, gw, verts, ga, gb)
    if tb == SPHERE or tb == CAPSULE:
        return segments_distance(gi, gf, gw, ga, gb)
    ra = core_radius(gi, gf, ga)
    rb = core_radius(gi, gf, gb)
    if ta == SPHERE and (tb == BOX or tb == CYLINDER):
        c0, c1, c2 = gw[ga, GW_P], gw[ga, GW_P + 1], gw[ga, GW_P + 2]
        d, m0, m1, m2, s0, s1, s2 = point_solid(gi, gf, gw, gb, c0, c1, c2)
        return d - ra, -m0, -m1, -m2, c0 - ra * m0, c1 - ra * m1, c2 - ra * m2, s0, s1, s2
    tol = GJK_TOL * (gf[ga, GF_RAD] + gf[gb, GF_RAD])
    status, dc, m = gjk(gi, gf, gw, verts, ga, gb, tol, ws)
    if status == INTERSECTING or dc <= tol:   # touching: the witness points' difference has no direction left
        depth, n0, n1, n2, a0, a1, a2, b0, b1, b2 = epa(gi, gf, gw, verts, ga, gb, m, tol, ws)
        o, s0, s1, s2, t0, t1, t2 = overlap_along(gi, gf, gw, verts, ga, gb, n0, n1, n2)
        if abs(o - depth) > EPA_CHECK * (gf[ga, GF_RAD] + gf[gb, GF_RAD]):
            # EPA from a simplex that only touches the origin (two faces flush to round-off) can end on a face
            # inside the difference: its depth is not the overlap along its normal. The least overlap along the
            # shapes' own axes (a box's face normals) or along EPA's normal, at A's support point, instead
            depth, n0, n1, n2, a0, a1, a2 = o, n0, n1, n2, s0, s1, s2
            for g in (ga, gb):
                for i in range(3):
                    d0, d1, d2 = gw[g, i], gw[g, 3 + i], gw[g, 6 + i]
                    if (gw[gb, GW_P] - gw[ga, GW_P]) * d0 + (gw[gb, GW_P + 1] - gw[ga, GW_P + 1]) * d1 + \
                            (gw[gb, GW_P + 2] - gw[ga, GW_P + 2]) * d2 < 0.0:
                        d0, d1, d2 = -d0, -d1, -d2
                    o, s0, s1, s2, t0, t1, t2 = overlap_along(gi, gf, gw, verts, ga, gb, d0, d1, d2)
                    if o < depth:
                        depth, n0, n1, n2, a0, a1, a2 = o, d0, d1, d2, s0, s1, s2
            b0, b1, b2 = a0 - depth * n0, a1 - depth * n1, a2 - depth * n2    # pA − pB = depth n, as EPA's
        dc = -depth
    else:
        a0, a1, a2, b0, b1, b2 = witness(ws, m)
        # the witness points' difference made a unit vector by its own length: GJK's distance dc is that of the
        # simplex, and near contact the two differ by the round-off of the points' coordinates over dc (1e-6 at
        # 1e-11 m), which would tilt the normal's length out of FACE_ALIGNED (``manifolds.face_contacts``) and
        # leave a face resting on another with one contact point instead of its manifold
        e0, e1, e2 = b0 - a0, b1 - a1, b2 - a2
        e = math.sqrt(e0 * e0 + e1 * e1 + e2 * e2)
        if e > 0.0:
            n0, n1, n2 = e0 / e, e1 / e, e2 / e
        else:
            n0, n1, n2 = 0.0, 0.0, 1.0
    return (dc - ra - rb, n0, n1, n2, a0 + ra * n0, a1 + ra * n1, a2 + ra * n2, b0 - rb * n0, b1 - rb * n1,
            b2 - rb * n2)


@njit(**KERNEL)
def _overlap(gi, gf, gw, ga, gb, margin):
    """The broad phase: whether the bounding boxes of ga and gb, widened by the margin, overlap."""
    a = bounds(gi, gf, gw, ga)
    b = bounds(gi, gf, gw, gb)
    for k in range(3):
        if a[k] > b[3 + k] + margin or b[k] > a[3 + k] + margin:
            return False
    return True


@njit(**KERNEL, forceinline=True)
def detect(gi, gf, verts, pairs, gw, margin, out, ws):
    """The contacts of every pair in ``pairs`` (P, 2) whose distance is below ``margin``, into the rows of
    ``out``; returns their number. ``gw`` holds the world poses (``shapes.world_poses``), ``ws`` the GJK/EPA
    workspace (``gjk.gjk_workspace``)."""
    k = 0
    for p in range(pairs.shape[0]):
        ga = pairs[p, 0]
        gb = pairs[p, 1]
        mu = max(gf[ga, GF_MU], gf[gb, GF_MU])
        if gi[ga, GI_TYPE] == HALFSPACE:
            k = plane_contacts(gi, gf, gw, verts, p, ga, gb, margin, mu, out, k, ws[2])
            continue
        if not _overlap(gi, gf, gw, ga, gb, margin):
            continue
        d, n0, n1, n2, a0, a1, a2, b0, b1, b2 = pair_distance(gi, gf, gw, verts, ga, gb, ws)
        if d < margin:
            if gi[ga, GI_TYPE] != SPHERE:
                face = face_contacts(gi, gf, gw, verts, p, ga, gb, n0, n1, n2, margin, mu, out, k, ws[2])
                if face >= 0:
                    k = face
                    continue
            k = emit(out, k, p, d, n0, n1, n2, a0, a1, a2, b0, b1, b2, mu, 0)
    return k


# ---- the candidates of a time step ---------------------------------------------------------------------------------
@helper
def _body_twist(mi, wd, b, vel):
    """The spatial velocity [ω; v_O] (ground Plücker coordinates, about the ground origin) of body b at the
    velocity coordinates ``vel``: the sum of the motion subspaces' ground columns (``wd``, from a kinematics pass)
    of the joints from the body to the root, times their velocities."""
    w0 = w1 = w2 = u0 = u1 = u2 = 0.0
    j = b
    while j > 0:
        for k in range(mi[j, IV], mi[j, IV] + mi[j, NV]):
            x = vel[k]
            w0 += wd[k, D_S] * x
            w1 += wd[k, D_S + 1] * x
            w2 += wd[k, D_S + 2] * x
            u0 += wd[k, D_S + 3] * x
            u1 += wd[k, D_S + 4] * x
            u2 += wd[k, D_S + 5] * x
        j = mi[j, PARENT]
    return w0, w1, w2, u0, u1, u2


@njit(**KERNEL, inline=INLINE)
def swept_distance(mi, wb, wd, gi, gf, gw, vfree, h):
    """The most that two geometries can close their gap by in a step of h: twice h times the largest speed of a
    point of any geometry (|v_O + ω × c| + |ω| R for its centre c and bounding radius R), at the velocity of the
    start (the bodies' velocities of the step's RNEA pass in ``wb``, with a moving base's) and at the step's free
    velocity ``vfree`` (summed along the body's path from ``wd``, the pass's motion subspaces)."""
    top = 0.0
    for g in range(gi.shape[0]):
        b = gi[g, GI_BODY]
        if b == 0 or gi[g, GI_TYPE] == HALFSPACE:
            continue
        c0, c1, c2 = gw[g, GW_P], gw[g, GW_P + 1], gw[g, GW_P + 2]
        for which in range(2):
            if which == 0:
                w0, w1, w2 = wb[b, B_V], wb[b, B_V + 1], wb[b, B_V + 2]
                u0, u1, u2 = wb[b, B_V + 3], wb[b, B_V + 4], wb[b, B_V + 5]
            else:
                w0, w1, w2, u0, u1, u2 = _body_twist(mi, wd, b, vfree)
            e0, e1, e2 = cross3(w0, w1, w2, c0, c1, c2)
            s0, s1, s2 = u0 + e0, u1 + e1, u2 + e2
            spin = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
            top = max(top, math.sqrt(s0 * s0 + s1 * s1 + s2 * s2) + spin * gf[g, GF_RAD])
    return 2.0 * h * top
