"""The Whipple bicycle benchmark: linearized lean and steer dynamics (seed 003), and the nonlinear bicycle.

Seed 003 is J. P. Meijaard, J. M. Papadopoulos, A. Ruina, A. L. Schwab, "Linearized dynamics equations
for the balance and steer of a bicycle: a benchmark and review", Proc. R. Soc. A 463 (2007) 1955-1982.
Equation numbers below are the paper's.

The model: four rigid, laterally symmetric bodies (rear wheel R, rear frame with rider B, front frame
H, front wheel F) joined by ideal hinges; knife-edge wheels rolling without slip on a level plane;
gravity the only applied force. Linearized about upright straight running at forward speed ``v``, the
lean angle ``phi`` and the steer angle ``delta`` obey (eq. 5.3)

    M q'' + v C1 q' + (g K0 + v^2 K2) q = f,      q = [phi, delta],  f = [T_phi, T_delta],

and the forward motion decouples (eq. 5.2). Conventions (SAE J670e, seed 003 §2): x forward from the
rear contact P, y to the right, z **down**; ``lam`` is the steer-axis tilt from the vertical; the trail
``c`` is positive when the front contact lies behind the steer-axis ground point; positive lean is to
the right, positive steer is to the right, and the rear-wheel angle ``thetaR`` grows when rolling
backwards, so ``v = -rR * dthetaR/dt``.

One module per concept:

=====================  =================================================================================
``parameters``         Table 1: :class:`BicycleParameters`, the benchmark values, checks, YAML files
``linear``             Appendix A, M, C1, K0, K2 (eq. 5.3), the characteristic polynomial (eq. 6.5)
``quartic``            the compiled roots of that quartic at many speeds
``eigen``              eigenvalues and mode shapes over speed, labelled weave / capsize / castor
``critical``           the weave, capsize and double-root speeds (Table 2)
``linear_simulation``  time runs of the linear equations with the ignorable coordinates (Appendix B)
``model``              the nonlinear bicycle as a generic model, its linearization and eigenvalues
``maneuvers``          runs of the nonlinear bicycle, the IFToMM maneuvers
=====================  =================================================================================

Their plots are in :mod:`multibody.viz.bicycle`.

Example
-------
>>> from multibody.systems import bicycle
>>> p = bicycle.benchmark_parameters()
>>> M, C1, K0, K2 = bicycle.linear_matrices(p)
>>> round(float(M[0, 0]), 5)
80.81722
>>> weave, capsize = bicycle.critical_speeds(p)
>>> round(weave, 6), round(capsize, 6)
(4.292383, 6.024262)
"""
from multibody.systems.bicycle.critical import CriticalSpeeds, critical_speeds
from multibody.systems.bicycle.eigen import EigenSweep, eigenvalues, mode_shapes
from multibody.systems.bicycle.linear import (characteristic_coefficients, intermediate_quantities, linear_matrices,
                                              state_matrices)
from multibody.systems.bicycle.linear_simulation import (LinearSimulation, forward_acceleration, forward_inertia,
                                                         simulate_linear)
from multibody.systems.bicycle.maneuvers import IFTOMM_MANEUVERS, bicycle_outputs, iftomm_maneuver, simulate_nonlinear
from multibody.systems.bicycle.model import (LEAN_STEER, LINEAR_COORDINATES, LINEAR_SPEEDS, model_critical_speeds,
                                             model_eigenvalues, model_linearization, model_matrices, upright_state,
                                             whipple_model)
from multibody.systems.bicycle.parameters import (PARAMETER_INFO, PARAMETER_NAMES, BicycleParameters,
                                                  benchmark_parameters, coerce_parameters, load_parameters,
                                                  save_parameters, validate_parameters)

__all__ = [
    "PARAMETER_NAMES", "PARAMETER_INFO", "BicycleParameters", "benchmark_parameters", "validate_parameters",
    "coerce_parameters", "load_parameters", "save_parameters", "intermediate_quantities", "linear_matrices",
    "characteristic_coefficients", "state_matrices", "EigenSweep", "eigenvalues", "mode_shapes", "CriticalSpeeds",
    "critical_speeds", "forward_inertia", "forward_acceleration", "LinearSimulation", "simulate_linear",
    "whipple_model", "upright_state", "LINEAR_COORDINATES", "LINEAR_SPEEDS", "LEAN_STEER", "model_linearization",
    "model_eigenvalues", "model_matrices", "model_critical_speeds", "IFTOMM_MANEUVERS", "simulate_nonlinear",
    "bicycle_outputs", "iftomm_maneuver",
]
