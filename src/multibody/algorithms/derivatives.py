"""Derivatives of the dynamics: ``algo(model, q, v, ..., data=None)`` returning numpy arrays, as ``algorithms``.

| function | result | method |
|---|---|---|
| ``rnea_derivatives(model, q, v, a)`` | (∂τ/∂q, ∂τ/∂q̇, M) | RNEA derivatives, O(N·depth) (Carpentier & Mansard 2018) |
| ``aba_derivatives(model, q, v, tau)`` | (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹ = ∂q̈/∂τ) | ABA, M⁻¹ and the RNEA derivatives at q̈ |
| ``minv(model, q)`` | M(q)⁻¹ | articulated-body recursion, O(N²), without forming M |
| ``coriolis_matrix(model, q, v)`` | C(q, q̇): C q̇ = bias − gravity, Ṁ − 2C skew | Pinocchio's convention |
| ``rnea_derivatives_batch``, ``aba_derivatives_batch`` | the same on a leading batch axis, in parallel | slices in threads |

All matrices are nv x nv. Derivatives with respect to q are taken in the tangent space (``q ⊕ δ``,
``model.integrate``): for a Spherical or Free joint along its angular velocity in the child frame (and the
child-frame velocity of its origin), as Pinocchio and ``multibody.linearize`` do; for the other joints they are
the plain partial derivatives. ``fext`` (as in ``algorithms.rnea``: [moment about the ground origin; force] per
body, ground coordinates) is held fixed in ground coordinates. ``aba_derivatives(..., applied=True)``
differentiates q̈ = aba(q, q̇, τ + τ_app(t, q, q̇)) with the model's joint spring-dampers and efforts, point
spring-dampers and loads at time t (``kernels/forces.py``: the forces the ``"tree"`` formulation of ``simulate`` adds); gravity is
always in. A model whose ground moves in a prescribed way is evaluated at time ``t`` (default 0), as the other
algorithms. General joints (seed 001 §3.4.2) have no analytical derivatives here: ``ModelError``.

The kernels are in ``kernels/derivatives*.py``; each call writes into the workspaces of the model's Data
(``Data.derivative_work()``), made on the first call.

>>> import numpy as np, multibody as mb
>>> from multibody.systems.pendulums import simple_pendulum
>>> model = simple_pendulum(length=0.7, mass=2.0, g=9.81)
>>> da_dq, da_dv, Minv = mb.aba_derivatives(model, np.zeros(1), np.zeros(1), np.zeros(1))
>>> round(float(da_dq[0, 0]), 10), float(Minv[0, 0]) == 1.0 / (2.0 * 0.7 ** 2)    # −g/L about hanging at rest
(-14.0142857143, True)
"""
import numpy as np

from multibody.algorithms.dynamics import (FAST_PATH_MISSES, as_batch, as_fext, as_output, as_vector, base_copy,
                                           bind_on_first_call, data_at, size_error)
from multibody.model.data import no_entry, refuse_general_joints, refuse_kinematics_only
from multibody.errors import ModelError
from multibody.kernels.derivatives import coriolis_kernel, rnea_derivatives_batch_kernel, rnea_derivatives_kernel
from multibody.kernels.derivatives_aba import (aba_derivatives_applied_kernel, aba_derivatives_batch_kernel,
                                               aba_derivatives_kernel)
from multibody.kernels.derivatives_minv import minv_kernel
from multibody.kernels.threads import first_error, in_threads

__all__ = ["rnea_derivatives", "aba_derivatives", "minv", "coriolis_matrix", "rnea_derivatives_batch",
           "aba_derivatives_batch"]

_F64 = np.dtype(np.float64)
_empty = np.empty
# the compiled entry points of the fast paths (``algorithms``: ``bind_on_first_call``)
_ABA_D = bind_on_first_call(aba_derivatives_kernel, "_ABA_D", globals())
_RNEA_D = bind_on_first_call(rnea_derivatives_kernel, "_RNEA_D", globals())
_MINV = bind_on_first_call(minv_kernel, "_MINV", globals())
_CORIOLIS = bind_on_first_call(coriolis_kernel, "_CORIOLIS", globals())
_ARG = {8: "data (its derivative workspace)"}


def _work(model, data, t):
    """(Data, DerivativeWork) for a model without general joints, the base state at ``t`` written."""
    d = data_at(model, data, t)
    refuse_kinematics_only(model, "the derivatives of the dynamics")
    if d.fill is not None:
        refuse_general_joints(model, "the analytical derivatives")
    return d, d.derivative_work()


def _error(model, d, err, third):
    if err == 8:
        return ModelError(f"data: its derivative workspace does not fit model '{model.name}'", element="data")
    return size_error(model, d, err, third)


def _call(kernel, model, d, q, *args):
    try:
        return kernel(*args)
    except ZeroDivisionError:  # a quaternion of zero length
        model.check_quaternions(q)
        raise


