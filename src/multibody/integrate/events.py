"""A run across switches: joint limits, latches and releases — event location, the switch, the restart.

The run goes from mode to mode (``integrate/switching.py``): it integrates the mode until one of its guards
crosses zero, locates that instant to machine precision — the root of the guard by a bracketing solver (Brent's
method) on the integrator's dense output —, makes the switch at the state there (``integrate/switches.py``:
impulses, contacts, locks, releases, a new structure after a separation) and restarts from the state after it.

* Adaptive methods (DOP853, RK45, ...): each mode is a run of ``integrate/adaptive.py`` with the least watched
  guard as a terminal event, located on the step's interpolant (``solve_ivp``'s protocol).
* Fixed-step methods (RK4, RK2, HEUN, VERLET): each mode runs in the compiled loop of ``switching.py``, which checks
  the guards after every step and stops before the step in which one crosses. The dense output of that step is the
  step itself taken with a smaller size s ∈ (0, h] (of the method's order): the event is its root, and from the
  state after the switch one step of the rest of the interval brings the run back onto the grid ``t0 + k h``.

Outputs. The states of the requested output times, and at every switch two rows at its instant: the state just
before and the state just after (``event_rows``). A Result holds one column per coordinate of every structure the
run can pass through — the model's coordinates, then the coordinates of the free joint of each joint that can
separate (``<joint>.x`` … ``<joint>.qz``, velocities ``<joint>.wx`` … ``<joint>.vz``) — with NaN where a
structure does not have that coordinate. ``result.events`` is the switch log (``integrate/switches.py``),
``result.structures`` the models in turn (``{"t": from when, "model": Model}``), and ``result.info["structures"]``
their sizes.
"""
import time

import numpy as np

from multibody.errors import IntegrationError, ModelError
from multibody.formulations.tree import tree_energy
from multibody.integrate.adaptive import PROJECTABLE, solve_adaptive
from multibody.integrate.fixed_step import METHODS, STAGES
from multibody.integrate.manifold import has_quaternions, normalize_quaternions
from multibody.integrate.switches import REST_VELOCITY, Structure, separated_structure
from multibody.integrate.switching import EVENT, S_GUARD, S_MASK, mode_rhs, mode_step, switching_run
from multibody.model.restructure import free_joint_names
from multibody.result import Result

__all__ = ["run_switching", "union_names", "MAX_SWITCHES_AT_ONCE"]

#: the switches allowed at one instant (to round-off) before the run is declared chattering
MAX_SWITCHES_AT_ONCE = 64
_EPS = np.finfo(float).eps


def union_names(model):
    """The run's columns (module docstring): ``(q names, v names)`` of the model and of the free joint of each
    joint with a release that separates it."""
    qn, vn = list(model.coordinate_names()), list(model.velocity_names())
    for rel in model.unilateral.releases:
        if rel.mode == "separate":
            fq, fv = free_joint_names(rel.joint)
            qn += [n for n in fq if n not in qn]
            vn += [n for n in fv if n not in vn]
    return qn, vn


def refuse(model, formulation, tau, method_key, events, checkpoint):
    """A ``ModelError`` for what a switching run of ``model`` does not do: another formulation than the tree, a
    moving base, general joints, constraints, user events, a checkpoint, a torque callback with a fixed step."""
    name = getattr(model, "name", "")
    why = None
    if formulation != "tree":
        why = (f"formulation {formulation!r}: joint limits, latches and releases are simulated in the 'tree' "
               "formulation", "formulation")
    elif model.constraints:
        why = (f"it has constraints or cut joints ({', '.join(c.name for c in model.constraints)}); joint limits, "
               "latches and releases are simulated on trees", "constraints")
    elif model.base_motion is not None:
        why = ("its ground moves (base motion); a switching run needs a fixed ground", "base motion")
    elif 8 in np.asarray(model.jtype):
        why = ("it has general joints; a switching run needs the compiled joints", "general joint")
    elif events is not None:
        why = ("events= of simulate: the switches are the model's own events (result.events)", "events")
    elif checkpoint is not None:
        why = ("checkpoint=: a switching run is not checkpointed yet", "checkpoint")
    elif method_key in METHODS and METHODS[method_key] == METHODS["STORMER6"]:
        why = ("STORMER6 integrates the Poisson formulation; use RK4, RK2, HEUN or VERLET", "method")
    elif method_key in METHODS and (callable(tau) or (tau is None and model.torque_callback is not None)):
        why = ("a Python torque callback with a fixed-step method: the switching loop is compiled; use an "
               "adaptive method (DOP853, ...)", "tau")
    if why is not None:
        raise ModelError(f"model '{name}' has joint limits, latches or releases and {why[0]}", element=why[1])


