"""Constraint stabilization with the reactions treated as controls (seed 000, Sec. 1–2).

For ``Ẋ = B(X) N + F(X)`` with constraints ``f_i(X) = 0`` of relative degrees ``r_i`` (found by
:func:`multibody.symbolic.dae.derive`), the reactions are taken from the exponentially stable residual
equations ``f_i^{(r_i)} + ... + λ_i^{r_i} f_i = 0`` (eqs. 2.4, 2.5), i.e. from the linear system

    A(X) N = −φ(X, λ)                                                    (seed 000, eqs. 2.6–2.9)

solved at every evaluation of the right-hand side. Residuals then decay like ``exp(−λ_i t)`` instead of
drifting (eq. 2.2 gives ``f = c2 t + c1``).

Solving ``A N = −φ`` where ``A`` is singular on the manifold. The default solver :func:`solve_dls` is the
damped least-squares (Tikhonov / Levenberg–Marquardt) solution

    N = argmin ‖A N + φ‖² + ε² ‖N‖²,   ε = eps_rel · ‖A‖_F   (eps_rel = sparams[0], default 1e-10),

computed by Householder QR of the stacked matrix ``[A; ε E]`` (no normal equations, so no squaring of
the condition number). It is continuous in ``X``, equals ``A⁻¹(−φ)`` up to a relative ``ε²/σ_min²`` when
the smallest singular value ``σ_min ≫ ε``, and is bounded by ``‖φ‖ / (2ε)`` always: never a blow-up or a
NaN. Where the analytic limit of ``N`` at the singular points is known (the hoop's turning points, seed
000 Sec. 3), a system supplies its own solver with the same signature (see
:func:`multibody.systems.hoop_on_profile.solve_hoop`). :func:`solve_exact` (``solver="exact"``) is the plain,
unregularized ``N = −A⁻¹φ`` of the seed's closed-form substitution, for reproducing the seed's experiments
(NaN where ``A`` is exactly singular).

Integration: :meth:`StabilizedSystem.simulate` runs the compiled fixed-step loop of
:mod:`multibody.integrate.fixed_step` (``rk2`` — the seed's explicit 2nd-order Runge–Kutta —, ``heun``,
``rk4``) or scipy's adaptive DOP853 through :mod:`multibody.integrate.adaptive`, and returns a
:class:`multibody.result.Result` whose ``residuals`` hold ``f_i(t)`` for every constraint.
"""
import math
import time

import numpy as np
from numba import njit

from multibody.kernels.spatial import KERNEL

from multibody.errors import ConstraintError, IntegrationError, ModelError

#: default relative damping of :func:`solve_dls`
DLS_EPS_REL = 1e-10


@njit(cache=True)
def solve_dls(A, phi, x, sparams, N):
    """Damped least squares ``N = argmin ‖A N + φ‖² + ε²‖N‖²``, ``ε = sparams[0]·‖A‖_F`` (seed 000, eq. 2.9).

    Householder QR of ``[A; ε E]`` (2m × m) with the right-hand side ``[−φ; 0]``; continuous in
    ``(A, φ)``, bounded by ``‖φ‖/(2ε)``, equal to ``−A⁻¹φ`` up to a relative ``(ε/σ_min)²``. ``x`` (the
    state) is unused here; it is part of the common solver signature.
    """
    m = phi.shape[0]
    dls_into(A, phi, sparams, N, np.zeros((2 * m, m + 1)))


@njit(**KERNEL)
def dls_into(A, phi, sparams, N, W):
    """:func:`solve_dls` with its QR workspace ``W`` (at least 2m x (m + 1)) given: it allocates nothing, for the
    compiled right-hand side."""
    m = phi.shape[0]
    eps_rel = sparams[0] if sparams.shape[0] > 0 else 1e-10
    fro = 0.0
    for i in range(m):
        for j in range(m):
            fro += A[i, j] * A[i, j]
    eps = eps_rel * math.sqrt(fro)
    if eps < 1e-150:  # A = 0: the limit ε → 0+ of the damped solution is N = 0
        eps = 1e-150
    rows = 2 * m
    for i in range(rows):
        for j in range(m + 1):
            W[i, j] = 0.0
    for i in range(m):
        for j in range(m):
            W[i, j] = A[i, j]
        W[i, m] = -phi[i]
        W[m + i, i] = eps
    for k in range(m):
        # Householder reflection zeroing W[k+1:, k]
        nrm = 0.0
        for i in range(k, rows):
            nrm += W[i, k] * W[i, k]
        nrm = math.sqrt(nrm)
        if nrm == 0.0:
            continue
        alpha = -nrm if W[k, k] >= 0.0 else nrm
        v0 = W[k, k] - alpha
        # v = [v0, W[k+1:, k]]; beta = 2 / (v.v)
        vv = v0 * v0
        for i in range(k + 1, rows):
            vv += W[i, k] * W[i, k]
        if vv == 0.0:
            continue
        beta = 2.0 / vv
        for j in range(k + 1, m + 1):
            s = v0 * W[k, j]
            for i in range(k + 1, rows):
                s += W[i, k] * W[i, j]
            s *= beta
            W[k, j] -= s * v0
            for i in range(k + 1, rows):
                W[i, j] -= s * W[i, k]
        W[k, k] = alpha
    for k in range(m - 1, -1, -1):
        s = W[k, m]
        for j in range(k + 1, m):
            s -= W[k, j] * N[j]
        N[k] = s / W[k, k] if W[k, k] != 0.0 else 0.0


