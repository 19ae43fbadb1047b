"""Runs across switches: end stops with restitution, resting contact, latches, releases and stage separation
(seed 001, introduction: variable structure; seed 002: equations in impulses, Δp = Jᵀ Λ).

Each test checks a switch against an independent computation: closed-form impact times of a pendulum from its
exact (elliptic) period, the impulse from the mass matrix of ``crba`` and the restitution law, the angular
momentum the impulse cannot change, the plastic-impact energy loss, the momenta of a separation. The bounds are
derived in each test from the method's error (round-off of a few operations for the impulses, the integrator's
tolerance times the number of steps for quantities carried by the integration).
"""
import math

import numpy as np
import pytest
from scipy.special import ellipk

import multibody as mb
from checkpoint_copies import copy_at
from multibody.errors import IntegrationError, ModelError

EPS = np.finfo(float).eps
G = 9.81


def pendulum(upper=0.0, lower=-np.inf, e=0.7, mass=1.0, length=1.0, radius=0.05):
    """A rod-like pendulum hanging from a hinge about y, its stop at the bottom (q = 0 hangs straight down)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name="pendulum on a stop")
    b.add_body("bob", mass=mass, com=(0.0, 0.0, -length), inertia=np.diag([radius**2] * 3) * mass * 0.4)
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=(lower, upper), restitution=e)
    return b.build()


def period(model, amplitude):
    """The exact period of the pendulum swinging with ``amplitude`` (rad): 4 sqrt(I_O / (m g l)) K(sin²(θ/2))."""
    m, arm = float(model.mass[1]), float(-model.com[1][2])
    I_O = float(model.inertia_com[1][1, 1]) + m * arm * arm
    return 4.0 * math.sqrt(I_O / (m * G * arm)) * ellipk(math.sin(amplitude / 2.0) ** 2)


def rows_at(res, t):
    """The indices of the output rows at the instant t (a switch has two: before, after)."""
    return np.flatnonzero(res.t == t)


# ------------------------------------------------------------------------------------------------ the pendulum
def test_restitution_velocity_jump_and_rows():
    """e = 0.7: after every impact the joint velocity is −e times the velocity before, to 1e-12 relative (one
    impulse of a single row: Λ = −(1 + e) u⁻/D, u⁺ = u⁻ + D Λ, a few roundings); the rows of the Result at the
    instant of each impact are the states before and after, the angle exactly on the stop."""
    model = pendulum(e=0.7)
    res = mb.simulate(model, [-0.5], [0.0], 3.0, method="DOP853", rtol=1e-12, atol=1e-14)
    impacts = [e for e in res.events if e["kind"] == "impact"]
    assert len(impacts) >= 3
    for e in impacts:
        assert e["element"] == "hinge" and e["stop"] == "upper" and e["velocity_before"] > 0
        assert abs(e["velocity_after"] + 0.7 * e["velocity_before"]) <= 1e-12 * abs(e["velocity_before"])
        before, after = rows_at(res, e["t"])
        assert res.v[before, 0] == e["velocity_before"] and res.v[after, 0] == e["velocity_after"]
        assert res.q[after, 0] == 0.0
        # the generalized impulse is the momentum jump I_O (v⁺ − v⁻)
        I_O = mb.crba(model, res.q[after])[0, 0]
        assert e["impulse"] == pytest.approx(I_O * (e["velocity_after"] - e["velocity_before"]), rel=1e-13)
    # the stop is never passed: beyond it by at most the location's error, |v| 4 eps t (brentq's tolerance on
    # the step's interpolant): < 1e-14 here
    assert np.all(res.q[:, 0] <= 1e-14)


def test_elastic_impacts_keep_energy_at_closed_form_times():
    """e = 1, 100 impacts: the impact instants are T/4 + (n − 1) T/2 with T the exact period of the amplitude
    (elliptic integral), to 1e-10 s, and the energy is kept to 1e-9 relative. Bound: DOP853 at rtol 1e-13 makes
    local errors of about rtol per step; after N steps the phase and the energy are off by at most ~N rtol
    (N ≈ 5000 here: 5e-10 s at worst; measured ~1e-12). The impacts themselves are exact to one rounding."""
    theta0 = 0.8
    model = pendulum(e=1.0)
    T = period(model, theta0)
    t_end = T / 4 + 99.5 * T / 2
    res = mb.simulate(model, [-theta0], [0.0], t_end, method="DOP853", rtol=1e-13, atol=1e-15)
    times = np.array([e["t"] for e in res.events if e["kind"] == "impact"])
    assert len(times) == 100
    assert res.info["steps"] * 1e-13 < 1e-9 / 3           # the bound above, with a margin of 3
    expected = T / 4 + np.arange(100) * T / 2
    assert np.max(np.abs(times - expected)) < 1e-10
    E = res.energy["total"]
    assert np.max(np.abs(E - E[0])) < 1e-9 * abs(E[0])
    for e in res.events:   # one impulse of one row: exact to a few roundings
        assert abs(e["velocity_after"] + e["velocity_before"]) <= 4 * EPS * abs(e["velocity_before"])


def test_fixed_step_locates_impacts_inside_the_step():
    """RK4 with a fixed step: each impact is located inside its step on the step of smaller size (the method's
    dense output) — the angle at the state before the switch is on the stop to round-off — and the run goes back
    to the grid; the impact time converges to the closed form with the method's order 4 (error ratio 16 when h
    halves, within 30 %)."""
    theta0 = 0.8
    model = pendulum(e=1.0)
    T = period(model, theta0)
    errors = []
    for h in (0.02, 0.01):
        res = mb.simulate(model, [-theta0], [0.0], 1.5 * T, method="RK4", h=h)
        assert res.info["path"] == "compiled"
        h = res.info["h"]                       # the step of the grid (span / whole number of steps)
        grid = res.t[np.concatenate([[True], np.diff(res.t) != 0])]
        times = [e["t"] for e in res.events]
        assert len(times) == 3
        on_grid = np.setdiff1d(np.round(res.t / h, 6), np.round(np.array(times) / h, 6))
        assert np.allclose(on_grid, np.round(on_grid))             # the other outputs are on the grid
        for t in times:
            before, after = rows_at(res, t)
            assert abs(res.q[before, 0]) < 1e-14 and res.q[after, 0] == 0.0
        assert len(grid) >= round(1.5 * T / h)
        errors.append(abs(times[0] - T / 4))
    assert 16 / 1.3 < errors[0] / errors[1] < 16 * 1.3


PULL = 6.0


def tilted_pendulum():
    """A pendulum whose tilted gravity lays it on its lower stop (e = 0.5), and the torque ``PULL (t − 2)`` from
    t = 2 on that pulls it off: ``(model, tau)``."""
    b = mb.ModelBuilder(gravity=(0.5 * G, 0.0, -G))
    b.add_body("bob", mass=1.0, com=(0.0, 0.0, -1.0), inertia=np.diag([1e-3] * 3))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=(-0.2, 0.2), restitution=0.5)

    def tau(t, q, v):
        return np.array([PULL * max(t - 2.0, 0.0)])

    return b.build(), tau


def test_resting_contact_holds_until_the_reaction_would_pull():
    """Gravity tilted so that the pendulum falls onto its lower stop: the bounces (e = 0.5) shrink until the
    rebound is below the rest velocity, then the joint rests on the stop (exactly on it, at rest) while the stop
    pushes; when gravity turns (a torque that grows with time pulls it off), the joint leaves exactly when its
    reaction reaches zero: the reaction M q̈ − τ at the instant is zero to round-off."""
    model, tau = tilted_pendulum()
    pull = PULL
    res = mb.simulate(model, [0.0], [0.0], 4.0, method="DOP853", rtol=1e-11, atol=1e-13, tau=tau)
    kinds = [e["kind"] for e in res.events]
    assert kinds.count("contact") == 1 and kinds.count("separate") == 1
    assert kinds.index("contact") < kinds.index("separate")
    contact = next(e for e in res.events if e["kind"] == "contact")
    leave = next(e for e in res.events if e["kind"] == "separate")
    resting = (res.t > contact["t"]) & (res.t < leave["t"])
    assert np.all(res.q[resting, 0] == -0.2) and np.all(res.v[resting, 0] == 0.0)
    # at the separation the stop's reaction is zero: the torque balances gravity's moment about the hinge
    q = np.array([-0.2])
    gravity_torque = -mb.rnea(model, q, np.zeros(1), np.zeros(1))[0]
    assert abs(gravity_torque + pull * (leave["t"] - 2.0)) < 1e-9
    assert np.all(res.q[res.t > leave["t"], 0] > -0.2)


# ------------------------------------------------------------------------------------------------ the double pendulum
def double_pendulum(e):
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name="double pendulum on a stop")
    b.add_body("upper", mass=2.0, com=(0.0, 0.0, -0.5), inertia=np.diag([0.17, 0.17, 0.01]))
    b.add_body("lower", mass=1.0, com=(0.0, 0.0, -0.4), inertia=np.diag([0.06, 0.05, 0.01]))
    b.add_joint("shoulder", mb.Revolute(axis=(0, 1, 0)), "ground", "upper", limits=(-0.3, 1.0), restitution=e)
    b.add_joint("elbow", mb.Revolute(axis=(0, 1, 0)), "upper", "lower", placement=mb.Placement(translation=(0, 0, -1)))
    return b.build()


def _angular_momentum_about(model, q, v, body, point):
    """H = I_c ω + m (c − P) × v_c of body ``body`` about the ground point P (ground axes)."""
    fk = mb.forward_kinematics(model, q, v)
    i = model.body_index(body)
    R, w = fk.R[i], fk.velocity[i, :3]
    c = fk.p[i] + R @ model.com[i]
    vc = fk.velocity[i, 3:] + np.cross(w, R @ model.com[i])
    return R @ model.inertia_com[i] @ R.T @ w + model.mass[i] * np.cross(c - point, vc)


@pytest.mark.parametrize("e", [0.0, 0.6])
def test_double_pendulum_impulse_on_the_whole_tree(e):
    """The upper hinge hits its stop: the velocity jump equals M⁻¹ Jᵀ Λ computed here from ``crba`` with
    Λ = −(1 + e) u⁻ / (J M⁻¹ Jᵀ), to 1e-12 (a 2x2 solve: round-off); the lower link's angular momentum about the
    elbow, on which the impulse has no moment, is the same before and after to 1e-12; both coordinates jump."""
    model = double_pendulum(e)
    res = mb.simulate(model, [0.9, -0.6], [-2.0, 1.0], 1.5, method="DOP853", rtol=1e-12, atol=1e-14)
    hits = [ev for ev in res.events if ev["element"] == "shoulder" and ev["kind"] in ("impact", "contact")]
    assert hits
    ev = hits[0]
    before, after = rows_at(res, ev["t"])
    q, v0, v1 = res.q[after], res.v[before], res.v[after]
    assert q[0] == -0.3 and abs(res.q[before, 0] + 0.3) < 1e-14
    M = mb.crba(model, q)
    J = np.array([1.0, 0.0])                     # the lower stop: σ = +1, u = v_shoulder
    Minv_JT = np.linalg.solve(M, J)
    u = J @ v0
    lam = -(1.0 + e) * u / (J @ Minv_JT)
    scale = np.max(np.abs(v0))
    assert np.max(np.abs((v1 - v0) - Minv_JT * lam)) < 1e-12 * scale
    assert abs(ev["impulse"] - lam) < 1e-12 * abs(lam)
    assert abs(v1[1] - v0[1]) > 0.1 * scale      # the impulse moves the whole tree
    elbow = mb.forward_kinematics(model, q).p[model.body_index("lower")]
    H0 = _angular_momentum_about(model, q, v0, "lower", elbow)[1]
    H1 = _angular_momentum_about(model, q, v1, "lower", elbow)[1]
    assert abs(H1 - H0) < 1e-12 * max(1.0, abs(H0))


# ------------------------------------------------------------------------------------------------ impulse kernel
def test_mixed_lcp_against_enumeration():
    """The LCP of the impulses (switching/impulse.py) on random SPD Delassus matrices with equality rows: the
    solution is the one found by enumerating every active set (the unique one, D being a P-matrix), to 1e-12."""
    from itertools import product

    from multibody.switching.impulse import mixed_lcp

    rng = np.random.default_rng(7)
    for _ in range(40):
        m = int(rng.integers(1, 7))
        A = rng.normal(size=(m, m))
        D = A @ A.T + 0.1 * np.eye(m)
        b = rng.normal(size=m)
        bil = rng.random(m) < 0.3
        lam, w = np.empty(m), np.empty(m)
        assert mixed_lcp(D, b, bil, lam, w) >= 0
        found = None
        for act in product([False, True], repeat=m):
            act = np.array(act) | bil
            x = np.zeros(m)
            if act.any():
                x[act] = np.linalg.solve(D[np.ix_(act, act)], -b[act])
            ww = D @ x + b
            if np.all(x[act & ~bil] >= -1e-12) and np.all(ww[~act] >= -1e-12):
                found = x
                break
        np.testing.assert_allclose(lam, found, rtol=0, atol=1e-12 * max(1.0, np.abs(found).max()))
        assert np.all(lam[~bil] >= 0) and np.all(w[~bil] >= -1e-12) and np.all(np.abs(w[bil]) == 0)
        assert np.all(lam[~bil] * w[~bil] == 0)


def test_momentum_jump_is_the_velocity_jump_times_M():
    """Seed 002's form: an impact is the jump Δp = Jᵀ Λ of the generalized momenta p = M q̇ (fixed base); the
    velocity jump of the switching run is M⁻¹ of it, to round-off."""
    from multibody.switching.impulse import momentum_jump

    model = double_pendulum(0.6)
    res = mb.simulate(model, [0.9, -0.6], [-2.0, 1.0], 1.0, method="DOP853", rtol=1e-12, atol=1e-14)
    ev = next(e for e in res.events if e["element"] == "shoulder")
    before, after = rows_at(res, ev["t"])
    M = mb.crba(model, res.q[after])
    dp = np.empty(2)
    momentum_jump(np.array([0]), np.array([1.0]), np.array([ev["impulse"]]), dp)
    np.testing.assert_allclose(M @ res.v[after] - M @ res.v[before], dp, rtol=0, atol=1e-12 * np.abs(dp).max())


# ------------------------------------------------------------------------------------------------ latches
@pytest.fixture(scope="module")
def deployment():
    from multibody.systems import solar_panels as sp

    return sp.deploy(t_end=5.0, rtol=1e-10, atol=1e-12, n_out=1001)


def test_solar_panel_latches_lock(deployment):
    """Each hinge locks at its deployed angle (hinge 2 first) and stays there: angle exactly the deployed one and
    velocity exactly zero after its lock; the panel has one degree of freedom less after each."""
    res = deployment
    locks = [e for e in res.events if e["kind"] == "lock"]
    assert [e["element"] for e in locks] == ["hinge2", "hinge1"]
    assert [e["dof"] for e in locks] == [1, 0]
    for k, e in ((1, locks[0]), (0, locks[1])):
        after = res.t >= e["t"]
        after[rows_at(res, e["t"])[0]] = False
        assert np.all(res.q[after, k] == 0.0) and np.all(res.v[after, k] == 0.0)


def test_solar_panel_lock_energy_is_the_plastic_impact_loss(deployment):
    """The energy lost at each lock equals the loss of a plastic impact computed here from the state just before
    it: v⁺ = v⁻ − M⁻¹ Jᵀ (J M⁻¹ Jᵀ)⁻¹ J v⁻ with J the rows of the hinges locked then, ΔT = T(v⁻) − T(v⁺), to
    1e-10 J (energies of ~1 J: round-off of the solves)."""
    from multibody.systems import solar_panels as sp

    res = deployment
    model = sp.solar_panel()
    locked, losses = [], []
    for e in (e for e in res.events if e["kind"] == "lock"):
        k = int(e["element"][-1]) - 1
        locked.append(k)
        before, after = rows_at(res, e["t"])
        q, v = res.q[before], res.v[before]
        M = mb.crba(model, q)
        J = np.eye(2)[locked]
        Y = np.linalg.solve(M, J.T)
        v_plus = v - Y @ np.linalg.solve(J @ Y, J @ v)
        loss = 0.5 * v @ M @ v - 0.5 * v_plus @ M @ v_plus
        E = res.energy["total"]
        assert abs((E[before] - E[after]) - loss) < 1e-10
        assert loss > 1e-3
        losses.append(loss)
    # solar_panels.lock_losses (the demo's figures) gives the same losses: the same solves, to round-off
    reported = sp.lock_losses(res)
    assert [r["element"] for r in reported] == ["hinge2", "hinge1"]
    np.testing.assert_allclose([r["plastic"] for r in reported], losses, rtol=1e-12, atol=0)


def test_solar_panel_lock_times_against_the_spring_latch(deployment):
    """The lock times against the stiff-spring latch (HingeLatch) of the same panel: before any contact the two
    models are the same, so hinge 2 reaches its deployed angle at the same instant (both DOP853 at rtol 1e-10:
    1e-7 s; measured 2.399417577 s for both); hinge 1, whose motion after that depends on how hinge 2 stops, within
    0.05 s (measured 3.534989416 s exact, 3.534121206 s spring)."""
    from multibody.systems import solar_panels as sp

    p = sp.SolarPanelParameters(latches="spring")

    def reach(k):
        def g(t, q, v):
            return q[k]
        g.terminal, g.direction = False, -np.sign(p.stowed[k])
        return g

    spring = mb.simulate(sp.solar_panel(p), p.stowed, [0.0, 0.0], 5.0, method="DOP853", rtol=1e-10, atol=1e-12,
                         events=[reach(0), reach(1)])
    t_spring = [spring.info["t_events"][k][0] for k in (0, 1)]
    t_exact = {e["element"]: e["t"] for e in deployment.events if e["kind"] == "lock"}
    print(f"lock times: exact latches hinge1 {t_exact['hinge1']:.9f} s, hinge2 {t_exact['hinge2']:.9f} s; "
          f"spring latch hinge1 {t_spring[0]:.9f} s, hinge2 {t_spring[1]:.9f} s")
    assert abs(t_exact["hinge2"] - t_spring[1]) < 1e-7
    assert abs(t_exact["hinge1"] - t_spring[0]) < 0.05


def test_solar_panel_plot_marks_the_locks(deployment, tmp_path):
    """The deployment plot with the lock instants marked: a PNG that opens, not blank."""
    from matplotlib.image import imread

    from multibody.viz.switches import plot_switches

    path = plot_switches(deployment, tmp_path / "deployment.png", degrees=True,
                         title="two-leaf solar panel, exact latches (seed 001 §3.2.1)")
    img = imread(path)
    assert img.ndim == 3 and img.shape[0] > 400 and img.shape[1] > 500
    assert img[..., :3].std() > 0.05


# ------------------------------------------------------------------------------------------------ separation
def two_stages(t_release=0.5):
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0), name="two stages")
    b.add_body("stage1", mass=120.0, com=(0.02, 0.0, -1.0),
               inertia=[[40.0, 0.5, 0.0], [0.5, 42.0, 0.1], [0.0, 0.1, 9.0]])
    b.add_body("stage2", mass=45.0, com=(0.0, 0.01, 0.7), inertia=np.diag([7.0, 8.0, 3.0]))
    b.add_joint("flight", mb.Free(), "ground", "stage1")
    b.add_joint("adapter", mb.Fixed(), "stage1", "stage2", placement=mb.Placement(translation=(0.05, 0.0, 0.4)),
                release=t_release)
    return b.build()


def _momenta(model, q, v):
    """Total linear momentum and angular momentum about the ground origin, and per body (P_i, L_i about its
    centre of mass), from forward kinematics (ground axes)."""
    fk = mb.forward_kinematics(model, q, v)
    P, L, per = np.zeros(3), np.zeros(3), {}
    for i in range(1, model.nbodies + 1):
        R, w = fk.R[i], fk.velocity[i, :3]
        r = R @ model.com[i]
        c, vc = fk.p[i] + r, fk.velocity[i, 3:] + np.cross(w, r)
        Pi, Li = model.mass[i] * vc, R @ model.inertia_com[i] @ R.T @ w
        P += Pi
        L += Li + np.cross(c, Pi)
        per[model.body_names[i]] = (Pi, Li)
    return P, L, per


def test_stage_separation_keeps_the_momenta():
    """Two stages held by a Fixed joint, spinning and drifting, released at t₁: the total linear and angular
    momenta are the same before and after the release to 1e-12 (the state is mapped, no impulse: round-off of
    the kinematics), and each stage then moves as a free rigid body: its own angular momentum about its centre
    and its linear momentum stay constant to 1e-10 (DOP853 at rtol 1e-13 over ~200 steps)."""
    model = two_stages(0.5)
    q0 = model.neutral()
    v0 = np.array([0.3, -0.2, 1.5, 2.0, 0.5, 10.0])       # ω (body axes), v of the origin (body axes)
    res = mb.simulate(model, q0, v0, 1.5, method="DOP853", rtol=1e-13, atol=1e-15)
    assert [e["kind"] for e in res.events] == ["release"] and res.events[0]["element"] == "adapter"
    assert [s["model"].nv for s in res.structures] == [6, 12]
    before, after = rows_at(res, 0.5)
    m0, m1 = res.structures[0]["model"], res.structures[1]["model"]
    cols0 = [res.q_names.index(n) for n in m0.coordinate_names()], [res.v_names.index(n) for n in m0.velocity_names()]
    cols1 = [res.q_names.index(n) for n in m1.coordinate_names()], [res.v_names.index(n) for n in m1.velocity_names()]
    assert np.all(np.isnan(res.q[before, [res.q_names.index("adapter.x")]]))
    P0, L0, _ = _momenta(m0, res.q[before, cols0[0]], res.v[before, cols0[1]])
    P1, L1, per1 = _momenta(m1, res.q[after, cols1[0]], res.v[after, cols1[1]])
    assert np.max(np.abs(P1 - P0)) < 1e-12 * np.abs(P0).max()
    assert np.max(np.abs(L1 - L0)) < 1e-12 * np.abs(L0).max()
    later = np.flatnonzero(res.t > 0.5)
    for k in later:
        _, _, per = _momenta(m1, res.q[k, cols1[0]], res.v[k, cols1[1]])
        for body in ("stage1", "stage2"):
            Pk, Lk = per[body]
            assert np.max(np.abs(Lk - per1[body][1])) < 1e-10 * np.abs(per1[body][1]).max()
            assert np.max(np.abs(Pk - per1[body][0])) < 1e-10 * np.abs(per1[body][0]).max()
    assert res.t[-1] == 1.5 and res.info["structures"][1] == {"t": 0.5, "nq": 14, "nv": 12}


def test_constant_forces_of_the_kept_coordinates_act_after_a_separation():
    """A thrust F along stage 1's axis (a constant generalized force of the flight joint) before and after the
    adapter separates at t = 0.5: the structure after the separation keeps the forces of the coordinates it keeps
    (by name), so the total linear momentum grows by F·t over the whole run — the stages spin about that axis only,
    so it stays the ground's z — to DOP853's error at rtol 1e-12 (F t · 1e-9), not by F·0.5 alone. The stages
    are bodies of revolution about that axis (centres of mass on it, diagonal inertias), so the thrust has no
    moment about the centre of mass and the spin about z stays about z."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0), name="two stages on one axis")
    b.add_body("stage1", mass=120.0, com=(0.0, 0.0, -1.0), inertia=np.diag([40.0, 40.0, 9.0]))
    b.add_body("stage2", mass=45.0, com=(0.0, 0.0, 0.7), inertia=np.diag([7.0, 7.0, 3.0]))
    b.add_joint("flight", mb.Free(), "ground", "stage1")
    b.add_joint("adapter", mb.Fixed(), "stage1", "stage2", placement=mb.Placement(translation=(0.0, 0.0, 0.4)),
                release=0.5)
    model = b.build()
    F = 300.0
    v0 = np.array([0.0, 0.0, 1.5, 0.0, 0.0, 2.0])
    tau = np.zeros(model.nv)
    tau[5] = F
    res = mb.simulate(model, model.neutral(), v0, 1.5, method="DOP853", rtol=1e-12, atol=1e-14, tau=tau)
    assert [e["kind"] for e in res.events] == ["release"]
    m0, m1 = res.structures[0]["model"], res.structures[1]["model"]
    cols = [([res.q_names.index(n) for n in m.coordinate_names()], [res.v_names.index(n) for n in m.velocity_names()])
            for m in (m0, m1)]
    P0, _, _ = _momenta(m0, res.q[0, cols[0][0]], res.v[0, cols[0][1]])
    P1, _, _ = _momenta(m1, res.q[-1, cols[1][0]], res.v[-1, cols[1][1]])
    np.testing.assert_allclose(P1 - P0, [0.0, 0.0, F * 1.5], rtol=0, atol=F * 1.5 * 1e-9)


