"""Forces of the Cartesian formulation's own systems: point-to-point springs and dampers, body torques,
relative torques (seed 001 §2.6) and loads at body points."""
import numpy as np


class PointSpring:
    """Spring–damper between a point of body a and a point of body b (``"ground"`` allowed).

    ``F = −(k (l − l0) + c l̇)`` along the line; points in the bodies' own axes, from the centre of mass
    (for the ground: inertial coordinates).
    """

    def __init__(self, body_a, point_a, body_b, point_b, k, c=0.0, l0=0.0):
        self.body_a, self.body_b = body_a, body_b
        self.pa = np.asarray(point_a, float)
        self.pb = np.asarray(point_b, float)
        self.k, self.c, self.l0 = float(k), float(c), float(l0)


class BodyTorque:
    """A constant moment on a body (planar: scalar; spatial: 3-vector in body axes)."""

    def __init__(self, body, torque):
        self.body = body
        self.torque = np.atleast_1d(np.asarray(torque, float))


class PointLoad:
    """A force ``s(t) force`` at ``point`` of a body and a torque ``s(t) torque`` (``multibody.model.loads``): the
    vectors in inertial axes, or in the body's axes when ``local`` (they turn with it); ``point`` from the centre of
    mass in the body's axes; ``curve`` a ``LoadCurve`` (planar: 2-vectors in the plane and a scalar torque)."""

    def __init__(self, body, point, force, torque, local, curve):
        self.body = body
        self.point = np.asarray(point, float)
        self.force = np.asarray(force, float)
        self.torque = np.atleast_1d(np.asarray(torque, float))
        self.local = bool(local)
        self.curve = curve


class RelativeTorque:
    """A moment ``τ`` on body j and ``−τ`` on body i (a drive in a joint; planar: scalar)."""

    def __init__(self, body_i, body_j, torque):
        self.body_i, self.body_j = body_i, body_j
        self.torque = np.atleast_1d(np.asarray(torque, float))
