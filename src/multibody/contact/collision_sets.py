"""The collision sets of a model: its collision elements packed for detection (``contact/shapes.py``) and the
pairs that detection tries: every two elements on different bodies, except two on the ground, two half-spaces, a
body with its parent (their joint holds them; a body with the ground stays, as in MuJoCo) and two elements whose
collision bits do not match (MuJoCo's rule: ``contype`` of one and ``conaffinity`` of the other share a bit); then
the model's filters (``model.contact_exclude``: never, ``model.contact_include``: always, MuJoCo's ``<exclude>`` and
``<pair>``) and the run's (``contact_pairs``: only these, ``exclude``).
"""

from dataclasses import dataclass

import numpy as np

from multibody.contact.detection import manifold_size
from multibody.contact.shapes import (GF_MU, GF_P, GF_R, GF_RAD, GF_SIZE, GF_WIDTH, GI_BODY, GI_NV, GI_TYPE, GI_V0,
                                      GI_WIDTH, HALFSPACE, SHAPE_CODES)
from multibody.errors import ModelError, shown
from multibody.model.collisions import mesh_hull

__all__ = ["pack_collisions", "CollisionSet"]


# ---- packing ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CollisionSet:
    """The packed collision elements of a model (``contact/shapes.py``): ``gi``, ``gf``, ``verts``; ``pairs``
    (P, 2) the geometry indices of the pairs that detection tries (smaller shape code first); ``pair_e`` (P,)
    each pair's coefficient of restitution (the larger of its two elements', ``model.geometry.Collision``);
    ``names`` of the geometries (the collision elements' names), ``bodies`` their body names, ``capacity`` the
    most contacts the pairs can give at once."""

    gi: np.ndarray
    gf: np.ndarray
    verts: np.ndarray
    pairs: np.ndarray
    pair_e: np.ndarray
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
            raise ModelError(f"{what}: expected pairs of collision or body names, got {shown(item)!r}", element=what) from None
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
    excluded |= _selector(getattr(model, "contact_exclude", ()), "contact exclude", collisions)
    included = _selector(getattr(model, "contact_include", ()), "contact include", collisions)
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
            elif key in included:
                pass
            elif (ba == 0 and bb == 0) or (ba > 0 and bb > 0 and (parent[ba] == bb or parent[bb] == ba)):
                continue
            elif not (collisions[a].contype & collisions[b].conaffinity or collisions[b].contype & collisions[a].conaffinity):
                continue
            pairs.append((a, b) if gi[a, GI_TYPE] <= gi[b, GI_TYPE] else (b, a))
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    pair_e = np.array([max(collisions[a].restitution, collisions[b].restitution) for a, b in pairs], dtype=np.float64)
    capacity = int(sum(manifold_size(gi[a, GI_TYPE], gi[b, GI_TYPE]) for a, b in pairs))
    return CollisionSet(gi, gf, np.ascontiguousarray(verts), pairs, pair_e, tuple(c.name for c in collisions),
                        tuple(c.body_name for c in collisions), capacity)
