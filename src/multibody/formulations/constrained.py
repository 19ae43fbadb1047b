"""Tree dynamics + constraint equations with Lagrange multipliers; drift control (seed 001 §3.6).

A model whose joint graph has loops is split into a spanning tree and cut joints; the cut joints
become constraint equations ``f(q) = 0`` on top of the tree's equations ``A q̈ = B`` (seed 001,
eqs. 3.189–3.192: ``−A q̈ + B + B* + Hᵀλ = 0``).  The holonomic constraints are used at the
acceleration level ``H q̈ = −Ḣ q̇`` and solved together with the dynamics:

    [[M, Hᵀ], [H, 0]] [v̇; μ] = [τ − C; γ],   λ = −μ        (seed 001 §3.6.1; KKT as in eq. 2.49)

Drift control: Baumgarte (``γ − 2α H v − β² f``), projection of positions and velocities after
every integration step (Newton, mass-weighted), or a user hook (``stabilizer=`` e.g. seed 000's
method from :mod:`multibody.formulations.stabilized`).  Redundant constraints (rank-deficient H,
e.g. planar loops closed by spatial hinges, Bricard) are solved by a rank-revealing least squares;
an ill-conditioned configuration is reported with the time and the joints involved.

This module also holds the generic projected integrator used by the Cartesian formulation.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from scipy.integrate import DOP853, RK45, Radau

from ..errors import ConstraintError, IntegrationError
from .base import register_formulation

__all__ = ["integrate_projected", "CutJointConstraints", "ConstrainedTree", "constrained_system"]


def integrate_projected(fun, y0, t_span, t_eval=None, project=None, rtol=1e-10, atol=1e-10,
                        method="DOP853", max_step=np.inf, dt=None):
    """Integrate ``ẏ = fun(t, y)``; after every accepted step apply ``y ← project(t, y)``.

    ``method``: ``"DOP853"`` / ``"RK45"`` (adaptive; the FSAL derivative is recomputed after each
    projection) or ``"RK4"`` (fixed step ``dt``).  Outputs at ``t_eval`` come from the step's dense
    output and are projected too.  Returns ``(t, Y, stats)``.
    """
    t0, t1 = float(t_span[0]), float(t_span[1])
    y0 = np.asarray(y0, float)
    if t_eval is None:
        t_eval = np.array([t0, t1])
    t_eval = np.asarray(t_eval, float)
    out = np.empty((len(t_eval), y0.size))
    k = 0
    nfev = [0]

    def f(t, y):
        nfev[0] += 1
        return fun(t, y)

    while k < len(t_eval) and t_eval[k] <= t0:
        out[k] = y0
        k += 1
    nsteps = 0
    if method == "RK4":
        if dt is None:
            raise IntegrationError("method 'RK4' needs a step dt", reason="missing dt")
        t, y = t0, y0.copy()
        while t < t1 - 1e-14 * max(1.0, abs(t1)):
            h = min(dt, t1 - t)
            k1 = f(t, y)
            k2 = f(t + h / 2, y + h / 2 * k1)
            k3 = f(t + h / 2, y + h / 2 * k2)
            k4 = f(t + h, y + h * k3)
            yn = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if project is not None:
                yn = project(t + h, yn)
            while k < len(t_eval) and t_eval[k] <= t + h + 1e-12 * h:
                s = (t_eval[k] - t) / h   # cubic Hermite between the step's ends
                fn = f(t + h, yn)
                h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
                yk = h00 * y + h10 * h * k1 + h01 * yn + h11 * h * fn
                out[k] = project(t_eval[k], yk) if project is not None else yk
                k += 1
            t, y = t + h, yn
            nsteps += 1
        return t_eval, out, dict(nfev=nfev[0], nsteps=nsteps)
    cls = {"DOP853": DOP853, "RK45": RK45, "Radau": Radau}[method]
    solver = cls(f, t0, y0, t1, rtol=rtol, atol=atol, max_step=max_step)
    while k < len(t_eval):
        msg = solver.step()
        if solver.status == "failed":
            raise IntegrationError(f"integration failed at t = {solver.t:.6g}: {msg}", reason=msg)
        nsteps += 1
        dense = solver.dense_output() if k < len(t_eval) and t_eval[k] <= solver.t else None
        while k < len(t_eval) and t_eval[k] <= solver.t:
            yk = dense(t_eval[k])
            out[k] = project(t_eval[k], yk) if project is not None else yk
            k += 1
        if project is not None and solver.status == "running":
            yp = project(solver.t, solver.y)
            solver.y = yp
            if hasattr(solver, "f"):
                solver.f = f(solver.t, yp)
        if solver.status == "finished":
            while k < len(t_eval):
                out[k] = solver.y
                k += 1
    return t_eval, out, dict(nfev=nfev[0], nsteps=nsteps)


# ----------------------------------------------------------------------------------------------
# cut-joint constraint equations on a tree (seed 001 §3.6.1–3.6.2)
# ----------------------------------------------------------------------------------------------
_FIXED, _REVOLUTE, _PRISMATIC, _CYLINDRICAL, _UNIVERSAL, _SPHERICAL, _PLANAR, _FREE = range(8)


def _perp(u):
    u = np.asarray(u, float) / np.linalg.norm(u)
    t = np.array([1.0, 0, 0]) if abs(u[0]) < 0.9 else np.array([0, 1.0, 0])
    n2 = np.cross(u, t)
    n2 /= np.linalg.norm(n2)
    return n2, np.cross(u, n2)


def _cx(a, b):
    """a × b for 3-vectors (no numpy.cross overhead)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _cross_cols(C, r):
    """Each column c of C (3×k) replaced by c × r."""
    return np.stack([C[1] * r[2] - C[2] * r[1], C[2] * r[0] - C[0] * r[2], C[0] * r[1] - C[1] * r[0]])


