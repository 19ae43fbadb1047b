"""Constraints given as Python functions: ``UserConstraint`` ``f(q, t) = 0`` (optional Jacobian) and
``VelocityConstraint`` ``J(q, t) v + b(q, t) = 0``, evaluated in Python by the formulations (seed 001 §2.1)."""
import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.constraints import Constraint

__all__ = ["qdot_matrix", "UserConstraint", "VelocityConstraint"]


def _row_count(nrows, element):
    """``nrows`` of a Python constraint: None (found by one evaluation) or a positive integer."""
    if nrows is None:
        return None
    if isinstance(nrows, bool) or not isinstance(nrows, (int, np.integer)) or nrows < 1:
        raise ModelError(f"{element}: nrows must be a positive integer (or None), got {shown(nrows)!r}", element=element)
    return int(nrows)


def qdot_matrix(model, q):
    """∂q̇/∂v (nq × nv) at q: q̇ = Q(q) v (quaternion kinematics for quaternion joints)."""
    E = np.eye(model.nv)
    return np.column_stack([model.qdot(q, E[k]) for k in range(model.nv)]) if model.nv else np.zeros((model.nq, 0))


def _along_motion(model, q, v, t, rate):
    """−d/ds rate(q ⊕ v s, t + s) at s = 0 (the path with v̇ = 0) by central differences of the exact first
    derivative, step 1e-5 of the time in which the motion moves q by about 1 (relative error ~1e-10)."""
    d = 1e-5 / max(1.0, float(np.abs(v).max(initial=0.0)))
    return -(rate(model.integrate(q, v, d), t + d) - rate(model.integrate(q, v, -d), t - d)) / (2.0 * d)


class UserConstraint(Constraint):
    """Position rows ``f(q, t) = 0`` given as a Python function of the model's coordinates.

    ``f(q, t) -> (m,)``; ``jacobian(q, t) -> (m, nq)`` the partial derivatives ``∂f/∂q`` (optional: without it,
    they are formed by complex-step differentiation when ``f`` accepts complex numbers, else by central
    differences). The velocity-level Jacobian is ``G = ∂f/∂q · ∂q̇/∂v``, and the acceleration-level term is
    the derivative of ``G v + ∂f/∂t`` along the motion with ``v̇ = 0``, formed by central differences of the
    exact first derivatives (relative accuracy about 1e-10). Python code: the formulations evaluate it in
    Python (no compiled path).
    """

    python = True

    def __init__(self, name, f, nrows=None, jacobian=None):
        super().__init__(name)
        if not callable(f):
            raise ModelError(f"{self.element}: f must be callable f(q, t)", element=self.element)
        if jacobian is not None and not callable(jacobian):
            raise ModelError(f"{self.element}: jacobian must be callable jacobian(q, t)", element=self.element)
        self.f, self.jacobian = f, jacobian
        self._nrows = _row_count(nrows, self.element)
        self._complex_ok = None

    @property
    def levels(self):
        return (2,) * (self._nrows or 0)

    def _value(self, q, t):
        try:
            val = np.atleast_1d(np.asarray(self.f(q, t), dtype=float))
        except Exception as exc:
            raise ModelError(f"{self.element}: f(q, t) raised {type(exc).__name__}: {exc}",
                             element=self.element) from exc
        if val.shape != (self._nrows,) or not np.all(np.isfinite(val)):
            raise ModelError(f"{self.element}: f(q, t) must return {self._nrows} finite numbers, got {shown(val)!r}",
                             element=self.element)
        return val

    def _complex(self, q, t, dq, dt):
        """Im f(q + i h dq, t + i h dt)/h (complex-step derivative along (dq, dt))."""
        h = 1e-30
        return np.atleast_1d(np.imag(np.asarray(self.f(q + 1j * h * dq, t + 1j * h * dt))) / h)

    def _takes_complex(self, q, t):
        """Whether f computes with complex arguments (then complex steps give exact derivatives)."""
        if self._complex_ok is None:
            try:
                self._complex_ok = bool(np.iscomplexobj(np.asarray(self.f(q + 0j, t + 0j))))
            except Exception:
                self._complex_ok = False
        return self._complex_ok

    def partials(self, q, t):
        """(∂f/∂q (m × nq), ∂f/∂t (m)): the user's Jacobian, else complex steps, else central differences."""
        nq = q.shape[0]
        ft = self._complex(q, t, np.zeros(nq), 1.0) if self._takes_complex(q, t) else None
        if self.jacobian is not None:
            F = np.atleast_2d(np.asarray(self.jacobian(q, t), dtype=float))
            if F.shape != (self._nrows, nq):
                raise ModelError(f"{self.element}: jacobian(q, t) must have shape ({self._nrows}, nq = {nq}), got "
                                 f"{F.shape}", element=self.element)
        elif self._complex_ok:
            F = np.column_stack([self._complex(q, t, np.eye(nq)[k], 0.0) for k in range(nq)])
        else:
            hs = 1e-6 * np.maximum(1.0, np.abs(q))
            F = np.column_stack([(self._value(q + hs[k] * np.eye(nq)[k], t) - self._value(q - hs[k] * np.eye(nq)[k], t))
                                 / (2 * hs[k]) for k in range(nq)])
        if ft is None:
            h = 1e-6 * max(1.0, abs(t))
            ft = (self._value(q, t + h) - self._value(q, t - h)) / (2 * h)
        return F, ft

    def rows(self, model, q, v, t):
        """(f, G, γ, ḟ) in tree coordinates: G = ∂f/∂q ∂q̇/∂v, ḟ = G v + ∂f/∂t, γ = −d/dt(G v + ∂f/∂t) at v̇ = 0."""
        F, ft = self.partials(q, t)
        G = F @ qdot_matrix(model, q)

        def rate(qs, ts):
            Fs, fts = self.partials(qs, ts)
            return Fs @ model.qdot(qs, v) + fts

        return self._value(q, t), G, _along_motion(model, q, v, t, rate), G @ v + ft

    def _bind(self, model_nq, q0):
        self._complex_ok = None
        val = np.atleast_1d(np.asarray(self.f(np.asarray(q0, float), 0.0), dtype=float))
        if val.ndim != 1 or not np.all(np.isfinite(val)):
            raise ModelError(f"{self.element}: f(q, t) must return finite numbers, got {shown(val)!r}", element=self.element)
        if self._nrows is not None and val.size != self._nrows:
            raise ModelError(f"{self.element}: f returned {val.size} values, nrows = {self._nrows}",
                             element=self.element)
        self._nrows = val.size


