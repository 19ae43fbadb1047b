"""Armature (rotor inertia on the diagonal of the mass matrix, ``kernels/kinematics.armature``) in every kernel that
forms, factors or inverts M or its articulated inertia: identities on random trees of every joint type.

With A the diagonal of the armatures the equations are (M(q) + A) q̈ + b(q, q̇) = τ and T = ½ q̇ᵀ (M + A) q̇
(MuJoCo's ``armature``, mj_fullM); so crba = crba(no armature) + A exactly (the same sums plus one addition),
rnea(aba(τ)) = τ, T = ½ vᵀ M v, d(T + V)/dt = q̇ᵀ τ, M⁻¹ M = E, the RNEA derivative ∂τ/∂q̈ = M, the hybrid kernel
equals the dense partition of (M + A), the Poisson impulses p = M v and back. Without armature every kernel
computes what it computed before, bit for bit (the other test modules check their numbers unchanged).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.bench.dynamics import revolute_chain
from multibody.model.data import Data
from multibody.errors import ModelError
from multibody.kernels.poisson import SWEEP, CHOLESKY, impulses_kernel, poisson_kernel

from models import moving_random_tree, with_armature

EPS = np.finfo(float).eps
SETTINGS = settings(max_examples=15, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
trees = st.tuples(st.integers(1, 12), st.integers(0, 2**32 - 1))


def _pair(n, seed):
    """(model without armature, the same model with armature, rng, q, v, τ)."""
    base, rng = moving_random_tree(n, seed)
    model = with_armature(base, rng)
    q = model.random_configuration(rng)
    v, tau = rng.uniform(-1.0, 1.0, model.nv), rng.uniform(-1.0, 1.0, model.nv)
    return base, model, rng, q, v, tau


def _tol(M, x):
    """A bound on the error of a backward-stable solve with M: 16 (nv + 1) eps cond(M) |x|."""
    return 16 * (M.shape[0] + 1) * EPS * np.linalg.cond(M) * max(1.0, np.abs(x).max())


@SETTINGS
@given(trees)
def test_mass_matrix_dynamics_and_energy(args):
    base, model, rng, q, v, tau = _pair(*args)
    A = np.diag(model.dof_armature)
    M = mb.crba(model, q)
    np.testing.assert_array_equal(M, mb.crba(base, q) + A)   # one addition on the diagonal, nothing else
    qdd = mb.aba(model, q, v, tau)
    b = mb.rnea(model, q, v, np.zeros(model.nv))
    np.testing.assert_array_equal(b, mb.rnea(base, q, v, np.zeros(model.nv)))   # no bias from the rotors
    assert np.abs(qdd - np.linalg.solve(M, tau - b)).max() <= _tol(M, qdd)
    scale = np.abs(M).max() * np.abs(qdd).max() + np.abs(b).max() + 1.0
    assert np.abs(mb.rnea(model, q, v, qdd) - tau).max() <= 64 * model.nv * EPS * scale
    T, V = mb.energy(model, q, v)
    T0, V0 = mb.energy(base, q, v)
    assert V == V0 and T == pytest.approx(0.5 * v @ M @ v, rel=1e-12, abs=1e-14)
    assert T - T0 == pytest.approx(0.5 * np.sum(model.dof_armature * v * v), rel=1e-10, abs=1e-14)
    assert np.abs(mb.minv(model, q) @ M - np.eye(model.nv)).max() <= _tol(M, np.ones(1))
    tau_d, dq, dv, Md = (None, *mb.rnea_derivatives(model, q, v, qdd))
    np.testing.assert_allclose(Md, M, rtol=0, atol=64 * EPS * np.abs(M).max())


@SETTINGS
@given(trees, st.floats(0.0, 1.0))
def test_hybrid_dynamics_is_the_dense_partition(args, share):
    base, model, rng, q, v, tau = _pair(*args)
    known = rng.random(model.nv) < share
    qdd_known = rng.uniform(-1.0, 1.0, model.nv)
    qdd, forces = mb.hybrid_dynamics(model, q, v, tau, known, qdd_known)
    M, b = mb.crba(model, q), mb.rnea(model, q, v, np.zeros(model.nv))
    F, K = ~known, known
    ref = np.where(K, qdd_known, 0.0)
    if F.any():
        ref[F] = np.linalg.solve(M[np.ix_(F, F)], tau[F] - b[F] - M[np.ix_(F, K)] @ ref[K])
    fref = np.where(K, M @ ref + b - tau, 0.0)
    tol = _tol(M, ref)
    assert np.abs(qdd - ref).max() <= tol and np.abs(forces - fref).max() <= tol * max(1.0, np.abs(tau).max())


def _energy_rate(model, q, v, qdd, h=1e-3):
    """d(T + V)/dt along q(t) = q ⊕ (v t + ½ q̈ t²), v(t) = v + q̈ t, by central differences extrapolated to O(h⁴)."""
    def E(t):
        T, V = mb.energy(model, model.integrate(q, v * t + 0.5 * qdd * t * t, 1.0), v + qdd * t)
        return T + V

    d1 = (E(h) - E(-h)) / (2 * h)
    d2 = (E(h / 2) - E(-h / 2)) / h
    return (4 * d2 - d1) / 3


@SETTINGS
@given(trees)
def test_energy_balance(args):
    """The rotors' energy ½ q̇ᵀ A q̇ with their forces A q̈: d(T + V)/dt = q̇ᵀ τ (no gravity work is lost)."""
    base, model, rng, q, v, tau = _pair(*args)
    qdd = mb.aba(model, q, v, tau)
    T, V = mb.energy(model, q, v)
    scale = abs(T) + abs(V) + np.abs(v).max() * np.abs(tau).max() + np.abs(qdd).max() ** 2 + 1.0
    assert _energy_rate(model, q, v, qdd) == pytest.approx(v @ tau, abs=1e-7 * scale)


