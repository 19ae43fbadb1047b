"""Model files (multibody.io): Model -> file -> Model is the identity, on random builder models (hypothesis) and on
every bundled system; what a file cannot hold is refused by name; the schema is published and packaged.

"The identity" is bit for bit: every packed array of the Model and of its constraint table, the names, the
placements as given, the torque expressions and the metadata (tests/io_models.same_model). Floats are written
with repr (YAML and JSON), which reads back exactly.
"""
import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from io_models import same_model
from multibody import examples
from multibody.bench.dynamics import random_rotation, random_unit
from multibody.io import ExpressionTorque, ModelFileError, load, load_model, load_text, save_model, schema
from multibody.io.expression_callables import ExpressionMatrix, ExpressionVector, expression_variables
from multibody.io.writer import model_to_dict

KINDS = ("Fixed", "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", "Planar", "Free")


def _joint(kind, rng):
    a1, a2 = rng.normal(size=3), random_unit(rng)
    while abs(a1 @ a2) > 0.9 * np.linalg.norm(a1):
        a2 = random_unit(rng)
    return {"Fixed": mb.Fixed, "Revolute": lambda: mb.Revolute(a1), "Prismatic": lambda: mb.Prismatic(a1),
            "Cylindrical": lambda: mb.Cylindrical(a1), "Universal": lambda: mb.Universal(a1, a2),
            "Spherical": mb.Spherical, "Planar": mb.Planar, "Free": mb.Free}[kind]()


def _placement(rng):
    return mb.Placement(random_rotation(rng), rng.uniform(-1, 1, 3))


