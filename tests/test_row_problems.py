"""The row solver (``rows/solver.py``) on a step's problem saved from a run where it once stopped unconverged.

* ``row_problems/jansen_two_feet.npz``: the Jansen walker at t = 1.419 (the rows after its 90 loop rows are
  eliminated: two feet of a planar walker, each a normal and two friction rows, μ = 1). The two feet stand side
  by side, so their normal rows are nearly equal (W's eigenvalues 4.6e-4 to 2.8); Newton crawls on them, and the
  closing sweeps need about 120 sweeps to open one foot — more than the attempts left them (78 of 200) before
  they had a budget of their own. The problem has one solution, found here independently by its piece: the first
  foot open (λ = 0, its normal velocity ≥ 0), the second sticking (its normal and tangent velocities 0, a linear
  system of its two rows). The solver's impulses agree with it within the bound the residual gives:
  |λ − λ*| ≤ ‖∂Φ⁻¹‖ |Φ| with the piece's Jacobian ∂Φ (Φ linear on the piece) and |Φ| ≤ tolerance × max |λ|.
* ``row_problems/gripper_first_touch.npz``: the gripper of ``tests/test_composition.py`` at t = 0.007, the step in
  which its pads first squeeze the box: 10 loop rows (4 independent: two planar cut hinges), then four contacts
  (a ball each: normal and two friction rows, μ = 0.8) on two pads. The box is tilted by 6e-13 rad (the state's
  round-off), so its gaps at the two balls of a pad differ by 1.2e-14 m; closing all four in the step needs the box
  to turn, which the sticking friction rows of both pads forbid (four normal and four sticking rows on four
  freedoms: the box's x, z and turn, and the crank's). The problem's solution has one diagonal pair carrying the
  squeeze, the other two balls open by that 1.2e-14 m; all four loaded, the velocities miss by 4.5e-12 m/s, a
  residual of 2.2e-10 of the largest impulse, which is where Newton stopped before it had its attempt with the
  rows that its best iterate pushes apart held open (``rows/solver.py``). The solution is checked against the piece
  solved independently, and the piece's residual against the round-off of the solve (the floor below), which is
  far below the tolerance: the problem can be solved to its tolerance.
"""
from fractions import Fraction
from pathlib import Path

import numpy as np

from multibody.rows.newton import newton_scratch, residual
from multibody.rows.solver import row_solver, solve_rows, solve_unilateral

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
    assert np.abs(lam[live] - star[live]).max() <= _piece_bound(W, lam, live, stick, tol)


def _piece_bound(W, lam, live, stick, tol):
    """‖∂Φ⁻¹‖ tol max|λ| on the piece (open rows Φ = λ, sticking rows Φ = ρ u, ρ = 1 / W_rr): the distance from the
    piece's solution that a residual within the tolerance allows."""
    jac = np.zeros((len(live), len(live)))
    for i, r in enumerate(live):
        if r in stick:
            jac[i] = W[r, live] / W[r, r]
        else:
            jac[i, i] = 1.0
    return np.abs(np.linalg.inv(jac)).sum(axis=1).max() * tol * np.abs(lam[live]).max()


def _exact_solve(A, B):
    """X with A X = B in rational arithmetic (Gauss–Jordan; A square and regular, lists of Fractions)."""
    n = len(A)
    M = [list(A[i]) + list(B[i]) for i in range(n)]
    for k in range(n):
        p = next(i for i in range(k, n) if M[i][k] != 0)
        M[k], M[p] = M[p], M[k]
        M[k] = [v / M[k][k] for v in M[k]]
        for i in range(n):
            if i != k and M[i][k] != 0:
                f = M[i][k]
                M[i] = [a - f * c for a, c in zip(M[i], M[k])]
    return [row[n:] for row in M]


