"""One step of the velocity-level time-stepping model, compiled: one problem over all the rows of the step.

The step from (q, v) at t to (q⁺, v⁺) at t + h is the semi-implicit Euler scheme of Moreau and Jean (J. J.
Moreau, "Unilateral contact and dry friction in finite freedom dynamics", 1988; M. Jean, "The non-smooth
contact dynamics method", Comput. Methods Appl. Mech. Eng. 177 (1999) 235–257) with the contact written on the
next step's gap as in Stewart & Trinkle (Int. J. Numer. Methods Eng. 39 (1996) 2673–2691):

    M (v⁺ − v) = h (τ − C(q, v)) + Jᵀ λ,        q⁺ = q ⊕ h v⁺   (:func:`integrate_step`),

where each contact i, with signed distance φ_i at q, normal n_i and tangents t1_i, t2_i at its point, has the
rows ``J_i = [n; t1; t2]ᵀ J_p`` (the relative velocity of the two bodies at the point) and the impulse
λ_i = (λ_n, λ_t) subject to

    0 ≤ λ_n ⊥ φ_i / h + u_n ≥ 0          (the gap at t + h, φ + h u_n, does not close: no penetration),
    |λ_t| ≤ μ λ_n,  λ_t = −μ λ_n u_t / |u_t| when u_t ≠ 0   (Coulomb's law with maximal dissipation),

u = J v⁺ the contact velocities at t + h. M comes from CRBA on the kinematics of RNEA's bias C (RNEA at q̈ = 0),
and one factorization M = LᵀL along the tree's paths (``kernels/ltl.py``) serves both the free velocity
``v_f = v + h L⁻¹L⁻ᵀ(τ − C)`` and the Delassus matrix ``W = J M⁻¹ Jᵀ`` (``Y = L⁻ᵀ Jᵀ``, ``W = YᵀY``; a contact's
row and its Y live on its bodies' paths to the root): a step costs RNEA, CRBA and the factor instead of ABA, CRBA
and the factor, for the same numbers to round-off,
u = J v_f + W λ, and the conditions are solved on W by ``rows/solver.py`` (directly — a few sweeps of projected Gauss–Seidel, then
semi-smooth Newton — for small sets of rows, by sweeps for large ones), to a residual of ``tolerance`` relative to
the largest impulse, from the impulses of the previous step (matched by pair and feature: a box's corner, a
capsule's end); each step's residual and iterations go to the run's ``result.info["solver"]``, and a run with a
step left unconverged warns. A contact of the ``"compliant"`` model in its implicit step (``compliant=`` law in the
solver) is a compliant row instead of a unilateral one (``rows/kinds.py``): its impulse the Hunt–Crossley force at
the step's end, its friction exact.

Overlaps (a body started inside another, or the round-off of a resting contact) are undone gradually and never
launch a body: an overlap up to ``SLOP`` (1 µm: round-off, a resting contact's drift) by its row's condition
``u_n ≥ −φ / max(h, recovery)`` (recovery 10 ms: at most 0.1 mm/s); a deeper one by the positions alone (split
impulses, as in Box2D and Bullet: E. Catto, "Iterative dynamics with temporal coherence", GDC 2005): its row keeps
``u_n ≥ SLOP / recovery`` in the step, and after it the step's rows are solved again with the target
``u_n ≥ −(φ + SLOP) / max(h, recovery)`` on the overlapping rows (every other row keeping its velocity, no friction),
the velocity of that solution moving the positions of that one step only, ``q⁺ = q ⊕ h (v⁺ + v_push)``, while v⁺ is
the velocity kept: a ball started 5 cm inside the floor is out after about ``recovery`` and at rest, not thrown at
5 m/s (the potential energy it gains is the overlap's, not the impulses'). The push is a linearized (Gauss–Newton)
step on the overlaps, held to what the linearization can carry: no row moves faster under it than the fastest
target, ``max (−φ − SLOP) / max(h, recovery)`` (the whole push scaled down otherwise). Where the coordinates can hardly
move a point along its normal (a pendulum hanging straight down with its tip inside the floor: the normal row's
Jacobian is about zero), the unscaled push would turn them by radians in one step to gain the overlap's millimetres;
scaled, it drags the point out along its tangents at that speed. Contacts enter before they touch: every
pair within ``margin`` plus the distance two shapes can close in the step (``detection.swept_distance``: their
points' speeds at the start and at the free velocity of the step, times h) takes part, with ``λ_n = 0`` unless the
step would close its gap, so a falling body lands on the surface (φ⁺ = 0) instead of sinking in.

The contacts are rows of one problem with the model's other rows (``rows/solver.py`` solves them; bilateral rows
first): the rows of its loops and constraints (``rows/constraint_rows.loop_rows``: G v⁺ = −f/h, the position
residual f corrected in the step), its latched and held coordinates (bilateral unit rows), its joint stops
(unilateral unit rows with their gap, ``rows/unit_rows.py``), then the contacts. A unilateral row that is
approaching at the step's start, u⁻ = J v < −``restitution_velocity``, and would close its gap within the step
(φ + h J v_f ≤ 0) is an impact: it gets Newton's target ``u⁺ ≥ −e u⁻`` with its restitution e (a stop's; a contact
pair's, ``add_collision(..., restitution=e)``; e = 0, plastic, by default) instead of the gap condition (a
Newton-type impact law on the velocity level, as Drake and Chrono apply it). The whole impact happens in that step:
with the gap condition instead, the step would keep ``u⁺ = −φ/h``, some of the approach, and leave the rest to the
next step, an impact split in two, which is not the same impact when other contacts take part (a rimless wheel's
stance foot: its step period 7 % off at any h). A row that was separating never gets a target, and below the
threshold the gap condition holds, so that a bouncing body comes to rest on the surface.

The step dissipates energy: the impulses' work ``λ·(u⁻ + u)/2`` (u⁻ = J v, the contact velocities before the step) is never positive (inelastic in the normal, maximal dissipation in the
tangent); it is returned so that the run can report the energy dissipated. (With the velocity before the step,
not the free velocity, in the average: at rest on a floor the impulse only cancels the step's gravity, and does
no work.)
"""
import math
from collections import namedtuple

