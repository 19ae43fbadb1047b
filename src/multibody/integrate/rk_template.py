"""A system's fixed-step loops, written once for every system; ``fixed_step.specialize`` instantiates them.

This module is a template: ``specialize(rhs, project, observe, run_params)`` writes a copy of its source in
which the four names imported below are the system's own numba functions, so that the loops call them as
*globals* (numba can then cache the loops on disk; see the caching note of ``integrate/fixed_step.py``).
The defaults imported here only keep the template importable.

* :func:`rk_run` — one run into preallocated outputs; nothing allocated, nothing checked: the loop of
  ``integrate/rk_loop.py`` (the steps of every method, the projection after each step, the saving rule),
  compiled once for all systems, called with the addresses of this system's functions (:func:`rhs_at`,
  :func:`project_at`, :func:`observe_at`) and a pointer to its parameters (``kernels/addresses.py``);
* :func:`rk_batch` — a slice of many runs, compiled without the GIL (``fixed_step.run_fixed_batch`` runs the
  slices in threads): run ``b`` is
  :func:`rk_run` with the parameters ``run_params(params, batch, b)``, so each run is computed by the same
  code, in the same order, as a single run: the results do not depend on the number of threads.

The system's functions: ``rhs(t, x, params, out)`` writes ẋ; ``project(x, params)`` corrects x in place after
each step; ``observe(x, params, obs, k)`` writes what is recorded with saved state k into ``obs[k]`` (e.g. the
energies), called right after an evaluation of ``rhs`` at that state (see ``rk_loop.rk_loop``);
``run_params(params, batch, b)`` returns the parameters of run b of a batch (with workspaces of its own).
"""
import numpy as np
from numba import njit

from multibody.integrate.rk_loop import rk_loop
from multibody.kernels.addresses import function_address, opaque, pointee, pointer_to
from multibody.kernels.spatial import COMPILED
from multibody.integrate.fixed_step import no_observe as observe  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import no_project as project  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import no_rhs as rhs  # noqa: F401  (bound by specialize)
from multibody.integrate.fixed_step import shared_params as run_params  # noqa: F401  (bound by specialize)

#: cache on disk (False when the loops are made for functions that cannot be imported)
CACHE = True
#: the package's dispatcher (``kernels/spatial.py``): the entry calls the loop (``rk_loop``) by address
_TARGET = COMPILED["_target"]


def _counts_references(function):
    """Whether numba counts references in ``function`` (it may allocate). The function reading its parameters
    from the pointer counts them only then: numba compiles a callee with its caller's setting, and counting them
    costs two atomic operations per array of the parameters per call (a tree's: about 15 arrays; 15 % of a step
    of a 5-body chain)."""
    return getattr(function, "targetoptions", {}).get("_nrt", True)


@njit(cache=CACHE, _nrt=_counts_references(rhs), _target=_TARGET)
def rhs_at(t, x, pp, out):
    """``rhs`` with the parameters at ``pp`` (the loop's call by address)."""
    rhs(t, x, pointee(pp), out)


@njit(cache=CACHE, _nrt=_counts_references(project), _target=_TARGET)
def project_at(x, pp):
    """``project`` with the parameters at ``pp``."""
    project(x, pointee(pp))


@njit(cache=CACHE, _nrt=_counts_references(observe), _target=_TARGET)
def observe_at(x, pp, obs, k):
    """``observe`` with the parameters at ``pp``."""
    observe(x, pointee(pp), obs, k)


@njit(cache=CACHE, _target=_TARGET)
def rk_run(x, t0, h, first, nsteps, save, params, method, nsplit, ts, xs, obs, xt, K):
    """Integrate ``dx/dt = rhs(t, x)`` in place of ``x`` from step ``first`` through ``nsteps`` of the grid
    ``t0 + k h``: ``integrate/rk_loop.rk_loop`` (its docstring says what is saved and returned) with this system's
    functions by address and a pointer to ``params``."""
    pp = pointer_to(params)
    row = np.int64(first)     # the type of the saved row the loop passes to observe
    fns = (function_address(rhs_at, (t0, x, pp, x)), function_address(project_at, (x, pp)),
           function_address(observe_at, (x, pp, obs, row)))
    return rk_loop(x, t0, h, first, nsteps, save, opaque(pp), fns, method, nsplit, ts, xs, obs, xt, K)


@njit(cache=CACHE, nogil=True, _target=_TARGET)
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
