"""The switch at an event of a run with joint limits, latches and releases: impacts, contacts, locks, separations
and releases of one structure (a Model), and the state mapped into the next structure after a separation.

A :class:`Structure` holds a Model with what its compiled mode needs (the parameter tuple of the tree, the switch
arrays of ``switching/modes.py``) and the discrete state of its mode: which coordinates are latched, which
are held until their release, which limits rest on a stop; it keeps the protocol of the run across switches
(``switching/events.py``). :meth:`Structure.switch` makes the switch at an event:

1. releases due: ``"unlock"`` frees the held coordinates of the joint; ``"separate"`` ends the structure (the run
   continues in :func:`separated_structure`'s new one);
2. the impulse (``switching/impulse.py``; seed 002, ``Δp = Jᵀ Λ``): the rows are the locked coordinates (latched or
   held: equalities), the limits resting on their stops (u⁻ = 0) and those that hit (u⁻ < 0, Newton's restitution
   e; e = 0 when the rebound ``e |u⁻|`` would be below ``rest_velocity``, or rise less than the coordinate's
   resolution (:func:`unresolved_rebound`), which ends the finite cascade of ever smaller bounces — no penalty); the latches reached lock with a plastic impact; one linear
   complementarity problem on the Delassus matrix J M⁻¹ Jᵀ gives every impulse at once, and the whole tree's
   velocity jumps by M⁻¹ Jᵀ Λ;
3. the contacts: the stops whose gap velocity is now zero and the resting ones go through the same problem at the
   acceleration level — those with a pushing reaction (λ > 0) are held (a one-sided locked coordinate, watched by
   its reaction guard), the others separate (ü > 0). Contact and separation are exactly complementary.

Every switch is logged as a dict: ``t``, ``element`` (the joint), ``coordinate``, ``kind`` (``"impact"``: a
rebound off a stop; ``"contact"``: an impact after which the joint rests on its stop; ``"separate"``: it leaves
the stop; ``"lock"``: a latch locks; ``"release"``: a release opens the joint), ``impulse`` (the generalized
impulse on the coordinate, N·s or N·m·s), ``velocity_before``, ``velocity_after``, ``structure`` (the index of the
structure from then on) and ``dof`` (its free coordinates from then on).
"""
import math

import numpy as np

from multibody.model.data import Data
from multibody.errors import ModelError
from multibody.formulations.tree_control import controls_tuple, is_compiled_torque, law_failure, tree_rhs_control
from multibody.formulations.tree_rhs import tree_rhs, tree_rhs_plain
from multibody.model.packing import controlled_params, tree_params
from multibody.switching.modes import (FREE, LOCKED, ON_LOWER, ON_UPPER, S_CONTROL, S_FORCE, S_GUARD,
                                              S_KNOWN, S_LATCH_SIDE, S_LIM_STATE, S_MASK, S_NLOCKED, S_ORDER,
                                              S_RELEASE_T, S_SINCE, free_rhs_extra, guard_values, mode_rhs,
                                              mode_rhs_extra, mode_step, switch_arrays, switching_run)
from multibody.switching.python_steps import STORMER6, PythonSteps
from multibody.integrate.manifold import has_quaternions, normalize_quaternions
from multibody.switching.convergence import SolveLog
from multibody.switching.impulse import delassus, mixed_lcp

__all__ = ["Structure", "separated_structure", "unresolved_rebound", "energy_consistent_impulse", "lcp_residual",
           "REST_VELOCITY", "SAME_INSTANT", "ROUNDOFF"]

#: the gap velocity (rad/s or m/s) below which a rebound is not followed: the impact is plastic and the joint rests
#: on its stop (the cascade of bounces of a restitution e < 1 has a finite duration; without a floor it would
#: need infinitely many events)
REST_VELOCITY = 1e-8
#: the rebounds up to this multiple of the rest velocity are checked for a height below the coordinate's resolution
#: (:func:`unresolved_rebound`)
REST_VELOCITY_SCALE = 1e6
#: the rebound height, in units of the last place of the stop's value, below which a bounce cannot be resolved
REBOUND_ULPS = 64.0
#: the relative distance (to 1 + |value|) within which a guard other than the one located counts as reached at the
#: same instant (simultaneous impacts); the one located is at its root to round-off
SAME_INSTANT = 1e-12
#: the relative size (to 1 + |largest gap acceleration|) below which a gap acceleration counts as zero
ROUNDOFF = 1e-10
#: the relative round-off of an impact's energy change uᵀΛ + ½ ΛᵀDΛ (to the sum of the terms' sizes): a rise below
#: it is no rise (:func:`energy_consistent_impulse`)
ENERGY_ROUNDOFF = 64 * np.finfo(float).eps
#: the halvings of the restitutions' factor when Newton's law on several rows would create energy (2⁻⁴⁰ ≈ 1e-12)
RESTITUTION_BISECTIONS = 40