from numba import njit

from multibody.contact.detection import C_DIST, C_FEAT, C_MU, C_N, C_PA, C_PAIR, C_PB, detect, swept_distance
from multibody.kernels.configuration import integrate_kernel
from multibody.kernels.crba import bias_and_mass_matrix
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.kinematics import FREE, IV, JTYPE, kinematics_kernel, workspace_views
from multibody.kernels.ltl import ltl_factor, ltl_solve, ltl_solve_transposed, ltl_solve_transposed_columns
from multibody.contact.shapes import GI_BODY, world_poses
from multibody.kernels.spatial import INLINE, KERNEL, cross3
from multibody.rows.constraint_rows import CFG_M, loop_rows
from multibody.rows.point_rows import contact_rows, tangent_basis
from multibody.rows.kinds import BILATERAL, COMPLIANT, FRICTION, K_H, K_STIFF, UNILATERAL
from multibody.rows.solver import ST_FIRST, ST_LAST, ST_MOST, ST_STEPS, ST_UNCONVERGED, ST_WORST, solve_rows
from multibody.rows.unit_rows import held_rows, stop_rows

#: the collision set and its buffers: packed geometry (``contact/shapes.py``), pairs, each pair's restitution, world
#: poses, contact rows, the GJK/EPA workspace
Geometry = namedtuple("Geometry", "gi gf verts pairs pair_e gw rows ws")
#: the solver's arrays: mass matrix and factor (LᵀL), rows J, Y = L⁻ᵀJᵀ (nv, rows: column r for row r), Delassus W,
#: impulses, right-hand side b, free velocity and acceleration, the rows' kinds, gaps, restitutions, friction coefficients (on the normal
#: rows) and keys, the warm-start keys and impulses of the last step, the output record of each contact,
#: ``settings`` = (margin, tolerance, iterations, recovery, restitution velocity), ``count`` (last step's contacts,
#: sweeps, rows, rows kept for the warm start, first contact row, independent bilateral rows, rows of the Python
#: constraints), the row solver's scratch (``rows.solver.RowSolver``) and the rows of the Python constraints, which
#: the run writes before each step (``xg``: their G, ``xgap``: h times the constant of ``G v⁺ + c = 0``), and the
#: velocity coordinates' paths to the root (``kernels.ltl.dof_paths``) and the reach of each row (1 + its last nonzero
#: coordinate: its column of Y is 0 from there on, ``kernels.ltl.ltl_solve_transposed_columns``) and the inverses of
#: the factor's pivots (``kernels.ltl.ltl_factor``)
Solver = namedtuple("Solver", "M L J Y W lam b vfree acc fext kind gap e mu key prev_key prev_lam rec settings count "
                              "rs xg xgap path reach inv")
