"""The ``"constrained"`` formulation: tree coordinates + the Model's constraints with multipliers (seed 001 §3.6).

A model's constraints (``model.constraints``: the cut joints that close loops, points on planes and curves,
rolling discs, user functions; ``multibody.model.constraints``) add rows to the tree's equations
``A q̈ = B`` (seed 001, eqs. 3.189–3.192: ``−A q̈ + B + B* + Hᵀλ = 0``). Position rows are used at the
acceleration level ``G v̇ = γ`` (ḟ = G v), velocity rows (rolling without slip) differentiated once, and the
KKT system is solved for v̇ and the multipliers λ (``kernels/kkt.py``: range space, augmented Lagrangian,
redundant rows allowed):

    [[M, Gᵀ], [G, 0]] [v̇; −λ] = [τ − C; γ]        (seed 001 §3.6.1; the KKT form of eq. 2.49)

Drift control (``stabilization``): ``"projection"`` (default: after every step a Newton projection of q onto
the position rows and a mass-orthogonal projection of v onto all rows), ``"baumgarte"`` (``γ − 2α ḟ − β² f``
for position rows, ``γ − 2α g`` for velocity rows), ``"seed000"`` (seed 000 eqs. 2.4/2.5: residuals obey
``f̈ + 2λḟ + λ²f = 0`` and ``ġ + λ g = 0``), ``"none"``, or a Python hook ``stabilizer(t, q, v, f, G, γ) -> γ'``.

Everything is compiled (``kernels/constraints.py``, ``kernels/kkt.py``; fixed-step runs are one compiled loop)
unless the model has Python constraints (``UserConstraint``, ``VelocityConstraint``), a torque callback or a
hook: then the right-hand side runs in Python around the same compiled pieces.

Sign of the multipliers: ``M v̇ = τ − C + Gᵀλ``; for a cut joint λ is the reaction on its child body (a force
at the joint point along the ground axes for the point rows, a moment for the rotation rows); for a
``RollingDisc`` the contact force on the disc (normal, then along the plane's two tangents).
"""

import numpy as np
from numba import njit

from multibody.kernels.spatial import KERNEL

from multibody.errors import ConstraintError, ModelError
from multibody.formulations.base import (MAX_INITIAL_CORRECTION, POLISH, OdeSystem, callback_forces, check_state,
                                         initial_correction, register_formulation)
from multibody.formulations.tree_rhs import tree_energy, tree_rhs_extra
from multibody.integrate.manifold import has_quaternions
from multibody.kernels.configuration import integrate_kernel, normalize_kernel
from multibody.kernels.crba import crba_kernel
from multibody.kernels.kkt import kkt_solve
from multibody.result import Result
from multibody.rows.constraint_rows import (CFG_ALPHA, CFG_BETA, CFG_EPS, CFG_ITER, CFG_LAMBDA, CFG_M, CFG_MAXIT,
                                            CFG_PROJECT, CFG_STAB, CFG_TOL, ConstraintRows, eval_rows, make_work)
# numba's on-disk cache indexes written before Work moved to rows/ refer to it by this module's name: with
# the name here they load, and the functions whose source changed are compiled again
from multibody.rows.constraint_rows import Work  # noqa: F401,E402  (see above)

__all__ = ["ConstrainedTree", "constrained_system", "constraint_residuals", "STABILIZATIONS"]

#: drift-control choices and their codes in the compiled right-hand side
STABILIZATIONS = {"projection": 0, "none": 0, "baumgarte": 1, "seed000": 2}


