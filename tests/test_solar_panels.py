"""The two-leaf solar panel of seed 001, §3.2.1 (Figs. 3.7, 3.8, Table 3.1) and the planar hinge equations
(3.41)–(3.43) of §3.2.2.

References: reference/seed001-part2.md §3.1 (joint vectors c_11, c_12, c_22), §3.2 (Table 3.1 and erratum 7
on β), §4.4 (eqs. 3.41–3.43 corrected), §14.1 claim 10 and §14.2 claims 16, 17 (the numbers of claim 16).
"""
import math

import numpy as np
import pytest

from multibody.errors import ModelError
from multibody.systems import solar_panels as sp
from multibody.viz.solar_panels import plot_deployment


def _inertia(rng):
    """Random principal moments satisfying the triangle inequality."""
    i1, i2 = rng.uniform(0.05, 0.3, 2)
    return (i1, i2, rng.uniform(abs(i1 - i2), i1 + i2))


def _random_params(rng, **kw):
    return sp.SolarPanelParameters(
        s10=rng.uniform(0.1, 1.0), h10=rng.uniform(0.0, 0.2), s12=rng.uniform(0.1, 1.0),
        h12=rng.uniform(0.0, 0.2), s21=rng.uniform(0.1, 1.0), h21=rng.uniform(0.01, 0.2),
        m1=rng.uniform(0.5, 3.0), m2=rng.uniform(0.5, 3.0),
        inertia1=_inertia(rng), inertia2=_inertia(rng),
        **kw)


def _table_closed_forms(p):
    """Table 3.1 as printed (seed001-part2.md §3.2), β with the corrected closed forms (erratum 7), and
    K_i3 = J_i,33 + Σ_k m_k |d_ik|² (§4.2)."""
    s10, h10, s12, h12, s21, h21, m1, m2 = p.s10, p.h10, p.s12, p.h12, p.s21, p.h21, p.m1, p.m2
    M = m1 + m2
    mu1, mu2 = m1 / M, m2 / M
    d11 = math.hypot(s10, h10)
    d12 = math.hypot(s10 + s12, h10 + h12)
    d22 = math.hypot(s21, h21)
    return {
        "M": M,
        "d11": d11, "d12": d12, "d21": 0.0, "d22": d22,
        "b11": mu2 * math.hypot(s12, h12),
        "b10": math.hypot(mu2 * s12 + s10, -mu2 * h12 - h10),
        "b12": math.hypot(mu2 * s12 - s12, -mu2 * h12 + h12),
        "b22": mu1 * math.hypot(s21, h21),
        "b20": math.hypot(-mu1 * s21 + s21, -mu1 * h21 + h21),
        "b21": math.hypot(-mu1 * s21 + s21, -mu1 * h21 + h21),  # b21 = b20
        "alpha11": math.pi - math.atan(h10 / s10),
        "alpha12": math.pi - math.atan((h10 + h12) / (s10 + s12)),
        "alpha21": 0.0,
        "alpha22": math.pi + math.atan(h21 / s21),
        "beta1": math.pi - math.atan((h10 + mu2 * h12) / (s10 + mu2 * s12)),  # corrected (printed 0)
        "beta2": math.pi + math.atan(h21 / s21),  # corrected (printed 0)
        "K13": p.inertia1[2] + m1 * d11**2 + m2 * d12**2,
        "K23": p.inertia2[2] + m2 * d22**2,
    }


