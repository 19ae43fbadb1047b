"""The parameter tuple of the tree's compiled right-hand side: what ``tree_rhs(t, x, p, out)`` reads, by name.

The compiled right-hand sides of the formulations built on the tree (``formulations/tree_rhs.py``, the
``constrained``, ``stabilized`` and ``poisson`` formulations, the generated code of ``formulation="symbolic"``)
take one tuple ``p`` of arrays, which numba types once per model shape. Its entries, in order:

==================  =====================================================================================
``P_MI``, ``P_MF``  the packed model (``multibody.data``: ``Data.mi``, ``Data.mf``)
``P_Q``             a buffer of nq floats (its length is the model's nq)
``P_DOF_STIFFNESS``, ``P_DOF_DAMPING``, ``P_DOF_REST``, ``P_DOF_EFFORT``
                    the joint spring-dampers and efforts per velocity coordinate (``model.dof_*``)
``P_SPRING_BODY``, ``P_SPRING_POINT``, ``P_SPRING_K``, ``P_SPRING_C``, ``P_SPRING_L0``
                    the point-to-point spring-dampers (``model.spring_*``)
``P_TAU_BUFFER``    nv floats: the applied generalized forces of the last evaluation
``P_WORK``          the kinematics / ABA workspace (``Data.work``)
``P_BODY_FORCES``   (n, 6): the per-body force accumulator of the applied forces
``P_NO_FEXT``       (0, 6): no external spatial forces (``Data.no_fext``)
``P_TAU``           nv floats: the constant generalized forces (``tau`` of ``simulate``)
``P_APPLIED``       True when the model has applied forces (joint springs, dampers or efforts, point springs,
                    loads): without them the right-hand side skips their pass
``P_VAPPLIED``      1 float: the potential energy of the applied forces at the last evaluation
``P_LOADS``         the external loads (``model.load_arrays``: ints, floats, knots; ``kernels/forces.py``)
==================  =====================================================================================

Formulations that need more append their own entries after the last (``P_SIZE`` is the first free position).
The positions are module constants, which numba reads as compile-time constants: ``p[P_WORK]`` compiles to the
same code as a literal index.
"""
import numpy as np

from multibody.data import Data, applied_force_arrays

__all__ = ["P_MI", "P_MF", "P_Q", "P_DOF_STIFFNESS", "P_DOF_DAMPING", "P_DOF_REST", "P_DOF_EFFORT", "P_SPRING_BODY",
           "P_SPRING_POINT", "P_SPRING_K", "P_SPRING_C", "P_SPRING_L0", "P_TAU_BUFFER", "P_WORK", "P_BODY_FORCES",
           "P_NO_FEXT", "P_TAU", "P_APPLIED", "P_VAPPLIED", "P_LOADS", "P_SIZE", "STATE_TYPED", "tree_params",
           "tree_joint_forces"]

(P_MI, P_MF, P_Q, P_DOF_STIFFNESS, P_DOF_DAMPING, P_DOF_REST, P_DOF_EFFORT, P_SPRING_BODY, P_SPRING_POINT,
 P_SPRING_K, P_SPRING_C, P_SPRING_L0, P_TAU_BUFFER, P_WORK, P_BODY_FORCES, P_NO_FEXT, P_TAU, P_APPLIED,
 P_VAPPLIED, P_LOADS) = range(20)
#: the number of entries of the tuple (the position of the first entry a formulation appends)
P_SIZE = P_LOADS + 1
#: the entries that hold numbers of the state's type: the buffers the kernels write into and the constant forces
#: added to them (complex for complex-step derivatives, ``multibody.analysis.derivatives``)
STATE_TYPED = (P_Q, P_TAU_BUFFER, P_WORK, P_BODY_FORCES, P_TAU, P_VAPPLIED)


def tree_params(model, tau_const=None, data=None):
    """The parameter tuple (module docstring) of ``model``: packed arrays, force arrays, fresh workspaces;
    ``tau_const`` the constant generalized forces (default zero); ``data``: the Data whose arrays to use
    (default a new one)."""
    d = Data(model) if data is None else data
    n = model.nbodies + 1
    nv = model.nv
    tc = np.zeros(nv) if tau_const is None else np.ascontiguousarray(tau_const, dtype=np.float64)
    forces, applied = applied_force_arrays(model)
    return (d.mi, d.mf, np.zeros(model.nq), *forces[:9],
            np.zeros(nv),  # P_TAU_BUFFER
            d.work,  # P_WORK
            np.zeros((n, 6)),  # P_BODY_FORCES
            d.no_fext,  # P_NO_FEXT
            tc,  # P_TAU
            applied,  # P_APPLIED
            np.zeros(1),  # P_VAPPLIED
            forces[9])  # P_LOADS


def tree_joint_forces(p):
    """The joint spring-dampers and efforts of the parameter tuple ``p`` as one (4, nv) array (stiffness, damping,
    rest, effort), or (0, nv) when the model has no applied forces (``p[P_APPLIED]`` false: the right-hand side
    skips them) — the ``F`` of ``kernels.lanes.lanes_rhs``."""
    F = np.array(p[P_DOF_STIFFNESS:P_DOF_EFFORT + 1])
    return F if p[P_APPLIED] else F[:0]
