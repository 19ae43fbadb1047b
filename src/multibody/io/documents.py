"""Reading a model file as data, and checking it against the published JSON Schema.

YAML is read in two safe steps: ``yaml.compose`` with the safe loader (libyaml's when PyYAML has it) builds
the node tree without constructing any object, so every tag can be checked first (only the plain data tags —
null, bool, int, float, str, seq, map — are accepted; ``!!python/object/apply:os.system`` is a problem
reported with its place in the file) and the line of every value recorded; then the safe constructor of
``yaml.safe_load`` builds the data from that tree.

Plain values are read as YAML 1.2's core schema reads them, not as YAML 1.1 (PyYAML's default) does: a number is a
decimal integer (``12``, ``-3``), a decimal float (``0.5``, ``1e-7``, ``.5``) or ``.inf``/``.nan``; a boolean
is ``true`` or ``false``; null is ``null``, ``~`` or nothing. Everything else is a string, so ``1:30`` is not
the sexagesimal 90, ``2024-01-01`` is not a date, ``yes``/``no``/``on``/``off`` are not booleans, ``0x10``,
``0o17`` and ``1_000`` are not numbers (where a number is expected, such a string is reported with its key and
line). Merge keys (``<<: *defaults``) are a YAML 1.1 feature and refused by name; aliases of whole values are
read, within bounds on the expanded document (values and bytes: an "alias bomb" is refused).

JSON is read with :mod:`json` (``NaN`` and ``Infinity`` refused). The schema (``model.schema.json``, packaged with multibody) is checked
with :mod:`jsonschema` (draft 2020-12); every violation becomes one :class:`Problem` with the path of the
offending value, such as ``bodies[3].mass``.
"""
import difflib
import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from multibody.errors import ModelError

__all__ = ["Problem", "ModelFileError", "format_path", "read_document", "parse_text", "schema", "schema_problems"]

#: the YAML tags a model file may hold: plain data only
SAFE_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "str", "seq", "map")}
MERGE_TAG = "tag:yaml.org,2002:merge"
#: largest number of values (aliases expanded) accepted in a YAML document
MAX_NODES = 1_000_000
#: largest size of a model file, and of its values with aliases expanded (bytes of text); save_model refuses a model
#: that would not load back
MAX_BYTES = 16_000_000
#: deepest nesting of lists and mappings accepted in a document (a model file needs fewer than 10 levels; libyaml's
#: composer and the schema check recurse, and libyaml's crashes on a stack overflow)
MAX_DEPTH = 100


@dataclass(frozen=True)
class Problem:
    """One problem of a model file: ``path`` to the value in the file (``"bodies[3].inertia"``, ``""`` for the
    whole document), ``message``, and the ``line`` (YAML files) when known."""

    path: str
    message: str
    line: int = None

    def __str__(self):   # one line: a name or an expression from the file may hold line breaks
        return f"{self.path or '(file)'}: {self.message}".replace("\r", "\\r").replace("\n", "\\n")


class ModelFileError(ModelError):
    """A model file with problems: ``problems`` lists every one (:class:`Problem`), ``source`` the file."""

    def __init__(self, problems, source="model file"):
        self.problems = list(problems)
        self.source = str(source)
        first = self.problems[0] if self.problems else Problem("", "invalid")
        more = f" (and {len(self.problems) - 1} more problem{'s' if len(self.problems) > 2 else ''})" \
            if len(self.problems) > 1 else ""
        super().__init__(f"{self.source}: {first}{more}", element=first.path or self.source)

    def report(self):
        """Every problem on its own line, ``FILE:LINE: PATH: MESSAGE``."""
        return "\n".join(f"{self.source}{':' + str(p.line) if p.line else ''}: {p}" for p in self.problems)


