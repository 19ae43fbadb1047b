"""URDF robot descriptions as Models (the ROS Unified Robot Description Format, wiki.ros.org/urdf/XML).

What is read, and how it maps to the builder (``ModelBuilder``, so every builder check applies):

* ``<link>``: its ``<inertial>`` — ``mass``, and ``inertia`` (ixx … izz) about the centre of mass in the
  inertial frame, which ``<origin xyz rpy>`` places in the link frame: the body's ``com`` is ``xyz`` and its
  inertia ``R I Rᵀ`` with ``R = Rz(yaw) Ry(pitch) Rx(roll)``. A link without ``<inertial>`` has no mass; a link
  of mass 0 keeps its inertia, as in Pinocchio.
* Inertias as robot files carry them (:mod:`multibody.model.inertia`): round-off (iCub's ``head``, principal
  moments [−2.4e-35, 0, 2.4e-35] for a point mass) is accepted silently; a link inertia that no body has but that
  keeps the dynamics well defined (the triangle inequality broken, as CAD exports do, inertia without mass, or a
  negative moment of a link fixed to a body that outweighs it, as Tiago's 1 mg antennas) is loaded as written
  with one ``InertiaWarning`` per file naming each link; ``strict=True`` refuses those, ``repair=True`` moves each
  to the nearest physical inertia and reports how far. A body (a link and the links fixed to it) with a negative
  principal moment is refused (but by ``repair=True``): its kinetic energy could be negative. A moving link that
  has no mass, nor anything it carries (a massless leaf link: the mass matrix is singular), is refused, and given
  1 mg and principal moments of 1e-10 kg m² by ``repair=True`` (``model.inertia.BOUND_MASS``, ``BOUND_INERTIA``:
  MuJoCo's ``boundmass`` and ``boundinertia``), named in the ``InertiaWarning``. Any other model whose mass
  matrix is singular (a point mass on its hinge axis) is refused, with the numbers. ``kinematics_only=True``
  reads all of these for their kinematics (Pinocchio reads them so): frames, Jacobians, inverse kinematics and
  collision queries work, and every dynamics call refuses the model in one line naming the link
  (``Model.kinematics_only``). The root link's inertia is not read when it is the ground (``floating_base=False``),
  nor that of the links fixed to it.
* ``<joint>`` of type ``revolute``, ``continuous`` (→ ``Revolute``), ``prismatic`` (→ ``Prismatic``),
  ``floating`` (→ ``Free``), ``planar`` (→ ``Planar``, the motion in the plane normal to ``<axis>``) and
  ``fixed``: ``<origin xyz rpy>`` is the joint's placement in the parent link's frame; the child link's frame
  is the joint frame moved by the joint (the builder's convention); ``<axis xyz>`` (default (1, 0, 0)) in the
  joint frame, normalized (only a zero axis is refused). ``<dynamics damping>`` becomes the joint's viscous
  damper (``damping``, used when simulating); ``<limit lower upper effort velocity>`` (lower <= upper, effort and
  velocity >= 0) and ``<dynamics friction>`` are kept as data in ``model.metadata["limits"]``; ``lower`` and
  ``upper`` of revolute and prismatic joints are also their end stops (``model.lower_limits``,
  ``model.upper_limits``; plastic impacts, resting contact; ``multibody.model.unilateral``), unless ``limits=False``.
* ``<mimic joint multiplier offset>``: q = multiplier · q_joint + offset, kept in ``model.metadata["mimic"]``;
  with ``mimic=True`` each becomes a constraint (``UserConstraint`` named ``<joint>_mimic``, simulated by the
  constrained formulations); Pinocchio's default, ``mimic=False``, leaves the joint free. A mimic on a fixed joint
  is left out (as Pinocchio does); one naming a joint that is not there, or a joint that is not revolute,
  continuous or prismatic, is refused with ``mimic=True`` and left out with one ``ModelWarning`` otherwise.
* A link fixed to its parent (``fixed`` joint) is merged into the parent's body, as Pinocchio's parser does:
  masses, centres and inertias add up (parallel-axis theorem). Every link that is not a body of its own becomes a
  named frame on the body it is fixed to (``ModelBuilder.add_frame``, ``model.frame(name)``): the links fixed to
  a fixed root, and the root itself, are frames of the ground.
* The root link (the one that is no joint's child) is the ground; ``floating_base=True`` makes it a body on a
  ``Free`` joint named ``root_joint`` instead (q: position, quaternion (w, x, y, z); v: [ω; v] in the root
  frame).
* ``<visual>`` and ``<collision>`` shapes (boxes, cylinders, spheres, meshes) become the Model's visual and
  collision elements (``model.visuals``, ``model.collisions``) on the link's body, placed in its frame; colours
  from ``<material>`` (inline or defined under ``<robot>``). Mesh files: ``package://PKG/PATH`` is looked up as
  ``DIR/PKG/PATH`` in each of ``package_dirs`` (or ``DIR/PATH`` when DIR is named PKG), ``file://`` and relative
  paths (relative to the URDF file) are resolved too; a mesh file that is not found is kept by its name with one
  warning (``MeshWarning``). Without ``package_dirs`` a ``package://`` URI is kept as written.

Names come from the file: bodies are named after their links, joints keep their names, so
``model.coordinate_names()`` / ``velocity_names()`` are ``"<joint>.angle"`` etc. and map to other tools by the
joint name.

Problems are collected and raised together (``ModelFileError``), each with its place in the file, e.g.
``link[@name='foot']/inertial/inertia: ...``. The XML is read with :mod:`xml.etree.ElementTree`; a document
type definition (``<!DOCTYPE``, ``<!ENTITY``) is refused, so no entity is ever expanded.
"""
import math
import posixpath
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from multibody.errors import InertiaWarning, MeshWarning, ModelError, ModelWarning
from multibody.io.documents import ModelFileError, Problem, read_text
from multibody.io.mimic import mimic_constraint, mimic_cycles
from multibody.model import GROUND, Box, Cylinder, Free, Mesh, ModelBuilder, Placement, Planar, Prismatic, Revolute, Sphere
from multibody.model.inertia import BOUND_INERTIA, BOUND_MASS, KINEMATICS_ONLY, apply_policy, combine_rigid
from multibody.model.rotations import rpy_matrix

