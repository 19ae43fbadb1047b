"""The ``"stabilized"`` formulation: seed 000's constraint stabilization on a Model's constraints (Sec. 1–3).

Tree coordinates + the Model's constraints (``model.constraints``), with the reactions treated as controls:
every residual obeys a stable linear law (seed 000, eqs. 2.4, 2.5) and the reactions solve ``A N = −φ(X, λ)``
(eqs. 2.6–2.9; ``kernels/stabilization.py``) at every evaluation of the right-hand side. Contacts on curves add
their auxiliary variables (the contact angle, seed 000 eq. 3.6) to the state. ``symbolic=True`` takes the same
system from generated code (:mod:`multibody.symbolic.stabilized`). The same law on a derived DAE is
:class:`multibody.formulations.stabilized_dae.StabilizedSystem`.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from multibody.errors import ConstraintError, ModelError, shown
from multibody.formulations.base import (MAX_INITIAL_CORRECTION, OdeSystem, callback_forces, check_state,
                                         register_formulation)
from multibody.formulations.constrained import ConstrainedTree, consistent_state, free_dynamics
from multibody.formulations.tree_rhs import tree_energy
from multibody.kernels.configuration import normalize_kernel
from multibody.kernels.energy import energy_kernel
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.kkt import backward_sub_T, cholesky_lower, forward_sub
from multibody.kernels.spatial import KERNEL
from multibody.kernels.stabilization import DLS_EPS_REL, shifted_energy_into
from multibody.rows.constraint_rows import ConstraintRows, eval_rows, make_work

__all__ = ["stabilized_system", "StabilizedModel", "stabilized_model_rhs", "stabilized_project"]

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
    free_dynamics(t, x[:nq + nv], w, w.tree.tau)
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
    T, Vg = energy_kernel(p.mi, p.mf, q, v, p.work)
    return T + Vg + _spring_potential(w, q, v)


@njit(**KERNEL)
def _spring_potential(w, q, v):
    p = w.tree
    F = p.forces
    if F.dof_stiffness.shape[0] == 0 or (F.spring_k.shape[0] == 0 and not np.any(F.dof_stiffness)):
        return 0.0
    Vs, P = applied_forces_kernel(p.mi, p.mf, q, v, F, 0.0, p.work, p.body_forces, p.tau_buffer)   # (the potential)
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
            raise ModelError(f"stabilization gains must be finite and >= 0, got {shown(lam)!r}", element="lam")
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
    normalize_kernel(sw.w.tree.mi, x, x)


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
    (``kernels.stabilization.solve_dls``, ``dls_eps`` relative), the energy row by its shifted Schur complement so that the
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
    from multibody.rows.reactions import all_joint_reactions
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
        w.tree.tau[:] = tc
        callback = None
    tau_const = w.tree.tau.copy()
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
        w.tree.tau[:] = tau_const
        if callback is not None:
            extra = callback_forces(callback, t, x[:nq], x[nq:nq + nv], nv, model.name)
            w.tree.tau[:] += extra
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
                J = all_joint_reactions(model, sm.rows, Q[k], V[k], xd[nq:nq + nv], sm.sw.N[:sm.R], sm.mc, t[k])
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
        self.module.each_constraints(X, self.params, F)
        self.module.each_reactions(X, self.params, NN)
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
