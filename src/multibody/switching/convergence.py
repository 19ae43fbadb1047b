"""The convergence of the iterative solves of a run across switches, as ``result.info["solves"]`` reports it.

A switch solves problems, and some of them iteratively:

* ``"impact"``: the impact's mixed linear complementarity problem (``switching/impulse.py``: Murty's principal
  pivoting, finite for a positive definite Delassus matrix; its iterations are the pivots, its residual the
  violation of the problem by the solution returned, ``w = D Λ + b``: |w| on the equality and active rows, the
  negative parts of Λ and w, relative to the size of the terms);
* ``"contact"``: the same problem at the acceleration level, which decides which stops hold;
* ``"proximal"``: the proximal-point iteration of dependent rows (``switching/constrained.py``), converged when
  the velocities no longer change;
* ``"projection"``: the Newton projection of a model with constraints onto them, with coordinates held in place
  (``formulations/constrained.py``), converged when it ends below its tolerance before its step budget.

:class:`SolveLog` gathers, per kind, the number of solves, the most iterations one took, the worst residual and
how many stopped before converging (and when the first did). At the end of the run the log is
``result.info["solves"]`` — a failed run's partial Result has it too — and a kind with unconverged solves gives one
:class:`~multibody.errors.ConvergenceWarning` naming it, the model, the count and the worst residual: the run goes
on from the last iterate, never silently.
"""
import warnings

from multibody.errors import ConvergenceWarning

__all__ = ["SolveLog", "SOLVES"]

#: the kinds of solve, and what each is (in the warning)
SOLVES = {
    "impact": "impact problems (the mixed LCP of Newton's law)",
    "contact": "contact problems (the acceleration-level LCP of the stops that hold)",
    "proximal": "proximal-point iterations of dependent rows",
    "projection": "Newton projections onto the constraints",
}


class SolveLog:
    """Per kind of solve (:data:`SOLVES`): ``solves``, the most ``iterations`` of one, the ``worst_residual``,
    the ``unconverged`` count and ``first_unconverged_t`` (module docstring)."""

    def __init__(self):
        self.stats = {}

    def record(self, kind, iterations, residual, converged, t=None):
        """One solve of ``kind``: its iterations, its residual (relative, as the kind defines it), whether it
        converged, and the run's time (None when not known)."""
        s = self.stats.setdefault(kind, {"solves": 0, "iterations": 0, "worst_residual": 0.0, "unconverged": 0,
                                         "first_unconverged_t": None})
        s["solves"] += 1
        s["iterations"] = max(s["iterations"], int(iterations))
        residual = float(residual)
        if not residual <= s["worst_residual"]:      # (NaN is kept: the worst of all)
            s["worst_residual"] = residual
        if not converged:
            s["unconverged"] += 1
            if s["first_unconverged_t"] is None and t is not None:
                s["first_unconverged_t"] = float(t)

    def info(self):
        """The log as ``result.info["solves"]``: a dict per kind that was solved at least once."""
        return {kind: dict(s) for kind, s in self.stats.items()}

    def warn(self, model_name, stacklevel=2):
        """One ConvergenceWarning per kind with unconverged solves (module docstring)."""
        for kind, s in self.stats.items():
            if s["unconverged"]:
                when = "" if s["first_unconverged_t"] is None else f", the first at t = {s['first_unconverged_t']:.10g}"
                warnings.warn(f"model '{model_name}': {s['unconverged']} of {s['solves']} {SOLVES.get(kind, kind)} "
                              f"stopped before converging{when} (worst residual {s['worst_residual']:.3g}); the run "
                              f"went on from the last iterate (result.info['solves']['{kind}'])", ConvergenceWarning,
                              stacklevel=stacklevel + 1)
