"""Many fixed-step runs of a tree in SIMD lanes: ``LANES`` runs advance together (``kernels/lanes.py``).

:func:`lanes_groups` is the fast path of ``simulate_batch`` for the models ``kernels.lanes.lanes_supported``
accepts. The runs are grouped ``LANES`` at a time (the last group padded with copies of its first run, whose
results are dropped); the groups are shared between threads (``numba.get_num_threads()`` of them). Within a group,
:func:`lanes_run` is ``rk_loop.rk_loop`` with every statement applied to all lanes: the same tableau
(``tableaux.TABLEAU_*``), the same sums in the same order, the same saving rule, the energies recorded from
the evaluation at the saved state, and a lane whose state becomes non-finite stops as a single run stops — it
keeps its last finite state (saved as one more row) while the other lanes go on. Each run therefore equals
``simulate`` of that run bit for bit, whatever the number of threads.
"""
import numpy as np
from numba import njit

from multibody.kernels.spatial import COMPILED
from multibody.integrate.tableaux import TABLEAU_A, TABLEAU_B, TABLEAU_C, TABLEAU_DIV, TABLEAU_STAGES
from multibody.kernels.lanes import (LANES, L_KINETIC, L_POTENTIAL, L_VAPPLIED, lanes_parameters, lanes_rhs,
                                     lanes_workspace_size)

#: the methods (codes of ``fixed_step.METHODS``) the lanes run: the explicit tableaux RK2, HEUN, RK4, VERLET
LANE_METHODS = (0, 1, 2, 3)
_OK, _NONFINITE = 0, 1


@njit(**COMPILED, inline="always")
def _save_lane(r, k, t, XL, b, TS, XS):
    """Row k of run r: the time t and the state of lane b."""
    TS[r, k] = t
    for j in range(XS.shape[2]):
        XS[r, k, j] = XL[j * LANES + b]


@njit(**COMPILED, inline="always")
def _observe(W, runs, pending, OBS):
    """The energies of the evaluation just made, for every lane with a saved state waiting for them
    (``tree.tree_observe``: kinetic, and potential of gravity + that of the applied forces, V1 + 0.0 with V1 of the
    joint springs and 0.0 of the point springs, which the lanes do not take)."""
    oT = L_KINETIC * LANES
    oV = L_POTENTIAL * LANES
    oA = L_VAPPLIED * LANES
    for b in range(LANES):
        if pending[b] >= 0:
            if OBS.shape[2] > 0:
                OBS[runs[b], pending[b], 0] = W[oT + b]
                OBS[runs[b], pending[b], 1] = W[oV + b] + (W[oA + b] + 0.0)
            pending[b] = -1


