"""Controllers: joint torque laws that are Model elements, evaluated inside the compiled integration loops.

A controller acts on the coordinates of some tree joints with plain coordinates (every joint but Spherical and
Free, whose quaternions have no error of their own here; by default every such joint that moves) and adds its
generalized forces to the others. Its reference is a constant ``target`` (one value per controlled coordinate, the
joints' coordinates in the order of ``joints``) or a :class:`Trajectory`; e = q_ref − q, ė = q̇_ref − q̇.

``JointPD(kp, kd, target, gravity_compensation=True)``
    τ = Kp e + Kd ė + g(q) on its coordinates (g: the generalized gravity forces of the model as built,
    ``multibody.gravity_forces``; without ``gravity_compensation``, τ = Kp e + Kd ė). With exact gravity
    compensation a constant target q* is an equilibrium: M(q) ë + (C(q, q̇) + Kd) ė + Kp e = 0 when every coordinate
    is controlled, asymptotically stable for Kp, Kd positive definite (Takegaki & Arimoto, J. Dyn. Syst. Meas.
    Control 103 (1981) 119; Siciliano et al., *Robotics*, §8.5.2).
``ComputedTorque(kp, kd, target)``
    τ = M(q) (q̈_ref + Kd ė + Kp e) + C(q, q̇) q̇ + g(q), one inverse dynamics (RNEA) per evaluation with the desired
    accelerations of the controlled coordinates (zero on the others): with every coordinate controlled the error
    obeys ë + Kd ė + Kp e = 0 exactly (feedback linearization; Siciliano et al. §8.5.3). The computed-torque
    controllers of a model act together (one inverse dynamics for all their coordinates).

The model-based terms (g, M, C) use the model as built: ``simulate_batch`` runs that vary masses or gravity see
the mismatch. Add a controller with ``ModelBuilder.add_controller(name, controller)``; ``model.controllers``
lists them; ``ControllerTable`` packs them for the kernels (``kernels/control.py``).

Example
-------
>>> import multibody as mb
>>> b = mb.ModelBuilder(gravity=(0, 0, -9.81))
>>> b.add_body("carriage", mass=5.0)
'carriage'
>>> b.add_joint("rail", mb.Prismatic(axis=(1, 0, 0)), parent="ground", child="carriage")
'rail'
>>> lift = mb.Trajectory(times=[0.0, 2.0], positions=[[0.0], [0.4]])      # 0.4 m in 2 s, from rest to rest
>>> b.add_controller("move", mb.ComputedTorque(kp=25.0, kd=10.0, target=lift))
'move'
>>> model = b.build()
>>> model.controllers[0].name, model.controllers[0].coordinates
('move', ('rail.displacement',))
"""
import math
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError, shown
from multibody.kernels.control import (C_MODE, CI_WIDTH, DEGREE, MODE_COMPUTED_TORQUE, MODE_PD, MODE_PD_GRAVITY,
                                       reference_at)


def _numbers(value, what, element, shape=None):
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{element}: {what} must be numbers, got {shown(value)!r}", element=element) from None
    if shape is not None and arr.shape != shape:
        raise ModelError(f"{element}: {what} must have shape {shape}, got {arr.shape}", element=element)
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{element}: {what} must be finite, got {arr.tolist()}", element=element)
    return arr