def _round_off_floor(W, b, lam, nb, n):
    """The round-off of the residual of the solve at the impulses ``lam``, relative to the largest: the floor below
    which no iterate's residual can be told from 0. By the standard bounds (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 2nd ed., §3.1, §10.1; γ_k = kε / (1 − kε)), first order in ε: the Schur complement by the
    Cholesky factor L of the independent bilateral rows B (r of them; Z = L⁻¹ W_BU, y = L⁻¹ b_B) is the exact one of
    W + E, with |E| ≤ γ_{r+1} |[L; Zᵀ]| |[L; Zᵀ]|ᵀ (its UU block also γ_{r+1}|W_UU|, the column b likewise), so that
    with X = W_BB⁻¹ W_BU and x = W_BB⁻¹ b_B the Schur complement and its right side are off by

        |ΔS| ≤ |E_UU| + |E_UB||X| + |X|ᵀ|E_BU| + |X|ᵀ|E_BB||X|,    |Δb| ≤ |e_U| + |E_UB||x| + |X|ᵀ|e_B| + |X|ᵀ|E_BB||x|

    (the amplification by X is the loop rows' conditioning); u = b + Sλ over m rows adds γ_{m+1}(|b| + |S||λ|), and
    each row's Φ = ρ u, ρ = 1 / S_rr."""
    eps = np.finfo(float).eps / 2
    B = [i for i in range(nb) if W[i, i] > 0.0]
    U = list(range(nb, n))
    r, m = len(B), len(U)
    g, gm = (r + 1) * eps / (1 - (r + 1) * eps), (m + 1) * eps / (1 - (m + 1) * eps)
    L = np.linalg.cholesky(W[np.ix_(B, B)])
    Z, y = np.linalg.solve(L, W[np.ix_(B, U)]), np.linalg.solve(L, b[B])
    X, x = np.linalg.solve(L.T, Z), np.linalg.solve(L.T, y)
    S, bs = W[np.ix_(U, U)] - Z.T @ Z, b[U] - Z.T @ y
    aL, aZ, ay, aX, ax, lam_u = np.abs(L), np.abs(Z), np.abs(y), np.abs(X), np.abs(x), np.abs(lam[U])
    E_BB, E_BU, e_B = g * aL @ aL.T, g * aL @ aZ, g * aL @ ay
    E_UU, e_U = g * (np.abs(W[np.ix_(U, U)]) + aZ.T @ aZ), g * (np.abs(b[U]) + aZ.T @ ay)
    dS = E_UU + E_BU.T @ aX + aX.T @ E_BU + aX.T @ E_BB @ aX
    db = e_U + E_BU.T @ ax + aX.T @ e_B + aX.T @ E_BB @ ax
    du = dS @ lam_u + db + gm * (np.abs(bs) + np.abs(S) @ lam_u)
    diag = np.diag(S)
    return (du / np.where(diag > 0.0, diag, np.inf)).max() / lam_u.max()


