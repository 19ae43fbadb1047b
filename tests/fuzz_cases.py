"""Malformed model files and builder calls, made from the bundled examples (src/multibody/examples/*.yaml).

Shared by the hypothesis test ``tests/test_fuzz_model_files.py`` and the atheris harness
``tests/fuzz/fuzz_model_files.py``. Every generator takes ``rnd``, an object with ``choice(seq)``,
``randint(a, b)`` and ``random()`` (``random.Random``, hypothesis' ``st.randoms()`` or an adapter of atheris'
``FuzzedDataProvider``), so the same cases are drawn by either tool.

:func:`make_file` returns a :class:`Case`: the bytes of a file, its suffix, and the names the error message of a
bad file may point to (the mutated path in the file and the names of the elements around it).
"""
import copy
import re
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import yaml

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "src" / "multibody" / "examples"
EXAMPLES = {p.stem: p.read_text(encoding="utf-8") for p in sorted(EXAMPLES_DIR.glob("*.yaml"))}
DATA = {name: yaml.safe_load(text) for name, text in EXAMPLES.items()}

INJECTIONS = [
    "__import__('os').system('x')", "().__class__.__bases__", "().__class__.__bases__[0].__subclasses__()",
    "lambda: 0", "(lambda x: x)(1)", "q.__class__", "t.__class__", "open('/etc/passwd').read()",
    "eval('1')", "exec('x=1')", "getattr(t, 'real')", "[1, 2][0]", "{'a': 1}['a']", "'abc'", "f'{t}'",
    "t if t > 0 else 0", "t > 0", "not t", "~1", "1 << 3", "t @ t", "t // 2", "t % 2", "[x for x in ()]",
    "(yield 1)", "await t", "x := 1", "sin(t, 2)", "sin()", "min(1)", "max(*[1, 2])", "sin(x=1)",
    "globals()", "__builtins__", "pi.real", "1.__class__", "b'x'", "None", "True", "...", "1j", "t.imag",
    "q.hinge.__dict__", "import os", "1; 2", "1\n2", "", "   ", "#", "pi/0", "1/0", "0**-1", "10**400",
    "9**9**9**9", "2**1000000", "1e999", "-1e999", "exp(1000)", "sqrt(-1)", "tan(pi/2)", "0*t/0",
    "q.nobody.angle", "v.x.y.z.w", "unknown", "x", "z",
]
LONG_EXPRESSIONS = [
    lambda n: "1+" * n + "1", lambda n: "(" * n + "1" + ")" * n, lambda n: "-" * n + "1",
    lambda n: "sin(" * n + "t" + ")" * n, lambda n: "2**" * n + "2", lambda n: "9" * n,
    lambda n: "t*" * n + "t", lambda n: "min(" + ", ".join(["t"] * n) + ")", lambda n: "q." + ".".join(["a"] * n),
]
BAD_NUMBERS = [-1, -1.0, 0, 0.0, -1e-300, 1e308, -1e308, 1e-320, 10**30, 10**400, -(10**400), math.nan, math.inf,
               -math.inf, 2**63, 2**64 + 1, True, False]
BAD_VALUES = [None, "", "x", "hinge", [], {}, [1], [1, 2], [1, 2, 3, 4], [[1, 0], [0, 1]], [[1, 2, 3]] * 3,
              [[1, 0, 0], [0, 1, 0.5], [0, 0, 1]], [[1, 0, 0], [0, 1, 0], [0, 0, -1]], [[2, 0, 0], [0, 2, 0], [0, 0, 2]],
              [[0, 0, 0]] * 3, [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, 0]], [None, None, None], ["a", "b", "c"],
              [math.nan, 0, 0], [math.inf, 1, 1], [[math.nan] * 3] * 3, {"a": 1}, {"translation": [0, 0]},
              {"axis": [0, 0, 0], "angle": 1}, {"quaternion": [0, 0, 0, 0]}, {"quaternion": [2, 0, 0, 0]},
              {"rpy": [1, 2]}, {"rotation": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "rpy": [0, 0, 0]},
              {"h": "x**2"}, {"graph": "x**100"}, {"graph": "x**2.5"}, {"h": "sin(x)"}, {"graph": "1/x"},
              [[1, 2], [3]], [[[]]], "pi/2", "1/12", [0, 0, 0], [1e-300, 1e-300, 1e-300], [1, 1, 100]]
