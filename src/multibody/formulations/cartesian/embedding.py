"""How a Model sits in the Cartesian formulation: the plane of a planar model (:func:`planar_embedding`) or the
space, and the map of each body's coordinates (:class:`Embedding`)."""
from dataclasses import dataclass

import numpy as np

from multibody.model.joints import FIXED, PLANAR, PRISMATIC, REVOLUTE
from multibody.model.rotations import quat_to_matrix, rotations_about


@dataclass
class Embedding:
    """How the Model's bodies sit in the Cartesian system. Spatial (``dim = 3``): every body at its centre of
    mass with its own axes. Planar (``dim = 2``): every body moves parallel to the plane through ``origin``
    spanned by ``e1``, ``e2`` (normal ``n = e1 × e2``); body k's planar coordinates are its centre's
    ``(x, y)`` along e1, e2 and its rotation angle φ about n from its orientation ``R0[k]`` at the initial
    configuration (φ = 0 there); ``depth[k]`` is its constant offset along n."""

    dim: int
    e1: np.ndarray = None
    e2: np.ndarray = None
    n: np.ndarray = None
    origin: np.ndarray = None
    R0: np.ndarray = None
    depth: np.ndarray = None

    def placements(self, model, x):
        """(R, p) of every body's kernel frame (ground first) for the Cartesian coordinates x."""
        nb = model.nbodies
        com = np.asarray(model.com)
        R = np.zeros((nb + 1, 3, 3))
        P = np.zeros((nb + 1, 3))
        R[0] = np.eye(3)
        if self.dim == 3:
            X = x.reshape(nb, 7)
            R[1:] = quat_to_matrix(X[:, 3:])
            C = X[:, :3]
        else:
            X = x.reshape(nb, 3)
            R[1:] = np.einsum("kab,kbc->kac", rotations_about(self.n, X[:, 2]), self.R0[1:])
            C = self.origin + X[:, :1] * self.e1 + X[:, 1:2] * self.e2 + self.depth[1:, None] * self.n
        P[1:] = C - np.einsum("kab,kb->ka", R[1:], com[1:])
        return R, P

    def velocities(self, model, x, V):
        """(ω, v_C) of every body (ground first), ground axes: angular velocity and centre-of-mass velocity."""
        nb = model.nbodies
        w = np.zeros((nb + 1, 3))
        vc = np.zeros((nb + 1, 3))
        if self.dim == 3:
            W = V.reshape(nb, 6)
            R = quat_to_matrix(x.reshape(nb, 7)[:, 3:])
            w[1:] = np.einsum("kab,kb->ka", R, W[:, 3:])
            vc[1:] = W[:, :3]
        else:
            W = V.reshape(nb, 3)
            w[1:] = W[:, 2:3] * self.n
            vc[1:] = W[:, :1] * self.e1 + W[:, 1:2] * self.e2
        return w, vc


def planar_embedding(model, K, tol=1e-10):
    """The planar :class:`Embedding` of ``model`` when every body moves parallel to one plane (joints:
    revolute about parallel axes, prismatic along and planar joints in the plane, fixed; gravity in the plane;
    spring ends at equal depth; no constraints other than cut joints), else None. ``K``: forward kinematics at
    the initial configuration (placements in kernel frames)."""
    if any(type(c).__name__ != "LoopJoint" for c in model.constraints):
        return None
    joints = list(model.joints[1:]) + list(model.cut_joints)
    normal = None
    axes = []
    for j in joints:
        code = j.joint.code
        if code not in (REVOLUTE, PRISMATIC, PLANAR, FIXED):
            return None
        Pa, _ = model.joint_frames(j)
        RJ = K.R[j.parent] @ Pa.rotation
        if code == REVOLUTE:
            axes.append(("rot", RJ @ j.joint.axis))
        elif code == PRISMATIC:
            axes.append(("slide", RJ @ j.joint.axis))
        elif code == PLANAR:
            axes.append(("rot", RJ[:, 2]))
    rots = [a for kind, a in axes if kind == "rot"]
    if rots:
        normal = rots[0]
    else:
        slides = [a for kind, a in axes if kind == "slide"]
        for a in slides[1:]:
            c = np.cross(slides[0], a)
            if np.linalg.norm(c) > 1e-6:
                normal = c / np.linalg.norm(c)
                break
    if normal is None:
        return None
    for kind, a in axes:
        if kind == "rot" and np.linalg.norm(np.cross(a, normal)) > tol:
            return None
        if kind == "slide" and abs(a @ normal) > tol:
            return None
    if abs(np.asarray(model.gravity) @ normal) > tol * max(1.0, np.linalg.norm(model.gravity)):
        return None
    nb = model.nbodies
    depth = np.zeros(nb + 1)
    com_w = K.p + np.einsum("kab,kb->ka", K.R, np.asarray(model.com))
    depth[1:] = com_w[1:] @ normal
    for (ia, ib), (pa, pb) in zip(model.spring_body, model.spring_point):
        if abs((K.R[ia] @ pa + K.p[ia] - K.R[ib] @ pb - K.p[ib]) @ normal) > tol:
            return None
    e1 = np.array([1.0, 0, 0]) - normal[0] * normal
    if np.linalg.norm(e1) < 0.5:
        e1 = np.array([0, 1.0, 0]) - normal[1] * normal
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(normal, e1)
    return Embedding(dim=2, e1=e1, e2=e2, n=normal, origin=np.zeros(3), R0=K.R.copy(), depth=depth)
