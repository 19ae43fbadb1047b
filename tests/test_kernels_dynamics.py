"""Identities between the O(N) algorithms on random trees (every joint type), and reference values.

The identities (issue 2, "Must show"): rnea(q, v, aba(q, v, τ)) = τ; crba symmetric positive definite;
aba = solve(crba, τ − rnea(q, v, 0)); T = ½ vᵀ M v; the energy balance d(T + V)/dt = q̇ᵀτ along the motion
(Featherstone RBDA §§5–7; seed 001 §3.4–3.5).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.algorithms.dynamics import (aba, aba_batch, bias_forces, center_of_mass, crba, energy, gravity_forces, rnea,
                                  rnea_batch)
from multibody.bench.dynamics import random_tree, revolute_chain
from multibody.model.data import Data
from multibody.errors import ModelError

from models import moving_random_tree

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
trees = st.tuples(st.integers(1, 30), st.integers(0, 2**32 - 1))


def _state(model, rng):
    q = model.random_configuration(rng)
    v = rng.uniform(-1.0, 1.0, model.nv)
    tau = rng.uniform(-1.0, 1.0, model.nv)
    return q, v, tau


_model = moving_random_tree


@SETTINGS
@given(trees)
def test_rnea_inverts_aba(args):
    model, rng = _model(*args)
    q, v, tau = _state(model, rng)
    qdd = aba(model, q, v, tau)
    assert np.abs(rnea(model, q, v, qdd) - tau).max() <= 1e-10


@SETTINGS
@given(trees)
def test_crba_spd_and_aba_equals_solve(args):
    model, rng = _model(*args)
    q, v, tau = _state(model, rng)
    M = crba(model, q)
    assert np.array_equal(M, M.T)
    np.linalg.cholesky(M)  # raises unless positive definite
    assert np.linalg.eigvalsh(M).min() > 0.0
    qdd = aba(model, q, v, tau)
    ref = np.linalg.solve(M, tau - rnea(model, q, v, np.zeros(model.nv)))
    assert np.abs(qdd - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max())
    # M q̈ + b = τ, b = bias forces; gravity alone = rnea(q, 0, 0)
    np.testing.assert_allclose(M @ qdd + bias_forces(model, q, v), tau, rtol=0, atol=1e-10)
    np.testing.assert_allclose(gravity_forces(model, q), rnea(model, q, 0 * v, 0 * v), rtol=0, atol=1e-14)


@SETTINGS
@given(trees)
def test_kinetic_energy_is_half_vMv(args):
    model, rng = _model(*args)
    q, v, _ = _state(model, rng)
    T, V = energy(model, q, v)
    assert T == pytest.approx(0.5 * v @ crba(model, q) @ v, rel=1e-12, abs=1e-14)
    # potential of gravity: −g · (Σ m_i c_i)
    mass, com, _ = center_of_mass(model, q, v)
    assert V == pytest.approx(-mass * np.dot(model.gravity, com), rel=1e-12, abs=1e-12)


def _energy_rate(model, q, v, qdd, h=1e-4):
    """d(T + V)/dt at (q, v) when q̈ = qdd, by central differences along q(t) = q ⊕ (v t + ½ q̈ t²),
    v(t) = v + q̈ t (exact to O(t³) on the manifold), Richardson-extrapolated to O(h⁴)."""
    def E(t):
        qt = model.integrate(q, v * t + 0.5 * qdd * t * t, 1.0)
        T, V = energy(model, qt, v + qdd * t)
        return T + V

    d1 = (E(h) - E(-h)) / (2 * h)
    d2 = (E(2 * h) - E(-2 * h)) / (4 * h)
    return (4 * d1 - d2) / 3


@SETTINGS
@given(trees)
def test_energy_balance(args):
    """d(T + V)/dt = vᵀτ: the power of the applied joint forces (gravity is in V). This checks the
    dynamics against the energies computed from the placements, hence also the bias terms c = Ṡ q̇."""
    model, rng = _model(*args)
    q, v, tau = _state(model, rng)
    qdd = aba(model, q, v, tau)
    rate = _energy_rate(model, q, v, qdd)
    scale = max(1.0, abs(v @ tau), np.abs(rnea(model, q, v, np.zeros(model.nv)) * v).sum())
    assert abs(rate - v @ tau) <= 1e-7 * scale


@SETTINGS
@given(trees)
def test_free_fall_conserves_energy_and_external_forces(args):
    """τ = 0: d(T + V)/dt = 0; an external force f on a body equals the generalized force Jᵀ f."""
    model, rng = _model(*args)
    q, v, _ = _state(model, rng)
    qdd = aba(model, q, v, np.zeros(model.nv))
    scale = max(1.0, np.abs(rnea(model, q, v, np.zeros(model.nv)) * v).sum())
    assert abs(_energy_rate(model, q, v, qdd)) <= 1e-7 * scale
    # a force F at the point r of body b (ground coordinates) is the spatial force [r × F; F]
    from multibody.algorithms.dynamics import point_jacobian, point_position
    b = int(rng.integers(1, model.nbodies + 1))
    r_body = rng.uniform(-1, 1, 3)
    F = rng.normal(size=3)
    r = point_position(model, q, b, r_body)
    fext = np.zeros((model.nbodies + 1, 6))
    fext[b, :3] = np.cross(r, F)
    fext[b, 3:] = F
    J = point_jacobian(model, q, b, r_body)
    tau0 = rnea(model, q, v, qdd)
    np.testing.assert_allclose(rnea(model, q, v, qdd, fext=fext), tau0 - J.T @ F, rtol=0, atol=1e-10)
    np.testing.assert_allclose(aba(model, q, v, np.zeros(model.nv), fext=fext),
                               qdd + np.linalg.solve(crba(model, q), J.T @ F), rtol=0, atol=1e-9)


def test_batch_twins_match_single_calls():
    rng = np.random.default_rng(7)
    model = random_tree(12, rng)
    B = 37
    Q = np.array([model.random_configuration(rng) for _ in range(B)])
    V = rng.uniform(-1, 1, (B, model.nv))
    TAU = rng.uniform(-1, 1, (B, model.nv))
    QDD = aba_batch(model, Q, V, TAU)
    TAU2 = rnea_batch(model, Q, V, QDD)
    for k in range(B):
        np.testing.assert_array_equal(QDD[k], aba(model, Q[k], V[k], TAU[k]))
        np.testing.assert_array_equal(TAU2[k], rnea(model, Q[k], V[k], QDD[k]))
    np.testing.assert_allclose(TAU2, TAU, rtol=0, atol=1e-10)
    assert aba_batch(model, Q[:0], V[:0], TAU[:0]).shape == (0, model.nv)


def test_simple_pendulum_closed_form():
    """A rod of mass m with its centre at distance l from the hinge: θ̈ = −m g l sin θ / (I_c + m l²)."""
    model = revolute_chain(1)  # m = 1, l = 0.5, I_yy = 0.1 about the centre, hinge about y, g = 9.81
    for th in (0.3, 1.0, 2.5):
        qdd = aba(model, np.array([th]), np.zeros(1), np.zeros(1))
        assert qdd[0] == pytest.approx(-9.81 * 0.5 * np.sin(th) / (0.1 + 0.25), rel=1e-14)
        assert crba(model, np.array([th]))[0, 0] == pytest.approx(0.35, rel=1e-15)
        T, V = energy(model, np.array([th]), np.array([2.0]))
        assert T == pytest.approx(0.5 * 0.35 * 4.0, rel=1e-15)
        assert V == pytest.approx(-9.81 * 0.5 * np.cos(th), rel=1e-14)


def _triple_pendulum():
    """The triple physical pendulum of seed 001 §3.5 (reference note seed001-part2 §9.2): three rods of
    length 2, m = 1, J_z = 1 about the centre, hinged in the xy-plane, unit weight along −y."""
    b = mb.ModelBuilder(gravity=(0.0, -1.0, 0.0))
    parent = "ground"
    for k in range(3):
        b.add_body(f"rod{k + 1}", mass=1.0, com=(1.0, 0.0, 0.0), inertia=np.diag([1.0, 1.0, 1.0]))
        b.add_joint(f"hinge{k + 1}", mb.Revolute(axis=(0, 0, 1)), parent=parent, child=f"rod{k + 1}",
                    placement=mb.Placement(np.eye(3), (2.0 if k else 0.0, 0.0, 0.0)))
        parent = f"rod{k + 1}"
    return b.build()


def test_triple_pendulum_of_seed001():
    """Seed 001 §3.5 (note §9.2): from rest with all rods horizontal only the first absolute angle
    accelerates, q̈(0) = [−0.5, 0, 0]; our joint angles are relative, θ = (q1, q2 − q1, q3 − q2). The energies
    are those of the book's start.m (note §9.3): E_p = 5 sin q1 + 3 sin q2 + sin q3 and
    E_k = ½(v1² + v2² + v3²) + ½(q̇1² + q̇2² + q̇3²) with the centre speeds listed there."""
    model = _triple_pendulum()
    qdd = aba(model, np.zeros(3), np.zeros(3), np.zeros(3))
    np.testing.assert_allclose(np.cumsum(qdd), [-0.5, 0.0, 0.0], rtol=0, atol=1e-15)
    rng = np.random.default_rng(3)
    for _ in range(5):
        qa = rng.uniform(-np.pi, np.pi, 3)  # absolute angles
        wa = rng.uniform(-2, 2, 3)
        theta = np.diff(np.concatenate([[0.0], qa]))
        dtheta = np.diff(np.concatenate([[0.0], wa]))
        T, V = energy(model, theta, dtheta)
        q1, q2, q3 = qa
        w1, w2, w3 = wa
        v1 = w1 ** 2
        v2 = 4 * w1 ** 2 + 4 * np.cos(q1 - q2) * w1 * w2 + w2 ** 2
        v3 = ((2 * np.cos(q1) * w1 + 2 * np.cos(q2) * w2 + np.cos(q3) * w3) ** 2
              + (2 * np.sin(q1) * w1 + 2 * np.sin(q2) * w2 + np.sin(q3) * w3) ** 2)
        assert T == pytest.approx(0.5 * (v1 + v2 + v3) + 0.5 * (w1 ** 2 + w2 ** 2 + w3 ** 2), rel=1e-13)
        assert V == pytest.approx(5 * np.sin(q1) + 3 * np.sin(q2) + np.sin(q3), rel=1e-13, abs=1e-13)


def test_explicit_data_and_errors():
    model = revolute_chain(3)
    other = revolute_chain(4)
    data = Data(model)
    q = np.array([0.1, 0.2, 0.3])
    np.testing.assert_array_equal(aba(model, q, q, q, data=data), aba(model, q, q, q))
    # lists and integer arrays are converted (not compiled for)
    np.testing.assert_array_equal(aba(model, [0.1, 0.2, 0.3], [0.1, 0.2, 0.3], [0.1, 0.2, 0.3]), aba(model, q, q, q))
    i3 = np.array([1, 0, 2])
    np.testing.assert_array_equal(rnea(model, i3, i3, i3, data=data), rnea(model, 1.0 * i3, 1.0 * i3, 1.0 * i3))
    np.testing.assert_array_equal(crba(model, i3), crba(model, 1.0 * i3))
    from multibody.kernels.aba import aba_kernel
    assert all(str(sig[2].dtype) in ("float64", "complex128") and sig[2].layout == "C" for sig in aba_kernel.signatures)
    with pytest.raises(ModelError, match=r"q must have shape \(3,\)"):
        aba(model, np.zeros(4), q, q)
    with pytest.raises(ModelError, match="tau"):
        aba(model, q, q, np.zeros(2))
    with pytest.raises(ModelError, match="v"):
        rnea(model, q, np.zeros(5), q)
    with pytest.raises(ModelError, match="q"):
        crba(model, np.zeros(2))
    with pytest.raises(ModelError, match="fext"):
        aba(model, q, q, q, fext=np.zeros((3, 6)))
    with pytest.raises(ModelError, match="Data was made for model"):
        aba(other, np.zeros(4), np.zeros(4), np.zeros(4), data=data)
    with pytest.raises(ModelError, match="Q"):
        aba_batch(model, np.zeros((5, 2)), np.zeros((5, 3)), np.zeros((5, 3)))
    with pytest.raises(ModelError, match="TAU"):
        aba_batch(model, np.zeros((5, 3)), np.zeros((5, 3)), np.zeros((4, 3)))


def test_fast_path_arguments():
    """The fast path calls the compiled kernels directly: strided, read-only, 2-D or integer arrays must still
    give the numbers of contiguous float vectors (copied or refused, never misread)."""
    model = revolute_chain(4)
    rng = np.random.default_rng(5)
    q, v, a = (rng.normal(size=4) for _ in range(3))
    want = rnea(model, q, v, a), aba(model, q, v, a), crba(model, q)
    wide = np.zeros((3, 8))
    wide[0, ::2], wide[1, ::2], wide[2, ::2] = q, v, a
    qs, vs, as_ = wide[0, ::2], wide[1, ::2], wide[2, ::2]  # strided views
    np.testing.assert_array_equal(rnea(model, qs, vs, as_), want[0])
    np.testing.assert_array_equal(aba(model, qs, vs, as_), want[1])
    np.testing.assert_array_equal(crba(model, qs), want[2])
    ro = q.copy()
    ro.flags.writeable = False
    np.testing.assert_array_equal(crba(model, ro), want[2])
    with pytest.raises(ModelError, match="q"):
        aba(model, q[None, :], v, a)
    with pytest.raises(ModelError, match="q"):
        crba(model, np.zeros((2, 2)))


def test_hinges_about_coordinate_axes_take_the_short_path():
    """Revolute joints about ±x, ±y, ±z rotate with two columns (``kinematics.AXIS``): the same numbers as the
    general rotation about the same axis."""
    from multibody.kernels.kinematics import AXIS

    b = mb.ModelBuilder(gravity=(0.3, -1.0, -9.81))
    parent = "ground"
    for k, axis in enumerate([(1, 0, 0), (0, -1, 0), (0, 0, 1), (-1, 0, 0), (0, 1, 0), (0, 0, -1)]):
        b.add_body(f"b{k}", mass=1.0 + k, com=(0.1, -0.2, 0.3), inertia=[[0.3, 0.01, 0.02], [0.01, 0.2, 0.0],
                                                                          [0.02, 0.0, 0.25]])
        b.add_joint(f"j{k}", mb.Revolute(axis=axis), parent, f"b{k}",
                    placement=mb.Placement(mb.rotation_about((1, 2, 3), 0.3 * k), (0.2, 0.0, -0.5)))
        parent = f"b{k}"
    model = b.build()
    short, general = Data(model), Data(model)
    assert list(short.mi[1:, AXIS]) == [1, -2, 3, -1, 2, -3]
    general.mi[:, AXIS] = 0
    rng = np.random.default_rng(6)
    for _ in range(5):
        q, v, tau = (rng.uniform(-3, 3, 6) for _ in range(3))
        np.testing.assert_allclose(aba(model, q, v, tau, data=short), aba(model, q, v, tau, data=general),
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(crba(model, q, data=short), crba(model, q, data=general), rtol=1e-13,
                                   atol=1e-13)


def test_benchmark_runs_on_small_models(capsys):
    """benchmarks/bench_dynamics.py (not a speed test): rows for every algorithm, and — when Pinocchio is
    installed — its check that both libraries give the same accelerations passes."""
    from multibody.bench.dynamics import bench_dynamics
    rows = bench_dynamics(sizes=(3,), batch=40, rounds=1, tree=3, batch_size=4)
    assert [(r["model"], r["algorithm"]) for r in rows] == [
        ("chain", "aba"), ("chain", "rnea"), ("chain", "crba"), ("binary tree", "aba"), ("binary tree", "rnea"),
        ("binary tree", "crba"), ("batch of 40", "aba_batch")]
    assert all(r["ours_us"] > 0 for r in rows)
    assert "| chain | 3 | aba |" in capsys.readouterr().out


@SETTINGS
@given(st.tuples(st.integers(1, 30), st.integers(0, 2**32 - 1)))
def test_bias_and_mass_matrix_of_the_stepping_step(args):
    """``kernels.crba.bias_and_mass_matrix`` (the time-stepping step's RNEA and M in one pass) on random trees:
    the bias is RNEA's at q̈ = 0 and M's entries on the tree's paths are CRBA's, to round-off; the entries off the
    paths are not written (M filled with NaN keeps them), which the step's factor never reads."""
    from multibody.kernels.crba import bias_and_mass_matrix
    from multibody.kernels.ltl import dof_parents
    from multibody.model.packing import tree_params

    n, seed = args
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng)
    q = model.random_configuration(rng)
    v = rng.normal(size=model.nv)
    nv = model.nv
    if nv == 0:                                     # a body welded to the ground: nothing to compute
        return
    p = tree_params(model)
    bias, M = np.zeros(nv), np.full((nv, nv), np.nan)
    assert bias_and_mass_matrix(p.mi, p.mf, q, v, np.zeros(nv), np.zeros((0, 6)), p.work, bias, M) == 0
    parent = dof_parents(p.mi)
    on_path = np.eye(nv, dtype=bool)
    for k in range(nv):
        j = parent[k]
        while j >= 0:
            on_path[k, j] = on_path[j, k] = True
            j = parent[j]
    ref = crba(model, q)
    scale = max(1.0, np.abs(ref).max())
    assert np.abs(np.where(on_path, M, 0.0) - np.where(on_path, ref, 0.0)).max() <= 1e-12 * scale
    assert np.all(np.isnan(M[~on_path])) and np.all(ref[~on_path] == 0.0)
    b = rnea(model, q, v, np.zeros(nv))
    assert np.abs(bias - b).max() <= 1e-12 * max(1.0, np.abs(b).max())