def rnea_derivatives(model, q, v, a, data=None, fext=None, t=None):
    """``(dtau_dq, dtau_dv, M)``: the derivatives of τ = ``rnea(model, q, v, a)`` with respect to q (tangent space),
    q̇ and q̈ (= M(q)), by the RNEA-derivative recursion of Carpentier & Mansard (RSS 2018) in O(N·depth)
    (``kernels/derivatives.py``). ``fext`` is held fixed in ground coordinates; ``t``: the time of a moving base.

    >>> import numpy as np
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> model = simple_pendulum(length=0.7, mass=2.0, g=9.81)
    >>> dq, dv, M = rnea_derivatives(model, np.array([np.pi / 2]), np.zeros(1), np.zeros(1))
    >>> round(float(dq[0, 0]), 12), float(dv[0, 0]), round(float(M[0, 0]), 12)     # m g L cos θ, 0, m L²
    (0.0, 0.0, 0.98)
    """
    # the C-level entry (``algorithms.dynamics``)
    if data is None and fext is None and (
            out := getattr(model, "_multibody_entry_rnea_derivatives", no_entry)(q, v, a)) is not None:
        return out
    try:  # the fast path of :func:`aba_derivatives`
        if fext is None and q.dtype is v.dtype is a.dtype is _F64 and q.ndim == v.ndim == a.ndim == 1:
            mi, mf, no_fext, work, dwork, dint, forces, fb, qdd, shape, _, owner = (
                model._multibody_derivative_fast if data is None else data.derivatives.fast)
            if owner is model:
                A, B, C = _empty(shape), _empty(shape), _empty(shape)
                if _RNEA_D(mi, mf, q, v, a, no_fext, work, dwork, qdd, A, B, C) == 0:
                    return A, B, C
    except FAST_PATH_MISSES:
        pass
    d, w = _work(model, data, t)
    q = as_vector(q, d.nq, "q", model)
    v = as_vector(v, d.nv, "v", model)
    a = as_vector(a, d.nv, "a", model)
    out = [_empty(d.mshape) for _ in range(3)]
    err = _call(rnea_derivatives_kernel, model, d, q, d.mi, d.mf, q, v, a, as_fext(fext, d, model), d.work, w.dwork,
                w.qdd, *out)
    if err:
        raise _error(model, d, err, "a")
    return tuple(out)


def aba_derivatives(model, q, v, tau, data=None, fext=None, t=None, applied=False):
    """``(da_dq, da_dv, Minv)``: the derivatives of q̈ = ``aba(model, q, v, tau)`` with respect to q (tangent
    space), q̇ and τ (= M(q)⁻¹): q̈ by ABA, M⁻¹ by the articulated-body recursion in O(N²), then
    ∂q̈/∂x = −M⁻¹ ∂τ/∂x with the RNEA derivatives at that q̈ (Carpentier & Mansard, RSS 2018;
    ``kernels/derivatives_aba.py``). ``applied=True``: q̈ = aba(q, q̇, τ + τ_app(q, q̇)) with the model's joint
    spring-dampers and efforts, point spring-dampers and loads. ``fext`` is held fixed in ground coordinates; ``t``: the
    time of a moving base and of the loads."""
    # the C-level entry (``algorithms.dynamics``)
    if data is None and fext is None and not applied and (
            out := getattr(model, "_multibody_entry_aba_derivatives", no_entry)(q, v, tau)) is not None:
        return out
    try:  # the fast path, as in ``algorithms.aba``: float64 vectors, no fext, no applied forces, the Data cached
        if fext is None and q.dtype is v.dtype is tau.dtype is _F64 and q.ndim == v.ndim == tau.ndim == 1:
            mi, mf, no_fext, work, dwork, dint, forces, fb, qdd, shape, has_applied, owner = (
                model._multibody_derivative_fast if data is None else data.derivatives.fast)
            if owner is model and not (applied and has_applied):
                A, B, C = _empty(shape), _empty(shape), _empty(shape)
                if _ABA_D(mi, mf, q, v, tau, no_fext, work, dwork, dint, qdd, A, B, C) == 0:
                    return A, B, C
    except FAST_PATH_MISSES:  # no Data or workspace yet, no fast path; the slow path names a zero quaternion
        pass
    d, w = _work(model, data, t)
    q = as_vector(q, d.nq, "q", model)
    v = as_vector(v, d.nv, "v", model)
    tau = as_vector(tau, d.nv, "tau", model)
    out = [_empty(d.mshape) for _ in range(3)]
    fx = as_fext(fext, d, model)
    if applied and w.applied:
        err = _call(aba_derivatives_applied_kernel, model, d, q, d.mi, d.mf, q, v, tau, fx, w.forces,
                    0.0 if t is None else float(t), w.fb, d.work, w.dwork, w.dint, w.qdd, *out)
    else:
        err = _call(aba_derivatives_kernel, model, d, q, d.mi, d.mf, q, v, tau, fx, d.work, w.dwork, w.dint, w.qdd,
                    *out)
    if err:
        raise _error(model, d, err, "tau")
    return tuple(out)


