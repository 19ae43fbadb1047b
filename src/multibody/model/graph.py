"""Topology of a multibody system: the graph of bodies and joints (seed 001, ch. 1 and §3.6).

Pure numpy / pure Python; depends only on :mod:`multibody.errors`.

Vertices are the bodies ``0..n`` (body 0 is the ground, the book's s0); edges are the joints. Joint ``k``
(0-based position ``k`` in ``edges``, the book's arc u_{k+1}) is the pair ``(i_plus, i_minus)``: the arc
*leaves* body ``i_plus`` and *enters* body ``i_minus`` (seed 001, Table 1.1). Matrix columns follow the same
0-based joint positions; rows of S and columns of T are the bodies 1..n (the ground row S0 is separate).

API
---
``Graph(n_bodies, edges, body_names=None, joint_names=None)``
    ``n_bodies`` = n, the number of bodies *besides* the ground; ``edges`` = sequence of ``(i_plus, i_minus)``
    with body indices in ``0..n``. Raises :class:`ModelError` for a self-loop, an index out of range, or a
    body with no path to the ground (a disconnected graph). Loops are allowed: a spanning tree is chosen.

    Attributes (read-only numpy int64 arrays unless stated):
      ``n``, ``m`` (ints: bodies besides the ground, joints); ``i_plus``, ``i_minus`` (m,);
      ``tree_joints`` (n,) joints of the spanning tree, in given order; ``cut_joints`` (m-n,) the others;
      ``parent`` (n+1,) parent body in the spanning tree (``parent[0] = -1``);
      ``parent_joint`` (n+1,) inboard (preceding) joint of each body (``-1`` for the ground);
      ``is_tree`` (bool), ``body_names``, ``joint_names`` (tuples of str).

    Methods:
      ``adjacency()``              (n+1, n+1) adjacency matrix (seed 001, §1.1.2)
      ``incidence_full()``         (n+1, m) incidence matrix of all joints, eq. (1.1) / (3.182)
      ``incidence()``              ``(S0, S)``: S0 (n,), S (n, n), columns = ``tree_joints`` (eqs. 1.2, 1.3)
      ``path_matrix()``            T (n, n): rows = ``tree_joints``, columns = bodies 1..n (§1.1.2)
      ``incidence_blocks()``       :class:`IncidenceBlocks` S0, S, S0*, S*, and the "plus" blocks (§3.6, 3.182–3.185)
      ``path_to_root(body)``       ``(bodies, joints)`` ordered from ``body`` to the ground (§1.1.2)
      ``regular_numbering(method="peel")``  :class:`RegularNumbering` (§1.1.2, §3.6)
      ``numbering(body_order)``    :class:`RegularNumbering` from an explicit parent-first body order
      ``renumbered(numbering=None)``  the same system as a regularly numbered :class:`Graph`
      ``is_regular()``             True when every body's inboard joint has position k-1 and parent < k

Module functions: ``identity_products(S0, S, T) -> (TS, ST, S0T)``, ``identity_residual(S0, S, T) -> float``
(eqs. 1.4, 1.5), ``path_from_incidence(S, T, body) -> list`` (the book's S/T path procedure).

Spanning tree: the joints are scanned in their given order and a joint is kept in the tree unless it closes
a loop with the joints already kept (Kruskal's rule with unit weights); the rejected joints are the cut
joints. So the tree prefers the joints listed first, and a loop-closing joint listed last is the one cut.

Example (the book's Fig. 1.3, Table 1.1)::

    >>> g = Graph(7, [(1, 6), (6, 2), (4, 3), (6, 4), (4, 5), (6, 7), (7, 0)])
    >>> S0, S = g.incidence()
    >>> T = g.path_matrix()
    >>> identity_residual(S0, S, T)
    0.0
    >>> g.path_to_root(3)
    ((3, 4, 6, 7, 0), (2, 3, 5, 6))
"""

from __future__ import annotations

import heapq
from collections import namedtuple

import numpy as np

from multibody.errors import ModelError, shown

__all__ = [
    "Graph",
    "IncidenceBlocks",
    "RegularNumbering",
    "identity_products",
    "identity_residual",
    "path_from_incidence",
]