#: columns of a contact record: pair, point (3), normal (3), normal force, friction force (3), signed distance,
#: feature
R_PAIR, R_POINT, R_NORMAL, R_FN, R_FT, R_DIST, R_FEAT = 0, 1, 4, 7, 8, 11, 12
R_WIDTH = 13
#: settings
S_MARGIN, S_TOL, S_ITER, S_RECOVERY, S_REST = 0, 1, 2, 3, 4
#: an overlap deeper than this (m) is pushed out at the position level (module docstring)
SLOP = 1e-6
#: the push is scaled down where a row would move faster than the fastest target by more than this fraction
#: (the solver's tolerance is 1e-10 of the largest impulse: a push that meets its targets is never scaled)
PUSH_ROUND_OFF = 1e-6
#: entries of ``count``
N_CONTACTS, N_SWEEPS, N_ROWS, N_PREV, N_FIRST_CONTACT, N_RANK, N_PYTHON = 0, 1, 2, 3, 4, 5, 6
#: the points of a manifold whose levels along its normal differ by less than this times their coordinates are on
#: one plane already (the round-off of a midpoint and of a mean of a few): they are not moved (``_contacts``)
ROUND_OFF = 8.0 * 2.0 ** -52
#: warm-start key of a contact: pair * KEY_STRIDE + feature (the other rows' keys are negative)
KEY_STRIDE = 1 << 32


@njit(**KERNEL)
def free_joint_transport(mi, v, h, vf, sign):
    """The Free joints' linear velocities between the body frame and the frame at the start of the step.

    A Free joint's velocity is the body twist [ω; v_lin] in the body's own axes, which turn during the step: the
    ground-frame velocity R v_lin is what semi-implicit Euler keeps (p⁺ = p + h R v_lin⁺, as MuJoCo's free
    joint). ``sign = +1``: vf_lin += h ω × v_lin (v the velocity at the start): ABA's q̈_lin = Rᵀ a − ω × v_lin
    holds the turning of the axes, and the free velocity of the step is v_lin + h Rᵀ a, in the axes at its start,
    the axes of the contact rows. ``sign = −1``: vf_lin ← exp(−h [ω]×) vf_lin, the same ground-frame velocity in
    the axes at the end of the step, turned by h ω (Rodrigues' formula)."""
    for i in range(1, mi.shape[0]):
        if mi[i, JTYPE] != FREE:
            continue
        k = mi[i, IV]
        w0, w1, w2 = v[k], v[k + 1], v[k + 2]
        if sign > 0:
            c0, c1, c2 = cross3(w0, w1, w2, v[k + 3], v[k + 4], v[k + 5])
            vf[k + 3] += h * c0
            vf[k + 4] += h * c1
            vf[k + 5] += h * c2
            continue
        th = h * math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
        if th == 0.0:
            continue
        u0, u1, u2 = h * w0 / th, h * w1 / th, h * w2 / th
        x0, x1, x2 = vf[k + 3], vf[k + 4], vf[k + 5]
        c, sn = math.cos(th), -math.sin(th)
        d = (1.0 - c) * (u0 * x0 + u1 * x1 + u2 * x2)
        e0, e1, e2 = cross3(u0, u1, u2, x0, x1, x2)
        vf[k + 3] = c * x0 + sn * e0 + d * u0
        vf[k + 4] = c * x1 + sn * e1 + d * u1
        vf[k + 5] = c * x2 + sn * e2 + d * u2


