"""The MJCF kinematic tree as the builder's bodies, joints, frames, visuals and collision elements.

Numbering and names: MuJoCo numbers bodies, joints, geoms and sites in the order of the file (depth first); an
element without a name is named after its kind and that number (``body3``, ``joint5``, ``geom12``, ``site2``, as
``mj_id2name`` would count them). The bodies are added in that order, so the Model's coordinates q and velocities v
come in MuJoCo's order of ``qpos`` and ``qvel`` (``state.py`` maps the free joints' velocities).

Bodies and joints (MuJoCo's ``mj_kinematics``):

* a body without joints is welded to its parent: it is merged into the parent's body (its inertia added with the
  parallel-axis theorem) and becomes a named frame there, as URDF's fixed links do; bodies welded to the world are
  frames of the ground and their geoms the ground's;
* a body with joints moves on them in order: joint k turns (hinge) or slides (slide) about its ``axis`` through
  ``pos`` (both in the body's frame, as moved by the joints before it), or turns about ``pos`` (ball). Each joint
  but the last gets a massless body of its own, named ``<body>/<joint>``; the last carries the body. The body's
  frame is MuJoCo's, so its inertia, sites and geoms keep their poses;
* ``ref`` (hinge, slide) is the coordinate value at the body's pose as written: the joint frame is turned (slid)
  back by ``ref``, so q equals MuJoCo's ``qpos`` (and ``range``, ``springref`` and keyframes read unchanged);
* a ``free`` joint is a ``Free`` joint on the ground: q is the body's position and orientation (w, x, y, z) in the
  world, as MuJoCo's ``qpos``; its velocity is [ω; v] in the body's frame (MuJoCo: [v in the world; ω in the body]).
"""
from dataclasses import dataclass, field

import numpy as np

from multibody.errors import ModelError
from multibody.io.mjcf.document import fail, numbers
from multibody.io.mjcf.frames import placement
from multibody.io.mjcf.inertia import geom_inertia, geom_volume, principal_bounds
from multibody.model import GROUND, Box, Capsule, Cylinder, Free, HalfSpace, Mesh, Placement, Prismatic, Revolute, Sphere, Spherical
from multibody.model.inertia import combine_rigid
from multibody.model.rotations import rotation_about

__all__ = ["MjBody", "MjJoint", "MjGeom", "read_tree", "tree_inertias", "add_tree"]