IncidenceBlocks = namedtuple(
    "IncidenceBlocks",
    ["S0", "S", "S0_star", "S_star", "S0_plus", "S_plus", "S0_star_plus", "S_star_plus"],
)
IncidenceBlocks.__doc__ = """Blocks of the full incidence matrix of a system with cut joints (seed 001, §3.6, eqs. 3.182–3.185).

``S0`` (n,), ``S`` (n, n): tree joints (columns in ``Graph.tree_joints`` order), rows ground / bodies 1..n.
``S0_star`` (n*,), ``S_star`` (n, n*): cut joints (columns in ``Graph.cut_joints`` order).
``*_plus``: the same blocks with the -1 entries replaced by 0 (S+_ia = 1 iff i = i+(a), eq. 3.134).
"""

RegularNumbering = namedtuple(
    "RegularNumbering", ["body_order", "body_index", "joint_order", "joint_index", "parent"]
)
RegularNumbering.__doc__ = """A regular numbering of the spanning tree (seed 001, §1.1.2; §3.6 for several subsystems).

``body_order`` (n+1,): old body index of new body k (``body_order[0] = 0``);
``body_index`` (n+1,): its inverse, new index of old body i.
``joint_order`` (m,): old joint position of the joint at new position p. New positions 0..n-1 are the tree
joints, position k-1 being the inboard joint of new body k (the book's u_k); positions n..m-1 are the cut
joints in their given order. ``joint_index`` (m,): its inverse.
``parent`` (n+1,): parent of new body k in the new numbering, ``parent[k] < k`` (``parent[0] = -1``).
"""


def _readonly(a):
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


