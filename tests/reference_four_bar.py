"""The IFToMM A02 N-four-bar reduced by hand to its one degree of freedom: the independent reference for
``multibody.systems.iftomm.four_bar_model`` through its singular positions.

All links are uniform bars of mass m = 1 kg and length L = 1 m and the ground pivots A_k are L apart, so on the
branch the motion starts on (the parallelogram branch) every crank has the same absolute angle φ (from +x) and
every coupler stays horizontal, translating with the crank tips.  With g = 9.81 N/kg along −y:

    T = ½ J φ̇²,   J = (N + 1)·m L²/3 + N·m L²     (cranks about their pivots; couplers translating at L φ̇)
    V = K sin φ,  K = m g L·((N + 1)/2 + N)        (crank centres at L/2 sin φ, coupler centres at L sin φ)

so Lagrange's equation is J φ̈ = −K cos φ, with φ(0) = π/2 (cranks vertical) and φ̇(0) = −v_B0/L = −1 rad/s
(B0, the tip of crank 0, moves at 1 m/s along +x).  E = ½J + K exceeds K, the potential's maximum: the cranks
turn full circles and pass the horizontal (φ = kπ, where the loops' Jacobian loses rank) twice a turn.

The reference integrates this equation with DOP853 at rtol = atol = 1e-13; :func:`passage_time` gives the time of
flight t(φ) = ∫ dφ / |φ̇(φ)|, |φ̇| = √(2(E − K sin φ)/J), by quadrature, an independent check of it.
"""
import math

import numpy as np
from scipy.integrate import quad, solve_ivp

G0 = 9.81


def constants(N):
    """(J, K, E): the reduced inertia, the potential's amplitude and the energy of the benchmark's start."""
    J = (N + 1) / 3.0 + N
    K = G0 * ((N + 1) / 2.0 + N)
    return J, K, 0.5 * J + K


def solve(N=2, t_end=10.0, tol=1e-13):
    """φ(t) of the reduction (``sol(t)[0]`` = φ, ``[1]`` = φ̇) and the times the cranks pass the horizontal."""
    J, K, _ = constants(N)
    return solve_ivp(lambda t, y: [y[1], -K / J * math.cos(y[0])], (0.0, t_end), [math.pi / 2, -1.0],
                     method="DOP853", rtol=tol, atol=tol, dense_output=True,
                     events=[lambda t, y: math.sin(y[0])])


def passage_time(phi, N=2):
    """The time the crank angle takes to fall from π/2 to ``phi`` (π/2 > phi > π/2 − 2π), by quadrature."""
    J, K, E = constants(N)
    return quad(lambda p: 1.0 / math.sqrt(2.0 * (E - K * math.sin(p)) / J), phi, math.pi / 2,
                epsabs=1e-14, epsrel=1e-13, limit=200)[0]


def energy(phi, phidot, N=2):
    """T + V of the reduction."""
    J, K, _ = constants(N)
    return 0.5 * J * np.asarray(phidot) ** 2 + K * np.sin(phi)
