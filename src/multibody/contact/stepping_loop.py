"""The run of a time-stepping contact model: the compiled loop over the steps of ``contact/stepping_solver.py``.

A :class:`SteppingSystem` (made by ``contact/models.py``) holds the initial state, the parameter tuple of
``stepping_step`` and the generalized forces besides the model's own: constant ones, a compiled torque law
``law(t, q, v, out)`` (a numba function writing ``out`` (nv,), called inside the loop before every step), or a
Python callable ``tau(t, q, v) -> (nv,)``, which makes the run a Python loop around the compiled step (about
two orders of magnitude slower per step).

:func:`run_stepping` makes ``nsteps`` steps of size ``h`` from ``t0`` and keeps, at the step numbers ``save``, the
state, the energy dissipated so far (by the contact impulses and the model's dampers) and the contacts of the
step that ended there (records of ``stepping_solver.R_WIDTH`` numbers: pair, point, normal, normal force,
friction force, signed distance, feature).
"""
import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from multibody.contact.stepping_solver import R_WIDTH, stepping_step

__all__ = ["SteppingSystem", "run_stepping", "STEPPING_OK", "STEPPING_NONFINITE"]

STEPPING_OK, STEPPING_NONFINITE = 0, 1


@dataclass
class SteppingSystem:
    """What a time-stepping contact model hands to ``simulate``: ``q0``, ``v0``; ``params`` = (mi, mf, work,
    Geometry, AppliedForces, Solver) of ``stepping_solver.stepping_step``; ``tau`` (nv,) constant generalized
    forces; ``law`` a compiled torque law or None; ``callback`` a Python ``tau(t, q, v)`` or None;
    ``capacity`` the most contacts a step can have; ``make_result(t, Q, V, dissipated, counts, records, info)``
    the Result; ``info`` facts for ``result.info``."""

    q0: np.ndarray
    v0: np.ndarray
    params: tuple
    tau: np.ndarray
    capacity: int
    make_result: object
    law: object = None
    callback: object = None
    info: dict = field(default_factory=dict)


@njit(cache=True)
def _record(k, t, q, v, dissipated, S, m, ts, Q, V, D, counts, recs):
    ts[k] = t
    Q[k, :] = q
    V[k, :] = v
    D[k] = dissipated
    counts[k] = m
    for c in range(m):
        recs[k, c, :] = S.rec[c]


@njit(cache=True)
def _record_start(params, q, v, t0, h, first, save, dissipated, ts, Q, V, D, counts, recs):
    """The state at step ``first`` as output 0 when it is to be saved; returns the next output (0 or 1)."""
    if save.shape[0] > 0 and save[0] == first:
        _record(0, t0 + first * h, q, v, dissipated, params[5], 0, ts, Q, V, D, counts, recs)
        return 1
    return 0


@njit(cache=True)
def _advance(params, tau, q, v, t0, h, step, save, j, dissipated, qn, vn, ts, Q, V, D, counts, recs):
    """Step number ``step`` (from t0 + (step − 1) h) with the generalized forces ``tau``: the new state into q, v,
    recorded as output j when ``save[j]`` is this step. Returns (next output, status, dissipated energy)."""
    mi, mf, work, G, F, S = params
    m, impulse_work, damper = stepping_step(mi, mf, work, G, F, S, q, v, h, tau, qn, vn)
    dissipated += damper - impulse_work
    for k in range(v.shape[0]):
        if not math.isfinite(vn[k]):
            return j, STEPPING_NONFINITE, dissipated
    q[:] = qn
    v[:] = vn
    if j < save.shape[0] and save[j] == step:
        _record(j, t0 + step * h, q, v, dissipated, S, m, ts, Q, V, D, counts, recs)
        j += 1
    return j, STEPPING_OK, dissipated


@njit(cache=True)
def stepping_loop(params, tau_const, q, v, t0, h, first, stop, save, dissipated, ts, Q, V, D, counts, recs):
    """Steps ``first + 1 .. stop`` from (q, v) at step ``first`` (time t0 + first h), leaving the last state in q
    and v; the states at the step numbers ``save`` (ascending) go to row j of the outputs. Returns (rows written,
    status, last step done, dissipated energy)."""
    qn, vn = np.empty_like(q), np.empty_like(v)
    j = _record_start(params, q, v, t0, h, first, save, dissipated, ts, Q, V, D, counts, recs)
    for step in range(first + 1, stop + 1):
        j, status, dissipated = _advance(params, tau_const, q, v, t0, h, step, save, j, dissipated, qn, vn, ts, Q,
                                         V, D, counts, recs)
        if status != STEPPING_OK:
            return j, status, step - 1, dissipated
    return j, STEPPING_OK, stop, dissipated