JOINT_TYPES = ("hinge", "slide", "ball", "free")
GEOM_TYPES = ("plane", "hfield", "sphere", "capsule", "ellipsoid", "cylinder", "box", "mesh", "sdf")
#: attributes read (or harmless: names, groups, colours, user data) per element; the others are named in the warning
KNOWN = {
    "body": {"name", "childclass", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "user"},
    "frame": {"name", "childclass", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis"},
    "inertial": {"pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "mass", "diaginertia", "fullinertia"},
    "joint": {"name", "type", "pos", "axis", "limited", "range", "stiffness", "springref", "damping", "armature",
              "ref", "group", "user", "frictionloss", "solreflimit", "solimplimit", "margin", "springdamper"},
    "freejoint": {"name", "group"},
    "geom": {"name", "type", "size", "fromto", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "mass",
             "density", "contype", "conaffinity", "friction", "rgba", "material", "group", "mesh", "condim", "user",
             "solref", "solimp", "solmix", "margin", "gap", "priority"},
    "site": {"name", "type", "size", "fromto", "pos", "quat", "axisangle", "euler", "xyaxes", "zaxis", "rgba",
             "material", "group", "user"},
}
#: soft-constraint parameters: our stops and contacts are rigid (named once in the warning, as approximated)
SOFT = {"solreflimit", "solimplimit", "solref", "solimp", "solmix", "priority"}


@dataclass
class MjJoint:
    """A joint as read: ``kind`` (hinge, slide, ball, free), pose data in its body's frame, its parameters, and its
    place in MuJoCo's ``qpos`` / ``qvel`` (``qposadr``, ``dofadr``)."""

    id: int
    name: str
    kind: str
    pos: np.ndarray
    axis: np.ndarray
    attrs: dict
    where: str
    qposadr: int = 0
    dofadr: int = 0
    ref: float = 0.0


@dataclass
class MjGeom:
    id: int
    name: str
    kind: str
    size: np.ndarray
    pose: Placement
    attrs: dict
    where: str
    mass: float = 0.0
    mesh: tuple = None


@dataclass
class MjBody:
    """A body as read: ``pose`` in its parent's frame, its joints, geoms and sites, its inertia (mass, centre,
    inertia about it, in its frame) and, once placed, the Model body that carries it (``kernel``) and where its
    frame is in that body's frame (``frame``)."""

    id: int
    name: str
    parent: int
    pose: Placement
    where: str
    joints: list = field(default_factory=list)
    geoms: list = field(default_factory=list)
    sites: list = field(default_factory=list)
    inertial: tuple = None
    inertia: tuple = (0.0, np.zeros(3), np.zeros((3, 3)))
    kernel: str = GROUND
    frame: Placement = field(default_factory=Placement)


def _path(where, tag, name, k):
    return f"{where}/{tag}[@name='{name}']" if name else f"{where}/{tag}[{k}]"


def read_tree(rd):
    """The bodies of ``<worldbody>`` in MuJoCo's order (``rd.bodies``; 0 is the world), with their joints, geoms and
    sites."""
    world = MjBody(0, "world", -1, Placement(), "worldbody")
    rd.bodies = [world]
    rd.counts = {"joint": 0, "geom": 0, "site": 0, "qpos": 0, "dof": 0}
    for sec in rd.doc.root.findall("worldbody"):
        _read_children(rd, sec, world, Placement(), "main", "worldbody")
    for sec in rd.doc.root.findall("worldbody"):
        _read_children(rd, sec, world, Placement(), "main", "worldbody", bodies=True)


def _read_children(rd, elem, body, frame, cls, where, bodies=False):
    """The joints, geoms, sites and inertia of ``elem`` (a body, the world or a ``<frame>`` of them), then, with
    ``bodies``, its child bodies: MuJoCo numbers a body's own elements before its children's, wherever they stand
    in the file. ``frame`` places a ``<frame>``'s children in the body's frame."""
    seen = {}
    for child in elem:
        tag = child.tag
        k = seen[tag] = seen.get(tag, 0) + 1
        path = _path(where, tag, child.get("name"), k)
        if tag == "frame":
            attrs = child.attrib
            if not bodies:
                rd.check_known("frame", attrs, path)
            sub = frame * placement(attrs, rd.doc.compiler, path, rd.source)
            _read_children(rd, child, body, sub, rd.doc.defaults.check(attrs.get("childclass", cls), path), path,
                           bodies)
        elif bodies:
            if tag == "body":
                _read_body(rd, child, body, frame, cls, path)
        elif tag in ("joint", "freejoint"):
            if body.id == 0:
                fail(rd.source, path, "the world body has no joints")
            _read_joint(rd, child, body, frame, cls, path)
        elif tag == "geom":
            attrs = rd.doc.defaults.attributes("geom", child, cls, path)
            _read_geom(rd, attrs, body, frame, path)
        elif tag == "site":
            attrs = rd.doc.defaults.attributes("site", child, cls, path)
            rd.check_known("site", attrs, path)
            pose, _ = placement(attrs, rd.doc.compiler, path, rd.source, fromto=True)
            sid = rd.counts["site"]
            rd.counts["site"] += 1
            body.sites.append((sid, attrs.get("name") or f"site{sid}", frame * pose))
        elif tag == "inertial":
            if body.id == 0:
                fail(rd.source, path, "the world body has no inertia")
            _read_inertial(rd, child, body, frame, path)
        elif tag in ("camera", "light"):
            rd.visual_only(tag)
        elif tag in ("composite", "flexcomp", "replicate", "attach", "plugin"):
            fail(rd.source, path, f"<{tag}> is not supported (it makes bodies, flexes or plugins that this reader "
                                  "does not build); expand it into bodies first (e.g. save the model MuJoCo compiled "
                                  "with mj_saveLastXML)")
        elif tag != "body":
            rd.not_carried(f"<{tag}>", path)


def _read_body(rd, elem, parent, frame, cls, where):
    attrs = elem.attrib
    rd.check_known("body", attrs, where)
    if attrs.get("mocap") == "true":
        rd.not_carried("body@mocap (a mocap body is read as a body welded to its parent)", where)
    if attrs.get("gravcomp") not in (None, "0"):
        rd.not_carried("body@gravcomp", where)
    bid = len(rd.bodies)
    body = MjBody(bid, attrs.get("name") or f"body{bid}", parent.id, frame * placement(attrs, rd.doc.compiler, where,
                                                                                      rd.source), where)
    rd.bodies.append(body)
    cls = rd.doc.defaults.check(attrs.get("childclass", cls), where)
    _read_children(rd, elem, body, Placement(), cls, where)
    _read_children(rd, elem, body, Placement(), cls, where, bodies=True)


def _kind_and_number(rd, attrs, element, default, kinds, where):
    """The element's ``type`` (one of ``kinds``) and its number among the elements of its kind (MuJoCo's id)."""
    kind = attrs.get("type", default)
    if kind not in kinds:
        fail(rd.source, f"{where}/@type", f"expected one of {', '.join(kinds)}, got '{kind}'")
    number = rd.counts[element]
    rd.counts[element] += 1
    return kind, number


def _read_joint(rd, elem, body, frame, cls, where):
    if elem.tag == "freejoint":
        attrs = {k: v for k, v in elem.attrib.items()}
        rd.check_known("freejoint", attrs, where)
        attrs["type"] = "free"
    else:
        attrs = rd.doc.defaults.attributes("joint", elem, cls, where)
        rd.check_known("joint", attrs, where)
    kind, jid = _kind_and_number(rd, attrs, "joint", "hinge", JOINT_TYPES, where)
    pos = numbers(attrs["pos"], 3, f"{where}/@pos", rd.source) if "pos" in attrs else np.zeros(3)
    axis = numbers(attrs["axis"], 3, f"{where}/@axis", rd.source) if "axis" in attrs else np.array([0.0, 0.0, 1.0])
    if kind in ("hinge", "slide"):
        n = float(np.linalg.norm(axis))
        if not n > 1e-14:
            fail(rd.source, f"{where}/@axis", f"the axis must not be zero, got {attrs.get('axis')}")
        axis = axis / n
    if not frame.is_identity(tol=0.0):
        pos = frame.act(pos)
        axis = frame.rotation @ axis
    if kind == "free" and (body.joints or rd.bodies[body.parent].id != 0):
        fail(rd.source, where, "a free joint is the only joint of a body whose parent is the world (as MuJoCo "
                               "requires)")
    if body.joints and body.joints[-1].kind == "free":
        fail(rd.source, where, "a body with a free joint has no other joints")
    j = MjJoint(jid, attrs.get("name") or f"joint{jid}", kind, pos, axis, attrs, where,
                rd.counts["qpos"], rd.counts["dof"])
    if "ref" in attrs and kind in ("hinge", "slide"):
        r = float(numbers(attrs["ref"], 1, f"{where}/@ref", rd.source)[0])
        j.ref = rd.doc.compiler.angle_value(r) if kind == "hinge" else r
    rd.counts["qpos"] += {"free": 7, "ball": 4}.get(kind, 1)
    rd.counts["dof"] += {"free": 6, "ball": 3}.get(kind, 1)
    body.joints.append(j)


def _read_inertial(rd, elem, body, frame, where):
    attrs = elem.attrib
    rd.check_known("inertial", attrs, where)
    if "mass" not in attrs:
        fail(rd.source, where, "<inertial> needs a mass")
    mass = float(numbers(attrs["mass"], 1, f"{where}/@mass", rd.source)[0])
    P = frame * placement(attrs, rd.doc.compiler, where, rd.source)
    if "fullinertia" in attrs:
        xx, yy, zz, xy, xz, yz = numbers(attrs["fullinertia"], 6, f"{where}/@fullinertia", rd.source)
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    elif "diaginertia" in attrs:
        inertia = np.diag(numbers(attrs["diaginertia"], 3, f"{where}/@diaginertia", rd.source))
    else:
        fail(rd.source, where, "<inertial> needs diaginertia or fullinertia")
    if mass < 0:
        fail(rd.source, f"{where}/@mass", f"the mass must be >= 0, got {mass}")
    body.inertial = (mass, P.translation.copy(), P.rotation @ inertia @ P.rotation.T)


def _read_geom(rd, attrs, body, frame, where):
    rd.check_known("geom", attrs, where)
    kind, gid = _kind_and_number(rd, attrs, "geom", "sphere", GEOM_TYPES, where)
    size = np.zeros(3)
    if "size" in attrs:
        s = numbers(attrs["size"], 3, f"{where}/@size", rd.source, at_least=1)
        size[:len(s)] = s
    allowed = kind in ("capsule", "cylinder", "box", "ellipsoid")
    if "fromto" in attrs and not allowed:
        fail(rd.source, f"{where}/@fromto", f"fromto applies to capsules, cylinders, boxes and ellipsoids, not a {kind}")
    pose, half = placement(attrs, rd.doc.compiler, where, rd.source, fromto=True)
    if half is not None:
        size[2 if kind in ("box", "ellipsoid") else 1] = half
        if kind in ("box", "ellipsoid") and size[1] == 0:
            size[1] = size[0]
    g = MjGeom(gid, attrs.get("name") or f"geom{gid}", kind, size, frame * pose, attrs, where)
    _check_size(rd, g)
    lo, hi = rd.doc.compiler.inertiagrouprange
    group = int(float(attrs.get("group", 0)))
    counts = lo <= group <= hi and kind not in ("plane", "hfield", "sdf") and body.id > 0
    if kind == "mesh":
        g.mesh = rd.mesh(attrs.get("mesh"), where, properties=counts)
    if counts:
        props = g.mesh["properties"] if kind == "mesh" else None
        if "mass" in attrs:
            g.mass = float(numbers(attrs["mass"], 1, f"{where}/@mass", rd.source)[0])
        else:
            density = float(numbers(attrs["density"], 1, f"{where}/@density", rd.source)[0]) if "density" in attrs \
                else 1000.0
            g.mass = density * geom_volume(kind, size, props)
        if attrs.get("shellinertia") == "true":
            rd.not_carried("geom@shellinertia (solid inertia used)", where)
    body.geoms.append(g)


def _check_size(rd, g):
    need = {"sphere": 1, "capsule": 2, "cylinder": 2, "ellipsoid": 3, "box": 3}.get(g.kind, 0)
    if need and not np.all(g.size[:need] > 0):
        fail(rd.source, f"{g.where}/@size", f"a {g.kind} needs {need} positive size{'s' * (need > 1)}, got "
                                             f"{g.size[:need].tolist()}")


def tree_inertias(rd):
    """Each body's inertia in its frame (module docstring of ``inertia.py``): its ``<inertial>`` unless the compiler
    says ``inertiafromgeom="true"`` (or ``"auto"`` and there is none), then the compiler's bounds and total mass."""
    c = rd.doc.compiler
    for b in rd.bodies[1:]:
        if b.inertial is not None and c.inertiafromgeom != "true":
            b.inertia = b.inertial
        elif c.inertiafromgeom != "false":
            parts = []
            for g in (g for g in b.geoms if g.mass > 0):
                centre, inertia = geom_inertia(g.kind, g.size, g.mass, g.mesh["properties"] if g.mesh else None)
                R = g.pose.rotation
                parts.append((g.mass, g.pose.act(centre), R @ inertia @ R.T))
            b.inertia = combine_rigid(parts)
        if c.boundmass > 0 or c.boundinertia > 0:
            m, I = principal_bounds(b.inertia[0], b.inertia[2], c.boundmass, c.boundinertia)
            b.inertia = (m, b.inertia[1], I)
    if c.settotalmass > 0:
        total = sum(b.inertia[0] for b in rd.bodies[1:])
        if total > 0:
            s = c.settotalmass / total
            for b in rd.bodies[1:]:
                b.inertia = (b.inertia[0] * s, b.inertia[1], b.inertia[2] * s)


def add_tree(rd, builder):
    """Add the bodies (welded ones merged), joints, frames, visuals and collision elements to ``builder``; sets each
    MjBody's ``kernel`` and ``frame`` and fills ``rd.joints`` (Model joint name -> MjJoint) and ``rd.collisions``."""
    for b in rd.bodies[1:]:
        parent = rd.bodies[b.parent]
        if b.joints:
            b.kernel, b.frame = rd.body_name(b.name), Placement()
        else:
            b.kernel, b.frame = parent.kernel, parent.frame * b.pose
    parts = {}
    for b in rd.bodies[1:]:
        if b.kernel != GROUND:
            m, c, I = b.inertia
            R = b.frame.rotation
            parts.setdefault(b.kernel, []).append((m, b.frame.act(c), R @ I @ R.T))
    for b in rd.bodies[1:]:
        if not b.joints:
            continue
        for j in b.joints[:-1]:
            builder.add_body(f"{b.kernel}/{rd.joint_name(j)}", mass=0.0)
        m, c, I = combine_rigid(parts.get(b.kernel, []))
        rd.guard(lambda: builder.add_body(b.kernel, mass=m, com=c, inertia=I), b.where)
    for b in rd.bodies[1:]:
        if b.joints:
            _add_joints(rd, builder, b)
    _add_elements(rd, builder)


def _joint_placement(j, before):
    """The joint frame of ``j`` in the frame of the body before it (``before``: the pose of the MuJoCo body's frame
    there), turned or slid back by ``ref`` (module docstring)."""
    place = before * Placement(translation=j.pos)
    r = j.ref
    if r != 0.0:
            place = place * (Placement(rotation_about(j.axis, -r)) if j.kind == "hinge" else
                             Placement(translation=-r * j.axis))
    return place


def _add_joints(rd, builder, b):
    parent = rd.bodies[b.parent]
    before = parent.frame * b.pose          # the body's frame as written, in the parent Model body's frame
    parent_name = parent.kernel
    for k, j in enumerate(b.joints):
        last = k == len(b.joints) - 1
        child = b.kernel if last else f"{b.kernel}/{rd.joint_name(j)}"
        kw = rd.joint_options(j)
        if j.kind == "free":       # on the world (read_tree checked it): q is the body's pose in the world
            joint, place, child_place = Free(), Placement(), None
        else:
            joint = {"hinge": lambda: Revolute(axis=j.axis), "slide": lambda: Prismatic(axis=j.axis),
                     "ball": Spherical}[j.kind]()
            place = _joint_placement(j, before)
            child_place = Placement(translation=j.pos) if last and np.any(j.pos) else None
        rd.guard(lambda: builder.add_joint(rd.joint_name(j), joint, parent_name, child, placement=place,
                                           child_placement=child_place, **kw), j.where)
        rd.joints[rd.joint_name(j)] = j
        parent_name = child
        before = Placement(translation=-j.pos)   # the MuJoCo body frame in the frame of the joint's child


def _add_elements(rd, builder):
    """Frames of the welded bodies and sites, visuals and collision elements of the geoms."""
    for b in rd.bodies[1:]:
        if not b.joints and b.kernel != b.name:
            rd.guard(lambda: builder.add_frame(rd.frame_name(b.name, ("body", b.id)), b.kernel, b.frame), b.where)
    for b in rd.bodies:
        for sid, name, pose in b.sites:
            rd.guard(lambda: builder.add_frame(rd.frame_name(name, ("site", sid)), b.kernel, b.frame * pose),
                     b.where)
        for g in b.geoms:
            _add_geom(rd, builder, b, g)


def _shape(rd, g):
    s = g.size
    if g.kind == "sphere":
        return Sphere(s[0])
    if g.kind == "capsule":
        return Capsule(s[0], 2 * s[1])
    if g.kind == "cylinder":
        return Cylinder(s[0], 2 * s[1])
    if g.kind == "box":
        return Box(2 * s[:3])
    if g.kind == "plane":
        return HalfSpace()
    if g.kind == "mesh" and g.mesh is not None:
        return Mesh(g.mesh["file"], g.mesh["scale"])
    return None


def _add_geom(rd, builder, b, g):
    shape = _shape(rd, g)
    pose = b.frame * g.pose
    if shape is None:
        rd.not_carried(f"geom of type {g.kind} (no such shape: its mass and inertia are carried, not its surface)",
                       g.where)
        return
    name = rd.unique("geom", g.name)
    color = rd.color(g.attrs)
    rd.guard(lambda: builder.add_visual(name, b.kernel, shape, pose, color), g.where)
    contype = int(float(g.attrs.get("contype", 1)))
    conaffinity = int(float(g.attrs.get("conaffinity", 1)))
    if (contype or conaffinity or g.name in rd.paired) and rd.options["contact"]:
        friction = rd.friction(g)
        grow = float(g.attrs.get("margin", 0.0)) - float(g.attrs.get("gap", 0.0))
        if grow > 0:
            shape, pose = _grown(rd, g, shape, pose, grow)
        rd.guard(lambda: builder.add_collision(name, b.kernel, shape, pose, friction, contype=contype,
                                               conaffinity=conaffinity), g.where)
        rd.collisions[name] = (g, b)


def _grown(rd, g, shape, pose, m):
    """The collision shape of ``g`` grown by ``m`` (its margin less its gap): MuJoCo holds a resting contact at the
    distance margin₁ + margin₂ (less the gaps) apart, which growing each shape by its own makes a distance of zero
    here. Spheres, capsules and planes grow exactly; a box or cylinder grows to the box or cylinder around the rounded
    one; a mesh is kept (named)."""
    where = g.where
    if g.kind == "mesh":
        rd.not_carried("geom@margin of a mesh (its contacts rest at distance 0 here)", where)
        return shape, pose
    rd.approximated("geom@margin (the collision shape grown by its margin less its gap: MuJoCo rests a contact "
                    "that far apart)", where)
    if isinstance(shape, Sphere):
        return Sphere(shape.radius + m), pose
    if isinstance(shape, Capsule):
        return Capsule(shape.radius + m, shape.length), pose
    if isinstance(shape, Cylinder):
        return Cylinder(shape.radius + m, shape.length + 2 * m), pose
    if isinstance(shape, Box):
        return Box(np.asarray(shape.size) + 2 * m), pose
    return shape, pose * Placement(translation=(0.0, 0.0, m))      # a half-space: its boundary moved out