@njit(cache=True)  # allocates its QR workspace: compiled with reference counting
def solve_exact(A, phi, x, sparams, N):
    """The plain solution ``N = −A⁻¹ φ`` of ``A N = −φ`` (seed 000, eqs. 2.3, 2.9), no regularization.

    Gaussian elimination with partial pivoting (scalar loops on a copy of ``A``). This is the seed's
    closed-form substitution of ``N`` into the right-hand side, kept to reproduce the seed's experiments
    (Sec. 4, Fig. 4): where ``A`` is singular it divides by a vanishing pivot, so the reactions are unbounded
    near a singular point and NaN on it (a fixed-step run then stops with a non-finite state).
    Never the default; use :func:`solve_dls` or a system's own solver for production runs. ``x`` and
    ``sparams`` are unused (common solver signature).
    """
    m = phi.shape[0]
    W = np.empty((m, m + 1))
    for i in range(m):
        for j in range(m):
            W[i, j] = A[i, j]
        W[i, m] = -phi[i]
    for k in range(m):
        piv = k
        big = abs(W[k, k])
        for i in range(k + 1, m):
            if abs(W[i, k]) > big:
                big = abs(W[i, k])
                piv = i
        if big == 0.0:  # exactly singular: no solution of the plain equations
            for j in range(m):
                N[j] = math.nan
            return
        if piv != k:
            for j in range(k, m + 1):
                tmp = W[k, j]
                W[k, j] = W[piv, j]
                W[piv, j] = tmp
        for i in range(k + 1, m):
            f = W[i, k] / W[k, k]
            if f != 0.0:
                for j in range(k + 1, m + 1):
                    W[i, j] -= f * W[k, j]
    for k in range(m - 1, -1, -1):
        s = W[k, m]
        for j in range(k + 1, m):
            s -= W[k, j] * N[j]
        N[k] = s / W[k, k]


