"""Contact manifolds of two convex shapes that touch face to face: the faces' overlap, as several contact points.

A pair whose contact normal n (from A to B, ``contact/detection.py``) is the outward normal of a face of either
shape — a box's face, a cylinder's cap, a convex hull's face — touches over a region, not at a point: one contact
there lets the body rock and creep about it. The manifold is the region's corners, each a contact along the face
normal, found by clipping (the scheme of ODE's ``dBoxBox``, R. Smith, and of Bullet's polyhedral contact clipping;
C. Ericson, *Real-Time Collision Detection*, 2005, §5.5):

1. the **reference face**: of the two shapes' faces along n (A's outward along n, B's along −n), the one whose
   normal is nearer n, if within ``FACE_ALIGNED`` (1 − cos) of it; its outward unit normal f and its corners in
   order (a box face's four corners; a cylinder's cap as the regular ``RIM``-gon inscribed in it; a hull's face as
   its vertices extreme along eight directions of the face's plane, :func:`hull_patch`);
2. the **incident feature** of the other shape, the part of it nearest the reference plane: a box's face most
   opposed to f (four corners), a capsule's core segment, a cylinder's cap facing −f (the ``RIM``-gon) when its
   axis is within 45° of f or else the line of its side nearest the plane (a segment), a hull's vertices within
   the margin of the plane (the same extreme points as a face);
3. the incident feature **clipped** to the reference face's sides (Sutherland–Hodgman on the planes through each
   side along f; a segment by its parameter interval), and each clipped point within the margin of the reference
   plane a contact: distance along f (less a capsule's radius), the point's projection on the reference face as
   the witness there. More than ``MAX_MANIFOLD`` points (a cap clipped to a face) are thinned to that many, evenly
   along the clipped polygon from its deepest point.

A half-space is a reference face without sides (``detection.plane_contacts``); a hull on a half-space gives its
vertices within the margin by :func:`hull_patch` as well. Pairs without such a face (an edge on an edge, a rim on
a rim, anything with a sphere) keep their one closest-point contact.

The polygons live in a scratch array ``poly`` (≥ 3, ≥ 32, 3): ``poly[0]`` the incident polygon being clipped,
``poly[1]`` the clipper's scratch, ``poly[2]`` the reference face.
"""
import math

from numba import njit

from multibody.contact.shapes import (BOX, CAPSULE, CYLINDER, GF_RAD, GF_SIZE, GI_NV, GI_TYPE, GI_V0, GW_P, GW_R,
                                      HULL, axis_z, to_local, to_world)
from multibody.kernels.spatial import KERNEL, cross3, helper, unit_perpendicular

#: the most points a pair's manifold keeps
MAX_MANIFOLD = 8
#: a normal within this of a face's normal (1 − cos) makes a face contact
FACE_ALIGNED = 1e-6
#: the corners of the polygon that stands for a cylinder's cap
RIM = 8
#: the in-plane directions along which a hull's patch takes its extreme vertices
PATCH_DIRECTIONS = 8
#: the most points of a hull's patch (its extremes and its deepest vertex)
PATCH = PATCH_DIRECTIONS + 1
#: a hull's face: its vertices within this of the support plane, relative to the hull's bounding radius (the
#: height of a face tilted by FACE_ALIGNED across its diameter)
FACE_BAND = 2.0 * math.sqrt(2.0 * FACE_ALIGNED)


@helper
def emit(out, k, pair, d, n0, n1, n2, a0, a1, a2, b0, b1, b2, mu, feature):
    """Row k of a detection's output (``detection.C_*`` columns: pair, distance, normal, witness on A, witness on
    B, friction, feature) ← one contact; returns k + 1 (k when ``out`` is full)."""
    if k >= out.shape[0]:
        return k
    out[k, 0] = pair
    out[k, 1] = d
    out[k, 2], out[k, 3], out[k, 4] = n0, n1, n2
    out[k, 5], out[k, 6], out[k, 7] = a0, a1, a2
    out[k, 8], out[k, 9], out[k, 10] = b0, b1, b2
    out[k, 11] = mu
    out[k, 12] = feature
    return k + 1


