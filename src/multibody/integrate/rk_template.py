"""The compiled fixed-step loops, written once for every system; ``fixed_step.specialize`` instantiates them.

This module is a template: ``specialize(rhs, project, observe, run_params)`` writes a copy of its source in
which the four names imported below are the system's own numba functions, so that the loops call them as
*globals* (numba can then cache the loops on disk; see the caching note of ``integrate/fixed_step.py``).
The defaults imported here only keep the template importable.

* :func:`rk_run` — one run into preallocated outputs; nothing allocated, nothing checked: the step of every
  method (the tableaux of ``fixed_step.METHODS``), the projection after each step, the saving rule;
* :func:`rk_loop` — one run: allocates the outputs and calls :func:`rk_run`;
* :func:`rk_batch` — many runs in parallel (numba ``prange`` over chunks of runs): run ``b`` is
  :func:`rk_run` with the parameters ``run_params(params, batch, b)``, so each run is computed by the same
  code, in the same order, as a single run: the results do not depend on the number of threads.

The system's functions: ``rhs(t, x, params, out)`` writes ẋ; ``project(x, params)`` corrects x in place after
each step; ``observe(x, params, obs, k)`` writes what is recorded with saved state k into ``obs[k]`` (e.g. the
energies), called right after an evaluation of ``rhs`` at that state (see :func:`rk_run`);
``run_params(params, batch, b)`` returns the parameters of run b of a batch (with workspaces of its own).
"""
import numpy as np
from numba import njit, prange

from multibody.integrate.fixed_step import no_observe as observe  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import no_project as project  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import no_rhs as rhs  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import shared_params as run_params  # noqa: F401  (bound by specialize)

#: cache on disk (False when the loops are made for functions that cannot be imported)
CACHE = True


@njit(cache=CACHE, _nrt=False)
def _save(k, t, x, ts, xs):
    ts[k] = t
    for j in range(x.shape[0]):
        xs[k, j] = x[j]


@njit(cache=CACHE, _nrt=False)
def rk_run(x, t0, h, nsteps, save, params, method, nsplit, ts, xs, obs, xt, k1, k2, k3, k4):
    """Integrate ``dx/dt = rhs(t, x)`` in place of ``x`` with ``nsteps`` steps ``h`` from ``t0``; save the state
    at the step numbers ``save`` (ascending; 0 is the initial state, saved unprojected) into ``ts``, ``xs``,
    which have a row more than ``save`` for the last finite state of a failed run, and what ``observe`` records
    into the same row of ``obs`` (when it has columns). ``xt``, ``k1``..``k4`` are scratch vectors like x.
    Returns ``(rows saved, status, steps done)``: the run stops at the first step that makes the state
    non-finite (status 1), x keeping the last finite state.

    ``observe(x, params, obs, k)`` is called right after ``rhs(t, x, params, ·)`` has been evaluated at the
    saved state itself (the first stage of the next step, or one more evaluation after the last step), so it
    may read what that evaluation left in the workspaces of ``params`` instead of computing it again."""
    n = x.shape[0]
    nsave = save.shape[0]
    observing = obs.shape[1] > 0
    k = 0
    pending = -1  # the row whose observation waits for the next evaluation of rhs at its state
    if nsave > 0 and save[0] == 0:
        _save(0, t0, x, ts, xs)
        pending = 0
        k = 1
    status = 0
    done = 0
    half = 0.5 * h
    for step in range(nsteps):
        t = t0 + step * h
        rhs(t, x, params, k1)  # the first stage of every method
        if pending >= 0:
            if observing:
                observe(x, params, obs, pending)
            pending = -1
        if method == 0:  # explicit midpoint
            for j in range(n):
                xt[j] = x[j] + half * k1[j]
            rhs(t + half, xt, params, k2)
            for j in range(n):
                xt[j] = x[j] + h * k2[j]
        elif method == 1:  # Heun
            for j in range(n):
                xt[j] = x[j] + h * k1[j]
            rhs(t + h, xt, params, k2)
            for j in range(n):
                xt[j] = x[j] + half * (k1[j] + k2[j])
        elif method == 2:  # classical RK4
            for j in range(n):
                xt[j] = x[j] + half * k1[j]
            rhs(t + half, xt, params, k2)
            for j in range(n):
                xt[j] = x[j] + half * k2[j]
            rhs(t + half, xt, params, k3)
            for j in range(n):
                xt[j] = x[j] + h * k3[j]
            rhs(t + h, xt, params, k4)
            c = h / 6.0
            for j in range(n):
                xt[j] = x[j] + c * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
        else:  # Störmer / velocity Verlet on x = [q (nsplit), v]
            for j in range(n):
                xt[j] = x[j]
            for j in range(nsplit, n):
                xt[j] = x[j] + half * k1[j]  # kick
            rhs(t + half, xt, params, k2)
            for j in range(nsplit):
                xt[j] = x[j] + h * k2[j]  # drift with qdot(q, v_half)
            rhs(t + h, xt, params, k3)
            for j in range(nsplit, n):
                xt[j] = xt[j] + half * k3[j]  # kick
        project(xt, params)
        finite = True
        for j in range(n):
            if not np.isfinite(xt[j]):
                finite = False
                break
        if not finite:
            status = 1
            break
        for j in range(n):
            x[j] = xt[j]
        done = step + 1
        if k < nsave and save[k] == done:
            _save(k, t0 + done * h, x, ts, xs)
            pending = k
            k += 1
    if status != 0 and done > 0 and (k == 0 or save[k - 1] != done):
        _save(k, t0 + done * h, x, ts, xs)  # the last finite state
        pending = k
        k += 1
    if pending >= 0 and observing:
        rhs(t0 + done * h, x, params, k1)
        observe(x, params, obs, pending)
    return k, status, done


