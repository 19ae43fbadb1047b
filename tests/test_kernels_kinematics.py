"""Forward kinematics and points: velocities and accelerations are the time derivatives of the placements.

Finite differences along the motion q(t) = q ⊕ (v t + ½ q̈ t²) check the ground-frame motion subspaces S and
biases c = Ṡ q̇ of every joint type (docs/model-arrays.md conventions: R child -> ground, p the body origin).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.algorithms.dynamics import (center_of_mass, forward_kinematics, point_jacobian, point_position,
                                  point_velocity)
from multibody.bench.dynamics import random_tree
from multibody.errors import ModelError

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
trees = st.tuples(st.integers(1, 30), st.integers(0, 2**32 - 1))


def _skew_vector(W):
    return np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2


def _derivative(f, h):
    """Central difference of f at 0, Richardson-extrapolated (error O(h⁴))."""
    d1 = (f(h) - f(-h)) / (2 * h)
    d2 = (f(2 * h) - f(-2 * h)) / (4 * h)
    return (4 * d1 - d2) / 3


@SETTINGS
@given(trees)
def test_velocities_and_accelerations_are_derivatives(args):
    n, seed = args
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng)
    q = model.random_configuration(rng)
    v = rng.uniform(-1, 1, model.nv)
    a = rng.uniform(-1, 1, model.nv)
    kin = forward_kinematics(model, q, v, a)
    R = kin.R
    for i in range(model.nbodies + 1):
        np.testing.assert_allclose(R[i].T @ R[i], np.eye(3), rtol=0, atol=1e-13)
        assert np.linalg.det(R[i]) == pytest.approx(1.0, abs=1e-13)

    def q_at(t):
        return model.integrate(q, v * t + 0.5 * a * t * t, 1.0)

    h = 1e-3
    dR = _derivative(lambda t: forward_kinematics(model, q_at(t)).R, h)
    dp = _derivative(lambda t: forward_kinematics(model, q_at(t)).p, h)
    scale = max(1.0, np.abs(kin.velocity).max())
    for i in range(model.nbodies + 1):
        omega = _skew_vector(dR[i] @ R[i].T)
        np.testing.assert_allclose(kin.velocity[i, :3], omega, rtol=0, atol=1e-8 * scale)
        np.testing.assert_allclose(kin.velocity[i, 3:], dp[i], rtol=0, atol=1e-8 * scale)
    dvel = _derivative(lambda t: forward_kinematics(model, q_at(t), v + a * t).velocity, h)
    scale = max(1.0, np.abs(kin.acceleration).max())
    np.testing.assert_allclose(kin.acceleration, dvel, rtol=0, atol=1e-7 * scale)
    np.testing.assert_array_equal(kin.velocity[0], 0.0)


@SETTINGS
@given(trees)
def test_point_jacobian_velocity_position(args):
    n, seed = args
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng)
    q = model.random_configuration(rng)
    v = rng.uniform(-1, 1, model.nv)
    body = int(rng.integers(0, model.nbodies + 1))
    r = rng.uniform(-1, 1, 3)
    kin = forward_kinematics(model, q, v)
    x = point_position(model, q, body, r)
    np.testing.assert_allclose(x, kin.R[body] @ r + kin.p[body], rtol=0, atol=1e-14)
    J = point_jacobian(model, q, body, r)
    xd = point_velocity(model, q, v, body, r)
    np.testing.assert_allclose(J @ v, xd, rtol=0, atol=1e-13)
    # rigid-body velocity field: ṗ + ω × (x − p)
    np.testing.assert_allclose(xd, kin.velocity[body, 3:] + np.cross(kin.velocity[body, :3], x - kin.p[body]),
                               rtol=0, atol=1e-12)
    dx = _derivative(lambda t: point_position(model, model.integrate(q, v, t), body, r), 1e-3)
    np.testing.assert_allclose(xd, dx, rtol=0, atol=1e-8 * max(1.0, np.abs(xd).max()))
    # only the coordinates on the path from the body to the ground move the point
    on_path = np.zeros(model.nv, bool)
    i = body
    while i > 0:
        on_path[model.idx_v[i]:model.idx_v[i] + model.nv_j[i]] = True
        i = model.parent[i]
    assert np.all(J[:, ~on_path] == 0.0)


def test_centre_of_mass_and_momentum():
    rng = np.random.default_rng(11)
    model = random_tree(9, rng)
    q = model.random_configuration(rng)
    v = rng.uniform(-1, 1, model.nv)
    mass, com, momentum = center_of_mass(model, q, v)
    assert mass == pytest.approx(model.mass.sum(), rel=1e-15)
    xs = np.array([point_position(model, q, i, model.com[i]) for i in range(1, model.nbodies + 1)])
    vs = np.array([point_velocity(model, q, v, i, model.com[i]) for i in range(1, model.nbodies + 1)])
    np.testing.assert_allclose(com, model.mass[1:] @ xs / mass, rtol=0, atol=1e-13)
    np.testing.assert_allclose(momentum, model.mass[1:] @ vs, rtol=0, atol=1e-12)


def test_placements_follow_the_conventions():
    """A hinge about z placed at (1, 0, 0) and turned by 90° carries a point (1, 0, 0) of the child to
    (1, 1, 0); a slider along the rotated x axis moves it further along ground y."""
    b = mb.ModelBuilder()
    b.add_body("a", mass=1.0, inertia=np.eye(3))
    b.add_body("b", mass=1.0, inertia=np.eye(3))
    b.add_joint("hinge", mb.Revolute(axis=(0, 0, 1)), parent="ground", child="a",
                placement=mb.Placement(np.eye(3), (1.0, 0.0, 0.0)))
    b.add_joint("slider", mb.Prismatic(axis=(1, 0, 0)), parent="a", child="b")
    model = b.build()
    q = np.array([np.pi / 2, 0.5])
    np.testing.assert_allclose(point_position(model, q, "a", (1, 0, 0)), [1, 1, 0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(point_position(model, q, "b", (1, 0, 0)), [1, 1.5, 0], rtol=0, atol=1e-15)
    # ω = θ̇ e_z; the slider point moves with the hinge: ω × (0, 1.5, 0) + ḋ e_y
    np.testing.assert_allclose(point_velocity(model, q, [2.0, 3.0], "b", (1, 0, 0)), [-3.0, 3.0, 0], rtol=0, atol=1e-14)
    with pytest.raises(ModelError, match="no body 'c'"):
        point_position(model, q, "c")
    with pytest.raises(ModelError, match="out of range"):
        point_position(model, q, 3)
    with pytest.raises(ModelError, match="need the velocities"):
        forward_kinematics(model, q, None, q)
