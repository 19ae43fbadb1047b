"""Fixed-step outputs, energies recorded in the compiled loop, and ``simulate_batch`` (issue 14).

The batch must be the loop of single runs *exactly* (the same compiled loop and order of operations per run),
whatever the number of threads; the energies recorded in the loop must be those ``tree_energy`` computes for
the saved states. The SIMD lanes (``kernels/lanes.py``, eight runs per group of vector instructions) must give
the numbers of the per-run loop bit for bit.
"""
import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import multibody as mb
from multibody.bench.dynamics import random_tree, revolute_chain
from multibody.errors import ModelError
from multibody.formulations.tree_rhs import tree_energy
from multibody.kernels.lanes import lanes_supported
from models import sprung_model

H = 1e-3


def chain_states(runs, n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.uniform(-0.5, 0.5, (runs, n)), rng.uniform(-1.0, 1.0, (runs, n))


# ---- fixed-step outputs ------------------------------------------------------------------------------------
def test_output_every_and_t_eval_save_the_steps_themselves():
    m = revolute_chain(3)
    q0, v0 = np.array([0.3, -0.2, 0.1]), np.array([0.0, 0.5, 0.0])
    full = mb.simulate(m, q0, v0, 0.1, method="RK4", h=H)
    assert full.q.shape == (101, 3)
    every = mb.simulate(m, q0, v0, 0.1, method="RK4", h=H, output_every=30)  # steps 0, 30, 60, 90 and the last
    np.testing.assert_array_equal(every.t, full.t[[0, 30, 60, 90, 100]])
    np.testing.assert_array_equal(every.q, full.q[[0, 30, 60, 90, 100]])
    np.testing.assert_array_equal(every.energy["total"], full.energy["total"][[0, 30, 60, 90, 100]])
    te = mb.simulate(m, q0, v0, 0.1, method="RK4", h=H, t_eval=[0.005, 0.05, 0.1])
    np.testing.assert_array_equal(te.v, full.v[[5, 50, 100]])
    assert te.info["steps"] == 100
    with pytest.raises(ModelError, match="grid") as err:
        mb.simulate(m, q0, v0, 0.1, method="RK4", h=H, t_eval=[0.0105])
    assert err.value.element == "t_eval"
    with pytest.raises(ModelError, match="one of"):
        mb.simulate(m, q0, v0, 0.1, method="RK4", h=H, n_out=11, output_every=10)
    with pytest.raises(ModelError, match="output_every"):
        mb.simulate(m, q0, v0, 0.1, method="RK4", h=H, output_every=0)
    with pytest.raises(ModelError, match="fixed-step"):
        mb.simulate(m, q0, v0, 0.1, output_every=10)


@pytest.mark.parametrize("method", ["RK4", "VERLET"])
def test_energies_in_the_loop_equal_tree_energy_of_the_outputs(method):
    """Joint and point springs, dampers, an effort, quaternions: the loop's energies are tree_energy's numbers."""
    m = sprung_model(effort=0.3)
    rng = np.random.default_rng(1)
    q0, v0 = m.random_configuration(rng, scale=1.0), rng.normal(size=m.nv)
    res = mb.simulate(m, q0, v0, 0.2, method=method, h=H, output_every=7)
    T, V, _ = tree_energy(m, res.q, res.v)
    np.testing.assert_array_equal(res.energy["kinetic"], T)
    np.testing.assert_array_equal(res.energy["potential"], V)
    chain = revolute_chain(4)  # no applied forces: the right-hand side skips their pass
    res = mb.simulate(chain, [0.4, 0.1, -0.3, 0.2], None, 0.2, method=method, h=H)
    T, V, _ = tree_energy(chain, res.q, res.v)
    np.testing.assert_array_equal(res.energy["kinetic"], T)
    np.testing.assert_array_equal(res.energy["potential"], V)


# ---- simulate_batch -------------------------------------------------------------------------------------
def test_batch_equals_a_loop_of_single_runs_exactly():
    m = revolute_chain(5)
    Q0, V0 = chain_states(6, 5)
    batch = mb.simulate_batch(m, Q0, V0, 0.3, method="RK4", h=H, output_every=50)
    assert len(batch) == 6 and batch.q.shape == (6, 7, 5) and batch.ok.all()
    for b in range(6):
        single = mb.simulate(m, Q0[b], V0[b], 0.3, method="RK4", h=H, output_every=50)
        np.testing.assert_array_equal(batch.t, single.t)
        np.testing.assert_array_equal(batch.q[b], single.q)
        np.testing.assert_array_equal(batch.v[b], single.v)
        for key in ("kinetic", "potential", "total"):
            np.testing.assert_array_equal(batch.energy[key][b], single.energy[key])
    run = batch[2]
    assert isinstance(run, mb.Result) and run.info["status"] == "success" and run.info["steps"] == 300
    np.testing.assert_array_equal(run.q, batch.q[2])


def test_batch_with_quaternions_springs_and_varied_parameters():
    """Per-run torques, masses and gravity: run b equals simulate on the model with run b's values."""
    m = sprung_model()
    rng = np.random.default_rng(2)
    runs = 3
    Q0 = np.array([m.random_configuration(rng, scale=1.0) for _ in range(runs)])
    V0 = rng.normal(size=(runs, m.nv))
    tau = rng.normal(size=(runs, m.nv))
    mass = m.mass[1:] * rng.uniform(0.5, 2.0, (runs, m.nbodies))
    gravity = rng.normal(size=(runs, 3)) * 5.0
    batch = mb.simulate_batch(m, Q0, V0, 0.05, method="RK4", h=H, output_every=10,
                              params={"tau": tau, "mass": mass, "gravity": gravity})
    for b in range(runs):
        mb_b = sprung_model(masses=mass[b], gravity=gravity[b])
        single = mb.simulate(mb_b, Q0[b], V0[b], 0.05, method="RK4", h=H, output_every=10, tau=tau[b])
        np.testing.assert_array_equal(batch.q[b], single.q)
        np.testing.assert_array_equal(batch.v[b], single.v)
        np.testing.assert_array_equal(batch.energy["potential"][b], single.energy["potential"])
        norms = [np.linalg.norm(batch.q[b][:, mb_b.joint(j).q_slice][:, -4:], axis=1) for j in ("jc", "je")]
        assert np.allclose(norms, 1.0, rtol=0, atol=1e-14)


def test_batch_does_not_depend_on_the_number_of_threads():
    script = (
        "import hashlib, json, numba, numpy as np, multibody as mb\n"
        "from multibody.bench.dynamics import revolute_chain\n"
        "rng = np.random.default_rng(3)\n"
        "Q0, V0 = rng.uniform(-0.5, 0.5, (37, 5)), rng.uniform(-1, 1, (37, 5))\n"
        "r = mb.simulate_batch(revolute_chain(5), Q0, V0, 0.2, h=1e-3, output_every=20,\n"
        "                      params={'tau': rng.normal(size=(37, 5))})\n"
        "data = np.concatenate([r.q.ravel(), r.v.ravel(), r.energy['total'].ravel()])\n"
        "print(json.dumps([numba.get_num_threads(), hashlib.sha256(data.tobytes()).hexdigest()]))\n")
    out = {}
    for threads in ("1", "2"):
        env = {**__import__("os").environ, "NUMBA_NUM_THREADS": threads}
        proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=900, env=env)
        assert proc.returncode == 0, proc.stderr
        got_threads, digest = json.loads(proc.stdout.strip().splitlines()[-1])
        assert got_threads == int(threads)
        out[threads] = digest
    assert out["1"] == out["2"]


