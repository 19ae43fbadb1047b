"""Peer benchmark: the IFToMM uncontrolled-bicycle maneuvers with Exudyn's model of the Whipple bicycle.

The same bicycle as :func:`multibody.systems.bicycle.whipple_model` (seed 003, Table 1, the 25 parameters
plus g), built independently in Exudyn (https://github.com/jgerstmayr/EXUDYN) from Exudyn's own items:

* four rigid bodies (``CreateRigidBody``: a node with Euler parameters, the reference point at the centre of
  mass) with the Table 1 masses and inertias, gravity (0, 0, -g) on each;
* three revolute joints (``CreateRevoluteJoint``: an ``ObjectJointRevoluteZ`` between two rigid markers):
  the rear axle about y through (0, 0, rR), the steer axis along the downward direction
  (sin lam, 0, -cos lam) through the steer axis' ground point (w + c, 0, 0), the front axle about y through
  (w, 0, rF);
* two ideal rolling discs on the ground (``CreateRollingDisc``: an ``ObjectJointRollingDisc``, a knife-edge
  disc of the wheel's radius rolling without slip on the plane z = 0; Exudyn states all three of its
  conditions at velocity level, i.e. index 2: the contact point's velocity on the wheel vanishes in the
  lateral, longitudinal and normal direction, so the contact height itself is not held, only its rate).

Axes are those of the library's model: x forward, y to the left, z up (the paper's SAE frame turned half a
turn about x), the rear contact point at the origin in the upright reference configuration. The body inertias
of Table 1 (SAE axes) are turned into these axes as ``S I S`` with ``S = diag(1, -1, -1)``, so the xz entries
change sign.

Initial state (upright, steer zero, straight running at forward speed ``v`` with lean rate ``phi_dot``):
the frames move as one rigid body with the velocity ``v x`` and the angular velocity ``phi_dot x`` about the
line through both contact points (the ground x axis), and each wheel spins in addition at ``v / r`` about
its axle. Every constraint holds at t = 0: the joints move rigidly, and on each wheel the contact point's
velocity is ``v x - phi_dot r y + (phi_dot x + v/r y) x (-r z) = 0`` (nothing in the normal direction).
This is the state of :func:`multibody.systems.bicycle.upright_state` (the three independent speeds - lean
rate, steer rate 0 and rear wheel rate v/rR - fix the rest through the constraints).

Solver: Exudyn's ``TrapezoidalIndex2`` (its generalized-alpha integrator with spectral radius 1, i.e. the
trapezoidal rule, with all constraints at velocity level: the energy-conserving choice Exudyn's own IFToMM
bicycle example uses), fixed step ``step_size``, modified Newton. The outputs follow
:func:`multibody.systems.bicycle.bicycle_outputs`: the lean is arcsin R[2, 1] of the rear frame's rotation
(positive to the right), the yaw atan2(-R[0, 1], R[1, 1]) (positive to the left), the steer angle is the
rotation of the front frame relative to the rear frame about the downward steer axis (positive to the right,
as the paper's delta), and the forward speed is rR times the rear wheel's spin rate relative to the rear frame.
The energy (kinetic + gravity potential, the potential zero at z = 0) is sampled every ``sample_period``.

Exudyn is an optional peer: it is imported inside the functions, and :class:`ImportError` with an install hint
is raised when it is missing.
"""
from __future__ import annotations

import math
import time

import numpy as np

from multibody.errors import shown

__all__ = ["DEFAULT_STEP_SIZE", "exudyn_maneuver", "exudyn_bicycle_model", "initial_body_velocities"]

#: the step size of :func:`exudyn_maneuver`, 1/68 s (1360 steps in 20 s): with ``TrapezoidalIndex2`` the M2
#: energy variation is 9.85e-4 %, just under the IFToMM limit of 1e-3 %. The variation grows as h^2
#: (4.56e-4 % at 10 ms, 9.32e-4 % at 1/70 s); it crosses 1e-3 % between 20/1351 s (9.988e-4 %) and 20/1350 s
#: (1.0004e-3 %), so 1/68 s is the largest step to within 1 %. (Exudyn 1.13.6.) The step is M2's: at 1/68 s
#: M1 (growing weave) varies by 2.4e-3 % and M3 by 7.9e-5 %.
DEFAULT_STEP_SIZE = 1.0 / 68.0

_SAE = np.diag([1.0, -1.0, -1.0])


def _import_exudyn():
    try:
        import exudyn
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("the Exudyn peer benchmark needs the 'exudyn' package (pip install exudyn); "
                          f"it could not be imported: {exc}") from exc
    return exudyn


