"""The joint library of the Cartesian formulation (seed 001 ch. 2): each joint a set of primitive constraint
rows (``primitives.py``) between two bodies, planar and spatial; :class:`RowBlock` for rows computed otherwise."""
import numpy as np

from multibody.errors import ModelError
from multibody.formulations.cartesian.primitives import perpendicular_frame, unit_vector


class CartesianJoint:
    """Base of the user-facing joints: a name, two bodies (``"ground"`` allowed) and primitives; joints
    acting at a point keep it as ``p`` (in body i) and ``rho`` (in body j)."""
    dim = None

    def __init__(self, name, body_i, body_j, point_i=None, point_j=None):
        self.name = str(name)
        self.body_i = body_i
        self.body_j = body_j
        if point_i is not None:
            self.p = np.asarray(point_i, float)
        if point_j is not None:
            self.rho = np.asarray(point_j, float)

    def primitives(self, system):  # list of (kind, nrows, params dict)
        raise NotImplementedError

    @property
    def nrows(self):
        return sum(m for _, m, _ in self.primitives(None))


class PlanarPointLine(CartesianJoint):
    """A point of body j stays on a line fixed in body i (seed 001 §2.5, eqs. 2.33–2.43): 1 equation.

    ``point_i``: a point of the line, ``normal_i``: its normal (body i axes, from c_i); ``point_j``:
    the point of body j (body j axes, from c_j).
    """
    dim = 2

    def __init__(self, name, body_i, body_j, point_i, normal_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.n = unit_vector(normal_i)

    def primitives(self, system):
        return [("pl", 1, dict(n=self.n[None, :], p=self.p, rho=self.rho))]


class PlanarRevolute(CartesianJoint):
    """Planar pin joint = two point–line constraints with the same point (seed 001 §2.5, slider-crank n1..n6)."""
    dim = 2

    def __init__(self, name, body_i, body_j, point_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)

    def primitives(self, system):
        return [("pl", 2, dict(n=np.eye(2), p=self.p, rho=self.rho))]


class PlanarAngle(CartesianJoint):
    """Relative rotation locked: ``φ_j − φ_i = θ0`` (seed 001, eq. 2.32; slider-crank constraint 8)."""
    dim = 2

    def __init__(self, name, body_i, body_j, theta0=0.0):
        super().__init__(name, body_i, body_j)
        self.theta0 = float(theta0)

    def primitives(self, system):
        return [("pa", 1, dict(theta0=np.array(self.theta0)))]


class PlanarPrismatic(CartesianJoint):
    """Planar slider: point–line along ``axis_i`` + locked relative angle (seed 001 §2.6.2, constraints 7, 8)."""
    dim = 2

    def __init__(self, name, body_i, body_j, point_i, axis_i, point_j, theta0=0.0):
        super().__init__(name, body_i, body_j)
        a = unit_vector(axis_i)
        self.line = PlanarPointLine(name, body_i, body_j, point_i, (-a[1], a[0]), point_j)
        self.angle = PlanarAngle(name, body_i, body_j, theta0)

    def primitives(self, system):
        return self.line.primitives(system) + self.angle.primitives(system)


class PointPlane(CartesianJoint):
    """A point of body j stays on a plane fixed in body i (seed 001 §2.3, eq. 2.22): 1 equation."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, normal_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.n = unit_vector(normal_i)

    def primitives(self, system):
        return [("pp", 1, dict(n=self.n[None, :], p=self.p, rho=self.rho))]


class RelativeRotation(CartesianJoint):
    """Relative rotation about ``normal_i`` (fixed in body i) blocked (seed 001 §2.4, eqs. 2.27–2.29): 1 equation.

    ``R0`` is the relative orientation ``A_iᵀ A_j`` at which the position residual vanishes.
    """
    dim = 3

    def __init__(self, name, body_i, body_j, normal_i, R0=None):
        super().__init__(name, body_i, body_j)
        self.n = unit_vector(normal_i)
        self.R0 = np.eye(3) if R0 is None else np.asarray(R0, float)

    def primitives(self, system):
        return [("rl", 1, dict(n=self.n[None, :], R0=self.R0))]


class SphericalJoint(CartesianJoint):
    """Ball joint = three point–plane constraints with normals e1, e2, e3 of body i (seed 001, eq. 2.44)."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j):
        super().__init__(name, body_i, body_j, point_i, point_j)

    def primitives(self, system):
        return [("pp", 3, dict(n=np.eye(3), p=self.p, rho=self.rho))]


class HingeJoint(CartesianJoint):
    """Revolute ("cylindrical" in the book) joint: spherical + 2 rotation constraints (seed 001 eq. 2.46): 5 equations.

    ``axis_i`` / ``axis_j``: the hinge axis in body i / body j axes (they coincide in space).
    """
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, axis_i, axis_j):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.ai = unit_vector(axis_i)
        self.aj = unit_vector(axis_j)

    def primitives(self, system):
        n2, n3 = perpendicular_frame(self.ai)
        return [("pp", 3, dict(n=np.eye(3), p=self.p, rho=self.rho)),
                ("ra", 2, dict(n=np.array([n2, n3]), ai=self.ai, aj=self.aj))]


