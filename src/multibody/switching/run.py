"""Simulation of a tree with joint limits, latches and releases: the structures of the run, its switches, and its
Result (seed 001, introduction: variable structure; seed 002: Δp = Jᵀ Λ).

:func:`run_switching` hands the tree's structure (``switching/structure.py``: its modes, guards and
switches) to the run across switches of ``switching/events.py`` and makes the :class:`multibody.Result`:

* a column per coordinate of every structure the run can pass through — the model's coordinates, then those of
  the free joint of each joint that can separate (``<joint>.x`` … ``<joint>.qz``, velocities ``<joint>.wx`` …
  ``<joint>.vz``; :func:`union_names`) — with NaN where the structure of the moment does not have it;
* the states of the output times and two rows at each switch (just before, just after);
* ``result.events``: the switch log (``switching/structure.py``); ``result.structures``: the models in turn
  (``{"t": from when, "model": Model}``); ``result.info["structures"]``: their sizes; ``result.info["solves"]``:
  the convergence of the switches' solves (``switching/convergence.py``: a ``ConvergenceWarning`` when one stopped
  early);
* a model with constraints (closed loops; ``switching/constrained.py``): ``result.residuals`` per
  constraint, as the constrained formulation's.
"""
import time

import numpy as np

from multibody.errors import IntegrationError, ModelError
from multibody.formulations.base import check_state
from multibody.formulations.constrained import constraint_residuals
from multibody.switching.constrained import ConstrainedStructure
from multibody.formulations.tree_control import is_compiled_torque
from multibody.formulations.tree_rhs import tree_energy
from multibody.switching.poisson import PoissonStructure
from multibody.switching.python_steps import STORMER6
from multibody.switching.structure import REST_VELOCITY, Structure
from multibody.integrate.adaptive import PROJECTABLE, step_budget
from multibody.integrate.arguments import FIXED_MAX_STEPS, event_value, fixed_budget, fixed_step_count, output_steps
from multibody.switching.events import run_hybrid
from multibody.integrate.manifold import normalize_quaternions
from multibody.integrate.tableaux import METHODS
from multibody.switching.restructure import free_joint_names
from multibody.result import Result

__all__ = ["compiled_loop", "refuse", "run_switching", "simulate_switching", "structure_class", "switching_batch", "union_names"]


def structure_class(model):
    """The structure of a run of ``model``: :class:`ConstrainedStructure` when it has constraints (closed loops,
    ``switching/constrained.py``), else the tree's :class:`Structure`."""
    return ConstrainedStructure if model.constraints else Structure


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


def compiled_loop(model, formulation):
    """Whether the fixed-step runs of ``model`` in ``formulation`` step in the tree's compiled switching loop
    (``modes.switching_run``); else in the Python loop of ``switching/python_steps.py`` (a model with
    constraints, the Poisson formulation)."""
    return formulation == "tree" and not model.constraints


