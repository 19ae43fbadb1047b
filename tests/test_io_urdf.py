"""URDF import against Pinocchio's own URDF parser (pin.buildModelFromUrdf) on the same files: ABA, RNEA and the
mass matrix agree to 1e-10 relative (about 450 eps: round-off of two O(N) recursions over a few tens of bodies;
measured ≈ 1e-12), coordinates matched by joint name (multibody.bench.urdf.pinocchio_state: Pinocchio's quaternion
(x, y, z, w), free-flyer velocity [v; ω], continuous joints (cos θ, sin θ), planar velocity in the child frame).
Also: the 30-joint humanoid of the benchmark (floating base), what the importer keeps as data (limits, visuals,
merged frames), the planar joint's axis, and problems reported with their place in the file."""
import numpy as np
import pytest

import multibody as mb
from multibody.model.rotations import rpy_matrix
from io_models import same_model
from multibody.bench.urdf import humanoid_urdf, pinocchio_agreement, pinocchio_state
from multibody.cli import main
from multibody.io import ModelFileError, load, load_urdf, save_model

TOL = 1e-10

ROBOT = """<?xml version="1.0"?>
<robot name="test_robot">
  <link name="base">
    <inertial><origin xyz="0.01 0.02 0.03" rpy="0.1 0.2 0.3"/><mass value="3.0"/>
      <inertia ixx="0.05" ixy="0.001" ixz="-0.002" iyy="0.06" iyz="0.003" izz="0.07"/></inertial>
  </link>
  <link name="world_frame"/>
  <link name="l1">
    <inertial><origin xyz="0.1 0 -0.05" rpy="0.5 -0.3 1.2"/><mass value="1.5"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.025"/></inertial>
    <visual><origin xyz="0 0 0.1" rpy="0 1.57 0"/><geometry><cylinder radius="0.05" length="0.4"/></geometry></visual>
  </link>
  <link name="l1_cover">
    <inertial><origin xyz="0 0.05 0" rpy="0.2 0 0"/><mass value="0.4"/>
      <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.006"/></inertial>
  </link>
  <link name="l2">
    <inertial><origin xyz="0 0 -0.2" rpy="0 0 0"/><mass value="1.0"/>
      <inertia ixx="0.01" ixy="0.0005" ixz="0" iyy="0.012" iyz="0" izz="0.008"/></inertial>
  </link>
  <link name="l3">
    <inertial><origin xyz="0.05 0 0" rpy="0 0.4 0"/><mass value="0.8"/>
      <inertia ixx="0.006" ixy="0" ixz="0" iyy="0.007" iyz="0" izz="0.005"/></inertial>
  </link>
  <link name="l4">
    <inertial><mass value="0.5"/><inertia ixx="0.002" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.003"/></inertial>
    <visual><geometry><mesh filename="package://test_robot/meshes/l4.dae" scale="1 1 1"/></geometry></visual>
  </link>
  <link name="l5">
    <inertial><mass value="0.6"/><inertia ixx="0.003" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.005"/></inertial>
  </link>
  <link name="l6">
    <inertial><origin xyz="0.02 0 0.01" rpy="0 0 0.7"/><mass value="0.7"/>
      <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.005" iyz="0" izz="0.004"/></inertial>
  </link>
  <link name="tool"/>
  <joint name="to_frame" type="fixed"><parent link="base"/><child link="world_frame"/>
    <origin xyz="0 0 0.5" rpy="0 0 0"/></joint>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.2" rpy="0.3 0 0.1"/><axis xyz="0 1 0"/>
    <limit lower="-1.5" upper="1.5" effort="40" velocity="3"/><dynamics damping="0.2" friction="0.1"/></joint>
  <joint name="cover" type="fixed"><parent link="l1"/><child link="l1_cover"/>
    <origin xyz="0.2 0 0" rpy="0 0.5 0"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0" rpy="0 0 0"/><axis xyz="0.6 0 0.8"/></joint>
  <joint name="j3" type="prismatic"><parent link="l2"/><child link="l3"/>
    <origin xyz="0 0 -0.4" rpy="0 0.2 0"/><axis xyz="1 0 0"/>
    <limit lower="-0.1" upper="0.3" effort="100" velocity="0.5"/></joint>
  <joint name="j4" type="prismatic"><parent link="l1_cover"/><child link="l4"/>
    <origin xyz="0 0.1 0" rpy="0 0 0"/><axis xyz="0 1 1"/>
    <limit lower="-0.2" upper="0.2" effort="50" velocity="0.4"/></joint>
  <joint name="j5" type="floating"><parent link="l3"/><child link="l5"/>
    <origin xyz="0.1 0 0" rpy="0.1 0.2 0.3"/></joint>
  <joint name="j6" type="planar"><parent link="base"/><child link="l6"/>
    <origin xyz="-0.3 0 0" rpy="0 0 0.4"/><axis xyz="0 0 1"/></joint>
  <joint name="tool_joint" type="fixed"><parent link="l5"/><child link="tool"/>
    <origin xyz="0 0 -0.1"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def pin():
    return pytest.importorskip("pinocchio")


def _write(tmp_path, text, name="robot.urdf"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("floating_base", [False, True])
def test_every_joint_type_against_pinocchio(tmp_path, pin, floating_base):
    path = _write(tmp_path, ROBOT)
    model = load_urdf(path, floating_base=floating_base)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer()) if floating_base else \
        pin.buildModelFromUrdf(str(path))
    assert sorted(pm.names[1:]) == sorted(model.joint_names[1:])
    assert model.nv == pm.nv
    diff = pinocchio_agreement(model, pm, np.random.default_rng(1), samples=5)
    assert max(diff.values()) < TOL, diff
    # the fixed links are merged into their parents' bodies and kept as frames on them, at Pinocchio's placements
    assert "l1_cover" not in model.body_names and "tool" not in model.body_names
    assert model.frame("l1_cover").body_name == "l1" and model.frame("tool").body_name == "l5"
    assert model.frame("world_frame").body_name == ("base" if floating_base else "ground")
    assert model.frame("base").body_name == ("base" if floating_base else "ground")
    same_frames_as_pinocchio(model, pm, pin, np.random.default_rng(4))


def same_frames_as_pinocchio(model, pm, pin, rng, atol=1e-12):
    """Every frame of the URDF's links (bodies and merged links) placed where Pinocchio places its frame of that
    name (``oMf``), at a random configuration: forward kinematics round-off over a few bodies (~1e-15)."""
    q = model.random_configuration(rng, scale=1.5)
    qp, _, _ = pinocchio_state(model, pm, q)
    pd = pm.createData()
    pin.framesForwardKinematics(pm, pd, qp)
    kin = mb.forward_kinematics(model, q)
    names = [f.name for f in model.frames] + [n for n in model.body_names[1:]]
    for name in names:
        f = model.frame(name)
        R = kin.R[f.body] @ f.placement.rotation
        p = kin.R[f.body] @ f.placement.translation + kin.p[f.body]
        oMf = pd.oMf[pm.getFrameId(name)]
        np.testing.assert_allclose(R, oMf.rotation, rtol=0, atol=atol, err_msg=name)
        np.testing.assert_allclose(p, oMf.translation, rtol=0, atol=atol, err_msg=name)
    return names


def test_the_humanoid_against_pinocchio(tmp_path, pin):
    """The 30-joint humanoid of `multibody bench` (floating base): 31 bodies, agreement to 1e-10."""
    path = _write(tmp_path, humanoid_urdf(), "humanoid30.urdf")
    model = load_urdf(path, floating_base=True)
    pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    assert (model.nbodies, model.nq, model.nv, pm.nv) == (31, 37, 36, 36)
    diff = pinocchio_agreement(model, pm, np.random.default_rng(2), samples=3)
    assert max(diff.values()) < TOL, diff
    # names from the file: every velocity coordinate maps to Pinocchio's by name
    q = model.random_configuration(np.random.default_rng(3))
    qp, T, _ = pinocchio_state(model, pm, q)
    for jid in range(2, pm.njoints):
        j = model.joint(pm.names[jid])
        assert model.velocity_names()[j.v_slice.start] == f"{pm.names[jid]}.angle"
        assert T[pm.joints[jid].idx_v, j.v_slice.start] == 1.0
    # the free-flyer: Pinocchio's (x, y, z, qx, qy, qz, qw) and [v; ω] are our (x, y, z, qw, qx, qy, qz), [ω; v]
    np.testing.assert_array_equal(qp[:7], q[[0, 1, 2, 4, 5, 6, 3]])
    pd = pm.createData()
    pin.forwardKinematics(pm, pd, qp)
    kin = mb.forward_kinematics(model, q)
    for name in ("left_foot", "head", "right_hand"):
        jid = pm.frames[pm.getFrameId(name)].parentJoint
        np.testing.assert_allclose(pd.oMi[jid].translation, kin.p[model.body_index(name)], rtol=0, atol=1e-13)
        np.testing.assert_allclose(pd.oMi[jid].rotation, kin.R[model.body_index(name)], rtol=0, atol=1e-13)


def test_what_the_importer_keeps(tmp_path):
    path = _write(tmp_path, humanoid_urdf(), "humanoid30.urdf")
    model = load_urdf(path, floating_base=True)
    assert model.joint_names[1] == "root_joint" and model.name == "humanoid30"
    md = model.metadata
    assert md["limits"]["left_knee_joint"] == {"lower": -2.0, "upper": 2.0, "effort": 150.0, "velocity": 8.0,
                                              "friction": 0.05}
    assert md["limits"]["left_wrist_roll_joint"] == {"effort": 20.0, "velocity": 10.0, "friction": 0.05}  # continuous
    # visual and collision elements on the bodies (the fingers' are on the hand, where their link is merged)
    hand = [v for v in model.visuals if v.body_name == "left_hand"]
    assert [v.name for v in hand] == ["left_hand_visual", "left_fingers_visual"]
    assert hand[0].shape == mb.Mesh("package://humanoid30_description/meshes/left_hand.stl", (0.001,) * 3)
    assert hand[0].color == (0.6, 0.6, 0.6, 1.0)
    fingers = model.frame("left_fingers")
    assert np.array_equal(hand[1].placement.translation, fingers.placement.translation)
    boxes = {c.name: c for c in model.collisions}
    assert boxes["left_fingers_collision"].shape == mb.Box((0.03, 0.08, 0.06))
    assert boxes["left_fingers_collision"].body_name == "left_hand"
    assert {f.name for f in model.frames} == {"imu_link", "backpack", "chest_camera", "camera_link", "left_fingers",
                                              "right_fingers", "left_tool_frame", "right_tool_frame", "left_sole",
                                              "right_sole"}
    # the dampers act in simulations (dof_damping); Pinocchio's and our ABA leave them out
    assert np.all(model.dof_damping[6:] == 0.1) and np.all(model.dof_damping[:6] == 0)
    # a URDF model is saved as a model file and read back identically, frames and shapes included
    for suffix in (".yaml", ".json"):
        save_model(model, tmp_path / f"humanoid{suffix}")
        same_model(model, load(tmp_path / f"humanoid{suffix}").model)
    # the total mass is the sum of the links' masses (merged ones included)
    assert model.mass[1:].sum() == pytest.approx(8 + 1 + 15 + 0.4 + 3.5 + 2 * (0.8 + 0.6 + 2 + 1.2 + 0.3 + 0.2 + 0.5)
                                                 + 2 * (1 + 1.2 + 7 + 4 + 0.4 + 1.2) + 2.0 + 0.15 + 2 * 0.2,
                                                 rel=1e-15)


def test_planar_joint_moves_in_the_plane_normal_to_its_axis(tmp_path):
    """URDF: 'planar — motion in a plane perpendicular to the axis' (Pinocchio reads every planar joint in the
    joint frame's xy plane; for another axis we follow the URDF specification)."""
    text = ROBOT.replace('<origin xyz="-0.3 0 0" rpy="0 0 0.4"/><axis xyz="0 0 1"/>',
                         '<origin xyz="-0.3 0 0" rpy="0 0 0.4"/><axis xyz="1 0 0"/>')
    model = load_urdf(_write(tmp_path, text))
    j = model.joint("j6")
    q = model.neutral()
    q0 = mb.forward_kinematics(model, q)
    i = model.body_index("l6")
    q[j.q_slice] = (0.3, -0.2, 0.9)
    kin = mb.forward_kinematics(model, q)
    Rj = rpy_matrix(0, 0, 0.4)                  # the joint frame (the base is the ground)
    axis = Rj @ np.array([1.0, 0, 0])
    move = kin.p[i] - q0.p[i]
    assert abs(move @ axis) < 1e-15 and np.linalg.norm(move) == pytest.approx(np.hypot(0.3, 0.2), rel=1e-15)
    np.testing.assert_allclose(kin.R[i] @ q0.R[i].T, mb.rotation_about(axis, 0.9), rtol=0, atol=1e-15)


BAD = [
    (ROBOT.replace('<child link="l2"/>', '<child link="l9"/>'), "joint[@name='j2']/child: joint 'j2': the child "
                                                                "link 'l9' is not defined"),
    (ROBOT.replace('<mass value="0.7"/>', '<mass value="0"/>'),
     "link[@name='l6']: body 'l6' on joint 'j6' makes the mass matrix singular: the bodies it carries have no inertia "
     "for its motion (D = Sᵀ I^A S has eigenvalues [0, 0, 0.004]"),
    (ROBOT.replace('<mass value="0.7"/>', '<mass value="0"/>').replace('ixx="0.004" ixy="0" ixz="0" iyy="0.005" '
                                                                      'iyz="0" izz="0.004"', ''),
     "link[@name='l6']: link 'l6' has no mass (no <inertial> with a mass or inertia, nor links it carries"),
    (ROBOT.replace('ixx="0.006" ixy="0" ixz="0" iyy="0.007"', 'ixx="-0.001" ixy="0" ixz="0" iyy="0.001"'),
     "link[@name='l3']/inertial: link 'l3': inertia has a negative principal moment (principal moments [-0.001, "),
    (ROBOT.replace('type="prismatic"><parent link="l2"/>', 'type="slider"><parent link="l2"/>'),
     "joint[@name='j3']/@type: joint 'j3': the type 'slider' is not one of revolute, continuous"),
    (ROBOT.replace('<axis xyz="1 0 0"/>\n    <limit lower="-0.1"', '<axis xyz="0 0 0"/>\n    <limit lower="-0.1"'),
     "joint[@name='j3']/axis/@xyz: joint 'j3': the axis must not be zero, got '0 0 0'"),
    (ROBOT.replace('<origin xyz="0 0 0.2" rpy="0.3 0 0.1"/>', '<origin xyz="0 0 two" rpy="0.3 0 0.1"/>'),
     "joint[@name='j1']/origin/@xyz: expected 3 numbers, got '0 0 two'"),
    (ROBOT.replace('<child link="world_frame"/>', '<child link="l1"/>'),
     "joint[@name='j1']/child: link 'l1' is already the child of joint 'to_frame'"),
    (ROBOT.replace('<robot name="test_robot">', '<!DOCTYPE r [<!ENTITY a "aaaa">]>\n<robot name="test_robot">'),
     "(file): a URDF file needs no document type definition"),
    ('<xacro:robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><xacro:macro name="m"/></xacro:robot>',
     "/{http://www.ros.org/wiki/xacro}robot: the root element of a URDF file is <robot> (a xacro file?"),
]


@pytest.mark.parametrize("text, expected", BAD, ids=[b[1].split(":")[0] for b in BAD])
def test_problems_of_a_urdf_file(tmp_path, capsys, text, expected):
    path = _write(tmp_path, text)
    with pytest.raises(ModelFileError):
        load_urdf(path)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: {expected}"), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
