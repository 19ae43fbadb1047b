"""IFToMM multibody benchmark problems A01–A05 (González, Dopico, Lugrís, Cuadrado, "A benchmarking
system for MBS simulation software", Multibody System Dynamics 16 (2006) 179–190; the problem library
of the IFToMM Technical Committee for Multibody Dynamics, lim.ii.udc.es/mbsbenchmark).

Each problem is built from bodies and joints in the Cartesian formulation of seed 001 ch. 2
(:mod:`multibody.formulations.cartesian`); A03 is in addition written in Hairer & Wanner's seven
angles as an index-1 DAE (``AndrewsDAE``), the form of the IVP test set.

=====  ==========================================================================================
A01    simple pendulum: point mass 1 kg on a massless rod 1 m, gravity −y; released from rest with the
       rod horizontal (mass at x = −1 m, y = 0).
A02    N four-bar mechanism: N + 1 cranks and N couplers, 2N + 1 uniform links of 1 kg, 1 m; the cranks
       start vertical, B0 moves at 1 m/s along +x; gravity −y.  Singular (DoF 1 → N + 1) whenever the
       cranks are horizontal.
A03    Andrews' squeezing mechanism: 7 planar bodies, spring c0 = 4530 N/m between D and C, driving
       torque 0.033 N·m; data and consistent initial values of Hairer & Wanner, *Solving ODEs II*,
       §VII.7 and the IVP test set (Mazzia & Magherini, andrews.f); t ∈ [0, 0.03] s.
A04    Bricard mechanism: five rods (1 kg, 1 m, 0.1 m square section) and six hinges, the orthogonal
       Bricard linkage closed through the ground (Grübler: 0 DoF; the geometry gives 1): joints at
       (0,0,0), (1,0,0), (1,−1,0), (1,−1,1), (0,−1,1), (0,0,1) with axes y, z, x, y, z, x (each
       perpendicular to its two links, as in the benchmark's figure); released from rest; gravity −y.
A05    stiff flyball governor (library entry "Stiff Flyball Governor", M. González, 2005-08-30,
       lim.ii.udc.es/mbsbenchmark/dist/A05/A05_specification.xml): see :func:`flyball_model`.
=====  ==========================================================================================

A05, what the specification says and where it comes from.  The library's own XML page could only be
read up to its header (title "Stiff Flyball Governor", "Dynamic simulation of a stiff flyball
governor").  Its data are quoted from the MBS-BOS reproduction of the library (Tagliapietra, Vivian,
Ceseracciu, Reggiani, University of Padua, rehabenggroup.github.io/MBSbenchmarksInOpenSim,
"MBS Benchmark A05: Stiff Flyball Governor"): "an example of a stiff mechanical system ... coupler rods
are substituted by spring-damper elements"; "shaft, rods and slider can be modeled as prismatic bodies";
"two 5 kilograms point mass are placed on points colored in purple" (the free ends of the rods);
shaft, rods 1.0 × 0.01 × 0.01 m; slider 0.1 × 0.1 × 0.1 m; density 3000 kg/m³; K = 8e5 N/m,
C = 4e4 N·s/m, spring rest length 0.5 m; s = 0.5 m; α = 30°; shaft speed 2π rad/s; 10 s; output s.
The point coordinates of the figure, as used by the same reproduction (createModel.cpp) and by two
independent ones (EXUDYN examples stiffFlyballGovernorKT.py / stiffFlyballGovernor2.py, which cite
iftomm-multibody.org/benchmark/problem/Stiff_flyball_governor; simEngine3D flyballGovernor.m, which cites
the XML above): gravity −z along the shaft; the shaft's lower end O is on a vertical revolute joint at
the origin; the rods hang from hinges A, B at (±0.05, 0, 1) (the shaft's top, 0.1 m apart, axes ∥ y);
the slider's centre is at height s on the shaft; each spring-damper joins the slider point
(±0.05, 0, s) to the midpoint of its rod; each rod points outwards 30° below the horizontal.  At t = 0
the triangle hinge–slider point–rod midpoint is equilateral (sides 0.5 m): both springs are at their
rest length.  The 2π rad/s is the shaft's *initial* angular velocity (MBS-BOS: the revolute coordinate's
default speed; EXUDYN: ``initialCoordinates_t``), the shaft being otherwise free: no driving torque.
Numerical reference values of s(t) are published only as plots (MBS-BOS, 3 s window), so no numbers
are quoted here.
"""
from __future__ import annotations

import math
import time as _time

import numpy as np

from ..errors import ConstraintError
from ..formulations.cartesian import (
    CartesianSystem, HingeJoint, PlanarRevolute, PointSpring, RelativeTorque,
)

G0 = 9.81