@njit(cache=CACHE)
def rk_loop(x, t0, h, nsteps, save, params, method, nsplit, nobs):
    """One run of :func:`rk_run` (``x`` is advanced in place); returns ``(t, x, obs, status, steps done)`` of the
    saved rows, ``obs`` with ``nobs`` columns."""
    n = x.shape[0]
    ts = np.empty(save.shape[0] + 1)
    xs = np.empty((save.shape[0] + 1, n))
    obs = np.empty((save.shape[0] + 1, nobs))
    k, status, done = rk_run(x, t0, h, nsteps, save, params, method, nsplit, ts, xs, obs, np.empty(n),
                             np.empty(n), np.empty(n), np.empty(n), np.empty(n))
    return ts[:k].copy(), xs[:k].copy(), obs[:k].copy(), status, done


@njit(cache=CACHE, parallel=True)
def rk_batch(X, t0, h, nsteps, save, params, batch, method, nsplit, nchunk, TS, XS, OBS, INFO):
    """Run b of ``X`` (runs, n) is :func:`rk_run` with ``run_params(params, batch, b)``, into ``TS[b]``,
    ``XS[b]``, ``OBS[b]`` and ``INFO[b] = (rows saved, status, steps done)``; ``X[b]`` ends as the final state.
    The runs are split into ``nchunk`` chunks of consecutive runs, one chunk per parallel iteration."""
    nb = X.shape[0]
    n = X.shape[1]
    for ch in prange(nchunk):
        xt = np.empty(n)
        k1 = np.empty(n)
        k2 = np.empty(n)
        k3 = np.empty(n)
        k4 = np.empty(n)
        for b in range(ch * nb // nchunk, (ch + 1) * nb // nchunk):
            p = run_params(params, batch, b)
            k, status, done = rk_run(X[b], t0, h, nsteps, save, p, method, nsplit, TS[b], XS[b], OBS[b], xt, k1,
                                     k2, k3, k4)
            INFO[b, 0] = k
            INFO[b, 1] = status
            INFO[b, 2] = done