def test_a_failed_run_does_not_stop_the_others():
    m = revolute_chain(2)
    gravity = np.array([[0.0, 0.0, -9.81], [0.0, 0.0, -1e305], [0.0, 0.0, -9.81]])
    batch = mb.simulate_batch(m, np.array([0.3, 0.1]), None, 0.05, h=H, output_every=10,
                              params={"gravity": gravity})
    assert list(batch.status) == ["success", "failed", "success"]
    assert batch.steps[0] == batch.steps[2] == 50 and batch.steps[1] < 50
    assert np.all(np.isfinite(batch.q[[0, 2]])) and np.isnan(batch.q[1, -1]).all()
    np.testing.assert_array_equal(batch.q[0], batch.q[2])


# ---- SIMD lanes --------------------------------------------------------------------------------------------
def assert_same_batches(a, b):
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)
    for key in a.energy:
        np.testing.assert_array_equal(a.energy[key], b.energy[key])
    np.testing.assert_array_equal(a.status, b.status)
    np.testing.assert_array_equal(a.steps, b.steps)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), runs=st.integers(1, 19), method=st.sampled_from(["RK4", "RK2", "HEUN", "VERLET"]))
def test_lanes_equal_the_per_run_loop_bit_for_bit(seed, runs, method):
    """Random trees of Revolute, Prismatic and Fixed joints (any axes, any joint placements), random states,
    per-run torques (and half the time per-run masses and gravity), every lane method, a run count that leaves
    padding lanes: the lanes give the numbers of the per-run loop exactly — the same operations in the same
    order, lane by lane."""
    rng = np.random.default_rng(seed)
    m = random_tree(int(rng.integers(1, 8)), rng, joint_types=("Revolute", "Prismatic", "Fixed"))
    assume(m.nv > 0)
    assert lanes_supported(m) is None
    Q0 = rng.uniform(-1.0, 1.0, (runs, m.nq))
    V0 = rng.uniform(-1.0, 1.0, (runs, m.nv))
    params = {"tau": rng.normal(size=(runs, m.nv))}
    if rng.random() < 0.5:  # masses and gravity varied per run as well
        params["mass"] = m.mass[1:] * rng.uniform(0.5, 2.0, (runs, m.nbodies))
        params["gravity"] = rng.normal(size=(runs, 3)) * 5.0
    kw = dict(method=method, h=H, output_every=7, params=params)
    lanes = mb.simulate_batch(m, Q0, V0, 0.03, **kw)
    loop = mb.simulate_batch(m, Q0, V0, 0.03, lanes=False, **kw)
    assert lanes.info["path"] == "compiled lanes" and loop.info["path"] == "compiled batch"
    assert lanes.ok.all()
    assert_same_batches(lanes, loop)


