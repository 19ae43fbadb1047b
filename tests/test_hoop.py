"""The heavy hoop rolling on the curved profile of seed 000 (Sec. 3–4), integrated with stabilized constraints."""
import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.optimize import curve_fit

from multibody.errors import ModelError
from multibody.formulations.stabilized import max_residual
from multibody.systems.hoop_on_profile import PAPER, HoopOnProfile

M, R, G = PAPER["M"], PAPER["r"], PAPER["g"]


@pytest.fixture(scope="module")
def hoop():
    return HoopOnProfile()


def p(x):
    """The profile of seed 000, Sec. 4: z = x⁴ + a x³ − b x² − a x − (1 − b), a = 0.13, b = 0.5."""
    a, b = PAPER["a"], PAPER["b"]
    return x**4 + a * x**3 - b * x**2 - a * x - (1 - b)


def dp(x):
    a, b = PAPER["a"], PAPER["b"]
    return 4 * x**3 + 3 * a * x**2 - 2 * b * x - a


def d2p(x):
    a, b = PAPER["a"], PAPER["b"]
    return 12 * x**2 + 6 * a * x - 2 * b


def test_relative_degrees_and_A_phi_match_eq_3_11(hoop):
    """Automatic derivation gives r = (2, 1, 1, 1) (seed 000, Sec. 3) and, on the manifold, the matrix A and
    the free terms of eqs. (3.7)–(3.11) (rows 1 and 3 there are multiplied by M), det A = −2 d ‖∇h‖ θ̇."""
    assert hoop.dae.relative_degrees == (2, 1, 1, 1)
    assert ("f1", 1) in hoop.dae.dropped
    for xa, speed in [(-0.8, 1.1), (-0.2, -2.0), (0.4, 0.3), (0.9, -0.05)]:
        X = hoop.initial_state(xa, speed)
        E0 = hoop.energy(X)
        A, phi = hoop.system.A_phi(X, hoop.params(0.0, E0))
        x, z, th, xd, zd, thd, al = X
        # h = p(x) − z (∇h points from the centre to the contact)
        hx, hz = dp(xa), -1.0
        H2 = np.array([[d2p(xa), 0.0], [0.0, 0.0]])
        v = np.array([xd, zd])
        chi = np.array([-math.sin(al), math.cos(al)])
        nh = math.hypot(hx, hz)
        d = nh - chi @ H2 @ chi * R
        A_paper = np.array([[hx, hz, 0, (v @ H2 @ chi) * M * R],
                            [xd, zd, thd, 0],
                            [-math.sin(al), math.cos(al), 1 / R, 0],
                            [0, 0, 0, d]])
        phi_paper = np.array([-M * G * hz + M * (v @ H2 @ v), 0.0, -M * G * math.cos(al), -(v @ H2 @ chi)])
        scale = np.array([M, 1, M, 1])  # row multipliers of eq. (3.11)
        assert np.allclose(A * scale[:, None], A_paper, rtol=1e-12, atol=1e-12)
        assert np.allclose(phi * scale, phi_paper, rtol=1e-12, atol=1e-11)
        assert np.linalg.det(A * scale[:, None]) == pytest.approx(-2 * d * nh * thd, rel=1e-9)


def test_turning_point_reactions_analytic_limit(hoop):
    """At θ̇ = 0 on the manifold the solve returns R*_x, R*_z, Q*, U* = 0 (seed 000, Sec. 3) to 1e-6, and
    the reactions of nearby moving states converge to it (continuity through the singular point)."""
    for xa in (-0.95, -0.6, 0.2, 0.7, 0.95):
        X = hoop.initial_state(xa, 0.0)
        N = hoop.reactions(X, lam=1e3)
        Nstar = hoop.turning_point_reactions(X)
        assert np.all(np.isfinite(N))
        assert np.max(np.abs(N - Nstar)) < 1e-6
        # closed form of the seed at this point, written out from the profile
        al = X[6]
        nh = math.hypot(dp(xa), 1.0)
        ref = [M * G * (-1.0) * math.cos(al) / (2 * nh), M * G / 2 + M * G * (-1.0) * math.sin(al) / (2 * nh),
               M * G * R * math.cos(al) / 2, 0.0]
        assert np.max(np.abs(N - ref)) < 1e-6
        prev = None
        for speed in (1e-2, 1e-3, 1e-4, 1e-5):
            for sgn in (1, -1):
                Nm = hoop.reactions(hoop.initial_state(xa, sgn * speed), lam=1e3)
                dev = np.max(np.abs(Nm - Nstar))
                assert dev < 50 * speed  # N(X) → N* linearly in the speed: continuous, no blow-up
            prev = dev
        assert prev < 1e-3


