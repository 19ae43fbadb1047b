"""MJCF elements beyond the tree: tendons, actuators, equality constraints, contact pairs and exclusions, keyframes.

* ``<tendon><fixed>``: the length l = Σ c_k q_k of its joints, kept in ``model.metadata["mjcf"]["tendons"]`` and
  used by actuators and equality constraints; its spring, damper, friction and limits are named as not carried
  (a coupled spring of several coordinates, a unilateral row on a combination of them). ``<spatial>`` tendons are
  kept by their path only.
* ``<actuator>``: ``actuators.py``.
* ``<equality>`` (MuJoCo's, made rigid): ``connect`` is a ``Spherical`` cut joint at the anchor (on body2 the point
  that coincides with it in the model's reference pose, ``qpos0``), ``weld`` a ``Fixed`` cut joint at ``relpose``
  (default: the pose of qpos0), ``joint`` the constraint q₁ − q₁⁰ = Σ pₖ (q₂ − q₂⁰)ᵏ and ``tendon`` (fixed tendons)
  l₁ − l₁⁰ = Σ pₖ (l₂ − l₂⁰)ᵏ, each a ``UserConstraint`` with its exact Jacobian (:class:`Coupling`). Inactive
  ones (``active="false"``) are left out and named.
* ``<contact>``: ``exclude`` (two bodies) never collide, ``pair`` (two geoms) always may: the Model's
  ``contact_exclude`` and ``contact_include`` (``ModelBuilder.exclude_contact``, ``include_contact``).
* ``<keyframe>``: kept as MuJoCo states (``qpos``, ``qvel``, ``ctrl``, ``time``) in the metadata; ``state.keyframe``
  maps one to (q, v).
"""
import numpy as np

from multibody.io.mjcf.actuators import SHORTCUTS, TRANSMISSIONS, limited
from multibody.io.mjcf.document import ACTUATOR_TAGS, fail, numbers
from multibody.model import Fixed, JointPD, Placement, Spherical, UserConstraint
from multibody.model.rotations import quat_to_matrix

__all__ = ["read_tendons", "read_actuators", "add_actuators", "add_equalities", "add_contacts", "read_keyframes",
           "Coupling", "world_poses"]


#: attributes of equality and actuator elements that are read (the others are named in the file's warning)
EQUALITY_READ = {"name", "class", "active", "solref", "solimp", "body1", "body2", "anchor", "site1", "site2", "relpose",
                 "torquescale", "joint1", "joint2", "tendon1", "tendon2", "polycoef"}
ACTUATOR_READ = {"name", "class", "group", "user", "ctrllimited", "ctrlrange", "forcelimited", "forcerange", "gear",
                 "dyntype", "gaintype", "biastype", "dynprm", "gainprm", "biasprm", "kp", "kv", *TRANSMISSIONS}


class Coupling:
    """``f(q) = a·q − a₀ − Σ_k p_k (b·q − b₀)^k`` (one row), a linear combination of coordinates tied to a
    polynomial of another (MuJoCo's joint and tendon equality constraints); ``jacobian`` its exact row."""

    def __init__(self, a, a0, b, b0, poly, nq):
        self.a, self.b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        self.a0, self.b0 = float(a0), float(b0)
        self.poly = np.asarray(poly, dtype=float)
        self.nq = nq

    def __call__(self, q, t):
        x = self.b @ q - self.b0
        return np.array([self.a @ q - self.a0 - sum(p * x ** k for k, p in enumerate(self.poly))])

    def jacobian(self, q, t):
        x = self.b @ q - self.b0
        slope = sum(k * p * x ** (k - 1) for k, p in enumerate(self.poly) if k > 0)
        return (self.a - slope * self.b).reshape(1, -1)


def _where(tag, elem, k, section):
    name = elem.get("name")
    return f"{section}/{tag}[@name='{name}']" if name else f"{section}/{tag}[{k + 1}]"


