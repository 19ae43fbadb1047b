"""Reference simulations of pendulums.

* Triple physical pendulum of seed 001 §3.5 (Fig. 3.20): parameters, energy formulas and the reference
  states at t = 1, 2, 5, 10 s from /work/shared/reference/seed001-part2.md §9.2 (and §9.3, ``start.m``);
  q̈(0) = [−0.5, 0, 0] from §9.2 and the checks list of part 2 (item 19).
* 10-link spatial pendulum (spherical joints): energy conserved to 1e-9 relative over 10 s (issue 2).
* Simple pendulum at 170° amplitude: period 4 sqrt(L/g) K(sin(θ0/2)) (Whittaker, Analytical Dynamics §44).
"""
import numpy as np
import pytest

from multibody.algorithms.dynamics import aba, energy
from multibody.simulation import simulate
from multibody.systems.pendulums import (SEED001_TRIPLE, absolute_angles, seed001_absolute_to_relative,
                                         seed001_energy, seed001_relative_to_absolute, simple_pendulum,
                                         simple_pendulum_period, simulate_triple_pendulum_seed001, spatial_chain,
                                         triple_pendulum_seed001)

# seed001-part2.md §9.2, "Reference values [DERIVED]": absolute angles q, rates q̇ and kinetic energy T
TRIPLE_REFERENCE = {
    1.0: ([-0.245186, -0.007221, -0.000042], [-0.472508, -0.041221, -0.000403], 1.235388),
    2.0: ([-0.824298, -0.251430, -0.016778], [-0.596039, -0.545173, -0.065210], 4.433501),
    5.0: ([-2.206504, -2.229219, -3.258879], [-0.411377, -0.811069, -0.736482], 6.279117),
    10.0: ([-1.888975, -2.812204, -2.965351], [0.229644, 1.253842, -0.048136], 5.894757),
}


def test_triple_pendulum_model():
    m = triple_pendulum_seed001()
    assert (m.nq, m.nv, m.nbodies) == (3, 3, 3)
    np.testing.assert_array_equal(m.gravity, [0, -1, 0])  # unit weight along -y, m = 1
    np.testing.assert_array_equal(m.mass[1:], [1, 1, 1])
    np.testing.assert_array_equal(m.inertia_com[1:, 2, 2], [1, 1, 1])  # J_z = 1 about C_k
    np.testing.assert_array_equal(m.com[1:], [[1, 0, 0]] * 3)  # centre at mid-rod
    np.testing.assert_array_equal(m.jplace_p[2:], [[2, 0, 0]] * 2)  # rods of length 2
    assert SEED001_TRIPLE["q0_absolute"] == (0.0, 0.0, 0.0)


