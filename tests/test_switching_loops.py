"""Runs across switches on a closed loop: a parallelogram four-bar (a cut joint closes it) with an end stop or a
latch on its first crank, in the constrained formulation (``switching/constrained.py``; seed 001 §3.6,
seed 002: Δp = Jᵀ Λ).

The independent computations use the library's public algorithms only — the mass matrix of ``mb.crba`` and the
loop's constraint Jacobian from ``mb.point_jacobian`` (the cut hinge C1 pins the coupler's tip to crank1's tip:
G = J_coupler(tip) − J_crank1(tip), its in-plane rows) — and solve the small linear systems with numpy. Each bound
is derived in its test from the method's error.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from checkpoint_copies import copy_at
from multibody.errors import ModelError
from multibody.rows.constraint_rows import ConstraintRows

EPS = np.finfo(float).eps
G0 = 9.81
LOWER, UPPER = -math.pi / 4, math.pi / 4


def four_bar(limits=(LOWER, UPPER), e=0.7, latch=None, release=None, limits1=None):
    """The parallelogram four-bar of ``examples/four_bar.yaml`` (cranks upright at q = 0, bars of 1 m and 1 kg)
    with the stops ``limits`` (restitution e) or a ``latch`` on crank0's hinge A0, and a ``release`` or the stops
    ``limits1`` (restitution e) on crank1's hinge A1.
    Returns (model, q0, v0): upright, the crank tips at 1 m/s."""
    b = mb.ModelBuilder(gravity=(0.0, -G0, 0.0), name="four-bar with a stop")
    up = mb.rotation_about((0, 0, 1), math.pi / 2)
    inertia = [1e-9, 1.0 / 12.0, 1.0 / 12.0]
    z = (0.0, 0.0, 1.0)
    for body in ("crank0", "crank1", "coupler0"):
        b.add_body(body, 1.0, com=(0.5, 0, 0), inertia=inertia)
    kw = {} if limits is None else {"limits": limits, "restitution": e}
    if latch is not None:
        kw["latch"] = latch
    b.add_joint("A0", mb.Revolute(axis=z), "ground", "crank0", placement=(up, (0.0, 0, 0)), **kw)
    b.add_joint("A1", mb.Revolute(axis=z), "ground", "crank1", placement=(up, (1.0, 0, 0)),
                **({} if release is None else {"release": release}),
                **({} if limits1 is None else {"limits": limits1, "restitution": e}))
    b.add_joint("B0", mb.Revolute(axis=z), "crank0", "coupler0", placement=(up.T, (1.0, 0, 0)))
    b.add_joint("C1", mb.Revolute(axis=z), "coupler0", "crank1", placement=(np.eye(3), (1.0, 0, 0)),
                child_placement=(np.eye(3), (1.0, 0, 0)), cut=True)
    return b.build(), np.zeros(3), np.array([-1.0, -1.0, 1.0])


def loop_jacobian(model, q):
    """The in-plane rows (x, y) of the cut hinge's point rows: the coupler's tip minus crank1's tip."""
    J = mb.point_jacobian(model, q, "coupler0", (1.0, 0, 0)) - mb.point_jacobian(model, q, "crank1", (1.0, 0, 0))
    return J[:2]


def run(model, q0, v0, t_end, rtol=1e-10, atol=1e-12):
    return mb.simulate(model, q0, v0, t_end, method="DOP853", formulation="constrained", rtol=rtol, atol=atol)


def switch_rows(res, t):
    """The rows (before, after) of the switch at t."""
    before, after = np.flatnonzero(res.t == t)
    return before, after


def roundoff(M, J):
    """The relative round-off of the impulse problem, the KKT system K = [[M, Jᵀ], [J, 0]] (Δv and Λ solve it):
    a backward-stable solve of order n = nv + rows errs by at most c n eps κ(K), c = 16."""
    n, m = M.shape[0], J.shape[0]
    K = np.block([[M, J.T], [J, np.zeros((m, m))]])
    return 16 * (n + m) * EPS * np.linalg.cond(K)


