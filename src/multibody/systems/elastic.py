"""Reference models of elastic beams (rigid finite elements, seed 001 introduction; ``docs/elastic.md``).

* :func:`cantilever` — a planar cantilever (bending in the x–z plane, inextensible) with an optional tip load: the
  tip deflection PL³/3EI, the elastica, the bending frequencies (βL)² √(EI/ρA L⁴);
* :func:`flexible_pendulum` — a beam pinned at its root, released from the horizontal under gravity (L = 2 m,
  EI = 1 N·m², ρA = 1 kg/m: Exudyn's flexible pendulum, whose ANCF cable model ``bench/exudyn_beams.py`` builds):
  a large-deflection dynamics benchmark;
* :func:`spin_up_beam` and :func:`spin_up_angle` — Kane, Ryan & Banerjee's spin-up beam (J. Guidance 10 (1987)
  139–151): a cantilever on a hub whose angle follows θ(t) = (ω_s/T)[t²/2 + (T/2π)²(cos 2πt/T − 1)] for t < T,
  then ω_s (t − T/2); L = 10 m, ρA = 1.2 kg/m, EI = 14 000 N·m², T = 15 s. A linear model of the beam in the
  rotating frame without the centrifugal (geometric) stiffening diverges when ω_s exceeds the first bending
  frequency (3.8 rad/s); the rigid finite elements carry the stiffening in their joints' geometry and stay
  bounded. :func:`rotating_frame_deflection` gives the tip's deflection in the hub frame.

>>> from multibody.systems import elastic
>>> m = elastic.cantilever(8, load=1.0)
>>> m.nv, m.loads[0].frame
(8, 'rod.tip')
"""
import math

import numpy as np

import multibody as mb

__all__ = ["cantilever", "flexible_pendulum", "spin_up_beam", "spin_up_angle", "rotating_frame_deflection",
           "tip_positions", "PENDULUM", "SPIN_UP"]

#: the flexible pendulum's parameters (L, EI, ρA, g)
PENDULUM = dict(length=2.0, EI=1.0, mass_per_length=1.0, g=9.81)
#: the spin-up beam's parameters (Kane, Ryan & Banerjee 1987)
SPIN_UP = dict(length=10.0, EI=14000.0, mass_per_length=1.2, T=15.0)


def cantilever(segments, length=1.0, EI=1.0, mass_per_length=1.0, load=None, reference="world", damping=None):
    """A planar cantilever ``"rod"`` along x, bending in the x–z plane (EI about y), inextensible, without gravity;
    ``load``: a tip force P downward (−z) in ``reference`` axes."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0), name=f"cantilever {segments}")
    b.add_beam("rod", "ground", length=length, segments=segments, EI=(EI, None), GJ=None,
               mass_per_length=mass_per_length, damping=damping)
    if load is not None:
        b.add_load("tip", "rod.tip", force=(0.0, 0.0, -float(load)), reference=reference)
    return b.build()


def flexible_pendulum(segments, length=PENDULUM["length"], EI=PENDULUM["EI"],
                      mass_per_length=PENDULUM["mass_per_length"], g=PENDULUM["g"]):
    """A beam ``"pendulum"`` pinned at the origin (a hinge about y), straight along +x at q = 0 (horizontal), under
    gravity (0, 0, −g); bending in the x–z plane, inextensible. Release it from rest at q = 0."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -g), name=f"flexible pendulum {segments}")
    b.add_beam("pendulum", "ground", length=length, segments=segments, EI=(EI, None), GJ=None,
               mass_per_length=mass_per_length, root=mb.Revolute(axis=(0.0, 1.0, 0.0)))
    return b.build()


def spin_up_angle(omega_s, T=SPIN_UP["T"]):
    """The hub's prescribed motion f(t) -> (θ, θ̇, θ̈) of the spin-up manoeuvre (module docstring)."""
    def f(t):
        if t < T:
            c = 2.0 * math.pi / T
            k = T / (2.0 * math.pi)
            return (omega_s / T * (0.5 * t * t + k * k * (math.cos(c * t) - 1.0)),
                    omega_s / T * (t - k * math.sin(c * t)), omega_s / T * (1.0 - math.cos(c * t)))
        return omega_s * (t - 0.5 * T), omega_s, 0.0
    return f


def spin_up_beam(segments, length=SPIN_UP["length"], EI=SPIN_UP["EI"], mass_per_length=SPIN_UP["mass_per_length"]):
    """The spin-up beam: a hub on the hinge ``"axle"`` (about z; prescribe ``"axle.angle"`` with
    :func:`spin_up_angle`) carrying the cantilever ``"blade"`` along x, bending in the plane of rotation
    (inextensible), no gravity."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0), name=f"spin-up beam {segments}")
    b.add_body("hub", 1.0, inertia=(1.0, 1.0, 1.0))
    b.add_joint("axle", mb.Revolute(axis=(0.0, 0.0, 1.0)), "ground", "hub")
    b.add_beam("blade", "hub", length=length, segments=segments, EI=(None, EI), GJ=None,
               mass_per_length=mass_per_length)
    return b.build()


def tip_positions(model, Q, frame):
    """The world position of ``frame`` at each configuration of Q (n, nq): (n, 3)."""
    return np.array([mb.frame_placement(model, np.asarray(q, dtype=float), frame)[1] for q in Q])


def rotating_frame_deflection(model, result):
    """The spin-up beam's tip deflection in the hub frame (its y coordinate there) at each output of ``result``."""
    hub = model.joint("axle").q_slice.start
    tips = tip_positions(model, result.q, "blade.tip")
    th = result.q[:, hub]
    return -np.sin(th) * tips[:, 0] + np.cos(th) * tips[:, 1]
