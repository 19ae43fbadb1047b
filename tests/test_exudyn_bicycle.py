"""Exudyn's Whipple bicycle (``multibody.bench.exudyn_bicycle``) against ours (``bicycle.iftomm_maneuver``) on the
IFToMM uncontrolled-bicycle maneuver M2 (4.6 m/s, lean rate 0.5 rad/s, 20 s): two independent models and
integrators of the same problem.

How the tolerances are derived (from the two integrators' errors, never from a printed difference):

* Exudyn's ``TrapezoidalIndex2`` is the trapezoidal rule, second order: a final value computed with step h
  is y(h) = y + C h^2 + O(h^4). Two runs at h and h/k give the Richardson estimates of their errors,
  e(h) = k^2/(k^2 - 1) |y(h) - y(h/k)| and e(h/k) = |y(h) - y(h/k)|/(k^2 - 1).
* Ours (DOP853, rtol = atol = 1e-9, the defaults of ``iftomm_maneuver``) is estimated by the change to a run
  at rtol = atol = 1e-11: e_ours = |y_ours(1e-9) - y_ours(1e-11)|.
* The two models must then agree to ``TOL_FACTOR * (e_exudyn + e_ours)``. The Richardson estimate is close to
  the true error once h^2 dominates, so a factor 4 leaves at least 3x margin even when the estimate is 25 %
  low. Measured (Exudyn 1.13.6): tolerance / difference = 4.0-4.4 for roll, steer and yaw (speed 4.2-48) at
  20 s, 3.9-4.0 at 1 s, i.e. the estimates are within a few per cent of the actual differences.

At 20 s the lean and steer have decayed to about 1e-5 rad (M2 runs above the weave speed) while Exudyn's
error at the benchmark step 1/68 s is about 1e-4 rad, so the strongest check of the final state is the one at
a quarter of the step; the tight check is the 1 s one (fine steps, the motion still large: about 1e-6 rad on
0.04 rad). The models' initial states and energies agree to round-off.
"""
import numpy as np
import pytest

exudyn = pytest.importorskip("exudyn")

import multibody as mb  # noqa: E402
from multibody.bench.exudyn_bicycle import (  # noqa: E402
    DEFAULT_STEP_SIZE,
    exudyn_maneuver,
    initial_body_velocities,
)
from multibody.systems import bicycle  # noqa: E402

KEYS = ("roll", "steer", "forward_speed", "yaw")
TOL_FACTOR = 4.0
IFTOMM_LIMIT = 1e-3          # per cent


def _ours(t_end, n_out):
    return {tol: bicycle.iftomm_maneuver("M2", t_end=t_end, rtol=tol, atol=tol, n_out=n) for tol, n in
            ((1e-9, n_out), (1e-11, 21))}


@pytest.fixture(scope="module")
def m2():
    """M2 over 20 s: Exudyn at the benchmark step h and at h/4, ours at rtol 1e-9 (reference) and 1e-11."""
    h = DEFAULT_STEP_SIZE
    return dict(exu=exudyn_maneuver("M2", step_size=h), exu4=exudyn_maneuver("M2", step_size=h / 4),
                ours=_ours(20.0, 2001))


@pytest.fixture(scope="module")
def m2_one_second():
    """M2 over 1 s: Exudyn at 1 ms and 0.5 ms, ours as above."""
    return dict(exu=exudyn_maneuver("M2", step_size=1e-3, t_end=1.0),
                exu2=exudyn_maneuver("M2", step_size=5e-4, t_end=1.0), ours=_ours(1.0, 101))


def _check(y_exu, y_exu_other, k, ours, which):
    """|y_exu - ours| <= TOL_FACTOR (e_exu + e_ours) with the Richardson estimate of y_exu's error
    (``which`` = "coarse": y_exu at h, y_exu_other at h/k; "fine": y_exu at h/k, y_exu_other at h)."""
    ref, ref_tight = ours[1e-9], ours[1e-11]
    for key in KEYS:
        d = abs(y_exu[key] - y_exu_other[key])
        e_exu = d * k * k / (k * k - 1) if which == "coarse" else d / (k * k - 1)
        e_ours = abs(ref[key] - ref_tight[key])
        tol = TOL_FACTOR * (e_exu + e_ours)
        diff = abs(y_exu[key] - ref[key])
        assert diff <= tol, (f"{key}: Exudyn {y_exu[key]!r} (step {y_exu['step_size']}) vs ours {ref[key]!r}: "
                             f"|difference| {diff:.3e} > {tol:.3e} = {TOL_FACTOR} x (Richardson {e_exu:.3e} + "
                             f"ours {e_ours:.3e})")


