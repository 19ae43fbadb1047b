"""Barycentres of augmented bodies and the vectors d_ij, b_ij (seed 001, §3.2, eqs. 3.13, 3.19–3.21, 3.24).

References: reference/seed001-part2.md §2.4–§2.7 (definitions), §3.1–§3.2 (solar-panel example, Table 3.1),
§3.3–§3.4 (listings GetBaricenterVectors, Get_b), §14.1 claims 5, 6, 8, 9, 10, 12.
"""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from multibody.analysis.barycentric import (
    augmented_inertia,
    b0_vectors,
    b_vectors,
    barycenter_vectors,
    d_vectors,
    inboard_joints,
    subtree_masses,
)
from multibody.errors import ModelError
from multibody.model.graph import Graph


# ---------------------------------------------------------------- literal ports of the book's listings
def _GetBaricenterVectors(S, T, C, m):
    """Line-by-line port of the MATLAB listing (seed 001, §3.2.1; 1-based loops; needs a regular numbering)."""
    n = S.shape[0]
    Bp = np.zeros((3, n))
    ma = np.abs(T @ m)
    for i in range(1, n + 1):
        for a in range(i + 1, n + 1):
            Bp[:, i - 1] += C[i - 1][a - 1] * ma[a - 1] * abs(S[i - 1, a - 1])
        Bp[:, i - 1] += C[i - 1][i - 1] * (np.sum(m) - ma[i - 1])
    return Bp / np.sum(m)


def _Get_b(S, T, B, C):
    """Line-by-line port of the MATLAB listing ``Get_b(S, T, B, C)`` (seed 001, §3.2.1)."""
    n = len(C)
    res = [[None] * n for _ in range(n)]
    for i in range(1, n + 1):
        for j in range(1, n + 1):
            if i == j:
                res[i - 1][j - 1] = -B[:, i - 1]
            elif j < i:
                res[i - 1][j - 1] = -B[:, i - 1] + C[i - 1][i - 1]
            else:
                v = np.abs(S[i - 1, i:n] * T[i:n, j - 1])
                a = int(np.dot(v, np.arange(1, n - i + 1))) + i
                res[i - 1][j - 1] = -B[:, i - 1] + C[i - 1][a - 1]
    return res


# ---------------------------------------------------------------- random trees with joint vectors
@st.composite
def trees(draw, max_n=30):
    n = draw(st.integers(1, max_n))
    labels = [0] + draw(st.permutations(list(range(1, n + 1))))
    edges = []
    for k in range(1, n + 1):
        p = draw(st.integers(0, k - 1))
        a, b = labels[k], labels[p]
        edges.append((a, b) if draw(st.booleans()) else (b, a))
    order = draw(st.permutations(list(range(n))))
    seed = draw(st.integers(0, 2**32 - 1))
    return Graph(n, [edges[i] for i in order]), seed


def _random_data(g, seed):
    rng = np.random.default_rng(seed)
    n = g.n
    S0, S = g.incidence()
    T = g.path_matrix()
    c = np.zeros((n, n, 3))
    for i in range(1, n + 1):
        for a in np.flatnonzero(S[i - 1]):
            c[i - 1, a] = rng.normal(size=3)
    m = rng.uniform(0.2, 3.0, size=n)
    return S0, S, T, c, m


