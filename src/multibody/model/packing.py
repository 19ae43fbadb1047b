"""What compiled code reads of a Model, declared once: named tuples of packed arrays, built by one packer.

The compiled right-hand sides and step loops (``formulations/tree_rhs.py``, the ``constrained``, ``stabilized``,
``poisson`` and ``symbolic`` formulations, the switching modes, the stepping contact) take one named tuple ``p``
of arrays, which numba types once per model shape. An entry is read by name, ``p.work``: numba compiles a named
tuple's attribute to the same code as a constant index, so the names cost nothing.

:class:`~multibody.model.forces.AppliedForces` (``p.forces``) — the model's applied forces as ``kernels/forces.py``
reads them (packed by ``model/forces.py``):

=====================================================  =========================================================
``dof_stiffness``, ``dof_damping``, ``dof_rest``,       the joint spring-dampers and efforts per velocity
``dof_effort``                                          coordinate (``model.dof_*``)
``spring_body``, ``spring_point``, ``spring_k``,        the point-to-point spring-dampers (``model.spring_*``)
``spring_c``, ``spring_l0``
=====================================================  =========================================================

:class:`TreeParams` — what ``tree_rhs(t, x, p, out)`` reads:

==================  =====================================================================================
``mi``, ``mf``      the packed model (``model/data.py``: ``Data.mi``, ``Data.mf``; ``kernels/packing.py``)
``q``               a buffer of nq floats (its length is the model's nq)
``forces``          :class:`~multibody.model.forces.AppliedForces`
``tau_buffer``      nv floats: the applied generalized forces of the last evaluation
``work``            the kinematics / ABA workspace (``Data.work``)
``body_forces``     (n, 6): the per-body force accumulator of the applied forces
``no_fext``         (0, 6): no external spatial forces (``Data.no_fext``)
``tau``             nv floats: the constant generalized forces (``tau`` of ``simulate``)
``applied``         True when the model has applied forces (joint springs, dampers or efforts, point springs):
                    without them the right-hand side skips their pass
``vapplied``        1 float: the potential energy of the applied forces at the last evaluation
==================  =====================================================================================

A formulation that needs more reads a named tuple with the tree's fields first and its own after them
(:func:`extended`; e.g. :data:`ControlledParams`, whose ``control`` is the :class:`Controls` of the model's
controllers and a compiled torque law): every function written for :class:`TreeParams` reads it unchanged. A new
per-model array the kernels read belongs here, beside the others, with a name of its own.
"""
from collections import namedtuple

import numpy as np

from multibody.model.controllers import ControllerTable
from multibody.model.forces import applied_forces
from multibody.model.data import Data

__all__ = ["TreeParams", "Controls", "ControlledParams", "TREE_FIELDS", "STATE_TYPED", "extended",
           "tree_params", "tree_part", "with_dtype", "joint_force_table", "controls",
           "controlled_params"]

#: the fields of :class:`TreeParams`, in order
TREE_FIELDS = ("mi", "mf", "q", "forces", "tau_buffer", "work", "body_forces", "no_fext", "tau", "applied",
               "vapplied")
#: the parameters of the tree's compiled right-hand side (module docstring)
TreeParams = namedtuple("TreeParams", TREE_FIELDS)
#: the fields that hold numbers of the state's type: the buffers the kernels write into and the constant forces
#: added to them (complex for complex-step derivatives, ``multibody.analysis.derivatives``)
STATE_TYPED = ("q", "tau_buffer", "work", "body_forces", "tau", "vapplied")


def extended(name, fields, module):
    """A named tuple class ``name`` with the fields of :class:`TreeParams` followed by ``fields`` (a formulation's
    own), defined in ``module`` (its ``__name__``: numba's disk cache finds the class there)."""
    return namedtuple(name, TREE_FIELDS + tuple(fields), module=module)


#: the controllers' tuple (``kernels/control.py``, ``formulations/tree_control.py``): the table
#: (``ControllerTable``), the model's packed float array as built, whether any controller compensates gravity / computes
#: torques, scratch (G (n, 4), A, TG, TI), no external forces, the controllers' torques, τ_extra, the compiled law's
#: q, v and output, the law (the address of its C function, 0 for none), whether there is one, and its failure
#: record ``[failed, t]`` (``formulations/tree_control.py``)
Controls = namedtuple("Controls", "ci cf rt rc mf gravity inverse g a tg ti no_fext out extra user_q user_v user_out "
                                  "user has_user fail")
#: :class:`TreeParams` with the :class:`Controls` of the run as ``control``
ControlledParams = extended("ControlledParams", ("control",), __name__)


def tree_params(model, tau_const=None, data=None):
    """The :class:`TreeParams` of ``model``: packed arrays, force arrays, fresh workspaces; ``tau_const`` the
    constant generalized forces (default zero); ``data``: the Data whose arrays to use (default a new one)."""
    d = Data(model) if data is None else data
    n = model.nbodies + 1
    nv = model.nv
    tc = np.zeros(nv) if tau_const is None else np.ascontiguousarray(tau_const, dtype=np.float64)
    F, acts = applied_forces(model)
    return TreeParams(mi=d.mi, mf=d.mf, q=np.zeros(model.nq), forces=F, tau_buffer=np.zeros(nv), work=d.work,
                      body_forces=np.zeros((n, 6)), no_fext=d.no_fext, tau=tc, applied=acts, vapplied=np.zeros(1))


def tree_part(p):
    """The :class:`TreeParams` of a parameter tuple ``p`` with the tree's fields first (:func:`extended`)."""
    return TreeParams(*p[:len(TREE_FIELDS)])


def with_dtype(p, dtype):
    """``p`` with the fields of :data:`STATE_TYPED` converted to ``dtype`` (e.g. complex)."""
    return p._replace(**{name: getattr(p, name).astype(dtype) for name in STATE_TYPED})


def joint_force_table(p):
    """The joint spring-dampers and efforts of the parameters ``p`` as one (4, nv) array (stiffness, damping,
    rest, effort), or (0, nv) when the model has no applied forces (``p.applied`` false: the right-hand side
    skips them) — the ``F`` of ``kernels.lanes.lanes_rhs``."""
    F = p.forces
    table = np.array([F.dof_stiffness, F.dof_damping, F.dof_rest, F.dof_effort])
    return table if p.applied else table[:0]


def controls(model, mf, address=0):
    """The :class:`Controls` of the model's controllers and a compiled torque law (the address of its C function,
    ``formulations/tree_control.py``; 0 for none); ``mf`` the packed float array of the run. With neither, a tuple
    of the same numba type that adds nothing."""
    table = ControllerTable(model.controllers, model.nv)
    n, nq, nv = model.nbodies + 1, model.nq, model.nv
    return Controls(ci=table.CI, cf=table.CF, rt=table.RT, rc=table.RC, mf=mf, gravity=table.gravity,
                    inverse=table.inverse_dynamics, g=np.zeros((n, 4)), a=np.zeros(nv), tg=np.zeros(nv),
                    ti=np.zeros(nv), no_fext=np.zeros((0, 6)), out=np.zeros(nv), extra=np.zeros(nv),
                    user_q=np.zeros(nq), user_v=np.zeros(nv), user_out=np.zeros(nv), user=int(address),
                    has_user=bool(address), fail=np.zeros(2))


def controlled_params(p, control):
    """The :data:`ControlledParams` of the tree parameters ``p`` and the :class:`Controls` ``control``."""
    return ControlledParams(*tree_part(p), control)
