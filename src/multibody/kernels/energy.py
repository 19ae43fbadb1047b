"""Kinetic and potential energy of a tree (the quantities checked by the energy balance d(T+V)/dt = q̇ᵀτ).

T = Σ ½ m_i |v_ci|² + ½ ω_iᵀ J_i ω_i (König: the velocity of the centre of mass and the central inertia),
equal to Σ ½ v_iᵀ I_i v_i with spatial quantities about the ground origin (RBDA ch. 2) and to ½ q̇ᵀ M(q) q̇
(seed 001 §3.4), but without the terms m|ω × c|² of the spatial form that cancel to round-off for a small body
spinning fast far from the origin (the hoop of seed 000); V = −Σ m_i g · c_i, the potential of gravity, zero
at the ground origin. The rotors of the joints add ½ a_k q̇_k² for each coordinate with an armature a_k
(``kinematics.armature``).
"""
from numba import njit

from multibody.kernels.kinematics import (B_P, B_V, F_COM, F_IC, F_MASS, PARENT, armature_energy,
                                          joint_placement_world_call, joint_velocity_world_call, set_ground,
                                          workspace_views)
from multibody.kernels.spatial import KERNEL, cross3, helper, load9, mat3_vec, mat3T_vec


@helper
def body_energy_at(R, p0, p1, p2, com, J, m, g, v):
    """(½ m |v_c|² + ½ ωᵀ J ω, −m g · c) of a body at placement (R, p) (R row-major, body to ground) with centre
    of mass ``com`` and central inertia ``J`` = (xx, xy, xz, yy, yz, zz) in body coordinates, mass m, gravity g,
    and spatial velocity ``v`` = (ω, velocity of the point at the ground origin) in ground coordinates."""
    r0, r1, r2 = mat3_vec(R, com[0], com[1], com[2])
    c0, c1, c2 = p0 + r0, p1 + r1, p2 + r2
    x0, x1, x2 = cross3(v[0], v[1], v[2], c0, c1, c2)
    u0, u1, u2 = v[3] + x0, v[4] + x1, v[5] + x2
    w0, w1, w2 = mat3T_vec(R, v[0], v[1], v[2])  # ω in body coordinates, where J is constant
    wJw = (J[0] * w0 * w0 + J[3] * w1 * w1 + J[5] * w2 * w2
           + 2.0 * (J[1] * w0 * w1 + J[2] * w0 * w2 + J[4] * w1 * w2))
    return 0.5 * (m * (u0 * u0 + u1 * u1 + u2 * u2) + wJw), -m * (g[0] * c0 + g[1] * c1 + g[2] * c2)


@helper
def body_energy(i, mf, wb, v):
    """(½ m_i |v_ci|² + ½ ω_iᵀ J_i ω_i, −m_i g · c_i) of body i, placed in the workspace ``wb``, with spatial
    velocity ``v`` = (ω, velocity of the point at the ground origin) in ground coordinates; the gravity is row 0
    of ``mf``. ABA's first pass calls it too, so the energies it leaves in the workspace equal
    :func:`energy_kernel`'s."""
    return body_energy_at(load9(wb, i), wb[i, B_P], wb[i, B_P + 1], wb[i, B_P + 2],
                          (mf[i, F_COM], mf[i, F_COM + 1], mf[i, F_COM + 2]),
                          (mf[i, F_IC], mf[i, F_IC + 1], mf[i, F_IC + 2], mf[i, F_IC + 3], mf[i, F_IC + 4],
                           mf[i, F_IC + 5]), mf[i, F_MASS], (mf[0, 0], mf[0, 1], mf[0, 2]), v)


@njit(**KERNEL)
def energy_kernel(mi, mf, q, v, work):
    """Kinetic energy T = Σ ½ m_i |v_ci|² + ½ ω_iᵀ J_i ω_i (+ ½ a_k q̇_k² of the armatures) and potential energy of
    gravity V = −Σ m_i g · c_i (zero at the ground origin), with c_i the centre of mass of body i in ground
    coordinates (seed 001 §3.5, the energies T and П of the triple pendulum; RBDA ch. 2)."""
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, v.shape[0])
    set_ground(mf, work, wb, v.shape[0])
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
        dT, dV = body_energy(i, mf, wb, vi)
        T += dT + armature_energy(i, mi, mf, v)
        V += dV
    return T, V
