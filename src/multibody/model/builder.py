"""ModelBuilder: describe bodies, joints and forces by name, then ``build()`` an immutable Model.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder(gravity=(0, 0, -9.81))
>>> b.add_body("link1", mass=1.0, com=(0, 0, -0.5), inertia=[[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.01]])
'link1'
>>> b.add_joint("j1", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="link1",
...             placement=mb.Placement(rotation=np.eye(3), translation=(0, 0, 0)))
'j1'
>>> model = b.build()
>>> model.nq, model.nv, model.neutral().tolist()
(1, 1, [0.0])

Which joints form the tree (seed 001 §1.1, §3.6): going through the joints in the order they were added,
a joint becomes the tree joint of its child when its parent is already connected to the ground and its
child is not; the remaining joints close loops and become *cut joints* (``model.cut_joints``), handled by
the constrained formulations. Pass ``cut=True`` to choose a cut joint yourself. Bodies are then numbered
regularly (every parent before its children), keeping the order they were added where possible.

Inertias (``multibody.model.inertia``): a body's inertia must be physical (non-negative principal moments, the
triangle inequality) unless the builder is made with ``inertia="warn"`` (kept, one ``InertiaWarning`` per
build listing the bodies), ``"repair"`` (moved to the nearest physical inertia, reported the same way) or
``"accept"``; zero moments, point masses and massless bodies are accepted. Whatever the policy, ``build()``
refuses a model whose mass matrix is singular (a point mass on its hinge axis, a massless leaf body), naming
the body, its joint and the numbers.
"""
import heapq
import warnings
from dataclasses import replace

import numpy as np

from multibody.errors import InertiaWarning, ModelError, shown
from multibody.model.base_motion import as_base_motion
from multibody.model.beams import Beam, Cable, beam_parts
from multibody.model.bodies import Body, vector3
from multibody.model.collisions import collision_coefficient
from multibody.model.constraint_table import ConstraintTable
from multibody.model.constraints import Constraint
from multibody.model.controllers import Controller, check_overlap, resolve_controller
from multibody.model.loop_joints import LoopJoint
from multibody.model.forces import JointSpringDamper, PointSpring, per_dof
from multibody.model.geometry import Collision, Frame, Sphere, Visual, check_color, check_shape
from multibody.model.inertia import KINEMATICS_ONLY, POLICIES, singular_joint
from multibody.model.joints import GENERAL, Joint
from multibody.model.loads import checked_load
from multibody.model.model import JointInfo, Model
from multibody.model.placement import Placement, numbers_or_symbols
from multibody.model.unilateral import Unilateral, as_release, joint_unilateral

GROUND = "ground"


def _as_placement(value, element):
    if value is None:
        return Placement()
    if isinstance(value, Placement):
        return value
    try:
        rotation, translation = value
    except (TypeError, ValueError):
        raise ModelError(f"{element}: placement must be a Placement or a (rotation, translation) pair",
                         element=element) from None
    return Placement(rotation, translation, element=element)


