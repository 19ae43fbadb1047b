"""Analytical derivatives of forward dynamics: ∂q̈/∂q (tangent space), ∂q̈/∂q̇ and ∂q̈/∂τ = M⁻¹.

q̈ = aba(q, q̇, τ) solves rnea(q, q̇, q̈) = τ (+ the applied forces τ_app(q, q̇) when asked), so differentiating
that identity at q̈ = aba(...) gives (J. Carpentier and N. Mansard, RSS 2018, §IV)

    ∂q̈/∂q = −M⁻¹ (∂τ_rnea/∂q − ∂τ_app/∂q),   ∂q̈/∂q̇ = −M⁻¹ (∂τ_rnea/∂q̇ − ∂τ_app/∂q̇),   ∂q̈/∂τ = M⁻¹.

One call runs ABA (``kernels/aba.py``: q̈, and the articulated inertias that M⁻¹ needs), M⁻¹ in O(N²) from
them (``kernels/derivatives_minv.py``), the RNEA derivatives at q̈ from the placements, velocities and
accelerations ABA left in the workspace (``kernels/derivatives.py``), the applied forces' derivatives
(``kernels/derivatives_forces.py``) and the two products with M⁻¹ (2 nv³ multiply-adds, the only O(N³) step,
as in Pinocchio's ``computeABADerivatives``; by BLAS, ``kernels/blas.py``).
"""
import numpy as np
from numba import njit

from multibody.kernels.aba import aba_kernel
from multibody.kernels.blas import matmul
from multibody.kernels.derivatives import (DD_DFQ, check_derivative_sizes, derivative_backward, derivative_forward,
                                           derivative_views)
from multibody.kernels.derivatives_forces import applied_force_derivatives
from multibody.kernels.derivatives_minv import derivative_workspace_size, minv_passes, scratch_views
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.rnea import slice_workspace
from multibody.kernels.spatial import COMPILED, KERNEL, helper


@helper
def _check(mi, q, v, tau, fext, work, dwork, dint, qdd, da_dq, da_dv, Minv):
    """0, or the position of the first argument of :func:`aba_derivatives_kernel` that does not fit the model
    (``derivatives.check_derivative_sizes``; 8: a derivative workspace too short)."""
    err = check_derivative_sizes(mi, q, v, tau, fext, work, dwork, da_dq)
    if err != 0:
        return err
    n = mi.shape[0]
    nv = v.shape[0]
    if da_dv.shape != da_dq.shape or Minv.shape != da_dq.shape or qdd.shape[0] != nv:
        return 6
    if dwork.shape[0] < derivative_workspace_size(n, nv) or dint.shape[0] < 2 * n + 4 * nv:
        return 8
    return 0


@njit(**KERNEL)
def derivatives_after_aba(mi, mf, v, qdd, fext, work, dwork, dint, Minv, dq, dv):
    """M⁻¹ into ``Minv`` and ∂τ/∂q, ∂τ/∂q̇ of RNEA at q̈ = ``qdd`` into ``dq``, ``dv``, from what ``aba_kernel`` left
    in ``work``."""
    minv_passes(mi, work, dwork, dint, Minv)
    derivative_forward(mi, mf, v, qdd, fext, work, dwork)
    derivative_backward(mi, work, dwork, fext.shape[0] == mi.shape[0], False, dq, dv, dq)


