"""Joint reactions: the force and moment each joint transmits, in the joint's own frame.

One convention for every joint and every formulation (``Result.reactions``, :func:`joint_reactions`):

    the spatial force ``[moment; force]`` (6 numbers) that the joint applies to its child body, the moment taken
    about the origin of the joint frame, both vectors in the axes of the joint frame on the child's side (for a
    tree joint: the frame that moves with the child, the body's kernel frame; for a cut joint: its
    ``child_placement`` on the child body).

It is the whole force the joint transmits: the constraint reaction together with the drive (its projection on
the joint's motion subspace is the joint's generalized force τ, seed 001 eq. 3.175: ``S_nᵀ R_n``). The parent
receives the opposite force (Newton's third law).

* Tree joints (seed 001 §3.5, the separate-bodies method): from the backward pass of the recursive
  Newton–Euler algorithm at (q, q̇, q̈) with the bodies' applied forces — the forces of the constraints
  among them — as external forces (RBDA Table 5.1; :func:`multibody.joint_wrenches`).
* Cut joints and the other compiled constraints (seed 001 §3.6.2, eqs. 3.189–3.192, and §2.4 eq. 2.26): every
  constraint row r acts on body b with the spatial force ``c_rb λ_r``, ``c_rb`` the row's covector on the
  body's motion (``kernels/constraints.py``) and λ_r its multiplier (sign: ``M v̇ = τ − C + Gᵀλ``); a cut
  joint's reaction is the sum over its rows on its child body.
"""
import numpy as np

from multibody.algorithms.dynamics import forward_kinematics, subtree_wrenches
from multibody.model.data import Data
from multibody.model.forces import applied_forces
from multibody.kernels.forces import point_forces_kernel

__all__ = ["joint_reactions", "in_joint_frame", "constraint_body_wrenches", "tree_reactions_along",
           "cut_joint_frames", "spring_body_forces", "all_joint_reactions"]


def in_joint_frame(W, R, o):
    """``[moment about the ground origin; force]`` in ground axes (``W``, shape (..., 6)) as ``[moment about
    o; force]`` in the axes of the frame R (columns: the frame's axes in ground coordinates)."""
    W = np.asarray(W, dtype=float)
    n = W[..., :3] - np.cross(o, W[..., 3:])
    return np.concatenate([np.einsum("...ji,...j->...i", R, n), np.einsum("...ji,...j->...i", R, W[..., 3:])],
                          axis=-1)


def joint_reactions(model, q, v, a, fext=None, data=None, t=None):
    """The reaction of every tree joint at (q, q̇ = v, q̈ = a): a dict joint name -> ``[moment; force]``, the
    spatial force the joint applies to its child body, moment about the joint's origin, in the joint frame on
    the child's side (see the module docstring). ``q``, ``v``, ``a`` may carry a leading sample axis (then
    each value has shape (samples, 6)). ``fext`` as in :func:`multibody.rnea` (forces on the bodies, ground
    coordinates), for one state; ``t`` the time of a moving base (one value, or one per sample).

    Seed 001 §3.5 (the separate-bodies method: the joint forces found from the outermost bodies inwards,
    eq. 3.172 solved for R_n); the projection on the joint's motion subspace is its τ (eq. 3.175)."""
    q = np.asarray(q, dtype=float)
    names = [j.name for j in model.joints[1:]]
    if q.ndim == 2:
        v, a = np.asarray(v, dtype=float), np.asarray(a, dtype=float)
        ts = np.broadcast_to(np.asarray(0.0 if t is None else t, dtype=float), (q.shape[0],))
        rows = [joint_reactions(model, q[k], v[k], a[k], fext=fext, data=data, t=ts[k]) for k in range(q.shape[0])]
        return {name: np.array([r[name] for r in rows]).reshape(q.shape[0], 6) for name in names}
    W, R, p = subtree_wrenches(model, q, v, a, data=data, fext=fext, t=t)
    # W is about the joint origin p already: express it in the frame R (shift by 0)
    out = in_joint_frame(W, R, np.zeros_like(p))
    return {name: out[i] for i, name in enumerate(names)}


