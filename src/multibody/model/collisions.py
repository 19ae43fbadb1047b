"""Collision elements added to a built Model, and the convex hulls of collision meshes (what the system is; the
contact wing, ``multibody/contact/``, packs them for detection and runs contact).

* :func:`with_collisions` — a copy of a Model with more (or other) collision elements, e.g. spheres at the
  foot frames of a legged robot read from a URDF file, and a floor. The dynamics arrays are shared: collision
  elements are not part of them. ``Model.with_collisions`` calls it.
* :func:`mesh_hull` — the convex hull of a collision mesh (``mb.Mesh``), read and hulled with trimesh (the
  optional extra ``multibody[contact]``), scaled as the element says; contact treats a mesh as its hull.
"""

import functools
from pathlib import Path

import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.geometry import Sphere, Collision, check_shape
from multibody.model.placement import Placement

__all__ = ["with_collisions", "mesh_hull", "collision_coefficient"]


# ---- adding collision elements to a built model ----------------------------------------------------------------
def with_collisions(model, elements=(), spheres=None, friction=1.0, keep=True, restitution=0.0):
    """A copy of ``model`` whose collision elements are its own (``keep=True``; ``keep=False`` drops them) and
    the new ones:

    ``elements``: tuples ``(name, where, shape[, placement[, friction[, restitution]]])`` — ``where`` a body or a
    frame name (``model.frame``: a frame's placement is composed with the element's), ``placement`` in that frame;
    ``spheres``: ``{frame: radius}`` — a sphere centred on each frame, named after it (the usual model of a
    legged robot's feet); ``friction`` and ``restitution``: the coefficients of the elements that do not give
    their own.

    A missing body or frame, a shape that is not one, a negative radius, a friction below 0, a restitution outside
    [0, 1] or a name used twice is a ``ModelError`` naming the element. The copy shares the model's arrays (the dynamics are unchanged).

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
        items.append((frame, frame, shape, None, friction, restitution))
    for item in items:
        if not 3 <= len(item) <= 6:
            raise ModelError(f"collision element {shown(item)!r}: expected (name, body or frame, shape[, placement[, "
                             "friction[, restitution]]])", element="collision")
        name, where, shape, place, mu, e = (tuple(item) + (None, friction, restitution)[len(item) - 3:])[:6]
        element = f"collision '{name}'"
        if not isinstance(name, str) or not name:
            raise ModelError(f"collision element {shown(item)!r}: the name must be a non-empty string", element="collision")
        if name in names:
            raise ModelError(f"{element} is defined twice", element=element)
        names.add(name)
        try:
            frame = model.frame(where)
        except ModelError as exc:
            raise ModelError(f"{element}: {exc}", element=element) from None
        check_shape(shape, element)
        place = frame.placement if place is None else frame.placement * _placement(place, element)
        new.append(Collision(name, frame.body, frame.body_name, shape, place,
                             collision_coefficient(mu, "friction", element),
                             collision_coefficient(e, "restitution", element, at_most=1.0)))
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


def collision_coefficient(value, what, element, at_most=None):
    """``value`` as a coefficient of a collision element (``what``: "friction", "restitution"): a finite number
    >= 0 (and <= ``at_most``), or a ``ModelError`` naming ``element``."""
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be a number, got {shown(value)!r}", element=element) from None
    if not np.isfinite(x) or x < 0.0 or (at_most is not None and x > at_most):
        bound = ">= 0" if at_most is None else f"in [0, {at_most:g}]"
        raise ModelError(f"{element}: {what} must be a finite number {bound}, got {shown(value)!r}", element=element)
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
