"""Constraint rows of a Model in compiled code: residuals, Jacobian rows and acceleration-level terms.

Every row is written on the bodies' motion (seed 001 §2.1–2.4: a constraint's time derivative is linear in
the bodies' velocities, its second derivative linear in their accelerations): for row r,

    ġ_r = Σ_b c_rb · V_b,        d/dt(Σ_b c_rb · V_b) = Σ_b c_rb · A_b + κ_r,

with V_b = [ω; v_O] the spatial velocity of body b and A_b its spatial acceleration, both in ground Plücker
coordinates (``kinematics.py``), and c_rb a 6-covector. :func:`constraint_rows_kernel` evaluates, from the
workspace of a kinematics pass at v̇ = 0 (``kinematics_kernel(..., qdd = 0, level = 2)``: placements,
velocities and bias accelerations), for every row: the residual (position rows: f; velocity rows: the
velocity residual g = Σ c·V), up to two (body, covector) pairs, and ``γ_r = −(Σ c·A_bias + κ_r)``, so that the
acceleration-level equation of the row is ``Σ c·A = γ``. The formulations map the covectors to their
coordinates: on a tree, :func:`rows_jacobian` gives ``G`` with ``G v̇ = γ`` (the columns of the joints on each
body's path, seed 001 eqs. 3.101, 3.104); in Cartesian coordinates each covector is one block of ``Q``.

The elements (codes in ``multibody.model.constraints``) and their rows:

* ``E_POINT`` (3): o_b − o_a = 0 along the ground axes (a point of a on a point of b);
* ``E_ALIGN`` (1): x·y = c with x = R_a n, y = R_b u (an axis of a keeps its angle with an axis of b);
* ``E_LOCK`` (1): vee(AᵀB)_k = 0 (relative rotation locked about axis k of the frame A);
* ``E_OFFSET`` (1): (o_b − o_a)·x = 0, x = R_a n (a point of b on a plane of a; seed 001 eq. 2.22);
* ``E_POINT_PROFILE`` (1): h(x_P, z_P) = 0 (a point on a plane curve);
* ``E_DISC_PROFILE`` (2 + 1 auxiliary): contact h(x_a, z_a) = 0 and no slip χ·v_C + r ω_n = 0 of a disc
  rolling on a plane curve, the contact angle α solving the tangency f4 = 0 (seed 000, eqs. 3.2–3.5, 3.7–3.10);
* ``E_DISC_PLANE`` (3): contact height (P − O)·n = 0 and the tangential velocities t_k·v_P = 0 of the
  material contact point of a knife-edge disc rolling on a plane.

Auxiliary variables (``mode``): with ``mode = 0`` the contact angle of a disc on a curve is solved from the
tangency at every evaluation (Newton from the value in ``s``, which is updated) and its rate ``U = α̇`` is
substituted; with ``mode = 1`` (seed 000's extra state, eq. 3.6) α is taken from ``s``, the terms of U are
returned apart (``ucoef``: the coefficient of U in each row's highest derivative; the one term that vanishes
on the constraint manifold and would lower the relative degree of the contact row, r U (∇h, χ) in ḟ1, is
dropped as in seed 000 §3), and the tangency row follows the compiled rows:
residual f4, covector, and ``auxd`` the coefficient d of U in ḟ4 (eq. 3.10).
"""
import math

import numpy as np
from numba import njit

from multibody.kernels.kinematics import B_A, B_P, B_V, IV, NV, PARENT, workspace_views
from multibody.kernels.spatial import KERNEL, cross3, helper, load9, mat3_vec


E_POINT, E_ALIGN, E_LOCK, E_OFFSET, E_POINT_PROFILE, E_DISC_PROFILE, E_DISC_PLANE = range(7)
C_CODE, C_A, C_B, C_ROW, C_NROWS, C_AUX, C_NAUX, C_PAR = range(8)


@helper
def dot3(a0, a1, a2, b0, b1, b2):
    return a0 * b0 + a1 * b1 + a2 * b2