def constraint_body_wrenches(nbodies, cb, cv, lam, rows):
    """The spatial forces ``Σ_r c_rb λ_r`` of the constraint rows ``rows`` on every body (ground first):
    (nbodies + 1, 6), [moment about the ground origin; force] in ground coordinates. ``cb`` (rows, 2) body
    indices and ``cv`` (rows, 2, 6) covectors of the compiled rows (``kernels/constraints.py``)."""
    fb = np.zeros((nbodies + 1, 6))
    for r in rows:
        for slot in range(2):
            b = cb[r, slot]
            if b > 0:
                fb[b] += cv[r, slot] * lam[r]
    return fb


def cut_joint_frames(model, R, p):
    """For every cut joint: (child body, rotation, origin) of its joint frame on the child's side in ground
    coordinates, from the kernel-frame placements R (nbodies + 1, 3, 3) and p (nbodies + 1, 3), ground first."""
    out = {}
    for j in model.cut_joints:
        _, Pb = model.joint_frames(j)
        b = j.child
        out[j.name] = (b, R[b] @ Pb.rotation, p[b] + R[b] @ Pb.translation)
    return out


def tree_reactions_along(model, Q, V, A, t=None):
    """:func:`joint_reactions` of a tree along samples (Q, V, A = q̈), with the forces of the model's point
    spring-dampers on the bodies (the joint springs, dampers and efforts act in the joints: they are part of the
    transmitted force); ``t`` the sample times for a moving base. A dict joint name -> (samples, 6)."""
    names = [j.name for j in model.joints[1:]]
    out = {name: np.zeros((len(Q), 6)) for name in names}
    springs = np.asarray(model.spring_k).shape[0] > 0 or bool(getattr(model, "loads", ()))   # (or loads)
    for k in range(len(Q)):
        tk = None if t is None else t[k]
        fext = spring_body_forces(model, Q[k], V[k], tk) if springs else None
        r = joint_reactions(model, Q[k], V[k], A[k], fext=fext, t=None if t is None else float(tk))
        for name in names:
            out[name][k] = r[name]
    return out


def spring_body_forces(model, q, v, t=None):
    """The forces of the model's point spring-dampers and loads on every body (ground first): (nbodies + 1, 6),
    [moment about the ground origin; force] in ground coordinates (``kernels/forces.py``); ``t`` the time of a
    moving base and of the loads' curves."""
    n = model.nbodies + 1
    fb = np.zeros((n, 6))
    F, _ = applied_forces(model)
    if F.spring_k.shape[0] == 0 and F.load_int.shape[0] == 0:
        return fb
    d = Data(model)
    d.set_time(0.0 if t is None else float(t))
    point_forces_kernel(d.mi, d.mf, np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(v, dtype=float),
                        F.spring_body, F.spring_point, F.spring_k, F.spring_c, F.spring_l0,
                        (F.load_int, F.load_float, F.load_knots), 0.0 if t is None else float(t), d.work, fb,
                        np.zeros(model.nv), False)
    # the kernel leaves the sum over each subtree: each body's own force is its row minus its children's rows
    own = fb.copy()
    parent = np.asarray(model.parent)
    for i in range(1, n):
        if parent[i] > 0:
            own[parent[i]] -= fb[i]
    return own


def all_joint_reactions(model, rows, q, v, a, lam, mc, t=None):
    """The reactions of every joint at one sample of a constrained run (see the module docstring): tree joints
    by RNEA with the forces of the compiled constraint rows ``0..mc−1`` (multipliers ``lam``) and the point
    springs and loads (at time ``t``) on the bodies, cut joints from their rows on the child body. ``rows`` is the
    filled ``ConstraintRows`` work (``cb``, ``cv`` at q). A dict joint name -> (6,)."""
    w = rows.w
    fb = constraint_body_wrenches(model.nbodies, w.cb, w.cv, lam, range(mc)) + spring_body_forces(model, q, v, t)
    out = joint_reactions(model, q, v, a, fext=fb, t=t)
    if model.cut_joints:
        K = forward_kinematics(model, q, frames="kernel")
        for name, (b, R, o) in cut_joint_frames(model, K.R, K.p).items():
            sl = rows.slices[name]
            Wb = np.zeros(6)
            for r in range(sl.start, sl.stop):
                for slot in range(2):
                    if w.cb[r, slot] == b:
                        Wb += w.cv[r, slot] * lam[r]
            out[name] = in_joint_frame(Wb, R, o)
    return out
