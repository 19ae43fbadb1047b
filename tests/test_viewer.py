"""The 3-D viewer (``multibody.viz.viewer``, ``multibody.viz.shapes``): the meshes of the shapes and of the inferred
bodies, the page's data against ``forward_kinematics``, Jupyter and the command line; and, in a real browser
(Debian's Chromium driven by Playwright), the exported pages of the Panda and the Solo12 (example-robot-data), the
solar panel deploying, the bicycle's Fig. 4 run and the hoop: no console error, play changes the scene, and the
body position the page reports at its time is the Result's to 1e-9.

The browser tests skip, with the reason, where Chromium (``apt-get install chromium``) or Playwright is missing;
``.ci/run`` installs both. With ``MULTIBODY_DOCS_IMG=DIR`` the screenshot of the docs (``viewer.png``) is copied
to DIR (``python docs/make_figures.py viewer`` does that)."""
import base64
import importlib.metadata
import json
import math
import os
import re
import shutil
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError
from multibody.model.rotations import quat_to_matrix
from multibody.systems import bicycle, hoop_on_profile, pendulums, solar_panels
from multibody.viz import shapes, viewer
from multibody.viz.animation import Scene

pytest.importorskip("plotly", reason="the viewer extra (pip install 'multibody[viewer]') is not installed")

CHROMIUM = Path("/usr/bin/chromium")


# ------------------------------------------------------------------------------------------------ meshes
def _closed_volume(V, F):
    """The signed volume of a closed triangle mesh (divergence theorem) and whether every edge is shared by two
    faces running along it in opposite directions (closed and consistently oriented)."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    vol = float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
    _, same = np.unique(V.round(12), axis=0, return_inverse=True)        # a box's sides have their own corners
    F = same.reshape(-1)[F]
    edges = np.concatenate([F[:, [0, 1]], F[:, [1, 2]], F[:, [2, 0]]])
    forward = {tuple(e) for e in edges}
    closed = len(forward) == len(edges) and all((b_, a_) in forward for a_, b_ in forward)
    return vol, closed


def test_shape_meshes_are_closed_with_their_volumes():
    """Box: exact. Cylinder: a prism on the inscribed 24-gon, volume (n/2) sin(2π/n) r² L exactly. Sphere and
    capsule: polyhedra inscribed in the solid, each face within 15° (one step) of its vertices, so the volume lies
    between cos³(15°) and 1 times the solid's."""
    n = shapes.AROUND
    V, F = shapes.shape_mesh(mb.Box((0.2, 0.3, 0.5)))
    vol, closed = _closed_volume(V, F)
    assert closed and abs(vol - 0.03) < 1e-15
    V, F = shapes.shape_mesh(mb.Cylinder(0.1, 0.4))
    vol, closed = _closed_volume(V, F)
    assert closed and abs(vol - 0.5 * n * math.sin(2 * math.pi / n) * 0.01 * 0.4) < 1e-15
    assert np.allclose(np.ptp(V, axis=0)[2], 0.4, rtol=0, atol=1e-15)
    for shape, exact in ((mb.Sphere(0.3), 4 / 3 * math.pi * 0.027),
                         (mb.Capsule(0.1, 0.5), 4 / 3 * math.pi * 0.001 + math.pi * 0.01 * 0.5)):
        V, F = shapes.shape_mesh(shape)
        vol, closed = _closed_volume(V, F)
        assert closed and math.cos(math.radians(15)) ** 3 * exact < vol < exact
    assert shapes.shape_mesh(mb.HalfSpace()) is None


