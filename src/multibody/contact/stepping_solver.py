"""One step of the velocity-level time-stepping contact model, compiled: impulses in exact Coulomb cones.

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

u = J v⁺ the contact velocities at t + h. With the free velocity ``v_f = v + h M⁻¹(τ − C)`` (ABA) and the
Delassus matrix ``W = J M⁻¹ Jᵀ`` (from M = L Lᵀ, CRBA and Cholesky: ``Y = L⁻¹ Jᵀ``, ``W = YᵀY``), u = J v_f + W λ,
and the conditions are solved by projected Gauss–Seidel on W, contact by contact: the normal impulse
``λ_n ← max(0, λ_n − w_n / W_nn)`` (w the left-hand side of the gap condition), then the tangential impulse
``λ_t ← proj_{|·| ≤ μλ_n}(λ_t − u_t / ρ)`` with ρ the largest eigenvalue of the contact's 2×2 tangential block:
a fixed point of these updates satisfies both conditions exactly (the projection characterizes maximal
dissipation: Alart & Curnier, Comput. Methods Appl. Mech. Eng. 92 (1991) 353–375; Jourdan, Alart & Jean, ibid.
155 (1998) 31–47). Sweeps stop when no impulse changes by more than ``tolerance`` times the largest impulse; the
impulses of the previous step start them (matched by pair and feature: a box's corner, a capsule's end).

Overlaps (a body started inside another, or the round-off of a resting contact) are undone gradually: for φ < 0
the condition is ``u_n ≥ −φ / max(h, recovery)``, so a body that starts 1 cm deep rises at 1 m/s (recovery 10 ms),
not at φ/h. Contacts enter before they touch: every pair within ``margin`` plus the distance two shapes can close
in the step (``detection.swept_distance``: their points' speeds at the start and at the free velocity of the step,
times h) takes part, with ``λ_n = 0`` unless the step would close its gap, so a falling body lands
on the surface (φ⁺ = 0) instead of sinking in. The step dissipates energy: the impulses' work
``λ·(u⁻ + u)/2`` (u⁻ = J v, the contact velocities before the step) is never positive (inelastic in the normal, maximal dissipation in the
tangent); it is returned so that the run can report the energy dissipated. (With the velocity before the step,
not the free velocity, in the average: at rest on a floor the impulse only cancels the step's gravity, and does
no work.)
"""
import math
from collections import namedtuple

from numba import njit

from multibody.kernels.aba import aba_kernel
from multibody.contact.detection import (C_DIST, C_FEAT, C_MU, C_N, C_PA, C_PAIR, C_PB, detect, swept_distance,
                                        unit_perpendicular)
from multibody.kernels.configuration import integrate_kernel
from multibody.kernels.crba import crba_kernel
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.kinematics import D_S, FREE, IQ, IV, JTYPE, NV, PARENT, workspace_views
from multibody.kernels.kkt import backward_sub_T, cholesky_lower, forward_sub
from multibody.contact.shapes import GI_BODY, world_poses
from multibody.kernels.spatial import KERNEL, cross3, helper, mat3_vec, quat_to_rotation

#: the model's applied forces (``kernels/forces.py``): ``applied`` (1 when any), the joint and point spring-damper
#: arrays, the per-body force accumulator ``fb`` and the generalized-force buffer ``tau``
AppliedForces = namedtuple("AppliedForces", "applied k c rest effort sbody spoint sk sc sl0 fb tau")
#: the collision set and its buffers: packed geometry (``contact/shapes.py``), pairs, world poses, contact rows,
#: the GJK/EPA workspace
Geometry = namedtuple("Geometry", "gi gf verts pairs gw rows ws")
#: the solver's arrays: mass matrix and factor, contact rows J, Y = L⁻¹Jᵀ (stored as rows), Delassus W, impulses,
#: right-hand side b, free velocity and acceleration, the warm-start keys and impulses of the last step, the
#: output record of each contact, ``settings`` = (margin, tolerance, iterations, recovery) and ``count`` (last
#: step's contacts, sweeps)
Solver = namedtuple("Solver", "M L J Y W lam b vfree acc fext key prev_key prev_lam rec settings count")
#: columns of a contact record: pair, point (3), normal (3), normal force, friction force (3), signed distance,
#: feature
R_PAIR, R_POINT, R_NORMAL, R_FN, R_FT, R_DIST, R_FEAT = 0, 1, 4, 7, 8, 11, 12
R_WIDTH = 13
#: settings
S_MARGIN, S_TOL, S_ITER, S_RECOVERY = 0, 1, 2, 3
#: warm-start key: pair * KEY_STRIDE + feature
KEY_STRIDE = 1 << 32


