"""Loop-closing (cut) joints as constraints: the joint's own equations between its two bodies (seed 001 §3.6),
as the compiled elements of ``constraints.py``."""
import numpy as np

from multibody.errors import ModelError
from multibody.model.constraints import ELEMENT_ROWS, E_ALIGN, E_LOCK, E_OFFSET, E_POINT, Constraint
from multibody.model.joints import CYLINDRICAL, FIXED, FREE, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from multibody.model.rotations import perpendicular_axes

__all__ = ["LoopJoint"]


class LoopJoint(Constraint):
    """A joint that closes a loop (a cut joint, seed 001 §3.6), as the joint's equations between its parent
    body (joint frame ``placement``) and its child body (joint frame ``child_placement``). Made by the builder
    for every joint that is not in the spanning tree; ``joint`` is its ``JointInfo``.

    ============  =======================================================================
    Revolute      o_b − o_a = 0 (3);  (A n_k)·(B u) = 0, k = 2, 3 (2)          → 5 rows
    Spherical     o_b − o_a = 0 (3)
    Prismatic     vee(AᵀB) = 0 (3);  (o_b − o_a)·(A n_k) = 0 (2)
    Cylindrical   (A n_k)·(B u) = 0 (2);  (o_b − o_a)·(A n_k) = 0 (2)
    Universal     o_b − o_a = 0 (3);  (A a1)·(B a2) = a1·a2 (1)
    Planar        (A n_k)·(B e_z) = 0 (2);  (o_b − o_a)·(A e_z) = 0 (1)
    Fixed         o_b − o_a = 0 (3);  vee(AᵀB) = 0 (3)
    ============  =======================================================================

    (A, B the joint frames in ground axes, o_a, o_b their origins, u the joint axis, n2, n3 ⟂ u.)
    """

    def __init__(self, joint):
        super().__init__(joint.name)
        self.joint = joint
        self.bodies = (joint.parent, joint.child)
        self._elements = self._decompose()
        self.levels = tuple(2 for e in self._elements for _ in range(ELEMENT_ROWS[e[0]]))

    @property
    def element(self):
        return f"joint '{self.name}'"

    def _decompose(self):
        """[(code, extra)] of the joint's equations (frames in the joint frames A, B)."""
        code = self.joint.joint.code
        ax = np.asarray(self.joint.joint.axes())
        out = []
        if code in (REVOLUTE, SPHERICAL, UNIVERSAL, FIXED):
            out.append((E_POINT, None))
        if code in (REVOLUTE, CYLINDRICAL):
            n2, n3 = perpendicular_axes(ax[0])
            out += [(E_ALIGN, (n2, ax[0], 0.0)), (E_ALIGN, (n3, ax[0], 0.0))]
            if code == CYLINDRICAL:
                out += [(E_OFFSET, n2), (E_OFFSET, n3)]
        if code == UNIVERSAL:
            out.append((E_ALIGN, (ax[0], ax[1], float(ax[0] @ ax[1]))))
        if code == PLANAR:
            ez = np.array([0.0, 0.0, 1.0])
            out += [(E_ALIGN, (np.array([1.0, 0, 0]), ez, 0.0)), (E_ALIGN, (np.array([0, 1.0, 0]), ez, 0.0)),
                    (E_OFFSET, ez)]
        if code in (PRISMATIC, FIXED):
            out += [(E_LOCK, k) for k in range(3)]
        if code == PRISMATIC:
            n2, n3 = perpendicular_axes(ax[0])
            out += [(E_OFFSET, n2), (E_OFFSET, n3)]
        if code == FREE:
            raise ModelError(f"joint '{self.name}': a Free joint constrains nothing and cannot close a loop",
                             element=f"joint '{self.name}'")
        return out

    def _pack(self, index, frames):
        j = self.joint
        a, b = j.parent, j.child
        Pa = frames(a) * j.placement          # joint frame in the (internal) frame of body a
        Pb = frames(b) * j.child_placement
        Ra, Rb = Pa.rotation, Pb.rotation
        out = []
        for code, extra in self._elements:
            if code == E_POINT:
                out.append((E_POINT, a, b, [*Pa.translation, *Pb.translation]))
            elif code == E_ALIGN:
                n, u, c = extra
                out.append((E_ALIGN, a, b, [*(Ra @ n), *(Rb @ u), c]))
            elif code == E_LOCK:
                out.append((E_LOCK, a, b, [*Ra.ravel(), *Rb.ravel(), float(extra)]))
            elif code == E_OFFSET:
                out.append((E_OFFSET, a, b, [*Pa.translation, *Pb.translation, *(Ra @ extra)]))
        return out
