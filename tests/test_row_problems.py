"""The row solver (``rows/solver.py``) on a step's problem saved from a run where it once stopped unconverged.

* ``row_problems/jansen_two_feet.npz``: the Jansen walker at t = 1.419 (the rows after its 90 loop rows are
  eliminated: two feet of a planar walker, each a normal and two friction rows, μ = 1). The two feet stand side
  by side, so their normal rows are nearly equal (W's eigenvalues 4.6e-4 to 2.8); Newton crawls on them, and the
  closing sweeps need about 120 sweeps to open one foot — more than the attempts left them (78 of 200) before
  they had a budget of their own. The problem has one solution, found here independently by its piece: the first
  foot open (λ = 0, its normal velocity ≥ 0), the second sticking (its normal and tangent velocities 0, a linear
  system of its two rows). The solver's impulses agree with it within the bound the residual gives:
  |λ − λ*| ≤ ‖∂Φ⁻¹‖ |Φ| with the piece's Jacobian ∂Φ (Φ linear on the piece) and |Φ| ≤ tolerance × max |λ|.
"""
from pathlib import Path

import numpy as np

from multibody.rows.solver import row_solver, solve_unilateral

HERE = Path(__file__).parent / "row_problems"


def _load(name):
    d = np.load(HERE / name)
    return {k: d[k] for k in d.files}


def test_two_feet_side_by_side_converge():
    p = _load("jansen_two_feet.npz")
    W, b, kind, mu, n = p["W"], p["b"], p["kind"], p["mu"], len(p["kind"])
    lam = p["lam0"].copy()
    R = row_solver(n)
    R.law[:] = p["law"]
    tol = float(p["tol"])
    _, rel = solve_unilateral(W.copy(), b.copy(), lam, kind, mu, p["gap"], R.law, 0, n, tol, int(p["iterations"]),
                              R.newton)
    assert rel <= tol
    # the piece: foot 0 (rows 0-2) open, foot 1 (rows 3-5) sticking; the planar walker's first tangent rows are 0
    live = [r for r in range(n) if W[r, r] > 0.0]
    stick = [r for r in live if r >= 3]
    star = np.zeros(n)
    star[stick] = np.linalg.solve(W[np.ix_(stick, stick)], -b[stick])
    u = b + W @ star
    assert star[3] > 0.0 and np.hypot(star[4], star[5]) <= mu[3] * star[3] and u[0] >= 0.0   # the conditions hold
    # Φ on the piece: open rows Φ = λ; sticking rows Φ = ρ u (ρ = 1 / W_nn, 1 / the tangent block's eigenvalue)
    jac = np.zeros((len(live), len(live)))
    for i, r in enumerate(live):
        if r in stick:
            jac[i] = W[r, live] / W[r, r]
        else:
            jac[i, i] = 1.0
    bound = np.abs(np.linalg.inv(jac)).sum(axis=1).max() * tol * np.abs(lam).max()
    assert np.abs(lam[live] - star[live]).max() <= bound
