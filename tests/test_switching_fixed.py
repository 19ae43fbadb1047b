"""Fixed-step methods across switches in the structures with no compiled loop: the Python loop of
``switching/python_steps.py`` in the constrained formulation (a four-bar on its stops) and in the Poisson one (a
pendulum on its stop), and the same loop on a tree checked against the tree's compiled switching loop.
"""
import math

import numpy as np
import pytest
from test_switching import G, double_pendulum, pendulum, period, rows_at
from test_switching_loops import LOWER, four_bar, loop_jacobian, roundoff, switch_rows

import multibody as mb
from checkpoint_copies import copy_at
from multibody.errors import IntegrationError
from multibody.switching.structure import Structure
from multibody.switching.run import union_names
from multibody.switching.events import run_hybrid

EPS = np.finfo(float).eps


class PythonTree(Structure):
    """The tree's structure stepped by the Python loop instead of its compiled one."""

    compiled_steps = False


def hybrid(cls, model, q0, v0, t_end, method, h):
    nsteps = round(t_end / h)
    qn, vn = union_names(model)
    st = cls(model, None, None, qn, vn, 0)
    x0 = np.concatenate([q0, v0]).astype(float)
    return run_hybrid(st, x0, 0.0, nsteps * h, method, h=h, nsteps=nsteps, save=np.arange(nsteps + 1))


@pytest.mark.parametrize("method", ["RK4", "VERLET"])
@pytest.mark.parametrize("case", ["pendulum", "double pendulum"])
def test_python_loop_on_a_tree_is_the_compiled_loop_bit_for_bit(method, case):
    """On a tree the Python loop makes the compiled loop's operations — the stages by the same compiled
    ``stage_state`` (the classical RK4 written out in ``modes._step`` rounds the same sums in the same order),
    the same compiled right-hand sides, the same guards' signs, the same dense output for Brent —, so every output
    row, event time and impulse is the same bit for bit (IEEE arithmetic without reassociation: numba compiles
    without fastmath)."""
    model, q0 = (pendulum(e=0.7), [-0.8]) if case == "pendulum" else (double_pendulum(0.6), [0.5, 0.3])
    v0 = np.zeros(model.nv)
    a = hybrid(Structure, model, q0, v0, 3.0, method, 0.01)
    b = hybrid(PythonTree, model, q0, v0, 3.0, method, 0.01)
    assert a.status == b.status == "success"
    assert len(a.log) >= 2 and any(e["kind"] == "impact" for e in a.log)
    assert a.log == b.log
    assert a.t == b.t and a.system == b.system and a.steps == b.steps
    assert np.array_equal(np.array(a.x), np.array(b.x))


# ------------------------------------------------------------------------------------------------ constrained
def test_four_bar_impacts_located_inside_the_steps():
    """RK4 with h = 1e-3 on the four-bar with its stops (e = 0.7): every impact is located inside its step on the
    projected step of smaller size — the stop coordinate at the row before the switch is on the stop to the
    location's round-off (brentq's 4 eps (1 + t) in time times the approach speed, a few ulps of the projection),
    after it exactly —; Newton's law u⁺ = −e u⁻ holds to 1e-12 and the loop rows G v⁺ vanish to the round-off of the
    impulse's KKT solve; the other outputs are on the grid."""
    e = 0.7
    model, q0, v0 = four_bar(e=e)
    res = mb.simulate(model, q0, v0, 1.5, method="RK4", h=1e-3, formulation="constrained")
    assert res.info["path"] == "python" and res.info["status"] == "success"
    impacts = [ev for ev in res.events if ev["kind"] == "impact"]
    assert len(impacts) >= 3 and all(ev["element"] == "A0" and ev["stop"] == "lower" for ev in impacts)
    h = res.info["h"]
    times = np.array([ev["t"] for ev in res.events])
    other = res.t[~np.isin(res.t, times)]
    assert np.abs(other / h - np.round(other / h)).max() <= 1e-9
    for ev in impacts:
        u_minus, u_plus = ev["velocity_before"], ev["velocity_after"]
        assert abs(u_plus + e * u_minus) <= 1e-12 * abs(u_minus)
        assert abs(ev["t"] / h - round(ev["t"] / h)) > 1e-6       # inside a step, not on the grid
        before, after = switch_rows(res, ev["t"])
        assert abs(res.q[before, 0] - LOWER) <= 8 * EPS * (1 + ev["t"]) * abs(u_minus) + 16 * EPS
        assert res.q[after, 0] == LOWER
        q, vm, vp = res.q[after], res.v[before], res.v[after]
        M, Gm = mb.crba(model, q), loop_jacobian(model, q)
        tol = roundoff(M, np.vstack([Gm, np.eye(3)[:1]]))
        assert np.abs(Gm @ vp).max() <= tol * np.abs(Gm).max() * np.abs(vm).max()
    # the state stays on the loop (projected after every step, to round-off: bars of 1 m)
    assert res.residuals["C1"].max() <= 64 * EPS
    assert res.residuals["velocity"].max() <= 64 * EPS * np.abs(res.v).max()


