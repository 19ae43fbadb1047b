"""Symbolic equations of motion of a Model: H(q) q̈ + h(q, q̇) + g(q) = τ.

The same recursions as the numeric kernels, on polynomials (:mod:`multibody.symbolic.algebra`):

* the mass matrix H(q) by the composite-rigid-body algorithm (``kernels/crba.py``; RBDA Table 6.2; seed 001
  eq. 3.167, the matrix A), composite inertias summed from the leaves to the root;
* the velocity-dependent generalized inertial forces h(q, q̇) = C(q, q̇) q̇ and the gravity forces g(q) by the
  recursive Newton–Euler algorithm (``kernels/rnea.py``; RBDA Table 5.1; seed 001 eqs. 3.172–3.175) with
  q̈ = 0, once without gravity and once at rest with the ground accelerating by −g.

The kernels work in ground coordinates; here every spatial quantity is kept in the coordinates of its own
body (RBDA's body-coordinate form of the same tables), so each joint brings in the sines and cosines of its
own coordinates only and the polynomials stay small. Spatial vectors are ``[angular; linear]`` about the
body origin; a body's spatial inertia is the triple ``(m, h, I_O)``: mass, first moment ``m c`` and rotational
inertia about the origin (``docs/model-arrays.md``).

Joints with plain coordinates (q̇ = v): Revolute, Prismatic, Cylindrical, Universal, Planar, Fixed; the
quaternion joints (Spherical, Free), loop-closing joints and constraints are refused with ``ModelError``.

Example
-------
>>> import sympy as sp
>>> import multibody as mb
>>> m, l, g = sp.symbols("m l g")
>>> b = mb.ModelBuilder(gravity=(0, 0, -g))
>>> b.add_body("bob", mass=m, com=(0, 0, -l))
'bob'
>>> b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob")
'hinge'
>>> eqs = equations_of_motion(b.build())
>>> eqs.mass_matrix, eqs.gravity.T
(Matrix([[l**2*m]]), Matrix([[g*l*m*sin(q1)]]))
"""
from functools import cached_property

import numpy as np
import sympy as sp

from multibody.errors import ModelError
from multibody.model.joints import CYLINDRICAL, FIXED, PLANAR, PRISMATIC, REVOLUTE, UNIVERSAL
from multibody.symbolic.algebra import ModelAlgebra
from multibody.symbolic.telegin import check_tree

__all__ = ["Equations", "equations_of_motion", "ground_kinematics"]

_CACHE_ATTR = "_multibody_equations"


class Equations:
    """H(q) q̈ + h(q, q̇) + g(q) = τ of a Model (:func:`equations_of_motion`).

    ``q``, ``qd``: the symbols of the coordinates and their rates (model order); ``mass_matrix`` H (nv × nv),
    ``inertial`` h = C(q, q̇) q̇, the velocity-dependent generalized inertial forces (nv × 1), ``gravity`` g(q)
    (nv × 1, on the left-hand side: the generalized gravity force is −g) — sympy matrices, made on first use;
    ``bias`` = h + g. ``parameters``: the model's own symbols. ``algebra`` and ``H``, ``h``, ``g``: the
    polynomial ring and the same quantities as (object) arrays of its elements."""

    def __init__(self, model, algebra, H, h, g):
        self.model = model
        self.algebra = algebra
        self.q, self.qd = algebra.q, algebra.qd
        self.parameters = algebra.parameters
        self.H, self.h, self.g = H, h, g

    def matrix(self, polys):
        """A sympy Matrix of the tidy expressions of an array of ring elements."""
        return sp.Matrix(np.vectorize(self.algebra.expr, otypes=[object])(polys))

    @cached_property
    def mass_matrix(self):
        return self.matrix(self.H)

    @cached_property
    def inertial(self):
        return self.matrix(self.h[:, None])

    @cached_property
    def gravity(self):
        return self.matrix(self.g[:, None])

    @property
    def bias(self):
        """h(q, q̇) + g(q): what ``multibody.bias_forces`` returns numerically."""
        return self.inertial + self.gravity

    def __repr__(self):
        return f"Equations(model={self.model.name!r}, nv={len(self.qd)}, parameters={list(self.parameters)})"


# ---- spatial algebra on 3-tuples of ring elements (RBDA ch. 2, [angular; linear]) -----------------------
def _cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _add(*vs):
    return tuple(sum(x[1:], x[0]) for x in zip(*vs))


def _mul(R, x):
    """R x for R a 3x3 nested tuple."""
    return tuple(_dot(row, x) for row in R)


def _mulT(R, x):
    """Rᵀ x."""
    return tuple(R[0][k] * x[0] + R[1][k] * x[1] + R[2][k] * x[2] for k in range(3))


def _matmul(A, B):
    return tuple(tuple(A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c] for c in range(3)) for r in range(3))


def _motion_to_child(X, m):
    """Motion [ω; v_O] of the parent in child coordinates; the child is at X = (R, p) in the parent."""
    R, p = X
    w, v = m
    return _mulT(R, w), _mulT(R, _add(v, _cross(w, p)))


def _force_to_parent(X, f):
    """Force [n_O; f] on the child, in parent coordinates about the parent origin."""
    R, p = X
    n, f = f
    fr = _mul(R, f)
    return _add(_mul(R, n), _cross(p, fr)), fr


def _inertia_to_parent(X, inertia):
    """Spatial inertia (m, h, I_O) of a body at X = (R, p), in parent coordinates about the parent origin:
    with h_r = R h, h' = h_r + m p and I' = R I Rᵀ + 2(p·h_r)E − p h_rᵀ − h_r pᵀ + m(|p|²E − p pᵀ)."""
    R, p = X
    m, h, I = inertia
    hr = _mul(R, h)
    cols = [_mul(R, _mul(I, R[c])) for c in range(3)]  # the columns of R I Rᵀ
    ph = 2 * _dot(p, hr) + m * _dot(p, p)
    I2 = tuple(tuple(cols[c][r] - p[r] * hr[c] - hr[r] * p[c] - m * p[r] * p[c] + (ph if r == c else 0)
                     for c in range(3)) for r in range(3))
    return m, tuple(hr[k] + m * p[k] for k in range(3)), I2


def _inertia_times(inertia, m6):
    """[[I, h̃], [h̃ᵀ, m E]] [ω; v] = [I ω + h × v; m v − h × ω]."""
    m, h, I = inertia
    w, v = m6
    return _add(_mul(I, w), _cross(h, v)), tuple(m * v[k] - c for k, c in enumerate(_cross(h, w)))


def _motion_cross(a, b):
    """a × b of two motions: [ω₁ × ω₂; ω₁ × v₂ + v₁ × ω₂]."""
    return _cross(a[0], b[0]), _add(_cross(a[0], b[1]), _cross(a[1], b[0]))


def _force_cross(a, f):
    """a ×* f: [ω × n + v × f; ω × f]."""
    return _add(_cross(a[0], f[0]), _cross(a[1], f[1])), _cross(a[0], f[1])


def _dot6(a, b):
    return _dot(a[0], b[0]) + _dot(a[1], b[1])


def _scale(m6, s):
    return tuple(x * s for x in m6[0]), tuple(x * s for x in m6[1])


def _add6(*ms):
    return _add(*(m[0] for m in ms)), _add(*(m[1] for m in ms))