def test_inertia_ellipsoid_inverts_the_solid_ellipsoid():
    """The solid ellipsoid of semi-axes (a, b, c) has I = m/5 diag(b² + c², a² + c², a² + b²) about its centre;
    inertia_ellipsoid gives back the semi-axes and the principal directions (random rotations)."""
    rng = np.random.default_rng(3)
    for _ in range(20):
        semi = rng.uniform(0.05, 2.0, 3)
        m = rng.uniform(0.1, 10.0)
        Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        I = Q @ np.diag(m / 5 * np.array([semi[1] ** 2 + semi[2] ** 2, semi[0] ** 2 + semi[2] ** 2,
                                          semi[0] ** 2 + semi[1] ** 2])) @ Q.T
        got, axes = shapes.inertia_ellipsoid(m, I)
        order = np.argsort(np.diag(Q.T @ I @ Q))             # eigh sorts the moments up (the semi-axes down)
        assert np.allclose(got, semi[order], rtol=1e-10, atol=0)
        assert np.allclose(np.abs(axes.T @ Q[:, order]), np.eye(3), rtol=0, atol=1e-8)
    semi, _ = shapes.inertia_ellipsoid(2.0, np.zeros((3, 3)))           # a point mass: no extent
    assert np.array_equal(semi, np.zeros(3))


def test_simplify_keeps_the_shape_within_a_cell():
    trimesh = pytest.importorskip("trimesh")
    ball = trimesh.creation.icosphere(subdivisions=5, radius=0.5)       # 20 480 faces
    V, F = shapes.simplify(ball.vertices, ball.faces, 800)
    assert 0 < len(F) <= 800 and F.max() < len(V)
    r = np.linalg.norm(V, axis=1)
    cell = 1.0 / (2 * math.sqrt(800))                                  # the first grid: extent / (2 √max)
    assert np.all(r <= 0.5 + 1e-12) and np.all(r > 0.5 - 2 * math.sqrt(3) * cell)   # means of points on the sphere


def test_mesh_files(tmp_path, monkeypatch):
    trimesh = pytest.importorskip("trimesh")
    stl = tmp_path / "block.stl"
    trimesh.creation.box(extents=(1.0, 2.0, 3.0)).export(stl)
    V, F = shapes.shape_mesh(mb.Mesh(str(stl), scale=(2.0, 1.0, 0.5)))
    assert np.allclose(np.ptp(V, axis=0), [2.0, 2.0, 1.5], rtol=0, atol=1e-6)
    with pytest.raises(ModelError, match="no such file"):
        shapes.shape_mesh(mb.Mesh(str(tmp_path / "missing.stl")))
    (tmp_path / "bad.stl").write_text("not a mesh")
    with pytest.raises(ModelError, match="no triangles"):
        shapes.shape_mesh(mb.Mesh(str(tmp_path / "bad.stl")))
    (tmp_path / "part.nosuchformat").write_text("?")
    with pytest.raises(ModelError, match="trimesh cannot read"):
        shapes.shape_mesh(mb.Mesh(str(tmp_path / "part.nosuchformat")))
    monkeypatch.setitem(sys.modules, "trimesh", None)
    with pytest.raises(ModelError, match=r"multibody\[viewer\]"):
        shapes.shape_mesh(mb.Mesh(str(stl)))


# ------------------------------------------------------------------------------------------------ inferred bodies
def _world(model, q, parts, body):
    K = mb.forward_kinematics(model, q)
    return np.concatenate([p.vertices @ K.R[body].T + K.p[body] for p in parts if p.body == body])


def _rod_with_tip_spring(child_placement=None):
    """A uniform rod (length 1 along the joint frame's −z) hinged at the origin, held at its tip by a spring."""
    b = mb.ModelBuilder(name="rod and spring")
    b.add_body("rod", 2.0, com=(0, 0, -0.5), inertia=(2 / 12, 2 / 12, 1e-6))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", child_placement=child_placement)
    b.add_spring("spring", "rod", (0, 0, -1.0), "ground", (1.0, 0, -1.0), stiffness=10.0)
    return b.build()


