"""Inputs that were accepted in silence and meant something else are refused, each with one line naming the element:

* ``limits=(nan, nan)`` in the builder (NaN meant "no stop"; model files refused it already): None or ±inf is "no
  stop", NaN an error — a latch value of NaN still means "no latch", as documented;
* joints that mimic one another in a cycle (j1 ↔ j2, j1 → j2 → j3 → j1), in a URDF (refused with ``mimic=True``,
  left out with one warning otherwise) and in a model file: in a cycle no joint moves by itself;
* a ``package://`` mesh name that leaves its package's folder (``..`` up and out, or a link inside the package that
  points outside it), with or without ``package_dirs``.
"""
import math
import os

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError, ModelWarning
from multibody.io.documents import ModelFileError
from multibody.io import load_text
from multibody.io.urdf import parse_urdf

INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial>'


def robot(mesh="package://robot/meshes/a.stl", mimics=("", "", "")):
    """Three revolute joints j1, j2, j3 in a chain, link a with a mesh, ``mimics`` the <mimic> of each joint."""
    joints = "".join(
        f'<joint name="j{k + 1}" type="revolute"><parent link="{p}"/><child link="{c}"/><axis xyz="0 0 1"/>'
        f'<limit lower="-1" upper="1" effort="1" velocity="1"/>{m}</joint>'
        for k, (p, c, m) in enumerate(zip(("base", "a", "b"), ("a", "b", "c"), mimics)))
    return (f'<robot name="r"><link name="base"/><link name="a">{INERTIAL}<visual><geometry><mesh filename="{mesh}"/>'
            f'</geometry></visual></link><link name="b">{INERTIAL}</link><link name="c">{INERTIAL}</link>{joints}'
            '</robot>')


def test_nan_limits_are_refused_by_the_builder():
    b = mb.ModelBuilder()
    b.add_body("l", mass=1.0, com=(0, 0, 0), inertia=(1, 1, 1))
    for limits in ((math.nan, math.nan), (math.nan, 1.0), (-1.0, [math.nan])):
        with pytest.raises(ModelError, match=r"joint 'j': the (lower|upper) limit must be a number, ±inf or None "
                                             r"\(no stop\), got nan") as err:
            b.add_joint("j", mb.Revolute(axis=(0, 0, 1)), "ground", "l", limits=limits)
        assert err.value.element == "joint 'j'"
    with pytest.raises(ModelError, match="the restitution must be a number, got nan"):
        b.add_joint("j", mb.Revolute(axis=(0, 0, 1)), "ground", "l", limits=(-1, 1), restitution=math.nan)
    b.add_joint("j", mb.Revolute(axis=(0, 0, 1)), "ground", "l", limits=(None, 1.0), latch=math.nan)
    model = b.build()
    assert model.lower_limits.tolist() == [-np.inf] and model.upper_limits.tolist() == [1.0]
    assert not model.unilateral.latches


@pytest.mark.parametrize("mimics, cycle", [
    (('<mimic joint="j2"/>', '<mimic joint="j1"/>', ""), "'j1' → 'j2' → 'j1'"),
    (('<mimic joint="j2"/>', '<mimic joint="j3"/>', '<mimic joint="j1"/>'), "'j1' → 'j2' → 'j3' → 'j1'"),
], ids=["two", "three"])
def test_mimic_cycles_in_a_urdf(mimics, cycle):
    text = robot(mimics=mimics)
    with pytest.raises(ModelFileError, match=rf"joint\[@name='j1'\]/mimic/@joint: joints {cycle} mimic one another "
                                             "in a cycle: none of them moves by itself"):
        parse_urdf(text, mimic=True)
    n = cycle.count("→")
    with pytest.warns(ModelWarning, match=f"{n} <mimic> elements left out .*: joints {cycle} mimic one another"):
        model = parse_urdf(text)
    assert model.nv == 3 and "mimic" not in model.metadata


def test_a_mimic_chain_without_a_cycle_is_followed():
    model = parse_urdf(robot(mimics=("", '<mimic joint="j1"/>', '<mimic joint="j2"/>')), mimic=True, limits=False)
    assert [c.name for c in model.constraints] == ["j2_mimic", "j3_mimic"]


def test_mimic_cycles_in_a_model_file():
    text = """name: cycle
bodies:
  - {name: a, mass: 1.0, com: [0, 0, 0], inertia: [0.1, 0.1, 0.1]}
  - {name: b, mass: 1.0, com: [0, 0, 0], inertia: [0.1, 0.1, 0.1]}
joints:
  - {name: j1, type: revolute, parent: ground, child: a, axis: [0, 0, 1]}
  - {name: j2, type: revolute, parent: a, child: b, axis: [0, 0, 1]}
constraints:
  - {name: m1, type: mimic, joint: j1, reference: j2}
  - {name: m2, type: mimic, joint: j2, reference: j1, multiplier: 2.0}
"""
    with pytest.raises(ModelFileError) as err:
        load_text(text, source="cycle.yaml")
    assert ("cycle.yaml:9: constraints[0].joint: joints 'j1' → 'j2' → 'j1' mimic one another in a cycle: none of them "
            "moves by itself") in err.value.report()


@pytest.fixture
def package(tmp_path):
    """A package folder ``robot`` with a mesh, a mesh outside it, and a link in it that points outside."""
    (tmp_path / "robot" / "meshes").mkdir(parents=True)
    (tmp_path / "robot" / "meshes" / "a.stl").write_text("solid a\nendsolid a\n")
    (tmp_path / "secret.stl").write_text("solid s\nendsolid s\n")
    os.symlink(tmp_path / "secret.stl", tmp_path / "robot" / "meshes" / "out.stl")
    return tmp_path


def test_a_package_path_stays_in_its_package(package):
    model = parse_urdf(robot(), package_dirs=[package])
    assert model.nv == 3
    where = r"link\[@name='a'\]/visual\[1\]/geometry/mesh: mesh "
    for name in ("package://robot/../secret.stl", "package://robot/../../../etc/passwd", "package://robot/..",
                 "package://../robot/meshes/a.stl"):
        for dirs in ([package], None):
            with pytest.raises(ModelFileError, match=where + f"'{name}' leaves the folder of its package"):
                parse_urdf(robot(name), package_dirs=dirs)
    with pytest.raises(ModelFileError, match=where + r"'package://robot/meshes/out.stl' leaves the folder of its "
                                                     r"package: .* is '.*secret.stl', outside"):
        parse_urdf(robot("package://robot/meshes/out.stl"), package_dirs=[package])
