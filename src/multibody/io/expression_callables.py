"""What a model file can hold of the Python callbacks: torques, constraint functions and their Jacobians as
expressions (:mod:`multibody.io.expressions`, never evaluated as Python) of the time, the coordinates and the
velocities, callable as the builder expects."""
import numpy as np

from multibody.errors import ModelError, shown
from multibody.io.expressions import Expression, parse_expression

__all__ = ["expression_variables", "velocity_names", "ExpressionTorque", "ExpressionVector", "ExpressionMatrix"]


def expression_variables(model, velocities=True):
    """The names an expression may use on ``model``: ``t``, ``q.<joint>.<coordinate>`` (and ``q.<joint>`` for a
    joint with one coordinate), and with ``velocities`` the same with ``v.`` -> ``(kind, index)``."""
    out = {"t": ("t", 0)}
    for j in model.joints[1:]:
        qn = j.joint.coordinate_names
        for k, c in enumerate(qn):
            out[f"q.{j.name}.{c}"] = ("q", j.q_slice.start + k)
        if len(qn) == 1:
            out[f"q.{j.name}"] = ("q", j.q_slice.start)
    if velocities:
        for j in model.joints[1:]:
            vn = [n.split(".", 1)[1] for n in velocity_names(j)]
            for k, c in enumerate(vn):
                out[f"v.{j.name}.{c}"] = ("v", j.v_slice.start + k)
            if len(vn) == 1:
                out[f"v.{j.name}"] = ("v", j.v_slice.start)
    return out


def velocity_names(j):
    names = j.joint.coordinate_names
    if not j.joint.linear_coordinates:
        names = ("wx", "wy", "wz") if j.joint.nv == 3 else ("wx", "wy", "wz", "vx", "vy", "vz")
    return [f"{j.name}.{c}" for c in names]


class ExpressionTorque:
    """Generalized forces ``tau(t, q, v)`` from expressions, one per velocity coordinate (a model file's
    time-varying efforts; ``ModelBuilder.set_torque`` takes it like any callback, and ``save_model`` writes it
    back). ``entries``: ``[(velocity name, Expression, origin)]``, origin ``"joint"`` (a joint's ``effort``) or
    ``"torque"`` (the file's ``torque:`` mapping); several entries on one coordinate add up.

    Example
    -------
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> model = simple_pendulum()
    >>> tau = ExpressionTorque(model, {"hinge.angle": "-2*v.hinge + sin(t)"})
    >>> tau(0.0, [0.1], [1.0]).tolist()
    [-2.0]
    """

    def __init__(self, model, expressions, origin="torque"):
        self.nv = model.nv
        variables = expression_variables(model)
        vnames = [n for j in model.joints[1:] for n in velocity_names(j)]
        self.entries, self._fns = [], []
        items = expressions.items() if hasattr(expressions, "items") else expressions
        for item in items:
            name, expr, where = (item[0], item[1], item[2] if len(item) > 2 else origin)
            if not isinstance(expr, Expression):
                expr = parse_expression(expr, f"torque[{name!r}]")
            if name not in vnames:
                raise ModelError(f"{expr.where}: '{name}' is not a velocity coordinate of model '{model.name}' "
                                 f"(velocity names: {', '.join(vnames)})", element=expr.where)
            self._fns.append((vnames.index(name), expr.function(variables)))
            self.entries.append((name, expr, where))

    def __call__(self, t, q, v):
        tau = np.zeros(self.nv)
        for i, f in self._fns:
            tau[i] += f(t, q, v)
        return tau

    def __repr__(self):
        return "ExpressionTorque({" + ", ".join(f"{shown(n)!r}: {e.source!r}" for n, e, _ in self.entries) + "})"


class ExpressionVector:
    """``f(q, t) -> (m,)`` from m expressions of t and the coordinates (a position constraint in a file)."""

    def __init__(self, expressions, variables):
        self.expressions = list(expressions)
        self._fns = [e.function(variables) for e in self.expressions]

    def __call__(self, q, t):
        return np.array([f(t, q, None) for f in self._fns])

    @property
    def sources(self):
        return [e.source for e in self.expressions]


class ExpressionMatrix:
    """``J(q, t) -> (m, n)`` from rows of expressions of t and the coordinates (a velocity constraint)."""

    def __init__(self, rows, variables):
        self.rows = [list(r) for r in rows]
        self._fns = [[e.function(variables) for e in r] for r in self.rows]

    def __call__(self, q, t):
        return np.array([[f(t, q, None) for f in r] for r in self._fns])

    @property
    def sources(self):
        return [[e.source for e in r] for r in self.rows]
