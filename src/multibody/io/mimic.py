"""A joint that follows another (URDF's ``<mimic>``, a model file's ``mimic`` constraint): the
``UserConstraint`` ``q_joint = multiplier · q_reference + offset``."""
import math

import numpy as np

from multibody.errors import ModelError
from multibody.model import UserConstraint

__all__ = ["Mimic", "mimic_constraint", "mimic_cycles"]


class Mimic:
    """``f(q, t) = q_joint − multiplier · q_reference − offset`` (one row): a joint that follows another, as URDF's
    ``<mimic>`` says; ``jacobian`` is its constant row. Made by :func:`mimic_constraint`."""

    def __init__(self, joint, reference, multiplier, offset, i, j, nq):
        self.joint, self.reference, self.multiplier, self.offset = joint, reference, float(multiplier), float(offset)
        self._i, self._j, self._nq = i, j, nq

    def __call__(self, q, t):
        return np.array([q[self._i] - self.multiplier * q[self._j] - self.offset])

    def jacobian(self, q, t):
        J = np.zeros((1, self._nq))
        J[0, self._i] = 1.0
        J[0, self._j] -= self.multiplier
        return J


def mimic_constraint(model, joint, reference, multiplier=1.0, offset=0.0, name=None):
    """The ``UserConstraint`` (default name ``<joint>_mimic``) that makes ``joint`` follow ``reference``:
    ``q_joint = multiplier · q_reference + offset``; both joints must have one plain coordinate (revolute,
    prismatic), else a ``ModelError`` naming them."""
    name = name or f"{joint}_mimic"
    element = f"constraint '{name}'"
    ends = []
    for role, jname in (("joint", joint), ("reference", reference)):
        j = next((j for j in model.joints[1:] + model.cut_joints if j.name == jname), None)
        if j is None:
            raise ModelError(f"mimic of joint '{joint}': the {role} '{jname}' is not a joint of model '{model.name}' "
                             f"(joints: {', '.join(model.joint_names[1:])})", element=element)
        if j.is_cut or j.joint.nq != 1 or not j.joint.linear_coordinates:
            raise ModelError(f"mimic of joint '{joint}': the {role} '{jname}' must be a tree joint with one coordinate "
                             f"(revolute or prismatic), got {type(j.joint).__name__}", element=element)
        ends.append(j.q_slice.start)
    for what, value in (("multiplier", multiplier), ("offset", offset)):
        if not math.isfinite(float(value)):
            raise ModelError(f"mimic of joint '{joint}': {what} must be finite, got {value}", element=element)
    f = Mimic(joint, reference, multiplier, offset, *ends, model.nq)
    return UserConstraint(name, f, nrows=1, jacobian=f.jacobian)


def mimic_cycles(follows):
    """The cycles of joints that mimic one another — ``follows`` maps each joint to the joint it mimics — as lists of
    joint names, the first repeated at the end (``['j1', 'j2', 'j1']``): in a cycle no joint moves by itself (the
    rows are dependent, or contradict one another), so a model refuses them. Each cycle once, from its first joint
    in ``follows``' order."""
    cycles, seen = [], set()
    for start in follows:
        path, j = [], start
        while j in follows and j not in path and j not in seen:
            path.append(j)
            j = follows[j]
        if j in path:
            cycles.append(path[path.index(j):] + [j])
        seen.update(path)
    return cycles