@njit(**KERNEL, forceinline=True)
def integrate_step(mi, q, v, h, out):
    """out = q advanced by h with the velocity v: q ⊕ h v (``configuration.integrate_kernel``), except that a Free
    joint's origin moves along a straight line, by h R v_lin (its velocity at the start of the step in ground
    coordinates), not along the screw of a constant body twist: the step then moves every point as the contact
    rows J, the velocities of the points at the start of the step, say (a rolling ball keeps its height)."""
    integrate_kernel(mi, q, v, h, out, True)


@njit(**KERNEL, inline=INLINE)
def _loops(loops, q, v, S, r):
    """The rows of the model's loops and constraints from row r (``rows.constraint_rows.loop_rows``); none for a
    run without compiled ones (a workspace without rows: no kinematics pass either)."""
    if loops is None or loops.cfg[CFG_M] == 0.0:
        return r
    return loop_rows(loops, q, v, S.J, S.kind, S.gap, S.key, r)


@njit(**KERNEL, forceinline=True)
def _python_rows(S, r):
    """The rows of the Python constraints the run wrote before the step (``S.xg``, ``S.xgap``), bilateral, from
    row r."""
    nv = S.J.shape[1]
    for i in range(S.count[N_PYTHON]):
        for k in range(nv):
            S.J[r, k] = S.xg[i, k]
        S.kind[r] = BILATERAL
        S.gap[r] = S.xgap[i]
        S.key[r] = -(1 << 41) - i
        r += 1
    return r


@njit(**KERNEL, inline=INLINE)
def _same_manifold(G, c, d):
    """Whether contacts c and d are points of one manifold: the same pair and the same normal."""
    if G.rows[c, C_PAIR] != G.rows[d, C_PAIR]:
        return False
    dot = (G.rows[c, C_N] * G.rows[d, C_N] + G.rows[c, C_N + 1] * G.rows[d, C_N + 1]
           + G.rows[c, C_N + 2] * G.rows[d, C_N + 2])
    return dot >= 1.0 - 1e-12


@njit(**KERNEL, forceinline=True)
def _contacts(mi, wd, G, S, m, r, normal):
    """The rows of the m contacts from row r — normal, then the two friction rows (``rows.point_rows``) — with
    their gaps, restitutions, friction coefficients, keys and records. Returns the next free row.

    A contact's point is the midpoint of its witness points, except that the points of one manifold (a pair's
    consecutive contacts with one normal) are moved along the normal onto one plane, the one through their mean:
    points at different gaps (a tilted face, a box sunk deeper at its downhill corners) otherwise have tangent
    rows that differ by ω × (Δφ n) — the rows of two points along a tangent nearly equal, their free velocities
    not — so that both cannot stick: the discrete problem's only solutions slide one of them at that tiny slip,
    at a cone's edge reached along the rows' null space, where Newton's steps stall (``rows/solver.py``). On one
    plane the rows of points along a tangent coincide and stick together; the points move by half the gaps'
    spread at most (the margin's size), and not at all when the face rests flat (points on one plane to round-off
    stay where they are: a shift of an ulp would make exactly equal rows unequal by round-off)."""
    c = 0
    while c < m:
        end = c + 1
        while end < m and _same_manifold(G, c, end):
            end += 1
        n0, n1, n2 = G.rows[c, C_N], G.rows[c, C_N + 1], G.rows[c, C_N + 2]
        level = 0.0
        for d in range(c, end):
            level += 0.5 * ((G.rows[d, C_PA] + G.rows[d, C_PB]) * n0 + (G.rows[d, C_PA + 1] + G.rows[d, C_PB + 1]) * n1
                            + (G.rows[d, C_PA + 2] + G.rows[d, C_PB + 2]) * n2)
        level /= end - c
        for d in range(c, end):
            x0 = 0.5 * (G.rows[d, C_PA] + G.rows[d, C_PB])
            x1 = 0.5 * (G.rows[d, C_PA + 1] + G.rows[d, C_PB + 1])
            x2 = 0.5 * (G.rows[d, C_PA + 2] + G.rows[d, C_PB + 2])
            s = level - (x0 * n0 + x1 * n1 + x2 * n2)
            if abs(s) > ROUND_OFF * (abs(x0) + abs(x1) + abs(x2)):    # (points already on one plane stay)
                x0, x1, x2 = x0 + s * n0, x1 + s * n1, x2 + s * n2
            r = _contact_rows(mi, wd, G, S, d, r, normal, x0, x1, x2)
        c = end
    return r