def test_sec4_rk2_h1e5_lambda1e3_through_turning_points(hoop):
    """Seed 000, Sec. 4 / Fig. 3: RK2, h = 1e-5, λ_i = 1e3 → max_i |f_i| < 7e-9 in steady state. Short window
    (3.4 time units from rest at x_a = −0.9: turning points at t ≈ 0, 1.64, 3.28); no NaN anywhere."""
    X0 = hoop.initial_state(-0.9, 0.0)
    res = hoop.simulate(X0, 3.4, lam=1e3, method="rk2", h=1e-5, save_every=5)
    assert np.all(np.isfinite(res.q))
    turns = np.sum(np.diff(np.sign(res.q[1:, 5])) != 0)
    assert turns >= 2
    worst, by = max_residual(res)
    assert worst < 7e-9, by
    # the reactions along the run (recorded at every saved state) stay bounded: |R|, |Q|/r of the order of M g
    Ns = res.reactions["N"]
    assert np.all(np.isfinite(Ns)) and np.max(np.abs(Ns[:, :2])) < 100 and np.max(np.abs(Ns[:, 2])) < 100 * R
    E0 = res.info["E0"]
    assert np.allclose(Ns[::50], [hoop.reactions(X, lam=1e3, E0=E0) for X in res.q[::50]], rtol=1e-12, atol=1e-12)


def test_sec4_rk2_h1e6(hoop):
    """Seed 000, Sec. 4: the same λ_i = 1e3 with h = 1e-6 → max_i |f_i| < 5e-12. Short window: the second half
    of one time unit from rest at x_a = −0.9 (the descent into the left well and over the bump).

    The residual of the stabilized RK2 run scales exactly like h² (checked below over a whole pass, ratio 100
    for h = 1e-5 → 1e-6): over a whole pass, including the fast passage of the right well, the maximum is
    2.1e-11 at h = 1e-6 (2.1e-9 at h = 1e-5), so the seed's 5e-12 holds on this window, not over a full pass.
    """
    X0 = hoop.initial_state(-0.9, 0.0)
    res = hoop.simulate(X0, 1.0, lam=1e3, method="rk2", h=1e-6, save_every=10)
    worst, by = max_residual(res)
    assert worst < 5e-12, by
    # h² scaling over the first second (both runs saved at the same times)
    res5 = hoop.simulate(X0, 1.0, lam=1e3, method="rk2", h=1e-5, save_every=1)
    w5 = max_residual(res5, t_from=0.0)[0]
    w6 = max_residual(res, t_from=0.0)[0]
    assert w5 / w6 == pytest.approx(100.0, rel=0.05)


@pytest.mark.parametrize("lam", [1.0, 10.0, 1e2, 1e4, 1e5])
def test_sec4_lambda_range(hoop, lam):
    """Seed 000, Sec. 4: for any λ_i in [1, 1e5] with h = 1e-5 the steady-state residual is < 1e-7 (window
    of 2 time units containing the turning point at t ≈ 1.64)."""
    X0 = hoop.initial_state(-0.9, 0.0)
    res = hoop.simulate(X0, 2.0, lam=lam, method="rk2", h=1e-5, save_every=1 if lam >= 1e4 else 5)
    worst, by = max_residual(res)
    assert worst < 1e-7, by