def test_gripper_first_touch_converges():
    p = _load("gripper_first_touch.npz")
    W, b, kind, mu, gap, nb, n = p["W"], p["b"], p["kind"], p["mu"], p["gap"], int(p["nb"]), len(p["kind"])
    tol = float(p["tol"])
    R = row_solver(n)
    lam = p["lam0"].copy()
    Ws, bs = W.copy(), b.copy()      # (the solver leaves in them the Schur complement it solved)
    _, rank, rel = solve_rows(Ws, bs, lam, kind, mu, gap, nb, n, tol, int(p["iterations"]), R)
    assert rank == 4 and rel <= tol
    # the piece, solved exactly (rational arithmetic) on the Schur complement of the saved rows: contacts 0 and 3 (a
    # diagonal) sticking, 1 and 2 open
    B = [i for i in range(nb) if W[i, i] > 0.0]
    U = list(range(nb, n))
    Wx, bx = [[Fraction(x) for x in row] for row in W], [Fraction(x) for x in b]
    X = _exact_solve([[Wx[i][j] for j in B] for i in B], [[Wx[i][j] for j in U] + [bx[i]] for i in B])
    S = [[Wx[i][j] - sum(Wx[i][B[k]] * X[k][c] for k in range(len(B))) for c, j in enumerate(U)] for i in U]
    bu = [bx[i] - sum(Wx[i][B[k]] * X[k][-1] for k in range(len(B))) for i in U]
    live = [r for r in range(n - nb) if S[r][r] > 0]              # (the planar problem's second tangents are 0)
    stick = [r for r in live if r < 3 or r >= 9]
    x = _exact_solve([[S[i][j] for j in stick] for i in stick], [[-bu[i]] for i in stick])
    exact = [Fraction(0)] * (n - nb)
    for i, r in enumerate(stick):
        exact[r] = x[i][0]
    u = [bu[i] + sum(S[i][j] * exact[j] for j in range(n - nb)) for i in range(n - nb)]
    star = np.array([float(v) for v in exact])
    for c in (0, 9):                                             # the conditions hold: loaded inside the cone, ...
        assert star[c] > 0.0 and np.hypot(star[c + 1], star[c + 2]) <= mu[nb + c] * star[c]
    assert u[3] > 0 and u[6] > 0                                 # ... the open balls separate (by 1.2e-11 m/s)
    Sf = np.array([[float(v) for v in row] for row in S])
    assert np.abs(lam[nb:] - star).max() <= _piece_bound(Sf, star, live, stick, tol)
    # the exact solution's residual as the solver evaluates it (its Schur complement, in floating point) is within
    # the round-off of the solve, which is below the tolerance
    full = np.concatenate([np.zeros(nb), star])
    floor = _round_off_floor(W, b, full, nb, n)
    at_star = residual(Ws, bs, full, kind, mu, gap, R.law, nb, n, newton_scratch(n)) / np.abs(star).max()
    assert at_star <= floor < tol


def test_newton_linear_solve_with_rook_pivoting():
    """Newton's dense solve (``rows.newton._solve``: x ← −A⁻¹x, rook pivoting) on random systems of up to 12 rows,
    scaled by rows over 1e±3, with zeros on the diagonal (a pivot must be searched for), and with dependent rows.

    Bound (Higham, *Accuracy and Stability of Numerical Algorithms*, Thm 9.5 and §9.1): Gaussian elimination's
    computed y solves (A + ΔA) y = −x with ‖ΔA‖∞ ≤ γ_3n n² ρ_n ‖A‖∞, ρ_n the growth factor, below
    1.5 n^(3/4 ln n) with rook pivoting (Foster 1997); so ‖A y + x‖∞ ≤ γ_3n n² ρ_n ‖A‖∞ ‖y‖∞ (1.8e-10 relative at
    n = 12; the solve's round-off is some 1e-16). A consistent system with dependent rows stops where complete
    pivoting would: the unknowns past the rank are exactly 0 (as many as numpy's rank says), the rest solve it."""
    from multibody.rows.newton import _solve

    eps = np.finfo(float).eps
    rng = np.random.default_rng(20261129)
    for trial in range(600):
        n = int(rng.integers(1, 13))
        A = rng.normal(size=(n, n)) * 10.0 ** rng.uniform(-3, 3, size=(n, 1))
        if trial % 3 == 1 and n >= 2:  # zeros on the diagonal: a pivot off it
            A[np.arange(n), np.arange(n)] = 0.0
        x = rng.normal(size=n)
        if trial % 3 == 2 and n >= 3:  # dependent rows, the system consistent
            A[-1] = 2.0 * A[0] - A[1]
            x[-1] = 2.0 * x[0] - x[1]
        rank = np.linalg.matrix_rank(A)
        y = x.copy()
        _solve(A.copy(), np.zeros(n, dtype=np.int64), 0, n, y)
        rho = 1.5 * n ** (0.75 * np.log(n)) if n > 1 else 1.0
        gamma = 3 * n * eps / (1 - 3 * n * eps)
        bound = gamma * n * n * rho * np.abs(A).sum(axis=1).max() * np.abs(y).max()
        assert np.all(np.isfinite(y)), trial
        assert np.abs(A @ y + x).max() <= bound, (trial, n, np.abs(A @ y + x).max(), bound)
        assert np.count_nonzero(y == 0.0) == n - rank, (trial, n, rank)


