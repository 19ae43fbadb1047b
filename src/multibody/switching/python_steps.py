"""The fixed-step part of the protocol of a run across switches (``switching/events.py``) as a Python loop, for
the structures that have no compiled loop: a model with constraints (``switching/constrained.py``:
a KKT solve and a projection onto the constraints each step) and the Poisson-impulse formulation
(``switching/poisson.py``).

The loop makes the operations of the compiled one (``switching.modes.switching_run``, ``mode_step``) with
the structure's own right-hand side ``rhs(t, x)``:

* a step's stages are the compiled tableau arithmetic itself (``integrate/tableaux.stage_state``, the same
  function the compiled loops call: the same roundings, in the same order; the classical RK4 written out in
  ``modes._step`` makes the same operations);
* after the step, where the structure projects (``projects``), its ``step_project(t + h, x)`` (by default its
  ``project``): the quaternions
  normalized, a model with constraints put back onto them (positions and velocities) — the step of any size h,
  so projected, is also the dense output the run locates an event on;
* then ẋ at the step's end, which is the next step's first stage (and leaves the reactions of the locked
  coordinates, the guards of the resting joints), and the guards' signs (``crossed(t, x)``): the loop stops
  before a step after which a watched guard is below zero (status :data:`~multibody.switching.events.EVENT`) or
  the state is not finite (status 1).

On a tree (no constraints) a :class:`~multibody.switching.structure.Structure` stepped by this loop gives
the compiled loop's states bit for bit (``tests/test_switching_fixed.py``). The cost per step is that of the
structure's right-hand side called from Python: 3.4–3.7× the compiled loop's on a one- or two-link tree (RK4);
on a model with constraints the KKT solve and the projection dominate (``docs/variable-structure.md``).
"""
from multibody.switching.events import EVENT
from multibody.integrate.fixed_step import stormer6_python_step
from multibody.integrate.tableaux import (
    METHODS,
    TABLEAU_C,
    TABLEAU_STAGES,
    all_finite,
    stage_state,
)

__all__ = ["PythonSteps", "python_run_steps", "python_step", "STORMER6"]

#: the code of STORMER6 (not a tableau: its step is ``fixed_step.stormer6_python_step``)
STORMER6 = METHODS["STORMER6"]


def python_step(st, t, x, h, method, xt, K, k0=0):
    """One step of the fixed-step ``method`` (code of ``tableaux.METHODS``: RK2, HEUN, RK4, VERLET; STORMER6, the
    composition of implicit Störmer–Verlet steps of ``fixed_step.stormer6_python_step`` on x = [q, p or v]) of the
    structure ``st`` from (t, x) into ``xt``, ``K[k0]`` holding ``st.rhs(t, x)`` (stage s > 0 goes to ``K[s]``),
    then ``st.project(t + h, xt)`` where ``st.projects``. Of any size h > 0 (a one-step method): the dense output of
    a fixed-step run. An ``ArithmeticError`` when STORMER6's implicit equations do not converge."""
    if method == STORMER6:
        new, converged = stormer6_python_step(st.rhs, t, x, h, st.nq)
        if not converged:
            raise ArithmeticError(f"the implicit Störmer–Verlet equations of STORMER6 did not converge in the step "
                                  f"from t = {t:.17g} (h = {h:g}): take a smaller step")
        xt[:] = new
    else:
        ns = TABLEAU_STAGES[method]
        for s in range(1, ns + 1):
            stage_state(method, s, x, h, st.nq, K, k0, xt)
            if s != ns:
                K[s] = st.rhs(t + TABLEAU_C[method, s] * h, xt)
    if st.projects:
        xt[:] = st.step_project(t + h, xt)


def python_run_steps(st, x, t0, h, first, nsteps, save, method, ts, xs, xt, K):
    """Step the mode of ``st`` from x, the state at step ``first`` of the grid ``t0 + k h``, through the steps up to
    ``nsteps`` (module docstring), saving the states of the step numbers ``save`` (ascending) into ``ts``, ``xs``;
    x becomes the state at the last step done. Returns ``(rows saved, status, last step done)``: status 0, 1 (the
    state became non-finite in the next step) or :data:`EVENT` (a guard crosses in the next step). An exception of
    the structure (its right-hand side, its projection) propagates with ``steps_done = (rows saved, last step
    done)``."""
    nsave = save.shape[0]
    k = 0
    t = t0 + first * h
    if nsave > 0 and save[0] == first:
        ts[0] = t
        xs[0] = x
        k = 1
    k0 = 0
    status, done = 0, first
    try:
        K[k0] = st.rhs(t, x)
        for step in range(first, nsteps):
            t = t0 + step * h
            python_step(st, t, x, h, method, xt, K, k0)
            if not all_finite(xt):
                status = 1
                break
            t1 = t0 + (step + 1) * h
            k1 = 4 - k0
            K[k1] = st.rhs(t1, xt)
            if st.crossed(t1, xt):
                status = EVENT
                break
            x[:] = xt
            k0 = k1
            done = step + 1
            if k < nsave and save[k] == done:
                ts[k] = t1
                xs[k] = x
                k += 1
    except Exception as exc:
        exc.steps_done = (k, done)
        raise
    return k, status, done


class PythonSteps:
    """``run_steps`` and ``step`` of the protocol of ``switching/events.py`` as the Python loop of the module
    docstring, for a structure with ``nq``, ``projects``, ``rhs(t, x)``, ``project(t, x)`` and ``guards(t, x)``;
    ``step_project(t, x)``: the projection after each step, its ``project`` unless it has its own.
    ``crossed(t, x)``: whether a watched guard is below zero at (t, x), called right after ``rhs(t, x)``; here the
    least watched guard's sign, which a structure may replace by a cheaper test of the same signs.
    ``SECOND``: the letter of the state's second half in the reasons of failures (``v``; ``p`` for impulses)."""

    SECOND = "v"

    def entry_names(self):
        """The labels of the state's entries for the reasons of failures: ``q 'joint.coordinate'``, then
        ``v '...'`` (:attr:`SECOND`)."""
        return ([f"q '{c}'" for c in self.model.coordinate_names()]
                + [f"{self.SECOND} '{c}'" for c in self.model.velocity_names()])

    def run_steps(self, x, t0, h, first, nsteps, save, method, ts, xs, xt, K):
        return python_run_steps(self, x, t0, h, first, nsteps, save, method, ts, xs, xt, K)

    def step(self, t, x, h, method, xt, K):
        python_step(self, t, x, h, method, xt, K)

    def step_project(self, t, x):
        return self.project(t, x)

    def crossed(self, t, x):
        return bool(self.guards(t, x) < 0.0)
