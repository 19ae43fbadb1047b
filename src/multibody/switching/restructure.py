"""A new structure from a built Model: the model after a joint has separated (stage separation, a fairing or a
captured body set free; seed 001, introduction: "the number of degrees of freedom and the connection topology
change during the motion").

:func:`separated_model` rebuilds the model with the builder, every element as it was, except that the released
joint is replaced by a ``Free`` joint from the ground to its child: the child's subtree goes on as a free body
(its own joints unchanged). Its coordinates are the pose of the child's own frame in the ground frame and its
velocities ``[ω; v]`` of that frame's origin in child axes (the ``Free`` convention of ``model/joints.py``); the
run maps the state across (``switching/structure.py``). The new model's coordinates of the other joints are
those of the old one, under the same names.
"""
import numpy as np

from multibody.errors import ModelError
from multibody.formulations.tree_control import is_compiled_torque
from multibody.model.builder import GROUND, ModelBuilder
from multibody.model.controllers import controller_without
from multibody.model.joints import Free
from multibody.model.loop_joints import LoopJoint

__all__ = ["separated_model", "separated_state", "separated_forces", "free_joint_names", "refuse_separation"]


def free_joint_names(joint):
    """The coordinate and velocity names the free joint of a separated ``joint`` has: (q names, v names)."""
    return ([f"{joint}.{c}" for c in Free.coordinate_names],
            [f"{joint}.{c}" for c in ("wx", "wy", "wz", "vx", "vy", "vz")])


def refuse_separation(model, joint, law=None):
    """A ``ModelError`` for what cannot go on past the separation of ``joint``: Python constraints and a torque
    callback (the model's), which read the q and v of the structure before the separation by position, and a
    torque law ``law`` (a numba function or a Python callable, or None), which does as well (the model's controllers carry
    across, by joint name)."""
    python = [c.name for c in model.constraints if c.python]
    if python:
        raise ModelError(f"model '{model.name}': joint '{joint}' cannot separate in a model with Python constraints "
                         f"({', '.join(python)}), which read the q and v of the structure before the separation",
                         element=f"joint '{joint}'")
    if model.torque_callback is not None:
        raise ModelError(f"model '{model.name}': joint '{joint}' cannot separate in a model with a torque callback, "
                         "which reads the q and v of the structure before the separation", element=f"joint '{joint}'")
    if law is not None:
        kind = "a compiled torque law" if is_compiled_torque(law) else "a torque callback"
        raise ModelError(f"model '{model.name}': joint '{joint}' cannot separate with {kind} (tau=f), which reads q "
                         "and v by position (the model's controllers carry across by joint name)", element="tau")


