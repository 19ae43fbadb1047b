"""Automatic derivation of the stabilized reaction equations of a DAE (seed 000, Sec. 1–2).

The user states a system whose unknown constraint reactions ``N`` enter linearly,

    Ẋ = B(X) N + F(X),      f_i(X) = 0,  i = 1..m                       (seed 000, eqs. 1.1, 1.2)

as sympy expressions, and :func:`derive` does what the authors' computer-algebra system did:

* finds the relative degree ``r_i`` of every constraint by Lie-differentiating ``f_i`` along the dynamics
  until ``N`` appears (eq. 2.1). A coefficient of ``N`` that is not identically zero but vanishes on the
  constraint manifold (the seed's ``(τ, μ) r α̇`` term in ``ḟ1``, which is ``−r f4 U``) is dropped, as
  the seed does in Sec. 3: it is tested numerically on points of the manifold (found by Gauss–Newton
  projection of random points, or supplied by the user);
* forms the rows ``A_i(X)`` and the free terms ``φ_i(X)`` of ``d^{r_i} f_i/dt^{r_i} = A_i N + φ_i``
  (eq. 2.1) and the stabilized right-hand side ``φ_i(X, λ) = φ_i(X) + Σ_k c_{ik} f_i^{(k)}`` with the
  coefficients of ``(s + λ_i)^{r_i}`` by default (eqs. 2.4–2.8; the two coefficients of the second-order law
  may be given independently);
* eliminates common subexpressions (``sympy.cse``) and writes a Python module of ``@njit(cache=True)``
  functions (``A``/``φ``, ``Ẋ = B N + F``, residuals, the stabilized right-hand side) into an on-disk
  cache keyed by a hash of the expressions, so numba's own cache is reused by later processes.

Example (a pendulum in Cartesian coordinates, the textbook index-3 DAE)::

    >>> import sympy as sp
    >>> x, y, u, w, L, g, lam = sp.symbols("x y u w L g Lambda")
    >>> dae = derive([x, y, u, w], [lam], F=[u, w, 0, -g], B=[[0], [0], [-2 * x], [-2 * y]],
    ...              constraints=[x**2 + y**2 - L**2], params=[L, g], param_values=[1.0, 9.81])
    >>> dae.relative_degrees
    (2,)
"""
import os
import textwrap
from dataclasses import dataclass, field
from math import comb

import numpy as np
import sympy as sp

from multibody.codegen import function_body
from multibody.errors import ModelError

#: bumped whenever the generated source changes shape (part of the cache key)
CODEGEN_VERSION = 6


def default_cache_dir():
    """Folder of the generated modules: ``multibody.cache.cache_dir("dae")``, keyed on the package's
    fingerprint so that a changed kernel never meets stale compiled code."""
    from multibody.cache import cache_dir

    return cache_dir("dae")