class StabilizedSystem:
    """A compiled stabilized system: ``Ẋ = B N + F`` with ``N`` from ``A N = −φ(X, λ)`` (seed 000, eq. 2.9).

    Built from a :class:`multibody.symbolic.dae.DAE` (see :func:`multibody.symbolic.dae.derive`).
    ``solver`` is ``"dls"`` (:func:`solve_dls`, the default), ``"exact"`` (:func:`solve_exact`, the seed's
    plain eq. (2.3) without regularization: reproduction of the seed's experiments only) or a
    ``(module, function)`` pair naming a numba solver ``solve(A, phi, x, sparams, N)``; ``solver_params``
    fills ``sparams``.
    """

    def __init__(self, dae, solver="dls", solver_params=None, cache_dir=None):
        self.dae = dae
        self.module = dae.compile(solver=solver, cache_dir=cache_dir)
        if solver_params is None:
            solver_params = [DLS_EPS_REL] if solver == "dls" else []
        self.solver_params = np.asarray(solver_params, dtype=float).reshape(-1)

    @property
    def names(self):
        return self.dae.names

    def params(self, lam, param_values=None, second_order=None, solver_params=None):
        """The flat parameter array of the compiled right-hand side: ``[model | c[i, k] | solver]``."""
        pv = self.dae.param_values if param_values is None else np.asarray(param_values, dtype=float)
        if pv.shape != (len(self.dae.params),):
            raise ModelError(f"{pv.size} parameter values for parameters {[str(p) for p in self.dae.params]}",
                             element="param_values")
        c = self.dae.coefficients(lam, second_order=second_order)
        sp_ = self.solver_params if solver_params is None else np.asarray(solver_params, float).reshape(-1)
        return np.concatenate([pv, c.ravel(), sp_]).astype(np.float64)

    # numeric helpers (Python level)
    def rhs(self, t, x, params):
        out = np.empty(self.dae.n)
        self.module.rhs(t, np.ascontiguousarray(x, dtype=float), params, out)
        return out

    def reactions(self, x, params):
        N = np.empty(self.dae.m)
        self.module.reactions(np.ascontiguousarray(x, dtype=float), params, N)
        return N

    def A_phi(self, x, params):
        m = self.dae.m
        A = np.empty((m, m))
        phi = np.empty(m)
        mod = self.module
        self.module.eval_A_phi(np.ascontiguousarray(x, dtype=float), params,
                               params[mod.COEF_OFFSET:mod.SOLVER_OFFSET], A, phi)
        return A, phi

    def constraints(self, x, params):
        """``f_i(X)`` at one state (1-D) or at every row of a 2-D array."""
        x = np.ascontiguousarray(x, dtype=float)
        if x.ndim == 1:
            out = np.empty(self.dae.m)
            self.module.eval_constraints(x, params, out)
            return out
        return _constraints_batch(self.module.eval_constraints, x, params, self.dae.m)

    # integration
    def simulate(self, x0, t_end, lam, method="rk2", h=1e-5, t0=0.0, save_every=None, param_values=None,
                 second_order=None, solver_params=None, rtol=1e-10, atol=1e-12, max_step=np.inf,
                 progress=False, t_eval=None, max_steps=None, record_reactions=True):
        """Integrate from ``x0`` over ``[t0, t_end]``; returns a :class:`multibody.result.Result`.

        ``method``: ``"rk2"`` (explicit midpoint, seed 000 Sec. 4), ``"heun"``, ``"rk4"`` — fixed step ``h``
        inside one compiled loop, states saved every ``save_every`` steps (default: about 2000 saves) —
        or ``"dop853"`` (also ``"rk45"``, ``"radau"``) adaptive with ``rtol``/``atol``.
        ``Result.q`` holds the whole state ``X``; ``residuals`` the constraints ``f_i(t)`` by name;
        ``info``: method, steps, rhs evaluations, cpu_seconds, lambda, status; ``reactions["N"]`` (n, m) the
        reactions of eq. (2.9) at the saved states (``record_reactions``).
        """
        from multibody.result import Result

        params = self.params(lam, param_values=param_values, second_order=second_order,
                             solver_params=solver_params)
        x0 = np.ascontiguousarray(x0, dtype=float)
        if x0.shape != (self.dae.n,):
            raise ModelError(f"initial state has shape {x0.shape}, expected ({self.dae.n},) = "
                             f"{[str(s) for s in self.dae.states]}", element="x0")
        key = method.lower()
        info = {"method": key, "lambda": np.broadcast_to(np.asarray(lam, float), (self.dae.m,)).tolist()}
        cpu0 = time.process_time()
        if key in ("rk2", "midpoint", "heun", "rk4"):
            from multibody.integrate.fixed_step import STAGES, integrate_fixed, method_code

            nsteps = int(round((t_end - t0) / h))
            if nsteps < 1 or abs(nsteps * h - (t_end - t0)) > 1e-9 * max(1.0, abs(t_end - t0)):
                raise ModelError(f"t_end - t0 = {t_end - t0} is not a whole number of steps h = {h}",
                                 element="h")
            if save_every is None:
                save_every = max(1, nsteps // 2000)
            name = {"rk2": "RK2", "midpoint": "RK2", "heun": "HEUN", "rk4": "RK4"}[key]
            t, xs, status, done = integrate_fixed(self.module.rhs, x0, t0, h, nsteps, params=params,
                                                  method=name, save_every=save_every, progress=progress)
            info.update(h=h, steps=int(done), rhs_evaluations=int(done) * STAGES[method_code(name)],
                        save_every=int(save_every))
            ok = status == 0
            info["status"] = "success" if ok else "failed"
        elif key in ("dop853", "rk45", "rk23", "radau"):
            from multibody.integrate.adaptive import solve_adaptive

            rhs = self.module.rhs
            buf = np.empty(self.dae.n)

            def fun(t, y):
                out = np.empty(self.dae.n)
                rhs(t, y, params, out)
                return out

            del buf
            run = solve_adaptive(fun, (t0, t_end), x0, method=key.upper(), rtol=rtol, atol=atol,
                                 t_eval=t_eval, max_steps=max_steps, progress=progress, max_step=max_step)
            t, xs = run.t, run.y
            ok = run.success
            info.update(steps=int(run.nsteps), rhs_evaluations=int(run.nfev), rtol=rtol, atol=atol,
                        status=run.status, message=run.message)
        else:
            raise ModelError(f"integration method {method!r} is unknown; expected rk2, heun, rk4 or dop853",
                             element="method")
        info["cpu_seconds"] = time.process_time() - cpu0
        res = self.constraints(xs, params)
        names = [str(s) for s in self.dae.states]
        reactions = {}
        if record_reactions:
            Ns = np.empty((len(t), self.dae.m))
            _batch(self.module.reactions, np.ascontiguousarray(xs), params, Ns)
            reactions["N"] = Ns
        result = Result(t, xs, np.zeros((len(t), 0)), residuals={nm: res[:, i] for i, nm in enumerate(self.names)},
                        reactions=reactions, info=info, q_names=names, v_names=[])
        if not ok:
            raise IntegrationError(f"stabilized integration ({method}) failed at t = {t[-1]:.17g}",
                                   result=result, reason=info.get("message", "non-finite state"))
        return result


def _constraints_batch(fn, xs, params, m):
    out = np.empty((xs.shape[0], m))
    _batch(fn, xs, params, out)
    return out


@njit
def _batch(fn, xs, params, out):
    for k in range(xs.shape[0]):
        fn(xs[k], params, out[k])


def max_residual(result, t_from=None):
    """``max_i max_t |f_i(t)|`` over ``t >= t_from`` (default: the second half of the run), and per constraint."""
    t = result.t
    if t_from is None:
        t_from = t[0] + 0.5 * (t[-1] - t[0])
    sel = t >= t_from
    by = {k: float(np.max(np.abs(v[sel]))) for k, v in result.residuals.items()}
    return max(by.values()), by


# ----------------------------------------------------------------------------------------------------------
# the seed 000 law on a Model's constraints: simulate(model, ..., formulation="stabilized")
from collections import namedtuple  # noqa: E402

from multibody.formulations.base import (MAX_INITIAL_CORRECTION, OdeSystem, callback_forces, check_state,  # noqa: E402
                                         register_formulation)
from multibody.formulations.constrained import (ConstrainedTree, ConstraintRows, consistent_state,  # noqa: E402
                                                eval_rows, free_dynamics, make_work)
from multibody.kernels.energy import energy_kernel  # noqa: E402
from multibody.kernels.forces import applied_forces_kernel  # noqa: E402
from multibody.formulations.tree import tree_energy  # noqa: E402
from multibody.kernels.configuration import normalize_kernel  # noqa: E402
from multibody.kernels.kkt import backward_sub_T, cholesky_lower, forward_sub  # noqa: E402

#: the compiled state of the stabilized formulation: the constrained Work ``w`` (rows, dynamics, M) and the
#: seed 000 system A N = −φ with its gains
SWork = namedtuple("SWork", ["w", "A", "phi", "X0", "X1", "N", "c0", "c1", "sp", "par", "W"])
# entries of ``par``: rows R, compiled rows, auxiliary variables, energy row (0/1), E0, gain of the energy row,
# energy window, q size
P_R, P_MC, P_NAUX, P_ENERGY, P_E0, P_LAME, P_WIN, P_NQ = range(8)


@njit(**KERNEL)
def _solve_shifted_energy(sw, R, re):
    """:func:`shifted_energy_into` on the arrays of the compiled state ``sw``."""
    shifted_energy_into(sw.A, sw.phi, sw.sp, sw.par[P_WIN], R, re, sw.N, sw.X0, sw.X1, sw.W)


@njit(**KERNEL)
def shifted_energy_into(A, phi, sp, window, R, re, N, X0, X1, W):
    """A N = −φ (seed 000, eq. 2.6) for the first ``R`` rows: the rows without the energy row by damped least
    squares (:func:`dls_into`, ``sp`` its parameters), and the energy row (the last, ``re`` = 1) by its Schur
    complement σ = a22 − a21ᵀA11⁻¹a12 ≈ 2T shifted by ``window``: μ = −(φ_E + a21ᵀX0)/(σ + window), so the
    energy correction fades where the kinetic energy vanishes (the turning points, where A is singular; seed
    000 §3). ``X0``, ``X1`` (R) and ``W`` (2R × (R + 1)) are workspaces."""
    n1 = R - re
    A11 = A[:n1, :n1]
    dls_into(A11, phi[:n1], sp, X0[:n1], W)
    if re == 0:
        for j in range(n1):
            N[j] = X0[j]
        return
    dls_into(A11, A[:n1, n1], sp, X1[:n1], W)     # A11 X1 = −a12
    sig = A[n1, n1]
    rho = phi[n1]
    for j in range(n1):
        sig += A[n1, j] * X1[j]
        rho += A[n1, j] * X0[j]
    mu = -rho / (sig + window)
    for j in range(n1):
        N[j] = X0[j] + mu * X1[j]
    N[n1] = mu


#: the exact solve replaces the damped least squares where they agree to rounding: ε/σ_min ≤ this
EXACT_WHEN = 1e-7


@njit(cache=True)  # allocates its workspace: compiled with reference counting
def solve_shifted_energy(A, phi, x, sparams, N):
    """The reaction solver of the generated stabilized DAE (``symbolic=True``; the ``solve(A, phi, x, sparams,
    N)`` hook of :mod:`multibody.symbolic.dae`): the solve of the generic path, :func:`shifted_energy_into`
    (seed 000, eq. 2.9), with ``sparams = [eps_rel, window, energy row (0/1)]``. ``x`` is unused.

    Fast path: the block A11 without the energy row is solved for its two right-hand sides (−φ1 and −a12) by
    Gaussian elimination with partial pivoting. The damped least-squares solution differs from A11⁻¹b by a
    relative ε²/(σ² + ε²) ≤ (ε/σ_min)² per singular direction, and σ_min ≥ |det A11| ((n−1)/‖A11‖_F²)^((n−1)/2)
    (the other n − 1 singular values have the product ≤ (‖A11‖_F²/(n−1))^((n−1)/2), by the arithmetic–geometric
    mean inequality), det A11 the product of the pivots. Where that bound gives ε/σ_min ≤ :data:`EXACT_WHEN`,
    the two solutions agree to 1e-14, the rounding of the solve, and the exact one is taken; the energy row
    follows by the same shifted Schur complement. Elsewhere (A11 nearly singular): the damped least squares of
    the generic path."""
    m = phi.shape[0]
    re = int(sparams[2])
    n1 = m - re
    nc = n1 + 2
    W = np.empty((n1, nc))                         # [A11 | −φ1 | −a12]
    fro = 0.0
    for i in range(n1):
        for j in range(n1):
            W[i, j] = A[i, j]
            fro += A[i, j] * A[i, j]
        W[i, n1] = -phi[i]
        W[i, n1 + 1] = -A[i, n1] if re else 0.0
    det = 1.0
    for k in range(n1):
        piv = k
        big = abs(W[k, k])
        for i in range(k + 1, n1):
            if abs(W[i, k]) > big:
                big = abs(W[i, k])
                piv = i
        det *= big
        if big == 0.0:
            break
        if piv != k:
            for j in range(k, nc):
                tmp = W[k, j]
                W[k, j] = W[piv, j]
                W[piv, j] = tmp
        for i in range(k + 1, n1):
            f = W[i, k] / W[k, k]
            if f != 0.0:
                for j in range(k + 1, nc):
                    W[i, j] -= f * W[k, j]
    smin = det * ((n1 - 1) / fro) ** (0.5 * (n1 - 1)) if n1 > 1 else det
    if not sparams[0] * math.sqrt(fro) <= EXACT_WHEN * smin:
        work = np.empty(2 * m + 2 * m * (m + 1))
        shifted_energy_into(A, phi, sparams[:1], sparams[1], m, re, N, work[:m], work[m:2 * m],
                            work[2 * m:].reshape((2 * m, m + 1)))
        return
    for c in range(n1, nc):                        # back substitution: W[:, c] ← A11⁻¹ W[:, c]
        for k in range(n1 - 1, -1, -1):
            s = W[k, c]
            for j in range(k + 1, n1):
                s -= W[k, j] * W[j, c]
            W[k, c] = s / W[k, k]
    if re == 0:
        for j in range(n1):
            N[j] = W[j, n1]
        return
    sig = A[n1, n1]
    rho = phi[n1]
    for j in range(n1):
        sig += A[n1, j] * W[j, n1 + 1]
        rho += A[n1, j] * W[j, n1]
    mu = -rho / (sig + sparams[1])
    for j in range(n1):
        N[j] = W[j, n1] + mu * W[j, n1 + 1]
    N[n1] = mu


@njit(**KERNEL)
def stabilized_model_rhs(t, x, sw, out):
    """ẋ for x = [q, v, s] (s: the auxiliary variables, seed 000 eq. 3.6) with the reactions N from
    ``A N = −φ(X, λ)`` (seed 000, eqs. 2.6–2.9); the compiled right-hand side ``rhs(t, x, params, out)``."""
    w = sw.w
    nq = int(sw.par[P_NQ])
    nv = w.qdd0.shape[0]
    for k in range(int(sw.par[P_NAUX])):
        w.s[k] = x[nq + nv + k]
    eval_rows(x[:nq], x[nq:nq + nv], w)
    stabilized_solve(t, x, sw, out)


@njit(**KERNEL)
def stabilized_solve(t, x, sw, out):
    """With the rows in ``sw.w`` (``eval_rows`` and any Python rows): A and φ (eqs. 2.6–2.8), the reactions,
    and ẋ: q̇, v̇ = a + M⁻¹Gᵀλ + μ v, ṡ = U."""
    w = sw.w
    R = int(sw.par[P_R])
    mc = int(sw.par[P_MC])
    naux = int(sw.par[P_NAUX])
    re = int(sw.par[P_ENERGY])
    nq = int(sw.par[P_NQ])
    nv = w.qdd0.shape[0]
    _assemble(t, x, sw, R, mc, naux, re)
    _solve_shifted_energy(sw, R, re)
    N = sw.N
    nrow = R - re
    mu = N[nrow] if re else 0.0
    dv = w.dv
    for k in range(nv):
        s = 0.0
        for j in range(nrow):
            if not (mc <= j < mc + naux):
                s += w.G[j, k] * N[j]
        dv[k] = s
    forward_sub(w.L, nv, dv)
    backward_sub_T(w.L, nv, dv)
    for k in range(nq):
        out[k] = w.xdot[k]
    for k in range(nv):
        out[nq + k] = w.xdot[nq + k] + dv[k] + mu * x[nq + k]
    for ia in range(naux):
        out[nq + nv + ia] = N[mc + ia]


@njit(**KERNEL)
def _assemble(t, x, sw, R, mc, naux, re):
    """A and φ of seed 000 eqs. 2.6–2.8 from the rows in ``sw.w``, the free accelerations and M; the
    energy row last."""
    w = sw.w
    nq = int(sw.par[P_NQ])
    nv = w.qdd0.shape[0]
    free_dynamics(t, x[:nq + nv], w, w.tree[16])
    cholesky_lower(w.M, nv, w.L)
    v = x[nq:nq + nv]
    A, phi = sw.A, sw.phi
    nrow = R - re
    for j in range(nrow):                       # Y = L⁻¹ Gᵀ
        for i in range(nv):
            s = w.G[j, i]
            for k in range(i):
                s -= w.L[i, k] * w.Y[k, j]
            w.Y[i, j] = s / w.L[i, i]
    a = w.xdot[nq:]
    for i in range(R):
        for j in range(R):
            A[i, j] = 0.0
    for i in range(nrow):
        if mc <= i < mc + naux:                  # auxiliary row: ḟ4 = G v + d U (eq. 3.10)
            A[i, i] = w.auxd[i - mc]
            phi[i] = w.fd[i] + sw.c0[i] * w.f[i]
            continue
        for j in range(nrow):
            if mc <= j < mc + naux:
                if i < mc:
                    A[i, j] = w.ucoef[i, j - mc]
                continue
            s = 0.0
            for k in range(nv):
                s += w.Y[k, i] * w.Y[k, j]
            A[i, j] = s                          # G M⁻¹ Gᵀ
        Ga = 0.0
        Gv = 0.0
        for k in range(nv):
            Ga += w.G[i, k] * a[k]
            Gv += w.G[i, k] * v[k]
        if w.level[i] == 2:
            phi[i] = Ga - w.gam[i] + sw.c1[i] * w.fd[i] + sw.c0[i] * w.f[i]   # eq. 2.7
        else:
            phi[i] = Ga - w.gam[i] + sw.c0[i] * w.f[i]                         # eq. 2.8
        if re:
            A[i, nrow] = Gv                      # the momentum force μ M v in row i: μ G v
            A[nrow, i] = Gv                      # the power of the multipliers: (G v)ᵀ λ
    if re:
        T2 = 0.0
        for i in range(nv):
            s = 0.0
            for k in range(nv):
                s += w.M[i, k] * v[k]
            T2 += v[i] * s
        A[nrow, nrow] = T2                       # vᵀ M v = 2T
        phi[nrow] = sw.par[P_LAME] * (_total_energy(w, x[:nq], v) - sw.par[P_E0])


@njit(**KERNEL)
def _total_energy(w, q, v):
    """T + V: kinetic, gravity and spring energies (``kernels/energy.py``, ``kernels/forces.py``)."""
    p = w.tree
    T, Vg = energy_kernel(p[0], p[1], q, v, p[13])
    return T + Vg + _spring_potential(w, q, v)


@njit(**KERNEL)
def _spring_potential(w, q, v):
    p = w.tree
    if p[3].shape[0] == 0 or (p[9].shape[0] == 0 and not np.any(p[3])):
        return 0.0
    Vs, P = applied_forces_kernel(p[0], p[1], q, v, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[13],
                                  p[14], p[12])
    return Vs


class StabilizedModel:
    """Seed 000's stabilization applied to a Model's constraints (seed 000, Sec. 1–2): the reactions N are the
    multipliers of the rows (forces ``Gᵀλ``), the rates U of the auxiliary variables (a disc's contact angle,
    eq. 3.6) and, with ``energy_constraint``, a force ``μ M v`` along the momentum, chosen so that every
    residual obeys its stable law (eqs. 2.4, 2.5): position rows (relative degree 2) ``f̈ + 2λḟ + λ²f = 0``,
    velocity rows, auxiliary rows and the energy row ``E − E0`` (relative degree 1) ``ḟ + λ f = 0``. For the
    hoop the multiplier directions and ``M v`` span the seed's free reactions (R_x, R_z, Q): the same N."""

    def __init__(self, model, lam=100.0, energy_constraint=False, energy_level=None, energy_window=None,
                 dls_eps=DLS_EPS_REL):
        self.model = model
        tab = model.constraint_table
        self.naux = tab.naux
        self.energy = bool(energy_constraint)
        if self.energy:
            _check_conservative(model)
        self.rows = ConstraintRows(model, mode=1, work=make_work(model, mode=1, extra_rows=int(self.energy)))
        w = self.rows.w
        self.R = tab.m + tab.naux + int(self.energy)
        self.mc = tab.m_compiled
        gains = self._gains(lam)
        c0 = np.where(w.level[:self.R] == 2, gains ** 2, gains)
        c1 = np.where(w.level[:self.R] == 2, 2.0 * gains, 0.0)
        mtot = float(np.sum(model.mass))
        win = mtot * 1e-4 if energy_window is None else float(energy_window)
        if not (np.isfinite(win) and win >= 0):
            raise ModelError(f"energy_window must be a finite energy >= 0, got {energy_window}", element="energy_window")
        par = np.array([self.R, self.mc, self.naux, int(self.energy), 0.0, gains[-1] if self.energy else 0.0, win,
                        model.nq], dtype=float)
        self.sw = SWork(w=w, A=np.zeros((self.R, self.R)), phi=np.zeros(self.R), X0=np.zeros(self.R),
                        X1=np.zeros(self.R), N=np.zeros(self.R), c0=c0, c1=c1, sp=np.array([float(dls_eps)]),
                        par=par, W=np.zeros((2 * self.R, self.R + 1)))
        self.E0 = energy_level

    def _gains(self, lam):
        """λ_i of every row (position, auxiliary, Python, energy): a number, or a dict of constraint names
        (``"energy"`` for the energy row) with a default under ``None``."""
        names = self.rows.names
        rows_of = self.rows.slices
        default = 100.0
        if isinstance(lam, dict):
            unknown = set(lam) - set(names) - {"energy", None}
            if unknown:
                raise ModelError(f"gains given for unknown constraints {sorted(map(str, unknown))}; constraints: "
                                 f"{', '.join(names)}", element="lam")
            default = lam.get(None, default)
        else:
            default = lam
        g = np.full(self.R, float(default))
        if isinstance(lam, dict):
            for name, val in lam.items():
                if name in rows_of:
                    g[rows_of[name]] = float(val)
            if "energy" in lam and self.energy:
                g[-1] = float(lam["energy"])
        if not np.all(np.isfinite(g)) or np.any(g < 0):
            raise ModelError(f"stabilization gains must be finite and >= 0, got {lam!r}", element="lam")
        return g

    def relative_degrees(self):
        return tuple(int(x) for x in self.rows.w.level[:self.R])


def _check_conservative(model):
    dissipative = []
    if np.any(np.asarray(model.dof_damping)) or np.any(np.asarray(model.spring_c)):
        dissipative.append("dampers")
    if np.any(np.asarray(model.dof_effort)):
        dissipative.append("joint efforts")
    if model.torque_callback is not None:
        dissipative.append("a torque callback")
    if dissipative:
        raise ModelError(f"model '{model.name}': the energy constraint needs a conservative model; it has "
                         f"{', '.join(dissipative)}", element="energy_constraint")


@njit(**KERNEL)
def stabilized_project(x, sw):
    """After every step: the quaternions of q normalized (the seed's method projects nothing else)."""
    normalize_kernel(sw.w.tree[0], x, x)


def stabilized_system(model, q0=None, v0=None, tau=None, energy=True, lam=100.0, energy_constraint=False,
                      energy_level=None, energy_window=None, consistent=True, dls_eps=DLS_EPS_REL,
                      max_correction=MAX_INITIAL_CORRECTION, symbolic=False):
    """Seed 000's stabilization on the Model's constraints: reactions as controls (seed 000, Sec. 1–2).

    State ``[q, v, s]`` with s the auxiliary variables of the constraints (the contact angle α of a
    ``RollingOnProfile``, seed 000 eq. 3.6); the reactions N (multipliers, rates U = ṡ and, with
    ``energy_constraint``, the momentum force μ) make every residual decay like exp(−λt): position rows
    ``f̈ + 2λḟ + λ²f = 0`` (eq. 2.4), velocity, auxiliary and energy rows ``ḟ + λf = 0`` (eq. 2.5); the
    relative degree of each row follows from its kind (position rows 2, the others 1) and is reported in
    ``result.info["relative_degrees"]``. ``A N = −φ`` (eq. 2.6) is solved by damped least squares
    (:func:`solve_dls`, ``dls_eps`` relative), the energy row by its shifted Schur complement so that the
    correction fades where the kinetic energy is below ``energy_window`` (default: total mass × (1e-2 m/s)²).
    ``lam``: one gain, or a dict of gains by constraint name (``"energy"`` for the energy row, ``None`` the
    default). ``energy_level``: E0 (default: the energy of the initial state). ``consistent``: project the
    initial state onto the constraints first (set False to watch initial errors decay, seed 000 Fig. 2);
    ``max_correction`` as in the constrained formulation.

    ``symbolic``: False (default) evaluates the rows with the compiled kernels at every step (any model);
    True integrates generated code instead: the same DAE derived symbolically from the Model
    (:mod:`multibody.symbolic.stabilized`: H(q) and the bias forces of the symbolic equations of motion, each
    constraint's own symbolic rows, A and φ by :func:`multibody.symbolic.dae.derive`), common subexpressions
    eliminated and compiled once per model (the module is cached on disk), with the same reaction solve. Same
    state, gains, residuals, reactions and results to rounding, and the fastest right-hand side for small
    models (the seed 000 hoop: about 20x); the derivation takes seconds the first time in a process. It needs
    joints with plain coordinates, numeric parameters, gravity as the only applied force (no tau, springs,
    dampers, efforts or callbacks) and constraints with symbolic rows (``RollingOnProfile``, ``PointOnPlane``,
    ``PointOnProfile``); others raise ``ModelError``.

    Residuals of the result: every row by name (e.g. ``"contact.contact"``, ``"contact.no_slip"``,
    ``"contact.tangency"``, ``"energy"``); reactions: N per constraint; series: the auxiliary variables.
    """
    from multibody.analysis.reactions import all_joint_reactions
    from multibody.result import Result

    if not model.constraints:
        raise ConstraintError(f"model '{model.name}' has no constraints; use formulation='tree'")
    q0, v0 = check_state(model, q0, v0)
    sm = StabilizedModel(model, lam, energy_constraint, energy_level, energy_window, dls_eps)
    w = sm.rows.w
    callback = model.torque_callback if tau is None else tau
    if callback is not None and not callable(callback):
        tc = np.array(callback, dtype=float).reshape(-1)
        if tc.shape != (model.nv,) or not np.all(np.isfinite(tc)):
            raise ModelError(f"tau must be a callable tau(t, q, v) or {model.nv} finite numbers", element="tau")
        w.tree[16][:] = tc
        callback = None
    tau_const = w.tree[16].copy()
    correction = None
    if consistent:
        ct = ConstrainedTree(model)
        ct.rows.init_aux(q0)
        q0, v0, correction = consistent_state(ct, q0, v0, max_correction)
    sm.rows.init_aux(q0)
    s0 = w.s.copy()
    nq, nv, naux = model.nq, model.nv, sm.naux
    if sm.energy:
        E0 = float(energy_level) if energy_level is not None else float(_total_energy(w, q0, v0))
        sm.sw.par[P_E0] = E0
    compiled = not (sm.rows.python or callback is not None)
    x0 = np.concatenate([q0, v0, s0])
    if symbolic:
        if tau is not None:
            raise ModelError("tau: not available with symbolic=True (gravity is the only applied force there)",
                             element="tau")
        gen = _Generated(model, sm, float(dls_eps))
        gen_rhs, gen_params, nx = gen.module.rhs, gen.params, x0.shape[0]

    def fun_symbolic(t, x):   # the adaptive methods' right-hand side: nothing but the compiled call
        out = np.empty(nx)
        gen_rhs(float(t), np.ascontiguousarray(x, dtype=np.float64), gen_params, out)
        return out

    def fun(t, x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(x.shape[0])
        if compiled:
            stabilized_model_rhs(float(t), x, sm.sw, out)
            return out
        w.s[:] = x[nq + nv:]
        sm.rows.fill(x[:nq], x[nq:nq + nv], t)
        w.tree[16][:] = tau_const
        if callback is not None:
            extra = callback_forces(callback, t, x[:nq], x[nq:nq + nv], nv, model.name)
            w.tree[16][:] += extra
        stabilized_solve(float(t), x, sm.sw, out)
        return out

    def project_py(t, x):
        x = np.array(x, dtype=float)
        x[:nq] = model.normalize(x[:nq])
        return x

    row_names = _row_names(model, sm)

    def make_result(t, X, info):
        X = np.asarray(X, float).reshape(len(t), nq + nv + naux)
        Q, V, S = X[:, :nq].copy(), X[:, nq:nq + nv].copy(), X[:, nq + nv:].copy()
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V)
            en = {"kinetic": T, "potential": Vp}
        if symbolic:
            F, NN = gen.rows_and_reactions(X)
        else:
            F, NN = [], []
            for k in range(len(t)):
                fun(t[k], X[k])
                f = w.f[:sm.R].copy()
                if sm.energy:
                    f[-1] = _total_energy(w, Q[k], V[k]) - sm.sw.par[P_E0]
                F.append(f)
                NN.append(sm.sw.N[:sm.R].copy())
            F, NN = np.array(F).reshape(len(t), sm.R), np.array(NN).reshape(len(t), sm.R)
        res = {name: F[:, j] for j, name in enumerate(row_names)}
        reac = {}
        for name, sl in sm.rows.slices.items():
            reac[name] = NN[:, sl]
        for ia in range(naux):
            reac[row_names[sm.mc + ia].replace(".tangency", ".rate")] = NN[:, sm.mc + ia]

        def reactions():
            """The multipliers, and the joints' reactions (computed when first read: a run of 10⁵ outputs
            does not pay for them unless they are wanted), q̈ and N from the kernels' right-hand side."""
            joints = {}
            for k in range(len(t)):
                xd = fun(t[k], X[k])
                J = all_joint_reactions(model, sm.rows, Q[k], V[k], xd[nq:nq + nv], sm.sw.N[:sm.R], sm.mc)
                for name, W in J.items():
                    joints.setdefault(name, np.zeros((len(t), 6)))[k] = W
            return {**reac, **joints}                         # a cut joint: its reaction, not its multipliers
        info = dict(info)
        info["relative_degrees"] = dict(zip(row_names, sm.relative_degrees()))
        info["lambda"] = dict(zip(row_names, (float(np.sqrt(c)) if d == 2 else float(c)
                                              for c, d in zip(sm.sw.c0, sm.relative_degrees()))))
        if sm.energy:
            info["E0"] = float(sm.sw.par[P_E0])
        series = {row_names[sm.mc + ia].replace(".tangency", ".angle"): S[:, ia] for ia in range(naux)}
        return Result(t, Q, V, energy=en, residuals=res, reactions=reactions, info=info,
                      q_names=model.coordinate_names(), v_names=model.velocity_names(), model=model, series=series)

    info = {"formulation": "stabilized", "energy_constraint": sm.energy, "initial_correction": correction,
            "symbolic": bool(symbolic)}
    if symbolic:     # plain coordinates (no quaternions): nothing to project
        return OdeSystem(x0=x0, fun=fun_symbolic, make_result=make_result, split=lambda x: (x[:nq], x[nq:nq + nv]),
                         rhs=gen_rhs, params=gen_params, nsplit=0, info=info)
    return OdeSystem(x0=x0, fun=fun, make_result=make_result, split=lambda x: (x[:nq], x[nq:nq + nv]),
                     rhs=stabilized_model_rhs if compiled else None, project=stabilized_project, params=sm.sw,
                     project_py=project_py, nsplit=0, python_only=not compiled, info=info)


class _Generated:
    """The generated module of the model's stabilized DAE (``symbolic=True``) with its parameter array
    ``[E0 | gains c[i, k] | eps_rel, energy window, energy row]`` (layout of :mod:`multibody.symbolic.dae`)."""

    def __init__(self, model, sm, dls_eps):
        from multibody.symbolic.stabilized import compile_stabilized

        self.sd, self.module = compile_stabilized(model, sm.energy)
        names = _row_names(model, sm)
        if list(self.sd.names) != names or self.sd.levels != sm.relative_degrees():
            raise ModelError(f"model '{model.name}': the symbolic rows {list(self.sd.names)} do not match the "
                             f"generic rows {names}", element=model.name)
        dae = self.sd.dae
        c = np.zeros((dae.m, dae.rmax))
        c[:, 0] = sm.sw.c0[:dae.m]
        if dae.rmax > 1:
            c[:, 1] = sm.sw.c1[:dae.m]
        self.params = np.concatenate([[sm.sw.par[P_E0]] if sm.energy else [], c.ravel(),
                                      [dls_eps, sm.sw.par[P_WIN], float(sm.energy)]]).astype(np.float64)
        self.m = dae.m

    def rows_and_reactions(self, X):
        """The residuals f_i and the reactions N at every row of X."""
        X = np.ascontiguousarray(X)
        F = np.empty((X.shape[0], self.m))
        NN = np.empty((X.shape[0], self.m))
        _batch(self.module.eval_constraints, X, self.params, F)
        _batch(self.module.reactions, X, self.params, NN)
        return F, NN


def _row_names(model, sm):
    """Names of the rows in the stabilized layout: compiled rows, auxiliary rows, Python rows, energy."""
    tab = model.constraint_table
    names = list(tab.row_names[:tab.m_compiled])
    for c in model.constraints:
        if type(c).__name__ == "RollingOnProfile":
            names.append(f"{c.name}.tangency")
    names += list(tab.row_names[tab.m_compiled:])
    if sm.energy:
        names.append("energy")
    return names


register_formulation("stabilized", stabilized_system)
