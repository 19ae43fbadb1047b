"""The public numeric algorithms, one module per family (each ``algo(model, q, v, ..., data=None)`` returns numpy
arrays; ``multibody.rnea`` etc. are these functions):

=================  ==========================================================================================
``dynamics``       RNEA, CRBA, ABA, hybrid dynamics, energies, forward kinematics, points, centre of mass,
                   joint wrenches and their batched twins (seed 001 §3.4–3.5); the argument handling the others
                   share (``as_vector``, ``data_at``, ...)
``derivatives``    the derivatives of the dynamics: ``rnea_derivatives``, ``aba_derivatives``, ``minv``,
                   ``coriolis_matrix`` and batched twins (``docs/derivatives.md``)
``frames``         a frame's placement, velocity, acceleration, Jacobian and its rate
``centroidal``     the centre of mass's Jacobian and the centroidal momentum, its map and rate
``control``        the controllers' torques (``controller_torques``)
=================  ==========================================================================================
"""