class ModelBuilder:
    """Collects bodies, joints and forces; ``build()`` validates them and returns a ``Model``."""

    def __init__(self, gravity=(0.0, 0.0, -9.81), name="model", metadata=None, base_motion=None, inertia="refuse"):
        """``base_motion``: a prescribed motion of the ground, body 0 (see :meth:`set_base_motion`).
        ``inertia``: what to do with a body inertia that is not physical: ``"refuse"`` (a ``ModelError``),
        ``"warn"``, ``"repair"`` or ``"accept"`` (see the module docstring and ``multibody.model.inertia``)."""
        if inertia not in POLICIES:
            raise ModelError(f"ModelBuilder: inertia must be one of {', '.join(POLICIES)}, got {shown(inertia)!r}",
                             element="inertia")
        #: the policy for inertias that are not physical (``multibody.model.inertia``)
        self.inertia = inertia
        #: True: a model whose mass matrix is singular is built for its kinematics only (the reason kept in its
        #: metadata, ``Model.kinematics_only``; the dynamics refuse it) instead of being refused
        self.kinematics_only = False
        g = numbers_or_symbols(gravity, (3,), "gravity", "gravity")
        self.name = name
        #: descriptive data carried to ``model.metadata`` and not used by the dynamics (JSON-like: joint limits,
        #: visual shapes and meshes, the source file; see ``multibody.io``)
        self.metadata = dict(metadata or {})
        self.gravity = g
        self._bodies = {}
        self._joints = []
        self._springs = []
        self._constraints = []
        self._torque = None
        self._base = as_base_motion(base_motion)
        self._frames = {}       # name -> (body, placement)
        self._visuals = []      # (name, body, shape, placement, color)
        self._collisions = []   # (name, body, shape, placement, friction, restitution, contype, conaffinity)
        self._releases = []     # Release elements added with add_release (checked at build)
        self._names = {"joint": set(), "visual": set(), "collision": set()}   # (checked names, without a scan)
        self._controllers = {}  # name -> controller (``multibody.model.controllers``)
        self._loads = {}        # name -> Load (``multibody.model.loads``; frames resolved at build)
        self._elastic = []      # the Beam and Cable descriptions (``multibody.model.beams``)
        self._generated = set()  # the names of the bodies, joints and frames they added
        self._contact_filters = []   # ("exclude" | "include", a, b)

    # ---- description ------------------------------------------------------------------------------------
    def add_body(self, name, mass, com=(0.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0)):
        """Add a rigid body (see ``Body``; its inertia under the builder's ``inertia`` policy); returns its name."""
        if name == GROUND:
            raise ModelError(f"body name '{GROUND}' is reserved for the fixed base", element=f"body '{name}'")
        if name in self._bodies:
            raise ModelError(f"body '{name}' is defined twice", element=f"body '{name}'")
        self._bodies[name] = Body(name, mass, com, inertia, policy=self.inertia)
        return name

    def add_joint(self, name, joint, parent, child, placement=None, child_placement=None, *,
                  stiffness=None, damping=None, rest=None, effort=None, armature=None, cut=False, limits=None,
                  restitution=None, latch=None, release=None):
        """Connect ``child`` to ``parent`` by ``joint``.

        ``placement``: the joint frame in the parent body's frame (``Placement`` or ``(R, p)``).
        ``child_placement``: the joint frame in the child body's frame (seed 001 §3.3: a joint is located on
        both bodies by its hinge vectors). Default: the child's frame is the joint frame (moved by the joint
        coordinates). A joint that closes a loop must be given it (``ModelError`` otherwise): without it the
        loop would silently be closed at the child's origin.
        ``stiffness``, ``damping``, ``rest``, ``effort``: a spring-damper and constant effort on each of the
        joint's velocity coordinates (scalars or one value per coordinate).
        ``armature``: the inertia (>= 0) of a rotor geared to each velocity coordinate (a motor's rotor inertia times
        its gear ratio squared; MuJoCo's ``armature``): added to the diagonal of the mass matrix, its energy
        ½ a q̇² to the kinetic energy (``docs/model-arrays.md``); scalars or one value per coordinate.
        ``limits=(lower, upper)``, ``restitution``, ``latch``, ``release``: its unilateral elements — end stops
        with Newton's restitution e in [0, 1] (default 0), the value at which a coordinate latches (locks), the
        time (or ``Release``) at which the joint opens (``multibody.model.unilateral``); numbers or one per
        coordinate. Returns the joint's name.
        """
        element = f"joint '{name}'"
        if not isinstance(name, str) or not name:
            raise ModelError(f"joint name must be a non-empty string, got {name!r}", element=repr(name))
        if name in self._names["joint"]:
            raise ModelError(f"{element} is defined twice", element=element)
        if not isinstance(joint, Joint):
            raise ModelError(f"{element}: expected a joint type (Revolute, Spherical, ...), got {joint!r}",
                             element=element)
        joint.check(element)
        for role, body in (("parent", parent), ("child", child)):
            if body != GROUND and body not in self._bodies:
                raise ModelError(f"{element}: {role} body '{body}' is not defined (add it with add_body first)",
                                 element=element)
        if parent == child:
            raise ModelError(f"{element}: parent and child are the same body '{parent}'", element=element)
        nv = joint.nv
        if stiffness is not None and np.any(np.asarray(stiffness) != 0) and not joint.linear_coordinates:
            raise ModelError(f"{element}: a {type(joint).__name__} joint has quaternion coordinates; "
                             "joint stiffness is only defined for joints with plain coordinates", element=element)
        force = JointSpringDamper(
            stiffness=per_dof(stiffness, nv, "stiffness", element),
            damping=per_dof(damping, nv, "damping", element),
            rest=per_dof(rest, nv, "rest", element),
            effort=per_dof(effort, nv, "effort", element),
        )
        rotors = per_dof(armature, nv, "armature", element)
        if np.any(rotors < 0.0):
            raise ModelError(f"{element}: armature must be >= 0 (a rotor inertia), got {rotors.tolist()}",
                             element=element)
        unilateral = joint_unilateral(name, joint, limits, restitution, latch, release)
        self._joints.append(dict(
            name=name, joint=joint, parent=parent, child=child,
            placement=_as_placement(placement, element),
            child_placement=None if child_placement is None else _as_placement(child_placement, element),
            force=force, armature=rotors, cut=bool(cut), unilateral=unilateral,
        ))
        self._names["joint"].add(name)
        return name

    def add_release(self, joint, at, mode="separate"):
        """Open the tree joint ``joint`` at time ``at`` (``multibody.model.unilateral.Release``): ``mode=
        "separate"`` cuts it and its child's subtree goes on as a free body, ``"unlock"`` frees its coordinates,
        held until then. The joint must exist when the model is built (``ModelError`` naming it otherwise)."""
        self._releases.append(as_release({"at": at, "mode": mode}, f"joint '{joint}'")
                              .checked(joint, f"joint '{joint}'"))
        return joint

    def add_spring(self, name, body_a, point_a, body_b, point_b, stiffness, damping=0.0, rest_length=0.0):
        """A spring-damper between ``point_a`` of ``body_a`` and ``point_b`` of ``body_b`` (body frames;
        ``"ground"`` allowed). Force magnitude ``stiffness (l − rest_length) + damping l̇``."""
        element = f"spring '{name}'"
        for role, body in (("body_a", body_a), ("body_b", body_b)):
            if body != GROUND and body not in self._bodies:
                raise ModelError(f"{element}: {role} '{body}' is not defined (bodies: "
                                 f"{', '.join([GROUND, *self._bodies][:20])})", element=element)
        if any(s.name == name for s in self._springs):
            raise ModelError(f"{element} is defined twice", element=element)
        values = []
        for what, value in (("stiffness", stiffness), ("damping", damping), ("rest_length", rest_length)):
            try:
                values.append(float(value))
            except (TypeError, ValueError, OverflowError):
                raise ModelError(f"{element}: {what} must be a number, got {shown(value)!r}", element=element) from None
        self._springs.append(PointSpring(name, body_a, vector3(point_a, "point_a", element), body_b,
                                         vector3(point_b, "point_b", element), *values))
        return name

    def add_constraint(self, constraint):
        """Add a constraint that is not a tree joint (``multibody.model.constraints``: ``PointOnPlane``,
        ``PointOnProfile``, ``RollingDisc``, ``RollingOnProfile``, ``UserConstraint``, ``VelocityConstraint``);
        returns its name."""
        if not isinstance(constraint, Constraint) or isinstance(constraint, LoopJoint):
            raise ModelError(f"add_constraint expects a constraint of multibody.model.constraints (PointOnPlane, "
                             f"RollingDisc, UserConstraint, ...), got {constraint!r}", element=repr(constraint))
        name = constraint.name
        if any(c.name == name for c in self._constraints) or name in self._names["joint"]:
            raise ModelError(f"{constraint.element}: the name is already used by a joint or constraint",
                             element=constraint.element)
        for body in constraint.bodies:
            if body != GROUND and body not in self._bodies:
                role = next((k for k in ("body", "plane_body") if getattr(constraint, k, None) == body), "body")
                raise ModelError(f"{constraint.element}: {role} '{body}' is not defined (add it with add_body first)",
                                 element=constraint.element)
        self._constraints.append(constraint)
        return name

    # ---- frames and geometry (``multibody.model.geometry``; not part of the dynamics arrays) -----------------
    def _attached(self, kind, name, body, placement):
        element = f"{kind} '{name}'"
        if not isinstance(name, str) or not name:
            raise ModelError(f"{kind} name must be a non-empty string, got {name!r}", element=repr(name))
        if body != GROUND and body not in self._bodies:
            raise ModelError(f"{element}: body '{body}' is not defined (add it with add_body first)", element=element)
        return element, _as_placement(placement, element)

    def add_frame(self, name, body, placement=None):
        """A named frame fixed on ``body`` at ``placement`` (in the body's frame): an operational point for
        ``mb.frame_placement``, ``mb.frame_jacobian`` and the other frame algorithms. Every body is a frame of
        its own name already. Returns the frame's name."""
        element, place = self._attached("frame", name, body, placement)
        if name in self._frames or name in self._bodies or name == GROUND:
            raise ModelError(f"{element}: the name is already a frame or a body", element=element)
        self._frames[name] = (body, place)
        return name

    def add_visual(self, name, body, shape, placement=None, color=None):
        """A shape drawn on ``body`` at ``placement`` (body frame) by the animations; ``color`` RGB(A) in
        [0, 1]. Returns the name."""
        element, place = self._attached("visual", name, body, placement)
        if name in self._names["visual"]:
            raise ModelError(f"{element} is defined twice", element=element)
        self._visuals.append((name, body, check_shape(shape, element), place, check_color(color, element)))
        self._names["visual"].add(name)
        return name

    def add_collision(self, name, body, shape, placement=None, friction=1.0, restitution=0.0, contype=1,
                      conaffinity=1):
        """A collision shape on ``body`` at ``placement`` (body frame) with Coulomb friction coefficient
        ``friction`` (>= 0) and Newton's coefficient of restitution ``restitution`` (in [0, 1]; a pair's
        coefficients are the larger of its two elements' each, ``model.geometry.Collision``): what contact
        detection reads. ``contype``, ``conaffinity``: MuJoCo's collision bits (non-negative integers). Returns the
        name."""
        element, place = self._attached("collision", name, body, placement)
        if name in self._names["collision"]:
            raise ModelError(f"{element} is defined twice", element=element)
        mu = collision_coefficient(friction, "friction", element)
        e = collision_coefficient(restitution, "restitution", element, at_most=1.0)
        bits = []
        for what, value in (("contype", contype), ("conaffinity", conaffinity)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ModelError(f"{element}: {what} must be a non-negative integer (collision bits), got {value!r}",
                                 element=element)
            bits.append(int(value))
        self._collisions.append((name, body, check_shape(shape, element), place, mu, e, *bits))
        self._names["collision"].add(name)
        return name

    def exclude_contact(self, a, b):
        """Never try contact between ``a`` and ``b`` (collision elements or bodies: all their elements); checked
        when the model is built. MuJoCo's ``<contact><exclude>``."""
        self._contact_filters.append(("exclude", a, b))

    def include_contact(self, a, b):
        """Always try contact between the collision elements ``a`` and ``b``, whatever the default rule and their
        collision bits say (``multibody.contact.collision_sets``); MuJoCo's ``<contact><pair>``."""
        self._contact_filters.append(("include", a, b))

    def add_contact_sphere(self, frame, radius, friction=1.0, name=None):
        """A collision sphere of ``radius`` centred on ``frame`` (a frame added with ``add_frame``, or a body): the
        usual contact of a robot's foot. Named ``name`` (default: the frame's name). Returns the name."""
        element = f"contact sphere at '{frame}'"
        if frame in self._frames:
            body, place = self._frames[frame]
        elif frame in self._bodies or frame == GROUND:
            body, place = frame, None
        else:
            raise ModelError(f"{element}: '{frame}' is neither a frame nor a body (add it with add_frame or "
                             "add_body first)", element=element)
        try:
            shape = Sphere(radius)
        except ModelError as exc:
            raise ModelError(f"{element}: {str(exc).split(': ', 1)[-1]}", element=element) from None
        return self.add_collision(frame if name is None else name, body, shape, place, friction)

    # ---- elastic bodies and loads (``multibody.model.beams``, ``multibody.model.loads``) ---------------------------
    def add_beam(self, name, parent, length, segments, EI, GJ, mass_per_length, EA=None, inertia_per_length=None,
                 placement=None, damping=None, *, root=None, tip=None, tip_placement=None, tip_joint=None):
        """A straight elastic beam along the x axis of ``placement`` (in ``parent``'s frame), clamped to ``parent``,
        as ``segments`` + 1 rigid finite elements joined by elastic joints (``multibody.model.beams``, seed 001,
        introduction): bending stiffness ``EI`` (a number, or ``(EIy, EIz)`` about the section's y and z axes),
        torsional ``GJ``, axial ``EA`` — None makes that deformation rigid (``EA=None``: inextensible);
        ``mass_per_length`` μ; ``inertia_per_length`` the section's mass moments per length (ρJ, ρIy, ρIz) —
        the rotary inertia of torsion and bending — or ρJ alone for ρIy = ρIz = ρJ/2 (a round section); ``damping`` β: stiffness-proportional damping c = β k. ``root``: the joint at the root (None:
        clamped); ``tip``: a body (or ``"ground"``) the tip is clamped to by a loop-closing ``tip_joint`` (default
        ``Fixed``) at ``tip_placement`` on it (default: where the tip is in the configuration q = 0). Bodies
        ``"{name}.0"`` … ``"{name}.{segments}"`` (frames at the nodes x = k L/segments), frame ``"{name}.tip"``.
        Returns the name."""
        beam = Beam.checked(name, parent, length, segments, EI, GJ, mass_per_length, EA, inertia_per_length,
                            _as_placement(placement, f"beam '{name}'"), damping, root, tip,
                            None if tip_placement is None else _as_placement(tip_placement, f"beam '{name}'"),
                            tip_joint)
        return self._add_elastic(beam)

    def add_cable(self, name, parent, length, segments, mass_per_length, EA=None, EI=None, *, planar=False,
                  placement=None, damping=None, root=None, tip=None, tip_placement=None, tip_joint=None):
        """A cable of ``segments`` equal links pinned at their ends (``multibody.model.beams.Cable``): no bending
        stiffness unless ``EI`` is given, inextensible unless ``EA`` is given; ``planar=True`` keeps it in the x–z
        plane of ``placement``. ``tip``, ``tip_placement``, ``tip_joint``: as for :meth:`add_beam` (a cable hung
        between two points: ``tip="ground"``, ``tip_joint=mb.Revolute(axis=(0, 1, 0))``, or ``Spherical()``).
        Bodies ``"{name}.0"`` … ``"{name}.{segments - 1}"``, frame ``"{name}.tip"``. Returns the name."""
        cable = Cable.checked(name, parent, length, segments, mass_per_length, EA, EI, planar,
                              _as_placement(placement, f"cable '{name}'"), damping, root, tip,
                              None if tip_placement is None else _as_placement(tip_placement, f"cable '{name}'"),
                              tip_joint)
        return self._add_elastic(cable)

    def add_plate(self, name, *args, **kwargs):
        """Plates are not built (``docs/elastic.md``): a grid of rigid elements joined along all four edges needs
        loops at every element or six-component elastic elements between free bodies (Pogorelov's rigid-elastic
        plate elements), which this version does not have. A ``ModelError`` says so; a plate strip in cylindrical
        bending is a beam (``add_beam`` with EI = D · width)."""
        raise ModelError(f"plate '{name}': plates of rigid finite elements are not built in this version (their "
                         "elements need six-component elastic elements between free bodies); a strip in cylindrical "
                         "bending is add_beam with EI = D * width", element=f"plate '{name}'")

    def _add_elastic(self, beam):
        element = beam.element
        for role, body in (("parent", beam.parent), ("tip", beam.tip)):
            if body is not None and body != GROUND and body not in self._bodies:
                raise ModelError(f"{element}: {role} body '{body}' is not defined (add it with add_body first)",
                                 element=element)
        parts = beam_parts(beam)
        taken = [p.name for p in parts if p.name in self._bodies or p.name in self._frames]
        taken += [p.joint_name for p in parts if p.joint_name in self._names["joint"]]
        if taken:
            raise ModelError(f"{element}: the name '{taken[0]}' of one of its elements is already used",
                             element=element)
        self._generated |= {p.name for p in parts} | {p.joint_name for p in parts if p.joint_name}
        for p in parts:
            if p.kind == "frame":
                self.add_frame(p.name, p.parent, p.placement)
                continue
            if p.kind == "body":
                self.add_body(p.name, p.mass, p.com, p.inertia)
            child = p.name if p.kind == "body" else beam.element_bodies[-1]
            self.add_joint(p.joint_name, p.joint, p.parent, child, p.placement, p.child_placement,
                           stiffness=p.stiffness, damping=p.damping, cut=p.kind == "cut")
            if p.kind == "cut" and p.placement is None:   # where the tip is at q = 0: known when the model is built
                self._joints[-1]["tip_of"] = beam
        self._elastic.append(beam)
        return beam.name

    def _place_tips(self):
        """The placement on its body of each beam tip clamped where it is at q = 0 (``add_beam(tip=...)`` without
        ``tip_placement``), from the joints of the finished description."""
        for spec in self._joints:
            beam = spec.get("tip_of")
            if beam is not None:
                spec["placement"] = (self._neutral(beam.tip).inverse() * self._neutral(beam.parent) * beam.placement
                                     * Placement(translation=(beam.length, 0.0, 0.0)))

    def _neutral(self, body):
        """The placement of ``body``'s frame in the ground's at q = 0 (through the first joint into each body)."""
        place = Placement()
        seen = set()
        while body != GROUND and body not in seen:
            seen.add(body)
            spec = next((j for j in self._joints if j["child"] == body and not j["cut"]), None)
            if spec is None:
                break
            child = spec["child_placement"]
            place = spec["placement"] * (child.inverse() if child is not None else Placement()) * place
            body = spec["parent"]
        return place

    def add_load(self, name, frame, force=None, torque=None, reference="world", curve=None):
        """An external load at ``frame`` (a frame or a body): force F = s(t) ``force`` at its origin and torque
        T = s(t) ``torque``, in ground axes (``reference="world"``, a dead load) or the frame's axes (``"local"``, a
        follower load), with the load curve s(t) ``curve`` (None: 1; a number; a ``mb.LoadCurve``;
        ``multibody.model.loads``). Returns the name."""
        load = checked_load(name, frame, force, torque, reference, curve)
        if name in self._loads:
            raise ModelError(f"{load.element} is defined twice", element=load.element)
        self._loads[name] = load
        return name

    def add_controller(self, name, controller):
        """A controller element (``mb.JointPD``, ``mb.ComputedTorque``; ``multibody.model.controllers``) whose torques
        the simulations add inside their compiled loops. Its joints and target are checked when the model is built.
        Returns its name."""
        element = f"controller {name!r}"
        if not isinstance(name, str) or not name:
            raise ModelError(f"controller name must be a non-empty string, got {name!r}", element=repr(name))
        if name in self._controllers:
            raise ModelError(f"{element} is defined twice", element=element)
        if not isinstance(controller, Controller):
            raise ModelError(f"{element}: expected mb.JointPD or mb.ComputedTorque, got {controller!r}",
                             element=element)
        self._controllers[name] = controller
        return name

    def set_torque(self, callback):
        """Generalized forces ``tau(t, q, v) -> array (nv,)`` added to the other applied forces."""
        if callback is not None and not callable(callback):
            raise ModelError("torque callback must be callable tau(t, q, v)", element="torque callback")
        self._torque = callback

    def set_base_motion(self, motion):
        """Let the ground (body 0) move in a prescribed way (seed 001 §3.1–3.2, body 0 with prescribed
        motion): a ``BaseMotion`` (e.g. ``BaseMotion.harmonic(axis, amplitude, omega)``,
        ``BaseMotion.rotation(axis, rate)``), a callable ``state(t) -> (p0, R0, ṗ0, ω0, p̈0, ω̇0)``, or None
        (a fixed ground). The joints on the ground move with it; gravity and every result stay in inertial
        coordinates (``multibody.model.base_motion``)."""
        self._base = as_base_motion(motion)

    # ---- build ------------------------------------------------------------------------------------------
    def _spanning_tree(self):
        """Choose the tree joint of each body (see module docstring); return (tree, cut) joint lists."""
        reached = {GROUND}
        tree_of = {}
        changed = True
        while changed:
            changed = False
            for k, j in enumerate(self._joints):
                if j["cut"] or j["child"] in reached or j["parent"] not in reached:
                    continue
                tree_of[j["child"]] = k
                reached.add(j["child"])
                changed = True
        for name in self._bodies:
            if name not in reached:
                incoming = [j["name"] for j in self._joints if j["child"] == name]
                why = ("it is the child of no joint" if not incoming else
                       f"no chain of joints directed parent -> child leads to it from the ground (joints into it: "
                       f"{', '.join(incoming)})")
                raise ModelError(f"body '{name}' has no path to the ground: {why}", element=f"body '{name}'")
        tree = set(tree_of.values())
        cut = [k for k in range(len(self._joints)) if k not in tree]
        return tree_of, sorted(cut, key=lambda k: self._joints[k]["name"] in self._generated)

    def _regular_order(self, tree_of):
        """Bodies in a regular numbering (parents first), keeping insertion order where possible — the bodies of
        beams after the others, so that the numbering does not depend on when a beam was added (a model file lists
        them apart)."""
        names = sorted(self._bodies, key=lambda n: n in self._generated)
        order_key = {n: i for i, n in enumerate(names)}
        children = {GROUND: []}
        for n in names:
            children.setdefault(n, [])
        for n in names:
            children[self._joints[tree_of[n]]["parent"]].append(n)
        heap = [(order_key[c], c) for c in children[GROUND]]
        heapq.heapify(heap)
        order = []
        while heap:
            _, n = heapq.heappop(heap)
            order.append(n)
            for c in children[n]:
                heapq.heappush(heap, (order_key[c], c))
        return order

    def build(self, warn=True):
        """Validate the description and return the immutable ``Model``. A model with bodies whose inertias were
        kept or repaired under the ``inertia`` policy ``"warn"`` or ``"repair"`` gives one ``InertiaWarning``
        listing them (``warn=False``: none; the notes stay on ``model.bodies[k].inertia_note``)."""
        if not self._bodies and not (self._frames or self._visuals or self._collisions):
            raise ModelError(f"model '{self.name}' has no bodies (nor frames or shapes on the ground: a scene "
                             "without moving bodies)", element=self.name)
        self._place_tips()
        tree_of, cut = self._spanning_tree()
        order = self._regular_order(tree_of)
        index = {GROUND: 0}
        index.update({n: i + 1 for i, n in enumerate(order)})
        n = len(order)
        # sympy expressions among the parameters make a symbolic model (object arrays, see Model.symbolic)
        symbolic = (self.gravity.dtype == object or any(b.symbolic for b in self._bodies.values())
                    or any(self._joints[k]["placement"].symbolic for k in tree_of.values()))
        real = object if symbolic else float

        parent = np.full(n + 1, -1, dtype=np.int64)
        jtype = np.zeros(n + 1, dtype=np.int64)
        idx_q = np.zeros(n + 1, dtype=np.int64)
        nq_j = np.zeros(n + 1, dtype=np.int64)
        idx_v = np.zeros(n + 1, dtype=np.int64)
        nv_j = np.zeros(n + 1, dtype=np.int64)
        jaxis = np.zeros((n + 1, 2, 3))
        jplace_R = np.zeros((n + 1, 3, 3), dtype=real)
        jplace_R[0] = np.eye(3, dtype=int)
        jplace_p = np.zeros((n + 1, 3), dtype=real)
        mass = np.zeros(n + 1, dtype=real)
        com = np.zeros((n + 1, 3), dtype=real)
        inertia_com = np.zeros((n + 1, 3, 3), dtype=real)
        joints = [None]
        stiff, damp, rest, effort, rotors = [], [], [], [], []
        iq = iv = 0
        for k in cut:
            spec = self._joints[k]
            if spec["joint"].code == GENERAL:
                raise ModelError(f"joint '{spec['name']}' is a GeneralJoint that closes a loop: general joints are "
                                 "tree joints only (seed 001 §3.4.2); choose another joint as the cut joint (cut=True)",
                                 element=f"joint '{spec['name']}'")
            if spec["child_placement"] is None:
                raise ModelError(
                    f"joint '{spec['name']}' closes a loop (the bodies '{spec['parent']}' and '{spec['child']}' are "
                    "already connected through other joints), so it is a cut joint located on both bodies: give its "
                    "child_placement, the joint frame in the frame of body "
                    f"'{spec['child']}' (child_placement=mb.Placement() if it is the body's own frame)",
                    element=f"joint '{spec['name']}'")
        # frame of each body used internally: its tree joint's frame moved by the joint coordinates; the user's
        # body frame sits at body_frames[i] in it (the inverse of the joint's child_placement)
        body_frames = [Placement()]
        for bname in order:
            cp = self._joints[tree_of[bname]]["child_placement"]
            body_frames.append(Placement() if cp is None or cp.is_identity() else cp.inverse())
        frame_of = dict(zip([GROUND] + order, body_frames))
        for i, bname in enumerate(order, start=1):
            spec = self._joints[tree_of[bname]]
            jt = spec["joint"]
            parent[i] = index[spec["parent"]]
            jtype[i] = jt.code
            idx_q[i], nq_j[i], idx_v[i], nv_j[i] = iq, jt.nq, iv, jt.nv
            jaxis[i] = jt.axes()
            place = frame_of[spec["parent"]] * spec["placement"]   # joint frame in the parent's internal frame
            jplace_R[i] = place.rotation
            jplace_p[i] = place.translation
            body = self._bodies[bname]
            F = frame_of[bname]
            if F.is_identity():
                mass[i], com[i], inertia_com[i] = body.mass, body.com, body.inertia
            else:
                mass[i], com[i], inertia_com[i] = body.mass, F.act(body.com), F.rotation @ body.inertia @ F.rotation.T
            f = spec["force"]
            stiff.append(f.stiffness)
            damp.append(f.damping)
            rest.append(f.rest)
            effort.append(f.effort)
            rotors.append(spec["armature"])
            joints.append(JointInfo(spec["name"], jt, int(parent[i]), i, spec["placement"],
                                    spec["child_placement"] or Placement(), slice(iq, iq + jt.nq),
                                    slice(iv, iv + jt.nv)))
            iq += jt.nq
            iv += jt.nv
        for k in cut:
            spec = self._joints[k]
            joints.append(JointInfo(spec["name"], spec["joint"], index[spec["parent"]], index[spec["child"]],
                                    spec["placement"], spec["child_placement"]))
        cut_joints = joints[n + 1:]
        joints = joints[: n + 1]
        with np.errstate(over="ignore", invalid="ignore"):   # checked below, body by body
            h = mass[:, None] * com
        inertia_o = inertia_com.copy()
        for i in range(1, n + 1):
            c = com[i]
            with np.errstate(over="ignore", invalid="ignore"):
                inertia_o[i] += mass[i] * (np.dot(c, c) * np.eye(3, dtype=int) - np.outer(c, c))
            if not symbolic and not (np.all(np.isfinite(inertia_o[i])) and np.all(np.isfinite(h[i]))):
                raise ModelError(f"body '{order[i - 1]}': mass {mass[i]:g} and com {com[i].tolist()} give an inertia "
                                 "about the body origin beyond the floating-point range", element=f"body '{order[i - 1]}'")
        if not symbolic:
            singular = singular_joint(dict(parent=parent, jtype=jtype, jaxis=jaxis, jplace_R=jplace_R, jplace_p=jplace_p,
                                           mass=mass, com=com, inertia_com=inertia_com, idx_v=idx_v,
                                           dof_armature=np.concatenate(rotors) if rotors else np.zeros(0)),
                                      [GROUND] + order, [None] + [j.name for j in joints[1:]])
            if singular is not None and not self.kinematics_only:
                raise ModelError(singular[1], element=f"body '{singular[0]}'")
            if singular is not None and not self.metadata.get(KINEMATICS_ONLY):
                self.metadata[KINEMATICS_ONLY] = singular[1]
        notes = [f"body '{b.name}': {b.inertia_note}" for b in self._bodies.values() if b.inertia_note]
        if notes and warn:
            what = "kept as written" if self.inertia == "warn" else "repaired"
            warnings.warn(InertiaWarning(f"model '{self.name}': {len(notes)} inertia{'s' * (len(notes) > 1)} that "
                                         f"no body has, {what}: " + "; ".join(notes)), stacklevel=2)

        ns = len(self._springs)
        spring_body = np.zeros((ns, 2), dtype=np.int64)
        spring_point = np.zeros((ns, 2, 3))
        for s, sp in enumerate(self._springs):
            spring_body[s] = index[sp.body_a], index[sp.body_b]
            spring_point[s] = [p if frame_of[b].is_identity() else frame_of[b].act(p)
                               for b, p in ((sp.body_a, sp.point_a), (sp.body_b, sp.point_b))]
        cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0))
        arrays = dict(
            parent=parent, jtype=jtype, idx_q=idx_q, nq_j=nq_j, idx_v=idx_v, nv_j=nv_j, jaxis=jaxis,
            jplace_R=jplace_R, jplace_p=jplace_p, mass=mass, com=com, inertia_com=inertia_com, h=h,
            inertia_o=inertia_o, gravity=self.gravity.copy(),
            dof_stiffness=cat(stiff), dof_damping=cat(damp), dof_rest=cat(rest), dof_effort=cat(effort),
            spring_body=spring_body, spring_point=spring_point,
            spring_k=np.array([s.stiffness for s in self._springs], dtype=float),
            spring_c=np.array([s.damping for s in self._springs], dtype=float),
            spring_l0=np.array([s.rest_length for s in self._springs], dtype=float),
            dof_armature=cat(rotors),
        )
        graph = _make_graph(n, [(j.parent, j.child) for j in joints[1:]] +
                            [(j.parent, j.child) for j in cut_joints])
        constraints = [LoopJoint(j) for j in cut_joints] + list(self._constraints)
        nq = int(nq_j.sum())
        q_neutral = np.zeros(nq)
        for j in joints[1:]:
            q_neutral[j.q_slice] = j.joint.neutral()
        for c in constraints:
            if c.python and c._nrows is None:   # size the Python constraints by one evaluation
                c._bind(nq if hasattr(c, "f") else int(nv_j.sum()), q_neutral)
        table = ConstraintTable.build(constraints, lambda name, c: index[name] if isinstance(name, str) else name,
                                      lambda i: body_frames[i])
        frames = tuple(Frame(name, index[b], b, place) for name, (b, place) in
                       sorted(self._frames.items(), key=lambda item: item[0] in self._generated))
        unilateral = self._unilateral(joints, cut_joints)
        visuals = tuple(Visual(name, index[b], b, shape, place, color)
                        for name, b, shape, place, color in self._visuals)
        collisions = tuple(Collision(name, index[b], b, shape, place, mu, e, ct, ca)
                           for name, b, shape, place, mu, e, ct, ca in self._collisions)
        loads = tuple(self._resolved_load(load, frames, index, body_frames) for load in self._loads.values())
        filters = self._checked_filters(collisions)
        controllers = tuple(resolve_controller(name, c, joints) for name, c in self._controllers.items())
        check_overlap(controllers)
        return Model(name=self.name, arrays=arrays, body_names=[GROUND] + order, joints=joints,
                     cut_joints=cut_joints, springs=tuple(self._springs), constraints=tuple(constraints),
                     constraint_table=table, body_frames=tuple(body_frames),
                     bodies=tuple(self._bodies[b] for b in order), torque_callback=self._torque, graph=graph,
                     metadata=self.metadata, base_motion=self._base, frames=frames, visuals=visuals,
                     collisions=collisions, unilateral=unilateral, controllers=controllers, loads=loads,
                     elastic=tuple(self._elastic), contact_exclude=filters["exclude"],
                     contact_include=filters["include"])

    def _resolved_load(self, load, frames, index, body_frames):
        """``load`` with its body, point and axes in the body's kernel frame (``ModelError`` for a missing
        frame)."""
        frame = next((f for f in frames if f.name == load.frame), None)
        if frame is None:
            if load.frame not in index or load.frame == GROUND:
                raise ModelError(f"{load.element}: frame '{load.frame}' is neither a frame nor a body of the model "
                                 "(add it with add_frame or add_body)", element=load.element)
            body, place = index[load.frame], Placement()
        else:
            body, place = frame.body, frame.placement
        if body == 0:
            raise ModelError(f"{load.element}: frame '{load.frame}' is on the ground, which does not move: a load there "
                             "does nothing", element=load.element)
        kernel = body_frames[body] * place
        return replace(load, body=body, point=kernel.translation.astype(float), axes=kernel.rotation.astype(float))

    def _checked_filters(self, collisions):
        """The contact exclusions and inclusions by kind, each name checked (a collision element, or for an
        exclusion a body)."""
        names = {c.name for c in collisions}
        bodies = {c.body_name for c in collisions} | set(self._bodies) | {GROUND}
        out = {"exclude": [], "include": []}
        for kind, a, b in self._contact_filters:
            for x in (a, b):
                if x not in names and (kind == "include" or x not in bodies):
                    what = "a collision element" if kind == "include" else "a collision element or a body"
                    raise ModelError(f"contact {kind} ('{a}', '{b}'): '{x}' is not {what}", element=f"contact {kind}")
            out[kind].append((a, b))
        return {k: tuple(v) for k, v in out.items()}

    def _unilateral(self, joints, cut_joints):
        """The model's ``Unilateral`` elements (limits, latches, releases of the joints and of ``add_release``),
        bound to the coordinates of the tree joints; a ``ModelError`` names a cut joint that carries one, or a
        released joint that does not exist."""
        limits, latches, releases = [], [], []
        cut = {j.name for j in cut_joints}
        for spec in self._joints:
            lims, lats, rel = spec["unilateral"]
            if spec["name"] in cut and (lims or lats or rel):
                raise ModelError(f"joint '{spec['name']}' closes a loop (a cut joint): limits, latches and releases "
                                 "are for tree joints", element=f"joint '{spec['name']}'")
            limits += lims
            latches += lats
            releases += [rel] if rel is not None else []
        return Unilateral.bound(limits, latches, releases + self._releases, joints)


def _make_graph(n, edges):
    """The topology graph of all joints (tree joints first), when the graph module is available."""
    try:
        from multibody.model.graph import Graph
    except ImportError:
        return None
    return Graph(n, edges)
