"""Topology: incidence S, path T, regular numbering, cut joints (seed 001, ch. 1 and §3.6).

Reference matrices: reference/seed001-part1.md §2.3 (Fig. 1.3, Table 1.1; Fig. 1.6) and
reference/seed001-part2.md §10.1 (Fig. 3.22, Table 3.2, eqs. 3.182–3.185).
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from multibody.errors import ModelError
from multibody.model.graph import (
    Graph,
    identity_products,
    identity_residual,
    path_from_incidence,
)

# Table 1.1 (seed001-part1.md §2.3.1): arcs u1..u7 as (i+(a), i−(a))
FIG13_EDGES = [(1, 6), (6, 2), (4, 3), (6, 4), (4, 5), (6, 7), (7, 0)]

# seed001-part1.md §2.3.2 (adjacency, corrected rows), §2.3.4 (full S), §2.3.5 (T)
FIG13_ADJ = np.array([
    [0, 0, 0, 0, 0, 0, 0, 1],
    [0, 0, 0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 1, 0, 1, 1, 0],
    [0, 0, 0, 0, 1, 0, 0, 0],
    [0, 1, 1, 0, 1, 0, 0, 1],
    [1, 0, 0, 0, 0, 0, 1, 0],
])
FIG13_S_FULL = np.array([
    [0, 0, 0, 0, 0, 0, -1],
    [1, 0, 0, 0, 0, 0, 0],
    [0, -1, 0, 0, 0, 0, 0],
    [0, 0, -1, 0, 0, 0, 0],
    [0, 0, 1, -1, 1, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [-1, 1, 0, 1, 0, 1, 0],
    [0, 0, 0, 0, 0, -1, 1],
])
FIG13_T = np.array([
    [1, 0, 0, 0, 0, 0, 0],
    [0, -1, 0, 0, 0, 0, 0],
    [0, 0, -1, 0, 0, 0, 0],
    [0, 0, -1, -1, -1, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [1, 1, 1, 1, 1, 1, 0],
    [1, 1, 1, 1, 1, 1, 1],
])

# Fig. 1.6 (seed001-part1.md §2.3.8): Fig. 1.3 renumbered regularly, arc directions unchanged.
# new s1 = old s7, s2 = old s6, s3 = old s4, s4 = old s1, s5 = old s3, s6 = old s5, s7 = old s2
FIG16_BODY_ORDER = [0, 7, 6, 4, 1, 3, 5, 2]
FIG16_EDGES = [(1, 0), (2, 1), (2, 3), (4, 2), (3, 5), (3, 6), (2, 7)]
FIG16_S = np.array([
    [1, -1, 0, 0, 0, 0, 0],
    [0, 1, 1, -1, 0, 0, 1],
    [0, 0, -1, 0, 1, 1, 0],
    [0, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [0, 0, 0, 0, 0, -1, 0],
    [0, 0, 0, 0, 0, 0, -1],
])
FIG16_S0 = np.array([-1, 0, 0, 0, 0, 0, 0])
FIG16_T = np.array([
    [1, 1, 1, 1, 1, 1, 1],
    [0, 1, 1, 1, 1, 1, 1],
    [0, 0, -1, 0, -1, -1, 0],
    [0, 0, 0, 1, 0, 0, 0],
    [0, 0, 0, 0, -1, 0, 0],
    [0, 0, 0, 0, 0, -1, 0],
    [0, 0, 0, 0, 0, 0, -1],
])

# Table 3.2 (seed001-part2.md §10.1): closed-loop system, arcs u1..u10; u8, u9, u10 are cut
FIG322_EDGES = [(5, 0), (6, 4), (0, 2), (1, 2), (1, 7), (3, 2), (0, 4), (4, 3), (0, 7), (5, 6)]
FIG322_S_FULL = np.array([  # eq. (3.182), rows s0..s7, columns u1..u7 | u8 u9 u10
    [-1, 0, 1, 0, 0, 0, 1, 0, 1, 0],
    [0, 0, 0, 1, 1, 0, 0, 0, 0, 0],
    [0, 0, -1, -1, 0, -1, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 1, 0, -1, 0, 0],
    [0, -1, 0, 0, 0, 0, -1, 1, 0, 0],
    [1, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    [0, 1, 0, 0, 0, 0, 0, 0, 0, -1],
    [0, 0, 0, 0, -1, 0, 0, 0, -1, 0],
])
FIG322_S0_PLUS = np.array([0, 0, 1, 0, 0, 0, 1])  # eq. (3.183)
FIG322_S_PLUS = np.array([  # eq. (3.184)
    [0, 0, 0, 1, 1, 0, 0],
    [0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 1, 0],
    [0, 0, 0, 0, 0, 0, 0],
    [1, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0],
])
FIG322_S_STAR_PLUS = np.array([  # eq. (3.185)
    [0, 0, 0], [0, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0],
])
FIG322_S0_STAR_PLUS = np.array([0, 1, 0])


@pytest.fixture
def fig13():
    return Graph(7, FIG13_EDGES)


# ---------------------------------------------------------------- the book's 8-vertex example (Fig. 1.3)
def test_fig13_arrays(fig13):
    assert np.array_equal(fig13.i_plus, [1, 6, 4, 6, 4, 6, 7])
    assert np.array_equal(fig13.i_minus, [6, 2, 3, 4, 5, 7, 0])
    A = fig13.adjacency()
    assert np.array_equal(A, FIG13_ADJ)
    assert np.array_equal(A, A.T) and not A.diagonal().any() and A.sum() == 14
    assert fig13.is_tree and len(fig13.cut_joints) == 0
    assert np.array_equal(fig13.tree_joints, np.arange(7))


def test_fig13_incidence_and_path_matrix(fig13):
    full = fig13.incidence_full()
    assert np.array_equal(full, FIG13_S_FULL)
    # each column: one +1 at i+(a), one −1 at i−(a) (seed001-part1.md §5, claim 2)
    for a in range(7):
        assert full[fig13.i_plus[a], a] == 1 and full[fig13.i_minus[a], a] == -1
        assert np.count_nonzero(full[:, a]) == 2
    S0, S = fig13.incidence()
    assert np.array_equal(S0, FIG13_S_FULL[0]) and np.array_equal(S, FIG13_S_FULL[1:])
    T = fig13.path_matrix()
    assert np.array_equal(T, FIG13_T)
    # (1.4), (1.5)
    TS, ST, S0T = identity_products(S0, S, T)
    assert np.array_equal(TS, np.eye(7)) and np.array_equal(ST, np.eye(7))
    assert np.array_equal(S0T, -np.ones(7))
    assert identity_residual(S0, S, T) == 0.0
    assert np.array_equal(np.linalg.inv(S).round().astype(int), T)  # T = S^{-1} (claim 6)
    # column 7 of T holds only u7 (erratum in §2.3.5)
    assert list(np.flatnonzero(T[:, 6])) == [6]


def test_fig13_paths(fig13):
    S0, S = fig13.incidence()
    T = fig13.path_matrix()
    # tree: s0 — s7 — s6; s6 -> s1, s2, s4; s4 -> s3, s5 (seed001-part1.md §2.3.1)
    assert fig13.path_to_root(3) == ((3, 4, 6, 7, 0), (2, 3, 5, 6))
    assert fig13.path_to_root(7) == ((7, 0), (6,))
    assert fig13.path_to_root(0) == ((0,), ())
    assert list(fig13.parent) == [-1, 6, 6, 4, 6, 4, 7, 0]
    for j in range(1, 8):
        bodies, joints = fig13.path_to_root(j)
        # claim 7: the book's S/T procedure gives the same ordered arcs, and they are the nonzeros of column j
        assert path_from_incidence(S, T, j) == list(joints)
        assert sorted(joints) == list(np.flatnonzero(T[:, j - 1]))
        # claim 5: sign of T is +1 when the arc points toward s0
        for b, a in zip(bodies[1:], joints):
            assert T[a, j - 1] == (1 if fig13.i_minus[a] == b else -1)


def test_fig13_regular_numbering_by_leaf_peeling(fig13):
    nb = fig13.regular_numbering()  # leaf peeling (seed001-part1.md §2.3.8)
    # old s7 (adjacent to s0) becomes s1 and its arc u7 becomes u1 (claim 12); then s6 -> s2, s4 -> s3;
    # the first peeled leaves {s1, s2, s3, s5} take the largest numbers 4..7 (as in Fig. 1.6)
    assert list(nb.body_order[:4]) == [0, 7, 6, 4]
    assert sorted(nb.body_order[4:]) == [1, 2, 3, 5]
    assert nb.joint_order[0] == 6
    assert all(nb.parent[k] < k for k in range(1, 8))
    g = fig13.renumbered(nb)
    assert g.is_regular()
    S0, S = g.incidence()
    T = g.path_matrix()
    assert identity_residual(S0, S, T) == 0.0
    # S and T upper triangular with nonzero diagonals (claim 8)
    for M in (S, T):
        assert np.array_equal(M, np.triu(M)) and np.all(M.diagonal() != 0)
    # claim 9: only rows 1..n-n0 = 1..3 of T have off-diagonal nonzeros (n0 = 4 terminal vertices)
    off = T - np.diag(T.diagonal())
    assert list(np.flatnonzero(np.abs(off).sum(axis=1))) == [0, 1, 2]
    # claim 10: arc indices increase along the path s0 -> s_j
    for j in range(1, 8):
        _, joints = g.path_to_root(j)
        assert list(joints) == sorted(joints, reverse=True)
        assert list(joints)[0] == j - 1


def test_fig16_matrices():
    g = Graph(7, FIG16_EDGES)
    assert g.is_regular()
    S0, S = g.incidence()
    assert np.array_equal(S, FIG16_S) and np.array_equal(S0, FIG16_S0)
    assert np.array_equal(g.path_matrix(), FIG16_T)
    assert identity_residual(S0, S, g.path_matrix()) == 0.0
    # the book's renumbering of Fig. 1.3 yields exactly these arcs
    g13 = Graph(7, FIG13_EDGES)
    r = g13.renumbered(g13.numbering(FIG16_BODY_ORDER))
    assert list(zip(r.i_plus.tolist(), r.i_minus.tolist())) == FIG16_EDGES


@pytest.mark.parametrize("toward_root", [True, False])
def test_uniform_arc_directions(toward_root):
    # claim 11: all arcs toward s0 -> every nonzero of T and diag(S) is +1; all away -> −1
    parent = [0, 1, 1, 2, 2, 3, 0, 7]  # parents of bodies 1..8 (a forest: two joints on s0)
    edges = [(k, p) if toward_root else (p, k) for k, p in enumerate(parent, start=1)]
    g = Graph(8, edges)
    S0, S = g.incidence()
    T = g.path_matrix()
    s = 1 if toward_root else -1
    assert np.all(T[T != 0] == s) and np.all(S.diagonal() == s)
    assert identity_residual(S0, S, T) == 0.0


def test_numbering_methods(fig13):
    for method in ("peel", "dfs", "stable"):
        nb = fig13.regular_numbering(method)
        assert sorted(nb.body_order) == list(range(8))
        assert all(nb.parent[k] < k for k in range(1, 8))
        assert fig13.renumbered(nb).is_regular()
    assert list(fig13.regular_numbering("dfs").body_order) == [0, 7, 6, 1, 2, 4, 3, 5]
    # an already regular numbering is kept by "stable"
    assert list(Graph(7, FIG16_EDGES).regular_numbering("stable").body_order) == list(range(8))
    with pytest.raises(ModelError, match="unknown numbering"):
        fig13.regular_numbering("bfs-ish")


# ---------------------------------------------------------------- closed loops (Fig. 3.22)
def test_fig322_reduced_system_blocks():
    g = Graph(7, FIG322_EDGES)
    assert not g.is_tree
    assert list(g.tree_joints) == list(range(7)) and list(g.cut_joints) == [7, 8, 9]
    full = g.incidence_full()
    assert np.array_equal(full, FIG322_S_FULL)
    assert not full.sum(axis=0).any()  # every column sums to 0 (seed001-part2.md §14.1, claim 3)
    bl = g.incidence_blocks()
    assert np.array_equal(bl.S0, FIG322_S_FULL[0, :7]) and np.array_equal(bl.S, FIG322_S_FULL[1:, :7])
    assert np.array_equal(bl.S0_star, FIG322_S_FULL[0, 7:]) and np.array_equal(bl.S_star, FIG322_S_FULL[1:, 7:])
    assert np.array_equal(bl.S0_plus, FIG322_S0_PLUS)
    assert np.array_equal(bl.S_plus, FIG322_S_PLUS)
    assert np.array_equal(bl.S_star_plus, FIG322_S_STAR_PLUS)
    assert np.array_equal(bl.S0_star_plus, FIG322_S0_STAR_PLUS)
    assert np.array_equal(bl.S0_star + bl.S_star.sum(axis=0), np.zeros(3))  # S0*ᵀ + S*ᵀ 1_n = 0
    assert np.array_equal(bl.S_plus * bl.S, bl.S_plus)  # S+ = S ∘ S+ (claim 4)
    # the reduced system: three joints on body 0 (a forest); T exists and the identities hold
    T = g.path_matrix()
    assert identity_residual(bl.S0, bl.S, T) == 0.0
    assert list(g.parent) == [-1, 2, 0, 2, 0, 0, 4, 1]
    # regular numbering of a reduced system: each subsystem is a contiguous range (seed001-part2.md §10.1)
    nb = g.regular_numbering()
    subsystem_of_old = {0: None}
    for v in range(1, 8):
        bodies, _ = g.path_to_root(v)
        subsystem_of_old[v] = bodies[-2]
    labels = [subsystem_of_old[int(v)] for v in nb.body_order[1:]]
    runs = [labels[0]] + [b for a, b in zip(labels, labels[1:]) if a != b]
    assert sorted(runs) == sorted(set(labels)) == [2, 4, 5]
    r = g.renumbered(nb)
    assert r.is_regular() and list(r.cut_joints) == [7, 8, 9]
    assert [r.joint_names[k] for k in r.cut_joints] == ["joint8", "joint9", "joint10"]


def test_loop_closing_joint_listed_last_is_cut():
    # slider-crank: ground–crank, crank–rod, rod–slider, slider–ground
    g = Graph(3, [(0, 1), (1, 2), (2, 3), (3, 0)])
    assert list(g.cut_joints) == [3] and list(g.tree_joints) == [0, 1, 2]
    assert g.path_to_root(3) == ((3, 2, 1, 0), (2, 1, 0))
    # two joints between the same pair of bodies: the second closes a loop and is cut
    g2 = Graph(2, [(0, 1), (1, 2), (2, 1)])
    assert list(g2.cut_joints) == [2]


# ---------------------------------------------------------------- errors
def test_errors_name_the_element():
    names = ["ground", "base", "arm", "loose"]
    with pytest.raises(ModelError, match="body 'loose'.*no path to the ground") as e:
        Graph(3, [(0, 1), (1, 2)], body_names=names)
    assert e.value.element == "body 'loose'"
    # a component that does not contain the ground
    with pytest.raises(ModelError, match="body 'body2' \\(index 2\\) has no path to the ground"):
        Graph(4, [(0, 1), (2, 3), (3, 4)])
    with pytest.raises(ModelError, match="joint 'j2' connects body 'arm' to itself"):
        Graph(2, [(0, 1), (2, 2)], body_names=names[:3], joint_names=["j1", "j2"])
    with pytest.raises(ModelError, match="joint 'joint2': body index 5 out of range"):
        Graph(2, [(0, 1), (1, 5)])
    with pytest.raises(ModelError, match="expected a pair"):
        Graph(2, [(0, 1), (1,)])
    with pytest.raises(ModelError, match="integer"):
        Graph(-1, [])
    with pytest.raises(ModelError, match="body names"):
        Graph(1, [(0, 1)], body_names=["ground"])
    g = Graph(2, [(0, 1), (1, 2)])
    with pytest.raises(ModelError, match="parent"):
        g.numbering([0, 2, 1])
    with pytest.raises(ModelError, match="permutation"):
        g.numbering([1, 0, 2])
    with pytest.raises(ModelError, match="out of range"):
        g.path_to_root(3)


def test_ground_only():
    g = Graph(0, [])
    S0, S = g.incidence()
    assert S.shape == (0, 0) and g.path_matrix().shape == (0, 0)
    assert identity_residual(S0, S, g.path_matrix()) == 0.0


# ---------------------------------------------------------------- random trees and loops
@st.composite
def trees(draw, min_n=1, max_n=30):
    """Random tree on bodies 0..n with random labels, random arc directions and random joint order."""
    n = draw(st.integers(min_n, max_n))
    labels = [0] + draw(st.permutations(list(range(1, n + 1))))
    edges = []
    for k in range(1, n + 1):
        p = draw(st.integers(0, k - 1))
        a, b = labels[k], labels[p]
        edges.append((a, b) if draw(st.booleans()) else (b, a))
    order = draw(st.permutations(list(range(n))))
    return n, [edges[i] for i in order]


@st.composite
def looped_graphs(draw):
    n, edges = draw(trees(1, 30))
    extra = draw(st.lists(st.tuples(st.integers(0, n), st.integers(0, n)).filter(lambda e: e[0] != e[1]),
                          min_size=1, max_size=6))
    edges = edges + extra
    order = draw(st.permutations(list(range(len(edges)))))
    return n, [edges[i] for i in order]


def _check_tree_structure(g):
    n = g.n
    S0, S = g.incidence()
    T = g.path_matrix()
    TS, ST, S0T = identity_products(S0, S, T)
    assert np.array_equal(TS, np.eye(n, dtype=int))
    assert np.array_equal(ST, np.eye(n, dtype=int))
    assert np.array_equal(S0T, -np.ones(n, dtype=int))
    for j in range(1, n + 1):
        bodies, joints = g.path_to_root(j)
        assert bodies[0] == j and bodies[-1] == 0 and len(joints) == len(bodies) - 1
        pos = [int(np.flatnonzero(g.tree_joints == a)[0]) for a in joints]
        assert path_from_incidence(S, T, j) == pos
        assert sorted(pos) == list(np.flatnonzero(T[:, j - 1]))
    for method in ("peel", "dfs", "stable"):
        nb = g.regular_numbering(method)
        assert all(nb.parent[k] < k for k in range(1, n + 1))
        r = g.renumbered(nb)
        assert r.is_regular()
        assert np.array_equal(r.parent, nb.parent)
        rS0, rS = r.incidence()
        rT = r.path_matrix()
        assert identity_residual(rS0, rS, rT) == 0.0
        assert np.array_equal(rS, np.triu(rS)) and np.all(rS.diagonal() != 0)
        assert np.array_equal(rT, np.triu(rT)) and np.all(rT.diagonal() != 0)
        # the same joints join the same bodies after renumbering
        for p, k in enumerate(nb.joint_order):
            assert nb.body_order[r.i_plus[p]] == g.i_plus[k]
            assert nb.body_order[r.i_minus[p]] == g.i_minus[k]


@settings(max_examples=100, deadline=None)
@given(trees())
def test_random_trees(data):
    n, edges = data
    g = Graph(n, edges)
    assert g.is_tree and len(g.tree_joints) == n
    _check_tree_structure(g)
    # the full incidence matrix of a tree: one +1, one −1 per column
    full = g.incidence_full()
    assert np.all((full == 1).sum(axis=0) == 1) and np.all((full == -1).sum(axis=0) == 1)


@settings(max_examples=100, deadline=None)
@given(looped_graphs())
def test_random_graphs_with_loops(data):
    n, edges = data
    g = Graph(n, edges)
    m = len(edges)
    assert len(g.tree_joints) == n and len(g.cut_joints) == m - n
    assert sorted(list(g.tree_joints) + list(g.cut_joints)) == list(range(m))
    # each cut joint closes a loop: its two bodies are already joined by tree joints listed before it
    for c in g.cut_joints:
        a, b = g.i_plus[c], g.i_minus[c]
        pa, pb = set(g.path_to_root(int(a))[1]), set(g.path_to_root(int(b))[1])
        assert max(pa ^ pb, default=-1) < c  # the tree path between a and b uses only earlier joints
    bl = g.incidence_blocks()
    assert np.array_equal(bl.S0_star + bl.S_star.sum(axis=0), np.zeros(m - n))
    _check_tree_structure(g)


def test_module_docstring_example():
    import doctest

    import multibody.model.graph as graph

    assert doctest.testmod(graph).failed == 0
