"""Collision elements for contact: adding them to a built Model, hulling meshes, packing them for the kernels.

* :func:`with_collisions` — a copy of a Model with more (or other) collision elements, e.g. spheres at the
  foot frames of a legged robot read from a URDF file, and a floor. The dynamics arrays are shared: collision
  elements are not part of them. ``Model.with_collisions`` calls it.
* :func:`mesh_hull` — the convex hull of a collision mesh (``mb.Mesh``), read and hulled with trimesh (the
  optional extra ``multibody[contact]``), scaled as the element says; contact treats a mesh as its hull.
* :func:`pack_collisions` — the arrays that detection reads (``kernels/shapes.py``) and the pairs it tries:
  every two elements on different bodies, except two on the ground, two half-spaces, and a body with its parent
  (their joint holds them; a body with the ground stays, as in MuJoCo), then the user's filters.
"""
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from multibody.errors import ModelError
from multibody.kernels.collision import manifold_size
from multibody.kernels.shapes import (GF_MU, GF_P, GF_R, GF_RAD, GF_SIZE, GF_WIDTH, GI_BODY, GI_NV, GI_TYPE, GI_V0,
                                      GI_WIDTH, HALFSPACE, SHAPE_CODES)
from multibody.model.geometry import Collision, Sphere, check_shape
from multibody.model.placement import Placement

__all__ = ["with_collisions", "mesh_hull", "pack_collisions", "CollisionSet"]


# ---- adding collision elements to a built model ----------------------------------------------------------------
def with_collisions(model, elements=(), spheres=None, friction=1.0, keep=True):
    """A copy of ``model`` whose collision elements are its own (``keep=True``; ``keep=False`` drops them) and
    the new ones:

    ``elements``: tuples ``(name, where, shape[, placement[, friction]])`` — ``where`` a body or a frame name
    (``model.frame``: a frame's placement is composed with the element's), ``placement`` in that frame;
    ``spheres``: ``{frame: radius}`` — a sphere centred on each frame, named after it (the usual model of a
    legged robot's feet), with ``friction``.

    A missing body or frame, a shape that is not one, a negative radius, a friction below 0 or a name used twice
    is a ``ModelError`` naming the element. The copy shares the model's arrays (the dynamics are unchanged).

    Example
    -------
    >>> import multibody as mb
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> m = simple_pendulum().with_collisions([("floor", "ground", mb.HalfSpace(), mb.Placement(translation=(0, 0,
    ...     -2)))], spheres={"bob": 0.05})
    >>> [(c.name, c.body_name, c.shape.kind) for c in m.collisions]
    [('floor', 'ground', 'halfspace'), ('bob', 'bob', 'sphere')]
    """
    new = list(model.collisions) if keep else []
    names = {c.name for c in new}
    items = [tuple(e) for e in elements]
    for frame, radius in (spheres or {}).items():
        element = f"contact sphere at '{frame}'"
        try:
            shape = Sphere(radius)
        except ModelError as exc:
            raise ModelError(f"{element}: {str(exc).split(': ', 1)[-1]}", element=element) from None
        items.append((frame, frame, shape, None, friction))
    for item in items:
        if not 3 <= len(item) <= 5:
            raise ModelError(f"collision element {item!r}: expected (name, body or frame, shape[, placement[, "
                             "friction]])", element="collision")
        name, where, shape, place, mu = (tuple(item) + (None, friction))[:5]
        element = f"collision '{name}'"
        if not isinstance(name, str) or not name:
            raise ModelError(f"collision element {item!r}: the name must be a non-empty string", element="collision")
        if name in names:
            raise ModelError(f"{element} is defined twice", element=element)
        names.add(name)
        try:
            frame = model.frame(where)
        except ModelError as exc:
            raise ModelError(f"{element}: {exc}", element=element) from None
        check_shape(shape, element)
        place = frame.placement if place is None else frame.placement * _placement(place, element)
        new.append(Collision(name, frame.body, frame.body_name, shape, place, _friction(mu, element)))
    out = object.__new__(type(model))
    out.__dict__.update({k: v for k, v in model.__dict__.items() if not k.startswith("_multibody")})
    out.__dict__["collisions"] = tuple(new)
    return out


def _placement(place, element):
    if isinstance(place, Placement):
        return place
    try:
        R, p = place
        return Placement(R, p, element=element)
    except (TypeError, ValueError):
        raise ModelError(f"{element}: placement must be a Placement or (rotation, translation), got {place!r}",
                         element=element) from None


def _friction(mu, element):
    try:
        x = float(mu)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: friction must be a number, got {mu!r}", element=element) from None
    if not np.isfinite(x) or x < 0.0:
        raise ModelError(f"{element}: friction must be a finite number >= 0, got {mu!r}", element=element)
    return x


# ---- meshes ------------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _hull_of_file(filename):
    try:
        import trimesh
    except ImportError:
        raise ModelError(f"mesh '{filename}': contact with a mesh needs trimesh to hull it (pip install "
                         "'multibody[contact]' or trimesh)", element=filename) from None
    if not Path(filename).is_file():
        raise ModelError(f"mesh '{filename}': file not found (a URDF's package:// meshes need package_dirs=)",
                         element=filename)
    try:
        mesh = trimesh.load(filename, force="mesh")
        points = np.asarray(mesh.convex_hull.vertices, dtype=float)
    except Exception as exc:   # trimesh's own errors: an unreadable or degenerate file
        raise ModelError(f"mesh '{filename}': cannot be read and hulled ({exc})", element=filename) from None
    if points.shape[0] < 4:
        raise ModelError(f"mesh '{filename}': its convex hull has no volume", element=filename)
    points.flags.writeable = False
    return points