def test_same_initial_state():
    """Exudyn's initial body velocities are those of ``upright_state`` (every constraint satisfied, the three
    independent speeds given), body by body; hence the same initial energy (checked in the next test)."""
    model = bicycle.whipple_model()
    q0, v0 = bicycle.upright_state(model, 4.6, roll_rate=0.5)
    K = mb.forward_kinematics(model, q0, v0)
    mine = initial_body_velocities(None, 4.6, 0.5)
    for body in model.bodies[1:]:
        i = model.body_index(body.name)
        v_com = mb.point_velocity(model, q0, v0, body.name, body.com)
        np.testing.assert_allclose(mine[body.name][0], v_com, rtol=0, atol=1e-13)
        np.testing.assert_allclose(mine[body.name][1], K.velocity[i][:3], rtol=0, atol=1e-13)


def test_m2_energy_below_the_iftomm_limit(m2):
    """IFToMM accuracy measure 100 (max E - min E)/E0 below 1e-3 % for ours (measured 3.2e-9 %) and for Exudyn at
    a quarter of its benchmark step; the initial energies (masses, inertias, centres of mass, velocities of the
    two builds) agree to round-off.

    Exudyn's variation is the trapezoidal rule's, second order in the step: measured (Exudyn 1.13.6) 9.85e-4 % at
    the benchmark step h = 1/68 s (the largest step that meets the limit: it sits at the limit, so whether it is
    met there depends on the Exudyn build and is the benchmark's report, not a test), 2.46e-4 % at h/2 and
    6.15e-5 % at h/4 (ratio 4.00 per halving). The test checks that order (ratio 16 between h and h/4, within
    8-32 as for the final state) and the limit at h/4, 16 times below it."""
    exu, exu4, ours = m2["exu"], m2["exu4"], m2["ours"][1e-9]
    assert 8.0 < exu["energy_variation_percent"] / exu4["energy_variation_percent"] < 32.0
    assert exu4["energy_variation_percent"] < IFTOMM_LIMIT
    assert ours["energy_variation_percent"] < IFTOMM_LIMIT
    model = bicycle.whipple_model()
    q0, v0 = bicycle.upright_state(model, 4.6, roll_rate=0.5)
    E0 = sum(mb.energy(model, q0, v0))
    assert exu["energy_initial"] == pytest.approx(E0, rel=1e-13)
    assert exu["steps"] == round(20.0 / DEFAULT_STEP_SIZE) and exu["t_end"] == pytest.approx(20.0, abs=1e-9)
    # the contact heights, held by Exudyn at velocity level only, drift by the discretization error alone
    assert exu["max_contact_height"] < 1e-4


def test_m2_final_state_at_the_benchmark_step(m2):
    """Final roll, steer, forward speed and yaw at 20 s with Exudyn's benchmark step h = 1/68 s."""
    _check(m2["exu"], m2["exu4"], 4, m2["ours"], "coarse")


def test_m2_final_state_at_a_quarter_step(m2):
    """The same at h/4, where Exudyn's error is 16 times smaller."""
    _check(m2["exu4"], m2["exu"], 4, m2["ours"], "fine")
    # second order: the coarse run's difference to ours is about 4² = 16 times the fine one's (measured 16.4-17.6:
    # the h⁴ term is not negligible at h); the window 8-32 (the geometric midpoints towards 4¹ and 4³) says the
    # observed order rounds to 2
    ref = m2["ours"][1e-9]
    for key in ("roll", "steer", "yaw"):
        ratio = abs(m2["exu"][key] - ref[key]) / abs(m2["exu4"][key] - ref[key])
        assert 8.0 < ratio < 32.0, (key, ratio)


def test_m2_one_second_tight(m2_one_second):
    """After 1 s (the lean still about 0.04 rad): Exudyn at 0.5 ms agrees with ours to about 1e-6 in roll, steer
    and yaw and 2e-7 m/s in speed, within 4x its Richardson error estimate."""
    r = m2_one_second
    _check(r["exu2"], r["exu"], 2, r["ours"], "fine")
    ref = r["ours"][1e-9]
    assert abs(ref["roll"]) > 0.01 and abs(ref["steer"]) > 0.01     # the motion (0.04) is still large here


def test_bad_input():
    from multibody.errors import ModelError

    with pytest.raises(ModelError, match="maneuver"):
        exudyn_maneuver("M9")
    with pytest.raises(ValueError, match="step_size"):
        exudyn_maneuver("M2", step_size=0.0)
    with pytest.raises(ValueError, match="solver"):
        exudyn_maneuver("M2", solver="NoSuchSolver", t_end=0.1)
