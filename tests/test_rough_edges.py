"""What a new user met first, smoothed:

* ``multibody run`` of a robot whose neutral configuration lies outside a joint's limits (the Panda's joint 4) starts
  inside them and says so; ``--q0`` gives the initial configuration, ``--no-stops`` keeps the limits as data;
* ``model.random_configuration(rng)`` draws within the joint limits (DESIGN.md's contract), and what it always drew
  for a model without limits;
* ``mb.load_model(path, limits=False)`` for every format (model files, URDF): the limits kept as data, no stops;
* ``plot_result``: units on the axes and in the legend, legends beside the axes (never over a curve), and an
  adaptive run with few accepted steps drawn from its dense output — the same states a run with those output times
  gives.
"""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import multibody as mb
from multibody.cli import main
from multibody.systems.pendulums import simple_pendulum

LINK = ('<inertial><origin xyz="0 0 -0.25"/><mass value="1"/>'
        '<inertia ixx="0.02" iyy="0.02" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>')
ARM = f"""<robot name="arm"><link name="base"/><link name="upper">{LINK}</link><link name="lower">{LINK}</link>
<joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="10" velocity="3"/></joint>
<joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/><origin xyz="0 0 -0.5"/>
  <axis xyz="0 1 0"/><limit lower="-3.0718" upper="-0.0698" effort="10" velocity="3"/></joint></robot>"""


