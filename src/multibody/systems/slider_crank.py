"""Slider-crank mechanism of seed 001 §2.6.2 (Figs. 2.9, 2.10) in Cartesian coordinates.

Three planar bodies — crank OA (1), connecting rod AB (2), slider (3) — and the ground:
8 constraint equations (eq. 2.48: pins O, A, B with two point–line rows each, the slider point on the
guide line, the slider's rotation locked), 9 coordinates, 1 degree of freedom, the 17×17 system of
eq. 2.49.  The book gives no numbers; the parameters below are ours (a small single-cylinder engine):

=========================  =====================================================
crank OA                   length r = 0.05 m, mass 1.0 kg, uniform bar (J = m r²/12)
connecting rod AB          length l = 0.20 m, mass 0.5 kg, uniform bar (J = m l²/12)
slider (piston)            mass 0.3 kg, J = 1e-4 kg·m² (its rotation is locked)
guide                      the x axis through the crank pivot O
gravity                    9.81 m/s² along −y
initial state              crank angle π/3, crank rate 30 rad/s, consistent positions/velocities
=========================  =====================================================

The same mechanism as a tree + cut joint (crank and rod on revolute joints, slider on a prismatic
joint, the pin B cut) is built by :func:`tree_model` with the builder when the model layer is present.
"""
from __future__ import annotations

import math

import numpy as np

from ..formulations.cartesian import CartesianSystem, PlanarPrismatic, PlanarRevolute

PARAMS = dict(r=0.05, l=0.20, m1=1.0, m2=0.5, m3=0.3, J3=1e-4, g=9.81, phi0=math.pi / 3, omega0=30.0)


def _positions(p, phi):
    r, l = p["r"], p["l"]
    A = np.array([r * math.cos(phi), r * math.sin(phi)])
    xb = r * math.cos(phi) + math.sqrt(l * l - (r * math.sin(phi)) ** 2)
    B = np.array([xb, 0.0])
    phi2 = math.atan2(B[1] - A[1], B[0] - A[0])
    return A, B, phi2


def build(params=None, solver="auto"):
    """The Cartesian slider-crank (seed 001 §2.6.2) with consistent initial positions and velocities."""
    p = dict(PARAMS)
    p.update(params or {})
    r, l = p["r"], p["l"]
    s = CartesianSystem(dim=2, gravity=(0.0, -p["g"]), solver=solver)
    A, B, phi2 = _positions(p, p["phi0"])
    s.add_body("crank", p["m1"], p["m1"] * r * r / 12, position=(A[0] / 2, A[1] / 2, p["phi0"]))
    mid = (A + B) / 2
    s.add_body("rod", p["m2"], p["m2"] * l * l / 12, position=(mid[0], mid[1], phi2))
    s.add_body("slider", p["m3"], p["J3"], position=(B[0], B[1], 0.0))
    s.add_joint(PlanarRevolute("O", "ground", "crank", (0.0, 0.0), (-r / 2, 0.0)))        # rows 1, 2
    s.add_joint(PlanarRevolute("A", "crank", "rod", (r / 2, 0.0), (-l / 2, 0.0)))         # rows 3, 4
    s.add_joint(PlanarRevolute("B", "rod", "slider", (l / 2, 0.0), (0.0, 0.0)))           # rows 5, 6
    s.add_joint(PlanarPrismatic("guide", "ground", "slider", (0.0, 0.0), (1.0, 0.0), (0.0, 0.0)))  # rows 7, 8
    s.finalize()
    v = velocities(s, s.x0, p["omega0"])
    for k, b in enumerate(s.bodies):
        b.v0 = v[3 * k: 3 * k + 3]
    return s


def velocities(system, x, omega):
    """Velocities with crank rate ``omega`` that satisfy Q V = 0 (solve 8 + 1 linear equations)."""
    Q = system.constraint_jacobian(x)
    Q = Q if isinstance(Q, np.ndarray) else Q.toarray()
    A = np.vstack([Q, np.eye(system.nv)[2]])
    rhs = np.zeros(A.shape[0])
    rhs[-1] = omega
    return np.linalg.solve(A, rhs)


def crank_angle(result):
    """Crank angle history (rad, unwrapped) of a Cartesian result."""
    return result.x[:, 2]


def simulate(t_end=None, turns=10, params=None, rtol=1e-12, atol=1e-12, n_out=401, project=True, solver="auto"):
    """Run the mechanism for ``turns`` crank revolutions (estimated from the initial rate) or ``t_end``."""
    s = build(params, solver=solver)
    if t_end is None:
        p = dict(PARAMS)
        p.update(params or {})
        t_end = turns * 2 * math.pi / p["omega0"] * 1.15
    return s.simulate(t_end, rtol=rtol, atol=atol, n_out=n_out, project=project)


def reactions_over_cycle(result):
    """Reactions at every joint over the output samples: dict joint -> (n, 3) on its second body.

    Each row is ``(F_x, F_y, M_z)`` = ``Q_jᵀ λ`` (seed 001, eqs. 2.26, 2.47) acting on body j of the
    joint (crank for O, rod for A, slider for B and the guide).
    """
    out = {}
    for k in range(len(result.t)):
        rx = result.reactions(k)
        for name, pairs in rx.items():
            out.setdefault(name, []).append(pairs[-1][1])
    return {k: np.array(v) for k, v in out.items()}


def plot_reactions(result, path=None, one_cycle=True):
    """Plot the joint reaction forces over a crank cycle (matplotlib); returns the figure."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    phi = crank_angle(result)
    R = reactions_over_cycle(result)
    sel = slice(None)
    if one_cycle:
        k1 = np.searchsorted(phi, phi[0] + 2 * math.pi)
        sel = slice(0, max(k1, 2))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for ax, (name, arr) in zip(axes.ravel(), R.items()):
        ax.plot(np.degrees(phi[sel]), arr[sel, 0], label="F_x")
        ax.plot(np.degrees(phi[sel]), arr[sel, 1], label="F_y")
        ax.set_title(f"joint {name}: reaction on its body j (N)")
        ax.grid(True)
        ax.legend()
    for ax in axes[1]:
        ax.set_xlabel("crank angle (deg)")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
    return fig


def tree_model(params=None):
    """The same mechanism built with the builder: crank and rod on revolute joints (axis z), the slider on
    a prismatic joint (axis x) from the ground, and the pin B as a cut joint closing the loop (seed 001
    §3.6).  Inertias: the planar J about z; a thin-bar axial inertia of 1e-9 kg·m² keeps the tensors
    positive definite and does not enter the planar motion.  Returns ``(model, q0, v0)`` with the same
    initial state as :func:`build`."""
    import multibody as mb
    p = dict(PARAMS)
    p.update(params or {})
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
    b.add_joint("B", mb.Revolute(axis=z), "rod", "slider", placement=(np.eye(3), (l, 0, 0)), cut=True)
    model = b.build()
    s = build(params)
    A, B, phi2 = _positions(p, p["phi0"])
    V = s.v0
    q0 = np.zeros(model.nq)
    v0 = np.zeros(model.nv)
    for name, qv, vv in (("O", p["phi0"], p["omega0"]), ("A", phi2 - p["phi0"], V[5] - p["omega0"]),
                         ("guide", B[0], V[6])):
        j = model.joint(name)
        q0[j.q_slice] = qv
        v0[j.v_slice] = vv
    return model, q0, v0
