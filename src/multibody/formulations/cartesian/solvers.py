"""Solvers of the KKT system ``[[M, Qᵀ], [Q, 0]] [Ẍ; μ] = [F; b]`` of the Cartesian formulation (seed 001,
eq. 2.49): the tree-ordered block LDLᵀ without fill-in (§2.7, after Baraff 1996), dense and sparse LU, the
range-space (Schur) form, the augmented Lagrangian and the rank-revealing least squares (see the package
docstring, "Linear solvers")."""
import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from multibody.errors import ModelError


class KKTSolver:
    """The KKT solves of :class:`~multibody.formulations.cartesian.system.CartesianSystem` (a mixin: it reads
    the system's mass blocks, sizes and solver statistics)."""

    # -------------------------------------------------------------------- linear algebra
    def _kkt(self, Q):
        if self.dense:
            K = self._Kbuf
            nv = self.nv
            K[nv:, :nv] = Q
            K[:nv, nv:] = Q.T
            return K
        return sp.bmat([[self.M, Q.T], [Q, None]], format="csc")

    def solve_kkt(self, Q, rhs_f, rhs_b, solver=None, t=None):
        """Solve ``[[M, Qᵀ], [Q, 0]] [Ẍ; μ] = [F; b]`` (seed 001, eq. 2.49); returns (Ẍ, μ).

        Singular systems (redundant constraints, singular positions) are detected by the residual
        check and solved again by the rank-revealing / augmented-Lagrangian path.
        """
        solver = solver or self._solver
        nv = self.nv
        rhs = np.concatenate([rhs_f, rhs_b])
        self.stats["solves"] += 1
        if self.nc == 0:
            return np.concatenate([np.linalg.solve(B, f) for B, f in
                                   zip(self.Mblocks, rhs_f.reshape(self.nb, self.nd))]), np.zeros(0)
        sol = None
        K = None
        try:
            if solver == "tree":
                sol = tree_ldlt_solve(self, Q, rhs)
            elif solver == "dense":
                K = self._kkt(Q)
                sol = np.linalg.solve(K, rhs)
            elif solver == "sparse":
                K = self._kkt(Q)
                sol = spla.splu(sp.csc_matrix(K)).solve(rhs)
            elif solver == "schur":
                Qd = Q if self.dense else Q.toarray()
                Minv = sla.block_diag(*[np.linalg.inv(B) for B in self.Mblocks])
                S = Qd @ Minv @ Qd.T
                a0 = Minv @ rhs_f
                mu = np.linalg.solve(S, Qd @ a0 - rhs_b)
                sol = np.concatenate([a0 - Minv @ (Qd.T @ mu), mu])
            elif solver == "al":
                return self._al_solve(Q, rhs_f, rhs_b)
            elif solver != "robust":
                raise ModelError(f"unknown solver {solver!r}", element="solver")
        except (np.linalg.LinAlgError, RuntimeError):
            sol = None
        if sol is not None and np.all(np.isfinite(sol)):
            if K is None:
                K = self._kkt(Q)
            res = np.abs(K @ sol - rhs).max()
            scale = np.abs(rhs).max() + abs(K).max() * np.abs(sol).max()
            if res <= 1e-11 * scale:
                return sol[:nv], sol[nv:]
        self.stats["fallbacks"] += 1
        if solver == "robust":
            return self._robust_solve(Q, rhs_f, rhs_b, t)
        return self._al_solve(Q, rhs_f, rhs_b)

    al_eps = 1e-10
    al_iterations = 3

    def _al_solve(self, Q, F, b):
        """Augmented-Lagrangian solve of the KKT system (quasi-definite, never singular).

        ``[[M, Qᵀ], [Q, −εI]] [Ẍ; μ_{k+1}] = [F; b − ε μ_k]``, μ_0 = 0, a fixed number of iterations
        (Bayo, García de Jalón & Serna 1988).  Each iteration divides the error of a constraint
        direction with singular value σ (of Q M^-1/2) by ``1 + σ²/ε``: well-conditioned directions are
        exact after two iterations, while directions that vanish — redundant constraints (A04) and
        singular positions (A02) — stay bounded instead of blowing up.  ε is relative to the mean
        diagonal of ``Q M⁻¹ Qᵀ``; the fixed iteration count keeps the right-hand side smooth.
        """
        nv, nc = self.nv, self.nc
        # scale of Q M⁻¹ Qᵀ (mean diagonal), with M's diagonal clipped at 1e-3 of its largest entry so
        # that a tiny inertia about a thin bar's axis does not dominate
        w = self._Minv_clip
        scale = float(np.mean((Q * Q) @ w)) if self.dense else float(np.mean(Q.multiply(Q) @ w))
        eps = self.al_eps * max(scale, 1e-300)
        if self.dense:
            K = self._kkt(Q).copy()
            K[nv:, nv:] = -eps * np.eye(nc)
            lu = sla.lu_factor(K, check_finite=False)   # LU, not an explicit inverse: K is ill-conditioned
            solve = lambda r: sla.lu_solve(lu, r, check_finite=False)
        else:
            K = sp.bmat([[self.M, Q.T], [Q, -eps * sp.identity(nc)]], format="csc")
            solve = spla.splu(K).solve
        mu = np.zeros(nc)
        for _ in range(self.al_iterations):
            sol = solve(np.concatenate([F, b - eps * mu]))
            mu = sol[nv:]
        return sol[:nv], mu

    def _robust_solve(self, Q, F, b, t=None):
        """Least squares for dependent constraints: minimum-norm multipliers, unique accelerations."""
        nv = self.nv
        if nv + self.nc <= 800:
            K = self._kkt(Q)
            K = K if self.dense else K.toarray()
            sol, *_ = sla.lstsq(K, np.concatenate([F, b]), cond=1e-12, lapack_driver="gelsd")
            return sol[:nv], sol[nv:]
        # augmented Lagrangian on M + α QᵀQ (sparse, SPD)
        alpha = 1e7 * float(self.M.diagonal().mean()) / max(float(Q.multiply(Q).sum()) / max(self.nc, 1), 1e-300)
        A = (self.M + alpha * (Q.T @ Q)).tocsc()
        lu = spla.splu(A)
        mu = np.zeros(self.nc)
        xdd = lu.solve(F + alpha * (Q.T @ b))
        for _ in range(30):
            r = Q @ xdd - b
            if np.linalg.norm(r) <= 1e-12 * (np.linalg.norm(b) + 1e-300) + 1e-14:
                break
            mu += alpha * r
            xdd = lu.solve(F - Q.T @ mu + alpha * (Q.T @ b))
        return xdd, mu