def _vee(R):
    return 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])


class CutJointConstraints:
    """The constraint equations of a model's cut joints in its tree coordinates (seed 001 §3.6).

    For a cut joint between body a (joint frame ``placement`` in a) and body b (``child_placement``
    in b), with ``A``, ``B`` the joint frames in ground axes and ``o_a``, ``o_b`` their origins, the rows
    are (``n2``, ``n3`` ⟂ the joint axis ``u``):

    ============  =======================================================================
    Revolute      o_b − o_a = 0 (3);  (A n_k)·(B u) = 0, k = 2, 3 (2)          → 5 rows
    Spherical     o_b − o_a = 0 (3)
    Prismatic     vee(AᵀB) = 0 (3);  (o_b − o_a)·(A n_k) = 0 (2)
    Cylindrical   (A n_k)·(B u) = 0 (2);  (o_b − o_a)·(A n_k) = 0 (2)
    Universal     o_b − o_a = 0 (3);  (A a1)·(B a2) = a1·a2 (1)
    Planar        (A n_k)·(B e_z) = 0 (2);  (o_b − o_a)·(A e_z) = 0 (1)
    Fixed         o_b − o_a = 0 (3);  vee(AᵀB) = 0 (3)
    ============  =======================================================================

    ``evaluate(q, v)`` returns the residuals f(q), the Jacobian G (``ḟ = G v``; seed 001 eq. 3.191:
    the rows ``f'_i``, the cut joints' ``H_z``/``H_Ω`` of §3.6.2) and ``γ = −Ġ v`` (the acceleration
    level ``G v̇ = γ``).  For the orientation lock G is the relative angular velocity in A's axes,
    exact on the constraint manifold.
    """

    def __init__(self, model):
        self.model = model
        self.nv = model.nv
        n = model.nbodies
        parent = np.asarray(model.parent)
        self.path = [[] for _ in range(n + 1)]
        for i in range(1, n + 1):
            self.path[i] = self.path[parent[i]] + [i]
        self.rows = []      # (kind, data) per cut joint
        self.names = []
        self.row_slices = {}
        r = 0
        for cj in model.cut_joints:
            jt = cj.joint
            code = jt.code
            ax = np.asarray(jt.axes())
            Pa, Pb = cj.placement, cj.child_placement
            items = []
            if code in (_REVOLUTE, _SPHERICAL, _UNIVERSAL, _FIXED):
                items += [("point", k) for k in range(3)]
            if code == _REVOLUTE:
                n2, n3 = _perp(ax[0])
                items += [("align", (n2, ax[0], 0.0)), ("align", (n3, ax[0], 0.0))]
            if code == _CYLINDRICAL:
                n2, n3 = _perp(ax[0])
                items += [("align", (n2, ax[0], 0.0)), ("align", (n3, ax[0], 0.0)), ("offset", n2), ("offset", n3)]
            if code == _UNIVERSAL:
                items += [("align", (ax[0], ax[1], float(ax[0] @ ax[1])))]
            if code == _PLANAR:
                ez = np.array([0, 0, 1.0])
                items += [("align", (np.array([1.0, 0, 0]), ez, 0.0)), ("align", (np.array([0, 1.0, 0]), ez, 0.0)),
                          ("offset", ez)]
            if code in (_PRISMATIC, _FIXED):
                items += [("lock", k) for k in range(3)]
            if code == _PRISMATIC:
                n2, n3 = _perp(ax[0])
                items += [("offset", n2), ("offset", n3)]
            self.rows.append((cj, Pa, Pb, items))
            self.names.append(cj.name)
            self.row_slices[cj.name] = slice(r, r + len(items))
            r += len(items)
        self.m = r

    # -- kinematics helpers
    def _columns(self, K):
        """Per tree joint i: angular and linear velocity columns (ground axes) at the joint's child origin."""
        m = self.model
        cols = [None] * (m.nbodies + 1)
        for i in range(1, m.nbodies + 1):
            code, iv, nvj = int(m.jtype[i]), int(m.idx_v[i]), int(m.nv_j[i])
            Ri = K.R[i]
            RJ = K.R[int(m.parent[i])] @ m.jplace_R[i]
            ang = np.zeros((3, nvj))
            lin = np.zeros((3, nvj))
            a = m.jaxis[i, 0]
            if code == _REVOLUTE:
                ang[:, 0] = Ri @ a
            elif code == _PRISMATIC:
                lin[:, 0] = Ri @ a
            elif code == _CYLINDRICAL:
                ang[:, 0] = Ri @ a
                lin[:, 1] = Ri @ a
            elif code == _UNIVERSAL:
                ang[:, 0] = RJ @ a
                ang[:, 1] = Ri @ m.jaxis[i, 1]
            elif code == _SPHERICAL:
                ang[:] = Ri
            elif code == _PLANAR:
                lin[:, 0], lin[:, 1], ang[:, 2] = RJ[:, 0], RJ[:, 1], RJ[:, 2]
            elif code == _FREE:
                ang[:, :3] = Ri
                lin[:, 3:] = Ri
            cols[i] = (iv, nvj, ang, lin, K.p[i])
        return cols

    def _jac(self, cols, b, P=None):
        """Angular (3×nv) and, for a point P (ground), linear (3×nv) Jacobians of body b."""
        Jw = np.zeros((3, self.nv))
        Jp = np.zeros((3, self.nv)) if P is not None else None
        for k in self.path[b]:
            iv, nvj, ang, lin, o = cols[k]
            Jw[:, iv:iv + nvj] = ang
            if P is not None:
                Jp[:, iv:iv + nvj] = lin + _cross_cols(ang, P - o)
        return Jw, Jp

    def evaluate(self, q, v=None, need_gamma=True):
        """(f, G, γ) at (q, v); γ only when v is given."""
        from ..algorithms import forward_kinematics
        nv = self.nv
        level = v is not None and need_gamma
        K = forward_kinematics(self.model, q, v if level else None, np.zeros(nv) if level else None)
        cols = self._columns(K)
        f = np.zeros(self.m)
        G = np.zeros((self.m, nv))
        gam = np.zeros(self.m)
        r = 0
        for cj, Pa, Pb, items in self.rows:
            a, b = cj.parent, cj.child
            A = K.R[a] @ Pa.rotation
            B = K.R[b] @ Pb.rotation
            oa = K.p[a] + K.R[a] @ Pa.translation
            ob = K.p[b] + K.R[b] @ Pb.translation
            Jwa, Jpa = self._jac(cols, a, oa)
            Jwb, Jpb = self._jac(cols, b, ob)
            if level:
                wa, wb = K.velocity[a, :3], K.velocity[b, :3]
                dwa, dwb = K.acceleration[a, :3], K.acceleration[b, :3]
                ra, rb = oa - K.p[a], ob - K.p[b]
                va = K.velocity[a, 3:] + _cx(wa, ra)
                vb = K.velocity[b, 3:] + _cx(wb, rb)
                aa = K.acceleration[a, 3:] + _cx(dwa, ra) + _cx(wa, _cx(wa, ra))
                ab = K.acceleration[b, 3:] + _cx(dwb, rb) + _cx(wb, _cx(wb, rb))
            for kind, dat in items:
                if kind == "point":
                    k = dat
                    f[r] = ob[k] - oa[k]
                    G[r] = Jpb[k] - Jpa[k]
                    if level:
                        gam[r] = -(ab[k] - aa[k])
                elif kind == "align":
                    n_, u_, c = dat
                    x, y = A @ n_, B @ u_
                    f[r] = x @ y - c
                    G[r] = _cx(y, x) @ (Jwb - Jwa)
                    if level:
                        xd, yd = _cx(wa, x), _cx(wb, y)
                        xdd = _cx(dwa, x) + _cx(wa, xd)
                        ydd = _cx(dwb, y) + _cx(wb, yd)
                        gam[r] = -(xdd @ y + 2 * xd @ yd + x @ ydd)
                elif kind == "lock":
                    k = dat
                    f[r] = _vee(A.T @ B)[k]
                    G[r] = A[:, k] @ (Jwb - Jwa)
                    if level:
                        gam[r] = -(A[:, k] @ (dwb - dwa) - A[:, k] @ _cx(wa, wb - wa))
                elif kind == "offset":
                    x = A @ dat
                    d = ob - oa
                    f[r] = d @ x
                    G[r] = x @ (Jpb - Jpa) + _cx(x, d) @ Jwa
                    if level:
                        xd = _cx(wa, x)
                        xdd = _cx(dwa, x) + _cx(wa, xd)
                        gam[r] = -((ab - aa) @ x + 2 * (vb - va) @ xd + d @ xdd)
                r += 1
        return f, G, gam

    def worst_joints(self, f, tol=1e-8):
        bad = [n for n, s in self.row_slices.items() if np.abs(f[s]).max(initial=0) > tol]
        return bad or self.names[:1]


