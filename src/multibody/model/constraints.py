"""Constraints that are not tree joints: elements of the Model, added with ``ModelBuilder.add_constraint``.

Every constraint is described once and used by every formulation that takes constraints (``constrained``,
``cartesian``, ``stabilized``). Each one contributes rows of one of two kinds (seed 001 §2.1; seed 000 §1):

* **position rows** ``f(q, t) = 0`` (holonomic, relative degree 2): the formulations use them at the
  acceleration level ``G v̇ = γ`` with ``ḟ = G v`` and project positions onto ``f = 0``;
* **velocity rows** ``g = G(q) v = 0`` that are not the derivative of any position row (non-integrable,
  relative degree 1: rolling without slip).

=====================  ==========================================================================  ======
element                what it keeps                                                               rows
=====================  ==========================================================================  ======
loop-closing joint     a joint that closes a loop of the joint graph (``add_joint`` cuts it), as    1–6
                       the joint's own equations between its two bodies (seed 001 §3.6)
``PointOnPlane``       a point of a body on a plane fixed in another body or the ground             1
``PointOnProfile``     a point of a body on a plane curve ``h(x, z) = 0`` (a polynomial)            1
``RollingDisc``        a knife-edge disc rolling without slip on a plane: contact height (position  3
                       row) and the two tangential velocities of the contact point (velocity rows)
``RollingOnProfile``   a disc rolling without slip on a plane curve, in the curve's plane: contact  2
                       (position row) and no slip (velocity row), with the contact angle α of seed
                       000 §3 as an auxiliary variable (tangency ``f4 = 0``)
``UserConstraint``     any ``f(q, t) = 0`` given as a Python function, optional Jacobian            any
``VelocityConstraint`` any ``J(q, t) v + b(q, t) = 0`` given as Python functions                    any
=====================  ==========================================================================  ======

Points and axes are given in the frame of the body they belong to (the user's body frame); the ground is
``"ground"``. The compiled elements are packed into flat arrays at build time
(:class:`ConstraintTable`, read by ``multibody.kernels.constraints``); the Python ones are evaluated by the
formulations in Python.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> b.add_body("ball", mass=1.0, inertia=(0.1, 0.1, 0.1))
'ball'
>>> b.add_joint("free", mb.Free(), "ground", "ball")
'free'
>>> b.add_constraint(mb.PointOnPlane("floor", "ball", point=(0, 0, -0.1), normal=(0, 0, 1)))
'floor'
>>> b.build().constraints[0].nrows
1
"""
from dataclasses import dataclass

import numpy as np
import sympy as sp

from multibody.errors import ModelError
from multibody.model.bodies import vector3 as _vec3
from multibody.model.joints import unit_vector as _unit3
from multibody.model.placement import Placement

__all__ = ["Constraint", "PointOnPlane", "PointOnProfile", "RollingDisc", "RollingOnProfile", "UserConstraint",
           "VelocityConstraint", "Profile", "LoopJoint", "ConstraintTable",
           "E_POINT", "E_ALIGN", "E_LOCK", "E_OFFSET", "E_POINT_PROFILE", "E_DISC_PROFILE", "E_DISC_PLANE"]

# element codes of the compiled rows (multibody.kernels.constraints)
E_POINT, E_ALIGN, E_LOCK, E_OFFSET, E_POINT_PROFILE, E_DISC_PROFILE, E_DISC_PLANE = range(7)
#: rows of each compiled element
ELEMENT_ROWS = {E_POINT: 3, E_ALIGN: 1, E_LOCK: 1, E_OFFSET: 1, E_POINT_PROFILE: 1, E_DISC_PROFILE: 2,
                E_DISC_PLANE: 3}
#: relative degree of each row of an element: 2 position row, 1 velocity row
ELEMENT_LEVELS = {E_POINT: (2, 2, 2), E_ALIGN: (2,), E_LOCK: (2,), E_OFFSET: (2,), E_POINT_PROFILE: (2,),
                  E_DISC_PROFILE: (2, 1), E_DISC_PLANE: (2, 1, 1)}
#: auxiliary variables of each element (the contact angle of a disc on a profile, seed 000 §3)
ELEMENT_AUX = {E_DISC_PROFILE: 1}

_FIXED, _REVOLUTE, _PRISMATIC, _CYLINDRICAL, _UNIVERSAL, _SPHERICAL, _PLANAR, _FREE = range(8)


def _positive(value, what, element):
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be a number, got {value!r}", element=element) from None
    if not (np.isfinite(x) and x > 0.0):
        raise ModelError(f"{element}: {what} must be positive and finite, got {x}", element=element)
    return x


def _row_count(nrows, element):
    """``nrows`` of a Python constraint: None (found by one evaluation) or a positive integer."""
    if nrows is None:
        return None
    if isinstance(nrows, bool) or not isinstance(nrows, (int, np.integer)) or nrows < 1:
        raise ModelError(f"{element}: nrows must be a positive integer (or None), got {nrows!r}", element=element)
    return int(nrows)


def _perp(u):
    """Two unit vectors n2, n3 with (u, n2, n3) right-handed and orthonormal."""
    t = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
    n2 = np.cross(u, t)
    n2 /= np.linalg.norm(n2)
    return n2, np.cross(u, n2)


