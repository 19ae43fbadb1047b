"""Geometry and named frames attached to bodies: shapes, frames, visual and collision elements.

None of this enters the dynamics arrays: a frame is a named placement on a body (every URDF link and fixed
frame, and user frames added with ``ModelBuilder.add_frame``); a visual element is what an animation draws; a
collision element is what contact detection reads. Placements are given in the user's body frame (the frame
``com`` and ``inertia`` are given in; ``Model.body_frames`` relates it to the kernels' frame).

Shapes (SI units, each centred on its frame's origin):

* ``Sphere(radius)``; ``Sphere(0)`` is a point (a contact point: the foot of a rimless wheel's spoke, a robot's
  foot point);
* ``Capsule(radius, length)``: a cylinder of ``length`` along the frame's z axis between its two hemispherical
  caps (total extent ``length + 2 radius``);
* ``Cylinder(radius, length)``: axis along z, from ``-length/2`` to ``+length/2`` (URDF's convention);
* ``Box(size)``: full side lengths ``(sx, sy, sz)`` (URDF's convention);
* ``HalfSpace()``: the region z <= 0 of its frame (on ``"ground"`` with a placement: a floor or an incline);
* ``Mesh(filename, scale=(1, 1, 1))``: a mesh file, kept as its resolved path (read by the optional extras that
  draw or hull it).

Example
-------
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> b.add_body("ball", mass=1.0, inertia=(0.004, 0.004, 0.004))
'ball'
>>> b.add_joint("free", mb.Free(), parent="ground", child="ball")
'free'
>>> b.add_collision("ball_geom", "ball", mb.Sphere(0.1), friction=0.5)
'ball_geom'
>>> b.add_collision("floor", "ground", mb.HalfSpace())
'floor'
>>> b.add_frame("top", "ball", mb.Placement(translation=(0, 0, 0.1)))
'top'
>>> model = b.build()
>>> [c.name for c in model.collisions], model.frame("top").body
(['ball_geom', 'floor'], 1)
"""
import math
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.placement import Placement


def positive_number(value, what, element, allow_zero=False):
    """``value`` as a positive (``allow_zero``: non-negative) finite float, or a ``ModelError`` naming ``element``
    and ``what``."""
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be a number, got {shown(value)!r}", element=element) from None
    if not math.isfinite(x) or x < 0.0 or (x == 0.0 and not allow_zero):
        expected = "non-negative" if allow_zero else "positive"
        raise ModelError(f"{element}: {what} must be {expected} and finite, got {shown(value)!r}", element=element)
    return x


class Shape:
    """Base class of the geometric shapes (see the module docstring)."""

    kind = "shape"

    def as_dict(self):
        """JSON-like description ``{"kind": ..., <dimensions>}`` (model files, the viewer)."""
        return {"kind": self.kind}

    def __eq__(self, other):
        return type(self) is type(other) and self.as_dict() == other.as_dict()

    def __hash__(self):
        return hash(repr(self.as_dict()))

    def __repr__(self):
        args = ", ".join(f"{k}={shown(v)!r}" for k, v in self.as_dict().items() if k != "kind")
        return f"{type(self).__name__}({args})"


class Sphere(Shape):
    """A sphere of ``radius`` about its frame's origin; radius 0 is a point (contact detection treats a sphere as its
    centre swept by its radius, so a point needs nothing else)."""

    kind = "sphere"

    def __init__(self, radius):
        self.radius = positive_number(radius, "radius", "Sphere", allow_zero=True)

    def as_dict(self):
        return {"kind": self.kind, "radius": self.radius}


class Capsule(Shape):
    """A capsule: the points within ``radius`` of the segment from ``(0, 0, -length/2)`` to ``(0, 0, length/2)``."""

    kind = "capsule"

    def __init__(self, radius, length):
        self.radius = positive_number(radius, "radius", "Capsule")
        self.length = positive_number(length, "length", "Capsule", allow_zero=True)

    def as_dict(self):
        return {"kind": self.kind, "radius": self.radius, "length": self.length}


class Cylinder(Shape):
    """A solid cylinder of ``radius`` with its axis along z, from ``-length/2`` to ``length/2``."""

    kind = "cylinder"

    def __init__(self, radius, length):
        self.radius = positive_number(radius, "radius", "Cylinder")
        self.length = positive_number(length, "length", "Cylinder")

    def as_dict(self):
        return {"kind": self.kind, "radius": self.radius, "length": self.length}