@dataclass
class DAE:
    """The derived stabilization data of ``Ẋ = B N + F``, ``f = 0`` (seed 000, eqs. 2.1–2.9).

    ``derivatives[i]`` lists ``f_i, f_i', ..., f_i^{(r_i - 1)}`` (the N-free Lie derivatives, eq. 2.1);
    ``A`` (m × m) and ``phi0`` (m) give ``f_i^{(r_i)} = A_i N + φ_i(X)``; ``dropped`` records the
    coefficients of N that vanish on the manifold only and were dropped (constraint, order).
    """

    states: tuple
    reactions: tuple
    params: tuple
    param_values: np.ndarray
    F: sp.Matrix
    B: sp.Matrix
    constraints: tuple
    relative_degrees: tuple
    derivatives: list
    A: sp.Matrix
    phi0: sp.Matrix
    dropped: list = field(default_factory=list)
    names: tuple = ()

    @property
    def n(self):
        return len(self.states)

    @property
    def m(self):
        return len(self.reactions)

    @property
    def rmax(self):
        return max(self.relative_degrees)

    def coefficients(self, lam, second_order=None):
        """The stabilization coefficients ``c[i, k]`` of ``Σ_k c_ik f_i^{(k)}`` (k < r_i), shape (m, rmax).

        Default: the coefficients of ``(s + λ_i)^{r_i}``, i.e. ``λ_i`` for ``r_i = 1`` (eq. 2.5) and
        ``(λ_i², 2 λ_i)`` for ``r_i = 2`` (eq. 2.4). ``second_order`` optionally gives, per constraint of
        relative degree 2, the two independent coefficients ``(c0, c1)`` of ``f̈ + c1 ḟ + c0 f = 0``
        (seed 000, remark after eq. 2.5); ``None`` entries keep the default.
        """
        lam = np.broadcast_to(np.asarray(lam, dtype=float), (self.m,))
        if np.any(lam < 0) or not np.all(np.isfinite(lam)):
            raise ModelError(f"stabilization gains must be finite and >= 0, got {lam}", element="lambda")
        c = np.zeros((self.m, self.rmax))
        for i, r in enumerate(self.relative_degrees):
            for k in range(r):
                c[i, k] = comb(r, k) * lam[i] ** (r - k)
        if second_order is not None:
            for i, pair in enumerate(second_order):
                if pair is None:
                    continue
                if self.relative_degrees[i] != 2:
                    raise ModelError(f"second-order coefficients given for constraint {self.names[i]!r} of "
                                     f"relative degree {self.relative_degrees[i]}; expected 2",
                                     element=self.names[i])
                c[i, 0], c[i, 1] = float(pair[0]), float(pair[1])
        return c

    def compile(self, solver="dls", cache_dir=None):
        """Generate and import the numba module of this DAE (see :func:`generate_module`)."""
        return generate_module(self, solver=solver, cache_dir=cache_dir)


# ----------------------------------------------------------------------------------------------------
# relative degree
def _as_matrix(obj, shape, what):
    M = sp.Matrix(obj)
    if M.shape != shape:
        if shape[1] == 1 and M.shape == (1, shape[0]):
            M = M.T
        else:
            raise ModelError(f"{what} must have shape {shape}, got {M.shape}", element=what)
    return M


def _lambdify(args, exprs):
    return sp.lambdify(args, exprs, modules="math", cse=True)


def _project_points(states, params, pvals, eqs, rng, npts, box, tries=60):
    """Points on {eqs = 0}: minimum-norm Gauss–Newton from random points of ``box`` (for the manifold test)."""
    n = len(states)
    g = _lambdify([states, params], list(eqs))
    J = _lambdify([states, params], sp.Matrix(eqs).jacobian(sp.Matrix(states)).tolist())
    lo, hi = box
    pts = []
    for _ in range(tries):
        X = lo + (hi - lo) * rng.random(n)
        ok = False
        for _it in range(60):
            try:
                r = np.array(g(X, pvals), dtype=float)
                Jm = np.array(J(X, pvals), dtype=float)
            except (ValueError, ZeroDivisionError, OverflowError):
                break
            if not np.all(np.isfinite(r)) or not np.all(np.isfinite(Jm)):
                break
            if np.max(np.abs(r)) < 1e-13:
                ok = True
                break
            dX = np.linalg.lstsq(Jm, -r, rcond=None)[0]
            X = X + dX
        if ok:
            pts.append(X)
            if len(pts) >= npts:
                break
    return pts


def _is_zero(c):
    """Identically zero (cheap symbolic test). An expression that is not zero at a random point is not zero:
    that numeric probe comes first, so ``simplify`` runs only on the candidates for zero."""
    if c == 0:
        return True
    if _nonzero_somewhere(c):
        return False
    if c.count_ops() < 60:
        return sp.simplify(c) == 0
    return False


