"""The rimless wheel (McGeer, "Passive dynamic walking", Int. J. Robot. Res. 9 (1990) 62–82), the simplest
walker: a hub of mass m and inertia I on n massless spokes of length l, 2α = 2π/n apart, rolling down a slope γ
on its spokes' tips (points: ``Sphere(0)``) with friction enough to keep them from slipping.

Its model (:func:`rimless_wheel`) moves in the joint frame's xy-plane (a ``Planar`` joint): the floor is the plane
y = 0 and gravity is turned by γ, g (sin γ, −cos γ, 0), so that the wheel rolls towards +x. Spoke k points at the
body angle −π/2 + 2αk.

Each stance is an inverted pendulum about the foot on the floor, θ the spoke's angle from the floor's normal
(positive downhill): (I + m l²) θ̈ = m g l sin(θ + γ), from θ = −α to α; each impact is plastic on the new foot,
the old one leaves, and the angular momentum about the new foot is kept: ω⁺ = c ω⁻, c = (m l² cos 2α + I) /
(m l² + I). The steady gait (McGeer's fixed point, without his small-angle linearization) follows from the energy
of the stance, ω(θ)² = ω₀² + K (cos(γ − α) − cos(θ + γ)), K = 2 m g l / (I + m l²), and ω₀ = c ω⁻:

    ω⁻² (1 − c²) = K (cos(γ − α) − cos(γ + α)),      T = ∫_{−α}^{α} dθ / ω(θ)

(:func:`rimless_wheel_period`, T by adaptive quadrature to 1e-14; :func:`rimless_wheel_start`, the state at the
start of a steady stance; :func:`mean_step_period`, a run's).
"""
import math

import numpy as np
from scipy.integrate import quad

import multibody as mb

__all__ = ["rimless_wheel", "rimless_wheel_gait", "rimless_wheel_period", "rimless_wheel_start", "mean_step_period",
           "WHEEL"]

#: the wheel of the tests and the benchmark: ten spokes of 1 m, 1 kg with I = 0.01 kg m², on a slope of 0.08 rad
WHEEL = dict(n=10, length=1.0, mass=1.0, inertia=0.01, slope=0.08)
G = 9.81


def rimless_wheel(n=10, length=1.0, mass=1.0, inertia=0.01, slope=0.08, friction=2.0, g=G):
    """The rimless wheel's model (module docstring)."""
    alpha = math.pi / n
    b = mb.ModelBuilder(gravity=(g * math.sin(slope), -g * math.cos(slope), 0.0))
    b.add_body("hub", mass=mass, inertia=(inertia, inertia, inertia))
    b.add_joint("plane", mb.Planar(), "ground", "hub")
    for k in range(n):
        a = -0.5 * math.pi + 2 * alpha * k
        b.add_frame(f"foot{k}", "hub", mb.Placement(translation=(length * math.cos(a), length * math.sin(a), 0.0)))
        b.add_contact_sphere(f"foot{k}", 0.0, friction=friction)
    floor = mb.Placement(mb.rotation_about((1, 0, 0), -0.5 * math.pi), (0.0, 0.0, 0.0))    # its normal along +y
    b.add_collision("floor", "ground", mb.HalfSpace(), floor, friction=friction)
    return b.build()


def rimless_wheel_gait(n=10, length=1.0, mass=1.0, inertia=0.01, slope=0.08, g=G):
    """(ω₀, ω⁻): the steady gait's spoke rates (rad/s) at the start and the end of a stance."""
    alpha = math.pi / n
    J = inertia + mass * length ** 2
    c = (mass * length ** 2 * math.cos(2 * alpha) + inertia) / J
    K = 2 * mass * g * length / J
    end = math.sqrt(K * (math.cos(slope - alpha) - math.cos(slope + alpha)) / (1 - c * c))
    return c * end, end


def rimless_wheel_period(n=10, length=1.0, mass=1.0, inertia=0.01, slope=0.08, g=G):
    """The steady gait's step period T (s) (module docstring)."""
    alpha = math.pi / n
    w0, _ = rimless_wheel_gait(n, length, mass, inertia, slope, g)
    K = 2 * mass * g * length / (inertia + mass * length ** 2)
    rate = lambda th: 1.0 / math.sqrt(w0 * w0 + K * (math.cos(slope - alpha) - math.cos(th + slope)))  # noqa: E731
    return quad(rate, -alpha, alpha, epsabs=1e-14, epsrel=1e-14)[0]


def rimless_wheel_start(n=10, length=1.0, mass=1.0, inertia=0.01, slope=0.08, g=G):
    """(q0, v0) of :func:`rimless_wheel` at the start of a steady stance: spoke 0 on the floor at the origin at
    θ = −α, the hub turning about it at −ω₀ (clockwise: downhill)."""
    alpha = math.pi / n
    w0, _ = rimless_wheel_gait(n, length, mass, inertia, slope, g)
    hub = length * np.array([math.sin(-alpha), math.cos(-alpha)])       # from the foot
    angle = math.atan2(-hub[1], -hub[0]) + 0.5 * math.pi                  # spoke 0 (body angle −π/2) to the foot
    q0 = np.array([hub[0], hub[1], angle])
    v0 = np.array([w0 * hub[1], -w0 * hub[0], -w0])                      # ω × (hub − foot), ω = −ω₀ about z
    return q0, v0


def mean_step_period(result, n=10, first=9, last=19):
    """The mean step period of a run of :func:`rimless_wheel` from :func:`rimless_wheel_start`, over steps
    ``first`` to ``last``: the time the hub takes to turn from the middle of stance ``first`` to the middle of
    stance ``last`` (its angle falls by 2α a step; linear interpolation between outputs), over ``last − first``
    (so that each step's own time telescopes)."""
    alpha = math.pi / n
    mid = result.q[0, 2] - alpha - 2 * alpha * np.arange(first, last + 1)
    times = np.interp(-mid, -result.q[:, 2], result.t)
    return (times[-1] - times[0]) / (last - first)
