"""The analytical derivatives of the dynamics (``multibody.algorithms.derivatives``) against complex-step derivatives
through the compiled kernels, and identities: M⁻¹ M = E, C q̇ = the velocity terms of RNEA, Ṁ − 2C skew, the
batched twins, ``linearize``'s two paths.

The references are exact to rounding: a complex step h = 1e-30 through ``rnea_kernel`` / ``aba_kernel`` /
``crba_kernel`` (``analysis/derivatives.directional_derivatives``) along the tangent directions of q
(q + i h Q(q) δ, Q = ∂q̇/∂v; the kernels normalize quaternions, which is second order along a tangent
direction), no difference quotient. Both sides are sums of O(N·depth) products of numbers of order one (random
trees: masses in [0.2, 3], lengths ≤ 1, |g| ≈ 5–15, states of order one), so each carries a rounding error of a
few hundred ulps of the largest entry at most. The tolerance, 1e-12 relative to the largest entry (or to 1 when
all are smaller), is the one issue 24 asks for; the largest difference seen over many examples is 3e-14. The ABA
derivatives, −M⁻¹ ∂τ/∂x, multiply that rounding by the condition of M: they are compared at
max(1e-12, 100 eps cond(M)) (cond(M) of these trees: median 180, 1 % above 8000).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.analysis.derivatives import directional_derivatives
from multibody.bench.dynamics import random_tree, revolute_chain
from multibody.model.data import Data
from multibody.errors import ModelError
from multibody.kernels.aba import aba_kernel
from multibody.kernels.crba import crba_kernel
from multibody.kernels.rnea import rnea_kernel
from multibody.model.user_constraints import qdot_matrix

from models import loop_model, sprung_model

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALL = ("Fixed", "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", "Planar", "Free")
TOL = 1e-12


def _close(ours, ref, tol=TOL):
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    np.testing.assert_allclose(ours, ref, rtol=0, atol=tol * scale)


def _turning_base(t):
    """A base that translates and turns about a fixed tilted axis at a varying rate: (p0, R0, ṗ0, ω0, p̈0, ω̇0)."""
    axis = np.array([0.3, -0.2, 1.0]) / np.linalg.norm([0.3, -0.2, 1.0])
    phi, phid, phidd = 0.4 * t + 0.2 * np.sin(t), 0.4 + 0.2 * np.cos(t), -0.2 * np.sin(t)
    p = np.array([0.3 * np.sin(2 * t), 0.1 * t * t, -0.2 * np.cos(t)])
    pd = np.array([0.6 * np.cos(2 * t), 0.2 * t, 0.2 * np.sin(t)])
    pdd = np.array([-1.2 * np.sin(2 * t), 0.2, 0.2 * np.cos(t)])
    return p, mb.rotation_about(axis, phi), pd, phid * axis, pdd, phidd * axis


def complex_step(model, kernel, q, v, x, fext=None, t=0.0):
    """(∂f/∂q (tangent space), ∂f/∂v, ∂f/∂x) of f = kernel(q, v, x) (``rnea_kernel`` or ``aba_kernel``) by complex
    steps; ``fext`` fixed, the base (if it moves) at time t."""
    d = Data(model)
    work = np.zeros(d.work.shape, dtype=complex)
    d.set_time(t, work)
    fx = np.zeros((0, 6), dtype=complex) if fext is None else np.asarray(fext, dtype=complex)
    nv = model.nv
    Q = qdot_matrix(model, q)

    def f(qq, vv, xx):
        out = np.empty(nv, dtype=complex)
        assert kernel(d.mi, d.mf, np.ascontiguousarray(qq, dtype=complex), np.ascontiguousarray(vv, dtype=complex),
                      np.ascontiguousarray(xx, dtype=complex), fx, work, out) == 0
        return out

    z, E = np.zeros(nv), np.eye(nv)
    return (directional_derivatives(lambda s: f(q + Q @ s, v, x), z, E),
            directional_derivatives(lambda s: f(q, v + s, x), z, E),
            directional_derivatives(lambda s: f(q, v, x + s), z, E))


def _state(model, rng):
    return model.random_configuration(rng), rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)


def _tree(n, seed, types=ALL, base=False):
    rng = np.random.default_rng(seed)
    motion = mb.BaseMotion(_turning_base) if base else None
    model = random_tree(n, rng, joint_types=types, base_motion=motion)
    while model.nv == 0:
        model = random_tree(n, rng, joint_types=types, base_motion=motion)
    return model, rng


# ---- RNEA and ABA derivatives against complex steps -----------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["rnea", "aba"])
@SETTINGS
@given(st.integers(1, 8), st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_derivatives_equal_complex_steps(algorithm, n, seed, with_fext, base):
    """Every joint type, with and without external forces (held fixed in ground coordinates), on a fixed and on a
    moving base: ∂τ/∂q, ∂τ/∂q̇ and M of ``rnea_derivatives``; ∂q̈/∂q, ∂q̈/∂q̇ and M⁻¹ = ∂q̈/∂τ of
    ``aba_derivatives``."""
    model, rng = _tree(n, seed, base=base)
    q, v, x = _state(model, rng)
    fext = rng.normal(size=(model.nbodies + 1, 6)) if with_fext else None
    t = float(rng.uniform(0, 2)) if base else None
    function, kernel = {"rnea": (mb.rnea_derivatives, rnea_kernel), "aba": (mb.aba_derivatives, aba_kernel)}[algorithm]
    ours = function(model, q, v, x, fext=fext, t=t)
    ref = complex_step(model, kernel, q, v, x, fext, 0.0 if t is None else t)
    M = mb.crba(model, q)
    tol = TOL if algorithm == "rnea" else max(TOL, 100 * np.finfo(float).eps * np.linalg.cond(M))
    for x, y in zip(ours, ref):
        _close(x, y, tol)
    if algorithm == "rnea":
        _close(ours[2], M)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_aba_derivatives_with_the_applied_forces(seed):
    """``applied=True``: q̈ = aba(q, q̇, τ_app(q, q̇)) with joint spring-dampers (revolute, universal, prismatic:
    stiffness and damping; spherical: damping), efforts and point spring-dampers between bodies on different
    branches and the ground — against complex steps of the equations ``linearize`` differentiates
    (``analysis.derivatives.ReducedDynamics``, which add them)."""
    from multibody.analysis.derivatives import reduced_dynamics

    rng = np.random.default_rng(seed)
    model = sprung_model(effort=0.4)
    q, v, _ = _state(model, rng)
    nv = model.nv
    ours = mb.aba_derivatives(model, q, v, np.zeros(nv), applied=True)
    F = reduced_dynamics(model, q, v)
    J = directional_derivatives(F.state_derivative, np.concatenate([np.zeros(nv), v]), np.eye(2 * nv))
    _close(ours[0], J[nv:, :nv])
    _close(ours[1], J[nv:, nv:])
    _close(ours[2], mb.minv(model, q))
    # without applied=True the springs are not in
    plain = mb.aba_derivatives(model, q, v, np.zeros(nv))
    assert np.abs(plain[0] - ours[0]).max() > 1e-3


def test_applied_forces_on_a_moving_base():
    """``applied=True`` with a moving base (its velocity enters the springs' rates and the points' velocities):
    against central differences of the tree formulation's right-hand side (which adds the applied forces) along
    ``model.integrate``, step h = 1e-6: error h² |q̈‴| / 6 + eps |q̈| / h ≈ 1e-8 relative here (q̈ and its
    derivatives of order 10–100), compared at 1e-6."""
    from multibody.formulations.tree_rhs import tree_rhs
    from multibody.model.packing import tree_params

    b = mb.ModelBuilder(gravity=(0, 0, -9.81), base_motion=mb.BaseMotion(_turning_base))
    b.add_body("a", 1.2, com=(0.3, 0.1, 0), inertia=[0.1, 0.2, 0.25])
    b.add_body("c", 0.8, com=(0.2, 0, 0.1), inertia=[0.1, 0.15, 0.2])
    b.add_joint("j", mb.Universal((0, 1, 0), (1, 0, 0)), "ground", "a", stiffness=(2.0, 1.0), damping=(0.3, 0.2))
    b.add_joint("k", mb.Free(), "a", "c", placement=(None, (0.5, 0, 0)), damping=0.1)
    b.add_spring("s", "ground", (0.5, 0.5, 0.5), "c", (0.1, 0.0, 0.0), stiffness=15.0, damping=0.7, rest_length=0.3)
    b.add_spring("s2", "a", (0.0, 0.2, 0.0), "c", (0.0, 0.0, 0.1), stiffness=8.0, damping=0.5, rest_length=0.5)
    model = b.build()
    rng = np.random.default_rng(0)
    q, v, tau = _state(model, rng)
    t = 0.7
    d = Data(model)
    p = tree_params(model, tau_const=tau, data=d)
    d.set_time(t)

    def f(qq, vv):
        out = np.empty(model.nq + model.nv)
        tree_rhs(t, np.concatenate([qq, vv]), p, out)
        return out[model.nq:]

    h = 1e-6
    E = np.eye(model.nv)
    fd_q = np.column_stack([(f(model.integrate(q, e, h), v) - f(model.integrate(q, e, -h), v)) / (2 * h) for e in E])
    fd_v = np.column_stack([(f(q, v + h * e) - f(q, v - h * e)) / (2 * h) for e in E])
    da_dq, da_dv, _ = mb.aba_derivatives(model, q, v, tau, applied=True, t=t)
    _close(da_dq, fd_q, 1e-6)
    _close(da_dv, fd_v, 1e-6)


# ---- M⁻¹ and the Coriolis matrix -----------------------------------------------------------------------------
@SETTINGS
@given(st.integers(1, 10), st.integers(0, 2**32 - 1))
def test_minv_is_the_inverse_of_the_mass_matrix(n, seed):
    """minv(q) M(q) = E, and minv equals the third output of aba_derivatives."""
    model, rng = _tree(n, seed)
    q, v, tau = _state(model, rng)
    Minv = mb.minv(model, q)
    M = mb.crba(model, q)
    # a computed inverse has the residual ‖X M − E‖ ≲ nv cond(M) eps (Higham, Accuracy and Stability, §14.3)
    cond = np.linalg.cond(M)
    np.testing.assert_allclose(Minv @ M, np.eye(model.nv), rtol=0, atol=4 * model.nv * cond * np.finfo(float).eps)
    np.testing.assert_allclose(Minv, Minv.T, rtol=0, atol=0)
    _close(mb.aba_derivatives(model, q, v, tau)[2], Minv)


def _mdot(model, q, v):
    """Ṁ = dM/dt along q̇ = v: a complex step of crba along the tangent direction v."""
    d = Data(model)
    work = np.zeros(d.work.shape, dtype=complex)
    d.set_time(0.0, work)            # a moving base at t = 0 (M does not depend on it)
    M = np.empty((model.nv, model.nv), dtype=complex)
    qc = q + 1j * 1e-30 * (qdot_matrix(model, q) @ v)
    assert crba_kernel(d.mi, d.mf, np.ascontiguousarray(qc), work, M) == 0
    return M.imag / 1e-30


@SETTINGS
@given(st.integers(1, 10), st.integers(0, 2**32 - 1), st.booleans())
def test_coriolis_matrix(n, seed, base):
    """Ṁ − 2C is skew-symmetric (Ṁ by complex steps of CRBA), C q̇ = rnea(q, q̇, 0) − rnea(q, 0, 0) on a fixed
    base; a moving base changes neither (C is that of the tree relative to its base)."""
    model, rng = _tree(n, seed, base=base)
    q, v, _ = _state(model, rng)
    C = mb.coriolis_matrix(model, q, v)
    Mdot = _mdot(model, q, v)
    X = Mdot - 2.0 * C
    np.testing.assert_allclose(X + X.T, 0.0, rtol=0, atol=TOL * max(1.0, np.abs(Mdot).max()))
    _close(C + C.T, Mdot)
    fixed, _ = _tree(n, seed, base=False)
    z = np.zeros(model.nv)
    _close(C @ v, mb.rnea(fixed, q, v, z) - mb.rnea(fixed, q, z, z))
    _close(C, mb.coriolis_matrix(fixed, q, v))


def test_coriolis_of_a_double_pendulum_closed_form():
    """Two point masses on massless rods, hinges about y, relative angles φ1, φ2: M = [[m1 l1² + m2 (l1² + l2² +
    2 l1 l2 cos φ2), m2 (l2² + l1 l2 cos φ2)], [·, m2 l2²]], so with h = m2 l1 l2 sin φ2 the velocity terms of
    Lagrange's equations are (−h (2 φ̇1 φ̇2 + φ̇2²), h φ̇1²) and Ṁ = [[−2h φ̇2, −h φ̇2], [−h φ̇2, 0]] = C + Cᵀ
    (exact to rounding: entries of order one)."""
    m1, m2, l1, l2 = 1.3, 0.7, 0.9, 0.6
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("a", m1, com=(0, 0, -l1))
    b.add_body("b", m2, com=(0, 0, -l2))
    b.add_joint("j1", mb.Revolute((0, 1, 0)), "ground", "a")
    b.add_joint("j2", mb.Revolute((0, 1, 0)), "a", "b", placement=(None, (0, 0, -l1)))
    model = b.build()
    q, v = np.array([0.4, -0.9]), np.array([1.1, -0.3])
    h = m2 * l1 * l2 * np.sin(q[1])
    # the velocity terms of Lagrange's equations in relative angles (textbook double pendulum)
    cv = np.array([-h * (2 * v[0] * v[1] + v[1] ** 2), h * v[0] ** 2])
    C = mb.coriolis_matrix(model, q, v)
    np.testing.assert_allclose(C @ v, cv, rtol=0, atol=1e-14)
    Mdot = np.array([[-2 * h * v[1], -h * v[1]], [-h * v[1], 0.0]])
    np.testing.assert_allclose(C + C.T, Mdot, rtol=0, atol=1e-14)


# ---- batched twins ----------------------------------------------------------------------------------------------
def test_batched_twins_equal_the_single_calls():
    model, rng = _tree(6, 3)
    B = 9
    Q = np.array([model.random_configuration(rng) for _ in range(B)])
    V = rng.uniform(-1, 1, (B, model.nv))
    X = rng.uniform(-1, 1, (B, model.nv))
    for batch, single in ((mb.rnea_derivatives_batch, mb.rnea_derivatives),
                          (mb.aba_derivatives_batch, mb.aba_derivatives)):
        out = batch(model, Q, V, X)
        for k in range(B):
            for x, y in zip(out, single(model, Q[k], V[k], X[k])):
                np.testing.assert_array_equal(x[k], y)
    sprung = sprung_model()
    Q = np.array([sprung.random_configuration(rng) for _ in range(B)])
    V = rng.uniform(-1, 1, (B, sprung.nv))
    out = mb.aba_derivatives_batch(sprung, Q, V, V, applied=True)
    for k in (0, B - 1):
        for x, y in zip(out, mb.aba_derivatives(sprung, Q[k], V[k], V[k], applied=True)):
            np.testing.assert_array_equal(x[k], y)
    assert all(x.shape == (0, sprung.nv, sprung.nv) for x in mb.aba_derivatives_batch(sprung, Q[:0], V[:0], V[:0]))


# ---- linearize -------------------------------------------------------------------------------------------------
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_linearize_takes_the_analytical_derivatives(n, seed):
    """A model without constraints takes the analytical path (``info["path"]``), which equals the complex-step path
    (chart kinematics of the Spherical and Free joints included), with inputs and a chosen order of the states."""
    model, rng = _tree(n, seed)
    q, v, _ = _state(model, rng)
    names = model.velocity_names()
    order = list(rng.permutation(names))
    kw = dict(coordinates=order, speeds=names[::-1], inputs=names[:2])
    a = mb.linearize(model, q, v, **kw)
    c = mb.linearize(model, q, v, derivative="complex", **kw)
    assert a.info["path"] == "analytic" and c.info["path"] == "complex step"
    assert a.state_names == c.state_names and a.input_names == c.input_names
    _close(a.A, c.A)
    _close(a.B, c.B)


def test_linearize_of_springs_and_dampers():
    """The applied forces (joint and point spring-dampers, efforts) are in the analytical path too."""
    rng = np.random.default_rng(5)
    model = sprung_model(effort=0.3)
    q, v, _ = _state(model, rng)
    a = mb.linearize(model, q, v, inputs=model.velocity_names()[:3])
    c = mb.linearize(model, q, v, inputs=model.velocity_names()[:3], derivative="complex")
    assert a.info["path"] == "analytic"
    _close(a.A, c.A)
    _close(a.B, c.B)


def test_linearize_of_constrained_models_keeps_complex_steps():
    model = loop_model(mb.Spherical())
    q0 = model.neutral()
    with pytest.raises(ModelError, match="has constraints"):
        mb.linearize(model, q0, np.zeros(model.nv), derivative="analytic")
    with pytest.raises(ModelError, match="derivative must be"):
        mb.linearize(revolute_chain(2), np.zeros(2), np.zeros(2), derivative="exact")
    chain = revolute_chain(3)
    assert mb.linearize(chain, np.zeros(3), np.zeros(3), derivative="central").info["path"] == "central differences"


# ---- errors -------------------------------------------------------------------------------------------------------
def test_bad_arguments_are_named():
    model = revolute_chain(3)
    with pytest.raises(ModelError, match="q must have shape"):
        mb.aba_derivatives(model, np.zeros(2), np.zeros(3), np.zeros(3))
    with pytest.raises(ModelError, match="tau must have shape"):
        mb.aba_derivatives(model, np.zeros(3), np.zeros(3), np.zeros(4))
    with pytest.raises(ModelError, match="fext must have shape"):
        mb.rnea_derivatives(model, np.zeros(3), np.zeros(3), np.zeros(3), fext=np.zeros((3, 6)))
    with pytest.raises(ModelError, match="Data was made for model"):
        mb.minv(model, np.zeros(3), data=Data(revolute_chain(3)))
    with pytest.raises(ModelError, match="V must have shape"):
        mb.aba_derivatives_batch(model, np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((2, 3)))
    ball = mb.ModelBuilder()
    ball.add_body("b", 1.0, inertia=[0.1, 0.1, 0.1])
    ball.add_joint("j", mb.Spherical(), "ground", "b")
    ball = ball.build()
    with pytest.raises(ModelError, match="quaternion.*has length 0"):
        mb.aba_derivatives(ball, np.zeros(4), np.zeros(3), np.zeros(3))


def test_general_joints_are_refused():
    import sympy as sp

    th = sp.Symbol("theta")
    b = mb.ModelBuilder()
    b.add_body("b", 1.0, inertia=[0.1, 0.1, 0.1])
    b.add_joint("g", mb.GeneralJoint([th], rotation=sp.Matrix([[sp.cos(th), -sp.sin(th), 0],
                                                                [sp.sin(th), sp.cos(th), 0], [0, 0, 1]])),
                "ground", "b")
    model = b.build()
    with pytest.raises(ModelError, match="GeneralJoint"):
        mb.aba_derivatives(model, np.zeros(1), np.zeros(1), np.zeros(1))