@helper
def tangent_basis(n0, n1, n2):
    """Two unit tangents t1, t2 with (n, t1, t2) right-handed (t1 ⊥ the axis n is least aligned with)."""
    a0, a1, a2 = unit_perpendicular(n0, n1, n2)
    b0, b1, b2 = cross3(n0, n1, n2, a0, a1, a2)
    return a0, a1, a2, b0, b1, b2


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


@njit(**KERNEL)
def integrate_step(mi, q, v, h, out):
    """out = q advanced by h with the velocity v: q ⊕ h v (``configuration.integrate_kernel``), except that a Free
    joint's origin moves along a straight line, by h R v_lin (its velocity at the start of the step in ground
    coordinates), not along the screw of a constant body twist: the step then moves every point as the contact
    rows J, the velocities of the points at the start of the step, say (a rolling ball keeps its height)."""
    integrate_kernel(mi, q, v, h, out)
    for i in range(1, mi.shape[0]):
        if mi[i, JTYPE] == FREE:
            iq = mi[i, IQ]
            iv = mi[i, IV]
            a0, a1, a2, a3 = q[iq + 3], q[iq + 4], q[iq + 5], q[iq + 6]
            s = 1.0 / math.sqrt(a0 * a0 + a1 * a1 + a2 * a2 + a3 * a3)
            R = quat_to_rotation(a0 * s, a1 * s, a2 * s, a3 * s)
            x0, x1, x2 = mat3_vec(R, v[iv + 3], v[iv + 4], v[iv + 5])
            out[iq] = q[iq] + h * x0
            out[iq + 1] = q[iq + 1] + h * x1
            out[iq + 2] = q[iq + 2] + h * x2


@njit(**KERNEL)
def add_point_row(mi, wd, body, sign, x0, x1, x2, e0, e1, e2, row):
    """row += sign · (the velocity of the point x of ``body`` along e per unit velocity coordinate): for every
    coordinate k of the joints from the body to the root, e·(s_v + s_ω × x) = e·s_v + s_ω·(x × e) with S's
    ground-frame columns in ``wd`` (``kinematics``)."""
    c0, c1, c2 = cross3(x0, x1, x2, e0, e1, e2)
    j = body
    while j > 0:
        for k in range(mi[j, IV], mi[j, IV] + mi[j, NV]):
            row[k] += sign * (wd[k, D_S] * c0 + wd[k, D_S + 1] * c1 + wd[k, D_S + 2] * c2
                              + wd[k, D_S + 3] * e0 + wd[k, D_S + 4] * e1 + wd[k, D_S + 5] * e2)
        j = mi[j, PARENT]


@njit(**KERNEL)
def _rows(mi, wd, G, S, m):
    """The rows J (3 per contact: n, t1, t2 at the contact point) of the m contacts, and their records."""
    nv = S.J.shape[1]
    for c in range(m):
        x0 = 0.5 * (G.rows[c, C_PA] + G.rows[c, C_PB])
        x1 = 0.5 * (G.rows[c, C_PA + 1] + G.rows[c, C_PB + 1])
        x2 = 0.5 * (G.rows[c, C_PA + 2] + G.rows[c, C_PB + 2])
        n0, n1, n2 = G.rows[c, C_N], G.rows[c, C_N + 1], G.rows[c, C_N + 2]
        a0, a1, a2, b0, b1, b2 = tangent_basis(n0, n1, n2)
        p = int(G.rows[c, C_PAIR])
        body_a = G.gi[G.pairs[p, 0], GI_BODY]
        body_b = G.gi[G.pairs[p, 1], GI_BODY]
        for d in range(3):
            r = 3 * c + d
            for k in range(nv):
                S.J[r, k] = 0.0
            e0, e1, e2 = (n0, n1, n2) if d == 0 else (a0, a1, a2) if d == 1 else (b0, b1, b2)
            add_point_row(mi, wd, body_b, 1.0, x0, x1, x2, e0, e1, e2, S.J[r])
            add_point_row(mi, wd, body_a, -1.0, x0, x1, x2, e0, e1, e2, S.J[r])
        rec = S.rec[c]
        rec[R_PAIR] = p
        rec[R_POINT], rec[R_POINT + 1], rec[R_POINT + 2] = x0, x1, x2
        rec[R_NORMAL], rec[R_NORMAL + 1], rec[R_NORMAL + 2] = n0, n1, n2
        rec[R_DIST] = G.rows[c, C_DIST]
        rec[R_FEAT] = G.rows[c, C_FEAT]
        S.key[c] = p * KEY_STRIDE + int(G.rows[c, C_FEAT])


