"""The symbolic equations against the numeric kernels, the numeric twin of the seed 004 split against the
symbolic split, the structure of trees (seed 004 statement 2, claims 19–20), and simulations from the
generated code against the O(N) kernels.

Tolerances: the symbolic and the numeric values are the same quantities evaluated in floating point by
different sequences of operations, so they differ by rounding only — a few ulps of the largest terms
(measured ≤ 4e-14 relative); 1e-12 relative leaves a factor of 25 or more."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.analysis.inertial_forces import christoffel_symbols, mass_matrix_derivatives, numeric_split
from multibody.symbolic import equations_of_motion, split_inertial_forces
from multibody.systems import manipulators

RTOL = 1e-12
AXES = np.vstack([np.eye(3), -np.eye(3)])


def close(a, b, rtol=RTOL):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(np.max(np.abs(b)), 1.0)
    return np.max(np.abs(a - b)) <= rtol * scale


def evaluate(exprs, eqs, q, qd, values=()):
    """Numeric value of sympy matrices at (q, q̇) with the model's parameters at ``values``."""
    f = sp.lambdify([eqs.q, eqs.qd, eqs.parameters], exprs, "numpy")
    return [np.array(x, dtype=float) for x in f(q, qd, values)]


def check_against_kernels(model, eqs, values, rng, states=3):
    """H, h + g and g of the equations equal crba, rnea(q, q̇, 0) and gravity_forces at random states."""
    for _ in range(states):
        q = model.random_configuration(rng)
        qd = rng.normal(size=model.nv)
        H, bias, g = evaluate([eqs.mass_matrix, eqs.bias, eqs.gravity], eqs, q, qd, values)
        assert close(H, mb.crba(model, q))
        assert close(bias.ravel(), mb.bias_forces(model, q, qd))
        assert close(g.ravel(), mb.gravity_forces(model, q))


def check_twin(model, split, values, rng, states=2):
    """The numeric split from the exact CRBA derivatives equals the symbolic split (and its power ~ 0)."""
    for _ in range(states):
        q = model.random_configuration(rng)
        qd = rng.normal(size=model.nv)
        order = [int(str(s)[1:]) - 1 for s in split.q]
        twin = numeric_split(model, q, qd, order=order)
        f = sp.lambdify([split.q, split.qd, split.parameters], [split.centrifugal, split.coriolis,
                                                                      split.gyroscopic, split.total], "numpy")
        c, o, g, total = (np.array(x, dtype=float).ravel() for x in f(q[order], qd[order], values))
        assert close(twin.centrifugal, c) and close(twin.coriolis, o) and close(twin.gyroscopic, g)
        assert close(twin.total, total)
        assert twin.power_residual < RTOL


def tree_formulas(model, dH, qd):
    """Statement 2, eqs. (7)–(10), written with the sets of carried (descendant) and carrier (ancestor)
    bodies of a tree with one coordinate per body (coordinate i moves body i + 1); H_jik = dH[k][j, i]."""
    n = model.nv
    carried = [sorted(subtree(model, i + 1) - {i + 1}) for i in range(n)]
    carriers = [[j for j in range(n) if i + 1 in subtree(model, j + 1) and j != i] for i in range(n)]
    Hdot = np.einsum("kij,k->ij", dH, qd)
    c, o, g = np.zeros(n), np.zeros(n), np.zeros(n)
    for i in range(n):
        D = [j - 1 for j in carried[i]]
        shared = 0.5 * qd[i] * sum(dH[j][i, i] * qd[j] for j in D)  # (10)
        c[i] = sum(dH[j][j, i] * qd[j] ** 2 for j in D)  # (7)
        o[i] = shared + sum(qd[j] * sum(dH[k][j, i] * qd[k] for k in D if k != j) for j in D)  # (8)
        g[i] = shared + sum(Hdot[i, j] * qd[j] for j in carriers[i]) - 0.5 * qd @ dH[i] @ qd  # (9)
    return c, o, g