def separated_model(model, joint):
    """``model`` rebuilt with its tree joint ``joint`` replaced by a ``Free`` joint from the ground to the same
    child (module docstring), without the release of ``joint``; every other element — bodies, joints with their
    spring-dampers, efforts, limits, latches and releases, point springs, frames, visuals, collisions, controllers
    (on their other joints: ``model.controllers.controller_without``), cut joints and compiled constraints (by body
    name: their rows are made again on the new coordinates), gravity, base motion, metadata — as it was. A
    ``ModelError`` names a joint that is not a tree joint, and what the rebuild cannot carry across (Python
    constraints and a torque callback, which read the old q and v by position)."""
    info = model.joint(joint)
    if info.is_cut:
        raise ModelError(f"joint '{joint}' closes a loop (a cut joint); only tree joints separate",
                         element=f"joint '{joint}'")
    refuse_separation(model, joint)
    u = model.unilateral
    b = ModelBuilder(gravity=model.gravity, name=model.name, metadata=dict(model.metadata),
                     base_motion=model.base_motion, inertia="accept")   # (the bodies were checked when built)
    for body in model.bodies:
        b.add_body(body.name, body.mass, body.com, body.inertia)
    names = model.body_names
    for j in model.joints[1:]:
        if j.name == joint:
            b.add_joint(j.name, Free(), GROUND, names[j.child])
            continue
        v = j.v_slice
        lims = [lm for lm in u.limits if lm.joint == j.name]
        lats = {la.coordinate: la.value for la in u.latches if la.joint == j.name}
        coords = j.joint.coordinate_names
        kw = {}
        if lims:
            by = {lm.coordinate: lm for lm in lims}
            kw["limits"] = ([by[c].lower if c in by else None for c in coords],
                            [by[c].upper if c in by else None for c in coords])
            kw["restitution"] = [by[c].restitution if c in by else 0.0 for c in coords]
        if lats:
            kw["latch"] = [lats.get(c, float("nan")) for c in coords]
        rel = u.release_of(j.name)
        if rel is not None:
            kw["release"] = {"at": rel.at, "mode": rel.mode}
        b.add_joint(j.name, j.joint, names[j.parent], names[j.child], j.placement,
                    None if j.child_placement.is_identity() else j.child_placement,
                    stiffness=model.dof_stiffness[v], damping=model.dof_damping[v], rest=model.dof_rest[v],
                    effort=model.dof_effort[v], armature=model.dof_armature[v], **kw)
    for cj in model.cut_joints:        # the loops close as before: their rows are rebuilt on the new coordinates
        b.add_joint(cj.name, cj.joint, names[cj.parent], names[cj.child], cj.placement, cj.child_placement, cut=True)
    for c in model.constraints:
        if not isinstance(c, LoopJoint):
            b.add_constraint(c)
    for s in model.springs:
        b.add_spring(s.name, s.body_a, s.point_a, s.body_b, s.point_b, s.stiffness, s.damping, s.rest_length)
    for f in model.frames:
        b.add_frame(f.name, f.body_name, f.placement)
    for vis in model.visuals:
        b.add_visual(vis.name, vis.body_name, vis.shape, vis.placement, vis.color)
    for col in model.collisions:
        b.add_collision(col.name, col.body_name, col.shape, col.placement, col.friction, col.restitution,
                        col.contype, col.conaffinity)
    for a, c in model.contact_exclude:
        b.exclude_contact(a, c)
    for a, c in model.contact_include:
        b.include_contact(a, c)
    for info in model.controllers:     # by joint name; the separated joint's coordinates end with it
        kept = controller_without(info, joint)
        if kept is not None:
            b.add_controller(info.name, kept)
    return b.build()



def _quaternion(R):
    """The unit quaternion (w, x, y, z) of the rotation matrix R (Shepperd's method, w ≥ 0)."""
    from scipy.spatial.transform import Rotation

    x, y, z, w = Rotation.from_matrix(R).as_quat()
    qt = np.array([w, x, y, z])
    return qt if w >= 0.0 else -qt


def separated_state(old, new, joint, q, v):
    """The state (q, v) of ``old`` mapped onto ``new``, the model after ``joint`` separated (``separated_model``):
    every other joint's coordinates as they were (by name), the free joint's the pose and velocity of the child's
    frame (forward kinematics), so that every body keeps its motion and the momenta are unchanged. Returns
    ``(q, v)`` of ``new``."""
    from multibody.algorithms.dynamics import forward_kinematics

    fk = forward_kinematics(old, q, v)
    q2, v2 = np.empty(new.nq), np.empty(new.nv)
    for j in new.joints[1:]:
        if j.name == joint:
            c = old.joint(joint).child
            R, p, w, pd = fk.R[c], fk.p[c], fk.velocity[c, :3], fk.velocity[c, 3:]
            q2[j.q_slice] = np.concatenate([p, _quaternion(R)])
            v2[j.v_slice] = np.concatenate([R.T @ w, R.T @ pd])
        else:
            o = old.joint(j.name)
            q2[j.q_slice] = q[o.q_slice]
            v2[j.v_slice] = v[o.v_slice]
    return q2, v2


def separated_forces(old, new, tau):
    """Constant generalized forces ``tau`` of ``old`` on the coordinates of ``new`` (by name: those of the separated
    joint end with it, its free joint gets none)."""
    by_name = {n: k for k, n in enumerate(old.velocity_names())}
    return np.array([tau[by_name[n]] if n in by_name else 0.0 for n in new.velocity_names()])