def test_unlock_release_frees_a_held_hinge():
    """A hinge held until its release ("unlock"): its angle does not move before, the pendulum swings after."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G))
    b.add_body("rod", mass=1.0, com=(0.0, 0.0, -0.5), inertia=np.diag([0.02, 0.02, 1e-3]))
    b.add_joint("pin", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", release={"at": 0.3, "mode": "unlock"})
    model = b.build()
    res = mb.simulate(model, [0.4], [0.0], 1.0, method="RK4", h=1e-3)
    assert [e["kind"] for e in res.events] == ["release"]
    assert np.all(res.q[res.t <= 0.3, 0] == 0.4) and res.q[-1, 0] < 0.39


# ------------------------------------------------------------------------------------------------ a robot
def test_panda_stays_within_its_limits():
    """The Panda of example-robot-data from its URDF, with its own joint limits (plastic stops), falling under
    gravity with no control for 5 s: every joint stays within its limits to 1e-9 at every output (on a stop the
    coordinate is held exactly; the event location leaves at most round-off past it)."""
    import importlib.metadata
    from pathlib import Path

    from multibody.io.urdf import load_urdf

    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    path = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf"))
    model = load_urdf(path)
    lo, hi = model.lower_limits, model.upper_limits
    assert np.all(np.isfinite(lo[:7])) and np.all(np.isfinite(hi[:7]))
    q0 = np.clip(np.array([0.0, 0.3, 0.0, -1.5, 0.0, 1.8, 0.8, 0.02, 0.02]), lo, hi)
    res = mb.simulate(model, q0, np.zeros(model.nv), 5.0, method="DOP853", rtol=1e-8, atol=1e-10)
    assert res.info["status"] == "success" and res.t[-1] == 5.0
    assert np.all(res.q >= lo - 1e-9) and np.all(res.q <= hi + 1e-9)
    assert any(e["kind"] in ("impact", "contact") for e in res.events)


# ------------------------------------------------------------------------------------------------ bad input, failures
def test_bad_unilateral_input_names_the_joint():
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    with pytest.raises(ModelError, match="joint 'j'.*lower limit 1.0 is above the upper limit 0.5"):
        b.add_joint("j", mb.Revolute(), "ground", "rod", limits=(1.0, 0.5))
    with pytest.raises(ModelError, match="joint 'j'.*latch value 2.0 is outside the limits"):
        b.add_joint("j", mb.Revolute(), "ground", "rod", limits=(-1.0, 1.0), latch=2.0)
    with pytest.raises(ModelError, match=r"joint 'j'.*restitution must be in \[0, 1\], got 1.5"):
        b.add_joint("j", mb.Revolute(), "ground", "rod", limits=(-1.0, 1.0), restitution=1.5)
    with pytest.raises(ModelError, match="joint 'j'.*quaternion coordinates"):
        b.add_joint("j", mb.Spherical(), "ground", "rod", limits=(-1.0, 1.0))
    b.add_joint("j", mb.Revolute(), "ground", "rod")
    b.add_release("nozzle", at=1.0)
    with pytest.raises(ModelError, match="release of joint 'nozzle'.*no tree joint 'nozzle'") as err:
        b.build()
    assert err.value.element == "joint 'nozzle'"


def test_failure_after_a_switch_keeps_the_run_and_its_events():
    """A torque callback that fails after the first impact: IntegrationError whose partial Result has the outputs
    up to the failure and the switch log."""
    model = pendulum(e=0.7)

    def tau(t, q, v):
        if t > 0.8:
            raise RuntimeError("actuator fault")
        return np.zeros(1)

    with pytest.raises(IntegrationError, match="actuator fault") as err:
        mb.simulate(model, [-0.5], [0.0], 3.0, method="DOP853", tau=tau)
    part = err.value.result
    assert part.info["status"] == "failed" and 0.5 < part.t[-1] <= 0.8
    assert [e["kind"] for e in part.events] == ["impact"]


def test_what_a_switching_run_refuses():
    model = pendulum()
    with pytest.raises(ModelError, match="formulation 'constrained'"):
        mb.simulate(model, [-0.5], [0.0], 1.0, formulation="constrained")
    with pytest.raises(ModelError, match="outside its limits"):
        mb.simulate(model, [0.5], [0.0], 1.0)
    with pytest.raises(ModelError, match="params\\['mass'\\] with a Python torque callback: the runs go one by one"):
        mb.simulate_batch(model, [[-0.5]], None, 1.0, method="RK4", h=1e-3, tau=lambda t, q, v: np.zeros(1),
                          params={"mass": [[1.0]]})


def test_batch_runs_each_across_its_switches():
    """simulate_batch of a model with limits: each run through the switching loop, outputs on the common grid,
    each run's switch log; run b equals simulate of run b on the grid (the same loop)."""
    model = pendulum(e=0.7)
    Q0 = np.array([[-0.5], [-0.3], [-0.1]])
    batch = mb.simulate_batch(model, Q0, None, 2.0, method="RK4", h=1e-3, n_out=21)
    assert batch.q.shape == (3, 21, 1) and np.all(batch.status == "success")
    assert [len(ev) for ev in batch.events] == [len(batch[b].events) for b in range(3)] and batch.events[0]
    for b in range(3):
        single = mb.simulate(model, Q0[b], [0.0], 2.0, method="RK4", h=1e-3, n_out=21)
        on_grid = np.isin(single.t, batch.t)      # the single run also has two rows at each switch
        np.testing.assert_array_equal(batch.q[b], single.q[on_grid])
        assert batch[b].events == single.events
    with pytest.raises(ModelError, match="may vary 'tau' only"):
        mb.simulate_batch(model, Q0, None, 1.0, method="RK4", h=1e-3, params={"mass": np.ones((3, 1))})