def tree_ldlt_solve(system, Q, rhs):
    """Solve the KKT system by the block LDLᵀ of the tree-ordered matrix (seed 001, eqs. 2.55–2.61).

    Vertices are the bodies (each with the rows of its joints to the ground merged into its block, so
    that no constraint vertex is a leaf with a zero pivot) and the body–body joints; children are
    eliminated before parents, so the factor has nonzero blocks only where H has them:
    ``D_v = H_vv − Σ_c L_cᵀ D_c L_c``, ``L_c = D_c⁻¹ H_{c,par(c)}`` (eq. 2.60 corrected, 2.61);
    forward ``b'_v = b_v − Σ_c L_cᵀ b'_c``, back ``x_c = D_c⁻¹ b'_c − L_c x_par(c)``.
    """
    tr = system.tree
    if tr is None:
        raise np.linalg.LinAlgError("the constraint graph is not a tree")
    nb, nd, nv = system.nb, system.nd, system.nv
    Qd = Q if isinstance(Q, np.ndarray) else Q.toarray()
    idx, parent, children, order = tr["idx"], tr["parent"], tr["children"], tr["order"]
    nvert = len(idx)

    def H_vv(v):
        iv = idx[v]
        D = np.zeros((len(iv), len(iv)))
        if v < nb:
            D[:nd, :nd] = system.Mblocks[v]
            rows = iv[nd:] - nv
            if len(rows):
                G = Qd[rows, v * nd:(v + 1) * nd]
                D[nd:, :nd] = G
                D[:nd, nd:] = G.T
        return D

    def H_cp(c, p):
        """Off-diagonal block H_{c,p} (rows of vertex c, columns of vertex p)."""
        ic, ip = idx[c], idx[p]
        H = np.zeros((len(ic), len(ip)))
        if c < nb:   # body c below joint p: Qᵀ block
            H[:nd, :] = Qd[ip - nv, c * nd:(c + 1) * nd].T
        else:        # joint c below body p
            H[:, :nd] = Qd[ic - nv, p * nd:(p + 1) * nd]
        return H

    Dinv = [None] * nvert
    L = [None] * nvert
    Hc = [None] * nvert
    for v in order:                       # factorization, children before parents (eqs. 2.60, 2.61)
        D = H_vv(v)
        for c in children[v]:
            D -= L[c].T @ Hc[c]
        Dinv[v] = np.linalg.inv(D)
        if parent[v] >= 0:
            Hcp = H_cp(v, parent[v])
            L[v] = Dinv[v] @ Hcp
            Hc[v] = Hcp
    bprime = [None] * nvert
    y = [None] * nvert
    for v in order:                       # forward: b'_v = b_v − Σ_c L_cᵀ b'_c
        bv = rhs[idx[v]].copy()
        for c in children[v]:
            bv -= L[c].T @ bprime[c]
        bprime[v] = bv
        y[v] = Dinv[v] @ bv
    x = np.zeros(tr["nvar"])
    for v in reversed(order):             # back: x_c = D_c⁻¹ b'_c − L_c x_par(c)
        xv = y[v]
        if parent[v] >= 0:
            xv = xv - L[v] @ x[idx[parent[v]]]
        x[idx[v]] = xv
    return x