def test_four_bar_impact_time_converges_with_order_4():
    """The first impact instant of the RK4 runs against a DOP853 run at rtol 1e-12 (its error: of order 1e-12
    here, against errors of 1e-7 .. 1e-9 of the RK4 runs): the error ratio is 2⁴ = 16 within 30 % when h halves."""
    model, q0, v0 = four_bar()
    ref = mb.simulate(model, q0, v0, 0.6, method="DOP853", rtol=1e-12, atol=1e-14, formulation="constrained")
    t_ref = ref.events[0]["t"]
    errors = []
    for h in (0.02, 0.01):
        res = mb.simulate(model, q0, v0, 0.6, method="RK4", h=h, formulation="constrained")
        assert res.events[0]["kind"] == "impact"
        errors.append(abs(res.events[0]["t"] - t_ref))
    assert errors[1] > 1000 * 1e-12
    assert 16 / 1.3 < errors[0] / errors[1] < 16 * 1.3


def test_four_bar_cascade_of_bounces_dies_out_into_contact():
    """e = 0.7 over 3 s: every impact comes slower than the one before (each rebound loses energy: the projection
    after a step does not hold a free coordinate near its stop, which would place the roots up to ``SAME_INSTANT``
    past it and feed the bounces), and the cascade ends with the crank resting on its stop, as the adaptive run's."""
    model, q0, v0 = four_bar(e=0.7)
    res = mb.simulate(model, q0, v0, 3.0, method="RK4", h=1e-3, formulation="constrained")
    ref = mb.simulate(model, q0, v0, 3.0, method="DOP853", rtol=1e-12, atol=1e-14, formulation="constrained")
    speeds = np.array([abs(ev["velocity_before"]) for ev in res.events])
    assert np.all(np.diff(speeds) < 0.0)
    assert [ev["kind"] for ev in res.events][-1] == [ev["kind"] for ev in ref.events][-1] == "contact"
    assert res.v[-1, 0] == 0.0 and res.q[-1, 0] == LOWER


@pytest.mark.parametrize("method", ["RK2", "HEUN", "VERLET"])
def test_four_bar_second_order_methods(method):
    """The second-order methods on the four-bar: the first impact instant converges with order 2 (ratio 4 within
    30 % when h halves; reference DOP853 at rtol 1e-12), Newton's law at the impact to 1e-12."""
    model, q0, v0 = four_bar()
    ref = mb.simulate(model, q0, v0, 0.6, method="DOP853", rtol=1e-12, atol=1e-14, formulation="constrained")
    errors = []
    for h in (0.004, 0.002):
        res = mb.simulate(model, q0, v0, 0.6, method=method, h=h, formulation="constrained")
        ev = res.events[0]
        assert abs(ev["velocity_after"] + 0.7 * ev["velocity_before"]) <= 1e-12 * abs(ev["velocity_before"])
        errors.append(abs(ev["t"] - ref.events[0]["t"]))
    assert 4 / 1.3 < errors[0] / errors[1] < 4 * 1.3


def test_four_bar_fixed_step_batch():
    """``simulate_batch`` of a model with a loop and stops: each run through the constrained formulation's loop,
    equal to its ``simulate`` on the output grid."""
    model, q0, v0 = four_bar()
    Q, V = np.array([q0, q0]), np.array([v0, 0.5 * v0])
    batch = mb.simulate_batch(model, Q, V, 0.6, method="RK4", h=0.005, output_every=20)
    assert batch.info["formulation"] == "constrained" and list(batch.status) == ["success", "success"]
    for b in range(2):
        one = mb.simulate(model, Q[b], V[b], 0.6, method="RK4", h=0.005, formulation="constrained")
        on_grid = np.isin(one.t, batch.t) & np.concatenate([np.diff(one.t) != 0, [True]])
        keep = on_grid & ~np.isin(one.t, [ev["t"] for ev in one.events])
        np.testing.assert_array_equal(batch.q[b], one.q[keep])