def _merit(W, b, lam, kind, mu, jacobian=False):
    """½|Φ|², Φ and (with ``jacobian``) its generalized Jacobian at λ, by the solver's own ``rows.newton._phi``."""
    from multibody.rows.newton import REGULARIZE, _phi, row_scales

    n = len(lam)
    u = b + (W + REGULARIZE * np.diag(np.diag(W))) @ lam
    phi, jac, scale = np.zeros(n), np.zeros((n, n)), np.zeros(n)
    row_scales(W, kind, 0, n, scale)
    merit = _phi(W, REGULARIZE, lam, u, kind, mu, np.zeros(n), np.zeros(8), 0, n, phi, jac, jacobian, scale)
    return merit, phi, jac


def _first_iteration(W, b, lam, kind, mu):
    """The first iteration of ``newton_rows`` as its docstring states it, in numpy: Newton's step with Armijo's
    backtracking, and when no halving decreases ½|Φ|², Levenberg–Marquardt's steps (JᵀJ + δI) x = −JᵀΦ at λ with
    δ = 1e-8, 1e-6, ... and any decrease. Returns (λ₁, whether damped, cond(JᵀJ + δI), the smallest relative
    margin of a merit from its threshold) or None."""
    from multibody.rows.newton import ARMIJO, DAMPING_MAX, DAMPING_MIN, TRIES

    n = len(lam)
    merit, phi, J = _merit(W, b, lam, kind, mu, True)
    damping, margin = 0.0, np.inf
    while damping <= DAMPING_MAX:
        A = J if damping == 0.0 else J.T @ J + damping * np.eye(n)
        x = -np.linalg.solve(A, phi if damping == 0.0 else J.T @ phi)
        cut, t = (2 * ARMIJO if damping == 0.0 else 0.0), 1.0
        for _ in range(TRIES):
            threshold = (1 - cut * t) * merit
            m = _merit(W, b, lam + t * x, kind, mu)[0]
            margin = min(margin, abs(m - threshold) / threshold)
            if m < threshold:
                return lam + t * x, damping > 0.0, np.linalg.cond(A), margin
            t *= 0.5
        damping = max(100.0 * damping, DAMPING_MIN)
    return None


def test_newton_damped_step_is_levenberg_marquardt_at_the_iterate():
    """When no halving of Newton's step decreases the merit, ``newton_rows`` takes Levenberg–Marquardt's step from
    Φ at the iterate λ (``rows/newton.py``). Checked against the iteration written out in numpy on random contact
    problems (1–3 contacts, W scaled by e^±2, warm starts) whose first line search fails; at least three such
    problems. The two solve the same system by different eliminations, so they agree to its condition number
    times the round-off: bound 100 n cond ε, cases with cond ≤ 1e8 and no merit within 1e-6 of its threshold
    (where round-off could flip the line search). The damped step computed from the last trial's Φ instead — 2⁻⁹ of a
    Newton step away, which is large exactly where the line search fails — missed by 0.1 to 15 relative."""
    from multibody.rows.newton import newton_rows, newton_scratch

    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(3000):
        nc = int(rng.integers(1, 4))
        n = 3 * nc
        A = rng.normal(size=(n, n)) * np.exp(rng.uniform(-2, 2, size=n))
        W, b = A @ A.T + 1e-3 * np.eye(n), rng.normal(size=n)
        kind = np.array([1, 2, 2] * nc, dtype=np.int64)
        mu = np.array([rng.uniform(0.1, 1.5), 0.0, 0.0] * nc)
        lam = np.abs(rng.normal(size=n))
        try:
            step = _first_iteration(W, b, lam, kind, mu)
        except np.linalg.LinAlgError:
            continue
        if step is None or not step[1] or step[2] > 1e8 or step[3] < 1e-6:
            continue
        got = lam.copy()
        newton_rows(W.copy(), b.copy(), got, kind, mu, np.zeros(n), np.zeros(8), 0, n, 1e-14, 1, newton_scratch(n))
        bound = 100 * n * step[2] * np.finfo(float).eps
        assert np.abs(got - step[0]).max() <= bound * np.abs(step[0]).max(), (n, step[2])
        checked += 1
    assert checked >= 3


