"""Kinetic and potential energy of a tree (the quantities checked by the energy balance d(T+V)/dt = q̇ᵀτ).

T = Σ ½ m_i |v_ci|² + ½ ω_iᵀ J_i ω_i (König: the centre-of-mass velocity v_c and the inertia J about the
centre of mass, ground axes), equal to ½ q̇ᵀ M(q) q̇ (seed 001 §3.4); V = −Σ m_i g · c_i, the potential of
gravity, zero at the ground origin. The centre-of-mass form avoids the cancellation of the spatial inertia
about the ground origin (Σ ½ vᵀ I_O v has terms of order m |ω × c|², large for a small body spinning fast far
from the origin, whose sum is the much smaller T).
"""
from numba import njit

from multibody.kernels.kinematics import (B_P, B_V, F_COM, F_IC, F_MASS, PARENT, joint_placement_world_call,
                                          joint_velocity_world_call, set_ground, workspace_views)
from multibody.kernels.spatial import cross3, load9, mat3_vec, rotate_sym3


@njit(cache=True)
def energy_kernel(mi, mf, q, v, work):
    """Kinetic energy T = Σ ½ m_i |v_ci|² + ½ ω_iᵀ J_i ω_i and potential energy of gravity V = −Σ m_i g · c_i
    (zero at the ground origin), with c_i the centre of mass of body i in ground coordinates (seed 001 §3.5,
    the energies T and П of the triple pendulum; RBDA ch. 2)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    set_ground(wb)
    g0 = mf[0, 0]
    g1 = mf[0, 1]
    g2 = mf[0, 2]
    T = 0.0
    V = 0.0
    for i in range(1, n):
        par = mi[i, PARENT]
        joint_placement_world_call(i, mi, mf, q, wb, wd)
        vJ, cJ = joint_velocity_world_call(i, mi, v, wd)
        for k in range(6):
            wb[i, B_V + k] = wb[par, B_V + k] + vJ[k]
        w0, w1, w2 = wb[i, B_V], wb[i, B_V + 1], wb[i, B_V + 2]
        R = load9(wb, i)
        r0, r1, r2 = mat3_vec(R, mf[i, F_COM], mf[i, F_COM + 1], mf[i, F_COM + 2])
        c0, c1, c2 = wb[i, B_P] + r0, wb[i, B_P + 1] + r1, wb[i, B_P + 2] + r2
        x0, x1, x2 = cross3(w0, w1, w2, c0, c1, c2)
        vc0, vc1, vc2 = wb[i, B_V + 3] + x0, wb[i, B_V + 4] + x1, wb[i, B_V + 5] + x2
        J = rotate_sym3(R, (mf[i, F_IC], mf[i, F_IC + 1], mf[i, F_IC + 2], mf[i, F_IC + 3], mf[i, F_IC + 4],
                            mf[i, F_IC + 5]))
        Jw0 = J[0] * w0 + J[1] * w1 + J[2] * w2
        Jw1 = J[1] * w0 + J[3] * w1 + J[4] * w2
        Jw2 = J[2] * w0 + J[4] * w1 + J[5] * w2
        m = mf[i, F_MASS]
        T += 0.5 * (m * (vc0 * vc0 + vc1 * vc1 + vc2 * vc2) + w0 * Jw0 + w1 * Jw1 + w2 * Jw2)
        V -= m * (g0 * c0 + g1 * c1 + g2 * c2)
    return T, V