def _inertia_ours(xx, yy, zz, xz):
    """A Table 1 body inertia (SAE axes: x forward, y right, z down) in x forward, y left, z up."""
    I = np.array([[xx, 0.0, xz], [0.0, yy, 0.0], [xz, 0.0, zz]])
    return _SAE @ I @ _SAE


def _geometry(p):
    """Centres of mass, joint points and axes of the upright reference configuration (x fwd, y left, z up)."""
    lam = p.lam
    return dict(
        rear_wheel=np.array([0.0, 0.0, p.rR]),
        rear_frame=np.array([p.xB, 0.0, -p.zB]),
        front_frame=np.array([p.xH, 0.0, -p.zH]),
        front_wheel=np.array([p.w, 0.0, p.rF]),
        steer_point=np.array([p.w + p.c, 0.0, 0.0]),
        steer_axis=np.array([math.sin(lam), 0.0, -math.cos(lam)]),
    )


def initial_body_velocities(params, speed, roll_rate):
    """Centre-of-mass velocities and angular velocities (global) of the four bodies in upright straight running
    at forward ``speed`` with lean rate ``roll_rate`` and steer rate zero: a dict body -> (v, omega)."""
    from multibody.systems import bicycle

    p = bicycle.coerce_parameters(params if params is not None else bicycle.benchmark_parameters(), False)
    geo = _geometry(p)
    ex, ey = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    omega_frame = roll_rate * ex
    out = {}
    for body, spin in (("rear_frame", 0.0), ("rear_wheel", speed / p.rR),
                       ("front_frame", 0.0), ("front_wheel", speed / p.rF)):
        out[body] = (speed * ex + np.cross(omega_frame, geo[body]), omega_frame + spin * ey)
    return out


class _ExudynBicycle:
    """An assembled Exudyn system of the Whipple bicycle and the handles needed to read it back."""

    def __init__(self, exu, SC, mbs, bodies, sensors, params, geometry, inertia):
        self.exu, self.SC, self.mbs = exu, SC, mbs
        self.bodies, self.sensors, self.params, self.geometry = bodies, sensors, params, geometry
        self.inertia = inertia                              # body -> (mass, inertia about the centre of mass)


def exudyn_bicycle_model(params=None, speed=4.6, roll_rate=0.5, validate=True):
    """The Whipple bicycle as an Exudyn system (not yet solved), in upright straight running at ``speed`` with
    lean rate ``roll_rate``; internal sensors record each body's position, velocity, angular velocity and
    rotation matrix. Returns an object with ``exu``, ``SC``, ``mbs``, ``bodies`` and ``sensors``."""
    exu = _import_exudyn()
    from exudyn.itemInterface import SensorBody
    from exudyn.rigidBodyUtilities import RigidBodyInertia

    from multibody.systems import bicycle

    p = bicycle.coerce_parameters(params if params is not None else bicycle.benchmark_parameters(), validate)
    geo = _geometry(p)
    vel = initial_body_velocities(p, float(speed), float(roll_rate))
    gravity = [0.0, 0.0, -p.g]
    inertia = {
        "rear_frame": (p.mB, _inertia_ours(p.IBxx, p.IByy, p.IBzz, p.IBxz)),
        "rear_wheel": (p.mR, np.diag([p.IRxx, p.IRyy, p.IRxx])),
        "front_frame": (p.mH, _inertia_ours(p.IHxx, p.IHyy, p.IHzz, p.IHxz)),
        "front_wheel": (p.mF, np.diag([p.IFxx, p.IFyy, p.IFxx])),
    }

    SC = exu.SystemContainer()
    mbs = SC.AddSystem()
    ground = mbs.CreateGround()
    bodies = {}
    for name, (mass, I) in inertia.items():
        v0, w0 = vel[name]
        bodies[name] = mbs.CreateRigidBody(
            name=name, inertia=RigidBodyInertia(mass=mass, inertiaTensor=I),
            referencePosition=list(geo[name]), initialVelocity=list(v0), initialAngularVelocity=list(w0),
            gravity=gravity, nodeType=exu.NodeType.RotationEulerParameters, show=False)

    ey = [0.0, 1.0, 0.0]
    # the two bodies go second, by position: ``itemNumbers`` in recent releases, ``bodyNumbers`` before
    mbs.CreateRevoluteJoint("rear_axle", [bodies["rear_frame"], bodies["rear_wheel"]],
                            position=list(geo["rear_wheel"]), axis=ey, useGlobalFrame=True, show=False)
    mbs.CreateRevoluteJoint("steer", [bodies["rear_frame"], bodies["front_frame"]],
                            position=list(geo["steer_point"]), axis=list(geo["steer_axis"]), useGlobalFrame=True,
                            show=False)
    mbs.CreateRevoluteJoint("front_axle", [bodies["front_frame"], bodies["front_wheel"]],
                            position=list(geo["front_wheel"]), axis=ey, useGlobalFrame=True, show=False)
    for name, wheel, radius in (("rear_contact", "rear_wheel", p.rR), ("front_contact", "front_wheel", p.rF)):
        mbs.CreateRollingDisc(name=name, bodyNumbers=[ground, bodies[wheel]], axisPosition=[0.0, 0.0, 0.0],
                              axisVector=ey, discRadius=radius, planePosition=[0.0, 0.0, 0.0],
                              planeNormal=[0.0, 0.0, 1.0], show=False)

    OVT = exu.OutputVariableType
    sensors = {}
    for name, body in bodies.items():
        for key, ovt in (("position", OVT.Position), ("velocity", OVT.Velocity),
                         ("omega", OVT.AngularVelocity), ("rotation", OVT.RotationMatrix)):
            sensors[name, key] = mbs.AddSensor(SensorBody(bodyNumber=body, outputVariableType=ovt,
                                                          storeInternal=True, writeToFile=False))
    mbs.Assemble()
    return _ExudynBicycle(exu, SC, mbs, bodies, sensors, p, geo, inertia)