def test_fig2_decay_rate(hoop):
    """Seed 000, Fig. 2: residuals from perturbed initial data decay faster with λ = 100 than λ = 10; the
    measured rates equal λ (f2, f3, f4: exp(−λt), eq. 2.5; f1: (c1 + c2 t) exp(−λt), eq. 2.4)."""
    X1 = hoop.initial_state(-0.5, 1.5)
    E0 = hoop.energy(X1)
    Xp = X1 + np.array([0, 1e-4, 0, 1e-4, 0, 1e-2, 1e-4])
    at = {}
    for lam in (10.0, 100.0):
        res = hoop.simulate(Xp, 10 / lam, lam=lam, method="rk2", h=1e-5, save_every=10, E0=E0)
        sel = (res.t > 1 / lam) & (res.t < 8 / lam)
        t = res.t[sel]
        for k in ("f2", "f3", "f4"):
            slope = np.polyfit(t, np.log(np.abs(res.residuals[k][sel])), 1)[0]
            assert slope == pytest.approx(-lam, rel=0.01), k
        f1 = res.residuals["f1"][sel]

        def model(t, c1, c2, kappa):
            return (c1 + c2 * t) * np.exp(-kappa * t)

        popt, _ = curve_fit(model, t, f1, p0=(f1[0], 0.0, lam))
        assert popt[2] == pytest.approx(lam, rel=0.01)
        at[lam] = np.max(np.abs([res.residuals[k][np.searchsorted(res.t, 0.1) - 1] for k in res.residuals]))
    assert at[100.0] < 1e-3 * at[10.0]


def test_fig4_lambda0_leaves_profile(hoop, tmp_path):
    """Seed 000, Sec. 4, Fig. 4: with λ_i = 0 (the plain eq. 2.3, solved exactly: ``solver="exact"``) and
    initial residuals < 1e-6 the contact point leaves the profile visibly within two passes; λ_i = 1e3 with the
    same exact solve keeps it on the profile.

    The initial error is a normal velocity n = 1e-3 of the centre (``fig4_runs``): f1 = f3 = f4 = 0 and
    f2 = M n²/2 = 5e-7, i.e. the seed's ``max_i |δ_i(0)| < 1e-6``, but ``ḟ1(0) = ‖∇h‖ n = 2.1e-3``, and with λ = 0
    eq. (2.2) gives ``f1 = ḟ1(0) t``: 1.4e-2 (more than the radius r = 0.01) after two passes. The plain
    solve also fails at the first turning point: its residual part ~ n/θ̇ holds the hoop at the top of its swing
    (R = (0, M g), horizontal drift at 0.85 n) — the same with DOP853, so it is the plain equations, not the
    step. Numbers measured with RK2, h = 1e-5 (seed 000, Sec. 4); turning points of the consistent run at
    t = 1.568, 3.205, 4.842, 6.479.
    """
    from multibody.systems.hoop_on_profile import fig4_runs, fig4_summary
    from multibody.viz.hoop import plot_fig4

    runs, E0 = fig4_runs(hoop)
    plain0, reg0, plain3 = runs.values()
    X0 = plain0.q[0]
    f0 = hoop.residuals(X0, E0)
    assert np.max(np.abs(f0)) < 1e-6 and f0[1] == pytest.approx(M * 1e-6 / 2, rel=1e-6)
    xa0 = hoop.contact_point(X0)[0]
    g1 = math.hypot(dp(xa0), 1.0) * 1e-3  # ḟ1(0) = ‖∇h‖ n
    # λ = 0, plain solve: f1 = ḟ1(0) t (eq. 2.2), f2..f4 constant
    r = plain0.residuals
    assert np.max(np.abs(r["f1"] - g1 * plain0.t)) < 1e-7 * g1 * plain0.t[-1]
    assert r["f1"][-1] > 1e-2
    for k in ("f2", "f3", "f4"):
        assert np.max(np.abs(r[k] - r[k][0])) < 1e-8
    # ... and the hoop never rolls back: stuck near x_a = 0.925, hovering, the contact point 5e-3 off the profile
    assert np.all(plain0.q[1:, 5] < 0)
    xa = hoop.contact_point(plain0.q)[0]
    assert np.all(xa[plain0.t > 1.7] > 0.92)
    assert hoop.contact_offset(plain0.q[-1]) > 5e-3
    N_end = hoop.reactions(plain0.q[-1], lam=0.0, E0=E0, solver="exact")
    assert np.allclose(N_end[:2], [0.0, M * G], atol=1e-4)
    # λ = 0 with the turning-point solve: it passes the turning points, but f1 drifts the same way
    s = fig4_summary(hoop, runs)
    labels = list(s)
    assert s[labels[1]]["turning_points"] == pytest.approx([1.568, 3.204, 4.839, 6.4735], abs=2e-3)
    assert np.max(np.abs(reg0.residuals["f1"] - g1 * reg0.t)) < 1e-7 * g1 * reg0.t[-1]
    assert s[labels[1]]["max_contact_distance"] > 1e-2
    # λ = 1e3, plain solve: the error decays like exp(−λt), the run follows the consistent one
    assert s[labels[2]]["turning_points"] == pytest.approx([1.568, 3.205, 4.8425, 6.4795], abs=1e-3)
    late = plain3.t >= 0.05
    assert max(np.max(np.abs(v[late])) for v in plain3.residuals.values()) < 1e-8
    assert s[labels[2]]["max_contact_distance"] < 4e-7  # peak of the decaying transient ḟ1(0)/(λ e) / ‖∇h‖
    assert s[labels[2]]["final_contact_distance"] < 1e-10
    # the hold at the turning point is a property of the plain equations, not of the RK2 step
    ref = hoop.simulate(X0, 3.4, lam=0.0, method="dop853", rtol=1e-10, atol=1e-12, E0=E0, solver="exact",
                        record_reactions=False)
    assert np.all(ref.q[1:, 5] < 0)
    assert hoop.contact_point(ref.q[-1])[0] == pytest.approx(xa[np.searchsorted(plain0.t, 3.4)], abs=1e-4)
    png = tmp_path / "fig4.png"
    plot_fig4(hoop, runs, str(png))
    import matplotlib.image as mpimg

    img = mpimg.imread(str(png))
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 200
    assert np.std(img[..., :3]) > 0.01  # not blank