def _geometry(g, c, m):
    """Positions and augmented-body barycentres computed directly from the definitions (all frames aligned,
    r_0 = 0 and c_0a = 0; seed 001 §3.2, eqs. 3.8, 3.19 and Fig. 3.4)."""
    n = g.n
    pos = {int(k): p for p, k in enumerate(g.tree_joints)}  # joint -> column of S
    r = np.zeros((n + 1, 3))
    depth_order = sorted(range(1, n + 1), key=lambda v: len(g.path_to_root(v)[0]))
    for k in depth_order:
        p, a = int(g.parent[k]), pos[int(g.parent_joint[k])]
        joint_point = r[p] + (c[p - 1, a] if p else 0.0)
        r[k] = joint_point - c[k - 1, a]
    paths = {j: g.path_to_root(j) for j in range(1, n + 1)}
    sub = np.array([sum(m[j - 1] for j in range(1, n + 1) if k in paths[j][0]) for k in range(n + 1)])
    M = m.sum()
    Bpos = np.zeros((n + 1, 3))
    b = np.zeros((n, n, 3))
    b0 = np.zeros((n, 3))
    for i in range(1, n + 1):
        acc = m[i - 1] * r[i]
        inboard = pos[int(g.parent_joint[i])]
        for kj in range(n):  # tree joints incident to i
            if kj == inboard:
                acc = acc + (M - sub[i]) * (r[i] + c[i - 1, kj])
            elif g.i_plus[g.tree_joints[kj]] == i or g.i_minus[g.tree_joints[kj]] == i:
                child = int(g.i_plus[g.tree_joints[kj]] + g.i_minus[g.tree_joints[kj]] - i)
                acc = acc + sub[child] * (r[i] + c[i - 1, kj])
        Bpos[i] = acc / M
        b0[i - 1] = r[i] + c[i - 1, inboard] - Bpos[i]
        for j in range(1, n + 1):
            bodies, joints = paths[j]
            if j == i:
                b[i - 1, j - 1] = r[i] - Bpos[i]
            elif i in bodies:
                toward = pos[joints[bodies.index(i) - 1]]
                b[i - 1, j - 1] = r[i] + c[i - 1, toward] - Bpos[i]
            else:
                b[i - 1, j - 1] = b0[i - 1]
    return r, Bpos, b, b0, paths