def random_model(n, seed):
    """A random description using every part of the builder: the eight joint types with random axes, placements
    and child placements, joint spring-dampers and efforts, point springs, cut joints closing loops, every kind
    of constraint a file can hold (expression-backed position and velocity constraints among them), an
    expression torque and metadata."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder(gravity=rng.normal(size=3) * 5, name=f"random model {seed}",
                        metadata={"author": "test", "tags": ["a", "b"], "limits": {}, "visuals": {}})
    names = ["ground"]
    lim, vis = {}, {}
    for k in range(n):
        body = f"body{k}"
        moments = np.sort(rng.uniform(0.2, 2.0, 3))
        moments[2] = rng.uniform(moments[1], moments[0] + moments[1])
        Q = random_rotation(rng)
        inertia = Q @ np.diag(moments) @ Q.T if rng.random() < 0.7 else moments
        b.add_body(body, mass=rng.uniform(0.1, 5), com=rng.uniform(-0.5, 0.5, 3), inertia=inertia)
        kind = KINDS[rng.integers(len(KINDS))]
        joint = _joint(kind, rng)
        nv = joint.nv
        forces = {}
        if nv and rng.random() < 0.6:
            forces = dict(damping=rng.uniform(0, 2, nv), effort=rng.uniform(-1, 1, nv) if rng.random() < 0.5 else 0.3)
            if joint.linear_coordinates:
                forces.update(stiffness=rng.uniform(0, 5), rest=rng.uniform(-1, 1, nv))
        b.add_joint(f"j{k}", joint, parent=names[rng.integers(len(names))], child=body, placement=_placement(rng),
                    child_placement=_placement(rng) if rng.random() < 0.3 else None, **forces)
        if rng.random() < 0.3:
            lim[f"j{k}"] = {"lower": -1.5, "upper": float(rng.uniform(0, 2)), "effort": 10.0}
        if rng.random() < 0.3:
            vis[body] = [{"name": body, "mesh": f"meshes/{body}.stl", "scale": [0.001, 0.001, 0.001],
                          "placement": {"translation": rng.uniform(-1, 1, 3).tolist(),
                                        "rotation": random_rotation(rng).tolist()}}]
        names.append(body)
    b.metadata.update(limits=lim, visuals=vis)
    for k in range(rng.integers(0, 3) if n > 1 else 0):   # cut joints closing loops
        i, j = rng.choice(np.arange(1, n + 1), 2, replace=False)
        kind = KINDS[1 + rng.integers(len(KINDS) - 2)]   # any but Fixed ... and Free (it constrains nothing)
        b.add_joint(f"cut{k}", _joint(kind, rng), names[i], names[j], placement=_placement(rng),
                    child_placement=_placement(rng), cut=True)
    for k in range(rng.integers(0, 3)):
        i, j = rng.choice(np.arange(n + 1), 2, replace=n == 0)
        b.add_spring(f"spring{k}", names[i], rng.uniform(-1, 1, 3), names[j], rng.uniform(-1, 1, 3),
                     rng.uniform(0, 100), rng.uniform(0, 1), rng.uniform(0, 1))
    body = names[1 + rng.integers(n)]
    x = sp.Symbol("x")
    constraints = [
        lambda: mb.PointOnPlane("plane", body, point=rng.uniform(-1, 1, 3), normal=rng.normal(size=3),
                                origin=rng.uniform(-1, 1, 3), plane_body=names[rng.integers(n + 1)]),
        lambda: mb.RollingDisc("disc", body, radius=rng.uniform(0.1, 1), axis=rng.normal(size=3),
                               center=rng.uniform(-1, 1, 3), normal=rng.normal(size=3)),
        lambda: mb.PointOnProfile("curve", body, mb.Profile.graph(rng.uniform(-1, 1) * x**3 + rng.uniform(0, 1) * x
                                                                  - rng.uniform(0, 1), x),
                                  point=rng.uniform(-1, 1, 3), plane=[(1.0, 0, 0), (0, 1.0, 0)]),
        lambda: mb.RollingOnProfile("roll", body, radius=0.1, profile=mb.Profile.graph(x**2 / 4 + rng.uniform(), x),
                                    center=rng.uniform(-1, 1, 3), x_range=(-0.5, 0.5)),
    ]
    kinds = len(constraints) if seed % 4 == 0 else len(constraints) - 1   # the disc on a profile checks its
    for k in rng.permutation(kinds)[:rng.integers(0, kinds + 1)]:          # curve at 2001 points: now and then
        b.add_constraint(constraints[k]())
    model0 = b.build()
    if model0.nv and rng.random() < 0.7:   # the file-only elements: expressions of t, q and v
        var = expression_variables(model0, velocities=False)
        qn = [k for k in var if k.startswith("q.")]
        vn = model0.velocity_names()
        b.add_constraint(mb.UserConstraint("pos", ExpressionVector(
            [mb.io.parse_expression(f"{qn[0]} - 0.1*sin(t)")], var), nrows=1))
        rows = [[mb.io.parse_expression(f"{rng.uniform(-1, 1)!r}*cos({qn[-1]})") for _ in vn]]
        b.add_constraint(mb.VelocityConstraint("vel", ExpressionMatrix(rows, var),
                                               ExpressionVector([mb.io.parse_expression("t**2")], var), nrows=1))
        b.set_torque(ExpressionTorque(model0, {vn[0]: "-2*v." + vn[0] + " + max(t, 0.5)"}))
    return b.build()


def _round_trip(model, suffix, **state):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"model{suffix}"
        save_model(model, path, **state)
        return load(path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 8), st.integers(0, 2**32 - 1), st.sampled_from([".yaml", ".json"]))
def test_random_models_round_trip_exactly(n, seed, suffix):
    model = random_model(n, seed)
    rng = np.random.default_rng(seed)
    q0, v0 = model.random_configuration(rng), rng.normal(size=model.nv)
    sim = {"formulation": "constrained", "method": "RK4", "t_end": 1.5, "h": 1e-3,
           "options": {"stabilization": "baumgarte", "baumgarte": [5.0, 6.0]}}
    mf = _round_trip(model, suffix, q0=q0, v0=v0, simulation=sim)
    same_model(model, mf.model)
    assert np.array_equal(mf.q0, q0) and np.array_equal(mf.v0, v0)
    assert mf.simulation == sim
    # the file's own description comes back unchanged: a second round trip writes the same data
    assert model_to_dict(mf.model, mf.q0, mf.v0, mf.simulation) == model_to_dict(model, q0, v0, sim)


def test_expression_elements_act_in_the_dynamics():
    """A torque, a position and a velocity constraint from a file do what their expressions say."""
    text = """
