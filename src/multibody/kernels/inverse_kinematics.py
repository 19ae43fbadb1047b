"""The compiled parts of inverse kinematics (``algorithms/inverse_kinematics.py``): the residual of the frames and its
Jacobian, and the box-constrained least-squares step.

Residual of frame k (ground axes): e_k = W_k^½ [log(R_t Rᵀ); p_t − p] — the rotation vector of the rotation still to
make and the displacement still to make — and the derivative of −e_k along v, A_k = W_k^½ [J_r⁻¹(φ) J_ω; J_p], with
J = [J_ω; J_p] the frame's Jacobian in "local_world_aligned" (``kernels/frames.py``): a rotation δθ of the frame
(ground axes, δθ = J_ω δv) changes φ = log(R_t Rᵀ) by −J_r⁻¹(φ) δθ, J_r⁻¹ the inverse right Jacobian of SO(3)
(Sola, Deray & Atchuthan, "A micro Lie theory for state estimation in robotics", 2018, eqs. 143–144).

The step minimizes ½ |A x − e|² + ½ λ |x|² within a box by the primal active-set method (Nocedal & Wright,
*Numerical Optimization*, 2nd ed., Algorithm 16.3), starting from the unconstrained minimum when it lies in the box;
each system of the free coordinates is solved in the smaller of its two dimensions (AᵀA + λE or AAᵀ + λE: a humanoid
with three frames held solves 18 x 18 systems rather than 38 x 38).
"""
import math

import numpy as np
from numba import njit

from multibody.kernels.frames import O_P, O_R
from multibody.kernels.spatial import COMPILED, KERNEL, cross3, helper, mat3_mul

#: columns of ``per`` (one row per frame): the norms of the angular and of the linear residual, unweighted
PER_ANGULAR, PER_LINEAR = 0, 1


@helper
def rotation_log(R):
    """The rotation vector φ (angle θ in [0, π] times the unit axis) with exp([φ]×) = R (R: 9-tuple, row-major)."""
    c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    c = min(1.0, max(-1.0, c))
    w0 = R[7] - R[5]
    w1 = R[2] - R[6]
    w2 = R[3] - R[1]
    s = 0.5 * math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)           # sin θ
    theta = math.atan2(s, c)
    if theta < 1e-5:
        k = 0.5 * (1.0 + theta * theta / 6.0)                  # θ / (2 sin θ)
        return k * w0, k * w1, k * w2
    if math.pi - theta > 1e-4:
        k = theta / (2.0 * s)
        return k * w0, k * w1, k * w2
    # near π: the axis from the symmetric part, (R + Rᵀ)/2 − c E = (1 − c) a aᵀ, its sign from w
    d0 = R[0] - c
    d1 = R[4] - c
    d2 = R[8] - c
    if d0 >= d1 and d0 >= d2:
        a0, a1, a2 = d0, 0.5 * (R[1] + R[3]), 0.5 * (R[2] + R[6])
    elif d1 >= d2:
        a0, a1, a2 = 0.5 * (R[1] + R[3]), d1, 0.5 * (R[5] + R[7])
    else:
        a0, a1, a2 = 0.5 * (R[2] + R[6]), 0.5 * (R[5] + R[7]), d2
    n = math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    if a0 * w0 + a1 * w1 + a2 * w2 < 0.0:
        n = -n
    return theta * a0 / n, theta * a1 / n, theta * a2 / n


@helper
def inverse_right_jacobian_times(p0, p1, p2, x0, x1, x2):
    """J_r⁻¹(φ) x = x + ½ φ × x + k φ × (φ × x), k = 1/θ² − (1 + cos θ)/(2 θ sin θ) (Sola et al. 2018, eq. 144)."""
    t2 = p0 * p0 + p1 * p1 + p2 * p2
    theta = math.sqrt(t2)
    if theta < 1e-4:
        k = 1.0 / 12.0 + t2 / 720.0
    else:
        k = 1.0 / t2 - (1.0 + math.cos(theta)) / (2.0 * theta * math.sin(theta))
    c0, c1, c2 = cross3(p0, p1, p2, x0, x1, x2)
    d0, d1, d2 = cross3(p0, p1, p2, c0, c1, c2)
    return x0 + 0.5 * c0 + k * d0, x1 + 0.5 * c1 + k * d1, x2 + 0.5 * c2 + k * d2