def _nonzero_somewhere(c, seed=1):
    """True when ``c`` is clearly nonzero (relative to the size of its terms) at one of two random points of
    (0.3, 1.3)ⁿ; False when it vanishes there or cannot be evaluated (no conclusion)."""
    syms = sorted(c.free_symbols, key=str)
    rng = np.random.default_rng(seed)
    terms = sp.Add.make_args(sp.expand(c)) if c.count_ops() < 400 else (c,)
    for _ in range(2):
        at = {x: sp.Float(v) for x, v in zip(syms, 0.3 + rng.random(len(syms)))}
        try:
            val = complex(c.xreplace(at).evalf())
            size = sum(abs(complex(t.xreplace(at).evalf())) for t in terms)
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return False
        if np.isfinite(val) and np.isfinite(size) and abs(val) > 1e-9 * size:
            return True
    return False


def _generic_scale(exprs, states, params, pvals, rng, box, npts=5):
    """Typical magnitude of ``exprs`` at random points of ``box`` (reference for the manifold test)."""
    fn = _lambdify([states, params], list(exprs))
    lo, hi = box
    scale = 0.0
    for _ in range(npts):
        X = lo + (hi - lo) * rng.random(len(states))
        try:
            v = np.abs(np.array(fn(X, pvals), dtype=float))
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if np.all(np.isfinite(v)):
            scale = max(scale, float(np.max(v)))
    return scale


def _vanishes_on(expr_list, states, params, pvals, points, generic_scale):
    """True if every expression is (numerically) zero at all ``points`` of the manifold."""
    if not points:
        return False
    fn = _lambdify([states, params], list(expr_list))
    worst = 0.0
    for X in points:
        vals = np.abs(np.array(fn(X, pvals), dtype=float))
        worst = max(worst, float(np.max(vals)))
    return worst <= 1e-8 * max(1.0, generic_scale)