# ------------------------------------------------------------------------------------------------ the stop
def test_restitution_on_a_loop_is_an_impulse_on_the_constrained_tree():
    """e = 0.7: at every impact the stop coordinate's velocity after it is −e times the one before (1e-12
    relative), the loop's velocity rows G v⁺ vanish to round-off, and Δv = v⁺ − v⁻ equals M⁻¹ Jᵀ Λ with
    J = [G; e_A0ᵀ] and Λ from ``J v⁺ = [0; −e u⁻]``, solved here with numpy (to the round-off of that solve,
    16 (nv + rows) eps κ(K) of the KKT matrix K, which is below 1e-12)."""
    e = 0.7
    model, q0, v0 = four_bar(e=e)
    res = run(model, q0, v0, 2.0)
    impacts = [ev for ev in res.events if ev["kind"] == "impact"]
    assert len(impacts) >= 5 and all(ev["element"] == "A0" and ev["stop"] == "lower" for ev in impacts)
    for ev in impacts:
        u_minus, u_plus = ev["velocity_before"], ev["velocity_after"]
        assert abs(u_plus + e * u_minus) <= 1e-12 * abs(u_minus)
        before, after = switch_rows(res, ev["t"])
        q, vm, vp = res.q[after], res.v[before], res.v[after]
        assert np.array_equal(q, res.q[before]) and q[0] == LOWER     # at fixed q, exactly on the stop
        assert vm[0] == u_minus and vp[0] == u_plus
        M, G = mb.crba(model, q), loop_jacobian(model, q)
        J = np.vstack([G, np.eye(3)[:1]])
        tol = roundoff(M, J)
        assert tol <= 1e-12
        scale = np.abs(G).max() * np.abs(vm).max()
        assert np.abs(G @ vp).max() <= tol * scale
        # the independent impulse: (J M⁻¹ Jᵀ) Λ = [0; −e u⁻] − J v⁻, Δv = M⁻¹ Jᵀ Λ
        Minv_JT = np.linalg.solve(M, J.T)
        lam = np.linalg.solve(J @ Minv_JT, np.array([0.0, 0.0, -e * vm[0]]) - J @ vm)
        dv = Minv_JT @ lam
        assert np.abs((vp - vm) - dv).max() <= tol * np.abs(dv).max()
        # the generalized impulse on the coordinate is Λ of its row
        assert ev["impulse"] == pytest.approx(lam[2], rel=tol)


def test_elastic_stops_keep_the_energy_over_many_impacts():
    """e = 1 between two stops: the impacts conserve the kinetic energy (to round-off) and the flights the total
    energy to the integrator's error. DOP853's error control keeps each step's local error below rtol |x| (+ atol);
    the energy, quadratic in v and linear in the height, changes by at most 2 rtol E_scale per step, so that after
    n steps and k impacts (each located on an interpolant of the same accuracy) |ΔE| ≤ 2 rtol (n + k) E_scale,
    E_scale = max(|E(0)|, largest T)."""
    rtol = 1e-10
    model, q0, v0 = four_bar(e=1.0)
    res = run(model, q0, v0, 40.0, rtol=rtol)
    impacts = [ev for ev in res.events if ev["kind"] == "impact"]
    assert len(impacts) >= 30 and {ev["stop"] for ev in impacts} == {"lower", "upper"}
    for ev in impacts:
        assert abs(ev["velocity_after"] + ev["velocity_before"]) <= 1e-12 * abs(ev["velocity_before"])
    E = res.energy["kinetic"] + res.energy["potential"]
    scale = max(abs(E[0]), res.energy["kinetic"].max())
    bound = 2 * rtol * (res.info["steps"] + len(impacts)) * scale
    assert np.abs(E - E[0]).max() <= bound


