"""Automatic derivation of relative degrees, A(X) and φ(X, λ) (seed 000, eqs. 2.1–2.9) and code generation."""
import os
import sys

import numpy as np
import pytest
import sympy as sp

from multibody.errors import ModelError
from multibody.symbolic.dae import derive, generate_module, source


def pendulum_dae():
    """Point mass on a massless rod in Cartesian coordinates (the textbook index-3 DAE): N is the
    Lagrange multiplier, ẍ = −2 x N, ÿ = −g − 2 y N, f = x² + y² − L²."""
    x, y, u, w, L, g, Nm = sp.symbols("x y u w L g N")
    return derive([x, y, u, w], [Nm], F=[u, w, 0, -g], B=[[0], [0], [-2 * x], [-2 * y]],
                  constraints=[x**2 + y**2 - L**2], params=[L, g], param_values=[1.0, 9.81]), (x, y, u, w, L, g)


def sled_dae():
    """A skate (knife edge) on the plane: heading ψ turns at a constant rate ω, the reaction N acts along the
    normal (−sin ψ, cos ψ); the nonholonomic constraint f = −u sin ψ + w cos ψ has relative degree 1."""
    x, y, u, w, psi, om, Nn = sp.symbols("x y u w psi omega N")
    return derive([x, y, u, w, psi], [Nn], F=[u, w, 0, 0, om], B=[[0], [0], [-sp.sin(psi)], [sp.cos(psi)], [0]],
                  constraints=[-u * sp.sin(psi) + w * sp.cos(psi)], params=[om], param_values=[0.7])


def test_relative_degree_textbook_pendulum():
    """Holonomic constraint: r = 2 (seed 000, Sec. 2: 'r_i = 2 for holonomic constraints'), and the
    hand-derived f̈ = −4(x² + y²) N + 2u² + 2w² − 2 g y."""
    dae, (x, y, u, w, L, g) = pendulum_dae()
    assert dae.relative_degrees == (2,)
    assert dae.dropped == []
    assert sp.simplify(dae.A[0, 0] - (-4 * x**2 - 4 * y**2)) == 0
    assert sp.simplify(dae.phi0[0] - (2 * u**2 + 2 * w**2 - 2 * g * y)) == 0
    assert sp.simplify(dae.derivatives[0][1] - (2 * x * u + 2 * y * w)) == 0


def test_relative_degree_nonholonomic_sled():
    """Velocity constraint: r = 1 (seed 000, Sec. 2: 'r_i = 1, e.g. nonholonomic')."""
    dae = sled_dae()
    assert dae.relative_degrees == (1,)
    assert sp.simplify(dae.A[0, 0] - 1) == 0


def test_relative_degree_mixed_and_manifold_drop():
    """Two constraints of different degrees; and a coefficient of N that vanishes only on the manifold
    is dropped (seed 000, Sec. 3, the (τ, μ) r α̇ term of ḟ1 that is −r f4 U)."""
    # pendulum (ẍ = −x N, ÿ = −1 − y N) plus a "direction" variable a with ȧ = U that must point along
    # the rod: f2 = sin(a) x − cos(a) y (relative degree 1 in U)
    x, y, u, w, a, Nm, U = sp.symbols("x y u w a N U")
    f2 = sp.sin(a) * x - sp.cos(a) * y
    F = [u, w, 0, -1, 0]
    B = [[0, 0], [0, 0], [-x, 0], [-y, 0], [0, 1]]
    dae = derive([x, y, u, w, a], [Nm, U], F=F, B=B, constraints=[x**2 + y**2 - 1, f2], sample_box=(-1.5, 1.5))
    assert dae.relative_degrees == (2, 1)
    assert dae.dropped == []
    # same system, but the a-dependence of f1 is multiplied by f2 (vanishes on the manifold): r1 = 2
    f1b = x**2 + y**2 - 1 + f2**2
    dae2 = derive([x, y, u, w, a], [Nm, U], F=F, B=B, constraints=[f1b, f2], sample_box=(-1.5, 1.5))
    assert dae2.relative_degrees == (2, 1)
    assert ("f1", 1) in dae2.dropped


def test_relative_degree_hoop_automatic():
    """The hoop of seed 000, Sec. 3: r = (2, 1, 1, 1), found from the raw expressions with manifold points
    obtained automatically (Gauss–Newton projection), and ḟ1's U-coefficient dropped on the manifold."""
    from reference_hoop import hoop_equations

    states, reactions, params, F, B, fs = hoop_equations()
    dae = derive(states, reactions, F, B, fs, params=params, param_values=[1.0, 0.01, 9.81, -2.0],
                 sample_box=([-1, -1, -1, -1, -1, -1, -3.0], [1, 1, 1, 1, 1, 1, -0.1]))
    assert dae.relative_degrees == (2, 1, 1, 1)
    assert ("f1", 1) in dae.dropped


def test_errors():
    x, u, Nn = sp.symbols("x u N")
    with pytest.raises(ModelError, match="never appear"):
        derive([x, u], [Nn], F=[u, 0], B=[[0], [0]], constraints=[x - 1])
    with pytest.raises(ModelError, match="as many constraints"):
        derive([x, u], [Nn], F=[u, 0], B=[[0], [1]], constraints=[x, u])
    y = sp.Symbol("y")
    with pytest.raises(ModelError, match="neither"):
        derive([x, u], [Nn], F=[u, 0], B=[[0], [1]], constraints=[x - y])


def test_codegen_matches_sympy(tmp_path):
    """The generated numba functions agree with direct sympy evaluation; the file is cached by hash."""
    dae, (x, y, u, w, L, g) = pendulum_dae()
    for name in [m for m in sys.modules if m.startswith("_mb_dae_")]:   # imported by an earlier test: write anew
        del sys.modules[name]
    mod = generate_module(dae, cache_dir=str(tmp_path))
    files = [f for f in os.listdir(tmp_path) if f.endswith(".py")]
    assert len(files) == 1
    assert generate_module(dae, cache_dir=str(tmp_path)) is mod
    rng = np.random.default_rng(1)
    lam = 7.0
    coef = dae.coefficients(lam)
    np.testing.assert_array_equal(coef, [[lam**2, 2 * lam]])
    params = np.concatenate([[1.3, 9.81], coef.ravel(), [1e-10]])
    for _ in range(5):
        X = rng.normal(size=4)
        A = np.empty((1, 1))
        phi = np.empty(1)
        mod.eval_A_phi(X, params, params[mod.COEF_OFFSET:mod.SOLVER_OFFSET], A, phi)
        sub = {x: X[0], y: X[1], u: X[2], w: X[3], L: 1.3, g: 9.81}
        f = float(dae.constraints[0].subs(sub))
        fd = float(dae.derivatives[0][1].subs(sub))
        assert A[0, 0] == pytest.approx(float(dae.A[0, 0].subs(sub)), rel=1e-14)
        assert phi[0] == pytest.approx(float(dae.phi0[0].subs(sub)) + lam**2 * f + 2 * lam * fd, rel=1e-12)
    # independent second-order coefficients (seed 000, remark after eq. 2.5)
    c2 = dae.coefficients(lam, second_order=[(3.0, 5.0)])
    np.testing.assert_array_equal(c2, [[3.0, 5.0]])
    assert "def rhs(t, x, params, out)" in source(dae)
