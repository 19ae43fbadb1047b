"""Model files: a YAML or JSON description of everything the ``ModelBuilder`` expresses, and back.

A model file is data; the JSON Schema ``multibody/io/model.schema.json`` describes every key::

    name: pendulum
    gravity: [0, 0, -9.81]
    base_motion: {kind: harmonic, axis: [1, 0, 0], amplitude: 0.01, omega: 30}   # optional: a moving ground
    bodies:
      - {name: rod, mass: 1.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}
    joints:
      - {name: hinge, type: revolute, axis: [0, 1, 0], parent: ground, child: rod, damping: 0.01}
    initial: {q: {hinge: 0.5}}
    simulation: {method: DOP853, t_end: 5, rtol: 1e-10}

Loading goes through the public ``ModelBuilder`` (every check of the builder applies) after the schema: the
loader collects every problem with its path in the file (``bodies[3].inertia: ...``) and raises one
:class:`~multibody.io.documents.ModelFileError` listing them all. Time-varying efforts and constraint
functions are expressions checked by :mod:`multibody.io.expressions` (never evaluated as Python).

Saving writes the Model's own description (``model.bodies``, ``model.joints``, ``model.cut_joints``,
``model.springs``, ``model.constraints``, the joint spring-damper arrays, ``model.metadata``), so that
``load(save(model))`` builds the same packed arrays. What a file cannot hold is refused with a
``ModelError`` naming it: a symbolic model, a Python torque callback, a ``UserConstraint`` or
``VelocityConstraint`` holding Python functions (those made from expressions are saved), a base motion given by
Python functions (the kinds ``harmonic`` and ``rotation`` are saved as data).
"""
import math
import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from multibody.errors import InertiaWarning, ModelError
from multibody.io.documents import (MAX_BYTES, ModelFileError, Problem, format_path, parse_text, read_document,
                                    schema_problems)
from multibody.io.expressions import Expression, constant, parse_expression
from multibody.model import (GROUND, BaseMotion, Cylindrical, Fixed, Free, ModelBuilder, Placement, Planar, PointOnPlane,
                             PointOnProfile, Prismatic, Profile, Revolute, RollingDisc, RollingOnProfile, Spherical,
                             Universal, UserConstraint, VelocityConstraint, rotation_about)
from multibody.model.constraints import LoopJoint
from multibody.model.geometry import Box, Cylinder, Mesh, Sphere, shape_from_dict
from multibody.model.inertia import inertia_defect

__all__ = ["ModelFile", "load", "load_model", "save_model", "validate_file", "model_from_dict", "model_to_dict",
           "ExpressionTorque", "ExpressionVector", "ExpressionMatrix", "Mimic", "mimic_constraint", "rpy_matrix",
           "quaternion_matrix", "FORMAT"]

FORMAT = "multibody-model"

#: file name of each joint type -> class
JOINT_TYPES = {"revolute": Revolute, "prismatic": Prismatic, "cylindrical": Cylindrical, "universal": Universal,
               "spherical": Spherical, "planar": Planar, "free": Free, "fixed": Fixed}
JOINT_NAMES = {cls: name for name, cls in JOINT_TYPES.items()}
#: keys of a joint entry that only some joint types take
AXIS_KEYS = {"revolute": ("axis",), "prismatic": ("axis",), "cylindrical": ("axis",), "universal": ("axis1", "axis2")}
CONSTRAINT_KEYS = {
    "point_on_plane": ("body", "point", "normal", "origin", "plane_body"),
    "point_on_profile": ("body", "profile", "point", "plane", "origin"),
    "rolling_disc": ("body", "radius", "axis", "center", "normal", "origin"),
    "rolling_on_profile": ("body", "radius", "profile", "center", "plane", "origin", "x_range"),
    "position": ("f",),
    "velocity": ("jacobian", "bias"),
    "mimic": ("joint", "reference", "multiplier", "offset"),
}
PLANES = {"xz": ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)), "yz": ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
          "xy": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))}


# ---- rotations written in files ------------------------------------------------------------------------------
def rpy_matrix(roll, pitch, yaw):
    """R = Rz(yaw) Ry(pitch) Rx(roll): roll, pitch, yaw about the fixed x, y, z axes (the URDF convention)."""
    cr, sr, cp, sp_, cy, sy = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw), \
        math.sin(yaw)
    return np.array([[cy * cp, cy * sp_ * sr - sy * cr, cy * sp_ * cr + sy * sr],
                     [sy * cp, sy * sp_ * sr + cy * cr, sy * sp_ * cr - cy * sr],
                     [-sp_, cp * sr, cp * cr]])


def quaternion_matrix(w, x, y, z):
    """Rotation matrix of the unit quaternion (w, x, y, z) (Euler parameters, scalar first)."""
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


# ---- expression-backed callables (what a file can hold of the Python callbacks) -----------------------------
def expression_variables(model, velocities=True):
    """The names an expression may use on ``model``: ``t``, ``q.<joint>.<coordinate>`` (and ``q.<joint>`` for a
    joint with one coordinate), and with ``velocities`` the same with ``v.`` -> ``(kind, index)``."""
    out = {"t": ("t", 0)}
    for j in model.joints[1:]:
        qn = j.joint.coordinate_names
        for k, c in enumerate(qn):
            out[f"q.{j.name}.{c}"] = ("q", j.q_slice.start + k)
        if len(qn) == 1:
            out[f"q.{j.name}"] = ("q", j.q_slice.start)
    if velocities:
        for j in model.joints[1:]:
            vn = [n.split(".", 1)[1] for n in _velocity_names(j)]
            for k, c in enumerate(vn):
                out[f"v.{j.name}.{c}"] = ("v", j.v_slice.start + k)
            if len(vn) == 1:
                out[f"v.{j.name}"] = ("v", j.v_slice.start)
    return out


def _velocity_names(j):
    names = j.joint.coordinate_names
    if not j.joint.linear_coordinates:
        names = ("wx", "wy", "wz") if j.joint.nv == 3 else ("wx", "wy", "wz", "vx", "vy", "vz")
    return [f"{j.name}.{c}" for c in names]


class ExpressionTorque:
    """Generalized forces ``tau(t, q, v)`` from expressions, one per velocity coordinate (a model file's
    time-varying efforts; ``ModelBuilder.set_torque`` takes it like any callback, and ``save_model`` writes it
    back). ``entries``: ``[(velocity name, Expression, origin)]``, origin ``"joint"`` (a joint's ``effort``) or
    ``"torque"`` (the file's ``torque:`` mapping); several entries on one coordinate add up.

    Example
    -------
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> model = simple_pendulum()
    >>> tau = ExpressionTorque(model, {"hinge.angle": "-2*v.hinge + sin(t)"})
    >>> tau(0.0, [0.1], [1.0]).tolist()
    [-2.0]
    """

    def __init__(self, model, expressions, origin="torque"):
        self.nv = model.nv
        variables = expression_variables(model)
        vnames = [n for j in model.joints[1:] for n in _velocity_names(j)]
        self.entries, self._fns = [], []
        items = expressions.items() if hasattr(expressions, "items") else expressions
        for item in items:
            name, expr, where = (item[0], item[1], item[2] if len(item) > 2 else origin)
            if not isinstance(expr, Expression):
                expr = parse_expression(expr, f"torque[{name!r}]")
            if name not in vnames:
                raise ModelError(f"{expr.where}: '{name}' is not a velocity coordinate of model '{model.name}' "
                                 f"(velocity names: {', '.join(vnames)})", element=expr.where)
            self._fns.append((vnames.index(name), expr.function(variables)))
            self.entries.append((name, expr, where))

    def __call__(self, t, q, v):
        tau = np.zeros(self.nv)
        for i, f in self._fns:
            tau[i] += f(t, q, v)
        return tau

    def __repr__(self):
        return "ExpressionTorque({" + ", ".join(f"{n!r}: {e.source!r}" for n, e, _ in self.entries) + "})"


