"""Controllers in the compiled loop (issue 23): ``mb.JointPD``, ``mb.ComputedTorque``, a numba torque law.

* The controllers' torques are the formulas of ``multibody.model.controllers``, computed independently here: the
  reference from scipy's quintic spline at rest at both ends, g(q) from ``mb.gravity_forces`` (RNEA), the computed
  torque from ``mb.rnea`` — the same sums in another order: 1e-12 relative to the largest term. The right-hand side a
  simulation integrates is ABA with these torques added (the same numbers).
* Computed torque makes the error obey ë + Kd ė + Kp e = 0 exactly, whatever the robot: the simulated error equals
  the closed form of that linear equation to the error of RK4 (h = 1e-3 over 1 s: ≲ T h⁴ max|x⁽⁵⁾| ≈ 1e-9 for
  errors of 0.1 rad decaying at 5 s⁻¹ and a spline reference; tolerance 1e-7, where a wrong model term gives 1e-2).
* PD with gravity compensation holds the UR5 of example-robot-data at a posture (the issue's case).
* The SIMD lanes give the per-run loop's numbers bit for bit with PD controllers, as without.
"""

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.interpolate import make_interp_spline

import multibody as mb
from multibody.bench.dynamics import random_tree, random_tree_builder
from multibody.bench import robots
from multibody.bench.robots import robots_folder, ur5_holding
from multibody.errors import ModelError
from multibody.formulations.tree import tree_system

POSTURE = np.array(robots.POSTURE)
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
H = 1e-3


def _reference(traj, t):
    """(q, q̇, q̈) of a Trajectory by scipy: the quintic spline at rest at both ends, held outside its times."""
    nc = traj.ncoordinates
    if traj.times.size == 1 or t < traj.times[0]:
        return traj.positions[0], np.zeros(nc), np.zeros(nc)
    if t >= traj.times[-1]:
        return traj.positions[-1], np.zeros(nc), np.zeros(nc)
    rest = [(1, np.zeros(nc)), (2, np.zeros(nc))]
    spline = make_interp_spline(traj.times, traj.positions, k=5, bc_type=(rest, rest))
    return spline(t), spline(t, 1), spline(t, 2)


def _random_trajectory(rng, nc):
    if rng.random() < 0.3:
        return mb.Trajectory.constant(rng.uniform(-1, 1, nc))
    m = int(rng.integers(2, 6))
    return mb.Trajectory(np.cumsum(rng.uniform(0.05, 0.3, m)), rng.uniform(-1, 1, (m, nc)))


def controlled_tree(n, rng, joint_types=None, modes=("pd", "pd_gravity", "computed_torque")):
    """A random tree (every joint type by default, half the joints with a child placement) with controllers of the
    given kinds on random disjoint sets of its plain-coordinate joints (some joints left uncontrolled)."""
    b, joints = random_tree_builder(n, rng, joint_types, child_placements=0.5)
    plain = [(name, j.nv) for name, j in joints if j.linear_coordinates and j.nv]
    groups = {mode: [] for mode in modes}
    for name, nv in plain:
        mode = rng.integers(len(modes) + 1)
        if mode < len(modes):
            groups[modes[mode]].append((name, nv))
    for mode, joints in groups.items():
        if not joints:
            continue
        nc = sum(nv for _, nv in joints)
        kp, kd = rng.uniform(0, 50, nc), rng.uniform(0, 10, nc)
        target = _random_trajectory(rng, nc)
        names_ = [j for j, _ in joints]
        c = (mb.ComputedTorque(kp, kd, target, joints=names_) if mode == "computed_torque" else
             mb.JointPD(kp, kd, target, gravity_compensation=mode == "pd_gravity", joints=names_))
        b.add_controller(mode, c)
    return b.build()


def _expected_torques(model, t, q, v):
    """The controllers' τ from their definitions (module docstring)."""
    tau = np.zeros(model.nv)
    g = mb.gravity_forces(model, q)
    a_star = np.zeros(model.nv)
    ct = []
    for info in model.controllers:
        c = info.controller
        qr, vr, ar = _reference(c.reference, t)
        iv, iq = np.array(info.iv), np.array(info.iq)
        e, ed = qr - q[iq], vr - v[iv]
        if isinstance(c, mb.ComputedTorque):
            a_star[iv] = ar + (c.kd * ed + c.kp * e)
            ct += list(iv)
        else:
            tau[iv] = c.kp * e + c.kd * ed + (g[iv] if c.gravity_compensation else 0.0)
    if ct:
        tau[ct] = mb.rnea(model, q, v, a_star)[ct]
    return tau