def _sticking_problem(rng, contacts, dofs, stops=0):
    """W = J M⁻¹ Jᵀ of ``contacts`` contacts (a normal and two friction rows each, μ from 0.3 to 1.5) and ``stops``
    frictionless unilateral rows on ``dofs`` freedoms, and λ* with every contact pressed and strictly inside its
    cone (b = −W λ*: every row active)."""
    from multibody.rows.kinds import FRICTION, UNILATERAL

    n = 3 * contacts + stops
    A = rng.standard_normal((dofs, dofs))
    M = A @ A.T + dofs * np.eye(dofs)
    J = rng.standard_normal((n, dofs))
    W = J @ np.linalg.solve(M, J.T)
    W = 0.5 * (W + W.T)
    kind = np.array([UNILATERAL, FRICTION, FRICTION] * contacts + [UNILATERAL] * stops, dtype=np.int64)
    mu = np.zeros(n)
    star = np.zeros(n)
    for c in range(contacts):
        mu[3 * c] = rng.uniform(0.3, 1.5)
        star[3 * c] = rng.uniform(0.5, 5.0)
        angle, share = rng.uniform(0, 2 * np.pi), rng.uniform(0.0, 0.6)     # a warm start 20 % off stays inside
        star[3 * c + 1: 3 * c + 3] = share * mu[3 * c] * star[3 * c] * np.array([np.cos(angle), np.sin(angle)])
    star[3 * contacts:] = rng.uniform(0.5, 5.0, stops)
    return W, -W @ star, kind, mu, star