def mesh_hull(shape, element="mesh"):
    """The vertices (k, 3) of the convex hull of the ``Mesh`` ``shape``, scaled by its ``scale``, in its frame.
    A missing file, a missing trimesh or a file that cannot be hulled is a ``ModelError`` naming ``element``."""
    try:
        points = _hull_of_file(shape.filename)
    except ModelError as exc:
        raise ModelError(f"{element}: {exc}", element=element) from None
    return points * np.asarray(shape.scale, dtype=float)


# ---- packing ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CollisionSet:
    """The packed collision elements of a model (``kernels/shapes.py``): ``gi``, ``gf``, ``verts``; ``pairs``
    (P, 2) the geometry indices of the pairs that detection tries (smaller shape code first); ``names`` of the
    geometries (the collision elements' names), ``bodies`` their body names, ``capacity`` the most contacts
    the pairs can give at once."""

    gi: np.ndarray
    gf: np.ndarray
    verts: np.ndarray
    pairs: np.ndarray
    names: tuple
    bodies: tuple
    capacity: int

    def pair_names(self, p):
        """(collision A, collision B, body A, body B) of pair p."""
        a, b = self.pairs[p]
        return self.names[a], self.names[b], self.bodies[a], self.bodies[b]


def _selector(spec, what, collisions):
    """The pairs of element names that ``spec`` (pairs of collision or body names) designates, as a set of
    frozensets of geometry indices; an unknown name is a ``ModelError``."""
    by_name = {c.name: [g] for g, c in enumerate(collisions)}
    by_body = {}
    for g, c in enumerate(collisions):
        by_body.setdefault(c.body_name, []).append(g)
    out = set()
    for item in spec:
        try:
            a, b = item
        except (TypeError, ValueError):
            raise ModelError(f"{what}: expected pairs of collision or body names, got {item!r}", element=what) from None
        sides = []
        for name in (a, b):
            gs = by_name.get(name, by_body.get(name))
            if gs is None:
                raise ModelError(f"{what}: '{name}' is neither a collision element nor a body with collision "
                                 f"elements (elements: {', '.join(by_name) or 'none'})", element=what)
            sides.append(gs)
        out |= {frozenset((x, y)) for x in sides[0] for y in sides[1] if x != y}
    return out


def pack_collisions(model, contact_pairs=None, exclude=None):
    """The :class:`CollisionSet` of ``model``'s collision elements. ``contact_pairs``: only these pairs of
    collision or body names (instead of the default rule of the module docstring); ``exclude``: pairs of names
    never tried."""
    collisions = list(model.collisions)
    G = len(collisions)
    gi = np.zeros((G, GI_WIDTH), dtype=np.int64)
    gf = np.zeros((G, GF_WIDTH))
    hulls = []
    nverts = 0
    for g, c in enumerate(collisions):
        kind = c.shape.kind
        gi[g, GI_TYPE] = SHAPE_CODES[kind]
        gi[g, GI_BODY] = c.body
        place = model.body_frames[c.body] * c.placement      # in the kernel frame of the body
        gf[g, GF_R:GF_R + 9] = np.asarray(place.rotation, dtype=float).reshape(9)
        gf[g, GF_P:GF_P + 3] = np.asarray(place.translation, dtype=float)
        gf[g, GF_MU] = c.friction
        s = c.shape
        if kind == "sphere":
            gf[g, GF_SIZE] = s.radius
            gf[g, GF_RAD] = s.radius
        elif kind in ("capsule", "cylinder"):
            gf[g, GF_SIZE:GF_SIZE + 2] = s.radius, s.length / 2.0
            gf[g, GF_RAD] = (s.radius + s.length / 2.0) if kind == "capsule" else np.hypot(s.radius, s.length / 2.0)
        elif kind == "box":
            gf[g, GF_SIZE:GF_SIZE + 3] = np.asarray(s.size) / 2.0
            gf[g, GF_RAD] = float(np.linalg.norm(s.size)) / 2.0
        elif kind == "mesh":
            pts = mesh_hull(s, f"collision '{c.name}'")
            gi[g, GI_V0], gi[g, GI_NV] = nverts, pts.shape[0]
            gf[g, GF_RAD] = float(np.max(np.linalg.norm(pts, axis=1)))
            hulls.append(pts)
            nverts += pts.shape[0]
    verts = np.concatenate(hulls) if hulls else np.zeros((0, 3))
    parent = np.asarray(model.parent)
    chosen = None if contact_pairs is None else _selector(contact_pairs, "contact_pairs", collisions)
    excluded = set() if exclude is None else _selector(exclude, "exclude", collisions)
    pairs = []
    for a in range(G):
        for b in range(a + 1, G):
            ba, bb = collisions[a].body, collisions[b].body
            key = frozenset((a, b))
            if ba == bb or gi[a, GI_TYPE] == HALFSPACE and gi[b, GI_TYPE] == HALFSPACE or key in excluded:
                continue
            if chosen is not None:
                if key not in chosen:
                    continue
            elif (ba == 0 and bb == 0) or (ba > 0 and bb > 0 and (parent[ba] == bb or parent[bb] == ba)):
                continue
            pairs.append((a, b) if gi[a, GI_TYPE] <= gi[b, GI_TYPE] else (b, a))
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    capacity = int(sum(manifold_size(gi[a, GI_TYPE], gi[b, GI_TYPE]) for a, b in pairs))
    return CollisionSet(gi, gf, np.ascontiguousarray(verts), pairs, tuple(c.name for c in collisions),
                        tuple(c.body_name for c in collisions), capacity)