__all__ = ["load_urdf", "parse_urdf", "ROOT_JOINT"]

#: name of the free joint that ``floating_base=True`` adds (Pinocchio's name for it)
ROOT_JOINT = "root_joint"
JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")
ONE_DOF = ("revolute", "continuous", "prismatic")


class _Problems(Exception):
    pass


class _Reader:
    def __init__(self, source, package_dirs=None):
        self.source = source
        self.problems = []
        self.base = Path(source).parent if source and not str(source).startswith("<") else None
        self.package_dirs = [package_dirs] if isinstance(package_dirs, (str, Path)) else package_dirs
        self.missing = set()     # mesh files looked for and not found

    def mesh(self, filename, where):
        """The file a mesh's name points to (see the module docstring); the name itself when it is not found; a
        problem at ``where`` when a ``package://`` name leaves its package's folder."""
        try:
            resolved, tried = _mesh_path(filename, self.base, self.package_dirs)
        except ValueError as exc:
            self.fail(where, str(exc))
        if tried and resolved == filename:
            self.missing.add(filename)
        return resolved

    def fail(self, path, message):
        self.problems.append(Problem(path, message))
        raise _Problems

    def floats(self, elem, attr, n, path, default=None):
        text = elem.get(attr) if elem is not None else None
        if text is None:
            if default is None:
                self.fail(path, f"the attribute '{attr}' is missing")
            return np.array(default, dtype=float)
        try:
            vals = [float(x) for x in text.split()]
        except ValueError:
            self.fail(f"{path}/@{attr}", f"expected {n} number{'s' * (n > 1)}, got '{text[:60]}'")
        if len(vals) != n or not all(math.isfinite(x) for x in vals):
            self.fail(f"{path}/@{attr}", f"expected {n} finite number{'s' * (n > 1)}, got '{text[:60]}'")
        return np.array(vals)

    def number(self, elem, attr, path, default=None):
        return float(self.floats(elem, attr, 1, path, None if default is None else [default])[0])

    def origin(self, elem, path):
        """The ``<origin xyz rpy>`` child of ``elem`` as a Placement (identity when absent)."""
        o = elem.find("origin") if elem is not None else None
        if o is None:
            return Placement()
        xyz = self.floats(o, "xyz", 3, f"{path}/origin", (0, 0, 0))
        rpy = self.floats(o, "rpy", 3, f"{path}/origin", (0, 0, 0))
        R = rpy_matrix(*rpy) if np.any(rpy) else np.eye(3)
        return Placement(R, xyz)


def _align_z(axis):
    """A rotation taking e_z to the unit ``axis`` (identity when they coincide)."""
    z = np.array([0.0, 0.0, 1.0])
    c = float(axis @ z)
    if c > 1.0 - 1e-15:
        return np.eye(3)
    if c < -1.0 + 1e-15:
        return np.diag([1.0, -1.0, -1.0])
    k = np.cross(z, axis)
    k /= np.linalg.norm(k)
    from multibody.model import rotation_about

    return rotation_about(k, math.acos(max(-1.0, min(1.0, c))))


def _unit(axis):
    """``axis`` scaled to unit length (scaled by its largest component first, so that 1e-200 is no zero)."""
    a = axis / np.max(np.abs(axis))
    return a / np.linalg.norm(a)


def parse_urdf(text, source="<urdf>", floating_base=False, gravity=(0.0, 0.0, -9.81), *, strict=False, repair=False,
               package_dirs=None, mimic=False, limits=True, kinematics_only=False, friction=1.0, restitution=0.0):
    """A Model from the text of a URDF file (see the module docstring). ``source`` names the file in messages, and
    its folder is where relative mesh paths are looked up (when it is a path). ``limits=False`` keeps the ``<limit
    lower upper>`` of revolute and prismatic joints as data only (no end stops). ``friction``, ``restitution``: the
    coefficients of its ``<collision>`` elements (a URDF has none of its own)."""
    if strict and repair:
        raise ModelError("load_urdf: strict=True refuses the inertias that repair=True would move: choose one",
                         element="strict")
    rd = _Reader(source, package_dirs)
    rd.coefficients = (friction, restitution)    # of its <collision> elements
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ModelFileError([Problem("", "a URDF file needs no document type definition (<!DOCTYPE>, <!ENTITY>); "
                                          "they are refused")], source)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise ModelFileError([Problem("", f"XML: {exc}", line)], source) from None
    if root.tag != "robot":
        hint = " (a xacro file? expand it with xacro first)" if "xacro" in root.tag else ""
        raise ModelFileError([Problem(f"/{root.tag}", f"the root element of a URDF file is <robot>{hint}")], source)
    robot = root.get("name") or "robot"
    materials = _materials(rd, root)
    links, link_order = {}, []
    for k, le in enumerate(root.findall("link")):
        name = le.get("name")
        path = f"link[@name='{name}']" if name else f"link[{k + 1}]"
        if not name:
            rd.problems.append(Problem(path, "a link needs a name"))
            continue
        if name in links:
            rd.problems.append(Problem(path, f"link '{name}' is defined twice"))
            continue
        try:
            links[name] = _read_link(rd, le, name, path, materials)
            link_order.append(name)
        except _Problems:
            links[name] = None
    joints, child_of, by_name = [], {}, {}
    for k, je in enumerate(root.findall("joint")):
        name = je.get("name")
        path = f"joint[@name='{name}']" if name else f"joint[{k + 1}]"
        try:
            if not name:
                rd.fail(path, "a joint needs a name")
            if name in by_name or (floating_base and name == ROOT_JOINT):
                rd.fail(path, f"joint '{name}' is defined twice" if name in by_name else
                        f"the name '{ROOT_JOINT}' is taken by the free joint of floating_base=True")
            j = _read_joint(rd, je, name, path, links)
            by_name[name] = j
            if j["child"] in child_of:
                rd.fail(f"{path}/child", f"link '{j['child']}' is already the child of joint '{child_of[j['child']]}'"
                                         " (a URDF describes a tree)")
            child_of[j["child"]] = name
            joints.append(j)
        except _Problems:
            pass
    mimics = _check_mimics(rd, joints, by_name, mimic)
    if rd.problems:
        raise ModelFileError(rd.problems, source)
    roots = [n for n in link_order if n not in child_of]
    if len(roots) != 1:
        what = "no link" if not roots else f"{len(roots)} links ({', '.join(roots)})"
        raise ModelFileError([Problem("/robot", f"a URDF tree has one root link (a link that is no joint's child); "
                                                f"found {what}")], source)
    policy = "refuse" if strict else "repair" if repair else "warn"
    tree = _Tree(rd, links, joints, roots[0], floating_base, source)
    tree.mimics = mimics
    tree.stops = bool(limits)
    model = _build(rd, robot, tree, policy, gravity, mimics if mimic else None, bool(kinematics_only))
    if rd.missing:
        shown = ", ".join(sorted(rd.missing)[:5]) + (", ..." if len(rd.missing) > 5 else "")
        warnings.warn(MeshWarning(f"{source}: {len(rd.missing)} mesh file{'s' * (len(rd.missing) > 1)} not found "
                                  f"(kept by name; package_dirs={package_dirs!r}): {shown}"), stacklevel=3)
    return model


