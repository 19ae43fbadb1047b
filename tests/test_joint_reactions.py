"""Joint reactions in the joint frames (``mb.joint_reactions``, ``Result.reactions``): one convention in the tree,
constrained, Cartesian and stabilized formulations (``multibody.rows.reactions``).

Checks: the weights a hanging double pendulum's joints carry; the slider-crank's reactions from tree coordinates
with multipliers against the Lagrange multipliers of the Cartesian formulation (seed 001 eq. 2.26), planar and
spatial, at the same states; Newton's and Euler's equations of every body cut free (seed 001 §3.5) with the
reactions of all its joints; passive joints transmit nothing along their motion subspace.

Tolerances: every comparison is between two evaluations of the same state in double precision, on forces of
order 10–100 N from systems whose conditioning is moderate; the rounding of either side is below 1e-12 of the
largest force, so 1e-9 (the issue's bound) keeps a margin of more than 100.
"""
import numpy as np
import pytest

import multibody as mb
from multibody.bench.dynamics import random_tree
from multibody.formulations.constrained import ConstrainedTree
from multibody.systems import iftomm, slider_crank


def _double_pendulum():
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81), name="double pendulum")
    b.add_body("upper", 2.0, com=(0.5, 0, 0), inertia=[0.01, 0.2, 0.2])
    b.add_body("lower", 3.0, com=(0.4, 0, 0), inertia=[0.01, 0.1, 0.1])
    down = mb.rotation_about((0, 1, 0), np.pi / 2)          # the body x axes point down at q = 0
    b.add_joint("shoulder", mb.Revolute(axis=(0, 1, 0)), "ground", "upper", placement=(down, (0.0, 0.0, 1.0)))
    b.add_joint("elbow", mb.Revolute(axis=(0, 1, 0)), "upper", "lower", placement=(np.eye(3), (1.0, 0, 0)))
    return b.build()


def balance_error(model, q, v, a, reac):
    """max over bodies of |Newton–Euler residual|: m(c̈ − g) and J ω̇ + ω × J ω (about the centre of mass) against
    the sum of the reactions of every joint on the body (its child joints' with the opposite sign), the
    reactions read in their joint frames (tree joints: the child's kernel frame; cut joints: child_placement)."""
    K = mb.forward_kinematics(model, q, v, a, frames="kernel")
    g = np.asarray(model.gravity, float)
    n = model.nbodies + 1
    c = np.array([K.p[k] + K.R[k] @ model.com[k] for k in range(n)])
    net = np.zeros((n, 6))
    for j in list(model.joints[1:]) + list(model.cut_joints):
        b = j.child
        if j.is_cut:
            Pb = model.joint_frames(j)[1]
            R, o = K.R[b] @ Pb.rotation, K.p[b] + K.R[b] @ Pb.translation
        else:
            R, o = K.R[b], K.p[b]
        mom, f = R @ reac[j.name][:3], R @ reac[j.name][3:]
        for body, sign in ((b, 1.0), (j.parent, -1.0)):
            if body > 0:
                net[body, 3:] += sign * f
                net[body, :3] += sign * (mom + np.cross(o - c[body], f))
    worst = 0.0
    for k in range(1, n):
        R, w, al = K.R[k], K.velocity[k, :3], K.acceleration[k, :3]
        r = R @ model.com[k]
        acc_c = K.acceleration[k, 3:] + np.cross(al, r) + np.cross(w, np.cross(w, r))
        J = R @ model.inertia_com[k] @ R.T
        lhs = np.r_[J @ al + np.cross(w, J @ w), model.mass[k] * (acc_c - g)]
        worst = max(worst, float(np.abs(lhs - net[k]).max()))
    return worst


def test_double_pendulum_at_rest_carries_the_weights():
    model = _double_pendulum()
    res = mb.simulate(model, None, None, 0.5, n_out=6)          # hanging at rest: it stays at rest
    up = 9.81 * np.array([0.0, 0.0, 1.0])
    for name, carried in (("shoulder", 5.0), ("elbow", 3.0)):
        W = res.reactions[name]
        assert W.shape == (6, 6)
        # the joint frames point down (x) with y the hinge axis: the upward force is −x in the joint frame
        np.testing.assert_allclose(W[:, 3], -carried * 9.81, rtol=0, atol=1e-12)
        np.testing.assert_allclose(W[:, [0, 1, 2, 4, 5]], 0.0, rtol=0, atol=1e-12)
    # held still at a tilt (v = 0, q̈ = 0): the force is the weight carried, the moment its moment about the joint
    q = np.array([0.7, -0.4])
    z = np.zeros(2)
    r = mb.joint_reactions(model, q, z, z)
    K = mb.forward_kinematics(model, q, frames="kernel")
    for name, bodies, i in (("shoulder", (1, 2), 1), ("elbow", (2,), 2)):
        F = sum(model.mass[k] * up for k in bodies)
        M = sum(np.cross(K.p[k] + K.R[k] @ model.com[k] - K.p[i], model.mass[k] * up) for k in bodies)
        np.testing.assert_allclose(K.R[i] @ r[name][3:], F, rtol=0, atol=1e-12)
        np.testing.assert_allclose(K.R[i] @ r[name][:3], M, rtol=0, atol=1e-12)
    # and the batch form along samples
    rb = mb.joint_reactions(model, np.array([q, q]), np.zeros((2, 2)), np.zeros((2, 2)))
    np.testing.assert_allclose(rb["elbow"], [r["elbow"], r["elbow"]], rtol=0, atol=0)


