"""Contact, one wing: everything from the packed collision sets to the contact models' runs.

In the order of the pipeline:

=====================  =======================================================================================
``shapes``             the packed geometry (``gi``, ``gf``, hull vertices), world poses and support functions
``collision_sets``     a Model's collision elements packed for detection, and the pairs it tries
``gjk``                GJK distance and EPA penetration of convex shapes
``detection``          the narrow phase: contact points, normals and distances of each pair (closed forms,
                       manifolds, GJK/EPA for the rest)
``compliant_forces``   Hunt–Crossley normal forces and regularized Coulomb friction
``compliant``          the compliant contact model: those forces in the tree's right-hand side (any method)
``stepping_solver``    one velocity-level time step with exact Coulomb cones (projected Gauss–Seidel)
``stepping_loop``      the compiled loop over the time steps
``models``             the registry of contact models (``simulate(..., contact=name)``), their shared set-up,
                       the time-stepping model and its run
=====================  =======================================================================================

``import multibody.contact`` registers both contact models.
"""
from multibody.contact import models, compliant  # noqa: F401  (each registers its contact model)
