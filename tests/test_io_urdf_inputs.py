"""The URDF reader on the inputs real robot files carry (issues 20 and 23): inertias with round-off, inertias that
no body has (kept with one warning naming each link, refused with strict=True, repaired with repair=True), the
root link's inertia where it is the ground, joint limits and axes, masses, mimic joints, mesh paths, visual and
collision elements with their materials, and each bad input as one line naming its place in the file."""
import warnings

import numpy as np
import pytest

import multibody as mb
from io_models import same_model
from multibody.cli import main
from multibody.errors import ConstraintError, InertiaWarning, MeshWarning, ModelError, ModelWarning
from multibody.io import ModelFileError, load, load_urdf, save_model
from multibody.model.inertia import inertia_defect


def robot(links="", joints="", extra=""):
    """A URDF: a base (the root), an arm on a hinge about y, and a hand fixed to the arm; ``links``, ``joints``
    and ``extra`` are added."""
    return f"""<?xml version="1.0"?>
<robot name="r">
  <material name="steel"><color rgba="0.5 0.5 0.6 1"/></material>
  <link name="base"/>
  <link name="arm">
    <inertial><origin xyz="0 0 -0.5"/><mass value="1.0"/>
      <inertia ixx="0.08" iyy="0.08" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><cylinder radius="0.05" length="1"/></geometry><material name="steel"/></visual>
    <collision><origin xyz="0 0 -0.5"/><geometry><box size="0.1 0.1 1"/></geometry></collision>
  </link>
  <link name="hand">
    <inertial><mass value="0.5"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
    <visual><geometry><sphere radius="0.06"/></geometry><material name="red"><color rgba="1 0 0 1"/></material></visual>
  </link>
  {links}
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/></joint>
  <joint name="wrist" type="fixed"><parent link="arm"/><child link="hand"/><origin xyz="0 0 -1" rpy="0 0 0.5"/></joint>
  {joints}
  {extra}
</robot>
"""


def _load(tmp_path, text, name="r.urdf", **kw):
    path = tmp_path / name
    path.write_text(text)
    return load_urdf(path, **kw), path


