"""Exact directional derivatives of a model's equations by complex steps through the compiled kernels.

For a real-analytic function F, ``F(x + i h d) = F(x) + i h F'(x) d + O(h²)``, so ``Im F(x + i h d)/h`` is the
directional derivative with no subtraction: exact to round-off for any h, here h = 1e-30 (Squire & Trapp
1998; Martins, Sturdza & Alonso 2003). The kernels are written for real or complex arrays alike (numba
compiles a complex specialization on first use): their branches test real parts only, and their square roots,
sines and cosines are numpy's, which take complex numbers.

:class:`ReducedDynamics` evaluates, about a state (q0, v0), the full equations of
``multibody.analysis.linearize``: the chart kinematics δ̇ and the constrained accelerations v̇ as functions of
``x = (δ, v)``, and the velocity residual of every constraint row as a function of δ.
"""
import weakref

import numpy as np

from multibody.errors import ModelError

H_COMPLEX = 1e-30

#: model -> {dtype: Work}: the work arrays of the analysis functions, made once per model (a sweep over speeds
#: linearizes the same model many times); the KKT solve in them is unregularized (exact multipliers)
_WORKS = weakref.WeakKeyDictionary()


def analysis_work(model, dtype=np.float64):
    """The analysis work arrays of ``model`` for real (float) or complex evaluations."""
    from multibody.rows.constraint_rows import make_work

    works = _WORKS.setdefault(model, {})
    key = np.dtype(dtype)
    if key not in works:
        works[key] = make_work(model, dtype=key)
        works[key].cfg[4] = 0.0
    return works[key]


def directional_derivatives(fun, x0, T, method="complex"):
    """The columns ``F'(x0) T[:, k]`` of ``fun`` at ``x0`` (``method="complex"``: complex steps; ``"central"``:
    central differences with step 1e-6, an approximate check only)."""
    T = np.asarray(T, dtype=float)
    cols = []
    for k in range(T.shape[1]):
        d = T[:, k]
        if method == "complex":
            cols.append(np.imag(fun(x0 + 1j * H_COMPLEX * d)) / H_COMPLEX)
        elif method == "central":
            h = 1e-6
            cols.append((np.real(fun(x0 + h * d)) - np.real(fun(x0 - h * d))) / (2 * h))
        else:
            raise ModelError(f"derivative must be 'complex' or 'central', got {method!r}", element="derivative")
    return np.column_stack(cols) if cols else np.zeros((len(np.atleast_1d(fun(x0))), 0))


class ReducedDynamics:
    """The equations about (q0, v0) in the tangent chart at q0: ``q(δ) = q0 + Q(q0) δ`` (first order in δ, which
    is all a first derivative at δ = 0 needs; ``Q = ∂q̇/∂v``), the chart kinematics ``δ̇ = v + ½ ad_δ v`` (Lie
    joints: the first-order inverse of the exponential's differential; plain coordinates: ``δ̇ = v``) and the
    constrained accelerations ``v̇`` (tree equations + every constraint row, KKT in the range space, no drift
    control). Every function takes real or complex arguments."""

    def __init__(self, model, q0, v0, t=0.0):
        from multibody.model.user_constraints import qdot_matrix

        if model.constraint_table.python:
            names = [c.name for c, _ in model.constraint_table.python]
            raise ModelError(f"model '{model.name}': exact derivatives go through the compiled kernels; the Python "
                             f"constraint(s) {', '.join(names)} have none (use derivative='central')",
                             element=names[0])
        self.model, self.q0, self.v0, self.t = model, q0, v0, t
        self.Q = qdot_matrix(model, q0)

    def _work(self, dtype):
        return analysis_work(self.model, dtype)

    def _q(self, delta):
        return self.q0 + self.Q @ delta

    def velocity_residual(self, delta):
        """G(q0 ⊕ δ) v0 + c of every row (position rows: ḟ; velocity rows: g)."""
        from multibody.rows.constraint_rows import eval_rows

        w = self._work(np.result_type(delta, float))
        q = np.ascontiguousarray(self._q(delta))
        m = eval_rows(q, np.ascontiguousarray(self.v0, dtype=q.dtype), w)
        return np.where(w.level[:m] == 2, w.fd[:m], w.f[:m])

    def state_derivative(self, x):
        """(δ̇, v̇) at x = (δ, v)."""
        from multibody.formulations.constrained import constrained_rhs

        nv = self.model.nv
        delta, v = x[:nv], x[nv:]
        q = np.ascontiguousarray(self._q(delta))
        dtype = np.result_type(x, float)
        w = self._work(dtype)
        out = np.empty(self.model.nq + nv, dtype=dtype)
        constrained_rhs(float(self.t), np.ascontiguousarray(np.concatenate([q, v]).astype(dtype)), w, out)
        return np.concatenate([v + 0.5 * self._ad(delta, v), out[self.model.nq:]])

    def _ad(self, delta, v):
        """ad_δ v per joint of a Lie group (Spherical: δ × ω; Free: (δ_ω × ω, δ_ω × v + δ_v × ω)), zero else."""
        out = np.zeros_like(v)
        for j in self.model.joints[1:]:
            code, k = j.joint.code, j.v_slice.start
            if code == 5:                                  # Spherical
                out[k:k + 3] = _cross(delta[k:k + 3], v[k:k + 3])
            elif code == 7:                                # Free: twist [ω; v] in the child frame
                a, b, w_, u = delta[k:k + 3], delta[k + 3:k + 6], v[k:k + 3], v[k + 3:k + 6]
                out[k:k + 3] = _cross(a, w_)
                out[k + 3:k + 6] = _cross(a, u) + _cross(b, w_)
        return out

    def input_response(self, k):
        """∂ẋ/∂τ_k: the change of (δ̇, v̇) per unit generalized force on velocity coordinate k (exactly linear)."""
        from multibody.formulations.constrained import constrained_accelerations
        from multibody.rows.constraint_rows import eval_rows

        nv, nq = self.model.nv, self.model.nq
        w = self._work(float)
        x = np.concatenate([self.q0, self.v0])
        m = eval_rows(self.q0, self.v0, w)
        base = np.empty(nv)
        tau = np.array(w.tree.tau, dtype=float)
        constrained_accelerations(float(self.t), x, w, tau, m, base)
        tau[k] += 1.0
        m = eval_rows(self.q0, self.v0, w)
        pert = np.empty(nv)
        constrained_accelerations(float(self.t), x, w, tau, m, pert)
        return np.concatenate([np.zeros(nv), pert - base])


def _cross(a, b):
    """a × b of two 3-vectors (real or complex; np.cross costs ten times more on three components)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def reduced_dynamics(model, q0, v0, t=0.0):
    return ReducedDynamics(model, np.asarray(q0, float), np.asarray(v0, float), t)