class ExpressionVector:
    """``f(q, t) -> (m,)`` from m expressions of t and the coordinates (a position constraint in a file)."""

    def __init__(self, expressions, variables):
        self.expressions = list(expressions)
        self._fns = [e.function(variables) for e in self.expressions]

    def __call__(self, q, t):
        return np.array([f(t, q, None) for f in self._fns])

    @property
    def sources(self):
        return [e.source for e in self.expressions]


class ExpressionMatrix:
    """``J(q, t) -> (m, n)`` from rows of expressions of t and the coordinates (a velocity constraint)."""

    def __init__(self, rows, variables):
        self.rows = [list(r) for r in rows]
        self._fns = [[e.function(variables) for e in r] for r in self.rows]

    def __call__(self, q, t):
        return np.array([[f(t, q, None) for f in r] for r in self._fns])

    @property
    def sources(self):
        return [[e.source for e in r] for r in self.rows]


class Mimic:
    """``f(q, t) = q_joint − multiplier · q_reference − offset`` (one row): a joint that follows another, as URDF's
    ``<mimic>`` says; ``jacobian`` is its constant row. Made by :func:`mimic_constraint`."""

    def __init__(self, joint, reference, multiplier, offset, i, j, nq):
        self.joint, self.reference, self.multiplier, self.offset = joint, reference, float(multiplier), float(offset)
        self._i, self._j, self._nq = i, j, nq

    def __call__(self, q, t):
        return np.array([q[self._i] - self.multiplier * q[self._j] - self.offset])

    def jacobian(self, q, t):
        J = np.zeros((1, self._nq))
        J[0, self._i] = 1.0
        J[0, self._j] -= self.multiplier
        return J


def mimic_constraint(model, joint, reference, multiplier=1.0, offset=0.0, name=None):
    """The ``UserConstraint`` (default name ``<joint>_mimic``) that makes ``joint`` follow ``reference``:
    ``q_joint = multiplier · q_reference + offset``; both joints must have one plain coordinate (revolute,
    prismatic), else a ``ModelError`` naming them."""
    name = name or f"{joint}_mimic"
    element = f"constraint '{name}'"
    ends = []
    for role, jname in (("joint", joint), ("reference", reference)):
        j = next((j for j in model.joints[1:] + model.cut_joints if j.name == jname), None)
        if j is None:
            raise ModelError(f"mimic of joint '{joint}': the {role} '{jname}' is not a joint of model '{model.name}' "
                             f"(joints: {', '.join(model.joint_names[1:])})", element=element)
        if j.is_cut or j.joint.nq != 1 or not j.joint.linear_coordinates:
            raise ModelError(f"mimic of joint '{joint}': the {role} '{jname}' must be a tree joint with one coordinate "
                             f"(revolute or prismatic), got {type(j.joint).__name__}", element=element)
        ends.append(j.q_slice.start)
    for what, value in (("multiplier", multiplier), ("offset", offset)):
        if not math.isfinite(float(value)):
            raise ModelError(f"mimic of joint '{joint}': {what} must be finite, got {value}", element=element)
    f = Mimic(joint, reference, multiplier, offset, *ends, model.nq)
    return UserConstraint(name, f, nrows=1, jacobian=f.jacobian)


# ---- the loaded file -------------------------------------------------------------------------------------------
@dataclass
class ModelFile:
    """A loaded model file: the ``model``, the initial state ``q0``, ``v0`` (defaults: neutral, at rest) and the
    ``simulation`` settings (keys of ``multibody.simulate``: formulation, method, t_end, h, rtol, atol, n_out,
    and the formulation's ``options``)."""

    model: object
    q0: np.ndarray
    v0: np.ndarray
    simulation: dict = field(default_factory=dict)
    source: str = None

    def settings(self, **overrides):
        """The keyword arguments of ``multibody.simulate`` for this file, ``overrides`` (not None) replacing the
        file's values; the formulation's options are flattened in."""
        s = {k: v for k, v in self.simulation.items() if k != "options"}
        opts = dict(self.simulation.get("options", {}))
        for k, v in overrides.items():
            if v is not None:
                s[k] = v
        if "t_end" not in s:
            raise ModelError(f"{self.source or 'model file'}: simulation.t_end is not given (set it in the file or "
                             "pass it)", element="simulation.t_end")
        return {**s, **opts}

    def simulate(self, **overrides):
        """``multibody.simulate(model, q0, v0, **settings)`` with the file's settings (see :meth:`settings`)."""
        from multibody.simulation import simulate

        return simulate(self.model, self.q0, self.v0, **self.settings(**overrides))


class _Skip(Exception):
    """An element with a problem: stop processing it (the problem is recorded)."""


#: for each kind of element: (field, words of the builder's messages that point to it), in order of precedence
_ROUTES = {
    "body": [("mass", ("a body of mass 0",)), ("inertia", ("inertia", "principal moments")), ("mass", ("mass",)),
             ("com", ("com",)),
             ("name", ("defined twice", "reserved", "name"))],
    "joint": [("parent", ("parent body",)), ("child", ("child body",)),
              ("child_placement", ("child_placement", "closes a loop")),
              ("stiffness", ("stiffness",)), ("damping", ("damping",)), ("rest", ("rest",)), ("effort", ("effort",)),
              ("axis2", ("axis2",)), ("axis1", ("axis1",)), ("axis", ("axis",)),
              ("name", ("defined twice", "name")), ("parent", ("same body",))],
    "spring": [("stiffness", ("stiffness",)), ("damping", ("damping",)), ("rest_length", ("rest_length",)),
               ("body_b", ("body_b",)), ("body_a", ("body_a",)), ("point_b", ("point_b",)), ("point_a", ("point_a",)),
               ("name", ("defined twice",))],
    "constraint": [("reference", ("the reference",)), ("joint", ("mimic of joint",)), ("plane_body", ("plane_body",)),
                   ("profile", ("profile", "curvature", "h'_z")), ("x_range", ("x_range",)),
                   ("radius", ("radius",)), ("normal", ("normal",)), ("axis", ("axle", "axis")),
                   ("point", ("point",)), ("origin", ("origin",)), ("center", ("center",)), ("plane", ("plane",)),
                   ("body", ("body",)), ("name", ("name",)),
                   ("f", ("f(q, t)", "f returned")),
                   ("jacobian", ("jacobian",)), ("bias", ("bias",))],
}