name: slider
gravity: [0, 0, 0]
bodies: [{name: cart, mass: 2.0}, {name: pole, mass: 1.0, com: [0, 0, 0.5], inertia: [0.1, 0.1, 0.01]}]
joints:
  - {name: x, type: prismatic, axis: [1, 0, 0], parent: ground, child: cart, effort: "3*t"}
  - {name: phi, type: revolute, axis: [0, 1, 0], parent: cart, child: pole}
torque: {phi.angle: "-v.phi"}
constraints:
  - {name: drive, type: position, f: ["q.phi - 0.5*sin(t)"]}
"""
    mf = load_text(text)
    m = mf.model
    assert isinstance(m.torque_callback, ExpressionTorque)
    np.testing.assert_array_equal(m.torque_callback(2.0, np.zeros(2), np.array([0.0, 4.0])), [6.0, -4.0])
    c = m.constraint("drive")
    q = np.array([0.3, 0.2])
    assert c._value(q, 1.0)[0] == pytest.approx(0.2 - 0.5 * np.sin(1.0), abs=1e-16)
    F, ft = c.partials(q, 1.0)   # complex steps through the expression: exact derivatives
    np.testing.assert_array_equal(F, [[0.0, 1.0]])
    assert ft[0] == pytest.approx(-0.5 * np.cos(1.0), rel=1e-15)
    res = mb.simulate(m, [0.0, 0.0], [0.0, 0.5], 1.0, formulation="constrained", rtol=1e-10, atol=1e-12, n_out=11)
    # the position constraint holds to the Newton projection's tolerance after every step (1e-12), 3x margin
    np.testing.assert_allclose(res.q[:, 1], 0.5 * np.sin(res.t), rtol=0, atol=3e-12)


def test_every_bundled_system_round_trips():
    from multibody.systems import bicycle, iftomm, manipulators

    models = [load(examples.path(n)).model for n in examples.names()]
    models += [bicycle.whipple_model(), iftomm.bricard_model()[0], iftomm.four_bar_model(3)[0],
               manipulators.universal()]
    for model in models:
        for suffix in (".yaml", ".json"):
            same_model(model, _round_trip(model, suffix).model)


def elastic_model():
    """Beams (3-D with stretch and torsion, planar on a pinned root closing a loop), a cable hung between two points,
    loads of both references with load curves, and rigid bodies added before and after the beams."""
    b = mb.ModelBuilder(gravity=(0, 0, -9.81), name="elastic")
    b.add_body("hub", 2.0, inertia=(1, 1, 1))
    b.add_joint("axle", mb.Revolute(axis=(0, 0, 1)), "ground", "hub")
    b.add_frame("mount", "hub", mb.Placement(translation=(0.1, 0, 0)))
    b.add_beam("blade", "hub", length=2.0, segments=4, EI=(3.0, 5.0), GJ=2.0, mass_per_length=1.5, EA=100.0,
               inertia_per_length=(0.02, 0.01, 0.01), placement=mb.Placement(translation=(0.1, 0, 0)), damping=0.01)
    b.add_beam("strut", "ground", length=1.0, segments=3, EI=(1.0, None), GJ=None, mass_per_length=1.0, tip="hub",
               root=mb.Revolute(axis=(0, 1, 0)))
    b.add_body("tipmass", 0.5, inertia=(0.01, 0.01, 0.01))
    b.add_joint("weld", mb.Fixed(), "blade.4", "tipmass")
    b.add_cable("rope", "ground", length=1.2, segments=5, mass_per_length=0.3, planar=True, tip="ground",
                tip_placement=mb.Placement(translation=(1, 0, 0)), tip_joint=mb.Revolute(axis=(0, 1, 0)))
    b.add_frame("end", "tipmass")
    b.add_load("push", "blade.tip", force=(0, 0, -1), torque=(0.1, 0, 0), reference="local",
               curve=mb.LoadCurve.harmonic(3.0, amplitude=2.0))
    b.add_load("wind", "rope.2", force=(1, 0, 0), curve=mb.LoadCurve.table([0, 1, 2], [0, 1, 0.5]))
    return b.build()


def test_beams_cables_and_loads_round_trip():
    """A file holds a beam as its add_beam arguments (not its segments), and loads with their curves: reading it
    builds the same packed arrays — the bodies of beams numbered after the others whenever they were added."""
    model = elastic_model()
    data = model_to_dict(model)
    assert [e["name"] for e in data["beams"]] == ["blade", "strut"] and data["cables"][0]["planar"]
    assert [e["name"] for e in data["bodies"]] == ["hub", "tipmass"]
    assert [e["name"] for e in data["frames"]] == ["mount", "end"]
    for suffix in (".yaml", ".json"):
        loaded = _round_trip(model, suffix).model
        same_model(model, loaded)
        assert model_to_dict(loaded) == data


def test_bad_beams_in_a_file_are_reported_at_their_place():
    text = """
