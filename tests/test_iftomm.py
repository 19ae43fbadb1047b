"""IFToMM benchmark problems (González, Dopico, Lugrís, Cuadrado, Multibody Syst. Dyn. 16 (2006) 179–190).

A03 reference numbers: Hairer & Wanner, *Solving ODEs II*, §VII.7 (consistent initial values, initial
accelerations and multipliers) and the IVP test set of Mazzia & Magherini (Univ. of Bari), problem
``andrews`` (andrews.f, SOLN: PSIDE with rtol = atol = 1e-14) for the solution at t = 0.03 s.
"""
import json
import math

import numpy as np
import pytest

import multibody as mb
from multibody.formulations.cartesian import cartesian_from_model
from multibody.systems import iftomm as I
from reference_andrews import AndrewsDAE

#: A03 against the IVP test set's reference at t = 0.03 s: the reference is 1.43e-9 from the converged solution of
#: its own equations in the two fast angles β, Θ (|β| ≈ 16 rad after turning at up to 1e3 rad/s; our runs at rtol
#: 1e-11 to 1e-14 agree with each other to 3e-12) and within 2e-11 in the others; 2e-9 is that plus room for our
#: error at rtol 1e-12, a few 1e-12
ANDREWS_REF_TOL = 2e-9


def test_andrews_initial_accelerations_and_multipliers():
    """HW II §VII.7 / andrews.f INITIAL: q̈(0) = (14222.44…, −10666.83…, 0, …), λ(0) = (98.566…, −6.1226…, 0, …)."""
    a = AndrewsDAE()
    g, G, _ = a.constraints(I.ANDREWS_Q0)
    assert np.abs(g).max() < 1e-15
    qdd, lam = a.accelerations(I.ANDREWS_Q0, np.zeros(7))
    assert np.allclose(qdd, I.ANDREWS_QDD0, rtol=1e-12, atol=1e-9)
    assert np.allclose(lam, I.ANDREWS_LAMBDA0, rtol=1e-12, atol=1e-11)


def test_andrews_seven_angles_at_003_match_the_test_set():
    """The seven angles at t = 0.03 s agree with the IVP test set reference to 2e-9 (abs)."""
    r = AndrewsDAE().solve(t_end=0.03, rtol=1e-12, atol=1e-12)
    err = np.abs(r["q"][-1] - I.ANDREWS_REF_003)
    assert err.max() < ANDREWS_REF_TOL, err
    assert r["position_residual"].max() < 1e-13 and r["velocity_residual"].max() < 1e-10
    # the energy balance T + spring − mom·(β − β0) is an invariant of the exact solution
    assert np.ptp(r["energy_balance"]) < 1e-10
    assert list(r["angles"]) == ["beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"]


def _hw_angles(phi):
    """The seven HW angles from the bodies' rotation angles of the planar Cartesian system (its rates and
    accelerations likewise): β = φ1, Θ = φ2 − φ1, γ = φ3, Φ = φ4 − φ5, δ = φ5, Ω = φ6 − φ7, ε = φ7."""
    return np.stack([phi[..., 0], phi[..., 1] - phi[..., 0], phi[..., 2], phi[..., 3] - phi[..., 4], phi[..., 4],
                     phi[..., 5] - phi[..., 6], phi[..., 6]], axis=-1)


def test_andrews_from_bodies_and_joints_matches():
    """A03 built from 7 bodies, 10 pins, a spring and a torque: in Cartesian coordinates (the planar system
    of seed 001 §2.5, 21 coordinates) the same initial accelerations as HW, and the same angles at t = 0.03 s
    as the IVP test set reference."""
    m, q0, v0 = I.andrews_model()
    s, emb = cartesian_from_model(m, q0, v0)
    assert emb.dim == 2 and s.nv == 21 and s.nc == 20
    a, lam = s.accelerations(0.0, s.x0, s.v0)
    assert np.allclose(_hw_angles(a[2::3]), I.ANDREWS_QDD0, rtol=1e-12, atol=1e-9)
    out = I.run_problem("A03")
    assert out["formulation"] == "cartesian"
    ang = np.array([out[k] for k in I.ANDREWS_NAMES])
    assert np.abs(ang - I.ANDREWS_REF_003).max() < ANDREWS_REF_TOL
    assert out["max_position_residual"] < 1e-12


def test_a01_pendulum_energy():
    """A01: energy conserved to 1e-8 relative (to m g L) over 10 s; the rod length stays 1 m."""
    out = I.run_problem("A01")
    assert out["energy_variation_relative_to_mgL"] < 1e-8
    assert math.hypot(out["x_P1"], out["y_P1"]) == pytest.approx(1.0, abs=1e-12)