def random_parallelogram(seed, e):
    """A parallelogram four-bar of random sizes and masses: cranks of length a on pivots d apart, the coupler of
    length d (so that q = 0, cranks upright, is on the loop), masses and centres of mass drawn at random, a stop
    below A0 at a random angle in [−1.2, −0.3] rad."""
    rng = np.random.default_rng(seed)
    a, d = rng.uniform(0.3, 2.0, 2)
    b = mb.ModelBuilder(gravity=(0.0, -G0, 0.0), name="random parallelogram")
    up = mb.rotation_about((0, 0, 1), math.pi / 2)
    z = (0.0, 0.0, 1.0)
    for body, length in (("crank0", a), ("crank1", a), ("coupler0", d)):
        m = rng.uniform(0.2, 3.0)
        izz = m * length**2 * rng.uniform(0.02, 0.2)
        b.add_body(body, m, com=(length * rng.uniform(0.1, 0.9), 0, 0), inertia=[1e-3 * izz, izz, izz])
    lower = rng.uniform(-1.2, -0.3)
    b.add_joint("A0", mb.Revolute(axis=z), "ground", "crank0", placement=(up, (0.0, 0, 0)), limits=(lower, 0.5),
                restitution=e)
    b.add_joint("A1", mb.Revolute(axis=z), "ground", "crank1", placement=(up, (d, 0, 0)))
    b.add_joint("B0", mb.Revolute(axis=z), "crank0", "coupler0", placement=(up.T, (a, 0, 0)))
    b.add_joint("C1", mb.Revolute(axis=z), "coupler0", "crank1", placement=(np.eye(3), (d, 0, 0)),
                child_placement=(np.eye(3), (a, 0, 0)), cut=True)
    w = rng.uniform(-2.0, -0.2)
    return b.build(), np.zeros(3), np.array([w, w, -w]), a, d


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), e=st.sampled_from([0.0, 0.5, 1.0]))
def test_every_switch_of_a_random_loop_is_an_impulse_on_the_constrained_tree(seed, e):
    """Random parallelograms (sizes, masses, stop, e): at every switch M Δv lies in the row space of J = [G;
    e_A0ᵀ] (M Δv = Jᵀ Λ: the least-squares residual vanishes), G v⁺ = 0, and the stop's velocity obeys Newton's
    law (u⁺ = −e u⁻ at an impact, 0 at a contact), to the round-off 16 n eps κ(K) of the KKT matrix K."""
    model, q0, v0, a, d = random_parallelogram(seed, e)
    res = run(model, q0, v0, 1.5)
    assert res.info["status"] == "success" and res.events
    for ev in res.events:
        before, after = switch_rows(res, ev["t"])
        q, vm, vp = res.q[after], res.v[before], res.v[after]
        J_cut = mb.point_jacobian(model, q, "coupler0", (d, 0, 0)) - mb.point_jacobian(model, q, "crank1", (a, 0, 0))
        G = J_cut[:2]
        J = np.vstack([G, np.eye(3)[:1]])
        M = mb.crba(model, q)
        tol = roundoff(M, J)
        dp = M @ (vp - vm)
        lam, *_ = np.linalg.lstsq(J.T, dp, rcond=None)
        scale_p = np.abs(M).max() * np.abs(vm).max()
        assert np.abs(J.T @ lam - dp).max() <= tol * scale_p
        assert np.abs(G @ vp).max() <= tol * np.abs(G).max() * np.abs(vm).max()
        u_minus, u_plus = ev["velocity_before"], ev["velocity_after"]
        target = 0.0 if ev["kind"] == "contact" else -e * u_minus
        assert abs(u_plus - target) <= tol * abs(u_minus)


def test_between_impacts_the_run_is_the_constrained_formulations():
    """The loop hanging and swinging clear of its stops (±1 rad about the bottom, amplitude 0.5): with nothing
    locked the modes use the constrained formulation's compiled right-hand side and projection, so that the run is
    the same run as the constrained formulation's without stops, bit for bit (same steps, same states)."""
    stops, _, _ = four_bar(limits=(math.pi - 1, math.pi + 1), e=0.7)
    plain, _, _ = four_bar(limits=None)
    q0, v0 = np.array([math.pi - 0.5, math.pi - 0.5, 0.5 - math.pi]), np.zeros(3)
    a, b = run(stops, q0, v0, 3.0), run(plain, q0, v0, 3.0)
    assert not a.events and a.info["steps"] == b.info["steps"]
    assert np.array_equal(a.t, b.t) and np.array_equal(a.x, b.x)