class _Loader:
    """Turns the data of a file into a Model through the ModelBuilder, recording every problem."""

    def __init__(self, data, lines=None, problems=(), inertia=None):
        self.data = data
        #: the inertia policy (``multibody.model.inertia``): the caller's, else the file's inertia_check
        self.inertia = inertia
        self.lines = lines or {}
        self.problems = list(problems)
        self.schema_paths = {p.path for p in self.problems}
        self.broken = set()       # names of bodies that could not be added (references to them are not reported)
        self.paths = {}           # element ("body 'x'") -> path in the file ("bodies[3]")

    # ---- problems ----------------------------------------------------------------------------------------
    def fail(self, path, message):
        self.problems.append(Problem(path, message, self._line(path)))
        raise _Skip

    def _line(self, path):
        """The line of ``path`` or of the nearest enclosing value that has one (YAML files)."""
        while path:
            if path in self.lines:
                return self.lines[path]
            shorter = re.sub(r"(\.[A-Za-z_][A-Za-z0-9_]*|\[[^\]]*\])$", "", path)
            if shorter == path:
                break
            path = shorter
        return None

    def _has_schema_problem(self, path):
        return any(p == path or p.startswith(path + ".") or p.startswith(path + "[") for p in self.schema_paths)

    def record(self, exc, path, kind=None):
        """A ModelError -> a problem at the path of the field it names."""
        msg = str(exc)
        where = getattr(exc, "element", None)
        if isinstance(where, str) and msg.startswith(where + ": ") and re.match(r"^[A-Za-z_]\w*(\[|\.|$)", where):
            self.problems.append(Problem(where, msg[len(where) + 2:], self._line(where)))   # an expression's place
            return
        if isinstance(where, str) and where in self.paths:
            path = self.paths[where]
        target = path
        if kind in _ROUTES:
            body = msg.split(": ", 1)[1] if ": " in msg else msg
            for fieldname, words in _ROUTES[kind]:
                if any(w in body for w in words):
                    target = f"{path}.{fieldname}"
                    break
        self.problems.append(Problem(target, msg, self._line(target)))

    @contextmanager
    def element(self, path, kind=None):
        """Process one element of the file: a ModelError or a recorded problem stops it; the next goes on."""
        try:
            yield
        except _Skip:
            pass
        except ModelError as exc:
            self.record(exc, path, kind)

    # ---- values ------------------------------------------------------------------------------------------
    def number(self, value, path):
        try:
            return constant(value, path)
        except ModelError as exc:
            self.record(exc, path)
            raise _Skip from None

    def numbers(self, values, path, n=None):
        if n is not None and len(values) != n:
            self.fail(path, f"expected {n} numbers, got {len(values)}")
        return np.array([self.number(v, f"{path}[{k}]") for k, v in enumerate(values)], dtype=float)

    def matrix(self, rows, path):
        return np.array([self.numbers(r, f"{path}[{k}]", 3) for k, r in enumerate(rows)])

    def per_dof(self, value, path):
        if value is None:
            return None
        if isinstance(value, list):
            return self.numbers(value, path)
        return self.number(value, path)

    def placement(self, spec, path, element):
        """A Placement from ``{translation, rotation | rpy | quaternion | axis + angle}``."""
        if spec is None:
            return None
        given = [k for k in ("rotation", "rpy", "quaternion", "axis") if k in spec]
        if len(given) > 1:
            self.fail(path, f"give one rotation, not {' and '.join(given)}")
        p = self.numbers(spec.get("translation", [0, 0, 0]), f"{path}.translation", 3)
        R = None
        if "rotation" in spec:
            R = self.matrix(spec["rotation"], f"{path}.rotation")
        elif "rpy" in spec:
            R = rpy_matrix(*self.numbers(spec["rpy"], f"{path}.rpy", 3))
        elif "quaternion" in spec:
            qv = self.numbers(spec["quaternion"], f"{path}.quaternion", 4)
            n = float(np.linalg.norm(qv))
            if abs(n - 1.0) > 1e-3:
                self.fail(f"{path}.quaternion", f"a rotation quaternion (w, x, y, z) has unit length, got length "
                                                f"{n:.6g}")
            R = quaternion_matrix(*(qv / n))
        elif "axis" in spec:
            a = self.numbers(spec["axis"], f"{path}.axis", 3)
            if not np.linalg.norm(a) > 0:
                self.fail(f"{path}.axis", "the rotation axis must not be zero")
            R = rotation_about(a, self.number(spec.get("angle", 0.0), f"{path}.angle"))
        try:
            return Placement(R, p, element=element)
        except ModelError as exc:
            target = f"{path}.rotation" if "rotation" in str(exc) and "rotation" in spec else path
            self.fail(target, str(exc))

    # ---- the description ---------------------------------------------------------------------------------
    def build(self):
        d = self.data
        if self.problems and not isinstance(d, dict):
            return None
        name = d.get("name", "model") if isinstance(d.get("name", "model"), str) else "model"
        gravity = (0.0, 0.0, -9.81)
        with self.element("gravity"):
            if isinstance(d.get("gravity"), list) and not self._has_schema_problem("gravity"):
                gravity = self.numbers(d["gravity"], "gravity", 3)
        base = None
        with self.element("base_motion"):
            if isinstance(d.get("base_motion"), dict) and not self._has_schema_problem("base_motion"):
                base = self._base_motion(d["base_motion"])
        meta = dict(d.get("metadata") or {}) if isinstance(d.get("metadata"), dict) else {}
        policy = self.inertia or (d.get("inertia_check") if not self._has_schema_problem("inertia_check") else None)
        self.builder = b = ModelBuilder(gravity=gravity, name=name, base_motion=base, inertia=policy or "refuse")
        limits, old_visuals = {}, []
        for k, spec in enumerate(_list(d.get("bodies"))):
            self._body(b, k, spec, old_visuals)
        efforts = []
        for k, spec in enumerate(_list(d.get("joints"))):
            self._joint(b, k, spec, limits, efforts)
        for k, spec in enumerate(_list(d.get("springs"))):
            self._spring(b, k, spec)
        self._elements(b, d, old_visuals)
        pending = [self._constraint(k, spec) for k, spec in enumerate(_list(d.get("constraints")))]
        if limits:
            meta["limits"] = limits
        b.metadata = meta
        if self.problems or self.broken:
            return None
        # phase 1: bodies, joints, springs -> the coordinates that expressions name
        model = self._build(b)
        if model is None:
            return None
        torque = self._torque(model, efforts, d.get("torque"))
        if pending or torque is not None:
            for item in pending:
                if item is None:
                    continue
                path, make = item
                with self.element(path, "constraint"):
                    b.add_constraint(make(model))
            if torque is not None:
                b.set_torque(torque)
            if self.problems:
                return None
            model = self._build(b)   # phase 2: with the constraints and the time-varying efforts
        return model

    def _base_motion(self, spec):
        """The ``BaseMotion`` of ``base_motion: {kind: harmonic | rotation, ...}`` (seed 001 §3.1–3.2: body 0
        with a prescribed motion), given as data: numbers, never code."""
        params = {"kind": spec.get("kind")}
        for key, val in spec.items():
            if key == "axis":
                params[key] = self.numbers(val, "base_motion.axis", 3)
            elif key != "kind":
                params[key] = self.number(val, f"base_motion.{key}")
        try:
            return BaseMotion.from_data(params)
        except ModelError as exc:
            self.fail("base_motion", str(exc))

    def _build(self, b):
        try:
            return b.build(warn=False)   # one InertiaWarning per file, by the loader
        except ModelError as exc:
            path = self.paths.get(getattr(exc, "element", None), "")
            kind = "joint" if path.startswith("joints") else "constraint" if path.startswith("constraints") else None
            self.record(exc, path, kind)
            return None

    def _placeholder(self, b, bname):
        """A body that has a problem is still added (mass 1) so that the joints naming it are checked; the model
        is not built anyway."""
        if not isinstance(bname, str):   # a name of the wrong type (a list, a mapping): reported by the schema
            bname = repr(bname)
        self.broken.add(bname)
        if bname:
            try:
                b.add_body(bname, 1.0)
            except ModelError:
                pass

    def _body(self, b, k, spec, old_visuals):
        path = f"bodies[{k}]"
        bname = spec.get("name") if isinstance(spec, dict) else None
        if self._has_schema_problem(path) or not isinstance(spec, dict):
            self._placeholder(b, bname)
            return
        self.paths[f"body '{bname}'"] = path
        ok = False
        with self.element(path, "body"):
            inertia = spec.get("inertia", [0, 0, 0])
            mass, com, inertia = self.fields(
                lambda: self.number(spec["mass"], f"{path}.mass"),
                lambda: self.numbers(spec.get("com", [0, 0, 0]), f"{path}.com", 3),
                lambda: (self.matrix(inertia, f"{path}.inertia") if inertia and isinstance(inertia[0], list)
                         else self.numbers(inertia, f"{path}.inertia")))
            b.add_body(bname, mass=mass, com=com, inertia=inertia)
            old_visuals += [(bname, f"{path}.visuals[{i}]", v) for i, v in enumerate(spec.get("visuals") or [])]
            ok = True
        if not ok:
            self._placeholder(b, bname)

    def fields(self, *makers):
        """Each field's value (every maker is tried, so every field's problem is recorded); ``_Skip`` when any
        failed."""
        out, failed = [], False
        for make in makers:
            try:
                out.append(make())
            except _Skip:
                failed = True
        if failed:
            raise _Skip
        return out

    def _elements(self, b, d, old_visuals):
        """Frames, visual and collision elements (and the visuals written under bodies by earlier files)."""
        for k, spec in enumerate(_list(d.get("frames"))):
            path = f"frames[{k}]"
            if not self._has_schema_problem(path):
                with self.element(path):
                    b.add_frame(spec["name"], spec["body"], self.placement(spec.get("placement"), f"{path}.placement",
                                                                           f"frame '{spec['name']}'"))
        for kind in ("visuals", "collisions"):
            for k, spec in enumerate(_list(d.get(kind))):
                path = f"{kind}[{k}]"
                if self._has_schema_problem(path):
                    continue
                with self.element(path):
                    shape = self._shape(spec["shape"], f"{path}.shape")
                    place = self.placement(spec.get("placement"), f"{path}.placement", f"{kind[:-1]} '{spec['name']}'")
                    if kind == "visuals":
                        color = self.numbers(spec["color"], f"{path}.color") if "color" in spec else None
                        b.add_visual(spec["name"], spec["body"], shape, place, color)
                    else:
                        b.add_collision(spec["name"], spec["body"], shape, place,
                                        self.number(spec.get("friction", 1.0), f"{path}.friction"))
        names = {v["name"] for v in _list(d.get("visuals")) if isinstance(v, dict)}
        for bname, path, spec in old_visuals:
            with self.element(path):
                label = spec.get("name") or f"{bname}_visual"
                while label in names:
                    label += "_"
                names.add(label)
                b.add_visual(label, bname, self._old_shape(spec, path),
                             self.placement(spec.get("placement"), f"{path}.placement", f"visual at {path}"),
                             self.numbers(spec["color"], f"{path}.color") if "color" in spec else None)

    def _shape(self, spec, path):
        data = {"kind": spec["kind"]}
        for key, val in spec.items():
            if key in ("radius", "length"):
                data[key] = self.number(val, f"{path}.{key}")
            elif key in ("size", "scale"):
                data[key] = self.numbers(val, f"{path}.{key}", 3).tolist()
            elif key == "filename":
                data[key] = val
        try:
            return shape_from_dict(data, path)
        except ModelError as exc:
            self.fail(path, str(exc).removeprefix(f"{path}: "))

    def _old_shape(self, spec, path):
        """The shape of a visual written under a body (``mesh``/``scale``, ``box``, ``cylinder``, ``sphere``)."""
        try:
            if "mesh" in spec:
                return Mesh(spec["mesh"], self.numbers(spec["scale"], f"{path}.scale", 3) if "scale" in spec else 1.0)
            if "box" in spec:
                return Box(self.numbers(spec["box"], f"{path}.box", 3))
            if "cylinder" in spec:
                c = spec["cylinder"]
                return Cylinder(self.number(c["radius"], f"{path}.cylinder.radius"),
                                self.number(c["length"], f"{path}.cylinder.length"))
            if "sphere" in spec:
                return Sphere(self.number(spec["sphere"]["radius"], f"{path}.sphere.radius"))
        except ModelError as exc:
            self.fail(path, str(exc))
        self.fail(path, "a visual needs a shape: mesh, box, cylinder or sphere")

    def _joint(self, b, k, spec, limits, efforts):
        path = f"joints[{k}]"
        if not isinstance(spec, dict) or any(self._has_schema_problem(f"{path}.{key}") or not isinstance(
                spec.get(key), str) for key in ("name", "parent", "child")):
            return
        jname = spec["name"]
        element = f"joint '{jname}'"
        self.paths[element] = path
        # the values with a problem of the schema are left out; the others are still checked
        spec = {key: val for key, val in spec.items() if not self._has_schema_problem(f"{path}.{key}")}
        known_type = spec.get("type") in JOINT_TYPES
        with self.element(path, "joint"):
            try:
                values = self.fields(
                    lambda: self._joint_type(spec, path) if known_type else None,
                lambda: self.placement(spec.get("placement"), f"{path}.placement", f"{element} placement"),
                lambda: self.placement(spec.get("child_placement"), f"{path}.child_placement",
                                       f"{element} child_placement"),
                    lambda: dict(zip(("stiffness", "damping", "rest"), self.fields(
                        *[lambda key=key: self.per_dof(spec.get(key), f"{path}.{key}")
                          for key in ("stiffness", "damping", "rest")]))),
                    lambda: self._effort(spec, path, jname, efforts) if known_type else None,
                    lambda: self._limits(spec, path, jname, limits),
                    lambda: self._unilateral(spec, path))
            except _Skip:
                values = None
            if values is None or not known_type:   # reported: a stand-in checks the joint's name and bodies
                values = (Fixed(), None, None, {}, None, None, {})
            joint, placement, child_placement, forces, effort, _, unilateral = values
            b.add_joint(jname, joint, spec["parent"], spec["child"], placement=placement,
                        child_placement=child_placement, effort=effort, cut=bool(spec.get("cut", False)), **forces,
                        **unilateral)

    def _limits(self, spec, path, jname, limits):
        if spec.get("limits"):
            values = {key: (self._bound(val, f"{path}.limits.{key}") if key in ("lower", "upper") else
                            self.per_dof(val, f"{path}.limits.{key}").tolist() if isinstance(val, list) else
                            self.number(val, f"{path}.limits.{key}"))
                      for key, val in spec["limits"].items() if key != "stops"}
            for key in ("velocity", "effort", "friction"):
                if key in values and np.any(np.asarray(values[key]) < 0):
                    self.fail(f"{path}.limits.{key}", f"joint '{jname}': the {key} limit must be >= 0, got {values[key]}")
            if "lower" in values and "upper" in values:
                lo, hi = np.broadcast_arrays(np.asarray(values["lower"]), np.asarray(values["upper"]))
                if np.any(lo > hi):
                    self.fail(f"{path}.limits", f"joint '{jname}': the lower limit {values['lower']} is above the upper "
                                                f"limit {values['upper']}")
            limits[jname] = values

    def _unilateral(self, spec, path):
        """The stops (``limits.lower``, ``limits.upper``: finite numbers, or ±.inf, or left out), ``restitution``,
        ``latch`` and ``release`` of a joint, as ``add_joint`` takes them (``multibody.model.unilateral``)."""
        out = {}
        lim = spec.get("limits") or {}
        if lim.get("stops", True) and (lim.get("lower") is not None or lim.get("upper") is not None):
            out["limits"] = tuple(None if lim.get(key) is None else self._bound(lim[key], f"{path}.limits.{key}")
                                  for key in ("lower", "upper"))
        if spec.get("restitution") is not None:
            out["restitution"] = self.per_dof(spec["restitution"], f"{path}.restitution")
        lat = spec.get("latch")
        if isinstance(lat, list):   # null: no latch on that coordinate
            out["latch"] = [math.nan if v is None else self.number(v, f"{path}.latch[{k}]") for k, v in enumerate(lat)]
        elif lat is not None:
            out["latch"] = self.number(lat, f"{path}.latch")
        rel = spec.get("release")
        if isinstance(rel, dict):
            out["release"] = {"at": self.number(rel.get("at"), f"{path}.release.at"),
                              "mode": rel.get("mode", "separate")}
        elif rel is not None:
            out["release"] = self.number(rel, f"{path}.release")
        return out

    def _bound(self, value, path):
        """A limit: numbers (per coordinate or one), where ±inf (YAML ``.inf``) means no stop on that side."""
        values = value if isinstance(value, list) else [value]
        out = [v if isinstance(v, float) and math.isinf(v) else self.number(v, f"{path}[{k}]" if isinstance(
            value, list) else path) for k, v in enumerate(values)]
        return out if isinstance(value, list) else out[0]

    def _joint_type(self, spec, path):
        jtype = spec["type"]
        for key in ("axis", "axis1", "axis2"):
            if key in spec and key not in AXIS_KEYS.get(jtype, ()):
                self.fail(f"{path}.{key}", f"a {jtype} joint has no {key}: its axes are {', '.join(AXIS_KEYS[jtype])}"
                          if jtype in AXIS_KEYS else f"a {jtype} joint takes no axis")
        kw = dict(zip([k for k in AXIS_KEYS.get(jtype, ()) if k in spec], self.fields(
            *[lambda key=key: self.numbers(spec[key], f"{path}.{key}", 3)
              for key in AXIS_KEYS.get(jtype, ()) if key in spec])))
        try:
            return JOINT_TYPES[jtype](**kw)
        except ModelError as exc:
            self.record(exc, path, "joint")
            raise _Skip from None

    def _effort(self, spec, path, jname, efforts):
        """The constant efforts of a joint; its time-varying ones (expressions of t, q, v) go to ``efforts``."""
        effort = spec.get("effort")
        if effort is None:
            return None
        nv = JOINT_TYPES[spec["type"]].nv
        values = effort if isinstance(effort, list) else [effort] * nv
        if isinstance(effort, list) and len(effort) != nv:
            self.fail(f"{path}.effort", f"a {spec['type']} joint has {nv} velocity coordinate"
                                        f"{'s' * (nv != 1)}, got {len(effort)} efforts")
        const = []
        for i, val in enumerate(values):
            where = f"{path}.effort" + (f"[{i}]" if isinstance(effort, list) else "")
            expr = None if isinstance(val, (int, float)) else self._expression(val, where)
            if expr is None or not expr.names:
                const.append(self.number(val, where))
            else:   # a time-varying effort: part of the model's ExpressionTorque
                const.append(0.0)
                efforts.append((jname, i, expr))
        return np.array(const)

    def _expression(self, value, where):
        try:
            return parse_expression(value, where)
        except ModelError as exc:
            self.record(exc, where)
            raise _Skip from None

    def _spring(self, b, k, spec):
        path = f"springs[{k}]"
        if self._has_schema_problem(path) or not isinstance(spec, dict):
            return
        self.paths[f"spring '{spec['name']}'"] = path
        with self.element(path, "spring"):
            args = [self.number(spec.get(key, 0.0), f"{path}.{key}") for key in ("stiffness", "damping",
                                                                               "rest_length")]
            pa = self.numbers(spec.get("point_a", [0, 0, 0]), f"{path}.point_a", 3)
            pb = self.numbers(spec.get("point_b", [0, 0, 0]), f"{path}.point_b", 3)
            b.add_spring(spec["name"], spec["body_a"], pa, spec["body_b"], pb, *args)

    def _profile(self, spec, path, element):
        import sympy as sp

        x, z = sp.Symbol("x"), sp.Symbol("z")
        key = "h" if "h" in spec else "graph"
        expr = self._expression(spec[key], f"{path}.{key}")
        try:
            if key == "h":
                return Profile(expr.sympy({"x": x, "z": z}), x, z, element=element)
            return Profile.graph(expr.sympy({"x": x}), x, element=element)
        except ModelError as exc:
            if exc.element == f"{path}.{key}":
                self.record(exc, path)
                raise _Skip from None
            self.fail(f"{path}.{key}", str(exc))

    def _constraint(self, k, spec):
        """The constraint at ``constraints[k]``: ``(path, make(model) -> Constraint)`` or None (a problem)."""
        path = f"constraints[{k}]"
        if self._has_schema_problem(path) or not isinstance(spec, dict):
            return None
        ctype, cname = spec["type"], spec["name"]
        element = f"constraint '{cname}'"
        self.paths[element] = path
        result = None
        with self.element(path, "constraint"):
            for key in spec:
                if key not in ("name", "type") and key not in CONSTRAINT_KEYS[ctype]:
                    self.fail(f"{path}.{key}", f"a {ctype} constraint takes no {key} "
                                               f"(it takes: {', '.join(CONSTRAINT_KEYS[ctype])})")
            vec = {key: self.numbers(spec[key], f"{path}.{key}", 3)
                   for key in ("point", "normal", "origin", "center", "axis") if key in spec}
            if "radius" in spec:
                vec["radius"] = self.number(spec["radius"], f"{path}.radius")
            if "plane" in spec:
                plane = spec["plane"]
                vec["plane"] = plane if isinstance(plane, str) else [self.numbers(a, f"{path}.plane[{i}]", 3)
                                                                     for i, a in enumerate(plane)]
            if "profile" in spec:
                vec["profile"] = self._profile(spec["profile"], f"{path}.profile", element)
            if "x_range" in spec:
                vec["x_range"] = tuple(self.numbers(spec["x_range"], f"{path}.x_range", 2))
            if ctype == "point_on_plane":
                c = PointOnPlane(cname, spec["body"], plane_body=spec.get("plane_body", GROUND), **vec)
            elif ctype == "point_on_profile":
                c = PointOnProfile(cname, spec["body"], **vec)
            elif ctype == "rolling_disc":
                c = RollingDisc(cname, spec["body"], **vec)
            elif ctype == "rolling_on_profile":
                c = RollingOnProfile(cname, spec["body"], **vec)
            if ctype == "mimic":
                k, o = (self.number(spec.get(key, d), f"{path}.{key}") for key, d in (("multiplier", 1.0), ("offset", 0.0)))
                result = (path, lambda model: mimic_constraint(model, spec["joint"], spec["reference"], k, o, cname))
            elif ctype in ("position", "velocity"):
                result = (path, self._python_constraint(spec, path, ctype, cname))
            else:
                result = (path, lambda model, c=c: c)
        return result

    def _python_constraint(self, spec, path, ctype, cname):
        """A maker of the expression-backed constraint (the names are resolved on the built model)."""
        if ctype == "position":
            exprs = [self._expression(e, f"{path}.f[{i}]") for i, e in enumerate(spec["f"])]
            return lambda model: UserConstraint(cname, ExpressionVector(exprs, expression_variables(model, False)),
                                                nrows=len(exprs))
        rows = [[self._expression(e, f"{path}.jacobian[{i}][{j}]") for j, e in enumerate(r)]
                for i, r in enumerate(spec["jacobian"])]
        bias = [self._expression(e, f"{path}.bias[{i}]") for i, e in enumerate(spec.get("bias", []))]
        if bias and len(bias) != len(rows):
            self.fail(f"{path}.bias", f"expected one entry per row of the jacobian ({len(rows)}), got {len(bias)}")

        def make(model):
            for i, r in enumerate(rows):
                if len(r) != model.nv:
                    raise ModelError(f"{path}.jacobian[{i}]: expected nv = {model.nv} entries (velocities: "
                                     f"{', '.join(model.velocity_names())}), got {len(r)}",
                                     element=f"{path}.jacobian[{i}]")
            variables = expression_variables(model, False)
            return VelocityConstraint(cname, ExpressionMatrix(rows, variables),
                                      ExpressionVector(bias, variables) if bias else None, nrows=len(rows))

        return make

    def _torque(self, model, efforts, torque):
        entries = []
        for jname, i, expr in efforts:
            j = model.joint(jname)
            entries.append((_velocity_names(j)[i], expr, "joint"))
        for key, val in (torque or {}).items():
            where = format_path(("torque", key))
            try:
                entries.append((key, parse_expression(val, where), "torque"))
            except ModelError as exc:
                self.record(exc, where)
        if not entries:
            return None
        try:
            return ExpressionTorque(model, entries)
        except ModelError as exc:
            self.record(exc, "torque")
            return None

    # ---- initial state and simulation settings -----------------------------------------------------------
    def state(self, model, spec, path, kind):
        """q0 (``kind == "q"``) or v0 from a list or a mapping of joint / coordinate names."""
        n = model.nq if kind == "q" else model.nv
        x = model.neutral() if kind == "q" else np.zeros(n)
        if spec is None:
            return x
        names = model.coordinate_names() if kind == "q" else model.velocity_names()
        if isinstance(spec, list):
            if len(spec) != n:
                self.fail(path, f"expected n{kind} = {n} numbers ({', '.join(names)}), got {len(spec)}")
            x = self.numbers(spec, path)
        else:
            for key, val in spec.items():
                where = format_path(tuple(path.split(".")) + (key,))
                if key in names:
                    x[names.index(key)] = self.number(val, where)
                    continue
                try:
                    j = model.joint(key)
                except ModelError:
                    j = None
                if j is None or j.is_cut:
                    self.fail(where, f"'{key}' is neither a joint nor a {'coordinate' if kind == 'q' else 'velocity'}"
                                     f" name of the model (joints: {', '.join(model.joint_names[1:])})")
                sl = j.q_slice if kind == "q" else j.v_slice
                size = sl.stop - sl.start
                vals = self.numbers(val, where) if isinstance(val, list) else np.array([self.number(val, where)])
                if len(vals) != size:
                    names_j = names[sl]
                    self.fail(where, f"joint '{key}' has {size} {'coordinates' if kind == 'q' else 'velocities'} "
                                     f"({', '.join(names_j)}), got {len(vals)} value{'s' * (len(vals) != 1)}")
                x[sl] = vals
        if kind == "q":
            for j in model.joints[1:]:
                if not j.joint.linear_coordinates:
                    s = slice(j.q_slice.stop - 4, j.q_slice.stop)
                    nrm = float(np.linalg.norm(x[s]))
                    if abs(nrm - 1.0) > 1e-3:
                        self.fail(path, f"the quaternion (w, x, y, z) of joint '{j.name}' has length {nrm:.6g}; "
                                        "it must be a unit quaternion")
                    if abs(nrm - 1.0) > 4.0 * np.finfo(float).eps:   # a unit quaternion is kept as given
                        x[s] /= nrm
        return x

    def simulation(self, spec):
        from multibody.formulations.base import FORMULATIONS, formulation_options
        from multibody.integrate.adaptive import SOLVERS
        from multibody.integrate.fixed_step import METHODS

        out = {}
        spec = {k: v for k, v in spec.items() if not self._has_schema_problem(f"simulation.{k}")}
        for key in ("t_end", "h", "rtol", "atol"):
            if key in spec:
                with self.element(f"simulation.{key}"):
                    out[key] = self.number(spec[key], f"simulation.{key}")
        if "n_out" in spec:
            out["n_out"] = int(spec["n_out"])
        with self.element("simulation.formulation"):
            if "formulation" in spec:
                if spec["formulation"] not in FORMULATIONS:
                    self.fail("simulation.formulation", f"'{spec['formulation']}' is not one of: "
                                                        f"{', '.join(sorted(FORMULATIONS))}")
                out["formulation"] = spec["formulation"]
        with self.element("simulation.method"):
            if "method" in spec:
                m = str(spec["method"])
                if m.upper() not in METHODS and m.upper() not in SOLVERS:
                    self.fail("simulation.method", f"'{m}' is not one of: {', '.join(sorted(SOLVERS))} (adaptive), "
                                                   f"{', '.join(sorted(set(METHODS)))} (fixed step)")
                if m.upper() in METHODS and "h" not in spec:
                    self.fail("simulation.h", f"the fixed-step method {m} needs the step h")
                out["method"] = m
        options = spec.get("options") if isinstance(spec.get("options"), dict) else {}
        if "formulation" in spec and "formulation" not in out:
            return out
        with self.element("simulation.options"):
            accepted = formulation_options(out.get("formulation", "tree"))
            for key in options:
                if accepted is not None and key not in accepted:
                    self.fail(format_path(("simulation", "options", key)),
                              f"the {out.get('formulation', 'tree')} formulation has no option '{key}' (its options: "
                              f"{', '.join(accepted) or 'none'})")
            if options:
                out["options"] = dict(options)
        return out