def test_a04_bricard_redundant_one_dof():
    """A04: 6 hinges = 30 equations on 30 coordinates, Jacobian rank 29 (1 DoF); runs 10 s with the
    redundant equations, energy conserved to 1e-8 relative, residuals at round-off."""
    m, q0, v0 = I.bricard_model()
    s, emb = cartesian_from_model(m, q0, v0)
    assert emb.dim == 3 and s.nc == 30 and s.nv == 30 and s.rank0 == 29 and s.redundant
    r = mb.simulate(m, q0, v0, 10.0, formulation="cartesian", rtol=1e-12, atol=1e-12, n_out=101)
    assert np.ptp(r.energy_total) / abs(r.energy_total[0]) < 1e-8
    assert r.residuals["position"].max() < 1e-10 and r.residuals["velocity"].max() < 1e-10
    assert np.ptp(r.q[:, m.joint("J1").q_slice.start]) > 1.0     # it really moves (rod 1 swings about its hinge)


# ----------------------------------------------------------------------------------------------
# A02's energy. The benchmark measures the accuracy as the energy variation (zero for the exact motion) and
# publishes no number to reach, so the bound is the integrator's: DOP853 (and RK45) accept a step when its error
# estimate δ has ‖δ_j / (atol + rtol |x_j|)‖_rms ≤ 1, i.e. |δ_j| ≤ √n (atol + rtol |x_j|) for the n states, which
# changes E by at most √n Σ_j |∂E/∂x_j| (atol + rtol |x_j|); over the run's accepted steps (their errors added,
# none cancelled) the relative variation is at most steps · that / |E0|. The constraint-regularization error
# comes on top and must stay below it (measured 6e-9 to 1e-8 at rtol 1e-12 against bounds of 8.7e-8 and more).
# ----------------------------------------------------------------------------------------------
def a02_cartesian_energy_bound(N, steps, tol):
    """The bound above for the Cartesian run of A02 (rtol = atol = tol; 2N + 1 links of 1 kg, 1 m; states the
    planar x, y, φ of each link and their rates), with a-priori bounds of the motion: |y| ≤ 1 for the centres of
    mass, and every link's kinetic energy at most T_max = E0 − V_min (the links at their lowest), so that
    |v| ≤ √(2 T_max / m), |ω| ≤ √(2 T_max / I) (I = 1/12 about the centre). E = Σ m v²/2 + I ω²/2 + m g y, so
    Σ_j |∂E/∂x_j| (1 + |x_j|) ≤ (2N + 1) (2 m g + 2 m v_max (1 + v_max) + I ω_max (1 + ω_max))."""
    m_, I_, g = 1.0, 1.0 / 12.0, I.G0
    model, q0, v0 = I.four_bar_model(N)
    E0 = float(sum(mb.energy(model, q0, v0)))
    T_max = E0 - (-(N + 1) * m_ * g * 0.5 - N * m_ * g * 1.0)      # cranks' centres at −0.5, couplers' at −1
    v_max, w_max = math.sqrt(2 * T_max / m_), math.sqrt(2 * T_max / I_)
    per_link = 2 * m_ * g + 2 * m_ * v_max * (1 + v_max) + I_ * w_max * (1 + w_max)
    n = 6 * (2 * N + 1)
    return steps * math.sqrt(n) * tol * (2 * N + 1) * per_link / abs(E0)


def integrator_energy_bound(model, result, tol):
    """The bound above for a run in the model's own coordinates (state x = (q, v)), with the gradient of E on the
    output samples: ∂E/∂v = M(q) v, ∂E/∂q by central differences (to about 1e-8 relative: far inside a bound),
    the largest sum over the samples taken for every step (the samples of a smooth motion, 201 over 10 s)."""
    E0 = abs(float(result.energy["total"][0]))
    worst = 0.0
    for q, v in zip(result.q, result.v):
        dv = np.abs(mb.crba(model, q) @ v)
        dq = np.empty(model.nq)
        for j in range(model.nq):
            e = np.zeros(model.nq)
            e[j] = 1e-6
            dq[j] = (sum(mb.energy(model, q + e, v)) - sum(mb.energy(model, q - e, v))) / 2e-6
        worst = max(worst, float(np.abs(dq) @ (1 + np.abs(q)) + dv @ (1 + np.abs(v))))
    n = model.nq + model.nv
    return result.info["steps"] * math.sqrt(n) * tol * worst / E0


