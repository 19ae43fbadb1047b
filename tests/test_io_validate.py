"""``multibody validate``: each problem of a model file is one line naming its place in the file, exit status 2,
never a Python traceback (the cases of the issue: a negative mass, an unknown joint type, a missing parent, a
non-orthonormal rotation, a YAML tag that tries to construct a Python object); every problem of a file at once."""
import subprocess
import sys
from pathlib import Path

import pytest

from multibody.cli import main

GOOD = """\
name: two links
bodies:
  - {name: upper, mass: 1.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}
  - {name: lower, mass: 1.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}
joints:
  - {name: shoulder, type: revolute, axis: [0, 1, 0], parent: ground, child: upper}
  - {name: elbow, type: revolute, axis: [0, 1, 0], parent: upper, child: lower, placement: {translation: [0, 0, -1]}}
"""

CASES = [   # (replace, by, path and message in the one line, the line number)
    ("mass: 1.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}\n  - {name: lower",
     "mass: -2.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}\n  - {name: lower",
     "bodies[0].mass: must be >= 0, got -2.0", 3),
    ("type: revolute, axis: [0, 1, 0], parent: upper", "type: hinge, axis: [0, 1, 0], parent: upper",
     "joints[1].type: 'hinge' is not one of: revolute, prismatic", 7),
    ("parent: upper, child: lower", "parent: uper, child: lower",
     "joints[1].parent: joint 'elbow': parent body 'uper' is not defined", 7),
    ("placement: {translation: [0, 0, -1]}", "placement: {translation: [0, 0, -1], rotation: [[1, 0, 0], [0, 1, 0.5], "
                                             "[0, 0, 1]]}",
     "joints[1].placement.rotation: joint 'elbow' placement: rotation must be a proper orthonormal matrix", 7),
    ("name: two links", "name: !!python/object/apply:os.system ['touch PWNED']",
     "name: the YAML tag '!!python/object/apply:os.system' is not allowed", 1),
    ("inertia: [0.1, 0.1, 0.01]}\n  - {name: lower", "inertia: [0.1, 0.1, -0.01]}\n  - {name: lower",
     "bodies[0].inertia: body 'upper': inertia has a negative principal moment (principal moments [-0.01, 0.1, 0.1];"
     " expected a positive semi-definite tensor)", 3),
    ("com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}\njoints", "com: [0, 0], inertia: [0.1, 0.1, 0.01]}\njoints",
     "bodies[1].com: expected 3 numbers, got 2 items", 4),
    ("axis: [0, 1, 0], parent: ground", "axis: [0, 0, 0], parent: ground",
     "joints[0].axis: Revolute joint: axis must be a non-zero finite vector", 6),
    ("- {name: elbow", "- {name: shoulder", "joints[1].name: joint 'shoulder' is defined twice", 7),
    ("name: two links", "name: two links\nbodys: []", "bodys: unknown key; did you mean 'bodies'?", 2),
]


@pytest.mark.parametrize("old, new, expected, line", CASES, ids=[c[2].split(":")[0] for c in CASES])
def test_one_problem_one_line(tmp_path, capsys, monkeypatch, old, new, expected, line):
    monkeypatch.chdir(tmp_path)
    assert old in GOOD
    path = tmp_path / "model.yaml"
    path.write_text(GOOD.replace(old, new, 1))
    assert main(["validate", str(path)]) == 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.err + out.out, out.err
    assert lines[0].startswith(f"{path}:{line}: {expected}"), lines[0]
    assert not (tmp_path / "PWNED").exists()


def test_a_valid_file(tmp_path, capsys):
    path = tmp_path / "model.yaml"
    path.write_text(GOOD)
    assert main(["validate", str(path)]) == 0
    assert "valid: model 'two links', 2 bodies, nq = 2, nv = 2" in capsys.readouterr().out


def test_every_problem_of_a_file_at_once(tmp_path, capsys):
    text = GOOD
    for old, new, _, _ in CASES[:5]:
        text = text.replace(old, new, 1)
    path = tmp_path / "model.yaml"
    path.write_text(text)
    assert main(["validate", "-q", str(path), str(tmp_path / "missing.yaml")]) == 2
    err = capsys.readouterr().err
    for _, _, expected, line in CASES[:5]:
        assert f"{path}:{line}: {expected}" in err
    assert f"{tmp_path / 'missing.yaml'}: '{tmp_path / 'missing.yaml'}': no such file" in err
    assert len(err.strip().splitlines()) == 6


def test_json_files(tmp_path, capsys):
    path = tmp_path / "model.json"
    path.write_text('{"bodies": [{"name": "a", "mass": NaN}], "joints": []}')
    assert main(["validate", str(path)]) == 2
    assert "JSON: NaN is not a number a model file may hold" in capsys.readouterr().err
    path.write_text('{"bodies": [{"name": "a", "mass": 1}], "joints": [{"name": "j", "type": "free", "parent": '
                    '"ground", "child": "a", "axis": [1, 0, 0]}], }')
    assert main(["validate", str(path)]) == 2
    assert "JSON syntax: " in capsys.readouterr().err
    path.write_text('{"bodies": [{"name": "a", "mass": 1}], "joints": [{"name": "j", "type": "free", "parent": '
                    '"ground", "child": "a", "axis": [1, 0, 0]}]}')
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err.strip() == f"{path}: joints[0].axis: a free joint takes no axis"


def test_yaml_syntax_and_structure(tmp_path, capsys):
    path = tmp_path / "model.yaml"
    for text, expected in (("bodies: [", "YAML syntax"), ("- 1\n- 2\n", "a model file is a mapping"),
                           ("", "the file is empty"), ("bodies: []\njoints: []\n", "bodies: expected the rigid bodies"),
                           ("bodies: [{name: a, mass: 1, mass: 2}]\n", "bodies[0].mass: the key is given twice"),
                           # a key given twice: what lies under it is not read as if the schema had checked it (a
                           # body without a mass was a KeyError, found by the atheris harness)
                           ("bodies: [{name: a, mass: 1}]\nbodies: [{com: [0, 0, 1]}]\n",
                            "bodies: the key is given twice"),
                           # a key YAML reads as a number or a boolean (a TypeError in sorting, found by atheris)
                           ("bodies: [{name: a, mass: 1, 0.5: 2, true: 3}]\n", "a key is a name; 0.5 was read as float"),
                           # a profile with a complex coefficient (a TypeError in float(), found by atheris)
                           ("name: p\nbodies: [{name: b, mass: 1, inertia: [1, 1, 1]}]\njoints: [{name: j, type: planar, "
                            "parent: ground, child: b}]\nconstraints: [{name: c, type: point_on_profile, body: b, "
                            "point: [0, 0, 0], profile: {graph: 'sqrt(-1)*x**2'}}]\n", "must have real coefficients")):
        path.write_text(text)
        assert main(["validate", str(path)]) == 2
        err = capsys.readouterr().err
        assert expected in err and "Traceback" not in err, err


def test_the_command_line_itself(tmp_path):
    """The installed command as a user runs it: one line, status 2, and the tagged object never built."""
    path = tmp_path / "model.yaml"
    path.write_text(GOOD.replace("name: two links", "name: !!python/object/apply:os.system ['touch PWNED']"))
    r = subprocess.run([sys.executable, "-m", "multibody", "validate", str(path)], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == [f"{path}:1: name: the YAML tag '!!python/object/apply:os.system' is not "
                                             "allowed: a model file holds data only (numbers, strings, lists, "
                                             "mappings)"]
    assert not (Path(tmp_path) / "PWNED").exists()