def read_tendons(rd):
    """``rd.tendons``: name -> {"kind", "joints" [(joint, coef)] (fixed) or "path" (spatial)}."""
    rd.tendons = {}
    known = {"name", "class", "group", "width", "material", "rgba", "user", "limited", "range", "stiffness",
             "damping", "springlength", "frictionloss", "solreflimit", "solimplimit", "solreffriction",
             "solimpfriction", "margin", "armature"}
    for k, t in enumerate(rd.doc.section("tendon")):
        where = _where(t.tag, t, k, "tendon")
        if t.tag not in ("fixed", "spatial"):
            rd.not_carried(f"tendon/{t.tag}", where)
            continue
        attrs = rd.doc.defaults.attributes("tendon", t, "main", where)
        name = attrs.get("name") or f"tendon{k}"
        for key in attrs:
            if key not in known:
                rd.not_carried(f"tendon@{key}", where)
        for key in ("stiffness", "damping", "frictionloss", "armature"):
            if float(attrs.get(key, 0)) != 0:
                rd.not_carried(f"tendon@{key}", where)
        flag = attrs.get("limited", "auto")
        if flag == "true" or (flag == "auto" and rd.doc.compiler.autolimits and "range" in attrs):
            rd.not_carried("tendon@range (a limit on a tendon's length)", where)
        entry = {"kind": t.tag}
        if t.tag == "fixed":
            joints = []
            for e in t:
                if e.tag != "joint" or "joint" not in e.attrib:
                    fail(rd.source, f"{where}/{e.tag}", "a fixed tendon lists <joint joint=... coef=...> elements")
                joints.append((e.get("joint"), float(numbers(e.get("coef", "1"), 1, f"{where}/joint/@coef",
                                                             rd.source)[0])))
            entry["joints"] = joints
        else:
            entry["path"] = [(e.tag, e.get("site") or e.get("geom") or e.get("divisor")) for e in t]
        rd.tendons[name] = entry


def read_actuators(rd):
    """``rd.actuators`` (the metadata of each actuator, in the file's order) and, with a constant control
    (``rd.options["ctrl"]``), the efforts (``rd.efforts``) and PD terms (``rd.servos``) it makes (``actuators.py``)."""
    rd.actuators, rd.servos = [], {}
    elems = rd.doc.section("actuator")
    ctrl = rd.options.get("ctrl")
    if ctrl is not None:
        ctrl = _controls(rd, ctrl, elems)
    autolimits = rd.doc.compiler.autolimits
    for k, e in enumerate(elems):
        where = _where(e.tag, e, k, "actuator")
        if e.tag not in ACTUATOR_TAGS:
            rd.not_carried(f"actuator/{e.tag}", where)
            continue
        p = rd.doc.defaults.actuator(e, "main", where)
        for key in e.attrib:
            if key not in ACTUATOR_READ and key not in p["other"]:
                rd.not_carried(f"actuator@{key}", where)
        name = e.get("name") or f"actuator{k}"
        act = {"name": name, "kind": p["kind"], "gear": p["gear"], "gaintype": p["gaintype"],
               "gainprm": p["gainprm"][:3], "biastype": p["biastype"], "biasprm": p["biasprm"][:3],
               "dyntype": p["dyntype"], "ctrlrange": None, "forcerange": None, "transmission": None}
        for key in ("ctrl", "force"):
            if limited(p[f"{key}limited"], p[f"{key}range"] is not None, autolimits) and p[f"{key}range"]:
                act[f"{key}range"] = list(p[f"{key}range"])
        act["transmission"] = _transmission(rd, e, where)
        rd.actuators.append(act)
        for key in p["other"]:
            rd.not_carried(f"actuator@{key}", where)
        if p["kind"] not in SHORTCUTS:
            rd.not_carried(f"actuator/{p['kind']}", where)
        elif ctrl is not None and "actuation" not in rd.disabled:
            _constant_control(rd, act, ctrl[k], where)


def _controls(rd, ctrl, elems):
    names = [e.get("name") or f"actuator{k}" for k, e in enumerate(elems)]
    if isinstance(ctrl, dict):
        unknown = [n for n in ctrl if n not in names]
        if unknown:
            fail(rd.source, "actuator", f"ctrl names {', '.join(map(repr, unknown))}, which are not actuators (actuators: "
                                        f"{', '.join(names[:20])})")
        return [float(ctrl.get(n, 0.0)) for n in names]
    values = np.broadcast_to(np.asarray(ctrl, dtype=float), (len(names),)) if np.ndim(ctrl) == 0 else \
        np.asarray(ctrl, dtype=float).reshape(-1)
    if values.shape != (len(names),):
        fail(rd.source, "actuator", f"ctrl has {values.shape[0]} values for the {len(names)} actuators")
    return [float(x) for x in values]