# ----------------------------------------------------------------------------------------------------------
# plane curves
class Profile:
    """A plane curve ``h(x, z) = 0``, a polynomial in ``x`` and ``z`` (seed 000 §3: the profile).

    ``Profile(h, x, z)`` takes a sympy expression and its two symbols; ``Profile.graph(f, x)`` the graph
    ``z = f(x)`` (``h = f(x) − z``). ``h'_z`` must not vanish on the curve (no vertical parts). The curve is
    oriented so that ``∇h`` points downwards (``h'_z < 0``): a disc rolls on the side ``h < 0`` (above the
    curve) and ``∇h`` points from its centre to the contact point, as in seed 000 §3. A polynomial keeps the
    curve plain data (a coefficient table) that compiled code evaluates exactly with its derivatives.

    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> p = Profile.graph(x**2 / 2, x)
    >>> p.evaluate(1.0, 0.5)[0], p.height(1.0)
    (0.0, 0.5)
    """

    def __init__(self, h, x, z, element="profile"):
        self.element = element
        try:
            h = sp.sympify(h)
        except (sp.SympifyError, TypeError) as exc:
            raise ModelError(f"{element}: h must be a sympy expression in {x}, {z}: {exc}", element=element) from None
        extra = h.free_symbols - {x, z}
        if extra:
            raise ModelError(f"{element}: h depends on {sorted(map(str, extra))}; only {x}, {z} are allowed",
                             element=element)
        try:
            poly = sp.Poly(h, x, z)
        except sp.PolynomialError:
            raise ModelError(f"{element}: h = {h} must be a polynomial in {x} and {z} (approximate other curves by "
                             "a polynomial)", element=element) from None
        terms = [(int(i), int(j), float(c)) for (i, j), c in poly.terms() if c != 0]
        if not terms:
            raise ModelError(f"{element}: h is identically zero", element=element)
        if not any(j > 0 for _, j, _ in terms):
            raise ModelError(f"{element}: h = {h} does not depend on {z}: the curve would be vertical lines",
                             element=element)
        self.h, self.x, self.z = h, x, z
        self.terms = np.array(terms, dtype=float)
        self.sign = 1.0

    @classmethod
    def graph(cls, f, x, element="profile"):
        """The curve ``z = f(x)``, ``f`` a polynomial in the sympy symbol ``x``."""
        z = sp.Dummy("z")
        return cls(sp.sympify(f) - z, x, z, element=element)

    def oriented(self, x_probe, element=None):
        """This curve with ``h`` multiplied by −1 if ``h'_z > 0`` at the curve point above ``x_probe``."""
        z0 = self.height(x_probe)
        if self.evaluate(x_probe, z0)[2] > 0:
            self.terms[:, 2] *= -1.0
            self.sign = -self.sign
        return self

    def evaluate(self, x, z):
        """``(h, h_x, h_z, h_xx, h_xz, h_zz)`` at ``(x, z)``."""
        out = np.zeros(6)
        for i, j, c in self.terms:
            i, j = int(i), int(j)
            xi, zj = x ** i, z ** j
            out[0] += c * xi * zj
            if i:
                out[1] += c * i * x ** (i - 1) * zj
            if j:
                out[2] += c * j * xi * z ** (j - 1)
            if i > 1:
                out[3] += c * i * (i - 1) * x ** (i - 2) * zj
            if i and j:
                out[4] += c * i * j * x ** (i - 1) * z ** (j - 1)
            if j > 1:
                out[5] += c * j * (j - 1) * xi * z ** (j - 2)
        return out

    def expression(self, x, z):
        """``h(x, z)`` as a sympy expression of the given arguments, from the coefficient table the compiled code
        evaluates (``Σ c xⁱ zʲ``, with the orientation of :meth:`oriented`): the symbolic twin of :meth:`evaluate`."""
        return sp.Add(*[sp.Float(c) * x ** int(i) * z ** int(j) for i, j, c in self.terms])

    def height(self, x, z0=0.0):
        """The curve's height ``z`` above abscissa ``x``: the root of ``h(x, z) = 0`` near ``z0`` (Newton)."""
        z = float(z0)
        for _ in range(100):
            hv, _, hz = self.evaluate(x, z)[:3]
            if hz == 0.0:
                raise ModelError(f"{self.element}: h'_z = 0 at ({x}, {z}): the curve must not have vertical parts "
                                 "(seed 000, Sec. 3)", element=self.element)
            dz = -hv / hz
            z += dz
            if abs(dz) <= 1e-15 * max(1.0, abs(z)):
                return z
        if abs(self.evaluate(x, z)[0]) > 1e-12:
            raise ModelError(f"{self.element}: no curve point above abscissa {x} (h(x, z) = 0 has no root in z)",
                             element=self.element)
        return z

    def curvature_radius(self, x, z):
        """Signed radius of curvature ``ρ = ‖∇h‖³ / (τ, H τ)``, τ = (−h_z, h_x); > 0 where the curve bends
        towards the side ``h < 0`` (seed 000 §3)."""
        _, hx, hz, hxx, hxz, hzz = self.evaluate(x, z)
        tx, tz = -hz, hx
        q = tx * tx * hxx + 2 * tx * tz * hxz + tz * tz * hzz
        n3 = (hx * hx + hz * hz) ** 1.5
        return n3 / q if q != 0 else np.inf

    def check_disc(self, radius, x_range, element, npts=2001):
        """Raise ``ModelError`` unless ``h'_z < 0`` and ``radius < ρ`` wherever ρ > 0 over ``x_range`` (the
        admissible curves of seed 000 §3); returns the smallest positive ρ."""
        worst = np.inf
        z = None
        for xv in np.linspace(x_range[0], x_range[1], npts):
            z = self.height(float(xv), 0.0 if z is None else z)
            _, hx, hz = self.evaluate(float(xv), z)[:3]
            if not hz < 0:
                raise ModelError(f"{element}: the profile has h'_z = {hz:.3g} at x = {xv:.6g}: it must not be vertical "
                                 "and must keep one orientation (seed 000, Sec. 3)", element=element)
            rho = self.curvature_radius(float(xv), z)
            if 0 < rho <= radius:
                raise ModelError(f"{element}: the profile is not admissible for a disc of radius r = {radius:g}: its "
                                 f"radius of curvature is rho = {rho:.6g} <= r at x = {xv:.6g}, z = {z:.6g} (seed 000, "
                                 "Sec. 3 requires r < rho)", element=element)
            if rho > 0:
                worst = min(worst, rho)
        return worst

    def __repr__(self):
        return f"Profile({self.sign * self.h if self.sign < 0 else self.h} = 0)"


