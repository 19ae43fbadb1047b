"""Triangle meshes of what a 3-D view draws of each body: its visual elements, its collision shapes, or — where a body
has neither — a shape inferred from its joints and its inertia.

Every mesh is a pair ``(vertices (n, 3), faces (m, 3))`` in the body's own frame (the frame ``forward_kinematics``
reports, ``frames="user"``), so a view transmits it once and moves it by the body's placement.

* Shapes (``multibody.model.geometry``): ``Sphere``, ``Capsule``, ``Cylinder`` as surfaces of revolution about the
  frame's z axis, ``Box`` with four vertices per side (sharp edges), ``Mesh`` files read with trimesh (an optional
  extra, ``pip install 'multibody[viewer]'``) and thinned by vertex clustering (Rossignac and Borrel, "Multi-resolution
  3D approximations for rendering complex scenes", 1993) to at most ``max_faces`` triangles; ``HalfSpace`` is no
  body shape (a view draws it as a patch of its plane).
* Inferred (:func:`inferred_parts`): a rod (a capsule) from the body's origin — where it hangs on its joint — to
  every joint and spring point it carries; a body that carries no joint (a leaf: a bob, a wheel, a panel at the end
  of a chain) is drawn whole, as the solid ellipsoid of its mass and inertia about its centre of mass
  (:func:`inertia_ellipsoid`), with a rod from its origin to the ellipsoid when the origin lies outside it (the
  massless rod of a simple pendulum); a body with joints gets its ellipsoid as well unless it is slender (its
  ellipsoid no wider than a few rods) with its centre of mass on a rod — a panel in a chain, a bicycle's rear frame
  with its rider are drawn whole, a thin rod of a pendulum is its rod. A body that rolls (``RollingDisc``,
  ``RollingOnProfile``) is a disc of the constraint's radius with a dark stripe across it, so that its rotation
  shows.
"""
import math
from pathlib import Path

import numpy as np

from multibody.errors import ModelError
from multibody.model.geometry import Box, Capsule, Cylinder, Mesh, Sphere
from multibody.model.joints import FREE, PLANAR
from multibody.model.placement import Placement

__all__ = ["Part", "shape_mesh", "inertia_ellipsoid", "inferred_parts", "body_parts",
           "simplify", "characteristic_length"]

#: segments around an axis of revolution and from pole to pole
AROUND, POLE_TO_POLE = 24, 12


class Part:
    """One drawn piece of a body: ``body`` index, ``role`` ("visual", "collision" or "inferred"), ``vertices`` (n, 3)
    in the body's frame, ``faces`` (m, 3) vertex indices, ``color`` RGBA in [0, 1] or None (the body's colour),
    ``name``."""

    __slots__ = ("body", "role", "vertices", "faces", "color", "name")

    def __init__(self, body, role, vertices, faces, color=None, name=""):
        self.body, self.role, self.name, self.color = int(body), role, name, color
        self.vertices = np.asarray(vertices, dtype=float).reshape(-1, 3)
        self.faces = np.asarray(faces, dtype=np.int64).reshape(-1, 3)


def _lathe(profile, n=AROUND):
    """The surface swept by the polyline ``profile`` [(r, z), ...] turning about z: a pole where r = 0, a ring of
    ``n`` vertices elsewhere; faces between consecutive rings, oriented outwards for a profile running from
    the bottom (z low) to the top."""
    ang = 2.0 * np.pi * np.arange(n) / n
    verts, rings = [], []
    for r, z in profile:
        start = len(verts)
        if r == 0.0:
            verts.append((0.0, 0.0, z))
            rings.append([start])
        else:
            verts += [(r * math.cos(a), r * math.sin(a), z) for a in ang]
            rings.append(list(range(start, start + n)))
    faces = []
    for lo, hi in zip(rings[:-1], rings[1:]):
        for k in range(n):
            k1 = (k + 1) % n
            if len(lo) == 1 and len(hi) == 1:
                continue
            if len(lo) == 1:
                faces.append((lo[0], hi[k1], hi[k]))
            elif len(hi) == 1:
                faces.append((lo[k], lo[k1], hi[0]))
            else:
                faces += [(lo[k], lo[k1], hi[k1]), (lo[k], hi[k1], hi[k])]
    return np.array(verts), np.array(faces, dtype=np.int64)


