"""Telegin's split of the generalized inertial forces into centrifugal, Coriolis and gyroscopic forces
(seed 004: А. И. Телегин, Вестник ЮУрГУ 2024, 24(1); reference notes seed002-004.md PART B).

For a system with holonomic stationary constraints the equations of dynamics are

    Σ_{j<i} H_ij q̈_j + H_ii q̈_i + Σ_{j>i} H_ji q̈_j + h_ci + h_oi + h_gi = Q_gi                    (1)

with the centrifugal forces h_c (eq. 2: squares of velocities), the Coriolis forces h_o (eq. 3: products
of different velocities) and the gyroscopic forces h_g (eq. 5), all computed from H(q) and its partial
derivatives (:func:`multibody.symbolic.telegin.telegin_split`); h_c + h_o + h_g is the whole
velocity-dependent inertial force, and the gyroscopic forces have zero power, q̇ᵀ h_g ≡ 0 (Thomson–Tait).
:func:`split_inertial_forces` derives H(q) symbolically (:mod:`multibody.symbolic.equations`), splits the
forces exactly and proves the zero power by reducing q̇ᵀ h_g to 0.

The split depends on the order of the coordinates (notes B.3): eqs. 2–5 single out "earlier" and
"later" coordinates. The default order is the model's, base to tip (every body after the body that
carries it), the order of the paper's statements 2 and 3. Example 2 of the paper (a Cartesian manipulator:
slides q1, q2, hinge q3) has the centrifugal forces −a₃s₃q̇₃² and −a₃c₃q̇₃² on q1 and q2 and no
gyroscopic forces; in the reversed order (q3, q2, q1) the same two forces count as gyroscopic, and the q3
equation gets a Coriolis force and an equal and opposite gyroscopic force, −a₃q̇₃(s₃q̇₁ + c₃q̇₂):

>>> from multibody.systems import manipulators
>>> split = split_inertial_forces(manipulators.cartesian(symbolic=True))
>>> split.centrifugal.T, split.gyroscopic.T
(Matrix([[-a3*qd3**2*sin(q3), -a3*qd3**2*cos(q3), 0]]), Matrix([[0, 0, 0]]))
>>> rev = split_inertial_forces(manipulators.cartesian(symbolic=True), order=["q3", "q2", "q1"])
>>> rev.q, rev.centrifugal.T, rev.gyroscopic.T
((q3, q2, q1), Matrix([[0, 0, 0]]), Matrix([[a3*qd1*qd3*sin(q3) + a3*qd2*qd3*cos(q3), -a3*qd3**2*cos(q3), -a3*qd3**2*sin(q3)]]))

Which bodies generate each force (statement 2, the table of notes B.4) is read off the products of
velocities in each term: :attr:`InertialForces.generating_bodies`.

The general formulas (2)–(5) are implemented; the tree and chain forms of statements 2 and 3 (eqs. 7–10,
11–16) are the same numbers with the zero terms left out, which the tests check. Misprints of the paper, as
the notes correct them (B.5, B.9): statement 3's lower limit "i+2" is i+1; eq. (17)'s
"h_o1 = h_g1 = h^g_o1" holds in Examples 1–5 but not in Example 6 (h_o1 = −2a c₃c₅q̇₃q̇₅ ≠ 0), only
h_g1 = h^g_o1 is general; Example 6's printed h_g3 carries a term −I₆ʸs₅q̇₅q̇₆ that belongs to h_o3 (with
it q̇ᵀh_g ≠ 0).
"""
from dataclasses import dataclass

import numpy as np
import sympy as sp

from multibody.symbolic.equations import equations_of_motion
from multibody.symbolic.telegin import permutation, telegin_split

__all__ = ["InertialForces", "split_inertial_forces", "GROUPS"]

#: the three groups of the split, in the paper's order
GROUPS = ("centrifugal", "coriolis", "gyroscopic")


