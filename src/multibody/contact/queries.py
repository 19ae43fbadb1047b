"""Distance and collision queries on a model's collision elements at a configuration, from Python (Pinocchio's
``computeDistance`` / ``computeCollisions`` with coal): ``distance(model, q, pair)`` and ``collisions(model, q)``.

The elements are packed once per model and filter (``collision_sets.pack_collisions``; hulls of mesh files made
once); each query makes one pass of placements over the bodies (``kinematics``), the elements' world poses
(``shapes.world_poses``), and runs the detection's narrow phase (``detection.pair_distance``: closed forms for
spheres, capsules, half-spaces and a sphere on a box or a cylinder, GJK/EPA for the rest, ``contact/gjk.py``) on the
pairs. Each pair's answer is a :class:`Proximity`: the signed distance d (negative: the depth of penetration), the
unit normal n from A to B and the witness points p_A on A and p_B on B (ground coordinates), p_B − p_A = d n; for a
half-space and a shape, the shape's deepest point.

Which pairs: those of contact detection (``collision_sets``): every two elements on different bodies, except two on
the ground, two half-spaces and two elements on adjacent bodies (a body and its parent other than the ground: their
joint holds them together; a body and the ground stay, as in MuJoCo, for the obstacles and floors on the ground), then
``exclude``: pairs of collision or body names never tried — an SRDF's ``<disable_collisions>``
(``multibody.io.srdf_disabled_pairs``), which also lists a fixed robot's base link (on the ground) with its first
link —, and ``pairs``: only these pairs (instead of the rule). ``distance`` takes one pair of collision or body names; for
bodies with several elements, the closest pair of their elements.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> _ = b.add_body("ball", mass=1.0, inertia=(0.004, 0.004, 0.004))
>>> _ = b.add_joint("slide", mb.Prismatic(axis=(1, 0, 0)), "ground", "ball")
>>> _ = b.add_collision("ball_geom", "ball", mb.Sphere(0.1))
>>> _ = b.add_collision("wall", "ground", mb.Box((0.2, 1.0, 1.0)), mb.Placement(translation=(1.0, 0.0, 0.0)))
>>> model = b.build()
>>> d = distance(model, [0.5], ("ball_geom", "wall"))
>>> round(d.distance, 12), (d.normal.round(12) + 0.0).tolist()    # 1 − 0.1 − 0.5 − 0.1, ball to wall
(0.3, [1.0, 0.0, 0.0])
>>> [(c.a, c.b, round(c.distance, 12)) for c in collisions(model, [0.85])]
[('ball_geom', 'wall', -0.05)]
"""
from dataclasses import dataclass

import numpy as np
from numba import njit

from multibody.algorithms.dynamics import as_vector, data_at, fill_general
from multibody.contact.collision_sets import pack_collisions
from multibody.contact.detection import pair_distance
from multibody.contact.gjk import gjk_workspace
from multibody.contact.shapes import GI_TYPE, GW_WIDTH, HALFSPACE, bounds, world_poses
from multibody.errors import ModelError
from multibody.kernels.kinematics import kinematics_kernel, workspace_views
from multibody.kernels.spatial import KERNEL

__all__ = ["distance", "collisions", "Proximity", "query_pairs"]

#: columns of a row of :func:`pair_distances_kernel`'s output: the pair's index, d, n (3), p_A (3), p_B (3)
Q_PAIR, Q_DIST, Q_N, Q_PA, Q_PB = 0, 1, 2, 5, 8
Q_WIDTH = 11
#: the attribute of a Model under which the packed sets are kept, by filter (a cache: the Model is unchanged)
CACHE_ATTR = "_multibody_queries"


@dataclass(frozen=True)
class Proximity:
    """The answer of a query for one pair: collision elements ``a`` and ``b`` (on bodies ``body_a``, ``body_b``),
    the signed ``distance`` (negative: penetration), the unit ``normal`` from a to b and the witness points
    ``point_a``, ``point_b`` (ground coordinates), point_b − point_a = distance · normal."""

    a: str
    b: str
    body_a: str
    body_b: str
    distance: float
    normal: np.ndarray
    point_a: np.ndarray
    point_b: np.ndarray


