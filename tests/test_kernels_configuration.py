"""Per-joint configuration spaces: transforms, motion subspaces, biases, and motion of q on the manifold.

Conventions of docs/model-arrays.md: the child frame is the joint frame moved by the joint coordinates;
v_J = S v_j is the child's velocity [ω; v] relative to the joint frame in child coordinates; quaternions are
(w, x, y, z) and their velocities are angular velocities in the child frame.
"""
import numpy as np
import pytest

import multibody as mb
from multibody.bench.dynamics import random_tree
from multibody.errors import ModelError
from multibody.kernels import configuration as cfg

rng0 = np.random.default_rng(5)
_a1 = rng0.normal(size=3)
_a2 = np.cross(_a1, rng0.normal(size=3))
JOINTS = [mb.Revolute(_a1), mb.Prismatic(_a1), mb.Cylindrical(_a1), mb.Universal(_a1, _a2), mb.Spherical(),
          mb.Planar(), mb.Free()]
IDS = [type(j).__name__ for j in JOINTS]


def _one_joint_model(joint):
    b = mb.ModelBuilder()
    b.add_body("child", mass=1.0, inertia=np.eye(3))
    b.add_joint("j", joint, parent="ground", child="child")
    return b.build()


def _random_q(model, rng):
    return model.random_configuration(rng)


def _derivative(f, h=1e-3):
    d1 = (f(h) - f(-h)) / (2 * h)
    d2 = (f(2 * h) - f(-2 * h)) / (4 * h)
    return (4 * d1 - d2) / 3


@pytest.mark.parametrize("joint", JOINTS, ids=IDS)
def test_motion_subspace_and_bias_are_derivatives_of_the_transform(joint):
    """ω̃ = Rᵀ Ṙ, v = Rᵀ ṗ (child coordinates) equal S v_j; d/dt (S(q) v_j) = c_J for constant v_j."""
    model = _one_joint_model(joint)
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = _random_q(model, rng)
        v = rng.uniform(-1, 1, model.nv)
        R, p = cfg.joint_transform(joint, q)
        dR = _derivative(lambda t: cfg.joint_transform(joint, model.integrate(q, v, t))[0])
        dp = _derivative(lambda t: cfg.joint_transform(joint, model.integrate(q, v, t))[1])
        W = R.T @ dR
        vJ = cfg.motion_subspace(joint, q) @ v
        np.testing.assert_allclose(vJ[:3], [W[2, 1], W[0, 2], W[1, 0]], rtol=0, atol=1e-9)
        np.testing.assert_allclose(vJ[3:], R.T @ dp, rtol=0, atol=1e-9)
        cJ = _derivative(lambda t: cfg.motion_subspace(joint, model.integrate(q, v, t)) @ v)
        np.testing.assert_allclose(cfg.joint_bias(joint, q, v), cJ, rtol=0, atol=1e-9)


@pytest.mark.parametrize("joint", JOINTS, ids=IDS)
def test_integrate_difference_qdot(joint):
    model = _one_joint_model(joint)
    rng = np.random.default_rng(2)
    for _ in range(10):
        q = _random_q(model, rng)
        v = rng.uniform(-2, 2, model.nv)
        dt = rng.uniform(0.01, 1.0)
        q1 = model.integrate(q, v, dt)
        if not joint.linear_coordinates:
            k = 0 if isinstance(joint, mb.Spherical) else 3
            assert np.linalg.norm(q1[k:k + 4]) == pytest.approx(1.0, abs=1e-15)
        np.testing.assert_allclose(cfg.difference(model, q, q1), v * dt, rtol=0, atol=1e-12)
        np.testing.assert_allclose(model.integrate(q, cfg.difference(model, q, q1)), q1, rtol=0, atol=1e-12)
        # q̇ is the derivative of q ⊕ v t at t = 0
        np.testing.assert_allclose(model.qdot(q, v), _derivative(lambda t: model.integrate(q, v, t)), rtol=0, atol=1e-9)
        # integrating a constant body velocity is a one-parameter subgroup: (q ⊕ v s) ⊕ v t = q ⊕ v (s + t)
        np.testing.assert_allclose(model.integrate(model.integrate(q, v, 0.3), v, dt), model.integrate(q, v, 0.3 + dt),
                                   rtol=0, atol=1e-12)


