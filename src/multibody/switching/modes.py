"""The compiled part of a run with joint limits, latches and releases: the right-hand side of a *mode* (which
coordinates are locked), the guard functions that end a mode, one Runge–Kutta step, and the fixed-step loop
that steps a mode until a guard crosses zero.

A mode of the tree is the set of its locked coordinates — held on a stop (a one-sided constraint), latched, or
held until a release — whose velocities and accelerations are zero. Its dynamics is the tree with those
coordinates prescribed: hybrid dynamics (``kernels/hybrid.py``; seed 001 §3.3.1, RBDA §9.2) gives the
accelerations of the others and the generalized force each locked coordinate needs, its *reaction*. With no
coordinate locked it is ABA, the plain tree right-hand side — the same code, so a run between impacts costs what
a run without limits costs (the guards are a few comparisons per step).

The guards (:func:`guard_values`, one value each, an event when one of those that were ≥ 0 at the start of the
mode becomes < 0):

* a free limited coordinate: its gaps ``q − lower`` and ``upper − q``;
* a coordinate held on its lower (upper) stop: its reaction ``+force`` (``−force``), which must not pull;
* an armed latch: ``side · (q − value)``, side the sign of ``q − value`` when the latch was armed;
* a release not yet made: ``t_release − t``.

A gap that is exactly zero when its mode starts (the stop just left after a rebound, or a stop the joint separates
from) is divided by the time since, to the order of its zero there (``S[S_ORDER]``), so that the root located is
the next one and not the start itself.

The switch array tuple ``S`` (:func:`switch_arrays`) carries the mode, the guard data and the controllers' tuple of
the run (``S[S_CONTROL]``, ``formulations/tree_control.py``); the run across switches (``switching/events.py``)
locates the root of a guard, has the structure (``switching/structure.py``) make the switch, and restarts.

Controllers (the model's ``mb.JointPD``, ``mb.ComputedTorque``, and a compiled torque law ``tau=f``) are bounded
forces: they add ``τ_controllers(t, q, v) + f(t, q, v)`` to the constant generalized forces in every mode, before
ABA or hybrid dynamics (``tree_control.control_extra``, the function of the tree's controlled right-hand side, so a
mode without locked coordinates computes what ``tree_control.tree_rhs_control`` computes), and take no part in
the impulses. A run without them carries a controllers' tuple that adds nothing (``tree_control.controls_tuple``),
so runs with and without controllers share one compiled specialization of the modes (the install compiles it once;
with None in its place numba would compile a second, without the controllers' code). ``S[S_CONTROL]`` may still be
None: numba then prunes the controllers' code.
"""
import numpy as np
from numba import njit

from multibody.kernels.spatial import COMPILED
from multibody.formulations.tree_control import control_extra, is_controlled
from multibody.formulations.tree_rhs import tree_rhs, tree_rhs_extra, tree_rhs_hybrid, tree_rhs_plain
from multibody.switching.events import EVENT
from multibody.integrate.tableaux import METHODS, TABLEAU_C, TABLEAU_STAGES, all_finite, stage_state
from multibody.integrate.manifold import normalize_quaternions

__all__ = ["switch_arrays", "mode_rhs", "mode_rhs_extra", "free_rhs_extra", "guard_values", "crossed", "mode_step",
           "switching_run",
           "S_KNOWN", "S_FORCE", "S_CONTROL",
           "S_LIM_STATE", "S_LATCH_SIDE", "S_RELEASE_T", "S_GUARD", "S_MASK", "FREE", "ON_LOWER", "ON_UPPER",
           "LOCKED", "EVENT"]

#: positions in the switch tuple ``S``
(S_KNOWN, S_QDD, S_FORCE, S_LIM_Q, S_LIM_V, S_LOWER, S_UPPER, S_LIM_STATE, S_LATCH_Q, S_LATCH_VALUE, S_LATCH_SIDE,
 S_RELEASE_T, S_GUARD, S_MASK, S_NLOCKED, S_SINCE, S_ORDER, S_CONTROL) = range(18)
#: the state of a limited coordinate (``S[S_LIM_STATE]``): free, held on its lower or upper stop, locked otherwise
#: (latched or held until a release: its stops are not watched)
FREE, ON_LOWER, ON_UPPER, LOCKED = 0, 1, -1, 2