class _Rows:
    """The output rows of the run: time, the structure, the state in that structure's coordinates."""

    def __init__(self):
        self.t, self.s, self.x = [], [], []

    def add(self, t, s, x):
        self.t.append(float(t))
        self.s.append(s)
        self.x.append(np.array(x, dtype=float))


def run_switching(model, q0, v0, t0, t_end, method, h=None, nsteps=None, save=None, rtol=1e-9, atol=1e-12,
                  t_eval=None, tau=None, energy=True, max_steps=None, progress=False, event_rows=True,
                  rest_velocity=REST_VELOCITY):
    """Integrate ``model`` (with joint limits, latches or releases) from ``(q0, v0)`` at ``t0`` to ``t_end`` across
    its switches (module docstring); return the :class:`multibody.Result` with ``events`` and ``structures``.

    ``method``: an adaptive method (``rtol``, ``atol``, output times ``t_eval`` or every step, ``max_steps`` in
    all) or a fixed-step one (``h`` and ``nsteps`` of the grid, ``save`` the step numbers to output, from
    ``simulation.output_steps``). ``tau``: constant generalized forces (nv,) or a callable ``tau(t, q, v)``
    (adaptive methods). A failure (a non-finite state, the step limit, chattering: more than
    ``MAX_SWITCHES_AT_ONCE`` switches at one instant) raises ``IntegrationError`` whose ``result`` is the run up to
    it, events included."""
    run = _SwitchingRun(model, q0, v0, t0, t_end, str(method).upper(), h, nsteps, save, rtol, atol, t_eval, tau,
                        energy, max_steps, progress, event_rows, rest_velocity)
    return run.run()