class Graph:
    """Graph of bodies 0..n (0 = ground) and joints given as arcs (i+(a), i−(a)) (seed 001, §1.1.1–1.1.2).

    See the module docstring for the full API. Joint positions are 0-based: ``edges[k]`` is the book's
    u_{k+1}; ``i_plus[k]``/``i_minus[k]`` are the bodies the arc leaves/enters (Table 1.1).
    """

    def __init__(self, n_bodies, edges, body_names=None, joint_names=None):
        try:
            n = int(n_bodies)
        except (TypeError, ValueError):
            raise ModelError(f"number of bodies must be an integer >= 0, got {shown(n_bodies)!r}") from None
        if n < 0 or n != n_bodies:
            raise ModelError(f"number of bodies must be an integer >= 0, got {shown(n_bodies)!r}")
        edges = list(edges)
        m = len(edges)
        self.n = n
        self.m = m
        if body_names is None:
            body_names = ["ground"] + [f"body{i}" for i in range(1, n + 1)]
        if joint_names is None:
            joint_names = [f"joint{k + 1}" for k in range(m)]
        body_names = tuple(str(s) for s in body_names)
        joint_names = tuple(str(s) for s in joint_names)
        if len(body_names) != n + 1:
            raise ModelError(f"expected {n + 1} body names (ground first), got {len(body_names)}")
        if len(joint_names) != m:
            raise ModelError(f"expected {m} joint names, got {len(joint_names)}")
        self.body_names = body_names
        self.joint_names = joint_names

        ip = np.empty(m, dtype=np.int64)
        im = np.empty(m, dtype=np.int64)
        for k, e in enumerate(edges):
            jn = f"joint '{joint_names[k]}'"
            try:
                a, b = e
                if int(a) != a or int(b) != b:
                    raise TypeError
                a, b = int(a), int(b)
            except (TypeError, ValueError):
                raise ModelError(
                    f"{jn}: expected a pair of body indices (i_plus, i_minus), got {shown(e)!r}", element=jn
                ) from None
            for v in (a, b):
                if not 0 <= v <= n:
                    raise ModelError(
                        f"{jn}: body index {v} out of range; expected 0..{n} (0 = ground)", element=jn
                    )
            if a == b:
                raise ModelError(
                    f"{jn} connects body '{body_names[a]}' to itself; a joint must join two different bodies",
                    element=jn,
                )
            ip[k], im[k] = a, b
        self.i_plus = _readonly(ip)
        self.i_minus = _readonly(im)
        self._spanning_tree()

    # ------------------------------------------------------------------ construction
    def _spanning_tree(self):
        """Spanning tree by scanning the joints in given order; joints closing a loop are cut (seed 001, §3.6)."""
        n, m = self.n, self.m
        root = list(range(n + 1))

        def find(x):
            while root[x] != x:
                root[x] = root[root[x]]
                x = root[x]
            return x

        tree, cut = [], []
        for k in range(m):
            ra, rb = find(int(self.i_plus[k])), find(int(self.i_minus[k]))
            if ra == rb:
                cut.append(k)
            else:
                root[ra] = rb
                tree.append(k)
        r0 = find(0)
        lost = [i for i in range(1, n + 1) if find(i) != r0]
        if lost:
            i = lost[0]
            name = f"body '{self.body_names[i]}'"
            others = ", ".join(repr(self.body_names[j]) for j in lost[1:6])
            more = f" (also unconnected: {others}{', ...' if len(lost) > 6 else ''})" if len(lost) > 1 else ""
            raise ModelError(
                f"{name} (index {i}) has no path to the ground: no chain of joints joins it to body 0; "
                f"expected every body to be connected to the ground directly or through other bodies{more}",
                element=name,
            )
        self.tree_joints = _readonly(np.array(tree, dtype=np.int64))
        self.cut_joints = _readonly(np.array(cut, dtype=np.int64))
        self.is_tree = not cut

        # orient the tree from the ground (breadth-first, children in joint order)
        nbr = [[] for _ in range(n + 1)]
        for k in tree:
            a, b = int(self.i_plus[k]), int(self.i_minus[k])
            nbr[a].append((k, b))
            nbr[b].append((k, a))
        parent = np.full(n + 1, -1, dtype=np.int64)
        pjoint = np.full(n + 1, -1, dtype=np.int64)
        children = [[] for _ in range(n + 1)]
        seen = [False] * (n + 1)
        seen[0] = True
        queue = [0]
        head = 0
        while head < len(queue):
            v = queue[head]
            head += 1
            for k, w in nbr[v]:
                if not seen[w]:
                    seen[w] = True
                    parent[w] = v
                    pjoint[w] = k
                    children[v].append(w)
                    queue.append(w)
        self._bfs = queue
        self.parent = _readonly(parent)
        self.parent_joint = _readonly(pjoint)
        self._children = [tuple(sorted(c, key=lambda w: pjoint[w])) for c in children]
        # column of each tree joint in S / row in T
        pos = np.full(m, -1, dtype=np.int64)
        pos[self.tree_joints] = np.arange(n)
        self._tree_pos = pos

    # ------------------------------------------------------------------ matrices
    def adjacency(self):
        """Adjacency matrix, (n+1) x (n+1), 1 where two bodies share a joint (seed 001, §1.1.2)."""
        A = np.zeros((self.n + 1, self.n + 1), dtype=np.int64)
        A[self.i_plus, self.i_minus] = 1
        A[self.i_minus, self.i_plus] = 1
        return A

    def incidence_full(self):
        """Full incidence matrix, rows bodies 0..n, columns joints 0..m-1 (seed 001, eq. 1.1 corrected; eq. 3.182).

        S_ia = +1 if i = i+(a), −1 if i = i−(a), 0 otherwise.
        """
        S = np.zeros((self.n + 1, self.m), dtype=np.int64)
        cols = np.arange(self.m)
        S[self.i_plus, cols] = 1
        S[self.i_minus, cols] = -1
        return S

    def incidence(self):
        """``(S0, S)`` of the spanning tree: S0 = ground row (n,), S = rows 1..n (n, n) (seed 001, eqs. 1.2, 1.3).

        Columns are the tree joints in ``tree_joints`` order (all joints, in given order, for a tree).
        """
        full = self.incidence_full()[:, self.tree_joints]
        return full[0].copy(), full[1:].copy()

    def path_matrix(self):
        """Path matrix T (n x n) of the spanning tree, built by walking each path (seed 001, §1.1.2).

        Rows are the tree joints (``tree_joints`` order), columns the bodies 1..n. T_ai = +1 if joint a lies on
        the path from the ground to body i and points toward the ground, −1 if it points toward body i, 0 if it
        is not on the path. T is computed from the paths, not by inverting S, so ``identity_products`` checks
        the book's relations (1.4), (1.5) independently.
        """
        n = self.n
        T = np.zeros((n, n), dtype=np.int64)
        for v in self._bfs[1:]:  # parents before children: column v = column parent(v) + the inboard joint of v
            p = int(self.parent[v])
            if p:
                T[:, v - 1] = T[:, p - 1]
            k = int(self.parent_joint[v])
            # the arc points toward the ground when it enters the parent, i.e. i−(a) = parent(v)
            T[self._tree_pos[k], v - 1] = 1 if int(self.i_minus[k]) == p else -1
        return T

    def incidence_blocks(self):
        """Blocks S0, S (tree joints) and S0*, S* (cut joints) with their "plus" parts (seed 001, eqs. 3.182–3.185, 3.134).

        The reduced system (§3.6) is the spanning tree; the cut joints are ``cut_joints``. S+ keeps only the +1
        entries (S+_ia = 1 iff i = i+(a)).
        """
        full = self.incidence_full()
        tree = full[:, self.tree_joints]
        cut = full[:, self.cut_joints]
        tp = np.where(tree > 0, tree, 0)
        cp = np.where(cut > 0, cut, 0)
        return IncidenceBlocks(
            tree[0].copy(), tree[1:].copy(), cut[0].copy(), cut[1:].copy(),
            tp[0].copy(), tp[1:].copy(), cp[0].copy(), cp[1:].copy(),
        )

    # ------------------------------------------------------------------ paths
    def _check_body(self, body):
        if not (isinstance(body, (int, np.integer)) and 0 <= body <= self.n):
            raise ModelError(f"body index {body!r} out of range; expected 0..{self.n}")
        return int(body)

    def path_to_root(self, body):
        """Ordered path from ``body`` to the ground in the spanning tree (seed 001, §1.1.2).

        Returns ``(bodies, joints)``: ``bodies = (body, parent, ..., 0)`` and ``joints`` the preceding joints
        passed on the way (0-based joint positions), so ``joints[k]`` joins ``bodies[k]`` and ``bodies[k+1]``.
        """
        v = self._check_body(body)
        bodies, joints = [v], []
        while v != 0:
            joints.append(int(self.parent_joint[v]))
            v = int(self.parent[v])
            bodies.append(v)
        return tuple(bodies), tuple(joints)

    # ------------------------------------------------------------------ numbering
    def is_regular(self):
        """True if the numbering is regular: the tree joints come first, the inboard joint of body k is joint
        position k-1 (the book's u_k) and the parent of body k has a smaller index (seed 001, §1.1.2)."""
        n = self.n
        if not np.array_equal(self.tree_joints, np.arange(n)):
            return False
        ks = np.arange(1, n + 1)
        return bool(np.all(self.parent_joint[1:] == ks - 1) and np.all(self.parent[1:] < ks))

    def regular_numbering(self, method="peel"):
        """A regular numbering of the spanning tree: parent[k] < k and the inboard joint of body k is u_k (seed 001, §1.1.2).

        ``method``:
          ``"peel"`` — the book's leaf peeling (§1.1.2): terminal bodies get the largest free numbers, are
          removed, and the new terminal bodies get the next largest. Each subsystem hanging from the ground
          gets a contiguous range of numbers (§3.6, rules 1–3), subsystems in the order of their ground joints;
          terminal bodies peeled together are numbered in increasing order of their old index.
          ``"dfs"`` — depth-first preorder from the ground, children in the order of their joints (every
          subtree is a contiguous range).
          ``"stable"`` — the parent-first order closest to the given one (always the smallest available old
          index next); the identity when the given numbering is already regular.

        Returns a :class:`RegularNumbering`. Cut joints keep their relative order, after the tree joints.
        """
        n = self.n
        ch = self._children
        if method == "peel":
            order = [0]
            for r in ch[0]:
                # bodies of the subsystem rooted at r
                sub, stack = [], [r]
                while stack:
                    v = stack.pop()
                    sub.append(v)
                    stack.extend(ch[v])
                remaining = {v: len(ch[v]) for v in sub}
                leaves = sorted(v for v in sub if remaining[v] == 0)
                rounds = []
                while leaves:
                    rounds.append(leaves)
                    nxt = []
                    for v in leaves:
                        p = int(self.parent[v])
                        if p != 0:
                            remaining[p] -= 1
                            if remaining[p] == 0:
                                nxt.append(p)
                    leaves = sorted(nxt)
                # the last round gets the smallest numbers of the range
                for rd in reversed(rounds):
                    order.extend(rd)
        elif method == "dfs":
            order, stack = [], [0]
            while stack:
                v = stack.pop()
                order.append(v)
                stack.extend(reversed(ch[v]))
        elif method == "stable":
            order, heap = [], [0]
            while heap:
                v = heapq.heappop(heap)
                order.append(v)
                for w in ch[v]:
                    heapq.heappush(heap, w)
        else:
            raise ModelError(f"unknown numbering method {method!r}; expected 'peel', 'dfs' or 'stable'")
        return self.numbering(order)

    def numbering(self, body_order):
        """The :class:`RegularNumbering` given by an explicit body order (new body k = old ``body_order[k]``).

        Raises :class:`ModelError` unless ``body_order`` is a permutation of 0..n starting with the ground in
        which every body comes after its parent in the spanning tree (a regular numbering, seed 001, §1.1.2).
        """
        n = self.n
        body_order = np.array(body_order, dtype=np.int64).reshape(-1)
        if (len(body_order) != n + 1 or body_order[0] != 0
                or not np.array_equal(np.sort(body_order), np.arange(n + 1))):
            raise ModelError(f"body order must be a permutation of 0..{n} starting with 0 (the ground)")
        body_index = np.empty(n + 1, dtype=np.int64)
        body_index[body_order] = np.arange(n + 1)
        joint_order = np.concatenate(
            [self.parent_joint[body_order[1:]], self.cut_joints]
        ).astype(np.int64)
        joint_index = np.empty(self.m, dtype=np.int64)
        joint_index[joint_order] = np.arange(self.m)
        parent = np.full(n + 1, -1, dtype=np.int64)
        parent[1:] = body_index[self.parent[body_order[1:]]]
        bad = np.flatnonzero(parent[1:] >= np.arange(1, n + 1))
        if len(bad):
            k = int(bad[0]) + 1
            name = f"body '{self.body_names[body_order[k]]}'"
            raise ModelError(
                f"{name} is numbered {k} but its parent '{self.body_names[self.parent[body_order[k]]]}' is "
                f"numbered {parent[k]}; a regular numbering needs every parent numbered before its children",
                element=name,
            )
        return RegularNumbering(
            _readonly(body_order), _readonly(body_index), _readonly(joint_order),
            _readonly(joint_index), _readonly(parent),
        )

    def renumbered(self, numbering=None):
        """The same system renumbered regularly, arc directions unchanged (seed 001, §1.1.2, Fig. 1.6).

        ``numbering`` is a :class:`RegularNumbering` (default: ``regular_numbering()``). In the result, body k
        is old body ``body_order[k]`` and joint position p is old joint ``joint_order[p]``; its S and T are
        upper triangular and ``is_regular()`` holds.
        """
        nb = self.regular_numbering() if numbering is None else numbering
        bi = nb.body_index
        edges = [(int(bi[self.i_plus[k]]), int(bi[self.i_minus[k]])) for k in nb.joint_order]
        return Graph(
            self.n, edges,
            body_names=[self.body_names[i] for i in nb.body_order],
            joint_names=[self.joint_names[k] for k in nb.joint_order],
        )

    def __repr__(self):
        return f"Graph(n_bodies={self.n}, joints={self.m}, cut_joints={len(self.cut_joints)})"