# ----------------------------------------------------------------------------------------------
# A03 Andrews' squeezing mechanism: data of Hairer & Wanner II §VII.7 / IVP test set andrews.f
# ----------------------------------------------------------------------------------------------
ANDREWS = dict(
    m1=.04325, m2=.00365, m3=.02373, m4=.00706, m5=.07050, m6=.00706, m7=.05498,
    xa=-.06934, ya=-.00227, xb=-0.03635, yb=.03273, xc=.014, yc=.072, c0=4530.0,
    i1=2.194e-6, i2=4.410e-7, i3=5.255e-6, i4=5.667e-7, i5=1.169e-5, i6=5.667e-7, i7=1.912e-5,
    d=28e-3, da=115e-4, e=2e-2, ea=1421e-5, rr=7e-3, ra=92e-5, l0=7785e-5,
    ss=35e-3, sa=1874e-5, sb=1043e-5, sc=18e-3, sd=2e-2, ta=2308e-5, tb=916e-5,
    u=4e-2, ua=1228e-5, ub=449e-5, zf=2e-2, zt=4e-2, fa=1421e-5, mom=33e-3,
)
ANDREWS_NAMES = ("beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon")
#: consistent initial angles (Hairer & Wanner II, §VII.7, eq. 7.5; IVP test set andrews.f)
ANDREWS_Q0 = np.array([-0.0617138900142764496358948458001, 0.0,
                       0.455279819163070380255912382449, 0.222668390165885884674473185609,
                       0.487364979543842550225598953530, -0.222668390165885884674473185609,
                       1.23054744454982119249735015568])
#: consistent initial accelerations and multipliers (same source)
ANDREWS_QDD0 = np.array([14222.4439199541138705911625887, -10666.8329399655854029433719415, 0, 0, 0, 0, 0])
ANDREWS_LAMBDA0 = np.array([98.5668703962410896057654982170, -6.12268834425566265503114393122, 0, 0, 0, 0])
#: reference solution at t = 0.03 s: IVP test set (Mazzia & Magherini, Bari), andrews.f, SOLN —
#: computed with PSIDE at rtol = atol = 1e-14 on a Cray C90
ANDREWS_REF_003 = np.array([0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1,
                            -0.5347301163226948e+0, 0.5244099658805304e+0, 0.5347301163226948e+0,
                            0.1048080741042263e+1])


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
        from ..formulations.constrained import integrate_projected
        y0 = np.concatenate([ANDREWS_Q0, np.zeros(7)])
        t_eval = np.linspace(0.0, t_end, n_out)
        c0 = _time.process_time()
        T, Y, st = integrate_projected(self.rhs, y0, (0.0, t_end), t_eval=t_eval,
                                       project=self.project if project else None,
                                       rtol=rtol, atol=atol, method=method)
        cpu = _time.process_time() - c0
        E = np.array([self.energy_balance(y[:7], y[7:]) for y in Y])
        gres = np.array([np.abs(self.constraints(y[:7])[0]).max() for y in Y])
        vres = np.array([np.abs(self.constraints(y[:7])[1] @ y[7:]).max() for y in Y])
        return dict(t=T, q=Y[:, :7], qd=Y[:, 7:], cpu_seconds=cpu, stats=st, energy_balance=E,
                    position_residual=gres, velocity_residual=vres,
                    angles=dict(zip(ANDREWS_NAMES, Y[-1, :7].tolist())))


