"""The heavy hoop rolling on the curved profile of seed 000 (Sec. 3–4): a builder model (one body on a planar
joint, a ``RollingOnProfile`` constraint) run through the generic ``stabilized`` formulation, checked against
the seed's own equations written by hand (``reference_hoop.py``, the symbolic DAE of eqs. 3.1–3.6) and the
paper's numbers (Sec. 4, Figs. 2 and 4)."""
import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.optimize import curve_fit

import multibody as mb
from multibody.errors import ModelError
from multibody.formulations.stabilized import stabilized_system
from multibody.systems import hoop_on_profile as H
from reference_hoop import HoopOnProfile

PAPER = H.PAPER
M, R, G = PAPER["M"], PAPER["r"], PAPER["g"]


@pytest.fixture(scope="module")
def model():
    return H.hoop_model()


@pytest.fixture(scope="module")
def hoop():
    """The seed's equations written by hand (reference)."""
    return HoopOnProfile()


def p(x):
    """The profile of seed 000, Sec. 4: z = x⁴ + a x³ − b x² − a x − (1 − b), a = 0.13, b = 0.5."""
    a, b = PAPER["a"], PAPER["b"]
    return x**4 + a * x**3 - b * x**2 - a * x - (1 - b)


def dp(x):
    a, b = PAPER["a"], PAPER["b"]
    return 4 * x**3 + 3 * a * x**2 - 2 * b * x - a


def run(model, q0, v0, t_end, lam=1e3, h=1e-5, n_out=None, **kw):
    """The paper's integration: RK2 at step h, stabilized with λ, the energy as the fourth constraint."""
    if n_out is None:
        n_out = int(round(t_end / h)) // 10 + 1
    return mb.simulate(model, q0, v0, t_end, formulation="stabilized", energy_constraint=True, lam=lam,
                       method="RK2", h=h, n_out=n_out, **kw)


def worst(res, t_from=None):
    """max_i max_t |f_i(t)| over t >= t_from (default: the second half of the run), and per row."""
    t = res.t
    t_from = t[0] + 0.5 * (t[-1] - t[0]) if t_from is None else t_from
    by = {k: float(np.max(np.abs(v[t >= t_from]))) for k, v in res.residuals.items()}
    return max(by.values()), by


def test_reference_derivation_matches_eq_3_11(hoop):
    """The reference: automatic derivation (``symbolic/dae.py``) gives r = (2, 1, 1, 1) and, on the manifold,
    the matrix A and free terms of eqs. (3.7)–(3.11) (rows 1 and 3 there are multiplied by M),
    det A = −2 d ‖∇h‖ θ̇ (seed 000, Sec. 3)."""
    assert hoop.dae.relative_degrees == (2, 1, 1, 1)
    assert ("f1", 1) in hoop.dae.dropped
    for xa, speed in [(-0.8, 1.1), (-0.2, -2.0), (0.4, 0.3), (0.9, -0.05)]:
        X = hoop.initial_state(xa, speed)
        A, phi = hoop.system.A_phi(X, hoop.params(0.0, hoop.energy(X)))
        x, z, th, xd, zd, thd, al = X
        hx, hz = dp(xa), -1.0
        H2 = np.array([[12 * xa**2 + 6 * PAPER["a"] * xa - 2 * PAPER["b"], 0.0], [0.0, 0.0]])
        v = np.array([xd, zd])
        chi = np.array([-math.sin(al), math.cos(al)])
        nh = math.hypot(hx, hz)
        d = nh - chi @ H2 @ chi * R
        A_paper = np.array([[hx, hz, 0, (v @ H2 @ chi) * M * R], [xd, zd, thd, 0],
                            [-math.sin(al), math.cos(al), 1 / R, 0], [0, 0, 0, d]])
        phi_paper = np.array([-M * G * hz + M * (v @ H2 @ v), 0.0, -M * G * math.cos(al), -(v @ H2 @ chi)])
        scale = np.array([M, 1, M, 1])
        assert np.allclose(A * scale[:, None], A_paper, rtol=1e-12, atol=1e-12)
        assert np.allclose(phi * scale, phi_paper, rtol=1e-12, atol=1e-11)
        assert np.linalg.det(A * scale[:, None]) == pytest.approx(-2 * d * nh * thd, rel=1e-9)


