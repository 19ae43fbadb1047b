"""What the formulations share, below them: the constraint rows of a Model and the joint reactions.

The formulations (``multibody.formulations``) each map these to their own coordinates; the analyses above them
read the same rows. One home per shared concept, never inside one of its users' modules.

=================  ==========================================================================================
``constraint_rows`` the rows of the Model's constraints in tree coordinates: residuals, Jacobian, γ; the
                   compiled workspace (``Work``) of the constrained formulations
``reactions``      the force and moment each joint transmits, in its own frame (``mb.joint_reactions``,
                   ``Result.reactions``), from the tree's Newton–Euler pass and the constraint rows' multipliers
=================  ==========================================================================================
"""
