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

One module per kind: the geometric constraints and the element codes here, the plane curves in ``profiles.py``,
the Python ones in ``user_constraints.py``, loop-closing joints in ``loop_joints.py``, the packed table in
``constraint_table.py``.
"""
import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.bodies import vector3 as _vec3
from multibody.model.joints import unit_vector as _unit3
from multibody.model.profiles import Profile, plane_axes

__all__ = ["E_POINT", "E_ALIGN", "E_LOCK", "E_OFFSET", "E_POINT_PROFILE", "E_DISC_PROFILE", "E_DISC_PLANE",
           "ELEMENT_ROWS", "ELEMENT_LEVELS", "ELEMENT_AUX", "Constraint", "PointOnPlane", "PointOnProfile",
           "RollingDisc", "RollingOnProfile"]


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


def _positive(value, what, element):
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be a number, got {shown(value)!r}", element=element) from None
    if not (np.isfinite(x) and x > 0.0):
        raise ModelError(f"{element}: {what} must be positive and finite, got {x}", element=element)
    return x


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
            raise ModelError(f"{self.element}: profile must be a multibody.Profile, got {shown(profile)!r}",
                             element=self.element)
        self.body, self.profile = body, profile
        self.point = _vec3(point, "point", self.element)
        self.e1, self.e2 = plane_axes(plane, self.element)
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
            raise ModelError(f"{self.element}: profile must be a multibody.Profile, got {shown(profile)!r}",
                             element=self.element)
        self.body = body
        self.radius = _positive(radius, "radius", self.element)
        self.center = _vec3(center, "center", self.element)
        self.e1, self.e2 = plane_axes(plane, self.element)
        self.origin = _vec3(origin, "origin", self.element)
        try:
            lo, hi = (float(v) for v in x_range)
        except (TypeError, ValueError, OverflowError):
            raise ModelError(f"{self.element}: x_range must be two numbers", element=self.element) from None
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ModelError(f"{self.element}: x_range must be finite with x_range[0] < x_range[1], got {shown(x_range)!r}",
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
        import sympy as sp

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