def test_lanes_chain_equals_single_runs_and_a_failed_lane_stops_alone():
    """A chain on coordinate axes (the axis-rotation branch): the lanes equal single ``simulate`` runs; a lane
    whose torque makes its state overflow stops as a single run stops (status, steps, its last finite state)
    while its neighbours in the same group go on."""
    m = revolute_chain(4)
    Q0, V0 = chain_states(11, 4, seed=5)
    tau = np.zeros((11, 4))
    tau[3, 2] = 1e306
    kw = dict(method="RK4", h=H, output_every=10, params={"tau": tau})
    lanes = mb.simulate_batch(m, Q0, V0, 0.05, **kw)
    assert lanes.info["path"] == "compiled lanes"
    assert list(lanes.status).count("failed") == 1 and lanes.status[3] == "failed" and lanes.steps[3] < 50
    assert_same_batches(lanes, mb.simulate_batch(m, Q0, V0, 0.05, lanes=False, **kw))
    for b in (2, 4, 10):
        single = mb.simulate(m, Q0[b], V0[b], 0.05, method="RK4", h=H, output_every=10, tau=tau[b])
        np.testing.assert_array_equal(lanes.q[b], single.q)
        np.testing.assert_array_equal(lanes.energy["total"][b], single.energy["total"])


def test_lanes_with_joint_springs_dampers_and_efforts():
    """Joint spring-dampers and efforts (on some coordinates, not all), per-run torques: the lanes equal the
    per-run loop, energies (with the springs' potential) included."""
    rng = np.random.default_rng(11)
    m = random_tree(5, rng, joint_types=("Revolute", "Prismatic"))
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_body("a", mass=1.0, com=(0.0, 0.0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_body("c", mass=0.5, com=(0.0, 0.1, -0.2), inertia=np.diag([0.05, 0.04, 0.02]))
    b.add_body("d", mass=0.8, com=(0.1, 0.0, -0.3), inertia=np.diag([0.06, 0.05, 0.03]))
    b.add_joint("j1", mb.Revolute(axis=(0.0, 1.0, 0.0)), parent="ground", child="a", stiffness=4.0, damping=0.3,
                rest=0.2)
    b.add_joint("j2", mb.Prismatic(axis=(0.0, 0.0, 1.0)), parent="a", child="c", stiffness=50.0, rest=-0.1,
                placement=mb.Placement(np.eye(3), (0.0, 0.0, -1.0)))
    b.add_joint("j3", mb.Revolute(axis=(0.6, 0.0, 0.8)), parent="c", child="d", damping=0.1, effort=0.4)
    for model in (m, b.build()):
        Q0 = rng.uniform(-0.5, 0.5, (10, model.nq))
        V0 = rng.uniform(-1.0, 1.0, (10, model.nv))
        kw = dict(method="RK4", h=H, output_every=4, params={"tau": rng.normal(size=(10, model.nv))})
        lanes = mb.simulate_batch(model, Q0, V0, 0.02, **kw)
        assert lanes.info["path"] == "compiled lanes"
        assert_same_batches(lanes, mb.simulate_batch(model, Q0, V0, 0.02, lanes=False, **kw))
    assert np.any(lanes.energy["potential"] != 0.0)


@pytest.mark.parametrize("axis", [(1.0, 0.0, 0.0), (0.0, 0.0, -1.0), (-1.0, 0.0, 0.0), (0.0, 0.6, 0.8)])
def test_lanes_hinges_about_every_axis(axis):
    """Hinges about ±e_k (the coordinate-axis branch, −e_k turning with −sin q) and about a general axis."""
    m = revolute_chain(3, axis=axis)
    Q0, V0 = chain_states(9, 3, seed=7)
    lanes = mb.simulate_batch(m, Q0, V0, 0.02, method="RK4", h=H, output_every=5)
    assert lanes.info["path"] == "compiled lanes"
    assert_same_batches(lanes, mb.simulate_batch(m, Q0, V0, 0.02, method="RK4", h=H, output_every=5, lanes=False))


def test_lanes_take_only_the_models_they_compute():
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_body("arm", mass=1.0, com=(0.0, 0.0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_joint("hinge", mb.Revolute(axis=(0.0, 1.0, 0.0)), parent="ground", child="arm")
    b.add_spring("cord", "ground", (0.0, 0.0, 0.0), "arm", (0.0, 0.0, -1.0), stiffness=3.0)
    corded = b.build()
    assert "point-to-point springs" in lanes_supported(corded)
    runs = mb.simulate_batch(corded, np.array([[0.1], [0.2]]), None, 0.01, h=H)
    assert runs.info["path"] == "compiled batch"
    m = sprung_model()
    assert "is not a Revolute, Prismatic or Fixed joint" in lanes_supported(m)
    assert mb.simulate_batch(m, np.tile(m.neutral(), (2, 1)), None, 0.01, h=H).info["path"] == "compiled batch"
    chain = revolute_chain(3)
    Q0, V0 = chain_states(3, 3)
    assert mb.simulate_batch(chain, Q0, V0, 0.01, h=H).info["path"] == "compiled lanes"
    assert mb.simulate_batch(chain, Q0, V0, 0.01, h=H, method="STORMER6").info["path"] == "compiled batch"
    for model, kwargs, why in ((m, {}, "'jb' is not a Revolute"), (chain, {"method": "STORMER6"}, "STORMER6")):
        with pytest.raises(ModelError, match=why) as err:
            mb.simulate_batch(model, np.tile(model.neutral(), (2, 1)), None, 0.01, h=H, lanes=True, **kwargs)
        assert err.value.element == "lanes"
    with pytest.raises(ModelError) as err:
        mb.simulate_batch(chain, Q0, V0, 0.01, h=H, lanes="yes")
    assert err.value.element == "lanes"


def test_batch_bad_input_names_the_element():
    m = revolute_chain(3)
    Q0, V0 = chain_states(4, 3)
    cases = [
        (dict(Q0=Q0[:, :2], V0=V0), "Q0"),
        (dict(Q0=Q0, V0=V0[:3]), "V0"),
        (dict(Q0=Q0, V0=V0, params={"tau": np.zeros((4, 2))}), "tau"),
        (dict(Q0=Q0, V0=V0, params={"mass": np.ones((4, 3)) * [1, -1, 1]}), "link2"),
        (dict(Q0=Q0, V0=V0, params={"stiffness": np.ones((4, 3))}), "stiffness"),
        (dict(Q0=Q0, V0=V0, method="DOP853"), "method"),
        (dict(Q0=Q0, V0=V0, tau=lambda t, q, v: q, params={"mass": np.ones((4, 3))}), "mass"),   # (run by run)
        (dict(Q0=Q0, V0=V0, tau=lambda t, q, v: q, params={"tau": np.zeros((4, 2))}), "tau"),
        (dict(Q0=Q0[0], V0=V0[0]), "Q0"),
        (dict(Q0=np.full((4, 3), np.nan), V0=V0), "Q0"),
        (dict(Q0=Q0[:0], V0=V0[:0]), "Q0"),                           # no runs (every path: compiled, stepping)
        (dict(Q0=None, V0=V0[:0], contact="stepping", method="stepping"), "V0"),
    ]
    for kwargs, element in cases:
        kwargs.setdefault("method", "RK4")
        with pytest.raises(ModelError) as err:
            mb.simulate_batch(m, t_end=0.01, h=H, **kwargs)
        assert err.value.element == element, (kwargs.keys(), str(err.value))


def test_batch_non_finite_input_names_its_entry():
    """NaN or inf anywhere in Q0, V0 or params (every path: compiled, stepping, run by run): one line naming the
    array, the run, the column's name and the value."""
    m = revolute_chain(3)
    Q0, V0 = chain_states(4, 3)
    cols = {"tau": (3, m.velocity_names()), "mass": (3, m.body_names[1:]), "gravity": (3, ("x", "y", "z"))}
    for key, (k, names) in cols.items():
        for bad in (np.nan, np.inf, -np.inf):
            arr = np.ones((4, k))
            arr[2, 1], arr[3, 0] = bad, bad
            for extra in (dict(method="RK4"), dict(contact="stepping"), dict(tau=lambda t, q, v: 0.0 * q)):
                if "tau" in extra and key != "tau":
                    continue                                  # (run by run varies tau only: refused by name)
                with pytest.raises(ModelError) as err:
                    mb.simulate_batch(m, Q0, V0, t_end=0.01, h=H, params={key: arr}, **extra)
                msg = str(err.value)
                assert err.value.element == key and "\n" not in msg, msg
                assert f"params['{key}'][2, 1] ('{names[1]}') = {bad} and 1 more" in msg, msg
    bad_v = V0.copy()
    bad_v[1, 2] = np.nan
    with pytest.raises(ModelError, match=rf"V0\[1, 2\] \('{m.velocity_names()[2]}'\) = nan$"):
        mb.simulate_batch(m, Q0, bad_v, t_end=0.01, h=H)


def test_simulate_benchmark_runs_on_small_models(capsys):
    """``multibody bench --only simulate`` (not a speed test): the chain against MuJoCo when it is installed —
    with its check that the final angles agree — and the batch against single runs."""
    from multibody.bench.simulate import bench_batch, bench_chain

    rows = bench_chain(sizes=(3,), t_end=0.05, rounds=1)
    row = bench_batch(runs=6, n=3, t_end=0.05, n_out=6, singles=2, rounds=1)
    out = capsys.readouterr().out
    try:
        import mujoco  # noqa: F401
    except ImportError:
        assert rows == [] and "skipped" in out
    else:
        assert rows[0]["N"] == 3 and rows[0]["final_angle_difference"] < 1e-12
    assert row["runs"] == 6 and row["ratio"][0] > 0