@helper
def in_plane_axes(f0, f1, f2, a0, a1, a2):
    """Two unit vectors (u, w) spanning the plane ⊥ f, u along a's part in that plane (any, when a ∥ f)."""
    c = f0 * a0 + f1 * a1 + f2 * a2
    u0, u1, u2 = a0 - c * f0, a1 - c * f1, a2 - c * f2
    un = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if un > 1e-9:
        u0, u1, u2 = u0 / un, u1 / un, u2 / un
    else:
        u0, u1, u2 = unit_perpendicular(f0, f1, f2)
    w0, w1, w2 = cross3(f0, f1, f2, u0, u1, u2)
    return u0, u1, u2, w0, w1, w2


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


@helper
def _put(poly, s, a, x0, x1, x2):
    poly[s, a, 0], poly[s, a, 1], poly[s, a, 2] = x0, x1, x2


# ---- the faces and features of each shape ------------------------------------------------------------------------
@njit(**KERNEL)
def _box_face(gf, gw, g, i, s, poly, slot):
    """poly[slot, :4] ← the corners, in order around it, of box g's face of outward normal s·(axis i)."""
    e0, e1, e2 = _box_axis(gw, g, i)
    h = s * gf[g, GF_SIZE + i]
    o0, o1, o2 = gw[g, GW_P] + h * e0, gw[g, GW_P + 1] + h * e1, gw[g, GW_P + 2] + h * e2
    j1, j2 = (i + 1) % 3, (i + 2) % 3
    u0, u1, u2 = _box_axis(gw, g, j1)
    w0, w1, w2 = _box_axis(gw, g, j2)
    hu, hw = gf[g, GF_SIZE + j1], gf[g, GF_SIZE + j2]
    for a in range(4):
        su = 1.0 if a == 0 or a == 3 else -1.0
        sw = 1.0 if a < 2 else -1.0
        _put(poly, slot, a, o0 + su * hu * u0 + sw * hw * w0, o1 + su * hu * u1 + sw * hw * w1,
             o2 + su * hu * u2 + sw * hw * w2)
    return 4


@njit(**KERNEL)
def _cap(gf, gw, g, s, f0, f1, f2, poly, slot):
    """poly[slot, :RIM] ← the RIM-gon inscribed in cylinder g's cap at s·(half length) along its axis, its first
    corner along f's part in the cap's plane."""
    a0, a1, a2 = axis_z(gw, g)
    r, h = gf[g, GF_SIZE], s * gf[g, GF_SIZE + 1]
    u0, u1, u2, w0, w1, w2 = in_plane_axes(a0, a1, a2, f0, f1, f2)
    c0, c1, c2 = gw[g, GW_P] + h * a0, gw[g, GW_P + 1] + h * a1, gw[g, GW_P + 2] + h * a2
    for a in range(RIM):
        th = 2.0 * math.pi * a / RIM
        cu, cw = r * math.cos(th), r * math.sin(th)
        _put(poly, slot, a, c0 + cu * u0 + cw * w0, c1 + cu * u1 + cw * w1, c2 + cu * u2 + cw * w2)
    return RIM