@njit(**KERNEL)
def pair_distances_kernel(gi, gf, verts, pairs, gw, margin, out, ws):
    """The rows (``Q_WIDTH``) of the pairs in ``pairs`` whose distance is below ``margin`` (infinite: every pair),
    into ``out``; returns their number. A pair whose bounding boxes (``shapes.bounds``), widened by the margin, do
    not overlap is not closer than the margin and is skipped. ``gw``: the world poses, ``ws``: the GJK/EPA workspace."""
    k = 0
    for p in range(pairs.shape[0]):
        ga = pairs[p, 0]
        gb = pairs[p, 1]
        if gi[ga, GI_TYPE] != HALFSPACE and margin < np.inf:
            a = bounds(gi, gf, gw, ga)
            b = bounds(gi, gf, gw, gb)
            apart = False
            for c in range(3):
                if a[c] > b[3 + c] + margin or b[c] > a[3 + c] + margin:
                    apart = True
            if apart:
                continue
        r = pair_distance(gi, gf, gw, verts, ga, gb, ws)
        if r[0] < margin:
            out[k, Q_PAIR] = p
            for c in range(10):
                out[k, Q_DIST + c] = r[c]
            k += 1
    return k


def _names(spec, what):
    """``spec`` (pairs of names, or None) as a hashable key of the cache."""
    if spec is None:
        return None
    try:
        return tuple(tuple(item) for item in spec)
    except TypeError:
        raise ModelError(f"{what}: expected pairs of collision or body names, got {spec!r}", element=what) from None


def query_pairs(model, pairs=None, exclude=None):
    """The packed collision set of the queries (module docstring: the pairs tried), made once per model and filter
    and kept on the model. Pairs of ``exclude`` that name a body without collision elements are left out (an SRDF
    lists every link)."""
    key = (_names(pairs, "pairs"), _names(exclude, "exclude"))
    cache = model.__dict__.setdefault(CACHE_ATTR, {})
    if key not in cache:
        if not model.collisions:
            raise ModelError(f"model '{model.name}' has no collision elements", element="collisions")
        known = {c.name for c in model.collisions} | {c.body_name for c in model.collisions}
        excluded = None if key[1] is None else [p for p in key[1] if len(p) == 2 and set(p) <= known]
        cs = pack_collisions(model, contact_pairs=key[0], exclude=excluded)
        cache[key] = (cs, cs.pairs, gjk_workspace())
    return cache[key]


def _query(model, q, pairs, exclude, margin, data, t):
    d = data_at(model, data, t)
    q = as_vector(q, d.nq, "q", model)
    cs, chosen, ws = query_pairs(model, pairs, exclude)
    zero = np.zeros(d.nv)
    fill_general(d, q, zero, t)
    try:
        kinematics_kernel(d.mi, d.mf, q, zero, zero, d.work, 0)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    wb, _ = workspace_views(d.work, d.nbodies + 1, d.nv)
    gw = np.empty((cs.gi.shape[0], GW_WIDTH))
    world_poses(cs.gi, cs.gf, wb, gw)
    out = np.empty((chosen.shape[0], Q_WIDTH))
    k = pair_distances_kernel(cs.gi, cs.gf, cs.verts, chosen, gw, float(margin), out, ws)
    result = []
    for row in out[:k]:
        a, b = chosen[int(row[Q_PAIR])]
        result.append(Proximity(cs.names[a], cs.names[b], cs.bodies[a], cs.bodies[b], float(row[Q_DIST]),
                                row[Q_N:Q_N + 3].copy(), row[Q_PA:Q_PA + 3].copy(), row[Q_PB:Q_PB + 3].copy()))
    return result


def distance(model, q, pair, data=None, t=None):
    """The :class:`Proximity` of ``pair`` — two collision element names, or body names (then the closest pair of
    their elements) — at configuration q (module docstring)."""
    try:
        a, b = pair
    except (TypeError, ValueError):
        raise ModelError(f"pair must be two collision or body names, got {pair!r}", element="pair") from None
    found = _query(model, q, [(a, b)], None, np.inf, data, t)
    if not found:
        raise ModelError(f"pair ('{a}', '{b}'): no two collision elements to compare (the same element, or two "
                         "half-spaces)", element="pair")
    best = min(found, key=lambda r: r.distance)
    if best.a != a and best.body_a != a:
        # the set stores a pair with the smaller shape code first: give it in the order asked
        return Proximity(best.b, best.a, best.body_b, best.body_a, best.distance, -best.normal, best.point_b,
                         best.point_a)
    return best


def collisions(model, q, margin=0.0, pairs=None, exclude=None, data=None, t=None):
    """The pairs of collision elements closer than ``margin`` at q (default 0: those in contact or penetrating), as
    a list of :class:`Proximity` sorted by distance; ``margin=np.inf`` gives every pair. ``exclude``: pairs of
    collision or body names never tried (an SRDF's disabled pairs, ``multibody.io.srdf_disabled_pairs``);
    ``pairs``: only these pairs (the module docstring)."""
    try:
        margin = float(margin)
    except (TypeError, ValueError):
        raise ModelError(f"margin must be a number (m), got {margin!r}", element="margin") from None
    return sorted(_query(model, q, pairs, exclude, margin, data, t), key=lambda r: r.distance)