def test_leaf_bodies_are_drawn_whole():
    """A body that carries no joint: its ellipsoid of inertia about its centre of mass (a uniform rod: semi-axis
    about √(5/3) L/2 along it), the spring point it holds on a rod, and a point mass on a rod from its joint."""
    model = _rod_with_tip_spring()
    q = np.array([0.4])
    parts = shapes.inferred_parts(model, q)
    W = _world(model, q, parts, 1)
    tip = mb.point_position(model, q, "rod", (0, 0, -1.0))
    radius = 0.015 * shapes.characteristic_length(model, q)
    assert np.min(np.linalg.norm(W - tip, axis=1)) <= radius * (1 + 1e-9)     # the rod's end at the spring
    com = mb.point_position(model, q, "rod", (0, 0, -0.5))
    along = (W - com) @ (tip - com) / 0.5
    semi = math.sqrt(5 / (2 * 2.0) * (2 * 2 / 12 - 1e-6))                   # a² = 5 (I₂ + I₃ − I₁)/(2 m)
    assert abs(along.max() - semi) < 1e-12                                   # the ellipsoid's end, along the rod
    # the stick figure: a link of the rod ends at the spring point; its principal axis spans √(5/3) L
    scene = Scene(model, q[None])
    ends = scene.links[0, scene.link_body == 1].reshape(-1, 3)
    assert np.min(np.linalg.norm(ends - tip, axis=1)) < 1e-12
    assert abs(np.max(np.linalg.norm(ends - com, axis=1)) - semi) < 1e-12
    # a point mass on a massless rod: a small ball at the bob and a rod from the pivot to it
    pend = pendulums.simple_pendulum(length=1.0)
    W = _world(pend, [0.0], shapes.inferred_parts(pend, [0.0]), 1)
    assert abs(W[:, 2].min() + 1.0 + 0.0225) < 1e-12 and abs(W[:, 2].max() - 0.015) < 1e-12


def test_inferred_shapes_in_the_bodies_own_frames():
    """A joint with a child placement: the user's body frame differs from the kernels'; the rod still ends at the
    spring point and the ellipsoid's centre is the centre of mass, in ground coordinates."""
    turn = mb.Placement(mb.rotation_about((1, 0, 0), 0.7), (0.1, 0.2, 0.0))
    model = _rod_with_tip_spring(child_placement=turn)
    q = np.array([-0.3])
    parts = shapes.inferred_parts(model, q)
    K = mb.forward_kinematics(model, q)
    tip = mb.point_position(model, q, "rod", model.bodies[0].com * 2)    # the tip: twice the com, in user frame
    W = _world(model, q, parts, 1)
    radius = 0.015 * shapes.characteristic_length(model, q)
    assert np.min(np.linalg.norm(W - tip, axis=1)) <= radius * (1 + 1e-9)
    com = mb.point_position(model, q, "rod", model.bodies[0].com)
    ellipsoid = [p for p in parts if len(p.vertices) == len(shapes.shape_mesh(mb.Sphere(1.0))[0])]
    centre = np.mean(ellipsoid[0].vertices, axis=0)
    assert np.allclose(K.R[1] @ centre + K.p[1], com, rtol=0, atol=1e-12)


def test_bicycle_wheels_are_discs_of_their_radius():
    model = bicycle.whipple_model()
    q0, _ = bicycle.upright_state(model, 4.6)
    parts, notes = shapes.body_parts(model, q0)
    assert notes == []
    P = bicycle.benchmark_parameters()
    for wheel, r in (("rear_wheel", P.rR), ("front_wheel", P.rF)):
        b = model.body_index(wheel)
        V = np.concatenate([p.vertices for p in parts if p.body == b])
        assert abs(np.max(np.hypot(V[:, 0], V[:, 2])) - r) < 1e-12      # the axle along y: the rim at r
        W = _world(model, q0, parts, b)
        assert abs(W[:, 2].min()) < 1e-9                                  # standing on the floor


