"""The polynomial algebra in which a Model's symbolic equations are computed.

Every quantity of the recursions of :mod:`multibody.symbolic.equations` — placements, motion subspaces,
inertias, the entries of H(q), h(q, q̇), g(q) and of the seed 004 split — is a polynomial in

* ``s_k = sin q_k``, ``c_k = cos q_k`` for each angle coordinate (Revolute, the angle of Cylindrical and
  Planar, both angles of Universal),
* the displacement coordinates (Prismatic, Cylindrical, Planar) and the rates ``q̇``,
* the model's parameters (masses, lengths, … when symbolic; sines and cosines of symbolic angles are pairs
  like the joint angles),

with rational (or, for models with non-integer numbers, floating-point) coefficients. sympy's sparse
polynomial rings (``sympy.polys.rings``) multiply such polynomials ten to thirty times faster than its
expression trees, and :meth:`ModelAlgebra.reduce` writes each ``s_k²`` as ``1 − c_k²``: a canonical form,
so an identity (the zero power of the gyroscopic forces, seed 004 eq. 5) is proved by reducing to 0.

Expressions are made only at the end (:meth:`ModelAlgebra.expr`): the shorter of the forms without sin²
and without cos², collected over the monomials of the coordinates and rates, common factors of each
coefficient pulled out (``factor_terms``). sympy's ``trigsimp`` and ``fu`` do not pay here: on the
manipulators of seed 004 they took 1.1–1.4 s per mass-matrix entry (41 s for all of H of the 6-joint
universal manipulator) for at most a quarter fewer operations (H₁₁ of the angular manipulator: 54 → 41
with ``fu``), so they are not used. The helpers :func:`trig_reduce` and :func:`is_zero` do
the same reduction on plain sympy expressions (for comparing with expressions written by hand).
"""
import numpy as np
import sympy as sp
from sympy.polys.polyutils import parallel_dict_from_expr
from sympy.polys.rings import ring

from multibody.errors import ModelError
from multibody.model.joints import CYLINDRICAL, PLANAR, REVOLUTE, UNIVERSAL

__all__ = ["ModelAlgebra", "coordinate_symbols", "trig_reduce", "is_zero"]

#: the model arrays whose entries may carry parameters
PARAMETER_ARRAYS = ("mass", "h", "inertia_o", "jplace_R", "jplace_p", "gravity")


def coordinate_symbols(n):
    """The symbols ``q1 … qn`` and ``qd1 … qdn`` (the paper's q_i and q̇_i, seed 004 §1)."""
    return sp.symbols(f"q1:{n + 1}"), sp.symbols(f"qd1:{n + 1}")