def refuse(model, formulation, tau, method_key, events):
    """A ``ModelError`` for what a switching run of ``model`` does not do: another formulation than the tree, the
    Poisson one (``switching/poisson.py``) or, for a model with constraints, the constrained one
    (``switching/constrained.py``: one-step methods, adaptive or fixed-step); controllers or a compiled torque law outside the tree formulation; a torque law (compiled
    or a Python callback) with a release that separates a joint (it reads q and v by position, which change; the
    model's controllers carry across by joint name); a moving base, general joints (user events with a fixed step are refused by
    ``simulate`` as in every run). STORMER6 steps in the Python loop (``switching/python_steps.py``): its step of
    any size is the dense output the switches are located on."""
    law = model.torque_callback if tau is None else tau   # a compiled torque law acts as the controllers do
    controlled = bool(model.controllers) or is_compiled_torque(law)
    what = (f"controllers ({', '.join(c.name for c in model.controllers)})" if model.controllers
            else "a compiled torque law (tau=f)")
    why = None
    separate = [r.joint for r in model.unilateral.releases if r.mode == "separate"]
    if model.constraints and formulation != "constrained":
        why = ((f"constraints or cut joints ({', '.join(c.name for c in model.constraints)}) and formulation "
                f"{formulation!r}: such a model is simulated in the 'constrained' formulation"), "formulation")
    elif not model.constraints and formulation not in ("tree", "poisson"):
        why = ((f"formulation {formulation!r}: joint limits, latches and releases are simulated in the 'tree' and "
                "'poisson' formulations (the 'constrained' one when the model has constraints)"), "formulation")
    elif model.constraints and method_key not in PROJECTABLE and method_key not in METHODS:
        why = ((f"constraints, and method {method_key!r}: the state is projected onto the constraints after each "
                "step, which the one-step methods allow (DOP853, RK45, RK23, Radau; RK4, RK2, HEUN, VERLET)"),
               "method")
    elif controlled and formulation != "tree":
        why = ((f"{what} in the {formulation!r} formulation: controllers across switches run in the 'tree' "
                "formulation's compiled modes; a Python torque callback runs in every formulation"), "controllers")
    elif callable(law) and separate:
        kind = "a compiled torque law" if is_compiled_torque(law) else "a torque callback"
        why = (f"{kind} (tau=f) and a release that separates a joint: the law reads q and v by position, which the "
               "separation changes (the model's controllers, by joint name, carry across)", "tau")
    elif model.base_motion is not None:
        why = ("its ground moves (base motion); a switching run needs a fixed ground", "base motion")
    elif any(j.joint.code == 8 for j in model.joints[1:]):
        why = ("it has general joints; a switching run needs the compiled joints", "general joint")
    if why is not None:
        raise ModelError(f"model '{model.name}' has joint limits, latches or releases and {why[0]} (a URDF read "
                         "with limits=False, or a model file with 'stops: false', keeps its limits as data only)",
                         element=why[1])


def run_switching(model, q0, v0, t0, t_end, method, h=None, nsteps=None, save=None, rtol=1e-9, atol=1e-12,
                  t_eval=None, tau=None, energy=True, max_steps=None, event_rows=True, rest_velocity=REST_VELOCITY,
                  writer=None, every=None, restart=None, events=None, formulation="tree", solver="sweep",
                  progress=False):
    """Integrate ``model`` (with joint limits, latches or releases) from ``(q0, v0)`` at ``t0`` to ``t_end`` across
    its switches (``switching/events.py``); return the :class:`multibody.Result` (module docstring).

    ``method``: an adaptive method (``rtol``, ``atol``, output times ``t_eval`` or every step, ``max_steps`` in
    all) or a fixed-step one (``h`` and ``nsteps`` of the grid, ``save`` the step numbers to output).
    ``tau``: constant generalized forces (nv,), a callable ``tau(t, q, v)`` (with a fixed-step method, the mode's
    loop then runs in Python: ``switching/python_steps.py``) or a compiled torque law (a numba function
    ``tau(t, q, v, out)``, ``formulations/tree_control.py``), which, like the model's controllers, runs in the
    mode's compiled right-hand side. A failure raises
    ``IntegrationError`` whose ``result`` is the run up to it, its switches included.

    ``writer`` (a :class:`multibody.io.checkpoints.Writer`), ``every``: write a checkpoint at the start, every ``every``
    simulated seconds and at the end — the state and outputs as rows of the full coordinate set, the structures,
    the mode and the switch log as its ``switching`` data; ``restart``: the
    :class:`~multibody.io.checkpoints.Checkpoint` to go on from (``simulation.resume``).

    ``events``: user event functions ``g(t, q, v)`` (adaptive methods; attributes ``terminal``, ``direction`` as in
    ``simulate``), with q and v the run's full coordinate set (the Result's columns; NaN where the structure of the
    moment has no such coordinate), located alongside the switches (``switching/events.py``: an event at a switch
    is reported once); their times are ``result.info["t_events"]``, and a terminal one ends the run with status
    ``"event"``, as in a run without switches.

    ``formulation="poisson"`` (no checkpoints): the state (q, p) between switches, the impulses
    jumping by Jᵀ Λ at them (``switching/poisson.py``; ``solver`` of system (6)); the Result has v
    and the impulses in ``result.series["p"]`` (the columns of v). ``progress``: the run's bar (``run_hybrid``)."""
    key = str(method).upper()
    cpu, wall = time.process_time(), time.perf_counter()
    callback = model.torque_callback if tau is None else tau
    tau_const = None
    if callback is not None and not callable(callback):
        tau_const = np.array(callback, dtype=float).reshape(-1)
        if tau_const.shape != (model.nv,) or not np.all(np.isfinite(tau_const)):
            raise ModelError(f"tau must be a callable tau(t, q, v) or {model.nv} finite numbers (model "
                             f"'{model.name}'), got {callback!r}", element="tau")
        callback = None
    q_names, v_names = union_names(model)
    st = structure_class(model)(model, tau_const, callback, q_names, v_names, 0, rest_velocity)
    x0 = np.concatenate([q0, v0]).astype(float)
    if st.quaternions:
        normalize_quaternions(x0, st.params)
    if formulation == "poisson":
        st = PoissonStructure(st, solver)
        x0 = st.poisson_state(x0)
    write, resume = None, None
    if writer is not None:
        own = formulation == "poisson"     # its own state (q, p): resumed bit for bit, no round trip through v

        def write(t, step, system, x, run, finished):
            rows, x_row = _rows(run, q_names, v_names, own), _union_row(system, x, q_names, v_names, own)
            writer.write(t, step, x_row, np.array(run.t), rows, None, {"steps": run.steps, "nfev": run.nfev},
                         finished, switching={"separated": system.separated, "mode": system.mode_data(),
                                              "events": run.log, "rows": run.system})

        if restart is not None and restart.switching is not None and (restart.t > t0 or restart.finished):
            st, resume = _resumed(restart, model, tau_const, callback, q_names, v_names, rest_velocity,
                                  solver if formulation == "poisson" else None)
        else:
            writer.write(t0, 0 if key in METHODS else None, _union_row(st, x0, q_names, v_names, own), np.zeros(0),
                         np.zeros((0, len(q_names) + len(v_names))), None, {"steps": 0},
                         switching={"separated": [], "mode": None, "events": [], "rows": []})
    if resume is not None and restart.finished:
        run = resume[3]
    else:
        user = None if events is None else [_user_event(ev, k, q_names, v_names) for k, ev in enumerate(events)]
        try:
            run = run_hybrid(st, x0, t0, t_end, key, h=h, nsteps=nsteps, save=save, rtol=rtol, atol=atol,
                             t_eval=t_eval, max_steps=max_steps, event_rows=event_rows, checkpoint=write,
                             every=every, resume=resume, events=user, progress=progress)
        except ModelError as exc:   # met during the run (an event's bad value): with the Result so far
            if getattr(exc, "run", None) is not None:
                exc.result = _result(exc.run, q_names, v_names, model, energy, {
                    "method": key, "model": model.name, "formulation": formulation, "switching": True,
                    "status": "failed", "message": str(exc)})
            raise
    diagnose = getattr(run.systems[-1][1], "diagnose", None)
    named = diagnose() if run.status == "failed" and diagnose is not None else None
    if named is not None:   # what in the compiled code failed the run (a compiled torque law), by name
        run.reason, run.element = named
    info = {"method": key, "model": model.name, "formulation": formulation, "steps": int(run.steps),
            "nfev": int(run.nfev), "switching": True,
            "structures": [{"t": t, "nq": s.nq, "nv": s.nv} for t, s in run.systems]}
    last = run.systems[-1][1]
    solves = getattr(getattr(last, "tree", last), "solves", None)   # (a Poisson structure wraps the tree's)
    if solves is not None:
        info["solves"] = solves.info()
        solves.warn(model.name, stacklevel=4)
    if model.constraints:
        info.update(constraints=[c.name for c in model.constraints], initial_correction=st.correction)
    if model.controllers:
        info["controllers"] = [c.name for c in model.controllers]
    if getattr(st, "law", None) is not None:
        info["compiled_torque"] = getattr(st.law, "__name__", "")
    if key in METHODS:
        info.update(h=float(h), nsteps_requested=int(nsteps), location_steps=int(run.location_steps),
                    path="compiled" if compiled_loop(model, formulation) and st.callback is None
                    and METHODS[key] != STORMER6 else "python")
    else:
        info.update(rtol=rtol, atol=atol)
    message = run.reason if run.status == "failed" else (
        f"a terminal event occurred at t = {run.t_stop:.17g}" if run.status == "event" else
        "completed" if key in METHODS else "the end of the interval was reached")
    if events is not None:
        info["t_events"] = [list(te) for te in run.t_events]
    if formulation == "poisson":
        info["solver"] = str(solver).lower()
    info.update(status=run.status, message=message, cpu_seconds=time.process_time() - cpu,
                wall_seconds=time.perf_counter() - wall)
    if writer is not None:
        info["checkpoint"] = str(writer.path)
    if restart is not None:
        info["resumed_from"] = restart.t
    res = _result(run, q_names, v_names, model, energy, info)
    if run.status == "failed":
        raise IntegrationError(f"{key} integration of model '{model.name}' failed: {run.reason}", result=res,
                               reason=run.reason, element=run.element) from run.error
    return res


