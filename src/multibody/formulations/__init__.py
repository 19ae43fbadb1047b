"""How the equations of motion are formed from a Model: one module per formulation, each registered by name.

=================  =====================================================================================
``tree``           minimal coordinates of a tree, O(N) articulated bodies (seed 001 §3.4–3.5)
``constrained``    tree + the Model's constraints with multipliers and drift control (seed 001 §3.6)
``cartesian``      absolute coordinates of every body + multipliers (seed 001 ch. 2)
``stabilized``     tree + constraints with seed 000's reactions-as-controls stabilization
``poisson``        (q, p) in Poisson impulses, O(N) sweep or Cholesky solution of the velocities (seed 002)
``symbolic``       minimal coordinates of a tree, generated code of the symbolic H, h, g (multibody.symbolic)
=================  =====================================================================================

``simulate(model, ..., formulation=name)`` picks one; :mod:`multibody.formulations.base` holds the registry. Contact
(``multibody.contact``) and runs across switches (``multibody.switching``) are wings above the formulations.
"""
from multibody.formulations import base, tree  # noqa: F401
from multibody.formulations import constrained, cartesian, stabilized, poisson  # noqa: F401  (each registers itself)
from multibody.formulations import symbolic  # noqa: F401  (registers "symbolic")
