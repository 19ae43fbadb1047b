"""The new user's path on the command line, from a clean folder: write a model file (a four-bar) or take a URDF,
``multibody validate``, ``multibody run``, open the plot; ``multibody examples``; Result files (NPZ, CSV, HDF5)."""
import numpy as np
import pytest

from multibody import examples
from multibody.cli import main
from multibody.io import load, load_result, load_text, save_result
from multibody.result import Result

FOUR_BAR = """\
# my four-bar: pivots A and D 1 m apart on the ground, a crank of 0.3 m, a coupler of 1 m, a rocker of 0.8 m
name: my four-bar
gravity: [0, -9.81, 0]
bodies:
  - {name: crank,   mass: 0.5, com: [0.15, 0, 0], inertia: [1e-6, 0.5*0.3**2/12, 0.5*0.3**2/12]}
  - {name: coupler, mass: 2.0, com: [0.5, 0, 0],  inertia: [1e-6, 2/12, 2/12]}
  - {name: rocker,  mass: 1.0, com: [0.4, 0, 0],  inertia: [1e-6, 0.8**2/12, 0.8**2/12]}
joints:
  - {name: A, type: revolute, axis: [0, 0, 1], parent: ground, child: crank}
  - {name: B, type: revolute, axis: [0, 0, 1], parent: crank, child: coupler, placement: {translation: [0.3, 0, 0]}}
  - {name: D, type: revolute, axis: [0, 0, 1], parent: ground, child: rocker, placement: {translation: [1, 0, 0]}}
  - {name: C, type: revolute, axis: [0, 0, 1], parent: coupler, child: rocker,    # closes the loop
     placement: {translation: [1, 0, 0]}, child_placement: {translation: [0.8, 0, 0]}}
initial:   # roughly: crank up, coupler at 29 deg, rocker at 99 deg; the formulation makes them consistent
  q: {A: pi/2, B: -1.06, D: 1.73}
  v: {A: 6.0}
simulation: {formulation: constrained, method: DOP853, t_end: 2, rtol: 1e-10, atol: 1e-10}
"""

ARM_URDF = """<?xml version="1.0"?>
<robot name="two_link_arm">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0.25 0 0"/><mass value="1.0"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0.2 0 0"/><mass value="0.5"/>
    <inertia ixx="0.0005" ixy="0" ixz="0" iyy="0.008" iyz="0" izz="0.008"/></inertial></link>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-6.5" upper="6.5" effort="10" velocity="5"/></joint>
  <joint name="elbow" type="revolute"><parent link="upper"/><child link="lower"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-6.5" upper="6.5" effort="10" velocity="5"/></joint>
</robot>
"""


def _png_ok(path):
    import matplotlib.image as mpimg

    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 200 and img.shape[2] in (3, 4)
    assert float(img[..., :3].std()) > 0.05          # not a blank page