def _plane_axes(plane, element):
    """World unit vectors (e1, e2) spanning the vertical plane of a profile (e1 the curve's x, e2 its z)."""
    if isinstance(plane, str):
        axes = {"xz": ((1.0, 0, 0), (0, 0, 1.0)), "yz": ((0, 1.0, 0), (0, 0, 1.0)), "xy": ((1.0, 0, 0), (0, 1.0, 0))}
        if plane not in axes:
            raise ModelError(f"{element}: plane must be 'xz', 'yz', 'xy' or two orthonormal vectors, got {plane!r}",
                             element=element)
        e1, e2 = axes[plane]
        return np.array(e1), np.array(e2)
    try:
        e1, e2 = plane
    except (TypeError, ValueError):
        raise ModelError(f"{element}: plane must be 'xz', 'yz', 'xy' or two orthonormal vectors", element=element) \
            from None
    e1, e2 = _unit3(e1, "plane axis 1", element), _unit3(e2, "plane axis 2", element)
    if abs(e1 @ e2) > 1e-9:
        raise ModelError(f"{element}: the two plane axes must be orthogonal", element=element)
    return e1, e2


def qdot_matrix(model, q):
    """∂q̇/∂v (nq × nv) at q: q̇ = Q(q) v (quaternion kinematics for quaternion joints)."""
    E = np.eye(model.nv)
    return np.column_stack([model.qdot(q, E[k]) for k in range(model.nv)]) if model.nv else np.zeros((model.nq, 0))


def _along_motion(model, q, v, t, rate):
    """−d/ds rate(q ⊕ v s, t + s) at s = 0 (the path with v̇ = 0) by central differences of the exact first
    derivative, step 1e-5 of the time in which the motion moves q by about 1 (relative error ~1e-10)."""
    d = 1e-5 / max(1.0, float(np.abs(v).max(initial=0.0)))
    return -(rate(model.integrate(q, v, d), t + d) - rate(model.integrate(q, v, -d), t - d)) / (2.0 * d)


# ----------------------------------------------------------------------------------------------------------
# the elements
class Constraint:
    """Base class. ``name`` identifies the constraint in errors, residuals and reactions.

    Subclasses set ``bodies`` (names) and implement ``_pack(index, frames)`` returning the compiled elements
    as ``[(code, body_a, body_b, params)]`` (body indices; params a float list), or set ``python = True`` and
    implement the Python evaluation (``UserConstraint``, ``VelocityConstraint``).
    """

    python = False
    bodies = ()

    def __init__(self, name):
        if not isinstance(name, str) or not name:
            raise ModelError(f"a constraint name must be a non-empty string, got {name!r}", element=repr(name))
        self.name = name

    @property
    def element(self):
        return f"constraint '{self.name}'"

    #: position rows and velocity rows, in that order within the constraint (set by subclasses)
    levels = ()

    @property
    def nrows(self):
        return len(self.levels)

    def row_names(self):
        return [f"{self.name}[{k}]" for k in range(self.nrows)]

    def symbolic(self, kin):
        """The rows as sympy expressions (the ``symbolic=True`` option of the ``stabilized`` formulation):
        ``(rows, aux)`` with ``rows`` a list of ``(name, level, expression)`` in the order of :meth:`row_names`
        (level 2: a position row f(q); level 1: a velocity row g(q, v)) and ``aux`` a list of
        ``(name, symbol, expression)``, an auxiliary variable with the row that defines it (seed 000, eqs. 3.5,
        3.6). ``kin`` is a :class:`multibody.symbolic.stabilized.SymbolicKinematics` of the model (ground
        positions of body points, angular velocities, time derivatives). Constraints without a symbolic form
        raise ``ModelError``."""
        raise ModelError(f"{self.element}: a {type(self).__name__} has no symbolic rows: it is not available with "
                         "symbolic=True (use the generic stabilized formulation, symbolic=False)", element=self.element)

    def __repr__(self):
        return f"{type(self).__name__}({self.name!r})"