@helper
def point_motion(wb, b, r0, r1, r2):
    """Position P, velocity v_P and bias acceleration a_P (at v̇ = 0) of the material point r (body
    coordinates) of body b, ground coordinates: v_P = v_O + ω × P, a_P = a_O + ω̇ × P + ω × v_P."""
    R = load9(wb, b)
    d0, d1, d2 = mat3_vec(R, r0, r1, r2)
    P = (wb[b, B_P] + d0, wb[b, B_P + 1] + d1, wb[b, B_P + 2] + d2)
    w = (wb[b, B_V], wb[b, B_V + 1], wb[b, B_V + 2])
    x = cross3(w[0], w[1], w[2], P[0], P[1], P[2])
    vP = (wb[b, B_V + 3] + x[0], wb[b, B_V + 4] + x[1], wb[b, B_V + 5] + x[2])
    al = (wb[b, B_A], wb[b, B_A + 1], wb[b, B_A + 2])
    y = cross3(al[0], al[1], al[2], P[0], P[1], P[2])
    z = cross3(w[0], w[1], w[2], vP[0], vP[1], vP[2])
    aP = (wb[b, B_A + 3] + y[0] + z[0], wb[b, B_A + 4] + y[1] + z[1], wb[b, B_A + 5] + y[2] + z[2])
    return P, vP, aP


@helper
def body_rates(wb, b):
    """ω and the bias angular acceleration ω̇ of body b (ground coordinates)."""
    return (wb[b, B_V], wb[b, B_V + 1], wb[b, B_V + 2]), (wb[b, B_A], wb[b, B_A + 1], wb[b, B_A + 2])


@helper
def set_point_covector(cb, cv, r, slot, body, sign, P, n):
    """Row r, slot ``slot``: the covector of ``sign · n·v_P`` for the point P of ``body``: [P × n; n]."""
    x = cross3(P[0], P[1], P[2], n[0], n[1], n[2])
    cb[r, slot] = body
    cv[r, slot, 0] = sign * x[0]
    cv[r, slot, 1] = sign * x[1]
    cv[r, slot, 2] = sign * x[2]
    cv[r, slot, 3] = sign * n[0]
    cv[r, slot, 4] = sign * n[1]
    cv[r, slot, 5] = sign * n[2]


@helper
def set_angular_covector(cb, cv, r, slot, body, m):
    """Row r, slot ``slot``: the covector of ``m·ω`` of ``body``: [m; 0]."""
    cb[r, slot] = body
    cv[r, slot, 0] = m[0]
    cv[r, slot, 1] = m[1]
    cv[r, slot, 2] = m[2]
    cv[r, slot, 3] = 0.0
    cv[r, slot, 4] = 0.0
    cv[r, slot, 5] = 0.0


@helper
def covector_times_velocity(wb, cb, cv, r):
    """Σ_slots c · V_b of row r: the row's velocity residual."""
    out = 0.0
    for slot in range(2):
        b = cb[r, slot]
        if b > 0:
            for k in range(6):
                out += cv[r, slot, k] * wb[b, B_V + k]
    return out


@njit(**KERNEL)
def profile_eval(pi, pt, k, x, z):
    """(h, h_x, h_z, h_xx, h_xz, h_zz) of the polynomial profile k at (x, z) (``multibody.model.Profile``)."""
    h = hx = hz = hxx = hxz = hzz = 0.0
    for t in range(pi[k, 0], pi[k, 0] + pi[k, 1]):
        i = int(pt[t, 0])
        j = int(pt[t, 1])
        c = pt[t, 2]
        xi = x ** i
        zj = z ** j
        h += c * xi * zj
        if i > 0:
            hx += c * i * x ** (i - 1) * zj
            if i > 1:
                hxx += c * i * (i - 1) * x ** (i - 2) * zj
            if j > 0:
                hxz += c * i * j * x ** (i - 1) * z ** (j - 1)
        if j > 0:
            hz += c * j * xi * z ** (j - 1)
            if j > 1:
                hzz += c * j * (j - 1) * xi * z ** (j - 2)
    return h, hx, hz, hxx, hxz, hzz


