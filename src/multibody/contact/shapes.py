"""Convex collision shapes in compiled code: the packed layout, world poses, support maps, bounding boxes.

The collision elements of a Model (``multibody.model.geometry``) are packed once (``multibody.contact.collision_sets``)
into three arrays that the detection kernels read:

``gi`` (G, GI_WIDTH) int64 — per geometry: its shape code (:data:`HALFSPACE` ... :data:`HULL`), its body (kernel
index, 0 = ground), and for a convex hull the first row and the number of its vertices in ``verts``;
``gf`` (G, GF_WIDTH) float64 — its placement in the kernel frame of its body (rotation row-major, translation),
its dimensions (``GF_SIZE``: sphere (r, 0, 0), capsule and cylinder (r, half length, 0), box the half sides,
hull (0, 0, 0)), its friction coefficient and its bounding radius about its origin;
``verts`` (V, 3) — the vertices of the convex hulls, in their geometry's frame.

Each shape is centred on its frame's origin, axes as in ``multibody.model.geometry``: capsule and cylinder along
z, the half-space z <= 0. A sphere is a point and a capsule a segment (their *core*) swept by their radius, so
the distance of two shapes is that of their cores less the radii (detection works on the cores: exact for
points and segments, ``contact/gjk.py``).

The world pose of every geometry, ``gw`` (G, 12) (rotation row-major, then the origin), is made from the body
placements that a kinematics pass left in the workspace (``kinematics.B_R``, ``B_P``), at every evaluation.
"""
import math

from numba import njit

from multibody.kernels.kinematics import B_P, B_R
from multibody.kernels.spatial import KERNEL, helper

#: shape codes (ordered: a pair is stored with the smaller code first, so a half-space is always its first shape)
HALFSPACE, SPHERE, CAPSULE, CYLINDER, BOX, HULL = range(6)
SHAPE_CODES = {"halfspace": HALFSPACE, "sphere": SPHERE, "capsule": CAPSULE, "cylinder": CYLINDER, "box": BOX,
               "mesh": HULL}
#: columns of ``gi``
GI_TYPE, GI_BODY, GI_V0, GI_NV = range(4)
GI_WIDTH = 4
#: columns of ``gf``: local rotation (9), local origin (3), dimensions (3), friction, bounding radius
GF_R, GF_P, GF_SIZE, GF_MU, GF_RAD = 0, 9, 12, 15, 16
GF_WIDTH = 17
#: columns of ``gw`` (world poses)
GW_R, GW_P = 0, 9
GW_WIDTH = 12


@njit(**KERNEL, forceinline=True)
def world_poses(gi, gf, wb, gw):
    """gw[g] ← the world pose of every geometry: its body's placement (``wb``, from a kinematics pass) times its
    placement on the body."""
    for g in range(gi.shape[0]):
        b = gi[g, GI_BODY]
        for r in range(3):
            for c in range(3):
                s = 0.0
                for k in range(3):
                    s += wb[b, B_R + 3 * r + k] * gf[g, GF_R + 3 * k + c]
                gw[g, GW_R + 3 * r + c] = s
            s = wb[b, B_P + r]
            for k in range(3):
                s += wb[b, B_R + 3 * r + k] * gf[g, GF_P + k]
            gw[g, GW_P + r] = s


@helper
def to_world(gw, g, x0, x1, x2):
    """The point x of geometry g's frame in world coordinates."""
    return (gw[g, 9] + gw[g, 0] * x0 + gw[g, 1] * x1 + gw[g, 2] * x2,
            gw[g, 10] + gw[g, 3] * x0 + gw[g, 4] * x1 + gw[g, 5] * x2,
            gw[g, 11] + gw[g, 6] * x0 + gw[g, 7] * x1 + gw[g, 8] * x2)


@helper
def to_local(gw, g, d0, d1, d2):
    """The world vector d in geometry g's axes (Rᵀ d)."""
    return (gw[g, 0] * d0 + gw[g, 3] * d1 + gw[g, 6] * d2,
            gw[g, 1] * d0 + gw[g, 4] * d1 + gw[g, 7] * d2,
            gw[g, 2] * d0 + gw[g, 5] * d1 + gw[g, 8] * d2)


@helper
def axis_z(gw, g):
    """The z axis of geometry g in world coordinates (a capsule's or cylinder's axis, a half-space's normal)."""
    return gw[g, 2], gw[g, 5], gw[g, 8]


@helper
def core_radius(gi, gf, g):
    """The radius swept about the core: a sphere's or capsule's radius, 0 for the other shapes."""
    t = gi[g, GI_TYPE]
    return gf[g, GF_SIZE] if t == SPHERE or t == CAPSULE else 0.0


