"""Pendulums: the simple pendulum, the seed 001 triple physical pendulum, spatial chains, and Kapitza's
pendulum on a vertically shaken support (a moving base, seed 001 §3.1–3.2).

Body frames sit at the inboard joint of each link (so every tree joint's placement is simply the
position of the joint in the parent's frame); links hang or extend from there.
"""
import numpy as np
from scipy.special import ellipk

from multibody.model import BaseMotion, ModelBuilder, Placement, Revolute, Spherical, Universal


def simple_pendulum(length=1.0, mass=1.0, g=9.81):
    """A point mass ``mass`` on a massless rod of ``length`` hinged at the origin, swinging in the xz-plane.

    One revolute joint ``"hinge"`` about the y axis; the bob hangs at ``(0, 0, −length)`` at θ = 0 (stable
    equilibrium), gravity ``(0, 0, −g)``. The potential energy is ``−m g L cos θ`` (datum at the pivot).
    """
    b = ModelBuilder(gravity=(0.0, 0.0, -g), name="simple pendulum")
    b.add_body("bob", mass=mass, com=(0.0, 0.0, -length), inertia=np.zeros((3, 3)))
    b.add_joint("hinge", Revolute(axis=(0.0, 1.0, 0.0)), parent="ground", child="bob", placement=Placement())
    return b.build()


def kapitza_pendulum(length=0.5, mass=1.0, amplitude=0.02, omega=2 * np.pi * 60.0, g=9.81):
    """An inverted pendulum whose support is shaken vertically, z_0(t) = amplitude · cos(omega t) (Kapitza
    1951): a point mass ``mass`` on a massless rod of ``length``, hinge ``"hinge"`` about the y axis, the bob
    at ``(0, 0, +length)`` at θ = 0 (upright). The support is body 0 with a prescribed motion (seed 001
    §3.1–3.2, ``BaseMotion.harmonic``), so θ obeys θ̈ = (g − a ω² cos ωt) sin θ / l. Averaged over the fast
    shaking, the upright position is stable when a² ω² > 2 g l (Kapitza's criterion; Landau & Lifshitz,
    *Mechanics*, §30); ``amplitude=0`` gives the plain inverted pendulum, which falls."""
    b = ModelBuilder(gravity=(0.0, 0.0, -g), name="Kapitza pendulum",
                     base_motion=BaseMotion.harmonic((0.0, 0.0, 1.0), amplitude, omega))
    b.add_body("bob", mass=mass, com=(0.0, 0.0, length), inertia=np.zeros((3, 3)))
    b.add_joint("hinge", Revolute(axis=(0.0, 1.0, 0.0)), parent="ground", child="bob", placement=Placement())
    return b.build()


def simple_pendulum_period(theta0, length=1.0, g=9.81):
    """Exact period of the simple pendulum of amplitude ``theta0`` (rad):
    ``T = 4 sqrt(L/g) K(k)``, ``k = sin(θ0/2)``, K the complete elliptic integral of the first kind
    (Whittaker, *Analytical Dynamics*, §44). scipy's ``ellipk`` takes the parameter ``m = k²``."""
    k = np.sin(0.5 * theta0)
    return 4.0 * np.sqrt(length / g) * ellipk(k * k)


# --------------------------------------------------------------------------------------------------------
# seed 001 §3.5 / reference seed001-part2.md §9.2: the triple physical pendulum of the separate-bodies method

#: the parameters of the book's ``init.m`` (reference seed001-part2.md §9.2)
SEED001_TRIPLE = {
    "n": 3,
    "mass": 1.0,  # M_k = diag(m, m, J_z) = diag(1, 1, 1)
    "J": 1.0,  # about C_k
    "half_length": 1.0,  # c{k,k} = [-1; 0; 0], c{k,k+1} = [+1; 0; 0]: rods of length 2, C_k at mid-length
    "weight": 1.0,  # Q{k} = [0; -1; 0]: a unit weight force along -y on every body
    "q0_absolute": (0.0, 0.0, 0.0),  # all rods horizontal along +x
    "v0_absolute": (0.0, 0.0, 0.0),  # released from rest
}


