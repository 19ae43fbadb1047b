"""sympy on the same Model: symbolic equations of motion, the seed 004 split of the inertial forces, generated
code, and the seed 000 DAE derivation.

| name | what |
|---|---|
| ``equations_of_motion(model)`` | H(q), h(q, q̇), g(q) by the CRBA and RNEA recursions (:mod:`.equations`) |
| ``split_inertial_forces(model, order=None)`` | centrifugal / Coriolis / gyroscopic forces, seed 004 (:mod:`.inertial_forces`) |
| ``compile_equations(model)`` | numba functions of H and h + g (:mod:`.codegen`); ``formulation="symbolic"`` |
| ``derive(...)`` | relative degrees and stabilized reactions of a DAE, seed 000 (:mod:`.dae`) |
| ``stabilized_dae(model, energy_constraint)`` | a Model's stabilized DAE, seed 000, for ``symbolic=True`` (:mod:`.stabilized`) |

The names are imported on first use, so ``import multibody`` does not import sympy.
"""
import importlib

_NAMES = {
    "equations_of_motion": "multibody.symbolic.equations",
    "Equations": "multibody.symbolic.equations",
    "split_inertial_forces": "multibody.symbolic.inertial_forces",
    "InertialForces": "multibody.symbolic.inertial_forces",
    "compile_equations": "multibody.symbolic.codegen",
    "stabilized_dae": "multibody.symbolic.stabilized",
}

__all__ = list(_NAMES)


def __getattr__(name):
    if name in _NAMES:
        return getattr(importlib.import_module(_NAMES[name]), name)
    raise AttributeError(f"module 'multibody.symbolic' has no attribute {name!r}")