@njit(**KERNEL)
def _rows_point(wb, cf, o, a, b, r, f, cb, cv, gam):
    """E_POINT: o_b − o_a = 0 along the ground axes (three rows)."""
    oa, va, aa = point_motion(wb, a, cf[o], cf[o + 1], cf[o + 2])
    ob, vb, ab = point_motion(wb, b, cf[o + 3], cf[o + 4], cf[o + 5])
    for k in range(3):
        e = (1.0 if k == 0 else 0.0, 1.0 if k == 1 else 0.0, 1.0 if k == 2 else 0.0)
        f[r + k] = ob[k] - oa[k]
        set_point_covector(cb, cv, r + k, 0, b, 1.0, ob, e)
        set_point_covector(cb, cv, r + k, 1, a, -1.0, oa, e)
        gam[r + k] = -(ab[k] - aa[k])


@njit(**KERNEL)
def _rows_align(wb, cf, o, a, b, r, f, cb, cv, gam):
    """E_ALIGN: x·y − c = 0, x = R_a n, y = R_b u; ḟ = ω_a·(x × y) + ω_b·(y × x)."""
    x = mat3_vec(load9(wb, a), cf[o], cf[o + 1], cf[o + 2])
    y = mat3_vec(load9(wb, b), cf[o + 3], cf[o + 4], cf[o + 5])
    wa, ala = body_rates(wb, a)
    wbb, alb = body_rates(wb, b)
    f[r] = dot3(x[0], x[1], x[2], y[0], y[1], y[2]) - cf[o + 6]
    xy = cross3(x[0], x[1], x[2], y[0], y[1], y[2])
    set_angular_covector(cb, cv, r, 0, b, (-xy[0], -xy[1], -xy[2]))
    set_angular_covector(cb, cv, r, 1, a, xy)
    xd = cross3(wa[0], wa[1], wa[2], x[0], x[1], x[2])
    yd = cross3(wbb[0], wbb[1], wbb[2], y[0], y[1], y[2])
    p = cross3(ala[0], ala[1], ala[2], x[0], x[1], x[2])
    s = cross3(wa[0], wa[1], wa[2], xd[0], xd[1], xd[2])
    xdd = (p[0] + s[0], p[1] + s[1], p[2] + s[2])
    p = cross3(alb[0], alb[1], alb[2], y[0], y[1], y[2])
    s = cross3(wbb[0], wbb[1], wbb[2], yd[0], yd[1], yd[2])
    ydd = (p[0] + s[0], p[1] + s[1], p[2] + s[2])
    gam[r] = -(dot3(xdd[0], xdd[1], xdd[2], y[0], y[1], y[2]) + 2.0 * dot3(xd[0], xd[1], xd[2], yd[0], yd[1], yd[2])
               + dot3(x[0], x[1], x[2], ydd[0], ydd[1], ydd[2]))