def test_generic_model_is_the_seed_system(model, hoop):
    """The builder model through the ``stabilized`` formulation is seed 000's system: the same state
    (x, z, θ, ẋ, ż, θ̇, α), relative degrees (2, 1, 1, 1) found from the rows, and the same state derivative
    as the hand-written equations (plain solve, no turning-point regularization) at consistent and perturbed
    states, for λ = 0 and λ = 1e3: the multiplier directions and M v span the seed's reactions (R_x, R_z, Q)."""
    pert = np.array([1e-5, -2e-5, 0.3, 3e-4, -1e-4, 2e-2, 1e-4])
    for xa, speed, k in [(-0.8, 1.1, 0), (-0.2, -2.0, 1), (0.4, 0.3, 1), (0.9, -0.05, 0)]:
        X = hoop.initial_state(xa, speed) + k * pert
        q, v = X[:3], X[3:6]
        for lam in (0.0, 1e3):
            E0 = hoop.energy(X) - k * 1e-4
            sys_ = stabilized_system(model, q, v, energy_constraint=True, energy_level=E0, lam=lam,
                                     energy_window=0.0, consistent=False, dls_eps=1e-14)
            x0 = np.concatenate([q, v, [X[6]]])
            ours = sys_.fun(0.0, x0)
            ref = hoop.stabilized("exact").rhs(0.0, X, hoop.params(lam, E0, solver="exact"))
            assert np.allclose(ours, ref, rtol=1e-8, atol=1e-8 * np.abs(ref).max()), (xa, lam, ours - ref)
    q0, v0 = H.initial_state(model, -0.9, 0.0)
    res = run(model, q0, v0, 1e-3)
    assert list(res.info["relative_degrees"].values()) == [2, 1, 1, 1]   # contact, no slip, tangency, energy


def test_sec4_rk2_h1e5_lambda1e3_through_turning_points(model, hoop):
    """Seed 000, Sec. 4 / Fig. 3: RK2, h = 1e-5, λ_i = 1e3 → max_i |f_i| < 7e-9 in steady state, through the
    generic path. Window: 3.4 time units from rest at x_a = −0.9 (turning points at t ≈ 0, 1.64, 3.28); no NaN;
    the trajectory follows the hand-written system's (which crosses the turning points with its own
    regularization) to 1e-5; the reactions stay bounded. Sampled every 1e-3 (100 steps): the residual and the
    difference vary on the motion's time scale (a turning point every 1.6), so the sampled maxima are those of
    every tenth step to 1e-4 relative (2.0807e-9 either way; the joints' reactions are computed per sample)."""
    q0, v0 = H.initial_state(model, -0.9, 0.0)
    res = run(model, q0, v0, 3.4, n_out=3401)
    assert np.all(np.isfinite(res.q))
    assert np.sum(np.diff(np.sign(res.v[1:, 2])) != 0) >= 2
    w, by = worst(res)
    assert w < 7e-9, by
    ref = hoop.simulate(hoop.initial_state(-0.9, 0.0), 3.4, lam=1e3, method="rk2", h=1e-5, save_every=100)
    assert np.abs(ref.q[:, :3] - res.q).max() < 1e-5
    Ns = res.reactions["contact"]
    assert np.all(np.isfinite(Ns)) and np.max(np.abs(Ns)) < 100


def test_sec4_rk2_h1e6(model):
    """Seed 000, Sec. 4: the same λ_i = 1e3 with h = 1e-6 → max_i |f_i| < 5e-12 (window: the second half of one
    time unit from rest at x_a = −0.9), and the residual of the stabilized RK2 run scales like h² (ratio 100
    between h = 1e-5 and 1e-6 over the same window, the samples at the same times, every 1e-4: the residual varies
    on the motion's time scale, so these maxima are those of denser samples to 1e-4 relative)."""
    q0, v0 = H.initial_state(model, -0.9, 0.0)
    res6 = run(model, q0, v0, 1.0, h=1e-6, n_out=10001)
    w6, by = worst(res6)
    # the paper's bound (Sec. 4); ours, RK2's truncation error (the h² scaling below), is 4.0e-12 on any machine
    assert w6 < 5e-12, by
    res5 = run(model, q0, v0, 1.0, h=1e-5, n_out=10001)
    assert worst(res5, 0.0)[0] / worst(res6, 0.0)[0] == pytest.approx(100.0, rel=0.05)