@njit(**KERNEL)
def _warm_start(S, m):
    """λ of each contact from the last step's contact with the same key (its friction impulse re-expressed in
    the new tangents), zero for new contacts."""
    for c in range(m):
        r = 3 * c
        S.lam[r] = S.lam[r + 1] = S.lam[r + 2] = 0.0
        for o in range(int(S.count[0])):
            if S.prev_key[o] == S.key[c]:
                n0, n1, n2 = S.rec[c, R_NORMAL], S.rec[c, R_NORMAL + 1], S.rec[c, R_NORMAL + 2]
                a0, a1, a2, b0, b1, b2 = tangent_basis(n0, n1, n2)
                f0, f1, f2 = S.prev_lam[o, 1], S.prev_lam[o, 2], S.prev_lam[o, 3]
                S.lam[r] = S.prev_lam[o, 0]
                S.lam[r + 1] = a0 * f0 + a1 * f1 + a2 * f2
                S.lam[r + 2] = b0 * f0 + b1 * f1 + b2 * f2
                break


@njit(**KERNEL)
def _row_value(W, lam, b, r, n):
    s = b[r]
    for j in range(n):
        s += W[r, j] * lam[j]
    return s


@njit(**KERNEL)
def projected_gauss_seidel(W, b, lam, mu, m, tol, iterations):
    """Solve the contact conditions of the module docstring for the m contacts (rows 3c: normal, 3c+1, 3c+2:
    tangents; ``b`` = J v_f plus φ/h on the normal rows; ``mu`` the friction coefficient per contact, a strided
    column) by projected Gauss–Seidel from the impulses in ``lam``. Returns the number of sweeps made."""
    n = 3 * m
    for it in range(iterations):
        change = 0.0
        top = 0.0
        for c in range(m):
            r = 3 * c
            wn = _row_value(W, lam, b, r, n)
            old = lam[r]
            if W[r, r] > 0.0:
                lam[r] = max(0.0, old - wn / W[r, r])
            change = max(change, abs(lam[r] - old))
            a, bb, d = W[r + 1, r + 1], W[r + 1, r + 2], W[r + 2, r + 2]
            rho = 0.5 * (a + d) + math.sqrt(0.25 * (a - d) * (a - d) + bb * bb)
            w1 = _row_value(W, lam, b, r + 1, n)
            w2 = _row_value(W, lam, b, r + 2, n)
            o1, o2 = lam[r + 1], lam[r + 2]
            x1, x2 = (o1 - w1 / rho, o2 - w2 / rho) if rho > 0.0 else (o1, o2)
            lim = mu[c] * lam[r]
            norm = math.sqrt(x1 * x1 + x2 * x2)
            if norm > lim:
                s = lim / norm
                x1 *= s
                x2 *= s
            lam[r + 1], lam[r + 2] = x1, x2
            change = max(change, abs(x1 - o1), abs(x2 - o2))
            top = max(top, lam[r], abs(x1), abs(x2))
        if change <= tol * top or top == 0.0:
            return it + 1
    return iterations