class _SwitchingRun:
    def __init__(self, model, q0, v0, t0, t_end, key, h, nsteps, save, rtol, atol, t_eval, tau, energy, max_steps,
                 progress, event_rows, rest_velocity):
        self.model, self.t0, self.t_end, self.key = model, float(t0), float(t_end), key
        self.fixed = key in METHODS
        self.h, self.nsteps, self.save = h, nsteps, save
        self.rtol, self.atol, self.t_eval = rtol, atol, t_eval
        self.energy, self.max_steps, self.progress, self.event_rows = energy, max_steps, progress, event_rows
        self.q_names, self.v_names = union_names(model)
        callback = model.torque_callback if tau is None else tau
        tau_const = None
        if callback is not None and not callable(callback):
            tau_const = np.array(callback, dtype=float).reshape(-1)
            if tau_const.shape != (model.nv,) or not np.all(np.isfinite(tau_const)):
                raise ModelError(f"tau must be a callable tau(t, q, v) or {model.nv} finite numbers (model "
                                 f"'{model.name}'), got {callback!r}", element="tau")
            callback = None
        self.st = Structure(model, tau_const, callback, self.q_names, self.v_names, 0, rest_velocity)
        self.structures = [{"t": self.t0, "model": model}]
        self.x0 = np.concatenate([q0, v0]).astype(float)
        if has_quaternions(self.st.params[0]):
            normalize_quaternions(self.x0, self.st.params)
        self.rows, self.log = _Rows(), []
        self.steps = self.nfev = 0
        self.at_once = (None, 0)

    # ---- the run -------------------------------------------------------------------------------------------
    def run(self):
        cpu, wall = time.process_time(), time.perf_counter()
        self.cpu, self.wall = cpu, wall
        t, x = self.t0, self.x0
        try:
            reached = self.st.start(t, x, fresh=True)
            if reached.any():
                x = self._switch(t, x, reached, initial=True)
            if self.fixed:
                self._run_fixed(x)
            else:
                self._run_adaptive(t, x)
        except ModelError:
            raise
        except _Failure as exc:
            raise IntegrationError(f"{self.key} integration of model '{self.model.name}' failed: {exc.reason}",
                                   result=self._result("failed", exc.reason), reason=exc.reason) from exc.__cause__
        except Exception as exc:  # an exception of a callback, of the solver or of a switch: keep what was done
            reason = f"{type(exc).__name__} raised during the run: {exc}"
            raise IntegrationError(f"{self.key} integration of model '{self.model.name}' failed: {reason}",
                                   result=self._result("failed", reason), reason=reason) from exc
        return self._result("success", "completed" if self.fixed else "the end of the interval was reached")

    def _switch(self, t, x, reached, initial=False):
        """The switch at (t, x) (``integrate/switches.py``), with the rows before and after it; a separation
        starts the next structure. Returns the state after it."""
        before = len(self.log)
        if self.event_rows and not initial:
            self.rows.add(t, self.st.index, x)
        x, joint = self.st.switch(t, x, reached, self.log)
        if joint is not None:
            self.st, x = separated_structure(self.st, t, x, joint, self.q_names, self.v_names, self.log)
            self.structures.append({"t": float(t), "model": self.st.model})
            again = self.st.start(t, x, fresh=False)
            if again.any():
                x, _ = self.st.switch(t, x, again, self.log)
        if self.event_rows and not initial:
            self.rows.add(t, self.st.index, x)
        self._count(t, len(self.log) - before)
        return x

    def _count(self, t, n):
        """Fail when more than MAX_SWITCHES_AT_ONCE switches happen at one instant (chattering)."""
        t_prev, count = self.at_once
        same = t_prev is not None and abs(t - t_prev) <= 16 * _EPS * max(1.0, abs(t))
        count = (count if same else 0) + max(n, 1)
        self.at_once = (t, count)
        if count > MAX_SWITCHES_AT_ONCE:
            raise _Failure(f"{count} switches at t = {t:.17g} (chattering: the mode changes again at the same instant; "
                           f"last: {self.log[-1] if self.log else None})")

    # ---- adaptive methods ----------------------------------------------------------------------------------
    def _run_adaptive(self, t, x):
        te = None if self.t_eval is None else np.asarray(self.t_eval, dtype=float)
        first = True
        while True:
            st = self.st
            x = self._snap(x)
            st.arm(t, x)

            def event(tt, y, st=st):
                return st.guards(tt, y)

            event.terminal, event.direction = True, -1.0
            rest = None
            if te is not None:
                rest = te[(te >= t) if first else (te > t)]
            left = None if self.max_steps is None else self.max_steps - self.steps
            if left is not None and left < 1:
                raise _Failure(f"the step limit max_steps = {self.max_steps} was reached at t = {t:.17g} before "
                               f"t_end = {self.t_end:.17g}")
            project = st.project if self.key in PROJECTABLE and st.quaternions else None
            run = solve_adaptive(st.rhs, (t, self.t_end), x, method=self.key, rtol=self.rtol, atol=self.atol,
                                 t_eval=rest, events=[event], max_steps=left, project=project,
                                 progress=False)
            self.steps += run.nsteps
            self.nfev += run.nfev
            ts, ys = run.t, run.y
            if rest is None:   # every step: the switches add the rows at their instants (before, after)
                lo = 0 if first else 1
                hi = len(ts) - (1 if run.status == "event" else 0)
                ts, ys = ts[lo:hi], ys[lo:hi]
            for tt, yy in zip(ts, ys):
                self.rows.add(tt, st.index, yy)
            if run.status == "failed":
                if run.error is not None and isinstance(run.error, ModelError):
                    raise run.error
                raise _Failure(run.reason)
            if run.status != "event":
                return
            t_e, x_e = float(run.t_events[0][-1]), run.y_events[0][-1]
            x = self._switch(t_e, x_e, st.reached(t_e, x_e))
            t, first = t_e, False

    # ---- fixed-step methods --------------------------------------------------------------------------------
    def _run_fixed(self, x):
        h, nsteps, save = float(self.h), int(self.nsteps), np.asarray(self.save, dtype=np.int64)
        code = METHODS[self.key]
        t0 = self.t0
        k = 0
        if save.size and save[0] == 0:
            self.rows.add(t0, self.st.index, x)
        while k < nsteps:
            st = self.st
            n = st.nq + st.nv
            x = self._snap(x)
            st.arm(t0 + k * h, x)
            todo = save[save > k]
            ts, xs = np.empty(todo.shape[0] + 1), np.empty((todo.shape[0] + 1, n))
            xt, K = np.empty(n), np.empty((5, n))
            xk = np.ascontiguousarray(x, dtype=np.float64).copy()
            saved, status, done = switching_run(xk, t0, h, k, nsteps, todo, st.params, st.S, code, st.nq,
                                                st.quaternions, ts, xs, xt, K)
            self.steps += done - k
            self.nfev += (done - k) * STAGES[code]
            for r in range(saved):
                self.rows.add(ts[r], st.index, xs[r])
            if status == 1:
                raise _Failure(f"the state became non-finite (NaN or inf) at step {done + 1} (t = "
                               f"{t0 + (done + 1) * h:.17g}); the step h = {h:g} may be too large")
            k, x = done, xk
            if status != EVENT:
                break
            # the event lies in step k + 1: locate it, switch, and step on to the grid point k + 1
            x = self._to_grid(t0 + k * h, x, t0 + (k + 1) * h, code)
            k += 1
            self.steps += 1
            if save.size and np.any(save == k):
                self.rows.add(t0 + k * h, self.st.index, x)

    def _to_grid(self, t_a, x_a, t_b, code):
        """From (t_a, x_a) to the grid time t_b in one step of the method, across the switches inside it: each is
        located on the step of a smaller size (the dense output), switched, and the rest stepped. Returns x(t_b)."""
        while True:
            st = self.st
            n = st.nq + st.nv
            K, xt = np.empty((5, n)), np.empty(n)
            xa = np.ascontiguousarray(x_a, dtype=np.float64)
            K[0] = st.rhs(t_a, xa)

            def g(s):
                mode_step(t_a, xa, s, st.params, st.S, code, st.nq, xt, K)
                return st.guards(t_a + s, xt)

            dt = t_b - t_a
            if dt <= 4 * _EPS * max(1.0, abs(t_b)):
                return x_a
            if g(dt) >= 0.0:
                mode_step(t_a, xa, dt, st.params, st.S, code, st.nq, xt, K)
                if not np.all(np.isfinite(xt)):
                    raise _Failure(f"the state became non-finite (NaN or inf) before t = {t_b:.17g}")
                return xt.copy()
            from scipy.optimize import brentq

            s = brentq(g, 0.0, dt, xtol=4 * _EPS * max(1.0, abs(t_a)), rtol=4 * _EPS)
            g(s)
            t_e, x_e = t_a + s, xt.copy()
            x_a = self._switch(t_e, x_e, st.reached(t_e, x_e))
            t_a = t_e
            self._snap_inplace(x_a)
            self.st.arm(t_a, x_a)

    # ---- helpers -------------------------------------------------------------------------------------------
    def _snap(self, x):
        x = np.array(x, dtype=np.float64)
        self._snap_inplace(x)
        return x

    def _snap_inplace(self, x):
        """Put the free limited coordinates that round-off left a hair beyond a stop back on it."""
        st = self.st
        u = st.u
        for k in range(st.nlim):
            i = u.lim_q[k]
            if x[i] < u.lower[k]:
                x[i] = u.lower[k]
            elif x[i] > u.upper[k]:
                x[i] = u.upper[k]

    def _params_of(self, s):
        """The parameter tuple of structure s (the current one's, else made anew)."""
        return self.st.params if self.st.index == s else None

    def _result(self, status, message):
        """The Result of the rows so far (module docstring)."""
        rows = self.rows
        n = len(rows.t)
        nq, nv = len(self.q_names), len(self.v_names)
        Q, V = np.full((n, nq), np.nan), np.full((n, nv), np.nan)
        kin, pot = np.full(n, np.nan), np.full(n, np.nan)
        models = [s["model"] for s in self.structures]
        sidx = np.array(rows.s, dtype=np.int64)
        for s, model in enumerate(models):
            sel = np.flatnonzero(sidx == s)
            if not sel.size:
                continue
            X = np.array([rows.x[i] for i in sel])
            qc = np.array([self.q_names.index(c) for c in model.coordinate_names()], dtype=np.int64)
            vc = np.array([self.v_names.index(c) for c in model.velocity_names()], dtype=np.int64)
            Qs, Vs = X[:, :model.nq], X[:, model.nq:]
            Q[np.ix_(sel, qc)] = Qs
            V[np.ix_(sel, vc)] = Vs
            if self.energy:
                T, P, _ = tree_energy(model, Qs, Vs, params=self._params_of(s))
                kin[sel], pot[sel] = T, P
        info = {"method": self.key, "model": self.model.name, "formulation": "tree", "status": status,
                "message": message, "steps": int(self.steps), "nfev": int(self.nfev), "switching": True,
                "structures": [{"t": s["t"], "nq": s["model"].nq, "nv": s["model"].nv} for s in self.structures],
                "cpu_seconds": time.process_time() - self.cpu, "wall_seconds": time.perf_counter() - self.wall}
        if self.fixed:
            info.update(h=float(self.h), nsteps_requested=int(self.nsteps), path="compiled")
        else:
            info.update(rtol=self.rtol, atol=self.atol)
        res = Result(np.array(rows.t), Q, V, energy={"kinetic": kin, "potential": pot} if self.energy else None,
                     info=info, q_names=self.q_names, v_names=self.v_names, model=self.model, events=self.log)
        res.structures = list(self.structures)
        return res


class _Failure(Exception):
    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason
