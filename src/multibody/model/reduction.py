"""Reduced models: some tree joints locked at given values, the rest of the model as it was (Pinocchio's
``buildReducedModel``): ``model.reduced(locked={joint: value})``.

A locked joint becomes a ``Fixed`` joint whose placement is the old joint's placement moved by the joint at its
locked value, so every body keeps its place (and its number), the bodies' frames, named frames, visual and collision
elements, springs and loop joints stay where they were, and the configuration loses the locked joint's coordinates
(a Panda with its two finger joints locked is a 7-DoF arm). What acts on coordinates follows them: the joint
spring-dampers and efforts, limits and latches of the joints kept, the controllers (re-resolved on the kept joints).
Refused, with one line naming it: locking a general joint (its placement is generated code), a joint that has a
release, a controller named on a locked joint, and a model with constraints on coordinates (user constraints, the
mimic constraints of a URDF) or a torque callback, which are written for the full model's q and v.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> from multibody.systems.pendulums import triple_pendulum_seed001
>>> chain = triple_pendulum_seed001()
>>> names = [j.name for j in chain.joints[1:]]
>>> stiff = chain.reduced(locked={names[1]: 0.4})               # the middle hinge held at 0.4 rad
>>> stiff.nq, [type(j.joint).__name__ for j in stiff.joints[1:]]
(2, ['Revolute', 'Fixed', 'Revolute'])
>>> M = mb.crba(chain, [0.3, 0.4, -0.2])
>>> bool(np.allclose(mb.crba(stiff, [0.3, -0.2]), M[np.ix_([0, 2], [0, 2])], rtol=0, atol=1e-14))
True
"""
import dataclasses
from collections.abc import Mapping

import numpy as np

from multibody.errors import ModelError
from multibody.kernels.kinematics import (B_P, B_R, GENERAL, WB_WIDTH, WD_WIDTH, joint_placement_world_call,
                                          workspace_size)
from multibody.kernels.packing import pack_model
from multibody.model.controllers import resolve_controller
from multibody.model.joints import Fixed
from multibody.model.loop_joints import LoopJoint
from multibody.model.placement import Placement
from multibody.model.unilateral import Unilateral

__all__ = ["reduced"]

#: the arrays of a Model with one entry per velocity coordinate (``docs/model-arrays.md``; a locked coordinate's
#: armature goes with it: its rotor does not turn)
PER_VELOCITY = ("dof_stiffness", "dof_damping", "dof_rest", "dof_effort", "dof_armature")


def _locked_values(model, locked, reference):
    """{joint index: its q values}: ``locked`` a mapping joint name -> value (a number or the joint's nq numbers), or
    a sequence of names whose values come from ``reference`` (default the neutral configuration)."""
    if isinstance(locked, str) or not isinstance(locked, (Mapping, list, tuple, set, frozenset)):
        raise ModelError(f"reduced: locked must be a mapping joint -> value or a list of joint names, got {locked!r}",
                         element="locked")
    ref = model.neutral() if reference is None else np.asarray(reference, dtype=float).reshape(-1)
    if ref.shape != (model.nq,):
        raise ModelError(f"reduced: reference must have shape ({model.nq},) for model '{model.name}', got "
                         f"{np.shape(reference)}", element="reference")
    out = {}
    for name in locked:
        j = model.joint(name)
        if j.is_cut:
            raise ModelError(f"reduced: joint '{name}' closes a loop (a cut joint): only tree joints can be locked",
                             element=f"joint '{name}'")
        if j.joint.code == GENERAL:
            raise ModelError(f"reduced: joint '{name}' is a GeneralJoint, whose placement is generated code: it "
                             "cannot be locked", element=f"joint '{name}'")
        value = ref[j.q_slice] if not isinstance(locked, Mapping) else locked[name]
        try:
            v = np.broadcast_to(np.asarray(value, dtype=float), (j.joint.nq,)).copy()
        except (TypeError, ValueError):
            raise ModelError(f"reduced: the value of joint '{name}' must be {j.joint.nq} number(s), got {value!r}",
                             element=f"joint '{name}'") from None
        if not np.all(np.isfinite(v)):
            raise ModelError(f"reduced: the value of joint '{name}' must be finite, got {v.tolist()}",
                             element=f"joint '{name}'")
        out[j.child] = v
    return out


def _refusals(model, locked_names):
    if model.torque_callback is not None:
        raise ModelError(f"reduced: model '{model.name}' has a torque callback, written for its full q and v; build "
                         "the reduced model's with the builder", element="torque")
    for c in model.constraints:
        if not isinstance(c, LoopJoint):
            raise ModelError(f"reduced: constraint '{c.name}' acts on the full model's coordinates; a reduced model "
                             "carries loop joints only", element=f"constraint '{c.name}'")
    for r in model.unilateral.releases:
        if r.joint in locked_names:
            raise ModelError(f"reduced: joint '{r.joint}' has a release, which a locked joint cannot have",
                             element=f"joint '{r.joint}'")
    for c in model.controllers:
        named = c.controller.joints
        if named is not None and set(named) & locked_names:
            hit = sorted(set(named) & locked_names)[0]
            raise ModelError(f"reduced: controller '{c.name}' acts on joint '{hit}', which is locked",
                             element=f"controller '{c.name}'")


