"""The time-stepping model across separations: a release of mode ``"separate"`` (stage separation, a body set free)
in a stepping run (``contact/stepping_run.py``; seed 001, introduction: "the number of degrees of freedom and the
connection topology change during the motion").

A release that separates joint j at t_r ends the stepping structure. The run splits the step that holds t_r in two,
from the last grid time to t_r and from t_r back onto the grid (a release on a grid time, to ``GRID_SNAP`` h, needs
no split; one at or before t0 is made before the first step), and at t_r goes on in the model with j replaced by a
free joint — the switching wing's separation, the same functions (``switching/restructure.py``:
``separated_model``; ``separated_state`` maps the state so that every body keeps its motion and the momenta are
unchanged). The new structure's stepping system is made by the same factory with the same parameters
(``SteppingSystem.remake``): constant generalized forces carried by coordinate name, the model's controllers by
joint name, the latches' sides and the held coordinates' values by name. A torque law ``tau=f`` (Python or
compiled), a torque callback and Python constraints read q and v by position, and are refused before the run
starts (``restructure.refuse_separation``).

What the run keeps coherent across the boundary (:class:`Structures`):

* outputs in the columns of every structure (``switching.run.union_names``: the model's, then each separating
  joint's free joint), NaN where the structure of the moment has no such coordinate, and two rows at the release —
  just before it (the old structure) and just after (the new one) — as a run across switches has;
* contacts: each structure has its own collision set and pairs; ``result.contacts`` names the pairs of all of them
  (``Contacts.concatenate``), and the row just after the release has the contacts of the step that ended at it;
* energy: kinetic and potential of each structure's model; the dissipated energy runs on across;
* ``result.events`` (a ``"release"`` entry per separation, as the switching wing logs it) and
  ``result.structures`` (``{"t": from when, "model": Model}``);
* checkpoints: the state and the rows in the union columns, each row's structure, the separations made (their
  models rebuilt on resume) and the current structure's run state;
* events ``g(t, q, v)``: evaluated in Python on rows of the union columns (as a run across switches does).
"""
from dataclasses import dataclass

import numpy as np

from multibody.contact.stepping_loop import empty_outputs
from multibody.contact.stepping_solver import R_PAIR, R_WIDTH
from multibody.result import Contacts, Result
from multibody.switching.restructure import refuse_separation, separated_forces, separated_model, separated_state
from multibody.switching.run import union_names

__all__ = ["Structures", "separations", "check_separations", "GRID_SNAP"]

#: a release within this fraction of a step of a grid time is made on it (no split step)
GRID_SNAP = 1e-9


def separations(model):
    """The releases of ``model`` that separate a joint, ``[(time, joint)]`` in the order of their times."""
    return sorted((float(r.at), r.joint) for r in model.unilateral.releases if r.mode == "separate")


def check_separations(model, law):
    """Refuse (``restructure.refuse_separation``) what cannot go on past the model's separations: Python constraints,
    a torque callback, a torque law ``law`` (a compiled one or a Python callable; None: none)."""
    for _, joint in separations(model):
        refuse_separation(model, joint, law)


@dataclass
class Part:
    """One structure of the run: from time ``t_from``, its stepping ``system``, its columns in the union
    (``q_cols``, ``v_cols``), its outputs (``stepping_loop.empty_outputs``) and how many rows they hold."""

    t_from: float
    system: object
    q_cols: np.ndarray
    v_cols: np.ndarray
    outputs: tuple
    rows: int = 0

    def record(self, t, q, v, dissipated, count, records):
        """Append a row: state, dissipated energy and the contact records."""
        ts, Q, V, D, counts, recs = self.outputs
        k = self.rows
        ts[k], Q[k], V[k], D[k], counts[k] = t, q, v, dissipated, count
        recs[k, :count] = records[:count]
        self.rows += 1

    def trimmed(self):
        return tuple(a[:self.rows] for a in self.outputs)