class VelocityConstraint(Constraint):
    """Velocity rows ``J(q, t) v + b(q, t) = 0`` that are not derivatives of position rows (non-integrable):
    ``jacobian(q, t) -> (m, nv)``, ``bias(q, t) -> (m,)`` (optional, default 0). The acceleration-level term
    ``J̇ v + ḃ`` is formed by central differences along the motion with ``v̇ = 0``. Evaluated in Python.
    """

    python = True

    def __init__(self, name, jacobian, bias=None, nrows=None):
        super().__init__(name)
        if not callable(jacobian):
            raise ModelError(f"{self.element}: jacobian must be callable jacobian(q, t)", element=self.element)
        if bias is not None and not callable(bias):
            raise ModelError(f"{self.element}: bias must be callable bias(q, t)", element=self.element)
        self.jacobian, self.bias = jacobian, bias
        self._nrows = _row_count(nrows, self.element)

    @property
    def levels(self):
        return (1,) * (self._nrows or 0)

    def _terms(self, q, t):
        J = np.atleast_2d(np.asarray(self.jacobian(q, t), dtype=float))
        b = np.zeros(self._nrows) if self.bias is None else np.atleast_1d(np.asarray(self.bias(q, t), dtype=float))
        if J.shape[0] != self._nrows or b.shape != (self._nrows,) or not (np.all(np.isfinite(J))
                                                                         and np.all(np.isfinite(b))):
            raise ModelError(f"{self.element}: jacobian(q, t) and bias(q, t) must give {self._nrows} finite rows, got "
                             f"shapes {J.shape} and {b.shape}", element=self.element)
        return J, b

    def rows(self, model, q, v, t):
        """(g, J, γ, g) in tree coordinates: g = J v + b, γ = −d/dt(J v + b) at v̇ = 0."""
        J, b = self._terms(q, t)

        def rate(qs, ts):
            Js, bs = self._terms(qs, ts)
            return Js @ v + bs

        g = J @ v + b
        return g, J, _along_motion(model, q, v, t, rate), g

    def _bind(self, model_nv, q0):
        J = np.atleast_2d(np.asarray(self.jacobian(np.asarray(q0, float), 0.0), dtype=float))
        if J.shape[1] != model_nv or not np.all(np.isfinite(J)):
            raise ModelError(f"{self.element}: jacobian(q, t) must return finite numbers of shape (m, nv = {model_nv}),"
                             f" got shape {J.shape}", element=self.element)
        if self._nrows is not None and J.shape[0] != self._nrows:
            raise ModelError(f"{self.element}: jacobian has {J.shape[0]} rows, nrows = {self._nrows}",
                             element=self.element)
        self._nrows = J.shape[0]
