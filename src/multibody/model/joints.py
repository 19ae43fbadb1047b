"""Joint types: what each joint lets the child body do relative to its parent.

Conventions (see ``docs/model-arrays.md``): a joint's ``placement`` locates the joint frame in the parent
body's frame; the child body's frame is the joint frame moved by the joint coordinates, so at the neutral
configuration it coincides with the placement. Child velocities are spatial vectors ``[ω; v]`` in child
coordinates; the motion subspace S (seed 001 §3.4.2, the joint's "partial velocities") maps the joint's
velocity coordinates to the relative spatial velocity of the child.

| joint | nq | nv | q | v |
|---|---|---|---|---|
| Fixed | 0 | 0 | – | – |
| Revolute(axis) | 1 | 1 | θ | θ̇ |
| Prismatic(axis) | 1 | 1 | d | ḋ |
| Cylindrical(axis) | 2 | 2 | θ, d | θ̇, ḋ |
| Universal(axis1, axis2) | 2 | 2 | θ1, θ2 | θ̇1, θ̇2 |
| Spherical() | 4 | 3 | quaternion (w, x, y, z) | ω, child frame |
| Planar() | 3 | 3 | x, y, θ in the joint frame's xy-plane | ẋ, ẏ, θ̇ |
| Free() | 7 | 6 | position, quaternion (w, x, y, z) | ω, v of the child origin, child frame |
"""
import numpy as np

from multibody.errors import ModelError

FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE = range(8)

#: joint type code -> class name
JOINT_CODES = {}


def unit_vector(axis, what, element):
    """``axis`` normalized to a read-only unit 3-vector, or a ``ModelError`` naming ``element``."""
    try:
        a = np.asarray(axis, dtype=float).reshape(3)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be 3 numbers, got {axis!r}", element=element) from None
    n = np.linalg.norm(a)
    if not np.isfinite(n) or n < 1e-12:
        raise ModelError(f"{element}: {what} must be a non-zero finite vector, got {a.tolist()}", element=element)
    # a unit vector is kept as given (a copy), so that normalizing is idempotent: files round-trip exactly
    a = a / n if abs(n - 1.0) > 4.0 * np.finfo(float).eps else a.copy()
    a.flags.writeable = False
    return a


class Joint:
    """Base class. Subclasses set ``code``, ``nq``, ``nv`` and their axes."""

    code = None
    nq = 0
    nv = 0
    #: the joint's coordinates are plain numbers (q̇ = v), so springs act on them directly
    linear_coordinates = True
    #: names of the coordinates, for plots and files
    coordinate_names = ()

    def axes(self):
        """The two axis slots stored in the Model (unused slots are zero)."""
        return np.zeros((2, 3))

    def neutral(self):
        return np.zeros(self.nq)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.code is not None:
            JOINT_CODES[cls.code] = cls.__name__

    def __repr__(self):
        return f"{type(self).__name__}()"

    def __eq__(self, other):
        return type(self) is type(other) and np.array_equal(self.axes(), other.axes())

    def __hash__(self):
        return hash((type(self).__name__, self.axes().tobytes()))


class _AxisJoint(Joint):
    def __init__(self, axis=(0.0, 0.0, 1.0)):
        self.axis = unit_vector(axis, "axis", f"{type(self).__name__} joint")

    def axes(self):
        out = np.zeros((2, 3))
        out[0] = self.axis
        return out

    def __repr__(self):
        return f"{type(self).__name__}(axis={self.axis.tolist()})"


class Fixed(Joint):
    """Welds the child to the parent."""

    code, nq, nv = FIXED, 0, 0


class Revolute(_AxisJoint):
    """Hinge about ``axis`` (joint frame): q = θ, S = [a; 0] (seed 001 §3.3, the "cylindrical" hinge).

    >>> Revolute(axis=(0, 2, 0)).axis.tolist()
    [0.0, 1.0, 0.0]
    """

    code, nq, nv = REVOLUTE, 1, 1
    coordinate_names = ("angle",)


class Prismatic(_AxisJoint):
    """Slider along ``axis``: q = d, S = [0; a]."""

    code, nq, nv = PRISMATIC, 1, 1
    coordinate_names = ("displacement",)


class Cylindrical(_AxisJoint):
    """Rotation about and slide along one ``axis``: q = (θ, d)."""

    code, nq, nv = CYLINDRICAL, 2, 2
    coordinate_names = ("angle", "displacement")


class Universal(Joint):
    """Two hinges: rotation θ1 about ``axis1`` then θ2 about ``axis2`` (``axis2`` fixed in the child),
    R = rot(a1, θ1) rot(a2, θ2) (seed 001 §3.3: the universal (Hooke) joint)."""

    code, nq, nv = UNIVERSAL, 2, 2
    coordinate_names = ("angle1", "angle2")

    def __init__(self, axis1=(1.0, 0.0, 0.0), axis2=(0.0, 1.0, 0.0)):
        element = "Universal joint"
        self.axis1 = unit_vector(axis1, "axis1", element)
        self.axis2 = unit_vector(axis2, "axis2", element)
        if abs(float(np.dot(self.axis1, self.axis2))) > 1.0 - 1e-9:
            raise ModelError(f"{element}: axis1 and axis2 must not be parallel", element=element)

    def axes(self):
        return np.array([self.axis1, self.axis2])

    def __repr__(self):
        return f"Universal(axis1={self.axis1.tolist()}, axis2={self.axis2.tolist()})"


class Spherical(Joint):
    """Ball joint: q = unit quaternion (w, x, y, z) (Euler parameters), v = ω in the child frame
    (seed 001 §3.1–3.2)."""

    code, nq, nv = SPHERICAL, 4, 3
    linear_coordinates = False
    coordinate_names = ("qw", "qx", "qy", "qz")

    def neutral(self):
        return np.array([1.0, 0.0, 0.0, 0.0])


class Planar(Joint):
    """Planar motion in the joint frame's xy-plane: q = (x, y, θ), q̇ = v; child R = rot(z, θ),
    p = (x, y, 0) (seed 001 §2.5, §3.2.2)."""

    code, nq, nv = PLANAR, 3, 3
    coordinate_names = ("x", "y", "angle")


class Free(Joint):
    """Six degrees of freedom: q = (p, quaternion w, x, y, z), v = [ω; v] of the child origin in child
    coordinates (seed 001 §3.4.5: the fictitious joint of a free-floating system)."""

    code, nq, nv = FREE, 7, 6
    linear_coordinates = False
    coordinate_names = ("x", "y", "z", "qw", "qx", "qy", "qz")

    def neutral(self):
        return np.array([0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