def _same(a, b):
    return all(np.array_equal(getattr(a, k), getattr(b, k), equal_nan=True) for k in ("t", "q", "v")) and \
        a.events == b.events


def test_checkpoints_across_switches_fixed_step(tmp_path, monkeypatch):
    """RK4 on the pendulum held until t = 0.2, then swinging onto its stop (e = 0.7): a run with checkpoints is the
    run without them, and resumed from a checkpoint after impacts (t = 1.5, step 1500) it is the same run again, bit
    for bit, its switch log included; the checkpoint holds the mode and the log."""
    from multibody.io import checkpoints as ckpt

    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G))
    b.add_body("bob", mass=1.0, com=(0.0, 0.0, -1.0), inertia=np.diag([1e-3] * 3))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=(-np.inf, 0.0), restitution=0.7,
                release={"at": 0.2, "mode": "unlock"})
    model = b.build()
    kw = dict(method="RK4", h=1e-3, output_every=7)
    plain = mb.simulate(model, [-0.5], [0.0], 4.0, **kw)
    assert [e["kind"] for e in plain.events][:3] == ["release", "impact", "impact"]
    path, mid = tmp_path / "run.ckpt", tmp_path / "mid.ckpt"
    copy_at(monkeypatch, mid, lambda t, step: step == 1500)
    full = mb.simulate(model, [-0.5], [0.0], 4.0, checkpoint=path, every=0.5, **kw)
    assert _same(plain, full) and full.info["checkpoint"] == str(path)
    c = ckpt.read(mid)
    assert c.step == 1500 and c.switching["events"] == [e for e in plain.events if e["t"] < 1.5]
    resumed = mb.resume(mid)
    assert _same(plain, resumed) and resumed.info["resumed_from"] == 1.5
    again = mb.resume(path)                     # a finished run's checkpoint: its Result at once
    assert _same(plain, again)