@pytest.fixture(scope="module")
def a02_cartesian():
    """``run_problem("A02", N=2)`` (Cartesian, rtol = atol = 1e-12, 10 s) and the Result of its run, kept from its
    call of ``mb.simulate``: two tests check this one run (its report, and its end against the exact reduction)."""
    runs = []
    simulate = mb.simulate

    def keep(*args, **kw):
        runs.append(simulate(*args, **kw))
        return runs[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(I.mb, "simulate", keep)
        out = I.run_problem("A02", N=2)
    assert len(runs) == 1
    return out, runs[0]


def test_a02_passes_singular_positions(a02_cartesian):
    """A02 (N = 2): the cranks turn through the horizontal (singular) position several times in 10 s,
    stay parallel (the parallelogram branch) and the energy is conserved to the integrator's bound
    (a02_cartesian_energy_bound: 3.9e-7 relative at rtol = atol = 1e-12; measured 8e-9 to 1e-8)."""
    out, _ = a02_cartesian
    assert out["singular_crossings"] >= 4
    assert out["crank_angle_spread"] < 1e-8
    assert out["energy_variation_relative"] < a02_cartesian_energy_bound(2, out["steps"], 1e-12)
    assert out["max_position_residual"] < 1e-10


def test_cli_a03_json(capsys):
    from multibody.cli import main
    assert main(["iftomm", "A03", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon", "cpu_seconds",
                "energy_balance_variation", "max_position_residual"):
        assert key in out
    assert out["beta"] == pytest.approx(15.81077119629904, abs=ANDREWS_REF_TOL)


def test_builder_models_tree_plus_cut_joints():
    """A01, A04 and A02 built with the ModelBuilder and simulated as tree + cut joints (seed 001 §3.6):
    energy conserved to 1e-8 relative over 10 s; A04's cut hinge is redundant (5 rows, rank 4) and
    agrees with the Cartesian Bricard; A02 passes its singular positions on the parallelogram branch,
    each passage reported with its time and the cut joints involved."""
    m, q0, v0 = I.pendulum_model()
    r = mb.simulate(m, q0, v0, 10.0, rtol=1e-12, atol=1e-12, n_out=101)
    assert np.ptp(r.energy["total"]) / I.G0 < 1e-8
    m, q0, v0 = I.bricard_model()
    t = np.linspace(0, 10.0, 101)
    r = mb.simulate(m, q0, v0, 10.0, formulation="constrained", rtol=1e-12, atol=1e-12, t_eval=t)
    assert np.ptp(r.energy["total"]) / abs(r.energy["total"][0]) < 1e-8
    assert r.residuals["J6"].max() < 1e-10
    rc = mb.simulate(m, q0, v0, 1.0, formulation="cartesian", rtol=1e-12, atol=1e-12, t_eval=t[:11])
    P_tree = np.array([mb.point_position(m, r.q[k], "rod3", (0, 0, 1.0)) for k in range(11)])
    P_cart = np.array([mb.point_position(m, rc.q[k], "rod3", (0, 0, 1.0)) for k in range(11)])
    assert np.abs(P_tree - P_cart).max() < 1e-7
    m, q0, v0 = I.four_bar_model(2)
    r = mb.simulate(m, q0, v0, 10.0, formulation="constrained", rtol=1e-12, atol=1e-12, n_out=201,
                    al_eps=I.A02_AL_EPS["constrained"])
    cranks = r.q[:, [m.joint(f"A{k}").q_slice.start for k in range(3)]]
    assert np.abs(cranks - cranks[:, :1]).max() < 1e-8
    assert np.ptp(r.energy["total"]) / r.energy["total"][0] < integrator_energy_bound(m, r, 1e-12)
    ev = r.info["singular_configurations"]
    assert len(ev) >= 4 and all(set(e["joints"]) <= {"C1", "C2"} and e["joints"] for e in ev)


def test_andrews_built_with_the_builder_tree_plus_cut_joints():
    """A03 from the ModelBuilder (7 revolute tree joints, 3 cut pins, spring, effort on O): the initial
    accelerations of HW II §VII.7 and the IVP test-set angles at t = 0.03 s (to 2e-9)."""
    from multibody.formulations.constrained import ConstrainedTree
    m, q0, v0 = I.andrews_model()
    vd, _ = ConstrainedTree(m).accelerations(0.0, q0, v0)
    acc = I.andrews_angles_from_model(m, vd) - I.andrews_angles_from_model(m, np.zeros(m.nq))
    assert np.allclose(acc, I.ANDREWS_QDD0, rtol=1e-12, atol=1e-8)
    r = mb.simulate(m, q0, v0, 0.03, formulation="constrained", rtol=1e-12, atol=1e-12, n_out=4)
    assert np.abs(I.andrews_angles_from_model(m, r.q[-1]) - I.ANDREWS_REF_003).max() < ANDREWS_REF_TOL


# ----------------------------------------------------------------------------------------------
# A05 stiff flyball governor.  Data: the library's specification as quoted by MBS-BOS
# (rehabenggroup.github.io/MBSbenchmarksInOpenSim, "MBS Benchmark A05: Stiff Flyball Governor") and the
# point coordinates of its figure (see the iftomm module docstring).  No numerical reference values of
# s(t) are published (plots only), so the checks below are independent hand computations and the
# invariants of the exact solution.
# ----------------------------------------------------------------------------------------------
def _flyball_hand_values():
    """Initial hinge acceleration of rod 1 and the axial angular momentum, by hand from the spec data:
    rod 1 + its point mass about its hinge A = (a, 0, 1) (a = 0.05 m), 30° below the horizontal, the
    shaft spinning at ω = 2π with ω̇ = 0 (each rod's J_yz = 0), all hinge rates zero:
    J_yy θ̈ = m g r_cx − ω² J_xz + m ω² a r_cz  (moments about A, which moves on a circle of radius a)."""
    rho, g, a, om = 3000.0, 9.81, 0.05, 2 * math.pi
    lr, wr, hr = 1.0, 0.01, 0.01
    mr, mp = rho * lr * wr * hr, 5.0
    m = mr + mp
    be = math.radians(30.0)
    # about the hinge, rod axes (x along the rod, y = hinge axis, z' ⟂): box about its end + point mass
    JA = np.diag([mr * (wr ** 2 + hr ** 2) / 12,
                  mr * (lr ** 2 / 3 + hr ** 2 / 12) + mp * lr ** 2,
                  mr * (lr ** 2 / 3 + wr ** 2 / 12) + mp * lr ** 2])
    c, s = math.cos(be), math.sin(be)
    R = np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])          # rod x → (cos β, 0, −sin β)
    J = R @ JA @ R.T
    dc = (mr * lr / 2 + mp * lr) / m
    rc = dc * np.array([c, 0.0, -s])
    thdd = (m * g * rc[0] - om ** 2 * J[0, 2] + m * om ** 2 * a * rc[2]) / J[1, 1]
    # axial moment of inertia of the whole governor about the shaft axis at t = 0
    ms, msl = rho * 1.0 * 0.01 * 0.01, rho * 0.1 ** 3
    Izz = ms * (0.01 ** 2 + 0.01 ** 2) / 12 + msl * 0.1 ** 2 / 6
    Izz += 2 * (mp * (a + lr * c) ** 2
                + mr * ((a + lr / 2 * c) ** 2 + lr ** 2 * c ** 2 / 12 + hr ** 2 * s ** 2 / 12 + wr ** 2 / 12))
    return thdd, Izz * om


