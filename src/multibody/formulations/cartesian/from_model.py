"""The Cartesian system of a Model: seed 001 ch. 2 built from the Model's bodies, joints, springs and
constraints."""
import numpy as np

from multibody.errors import ModelError
from multibody.formulations.cartesian.embedding import Embedding, planar_embedding
from multibody.formulations.cartesian.forces import PointLoad, PointSpring, RelativeTorque
from multibody.formulations.cartesian.joints import (CompositeJoint, PlanarAngle, PlanarJoint, PlanarPrismatic,
                                                     PlanarRevolute, UniversalJoint)
from multibody.formulations.cartesian.model_rows import ModelConstraintRows
from multibody.formulations.cartesian.primitives import perpendicular_frame
from multibody.formulations.cartesian.system import CartesianSystem
from multibody.model.joints import CYLINDRICAL, FIXED, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL


def cartesian_from_model(model, q=None, v=None, solver="auto", planar=None):
    """The :class:`CartesianSystem` of a Model at the state (q, v), and its :class:`Embedding`.

    Every body becomes a body of the system with its frame at the centre of mass; every joint, tree or cut,
    becomes the book's constraint rows between its two bodies (seed 001 ch. 2): in space Revolute → hinge
    (5 rows), Spherical → 3 point–plane, Prismatic → 2 point–plane + 3 rotation, Cylindrical → 2 point–plane +
    2 rotation, Fixed → 6, Universal → spherical + 1 rotation about the cross's common normal (4), Planar →
    1 point–plane + 2 rotation (3), Free → none; in the plane (``planar``: None detects it, see
    :func:`planar_embedding`) Revolute → 2 point–line rows (seed 001 §2.5), Prismatic → point–line + locked
    angle, Fixed → 3. The Model's other constraints follow as a :class:`ModelConstraintRows` block. Gravity,
    point springs and the constant efforts of revolute joints carry over; joint spring-dampers, armatures and
    torque callbacks (generalized forces) have no Cartesian form (``ModelError``).
    """
    from multibody.algorithms.dynamics import forward_kinematics

    q = model.neutral() if q is None else np.asarray(q, float)
    v = np.zeros(model.nv) if v is None else np.asarray(v, float)
    K = forward_kinematics(model, q, v, frames="kernel")
    emb = planar_embedding(model, K) if planar in (None, True) else None
    if planar and emb is None:
        raise ModelError(f"model '{model.name}' is not planar", element="planar")
    if emb is None:
        emb = Embedding(dim=3)
    if np.any(np.asarray(model.dof_stiffness)) or np.any(np.asarray(model.dof_damping)):
        raise ModelError(f"model '{model.name}': joint spring-dampers are not available in the Cartesian "
                         "formulation", element="joint spring-damper")
    if np.any(np.asarray(model.dof_armature)):
        raise ModelError(f"model '{model.name}': the joints' armatures (rotor inertias on the coordinates' diagonal of "
                         "the mass matrix) have no Cartesian form; use a formulation in joint coordinates",
                         element="armature")
    if model.torque_callback is not None:
        raise ModelError(f"model '{model.name}': a torque callback (generalized forces) has no Cartesian form",
                         element="torque callback")
    dim = emb.dim
    g = np.asarray(model.gravity, float)
    s = CartesianSystem(dim=dim, gravity=g if dim == 3 else np.array([g @ emb.e1, g @ emb.e2]), solver=solver)
    nb = model.nbodies
    com = np.asarray(model.com)
    for i in range(1, nb + 1):
        if not model.mass[i] > 0:
            raise ModelError(f"body '{model.body_names[i]}' has no mass; the Cartesian formulation needs a mass "
                             "on every body", element=f"body '{model.body_names[i]}'")
        R, p = K.R[i], K.p[i]
        w = K.velocity[i, :3]
        c = p + R @ com[i]
        vc = K.velocity[i, 3:] + np.cross(w, R @ com[i])
        if dim == 3:
            s.add_body(model.body_names[i], float(model.mass[i]), np.asarray(model.inertia_com[i]), position=(c, R),
                       velocity=(vc, R.T @ w))
        else:
            J = float(emb.n @ (R @ model.inertia_com[i] @ R.T) @ emb.n)
            s.add_body(model.body_names[i], float(model.mass[i]), J, position=(c @ emb.e1, c @ emb.e2, 0.0),
                       velocity=(vc @ emb.e1, vc @ emb.e2, w @ emb.n))
    for jinfo in list(model.joints[1:]) + list(model.cut_joints):
        joint = (planar_joint if dim == 2 else spatial_joint)(model, jinfo, K, emb)
        if joint is not None:
            s.add_joint(joint)
        joint_effort(model, jinfo, K, emb, s)
    for (ia, ib), (pa, pb), sp_ in zip(model.spring_body, model.spring_point, model.springs):
        ends = []
        for i, pt in ((ia, pa), (ib, pb)):
            rel = pt - (com[i] if i else 0.0)
            if dim == 2:
                rel = K.R[i] @ rel if i else rel
                rel = np.array([rel @ emb.e1, rel @ emb.e2])
            ends.append(rel)
        s.add_force(PointSpring(model.body_names[ia], ends[0], model.body_names[ib], ends[1], sp_.stiffness,
                                sp_.damping, sp_.rest_length))
    for load in model.loads:
        s.add_force(_point_load(model, load, K, emb, com))
    block = ModelConstraintRows(model, emb, s)
    if block.m:
        s.add_joint(block)
    s.finalize()
    return s, emb