def _transmission(rd, e, where):
    given = [key for key in TRANSMISSIONS if key in e.attrib]
    if given == ["joint"] or given == ["jointinparent"]:
        return {"joint": e.get(given[0])}
    if given == ["tendon"]:
        t = rd.tendons.get(e.get("tendon"))
        if t is None:
            fail(rd.source, f"{where}/@tendon", f"the tendon '{e.get('tendon')}' is not defined")
        return {"tendon": e.get("tendon"), "joints": t.get("joints")}
    rd.not_carried(f"actuator transmission {'/'.join(given) or 'none'} (joint and fixed-tendon ones are read)", where)
    return None


def _constant_control(rd, act, u, where):
    """Add the actuator's forces at the constant control u (``actuators.py``) to ``rd.efforts`` / ``rd.servos``."""
    trn = act["transmission"]
    if trn is None or trn.get("joints") is None and "joint" not in trn:
        return
    joints = [(trn["joint"], 1.0)] if "joint" in trn else trn["joints"]
    if act["ctrlrange"] is not None:
        u = min(max(u, act["ctrlrange"][0]), act["ctrlrange"][1])
    if act["dyntype"] != "none" and u != 0:
        rd.not_carried(f"actuator@dyntype={act['dyntype']} (activation dynamics; the control taken as the "
                       "activation)", where)
    g = act["gear"][0]
    if any(x != 0 for x in act["gear"][1:]):
        rd.not_carried("actuator@gear beyond its first entry", where)
    gp, bp = act["gainprm"], act["biasprm"]
    if act["gaintype"] != "fixed" and u != 0:
        rd.not_carried(f"actuator@gaintype={act['gaintype']}", where)
        return
    force = gp[0] * u + (bp[0] if act["biastype"] == "affine" else 0.0)
    servo = act["biastype"] == "affine" and (bp[1] != 0 or bp[2] != 0)
    if act["forcerange"] is not None:
        if servo:
            rd.approximated("actuator@forcerange of a servo (its force is not clamped here)", where)
        else:
            force = min(max(force, act["forcerange"][0]), act["forcerange"][1])
    if act["biastype"] not in ("none", "affine"):
        rd.not_carried(f"actuator@biastype={act['biastype']}", where)
        return
    if servo:
        if len(joints) != 1:
            rd.not_carried("actuator bias through a tendon of several joints", where)
            return
        if bp[1] > 0 or bp[2] > 0:
            rd.not_carried("actuator bias that pushes away from its target (positive biasprm)", where)
            return
        name, c = joints[0]
        gc = g * c
        s = rd.servos.setdefault(name, [0.0, 0.0, 0.0, []])   # Kp, Kd, Kp q*, actuators
        s[0] += -gc * gc * bp[1]
        s[1] += -gc * gc * bp[2]
        s[2] += gc * force
        s[3].append(act["name"])
    elif force != 0:
        for name, c in joints:
            rd.efforts[name] = rd.efforts.get(name, 0.0) + g * c * force


def add_actuators(rd, builder):
    """The servo actuators' ``JointPD`` controllers (one per joint; ``actuators.py``)."""
    for joint, (kp, kd, kpq, names) in rd.servos.items():
        if joint not in rd.joints:
            fail(rd.source, "actuator", f"actuator '{names[0]}' drives joint '{joint}', which is not a hinge or slide "
                                        "joint of the model")
        target = kpq / kp if kp > 0 else 0.0
        extra = kpq if kp == 0 else 0.0     # a damper with a constant force: the force as an effort
        if extra:
            rd.efforts[joint] = rd.efforts.get(joint, 0.0) + extra
        label = names[0] if len(names) == 1 else f"actuators_{joint}"
        rd.guard(lambda: builder.add_controller(rd.unique("controller", label),
                                                JointPD(kp, kd, [target], gravity_compensation=False, joints=[joint])),
                 "actuator")


