"""The nonlinear Whipple bicycle as a generic model (seed 003 §2): four bodies, three hinges and two discs rolling
without slip, built with the public builder; its linearization, eigenvalues and critical speeds from the
generic machinery (no bicycle equation anywhere)."""
from __future__ import annotations

import math

import numpy as np

from multibody.errors import ModelError
from multibody.systems.bicycle.eigen import EigenSweep, label_modes
from multibody.systems.bicycle.parameters import benchmark_parameters, coerce_parameters

#: the ground frame of the generic model (x forward, y left, z up) seen from the paper's SAE frame
#: (x forward, y right, z down): a half turn about x
_SAE = np.diag([1.0, -1.0, -1.0])


def _inertia_ours(xx, yy, zz, xz):
    """A body inertia of Table 1 (SAE axes) in the model's axes: R I Rᵀ with R = diag(1, −1, −1)."""
    I = np.array([[xx, 0.0, xz], [0.0, yy, 0.0], [xz, 0.0, zz]])
    return _SAE @ I @ _SAE.T


def whipple_model(params=None, validate=True):
    """The Whipple bicycle (seed 003 §2) as a generic model: four bodies, three hinges and two discs rolling
    without slip, built with the public builder from the 25 parameters (no bicycle equation anywhere).

    Ground frame: x forward, y to the left, z up (the paper's SAE frame turned half a turn about x), the
    rear contact P at the origin in the reference configuration (upright, steer zero, both wheels on the
    ground). Bodies and joints:

    ========== ====================================================================================
    rear_frame  B with the rider; a ``Free`` joint from the ground (frame at the rear axle, axes of the
                ground frame in the reference configuration): q = (position, quaternion)
    rear_wheel  R; ``Revolute`` ``rear_axle`` about y at the rear axle; its angle grows when rolling
                forward (the paper's θR with the sign reversed)
    front_frame H; ``Revolute`` ``steer`` about the downward steer axis (sin λ, 0, −cos λ) through the
                steer axis' ground point (w + c, 0, 0); positive to the right, as the paper's δ
    front_wheel F; ``Revolute`` ``front_axle`` about y at the front axle (w, 0, rF)
    ========== ====================================================================================

    Constraints: ``RollingDisc`` ``rear_contact`` and ``front_contact`` on the floor z = 0, each giving the
    contact height (position row) and the two tangential no-slip rows (velocity rows): 9 − 2 = 7 coordinates,
    9 − 6 = 3 speeds (seed 003 §2.4). Gravity (0, 0, −g) is the only applied force.
    """
    import multibody as mb

    p = coerce_parameters(params if params is not None else benchmark_parameters(), validate)
    rR, rF, w, c, lam = p.rR, p.rF, p.w, p.c, p.lam
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -p.g), name="Whipple bicycle")
    b.add_body("rear_frame", p.mB, com=(p.xB, 0.0, -p.zB - rR), inertia=_inertia_ours(p.IBxx, p.IByy, p.IBzz, p.IBxz))
    b.add_body("rear_wheel", p.mR, inertia=(p.IRxx, p.IRyy, p.IRxx))
    S = np.array([w + c, 0.0, 0.0])                          # the steer axis' ground point
    b.add_body("front_frame", p.mH, com=(p.xH - S[0], 0.0, -p.zH),
               inertia=_inertia_ours(p.IHxx, p.IHyy, p.IHzz, p.IHxz))
    b.add_body("front_wheel", p.mF, inertia=(p.IFxx, p.IFyy, p.IFxx))
    b.add_joint("rear_frame", mb.Free(), "ground", "rear_frame")
    b.add_joint("rear_axle", mb.Revolute(axis=(0.0, 1.0, 0.0)), "rear_frame", "rear_wheel")
    b.add_joint("steer", mb.Revolute(axis=(math.sin(lam), 0.0, -math.cos(lam))), "rear_frame", "front_frame",
                placement=(None, S - np.array([0.0, 0.0, rR])))
    b.add_joint("front_axle", mb.Revolute(axis=(0.0, 1.0, 0.0)), "front_frame", "front_wheel",
                placement=(None, (w - S[0], 0.0, rF)))
    b.add_constraint(mb.RollingDisc("rear_contact", "rear_wheel", radius=rR, axis=(0.0, 1.0, 0.0)))
    b.add_constraint(mb.RollingDisc("front_contact", "front_wheel", radius=rF, axis=(0.0, 1.0, 0.0)))
    return b.build()