@njit(**KERNEL)
def ik_residual_kernel(J, states, Rt, pt, rotation, w, e, A, per, jacobian):
    """The weighted residual ``e`` (6 per frame) and, with ``jacobian``, its derivative ``A`` (6 per frame x nv; module
    docstring) of the frames whose Jacobians ``J`` (nf, 6, nv; "local_world_aligned") and placements ``states`` (rows
    of ``frames.frame_state``) are given, for the targets ``Rt`` (nf, 9), ``pt`` (nf, 3) — the orientation counted
    where ``rotation[k]`` is 1 — and the square roots of the weights ``w`` (nf, 6); ``per`` (nf, 2): the unweighted
    norms of the angular and linear residuals."""
    nv = J.shape[2]
    for k in range(J.shape[0]):
        ep0 = pt[k, 0] - states[k, O_P]
        ep1 = pt[k, 1] - states[k, O_P + 1]
        ep2 = pt[k, 2] - states[k, O_P + 2]
        per[k, PER_LINEAR] = math.sqrt(ep0 * ep0 + ep1 * ep1 + ep2 * ep2)
        e[6 * k + 3] = w[k, 3] * ep0
        e[6 * k + 4] = w[k, 4] * ep1
        e[6 * k + 5] = w[k, 5] * ep2
        for c in range(nv):
            for r in range(3, 6):
                A[6 * k + r, c] = w[k, r] * J[k, r, c] if jacobian else 0.0
        phi = (0.0, 0.0, 0.0)
        if rotation[k]:
            R = (states[k, O_R], states[k, O_R + 3], states[k, O_R + 6], states[k, O_R + 1], states[k, O_R + 4],
                 states[k, O_R + 7], states[k, O_R + 2], states[k, O_R + 5], states[k, O_R + 8])      # Rᵀ
            phi = rotation_log(mat3_mul((Rt[k, 0], Rt[k, 1], Rt[k, 2], Rt[k, 3], Rt[k, 4], Rt[k, 5], Rt[k, 6],
                                         Rt[k, 7], Rt[k, 8]), R))
        per[k, PER_ANGULAR] = math.sqrt(phi[0] * phi[0] + phi[1] * phi[1] + phi[2] * phi[2])
        for r in range(3):
            e[6 * k + r] = w[k, r] * phi[r]
        for c in range(nv):
            if rotation[k] and jacobian:
                x = inverse_right_jacobian_times(phi[0], phi[1], phi[2], J[k, 0, c], J[k, 1, c], J[k, 2, c])
                for r in range(3):
                    A[6 * k + r, c] = w[k, r] * x[r]
            else:
                for r in range(3):
                    A[6 * k + r, c] = 0.0


@njit(**COMPILED)
def _free_solve(A, r, lam, free):
    """x_F minimizing ½|A_F x_F − r|² + ½ λ |x_F|² (λ > 0): (A_Fᵀ A_F + λ E) x_F = A_Fᵀ r, solved in the smaller of
    the two dimensions — as A_Fᵀ (A_F A_Fᵀ + λ E)⁻¹ r when A has fewer rows than free columns."""
    m = A.shape[0]
    k = free.shape[0]
    if m < k:
        G = np.empty((m, m))
        for i in range(m):
            for j in range(i, m):
                s = 0.0
                for c in range(k):
                    s += A[i, free[c]] * A[j, free[c]]
                G[i, j] = s
                G[j, i] = s
            G[i, i] += lam
        y = np.linalg.solve(G, r)
        out = np.zeros(k)
        for c in range(k):
            for i in range(m):
                out[c] += A[i, free[c]] * y[i]
        return out
    H = np.empty((k, k))
    rhs = np.zeros(k)
    for a in range(k):
        for b in range(a, k):
            s = 0.0
            for i in range(m):
                s += A[i, free[a]] * A[i, free[b]]
            H[a, b] = s
            H[b, a] = s
        H[a, a] += lam
        for i in range(m):
            rhs[a] += A[i, free[a]] * r[i]
    return np.linalg.solve(H, rhs)


@njit(**COMPILED)
def box_least_squares_kernel(A, e, lam, lower, upper, x, max_iterations):
    """x minimizing ½ |A x − e|² + ½ λ |x|² (λ > 0) subject to ``lower`` ≤ x ≤ ``upper`` (lower ≤ 0 ≤ upper, infinite
    bounds allowed), by the primal active-set method (module docstring): the free coordinates' minimum with the others
    on their bounds, the step stopped at the first bound it meets, a bound freed when its multiplier has the wrong
    sign. Writes ``x``; returns the number of active-set iterations, or −1 when ``max_iterations`` ran out."""
    n = x.shape[0]
    m = A.shape[0]
    at = np.zeros(n, dtype=np.int64)          # 0 free, -1 at its lower bound, +1 at its upper bound
    x0 = _free_solve(A, e, lam, np.arange(n))
    inside = True
    for k in range(n):
        x[k] = x0[k]
        if x0[k] < lower[k] or x0[k] > upper[k]:
            inside = False
    if inside:
        return 0
    for k in range(n):
        x[k] = 0.0
    r = np.empty(m)
    for it in range(1, max_iterations + 1):
        free = np.flatnonzero(at == 0)
        target = x.copy()
        if free.shape[0] > 0:
            for i in range(m):            # r = e − A_A x_A
                s = e[i]
                for c in range(n):
                    if at[c] != 0:
                        s -= A[i, c] * x[c]
                r[i] = s
            sol = _free_solve(A, r, lam, free)
            for a in range(free.shape[0]):
                target[free[a]] = sol[a]
        alpha = 1.0
        block = -1
        rising = False
        for k in free:
            d = target[k] - x[k]
            if d > 0.0 and upper[k] < np.inf:
                s = (upper[k] - x[k]) / d
            elif d < 0.0 and lower[k] > -np.inf:
                s = (lower[k] - x[k]) / d
            else:
                continue
            if s < alpha:
                alpha = max(s, 0.0)
                block = k
                rising = d > 0.0
        for k in range(n):
            x[k] += alpha * (target[k] - x[k])
        if block >= 0:
            x[block] = upper[block] if rising else lower[block]
            at[block] = 1 if rising else -1
            continue
        # the multipliers of the bounds met: the gradient g = Aᵀ(A x − e) + λ x, of the sign that holds x there
        for i in range(m):
            s = -e[i]
            for c in range(n):
                s += A[i, c] * x[c]
            r[i] = s
        worst = 0.0
        release = -1
        for k in range(n):
            if at[k] != 0:
                g = lam * x[k]
                for i in range(m):
                    g += A[i, k] * r[i]
                if (at[k] == -1 and g < -worst) or (at[k] == 1 and g > worst):
                    worst = abs(g)
                    release = k
        if release < 0:
            return it
        at[release] = 0
    return -1