def simulate_switching(model, q0, v0, t0, t_end, mkey, h, rtol, atol, t_eval, n_out, output_every, formulation, tau,
                       max_steps, events, energy, writer, options, save=None, every=None, restart=None,
                       progress=False):
    """``simulate`` of a model with joint limits, latches or releases (its arguments checked by ``simulate``):
    :func:`refuse` what such a run does not do, then :func:`run_switching`. ``save``: the fixed-step output steps
    of a batch (its outputs then have no rows at the switches); ``writer``, ``every``: its checkpoints;
    ``restart``: the checkpoint it goes on from; ``progress``: the run's bar. ``max_steps``: the step budget
    (``simulate``'s default when None), with a fixed step of the grid's steps and those that locate the switches
    together: a fixed-step run of more grid steps is refused before it starts, as any fixed-step run."""
    refuse(model, formulation, tau, mkey, events)
    ck = dict(writer=writer, every=every, restart=restart, progress=progress)
    if formulation == "poisson":
        options = dict(options)
        ck.update(formulation="poisson", solver=options.pop("solver", "sweep"))
    if options:
        raise ModelError(f"option {sorted(options)[0]!r}: a run with joint limits, latches or releases takes none",
                         element=sorted(options)[0])
    q0, v0 = check_state(model, q0, v0)
    if mkey in METHODS:
        nsteps, h_used = fixed_step_count(t0, t_end, h, mkey)
        law = model.torque_callback if tau is None else tau
        path = "compiled" if compiled_loop(model, formulation) and not (
            callable(law) and not is_compiled_torque(law)) else "python"
        fixed_budget(nsteps, h_used, max_steps, path)
        rows = save is None
        save = output_steps(nsteps, h_used, t0, t_eval, n_out, output_every) if rows else save
        return run_switching(model, q0, v0, t0, t_end, mkey, h=h_used, nsteps=nsteps, save=save, tau=tau,
                             energy=energy, event_rows=rows,
                             max_steps=FIXED_MAX_STEPS[path] if max_steps is None else step_budget(max_steps), **ck)
    if n_out is not None:
        t_eval = np.linspace(t0, t_end, int(n_out))
    return run_switching(model, q0, v0, t0, t_end, mkey, rtol=rtol, atol=atol, t_eval=t_eval, tau=tau, energy=energy,
                         max_steps=step_budget(max_steps), events=events, **ck)