class UniversalJoint(CartesianJoint):
    """Universal (Hooke) joint = spherical joint (3 point–plane rows, seed 001 eq. 2.44) + 1 relative-rotation
    row (seed 001 §2.4) about the common normal of the two axes: 4 equations, 2 relative DoF.

    ``axis_i`` (body i axes) and ``axis_j`` (body j axes) are the two hinge axes of the cross; they keep the
    angle they have in the reference configuration, ``cos_angle = axis_iᵀ A_iᵀ A_j axis_j`` (0 for the
    usual perpendicular cross).
    """
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, axis_i, axis_j, cos_angle=0.0):
        super().__init__(name, body_i, body_j)
        self.ball = SphericalJoint(name, body_i, body_j, point_i, point_j)
        self.ai = unit_vector(axis_i)
        self.aj = unit_vector(axis_j)
        self.cos_angle = float(cos_angle)
        if abs(self.cos_angle) > 1.0 - 1e-9:
            raise ModelError(f"universal joint {name!r}: the two axes must not be parallel "
                             f"(cos_angle = {self.cos_angle})", element=f"joint {name!r}")

    def primitives(self, system):
        return self.ball.primitives(system) + [
            ("rp", 1, dict(u=self.ai, w=self.aj, c=np.array(self.cos_angle)))]


class PlanarJoint(CartesianJoint):
    """Spatial plane joint: a point of body j slides in a plane of body i and body j turns only about the
    plane's normal.  1 point–plane row (seed 001 eq. 2.22) with the normal ``normal_i`` + 2 relative-rotation
    rows (seed 001 §2.4, as the hinge's k = 4, 5 of eq. 2.46) keeping ``normal_j`` (body j) along
    ``normal_i``: 3 equations, 3 relative DoF.  (Not to be confused with the ``dim=2`` planar systems.)
    """
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, normal_i, normal_j):
        super().__init__(name, body_i, body_j)
        self.plane = PointPlane(name, body_i, body_j, point_i, normal_i, point_j)
        self.ni = self.plane.n
        self.nj = unit_vector(normal_j)

    def primitives(self, system):
        n2, n3 = perpendicular_frame(self.ni)
        return self.plane.primitives(system) + [
            ("ra", 2, dict(n=np.array([n2, n3]), ai=self.ni, aj=self.nj))]


class PrismaticJoint(CartesianJoint):
    """Spatial slider along ``axis_i``: 2 point–plane (normals ⟂ axis) + 3 rotation constraints: 5 equations."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, axis_i, R0=None):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.ai = unit_vector(axis_i)
        self.R0 = np.eye(3) if R0 is None else np.asarray(R0, float)

    def primitives(self, system):
        n2, n3 = perpendicular_frame(self.ai)
        return [("pp", 2, dict(n=np.array([n2, n3]), p=self.p, rho=self.rho)),
                ("rl", 3, dict(n=np.eye(3), R0=self.R0))]


class FixedJoint(CartesianJoint):
    """Welded bodies: spherical + 3 rotation constraints (6 equations)."""
    dim = 3

    def __init__(self, name, body_i, body_j, point_i, point_j, R0=None):
        super().__init__(name, body_i, body_j, point_i, point_j)
        self.R0 = np.eye(3) if R0 is None else np.asarray(R0, float)

    def primitives(self, system):
        return [("pp", 3, dict(n=np.eye(3), p=self.p, rho=self.rho)),
                ("rl", 3, dict(n=np.eye(3), R0=self.R0))]


class CompositeJoint(CartesianJoint):
    """A joint given directly by its primitive rows (used by :func:`cartesian_from_model`)."""

    def __init__(self, name, body_i, body_j, dim, prims):
        super().__init__(name, body_i, body_j)
        self.dim = dim
        self._prims = prims

    def primitives(self, system):
        return list(self._prims)


class RowBlock:
    """Rows given by a provider object rather than by the joint library (the Model's constraints that are not
    joints, :class:`ModelConstraintRows`). ``rows(x, V, need_b) -> (Q (m × nv) dense, b (m), φ (m))`` with
    ``Q Ẍ = b`` the acceleration-level rows and φ their residuals; ``names``/``slices`` within the block."""

    name = "rows"
    m = 0

    def rows(self, x, V, need_b=True):
        raise NotImplementedError