def switch_arrays(nv, lim_q, lim_v, lower, upper, latch_q, latch_value, n_release, controls):
    """A fresh switch tuple ``S`` for the limits (``lim_q``, ``lim_v``, ``lower``, ``upper``), the latches
    (``latch_q``, ``latch_value``), ``n_release`` releases and the controllers' tuple ``controls``
    (``tree_control.controls_tuple``; None for a run without controllers): every coordinate free, every latch and
    release disarmed (the caller arms them)."""
    nlim, nlat = len(lim_q), len(latch_q)
    ng = 2 * nlim + nlat + n_release
    return (np.zeros(nv), np.zeros(nv), np.zeros(nv),
            np.ascontiguousarray(lim_q, dtype=np.int64), np.ascontiguousarray(lim_v, dtype=np.int64),
            np.ascontiguousarray(lower, dtype=np.float64), np.ascontiguousarray(upper, dtype=np.float64),
            np.zeros(nlim, dtype=np.int64),
            np.ascontiguousarray(latch_q, dtype=np.int64), np.ascontiguousarray(latch_value, dtype=np.float64),
            np.zeros(nlat), np.full(n_release, np.inf), np.zeros(ng), np.ones(ng, dtype=np.bool_),
            np.zeros(1, dtype=np.int64), np.zeros(ng), np.zeros(ng, dtype=np.int64), controls)


#: the code of the classical RK4 (``integrate/tableaux.py``)
RK4 = METHODS["RK4"]

@njit(**COMPILED, inline="always")
def _locked_rhs(t, x, p, S, extra, out):
    """Hybrid dynamics with the locked coordinates' accelerations zero (their reactions into ``S[S_FORCE]``)."""
    qdd = S[S_QDD]
    for k in range(qdd.shape[0]):
        qdd[k] = 0.0
    return tree_rhs_hybrid(t, x, p, extra, S[S_KNOWN], qdd, S[S_FORCE], out)


#: what a mode's right-hand side calls (:func:`rhs_kind`): the tree's without applied forces, with them, hybrid
#: dynamics (the controllers' torques added, if any), ABA with the controllers' torques
PLAIN, APPLIED, HYBRID, CONTROLLED = 0, 1, 2, 3


@njit(**COMPILED)
def _controlled(c):
    """Whether the controllers' tuple ``c`` (None: a run without controllers) has a controller or a compiled law;
    with None, numba prunes the other branch when it compiles (a run without controllers compiles no controller
    code)."""
    if c is None:
        return False
    return is_controlled(c)


@njit(**COMPILED, inline="always")
def rhs_kind(p, S):
    """Which right-hand side the mode calls: :data:`HYBRID` when a coordinate is locked, else the tree's own
    (:data:`APPLIED` when the model has joint or point springs, dampers, efforts; :data:`CONTROLLED` when the run
    has controllers)."""
    if S[S_NLOCKED][0] != 0:
        return HYBRID
    if _controlled(S[S_CONTROL]):
        return CONTROLLED
    return APPLIED if p.applied else PLAIN


@njit(**COMPILED)
def _controls(t, x, p, c, tau):
    """``tau`` + the torques of the controllers' tuple ``c`` at (t, x) (``tree_control.control_extra``); ``tau``
    itself when ``c`` has neither controllers nor a law, or is None (pruned when compiled, as in
    :func:`_controlled`)."""
    if c is None or not is_controlled(c):
        return tau
    return control_extra(t, x, tau, c, p.mi, p.q.shape[0], p.work)


@njit(**COMPILED, inline="always")
def _with_controls(t, x, p, S, tau):
    return _controls(t, x, p, S[S_CONTROL], tau)


@njit(**COMPILED, inline="always")
def _rhs(kind, t, x, p, S, out):
    if kind == PLAIN:
        tree_rhs_plain(t, x, p, out)
    elif kind == APPLIED:
        tree_rhs(t, x, p, out)
    else:
        tau = _with_controls(t, x, p, S, p.tau)
        if kind == CONTROLLED:   # tree_control.tree_rhs_control, the controllers' tuple in S
            tree_rhs_extra(t, x, p, tau, out)
        else:
            _locked_rhs(t, x, p, S, tau, out)


@njit(**COMPILED)
def mode_rhs(t, x, p, S, out):
    """ẋ of the mode with the constant generalized forces of the parameter tuple and the controllers of
    ``S[S_CONTROL]``: the tree right-hand side (ABA; the same function as a run without limits) with no coordinate
    locked, else hybrid dynamics with the locked coordinates' accelerations zero (their reactions into
    ``S[S_FORCE]``)."""
    _rhs(rhs_kind(p, S), t, x, p, S, out)