@njit(**KERNEL)
def stepping_step(mi, mf, work, G, F, S, q, v, h, tau_extra, qn, vn):
    """One time step (module docstring) from (q, v) into (qn, vn) with the extra generalized forces
    ``tau_extra`` besides the model's applied forces. Returns ``(m, work, dissipated)``: the number of contacts
    (their records in ``S.rec[:m]``: forces are the impulses over h), the impulses' work (≤ 0) and the energy
    the model's dampers dissipated over the step (≥ 0)."""
    nv = v.shape[0]
    n = mi.shape[0]
    tau = F.tau
    damper = 0.0
    if F.applied:
        _, power = applied_forces_kernel(mi, mf, q, v, F.k, F.c, F.rest, F.effort, F.sbody, F.spoint, F.sk, F.sc,
                                         F.sl0, work, F.fb, tau)
        damper = h * power
        for k in range(nv):
            tau[k] += tau_extra[k]
    else:
        for k in range(nv):
            tau[k] = tau_extra[k]
    aba_kernel(mi, mf, q, v, tau, S.fext, work, S.acc)
    for k in range(nv):
        S.vfree[k] = v[k] + h * S.acc[k]
    free_joint_transport(mi, v, h, S.vfree, 1.0)
    wb, wd = workspace_views(work, n, nv)
    world_poses(G.gi, G.gf, wb, G.gw)
    margin = S.settings[S_MARGIN] + swept_distance(mi, wd, G.gi, G.gf, G.gw, v, S.vfree, h)
    m = detect(G.gi, G.gf, G.verts, G.pairs, G.gw, margin, G.rows, G.ws)
    impulse_work = 0.0
    if m > 0:
        _rows(mi, wd, G, S, m)
        crba_kernel(mi, mf, q, work, S.M)
        cholesky_lower(S.M, nv, S.L)
        nr = 3 * m
        for r in range(nr):
            for k in range(nv):
                S.Y[r, k] = S.J[r, k]
            forward_sub(S.L, nv, S.Y[r])
            s = 0.0
            for k in range(nv):
                s += S.J[r, k] * S.vfree[k]
            S.b[r] = s
        for r in range(nr):
            for j in range(r + 1):
                s = 0.0
                for k in range(nv):
                    s += S.Y[r, k] * S.Y[j, k]
                S.W[r, j] = s
                S.W[j, r] = s
        for c in range(m):   # the gap condition; an overlap is undone in the time ``recovery`` (at least h)
            phi = S.rec[c, R_DIST]
            S.b[3 * c] += phi / h if phi >= 0.0 else phi / max(h, S.settings[S_RECOVERY])
        _warm_start(S, m)
        sweeps = projected_gauss_seidel(S.W, S.b, S.lam, G.rows[:, C_MU], m, S.settings[S_TOL],
                                        int(S.settings[S_ITER]))
        S.count[1] = sweeps
        for k in range(nv):   # v⁺ = v_f + M⁻¹Jᵀλ = v_f + L⁻ᵀ (Y λ)
            s = 0.0
            for r in range(nr):
                s += S.Y[r, k] * S.lam[r]
            vn[k] = s
        backward_sub_T(S.L, nv, vn)
        for k in range(nv):   # the impulses' work λ·(u + u⁺)/2 = (Jᵀλ)·(v + v⁺)/2, added to v⁺ below
            s = 0.0
            for r in range(nr):
                s += S.J[r, k] * S.lam[r]
            impulse_work += 0.5 * s * (v[k] + vn[k] + S.vfree[k])
        for c in range(m):
            r = 3 * c
            n0, n1, n2 = S.rec[c, R_NORMAL], S.rec[c, R_NORMAL + 1], S.rec[c, R_NORMAL + 2]
            a0, a1, a2, b0, b1, b2 = tangent_basis(n0, n1, n2)
            f0 = S.lam[r + 1] * a0 + S.lam[r + 2] * b0
            f1 = S.lam[r + 1] * a1 + S.lam[r + 2] * b1
            f2 = S.lam[r + 1] * a2 + S.lam[r + 2] * b2
            S.prev_key[c] = S.key[c]
            S.prev_lam[c, 0], S.prev_lam[c, 1], S.prev_lam[c, 2], S.prev_lam[c, 3] = S.lam[r], f0, f1, f2
            S.rec[c, R_FN] = S.lam[r] / h
            S.rec[c, R_FT], S.rec[c, R_FT + 1], S.rec[c, R_FT + 2] = f0 / h, f1 / h, f2 / h
    else:
        for k in range(nv):
            vn[k] = 0.0
    for k in range(nv):
        vn[k] += S.vfree[k]
    S.count[0] = m
    integrate_step(mi, q, vn, h, qn)
    free_joint_transport(mi, vn, h, vn, -1.0)
    return m, impulse_work, damper