def switching_batch(model, Q, V, t0, t_end, mkey, h, t_eval, n_out, output_every, tau, energy, params):
    """``simulate_batch`` of a model with joint limits, latches or releases: each run in turn through the switching
    loop (``switching/events.py``), outputs on the common step grid (no rows at the switches). Only
    ``params={"tau": ...}`` may vary per run. Returns ``(t, q, v, energy, status, steps, info, events, q names,
    v names)``, ``events[b]`` the switch log of run b (the arrays of a ``BatchResult``)."""
    other = sorted(set(params or {}) - {"tau"})
    if other:
        raise ModelError(f"params['{other[0]}']: the runs of a model with joint limits, latches or releases may vary "
                         "'tau' only", element=other[0])
    if callable(tau) and not is_compiled_torque(tau):
        raise ModelError("a Python torque callback cannot run in the compiled loop of simulate_batch", element="tau")
    taus = None if params is None or "tau" not in params else np.asarray(params["tau"], dtype=float)
    if taus is not None and callable(tau):
        raise ModelError("params['tau'] with a compiled torque law: give the constant torques inside the law",
                         element="tau")
    if taus is not None and taus.shape != (Q.shape[0], model.nv):
        raise ModelError(f"params['tau'] must have shape ({Q.shape[0]}, {model.nv}) (runs, nv), got {taus.shape}",
                         element="tau")
    nsteps, h_used = fixed_step_count(t0, t_end, h, mkey)
    save = output_steps(nsteps, h_used, t0, t_eval, n_out, output_every)
    qn, vn = union_names(model)
    runs, n = Q.shape[0], save.shape[0]
    t = t0 + save * h_used
    q, v = np.full((runs, n, len(qn)), np.nan), np.full((runs, n, len(vn)), np.nan)
    en = {k: np.full((runs, n), np.nan) for k in ("kinetic", "potential", "total")} if energy else {}
    status, steps, events = np.empty(runs, dtype=object), np.zeros(runs, dtype=np.int64), []
    cpu, wall = time.process_time(), time.perf_counter()
    for b in range(runs):
        run_tau = tau if taus is None else (taus[b] + (0.0 if tau is None else np.asarray(tau, dtype=float)))
        try:
            res, status[b] = simulate_switching(model, Q[b], V[b], t0, t_end, mkey, h, rtol=None, atol=None,
                                                t_eval=None, n_out=None, output_every=None,
                                                formulation="constrained" if model.constraints else "tree",
                                                tau=run_tau, max_steps=None, events=None, energy=energy, writer=None,
                                                options={}, save=save), "success"
        except IntegrationError as exc:
            res, status[b] = exc.result, "failed"
        k = len(res.t)
        q[b, :k], v[b, :k] = res.q, res.v
        for key in en:
            en[key][b, :k] = res.energy[key]
        steps[b] = res.info.get("steps", 0)
        events.append(res.events)
    info = {"method": mkey, "model": model.name, "formulation": "constrained" if model.constraints else "tree",
            "h": h_used, "nsteps_requested": nsteps,
            "runs": runs, "path": "switching, run by run", "cpu_seconds": time.process_time() - cpu,
            "wall_seconds": time.perf_counter() - wall, "varied": sorted(params or {})}
    return t, q, v, en, status.astype(str), steps, info, events, qn, vn


def _user_event(ev, k, q_names, v_names):
    """The user event ``ev(t, q, v)`` (``events[k]``) as the run across switches calls it, ``g(t, x, structure)``:
    q, v the run's full coordinate set; a value that is not one finite real number is a ModelError naming it."""
    nq = len(q_names)

    def g(t, x, system):
        row = _union_row(system, x, q_names, v_names)
        return event_value(ev(t, row[:nq], row[nq:]), k, ev, t)

    g.terminal, g.direction = getattr(ev, "terminal", False), getattr(ev, "direction", 0.0)
    return g


def _tree_states(system, X):
    """The states ``X`` (rows) of ``system`` as (q, v): those of the Poisson formulation's (q, p) converted."""
    convert = getattr(system, "tree_state", None)
    return X if convert is None else np.array([convert(x) for x in X]).reshape(np.shape(X))


def _union_row(system, x, q_names, v_names, own=False):
    """The state ``x`` of ``system`` as a row of the run's full coordinate set (NaN where it has no coordinate);
    ``own``: as the structure holds it (the Poisson formulation's (q, p)), else (q, v)."""
    x = np.asarray(x) if own else _tree_states(system, np.asarray(x)[None, :])[0]
    row = np.full(len(q_names) + len(v_names), np.nan)
    row[system.q_cols] = x[:system.nq]
    row[len(q_names) + system.v_cols] = x[system.nq:]
    return row


def _rows(run, q_names, v_names, own=False):
    """The output rows of a run as rows of its full coordinate set (``own``: as in :func:`_union_row`)."""
    systems = {s.index: s for _, s in run.systems}
    return np.array([_union_row(systems[i], x, q_names, v_names, own) for i, x in zip(run.system, run.x)]).reshape(
        len(run.t), len(q_names) + len(v_names))