class Structure(PythonSteps):
    """One structure of a run: ``model`` with the parameter tuple ``params`` of the tree, the switch tuple ``S``,
    the discrete state of its mode, and its columns ``q_cols``, ``v_cols`` in the run's union of coordinates.
    ``callback``: the Python torque callback ``tau(t, q, v)`` (fixed-step runs then step in Python:
    :attr:`compiled_steps`), a compiled torque law (a numba function ``f(t, q, v, out)``,
    ``formulations/tree_control.py``) or None; the model's controllers and the compiled law run in the mode's
    compiled right-hand side (``S[S_CONTROL]``)."""

    def __init__(self, model, tau_const, callback, q_names, v_names, index, rest_velocity=REST_VELOCITY):
        self.law = callback if is_compiled_torque(callback) else None
        self.model, self.index, self.callback = model, index, None if self.law is not None else callback
        self.u = u = model.unilateral
        self.data = Data(model)
        self.params = tree_params(model, tau_const, self.data)
        self.tau_const = self.params.tau
        self.controlled = bool(model.controllers) or self.law is not None
        # the controllers' tuple even without controllers (then it adds nothing): one specialization of the
        # compiled modes for runs with and without them
        self.S = switch_arrays(model.nv, u.lim_q, u.lim_v, u.lower, u.upper, u.latch_q, u.latch_value,
                               len(u.releases), controls_tuple(model, self.params, self.law))
        self.nq, self.nv = model.nq, model.nv
        self.q_names, self.v_names = q_names, v_names
        #: the separations that made this structure from the model: [(t, joint)]
        self.separated = []
        self.q_cols = np.array([q_names.index(n) for n in model.coordinate_names()], dtype=np.int64)
        self.v_cols = np.array([v_names.index(n) for n in model.velocity_names()], dtype=np.int64)
        self.latched = set()     # indices of the latches that have locked
        self.held = set()        # velocity coordinates held until their release ("unlock")
        self.rest_velocity = float(rest_velocity)
        self._out = np.empty(self.nq + self.nv)
        self._M = np.empty((self.nv, self.nv))
        self.nlim, self.nlat = len(u.limits), len(u.latches)
        self.quaternions = has_quaternions(self.params.mi)
        self.projects = self.quaternions     # project(t, x) after each step of the adaptive methods
        self.resting = False     # a joint rests on a stop (its reaction is a guard)
        # no coordinate locked: the tree's own right-hand side (the controlled one with controllers), and the guards
        # of the switch arrays alone (shorter argument tuples for numba to type at each call from Python)
        self._tree_rhs = tree_rhs if self.params.applied else tree_rhs_plain
        self._tree_params = self.params
        if self.controlled:
            self._tree_rhs, self._tree_params = tree_rhs_control, controlled_params(self.params, self.S[S_CONTROL])
        self._S_guards = self.S[:S_CONTROL]
        #: the convergence of the run's solves (``switching/convergence.py``), shared with the structures after it
        self.solves = SolveLog()
        self.t_now = None     # the time of the switch being made

    def diagnose(self):
        """``(reason, element)`` when the run's compiled torque law failed it (raised, or returned torques that are
        not finite: ``tree_control.law_failure``), else None."""
        if self.law is None:
            return None
        return law_failure(self.S[S_CONTROL], self.law, self.model.velocity_names())

    # ---- the mode's right-hand side and guards -----------------------------------------------------------
    def extra(self, t, x):
        """The generalized forces besides the model's: the constant ones and the callback's."""
        if self.callback is None:
            return self.tau_const
        from multibody.formulations.base import callback_forces

        nq = self.nq
        return np.ascontiguousarray(callback_forces(self.callback, t, x[:nq], x[nq:], self.nv, self.model.name)
                                    + self.tau_const)

    def rhs(self, t, x):
        """ẋ of the mode at (t, x) (a new array); leaves the reactions of the locked coordinates in ``S``."""
        out = np.empty(self.nq + self.nv)
        x = np.ascontiguousarray(x, dtype=np.float64)
        if self.callback is None:
            if self.resting or self.S[S_NLOCKED][0]:
                mode_rhs(float(t), x, self.params, self.S, out)
            else:   # no coordinate locked: the tree's own right-hand side (one argument tuple less to dispatch)
                self._tree_rhs(float(t), x, self._tree_params, out)
        else:
            mode_rhs_extra(float(t), x, self.params, self.S, self.extra(t, x), out)
        return out

    def project(self, t, x):
        """x with its quaternions normalized (after each step of the one-step adaptive methods)."""
        x = np.array(x, dtype=np.float64)
        normalize_quaternions(x, self.params)
        return x

    def snap(self, x):
        """Put, in place, the free limited coordinates that round-off left a hair beyond a stop back on it."""
        u = self.u
        for k in range(self.nlim):
            i = u.lim_q[k]
            x[i] = min(max(x[i], u.lower[k]), u.upper[k])

    @property
    def compiled_steps(self):
        """Whether the fixed-step runs step in the compiled loop (``modes.switching_run``); else in the Python
        loop of ``switching/python_steps.py`` (a Python torque callback)."""
        return self.callback is None

    def run_steps(self, x, t0, h, first, nsteps, save, method, ts, xs, xt, K):
        """The mode's fixed-step loop from x at step ``first``: compiled (``modes.switching_run``), or the same
        operations in Python (:attr:`compiled_steps`; STORMER6, whose implicit stages the compiled modes do not
        make)."""
        if not self.compiled_steps or method == STORMER6:
            return PythonSteps.run_steps(self, x, t0, h, first, nsteps, save, method, ts, xs, xt, K)
        return switching_run(x, t0, h, first, nsteps, save, self.params, self.S, method, self.nq, self.quaternions,
                             ts, xs, xt, K, False)

    def step(self, t, x, h, method, xt, K):
        """One step of size h of the mode from (t, x) into ``xt`` (``K[0]`` = ẋ there): the dense output of a
        fixed-step run."""
        if not self.compiled_steps or method == STORMER6:
            PythonSteps.step(self, t, x, h, method, xt, K)
        else:
            mode_step(t, x, h, self.params, self.S, method, self.nq, xt, K)

    def guards(self, t, x):
        """The least watched guard at (t, x); the guards in ``S`` (the right-hand side is evaluated there first when
        a joint rests on a stop: its guard is its reaction)."""
        x = np.ascontiguousarray(x, dtype=np.float64)
        if self.resting:
            self.rhs(t, x)
        return guard_values(float(t), x, self._S_guards)

    def arm(self, t, x):
        """Watch the guards that are ≥ 0 at (t, x), the start of a mode (those below zero by round-off at a switch
        are not crossings). Returns the guard values."""
        S = self.S
        S[S_MASK][:] = True
        S[S_ORDER][:] = 0
        self.guards(t, x)
        g = S[S_GUARD].copy()
        S[S_MASK][:] = g >= 0.0
        u, v = self.u, x[self.nq:]
        for k in range(self.nlim):   # gaps at exactly zero: divided by the time since (switching.guard_values)
            for i, sigma in ((2 * k, 1.0), (2 * k + 1, -1.0)):
                if S[S_LIM_STATE][k] == FREE and g[i] == 0.0 and sigma * v[u.lim_v[k]] >= 0.0:
                    S[S_ORDER][i] = 1 if sigma * v[u.lim_v[k]] > 0.0 else 2
                    S[S_SINCE][i] = t
        return g

    def free_accelerations(self, t, x):
        """q̈ of the tree with every coordinate free (ABA) at (t, x), the controllers' torques included."""
        out = self._out
        free_rhs_extra(float(t), np.ascontiguousarray(x, dtype=np.float64), self.params, self.S,
                       np.ascontiguousarray(self.extra(t, x)), out)
        return out[self.nq:].copy()

    def sync(self):
        """Write the mode (latched, held, resting coordinates; armed latches) into the switch arrays."""
        S, u = self.S, self.u
        base = np.zeros(self.nv)
        for j in self.latched:
            base[u.latch_v[j]] = 1.0
        for k in self.held:
            base[k] = 1.0
        known = base.copy()
        state = S[S_LIM_STATE]
        for k in range(self.nlim):
            if state[k] in (ON_LOWER, ON_UPPER):
                known[u.lim_v[k]] = 1.0
            else:
                state[k] = LOCKED if base[u.lim_v[k]] else FREE
        S[S_KNOWN][:] = known
        S[S_NLOCKED][0] = int(np.count_nonzero(known))
        self.resting = bool(np.any((state == ON_LOWER) | (state == ON_UPPER)))
        for j in range(self.nlat):
            if j in self.latched or base[u.latch_v[j]]:
                S[S_LATCH_SIDE][j] = 0.0

    # ---- the mode as data (checkpoints) ------------------------------------------------------------------------
    def mode_data(self):
        """The discrete state of the mode as JSON data: latched and held coordinates, the states of the stops, the
        armed latches and releases, and the guards watched (``restore`` makes the same mode again)."""
        S = self.S

        def floats(a):
            return [None if not np.isfinite(v) else float(v) for v in a]

        return {"latched": sorted(int(j) for j in self.latched), "held": sorted(int(k) for k in self.held),
                "stops": [int(v) for v in S[S_LIM_STATE]], "latch_side": floats(S[S_LATCH_SIDE]),
                "release_t": floats(S[S_RELEASE_T]), "mask": [bool(v) for v in S[S_MASK]],
                "order": [int(v) for v in S[S_ORDER]], "since": floats(S[S_SINCE])}

    def restore(self, data):
        """Make the mode of :meth:`mode_data`'s ``data`` (of the same structure) again."""
        S = self.S

        def floats(a, none):
            return np.array([none if v is None else float(v) for v in a])

        self.latched, self.held = set(data["latched"]), set(data["held"])
        S[S_LIM_STATE][:] = data["stops"]
        S[S_LATCH_SIDE][:] = floats(data["latch_side"], 0.0)
        S[S_RELEASE_T][:] = floats(data["release_t"], np.inf)
        self.sync()
        S[S_MASK][:] = data["mask"]
        S[S_ORDER][:] = data["order"]
        S[S_SINCE][:] = floats(data["since"], 0.0)

    def successor(self, t, joint):
        """The structure after ``joint`` separates at t: the model with a free joint in its place
        (``switching/restructure.py``), the next index, the same torque callback or compiled law, and the constant
        generalized forces of the coordinates it keeps (by name: those of the separated joint end with it)."""
        from multibody.switching.restructure import separated_forces, separated_model

        new = separated_model(self.model, joint)
        tau = separated_forces(self.model, new, self.tau_const)
        ns = type(self)(new, tau, self.callback if self.law is None else self.law, self.q_names, self.v_names,
                        self.index + 1, self.rest_velocity)
        ns.separated = self.separated + [(float(t), joint)]
        ns.solves = self.solves
        return ns

    def dof(self):
        return int(self.nv - np.count_nonzero(self.S[S_KNOWN]))

    # ---- the start ---------------------------------------------------------------------------------------
    def start(self, t, x, fresh):
        """Arm the mode at the start of the run (``fresh``) or of a new structure: hold the coordinates of the
        "unlock" releases to come, arm the latches and releases; refuse a state beyond a limit or moving on a held
        coordinate (``ModelError`` naming the joint). Returns the guard indices reached at (t, x)."""
        u, S = self.u, self.S
        q, v = x[:self.nq], x[self.nq:]
        if fresh:
            u.check_start(self.model, q, v, t, SAME_INSTANT)
        for r, rel in enumerate(u.releases):
            S[S_RELEASE_T][r] = rel.at
            if rel.mode == "unlock" and rel.at > t:
                info = self.model.joint(rel.joint)
                self.held.update(range(info.v_slice.start, info.v_slice.stop))
        for j, la in enumerate(u.latches):
            S[S_LATCH_SIDE][j] = math.copysign(1.0, q[la.q_index] - la.value) if q[la.q_index] != la.value else 1.0
        self.sync()
        g = self.arm(t, x)
        return g <= self._tolerances(x)

    def _tolerances(self, x):
        """How close to zero each guard counts as reached at the instant of an event (``SAME_INSTANT`` relative to
        the size of what it measures: the coordinate, the largest reaction, the latch value, the release time)."""
        u, S = self.u, self.S
        tol = np.empty(S[S_GUARD].shape[0])
        nlim2 = 2 * self.nlim
        on_stop = np.repeat((S[S_LIM_STATE] == ON_LOWER) | (S[S_LIM_STATE] == ON_UPPER), 2)
        gap = np.repeat(1.0 + np.abs(x[u.lim_q]), 2) if self.nlim else np.zeros(0)
        force = 1.0 + float(np.max(np.abs(S[S_FORCE]), initial=0.0))
        tol[:nlim2] = np.where(on_stop, force, gap)
        tol[nlim2:nlim2 + self.nlat] = 1.0 + np.abs(u.latch_value)
        tol[nlim2 + self.nlat:] = [1.0 + abs(r.at) for r in u.releases]
        return SAME_INSTANT * tol

    def reached(self, t, x):
        """The guards reached at the event (t, x): those within the tolerance and the least watched one relative
        to its tolerance (guards measure gaps, reactions, times: each compared with its own scale)."""
        self.guards(t, x)
        g = self.S[S_GUARD]
        mask = self.S[S_MASK]
        tol = self._tolerances(x)
        out = mask & (g <= tol)
        if g.shape[0]:
            out[int(np.argmin(np.where(mask, g / tol, np.inf)))] = True
        return out

    def due(self, t, x):
        """Whether a watched guard is reached at (t, x) to its tolerance (a user event's root on a switch)."""
        self.guards(t, x)
        return bool(np.any(self.S[S_MASK] & (self.S[S_GUARD] <= self._tolerances(x))))

    # ---- the switch ---------------------------------------------------------------------------------------
    def switch(self, t, x, reached, log):
        """Make the switch at (t, x) for the guards ``reached`` (module docstring), appending the switches to
        ``log``. Returns ``(x⁺, next)``: the state after it and, when a release separates a joint, the structure the
        run goes on in (:func:`separated_structure`; x⁺ is then its state), else None."""
        u, S = self.u, self.S
        nq, nlim2 = self.nq, 2 * self.nlim
        self.t_now = float(t)
        x = np.array(x, dtype=np.float64)
        q, v = x[:nq], x[nq:]
        for r, rel in enumerate(u.releases):
            if reached[nlim2 + self.nlat + r] and S[S_RELEASE_T][r] != np.inf:
                S[S_RELEASE_T][r] = np.inf
                if rel.mode == "separate":
                    return separated_structure(self, t, x, rel.joint, log)
                info = self.model.joint(rel.joint)
                for k in range(info.v_slice.start, info.v_slice.stop):
                    self.held.discard(k)
                for j, la in enumerate(u.latches):
                    if la.joint == rel.joint and j not in self.latched and q[la.q_index] != la.value:
                        S[S_LATCH_SIDE][j] = math.copysign(1.0, q[la.q_index] - la.value)
                self.sync()
                log.append(self._entry(t, rel.joint, None, "release", 0.0, None, None))
        # rows of the impulse: equalities (latched, held, latching now), resting stops, stops hit now
        state = S[S_LIM_STATE]
        old_state = state.copy()
        new_latch = [j for j in range(self.nlat) if reached[nlim2 + j] and j not in self.latched
                     and S[S_LATCH_SIDE][j] != 0.0]
        latch_coords = {int(u.latch_v[j]) for j in new_latch}
        # the stops reached, and the free ones closed already (exactly on the stop, leaving it or not: an impulse
        # elsewhere may push them back onto it, and Newton's law holds on every closed stop at once)
        hits, arrived = [], set()  # (limit, sign): +1 on the lower stop, -1 on the upper one
        for k in range(self.nlim):
            if state[k] == FREE and int(u.lim_v[k]) not in latch_coords:
                qk = q[u.lim_q[k]]
                if reached[2 * k] or reached[2 * k + 1]:
                    arrived.add(k)
                if reached[2 * k] or qk == u.lower[k]:
                    hits.append((k, 1.0))
                elif reached[2 * k + 1] or qk == u.upper[k]:
                    hits.append((k, -1.0))
        resting = [k for k in range(self.nlim) if state[k] in (ON_LOWER, ON_UPPER)]
        resting_v = {int(u.lim_v[k]) for k in resting}
        equal = [int(c) for c in np.flatnonzero(S[S_KNOWN]) if int(c) not in resting_v] + sorted(latch_coords)
        rows = [(c, 1.0, 0.0, True) for c in equal]
        rows += [(int(u.lim_v[k]), float(state[k]), 0.0, False) for k in resting]
        first_hit = len(rows)
        accel = None
        for k, sigma in hits:
            e = float(u.restitution[k])
            rebound = e * abs(v[u.lim_v[k]])
            if rebound <= self.rest_velocity:
                e = 0.0
            elif rebound <= REST_VELOCITY_SCALE * self.rest_velocity:
                accel = self.rhs(t, x)[nq:] if accel is None else accel
                if unresolved_rebound(rebound, sigma * accel[u.lim_v[k]], u.lower[k] if sigma > 0 else u.upper[k]):
                    e = 0.0
            rows.append((int(u.lim_v[k]), sigma, e, False))
        v_before = v.copy()
        lam, scale = np.zeros(len(rows)), 1.0
        if any(sigma * v[u.lim_v[k]] < 0.0 for k, sigma in hits) or any(v[c] != 0.0 for c in latch_coords):
            lam, scale = self._impulse(q, v, rows)
        # exactly on the stops and latches, exactly at rest where locked
        for j in new_latch:
            q[u.latch_q[j]] = u.latch_value[j]
            self.latched.add(j)
        for c in equal:
            v[c] = 0.0
        candidates = []
        for k in resting:
            c = int(u.lim_v[k])
            if reached[2 * k]:
                # its reaction has come down to zero (the guard located): at that instant reaction and gap
                # acceleration are both zero, and the reaction's trend, not the round-off of either, says it leaves
                state[k] = FREE
                v[c] = 0.0
            elif state[k] * v[c] <= self.rest_velocity:
                v[c] = 0.0
                candidates.append(k)
            else:
                state[k] = FREE
        for k, sigma in hits:
            c = int(u.lim_v[k])
            q[u.lim_q[k]] = u.lower[k] if sigma > 0 else u.upper[k]
            if sigma * v[c] <= self.rest_velocity:
                v[c] = 0.0
                state[k] = ON_LOWER if sigma > 0 else ON_UPPER
                candidates.append(k)
        self.sync()
        held = self._contacts(t, x, candidates, arrived=arrived)
        for k in candidates:
            if k not in held:
                state[k] = FREE
        self.sync()
        # the log: latches locked, stops hit, stops left
        impulse = {rows[i][0]: rows[i][1] * lam[i] for i in range(len(rows))}
        for j in new_latch:
            c = int(u.latch_v[j])
            log.append(self._entry(t, u.latches[j].joint, u.latches[j].coordinate, "lock", impulse.get(c, 0.0),
                                   v_before[c], v[c]))
        for i, (k, sigma) in enumerate(hits):
            c = int(u.lim_v[k])
            if k not in held and lam[first_hit + i] == 0.0 and sigma * v_before[c] >= 0.0:
                continue    # on the stop without approaching it, no impulse, not resting on it: nothing happened
            entry = self._entry(t, u.limits[k].joint, u.limits[k].coordinate, "contact" if k in held else "impact",
                                lam[first_hit + i] * sigma, v_before[c], v[c])
            entry["stop"] = "lower" if sigma > 0 else "upper"
            if scale < 1.0:   # Newton's law on these coupled rows would have given energy: its restitutions scaled
                entry["restitution_scale"] = scale
            log.append(entry)
        for k in resting:
            if state[k] == FREE:
                c = int(u.lim_v[k])
                entry = self._entry(t, u.limits[k].joint, u.limits[k].coordinate, "separate", impulse.get(c, 0.0),
                                    v_before[c], v[c])
                entry["stop"] = "lower" if old_state[k] == ON_LOWER else "upper"
                log.append(entry)
        return x, None

    def _delassus(self, q, rows):
        """Y = M⁻¹ Jᵀ and D = J M⁻¹ Jᵀ of the rows ``[(v index, sign, ...)]`` at q."""
        idx = np.array([r[0] for r in rows], dtype=np.int64)
        sign = np.array([r[1] for r in rows], dtype=np.float64)
        m = len(rows)
        Y, D = np.empty((self.nv, m)), np.empty((m, m))
        code = delassus(self.data.mi, self.data.mf, np.ascontiguousarray(q), self.data.work, idx, sign, self._M,
                        Y, D)
        if code != 0:
            raise ModelError(f"model '{self.model.name}': the mass matrix is not positive definite at the switch "
                             f"(code {code}); the impulse cannot be computed", element=self.model.name)
        return idx, sign, Y, D

    def _lcp(self, D, b, bilateral, kind="impact"):
        """The mixed LCP ``w = D Λ + b`` (``switching/impulse.py``), its pivots and residual recorded in the run's
        :class:`~multibody.switching.convergence.SolveLog` as ``kind``."""
        lam, w = np.empty(len(b)), np.empty(len(b))
        b = np.ascontiguousarray(b, dtype=np.float64)
        bilateral = np.asarray(bilateral, dtype=np.bool_)
        it = mixed_lcp(D, b, bilateral, lam, w)
        self.solves.record(kind, max(it, 0), lcp_residual(D, b, bilateral, lam) if it >= 0 else np.nan, it >= 0,
                           self.t_now)
        if it < 0:
            raise ModelError(f"model '{self.model.name}': the impact problem has no solution (the rows of the locked "
                             "coordinates are dependent)", element=self.model.name)
        return lam, w

    def _impulse(self, q, v, rows):
        """Apply the impulses of the rows ``[(v index, sign, e, equality)]`` (switching/impulse.py) to v in place;
        returns ``(Λ, s)``, s the factor of the restitutions (:func:`energy_consistent_impulse`)."""
        Y, D, u_minus, nb = self._impulse_problem(q, v, rows)
        e = np.concatenate([np.zeros(nb), [r[2] for r in rows]])
        lam, scale = energy_consistent_impulse(lambda b: self._lcp(D, b, [True] * nb + [r[3] for r in rows])[0],
                                               D, u_minus, e)
        v += Y @ lam
        return lam[nb:], scale

    def _impulse_problem(self, q, v, rows):
        """``(Y, D, u⁻, nb)`` of the impulse on the rows ``[(v index, sign, ...)]`` at (q, v): Y = M⁻¹ Jᵀ,
        D = J M⁻¹ Jᵀ, u⁻ = J v, with ``nb`` equality rows of the structure's own before them (none on a tree)."""
        idx, sign, Y, D = self._delassus(q, rows)
        return Y, D, sign * v[idx], 0

    def _contact_problem(self, t, x, rows):
        """``(D, b, nb)`` of the acceleration-level problem ``ü = D λ + b`` on the rows ``[(v index, sign)]`` at
        (t, x), b the gap accelerations of the free tree, with ``nb`` equality rows of the structure's own before
        them (none on a tree)."""
        idx, sign, _, D = self._delassus(x[:self.nq], rows)
        return D, sign * self.free_accelerations(t, x)[idx], 0

    def _contacts(self, t, x, candidates, arrived=()):
        """The limits among ``candidates`` (resting on their stops, zero gap velocity) whose reactions push at
        (t, x): the acceleration-level problem (module docstring). A stop in ``arrived`` (its gap has just come
        down to zero) is held also when its gap acceleration is zero to round-off: at that instant reaction and
        gap acceleration are both zero, and the gap's trend, which brought it onto the stop, says it stays.
        Returns them as a set."""
        if not candidates:
            return set()
        u, S = self.u, self.S
        eq = [int(c) for c in np.flatnonzero(S[S_KNOWN]) if c not in {int(u.lim_v[k]) for k in candidates}]
        rows = [(c, 1.0) for c in eq] + [(int(u.lim_v[k]), float(S[S_LIM_STATE][k])) for k in candidates]
        D, b, nb = self._contact_problem(t, x, rows)
        lam, w = self._lcp(D, b, [True] * (nb + len(eq)) + [False] * len(candidates), kind="contact")
        zero = ROUNDOFF * (1.0 + float(np.max(np.abs(b), initial=0.0)))
        first = nb + len(eq)
        return {k for i, k in enumerate(candidates)
                if lam[first + i] > 0.0 or (k in arrived and w[first + i] <= zero)}

    def _entry(self, t, joint, coordinate, kind, impulse, before, after):
        return {"t": float(t), "element": joint, "coordinate": coordinate, "kind": kind, "impulse": float(impulse),
                "velocity_before": None if before is None else float(before),
                "velocity_after": None if after is None else float(after), "structure": self.index,
                "dof": self.dof()}