JOINT_TYPE_NAMES = ["revolute", "prismatic", "cylindrical", "universal", "spherical", "planar", "free", "fixed",
                    "hinge", "Revolute", "REVOLUTE", "ball", "", "weld", "screw"]
CONSTRAINT_TYPE_NAMES = ["point_on_plane", "point_on_profile", "rolling_disc", "rolling_on_profile", "position",
                         "velocity", "loop", "gear"]

UNSAFE_TAGS = ["!!python/object/apply:os.system ['echo PWNED']", "!!python/name:os.system",
               "!!python/object:object {}", "!!python/tuple [1, 2]", "!!binary aGVsbG8=", "!!timestamp 2001-12-14",
               "!!set {a, b}", "!!omap [a: 1]", "!!pairs [a: 1]", "!custom 1", "!<tag:example.com,2000:x> 1",
               "!!str 1", "!!int '12'", "!!float '1.5'", "!!bool 'true'", "!!null ''", "!!map {a: 1}", "!!seq [1]",
               "!!int 'x'", "!!float 'abc'", "!!int 0x1F", "!!merge <<"]

BOMBS = [
    # billion laughs: 9 levels of 9 aliases (387 420 489 values when expanded)
    "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [" + ", ".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8)),
    # an alias loop through a merge key
    "base: &b {name: x, mass: 1}\nbodies:\n  - <<: *b\n  - <<: [*b, *b]\n",
    # a recursive alias (PyYAML refuses it)
    "a: &a [*a]\n",
]


@dataclass
class Case:
    """A generated file: ``label`` (how it was made), ``suffix`` (.yaml, .yml, .json), ``data`` (its bytes),
    ``names`` (paths and element names a message about it may name; empty: the file as a whole)."""

    label: str
    suffix: str
    data: bytes
    names: list = field(default_factory=list)


# ---- paths in the data -------------------------------------------------------------------------------------------
def _paths(node, prefix=()):
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


def _get(node, path):
    for p in path:
        node = node[p]
    return node


def _path_text(path):
    from multibody.io.documents import format_path

    return format_path(path)


def _element_names(data, path):
    """The path prefixes and the ``name`` of the element at ``path`` (``bodies[2]`` -> its name)."""
    names = [_path_text(path[:k]) for k in range(len(path), 0, -1)]
    if len(path) >= 2 and isinstance(path[1], int):
        try:
            el = _get(data, path[:2])
            if isinstance(el, dict) and isinstance(el.get("name"), str) and el["name"]:
                names.append(el["name"])
        except (KeyError, IndexError, TypeError):
            pass
    return names


# ---- data-level mutations ----------------------------------------------------------------------------------------
def _long_expression(rnd):
    return rnd.choice(LONG_EXPRESSIONS)(rnd.choice([10, 100, 1000, 5000, 100_000]))


def _bad_value(rnd):
    k = rnd.randint(0, 3)
    if k == 0:
        return rnd.choice(BAD_NUMBERS)
    if k == 1:
        return rnd.choice(BAD_VALUES)
    if k == 2:
        return rnd.choice(INJECTIONS)
    return _long_expression(rnd)


def _items(data, key):
    value = data.get(key)
    return [e for e in value if isinstance(e, dict)] if isinstance(value, list) else []


def _names_of(data, key):
    return [e["name"] for e in _items(data, key) if isinstance(e.get("name"), str)]


def mutate_data(data, rnd):
    """Mutate ``data`` (a copy of an example's data) in place; returns (label, path of the change)."""
    paths = _paths(data)
    kind = rnd.randint(0, 11)
    path = rnd.choice(paths)
    parent, key = (_get(data, path[:-1]), path[-1])
    if kind == 0:   # a deleted key or list item
        del parent[key]
        return "delete", path
    if kind in (1, 2, 3):   # a wrong value
        parent[key] = _bad_value(rnd)
        return "value", path
    if kind == 4:   # a number scaled: negative, tiny, huge
        leaves = [p for p in paths if isinstance(_get(data, p), (int, float)) and not isinstance(_get(data, p), bool)]
        if leaves:
            path = rnd.choice(leaves)
            parent, key = _get(data, path[:-1]), path[-1]
            try:
                parent[key] = parent[key] * rnd.choice([-1, 0, 1e300, -1e300, 1e-300, math.nan, math.inf, 1e10])
            except OverflowError:   # an integer beyond the floats
                parent[key] = -parent[key]
        return "scale", path
    joints = _items(data, "joints")
    bodies = _names_of(data, "bodies") + ["ground", "nobody", "", "Ground"]
    if kind == 5 and joints:   # an unknown or other joint type
        k = rnd.randint(0, len(joints) - 1)
        joints[k]["type"] = rnd.choice(JOINT_TYPE_NAMES)
        return "joint type", ("joints", k, "type")
    if kind == 6 and joints:   # cycles, missing parents, self loops
        k = rnd.randint(0, len(joints) - 1)
        role = rnd.choice(["parent", "child"])
        joints[k][role] = rnd.choice(bodies)
        return f"joint {role}", ("joints", k, role)
    if kind == 7:   # duplicate names
        for section in ("bodies", "joints", "constraints", "springs"):
            items = _items(data, section)
            if items:
                other = rnd.choice(_names_of(data, "bodies") + _names_of(data, "joints") + ["ground"])
                k = rnd.randint(0, len(items) - 1)
                items[k]["name"] = other
                return "duplicate name", (section, k, "name")
    if kind == 8:   # a rotation that is not orthonormal, or a placement made wrong
        if joints:
            k = rnd.randint(0, len(joints) - 1)
            R = [[rnd.choice([0, 1, -1, 0.5, 2, 1e-9, math.nan]) for _ in range(3)] for _ in range(3)]
            joints[k][rnd.choice(["placement", "child_placement"])] = rnd.choice(
                [{"rotation": R}, {"quaternion": [rnd.random() for _ in range(4)]},
                 {"axis": R[0], "angle": rnd.choice(INJECTIONS)}, {"rpy": R[1], "translation": R[2]}])
            return "rotation", ("joints", k)
    if kind == 9:   # an expression in a place that takes one
        if joints:
            k = rnd.randint(0, len(joints) - 1)
            joints[k][rnd.choice(["effort", "stiffness", "damping", "rest"])] = rnd.choice(
                [rnd.choice(INJECTIONS), _long_expression(rnd), [rnd.choice(INJECTIONS)] * rnd.randint(1, 3)])
            return "expression", ("joints", k)
        data["torque"] = {rnd.choice(["x", "hinge.angle", "__class__"]): rnd.choice(INJECTIONS)}
        return "expression", ("torque",)
    if kind == 10:   # an unknown key, or a whole section of the wrong kind
        target = rnd.choice([p for p in paths if isinstance(_get(data, p), dict)] or [()])
        node = _get(data, target)
        node[rnd.choice(["bodys", "mass", "__class__", "type", "extra", "1"])] = _bad_value(rnd)
        return "extra key", target
    section = rnd.choice(["bodies", "joints", "constraints", "springs", "initial", "simulation", "torque", "name",
                          "gravity", "metadata", "format", "version"])
    data[section] = _bad_value(rnd) if rnd.random() < 0.5 else rnd.choice([
        [{"name": "c", "type": rnd.choice(CONSTRAINT_TYPE_NAMES), "body": rnd.choice(bodies),
          "f": [rnd.choice(INJECTIONS)], "jacobian": [[rnd.choice(INJECTIONS)]], "radius": _bad_value(rnd)}],
        [{"name": "s", "body_a": rnd.choice(bodies), "body_b": rnd.choice(bodies), "stiffness": _bad_value(rnd)}],
        {"q": {rnd.choice(_names_of(data, "joints") + ["x"]): _bad_value(rnd)}},
        {"method": rnd.choice(["RK4", "DOP853", "euler", "x"]), "h": _bad_value(rnd), "t_end": _bad_value(rnd),
         "n_out": _bad_value(rnd), "options": {"lam": _bad_value(rnd)}, "formulation": rnd.choice(
             ["tree", "cartesian", "x", "stabilized"])}])
    return "section", (section,)