def test_lambda0_drift_law_small_errors(hoop):
    """Seed 000, eq. (2.2): with λ_i = 0 and errors ~1e-6 in every f_i *and* in ḟ1 the residuals are not removed
    but stay small — f1(t) = f1(0) + ḟ1(0) t − r f4(0)(α(t) − α(0)) (the N-free part of ḟ1 and f4 are constants
    of the λ = 0 equations), f2, f3, f4 constant — with the exact plain solve and with the closed form of
    :func:`solve_hoop` (ε = 0) alike: |f1| ≈ 6e-6 after two passes, no visible departure (RK2, h = 1e-5, steps
    over the turning-point barrier |2 r θ̇| ~ residual); λ = 1e3 removes them."""
    X1 = hoop.initial_state(-0.9, 0.3)
    E0 = hoop.energy(X1)
    Xp = X1 + np.array([0, 5e-8, 0, 5e-7, 0, 0, 5e-7])
    f0 = hoop.residuals(Xp, E0)
    assert 1e-7 < np.max(np.abs(f0)) < 2e-6
    runs = {}
    for key, lam, kw in (("exact", 0.0, {"solver": "exact"}), ("closed", 0.0, {"eps_turn": 0.0}), ("stab", 1e3, {})):
        runs[key] = hoop.simulate(Xp, 6.6, lam=lam, method="rk2", h=1e-5, save_every=50, E0=E0,
                                  record_reactions=False, **kw)
    g1 = dp(hoop.contact_point(Xp)[0]) * Xp[3] - Xp[4]  # N-free ḟ1 = (v, η) at t = 0
    for key in ("exact", "closed"):
        r0 = runs[key]
        assert np.sum(np.diff(np.sign(r0.q[1:, 5])) != 0) >= 3  # two passes back and forth
        pred = f0[0] + g1 * r0.t - R * f0[3] * (r0.q[:, 6] - Xp[6])
        assert np.max(np.abs(r0.residuals["f1"] - pred)) < 1e-9
        assert 3 * abs(f0[0]) < abs(r0.residuals["f1"][-1]) < 1e-5
        for k in ("f2", "f3", "f4"):  # constants of motion at λ = 0 (eq. 2.2 with r = 1)
            assert np.max(np.abs(r0.residuals[k] - r0.residuals[k][0])) < 2e-8
        assert np.max(np.abs(hoop.contact_offset(r0.q))) < 1e-5
    assert np.allclose(runs["exact"].q, runs["closed"].q, rtol=0, atol=1e-9)
    assert np.max(np.abs([v[-1] for v in runs["stab"].residuals.values()])) < 1e-8