@njit(**KERNEL)
def aba_derivatives_kernel(mi, mf, q, v, tau, fext, work, dwork, dint, qdd, da_dq, da_dv, Minv):
    """q̈ = aba(q, q̇ = v, τ) into ``qdd``, and ∂q̈/∂q, ∂q̈/∂q̇, M⁻¹ into ``da_dq``, ``da_dv``, ``Minv`` (nv, nv).
    ``fext``: (n, 6) spatial forces fixed in ground coordinates, or (0, 6). ``dwork``:
    ``derivatives_minv.derivative_workspace_size(n, nv)`` floats; ``dint``: ``derivatives_minv.subtree_tables``.
    Returns 0 or the position of the first argument that does not fit (nothing is computed)."""
    err = _check(mi, q, v, tau, fext, work, dwork, dint, qdd, da_dq, da_dv, Minv)
    if err != 0:
        return err
    dq, dv, x, y, z, blas = scratch_views(dwork, mi.shape[0], v.shape[0])
    aba_kernel(mi, mf, q, v, tau, fext, work, qdd)
    derivatives_after_aba(mi, mf, v, qdd, fext, work, dwork, dint, Minv, dq, dv)
    matmul(Minv, dq, da_dq, -1.0, blas)
    matmul(Minv, dv, da_dv, -1.0, blas)
    return 0


@njit(**KERNEL)
def aba_derivatives_applied_kernel(mi, mf, q, v, tau, fext, F, t, fb, work, dwork, dint, qdd, da_dq, da_dv, Minv):
    """:func:`aba_derivatives_kernel` of q̈ = aba(q, q̇, τ + τ_app(t, q, q̇)): ``F`` holds the model's joint and
    point spring-dampers and loads by name, as ``kernels/forces.py`` reads them (``model.forces.AppliedForces``);
    ``t`` the time of the loads; ``fb`` a (n, 6) scratch."""
    err = _check(mi, q, v, tau, fext, work, dwork, dint, qdd, da_dq, da_dv, Minv)
    if err != 0:
        return err
    n = mi.shape[0]
    nv = v.shape[0]
    dq, dv, tau_app, x, y, blas = scratch_views(dwork, n, nv)
    applied_forces_kernel(mi, mf, q, v, F, t, work, fb, tau_app)
    for k in range(nv):
        tau_app[k] += tau[k]
    aba_kernel(mi, mf, q, v, tau_app, fext, work, qdd)
    derivatives_after_aba(mi, mf, v, qdd, fext, work, dwork, dint, Minv, dq, dv)
    db, dd = derivative_views(dwork, n, nv)
    applied_force_derivatives(mi, v, F.dof_stiffness, F.dof_damping, F.spring_body, F.spring_point, F.spring_k,
                              F.spring_c, F.spring_l0, (F.load_int, F.load_float, F.load_knots), t, work,
                              dd[:, DD_DFQ:], dint, dq, dv)
    matmul(Minv, dq, da_dq, -1.0, blas)
    matmul(Minv, dv, da_dv, -1.0, blas)
    return 0


@njit(**COMPILED, nogil=True)
def aba_derivatives_batch_kernel(mi, mf, Q, V, TAU, fext, applied, forces, t, dint, base, QDD, DQ, DV, MINV, lo, hi):
    """``aba_derivatives_kernel`` (``aba_derivatives_applied_kernel`` when ``applied``) for the rows lo ≤ b < hi of
    Q, V, TAU (leading batch axis) into QDD (B, nv) and DQ, DV, MINV (B, nv, nv), with workspaces of its own
    (``base``: the base block, ``rnea.slice_workspace``). Returns the first nonzero error code of the rows, or 0.
    Compiled without the GIL: threads run slices of the rows at once (``kernels.threads.in_threads``)."""
    n = mi.shape[0]
    nv = V.shape[1]
    work = slice_workspace(mi, nv, base)
    dwork = np.zeros(derivative_workspace_size(n, nv))
    dints = dint.copy()
    fb = np.empty((n, 6))
    err = 0
    for b in range(lo, hi):
        if applied:
            e = aba_derivatives_applied_kernel(mi, mf, Q[b], V[b], TAU[b], fext, forces, t, fb, work, dwork, dints,
                                               QDD[b], DQ[b], DV[b], MINV[b])
        else:
            e = aba_derivatives_kernel(mi, mf, Q[b], V[b], TAU[b], fext, work, dwork, dints, QDD[b], DQ[b], DV[b],
                                       MINV[b])
        if err == 0:
            err = e
    return err
