"""The switches of a run with joint limits, latches and releases on a model with constraints (closed loops by cut
joints, points on curves, ...): the structure of ``switching/structure.py`` in the constrained formulation
(seed 001 §3.6; seed 002: ``Δp = Jᵀ Λ``).

:class:`ConstrainedStructure` keeps the switch logic of :class:`~multibody.switching.structure.Structure`
(which rows an impact, a lock or a contact has, Newton's law, the log) and changes the three problems it solves:

* **the mode** (:meth:`ConstrainedStructure.rhs`): the KKT system of the constrained formulation
  (``formulations/constrained.py``, ``kernels/kkt.py``) with the locked coordinates (latched, held until a
  release, resting on a stop) as extra equality rows ``E v̇ = 0`` after the constraint rows ``G v̇ = γ``:

      [[M, Gᵀ, Eᵀ], [G, 0, 0], [E, 0, 0]] [v̇; −λ; −ρ] = [τ − C; γ; 0]

  ρ, the multipliers of the rows E, are the reactions of the locked coordinates (``M v̇ = τ − C + Gᵀλ + Eᵀρ``):
  the guard of a resting stop, exactly as hybrid dynamics gives them on a tree. When ``[G; E]`` has rank nv (no
  degree of freedom left: a 1-dof loop latched) and every constraint is compiled (none depends on time), the mode
  is a rest: ẋ = 0 and v = 0 exactly.
* **the impulse** (:meth:`ConstrainedStructure._impulse_problem`): the rows ``J = [G; E]`` — the constraint rows
  as equalities (``G v⁺ = 0``), then the coordinate rows of the stops and latches —, one mixed linear
  complementarity problem on the Delassus matrix ``D = J M⁻¹ Jᵀ``, and ``v⁺ = v⁻ + M⁻¹ Jᵀ Λ``;
* **the contacts** (:meth:`ConstrainedStructure._contact_problem`): the same rows at the acceleration level,
  ``ü = D λ + J a₀ − [γ; 0]`` with a₀ the accelerations of the free tree.

Rows of G that vanish identically (the out-of-plane rows of a cut hinge in a planar loop) are left out, as the
KKT solve leaves them out. Rows that are dependent — a stop on a coordinate the constraints and the other locked
coordinates already fix, two stops of a 1-dof loop hit at once — make D singular (positive semi-definite): the
problem is then solved by the proximal-point iteration (R. T. Rockafellar, *Monotone operators and the proximal
point algorithm*, SIAM J. Control Optim. 14, 1976): ``Λₖ₊₁`` solves the problem on the positive definite
``D + εI`` with ``b − ε Λₖ``, from Λ₀ = 0, until the velocities ``u⁺ = D Λ + b`` (which are unique) no longer
change (4 eps). It converges to a solution of the singular problem, the impulse along the dependent directions
staying (nearly) zero; ε is ``PROX_EPS`` times the largest eigenvalue of D. Its iterations and last change are in
``result.info["solves"]["proximal"]``, and one that has not converged after ``PROX_ITERATIONS`` goes on from its last
iterate with a ``ConvergenceWarning`` at the end of the run (``switching/convergence.py``). (The KKT solve of the mode is regularized the same way:
``kernels/kkt.py``'s augmented Lagrangian.)

Drift: after every step of the adaptive method, and at the start of every mode (after each switch), the state
is projected onto the constraints (:meth:`ConstrainedStructure.project`: a Newton projection of q of least
mass-weighted change, then a mass-orthogonal projection of v, ``ConstrainedTree.min_norm``) with the locked
coordinates held in their place (their rows E among the rows), and a limited coordinate at its stop (or a latch's
at its value, to ``SAME_INSTANT``) held on it: the state of an event is on the constraints with the joint exactly
on its stop, and the impulse is computed from there.

Fixed-step methods (RK4, RK2, HEUN, VERLET) step the modes in the Python loop of ``switching/python_steps.py``
(the compiled loops of ``modes.py`` have no constraint rows): each step, and each step of a smaller size on
which an event is located, is projected as above. A release that separates a joint makes the next structure
(``Structure.successor``) of the model rebuilt with its loops and compiled constraints on the new coordinates
(``switching/restructure.py``).
"""
import numpy as np

from multibody.errors import ConstraintError, ModelError
from multibody.formulations.base import (
    MAX_INITIAL_CORRECTION,
    initial_correction,
)
from multibody.formulations.constrained import (
    ConstrainedTree,
    constrained_accelerations,
    constrained_project,
    constrained_rhs,
)
from multibody.switching.modes import (
    FREE,
    ON_LOWER,
    ON_UPPER,
    S_FORCE,
    S_KNOWN,
    S_LATCH_SIDE,
    S_LIM_STATE,
    crossed,
)
from multibody.switching.structure import REST_VELOCITY, SAME_INSTANT, Structure
from multibody.kernels.crba import crba_kernel