# ------------------------------------------------------------------------------------------------ Poisson
def test_poisson_pendulum_rk4_equals_the_tree_run():
    """The pendulum's inertia about its hinge is constant: p = I θ̇ is a linear change of the state, with which
    every Runge–Kutta method commutes — the Poisson and tree RK4 runs are the same sequence in exact arithmetic.
    Their impact times then differ by round-off: the states' (n steps of a few roundings each, n eps relative per
    quantity at most), over the approach speed, plus brentq's location (4 eps (1 + t) each). p jumps by the log's
    impulse, JᵀΛ, to round-off."""
    model = pendulum(e=0.7)
    tree = mb.simulate(model, [-0.5], [0.0], 3.0, method="RK4", h=1e-3)
    poisson = mb.simulate(model, [-0.5], [0.0], 3.0, method="RK4", h=1e-3, formulation="poisson")
    assert poisson.info["path"] == "python" and tree.info["path"] == "compiled"
    assert [e["kind"] for e in poisson.events] == [e["kind"] for e in tree.events] and len(tree.events) == 3
    n = tree.info["steps"]
    P = poisson.series["p"]
    for e, et in zip(poisson.events, tree.events):
        speed = abs(et["velocity_before"])
        assert abs(e["t"] - et["t"]) <= 8 * EPS * (1 + e["t"]) + 8 * n * EPS * (1 + 0.5) / speed
        before, after = rows_at(poisson, e["t"])
        scale = np.abs(P[[before, after]]).max()
        assert abs((P[after, 0] - P[before, 0]) - e["impulse"]) <= 8 * EPS * scale
        assert abs(e["velocity_after"] + 0.7 * e["velocity_before"]) <= 1e-12 * abs(e["velocity_before"])


def test_poisson_pendulum_impact_time_converges_with_order_4():
    """e = 1, released from rest at θ0: the first impact comes at T/4 of the closed-form period; the RK4 runs in
    (q, p) converge to it with order 4 (ratio 16 within 30 %), the impacts located inside the steps."""
    theta0 = 0.8
    model = pendulum(e=1.0)
    T = period(model, theta0)
    errors = []
    for h in (0.02, 0.01):
        res = mb.simulate(model, [-theta0], [0.0], 0.5 * T, method="RK4", h=h, formulation="poisson")
        ev = res.events[0]
        before, after = rows_at(res, ev["t"])
        assert abs(res.q[before, 0]) <= 8 * EPS * (1 + ev["t"]) * abs(ev["velocity_before"]) + 16 * EPS
        assert res.q[after, 0] == 0.0
        errors.append(abs(ev["t"] - T / 4))
    assert 16 / 1.3 < errors[0] / errors[1] < 16 * 1.3


def test_poisson_resting_contact_with_a_fixed_step():
    """A plastic stop (e = 0) under a tilted gravity: the pendulum comes to rest on its stop and stays there with
    a pushing reaction (the locked coordinate's velocity exactly zero), as the tree run does."""
    b = mb.ModelBuilder(gravity=(0.5 * G, 0.0, -G))
    b.add_body("bob", mass=1.0, com=(0.0, 0.0, -1.0), inertia=np.diag([1e-3] * 3))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=(-0.2, 0.2), restitution=0.0)
    model = b.build()
    tree = mb.simulate(model, [0.1], [0.0], 1.5, method="RK4", h=1e-3)
    poisson = mb.simulate(model, [0.1], [0.0], 1.5, method="RK4", h=1e-3, formulation="poisson")
    assert [e["kind"] for e in poisson.events] == [e["kind"] for e in tree.events] == ["contact"]
    t_c = poisson.events[0]["t"]
    after = poisson.t > t_c
    assert np.all(poisson.q[after, 0] == -0.2) and np.all(poisson.v[after, 0] == 0.0)
    assert np.all(poisson.series["p"][after, 0] == 0.0)


def test_torque_callback_with_a_fixed_step_in_the_python_loop():
    """A Python torque callback with a fixed step runs in the Python loop, in the Poisson formulation and in the
    tree's (``Structure.compiled_steps`` is False with a callback). The pendulum's inertia is constant, so p = I θ̇
    is a linear change of variables and RK4 makes the same sequence in both forms up to round-off: the impact times
    agree to 8 eps (1 + t) (two locations at brentq's precision) plus the round-off of the steps, 12 n eps
    relative in the state over n steps divided by the approach speed."""
    model = pendulum(e=0.7)

    def tau(t, q, v):
        return np.array([0.5 * math.sin(t)])

    res = mb.simulate(model, [-0.5], [0.0], 1.0, method="RK4", h=1e-3, formulation="poisson", tau=tau)
    ref = mb.simulate(model, [-0.5], [0.0], 1.0, method="DOP853", rtol=1e-12, atol=1e-14, tau=tau)
    assert len(res.events) == len(ref.events) >= 1
    assert abs(res.events[0]["t"] - ref.events[0]["t"]) <= 1e-9      # RK4 at h = 1e-3: C h⁴ with C of order 1
    tree = mb.simulate(model, [-0.5], [0.0], 1.0, method="RK4", h=1e-3, tau=tau)
    assert tree.info["path"] == "python" and len(tree.events) == len(res.events)
    for a, b in zip(tree.events, res.events):
        bound = 8 * EPS * (1 + a["t"]) + 12 * 1000 * EPS / abs(a["velocity_before"])
        assert abs(a["t"] - b["t"]) <= bound