@njit(**KERNEL)
def _rows_lock(wb, cf, o, a, b, r, f, cb, cv, gam):
    """E_LOCK: vee(AᵀB)_k = 0 with A = R_a A0, B = R_b B0; the row is A_k·(ω_b − ω_a) (exact on the manifold)."""
    Ra = load9(wb, a)
    Rb = load9(wb, b)
    k = int(cf[o + 18])
    # columns of A and B in ground coordinates
    A = (mat3_vec(Ra, cf[o], cf[o + 3], cf[o + 6]), mat3_vec(Ra, cf[o + 1], cf[o + 4], cf[o + 7]),
         mat3_vec(Ra, cf[o + 2], cf[o + 5], cf[o + 8]))
    B = (mat3_vec(Rb, cf[o + 9], cf[o + 12], cf[o + 15]), mat3_vec(Rb, cf[o + 10], cf[o + 13], cf[o + 16]),
         mat3_vec(Rb, cf[o + 11], cf[o + 14], cf[o + 17]))
    # vee(M), M_ij = A_i·B_j: ½(M21 − M12, M02 − M20, M10 − M01)
    i1 = (k + 1) % 3
    i2 = (k + 2) % 3
    f[r] = 0.5 * (dot3(A[i2][0], A[i2][1], A[i2][2], B[i1][0], B[i1][1], B[i1][2])
                  - dot3(A[i1][0], A[i1][1], A[i1][2], B[i2][0], B[i2][1], B[i2][2]))
    Ak = A[k]
    set_angular_covector(cb, cv, r, 0, b, Ak)
    set_angular_covector(cb, cv, r, 1, a, (-Ak[0], -Ak[1], -Ak[2]))
    wa, ala = body_rates(wb, a)
    wbb, alb = body_rates(wb, b)
    x = cross3(wa[0], wa[1], wa[2], wbb[0] - wa[0], wbb[1] - wa[1], wbb[2] - wa[2])
    gam[r] = -(dot3(Ak[0], Ak[1], Ak[2], alb[0] - ala[0], alb[1] - ala[1], alb[2] - ala[2])
               - dot3(Ak[0], Ak[1], Ak[2], x[0], x[1], x[2]))


@njit(**KERNEL)
def _rows_offset(wb, cf, o, a, b, r, f, cb, cv, gam):
    """E_OFFSET: (o_b − o_a)·x = 0, x = R_a n; ḟ = x·(v_b − v_a) + ω_a·(x × d)."""
    oa, va, aa = point_motion(wb, a, cf[o], cf[o + 1], cf[o + 2])
    ob, vb, ab = point_motion(wb, b, cf[o + 3], cf[o + 4], cf[o + 5])
    x = mat3_vec(load9(wb, a), cf[o + 6], cf[o + 7], cf[o + 8])
    wa, ala = body_rates(wb, a)
    d = (ob[0] - oa[0], ob[1] - oa[1], ob[2] - oa[2])
    f[r] = dot3(d[0], d[1], d[2], x[0], x[1], x[2])
    set_point_covector(cb, cv, r, 0, b, 1.0, ob, x)
    xd_ = cross3(x[0], x[1], x[2], d[0], d[1], d[2])
    oax = cross3(oa[0], oa[1], oa[2], x[0], x[1], x[2])
    cb[r, 1] = a
    cv[r, 1, 0] = xd_[0] - oax[0]
    cv[r, 1, 1] = xd_[1] - oax[1]
    cv[r, 1, 2] = xd_[2] - oax[2]
    cv[r, 1, 3] = -x[0]
    cv[r, 1, 4] = -x[1]
    cv[r, 1, 5] = -x[2]
    xd = cross3(wa[0], wa[1], wa[2], x[0], x[1], x[2])
    p = cross3(ala[0], ala[1], ala[2], x[0], x[1], x[2])
    s = cross3(wa[0], wa[1], wa[2], xd[0], xd[1], xd[2])
    gam[r] = -(dot3(ab[0] - aa[0], ab[1] - aa[1], ab[2] - aa[2], x[0], x[1], x[2])
               + 2.0 * dot3(vb[0] - va[0], vb[1] - va[1], vb[2] - va[2], xd[0], xd[1], xd[2])
               + dot3(d[0], d[1], d[2], p[0] + s[0], p[1] + s[1], p[2] + s[2]))