def andrews_cartesian(params=None, solver="auto"):
    """A03 built from 7 planar bodies and 10 pin joints (Cartesian, seed 001 ch. 2).

    Body frames: origin at the centre of mass, x axis along the body's reference direction so that
    the body angles are β, β+Θ, γ, Φ+δ, δ, Ω+ε, ε (HW II Fig. 7.1 / eq. 7.4 geometry).  No gravity.
    """
    p = dict(ANDREWS)
    p.update(params or {})
    q = ANDREWS_Q0
    be, th, ga, ph, de, om, ep = q
    s = CartesianSystem(dim=2, gravity=(0.0, 0.0), solver=solver)

    def R(a):
        return np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])

    def ex(a):
        return np.array([math.cos(a), math.sin(a)])

    A, Bp, C = np.array([p["xa"], p["ya"]]), np.array([p["xb"], p["yb"]]), np.array([p["xc"], p["yc"]])
    rr, ra, d, da, ss, sa, sb, sc, sd = (p[k] for k in ("rr", "ra", "d", "da", "ss", "sa", "sb", "sc", "sd"))
    e, ea, zt, ta, tb, zf, fa, u, ua, ub = (p[k] for k in ("e", "ea", "zt", "ta", "tb", "zf", "fa", "u", "ua", "ub"))
    F = rr * ex(be)
    G = A + zt * ex(de)
    H = A + R(ep) @ np.array([0.0, -u])
    coms = [ra * ex(be), F - da * ex(be + th), Bp + R(ga) @ np.array([sb, -sa]),
            G + R(ph + de) @ np.array([0.0, -(e - ea)]), A + R(de) @ np.array([ta, tb]),
            H + (zf - fa) * ex(om + ep), A + R(ep) @ np.array([-ub, -ua])]
    angles = [be, be + th, ga, ph + de, de, om + ep, ep]
    for k in range(7):
        s.add_body(f"body{k + 1}", p[f"m{k + 1}"], p[f"i{k + 1}"], position=(*coms[k], angles[k]))
    s.add_joint(PlanarRevolute("O", "ground", "body1", (0.0, 0.0), (-ra, 0.0)))
    s.add_joint(PlanarRevolute("F", "body1", "body2", (rr - ra, 0.0), (da, 0.0)))
    s.add_joint(PlanarRevolute("B", "ground", "body3", Bp, (-sb, sa)))
    s.add_joint(PlanarRevolute("E23", "body2", "body3", (da - d, 0.0), (-sb, sa - ss)))
    s.add_joint(PlanarRevolute("E24", "body2", "body4", (da - d, 0.0), (0.0, -ea)))
    s.add_joint(PlanarRevolute("G", "body4", "body5", (0.0, e - ea), (zt - ta, -tb)))
    s.add_joint(PlanarRevolute("A5", "ground", "body5", A, (-ta, -tb)))
    s.add_joint(PlanarRevolute("E26", "body2", "body6", (da - d, 0.0), (fa, 0.0)))
    s.add_joint(PlanarRevolute("H", "body6", "body7", (-(zf - fa), 0.0), (ub, ua - u)))
    s.add_joint(PlanarRevolute("A7", "ground", "body7", A, (ub, ua)))
    s.add_force(PointSpring("body3", (sd - sb, sa - sc), "ground", C, p["c0"], 0.0, p["l0"]))
    s.add_force(RelativeTorque("ground", "body1", p["mom"]))
    return s


def andrews_angles_from_cartesian(x):
    """The seven HW angles from the Cartesian body angles (x: (..., 21))."""
    ph = np.asarray(x)[..., 2::3]
    return np.stack([ph[..., 0], ph[..., 1] - ph[..., 0], ph[..., 2], ph[..., 3] - ph[..., 4],
                     ph[..., 4], ph[..., 5] - ph[..., 6], ph[..., 6]], axis=-1)


# ----------------------------------------------------------------------------------------------
# A01, A02, A04 in Cartesian coordinates
# ----------------------------------------------------------------------------------------------
def pendulum_cartesian(solver="auto"):
    """A01: point mass 1 kg (J = 0) on a massless 1 m rod pinned at the origin, horizontal, at rest."""
    s = CartesianSystem(dim=2, gravity=(0.0, -G0), solver=solver)
    s.add_body("P1", 1.0, 0.0, position=(-1.0, 0.0, 0.0))
    s.add_joint(PlanarRevolute("pin", "ground", "P1", (0.0, 0.0), (1.0, 0.0)))
    return s


def four_bar_cartesian(N=2, solver="auto", al_eps=1e-7):
    """A02: N four-bar windows; cranks k = 0..N pinned at (k, 0), couplers on top; B0 at 1 m/s along +x.

    The mechanism passes its singular position (all cranks horizontal, DoF 1 → N + 1) twice per
    turn.  The augmented-Lagrangian solve with ε = ``al_eps`` (relative) keeps the accelerations
    bounded there, and the projection after every step keeps the state on the parallelogram branch.
    """
    s = CartesianSystem(dim=2, gravity=(0.0, -G0), solver=solver)
    s.al_eps = al_eps
    J = 1.0 / 12.0
    for k in range(N + 1):
        s.add_body(f"crank{k}", 1.0, J, position=(k, 0.5, math.pi / 2), velocity=(0.5, 0.0, -1.0))
    for k in range(N):
        s.add_body(f"coupler{k}", 1.0, J, position=(k + 0.5, 1.0, 0.0), velocity=(1.0, 0.0, 0.0))
    for k in range(N + 1):
        s.add_joint(PlanarRevolute(f"A{k}", "ground", f"crank{k}", (k, 0.0), (-0.5, 0.0)))
    for k in range(N):
        s.add_joint(PlanarRevolute(f"B{k}-left", f"crank{k}", f"coupler{k}", (0.5, 0.0), (-0.5, 0.0)))
        s.add_joint(PlanarRevolute(f"B{k + 1}-right", f"coupler{k}", f"crank{k + 1}", (0.5, 0.0), (0.5, 0.0)))
    return s


BRICARD_POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, -1, 0], [1, -1, 1], [0, -1, 1], [0, 0, 1]], float)
BRICARD_AXES = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]], float)


