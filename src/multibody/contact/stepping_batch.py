"""``simulate_batch`` with the time-stepping model: many runs of the compiled stepping loop at once.

Each run is a system of its own (``contact/models.py``: its workspaces, solver arrays, unit rows and controllers'
scratch; the packed model and collision set shared, read only) stepped by ``stepping_loop``, which releases the
GIL: the runs are split between ``numba.get_num_threads()`` threads, each running its share one after the other
(DESIGN.md's batched twins: "threads over loops compiled without the GIL"). Run b makes the operations of
``simulate(model, Q0[b], V0[b], t_end, h=h, contact="stepping", ...)`` in the same order, so it equals that single
run bit for bit, whatever the number of threads.

A moving base and general joints are compiled things of the loop (``contact/stepping_loop.Prescribed``): the
general joints' generated kinematics are called in it, and the runs over a moving ground step together through
chunks of ``contact.models.BASE_TABLE_ROWS`` steps, the base's states at a chunk's steps tabled once for all of
them (the motion is the same in every run), as a single run tables them. Python constraints and torque callbacks,
which Python evaluates before each step, cannot run here: ``simulate_batch`` makes those runs one by one through
``simulate`` (``integrate/run_by_run.py``). Releases that separate a joint are refused (a single run goes on in
the new structure, ``contact/stepping_structures.py``, and the batch's arrays have one set of columns).
"""
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from multibody.contact.models import contact_system
from multibody.contact.stepping_loop import NO_EVENTS, STEPPING_OK, empty_outputs, step_scratch, stepping_loop
from multibody.contact.stepping_run import warn_start
from multibody.contact.stepping_structures import separations
from multibody.errors import ModelError
from multibody.formulations.tree import tree_batch
from multibody.integrate.arguments import fixed_step_count, output_steps
from multibody.kernels.kinematics import F_MASS

__all__ = ["stepping_batch"]


def _run_system(model, q0, v0, tau, energy, options, batch, b):
    """The stepping system of run b: the model's, with the run's row of each varied quantity of ``batch`` (tau,
    mass, gravity; ``formulations.tree.tree_batch``)."""
    taus, mass, gravity = batch
    run_tau = tau
    if taus.shape[0]:
        run_tau = taus[b] + (0.0 if tau is None else np.asarray(tau, dtype=float))
    system = contact_system("stepping", model, q0, v0, run_tau, energy, "tree", dict(options))
    if mass.shape[0] or gravity.shape[0]:
        p = system.params.tree
        mf = p.mf.copy()
        if mass.shape[0]:
            mf[1:, F_MASS] = mass[b]
        if gravity.shape[0]:
            mf[0, :3] = gravity[b]
        system.params = system.params._replace(tree=p._replace(mf=mf))
    return system


