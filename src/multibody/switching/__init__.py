"""Variable structure, one wing: runs across switches — joint stops with restitution, resting contact on a stop,
latches, releases and separation (seed 001, introduction; the impulse Δp = JᵀΛ of seed 002).

=================  ==========================================================================================
``modes``          the compiled modes (free, locked, resting on a stop), their guards and fixed-step loop
``impulse``        the Delassus matrix J M⁻¹ Jᵀ and the mixed LCP of Newton's impact law
``structure``      the tree's structure: the switch (impacts, latches, releases, rest), its log
``constrained``    the same with the constraint rows of a model with loops (KKT with the locked rows)
``poisson``        the same in (q, p), the Poisson impulses of seed 002
``restructure``    the model after a joint separates (a new tree with a free joint)
``events``         location of the switches and of the user's events on dense output, and the restart;
                   chattering (switches per step) and the step budget across switches
``convergence``    the convergence of the switches' iterative solves: result.info["solves"], ConvergenceWarning
``python_steps``   the fixed-step loop of the structures that have no compiled one
``run``            the run across switches and its Result (``simulate`` calls it for a model with switches)
=================  ==========================================================================================
"""