@njit(**KERNEL)
def stabilized_gamma(w, m):
    """γ' of the drift control ``cfg[CFG_STAB]`` for rows < m, in place in ``w.gam``: Baumgarte (1) or seed 000
    (2) (see the module docstring)."""
    code = int(w.cfg[CFG_STAB])
    if code == 1:
        al = w.cfg[CFG_ALPHA]
        be = w.cfg[CFG_BETA]
        for r in range(m):
            if w.level[r] == 2:
                w.gam[r] -= 2.0 * al * w.fd[r] + be * be * w.f[r]
            else:
                w.gam[r] -= 2.0 * al * w.f[r]
    elif code == 2:
        lam = w.cfg[CFG_LAMBDA]
        for r in range(m):
            if w.level[r] == 2:
                w.gam[r] -= 2.0 * lam * w.fd[r] + lam * lam * w.f[r]   # seed 000, eq. 2.4
            else:
                w.gam[r] -= lam * w.f[r]                               # seed 000, eq. 2.5


@njit(**KERNEL)
def free_dynamics(t, x, w, tau_extra):
    """``w.xdot`` = [q̇, a_free] (the tree's forward dynamics with the applied forces + ``tau_extra``) and
    ``w.M`` = M(q) (CRBA)."""
    nq = w.qbuf.shape[0]
    tree_rhs_extra(t, x, w.tree, tau_extra, w.xdot)
    crba_kernel(w.tree.mi, w.tree.mf, x[:nq], w.tree.work, w.M)


@njit(**KERNEL)
def constrained_accelerations(t, x, w, tau_extra, m, out):
    """v̇ into ``out`` and the multipliers into ``w.lam`` for rows < m already in ``w`` (``eval_rows`` and any
    Python rows): drift control, free dynamics, KKT solve. Returns False when the solve failed."""
    nq = w.qbuf.shape[0]
    stabilized_gamma(w, m)
    free_dynamics(t, x, w, tau_extra)
    return kkt_solve(w.M, w.G, m, w.sel_all, w.xdot[nq:], w.gam, w.cfg[CFG_EPS], int(w.cfg[CFG_ITER]), w.L, w.Y,
                     w.S, w.LS, w.keep, w.tmp, w.w, w.lam, out)


@njit(**KERNEL)
def constrained_rhs(t, x, w, out):
    """The compiled right-hand side ``rhs(t, x, params, out)`` of the constrained formulation (x = [q, v])."""
    nq = w.qbuf.shape[0]
    m = eval_rows(x[:nq], x[nq:], w)
    ok = constrained_accelerations(t, x, w, w.tree.tau, m, out[nq:])
    for k in range(nq):
        out[k] = w.xdot[k]
    if not ok:
        out[nq] = np.nan


@njit(**KERNEL)
def project_positions(q, w, m):
    """Newton projection of q onto the compiled position rows (mass-weighted least change,
    ``q ← q ⊕ M⁻¹Gᵀ(GM⁻¹Gᵀ)⁻¹(−f)``), in place. Returns the final residual.

    It stops at ``|f| ≤ cfg[CFG_TOL]`` (0: round-off), after ``cfg[CFG_MAXIT]`` steps, or — once below
    ``POLISH`` (``formulations/base.py``) — when a step no longer halves ``|f|``: near a singular configuration
    a small residual alone is no small distance."""
    mi = w.tree.mi
    nv = w.dv.shape[0]
    maxit = int(w.cfg[CFG_MAXIT])
    err = 0.0
    prev = np.inf
    for it in range(maxit + 1):
        eval_rows(q, w.qdd0, w)
        err = 0.0
        for r in range(m):
            if w.sel_pos[r] != 0 and not abs(w.f[r]) <= err:   # NaN propagates
                err = abs(w.f[r])
        if err <= w.cfg[CFG_TOL] or it == maxit or (prev <= POLISH and not err < 0.5 * prev):
            break
        prev = err
        crba_kernel(mi, w.tree.mf, q, w.tree.work, w.M)
        for r in range(m):
            w.b[r] = -w.f[r]
        kkt_solve(w.M, w.G, m, w.sel_pos, w.qdd0, w.b, w.cfg[CFG_EPS], int(w.cfg[CFG_ITER]), w.L, w.Y, w.S, w.LS,
                  w.keep, w.tmp, w.w, w.lam, w.dv)
        integrate_kernel(mi, q, w.dv, 1.0, w.qbuf, False)
        for k in range(q.shape[0]):
            q[k] = w.qbuf[k]
    return err