def _dump(data, suffix, rnd):
    if suffix == ".json":
        return json.dumps(data, indent=rnd.choice([None, 2])).encode()
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=rnd.choice([None, False, True]),
                          allow_unicode=True).encode("utf-8")


# ---- text-level mutations ----------------------------------------------------------------------------------------
def _text_case(name, rnd):
    text = EXAMPLES[name]
    raw = text.encode("utf-8")
    kind = rnd.randint(0, 9)
    if kind == 0:   # truncated
        return "truncated", ".yaml", raw[:rnd.randint(0, len(raw))]
    if kind == 1:   # random bytes written over the file
        b = bytearray(raw)
        for _ in range(rnd.randint(1, 20)):
            b[rnd.randint(0, len(b) - 1)] = rnd.randint(0, 255)
        return "random bytes", ".yaml", bytes(b)
    if kind == 2:   # random bytes only
        return "noise", rnd.choice([".yaml", ".json"]), bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 200)))
    if kind == 3:   # not UTF-8
        enc = rnd.choice(["latin-1", "utf-16", "utf-32", "cp1252"])
        return f"encoding {enc}", ".yaml", text.replace("name: ", "name: é", 1).encode(enc, errors="replace")
    if kind == 4:   # a YAML tag in place of a value
        lines = text.splitlines()
        spots = [i for i, ln in enumerate(lines) if ": " in ln and not ln.lstrip().startswith("#")]
        i = rnd.choice(spots)
        head = lines[i].split(": ", 1)[0]
        lines[i] = f"{head}: {rnd.choice(UNSAFE_TAGS)}"
        return "tag", ".yaml", "\n".join(lines).encode()
    if kind == 5:   # an alias bomb, or recursive aliases
        bomb = rnd.choice(BOMBS)
        return "bomb", ".yaml", (bomb + text if rnd.random() < 0.5 else text + "\nextra:\n" +
                                 "".join("  " + ln + "\n" for ln in bomb.splitlines())).encode()
    if kind == 6:   # deep nesting
        n = rnd.choice([100, 1000, 10_000, 100_000])
        if rnd.random() < 0.5:
            return "nesting", ".json", ('{"name": ' + "[" * n + "]" * n + "}").encode()
        return "nesting", ".yaml", ("name: x\nbodies: " + "[" * n + "]" * n + "\n").encode()
    if kind == 7:   # keys that are not strings, odd documents
        return "odd document", ".yaml", rnd.choice([
            b"", b"# only a comment\n", b"---\n...\n", b"- a\n- b\n", b"42\n", b"null\n", b"~", b"'text'",
            b"? [a, b]\n: 1\n", b"1: x\n2: y\n", b"null: 1\n", b"name: a\n---\nname: b\n", b"\x00",
            b"{name: x, bodies: [{name: b, mass: 1}], joints: [{name: j, type: free, parent: ground, child: b}]}",
            b"name: x\nbodies: [{name: b, mass: 1, com: &c [0, 0, 0], inertia: *c}]\n"])
    if kind == 8:   # a long line / a very long document
        n = rnd.choice([10_000, 1_000_000])
        return "long", ".yaml", (text + "\nname: " + "x" * n + "\n").encode()
    # a JSON file with YAML text, or broken JSON
    return "wrong syntax", ".json", (text.encode() if rnd.random() < 0.5 else
                                     json.dumps(DATA[name]).encode()[:-rnd.randint(1, 10)])