def _al_kkt(M, G, rhs_top, rhs_bot, eps_rel=1e-10, iterations=3):
    """Augmented-Lagrangian solve of [[M, Gᵀ], [G, 0]] (see ``CartesianSystem._al_solve``).

    Rows of G that vanish identically (e.g. the out-of-plane rows of a cut hinge in a planar loop)
    are dropped first; the remaining dependent rows are handled by the ε-regularization.
    Returns (x, μ) with μ over all rows (zero on dropped rows).
    """
    nv, m = M.shape[0], G.shape[0]
    mu_full = np.zeros(m)
    if m == 0:
        return np.linalg.solve(M, rhs_top), mu_full
    rn = np.abs(G).max(axis=1)
    keep = rn > 1e-12 * max(rn.max(), 1e-300)
    Gk = G[keep]
    mk = Gk.shape[0]
    if mk == 0:
        return np.linalg.solve(M, rhs_top), mu_full
    dM = np.diag(M)
    scale = float(np.mean((Gk * Gk) @ (1.0 / np.maximum(dM, 1e-3 * dM.max()))))   # ~ diag(G M⁻¹ Gᵀ)
    eps = eps_rel * max(scale, 1e-300)
    K = np.zeros((nv + mk, nv + mk))
    K[:nv, :nv] = M
    K[:nv, nv:] = Gk.T
    K[nv:, :nv] = Gk
    K[nv:, nv:] = -eps * np.eye(mk)
    lu = sla.lu_factor(K, check_finite=False)   # LU, not an explicit inverse: K is ill-conditioned by design
    solve = lambda r: sla.lu_solve(lu, r, check_finite=False)
    mu = np.zeros(mk)
    b = rhs_bot[keep]
    for _ in range(iterations):
        sol = solve(np.concatenate([rhs_top, b - eps * mu]))
        mu = sol[nv:]
    mu_full[keep] = mu
    return sol[:nv], mu_full