@pytest.fixture
def arm(tmp_path, monkeypatch):
    """An arm whose elbow, like the Panda's joint 4, cannot be at 0 (limits [−3.0718, −0.0698])."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arm.urdf").write_text(ARM)
    return tmp_path / "arm.urdf"


def test_run_starts_a_robot_inside_its_limits(arm, capsys):
    assert main(["run", str(arm), "--t-end", "0.2", "--out", "inside"]) == 0
    err = capsys.readouterr().err
    assert ("initial elbow.angle = -1.5708 (the neutral 0 lies outside its limits [-3.0718, -0.0698]; --q0 sets the "
            "initial configuration, --no-stops keeps the limits as data)") in err
    res = mb.Result.load(arm.parent / "inside" / "result.npz")
    assert res.q[0].tolist() == [0.0, -(3.0718 + 0.0698) / 2] and res.info["switching"]


def test_run_q0_and_no_stops(arm, capsys):
    assert main(["run", str(arm), "--t-end", "0.2", "--q0", "0.5,-1", "--out", "given"]) == 0
    assert "initial" not in capsys.readouterr().err
    assert mb.Result.load(arm.parent / "given" / "result.npz").q[0].tolist() == [0.5, -1.0]
    assert main(["run", str(arm), "--t-end", "0.2", "--q0", "0.5"]) == 2
    assert "--q0 has 1 values; model 'arm' has nq = 2 coordinates (shoulder.angle, elbow.angle)" in \
        capsys.readouterr().err
    assert main(["run", str(arm), "--t-end", "0.2", "--no-stops", "--out", "free"]) == 0
    assert "initial" not in capsys.readouterr().err           # no stops: the neutral 0 is a start like any other
    res = mb.Result.load(arm.parent / "free" / "result.npz")
    assert res.q[0].tolist() == [0.0, 0.0] and "switching" not in res.info


def _limited_chain(n, seed):
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder()
    parent = "ground"
    for k in range(n):
        b.add_body(f"l{k}", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
        lower = rng.choice([-np.inf, rng.uniform(-6, 2)])
        upper = rng.choice([np.inf, lower + rng.uniform(0.01, 4) if np.isfinite(lower) else rng.uniform(-6, 6)])
        b.add_joint(f"j{k}", mb.Revolute(axis=(0, 1, 0)), parent, f"l{k}", placement=(None, (0, 0, -1 if k else 0)),
                    limits=(lower, upper))
        parent = f"l{k}"
    b.add_body("free", mass=1.0, com=(0, 0, 0), inertia=(0.1, 0.1, 0.1))
    b.add_joint("float", mb.Free(), "ground", "free")
    return b.build()


@settings(max_examples=30)
@given(n=st.integers(1, 6), seed=st.integers(0, 2**31 - 1), scale=st.sampled_from([0.5, 1.0, math.pi]))
def test_random_configurations_lie_within_the_limits(n, seed, scale):
    model = _limited_chain(n, seed)
    for k in range(5):
        q = model.random_configuration(np.random.default_rng(k), scale=scale)
        assert np.all(q >= model.lower_limits) and np.all(q <= model.upper_limits)
        quat = q[model.joint("float").q_slice][3:]
        assert abs(np.linalg.norm(quat) - 1.0) <= 4 * np.finfo(float).eps


def test_a_model_without_limits_draws_what_it_drew():
    model = mb.ModelBuilder()
    model.add_body("l", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    model.add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "l")
    model = model.build()
    assert model.random_configuration(7, scale=2.0).tolist() == np.random.default_rng(7).uniform(-2, 2, 1).tolist()


def test_load_model_keeps_limits_as_data_in_every_format(arm):
    stops = mb.load_model(arm)
    data = mb.load_model(arm, limits=False)
    assert stops.unilateral and not data.unilateral and data.metadata["limits"] == stops.metadata["limits"]
    for suffix in (".yaml", ".json"):
        path = arm.parent / f"arm{suffix}"
        mb.save_model(stops, path)
        assert mb.load_model(path).upper_limits.tolist() == stops.upper_limits.tolist()
        loose = mb.load_model(path, limits=False)
        assert not loose.unilateral and loose.upper_limits.tolist() == [np.inf, np.inf]
    with pytest.raises(mb.errors.ModelError, match="limits must be True or False, got 'no'"):
        mb.load_model(arm, limits="no")


def test_plot_has_units_legends_beside_and_draws_from_the_dense_output():
    model = simple_pendulum()
    res = mb.simulate(model, [1.0], [0.0], 3.0, rtol=1e-6)
    assert res.dense is not None and len(res.t) < 40
    from multibody.viz import plot_result
    from multibody.viz.results import DENSE_POINTS

    fig = plot_result(res)
    ax_q, ax_e = fig.axes[:2]
    assert ax_q.get_ylabel() == "coordinates (rad)" and ax_e.get_ylabel() == "energy (J)"
    assert ax_q.get_xlabel() == "" and fig.axes[1].get_xlabel() == "t (s)"
    line = ax_q.get_lines()[0]
    assert line.get_label() == "hinge.angle (rad)" and len(line.get_xdata()) == DENSE_POINTS
    # the dense output is the states the same run gives at those times (the same steps, the same interpolants)
    ref = mb.simulate(model, [1.0], [0.0], 3.0, rtol=1e-6, t_eval=line.get_xdata())
    np.testing.assert_allclose(line.get_ydata(), ref.q[:, 0], rtol=0, atol=1e-12)
    fig.canvas.draw()
    for ax in fig.axes[:2]:       # each legend beside its axes: no overlap with the plotting area
        legend = ax.get_legend().get_window_extent()
        assert legend.x0 >= ax.get_window_extent().x1
    many = mb.simulate(model, [1.0], [0.0], 3.0, n_out=50)
    assert many.dense is None                   # outputs asked for: drawn through them


def test_a_run_across_separations_is_drawn_in_each_structure(tmp_path):
    """A two-stage stack whose upper stage separates at t = 0.5: the viewer and the animations draw it, every row in
    the last structure's coordinates — the bodies where their own structure puts them (forward kinematics of each,
    to round-off) —; a Result read from a file (which carries no structures) is refused with one line saying so."""
    from multibody.viz import animate, to_html
    from multibody.viz.animation import last_structure_motion

    b = mb.ModelBuilder(gravity=(0, 0, -9.81), name="stages")
    b.add_body("lower", mass=10.0, com=(0, 0, 0.5), inertia=(1, 1, 0.2))
    b.add_joint("lift", mb.Prismatic(axis=(0, 0, 1)), "ground", "lower")
    b.add_body("upper", mass=2.0, com=(0, 0, 0.3), inertia=(0.2, 0.2, 0.05))
    b.add_joint("stack", mb.Revolute(axis=(0, 1, 0)), "lower", "upper", placement=(None, (0, 0, 1.0)))
    b.add_release("stack", 0.5, "separate")
    res = mb.simulate(b.build(), [0.0, 0.2], [5.0, 1.0], 1.0, n_out=21)
    last, Q = last_structure_motion(res)
    assert last is res.structures[-1]["model"] and np.all(np.isfinite(Q))
    cols = {n: i for i, n in enumerate(res.q_names)}
    for k in range(len(res.t)):
        own = next(s["model"] for s in reversed(res.structures)
                   if np.all(np.isfinite(res.q[k, [cols[n] for n in s["model"].coordinate_names()]])))
        q = res.q[k, [cols[n] for n in own.coordinate_names()]]
        mine, drawn = mb.forward_kinematics(own, q), mb.forward_kinematics(last, Q[k])
        for name in ("lower", "upper"):
            i, j = own.body_names.index(name), last.body_names.index(name)
            np.testing.assert_allclose(drawn.p[j], mine.p[i], rtol=0, atol=1e-13)
            np.testing.assert_allclose(drawn.R[j], mine.R[i], rtol=0, atol=1e-13)
    assert to_html(res, tmp_path / "stages.html").stat().st_size > 0
    assert animate(res, tmp_path / "stages.gif", frames=3).stat().st_size > 0
    res.save(tmp_path / "stages.npz")
    with pytest.raises(mb.errors.ModelError, match=r"the Result is of a run across separations .* a Result read "
                                                   r"from a file does not"):
        to_html(mb.Result.load(tmp_path / "stages.npz"), tmp_path / "again.html", model=res.model)
