"""The immutable Model: flat arrays (structure of arrays) that the kernels read.

The layout is documented in ``docs/model-arrays.md``. Bodies are numbered regularly (seed 001 §1.1.2):
body 0 is the ground and every body's parent has a smaller number, so kernels sweep
``for i in range(1, N + 1)`` from the root to the leaves and back. A Model is never changed by an
algorithm; make a new one with the builder instead.

A *symbolic* Model (``model.symbolic``) has sympy expressions among its masses, centres of mass, inertias,
joint placements or gravity (given to the builder): those arrays are numpy arrays of sympy expressions
(dtype object). ``multibody.symbolic`` derives its equations; the numeric algorithms refuse it with a
``ModelError`` naming the first symbolic element (:meth:`Model.symbolic_element`).
"""
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError
from multibody.kernels import configuration
from multibody.model.data import CACHED_ATTRS, ENTRY_ALGORITHMS, ENTRY_ATTRS, EntryAttribute
from multibody.model.loads import LoadTable
from multibody.model.placement import Placement
from multibody.model.unilateral import Unilateral

#: names of the arrays a Model carries (in the order kernels receive them from ``model.arrays()``)
ARRAY_NAMES = (
    "parent", "jtype", "idx_q", "nq_j", "idx_v", "nv_j", "jaxis", "jplace_R", "jplace_p",
    "mass", "com", "inertia_com", "h", "inertia_o", "gravity",
    "dof_stiffness", "dof_damping", "dof_rest", "dof_effort",
    "spring_body", "spring_point", "spring_k", "spring_c", "spring_l0", "dof_armature",
)