def test_sticking_guess_solves_the_sticking_piece():
    """Rows whose sweeps leave every contact pressed and sticking, short of the tolerance, get the sticking piece's
    solution λ = −W⁻¹ b by Cholesky (``rows/solver._sticking_solve``) instead of Newton's iterations: on random
    problems (1–5 contacts, stops, 18 freedoms) the impulses the solver returns are that solve's, bit for bit (Newton's
    pivoted LU would differ in the last bits), within the backward-error bound of Cholesky (|λ − λ*| ≤ 4 n ε cond(W)
    |λ*|, Higham, *Accuracy and Stability of Numerical Algorithms*, Thm. 10.4 with the perturbation bound) of the
    piece's exact solution λ*, and meet the tolerance. More rows than freedoms (W singular), rows nearly dependent,
    or a guess whose solve leaves the cone, are refused: the solver goes on with Newton and still converges."""
    from multibody.rows.solver import SWEEPS, _sticking_solve

    rng = np.random.default_rng(5)
    eps = np.finfo(float).eps
    taken = 0
    for case in range(200):
        contacts, stops = int(rng.integers(1, 6)), int(rng.integers(0, 3))     # at most 17 rows on 18 freedoms
        W, b, kind, mu, star = _sticking_problem(rng, contacts, 18, stops)
        n = len(b)
        R = row_solver(n)
        lam = star * (1.0 + 0.2 * rng.uniform(-1, 1, n))      # a warm start on the same piece, 20 % off
        x = np.zeros(n)
        assert _sticking_solve(W, b, lam, kind, mu, 0, n, np.zeros((n, n)), np.zeros(n), x)
        used, rel = solve_unilateral(W.copy(), b.copy(), lam, kind, mu, np.zeros(n), R.law, 0, n, 1e-10, 200,
                                     R.newton)
        assert rel <= 1e-10
        bound = 4 * n * eps * np.linalg.cond(W) * np.abs(star).max()
        assert np.abs(lam - star).max() <= bound, (case, np.abs(lam - star).max(), bound)
        if used == SWEEPS + 1:          # the sweeps did not meet the tolerance: the sticking solve's impulses
            taken += 1
            assert np.array_equal(lam, x), case
    assert taken >= 150                  # (sweeps from 20 % off meet 1e-10 only on the easiest problems)
    # rows after bilateral ones (n0 > 0: the Schur complement's block): the same solve on the block, bit for bit
    W, b, kind, mu, star = _sticking_problem(rng, 3, 18)
    x = np.zeros(9)
    assert _sticking_solve(W, b, star.copy(), kind, mu, 0, 9, np.zeros((9, 9)), np.zeros(9), x)
    Wb, bb = np.zeros((11, 11)), np.zeros(11)
    Wb[:2, :2], Wb[2:, 2:], bb[2:] = 7.0 * np.eye(2), W, b
    kb, mb_, xb = np.concatenate([[0, 0], kind]), np.concatenate([[0.0, 0.0], mu]), np.zeros(11)
    assert _sticking_solve(Wb, bb, np.concatenate([[0.0, 0.0], star]), kb, mb_, 2, 11, np.zeros((11, 11)),
                           np.zeros(11), xb)
    assert np.array_equal(xb[2:], x) and np.array_equal(xb[:2], [0.0, 0.0])
    # four contacts on six freedoms: W singular (rank 6 of 12), refused
    W, b, kind, mu, star = _sticking_problem(rng, 4, 6)
    assert not _sticking_solve(W, b, star.copy(), kind, mu, 0, 12, np.zeros((12, 12)), np.zeros(12), np.zeros(12))
    # two contacts 1e-6 apart in their rows: W nearly singular (a squared pivot ~1e-12 of its diagonal, below the
    # scale at which Newton regularizes), their impulses not determined: refused
    W, b, kind, mu, star = _sticking_problem(rng, 2, 18)
    J = rng.standard_normal((6, 18))
    J[3:] = J[:3] + 1e-6 * rng.standard_normal((3, 18))
    W = J @ J.T
    W = 0.5 * (W + W.T)
    assert not _sticking_solve(W, -W @ star, star.copy(), kind, mu, 0, 6, np.zeros((6, 6)), np.zeros(6), np.zeros(6))
    # a guess whose solve leaves the cone (the tangent impulse of the piece's solution beyond μ λ_n): refused
    W, b, kind, mu, star = _sticking_problem(rng, 2, 18)
    star[1] = 2.0 * mu[0] * star[0]
    b = -W @ star
    warm = star.copy()
    warm[1] = 0.5 * mu[0] * warm[0]
    assert not _sticking_solve(W, b, warm, kind, mu, 0, 6, np.zeros((6, 6)), np.zeros(6), np.zeros(6))
    R = row_solver(6)
    used, rel = solve_unilateral(W.copy(), b.copy(), warm, kind, mu, np.zeros(6), R.law, 0, 6, 1e-10, 200, R.newton)
    # the solution slides on the cone's edge: a residual |Φ| ≤ tol max|λ| per entry puts λ_t within √2 tol max|λ| of
    # the disk |λ_t| ≤ μ λ_n (Φ_t = λ_t − its projection on the disk: rows/newton.py)
    assert rel <= 1e-10
    assert np.hypot(warm[1], warm[2]) <= mu[0] * warm[0] + np.sqrt(2.0) * 1e-10 * np.abs(warm).max()
