"""Model description: bodies, joints, builder, the Model's arrays (docs/model-arrays.md)."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError


def rod_builder():
    b = mb.ModelBuilder()
    b.add_body("a", 1.0, (0, 0, -0.5), (0.1, 0.1, 0.01))
    return b


def test_body_rejects_bad_mass_and_inertia():
    with pytest.raises(ModelError, match="body 'x'.*mass must be a finite number >= 0"):
        mb.Body("x", -1.0)
    assert mb.Body("link", 0.0).mass == 0.0           # a massless link (the model's dynamics check judges it)
    with pytest.raises(ModelError, match="body 'x'.*symmetric"):
        mb.Body("x", 1.0, inertia=[[1, 0.5, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ModelError, match="body 'x'.*negative principal moment"):
        mb.Body("x", 1.0, inertia=(1.0, -1.0, 1.0))
    with pytest.raises(ModelError, match="body 'x'.*triangle inequality"):
        mb.Body("x", 1.0, inertia=(1.0, 1.0, 3.0))
    # a thin disc sits exactly on the triangle inequality's boundary: accepted
    mb.Body("disc", 1.0, inertia=(0.25, 0.25, 0.5))
    # six components and a point mass
    body = mb.Body("x", 2.0, com=(1, 0, 0), inertia=(2, 2, 2, 0.1, 0, 0))
    assert body.inertia[0, 1] == 0.1
    np.testing.assert_array_equal(body.inertia_origin(), body.inertia + 2.0 * np.diag([0, 1, 1]))   # exact here
    assert not np.any(mb.Body("p", 1.0).inertia)


def test_builder_errors_name_the_element():
    b = rod_builder()
    with pytest.raises(ModelError, match="joint 'j'.*child body 'nope'"):
        b.add_joint("j", mb.Revolute(), "ground", "nope")
    with pytest.raises(ModelError, match="axis must be a non-zero"):
        mb.Revolute(axis=(0, 0, 0))
    with pytest.raises(ModelError, match="joint 'j'.*stiffness is only defined"):
        b.add_joint("j", mb.Spherical(), "ground", "a", stiffness=1.0)
    b.add_body("b", 1.0, inertia=(1, 1, 1))
    b.add_joint("j1", mb.Revolute(), "ground", "a")
    with pytest.raises(ModelError, match="body 'b' has no path to the ground"):
        b.build()
    with pytest.raises(ModelError, match="placement.*orthonormal"):
        mb.Placement(rotation=np.ones((3, 3)))


def test_regular_numbering_and_arrays():
    b = mb.ModelBuilder()
    for name in ("c", "b", "a"):
        b.add_body(name, 1.0, inertia=(1, 1, 1))
    # added leaf-first: the builder renumbers so that every parent precedes its children
    b.add_joint("jc", mb.Spherical(), "b", "c", placement=(np.eye(3), (0, 0, -1)))
    b.add_joint("jb", mb.Universal(), "a", "b", stiffness=(1.0, 2.0), damping=0.5)
    b.add_joint("ja", mb.Free(), "ground", "a")
    m = b.build()
    assert m.body_names == ("ground", "a", "b", "c")
    assert m.parent.tolist() == [-1, 0, 1, 2]
    assert (m.nq, m.nv) == (7 + 2 + 4, 6 + 2 + 3)
    assert m.idx_q.tolist() == [0, 0, 7, 9] and m.idx_v.tolist() == [0, 0, 6, 8]
    assert m.dof_stiffness.tolist() == [0] * 6 + [1.0, 2.0] + [0] * 3
    assert m.dof_damping.tolist() == [0] * 6 + [0.5, 0.5] + [0] * 3
    assert m.jplace_p[3].tolist() == [0, 0, -1]
    q = m.neutral()
    assert q.tolist() == [0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0]
    with pytest.raises(ValueError):
        m.mass[1] = 3.0  # arrays are read-only
    with pytest.raises(AttributeError):
        m.nq = 3
    assert m.coordinate_names()[7:9] == ["jb.angle1", "jb.angle2"]


def test_loops_become_cut_joints():
    b = mb.ModelBuilder()
    for name in ("l1", "l2", "l3"):
        b.add_body(name, 1.0, com=(0.5, 0, 0), inertia=(0.01, 0.1, 0.1))
    b.add_joint("A", mb.Revolute(), "ground", "l1")
    b.add_joint("B", mb.Revolute(), "l1", "l2", placement=(None, (1, 0, 0)))
    b.add_joint("C", mb.Revolute(), "l2", "l3", placement=(None, (1, 0, 0)))
    b.add_joint("D", mb.Revolute(), "l3", "ground", placement=(None, (1, 0, 0)), child_placement=(None, (2, 0, 0)))
    m = b.build()
    assert m.nv == 3
    assert [j.name for j in m.cut_joints] == ["D"]
    cut = m.cut_joints[0]
    assert (cut.parent, cut.child) == (3, 0) and cut.child_placement.translation.tolist() == [2, 0, 0]
    assert m.joint("D").is_cut and not m.joint("A").is_cut
    # a loop closed without saying where the joint sits on its child body is refused, naming the joint
    b3 = mb.ModelBuilder()
    for name in ("l1", "l2", "l3"):
        b3.add_body(name, 1.0, com=(0.5, 0, 0), inertia=(0.01, 0.1, 0.1))
    b3.add_joint("A", mb.Revolute(), "ground", "l1")
    b3.add_joint("B", mb.Revolute(), "l1", "l2", placement=(None, (1, 0, 0)))
    b3.add_joint("C", mb.Revolute(), "l2", "l3", placement=(None, (1, 0, 0)))
    b3.add_joint("D", mb.Revolute(), "l3", "ground", placement=(None, (1, 0, 0)))
    with pytest.raises(ModelError, match="joint 'D' closes a loop.*child_placement"):
        b3.build()


def test_tree_joint_child_placement_locates_the_joint_on_the_child():
    """A tree joint given a child placement (the joint frame in the child's own frame, seed 001 §3.3's hinge
    vector on the child) is the same mechanism as the joint at the child's origin with the body data moved:
    equal M(q), q̈, and the user's frame reported by forward_kinematics and the point functions."""
    X = mb.Placement(mb.rotation_about((1, 2, 3), 0.7), (0.3, -0.2, 0.5))     # joint frame in the rod's frame
    com_user, I_user = np.array([0.1, 0.4, -0.3]), np.diag([0.2, 0.3, 0.4])
    b1 = mb.ModelBuilder()
    b1.add_body("rod", 2.0, com=com_user, inertia=I_user)
    b1.add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", placement=(None, (0, 0, 1)), child_placement=X)
    b1.add_body("tip", 0.5, com=(0.1, 0, 0), inertia=(0.01, 0.02, 0.03))
    b1.add_joint("k", mb.Revolute(axis=(1, 0, 0)), "rod", "tip", placement=(None, (0.0, 1.0, 0.0)))
    m1 = b1.build()
    Xi = X.inverse()      # the rod's data in the joint frame
    b2 = mb.ModelBuilder()
    b2.add_body("rod", 2.0, com=Xi.act(com_user), inertia=Xi.rotation @ I_user @ Xi.rotation.T)
    b2.add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", placement=(None, (0, 0, 1)))
    b2.add_body("tip", 0.5, com=(0.1, 0, 0), inertia=(0.01, 0.02, 0.03))
    b2.add_joint("k", mb.Revolute(axis=(1, 0, 0)), "rod", "tip", placement=Xi * mb.Placement(translation=(0, 1, 0)))
    m2 = b2.build()
    q, v = np.array([0.4, -1.1]), np.array([0.3, 0.9])
    assert np.allclose(mb.crba(m1, q), mb.crba(m2, q), rtol=0, atol=1e-14)
    assert np.allclose(mb.aba(m1, q, v, np.zeros(2)), mb.aba(m2, q, v, np.zeros(2)), rtol=0, atol=1e-12)
    K1 = mb.forward_kinematics(m1, q, v, np.zeros(2))
    K2 = mb.forward_kinematics(m2, q, v, np.zeros(2))
    i = m1.body_index("rod")
    # the rod's own frame = the joint frame moved by q, composed with X⁻¹ (user frame in the joint frame)
    assert np.allclose(K1.R[i], K2.R[i] @ Xi.rotation, rtol=0, atol=1e-14)        # to round-off
    assert np.allclose(K1.p[i], K2.p[i] + K2.R[i] @ Xi.translation, rtol=0, atol=1e-14)
    P1 = mb.point_position(m1, q, "rod", com_user)
    assert np.allclose(P1, mb.point_position(m2, q, "rod", Xi.act(com_user)), rtol=0, atol=1e-14)
    assert np.allclose(mb.point_velocity(m1, q, v, "rod", com_user),
                       mb.point_velocity(m2, q, v, "rod", Xi.act(com_user)), rtol=0, atol=1e-14)
    # the origin's velocity and acceleration of the user frame are those of the point
    h = 1e-6
    P1p = mb.forward_kinematics(m1, q + h * v).p[i]
    P1m = mb.forward_kinematics(m1, q - h * v).p[i]
    assert np.allclose(K1.velocity[i, 3:], (P1p - P1m) / (2 * h), rtol=0, atol=1e-8)


def test_configuration_methods_on_the_manifold():
    b = mb.ModelBuilder()
    b.add_body("a", 1.0, inertia=(1, 1, 1))
    b.add_body("b", 1.0, inertia=(1, 1, 1))
    b.add_joint("ja", mb.Free(), "ground", "a")
    b.add_joint("jb", mb.Spherical(), "a", "b")
    m = b.build()
    rng = np.random.default_rng(3)
    q0 = m.random_configuration(rng)
    v = rng.normal(size=m.nv)
    q1 = m.integrate(q0, v, 0.7)
    assert abs(np.linalg.norm(q1[3:7]) - 1) < 1e-15 and abs(np.linalg.norm(q1[7:11]) - 1) < 1e-15
    assert np.allclose(m.difference(q0, q1), 0.7 * v, rtol=0, atol=1e-13)
    assert np.allclose(m.normalize(3.0 * q0)[7:11], q0[7:11], rtol=0, atol=1e-15)
    # q̇ is the derivative of integrate at dt = 0
    eps = 1e-7
    fd = (m.integrate(q0, v, eps) - m.integrate(q0, v, -eps)) / (2 * eps)
    assert np.allclose(m.qdot(q0, v), fd, rtol=0, atol=1e-8)
