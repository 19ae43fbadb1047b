"""Animations (``multibody.viz.animation``, ``multibody animate``): the drawing follows the model's kinematics,
planar systems are recognised and drawn in their plane, the files open as images with the frames and size asked
for."""
import sys
import types

import numpy as np
import pytest
from PIL import Image

import multibody as mb
from multibody.cli import main
from multibody.errors import ModelError
from multibody.systems import bicycle, hoop_on_profile, iftomm, pendulums, slider_crank
from multibody.viz import animate
from multibody.viz.animation import Scene, planar_basis


@pytest.fixture(scope="module")
def crank_run():
    """Seed 001 §2.6.2: one crank turn of the slider-crank (tree + cut pin B)."""
    return slider_crank.simulate_turns(turns=1, n_out=61, formulation="constrained")


def _gif(path):
    im = Image.open(path)
    assert im.format == "GIF"
    return im.n_frames, im.size


def test_planar_systems_are_recognised():
    """Parallel hinges and sliders across them move in one plane (seed 001 §2.5, §3.2.2); spherical, universal and
    free joints do not. The plane's axes: "up" against gravity, e1 along +x where it can."""
    m, q0, _ = slider_crank.model()                        # hinges about z, slider along x, gravity −y
    e1, e2, n = planar_basis(m, q0)
    assert np.allclose([e1, e2, n], np.eye(3), rtol=0, atol=1e-14)     # unit vectors, to round-off
    m, q0, _ = iftomm.four_bar_model(2)                     # A02: five hinges about z, two cut joints
    assert np.allclose(planar_basis(m, q0), np.eye(3), rtol=0, atol=1e-14)
    e1, e2, n = planar_basis(pendulums.simple_pendulum(), [0.3])   # hinge about y, gravity −z: the xz-plane
    assert np.allclose([e1, e2, n], [[1, 0, 0], [0, 0, 1], [0, -1, 0]], rtol=0, atol=1e-14)
    hoop = hoop_on_profile.hoop_model()                     # a Planar joint in the vertical xz-plane
    assert np.allclose(planar_basis(hoop, hoop.neutral())[:2], [[1, 0, 0], [0, 0, 1]], rtol=0, atol=1e-14)
    for model in (pendulums.spatial_chain(2), pendulums.spatial_chain(2, joint="universal"),
                  bicycle.whipple_model()):
        assert planar_basis(model, model.neutral()) is None
    b = mb.ModelBuilder()                                   # two hinges that are not parallel
    b.add_body("a", 1.0, com=(0.5, 0, 0), inertia=(0.1, 0.1, 0.1))
    b.add_body("b", 1.0, com=(0.5, 0, 0), inertia=(0.1, 0.1, 0.1))
    b.add_joint("j1", mb.Revolute(axis=(0, 0, 1)), "ground", "a")
    b.add_joint("j2", mb.Revolute(axis=(1, 0, 0)), "a", "b", placement=(None, (1, 0, 0)))
    skew = b.build()
    assert planar_basis(skew, skew.neutral()) is None


def test_scene_links_follow_the_joints(crank_run):
    """Each link runs from the body's joint to the joints it carries: the crank's tip is the rod's joint A, the
    rod's tip meets the slider's pin B (the cut joint, closed to the run's tolerance), the slide runs from the
    guide's origin to the slider."""
    m = crank_run.model
    scene = Scene(m, crank_run.q[::10])
    crank, rod, slider = (m.body_index(n) for n in ("crank", "rod", "slider"))
    L = {b: scene.links[:, scene.link_body == b] for b in (crank, rod, slider)}
    assert L[crank].shape[1] == 1 and L[rod].shape[1] == 1        # crank: joint A; rod: pin B
    assert np.allclose(L[crank][:, 0, 1], L[rod][:, 0, 0], rtol=0, atol=1e-12)
    # lengths of rigid links from the kinematics, to round-off (a few eps of the positions, which are < 1 m)
    assert np.allclose(np.linalg.norm(L[crank][:, 0, 1] - L[crank][:, 0, 0], axis=1), 0.05, rtol=0, atol=1e-14)
    assert np.allclose(np.linalg.norm(L[rod][:, 0, 1] - L[rod][:, 0, 0], axis=1), 0.20, rtol=0, atol=1e-14)
    pin_on_slider = scene.triads[:, slider - 1, 0]
    assert np.abs(L[rod][:, 0, 1] - pin_on_slider).max() < 1e-9
    assert np.allclose(scene.slides[:, 0, 0], 0.0, rtol=0, atol=1e-14)
    assert np.allclose(scene.slides[:, 0, 1], pin_on_slider, rtol=0, atol=1e-14)
    assert scene.ground.shape == (2, 3)                             # the crank pivot O and the guide
    for k, q in enumerate(crank_run.q[::10]):                       # triads: the bodies' own frames
        K = mb.forward_kinematics(m, q)
        assert np.allclose(scene.triads[k, :, 0], K.p[1:], rtol=0, atol=1e-14)
        assert np.allclose(scene.triads[k, :, 1:] - K.p[1:, None], np.transpose(K.R[1:], (0, 2, 1)), rtol=0, atol=1e-14)


def test_slider_crank_gif_2d(crank_run, tmp_path):
    """A planar mechanism: a GIF with the frames and the size asked for."""
    out = animate(crank_run, tmp_path / "crank.gif", frames=20, fps=10, size=(320, 240))
    assert _gif(out) == (20, (320, 240))
    # more frames than samples: one frame per sample
    out = animate(crank_run.model, tmp_path / "few.gif", q=crank_run.q[:5], frames=50, size=(200, 150))
    assert _gif(out) == (5, (200, 150))


