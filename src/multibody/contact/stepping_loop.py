"""The run of the time-stepping model: the compiled loop over the steps of ``contact/stepping_solver.py``.

A :class:`SteppingSystem` (made by ``contact/models.py``) holds the initial state, the parameters of the step
(:data:`SteppingParams`) and the generalized forces besides the model's own: constant ones, the model's
controllers and a compiled torque law (``model.packing.Controls``, ``formulations/tree_control.py``: added before
every step, in the loop), or a Python callable ``tau(t, q, v) -> (nv,)``, which the loop calls at each step through
its C address as it calls a compiled law (``formulations.tree_control.PythonTorque``: Solo12 standing 2 s with its
posture law in Python 48.6 → 13.6 µs per step, the same law compiled 6.5). Rows of Python constraints make the run a Python
loop that calls the compiled loop for one step at a time (:func:`python_steps`; it writes the rows before each). A
moving base and general joints are written into the workspaces before each step inside the loop
(:data:`Prescribed`): the base's state from a table of the chunk's steps that the run fills
(``BaseMotion.block``, what ``Data.set_time`` writes), the general joints' kinematics by their generated function
called through its address (``kernels.general_joint.fill_address``).

:func:`stepping_loop` makes the steps ``first + 1 .. stop`` of size ``h`` and keeps, at the step numbers ``save``,
the state, the energy dissipated so far (by the impulses and the model's dampers) and the contacts of the step
that ended there (records of ``stepping_solver.R_WIDTH`` numbers: pair, point, normal, normal force, friction
force, signed distance, feature); with a ``trace`` buffer it also keeps every state of the chunk (for the events
of the run loop, ``contact/stepping_run.py``).
"""
import math
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from multibody.contact.stepping_solver import N_PREV, R_WIDTH, stepping_step
from multibody.formulations.base import callback_forces
from multibody.formulations.tree_control import control_torques, is_controlled
from multibody.kernels.control import call_event, call_torque
from multibody.kernels.kinematics import BASE_WIDTH
from multibody.kernels.spatial import INLINE, KERNEL
from multibody.rows.constraint_rows import CFG_M

__all__ = ["SteppingParams", "SteppingSystem", "Prescribed", "CompiledEvents", "compiled_events", "stepping_loop",
           "step_scratch", "NO_EVENTS", "STEPPING_OK",
           "STEPPING_NONFINITE", "STEPPING_EVENT"]

#: statuses of the loop: every step done; a state became non-finite; a terminal compiled event ended the run
STEPPING_OK, STEPPING_NONFINITE, STEPPING_EVENT = 0, 1, 2

#: the compiled events of a run (numba functions ``g(t, q, v)`` called through their C addresses,
#: ``formulations.tree_control.compiled_event``): addresses, directions, terminal flags, the values at the last
#: step, and the event times found (``times[k, :count[k]]``, drained by the run loop after each chunk)
CompiledEvents = namedtuple("CompiledEvents", "address direction terminal last times count")

#: what is written into the workspaces before each step (module docstring): ``base`` (rows, BASE_WIDTH) the base's
#: blocks at the start of the steps of a chunk, row i for its step first + 1 + i (no rows: the ground is fixed), and
#: ``fill`` the address of the general joints' kinematics (0: none)
Prescribed = namedtuple("Prescribed", "base fill")

#: the parameters of the step: the tree's (``model.packing.TreeParams``), the collision set
#: (``stepping_solver.Geometry``), the solver's arrays (``stepping_solver.Solver``), the unit rows
#: (``rows.unit_rows.UnitRows``), the loops' workspace (``rows.constraint_rows.Work``; without rows for a model
#: without constraints), the controllers (``model.packing.Controls``: a tuple even without controllers, which then
#: adds nothing) and the :data:`Prescribed` motion
SteppingParams = namedtuple("SteppingParams", "tree geometry solver units loops control prescribed")