class ConstrainedTree:
    """Tree dynamics + cut-joint constraints with multipliers (seed 001 §3.6, eqs. 3.189–3.192).

    ``M v̇ = τ − C + Gᵀλ``, ``G v̇ = γ`` where ``M = crba(q)`` and ``τ − C = M · a_free`` with ``a_free``
    the tree's forward dynamics (gravity, joint and point springs, efforts, the torque callback);
    solved by :func:`_al_kkt` (redundant rows allowed).  Drift control: ``stabilization =
    "projection"`` (default: Newton projection of q and mass-orthogonal projection of v after every
    step), ``"baumgarte"`` (``γ − 2α G v − β² f``, gains ``baumgarte=(α, β)``), ``"seed000"`` (seed 000
    eqs. 2.4/2.7 for relative degree 2: ``f̈ + 2λḟ + λ²f = 0``, ``seed000_lambda=λ``), ``"none"``, or a
    callable hook ``stabilizer(t, q, v, f, G, γ) -> γ'`` (a different stabilization law).
    """

    def __init__(self, model, stabilization="projection", baumgarte=(10.0, 10.0), stabilizer=None,
                 al_eps=1e-10, tau=None, seed000_lambda=100.0):
        from .tree import tree_params
        self.model = model
        self.cons = CutJointConstraints(model)
        self.params = tree_params(model)
        self.nq, self.nv = model.nq, model.nv
        self.stabilization = stabilization if stabilizer is None else "hook"
        self.baumgarte = baumgarte
        self.seed000_lambda = float(seed000_lambda)
        self.stabilizer = stabilizer
        self.al_eps = al_eps
        self.tau = model.torque_callback if tau is None else tau
        self.singular_events = []

    def free_acceleration(self, t, q, v):
        from .tree import tree_rhs, tree_rhs_extra
        x = np.ascontiguousarray(np.concatenate([q, v]), dtype=np.float64)
        out = np.empty(self.nq + self.nv)
        if self.tau is None:
            tree_rhs(float(t), x, self.params, out)
        else:
            extra = (np.asarray(self.tau(t, q, v), float) if callable(self.tau)
                     else np.asarray(self.tau, float)).reshape(self.nv)
            tree_rhs_extra(float(t), x, self.params, np.ascontiguousarray(extra), out)
        return out[: self.nq], out[self.nq:]

    def accelerations(self, t, q, v):
        """(v̇, λ) with λ per constraint row (the reaction of the cut joints; sign: M v̇ = … + Gᵀλ)."""
        from ..algorithms import crba
        qd, a_free = self.free_acceleration(t, q, v)
        M = crba(self.model, np.ascontiguousarray(q))
        f, G, gam = self.cons.evaluate(q, v)
        if self.stabilization == "baumgarte":
            al, be = self.baumgarte
            gam = gam - 2 * al * (G @ v) - be * be * f
        elif self.stabilization == "seed000":
            # seed 000, eqs. 2.4 and 2.7: the holonomic cut-joint equations have relative degree 2, the
            # reactions make the residuals obey f̈ + 2λ ḟ + λ² f = 0 (decay like exp(−λ t))
            lam_ = self.seed000_lambda
            gam = gam - 2 * lam_ * (G @ v) - lam_ * lam_ * f
        elif self.stabilization == "hook":
            gam = self.stabilizer(t, q, v, f, G, gam)
        vd, mu = _al_kkt(M, G, M @ a_free, gam, self.al_eps)
        return vd, -mu

    def rhs(self, t, x):
        q, v = x[: self.nq], x[self.nq:]
        vd, _ = self.accelerations(t, q, v)
        return np.concatenate([self.model.qdot(q, v), vd])

    def project_position(self, q, t=None, tol=1e-12, maxiter=25):
        from ..algorithms import crba
        q = np.array(q, float)
        for _ in range(maxiter):
            f, G, _ = self.cons.evaluate(q, None)
            if np.abs(f).max(initial=0.0) <= tol:
                return q
            M = crba(self.model, np.ascontiguousarray(q))
            dq, _ = _al_kkt(M, G, np.zeros(self.nv), -f, self.al_eps)
            q = self.model.integrate(q, dq, 1.0)
        f, _, _ = self.cons.evaluate(q, None)
        if np.abs(f).max(initial=0.0) > 1e-8:
            bad = self.cons.worst_joints(f)
            raise ConstraintError(
                f"model '{self.model.name}': the positions cannot be assembled; residual "
                f"{np.abs(f).max():.3e} in cut joint(s) {', '.join(bad)} after {maxiter} Newton steps",
                time=t, joints=bad)
        return q

    def project_velocity(self, q, v):
        from ..algorithms import crba
        _, G, _ = self.cons.evaluate(q, None)
        M = crba(self.model, np.ascontiguousarray(q))
        dv, _ = _al_kkt(M, G, np.zeros(self.nv), -(G @ v), self.al_eps)
        return v + dv

    singular_tol = 1e-3

    def check_singular(self, t, q):
        """Watch the constraint Jacobian's conditioning (seed 001 §2.1: the equations must stay independent).

        The rank at the start (redundant rows excluded) is the reference; when its smallest kept singular
        value falls below ``singular_tol`` × the largest, a singular-configuration episode starts; the event
        recorded when it ends carries the time of the minimum, that value and the cut joints whose rows
        make up the vanishing direction.  Returns the event when an episode starts (else None).
        """
        _, G, _ = self.cons.evaluate(q, None)
        if G.size == 0:
            return None
        U, s, _ = np.linalg.svd(G, full_matrices=False)
        if not hasattr(self, "rank0"):
            self.rank0 = int(np.sum(s > 1e-10 * s[0]))
            self._episode = None
            return None
        k = self.rank0 - 1
        ratio = float(s[k] / s[0]) if k < len(s) else 0.0
        if ratio < self.singular_tol:
            w = np.abs(U[:, k])
            joints = [n for n, sl in self.cons.row_slices.items() if w[sl].max(initial=0) > 0.1]
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


