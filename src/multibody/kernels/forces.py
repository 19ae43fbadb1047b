"""Applied generalized forces of the Model's force arrays, and their potential energy and dissipated power.

Gravity is *not* here: it is inside ``rnea``/``aba``/``energy``. This kernel evaluates

* joint spring-dampers and efforts, per velocity coordinate k (docs/model-arrays.md):
  ``τ_k = −K_k (q_k − rest_k) − C_k v_k + effort_k``, the stiffness acting only on joints whose
  coordinates are plain numbers (nq == nv, q̇ = v);
* point-to-point spring-dampers s between point ``r_a`` of body a and ``r_b`` of body b (body frames):
  with ``d = x_b − x_a`` in ground coordinates, ``l = |d|``, ``e = d/l``, ``l̇ = e·(ẋ_b − ẋ_a)``, the
  tension ``S = K (l − l0) + C l̇`` pulls the points together: force ``+S e`` on a at x_a, ``−S e`` on b at x_b.

* external loads r (``model/loads.py``): a force F = s(t) F₀ at the point x of body b and a torque T = s(t) T₀,
  F₀ and T₀ fixed in ground axes, or in the body's axes for a follower load (then F = s(t) R_b F₀); the load curve
  s(t) = offset + amplitude sin(ω t + φ) + the piecewise-linear table of its knots (:func:`curve_value`).

Generalized forces of the point forces follow the principle of virtual power (seed 001 §3.4, the
generalized force of a force F at point x is ``Σ_k (∂ẋ/∂v_k)·F``): each force is a spatial force
``[x × F; F]`` about the ground origin (the world convention of ``kernels/kinematics.py``), accumulated per
body, summed from the leaves to the root, and projected on the ground-frame motion-subspace columns
``S_k``: ``τ_k = S_kᵀ f_i`` for the coordinates k of joint i (RBDA §5.3, the backward pass of RNEA with
external forces only). O(N) per call, no allocation.

Potential energy: ``½ K_k (q_k − rest_k)²`` and ``½ K (l − l0)²``. Dissipated power:
``Σ C_k v_k² + Σ C l̇² − Σ (F·ẋ + T·ω)`` over the dampers and the loads (a load's power counts as negative
dissipation: so that ``d(T + V)/dt = v·effort + v·τ_callback − dissipated power``).
A spring whose points coincide (l < 1e-300) has no direction and exerts no force.
"""

import numpy as np
from numba import njit

from multibody.kernels.kinematics import (B_P, B_V, IQ, IV, NQ, NV, PARENT, kinematics_kernel, workspace_views)
from multibody.kernels.spatial import KERNEL, cross3, helper, load9, mat3_vec

# columns of the per-body force accumulator ``fb`` (n, 6): [n (about the ground origin); F], ground frame
FORCE_WIDTH = 6

#: columns of the packed loads (``model.loads.LoadTable``; ``AppliedForces.load_int``, ``load_float``,
#: ``load_knots``, or the ``loads`` tuple (ints, floats, knots) of the kernels below): integers —
#: the body, whether the vectors turn with it (a follower load), the first knot of its table and their number
LI_BODY, LI_LOCAL, LI_KNOT, LI_NKNOT = range(4)
LI_WIDTH = 4
#: floats — the point (body kernel frame), F₀, T₀ (ground axes, or body axes for a follower load), then the curve's
#: offset, amplitude, ω and phase
LF_POINT, LF_FORCE, LF_TORQUE, LF_OFFSET, LF_AMPLITUDE, LF_OMEGA, LF_PHASE = 0, 3, 6, 9, 10, 11, 12
LF_WIDTH = 13


def no_loads():
    """The ``loads`` tuple of a model without loads (the arrays' types are those of a model with loads)."""
    return (np.zeros((0, LI_WIDTH), dtype=np.int64), np.zeros((0, LF_WIDTH)), np.zeros((0, 2)))


@njit(**KERNEL)
def joint_forces_kernel(mi, q, v, dof_k, dof_c, dof_rest, dof_effort, tau):
    """Add the joint spring-damper and effort generalized forces to ``tau`` (nv,); return
    ``(potential, dissipated_power)`` of the joint springs and dampers."""
    n = mi.shape[0]
    V = 0.0
    P = 0.0
    for i in range(1, n):
        iq = mi[i, IQ]
        iv = mi[i, IV]
        nv = mi[i, NV]
        linear = mi[i, NQ] == nv
        for j in range(nv):
            k = iv + j
            f = dof_effort[k] - dof_c[k] * v[k]
            P += dof_c[k] * v[k] * v[k]
            if linear and dof_k[k] != 0.0:
                d = q[iq + j] - dof_rest[k]
                f -= dof_k[k] * d
                V += 0.5 * dof_k[k] * d * d
            tau[k] += f
    return V, P


