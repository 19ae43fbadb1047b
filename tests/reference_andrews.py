"""Andrews' squeezing mechanism written by hand in Hairer & Wanner's seven angles (HW II §VII.7, eqs.
7.1–7.4; the IVP test set's ``andrews``): an index-1 DAE, the independent reference for IFToMM A03, which
the library builds from bodies and joints (``multibody.systems.iftomm.andrews_model``).
"""
import math
import time as _time

import numpy as np

from multibody.errors import ConstraintError
from multibody.integrate.adaptive import solve_adaptive
from multibody.systems.iftomm import ANDREWS, ANDREWS_NAMES, ANDREWS_Q0


def _andrews_terms(p):
    """The closure conditions g(q) = 0 as sums of c·cos(a·q) / c·sin(a·q) (HW II eq. 7.4)."""
    rr, d, ss, e, zt, zf, u = p["rr"], p["d"], p["ss"], p["e"], p["zt"], p["zf"], p["u"]
    B, BT, GA, PD, DE, OE, EP = ({0: 1}, {0: 1, 1: 1}, {2: 1}, {3: 1, 4: 1}, {4: 1}, {5: 1, 6: 1}, {6: 1})
    g = [
        ([(rr, "c", B), (-d, "c", BT), (-ss, "s", GA)], -p["xb"]),
        ([(rr, "s", B), (-d, "s", BT), (ss, "c", GA)], -p["yb"]),
        ([(rr, "c", B), (-d, "c", BT), (-e, "s", PD), (-zt, "c", DE)], -p["xa"]),
        ([(rr, "s", B), (-d, "s", BT), (e, "c", PD), (-zt, "s", DE)], -p["ya"]),
        ([(rr, "c", B), (-d, "c", BT), (-zf, "c", OE), (-u, "s", EP)], -p["xa"]),
        ([(rr, "s", B), (-d, "s", BT), (-zf, "s", OE), (u, "c", EP)], -p["ya"]),
    ]
    out = []
    for terms, const in g:
        A = np.zeros((len(terms), 7))
        c = np.array([t[0] for t in terms])
        is_cos = np.array([t[1] == "c" for t in terms])
        for k, t in enumerate(terms):
            for i, mlt in t[2].items():
                A[k, i] = mlt
        out.append((c, is_cos, A, const))
    return out


