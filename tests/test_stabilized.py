"""The stabilized right-hand side of seed 000 (eqs. 2.4–2.9): reaction solve, residual decay, integrators."""
import math

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp

from multibody.errors import ModelError
from multibody.formulations.stabilized_dae import StabilizedSystem, max_residual
from multibody.kernels.stabilization import solve_dls
from multibody.symbolic.dae import derive

G = 9.81


@pytest.fixture(scope="module")
def pendulum():
    """Unit point mass on a rod of length L = 1 in Cartesian coordinates; N is the multiplier."""
    x, y, u, w, L, g, Nm = sp.symbols("x y u w L g N")
    dae = derive([x, y, u, w], [Nm], F=[u, w, 0, -g], B=[[0], [0], [-2 * x], [-2 * y]],
                 constraints=[x**2 + y**2 - L**2], params=[L, g], param_values=[1.0, G])
    return StabilizedSystem(dae)


def test_dls_equals_solve_when_regular():
    rng = np.random.default_rng(0)
    for m in (1, 2, 4, 6):
        for _ in range(20):
            A = rng.normal(size=(m, m)) + 3 * np.eye(m)
            phi = rng.normal(size=m)
            N = np.empty(m)
            solve_dls(A, phi, np.zeros(1), np.array([1e-10]), N)
            assert np.allclose(N, np.linalg.solve(A, -phi), rtol=1e-12, atol=1e-12)


def test_dls_bounded_and_continuous_at_singular_matrix():
    """Exactly singular and nearly singular A: finite, bounded by ‖φ‖/(2ε), continuous in the entries."""
    A = np.array([[1.0, 0.0], [0.0, 0.0]])
    phi = np.array([1.0, 1.0])
    eps_rel = 1e-6
    eps = eps_rel * np.linalg.norm(A)
    N = np.empty(2)
    solve_dls(A, phi, np.zeros(1), np.array([eps_rel]), N)
    assert np.all(np.isfinite(N))
    assert np.linalg.norm(N) <= np.linalg.norm(phi) / (2 * eps) * (1 + 1e-12)
    prev = N.copy()
    for d in np.linspace(-1e-7, 1e-7, 41):
        A[1, 1] = d
        solve_dls(A, phi, np.zeros(1), np.array([eps_rel]), N)
        assert np.all(np.isfinite(N))
        # Tikhonov closed form for a diagonal matrix: N_k = -a φ_k / (a² + ε²)
        e = eps_rel * math.hypot(1.0, d)
        assert N[1] == pytest.approx(-d / (d * d + e * e), rel=1e-9, abs=1e-12)
        assert abs(N[1] - prev[1]) <= 0.1 / eps  # no jump larger than the bound allows per step of d
        prev = N.copy()
    Z = np.zeros((3, 3))
    N3 = np.empty(3)
    solve_dls(Z, np.ones(3), np.zeros(1), np.array([1e-10]), N3)
    assert np.all(np.isfinite(N3))


def test_residual_decay_rate_pendulum(pendulum):
    """From a perturbed start, f̈ + 2λḟ + λ²f = 0 (eq. 2.4): f(t) = (c1 + c2 t) e^{−λt}, checked against the
    closed form with c1 = f(0), c2 = ḟ(0) + λ f(0)."""
    lam = 20.0
    x0 = np.array([1.0 + 1e-3, 0.0, 0.0, 0.5])  # f(0) = 2e-3 + 1e-6, ḟ(0) = 0
    res = pendulum.simulate(x0, 0.5, lam, method="rk4", h=1e-4, save_every=10)
    f = res.residuals["f1"]
    f0 = (1 + 1e-3) ** 2 - 1
    exact = (f0 + lam * f0 * res.t) * np.exp(-lam * res.t)
    assert np.max(np.abs(f - exact)) < 1e-9
    # without stabilization the residual does not decay (eq. 2.2: f = c2 t + c1)
    res0 = pendulum.simulate(x0, 0.5, 0.0, method="rk4", h=1e-4)
    assert abs(res0.residuals["f1"][-1] - f0) < 1e-9


@pytest.mark.parametrize("method,kw", [("rk2", {"h": 1e-4}), ("heun", {"h": 1e-4}), ("rk4", {"h": 1e-3}),
                                       ("dop853", {"rtol": 1e-11, "atol": 1e-12})])
def test_pendulum_matches_minimal_coordinates(pendulum, method, kw):
    """Independent check: the stabilized Cartesian pendulum follows θ̈ = −g sin θ (L = 1) solved separately."""
    th0, om0 = 0.9, 0.0
    x0 = np.array([math.sin(th0), -math.cos(th0), 0.0, 0.0])
    T = 2.0
    res = pendulum.simulate(x0, T, 10.0, method=method, **kw)
    ref = solve_ivp(lambda t, s: [s[1], -G * math.sin(s[0])], (0, T), [th0, om0], method="DOP853",
                    rtol=1e-12, atol=1e-13, dense_output=True)
    th = ref.sol(res.t)[0]
    err = np.max(np.hypot(res.q[:, 0] - np.sin(th), res.q[:, 1] + np.cos(th)))
    tol = {"rk2": 2e-5, "heun": 2e-5, "rk4": 1e-9, "dop853": 1e-8}[method]
    assert err < tol
    assert res.info["steps"] > 0 and res.info["cpu_seconds"] >= 0
    assert max_residual(res)[0] < (1e-6 if method in ("rk2", "heun") else 1e-9)


def test_errors(pendulum):
    with pytest.raises(ModelError, match="unknown"):
        pendulum.simulate(np.array([1.0, 0, 0, 0]), 1.0, 1.0, method="euler")
    with pytest.raises(ModelError, match="whole number"):
        pendulum.simulate(np.array([1.0, 0, 0, 0]), 1.0, 1.0, method="rk2", h=0.3)
    with pytest.raises(ModelError, match="gains"):
        pendulum.simulate(np.array([1.0, 0, 0, 0]), 1.0, -1.0, method="rk2", h=0.1)
