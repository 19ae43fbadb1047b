"""Kinetic and potential energy of a tree (the quantities checked by the energy balance d(T+V)/dt = q̇ᵀτ).

T = Σ ½ v_iᵀ I_i v_i with spatial velocities and inertias in ground coordinates (RBDA ch. 2), equal to
½ q̇ᵀ M(q) q̇ (seed 001 §3.4); V = −Σ m_i g · c_i, the potential of gravity, zero at the ground origin.
"""
from numba import njit

from multibody.kernels.kinematics import (B_V, PARENT, body_inertia_world_call, joint_placement_world_call,
                                          joint_velocity_world_call, set_ground, workspace_views)
from multibody.kernels.spatial import KERNEL, rigid_inertia_times_motion


@njit(**KERNEL)
def energy_kernel(mi, mf, q, v, work):
    """Kinetic energy T = Σ ½ v_iᵀ I_i v_i and potential energy of gravity V = −Σ m_i g · c_i (zero at the
    ground origin), with c_i the centre of mass of body i in ground coordinates (seed 001 §3.5, the energies
    T and П of the triple pendulum; RBDA ch. 2)."""
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
        u0, u1, u2 = wb[i, B_V + 3], wb[i, B_V + 4], wb[i, B_V + 5]
        m, h, I = body_inertia_world_call(i, mf, wb)
        f = rigid_inertia_times_motion(m, h, I, w0, w1, w2, u0, u1, u2)
        T += 0.5 * (f[0] * w0 + f[1] * w1 + f[2] * w2 + f[3] * u0 + f[4] * u1 + f[5] * u2)
        V -= g0 * h[0] + g1 * h[1] + g2 * h[2]
    return T, V