@njit(**KERNEL, inline=INLINE)
def _contact_rows(mi, wd, G, S, c, r, normal, x0, x1, x2):
    """The three rows of contact c at the point x from row r (:func:`_contacts`); returns r + 3."""
    n0, n1, n2 = G.rows[c, C_N], G.rows[c, C_N + 1], G.rows[c, C_N + 2]
    p = int(G.rows[c, C_PAIR])
    contact_rows(mi, wd, G.gi[G.pairs[p, 0], GI_BODY], G.gi[G.pairs[p, 1], GI_BODY], x0, x1, x2, n0, n1, n2,
                 S.J, r)
    S.kind[r], S.kind[r + 1], S.kind[r + 2] = normal, FRICTION, FRICTION
    S.gap[r], S.gap[r + 1], S.gap[r + 2] = G.rows[c, C_DIST], 0.0, 0.0
    S.e[r], S.e[r + 1], S.e[r + 2] = G.pair_e[p], 0.0, 0.0
    S.mu[r] = G.rows[c, C_MU]
    S.key[r] = p * KEY_STRIDE + int(G.rows[c, C_FEAT])
    rec = S.rec[c]
    rec[R_PAIR] = p
    rec[R_POINT], rec[R_POINT + 1], rec[R_POINT + 2] = x0, x1, x2
    rec[R_NORMAL], rec[R_NORMAL + 1], rec[R_NORMAL + 2] = n0, n1, n2
    rec[R_DIST] = G.rows[c, C_DIST]
    rec[R_FEAT] = G.rows[c, C_FEAT]
    return r + 3


@njit(**KERNEL, inline=INLINE)
def _warm_start(S, nb, nr, c0):
    """λ of each unilateral row (and contact) from the last step's row with the same key (a contact's friction
    impulse re-expressed in the new tangents), zero for new rows; the bilateral rows are solved directly."""
    r = nb
    while r < nr:
        S.lam[r] = 0.0
        contact = r >= c0
        if contact:
            S.lam[r + 1] = S.lam[r + 2] = 0.0
        for o in range(int(S.count[N_PREV])):
            if S.prev_key[o] == S.key[r]:
                S.lam[r] = S.prev_lam[o, 0]
                if contact:
                    c = (r - c0) // 3
                    n0, n1, n2 = S.rec[c, R_NORMAL], S.rec[c, R_NORMAL + 1], S.rec[c, R_NORMAL + 2]
                    a0, a1, a2, b0, b1, b2 = tangent_basis(n0, n1, n2)
                    f0, f1, f2 = S.prev_lam[o, 1], S.prev_lam[o, 2], S.prev_lam[o, 3]
                    S.lam[r + 1] = a0 * f0 + a1 * f1 + a2 * f2
                    S.lam[r + 2] = b0 * f0 + b1 * f1 + b2 * f2
                break
        r += 3 if contact else 1


@njit(**KERNEL, inline=INLINE)
def _keep(S, nb, nr, c0, h):
    """The unilateral rows' impulses for the next step's warm start (a contact's friction impulse as a vector in
    ground coordinates), and the contacts' forces (impulse / h) in their records."""
    o = 0
    r = nb
    while r < nr:
        S.prev_key[o] = S.key[r]
        S.prev_lam[o, 0] = S.lam[r]
        if r >= c0:
            c = (r - c0) // 3
            n0, n1, n2 = S.rec[c, R_NORMAL], S.rec[c, R_NORMAL + 1], S.rec[c, R_NORMAL + 2]
            a0, a1, a2, b0, b1, b2 = tangent_basis(n0, n1, n2)
            f0 = S.lam[r + 1] * a0 + S.lam[r + 2] * b0
            f1 = S.lam[r + 1] * a1 + S.lam[r + 2] * b1
            f2 = S.lam[r + 1] * a2 + S.lam[r + 2] * b2
            S.prev_lam[o, 1], S.prev_lam[o, 2], S.prev_lam[o, 3] = f0, f1, f2
            S.rec[c, R_FN] = S.lam[r] / h
            S.rec[c, R_FT], S.rec[c, R_FT + 1], S.rec[c, R_FT + 2] = f0 / h, f1 / h, f2 / h
            r += 3
        else:
            r += 1
        o += 1
    S.count[N_PREV] = o