bodies: [{name: hub, mass: 1.0, inertia: [1, 1, 1]}]
joints: [{name: axle, type: revolute, parent: ground, child: hub}]
beams:
  - {name: blade, parent: hub, length: 1.0, segments: 4, mass_per_length: 1.0, EI: BAD}
loads:
  - {name: p, frame: FRAME, force: [0, 0, 1]}
"""
    with pytest.raises(ModelFileError, match=r"beams\[0\]: beam 'blade': EI must be positive and finite, got -2"):
        load_text(text.replace("BAD", "-2.0").replace("FRAME", "blade.tip"))
    with pytest.raises(ModelFileError, match=r"loads\[0\]: load 'p': frame 'nowhere' is neither a frame nor a body"):
        load_text(text.replace("BAD", "2.0").replace("FRAME", "nowhere"))
    assert load_text(text.replace("BAD", "2.0").replace("FRAME", "blade.tip")).model.loads[0].frame == "blade.tip"


def test_files_refuse_what_they_cannot_hold(tmp_path):
    from multibody.systems import solar_panels

    b = mb.ModelBuilder()
    b.add_body("a", 1.0, inertia=(0.1, 0.1, 0.1))
    b.add_joint("j", mb.Revolute(), "ground", "a")
    b.add_constraint(mb.UserConstraint("mine", lambda q, t: [q[0] - t]))
    with pytest.raises(mb.ModelError, match=r"constraint 'mine' \(UserConstraint\) holds Python functions"):
        save_model(b.build(), tmp_path / "m.yaml")
    with pytest.raises(mb.ModelError, match=r"torque callback HingeLatch.* is Python code"):
        save_model(solar_panels.solar_panel(solar_panels.SolarPanelParameters(latches="spring")), tmp_path / "m.yaml")
    from multibody.systems import manipulators

    with pytest.raises(mb.ModelError, match="symbolic"):
        save_model(manipulators.polar(symbolic=True), tmp_path / "m.yaml")
    with pytest.raises(mb.ModelError, match=r"\.yaml, \.yml or \.json"):
        save_model(manipulators.polar(), tmp_path / "m.txt")
    assert not (tmp_path / "m.yaml").exists()


def test_load_model_picks_the_format_by_extension(tmp_path):
    model = load(examples.path("triple_pendulum")).model
    for suffix in (".yaml", ".yml", ".json"):
        save_model(model, tmp_path / f"m{suffix}")
        same_model(model, load_model(tmp_path / f"m{suffix}"))
        same_model(model, mb.load_model(tmp_path / f"m{suffix}"))
    with pytest.raises(mb.ModelError, match="floating_base applies to URDF"):
        load_model(tmp_path / "m.yaml", floating_base=True)
    with pytest.raises(mb.ModelError, match="no such file"):
        load_model(tmp_path / "missing.yaml")
    with pytest.raises(mb.ModelError, match=r"\.yaml, \.yml or \.json \(or \.urdf"):
        load_model(tmp_path / "m.txt")


def test_initial_state_forms():
    base = """
