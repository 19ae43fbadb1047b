"""Runs that end and say why: every fault met during a run ends it with one line naming what failed, the partial
Result attached, and a run never goes on without end or in silence.

* chattering: more than ``MAX_SWITCHES_PER_STEP`` switches within one step (a Zeno sequence; fixed-step and
  adaptive) ends the run with an ``IntegrationError`` naming the joints (``switching/events.py``);
* the step budget ``max_steps`` of a run across switches counts every step (fixed step: the grid's and those that
  locate the switches, exactly; adaptive: those of all the modes);
* a switch exactly at ``t_end`` (a release, an impact) is made and logged, and the run ends normally after it;
* two joints that separate at the same instant;
* a compiled torque law that raises, or returns NaN, ends the run naming the law (tree and switching runs, fixed
  and adaptive; a batch marks the run failed), with nothing printed by numba;
* the solves of the switches report their convergence in ``result.info["solves"]``, and one that stops early
  warns (``ConvergenceWarning``);
* adaptive runs across switches show a progress bar, as other runs do.
"""
import math
import warnings

import numba
import numpy as np
import pytest

import multibody as mb
from multibody.errors import ConvergenceWarning, IntegrationError
from multibody.switching.events import MAX_SWITCHES_PER_STEP, run_hybrid
from multibody.switching.python_steps import PythonSteps

G0 = 9.81