def test_checkpoints_across_a_separation_adaptive(tmp_path, monkeypatch):
    """DOP853 through a stage separation: resumed from a checkpoint after the release (another structure, with more
    coordinates), the run equals the uninterrupted one to the tolerance (the restarted adaptive run takes other
    steps: 100 rtol |x| bounds the difference, as in tests/test_checkpoint.py), with the same structures and
    switch log."""
    model = two_stages(0.5)
    rtol = 1e-10
    kw = dict(method="DOP853", rtol=rtol, atol=1e-12, n_out=31)
    v0 = np.array([0.3, -0.2, 1.5, 2.0, 0.5, 10.0])
    plain = mb.simulate(model, model.neutral(), v0, 1.5, **kw)
    mid = tmp_path / "mid.ckpt"
    copy_at(monkeypatch, mid, lambda t, step: t >= 1.0)
    full = mb.simulate(model, model.neutral(), v0, 1.5, checkpoint=tmp_path / "run.ckpt", every=0.25, **kw)
    assert _same(plain, full)
    resumed = mb.resume(mid)
    assert np.array_equal(resumed.t, plain.t) and resumed.events == plain.events
    assert [s["model"].nv for s in resumed.structures] == [6, 12]
    bound = 100 * rtol * np.nanmax(np.abs(plain.x))
    assert np.nanmax(np.abs(resumed.x - plain.x)) <= bound
    assert np.array_equal(np.isnan(resumed.x), np.isnan(plain.x))


def test_result_keeps_and_plots_its_switches(tmp_path):
    """result.events round-trips through the Result files (npz, csv); viz.plot_result marks each switch with a vertical
    line on every panel."""
    from multibody.result import Result
    from multibody.viz import plot_result

    res = mb.simulate(pendulum(e=0.7), [-0.5], [0.0], 2.0, method="RK4", h=1e-3)
    assert len(res.events) == 2
    for suffix in (".npz", ".csv"):
        back = Result.load(res.save(tmp_path / f"run{suffix}"))
        assert back.events == res.events
        np.testing.assert_array_equal(back.t, res.t)
    fig = plot_result(res, path=tmp_path / "run.png")
    for ax in fig.axes:
        marks = [ln for e in res.events for ln in ax.lines if list(ln.get_xdata()) == [e["t"], e["t"]]]
        assert len({float(ln.get_xdata()[0]) for ln in marks}) == 2
    assert (tmp_path / "run.png").stat().st_size > 10_000