def _list(value):
    return value if isinstance(value, list) else []


# ---- public functions --------------------------------------------------------------------------------------------
def _policy(strict, repair):
    """The inertia policy the readers' ``strict`` and ``repair`` ask for (None: the file's own)."""
    if strict and repair:
        raise ModelError("strict=True refuses the inertias that repair=True would move: choose one", element="strict")
    return "refuse" if strict else "repair" if repair else None


def _load_data(data, lines, problems, source, inertia=None):
    problems = list(problems)
    if isinstance(data, dict):   # values already reported (an unsafe YAML tag: null now) are not reported again
        seen = [p.path for p in problems]
        problems += [p for p in schema_problems(data, lines)
                     if not any(p.path == s or p.path.startswith(s + ".") or p.path.startswith(s + "[")
                                for s in seen)]
    loader = _Loader(data, lines, problems, inertia)
    model = loader.build() if isinstance(data, dict) else None
    q0 = v0 = None
    sim = {}
    if model is not None:
        with loader.element("initial"):
            init = data.get("initial") or {}
            q0 = loader.state(model, init.get("q"), "initial.q", "q")
            v0 = loader.state(model, init.get("v"), "initial.v", "v")
    if isinstance(data, dict) and isinstance(data.get("simulation"), dict):
        sim = loader.simulation(data["simulation"])
    if loader.problems or model is None:
        probs = loader.problems or [Problem("", "the model could not be built")]
        raise ModelFileError(sorted(dict.fromkeys(probs), key=lambda p: (p.line or 0, p.path)), source)
    notes = [f"body '{b.name}': {b.inertia_note}" for b in model.bodies if b.inertia_note]
    if notes:
        what = "kept as written" if loader.builder.inertia == "warn" else "moved to the nearest physical ones"
        warnings.warn(InertiaWarning(f"{source}: {len(notes)} inertia{'s' * (len(notes) > 1)} that no body has, "
                                     f"{what}: " + "; ".join(notes)), stacklevel=3)
    return ModelFile(model, q0, v0, sim, source)