def bricard_cartesian(solver="auto"):
    """A04: five rods and six hinges closed through the ground (redundant: 30 equations, rank 29)."""
    s = CartesianSystem(dim=3, gravity=(0.0, -G0, 0.0), solver=solver)
    a = 0.1
    I = np.diag([2 * a * a / 12, (1 + a * a) / 12, (1 + a * a) / 12])
    rots = []
    for k in range(5):
        P, Q = BRICARD_POINTS[k], BRICARD_POINTS[k + 1]
        xb = Q - P
        yb = np.array([1.0, 0, 0]) if abs(xb[0]) < 0.5 else np.array([0, 1.0, 0])
        Rk = np.column_stack([xb, yb, np.cross(xb, yb)])
        rots.append(Rk)
        s.add_body(f"rod{k + 1}", 1.0, I, position=((P + Q) / 2, Rk))
    for k in range(6):
        ax = BRICARD_AXES[k]
        bi = "ground" if k == 0 else f"rod{k}"
        bj = f"rod{k + 1}" if k < 5 else "ground"
        Ri = np.eye(3) if k == 0 else rots[k - 1]
        Rj = np.eye(3) if k == 5 else rots[k]
        pi = BRICARD_POINTS[k] if k == 0 else np.array([0.5, 0, 0])
        pj = np.array([-0.5, 0, 0]) if k < 5 else BRICARD_POINTS[0 if k == 6 else k]
        s.add_joint(HingeJoint(f"J{k + 1}", bi, bj, pi, pj, Ri.T @ ax, Rj.T @ ax))
    return s


def run_cartesian(system, t_end, rtol=1e-11, atol=1e-11, n_out=201, project=True):
    return system.simulate(t_end, rtol=rtol, atol=atol, n_out=n_out, project=project)


# ----------------------------------------------------------------------------------------------
# one entry point per problem: run it and return its reported quantities
# ----------------------------------------------------------------------------------------------
def _summary(system, r, extra):
    E = r.energy
    out = dict(t_end=float(r.t[-1]), cpu_seconds=float(r.stats["cpu_seconds"]), steps=int(r.stats["nsteps"]),
               energy_initial=float(E[0]), energy_variation=float(np.ptp(E)),
               max_position_residual=float(r.residuals["position"].max()),
               max_velocity_residual=float(r.residuals["velocity"].max()),
               max_acceleration_residual=float(r.residuals["acceleration"].max()))
    out.update(extra)
    return out


def run_problem(name, t_end=None, rtol=None, N=2, formulation="default"):
    """Run benchmark ``name`` (A01..A05) and return a dict of its reported quantities.

    ``formulation``: ``"default"`` (A03: the seven angles; A05: the ModelBuilder tree, see
    :func:`run_flyball`; others: Cartesian), ``"cartesian"`` or ``"constrained"`` (the ModelBuilder model
    as tree + cut joints).
    """
    name = name.upper()
    if formulation == "constrained" or (formulation == "cartesian" and name == "A03"):
        return _run_builder_or_cartesian(name, t_end, rtol, N, formulation)
    if name == "A03":
        a = AndrewsDAE()
        r = a.solve(t_end=0.03 if t_end is None else t_end, rtol=rtol or 1e-12, atol=rtol or 1e-12)
        out = dict(r["angles"])
        out.update(t_end=float(r["t"][-1]), cpu_seconds=float(r["cpu_seconds"]), steps=int(r["stats"]["nsteps"]),
                   energy_balance_variation=float(np.ptp(r["energy_balance"])),
                   max_position_residual=float(r["position_residual"].max()),
                   max_velocity_residual=float(r["velocity_residual"].max()))
        if out["t_end"] == 0.03:
            out["max_abs_error_vs_reference"] = float(np.abs(r["q"][-1] - ANDREWS_REF_003).max())
        return out
    t_end = 10.0 if t_end is None else t_end
    if name == "A01":
        s = pendulum_cartesian()
        r = s.simulate(t_end, rtol=rtol or 1e-11, atol=rtol or 1e-11, n_out=401)
        return _summary(s, r, dict(x_P1=float(r.x[-1, 0]), y_P1=float(r.x[-1, 1]),
                                   energy_variation_relative_to_mgL=float(np.ptp(r.energy) / G0)))
    if name == "A02":
        s = four_bar_cartesian(N)
        r = s.simulate(t_end, rtol=rtol or 1e-12, atol=rtol or 1e-12, n_out=401)
        B0 = s.point_position(r.x[-1], "crank0", (0.5, 0.0))
        ph = r.x[:, 2:3 * (N + 1):3]
        return _summary(s, r, dict(N=N, x_B0=float(B0[0]), y_B0=float(B0[1]),
                                   crank_angle_spread=float(np.abs(ph - ph[:, :1]).max()),
                                   singular_crossings=int(np.sum(np.diff(np.floor(ph[:, 0] / math.pi)) != 0)),
                                   energy_variation_relative=float(np.ptp(r.energy) / abs(r.energy[0]))))
    if name == "A04":
        s = bricard_cartesian()
        r = s.simulate(t_end, rtol=rtol or 1e-12, atol=rtol or 1e-12, n_out=401)
        P = s.point_position(r.x[-1], "rod3", (0.5, 0.0, 0.0))
        return _summary(s, r, dict(constraint_equations=s.nc, jacobian_rank=int(s.rank0),
                                   x_P=float(P[0]), y_P=float(P[1]), z_P=float(P[2]),
                                   energy_variation_relative=float(np.ptp(r.energy) / abs(r.energy[0]))))
    if name == "A05":
        return run_flyball(t_end=t_end, rtol=rtol)
    raise ValueError(f"unknown IFToMM problem {name!r}; expected A01, A02, A03, A04 or A05")