@njit
def stepping_loop_law(params, tau_const, law, q, v, t0, h, first, stop, save, dissipated, ts, Q, V, D, counts,
                      recs):
    """:func:`stepping_loop` with a compiled torque law ``law(t, q, v, out)`` added before each step. numba types a
    function argument by the function itself, so this loop is compiled once per law and process (seconds; not
    cached on disk), around the cached step."""
    qn, vn = np.empty_like(q), np.empty_like(v)
    tau, extra = np.empty_like(v), np.empty_like(v)
    j = _record_start(params, q, v, t0, h, first, save, dissipated, ts, Q, V, D, counts, recs)
    for step in range(first + 1, stop + 1):
        extra[:] = 0.0
        law(t0 + (step - 1) * h, q, v, extra)
        tau[:] = tau_const + extra
        j, status, dissipated = _advance(params, tau, q, v, t0, h, step, save, j, dissipated, qn, vn, ts, Q, V, D,
                                         counts, recs)
        if status != STEPPING_OK:
            return j, status, step - 1, dissipated
    return j, STEPPING_OK, stop, dissipated


def run_stepping(system, t0, h, nsteps, save, progress=False):
    """Run ``system`` for ``nsteps`` steps of ``h`` from ``t0``, saving the step numbers ``save``; returns
    ``(t, Q, V, dissipated, counts, records, status, last step done)`` (the outputs up to the failure when a
    state became non-finite). ``progress``: a tqdm bar, the run made in about 100 chunks."""
    nq, nv = system.q0.shape[0], system.v0.shape[0]
    save = np.ascontiguousarray(save, dtype=np.int64)
    n = save.shape[0]
    ts, Q, V, D = np.empty(n), np.empty((n, nq)), np.empty((n, nv)), np.empty(n)
    counts = np.zeros(n, dtype=np.int64)
    recs = np.zeros((n, max(system.capacity, 1), R_WIDTH))
    tau = np.ascontiguousarray(system.tau, dtype=np.float64)
    if system.callback is not None:
        return _python_loop(system, t0, h, nsteps, save, progress, ts, Q, V, D, counts, recs)
    bar = None
    chunk = nsteps
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=nsteps, unit="step", desc=f"stepping h={h:g}")
        chunk = max(1, nsteps // 100)
    q, v = system.q0.copy(), system.v0.copy()
    done, rows, dissipated, status = 0, 0, 0.0, STEPPING_OK
    try:
        while done < nsteps:
            stop = min(done + chunk, nsteps)
            part = save[(save >= (done if done == 0 else done + 1)) & (save <= stop)]
            outputs = (ts[rows:], Q[rows:], V[rows:], D[rows:], counts[rows:], recs[rows:])
            if system.law is None:
                j, status, last, dissipated = stepping_loop(system.params, tau, q, v, float(t0), float(h), done, stop,
                                                            part, dissipated, *outputs)
            else:
                j, status, last, dissipated = stepping_loop_law(system.params, tau, system.law, q, v, float(t0),
                                                                float(h), done, stop, part, dissipated, *outputs)
            rows += j
            if bar is not None:
                bar.update(last - done)
            done = last
            if status != STEPPING_OK:
                break
    finally:
        if bar is not None:
            bar.close()
    return ts[:rows], Q[:rows], V[:rows], D[:rows], counts[:rows], recs[:rows], status, done


def _python_loop(system, t0, h, nsteps, save, progress, ts, Q, V, D, counts, recs):
    """:func:`run_stepping` with a Python torque callback: one compiled step per call."""
    mi, mf, work, G, F, S = system.params
    q, v = system.q0.copy(), system.v0.copy()
    qn, vn = np.empty_like(q), np.empty_like(v)
    nv = v.shape[0]
    dissipated = 0.0
    j = 0
    if save.shape[0] and save[0] == 0:
        ts[0], Q[0], V[0], D[0] = t0, q, v, 0.0
        j = 1
    for step in range(1, nsteps + 1):
        t = t0 + (step - 1) * h
        extra = np.asarray(system.callback(t, q.copy(), v.copy()), dtype=np.float64).reshape(-1)
        if extra.shape != (nv,):
            raise ValueError(f"the torque callback returned {extra.size} values, expected nv = {nv}")
        m, impulse_work, damper = stepping_step(mi, mf, work, G, F, S, q, v, h, system.tau + extra, qn, vn)
        dissipated += damper - impulse_work
        if not np.all(np.isfinite(vn)):
            return ts[:j], Q[:j], V[:j], D[:j], counts[:j], recs[:j], STEPPING_NONFINITE, step - 1
        q, v = qn.copy(), vn.copy()
        if j < save.shape[0] and save[j] == step:
            ts[j], Q[j], V[j], D[j], counts[j] = t0 + step * h, q, v, dissipated, m
            recs[j, :m] = S.rec[:m]
            j += 1
    return ts[:j], Q[:j], V[:j], D[:j], counts[:j], recs[:j], STEPPING_OK, nsteps