class Box(Shape):
    """A box of full side lengths ``size = (sx, sy, sz)`` centred on its frame's origin."""

    kind = "box"

    def __init__(self, size):
        try:
            values = [float(s) for s in size]
        except (TypeError, ValueError, OverflowError):
            raise ModelError(f"Box: size must be 3 numbers, got {shown(size)!r}", element="Box") from None
        if len(values) != 3:
            raise ModelError(f"Box: size must be 3 numbers, got {shown(size)!r}", element="Box")
        self.size = tuple(positive_number(s, "size", "Box") for s in values)

    def as_dict(self):
        return {"kind": self.kind, "size": list(self.size)}


class HalfSpace(Shape):
    """The half-space z <= 0 of its frame (a floor, or an incline when its frame is turned)."""

    kind = "halfspace"


class Mesh(Shape):
    """A mesh file (``filename``, as resolved when it was read) scaled by ``scale`` along the frame's axes."""

    kind = "mesh"

    def __init__(self, filename, scale=(1.0, 1.0, 1.0)):
        if not isinstance(filename, str) or not filename:
            raise ModelError(f"Mesh: filename must be a non-empty string, got {filename!r}", element="Mesh")
        try:
            s = np.broadcast_to(np.asarray(scale, dtype=float), (3,))
        except (TypeError, ValueError):
            raise ModelError(f"Mesh '{filename}': scale must be 1 or 3 numbers, got {shown(scale)!r}",
                             element="Mesh") from None
        if not np.all(np.isfinite(s)) or np.any(s == 0):
            raise ModelError(f"Mesh '{filename}': scale must be finite and non-zero, got {shown(scale)!r}", element="Mesh")
        self.filename = filename
        self.scale = tuple(float(x) for x in s)

    def as_dict(self):
        return {"kind": self.kind, "filename": self.filename, "scale": list(self.scale)}


SHAPES = {cls.kind: cls for cls in (Sphere, Capsule, Cylinder, Box, HalfSpace, Mesh)}


def shape_from_dict(data, element="shape"):
    """The ``Shape`` that ``Shape.as_dict`` described; ``ModelError`` naming ``element`` otherwise."""
    if not isinstance(data, dict) or data.get("kind") not in SHAPES:
        raise ModelError(f"{element}: expected a shape with 'kind' one of {', '.join(SHAPES)}, got {shown(data)!r}",
                         element=element)
    args = {k: v for k, v in data.items() if k != "kind"}
    try:
        return SHAPES[data["kind"]](**args)
    except TypeError as exc:
        raise ModelError(f"{element}: {exc}", element=element) from None


@dataclass(frozen=True)
class Frame:
    """A named frame fixed on a body: ``placement`` locates it in the body's frame. ``body`` is the body's index
    in the built Model (0 = ground), ``body_name`` its name."""

    name: str
    body: int
    body_name: str
    placement: Placement


@dataclass(frozen=True)
class Visual:
    """A shape drawn on a body at ``placement`` (body frame); ``color`` is RGBA in [0, 1] or None."""

    name: str
    body: int
    body_name: str
    shape: Shape
    placement: Placement
    color: tuple = None


@dataclass(frozen=True)
class Collision:
    """A shape that contact detection reads, on a body at ``placement`` (body frame), with the Coulomb friction
    coefficient ``friction`` and Newton's coefficient of restitution ``restitution`` ∈ [0, 1] of its impacts (a
    pair's coefficients are the larger of its two elements' each: the friction as in MuJoCo, the restitution as
    in Box2D, so that one bouncy ball bounces off any floor). ``contype`` and ``conaffinity`` are MuJoCo's collision
    bits: two elements may touch when ``contype`` of one and ``conaffinity`` of the other share a bit (both 1 by
    default: every pair may)."""

    name: str
    body: int
    body_name: str
    shape: Shape
    placement: Placement
    friction: float = 1.0
    restitution: float = 0.0
    contype: int = 1
    conaffinity: int = 1


def check_shape(shape, element):
    if not isinstance(shape, Shape):
        raise ModelError(f"{element}: expected a shape (mb.Sphere, mb.Capsule, mb.Cylinder, mb.Box, mb.HalfSpace, "
                         f"mb.Mesh), got {shown(shape)!r}", element=element)
    return shape


def check_color(color, element):
    if color is None:
        return None
    try:
        rgba = [float(c) for c in color]
    except (TypeError, ValueError):
        raise ModelError(f"{element}: color must be 3 or 4 numbers in [0, 1], got {shown(color)!r}", element=element) from None
    if len(rgba) == 3:
        rgba.append(1.0)
    if len(rgba) != 4 or not all(0.0 <= c <= 1.0 for c in rgba):
        raise ModelError(f"{element}: color must be 3 or 4 numbers in [0, 1], got {shown(color)!r}", element=element)
    return tuple(rgba)