def _run_builder_or_cartesian(name, t_end, rtol, N, formulation):
    import multibody as mb
    import multibody.formulations.constrained  # noqa: F401  (registers the formulations)
    tol = rtol or 1e-12
    if name == "A03" and formulation == "cartesian":
        s = andrews_cartesian()
        r = s.simulate(0.03 if t_end is None else t_end, rtol=tol, atol=tol, n_out=31)
        out = dict(zip(ANDREWS_NAMES, andrews_angles_from_cartesian(r.x[-1]).tolist()))
        out.update(t_end=float(r.t[-1]), cpu_seconds=float(r.stats["cpu_seconds"]), steps=int(r.stats["nsteps"]),
                   max_position_residual=float(r.residuals["position"].max()),
                   max_velocity_residual=float(r.residuals["velocity"].max()))
        return out
    build = {"A01": pendulum_model, "A02": lambda: four_bar_model(N), "A03": andrews_model, "A04": bricard_model,
             "A05": flyball_model}
    if name not in build:
        raise NotImplementedError(f"{name} has no builder model yet")
    m, q0, v0 = build[name]()
    t_end = (0.03 if name == "A03" else 10.0) if t_end is None else t_end
    opts = dict(al_eps=A02_AL_EPS) if name == "A02" else {}
    r = mb.simulate(m, q0, v0, t_end, formulation="constrained" if m.cut_joints else "tree", rtol=tol, atol=tol,
                    n_out=201, **opts)
    E = r.energy["total"]
    out = dict(t_end=float(r.t[-1]), cpu_seconds=float(r.info["cpu_seconds"]), steps=int(r.info["steps"]),
               energy_initial=float(E[0]), energy_variation=float(np.ptp(E)),
               max_position_residual=float(max([v.max() for k, v in r.residuals.items() if k != "velocity"],
                                               default=0.0)),
               max_velocity_residual=float(r.residuals["velocity"].max()) if "velocity" in r.residuals else 0.0,
               singular_configurations=len(r.info.get("singular_configurations", [])))
    if name == "A03":
        out = dict(zip(ANDREWS_NAMES, andrews_angles_from_model(m, r.q[-1]).tolist()), **out)
        out.pop("energy_initial")
        out.pop("energy_variation")
    return out


#: A05 stiff flyball governor data (see the module docstring for the sources)
FLYBALL = dict(rho=3000.0, shaft=(1.0, 0.01, 0.01), rod=(1.0, 0.01, 0.01), slider=0.1, point_mass=5.0,
               K=8e5, C=4e4, rest_length=0.5, s0=0.5, alpha_deg=30.0, omega0=2.0 * math.pi,
               hinge_offset=0.05, g=9.81, t_end=10.0)


def _box_inertia(m, a, b, c):
    """Principal moments of a homogeneous box a × b × c (edges along x, y, z) about its centre."""
    return (m * (b * b + c * c) / 12.0, m * (a * a + c * c) / 12.0, m * (a * a + b * b) / 12.0)