def trig_reduce(expr, eliminate=sp.sin):
    """``expr`` expanded (sines and cosines of sums and multiples too), with every power ``f(x)**k`` (k ≥ 2)
    of ``f = eliminate`` (sin or cos) rewritten through sin² + cos² = 1, so that f appears at most linearly:
    the canonical form of a polynomial in the sines and cosines of independent angles (two such
    polynomials are equal as functions iff their forms are)."""
    other = sp.cos if eliminate is sp.sin else sp.sin
    e = sp.expand(sp.expand_trig(expr))

    def rewrite(p):
        x = p.base.args[0]
        return eliminate(x) ** (p.exp % 2) * (1 - other(x) ** 2) ** (p.exp // 2)

    e = e.replace(lambda p: p.is_Pow and p.base.func is eliminate and p.exp.is_Integer and p.exp >= 2, rewrite)
    return sp.expand(e)


def is_zero(expr):
    """True when ``expr``, a polynomial in sines and cosines (and anything else), vanishes identically
    (its canonical form :func:`trig_reduce` is 0)."""
    return trig_reduce(expr) == 0


def angle_coordinates(model):
    """Indices (in q) of the coordinates that enter through their sine and cosine."""
    out = []
    for i in range(1, model.nbodies + 1):
        jt, iq = int(model.jtype[i]), int(model.idx_q[i])
        out += {REVOLUTE: [iq], CYLINDRICAL: [iq], UNIVERSAL: [iq, iq + 1], PLANAR: [iq + 2]}.get(jt, [])
    return out


class ModelAlgebra:
    """The polynomial ring of a model's equations (see the module docstring).

    Attributes: ``q``, ``qd`` (the coordinate and rate symbols), ``ring``, ``sin`` / ``cos`` (dicts: index of
    an angle coordinate -> ring generator), ``coordinate`` (index -> generator of a displacement
    coordinate), ``rate`` (the rate generators), ``parameters`` (the model's symbols)."""

    def __init__(self, model):
        self.q, self.qd = coordinate_symbols(model.nq)
        values = [x for k in PARAMETER_ARRAYS for x in np.asarray(getattr(model, k), dtype=object).flat]
        exprs = [x for x in values if isinstance(x, sp.Basic) and not x.is_number]
        inexact = any(not float(x).is_integer() for x in values if not isinstance(x, sp.Basic)) or any(
            isinstance(x, sp.Basic) and x.is_number and not x.is_Rational for x in values)
        param_gens = parallel_dict_from_expr(exprs)[1] if exprs else ()
        if any(not (g.is_Symbol or g.func in (sp.sin, sp.cos)) for g in param_gens):
            bad = next(g for g in param_gens if not (g.is_Symbol or g.func in (sp.sin, sp.cos)))
            raise ModelError(f"model '{model.name}': the parameter expression {bad} is not a polynomial in symbols "
                             "and sines/cosines; write the parameters as such polynomials (e.g. a first moment "
                             "instead of a quotient)", element=model.name)
        trig_params = sorted({g.args[0] for g in param_gens if not g.is_Symbol}, key=sp.default_sort_key)
        symbol_gens = sorted((g for g in param_gens if g.is_Symbol), key=str)
        #: every symbol of the model's parameters (also those inside sines and cosines), sorted by name
        self.parameters = tuple(sorted(set().union(*(e.free_symbols for e in exprs)), key=str))
        angles = angle_coordinates(model)
        trig = [(sp.sin(self.q[k]), sp.cos(self.q[k])) for k in angles] + [(sp.sin(x), sp.cos(x))
                                                                            for x in trig_params]
        self._dummies = [(sp.Dummy(f"s{k}"), sp.Dummy(f"c{k}")) for k in range(len(trig))]
        displacements = [self.q[k] for k in range(model.nq) if k not in angles]
        gens = [d for pair in self._dummies for d in pair] + displacements + list(self.qd) + symbol_gens
        self.ring, *G = ring(gens, sp.RR if inexact else sp.QQ)
        npairs = len(trig)
        self._pairs = [(2 * k, 2 * k + 1) for k in range(npairs)]
        self.sin = {k: G[2 * j] for j, k in enumerate(angles)}
        self.cos = {k: G[2 * j + 1] for j, k in enumerate(angles)}
        self.coordinate = dict(zip([k for k in range(model.nq) if k not in angles], G[2 * npairs:]))
        self.rate = G[2 * npairs + len(displacements):2 * npairs + len(displacements) + model.nq]
        #: ring generators that are variables (not parameters): trig pairs of the angles, displacements, rates
        self._nvar = 2 * len(angles)
        self._variables = list(range(2 * len(angles))) + list(range(2 * npairs, 2 * npairs + len(displacements)
                                                                    + model.nq))
        self._variable_set = set(self._variables)
        self._to_ring = {t: d for pair, dpair in zip(trig, self._dummies) for t, d in zip(pair, dpair)}
        self._from_ring = {d: t for pair, dpair in zip(trig, self._dummies) for t, d in zip(pair, dpair)}
        self.zero = self.ring.zero
        self.one = self.ring.one

    # ---- conversion -------------------------------------------------------------------------------------
    def __call__(self, x):
        """A model number or sympy expression as a ring element (reduced)."""
        if getattr(x, "ring", None) is self.ring:
            return x
        if isinstance(x, sp.Basic):
            e = x.xreplace(self._to_ring)
            try:
                return self.reduce(self.ring.from_expr(e))
            except (ValueError, sp.polys.polyerrors.PolynomialError):
                raise ModelError(f"{x} is not a polynomial in the sines and cosines of the joint angles, the "
                                 "displacements, the rates and the parameters", element=str(x)) from None
        return self.ring(self.ring.domain.convert(float(x)) if self.ring.domain == sp.RR else sp.Rational(x))

    def expr(self, p, tidy=True):
        """The sympy expression of ring element ``p``; ``tidy``: the shorter of the forms without sin² and
        without cos², collected over the monomials of the variables, coefficients factored."""
        if not tidy:
            return p.as_expr().xreplace(self._from_ring)
        best = min((p, self.reduce(p, sp.cos)), key=len)
        groups = {}
        for monom, coeff in best.items():
            key = tuple(monom[k] for k in self._variables)
            rest = tuple(0 if k in self._variable_set else e for k, e in enumerate(monom))
            groups.setdefault(key, {})[rest] = coeff
        terms = []
        for key, coeffs in groups.items():
            c = sp.factor_terms(self.ring.from_dict(coeffs).as_expr().xreplace(self._from_ring))
            monomial = sp.Mul(*[self.ring.symbols[k] ** e for k, e in zip(self._variables, key)])
            terms.append(c * monomial.xreplace(self._from_ring))
        return sp.Add(*terms)

    # ---- algebra ----------------------------------------------------------------------------------------
    def reduce(self, p, eliminate=sp.sin):
        """``p`` with every ``s²`` replaced by ``1 − c²`` (``eliminate=sp.cos``: every ``c²`` by ``1 − s²``), for
        all trig pairs: the canonical form."""
        which = 0 if eliminate is sp.sin else 1
        pairs = [(pair[which], pair[1 - which]) for pair in self._pairs]
        out = {}
        stack = list(p.items())
        while stack:
            monom, coeff = stack.pop()
            for a, b in pairs:
                if monom[a] >= 2:
                    m = list(monom)
                    m[a] -= 2
                    stack.append((tuple(m), coeff))
                    m[b] += 2
                    stack.append((tuple(m), -coeff))
                    break
            else:
                out[monom] = out[monom] + coeff if monom in out else coeff
        return self.ring.from_dict({m: c for m, c in out.items() if c})

    def diff(self, p, k):
        """∂p/∂q_k (reduced): ``c ∂p/∂s − s ∂p/∂c`` for an angle, ``∂p/∂q_k`` for a displacement."""
        if k in self.sin:
            s, c = self.sin[k], self.cos[k]
            return self.reduce(p.diff(s) * c - p.diff(c) * s)
        return p.diff(self.coordinate[k])

    def coordinates_in(self, p):
        """Indices of the coordinates on which ``p`` depends (its sines, cosines or the coordinate itself)."""
        used = {k for k, e in enumerate(np.sum(list(p.itermonoms()), axis=0)) if e} if p else set()
        gens = self.ring.gens
        out = {k for k in self.sin if gens.index(self.sin[k]) in used or gens.index(self.cos[k]) in used}
        return out | {k for k, g in self.coordinate.items() if gens.index(g) in used}

    def rate_products(self, p):
        """The products of rates in the terms of ``p``: a set of sorted tuples of rate indices with
        repetition, e.g. ``(2, 2)`` for q̇₃², ``(0, 2)`` for q̇₁q̇₃."""
        first = self.ring.gens.index(self.rate[0]) if self.rate else 0
        out = set()
        for monom in p.itermonoms():
            out.add(tuple(k for k in range(len(self.rate)) for _ in range(monom[first + k])))
        return out