class ReadOnlyDict(dict):
    """A dict that refuses changes (``Model.metadata``); it pickles like a dict."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("Model.metadata is read-only; give the metadata to the ModelBuilder")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self):
        return ReadOnlyDict, (dict(self),)


def _frozen_copy(value):
    """A read-only deep copy of JSON-like data: mappings become ``ReadOnlyDict``, lists and arrays tuples."""
    if isinstance(value, Mapping):
        return ReadOnlyDict({str(k): _frozen_copy(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen_copy(v) for v in value)
    if isinstance(value, np.ndarray):
        return tuple(_frozen_copy(v) for v in value.tolist())
    return value


@dataclass(frozen=True)
class JointInfo:
    """A joint as built: tree joints carry a body (``child``); cut joints close loops.

    ``parent`` and ``child`` are body indices (0 = ground). ``placement`` locates the joint frame in the
    parent body's frame; ``child_placement`` locates it in the child body's frame (as the user gave them, in
    the user's body frames). ``q_slice``/``v_slice`` index the model's q and v (tree joints only; ``None``
    for cut joints).
    """

    name: str
    joint: object
    parent: int
    child: int
    placement: Placement
    child_placement: Placement
    q_slice: slice = None
    v_slice: slice = None

    @property
    def is_cut(self):
        return self.q_slice is None


class Model:
    """A built multibody model (see ``ModelBuilder``). Attributes: ``nq``, ``nv``, ``nbodies`` (N, without
    the ground), the arrays of ``docs/model-arrays.md``, ``body_names``, ``bodies`` (the ``Body``
    descriptions, body 1..N), ``joints`` (tree joints, ``joints[i]`` carries body i; ``joints[0]`` is None),
    ``cut_joints``, ``springs``, ``base_motion`` (None, or the prescribed motion of body 0: ``BaseMotion``,
    seed 001 §3.1–3.2), ``constraints`` (every constraint: a ``LoopJoint`` per cut joint, then the
    constraints added with ``add_constraint``), ``constraint_table`` (their packed form), ``torque_callback``,
    ``graph`` (``multibody.model.graph.Graph`` of all joints), ``body_frames``, ``frames``, ``visuals`` and
    ``collisions`` (named frames, drawn and colliding shapes on the bodies, ``multibody.model.geometry``; see
    :meth:`frame`), ``unilateral`` (joint limits, latches and releases, ``multibody.model.unilateral``; with
    ``lower_limits``, ``upper_limits``), ``controllers`` (joint controllers,
    ``multibody.model.controllers``), ``loads`` (external loads, ``multibody.model.loads``), ``elastic`` (the
    beams and cables, ``multibody.model.beams``), ``metadata`` (a read-only
    mapping of descriptive data the dynamics do not use: joint limits, visuals, the source file).

    Body frames. The kernels use, for body i, the frame of its tree joint moved by the joint coordinates.
    When the joint was given a ``child_placement``, the user's body frame differs from it:
    ``body_frames[i]`` is the ``Placement`` of the user's frame in the kernel frame, and the arrays (com,
    inertia, placements of the joints on the body, spring points, constraint data) are expressed in the
    kernel frame. ``forward_kinematics`` and the point functions of ``multibody.algorithms.dynamics`` take and return
    the user's frames."""

    def __init__(self, *, name, arrays, body_names, joints, cut_joints=(), springs=(), constraints=(),
                 constraint_table=None, body_frames=None, bodies=(), torque_callback=None, graph=None, metadata=None,
                 base_motion=None, frames=(), visuals=(), collisions=(), unilateral=None,
                 controllers=(), loads=(), elastic=(),
                 contact_exclude=(), contact_include=()):
        for key in ARRAY_NAMES:
            if key not in arrays:
                raise ModelError(f"model '{name}': array '{key}' is missing", element=name)
        self.name = name
        for key, arr in arrays.items():
            arr = np.ascontiguousarray(arr)
            arr.flags.writeable = False
            object.__setattr__(self, key, arr)
        self.body_names = tuple(body_names)
        self.joints = tuple(joints)
        self.joint_names = tuple("" if j is None else j.name for j in self.joints)
        self.cut_joints = tuple(cut_joints)
        self.springs = tuple(springs)
        self.constraints = tuple(constraints)
        if constraint_table is None:
            from multibody.model.constraint_table import ConstraintTable, identity_frames
            constraint_table = ConstraintTable.build(self.constraints, lambda name, c: self.body_index(name),
                                                     identity_frames)
        self.constraint_table = constraint_table
        self.bodies = tuple(bodies)
        self.body_frames = tuple(body_frames) if body_frames is not None else (Placement(),) * len(self.body_names)
        self.torque_callback = torque_callback
        #: the prescribed motion of body 0 (``multibody.model.base_motion.BaseMotion``), None for a fixed ground
        self.base_motion = base_motion
        self.graph = graph
        self.metadata = _frozen_copy(metadata or {})
        #: named frames on bodies, visual and collision shapes (``multibody.model.geometry``)
        self.frames = tuple(frames)
        self.visuals = tuple(visuals)
        self.collisions = tuple(collisions)
        #: pairs of collision elements or bodies that never touch, and pairs of elements always tried
        #: (``ModelBuilder.exclude_contact``, ``include_contact``; ``multibody.contact.collision_sets``)
        self.contact_exclude = tuple(contact_exclude)
        self.contact_include = tuple(contact_include)
        #: joint limits, latches and releases (``multibody.model.unilateral``; empty: none)
        self.unilateral = Unilateral() if unilateral is None else unilateral
        #: controller elements (``multibody.model.controllers.ControllerInfo``), evaluated in the simulations
        self.controllers = tuple(controllers)
        #: external loads (``multibody.model.loads.Load``) and their packed table (``LoadTable.arrays``)
        self.loads = tuple(loads)
        self.load_arrays = LoadTable.arrays(self.loads)
        #: the beams and cables the model was built with (``multibody.model.beams``): descriptions for files and
        #: drawings; their bodies, joints and springs are in the arrays like any others
        self.elastic = tuple(elastic)
        self.nbodies = len(self.body_names) - 1
        self.nq = int(self.nq_j.sum())
        self.nv = int(self.nv_j.sum())
        self._arrays = tuple(getattr(self, k) for k in ARRAY_NAMES)
        self.symbolic = self.symbolic_element() is not None
        self._frozen = True

    def __getstate__(self):
        """The model's attributes for pickling, without the compiled general-joint code cached on it (a module and
        the Data that holds its function, ``multibody.kernels.general_joint``) and without the C-level entries of its
        algorithms (``model.data.bind_entry``): they are made again on first use."""
        state = dict(self.__dict__)
        for attr in ENTRY_ATTRS:
            state.pop(attr, None)
        if state.pop("_multibody_general_joints", None) is not None:
            for attr in CACHED_ATTRS:
                state.pop(attr, None)
        return state

    def __setattr__(self, key, value):
        if getattr(self, "_frozen", False):
            raise AttributeError(f"Model is immutable (tried to set '{key}'); build a new one with ModelBuilder")
        object.__setattr__(self, key, value)

    @property
    def kinematics_only(self):
        """None, or why the model was read for its kinematics only (a mass matrix that is singular, or inertias no
        body has: ``load_urdf(..., kinematics_only=True)``); the dynamics refuse such a model with this reason, its
        frames, Jacobians, inverse kinematics and collision queries are as for any model."""
        return self.metadata.get("kinematics_only")

    @property
    def lower_limits(self):
        """nq floats: the lower limit of every entry of q (``-inf`` where none; ``multibody.model.unilateral``)."""
        return self.unilateral.bounds(self.nq)[0]

    @property
    def upper_limits(self):
        """nq floats: the upper limit of every entry of q (``+inf`` where none)."""
        return self.unilateral.bounds(self.nq)[1]

    def arrays(self):
        """The tuple of flat arrays in ``ARRAY_NAMES`` order (what njit kernels take)."""
        return self._arrays

    def symbolic_element(self):
        """``(element, what, value)`` of the first parameter that is a sympy expression with symbols (e.g.
        ``("body 'link1'", "mass", m1)``), or None for a numeric model."""
        from multibody.model.placement import has_symbols

        for what in ("mass", "com", "inertia_com"):
            values = getattr(self, what)
            for i in range(1, self.nbodies + 1) if values.dtype == object else ():
                if has_symbols(values[i]):
                    return f"body '{self.body_names[i]}'", what, values[i]
        for j in self.joints[1:] + self.cut_joints:
            for what in ("placement", "child_placement"):
                place = getattr(j, what)
                if place.symbolic:
                    return f"joint '{j.name}'", what, place
        if has_symbols(self.gravity):
            return "gravity", "gravity", self.gravity
        return None

    # ---- names -> indices -------------------------------------------------------------------------------
    def body_index(self, name):
        try:
            return self.body_names.index(name)
        except ValueError:
            raise ModelError(f"model '{self.name}' has no body '{name}' (bodies: {', '.join(self.body_names)})",
                             element=f"body '{name}'") from None

    def frame(self, name):
        """The ``Frame`` named ``name``: a frame added with ``add_frame`` (or read from a URDF), or a body (its own
        frame, identity placement). ``ModelError`` listing the names otherwise."""
        from multibody.model.geometry import Frame

        for f in self.frames:
            if f.name == name:
                return f
        if name in self.body_names:
            i = self.body_names.index(name)
            return Frame(name, i, name, Placement())
        names = [f.name for f in self.frames] + list(self.body_names)
        shown = ", ".join(names[:40]) + (", ..." if len(names) > 40 else "")
        raise ModelError(f"model '{self.name}' has no frame '{name}' (frames and bodies: {shown})",
                         element=f"frame '{name}'")

    def all_frames(self):
        """Every frame of the model in the order of their handles (:meth:`frame_id`): the frames of ``frames``, then
        each body's own frame (identity placement, under the body's name) that no frame of ``frames`` is named
        after. Made once and kept on the model."""
        try:
            return self.__dict__["_all_frames"]
        except KeyError:
            from multibody.model.geometry import Frame

            names = {f.name for f in self.frames}
            out = tuple(self.frames) + tuple(Frame(b, i, b, Placement()) for i, b in enumerate(self.body_names)
                                             if b not in names)
            self.__dict__["_all_frames"] = out
            self.__dict__["_frame_ids"] = {f.name: k for k, f in reversed(tuple(enumerate(out)))}
            return out

    @property
    def frame_names(self):
        """The names of the frames (:meth:`all_frames`), in the order of their handles."""
        return tuple(f.name for f in self.all_frames())

    @property
    def frame_ids(self):
        """``{name: handle}`` of every frame (:meth:`frame_id`); a dict kept on the model: do not change it."""
        self.all_frames()
        return self.__dict__["_frame_ids"]

    def frame_id(self, name):
        """The handle of the frame ``name`` (an int: its position in :meth:`all_frames`), which the frame algorithms
        take instead of the name to skip the look-up in a control loop (Pinocchio's ``getFrameId``); ``ModelError``
        listing the names for an unknown frame."""
        try:
            return self.frame_ids[name]
        except (KeyError, TypeError):
            if not isinstance(name, str):
                raise ModelError(f"a frame is named by a string, got {name!r}", element="frame") from None
            self.frame(name)        # the ModelError naming the frames
            raise

    def with_collisions(self, elements=(), spheres=None, friction=1.0, keep=True):
        """A copy of this model with more collision elements: ``elements`` tuples ``(name, body or frame, shape[,
        placement[, friction]])``, ``spheres`` ``{frame: radius}`` (a sphere centred on each frame, e.g. the feet of
        a legged robot); ``keep=False`` drops the model's own (``multibody.model.collisions.with_collisions``)."""
        from multibody.model.collisions import with_collisions

        return with_collisions(self, elements, spheres, friction, keep)

    def reduced(self, locked, reference=None):
        """A new Model with the tree joints of ``locked`` fixed at their values (``{joint: value}``, or a list of
        joint names locked at their values in ``reference``, default the neutral configuration): bodies, frames,
        visual and collision elements kept (Pinocchio's ``buildReducedModel``; ``multibody.model.reduction``)."""
        from multibody.model.reduction import reduced

        return reduced(self, locked, reference)

    def with_controllers(self, controllers):
        """A new Model, this one with the controller elements ``controllers`` (a mapping name -> ``mb.JointPD`` or
        ``mb.ComputedTorque``; ``ModelBuilder.add_controller`` for a model being built) added to its own — for a
        model read from a file: ``mb.io.load_urdf(path).with_controllers({"hold": mb.JointPD(...)})``. Every other
        element is shared with this model."""
        from multibody.model.controllers import check_overlap, resolve_controller

        if not isinstance(controllers, Mapping):
            raise ModelError(f"model '{self.name}': controllers must be a mapping name -> controller, got "
                             f"{controllers!r}", element="controllers")
        for name in controllers:
            if any(c.name == name for c in self.controllers):
                raise ModelError(f"controller '{name}' is defined twice", element=f"controller '{name}'")
        infos = self.controllers + tuple(resolve_controller(n, c, self.joints) for n, c in controllers.items())
        check_overlap(infos)
        return Model(name=self.name, arrays={k: getattr(self, k) for k in ARRAY_NAMES}, body_names=self.body_names,
                     joints=self.joints, cut_joints=self.cut_joints, springs=self.springs, constraints=self.constraints,
                     constraint_table=self.constraint_table, body_frames=self.body_frames, bodies=self.bodies,
                     torque_callback=self.torque_callback, graph=self.graph, metadata=self.metadata,
                     base_motion=self.base_motion, frames=self.frames, visuals=self.visuals,
                     collisions=self.collisions, unilateral=self.unilateral, controllers=infos, loads=self.loads,
                     elastic=self.elastic,
                     contact_exclude=self.contact_exclude, contact_include=self.contact_include)

    def constraint(self, name):
        """A constraint (``multibody.model.constraints``; a cut joint is a ``LoopJoint``) by name."""
        for c in self.constraints:
            if c.name == name:
                return c
        raise ModelError(f"model '{self.name}' has no constraint '{name}' (constraints: "
                         f"{', '.join(c.name for c in self.constraints) or 'none'})", element=f"constraint '{name}'")

    def joint_frames(self, joint):
        """The joint frame of a tree or cut joint in the kernel frames of its parent and child bodies (see the
        class docstring on body frames): two ``Placement`` objects."""
        Pa = self.body_frames[joint.parent] * joint.placement
        if not joint.is_cut:
            return Pa, Placement()
        return Pa, self.body_frames[joint.child] * joint.child_placement

    def joint(self, name):
        """The ``JointInfo`` of a tree or cut joint by name."""
        for j in self.joints[1:] + self.cut_joints:
            if j.name == name:
                return j
        names = [j.name for j in self.joints[1:] + self.cut_joints]
        raise ModelError(f"model '{self.name}' has no joint '{name}' (joints: {', '.join(names)})",
                         element=f"joint '{name}'")

    def coordinate_names(self):
        """Names of the entries of q, ``"<joint>.<coordinate>"``."""
        out = []
        for j in self.joints[1:]:
            out += [f"{j.name}.{c}" for c in j.joint.coordinate_names]
        return out

    def velocity_names(self):
        out = []
        for j in self.joints[1:]:
            names = j.joint.coordinate_names
            if not j.joint.linear_coordinates:
                names = ("wx", "wy", "wz") if j.joint.nv == 3 else ("wx", "wy", "wz", "vx", "vy", "vz")
            out += [f"{j.name}.{c}" for c in names]
        return out

    # ---- configuration space ----------------------------------------------------------------------------
    def neutral(self):
        """The neutral configuration: zeros, unit quaternions (1, 0, 0, 0)."""
        q = np.zeros(self.nq)
        for j in self.joints[1:]:
            q[j.q_slice] = j.joint.neutral()
        return q

    def check_quaternions(self, q, what="q"):
        """A ``ModelError`` naming the joint whose quaternion in ``q`` has zero (or non-finite) length, which no
        rotation has (the neutral one is (1, 0, 0, 0)); other lengths are normalized by the kernels."""
        q = np.asarray(q, dtype=float).reshape(-1)
        for j in self.joints[1:]:
            if j.joint.linear_coordinates:
                continue
            s = j.q_slice
            lo = s.start + (j.joint.nq - 4)  # Free: (x, y, z, w, qx, qy, qz); Spherical: (w, qx, qy, qz)
            quat = q[lo:lo + 4]
            norm = float(np.sqrt(np.sum(quat * quat)))
            if not (np.isfinite(norm) and norm > 1e-150):
                raise ModelError(f"joint '{j.name}': the quaternion {what}[{lo}:{lo + 4}] = {quat.tolist()} has "
                                 f"length {norm:g}; expected (w, x, y, z) of unit length (no rotation: 1, 0, 0, 0)",
                                 element=j.name)

    def integrate(self, q, v, dt=1.0):
        """q ⊕ v·dt on the configuration manifold (exponential map for quaternions)."""
        return configuration.integrate(self, q, v, dt)

    def difference(self, q0, q1):
        """The velocity v with ``integrate(q0, v, 1) = q1`` (logarithm map for quaternions)."""
        return configuration.difference(self, q0, q1)

    def normalize(self, q):
        """q with every quaternion scaled to unit length."""
        return configuration.normalize(self, q)

    def qdot(self, q, v):
        """Time derivative of q for velocity v (quaternion kinematics for quaternion joints)."""
        return configuration.qdot(self, q, v)

    def random_configuration(self, rng=None, scale=np.pi):
        """A random configuration within the joint limits (the stops, ``lower_limits``, ``upper_limits``):
        coordinates uniform in [−scale, scale] — where a coordinate has limits, in the part of that interval inside
        them (when the limits lie wholly outside it, in the stretch of length 2·scale of the limits nearest to it) —
        and random unit quaternions. A model without limits draws what it always drew from the same ``rng``."""
        rng = np.random.default_rng(rng)
        q = rng.uniform(-scale, scale, self.nq)
        lower, upper = self.lower_limits, self.upper_limits
        for k in np.flatnonzero(np.isfinite(lower) | np.isfinite(upper)):
            lo, hi = max(-scale, lower[k]), min(scale, upper[k])
            if lo > hi:    # the limits outside [−scale, scale]: their part nearest to it
                lo, hi = ((lower[k], min(upper[k], lower[k] + 2 * scale)) if lower[k] > scale else
                          (max(lower[k], upper[k] - 2 * scale), upper[k]))
            q[k] = lo + (q[k] + scale) / (2 * scale) * (hi - lo)   # the same draw, moved into [lo, hi]
            q[k] = min(max(q[k], lo), hi)
        for j in self.joints[1:]:
            if not j.joint.linear_coordinates:
                s = j.q_slice
                quat = rng.normal(size=4)
                q[s.stop - 4:s.stop] = quat / np.linalg.norm(quat)
        return q

    def __repr__(self):
        return (f"Model('{self.name}', bodies={self.nbodies}, nq={self.nq}, nv={self.nv}, "
                f"cut_joints={len(self.cut_joints)})")


for _algorithm, _attr in zip(ENTRY_ALGORITHMS, ENTRY_ATTRS):   # the C-level entries, bound on a model's first call
    setattr(Model, _attr, EntryAttribute(_algorithm))