def flyball_model(params=None):
    """A05 stiff flyball governor built with the ModelBuilder (data: module docstring, :data:`FLYBALL`).

    Bodies (homogeneous boxes of density ρ): the shaft (frame at its lower end O, z along the shaft), the
    slider (frame at its centre) and two rods, each rod carrying its 5 kg point mass at its free end (rod
    + point mass form one rigid body; frame at the hinge, x along the rod).  Joints, all tree joints (the
    rods' loops are closed by the spring-dampers, not by joints): ``shaft`` revolute z ground→shaft at O;
    ``slider`` prismatic z shaft→slider, coordinate = s (the slider centre's height); ``hinge1``,
    ``hinge2`` revolute y shaft→rod at A = (0.05, 0, 1), B = (−0.05, 0, 1), coordinate 0 at the initial
    30° below the horizontal (hinge1 > 0 lowers rod 1, hinge2 > 0 raises rod 2).  Spring-dampers K, C,
    rest length 0.5 m from (±0.05, 0, 0) on the slider to the rod midpoints.

    The shaft speed is an initial condition, not a drive: v0 = (2π, 0, 0, 0) — the whole governor starts
    spinning rigidly at 2π rad/s with the springs at their rest length (as the specification and its
    reproductions do); the shaft then turns freely, its axial angular momentum being conserved.
    Returns (model, q0, v0).
    """
    import multibody as mb
    p = dict(FLYBALL)
    p.update(params or {})
    rho = p["rho"]
    L, w, h = p["shaft"]
    ms = rho * L * w * h
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -p["g"]), name="A05 stiff flyball governor")
    Ix, Iy, Iz = _box_inertia(ms, w, h, L)
    b.add_body("shaft", ms, com=(0.0, 0.0, L / 2), inertia=(Ix, Iy, Iz))
    a = p["slider"]
    msl = rho * a ** 3
    b.add_body("slider", msl, com=(0.0, 0.0, 0.0), inertia=_box_inertia(msl, a, a, a))
    lr, wr, hr = p["rod"]
    mr, mp = rho * lr * wr * hr, p["point_mass"]
    xc = (mr * lr / 2 + mp * lr) / (mr + mp)            # rod + point mass centre on the rod axis
    Jx, Jy, Jz = _box_inertia(mr, lr, wr, hr)
    steiner = mr * (lr / 2 - xc) ** 2 + mp * (lr - xc) ** 2
    alpha = math.radians(p["alpha_deg"])
    e, hinge_z = p["hinge_offset"], L
    b.add_joint("shaft", mb.Revolute(axis=(0, 0, 1)), "ground", "shaft")
    b.add_joint("slider", mb.Prismatic(axis=(0, 0, 1)), "shaft", "slider")
    for k, (side, ang) in enumerate(((1.0, alpha), (-1.0, math.pi - alpha))):
        rod = f"rod{k + 1}"
        b.add_body(rod, mr + mp, com=(xc, 0.0, 0.0), inertia=(Jx, Jy + steiner, Jz + steiner))
        c, s_ = math.cos(ang), math.sin(ang)
        Ry = np.array([[c, 0.0, s_], [0.0, 1.0, 0.0], [-s_, 0.0, c]])   # rod x axis → (cos ang, 0, −sin ang)
        b.add_joint(f"hinge{k + 1}", mb.Revolute(axis=(0, 1, 0)), "shaft", rod,
                    placement=(Ry, (side * e, 0.0, hinge_z)))
        b.add_spring(f"spring{k + 1}", "slider", (side * a / 2, 0.0, 0.0), rod, (lr / 2, 0.0, 0.0),
                     p["K"], p["C"], p["rest_length"])
    model = b.build()
    q0 = np.zeros(model.nq)
    q0[model.joint("slider").q_slice] = p["s0"]
    v0 = np.zeros(model.nv)
    v0[model.joint("shaft").v_slice] = p["omega0"]
    return model, q0, v0


def flyball_spring_lengths(model, Q):
    """Lengths of the two spring-dampers along the samples Q (n, nq) (for checks and reports)."""
    import multibody as mb
    out = []
    for q in np.atleast_2d(Q):
        R, pos = mb.forward_kinematics(model, np.ascontiguousarray(q, dtype=float))[:2]
        row = []
        for (ia, ib), (pa, pb) in zip(model.spring_body, model.spring_point):
            row.append(np.linalg.norm(R[ia] @ pa + pos[ia] - R[ib] @ pb - pos[ib]))
        out.append(row)
    return np.array(out)


def damper_work(t, P):
    """Cumulative work of the dampers ∫₀ᵗ P dt from the dissipated power P on an equally spaced grid t with
    an even number of intervals: composite Simpson at the even samples (returned: t[::2], W)."""
    h = t[1] - t[0]
    W = np.concatenate([[0.0], np.cumsum(h / 3.0 * (P[0:-2:2] + 4.0 * P[1:-1:2] + P[2::2]))])
    return t[::2], W