def model_from_dict(data, source="<data>", *, strict=False, repair=False):
    """A :class:`ModelFile` from the data of a model file (a dict as ``yaml.safe_load`` gives it)."""
    return _load_data(data, {}, [] if isinstance(data, dict) else [Problem("", "a model file is a mapping")], source,
                      _policy(strict, repair))


def load(path, *, strict=False, repair=False):
    """Load a YAML or JSON model file: a :class:`ModelFile` (model, q0, v0, simulation settings). Every problem of
    the file is reported at once, with its path, in a :class:`~multibody.io.documents.ModelFileError`. Inertias
    that no body has follow the file's ``inertia_check`` (default: refused); ``strict=True`` refuses them whatever
    the file says, ``repair=True`` moves each to the nearest physical one (``multibody.model.inertia``)."""
    data, lines, problems = read_document(path)
    return _load_data(data, lines, problems, str(path), _policy(strict, repair))


def load_text(text, suffix=".yaml", source="<text>", *, strict=False, repair=False):
    """A :class:`ModelFile` from the text of a model file."""
    data, lines, problems = parse_text(text, suffix)
    return _load_data(data, lines, problems, source, _policy(strict, repair))


def load_model(path, floating_base=False, *, strict=False, repair=False, package_dirs=None, mimic=False):
    """The Model of a file, by extension: ``.yaml``/``.yml``/``.json`` model files, ``.urdf`` robots
    (``floating_base=True`` adds a free joint at the root link, ``package_dirs`` locate its meshes, ``mimic=True``
    makes its mimic joints constraints: see ``multibody.io.urdf``; model files say these themselves).
    ``strict=True`` refuses every inertia that no body has, ``repair=True`` moves each to the nearest physical one."""
    suffix = Path(path).suffix.lower()
    if suffix == ".urdf":
        from multibody.io.urdf import load_urdf

        return load_urdf(path, floating_base=floating_base, strict=strict, repair=repair, package_dirs=package_dirs,
                         mimic=mimic)
    for key, value in (("floating_base", floating_base), ("package_dirs", package_dirs), ("mimic", mimic)):
        if value:
            raise ModelError(f"'{path}': {key} applies to URDF files; a model file says it itself (a free joint at "
                             "the root, mesh paths, mimic constraints)", element=key)
    return load(path, strict=strict, repair=repair).model


