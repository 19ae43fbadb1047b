"""The ``"symbolic"`` formulation: the tree's equations from generated code instead of the O(N) kernels.

``simulate(model, ..., formulation="symbolic")`` integrates ẋ = [q̇; q̈] with q̈ = H(q)⁻¹(τ − h(q, q̇) − g(q)),
H, h and g the symbolic equations of the model (:mod:`multibody.symbolic.equations`) compiled to numba by
:mod:`multibody.symbolic.codegen` (common subexpressions eliminated), τ the applied forces of the model as
in the ``"tree"`` formulation. Everything else — initial state, torques, outputs, energies — is the
``"tree"`` formulation's, so a run can be compared with the O(N) one step by step. The model must be
numeric (parameters as numbers) and a tree of joints with plain coordinates (q̇ = v).

The derivation (sympy) takes a fraction of a second for the manipulators of seed 004 but grows quickly
with the number of bodies; the generated module is cached on disk by a hash of its source.
"""
import numpy as np

from multibody.formulations.base import OdeSystem, callback_forces, register_formulation
from multibody.formulations.tree import tree_system
from multibody.model.packing import extended, tree_part

__all__ = ["SymbolicParams", "symbolic_system"]

#: the parameters of the generated right-hand side: the tree's, then the values of the model's own symbols
SymbolicParams = extended("SymbolicParams", ("values",), __name__)


def symbolic_system(model, q0=None, v0=None, tau=None, energy=True):
    """The ``"symbolic"`` formulation: minimal coordinates of a tree, q̈ from the generated symbolic equations
    H(q) q̈ + h(q, q̇) + g(q) = τ (seed 004 eq. 1; H by the composite-rigid-body recursion, h and g by the
    Newton–Euler recursion, RBDA Tables 6.2 and 5.1)."""
    from multibody.symbolic.codegen import compile_equations
    from multibody.symbolic.telegin import check_tree

    tree = tree_system(model, q0, v0, tau=tau, energy=energy)  # validates the state, torques, a numeric tree
    check_tree(model)
    mod = compile_equations(model)
    params = SymbolicParams(*tree_part(tree.params), np.zeros(0))
    nq, nv = model.nq, model.nv
    callback = (model.torque_callback if tau is None else tau) if tree.python_only else None

    def fun(t, x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(nq + nv)
        if callback is None:
            mod.rhs(float(t), x, params, out)
        else:
            extra = callback_forces(callback, t, x[:nq], x[nq:], nv, model.name)
            mod.rhs_extra(float(t), x, params, np.ascontiguousarray(extra), out)
        return out

    return OdeSystem(x0=tree.x0, fun=fun, make_result=tree.make_result, split=tree.split, rhs=mod.rhs,
                     project=tree.project, params=params, nsplit=nq, python_only=callback is not None,
                     info={**tree.info, "formulation": "symbolic"})


register_formulation("symbolic", symbolic_system)