def test_user_events_of_a_loop_with_stops_are_those_of_the_run_without():
    """User ``events=`` in a loop's run across switches: the crank passing the bottom (q = π), both directions and
    downward only, swinging clear of its stops — the same run as the constrained formulation's without stops (the
    test above), so the same roots, located on the same dense output: equal bit for bit, one per half swing."""
    stops, _, _ = four_bar(limits=(math.pi - 1, math.pi + 1), e=0.7)
    plain, _, _ = four_bar(limits=None)
    q0, v0 = np.array([math.pi - 0.5, math.pi - 0.5, 0.5 - math.pi]), np.zeros(3)

    def bottom(t, q, v):
        return q[0] - math.pi

    def rising(t, q, v):
        return q[0] - math.pi
    rising.direction = 1.0
    out = [mb.simulate(m, q0, v0, 3.0, method="DOP853", formulation="constrained", rtol=1e-10, atol=1e-12,
                       events=[bottom, rising]) for m in (stops, plain)]
    a, b = (r.info["t_events"] for r in out)
    assert not out[0].events and len(a[0]) >= 2 and len(a[1]) == (len(a[0]) + 1) // 2
    for k in range(2):
        assert np.array_equal(np.asarray(a[k]), np.asarray(b[k]))


# ------------------------------------------------------------------------------------------------ the latch
def test_latch_locks_the_loop_at_rest_with_the_plastic_loss():
    """A latch on A0 at −0.3: it locks there (exactly), the loop (1 dof) has none left and is at rest exactly from
    then on (every velocity 0, the positions constant), and the energy lost is the plastic-impact loss
    ½ Δvᵀ M Δv (M from crba at the lock), to 1e-10 relative to the kinetic energy before it."""
    value = -0.3
    model, q0, v0 = four_bar(limits=None, latch=value)
    res = run(model, q0, v0, 1.5)
    locks = [ev for ev in res.events if ev["kind"] == "lock"]
    assert len(locks) == 1 and locks[0]["element"] == "A0" and locks[0]["dof"] == 0
    before, after = switch_rows(res, locks[0]["t"])
    q = res.q[after]
    assert q[0] == value
    assert np.all(res.v[after:] == 0.0) and np.all(res.q[after:] == q)
    M = mb.crba(model, q)
    vm, vp = res.v[before], res.v[after]
    T_before, T_after = 0.5 * vm @ M @ vm, 0.5 * vp @ M @ vp
    dv = vp - vm
    assert abs((T_before - T_after) - 0.5 * dv @ M @ dv) <= 1e-10 * T_before
    assert res.energy["kinetic"][before] == pytest.approx(T_before, rel=1e-13)
    E = res.energy["kinetic"] + res.energy["potential"]
    assert np.all(E[after:] == E[after])


# ------------------------------------------------------------------------------------------------ resting
def test_plastic_stop_holds_the_loop_with_a_pushing_reaction():
    """e = 0: the loop falls onto its stop, the first impact is a contact (it rests there: no rebound), and it
    stays on the stop for the rest of the run, at rest. The reaction holding it, from the static equilibrium
    g(q) = Gᵀλ + e_A0 ρ (g = rnea(q, 0, 0), the forces gravity needs) solved here with numpy, pushes (ρ > 0 on the
    lower stop). The loop's residuals stay at round-off: the projection after every step is a Newton iteration
    that ends at round-off (64 eps on the 1 m links)."""
    model, q0, v0 = four_bar(e=0.0)
    res = run(model, q0, v0, 2.0)
    assert [ev["kind"] for ev in res.events] == ["contact"]
    ev = res.events[0]
    assert ev["velocity_after"] == 0.0 and ev["dof"] == 0
    _, after = switch_rows(res, ev["t"])
    assert np.all(res.q[after:, 0] == LOWER) and np.all(res.v[after:] == 0.0)
    q = res.q[-1]
    G = loop_jacobian(model, q)
    A = np.vstack([G, np.eye(3)[:1]]).T
    g = mb.rnea(model, q, np.zeros(3), np.zeros(3))
    sol = np.linalg.solve(A, g)
    assert sol[2] > 0.0
    rows = ConstraintRows(model)
    residual = max(np.abs(rows.evaluate(qk)[0]).max() for qk in res.q)
    assert residual <= 64 * EPS
    assert res.residuals["C1"].max() == residual    # the Result's residuals, as the constrained formulation's
    assert res.residuals["velocity"].max() <= 64 * EPS * np.abs(res.v).max()