@pytest.mark.parametrize("lam", [1.0, 1e2, 1e5])
def test_sec4_lambda_range(model, lam):
    """Seed 000, Sec. 4: for any λ_i in [1, 1e5] with h = 1e-5 the steady-state residual is < 1e-7 (window of 2
    time units containing the turning point at t ≈ 1.64): both ends of the range (the slowest decay, and
    λ h = 1 near RK2's stability limit) and a middle value (λ = 1e3 is the test above). Sampled every 1e-3 (100
    steps): the maxima are those of every tenth step to 4e-5 relative (1.4449e-9, 2.0771e-9, 7.006e-9)."""
    q0, v0 = H.initial_state(model, -0.9, 0.0)
    w, by = worst(run(model, q0, v0, 2.0, lam=lam, n_out=2001))
    assert w < 1e-7, by


def test_fig2_decay_rate(model):
    """Seed 000, Fig. 2: residuals from perturbed initial data decay faster with λ = 100 than λ = 10; the
    measured rates equal λ (f2, f3, f4: exp(−λt), eq. 2.5; f1: (c1 + c2 t) exp(−λt), eq. 2.4)."""
    q1, v1 = H.initial_state(model, -0.5, 1.5)
    E0 = float(sum(mb.energy(model, q1, v1)))
    at = {}
    for lam in (10.0, 100.0):
        sys_kw = dict(energy_level=E0, consistent=False)
        res = mb.simulate(model, q1 + [0, 1e-4, 0], v1 + [1e-4, 0, 1e-2], 10 / lam, formulation="stabilized",
                          energy_constraint=True, lam=lam, method="RK2", h=1e-5, n_out=101, **sys_kw)
        sel = (res.t > 1 / lam) & (res.t < 8 / lam)
        t = res.t[sel]
        for k in ("energy", "contact.no_slip"):
            slope = np.polyfit(t, np.log(np.abs(res.residuals[k][sel])), 1)[0]
            assert slope == pytest.approx(-lam, rel=0.01), k
        f1 = res.residuals["contact.contact"][sel]
        popt, _ = curve_fit(lambda t, c1, c2, kap: (c1 + c2 * t) * np.exp(-kap * t), t, f1, p0=(f1[0], 0.0, lam))
        assert popt[2] == pytest.approx(lam, rel=0.01)
        at[lam] = max(abs(v[np.searchsorted(res.t, 0.1) - 1]) for v in res.residuals.values())
    assert at[100.0] < 1e-3 * at[10.0]


