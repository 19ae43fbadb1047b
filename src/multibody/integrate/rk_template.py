"""The compiled fixed-step loops, written once for every system; ``fixed_step.specialize`` instantiates them.

This module is a template: ``specialize(rhs, project, observe, run_params)`` writes a copy of its source in
which the four names imported below are the system's own numba functions, so that the loops call them as
*globals* (numba can then cache the loops on disk; see the caching note of ``integrate/fixed_step.py``).
The defaults imported here only keep the template importable.

* :func:`rk_run` — one run into preallocated outputs; nothing allocated, nothing checked: the steps of every
  method (the tableaux of ``fixed_step.TABLEAU_*``), the projection after each step, the saving rule;
* :func:`rk_batch` — a slice of many runs, compiled without the GIL (``fixed_step.run_fixed_batch`` runs the
  slices in threads): run ``b`` is
  :func:`rk_run` with the parameters ``run_params(params, batch, b)``, so each run is computed by the same
  code, in the same order, as a single run: the results do not depend on the number of threads.

The system's functions: ``rhs(t, x, params, out)`` writes ẋ; ``project(x, params)`` corrects x in place after
each step; ``observe(x, params, obs, k)`` writes what is recorded with saved state k into ``obs[k]`` (e.g. the
energies), called right after an evaluation of ``rhs`` at that state (see :func:`rk_run`);
``run_params(params, batch, b)`` returns the parameters of run b of a batch (with workspaces of its own).
"""
import numpy as np
from numba import njit

from multibody.integrate.fixed_step import (KAHAN_LI_S9ODR6, SV_FLOOR, SV_MAX_ITER, SV_TOL, TABLEAU_C,
                                            TABLEAU_STAGES)
from multibody.integrate.tableaux import all_finite, stage_state
from multibody.integrate.fixed_step import no_observe as observe  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import no_project as project  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import no_rhs as rhs  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import shared_params as run_params  # noqa: F401  (bound by specialize)

#: cache on disk (False when the loops are made for functions that cannot be imported)
CACHE = True
#: options of the functions that only the loops call: inlined into them by numba (few call sites), so that they
#: are not compiled as functions of their own, each with a Python entry point and a copy of the right-hand side
#: (and of ABA in it) through LLVM's optimization and code generation: the first RK4 run of a tree compiles in
#: 4.3 s instead of 5.3 s, the first batch in 9.4 s instead of 12.5 s
_INNER = dict(cache=CACHE, inline="always")


@njit(**_INNER)
def _save(k, t, x, ts, xs):
    ts[k] = t
    for j in range(x.shape[0]):
        xs[k, j] = x[j]


@njit(**_INNER)
def _fixed_point_change(x, base, scale, k, lo, hi, extra):
    """x[j] <- base[j] + scale (k[j] + extra[j]) for j in lo..hi-1 (``extra`` may be zero-length: none);
    returns the largest relative change."""
    change = 0.0
    with_extra = extra.shape[0] > 0
    for j in range(lo, hi):
        new = base[j] + scale * (k[j] + extra[j] if with_extra else k[j])
        change = max(change, abs(new - x[j]) / (1.0 + abs(new)))
        x[j] = new
    return change


@njit(**_INNER)
def _iterate(t, x, base, scale, lo, hi, extra, params, k):
    """The fixed-point iteration of one implicit Störmer–Verlet equation on x[lo:hi] (``fixed_step``'s module
    docstring): ``k`` holds rhs at the current iterate on entry and on exit. Returns whether it converged."""
    last = np.inf
    for it in range(SV_MAX_ITER):
        change = _fixed_point_change(x, base, scale, k, lo, hi, extra)
        rhs(t, x, params, k)
        if not change > SV_TOL:  # converged (or NaN: left to the finiteness check)
            return True
        if change <= SV_FLOOR and change > 0.5 * last:  # no longer contracting: round-off floor
            return True
        last = change
    return False


@njit(**_INNER)
def stormer6_step(t, x, h, nsplit, params, xt, K):
    """One STORMER6 step from (t, x) into ``xt``: the Störmer–Verlet stages γ_s h (Kahan & Li s9odr6a) on
    x = [q (nsplit), p], each solving its two implicit equations by fixed-point iteration (``fixed_step``'s
    module docstring). ``K`` (4, n) is scratch. Returns whether every iteration converged."""
    n = x.shape[0]
    k1, start, fq = K[0], K[1], K[2]
    none = K[3, :0]
    for j in range(n):
        xt[j] = x[j]
    converged = True
    tstage = t
    for s in range(9):
        c = KAHAN_LI_S9ODR6[s] * h
        hc = 0.5 * c
        for j in range(n):
            start[j] = xt[j]  # (q, p) at the start of the stage
        # p½ = p + c/2 g(q, p½), iterated from p
        rhs(tstage, xt, params, k1)
        converged = _iterate(tstage, xt, start, hc, nsplit, n, none, params, k1) and converged
        # q+ = q + c/2 (f(q, p½) + f(q+, p½)), iterated from q + c f(q, p½)
        for j in range(nsplit):
            fq[j] = k1[j]
            xt[j] = start[j] + c * k1[j]
        rhs(tstage + c, xt, params, k1)
        converged = _iterate(tstage + c, xt, start, hc, 0, nsplit, fq, params, k1) and converged
        # p+ = p½ + c/2 g(q+, p½)
        for j in range(nsplit, n):
            xt[j] += hc * k1[j]
        tstage += c
    return converged