def _locked_placement(model, i, q):
    """The placement (R, p) of body i's kernel frame in its parent's at the configuration q: what the locked joint's
    ``Fixed`` placement becomes (the joint's own transform, from ``kinematics.joint_placement_world``)."""
    mi, mf = pack_model(model)
    work = np.zeros(workspace_size(model.nbodies + 1, model.nv))
    n = model.nbodies + 1
    wb = work[:n * WB_WIDTH].reshape(n, WB_WIDTH)
    wd = work[n * WB_WIDTH:n * WB_WIDTH + model.nv * WD_WIDTH].reshape(model.nv, WD_WIDTH)
    par = int(model.parent[i])
    wb[par, B_R:B_R + 9] = np.eye(3).reshape(9)
    wb[par, B_P:B_P + 3] = 0.0
    joint_placement_world_call(i, mi, mf, q, wb, wd)
    return wb[i, B_R:B_R + 9].reshape(3, 3).copy(), wb[i, B_P:B_P + 3].copy()


def reduced(model, locked, reference=None):
    """The model with the tree joints of ``locked`` fixed (module docstring): ``locked`` is a mapping joint name ->
    value (a number, or the joint's nq numbers: a quaternion for a Spherical joint) or a list of joint names, which
    are then locked at their values in ``reference`` (default ``model.neutral()``)."""
    values = _locked_values(model, locked, reference)
    names = {model.joints[i].name for i in values}
    _refusals(model, names)
    arrays = {k: np.array(getattr(model, k)) for k in ("parent", "jtype", "idx_q", "nq_j", "idx_v", "nv_j", "jaxis",
                                                        "jplace_R", "jplace_p", "mass", "com", "inertia_com", "h",
                                                        "inertia_o", "gravity", "spring_body", "spring_point",
                                                        "spring_k", "spring_c", "spring_l0")}
    q_ref = model.neutral()
    for i, v in values.items():
        q_ref[model.joints[i].q_slice] = v
    keep_v = np.ones(model.nv, dtype=bool)
    for i in values:
        keep_v[model.joints[i].v_slice] = False
        R, p = _locked_placement(model, i, q_ref)
        arrays["jplace_R"][i], arrays["jplace_p"][i] = R, p
        arrays["jtype"][i], arrays["nq_j"][i], arrays["nv_j"][i] = Fixed.code, 0, 0
        arrays["jaxis"][i] = 0.0
    for k in PER_VELOCITY:
        arrays[k] = np.array(getattr(model, k))[keep_v]
    arrays["idx_q"][1:] = np.concatenate([[0], np.cumsum(arrays["nq_j"][1:])[:-1]])
    arrays["idx_v"][1:] = np.concatenate([[0], np.cumsum(arrays["nv_j"][1:])[:-1]])
    joints = [None]
    for i, j in enumerate(model.joints[1:], start=1):
        iq, iv = int(arrays["idx_q"][i]), int(arrays["idx_v"][i])
        if i in values:
            kernel = Placement(arrays["jplace_R"][i], arrays["jplace_p"][i])
            joints.append(dataclasses.replace(
                j, joint=Fixed(), placement=model.body_frames[j.parent].inverse() * kernel,
                child_placement=model.body_frames[i].inverse(), q_slice=slice(iq, iq), v_slice=slice(iv, iv)))
        else:
            joints.append(dataclasses.replace(j, q_slice=slice(iq, iq + j.joint.nq), v_slice=slice(iv, iv + j.joint.nv)))
    uni = model.unilateral
    unilateral = Unilateral.bound([lm for lm in uni.limits if lm.joint not in names],
                                  [la for la in uni.latches if la.joint not in names], uni.releases, joints)
    controllers = tuple(resolve_controller(c.name, c.controller, joints) for c in model.controllers)
    metadata = dict(model.metadata)
    metadata["reduced"] = {model.joints[i].name: values[i].tolist() for i in sorted(values)}
    return type(model)(name=model.name, arrays=arrays, body_names=model.body_names, joints=joints,
                       cut_joints=model.cut_joints, springs=model.springs, constraints=model.constraints,
                       constraint_table=model.constraint_table, body_frames=model.body_frames, bodies=model.bodies,
                       torque_callback=None, graph=model.graph, metadata=metadata, base_motion=model.base_motion,
                       frames=model.frames, visuals=model.visuals, collisions=model.collisions,
                       unilateral=unilateral, controllers=controllers)