@njit(**COMPILED)
def lanes_run(mi, mf, F, XL, TL, ML, t0, h, nsteps, save, method, nsplit, runs, real, TS, XS, OBS, INFO, W, XT, K, ACC,
              C):
    """Integrate the ``LANES`` runs of one group from step 0 to ``nsteps`` (``rk_loop.rk_loop`` lane by lane;
    see the module docstring). ``F``: the joint forces (``model.packing.joint_force_table``); ``XL``: the runs'
    states, entry j of lane b at ``j * LANES + b`` (ends as the final states); ``TL``: their generalized forces,
    likewise; ``ML``: their body masses and gravity (``kernels.lanes.lanes_parameters``), likewise;
    ``runs[b]``: the run of lane b; ``real[b]``: False for a padding lane, whose outputs are not
    written. ``W``, ``XT``, ``K``, ``ACC``: scratch. ``C``: the controllers' table (``kernels.lanes.lanes_rhs``)."""
    n = XS.shape[2]
    nsave = save.shape[0]
    div = TABLEAU_DIV[method]
    ns = TABLEAU_STAGES[method]
    k = np.zeros(LANES, dtype=np.int64)
    pending = np.full(LANES, -1, dtype=np.int64)
    done = np.zeros(LANES, dtype=np.int64)
    status = np.zeros(LANES, dtype=np.int64)
    alive = np.ones(LANES, dtype=np.bool_)
    lanes_parameters(mi, ML, W)
    for b in range(LANES):
        if not real[b]:
            pending[b] = -2  # never observed, never saved
    if nsave > 0 and save[0] == 0:
        for b in range(LANES):
            if real[b]:
                _save_lane(runs[b], 0, t0 + 0 * h, XL, b, TS, XS)
                pending[b] = 0
                k[b] = 1
    nalive = LANES
    for step in range(nsteps):
        if nalive == 0:
            break
        t = t0 + step * h
        lanes_rhs(mi, mf, XL, TL, F, W, K[0], t, C)
        _observe(W, runs, pending, OBS)
        for s in range(1, ns + 1):  # the stages after the first, then (s = ns) the step itself
            final = s == ns
            scale = h / div if final else h
            for j in range(n):
                part = 0 if j < nsplit else 1
                for b in range(LANES):
                    ACC[b] = 0.0
                for r in range(s):
                    a = TABLEAU_B[method, r, part] if final else TABLEAU_A[method, s, r, part]
                    if a != 0.0:
                        for b in range(LANES):
                            ACC[b] += a * K[r, j * LANES + b]
                for b in range(LANES):
                    XT[j * LANES + b] = XL[j * LANES + b] + scale * ACC[b]
            if not final:
                lanes_rhs(mi, mf, XT, TL, F, W, K[s], t + TABLEAU_C[method, s] * h, C)
        for b in range(LANES):
            if not alive[b]:
                continue
            finite = True
            for j in range(n):
                if not np.isfinite(XT[j * LANES + b]):
                    finite = False
                    break
            if finite:
                for j in range(n):
                    XL[j * LANES + b] = XT[j * LANES + b]
                done[b] = step + 1
                if real[b] and k[b] < nsave and save[k[b]] == done[b]:
                    _save_lane(runs[b], k[b], t0 + done[b] * h, XL, b, TS, XS)
                    pending[b] = k[b]
                    k[b] += 1
            else:  # the run stops here, keeping its last finite state (saved if it was not)
                alive[b] = False
                nalive -= 1
                status[b] = _NONFINITE
                if real[b] and done[b] > 0 and (k[b] == 0 or save[k[b] - 1] != done[b]):
                    _save_lane(runs[b], k[b], t0 + done[b] * h, XL, b, TS, XS)
                    pending[b] = k[b]
                    k[b] += 1
    waiting = False
    for b in range(LANES):
        waiting = waiting or pending[b] >= 0
    if waiting:   # (for the energies, which do not depend on t)
        lanes_rhs(mi, mf, XL, TL, F, W, K[0], t0 + nsteps * h, C)
        _observe(W, runs, pending, OBS)
    for b in range(LANES):
        if real[b]:
            INFO[runs[b], 0] = k[b]
            INFO[runs[b], 1] = status[b]
            INFO[runs[b], 2] = done[b]


@njit(**COMPILED, nogil=True)
def lanes_groups(mi, mf, F, X, TAU, MG, C, t0, h, nsteps, save, method, nsplit, TS, XS, OBS, INFO, g0, g1):
    """The groups g0 ≤ g < g1 of ``LANES`` consecutive runs of X (runs, n), with the generalized forces TAU
    (runs, nv), the body masses and gravity MG (runs, nbodies + 3) and the controllers' table C, one after the other
    (:func:`lanes_run`); outputs as ``rk_template.rk_batch``; X ends as the final
    states. Compiled without the GIL: ``fixed_step.run_fixed_batch`` runs slices of the groups in threads
    (``kernels.threads.in_threads``; a numba ``prange`` loop took 6 s to compile on a fresh install)."""
    nb, n = X.shape
    nv = TAU.shape[1]
    W = np.empty(lanes_workspace_size(mi.shape[0]))
    XL = np.empty(n * LANES)
    TL = np.empty(nv * LANES)
    nm = MG.shape[1]
    ML = np.empty(nm * LANES)
    XT = np.empty(n * LANES)
    K = np.empty((4, n * LANES))
    ACC = np.empty(LANES)
    runs = np.empty(LANES, dtype=np.int64)
    real = np.empty(LANES, dtype=np.bool_)
    for g in range(g0, g1):
        for b in range(LANES):
            r = g * LANES + b
            real[b] = r < nb
            runs[b] = r if r < nb else g * LANES
            for j in range(n):
                XL[j * LANES + b] = X[runs[b], j]
            for j in range(nv):
                TL[j * LANES + b] = TAU[runs[b], j]
            for j in range(nm):
                ML[j * LANES + b] = MG[runs[b], j]
        lanes_run(mi, mf, F, XL, TL, ML, t0, h, nsteps, save, method, nsplit, runs, real, TS, XS, OBS, INFO, W, XT, K,
                  ACC, C)
        for b in range(LANES):
            if real[b]:
                for j in range(n):
                    X[runs[b], j] = XL[j * LANES + b]