class Trajectory:
    """A reference motion of the controlled coordinates through waypoints: ``times`` (m,) strictly increasing,
    ``positions`` (m, nc). Between the first and the last waypoint the coordinates follow the quintic spline through
    them with zero velocity and acceleration at the first and the last waypoint (scipy's ``make_interp_spline``, k =
    5; C⁴ between the waypoints): the motion starts and ends at rest, without a jump of acceleration; before
    ``times[0]`` they hold the first waypoint and after ``times[-1]`` the last, so that q, q̇ and q̈ are continuous
    at all times. One waypoint is a constant target.

    >>> traj = Trajectory([0.0, 1.0], [[0.0], [1.0]])
    >>> q, v, a = traj.at(0.5)
    >>> float(q[0]), float(v[0]), round(float(a[0]), 12)     # the rest-to-rest quintic 10 s³ − 15 s⁴ + 6 s⁵
    (0.5, 1.875, 0.0)
    """

    def __init__(self, times, positions, element="trajectory"):
        t = _numbers(times, "times", element).reshape(-1)
        if t.size == 0 or np.any(np.diff(t) <= 0.0):
            raise ModelError(f"{element}: times must be one or more strictly increasing numbers, got {t.tolist()}",
                             element=element)
        x = _numbers(positions, "positions", element)
        if x.ndim == 1 and t.size == 1:
            x = x.reshape(1, -1)
        if x.ndim != 2 or x.shape[0] != t.size:
            raise ModelError(f"{element}: positions must be ({t.size}, coordinates), one row per time, got shape "
                             f"{x.shape}", element=element)
        self.times = t
        self.positions = x
        self.times.flags.writeable = self.positions.flags.writeable = False

    @classmethod
    def constant(cls, target, element="target"):
        """The trajectory that holds ``target`` (one value per coordinate)."""
        return cls([0.0], _numbers(target, "target", element).reshape(1, -1), element)

    @property
    def ncoordinates(self):
        return self.positions.shape[1]

    def coefficients(self):
        """(nc, m, DEGREE + 1): for each coordinate and segment s < m − 1 the quintic Σ a_i τ^i in τ = t − times[s]
        (the spline's Taylor coefficients at times[s]); row m − 1 holds the last waypoint (a0), the value held from
        the last time on."""
        m, nc = self.positions.shape
        out = np.zeros((nc, m, DEGREE + 1))
        out[:, m - 1, 0] = self.positions[-1]
        if m > 1:
            from scipy.interpolate import make_interp_spline

            rest = [(1, np.zeros(nc)), (2, np.zeros(nc))]
            spline = make_interp_spline(self.times, self.positions, k=DEGREE, bc_type=(rest, rest))
            for i in range(DEGREE + 1):
                out[:, :m - 1, i] = (spline(self.times[:-1], i) / math.factorial(i)).T
        return out

    def at(self, t):
        """(q, q̇, q̈) of the reference at time t (the numbers the kernels compute)."""
        C = self.coefficients()
        out = np.array([reference_at(float(t), self.times, C[k], 0, self.times.size, 0) for k in range(C.shape[0])])
        return out[:, 0], out[:, 1], out[:, 2]

    def as_dict(self):
        return {"times": self.times.tolist(), "positions": self.positions.tolist()}

    def __eq__(self, other):
        return (isinstance(other, Trajectory) and np.array_equal(self.times, other.times)
                and np.array_equal(self.positions, other.positions))

    def __repr__(self):
        return f"Trajectory(times={self.times.tolist()}, positions={self.positions.tolist()})"


class Controller:
    """Base class of the controller elements (see the module docstring)."""

    kind = "controller"
    mode = MODE_PD

    def __init__(self, kp, kd, target, joints=None):
        element = type(self).__name__
        self.kp = self._gains(kp, "kp", element)
        self.kd = self._gains(kd, "kd", element)
        if isinstance(target, Trajectory):
            self.reference = target
        elif target is None:
            raise ModelError(f"{element}: target: give one value per controlled coordinate, or a Trajectory",
                             element=element)
        else:
            self.reference = Trajectory.constant(target, element)
        if joints is not None:
            if isinstance(joints, str) or not all(isinstance(j, str) for j in joints):
                raise ModelError(f"{element}: joints must be a list of joint names, got {joints!r}", element=element)
            joints = tuple(joints)
        self.joints = joints

    @staticmethod
    def _gains(value, what, element):
        g = _numbers(value, what, element).reshape(-1)
        if g.size == 0 or np.any(g < 0.0):
            raise ModelError(f"{element}: {what} must be one non-negative number or one per coordinate, got "
                             f"{g.tolist()}", element=element)
        return g

    def as_dict(self):
        """What a model file stores (``kind``, gains, target or trajectory, joints)."""
        out = {"kind": self.kind, "kp": _plain(self.kp), "kd": _plain(self.kd)}
        ref = self.reference
        if ref.times.size == 1 and ref.times[0] == 0.0:
            out["target"] = ref.positions[0].tolist()
        else:
            out["trajectory"] = ref.as_dict()
        if self.joints is not None:
            out["joints"] = list(self.joints)
        return out

    def __eq__(self, other):
        return type(self) is type(other) and self.as_dict() == other.as_dict()

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={shown(v)!r}' for k, v in self.as_dict().items() if k != 'kind')})"


def _plain(g):
    return float(g[0]) if g.size == 1 else g.tolist()