def world_poses(rd):
    """Each MuJoCo body's pose in the world at ``qpos0`` (every joint at its ``ref``: the poses as written)."""
    poses = [Placement()]
    for b in rd.bodies[1:]:
        poses.append(poses[b.parent] * b.pose)
    return poses


def _body(rd, name, where, attr):
    if name is None or name == "world":
        return rd.bodies[0]
    for b in rd.bodies:
        if b.name == name:
            return b
    fail(rd.source, f"{where}/@{attr}", f"the body '{name}' is not defined")


def _site(rd, name, where, attr):
    for b in rd.bodies:
        for _, sname, pose in b.sites:
            if sname == name:
                return b, pose
    fail(rd.source, f"{where}/@{attr}", f"the site '{name}' is not defined")


def add_equalities(rd, builder, q0):
    """The ``<equality>`` elements as cut joints and constraints (module docstring); ``q0``: the Model's qpos0."""
    if "equality" in rd.disabled:
        return
    poses = None
    for k, e in enumerate(rd.doc.section("equality")):
        where = _where(e.tag, e, k, "equality")
        attrs = rd.doc.defaults.attributes("equality", e, "main", where)
        for key in attrs:
            if key not in EQUALITY_READ:
                rd.not_carried(f"equality@{key}", where)
        name = rd.unique("joint", attrs.get("name") or f"equality{k}")
        if attrs.get("active", "true") == "false":
            rd.not_carried("equality@active=false (an inactive constraint)", where)
            continue
        for key in ("solref", "solimp"):
            if key in attrs:
                rd.approximated(f"equality@{key} (rigid here)", where)
        if e.tag in ("connect", "weld"):
            poses = poses or world_poses(rd)
            _pin(rd, builder, e.tag, attrs, name, where, poses)
        elif e.tag in ("joint", "tendon"):
            _coupling(rd, builder, e.tag, attrs, name, where, q0)
        else:
            rd.not_carried(f"equality/{e.tag}", where)


def _pin(rd, builder, tag, attrs, name, where, poses):
    if "site1" in attrs:
        b1, P1 = _site(rd, attrs["site1"], where, "site1")
        b2, P2 = _site(rd, attrs.get("site2"), where, "site2")
    else:
        b1 = _body(rd, attrs.get("body1"), where, "body1")
        b2 = _body(rd, attrs.get("body2"), where, "body2")
        if tag == "connect":
            anchor = numbers(attrs.get("anchor", "0 0 0"), 3, f"{where}/@anchor", rd.source)
            P1 = Placement(translation=anchor)
            P2 = Placement(translation=(poses[b2.id].inverse() * poses[b1.id]).act(anchor))
        else:
            rel = numbers(attrs.get("relpose", "0 1 0 0 0 0 0"), 7, f"{where}/@relpose", rd.source)
            if np.any(rel[3:]):
                P1 = Placement(quat_to_matrix(rel[3:] / np.linalg.norm(rel[3:])), rel[:3])
            else:
                P1 = poses[b1.id].inverse() * poses[b2.id]
            P2 = Placement()
        if "torquescale" in attrs and tag == "weld":
            rd.approximated("equality@torquescale (rigid here)", where)
    if b1.kernel == b2.kernel:
        rd.not_carried(f"equality/{tag} between bodies welded together", where)
        return
    joint = Spherical() if tag == "connect" else Fixed()
    rd.guard(lambda: builder.add_joint(name, joint, b1.kernel, b2.kernel, placement=b1.frame * P1,
                                       child_placement=b2.frame * P2, cut=True), where)


def _combination(rd, tag, key, attrs, where):
    """(coefficients over q, value at qpos0) of a joint's coordinate or a fixed tendon's length, or None."""
    if key not in attrs:
        return None
    name = attrs[key]
    nq = rd.nq
    a = np.zeros(nq)
    if tag == "joint":
        j = rd.joints.get(name)
        if j is None or j.kind not in ("hinge", "slide"):
            fail(rd.source, f"{where}/@{key}", f"'{name}' is not a hinge or slide joint of the model")
        a[j.qposadr] = 1.0
    else:
        t = rd.tendons.get(name)
        if t is None or t["kind"] != "fixed":
            fail(rd.source, f"{where}/@{key}", f"'{name}' is not a fixed tendon of the model")
        for jname, c in t["joints"]:
            j = rd.joints.get(jname)
            if j is None or j.kind not in ("hinge", "slide"):
                fail(rd.source, f"{where}/@{key}", f"tendon '{name}': '{jname}' is not a hinge or slide joint")
            a[j.qposadr] += c
    return a, float(a @ rd.qpos0)


