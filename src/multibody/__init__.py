"""multibody: dynamics of systems of rigid and elastic bodies.

Describe bodies, joints and forces once with ``ModelBuilder``; get O(N) dynamics (``rnea``, ``crba``,
``aba``), simulations (``simulate`` -> ``Result``), constrained and stabilized formulations, elastic beams and
cables of rigid finite elements (``ModelBuilder.add_beam``), static equilibria and natural modes
(``static_equilibrium``, ``modes``), the exact linearization about equilibria and steady motions (``linearize``), and
the
reference systems of the texts in ``multibody.systems``.

``import multibody`` loads only the exceptions: each public name is imported from its module when it is first used
(``mb.ModelBuilder`` loads the model and the numba kernels, ``mb.simulate`` the integrators, ``mb.load_model`` the
model files, ``mb.sweep`` pandas), so a script, a notebook or a worker pays only for what it uses.
"""
import importlib

from multibody.errors import ConstraintError, ConvergenceError, IntegrationError, ModelError, ResultFileError

__version__ = "0.1.0"

#: the public names imported on first use, by the module that holds them
_HOMES = {
    "multibody.model.graph": ("Graph",),
    "multibody.model": ("BaseMotion", "Body", "Cylindrical", "Fixed", "Free", "GeneralJoint", "Model", "ModelBuilder",
                        "Placement", "Planar", "Prismatic", "Revolute", "Spherical", "Universal", "rotation_about",
                        "Box", "Capsule", "Cylinder", "HalfSpace", "Mesh", "Sphere", "Release",
                        "ComputedTorque", "JointPD", "Trajectory", "LoadCurve",
                        "Constraint", "PointOnPlane", "PointOnProfile", "Profile", "RollingDisc", "RollingOnProfile",
                        "UserConstraint", "VelocityConstraint"),
    "multibody.analysis.linearize": ("Linearization", "linearize"),
    "multibody.analysis.statics": ("static_equilibrium", "Equilibrium"),
    "multibody.analysis.modes": ("modes", "Modes"),
    "multibody.rows.reactions": ("joint_reactions",),
    "multibody.algorithms.dynamics": ("aba", "aba_batch", "bias_forces", "center_of_mass", "crba", "energy",
                                      "forward_kinematics", "gravity_forces", "hybrid_dynamics", "joint_wrenches",
                                      "point_jacobian", "point_position", "point_velocity", "rnea", "rnea_batch"),
    "multibody.algorithms.derivatives": ("aba_derivatives", "aba_derivatives_batch", "coriolis_matrix", "minv",
                                         "rnea_derivatives", "rnea_derivatives_batch"),
    "multibody.algorithms.centroidal": ("centroidal_bias", "centroidal_map", "centroidal_map_time_variation",
                                        "centroidal_momentum", "com_jacobian"),
    "multibody.algorithms.control": ("controller_torques",),
    "multibody.algorithms.inverse_kinematics": ("IKResult", "inverse_kinematics"),
    "multibody.algorithms.frames": ("frame_acceleration", "frame_accelerations", "frame_jacobian", "frame_jacobians",
                                    "frame_jacobian_time_variation", "frame_placement", "frame_placements",
                                    "frame_velocity", "frame_velocities"),
    "multibody.contact.queries": ("Proximity", "collisions", "distance"),
    "multibody.model.data": ("Data",),
    "multibody.result": ("BatchResult", "Result"),
    "multibody.simulation": ("resume", "simulate", "simulate_batch"),
    "multibody.io": ("load_model", "save_model"),
    "multibody.parallel": ("sweep",),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name):
    """The public name ``name``, imported from its module on first use (then an ordinary attribute)."""
    if name == "io":
        return importlib.import_module("multibody.io")
    if name not in _HOME:
        raise AttributeError(f"module 'multibody' has no attribute '{name}'")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOME))


__all__ = [
    "ModelBuilder", "Model", "Graph", "Body", "Placement", "rotation_about", "BaseMotion", "Release",
    "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", "Planar", "Free", "Fixed", "GeneralJoint",
    "Constraint", "PointOnPlane", "PointOnProfile", "Profile", "RollingDisc", "RollingOnProfile", "UserConstraint",
    "VelocityConstraint", "Sphere", "Capsule", "Cylinder", "Box", "HalfSpace", "Mesh",
    "JointPD", "ComputedTorque", "Trajectory", "LoadCurve",
    "ModelError", "ConstraintError", "ConvergenceError", "IntegrationError", "ResultFileError",
    "Data", "rnea", "crba", "aba", "hybrid_dynamics", "energy", "bias_forces", "gravity_forces", "forward_kinematics",
    "point_position", "point_velocity", "point_jacobian", "center_of_mass", "aba_batch", "rnea_batch",
    "rnea_derivatives", "aba_derivatives", "minv", "coriolis_matrix", "rnea_derivatives_batch", "aba_derivatives_batch",
    "joint_wrenches", "joint_reactions",
    "frame_placement", "frame_jacobian", "frame_velocity", "frame_acceleration", "frame_jacobian_time_variation",
    "frame_jacobians", "frame_placements", "frame_velocities", "frame_accelerations",
    "controller_torques", "inverse_kinematics", "IKResult", "com_jacobian", "centroidal_map", "centroidal_momentum", "centroidal_map_time_variation", "centroidal_bias",
    "distance", "collisions", "Proximity",
    "simulate", "resume", "simulate_batch", "BatchResult", "Result", "linearize", "Linearization", "load_model",
    "static_equilibrium", "Equilibrium", "modes", "Modes",
    "save_model", "sweep",
]