@settings(max_examples=40, deadline=None)
@given(trees())
def test_against_direct_geometry(data):
    g, seed = data
    S0, S, T, c, m = _random_data(g, seed)
    n, M = g.n, m.sum()
    r, Bpos, b_ref, b0_ref, paths = _geometry(g, c, m)
    B = barycenter_vectors(S, T, c, m)
    b = b_vectors(S, T, B, c)
    b0 = b0_vectors(S, T, B, c)
    d = d_vectors(S, T, c)
    np.testing.assert_allclose(B, Bpos[1:] - r[1:], rtol=0, atol=1e-12)
    np.testing.assert_allclose(b, b_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b0, b0_ref, rtol=0, atol=1e-12)
    # eq. (3.19): Σ_j m_j b_ij = 0; eq. (3.20): d_ij = b_i0 − b_ij, b_i0 = Σ_j m_j d_ij / M
    np.testing.assert_allclose(np.einsum("j,ijk->ik", m, b), 0.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(d, b0[:, None, :] - b, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b0, np.einsum("j,ijk->ik", m, d) / M, rtol=0, atol=1e-12)
    # eq. (3.14): r_i = r_0 − Σ_j d_ji (r_0 = 0); centre of mass r_C = r_0 − Σ_i b_i0
    np.testing.assert_allclose(r[1:], -d.sum(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(m @ r[1:] / M, -b0.sum(axis=0), rtol=0, atol=1e-12)
    # claim 5: d_ij ≠ 0 only if s_i ≤ s_j; d_ii = c_i,inboard
    inb = inboard_joints(S, T)
    for i in range(1, n + 1):
        np.testing.assert_allclose(d[i - 1, i - 1], c[i - 1, inb[i - 1]], rtol=0, atol=0)
        for j in range(1, n + 1):
            if i not in paths[j][0]:
                assert not d[i - 1, j - 1].any()
    # subtree masses |T m| against the definition
    ma = subtree_masses(T, m)
    for a in range(n):
        k = int(g.i_plus[a] if g.i_minus[a] == g.parent[g.i_plus[a]] else g.i_minus[a])  # child of joint a
        assert ma[a] == pytest.approx(sum(m[j - 1] for j in range(1, n + 1) if k in paths[j][0]), rel=1e-14)  # n eps


@settings(max_examples=40, deadline=None)
@given(trees())
def test_matches_book_listings_on_regular_numbering(data):
    g, seed = data
    g = g.renumbered()  # the listings need a regular numbering (seed 001, §3.2.1)
    S0, S, T, c, m = _random_data(g, seed)
    n = g.n
    C = [[c[i, a] for a in range(n)] for i in range(n)]
    B_book = _GetBaricenterVectors(S, T, C, m)
    B = barycenter_vectors(S, T, c, m)
    np.testing.assert_allclose(B, B_book.T, rtol=0, atol=1e-13)
    b_book = _Get_b(S, T, B_book, C)
    b = b_vectors(S, T, B, c)
    for i in range(n):
        for j in range(n):
            np.testing.assert_allclose(b[i, j], b_book[i][j], rtol=0, atol=1e-13)
    assert np.array_equal(inboard_joints(S, T), np.arange(n))


def test_augmented_inertia_parallel_axis():
    g = Graph(6, [(0, 1), (1, 2), (2, 3), (1, 4), (4, 5), (0, 6)])
    S0, S, T, c, m = _random_data(g, 7)
    rng = np.random.default_rng(3)
    J = np.array([(lambda A: A @ A.T + 0.1 * np.eye(3))(rng.normal(size=(3, 3))) for _ in range(6)])
    B = barycenter_vectors(S, T, c, m)
    K = augmented_inertia(d_vectors(S, T, c), m, J)
    Kb = augmented_inertia(b_vectors(S, T, B, c), m, J)
    b0 = b0_vectors(S, T, B, c)
    M = m.sum()
    for i in range(6):
        shift = M * (b0[i] @ b0[i] * np.eye(3) - np.outer(b0[i], b0[i]))
        np.testing.assert_allclose(K[i], Kb[i] + shift, rtol=0, atol=1e-12)  # seed001-part2.md §14.1 claim 12
        for A in (K[i], Kb[i]):
            np.testing.assert_allclose(A, A.T, rtol=0, atol=1e-14)
            assert np.linalg.eigvalsh(A).min() > 0


# ---------------------------------------------------------------- the solar-panel example (Table 3.1)
s10, h10, s12, h12, s21, h21, m1, m2 = sp.symbols("s10 h10 s12 h12 s21 h21 m1 m2", positive=True)


def _panel(directions):
    """Chain 0 —u1— leaf 1 —u2— leaf 2 (seed 001, §3.2.1, Figs. 3.7, 3.8); joint vectors in body axes as rebuilt
    in seed001-part2.md §3.1: c11 = (−s10, h10), c12 = (s12, −h12), c22 = (−s21, −h21)."""
    edges = [(1, 0), (2, 1)] if directions == "inward" else [(0, 1), (1, 2)]
    g = Graph(2, edges)
    S0, S = g.incidence()
    T = g.path_matrix()
    c = np.zeros((2, 2, 2), dtype=object)
    c[0, 0] = (-s10, h10)
    c[0, 1] = (s12, -h12)
    c[1, 1] = (-s21, -h21)
    c[1, 0] = (0, 0)
    m = np.array([m1, m2], dtype=object)
    return S, T, c, m


def _norm(v):
    return sp.sqrt(v[0] ** 2 + v[1] ** 2)


def _same(a, b):
    return sp.simplify(a - b) == 0


@pytest.mark.parametrize("directions", ["inward", "outward"])
def test_solar_panel_table_3_1(directions):
    S, T, c, m = _panel(directions)
    d = d_vectors(S, T, c)
    B = barycenter_vectors(S, T, c, m)
    b = b_vectors(S, T, B, c)
    b0 = b0_vectors(S, T, B, c)
    Mt = m1 + m2
    mu1, mu2 = m1 / Mt, m2 / Mt
    # barycentres as printed in §3.2.1: b11 = −1/(m1+m2) [m1·0 + m2 s12; m1·0 − m2 h12],
    #                                   b22 = −1/(m1+m2) [m2·0 − m1 s21; m2·0 − m1 h21]
    printed_b11 = [-(m1 * 0 + m2 * s12) / Mt, -(m1 * 0 - m2 * h12) / Mt]
    printed_b22 = [-(m2 * 0 - m1 * s21) / Mt, -(m2 * 0 - m1 * h21) / Mt]
    for k in range(2):
        assert _same(b[0, 0][k], printed_b11[k]) and _same(b[1, 1][k], printed_b22[k])
    # Table 3.1 moduli (seed001-part2.md §3.2)
    table = {
        "d11": (d[0, 0], sp.sqrt(s10**2 + h10**2)),
        "d12": (d[0, 1], sp.sqrt((s10 + s12) ** 2 + (h10 + h12) ** 2)),
        "d22": (d[1, 1], sp.sqrt(s21**2 + h21**2)),
        "b11": (b[0, 0], mu2 * sp.sqrt(s12**2 + h12**2)),
        "b10": (b0[0], sp.sqrt((mu2 * s12 + s10) ** 2 + (-mu2 * h12 - h10) ** 2)),
        "b12": (b[0, 1], sp.sqrt((mu2 * s12 - s12) ** 2 + (-mu2 * h12 + h12) ** 2)),
        "b22": (b[1, 1], mu1 * sp.sqrt(s21**2 + h21**2)),
        "b20": (b0[1], sp.sqrt((-mu1 * s21 + s21) ** 2 + (-mu1 * h21 + h21) ** 2)),
        "b21": (b[1, 0], sp.sqrt((-mu1 * s21 + s21) ** 2 + (-mu1 * h21 + h21) ** 2)),  # b21 = b20
    }
    for name, (vec, printed) in table.items():
        assert _same(_norm(vec) ** 2, printed**2), name
    assert d[1, 0][0] == 0 and d[1, 0][1] == 0  # d21 = 0
    # vector forms (seed001-part2.md §14.1 claim 10)
    for k in range(2):
        assert _same(b[1, 0][k], b0[1][k])  # b21 = b20
        assert _same(b[0, 0][k], -mu2 * c[0, 1][k])  # b11 = −m2 c12 / M
        assert _same(b[1, 1][k], -mu1 * c[1, 1][k])  # b22 = −m1 c22 / M
        assert _same(b0[0][k], b[0, 0][k] + d[0, 0][k])  # b10 = b11 + d11
        assert _same(b[0, 1][k], b0[0][k] - d[0, 1][k])  # b12 = b10 − d12
        assert _same(b0[1][k], -mu2 * [s21, h21][k])  # b20 = −(m2/M)(s21, h21), parallel to c22
        assert _same(m1 * b[0, 0][k] + m2 * b[0, 1][k], 0)  # eq. (3.19)
        assert _same(m1 * b[1, 0][k] + m2 * b[1, 1][k], 0)


def test_solar_panel_angles_numeric():
    """Angles α_ij of d_ij and β_i of b_i0 in Table 3.1, with the corrected β (seed001-part2.md §3.2, erratum 7).

    Illustrative leaf geometry (not from the book, which gives none): s10 = 0.9, h10 = 0.05, s12 = 0.9,
    h12 = 0.05, s21 = 0.9, h21 = 0.05 m; m1 = 12, m2 = 10 kg.
    """
    S, T, c, m = _panel("inward")
    vals = {s10: 0.9, h10: 0.05, s12: 0.9, h12: 0.05, s21: 0.9, h21: 0.05, m1: 12.0, m2: 10.0}
    f = np.vectorize(lambda e: float(sp.sympify(e).subs(vals)))
    c, m = f(c), f(m)
    d = d_vectors(S, T, c)
    B = barycenter_vectors(S, T, c, m)
    b0 = b0_vectors(S, T, B, c)
    ang = lambda v: np.arctan2(v[1], v[0]) % (2 * np.pi)  # noqa: E731
    x = {str(k): v for k, v in vals.items()}
    mu2 = x["m2"] / (x["m1"] + x["m2"])
    assert ang(d[0, 0]) == pytest.approx(np.pi - np.arctan(x["h10"] / x["s10"]), abs=1e-14)  # α11
    assert ang(d[0, 1]) == pytest.approx(np.pi - np.arctan((x["h10"] + x["h12"]) / (x["s10"] + x["s12"])), abs=1e-14)
    assert ang(d[1, 1]) == pytest.approx(np.pi + np.arctan(x["h21"] / x["s21"]), abs=1e-14)  # α22
    assert ang(b0[1]) == pytest.approx(np.pi + np.arctan(x["h21"] / x["s21"]), abs=1e-14)  # β2 (corrected)
    beta1 = np.pi - np.arctan((x["h10"] + mu2 * x["h12"]) / (x["s10"] + mu2 * x["s12"]))
    assert ang(b0[0]) == pytest.approx(beta1, abs=1e-14)  # β1 (corrected)
    # barycentre of augmented leaf 1: leaf 1 + m2 at joint 2 → B1 − C1 = m2 c12 / M
    np.testing.assert_allclose(B[0], [10 / 22 * 0.9, -10 / 22 * 0.05], rtol=1e-15)
    np.testing.assert_allclose(B[1], [-12 / 22 * 0.9, -12 / 22 * 0.05], rtol=1e-15)


# ---------------------------------------------------------------- errors
def test_errors():
    S = np.eye(2, dtype=int)
    with pytest.raises(ModelError, match="n x n"):
        d_vectors(S, np.eye(3), np.zeros((2, 2, 3)))
    with pytest.raises(ModelError, match="shape"):
        d_vectors(S, S, np.zeros((2, 3, 3)))
    with pytest.raises(ModelError, match="masses"):
        barycenter_vectors(S, S, np.zeros((2, 2, 3)), np.ones(3))
    with pytest.raises(ModelError, match="body 2: expected exactly one joint"):
        inboard_joints(np.array([[1, 1], [0, 0]]), np.array([[1, 1], [0, 0]]))


def test_from_built_model():
    """Two hinged leaves built with ModelBuilder (joint frames at the hinges): the vectors read from the Model
    equal the hand-made c_ia of §3.1 and give the same barycentres (seed001-part2.md §3.1–§3.3)."""
    import multibody as mb
    from multibody.analysis.barycentric import model_joint_vectors

    vals = dict(s10=0.9, h10=0.05, s12=0.8, h12=0.04, s21=0.7, h21=0.03, m1=12.0, m2=10.0)
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    # body frames at the inboard hinges; the centre of mass is −c_ii from the hinge
    b.add_body("leaf1", vals["m1"], com=(vals["s10"], -vals["h10"], 0), inertia=(1.0, 1.0, 1.5))
    b.add_body("leaf2", vals["m2"], com=(vals["s21"], vals["h21"], 0), inertia=(1.0, 1.0, 1.5))
    b.add_joint("hinge1", mb.Revolute(axis=(0, 0, 1)), "ground", "leaf1")
    # joint 2 in leaf 1: C1 + c12 = (s10 + s12, −h10 − h12) from the hinge-1 origin
    b.add_joint("hinge2", mb.Revolute(axis=(0, 0, 1)), "leaf1", "leaf2",
                placement=mb.Placement(translation=(vals["s10"] + vals["s12"], -vals["h10"] - vals["h12"], 0)))
    model = b.build()
    S, T, c, m = model_joint_vectors(model)
    np.testing.assert_allclose(c[0, 0, :2], [-vals["s10"], vals["h10"]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(c[0, 1, :2], [vals["s12"], -vals["h12"]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(c[1, 1, :2], [-vals["s21"], -vals["h21"]], rtol=0, atol=1e-15)
    assert not c[1, 0].any() and not c[:, :, 2].any()
    B = barycenter_vectors(S, T, c, m)
    b_ = b_vectors(S, T, B, c)
    Mt = vals["m1"] + vals["m2"]
    np.testing.assert_allclose(b_[0, 0, :2], -vals["m2"] / Mt * np.array([vals["s12"], -vals["h12"]]),
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(b_[1, 1, :2], -vals["m1"] / Mt * np.array([-vals["s21"], -vals["h21"]]),
                               rtol=0, atol=1e-15)
