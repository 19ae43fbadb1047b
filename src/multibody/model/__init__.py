"""What the system is: bodies, joints, forces, constraints, topology; ``ModelBuilder`` -> ``Model``."""
from multibody.model.base_motion import BaseMotion, BaseState
from multibody.model.beams import Beam, Cable
from multibody.model.bodies import Body
from multibody.model.builder import GROUND, ModelBuilder
from multibody.model.constraints import Constraint, PointOnPlane, PointOnProfile, RollingDisc, RollingOnProfile
from multibody.model.controllers import ComputedTorque, JointPD, Trajectory
from multibody.model.profiles import Profile
from multibody.model.user_constraints import UserConstraint, VelocityConstraint
from multibody.model.geometry import Box, Capsule, Collision, Cylinder, Frame, HalfSpace, Mesh, Sphere, Visual
from multibody.model.loads import Load, LoadCurve
from multibody.model.joints import (Cylindrical, Fixed, Free, GeneralJoint, Joint, Planar, Prismatic, Revolute,
                                    Spherical, Universal)
from multibody.model.model import JointInfo, Model
from multibody.model.placement import Placement
from multibody.model.rotations import rotation_about
from multibody.model.unilateral import JointLimit, Latch, Release

__all__ = ["BaseMotion", "BaseState", "Body", "GROUND", "ModelBuilder", "Constraint", "PointOnPlane", "PointOnProfile", "Profile", "RollingDisc",
           "RollingOnProfile", "UserConstraint", "VelocityConstraint", "Joint", "Fixed", "Revolute", "Prismatic", "Cylindrical", "Universal",
           "Spherical", "Planar", "Free", "GeneralJoint", "JointInfo", "Model", "Placement", "rotation_about",
           "Box", "Capsule", "Collision", "Cylinder", "Frame", "HalfSpace", "Mesh", "Sphere", "Visual",
           "JointLimit", "Latch", "Release", "JointPD", "ComputedTorque", "Trajectory", "Beam", "Cable", "Load",
           "LoadCurve"]