bodies: [{name: a, mass: 1, inertia: [1, 1, 1]}, {name: b, mass: 1, inertia: [1, 1, 1]}]
joints:
  - {name: free, type: free, parent: ground, child: a}
  - {name: hinge, type: revolute, parent: a, child: b}
"""
    forms = [
        "initial: {q: [1, 2, 3, 1, 0, 0, 0, 0.5], v: [0, 0, 1, 0, 0, 0, 2]}",
        "initial: {q: {free: [1, 2, 3, 1, 0, 0, 0], hinge: 0.5}, v: {free.wz: 1, hinge: 2}}",
        "initial: {q: {free.x: 1, free.y: 2, free.z: 3, hinge.angle: 0.5}, v: {hinge.angle: 2, free.wz: 1}}",
    ]
    for form in forms:
        mf = load_text(base + form)
        np.testing.assert_array_equal(mf.q0, [1, 2, 3, 1, 0, 0, 0, 0.5])
        np.testing.assert_array_equal(mf.v0, [0, 0, 1, 0, 0, 0, 2])
    mf = load_text(base + "initial: {q: {free: [0, 0, 0, 0.7071, 0.7071, 0, 0]}}")   # normalized
    assert np.linalg.norm(mf.q0[3:7]) == pytest.approx(1.0, abs=4e-16)
    for bad, where in (("initial: {q: [1, 2]}", "initial.q: expected nq = 8 numbers"),
                       ("initial: {q: {elbow: 1}}", "initial.q.elbow: 'elbow' is neither a joint"),
                       ("initial: {q: {free: [1, 2]}}", "initial.q.free: joint 'free' has 7 coordinates"),
                       ("initial: {q: {free: [0, 0, 0, 2, 0, 0, 0]}}", "unit quaternion")):
        with pytest.raises(ModelFileError) as err:
            load_text(base + bad)
        assert where in err.value.report()


def test_numbers_as_constant_expressions_and_yaml_floats():
    mf = load_text("""
bodies: [{name: rod, mass: "2*1.5", com: [0, 0, -1/2], inertia: [2e-1, "3*0.5**2/12", 1/4]}]
joints: [{name: j, type: revolute, parent: ground, child: rod, placement: {rpy: [0, 0, pi/2]}}]
simulation: {t_end: 2, rtol: 1e-9, atol: 1.0e-12}
""")
    m = mf.model
    assert m.mass[1] == 3.0 and m.com[1, 2] == -0.5
    np.testing.assert_array_equal(np.diag(m.inertia_com[1]), [0.2, 3 * 0.5**2 / 12, 0.25])
    assert mf.simulation == {"t_end": 2.0, "rtol": 1e-9, "atol": 1e-12}
    np.testing.assert_allclose(m.jplace_R[1], mb.rotation_about((0, 0, 1), np.pi / 2), rtol=0, atol=4e-16)


def test_schema_is_published_valid_and_the_files_conform():
    import jsonschema
    import yaml

    s = schema()
    jsonschema.Draft202012Validator.check_schema(s)
    shipped = Path(mb.io.__file__).with_name("model.schema.json")
    assert json.loads(shipped.read_text()) == s
    validator = jsonschema.Draft202012Validator(s)
    for name in examples.names():
        assert not list(validator.iter_errors(yaml.safe_load(examples.path(name).read_text()))), name
    assert not list(validator.iter_errors(json.loads(json.dumps(model_to_dict(random_model(6, 3))))))