class Structures:
    """The structures of a stepping run of ``system`` on the grid ``t0 + k h`` and their outputs (module docstring);
    each part holds up to ``capacity`` rows. ``union``: whether the model separates (the run's columns are then the union's,
    ``q_names``, ``v_names``)."""

    def __init__(self, system, t0, h, capacity):
        self.model, self.t0, self.h = system.model, float(t0), float(h)
        self.capacity = int(capacity) + 2
        self.union = bool(separations(self.model))
        self.q_names, self.v_names = union_names(self.model) if self.union else (None, None)
        self.parts, self.log, self.separated = [], [], []
        self.open(system, float(t0))

    @property
    def current(self):
        return self.parts[-1]

    def open(self, system, t):
        """Start the part of ``system`` at t."""
        m = system.model
        if self.union:
            qc = np.array([self.q_names.index(n) for n in m.coordinate_names()], dtype=np.int64)
            vc = np.array([self.v_names.index(n) for n in m.velocity_names()], dtype=np.int64)
        else:
            qc, vc = np.arange(m.nq), np.arange(m.nv)
        self.parts.append(Part(t, system, qc, vc, empty_outputs(self.capacity, m.nq, m.nv, system.capacity)))

    # ---- rows of the union ----------------------------------------------------------------------------------
    def row(self, q, v, part=None):
        """(q, v) of ``part`` (the current one) as rows of the union's columns, NaN elsewhere."""
        part = self.current if part is None else part
        if not self.union:
            return q, v
        qu, vu = np.full(len(self.q_names), np.nan), np.full(len(self.v_names), np.nan)
        qu[part.q_cols], vu[part.v_cols] = q, v
        return qu, vu

    # ---- the releases -----------------------------------------------------------------------------------------
    def next_release(self):
        """``(k, s, t_r, joint)`` of the current model's first separation: at t_r, in the step after step k of the
        grid, s after its start (s = 0: at step k's time, a release within ``GRID_SNAP`` h of it or at or before t0);
        None without one."""
        pending = separations(self.current.system.model)
        if not pending:
            return None
        t0, h = self.t0, self.h
        at, joint = pending[0]
        x = max(at - t0, 0.0) / h
        k = int(round(x))
        if abs(x - k) <= GRID_SNAP:
            return k, 0.0, t0 + k * h, joint
        k = int(np.floor(x))
        return k, at - (t0 + k * h), at, joint

    def separate(self, t, q, v):
        """Make the separations due at t (those of the current model whose :meth:`next_release` is at t): the new
        structures' systems (module docstring), each logged. Returns the state (q, v) in the last one."""
        while True:
            release = self.next_release()
            if release is None or release[2] != t:
                return q, v
            joint = release[3]
            new, q, v = successor(self.current.system, t, joint, q, v)
            self.separated.append((float(t), joint))
            self.open(new, float(t))
            self.log.append({"t": float(t), "element": joint, "coordinate": None, "kind": "release",
                             "impulse": 0.0, "velocity_before": None, "velocity_after": None,
                             "structure": len(self.parts) - 1, "dof": int(new.model.nv)})

    def carry_contacts(self, before):
        """Give the current part's last row the contacts of ``before``'s last row (the step that ended at the
        release), its pairs renamed into the current collision set."""
        part = self.current
        ts, Q, V, D, counts, recs = before.outputs
        k, m = before.rows - 1, int(counts[before.rows - 1])
        names = before.system.pair_names
        index = {p: i for i, p in enumerate(part.system.pair_names)}
        rows = [r for r in recs[k, :m] if names[int(r[R_PAIR])] in index]
        j = part.rows - 1
        for c, r in enumerate(rows):
            part.outputs[5][j, c] = r
            part.outputs[5][j, c, R_PAIR] = index[names[int(r[R_PAIR])]]
        part.outputs[4][j] = len(rows)

    # ---- the Result -----------------------------------------------------------------------------------------------
    def result(self, info):
        """The Result of the run: a single structure's own (``SteppingSystem.make_result``) when the model does not
        separate, else the parts' joined in the union's columns (module docstring)."""
        results = []
        for p in self.parts:        # (a loop, not a comprehension: the solver's warnings name the caller's line)
            results.append(p.system.make_result(*p.trimmed(), info))
        if not self.union:
            return results[0]
        n = sum(len(r.t) for r in results)
        Q, V = np.full((n, len(self.q_names)), np.nan), np.full((n, len(self.v_names)), np.nan)
        energy, residuals, start = {}, {}, 0
        keys = set.intersection(*(set(r.energy) for r in results)) - {"total"}
        for p, r in zip(self.parts, results):
            rows = slice(start, start + len(r.t))
            Q[rows, p.q_cols], V[rows, p.v_cols] = r.q, r.v
            for name, values in r.residuals.items():
                residuals.setdefault(name, np.full(n, np.nan))[rows] = values
            start += len(r.t)
        for key in keys:
            energy[key] = np.concatenate([r.energy[key] for r in results])
        res = Result(np.concatenate([r.t for r in results]), Q, V, energy=energy, info=info, q_names=self.q_names,
                     v_names=self.v_names, model=self.model, contacts=Contacts.concatenate([r.contacts for r in results]),
                     residuals=residuals or None, events=self.log)
        res.structures = [{"t": p.t_from, "model": p.system.model} for p in self.parts]
        res.info["structures"] = [{"t": p.t_from, "nq": p.system.model.nq, "nv": p.system.model.nv}
                                  for p in self.parts]
        return res

    # ---- checkpoints ----------------------------------------------------------------------------------------------
    def checkpoint(self, q, v, dissipated):
        """What a checkpoint of a separating run holds: ``(x, out_x, extra, switching)`` — the state and the rows in
        the union's columns (with the dissipated energy), the rows' contacts (padded to the widest collision set)
        and structures, and the separations made with the log."""
        qu, vu = self.row(q, v)
        x = np.concatenate([qu, vu, [dissipated]])
        rows = sum(p.rows for p in self.parts)
        width = len(self.q_names) + len(self.v_names) + 1
        cap = max(p.outputs[5].shape[1] for p in self.parts)
        out_x, counts, recs = np.full((rows, width), np.nan), np.zeros(rows, dtype=np.int64), np.zeros((rows, cap, R_WIDTH))
        structure, start = np.zeros(rows, dtype=np.int64), 0
        for i, p in enumerate(self.parts):
            ts, Q, V, D, c, r = p.trimmed()
            sel = slice(start, start + p.rows)
            out_x[sel, p.q_cols], out_x[sel, len(self.q_names) + p.v_cols], out_x[sel, -1] = Q, V, D
            counts[sel], recs[sel, :r.shape[1]], structure[sel] = c, r, i
            start += p.rows
        times = np.concatenate([p.trimmed()[0] for p in self.parts])
        return x, times, out_x, {"counts": counts, "records": recs, "structure": structure}, {
            "separated": [[t, j] for t, j in self.separated], "events": self.log}

    def restore(self, ck, nsteps):
        """The structures, rows and state of the checkpoint ``ck`` of a separating run of ``nsteps`` steps: the
        separations made again (their models and systems rebuilt from the run's first state), the rows back in
        each structure's columns. Returns ``(q, v, dissipated)`` of the current structure; a ``ValueError`` (or
        ``KeyError``) for data that do not fit."""
        if ck.step is None or not 0 <= ck.step <= nsteps or abs(ck.t - (self.t0 + ck.step * self.h)) > 1e-9 * self.h:
            raise ValueError(f"t = {ck.t!r}, step = {ck.step} is not a time of the run's {nsteps} steps")
        first = self.current.system
        q, v = first.q0, first.v0
        for t, joint in ck.switching["separated"]:
            system, q, v = successor(self.current.system, float(t), str(joint), q, v)
            self.separated.append((float(t), str(joint)))
            self.open(system, float(t))
        self.log = [dict(e) for e in ck.switching["events"]]
        extra, nq = ck.extra, len(self.q_names)
        structure = np.asarray(extra["structure"], dtype=np.int64)
        if structure.shape != ck.out_t.shape or (structure.size and structure.max() >= len(self.parts)):
            raise ValueError("the rows' structures do not fit the separations")
        for i, p in enumerate(self.parts):
            sel = np.flatnonzero(structure == i)
            cap = p.outputs[5].shape[1]
            for k in sel:
                row = ck.out_x[k]
                if int(extra["counts"][k]) > cap:
                    raise ValueError(f"row {k} has more contacts than its structure can have")
                p.record(ck.out_t[k], row[p.q_cols], row[nq + p.v_cols], row[-1], int(extra["counts"][k]),
                         np.asarray(extra["records"][k]))
        x = np.asarray(ck.x, dtype=np.float64)
        if x.shape != (nq + len(self.v_names) + 1,):
            raise ValueError(f"x has {x.size} entries, the run's state has {nq + len(self.v_names) + 1}")
        part = self.current
        q, v = x[part.q_cols], x[nq + part.v_cols]
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise ValueError("the state is not finite in its structure's columns")
        return q.copy(), v.copy(), float(x[-1])


def successor(system, t, joint, q, v):
    """The stepping system after ``joint`` of ``system``'s model separates at t from the state (q, v) (module
    docstring): ``(system, q, v)`` of the new structure."""
    old = system.model
    new = separated_model(old, joint)
    q2, v2 = separated_state(old, new, joint, q, v)
    nxt = system.remake(new, q2, v2, separated_forces(old, new, system.tau))
    U, N = system.params.units, nxt.params.units
    latches = {la.name: j for j, la in enumerate(old.unilateral.latches)}
    for j, la in enumerate(new.unilateral.latches):        # the latches' sides by name
        if la.name in latches:
            N.latch_side[j] = U.latch_side[latches[la.name]]
    old_q, new_q = old.coordinate_names(), new.coordinate_names()
    held = {old_q[iq]: U.hold_value[k] for k, iq in enumerate(U.hold_q)}
    for k, iq in enumerate(N.hold_q):                      # the held coordinates' values by name
        if new_q[iq] in held:
            N.hold_value[k] = held[new_q[iq]]
    return nxt, nxt.q0.copy(), nxt.v0.copy()