def validate_file(path, *, strict=False):
    """Every problem of a model file (YAML, JSON or URDF) as a list of :class:`Problem` (empty: valid);
    ``strict=True`` counts every inertia that no body has as a problem."""
    try:
        if Path(path).suffix.lower() == ".urdf":
            from multibody.io.urdf import load_urdf

            load_urdf(path, strict=strict)
        else:
            load(path, strict=strict)
    except ModelFileError as exc:
        return exc.problems
    except ModelError as exc:
        return [Problem(getattr(exc, "element", "") or "", str(exc))]
    return []


# ---- saving -----------------------------------------------------------------------------------------------------
def _num(x):
    """A Python float (int when integral and small) for a file: exact (repr) and plain."""
    x = float(x)
    return x


def _vec(a):
    return [_num(x) for x in np.asarray(a, dtype=float).ravel()]


def _placement_dict(P):
    out = {}
    if np.any(P.translation != 0):
        out["translation"] = _vec(P.translation)
    if not np.array_equal(P.rotation, np.eye(3)):
        out["rotation"] = [_vec(r) for r in P.rotation]
    return out


def _inertia(I):
    I = np.asarray(I, dtype=float)
    if not np.any(I):
        return None
    if np.array_equal(I, np.diag(np.diag(I))):
        return _vec(np.diag(I))
    return [_vec(r) for r in I]


def _per_dof(values):
    values = np.asarray(values, dtype=float)
    if not np.any(values):
        return None
    return _num(values[0]) if np.all(values == values[0]) else _vec(values)


def _profile_text(profile):
    """The polynomial ``h(x, z)`` of a Profile's terms (exact coefficients, repr)."""
    parts = []
    for i, j, c in profile.terms:
        i, j = int(i), int(j)
        mono = "*".join(([f"x**{i}" if i > 1 else "x"] if i else []) + ([f"z**{j}" if j > 1 else "z"] if j else []))
        text = repr(abs(float(c))) + (f"*{mono}" if mono else "")
        parts.append(("- " if c < 0 else "+ ") + text)
    s = " ".join(parts)
    return s[2:] if s.startswith("+ ") else "-" + s[2:]


def _plane(e1, e2):
    for name, (a, b) in PLANES.items():
        if np.array_equal(e1, a) and np.array_equal(e2, b):
            return name
    return [_vec(e1), _vec(e2)]


def _constraint_dict(c):
    d = {"name": c.name}
    if isinstance(c, PointOnPlane):
        d.update(type="point_on_plane", body=c.body, point=_vec(c.point), normal=_vec(c.normal),
                 origin=_vec(c.origin))
        if c.plane_body != GROUND:
            d["plane_body"] = c.plane_body
    elif isinstance(c, PointOnProfile):
        d.update(type="point_on_profile", body=c.body, profile={"h": _profile_text(c.profile)}, point=_vec(c.point),
                 plane=_plane(c.e1, c.e2), origin=_vec(c.origin))
    elif isinstance(c, RollingDisc):
        d.update(type="rolling_disc", body=c.body, radius=_num(c.radius), axis=_vec(c.axis), center=_vec(c.center),
                 normal=_vec(c.normal), origin=_vec(c.origin))
    elif isinstance(c, RollingOnProfile):
        d.update(type="rolling_on_profile", body=c.body, radius=_num(c.radius),
                 profile={"h": _profile_text(c.profile)}, center=_vec(c.center), plane=_plane(c.e1, c.e2),
                 origin=_vec(c.origin), x_range=_vec(c.x_range))
    elif isinstance(c, UserConstraint) and isinstance(c.f, Mimic):
        d.update(type="mimic", joint=c.f.joint, reference=c.f.reference, multiplier=c.f.multiplier, offset=c.f.offset)
    elif isinstance(c, UserConstraint) and isinstance(c.f, ExpressionVector) and c.jacobian is None:
        d.update(type="position", f=c.f.sources)
    elif isinstance(c, VelocityConstraint) and isinstance(c.jacobian, ExpressionMatrix) and (
            c.bias is None or isinstance(c.bias, ExpressionVector)):
        d.update(type="velocity", jacobian=c.jacobian.sources)
        if c.bias is not None:
            d["bias"] = c.bias.sources
    else:
        raise ModelError(f"{c.element} ({type(c).__name__}) holds Python functions, which a model file cannot hold; "
                         "write it with expressions (a position constraint's f, a velocity constraint's jacobian and "
                         "bias) or save the model without it", element=c.element)
    return d


def model_to_dict(model, q0=None, v0=None, simulation=None):
    """The data of a model file describing ``model`` (and optionally its initial state and simulation settings):
    what :func:`save_model` writes. ``ModelError`` for what a file cannot hold (see the module docstring)."""
    if model.symbolic:
        element, what, value = model.symbolic_element()
        raise ModelError(f"model '{model.name}' is symbolic ({element}: {what} = {value}); a model file holds "
                         "numbers: substitute values first", element=element)
    from multibody.data import refuse_general_joints

    refuse_general_joints(model, "a model file (it names the built-in joint types)")
    meta = {k: v for k, v in model.metadata.items()}
    limits = _plain(meta.pop("limits")) if meta.get("limits") else {}     # written with the joints
    d = {"format": FORMAT, "version": 1, "name": model.name, "gravity": _vec(model.gravity)}
    if getattr(model, "base_motion", None) is not None:
        d["base_motion"] = model.base_motion.to_data()
    if any(inertia_defect(b.mass, b.com, b.inertia) for b in model.bodies):
        d["inertia_check"] = "warn"     # the model keeps inertias that no body has (a URDF's, or inertia="warn")
    bodies = []
    for body in model.bodies:
        e = {"name": body.name, "mass": _num(body.mass)}
        if np.any(body.com != 0):
            e["com"] = _vec(body.com)
        inertia = _inertia(body.inertia)
        if inertia is not None:
            e["inertia"] = inertia
        bodies.append(e)
    d["bodies"] = bodies
    joints = []
    for j in list(model.joints[1:]) + list(model.cut_joints):
        e = {"name": j.name, "type": JOINT_NAMES[type(j.joint)]}
        if isinstance(j.joint, Universal):
            e["axis1"], e["axis2"] = _vec(j.joint.axis1), _vec(j.joint.axis2)
        elif hasattr(j.joint, "axis"):
            e["axis"] = _vec(j.joint.axis)
        e["parent"] = model.body_names[j.parent]
        e["child"] = model.body_names[j.child]
        place = _placement_dict(j.placement)
        if place:
            e["placement"] = place
        if j.is_cut:
            e["child_placement"] = _placement_dict(j.child_placement)
            e["cut"] = True
        elif not j.child_placement.is_identity(tol=0.0):
            e["child_placement"] = _placement_dict(j.child_placement)
        if not j.is_cut:
            for key, arr in (("stiffness", model.dof_stiffness), ("damping", model.dof_damping),
                             ("rest", model.dof_rest), ("effort", model.dof_effort)):
                val = _per_dof(arr[j.v_slice])
                if val is not None:
                    e[key] = val
        if j.name in limits:
            e["limits"] = limits[j.name]
        _write_unilateral(e, model, j)
        joints.append(e)
    if joints:
        d["joints"] = joints
    if model.springs:
        d["springs"] = [{"name": s.name, "body_a": s.body_a, "point_a": _vec(s.point_a), "body_b": s.body_b,
                         "point_b": _vec(s.point_b), "stiffness": _num(s.stiffness), "damping": _num(s.damping),
                         "rest_length": _num(s.rest_length)} for s in model.springs]
    cons = [_constraint_dict(c) for c in model.constraints if not isinstance(c, LoopJoint)]
    if cons:
        d["constraints"] = cons
    _write_elements(d, model)
    tau = model.torque_callback
    if tau is not None:
        if not isinstance(tau, ExpressionTorque):
            raise ModelError(f"model '{model.name}': its torque callback {tau!r} is Python code, which a model file "
                             "cannot hold; write the efforts as expressions (joints[].effort, torque:) or save the "
                             "model without it", element="torque callback")
        _write_torque(d, model, tau)
    if q0 is not None or v0 is not None:
        d["initial"] = _initial(model, q0, v0)
    if simulation:
        d["simulation"] = _plain({k: v for k, v in simulation.items() if v is not None})
    if meta:
        d["metadata"] = _plain(meta)
    return d