def constrained_system(model, q0=None, v0=None, tau=None, energy=True, stabilization="projection",
                       baumgarte=(10.0, 10.0), stabilizer=None, consistent=True, detect_singular=None,
                       on_singular="record", al_eps=1e-10, seed000_lambda=100.0):
    """``simulate(model, ..., formulation="constrained")``: tree + cut joints (seed 001 §3.6).

    Initial values are made consistent by a Newton projection of ``q0`` and a mass-orthogonal
    projection of ``v0`` (``ConstraintError`` naming the cut joints when impossible).
    ``detect_singular``: check the rank of the constraint Jacobian after every step (default: for
    nv ≤ 60); a rank drop is recorded in ``result.info["singular_configurations"]`` with the time and
    the cut joints, or raised as ``ConstraintError`` with ``on_singular="raise"``.
    """
    from ..result import Result
    from .base import OdeSystem, check_state as _check_state
    from .tree import tree_energy
    if not model.cut_joints:
        raise ConstraintError(f"model '{model.name}' has no cut joints; use formulation='tree'")
    q0, v0 = _check_state(model, q0, v0)
    if stabilization not in ("projection", "baumgarte", "seed000", "none"):
        raise ValueError(f"stabilization must be 'projection', 'baumgarte', 'seed000' or 'none', got {stabilization!r}")
    ct = ConstrainedTree(model, stabilization, baumgarte, stabilizer, al_eps, tau, seed000_lambda)
    if consistent:
        q0 = ct.project_position(q0, t=0.0)
        v0 = ct.project_velocity(q0, v0)
    nq, nv = model.nq, model.nv
    if detect_singular is None:
        detect_singular = nv <= 60
    if detect_singular:
        ct.check_singular(0.0, q0)

    def project_py(t, x):
        q = x[:nq]
        if ct.stabilization == "projection":
            q = ct.project_position(q, t=t)
            v = ct.project_velocity(q, x[nq:])
        else:
            q = model.integrate(q, np.zeros(nv), 0.0)
            v = x[nq:]
        if detect_singular:
            ev = ct.check_singular(t, q)
            if ev is not None and on_singular == "raise":
                raise ConstraintError(f"model '{model.name}': singular configuration at t = {t:.6g} (the "
                                      f"constraint Jacobian is losing rank, σ_min/σ_max = {ev['sigma_ratio']:.1e}) "
                                      f"in cut joint(s) {', '.join(ev['joints'])}", time=t, joints=ev["joints"])
        return np.concatenate([q, v])

    def make_result(t, X, info):
        X = np.asarray(X, float).reshape(len(t), nq + nv)
        Q, V = X[:, :nq].copy(), X[:, nq:].copy()
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V)
            en = {"kinetic": T, "potential": Vp}
        res, reac = {}, {}
        if len(t):
            F = [ct.cons.evaluate(Q[k], None) for k in range(len(t))]
            L = [ct.accelerations(t[k], Q[k], V[k])[1] for k in range(len(t))]
            for name, sl in ct.cons.row_slices.items():
                res[name] = np.array([np.abs(fk[0][sl]).max(initial=0) for fk in F])
                reac[name] = np.array([lk[sl] for lk in L])
            res["velocity"] = np.array([np.abs(F[k][1] @ V[k]).max(initial=0) for k in range(len(t))])
        info = dict(info)
        info["singular_configurations"] = list(ct.finish_events())
        return Result(t, Q, V, energy=en, residuals=res, reactions=reac, info=info,
                      q_names=model.coordinate_names(), v_names=model.velocity_names(), model=model)

    return OdeSystem(x0=np.concatenate([q0, v0]), fun=ct.rhs, make_result=make_result,
                     split=lambda x: (x[:nq], x[nq:]), rhs=None, project_py=project_py, nsplit=nq,
                     python_only=True, info={"formulation": "constrained", "stabilization": ct.stabilization,
                                             "cut_joints": list(ct.cons.names), "constraint_rows": ct.cons.m})