def test_fig4_lambda0_leaves_profile(model, tmp_path):
    """Seed 000, Sec. 4, Fig. 4: with λ_i = 0 (the plain eq. 2.3) and initial residuals < 1e-6 the contact
    point leaves the profile visibly within two passes; λ_i = 1e3 keeps it on the profile.

    The initial error is a normal velocity n = 1e-3 of the centre (``fig4_runs``): f1 = f3 = f4 = 0 and
    f2 = M n²/2 = 5e-7, i.e. the seed's ``max_i |δ_i(0)| < 1e-6``, but ``ḟ1(0) = ‖∇h‖ n = 2.1e-3``, and with
    λ = 0 eq. (2.2) gives ``f1 = ḟ1(0) t`` (exactly, the other residuals constant): 1.4e-2, more than the radius
    r = 0.01, after two passes. Turning points of the consistent run at t = 1.568, 3.205, 4.842, 6.479."""
    from multibody.viz.hoop import plot_fig4

    runs, E0 = H.fig4_runs(model)
    plain0, stab = runs.values()
    r = plain0.residuals
    assert max(abs(v[0]) for v in r.values()) < 1e-6 and r["energy"][0] == pytest.approx(M * 1e-6 / 2, rel=1e-6)
    g1 = math.hypot(dp(H.contact_point(model, plain0)[0][0]), 1.0) * 1e-3
    assert np.max(np.abs(r["contact.contact"] - g1 * plain0.t)) < 1e-7 * g1 * plain0.t[-1]
    assert r["contact.contact"][-1] > 1e-2
    s = H.fig4_summary(model, runs)
    plain_s, stab_s = s.values()
    assert plain_s["max_contact_distance"] > 5e-3
    # the turning points against the separately derived 1-DOF Lagrangian of the consistent motion (DOP853 at
    # rtol 1e-12, q̇ = 0 located as an event): a reported one is the first sample after θ̇ changes sign, so it
    # lies at most one output interval (6.6/13200 = 5e-4) after the exact one; the stabilized run differs from
    # the consistent motion by the decaying normal-velocity transient, a displacement below n/λ = 1e-6 (and
    # RK2's error at h = 1e-5 is smaller), hence the 1e-5 of slack
    exact = lagrangian_turning_points(-0.9, 0.3, 6.6)
    dt = plain0.t[1] - plain0.t[0]
    assert len(exact) == 4 and len(stab_s["turning_points"]) == 4, (exact, stab_s["turning_points"])
    lag = np.array(stab_s["turning_points"]) - exact
    assert np.all(lag > -1e-5) and np.all(lag < dt + 1e-5), (lag, dt)
    late = stab.t >= 0.05
    assert max(np.max(np.abs(v[late])) for v in stab.residuals.values()) < 1e-8
    # the peak of the decaying transient f1 = ḟ1(0) t exp(−λt) is ḟ1(0)/(λ e) at t = 1/λ, a distance n/(λ e) = 3.68e-7
    # from the profile (ḟ1(0) = ‖∇h‖ n); ‖∇h‖ changes by about 1e-3 relative while the hoop moves 3e-4 m meanwhile
    assert stab_s["max_contact_distance"] == pytest.approx(1e-3 / (1e3 * math.e), rel=3e-3)
    assert stab_s["final_contact_distance"] < 1e-10
    png = tmp_path / "fig4.png"
    plot_fig4(model, runs, str(png))
    import matplotlib.image as mpimg

    img = mpimg.imread(str(png))
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 200 and np.std(img[..., :3]) > 0.01


def test_turning_point_reactions_analytic_limit(model):
    """At θ̇ = 0 on the manifold the generalized reaction Gᵀλ + μ M v of the generic solve equals the seed's
    limit (R*_x, R*_z, Q*) (seed 000, Sec. 3) to 1e-6, and the reactions of nearby moving states converge to it
    linearly in the speed (continuity through the singular point of A)."""
    for xa in (-0.95, -0.6, 0.2, 0.7, 0.95):
        q, v = H.initial_state(model, xa, 0.0)
        star = H.turning_point_reactions(model, q)
        for speed in (0.0, 1e-3, -1e-4):
            q, v = H.initial_state(model, xa, speed)
            sys_ = stabilized_system(model, q, v, energy_constraint=True, lam=1e3)
            sys_.fun(0.0, sys_.x0)
            w, N = sys_.params.w, sys_.params.N
            R_ = N.shape[0]
            gen = w.G[:2].T @ N[:2] + N[R_ - 1] * (w.M @ v)
            assert np.all(np.isfinite(gen))
            assert np.max(np.abs(gen - star)) < 1e-6 + 50 * abs(speed), (xa, speed, gen, star)


def lagrangian_reference():
    """The rolling hoop derived separately: 1-DOF Lagrangian in the contact abscissa q. Centre
    c(q) = P(q) − r μ(q), μ = (p', −1)/√(1 + p'²); no slip gives |ċ| = r|θ̇|, so T = M |c'|² q̇², V = M g c_z."""
    q, qd = sp.Symbol("q"), sp.Symbol("qd")
    pq = p(q)
    S = sp.sqrt(1 + sp.diff(pq, q) ** 2)
    cx = q - R * sp.diff(pq, q) / S
    cz = pq + R / S
    Gq = sp.diff(cx, q) ** 2 + sp.diff(cz, q) ** 2
    qdd = -(sp.diff(Gq, q) * qd ** 2 + G * sp.diff(cz, q)) / (2 * Gq)
    return sp.lambdify((q, qd), [qdd, cx, cz, sp.diff(cx, q), sp.diff(cz, q), sp.diff(cx, q, 2), sp.diff(cz, q, 2),
                                 Gq, sp.diff(Gq, q)], "math")