@njit(**KERNEL, inline=INLINE)
def _biases(S, v, h, nr):
    """b += each row's bias (module docstring): a bilateral row's position residual over h; a unilateral row's gap
    over h (an overlap, up to SLOP, over ``recovery``, at least h), or Newton's impact target e u⁻ (e = 0: plastic)
    for a row that approaches faster than the restitution velocity at the step's start and closes its gap within the
    step; none for a compliant row (its gap enters its force law)."""
    recovery = max(h, S.settings[S_RECOVERY])
    rest = S.settings[S_REST]
    nv = v.shape[0]
    for r in range(nr):
        kind = S.kind[r]
        if kind == FRICTION or kind == COMPLIANT:
            continue
        phi = S.gap[r]
        if kind != UNILATERAL:
            S.b[r] += phi / h
            continue
        if phi + h * S.b[r] <= 0.0:
            u0 = 0.0
            for k in range(nv):
                u0 += S.J[r, k] * v[k]
            if u0 < -rest:
                S.b[r] += S.e[r] * u0
                continue
        S.b[r] += phi / h if phi >= 0.0 else max(phi, -SLOP) / recovery


@njit(**KERNEL)
def deepest_overlap(p, G, q):
    """The most negative signed distance of the contacts at q (0 when none overlaps) and its pair (−1 for none):
    whether a run starts with bodies inside each other (``result.info["initial_overlap"]``)."""
    kinematics_kernel(p.mi, p.mf, q, p.tau_buffer, p.tau_buffer, p.work, 0)
    wb, _ = workspace_views(p.work, p.mi.shape[0], p.tau_buffer.shape[0])
    world_poses(G.gi, G.gf, wb, G.gw)
    m = detect(G.gi, G.gf, G.verts, G.pairs, G.gw, 0.0, G.rows, G.ws)
    depth, pair = 0.0, -1
    for c in range(m):
        if G.rows[c, C_DIST] < depth:
            depth, pair = G.rows[c, C_DIST], int(G.rows[c, C_PAIR])
    return depth, pair


@njit(**KERNEL, forceinline=True)
def _delassus(S, nr):
    """W = YᵀY (column r of Y: L⁻ᵀ J_rᵀ, M = LᵀL) of the first nr rows: each entry the dot product of two columns
    over the coordinates before the nearer of their reaches (``S.reach``: beyond it one of them is 0; the rows of
    the contacts of two legs meet on the base's coordinates only), summed in the order of the coordinates, four
    entries of a row at a time (four sums that do not wait for each other)."""
    W, Y, reach = S.W, S.Y, S.reach
    for r in range(nr):
        c = 0
        while c + 3 <= r:
            top = min(reach[r], max(max(reach[c], reach[c + 1]), max(reach[c + 2], reach[c + 3])))
            s0 = s1 = s2 = s3 = 0.0
            for k in range(top):
                y = Y[k]
                a = y[r]
                s0 += a * y[c]
                s1 += a * y[c + 1]
                s2 += a * y[c + 2]
                s3 += a * y[c + 3]
            W[r, c], W[r, c + 1], W[r, c + 2], W[r, c + 3] = s0, s1, s2, s3
            W[c, r], W[c + 1, r], W[c + 2, r], W[c + 3, r] = s0, s1, s2, s3
            c += 4
        while c <= r:
            s0 = 0.0
            for k in range(min(reach[r], reach[c])):
                s0 += Y[k, r] * Y[k, c]
            W[r, c] = s0
            W[c, r] = s0
            c += 1


@njit(**KERNEL, forceinline=True)
def _impulse_velocity(S, nr, nv, out):
    """``out`` ← M⁻¹ Jᵀ λ of the first nr rows = L⁻¹ (Y λ) (M = LᵀL, Y = L⁻ᵀ Jᵀ): the velocity the impulses give."""
    for k in range(nv):
        s = 0.0
        for r in range(nr):
            s += S.Y[k, r] * S.lam[r]
        out[k] = s
    ltl_solve(S.L, S.path, S.inv, out)