@njit(**KERNEL)
def project_velocities(q, v, w, m):
    """Mass-orthogonal projection of v onto all compiled rows (G v = 0), in place."""
    eval_rows(q, v, w)
    crba_kernel(w.tree.mi, w.tree.mf, q, w.tree.work, w.M)
    for r in range(m):
        w.b[r] = -(w.fd[r] if w.level[r] == 2 else w.f[r])
    kkt_solve(w.M, w.G, m, w.sel_all, w.qdd0, w.b, w.cfg[CFG_EPS], int(w.cfg[CFG_ITER]), w.L, w.Y, w.S, w.LS,
              w.keep, w.tmp, w.w, w.lam, w.dv)
    for k in range(v.shape[0]):
        v[k] += w.dv[k]


@njit(**KERNEL)
def constrained_project(x, w):
    """The compiled projection ``project(x, params)`` after every step: positions, then velocities; a
    failure (positions that cannot be assembled) leaves NaN in x, which stops the run."""
    nq = w.qbuf.shape[0]
    m = int(w.cfg[CFG_M])
    q = x[:nq]
    v = x[nq:]
    normalize_kernel(w.tree.mi, q, q)
    if w.cfg[CFG_PROJECT] != 0.0 and m > 0:
        err = project_positions(q, w, m)
        if not err <= 1e-8:
            x[0] = np.nan
            return
        project_velocities(q, v, w, m)


