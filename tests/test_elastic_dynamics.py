"""Dynamics of beams of rigid finite elements against a peer and a classical failure of linear models:

* the flexible pendulum (L = 2, EI = 1, ρA = 1, pinned, released horizontal) against Exudyn's ANCF cable model of the
  same beam (``bench/exudyn_beams.py``, built here): the tip's path over 2 s within 1 % of L with 64 segments;
* Kane, Ryan & Banerjee's spin-up beam (``systems/elastic.py``): bounded, and equal to the linear model of the beam in
  the rotating frame *with* the centrifugal stiffening, while the same linear model without it diverges.
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import multibody as mb
from multibody.systems import elastic


def test_flexible_pendulum_follows_exudyns_ancf_cable():
    """64 segments, RK4 with h below the stability limit of the highest bending mode (ω_max from mb.modes), against
    32 ANCF elements (cubic, converged to ~1e-4 L: 16 elements differ from 32 by 1e-3 L) with generalized-α: the
    tip path within 1 % of L at every sample."""
    pytest.importorskip("exudyn")
    from multibody.bench.exudyn_beams import exudyn_flexible_pendulum

    peer = exudyn_flexible_pendulum(elements=32, t_end=2.0, step_size=1e-3, sample_period=0.01)
    model = elastic.flexible_pendulum(64)
    hanging = model.neutral()
    hanging[0] = math.pi / 2
    omega_max = mb.modes(model, hanging).omega.max()
    h = 2.0 / 16000
    assert h * omega_max < 2.5           # inside RK4's stability interval (|hλ| < 2.78 on the imaginary axis)
    run = mb.simulate(model, model.neutral(), np.zeros(model.nv), 2.0, method="RK4", h=h, n_out=201, energy=False)
    assert run.t == pytest.approx(peer["t"], abs=1e-9)
    tip = elastic.tip_positions(model, run.q, "pendulum.tip")
    error = np.hypot(tip[:, 0] - peer["tip"][:, 0], tip[:, 2] - peer["tip"][:, 1])
    assert error.max() < 0.01 * 2.0
    assert np.ptp(tip[:, 2]) > 1.5      # it swings through large deflections


def _linear_spin_up(omega_s, stiffening, modes=4, L=10.0, rhoA=1.2, EI=14000.0, t_end=20.0):
    """The tip deflection of the linear beam in the rotating frame (Galerkin on the cantilever modes φ_k):
    M q̈ + (K − θ̇² M + s θ̇² K_G) q = −θ̈ f, K_G = ∫ ρA (L² − x²)/2 φ_i' φ_j' dx (the centrifugal tension's stiffening,
    s = 1) — with s = 0, the model of Kane et al. that diverges."""
    bl = [brentq(lambda b: math.cos(b) * math.cosh(b) + 1.0, x0 - 0.5, x0 + 0.5)
          for x0 in (1.875, 4.694, 7.855, 10.996)[:modes]]
    x = np.linspace(0.0, L, 4001)
    P, D = [], []
    for b in bl:
        k, s = b / L, (math.cosh(b) + math.cos(b)) / (math.sinh(b) + math.sin(b))
        P.append(np.cosh(k * x) - np.cos(k * x) - s * (np.sinh(k * x) - np.sin(k * x)))
        D.append(k * (np.sinh(k * x) + np.sin(k * x) - s * (np.cosh(k * x) - np.cos(k * x))))
    P, D = np.array(P), np.array(D)
    M = rhoA * np.trapezoid(P[:, None] * P[None], x)
    K = np.diag([(b / L) ** 4 * EI * L for b in bl])
    KG = np.trapezoid(rhoA * (L * L - x * x) / 2.0 * D[:, None] * D[None], x)
    f = rhoA * np.trapezoid(x * P, x)
    hub = elastic.spin_up_angle(omega_s)
    Minv = np.linalg.inv(M)

    def rhs(t, y):
        _, w, a = hub(t)
        return np.concatenate([y[modes:], Minv @ (-(K - w * w * M + stiffening * w * w * KG) @ y[:modes] - a * f)])

    sol = solve_ivp(rhs, (0.0, t_end), np.zeros(2 * modes), rtol=1e-9, atol=1e-12, max_step=0.01,
                    t_eval=np.linspace(0.0, t_end, 401))
    return sol.t, P[:, -1] @ sol.y[:modes]


def test_spin_up_beam_stays_bounded():
    """ω_s = 10 rad/s (above the first bending frequency, 3.8 rad/s): the rigid finite elements stay bounded and
    follow the linear model with geometric stiffening (max |v| within 5 %: the linear model omits O((v/L)²) ≈ 1 %
    and 8 segments have an O(l²) error ≈ 1 % in the first mode); without the stiffening the linear model diverges."""
    omega_s = 10.0
    model = elastic.spin_up_beam(8)
    run = mb.simulate(model, model.neutral(), np.zeros(model.nv), 20.0,
                      prescribed={"axle.angle": elastic.spin_up_angle(omega_s)}, rtol=1e-7, atol=1e-9, n_out=401)
    v = elastic.rotating_frame_deflection(model, run)
    _, stiff = _linear_spin_up(omega_s, 1.0)
    _, soft = _linear_spin_up(omega_s, 0.0)
    assert np.abs(v).max() < 0.1 * 10.0
    assert np.abs(v).max() == pytest.approx(np.abs(stiff).max(), rel=0.05)
    assert np.abs(v[-40:]).max() < 0.05            # at the steady spin it settles near the straight line
    assert np.abs(soft).max() > 1e3 * 10.0         # the linear model without stiffening has diverged