# ----------------------------------------------------------------------------------------------
# the same Model in Cartesian coordinates (seed 001 ch. 2)
# ----------------------------------------------------------------------------------------------
def cartesian_from_model(model, q=None, v=None, solver="auto"):
    """Build the :class:`~multibody.formulations.cartesian.CartesianSystem` of a Model.

    Every body becomes a spatial body with its frame at the centre of mass (axes of the body frame);
    every joint, tree or cut, becomes the book's constraint rows between its two bodies: Revolute →
    hinge (5), Spherical → 3 point–plane, Prismatic → 2 point–plane + 3 rotation, Cylindrical →
    2 point–plane + 2 rotation, Fixed → 6, Universal → spherical + 1 rotation about the cross's common normal
    (4), Planar → 1 point–plane (joint z normal) + 2 rotation (3), Free → none.  Point springs, gravity and constant joint
    efforts of revolute joints carry over.  The state is placed at the model's (q, v).
    """
    from ..algorithms import forward_kinematics
    from .cartesian import (CartesianSystem, PlanarJoint, PointSpring, RelativeTorque, UniversalJoint, _Composite,
                            _perp_frame)
    from ..errors import ModelError
    q = model.neutral() if q is None else np.asarray(q, float)
    v = np.zeros(model.nv) if v is None else np.asarray(v, float)
    K = forward_kinematics(model, q, v)
    s = CartesianSystem(dim=3, gravity=np.asarray(model.gravity, float), solver=solver)
    n = model.nbodies
    com = np.asarray(model.com)
    for i in range(1, n + 1):
        if not model.mass[i] > 0:
            raise ModelError(f"body '{model.body_names[i]}' has no mass; the Cartesian formulation needs a mass "
                             "on every body", element=f"body '{model.body_names[i]}'")
        R, p = K.R[i], K.p[i]
        w = K.velocity[i, :3]
        s.add_body(model.body_names[i], float(model.mass[i]), np.asarray(model.inertia_com[i]),
                   position=(p + R @ com[i], R),
                   velocity=(K.velocity[i, 3:] + np.cross(w, R @ com[i]), R.T @ w))
    if np.any(np.asarray(model.dof_stiffness)) or np.any(np.asarray(model.dof_damping)):
        raise ModelError(f"model '{model.name}': joint spring-dampers are not available in the Cartesian "
                         "formulation", element="joint spring-damper")
    if model.torque_callback is not None:
        raise ModelError(f"model '{model.name}': a torque callback (generalized forces) has no Cartesian form",
                         element="torque callback")
    eye = np.eye(3)
    for jinfo in list(model.joints[1:]) + list(model.cut_joints):
        a, b = jinfo.parent, jinfo.child
        Pa, Pb = jinfo.placement, jinfo.child_placement
        ca = com[a] if a > 0 else np.zeros(3)
        cb = com[b]
        pi, pj = Pa.translation - ca, Pb.translation - cb
        Ra, Rb = Pa.rotation, Pb.rotation
        jt = jinfo.joint
        code = jt.code
        ax = np.asarray(jt.axes())
        prims = []
        if code in (_REVOLUTE, _SPHERICAL, _FIXED):
            prims.append(("pp", 3, dict(n=Ra.copy(), p=pi, rho=pj)))
        if code == _REVOLUTE:
            ua = Ra @ ax[0]
            n2, n3 = _perp_frame(ua)
            prims.append(("ra", 2, dict(n=np.array([n2, n3]), ai=ua, aj=Rb @ ax[0])))
        if code == _CYLINDRICAL:
            ua = Ra @ ax[0]
            n2, n3 = _perp_frame(ua)
            prims.append(("pp", 2, dict(n=np.array([n2, n3]), p=pi, rho=pj)))
            prims.append(("ra", 2, dict(n=np.array([n2, n3]), ai=ua, aj=Rb @ ax[0])))
        if code == _PRISMATIC:
            ua = Ra @ ax[0]
            n2, n3 = _perp_frame(ua)
            prims.append(("pp", 2, dict(n=np.array([n2, n3]), p=pi, rho=pj)))
        if code in (_PRISMATIC, _FIXED):
            prims.append(("rl", 3, dict(n=eye.copy(), R0=Ra @ Rb.T)))
        if code == _UNIVERSAL:
            joint = UniversalJoint(jinfo.name, model.body_names[a], model.body_names[b], pi, pj,
                                   Ra @ ax[0], Rb @ ax[1], cos_angle=float(ax[0] @ ax[1]))
        elif code == _PLANAR:
            ez = np.array([0.0, 0.0, 1.0])
            joint = PlanarJoint(jinfo.name, model.body_names[a], model.body_names[b], pi, pj, Ra @ ez, Rb @ ez)
        elif prims:
            joint = _Composite(jinfo.name, model.body_names[a], model.body_names[b], 3, prims)
        else:
            joint = None
        if joint is not None:
            s.add_joint(joint)
        eff = np.asarray(model.dof_effort)[jinfo.v_slice] if jinfo.v_slice is not None else np.zeros(0)
        if code == _REVOLUTE and eff.size and eff[0] != 0:
            s.add_force(RelativeTorque(model.body_names[a], model.body_names[b], eff[0] * (Ra @ ax[0])))
        elif eff.size and np.any(eff):
            raise ModelError(f"joint '{jinfo.name}': constant efforts are carried over for revolute joints only",
                             element=f"joint '{jinfo.name}'")
    for sp_ in model.springs:
        ia, ib = model.body_index(sp_.body_a), model.body_index(sp_.body_b)
        pa = sp_.point_a - (com[ia] if ia else 0.0)
        pb = sp_.point_b - (com[ib] if ib else 0.0)
        s.add_force(PointSpring(sp_.body_a, pa, sp_.body_b, pb, sp_.stiffness, sp_.damping, sp_.rest_length))
    s.finalize()
    return s