class ConstrainedTree:
    """Tree dynamics + the Model's constraints with multipliers (seed 001 §3.6, eqs. 3.189–3.192); see the
    module docstring for the drift control. ``accelerations(t, q, v) -> (v̇, λ)``, ``rhs(t, x)``,
    ``project_position``, ``project_velocity``; ``rows``: the :class:`ConstraintRows` (with room for ``extra_rows``
    rows after the model's, e.g. the locked coordinates of a run with joint limits)."""

    def __init__(self, model, stabilization="projection", baumgarte=(10.0, 10.0), stabilizer=None, al_eps=1e-10,
                 tau=None, seed000_lambda=100.0, extra_rows=0):
        if stabilizer is not None and not callable(stabilizer):
            raise ModelError("stabilizer must be callable stabilizer(t, q, v, f, G, gam) -> gam", element="stabilizer")
        if stabilization not in STABILIZATIONS:
            raise ModelError(f"stabilization must be one of {', '.join(STABILIZATIONS)}, got {stabilization!r}",
                             element="stabilization")
        self.model = model
        self.nq, self.nv = model.nq, model.nv
        self.tau = model.torque_callback if tau is None else tau
        tau_const = None
        if self.tau is not None and not callable(self.tau):
            tau_const = np.array(self.tau, dtype=float).reshape(-1)
            if tau_const.shape != (model.nv,) or not np.all(np.isfinite(tau_const)):
                raise ModelError(f"tau must be a callable tau(t, q, v) or {model.nv} finite numbers", element="tau")
            self.tau = None
        self.rows = ConstraintRows(model, work=make_work(model, extra_rows=extra_rows) if extra_rows else None)
        self.w = self.rows.w
        if tau_const is not None:
            self.w.tree.tau[:] = tau_const
        self.stabilization = stabilization if stabilizer is None else "hook"
        self.stabilizer = stabilizer
        cfg = self.w.cfg
        cfg[CFG_STAB] = STABILIZATIONS[stabilization] if stabilizer is None else 0
        cfg[CFG_PROJECT] = 1.0 if self.stabilization == "projection" else 0.0
        cfg[CFG_ALPHA], cfg[CFG_BETA] = map(float, baumgarte)
        cfg[CFG_LAMBDA] = float(seed000_lambda)
        cfg[CFG_EPS] = float(al_eps)
        self.compiled = not (self.rows.python or stabilizer is not None or callable(self.tau))
        self.singular_events = []
        self._zero = np.zeros(self.nv)
        self.last_projection = (0, 0.0, True)

    @property
    def cons(self):
        return self.rows

    def accelerations(self, t, q, v):
        """(v̇, λ) with λ per constraint row (sign: M v̇ = τ − C + Gᵀλ)."""
        q = np.ascontiguousarray(q, dtype=np.float64)
        v = np.ascontiguousarray(v, dtype=np.float64)
        m = self.rows.fill(q, v, t)
        extra = self.w.tree.tau if self.tau is None else self._callback(t, q, v)
        if self.stabilizer is not None:
            gam = self.stabilizer(t, q.copy(), v.copy(), self.w.f[:m].copy(), self.w.G[:m].copy(),
                                  self.w.gam[:m].copy())
            self.w.gam[:m] = np.asarray(gam, dtype=float).reshape(m)
        vd = np.empty(self.nv)
        x = np.concatenate([q, v])
        ok = constrained_accelerations(float(t), x, self.w, extra, m, vd)
        if not ok:
            raise ConstraintError(f"model '{self.model.name}': the mass matrix or the constraint system is singular "
                                  f"at t = {t:.6g}", time=t, joints=self.rows.names)
        return vd, self.w.lam[:m].copy()

    def _callback(self, t, q, v):
        return callback_forces(self.tau, t, q, v, self.nv, self.model.name) + self.w.tree.tau

    def rhs(self, t, x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(self.nq + self.nv)
        if self.compiled:
            constrained_rhs(float(t), x, self.w, out)
            return out
        out[self.nq:], _ = self.accelerations(t, x[:self.nq], x[self.nq:])
        out[:self.nq] = self.model.qdot(x[:self.nq], x[self.nq:])
        return out

    def project_position(self, q, t=None, tol=0.0, maxiter=25, held=None):
        """Newton projection onto the position rows (mass-weighted least change) down to ``|f| ≤ tol`` (0:
        round-off, see :func:`project_positions`); ``ConstraintError`` naming the constraints when the positions
        cannot be assembled. ``held = (cv, cq, value)``: coordinates kept in place — q[cq] = value, their rows
        e_cv (:meth:`unit_rows`, no change) beside the position rows (a run across switches: the joints locked or
        on a stop)."""
        q = self.model.normalize(np.array(q, dtype=float))
        it = None
        if not self.rows.python and held is None:
            self.w.cfg[CFG_TOL], self.w.cfg[CFG_MAXIT] = tol, maxiter
            if not self.rows._aux_ready:
                self.rows.init_aux(q)
            err = project_positions(q, self.w, self.rows.m)
        else:
            cv, cq, value = held if held is not None else (np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0),)
            q[cq] = value
            sel = self.w.sel_pos
            prev = np.inf
            for it in range(maxiter + 1):
                m = self.rows.fill(q, None, 0.0 if t is None else t)
                f = self.w.f[:m]
                err = np.abs(f[sel[:m] == 1]).max(initial=0.0)
                if err <= tol or it == maxiter or (prev <= POLISH and not err < 0.5 * prev):
                    break
                prev = err
                rows = self.unit_rows(m, cv)
                dq = self.min_norm(q, np.concatenate([sel[:m], np.ones(len(cv), dtype=np.int64)]),
                                   np.concatenate([-f, np.zeros(len(cv))]), rows)
                q = self.model.integrate(q, dq, 1.0)
                q[cq] = value
        if not err <= 1e-8:
            f = self.rows.evaluate(q, None, 0.0 if t is None else t)[0]
            bad = self.rows.worst(f)
            raise ConstraintError(f"model '{self.model.name}': the positions cannot be assembled; residual {err:.3e} "
                                  f"in {', '.join(bad)} after {maxiter} Newton steps", time=t, joints=bad)
        #: (Newton steps, residual, converged) of this projection: converged when it stopped before its step budget
        #: or below ``tol`` (the steps of the compiled projection are not counted: 0 there)
        self.last_projection = (0 if it is None else it, float(err), it is None or it < maxiter or err <= tol)
        return q

    def unit_rows(self, m, coords):
        """Write the rows ``e_c`` of the velocity coordinates ``coords`` after the m rows filled (γ = 0; room for
        them: ``extra_rows``); returns the number of rows."""
        w = self.w
        k = len(coords)
        w.G[m:m + k] = 0.0
        w.G[m + np.arange(k), coords] = 1.0
        w.gam[m:m + k] = 0.0
        return m + k

    def min_norm(self, q, sel, b, m=None):
        """Δ minimizing ΔᵀMΔ with G Δ = b on the selected rows r < m (default: the constraints' rows; those in
        ``self.w`` already filled)."""
        m = self.rows.m if m is None else m
        crba_kernel(self.w.tree.mi, self.w.tree.mf, np.ascontiguousarray(q), self.w.tree.work, self.w.M)
        self.w.b[:m] = b
        out = np.empty(self.nv)
        kkt_solve(self.w.M, self.w.G, m, sel, self._zero, self.w.b, self.w.cfg[CFG_EPS], int(self.w.cfg[CFG_ITER]),
                  self.w.L, self.w.Y, self.w.S, self.w.LS, self.w.keep, self.w.tmp, self.w.w, self.w.lam, out)
        return out

    def project_velocity(self, q, v, t=0.0, known=None):
        """Mass-orthogonal projection of v onto every row (G v + c = 0); ``known``: velocity coordinates held at
        zero besides (their rows :meth:`unit_rows`)."""
        m = self.rows.fill(q, v, t)
        fd = self.w.fd[:m]
        g = np.where(self.w.level[:m] == 2, fd, self.w.f[:m])
        if known is None:
            return np.asarray(v, dtype=float) + self.min_norm(q, self.w.sel_all, -g)
        rows = self.unit_rows(m, known)
        v = np.asarray(v, dtype=float) + self.min_norm(q, np.ones(rows, dtype=np.int64),
                                                       -np.concatenate([g, v[known]]), rows)
        v[known] = 0.0
        return v

    singular_tol = 1e-3

    def check_singular(self, t, q):
        """Watch the conditioning of the position rows' Jacobian (seed 001 §2.1: the equations must stay
        independent). The rank at the start is the reference; when the smallest kept singular value falls
        below ``singular_tol`` × the largest, an episode starts; its record carries the time of the minimum,
        that ratio and the constraints whose rows make up the vanishing direction."""
        m = self.rows.fill(q, None, t)
        pos = self.w.level[:m] == 2
        G = self.w.G[:m][pos]
        if G.size == 0:
            return None
        U, s, _ = np.linalg.svd(G, full_matrices=False)
        if not hasattr(self, "rank0"):
            self.rank0 = int(np.sum(s > 1e-10 * s[0]))
            self._episode = None
            return None
        k = self.rank0 - 1
        ratio = float(s[k] / s[0]) if 0 <= k < len(s) else 0.0
        if ratio < self.singular_tol:
            wk = np.zeros(m)
            wk[pos] = np.abs(U[:, k])
            joints = [n for n, sl in self.rows.slices.items() if wk[sl].max(initial=0) > 0.1]
            if self._episode is None:
                self._episode = dict(time=float(t), joints=joints, sigma_ratio=ratio)
                return self._episode
            if ratio < self._episode["sigma_ratio"]:
                self._episode.update(time=float(t), joints=joints, sigma_ratio=ratio)
        elif self._episode is not None:
            self.singular_events.append(self._episode)
            self._episode = None
        return None

    def finish_events(self):
        if getattr(self, "_episode", None) is not None:
            self.singular_events.append(self._episode)
            self._episode = None
        return self.singular_events