@njit(**KERNEL, inline=INLINE)
def _push(S, nb, nr, nv, h, out):
    """The velocity that undoes, over ``recovery`` (at least h), the overlaps deeper than SLOP of the unilateral rows
    (module docstring) while every other row keeps its condition (a bilateral row its velocity, a gap not closed
    past its size, no friction): ``out`` ← M⁻¹ Jᵀ μ of the step's rows solved again with those targets. Returns
    whether there was such an overlap (``out`` untouched otherwise)."""
    deep = False
    for r in range(nb, nr):
        if S.kind[r] == UNILATERAL and S.gap[r] < -SLOP:
            deep = True
    if not deep:
        return False
    recovery = max(h, S.settings[S_RECOVERY])
    _delassus(S, nr)
    target = 0.0     # the fastest target speed
    for r in range(nr):
        phi = S.gap[r]
        S.b[r] = 0.0
        S.lam[r] = 0.0
        S.mu[r] = 0.0
        if S.kind[r] == UNILATERAL:
            S.b[r] = phi / h if phi >= 0.0 else min(0.0, phi + SLOP) / recovery
            target = max(target, -S.b[r])
    st = S.rs.stats
    worst, unconverged, most, last, steps = st[ST_WORST], st[ST_UNCONVERGED], st[ST_MOST], st[ST_LAST], st[ST_STEPS]
    solve_rows(S.W, S.b, S.lam, S.kind, S.mu, S.gap, nb, nr, S.settings[S_TOL], int(S.settings[S_ITER]), S.rs)
    # the statistics are the steps' (a push moves positions only, by what its solve reached)
    st[ST_WORST], st[ST_UNCONVERGED], st[ST_MOST], st[ST_LAST], st[ST_STEPS] = worst, unconverged, most, last, steps
    _impulse_velocity(S, nr, nv, out)
    # a trust region for the linearized push: no row faster than the fastest target (module docstring; a row
    # within PUSH_ROUND_OFF of it has the solver's round-off, not a lever's gain)
    fastest = 0.0
    for r in range(nr):
        s = 0.0
        for k in range(nv):
            s += S.J[r, k] * out[k]
        fastest = max(fastest, abs(s))
    if fastest > target * (1.0 + PUSH_ROUND_OFF):
        scale = target / fastest
        for k in range(nv):
            out[k] *= scale
    return True


