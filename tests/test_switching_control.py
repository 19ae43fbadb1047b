"""Controllers in runs across switches: the model's controllers (``mb.JointPD``, ``mb.ComputedTorque``) and a compiled
torque law ``tau=f`` run in the mode's compiled right-hand side (``switching/modes.py``) of a model with
joint limits, with adaptive and fixed-step methods.

Each test checks against an independent computation: the static balance on a stop by hand (PD torque, gravity
torque, reaction), the same controlled run without limits (the same right-hand side: equal to round-off), the same
law as a Python callback with an adaptive method at tight tolerance (the bound from RK4's error estimated by step
halving), and a robot arm held against its stops from its URDF.
"""
import math

import numpy as np
import pytest
from numba import njit

import multibody as mb
from multibody.errors import ModelError
from multibody.switching.modes import ON_UPPER, S_FORCE, S_LIM_STATE
from multibody.switching.structure import Structure
from multibody.switching.run import union_names

EPS = np.finfo(float).eps
G = 9.81
MASS, LENGTH = 1.0, 1.0


def pendulum(upper=0.3, lower=-np.inf, e=0.7):
    """A pendulum hanging from a hinge about y (q = 0 straight down; its centre of mass at (−l sin q, 0, −l cos q),
    so the generalized gravity force is −m g l sin q), its stop at ``upper``."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name="controlled pendulum on a stop")
    b.add_body("bob", mass=MASS, com=(0.0, 0.0, -LENGTH), inertia=np.diag([1e-3] * 3))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=(lower, upper), restitution=e)
    return b.build()


def chain(n, bound=None):
    """n hinged rods (1 kg, 0.5 m), stops at ±bound on every hinge (None: no stops)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name=f"chain_{n}")
    parent = "ground"
    for k in range(n):
        b.add_body(f"rod{k}", mass=1.0, com=(0.0, 0.0, -0.25), inertia=np.diag([0.021, 0.021, 0.001]))
        b.add_joint(f"hinge{k}", mb.Revolute(axis=(0, 1, 0)), parent, f"rod{k}",
                    placement=mb.Placement(np.eye(3), (0.0, 0.0, -0.5 if k else 0.0)),
                    limits=None if bound is None else (-bound, bound), restitution=None if bound is None else 0.5)
        parent = f"rod{k}"
    return b.build()


def resting_reaction(model, t, q, v):
    """The generalized force the stop exerts on a joint resting on it at (t, q, v): a structure of the run made at
    that state (the switch there finds the joint on its stop and holds it), its mode's right-hand side evaluated
    (hybrid dynamics: the reaction of the held coordinate). Returns (reaction, ẋ)."""
    qn, vn = union_names(model)
    st = Structure(model, None, None, qn, vn, 0)
    x = np.concatenate([q, v]).astype(float)
    reached = st.start(t, x, True)
    assert reached.any()
    x, nxt = st.switch(t, x, reached, [])
    assert nxt is None and st.S[S_LIM_STATE][0] == ON_UPPER
    xdot = st.rhs(t, x)
    return float(st.S[S_FORCE][0]), xdot