@SETTINGS
@given(trees)
def test_poisson_impulses(args):
    """p = ∂T/∂v = (M + A) v, and both solvers of system (6) give v back from p."""
    base, model, rng, q, v, tau = _pair(*args)
    d = Data(model)
    p, pdot = np.zeros(model.nv), np.zeros(model.nv)
    assert impulses_kernel(d.mi, d.mf, q, v, d.work, p, pdot) == 0
    M = mb.crba(model, q)
    assert np.abs(p - M @ v).max() <= 64 * model.nv * EPS * np.abs(M).max() * np.abs(v).max()
    for solver in (SWEEP, CHOLESKY):
        back = np.zeros(model.nv)
        assert poisson_kernel(d.mi, d.mf, q, p, d.work, back, pdot, solver) == 0
        assert np.abs(back - v).max() <= _tol(M, v)


def test_lanes_equal_the_single_run_kernel_with_armature():
    """``simulate_batch``'s SIMD lanes (``kernels/lanes.py``) do the operations of ``aba_kernel``, armature
    included: the same q̈ and kinetic energy bit for bit, lane by lane."""
    from multibody.kernels.aba import aba_kernel
    from multibody.kernels.kinematics import W_KINETIC
    from multibody.kernels.lanes import LANES, L_KINETIC, lanes_parameters, lanes_rhs, lanes_workspace_size
    from multibody.model.controllers import ControllerTable

    rng = np.random.default_rng(4)
    model = with_armature(revolute_chain(4), rng)
    d = Data(model)
    nq, nv, n = model.nq, model.nv, model.nbodies + 1
    X = np.concatenate([model.neutral() + rng.uniform(-1.0, 1.0, (LANES, nq)), rng.uniform(-1, 1, (LANES, nv))],
                       axis=1)
    TAU = rng.uniform(-1.0, 1.0, (LANES, nv))
    W, OUT = np.zeros(lanes_workspace_size(n)), np.zeros((nq + nv) * LANES)
    MG = np.concatenate([np.tile(model.mass[1:], (LANES, 1)), np.tile(model.gravity, (LANES, 1))], axis=1)
    lanes_parameters(d.mi, np.ascontiguousarray(MG.T).ravel(), W)
    lanes_rhs(d.mi, d.mf, np.ascontiguousarray(X.T).ravel(), np.ascontiguousarray(TAU.T).ravel(), np.zeros((0, nv)),
              W, OUT, 0.0, ControllerTable((), nv).arrays())
    for b in range(LANES):
        qdd = np.zeros(nv)
        assert aba_kernel(d.mi, d.mf, X[b, :nq].copy(), X[b, nq:].copy(), TAU[b], d.no_fext, d.work, qdd) == 0
        np.testing.assert_array_equal(OUT[nq * LANES + b::LANES][:nv], qdd)
        assert W[L_KINETIC * LANES + b] == d.work[W_KINETIC]


def test_symbolic_mass_matrix_carries_armature():
    from multibody.symbolic import equations_of_motion
    import sympy as sp

    rng = np.random.default_rng(5)
    model = with_armature(revolute_chain(3), rng)
    eqs = equations_of_motion(model)
    q = rng.uniform(-1, 1, 3)
    H = np.array(sp.lambdify([eqs.q], eqs.mass_matrix, "numpy")(q), dtype=float)
    np.testing.assert_allclose(H, mb.crba(model, q), rtol=1e-12, atol=1e-12)


def test_builder_files_and_refusals(tmp_path):
    b = mb.ModelBuilder()
    b.add_body("rotor", mass=0.0)            # a massless body: the armature alone carries the coordinate
    with pytest.raises(ModelError, match="armature must be >= 0"):
        b.add_joint("j", mb.Revolute(axis=(0, 0, 1)), "ground", "rotor", armature=-1.0)
    b.add_joint("j", mb.Revolute(axis=(0, 0, 1)), "ground", "rotor", armature=0.25)
    model = b.build()
    assert mb.aba(model, [0.3], [0.0], [1.0]) == pytest.approx([4.0])
    mb.io.save_model(model, tmp_path / "rotor.yaml")
    back = mb.load_model(tmp_path / "rotor.yaml")
    assert all(np.array_equal(x, y) for x, y in zip(model.arrays(), back.arrays()))
    with pytest.raises(ModelError, match="armature"):
        mb.simulate(model, [0.0], [1.0], 0.1, formulation="cartesian")


def test_a_reduced_model_keeps_the_armature_of_its_free_coordinates():
    """Locking a joint drops its rotor with it: the reduced model's mass matrix is the free block of the full one."""
    rng = np.random.default_rng(8)
    model = with_armature(revolute_chain(4), rng)
    q = rng.uniform(-1.0, 1.0, 4)
    small = model.reduced(locked={"joint2": q[1]})
    keep = [0, 2, 3]
    np.testing.assert_allclose(mb.crba(small, q[keep]), mb.crba(model, q)[np.ix_(keep, keep)], rtol=0,
                               atol=1e-14 * np.abs(mb.crba(model, q)).max())