@njit(**KERNEL)
def _rows_point_profile(wb, cf, o, b, r, pi, pt, f, cb, cv, gam):
    """E_POINT_PROFILE: h(x_P, z_P) = 0, (x_P, z_P) = ((P − O)·e1, (P − O)·e2)."""
    P, vP, aP = point_motion(wb, b, cf[o], cf[o + 1], cf[o + 2])
    e1 = (cf[o + 6], cf[o + 7], cf[o + 8])
    e2 = (cf[o + 9], cf[o + 10], cf[o + 11])
    X = dot3(P[0] - cf[o + 3], P[1] - cf[o + 4], P[2] - cf[o + 5], e1[0], e1[1], e1[2])
    Z = dot3(P[0] - cf[o + 3], P[1] - cf[o + 4], P[2] - cf[o + 5], e2[0], e2[1], e2[2])
    h, hx, hz, hxx, hxz, hzz = profile_eval(pi, pt, int(cf[o + 12]), X, Z)
    n = (hx * e1[0] + hz * e2[0], hx * e1[1] + hz * e2[1], hx * e1[2] + hz * e2[2])
    f[r] = h
    set_point_covector(cb, cv, r, 0, b, 1.0, P, n)
    cb[r, 1] = 0
    Xd = dot3(vP[0], vP[1], vP[2], e1[0], e1[1], e1[2])
    Zd = dot3(vP[0], vP[1], vP[2], e2[0], e2[1], e2[2])
    gam[r] = -(dot3(n[0], n[1], n[2], aP[0], aP[1], aP[2]) + hxx * Xd * Xd + 2.0 * hxz * Xd * Zd + hzz * Zd * Zd)


@njit(**KERNEL)
def _disc_contact(pi, pt, k, Xc, Zc, rad, al):
    """Contact geometry of a disc of radius rad centred at (Xc, Zc) with contact angle al: the profile terms at
    x_a = Xc + r cos α, z_a = Zc + r sin α and the tangency f4 = h_x sin α − h_z cos α with df4/dα."""
    ca = np.cos(al)
    sa = np.sin(al)
    h, hx, hz, hxx, hxz, hzz = profile_eval(pi, pt, k, Xc + rad * ca, Zc + rad * sa)
    f4 = hx * sa - hz * ca
    # χ = (−sin α, cos α): df4/dα = ∇h·μ − r χᵀHχ (seed 000, eq. 3.10: d)
    chiHchi = sa * sa * hxx - 2.0 * sa * ca * hxz + ca * ca * hzz
    d = hx * ca + hz * sa - rad * chiHchi
    return h, hx, hz, hxx, hxz, hzz, f4, d


@njit(**KERNEL)
def solve_contact_angle(pi, pt, k, Xc, Zc, rad, al0):
    """The contact angle α near ``al0`` with f4(α) = 0 and ∇h pointing from the centre to the contact
    (∇h·μ > 0; seed 000 §3), by Newton's method; NaN when it does not converge."""
    al = al0
    for it in range(50):
        h, hx, hz, hxx, hxz, hzz, f4, d = _disc_contact(pi, pt, k, Xc, Zc, rad, al)
        if (hx * np.cos(al) + hz * np.sin(al)).real < 0.0:  # the other root: ∇h points away from the centre
            al += math.pi
            continue
        if d == 0.0:
            return math.nan
        step = f4 / d
        al -= step
        if abs(step) <= 1e-15 * (1.0 + abs(al)):
            return al
    h, hx, hz, hxx, hxz, hzz, f4, d = _disc_contact(pi, pt, k, Xc, Zc, rad, al)
    return al if abs(f4) <= 1e-12 * (1.0 + abs(np.sqrt(hx * hx + hz * hz))) else math.nan