def _write_unilateral(e, model, j):
    """The stops, restitution, latch and release of joint ``j`` into its entry ``e`` (one value or one per
    coordinate; ±inf where a coordinate has no stop on that side)."""
    u = model.unilateral
    coords = j.joint.coordinate_names
    lims = {lm.coordinate: lm for lm in u.limits if lm.joint == j.name}

    def per_coordinate(values):
        return _num(values[0]) if len(set(values)) == 1 else [_num(x) for x in values]

    if lims:
        lim = dict(e.get("limits", {}))
        for key, none in (("lower", -math.inf), ("upper", math.inf)):
            values = [getattr(lims[c], key) if c in lims else none for c in coords]
            if any(x != none for x in values):    # (a side without any stop is left out)
                lim[key] = per_coordinate(values)
        e["limits"] = lim
        e_values = [lims[c].restitution if c in lims else 0.0 for c in coords]
        if any(e_values):
            e["restitution"] = per_coordinate(e_values)
    elif "lower" in e.get("limits", {}) or "upper" in e.get("limits", {}):
        e["limits"] = dict(e["limits"], stops=False)     # limits kept as data only (e.g. load_urdf(limits=False))
    lats = {la.coordinate: la.value for la in u.latches if la.joint == j.name}
    if lats:
        e["latch"] = per_coordinate([lats.get(c, math.nan) for c in coords]) if len(lats) == len(coords) else \
            [_num(lats[c]) if c in lats else None for c in coords]
    rel = u.release_of(j.name)
    if rel is not None:
        e["release"] = _num(rel.at) if rel.mode == "separate" else {"at": _num(rel.at), "mode": rel.mode}


def _write_elements(d, model):
    """The model's frames, visual and collision elements (``multibody.model.geometry``)."""
    def placed(e):
        out = {"name": e.name, "body": e.body_name}
        place = _placement_dict(e.placement)
        if place:
            out["placement"] = place
        return out

    if model.frames:
        d["frames"] = [placed(f) for f in model.frames]
    for kind, elements in (("visuals", model.visuals), ("collisions", model.collisions)):
        if elements:
            d[kind] = []
            for e in elements:
                out = placed(e)
                out["shape"] = _plain(e.shape.as_dict())
                if kind == "visuals" and e.color is not None:
                    out["color"] = _vec(e.color)
                if kind == "collisions" and e.friction != 1.0:
                    out["friction"] = _num(e.friction)
                d[kind].append(out)


def _expanded_size(value, budget):
    """The bytes of text of JSON-like ``value`` with shared values counted each time they appear (as a file writes
    them), counted up to just beyond ``budget`` (so it takes a time proportional to at most ``budget``)."""
    total, stack = 0, [value]
    while stack and total <= budget:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
            total += 2
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
            total += 2
        else:
            total += len(v) + 2 if isinstance(v, str) else 8
    return total


def _write_torque(d, model, tau):
    by_joint = {e["name"]: e for e in d.get("joints", [])}
    where = {n: (j, k) for j in model.joints[1:] for k, n in enumerate(_velocity_names(j))}
    extra = {}
    for name, expr, origin in tau.entries:
        j, k = where[name]
        e = by_joint[j.name]
        if origin == "joint":
            const = model.dof_effort[j.v_slice]
            current = e.get("effort")
            values = list(current) if isinstance(current, list) else [
                _num(const[i]) for i in range(j.joint.nv)]
            if isinstance(values[k], str):   # a second joint-level expression on this coordinate: a sum
                values[k] = f"({values[k]}) + ({expr.source})"
            else:
                values[k] = expr.source
            e["effort"] = values[0] if j.joint.nv == 1 else values
        else:
            extra[name] = f"({extra[name]}) + ({expr.source})" if name in extra else expr.source
    if extra:
        d["torque"] = extra


def _initial(model, q0, v0):
    out = {}
    for key, x, n, slc in (("q", q0, model.nq, "q_slice"), ("v", v0, model.nv, "v_slice")):
        if x is None:
            continue
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.shape != (n,):
            raise ModelError(f"{key}0 must have {n} entries for model '{model.name}', got {x.shape[0]}",
                             element=f"{key}0")
        out[key] = {j.name: (_num(x[getattr(j, slc)][0]) if getattr(j, slc).stop - getattr(j, slc).start == 1
                             else _vec(x[getattr(j, slc)]))
                    for j in model.joints[1:] if getattr(j, slc).stop > getattr(j, slc).start}
    return out


def _plain(value):
    """JSON-like data with numpy values and tuples turned into Python floats and lists."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


HEADER = ("# multibody model file (format multibody-model, version 1): bodies, joints, forces, constraints,\n"
          "# initial state and simulation settings. Schema: multibody/io/model.schema.json; "
          "check it with `multibody validate FILE`.\n")


def save_model(model, path, q0=None, v0=None, simulation=None, header=None):
    """Write ``model`` (and optionally its initial state ``q0``, ``v0`` and ``simulation`` settings) to ``path``:
    YAML (``.yaml``/``.yml``) or JSON (``.json``) by the extension. Returns the path. Loading the file builds
    the same packed arrays (see the module docstring for what cannot be saved)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json"):
        raise ModelError(f"'{path}': save_model writes .yaml, .yml or .json files", element=str(path))
    d = model_to_dict(model, q0, v0, simulation)
    for key, value in d.items():   # what load_model would refuse is not written (and not spent time on)
        if _expanded_size(value, MAX_BYTES) > MAX_BYTES:
            raise ModelError(f"model '{model.name}': its {key} would take more than {MAX_BYTES} bytes in the file, "
                             "more than a model file holds (load_model refuses it)", element=key)
    if suffix == ".json":
        import json

        text = json.dumps(d, indent=2) + "\n"
    else:
        import yaml

        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)   # libyaml's: the same text, ~100x faster
        text = (HEADER if header is None else header) + yaml.dump(d, Dumper=dumper, sort_keys=False,
                                                                  default_flow_style=None, width=120,
                                                                  allow_unicode=True)
    path.write_text(text, encoding="utf-8")
    return path
