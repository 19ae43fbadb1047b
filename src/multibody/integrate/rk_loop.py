"""The compiled fixed-step loop, compiled once for every system: the system's functions are called by address.

:func:`rk_loop` integrates ``dx/dt = rhs(t, x)`` with the fixed-step methods (the tableaux of ``tableaux.py``,
STORMER6 by its own step; ``fixed_step``'s module docstring describes them). It does not name the system's
functions: it receives their addresses ``fns = (rhs, project, observe)`` and a pointer ``pp`` to their parameters,
and calls them through ``kernels.addresses.call_at`` (numba's calling convention: an error they raise propagates).
A system's loop (``integrate/rk_template.py``, specialized per system by ``fixed_step.specialize``) is a small entry
that takes those addresses and that pointer and calls this loop, compiled once for all of them. Before, every system
compiled the whole loop with its own functions in it: 9 loops of 1.7–3.8 CPU s on the install's warm-up
(``docs/first-use.md``), STORMER6's stages half of each.

The functions, as the entry passes them: ``rhs(t, x, pp, out)`` writes ẋ; ``project(x, pp)`` corrects x in place
after each step; ``observe(x, pp, obs, k)`` writes what is recorded with saved state k into ``obs[k]``, called
right after an evaluation of ``rhs`` at that state (see :func:`rk_loop`). Each returns nothing. The loop counts
no references (``KERNEL``: ``_nrt=False``; the arrays it passes are its caller's), and neither do the functions
that read the parameters through the pointer when the system's own function does not (``rk_template``).
"""
import numpy as np
from numba import njit

from multibody.integrate.tableaux import (KAHAN_LI_S9ODR6, SV_FLOOR, SV_MAX_ITER, SV_TOL, TABLEAU_C,
                                          TABLEAU_STAGES, all_finite, stage_state)
from multibody.kernels.addresses import call_at
from multibody.kernels.spatial import INLINE, KERNEL


@njit(**KERNEL, inline=INLINE)
def _save(k, t, x, ts, xs):
    ts[k] = t
    for j in range(x.shape[0]):
        xs[k, j] = x[j]


@njit(**KERNEL, inline=INLINE)
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


@njit(**KERNEL, inline=INLINE)
def _iterate(t, x, base, scale, lo, hi, extra, pp, fns, k):
    """The fixed-point iteration of one implicit Störmer–Verlet equation on x[lo:hi] (``fixed_step``'s module
    docstring): ``k`` holds rhs at the current iterate on entry and on exit. Returns whether it converged."""
    last = np.inf
    for it in range(SV_MAX_ITER):
        change = _fixed_point_change(x, base, scale, k, lo, hi, extra)
        call_at(fns[0], (t, x, pp, k))
        if not change > SV_TOL:  # converged (or NaN: left to the finiteness check)
            return True
        if change <= SV_FLOOR and change > 0.5 * last:  # no longer contracting: round-off floor
            return True
        last = change
    return False


@njit(**KERNEL, inline=INLINE)
def stormer6_step(t, x, h, nsplit, pp, fns, xt, K):
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
        call_at(fns[0], (tstage, xt, pp, k1))
        converged = _iterate(tstage, xt, start, hc, nsplit, n, none, pp, fns, k1) and converged
        # q+ = q + c/2 (f(q, p½) + f(q+, p½)), iterated from q + c f(q, p½)
        for j in range(nsplit):
            fq[j] = k1[j]
            xt[j] = start[j] + c * k1[j]
        call_at(fns[0], (tstage + c, xt, pp, k1))
        converged = _iterate(tstage + c, xt, start, hc, 0, nsplit, fq, pp, fns, k1) and converged
        # p+ = p½ + c/2 g(q+, p½)
        for j in range(nsplit, n):
            xt[j] += hc * k1[j]
        tstage += c
    return converged


@njit(**KERNEL)
def rk_loop(x, t0, h, first, nsteps, save, pp, fns, method, nsplit, ts, xs, obs, xt, K):
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
    evaluated at x itself, so ``observe`` is called right after it for a saved state (or
    after one more evaluation past the last step) and may read what that evaluation left in the workspaces
    of the parameters instead of computing it again."""
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
                call_at(fns[0], (t, x, pp, K[0]))
                call_at(fns[2], (x, pp, obs, pending))
            pending = -1
            if not stormer6_step(t, x, h, nsplit, pp, fns, xt, K):
                status = 1 if not all_finite(xt) else 2
                break
            ns = 0
        else:
            ns = TABLEAU_STAGES[method]
            call_at(fns[0], (t, x, pp, K[0]))
            if pending >= 0:
                if observing:
                    call_at(fns[2], (x, pp, obs, pending))
                pending = -1
        for s in range(1, ns + 1):  # the stages after the first, then (s = ns) the step itself
            stage_state(method, s, x, h, nsplit, K, 0, xt)
            if s != ns:
                call_at(fns[0], (t + TABLEAU_C[method, s] * h, xt, pp, K[s]))
        call_at(fns[1], (xt, pp))
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
        call_at(fns[0], (t0 + done * h, x, pp, K[0]))
        call_at(fns[2], (x, pp, obs, pending))
    return k, status, done