def chain_formulas(dH, qd):
    """Statement 3, eqs. (12)–(16) for a chain (the notes' index layout of eq. 14, [R] there):
    h_ci = Σ_{j>i} H_jij q̇_j², h^g_oi = ½ q̇_i Σ_{j>i} H_iij q̇_j, h_oi = h^g_oi + Σ_{j>i} q̇_j Σ_{k>j} (H_jik +
    H_kij) q̇_k, ∂T/∂q_i = ½ Σ_{j<i} H_jji q̇_j² + Σ_{j<i} q̇_j Σ_{k>j} H_kji q̇_k, h_gi = h^g_oi + Σ_{j<i} Ḣ_ij q̇_j
    − ∂T/∂q_i; with H_jik = ∂H_ji/∂q_k = dH[k][j, i]."""
    n = len(qd)
    Hdot = np.einsum("kij,k->ij", dH, qd)
    c, o, g = np.zeros(n), np.zeros(n), np.zeros(n)
    for i in range(n):
        shared = 0.5 * qd[i] * sum(dH[j][i, i] * qd[j] for j in range(i + 1, n))
        c[i] = sum(dH[j][j, i] * qd[j] ** 2 for j in range(i + 1, n))
        o[i] = shared + sum(qd[j] * sum((dH[k][j, i] + dH[j][k, i]) * qd[k] for k in range(j + 1, n))
                            for j in range(i + 1, n))
        dT = 0.5 * sum(dH[i][j, j] * qd[j] ** 2 for j in range(i)) + sum(
            qd[j] * sum(dH[i][k, j] * qd[k] for k in range(j + 1, n)) for j in range(i))
        g[i] = shared + sum(Hdot[i, j] * qd[j] for j in range(i)) - dT
    return c, o, g


@pytest.mark.parametrize("name", list(manipulators.SYSTEMS))
def test_manipulators_against_kernels_and_twin(name):
    """The six manipulators with symbolic parameters, evaluated at the default numbers, against CRBA/RNEA of
    the numeric model; the numeric twin against the symbolic split, in the paper's order and reversed; the
    chain formulas (12)–(16) and the tree formulas (7)–(10) against the general ones (2)–(5)."""
    rng = np.random.default_rng(4)
    model = manipulators.SYSTEMS[name]()
    symbolic = manipulators.SYSTEMS[name](symbolic=True)
    eqs = equations_of_motion(symbolic)
    values = [manipulators.DEFAULTS[name][str(s)] for s in eqs.parameters]
    check_against_kernels(model, eqs, values, rng)
    for order in (None, list(range(model.nv))[::-1]):
        check_twin(model, split_inertial_forces(symbolic, order=order), values, rng)
    q, qd = model.random_configuration(rng), rng.normal(size=model.nv)
    twin = numeric_split(model, q, qd)
    for formulas in (chain_formulas(twin.derivatives, qd), tree_formulas(model, twin.derivatives, qd)):
        assert all(close(a, b) for a, b in zip(formulas, (twin.centrifugal, twin.coriolis, twin.gyroscopic)))


