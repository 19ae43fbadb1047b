"""Joint limits, latches and releases in the Poisson-impulse formulation: a run across switches whose state is
(q, p) (seed 002, eqs. 6, 7; the impact as a jump of the impulses, Δp = Jᵀ Λ).

A :class:`PoissonStructure` keeps the protocol of the run across switches (``switching/events.py``) on the
state x = [q, p] and leaves the modes and the switches to the tree's :class:`Structure`
(``switching/structure.py``), on the same q and the velocities v = M(q)⁻¹ p (system (6), the O(N)
solver of ``kernels/poisson.py``):

* between switches, with no coordinate locked, ẋ is the Poisson right-hand side (eq. 7) itself;
* with coordinates locked (a joint resting on its stop, a latch locked, a joint held until its release), the
  locked coordinates are prescribed (zero acceleration) and their reactions R — the generalized forces hybrid
  dynamics finds for them (``tree_rhs_hybrid``) — are generalized forces of eq. (7): ṗ = (Ȧᵀ − AᵀΩ) μ + Q + R,
  which keeps their velocities (M⁻¹ p)ₖ at zero; the reactions are the guards of the resting joints as in the
  tree;
* at a switch the tree's impulse problem (one LCP on the Delassus matrix) gives Λ and v⁺ = v⁻ + M⁻¹ Jᵀ Λ; the
  impulses after it are p⁺ = M(q⁺) v⁺ = p⁻ + Jᵀ Λ (q⁺ = q⁻ but for the coordinates put exactly on their stops or
  latch values), in O(N) (``formulations/poisson.impulses``). A separation continues in the new structure's
  (q, p) (the momenta are unchanged: p is formed from the mapped velocities).

Fixed-step methods (RK4, RK2, HEUN, VERLET) step the modes on (q, p) in the Python loop of
``switching/python_steps.py`` (the compiled switching loop is the tree's, on (q, v)); no checkpoints.
"""
import numpy as np

from multibody.formulations.poisson import (PoissonParams, impulses, poisson_rhs, poisson_rhs_extra, solver_code,
                                           velocity)
from multibody.switching.modes import S_FORCE, S_NLOCKED, crossed
from multibody.switching.python_steps import PythonSteps
from multibody.model.packing import tree_params

__all__ = ["PoissonStructure"]


class PoissonStructure(PythonSteps):
    """The structure ``tree`` (a :class:`~multibody.switching.structure.Structure`) on the state (q, p);
    ``solver``: "sweep" or "cholesky" (system (6))."""

    SECOND = "p"

    def __init__(self, tree, solver="sweep"):
        self.tree, self.solver = tree, str(solver).lower()
        code = solver_code(solver)
        self.model, self.index, self.nq, self.nv = tree.model, tree.index, tree.nq, tree.nv
        self.quaternions, self.params = tree.quaternions, tree.params
        self.projects = tree.projects
        self.q_cols, self.v_cols = tree.q_cols, tree.v_cols
        self.pp = PoissonParams(*tree_params(tree.model, tree.tau_const, tree.data), np.int64(code), np.zeros(tree.nv),
                                np.zeros(1, dtype=np.int64))

    @property
    def separated(self):
        return self.tree.separated

    def mode_data(self):
        return self.tree.mode_data()

    def tree_state(self, x):
        """(q, v) of the state (q, p): v = M(q)⁻¹ p by system (6)."""
        q = np.ascontiguousarray(x[:self.nq], dtype=np.float64)
        return np.concatenate([q, velocity(self.model, q, x[self.nq:], self.solver, data=self.tree.data)])

    def poisson_state(self, xv):
        """(q, p) of the state (q, v): p = M(q) v."""
        q = np.ascontiguousarray(xv[:self.nq], dtype=np.float64)
        return np.concatenate([q, impulses(self.model, q, xv[self.nq:], data=self.tree.data)])

    # ---- the protocol of switching/events.py ------------------------------------------------------------
    def start(self, t, x, fresh):
        return self.tree.start(t, self.tree_state(x), fresh)

    def arm(self, t, x):
        return self.tree.arm(t, self.tree_state(x))

    def snap(self, x):
        self.tree.snap(x)     # coordinates only: the q part, shared by both states

    def project(self, t, x):
        return self.tree.project(t, x)

    def rhs(self, t, x):
        """ẋ = (q̇, ṗ) of the mode (module docstring)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(self.nq + self.nv)
        tree = self.tree
        if tree.callback is None and not (tree.resting or tree.S[S_NLOCKED][0]):
            poisson_rhs(float(t), x, self.pp, out)
            return out
        xv = self.tree_state(x)
        extra = np.array(tree.extra(t, xv), dtype=np.float64)
        if tree.resting or tree.S[S_NLOCKED][0]:
            tree.rhs(t, xv)                   # the reactions of the locked coordinates into S[S_FORCE]
            extra += tree.S[S_FORCE]
        poisson_rhs_extra(float(t), x, self.pp, extra, out)
        return out

    def guards(self, t, x):
        return self.tree.guards(t, self.tree_state(x))

    def crossed(self, t, x):
        """Whether a watched guard is below zero at (t, x), right after :meth:`rhs` there: the guards read q (the
        same entries in (q, p) as in (q, v)) and the reactions the right-hand side left."""
        return crossed(float(t), np.ascontiguousarray(x, dtype=np.float64), self.tree.S)

    def reached(self, t, x):
        return self.tree.reached(t, self.tree_state(x))

    def due(self, t, x):
        return self.tree.due(t, self.tree_state(x))

    def switch(self, t, x, reached, log):
        """The tree's switch on (q, v), then p⁺ = M(q⁺) v⁺ (module docstring); a separation continues in the new
        structure's (q, p)."""
        xv, nxt = self.tree.switch(t, self.tree_state(x), reached, log)
        if nxt is None:
            return self.poisson_state(xv), None
        ps = PoissonStructure(nxt, self.solver)
        return ps.poisson_state(xv), ps