def lcp_residual(D, b, bilateral, lam):
    """How far ``Λ`` is from solving the mixed LCP ``w = D Λ + b`` (``switching/impulse.py``), relative to the size
    of its terms: |w| on the equality rows and the rows with Λ ≠ 0, the negative parts of w and Λ elsewhere."""
    w = D @ lam + b
    active = bilateral | (lam != 0.0)
    bad = np.concatenate([np.abs(w[active]), np.maximum(-w[~active], 0.0), np.maximum(-lam[~bilateral], 0.0)])
    scale = max(float(np.max(np.abs(b), initial=0.0)),
                float(np.max(np.abs(D), initial=0.0)) * float(np.max(np.abs(lam), initial=0.0)), 1e-300)
    return float(np.max(bad, initial=0.0)) / scale


def energy_consistent_impulse(solve, D, u, e):
    """The impulses Λ of Newton's law on the rows of an impact (``w = D Λ + u + s e min(u, 0)``, ``solve(b)`` the
    mixed LCP's Λ for the right-hand side b) and the factor s of the restitutions: s = 1 unless the kinetic energy
    would rise, ``ΔT = uᵀΛ + ½ ΛᵀDΛ > 0`` beyond round-off.

    One row that approaches its stop (u < 0) and pushes (Λ > 0) leaves at −e u: it loses ½ Λ (1 − e) |u|. A closed
    row that separates (u > 0) keeps u⁺ ≥ 0 with Λ ≥ 0 and Λ u⁺ = 0, no restitution; but when an impulse elsewhere
    would bring it back onto its stop it pushes (u⁺ = 0) and adds ½ Λ u > 0 to the energy, more than the other rows
    lose when their restitution is near 1 (a closed stop separating next to a hit one; ``docs/variable-structure.md``).
    Then no impulse on these rows gives Newton's rebounds without creating energy, and the law lowers the rebounds
    instead: s is the largest factor in [0, 1) for which ΔT ≤ 0, by bisection (``RESTITUTION_BISECTIONS`` halvings).
    At s = 0 the problem is Moreau's plastic impact — the velocity after it is the mass-weighted projection of the
    velocity before onto the admissible ones (u ≥ 0 on every closed row), which never adds energy — so such an s
    exists. Returns ``(Λ, s)``."""
    approach = e * np.minimum(u, 0.0)
    lam = solve(u + approach)

    def gain(lam):
        change = u @ lam + 0.5 * lam @ D @ lam
        size = np.abs(u) @ np.abs(lam) + 0.5 * np.abs(lam) @ np.abs(D) @ np.abs(lam)
        return change - ENERGY_ROUNDOFF * size

    if gain(lam) <= 0.0 or not np.any(approach):
        return lam, 1.0
    lo, hi, lam_lo = 0.0, 1.0, solve(u)
    for _ in range(RESTITUTION_BISECTIONS):
        mid = 0.5 * (lo + hi)
        trial = solve(u + mid * approach)
        if gain(trial) <= 0.0:
            lo, lam_lo = mid, trial
        else:
            hi = mid
    return lam_lo, lo


