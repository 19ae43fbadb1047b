"""The unilateral elements of a Model (multibody.model.unilateral): joint limits with restitution, latches,
releases — from the builder, model files and URDF — and the structure after a separation
(multibody.switching.restructure)."""
import importlib.metadata
import math
from pathlib import Path

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError
from multibody.io import load_text, save_model, validate_file
from multibody.io.documents import ModelFileError


def _arm():
    b = mb.ModelBuilder(name="arm")
    b.add_body("base", mass=2.0, com=(0, 0, 0.1), inertia=np.diag([0.02, 0.02, 0.01]))
    b.add_body("link", mass=1.0, com=(0.2, 0, 0), inertia=np.diag([0.01, 0.02, 0.02]))
    b.add_body("ball", mass=0.5, com=(0.0, 0, -0.1), inertia=np.diag([0.001] * 3))
    b.add_joint("slide", mb.Planar(), "ground", "base", limits=([-1.0, -np.inf, -0.5], [1.0, 2.0, np.inf]),
                restitution=[0.2, 0.0, 0.4])
    b.add_joint("hinge", mb.Revolute(axis=(0, 0, 1)), "base", "link", placement=((np.eye(3)), (0, 0, 0.2)),
                limits=(-1.5, 1.5), restitution=1.0, latch=1.2)
    b.add_joint("wrist", mb.Spherical(), "link", "ball", placement=(np.eye(3), (0.4, 0, 0)), release=2.5)
    return b.build()


def test_limits_per_coordinate_of_q():
    """lower_limits and upper_limits: one entry per entry of q, ±inf where there is no stop (a side left open, the
    quaternion of the spherical joint); the elements carry their indices in q and v."""
    model = _arm()
    assert model.nq == 3 + 1 + 4
    np.testing.assert_array_equal(model.lower_limits, [-1.0, -np.inf, -0.5, -1.5] + [-np.inf] * 4)
    np.testing.assert_array_equal(model.upper_limits, [1.0, 2.0, np.inf, 1.5] + [np.inf] * 4)
    u = model.unilateral
    assert [lm.name for lm in u.limits] == ["slide.x", "slide.y", "slide.angle", "hinge.angle"]
    assert [lm.restitution for lm in u.limits] == [0.2, 0.0, 0.4, 1.0]
    assert [(la.name, la.value, la.q_index) for la in u.latches] == [("hinge.angle", 1.2, 3)]
    assert [(r.joint, r.at, r.mode) for r in u.releases] == [("wrist", 2.5, "separate")]
    assert bool(u)


def test_a_model_without_elements():
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_joint("j", mb.Revolute(), "ground", "rod")
    model = b.build()
    assert not model.unilateral
    assert model.lower_limits.tolist() == [-np.inf] and model.upper_limits.tolist() == [np.inf]


@pytest.mark.parametrize("kwargs, message", [
    (dict(limits=(0.5, -0.5)), "joint 'j', coordinate 'angle': the lower limit 0.5 is above the upper limit -0.5"),
    (dict(limits=(-1.0, 1.0), restitution=-0.1), r"restitution must be in \[0, 1\], got -0.1"),
    (dict(restitution=0.5), "give limits=\\(lower, upper\\) too"),
    (dict(limits=(-1.0, 1.0), latch=-3.0), "latch value -3.0 is outside the limits"),
    (dict(latch=math.inf), "latch value must be finite"),
    (dict(limits=(np.inf, np.inf)), "leave no room"),
    (dict(limits=3.0), "limits must be a pair"),
    (dict(release={"at": 1.0, "mode": "explode"}), "release mode must be one of separate, unlock"),
    (dict(release="soon"), "release time must be a number"),
])
def test_bad_elements_name_the_joint(kwargs, message):
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    with pytest.raises(ModelError, match=message) as err:
        b.add_joint("j", mb.Revolute(), "ground", "rod", **kwargs)
    assert err.value.element == "joint 'j'"


def test_elements_a_joint_type_cannot_take():
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    with pytest.raises(ModelError, match="joint 'f': a Free joint has quaternion coordinates"):
        b.add_joint("f", mb.Free(), "ground", "rod", latch=0.0)
    with pytest.raises(ModelError, match="joint 'w': a Fixed joint has no coordinates"):
        b.add_joint("w", mb.Fixed(), "ground", "rod", limits=(0, 1))
    with pytest.raises(ModelError, match="a Fixed joint has no coordinates to unlock"):
        b.add_joint("w", mb.Fixed(), "ground", "rod", release={"at": 1.0, "mode": "unlock"})
    b.add_joint("j", mb.Revolute(), "ground", "rod", release=1.0)
    b.add_release("j", 2.0)
    with pytest.raises(ModelError, match="joint 'j' is released twice"):
        b.build()


YAML = """
name: stops
gravity: [0, 0, -9.81]
bodies:
  - {name: a, mass: 1.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}
  - {name: b, mass: 0.5, com: [0, 0, -0.3], inertia: [0.02, 0.02, 0.01]}
  - {name: c, mass: 0.2, com: [0.1, 0, 0], inertia: [0.01, 0.01, 0.01]}
joints:
  - {name: shoulder, type: revolute, axis: [0, 1, 0], parent: ground, child: a,
     limits: {lower: -pi/4, upper: pi/2, effort: 10}, restitution: 0.3}
  - {name: elbow, type: revolute, axis: [0, 1, 0], parent: a, child: b, placement: {translation: [0, 0, -1]},
     limits: {upper: 0.5}, latch: 0.25}
  - {name: clamp, type: revolute, axis: [0, 0, 1], parent: b, child: c, release: {at: 0.7, mode: unlock}}
"""