@helper
def world_point(wb, body, r0, r1, r2):
    """Position and velocity (ground coordinates) of the point r (body coordinates) of ``body``; the body
    velocity in ``wb`` is [ω; v_O] (Plücker, ground origin), so ẋ = v_O + ω × x."""
    R = load9(wb, body)
    d0, d1, d2 = mat3_vec(R, r0, r1, r2)
    x0 = wb[body, B_P] + d0
    x1 = wb[body, B_P + 1] + d1
    x2 = wb[body, B_P + 2] + d2
    e0, e1, e2 = cross3(wb[body, B_V], wb[body, B_V + 1], wb[body, B_V + 2], x0, x1, x2)
    return x0, x1, x2, wb[body, B_V + 3] + e0, wb[body, B_V + 4] + e1, wb[body, B_V + 5] + e2


@helper
def curve_value(t, ints, floats, knots, r):
    """s(t) of load r: offset + amplitude sin(ω t + φ) + the piecewise-linear table (held at its end values)."""
    s = floats[r, LF_OFFSET]
    if floats[r, LF_AMPLITUDE] != 0.0:
        s += floats[r, LF_AMPLITUDE] * np.sin(floats[r, LF_OMEGA] * t + floats[r, LF_PHASE])
    m = ints[r, LI_NKNOT]
    if m > 0:
        k0 = ints[r, LI_KNOT]
        if m == 1 or t <= knots[k0, 0]:
            s += knots[k0, 1]
        elif t >= knots[k0 + m - 1, 0]:
            s += knots[k0 + m - 1, 1]
        else:
            lo = 0
            hi = m - 1
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if knots[k0 + mid, 0] <= t:
                    lo = mid
                else:
                    hi = mid
            t0 = knots[k0 + lo, 0]
            w = (t - t0) / (knots[k0 + hi, 0] - t0)
            s += (1.0 - w) * knots[k0 + lo, 1] + w * knots[k0 + hi, 1]
    return s


@helper
def load_vectors(wb, ints, floats, knots, r, t):
    """Load r at time t from the placements in ``wb``: (body, x, F, T) with the point x and the vectors F, T in
    ground coordinates (3-vectors as three numbers)."""
    b = ints[r, LI_BODY]
    s = curve_value(t, ints, floats, knots, r)
    R = load9(wb, b)
    d0, d1, d2 = mat3_vec(R, floats[r, LF_POINT], floats[r, LF_POINT + 1], floats[r, LF_POINT + 2])
    F0 = s * floats[r, LF_FORCE]
    F1 = s * floats[r, LF_FORCE + 1]
    F2 = s * floats[r, LF_FORCE + 2]
    T0 = s * floats[r, LF_TORQUE]
    T1 = s * floats[r, LF_TORQUE + 1]
    T2 = s * floats[r, LF_TORQUE + 2]
    if ints[r, LI_LOCAL] != 0:
        F0, F1, F2 = mat3_vec(R, F0, F1, F2)
        T0, T1, T2 = mat3_vec(R, T0, T1, T2)
    return (b, wb[b, B_P] + d0, wb[b, B_P + 1] + d1, wb[b, B_P + 2] + d2, F0, F1, F2, T0, T1, T2)


@helper
def add_loads(wb, loads, t, fb):
    """fb[body] += the spatial force of each load at time t; returns minus their power (Σ F·ẋ + T·ω)."""
    ints, floats, knots = loads
    P = 0.0
    for r in range(ints.shape[0]):
        b, x0, x1, x2, F0, F1, F2, T0, T1, T2 = load_vectors(wb, ints, floats, knots, r, t)
        if b <= 0:
            continue
        add_point_force(fb, b, x0, x1, x2, F0, F1, F2)
        fb[b, 0] += T0
        fb[b, 1] += T1
        fb[b, 2] += T2
        e0, e1, e2 = cross3(wb[b, B_V], wb[b, B_V + 1], wb[b, B_V + 2], x0, x1, x2)
        P -= (F0 * (wb[b, B_V + 3] + e0) + F1 * (wb[b, B_V + 4] + e1) + F2 * (wb[b, B_V + 5] + e2)
              + T0 * wb[b, B_V] + T1 * wb[b, B_V + 1] + T2 * wb[b, B_V + 2])
    return P


@helper
def spring_points(wb, spring_body, spring_point, s):
    """The geometry of point-to-point spring s from the placements and velocities in ``wb``: its bodies a, b, the
    positions x_a, x_b of its points, their relative velocity ẋ_b − ẋ_a, d = x_b − x_a and l = |d| (ground
    coordinates; 3-vectors as three numbers): (a, b, x_a, x_b, ẋ_b − ẋ_a, d, l)."""
    a = spring_body[s, 0]
    b = spring_body[s, 1]
    xa0, xa1, xa2, va0, va1, va2 = world_point(wb, a, spring_point[s, 0, 0], spring_point[s, 0, 1],
                                                spring_point[s, 0, 2])
    xb0, xb1, xb2, vb0, vb1, vb2 = world_point(wb, b, spring_point[s, 1, 0], spring_point[s, 1, 1],
                                                spring_point[s, 1, 2])
    d0 = xb0 - xa0
    d1 = xb1 - xa1
    d2 = xb2 - xa2
    return (a, b, xa0, xa1, xa2, xb0, xb1, xb2, vb0 - va0, vb1 - va1, vb2 - va2, d0, d1, d2,
            np.sqrt(d0 * d0 + d1 * d1 + d2 * d2))