def triple_pendulum_seed001():
    """The planar triple physical pendulum of seed 001 §3.5, Fig. 3.20 (reference seed001-part2.md §9.2).

    Three rods in the xy-plane hinged about z: body k has mass m = 1, moment of inertia J_z = 1 about its
    centre C_k, length 2 with C_k at mid-length; joint 1 is the fixed pivot A at the origin, joint k+1 the
    outer end of rod k. A unit weight acts on every body along −y, i.e. gravity ``(0, −1, 0)`` with m = 1
    (m g = 1). The book's in-plane model has no out-of-plane inertia; the bodies here carry
    ``diag(0.5, 0.5, 1)`` about C_k (a planar lamina, I_zz = I_xx + I_yy), which a motion about z never
    excites.

    Body frames are at the inboard joints, rod along +x, so the centre is at ``(1, 0, 0)``. Our
    coordinates are the **relative** joint angles θ_k (rotation of rod k relative to rod k−1); the book
    uses **absolute** angles q_k from the fixed x axis: q_k = θ_1 + ... + θ_k. Convert with
    :func:`seed001_absolute_to_relative` / :func:`seed001_relative_to_absolute` (the same map applies to
    angular velocities). With the potential datum at the pivot, T + П = 0 along the motion from rest at
    q = 0, and П = 5 sin q1 + 3 sin q2 + sin q3 (reference §9.3, ``start.m``).
    """
    p = SEED001_TRIPLE
    b = ModelBuilder(gravity=(0.0, -p["weight"] / p["mass"], 0.0), name="seed 001 triple pendulum")
    L = 2.0 * p["half_length"]
    inertia = np.diag([0.5 * p["J"], 0.5 * p["J"], p["J"]])
    parent = "ground"
    for k in range(1, p["n"] + 1):
        body = f"rod{k}"
        b.add_body(body, mass=p["mass"], com=(p["half_length"], 0.0, 0.0), inertia=inertia)
        b.add_joint(f"joint{k}", Revolute(axis=(0.0, 0.0, 1.0)), parent=parent, child=body,
                    placement=Placement(translation=(0.0, 0.0, 0.0) if k == 1 else (L, 0.0, 0.0)))
        parent = body
    return b.build()


def seed001_absolute_to_relative(q_abs):
    """Book's absolute angles (q_1, q_2, q_3) -> our relative joint angles θ_k = q_k − q_{k−1}.
    Works on the last axis, so it converts time histories and angular velocities too."""
    q_abs = np.asarray(q_abs, dtype=float)
    rel = q_abs.copy()
    rel[..., 1:] = q_abs[..., 1:] - q_abs[..., :-1]
    return rel


def seed001_relative_to_absolute(theta):
    """Our relative joint angles -> the book's absolute angles q_k = θ_1 + ... + θ_k (last axis)."""
    return np.cumsum(np.asarray(theta, dtype=float), axis=-1)


def seed001_energy(q_abs, v_abs):
    """The book's energies in absolute angles (reference seed001-part2.md §9.3, ``start.m``):
    ``E_k = ½(v1² + v2² + v3²) + ½(q̇1² + q̇2² + q̇3²)`` with the squared speeds of the centres
    ``v1² = q̇1²``, ``v2² = 4q̇1² + 4cos(q1 − q2) q̇1 q̇2 + q̇2²``,
    ``v3² = (2cos q1 q̇1 + 2cos q2 q̇2 + cos q3 q̇3)² + (2sin q1 q̇1 + 2sin q2 q̇2 + sin q3 q̇3)²``, and
    ``E_p = 5 sin q1 + 3 sin q2 + sin q3``. Returns ``(E_k, E_p)``; works on the last axis."""
    q = np.asarray(q_abs, dtype=float)
    w = np.asarray(v_abs, dtype=float)
    q1, q2, q3 = q[..., 0], q[..., 1], q[..., 2]
    w1, w2, w3 = w[..., 0], w[..., 1], w[..., 2]
    v1 = w1 ** 2
    v2 = 4 * w1 ** 2 + 4 * np.cos(q1 - q2) * w1 * w2 + w2 ** 2
    v3 = ((2 * np.cos(q1) * w1 + 2 * np.cos(q2) * w2 + np.cos(q3) * w3) ** 2
          + (2 * np.sin(q1) * w1 + 2 * np.sin(q2) * w2 + np.sin(q3) * w3) ** 2)
    ek = 0.5 * (v1 + v2 + v3) + 0.5 * (w1 ** 2 + w2 ** 2 + w3 ** 2)
    ep = 5 * np.sin(q1) + 3 * np.sin(q2) + np.sin(q3)
    return ek, ep