@dataclass
class SteppingSystem:
    """What the time-stepping model hands to ``simulate``: ``q0``, ``v0``; ``params`` the
    :data:`SteppingParams`; ``tau`` (nv,) constant generalized forces; ``callback`` a Python ``tau(t, q, v)`` or
    None; ``capacity`` the most contacts a step can have; ``make_result(t, Q, V, dissipated, counts, records,
    info)`` the Result; ``info`` facts for ``result.info``; ``model`` the model it runs; ``before_step`` and
    ``torque`` (below)."""

    q0: np.ndarray
    v0: np.ndarray
    params: tuple
    tau: np.ndarray
    capacity: int
    make_result: object
    callback: object = None
    info: dict = field(default_factory=dict)
    model: object = None
    #: ``write(t, q, v, h)`` before each step (the rows of Python constraints), or None
    before_step: object = None
    #: the pairs of its collision set by name (``CollisionSet.pair_names``)
    pair_names: tuple = ()
    #: ``remake(model, q0, v0, tau)``: the system of another model with the same parameters (a separation,
    #: ``contact/stepping_structures.py``)
    remake: object = None
    #: the ``callback`` as the compiled loop's torque law (``formulations.tree_control.PythonTorque``, its address in
    #: the controllers' tuple of ``params``), or None: the loop calls it at each step
    torque: object = None

    @property
    def python_steps(self):
        """Whether the steps run in the Python loop (rows of Python constraints to write before each step, or a torque
        callback that the compiled loop does not call itself)."""
        return self.before_step is not None or (self.callback is not None and self.torque is None)

    @property
    def table_rows(self):
        """The most steps whose base states the table of :data:`Prescribed` holds (0: the ground is fixed)."""
        return self.params.prescribed.base.shape[0]

    def write_base(self, t0, h, first, stop):
        """The base's blocks at the starts of the steps first + 1 .. stop of the grid t0 + k h (at most
        :attr:`table_rows` of them) into the table (``BaseMotion.block`` at t0 + (step − 1) h: the numbers
        ``Data.set_time`` writes)."""
        motion, table = self.model.base_motion, self.params.prescribed.base
        for i in range(stop - first):
            motion.block(t0 + (first + i) * h, table[i])

    def run_state(self):
        """The arrays besides (q, v) that the next steps depend on: the impulses of the last step (the warm start
        of the next solve), the latches' sides and the loops' auxiliary variables — what a checkpoint keeps."""
        P = self.params
        S = P.solver
        out = {"prev_key": S.prev_key.copy(), "prev_lam": S.prev_lam.copy(),
               "prev_count": np.array([S.count[N_PREV]]), "latch_side": P.units.latch_side.copy()}
        if P.loops.level.shape[0]:      # (a model with constraints: its rows' workspace has rows)
            out["loop_s"] = P.loops.s.copy()
        return out

    def restore(self, state):
        """Put back what :meth:`run_state` returned (a ``ValueError`` for arrays that do not fit)."""
        P = self.params
        S = P.solver
        pairs = [(S.prev_key, "prev_key"), (S.prev_lam, "prev_lam"), (P.units.latch_side, "latch_side")]
        if P.loops.level.shape[0]:
            pairs.append((P.loops.s, "loop_s"))
        for target, name in pairs:
            value = np.asarray(state[name])
            if value.shape != target.shape:
                raise ValueError(f"{name} has shape {value.shape}, expected {target.shape}")
            target[...] = value
        count = int(np.asarray(state["prev_count"]).reshape(-1)[0])
        if not 0 <= count <= S.prev_key.shape[0]:
            raise ValueError(f"prev_count = {count} is not a row count")
        S.count[N_PREV] = count


@njit(**KERNEL, inline=INLINE)
def _controls(control, p, tau_const, t, q, v, out):
    """τ_const + the controllers' and the compiled law's torques at (t, q, v) (``tree_control.control_torques``)
    into ``out`` (nv); ``tau_const`` itself without controllers (``tree_control.is_controlled``)."""
    nv = v.shape[0]
    if is_controlled(control):
        extra = control_torques(t, q, v, tau_const, control, p.mi, p.work)
        for k in range(nv):
            out[k] = extra[k]
    else:
        for k in range(nv):
            out[k] = tau_const[k]


@njit(**KERNEL, forceinline=True)
def _write(W, row, t, q, v, work):
    """The :data:`Prescribed` motion ``W`` at its table row ``row`` (time t, state (q, v)) into ``work``."""
    if W.base.shape[0] > 0:
        base = work.shape[0] - BASE_WIDTH
        for k in range(BASE_WIDTH):
            work[base + k] = W.base[row, k]
    if W.fill != 0:
        call_torque(W.fill, t, q, v, work)


@njit(**KERNEL, inline=INLINE)
def _write_loops(W, row, t, q, v, loops):
    """:func:`_write` into the loops' workspace; nothing without compiled rows (the workspace then unread)."""
    if loops is None or loops.cfg[CFG_M] == 0.0:
        return
    _write(W, row, t, q, v, loops.tree.work)