class JointPD(Controller):
    """τ = Kp (q_ref − q) + Kd (q̇_ref − q̇) + g(q) on the controlled coordinates (module docstring); ``kp``, ``kd``:
    one gain or one per coordinate; ``target``: the constant reference, or a :class:`Trajectory`; ``joints``: the
    joint names (default: every joint with plain coordinates that moves)."""

    kind = "joint_pd"

    def __init__(self, kp, kd, target=None, gravity_compensation=True, joints=None):
        super().__init__(kp, kd, target, joints)
        self.gravity_compensation = bool(gravity_compensation)
        self.mode = MODE_PD_GRAVITY if self.gravity_compensation else MODE_PD

    def as_dict(self):
        out = super().as_dict()
        out["gravity_compensation"] = self.gravity_compensation
        return out


class ComputedTorque(Controller):
    """τ = M(q) (q̈_ref + Kd ė + Kp e) + C(q, q̇) q̇ + g(q) (module docstring); arguments as :class:`JointPD`."""

    kind = "computed_torque"
    mode = MODE_COMPUTED_TORQUE


CONTROLLERS = {cls.kind: cls for cls in (JointPD, ComputedTorque)}


def controller_from_dict(data, element="controller"):
    """The controller that :meth:`Controller.as_dict` described; ``ModelError`` naming ``element`` otherwise."""
    if not isinstance(data, dict) or data.get("kind") not in CONTROLLERS:
        raise ModelError(f"{element}: expected a controller with 'kind' one of {', '.join(CONTROLLERS)}, got "
                         f"{shown(data)!r}", element=element)
    args = {k: v for k, v in data.items() if k not in ("kind", "trajectory")}
    if "trajectory" in data:
        if "target" in data:
            raise ModelError(f"{element}: give target or trajectory, not both", element=element)
        traj = data["trajectory"]
        if not isinstance(traj, dict) or set(traj) != {"times", "positions"}:
            raise ModelError(f"{element}: trajectory must be a mapping with times and positions, got {shown(traj)!r}",
                             element=element)
        args["target"] = Trajectory(traj["times"], traj["positions"], f"{element}.trajectory")
    try:
        return CONTROLLERS[data["kind"]](**args)
    except TypeError as exc:
        raise ModelError(f"{element}: {exc}", element=element) from None
    except ModelError as exc:      # "JointPD: kp must be ..." -> "controllers[0].kp: kp must be ..."
        body = str(exc).split(": ", 1)[-1]
        field = next((k for k in ("kp", "kd", "target", "joints") if body.startswith(k)), None)
        where = element if field is None else f"{element}.{field}"
        raise ModelError(f"{where}: {body}", element=where) from None


@dataclass(frozen=True)
class ControllerInfo:
    """A controller as built: ``coordinates`` the names of its velocity coordinates, ``iv`` and ``iq`` their
    positions in v and q."""

    name: str
    controller: Controller
    joints: tuple
    coordinates: tuple
    iv: tuple
    iq: tuple


def resolve_controller(name, controller, joints):
    """The ``ControllerInfo`` of ``controller`` on the model's tree joints ``joints`` (``Model.joints``), or a
    ``ModelError`` naming the controller and what does not fit."""
    element = f"controller '{name}'"
    if not isinstance(controller, Controller):
        raise ModelError(f"{element}: expected mb.JointPD or mb.ComputedTorque, got {controller!r}", element=element)
    by_name = {j.name: j for j in joints[1:]}
    if controller.joints is None:
        chosen = [j for j in joints[1:] if j.joint.linear_coordinates and j.joint.nv > 0]
    else:
        chosen = []
        for jn in controller.joints:
            if jn not in by_name:
                raise ModelError(f"{element}: joint '{jn}' is not a tree joint of the model (tree joints: "
                                 f"{', '.join(by_name)})", element=element)
            j = by_name[jn]
            if not j.joint.linear_coordinates:
                raise ModelError(f"{element}: joint '{jn}' is a {type(j.joint).__name__} joint, whose quaternion "
                                 "coordinates a joint controller does not take", element=element)
            if j.joint.nv == 0:
                raise ModelError(f"{element}: joint '{jn}' has no coordinates to control", element=element)
            chosen.append(j)
    if not chosen:
        raise ModelError(f"{element}: the model has no joint with plain coordinates to control", element=element)
    names, iv, iq = [], [], []
    for j in chosen:
        names += [f"{j.name}.{c}" for c in j.joint.coordinate_names]
        iv += list(range(j.v_slice.start, j.v_slice.stop))
        iq += list(range(j.q_slice.start, j.q_slice.stop))
    nc = len(iv)
    for what in ("kp", "kd"):
        g = getattr(controller, what)
        if g.size not in (1, nc):
            raise ModelError(f"{element}: {what} has {g.size} values for {nc} coordinates ({', '.join(names)})",
                             element=element)
    if controller.reference.ncoordinates != nc:
        raise ModelError(f"{element}: the target has {controller.reference.ncoordinates} values per time for {nc} "
                         f"coordinates ({', '.join(names)})", element=element)
    return ControllerInfo(name, controller, tuple(j.name for j in chosen), tuple(names), tuple(iv), tuple(iq))