def test_a05_initial_state_and_accelerations_by_hand():
    """A05 at t = 0: both springs at their 0.5 m rest length (the equilateral hinge–slider–rod-midpoint
    triangle of the spec's figure), so the slider falls freely (s̈ = −g), the shaft keeps its speed
    (ω̇ = 0) and the hinges accelerate as the hand formula of _flyball_hand_values says (to 1e-12)."""
    from multibody.formulations.tree_rhs import tree_rhs
    from multibody.model.packing import tree_params
    m, q0, v0 = I.flyball_model()
    masses = dict(zip(m.body_names, m.mass))          # ρ = 3000 kg/m³ boxes; rods carry the 5 kg point masses
    assert [masses[n] for n in ("shaft", "slider", "rod1", "rod2")] == pytest.approx([0.3, 3.0, 5.3, 5.3], rel=1e-14)
    assert np.allclose(I.flyball_spring_lengths(m, q0), 0.5, rtol=0, atol=1e-15)
    out = np.empty(2 * m.nv)
    tree_rhs(0.0, np.concatenate([q0, v0]), tree_params(m), out)
    acc = out[m.nq:]
    thdd, _ = _flyball_hand_values()
    assert acc[m.joint("shaft").v_slice.start] == pytest.approx(0.0, abs=1e-12)
    assert acc[m.joint("slider").v_slice.start] == pytest.approx(-9.81, rel=1e-13)
    assert acc[m.joint("hinge1").v_slice.start] == pytest.approx(thdd, rel=1e-12)
    assert acc[m.joint("hinge2").v_slice.start] == pytest.approx(-thdd, rel=1e-12)
    assert thdd < 0          # the centrifugal moment wins over gravity: the balls start to rise