@njit(**KERNEL)
def hull_patch(gi, gw, verts, g, e0, e1, e2, band, ceiling, deepest, poly, slot):
    """poly[slot] ← the vertices of hull g nearest the plane ⊥ e from below — those x with e·x ≤ min e·x + ``band``
    and e·x < ``ceiling`` — reduced to the extreme ones along PATCH_DIRECTIONS directions of the plane (corners of
    their convex hull), and, with ``deepest``, the vertex of least e·x too; in order of angle about e (about their
    centroid). Returns their number (≤ PATCH). ``poly[1]`` is scratch."""
    v0, nv = gi[g, GI_V0], gi[g, GI_NV]
    lo = math.inf
    low = v0
    for v in range(v0, v0 + nv):
        x0, x1, x2 = to_world(gw, g, verts[v, 0], verts[v, 1], verts[v, 2])
        z = e0 * x0 + e1 * x1 + e2 * x2
        if z < lo:
            lo, low = z, v
    u0, u1, u2 = unit_perpendicular(e0, e1, e2)
    w0, w1, w2 = cross3(e0, e1, e2, u0, u1, u2)
    top = poly[1]                          # top[j] = (largest value along direction j, its vertex)
    for j in range(PATCH_DIRECTIONS):
        top[j, 0] = -math.inf
        top[j, 1] = -1.0
    for v in range(v0, v0 + nv):
        x0, x1, x2 = to_world(gw, g, verts[v, 0], verts[v, 1], verts[v, 2])
        z = e0 * x0 + e1 * x1 + e2 * x2
        if z > lo + band or z >= ceiling:
            continue
        xu, xw = u0 * x0 + u1 * x1 + u2 * x2, w0 * x0 + w1 * x1 + w2 * x2
        for j in range(PATCH_DIRECTIONS):
            th = 2.0 * math.pi * j / PATCH_DIRECTIONS
            val = math.cos(th) * xu + math.sin(th) * xw
            if val > top[j, 0]:
                top[j, 0], top[j, 1] = val, v
    m = 0
    ids = top[PATCH_DIRECTIONS:PATCH_DIRECTIONS + PATCH, 0]
    for j in range(PATCH_DIRECTIONS + 1):
        v = low if j == PATCH_DIRECTIONS else int(top[j, 1])
        if v < 0 or (j == PATCH_DIRECTIONS and not (deepest and lo < ceiling)):
            continue
        seen = False
        for a in range(m):
            seen = seen or int(ids[a]) == v
        if not seen:
            ids[m] = v
            m += 1
    # in order of angle about their centroid (insertion sort of at most PATCH points)
    cu = cw = 0.0
    for a in range(m):
        v = int(ids[a])
        x0, x1, x2 = to_world(gw, g, verts[v, 0], verts[v, 1], verts[v, 2])
        _put(poly, slot, a, x0, x1, x2)
        cu += (u0 * x0 + u1 * x1 + u2 * x2) / m
        cw += (w0 * x0 + w1 * x1 + w2 * x2) / m
    ang = top[PATCH_DIRECTIONS:PATCH_DIRECTIONS + PATCH, 1]
    for a in range(m):
        x0, x1, x2 = poly[slot, a, 0], poly[slot, a, 1], poly[slot, a, 2]
        ang[a] = math.atan2(w0 * x0 + w1 * x1 + w2 * x2 - cw, u0 * x0 + u1 * x1 + u2 * x2 - cu)
    for a in range(1, m):
        b = a
        while b > 0 and ang[b - 1] > ang[b]:
            ang[b - 1], ang[b] = ang[b], ang[b - 1]
            for c in range(3):
                poly[slot, b - 1, c], poly[slot, b, c] = poly[slot, b, c], poly[slot, b - 1, c]
            b -= 1
    return m


@njit(**KERNEL)
def face_alignment(gi, gf, gw, verts, g, d0, d1, d2, poly):
    """How well a face of geometry g faces the world direction d: the cosine of the angle between d and the
    outward normal of g's face most aligned with it (−1 when g has no faces: a sphere, a capsule)."""
    t = gi[g, GI_TYPE]
    if t == BOX:
        return _facing_axis(gw, g, d0, d1, d2)[2]
    if t == CYLINDER:
        a0, a1, a2 = axis_z(gw, g)
        return abs(a0 * d0 + a1 * d1 + a2 * d2)
    if t == HULL:
        m = hull_patch(gi, gw, verts, g, -d0, -d1, -d2, FACE_BAND * gf[g, GF_RAD], math.inf, False, poly, 2)
        if m < 3:
            return -1.0
        f0, f1, f2 = polygon_normal(poly, 2, m)
        return f0 * d0 + f1 * d1 + f2 * d2
    return -1.0


@njit(**KERNEL)
def polygon_normal(poly, slot, m):
    """The unit normal of the planar polygon poly[slot, :m] (Newell's method), oriented counter-clockwise."""
    n0 = n1 = n2 = 0.0
    for a in range(m):
        b = (a + 1) % m
        x0, x1, x2 = poly[slot, a, 0], poly[slot, a, 1], poly[slot, a, 2]
        y0, y1, y2 = poly[slot, b, 0], poly[slot, b, 1], poly[slot, b, 2]
        n0 += (x1 - y1) * (x2 + y2)
        n1 += (x2 - y2) * (x0 + y0)
        n2 += (x0 - y0) * (x1 + y1)
    s = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if s == 0.0:
        return 0.0, 0.0, 0.0
    return n0 / s, n1 / s, n2 / s