@pytest.mark.parametrize("seed", [None, 1, 2, 3])
def test_table_3_1_from_model_equals_closed_forms(seed):
    p = sp.SolarPanelParameters() if seed is None else _random_params(np.random.default_rng(seed))
    tab = sp.barycentric_table(p)
    ref = _table_closed_forms(p)
    for key, val in ref.items():
        assert tab[key] == pytest.approx(val, rel=1e-14, abs=1e-15), key
    # the vector identities of seed001-part2.md §14.1 claim 10
    v = tab["vectors"]
    d, b, b0 = v["d"], v["b"], v["b0"]
    c = p.joint_vectors
    M = p.m1 + p.m2
    np.testing.assert_allclose(d[0, 0], c["c11"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(d[0, 1], c["c11"] - c["c12"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(d[1, 1], c["c22"], rtol=0, atol=1e-15)
    assert not d[1, 0].any()
    np.testing.assert_allclose(b[1, 0], b0[1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(b[0, 0], -p.m2 * c["c12"] / M, rtol=0, atol=1e-15)
    np.testing.assert_allclose(b[1, 1], -p.m1 * c["c22"] / M, rtol=0, atol=1e-15)
    np.testing.assert_allclose(b0[0], b[0, 0] + d[0, 0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(b[0, 1], b0[0] - d[0, 1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(b0[1], -p.m2 / M * np.array([p.s21, p.h21, 0.0]), rtol=0, atol=1e-15)
    # β2 is the angle of b20 ∥ c22, not the printed 0 (erratum 7)
    assert tab["beta2"] == pytest.approx(tab["alpha22"], abs=1e-14)


def test_default_table_values():
    """The defaults' Table 3.1 (s = 0.31 m, h = 0.015 m, m1 = m2 = 1.5 kg), by hand: d11 = √(0.31² + 0.015²),
    d12 = 2 d11, b11 = b12 = b22 = b20 = d11/2, b10 = 1.5 d11, K13 = 0.04505 + 1.5 (d11² + d12²)."""
    tab = sp.barycentric_table()
    d11 = math.sqrt(0.31**2 + 0.015**2)
    assert tab["d11"] == pytest.approx(d11, rel=1e-15)
    assert tab["d12"] == pytest.approx(2 * d11, rel=1e-15)
    for key in ("b11", "b12", "b22", "b20", "b21"):
        assert tab[key] == pytest.approx(d11 / 2, rel=1e-15), key
    assert tab["b10"] == pytest.approx(1.5 * d11, rel=1e-15)
    plate_jz = 1.5 * (0.6**2 + 0.02**2) / 12
    assert tab["K13"] == pytest.approx(plate_jz + 1.5 * 5 * d11**2, rel=1e-14)
    assert tab["K23"] == pytest.approx(plate_jz + 1.5 * d11**2, rel=1e-14)


def test_book_equations_claim_16_numbers():
    """seed001-part2.md §14.2 claim 16: m1 = 1.3, m2 = 0.7, J1 = 0.4, J2 = 0.25, gravity 9.81 along −y,
    r̈_0 = (0.8, −1.1), c11 = (−0.6, 0.2), c12 = (0.9, −0.3), c22 = (−0.5, −0.15), φ = (0.7, −0.4),
    φ̇ = (1.2, −0.8): A = [[2.67, 0.51065061], [0.51065061, 0.44075]], B = [[0, 0.27027477], [−0.27027477, 0]],
    A φ̈ = [−15.21692621, −2.80646933] (8 decimals printed)."""
    p = sp.SolarPanelParameters(m1=1.3, m2=0.7, inertia1=(0.2, 0.2, 0.4), inertia2=(0.125, 0.125, 0.25),
                                s10=0.6, h10=0.2, s12=0.9, h12=0.3, s21=0.5, h21=0.15)
    phi, phid = np.array([0.7, -0.4]), np.array([1.2, -0.8])
    g = np.array([0.0, -9.81])
    A, B, R = sp.planar_hinge_equations(p, phi, phid, base_acceleration=(0.8, -1.1), forces=[p.m1 * g, p.m2 * g])
    np.testing.assert_allclose(A, [[2.67, 0.51065061], [0.51065061, 0.44075]], rtol=0, atol=5e-9)
    np.testing.assert_allclose(B, [[0.0, 0.27027477], [-0.27027477, 0.0]], rtol=0, atol=5e-9)
    np.testing.assert_allclose(R - B @ phid**2, [-15.21692621, -2.80646933], rtol=0, atol=5e-9)


def test_book_equations_structure():
    """A symmetric, B skew-symmetric with zero diagonal (seed001-part2.md §4.4, erratum 12; claim 17); a base
    acceleration r̈_0 acts as the forces F_j = −m_j r̈_0 (d'Alembert)."""
    rng = np.random.default_rng(5)
    for _ in range(5):
        p = _random_params(rng)
        phi, phid, acc = rng.uniform(-3, 3, 2), rng.normal(size=2), rng.normal(size=2)
        A, B, R = sp.planar_hinge_equations(p, phi, phid, base_acceleration=acc)
        np.testing.assert_allclose(A, A.T, rtol=0, atol=0)
        np.testing.assert_allclose(B, -B.T, rtol=0, atol=0)
        assert np.all(np.linalg.eigvalsh(A) > 0)
        _, _, R2 = sp.planar_hinge_equations(p, phi, phid, forces=[-p.m1 * acc, -p.m2 * acc])
        np.testing.assert_allclose(R, R2, rtol=0, atol=1e-14)


def test_angles_and_model_layout():
    p = sp.SolarPanelParameters()
    model = sp.solar_panel(p)
    assert (model.nq, model.nv, model.nbodies) == (2, 2, 2)
    assert model.body_names == ("ground", "leaf1", "leaf2")
    np.testing.assert_array_equal(model.dof_stiffness, [0.15, 0.08])
    np.testing.assert_array_equal(model.dof_damping, [0.5, 0.25])
    # default rest angles: deployed + (deployed − stowed), i.e. −90° and +180°
    np.testing.assert_allclose(model.dof_rest, [-math.pi / 2, math.pi], rtol=0, atol=1e-15)   # a few ulps of π
    # exact latches (default): latch elements at the deployed angles, no torque callback; the spring latch of
    # latches="spring" is the callback HingeLatch (none with latch_stiffness 0)
    assert model.torque_callback is None
    assert [(la.joint, la.value) for la in model.unilateral.latches] == [("hinge1", 0.0), ("hinge2", 0.0)]
    spring = sp.solar_panel(sp.SolarPanelParameters(latches="spring"))
    assert isinstance(spring.torque_callback, sp.HingeLatch) and not spring.unilateral
    assert sp.solar_panel(sp.SolarPanelParameters(latches="spring", latch_stiffness=0.0)).torque_callback is None
    # stowed: φ = (90°, −90°); conversions are inverse to each other on time histories
    np.testing.assert_allclose(sp.absolute_angles(p.stowed), [math.pi / 2, -math.pi / 2], rtol=0, atol=1e-15)
    th = np.random.default_rng(0).normal(size=(7, 2))
    np.testing.assert_allclose(sp.relative_angles(sp.absolute_angles(th)), th, rtol=0, atol=1e-15)
    # stowed geometry: leaf 1 along the wall (+y) at x = h10 > 0, leaf 2 folded onto it further out
    r1, r2 = sp._centres(p, np.array([p.stowed]))
    np.testing.assert_allclose(r1[0], [p.h10, p.s10], rtol=0, atol=1e-15)
    np.testing.assert_allclose(r2[0], [p.h10 + p.h12 + p.h21, p.s10 + p.s12 - p.s21], rtol=0, atol=1e-15)
    # parameters round-trip through the JSON-ready dict stored in Result.info
    assert sp.SolarPanelParameters.from_dict(p.to_dict()) == p


def test_parameter_errors():
    with pytest.raises(ModelError, match="m1 must be a positive mass"):
        sp.SolarPanelParameters(m1=0.0)
    with pytest.raises(ModelError, match="k2 must be finite and >= 0"):
        sp.SolarPanelParameters(k2=-1.0)
    with pytest.raises(ModelError, match="stowed and deployed angles must differ"):
        sp.SolarPanelParameters(stowed=(0.0, -math.pi))
    with pytest.raises(ModelError, match="inertia1 must be 3 principal moments"):
        sp.SolarPanelParameters(inertia1=(1.0, 2.0))
    with pytest.raises(ModelError, match="latches must be 'exact', 'spring' or 'none'"):
        sp.SolarPanelParameters(latches="velcro")
    with pytest.raises(ModelError, match="expected SolarPanelParameters"):
        sp.solar_panel([1.0, 2.0])


def test_latch():
    """One-sided Hunt–Crossley stop: no torque before the deployed angle, continuous torque, never pulling,
    −d(½K_L δ²)/dt − τ·θ̇ = dissipated power ≥ 0."""
    p = sp.SolarPanelParameters(latches="spring")
    latch = sp.latch_of(p)
    rng = np.random.default_rng(2)
    q = rng.uniform(-0.05, 0.05, (200, 2))
    v = rng.normal(scale=0.3, size=(200, 2))
    tau = np.array([latch(0.0, qi, vi) for qi, vi in zip(q, v)])
    sigma = np.array(p.direction)
    delta = sigma * (q - np.array(p.deployed))
    assert np.all(tau[delta <= 0] == 0)
    assert np.all(sigma * tau <= 0)  # pushes the leaf back out of the stop only
    diss = latch.dissipation(q, v)
    assert np.all(diss >= 0)
    # energy identity by central differences of V_L along q + s v
    h = 1e-6
    dV = (latch.potential(q + h * v) - latch.potential(q - h * v)) / (2 * h)
    engaged = np.all(np.abs(delta) > 1e-4, axis=1)
    np.testing.assert_allclose((-dV - np.sum(tau * v, axis=1))[engaged], diss[engaged], rtol=0, atol=1e-8)
    # equilibrium penetration against the preloaded spring: δ* = k |θ_rest − θ_dep| / (K_L + k)
    for k, kk in enumerate(p.stiffness):
        dstar = kk * abs(p.rest[k] - p.deployed[k]) / (p.latch_stiffness + kk)
        qk = np.array(p.deployed, dtype=float)
        qk[k] += sigma[k] * dstar
        total = sp.hinge_torques(p, qk[None], np.zeros((1, 2)))["total"][0]
        assert abs(total[k]) < 1e-12


@pytest.fixture(scope="module")
def reference():
    """The default panel's deployment from the book's equations (3.43) alone (scipy DOP853, rtol 1e-12),
    outputs every 10 ms on [0, 12] s, with the damper + latch work W integrated along (the spring latch, which the
    book's equations take as a hinge torque)."""
    p = sp.SolarPanelParameters(latches="spring")
    t = np.linspace(0.0, 12.0, 1201)
    t, q, v, W = sp.planar_trajectory(p, 12.0, t_eval=t, rtol=1e-12, atol=1e-14)
    return p, t, q, v, W


def _equilibrium(p):
    """Rest on the latches: penetration δ* = k |θ_rest − θ_dep| / (K_L + k) (module docstring)."""
    k = np.array(p.stiffness)
    dstar = k * np.abs(np.array(p.rest) - np.array(p.deployed)) / (p.latch_stiffness + k)
    return np.array(p.deployed) + np.array(p.direction) * dstar


def test_book_equations_deploy_and_settle(reference):
    """The book's equations (3.43) alone, integrated from the stowed state: both hinges reach the latches and
    the panel comes to rest at the equilibrium penetration; the energy lost equals the work of the dampers
    and the latch at every time (energy balance)."""
    p, t, q, v, W = reference
    # at t = 12 s the last latch oscillation has decayed to ~1e-5 rad (0.0006°) about δ* ≈ 1.2e-3 rad
    np.testing.assert_allclose(q[-1], _equilibrium(p), rtol=0, atol=3e-5)
    assert np.max(np.abs(v[-1])) < 1e-4
    e = sp.energy_budget(p, q, v)
    E0 = e["total"][0]
    # stowed: ½ k1 (π/2 + π/2)² + ½ k2 (π + π)², at rest
    assert E0 == pytest.approx(0.5 * 0.15 * math.pi**2 + 0.5 * 0.08 * (2 * math.pi) ** 2, rel=1e-14)
    # E + W is an invariant of the exact motion; DOP853's error in it is proportional to the tolerance:
    # (15 ... 100) × rtol relative over this run (rtol 1e-9 ... 1e-12; the factor depends on the machine,
    # because the latch's stiff contacts make the step sequence sensitive to the last bit of LAPACK's
    # solves). At rtol 1e-12 the bound 1e-8 holds with a margin of 100 or more.
    assert np.max(np.abs(e["total"] + W - E0)) < 1e-8 * E0
    # what is not dissipated is the preload held by the latches
    E_end = 0.5 * sum(k * (d - r) ** 2 for k, d, r in zip(p.stiffness, q[-1], p.rest)) + float(
        sp.latch_of(p).potential(q[-1]))
    assert W[-1] == pytest.approx(E0 - E_end, rel=1e-6)


# ------------------------------------------------------------------------------------------------ the library
def test_book_equations_equal_crba_rnea_aba():
    """Eqs. 3.41–3.43 against the O(N) kernels at random states of random panels (gravity in the hinge plane):
    M = Pᵀ A P, rnea(q, v, 0) = Pᵀ (B φ̇² − R) with F_j = m_j g or with the base acceleration r̈_0 = −g, and
    aba(q, v, τ) = P⁻¹ A⁻¹ (P⁻ᵀ τ + R − B φ̇²), all to 1e-12 (P = ∂φ/∂θ)."""
    from multibody.algorithms.dynamics import aba, crba, rnea

    rng = np.random.default_rng(11)
    P = sp.P_ABS
    worst = 0.0
    for _ in range(10):
        g = np.array([*rng.normal(scale=5.0, size=2), 0.0])
        p = _random_params(rng, gravity=tuple(g))
        model = sp.solar_panel(p)
        for _ in range(5):
            q, v, tau = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2), rng.normal(size=2)
            phi, phid = sp.absolute_angles(q), sp.absolute_angles(v)
            A, B, R = sp.planar_hinge_equations(p, phi, phid, forces=[p.m1 * g, p.m2 * g])
            _, _, R0 = sp.planar_hinge_equations(p, phi, phid, base_acceleration=-g[:2])
            M = crba(model, q)
            bias = rnea(model, q, v, np.zeros(2))
            # aba with the applied hinge torque τ only: springs, dampers and latch are not in aba
            qdd = aba(model, q, v, tau)
            qdd_book = np.linalg.solve(P, np.linalg.solve(A, np.linalg.solve(P.T, tau) + R - B @ phid**2))
            errs = [np.max(np.abs(M - P.T @ A @ P)), np.max(np.abs(bias - P.T @ (B @ phid**2 - R))),
                    np.max(np.abs(bias - P.T @ (B @ phid**2 - R0))), np.max(np.abs(qdd - qdd_book))]
            worst = max(worst, *errs)
    assert worst < 1e-12, worst


def test_kinetic_energy_and_geometry_from_kernels():
    """½ φ̇ᵀ A φ̇ (eq. 3.42) equals the kernels' kinetic energy; the leaf centres of ``point_position`` are the
    book's r_i = r_0 − Σ_j d_ji (eq. 3.14) at random states."""
    from multibody.algorithms.dynamics import energy, point_position

    rng = np.random.default_rng(4)
    p = _random_params(rng)
    model = sp.solar_panel(p)
    for _ in range(10):
        q, v = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2)
        T, V = energy(model, q, v)
        assert T == pytest.approx(float(sp.energy_budget(p, q, v)["kinetic"][0]), rel=1e-13)
        assert V == 0.0
        r1, r2 = sp._centres(p, q[None])
        np.testing.assert_allclose(point_position(model, q, "leaf1", model.com[1])[:2], r1[0], rtol=0, atol=1e-14)
        np.testing.assert_allclose(point_position(model, q, "leaf2", model.com[2])[:2], r2[0], rtol=0, atol=1e-14)


@pytest.fixture(scope="module")
def deployment():
    return sp.deploy(sp.SolarPanelParameters(latches="spring"), t_end=12.0, n_out=1201)


def test_deploy_matches_book_equations(deployment, reference):
    """``simulate`` (ABA kernels, Model springs/dampers, latch callback) against the independent integration of
    the book's equations: the same trajectory to the integration tolerances (both rtol 1e-10)."""
    p, t, q, v, W = reference
    res = deployment
    np.testing.assert_allclose(res.t, t, rtol=0, atol=1e-12)
    assert np.max(np.abs(res.q - q)) < 1e-7
    assert np.max(np.abs(res.v - v)) < 1e-6
    assert res.info["status"] == "success"


def test_deploy_reaches_deployed_state_and_settles(deployment, reference):
    """From the stowed state, leaf 2 latches first (its relative travel is 180° under a similar torque), then
    leaf 1; the panel comes to rest on the latches; the energy the library's energies say was lost equals
    the work of the dampers and the latch (energy balance)."""
    p, t, q_ref, v_ref, W = reference
    res = deployment
    summary = sp.deployment_summary(res)
    t_latch = summary["latch_time"]
    assert np.all(np.isfinite(t_latch)) and t_latch[1] < t_latch[0] < 5.0
    assert summary["settle_time"] < 12.0     # 10.14: the late swings decay by 0.64 per 0.29 s; that at 11.8 s is 8e-5
    np.testing.assert_allclose(res.q[-1], _equilibrium(p), rtol=0, atol=3e-5)
    np.testing.assert_allclose(summary["final_angles_deg"], np.degrees(sp.absolute_angles(_equilibrium(p))),
                               rtol=0, atol=2e-3)
    # the library's energies: kinetic, and the potential of the joint springs (gravity is zero in orbit)
    e = sp.energy_budget(p, res.q, res.v, res.t)
    np.testing.assert_allclose(res.energy["kinetic"], e["kinetic"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(res.energy["potential"], e["spring"], rtol=1e-12, atol=1e-15)
    E = res.energy["kinetic"] + res.energy["potential"] + e["latch"]  # the latch is a torque callback
    E0 = E[0]
    # lost energy = damper + latch work, integrated with the reference state (W) ...
    assert np.max(np.abs(E0 - E - W)) < 1e-7 * E0
    # ... and by Simpson's rule on the outputs while only the viscous dampers act (before the first latch
    # contact the power is smooth: with 10 ms samples the quadrature error is ~1e-8 of E0)
    before = res.t <= t_latch[1]
    e_before = sp.energy_budget(p, res.q[before], res.v[before], res.t[before])
    assert np.max(np.abs(E0 - E[before] - e_before["dissipated"])) < 1e-7 * E0
    # the dampers did most of the work: W splits into the viscous work and the latch work
    assert E0 - E[-1] == pytest.approx(E0 - 0.5 * sum(k * (d - r) ** 2 for k, d, r in
                                                      zip(p.stiffness, _equilibrium(p), p.rest))
                                       - float(sp.latch_of(p).potential(_equilibrium(p))), rel=1e-4)


def test_plot_deployment_png(deployment, tmp_path):
    from matplotlib.image import imread

    path = plot_deployment(deployment, tmp_path / "panel" / "deployment.png")
    img = imread(path)
    assert img.ndim == 3 and img.shape[0] > 500 and img.shape[1] > 500
    assert img[..., :3].std() > 0.05  # not a blank canvas
    with pytest.raises(ModelError, match="carries no panel parameters"):
        from multibody.result import Result

        plot_deployment(Result(deployment.t, deployment.q, deployment.v), tmp_path / "x.png")


def test_deploy_without_latch_energy_balance():
    """No latch, springs relaxed at the deployed angles (rest = deployed), k = (0.6, 0.32) N·m/rad and the
    dampers c = (1.7, 0.02) N·m·s/rad that make the slowest linearized mode at deployment decay fastest
    (rate 0.79 1/s): the compiled path of ``simulate`` (no callback) brings the panel to rest at the deployed
    state, and the energy lost equals the damper work Σ c θ̇² integrated by Simpson's rule on the outputs
    (smooth power; 1.25 ms samples, where the quadrature error is ~1e-9 of the energy)."""
    p = sp.SolarPanelParameters(latches="none", rest1=0.0, rest2=0.0, k1=0.6, k2=0.32, c1=1.7, c2=0.02)
    res = sp.deploy(p, t_end=20.0, n_out=16001)
    assert res.info["torque_callback"] is False
    np.testing.assert_allclose(res.q[-1], p.deployed, rtol=0, atol=1e-5)
    assert np.max(np.abs(res.v[-1])) < 1e-5
    e = sp.energy_budget(p, res.q, res.v, res.t)
    E = res.energy["kinetic"] + res.energy["potential"]
    np.testing.assert_allclose(E, e["total"], rtol=1e-12, atol=1e-15)
    E0 = 0.5 * 0.6 * (math.pi / 2) ** 2 + 0.5 * 0.32 * math.pi**2  # ½ k θ_stow² per hinge
    assert E[0] == pytest.approx(E0, rel=1e-14)
    assert np.max(np.abs(E[0] - E - e["dissipated"])) < 1e-8 * E0
    assert e["dissipated"][-1] == pytest.approx(E0, rel=1e-8)  # all of it is dissipated at rest