# ------------------------------------------------------------------------------------------------ static balance
@pytest.mark.parametrize("gravity_compensation", [False, True])
def test_pd_drives_the_pendulum_onto_its_stop_and_rests_there(gravity_compensation):
    """A JointPD with its target 0.7 rad beyond the upper stop q_s = 0.3: after a cascade of impacts (e = 0.7) the
    pendulum rests on the stop, the angle exactly q_s and the velocity exactly 0, with RK4 (compiled loop) and DOP853
    alike. The stop's reaction balances the PD torque kp (target − q_s) and the gravity torque −m g l sin q_s (zero
    with gravity compensation, which adds g(q) = +m g l sin q), computed here by hand: a few roundings of numbers
    below 20 N·m, so 1e-12 absolute. The first impact instants of the two methods agree to 1e-9 s: RK4's global
    phase error t ω (hω)⁴ / 120 (ω = sqrt(kp / I_O) ≈ 4.5 rad/s, h = 1e-3, t < 0.3 s) is ≈ 5e-12 rad, over an impact
    velocity of order 1 rad/s, and DOP853's at rtol 1e-12 smaller still (≥ 100x margin)."""
    kp, kd, target, q_s = 20.0, 4.0, 1.0, 0.3
    model = pendulum(upper=q_s).with_controllers(
        {"pd": mb.JointPD(kp, kd, [target], gravity_compensation=gravity_compensation)})
    fixed = mb.simulate(model, [0.0], [0.0], 2.0, method="RK4", h=1e-3, n_out=21)
    adaptive = mb.simulate(model, [0.0], [0.0], 2.0, method="DOP853", rtol=1e-12, atol=1e-14, n_out=21)
    expected = -(kp * (target - q_s) + (0.0 if gravity_compensation else -MASS * G * LENGTH * math.sin(q_s)))
    for res in (fixed, adaptive):
        assert res.info["controllers"] == ["pd"]
        assert res.q[-1, 0] == q_s and res.v[-1, 0] == 0.0
        assert res.events[-1]["kind"] == "contact" and res.events[-1]["stop"] == "upper"
        assert np.all(res.q[:, 0] <= q_s + 1e-9)   # the rows just before an impact: at most round-off past it
        reaction, xdot = resting_reaction(model, res.t[-1], res.q[-1], res.v[-1])
        np.testing.assert_allclose(reaction, expected, rtol=0, atol=1e-12)
        assert xdot[1] == 0.0
    first = [next(e["t"] for e in res.events if e["kind"] == "impact") for res in (fixed, adaptive)]
    assert abs(first[0] - first[1]) <= 1e-9
    kinds = [[e["kind"] for e in res.events] for res in (fixed, adaptive)]
    assert kinds[0] == kinds[1]


# ------------------------------------------------------------------------------------------------ nothing switches
@pytest.mark.parametrize("method", ["RK4", "DOP853"])
def test_controlled_run_between_impacts_is_the_controlled_tree_run(method):
    """Stops at ±3 rad that the motion never reaches: the controlled switching run (a JointPD with gravity
    compensation on two hinges, a computed-torque controller on the third, a compiled law on all) computes the
    same right-hand side as the tree's controlled run of the model without limits (``tree_rhs_control``), in the same
    steps: equal bit for bit."""
    controllers = {"pd": mb.JointPD([30.0, 20.0], [3.0, 2.0], [0.4, -0.3], joints=["hinge0", "hinge1"]),
                   "ct": mb.ComputedTorque(25.0, 10.0, mb.Trajectory([0.0, 1.0], [[0.0], [0.5]]),
                                           joints=["hinge2"])}
    limited, free = chain(3, 3.0).with_controllers(controllers), chain(3).with_controllers(controllers)
    q0, v0 = np.array([0.3, -0.2, 0.1]), np.array([0.5, 0.0, -0.5])
    opts = {"h": 1e-3} if method == "RK4" else {"rtol": 1e-10, "atol": 1e-12}
    opts.update(method=method, n_out=11, tau=drive)
    a, b = mb.simulate(limited, q0, v0, 2.0, **opts), mb.simulate(free, q0, v0, 2.0, **opts)
    assert not a.events and a.info.get("switching")
    assert np.max(np.abs(a.q)) < 2.0
    assert np.array_equal(a.t, b.t) and np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)


@njit(cache=True)
def drive(t, q, v, out):
    """A compiled torque law: a periodic torque on every joint against a viscous damper."""
    for k in range(out.shape[0]):
        out[k] = 2.0 * math.sin(3.0 * t + k) - 0.5 * v[k]


def drive_py(t, q, v):
    """:func:`drive` as a Python callback."""
    out = np.zeros(len(v))
    drive.py_func(t, q, v, out)
    return out