@pytest.mark.parametrize("planar", [None, False])
def test_slider_crank_reactions_equal_the_cartesian_multipliers(planar):
    """seed 001 eq. 2.26: Q_jᵀλ of the Cartesian formulation, at the same states as the tree + multipliers run."""
    model, q0, v0 = slider_crank.model()
    run = mb.simulate(model, q0, v0, 0.25, formulation="constrained", n_out=6, rtol=1e-11, atol=1e-12)
    names = ["O", "A", "guide", "B"]
    scale = max(np.abs(run.reactions[n]).max() for n in names)
    assert scale > 10.0                                        # forces of tens of newtons: a real comparison
    worst = 0.0
    for k in range(len(run.t)):
        cart = mb.simulate(model, run.q[k], run.v[k], 1e-9, formulation="cartesian", planar=planar, n_out=2,
                           rtol=1e-13, atol=1e-13)
        assert cart.info["cartesian"]["planar"] == (planar is None)
        for n in names:
            worst = max(worst, float(np.abs(cart.reactions[n][0] - run.reactions[n][k]).max()))
    assert worst < 1e-9


@pytest.mark.parametrize("make", [slider_crank.model, lambda: iftomm.four_bar_model(2)])
def test_every_body_balances_with_its_joint_reactions(make):
    model, q0, v0 = make()
    run = mb.simulate(model, q0, v0, 0.3, formulation="constrained", n_out=5)
    ct = ConstrainedTree(model)
    for k in range(len(run.t)):
        a, _ = ct.accelerations(run.t[k], run.q[k], run.v[k])
        reac = {n: run.reactions[n][k] for n in run.reactions if run.reactions[n].shape[1] == 6}
        assert set(reac) == {j.name for j in list(model.joints[1:]) + list(model.cut_joints)}
        assert balance_error(model, run.q[k], run.v[k], a, reac) < 1e-9
        # a hinge transmits no moment about its axis (no drive): z in these planar mechanisms
        for j in model.cut_joints:
            assert abs(reac[j.name][2]) < 1e-9


def test_tree_result_reactions_along_the_run():
    """The tree formulation's reactions (computed when read) equal ``joint_reactions`` at q̈ = aba(q, q̇, 0) and
    balance every body; passive joints transmit nothing along their motion subspace (moment along a hinge's
    axis, force along a slider's axis, any moment through a ball joint)."""
    model = random_tree(6, 11, joint_types=["Revolute", "Prismatic", "Spherical"])
    q0 = model.random_configuration(np.random.default_rng(3))
    v0 = np.random.default_rng(4).normal(size=model.nv)
    res = mb.simulate(model, q0, v0, 0.2, n_out=4, rtol=1e-10, atol=1e-10)
    assert res._reactions is None                                # nothing computed until read
    scale = max(np.abs(r).max() for r in res.reactions.values())
    assert scale > 1.0
    for k in range(len(res.t)):
        a = mb.aba(model, res.q[k], res.v[k], np.zeros(model.nv))
        direct = mb.joint_reactions(model, res.q[k], res.v[k], a)
        for j in model.joints[1:]:
            W = res.reactions[j.name][k]
            np.testing.assert_allclose(W, direct[j.name], rtol=0, atol=1e-12)
            kind = type(j.joint).__name__
            if kind == "Spherical":
                assert np.abs(W[:3]).max() < 1e-9 * scale
            else:
                axis = np.asarray(j.joint.axes())[0]
                part = W[:3] if kind == "Revolute" else W[3:]
                assert abs(part @ axis) < 1e-9 * scale
        assert balance_error(model, res.q[k], res.v[k], a, direct) < 1e-9 * scale


def test_stabilized_hoop_planar_joint_transmits_nothing_in_the_plane():
    """The hoop rolls on its profile by the contact alone: with the contact's force on the body as an external
    force, its planar joint transmits nothing along its three free directions (force in the plane, moment about
    the normal); the weight and the contact balance through the body's motion."""
    from multibody.systems.hoop_on_profile import hoop_model, initial_state

    model = hoop_model()
    q0, v0 = initial_state(model, -0.9, 0.0)
    res = mb.simulate(model, q0, v0, 0.05, formulation="stabilized", lam=1e3, method="RK2", h=1e-5, n_out=5)
    joint = model.joints[1]
    assert type(joint.joint).__name__ == "Planar"
    W = res.reactions[joint.name]
    assert W.shape == (5, 6)
    weight = float(np.sum(model.mass)) * float(np.linalg.norm(model.gravity))
    np.testing.assert_allclose(W[:, [2, 3, 4]], 0.0, rtol=0, atol=1e-9 * weight)


def test_prescribed_run_reactions_carry_the_drive():
    """With joint 2 of the seed 001 triple pendulum driven (§3.3.1), its reaction's moment about the hinge axis is
    the drive force of ``result.drive_forces``; the free hinges transmit no moment about theirs."""
    from multibody.systems.pendulums import triple_pendulum_seed001

    model = triple_pendulum_seed001()

    def drive(t):
        return 0.3 * np.sin(2.0 * t), 0.6 * np.cos(2.0 * t), -1.2 * np.sin(2.0 * t)

    res = mb.simulate(model, [0.2, 0.0, 0.1], None, 1.0, n_out=6, rtol=1e-10, atol=1e-10,
                      prescribed={"joint2.angle": drive})
    tau = res.drive_forces["joint2.angle"]
    assert np.abs(tau).max() > 0.1
    np.testing.assert_allclose(res.reactions["joint2"][:, 2], tau, rtol=0, atol=1e-9 * np.abs(tau).max())
    for name in ("joint1", "joint3"):
        assert np.abs(res.reactions[name][:, 2]).max() < 1e-9 * np.abs(tau).max()