# ---- the model in body coordinates ---------------------------------------------------------------------
class _Tree:
    """Per body i: placement X[i] = (R, p) in the parent, motion-subspace columns S[i] and their bias
    cJ[i] = Ṡ_i q̇_i, spatial inertia (m, h, I_O), all in body coordinates, as ring elements."""

    def __init__(self, model, A):
        self.A = A
        n = model.nbodies
        self.X, self.S, self.cJ, self.inertia = ([None] * (n + 1) for _ in range(4))
        for i in range(1, n + 1):
            RJ, pJ, S = self._joint_motion(model, i)
            Rp = tuple(tuple(A(x) for x in row) for row in model.jplace_R[i])
            pp = tuple(A(x) for x in model.jplace_p[i])
            self.X[i] = (self._reduced(_matmul(Rp, RJ)), _add(pp, _mul(Rp, pJ)))
            self.S[i] = S
            # c_J = Σ_k (∂S/∂q_k q̇_k) q̇: zero unless the columns move with the joint (Universal, Planar)
            iq, iv = model.idx_q[i], model.idx_v[i]
            dS = [tuple(tuple(sum((A.diff(x, iq + k) * A.rate[iv + k] for k in range(model.nq_j[i])), A.zero)
                              for x in half) for half in col) for col in S]
            self.cJ[i] = _add6(self._zero6(), *[_scale(col, A.rate[iv + k]) for k, col in enumerate(dS)])
            self.inertia[i] = (A(model.mass[i]), tuple(A(x) for x in model.h[i]),
                               tuple(tuple(A(x) for x in row) for row in model.inertia_o[i]))

    def _zero6(self):
        z = (self.A.zero,) * 3
        return z, z

    def _reduced(self, M):
        return tuple(tuple(self.A.reduce(x) for x in row) for row in M)

    def _rotation(self, axis, k):
        """rot(a, q_k) = E c + (1 − c) a aᵀ + s ã (Rodrigues) for the unit ``axis`` a (numbers)."""
        A = self.A
        a = [A(x) for x in axis]
        c, s = A.cos[k], A.sin[k]
        skew = ((0, -a[2], a[1]), (a[2], 0, -a[0]), (-a[1], a[0], 0))
        return tuple(tuple((c if r == j else A.zero) + (1 - c) * a[r] * a[j] + s * skew[r][j] for j in range(3))
                     for r in range(3))

    def _joint_motion(self, model, i):
        """(R_J, p_J, S) of tree joint i: the child frame in the joint frame and the columns of the motion
        subspace in child coordinates (docs/model-arrays.md, joint table)."""
        A = self.A
        jt = int(model.jtype[i])
        iq = int(model.idx_q[i])
        a1 = tuple(A(x) for x in model.jaxis[i, 0])
        z = (A.zero,) * 3
        E = tuple(tuple(A.one if r == c else A.zero for c in range(3)) for r in range(3))
        if jt == FIXED:
            return E, z, []
        if jt == REVOLUTE:
            return self._rotation(a1, iq), z, [(a1, z)]
        if jt == PRISMATIC:
            d = A.coordinate[iq]
            return E, tuple(x * d for x in a1), [(z, a1)]
        if jt == CYLINDRICAL:
            d = A.coordinate[iq + 1]
            return self._rotation(a1, iq), tuple(x * d for x in a1), [(a1, z), (z, a1)]
        if jt == UNIVERSAL:
            a2 = tuple(A(x) for x in model.jaxis[i, 1])
            R2 = self._rotation(a2, iq + 1)
            return _matmul(self._rotation(a1, iq), R2), z, [(self._reduced((_mulT(R2, a1),))[0], z), (a2, z)]
        if jt == PLANAR:
            R = self._rotation((0, 0, 1), iq + 2)
            ex, ey, ez = E
            return (R, (A.coordinate[iq], A.coordinate[iq + 1], A.zero),
                    [(z, _mulT(R, ex)), (z, _mulT(R, ey)), (ez, z)])
        name = model.joint_names[i]
        raise ModelError(f"joint '{name}': a {type(model.joints[i].joint).__name__} joint has no symbolic form "
                         "here", element=f"joint '{name}'")


def _crba(model, tree):
    """H(q) by the composite-rigid-body algorithm in body coordinates (RBDA Table 6.2): I^c_i = I_i +
    Σ_children Xᵀ I^c_child X; F = I^c_i S_i; H_ii = S_iᵀ F; H_ji = S_jᵀ F after carrying F to each
    ancestor j. Composite inertias and entries are reduced (canonical, sin² eliminated). The joints' armatures
    (rotor inertias, ``kinematics.armature``) are added to the diagonal."""
    A = tree.A
    nv = model.nv
    H = np.full((nv, nv), A.zero, dtype=object)
    armature = np.asarray(getattr(model, "dof_armature", np.zeros(nv)), dtype=float)
    Ic = list(tree.inertia)
    for i in range(model.nbodies, 0, -1):
        for a, col in enumerate(tree.S[i]):
            k = model.idx_v[i] + a
            F = _inertia_times(Ic[i], col)
            j = i
            while j > 0:
                for b, colj in enumerate(tree.S[j]):
                    H[model.idx_v[j] + b, k] = H[k, model.idx_v[j] + b] = A.reduce(_dot6(colj, F))
                F = _force_to_parent(tree.X[j], F)
                j = model.parent[j]
            if armature[k] != 0.0:
                H[k, k] = A.reduce(H[k, k] + A(armature[k]))
        par = model.parent[i]
        if par > 0:
            m, h, I = _inertia_to_parent(tree.X[i], Ic[i])
            pm, ph, pI = Ic[par]
            Ic[par] = (pm + m, tuple(A.reduce(x + y) for x, y in zip(ph, h)),
                       tuple(tuple(A.reduce(x + y) for x, y in zip(r1, r2)) for r1, r2 in zip(pI, I)))
    return H