def _one_line(path, capsys, *args):
    assert main(["validate", *args, str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


CAMERA = """<link name="camera"><inertial><origin xyz="0.02 0 0"/><mass value="0.16"/>
      <inertia ixx="8.7e-6" iyy="6.7e-4" izz="1.37e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>"""
CAMERA_JOINT = """<joint name="camera_mount" type="fixed"><parent link="hand"/><child link="camera"/>
      <origin xyz="0.05 0 0"/></joint>"""


def test_inertias_that_no_body_has(tmp_path, capsys):
    """ANYmal C's camera: principal moments [8.7e-6, 6.7e-4, 1.37e-3] break the triangle inequality but leave the
    dynamics defined: loaded as written with ONE warning naming the link; strict=True refuses it, repair=True moves
    it to the nearest physical inertia and says how far; validate prints the warning, validate --strict fails."""
    text = robot(CAMERA, CAMERA_JOINT)
    with pytest.warns(InertiaWarning) as caught:
        model, path = _load(tmp_path, text)
    assert len(caught) == 1
    msg = str(caught[0].message)
    assert msg.startswith(f"{path}: 1 link inertia that no body has, kept as written") and "link 'camera': principal " \
        "moments [8.7e-06, 0.00067, 0.00137] violate the triangle inequality" in msg
    arm = model.bodies[0]
    parts = [(1.0, np.array([0, 0, -0.5]), np.diag([0.08, 0.08, 0.01])), (0.5, np.array([0, 0, -1.0]), 0.001 * np.eye(3))]
    R = mb.rotation_about((0, 0, 1), 0.5)
    parts.append((0.16, np.array([0, 0, -1.0]) + R @ np.array([0.07, 0, 0]),
                  R @ np.diag([8.7e-6, 6.7e-4, 1.37e-3]) @ R.T))
    m = sum(p[0] for p in parts)
    c = sum(p[0] * p[1] for p in parts) / m
    inertia = sum(p[2] + p[0] * ((p[1] - c) @ (p[1] - c) * np.eye(3) - np.outer(p[1] - c, p[1] - c)) for p in parts)
    assert arm.mass == pytest.approx(m, rel=1e-15)
    np.testing.assert_allclose(arm.inertia, inertia, rtol=0, atol=1e-15)   # kept as written, merged exactly
    with pytest.raises(ModelFileError, match=r"link\[@name='camera'\]/inertial/inertia: link 'camera': principal "
                                             r"moments \[8.7e-06, 0.00067, 0.00137\] violate the triangle inequality"):
        load_urdf(path, strict=True)
    with pytest.warns(InertiaWarning, match=r"moved to the nearest physical ones: link 'camera': .* repaired to "
                                            r"principal moments \[.*\], moved by [0-9.e-]+ kg m²"):
        repaired = load_urdf(path, repair=True)
    assert repaired.bodies[0].mass == arm.mass and not np.array_equal(repaired.bodies[0].inertia, arm.inertia)
    with pytest.raises(ModelError, match="choose one"):
        load_urdf(path, strict=True, repair=True)
    assert main(["validate", str(path)]) == 0
    captured = capsys.readouterr()
    assert f"{path}: warning: 1 link inertia that no body has" in captured.err and "valid" in captured.out
    line = _one_line(path, capsys, "--strict")
    assert line.startswith(f"{path}: link[@name='camera']/inertial/inertia: link 'camera': principal moments")
    # the camera is part of the arm's body, whose inertia is physical: the model file holds that body
    save_model(model, tmp_path / "r.yaml")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same_model(model, load(tmp_path / "r.yaml").model)
    # on a joint of its own the camera is a body that no body is: its model file says so (inertia_check: warn)
    path.write_text(text.replace('name="camera_mount" type="fixed"', 'name="camera_mount" type="continuous"'))
    with pytest.warns(InertiaWarning, match="link 'camera'"):
        model = load_urdf(path)
    save_model(model, tmp_path / "r.yaml")
    assert "inertia_check: warn" in (tmp_path / "r.yaml").read_text()
    with pytest.warns(InertiaWarning, match=r"r.yaml: 1 inertia that no body has, kept as written: body 'camera'"):
        same_model(model, load(tmp_path / "r.yaml").model)
    with pytest.raises(ModelFileError, match=r"bodies\[1\].inertia: body 'camera': principal moments"):
        load(tmp_path / "r.yaml", strict=True)


def test_round_off_and_the_root_link(tmp_path):
    """iCub's head (a point mass written with ixz = 2.4e-35) is accepted silently; a root link that becomes the
    ground is not read (Go1's base: 1e-6 kg and a rank-one tensor of 1e-6), and with a floating base it is."""
    head = robot().replace('<mass value="0.5"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/>',
                           '<origin xyz="0.0185 -0.1108 6.78454e-18"/><mass value="1.33687"/>'
                           '<inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="2.40741e-35" iyz="0"/>')
    go1_base = head.replace('<link name="base"/>', '<link name="base"><inertial><mass value="1e-6"/><inertia ixx="1e-6" '
                                                   'ixy="1e-6" ixz="1e-6" iyy="1e-6" iyz="1e-6" izz="1e-6"/></inertial>'
                                                   '</link>')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _load(tmp_path, head)
        model, path = _load(tmp_path, go1_base)
    assert model.frame("base").body_name == "ground"
    with pytest.warns(InertiaWarning, match=r"link 'base': principal moments \[.*, 3e-06\] violate the triangle"):
        free = load_urdf(path, floating_base=True)
    assert free.body_names[1] == "base" and free.mass[1] == 1e-6


def test_negative_moments_and_massless_links(tmp_path, capsys):
    """A negative moment: refused when it is the body's (its kinetic energy could be negative), kept with a warning
    when the link is a negligible part of a body (Tiago's 1 mg antennas); a massless link with a negative inertia
    is refused naming it (it was dropped silently); a massless link with inertia keeps it, as Pinocchio does."""
    antenna = """<link name="antenna"><inertial><mass value="0.000001"/><inertia ixx="0.00000002371"
      ixy="0.00000006119" ixz="0.00000001179" iyy="0.00000002833" iyz="0.00000000774" izz="0.00000003849"/>
      </inertial></link>"""
    mount = '<joint name="antenna_mount" type="fixed"><parent link="arm"/><child link="antenna"/></joint>'
    with pytest.warns(InertiaWarning, match="link 'antenna': inertia has a negative principal moment"):
        model, path = _load(tmp_path, robot(antenna, mount))
    assert inertia_defect(model.bodies[0].mass, model.bodies[0].com, model.bodies[0].inertia) is None
    bad = robot().replace('ixx="0.08" iyy="0.08" izz="0.01"', 'ixx="0.08" iyy="-0.5" izz="0.01"')
    path.write_text(bad)
    assert _one_line(path, capsys).startswith(
        f"{path}: link[@name='arm']/inertial: link 'arm' (the inertias of links arm, hand added): inertia has a "
        "negative principal moment")
    with pytest.warns(InertiaWarning, match="link 'arm'"):
        assert load_urdf(path, repair=True).nv == 1
    ghost = robot().replace('<mass value="0.5"/><inertia ixx="0.001"', '<mass value="0"/><inertia ixx="-0.001"')
    path.write_text(ghost)          # a massless link with a negative moment: not dropped, named (part of the arm)
    with pytest.warns(InertiaWarning, match=r"link 'hand': inertia has a negative principal moment \(principal "
                                            r"moments \[-0.001, 0.001, 0.001\]"):
        load_urdf(path)
    path.write_text(ghost.replace('name="wrist" type="fixed"', 'name="wrist" type="continuous"'))  # a body of its own
    assert _one_line(path, capsys).startswith(f"{path}: link[@name='hand']/inertial: link 'hand': inertia has a "
                                              "negative principal moment (principal moments [-0.001, 0.001, 0.001]")
    flywheel = robot().replace('<mass value="0.5"/>', '<mass value="0"/>')
    with pytest.warns(InertiaWarning, match="link 'hand': a body of mass 0 has a non-zero inertia"):
        model, _ = _load(tmp_path, flywheel)
    assert model.bodies[0].inertia[0, 0] == pytest.approx(0.08 + 0.001, rel=1e-15)   # (the arm's centre: no Steiner)
    for mass, what in (("1e-320", "mass 9.99989e-321 is below the smallest normal float"), ("-1", "mass must be >= 0")):
        path.write_text(robot().replace('<mass value="1.0"/>', f'<mass value="{mass}"/>'))
        assert _one_line(path, capsys).startswith(f"{path}: link[@name='arm']/inertial/mass/@value: link 'arm': {what}")


def test_limits_and_axes(tmp_path, capsys):
    """Limits with lower > upper or a negative effort, velocity, friction name the joint; a tiny axis is a
    direction (normalized after scaling), only a zero axis is refused, with its value."""
    path = tmp_path / "r.urdf"
    for limit, expected in (('lower="2" upper="-2" effort="10" velocity="3"',
                             "joint[@name='shoulder']/limit: joint 'shoulder': the lower limit 2.0 is above the upper "
                             "limit -2.0"),
                            ('lower="-2" upper="2" effort="-10" velocity="3"',
                             "joint[@name='shoulder']/limit/@effort: joint 'shoulder': the effort limit must be >= 0, "
                             "got -10.0"),
                            ('lower="-2" upper="2" effort="10" velocity="-3"',
                             "joint[@name='shoulder']/limit/@velocity: joint 'shoulder': the velocity limit must be >= "
                             "0, got -3.0")):
        path.write_text(robot().replace('lower="-2" upper="2" effort="10" velocity="3"', limit))
        assert _one_line(path, capsys) == f"{path}: {expected}"
    path.write_text(robot().replace('<axis xyz="0 1 0"/>', '<axis xyz="0 1e-200 0"/>'))
    assert load_urdf(path).joint("shoulder").joint.axis.tolist() == [0.0, 1.0, 0.0]
    path.write_text(robot().replace('<axis xyz="0 1 0"/>', '<axis xyz="3e-300 4e-300 0"/>'))
    assert load_urdf(path).joint("shoulder").joint.axis.tolist() == pytest.approx([0.6, 0.8, 0.0], rel=1e-15)
    assert mb.Revolute((0, 0, 1e-200)).axis.tolist() == [0.0, 0.0, 1.0]    # the builder's joints alike
    path.write_text(robot().replace('<axis xyz="0 1 0"/>', '<axis xyz="0 0 0"/>'))
    assert _one_line(path, capsys) == (f"{path}: joint[@name='shoulder']/axis/@xyz: joint 'shoulder': the axis must not "
                                       "be zero, got '0 0 0'")
    path.write_text(robot().replace('<axis xyz="0 1 0"/>', '<axis xyz="0 nan 1"/>'))
    assert "expected 3 finite numbers, got '0 nan 1'" in _one_line(path, capsys)


MIMIC = """<link name="finger"><inertial><origin xyz="0 0 -0.05"/><mass value="0.1"/>
      <inertia ixx="1e-4" iyy="1e-4" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>"""
MIMIC_JOINT = """<joint name="finger_joint" type="revolute"><parent link="hand"/><child link="finger"/>
      <axis xyz="0 1 0"/><mimic joint="{ref}" multiplier="-0.5" offset="0.1"/></joint>"""


def test_mimic_joints(tmp_path):
    """Followed with mimic=True as a constraint q = multiplier q_ref + offset (saved and loaded back as such); left
    free by default (Pinocchio's default) and kept as data; a mimic naming a missing joint is refused with
    mimic=True and left out with one warning otherwise."""
    model, path = _load(tmp_path, robot(MIMIC, MIMIC_JOINT.format(ref="shoulder")))
    assert model.metadata["mimic"] == {"finger_joint": {"joint": "shoulder", "multiplier": -0.5, "offset": 0.1}}
    assert not model.constraints and model.nv == 2
    # with its limits (stops) as well: a run across switches in the constrained formulation, its initial state
    # brought onto the mimic constraint (a q0 off it by more than max_correction is refused as in any constrained
    # run: the neutral q0 misses the offset by 0.1, the default max_correction)
    stops = load_urdf(path, mimic=True)
    with pytest.raises(ConstraintError, match="max_correction"):
        mb.simulate(stops, None, None, 0.5, formulation="constrained")
    run = mb.simulate(stops, [0.4, -0.5 * 0.4 + 0.1], [0.0, 0.0], 0.5, formulation="constrained")
    assert run.info["switching"] and max(float(np.max(np.abs(r))) for r in run.residuals.values()) < 1e-10
    assert np.all(run.q >= stops.lower_limits - 1e-9) and np.all(run.q <= stops.upper_limits + 1e-9)
    follow = load_urdf(path, mimic=True, limits=False)
    (c,) = follow.constraints
    assert c.name == "finger_joint_mimic"
    q = np.array([0.4, -0.5 * 0.4 + 0.1])
    assert c.f(q, 0.0).tolist() == [0.0] and c.jacobian(q, 0.0).tolist() == [[0.5, 1.0]]
    run = mb.simulate(follow, q, np.zeros(2), 0.5, formulation="constrained", method="RK4", h=1e-3)
    np.testing.assert_allclose(run.q[:, 1], -0.5 * run.q[:, 0] + 0.1, rtol=0, atol=1e-9)
    assert np.ptp(run.q[:, 0]) > 0.05                # it moves, and the finger follows
    for suffix in (".yaml", ".json"):
        save_model(follow, tmp_path / f"m{suffix}")
        back = load(tmp_path / f"m{suffix}").model
        same_model(follow, back)
        assert back.constraints[0].f(q, 0.0).tolist() == [0.0]
    path.write_text(robot(MIMIC, MIMIC_JOINT.format(ref="elbow")))
    with pytest.raises(ModelFileError, match=r"joint\[@name='finger_joint'\]/mimic/@joint: joint 'finger_joint' mimics "
                                             r"joint 'elbow', which is not defined"):
        load_urdf(path, mimic=True)
    with pytest.warns(ModelWarning, match="1 <mimic> element left out .*: joint 'finger_joint' mimics joint 'elbow', "
                                          "which is not defined"):
        assert load_urdf(path).nv == 2


def test_meshes_visuals_and_collisions(tmp_path):
    """Shapes become the Model's visual and collision elements on the bodies (merged links' on their body, at their
    placement), colours from inline or robot-level materials; package:// and relative mesh paths are resolved with
    package_dirs and the file's folder; a mesh that is not found is kept by name with one MeshWarning."""
    pkg = tmp_path / "share" / "my_robot" / "meshes"
    pkg.mkdir(parents=True)
    (pkg / "arm.stl").write_text("solid arm\nendsolid arm\n")
    (tmp_path / "local.stl").write_text("solid l\nendsolid l\n")
    extra = """<link name="tool"><visual><geometry><mesh filename="package://my_robot/meshes/arm.stl" scale="2 2 2"/>
      </geometry></visual><visual><geometry><mesh filename="local.stl"/></geometry></visual>
      <collision><geometry><mesh filename="package://my_robot/meshes/missing.stl"/></geometry></collision></link>"""
    tool = '<joint name="tool_mount" type="fixed"><parent link="hand"/><child link="tool"/><origin xyz="0 0 -0.1"/></joint>'
    with pytest.warns(MeshWarning, match="1 mesh file not found .*package://my_robot/meshes/missing.stl"):
        model, path = _load(tmp_path, robot(extra, tool), package_dirs=[tmp_path / "share"])
    vis = {v.name: v for v in model.visuals}
    assert list(vis) == ["arm_visual", "hand_visual", "tool_visual", "tool_visual_1"]
    assert vis["arm_visual"].shape == mb.Cylinder(0.05, 1.0) and vis["arm_visual"].color == (0.5, 0.5, 0.6, 1.0)
    assert vis["hand_visual"].color == (1.0, 0.0, 0.0, 1.0) and vis["hand_visual"].body_name == "arm"
    np.testing.assert_allclose(vis["hand_visual"].placement.translation, [0, 0, -1.0], rtol=0, atol=0)
    assert vis["tool_visual"].shape.filename == str((pkg / "arm.stl").resolve())
    assert vis["tool_visual"].shape.scale == (2.0, 2.0, 2.0)
    assert vis["tool_visual_1"].shape.filename == str((tmp_path / "local.stl").resolve())
    np.testing.assert_allclose(vis["tool_visual"].placement.translation, [0, 0, -1.1], rtol=0, atol=1e-15)
    cols = {c.name: c for c in model.collisions}
    assert cols["arm_collision"].shape == mb.Box((0.1, 0.1, 1.0)) and cols["arm_collision"].friction == 1.0
    assert cols["tool_collision"].shape.filename == "package://my_robot/meshes/missing.stl"
    assert model.frame("tool").body_name == "arm" and model.frame("hand").body_name == "arm"
    assert model.frame("base").body_name == "ground"
    # without package_dirs, package:// names are kept as written (not looked for: no warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain = load_urdf(path)
    assert plain.visuals[2].shape.filename == "package://my_robot/meshes/arm.stl"
    # saved and loaded back: frames, visuals, collisions and colours, in YAML and JSON; the schema accepts them
    import jsonschema

    for suffix in (".yaml", ".json"):
        save_model(model, tmp_path / f"r{suffix}")
        back = load(tmp_path / f"r{suffix}").model
        same_model(model, back)
    jsonschema.Draft202012Validator(mb.io.schema()).validate(mb.io.model_to_dict(model))