def derive(states, reactions, F, B, constraints, params=(), param_values=None, names=None,
           relative_degrees=None, manifold_points=None, sample_box=(-1.0, 1.0), max_order=4, seed=0,
           simplify=False):
    """Derive relative degrees, ``A(X)`` and ``φ(X)`` of ``Ẋ = B N + F``, ``f = 0`` (seed 000, eqs. 2.1–2.9).

    Parameters
    ----------
    states, reactions, params : sequences of sympy symbols (X, N and constant parameters).
    F : n expressions; B : n × m expressions (N enters linearly, eq. 1.1).
    constraints : m expressions ``f_i(X, params)`` (eq. 1.2).
    param_values : numeric parameter values used for the manifold test (default 1.0 each).
    relative_degrees : optional override (then only checked to make N appear at that order).
    manifold_points : optional consistent states (rows) used to test whether a coefficient of N vanishes
        on the manifold; by default points are found by Gauss–Newton projection of random points of
        ``sample_box`` onto ``{f = 0}`` and the hidden constraints found so far.
    simplify : run ``sympy.simplify`` on A and φ (slow; CSE is always applied at code generation).

    Raises ``ModelError`` when N never appears (up to ``max_order``), or when ``A`` is singular at every
    sample point of the manifold (no vector relative degree).
    """
    X = sp.Matrix(list(states))
    Nv = sp.Matrix(list(reactions))
    P = tuple(params)
    n, m = len(X), len(Nv)
    F = _as_matrix(F, (n, 1), "F")
    B = _as_matrix(B, (n, m), "B")
    fs = [sp.sympify(f) for f in constraints]
    if len(fs) != m:
        raise ModelError(f"{len(fs)} constraints for {m} reactions; the method needs as many constraints as "
                         f"unknown reactions (seed 000, eq. 2.6)", element="constraints")
    names = tuple(names) if names is not None else tuple(f"f{i + 1}" for i in range(m))
    pvals = np.ones(len(P)) if param_values is None else np.asarray(param_values, dtype=float)
    if len(pvals) != len(P):
        raise ModelError(f"{len(pvals)} parameter values for {len(P)} parameters", element="param_values")
    allowed = set(X) | set(P)
    for i, f in enumerate(fs):
        extra = f.free_symbols - allowed
        if extra:
            raise ModelError(f"constraint {names[i]!r} depends on {sorted(map(str, extra))}, which are neither "
                             f"states nor parameters", element=names[i])
    rhs = B * Nv + F
    rng = np.random.default_rng(seed)
    box = (np.broadcast_to(np.asarray(sample_box[0], float), (n,)),
           np.broadcast_to(np.asarray(sample_box[1], float), (n,)))

    derivs = [[f] for f in fs]
    rdeg = [None] * m
    Arows = [None] * m
    phis = [None] * m
    dropped = []
    hidden = []  # N-free derivatives found so far (hidden constraints)
    for order in range(1, max_order + 1):
        pending = [i for i in range(m) if rdeg[i] is None]
        if not pending:
            break
        points = None
        for i in pending:
            d = derivs[i][-1]
            L = (sp.Matrix([d]).jacobian(X) * rhs)[0]
            coeff = [sp.diff(L, Nk) for Nk in Nv]
            free = L.xreplace(dict(zip(Nv, [0] * m)))
            nonzero = [c for c in coeff if not _is_zero(c)]
            if relative_degrees is not None:
                if order < relative_degrees[i]:
                    if nonzero:
                        dropped.append((names[i], order))
                    nonzero = []
                elif not nonzero:
                    raise ModelError(f"constraint {names[i]!r}: N does not appear in derivative {order}, "
                                     f"relative degree {relative_degrees[i]} was requested", element=names[i])
            elif nonzero:
                if points is None:
                    if manifold_points is not None:
                        points = [np.asarray(p, float) for p in manifold_points]
                    else:
                        points = _project_points(X, P, pvals, fs + hidden, rng, 6, box)
                scale = _generic_scale(nonzero, X, P, pvals, rng, box)
                if scale > 0 and _vanishes_on(nonzero, X, P, pvals, points, scale):
                    dropped.append((names[i], order))
                    nonzero = []
            if nonzero:
                rdeg[i] = order
                Arows[i] = coeff
                phis[i] = free
            else:
                derivs[i].append(free)
                hidden.append(free)
    missing = [names[i] for i in range(m) if rdeg[i] is None]
    if missing:
        raise ModelError(f"the reactions N never appear in the derivatives of {missing} up to order {max_order}: "
                         f"the relative degree is undefined (seed 000, eq. 2.1)", element=missing[0])
    if relative_degrees is not None and tuple(relative_degrees) != tuple(rdeg):
        raise ModelError(f"relative degrees {tuple(rdeg)} found, {tuple(relative_degrees)} requested",
                         element="relative_degrees")
    A = sp.Matrix(Arows)
    phi0 = sp.Matrix(phis)
    if simplify:
        A = A.applyfunc(sp.simplify)
        phi0 = phi0.applyfunc(sp.simplify)
    dae = DAE(states=tuple(X), reactions=tuple(Nv), params=P, param_values=pvals, F=F, B=B,
              constraints=tuple(fs), relative_degrees=tuple(rdeg), derivatives=derivs, A=A, phi0=phi0,
              dropped=dropped, names=names)
    # A must be nonsingular somewhere on the manifold (a vector relative degree exists)
    pts = [np.asarray(p, float) for p in manifold_points] if manifold_points is not None else \
        _project_points(X, P, pvals, fs + hidden, rng, 4, box)
    if pts:
        fA = _lambdify([X, P], A.tolist())
        ok = False
        for Xp in pts:
            try:
                Am = np.array(fA(Xp, pvals), dtype=float)
            except (ValueError, ZeroDivisionError, OverflowError):
                continue
            if np.all(np.isfinite(Am)) and np.linalg.matrix_rank(Am) == m:
                ok = True
                break
        if not ok:
            raise ModelError("A(X) of eq. (2.6) is singular at every sample point of the constraint manifold: "
                             "the system has no vector relative degree (seed 000, Sec. 2)", element="A")
    return dae