@njit(cache=CACHE)
def rk_run(x, t0, h, first, nsteps, save, params, method, nsplit, ts, xs, obs, xt, K):
    """Integrate ``dx/dt = rhs(t, x)`` in place of ``x``, the state at step ``first`` of the grid ``t0 + k h``,
    through the steps ``first + 1 .. nsteps`` (step k ends at ``t0 + k h``, computed so whatever ``first`` is:
    a run made in chunks gives the numbers of one call); save the state at the step numbers ``save``
    (ascending, in ``first .. nsteps``; ``first`` is the state given, saved unprojected) into ``ts``, ``xs``,
    which have a row more than ``save`` for the last finite state of a failed run, and what ``observe`` records
    into the same row of ``obs`` (when it has columns). ``xt`` (like x) and ``K`` (4, len(x)) are scratch.
    Returns ``(rows saved, status, last step done)``: the run stops at the first step that makes the state
    non-finite (status 1), or (STORMER6, method 4) whose implicit equations do not converge (status 2), x keeping
    the last finite state.

    Stage s of ``method`` evaluates ``K[s] = rhs(t + c_s h, x + h Σ_r a_sr K[r])`` and the step is
    ``x + (h / div) Σ_r b_r K[r]``, with coefficients of their own for the positions (the first ``nsplit``
    entries) and the velocities: a partitioned Butcher tableau (``fixed_step.TABLEAU_*``). Stage 0 is
    evaluated at x itself, so ``observe(x, params, obs, k)`` is called right after it for a saved state (or
    after one more evaluation past the last step) and may read what that evaluation left in the workspaces
    of ``params`` instead of computing it again."""
    n = x.shape[0]
    nsave = save.shape[0]
    observing = obs.shape[1] > 0
    k = 0
    pending = -1  # the row whose observation waits for the next evaluation of rhs at its state
    if nsave > 0 and save[0] == first:
        _save(0, t0 + first * h, x, ts, xs)
        pending = 0
        k = 1
    status = 0
    done = first
    for step in range(first, nsteps):
        t = t0 + step * h
        if method == 4:
            if pending >= 0 and observing:
                rhs(t, x, params, K[0])
                observe(x, params, obs, pending)
            pending = -1
            if not stormer6_step(t, x, h, nsplit, params, xt, K):
                status = 1 if not all_finite(xt) else 2
                break
            ns = 0
        else:
            ns = TABLEAU_STAGES[method]
            rhs(t, x, params, K[0])
            if pending >= 0:
                if observing:
                    observe(x, params, obs, pending)
                pending = -1
        for s in range(1, ns + 1):  # the stages after the first, then (s = ns) the step itself
            stage_state(method, s, x, h, nsplit, K, 0, xt)
            if s != ns:
                rhs(t + TABLEAU_C[method, s] * h, xt, params, K[s])
        project(xt, params)
        if not all_finite(xt):
            status = 1
            break
        for j in range(n):
            x[j] = xt[j]
        done = step + 1
        if k < nsave and save[k] == done:
            _save(k, t0 + done * h, x, ts, xs)
            pending = k
            k += 1
    if status != 0 and done > first and (k == 0 or save[k - 1] != done):
        _save(k, t0 + done * h, x, ts, xs)  # the last finite state
        pending = k
        k += 1
    if pending >= 0 and observing:
        rhs(t0 + done * h, x, params, K[0])
        observe(x, params, obs, pending)
    return k, status, done


@njit(cache=CACHE, nogil=True)
def rk_batch(X, t0, h, nsteps, save, params, batch, method, nsplit, b0, b1, TS, XS, OBS, INFO):
    """Runs b0 ≤ b < b1 of ``X`` (runs, n), one after the other: run b is :func:`rk_run` with
    ``run_params(params, batch, b)``, into ``TS[b]``, ``XS[b]``, ``OBS[b]`` and ``INFO[b] = (rows saved, status,
    steps done)``; ``X[b]`` ends as the final state. Compiled without the GIL: ``fixed_step.run_fixed_batch`` runs
    slices of the runs in threads (a numba ``prange`` loop carried ``rk_run`` and the right-hand side through
    LLVM twice more: about 5 s on a fresh install)."""
    n = X.shape[1]
    first = np.int64(0)  # not a literal 0: the rk_run that single runs compile (int64) serves the batch too
    xt = np.empty(n)
    K = np.empty((4, n))
    for b in range(b0, b1):
        k, status, done = rk_run(X[b], t0, h, first, nsteps, save, run_params(params, batch, b), method, nsplit,
                                 TS[b], XS[b], OBS[b], xt, K)
        INFO[b, 0] = k
        INFO[b, 1] = status
        INFO[b, 2] = done