def test_visual_and_collision_elements():
    """A body with visuals is drawn by them, its collision shapes hidden until asked for; a body with collision
    shapes only is drawn by them; a half-space on the ground is a patch of its plane under the motion."""
    b = mb.ModelBuilder(name="ball and box")
    b.add_body("ball", 1.0, inertia=(0.004, 0.004, 0.004))
    b.add_body("box", 1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    b.add_joint("free", mb.Free(), "ground", "ball")
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ball", "box")
    b.add_visual("ball_look", "ball", mb.Sphere(0.1), color=(0.2, 0.4, 0.6, 0.5))
    b.add_collision("ball_geom", "ball", mb.Sphere(0.11))
    b.add_collision("box_geom", "box", mb.Box((0.1, 0.1, 1.0)), mb.Placement(translation=(0, 0, -0.5)))
    tilt = mb.rotation_about((1, 0, 0), 0.3)
    b.add_collision("floor", "ground", mb.HalfSpace(), mb.Placement(tilt, (0, 0, -2.0)))
    model = b.build()
    q = model.neutral()
    parts, notes = shapes.body_parts(model, q)
    assert notes == [] and [(p.body, p.role, p.name) for p in parts] == [
        (1, "visual", "ball_look"), (1, "collision", "ball_geom"), (2, "collision", "box_geom")]
    assert np.allclose(np.ptp(parts[2].vertices, axis=0), [0.1, 0.1, 1.0], rtol=0, atol=1e-15)
    data = _page_data(viewer.page(model, q=q))
    assert [(m["body"], m["role"], m["visible"], m["color"], m["opacity"]) for m in data["meshes"]] == [
        (1, "visual", True, "rgb(51, 102, 153)", 0.5), (1, "collision", False, viewer.PALETTE[1], 0.5),
        (2, "collision", True, viewer.PALETTE[2], 1.0)]
    patch = data["static"][0]
    corners = np.c_[patch["x"], patch["y"], patch["z"]] - (0, 0, -2.0)
    assert np.max(np.abs(corners @ tilt[:, 2])) < 1e-12                  # in the plane of the half-space


def test_visual_elements_and_package_meshes(tmp_path):
    """Visual elements: boxes, cylinders, spheres, and meshes named ``package://NAME/...`` found in a folder NAME
    above the model's URDF file."""
    trimesh = pytest.importorskip("trimesh")
    pkg = tmp_path / "my_robot"
    (pkg / "meshes").mkdir(parents=True)
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(pkg / "meshes" / "cube.stl")
    urdf = pkg / "robot.urdf"
    b = mb.ModelBuilder(name="robot", metadata={"urdf": {"path": str(urdf)}})
    b.add_body("arm", 1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    b.add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "arm")
    place = mb.Placement(translation=(0.0, 0.0, -0.5))
    b.add_visual("box", "arm", mb.Box((0.1, 0.1, 1.0)), place, color=(1.0, 0.0, 0.0, 1.0))
    b.add_visual("rod", "arm", mb.Cylinder(0.05, 1.0), place)
    b.add_visual("ball", "arm", mb.Sphere(0.1), place)
    b.add_visual("cube", "arm", mb.Mesh("package://my_robot/meshes/cube.stl", (1.0, 1.0, 2.0)), place)
    model = b.build()
    parts, notes = shapes.body_parts(model, [0.0])
    assert notes == [] and [p.role for p in parts] == ["visual"] * 4 and parts[0].color == (1.0, 0.0, 0.0, 1.0)
    assert [p.name for p in parts] == ["box", "rod", "ball", "cube"]
    assert np.allclose(np.ptp(parts[3].vertices, axis=0), [0.1, 0.1, 0.2], rtol=0, atol=1e-6)


# ------------------------------------------------------------------------------------------------ the runs
def _robots():
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    return path if path.is_dir() else None


def _run_robot(urdf, floating, t_end):
    model = mb.load_model(urdf, floating_base=floating)
    q0 = model.neutral()
    for lm in model.unilateral.limits:    # (the URDF's limits are end stops: start within them)
        if not lm.lower < q0[lm.q_index] < lm.upper:
            q0[lm.q_index] = 0.5 * (lm.lower + lm.upper)
    v0 = np.zeros(model.nv)
    v0[-model.nv + (6 if floating else 0):] = 1.0                  # every joint turning at 1 rad/s
    if floating:
        v0[:6] = (0.4, 0.2, 1.0, 0.5, 0.0, 0.5)
    return mb.simulate(model, q0, v0, t_end, n_out=int(round(50 * t_end)) + 1)


def _runs():
    """The runs the browser opens: name -> (make the Result, body to follow, has contact points)."""
    def hoop():
        model = hoop_on_profile.hoop_model()
        q0, v0 = hoop_on_profile.initial_state(model, -0.9, 0.3)
        return mb.simulate(model, q0, v0, 1.0, formulation="stabilized", energy_constraint=True, lam=1e3, method="RK2",
                           h=1e-4, n_out=101)

    robots = _robots()
    return {
        # seed 003 §8, Fig. 4 (4.6 m/s, lean rate 0.5 rad/s), over 10 s
        "bicycle": (lambda: bicycle.simulate_nonlinear(speed=4.6, roll_rate=0.5, t_end=10.0, n_out=1001),
                    "front_wheel", True),
        "solar panel": (lambda: solar_panels.deploy(t_end=3.0, n_out=301), "leaf2", False),
        "hoop": (hoop, "hoop", True),
        "panda": (lambda: _run_robot(robots / "panda_description/urdf/panda.urdf", False, 0.6), "panda_link7", False),
        "solo12": (lambda: _run_robot(robots / "solo_description/robots/solo12.urdf", True, 0.6), "FL_LOWER_LEG",
                   False),
    }


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """``exports(name)`` -> (Result, path of its page, body to follow, has contact points), made once."""
    out, made, runs = tmp_path_factory.mktemp("viewer"), {}, _runs()

    def export(name):
        if name in ("panda", "solo12") and _robots() is None:
            pytest.skip("example-robot-data is not installed (pip install example-robot-data)")
        if name not in made:
            make, body, contacts = runs[name]
            res = make()
            path = viewer.to_html(res, out / (name.replace(" ", "_") + ".html"))
            made[name] = (res, path, body, contacts)
            print(f"{name}: {path.stat().st_size / 1e6:.2f} MB, {len(res)} samples")
        return made[name]
    return export


# ------------------------------------------------------------------------------------------------ the page's data
def _page_data(text):
    payload = re.search(r'<script id="mb-data" type="application/json">(.*?)</script>', text, re.S).group(1)
    return json.loads(payload.replace("<\\/", "</"))


def _array(text, dtype, shape=(-1,)):
    return np.frombuffer(base64.b64decode(text), dtype=dtype).reshape(shape)


@pytest.fixture(scope="module")
def panel_run(exports):
    """The solar panel deploying (seed 001 §3.2.1) over 3 s, 301 samples."""
    return exports("solar panel")[0]


def test_page_carries_the_result(panel_run):
    """The frames are samples of the Result, thinned to 50 per second of motion; each body's origin is
    forward_kinematics' at that sample, bit for bit; the energies are the Result's."""
    res = panel_run
    data = _page_data(viewer.page(res))
    idx = np.array(data["samples"])
    assert len(idx) == 151 and idx[0] == 0 and idx[-1] == len(res) - 1
    assert np.array_equal(_array(data["times"], "<f8"), res.t[idx])
    poses = _array(data["poses"], "<f8", (len(idx), res.model.nbodies + 1, 7))
    for f in (0, 37, len(idx) - 1):
        K = mb.forward_kinematics(res.model, res.q[idx[f]])
        assert np.array_equal(poses[f, :, :3], K.p)
        assert np.max(np.abs(quat_to_matrix(poses[f, :, 3:]) - K.R)) < 1e-14        # the page's rotation formula
    assert np.array_equal(_array(data["energy"]["total"], "<f8"), res.energy["total"])
    assert data["bodies"] == ["ground", "leaf1", "leaf2"] and data["contacts"] is None
    few = _page_data(viewer.page(res, frame_rate=1000, max_frames=7))
    # 7 frames evenly over the rows: each within two output steps of its instant (each lock of a latch adds two
    # rows, which shift the even row indices by at most 2 · (number of locks ≤ 2) · k / 6 ≤ 2 rows)
    step = (res.t[-1] - res.t[0]) / 300
    target = np.linspace(res.t[0], res.t[-1], 7)
    assert len(few["samples"]) == 7 and np.abs(res.t[few["samples"]] - target).max() <= 2 * step + 1e-12
    one = _page_data(viewer.page(res.model, q=res.q[50]))            # a Model at one configuration
    assert one["samples"] == [0] and one["energy"] is None
    path = _page_data(viewer.page(res.model, q=res.q[:30]))          # configurations without times: each one
    assert path["samples"] == list(range(30)) and np.array_equal(_array(path["times"], "<f8"), np.arange(30) / 50)


def test_beams_are_drawn_as_their_centre_lines():
    """A beam's segments are one bending line: its root, each elastic joint's point and each element's frame, its tip
    (the tip frame's position, bit for bit up to float32), NaN after it; the elements' own inferred shapes are not
    drawn."""
    from multibody.systems import elastic

    model = elastic.flexible_pendulum(6)
    Q = np.zeros((3, model.nq))
    Q[:, 0] = (0.0, 0.6, 1.2)
    Q[2, 1:] = 0.1
    data = _page_data(viewer.page(model, q=Q))
    n = data["beams"]["npoints"]
    assert n == 2 * 6 + 1 + 1
    pts = _array(data["beams"]["points"], "<f4", (3, n, 3))
    for f in range(3):
        tip = mb.frame_placement(model, Q[f], "pendulum.tip")[1]
        assert np.abs(pts[f, -2] - tip).max() < 1e-6 and np.isnan(pts[f, -1]).all()
        assert np.abs(pts[f, 0]).max() < 1e-7                                     # the pin at the origin
        steps = np.linalg.norm(np.diff(pts[f, :-1], axis=0), axis=1)
        assert steps == pytest.approx(2.0 / 12, rel=1e-6)                         # half a segment each
    assert {m["body"] for m in data["meshes"]} <= {0}


def test_moving_base():
    """A ground that moves in a prescribed way (Kapitza's pendulum, seed 001 §3.1): the page moves body 0 as well."""
    a, W = 0.02, 2 * np.pi * 60.0
    model = pendulums.kapitza_pendulum(amplitude=a, omega=W)
    t = np.linspace(0.0, 0.02, 7)
    data = _page_data(viewer.page(model, q=np.linspace(0.1, -0.1, 7)[:, None], t=t, frame_rate=1000))
    poses = _array(data["poses"], "<f8", (7, 2, 7))
    assert np.max(np.abs(poses[:, 0, :3] - np.c_[0 * t, 0 * t, a * np.cos(W * t)])) < 1e-15
    with pytest.raises(ModelError, match="moving base"):
        viewer.page(model, q=[0.1])


def test_contact_points_of_the_bicycle_and_the_hoop(exports):
    """The bicycle's contact points (RollingDisc: lowest rim point) lie on the floor where
    ``bicycle_outputs`` puts them; the hoop's are on its rim, at the contact angle the stabilized run records."""
    res, path, _, _ = exports("bicycle")
    data = _page_data(path.read_text())
    idx = data["samples"]
    c = _array(data["contacts"], "<f8", (len(idx), 2, 3))
    assert np.max(np.abs(c[:, :, 2])) < 1e-9
    assert np.max(np.abs(c[:, 0, :2] - res.series["rear_contact_xy"][idx])) < 1e-12
    assert np.max(np.abs(c[:, 1, :2] - res.series["front_contact_xy"][idx])) < 1e-12
    run, path, _, _ = exports("hoop")
    data = _page_data(path.read_text())
    idx = data["samples"]
    c = _array(data["contacts"], "<f8", (len(idx), 1, 3))
    xa, za = hoop_on_profile.contact_point(run.model, run)
    assert np.max(np.abs(c[:, 0, 0] - xa[idx])) < 1e-14 and np.max(np.abs(c[:, 0, 2] - za[idx])) < 1e-14


def test_errors(panel_run, tmp_path, monkeypatch):
    loaded = mb.Result.load(panel_run.save(tmp_path / "run.npz"))
    with pytest.raises(ModelError, match="carries no model"):
        viewer.page(loaded)
    assert _page_data(viewer.page(loaded, model=panel_run.model))["samples"][-1] == len(panel_run) - 1
    with pytest.raises(ModelError, match="frame_rate"):
        viewer.page(panel_run, frame_rate=0)
    with pytest.raises(ModelError, match="Model or a Result"):
        viewer.page("panel")
    monkeypatch.setitem(sys.modules, "plotly.offline", None)
    with pytest.raises(ModelError, match=r"plotly \(pip install 'multibody\[viewer\]'\)"):
        viewer.page(panel_run)


def test_show_in_jupyter(panel_run, monkeypatch):
    """viz.show(result): the page in an iframe through IPython.display; without IPython a clear ModelError."""
    monkeypatch.setitem(sys.modules, "IPython", None)
    monkeypatch.setitem(sys.modules, "IPython.display", None)
    with pytest.raises(ModelError, match="needs IPython.*to_html"):
        viewer.show(panel_run)
    shown = []
    fake = types.ModuleType("IPython.display")
    fake.HTML = lambda data: types.SimpleNamespace(data=data)
    fake.display = shown.append
    monkeypatch.setitem(sys.modules, "IPython.display", fake)
    assert viewer.show(panel_run, frame_rate=5) is None
    assert len(shown) == 1 and shown[0].data.startswith('<iframe srcdoc="&lt;!DOCTYPE html&gt;')
    assert panel_run.show(frame_rate=5) is None                                 # Result.show: the same page
    assert shown[1].data == shown[0].data


def test_to_html_and_the_command_line(panel_run, tmp_path, capsys):
    from multibody.cli import main

    path = viewer.to_html(panel_run, tmp_path / "out" / "panel.html", frame_rate=10)
    text = path.read_text()
    assert text.startswith("<!DOCTYPE html>") and 'id="mb-plotly"' in text
    assert re.search(r"<(script|link)[^>]*\b(src|href)=", text) is None          # nothing fetched: self-contained
    npz = str(panel_run.save(tmp_path / "run.npz"))
    out = tmp_path / "cli.html"
    assert main(["animate", npz, "--model", "multibody.systems.solar_panels:solar_panel", "--html", str(out)]) == 0
    assert f"3-D view of {len(panel_run)} samples" in capsys.readouterr().out
    assert _page_data(out.read_text())["samples"] == _page_data(viewer.page(panel_run))["samples"]
    same = panel_run.to_html(tmp_path / "method.html", frame_rate=10)            # Result.to_html: the same file
    assert same.read_text() == text


# ------------------------------------------------------------------------------------------------ GIF length
def test_gif_length_follows_the_run(tmp_path):
    """Without ``frames`` a GIF plays the run in real time at ``fps``, at most 20 s of film."""
    from PIL import Image

    from multibody.viz import animate

    model = pendulums.simple_pendulum()
    for span, frames in ((3.0, 7), (60.0, 41)):
        t = np.linspace(0.0, span, 121)
        res = mb.Result(t, 0.5 * np.sin(t)[:, None], 0.5 * np.cos(t)[:, None], model=model)
        out = animate(res, tmp_path / "p.gif", fps=2, size=(80, 60))
        assert Image.open(out).n_frames == frames


# ------------------------------------------------------------------------------------------------ in a browser
def test_bicycle_file_size(exports):
    """The bicycle's 10 s run under 5 MB (it is about 2.3 MB, 2.0 MB of it plotly.js packed)."""
    assert exports("bicycle")[1].stat().st_size < 5e6


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=str(CHROMIUM), headless=True,
            viewport={"width": 640, "height": 480},                       # small: software WebGL draws fast
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield context
        context.close()


SYSTEMS = ["bicycle", "solar panel", "hoop", "panda", "solo12"]


@pytest.mark.parametrize("name", SYSTEMS)
def test_page_plays_in_a_browser(name, exports, browser, tmp_path):
    res, path, body, has_contacts = exports(name)
    page = browser.new_page()
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    started = time.monotonic()
    page.goto(path.as_uri())
    page.wait_for_function("window.multibodyViewer && window.multibodyViewer.ready", timeout=120_000)
    loaded = time.monotonic() - started
    probe = ("() => { const v = window.multibodyViewer, gd = document.getElementById('mb-scene');"
             f" const k = gd.data.findIndex((tr) => tr.name === {json.dumps(body)});"
             f" return [v.time(), v.sample(), v.bodyPosition({json.dumps(body)}), gd.data[k].x[0], v.frame(),"
             " v.shownFrame()]; }")
    t0, s0, p0, x0, _, _ = page.evaluate(probe)
    assert (t0, s0) == (res.t[0], 0)
    assert page.is_visible("#mb-contacts-label") == has_contacts
    page.click("#mb-play")
    page.wait_for_function("multibodyViewer.frame() >= 5", timeout=60_000)
    page.evaluate("multibodyViewer.pause()")            # (the button again would restart a run played to its end)
    page.wait_for_function("multibodyViewer.shownFrame() === multibodyViewer.frame()")
    t1, s1, p1, x1, f1, shown = page.evaluate(probe)
    assert f1 >= 5 and shown == f1 and t1 > t0 and t1 == res.t[s1]          # the page's time is a sample's
    K = mb.forward_kinematics(res.model, res.q[s1])
    assert np.max(np.abs(np.array(p1) - K.p[res.model.body_index(body)])) <= 1e-9
    assert p1 != p0 and x1 != x0                                          # the body and its drawing moved
    if name in ("bicycle", "solo12"):                                     # the toggles (each costs a redraw)
        page.check("#mb-frames")
        if has_contacts:
            page.check("#mb-contacts")
        shown_roles = page.evaluate("document.getElementById('mb-scene').data.filter((tr) => tr.visible === true)"
                                    ".map((tr) => tr.meta)")
        assert shown_roles.count("frames") == 3 and shown_roles.count("contacts") == has_contacts
    assert errors == [], errors
    if name == "solo12":                                                  # the figure of docs/viewer.md
        page.set_viewport_size({"width": 960, "height": 640})
        page.evaluate("Promise.all(['mb-scene', 'mb-energy'].map((id) => Plotly.Plots.resize(id)))")
        page.evaluate("multibodyViewer.seek(0.3)")
        page.wait_for_function("multibodyViewer.shownFrame() === multibodyViewer.frame()")
        shot = page.screenshot(path=str(tmp_path / "viewer.png"))
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000
        if os.environ.get("MULTIBODY_DOCS_IMG"):
            shutil.copy(tmp_path / "viewer.png", Path(os.environ["MULTIBODY_DOCS_IMG"]) / "viewer.png")
    page.close()
    print(f"{name}: {path.stat().st_size / 1e6:.2f} MB, ready in the browser in {loaded:.1f} s")