def test_angle_conversion_round_trip():
    rng = np.random.default_rng(0)
    qa = rng.normal(size=(5, 3))
    np.testing.assert_allclose(seed001_relative_to_absolute(seed001_absolute_to_relative(qa)), qa, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(absolute_angles([0.1, 0.2, 0.3]), np.cumsum([0.1, 0.2, 0.3]))


def test_triple_pendulum_energies_match_book_formulas():
    """Our T and V (kernels + builder geometry) equal the book's start.m formulas at random states."""
    m = triple_pendulum_seed001()
    rng = np.random.default_rng(1)
    for _ in range(20):
        qa = rng.uniform(-np.pi, np.pi, 3)
        va = rng.normal(size=3)
        T, V = energy(m, seed001_absolute_to_relative(qa), seed001_absolute_to_relative(va))
        ek, ep = seed001_energy(qa, va)
        assert abs(T - ek) < 1e-13 and abs(V - ep) < 1e-13


def test_triple_pendulum_initial_acceleration():
    """q̈(0) = [−0.5, 0, 0] in absolute angles (seed001-part2.md §9.2 and checks item 19)."""
    m = triple_pendulum_seed001()
    qdd = aba(m, np.zeros(3), np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(seed001_relative_to_absolute(qdd), [-0.5, 0.0, 0.0], rtol=0, atol=1e-15)


def _check_triple(res, tol):
    """Against TRIPLE_REFERENCE, printed to six decimals (rounding ±5e-7; measured up to 4.9e-7): ``tol`` = 1e-6 is
    twice the rounding, the runs' own errors being far smaller (DOP853 at rtol 1e-12; fourth-order RK4 at
    h = 1e-3)."""
    qa = seed001_relative_to_absolute(res.q)
    va = seed001_relative_to_absolute(res.v)
    for t, (qref, vref, Tref) in TRIPLE_REFERENCE.items():
        k = int(np.argmin(np.abs(res.t - t)))
        assert abs(res.t[k] - t) < 1e-12
        np.testing.assert_allclose(qa[k], qref, rtol=0, atol=tol, err_msg=f"q at t = {t}")
        np.testing.assert_allclose(va[k], vref, rtol=0, atol=tol, err_msg=f"q̇ at t = {t}")
        assert abs(res.energy["kinetic"][k] - Tref) < tol
    # released from rest at q = 0 where П = 0: T + П ≡ 0 (seed001-part2.md §9.2)
    assert np.max(np.abs(res.energy["total"])) < 1e-9
    assert np.all(res.energy["kinetic"] >= 0) and np.all(res.energy["potential"] <= 1e-12)


def test_triple_pendulum_reference_dop853():
    res = simulate_triple_pendulum_seed001(t_end=10.0, n_out=1001)
    _check_triple(res, 1e-6)
    # max T on [0, 10] ≈ 8.963 (seed001-part2.md §9.2), bounded by 9 = −min П
    assert abs(res.energy["kinetic"].max() - 8.963) < 5e-3 and res.energy["kinetic"].max() < 9


def test_triple_pendulum_reference_rk4_compiled():
    m = triple_pendulum_seed001()
    res = simulate(m, np.zeros(3), np.zeros(3), 10.0, method="RK4", h=1e-3, n_out=101)
    assert res.info["path"] == "compiled" and res.info["steps"] == 10000
    _check_triple(res, 1e-6)


def test_spatial_chain_energy_conservation():
    """10-link spatial pendulum with spherical joints: energy conserved to 1e-9 relative over 10 s
    (DOP853, rtol = 1e-12), quaternions of unit norm throughout."""
    m = spatial_chain(10, joint="spherical")
    assert (m.nq, m.nv) == (40, 30)
    rng = np.random.default_rng(1)
    q0 = m.random_configuration(rng)
    v0 = rng.normal(size=m.nv)
    res = simulate(m, q0, v0, 10.0, method="DOP853", rtol=1e-12, atol=1e-12, n_out=201)
    e = res.energy["total"]
    assert np.max(np.abs(e - e[0])) / abs(e[0]) < 1e-9
    assert res.energy_drift() < 1e-9
    assert res.energy["kinetic"].max() > 100  # a vigorous motion, not a trivial one
    norms = np.linalg.norm(res.q.reshape(len(res), 10, 4), axis=2)
    assert np.max(np.abs(norms - 1)) < 1e-15


@pytest.mark.parametrize("joint,nq", [("universal", 2), ("revolute", 1)])
def test_chain_variants(joint, nq):
    m = spatial_chain(4, joint=joint)
    assert m.nq == 4 * nq
    rng = np.random.default_rng(2)
    res = simulate(m, rng.uniform(-1, 1, m.nq), rng.normal(size=m.nv), 2.0, rtol=1e-12, atol=1e-12, n_out=21)
    assert res.energy_drift() < 1e-9


def test_simple_pendulum_period_170_degrees():
    """Period at 170° amplitude = 4 sqrt(L/g) K(sin(θ0/2)) to 1e-9 s (event on θ = 0, dense output)."""
    L, g = 1.0, 9.81
    m = simple_pendulum(length=L, mass=2.0, g=g)
    theta0 = np.deg2rad(170.0)
    exact = simple_pendulum_period(theta0, L, g)
    # K(k) independently by the arithmetic-geometric mean, K = π / (2 AGM(1, sqrt(1 − k²)))
    a, b = 1.0, np.sqrt(1.0 - np.sin(theta0 / 2) ** 2)
    for _ in range(10):
        a, b = 0.5 * (a + b), np.sqrt(a * b)
    assert abs(exact - 4 * np.sqrt(L / g) * np.pi / (2 * a)) < 1e-13

    def through_bottom(t, q, v):
        return q[0]

    through_bottom.direction = -1  # θ decreasing through 0: at T/4 and 5T/4
    res = simulate(m, [theta0], [0.0], 1.5 * exact, method="DOP853", rtol=1e-13, atol=1e-13,
                   events=through_bottom, n_out=3)
    t1, t2 = res.info["t_events"][0]
    assert abs((t2 - t1) - exact) < 1e-9
    assert abs(4 * t1 - exact) < 1e-9
    assert res.energy_drift() < 1e-11