def stepping_batch(model, Q, V, t0, t_end, h, t_eval, n_out, output_every, tau, energy, params, options):
    """The runs (rows of Q, V) of ``simulate_batch(..., contact="stepping")`` (module docstring): returns ``(t, q, v,
    energy, status, steps, info, contacts)``, the arrays of a ``BatchResult`` and each run's
    ``multibody.result.Contacts``. ``params`` may vary ``tau``, ``mass`` and ``gravity`` per run
    (``formulations.tree.BATCH_PARAMS``)."""
    import numba

    runs = Q.shape[0]
    separating = separations(model)
    if separating:
        raise ModelError(f"model '{model.name}': joint '{separating[0][1]}' separates (a release with mode 'separate'),"
                         " which changes the model's coordinates mid-run: simulate_batch runs one structure; use "
                         "simulate for each run", element=f"release '{separating[0][1]}'")
    batch = tree_batch(model, runs, params, moving_base=True)
    if batch[0].shape[0] and callable(tau):
        raise ModelError("params['tau'] with a compiled torque law: give the constant torques inside the law",
                         element="tau")
    nsteps, h_used = fixed_step_count(t0, t_end, h, "stepping")
    save = output_steps(nsteps, h_used, t0, t_eval, n_out, output_every)
    if model.unilateral:      # runs beyond their stops, or moving while held: brought back, and said (as in simulate)
        warn_start(model, [model.unilateral.start_problems(model, Q[b], V[b], t0) for b in range(runs)])
    first = _run_system(model, Q[0], V[0], tau, energy, options, batch, 0)   # checks the options once
    if first.before_step is not None:
        python = [c.name for c in model.constraints if c.python]
        raise ModelError(f"model '{model.name}' has Python constraints ({', '.join(python)}), evaluated in Python before "
                         "each step: simulate_batch is one compiled call; use simulate for each run",
                         element=f"constraint '{python[0]}'")
    n = save.shape[0]
    t = t0 + save * h_used
    q, v = np.full((runs, n, model.nq), np.nan), np.full((runs, n, model.nv), np.nan)
    en = {k: np.full((runs, n), np.nan) for k in ("kinetic", "potential", "total", "dissipated")} if energy else {}
    status, steps, contacts = np.full(runs, None, dtype=object), np.zeros(runs, dtype=np.int64), [None] * runs
    threads = max(1, min(numba.get_num_threads(), runs))
    no_trace = np.empty((0, model.nq + model.nv + 1))
    table = first.table_rows        # a moving base: the runs step together through chunks of its table, filled once
    chunk = table if table else max(nsteps, 1)
    state = [None] * runs

    def advance(b, lo, hi):
        """Run b's steps lo + 1 .. hi (its system made at its first chunk); its outputs at its last."""
        if status[b] is not None:       # ended (failed) in an earlier chunk
            return
        if state[b] is None:
            system = first if b == 0 else _run_system(model, Q[b], V[b], tau, energy, options, batch, b)
            if table:
                system.params = system.params._replace(prescribed=first.params.prescribed)
            state[b] = [system, empty_outputs(n, model.nq, model.nv, system.capacity), system.q0.copy(),
                        system.v0.copy(), 0, STEPPING_OK, 0, 0.0]
        system, outputs, qb, vb, j, code, last, dissipated = state[b]
        if code == STEPPING_OK and (lo < hi or lo == 0):
            part = save[(save >= (lo if lo == 0 else lo + 1)) & (save <= hi)]
            rows, code, last, dissipated = stepping_loop(
                system.params, np.ascontiguousarray(system.tau, dtype=np.float64), qb, vb, float(t0), float(h_used),
                lo, hi, part, dissipated, *(a[j:] for a in outputs), no_trace, NO_EVENTS, step_scratch(qb, vb))
            state[b][4:] = j + rows, code, last, dissipated
            j += rows
        if code == STEPPING_OK and hi < nsteps:
            return
        ts, Qs, Vs, D, counts, recs = (a[:j] for a in outputs)
        res = system.make_result(ts, Qs, Vs, D, counts, recs, {})
        q[b, :j], v[b, :j] = Qs, Vs
        for key in en:
            en[key][b, :j] = res.energy[key] if key != "total" else res.energy["kinetic"] + res.energy["potential"]
        status[b], steps[b], contacts[b] = ("success" if code == STEPPING_OK else "failed"), last, res.contacts
        state[b] = None

    def share(k, lo, hi):
        for b in range(k * runs // threads, (k + 1) * runs // threads):
            advance(b, lo, hi)

    cpu, wall = time.process_time(), time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        for lo in range(0, max(nsteps, 1), chunk):
            hi = min(lo + chunk, nsteps)
            if table:
                first.write_base(float(t0), float(h_used), lo, hi)
            if threads == 1:
                share(0, lo, hi)
            else:
                for f in [pool.submit(share, k, lo, hi) for k in range(threads)]:
                    f.result()
    info = {"method": "stepping", "model": model.name, "formulation": "tree", "contact": "stepping", "h": h_used,
            "nsteps_requested": nsteps, "runs": runs, "threads": threads, "path": "compiled stepping, threads",
            "cpu_seconds": time.process_time() - cpu, "wall_seconds": time.perf_counter() - wall,
            "varied": sorted(params or {})}
    return t, q, v, en, status.astype(str), steps, info, contacts