__all__ = ["PROX_EPS", "RANK_TOL", "ConstrainedStructure"]

#: the regularization of the proximal-point iteration, relative to the largest eigenvalue of D (module docstring)
PROX_EPS = 1e-8
#: an eigenvalue of D (or a singular value of [G; E]) below this fraction of the largest counts as zero: the rows
#: are dependent
RANK_TOL = 1e-10
#: the proximal-point iterations allowed
PROX_ITERATIONS = 200
#: the position residual (m or rad) beyond which the projection has failed: the positions cannot be assembled
ASSEMBLY_TOL = 1e-8


class ConstrainedStructure(Structure):
    """A :class:`~multibody.switching.structure.Structure` of a model with constraints (module docstring):
    the same arguments; ``max_correction``: how far (rad or m) the projection may move the initial positions onto
    the constraints (``ConstraintError`` beyond; None: any)."""

    #: fixed-step runs step in the Python loop of ``switching/python_steps.py`` (the compiled loop of the tree's
    #: modes has no constraint rows)
    compiled_steps = False

    def __init__(self, model, tau_const, callback, q_names, v_names, index, rest_velocity=REST_VELOCITY,
                 max_correction=MAX_INITIAL_CORRECTION):
        super().__init__(model, tau_const, callback, q_names, v_names, index, rest_velocity)
        self.ct = ConstrainedTree(model, tau=self.tau_const.copy(), extra_rows=model.nv)
        self.w = self.ct.w
        self.projects = True
        #: the compiled right-hand side and projection of the constrained formulation serve the modes with nothing
        #: locked (every constraint compiled, no torque callback): between impacts the run costs what a run
        #: without limits costs
        self.fast = self.ct.compiled and callback is None
        self.max_correction = max_correction
        self.correction = None   # how far the initial state was moved onto the constraints
        self.t_switch = 0.0
        self._rest = None        # no degree of freedom left in the mode (None: not known yet)
        self._q_dof = None       # the positions of the last switch (the degrees of freedom of the log)
        # the q index of each velocity coordinate of a joint with q̇ = v (limits, latches and held joints have them)
        self._q_of_v = {}
        for j in model.joints[1:]:
            if j.q_slice.stop - j.q_slice.start == j.v_slice.stop - j.v_slice.start:
                for i in range(j.v_slice.stop - j.v_slice.start):
                    self._q_of_v[j.v_slice.start + i] = j.q_slice.start + i

    # ---- rows --------------------------------------------------------------------------------------------
    def _fill(self, t, q, v):
        """The constraint rows at (t, q, v) into the work arrays; returns their number m."""
        return self.ct.rows.fill(q, v, t)

    def _constraint_jacobian(self, t, q, v):
        """(G, γ) of the constraint rows at (t, q, v) without the rows that vanish identically."""
        m = self._fill(t, q, v)
        G = self.w.G[:m]
        size = np.abs(G).max(axis=1) if m else np.zeros(0)
        keep = size > RANK_TOL * max(float(size.max(initial=0.0)), 1e-300)
        return G[keep].copy(), self.w.gam[:m][keep].copy()

    def _known(self):
        return np.flatnonzero(self.S[S_KNOWN])

    def _at_rest(self, t, q):
        """Whether the mode leaves no degree of freedom: ``[G; E]`` of rank nv at q, and no Python constraint (a
        user function f(q, t) = 0 may move with time: its motion is prescribed, not a rest)."""
        if self._rest is None:
            self._rest = not self.ct.rows.python and self.dof(q, t) == 0
        return self._rest

    def dof(self, q=None, t=None):
        """The degrees of freedom of the mode: nv − rank [G; E] (at q, else at the state of the last switch)."""
        q = self._q_dof if q is None else q
        if q is None:
            return super().dof()
        G, _ = self._constraint_jacobian(self.t_switch if t is None else t, q, None)
        E = np.eye(self.nv)[self._known()]
        J = np.vstack([G, E])
        if not J.shape[0]:
            return self.nv
        s = np.linalg.svd(J, compute_uv=False)
        return int(self.nv - np.count_nonzero(s > RANK_TOL * s[0]))

    def sync(self):
        super().sync()
        self._rest = None

    def step_project(self, t, x):
        """:meth:`project` after a step of the fixed-step loop (``switching/python_steps.py``), which is also the
        dense output an event is located on: the free coordinates near a stop or a latch value are not held there
        (that would make each guard zero over an interval around its root, and put the root located at the interval's
        end: up to ``SAME_INSTANT`` past the stop, energy gained at each impact); the switch puts them on it. A mode
        that is a rest keeps its state as the switch left it (on the constraints to round-off; a Newton step there
        would move a coordinate by an ulp at every step)."""
        x = np.array(x, dtype=np.float64)
        if self._known().size and self._at_rest(t, x[:self.nq]):
            x[self.nq:] = 0.0
            return x
        return self.project(t, x, near=False)

    def crossed(self, t, x):
        """Whether a watched guard is below zero at (t, x), right after :meth:`rhs` there (its reactions are the
        resting joints' guards): the signs of ``modes.crossed``, for the fixed-step loop."""
        return crossed(float(t), np.ascontiguousarray(x, dtype=np.float64), self.S)

    # ---- the mode ----------------------------------------------------------------------------------------
    def rhs(self, t, x):
        """ẋ of the mode at (t, x): the constrained formulation's KKT solve with the locked coordinates' rows
        (module docstring); their reactions into ``S[S_FORCE]``."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        nq = self.nq
        q, v = x[:nq], x[nq:]
        known = self._known()
        out = np.empty(nq + self.nv)
        if not known.size and self.fast:   # nothing locked: the constrained formulation's compiled right-hand side
            constrained_rhs(float(t), x, self.w, out)
            self.S[S_FORCE][:] = 0.0
            if np.isnan(out[nq]):
                raise ConstraintError(f"model '{self.model.name}': the mass matrix or the constraint system is "
                                      f"singular at t = {t:.6g}", time=t, joints=self.ct.rows.names)
            return out
        m0 = self._fill(t, q, v)
        m = self.ct.unit_rows(m0, known)
        if not constrained_accelerations(float(t), x, self.w, np.ascontiguousarray(self.extra(t, x)), m, out[nq:]):
            raise ConstraintError(f"model '{self.model.name}': the mass matrix or the constraint system is singular "
                                  f"at t = {t:.6g}", time=t, joints=self.ct.rows.names)
        out[:nq] = self.w.xdot[:nq]
        force = self.S[S_FORCE]
        force[:] = 0.0
        force[known] = self.w.lam[m0:m]
        if known.size and self._at_rest(t, q):
            out[:] = 0.0
        return out

    # ---- drift ---------------------------------------------------------------------------------------------
    def _held_in_place(self, q, near=True):
        """[(v index, q index, value)] of the coordinates the projection keeps in place: the locked ones (on their
        stop, latch value, or where they are), and (``near``) the free limited ones at a stop, the armed latches'
        coordinates at their value (to ``SAME_INSTANT``)."""
        u, S = self.u, self.S
        state = S[S_LIM_STATE]
        place = {}
        for c in self._known():
            if int(c) in self._q_of_v:
                place[int(c)] = q[self._q_of_v[int(c)]]
        for k in range(self.nlim):
            c, i = int(u.lim_v[k]), int(u.lim_q[k])
            tol = SAME_INSTANT * (1.0 + abs(q[i]))
            if state[k] in (ON_LOWER, ON_UPPER):
                place[c] = u.lower[k] if state[k] == ON_LOWER else u.upper[k]
            elif state[k] == FREE and near:
                for stop in (u.lower[k], u.upper[k]):
                    if abs(q[i] - stop) <= tol:
                        place[c] = stop
        for j in range(self.nlat):
            c, i = int(u.latch_v[j]), int(u.latch_q[j])
            if j in self.latched or (near and S[S_LATCH_SIDE][j] != 0.0 and abs(q[i] - u.latch_value[j]) <=
                                     SAME_INSTANT * (1.0 + abs(q[i]))):
                place[c] = u.latch_value[j]
        return [(c, self._q_of_v[c], value) for c, value in sorted(place.items())]

    def project(self, t, x, near=True):
        """x projected onto the constraints with the coordinates of :meth:`_held_in_place` kept there: positions
        (Newton, least mass-weighted change, down to round-off), then velocities (mass-orthogonal, onto
        ``[G; E] v = 0`` with E the locked coordinates); v = 0 exactly when the mode is a rest. A
        ``ConstraintError`` naming the constraints when the positions cannot be assembled."""
        nq = self.nq
        q = np.array(x[:nq], dtype=np.float64)     # (normalized by the projection)
        v = np.array(x[nq:], dtype=np.float64)
        held = self._held_in_place(q, near)
        if not held and self.fast:   # nothing held in place: the constrained formulation's compiled projection
            y = np.array(x, dtype=np.float64)
            constrained_project(y, self.w)
            if np.isfinite(y[0]):
                return y
        cv = np.array([h[0] for h in held], dtype=np.int64)
        cq = np.array([h[1] for h in held], dtype=np.int64)
        value = np.array([h[2] for h in held], dtype=np.float64)
        q = self.ct.project_position(q, t, held=(cv, cq, value))
        self.solves.record("projection", *self.ct.last_projection, t)
        known = self._known()
        v = self.ct.project_velocity(q, v, t, known=known)
        if known.size and self._at_rest(t, q):
            v[:] = 0.0
        return np.concatenate([q, v])

    def start(self, t, x, fresh):
        """:meth:`Structure.start`, then x (in place) onto the constraints (:meth:`project`; at the start of the
        run the correction is checked against ``max_correction`` and kept in ``correction``)."""
        super().start(t, x, fresh)
        y = self.project(t, x)
        if fresh:
            nq = self.nq
            self.correction = initial_correction(self.model, x[:nq], y[:nq], x[nq:], y[nq:], self.max_correction,
                                                 self.ct.rows.names)
        x[:] = y
        self._q_dof = x[:self.nq].copy()
        return super().start(t, x, False)

    # ---- the switch --------------------------------------------------------------------------------------
    def switch(self, t, x, reached, log):
        """:meth:`Structure.switch` with the impulse and contact problems of the constraints (module docstring); a
        mode that leaves no degree of freedom starts at rest exactly (v = 0, the unique solution of ``[G; E] v = 0``
        that the impulse gives to round-off)."""
        self.t_switch = float(t)
        self._q_dof = np.array(x[:self.nq], dtype=np.float64)
        x, nxt = super().switch(t, x, reached, log)
        if nxt is None and self._known().size and self._at_rest(t, x[:self.nq]):
            x[self.nq:] = 0.0
        return x, nxt

    def _mass_response(self, q, J):
        """(Y, D) = (M⁻¹ Jᵀ, J M⁻¹ Jᵀ) at q (CRBA, ``kernels/crba.py``)."""
        M = np.empty((self.nv, self.nv))
        tp = self.w.tree
        crba_kernel(tp.mi, tp.mf, np.ascontiguousarray(q, dtype=np.float64), tp.work, M)
        try:
            L = np.linalg.cholesky(M)
        except np.linalg.LinAlgError:
            raise ModelError(f"model '{self.model.name}': the mass matrix is not positive definite at the switch; "
                             "the impulse cannot be computed", element=self.model.name) from None
        Y = np.linalg.solve(L.T, np.linalg.solve(L, J.T))
        D = J @ Y
        return Y, 0.5 * (D + D.T)

    def _rows_matrix(self, G, rows):
        E = np.zeros((len(rows), self.nv))
        for i, r in enumerate(rows):
            E[i, r[0]] = r[1]
        return np.vstack([G, E])

    def _impulse_problem(self, q, v, rows):
        """``(Y, D, u⁻, nb)`` with J = [G; the coordinate rows] (module docstring): nb = the constraint rows."""
        G, _ = self._constraint_jacobian(self.t_switch, q, v)
        J = self._rows_matrix(G, rows)
        Y, D = self._mass_response(q, J)
        return Y, D, J @ v, G.shape[0]

    def _contact_problem(self, t, x, rows):
        """``(D, b, nb)``: ``b = J a₀ − [γ; 0]`` on J = [G; the coordinate rows] (module docstring)."""
        q, v = x[:self.nq], x[self.nq:]
        G, gam = self._constraint_jacobian(t, q, v)
        J = self._rows_matrix(G, rows)
        _, D = self._mass_response(q, J)
        b = J @ self.free_accelerations(t, x)
        b[:G.shape[0]] -= gam
        return D, b, G.shape[0]

    def _lcp(self, D, b, bilateral, kind="impact"):
        """The mixed LCP ``w = D Λ + b`` (``switching/impulse.py``); for dependent rows (D singular), the
        proximal-point iteration of the module docstring, its iterations and last change of the velocities (relative)
        recorded in the run's ``SolveLog`` (``switching/convergence.py``); one that does not converge within
        ``PROX_ITERATIONS`` goes on from its last iterate, recorded as such (the run then warns)."""
        if not len(b):
            return np.zeros(0), np.zeros(0)
        ev = np.linalg.eigvalsh(D)
        if ev[0] > RANK_TOL * ev[-1]:
            return super()._lcp(D, b, bilateral, kind)
        eps = PROX_EPS * ev[-1]
        De = D + eps * np.eye(len(b))
        lam = np.zeros(len(b))
        change, done, it = np.inf, False, 0
        while not done and it < PROX_ITERATIONS:
            it += 1
            new, _ = super()._lcp(De, b - eps * lam, bilateral, kind)
            # converged when the velocities w = D Λ + b no longer change (Λ itself may creep along the dependent
            # directions when round-off makes the rows' right-hand sides inconsistent by a few ulps)
            scale = max(float(np.max(np.abs(b))), float(np.max(np.abs(D))) * float(np.max(np.abs(new))), 1e-300)
            change = float(np.max(np.abs(D @ (new - lam)))) / scale
            done = change <= 4.0 * np.finfo(float).eps
            lam = new
        self.solves.record("proximal", it, change, done, self.t_now)
        w = D @ lam + b
        w[np.asarray(bilateral, dtype=bool)] = 0.0
        return lam, w

