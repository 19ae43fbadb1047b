"""The residual of static equilibrium and its tangent stiffness, with analytical derivatives.

At rest (q̇ = q̈ = 0) the equations of motion reduce to

    r(q) = g(q) − τ_app(t, q, 0) − τ = 0,      g(q) = rnea(q, 0, 0),

g the generalized gravity forces that the joints must hold (RNEA at rest: RBDA Table 5.1 with a_0 = −g), τ_app the
model's applied forces at rest — joint springs and efforts, point springs, loads (``kernels/forces.py``) — and τ
given generalized forces. The tangent stiffness K = ∂r/∂q (tangent space, as every derivative here) is the RNEA
derivative at q̇ = q̈ = 0 (``kernels/derivatives.py``: Carpentier & Mansard's recursion, whose q-derivative at rest
is the geometric stiffness of gravity, zero — and skipped — without gravity) minus the applied forces' (``kernels/derivatives_forces.py``): the joint
springs' −K_k, the point springs' and the loads' (a follower load makes K unsymmetric). One call is O(N·depth) for
K plus the springs' and loads' paths; nothing is allocated.
"""
from numba import njit

from multibody.kernels.derivatives import DD_DFQ, derivative_backward, derivative_forward, derivative_views
from multibody.kernels.derivatives_forces import applied_force_derivatives
from multibody.kernels.derivatives_minv import scratch_views
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.rnea import rnea_kernel
from multibody.kernels.spatial import KERNEL


@njit(**KERNEL)
def static_residual_kernel(mi, mf, q, tau, F, t, fb, no_fext, work, dwork, dint, zero, r, applied, K, C):
    """r(q) (module docstring) into ``r`` (nv), τ_app into ``applied`` (nv), K = ∂r/∂q into ``K`` and C = ∂r/∂q̇ at
    rest (the dampers: −∂τ_app/∂q̇) into ``C`` (nv, nv); returns the potential energy of the applied forces
    (springs). ``F``: the model's applied forces by name (``model.forces.AppliedForces``), ``fb`` a (n, 6) scratch;
    ``zero``: nv zeros (q̇ = q̈ = 0); ``dwork``, ``dint``: the derivative workspaces (``data.DerivativeWork``)."""
    n = mi.shape[0]
    nv = zero.shape[0]
    dq, dv, tau_app, x, y, blas = scratch_views(dwork, n, nv)
    Va, _ = applied_forces_kernel(mi, mf, q, zero, F, t, work, fb, tau_app)
    rnea_kernel(mi, mf, q, zero, zero, no_fext, work, r)
    for k in range(nv):
        applied[k] = tau_app[k]
        r[k] -= tau_app[k] + tau[k]
    if mf[0, 0] != 0.0 or mf[0, 1] != 0.0 or mf[0, 2] != 0.0:
        derivative_forward(mi, mf, zero, zero, no_fext, work, dwork)
        derivative_backward(mi, work, dwork, False, False, K, C, K)
    else:   # at rest RNEA's q-derivative is gravity's geometric stiffness alone: zero without gravity
        for i in range(nv):
            for j in range(nv):
                K[i, j] = 0.0
                C[i, j] = 0.0
    db, dd = derivative_views(dwork, n, nv)
    applied_force_derivatives(mi, zero, F.dof_stiffness, F.dof_damping, F.spring_body, F.spring_point, F.spring_k,
                              F.spring_c, F.spring_l0, (F.load_int, F.load_float, F.load_knots), t, work,
                              dd[:, DD_DFQ:], dint, K, C)
    return Va