def test_a05_one_second_invariants():
    """A05 over 1 s (DOP853, rtol 1e-9): the axial angular momentum equals the hand value I_zz·2π and is
    conserved to 1e-12; T + V + damper work is conserved to 5e-9 relative (measured 5.3e-10, mostly
    Simpson error of the damper work); the mechanism stays mirror-symmetric; s rises from 0.5 to its
    first maximum ≈ 0.74 m near t = 0.5 s and comes back near 0.5 at t = 1 s (one oscillation ≈ 1 s)."""
    out = I.run_problem("A05", t_end=1.0)
    _, L0 = _flyball_hand_values()
    assert out["angular_momentum_z"] == pytest.approx(L0, rel=1e-13)
    assert out["angular_momentum_drift_relative"] < 1e-12
    assert out["energy_balance_variation_relative"] < 5e-9
    assert 0 < out["damper_work"] < 1e-2
    assert 0.70 < out["s_max"] < 0.78 and 0.49 < out["s_min"] <= 0.5      # ±0.04 about the plots' 0.74
    m, q0, v0 = I.flyball_model()
    r = mb.simulate(m, q0, v0, 1.0, rtol=1e-9, atol=1e-9, n_out=101)
    h1, h2 = m.joint("hinge1").q_slice.start, m.joint("hinge2").q_slice.start
    assert np.abs(r.q[:, h1] + r.q[:, h2]).max() < 1e-10
    assert np.abs(I.flyball_spring_lengths(m, r.q) - 0.5).max() < 1e-3      # stiff: the rods barely stretch