def _point_load(model, load, K, emb, com):
    """The Cartesian form of a load (``multibody.model.loads``): its point from the body's centre of mass, its vectors
    in the body's axes (local) or inertial ones; in the plane, projected on it (the bodies' axes there are the
    inertial ones at the state the system was built from)."""
    i = load.body
    rel = load.point - com[i]
    local = load.reference == "local"
    force, torque = (load.axes @ load.force, load.axes @ load.torque) if local else (load.force, load.torque)
    if emb.dim == 3:
        return PointLoad(model.body_names[i], rel, force, torque, local, load.curve)
    R = K.R[i]
    rel = R @ rel
    if local:
        force, torque = R @ force, R @ torque
    return PointLoad(model.body_names[i], [rel @ emb.e1, rel @ emb.e2], [force @ emb.e1, force @ emb.e2],
                     torque @ emb.n, local, load.curve)


def joint_points(model, jinfo, K):
    """The joint frame of ``jinfo`` on its two bodies: (R_a, point_a, R_b, point_b), points from each body's
    centre of mass in that body's kernel axes (ground: ground coordinates)."""
    a, b = jinfo.parent, jinfo.child
    Pa, Pb = model.joint_frames(jinfo)
    com = np.asarray(model.com)
    pa = Pa.translation - (com[a] if a > 0 else 0.0)
    pb = Pb.translation - com[b]
    return Pa.rotation, pa, Pb.rotation, pb


def spatial_joint(model, jinfo, K, emb):
    a, b = jinfo.parent, jinfo.child
    Ra, pi, Rb, pj = joint_points(model, jinfo, K)
    jt = jinfo.joint
    code = jt.code
    ax = np.asarray(jt.axes())
    na, nb_ = model.body_names[a], model.body_names[b]
    prims = []
    if code in (REVOLUTE, SPHERICAL, FIXED):
        prims.append(("pp", 3, dict(n=Ra.copy(), p=pi, rho=pj)))
    if code in (REVOLUTE, CYLINDRICAL):
        ua = Ra @ ax[0]
        n2, n3 = perpendicular_frame(ua)
        if code == CYLINDRICAL:
            prims.append(("pp", 2, dict(n=np.array([n2, n3]), p=pi, rho=pj)))
        prims.append(("ra", 2, dict(n=np.array([n2, n3]), ai=ua, aj=Rb @ ax[0])))
    if code == PRISMATIC:
        ua = Ra @ ax[0]
        n2, n3 = perpendicular_frame(ua)
        prims.append(("pp", 2, dict(n=np.array([n2, n3]), p=pi, rho=pj)))
    if code in (PRISMATIC, FIXED):
        prims.append(("rl", 3, dict(n=np.eye(3), R0=Ra @ Rb.T)))
    if code == UNIVERSAL:
        return UniversalJoint(jinfo.name, na, nb_, pi, pj, Ra @ ax[0], Rb @ ax[1], cos_angle=float(ax[0] @ ax[1]))
    if code == PLANAR:
        ez = np.array([0.0, 0.0, 1.0])
        return PlanarJoint(jinfo.name, na, nb_, pi, pj, Ra @ ez, Rb @ ez)
    return CompositeJoint(jinfo.name, na, nb_, 3, prims) if prims else None


def in_plane(emb, K, body, vec):
    """A vector of ``body``'s kernel axes as planar body coordinates at φ = 0 (ground: ground axes)."""
    w = K.R[body] @ vec if body > 0 else vec
    return np.array([w @ emb.e1, w @ emb.e2])


def planar_joint(model, jinfo, K, emb):
    a, b = jinfo.parent, jinfo.child
    Ra, pi, Rb, pj = joint_points(model, jinfo, K)
    code = jinfo.joint.code
    na, nb_ = model.body_names[a], model.body_names[b]
    if a == 0:   # a point of the ground in plane coordinates (from the plane origin)
        pi2 = in_plane(emb, K, 0, pi - emb.origin)
    else:
        pi2 = in_plane(emb, K, a, pi)
    pj2 = in_plane(emb, K, b, pj)
    if code == REVOLUTE:
        return PlanarRevolute(jinfo.name, na, nb_, pi2, pj2)
    if code == PRISMATIC:
        axis = in_plane(emb, K, a, Ra @ jinfo.joint.axis) if a > 0 else in_plane(emb, K, 0, Ra @ jinfo.joint.axis)
        return PlanarPrismatic(jinfo.name, na, nb_, pi2, axis, pj2, theta0=0.0)
    if code == FIXED:
        return CompositeJoint(jinfo.name, na, nb_, 2, PlanarRevolute(jinfo.name, na, nb_, pi2, pj2).primitives(None)
                          + PlanarAngle(jinfo.name, na, nb_, 0.0).primitives(None))
    return None   # a Planar joint leaves the plane's three coordinates free


def joint_effort(model, jinfo, K, emb, s):
    """A constant effort of a revolute joint as a pair of opposite moments about its axis."""
    if jinfo.v_slice is None:
        return
    eff = np.asarray(model.dof_effort)[jinfo.v_slice]
    if not eff.size or not np.any(eff):
        return
    if jinfo.joint.code != REVOLUTE:
        raise ModelError(f"joint '{jinfo.name}': constant efforts are carried over to the Cartesian formulation for "
                         "revolute joints only", element=f"joint '{jinfo.name}'")
    Ra, _, _, _ = joint_points(model, jinfo, K)
    axis = Ra @ jinfo.joint.axis               # in the parent's kernel axes
    na, nb_ = model.body_names[jinfo.parent], model.body_names[jinfo.child]
    if emb.dim == 3:
        s.add_force(RelativeTorque(na, nb_, eff[0] * axis))
    else:
        w = K.R[jinfo.parent] @ axis if jinfo.parent > 0 else axis
        s.add_force(RelativeTorque(na, nb_, eff[0] * float(w @ emb.n)))