def lagrangian_turning_points(xa, speed, t_end):
    """Times where the 1-DOF Lagrangian motion (:func:`lagrangian_reference`) from contact abscissa ``xa``, the
    centre moving at ``speed`` along the tangent (> 0: towards +x), stops (q̇ = 0), up to ``t_end``."""
    f = lagrangian_reference()
    qd0 = speed / math.sqrt(f(xa, 0.0)[7])

    def stops(t, s):
        return s[1]

    sol = solve_ivp(lambda t, s: [s[1], f(s[0], s[1])[0]], (0, t_end), [xa, qd0], method="DOP853", rtol=1e-12,
                    atol=1e-13, events=stops)
    return sol.t_events[0]


def test_independent_lagrangian_derivation(model):
    """Independent check: on a consistent state the generic right-hand side (any λ) gives the accelerations of
    the separately derived 1-DOF Lagrangian, and the trajectories agree (DOP853 both) through a turning point."""
    f = lagrangian_reference()
    for xa, speed in [(-0.8, 1.1), (-0.2, -2.0), (0.4, 0.3), (0.9, -0.05), (0.3, 0.0)]:
        q, v = H.initial_state(model, xa, speed)
        qdd0, cx, cz, cx1, cz1, cx2, cz2, Gq, Gq1 = f(xa, 0.0)
        assert cx == pytest.approx(q[0], abs=1e-14) and cz == pytest.approx(q[1], abs=1e-14)
        qd = speed / math.sqrt(Gq)
        qdd = f(xa, qd)[0]
        acc = np.array([cx2 * qd**2 + cx1 * qdd, cz2 * qd**2 + cz1 * qdd])
        sdot = Gq1 / (2 * math.sqrt(Gq)) * qd**2 + math.sqrt(Gq) * qdd
        for lam in (0.0, 1e3):
            sys_ = stabilized_system(model, q, v, energy_constraint=True, lam=lam)
            xd = sys_.fun(0.0, sys_.x0)
            assert np.allclose(xd[3:5], acc, rtol=1e-10, atol=1e-10)
            assert xd[5] == pytest.approx(-sdot / R, rel=1e-9, abs=1e-8)
    q0, v0 = H.initial_state(model, -0.9, 0.0)
    ts = np.linspace(0, 2.0, 201)
    res = mb.simulate(model, q0, v0, 2.0, formulation="stabilized", energy_constraint=True, lam=10.0,
                      method="DOP853", rtol=1e-12, atol=1e-13, t_eval=ts)
    ref = solve_ivp(lambda t, s: [s[1], f(s[0], s[1])[0]], (0, 2.0), [-0.9, 0.0], method="DOP853", rtol=1e-12,
                    atol=1e-13, t_eval=ts)
    cxz = np.array([f(qv, 0.0)[1:3] for qv in ref.y[0]])
    assert np.max(np.abs(res.q[:, :2] - cxz)) < 1e-7


def test_admissibility_and_user_profile():
    X, Z = sp.symbols("X Z")
    with pytest.raises(ModelError, match="rho"):
        H.hoop_model(profile=mb.Profile(Z - 100 * X**2, X, Z), x_range=(-0.5, 0.5))   # ρ = 0.005 < r
    with pytest.raises(ModelError, match="vertical|h'_z"):
        H.hoop_model(profile=mb.Profile(Z**3 - X, X, Z), x_range=(-0.5, 0.5))
    with pytest.raises(ModelError, match="only X, Z"):
        mb.Profile(Z - X**2 + sp.Symbol("c"), X, Z)
    with pytest.raises(ModelError, match="polynomial"):
        mb.Profile(Z - sp.sin(X), X, Z)
    with pytest.raises(ModelError, match="hoop parameter r"):
        H.hoop_model(r=-1.0)
    # a parabola given with the opposite sign (h'_z > 0) is re-oriented and runs
    model = H.hoop_model(profile=mb.Profile(Z - 0.5 * X**2, X, Z), r=0.05, x_range=(-1.0, 1.0))
    q0, v0 = H.initial_state(model, 0.6, 0.0)
    res = run(model, q0, v0, 2.0, n_out=201)
    assert worst(res)[0] < 1e-8
    xa, za = H.contact_point(model, res)
    assert np.max(np.abs(za - 0.5 * xa**2)) < 1e-8
    # it rolls from rest at x_a = 0.6 to the mirror turning point x_a = −0.6 (on the symmetric parabola the
    # centre's height is a function of |x_a|: energy conservation stops it where that height is the initial one),
    # reached near t = 1.5 (a half swing); the samples, every 0.01, miss the turning point by at most
    # |ẍ_a| (0.005)² / 2 ≤ 1.2e-4 (|ẍ_a| ≤ g), and the energy constraint holds it to the 1e-8 above
    assert xa[0] == pytest.approx(0.6, abs=1e-12)
    assert xa.min() == pytest.approx(-0.6, abs=5e-4)


