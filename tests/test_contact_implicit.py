"""The compliant model in its implicit step (``contact="compliant", implicit=True``: the Hunt–Crossley force at the
step's end, ``rows/kinds.py``, with Coulomb's exact friction) against the mechanics it must reproduce.

Bounds, and where they come from:

* a box on a slope with μ > tan θ stays (the issue's bound: drift < 1 mm over 10 s): the implicit step's friction
  is Coulomb's law, whose sticking impulse cancels gravity's tangential part exactly, so the box moves only while
  it sinks into its contact, by δ = (N / k)^(1/p) at each corner (6e-5 m at k = 1e7, 3e-6 m at 1e9; it slides
  while the normal force is still building, a few δ tan θ), and then not at all (1e-9 m: round-off over 9 s). At
  rest its depth is the mean of its corners' δ, the downhill ones carrying more by the moment of friction (to the
  tilt's relative change of the arms, δ/hx < 1e-5);
* the rimless wheel (systems/rimless_wheel.py; McGeer, Int. J. Robot. Res. 9 (1990) 62–82): a hub of mass m and
  inertia I on n massless spokes of length l, 2α = 2π/n apart, rolling down a slope γ; each stance is an inverted
  pendulum, (I + m l²) θ̈ = m g l sin(θ + γ), from θ = −α to α, and each impact plastic on the new foot (the angular
  momentum about it is kept: ω⁺ = (m l² cos 2α + I) / (m l² + I) ω⁻). Its steady gait has the closed form ω⁻² (1 −
  c²) = K (cos(γ − α) − cos(γ + α)), K = 2 m g l / (I + m l²), and the step period T = ∫_{−α}^{α} dθ / sqrt(ω₀² + K
  (cos(γ − α) − cos(θ + γ))), ω₀ = c ω⁻ (an elliptic integral, evaluated here by quadrature to 1e-14). The compliant
  model approaches it with three errors: semi-implicit Euler's, first order in h; the feet's sink δ/l; and the
  Hunt–Crossley restitution, at most 2/(3 α v) of the impact speed v (the damping α = 1000 s/m makes the impacts
  plastic to 7e-4). With k = 1e9 (δ = 5e-6 m) the error is first order in h: at h = 1e-4 and 5e-5 it halves (ratio 2
  ± 0.3, the rest being the O(h²) and δ terms) and its Richardson extrapolate 2 e(h/2) − e(h) is below 2e-4; at k =
  1e7 (δ = 1e-4 m) the sink adds about 5 δ/l, still within the issue's 2e-3 at h = 1e-4. The mean period is measured
  over ten steps of the settled gait, from the times the hub turns through the same mid-stance angle (linear
  interpolation of 1 ms outputs: 1e-8 s), so that it telescopes.

Speed is not tested (no test depends on time): ``multibody bench --only contact`` prints the wheel's CPU per
simulated second.
"""
import numpy as np
import pytest

import multibody as mb
from multibody.systems.rimless_wheel import (WHEEL, mean_step_period, rimless_wheel, rimless_wheel_gait,
                                             rimless_wheel_period, rimless_wheel_start)
from test_contact import incline

G = 9.81


@pytest.mark.parametrize("stiffness", [1e7, 1e9])
def test_box_on_a_slope_sticks(stiffness):
    theta, mu, m, p = 0.45, 0.5, 2.0, 1.5            # tan θ = 0.483 < μ
    hx, hz = 0.2, 0.05                                # the box's half length downhill and half height
    model, q0, R = incline(theta, mu, half=(hx, 0.15, hz), m=m)
    res = mb.simulate(model, q0, None, 10.0, h=1e-3, contact="compliant", implicit=True, stiffness=stiffness,
                      exponent=p, n_out=101)
    moved = (res.q[:, :3] - q0[:3]) @ R                 # in the slope's axes: along it (x, y), into it (z)
    assert np.max(np.abs(moved[:, :2])) < 1e-3
    settled = res.t >= 1.0
    assert np.max(np.ptp(moved[settled, :2], axis=0)) < 1e-9
    # at rest: each pair of corners carries its share of m g cos θ, the downhill pair more by the moment of
    # friction m g sin θ about the centre, at hz below it: 2 (N_down − N_up) hx = m g sin θ hz
    N = m * G * (np.cos(theta) / 4 + np.array([1, -1]) * np.sin(theta) * hz / (4 * hx))
    sink = np.mean((N / stiffness) ** (1 / p))
    assert moved[-1, 2] == pytest.approx(-sink, rel=1e-5)     # the tilt's (δ/hx) change of the arms
    assert np.max(np.abs(res.v[-1])) < 1e-9 and res.contacts.count[-1] == 4
    assert res.info["solves"]["step"]["unconverged"] == 0      # (the corners' rows on one plane)


@pytest.fixture(scope="module")
def wheel():
    return rimless_wheel(**WHEEL), WHEEL


def period_error(wheel, h, stiffness):
    """The settled gait's mean step period (ten steps) relative to the closed form, less one."""
    model, shape = wheel
    q0, v0 = rimless_wheel_start(**shape)
    res = mb.simulate(model, q0, v0, 10.0, h=h, contact="compliant", implicit=True, stiffness=stiffness,
                      damping=1000.0, n_out=10001)
    return mean_step_period(res, shape["n"]) / rimless_wheel_period(**shape) - 1.0


def test_rimless_wheel_closed_form():
    """The closed form against its definition, integrated independently (scipy's DOP853 at rtol 1e-12): a stance
    from θ = −α at ω₀ reaches θ = α after T with the rate ω⁻, which the impact takes back to c ω⁻ = ω₀."""
    from scipy.integrate import solve_ivp

    n, l, m, inertia, slope = (WHEEL[k] for k in ("n", "length", "mass", "inertia", "slope"))
    alpha = np.pi / n
    w0, end = rimless_wheel_gait(**WHEEL)
    K = m * G * l / (inertia + m * l * l)
    reach = lambda t, x: x[0] - alpha  # noqa: E731
    reach.terminal = True
    run = solve_ivp(lambda t, x: [x[1], K * np.sin(x[0] + slope)], (0.0, 5.0), [-alpha, w0], method="DOP853",
                    rtol=1e-12, atol=1e-14, events=reach)
    assert run.t_events[0][0] == pytest.approx(rimless_wheel_period(**WHEEL), rel=1e-10)
    assert run.y_events[0][0][1] == pytest.approx(end, rel=1e-10)
    assert (m * l * l * np.cos(2 * alpha) + inertia) / (m * l * l + inertia) * end == pytest.approx(w0, rel=1e-14)


def test_rimless_wheel_step_period(wheel):
    coarse, fine = period_error(wheel, 1e-4, 1e9), period_error(wheel, 5e-5, 1e9)
    assert abs(coarse) < 2e-3 and coarse / fine == pytest.approx(2.0, abs=0.3)
    assert abs(2 * fine - coarse) < 2e-4
    assert abs(period_error(wheel, 1e-4, 1e7)) < 2e-3