# --------------------------------------------------------------------------------------------------------
def spatial_chain(n, joint="spherical", length=1.0, mass=1.0, radius=0.05, g=9.81, damping=0.0):
    """A chain of ``n`` identical uniform rods hanging from the origin along −z (the n-link pendulum).

    ``joint``: ``"spherical"`` (quaternion, 3 DOF per link), ``"universal"`` (axes x then y) or
    ``"revolute"`` (about y; a planar chain). Each rod: ``length``, ``mass``, solid cylinder of ``radius``
    (I_axial = m r²/2, I_transverse = m (3 r² + L²)/12 about the centre). Body frames at the inboard
    joints; centre at ``(0, 0, −L/2)``; the next joint at ``(0, 0, −L)``. Gravity ``(0, 0, −g)``.
    ``damping`` adds a viscous damper on every joint velocity coordinate.
    """
    if n < 1:
        raise ValueError(f"spatial_chain: n must be >= 1, got {n}")
    makers = {"spherical": Spherical, "universal": lambda: Universal((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
              "revolute": lambda: Revolute(axis=(0.0, 1.0, 0.0))}
    if joint not in makers:
        raise ValueError(f"spatial_chain: joint must be one of {sorted(makers)}, got {joint!r}")
    b = ModelBuilder(gravity=(0.0, 0.0, -g), name=f"{n}-link {joint} chain")
    it = mass * (3 * radius ** 2 + length ** 2) / 12.0
    ia = 0.5 * mass * radius ** 2
    parent = "ground"
    for k in range(1, n + 1):
        body = f"link{k}"
        b.add_body(body, mass=mass, com=(0.0, 0.0, -0.5 * length), inertia=np.diag([it, it, ia]))
        b.add_joint(f"joint{k}", makers[joint](), parent=parent, child=body,
                    placement=Placement(translation=(0.0, 0.0, 0.0) if k == 1 else (0.0, 0.0, -length)),
                    damping=damping if damping else None)
        parent = body
    return b.build()


def absolute_angles(theta):
    """Alias of :func:`seed001_relative_to_absolute`: the book's absolute angles from our joint angles."""
    return seed001_relative_to_absolute(theta)


def simulate_triple_pendulum_seed001(t_end=10.0, n_out=1001, method="DOP853", rtol=1e-12, atol=1e-12, **kw):
    """Release the seed 001 triple pendulum from rest with all rods horizontal (reference seed001-part2.md
    §9.2) and integrate to ``t_end``; returns the ``Result`` (joint angles are relative: convert with
    :func:`absolute_angles`). The book integrates with ``ode113``; DOP853 at rtol = 1e-12 reproduces the
    reference values of §9.2 to their 6 printed digits."""
    from multibody.simulation import simulate

    model = triple_pendulum_seed001()
    q0 = seed001_absolute_to_relative(SEED001_TRIPLE["q0_absolute"])
    v0 = seed001_absolute_to_relative(SEED001_TRIPLE["v0_absolute"])
    return simulate(model, q0, v0, t_end, method=method, rtol=rtol, atol=atol, n_out=n_out, **kw)