@njit(**KERNEL, inline=INLINE)
def _prescribe(P, row, t, q, v):
    """The prescribed motion at the step of table row ``row`` into the workspaces of the tree and of the loops: the
    base's block, the general joints' kinematics."""
    _write(P.prescribed, row, t, q, v, P.tree.work)
    _write_loops(P.prescribed, row, t, q, v, P.loops)


@njit(**KERNEL, inline=INLINE)
def one_step(P, tau, t, q, v, h, extra, qn, vn, row):
    """One step from (q, v) at t into (qn, vn) under the constant forces ``tau`` and the controllers of ``P``, the
    prescribed motion of its table row ``row`` written first; ``extra`` (nv) scratch. Returns ``(contacts,
    impulses' work, dampers' dissipation)``.

    Inlined by numba into :func:`stepping_loop`, the only compiled function that calls the step: numba optimizes
    and emits a function's machine code for itself and once more in every function that calls it, so a compiled
    ``one_step`` was the step's code compiled a third time (12 CPU s of the install). ``stepping_step`` stays a
    function of its own that LLVM inlines (``forceinline``): optimized alone first, then in the loop, it runs 5–7 %
    faster than inlined by numba into the loop, optimized once as a part of the whole (Solo12 standing, -O1)."""
    _prescribe(P, row, t, q, v)
    _controls(P.control, P.tree, tau, t, q, v, extra)
    return stepping_step(P.tree, P.geometry, P.solver, P.units, P.loops, t, q, v, h, extra, qn, vn)


def step_scratch(q, v):
    """The scratch of :func:`stepping_loop` for the state (q, v): the next state and the step's extra forces."""
    return np.empty(q.shape[0] + 2 * v.shape[0])


@njit(**KERNEL)
def _record(k, t, q, v, dissipated, S, m, ts, Q, V, D, counts, recs):
    ts[k] = t
    for i in range(q.shape[0]):
        Q[k, i] = q[i]
    for i in range(v.shape[0]):
        V[k, i] = v[i]
    D[k] = dissipated
    counts[k] = m
    for c in range(m):
        for i in range(recs.shape[2]):
            recs[k, c, i] = S.rec[c, i]


@njit(**KERNEL)
def _crossed(E, t, h, q, v):
    """Evaluate the compiled events at the state (q, v) of time t, the step of size h after their last values:
    a sign change (in an event's direction) is an event at the linearly interpolated time, recorded; returns whether
    a terminal one happened."""
    stop = False
    for k in range(E.address.shape[0]):
        g1 = call_event(E.address[k], t, q, v)
        g0 = E.last[k]
        E.last[k] = g1
        d = E.direction[k]
        if g0 == g1 or not ((g0 < 0.0 <= g1 and d >= 0.0) or (g0 > 0.0 >= g1 and d <= 0.0)):
            continue
        c = E.count[k]
        if c < E.times.shape[1]:
            E.times[k, c] = t - h + h * g0 / (g0 - g1)
            E.count[k] = c + 1
        if E.terminal[k]:
            stop = True
    return stop


@njit(**KERNEL, nogil=True)
def stepping_loop(P, tau, q, v, t0, h, first, stop, save, dissipated, ts, Q, V, D, counts, recs, trace, E, scratch):
    """Steps ``first + 1 .. stop`` from (q, v) at step ``first`` (time t0 + first h), leaving the last state in q
    and v; the states at the step numbers ``save`` (ascending) go to row j of the outputs, and with a ``trace``
    of rows (stop − first, nq + nv + 1) every state after a step into its row (with the dissipated energy).
    ``E``: the :data:`CompiledEvents`, evaluated after every step; a terminal one ends the loop at that step, its
    state the last output. ``scratch``: :func:`step_scratch` (the loop allocates nothing: compiled without
    reference counting, as the step). Returns (rows written, status, last step done, dissipated energy)."""
    nq, nv = q.shape[0], v.shape[0]
    qn, vn, extra = scratch[:nq], scratch[nq:nq + nv], scratch[nq + nv:nq + 2 * nv]
    j = 0
    if save.shape[0] > 0 and save[0] == first:
        _record(j, t0 + first * h, q, v, dissipated, P.solver, 0, ts, Q, V, D, counts, recs)
        j = 1
    tracing = trace.shape[0] > 0
    watching = E.address.shape[0] > 0
    for step in range(first + 1, stop + 1):
        m, impulse_work, damper = one_step(P, tau, t0 + (step - 1) * h, q, v, h, extra, qn, vn, step - first - 1)
        dissipated += damper - impulse_work
        for k in range(nv):
            if not math.isfinite(vn[k]):
                return j, STEPPING_NONFINITE, step - 1, dissipated
        for k in range(nq):
            q[k] = qn[k]
        for k in range(nv):
            v[k] = vn[k]
        if tracing:
            row = step - first - 1
            for k in range(nq):
                trace[row, k] = q[k]
            for k in range(nv):
                trace[row, nq + k] = v[k]
            trace[row, nq + nv] = dissipated
        if j < save.shape[0] and save[j] == step:
            _record(j, t0 + step * h, q, v, dissipated, P.solver, m, ts, Q, V, D, counts, recs)
            j += 1
        if watching and _crossed(E, t0 + step * h, h, q, v):
            if j == 0 or ts[j - 1] != t0 + step * h:
                _record(j, t0 + step * h, q, v, dissipated, P.solver, m, ts, Q, V, D, counts, recs)
                j += 1
            return j, STEPPING_EVENT, step, dissipated
    return j, STEPPING_OK, stop, dissipated