# ------------------------------------------------------------------------------------------------ a compiled law
def test_compiled_law_in_the_fixed_step_switching_loop():
    """A double pendulum with stops at ±0.25 rad (e = 0.5) driven by a compiled law (a periodic torque and a damper)
    that throws it against its stops, where it bounces, comes to rest and leaves again: RK4 at h = 1e-3 in the
    compiled switching loop agrees with the same law as a Python callback under DOP853 at rtol 1e-12 at every output
    time. The bound is derived from RK4's error,
    estimated by step halving (|x_h − x_{h/2}| · 16/15 for a fourth-order method), three times over, plus the
    reference's tolerance (1e-12 relative, 1e-14 absolute, times 1e3 for its growth over the run). The joints stay
    within their stops to 1e-9 at every output (the event location leaves at most round-off past them). The same law
    as a Python callback with RK4 (the mode's loop then runs in Python) meets the same bound."""
    model = chain(2, 0.25)
    q0, v0 = np.array([0.1, -0.1]), np.zeros(2)
    t_eval = np.linspace(0.0, 3.0, 31)
    rk = mb.simulate(model, q0, v0, 3.0, method="RK4", h=1e-3, t_eval=t_eval, tau=drive)
    rk2 = mb.simulate(model, q0, v0, 3.0, method="RK4", h=5e-4, t_eval=t_eval, tau=drive)
    ref = mb.simulate(model, q0, v0, 3.0, method="DOP853", rtol=1e-12, atol=1e-14, t_eval=t_eval, tau=drive_py)
    py = mb.simulate(model, q0, v0, 3.0, method="RK4", h=1e-3, t_eval=t_eval, tau=drive_py)
    assert rk.info["compiled_torque"] == "drive" and rk.info["path"] == "compiled" and py.info["path"] == "python"
    assert sum(e["kind"] == "impact" for e in rk.events) >= 3
    rests = [[(e["kind"], e["element"]) for e in res.events if e["kind"] != "impact"] for res in (rk, ref)]
    assert rests[0] == rests[1] and [k for k, _ in rests[0]].count("separate") >= 2   # rests on a stop, leaves it

    def at(res):   # the output rows at t_eval (the grid's t0 + k h to round-off; the last of a switch's two rows)
        keep = np.array([np.flatnonzero(np.abs(res.t - t) <= 4 * EPS * 3.0)[-1] for t in t_eval])
        return np.hstack([res.q[keep], res.v[keep]])

    x_h, x_h2, x_ref = at(rk), at(rk2), at(ref)
    estimate = np.abs(x_h - x_h2) * 16.0 / 15.0
    bound = 3.0 * estimate + 1e3 * (1e-12 * np.abs(x_ref) + 1e-14)
    assert np.all(np.abs(x_h - x_ref) <= bound), np.max(np.abs(x_h - x_ref) - bound)
    # the Python callback in the same RK4 steps (the mode's loop in Python): the same scheme, other roundings
    assert np.all(np.abs(at(py) - x_ref) <= bound), np.max(np.abs(at(py) - x_ref) - bound)
    for res in (rk, rk2, ref, py):
        assert np.all(np.abs(res.q) <= 0.25 + 1e-9)