@helper
def add_point_force(fb, body, x0, x1, x2, F0, F1, F2):
    """fb[body] += the spatial force [x × F; F] of the force F at the point x (ground coordinates)."""
    n0, n1, n2 = cross3(x0, x1, x2, F0, F1, F2)
    fb[body, 0] += n0
    fb[body, 1] += n1
    fb[body, 2] += n2
    fb[body, 3] += F0
    fb[body, 4] += F1
    fb[body, 5] += F2


@njit(**KERNEL)
def point_forces_kernel(mi, mf, q, v, spring_body, spring_point, spring_k, spring_c, spring_l0, loads, t, work, fb,
                        tau, kinematics_done):
    """Add the generalized forces of the point-to-point spring-dampers and of the loads (at time ``t``; the
    ``loads`` tuple of ``model.loads.LoadTable``) to ``tau``; return ``(potential, dissipated_power)``. ``work`` is
    the kinematics workspace (``kernels/kinematics.py``), ``fb`` a (n, 6) scratch array. Pass
    ``kinematics_done=True`` when ``work`` already holds the placements, velocities and motion subspaces at
    (q, v)."""
    ns = spring_k.shape[0]
    if ns == 0 and loads[0].shape[0] == 0:
        return 0.0, 0.0
    n = mi.shape[0]
    nv = v.shape[0]
    if not kinematics_done:
        kinematics_kernel(mi, mf, q, v, v, work, 1)
    wb, wd = workspace_views(work, n, nv)
    for i in range(n):
        for c in range(FORCE_WIDTH):
            fb[i, c] = 0.0
    V = 0.0
    P = add_loads(wb, loads, t, fb)
    for s in range(ns):
        (a, b, xa0, xa1, xa2, xb0, xb1, xb2, r0, r1, r2, d0, d1, d2,
         length) = spring_points(wb, spring_body, spring_point, s)
        stretch = length - spring_l0[s]
        V += 0.5 * spring_k[s] * stretch * stretch
        if length.real < 1e-300:
            continue
        e0 = d0 / length
        e1 = d1 / length
        e2 = d2 / length
        ldot = e0 * r0 + e1 * r1 + e2 * r2
        P += spring_c[s] * ldot * ldot
        S = spring_k[s] * stretch + spring_c[s] * ldot
        if a > 0:
            add_point_force(fb, a, xa0, xa1, xa2, S * e0, S * e1, S * e2)
        if b > 0:
            add_point_force(fb, b, xb0, xb1, xb2, -S * e0, -S * e1, -S * e2)
    # leaves -> root: τ_k = S_kᵀ f_i, then f_parent += f_i (ground frame: no transform)
    for i in range(n - 1, 0, -1):
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            tau[k] += (wd[k, 0] * fb[i, 0] + wd[k, 1] * fb[i, 1] + wd[k, 2] * fb[i, 2]
                       + wd[k, 3] * fb[i, 3] + wd[k, 4] * fb[i, 4] + wd[k, 5] * fb[i, 5])
        par = mi[i, PARENT]
        if par > 0:
            for c in range(FORCE_WIDTH):
                fb[par, c] += fb[i, c]
    return V, P


@njit(**KERNEL)
def applied_forces_kernel(mi, mf, q, v, F, t, work, fb, tau):
    """``tau`` (nv,) := generalized applied forces of the joint spring-dampers, efforts, point spring-dampers and
    loads (at time ``t``) at (q, v) (gravity excluded); ``F`` the model's force arrays by name (``dof_stiffness``,
    ``dof_damping``, ``dof_rest``, ``dof_effort``, ``spring_body``, ``spring_point``, ``spring_k``, ``spring_c``,
    ``spring_l0``, ``load_int``, ``load_float``, ``load_knots``: ``model.forces.AppliedForces``). Returns
    ``(potential, dissipated_power)`` of these forces."""
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    V1, P1 = joint_forces_kernel(mi, q, v, F.dof_stiffness, F.dof_damping, F.dof_rest, F.dof_effort, tau)
    V2, P2 = point_forces_kernel(mi, mf, q, v, F.spring_body, F.spring_point, F.spring_k, F.spring_c, F.spring_l0,
                                 (F.load_int, F.load_float, F.load_knots), t, work, fb, tau, False)
    return V1 + V2, P1 + P2