def random_tree(n, parents, kinds, axes, turns, seed):
    """A tree of revolute ('R') and prismatic ('P') joints along ±x, ±y, ±z, joint frames turned by
    multiples of 90° and shifted at random, bodies with random mass, centre of mass and inertia."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder(gravity=rng.normal(size=3), name="random tree")
    for i in range(1, n + 1):
        R = mb.rotation_about(rng.normal(size=3), rng.uniform(0, np.pi))
        b.add_body(f"b{i}", mass=rng.uniform(0.5, 3.0), com=rng.uniform(-0.5, 0.5, 3),
                   inertia=R @ np.diag(rng.uniform(0.2, 0.3, 3)) @ R.T)
        joint = (mb.Revolute if kinds[i - 1] == "R" else mb.Prismatic)(axis=AXES[axes[i - 1]])
        k, quarter = turns[i - 1]
        P = np.round(mb.rotation_about(AXES[k], quarter * np.pi / 2))
        b.add_joint(f"j{i}", joint, "ground" if parents[i - 1] == 0 else f"b{parents[i - 1]}", f"b{i}",
                    placement=(P, rng.uniform(-1.0, 1.0, 3)))
    return b.build()


@st.composite
def trees(draw):
    n = draw(st.integers(3, 6))
    parents = [draw(st.integers(0, i - 1)) for i in range(1, n + 1)]
    kinds = draw(st.lists(st.sampled_from("RP"), min_size=n, max_size=n))
    axes = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    turns = draw(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), min_size=n, max_size=n))
    return random_tree(n, parents, kinds, axes, turns, draw(st.integers(0, 2 ** 32 - 1)))


def subtree(model, j):
    """Bodies carried by body j, j included."""
    out = {j}
    for i in range(j + 1, model.nbodies + 1):
        if model.parent[i] in out:
            out.add(i)
    return out


def check_tree_structure(model, split):
    """Claims 19–20 on a tree in base-to-tip order (one coordinate per body, coordinate k moves body k+1):
    H_kj = 0 for unrelated bodies; H_kj (k ≥ j) depends only on coordinates of bodies carried by j, on the
    path from j to k or carried by k (so H_jj never on q_j); the table of generating bodies (notes B.4)."""
    n = model.nv
    for k in range(n):
        for j in range(k + 1):
            bj, bk = j + 1, k + 1
            if bk not in subtree(model, bj):
                assert split.mass_matrix[k, j] == 0 and (k, j) not in split.dependencies
                continue
            path = set()
            x = bk
            while x != bj:
                path.add(x)
                x = model.parent[x]
            allowed = (path | subtree(model, bk)) - {bj}
            used = {int(str(s)[1:]) for s in split.dependencies.get((k, j), ())}
            assert used <= allowed, (k, j, used, allowed)
    for i in range(n):
        body = model.body_names[i + 1]
        gb = split.generating_bodies[f"q{i + 1}"]
        rel = {g: [tuple(split.relation(body, b) for b in pair) for pair in gb[g]] for g in gb}
        for r, pair in zip(rel["centrifugal"], gb["centrifugal"]):
            assert pair[0] == pair[1] and r == ("carried", "carried")
        for r, pair in zip(rel["coriolis"], gb["coriolis"]):
            assert pair[0] != pair[1] and set(r) <= {"itself", "carried"} and "carried" in r
        for r in rel["gyroscopic"]:
            assert "unrelated" not in r and ("carrier" in r or sorted(r) == ["carried", "itself"])


@settings(max_examples=12, deadline=None)
@given(trees())
def test_random_trees(model):
    """Random 3–6-body trees of revolute and prismatic joints: the symbolic H, h + g, g equal CRBA/RNEA;
    the numeric twin equals the symbolic split; the tree structure and the tree formulas (7)–(10) of
    statement 2 (base-to-tip numbering)."""
    rng = np.random.default_rng(0)
    eqs = equations_of_motion(model)
    check_against_kernels(model, eqs, [], rng, states=2)
    split = split_inertial_forces(model)
    check_twin(model, split, [], rng, states=1)
    check_tree_structure(model, split)
    q, qd = model.random_configuration(rng), rng.normal(size=model.nv)
    twin = numeric_split(model, q, qd)
    formulas = tree_formulas(model, twin.derivatives, qd)
    assert all(close(a, b) for a, b in zip(formulas, (twin.centrifugal, twin.coriolis, twin.gyroscopic)))


def multi_dof_model():
    """A tree with every joint type of plain coordinates: Universal, Cylindrical, Planar, Fixed, and skew
    axes and placements (numeric)."""
    rng = np.random.default_rng(7)
    b = mb.ModelBuilder(gravity=(0.0, -9.81, 0.0), name="multi-dof")
    for name in "abcde":
        b.add_body(name, mass=rng.uniform(0.5, 2.0), com=rng.uniform(-0.3, 0.3, 3), inertia=rng.uniform(0.2, 0.3, 3))
    b.add_joint("u", mb.Universal((0, 0, 1), (1, 0, 0)), "ground", "a")
    b.add_joint("c", mb.Cylindrical((0, 1, 0)), "a", "b", placement=(np.eye(3), (0.5, 0.1, 0.0)))
    b.add_joint("p", mb.Planar(), "b", "c", placement=(mb.rotation_about((1, 0, 0), np.pi / 2).round(), (0, 0.4, 0)))
    b.add_joint("w", mb.Fixed(), "c", "d", placement=(np.eye(3), (0.2, 0.0, 0.1)))
    b.add_joint("r", mb.Revolute((0, 1, 1)), "a", "e", placement=(mb.rotation_about((1, 1, 0), 0.3), (0, 0, 0.5)))
    return b.build()


def test_multi_dof_joints():
    """Universal, Cylindrical, Planar and Fixed joints and a skew axis: symbolic equations against the
    kernels; the exact CRBA derivatives against central differences of crba (error O(ε²) ≈ 1e-9 for
    ε = 1e-5, entries O(1): tolerance 1e-7) and the Christoffel symbols against rnea."""
    model = multi_dof_model()
    rng = np.random.default_rng(1)
    check_against_kernels(model, equations_of_motion(model), [], rng, states=2)
    q = model.random_configuration(rng)
    qd = rng.normal(size=model.nv)
    H, dH = mass_matrix_derivatives(model, q)
    eps = 1e-5
    for k in range(model.nv):
        e = np.zeros(model.nq)
        e[k] = eps
        fd = (mb.crba(model, q + e) - mb.crba(model, q - e)) / (2 * eps)
        assert np.max(np.abs(dH[k] - fd)) < 1e-7
    h = np.einsum("ijk,j,k->i", christoffel_symbols(model, q), qd, qd)
    assert close(h, mb.bias_forces(model, q, qd) - mb.gravity_forces(model, q))


def test_generated_code_simulation_matches_kernels():
    """A 6-DoF arm (the universal manipulator) from the generated equations and from the O(N) kernels,
    fixed-step RK4, h = 1e-3, 1 s. A fixed step, not an adaptive one: both runs then integrate the same ODE
    with the same steps, so they differ only by the rounding of the two right-hand sides (≈ 1e-14 relative)
    carried by the flow — measured 7e-16 in q and 5e-15 in q̇ — while the integration error, the same for
    both, is not part of the difference (it is 8e-14 here against DOP853 at rtol 1e-13); an adaptive method
    would choose its steps from error estimates that differ by rounding. The bound 1e-10 leaves a factor of
    more than 1e4. A torque callback (the Python path) agrees as well."""
    model = manipulators.universal()
    q0 = np.array([0.1, -0.2, 0.3, 0.2, 0.5, 0.1])
    v0 = np.array([0.5, -0.3, 1.0, 0.2, -0.8, 2.0])
    runs = [mb.simulate(model, q0, v0, 1.0, method="RK4", h=1e-3, formulation=f) for f in ("symbolic", "tree")]
    assert runs[0].info["formulation"] == "symbolic" and runs[0].info["path"] == "compiled"
    assert np.max(np.abs(runs[0].q - runs[1].q)) < 1e-10
    assert np.max(np.abs(runs[0].v - runs[1].v)) < 1e-10

    def tau(t, q, v):
        return -0.5 * v + np.sin(t)

    runs = [mb.simulate(model, q0, v0, 0.05, method="RK4", h=1e-3, formulation=f, tau=tau)
            for f in ("symbolic", "tree")]
    assert np.max(np.abs(runs[0].v - runs[1].v)) < 1e-12
