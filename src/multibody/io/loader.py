"""Reading a model file into the ``ModelBuilder``: :class:`ModelLoader` walks the document, builds every
element through the builder and collects every problem with its path in the file (``bodies[3].inertia: ...``)."""
import math
import re
from contextlib import contextmanager

import numpy as np

from multibody.errors import ModelError
from multibody.io.documents import Problem, format_path
from multibody.io.expression_callables import (ExpressionMatrix, ExpressionTorque, ExpressionVector,
                                               expression_variables, velocity_names)
from multibody.io.expressions import constant, parse_expression
from multibody.io.mimic import mimic_constraint, mimic_cycles
from multibody.io.vocabulary import AXIS_KEYS, CONSTRAINT_KEYS, JOINT_TYPES
from multibody.model import (GROUND, BaseMotion, Fixed, ModelBuilder, Placement, PointOnPlane, PointOnProfile, Profile,
                             RollingDisc, RollingOnProfile, UserConstraint, VelocityConstraint, rotation_about)
from multibody.model.controllers import controller_from_dict
from multibody.model.geometry import Box, Cylinder, Mesh, Sphere, shape_from_dict
from multibody.model.rotations import quat_to_matrix, rpy_matrix

__all__ = ["Skip", "ROUTES", "ModelLoader", "as_list"]


class Skip(Exception):
    """An element with a problem: stop processing it (the problem is recorded)."""