def test_new_user_writes_a_four_bar_validates_runs_and_sees_the_plot(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fourbar.yaml").write_text(FOUR_BAR)
    assert main(["validate", "fourbar.yaml"]) == 0
    assert "fourbar.yaml: valid: model 'my four-bar', 3 bodies, nq = 3, nv = 3, 1 constraint" in capsys.readouterr().out
    assert main(["run", "fourbar.yaml"]) == 0
    out = capsys.readouterr().out
    assert "constrained formulation, DOP853" in out and "wrote fourbar_run/result.png" in out
    _png_ok(tmp_path / "fourbar_run" / "result.png")
    res = Result.load(tmp_path / "fourbar_run" / "result.npz")
    assert res.t[-1] == 2.0 and res.q_names == ["A.angle", "B.angle", "D.angle"]
    # the energy line says what the change is relative to: Result.energy_drift's divisor
    e, T = res.energy["total"], res.energy["kinetic"]
    drift = np.abs(e - e[0]).max() / max(abs(e[0]), T.max())
    assert (f"  largest change of T + V, relative to max(|T + V at t = 0|, largest T of the run) "
            f"(0 for a conservative system): {drift:.3e}\n") in out
    # it moved: the crank turned round and the rocker rocked, with the loop closed (the Newton projection's
    # tolerance, 1e-12, 3x margin) from the consistent state the formulation made of the rough one
    assert np.ptp(res.q[:, 0]) > 2 * np.pi and 0.3 < np.ptp(res.q[:, 2]) < np.pi
    assert np.abs(res.residuals["C"]).max() < 3e-12
    assert abs(res.q[0, 1] + 1.06) < 0.01 and abs(res.q[0, 2] - 1.73) < 0.01
    for name in ("result.csv", "result.h5"):
        if name.endswith(".h5"):
            pytest.importorskip("h5py")
        other = load_result(tmp_path / "fourbar_run" / name)
        assert np.array_equal(other.q, res.q) and np.array_equal(other.t, res.t)


def test_new_user_loads_a_urdf_and_runs_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "arm.urdf").write_text(ARM_URDF)
    assert main(["validate", "arm.urdf"]) == 0
    assert main(["run", "arm.urdf"]) == 2
    assert "simulation.t_end is not given" in capsys.readouterr().err
    assert main(["run", "arm.urdf", "--t-end", "1", "--method", "RK4", "--h", "1e-3", "--out", "arm"]) == 0
    out = capsys.readouterr().out
    assert "tree formulation, RK4" in out and "1000 steps" in out
    _png_ok(tmp_path / "arm" / "result.png")
    res = Result.load(tmp_path / "arm" / "result.csv")
    # (its limits, end stops, are wide enough not to be reached in this second: no switch, no impact loss)
    assert res.q_names == ["shoulder.angle", "elbow.angle"] and len(res) == 1001 and res.events == []
    assert np.ptp(res.q[:, 0]) > 1.0                # released horizontal, it swings down
    # the energy error is RK4's truncation error: halving h divides it by 2^4 = 16
    from multibody import load_model, simulate

    coarse = simulate(load_model("arm.urdf"), None, None, 1.0, method="RK4", h=2e-3).energy_drift()
    assert 12 < coarse / res.energy_drift() < 20
    assert main(["run", "arm.urdf", "--t-end", "0.1", "--floating-base"]) == 2    # a massless root cannot float
    assert "link[@name='base']: body 'base' on joint 'root_joint' makes the mass matrix singular" in \
        capsys.readouterr().err
    (tmp_path / "arm.urdf").write_text(ARM_URDF.replace('<link name="base"/>', '<link name="base"><inertial><mass '
                                       'value="2"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" '
                                       'iyz="0"/></inertial></link>'))
    assert main(["run", "arm.urdf", "--t-end", "0.1", "--floating-base", "--out", "free"]) == 0
    free = Result.load(tmp_path / "free" / "result.npz")
    assert free.q_names[:3] == ["root_joint.x", "root_joint.y", "root_joint.z"] and free.q.shape[1] == 9
    # it falls freely, z = -g t²/2, which DOP853 integrates exactly: round-off only (100 eps)
    assert free.q[-1, 2] == pytest.approx(-9.81 * 0.1**2 / 2, rel=100 * np.finfo(float).eps)


def test_run_reports_the_problems_of_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text(FOUR_BAR.replace("mass: 2.0", "mass: 0"))
    assert main(["run", "bad.yaml"]) == 2
    err = capsys.readouterr().err
    assert err.strip().startswith("bad.yaml:6: bodies[1].mass: body 'coupler': a body of mass 0 has a non-zero "
                                  "inertia (principal moments [1e-06, 0.166667, 0.166667])")
    assert not (tmp_path / "bad_run").exists()


def test_examples_command(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["examples"]) == 0
    out = capsys.readouterr().out
    for name in examples.names():
        assert f"{name}  " in out or f"{name} " in out
    assert "Four-bar linkage" in out
    assert main(["examples", "four_bar"]) == 0
    text = capsys.readouterr().out
    assert load_text(text).model.nbodies == load(examples.path("four_bar")).model.nbodies
    assert main(["examples", "simple_pendulum", "--run", "--t-end", "1"]) == 0
    assert "wrote simple_pendulum_run/result.npz" in capsys.readouterr().out
    _png_ok(tmp_path / "simple_pendulum_run" / "result.png")
    assert main(["examples", "nonexistent"]) == 2
    assert "no example named 'nonexistent'; the examples are: andrews, flexible_pendulum, four_bar" in capsys.readouterr().err


def test_result_files_round_trip_exactly(tmp_path):
    res = Result(np.linspace(0, 1, 5), np.random.default_rng(0).normal(size=(5, 3)), np.ones((5, 2)),
                 energy={"kinetic": np.arange(5.0), "potential": -np.arange(5.0)},
                 residuals={"loop/C": np.full((5, 3), 1e-14)}, reactions={"A": np.ones((5, 2, 3))},
                 series={"alpha": np.arange(5.0)}, info={"method": "RK4", "steps": 4}, q_names=["a", "b", "c"])
    for suffix in (".npz", ".csv", ".h5"):
        if suffix == ".h5":
            pytest.importorskip("h5py")
        back = load_result(save_result(res, tmp_path / f"r{suffix}"))
        for key in ("t", "q", "v"):
            assert np.array_equal(getattr(back, key), getattr(res, key))
        for group in ("energy", "residuals", "reactions", "series"):
            a, b = getattr(res, group), getattr(back, group)
            assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
        assert back.info == res.info and back.q_names == res.q_names