class PointOnPlane(Constraint):
    """A point of ``body`` stays on a plane fixed in ``plane_body`` (default the ground): one position row
    ``n·(P − O) = 0`` (seed 001, eq. 2.22: the point–plane constraint).

    ``point``: the point in ``body``'s frame; ``normal``, ``origin``: the plane's normal and a point of it in
    ``plane_body``'s frame.
    """

    levels = (2,)

    def __init__(self, name, body, point=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0), origin=(0.0, 0.0, 0.0),
                 plane_body="ground"):
        super().__init__(name)
        self.body, self.plane_body = body, plane_body
        self.point = _vec3(point, "point", self.element)
        self.normal = _unit3(normal, "normal", self.element)
        self.origin = _vec3(origin, "origin", self.element)
        self.bodies = (plane_body, body)

    def _pack(self, index, frames):
        a, b = index(self.plane_body, self), index(self.body, self)
        pa, na = frames(a).act(self.origin), frames(a).rotation @ self.normal
        return [(E_OFFSET, a, b, [*pa, *frames(b).act(self.point), *na])]

    def symbolic(self, kin):
        """``n·(P − O) = 0`` with P, O and the normal n in ground coordinates (one position row)."""
        P = kin.point(self.body, self.point)
        O = kin.point(self.plane_body, self.origin)
        n = kin.direction(self.plane_body, self.normal)
        return [(self.row_names()[0], 2, sum((P[k] - O[k]) * n[k] for k in range(3)))], []


class PointOnProfile(Constraint):
    """A point of ``body`` stays on the plane curve ``profile`` (a :class:`Profile`) drawn in a plane of the
    ground: one position row ``h(x_P, z_P) = 0`` with ``(x_P, z_P)`` the point's coordinates along the plane's
    axes ``plane`` (``"xz"`` default, or two orthonormal world vectors) from ``origin``. In a 3-D model the
    point may leave the plane: the row keeps it on the cylinder the curve sweeps along the plane normal.
    """

    levels = (2,)

    def __init__(self, name, body, profile, point=(0.0, 0.0, 0.0), plane="xz", origin=(0.0, 0.0, 0.0)):
        super().__init__(name)
        if not isinstance(profile, Profile):
            raise ModelError(f"{self.element}: profile must be a multibody.Profile, got {profile!r}",
                             element=self.element)
        self.body, self.profile = body, profile
        self.point = _vec3(point, "point", self.element)
        self.e1, self.e2 = _plane_axes(plane, self.element)
        self.origin = _vec3(origin, "origin", self.element)
        self.bodies = (body,)

    def _pack(self, index, frames):
        b = index(self.body, self)
        return [(E_POINT_PROFILE, 0, b, [*frames(b).act(self.point), *self.origin, *self.e1, *self.e2],
                 self.profile)]

    def symbolic(self, kin):
        """``h(x_P, z_P) = 0`` (one position row), the point's plane coordinates from the ground."""
        X, Z = kin.plane_coordinates(kin.point(self.body, self.point), self.origin, self.e1, self.e2)
        return [(self.row_names()[0], 2, self.profile.expression(X, Z))], []


class RollingDisc(Constraint):
    """A knife-edge disc (``body``, centre ``center`` and axle ``axis`` in the body frame, ``radius``) rolling
    without slip on a plane of the ground (``normal``, through ``origin``; default the floor z = 0).

    Rows: the contact point's height above the plane (position row) and the velocity of the disc's material
    point at the contact along two tangents of the plane (velocity rows, not integrable: seed 003 §2.2, the
    no-slip conditions). The contact point is the lowest point of the rim, ``C + r ρ̂`` with
    ``ρ̂ = −(n − (a·n) a)/‖n − (a·n) a‖`` (a the axle, n the normal); the disc must not lie flat on the plane.
    The multipliers of the three rows are the contact force on the disc at the contact point: normal, and
    tangential along the plane's axes ``tangents`` (default: world x and y for the floor).
    """

    levels = (2, 1, 1)

    def __init__(self, name, body, radius, axis=(0.0, 1.0, 0.0), center=(0.0, 0.0, 0.0), normal=(0.0, 0.0, 1.0),
                 origin=(0.0, 0.0, 0.0)):
        super().__init__(name)
        self.body = body
        self.radius = _positive(radius, "radius", self.element)
        self.axis = _unit3(axis, "axle axis", self.element)
        self.center = _vec3(center, "center", self.element)
        self.normal = _unit3(normal, "plane normal", self.element)
        self.origin = _vec3(origin, "plane origin", self.element)
        t1 = np.array([1.0, 0.0, 0.0]) - self.normal[0] * self.normal
        if np.linalg.norm(t1) < 0.5:
            t1 = np.array([0.0, 1.0, 0.0]) - self.normal[1] * self.normal
        self.t1 = t1 / np.linalg.norm(t1)
        self.t2 = np.cross(self.normal, self.t1)
        self.bodies = (body,)

    def row_names(self):
        return [f"{self.name}.normal", f"{self.name}.t1", f"{self.name}.t2"]

    def _pack(self, index, frames):
        b = index(self.body, self)
        F = frames(b)
        return [(E_DISC_PLANE, 0, b, [*F.act(self.center), *(F.rotation @ self.axis), self.radius, *self.origin,
                                      *self.normal, *self.t1, *self.t2])]