def test_cli_a05_json(capsys):
    from multibody.cli import main
    assert main(["iftomm", "A05", "--t-end", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("s", "s_min", "s_max", "shaft_speed", "cpu_seconds", "angular_momentum_drift_relative",
                "energy_balance_variation_relative", "t", "s_t"):
        assert key in out
    assert out["t"] == [0.0, 0.5] and out["s_t"][0] == 0.5


def _flyball_relative_equilibrium(om=2 * math.pi):
    """Steady rotation of the governor at ω (hand statics in the rotating frame, spec data): unknowns the
    rods' angle β below the horizontal and the slider height s; equations: moment about hinge A of
    gravity, centrifugal forces (−ω² J_xz + m ω² a r_cz, as in _flyball_hand_values) and the spring
    K(l − 0.5) acting at the rod midpoint = 0, and the slider's vertical balance 2 F Δz/l = m_slider g."""
    from scipy.optimize import fsolve
    rho, g, a, K, l0 = 3000.0, 9.81, 0.05, 8e5, 0.5
    lr, wr, hr = 1.0, 0.01, 0.01
    mr, mp, msl = rho * lr * wr * hr, 5.0, rho * 0.1 ** 3
    m = mr + mp
    JA = np.diag([mr * (wr ** 2 + hr ** 2) / 12, mr * (lr ** 2 / 3 + hr ** 2 / 12) + mp * lr ** 2,
                  mr * (lr ** 2 / 3 + wr ** 2 / 12) + mp * lr ** 2])
    dc = (mr * lr / 2 + mp * lr) / m

    def residual(x):
        be, s = x
        c, sn = math.cos(be), math.sin(be)
        R = np.array([[c, 0, sn], [0, 1, 0], [-sn, 0, c]])
        J = R @ JA @ R.T
        u = np.array([c, 0.0, -sn])
        d = np.array([a, 0.0, 1.0]) + 0.5 * u - np.array([a, 0.0, s])     # slider point E → rod midpoint C
        ln = np.linalg.norm(d)
        F = K * (ln - l0)
        Fc = -F * d / ln
        r = 0.5 * u
        rc = dc * u
        My = m * g * rc[0] - om ** 2 * J[0, 2] + m * om ** 2 * a * rc[2] + (r[2] * Fc[0] - r[0] * Fc[2])
        return [My, -msl * g + 2 * F * d[2] / ln]

    def jacobian(x, d=1e-6):   # central differences: their O(d²) relative error does not matter to a bound
        return np.column_stack([(np.array(residual(x + d * e)) - np.array(residual(x - d * e))) / (2 * d)
                                for e in np.eye(2)])

    # fsolve brings the point near the root, whatever its report says; Newton steps then converge (quadratically up
    # to the differences' error, linearly at a rate of 1e-8 after) and the caller bounds the distance to the root
    # by |F(x)| / σ_min(J)
    x = fsolve(residual, [math.radians(10.0), 0.6], xtol=1e-12)
    for _ in range(3):
        x = x - np.linalg.solve(jacobian(x), np.array(residual(x)))
    return x[0], x[1], np.linalg.norm(residual(x)) / np.linalg.svd(jacobian(x), compute_uv=False).min()


def _flyball_amended_potential_minimum(om=2 * math.pi):
    """The same relative equilibrium found another way: the minimum over (β, s) of the amended potential
    V − ω² I_zz/2 (Routh; V = gravity + springs, I_zz the axial moment of inertia of rods and point masses as in
    _flyball_hand_values), by BFGS on its exact gradient (sympy). Returns (β, s, Hessian there)."""
    import sympy as sp
    from scipy.optimize import minimize
    rho, g, a, K, l0 = 3000.0, 9.81, 0.05, 8e5, 0.5
    lr, wr, hr = 1.0, 0.01, 0.01
    mr, mp, msl = rho * lr * wr * hr, 5.0, rho * 0.1 ** 3
    m = mr + mp
    dc = (mr * lr / 2 + mp * lr) / m
    be, s = sp.symbols("beta s")
    c, sn = sp.cos(be), sp.sin(be)
    length = sp.sqrt((lr / 2 * c) ** 2 + (1 - lr / 2 * sn - s) ** 2)      # rod midpoint − slider point (a, 0, s)
    V = 2 * m * g * (1 - dc * sn) + msl * g * s + K * (length - l0) ** 2
    Izz = 2 * (mp * (a + lr * c) ** 2 + mr * ((a + lr / 2 * c) ** 2 + lr ** 2 * c ** 2 / 12 + hr ** 2 * sn ** 2 / 12
                                              + wr ** 2 / 12))
    W = V - om ** 2 * Izz / 2
    f = sp.lambdify([(be, s)], W)
    grad = sp.lambdify([(be, s)], [sp.diff(W, be), sp.diff(W, s)])
    hess = sp.lambdify([(be, s)], sp.hessian(W, (be, s)))
    # BFGS brings the point near the minimum (whatever its success flag says: near a gradient of 1e-9 it may stop
    # with "precision loss", depending on the machine's rounding); Newton steps on the exact Hessian then converge
    # quadratically, and the test bounds the distance to the minimum from the gradient left (see the caller)
    x = minimize(f, [math.radians(10.0), 0.6], jac=lambda x: np.array(grad(x)), method="BFGS",
                 options={"gtol": 1e-10}).x
    for _ in range(3):
        x = x - np.linalg.solve(np.array(hess(x), dtype=float), np.array(grad(x), dtype=float))
    return x[0], x[1], np.array(hess(x), dtype=float), np.array(grad(x), dtype=float)


def test_a05_steady_rotation_matches_hand_statics():
    """A05 turning steadily at 2π rad/s: the hand statics (moments about the hinge) give β* ≈ 17.92° below the
    horizontal and s* ≈ 0.6922 m; the minimum of the amended potential (an energy argument, computed separately)
    is the same point, a stable relative equilibrium (positive definite Hessian); at that state (hinge rates 0)
    the model's accelerations vanish (measured 3e-12) — a relative equilibrium of the free-shaft governor, about
    which s(t) oscillates."""
    from multibody.formulations.tree_rhs import tree_rhs
    from multibody.model.packing import tree_params
    be, s, root_bound = _flyball_relative_equilibrium()
    be2, s2, hess, grad = _flyball_amended_potential_minimum()
    # each found point is checked, not the solvers' flags: near a minimum with a positive definite Hessian H the
    # point lies within |∇W| / λ_min(H) of it (to second order), and near a regular root within |F| / σ_min(J)
    lam = np.linalg.eigvalsh(hess)
    assert np.all(lam > 0)
    min_bound = np.linalg.norm(grad) / lam.min()
    assert min_bound < 1e-11 and root_bound < 1e-11, (min_bound, root_bound)
    # the two points agree to those bounds and the rounding of the two computations (1e-12 ≫ 1e4 eps · |x|)
    assert abs(be2 - be) < min_bound + root_bound + 1e-12 and abs(s2 - s) < min_bound + root_bound + 1e-12, (
        be2 - be, s2 - s)
    m, q0, v0 = I.flyball_model()
    q = q0.copy()
    q[m.joint("slider").q_slice] = s
    q[m.joint("hinge1").q_slice] = be - math.radians(30.0)
    q[m.joint("hinge2").q_slice] = -(be - math.radians(30.0))
    out = np.empty(2 * m.nv)
    tree_rhs(0.0, np.concatenate([q, v0]), tree_params(m), out)
    assert np.abs(out[m.nq:]).max() < 1e-9


# ----------------------------------------------------------------------------------------------
# A02 against its exact one-degree-of-freedom reduction (tests/reference_four_bar.py), A04's point P3, and A05 in
# Cartesian coordinates.
# ----------------------------------------------------------------------------------------------
def test_a02_reference_reduction_is_exact():
    """The reference's DOP853 solution (rtol 1e-13) against the time of flight by quadrature: the first two
    passages of the horizontal at t(φ = 0) and t(φ = −π) agree to 1e-11 s (100× its tolerance), and its energy at
    1001 interpolated samples stays constant to 1e-11 relative (measured 2.5e-12, the interpolant's error)."""
    import reference_four_bar as R4
    ref = R4.solve()
    tq = [R4.passage_time(0.0), R4.passage_time(-math.pi)]
    assert np.abs(ref.t_events[0][:2] - tq).max() < 1e-11
    t = np.linspace(0.0, 10.0, 1001)
    phi, phidot = ref.sol(t)
    E = R4.energy(phi, phidot)
    assert np.ptp(E) / E[0] < 1e-11
    assert len(ref.t_events[0]) == 10          # the cranks pass the horizontal ten times in 10 s


def _a02_errors(formulation, rtol, r=None):
    """Crank angle and energy of A02 (N = 2) at t = 10 s against the exact reduction: (angle error in rad,
    relative energy error). Output every 0.25 s (the crank turns < π between samples, so the Cartesian
    coordinates' angles unwrap); the last sample is the last step's end, not an interpolated state. ``r``: that
    run made already (the output times do not change DOP853's steps: its last state is the same)."""
    import reference_four_bar as R4
    m, q0, v0 = I.four_bar_model(2)
    if r is None:
        r = mb.simulate(m, q0, v0, 10.0, formulation=formulation, rtol=rtol, atol=rtol, n_out=41,
                        al_eps=I.A02_AL_EPS[formulation])
    phi = math.pi / 2 + r.q[-1, m.joint("A0").q_slice.start]
    E = r.energy["total"]
    return abs(phi - R4.solve().sol(10.0)[0]), abs(E[-1] - E[0]) / E[0]


def test_a02_converges_to_the_exact_reduction_tree_plus_cut_joints():
    """A02 through its ten singular passages in tree + cut-joint coordinates converges with the tolerance: DOP853's
    global error is proportional to rtol (tolerance proportionality), measured 57–107 rtol for the crank angle
    and 2–7 rtol for the energy at t = 10 s at rtol = 1e-8, 1e-10, 1e-12; bounds 1000 rtol and 100 rtol (≥ 9×).
    Before the position projection polished to round-off the passages set the error (2e-7 rad at every rtol)."""
    errs = {}
    for rtol in (1e-8, 1e-10, 1e-12):
        da, de = _a02_errors("constrained", rtol)
        assert da < 1000 * rtol and de < 100 * rtol, (rtol, da, de)
        errs[rtol] = da
    assert errs[1e-12] < 1e-9 and errs[1e-12] < errs[1e-8] / 100


def test_a02_cartesian_reaches_the_exact_reduction(a02_cartesian):
    """A02 in Cartesian coordinates at rtol = 1e-12: crank angle 7e-10 rad and energy 2.3e-11 off the exact reduction
    at t = 10 s (measured); bounds 3e-9 and 1e-10 (≥ 4×).  Below rtol ≈ 1e-10 the singular passages, not the
    integrator, set this error: round-off in the absolute coordinates (~3 m) amplified near the passages (see
    ``multibody.systems.iftomm.A02_AL_EPS``); test_a02_cartesian_converges_with_rtol shows the larger rtol.
    The run is run_problem's (the same model, tolerances and ``al_eps``)."""
    da, de = _a02_errors("cartesian", 1e-12, a02_cartesian[1])
    assert da < 3e-9 and de < 1e-10, (da, de)


@pytest.mark.slow
def test_a02_cartesian_converges_with_rtol():
    """A02 in Cartesian coordinates at rtol = 1e-8 and 1e-10: crank angle 2 and 11 rtol, energy 0.1 and 0.5 rtol
    off the exact reduction at t = 10 s (measured); bounds 1000 rtol and 100 rtol."""
    for rtol in (1e-8, 1e-10):
        da, de = _a02_errors("cartesian", rtol)
        assert da < 1000 * rtol and de < 100 * rtol, (rtol, da, de)


def test_a04_reports_p3_the_hinge_of_rods_2_and_3():
    """A04's reported point is the benchmark's P3, the hinge between rods 2 and 3 at (1, −1, 0) at t = 0 (its
    figure), and it moves as the benchmark's reference curves show (González et al. 2006, reproduced by MBS-BOS,
    rehabenggroup.github.io/MBSbenchmarksInOpenSim, A04: 'P3 displacements'; read off that plot to ±0.01): x falls
    from 1 to −1 at t = 2.5 s and is back at 1 at 5 s; z dips to −0.5 and y rises to −0.87 at t = 1.25 s, y stays
    at or above −1.  Bounds 0.02 (twice the reading precision). ``run_problem`` reports P3 of the same run
    (rtol = atol = 1e-12; the output times do not change DOP853's steps, and the last output is the last step's
    state): equal to round-off, 1e-12 on |P3| <= 1."""
    m, q0, v0 = I.bricard_model()
    np.testing.assert_allclose(I.bricard_p3(m, q0), [1.0, -1.0, 0.0], rtol=0, atol=1e-15)
    t = np.linspace(0.0, 5.0, 201)
    r = mb.simulate(m, q0, v0, 5.0, formulation="constrained", rtol=1e-12, atol=1e-12, t_eval=t)
    P = np.array([I.bricard_p3(m, q) for q in r.q])
    k125, k25 = np.searchsorted(t, 1.25), np.searchsorted(t, 2.5)
    assert abs(P[k25, 0] + 1.0) < 0.02 and abs(P[-1, 0] - 1.0) < 0.02
    assert abs(P[:, 2].min() + 0.5) < 0.02 and abs(t[P[:, 2].argmin()] - 1.25) < 0.05
    assert abs(P[k125, 1] + 0.87) < 0.02 and P[:, 1].min() > -1.0 - 0.02
    out = I.run_problem("A04", t_end=5.0, formulation="constrained")
    assert [out["x_P3"], out["y_P3"], out["z_P3"]] == pytest.approx(P[-1], abs=1e-12)
    assert "x_P" not in out


def test_a02_reports_b0_position_and_velocity():
    """A02's reference quantities are the position and velocity of B0 (x and y; the library's specification): at
    t = 0, B0 = (0, 1) moving at (1, 0) m/s; at the end, B0 = (cos φ, sin φ) and its velocity φ̇ (−sin φ, cos φ)
    with the crank angle φ the run reports (in 1e-6 s B0 moves 1e-6 m and its velocity changes by ~g·1e-6 = 1e-5 m/s:
    bound 1e-5 after 1e-6 s; at the end, the same state: round-off)."""
    out = I.run_problem("A02", t_end=1e-6, formulation="constrained")
    assert [out["x_B0"], out["y_B0"], out["vx_B0"], out["vy_B0"]] == pytest.approx([0.0, 1.0, 1.0, 0.0], abs=1e-5)
    out = I.run_problem("A02", t_end=0.5, formulation="constrained")
    ph = out["crank_angle"]
    assert [out["x_B0"], out["y_B0"]] == pytest.approx([math.cos(ph), math.sin(ph)], abs=1e-12)
    w = out["vx_B0"] / -math.sin(ph)
    assert out["vy_B0"] == pytest.approx(w * math.cos(ph), abs=1e-12)


def test_a05_cartesian_refuses_a_run_of_tens_of_minutes(monkeypatch):
    """A05 in Cartesian coordinates over its 10 s: the spring-dampers make it stiff (fastest decay rate 8.1e3 1/s,
    the same as the tree's linearized equations by finite differences), an explicit method needs ≥ 13 000 steps
    of a Python right-hand side: refused before any simulation starts, with the reason and what fits."""
    from multibody.formulations.tree_rhs import tree_rhs
    from multibody.model.packing import tree_params
    m, q0, v0 = I.flyball_model()
    P = tree_params(m)
    x = np.concatenate([q0, v0])
    J = np.zeros((x.size, x.size))
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = 1e-6
        fp, fm = np.empty(x.size), np.empty(x.size)
        tree_rhs(0.0, x + e, P, fp)
        tree_rhs(0.0, x - e, P, fm)
        J[:, k] = (fp - fm) / 2e-6
    rate = float(np.max(-np.linalg.eigvals(J).real))
    assert I.flyball_decay_rate(m, q0, v0) == pytest.approx(rate, rel=1e-4)

    def no_simulation(*a, **k):
        raise AssertionError("simulate was called")
    monkeypatch.setattr(mb, "simulate", no_simulation)
    with pytest.raises(mb.errors.ModelError, match="Cartesian coordinates.*stiff|decaying at") as exc:
        I.run_problem("A05", formulation="cartesian")
    assert exc.value.element == "formulation" and "\n" not in str(exc.value)


def test_a05_cartesian_short_run_agrees_with_the_tree():
    """A05 for 0.02 s in Cartesian coordinates (allowed: ~700 evaluations) agrees with the tree formulation: both
    DOP853 at rtol = atol = 1e-9, each step's error below rtol |x| + atol, over the two runs' steps (~90 each, a
    few oscillations of the stiff spring, which do not amplify errors): the bound is that sum for s (|s| < 1) and
    for the shaft speed (|ω| < 10).  No floating-point warning escapes (the rejected trial steps of the stiff
    start once overflowed)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        a = I.run_problem("A05", formulation="cartesian", t_end=0.02)
    b = I.run_problem("A05", t_end=0.02)
    steps = a["steps"] + b["steps"]
    assert abs(b["s"]) < 1.0 and abs(b["shaft_speed"]) < 10.0
    assert a["formulation"] == "cartesian" and abs(a["s"] - b["s"]) < steps * (1e-9 * 1.0 + 1e-9)
    assert abs(a["shaft_speed"] - b["shaft_speed"]) < steps * (1e-9 * 10.0 + 1e-9)


def test_cli_a05_cartesian_refuses_in_one_line(capsys):
    """``multibody iftomm A05 --formulation cartesian``: one line on stderr saying why and what fits, status 2."""
    from multibody.cli import main
    assert main(["iftomm", "A05", "--formulation", "cartesian"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "Cartesian coordinates" in err and "formulation 'tree'" in err