@SETTINGS
@given(st.integers(1, 10), st.integers(0, 2**32 - 1))
def test_controller_torques_are_their_formulas(n, seed):
    rng = np.random.default_rng(seed)
    model = controlled_tree(n, rng)
    assume(model.controllers)
    q = model.random_configuration(rng)
    v = rng.uniform(-1, 1, model.nv)
    for t in (0.0, rng.uniform(0, 1.5), 5.0):
        tau = mb.controller_torques(model, q, v, t)
        np.testing.assert_allclose(tau, _expected_torques(model, t, q, v), rtol=0,
                                   atol=1e-12 * max(1.0, np.abs(tau).max()))
    # what a simulation integrates: ABA with them added to the constant torques
    tau_const = rng.normal(size=model.nv)
    system = tree_system(model, q, v, tau=tau_const)
    t = 0.3
    qdd = system.fun(t, np.concatenate([q, v]))[model.nq:]
    expected = mb.aba(model, q, v, tau_const + mb.controller_torques(model, q, v, t))
    np.testing.assert_allclose(qdd, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_trajectory_is_the_rest_to_rest_quintic_spline():
    """The reference against scipy's spline (its Taylor coefficients against its own evaluation: round-off of
    degree-5 polynomials in values of order 10, 1e-12), and continuous in q, q̇, q̈ where it starts and ends."""
    traj = mb.Trajectory([0.0, 0.4, 1.0, 1.3], [[0.0, 1.0], [0.5, -1.0], [0.2, 0.0], [1.0, 2.0]])
    for t in np.linspace(-0.5, 1.8, 47):
        for ours, theirs in zip(traj.at(t), _reference(traj, t)):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    q, v, a = traj.at(1.3)
    assert q.tolist() == [1.0, 2.0] and not v.any() and not a.any()
    for t in (0.0, 1.3):   # |Δq̈| ≤ max jerk · 2e-9, the jerk ≲ 60 |Δq| / T³ ≈ 4e3 on the last segment: 1e-5
        for left, right in zip(traj.at(t - 1e-9), traj.at(t + 1e-9)):
            np.testing.assert_allclose(left, right, rtol=0, atol=1e-4)    # (a jump of q̈ would be of order 10)


def _damped(kp, kd, e0, ed0, t):
    """The solution of ë + kd ė + kp e = 0 (kd² < 4 kp): e^{−σt}(e0 cos ωt + (ė0 + σ e0)/ω sin ωt)."""
    s, w = kd / 2, np.sqrt(kp - kd * kd / 4)
    return np.exp(-s * t) * (e0 * np.cos(w * t) + (ed0 + s * e0) / w * np.sin(w * t))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_computed_torque_makes_the_error_dynamics_linear(seed):
    rng = np.random.default_rng(seed)
    m = random_tree(5, rng, joint_types=("Revolute", "Prismatic", "Universal", "Planar"))
    times = np.array([0.0, 0.3, 0.7, 1.0])
    traj = mb.Trajectory(times, rng.uniform(-1, 1, (4, m.nv)))
    kp, kd = 25.0, 6.0
    model = m.with_controllers({"track": mb.ComputedTorque(kp, kd, traj)})
    q0 = traj.positions[0] + rng.uniform(-0.1, 0.1, m.nv)
    v0 = rng.uniform(-0.3, 0.3, m.nv)
    r = mb.simulate(model, q0, v0, 1.0, method="RK4", h=H, output_every=50)
    e0, ed0 = traj.positions[0] - q0, -v0
    for t, q in zip(r.t, r.q):
        np.testing.assert_allclose(traj.at(t)[0] - q, _damped(kp, kd, e0, ed0, t), rtol=0, atol=1e-7)


@pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
def test_ur5_holds_a_posture_with_pd_and_gravity_compensation():
    """Started 0.05 rad off on every joint, at rest, RK4 h = 1e-3 for 2 s: the final posture error is below 1e-10
    rad. Why it must be: with g(q) compensated exactly the posture q* is an equilibrium and the error obeys
    M ë + (C + Kd) ė + Kp e = 0 (Takegaki & Arimoto); near q* its decay is that of the linear system
    ë = −M*⁻¹(Kd ė + Kp e), whose slowest eigenvalue has real part −σ: |e(t)| ≤ κ(V) |x(0)| e^{−σt} (V its
    eigenvectors). The gains make σ ≈ 20 s⁻¹, so the bound at 2 s is checked to be below 1e-13 (1000 times under
    the requirement), and the largest |λ| h ≈ 0.3 is far inside RK4's stability region (2.78)."""
    model, held = ur5_holding(POSTURE)
    M = mb.crba(model, POSTURE)
    kp, kd = held.controllers[0].controller.kp, held.controllers[0].controller.kd
    A = np.block([[np.zeros((6, 6)), np.eye(6)], [-np.linalg.solve(M, np.diag(kp)), -np.linalg.solve(M, np.diag(kd))]])
    lam, V = np.linalg.eig(A)
    sigma = -lam.real.max()
    x0 = np.concatenate([np.full(6, 0.05), np.zeros(6)])
    assert np.linalg.cond(V) * np.linalg.norm(x0) * np.exp(-2.0 * sigma) < 1e-13
    assert np.abs(lam).max() * H < 1.0
    r = mb.simulate(held, POSTURE + 0.05, np.zeros(6), 2.0, method="RK4", h=H, n_out=3)
    assert r.info["path"] == "compiled"
    assert np.abs(r.q[-1] - POSTURE).max() < 1e-10
    assert np.abs(r.v[-1]).max() < 1e-9
    # started at the posture it stays there (the gravity compensation is exact to round-off)
    r = mb.simulate(held, POSTURE, np.zeros(6), 2.0, method="RK4", h=H, n_out=3)
    assert np.abs(r.q[-1] - POSTURE).max() < 1e-13


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(1, 19), st.sampled_from(["RK4", "RK2", "HEUN", "VERLET"]))
def test_lanes_with_pd_controllers_equal_the_per_run_loop_bit_for_bit(seed, runs, method):
    """Random trees of Revolute, Prismatic and Fixed joints with PD controllers (with and without gravity
    compensation, constant and spline references), joint springs half the time, per-run torques and masses: the
    lanes give the numbers of the per-run loop, and of single runs, exactly."""
    rng = np.random.default_rng(seed)
    model = controlled_tree(int(rng.integers(1, 7)), rng, ("Revolute", "Prismatic", "Fixed"), ("pd", "pd_gravity"))
    assume(model.nv > 0)
    Q0 = rng.uniform(-1.0, 1.0, (runs, model.nq))
    V0 = rng.uniform(-1.0, 1.0, (runs, model.nv))
    params = {"tau": rng.normal(size=(runs, model.nv))}
    if rng.random() < 0.5:
        params["mass"] = model.mass[1:] * rng.uniform(0.5, 2.0, (runs, model.nbodies))
    kw = dict(method=method, h=H, output_every=7, params=params)
    lanes = mb.simulate_batch(model, Q0, V0, 0.03, **kw)
    loop = mb.simulate_batch(model, Q0, V0, 0.03, lanes=False, **kw)
    assert lanes.info["path"] == "compiled lanes" and loop.info["path"] == "compiled batch"
    for a, b in ((lanes.q, loop.q), (lanes.v, loop.v), (lanes.energy["total"], loop.energy["total"])):
        np.testing.assert_array_equal(a, b)
    k = int(rng.integers(runs))
    if "mass" not in params:
        single = mb.simulate(model, Q0[k], V0[k], 0.03, method=method, h=H, output_every=7, tau=params["tau"][k])
        np.testing.assert_array_equal(single.q, lanes.q[k])


