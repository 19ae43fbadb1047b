"""Runs of the nonlinear bicycle: :func:`simulate_nonlinear`, the bicycle's outputs along a run, and the
IFToMM uncontrolled-bicycle maneuvers M1–M3."""
from __future__ import annotations

import numpy as np

from multibody.errors import ModelError
from multibody.systems.bicycle.model import upright_state, whipple_model


#: the IFToMM uncontrolled-bicycle maneuvers: forward speed (m/s) and initial lean rate (rad/s), 20 s
IFTOMM_MANEUVERS = {"M1": (4.0, 0.05), "M2": (4.6, 0.5), "M3": (8.0, 0.05)}


def simulate_nonlinear(params=None, speed=4.6, roll_rate=0.5, t_end=5.0, steer_rate=0.0, n_out=501,
                       method="DOP853", rtol=1e-10, atol=1e-10, h=None, validate=True, **options):
    """The nonlinear generic bicycle (:func:`whipple_model`) from upright straight running at ``speed`` with
    the lean rate ``roll_rate`` (seed 003 §8, Fig. 4: 4.6 m/s and 0.5 rad/s), in tree coordinates with the
    rolling constraints (``formulation="constrained"``: projection onto the constraints after every step).
    Returns the :class:`~multibody.Result` with series ``forward_speed`` (rR × the rear wheel's rate), ``lean``,
    ``steer``, ``yaw`` (the rear frame's heading from x, positive to the left) and the contact points
    ``rear_contact_xy`` and ``front_contact_xy`` (n, 2)."""
    import multibody as mb

    model = whipple_model(params, validate)
    q0, v0 = upright_state(model, speed, roll_rate=roll_rate, steer_rate=steer_rate)
    kw = dict(method=method, n_out=n_out, **options)
    kw.update(dict(h=h) if h is not None else dict(rtol=rtol, atol=atol))
    res = mb.simulate(model, q0, v0, t_end, formulation="constrained", **kw)
    res.series.update(bicycle_outputs(model, res.q, res.v))
    return res


def bicycle_outputs(model, Q, V):
    """Along samples of the generic model: the forward speed (rR × the rear wheel's rate), the lean φ and the
    heading ψ of the rear frame as 3-1-2 Euler angles (R = R_z(ψ) R_x(φ) R_y(θ): φ = arcsin R₃₂, positive to
    the right as in the paper; ψ = atan2(−R₁₂, R₂₂), positive to the left), the steer angle and the two
    contact points (x, y) on the ground."""
    import multibody as mb

    R = np.array([mb.forward_kinematics(model, q).R[model.body_index("rear_frame")] for q in Q])
    out = {"forward_speed": model.constraint("rear_contact").radius * V[:, model.joint("rear_axle").v_slice.start],
           "lean": np.arcsin(np.clip(R[:, 2, 1], -1.0, 1.0)), "yaw": np.arctan2(-R[:, 0, 1], R[:, 1, 1]),
           "steer": Q[:, model.joint("steer").q_slice.start]}
    n = np.array([0.0, 0.0, 1.0])
    for name, body, contact in (("rear_contact_xy", "rear_wheel", "rear_contact"),
                                ("front_contact_xy", "front_wheel", "front_contact")):
        r = model.constraint(contact).radius
        i = model.body_index(body)
        pts = []
        for q in Q:
            K = mb.forward_kinematics(model, q)
            a = K.R[i][:, 1]                          # the axle
            u = n - (a @ n) * a                       # contact point: C − r (n − (a·n) a)/|…| (RollingDisc)
            pts.append((K.p[i] - r * u / np.linalg.norm(u))[:2])
        out[name] = np.array(pts)
    return out


def iftomm_maneuver(name, params=None, t_end=20.0, method="DOP853", rtol=1e-9, atol=1e-9, h=None, n_out=2001):
    """The IFToMM uncontrolled-bicycle benchmark maneuver ``name`` (M1: 4 m/s, lean rate 0.05 rad/s; M2: 4.6,
    0.5; M3: 8, 0.05; 20 s) on the benchmark bicycle. Returns a dict: ``energy_variation_percent`` =
    100 (max E − min E)/E0, ``cpu_seconds``, the final ``roll``, ``steer``, ``forward_speed``, ``yaw``, the final
    rear contact point, the number of steps."""
    key = str(name).upper()
    if key not in IFTOMM_MANEUVERS:
        raise ModelError(f"unknown maneuver {name!r}; expected one of {', '.join(IFTOMM_MANEUVERS)}",
                         element="maneuver")
    speed, roll_rate = IFTOMM_MANEUVERS[key]
    res = simulate_nonlinear(params, speed, roll_rate, t_end, method=method, rtol=rtol, atol=atol, h=h, n_out=n_out)
    E = res.energy_total
    s = res.series
    return dict(maneuver=key, speed=speed, roll_rate=roll_rate, t_end=float(res.t[-1]), method=method,
                energy_variation_percent=float(100.0 * np.ptp(E) / abs(E[0])),
                cpu_seconds=float(res.info["cpu_seconds"]), steps=int(res.info["steps"]),
                roll=float(s["lean"][-1]), steer=float(s["steer"][-1]), forward_speed=float(s["forward_speed"][-1]),
                yaw=float(s["yaw"][-1]), rear_contact=s["rear_contact_xy"][-1].tolist())
