"""Kinetic and potential energy of a tree (the quantities checked by the energy balance d(T+V)/dt = q̇ᵀτ).

T = Σ ½ v_iᵀ I_i v_i with spatial velocities and inertias in ground coordinates (RBDA ch. 2), equal to
½ q̇ᵀ M(q) q̇ (seed 001 §3.4); V = −Σ m_i g · c_i, the potential of gravity, zero at the ground origin.
"""
from numba import njit

from multibody.kernels.kinematics import (B_V, PARENT, body_inertia_world_call, joint_placement_world_call,
                                          joint_velocity_world_call, set_ground, workspace_views)
from multibody.kernels.spatial import INLINE, KERNEL, rigid_inertia_times_motion


@njit(inline=INLINE, cache=True)
def body_energy(Iv, v, h, mf):
    """(½ v_iᵀ I_i v_i, −m_i g · c_i) of one body from its momentum ``Iv`` = I_i v_i, velocity ``v`` and first
    moment h = m_i c_i (ground coordinates; the gravity is row 0 of ``mf``). ABA's first pass sums the same
    terms in the same order, so the energies it leaves in the workspace equal :func:`energy_kernel`'s."""
    return (0.5 * (Iv[0] * v[0] + Iv[1] * v[1] + Iv[2] * v[2] + Iv[3] * v[3] + Iv[4] * v[4] + Iv[5] * v[5]),
            -(mf[0, 0] * h[0] + mf[0, 1] * h[1] + mf[0, 2] * h[2]))


@njit(**KERNEL)
def energy_kernel(mi, mf, q, v, work):
    """Kinetic energy T = Σ ½ v_iᵀ I_i v_i and potential energy of gravity V = −Σ m_i g · c_i (zero at the
    ground origin), with c_i the centre of mass of body i in ground coordinates (seed 001 §3.5, the energies
    T and П of the triple pendulum; RBDA ch. 2)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    set_ground(wb)
    T = 0.0
    V = 0.0
    for i in range(1, n):
        par = mi[i, PARENT]
        joint_placement_world_call(i, mi, mf, q, wb, wd)
        vJ, cJ = joint_velocity_world_call(i, mi, v, wd)
        vi = (wb[par, B_V] + vJ[0], wb[par, B_V + 1] + vJ[1], wb[par, B_V + 2] + vJ[2], wb[par, B_V + 3] + vJ[3],
              wb[par, B_V + 4] + vJ[4], wb[par, B_V + 5] + vJ[5])
        for k in range(6):
            wb[i, B_V + k] = vi[k]
        m, h, I = body_inertia_world_call(i, mf, wb)
        Iv = rigid_inertia_times_motion(m, h, I, vi[0], vi[1], vi[2], vi[3], vi[4], vi[5])
        dT, dV = body_energy(Iv, vi, h, mf)
        T += dT
        V += dV
    return T, V