def _settings(exu, t_end, step_size, sample_period, newton_tolerance, modified_newton, spectral_radius,
              index2):
    s = exu.SimulationSettings()
    ti = s.timeIntegration
    n = int(round(t_end / step_size))
    ti.numberOfSteps = n
    ti.endTime = n * step_size
    ti.verboseMode = 0
    ti.newton.useModifiedNewton = bool(modified_newton)
    ti.newton.relativeTolerance = float(newton_tolerance)
    ti.generalizedAlpha.spectralRadius = float(spectral_radius)
    ti.generalizedAlpha.useIndex2Constraints = bool(index2)
    ti.generalizedAlpha.computeInitialAccelerations = True
    if hasattr(s, "solution") and hasattr(s.solution, "file"):      # the settings tree of Exudyn >= 1.12
        s.solution.file.write = False
        s.solution.sensors.writePeriod = float(sample_period)
    else:                                                            # older releases
        s.solutionSettings.writeSolutionToFile = False
        s.solutionSettings.sensorsWritePeriod = float(sample_period)
    return s, n


def _steer_angle(RB, RH, axis):
    """The rotation angle of RH relative to RB about ``axis`` (given in the rear frame's reference axes)."""
    u = np.cross(axis, [0.0, 1.0, 0.0])
    u /= np.linalg.norm(u)
    Rrel = np.transpose(RB, (0, 2, 1)) @ RH
    Ru = np.einsum("nij,j->ni", Rrel, u)
    return np.arctan2(np.cross(u, Ru) @ axis, Ru @ u)