def model_state_from_cartesian(model, system, x, V=None, previous=None):
    """Model coordinates (q, v) of a Cartesian state: joint coordinates from the relative placements of
    each tree joint; v by least squares from the body velocities.  ``previous`` (a q) unwraps angles."""
    from .cartesian import quat_to_matrix, matrix_to_quat
    n = model.nbodies
    X = x.reshape(n, 7)
    com = np.asarray(model.com)
    R = np.zeros((n + 1, 3, 3))
    P = np.zeros((n + 1, 3))
    R[0] = np.eye(3)
    for i in range(1, n + 1):
        R[i] = quat_to_matrix(X[i - 1, 3:])
        P[i] = X[i - 1, :3] - R[i] @ com[i]
    q = model.neutral()
    for i in range(1, n + 1):
        j = model.joints[i]
        a = j.parent
        RJ = R[a] @ j.placement.rotation
        pJ = P[a] + R[a] @ j.placement.translation
        Rrel = RJ.T @ R[i]
        prel = RJ.T @ (P[i] - pJ)
        code = j.joint.code
        ax = np.asarray(j.joint.axes())
        sl = j.q_slice
        if code in (_REVOLUTE, _CYLINDRICAL):
            th = math_atan2(ax[0] @ _vee(Rrel), 0.5 * (np.trace(Rrel) - 1.0))
            if previous is not None:
                th += 2 * np.pi * np.round((previous[sl.start] - th) / (2 * np.pi))
            q[sl.start] = th
            if code == _CYLINDRICAL:
                q[sl.start + 1] = ax[0] @ prel
        elif code == _PRISMATIC:
            q[sl.start] = ax[0] @ prel
        elif code == _UNIVERSAL:
            # R = rot(a1, θ1) rot(a2, θ2): R a2 = rot(a1, θ1) a2 gives θ1, then rot(a1, θ1)ᵀ R = rot(a2, θ2)
            a1, a2 = ax[0], ax[1]
            c12 = a1 @ a2
            u0, u1 = a2 - c12 * a1, Rrel @ a2 - c12 * a1
            th1 = math_atan2(a1 @ np.cross(u0, u1), u0 @ u1)
            R2 = _rot_axis(a1, th1).T @ Rrel
            th2 = math_atan2(a2 @ _vee(R2), 0.5 * (np.trace(R2) - 1.0))
            for k, th in enumerate((th1, th2)):
                if previous is not None:
                    th += 2 * np.pi * np.round((previous[sl.start + k] - th) / (2 * np.pi))
                q[sl.start + k] = th
        elif code == _PLANAR:
            th = math_atan2(Rrel[1, 0] - Rrel[0, 1], Rrel[0, 0] + Rrel[1, 1])
            if previous is not None:
                th += 2 * np.pi * np.round((previous[sl.start + 2] - th) / (2 * np.pi))
            q[sl] = (prel[0], prel[1], th)
        elif code == _SPHERICAL:
            q[sl] = matrix_to_quat(Rrel)
        elif code == _FREE:
            q[sl] = np.concatenate([prel, matrix_to_quat(Rrel)])
    if V is None:
        return q, None
    from ..algorithms import forward_kinematics
    ct = CutJointConstraints.__new__(CutJointConstraints)
    ct.model, ct.nv = model, model.nv
    parent = np.asarray(model.parent)
    ct.path = [[] for _ in range(n + 1)]
    for i in range(1, n + 1):
        ct.path[i] = ct.path[parent[i]] + [i]
    K = forward_kinematics(model, q)
    cols = ct._columns(K)
    A = np.zeros((6 * n, model.nv))
    for i in range(1, n + 1):
        Jw, Jp = ct._jac(cols, i, K.p[i] + K.R[i] @ com[i])
        A[6 * (i - 1): 6 * (i - 1) + 3] = Jp
        A[6 * (i - 1) + 3: 6 * i] = K.R[i].T @ Jw
    v = np.linalg.lstsq(A, V, rcond=None)[0]
    return q, v