#: for each kind of element: (field, words of the builder's messages that point to it), in order of precedence
ROUTES = {
    "body": [("mass", ("a body of mass 0",)), ("inertia", ("inertia", "principal moments")), ("mass", ("mass",)),
             ("com", ("com",)),
             ("name", ("defined twice", "reserved", "name"))],
    "joint": [("parent", ("parent body",)), ("child", ("child body",)),
              ("child_placement", ("child_placement", "closes a loop")),
              ("stiffness", ("stiffness",)), ("damping", ("damping",)), ("rest", ("rest",)), ("effort", ("effort",)),
              ("armature", ("armature",)), ("axis2", ("axis2",)), ("axis1", ("axis1",)), ("axis", ("axis",)),
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


class ModelLoader:
    """Turns the data of a file into a Model through the ModelBuilder, recording every problem."""

    def __init__(self, data, lines=None, problems=(), inertia=None, stops=True):
        self.data = data
        #: whether the joints' limits are end stops (False: kept as data only, as each joint's ``stops: false``)
        self.stops = bool(stops)
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
        raise Skip

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
        """A problem recorded at ``path``, inside it, or at a value that holds it (a key given twice is reported
        once, at the key, and what lies under it was not checked against the schema)."""
        return any(p == path or p.startswith(path + ".") or p.startswith(path + "[") or
                   (p and (path.startswith(p + ".") or path.startswith(p + "["))) for p in self.schema_paths)

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
        if kind in ROUTES:
            body = msg.split(": ", 1)[1] if ": " in msg else msg
            for fieldname, words in ROUTES[kind]:
                if any(w in body for w in words):
                    target = f"{path}.{fieldname}"
                    break
        self.problems.append(Problem(target, msg, self._line(target)))

    @contextmanager
    def element(self, path, kind=None):
        """Process one element of the file: a ModelError or a recorded problem stops it; the next goes on."""
        try:
            yield
        except Skip:
            pass
        except ModelError as exc:
            self.record(exc, path, kind)

    # ---- values ------------------------------------------------------------------------------------------
    def number(self, value, path):
        try:
            return constant(value, path)
        except ModelError as exc:
            self.record(exc, path)
            raise Skip from None

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
            with np.errstate(over="ignore"):    # (a norm that overflows is a length far from 1, refused below)
                n = float(np.linalg.norm(qv))
            if abs(n - 1.0) > 1e-3:
                self.fail(f"{path}.quaternion", f"a rotation quaternion (w, x, y, z) has unit length, got length "
                                                f"{n:.6g}")
            R = quat_to_matrix(qv / n)
        elif "axis" in spec:
            a = self.numbers(spec["axis"], f"{path}.axis", 3)
            if not np.any(np.asarray(a) != 0.0):
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
        for k, spec in enumerate(as_list(d.get("bodies"))):
            self._body(b, k, spec, old_visuals)
        self._elastic(b, d)      # before the joints, which may carry bodies on a beam's elements
        efforts = []
        for k, spec in enumerate(as_list(d.get("joints"))):
            self._joint(b, k, spec, limits, efforts)
        for k, spec in enumerate(as_list(d.get("springs"))):
            self._spring(b, k, spec)
        self._elements(b, d, old_visuals)
        self._controllers(b, d)
        self._loads(b, d)
        pending = [self._constraint(k, spec) for k, spec in enumerate(as_list(d.get("constraints")))]
        self._mimic_cycles(as_list(d.get("constraints")))
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
        """Each field's value (every maker is tried, so every field's problem is recorded); ``Skip`` when any
        failed."""
        out, failed = [], False
        for make in makers:
            try:
                out.append(make())
            except Skip:
                failed = True
        if failed:
            raise Skip
        return out

    def _controllers(self, b, d):
        """The controller elements (``multibody.model.controllers``): their numbers checked here, their joints and
        sizes when the model is built."""
        for k, spec in enumerate(as_list(d.get("controllers"))):
            path = f"controllers[{k}]"
            if self._has_schema_problem(path):
                continue
            with self.element(path):
                data = dict(spec)
                for key in ("kp", "kd"):
                    data[key] = self.per_dof(spec[key], f"{path}.{key}")
                if "target" in spec:
                    data["target"] = self.numbers(spec["target"], f"{path}.target")
                if "trajectory" in spec:
                    traj = spec["trajectory"]
                    data["trajectory"] = {"times": self.numbers(traj["times"], f"{path}.trajectory.times"),
                                          "positions": [self.numbers(row, f"{path}.trajectory.positions[{r}]")
                                                        for r, row in enumerate(traj["positions"])]}
                name = data.pop("name")
                self.paths[f"controller '{name}'"] = path
                b.add_controller(name, controller_from_dict(data, path))

    def _elastic(self, b, d):
        """The beams and cables (``ModelBuilder.add_beam``, ``add_cable``; ``multibody.model.beams``): numbers, a
        placement, the root and tip joints as {type, axis...}; a stiffness null is rigid in that deformation."""
        for kind, add in (("beams", b.add_beam), ("cables", b.add_cable)):
            for k, spec in enumerate(as_list(d.get(kind))):
                path = f"{kind}[{k}]"
                if self._has_schema_problem(path):
                    continue
                self.paths[f"{kind[:-1]} '{spec['name']}'"] = path
                with self.element(path):
                    kw = {key: (None if val is None else [None if v is None else self.number(v, f"{path}.{key}[{i}]")
                                                          for i, v in enumerate(val)]   # null: rigid about that axis
                                if isinstance(val, list) else self.number(val, f"{path}.{key}"))
                          for key, val in spec.items() if key in ("length", "EI", "GJ", "EA", "mass_per_length",
                                                                  "inertia_per_length", "damping")}
                    for key in ("placement", "tip_placement"):
                        kw[key] = self.placement(spec.get(key), f"{path}.{key}", f"{kind[:-1]} '{spec['name']}'")
                    for key in ("root", "tip_joint"):
                        kw[key] = self._joint_type(spec[key], f"{path}.{key}") if key in spec else None
                    kw.update({key: spec[key] for key in ("tip", "planar") if key in spec})
                    if kind == "beams":
                        kw.setdefault("EI", None)
                        kw.setdefault("GJ", None)
                    add(spec["name"], spec["parent"], segments=spec["segments"], **kw)

    def _loads(self, b, d):
        """The loads (``ModelBuilder.add_load``; ``multibody.model.loads``): vectors, reference, load curve."""
        for k, spec in enumerate(as_list(d.get("loads"))):
            path = f"loads[{k}]"
            if self._has_schema_problem(path):
                continue
            self.paths[f"load '{spec['name']}'"] = path
            with self.element(path):
                vectors = [self.numbers(spec[key], f"{path}.{key}", 3) if key in spec else None
                           for key in ("force", "torque")]
                curve = spec.get("curve")
                if isinstance(curve, dict):
                    curve = {key: (self.numbers(val, f"{path}.curve.{key}") if isinstance(val, list)
                                   else self.number(val, f"{path}.curve.{key}")) for key, val in curve.items()}
                b.add_load(spec["name"], spec["frame"], *vectors, reference=spec.get("reference", "world"),
                           curve=curve)

    def _elements(self, b, d, old_visuals):
        """Frames, visual and collision elements (and the visuals written under bodies by earlier files)."""
        for k, spec in enumerate(as_list(d.get("frames"))):
            path = f"frames[{k}]"
            if not self._has_schema_problem(path):
                with self.element(path):
                    b.add_frame(spec["name"], spec["body"], self.placement(spec.get("placement"), f"{path}.placement",
                                                                           f"frame '{spec['name']}'"))
        for kind in ("visuals", "collisions"):
            for k, spec in enumerate(as_list(d.get(kind))):
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
                                        self.number(spec.get("friction", 1.0), f"{path}.friction"),
                                        self.number(spec.get("restitution", 0.0), f"{path}.restitution"),
                                        contype=spec.get("contype", 1), conaffinity=spec.get("conaffinity", 1))
        contact = d.get("contact") if isinstance(d.get("contact"), dict) else {}
        for key, add in (("exclude", b.exclude_contact), ("include", b.include_contact)):
            for k, pair in enumerate(as_list(contact.get(key))):
                if not self._has_schema_problem(f"contact.{key}[{k}]"):
                    add(*pair)
        names = {v["name"] for v in as_list(d.get("visuals")) if isinstance(v, dict)}
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
                    lambda: dict(zip(("stiffness", "damping", "rest", "armature"), self.fields(
                        *[lambda key=key: self.per_dof(spec.get(key), f"{path}.{key}")
                          for key in ("stiffness", "damping", "rest", "armature")]))),
                    lambda: self._effort(spec, path, jname, efforts) if known_type else None,
                    lambda: self._limits(spec, path, jname, limits),
                    lambda: self._unilateral(spec, path))
            except Skip:
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
        stops = self.stops and lim.get("stops", True)
        if stops and (lim.get("lower") is not None or lim.get("upper") is not None):
            out["limits"] = tuple(None if lim.get(key) is None else self._bound(lim[key], f"{path}.limits.{key}")
                                  for key in ("lower", "upper"))
        if spec.get("restitution") is not None:
            restitution = self.per_dof(spec["restitution"], f"{path}.restitution")
            if stops:    # (the coefficient of the impacts on the stops: none without them)
                out["restitution"] = restitution
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
            raise Skip from None

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
            raise Skip from None

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
                raise Skip from None
            self.fail(f"{path}.{key}", str(exc))

    def _mimic_cycles(self, specs):
        """A problem for each cycle of mimic constraints (joints that mimic one another: ``io/mimic.py``)."""
        where = {spec.get("joint"): k for k, spec in enumerate(specs)
                 if isinstance(spec, dict) and spec.get("type") == "mimic" and isinstance(spec.get("joint"), str)}
        follows = {specs[k]["joint"]: specs[k].get("reference") for k in where.values()}
        for cycle in mimic_cycles(follows):
            path = f"constraints[{where[cycle[0]]}].joint"
            self.problems.append(Problem(path, f"joints {' → '.join(repr(n) for n in cycle)} mimic one another in a "
                                               "cycle: none of them moves by itself", self._line(path)))

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
            entries.append((velocity_names(j)[i], expr, "joint"))
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
                    with np.errstate(over="ignore"):     # (refused below when it overflows)
                        nrm = float(np.linalg.norm(x[s]))
                    if abs(nrm - 1.0) > 1e-3:
                        self.fail(path, f"the quaternion (w, x, y, z) of joint '{j.name}' has length {nrm:.6g}; "
                                        "it must be a unit quaternion")
                    if abs(nrm - 1.0) > 4.0 * np.finfo(float).eps:   # a unit quaternion is kept as given
                        x[s] /= nrm
        return x

    def simulation(self, spec):
        from multibody.formulations.base import FORMULATIONS, formulation_options
        from multibody.contact.models import CONTACT_MODELS, contact_options
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
        with self.element("simulation.contact"):   # a contact model (contact/models.py): its parameters in options
            if "contact" in spec:
                if spec["contact"] not in CONTACT_MODELS:
                    self.fail("simulation.contact", f"'{spec['contact']}' is not one of: "
                                                    f"{', '.join(sorted(CONTACT_MODELS))}")
                out["contact"] = spec["contact"]
        options = spec.get("options") if isinstance(spec.get("options"), dict) else {}
        if ("formulation" in spec and "formulation" not in out) or ("contact" in spec and "contact" not in out):
            return out
        with self.element("simulation.options"):
            if "contact" in out:
                accepted, what = contact_options(out["contact"]), f"the {out['contact']} contact model"
            else:
                accepted, what = formulation_options(out.get("formulation", "tree")), \
                    f"the {out.get('formulation', 'tree')} formulation"
            for key in options:
                if accepted is not None and key not in accepted:
                    self.fail(format_path(("simulation", "options", key)),
                              f"{what} has no option '{key}' (its options: {', '.join(accepted) or 'none'})")
            if options:
                out["options"] = dict(options)
        return out


def as_list(value):
    return value if isinstance(value, list) else []