def exudyn_maneuver(name="M2", params=None, step_size=DEFAULT_STEP_SIZE, t_end=20.0,
                    solver="TrapezoidalIndex2", sample_period=None, newton_tolerance=1e-8, modified_newton=True,
                    spectral_radius=1.0, return_series=False, validate=True):
    """The IFToMM uncontrolled-bicycle maneuver ``name`` (M1, M2, M3 of
    :data:`multibody.systems.bicycle.IFTOMM_MANEUVERS`) with Exudyn's model of the Whipple bicycle.

    ``solver`` is the name of an ``exudyn.DynamicSolverType`` (``"TrapezoidalIndex2"``, or
    ``"GeneralizedAlpha"`` with ``spectral_radius``); ``step_size`` is the fixed step; ``sample_period`` the
    spacing of the recorded samples (default: the smallest multiple of the step that is at least 0.01 s, the
    output spacing of :func:`~multibody.systems.bicycle.iftomm_maneuver`). ``cpu_seconds`` is the process CPU
    time of Exudyn's ``SolveDynamic`` alone (the model is built and assembled before the clock starts).

    Returns a dict with the keys of :func:`~multibody.systems.bicycle.iftomm_maneuver`
    (``energy_variation_percent`` = 100 (max E - min E)/E0 over the samples, ``cpu_seconds``, final ``roll``,
    ``steer``, ``forward_speed``, ``yaw``, ``rear_contact``, ``steps``) plus the solver settings, the largest
    contact height drift ``max_contact_height`` (m) and, with ``return_series``, the sampled ``series``.
    """
    from multibody.errors import IntegrationError, ModelError
    from multibody.systems import bicycle

    key = str(name).upper()
    if key not in bicycle.IFTOMM_MANEUVERS:
        raise ModelError(f"unknown maneuver {name!r}; expected one of {', '.join(bicycle.IFTOMM_MANEUVERS)}",
                         element="maneuver")
    step_size = float(step_size)
    if not (step_size > 0.0 and math.isfinite(step_size)):
        raise ValueError(f"step_size must be a positive number, got {shown(step_size)!r}")
    exu = _import_exudyn()
    solver_type = getattr(exu.DynamicSolverType, str(solver), None)
    if not isinstance(solver_type, exu.DynamicSolverType):
        raise ValueError(f"unknown Exudyn solver {solver!r}; e.g. 'TrapezoidalIndex2' or 'GeneralizedAlpha'")
    speed, roll_rate = bicycle.IFTOMM_MANEUVERS[key]
    model = exudyn_bicycle_model(params, speed, roll_rate, validate)
    mbs, p = model.mbs, model.params
    if sample_period is None:
        sample_period = step_size * math.ceil(0.01 / step_size - 1e-9)
    index2 = solver == "TrapezoidalIndex2"
    settings, n_steps = _settings(exu, float(t_end), step_size, sample_period, newton_tolerance, modified_newton,
                                  1.0 if index2 else spectral_radius, index2)

    t0 = time.process_time()
    try:
        ok = mbs.SolveDynamic(settings, solverType=solver_type)
    except Exception as exc:        # Exudyn raises its own error when Newton fails
        raise IntegrationError(f"Exudyn's {solver} solver failed on maneuver {key} with step {step_size}: {exc}",
                               reason=str(exc)) from exc
    cpu = time.process_time() - t0
    if not ok:
        raise IntegrationError(f"Exudyn's {solver} solver failed on maneuver {key} with step {step_size}",
                               reason="Exudyn SolveDynamic returned False")

    data = {k: mbs.GetSensorStoredData(s) for k, s in model.sensors.items()}
    t = data["rear_frame", "position"][:, 0]
    E = np.zeros_like(t)
    for body, (m, I0) in model.inertia.items():
        pos = data[body, "position"][:, 1:]
        v = data[body, "velocity"][:, 1:]
        w = data[body, "omega"][:, 1:]
        R = data[body, "rotation"][:, 1:].reshape(-1, 3, 3)
        wl = np.einsum("nji,nj->ni", R, w)                  # body-frame angular velocity
        E += 0.5 * m * np.einsum("ni,ni->n", v, v) + 0.5 * np.einsum("ni,ij,nj->n", wl, I0, wl) + m * p.g * pos[:, 2]

    RB = data["rear_frame", "rotation"][:, 1:].reshape(-1, 3, 3)
    RH = data["front_frame", "rotation"][:, 1:].reshape(-1, 3, 3)
    RW = data["rear_wheel", "rotation"][:, 1:].reshape(-1, 3, 3)
    wB = data["rear_frame", "omega"][:, 1:]
    wR = data["rear_wheel", "omega"][:, 1:]
    lean = np.arcsin(np.clip(RB[:, 2, 1], -1.0, 1.0))
    yaw = np.arctan2(-RB[:, 0, 1], RB[:, 1, 1])
    steer = _steer_angle(RB, RH, model.geometry["steer_axis"])
    forward_speed = p.rR * np.einsum("ni,ni->n", wR - wB, RB[:, :, 1])

    heights, contacts = [], {}
    nz = np.array([0.0, 0.0, 1.0])
    for body, r, label in (("rear_wheel", p.rR, "rear"), ("front_wheel", p.rF, "front")):
        Rw = RW if body == "rear_wheel" else data[body, "rotation"][:, 1:].reshape(-1, 3, 3)
        a = Rw[:, :, 1]                                      # the axle
        u = nz - (a @ nz)[:, None] * a
        u /= np.linalg.norm(u, axis=1)[:, None]
        c = data[body, "position"][:, 1:] - r * u            # the lowest point of the rim
        contacts[label] = c
        heights.append(float(np.abs(c[:, 2]).max()))

    out = dict(maneuver=key, speed=speed, roll_rate=roll_rate, t_end=float(t[-1]), peer="exudyn",
               exudyn_version=str(getattr(exu, "__version__", "?")), method=solver, solver=solver,
               step_size=step_size, steps=n_steps, newton_tolerance=float(newton_tolerance),
               modified_newton=bool(modified_newton),
               spectral_radius=1.0 if index2 else float(spectral_radius), sample_period=float(sample_period),
               samples=int(t.size),
               energy_variation_percent=float(100.0 * np.ptp(E) / abs(E[0])), energy_initial=float(E[0]),
               cpu_seconds=float(cpu),
               roll=float(lean[-1]), steer=float(steer[-1]), forward_speed=float(forward_speed[-1]),
               yaw=float(yaw[-1]), rear_contact=contacts["rear"][-1, :2].tolist(),
               max_contact_height=max(heights))
    if return_series:
        out["series"] = dict(t=t, energy=E, lean=lean, steer=steer, forward_speed=forward_speed, yaw=yaw,
                             rear_contact_xy=contacts["rear"][:, :2], front_contact_xy=contacts["front"][:, :2])
    return out