# ---------------------------------------------------------------------- identities and paths
def identity_products(S0, S, T):
    """The products of the book's fundamental relations: ``(T S, S T, S0 T)`` (seed 001, eqs. 1.4, 1.5).

    For a tree, T S = S T = E (n x n) and S0 T = −[1 ... 1] (Tᵀ S0ᵀ = −1_n); these also hold when several
    joints touch the ground (a forest, seed 001 §3.6).
    """
    S0 = np.asarray(S0)
    S = np.asarray(S)
    T = np.asarray(T)
    return T @ S, S @ T, S0 @ T


def identity_residual(S0, S, T):
    """Largest deviation from T S = E, S T = E and S0 T = −1 (seed 001, eqs. 1.4, 1.5); 0 for a valid pair."""
    TS, ST, S0T = identity_products(S0, S, T)
    n = np.asarray(S).shape[0]
    if n == 0:
        return 0.0
    E = np.eye(n)
    return float(max(np.abs(TS - E).max(), np.abs(ST - E).max(), np.abs(S0T + 1).max()))


def path_from_incidence(S, T, body):
    """Ordered preceding arcs from body ``body`` (1..n) to the ground, read from S and T only (seed 001, §1.1.2).

    The book's procedure: the preceding arc of s_k is the unique a with S_ka ≠ 0 and T_ak ≠ 0; the preceding
    vertex is the other end of arc a (the ground when column a of S has no other nonzero). Returns the list
    of arc indices (columns of S, 0-based) in order along the path from ``body`` to s0.
    """
    S = np.asarray(S)
    T = np.asarray(T)
    n = S.shape[0]
    k = int(body)
    if not 1 <= k <= n:
        raise ModelError(f"body index {body!r} out of range; expected 1..{n}")
    arcs = []
    while k != 0:
        cand = np.flatnonzero((S[k - 1] != 0) & (T[:, k - 1] != 0))
        if len(cand) != 1:
            raise ModelError(
                f"body {k}: expected exactly one preceding arc (S_ka != 0 and T_ak != 0), found {len(cand)}"
            )
        a = int(cand[0])
        arcs.append(a)
        others = [i for i in np.flatnonzero(S[:, a]) if i != k - 1]
        k = others[0] + 1 if others else 0
        if len(arcs) > n:
            raise ModelError("S and T do not describe a tree: the path does not reach the ground")
    return arcs