def test_resting_loop_leaves_its_stop_when_the_reaction_would_pull():
    """e = 0, then a torque k t on A1 that lifts the loop: it rests on its stop while the reaction ρ (the
    multiplier of the stop's row in the mode's KKT solve) pushes, and separates at the instant t* where ρ comes
    down to zero. At rest the static equilibrium gives ρ(t) = ρ₀ − k t a (a = the row of ρ in A⁻¹ e_A1, A =
    [Gᵀ, e_A0], solved here with numpy), so t* = ρ₀ / (k a); the guard is that same linear function of t
    evaluated by the library's KKT solve, located by Brent to 4 eps: t matches t* to the round-off of the two
    solves, 64 n eps κ(A) relative."""
    k = 20.0
    model, q0, v0 = four_bar(e=0.0)
    res = mb.simulate(model, q0, v0, 2.0, method="DOP853", formulation="constrained", rtol=1e-10, atol=1e-12,
                      tau=lambda t, q, v: np.array([0.0, k * max(t - 1.0, 0.0), 0.0]))
    kinds = [ev["kind"] for ev in res.events]
    assert kinds[:2] == ["contact", "separate"], kinds
    q = res.q[np.flatnonzero(res.t == res.events[0]["t"])[-1]]
    A = np.vstack([loop_jacobian(model, q), np.eye(3)[:1]]).T
    g = mb.rnea(model, q, np.zeros(3), np.zeros(3))
    rho0 = np.linalg.solve(A, g)[2]
    a = np.linalg.solve(A, np.eye(3)[1])[2]
    assert rho0 > 0.0 and a > 0.0
    t_star = 1.0 + rho0 / (k * a)
    assert abs(res.events[1]["t"] - t_star) <= 64 * 3 * EPS * np.linalg.cond(A) * t_star
    assert res.events[1]["t"] > res.events[0]["t"]


def test_dependent_stops_of_a_loop_reached_at_once():
    """Stops at −π/4 on both cranks of the parallelogram (A0 = A1 on the loop): both are reached at the same
    instant, and their two rows with the loop's two are dependent (4 rows, 3 coordinates: J M⁻¹ Jᵀ singular).
    The proximal-point solve gives the unique velocities: u⁺ = −e u⁻ on both stops and G v⁺ = 0, to the round-off
    of the iteration (its fixed point solves the singular problem exactly; stopped at 4 eps change of Λ, bound
    16 n eps κ(K) of the independent rows, K the KKT matrix of [G; e_A0ᵀ], times 4 for the iteration), and the
    cascade ends at rest on both stops."""
    e = 0.7
    model, q0, v0 = four_bar(limits=(LOWER, UPPER), e=e, limits1=(LOWER, UPPER))
    res = run(model, q0, v0, 3.0)
    assert res.info["status"] == "success"
    times = sorted({ev["t"] for ev in res.events})
    impacts = [ev for ev in res.events if ev["kind"] == "impact"]
    assert len(impacts) >= 10
    for t in times:
        at = [ev for ev in res.events if ev["t"] == t]
        assert sorted(ev["element"] for ev in at) == ["A0", "A1"]
        before, after = switch_rows(res, t)
        q, vm, vp = res.q[after], res.v[before], res.v[after]
        assert q[0] == LOWER and q[1] == LOWER
        M, G = mb.crba(model, q), loop_jacobian(model, q)
        tol = 4 * roundoff(M, np.vstack([G, np.eye(3)[:1]]))
        for ev in at:
            if ev["kind"] == "impact":
                assert abs(ev["velocity_after"] + e * ev["velocity_before"]) <= tol * abs(ev["velocity_before"])
        assert np.abs(G @ vp).max() <= tol * np.abs(G).max() * np.abs(vm).max()
    assert {ev["kind"] for ev in res.events if ev["t"] == times[-1]} == {"contact"}
    assert np.all(res.v[-1] == 0.0) and res.q[-1, 0] == LOWER and res.q[-1, 1] == LOWER