def _coupling(rd, builder, tag, attrs, name, where, q0):
    first = _combination(rd, tag, f"{tag}1", attrs, where)
    if first is None:
        fail(rd.source, where, f"an equality/{tag} needs {tag}1")
    second = _combination(rd, tag, f"{tag}2", attrs, where)
    poly = numbers(attrs.get("polycoef", "0 1 0 0 0"), 5, f"{where}/@polycoef", rd.source)
    if second is None:
        second, poly = (np.zeros(rd.nq), 0.0), poly[:1]
    f = Coupling(first[0], first[1], second[0], second[1], poly, rd.nq)
    rd.guard(lambda: builder.add_constraint(UserConstraint(name, f, nrows=1, jacobian=f.jacobian)), where)


def add_contacts(rd, builder):
    """``<contact>``: excluded body pairs and explicit geom pairs (module docstring); and the parent filter of the
    bodies with several joints (MuJoCo never tries a body against its parent's, here the body before its first
    joint)."""
    if not rd.collisions:
        return

    def exclude(first, second):        # every collision element of the first bodies against those of the second
        for x in [n for n, (g, b) in rd.collisions.items() if b in first]:
            for y in [n for n, (g, b) in rd.collisions.items() if b in second]:
                builder.exclude_contact(x, y)

    for b in rd.bodies[1:]:
        parent = rd.bodies[b.parent]
        if len(b.joints) > 1 and parent.kernel != "ground":
            exclude([c for c in rd.bodies if c.kernel == b.kernel], [c for c in rd.bodies if c.kernel == parent.kernel])
    for k, e in enumerate(rd.doc.section("contact")):
        where = _where(e.tag, e, k, "contact")
        if e.tag == "exclude":
            exclude([_body(rd, e.get("body1"), where, "body1")], [_body(rd, e.get("body2"), where, "body2")])
        elif e.tag == "pair":
            attrs = rd.doc.defaults.attributes("pair", e, "main", where)
            names = []
            for key in ("geom1", "geom2"):
                found = [n for n, (g, b) in rd.collisions.items() if g.name == attrs.get(key)]
                if not found:
                    fail(rd.source, f"{where}/@{key}", f"the geom '{attrs.get(key)}' is not a collision element")
                names.append(found[0])
            for key in attrs:
                if key not in ("geom1", "geom2", "name", "class"):
                    rd.not_carried(f"pair@{key} (the pair's own contact parameters)", where)
            builder.include_contact(*names)
        else:
            rd.not_carried(f"contact/{e.tag}", where)


def read_keyframes(rd):
    """The ``<key>`` elements as MuJoCo states (module docstring), qpos0 and zeros where one says nothing."""
    keys = []
    for k, e in enumerate(rd.doc.section("keyframe")):
        where = _where("key", e, k, "keyframe")
        key = {"name": e.get("name") or f"key{k}", "time": float(e.get("time", 0.0))}
        for attr, n, default in (("qpos", rd.nq, rd.qpos0), ("qvel", rd.nv, np.zeros(rd.nv)),
                                 ("ctrl", len(rd.actuators), np.zeros(len(rd.actuators)))):
            key[attr] = (numbers(e.get(attr), n, f"{where}/@{attr}", rd.source) if attr in e.attrib else default).tolist()
        for attr in e.attrib:
            if attr not in ("name", "time", "qpos", "qvel", "ctrl"):
                rd.not_carried(f"key@{attr}", where)
        keys.append(key)
    for size in rd.doc.root.findall("size"):      # <size nkey="n">: MuJoCo makes that many, at qpos0
        while len(keys) < int(size.get("nkey", 0)):
            keys.append({"name": f"key{len(keys)}", "time": 0.0, "qpos": rd.qpos0.tolist(), "qvel": [0.0] * rd.nv,
                         "ctrl": [0.0] * len(rd.actuators)})
    return keys
