"""Bad model-file inputs get one clear line naming the file, the place and what was expected (issue 20): numbers
read as YAML 1.2 reads them (no sexagesimal, dates, yes/no booleans, hexadecimal or '_'-grouped numbers), merge
keys refused by name, integers beyond the floats, complex constants, a spring's misspelt body at its own key,
joint limits, documents whose aliases expand beyond the size a file may hold (and models that would write one),
the inertia policy of a file, singular mass matrices; and frames, visual and collision elements written and read
back."""
import json
import warnings

import numpy as np
import pytest

import multibody as mb
from io_models import same_model
from multibody.cli import main
from multibody.errors import InertiaWarning, ModelError
from multibody.io import ModelFileError, load, load_text, save_model
from multibody.io.documents import MAX_BYTES

BASE = """\
name: probe
bodies:
  - {name: b, mass: MASS, com: [0, 0, -1], inertia: [0.1, 0.1, 0.1]}
joints:
  - {name: j, type: revolute, axis: [0, 1, 0], parent: ground, child: b JOINT}
"""


def _problem(text, suffix=".yaml"):
    with pytest.raises(ModelFileError) as err:
        load_text(text, suffix=suffix, source=f"probe{suffix}")
    report = err.value.report()
    assert len(report.splitlines()) == 1 and "Traceback" not in report, report
    return report


def _text(mass="1.0", joint=""):
    return BASE.replace("MASS", mass).replace(" JOINT", joint)


@pytest.mark.parametrize("written, what", [
    ("1:30", "'1:30' is a sexagesimal number (YAML 1.1 reads 1:30 as 90)"),
    ("0x10", "'0x10' is a hexadecimal number"), ("0o17", "'0o17' is an octal number"),
    ("0b101", "'0b101' is a binary number"), ("1_000", "'1_000' is a number with '_' separators"),
    ("'(-1)**0.5'", "in '(-1)**0.5': (-1.0) ** 0.5 is not a real number"),
    ("'2**0.5 + 0x1'", "the number '0x1' is not written in decimal digits"),
    ("1" * 5000, "the integer 11111111111111111111... has 5000 digits: beyond the floating-point range"),
    ("'" + "1" * 3000 + "'", "the integer 11111111111111111... is too large"),
])
def test_numbers_are_read_strictly(written, what):
    """Every number where a number is expected: one line naming the key and its line (3)."""
    report = _problem(_text(mass=written))
    assert report.startswith("probe.yaml:3: bodies[0].mass: ") and what in report
    assert "set_int_max_str_digits" not in report


def test_yaml_12_plain_scalars():
    """A date-like name is a name; 010 is ten; 1e-7 and .5 are floats; yes is no boolean (said so at its key);
    an explicit !!int 0x10 is refused."""
    mf = load_text(_text(mass="010").replace("name: b", "name: 2024-01-01").replace("child: b", "child: 2024-01-01")
                   .replace("[0.1, 0.1, 0.1]", "[1e-1, .1, 100e-3]"))
    assert mf.model.body_names == ("ground", "2024-01-01") and mf.model.mass[1] == 10.0
    assert np.array_equal(mf.model.inertia_com[1], 0.1 * np.eye(3))
    report = _problem(_text(joint=", cut: yes"))
    assert report == ("probe.yaml:5: joints[0].cut: expected true or false, got 'yes' (YAML 1.1's yes, no, on and off "
                      "are strings in a model file)")
    report = _problem(_text(mass="!!int 0x10"))
    assert report.startswith("probe.yaml:3: bodies[0].mass: '0x10' is not a valid !!int")
    report = _problem('{"name": "x", "bodies": [{"name": "b", "mass": %s}]}' % ("9" * 5000), ".json")
    assert report == ("probe.json: (file): JSON: the integer 99999999999999999999... has 5000 digits: beyond the "
                      "floating-point range")


def test_merge_keys_are_refused_by_name():
    text = "defaults: &d {mass: 1.0, inertia: [1, 1, 1]}\n" + _text().replace("- {name: b, mass: 1.0", "- {<<: *d, name: b")
    with pytest.raises(ModelFileError) as err:
        load_text(text, source="probe.yaml")
    assert ("probe.yaml:4: bodies[0]: a YAML merge key ('<<: *name') is not read in a model file (it is YAML 1.1, not "
            "1.2): write the keys out") in err.value.report()


