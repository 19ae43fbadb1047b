"""Joint wrenches (bearing loads) of ``mb.joint_wrenches`` against an independent Newton–Euler balance of each
subtree (seed 001 §3.5: the separate-bodies method, every body cut free), on random trees of every joint type."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.bench.dynamics import random_tree
from multibody.errors import ModelError
from multibody.systems.pendulums import simple_pendulum


def subtree_balance(model, q, v, a):
    """Row i − 1: Σ over the bodies k carried by joint i of [N_k + (c_k − o_i) × F_k; F_k] with F_k = m_k (c̈_k − g)
    and N_k = J_k ω̇_k + ω_k × J_k ω_k about the centre of mass (Newton and Euler for each body), from the
    kernel-frame kinematics alone; o_i the origin of body i's kernel frame (its joint's origin)."""
    K = mb.forward_kinematics(model, q, v, a, frames="kernel")
    n = model.nbodies + 1
    g = np.asarray(model.gravity, dtype=float)
    parent = np.asarray(model.parent)
    out = np.zeros((n - 1, 6))
    wrench = np.zeros((n, 6))   # each body's own [moment about its centre of mass; force], with its centre c
    c = np.zeros((n, 3))
    for k in range(1, n):
        R, w, al = K.R[k], K.velocity[k, :3], K.acceleration[k, :3]
        r = R @ model.com[k]
        c[k] = K.p[k] + r
        acc_c = K.acceleration[k, 3:] + np.cross(al, r) + np.cross(w, np.cross(w, r))
        J = R @ model.inertia_com[k] @ R.T
        wrench[k, 3:] = model.mass[k] * (acc_c - g)
        wrench[k, :3] = J @ al + np.cross(w, J @ w)
    for i in range(1, n):
        for k in range(1, n):
            j = k
            while j > 0 and j != i:
                j = parent[j]
            if j == i:           # body k is carried by joint i
                out[i - 1, :3] += wrench[k, :3] + np.cross(c[k] - K.p[i], wrench[k, 3:])
                out[i - 1, 3:] += wrench[k, 3:]
    return out


@settings(max_examples=25, deadline=None, derandomize=True)
@given(st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_random_trees_match_the_subtree_balance(n, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng)
    q = model.random_configuration(rng)
    v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    W = mb.joint_wrenches(model, q, v, a)
    ref = subtree_balance(model, q, v, a)
    scale = max(1.0, np.abs(ref).max())
    # two O(N) sums of the same terms in different orders: round-off of a few hundred ulp of the largest term
    np.testing.assert_allclose(W, ref, rtol=0, atol=1e-12 * scale)


def test_projection_on_the_motion_subspace_is_tau():
    rng = np.random.default_rng(3)
    model = random_tree(6, rng)
    q = model.random_configuration(rng)
    v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    W = mb.joint_wrenches(model, q, v, a)
    tau = mb.rnea(model, q, v, a)
    assert W.shape == (model.nbodies, 6)
    K = mb.forward_kinematics(model, q, frames="kernel")
    checked = 0
    # a revolute joint about the ground-frame axis s through its origin: τ = s · the moment about the origin
    for i, joint in enumerate(model.joints[1:], start=1):
        if isinstance(joint.joint, mb.Revolute):
            s = K.R[i] @ np.asarray(joint.joint.axes()[0], dtype=float)
            assert abs(s @ W[i - 1, :3] - tau[joint.v_slice][0]) < 1e-12 * max(1.0, np.abs(W).max())
            checked += 1
    assert checked > 0


def test_hanging_pendulum_carries_its_weight():
    """A pendulum hanging at rest: the hinge carries the weight m g upwards and no moment (statics)."""
    model = simple_pendulum(length=0.7, mass=2.5)
    z = np.zeros(model.nv)
    W = mb.joint_wrenches(model, model.neutral(), z, z)
    g = np.asarray(model.gravity, dtype=float)
    np.testing.assert_allclose(W[0, 3:], -2.5 * g, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(W[0, :3], 0.0, rtol=0, atol=1e-15)


def test_bad_input_names_the_argument():
    model = simple_pendulum()
    with pytest.raises(ModelError, match="a"):
        mb.joint_wrenches(model, model.neutral(), np.zeros(model.nv), np.zeros(3))