def test_what_a_controlled_switching_run_refuses():
    """Controllers carry across a release that separates a joint (by joint name: ``hold`` on the hinge goes on
    acting); a compiled torque law, which reads q and v by position, is refused with it, naming it."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name="stage")
    b.add_body("a", mass=1.0, com=(0.0, 0.0, 0.0), inertia=np.eye(3) * 0.1)
    b.add_body("b", mass=1.0, com=(0.0, 0.0, 0.0), inertia=np.eye(3) * 0.1)
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "a", limits=(-1.0, 1.0))
    b.add_joint("clamp", mb.Revolute(axis=(0, 0, 1)), "a", "b")
    b.add_release("clamp", at=0.5, mode="separate")
    held = b.build().with_controllers({"hold": mb.JointPD(4.0, 1.0, [0.0], joints=["hinge"])})
    res = mb.simulate(held, [0.0, 0.0], [0.0, 0.0], 1.0)
    assert [e["kind"] for e in res.events] == ["release"]
    assert [c.name for c in res.structures[1]["model"].controllers] == ["hold"]

    @njit
    def law(t, q, v, out):
        out[0] = -4.0 * q[0]
    with pytest.raises(ModelError, match=r"a compiled torque law \(tau=f\) and a release that separates") as err:
        mb.simulate(held, [0.0, 0.0], [0.0, 0.0], 1.0, tau=law)
    assert err.value.element == "tau"
    # a Python callback reads q and v by position as well: refused before the run, adaptive and fixed step (it was
    # called after the separation with the new structure's q, v and failed there on its output's size)
    for run in (dict(), dict(method="RK4", h=1e-3)):
        with pytest.raises(ModelError, match=r"a torque callback \(tau=f\) and a release that separates") as err:
            mb.simulate(held, [0.0, 0.0], [0.0, 0.0], 1.0, tau=lambda t, q, v: -4.0 * q, **run)
        assert err.value.element == "tau"
    with pytest.raises(ModelError, match=r"'clamp' cannot separate with a torque callback \(tau=f\)"):
        mb.simulate(held, [0.0, 0.0], [0.0, 0.0], 1.0, h=1e-3, contact="stepping", tau=lambda t, q, v: -4.0 * q)


# ------------------------------------------------------------------------------------------------ a robot
def test_panda_held_against_its_limits_by_a_pd_controller():
    """The Panda of example-robot-data from its URDF (its joint limits the stops by default) with a JointPD (gravity
    compensated) whose target puts joints 4 and 6 beyond their upper limits and the others near theirs, 2 s with RK4:
    every coordinate within its limits to 1e-9 at every output; joints 4 and 6 end resting on their stops (exactly
    there, at rest)."""
    import importlib.metadata
    from pathlib import Path

    from multibody.io.urdf import load_urdf

    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
    path = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf"))
    arm = load_urdf(path)
    lo, hi = arm.lower_limits, arm.upper_limits
    target = np.array([hi[0] - 0.05, 0.3, 0.0, hi[3] + 0.1, 0.0, hi[5] + 0.1, lo[6] + 0.05, hi[7], hi[8]])
    kp = np.array([200.0, 200.0, 200.0, 200.0, 50.0, 50.0, 10.0, 20.0, 20.0])
    kd = np.array([20.0, 20.0, 20.0, 20.0, 5.0, 5.0, 1.0, 0.5, 0.5])
    model = arm.with_controllers({"hold": mb.JointPD(kp, kd, target)})
    q0 = np.clip(np.array([0.0, 0.3, 0.0, -1.5, 0.0, 1.8, 0.8, 0.02, 0.02]), lo, hi)
    res = mb.simulate(model, q0, np.zeros(model.nv), 2.0, method="RK4", h=1e-3, n_out=201)
    assert res.info["status"] == "success" and res.t[-1] == 2.0
    assert np.all(res.q >= lo - 1e-9) and np.all(res.q <= hi + 1e-9)
    for k in (3, 5):
        assert res.q[-1, k] == hi[k] and res.v[-1, k] == 0.0
    assert {e["element"] for e in res.events if e["kind"] == "contact"} >= {arm.joints[4].name, arm.joints[6].name}


def test_controllers_act_besides_a_python_callback():
    """A model's controllers with a Python torque callback that adds nothing: the same run as without the callback
    (the controllers are not dropped), with and without limits (the tree's and the switching run's Python paths):
    DOP853 takes the same steps through the same forces, so to round-off (1e-12 on angles of order 1)."""
    pd = {"pd": mb.JointPD(50.0, 5.0, [0.5, 0.5])}
    for model in (chain(2).with_controllers(pd), chain(2, 3.0).with_controllers(pd)):
        a = mb.simulate(model, [0.0, 0.0], [0.0, 0.0], 1.0, method="DOP853", n_out=5)
        b = mb.simulate(model, [0.0, 0.0], [0.0, 0.0], 1.0, method="DOP853", n_out=5,
                        tau=lambda t, q, v: np.zeros(2))
        assert np.max(np.abs(a.q[-1])) > 0.4
        np.testing.assert_allclose(b.q, a.q, rtol=0, atol=1e-12)