def unresolved_rebound(rebound, gap_acceleration, stop):
    """True when a rebound off ``stop`` with gap velocity ``rebound`` (> 0) under the gap acceleration
    ``gap_acceleration`` (positive away from the stop) rises less than ``REBOUND_ULPS`` units in the last place of
    the stop's value, ``rebound² / (2 |a|)``: a bounce the coordinate cannot represent. The location of its return
    is then round-off, and a cascade of such bounces gains speed from it instead of dying out (Zeno's cascade
    never ends): the impact is plastic, the joint rests on its stop."""
    if gap_acceleration >= 0.0:
        return False
    return rebound * rebound / (2.0 * -gap_acceleration) <= REBOUND_ULPS * np.spacing(max(1.0, abs(stop)))


def separated_structure(st, t, x, joint, log):
    """The structure after ``joint`` of structure ``st`` separates at (t, x): the model with a free joint in its
    place (``switching/restructure.py``) and the state mapped (``restructure.separated_state``: every body keeps its
    motion, the momenta are unchanged). The mode carries over by name (latched, held, resting coordinates). Returns
    ``(structure, x)``."""
    from multibody.switching.restructure import separated_state

    old = st.model
    ns = st.successor(t, joint)
    new = ns.model
    q2, v2 = separated_state(old, new, joint, x[:old.nq], x[old.nq:])
    # the mode by name: latches locked, coordinates held, stops rested on
    vname_old, vname_new = old.velocity_names(), new.velocity_names()
    for jl in st.latched:
        name = st.u.latches[jl].name
        ns.latched |= {k for k, la in enumerate(ns.u.latches) if la.name == name}
    ns.held = {vname_new.index(vname_old[k]) for k in st.held if vname_old[k] in vname_new}
    state_old, state_new = st.S[S_LIM_STATE], ns.S[S_LIM_STATE]
    for k, lm in enumerate(st.u.limits):
        if state_old[k] in (ON_LOWER, ON_UPPER):
            for k2, lm2 in enumerate(ns.u.limits):
                if lm2.name == lm.name:
                    state_new[k2] = state_old[k]
    for r, rel in enumerate(ns.u.releases):
        old_r = next(i for i, o in enumerate(st.u.releases) if o.joint == rel.joint)
        ns.S[S_RELEASE_T][r] = st.S[S_RELEASE_T][old_r]
    for j, la in enumerate(ns.u.latches):
        old_j = next(i for i, o in enumerate(st.u.latches) if o.name == la.name)
        ns.S[S_LATCH_SIDE][j] = st.S[S_LATCH_SIDE][old_j]
    ns.sync()
    x2 = np.concatenate([q2, v2])
    log.append(ns._entry(t, joint, None, "release", 0.0, None, None))
    again = ns.start(t, x2, fresh=False)      # what the new structure meets at once
    if again.any():
        x2, nxt = ns.switch(t, x2, again, log)
        if nxt is not None:    # another joint separates at the same instant: the run goes on in its structure
            return x2, nxt
    return x2, ns
