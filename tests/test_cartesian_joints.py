"""Universal and planar joints in the Cartesian formulation (seed 001 ch. 2): the same builder Model simulated
with absolute coordinates + constraint rows agrees with the tree formulation (seed 001 ch. 3).

Reference values are the tree formulation's own results (``multibody.aba`` and the default integrator), so
every number compared here is computed, none is hard-coded.
"""
import numpy as np
import pytest

import multibody as mb
from multibody.formulations.cartesian import UniversalJoint, cartesian_from_model, model_state_from_cartesian

from models import loop_model


def _random_rotation(rng):
    return mb.rotation_about(rng.normal(size=3), rng.uniform(0.2, 2.5))


def _chain(joints, seed, gravity=(0.0, 0.0, -9.81)):
    """A serial chain ground → b0 → b1 → … with the given joint types, random inertia, placements and axes."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder(gravity=gravity, name=f"chain{seed}")
    parent = "ground"
    for k, jt in enumerate(joints):
        name = f"b{k}"
        b.add_body(name, rng.uniform(0.5, 2.0), com=rng.uniform(-0.3, 0.3, size=3),
                   inertia=rng.uniform(0.1, 0.18, size=3))
        b.add_joint(f"j{k}", jt, parent, name, placement=(_random_rotation(rng), rng.uniform(-0.5, 0.5, size=3)))
        parent = name
    model = b.build()
    q0 = model.integrate(model.neutral(), rng.normal(scale=0.5, size=model.nv), 1.0)
    v0 = rng.normal(scale=1.0, size=model.nv)
    return model, q0, v0


def _joint_sets():
    """(label, joint list): universal and planar alone, with skewed axes, and mixed with revolute/spherical."""
    return [
        ("universal", [mb.Universal((1, 0, 0), (0, 1, 0))]),
        ("universal-skew", [mb.Universal((1, 0.2, 0), (0.3, 1, 0.4))]),
        ("planar", [mb.Planar()]),
        ("universal-universal", [mb.Universal((0, 0, 1), (1, 0, 0)), mb.Universal((1, 1, 0), (0, 0, 1))]),
        ("planar-revolute-universal", [mb.Planar(), mb.Revolute((0, 1, 0)), mb.Universal((1, 0, 0), (0, 1, 0))]),
        ("spherical-universal-planar", [mb.Spherical(), mb.Universal((0, 1, 0), (0, 0, 1)), mb.Planar()]),
        ("revolute-planar-spherical", [mb.Revolute((1, 0, 0)), mb.Planar(), mb.Spherical()]),
    ]


SETS = _joint_sets()


def _cartesian_accelerations(model, q, v, a):
    """The Cartesian Ẍ = [r̈_c (ground); ω̇ (body axes)] of every body from the tree's q̈ = a."""
    K = mb.forward_kinematics(model, q, v, a)
    com = np.asarray(model.com)
    out = []
    for i in range(1, model.nbodies + 1):
        R = K.R[i]
        c = R @ com[i]
        w, dw = K.velocity[i, :3], K.acceleration[i, :3]
        rdd = K.acceleration[i, 3:] + np.cross(dw, c) + np.cross(w, np.cross(w, c))
        out.append(np.concatenate([rdd, R.T @ dw]))
    return np.concatenate(out)


def _same_q(model, q1, q2):
    """Max difference of two coordinate vectors, quaternion signs aligned."""
    d = np.abs(q1 - q2)
    for j in model.joints[1:]:
        if j.joint.nq == 4:
            sl = j.q_slice
            d[sl] = np.minimum(np.abs(q1[sl] - q2[sl]), np.abs(q1[sl] + q2[sl]))
    return float(d.max())


@pytest.mark.parametrize("label,joints", SETS, ids=[s[0] for s in SETS])
def test_initial_accelerations_equal_aba(label, joints):
    """Cartesian accelerations at t = 0 (KKT solve, seed 001 eq. 2.49) equal ABA's q̈ mapped to the bodies;
    the conversion back to (q, v) is exact; the constraint rows are satisfied at the model state."""
    for seed in range(3):
        model, q0, v0 = _chain(joints, seed)
        s, emb = cartesian_from_model(model, q0, v0, planar=False)
        nrows = {mb.Universal: 4, mb.Planar: 3, mb.Revolute: 5, mb.Spherical: 3}
        assert s.nc == sum(nrows[type(j)] for j in joints)
        Q, b, phi = s._assemble(s.x0, s.v0)
        assert np.abs(phi).max() < 1e-13
        assert np.abs(Q @ s.v0).max() < 1e-12
        xdd, _ = s.accelerations(0.0, s.x0, s.v0)
        ref = _cartesian_accelerations(model, q0, v0, mb.aba(model, q0, v0, np.zeros(model.nv)))
        assert np.abs(xdd - ref).max() < 1e-9 * max(1.0, np.abs(ref).max())
        q, v = model_state_from_cartesian(model, emb, s.x0, s.v0)
        assert _same_q(model, q, q0) < 1e-12
        assert np.abs(v - v0).max() < 1e-11