@njit(**KERNEL)
def _rows_disc_profile(wb, cf, o, b, r, ia, pi, pt, s, mode, maux, f, cb, cv, gam, ucoef, auxd):
    """E_DISC_PROFILE: contact f1 = h(x_a, z_a), no slip f3 = χ·v_C + r ω_n (seed 000, eqs. 3.2, 3.4), α from
    the tangency f4 = 0 (eq. 3.5); rates and accelerations as eqs. 3.7, 3.9, 3.10."""
    C, vC, aC = point_motion(wb, b, cf[o], cf[o + 1], cf[o + 2])
    e1 = (cf[o + 6], cf[o + 7], cf[o + 8])
    e2 = (cf[o + 9], cf[o + 10], cf[o + 11])
    rad = cf[o + 12]
    k = int(cf[o + 13])
    Xc = dot3(C[0] - cf[o + 3], C[1] - cf[o + 4], C[2] - cf[o + 5], e1[0], e1[1], e1[2])
    Zc = dot3(C[0] - cf[o + 3], C[1] - cf[o + 4], C[2] - cf[o + 5], e2[0], e2[1], e2[2])
    vx = dot3(vC[0], vC[1], vC[2], e1[0], e1[1], e1[2])
    vz = dot3(vC[0], vC[1], vC[2], e2[0], e2[1], e2[2])
    npl = cross3(e1[0], e1[1], e1[2], e2[0], e2[1], e2[2])     # the plane normal: ω_n = ω·npl
    w, alb = body_rates(wb, b)
    if mode == 0:
        s[ia] = solve_contact_angle(pi, pt, k, Xc, Zc, rad, s[ia])
    al = s[ia]
    h, hx, hz, hxx, hxz, hzz, f4, d = _disc_contact(pi, pt, k, Xc, Zc, rad, al)
    ca = np.cos(al)
    sa = np.sin(al)
    Hv0 = hxx * vx + hxz * vz
    Hv1 = hxz * vx + hzz * vz
    chiHv = -sa * Hv0 + ca * Hv1                               # (v, H χ)
    vHv = vx * Hv0 + vz * Hv1
    # contact row: ḟ1 = ∇h·v_C (the term r U (∇h, χ) = −r f4 U vanishes on the manifold, seed 000 §3)
    n1 = (hx * e1[0] + hz * e2[0], hx * e1[1] + hz * e2[1], hx * e1[2] + hz * e2[2])
    f[r] = h
    set_point_covector(cb, cv, r, 0, b, 1.0, C, n1)
    cb[r, 1] = 0
    base1 = dot3(n1[0], n1[1], n1[2], aC[0], aC[1], aC[2]) + vHv
    # no-slip row: t = χ in the plane
    t = (-sa * e1[0] + ca * e2[0], -sa * e1[1] + ca * e2[1], -sa * e1[2] + ca * e2[2])
    f[r + 1] = dot3(t[0], t[1], t[2], vC[0], vC[1], vC[2]) + rad * dot3(w[0], w[1], w[2], npl[0], npl[1], npl[2])
    set_point_covector(cb, cv, r + 1, 0, b, 1.0, C, t)
    cv[r + 1, 0, 0] += rad * npl[0]
    cv[r + 1, 0, 1] += rad * npl[1]
    cv[r + 1, 0, 2] += rad * npl[2]
    cb[r + 1, 1] = 0
    base3 = dot3(t[0], t[1], t[2], aC[0], aC[1], aC[2]) + rad * dot3(alb[0], alb[1], alb[2], npl[0], npl[1], npl[2])
    if mode == 0:
        U = chiHv / d                                          # ḟ4 = d U − (v, H χ) = 0 (eq. 3.10)
        gam[r] = -(base1 + rad * U * chiHv)                    # eq. 3.7
        gam[r + 1] = -(base3 - U * (ca * vx + sa * vz))        # χ̇ = −μ U
    else:
        gam[r] = -base1
        gam[r + 1] = -base3
        ucoef[r, ia] = rad * chiHv                             # eq. 3.7
        ucoef[r + 1, ia] = -(ca * vx + sa * vz)                # χ̇ = −μ U (zero on the manifold, eq. 3.9)
        # tangency row (relative degree 1 in U): ḟ4 = −(H χ)·v_C + d U
        ra = maux + ia
        Hchi0 = -sa * hxx + ca * hxz
        Hchi1 = -sa * hxz + ca * hzz
        n4 = (-(Hchi0 * e1[0] + Hchi1 * e2[0]), -(Hchi0 * e1[1] + Hchi1 * e2[1]), -(Hchi0 * e1[2] + Hchi1 * e2[2]))
        f[ra] = f4
        set_point_covector(cb, cv, ra, 0, b, 1.0, C, n4)
        cb[ra, 1] = 0
        gam[ra] = 0.0
        auxd[ia] = d


