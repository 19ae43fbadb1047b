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
  the vertices extreme along two directions of the plane among those within the margin (at most five);
* sphere and capsule with sphere and capsule: the closest points of their core segments (Ericson, *Real-Time
  Collision Detection*, 2005, §5.1.9) less the radii; cores that meet are parted along the common normal of the
  segments (the shortest separating translation of two crossing segments is zero along it);
* sphere with box and with cylinder: the closest point of the solid to the sphere's centre (clamping in its
  axes), or, from inside, its nearest face;
* every other pair (capsule, cylinder, box, hull): GJK on the cores, EPA when they overlap (``contact/gjk.py``):
  exact for polytopes, to ``GJK_TOL`` relative for cylinders. A box on a box whose normal is a face normal (a
  face, an edge or a corner on a face) gives a manifold: the face of the other box most opposed to it (the
  incident face) clipped to the reference face's sides (Sutherland–Hodgman), each point of it within the margin
  a contact along the face normal, at most eight (the clipping of ODE's ``dBoxBox``, R. Smith; Ericson §5.5).

Broad phase: the world bounding boxes (``shapes.bounds``) of the two geometries, widened by the margin, must
overlap; pairs with a half-space skip it (their narrow phase is one support point). Which pairs are tried at all
(not on the same body, not parent and child, the user's filters) is decided once, when the geometry is packed
(``multibody.contact.collision_sets``).

Output: rows of ``out`` (:data:`C_WIDTH` columns: the pair's index, d, n, p_A, p_B, the friction coefficient).
"""
import math

from numba import njit

from multibody.contact.gjk import INTERSECTING, epa, gjk, witness
from multibody.contact.shapes import (BOX, CAPSULE, CYLINDER, GF_MU, GF_RAD, GF_SIZE, GI_NV, GI_TYPE, GI_V0, GW_P, GW_R,
                                      HALFSPACE, HULL, SPHERE, axis_z, bounds, core_radius, support, to_local,
                                      to_world)
from multibody.kernels.spatial import KERNEL, cross3, helper, unit_perpendicular

#: columns of a contact row: pair index, signed distance, normal (3), witness point on A (3), on B (3), friction,
#: and the feature of the pair it comes from (a box's corner, a cylinder's rim point, a hull's vertex, a capsule's
#: end: the same feature keeps its number from one evaluation to the next)
C_PAIR, C_DIST, C_N, C_PA, C_PB, C_MU, C_FEAT = 0, 1, 2, 5, 8, 11, 12
C_WIDTH = 13
#: relative tolerance of GJK and EPA (times the sum of the two bounding radii)
GJK_TOL = 1e-12
#: the most points a pair can give (a box or a cylinder on a half-space, a box on a box)
MAX_MANIFOLD = 8
#: a box–box contact is a face contact (a manifold) when its normal is within this of a face normal (1 − cos)
FACE_ALIGNED = 1e-6


def manifold_size(type_a, type_b):
    """The most contact rows a pair of shape codes gives (to size the output)."""
    if type_a == HALFSPACE:
        return {SPHERE: 1, CAPSULE: 2, CYLINDER: 8, BOX: 8, HULL: 5}.get(type_b, 0)
    return MAX_MANIFOLD if type_a == BOX and type_b == BOX else 1


@helper
def _emit(out, k, pair, d, n0, n1, n2, a0, a1, a2, b0, b1, b2, mu, feature):
    """Row k of ``out`` ← one contact; returns k + 1 (k when ``out`` is full)."""
    if k >= out.shape[0]:
        return k
    out[k, C_PAIR] = pair
    out[k, C_DIST] = d
    out[k, C_N], out[k, C_N + 1], out[k, C_N + 2] = n0, n1, n2
    out[k, C_PA], out[k, C_PA + 1], out[k, C_PA + 2] = a0, a1, a2
    out[k, C_PB], out[k, C_PB + 1], out[k, C_PB + 2] = b0, b1, b2
    out[k, C_MU] = mu
    out[k, C_FEAT] = feature
    return k + 1


# ---- half-space with a shape: manifolds ------------------------------------------------------------------------
@helper
def _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, x0, x1, x2, margin, mu, feature):
    """The contact of the point x of B (world) with the plane through o of normal n, if within the margin."""
    d = n0 * (x0 - o0) + n1 * (x1 - o1) + n2 * (x2 - o2)
    if d < margin:
        return _emit(out, k, pair, d, n0, n1, n2, x0 - d * n0, x1 - d * n1, x2 - d * n2, x0, x1, x2, mu, feature)
    return k


@njit(**KERNEL)
def plane_contacts(gi, gf, gw, verts, pair, ga, gb, margin, mu, out, k):
    """The contact manifold of the half-space ga with geometry gb (see the module docstring)."""
    n0, n1, n2 = axis_z(gw, ga)
    o0, o1, o2 = gw[ga, GW_P], gw[ga, GW_P + 1], gw[ga, GW_P + 2]
    t = gi[gb, GI_TYPE]
    c0, c1, c2 = gw[gb, GW_P], gw[gb, GW_P + 1], gw[gb, GW_P + 2]
    if t == SPHERE:
        r = gf[gb, GF_SIZE]
        return _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, c0 - r * n0, c1 - r * n1, c2 - r * n2, margin, mu, 0)
    if t == CAPSULE:
        r = gf[gb, GF_SIZE]
        h = gf[gb, GF_SIZE + 1]
        a0, a1, a2 = axis_z(gw, gb)
        for s in (-1.0, 1.0):
            k = _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, c0 + s * h * a0 - r * n0, c1 + s * h * a1 - r * n1,
                             c2 + s * h * a2 - r * n2, margin, mu, 0 if s < 0.0 else 1)
        return k
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
        na = n0 * a0 + n1 * a1 + n2 * a2
        u0, u1, u2 = na * a0 - n0, na * a1 - n1, na * a2 - n2   # −n without its axial part: towards the plane
        un = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        if un > 1e-12:
            u0, u1, u2 = u0 / un, u1 / un, u2 / un
        else:
            u0, u1, u2 = unit_perpendicular(a0, a1, a2)
        w0, w1, w2 = cross3(a0, a1, a2, u0, u1, u2)
        feature = 0
        for s in (-1.0, 1.0):
            e0, e1, e2 = c0 + s * h * a0, c1 + s * h * a1, c2 + s * h * a2
            for cu, cw in ((1.0, 0.0), (0.0, 1.0), (0.0, -1.0), (-1.0, 0.0)):
                k = _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, e0 + r * (cu * u0 + cw * w0),
                                 e1 + r * (cu * u1 + cw * w1), e2 + r * (cu * u2 + cw * w2), margin, mu, feature)
                feature += 1
        return k
    # HULL: the deepest vertex and the extremes along two in-plane directions among those within the margin
    t0, t1, t2 = unit_perpendicular(n0, n1, n2)
    s0, s1, s2 = cross3(n0, n1, n2, t0, t1, t2)
    v0 = gi[gb, GI_V0]
    deepest = lo_t = hi_t = lo_s = hi_s = -1
    dmin = math.inf
    xt_lo = xs_lo = math.inf
    xt_hi = xs_hi = -math.inf
    for v in range(v0, v0 + gi[gb, GI_NV]):
        x0, x1, x2 = to_world(gw, gb, verts[v, 0], verts[v, 1], verts[v, 2])
        d = n0 * (x0 - o0) + n1 * (x1 - o1) + n2 * (x2 - o2)
        if d < dmin:
            dmin = d
            deepest = v
        if d < margin:
            xt = t0 * x0 + t1 * x1 + t2 * x2
            xs = s0 * x0 + s1 * x1 + s2 * x2
            if xt < xt_lo:
                xt_lo, lo_t = xt, v
            if xt > xt_hi:
                xt_hi, hi_t = xt, v
            if xs < xs_lo:
                xs_lo, lo_s = xs, v
            if xs > xs_hi:
                xs_hi, hi_s = xs, v
    chosen = (deepest, lo_t, hi_t, lo_s, hi_s)
    for j in range(5):
        v = chosen[j]
        repeated = v < 0
        for i in range(j):
            repeated = repeated or chosen[i] == v
        if not repeated:
            x0, x1, x2 = to_world(gw, gb, verts[v, 0], verts[v, 1], verts[v, 2])
            k = _plane_point(out, k, pair, n0, n1, n2, o0, o1, o2, x0, x1, x2, margin, mu, v - v0)
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
        dc = -depth
    else:
        a0, a1, a2, b0, b1, b2 = witness(ws, m)
        if dc > 0.0:
            n0, n1, n2 = (b0 - a0) / dc, (b1 - a1) / dc, (b2 - a2) / dc
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


@njit(**KERNEL)
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
            k = plane_contacts(gi, gf, gw, verts, p, ga, gb, margin, mu, out, k)
            continue
        if not _overlap(gi, gf, gw, ga, gb, margin):
            continue
        d, n0, n1, n2, a0, a1, a2, b0, b1, b2 = pair_distance(gi, gf, gw, verts, ga, gb, ws)
        if d < margin:
            if gi[ga, GI_TYPE] == BOX and gi[gb, GI_TYPE] == BOX:
                face = box_box_contacts(gf, gw, p, ga, gb, n0, n1, n2, margin, mu, out, k, ws[2])
                if face >= 0:
                    k = face
                    continue
            k = _emit(out, k, p, d, n0, n1, n2, a0, a1, a2, b0, b1, b2, mu, 0)
    return k


# ---- box on box: the face manifold ---------------------------------------------------------------------------------
@helper
def _box_axis(gw, g, i):
    """Axis i of box g in world coordinates (column i of its rotation)."""
    return gw[g, GW_R + i], gw[g, GW_R + 3 + i], gw[g, GW_R + 6 + i]


@helper
def _facing_axis(gw, g, d0, d1, d2):
    """The axis i of box g most aligned with the world direction d, the sign s of that alignment and |cos|."""
    l0, l1, l2 = to_local(gw, g, d0, d1, d2)
    i = 0 if abs(l0) >= abs(l1) and abs(l0) >= abs(l2) else 1 if abs(l1) >= abs(l2) else 2
    c = l0 if i == 0 else l1 if i == 1 else l2
    return i, 1.0 if c >= 0.0 else -1.0, abs(c)


@njit(**KERNEL)
def _clip(poly, m, u0, u1, u2, limit):
    """Sutherland–Hodgman: the polygon poly[0, :m] cut to the half-space u·x <= limit, into poly[0]; returns its
    vertex count (poly[1] is scratch)."""
    k = 0
    for a in range(m):
        b = (a + 1) % m
        da = u0 * poly[0, a, 0] + u1 * poly[0, a, 1] + u2 * poly[0, a, 2] - limit
        db = u0 * poly[0, b, 0] + u1 * poly[0, b, 1] + u2 * poly[0, b, 2] - limit
        if da <= 0.0:
            for c in range(3):
                poly[1, k, c] = poly[0, a, c]
            k += 1
        if (da < 0.0 < db) or (db < 0.0 < da):
            t = da / (da - db)
            for c in range(3):
                poly[1, k, c] = poly[0, a, c] + t * (poly[0, b, c] - poly[0, a, c])
            k += 1
    for a in range(k):
        for c in range(3):
            poly[0, a, c] = poly[1, a, c]
    return k


@njit(**KERNEL)
def box_box_contacts(gf, gw, pair, ga, gb, n0, n1, n2, margin, mu, out, k, poly):
    """The face manifold of boxes ga (A) and gb (B) whose contact normal (A to B) is n (the module docstring), into
    rows k.. of ``out``; returns the next row, or −1 when n is not a face normal of either box (an edge on an edge:
    the pair's one contact stands). ``poly`` (≥ 2, ≥ 8, 3): scratch."""
    ia, sa, ca = _facing_axis(gw, ga, n0, n1, n2)
    ib, sb, cb = _facing_axis(gw, gb, -n0, -n1, -n2)
    if max(ca, cb) < 1.0 - FACE_ALIGNED:
        return -1
    flip = cb > ca                                   # the reference face is B's (its outward normal ≈ −n)
    ref, inc, i, s = (gb, ga, ib, sb) if flip else (ga, gb, ia, sa)
    f0, f1, f2 = _box_axis(gw, ref, i)
    f0, f1, f2 = s * f0, s * f1, s * f2              # the reference face's outward normal
    h = gf[ref, GF_SIZE + i]
    c0, c1, c2 = gw[ref, GW_P] + h * f0, gw[ref, GW_P + 1] + h * f1, gw[ref, GW_P + 2] + h * f2
    # the incident face: the face of the other box most opposed to f, its corners in order around it
    j, sj, _ = _facing_axis(gw, inc, -f0, -f1, -f2)
    e0, e1, e2 = _box_axis(gw, inc, j)
    hj = gf[inc, GF_SIZE + j]
    o0, o1, o2 = gw[inc, GW_P] + sj * hj * e0, gw[inc, GW_P + 1] + sj * hj * e1, gw[inc, GW_P + 2] + sj * hj * e2
    j1, j2 = (j + 1) % 3, (j + 2) % 3
    u0, u1, u2 = _box_axis(gw, inc, j1)
    w0, w1, w2 = _box_axis(gw, inc, j2)
    hu, hw = gf[inc, GF_SIZE + j1], gf[inc, GF_SIZE + j2]
    for a in range(4):
        su = 1.0 if a == 0 or a == 3 else -1.0
        sw = 1.0 if a < 2 else -1.0
        poly[0, a, 0] = o0 + su * hu * u0 + sw * hw * w0
        poly[0, a, 1] = o1 + su * hu * u1 + sw * hw * w1
        poly[0, a, 2] = o2 + su * hu * u2 + sw * hw * w2
    # cut it to the four sides of the reference face
    m = 4
    for side in range(1, 3):
        r = (i + side) % 3
        a0, a1, a2 = _box_axis(gw, ref, r)
        hr = gf[ref, GF_SIZE + r]
        centre = a0 * c0 + a1 * c1 + a2 * c2
        m = _clip(poly, m, a0, a1, a2, centre + hr)
        m = _clip(poly, m, -a0, -a1, -a2, hr - centre)
    start = k
    for a in range(m):
        x0, x1, x2 = poly[0, a, 0], poly[0, a, 1], poly[0, a, 2]
        sep = f0 * (x0 - c0) + f1 * (x1 - c1) + f2 * (x2 - c2)
        if sep < margin:
            y0, y1, y2 = x0 - sep * f0, x1 - sep * f1, x2 - sep * f2      # its projection on the reference face
            feature = 16 * (2 * i + (1 if s > 0.0 else 0) + (6 if flip else 0)) + a
            if flip:
                k = _emit(out, k, pair, sep, -f0, -f1, -f2, x0, x1, x2, y0, y1, y2, mu, feature)
            else:
                k = _emit(out, k, pair, sep, f0, f1, f2, y0, y1, y2, x0, x1, x2, mu, feature)
    return k if k > start else -1