def make_file(rnd):
    """A generated model file (:class:`Case`) from one of the examples, mutated by ``rnd``."""
    name = rnd.choice(sorted(EXAMPLES))
    if rnd.random() < 0.25:
        out = _text_case(name, rnd)
        label, suffix, data = out[:3]
        return Case(f"{name}: {label}", suffix, data, list(out[3]) if len(out) > 3 else [])
    data = copy.deepcopy(DATA[name])
    labels, names = [], []
    for _ in range(rnd.randint(1, 3)):
        label, path = mutate_data(data, rnd)
        labels.append(f"{label} {_path_text(path)}")
        names += _element_names(data, path) if path else []
    suffix = rnd.choice([".yaml", ".yml", ".json"])
    return Case(f"{name}: " + "; ".join(labels), suffix, _dump(data, suffix, rnd), names)


# ---- builder calls -----------------------------------------------------------------------------------------------
BUILDER_VALUES = [None, 0, -1, 1.0, math.nan, math.inf, -math.inf, 1e308, 10**400, True, "x", "", b"x", [], [1],
                  [1, 2, 3], [1, 2, 3, 4], [[1, 0, 0], [0, 1, 0], [0, 0, 1]], [[1, 2, 3]] * 3, [[math.nan] * 3] * 3,
                  [0, 0, 0], [-1, 1, 1], [1, 1, 100], [1, 1, 1], {"a": 1}, object(), (1, 2), "1/0", "__import__('os')",
                  [[1, 0, 0], [0, 1, 0], [0, 0, -1]], ([[1, 0, 0], [0, 1, 0], [0, 0, 1]], [0, 0, 0])]


class Make:
    """An argument made when the call is run (making it is part of the call: a joint type, a placement or a
    constraint with bad arguments fails there)."""

    def __init__(self, make):
        self.make = make


def builder_calls(rnd, mb):
    """A list of ``(method name, args, kwargs, the element's name)`` for a ModelBuilder, with bad arguments."""
    calls = []
    bodies = ["ground"]
    names = ["b0", "b1", "b2", "j0", "j1", "c0", "ground", "", 0, None, "x" * 1000, "a'b", "é"]
    for i in range(rnd.randint(1, 6)):
        what = rnd.randint(0, 3)
        name = rnd.choice(names) if rnd.random() < 0.3 else f"b{i}" if what < 2 else f"j{i}"
        if what <= 1:
            kw = {}
            for key in ("mass", "com", "inertia"):
                if rnd.random() < 0.6:
                    kw[key] = rnd.choice(BUILDER_VALUES) if rnd.random() < 0.6 else {
                        "mass": 1.0, "com": (0, 0, -0.5), "inertia": (0.1, 0.1, 0.01)}[key]
            kw.setdefault("mass", 1.0)
            calls.append(("add_body", (name,), kw, name))
            bodies.append(name)
        elif what == 2:
            jt = Make(rnd.choice([
                lambda: mb.Revolute(axis=rnd.choice(BUILDER_VALUES)), lambda: mb.Prismatic(rnd.choice(BUILDER_VALUES)),
                lambda: mb.Universal(rnd.choice(BUILDER_VALUES), rnd.choice(BUILDER_VALUES)),
                lambda: mb.Revolute(axis=(0, 1, 0)), lambda: mb.Spherical(), lambda: mb.Free(), lambda: mb.Fixed(),
                lambda: rnd.choice(BUILDER_VALUES), lambda: mb.Cylindrical((0, 0, 1)), lambda: mb.Planar()]))
            kw = {}
            for key in ("placement", "child_placement", "stiffness", "damping", "rest", "effort"):
                if rnd.random() < 0.3:
                    kw[key] = rnd.choice(BUILDER_VALUES) if rnd.random() < 0.7 else (
                        Make(lambda: mb.Placement(rnd.choice(BUILDER_VALUES), rnd.choice(BUILDER_VALUES))))
            if rnd.random() < 0.2:
                kw["cut"] = rnd.choice([True, False, "yes", None])
            calls.append(("add_joint", (name, jt, rnd.choice(bodies + ["nobody", None]),
                                        rnd.choice(bodies + ["nobody", 1])), kw, name))
        else:
            calls.append(("add_constraint", (Make(_constraint_maker(rnd, mb, name, rnd.choice(bodies + ["nobody"]))),),
                          {}, name))
        if rnd.random() < 0.2:
            calls.append(("add_spring", (name, rnd.choice(bodies + ["nobody"]), rnd.choice(BUILDER_VALUES),
                                         rnd.choice(bodies), rnd.choice(BUILDER_VALUES), rnd.choice(BUILDER_VALUES)),
                          {}, name))
    return calls