def upright_state(model, speed, roll_rate=0.0, steer_rate=0.0, rear_wheel_angle=0.0):
    """The reference configuration of :func:`whipple_model` (upright, steer zero, rear contact at the origin)
    and the velocities of straight running at forward ``speed`` with the lean rate ``roll_rate`` and the
    steer rate ``steer_rate`` (the other speeds follow from the no-slip rows): ``(q0, v0)``."""
    from multibody.analysis.linearize import consistent_velocities

    q0 = model.neutral()
    fr = model.joint("rear_frame").q_slice
    rR = model.constraint("rear_contact").radius
    q0[fr.start + 2] = rR
    q0[model.joint("rear_axle").q_slice] = rear_wheel_angle
    v0 = consistent_velocities(model, q0, {"rear_frame.wx": roll_rate, "steer.angle": steer_rate,
                                           "rear_axle.angle": speed / rR})
    return q0, v0


#: the independent coordinates and speeds of the generic model's linearization: lean (roll of the rear frame),
#: heading and position of the rear frame, steer and the wheel angles; speeds: lean rate, steer rate, rear wheel
LINEAR_COORDINATES = ("rear_frame.wx", "rear_frame.wz", "rear_frame.vx", "rear_frame.vy", "steer.angle",
                      "rear_axle.angle", "front_axle.angle")
LINEAR_SPEEDS = ("rear_frame.wx", "steer.angle", "rear_axle.angle")
LEAN_STEER = ("rear_frame.wx", "steer.angle", "d(rear_frame.wx)", "d(steer.angle)")


def model_linearization(model, speed, inputs=()):
    """The generic model linearized about upright straight running at ``speed`` (``multibody.linearize``, exact
    derivatives), in the independent coordinates :data:`LINEAR_COORDINATES` and speeds :data:`LINEAR_SPEEDS`;
    pitch, height and the other speeds are eliminated through the rolling constraints."""
    from multibody.analysis.linearize import linearize

    if not math.isfinite(float(speed)):
        raise ModelError(f"the forward speed must be finite, got {speed}", element="speed")
    q0, v0 = upright_state(model, float(speed))
    return linearize(model, q0, v0, coordinates=LINEAR_COORDINATES, speeds=LINEAR_SPEEDS, inputs=inputs)


def model_eigenvalues(params, speeds, validate=True):
    """Eigenvalues of the lean and steer motion at each speed from the generic model (:func:`whipple_model`)
    linearized by the library (seed 003 §7: the check of a general multibody code against Table 2): the 4x4
    lean/steer block of the linearization, whose other states (heading, position, wheel angles, forward speed)
    are cyclic or decoupled. Returns an :class:`EigenSweep` labelled like :func:`eigenvalues`."""
    v = np.atleast_1d(np.asarray(speeds, dtype=float)).reshape(-1)
    if not np.all(np.isfinite(v)):
        raise ModelError(f"model_eigenvalues: speeds must be finite, got {v[~np.isfinite(v)][:3].tolist()}",
                         element="speeds")
    model = whipple_model(params, validate)
    out = np.array([model_linearization(model, s).select(LEAN_STEER).eigenvalues() for s in v])
    return EigenSweep(speeds=v, values=label_modes(out.reshape(-1, 4)))


def model_matrices(params=None, validate=True):
    """M, C1, K0, K2 of eq. (5.3) from the generic model: its linearization with the lean torque (a moment about
    the rear frame's x axis) and the steer torque as inputs has, in the lean/steer block, ``A = [[0, E],
    [−M⁻¹K(v), −M⁻¹C(v)]]`` and ``B = [0; M⁻¹]``; at v = 0 and v = 1 m/s this gives M = (B₂)⁻¹,
    g K0 = K(0), K2 = K(1) − K(0) and C1 = C(1) (K and C are polynomials in v, and the derivatives exact)."""
    p = coerce_parameters(params if params is not None else benchmark_parameters(), validate)
    model = whipple_model(p, validate=False)
    lins = [model_linearization(model, v, inputs=("rear_frame.wx", "steer.angle")).select(LEAN_STEER)
            for v in (0.0, 1.0)]
    M = np.linalg.inv(lins[0].B[2:])
    K = [-M @ lin.A[2:, :2] for lin in lins]
    C = [-M @ lin.A[2:, 2:] for lin in lins]
    return M, C[1] - C[0], K[0] / p.g, K[1] - K[0]


def model_critical_speeds(params, bracket_weave=(3.0, 5.5), bracket_capsize=(5.5, 7.0), validate=True):
    """Weave and capsize speeds of the generic model: where the weave pair's and the capsize root's real parts
    cross zero (Brent's method on :func:`model_eigenvalues`, to 1e-12 m/s)."""
    from scipy.optimize import brentq

    def weave(s):
        return float(model_eigenvalues(params, [s], validate).weave[0, 0].real)

    def capsize(s):
        return float(model_eigenvalues(params, [s], validate).capsize[0].real)

    return (brentq(weave, *bracket_weave, xtol=1e-13, rtol=1e-15),
            brentq(capsize, *bracket_capsize, xtol=1e-13, rtol=1e-15))
