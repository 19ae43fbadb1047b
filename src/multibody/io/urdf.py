"""URDF robot descriptions as Models (the ROS Unified Robot Description Format, wiki.ros.org/urdf/XML).

What is read, and how it maps to the builder (``ModelBuilder``, so every builder check applies):

* ``<link>``: its ``<inertial>`` — ``mass``, and ``inertia`` (ixx … izz) about the centre of mass in the
  inertial frame, which ``<origin xyz rpy>`` places in the link frame: the body's ``com`` is ``xyz`` and its
  inertia ``R I Rᵀ`` with ``R = Rz(yaw) Ry(pitch) Rx(roll)``. A link without ``<inertial>`` has no mass.
* ``<joint>`` of type ``revolute``, ``continuous`` (→ ``Revolute``), ``prismatic`` (→ ``Prismatic``),
  ``floating`` (→ ``Free``), ``planar`` (→ ``Planar``, the motion in the plane normal to ``<axis>``) and
  ``fixed``: ``<origin xyz rpy>`` is the joint's placement in the parent link's frame; the child link's frame
  is the joint frame moved by the joint (the builder's convention); ``<axis xyz>`` (default (1, 0, 0)) in the
  joint frame. ``<dynamics damping>`` becomes the joint's viscous damper (``damping``, used when simulating);
  ``<limit lower upper effort velocity>`` and ``<dynamics friction>`` are kept as data in
  ``model.metadata["limits"]``; ``lower`` and ``upper`` of revolute and prismatic joints are also their end stops
  (``model.lower_limits``, ``model.upper_limits``; plastic: restitution 0), unless ``limits=False``. ``<mimic>`` is not followed (the joint moves freely).
* A link fixed to its parent (``fixed`` joint) is merged into the parent's body, as Pinocchio's parser does:
  masses, centres and inertias add up (parallel-axis theorem) and the link's frame is kept in
  ``model.metadata["frames"]`` (body and placement). Links fixed to a fixed root belong to the ground.
* The root link (the one that is no joint's child) is the ground; ``floating_base=True`` makes it a body on a
  ``Free`` joint named ``root_joint`` instead (q: position, quaternion (w, x, y, z); v: [ω; v] in the root
  frame).
* ``<visual>`` shapes (meshes by file name, boxes, cylinders, spheres) are kept for drawing in
  ``model.metadata["visuals"]`` (body → list, placed in the body frame); ``<collision>`` is ignored.

Names come from the file: bodies are named after their links, joints keep their names, so
``model.coordinate_names()`` / ``velocity_names()`` are ``"<joint>.angle"`` etc. and map to other tools by the
joint name. A moving link must have a mass (after its fixed children are merged): the builder's bodies have
positive masses.

Problems are collected and raised together (``ModelFileError``), each with its place in the file, e.g.
``link[@name='foot']/inertial/inertia: ...``. The XML is read with :mod:`xml.etree.ElementTree`; a document
type definition (``<!DOCTYPE``, ``<!ENTITY``) is refused, so no entity is ever expanded.
"""
import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from multibody.errors import ModelError
from multibody.io.documents import ModelFileError, Problem, read_text
from multibody.io.model_files import rpy_matrix
from multibody.model import GROUND, Free, ModelBuilder, Placement, Planar, Prismatic, Revolute
from multibody.model.bodies import check_inertia

__all__ = ["load_urdf", "parse_urdf", "ROOT_JOINT"]

#: name of the free joint that ``floating_base=True`` adds (Pinocchio's name for it)
ROOT_JOINT = "root_joint"
JOINT_KINDS = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


class _Problems(Exception):
    pass


class _Reader:
    def __init__(self, source):
        self.source = source
        self.problems = []

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
            self.fail(f"{path}/@{attr}", f"expected {n} number{'s' * (n > 1)}, got '{text}'")
        if len(vals) != n or not all(math.isfinite(x) for x in vals):
            self.fail(f"{path}/@{attr}", f"expected {n} finite number{'s' * (n > 1)}, got '{text}'")
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


def _placement_data(P):
    return {"translation": P.translation.tolist(), "rotation": P.rotation.tolist()}


def parse_urdf(text, source="<urdf>", floating_base=False, gravity=(0.0, 0.0, -9.81), limits=True):
    """A Model from the text of a URDF file (see the module docstring); ``limits=False`` leaves the ``<limit lower
    upper>`` of revolute and prismatic joints as data only (no end stops)."""
    rd = _Reader(source)
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
            links[name] = _read_link(rd, le, name, path)
            link_order.append(name)
        except _Problems:
            links[name] = None
    joints = []
    child_of = {}
    seen = set()
    for k, je in enumerate(root.findall("joint")):
        name = je.get("name")
        path = f"joint[@name='{name}']" if name else f"joint[{k + 1}]"
        try:
            if not name:
                rd.fail(path, "a joint needs a name")
            if name in seen or (floating_base and name == ROOT_JOINT):
                rd.fail(path, f"joint '{name}' is defined twice" if name in seen else
                        f"the name '{ROOT_JOINT}' is taken by the free joint of floating_base=True")
            seen.add(name)
            j = _read_joint(rd, je, name, path, links)
            if j["child"] in child_of:
                rd.fail(f"{path}/child", f"link '{j['child']}' is already the child of joint '{child_of[j['child']]}'"
                                         " (a URDF describes a tree)")
            child_of[j["child"]] = name
            joints.append(j)
        except _Problems:
            pass
    if rd.problems:
        raise ModelFileError(rd.problems, source)
    roots = [n for n in link_order if n not in child_of]
    if len(roots) != 1:
        what = "no link" if not roots else f"{len(roots)} links ({', '.join(roots)})"
        raise ModelFileError([Problem("/robot", f"a URDF tree has one root link (a link that is no joint's child); "
                                                f"found {what}")], source)
    return _build(rd, robot, links, joints, roots[0], floating_base, gravity, source, limits)


