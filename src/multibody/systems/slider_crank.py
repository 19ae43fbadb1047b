"""Slider-crank mechanism of seed 001 §2.6.2 (Figs. 2.9, 2.10), built once with the builder.

Three bodies — crank OA, connecting rod AB, slider (piston) — and the ground: the crank and the rod on
revolute joints O and A (axis z), the slider on a prismatic joint along the guide (the x axis through O), and
the pin B between rod and slider closing the loop (a cut joint). Simulated in Cartesian coordinates
(``formulation="cartesian"``; the model is planar, so each body has the book's three coordinates) it is the
book's system: 9 coordinates, 8 constraint equations (eq. 2.48: pins O, A, B with two point–line rows each,
the slider point on the guide line, the slider's rotation locked), 1 degree of freedom, the 17×17 system of
eq. 2.49. In tree coordinates (``formulation="constrained"``) it is 3 joint coordinates and the 5 rows of the
cut pin (seed 001 §3.6). The book gives no numbers; the parameters are ours (a small single-cylinder engine):

=========================  =====================================================
crank OA                   length r = 0.05 m, mass 1.0 kg, uniform bar (J = m r²/12)
connecting rod AB          length l = 0.20 m, mass 0.5 kg, uniform bar (J = m l²/12)
slider (piston)            mass 0.3 kg, J = 1e-4 kg·m² (its rotation is locked)
guide                      the x axis through the crank pivot O
gravity                    9.81 m/s² along −y
initial state              crank angle π/3, crank rate 30 rad/s, consistent positions and velocities
=========================  =====================================================

The thin-bar inertias about the bars' own axes (1e-9 kg·m²) keep the tensors positive definite and do not
enter the planar motion.
"""
import math

import numpy as np

import multibody as mb

PARAMS = dict(r=0.05, l=0.20, m1=1.0, m2=0.5, m3=0.3, J3=1e-4, g=9.81, phi0=math.pi / 3, omega0=30.0)


def _params(params):
    p = dict(PARAMS)
    p.update(params or {})
    return p


def model(params=None):
    """The mechanism (see the module docstring) and its initial state: ``(model, q0, v0)`` with q = (crank
    angle φ, rod angle relative to the crank, slider position along the guide), consistent positions (closed
    form) and velocities (the loop's velocity equation) for crank angle ``phi0`` and rate ``omega0``."""
    p = _params(params)
    r, l = p["r"], p["l"]
    b = mb.ModelBuilder(gravity=(0.0, -p["g"], 0.0), name="slider-crank")
    J1, J2 = p["m1"] * r * r / 12, p["m2"] * l * l / 12
    b.add_body("crank", p["m1"], com=(r / 2, 0, 0), inertia=[1e-9, J1, J1])
    b.add_body("rod", p["m2"], com=(l / 2, 0, 0), inertia=[1e-9, J2, J2])
    b.add_body("slider", p["m3"], com=(0, 0, 0), inertia=[p["J3"], p["J3"], p["J3"]])
    z = (0.0, 0.0, 1.0)
    b.add_joint("O", mb.Revolute(axis=z), "ground", "crank")
    b.add_joint("A", mb.Revolute(axis=z), "crank", "rod", placement=(np.eye(3), (r, 0, 0)))
    b.add_joint("guide", mb.Prismatic(axis=(1.0, 0, 0)), "ground", "slider")
    b.add_joint("B", mb.Revolute(axis=z), "rod", "slider", placement=(np.eye(3), (l, 0, 0)),
                child_placement=mb.Placement(), cut=True)
    m = b.build()
    phi, w = p["phi0"], p["omega0"]
    # positions: A = r e(φ), B = (xB, 0) with |B − A| = l
    s, c = math.sin(phi), math.cos(phi)
    root = math.sqrt(l * l - (r * s) ** 2)
    xB = r * c + root
    psi = math.atan2(-r * s, xB - r * c)          # rod angle (absolute)
    # velocities: ẋB = d/dt (r cos φ + √(l² − r² sin² φ)), ψ̇ from the rod's y component r sin φ + l sin ψ = 0
    xBd = -r * s * w - (r * r * s * c * w) / root
    psid = -r * c * w / (l * math.cos(psi))
    q0, v0 = np.zeros(m.nq), np.zeros(m.nv)
    for name, qv, vv in (("O", phi, w), ("A", psi - phi, psid - w), ("guide", xB, xBd)):
        j = m.joint(name)
        q0[j.q_slice] = qv
        v0[j.v_slice] = vv
    return m, q0, v0


def simulate_turns(t_end=None, turns=10, params=None, formulation="cartesian", rtol=1e-12, atol=1e-12, n_out=401,
             project=True, **options):
    """Run the mechanism for ``turns`` crank revolutions (estimated from the initial rate) or ``t_end``;
    ``project=False`` keeps the acceleration-level constraints only (no projection after the steps)."""
    m, q0, v0 = model(params)
    p = _params(params)
    if t_end is None:
        t_end = turns * 2 * math.pi / p["omega0"] * 1.15
    if not project:
        options.setdefault("stabilization", "none")
    return mb.simulate(m, q0, v0, t_end, formulation=formulation, rtol=rtol, atol=atol, n_out=n_out, **options)


def crank_angle(result):
    """Crank angle history (rad, continuous) of a result."""
    return result.q[:, result.model.joint("O").q_slice.start]


def reactions_over_cycle(result):
    """The reaction of every joint on its child body (crank for O, rod for A, slider for B and the guide) over
    the samples of a result of any formulation: dict joint -> (n, 3) rows ``(F_x, F_y, M_z)``, the force in
    ground axes and the moment about the joint's axis (``Result.reactions`` in the joint frames, turned to the
    ground axes); from the Cartesian formulation they are its ``Q_jᵀλ`` (seed 001, eqs. 2.26, 2.47)."""
    model = result.model
    out = {}
    for name in ("O", "A", "B", "guide"):
        j = model.joint(name)
        W = np.asarray(result.reactions[name])
        rows = np.zeros((len(result.t), 3))
        Pb = model.joint_frames(j)[1]
        for k in range(len(result.t)):
            R = mb.forward_kinematics(model, result.q[k], frames="kernel").R[j.child] @ Pb.rotation
            rows[k, :2] = (R @ W[k, 3:])[:2]
            rows[k, 2] = (R @ W[k, :3])[2]
        out[name] = rows
    return out
