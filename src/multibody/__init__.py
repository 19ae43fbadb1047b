"""multibody: dynamics of systems of rigid bodies.

Describe bodies, joints and forces once with ``ModelBuilder``; get O(N) dynamics (``rnea``, ``crba``,
``aba``), simulations (``simulate`` -> ``Result``), constrained and stabilized formulations, and the
exact linearization about equilibria and steady motions (``linearize``), and the
reference systems of the texts in ``multibody.systems``.
"""
from multibody.errors import ConstraintError, IntegrationError, ModelError, ResultFileError
from multibody.model.graph import Graph
from multibody.model import (BaseMotion, Body, Cylindrical, Fixed, Free, GeneralJoint, Model, ModelBuilder, Placement,
                             Planar, Prismatic, Revolute, Spherical, Universal, rotation_about)
from multibody.model import Box, Capsule, Cylinder, HalfSpace, Mesh, Sphere
from multibody.model import (Constraint, PointOnPlane, PointOnProfile, Profile, RollingDisc, RollingOnProfile,
                             UserConstraint, VelocityConstraint)

from multibody.analysis.linearize import Linearization, linearize
from multibody.rows.reactions import joint_reactions
from multibody.algorithms import (aba, aba_batch, bias_forces, center_of_mass, crba, energy, forward_kinematics,
                                  gravity_forces, hybrid_dynamics, joint_wrenches, point_jacobian, point_position,
                                  point_velocity, rnea, rnea_batch)
from multibody.algorithms_derivatives import (aba_derivatives, aba_derivatives_batch, coriolis_matrix, minv,
                                              rnea_derivatives, rnea_derivatives_batch)
from multibody.data import Data
from multibody.result import Result
from multibody.simulation import BatchResult, resume, simulate, simulate_batch

__version__ = "0.1.0"


def __getattr__(name):
    """``load_model``, ``save_model``, ``multibody.io`` and ``sweep`` are imported when first used
    (``import multibody`` stays fast and free of pandas and dask)."""
    if name in ("load_model", "save_model", "io"):
        import importlib

        io = importlib.import_module("multibody.io")
        return io if name == "io" else getattr(io, name)
    if name == "sweep":
        from multibody.parallel import sweep

        return sweep
    raise AttributeError(f"module 'multibody' has no attribute '{name}'")


__all__ = [
    "ModelBuilder", "Model", "Graph", "Body", "Placement", "rotation_about", "BaseMotion",
    "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", "Planar", "Free", "Fixed", "GeneralJoint",
    "Constraint", "PointOnPlane", "PointOnProfile", "Profile", "RollingDisc", "RollingOnProfile", "UserConstraint",
    "VelocityConstraint", "Sphere", "Capsule", "Cylinder", "Box", "HalfSpace", "Mesh",
    "ModelError", "ConstraintError", "IntegrationError", "ResultFileError",
    "Data", "rnea", "crba", "aba", "hybrid_dynamics", "energy", "bias_forces", "gravity_forces", "forward_kinematics",
    "point_position", "point_velocity", "point_jacobian", "center_of_mass", "aba_batch", "rnea_batch",
    "rnea_derivatives", "aba_derivatives", "minv", "coriolis_matrix", "rnea_derivatives_batch", "aba_derivatives_batch",
    "joint_wrenches", "joint_reactions",
    "simulate", "resume", "simulate_batch", "BatchResult", "Result", "linearize", "Linearization", "load_model",
    "save_model", "sweep",
]