def test_model_file_keys_and_round_trip(tmp_path):
    """limits (lower, upper: the stops), restitution, latch and release keys of a model file; a saved model loads
    with the same elements, and with the same packed arrays."""
    from io_models import same_model

    mf = load_text(YAML)
    u = mf.model.unilateral
    assert [(lm.name, lm.lower, lm.upper, lm.restitution) for lm in u.limits] == [
        ("shoulder.angle", -math.pi / 4, math.pi / 2, 0.3), ("elbow.angle", -math.inf, 0.5, 0.0)]
    assert [(la.name, la.value) for la in u.latches] == [("elbow.angle", 0.25)]
    assert [(r.joint, r.at, r.mode) for r in u.releases] == [("clamp", 0.7, "unlock")]
    assert mf.model.metadata["limits"]["shoulder"]["effort"] == 10
    for suffix in (".yaml", ".json"):
        path = save_model(mf.model, tmp_path / f"m{suffix}")
        same_model(mf.model, load_text(path.read_text(), suffix).model)


@pytest.mark.parametrize("change, message", [
    ("limits: {lower: -pi/4, upper: pi/2, effort: 10}", None),
    ("limits: {lower: 1, upper: 0}", "lower limit 1.* is above the upper limit 0"),
    ("limits: {lower: -1, upper: 1}, restitution: 2", r"restitution must be in \[0, 1\]"),
    ("limits: {lower: -1, upper: 1}, latch: 3", "latch value 3.0 is outside the limits"),
    ("release: {at: 1, mode: later}", "release"),
])
def test_validate_checks_the_elements(tmp_path, change, message):
    text = YAML.replace("limits: {lower: -pi/4, upper: pi/2, effort: 10}, restitution: 0.3", change)
    path = tmp_path / "m.yaml"
    path.write_text(text)
    problems = validate_file(path)
    if message is None:
        assert problems == []
        return
    assert problems and any(__import__("re").search(message, str(p)) for p in problems), problems
    assert any("shoulder" in str(p) or "joints[0]" in str(p) for p in problems)
    with pytest.raises(ModelFileError):
        load_text(text)


def _panda():
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("example-robot-data is not installed")
    return Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots/panda_description/urdf/panda.urdf"))


def test_urdf_limits_are_stops_by_default():
    """A URDF's <limit lower upper> of revolute and prismatic joints are the model's stops (plastic); limits=False
    keeps them as data only."""
    from multibody.io.urdf import load_urdf

    path = _panda()
    model = load_urdf(path)
    meta = model.metadata["limits"]
    for j in model.joints[1:]:
        k = j.q_slice.start
        assert model.lower_limits[k] == meta[j.name]["lower"] and model.upper_limits[k] == meta[j.name]["upper"]
    assert all(lm.restitution == 0.0 for lm in model.unilateral.limits)
    free = load_urdf(path, limits=False)
    assert not free.unilateral and free.metadata["limits"] == meta


def test_limits_kept_as_data_round_trip(tmp_path):
    """A model whose limits are data only (``metadata``; e.g. a URDF read with limits=False) is written with
    ``stops: false`` and read back without stops; one with stops is read back with them."""
    from io_models import same_model
    from multibody.io.urdf import load_urdf

    path = _panda()
    for model in (load_urdf(path, limits=False), load_urdf(path)):
        saved = save_model(model, tmp_path / "panda.yaml")
        same_model(model, load_text(saved.read_text()).model)


def test_urdf_continuous_joints_have_no_stops():
    from multibody.io.urdf import parse_urdf

    text = """<robot name="r">
      <link name="base"/>
      <link name="wheel"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
      </inertial></link>
      <link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>
      </inertial></link>
      <joint name="spin" type="continuous"><parent link="base"/><child link="wheel"/><axis xyz="0 0 1"/>
        <limit effort="5" velocity="3"/></joint>
      <joint name="lift" type="prismatic"><parent link="wheel"/><child link="arm"/><axis xyz="0 0 1"/>
        <limit lower="0" upper="0.3" effort="5" velocity="3"/></joint>
    </robot>"""
    model = parse_urdf(text)
    assert model.lower_limits.tolist() == [-np.inf, 0.0] and model.upper_limits.tolist() == [np.inf, 0.3]


def test_separated_model_structure():
    """The structure after a separation: the released joint is a Free joint from the ground to the same child,
    everything else as it was (the child's own joints and elements included); the other releases are kept."""
    from multibody.switching.restructure import free_joint_names, separated_model

    model = _arm()
    sep = separated_model(model, "wrist")
    j = sep.joint("wrist")
    assert isinstance(j.joint, mb.Free) and j.parent == 0 and sep.body_names[j.child] == "ball"
    assert sep.nq == model.nq - 4 + 7 and sep.nv == model.nv - 3 + 6
    assert [lm.name for lm in sep.unilateral.limits] == [lm.name for lm in model.unilateral.limits]
    assert sep.unilateral.latches == model.unilateral.latches and not sep.unilateral.releases
    assert free_joint_names("wrist")[0] == [n for n in sep.coordinate_names() if n.startswith("wrist.")]
    with pytest.raises(ModelError, match="no joint 'nope'"):
        separated_model(model, "nope")