def minv(model, q, data=None, out=None):
    """M(q)⁻¹ (nv x nv, symmetric positive definite) by the articulated-body recursion in O(N²), without forming
    or factorizing M (``kernels/derivatives_minv.py``; Pinocchio's ``computeMinverse``). A moving base does not
    change it. ``out``: an array to write M⁻¹ into and return (``algorithms.dynamics``)."""
    # the C-level entry (``algorithms.dynamics``)
    if data is None and (A := getattr(model, "_multibody_entry_minv", no_entry)(q, out)) is not None:
        return A
    try:  # the fast path of :func:`aba_derivatives`, with ``out`` as in ``algorithms.crba``
        if q.dtype is _F64 and q.ndim == 1:
            mi, mf, no_fext, work, dwork, dint, forces, fb, qdd, shape, _, owner = (
                model._multibody_derivative_fast if data is None else data.derivatives.fast)
            if owner is model:
                if out is None:
                    A = _empty(shape)
                    if _MINV(mi, mf, q, work, dwork, dint, A) == 0:
                        return A
                elif out.dtype is _F64 and out.ndim == 2 and out.flags.carray and _MINV(
                        mi, mf, q, work, dwork, dint, out) == 0:
                    return out
    except FAST_PATH_MISSES:
        pass
    d, w = _work(model, data, None)
    q = as_vector(q, d.nq, "q", model)
    out = as_output(out, d.mshape, model)
    err = _call(minv_kernel, model, d, q, d.mi, d.mf, q, d.work, w.dwork, w.dint, out)
    if err:
        raise _error(model, d, err, "q")
    return out


def coriolis_matrix(model, q, v, data=None):
    """The Coriolis matrix C(q, q̇) (nv x nv) of Pinocchio's ``computeCoriolisMatrix`` convention,
    C = Σ_i J_iᵀ (I_i J̇_i + ½ D_i J_i) (``kernels/derivatives.py``): C q̇ is the velocity part of the bias forces
    (``bias_forces − gravity_forces`` on a fixed ground) and Ṁ − 2C is skew-symmetric. For the tree relative to
    its base (a moving base changes neither M nor C)."""
    try:  # the fast path of :func:`aba_derivatives`
        if q.dtype is v.dtype is _F64 and q.ndim == v.ndim == 1:
            mi, mf, no_fext, work, dwork, dint, forces, fb, qdd, shape, _, owner = (
                model._multibody_derivative_fast if data is None else data.derivatives.fast)
            if owner is model:
                A = _empty(shape)
                if _CORIOLIS(mi, mf, q, v, work, dwork, A) == 0:
                    return A
    except FAST_PATH_MISSES:
        pass
    d, w = _work(model, data, None)
    q = as_vector(q, d.nq, "q", model)
    v = as_vector(v, d.nv, "v", model)
    out = _empty(d.mshape)
    err = _call(coriolis_kernel, model, d, q, d.mi, d.mf, q, v, d.work, w.dwork, out)
    if err:
        raise _error(model, d, err, "v")
    return out


def _batch_args(model, Q, V, X, data, t, third):
    d, w = _work(model, data, t)
    Q = as_batch(Q, d.nq, "Q", model)
    V = as_batch(V, d.nv, "V", model, Q.shape[0])
    X = as_batch(X, d.nv, third, model, Q.shape[0])
    return d, w, Q, V, X, [np.empty((Q.shape[0], d.nv, d.nv)) for _ in range(3)]


def rnea_derivatives_batch(model, Q, V, A, data=None, t=None):
    """``rnea_derivatives`` for every row of Q (B, nq), V (B, nv), A (B, nv), in parallel (slices of rows in
    threads, each with its own workspaces); returns (dtau_dq, dtau_dv, M), each (B, nv, nv). ``t``: the
    time of a moving base, the same for every row."""
    d, w, Q, V, A, out = _batch_args(model, Q, V, A, data, t, "A")
    err = first_error(in_threads(rnea_derivatives_batch_kernel, (d.mi, d.mf, Q, V, A, d.no_fext, base_copy(d), *out),
                                 Q.shape[0], short_rows=True))
    if err:
        raise _error(model, d, err, "A")
    return tuple(out)


def aba_derivatives_batch(model, Q, V, TAU, data=None, t=None, applied=False):
    """``aba_derivatives`` for every row of Q (B, nq), V (B, nv), TAU (B, nv), in parallel (slices of rows in
    threads, each with its own workspaces); returns (da_dq, da_dv, Minv), each (B, nv, nv). ``t``: the time
    of a moving base, the same for every row; ``applied``: as in :func:`aba_derivatives`."""
    d, w, Q, V, TAU, out = _batch_args(model, Q, V, TAU, data, t, "TAU")
    qdd = np.empty((Q.shape[0], d.nv))
    err = first_error(in_threads(aba_derivatives_batch_kernel, (
        d.mi, d.mf, Q, V, TAU, d.no_fext, bool(applied) and w.applied, w.forces, 0.0 if t is None else float(t),
        w.dint, base_copy(d), qdd, *out), Q.shape[0], short_rows=True))
    if err:
        raise _error(model, d, err, "TAU")
    return tuple(out)