def _rnea(model, tree, moving, gravity):
    """τ(q, q̇, q̈ = 0) by the recursive Newton–Euler algorithm in body coordinates (RBDA Table 5.1); with
    ``moving`` false the bodies are at rest (τ = g(q)), with ``gravity`` None the ground does not accelerate
    (τ = h(q, q̇)). Returns an array of reduced ring elements."""
    A = tree.A
    n = model.nbodies
    zero6 = tree._zero6()
    v = [zero6] * (n + 1)
    a = [zero6] * (n + 1)
    if gravity is not None:
        a[0] = (zero6[0], tuple(-A(x) for x in gravity))
    f = [None] * (n + 1)
    for i in range(1, n + 1):
        par = model.parent[i]
        X = tree.X[i]
        a_i = _motion_to_child(X, a[par])
        if moving:
            iv = model.idx_v[i]
            vJ = _add6(zero6, *[_scale(col, A.rate[iv + k]) for k, col in enumerate(tree.S[i])])
            v[i] = _add6(_motion_to_child(X, v[par]), vJ)
            a_i = _add6(a_i, tree.cJ[i], _motion_cross(v[i], vJ))
        a[i] = a_i
        f[i] = _add6(_inertia_times(tree.inertia[i], a[i]),
                     _force_cross(v[i], _inertia_times(tree.inertia[i], v[i])))
    tau = np.full(model.nv, A.zero, dtype=object)
    for i in range(n, 0, -1):
        for k, col in enumerate(tree.S[i]):
            tau[model.idx_v[i] + k] = A.reduce(_dot6(col, f[i]))
        par = model.parent[i]
        if par > 0:
            f[par] = _add6(f[par], _force_to_parent(tree.X[i], f[i]))
    return tau


def equations_of_motion(model, free=False):
    """The symbolic H(q), h(q, q̇) and g(q) of ``model`` (see the module docstring): the mass matrix by the
    composite-rigid-body recursion (RBDA Table 6.2; seed 001 eq. 3.167), h and g by the Newton–Euler
    recursion (RBDA Table 5.1; seed 001 eqs. 3.172–3.175).

    The model may be numeric or symbolic (sympy expressions among its parameters); the coordinates are the
    symbols ``q1 … qn`` and their rates ``qd1 … qdn`` in the model's order. The result is cached on the
    model. Raises ``ModelError`` for quaternion joints, and, unless ``free``, for cut joints and constraints,
    naming the element. ``free=True``: the equations of the spanning tree with the constraints left out (the
    free motion the constraint forces act on, for :mod:`multibody.symbolic.stabilized`)."""
    check_tree(model, constraints=not free)
    if _CACHE_ATTR in model.__dict__:
        return model.__dict__[_CACHE_ATTR]
    A = ModelAlgebra(model)
    tree = _Tree(model, A)
    eqs = Equations(model, A, _crba(model, tree), _rnea(model, tree, True, None),
                    _rnea(model, tree, False, model.gravity))
    eqs.tree = tree
    model.__dict__[_CACHE_ATTR] = eqs
    return eqs


def ground_kinematics(eqs):
    """Per body i (0 = the ground): ``(R, p, ω)``, the rotation and origin of its kernel frame in ground
    coordinates and its angular velocity in ground coordinates, as ring elements of ``eqs.algebra``: the
    placements of ``eqs.tree`` composed from the root (``R_i = R_λ R_J``, ``p_i = p_λ + R_λ p_J``, ``ω_i =
    ω_λ + R_i Σ_k S_k q̇_k``; seed 001 eq. 3.101, RBDA §4.1)."""
    model, A, tree = eqs.model, eqs.algebra, eqs.tree
    z = (A.zero,) * 3
    E = tuple(tuple(A.one if r == c else A.zero for c in range(3)) for r in range(3))
    out = [(E, z, z)]
    for i in range(1, model.nbodies + 1):
        Rp, pp, wp = out[model.parent[i]]
        Rj, pj = tree.X[i]
        R = tree._reduced(_matmul(Rp, Rj))
        iv = model.idx_v[i]
        wJ = _add(z, *[tuple(x * A.rate[iv + k] for x in col[0]) for k, col in enumerate(tree.S[i])])
        out.append((R, tuple(A.reduce(x) for x in _add(pp, _mul(Rp, pj))),
                    tuple(A.reduce(x) for x in _add(wp, _mul(R, wJ)))))
    return out