def _constraint_maker(rnd, mb, name, body):
    return rnd.choice([
                lambda: mb.PointOnPlane(name, body, point=rnd.choice(BUILDER_VALUES),
                                        normal=rnd.choice(BUILDER_VALUES)),
                lambda: mb.RollingDisc(name, body, radius=rnd.choice(BUILDER_VALUES), axis=rnd.choice(BUILDER_VALUES)),
                lambda: mb.UserConstraint(name, rnd.choice([lambda q, t: q[:1], lambda q, t: 1 / 0, None, 3,
                                                            lambda q, t: [math.nan], lambda q: q]),
                                          nrows=rnd.choice([None, 1, 0, -1, "x"])),
                lambda: mb.VelocityConstraint(name, rnd.choice([lambda q, t: [[1.0] * 50], None, "x"])),
                lambda: rnd.choice(BUILDER_VALUES)])


# ---- running the cases ---------------------------------------------------------------------------------------------
def parse_path(text):
    """``bodies[3].inertia`` -> ``("bodies", 3, "inertia")`` (the inverse of ``format_path``)."""
    parts = []
    for m in re.finditer(r'\[("(?:[^"\\]|\\.)*")\]|\[(-?\d+)\]|\.?([^.\[\]]+)', text):
        parts.append(json.loads(m.group(1)) if m.group(1) else int(m.group(2)) if m.group(2) else m.group(3))
    return tuple(parts)


def _exists(data, parts):
    try:
        _get(data, parts)
        return True
    except (KeyError, IndexError, TypeError):
        return False


def check_file(case, directory):
    """Load the file of ``case``: a ModelFile, or a ``ModelError`` whose message names the place of each problem.
    Any other exception propagates (a bug). Returns the ModelFile or the exception."""
    from multibody.errors import ModelError
    from multibody.io import load
    from multibody.io.documents import ModelFileError

    path = Path(directory) / f"model{case.suffix}"
    path.write_bytes(case.data)
    try:
        return load(path)
    except ModelError as exc:
        msg = str(exc)
        assert str(path) in msg, (case.label, msg)
        if not isinstance(exc, ModelFileError):
            assert exc.element, (case.label, msg)
            return exc
        assert exc.problems, (case.label, msg)
        first = exc.problems[0]
        assert (first.path or "(file)") in msg, (case.label, msg)
        if case.names and not case.suffix == ".json":   # the document was read: each problem has its place
            try:
                data = yaml.safe_load(case.data)
            except yaml.YAMLError:
                data = None
            for p in exc.problems:
                assert p.path, (case.label, str(p))
                assert "\n" not in str(p), (case.label, str(p))
                if isinstance(data, dict):
                    parts = parse_path(p.path)
                    assert _exists(data, parts[:-1]) or _exists(data, parts), (case.label, str(p))
        return exc


def run_builder(calls, mb):
    """Make the builder calls then build: each step ends normally or in a ``ModelError`` naming the element (its
    name, when the name is a non-empty string). Returns the Model, or None."""
    from multibody.errors import ModelError

    b = mb.ModelBuilder()
    for method, args, kwargs, name in calls:
        try:
            args = [a.make() if isinstance(a, Make) else a for a in args]
            kwargs = {k: (v.make() if isinstance(v, Make) else v) for k, v in kwargs.items()}
        except ModelError as exc:   # a joint type, placement or constraint with bad arguments
            assert str(exc), method
            continue
        try:
            getattr(b, method)(*args, **kwargs)
        except ModelError as exc:
            msg = str(exc)
            if isinstance(name, str) and name and method != "add_constraint" or (
                    method == "add_constraint" and isinstance(args[0], mb.model.constraints.Constraint)):
                assert str(name) in msg or repr(name) in msg, (method, name, msg)
    try:
        return b.build()
    except ModelError as exc:
        assert exc.element is not None, str(exc)
        return None