@njit(**KERNEL)
def reference_face(gi, gf, gw, verts, g, d0, d1, d2, poly):
    """poly[2, :m] ← the corners of geometry g's face most aligned with the world direction d (which must have a
    face: ``face_alignment`` > 0), in order; returns m, the face's outward unit normal f and a point c of its
    plane."""
    t = gi[g, GI_TYPE]
    if t == BOX:
        i, s, _ = _facing_axis(gw, g, d0, d1, d2)
        f0, f1, f2 = _box_axis(gw, g, i)
        m = _box_face(gf, gw, g, i, s, poly, 2)
        return m, s * f0, s * f1, s * f2, poly[2, 0, 0], poly[2, 0, 1], poly[2, 0, 2]
    if t == CYLINDER:
        a0, a1, a2 = axis_z(gw, g)
        s = 1.0 if a0 * d0 + a1 * d1 + a2 * d2 >= 0.0 else -1.0
        m = _cap(gf, gw, g, s, d0, d1, d2, poly, 2)
        h = s * gf[g, GF_SIZE + 1]
        return m, s * a0, s * a1, s * a2, gw[g, GW_P] + h * a0, gw[g, GW_P + 1] + h * a1, gw[g, GW_P + 2] + h * a2
    m = hull_patch(gi, gw, verts, g, -d0, -d1, -d2, FACE_BAND * gf[g, GF_RAD], math.inf, False, poly, 2)
    f0, f1, f2 = polygon_normal(poly, 2, m)
    if f0 * d0 + f1 * d1 + f2 * d2 < 0.0:
        f0, f1, f2 = -f0, -f1, -f2
    # the plane through the face's highest corner along f (its corners lie within the band of it)
    top = 0
    for a in range(1, m):
        if f0 * poly[2, a, 0] + f1 * poly[2, a, 1] + f2 * poly[2, a, 2] > \
                f0 * poly[2, top, 0] + f1 * poly[2, top, 1] + f2 * poly[2, top, 2]:
            top = a
    return m, f0, f1, f2, poly[2, top, 0], poly[2, top, 1], poly[2, top, 2]


@njit(**KERNEL)
def incident_feature(gi, gf, gw, verts, g, f0, f1, f2, c0, c1, c2, margin, poly):
    """poly[0, :m] ← the part of geometry g nearest the reference plane through c of outward normal f (the module
    docstring: a box's face most opposed to f, a capsule's core segment, a cylinder's cap or side line, a hull's
    vertices within the margin); returns m and g's core radius (a capsule's radius, else 0)."""
    t = gi[g, GI_TYPE]
    if t == BOX:
        i, s, _ = _facing_axis(gw, g, -f0, -f1, -f2)
        return _box_face(gf, gw, g, i, s, poly, 0), 0.0
    a0, a1, a2 = axis_z(gw, g)
    if t == CAPSULE or t == CYLINDER:
        r, h = gf[g, GF_SIZE], gf[g, GF_SIZE + 1]
        fa = f0 * a0 + f1 * a1 + f2 * a2
        if t == CYLINDER and abs(fa) >= math.sqrt(0.5):
            return _cap(gf, gw, g, -1.0 if fa >= 0.0 else 1.0, -f0, -f1, -f2, poly, 0), 0.0
        p0, p1, p2 = gw[g, GW_P], gw[g, GW_P + 1], gw[g, GW_P + 2]
        if t == CYLINDER:       # the side's line nearest the plane
            u0, u1, u2, _, _, _ = in_plane_axes(a0, a1, a2, -f0, -f1, -f2)
            p0, p1, p2 = p0 + r * u0, p1 + r * u1, p2 + r * u2
        _put(poly, 0, 0, p0 - h * a0, p1 - h * a1, p2 - h * a2)
        _put(poly, 0, 1, p0 + h * a0, p1 + h * a1, p2 + h * a2)
        return 2, r if t == CAPSULE else 0.0
    # HULL: its vertices within the margin of the plane
    level = f0 * c0 + f1 * c1 + f2 * c2
    return hull_patch(gi, gw, verts, g, f0, f1, f2, math.inf, level + margin, True, poly, 0), 0.0