def run_flyball(t_end=10.0, rtol=None, method="DOP853", samples_per_second=10000):
    """Run A05 (:func:`flyball_model`) and report s(t) and its checks.

    Method: DOP853 at rtol = atol = 1e-9 by default (10 s in ~9 000 steps, ~2 s CPU; its s(10) agrees
    with rtol = 1e-11 to 1.3e-13); ``method="Radau"`` is accepted.  Reported: the slider coordinate s at
    the end, its extremes and its values every 0.5 s; the shaft's final speed; the relative drift of the
    axial angular momentum p_φ = (M v)_shaft (the shaft angle is cyclic: conserved) and the variation of
    the energy balance T + V + W, W the work of the dampers (conserved; W by Simpson's rule on the
    output grid of ``samples_per_second``, whose quadrature error dominates the figure).
    """
    import multibody as mb

    from ..formulations.tree import tree_energy
    t_end = FLYBALL["t_end"] if t_end is None else float(t_end)
    tol = rtol or 1e-9
    m, q0, v0 = flyball_model()
    n = 2 * max(1, math.ceil(samples_per_second * t_end / 2))
    r = mb.simulate(m, q0, v0, t_end, method=method, rtol=tol, atol=tol, n_out=n + 1)
    js, jp = m.joint("slider").q_slice.start, m.joint("shaft").v_slice.start
    s = r.q[:, js]
    T, V, P = tree_energy(m, r.q, r.v)
    _, W = damper_work(r.t, P)
    E = (T + V)[::2] + W
    every = max(1, n // 100)
    L = np.array([(mb.crba(m, q) @ v)[jp] for q, v in zip(r.q[::every], r.v[::every])])
    grid = [i for i in range(n + 1) if abs(r.t[i] / 0.5 - round(r.t[i] / 0.5)) < 1e-9]
    return dict(t_end=float(r.t[-1]), cpu_seconds=float(r.info["cpu_seconds"]), steps=int(r.info["steps"]),
                method=method, rtol=tol, s=float(s[-1]), s_min=float(s.min()), s_max=float(s.max()),
                shaft_speed=float(r.v[-1, jp]),
                angular_momentum_z=float(L[0]), angular_momentum_drift_relative=float(np.ptp(L) / abs(L[0])),
                energy_initial=float(E[0]), damper_work=float(W[-1]),
                energy_balance_variation_relative=float(np.ptp(E) / abs(E[0])),
                t=[float(r.t[i]) for i in grid], s_t=[float(s[i]) for i in grid])


# ----------------------------------------------------------------------------------------------
# the same problems built with the ModelBuilder (tree + cut joints, seed 001 §3.6)
# ----------------------------------------------------------------------------------------------
def pendulum_model():
    """A01 with the builder: a point mass (zero inertia) 1 m from a revolute joint (axis z) at the origin;
    q = 0 puts the mass at (−1, 0, 0), gravity −y.  Returns (model, q0, v0)."""
    import multibody as mb
    b = mb.ModelBuilder(gravity=(0.0, -G0, 0.0), name="A01 pendulum")
    b.add_body("P1", 1.0, com=(-1.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0))
    b.add_joint("pin", mb.Revolute(axis=(0, 0, 1)), "ground", "P1")
    model = b.build()
    return model, np.zeros(1), np.zeros(1)


def four_bar_model(N=2):
    """See below; simulate it with ``al_eps=A02_AL_EPS`` (singular positions)."""
    return _four_bar_model(N)


#: relative ε of the augmented-Lagrangian solve for A02 in tree + cut-joint coordinates
A02_AL_EPS = 1e-6


def _four_bar_model(N=2):
    """A02 with the builder: cranks on revolute joints at (k, 0, 0) (their x axes up at q = 0), couplers on
    revolute joints at the crank tips, and the right end of every coupler closed on the next crank's tip by
    a cut revolute joint.  Initial velocity: B0 at 1 m/s along +x.  Returns (model, q0, v0)."""
    import multibody as mb
    b = mb.ModelBuilder(gravity=(0.0, -G0, 0.0), name=f"A02 {N}-four-bar")
    up = mb.rotation_about((0, 0, 1), math.pi / 2)
    I = [1e-9, 1.0 / 12.0, 1.0 / 12.0]       # thin uniform bar, 1 kg, 1 m (axial inertia negligible)
    z = (0.0, 0.0, 1.0)
    for k in range(N + 1):
        b.add_body(f"crank{k}", 1.0, com=(0.5, 0, 0), inertia=I)
        b.add_joint(f"A{k}", mb.Revolute(axis=z), "ground", f"crank{k}", placement=(up, (float(k), 0, 0)))
    for k in range(N):
        b.add_body(f"coupler{k}", 1.0, com=(0.5, 0, 0), inertia=I)
        b.add_joint(f"B{k}", mb.Revolute(axis=z), f"crank{k}", f"coupler{k}", placement=(up.T, (1.0, 0, 0)))
        b.add_joint(f"C{k + 1}", mb.Revolute(axis=z), f"coupler{k}", f"crank{k + 1}",
                    placement=(np.eye(3), (1.0, 0, 0)), child_placement=(np.eye(3), (1.0, 0, 0)), cut=True)
    model = b.build()
    q0 = np.zeros(model.nq)
    v0 = np.zeros(model.nv)
    for k in range(N + 1):
        v0[model.joint(f"A{k}").v_slice] = -1.0
    for k in range(N):
        v0[model.joint(f"B{k}").v_slice] = 1.0
    return model, q0, v0


def bricard_model():
    """A04 with the builder: rods 1..5 in a chain of revolute joints from the ground, the sixth hinge (rod 5
    to the ground at (0, 0, 1)) cut.  Body frames parallel to the ground axes at q = 0, at each rod's first
    joint.  The cut hinge's 5 equations are redundant with the chain (rank 4).  Returns (model, q0, v0)."""
    import multibody as mb
    b = mb.ModelBuilder(gravity=(0.0, -G0, 0.0), name="A04 Bricard")
    a = 0.1
    Iloc = np.diag([2 * a * a / 12, (1 + a * a) / 12, (1 + a * a) / 12])
    prev, origin = "ground", np.zeros(3)
    for k in range(5):
        P, Q = BRICARD_POINTS[k], BRICARD_POINTS[k + 1]
        xb = Q - P
        yb = np.array([1.0, 0, 0]) if abs(xb[0]) < 0.5 else np.array([0, 1.0, 0])
        Rk = np.column_stack([xb, yb, np.cross(xb, yb)])
        b.add_body(f"rod{k + 1}", 1.0, com=xb / 2, inertia=Rk @ Iloc @ Rk.T)
        b.add_joint(f"J{k + 1}", mb.Revolute(axis=BRICARD_AXES[k]), prev, f"rod{k + 1}",
                    placement=(np.eye(3), P - origin))
        prev, origin = f"rod{k + 1}", P
    b.add_joint("J6", mb.Revolute(axis=BRICARD_AXES[5]), "ground", "rod5",
                placement=(np.eye(3), BRICARD_POINTS[5]), child_placement=(np.eye(3), BRICARD_POINTS[5] - origin),
                cut=True)
    model = b.build()
    return model, model.neutral(), np.zeros(model.nv)


def andrews_model(params=None):
    """A03 built with the ModelBuilder: 7 bodies on revolute joints (axis z) — O: ground→1, F: 1→2,
    E: 2→3, 2→4, 2→6, G: 4→5, H: 6→7 — and the pins B (ground–3), A (ground–5), A (ground–7) as cut
    joints; the spring D–C and the driving torque (a constant effort on joint O); no gravity.

    The reference configuration q = 0 is Hairer & Wanner's consistent initial position: every body frame
    sits at its tree joint there, with axes parallel to the ground axes.  Returns (model, q0, v0).
    """
    import multibody as mb
    p = dict(ANDREWS)
    p.update(params or {})
    cs = andrews_cartesian(params)        # the same geometry, positions at the initial angles
    x = cs.x0.reshape(7, 3)
    com = [x[k, :2] for k in range(7)]
    pt = lambda body, local: cs.point_position(cs.x0, body, local)   # noqa: E731
    jdef = {j.name: j for j in cs.joints}

    def where(name):   # the joint's point in ground coordinates (initial configuration)
        j = jdef[name]
        return pt(j.body_j, j.rho)

    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0), name="A03 Andrews")
    tree = [("O", "ground", "body1"), ("F", "body1", "body2"), ("E23", "body2", "body3"),
            ("E24", "body2", "body4"), ("G", "body4", "body5"), ("E26", "body2", "body6"), ("H", "body6", "body7")]
    origin = {"ground": np.zeros(2)}
    for name, _, child in tree:
        origin[child] = where(name)
    for k in range(7):
        bn = f"body{k + 1}"
        i = p[f"i{k + 1}"]
        b.add_body(bn, p[f"m{k + 1}"], com=(*(com[k] - origin[bn]), 0.0), inertia=[i, i, i])
    z = (0.0, 0.0, 1.0)
    for name, par, child in tree:
        pos = where(name) - origin[par]
        b.add_joint(name, mb.Revolute(axis=z), par, child, placement=(np.eye(3), (*pos, 0.0)),
                    effort=p["mom"] if name == "O" else None)
    for name, child in (("B", "body3"), ("A5", "body5"), ("A7", "body7")):
        P = where(name)
        b.add_joint(name, mb.Revolute(axis=z), "ground", child, placement=(np.eye(3), (*P, 0.0)),
                    child_placement=(np.eye(3), (*(P - origin[child]), 0.0)), cut=True)
    D = pt("body3", cs.springs[0].pa)
    C = np.array([p["xc"], p["yc"]])
    b.add_spring("DC", "body3", (*(D - origin["body3"]), 0.0), "ground", (*C, 0.0), p["c0"], 0.0, p["l0"])
    model = b.build()
    return model, np.zeros(model.nq), np.zeros(model.nv)


def andrews_angles_from_model(model, q):
    """β, Θ, γ, Φ, δ, Ω, ε from the joint angles of :func:`andrews_model` (q = 0 is the initial state)."""
    Q = np.atleast_2d(q)
    g = {n: Q[:, model.joint(n).q_slice.start] for n in ("O", "F", "E23", "E24", "G", "E26", "H")}
    be0, th0, ga0, ph0, de0, om0, ep0 = ANDREWS_Q0
    be = be0 + g["O"]
    th = th0 + g["F"]
    ga = ga0 + g["O"] + g["F"] + g["E23"]
    de = de0 + g["O"] + g["F"] + g["E24"] + g["G"]
    ph = ph0 + de0 + g["O"] + g["F"] + g["E24"] - de
    ep = ep0 + g["O"] + g["F"] + g["E26"] + g["H"]
    om = om0 + ep0 + g["O"] + g["F"] + g["E26"] - ep
    out = np.stack([be, th, ga, ph, de, om, ep], axis=-1)
    return out[0] if np.ndim(q) == 1 else out