def test_a_failure_in_the_python_loop_keeps_the_rows_so_far():
    """A torque callback that raises after t = 0.3: the run fails with the rows up to it and its switches."""
    model = pendulum(e=0.7)

    def tau(t, q, v):
        if t > 0.3:
            raise RuntimeError("the motor is gone")
        return np.zeros(1)

    with pytest.raises(IntegrationError, match="motor") as info:
        mb.simulate(model, [-0.5], [0.0], 1.0, method="RK4", h=1e-3, formulation="poisson", tau=tau)
    res = info.value.result
    assert res.info["status"] == "failed" and res.t[-1] == pytest.approx(0.3, abs=1e-3) and len(res.t) > 250


def test_progress_bar_of_a_fixed_step_run_changes_nothing(capsys):
    """``progress=True``: the run goes in pieces (the bar moves between them), each piece going on in the same
    mode — the outputs and the switch log are those of the run without a bar, bit for bit."""
    model, q0, v0 = four_bar(e=0.7)
    plain = mb.simulate(model, q0, v0, 1.5, method="RK4", h=1e-3, formulation="constrained", progress=False)
    shown = mb.simulate(model, q0, v0, 1.5, method="RK4", h=1e-3, formulation="constrained", progress=True)
    assert "RK4 h=0.001" in capsys.readouterr().err
    assert shown.events == plain.events and len(plain.events) >= 2
    assert np.array_equal(shown.t, plain.t) and np.array_equal(shown.q, plain.q) and np.array_equal(shown.v, plain.v)


def test_checkpoint_of_a_fixed_step_loop_run_resumes_bit_for_bit(tmp_path, monkeypatch):
    """RK4 on the four-bar with its stops: resumed from a checkpoint written after an impact (t ≥ 1), the run is the
    uninterrupted one bit for bit (the same steps from the same state and mode; the state at a checkpoint is on the
    grid, after the projection of its step)."""
    mid = tmp_path / "mid.ckpt"
    copy_at(monkeypatch, mid, lambda t, step: t >= 1.0)
    model, q0, v0 = four_bar()
    kw = {"method": "RK4", "h": 1e-3, "formulation": "constrained"}
    plain = mb.simulate(model, q0, v0, 1.5, **kw)
    full = mb.simulate(model, q0, v0, 1.5, checkpoint=tmp_path / "run.ckpt", every=0.25, **kw)
    assert np.array_equal(full.x, plain.x) and full.events == plain.events and len(plain.events) >= 2
    resumed = mb.resume(mid)
    assert resumed.info["resumed_from"] >= 1.0
    assert resumed.events == plain.events
    assert np.array_equal(resumed.t, plain.t) and np.array_equal(resumed.x, plain.x)


def test_latch_and_unlock_release_of_a_loop_with_a_fixed_step():
    """RK4 on the four-bar: a latch on A0 at −0.3 locks it exactly, at rest exactly from then on (no degree of
    freedom left), with the plastic loss ½ Δvᵀ M Δv to 1e-10 of T⁻; A1 held until t = 0.5 stays exactly in place,
    is released on the grid instant 0.5 (a release time is located to brentq's 4 eps (1 + t)), and then falls."""
    value = -0.3
    model, q0, v0 = four_bar(limits=None, latch=value)
    res = mb.simulate(model, q0, v0, 1.5, method="RK4", h=1e-3, formulation="constrained")
    locks = [ev for ev in res.events if ev["kind"] == "lock"]
    assert len(locks) == 1 and locks[0]["dof"] == 0
    before, after = switch_rows(res, locks[0]["t"])
    q = res.q[after]
    assert q[0] == value and np.all(res.v[after:] == 0.0) and np.all(res.q[after:] == q)
    M = mb.crba(model, q)
    vm, vp = res.v[before], res.v[after]
    dv = vp - vm
    T_before = 0.5 * vm @ M @ vm
    assert abs((T_before - 0.5 * vp @ M @ vp) - 0.5 * dv @ M @ dv) <= 1e-10 * T_before

    model, _, _ = four_bar(limits=None, release={"at": 0.5, "mode": "unlock"})
    q0, v0 = np.array([0.3, 0.3, -0.3]), np.zeros(3)
    res = mb.simulate(model, q0, v0, 1.2, method="RK4", h=1e-3, formulation="constrained")
    assert [(ev["kind"], ev["element"]) for ev in res.events] == [("release", "A1")]
    assert abs(res.events[0]["t"] - 0.5) <= 8 * EPS * 1.5
    held = res.t < res.events[0]["t"]
    assert np.all(res.q[held] == q0) and np.all(res.v[held] == 0.0)
    assert np.abs(res.q[-1] - q0).max() > 0.1