@dataclass(frozen=True)
class InertialForces:
    """The split of :func:`split_inertial_forces`, everything in the coordinate order ``q``.

    ``q``, ``qd``: the coordinate and rate symbols in the order used; ``parameters``: the model's symbols
    (masses, lengths, …); ``mass_matrix`` H; ``centrifugal``
    h_c (eq. 2), ``coriolis`` h_o (eq. 3), ``gyroscopic`` h_g (eq. 5), ``shared`` h^g_o = ½ Ḣ_ii q̇_i (eq. 10,
    the part of both h_o and h_g), ``total`` h = h_c + h_o + h_g (sympy column vectors);
    ``gyroscopic_power`` q̇ᵀ h_g reduced to its canonical form (0, statement 1).

    ``generating_bodies[str(q_i)][group]``: the products of velocities in the group's force on coordinate
    q_i, each as the pair of bodies whose joints have those velocities (e.g. ``("body3", "body3")`` for
    q̇₃²); :meth:`relation` tells carrier, carried or itself (statement 2). ``dependencies[(k, j)]``: the
    coordinates on which H_kj (k ≥ j, positions in ``q``) depends, the paper's table of generalized
    coordinates (ТОК, notes B.7), constant elements left out."""

    model: object
    q: tuple
    qd: tuple
    parameters: tuple
    mass_matrix: sp.Matrix
    centrifugal: sp.Matrix
    coriolis: sp.Matrix
    gyroscopic: sp.Matrix
    shared: sp.Matrix
    total: sp.Matrix
    gyroscopic_power: sp.Expr
    generating_bodies: dict
    dependencies: dict

    def relation(self, body, other):
        """How ``other`` stands to ``body`` in the tree: ``"itself"``, ``"carried"`` (``other`` is carried by
        ``body``: a descendant), ``"carrier"`` (an ancestor) or ``"unrelated"``."""
        m = self.model
        a, b = m.body_index(body), m.body_index(other)
        if a == b:
            return "itself"
        if _is_ancestor(m, a, b):
            return "carried"
        return "carrier" if _is_ancestor(m, b, a) else "unrelated"

    def table(self):
        """The generating bodies as text, one line per coordinate and non-zero group."""
        lines = []
        owner = _coordinate_bodies(self.model)
        for qi in self.q:
            body = owner[str(qi)]
            for group in GROUPS:
                products = self.generating_bodies[str(qi)][group]
                if products:
                    shown = ", ".join(" x ".join(f"{b} ({self.relation(body, b)})" for b in pair) for pair in products)
                    lines.append(f"{qi} ({body}) {group}: {shown}")
        return "\n".join(lines)


def _is_ancestor(model, a, b):
    """True when body a lies on the path from body b to the ground (a ≠ b)."""
    b = model.parent[b]
    while b > 0:
        if b == a:
            return True
        b = model.parent[b]
    return False


def _coordinate_bodies(model):
    """Symbol name of each coordinate -> the name of the body its joint carries."""
    out = {}
    for i in range(1, model.nbodies + 1):
        for k in range(model.idx_v[i], model.idx_v[i] + model.nv_j[i]):
            out[f"q{k + 1}"] = model.body_names[i]
    return out


def split_inertial_forces(model, order=None):
    """The centrifugal, Coriolis and gyroscopic generalized inertial forces of ``model`` (seed 004,
    statement 1, eqs. 1–5 and 10; statements 2 and 3 are their forms for trees and chains in base-to-tip
    order), exactly, from the symbolic H(q) of :func:`multibody.symbolic.equations.equations_of_motion`.

    ``order``: the coordinate order of the split (default: the model's, base to tip), a permutation given
    as indices or names (``"q3"``, ``"<joint>.<coordinate>"`` or a one-coordinate joint's name); the split
    depends on it (see the module docstring). The model may be numeric or symbolic; it must be a tree with
    plain coordinates (``ModelError`` otherwise). Returns :class:`InertialForces`."""
    eqs = equations_of_motion(model)
    A = eqs.algebra
    if order is not None:  # the symbols q1 … qn name the coordinates too
        names = {str(s): k for k, s in enumerate(eqs.q)}
        order = [names.get(x, x) if isinstance(x, str) else x for x in order]
    p = permutation(model, order)
    n = model.nv
    dH_model = np.empty((n, n, n), dtype=object)
    for k, i, j in np.ndindex(n, n, n):
        dH_model[k, i, j] = A.diff(eqs.H[i, j], k)
    H = eqs.H[np.ix_(p, p)]
    dH = dH_model[np.ix_(p, p, p)]
    qd = np.array([A.rate[k] for k in p], dtype=object)
    groups = [np.array([A.reduce(A(x)) for x in g], dtype=object) for g in telegin_split(H, dH, qd)]
    c, o, g, shared = groups
    power = A.reduce(sum(qd * g, A.zero))
    total = c + o + g

    def col(arr):
        return sp.Matrix([A.expr(x) for x in arr])

    owner = _coordinate_bodies(model)
    qs = tuple(eqs.q[k] for k in p)
    generating = {}
    for i, qi in enumerate(qs):
        generating[str(qi)] = {
            name: tuple(sorted(tuple(owner[f"q{r + 1}"] for r in prod) for prod in A.rate_products(arr[i])))
            for name, arr in zip(GROUPS, (c, o, g))}
    dependencies = {}
    for k in range(n):
        for j in range(k + 1):
            used = A.coordinates_in(H[k, j])
            if used:
                dependencies[(k, j)] = tuple(qs[i] for i in range(n) if p[i] in used)
    return InertialForces(model, qs, tuple(eqs.qd[k] for k in p), eqs.parameters, sp.Matrix(np.vectorize(A.expr, otypes=[object])(H)),
                          col(c), col(o), col(g), col(shared), col(total), A.expr(power), generating, dependencies)