def test_unlock_release_frees_a_held_loop():
    """A1 held until t = 0.5 (release mode "unlock"): the loop, tilted and with no degree of freedom while A1 is
    held, stays exactly where it is (every velocity 0, the positions constant); at 0.5 it is released and falls
    as the loop without any switch does from that state: the constrained formulation's own run from (0.5, q0,
    0) gives the same states at the output times, to the integrators' tolerance (both DOP853 at rtol 1e-10 and
    atol 1e-12 over 0.7 s: 100 rtol on states of order 1)."""
    model, _, _ = four_bar(limits=None, release={"at": 0.5, "mode": "unlock"})
    q0, v0 = np.array([0.3, 0.3, -0.3]), np.zeros(3)
    t_eval = np.linspace(0.0, 1.2, 13)
    res = mb.simulate(model, q0, v0, 1.2, method="DOP853", formulation="constrained", rtol=1e-10, atol=1e-12,
                      t_eval=t_eval)
    assert [(ev["kind"], ev["element"], ev["t"]) for ev in res.events] == [("release", "A1", 0.5)]
    held = res.t <= 0.5
    assert np.all(res.q[held] == q0) and np.all(res.v[held] == 0.0)
    plain, _, _ = four_bar(limits=None)
    free = mb.simulate(plain, q0, v0, 1.2, t0=0.5, method="DOP853", formulation="constrained", rtol=1e-10,
                       atol=1e-12, t_eval=t_eval[t_eval >= 0.5])
    after = res.t >= 0.5
    ours = np.hstack([res.q[after], res.v[after]])[-len(free.t):]
    np.testing.assert_allclose(ours, np.hstack([free.q, free.v]), rtol=0, atol=100 * 1e-10)
    assert np.abs(res.q[-1] - q0).max() > 0.1     # it did fall


# ------------------------------------------------------------------------------------------------ files, input
def test_model_file_with_a_loop_and_stops_runs(tmp_path, monkeypatch, capsys):
    """``examples/four_bar_stops.yaml`` (cut joint C1, limits and restitution on A0) runs with ``multibody run``
    and through ``load``: the same switches as the model built here."""
    from multibody import examples
    from multibody.cli import main
    from multibody.io import load

    path = examples.path("four_bar_stops")
    mf = load(path)
    res = run(mf.model, mf.q0, mf.v0, 1.2)
    twin = run(*four_bar(e=0.7), 1.2)
    assert [ev["kind"] for ev in res.events] == [ev["kind"] for ev in twin.events]
    assert [ev["t"] for ev in res.events] == pytest.approx([ev["t"] for ev in twin.events], abs=1e-9)
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(path), "--t-end", "1"]) == 0