#: the bounds of the motion from rest at x_a = −0.9 on the paper's profile (the region where z ≤ z(−0.9)):
#: |x| ≤ 0.93, |z| ≤ 0.63, speed of the centre ≤ √(g Δz) = 1.95 (T = M v², V = M g z for the rolling hoop),
#: |α| ≤ π, and there ‖∇h‖ = √(1 + p'²) ≤ 2.6, |p''| ≤ 9.9
MOTION_BOUNDS = {"x": 0.93, "z": 0.63, "v": 1.95, "alpha": math.pi, "grad_h": 2.6, "p2": 9.9}


def test_motion_bounds():
    """The numbers of MOTION_BOUNDS, from the profile of seed 000, Sec. 4 (the hoop's centre is within r of it)."""
    x = np.linspace(-1.2, 1.2, 240001)
    reach = x[p(x) <= p(-0.9) + 1e-12]
    assert reach.min() == pytest.approx(-0.9, abs=1e-4) and np.abs(reach).max() + R < MOTION_BOUNDS["x"]
    assert np.abs(p(reach)).max() + R < MOTION_BOUNDS["z"]
    assert math.sqrt(G * (p(-0.9) - p(reach).min())) < MOTION_BOUNDS["v"]
    assert math.hypot(1.0, np.abs(dp(reach)).max()) < MOTION_BOUNDS["grad_h"]
    a, b = PAPER["a"], PAPER["b"]
    assert np.abs(12 * reach**2 + 6 * a * reach - 2 * b).max() < MOTION_BOUNDS["p2"]


def dop853_residual_bounds(steps, t_end, lam, rtol, atol):
    """Upper bounds of the residuals |f_i| (by the CLI's names) of a DOP853 run of the hoop from rest at
    x_a = −0.9 with tolerances (rtol, atol), stabilized with λ, over ``steps`` accepted steps up to ``t_end``.

    DOP853 accepts a step when its error estimate δ satisfies ‖δ_j / sc_j‖_rms ≤ 1 with sc_j = atol + rtol |x_j|
    (Hairer, Nørsett & Wanner I, II.4 and II.10; the estimate is of lower order than the propagated solution, so
    it over-estimates the step's error): |δ_j| ≤ √7 sc_j for the 7 states (x, z, θ, ẋ, ż, θ̇, α), and a step
    changes a residual by at most B_i = √7 Σ_j |∂f_i/∂x_j| sc_j. Between steps the stabilized equations give
    ḟ_i = −λ f_i for the rows of relative degree 1 (f2, f3, f4; seed 000, eq. 2.5) and f̈1 + 2λ ḟ1 + λ² f1 = 0
    (eq. 2.4). A change made at t_k has therefore decayed by exp(−λτ) (f1: (1 + λτ) exp(−λτ), and τ exp(−λτ)
    for a change of ḟ1) after τ = t − t_k; summed over steps of length h (DOP853's steps vary smoothly on this
    motion; h = t_end/steps) with x = λh: Σ exp(−kx) ≤ 1 + 1/x, Σ (1 + kx) exp(−kx) ≤ 1 + 2/x,
    Σ kh exp(−kx) ≤ 1/(λx); one more B_i for the dense output between steps. The bound does not grow with t.
    The gradients, with MOTION_BOUNDS (v the speed bound; f2 = M g z + M(ẋ² + ż²)/2 + M r² θ̇²/2 − E0,
    f3 = −ẋ sin α + ż cos α + r θ̇, f1 = h(x_a, z_a), f4 = h_x sin α − h_z cos α at x_a = x + r cos α,
    z_a = z + r sin α, h = p(x) − z up to sign): see the rows below."""
    b = MOTION_BOUNDS
    v = b["v"]
    sc = {k: atol + rtol * m for k, m in (("x", b["x"]), ("z", b["z"]), ("v", v), ("w", v / R), ("a", b["alpha"]))}
    root7 = math.sqrt(7.0)
    grad = {   # |∂f/∂x_j| sc_j summed over the states
        "f1 (contact)": b["grad_h"] * sc["x"] + sc["z"] + R * b["grad_h"] * sc["a"],
        "f2 (energy)": M * G * sc["z"] + 2 * M * v * sc["v"] + M * R * v * sc["w"],
        "f3 (no slip)": 2 * sc["v"] + R * sc["w"] + v * sc["a"],
        "f4 (tangency)": b["p2"] * sc["x"] + (R * b["p2"] + b["grad_h"]) * sc["a"],
    }
    x = lam * t_end / steps
    out = {k: root7 * g * (2 + 1 / x) for k, g in grad.items()}
    rate_f1 = root7 * b["grad_h"] * 2 * sc["v"]          # a step's change of ḟ1 = ∇h · (ẋ_a, ż_a)
    out["f1 (contact)"] = root7 * grad["f1 (contact)"] * (2 + 2 / x) + rate_f1 / (lam * x)
    return out