def constraint_residuals(rows, t, Q, V):
    """Per constraint: the max |residual| of its rows (position rows; velocity rows for velocity-only
    constraints) at each sample (t, Q, V), plus ``"velocity"``: the max |ḟ| or |g| of all rows."""
    res = {}
    if not len(t):
        return res
    F, RATE = [], []
    lev = rows.level
    for k in range(len(t)):
        m = rows.fill(Q[k], V[k], t[k])
        F.append(rows.w.f[:m].copy())
        RATE.append(np.where(lev[:m] == 2, rows.w.fd[:m], rows.w.f[:m]))
    F, RATE = np.array(F), np.array(RATE)
    for name, sl in rows.slices.items():
        pos = lev[sl] == 2
        part = F[:, sl][:, pos] if pos.any() else F[:, sl]
        res[name] = np.abs(part).max(axis=1, initial=0.0)
    res["velocity"] = np.abs(RATE).max(axis=1, initial=0.0)
    return res


def constraint_outputs(rows, accelerations, t, Q, V):
    """Per constraint: the max |residual| of its rows (position rows; velocity rows for velocity-only
    constraints), along the samples, plus ``"velocity"``: the max |ḟ| or |g| of all rows; and the reactions (a
    function: computed when the Result's reactions are first read): the multipliers of every constraint and
    every joint's reaction (tree and cut) in the joint frame (``multibody.rows.reactions``)."""
    res, reac = {}, {}
    if not len(t):
        return res, reac
    res = constraint_residuals(rows, t, Q, V)
    L = np.array([accelerations(t[k], Q[k], V[k])[1] for k in range(len(t))])
    for name, sl in rows.slices.items():
        reac[name] = L[:, sl]

    def reactions():
        from multibody.rows.reactions import all_joint_reactions

        joints = {}
        for k in range(len(t)):
            a, lam = accelerations(t[k], Q[k], V[k])          # fills the rows' covectors at (q, v) too
            for name, W in all_joint_reactions(rows.model, rows, Q[k], V[k], a, lam, rows.mc, t[k]).items():
                joints.setdefault(name, np.zeros((len(t), 6)))[k] = W
        return {**reac, **joints}                             # a cut joint: its reaction, not its multipliers

    return res, reactions