def test_slider_crank_model_file_with_a_stop_on_its_guide(tmp_path):
    """``examples/slider_crank.yaml`` (cut pin B) with an end stop on the piston's guide at 0.24 m (e = 0.5) and the
    constrained formulation, written as a model file: at every impact the piston's velocity after it is −e times
    the one before, and Δv = M⁻¹ Jᵀ Λ with J = [G; e_guideᵀ] (G the pin's in-plane rows from point_jacobian),
    as in the four-bar's test, to the round-off of the KKT matrix."""
    import yaml

    from multibody import examples
    from multibody.io import load

    e = 0.5
    spec = yaml.safe_load(examples.path("slider_crank").read_text(encoding="utf-8"))
    guide = next(j for j in spec["joints"] if j["name"] == "guide")
    guide.update(limits={"upper": 0.24}, restitution=e)
    spec["simulation"] = {"formulation": "constrained", "method": "DOP853", "t_end": 1.5, "rtol": 1e-10, "atol": 1e-12}
    path = tmp_path / "slider_crank_stop.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    mf = load(path)
    model = mf.model
    res = mb.simulate(model, mf.q0, mf.v0, **mf.settings())
    impacts = [ev for ev in res.events if ev["kind"] == "impact"]
    assert len(impacts) >= 3 and all(ev["element"] == "guide" and ev["stop"] == "upper" for ev in impacts)
    k = model.joint("guide").v_slice.start
    for ev in impacts:
        assert abs(ev["velocity_after"] + e * ev["velocity_before"]) <= 1e-12 * abs(ev["velocity_before"])
        before, after = switch_rows(res, ev["t"])
        q, vm, vp = res.q[after], res.v[before], res.v[after]
        G = (mb.point_jacobian(model, q, "rod", (0.2, 0, 0)) - mb.point_jacobian(model, q, "slider"))[:2]
        J = np.vstack([G, np.eye(model.nv)[k:k + 1]])
        M = mb.crba(model, q)
        tol = roundoff(M, J)
        Minv_JT = np.linalg.solve(M, J.T)
        lam = np.linalg.solve(J @ Minv_JT, np.array([0.0, 0.0, -e * vm[k]]) - J @ vm)
        assert np.abs((vp - vm) - Minv_JT @ lam).max() <= tol * np.abs(Minv_JT @ lam).max()


def test_what_a_run_with_a_loop_refuses():
    model, q0, v0 = four_bar()
    with pytest.raises(ModelError, match="method 'BDF'") as err:
        mb.simulate(model, q0, v0, 1.0, method="BDF", formulation="constrained")
    assert err.value.element == "method"
    with pytest.raises(ModelError, match=r"constraints or cut joints \(C1\) and formulation 'tree'") as err:
        mb.simulate(model, q0, v0, 1.0)
    assert err.value.element == "formulation"
    b = mb.ModelBuilder()
    b.add_body("a", 1.0, com=(0.5, 0, 0), inertia=[0.1, 0.1, 0.1])
    b.add_body("c", 1.0, com=(0.5, 0, 0), inertia=[0.1, 0.1, 0.1])
    b.add_joint("h", mb.Revolute(axis=(0, 0, 1)), "ground", "a")
    b.add_joint("k", mb.Revolute(axis=(0, 0, 1)), "a", "c")
    with pytest.raises(ModelError, match="joint 'cut' closes a loop"):
        b.add_joint("cut", mb.Revolute(axis=(0, 0, 1)), "c", "ground", placement=(np.eye(3), (1.0, 0, 0)),
                    child_placement=(np.eye(3), (1.0, 0, 0)), cut=True, limits=(-0.5, 0.5))
        b.build()


def test_checkpoint_of_a_loop_across_impacts_resumes(tmp_path, monkeypatch):
    """DOP853 on the four-bar with its stop: resumed from a checkpoint written after impacts (t ≥ 1), the run equals
    the uninterrupted one to the tolerance (the restarted adaptive run takes other steps: 100 rtol |x| bounds the
    difference of the states and of the switch instants, as in tests/test_switching.py), with the same switches."""
    mid = tmp_path / "mid.ckpt"
    copy_at(monkeypatch, mid, lambda t, step: t >= 1.0)
    rtol = 1e-10
    model, q0, v0 = four_bar()
    kw = {"method": "DOP853", "formulation": "constrained", "rtol": rtol, "atol": 1e-12, "n_out": 31}
    plain = mb.simulate(model, q0, v0, 2.0, **kw)
    full = mb.simulate(model, q0, v0, 2.0, checkpoint=tmp_path / "run.ckpt", every=0.25, **kw)
    assert np.array_equal(full.x, plain.x) and full.events == plain.events
    resumed = mb.resume(mid)
    assert resumed.info["resumed_from"] >= 1.0
    bound = 100 * rtol * np.abs(plain.x).max()
    assert [(e["kind"], e["element"]) for e in resumed.events] == [(e["kind"], e["element"]) for e in plain.events]
    assert np.abs(np.array([e["t"] for e in resumed.events]) - [e["t"] for e in plain.events]).max() <= bound
    assert resumed.x.shape == plain.x.shape and np.abs(resumed.x - plain.x).max() <= bound
