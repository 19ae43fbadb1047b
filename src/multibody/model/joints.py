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
| GeneralJoint(coordinates, rotation, translation, time) | n | n | the given coordinates | their rates |
"""
import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.rotations import direction

FIXED, REVOLUTE, PRISMATIC, CYLINDRICAL, UNIVERSAL, SPHERICAL, PLANAR, FREE, GENERAL = range(9)

#: joint type code -> class name
JOINT_CODES = {}


def unit_vector(axis, what, element):
    """``axis`` normalized to a read-only unit 3-vector, or a ``ModelError`` naming ``element``."""
    try:
        a = np.asarray(axis, dtype=float).reshape(3)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be 3 numbers, got {shown(axis)!r}", element=element) from None
    big = np.max(np.abs(a))
    if not (np.isfinite(big) and big > 0):
        raise ModelError(f"{element}: {what} must be a non-zero finite vector, got {a.tolist()}", element=element)
    # a unit vector is kept as given (a copy), so that normalizing is idempotent: files round-trip exactly
    with np.errstate(over="ignore", under="ignore"):
        n = np.linalg.norm(a)
    a = direction(a) if abs(n - 1.0) > 4.0 * np.finfo(float).eps else a.copy()
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

    def check(self, element):
        """Validate the joint once it is named (``ModelBuilder.add_joint``); a ``ModelError`` names ``element``."""

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


class GeneralJoint(Joint):
    """A joint given by its own kinematics (seed 001 §3.4.2, eqs. 3.101–3.107): the rotation and the joint
    vector of the child's joint frame relative to the parent's as sympy expressions of the joint's
    coordinates and, for a rheonomic joint, of the time.

    ``coordinates``: the n distinct sympy Symbols q_a1 … q_an (1 ≤ n ≤ 6); the joint's q are these and its
    v = q̇ (``linear_coordinates``: joint springs act on them).
    ``rotation``: 3x3 sympy matrix R(q, t), the child frame's axes in joint-frame coordinates (the
    convention of ``Placement``: child -> joint-frame coordinates). In the notes' terms (§8.2) this is
    R_rel,a = G_aᵀ, where e^{i−(a)} = G_a e^{i+(a)} (eq. 3.123). Default: the identity.
    ``translation``: 3-vector z(q, t), the child origin in joint-frame coordinates: the joint vector z_a of
    §3.4.2 from the joint point on the parent to that on the child. Default: zero.
    ``time``: the sympy Symbol t standing for the time in ``rotation`` and ``translation`` (a rheonomic joint,
    whose p_a0 and k_a0 of eqs. 3.101 and 3.104 are not zero); ``None`` for a scleronomic joint.

    From these the joint's angular and linear partial velocities p_ak = (∂R/∂q_k Rᵀ)^∨, k_ak = ∂z/∂q_k, the
    rheonomic terms p_a0 = (∂R/∂t Rᵀ)^∨, k_a0 = ∂z/∂t (eqs. 3.101, 3.104) and the velocity-product terms
    s_a and w_a (eqs. 3.103, 3.107) are derived with sympy and compiled
    (:mod:`multibody.kernels.general_joint`). A model with general joints is simulated by the ``"tree"``
    formulation; ``aba``, ``rnea`` and ``crba`` take the time as ``t=``.

    >>> import sympy as sp
    >>> th = sp.Symbol("theta")
    >>> hinge = GeneralJoint([th], rotation=sp.Matrix([[sp.cos(th), -sp.sin(th), 0],
    ...                                                 [sp.sin(th), sp.cos(th), 0], [0, 0, 1]]))
    >>> hinge.nq, hinge.nv, hinge.coordinate_names
    (1, 1, ('theta',))
    """

    code = GENERAL
    linear_coordinates = True

    def __init__(self, coordinates, rotation=None, translation=None, time=None):
        import sympy as sp

        self.coordinates = tuple(coordinates) if isinstance(coordinates, (list, tuple)) else (coordinates,)
        self.time = time
        self.rotation = sp.eye(3) if rotation is None else rotation
        self.translation = sp.zeros(3, 1) if translation is None else translation
        self.nq = self.nv = len(self.coordinates)
        self.coordinate_names = tuple(str(c) for c in self.coordinates)
        self._checked = False

    def check(self, element):
        """Validate coordinates, shapes and the rotation (RᵀR = E, det R = +1 at random points of q and t); a
        ``ModelError`` names ``element`` and what was expected."""
        if self._checked:
            return
        import sympy as sp

        coords = self.coordinates
        if not 1 <= len(coords) <= 6:
            raise ModelError(f"{element}: a general joint has 1 to 6 coordinates, got {len(coords)}", element=element)
        for c in coords:
            if not isinstance(c, sp.Symbol):
                raise ModelError(f"{element}: the coordinates must be sympy Symbols, got {shown(c)!r}", element=element)
        if len(set(coords)) != len(coords):
            raise ModelError(f"{element}: the coordinates {list(map(str, coords))} are not distinct", element=element)
        t = self.time
        if t is not None and (not isinstance(t, sp.Symbol) or t in coords):
            raise ModelError(f"{element}: time must be a sympy Symbol other than the coordinates, got {shown(t)!r}",
                             element=element)
        try:
            R = sp.Matrix(self.rotation)
            z = sp.Matrix(self.translation)
        except (TypeError, ValueError, sp.SympifyError) as exc:
            raise ModelError(f"{element}: rotation and translation must be sympy matrices ({exc})",
                             element=element) from None
        if R.shape != (3, 3):
            raise ModelError(f"{element}: rotation must be 3x3, got shape {R.shape}", element=element)
        if z.shape not in ((3, 1), (1, 3)):
            raise ModelError(f"{element}: translation must be a 3-vector, got shape {z.shape}", element=element)
        z = z.reshape(3, 1)
        allowed = set(coords) | ({t} if t is not None else set())
        extra = (R.free_symbols | z.free_symbols) - allowed
        if extra:
            raise ModelError(f"{element}: rotation and translation may depend on the coordinates "
                             f"{list(map(str, coords))}" + (f" and the time {t}" if t is not None else "")
                             + f" only, found {sorted(map(str, extra))}", element=element)
        args = list(coords) + ([t] if t is not None else [])
        fR = sp.lambdify(args, R, modules="numpy")
        fz = sp.lambdify(args, z, modules="numpy")
        rng = np.random.default_rng(20261123)
        for _ in range(5):
            x = rng.uniform(-np.pi, np.pi, len(args))
            try:
                Rn = np.asarray(fR(*x), dtype=float)
                zn = np.asarray(fz(*x), dtype=float)
            except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:
                raise ModelError(f"{element}: rotation or translation cannot be evaluated at "
                                 f"{dict(zip(map(str, args), x.round(3)))}: {exc}", element=element) from None
            if not (np.all(np.isfinite(Rn)) and np.all(np.isfinite(zn))):
                raise ModelError(f"{element}: rotation or translation is not finite at "
                                 f"{dict(zip(map(str, args), x.round(3)))}", element=element)
            err = np.max(np.abs(Rn.T @ Rn - np.eye(3)))
            if err > 1e-10 or np.linalg.det(Rn) < 0:
                raise ModelError(f"{element}: rotation must be a proper rotation matrix (RᵀR = E, det R = +1) for "
                                 f"all coordinates; at {dict(zip(map(str, args), x.round(3)))} |RᵀR − E| = {err:.3g}, "
                                 f"det R = {np.linalg.det(Rn):.6g}", element=element)
        self.rotation, self.translation = R, z
        self._checked = True

    def __repr__(self):
        return (f"GeneralJoint(coordinates={list(self.coordinates)}, rotation={list(self.rotation)}, "
                f"translation={list(self.translation)}, time={self.time})")

    def _key(self):
        return (self.coordinates, tuple(self.rotation), tuple(self.translation), self.time)

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash(("GeneralJoint",) + tuple(map(str, self._key())))