@njit(**COMPILED)
def mode_rhs_extra(t, x, p, S, extra, out):
    """:func:`mode_rhs` with the generalized forces ``extra`` in place of the constant ones (a Python torque
    callback's); the controllers' torques are added to them."""
    if S[S_NLOCKED][0] == 0:
        tree_rhs_extra(t, x, p, _with_controls(t, x, p, S, extra), out)
        return 0
    return _locked_rhs(t, x, p, S, _with_controls(t, x, p, S, extra), out)


@njit(**COMPILED)
def free_rhs_extra(t, x, p, S, extra, out):
    """ẋ of the tree with every coordinate free (ABA) under the generalized forces ``extra`` and the controllers'
    torques (the accelerations the contact problem of a switch starts from)."""
    tree_rhs_extra(t, x, p, _with_controls(t, x, p, S, extra), out)


@njit(**COMPILED, inline="always")
def guard_values(t, x, S):
    """The guards of the mode at (t, x) into ``S[S_GUARD]`` (module docstring); the reactions are those the last
    :func:`mode_rhs` left in ``S[S_FORCE]`` (evaluate it at (t, x) first). Returns the least guard among those
    watched (``S[S_MASK]``), +inf when none."""
    g = S[S_GUARD]
    mask = S[S_MASK]
    lim_q, lim_v, lower, upper, state = S[S_LIM_Q], S[S_LIM_V], S[S_LOWER], S[S_UPPER], S[S_LIM_STATE]
    force = S[S_FORCE]
    nlim = lim_q.shape[0]
    for k in range(nlim):
        s = state[k]
        if s == FREE:
            qk = x[lim_q[k]]
            g[2 * k] = qk - lower[k]
            g[2 * k + 1] = upper[k] - qk
        elif s == ON_LOWER or s == ON_UPPER:
            g[2 * k] = s * force[lim_v[k]]
            g[2 * k + 1] = np.inf
        else:
            g[2 * k] = np.inf
            g[2 * k + 1] = np.inf
    latch_q, value, side = S[S_LATCH_Q], S[S_LATCH_VALUE], S[S_LATCH_SIDE]
    o = 2 * nlim
    for j in range(latch_q.shape[0]):
        g[o + j] = side[j] * (x[latch_q[j]] - value[j]) if side[j] != 0.0 else np.inf
    o += latch_q.shape[0]
    rel = S[S_RELEASE_T]
    for r in range(rel.shape[0]):
        g[o + r] = rel[r] - t
    # a gap that starts the mode at exactly zero (a stop just left) is divided by (t − t_s)^order, the order of its
    # zero at t_s: the same sign and roots after t_s, positive at t_s, so that a bracketing solver finds the next
    # root and not t_s itself; while the coordinate is still on the stop to the last bit (the motion away from it
    # smaller than its rounding) the gap is not a root either
    since, order = S[S_SINCE], S[S_ORDER]
    least = np.inf
    for i in range(g.shape[0]):
        if order[i] > 0:
            d = t - since[i]
            g[i] = g[i] / (d if order[i] == 1 else d * d) if d > 0.0 and g[i] != 0.0 else 1.0
        if mask[i] and g[i] < least:
            least = g[i]
    return least


@njit(**COMPILED, inline="always")
def crossed(t, x, S):
    """Whether a watched guard of the mode is below zero at (t, x) — :func:`guard_values` ``< 0`` without
    computing the guards (their signs need no division), for the loop's check after every step."""
    mask = S[S_MASK]
    lim_q, lim_v, lower, upper, state = S[S_LIM_Q], S[S_LIM_V], S[S_LOWER], S[S_UPPER], S[S_LIM_STATE]
    for k in range(lim_q.shape[0]):
        s = state[k]
        if s == FREE:
            qk = x[lim_q[k]]
            if (qk < lower[k] and mask[2 * k]) or (qk > upper[k] and mask[2 * k + 1]):
                return True
        elif s == ON_LOWER or s == ON_UPPER:
            if mask[2 * k] and s * S[S_FORCE][lim_v[k]] < 0.0:
                return True
    o = 2 * lim_q.shape[0]
    latch_q, value, side = S[S_LATCH_Q], S[S_LATCH_VALUE], S[S_LATCH_SIDE]
    for j in range(latch_q.shape[0]):
        if side[j] != 0.0 and mask[o + j] and side[j] * (x[latch_q[j]] - value[j]) < 0.0:
            return True
    o += latch_q.shape[0]
    rel = S[S_RELEASE_T]
    for r in range(rel.shape[0]):
        if mask[o + r] and rel[r] < t:
            return True
    return False