def format_path(parts):
    """``("bodies", 3, "inertia")`` -> ``"bodies[3].inertia"``; keys that are not identifiers are quoted."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        elif isinstance(p, str) and p.isidentifier():
            out += f".{p}" if out else p
        else:
            out += f"[{json.dumps(str(p))}]"
    return out


# ---- YAML ----------------------------------------------------------------------------------------------------
def _walk_yaml(root):
    """Lines of the values and the problems of the composed YAML tree (unsafe tags, duplicate keys). A value with
    an unsafe tag is replaced by null in the tree, so that the rest of the document can still be checked."""
    import yaml

    lines, problems = {}, []
    null = "tag:yaml.org,2002:null"
    stack = [(root, (), None)]
    seen_nodes = set()   # a node named by aliases is checked once, at its first place
    checker = _core_constructor()("")
    while stack:
        node, path, replace = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        where = format_path(path)
        lines.setdefault(where, node.start_mark.line + 1)
        if node.tag == MERGE_TAG:   # '<<' anywhere but as a key is a string
            node.tag = "tag:yaml.org,2002:str"
        if node.tag not in SAFE_TAGS:
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            problems.append(Problem(where, f"the YAML tag '{tag}' is not allowed: a model file holds data only "
                                           "(numbers, strings, lists, mappings)", node.start_mark.line + 1))
            blank = yaml.ScalarNode(null, "", node.start_mark, node.end_mark)
            if replace is None:
                return lines, problems, None
            replace(blank)
            continue
        bad = _bad_value(node, checker)
        if bad:
            problems.append(Problem(where, bad, node.start_mark.line + 1))
            if replace is None:
                return lines, problems, None
            replace(yaml.ScalarNode(null, "", node.start_mark, node.end_mark))
            continue
        if isinstance(node, yaml.MappingNode):
            merges = [key for key, _ in node.value if isinstance(key, yaml.ScalarNode) and key.tag == MERGE_TAG]
            for key in merges:
                problems.append(Problem(where, "a YAML merge key ('<<: *name') is not read in a model file (it is "
                                               "YAML 1.1, not 1.2): write the keys out (an alias '*name' of a whole "
                                               "value is read)", key.start_mark.line + 1))
            if merges:
                node.value[:] = [(k, v) for k, v in node.value if k.tag != MERGE_TAG]
            seen = set()
            for i, (key, value) in enumerate(node.value):
                if not isinstance(key, yaml.ScalarNode) or key.tag not in SAFE_TAGS:
                    problems.append(Problem(where, "mapping keys must be plain strings", key.start_mark.line + 1))
                    node.value[i] = (yaml.ScalarNode("tag:yaml.org,2002:str", f"<key {i}>", key.start_mark,
                                                     key.end_mark), value)
                    continue
                if key.value in seen:
                    problems.append(Problem(format_path(path + (key.value,)), "the key is given twice",
                                            key.start_mark.line + 1))
                seen.add(key.value)

                def put(new, node=node, i=i, key=key):
                    node.value[i] = (key, new)

                stack.append((value, path + (key.value,), put))
        elif isinstance(node, yaml.SequenceNode):
            for k, item in enumerate(node.value):
                def put(new, node=node, k=k):
                    node.value[k] = new

                stack.append((item, path + (k,), put))
    return lines, problems, root


def _yaml_depth(text):
    """A problem when the YAML ``text`` nests more than MAX_DEPTH lists and mappings, else None. Read as a stream
    of parser events (which does not recurse), before the composer (which does)."""
    import yaml

    depth = 0
    for event in yaml.parse(text, Loader=_safe_loader()):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                return Problem("", f"the document nests lists and mappings more than {MAX_DEPTH} levels deep",
                               event.start_mark.line + 1)
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
    return None


_KINDS = {"map": "MappingNode", "seq": "SequenceNode"}


def _bad_value(node, checker):
    """Why a node with a plain data tag cannot be built (``!!int 'x'``, ``!!seq {a: 1}``, ``!!map 1``), or None."""
    import yaml

    kind = node.tag.rsplit(":", 1)[-1]
    want = _KINDS.get(kind, "ScalarNode")
    if type(node).__name__ != want:
        what = {"MappingNode": "a mapping", "SequenceNode": "a list", "ScalarNode": "a single value"}
        return f"the YAML tag '!!{kind}' is given to {what[type(node).__name__]}"
    if isinstance(node, yaml.ScalarNode) and kind in ("int", "float", "bool", "null"):
        try:
            checker.construct_object(node)
        except ValueError as exc:   # an integer beyond the floats
            return str(exc)
        except (TypeError, KeyError, ArithmeticError, yaml.YAMLError):
            return (f"'{node.value[:40]}' is not a valid !!{kind} (model files read YAML 1.2 numbers: decimal "
                    "integers and floats, .inf, .nan; booleans true and false)")
    return None


def _children(node):
    import yaml

    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _size_problem(root):
    """A problem when the composed tree refers to itself (a recursive alias) or holds, aliases expanded, more than
    MAX_NODES values or more than ten times its own number of values beyond 10 000, or more than MAX_BYTES bytes of
    text (an alias bomb, "billion laughs", or one long string named many times), else None. Sizes are counted on
    the tree's nodes (each once), not on the expansion."""
    size, nbytes, unique, unique_bytes, active = {}, {}, 0, 0, set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            own = len(node.value) if isinstance(node.value, str) else 0
            nbytes[key] = own + sum(nbytes[id(c)] for c in _children(node))
            unique_bytes += own
            continue
        if key in size:
            continue
        if key in active:
            return Problem("", "an alias refers to a value that contains it (a recursive alias): a model file is a "
                               "tree of values", node.start_mark.line + 1)
        active.add(key)
        unique += 1
        stack.append((node, True))
        for c in _children(node):
            if id(c) in active:
                return Problem("", "an alias refers to a value that contains it (a recursive alias): a model file is "
                                   "a tree of values", c.start_mark.line + 1)
            if id(c) not in size:
                stack.append((c, False))
    total, total_bytes = size[id(root)], nbytes[id(root)]
    if total > MAX_NODES or (total > 10_000 and total > 10 * unique):
        return Problem("", f"the aliases of the document expand it to {total} values ({unique} written): too many "
                           "for a model file")
    if total_bytes > MAX_BYTES:
        return Problem("", f"the aliases of the document expand its text to {total_bytes} bytes ({unique_bytes} "
                           f"written): a model file holds at most {MAX_BYTES}")
    return None


