"""IFToMM multibody benchmark problems A01–A05 (González, Dopico, Lugrís, Cuadrado, "A benchmarking
system for MBS simulation software", Multibody System Dynamics 16 (2006) 179–190; the problem library
of the IFToMM Technical Committee for Multibody Dynamics, lim.ii.udc.es/mbsbenchmark).

Each problem is one Model built with the builder (tree joints + the cut joints that close its loops); a
formulation is chosen when it is run (:func:`run_problem`: Cartesian coordinates, seed 001 ch. 2, by default
for the closed mechanisms; tree + cut joints, seed 001 §3.6; the tree alone for A01 and A05).

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

The reported points are the benchmark's (its figures and reference curves, as reproduced by MBS-BOS): A01 the
mass P1, (−1, 0) at t = 0 (the reference curves start there, although the library's text says x = +1: the
motion is the mirror image, y(t) the same); A02 the tip B0 of the first crank, (0, 1) at t = 0, its position
and velocity; A04 the point P3, the hinge between rods 2 and 3, (1, −1, 0) at t = 0 (x falls to −1 and comes
back with a period of 5 s, z dips to −0.5, y stays between −1 and −0.87); A05 the slider coordinate s (the
slider's centre above the shaft's lower end).

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

import numpy as np

import multibody as mb
from multibody.errors import ModelError

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


BRICARD_POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, -1, 0], [1, -1, 1], [0, -1, 1], [0, 0, 1]], float)
BRICARD_AXES = np.array([[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0]], float)

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


#: the most evaluations of a right-hand side in Python (the Cartesian formulation) that :func:`run_flyball` starts
#: on (about a minute at the ~7 ms each of A05's); a longer run is refused before it starts
PYTHON_EVALUATIONS = 10_000


def flyball_decay_rate(model, q0, v0):
    """The fastest decay rate |Re λ| (1/s) of A05's linearized equations at (q0, v0) (the spring-dampers:
    8.1e3 1/s at the initial state): an explicit method is stable only for steps below about 6/|Re λ|
    (DOP853's real stability interval is [−6, 0])."""
    from multibody.analysis.linearize import linearize
    lam = np.linalg.eigvals(linearize(model, q0, v0).A)
    return float(np.max(-lam.real, initial=0.0))


def run_flyball(t_end=10.0, rtol=None, method="DOP853", samples_per_second=10000, formulation="tree"):
    """Run A05 (:func:`flyball_model`) and report s(t) and its checks.

    Method: DOP853 at rtol = atol = 1e-9 by default (10 s in ~9 000 steps, ~2 s CPU; its s(10) agrees
    with rtol = 1e-11 to 1.3e-13); ``method="Radau"`` is accepted.  Reported: the slider coordinate s at
    the end, its extremes and its values every 0.5 s; the shaft's final speed; the relative drift of the
    axial angular momentum p_φ = (M v)_shaft (the shaft angle is cyclic: conserved) and the variation of
    the energy balance T + V + W, W the work of the dampers (conserved; W by Simpson's rule on the
    output grid of ``samples_per_second``, whose quadrature error dominates the figure).

    ``formulation="cartesian"`` evaluates its right-hand side in Python (~7 ms each) on a stiff problem: the
    spring-dampers decay at up to 8.1e3 1/s (:func:`flyball_decay_rate`), so an explicit step is at most
    ~7e-4 s — 10 s take ≥ 13 000 steps of 12 evaluations, and every output sample one more. A run that needs
    more than :data:`PYTHON_EVALUATIONS` is refused before it starts (``ModelError`` saying why and how short a
    run fits); the compiled ``"tree"`` formulation (the default) runs the 10 s in seconds.
    """
    from multibody.formulations.tree_rhs import tree_energy
    t_end = FLYBALL["t_end"] if t_end is None else float(t_end)
    tol = rtol or 1e-9
    m, q0, v0 = flyball_model()
    n = 2 * max(1, math.ceil(samples_per_second * t_end / 2))
    if formulation == "cartesian":
        rate = flyball_decay_rate(m, q0, v0)
        per_second = 12.0 * rate / 6.0 + 2.0 * samples_per_second     # steps × stages, plus the output samples
        if per_second * t_end > PYTHON_EVALUATIONS:
            raise ModelError(f"A05 in Cartesian coordinates over {t_end:g} s needs at least {per_second * t_end:,.0f} "
                             f"evaluations of its Python right-hand side (spring-dampers decaying at {rate:.2g} 1/s "
                             f"allow explicit steps of {6.0 / rate:.1g} s at most; {n + 1} output samples), tens of "
                             f"minutes: use formulation 'tree' (the default, compiled) or t_end <= "
                             f"{PYTHON_EVALUATIONS / per_second:.2g} s", element="formulation")
    r = mb.simulate(m, q0, v0, t_end, method=method, rtol=tol, atol=tol, n_out=n + 1, formulation=formulation)
    js, jp = m.joint("slider").q_slice.start, m.joint("shaft").v_slice.start
    s = r.q[:, js]
    T, V, P = tree_energy(m, r.q, r.v)
    _, W = damper_work(r.t, P)
    E = (T + V)[::2] + W
    every = max(1, n // 100)
    L = np.array([(mb.crba(m, q) @ v)[jp] for q, v in zip(r.q[::every], r.v[::every])])
    grid = [i for i in range(n + 1) if abs(r.t[i] / 0.5 - round(r.t[i] / 0.5)) < 1e-9]
    return dict(t_end=float(r.t[-1]), cpu_seconds=float(r.info["cpu_seconds"]), steps=int(r.info["steps"]),
                method=method, rtol=tol, formulation=formulation, s=float(s[-1]), s_min=float(s.min()),
                s_max=float(s.max()),
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
    b = mb.ModelBuilder(gravity=(0.0, -G0, 0.0), name="A01 pendulum")
    b.add_body("P1", 1.0, com=(-1.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0))
    b.add_joint("pin", mb.Revolute(axis=(0, 0, 1)), "ground", "P1")
    model = b.build()
    return model, np.zeros(1), np.zeros(1)


#: relative ε of the augmented-Lagrangian KKT solve for A02 through its singular positions, in tree + cut-joint
#: coordinates (``constrained``) and in Cartesian coordinates (``cartesian``).  Where a crank passes the horizontal,
#: a row of the constraint Jacobian vanishes (σ ∝ the crank's angle d to the horizontal) while its multiplier grows
#: as 1/d; the regularized solve leaves that row free for σ² ≲ ε, a window of width ~√ε in which each passage
#: loses energy ∝ ε; outside it the equations amplify round-off off the constraints as ~1/(σ d²), a floor that
#: grows as ε^(−3/2).  The two meet near these ε: at rtol = 1e-12 the crank angle after 10 s is 1.1e-10 rad off the
#: exact reduction in tree + cut-joint coordinates and 7e-10 in Cartesian ones (coordinates of size ~3 m carry ten
#: times the round-off), while ε = 1e-10 gives 7e-9 rad in the former and ε = 1e-11 gives 2e-6 rad in the latter.
A02_AL_EPS = {"constrained": 1e-9, "cartesian": 3e-10}


def four_bar_model(N=2, stops=None, restitution=0.0):
    """A02 with the builder: cranks on revolute joints at (k, 0, 0) (their x axes up at q = 0), couplers on
    revolute joints at the crank tips, and the right end of every coupler closed on the next crank's tip by
    a cut revolute joint.  Initial velocity: B0 at 1 m/s along +x.  ``stops``: end stops (lower, upper) on the
    first crank's hinge A0 with the coefficient of restitution ``restitution`` (``examples/four_bar_stops.yaml``:
    the loop falls onto its stop; the limits also in ``metadata`` as a model file keeps them).  Returns (model, q0,
    v0)."""
    b = mb.ModelBuilder(gravity=(0.0, -G0, 0.0), name=f"A02 {N}-four-bar" + ("" if stops is None else " with stops"),
                        metadata=None if stops is None else {"limits": {"A0": dict(zip(("lower", "upper"), stops))}})
    up = mb.rotation_about((0, 0, 1), math.pi / 2)
    I = [1e-9, 1.0 / 12.0, 1.0 / 12.0]       # thin uniform bar, 1 kg, 1 m (axial inertia negligible)
    z = (0.0, 0.0, 1.0)
    for k in range(N + 1):
        b.add_body(f"crank{k}", 1.0, com=(0.5, 0, 0), inertia=I)
        limited = {} if stops is None or k else {"limits": stops, "restitution": restitution}
        b.add_joint(f"A{k}", mb.Revolute(axis=z), "ground", f"crank{k}", placement=(up, (float(k), 0, 0)), **limited)
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


def bricard_p3(model, q):
    """The benchmark's reported point P3 of A04 (:func:`bricard_model`): the hinge J3 between rods 2 and 3, at
    (1, −1, 0) when t = 0 (the origin of rod 3's frame)."""
    return mb.point_position(model, np.ascontiguousarray(q, dtype=float), "rod3", (0.0, 0.0, 0.0))


def _andrews_geometry(p):
    """The mechanism at Hairer & Wanner's initial angles (HW II Fig. 7.1, eq. 7.4): the centre of mass of each
    body, and each joint (and the spring end D) as (body 1, body 2, its point in ground coordinates)."""
    be, th, ga, ph, de, om, ep = ANDREWS_Q0

    def rot(a, v):
        c, s = math.cos(a), math.sin(a)
        return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])

    def ex(a):
        return np.array([math.cos(a), math.sin(a)])

    A, B = np.array([p["xa"], p["ya"]]), np.array([p["xb"], p["yb"]])
    rr, ra, d, da, ss, sa, sb, sc, sd = (p[k] for k in ("rr", "ra", "d", "da", "ss", "sa", "sb", "sc", "sd"))
    e, ea, zt, ta, tb, zf, fa, u, ua, ub = (p[k] for k in ("e", "ea", "zt", "ta", "tb", "zf", "fa", "u", "ua", "ub"))
    F, G, H = rr * ex(be), A + zt * ex(de), A + rot(ep, (0.0, -u))
    com = [ra * ex(be), F - da * ex(be + th), B + rot(ga, (sb, -sa)), G + rot(ph + de, (0.0, -(e - ea))),
           A + rot(de, (ta, tb)), H + (zf - fa) * ex(om + ep), A + rot(ep, (-ub, -ua))]
    angle = [be, be + th, ga, ph + de, de, om + ep, ep]

    def on(k, v):            # a point given in the axes of body k (from its centre of mass), in ground coordinates
        return com[k - 1] + rot(angle[k - 1], v)

    E = on(2, (da - d, 0.0))
    joints = {"O": ("ground", "body1", np.zeros(2)), "F": ("body1", "body2", F), "B": ("ground", "body3", B),
              "E23": ("body2", "body3", E), "E24": ("body2", "body4", E), "G": ("body4", "body5", G),
              "A5": ("ground", "body5", A), "E26": ("body2", "body6", E), "H": ("body6", "body7", H),
              "A7": ("ground", "body7", A)}
    D = on(3, (sd - sb, sa - sc))
    return com, joints, D


def andrews_model(params=None):
    """A03 built with the builder: 7 bodies on revolute joints (axis z) — O: ground→1, F: 1→2, E: 2→3, 2→4,
    2→6, G: 4→5, H: 6→7 — and the pins B (ground–3), A (ground–5), A (ground–7) as cut joints; the spring
    D–C and the driving torque (a constant effort on joint O); no gravity (data: HW II §VII.7, :data:`ANDREWS`).

    The reference configuration q = 0 is Hairer & Wanner's consistent initial position: every body frame
    sits at its tree joint there, with axes parallel to the ground axes.  Returns (model, q0, v0).
    """
    p = dict(ANDREWS)
    p.update(params or {})
    com, joints, D = _andrews_geometry(p)
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0), name="A03 Andrews")
    tree = ("O", "F", "E23", "E24", "G", "E26", "H")
    origin = {"ground": np.zeros(2)}
    for name in tree:
        origin[joints[name][1]] = joints[name][2]
    for k in range(7):
        bn = f"body{k + 1}"
        i = p[f"i{k + 1}"]
        b.add_body(bn, p[f"m{k + 1}"], com=(*(com[k] - origin[bn]), 0.0), inertia=[i, i, i])
    z = (0.0, 0.0, 1.0)
    for name in tree:
        par, child, P = joints[name]
        b.add_joint(name, mb.Revolute(axis=z), par, child, placement=(np.eye(3), (*(P - origin[par]), 0.0)),
                    effort=p["mom"] if name == "O" else None)
    for name in ("B", "A5", "A7"):
        par, child, P = joints[name]
        b.add_joint(name, mb.Revolute(axis=z), par, child, placement=(np.eye(3), (*P, 0.0)),
                    child_placement=(np.eye(3), (*(P - origin[child]), 0.0)), cut=True)
    b.add_spring("DC", "body3", (*(D - origin["body3"]), 0.0), "ground", (p["xc"], p["yc"], 0.0), p["c0"], 0.0,
                 p["l0"])
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