def _rot_axis(a, th):
    """Rotation matrix about the unit axis ``a`` by ``th`` (Rodrigues)."""
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(th) * K + (1.0 - np.cos(th)) * (K @ K)


def math_atan2(y, x):
    return float(np.arctan2(y, x))


def cartesian_system(model, q0=None, v0=None, tau=None, energy=True, solver="auto", consistent=True):
    """``simulate(model, ..., formulation="cartesian")``: the model in absolute coordinates (seed 001 ch. 2).

    The outputs are converted back to the model's q and v (``Result.q``, ``Result.v``); the Cartesian
    states are in ``result.info["cartesian"]`` only as sizes (the arrays would double the memory).
    Reactions: the multipliers of every joint (tree and cut), ``Result.reactions``.
    """
    from ..result import Result
    from .base import OdeSystem, check_state as _check_state
    from ..errors import ModelError
    if tau is not None:
        raise ModelError("the Cartesian formulation takes no generalized torques tau", element="tau")
    q0, v0 = _check_state(model, q0, v0)
    s = cartesian_from_model(model, q0, v0, solver=solver)
    x0, V0 = s.x0, s.v0
    if consistent:
        x0, V0 = s.consistent_initial(x0, V0)
    nq = s.nq

    def project_py(t, y):
        x = s.project_position(y[:nq], t=t)
        return np.concatenate([x, s.project_velocity(x, y[nq:])])

    def make_result(t, Y, info):
        Y = np.asarray(Y, float).reshape(len(t), -1)
        Q = np.zeros((len(t), model.nq))
        Vm = np.zeros((len(t), model.nv))
        prev = None
        E_T, E_V, res, reac = [], [], {"position": [], "velocity": []}, {}
        for k in range(len(t)):
            x, V = Y[k, :nq], Y[k, nq:]
            Q[k], Vm[k] = model_state_from_cartesian(model, s, x, V, prev)
            prev = Q[k]
            Etot = s.energy(x, V)
            T = 0.5 * np.sum(s.mass * np.sum(V.reshape(-1, 6)[:, :3] ** 2, axis=1)) + 0.5 * np.einsum(
                "ka,kab,kb->", V.reshape(-1, 6)[:, 3:], s.J, V.reshape(-1, 6)[:, 3:])
            E_T.append(T)
            E_V.append(Etot - T)
            Qc, b, phi = s._assemble(x, V)
            res["position"].append(np.abs(phi).max(initial=0))
            res["velocity"].append(np.abs(Qc @ V).max(initial=0))
            xdd, lam = s.accelerations(t[k], x, V)
            for name, rows in s.joint_rows.items():
                reac.setdefault(name, []).append(lam[rows])
        info = dict(info)
        info["cartesian"] = dict(bodies=s.nb, coordinates=s.nq, constraint_rows=s.nc, solver=s._solver,
                                 redundant=bool(s.redundant))
        en = {"kinetic": np.array(E_T), "potential": np.array(E_V)} if energy else {}
        return Result(t, Q, Vm, energy=en, residuals={k: np.array(v) for k, v in res.items()},
                      reactions={k: np.array(v) for k, v in reac.items()}, info=info,
                      q_names=model.coordinate_names(), v_names=model.velocity_names(), model=model)

    return OdeSystem(x0=np.concatenate([x0, V0]), fun=lambda t, y: s.rhs(t, y), make_result=make_result,
                     split=lambda y: (y[:nq], y[nq:]), rhs=None, project_py=project_py, nsplit=nq,
                     python_only=True, info={"formulation": "cartesian"})


register_formulation("constrained", constrained_system)
register_formulation("cartesian", cartesian_system)