def _resumed(ck, model, tau_const, callback, q_names, v_names, rest_velocity, solver=None):
    """The structure, mode and outcome so far of a run across switches from its checkpoint ``ck``: the structures
    made again by the same separations, the mode restored, the rows back in each structure's coordinates (with a
    Poisson ``solver``: each structure on (q, p), as the checkpoint holds its rows). Returns
    ``(structure, (t, step, x, HybridRun))``; a ``ResultFileError`` for data that do not fit."""
    from multibody.errors import ResultFileError
    from multibody.switching.events import HybridRun

    data = ck.switching
    try:
        st = structure_class(model)(model, tau_const, callback, q_names, v_names, 0, rest_velocity)
        systems = [(float(ck.settings["t0"]), st)]
        for t, joint in data["separated"]:
            st = st.successor(t, joint)
            systems.append((float(t), st))
        st.restore(data["mode"])
        if solver is not None:     # the Poisson formulation's structures, on (q, p)
            systems = [(t, PoissonStructure(s, solver)) for t, s in systems]
            st = systems[-1][1]
        by_index = {s.index: s for _, s in systems}
        nq = len(q_names)

        def local(s, row):
            return np.concatenate([row[s.q_cols], row[nq + s.v_cols]])

        rows = [local(by_index[int(i)], row) for i, row in zip(data["rows"], ck.out_x)]
        run = HybridRun(t=[float(t) for t in ck.out_t], system=[int(i) for i in data["rows"]], x=rows,
                        systems=systems, log=[dict(e) for e in data["events"]], steps=int(ck.stats.get("steps", 0)),
                        nfev=int(ck.stats.get("nfev", 0)))
        x = local(st, ck.x)
    except (KeyError, TypeError, ValueError, IndexError, ModelError) as exc:
        raise ResultFileError(f"checkpoint '{ck.path}' does not fit its run: its switching data ({type(exc).__name__}: "
                              f"{exc}) (edited or damaged?)", path=ck.path, element="checkpoint switching") from None
    if not np.all(np.isfinite(x)) or len(run.t) != len(rows):
        raise ResultFileError(f"checkpoint '{ck.path}' does not fit its run: its state is not finite, or its rows do "
                              "not match their structures (edited or damaged?)", path=ck.path,
                              element="checkpoint x")
    return st, (ck.t, ck.step, x, run)


def _result(run, q_names, v_names, model, energy, info):
    """The Result of a :class:`~multibody.switching.events.HybridRun` (module docstring)."""
    n = len(run.t)
    Q, V = np.full((n, len(q_names)), np.nan), np.full((n, len(v_names)), np.nan)
    impulse = np.full((n, len(v_names)), np.nan)     # (q, p) states of the Poisson formulation

    kin, pot = np.full(n, np.nan), np.full(n, np.nan)
    sidx = np.array(run.system, dtype=np.int64)
    residuals = {} if model.constraints else None
    for t_from, st in run.systems:
        sel = np.flatnonzero(sidx == st.index)
        if not sel.size:
            continue
        X = np.array([run.x[i] for i in sel])
        impulse[np.ix_(sel, st.v_cols)] = X[:, st.nq:]
        X = _tree_states(st, X)
        Qs, Vs = X[:, :st.nq], X[:, st.nq:]
        Q[np.ix_(sel, st.q_cols)] = Qs
        V[np.ix_(sel, st.v_cols)] = Vs
        if energy:
            T, P, _ = tree_energy(st.model, Qs, Vs, params=st.params)
            kin[sel], pot[sel] = T, P
        if residuals is not None:   # each structure's rows (by constraint name) on its own coordinates
            for name, r in constraint_residuals(st.ct.rows, np.array(run.t)[sel], Qs, Vs).items():
                residuals.setdefault(name, np.full(n, np.nan))[sel] = r
    res = Result(np.array(run.t), Q, V, energy={"kinetic": kin, "potential": pot} if energy else None, info=info,
                 q_names=q_names, v_names=v_names, model=model, events=run.log, residuals=residuals,
                 series={"p": impulse} if info.get("formulation") == "poisson" else None)
    res.structures = [{"t": t, "model": s.model} for t, s in run.systems]
    return res