@njit(**KERNEL)
def _rows_disc_plane(wb, cf, o, b, r, f, cb, cv, gam):
    """E_DISC_PLANE: a knife-edge disc on a plane: the contact point P = C + r ρ̂, ρ̂ = −(n − (a·n) a)/‖·‖;
    rows (P − O)·n (position), t1·v_P, t2·v_P (velocity, v_P of the material point at P)."""
    C, vC, aC = point_motion(wb, b, cf[o], cf[o + 1], cf[o + 2])
    a = mat3_vec(load9(wb, b), cf[o + 3], cf[o + 4], cf[o + 5])
    rad = cf[o + 6]
    O = (cf[o + 7], cf[o + 8], cf[o + 9])
    N = (cf[o + 10], cf[o + 11], cf[o + 12])
    w, al = body_rates(wb, b)
    sn = dot3(a[0], a[1], a[2], N[0], N[1], N[2])
    c2 = 1.0 - sn * sn
    c = np.sqrt(c2) if c2.real > 0.0 else 0.0
    if c.real < 1e-12:                      # the disc lies flat on the plane: no contact point
        c = math.nan
    u = (N[0] - sn * a[0], N[1] - sn * a[1], N[2] - sn * a[2])
    P = (C[0] - rad * u[0] / c, C[1] - rad * u[1] / c, C[2] - rad * u[2] / c)
    # velocity of the material point at P and the rate of the contact point P itself
    x = cross3(w[0], w[1], w[2], P[0], P[1], P[2])
    vP = (wb[b, B_V + 3] + x[0], wb[b, B_V + 4] + x[1], wb[b, B_V + 5] + x[2])
    ad = cross3(w[0], w[1], w[2], a[0], a[1], a[2])
    snd = dot3(ad[0], ad[1], ad[2], N[0], N[1], N[2])
    cd = -sn * snd / c
    ud = (-snd * a[0] - sn * ad[0], -snd * a[1] - sn * ad[1], -snd * a[2] - sn * ad[2])
    Pd = (vC[0] - rad * (ud[0] * c - u[0] * cd) / c2, vC[1] - rad * (ud[1] * c - u[1] * cd) / c2,
          vC[2] - rad * (ud[2] * c - u[2] * cd) / c2)
    # d/dt (v_O + ω × P) at v̇ = 0: a_O + ω̇ × P + ω × Ṗ
    y = cross3(al[0], al[1], al[2], P[0], P[1], P[2])
    z = cross3(w[0], w[1], w[2], Pd[0], Pd[1], Pd[2])
    AP = (wb[b, B_A + 3] + y[0] + z[0], wb[b, B_A + 4] + y[1] + z[1], wb[b, B_A + 5] + y[2] + z[2])
    for k in range(3):
        n = (cf[o + 10 + 3 * k], cf[o + 11 + 3 * k], cf[o + 12 + 3 * k])
        if k == 0:
            f[r] = dot3(P[0] - O[0], P[1] - O[1], P[2] - O[2], n[0], n[1], n[2])
        else:
            f[r + k] = dot3(vP[0], vP[1], vP[2], n[0], n[1], n[2])
        set_point_covector(cb, cv, r + k, 0, b, 1.0, P, n)
        cb[r + k, 1] = 0
        gam[r + k] = -dot3(AP[0], AP[1], AP[2], n[0], n[1], n[2])


