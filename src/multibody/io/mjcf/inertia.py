"""Masses and inertias of MJCF bodies: ``<inertial>``, or the sum of their geoms' solids (MuJoCo's
``inertiafromgeom``), and the compiler's ``boundmass``, ``boundinertia`` and ``settotalmass``.

A geom's mass is its ``mass``, else ``density`` (default 1000) times its volume; its inertia about its centre, in
its frame, is that of the uniform solid, with MuJoCo's formulas (``mjCGeom::SetInertia``): sphere ⅖ m r²; capsule
the cylinder plus the two hemispheres moved to its ends; cylinder m (3 r² + h²)/12 and m r²/2; ellipsoid
m (b² + c²)/5 ...; box m (b² + c²)/3 of its half sizes; a mesh by MuJoCo's algorithm for its ``inertia`` attribute
(:func:`mesh_properties`: ``legacy``, the default, sums the absolute volumes of the pyramids from the mesh's centre to
each triangle; ``exact`` the signed ones, the solid its closed surface bounds; ``convex`` those of its convex hull).
Planes and height fields have none. A body's inertia from its geoms is the sum of theirs moved to the common centre (parallel axes), its own frame
kept (``model.inertia.combine_rigid``): the full tensor, where MuJoCo keeps its principal axes — the same
body.
"""
import math

import numpy as np

__all__ = ["geom_volume", "geom_inertia", "principal_bounds", "mesh_properties"]


def geom_volume(kind, size, mesh=None):
    """The volume of a geom of MuJoCo ``kind`` and ``size`` (half lengths; ``mesh``: its (volume, centre,
    inertia per unit density) for a mesh), 0 for a plane or height field."""
    r = size[0]
    if kind == "sphere":
        return 4.0 / 3.0 * math.pi * r ** 3
    if kind == "capsule":
        return math.pi * (r * r * 2 * size[1] + 4.0 / 3.0 * r ** 3)
    if kind == "cylinder":
        return math.pi * r * r * 2 * size[1]
    if kind == "ellipsoid":
        return 4.0 / 3.0 * math.pi * size[0] * size[1] * size[2]
    if kind == "box":
        return 8.0 * size[0] * size[1] * size[2]
    if kind == "mesh" and mesh is not None:
        return mesh[0]
    return 0.0


def geom_inertia(kind, size, mass, mesh=None):
    """(centre in the geom frame, 3x3 inertia about it in the geom frame) of a uniform geom of ``mass``."""
    r = size[0]
    c = np.zeros(3)
    if kind == "sphere":
        d = np.full(3, 2.0 * mass * r * r / 5.0)
    elif kind == "capsule":
        h = 2.0 * size[1]
        ms = mass * 4.0 * r / (4.0 * r + 3.0 * h)        # the two hemispheres' share of the volume
        mc = mass - ms
        a = mc * (3.0 * r * r + h * h) / 12.0
        s = 2.0 * ms * r * r / 5.0
        a += s + ms * h * (3.0 * r + 2.0 * h) / 8.0
        d = np.array([a, a, mc * r * r / 2.0 + s])
    elif kind == "cylinder":
        h = 2.0 * size[1]
        a = mass * (3.0 * r * r + h * h) / 12.0
        d = np.array([a, a, mass * r * r / 2.0])
    elif kind == "ellipsoid":
        x, y, z = size[:3] ** 2
        d = mass * np.array([y + z, x + z, x + y]) / 5.0
    elif kind == "box":
        x, y, z = size[:3] ** 2
        d = mass * np.array([y + z, x + z, x + y]) / 3.0
    elif kind == "mesh" and mesh is not None and mesh[0] > 0:
        return mesh[1], mesh[2] * (mass / mesh[0])
    else:
        d = np.zeros(3)
    return c, np.diag(d)


def principal_bounds(mass, inertia, boundmass, boundinertia):
    """``(mass, inertia)`` raised to at least ``boundmass`` and principal moments ``boundinertia`` (MuJoCo's
    compiler bounds; the principal axes kept)."""
    mass = max(mass, boundmass)
    if boundinertia > 0:
        w, V = np.linalg.eigh(inertia)
        if np.any(w < boundinertia):
            inertia = V @ np.diag(np.maximum(w, boundinertia)) @ V.T
    return mass, inertia


def _triangles(V, F):
    """Areas, unit normals and centres of the triangles F (k, 3) of the vertices V."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    n = np.cross(b - a, c - a)
    norm = np.linalg.norm(n, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(norm[:, None] > 0, n / norm[:, None], 0.0)
    return 0.5 * norm, unit, (a + b + c) / 3.0, (a, b, c)


def mesh_properties(V, F, kind="legacy"):
    """(volume, centre, inertia per unit density about the centre) of the mesh of vertices V (n, 3) and triangles F
    (k, 3) as MuJoCo's compiler computes them (``mjCMesh::ComputeVolume``, ``ComputeInertia``): pyramids from the
    area-weighted centre of the faces to each triangle give the centre, then pyramids from that centre give the
    volume and the second moments (each triangle's 1/20 formula); ``kind="legacy"`` takes each pyramid's volume
    absolute (MuJoCo's default), ``"exact"`` signed."""
    V = np.asarray(V, dtype=float)
    F = np.asarray(F, dtype=np.int64)
    area, normal, centre, _ = _triangles(V, F)
    facecen = (area[:, None] * centre).sum(axis=0) / area.sum()
    vol = np.einsum("ij,ij->i", centre - facecen, normal) * area / 3.0
    if kind == "legacy":
        vol = np.abs(vol)
    com = (vol[:, None] * (0.75 * centre + 0.25 * facecen)).sum(axis=0) / vol.sum()
    area, normal, centre, (D, E, G) = _triangles(V - com, F)
    vol = np.einsum("ij,ij->i", centre, normal) * area / 3.0
    if kind == "legacy":
        vol = np.abs(vol)
    P = np.zeros((3, 3))
    for i in range(3):
        for j in range(3):
            P[i, j] = np.sum(vol / 20.0 * (2.0 * (D[:, i] * D[:, j] + E[:, i] * E[:, j] + G[:, i] * G[:, j])
                                          + D[:, i] * E[:, j] + D[:, j] * E[:, i] + D[:, i] * G[:, j]
                                          + D[:, j] * G[:, i] + E[:, i] * G[:, j] + E[:, j] * G[:, i]))
    inertia = np.trace(P) * np.eye(3) - P
    return float(vol.sum()), com, inertia