def _sphere_profile(radius, shift=0.0, lat=POLE_TO_POLE):
    """(r, z) of a sphere's meridian from the south pole to the north pole; the upper half raised by ``shift`` and the
    lower half lowered by it (a capsule), the equator then taken twice."""
    out = []
    for k in range(lat + 1):
        th = math.pi * k / lat - math.pi / 2.0
        z = radius * math.sin(th)
        r = 0.0 if k in (0, lat) else radius * math.cos(th)
        if shift and k == lat // 2 and 2 * k == lat:
            out += [(r, z - shift), (r, z + shift)]
        else:
            out.append((r, z + (shift if th > 0 else -shift)))
    return out


def _box(size):
    """Four vertices per side (the sides stay flat under smooth shading)."""
    half = 0.5 * np.asarray(size, dtype=float)
    verts, faces = [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u, w = (axis + 1) % 3, (axis + 2) % 3
            if sign < 0:
                u, w = w, u
            start = len(verts)
            for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                v = np.zeros(3)
                v[axis], v[u], v[w] = sign * half[axis], a * half[u], b * half[w]
                verts.append(v)
            faces += [(start, start + 1, start + 2), (start, start + 2, start + 3)]
    return np.array(verts), np.array(faces, dtype=np.int64)


def simplify(vertices, faces, max_faces):
    """At most ``max_faces`` triangles of a mesh by vertex clustering (Rossignac and Borrel 1993): the vertices in
    each cell of a grid merge into their mean, faces that collapse drop out (and duplicates); the grid is made
    coarser until the mesh is small enough (a surface keeps about as many faces as cells it crosses: the cells per
    side shrink with the square root of the excess)."""
    V, F = np.asarray(vertices, dtype=float), np.asarray(faces, dtype=np.int64)
    if len(F) <= max_faces:
        return V, F
    lo = V.min(axis=0)
    extent = max(float(np.max(V.max(axis=0) - lo)), 1e-12)
    cells = max(2.0, 2.0 * math.sqrt(max_faces))
    while True:
        k = np.minimum(np.floor((V - lo) / (extent / cells)).astype(np.int64), int(cells))
        side = int(cells) + 1
        _, inverse, counts = np.unique((k[:, 0] * side + k[:, 1]) * side + k[:, 2], return_inverse=True,
                                       return_counts=True)
        merged = np.zeros((len(counts), 3))
        np.add.at(merged, inverse, V)
        merged /= counts[:, None]
        G = inverse.reshape(-1)[F]
        G = G[(G[:, 0] != G[:, 1]) & (G[:, 1] != G[:, 2]) & (G[:, 0] != G[:, 2])]
        S, n = np.sort(G, axis=1), len(counts)                   # (a face keeps its winding: its normal)
        G = G[np.unique((S[:, 0] * n + S[:, 1]) * n + S[:, 2] if n < 2**21 else S, axis=0, return_index=True)[1]]
        if len(G) <= max_faces or cells <= 2.0:
            used, G = np.unique(G, return_inverse=True)
            return merged[used], G.reshape(-1, 3)
        cells = max(2.0, cells * min(0.9, math.sqrt(max_faces / len(G))))


def _read_mesh(shape, max_faces):
    """The triangles of a ``Mesh`` file (trimesh), scaled and thinned; ModelError when it cannot be read."""
    try:
        import trimesh
    except ImportError:
        raise ModelError(f"mesh '{shape.filename}': reading mesh files needs trimesh (pip install "
                         "'multibody[viewer]')", element="Mesh") from None
    if not Path(shape.filename).is_file():
        raise ModelError(f"mesh '{shape.filename}': no such file", element="Mesh")
    try:
        mesh = trimesh.load(shape.filename, force="mesh")
    except Exception as exc:          # trimesh raises many kinds (a missing reader, a damaged file)
        raise ModelError(f"mesh '{shape.filename}': trimesh cannot read it ({type(exc).__name__}: {exc})",
                         element="Mesh") from None
    V = np.asarray(mesh.vertices, dtype=float) * np.asarray(shape.scale)
    F = np.asarray(mesh.faces, dtype=np.int64)
    if len(F) == 0:
        raise ModelError(f"mesh '{shape.filename}': no triangles", element="Mesh")
    return simplify(V, F, max_faces)


def shape_mesh(shape, max_faces=3000):
    """``(vertices, faces)`` of a shape in its own frame (see the module docstring); None for a ``HalfSpace``."""
    if isinstance(shape, Sphere):
        return _lathe(_sphere_profile(shape.radius))
    if isinstance(shape, Capsule):
        return _lathe(_sphere_profile(shape.radius, 0.5 * shape.length))
    if isinstance(shape, Cylinder):
        r, h = shape.radius, 0.5 * shape.length
        return _lathe([(0.0, -h), (r, -h), (r, h), (0.0, h)])
    if isinstance(shape, Box):
        return _box(shape.size)
    if isinstance(shape, Mesh):
        return _read_mesh(shape, max_faces)
    return None


def _placed(mesh, placement):
    V, F = mesh
    return V @ np.asarray(placement.rotation, dtype=float).T + np.asarray(placement.translation, dtype=float), F


def inertia_ellipsoid(mass, inertia):
    """The solid homogeneous ellipsoid with the body's ``mass`` and ``inertia`` (3x3, about the centre of mass):
    ``(semi_axes (3,), axes (3, 3))``, the principal directions the columns of ``axes``. From ``I₁ = m (b² + c²)/5``
    and its two cyclic twins: ``a² = 5 (I₂ + I₃ − I₁) / (2 m)``; a negative value (round-off at the triangle
    inequality's edge) is taken as zero."""
    moments, axes = np.linalg.eigh(np.asarray(inertia, dtype=float))
    total = moments.sum()
    sq = 5.0 * (total - 2.0 * moments) / (2.0 * float(mass))
    return np.sqrt(np.maximum(sq, 0.0)), axes


def _ellipsoid(centre, semi_axes, axes):
    V, F = _lathe(_sphere_profile(1.0))
    return (V * semi_axes) @ axes.T + centre, F


def _rod(a, b, radius):
    """A capsule of ``radius`` from point a to point b."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    d = b - a
    length = float(np.linalg.norm(d))
    R = _frame_along(d / length) if length > 0 else np.eye(3)
    return _placed(shape_mesh(Capsule(radius, length)), Placement(R, 0.5 * (a + b)))


def _frame_along(z):
    """A rotation whose third column is the unit vector z."""
    x = np.cross(z, [1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.cross(z, [0.0, 1.0, 0.0])
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(z, x), z])


def _segment_distance(p, a, b):
    d = b - a
    s = 0.0 if d @ d == 0 else min(1.0, max(0.0, float((p - a) @ d / (d @ d))))
    return float(np.linalg.norm(p - a - s * d))


def characteristic_length(model, q):
    """The size of the system at configuration ``q``: the largest distance between its bodies' origins, joint points
    and centres of mass (1 when they all coincide), from ``forward_kinematics``."""
    import multibody as mb

    K = mb.forward_kinematics(model, q, frames="kernel")
    pts = [K.p[i] for i in range(model.nbodies + 1)]
    pts += [K.R[i] @ model.com[i] + K.p[i] for i in range(1, model.nbodies + 1)]
    for j in list(model.joints[1:]) + list(model.cut_joints):
        Pa, _ = model.joint_frames(j)
        pts.append(K.R[j.parent] @ Pa.translation + K.p[j.parent])
    pts = np.array(pts)
    size = float(np.max(np.linalg.norm(pts[:, None] - pts[None], axis=2)))
    return size if size > 0 else 1.0


def _rolling_discs(model, q):
    """Body → (centre, axle) in its kernel frame for every rolling disc: ``RollingDisc`` (its own axle) and
    ``RollingOnProfile`` (the normal of its plane, seen from the body at ``q``)."""
    import multibody as mb

    out = {}
    K = None
    for c in model.constraints:
        kind = type(c).__name__
        if kind == "RollingDisc":
            out[model.body_index(c.body)] = (np.asarray(c.center), np.asarray(c.axis), c.radius)
        elif kind == "RollingOnProfile":
            K = K if K is not None else mb.forward_kinematics(model, q, frames="kernel")
            b = model.body_index(c.body)
            out[b] = (np.asarray(c.center), K.R[b].T @ np.cross(c.e1, c.e2), c.radius)
    return out


def inferred_parts(model, q, radius=None):
    """Parts drawn for the bodies that have no visual or collision shape (see the module docstring), at rest
    configuration ``q`` (for the axle of a disc on a profile). ``radius``: of the rods (default 1.5 % of
    :func:`characteristic_length`)."""
    if radius is None:
        radius = 0.015 * characteristic_length(model, q)
    carried = {i: [] for i in range(model.nbodies + 1)}
    for j in list(model.joints[1:]) + list(model.cut_joints):
        Pa, Pc = model.joint_frames(j)
        if not (j.parent == 0 and j.joint.code in (FREE, PLANAR)):
            carried[j.parent].append(("joint", np.asarray(Pa.translation, dtype=float)))
        if j.is_cut:
            carried[j.child].append(("joint", np.asarray(Pc.translation, dtype=float)))
    for s in range(len(model.spring_k)):
        for e in range(2):
            carried[int(model.spring_body[s, e])].append(("spring", np.asarray(model.spring_point[s, e], dtype=float)))
    discs = _rolling_discs(model, q)
    parts = []
    for i in range(1, model.nbodies + 1):
        meshes = []
        points = [p for _, p in carried[i] if np.linalg.norm(p) > 1e-12]
        meshes += [_rod(np.zeros(3), p, radius) for p in points]
        leaf = not any(kind == "joint" for kind, _ in carried[i])
        com = np.asarray(model.com[i], dtype=float)
        if i in discs:
            centre, axle, r = discs[i]
            R = _frame_along(axle / np.linalg.norm(axle))
            meshes.append(_placed(shape_mesh(Cylinder(r, 0.08 * r)), Placement(R, centre)))
            stripe = _placed(_box((1.9 * r, 0.2 * r, 0.1 * r)), Placement(R, centre))
            parts.append(Part(i, "inferred", *stripe, color=(0.15, 0.15, 0.15, 1.0), name="stripe"))
        else:
            semi, axes = inertia_ellipsoid(model.mass[i], model.inertia_com[i])
            if leaf or np.sort(semi)[1] > 3.0 * radius or all(_segment_distance(com, np.zeros(3), p) > 2.0 * radius
                                                              for p in points):
                semi = np.maximum(semi, 1.5 * radius)
                meshes.append(_ellipsoid(com, semi, axes))
            local = axes.T @ (-com)
            if float(np.sum((local / np.maximum(semi, 1e-300)) ** 2)) > 1.0:    # (a thin rod has a zero semi-axis)
                meshes.append(_rod(np.zeros(3), com, radius))
        for V, F in meshes:
            parts.append(Part(i, "inferred", V, F, name="inferred"))
    # from the kernel frames to the bodies' own frames
    for part in parts:
        F = model.body_frames[part.body]
        if not F.is_identity():
            inv = F.inverse()
            part.vertices = part.vertices @ inv.rotation.T + inv.translation
    return parts


def _package_path(filename, urdf_path):
    """A ``package://NAME/rest`` file name resolved against the directories above the URDF file: the first one named
    NAME, or holding NAME (the layout of a ROS or example-robot-data tree)."""
    if not filename.startswith("package://"):
        return filename if not urdf_path or Path(filename).is_absolute() else str(Path(urdf_path).parent / filename)
    name, _, rest = filename[len("package://"):].partition("/")
    for d in Path(urdf_path).resolve().parents if urdf_path else ():
        for base in (d, d / name):
            if base.name == name and (base / rest).is_file():
                return str(base / rest)
    return filename


def body_parts(model, q, max_faces=3000):
    """Every drawn part of ``model`` at rest configuration ``q``, and the notes of what could not be drawn:
    ``(parts, notes)``. A body's visual elements are drawn; its collision shapes too (role "collision": a view shows
    them on demand where a body has visuals, always where it has none); a body with neither gets
    :func:`inferred_parts`. A mesh named ``package://NAME/...`` is looked for in a folder NAME above the model's URDF
    file. A mesh that cannot be read (no trimesh, a format trimesh needs another package for, a missing file) is
    left out with a note, and its body falls back to the next kind of shape."""
    parts, notes = [], []
    drawn = set()
    urdf = model.metadata.get("urdf", {}).get("path", "")
    for role, elements in (("visual", model.visuals), ("collision", model.collisions)):
        for e in elements:
            shape = e.shape
            if isinstance(shape, Mesh) and shape.filename.startswith("package://"):
                shape = Mesh(_package_path(shape.filename, urdf), shape.scale)
            try:
                mesh = shape_mesh(shape, max_faces)
            except ModelError as exc:
                notes.append(str(exc))
                continue
            if mesh is None:
                continue
            color = getattr(e, "color", None)
            parts.append(Part(e.body, role, *_placed(mesh, e.placement), color=color, name=e.name))
            drawn.add(e.body)
    parts += [p for p in inferred_parts(model, q) if p.body not in drawn]
    return parts, notes