def test_the_field_a_message_is_about():
    """A spring's misspelt body_b is reported at body_b (it was reported at body_a); joint limits in a file."""
    text = _text() + "springs:\n  - {name: s, body_a: b, body_b: bb, stiffness: 1.0}\n"
    assert _problem(text) == ("probe.yaml:7: springs[0].body_b: spring 's': body_b 'bb' is not defined (bodies: ground, "
                              "b)")
    text = _text(joint=", limits: {lower: 1, upper: -1}")
    assert _problem(text) == ("probe.yaml:5: joints[0].limits: joint 'j': the lower limit 1.0 is above the upper limit "
                              "-1.0")
    assert _problem(_text(joint=", limits: {effort: -3}")) == (
        "probe.yaml:5: joints[0].limits.effort: joint 'j': the effort limit must be >= 0, got -3.0")
    text = _text() + "constraints:\n  - {name: c, type: point_on_plane, body: b, plane_body: bb}\n"
    assert _problem(text) == ("probe.yaml:7: constraints[0].plane_body: constraint 'c': plane_body 'bb' is not defined "
                              "(add it with add_body first)")
    text = _text() + "constraints:\n  - {name: m, type: mimic, joint: j, reference: jj}\n"
    assert _problem(text) == ("probe.yaml:7: constraints[0].reference: mimic of joint 'j': the reference 'jj' is not a "
                              "joint of model 'probe' (joints: j)")


def test_a_model_without_bodies_beams_or_cables_is_told_which_key_is_missing():
    """The file's one rule over several keys (one of bodies, beams, cables) is a problem at a key, like any missing
    key, not at the whole file with the file's description."""
    assert _problem("name: m\njoints: []\n") == ("probe.yaml:1: bodies: missing (required here: bodies or beams or "
                                                "cables)")


def test_axes_whose_length_overflows_are_directions():
    """An axis of (1e308, 1e308, 0) is the direction (1, 1, 0)/√2 for a joint and a rotation alike (its length
    overflows: the rotation was the identity, its axis divided by inf), without a floating-point warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(mb.Revolute(axis=(1e308, 1e308, 0)).axis, mb.Revolute(axis=(1, 1, 0)).axis)
        np.testing.assert_allclose(mb.rotation_about((1e308, 1e308, 0), 0.5), mb.rotation_about((1, 1, 0), 0.5),
                                   rtol=0, atol=4 * np.finfo(float).eps)
        np.testing.assert_array_equal(mb.Revolute(axis=(0, 0, 1e-200)).axis, [0.0, 0.0, 1.0])
        for bad in ((0, 0, 0), (np.nan, 0, 1), (1, 2), "x"):       # refused by name, not a matrix of nan
            with pytest.raises(ModelError, match="rotation axis must be 3"):
                mb.rotation_about(bad, 0.5)


def test_rotations_with_huge_entries_are_refused_without_a_warning():
    """A rotation matrix with an entry of 1e200 is not orthonormal: refused by name, without the overflow warning
    that RᵀR's products gave."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ModelError, match="rotation must be a proper orthonormal matrix"):
            mb.Placement([[1e200, 0, 0], [0, 1, 0], [0, 0, 1]])


def test_singular_mass_matrices_are_refused_with_the_numbers(tmp_path, capsys):
    """A point mass on its hinge axis was 'valid' for multibody validate; a thin rod across its hinge is a body."""
    path = tmp_path / "pm.yaml"
    path.write_text(BASE.replace("mass: MASS, com: [0, 0, -1], inertia: [0.1, 0.1, 0.1]", "mass: 1.0, com: [0, 1, 0]")
                    .replace(" JOINT", ""))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"{path}:3: bodies[0]: body 'b' on joint 'j' makes the mass matrix singular: the bodies it "
                          "carries have no inertia for its rotation about its axis") and len(err.splitlines()) == 1
    rod = load_text(BASE.replace("MASS", "1.0").replace("[0.1, 0.1, 0.1]", '["1/12", "1/12", 0]')
                    .replace(" JOINT", "")).model
    assert mb.crba(rod, [0.2])[0, 0] == pytest.approx(1 / 12 + 1.0, rel=1e-15)