class AndrewsDAE:
    """Andrews' squeezing mechanism in the seven angles (Hairer & Wanner II §VII.7, eqs. 7.1–7.4).

    ``M(q) q̈ = f(q, q̇) − G(q)ᵀ λ``, ``g(q) = 0`` (6 closure conditions).  Solved as an index-1 DAE:
    ``[[M, Gᵀ], [G, 0]] [q̈; λ] = [f; −Ġ q̇]`` at every step, positions and velocities projected back
    onto ``g = 0``, ``G q̇ = 0`` after every step.  Angles in the order β, Θ, γ, Φ, δ, Ω, ε.
    """

    def __init__(self, params=None):
        self.p = dict(ANDREWS)
        self.p.update(params or {})
        self.terms = _andrews_terms(self.p)

    def mass(self, q):
        p = self.p
        m1, m2, m3, m4, m5, m6, m7 = (p[f"m{k}"] for k in range(1, 8))
        i1, i2, i3, i4, i5, i6, i7 = (p[f"i{k}"] for k in range(1, 8))
        rr, ra, da, sa, sb, e, ea, zt, ta, tb = (p[k] for k in ("rr", "ra", "da", "sa", "sb", "e", "ea", "zt", "ta", "tb"))
        zf, fa, u, ua, ub = (p[k] for k in ("zf", "fa", "u", "ua", "ub"))
        coth, siph, siom = math.cos(q[1]), math.sin(q[3]), math.sin(q[5])
        M = np.zeros((7, 7))
        M[0, 0] = m1 * ra ** 2 + m2 * (rr ** 2 - 2 * da * rr * coth + da ** 2) + i1 + i2
        M[1, 0] = M[0, 1] = m2 * (da ** 2 - da * rr * coth) + i2
        M[1, 1] = m2 * da ** 2 + i2
        M[2, 2] = m3 * (sa ** 2 + sb ** 2) + i3
        M[3, 3] = m4 * (e - ea) ** 2 + i4
        M[4, 3] = M[3, 4] = m4 * ((e - ea) ** 2 + zt * (e - ea) * siph) + i4
        M[4, 4] = m4 * (zt ** 2 + 2 * zt * (e - ea) * siph + (e - ea) ** 2) + m5 * (ta ** 2 + tb ** 2) + i4 + i5
        M[5, 5] = m6 * (zf - fa) ** 2 + i6
        M[6, 5] = M[5, 6] = m6 * ((zf - fa) ** 2 - u * (zf - fa) * siom) + i6
        M[6, 6] = m6 * ((zf - fa) ** 2 - 2 * u * (zf - fa) * siom + u ** 2) + m7 * (ua ** 2 + ub ** 2) + i6 + i7
        return M

    def spring(self, q):
        p = self.p
        xd = p["sd"] * math.cos(q[2]) + p["sc"] * math.sin(q[2]) + p["xb"]
        yd = p["sd"] * math.sin(q[2]) - p["sc"] * math.cos(q[2]) + p["yb"]
        L = math.hypot(xd - p["xc"], yd - p["yc"])
        return xd, yd, L

    def forces(self, q, qd):
        """f(q, q̇) of HW II eq. 7.2: drive, spring and the velocity-product terms."""
        p = self.p
        xd, yd, L = self.spring(q)
        force = -p["c0"] * (L - p["l0"]) / L
        fx, fy = force * (xd - p["xc"]), force * (yd - p["yc"])
        m2, m4, m6, da, rr, zt, e, ea, u, zf, fa = (p[k] for k in ("m2", "m4", "m6", "da", "rr", "zt", "e", "ea", "u", "zf", "fa"))
        bep, thp, php, dep, omp, epp = qd[0], qd[1], qd[3], qd[4], qd[5], qd[6]
        sith, coga, siga, coph, coom = math.sin(q[1]), math.cos(q[2]), math.sin(q[2]), math.cos(q[3]), math.cos(q[5])
        sc, sd = p["sc"], p["sd"]
        return np.array([
            p["mom"] - m2 * da * rr * thp * (thp + 2 * bep) * sith,
            m2 * da * rr * bep ** 2 * sith,
            fx * (sc * coga - sd * siga) + fy * (sd * coga + sc * siga),
            m4 * zt * (e - ea) * dep ** 2 * coph,
            -m4 * zt * (e - ea) * php * (php + 2 * dep) * coph,
            -m6 * u * (zf - fa) * epp ** 2 * coom,
            m6 * u * (zf - fa) * omp * (omp + 2 * epp) * coom,
        ])

    def constraints(self, q, qd=None):
        """g(q) (6), G = ∂g/∂q (6×7) and γ = −Ġ q̇ (6) (HW II eq. 7.4)."""
        g = np.zeros(6)
        G = np.zeros((6, 7))
        gam = np.zeros(6)
        for i, (c, is_cos, A, const) in enumerate(self.terms):
            s = A @ q
            cs, sn = np.cos(s), np.sin(s)
            val = c * np.where(is_cos, cs, sn)
            g[i] = val.sum() + const
            G[i] = (c * np.where(is_cos, -sn, cs)) @ A
            if qd is not None:
                sd = A @ qd
                gam[i] = np.sum(val * sd * sd)
        return g, G, gam

    def accelerations(self, q, qd):
        M = self.mass(q)
        _, G, gam = self.constraints(q, qd)
        K = np.zeros((13, 13))
        K[:7, :7] = M
        K[:7, 7:] = G.T
        K[7:, :7] = G
        sol = np.linalg.solve(K, np.concatenate([self.forces(q, qd), gam]))
        return sol[:7], sol[7:]

    def rhs(self, t, y):
        q, qd = y[:7], y[7:]
        qdd, _ = self.accelerations(q, qd)
        return np.concatenate([qd, qdd])

    def project(self, t, y, tol=1e-14):
        """Newton projection onto g(q) = 0 (minimum-norm steps), then G q̇ = 0."""
        q, qd = y[:7].copy(), y[7:].copy()
        for _ in range(10):
            g, G, _ = self.constraints(q)
            if np.abs(g).max() <= tol:
                break
            q -= np.linalg.lstsq(G, g, rcond=None)[0]
        else:
            g, G, _ = self.constraints(q)
            if np.abs(g).max() > 1e-9:
                raise ConstraintError(f"Andrews mechanism: position projection failed (|g| = {np.abs(g).max():.2e})",
                                      time=t, joints=("closure",))
        _, G, _ = self.constraints(q)
        M = self.mass(q)
        K = np.zeros((13, 13))
        K[:7, :7] = M
        K[:7, 7:] = G.T
        K[7:, :7] = G
        dv = np.linalg.solve(K, np.concatenate([np.zeros(7), -G @ qd]))[:7]
        return np.concatenate([q, qd + dv])

    def energy_balance(self, q, qd, q0=ANDREWS_Q0):
        """Kinetic + spring energy − work of the driving torque (constant for the exact solution)."""
        T = 0.5 * qd @ self.mass(q) @ qd
        _, _, L = self.spring(q)
        return T + 0.5 * self.p["c0"] * (L - self.p["l0"]) ** 2 - self.p["mom"] * (q[0] - q0[0])

    def solve(self, t_end=0.03, rtol=1e-12, atol=1e-12, project=True, n_out=31, method="DOP853"):
        """Integrate from the consistent initial values; returns a dict of results (angles at t_end)."""
        y0 = np.concatenate([ANDREWS_Q0, np.zeros(7)])
        t_eval = np.linspace(0.0, t_end, n_out)
        c0 = _time.process_time()
        run = solve_adaptive(self.rhs, (0.0, t_end), y0, method=method, rtol=rtol, atol=atol, t_eval=t_eval,
                             project=self.project if project else None)
        assert run.status == "success", run.reason
        T, Y, st = run.t, run.y, {"nsteps": run.nsteps, "nfev": run.nfev}
        cpu = _time.process_time() - c0
        E = np.array([self.energy_balance(y[:7], y[7:]) for y in Y])
        gres = np.array([np.abs(self.constraints(y[:7])[0]).max() for y in Y])
        vres = np.array([np.abs(self.constraints(y[:7])[1] @ y[7:]).max() for y in Y])
        return dict(t=T, q=Y[:, :7], qd=Y[:, 7:], cpu_seconds=cpu, stats=st, energy_balance=E,
                    position_residual=gres, velocity_residual=vres,
                    angles=dict(zip(ANDREWS_NAMES, Y[-1, :7].tolist())))