@SETTINGS
@given(st.tuples(st.integers(1, 30), st.integers(0, 2**32 - 1)))
def test_sparse_factorization_of_the_mass_matrix(args):
    """kernels/ltl.py on random trees (every joint type, branching): M = LᵀL with L nonzero only on the tree's
    paths (no fill-in) and the pivots' inverses beside it; L⁻ᵀ (several columns at once: a dense one, one that
    lives on one coordinate's path as a contact's row does, and a zero one), L⁻¹ solve M x = y to round-off (1e-10
    relative, as ABA against a dense solve); the columns beyond ``m`` are untouched."""
    from multibody.kernels.ltl import (dof_parents, dof_paths, ltl_factor, ltl_solve, ltl_solve_transposed,
                                       ltl_solve_transposed_columns)
    from multibody.kernels.packing import packed_paths
    from multibody.model.packing import tree_params

    n, seed = args
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng)
    q = model.random_configuration(rng)
    M = crba(model, q)
    nv = model.nv
    if nv == 0:                                     # a body welded to the ground: nothing to factor
        return
    mi = tree_params(model).mi
    parent = dof_parents(mi)
    path = dof_paths(mi)
    assert all(parent[k] < k for k in range(nv))
    for k in range(nv):                             # each path: the chain of parents, nearest first
        chain, j = [], parent[k]
        while j >= 0:
            chain.append(j)
            j = parent[j]
        assert list(path[path[k]:path[k + 1]]) == chain
    packed_paths(model)[:] = 0                      # kept on the model, a new copy each call: writing it
    assert np.array_equal(packed_paths(model), path)        # changes nothing
    L = np.full((nv, nv), np.nan)                   # only the entries on the paths are written and read
    inv = np.zeros(nv)
    assert ltl_factor(M, path, L, inv)
    on_path = np.zeros((nv, nv), dtype=bool)
    for k in range(nv):
        j = k
        while j >= 0:
            on_path[k, j] = True
            j = parent[j]
    L = np.where(on_path, L, 0.0)
    assert np.all(np.isfinite(L))
    np.testing.assert_allclose(L.T @ L, M, rtol=0, atol=1e-12 * np.abs(M).max())
    assert np.array_equal(inv, 1.0 / np.diag(L))
    Y = np.zeros((nv, 3))
    Y[:, 0] = rng.uniform(-1.0, 1.0, nv)
    k = int(rng.integers(nv))                       # a contact's row: nonzero on one coordinate's path only
    Y[on_path[k], 1] = rng.uniform(-1.0, 1.0, int(on_path[k].sum()))
    X = np.zeros((nv, 4))                           # three columns of four: the last one untouched
    X[:, :3] = Y
    X[:, 3] = 7.0
    ltl_solve_transposed_columns(L, path, inv, X, 3)
    assert np.all(X[:, 3] == 7.0) and np.all(X[:, 2] == 0.0)
    assert np.all(X[~on_path[k], 1] == 0.0)        # the path's support is kept
    ref = np.linalg.solve(M, Y)
    for c in range(3):
        x = X[:, c].copy()
        ltl_solve(L, path, inv, x)
        assert np.abs(x - ref[:, c]).max() <= 1e-10 * max(1.0, np.abs(ref[:, c]).max())
        x = Y[:, c].copy()
        ltl_solve_transposed(L, path, inv, x)
        ltl_solve(L, path, inv, x)
        assert np.abs(x - ref[:, c]).max() <= 1e-10 * max(1.0, np.abs(ref[:, c]).max())