@njit(**KERNEL)
def constraint_rows_kernel(work, n, nv, ci, cf, pi, pt, s, mode, f, cb, cv, gam, ucoef, auxd):
    """Rows of every compiled constraint element (see the module docstring) from the workspace of a kinematics
    pass at v̇ = 0. Outputs: ``f`` residuals, ``cb`` (rows, 2) bodies and ``cv`` (rows, 2, 6) covectors,
    ``gam`` the acceleration-level right-hand sides; ``s`` the auxiliary variables (contact angles; updated
    when ``mode = 0``), ``ucoef`` and ``auxd`` their terms (``mode = 1``, auxiliary rows after the
    ``maux = ci[-1] rows`` compiled rows)."""
    wb, wd = workspace_views(work, n, nv)
    ne = ci.shape[0]
    maux = 0
    if ne > 0:
        maux = ci[ne - 1, C_ROW] + ci[ne - 1, C_NROWS]
    for e in range(ne):
        code = ci[e, C_CODE]
        a = ci[e, C_A]
        b = ci[e, C_B]
        r = ci[e, C_ROW]
        o = ci[e, C_PAR]
        if code == E_POINT:
            _rows_point(wb, cf, o, a, b, r, f, cb, cv, gam)
        elif code == E_ALIGN:
            _rows_align(wb, cf, o, a, b, r, f, cb, cv, gam)
        elif code == E_LOCK:
            _rows_lock(wb, cf, o, a, b, r, f, cb, cv, gam)
        elif code == E_OFFSET:
            _rows_offset(wb, cf, o, a, b, r, f, cb, cv, gam)
        elif code == E_POINT_PROFILE:
            _rows_point_profile(wb, cf, o, b, r, pi, pt, f, cb, cv, gam)
        elif code == E_DISC_PROFILE:
            _rows_disc_profile(wb, cf, o, b, r, ci[e, C_AUX], pi, pt, s, mode, maux, f, cb, cv, gam, ucoef, auxd)
        elif code == E_DISC_PLANE:
            _rows_disc_plane(wb, cf, o, b, r, f, cb, cv, gam)
    return maux


@njit(**KERNEL)
def rows_jacobian(mi, work, nv, r0, r1, cb, cv, G):
    """G[r] (r0 ≤ r < r1) = Σ_slots c · S over the joints on the path of the slot's body (ground Plücker
    columns S of the motion subspaces in the workspace; seed 001 eqs. 3.101, 3.104)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, nv)
    for r in range(r0, r1):
        for k in range(nv):
            G[r, k] = 0.0
        for slot in range(2):
            i = cb[r, slot]
            while i > 0:
                for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
                    G[r, k] += (cv[r, slot, 0] * wd[k, 0] + cv[r, slot, 1] * wd[k, 1] + cv[r, slot, 2] * wd[k, 2]
                                + cv[r, slot, 3] * wd[k, 3] + cv[r, slot, 4] * wd[k, 4] + cv[r, slot, 5] * wd[k, 5])
                i = mi[i, PARENT]


@njit(**KERNEL)
def initial_contact_angles(work, n, nv, ci, cf, pi, pt, s):
    """Contact angles α of every disc on a curve (``E_DISC_PROFILE``) for the placements in the workspace:
    the angle of the scan over (−π, π] where the contact point lies closest to the curve with ∇h pointing
    from the centre to it, refined by :func:`solve_contact_angle` (NaN when there is none)."""
    wb, wd = workspace_views(work, n, nv)
    for e in range(ci.shape[0]):
        if ci[e, C_CODE] != E_DISC_PROFILE:
            continue
        o = ci[e, C_PAR]
        C, vC, aC = point_motion(wb, ci[e, C_B], cf[o], cf[o + 1], cf[o + 2])
        Xc = dot3(C[0] - cf[o + 3], C[1] - cf[o + 4], C[2] - cf[o + 5], cf[o + 6], cf[o + 7], cf[o + 8])
        Zc = dot3(C[0] - cf[o + 3], C[1] - cf[o + 4], C[2] - cf[o + 5], cf[o + 9], cf[o + 10], cf[o + 11])
        rad = cf[o + 12]
        k = int(cf[o + 13])
        best = math.inf
        al_best = -0.5 * math.pi
        for j in range(720):
            al = -math.pi + (j + 1) * (2.0 * math.pi / 720)
            h, hx, hz, hxx, hxz, hzz, f4, d = _disc_contact(pi, pt, k, Xc, Zc, rad, al)
            if hx * np.cos(al) + hz * np.sin(al) > 0.0 and abs(h) < best:
                best = abs(h)
                al_best = al
        s[ci[e, C_AUX]] = solve_contact_angle(pi, pt, k, Xc, Zc, rad, al_best)