def test_dop853_residuals_stay_bounded(capsys):
    """A long DOP853 run (100 time units, about 60 turning points) keeps each residual within the bound of
    :func:`dop853_residual_bounds`, which does not grow with t: the stabilization (λ = 10) removes what the
    integration error adds. Without it the contact residual drifts (λ = 0: f1 = 9.2e-7 after 100 units, 13 times
    its bound, measured; f1 grows like t², each step's error of ḟ1 being integrated twice)."""
    check_cli_dop853_run(capsys, 100.0)


def check_cli_dop853_run(capsys, t_end, lam=10.0, rtol=1e-9, atol=1e-11):
    """``multibody hoop --method dop853 --json``: each residual within its bound of :func:`dop853_residual_bounds`."""
    import json

    from multibody.cli import main

    assert main(["hoop", "--method", "dop853", "--lam", f"{lam:g}", "--rtol", f"{rtol:g}", "--atol", f"{atol:g}",
                 "--t-end", f"{t_end:g}", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    bounds = dop853_residual_bounds(out["steps"], t_end, lam, rtol, atol)
    for name, value in out["max_residual_by_constraint"].items():
        assert value < bounds[name], (name, value, bounds)


def test_cli_json_and_plot(tmp_path, capsys):
    """``multibody hoop --json --plot FILE`` prints the summary of the run and writes the figure."""
    import json

    import matplotlib.image as mpimg

    from multibody.cli import main

    png = tmp_path / "hoop.png"
    assert main(["hoop", "--lam", "1e3", "--h", "1e-5", "--t-end", "0.2", "--method", "rk2", "--json",
                 "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"max_residual", "max_residual_by_constraint", "steps", "cpu_seconds"}
    assert out["steps"] == 20000
    assert set(out["max_residual_by_constraint"]) == {"f1 (contact)", "f2 (energy)", "f3 (no slip)", "f4 (tangency)"}
    assert out["max_residual"] == max(out["max_residual_by_constraint"].values()) < 7e-9
    assert mpimg.imread(str(png)).shape[0] > 200
    # DOP853 at the CLI's tolerances: each residual within its bound derived from rtol, atol and λ
    # (dop853_residual_bounds: here about 3e-7 for f2; measured 5e-9 to 1.2e-8 on different machines)
    check_cli_dop853_run(capsys, 0.5)
    assert main(["hoop", "--r", "0.5", "--t-end", "0.1"]) == 2    # inadmissible profile for r = 0.5: one line
    assert "not admissible" in capsys.readouterr().err
    assert main(["hoop", "--h", "-1"]) == 2
    assert "step h" in capsys.readouterr().err
    assert main(["hoop", "--h", "0.3", "--t-end", "1"]) == 2     # h λ = 300: RK2 unstable on exp(−λt)
    assert "unstable" in capsys.readouterr().err