def _read_link(rd, le, name, path):
    link = {"name": name, "mass": 0.0, "com": np.zeros(3), "inertia": np.zeros((3, 3)), "visuals": []}
    inertial = le.find("inertial")
    if inertial is not None:
        ipath = f"{path}/inertial"
        me = inertial.find("mass")
        mass = rd.number(me, "value", f"{ipath}/mass") if me is not None else 0.0
        if mass < 0 or not math.isfinite(mass):
            rd.fail(f"{ipath}/mass", f"link '{name}': mass must be non-negative and finite, got {mass}")
        P = rd.origin(inertial, ipath)
        ie = inertial.find("inertia")
        comps = np.zeros(6)
        if ie is not None:
            comps = np.array([rd.number(ie, a, f"{ipath}/inertia", 0.0)
                              for a in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")])
        if mass > 0:
            try:
                I = check_inertia(comps, f"link '{name}'")
            except ModelError as exc:
                rd.fail(f"{ipath}/inertia", str(exc))
            link.update(mass=mass, com=P.translation.copy(), inertia=P.rotation @ I @ P.rotation.T)
    for k, ve in enumerate(le.findall("visual")):
        vis = _read_visual(rd, ve, f"{path}/visual[{k + 1}]")
        if vis is not None:
            link["visuals"].append(vis)
    return link


def _read_visual(rd, ve, path):
    ge = ve.find("geometry")
    if ge is None:
        return None
    out = {"placement": rd.origin(ve, path)}
    if ve.get("name"):
        out["name"] = ve.get("name")
    shape = next(iter(ge), None)
    if shape is None:
        return None
    if shape.tag == "mesh":
        out["mesh"] = shape.get("filename", "")
        if shape.get("scale"):
            out["scale"] = rd.floats(shape, "scale", 3, f"{path}/geometry/mesh").tolist()
    elif shape.tag == "box":
        out["box"] = rd.floats(shape, "size", 3, f"{path}/geometry/box").tolist()
    elif shape.tag == "cylinder":
        out["cylinder"] = {"radius": rd.number(shape, "radius", f"{path}/geometry/cylinder"),
                           "length": rd.number(shape, "length", f"{path}/geometry/cylinder")}
    elif shape.tag == "sphere":
        out["sphere"] = {"radius": rd.number(shape, "radius", f"{path}/geometry/sphere")}
    else:
        return None
    me = ve.find("material")
    if me is not None:
        if me.get("name"):
            out["material"] = me.get("name")
        ce = me.find("color")
        if ce is not None and ce.get("rgba"):
            out["color"] = rd.floats(ce, "rgba", 4, f"{path}/material/color").tolist()
    return out


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
    if kind in ("revolute", "continuous", "prismatic", "planar") and not np.linalg.norm(axis) > 1e-12:
        rd.fail(f"{path}/axis", f"joint '{name}': the axis must not be zero")
    j = {"name": name, "kind": kind, "origin": rd.origin(je, path), "axis": axis, **ends, "path": path}
    le = je.find("limit")
    limits = {}
    if le is not None:
        for attr in ("lower", "upper", "effort", "velocity"):
            if le.get(attr) is not None and not (kind == "continuous" and attr in ("lower", "upper")):
                limits[attr] = rd.number(le, attr, f"{path}/limit")
    de = je.find("dynamics")
    j["damping"] = 0.0
    if de is not None:
        j["damping"] = rd.number(de, "damping", f"{path}/dynamics", 0.0)
        if j["damping"] < 0:
            rd.fail(f"{path}/dynamics/@damping", f"joint '{name}': damping must be non-negative, got {j['damping']}")
        if de.get("friction") is not None:
            limits["friction"] = rd.number(de, "friction", f"{path}/dynamics")
    if je.find("mimic") is not None:
        limits["mimic"] = je.find("mimic").get("joint", "")
    j["limits"] = limits
    return j


def _combine(parts):
    """Mass, centre and inertia about the centre of rigidly joined parts ``[(m, c, I_c)]`` (one frame)."""
    m = sum(p[0] for p in parts)
    if m == 0:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    if len(parts) == 1:
        return parts[0]
    c = sum(p[0] * p[1] for p in parts) / m
    I = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = ci - c
        I += Ii + mi * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, 0.5 * (I + I.T)


def _build(rd, robot, links, joints, root, floating_base, gravity, source, stops=True):
    children = {}
    for j in joints:
        children.setdefault(j["parent"], []).append(j)
    # each link's body (itself, or the body it is fixed to) and its frame in that body's frame
    body_of = {root: (GROUND if not floating_base else root, Placement())}
    order, moving = [], []        # depth-first, children in file order
    stack = [root]
    while stack:
        name = stack.pop()
        order.append(name)
        for j in reversed(children.get(name, [])):
            if j["kind"] == "fixed":
                b, P = body_of[name]
                body_of[j["child"]] = (b, P * j["origin"])
            else:
                body_of[j["child"]] = (j["child"], Placement())
            stack.append(j["child"])
    unreachable = [n for n in links if n not in body_of]
    if unreachable:
        raise ModelFileError([Problem(f"link[@name='{n}']", f"link '{n}' is not connected to the root link "
                                                            f"'{root}'") for n in unreachable], source)
    parts, visuals, frames = {}, {}, {}
    for name in order:
        b, P = body_of[name]
        link = links[name]
        if link["mass"] > 0:
            R = P.rotation
            parts.setdefault(b, []).append((link["mass"], P.act(link["com"]), R @ link["inertia"] @ R.T))
        for vis in link["visuals"]:
            v = dict(vis)
            v["placement"] = _placement_data(P * vis["placement"])
            v.setdefault("name", name)
            visuals.setdefault(b, []).append(v)
        if b != name:
            frames[name] = {"body": b, "placement": _placement_data(P)}
    builder = ModelBuilder(gravity=gravity, name=robot)
    limits = {}
    bodies = [n for n in order if body_of[n][0] == n]
    for name in bodies:
        m, c, I = _combine(parts.get(name, []))
        if m <= 0:
            how = ("the free joint of floating_base=True" if name == root else
                   f"joint '{next(j['name'] for j in joints if j['child'] == name)}'")
            rd.problems.append(Problem(f"link[@name='{name}']", f"link '{name}' has no mass (no <inertial> with a "
                                                                 f"positive mass, nor links fixed to it that have one) "
                                                                 f"but moves on {how}; give it an <inertial>"))
            continue
        try:
            builder.add_body(name, mass=m, com=c, inertia=I)
        except ModelError as exc:
            rd.problems.append(Problem(f"link[@name='{name}']/inertial", str(exc)))
    if rd.problems:
        raise ModelFileError(rd.problems, source)
    if floating_base:
        builder.add_joint(ROOT_JOINT, Free(), GROUND, root)
    for name in order:
        for j in children.get(name, []):
            if j["kind"] == "fixed":
                continue
            parent_body, P = body_of[j["parent"]]
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
                    A = _align_z(j["axis"] / np.linalg.norm(j["axis"]))
                    joint = Planar()
                    if not np.array_equal(A, np.eye(3)):
                        place = place * Placement(A)
                        child_placement = Placement(A)
                lim = j["limits"]
                stop = ((lim.get("lower"), lim.get("upper")) if stops and j["kind"] in ("revolute", "prismatic")
                        and ("lower" in lim or "upper" in lim) else None)
                builder.add_joint(j["name"], joint, parent_body, j["child"], placement=place,
                                  child_placement=child_placement, damping=j["damping"] or None, limits=stop)
            except ModelError as exc:
                rd.problems.append(Problem(j["path"], str(exc)))
            if j["limits"]:
                limits[j["name"]] = j["limits"]
        for j in children.get(name, []):
            if j["kind"] == "fixed" and j["limits"]:
                limits[j["name"]] = j["limits"]
    if rd.problems:
        raise ModelFileError(rd.problems, source)
    meta = {"urdf": {"robot": robot, "path": source, "root_link": root}}
    if limits:
        meta["limits"] = limits
    if visuals:
        meta["visuals"] = visuals
    if frames:
        meta["frames"] = frames
    builder.metadata = meta
    if not bodies or (not floating_base and not any(j["kind"] != "fixed" for j in joints)):
        raise ModelFileError([Problem("/robot", "the robot has no moving link (with floating_base=False the root "
                                                "link is the ground)")], source)
    try:
        return builder.build()
    except ModelError as exc:
        raise ModelFileError([Problem("", str(exc))], source) from None


def load_urdf(path, floating_base=False, gravity=(0.0, 0.0, -9.81), limits=True):
    """The Model of the URDF file ``path`` (see the module docstring); ``floating_base=True`` puts the root link on
    a free joint ``root_joint``; ``limits=False`` keeps the joints' ``<limit lower upper>`` as data only (by default
    they are the end stops of revolute and prismatic joints: ``model.lower_limits``, plastic impacts, resting
    contact). Problems of the file raise ``ModelFileError`` listing each one."""
    return parse_urdf(read_text(path), str(path), floating_base=floating_base, gravity=gravity, limits=limits)