# ---- clipping ----------------------------------------------------------------------------------------------------
@njit(**KERNEL)
def clip_polygon(poly, m, u0, u1, u2, limit):
    """Sutherland–Hodgman: the polygon poly[0, :m] cut to the half-space u·x ≤ limit, into poly[0]; returns its
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
def clip_segment(poly, u0, u1, u2, limit):
    """The segment poly[0, :2] cut to the half-space u·x ≤ limit, in place; returns 2, or 0 when nothing is left."""
    da = u0 * poly[0, 0, 0] + u1 * poly[0, 0, 1] + u2 * poly[0, 0, 2] - limit
    db = u0 * poly[0, 1, 0] + u1 * poly[0, 1, 1] + u2 * poly[0, 1, 2] - limit
    if da > 0.0 and db > 0.0:
        return 0
    if da > 0.0 or db > 0.0:
        out = 0 if da > 0.0 else 1
        t = da / (da - db)
        for c in range(3):
            poly[0, out, c] = poly[0, 0, c] + t * (poly[0, 1, c] - poly[0, 0, c])
    return 2


@njit(**KERNEL)
def clip_to_face(poly, m, mr, f0, f1, f2):
    """The incident polygon (m ≥ 3), segment (m = 2) or point poly[0, :m] cut to the prism over the convex
    reference face poly[2, :mr] (outward normal f); returns the count left in poly[0]."""
    g0 = g1 = g2 = 0.0                      # a point inside the face, to orient its sides outwards
    for a in range(mr):
        g0 += poly[2, a, 0] / mr
        g1 += poly[2, a, 1] / mr
        g2 += poly[2, a, 2] / mr
    for a in range(mr):
        if m == 0:
            return 0
        b = (a + 1) % mr
        e0, e1, e2 = poly[2, b, 0] - poly[2, a, 0], poly[2, b, 1] - poly[2, a, 1], poly[2, b, 2] - poly[2, a, 2]
        u0, u1, u2 = cross3(e0, e1, e2, f0, f1, f2)
        limit = u0 * poly[2, a, 0] + u1 * poly[2, a, 1] + u2 * poly[2, a, 2]
        if u0 * g0 + u1 * g1 + u2 * g2 > limit:
            u0, u1, u2, limit = -u0, -u1, -u2, -limit
        if m >= 3:
            m = clip_polygon(poly, m, u0, u1, u2, limit)
        elif m == 2:
            m = clip_segment(poly, u0, u1, u2, limit)
        elif u0 * poly[0, 0, 0] + u1 * poly[0, 0, 1] + u2 * poly[0, 0, 2] > limit:
            m = 0
    return m


# ---- the manifold ------------------------------------------------------------------------------------------------
@njit(**KERNEL)
def face_contacts(gi, gf, gw, verts, pair, ga, gb, n0, n1, n2, margin, mu, out, k, poly):
    """The manifold of geometries ga (A) and gb (B) whose contact normal (A to B) is n (module docstring), into rows
    k.. of ``out``; returns the next row, or −1 when n is the normal of neither's face, or when no clipped point is
    within the margin (the pair's one closest-point contact stands)."""
    ca = face_alignment(gi, gf, gw, verts, ga, n0, n1, n2, poly)
    cb = face_alignment(gi, gf, gw, verts, gb, -n0, -n1, -n2, poly)
    if max(ca, cb) < 1.0 - FACE_ALIGNED:
        return -1
    flip = cb > ca                                   # the reference face is B's (its outward normal ≈ −n)
    ref, inc = (gb, ga) if flip else (ga, gb)
    s = -1.0 if flip else 1.0
    mr, f0, f1, f2, c0, c1, c2 = reference_face(gi, gf, gw, verts, ref, s * n0, s * n1, s * n2, poly)
    m, r = incident_feature(gi, gf, gw, verts, inc, f0, f1, f2, c0, c1, c2, margin, poly)
    m = clip_to_face(poly, m, mr, f0, f1, f2)
    # the clipped points within the margin, kept in poly[0] with their distances in poly[1, :, 0]
    kept = 0
    deepest = 0
    for a in range(m):
        sep = f0 * (poly[0, a, 0] - c0) + f1 * (poly[0, a, 1] - c1) + f2 * (poly[0, a, 2] - c2) - r
        if sep < margin:
            for c in range(3):
                poly[0, kept, c] = poly[0, a, c]
            poly[1, kept, 0] = sep
            if sep < poly[1, deepest, 0]:
                deepest = kept
            kept += 1
    if kept == 0:
        return -1
    take = min(kept, MAX_MANIFOLD)
    code = 16 * (2 * ref + (1 if flip else 0))
    for j in range(take):
        a = (deepest + (j * kept) // take) % kept
        x0, x1, x2 = poly[0, a, 0] - r * f0, poly[0, a, 1] - r * f1, poly[0, a, 2] - r * f2   # on inc's surface
        sep = poly[1, a, 0]
        y0, y1, y2 = x0 - sep * f0, x1 - sep * f1, x2 - sep * f2                             # on the face
        if flip:
            k = emit(out, k, pair, sep, -f0, -f1, -f2, x0, x1, x2, y0, y1, y2, mu, code + a)
        else:
            k = emit(out, k, pair, sep, f0, f1, f2, y0, y1, y2, x0, x1, x2, mu, code + a)
    return k