class RollingOnProfile(Constraint):
    """A disc of ``radius`` (``body``, centre ``center`` in the body frame) rolling without slip on the plane
    curve ``profile`` (a :class:`Profile`) in a vertical plane of the ground, the disc's axle along the plane's
    normal (seed 000 §3, the heavy hoop on a curved profile).

    The contact point is ``x_a = x_c + r cos α``, ``z_a = z_c + r sin α`` (plane coordinates), α the contact
    angle from the plane's first axis to the vector centre → contact. Rows (seed 000, eqs. 3.2, 3.4):
    ``f1 = h(x_a, z_a)`` (contact, position row) and ``f3 = −ẋ_c sin α + ż_c cos α + r ω_n`` (no slip,
    velocity row; ω_n the angular velocity about the plane normal ``e1 × e2``). α itself obeys the tangency
    ``f4 = h_x sin α − h_z cos α = 0`` (eq. 3.5): the ``stabilized`` formulation carries it as an extra state
    with ``α̇ = U`` an extra reaction (eq. 3.6); the other formulations solve f4 = 0 for α at every evaluation.
    ``x_range``: abscissas of the contact point over which the curve is checked admissible (``h'_z < 0``,
    curvature radius > r) at build time.
    """

    levels = (2, 1)

    def __init__(self, name, body, radius, profile, center=(0.0, 0.0, 0.0), plane="xz", origin=(0.0, 0.0, 0.0),
                 x_range=(-1.0, 1.0)):
        super().__init__(name)
        if not isinstance(profile, Profile):
            raise ModelError(f"{self.element}: profile must be a multibody.Profile, got {profile!r}",
                             element=self.element)
        self.body = body
        self.radius = _positive(radius, "radius", self.element)
        self.center = _vec3(center, "center", self.element)
        self.e1, self.e2 = _plane_axes(plane, self.element)
        self.origin = _vec3(origin, "origin", self.element)
        try:
            lo, hi = (float(v) for v in x_range)
        except (TypeError, ValueError, OverflowError):
            raise ModelError(f"{self.element}: x_range must be two numbers", element=self.element) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ModelError(f"{self.element}: x_range must be finite with x_range[0] < x_range[1], got {x_range!r}",
                             element=self.element)
        self.x_range = (lo, hi)
        try:
            profile.oriented(0.5 * (lo + hi))
            self.profile = profile
            self.min_curvature_radius = profile.check_disc(self.radius, self.x_range, self.element)
        except (OverflowError, ZeroDivisionError, FloatingPointError):   # x_range = (1e300, ...) overflows h
            raise ModelError(f"{self.element}: the curve h(x, z) cannot be evaluated over x_range = {self.x_range} (an "
                             "overflow): give the abscissas the contact point may reach", element=self.element) \
                from None
        self.bodies = (body,)

    def row_names(self):
        return [f"{self.name}.contact", f"{self.name}.no_slip"]

    def _pack(self, index, frames):
        b = index(self.body, self)
        return [(E_DISC_PROFILE, 0, b, [*frames(b).act(self.center), *self.origin, *self.e1, *self.e2, self.radius],
                 self.profile)]

    def symbolic(self, kin):
        """Seed 000, eqs. 3.2, 3.4, 3.5: contact ``f1 = h(x_a, z_a)`` (position row), no slip
        ``f3 = −ẋ_c sin α + ż_c cos α + r ω_n`` (velocity row) and the contact angle α (auxiliary variable, rate
        U = α̇, eq. 3.6) defined by the tangency ``f4 = h_x sin α − h_z cos α`` at ``x_a = x_c + r cos α``,
        ``z_a = z_c + r sin α``; the same rows as the compiled kernel (``kernels/constraints.py``)."""
        al = kin.auxiliary(f"{self.name}.angle")
        C = kin.point(self.body, self.center)
        Xc, Zc = kin.plane_coordinates(C, self.origin, self.e1, self.e2)
        vx, vz = kin.rate(Xc), kin.rate(Zc)
        w = kin.angular_velocity(self.body)
        npl = np.cross(self.e1, self.e2)
        r = sp.Float(self.radius)
        xs, zs = sp.Dummy("x"), sp.Dummy("z")
        h = self.profile.expression(xs, zs)
        at = {xs: Xc + r * sp.cos(al), zs: Zc + r * sp.sin(al)}
        f1 = h.xreplace(at)
        f3 = -vx * sp.sin(al) + vz * sp.cos(al) + r * sum(w[k] * float(npl[k]) for k in range(3))
        f4 = sp.diff(h, xs).xreplace(at) * sp.sin(al) - sp.diff(h, zs).xreplace(at) * sp.cos(al)
        contact, no_slip = self.row_names()
        return [(contact, 2, f1), (no_slip, 1, f3)], [(f"{self.name}.tangency", al, f4)]