def test_solve_exact_is_the_plain_solution():
    """``solve_exact`` is ``N = −A⁻¹φ`` (seed 000, eq. 2.9) without regularization: equal to numpy's solve on
    regular systems (also where pivoting is needed), NaN on an exactly singular A."""
    from multibody.formulations.stabilized import solve_exact

    rng = np.random.default_rng(3)
    N = np.empty(4)
    for _ in range(20):
        A = rng.normal(size=(4, 4))
        A[0, 0] = 0.0  # needs a row exchange
        phi = rng.normal(size=4)
        solve_exact(A, phi, np.zeros(7), np.zeros(0), N)
        assert np.allclose(N, np.linalg.solve(A, -phi), rtol=1e-10, atol=1e-12)
    A = np.eye(4)
    A[1, 1] = 0.0
    solve_exact(A, np.ones(4), np.zeros(7), np.zeros(0), N)
    assert np.all(np.isnan(N))


def lagrangian_reference():
    """The rolling hoop derived separately: 1-DOF Lagrangian in the contact abscissa q. Centre
    c(q) = P(q) − r μ(q), μ = (p', −1)/√(1 + p'²); no slip gives |ċ| = r|θ̇|, so T = M |c'|² q̇², V = M g c_z."""
    q = sp.Symbol("q")
    a, b = PAPER["a"], PAPER["b"]
    pq = q**4 + a * q**3 - b * q**2 - a * q - (1 - b)
    S = sp.sqrt(1 + sp.diff(pq, q) ** 2)
    cx = q - R * sp.diff(pq, q) / S
    cz = pq + R / S
    Gq = sp.diff(cx, q) ** 2 + sp.diff(cz, q) ** 2
    qdd = -(sp.diff(Gq, q) * sp.Symbol("qd") ** 2 + G * sp.diff(cz, q)) / (2 * Gq)
    qd = sp.Symbol("qd")
    f = sp.lambdify((q, qd), [qdd, cx, cz, sp.diff(cx, q), sp.diff(cz, q), sp.diff(cx, q, 2), sp.diff(cz, q, 2),
                              Gq, sp.diff(Gq, q)], "math")
    return f


def test_independent_lagrangian_derivation(hoop):
    """Independent check: on an exactly consistent state the stabilized right-hand side (any λ) gives the
    accelerations of the separately derived 1-DOF Lagrangian, and the trajectories agree (DOP853 both)."""
    f = lagrangian_reference()
    for xa, speed in [(-0.8, 1.1), (-0.2, -2.0), (0.4, 0.3), (0.9, -0.05), (0.3, 0.0)]:
        X = hoop.initial_state(xa, speed)
        E0 = hoop.energy(X)
        qdd0, cx, cz, cx1, cz1, cx2, cz2, Gq, Gq1 = f(xa, 0.0)
        assert cx == pytest.approx(X[0], abs=1e-14) and cz == pytest.approx(X[1], abs=1e-14)
        qd = speed / math.sqrt(Gq)
        qdd = f(xa, qd)[0]
        acc = np.array([cx2 * qd**2 + cx1 * qdd, cz2 * qd**2 + cz1 * qdd])
        sdot = Gq1 / (2 * math.sqrt(Gq)) * qd**2 + math.sqrt(Gq) * qdd  # d/dt of the centre's speed
        for lam in (0.0, 1e3):
            Xd = hoop.system.rhs(0.0, X, hoop.params(lam, E0))
            assert np.allclose(Xd[3:5], acc, rtol=1e-10, atol=1e-10)
            assert Xd[5] == pytest.approx(-sdot / R, rel=1e-9, abs=1e-8)
    # trajectories through a turning point
    X0 = hoop.initial_state(-0.9, 0.0)
    T = 2.0
    ts = np.linspace(0, T, 201)
    res = hoop.simulate(X0, T, lam=10.0, method="dop853", rtol=1e-12, atol=1e-13, t_eval=ts)
    ref = solve_ivp(lambda t, s: [s[1], f(s[0], s[1])[0]], (0, T), [-0.9, 0.0], method="DOP853", rtol=1e-12,
                    atol=1e-13, t_eval=ts)
    cxz = np.array([f(qv, 0.0)[1:3] for qv in ref.y[0]])
    assert np.max(np.abs(res.q[:, :2] - cxz)) < 1e-7