def constrained_system(model, q0=None, v0=None, tau=None, energy=True, stabilization="projection",
                       baumgarte=(10.0, 10.0), stabilizer=None, consistent=True, detect_singular=None,
                       on_singular="record", al_eps=1e-10, seed000_lambda=100.0,
                       max_correction=MAX_INITIAL_CORRECTION):
    """Tree coordinates + the model's constraints with multipliers (seed 001 §3.6).

    Initial values are made consistent by a Newton projection of ``q0`` and a mass-orthogonal projection of
    ``v0`` (``consistent=True``; ``ConstraintError`` naming the constraints when impossible, or when a
    coordinate would move by more than ``max_correction`` (rad or m; None accepts any); the change is in
    ``result.info["initial_correction"]``).
    ``detect_singular``: check the rank of the position rows' Jacobian after every step (default: for
    nv ≤ 60; adaptive methods); a rank drop is recorded in ``result.info["singular_configurations"]`` with the
    time and the constraints, or raised as ``ConstraintError`` with ``on_singular="raise"``.
    ``al_eps``: the relative regularization of the KKT solve (``kernels/kkt.py``); through singular positions it
    sets a window of width ~√al_eps whose error grows with it, while below ~1e-9 round-off off the constraints,
    amplified near the passage, dominates (``multibody.systems.iftomm.A02_AL_EPS``).
    """
    if not model.constraints:
        raise ConstraintError(f"model '{model.name}' has no constraints (no cut joints, nothing added with "
                              "add_constraint); use formulation='tree'")
    q0, v0 = check_state(model, q0, v0)
    if on_singular not in ("record", "raise"):
        raise ModelError(f"on_singular must be 'record' or 'raise', got {on_singular!r}", element="on_singular")
    ct = ConstrainedTree(model, stabilization, baumgarte, stabilizer, al_eps, tau, seed000_lambda)
    ct.rows.init_aux(q0)
    correction = None
    if consistent:
        q0, v0, correction = consistent_state(ct, q0, v0, max_correction)
    nq, nv = model.nq, model.nv
    if detect_singular is None:
        detect_singular = nv <= 60
    if detect_singular:
        ct.check_singular(0.0, q0)
    project_positions_too = ct.stabilization == "projection"

    def project_state(t, x):
        """Positions and velocities onto the constraints (compiled when every row is); the Python path
        names the constraints when the positions cannot be assembled."""
        if ct.compiled:
            y = np.array(x, dtype=float)
            constrained_project(y, ct.w)
            if np.isfinite(y[0]):
                return y
        q = x[:nq]
        if project_positions_too:
            q = ct.project_position(q, t=t)
            v = ct.project_velocity(q, x[nq:], t)
        else:
            q = model.normalize(q)
            v = x[nq:]
        return np.concatenate([q, v])

    def project_py(t, x):
        """After every step: :func:`project_state` and the watch for singular configurations."""
        y = project_state(t, x)
        q = y[:nq]
        if detect_singular:
            ev = ct.check_singular(t, q)
            if ev is not None and on_singular == "raise":
                raise ConstraintError(f"model '{model.name}': singular configuration at t = {t:.6g} (the "
                                      f"constraint Jacobian is losing rank, σ_min/σ_max = {ev['sigma_ratio']:.1e}) "
                                      f"in {', '.join(ev['joints'])}", time=t, joints=ev["joints"])
        return y

    def make_result(t, X, info):
        X = np.asarray(X, float).reshape(len(t), nq + nv)
        Q, V = X[:, :nq].copy(), X[:, nq:].copy()
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V)
            en = {"kinetic": T, "potential": Vp}
        res, reac = constraint_outputs(ct.rows, ct.accelerations, t, Q, V)
        info = dict(info)
        info["singular_configurations"] = list(ct.finish_events())
        return Result(t, Q, V, energy=en, residuals=res, reactions=reac, info=info,
                      q_names=model.coordinate_names(), v_names=model.velocity_names(), model=model)

    w = ct.w
    quats = has_quaternions(w.tree.mi)
    return OdeSystem(x0=np.concatenate([q0, v0]), fun=ct.rhs, make_result=make_result,
                     split=lambda x: (x[:nq], x[nq:]), rhs=constrained_rhs if ct.compiled else None,
                     project=_project_for(ct, quats), params=w, project_py=project_py, project_output=project_state,
                     nsplit=nq,
                     python_only=not ct.compiled,
                     info={"formulation": "constrained", "stabilization": ct.stabilization,
                           "constraints": list(ct.rows.names), "constraint_rows": ct.rows.m,
                           "initial_correction": correction})


def consistent_state(ct, q0, v0, max_correction=MAX_INITIAL_CORRECTION):
    """(q, v) on the constraints of the :class:`ConstrainedTree` ``ct`` nearest (q0, v0) and how far they moved
    (:func:`~multibody.formulations.base.initial_correction`)."""
    q = ct.project_position(q0, t=0.0)
    v = ct.project_velocity(q, v0)
    return q, v, initial_correction(ct.model, q0, q, v0, v, max_correction, ct.rows.names)


def _project_for(ct, quats):
    """The compiled projection of the fixed-step loop: positions and velocities with ``"projection"``, else
    the quaternion normalization only (``constrained_project`` checks the code)."""
    from multibody.integrate.fixed_step import no_project

    if ct.stabilization == "projection" or quats:
        return constrained_project
    return no_project


register_formulation("constrained", constrained_system)