def test_aliases_are_bounded_in_bytes_and_writing_what_cannot_be_read_is_refused(tmp_path):
    """An alias of a long string named many times expands a small text beyond MAX_BYTES (it used to make
    save_model run for minutes): refused on reading, and save_model refuses a model whose file would be that
    large, counting (up to the bound) rather than writing."""
    big = "x" * (MAX_BYTES // 8)
    text = f"name: x\nmetadata:\n  s: &s '{big}'\n  t: [{', '.join(['*s'] * 9)}]\nbodies: [{{name: b, mass: 1}}]\n"
    report = _problem(text)
    assert report.startswith(f"probe.yaml: (file): the aliases of the document expand its text to ") and \
        f"a model file holds at most {MAX_BYTES}" in report
    b = mb.ModelBuilder(metadata={"big": ["y" * 1_000_000] * 9000})
    b.add_body("a", 1.0, com=(0, 0, -1))
    b.add_joint("j", mb.Revolute((0, 1, 0)), "ground", "a")
    with pytest.raises(ModelError, match=f"model 'model': its metadata would take more than {MAX_BYTES} bytes"):
        save_model(b.build(), tmp_path / "big.yaml")
    assert not (tmp_path / "big.yaml").exists()


def test_the_inertia_policy_of_a_file(tmp_path):
    """A model that keeps an inertia no body has (inertia='warn') is saved with inertia_check: warn and loads back
    with one warning; strict=True refuses it, repair=True moves it; a file without the key refuses it."""
    b = mb.ModelBuilder(name="kept", inertia="warn")
    b.add_body("plate", 1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.5))
    b.add_joint("j", mb.Spherical(), "ground", "plate")
    with pytest.warns(InertiaWarning):
        model = b.build()
    save_model(model, tmp_path / "kept.json")
    data = json.loads((tmp_path / "kept.json").read_text())
    assert data["inertia_check"] == "warn"
    with pytest.warns(InertiaWarning, match=r"kept.json: 1 inertia that no body has, kept as written: body 'plate'"):
        same_model(model, load(tmp_path / "kept.json").model)
    with pytest.raises(ModelFileError, match=r"bodies\[0\].inertia: body 'plate': principal moments \[0.1, 0.1, 0.5\]"):
        load(tmp_path / "kept.json", strict=True)
    with pytest.warns(InertiaWarning, match="moved to the nearest physical ones: body 'plate'"):
        fixed = load(tmp_path / "kept.json", repair=True).model
    np.testing.assert_allclose(np.diag(fixed.inertia_com[1]), [0.2, 0.2, 0.4], rtol=1e-14, atol=0)
    del data["inertia_check"]
    (tmp_path / "plain.json").write_text(json.dumps(data))
    with pytest.raises(ModelFileError, match="triangle inequality"):
        load(tmp_path / "plain.json")


def test_frames_visuals_collisions_round_trip(tmp_path):
    """Model elements written and read back (YAML and JSON), and the visuals an earlier file wrote under its bodies
    read into the same elements."""
    b = mb.ModelBuilder(name="elements")
    b.add_body("ball", 1.0, com=(0, 0, -1), inertia=(0.004, 0.004, 0.004))
    b.add_joint("j", mb.Spherical(), "ground", "ball")
    b.add_frame("tip", "ball", mb.Placement(mb.rotation_about((1, 0, 0), 0.3), (0, 0, -1.1)))
    b.add_frame("world_mark", "ground", mb.Placement(translation=(1, 2, 3)))
    b.add_visual("shell", "ball", mb.Sphere(0.1), mb.Placement(translation=(0, 0, -1)), color=(0.2, 0.3, 0.4))
    b.add_visual("stl", "ball", mb.Mesh("meshes/ball.stl", (0.001, 0.001, 0.001)))
    b.add_collision("ball_geom", "ball", mb.Sphere(0.1), mb.Placement(translation=(0, 0, -1)), friction=0.4)
    b.add_collision("floor", "ground", mb.HalfSpace(), mb.Placement(translation=(0, 0, -3)))
    b.add_collision("stick", "ball", mb.Capsule(0.01, 0.9), friction=1.0)
    model = b.build()
    for suffix in (".yaml", ".json"):
        save_model(model, tmp_path / f"e{suffix}")
        same_model(model, load(tmp_path / f"e{suffix}").model)
    old = """
bodies:
  - name: rod
    mass: 1.0
    com: [0, 0, -0.5]
    inertia: [0.1, 0.1, 0.01]
    visuals:
      - {name: rod_shape, cylinder: {radius: 0.02, length: 1}, placement: {translation: [0, 0, -0.5]},
         color: [1, 0, 0, 1]}
      - {mesh: package://r/rod.dae, scale: [1, 1, 1]}
joints: [{name: j, type: revolute, axis: [0, 1, 0], parent: ground, child: rod}]
"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vis = load_text(old).model.visuals
    assert [(v.name, v.shape, v.color) for v in vis] == [("rod_shape", mb.Cylinder(0.02, 1.0), (1.0, 0.0, 0.0, 1.0)),
                                                          ("rod_visual", mb.Mesh("package://r/rod.dae"), None)]
    bad = BASE.replace("MASS", "1.0").replace(" JOINT", "") + (
        "visuals:\n  - {name: v, body: b, shape: {kind: sphere, radius: -1}}\n"
        "frames:\n  - {name: f, body: nowhere}\n")
    with pytest.raises(ModelFileError) as err:
        load_text(bad, source="probe.yaml")
    report = err.value.report()
    assert "probe.yaml:7: visuals[0].shape.radius: must be >= 0, got -1" in report
    assert "probe.yaml:9: frames[0]: frame 'f': body 'nowhere' is not defined" in report
