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


def sprung_model(effort=0.0, masses=None, gravity=(0.0, 0.0, -9.81)):
    """Revolute, universal, spherical, prismatic and free joints with joint and point spring-dampers; ``masses``
    (5 numbers) replace the body masses, the centres of mass and inertias staying the same."""
    b = mb.ModelBuilder(gravity=gravity, name="sprung")
    rng = np.random.default_rng(7)

    def inertia():
        a = rng.uniform(0.05, 0.2, 3)
        return np.diag([a[0] + a[1], a[1] + a[2], a[0] + a[2]])

    for k, name in enumerate(("a", "b", "c", "d", "e")):
        mass = rng.uniform(0.5, 2.0)
        b.add_body(name, mass=mass if masses is None else masses[k], com=rng.uniform(-0.3, 0.3, 3),
                   inertia=inertia())
    R = mb.rotation_about((1.0, 2.0, 0.5), 0.4)
    b.add_joint("ja", mb.Revolute(axis=(0, 1, 0)), "ground", "a", placement=mb.Placement(R, (0.1, 0, 0)),
                stiffness=3.0, damping=0.4, rest=0.2, effort=effort)
    b.add_joint("jb", mb.Universal((1, 0, 0), (0, 0, 1)), "a", "b", placement=mb.Placement(translation=(0, 0, -0.6)),
                stiffness=(2.0, 1.0), damping=(0.3, 0.1), rest=(0.1, -0.2))
    b.add_joint("jc", mb.Spherical(), "b", "c", placement=mb.Placement(translation=(0.2, 0, -0.5)), damping=0.2)
    b.add_joint("jd", mb.Prismatic(axis=(0, 0, 1)), "c", "d", placement=mb.Placement(R.T, (0, 0.1, -0.3)),
                stiffness=20.0, damping=1.0, rest=-0.1)
    b.add_joint("je", mb.Free(), "ground", "e", placement=mb.Placement(translation=(1.0, 0, 0)))
    b.add_spring("s1", "ground", (0.5, 0.5, 0.5), "c", (0.1, 0.0, 0.0), stiffness=15.0, damping=0.7, rest_length=0.3)
    b.add_spring("s2", "a", (0.0, 0.2, 0.0), "d", (0.0, 0.0, 0.1), stiffness=8.0, damping=0.5, rest_length=0.5)
    b.add_spring("s3", "e", (0.1, 0.1, 0.0), "ground", (1.0, 0.0, 1.0), stiffness=30.0, damping=0.2, rest_length=1.0)
    b.add_spring("s4", "b", (0.0, 0.1, 0.0), "e", (0.0, 0.0, 0.0), stiffness=5.0, damping=0.0, rest_length=0.2)
    return b.build()


def moving_random_tree(n, seed):
    """``(model, rng)``: ``bench.dynamics.random_tree(n, rng)`` of the generator ``default_rng(seed)``, drawn again
    while every joint is Fixed (nothing would move); ``rng`` continues the same stream."""
    from multibody.bench.dynamics import random_tree

    rng = np.random.default_rng(seed)
    model = random_tree(n, rng)
    while model.nv == 0:
        model = random_tree(n, rng)
    return model, rng


def with_armature(model, rng, low=0.05, high=1.0):
    """``model`` rebuilt with the builder, every joint with a random armature per velocity coordinate (uniform in
    [low, high]); bodies, placements and spring-dampers as they were (a tree model without other elements)."""
    b = mb.ModelBuilder(gravity=model.gravity, name=model.name, inertia="accept")
    for body in model.bodies:
        b.add_body(body.name, body.mass, body.com, body.inertia)
    names = model.body_names
    for j in model.joints[1:]:
        v = j.v_slice
        b.add_joint(j.name, j.joint, names[j.parent], names[j.child], j.placement,
                    None if j.child_placement.is_identity() else j.child_placement,
                    stiffness=model.dof_stiffness[v], damping=model.dof_damping[v], rest=model.dof_rest[v],
                    effort=model.dof_effort[v], armature=rng.uniform(low, high, j.joint.nv))
    return b.build()


def tree_with_tool(n, seed, joint_types=None, base_motion=None):
    """``(model, q, v, a)``: a random tree of n bodies (``bench.dynamics.random_tree_builder``: every joint type, or
    ``joint_types``; child placements with probability 0.5), a frame "tool" on its last body, and a random state."""
    from multibody.bench.dynamics import random_rotation, random_tree_builder

    rng = np.random.default_rng(seed)
    b, _ = random_tree_builder(n, rng, joint_types=joint_types, base_motion=base_motion, child_placements=0.5)
    b.add_frame("tool", f"body{n}", mb.Placement(random_rotation(rng), rng.uniform(-1, 1, 3)))
    model = b.build()
    return model, model.random_configuration(rng), rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
