"""The words of a model file: its format name, the joint types, the keys of each kind of joint and constraint, the
named planes (``model.schema.json`` describes every key)."""
from multibody.model import Cylindrical, Fixed, Free, Planar, Prismatic, Revolute, Spherical, Universal

__all__ = ["FORMAT", "JOINT_TYPES", "JOINT_NAMES", "AXIS_KEYS", "CONSTRAINT_KEYS", "PLANES"]


FORMAT = "multibody-model"


#: file name of each joint type -> class
JOINT_TYPES = {"revolute": Revolute, "prismatic": Prismatic, "cylindrical": Cylindrical, "universal": Universal,
               "spherical": Spherical, "planar": Planar, "free": Free, "fixed": Fixed}


JOINT_NAMES = {cls: name for name, cls in JOINT_TYPES.items()}


#: keys of a joint entry that only some joint types take
AXIS_KEYS = {"revolute": ("axis",), "prismatic": ("axis",), "cylindrical": ("axis",), "universal": ("axis1", "axis2")}


CONSTRAINT_KEYS = {
    "point_on_plane": ("body", "point", "normal", "origin", "plane_body"),
    "point_on_profile": ("body", "profile", "point", "plane", "origin"),
    "rolling_disc": ("body", "radius", "axis", "center", "normal", "origin"),
    "rolling_on_profile": ("body", "radius", "profile", "center", "plane", "origin", "x_range"),
    "position": ("f",),
    "velocity": ("jacobian", "bias"),
    "mimic": ("joint", "reference", "multiplier", "offset"),
}


PLANES = {"xz": ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)), "yz": ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
          "xy": ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))}