@njit(**KERNEL)
def local_support(gi, gf, verts, g, l0, l1, l2, core):
    """A point of geometry g (its core when ``core``: a sphere's centre, a capsule's segment) farthest along the
    direction l (in its own axes), in its own coordinates. Ties are broken towards +: any maximizer will do."""
    t = gi[g, GI_TYPE]
    if t == SPHERE:
        if core:
            return 0.0, 0.0, 0.0
        r = gf[g, GF_SIZE]
        n = math.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
        if n == 0.0:
            return 0.0, 0.0, r
        return r * l0 / n, r * l1 / n, r * l2 / n
    if t == CAPSULE:
        h = gf[g, GF_SIZE + 1]
        z = h if l2 >= 0.0 else -h
        if core:
            return 0.0, 0.0, z
        r = gf[g, GF_SIZE]
        n = math.sqrt(l0 * l0 + l1 * l1 + l2 * l2)
        if n == 0.0:
            return 0.0, 0.0, z + r
        return r * l0 / n, r * l1 / n, z + r * l2 / n
    if t == CYLINDER:
        r = gf[g, GF_SIZE]
        h = gf[g, GF_SIZE + 1]
        z = h if l2 >= 0.0 else -h
        rho = math.sqrt(l0 * l0 + l1 * l1)
        if rho == 0.0:
            return 0.0, 0.0, z
        return r * l0 / rho, r * l1 / rho, z
    if t == BOX:
        return (gf[g, GF_SIZE] if l0 >= 0.0 else -gf[g, GF_SIZE],
                gf[g, GF_SIZE + 1] if l1 >= 0.0 else -gf[g, GF_SIZE + 1],
                gf[g, GF_SIZE + 2] if l2 >= 0.0 else -gf[g, GF_SIZE + 2])
    # HULL: the vertex of largest l·x
    v0 = gi[g, GI_V0]
    best = v0
    top = -math.inf
    for k in range(v0, v0 + gi[g, GI_NV]):
        s = verts[k, 0] * l0 + verts[k, 1] * l1 + verts[k, 2] * l2
        if s > top:
            top = s
            best = k
    return verts[best, 0], verts[best, 1], verts[best, 2]


@njit(**KERNEL)
def support(gi, gf, gw, verts, g, d0, d1, d2, core):
    """The support point of geometry g (or of its core) in the world direction d, in world coordinates."""
    l0, l1, l2 = to_local(gw, g, d0, d1, d2)
    s0, s1, s2 = local_support(gi, gf, verts, g, l0, l1, l2, core)
    return to_world(gw, g, s0, s1, s2)


@njit(**KERNEL)
def bounds(gi, gf, gw, g):
    """The world axis-aligned bounding box (lo0, lo1, lo2, hi0, hi1, hi2) of geometry g (a half-space: all space).
    Exact for spheres, capsules, cylinders and boxes; a hull's is the box of its bounding sphere."""
    t = gi[g, GI_TYPE]
    c0, c1, c2 = gw[g, GW_P], gw[g, GW_P + 1], gw[g, GW_P + 2]
    e0 = e1 = e2 = 0.0
    if t == HALFSPACE:
        return -math.inf, -math.inf, -math.inf, math.inf, math.inf, math.inf
    if t == SPHERE or t == HULL:
        e0 = e1 = e2 = gf[g, GF_SIZE] if t == SPHERE else gf[g, GF_RAD]
    elif t == CAPSULE or t == CYLINDER:
        r = gf[g, GF_SIZE]
        h = gf[g, GF_SIZE + 1]
        a0, a1, a2 = axis_z(gw, g)
        if t == CAPSULE:
            e0, e1, e2 = h * abs(a0) + r, h * abs(a1) + r, h * abs(a2) + r
        else:
            e0 = h * abs(a0) + r * math.sqrt(max(0.0, 1.0 - a0 * a0))
            e1 = h * abs(a1) + r * math.sqrt(max(0.0, 1.0 - a1 * a1))
            e2 = h * abs(a2) + r * math.sqrt(max(0.0, 1.0 - a2 * a2))
    else:  # BOX
        for k in range(3):
            hk = gf[g, GF_SIZE + k]
            e0 += abs(gw[g, k]) * hk
            e1 += abs(gw[g, 3 + k]) * hk
            e2 += abs(gw[g, 6 + k]) * hk
    return c0 - e0, c1 - e1, c2 - e2, c0 + e0, c1 + e1, c2 + e2