def pendulum(limits=(-0.05, 0.05), e=0.9, release=None, mode="unlock", second=False):
    """A 1 m pendulum about y (1 kg at its middle) with stops ``limits`` (restitution e); ``second``: a second link
    below it; ``release``: the time both joints are released (``mode``)."""
    b = mb.ModelBuilder(gravity=(0, 0, -G0), name="pendulum")
    b.add_body("l", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    b.add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "l",
                **({} if limits is None else {"limits": limits, "restitution": e}))
    if second:
        b.add_body("l2", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
        b.add_joint("j2", mb.Revolute(axis=(0, 1, 0)), "l", "l2", placement=(None, (0, 0, -1)))
    if release is not None:
        b.add_release("j", release, mode)
        if second:
            b.add_release("j2", release, mode)
    return b.build()


# ---------------------------------------------------------------------------------------------- chattering
def arm_with_finger():
    """Two links and a finger sliding on the second (10 g and inertia 1e-3 each), every joint with stops, held by a
    stiff JointPD (kp 400, kd 40) whose finger target is its stop: RK4 at h = 1e-3 is far beyond the finger's
    stability (kd h / m = 4 > 2.8), and from t ≈ 0.033 the finger's stop and the root's switch in turn every few
    1e-11 s — as the Panda held by a stiff posture controller did."""
    b = mb.ModelBuilder(gravity=(0, 0, -G0), name="arm with finger")
    parent = "ground"
    for k in range(3):
        b.add_body(f"l{k}", mass=0.01, com=(0, 0, -0.05), inertia=(1e-3,) * 3)
        joint = mb.Prismatic(axis=(1, 0, 0)) if k == 2 else mb.Revolute(axis=(0, 1, 0))
        b.add_joint(f"j{k}", joint, parent, f"l{k}", placement=(None, (0, 0, -0.1 if k else 0)),
                    limits=(0.0, 0.5) if k == 2 else (-0.5, 0.5))
        parent = f"l{k}"
    return b.build().with_controllers({"hold": mb.JointPD(400, 40, [0.3, 0.3, 0.0])})


def test_chattering_ends_a_fixed_step_run_naming_the_joints():
    model = arm_with_finger()
    with pytest.raises(IntegrationError, match="chattering") as err:
        mb.simulate(model, np.zeros(3), np.zeros(3), 0.05, method="RK4", h=1e-3)
    exc = err.value
    assert f"{MAX_SWITCHES_PER_STEP + 1} switches within one step (h = 0.001)" in str(exc)
    assert exc.element in ("joint 'j0'", "joint 'j2'") and "'j0'" in str(exc) and "'j2'" in str(exc)
    res = exc.result
    assert res.info["status"] == "failed"
    # the partial result: the grid up to the step the chattering happened in, and the switches inside it (logged:
    # most switches log one entry, a few none or two)
    step = math.floor(res.t[-1] / 1e-3)
    assert res.t[-1] < 0.05 and step >= 1 and np.all(np.isfinite(res.q))
    inside = [ev for ev in res.events if step * 1e-3 <= ev["t"] <= (step + 1) * 1e-3]
    assert len(inside) > MAX_SWITCHES_PER_STEP // 2


class Chatter(PythonSteps):
    """A system of the protocol of ``switching/events.py`` whose every mode ends 1e-9 s after it starts, at a
    switch of joint 'j' that changes nothing: ẍ = 0, the guard the time left to the next switch."""

    index, nq, nv, quaternions, projects = 0, 1, 1, False, False

    def __init__(self):
        self.t_next = 1e-9

    def start(self, t, x, fresh):
        return np.zeros(1, dtype=bool)

    def arm(self, t, x):
        self.t_next = t + 1e-9

    def snap(self, x):
        pass

    def rhs(self, t, x):
        return np.array([x[1], 0.0])

    def project(self, t, x):
        return x

    def guards(self, t, x):
        return self.t_next - t

    def reached(self, t, x):
        return np.ones(1, dtype=bool)

    def switch(self, t, x, reached, log):
        log.append({"t": float(t), "element": "j", "kind": "contact"})
        return x, None


@pytest.mark.parametrize("method", ["DOP853", "RK4"])
def test_a_zeno_sequence_ends_the_run(method):
    """1e-9 s between switches, a step of 1e-3 (RK4) or DOP853's: the run fails after MAX_SWITCHES_PER_STEP of
    them, naming the joint, its switches kept (not after the 1e6 a step would need)."""
    fixed = method == "RK4"
    run = run_hybrid(Chatter(), np.array([0.0, 1.0]), 0.0, 1.0, method, h=1e-3 if fixed else None,
                     nsteps=1000 if fixed else None, save=np.arange(1001) if fixed else None)
    assert run.status == "failed" and "chattering" in run.reason and run.element == "joint 'j'"
    assert len(run.log) == MAX_SWITCHES_PER_STEP + 1
    assert run.log[-1]["t"] <= (MAX_SWITCHES_PER_STEP + 2) * 1e-9 * (1 + 1e-6)


# ------------------------------------------------------------------------------------------------ budgets
def test_max_steps_counts_the_steps_of_every_mode_and_switch():
    """A pendulum bouncing between its stops (e = 0.9): a fixed-step run's budget is its grid's steps and those that
    located its switches, together — exactly enough finishes, one fewer fails with the partial result; an
    adaptive run's budget is over all its modes."""
    model = pendulum()
    full = mb.simulate(model, [0.0], [1.0], 2.0, method="RK4", h=1e-3)
    need = full.info["steps"] + full.info["location_steps"]
    assert full.info["steps"] == 2000 and full.info["location_steps"] > 0 and len(full.events) >= 5
    assert mb.simulate(model, [0.0], [1.0], 2.0, method="RK4", h=1e-3, max_steps=need).info["status"] == "success"
    with pytest.raises(IntegrationError, match=f"max_steps = {need - 1} was reached") as err:
        mb.simulate(model, [0.0], [1.0], 2.0, method="RK4", h=1e-3, max_steps=need - 1)
    assert err.value.result.t[-1] < 2.0 and len(err.value.result.events) == len(full.events)
    adaptive = mb.simulate(model, [0.0], [1.0], 2.0, method="DOP853")
    with pytest.raises(IntegrationError, match=f"max_steps = {adaptive.info['steps'] - 1} was reached") as err:
        mb.simulate(model, [0.0], [1.0], 2.0, method="DOP853", max_steps=adaptive.info["steps"] - 1)
    assert 0 < len(err.value.result.events) <= len(adaptive.events)


# ------------------------------------------------------------------------------------------- switch at t_end
@pytest.mark.parametrize("method", ["DOP853", "RK4"])
@pytest.mark.parametrize("mode", ["unlock", "separate"])
def test_a_release_at_t_end_is_made_and_logged(method, mode):
    model = pendulum(limits=(-1.0, 1.0), release=3.0, mode=mode)
    res = mb.simulate(model, [0.3], [0.0], 3.0, method=method, h=1e-3 if method == "RK4" else None)
    assert res.info["status"] == "success"
    assert [(ev["t"], ev["kind"], ev["element"]) for ev in res.events] == [(3.0, "release", "j")]
    assert list(res.t[-2:]) == [3.0, 3.0] and res.t[-3] < 3.0      # the switch's two rows end the run
    if mode == "separate":
        assert res.structures[-1]["t"] == 3.0 and res.q.shape[1] > 1


@pytest.mark.parametrize("method", ["DOP853", "RK4"])
def test_an_impact_at_t_end_is_made_and_logged(method):
    """t_end is the instant of the first impact (located by a first run): the run ends after it, at rest on the
    plastic stop; the fixed-step run locates it within its last step, to the location's precision."""
    model = pendulum(limits=(-0.05, 0.2), e=0.0)
    t_hit = mb.simulate(model, [0.1], [0.0], 3.0).events[0]["t"]
    res = mb.simulate(model, [0.1], [0.0], t_hit, method=method, h=t_hit / 1000 if method == "RK4" else None)
    assert res.info["status"] == "success" and res.t[-1] == t_hit
    assert len(res.events) == 1 and res.events[0]["kind"] in ("impact", "contact")
    assert abs(res.events[0]["t"] - t_hit) <= 1e-9 and res.q[-1, 0] == -0.05
    assert res.events[0]["velocity_before"] < -0.3 and abs(res.v[-1, 0]) < 1e-9


def test_two_joints_separate_at_the_same_instant():
    """Both joints of a double pendulum released ("separate") at t = 1: two free bodies fall from there, their
    energy kept (to the adaptive run's tolerance) — the run no longer fails on a state of the wrong size."""
    model = pendulum(limits=(-1.0, 1.0), release=1.0, mode="separate", second=True)
    res = mb.simulate(model, [0.3, 0.0], [0.0, 0.0], 2.0, method="DOP853", rtol=1e-10)
    assert [(ev["t"], ev["kind"], ev["element"]) for ev in res.events] == [(1.0, "release", "j"),
                                                                           (1.0, "release", "j2")]
    assert [s["nq"] for s in res.info["structures"]] == [2, 14]
    total = res.energy["kinetic"] + res.energy["potential"]
    assert np.abs(total - total[0]).max() <= 1e-8 * np.abs(total).max()


# --------------------------------------------------------------------------------------- compiled laws
@numba.njit
def raises_late(t, q, v, out):
    if t > 0.5:
        raise ValueError("too late")
    out[0] = -0.1 * v[0]


@numba.njit
def nan_late(t, q, v, out):
    out[0] = np.nan if t > 0.5 else -0.1 * v[0]


@pytest.mark.parametrize("stops", [False, True], ids=["tree", "switching"])
@pytest.mark.parametrize("method", ["RK4", "DOP853"])
def test_a_compiled_law_that_raises_or_returns_nan_ends_the_run(stops, method, capfd):
    model = pendulum(limits=(-1.0, 1.0)) if stops else pendulum(limits=None)
    kw = {"h": 1e-3} if method == "RK4" else {}
    with pytest.raises(IntegrationError, match="the compiled torque law 'raises_late' raised ValueError: too late "
                                               "at t = 0.5") as err:
        mb.simulate(model, [0.3], [0.0], 1.0, method=method, tau=raises_late, **kw)
    assert err.value.element == "torque law 'raises_late'"
    res = err.value.result
    assert res.info["status"] == "failed" and 0.45 < res.t[-1] <= 0.5 + 1e-3 and np.all(np.isfinite(res.q))
    with pytest.raises(IntegrationError, match=r"the compiled torque law 'nan_late' returned torques that are not "
                                               r"finite at t = 0\.5\d*: out\[0\] \(j\.angle\) = nan") as err:
        mb.simulate(model, [0.3], [0.0], 1.0, method=method, tau=nan_late, **kw)
    assert "step" not in err.value.reason and err.value.result.t[-1] <= 0.5 + 1e-3
    assert "Exception ignored" not in capfd.readouterr().err


def test_a_compiled_law_that_raises_fails_its_run_of_a_batch():
    model = pendulum(limits=None)
    batch = mb.simulate_batch(model, np.array([[0.3], [0.2]]), np.zeros((2, 1)), 1.0, method="RK4", h=1e-3,
                              tau=raises_late)
    assert list(batch.status) == ["failed", "failed"]


# ------------------------------------------------------------------------------------------- convergence
def test_the_solves_report_their_convergence_and_warn_when_one_stops_early(monkeypatch):
    """The parallelogram four-bar with stops on both cranks, reached at once (dependent rows: the proximal-point
    iteration; ``tests/test_switching_loops.py``): every kind of solve is in ``result.info["solves"]``, converged,
    residuals at round-off; with the iteration's budget cut to one it stops early, the run says so in its info and
    warns once."""
    from test_switching_loops import LOWER, UPPER, four_bar, run
    import multibody.switching.constrained as constrained

    model, q0, v0 = four_bar(limits=(LOWER, UPPER), e=0.7, limits1=(LOWER, UPPER))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        solves = run(model, q0, v0, 1.0).info["solves"]
    assert set(solves) >= {"impact", "proximal", "projection"}
    for kind, s in solves.items():
        assert s["solves"] >= 1 and s["unconverged"] == 0 and s["worst_residual"] <= 16 * np.finfo(float).eps, kind
    assert solves["proximal"]["iterations"] >= 2
    monkeypatch.setattr(constrained, "PROX_ITERATIONS", 1)
    with pytest.warns(ConvergenceWarning, match=r"model 'four-bar with a stop': 1 of 1 proximal-point iterations of "
                                                r"dependent rows stopped before converging, the first at t = 0\.50"):
        res = run(model, q0, v0, 1.0)
    assert res.info["solves"]["proximal"]["unconverged"] == 1 and res.info["solves"]["proximal"]["iterations"] == 1


def test_an_adaptive_run_across_switches_shows_progress(capsys):
    mb.simulate(pendulum(), [0.0], [1.0], 1.0, method="DOP853", progress=True)
    err = capsys.readouterr().err
    assert "DOP853" in err and "1/1 s" in err


def test_a_run_across_switches_that_blows_up_names_the_entries():
    """A pendulum with stops carrying a wheel on a hinge of stiffness 1e9 N m/rad (I = 1e-3 kg m²: ω = 1e6 rad/s,
    ω h = 1000, far outside RK4's stability interval of 2.79): the run across switches ends with one line naming the
    non-finite entries of the step's state, as the other fixed-step runs do, with the finite rows computed."""
    b = mb.ModelBuilder(gravity=(0, 0, -G0), name="stiff")
    b.add_body("l", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    b.add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "l", limits=(-1.0, 1.0), restitution=0.5)
    b.add_body("w", mass=0.1, inertia=(0.001, 0.001, 0.001))
    b.add_joint("spin", mb.Revolute(axis=(1, 0, 0)), "l", "w", placement=(None, (0, 0, -1)), stiffness=1e9)
    with pytest.raises(IntegrationError) as err:
        mb.simulate(b.build(), [0.0, 0.0], [0.0, 0.1], 0.1, h=1e-3, method="RK4")
    msg = str(err.value)
    assert "\n" not in msg and "non-finite" in msg and "v 'spin.angle' = " in msg, msg
    assert len(err.value.result.t) > 1 and np.all(np.isfinite(err.value.result.v))


def test_a_stepping_run_that_blows_up_names_the_velocity_and_the_step():
    """The stepping model adds a controller's torques before each step (explicit): the damping kd of a JointPD
    multiplies the velocity by 1 − h kd / I per step, so h kd / I = 30 (I = 0.35 kg m² about the hinge) grows it
    29-fold per step until its square overflows in the step's quadratic terms (from 0.1 rad/s: log(sqrt(1.8e308) / 0.1)
    / log 29 ≈ 106 steps); the run ends with
    one line naming the velocity entry and the cause, with what was computed. h kd / I = 1.5 (a factor −0.5)
    stays finite."""
    model = pendulum(limits=None)
    h, inertia = 1e-3, 0.1 + 1.0 * 0.5 ** 2
    for ratio in (30.0, 1.5):
        pd = mb.JointPD(0.0, ratio * inertia / h, target=[0.0], gravity_compensation=False)
        run = lambda: mb.simulate(model.with_controllers({"pd": pd}), [0.0], [0.1], 0.4, h=h, contact="stepping")
        if ratio < 2.0:
            assert np.all(np.isfinite(run().v))
            continue
        with pytest.raises(IntegrationError) as err:
            run()
        msg = str(err.value)
        assert "\n" not in msg and "non-finite" in msg and "v 'j.angle' = " in msg and "kd h / inertia" in msg, msg
        steps = len(err.value.result.t) - 1
        assert 100 <= steps <= 112 and np.all(np.isfinite(err.value.result.v)), steps