def python_steps(system, q, v, t0, h, first, stop, save, dissipated, ts, Q, V, D, counts, recs, trace, E=None,
                 scratch=None):
    """:func:`stepping_loop` with a Python torque callback ``system.callback(t, q, v)`` (its forces added to the
    constant ones) or ``system.before_step(t, q, v, h)`` called before each step: the compiled loop called for one
    step at a time (its events all evaluated by the run loop from ``trace``; ``E`` unused), the table of the
    prescribed motion from the step's row. The same returns; an exception of the callbacks propagates with
    ``exc.partial = (rows saved, last step done, dissipated)``."""
    P = system.params
    base = P.prescribed.base
    scratch = step_scratch(q, v) if scratch is None else scratch
    nv = v.shape[0]
    j = 0
    if save.shape[0] and save[0] == first:
        ts[0], Q[0], V[0], D[0], counts[0] = t0 + first * h, q, v, dissipated, 0
        j = 1
    tau0 = np.ascontiguousarray(system.tau, dtype=np.float64)
    for step in range(first + 1, stop + 1):
        t = t0 + (step - 1) * h
        tau = tau0
        try:     # (checked as in every formulation: a ModelError naming the callback and the time)
            if system.callback is not None:
                tau = tau + callback_forces(system.callback, t, q, v, nv, getattr(system.model, "name", ""))
            if system.before_step is not None:
                system.before_step(t, q, v, h)
        except Exception as exc:    # what was computed, for the run loop: rows saved, last step, dissipation
            exc.partial = (j, step - 1, dissipated)
            raise
        row = step - first - 1
        Pk = P._replace(prescribed=P.prescribed._replace(base=base[row:])) if base.shape[0] else P
        rows, status, last, dissipated = stepping_loop(
            Pk, tau, q, v, t0, h, step - 1, step, save[j:], dissipated, ts[j:], Q[j:], V[j:], D[j:], counts[j:],
            recs[j:], trace[row:row + 1] if trace.shape[0] else trace, NO_EVENTS, scratch)
        j += rows
        if status != STEPPING_OK:
            return j, status, last, dissipated
    return j, STEPPING_OK, stop, dissipated


def compiled_events(addresses=(), directions=(), terminal=(), values=(), capacity=1):
    """The :data:`CompiledEvents` of C addresses (none: a run without compiled events), their directions, terminal
    flags and values at the start, with room for ``capacity`` event times each."""
    k = len(addresses)
    return CompiledEvents(np.array(addresses, dtype=np.int64), np.array(directions, dtype=np.float64).reshape(k),
                          np.array(terminal, dtype=np.bool_).reshape(k), np.array(values, dtype=np.float64).reshape(k),
                          np.zeros((k, max(int(capacity), 1))), np.zeros(k, dtype=np.int64))


#: the compiled events of a run without them
NO_EVENTS = compiled_events()


def empty_outputs(n, nq, nv, capacity):
    """The output arrays of n saved steps: (t, Q, V, dissipated, counts, records)."""
    return (np.empty(n), np.empty((n, nq)), np.empty((n, nv)), np.empty(n), np.zeros(n, dtype=np.int64),
            np.zeros((n, max(capacity, 1), R_WIDTH)))