class UserConstraint(Constraint):
    """Position rows ``f(q, t) = 0`` given as a Python function of the model's coordinates.

    ``f(q, t) -> (m,)``; ``jacobian(q, t) -> (m, nq)`` the partial derivatives ``∂f/∂q`` (optional: without it,
    they are formed by complex-step differentiation when ``f`` accepts complex numbers, else by central
    differences). The velocity-level Jacobian is ``G = ∂f/∂q · ∂q̇/∂v``, and the acceleration-level term is
    the derivative of ``G v + ∂f/∂t`` along the motion with ``v̇ = 0``, formed by central differences of the
    exact first derivatives (relative accuracy about 1e-10). Python code: the formulations evaluate it in
    Python (no compiled path).
    """

    python = True

    def __init__(self, name, f, nrows=None, jacobian=None):
        super().__init__(name)
        if not callable(f):
            raise ModelError(f"{self.element}: f must be callable f(q, t)", element=self.element)
        if jacobian is not None and not callable(jacobian):
            raise ModelError(f"{self.element}: jacobian must be callable jacobian(q, t)", element=self.element)
        self.f, self.jacobian = f, jacobian
        self._nrows = _row_count(nrows, self.element)
        self._complex_ok = None

    @property
    def levels(self):
        return (2,) * (self._nrows or 0)

    def _value(self, q, t):
        try:
            val = np.atleast_1d(np.asarray(self.f(q, t), dtype=float))
        except Exception as exc:
            raise ModelError(f"{self.element}: f(q, t) raised {type(exc).__name__}: {exc}",
                             element=self.element) from exc
        if val.shape != (self._nrows,) or not np.all(np.isfinite(val)):
            raise ModelError(f"{self.element}: f(q, t) must return {self._nrows} finite numbers, got {val!r}",
                             element=self.element)
        return val

    def _complex(self, q, t, dq, dt):
        """Im f(q + i h dq, t + i h dt)/h (complex-step derivative along (dq, dt))."""
        h = 1e-30
        return np.atleast_1d(np.imag(np.asarray(self.f(q + 1j * h * dq, t + 1j * h * dt))) / h)

    def _takes_complex(self, q, t):
        """Whether f computes with complex arguments (then complex steps give exact derivatives)."""
        if self._complex_ok is None:
            try:
                self._complex_ok = bool(np.iscomplexobj(np.asarray(self.f(q + 0j, t + 0j))))
            except Exception:
                self._complex_ok = False
        return self._complex_ok

    def partials(self, q, t):
        """(∂f/∂q (m × nq), ∂f/∂t (m)): the user's Jacobian, else complex steps, else central differences."""
        nq = q.shape[0]
        ft = self._complex(q, t, np.zeros(nq), 1.0) if self._takes_complex(q, t) else None
        if self.jacobian is not None:
            F = np.atleast_2d(np.asarray(self.jacobian(q, t), dtype=float))
            if F.shape != (self._nrows, nq):
                raise ModelError(f"{self.element}: jacobian(q, t) must have shape ({self._nrows}, nq = {nq}), got "
                                 f"{F.shape}", element=self.element)
        elif self._complex_ok:
            F = np.column_stack([self._complex(q, t, np.eye(nq)[k], 0.0) for k in range(nq)])
        else:
            hs = 1e-6 * np.maximum(1.0, np.abs(q))
            F = np.column_stack([(self._value(q + hs[k] * np.eye(nq)[k], t) - self._value(q - hs[k] * np.eye(nq)[k], t))
                                 / (2 * hs[k]) for k in range(nq)])
        if ft is None:
            h = 1e-6 * max(1.0, abs(t))
            ft = (self._value(q, t + h) - self._value(q, t - h)) / (2 * h)
        return F, ft

    def rows(self, model, q, v, t):
        """(f, G, γ, ḟ) in tree coordinates: G = ∂f/∂q ∂q̇/∂v, ḟ = G v + ∂f/∂t, γ = −d/dt(G v + ∂f/∂t) at v̇ = 0."""
        F, ft = self.partials(q, t)
        G = F @ qdot_matrix(model, q)

        def rate(qs, ts):
            Fs, fts = self.partials(qs, ts)
            return Fs @ model.qdot(qs, v) + fts

        return self._value(q, t), G, _along_motion(model, q, v, t, rate), G @ v + ft

    def _bind(self, model_nq, q0):
        self._complex_ok = None
        val = np.atleast_1d(np.asarray(self.f(np.asarray(q0, float), 0.0), dtype=float))
        if val.ndim != 1 or not np.all(np.isfinite(val)):
            raise ModelError(f"{self.element}: f(q, t) must return finite numbers, got {val!r}", element=self.element)
        if self._nrows is not None and val.size != self._nrows:
            raise ModelError(f"{self.element}: f returned {val.size} values, nrows = {self._nrows}",
                             element=self.element)
        self._nrows = val.size