# ----------------------------------------------------------------------------------------------
# one entry point per problem: run it and return its reported quantities
# ----------------------------------------------------------------------------------------------
MODELS = {"A01": pendulum_model, "A02": four_bar_model, "A03": andrews_model, "A04": bricard_model,
          "A05": flyball_model}
#: the formulation a problem runs in unless told otherwise
DEFAULT_FORMULATION = {"A01": "cartesian", "A02": "cartesian", "A03": "cartesian", "A04": "cartesian",
                       "A05": "tree"}


def run_problem(name, t_end=None, rtol=None, N=2, formulation=None):
    """Run benchmark ``name`` (A01..A05) and return a dict of its reported quantities.

    ``formulation``: ``"cartesian"`` (absolute coordinates, seed 001 ch. 2; the default for A01–A04),
    ``"constrained"`` (tree + cut joints, seed 001 §3.6; A01 has no loop), ``"tree"`` (A01, A05; the default
    for A05). Every run reports ``t_end``, ``cpu_seconds``, ``steps``, ``formulation`` and the largest
    position and velocity constraint residuals over the output samples, plus the problem's own quantities.
    """
    key = str(name).upper()
    if key not in MODELS:
        raise ModelError(f"unknown IFToMM problem {name!r}; expected A01, A02, A03, A04 or A05", element="problem")
    formulation = formulation or DEFAULT_FORMULATION[key]
    if key == "A05":
        return run_flyball(t_end=t_end, rtol=rtol, formulation=formulation)
    m, q0, v0 = MODELS[key](N) if key == "A02" else MODELS[key]()
    t_end = (0.03 if key == "A03" else 10.0) if t_end is None else float(t_end)
    tol = rtol or (1e-11 if key == "A01" else 1e-12)
    opts = {}
    if key == "A02" and formulation in A02_AL_EPS:
        opts["al_eps"] = A02_AL_EPS[formulation]
    r = mb.simulate(m, q0, v0, t_end, formulation=formulation, rtol=tol, atol=tol, n_out=31 if key == "A03" else 401,
                    **opts)
    pos = [v for k, v in r.residuals.items() if k not in ("velocity", "acceleration")]
    out = dict(t_end=float(r.t[-1]), cpu_seconds=float(r.info["cpu_seconds"]), steps=int(r.info["steps"]),
               formulation=formulation,
               max_position_residual=float(max((v.max() for v in pos), default=0.0)),
               max_velocity_residual=float(r.residuals["velocity"].max()) if "velocity" in r.residuals else 0.0)
    E = r.energy["total"]
    q = r.q[-1]
    if key == "A01":
        P = mb.point_position(m, q, "P1", m.com[1])
        out.update(x_P1=float(P[0]), y_P1=float(P[1]), energy_variation_relative_to_mgL=float(np.ptp(E) / G0))
    elif key == "A02":
        B0 = mb.point_position(m, q, "crank0", (1.0, 0.0, 0.0))
        vB0 = mb.point_velocity(m, q, r.v[-1], "crank0", (1.0, 0.0, 0.0))
        ph = math.pi / 2 + r.q[:, [m.joint(f"A{k}").q_slice.start for k in range(N + 1)]]   # absolute crank angles
        out.update(N=N, x_B0=float(B0[0]), y_B0=float(B0[1]), vx_B0=float(vB0[0]), vy_B0=float(vB0[1]),
                   crank_angle=float(ph[-1, 0]),
                   crank_angle_spread=float(np.abs(ph - ph[:, :1]).max()),
                   singular_crossings=int(np.sum(np.diff(np.floor(ph[:, 0] / math.pi)) != 0)),
                   energy_variation_relative=float(np.ptp(E) / abs(E[0])))
    elif key == "A03":
        ang = andrews_angles_from_model(m, r.q)
        beta = ang[:, 0]
        balance = E - ANDREWS["mom"] * (beta - beta[0])     # T + spring energy − work of the drive
        out.update(dict(zip(ANDREWS_NAMES, ang[-1].tolist())), energy_balance_variation=float(np.ptp(balance)))
        if abs(out["t_end"] - 0.03) < 1e-15:
            out["max_abs_error_vs_reference"] = float(np.abs(ang[-1] - ANDREWS_REF_003).max())
    elif key == "A04":
        P3 = bricard_p3(m, q)
        cart = r.info.get("cartesian", {})
        out.update(constraint_equations=int(cart.get("constraint_rows", r.info.get("constraint_rows", 0))),
                   jacobian_rank=int(cart.get("rank", -1)), x_P3=float(P3[0]), y_P3=float(P3[1]), z_P3=float(P3[2]),
                   energy_variation_relative=float(np.ptp(E) / abs(E[0])))
    return out