def test_spherical_pendulum_gif_3d(tmp_path):
    """A spherical pendulum (quaternion joint) leaves every plane: drawn in 3-D."""
    model = pendulums.spatial_chain(1)
    q0 = model.integrate(model.neutral(), np.array([0.6, 0.0, 0.0]))
    res = mb.simulate(model, q0, np.array([0.0, 1.5, 0.0]), 1.0, n_out=41)
    out = animate(res, tmp_path / "spherical.gif", frames=12, size=(320, 240))
    assert _gif(out) == (12, (320, 240))
    with pytest.raises(ModelError, match="one plane"):
        animate(res, tmp_path / "flat.gif", view="2d")


def test_bicycle_gif_3d_follows_the_bicycle(tmp_path):
    """The Whipple bicycle (seed 003 §8 run, a Free joint and two rolling discs) in 3-D, the window following it."""
    res = bicycle.simulate_nonlinear(speed=4.6, roll_rate=0.5, t_end=1.0, n_out=21)
    scene = Scene(res.model, res.q[[0, -1]])
    assert scene.discs.shape == (2, 2, 41, 3)
    rims = scene.discs[0]
    assert np.allclose(rims[..., 2].min(axis=1), 0.0, rtol=0, atol=1e-3)     # the wheels stand on the floor z = 0
    assert scene.ground.shape == (0, 3)                              # a floating base has no ground point
    out = animate(res, tmp_path / "bicycle.gif", frames=8, size=(320, 240))
    assert _gif(out) == (8, (320, 240))


def test_errors(crank_run, tmp_path, monkeypatch):
    from matplotlib import animation as mpl_animation

    monkeypatch.setattr(mpl_animation.writers, "is_available", lambda name: False)
    with pytest.raises(ModelError, match="ffmpeg"):
        animate(crank_run, tmp_path / "a.mp4")
    with pytest.raises(ModelError, match=r"\.gif or \.mp4"):
        animate(crank_run, tmp_path / "a.png")
    path = crank_run.save(tmp_path / "run.npz")
    loaded = mb.Result.load(path)
    with pytest.raises(ModelError, match="carries no model"):
        animate(loaded, tmp_path / "a.gif")
    with pytest.raises(ModelError, match="nq = 3"):
        animate(crank_run.model, tmp_path / "a.gif", q=np.zeros((4, 2)))
    with pytest.raises(ModelError, match="frames"):
        animate(crank_run, tmp_path / "a.gif", frames=0)
    with pytest.raises(ModelError, match="view"):
        animate(crank_run, tmp_path / "a.gif", view="4d")
    with pytest.raises(ModelError, match="Model or a Result"):
        animate("crank", tmp_path / "a.gif")


@pytest.mark.skipif(not __import__("matplotlib.animation").animation.writers.is_available("ffmpeg"),
                    reason="ffmpeg is not installed")
def test_mp4_with_ffmpeg(crank_run, tmp_path):
    out = animate(crank_run, tmp_path / "crank.mp4", frames=10, size=(320, 240))
    assert out.stat().st_size > 0


def test_cli_animate(crank_run, tmp_path, capsys, monkeypatch):
    """``multibody animate RESULT --model MODULE:FUNCTION | FILE.py:FUNCTION | model file``."""
    npz = str(crank_run.save(tmp_path / "run.npz"))
    gif = tmp_path / "crank.gif"
    assert main(["animate", npz, "--model", "multibody.systems.slider_crank:model", "--out", str(gif),
                 "--frames", "6", "--size", "160x120"]) == 0
    assert _gif(gif) == (6, (160, 120))
    assert "written to" in capsys.readouterr().out
    # a function in a Python file
    src = tmp_path / "my_models.py"
    src.write_text("from multibody.systems import slider_crank\n\ndef build():\n    return slider_crank.model()[0]\n")
    gif2 = tmp_path / "crank2.gif"
    assert main(["animate", npz, "--model", f"{src}:build", "--out", str(gif2), "--frames", "3",
                 "--size", "160x120"]) == 0
    assert _gif(gif2) == (3, (160, 120))
    # errors: exit status 2 and a one-line message naming what is wrong
    assert main(["animate", npz, "--out", str(gif)]) == 2
    assert "--model MODULE:FUNCTION" in capsys.readouterr().err
    assert main(["animate", npz, "--model", "multibody.systems.pendulums:simple_pendulum", "--out", str(gif)]) == 2
    assert "nq = 1" in capsys.readouterr().err
    assert main(["animate", npz, "--model", "no_such_module_xyz:f", "--out", str(gif)]) == 2
    assert main(["animate", str(tmp_path / "missing.npz"), "--out", str(gif)]) == 2
    assert main(["animate", npz, "--model", "multibody.systems.slider_crank:model", "--size", "big"]) == 2
    # model files go through multibody.io.load_model, imported when needed
    yaml_file = tmp_path / "crank.yaml"
    yaml_file.write_text("name: slider-crank\n")
    monkeypatch.setitem(sys.modules, "multibody.io", None)          # an installation without multibody.io
    assert main(["animate", npz, "--model", str(yaml_file), "--out", str(gif)]) == 2
    assert "multibody.io.load_model" in capsys.readouterr().err
    fake_io = types.SimpleNamespace(load_model=lambda path: slider_crank.model()[0])
    monkeypatch.setitem(sys.modules, "multibody.io", fake_io)
    gif3 = tmp_path / "crank3.gif"
    assert main(["animate", npz, "--model", str(yaml_file), "--out", str(gif3), "--frames", "2",
                 "--size", "160x120"]) == 0
    assert _gif(gif3) == (2, (160, 120))