# ----------------------------------------------------------------------------------------------------
# code generation
def _unpack(states, params, xname="x", pname="params"):
    lines = [f"{s} = {xname}[{k}]" for k, s in enumerate(states)]
    lines += [f"{s} = {pname}[{k}]" for k, s in enumerate(params)]
    return lines


SOLVERS = {
    "dls": ("multibody.kernels.stabilization", "solve_dls"),
    "exact": ("multibody.kernels.stabilization", "solve_exact"),
}


def source(dae, solver="dls"):
    """Python source of the numba module of ``dae`` (see :func:`generate_module`)."""
    n, m, rmax, npar = dae.n, dae.m, dae.rmax, len(dae.params)
    if isinstance(solver, str):
        if solver not in SOLVERS:
            raise ModelError(f"reaction solver {solver!r} is unknown; expected one of {sorted(SOLVERS)} or a "
                             f"(module, function) pair", element="solver")
        smod, sfun = SOLVERS[solver]
    else:
        smod, sfun = solver
    # safe names for the symbols
    sym_states = [sp.Symbol(f"_x{k}") for k in range(n)]
    sym_params = [sp.Symbol(f"_p{k}") for k in range(npar)]
    sym_N = [sp.Symbol(f"_N{k}") for k in range(m)]
    sym_c = [[sp.Symbol(f"_k{i}_{k}") for k in range(rmax)] for i in range(m)]
    sub = dict(zip(dae.states, sym_states))
    sub.update(zip(dae.params, sym_params))
    subN = dict(zip(dae.reactions, sym_N))

    def S(e):
        return sp.sympify(e).xreplace(sub)

    unpack = _unpack(sym_states, sym_params)
    # stabilized phi(X, lambda) (eqs. 2.7, 2.8)
    phi = []
    for i in range(m):
        e = S(dae.phi0[i])
        for k in range(dae.relative_degrees[i]):
            e = e + sym_c[i][k] * S(dae.derivatives[i][k])
        phi.append(e)
    unpack_c = [f"{sym_c[i][k]} = coef[{i * rmax + k}]" for i in range(m) for k in range(rmax)]
    A_out = [(f"A[{i}, {j}]", S(dae.A[i, j])) for i in range(m) for j in range(m)]
    phi_out = [(f"phi[{i}]", phi[i]) for i in range(m)]
    xdot = (dae.B * sp.Matrix(dae.reactions) + dae.F).xreplace(subN)
    xdot_out = [(f"out[{k}]", S(xdot[k])) for k in range(n)]
    # the fused right-hand side: A, φ, the nonzero entries of B and F in one pass of common subexpressions
    B_out = [(f"_b{k}_{j}", S(dae.B[k, j])) for k in range(n) for j in range(m) if dae.B[k, j] != 0]
    F_out = [(f"_f{k}", S(dae.F[k])) for k in range(n)]
    fused = [f"out[{k}] = _f{k}" + "".join(f" + _b{k}_{j} * N[{j}]" for j in range(m) if dae.B[k, j] != 0)
             for k in range(n)]
    fused_tail = textwrap.indent("\n".join(fused), "    ")
    res_out = [(f"out[{i * rmax + k}]", S(dae.derivatives[i][k]))
               for i in range(m) for k in range(dae.relative_degrees[i])]
    f_out = [(f"out[{i}]", S(dae.constraints[i])) for i in range(m)]
    unpack_N = [f"{sym_N[j]} = N[{j}]" for j in range(m)]

    coff = npar
    soff = npar + m * rmax
    src = f'''"""Generated by multibody.symbolic.dae (seed 000, eqs. 2.1-2.9) -- do not edit.

states: {[str(s) for s in dae.states]}
reactions: {[str(s) for s in dae.reactions]}
params: {[str(s) for s in dae.params]}
relative degrees: {list(dae.relative_degrees)}
params layout of rhs(t, x, params, out): [model parameters ({npar}) | coefficients c[i, k] (m*rmax = {m * rmax}) | solver parameters]
"""
import math
import numpy as np
from numba import njit
from {smod} import {sfun} as _solve

N_STATES = {n}
N_REACTIONS = {m}
RMAX = {rmax}
N_PARAMS = {npar}
COEF_OFFSET = {coff}
SOLVER_OFFSET = {soff}


@njit(cache=True)
def eval_A_phi(x, params, coef, A, phi):
    """A(X) and phi(X, lambda) of A N = -phi (seed 000, eqs. 2.6-2.8)."""
{function_body(unpack + unpack_c, A_out + phi_out)}


@njit(cache=True)
def eval_xdot(x, N, params, out):
    """Xdot = B(X) N + F(X) (seed 000, eq. 1.1)."""
{function_body(unpack + unpack_N, xdot_out)}


@njit(cache=True)
def eval_constraints(x, params, out):
    """f_i(X) (seed 000, eq. 1.2)."""
{function_body(unpack, f_out)}


@njit(cache=True)
def eval_derivatives(x, params, out):
    """out[i*RMAX + k] = f_i^(k)(X), k < r_i: the N-free derivatives of eq. (2.1) (others untouched)."""
{function_body(unpack, res_out)}


@njit(cache=True)
def reactions(x, params, N):
    """N(X, lambda) = -A^-1(X) phi(X, lambda), eq. (2.9), through the configured solver."""
    w = np.empty(({m} + 1, {m}))
    eval_A_phi(x, params, params[COEF_OFFSET:SOLVER_OFFSET], w[:{m}], w[{m}])
    _solve(w[:{m}], w[{m}], x, params[SOLVER_OFFSET:], N)


@njit(cache=True)
def each_constraints(xs, params, out):
    """eval_constraints of every row of xs into the same row of out."""
    for k in range(xs.shape[0]):
        eval_constraints(xs[k], params, out[k])


@njit(cache=True)
def each_reactions(xs, params, out):
    """reactions of every row of xs into the same row of out."""
    for k in range(xs.shape[0]):
        reactions(xs[k], params, out[k])


@njit(cache=True)
def rhs(t, x, params, out):
    """Stabilized right-hand side: eq. (1.1) with N from eq. (2.9): A, phi, B and F in one pass (one workspace
    [A; phi; N]), N by the solver, Xdot = B N + F."""
    w = np.empty(({m} + 2, {m}))
    A = w[:{m}]
    phi = w[{m}]
    N = w[{m} + 1]
    coef = params[COEF_OFFSET:SOLVER_OFFSET]
{function_body(unpack + unpack_c, A_out + phi_out + B_out + F_out)}
    _solve(A, phi, x, params[SOLVER_OFFSET:], N)
{fused_tail}
'''
    return src


def generate_module(dae, solver="dls", cache_dir=None):
    """Write (once) and import the numba module of ``dae``; returns the module.

    The file name is a hash of the generated source, under ``cache_dir`` (default
    :func:`default_cache_dir`), so identical systems share one file and numba's on-disk cache of its
    ``@njit(cache=True)`` functions. ``solver`` is a key of :data:`SOLVERS` or a ``(module, function)`` pair
    naming an njit function ``solve(A, phi, x, sparams, N)`` that writes ``N`` with ``A N = -phi``.
    """
    src = f"# codegen version {CODEGEN_VERSION}\n" + source(dae, solver=solver)
    mod = import_module_source("_mb_dae_", src, cache_dir)
    mod.dae = dae
    return mod


def import_module_source(prefix, src, cache_dir=None):
    """``multibody.cache.import_generated`` of ``src`` in the DAE cache folder, or in the temporary folder when
    that cannot be written (a read-only home)."""
    from multibody.cache import import_generated

    try:
        return import_generated(prefix, src, "dae", cache_dir)
    except OSError:
        import tempfile

        return import_generated(prefix, src, "dae", os.path.join(tempfile.gettempdir(), "multibody-dae"))