@pytest.mark.parametrize("label,joints", SETS, ids=[s[0] for s in SETS])
def test_cartesian_and_tree_simulations_agree(label, joints):
    """simulate(..., formulation="cartesian") and the tree formulation give the same q(t) over 1 s."""
    model, q0, v0 = _chain(joints, 7)
    t_eval = np.linspace(0.0, 1.0, 11)
    r_tree = mb.simulate(model, q0, v0, 1.0, rtol=1e-11, atol=1e-11, t_eval=t_eval)
    r_cart = mb.simulate(model, q0, v0, 1.0, formulation="cartesian", rtol=1e-10, t_eval=t_eval)
    dq = max(_same_q(model, r_cart.q[k], r_tree.q[k]) for k in range(len(t_eval)))
    assert dq < 1e-7, dq
    assert np.abs(r_cart.v - r_tree.v).max() < 1e-6
    assert r_cart.residuals["position"].max() < 1e-10
    assert r_cart.residuals["velocity"].max() < 1e-10


def _fd_check(joint, seed):
    """ḟ = Q V and f̈ = Q Ẍ − b along a smooth motion of two free bodies (finite differences)."""
    s = mb.formulations.cartesian.CartesianSystem(dim=3)
    rng = np.random.default_rng(seed)
    for name in ("a", "b"):
        s.add_body(name, 1.0, np.diag([0.1, 0.2, 0.3]), position=(rng.normal(size=3), _random_rotation(rng)))
    s.add_joint(joint)
    s.finalize()
    V = rng.normal(size=12)
    A = rng.normal(size=12)
    X0 = s.x0

    def state(t):   # x(t) = x0 ⊕ (V t + A t²/2); velocity V + A t in the same coordinates (exact for this path)
        x = s.retract(X0, V * t + 0.5 * A * t * t)
        return x, V + A * t

    Q, b, phi = s._assemble(*state(0.0))
    f = lambda t: s._assemble(*state(t))[2]
    return Q, b, phi, f, V, A


def test_universal_rows_are_derivatives_of_the_residuals():
    """UniversalJoint rows: Q V and Q Ẍ − b equal the first and second time derivatives of the position
    residual (central differences, h = 1e-5 / 1e-4), off the constraint manifold too (the row about the moving
    common normal, with the ṅᵀω_rel term added to eq. 2.29, is exact everywhere)."""
    uj = UniversalJoint("u", "a", "b", (0.1, 0.2, 0.0), (-0.1, 0.0, 0.3), (1, 0, 0), (0, 1, 0))
    Q, b, phi, f, V, A = _fd_check(uj, 1)
    assert abs(phi[3]) > 1e-2                                     # off the manifold
    # rows 0–2 (point–plane) and 3 (angle of the two axes): ḟ = Q V, f̈ = Q Ẍ − b
    h = 1e-5
    assert np.abs((f(h) - f(-h)) / (2 * h) - Q @ V).max() < 1e-8
    h = 1e-4
    assert np.abs((f(h) - 2 * phi + f(-h)) / h ** 2 - (Q @ A - b)).max() < 1e-5


def test_cut_universal_and_planar_joints_in_the_cartesian_formulation():
    """A loop closed by a cut Universal / Planar joint: the Cartesian twin and the tree + cut-joint
    formulation give the same q(t)."""
    for cut in (mb.Universal((1, 0, 0), (0, 1, 0)), mb.Planar()):
        model = loop_model(cut)
        from multibody.formulations.constrained import ConstrainedTree
        ct = ConstrainedTree(model)
        rng = np.random.default_rng(3)
        q0 = ct.project_position(model.integrate(model.neutral(), rng.normal(scale=0.2, size=model.nv), 1.0))
        v0 = ct.project_velocity(q0, rng.normal(size=model.nv))
        t_eval = np.linspace(0.0, 0.5, 6)
        r1 = mb.simulate(model, q0, v0, 0.5, formulation="constrained", rtol=1e-11, atol=1e-11, t_eval=t_eval)
        r2 = mb.simulate(model, q0, v0, 0.5, formulation="cartesian", rtol=1e-10, t_eval=t_eval)
        dq = max(_same_q(model, r1.q[k], r2.q[k]) for k in range(len(t_eval)))
        assert dq < 1e-7, (type(cut).__name__, dq)