def test_quaternion_integration_keeps_unit_norm_over_many_steps():
    model = _one_joint_model(mb.Free())
    rng = np.random.default_rng(3)
    q = model.neutral()
    for _ in range(10000):
        q = model.integrate(q, rng.normal(size=6) * 10, 1e-2)
    assert abs(np.linalg.norm(q[3:]) - 1.0) <= 1e-15
    # a half turn about z: quaternion (0, 0, 0, 1), and the position follows the screw motion
    q = cfg.integrate(model, model.neutral(), [0, 0, np.pi, 1.0, 0, 0], 1.0)
    np.testing.assert_allclose(q[3:], [0, 0, 0, 1], rtol=0, atol=1e-15)
    # body velocity (1, 0, 0) while turning by π about z traces a half circle of radius 1/π: ends at (0, 2/π, 0)
    np.testing.assert_allclose(q[:3], [0, 2 / np.pi, 0], rtol=0, atol=1e-15)


def test_model_level_functions():
    rng = np.random.default_rng(4)
    model = random_tree(12, rng)
    np.testing.assert_array_equal(cfg.neutral(model), model.neutral())
    q = _random_q(model, rng)
    qs = q.copy()
    for i in range(1, model.nbodies + 1):
        if model.jtype[i] in (5, 7):
            k = model.idx_q[i] + (0 if model.jtype[i] == 5 else 3)
            qs[k:k + 4] *= 3.0
    np.testing.assert_allclose(cfg.normalize(model, qs), q, rtol=0, atol=1e-15)
    v = rng.uniform(-1, 1, model.nv)
    np.testing.assert_allclose(cfg.difference(model, q, model.integrate(q, v, 0.5)), 0.5 * v, rtol=0, atol=1e-12)
    np.testing.assert_allclose(model.integrate(q, np.zeros(model.nv)), q, rtol=0, atol=1e-15)
    with pytest.raises(ModelError, match="v must have shape"):
        model.integrate(q, np.zeros(model.nv + 1), 0.1)
    with pytest.raises(ModelError, match="expected 4 coordinates"):
        cfg.joint_transform(mb.Spherical(), [1.0, 0.0, 0.0])


def test_joint_transforms_follow_the_table():
    """Spot values of docs/model-arrays.md: Universal R = rot(a1, θ1) rot(a2, θ2); Planar p = (x, y, 0),
    R = rot(z, θ); Free (p, quaternion)."""
    from multibody.model.rotations import rotation_about
    R, p = cfg.joint_transform(mb.Universal((1, 0, 0), (0, 1, 0)), [0.3, -0.7])
    np.testing.assert_allclose(R, rotation_about((1, 0, 0), 0.3) @ rotation_about((0, 1, 0), -0.7), rtol=0, atol=1e-15)
    R, p = cfg.joint_transform(mb.Planar(), [1.0, 2.0, 0.5])
    np.testing.assert_allclose(R, rotation_about((0, 0, 1), 0.5), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(p, [1.0, 2.0, 0.0])
    c, s = np.cos(0.4), np.sin(0.4)
    R, p = cfg.joint_transform(mb.Free(), [1, 2, 3, c, 0, s, 0])
    np.testing.assert_allclose(R, rotation_about((0, 1, 0), 0.8), rtol=0, atol=1e-15)
    np.testing.assert_array_equal(p, [1, 2, 3])
    R, p = cfg.joint_transform(mb.Cylindrical((0, 0, 1)), [np.pi / 2, 2.0])
    np.testing.assert_allclose(R @ [1, 0, 0], [0, 1, 0], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(p, [0, 0, 2.0])