def test_lanes_with_joint_springs_and_controllers():
    """Joint spring-dampers and efforts on some coordinates, PD controllers (a trajectory with gravity compensation,
    a constant target without) on others and on some of the same: the lanes equal the per-run loop."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    forces = [dict(stiffness=4.0, damping=0.3, rest=0.2), dict(stiffness=50.0, rest=-0.1),
              dict(damping=0.1, effort=0.4), {}]
    parent = "ground"
    for k, (joint, f) in enumerate(zip([mb.Revolute((0, 1, 0)), mb.Prismatic((0, 0, 1)), mb.Revolute((0.6, 0, 0.8)),
                                        mb.Revolute((1, 0, 0))], forces)):
        b.add_body(f"link{k}", mass=1.0 - 0.2 * k, com=(0.05 * k, 0.0, -0.3), inertia=np.diag([0.1, 0.08, 0.02]))
        b.add_joint(f"j{k}", joint, parent=parent, child=f"link{k}",
                    placement=mb.Placement(translation=(0, 0, -0.5 * k)), **f)
        parent = f"link{k}"
    b.add_controller("arm", mb.JointPD([30.0, 10.0], [3.0, 1.0], mb.Trajectory([0.0, 0.01], [[0.0, 0.1], [0.3, 0.0]]),
                                       joints=["j0", "j2"]))
    b.add_controller("slide", mb.JointPD(100.0, 5.0, [0.05], gravity_compensation=False, joints=["j1"]))
    model = b.build()
    rng = np.random.default_rng(3)
    Q0, V0 = rng.uniform(-0.5, 0.5, (10, 4)), rng.uniform(-1.0, 1.0, (10, 4))
    kw = dict(method="RK4", h=H, output_every=4, params={"tau": rng.normal(size=(10, 4))})
    lanes = mb.simulate_batch(model, Q0, V0, 0.02, **kw)
    loop = mb.simulate_batch(model, Q0, V0, 0.02, lanes=False, **kw)
    assert lanes.info["path"] == "compiled lanes"
    np.testing.assert_array_equal(lanes.q, loop.q)
    np.testing.assert_array_equal(lanes.energy["total"], loop.energy["total"])


@numba.njit(cache=True)
def damping_law(t, q, v, out):
    """A compiled torque law: viscous damping and a torque that grows with time on the first coordinate."""
    for k in range(v.shape[0]):
        out[k] = -0.5 * v[k]
    out[0] += 0.1 * t


def test_compiled_torque_law_runs_in_the_compiled_loop():
    rng = np.random.default_rng(4)
    model = random_tree(4, rng, joint_types=("Revolute", "Prismatic", "Spherical"))
    q0, v0 = model.random_configuration(rng), rng.uniform(-1, 1, model.nv)

    def python_law(t, q, v):
        out = -0.5 * v
        out[0] += 0.1 * t
        return out

    compiled = mb.simulate(model, q0, v0, 0.2, method="RK4", h=H, tau=damping_law)
    python = mb.simulate(model, q0, v0, 0.2, method="RK4", h=H, tau=python_law)
    assert compiled.info["path"] == "compiled" and python.info["path"] == "python"
    np.testing.assert_allclose(compiled.q, python.q, rtol=0, atol=1e-13)
    # adaptive runs call it in the compiled right-hand side too
    a = mb.simulate(model, q0, v0, 0.2, method="DOP853", rtol=1e-11, atol=1e-11, tau=damping_law)
    np.testing.assert_allclose(a.q[-1], compiled.q[-1], rtol=0, atol=1e-9)
    # in a batch (the per-run loop: the lanes do not call it), each run equals the single run
    Q0 = np.array([q0, model.random_configuration(rng)])
    batch = mb.simulate_batch(model, Q0, np.array([v0, v0]), 0.2, h=H, tau=damping_law)
    assert batch.info["path"] == "compiled batch"
    np.testing.assert_array_equal(batch.q[0], compiled.q)
    # other formulations call it from Python (the Poisson form's states differ: RK4's error, ≲ 1e-12 here)
    c = mb.simulate(model, q0, v0, 0.05, method="RK4", h=H, tau=damping_law, formulation="poisson")
    np.testing.assert_allclose(c.q[-1], compiled.q[50], rtol=0, atol=1e-9)


def test_bad_controllers_are_named():
    rng = np.random.default_rng(0)
    model = random_tree(3, rng, joint_types=("Revolute",))
    with pytest.raises(ModelError, match="controller 'c': joint 'elbow' is not a tree joint"):
        model.with_controllers({"c": mb.JointPD(1.0, 1.0, [0.0], joints=["elbow"])})
    with pytest.raises(ModelError, match=r"the target has 2 values per time for 3 coordinates"):
        model.with_controllers({"c": mb.JointPD(1.0, 1.0, [0.0, 0.0])})
    with pytest.raises(ModelError, match="kp has 2 values for 3 coordinates"):
        model.with_controllers({"c": mb.JointPD([1.0, 2.0], 1.0, [0.0, 0.0, 0.0])})
    with pytest.raises(ModelError, match="kd must be one non-negative number"):
        mb.JointPD(1.0, -1.0, [0.0])
    with pytest.raises(ModelError, match="times must be one or more strictly increasing"):
        mb.Trajectory([0.0, 0.0], [[0.0], [1.0]])
    with pytest.raises(ModelError, match="coordinate 'joint1.angle' is controlled by controller 'a' already"):
        model.with_controllers({"a": mb.JointPD(1.0, 1.0, [0.0], joints=["joint1"]),
                                "b": mb.ComputedTorque(1.0, 1.0, [0.0], joints=["joint1"])})
    free = random_tree(2, rng, joint_types=("Free",))
    with pytest.raises(ModelError, match="joint 'joint1' is a Free joint, whose quaternion coordinates"):
        free.with_controllers({"c": mb.JointPD(1.0, 1.0, np.zeros(6), joints=["joint1"])})
    with pytest.raises(ModelError, match="no joint with plain coordinates to control"):
        free.with_controllers({"c": mb.JointPD(1.0, 1.0, [0.0])})
    held = model.with_controllers({"c": mb.JointPD(1.0, 1.0, [0.0, 0.0, 0.0])})
    with pytest.raises(ModelError, match="has controllers \\(c\\): the 'tree' formulation evaluates them") as err:
        mb.simulate(held, held.neutral(), None, 0.01, method="RK4", h=H, formulation="constrained")
    assert err.value.element == "controller 'c'"
    with pytest.raises(ModelError, match="prescribed coordinates with controllers"):
        mb.simulate(held, held.neutral(), None, 0.01, method="RK4", h=H,
                    prescribed={"joint1.angle": lambda t: (0.0, 0.0, 0.0)})

    @numba.njit
    def wrong(t, q):
        return q

    with pytest.raises(ModelError, match=r"tau: the numba function 'wrong' must compile as tau\(t, q, v, out\)") as err:
        mb.simulate(model, model.neutral(), None, 0.01, method="RK4", h=H, tau=wrong)
    assert err.value.element == "tau"


@pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
def test_cli_runs_a_robot_holding_a_posture(tmp_path, capsys):
    """``multibody run ur5.urdf --controller pd --posture ...``: from the neutral configuration towards the posture
    with the default gains (Kp = ω² M_ii, Kd = 2 ω M_ii at the posture, ω = 20 rad/s): the run the library makes with
    that controller, number for number."""
    from multibody.cli import main
    from multibody.result import Result

    urdf = str(robots_folder() / "ur_description/urdf/ur5_robot.urdf")
    posture = ",".join(map(str, POSTURE))
    assert main(["run", urdf, "--controller", "pd", "--posture", posture, "--method", "RK4", "--h", "1e-3",
                 "--t-end", "2", "--out", str(tmp_path / "ur5")]) == 0
    out = capsys.readouterr().out
    assert "controller 'pd': largest |q - target| at the end" in out
    res = Result.load(tmp_path / "ur5" / "result.npz")
    model, _ = ur5_holding(POSTURE)
    d = np.diag(mb.crba(model, POSTURE))
    held = model.with_controllers({"pd": mb.JointPD(400.0 * d, 40.0 * d, POSTURE)})
    lib = mb.simulate(held, model.neutral(), np.zeros(6), 2.0, method="RK4", h=H, n_out=res.t.size)
    np.testing.assert_array_equal(res.q, lib.q)
    assert np.abs(res.q[-1] - POSTURE).max() < 1e-3 * np.abs(POSTURE).max()       # (it got there)
    assert main(["run", urdf, "--controller", "pd", "--posture", "0.1,0.2", "--t-end", "1"]) == 2
    assert "--posture has 2 values for the 6 controlled coordinates" in capsys.readouterr().err
    assert main(["run", urdf, "--posture", posture, "--t-end", "1"]) == 2
    assert "give it" in capsys.readouterr().err


MODEL_FILE = """
bodies:
  - {name: a, mass: 1.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}
  - {name: c, mass: 0.5, com: [0, 0, -0.2], inertia: [0.05, 0.04, 0.02]}