class VelocityConstraint(Constraint):
    """Velocity rows ``J(q, t) v + b(q, t) = 0`` that are not derivatives of position rows (non-integrable):
    ``jacobian(q, t) -> (m, nv)``, ``bias(q, t) -> (m,)`` (optional, default 0). The acceleration-level term
    ``J̇ v + ḃ`` is formed by central differences along the motion with ``v̇ = 0``. Evaluated in Python.
    """

    python = True

    def __init__(self, name, jacobian, bias=None, nrows=None):
        super().__init__(name)
        if not callable(jacobian):
            raise ModelError(f"{self.element}: jacobian must be callable jacobian(q, t)", element=self.element)
        if bias is not None and not callable(bias):
            raise ModelError(f"{self.element}: bias must be callable bias(q, t)", element=self.element)
        self.jacobian, self.bias = jacobian, bias
        self._nrows = _row_count(nrows, self.element)

    @property
    def levels(self):
        return (1,) * (self._nrows or 0)

    def _terms(self, q, t):
        J = np.atleast_2d(np.asarray(self.jacobian(q, t), dtype=float))
        b = np.zeros(self._nrows) if self.bias is None else np.atleast_1d(np.asarray(self.bias(q, t), dtype=float))
        if J.shape[0] != self._nrows or b.shape != (self._nrows,) or not (np.all(np.isfinite(J))
                                                                         and np.all(np.isfinite(b))):
            raise ModelError(f"{self.element}: jacobian(q, t) and bias(q, t) must give {self._nrows} finite rows, got "
                             f"shapes {J.shape} and {b.shape}", element=self.element)
        return J, b

    def rows(self, model, q, v, t):
        """(g, J, γ, g) in tree coordinates: g = J v + b, γ = −d/dt(J v + b) at v̇ = 0."""
        J, b = self._terms(q, t)

        def rate(qs, ts):
            Js, bs = self._terms(qs, ts)
            return Js @ v + bs

        g = J @ v + b
        return g, J, _along_motion(model, q, v, t, rate), g

    def _bind(self, model_nv, q0):
        J = np.atleast_2d(np.asarray(self.jacobian(np.asarray(q0, float), 0.0), dtype=float))
        if J.shape[1] != model_nv or not np.all(np.isfinite(J)):
            raise ModelError(f"{self.element}: jacobian(q, t) must return finite numbers of shape (m, nv = {model_nv}),"
                             f" got shape {J.shape}", element=self.element)
        if self._nrows is not None and J.shape[0] != self._nrows:
            raise ModelError(f"{self.element}: jacobian has {J.shape[0]} rows, nrows = {self._nrows}",
                             element=self.element)
        self._nrows = J.shape[0]


class LoopJoint(Constraint):
    """A joint that closes a loop (a cut joint, seed 001 §3.6), as the joint's equations between its parent
    body (joint frame ``placement``) and its child body (joint frame ``child_placement``). Made by the builder
    for every joint that is not in the spanning tree; ``joint`` is its ``JointInfo``.

    ============  =======================================================================
    Revolute      o_b − o_a = 0 (3);  (A n_k)·(B u) = 0, k = 2, 3 (2)          → 5 rows
    Spherical     o_b − o_a = 0 (3)
    Prismatic     vee(AᵀB) = 0 (3);  (o_b − o_a)·(A n_k) = 0 (2)
    Cylindrical   (A n_k)·(B u) = 0 (2);  (o_b − o_a)·(A n_k) = 0 (2)
    Universal     o_b − o_a = 0 (3);  (A a1)·(B a2) = a1·a2 (1)
    Planar        (A n_k)·(B e_z) = 0 (2);  (o_b − o_a)·(A e_z) = 0 (1)
    Fixed         o_b − o_a = 0 (3);  vee(AᵀB) = 0 (3)
    ============  =======================================================================

    (A, B the joint frames in ground axes, o_a, o_b their origins, u the joint axis, n2, n3 ⟂ u.)
    """

    def __init__(self, joint):
        super().__init__(joint.name)
        self.joint = joint
        self.bodies = (joint.parent, joint.child)
        self._elements = self._decompose()
        self.levels = tuple(2 for e in self._elements for _ in range(ELEMENT_ROWS[e[0]]))

    @property
    def element(self):
        return f"joint '{self.name}'"

    def _decompose(self):
        """[(code, extra)] of the joint's equations (frames in the joint frames A, B)."""
        code = self.joint.joint.code
        ax = np.asarray(self.joint.joint.axes())
        out = []
        if code in (_REVOLUTE, _SPHERICAL, _UNIVERSAL, _FIXED):
            out.append((E_POINT, None))
        if code in (_REVOLUTE, _CYLINDRICAL):
            n2, n3 = _perp(ax[0])
            out += [(E_ALIGN, (n2, ax[0], 0.0)), (E_ALIGN, (n3, ax[0], 0.0))]
            if code == _CYLINDRICAL:
                out += [(E_OFFSET, n2), (E_OFFSET, n3)]
        if code == _UNIVERSAL:
            out.append((E_ALIGN, (ax[0], ax[1], float(ax[0] @ ax[1]))))
        if code == _PLANAR:
            ez = np.array([0.0, 0.0, 1.0])
            out += [(E_ALIGN, (np.array([1.0, 0, 0]), ez, 0.0)), (E_ALIGN, (np.array([0, 1.0, 0]), ez, 0.0)),
                    (E_OFFSET, ez)]
        if code in (_PRISMATIC, _FIXED):
            out += [(E_LOCK, k) for k in range(3)]
        if code == _PRISMATIC:
            n2, n3 = _perp(ax[0])
            out += [(E_OFFSET, n2), (E_OFFSET, n3)]
        if code == _FREE:
            raise ModelError(f"joint '{self.name}': a Free joint constrains nothing and cannot close a loop",
                             element=f"joint '{self.name}'")
        return out

    def _pack(self, index, frames):
        j = self.joint
        a, b = j.parent, j.child
        Pa = frames(a) * j.placement          # joint frame in the (internal) frame of body a
        Pb = frames(b) * j.child_placement
        Ra, Rb = Pa.rotation, Pb.rotation
        out = []
        for code, extra in self._elements:
            if code == E_POINT:
                out.append((E_POINT, a, b, [*Pa.translation, *Pb.translation]))
            elif code == E_ALIGN:
                n, u, c = extra
                out.append((E_ALIGN, a, b, [*(Ra @ n), *(Rb @ u), c]))
            elif code == E_LOCK:
                out.append((E_LOCK, a, b, [*Ra.ravel(), *Rb.ravel(), float(extra)]))
            elif code == E_OFFSET:
                out.append((E_OFFSET, a, b, [*Pa.translation, *Pb.translation, *(Ra @ extra)]))
        return out