@njit(**KERNEL, forceinline=True)
def stepping_step(p, G, S, U, loops, t, q, v, h, tau_extra, qn, vn):
    """One time step (module docstring) from (q, v) at t into (qn, vn) with the extra generalized forces
    ``tau_extra`` besides the model's applied forces; ``p`` the tree's parameters (``model.packing.TreeParams``),
    ``G`` the collision set, ``S`` the solver's arrays, ``U`` the unit rows (``rows.unit_rows.UnitRows``),
    ``loops`` the constraint rows' workspace (``rows.constraint_rows.Work``) or None. Returns ``(m, work,
    dissipated)``: the number of contacts (their records in ``S.rec[:m]``: forces are the impulses over h), the
    impulses' work (≤ 0 but for a restitution's rebound) and the energy the model's dampers dissipated over the
    step (≥ 0)."""
    mi, mf, work = p.mi, p.mf, p.work
    nv = v.shape[0]
    n = mi.shape[0]
    tau = p.tau_buffer
    damper = 0.0
    if p.applied:
        _, power = applied_forces_kernel(mi, mf, q, v, p.forces, t, work, p.body_forces, tau)
        damper = h * power
        for k in range(nv):
            tau[k] += tau_extra[k]
    else:
        for k in range(nv):
            tau[k] = tau_extra[k]
    # the free acceleration M⁻¹(τ − C(q, v) − g): the bias by RNEA at q̈ = 0 (its kinematics at q left in the
    # workspace), M by CRBA on them, and its factor M = LᵀL, which the contacts' Delassus matrix needs as well
    for k in range(nv):
        S.acc[k] = 0.0
    bias_and_mass_matrix(mi, mf, q, v, S.acc, S.fext, work, S.acc, S.M)
    factored = ltl_factor(S.M, S.path, S.L, S.inv)
    if factored:
        for k in range(nv):
            S.acc[k] = tau[k] - S.acc[k]
        ltl_solve_transposed(S.L, S.path, S.inv, S.acc)
        ltl_solve(S.L, S.path, S.inv, S.acc)
    else:       # M not positive definite at q (ABA would divide by a zero pivot): no rows; the run stops, non-finite
        for k in range(nv):
            S.acc[k] = math.nan
    for k in range(nv):
        S.vfree[k] = v[k] + h * S.acc[k]
    free_joint_transport(mi, v, h, S.vfree, 1.0)
    wb, wd = workspace_views(work, n, nv)
    settings = S.settings
    S.rs.law[K_H] = h
    m = 0
    if G.gi.shape[0] > 0:
        world_poses(G.gi, G.gf, wb, G.gw)
        margin = settings[S_MARGIN] + swept_distance(mi, wb, wd, G.gi, G.gf, G.gw, S.vfree, h)
        m = detect(G.gi, G.gf, G.verts, G.pairs, G.gw, margin, G.rows, G.ws)
    nr = held_rows(U, q, S.vfree, t, h, S.J, S.kind, S.gap, S.key, _python_rows(S, _loops(loops, q, v, S, 0)))
    nb = nr
    nr = stop_rows(U, q, v, S.vfree, t, h, settings[S_MARGIN], S.J, S.kind, S.gap, S.e, S.key, nr)
    c0 = nr
    nr = _contacts(mi, wd, G, S, m, nr, COMPLIANT if S.rs.law[K_STIFF] > 0.0 else UNILATERAL)
    impulse_work = 0.0
    if nr > 0 and factored:
        for r in range(nr):     # Y = Jᵀ, b = J v_f, each row's reach (its last nonzero coordinate + 1)
            row = S.J[r]
            s = 0.0
            for k in range(nv):
                x = row[k]
                S.Y[k, r] = x
                s += x * S.vfree[k]
            S.b[r] = s
            top = nv
            while top > 0 and row[top - 1] == 0.0:
                top -= 1
            S.reach[r] = top
        ltl_solve_transposed_columns(S.L, S.path, S.inv, S.Y, nr)
        _delassus(S, nr)
        _biases(S, v, h, nr)
        _warm_start(S, nb, nr, c0)
        unconverged = S.rs.stats[ST_UNCONVERGED]
        sweeps, rank, _ = solve_rows(S.W, S.b, S.lam, S.kind, S.mu, S.gap, nb, nr, settings[S_TOL],
                                     int(settings[S_ITER]), S.rs)
        if S.rs.stats[ST_UNCONVERGED] == 1.0 and unconverged == 0.0:
            S.rs.stats[ST_FIRST] = t
        S.count[N_SWEEPS] = sweeps
        S.count[N_RANK] = rank
        _impulse_velocity(S, nr, nv, vn)     # v⁺ = v_f + M⁻¹Jᵀλ, v_f added below
        for k in range(nv):   # the impulses' work λ·(u + u⁺)/2 = (Jᵀλ)·(v + v⁺)/2, added to v⁺ below
            s = 0.0
            for r in range(nr):
                s += S.J[r, k] * S.lam[r]
            impulse_work += 0.5 * s * (v[k] + vn[k] + S.vfree[k])
        _keep(S, nb, nr, c0, h)
    else:
        S.count[N_PREV] = 0
        for k in range(nv):
            vn[k] = 0.0
    for k in range(nv):
        vn[k] += S.vfree[k]
    S.count[N_CONTACTS] = m
    S.count[N_ROWS] = nr
    S.count[N_FIRST_CONTACT] = c0
    # a deep overlap: the positions move by h (v⁺ + push)
    if nr > 0 and factored and _push(S, nb, nr, nv, h, S.acc):
        for k in range(nv):
            S.acc[k] += vn[k]
        integrate_step(mi, q, S.acc, h, qn)
    else:
        integrate_step(mi, q, vn, h, qn)
    free_joint_transport(mi, vn, h, vn, -1.0)
    return m, impulse_work, damper