def _safe_loader():
    """PyYAML's safe loader: libyaml's C version when PyYAML was built with it (the same rules, faster)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: the plain scalars that are not strings, as YAML 1.2's core schema reads them (see the module docstring)
CORE_SCALARS = {
    "null": r"^(?:~|null|Null|NULL|)$",
    "bool": r"^(?:true|True|TRUE|false|False|FALSE)$",
    "int": r"^[-+]?[0-9]+$",
    "float": r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
}
#: the decimal digits of the largest integer a model file may hold (beyond, it is not a float either)
MAX_INT_DIGITS = 309


@lru_cache(maxsize=1)
def _core_loader():
    """The safe loader (C when available) with YAML 1.2 core-schema resolvers, plus the ``<<`` merge key (recognized
    only to be refused by name)."""
    import re

    import yaml

    loader = type("CoreSchemaLoader", (_safe_loader(),), {"yaml_implicit_resolvers": {}})
    first = {"null": ["~", "n", "N", ""], "bool": list("tTfF"), "int": list("-+0123456789"),
             "float": list("-+0123456789.")}
    for kind, pattern in CORE_SCALARS.items():
        loader.add_implicit_resolver(f"tag:yaml.org,2002:{kind}", re.compile(pattern), first[kind])
    loader.add_implicit_resolver(MERGE_TAG, re.compile(r"^<<$"), ["<"])
    return loader


@lru_cache(maxsize=1)
def _core_constructor():
    """A safe constructor that builds the plain scalars by the rules of :data:`CORE_SCALARS` (``010`` is ten; an
    explicit ``!!int 0x10``, ``!!float 1:30`` or ``!!bool yes`` is an error)."""
    import re

    import yaml
    from yaml.constructor import ConstructorError

    patterns = {kind: re.compile(p) for kind, p in CORE_SCALARS.items()}

    def scalar(kind, convert):
        def construct(self, node):
            value = self.construct_scalar(node)
            if not patterns[kind].match(value):
                raise ConstructorError(None, None, f"'{value[:40]}' is not a YAML 1.2 {kind}", node.start_mark)
            return convert(value)
        return construct

    def integer(text):
        digits = text.lstrip("+-")
        if len(digits.lstrip("0")) > MAX_INT_DIGITS:
            raise ValueError(f"the integer {text[:20]}... has {len(digits)} digits: beyond the floating-point range")
        return int(text, 10)

    def real(text):
        low = text.lower().lstrip("+")
        return {".inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}.get(low) or float(text)

    cls = type("CoreSchemaConstructor", (yaml.SafeLoader,), {})
    cls.add_constructor("tag:yaml.org,2002:int", scalar("int", integer))
    cls.add_constructor("tag:yaml.org,2002:float", scalar("float", real))
    cls.add_constructor("tag:yaml.org,2002:bool", scalar("bool", lambda text: text.lower() == "true"))
    cls.add_constructor("tag:yaml.org,2002:null", scalar("null", lambda text: None))
    return cls


def _read_yaml(text):
    import yaml

    try:
        deep = _yaml_depth(text)
        if deep is not None:
            return None, {}, [deep]
        root = yaml.compose(text, Loader=_core_loader())
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, {}, [Problem("", f"YAML syntax: {what}", mark.line + 1 if mark else None)]
    if root is None:
        return None, {}, [Problem("", "the file is empty")]
    big = _size_problem(root)
    if big is not None:
        return None, {}, [big]
    lines, problems, root = _walk_yaml(root)
    if root is None:
        return None, lines, problems
    # the data are built from the checked tree by the safe constructor (that of yaml.safe_load), which knows only
    # the plain data tags; unsafe values were replaced by null (and reported) so that the rest can be checked
    try:
        return _core_constructor()("").construct_document(root), lines, problems
    except (ValueError, yaml.YAMLError) as exc:   # a value _walk_yaml did not foresee: one line, not a traceback
        return None, lines, problems + [Problem("", f"YAML: {str(exc).splitlines()[0]}")]


# ---- JSON ----------------------------------------------------------------------------------------------------
def _refuse_constant(name):
    raise ValueError(f"{name} is not a number a model file may hold")


def _json_int(text):
    if len(text.lstrip("-").lstrip("0")) > MAX_INT_DIGITS:
        raise ValueError(f"the integer {text[:20]}... has {len(text.lstrip('-'))} digits: beyond the floating-point "
                         "range")
    return int(text)


def _read_json(text):
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_int=_json_int)
    except RecursionError:   # the decoder recurses into nested lists and objects
        return None, {}, [Problem("", f"the document nests lists and mappings more than {MAX_DEPTH} levels deep")]
    except json.JSONDecodeError as exc:
        return None, {}, [Problem("", f"JSON syntax: {exc.msg} (column {exc.colno})", exc.lineno)]
    except ValueError as exc:
        return None, {}, [Problem("", f"JSON: {exc}")]
    if _too_deep(data):
        return None, {}, [Problem("", f"the document nests lists and mappings more than {MAX_DEPTH} levels deep")]
    return data, {}, []


def _too_deep(data):
    """Whether ``data`` nests lists and mappings more than MAX_DEPTH levels deep (checked without recursion)."""
    stack = [(data, 0)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, (dict, list)):
            if d >= MAX_DEPTH:
                return True
            stack.extend((v, d + 1) for v in (node.values() if isinstance(node, dict) else node))
    return False


def parse_text(text, suffix):
    """``(data, lines, problems)`` of a YAML (``suffix`` .yaml/.yml) or JSON (.json) text."""
    if len(text) > MAX_BYTES:
        return None, {}, [Problem("", f"the text has {len(text)} characters; a model file holds at most {MAX_BYTES}")]
    if suffix == ".json":
        data, lines, problems = _read_json(text)
    else:
        data, lines, problems = _read_yaml(text)
    if not problems and not isinstance(data, dict):
        problems = [Problem("", f"a model file is a mapping (name:, bodies:, joints:, ...), got a "
                                f"{type(data).__name__}")]
    return data, lines, problems + _key_problems(data, (), lines)


def _key_problems(data, parts, lines):
    """A problem at every mapping key that is not a string (YAML reads ``1e-1:``, ``true:`` or ``null:`` as a number,
    a boolean or null), and the key replaced by its text, so that what reads the data meets names only."""
    problems = []
    if isinstance(data, dict):
        for key in list(data):
            value = data[key]
            if not isinstance(key, str):
                name = str(key)
                where = format_path(parts + (name,))
                problems.append(Problem(where, f"a key is a name; {key!r} was read as {type(key).__name__} (quote "
                                               "it)", lines.get(where)))
                del data[key]
                data.setdefault(name, value)
                key = name
            problems += _key_problems(value, parts + (key,), lines)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            problems += _key_problems(value, parts + (i,), lines)
    return problems


def read_document(path):
    """Read a model file: ``(data, lines, problems)``. ``lines`` maps value paths to line numbers (YAML)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise ModelError(f"'{path}': a model file ends in .yaml, .yml or .json (or .urdf for a URDF robot)",
                         element=str(path))
    return parse_text(read_text(path), suffix)


