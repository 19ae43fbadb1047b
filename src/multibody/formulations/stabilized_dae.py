"""Seed 000's stabilization of a derived DAE: :class:`StabilizedSystem` (Sec. 1–2).

For ``Ẋ = B(X) N + F(X)`` with constraints ``f_i(X) = 0`` of relative degrees ``r_i`` (found by
:func:`multibody.symbolic.dae.derive`), the reactions are taken from the exponentially stable residual
equations ``f_i^{(r_i)} + ... + λ_i^{r_i} f_i = 0`` (eqs. 2.4, 2.5), i.e. from the linear system

    A(X) N = −φ(X, λ)                                                    (seed 000, eqs. 2.6–2.9)

solved at every evaluation of the right-hand side (``kernels/stabilization.py``: damped least squares by
default). Residuals then decay like ``exp(−λ_i t)`` instead of drifting (eq. 2.2 gives ``f = c2 t + c1``).
Where the analytic limit of ``N`` at the singular points is known (the hoop's turning points, seed 000
Sec. 3), a system supplies its own solver with the same signature.

Integration: :meth:`StabilizedSystem.simulate` runs the compiled fixed-step loop of
:mod:`multibody.integrate.fixed_step` (``rk2`` — the seed's explicit 2nd-order Runge–Kutta —, ``heun``,
``rk4``) or scipy's adaptive DOP853 through :mod:`multibody.integrate.adaptive`, and returns a
:class:`multibody.result.Result` whose ``residuals`` hold ``f_i(t)`` for every constraint. The same law on a
Model's constraints is the ``"stabilized"`` formulation (``formulations/stabilized.py``).
"""
import time

import numpy as np

from multibody.errors import IntegrationError, ModelError
from multibody.integrate.adaptive import solve_adaptive
from multibody.integrate.fixed_step import integrate_fixed, method_code
from multibody.integrate.tableaux import STAGES
from multibody.kernels.stabilization import DLS_EPS_REL
from multibody.result import Result

__all__ = ["StabilizedSystem", "max_residual"]


class StabilizedSystem:
    """A compiled stabilized system: ``Ẋ = B N + F`` with ``N`` from ``A N = −φ(X, λ)`` (seed 000, eq. 2.9).

    Built from a :class:`multibody.symbolic.dae.DAE` (see :func:`multibody.symbolic.dae.derive`).
    ``solver`` is ``"dls"`` (``kernels.stabilization.solve_dls``, the default), ``"exact"`` (``solve_exact``, the seed's
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
        out = np.empty((x.shape[0], self.dae.m))
        self.module.each_constraints(x, params, out)
        return out

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
            self.module.each_reactions(np.ascontiguousarray(xs), params, Ns)
            reactions["N"] = Ns
        result = Result(t, xs, np.zeros((len(t), 0)), residuals={nm: res[:, i] for i, nm in enumerate(self.names)},
                        reactions=reactions, info=info, q_names=names, v_names=[])
        if not ok:
            raise IntegrationError(f"stabilized integration ({method}) failed at t = {t[-1]:.17g}",
                                   result=result, reason=info.get("message", "non-finite state"))
        return result


def max_residual(result, t_from=None):
    """``max_i max_t |f_i(t)|`` over ``t >= t_from`` (default: the second half of the run), and per constraint."""
    t = result.t
    if t_from is None:
        t_from = t[0] + 0.5 * (t[-1] - t[0])
    sel = t >= t_from
    by = {k: float(np.max(np.abs(v[sel]))) for k, v in result.residuals.items()}
    return max(by.values()), by