def _gauss_jordan(A):
    """The Gauss–Jordan inversion of ``kernels.aba.invert_spd_inplace``, written out in Python floats: the reference
    of the same operations in the same order."""
    A = [list(map(float, row)) for row in A]
    n = len(A)
    for k in range(n):
        piv = 1.0 / A[k][k]
        A[k][k] = 1.0
        for j in range(n):
            A[k][j] *= piv
        for i in range(n):
            if i != k:
                f = A[i][k]
                A[i][k] = 0.0
                for j in range(n):
                    A[i][j] -= f * A[k][j]
    return np.array(A)


def test_spd_block_inversion_of_every_size():
    """The in-place inversion of a joint's d (``invert_spd_inplace``; six coordinates: ``invert_spd6_inplace``, the
    pivot row held in scalars) is the same Gauss–Jordan, bit for bit, for blocks of 1 to 6 inside a larger array,
    whose other entries it leaves alone; and it is the inverse, to 100 n eps cond(A)."""
    from multibody.kernels.aba import invert_spd_inplace

    rng = np.random.default_rng(6)
    for n in range(1, 7):
        X = rng.normal(size=(n, n))
        A = X @ X.T + n * np.eye(n)
        W = rng.normal(size=(9, 25))
        before = W.copy()
        W[2:2 + n, 7:7 + n] = A
        invert_spd_inplace(W, 2, 7, n)
        block = W[2:2 + n, 7:7 + n]
        assert np.array_equal(block, _gauss_jordan(A))
        inv = np.linalg.inv(A)
        assert np.abs(block - inv).max() <= 100 * n * np.finfo(float).eps * np.linalg.cond(A) * np.abs(inv).max()
        W[2:2 + n, 7:7 + n] = before[2:2 + n, 7:7 + n]
        assert np.array_equal(W, before)