def read_text(path):
    """The UTF-8 text of the file ``path`` (a model file or a URDF), or a ModelError naming the file."""
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ModelError(f"'{path}': the file has {size} bytes; a model file or URDF read here holds at most "
                             f"{MAX_BYTES}", element=str(path))
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ModelError(f"'{path}': no such file", element=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"'{path}': cannot be read ({exc})", element=str(path)) from None


# ---- schema --------------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def schema():
    """The JSON Schema of model files (``multibody/io/model.schema.json``) as a dict."""
    return json.loads(resources.files("multibody.io").joinpath("model.schema.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _validator():
    try:
        import jsonschema
    except ImportError:   # a declared dependency; without it the loader's own checks still apply
        return None
    return jsonschema.Draft202012Validator(schema())


def _short(value, limit=60):
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _message(error):
    """One problem per schema violation: (path parts, message)."""
    v, inst, sch, path = error.validator, error.instance, error.schema, tuple(error.absolute_path)
    desc = sch.get("description") if isinstance(sch, dict) else None
    if v == "required":
        key = error.message.split("'")[1] if "'" in error.message else error.message
        return path + (key,), "missing (required here)"
    if v == "additionalProperties":
        allowed = sorted(sch.get("properties", {}))
        out = []
        for key in sorted(set(inst) - set(allowed), key=str):
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f" (expected: {', '.join(allowed)})"
            out.append((path + (key,), f"unknown key{hint}"))
        return out
    if v == "enum":
        return path, f"{_short(inst)} is not one of: {', '.join(map(str, error.validator_value))}"
    if v == "const":
        return path, f"must be {_short(error.validator_value)}, got {_short(inst)}"
    if v == "type":
        if error.validator_value == "boolean":
            hint = (" (YAML 1.1's yes, no, on and off are strings in a model file)" if isinstance(inst, str)
                    and inst.lower() in ("yes", "no", "on", "off", "y", "n") else "")
            return path, f"expected true or false, got {_short(inst)}{hint}"
        return path, f"expected {desc or error.validator_value}, got {_short(inst)}"
    if v in ("exclusiveMinimum", "minimum"):
        op = ">" if v == "exclusiveMinimum" else ">="
        return path, f"must be {op} {error.validator_value}, got {_short(inst)}"
    if v in ("minItems", "maxItems"):
        return path, f"expected {desc or 'a different number of items'}, got {len(inst)} item{'s' * (len(inst) != 1)}"
    if v in ("anyOf", "oneOf"):
        alts = error.validator_value
        keys = [a["required"][0] for a in alts if isinstance(a, dict) and set(a) == {"required"}
                and len(a["required"]) == 1]
        if keys and len(keys) == len(alts):     # one of these keys must be there (a model's bodies, beams or cables)
            return path + (keys[0],), f"missing (required here: {' or '.join(keys)})"
        return path, f"expected {desc or 'another kind of value'}, got {_short(inst)}"
    if v == "minLength":
        return path, "must not be empty"
    if v in ("minProperties", "maxProperties"):
        return path, f"expected {desc}" if desc else error.message
    if v == "dependentRequired":
        keys = sorted({k for pair in error.validator_value.items() for k in (pair[0], *pair[1])})
        return path, f"{' and '.join(keys)} go together: give both"
    return path, error.message


def schema_problems(data, lines=None):
    """Every violation of the schema by ``data``, as :class:`Problem` objects sorted by path."""
    validator = _validator()
    if validator is None:
        return []
    lines = lines or {}
    out = []
    for error in validator.iter_errors(data):
        items = _message(error)
        for parts, msg in (items if isinstance(items, list) else [items]):
            where = format_path(parts)
            line = lines.get(where)
            k = len(parts)
            while line is None and k > 0:
                k -= 1
                line = lines.get(format_path(parts[:k]))
            out.append(Problem(where, msg, line))
    return sorted(set(out), key=lambda p: (p.line or 0, p.path, p.message))