def test_admissibility_and_user_profile():
    X, Z = sp.symbols("X Z")
    with pytest.raises(ModelError, match="rho"):
        HoopOnProfile(h=Z - 100 * X**2, profile_symbols=(X, Z), x_range=(-0.5, 0.5))  # ρ = 0.005 < r
    with pytest.raises(ModelError, match="vertical|h'_z"):
        HoopOnProfile(h=Z**3 - X, profile_symbols=(X, Z), x_range=(-0.5, 0.5))
    with pytest.raises(ModelError, match="symbols"):
        HoopOnProfile(h=Z - X**2)
    # a parabola given with the opposite sign (h'_z > 0) is re-oriented and runs
    hoop = HoopOnProfile(h=Z - 0.5 * X**2, profile_symbols=(X, Z), r=0.05, x_range=(-1.0, 1.0))
    X0 = hoop.initial_state(0.6, 0.0)
    assert np.max(np.abs(hoop.residuals(X0, hoop.energy(X0)))) < 1e-14
    res = hoop.simulate(X0, 2.0, lam=1e3, method="rk2", h=1e-5, save_every=10)
    assert max_residual(res)[0] < 1e-8
    xa, za = hoop.contact_point(res.q)
    assert np.max(np.abs(za - 0.5 * xa**2)) < 1e-8
    assert np.max(np.abs(xa)) == pytest.approx(0.6, abs=0.02)  # rolls back and forth between ±0.6


def test_cli_json_and_plot(tmp_path, capsys):
    """``multibody hoop --json --plot FILE`` prints the summary of the run and writes the figure."""
    import json

    from multibody.cli import main

    png = tmp_path / "hoop.png"
    assert main(["hoop", "--lam", "1e3", "--h", "1e-5", "--t-end", "0.2", "--method", "rk2", "--json",
                 "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"max_residual", "max_residual_by_constraint", "steps", "cpu_seconds"}
    assert out["steps"] == 20000
    assert out["max_residual"] == max(out["max_residual_by_constraint"].values()) < 7e-9
    import matplotlib.image as mpimg

    assert mpimg.imread(str(png)).shape[0] > 200
    assert main(["hoop", "--method", "dop853", "--lam", "10", "--t-end", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["max_residual"] < 7e-9
    assert main(["hoop", "--r", "0.5", "--t-end", "0.1"]) == 2  # inadmissible profile for r = 0.5: clear error
    assert "not admissible" in capsys.readouterr().out
    # seed 000, Fig. 4 (numbers: test_fig4_lambda0_leaves_profile)
    png4 = tmp_path / "fig4.png"
    assert main(["hoop", "--fig4", str(png4), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    plain0, reg0, stab = [out[k] for k in out if k != "plot"]
    assert plain0["max_contact_distance"] > 5e-3 and plain0["turning_points"] == []
    assert len(reg0["turning_points"]) == 4 and reg0["max_contact_distance"] > 1e-2
    assert len(stab["turning_points"]) == 4 and stab["final_contact_distance"] < 1e-10
    assert mpimg.imread(str(png4)).shape[0] > 200