def controller_without(info, joint):
    """The controller of ``info`` (a :class:`ControllerInfo`) on its joints other than ``joint`` — its gains and
    reference restricted to their coordinates, the same kind and options — or None when it acts on ``joint`` alone:
    what carries across the separation of ``joint`` (``switching/restructure.py``), whose coordinates end with it."""
    c = info.controller
    if joint not in info.joints:
        keep = None
    else:
        keep = [k for k, name in enumerate(info.coordinates) if name.rsplit(".", 1)[0] != joint]
        if not keep:
            return None
    joints = tuple(j for j in info.joints if j != joint)
    if keep is None:
        kp, kd, ref = c.kp, c.kd, c.reference
    else:
        kp = c.kp if c.kp.size == 1 else c.kp[keep]
        kd = c.kd if c.kd.size == 1 else c.kd[keep]
        ref = Trajectory(c.reference.times, c.reference.positions[:, keep])
    if isinstance(c, JointPD):
        return JointPD(kp, kd, ref, gravity_compensation=c.gravity_compensation, joints=joints)
    return type(c)(kp, kd, ref, joints=joints)


def check_overlap(infos):
    """A ``ModelError`` when two controllers act on the same coordinate."""
    owner = {}
    for info in infos:
        for c in info.coordinates:
            if c in owner:
                raise ModelError(f"controller '{info.name}': coordinate '{c}' is controlled by controller "
                                 f"'{owner[c]}' already", element=f"controller '{info.name}'")
            owner[c] = info.name


class ControllerTable:
    """The model's controllers packed for the kernels (``kernels/control.py``): ``CI`` (nc, CI_WIDTH) int64 rows
    (velocity index, q index, mode, first knot, knots, first coefficient row), ``CF`` (nc, 2) the gains (kp, kd),
    ``RT`` the knots, ``RC`` (rows, 6) the quintics of the references (``Trajectory.coefficients``), ``CROW`` (nv,) the
    row of each velocity coordinate (−1: not controlled)."""

    def __init__(self, infos, nv):
        ci, cf, rt, rc = [], [], [], []
        row = 0
        crow = np.full(nv, -1, dtype=np.int64)
        for info in infos:
            c = info.controller
            knot = len(rt)
            rt += c.reference.times.tolist()
            m = c.reference.times.size
            coef = c.reference.coefficients()
            kp = np.broadcast_to(c.kp, (len(info.iv),))
            kd = np.broadcast_to(c.kd, (len(info.iv),))
            for k, (iv, iq) in enumerate(zip(info.iv, info.iq)):
                crow[iv] = len(ci)
                ci.append((iv, iq, c.mode, knot, m, row))
                cf.append((kp[k], kd[k]))
                rc.append(coef[k])
                row += m
        self.CI = np.array(ci, dtype=np.int64).reshape(-1, CI_WIDTH)
        self.CF = np.array(cf, dtype=np.float64).reshape(-1, 2)
        self.RT = np.array(rt, dtype=np.float64)
        self.RC = np.concatenate(rc).reshape(-1, DEGREE + 1) if rc else np.zeros((0, DEGREE + 1))
        self.CROW = crow
        #: which parts the kernels compute: any gravity compensation, any computed torque
        self.gravity = bool(np.any(self.CI[:, C_MODE] == MODE_PD_GRAVITY))
        self.inverse_dynamics = bool(np.any(self.CI[:, C_MODE] == MODE_COMPUTED_TORQUE))

    def arrays(self):
        return self.CI, self.CF, self.RT, self.RC, self.CROW