def _materials(rd, root):
    """The colours of the materials defined under ``<robot>``, by name."""
    out = {}
    for me in root.findall("material"):
        ce = me.find("color")
        if me.get("name") and ce is not None and ce.get("rgba"):
            try:
                out[me.get("name")] = rd.floats(ce, "rgba", 4, f"material[@name='{me.get('name')}']/color").tolist()
            except _Problems:
                pass
    return out


def _read_link(rd, le, name, path, materials):
    link = {"name": name, "mass": 0.0, "com": np.zeros(3), "inertia": np.zeros((3, 3)), "path": path,
            "shapes": []}
    inertial = le.find("inertial")
    if inertial is not None:
        ipath = f"{path}/inertial"
        me = inertial.find("mass")
        mass = rd.number(me, "value", f"{ipath}/mass") if me is not None else 0.0
        if mass < 0:
            rd.fail(f"{ipath}/mass/@value", f"link '{name}': mass must be >= 0, got {mass}")
        if 0 < mass < np.finfo(float).tiny:
            rd.fail(f"{ipath}/mass/@value", f"link '{name}': mass {mass:g} is below the smallest normal float "
                                            f"({np.finfo(float).tiny:.3g} kg): write 0 for a massless link")
        P = rd.origin(inertial, ipath)
        ie = inertial.find("inertia")
        comps = np.zeros(6)
        if ie is not None:
            comps = np.array([rd.number(ie, a, f"{ipath}/inertia", 0.0)
                              for a in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")])
        ixx, iyy, izz, ixy, ixz, iyz = comps
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        link.update(mass=mass, com=P.translation.copy(), inertia=P.rotation @ inertia @ P.rotation.T)
    for kind in ("visual", "collision"):
        for k, ve in enumerate(le.findall(kind)):
            shape = _read_shape(rd, ve, f"{path}/{kind}[{k + 1}]", materials)
            if shape is not None:
                link["shapes"].append((kind, ve.get("name"), *shape))
    return link


def _read_shape(rd, ve, path, materials):
    """``(shape, placement in the link frame, colour)`` of a ``<visual>`` or ``<collision>``, None when it has no
    geometry this reader knows."""
    ge = ve.find("geometry")
    shape = next(iter(ge), None) if ge is not None else None
    if shape is None:
        return None
    where = f"{path}/geometry/{shape.tag}"
    try:
        if shape.tag == "mesh":
            scale = rd.floats(shape, "scale", 3, where, (1.0, 1.0, 1.0))
            out = Mesh(rd.mesh(shape.get("filename") or rd.fail(where, "the mesh has no filename"), where), scale)
        elif shape.tag == "box":
            out = Box(rd.floats(shape, "size", 3, where))
        elif shape.tag == "cylinder":
            out = Cylinder(rd.number(shape, "radius", where), rd.number(shape, "length", where))
        elif shape.tag == "sphere":
            out = Sphere(rd.number(shape, "radius", where))
        else:
            return None
    except ModelError as exc:
        rd.fail(where, str(exc))
    color = None
    me = ve.find("material")
    if me is not None:
        ce = me.find("color")
        if ce is not None and ce.get("rgba"):
            color = rd.floats(ce, "rgba", 4, f"{path}/material/color").tolist()
        else:
            color = materials.get(me.get("name"))
        if color is not None and not all(0.0 <= c <= 1.0 for c in color):
            rd.fail(f"{path}/material/color/@rgba", f"expected 4 numbers in [0, 1], got {color}")
    return out, rd.origin(ve, path), color


def _read_joint(rd, je, name, path, links):
    kind = je.get("type")
    if kind not in JOINT_KINDS:
        rd.fail(f"{path}/@type", f"joint '{name}': the type '{kind}' is not one of {', '.join(JOINT_KINDS)}")
    ends = {}
    for role in ("parent", "child"):
        e = je.find(role)
        lk = e.get("link") if e is not None else None
        if lk is None:
            rd.fail(f"{path}/{role}", f"joint '{name}': the {role} link is missing (<{role} link=\"...\"/>)")
        if lk not in links:
            rd.fail(f"{path}/{role}", f"joint '{name}': the {role} link '{lk}' is not defined")
        ends[role] = lk
    if ends["parent"] == ends["child"]:
        rd.fail(f"{path}/child", f"joint '{name}': parent and child are the same link '{ends['child']}'")
    axis = rd.floats(je.find("axis"), "xyz", 3, f"{path}/axis", (1.0, 0.0, 0.0))
    if kind in ("revolute", "continuous", "prismatic", "planar"):
        if not np.any(axis):
            rd.fail(f"{path}/axis/@xyz", f"joint '{name}': the axis must not be zero, got "
                                         f"'{je.find('axis').get('xyz')}'")
        axis = _unit(axis)
    j = {"name": name, "kind": kind, "origin": rd.origin(je, path), "axis": axis, **ends, "path": path}
    j["limits"] = _read_limits(rd, je, name, path, kind)
    de = je.find("dynamics")
    j["damping"] = 0.0
    if de is not None:
        j["damping"] = rd.number(de, "damping", f"{path}/dynamics", 0.0)
        if j["damping"] < 0:
            rd.fail(f"{path}/dynamics/@damping", f"joint '{name}': damping must be >= 0, got {j['damping']}")
        if de.get("friction") is not None:
            j["limits"]["friction"] = rd.number(de, "friction", f"{path}/dynamics")
            if j["limits"]["friction"] < 0:
                rd.fail(f"{path}/dynamics/@friction", f"joint '{name}': friction must be >= 0, got "
                                                      f"{j['limits']['friction']}")
    me = je.find("mimic")
    j["mimic"] = None
    if me is not None:
        if not me.get("joint"):
            rd.fail(f"{path}/mimic", f"joint '{name}': <mimic> needs the joint it follows (joint=\"...\")")
        j["mimic"] = {"joint": me.get("joint"), "multiplier": rd.number(me, "multiplier", f"{path}/mimic", 1.0),
                      "offset": rd.number(me, "offset", f"{path}/mimic", 0.0)}
    return j


def _read_limits(rd, je, name, path, kind):
    le = je.find("limit")
    limits = {}
    if le is None:
        return limits
    for attr in ("lower", "upper", "effort", "velocity"):
        if le.get(attr) is not None and not (kind == "continuous" and attr in ("lower", "upper")):
            limits[attr] = rd.number(le, attr, f"{path}/limit")
    for attr in ("effort", "velocity"):
        if limits.get(attr, 0.0) < 0:
            rd.fail(f"{path}/limit/@{attr}", f"joint '{name}': the {attr} limit must be >= 0, got {limits[attr]}")
    if "lower" in limits and "upper" in limits and limits["lower"] > limits["upper"]:
        rd.fail(f"{path}/limit", f"joint '{name}': the lower limit {limits['lower']} is above the upper limit "
                                 f"{limits['upper']}")
    return limits


def _check_mimics(rd, joints, by_name, follow):
    """The mimics to follow (``{joint: {joint, multiplier, offset}}``): a mimic on a fixed joint is left out, as
    Pinocchio does; one naming a joint that is not there, one that is not revolute, continuous or prismatic, or joints
    that mimic one another in a cycle (``io/mimic.py``) are a problem when ``follow`` (``mimic=True``), else left out
    with one ``ModelWarning``."""
    kept, broken, left_out = {}, [], 0
    for j in joints:
        m = j["mimic"]
        if m is None or j["kind"] == "fixed":
            continue
        ref = by_name.get(m["joint"])
        if ref is None:
            why = f"joint '{j['name']}' mimics joint '{m['joint']}', which is not defined"
        elif ref is j:
            why = f"joint '{j['name']}' mimics itself"
        elif j["kind"] not in ONE_DOF or ref["kind"] not in ONE_DOF:
            why = (f"joint '{j['name']}' ({j['kind']}) mimics joint '{m['joint']}' ({ref['kind']}): a mimic couples two "
                   "revolute, continuous or prismatic joints")
        else:
            kept[j["name"]] = m
            continue
        if follow:
            rd.problems.append(Problem(f"{j['path']}/mimic/@joint", why))
        else:
            broken.append(why)
            left_out += 1
    for cycle in mimic_cycles({name: m["joint"] for name, m in kept.items()}):
        why = f"joints {' → '.join(repr(n) for n in cycle)} mimic one another in a cycle: none of them moves by itself"
        for name in cycle[:-1]:
            kept.pop(name, None)
        if follow:
            rd.problems.append(Problem(f"{by_name[cycle[0]]['path']}/mimic/@joint", why))
        else:
            broken.append(why)
            left_out += len(cycle) - 1
    if broken:
        warnings.warn(ModelWarning(f"{rd.source}: {left_out} <mimic> element{'s' * (left_out > 1)} left out "
                                   f"(mimic=False does not follow them; mimic=True refuses them): "
                                   + "; ".join(broken[:5]) + ("; ..." if len(broken) > 5 else "")), stacklevel=4)
    return kept


class _Tree:
    """The links as bodies: each link's body (itself, the body it is fixed to, or the ground) and its frame there."""

    def _welded(self, name):
        """Whether link ``name`` is welded to the ground (the fixed root, or fixed to it)."""
        while name != self.root:
            j = next(j for j in self.joints if j["child"] == name)
            if j["kind"] != "fixed":
                return False
            name = j["parent"]
        return not self.floating_base

    def __init__(self, rd, links, joints, root, floating_base, source):
        self.links, self.joints, self.root, self.floating_base = links, joints, root, floating_base
        self.children = {}
        for j in joints:
            self.children.setdefault(j["parent"], []).append(j)
        self.body_of = {root: (root if floating_base else GROUND, Placement())}
        self.order = []                      # depth-first, children in file order
        stack = [root]
        while stack:
            name = stack.pop()
            self.order.append(name)
            for j in reversed(self.children.get(name, [])):
                b, P = self.body_of[name]
                self.body_of[j["child"]] = (b, P * j["origin"]) if j["kind"] == "fixed" else (j["child"], Placement())
                stack.append(j["child"])
        unreachable = [n for n in links if n not in self.body_of]
        if unreachable:
            raise ModelFileError([Problem(f"link[@name='{n}']", f"link '{n}' is not connected to the root link "
                                                                f"'{root}'") for n in unreachable], source)
        self.bodies = [n for n in self.order if self.body_of[n][0] == n and not (n == GROUND and self._welded(n))]
        for n in self.bodies:
            if n == GROUND:
                rd.problems.append(Problem(f"link[@name='{n}']", f"link '{n}' moves, but the name '{GROUND}' is "
                                                                 "reserved for the fixed frame; rename the link"))


def _build(rd, robot, tree, policy, gravity, follow, kinematics_only=False):
    notes, parts, reasons = [], {}, []
    for name in tree.order:
        b, P = tree.body_of[name]
        link = tree.links[name]
        if b == GROUND or not (link["mass"] or np.any(link["inertia"])):
            continue       # the ground's links: their inertia is never used
        try:
            inertia, note = apply_policy(link["mass"], link["com"], link["inertia"], policy, f"link '{name}'",
                                         keep_negative=True)
        except ModelError as exc:
            if not kinematics_only:
                rd.problems.append(Problem(f"{link['path']}/inertial/inertia", str(exc)))
                continue
            reasons.append(str(exc).split("; the inertia policy")[0])
            inertia, note = apply_policy(link["mass"], link["com"], link["inertia"], "repair", f"link '{name}'")
        if note:
            notes.append(f"link '{name}': {note}")
        R = P.rotation
        parts.setdefault(b, []).append((link["mass"], P.act(link["com"]), R @ inertia @ R.T))
    for name, message in _massless_subtrees(tree, parts):
        if policy == "repair":      # MuJoCo's boundmass and boundinertia
            parts[name] = [(BOUND_MASS, np.zeros(3), BOUND_INERTIA * np.eye(3))]
            notes.append(f"link '{name}' has no mass but moves: given {BOUND_MASS:g} kg and principal moments "
                         f"{BOUND_INERTIA:g} kg m² (the bounds of repair=True)")
        elif kinematics_only:
            reasons.append(message)
        else:
            rd.problems.append(Problem(f"link[@name='{name}']", f"{message}; give it an <inertial> (or load with "
                                                                 "repair=True, which bounds its mass, or "
                                                                 "kinematics_only=True)"))
    builder = ModelBuilder(gravity=gravity, name=robot, inertia="accept")
    builder.kinematics_only = kinematics_only
    for name in tree.bodies:
        m, c, I = combine_rigid(parts.get(name, [(0.0, np.zeros(3), np.zeros((3, 3)))]))
        if kinematics_only:     # a body no inertia fits: the nearest physical one, and the dynamics refused
            try:
                apply_policy(m, c, I, "refuse", f"link '{name}'")
            except ModelError as exc:
                reasons.append(str(exc).split("; the inertia policy")[0])
                I = apply_policy(m, c, I, "repair", f"link '{name}'")[0]
        try:
            builder.add_body(name, mass=m, com=c, inertia=I)
        except ModelError as exc:
            parts_of = [n for n in tree.order if tree.body_of[n][0] == name and tree.links[n]["mass"] + np.any(
                tree.links[n]["inertia"])]
            merged = f" (the inertias of links {', '.join(parts_of)} added)" if len(parts_of) > 1 else ""
            rd.problems.append(Problem(f"link[@name='{name}']/inertial", f"link '{name}'{merged}: "
                                                                          f"{str(exc).split(': ', 1)[-1]}"))
    if rd.problems:
        raise ModelFileError(rd.problems, rd.source)
    if tree.floating_base:
        builder.add_joint(ROOT_JOINT, Free(), GROUND, tree.root)
    limits = {}
    for name in tree.order:
        for j in tree.children.get(name, []):
            if j["kind"] != "fixed":
                _add_joint(rd, builder, tree, j)
            if j["limits"]:
                limits[j["name"]] = j["limits"]
    _add_elements(rd, builder, tree)
    if rd.problems:
        raise ModelFileError(rd.problems, rd.source)
    meta = {"urdf": {"robot": robot, "path": rd.source, "root_link": tree.root}}
    if reasons:
        meta[KINEMATICS_ONLY] = reasons[0]
    if limits:
        meta["limits"] = limits
    if tree.mimics:
        meta["mimic"] = tree.mimics
    builder.metadata = meta
    if not tree.bodies or (not tree.floating_base and not any(j["kind"] != "fixed" for j in tree.joints)):
        raise ModelFileError([Problem("/robot", "the robot has no moving link (with floating_base=False the root "
                                                "link is the ground)")], rd.source)
    model = _built(rd, builder)
    if follow:
        for jname, m in follow.items():
            builder.add_constraint(mimic_constraint(model, jname, m["joint"], m["multiplier"], m["offset"]))
        model = _built(rd, builder)
    if notes:
        what = ("kept as written (strict=True refuses them, repair=True moves each to the nearest physical one)"
                if policy == "warn" else "moved to the nearest physical ones")
        warnings.warn(InertiaWarning(f"{rd.source}: {len(notes)} link inertia{'s' * (len(notes) > 1)} that no body "
                                     f"has, {what}: " + "; ".join(notes)), stacklevel=4)
    return model


def _massless_subtrees(tree, parts):
    """``[(link, message)]``: the moving links that carry no mass and no inertia at all (with everything they
    carry), which make the mass matrix singular."""
    carried = {n: bool(parts.get(n)) for n in tree.bodies}
    for name in reversed(tree.order):
        b = tree.body_of[name][0]
        for j in tree.children.get(name, []):
            child_body = tree.body_of[j["child"]][0]
            if child_body != b and child_body in carried and b in carried:
                carried[b] = carried[b] or carried[child_body]
    out = []
    for name in tree.bodies:
        if not carried[name]:
            how = ("the free joint of floating_base=True" if name == tree.root else
                   f"joint '{next(j['name'] for j in tree.joints if j['child'] == name)}'")
            out.append((name, f"link '{name}' has no mass (no <inertial> with a mass or inertia, nor links it "
                              f"carries that have one) but moves on {how}"))
    return out


def _add_joint(rd, builder, tree, j):
    parent_body, P = tree.body_of[j["parent"]]
    place = P * j["origin"]
    child_placement = None
    try:
        if j["kind"] in ("revolute", "continuous"):
            joint = Revolute(axis=j["axis"])
        elif j["kind"] == "prismatic":
            joint = Prismatic(axis=j["axis"])
        elif j["kind"] == "floating":
            joint = Free()
        else:   # planar: the joint frame's z along the URDF axis (the plane's normal)
            A = _align_z(j["axis"])
            joint = Planar()
            if not np.array_equal(A, np.eye(3)):
                place = place * Placement(A)
                child_placement = Placement(A)
        lim = j["limits"]
        stop = ((lim.get("lower"), lim.get("upper")) if tree.stops and j["kind"] in ("revolute", "prismatic")
                and ("lower" in lim or "upper" in lim) else None)
        builder.add_joint(j["name"], joint, parent_body, j["child"], placement=place,
                          child_placement=child_placement, damping=j["damping"] or None, limits=stop)
    except ModelError as exc:
        rd.problems.append(Problem(j["path"], str(exc)))


def _add_elements(rd, builder, tree):
    """Frames of the links that are not bodies, visual and collision elements of every link (the collisions with
    the coefficients ``rd.coefficients``: friction, restitution)."""
    used = set()
    for name in tree.order:
        b, P = tree.body_of[name]
        if b != name and name != GROUND:   # (a link named 'ground' is no frame: the name is the ground's)
            builder.add_frame(name, b, P)
        counts = {}
        for kind, given, shape, origin, color in tree.links[name]["shapes"]:
            k = counts[kind] = counts.get(kind, 0) + 1
            label = given if given and given not in used else f"{name}_{kind}" + (f"_{k - 1}" if k > 1 else "")
            while label in used:
                label += "_"
            used.add(label)
            try:
                if kind == "visual":
                    builder.add_visual(label, b, shape, P * origin, color)
                else:
                    builder.add_collision(label, b, shape, P * origin, *rd.coefficients)
            except ModelError as exc:
                rd.problems.append(Problem(tree.links[name]["path"], str(exc)))


def _built(rd, builder):
    try:
        return builder.build()
    except ModelError as exc:
        element = str(getattr(exc, "element", "") or "")
        path = (f"link[@name='{element[6:-1]}']" if element.startswith("body '") else
                f"joint[@name='{element[7:-1]}']" if element.startswith("joint '") else "")
        raise ModelFileError([Problem(path, str(exc))], rd.source) from None


# ---- mesh files ------------------------------------------------------------------------------------------------
def _mesh_path(filename, base, package_dirs):
    """``(resolved name, tried)``: the file a mesh's name points to when it is found, and whether it was looked for
    (``package://`` without ``package_dirs`` is not)."""
    if filename.startswith("package://"):
        pkg, _, rest = filename[len("package://"):].lstrip("/").partition("/")
        inside = posixpath.normpath(rest or ".")
        if inside == ".." or inside.startswith(("../", "/")) or pkg in ("", ".", ".."):
            raise ValueError(f"mesh '{filename}' leaves the folder of its package '{pkg}'; a package:// name is a "
                             "path inside the package")
        if package_dirs is None:
            return filename, False
        for d in package_dirs:
            d = Path(d)
            for root in (d / pkg, d if d.name == pkg else None):
                candidate = None if root is None else root / rest
                if candidate is not None and candidate.is_file():
                    if not candidate.resolve().is_relative_to(root.resolve()):   # (a link out of the package)
                        raise ValueError(f"mesh '{filename}' leaves the folder of its package: '{candidate}' is "
                                         f"'{candidate.resolve()}', outside '{root.resolve()}'")
                    return str(candidate.resolve()), True
        return filename, True
    path = Path(filename[len("file://"):] if filename.startswith("file://") else filename)
    if not path.is_absolute():
        if base is None:
            return filename, False
        path = base / path
    return (str(path.resolve()), True) if path.is_file() else (filename, True)


def load_urdf(path, floating_base=False, gravity=(0.0, 0.0, -9.81), *, strict=False, repair=False, package_dirs=None,
              mimic=False, limits=True, kinematics_only=False, friction=1.0, restitution=0.0):
    """The Model of the URDF file ``path`` (see the module docstring). ``floating_base=True`` puts the root link on a
    free joint ``root_joint``; ``strict=True`` refuses every inertia no body has, ``repair=True`` moves each to the
    nearest physical one; ``package_dirs``: folders where ``package://`` meshes are looked up; ``mimic=True`` makes
    each ``<mimic>`` a constraint; ``limits=False`` keeps the joints' ``<limit lower upper>`` as data only (by default
    they are the end stops of revolute and prismatic joints: ``model.lower_limits``, plastic impacts, resting
    contact); ``kinematics_only=True`` reads a file whose dynamics are not defined (a massless link that moves, an
    inertia no body has) for its kinematics (``Model.kinematics_only`` says why; the dynamics refuse the model);
    ``friction``, ``restitution``: the coefficients of its ``<collision>`` elements (a URDF has none of its own;
    ``model.geometry.Collision``). Problems of the file raise ``ModelFileError`` listing each one."""
    return parse_urdf(read_text(path), str(path), floating_base=floating_base, gravity=gravity, strict=strict,
                      repair=repair, package_dirs=package_dirs, mimic=mimic, limits=limits,
                      kinematics_only=kinematics_only, friction=friction, restitution=restitution)