# ----------------------------------------------------------------------------------------------------------
# packing for the compiled kernels
@dataclass(frozen=True)
class ConstraintTable:
    """The compiled constraint elements of a Model as flat arrays (read by ``multibody.kernels.constraints``).

    ``ci`` (ne, 8) int64 per element: code, body a, body b, first row, number of rows, first auxiliary
    variable, number of auxiliary variables, first float parameter; ``cf`` the float parameters;
    ``pi`` (np, 2) int64 per profile: first term and number of terms of ``pt`` (K, 3) (i, j, c: c xⁱ zʲ).
    ``owner`` (m,) the index in ``model.constraints`` of each row's constraint; ``level`` (m,) 2 for a
    position row, 1 for a velocity row; ``m`` rows in all (compiled rows first, then the Python rows);
    ``m_compiled`` compiled rows; ``naux`` auxiliary variables; ``python`` the Python constraints with their
    first row.
    """

    ci: np.ndarray
    cf: np.ndarray
    pi: np.ndarray
    pt: np.ndarray
    owner: np.ndarray
    level: np.ndarray
    m: int
    m_compiled: int
    naux: int
    python: tuple
    row_names: tuple
    slices: dict

    @classmethod
    def build(cls, constraints, index, frames):
        """Pack ``constraints`` (bound: Python ones already sized); ``index(name, c)`` gives a body index,
        ``frames(i)`` the Placement of body i's user frame in its internal frame."""
        ci, cf, profiles, owner, level, names = [], [], [], [], [], []
        slices = {}
        row = aux = 0
        for k, c in enumerate(constraints):
            if c.python:
                continue
            start = row
            for item in c._pack(index, frames):
                code, a, b, params = item[:4]
                if len(item) > 4:
                    profiles.append(item[4])
                    params = list(params) + [float(len(profiles) - 1)]
                nr = ELEMENT_ROWS[code]
                na = ELEMENT_AUX.get(code, 0)
                ci.append([code, a, b, row, nr, aux, na, len(cf)])
                cf.extend(float(p) for p in params)
                level.extend(ELEMENT_LEVELS[code])
                owner.extend([k] * nr)
                row += nr
                aux += na
            names += c.row_names()
            slices[c.name] = slice(start, row)
        m_compiled = row
        python = []
        for k, c in enumerate(constraints):
            if not c.python:
                continue
            python.append((c, row))
            level.extend(c.levels)
            owner.extend([k] * c.nrows)
            names += c.row_names()
            slices[c.name] = slice(row, row + c.nrows)
            row += c.nrows
        pi = np.zeros((len(profiles), 2), dtype=np.int64)
        terms = []
        for p, prof in enumerate(profiles):
            pi[p] = len(terms), len(prof.terms)
            terms += prof.terms.tolist()
        arr = lambda x, dt: np.ascontiguousarray(np.asarray(x, dtype=dt))  # noqa: E731
        out = cls(ci=arr(ci, np.int64).reshape(-1, 8), cf=arr(cf, np.float64), pi=pi,
                  pt=arr(terms, np.float64).reshape(-1, 3), owner=arr(owner, np.int64), level=arr(level, np.int64),
                  m=row, m_compiled=m_compiled, naux=aux, python=tuple(python), row_names=tuple(names),
                  slices=slices)
        for a in (out.ci, out.cf, out.pi, out.pt, out.owner, out.level):
            a.flags.writeable = False
        return out


def identity_frames(_i):
    return Placement()