joints:
  - {name: j1, type: revolute, axis: [0, 1, 0], parent: ground, child: a}
  - {name: j2, type: revolute, axis: [1, 0, 0], parent: a, child: c, placement: {translation: [0, 0, -1]}}
controllers:
"""


def test_controllers_in_model_files(tmp_path):
    """Controllers are data of model files: written and read back equal, and the model runs the same; each bad value
    reported at its place (``multibody validate``)."""
    from multibody.io import load_model, load_text, save_model
    from multibody.io.documents import ModelFileError

    b = mb.ModelBuilder()
    b.add_body("a", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_body("c", mass=0.5, com=(0, 0, -0.2), inertia=np.diag([0.05, 0.04, 0.02]))
    b.add_joint("j1", mb.Revolute(axis=(0, 1, 0)), "ground", "a")
    b.add_joint("j2", mb.Revolute(axis=(1, 0, 0)), "a", "c", placement=mb.Placement(np.eye(3), (0, 0, -1)))
    b.add_controller("pd", mb.JointPD(10.0, [1.0], [0.2], joints=["j1"]))
    b.add_controller("ct", mb.ComputedTorque([4.0], 2.0, mb.Trajectory([0, 1], [[0.0], [0.5]]), joints=["j2"]))
    model = b.build()
    run = mb.simulate(model, [0.1, -0.1], None, 0.5, method="RK4", h=H)
    for ext in ("yaml", "json"):
        save_model(model, tmp_path / f"m.{ext}")
        back = load_model(tmp_path / f"m.{ext}")
        assert [(c.name, c.controller, c.joints) for c in back.controllers] == \
            [(c.name, c.controller, c.joints) for c in model.controllers]
        np.testing.assert_array_equal(mb.simulate(back, [0.1, -0.1], None, 0.5, method="RK4", h=H).q, run.q)
    ok = load_text(MODEL_FILE + "  - {name: hold, kind: joint_pd, kp: '1/2', kd: 1, target: ['pi/4', 0]}", "yaml")
    assert ok.model.controllers[0].controller.reference.positions[0, 0] == np.pi / 4
    bad = {"  - {name: hold, kind: joint_pd, kp: 10, kd: 1, target: [0.2], joints: [elbow]}":
           ("controllers[0]", "joint 'elbow' is not a tree joint"),
           "  - {name: hold, kind: joint_pd, kp: -10, kd: 1, target: [0.2, 0]}":
           ("controllers[0].kp", "kp must be one non-negative number"),
           "  - {name: hold, kind: pid, kp: 10, kd: 1, target: [0.2, 0]}": ("controllers[0].kind", "'pid'"),
           "  - {name: hold, kind: joint_pd, kp: 10, kd: 1, target: [0.2]}":
           ("controllers[0]", "the target has 1 values per time for 2 coordinates"),
           "  - {name: t, kind: computed_torque, kp: 1, kd: 1,\n"
           "     trajectory: {times: [0, 0], positions: [[0, 0], [1, 1]]}}":
           ("controllers[0].trajectory", "times must be one or more strictly increasing"),
           "  - {name: a, kind: joint_pd, kp: 1, kd: 1, target: [0, 0]}\n"
           "  - {name: b, kind: joint_pd, kp: 1, kd: 1, target: [0], joints: [j2]}":
           ("controllers[1]", "coordinate 'j2.angle' is controlled by controller 'a' already")}
    for text, (path, words) in bad.items():
        with pytest.raises(ModelFileError) as err:
            load_text(MODEL_FILE + text, "yaml")
        assert [p.path for p in err.value.problems] == [path] and words in err.value.problems[0].message, \
            err.value.report()
