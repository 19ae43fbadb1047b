"""Small models shared by several test modules."""
import numpy as np

import multibody as mb


def loop_model(cut_joint, gravity=(0, -9.81, 0)):
    """A ground–a–b–c chain whose tip c is closed to the ground by ``cut_joint`` (spatial geometry)."""
    b = mb.ModelBuilder(gravity=gravity, name="loop")
    for k, name in enumerate("abc"):
        b.add_body(name, 1.0 + 0.3 * k, com=(0.4, 0.05, 0.0), inertia=[0.02, 0.1, 0.11])
    b.add_joint("ja", mb.Revolute(axis=(0, 0, 1)), "ground", "a")
    b.add_joint("jb", mb.Spherical(), "a", "b", placement=(np.eye(3), (0.8, 0, 0)))
    b.add_joint("jc", mb.Spherical(), "b", "c", placement=(np.eye(3), (0.8, 0.1, 0)))
    R = mb.rotation_about((1, 1, 0), 0.4)
    b.add_joint("cut", cut_joint, "c", "ground", placement=(R, (0.7, 0.0, 0.2)),
                child_placement=(np.eye(3), (1.9, 0.3, 0.1)), cut=True)
    return b.build()
