"""``simulate_batch`` for runs that call Python at every step: each run through ``simulate``, one after the other.

The batch's compiled loops (``integrate/lanes.py``, the per-run loops, ``contact/stepping_batch.py``) run without
the GIL and call compiled code only. A Python torque callback ``tau(t, q, v)`` and a model's Python constraints
(rows written in Python before each step) cannot be called there; such a batch is made here instead, run after
run, each with ``simulate(model, Q0[b], V0[b], t_end, method, h, ...)`` itself — so run b equals that single run
bit for bit by construction — and gathered into the same ``multibody.result.BatchResult``
(``result.info["path"] == "python, run by run"``). It costs what the single runs cost together (the Python
right-hand side path of ``simulate``: one to two orders of magnitude slower per step than the compiled loops);
a numba law ``tau(t, q, v, out)`` and compiled constraints keep a batch in the compiled loops.

Varied quantities (``params``): ``"tau"`` adds run b's constant torques to the law's output, as the compiled
batch adds them to the constant torques; ``"mass"`` and ``"gravity"`` change the compiled model's packed arrays,
which a run through ``simulate`` does not take: they are refused, naming the law (a model per run and
``simulate`` do it, or a numba law keeps the compiled batch).
"""
import time

import numpy as np

from multibody.errors import IntegrationError, ModelError
from multibody.integrate.arguments import non_finite_entry

__all__ = ["needs_python", "run_by_run"]

#: what ``result.info["path"]`` says of a batch made here
PATH = "python, run by run"


def needs_python(model, python_law, contact):
    """Why the runs of ``simulate_batch`` call Python at every step (a one-line reason), or None: ``python_law``
    whether the torque law (the ``tau`` argument, or the model's ``torque_callback``) is a Python callable (not a
    numba law ``tau(t, q, v, out)``); Python constraints in a run with ``contact="stepping"`` (without contact, a
    batch integrates the tree formulation, which takes no constraints: refused there as in ``simulate``)."""
    if python_law:
        return "a Python torque callback"
    python = [c.name for c in getattr(model, "constraints", ()) if getattr(c, "python", False)]
    if python and contact == "stepping":
        return f"Python constraints ({', '.join(python)})"
    return None


def run_by_run(simulate, make_batch, why, model, Q, V, t0, t_end, method, h, params, t_eval, n_out, output_every, law,
               python_law, energy, contact, options):
    """The batch of runs (rows of Q, V) made by ``simulate`` one run after the other (module docstring), gathered
    by ``make_batch(t, q, v, energy, status, steps, info, model)`` (``result.BatchResult``); ``why`` the reason
    from :func:`needs_python`; ``law`` the torque law (None, constant forces or a callable) and
    ``python_law`` whether it is a Python one."""
    params = dict(params or {})
    fixed = [k for k in ("mass", "gravity") if k in params]
    if fixed:
        raise ModelError(f"params['{fixed[0]}'] with {why}: the runs go one by one through simulate, which takes the "
                         "model as it is; build a model per run, or give a numba law tau(t, q, v, out) to keep the "
                         "compiled batch", element=fixed[0])
    unknown = sorted(set(params) - {"tau"})
    if unknown:
        raise ModelError(f"simulate_batch has no parameter {unknown[0]!r} to vary (tau, mass, gravity)",
                         element=unknown[0])
    runs = Q.shape[0]
    taus = None
    if "tau" in params:
        if callable(law) and not python_law:
            raise ModelError("params['tau'] with a compiled torque law: give the constant torques inside the law",
                             element="tau")
        given = params["tau"]
        taus = np.asarray(given) if not isinstance(given, (str, bytes)) else np.asarray(None)
        if taus.dtype.kind not in "iuf":
            raise ModelError(f"params['tau'] must be a ({runs}, {model.nv}) array of real numbers", element="tau")
        taus = taus.astype(float)
        if taus.shape != (runs, model.nv):
            raise ModelError(f"params['tau'] must be (runs, nv) = ({runs}, {model.nv}), got shape {taus.shape}",
                             element="tau")
        if not np.all(np.isfinite(taus)):
            raise ModelError(non_finite_entry(taus, "params['tau']", model.velocity_names()), element="tau")
    if contact is not None and str(method).upper() == "RK4":   # simulate_batch's default: the stepping model's own
        method = "STEPPING"
    cpu, wall = time.process_time(), time.perf_counter()
    results, status, steps = [], np.full(runs, "success", dtype=object), np.zeros(runs, dtype=np.int64)
    for b in range(runs):
        tau_b = _with_constant(law, None if taus is None else taus[b])
        try:
            res = simulate(model, Q[b], V[b], t_end, method=method, h=h, t0=t0, t_eval=t_eval, n_out=n_out,
                           output_every=output_every, tau=tau_b, energy=energy, contact=contact, progress=False,
                           **options)
        except IntegrationError as exc:   # a failed run keeps what it computed; the others go on
            if exc.result is None:
                raise
            res, status[b] = exc.result, "failed"
        results.append(res)
        steps[b] = res.info.get("steps", 0)
    t = _output_times(results)
    n = t.shape[0]
    q, v = np.full((runs, n, model.nq), np.nan), np.full((runs, n, model.nv), np.nan)
    keys = sorted({k for r in results for k in (r.energy or {})}) if energy else []
    en = {k: np.full((runs, n), np.nan) for k in keys}
    for b, res in enumerate(results):
        j = res.t.shape[0]
        q[b, :j], v[b, :j] = res.q, res.v
        for k in keys:
            if k in res.energy:
                en[k][b, :j] = res.energy[k]
    info = {"method": str(method), "model": getattr(model, "name", ""), "formulation": results[0].info.get(
                "formulation", "tree") if results else "tree", "h": results[0].info.get("h", h) if results else h,
            "runs": runs, "threads": 1, "path": PATH, "why": why, "cpu_seconds": time.process_time() - cpu,
            "wall_seconds": time.perf_counter() - wall, "varied": sorted(params)}
    if contact is not None:
        info["contact"] = contact
    batch = make_batch(t, q, v, en, status.astype(str), steps, info, model)
    if contact is not None:
        batch.contacts = [r.contacts for r in results]
    if any(getattr(r, "events", None) is not None for r in results):
        batch.events = [r.events for r in results]
    return batch


def _with_constant(law, constant):
    """``law`` plus run b's constant torques (``params["tau"]``): the law itself when there are none; the
    constant torques when there is no law."""
    if constant is None:
        return law
    if law is None:
        return constant
    if not callable(law):
        return np.asarray(law, dtype=float) + constant
    return lambda t, q, v: np.asarray(law(t, q, v), dtype=float) + constant    # a Python law (numba laws refused)


def _output_times(results):
    """The output times of the batch: those of its longest run (every completed run has the same ones)."""
    if not results:
        return np.empty(0)
    return max((r.t for r in results), key=lambda t: t.shape[0])