@njit(**COMPILED, inline="always")
def _step(kind, quats, k0, t, x, h, p, S, method, nsplit, xt, K):
    """One step of the fixed-step ``method`` from (t, x) into ``xt``, with ``K[k0]`` holding ẋ at (t, x) (k0 is 0 or
    4); stage s > 0 goes to ``K[s]``. ``kind``: :func:`rhs_kind`; ``quats``: normalize the quaternions after it."""
    n = x.shape[0]
    if method == RK4:   # the classical tableau written out: the same operations, without the tableau's lookups
        for s in range(1, 4):
            a = 1.0 if s == 3 else 0.5
            prev = k0 if s == 1 else s - 1
            for j in range(n):
                xt[j] = x[j] + h * (a * K[prev, j])
            _rhs(kind, t + TABLEAU_C[method, s] * h, xt, p, S, K[s])
        scale = h / 6.0
        for j in range(n):
            xt[j] = x[j] + scale * (((K[k0, j] + 2.0 * K[1, j]) + 2.0 * K[2, j]) + K[3, j])
        if quats:
            normalize_quaternions(xt, p)
        return
    ns = TABLEAU_STAGES[method]
    for s in range(1, ns + 1):
        stage_state(method, s, x, h, nsplit, K, k0, xt)
        if s != ns:
            _rhs(kind, t + TABLEAU_C[method, s] * h, xt, p, S, K[s])
    if quats:
        normalize_quaternions(xt, p)


#: the outputs of a dense step (:func:`mode_step`): none
NO_SAVES, NO_TIMES, NO_STATES = np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros((0, 0))


def mode_step(t, x, h, p, S, method, nsplit, xt, K):
    """One step of the fixed-step ``method`` (``fixed_step.TABLEAU_*``: RK2, HEUN, RK4, VERLET) of the mode from
    (t, x) into ``xt``, quaternions normalized; ``K[0]`` must hold ``mode_rhs(t, x)``. ``K`` (5, n) is scratch.
    The step of any size h (0 < h): the dense output the events are located on in fixed-step runs; the step of
    :func:`switching_run` (called for it, ``dense``: its code compiled once, in the loop)."""
    switching_run(x, t, h, 0, 1, NO_SAVES, p, S, method, nsplit, True, NO_TIMES, NO_STATES, xt, K, True)


@njit(**COMPILED)
def switching_run(x, t0, h, first, nsteps, save, p, S, method, nsplit, quats, ts, xs, xt, K, dense):
    """Step the mode from x, the state at step ``first`` of the grid ``t0 + k h``, through the steps up to
    ``nsteps``, saving the states of the step numbers ``save`` (ascending; ``first`` itself when listed) into
    ``ts``, ``xs``; stop before a step after which a watched guard is negative (:func:`crossed`; status
    :data:`EVENT`: x is the state at the last step done, the event lies in the next one) or that makes the state
    non-finite (status 1). ``quats``: the model has quaternions (normalized after each step).

    Each step evaluates the right-hand side at its end state, which is the first stage of the next step (rows 0
    and 4 of ``K`` (5, len(x)) take turns): a step makes the evaluations of ``rk_loop.rk_loop``, calls the same
    right-hand side while no coordinate is locked, and adds the guards' comparisons.
    ``dense``: only the step of size h from x into ``xt``, ``K[0]`` holding ẋ at x, x unchanged (:func:`mode_step`).
    Returns ``(rows saved, status, last step done)``."""
    n = x.shape[0]
    nsave = save.shape[0]
    kind = rhs_kind(p, S)
    k = 0
    t = t0 + first * h
    if nsave > 0 and save[0] == first:
        ts[0] = t
        for j in range(n):
            xs[0, j] = x[j]
        k = 1
    k0 = 0
    if not dense:
        _rhs(kind, t, x, p, S, K[k0])
    status = 0
    done = first
    for step in range(first, nsteps):
        t = t0 + step * h
        _step(kind, quats, k0, t, x, h, p, S, method, nsplit, xt, K)
        if dense:
            break
        if not all_finite(xt):
            status = 1
            break
        t1 = t0 + (step + 1) * h
        k1 = 4 - k0
        _rhs(kind, t1, xt, p, S, K[k1])
        if crossed(t1, xt, S):
            status = EVENT
            break
        for j in range(n):
            x[j] = xt[j]
        k0 = k1
        done = step + 1
        if k < nsave and save[k] == done:
            ts[k] = t1
            for j in range(n):
                xs[k, j] = x[j]
            k += 1
    return k, status, done
