"""Descriptions of applied forces (evaluated numerically by ``multibody.kernels.forces``).

- gravity: a uniform field, set on the builder (default (0, 0, −9.81));
- ``JointSpringDamper``: τ_k = −K_k (q_k − rest_k) − C_k v_k on each velocity coordinate of a joint,
  plus a constant effort (an actuator); stiffness only for joints whose coordinates are plain numbers;
- ``PointSpring``: a spring-damper between a point of one body and a point of another (or the ground),
  force magnitude K (l − l0) + C l̇ along the line of the points;
- a joint-torque callback ``tau(t, q, v) -> (nv,)`` for anything else (control laws, drives).

:class:`AppliedForces` is their packing for the kernels (``kernels/forces.py``), the one place it is written:
``applied_forces(model)``; ``model/packing.py`` carries it to the compiled right-hand sides as ``p.forces``.
"""
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError, shown
from multibody.kernels.forces import no_loads


def per_dof(value, n, what, element, default=0.0):
    """Broadcast a scalar or sequence to ``n`` finite floats (one per velocity coordinate of a joint)."""
    if value is None:
        return np.full(n, float(default))
    try:
        arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be a number or {n} numbers, got {shown(value)!r}", element=element) from None
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{element}: {what} must be finite, got {arr.tolist()}", element=element)
    return arr


@dataclass(frozen=True)
class JointSpringDamper:
    stiffness: np.ndarray
    damping: np.ndarray
    rest: np.ndarray
    effort: np.ndarray


@dataclass(frozen=True)
class PointSpring:
    """Spring-damper between ``point_a`` on ``body_a`` and ``point_b`` on ``body_b`` (body frames)."""

    name: str
    body_a: str
    point_a: np.ndarray
    body_b: str
    point_b: np.ndarray
    stiffness: float
    damping: float
    rest_length: float

    def __post_init__(self):
        element = f"spring '{self.name}'"
        for what in ("stiffness", "damping", "rest_length"):
            val = getattr(self, what)
            if not np.isfinite(val) or val < 0:
                raise ModelError(f"{element}: {what} must be finite and non-negative, got {val}", element=element)


#: the applied forces of a model as the kernels of ``kernels/forces.py`` read them: the joint spring-dampers and
#: efforts per velocity coordinate (``model.dof_stiffness``, ``dof_damping``, ``dof_rest``, ``dof_effort``) and the
#: point-to-point spring-dampers (``model.spring_body`` (ns, 2), ``spring_point`` (ns, 2, 3), ``spring_k``,
#: ``spring_c``, ``spring_l0``)
AppliedForces = namedtuple("AppliedForces", "dof_stiffness dof_damping dof_rest dof_effort spring_body spring_point "
                                            "spring_k spring_c spring_l0 load_int load_float load_knots")


def applied_forces(model):
    """The :class:`AppliedForces` of ``model`` and whether any of them acts (joint stiffness, damping or effort, a
    point spring, a load). The loads are ``model.load_arrays`` (``model/loads.py``: the loads' integers, floats and
    the knots of their curves; empty for a model without loads)."""
    loads = getattr(model, "load_arrays", None)
    if loads is None:
        loads = no_loads()
    F = AppliedForces(*[np.ascontiguousarray(getattr(model, name), dtype=np.float64)
                        for name in ("dof_stiffness", "dof_damping", "dof_rest", "dof_effort")],
                      np.ascontiguousarray(model.spring_body, dtype=np.int64).reshape(-1, 2),
                      np.ascontiguousarray(model.spring_point, dtype=np.float64).reshape(-1, 2, 3),
                      *[np.ascontiguousarray(getattr(model, name), dtype=np.float64)
                        for name in ("spring_k", "spring_c", "spring_l0")],
                      *[np.ascontiguousarray(a) for a in loads])
    acts = bool(np.any(F.dof_stiffness) or np.any(F.dof_damping) or np.any(F.dof_effort) or F.spring_k.shape[0]
                or F.load_int.shape[0])
    return F, acts
