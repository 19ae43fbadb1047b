"""``simulate(model, q0, v0, t_end, ...)``: integrate a model's equations of motion, return a ``Result``.

Formulations
------------
``formulation=`` picks how the state derivative is formed (``multibody.formulations``): each formulation is a
factory registered in :data:`multibody.formulations.base.FORMULATIONS` that turns the Model into an
:class:`~multibody.formulations.base.OdeSystem`. This module only validates the arguments, dispatches to the
formulation and integrates. The registered formulations and their options are listed at the end of
``help(simulate)``.

Methods
-------
* fixed step ``"RK4"``, ``"RK2"`` (explicit midpoint), ``"HEUN"``, ``"VERLET"`` with step ``h``: the whole run
  is one compiled loop (``integrate/fixed_step.py``) — unless a Python torque callback is present, see below.
  ``"VERLET"`` (kick-drift-kick on [q, v]) is of order 2 only when the accelerations do not depend on the
  velocities; in tree coordinates the centripetal/Coriolis terms make it first order (measured on the
  seed 001 triple pendulum: the error halves with h). Prefer RK4 there;
* adaptive ``"DOP853"``, ``"RK45"``, ``"RK23"``, ``"Radau"``, ``"BDF"``, ``"LSODA"`` (``rtol``, ``atol``) via
  ``integrate/adaptive.py``, each step calling the compiled right-hand side.

Quaternions (Spherical, Free joints) are normalised after every step (fixed-step methods and the one-step
adaptive methods; BDF and LSODA keep multistep histories that a projection would invalidate, so there the
outputs only are normalised).

Torques
-------
``tau`` is either an array (nv,) of constant generalized forces — kept in the compiled path — or a callable
``tau(t, q, v) -> (nv,)``; it replaces ``model.torque_callback`` when given. A numba function
``tau(t, q, v, out)`` (``@numba.njit``; it writes the nv generalized forces into ``out``, zeroed before the call)
runs inside the compiled loop (``formulations/tree_control.py``), as do the model's controllers
(``model.controllers``: ``mb.JointPD``, ``mb.ComputedTorque``), with the 'tree' formulation. A Python callable cannot
be called from compiled code, so it forces the *Python right-hand side path*: each evaluation calls the
compiled forces + ABA kernels once, plus the callback; fixed-step methods then run as a Python loop
(``fixed_step.rk_fixed_python``), one to two orders of magnitude slower per step than the compiled loop.

Checkpoints
-----------
``checkpoint="run.ckpt"`` writes the state of the run to that file every ``every`` simulated seconds (replacing it
atomically; format in ``multibody/io/checkpoints.py``), and :func:`resume` continues a run from its file. Fixed-step
runs are made in chunks of whole steps between checkpoints and resume bit for bit; adaptive runs write from their
step loop and resume by a new adaptive run from the checkpoint state (equal to the tolerance, see ``resume``).

Failures
--------
A failed integration (non-finite state or derivative, solver failure, ``max_steps`` exceeded or out of reach,
an exception in a callback, a checkpoint that could not be written) raises ``IntegrationError`` whose
``result`` is the partial ``Result`` up to the failure and ``reason`` says why. Bad arguments are refused before
anything runs (``integrate/arguments.py``); the guarantees are listed in ``help(simulate)``.
"""
import math
import time

import numpy as np

import multibody.formulations  # noqa: F401  (registers every formulation)
from multibody.model.data import refuse_general_joints, refuse_kinematics_only
from multibody.errors import IntegrationError, ModelError, ResultFileError, shown
from multibody.formulations.base import FORMULATIONS, check_supported, describe_formulations, formulation_options
from multibody.contact.models import check_contact_run, contact_system
from multibody.contact.stepping_batch import stepping_batch
from multibody.contact.stepping_run import simulate_stepping
from multibody.contact.stepping_structures import separations
from multibody.switching.run import simulate_switching, switching_batch
from multibody.formulations.tree_control import is_compiled_torque
from multibody.integrate import arguments as arg
from multibody.integrate.adaptive import PROJECTABLE, SOLVERS, nonfinite_entries, solve_adaptive, step_budget
from multibody.integrate.arguments import fixed_step_count, output_steps
from multibody.integrate.fixed_step import METHODS as FIXED_METHODS, STATUS_MESSAGES, STATUS_OK
from multibody.integrate.fixed_step import rk_fixed_python, run_fixed, run_fixed_batch
from multibody.integrate.run_by_run import needs_python, run_by_run
from multibody.integrate.tableaux import STAGES
from multibody.contact.stepping_loop import SteppingSystem
from multibody.model.model import Model
from multibody.result import DENSE_STEPS, BatchResult, DenseOutput, Result

__all__ = ["simulate", "resume", "simulate_batch", "BatchResult", "fixed_step_count"]


# ----------------------------------------------------------------------------------------------------------
def _adaptive_key(method):
    key = str(method).upper()
    return key if key in SOLVERS else None


def _check_model(model, formulation="tree"):
    """The formulations of multibody take a Model (a registered formulation of its own may take anything)."""
    if FORMULATIONS[formulation].__module__.startswith("multibody.") and not isinstance(model, Model):
        raise ModelError(f"model must be a multibody Model (ModelBuilder.build(), load_model, ...), got "
                         f"{type(model).__name__}", element="model")
    refuse_kinematics_only(model, "simulate")


def _state_names(model, formulation, options, n):
    """Labels of the entries of a formulation's state for the reasons of failures: ``q 'joint.coordinate'`` and
    ``v 'joint.coordinate'`` where the state begins with ``[q, v]`` (tree, constrained, stabilized), ``p '...'``
    for the impulses of the poisson form; None (``x[i]``) otherwise."""
    try:
        qn, vn = model.coordinate_names(), model.velocity_names()
    except AttributeError:
        return None
    first = [f"q '{c}'" for c in qn]
    if formulation == "poisson" and n == len(qn) + len(vn):
        return first + [f"p '{c}'" for c in vn]
    if formulation in ("tree", "constrained", "stabilized") and not options.get("prescribed") and \
            n >= len(qn) + len(vn):
        return first + [f"v '{c}'" for c in vn] + [f"x[{i}]" for i in range(len(qn) + len(vn), n)]
    return None


def simulate(model, q0=None, v0=None, t_end=1.0, method="DOP853", h=None, rtol=1e-9, atol=1e-12, t_eval=None,
             n_out=None, formulation="tree", tau=None, progress=None, max_steps=None, events=None, t0=0.0,
             energy=True, output_every=None, checkpoint=None, every=None, contact=None, **options):
    """Integrate ``model`` from ``(q0, v0)`` at ``t0`` to ``t_end``; return a :class:`multibody.Result`.

    Parameters
    ----------
    q0, v0 : initial configuration (default ``model.neutral()``) and velocity (default zero).
    method : adaptive ``"DOP853"`` (default), ``"RK45"``, ``"RK23"``, ``"Radau"``, ``"BDF"``, ``"LSODA"`` or fixed
        step ``"RK4"``, ``"RK2"`` (explicit midpoint), ``"HEUN"``, ``"VERLET"`` (these need ``h``).
    h : fixed step; the run uses ``nsteps = ceil((t_end − t0)/h)`` steps of ``(t_end − t0)/nsteps`` (≤ h) so
        that it ends at ``t_end`` exactly.
    rtol, atol : tolerances of the adaptive methods.
    t_eval, n_out, output_every : the output times, one of them (default: every step). Adaptive methods: any
        times ``t_eval`` in the span (from the dense output), or ``n_out`` equally spaced. Fixed step: the states
        of the steps themselves: every ``output_every``-th step and the last one, or ``n_out`` equally spaced
        (``nsteps`` divisible by ``n_out − 1``), or ``t_eval`` times on the step grid ``t0 + k h`` (to 1e-9 h).
    formulation : name of a registered formulation (default ``"tree"``; the list is at the end of this
        docstring); ``options`` are its own keyword options.
    tau : constant generalized forces (nv,), a callable ``tau(t, q, v)``, or a numba function ``tau(t, q, v, out)``
        run in the compiled loop (see the module docstring).
    progress : a tqdm progress bar (steps of fixed-step runs, simulated time of adaptive ones): None (default)
        shows it once a run has lasted two seconds, on a terminal only; True always; False never.
    max_steps : the step budget, a whole number >= 1 or ``math.inf`` (no limit). Default: adaptive methods a
        million accepted steps (``integrate.adaptive.DEFAULT_MAX_STEPS``); fixed-step methods 10⁹ steps in the
        compiled loop, 10⁷ in the Python loop of a torque callback (``integrate.arguments.FIXED_MAX_STEPS``).
        An adaptive run that reaches it fails with an ``IntegrationError`` (the partial result, the reason); one
        that, from a thousandth of its budget on (at least 1000 steps), would need more than 100 times its
        budget at both its mean and its last step fails at once (a ``t_end`` of 1e300 ends after 1000 steps); a
        fixed-step run of more steps is refused before it starts (``ModelError`` naming ``h``).
    events : callables ``g(t, q, v)`` (attributes ``terminal``, ``direction`` as for ``solve_ivp``), adaptive
        methods and ``contact="stepping"`` (evaluated at every step) only; the event times are in ``result.info["t_events"]`` (one list per event). With joint limits,
        latches or releases they are located alongside the switches, an event at a switch reported once
        (``switching/events.py``).
    energy : compute the energies of the outputs (``result.energy``; in the compiled loop for fixed steps).
    checkpoint, every : a file to which the run's state and outputs so far are written every ``every``
        simulated seconds (default: a twentieth of the span; at most ``MAX_CHECKPOINTS`` of them), at the start
        and at the end; :func:`resume` continues the run from it. Fixed-step methods write every
        ``round(every / h)`` steps (at least one). A run that cannot be written as data (a Python torque
        callback, events) is refused with a ``ModelError`` before it starts, and so is a fixed-step run that takes
        the Python loop (a model with torque expressions: checkpoint it with an adaptive method); so is a place
        that cannot be written (a ``ResultFileError``, checked by writing a file there).
    contact : a contact model for the model's collision elements (``multibody.contact.models``):
        ``"compliant"`` (Hunt–Crossley forces in the tree's right-hand side, any method) or ``"stepping"``
        (velocity-level time stepping with exact friction cones, its own step: give ``h``, no method; one problem
        per step over the contacts, joint stops, latches, held coordinates, loops and constraints, the controllers
        acting in its loop, ``checkpoint=`` and ``events=`` served by its run loop); its parameters are keyword
        options (e.g. ``stiffness=``, ``damping=``; ``contact_pairs=``, ``exclude=``); ``result.contacts`` holds the
        contacts at each output, ``result.energy["dissipated"]`` what they took.
    options : passed to the formulation's factory; e.g. ``prescribed={"joint.coordinate": f}`` of ``"tree"``
        drives those coordinates along ``f(t) -> (q, q̇, q̈)`` and returns the drive forces in
        ``result.drive_forces`` (seed 001 §3.3.1; ``formulations/prescribed.py``; a Python right-hand side).

    Raises ``IntegrationError`` (with the partial result and the reason) when the integration fails.

    Guarantees
    ----------
    * Every argument is checked before anything is computed, each refusal a ``ModelError`` naming the argument
      (``element``): ``t0`` < ``t_end`` finite; ``rtol`` > 0 and ``atol`` > 0 finite (numbers or one per state
      entry); ``h`` > 0, finite, not longer than the span; ``n_out`` >= 2, ``output_every`` >= 1, ``max_steps`` >= 1
      whole numbers; ``t_eval`` a non-empty 1-D array of finite increasing times in [t0, t_end]; ``q0``, ``v0``
      vectors (a 2-D array is refused, not flattened); ``tau`` real (complex numbers are refused, also when a
      callback returns them); ``events`` callables returning finite real numbers; ``energy``, ``progress``
      booleans; ``checkpoint`` a file that can be written (checked by writing one before the run).
    * No run is silent for long or endless: the step budget above, a progress bar on a terminal after two
      seconds, and the right-hand side checked at the initial state before scipy sees it (a NaN there made
      DOP853 and RK45 loop forever) and after every step: a run stops at the first non-finite state or
      derivative, with a reason naming the entries (``v 'joint.coordinate' = nan``) and the time.
    * Nothing computed is lost: a failed run raises ``IntegrationError`` with ``result``, the partial Result up to
      the failure (a ``ModelError`` met during the run, e.g. a callback's bad output, carries it as ``result``
      too); outputs that would not fit in memory (half this machine's) are refused before they are allocated,
      saying how to ask for fewer; a checkpoint that cannot be written in the middle of a run fails it with
      what was computed.

    Example
    -------
    >>> import numpy as np
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> model = simple_pendulum(length=1.0, mass=1.0, g=9.81)
    >>> res = simulate(model, [0.1], [0.0], 2.0, method="DOP853", rtol=1e-10, n_out=5)
    >>> res.q.shape, res.info["status"]
    ((5, 1), 'success')
    >>> bool(res.energy_drift() < 1e-8)
    True
    >>> res = simulate(model, [0.1], [0.0], 2.0, method="RK4", h=1e-3, n_out=5)   # one compiled loop
    >>> res.info["path"], res.info["steps"]
    ('compiled', 2000)
    """
    return _simulate(model, q0, v0, t_end, method, h, rtol, atol, t_eval, n_out, formulation, tau, progress,
                     max_steps, events, t0, energy, output_every, checkpoint, every, options, contact=contact)


def resume(path, progress=None):
    """Continue the run whose checkpoint file is ``path`` (written by ``simulate(..., checkpoint=path)``) to its
    ``t_end``; return its :class:`multibody.Result`. The run goes on writing checkpoints to ``path``; the
    checkpoint of a finished run gives its Result at once. ``result.info["resumed_from"]`` is the time the run
    was continued from.

    Fixed-step methods continue from the step reached, on the same step grid ``t0 + k h``, with the same
    compiled loop: the Result is bit for bit that of the uninterrupted run. Adaptive methods start a new
    adaptive run from the checkpoint's time and state, which changes the sequence of steps after it: the Result
    equals the uninterrupted one to the tolerance (both have local errors of order ``rtol`` per step), not bit
    for bit.

    A missing, corrupt or foreign file, or one written by a newer multibody, is a ``ResultFileError`` (a
    ``ModelError``); so is a checkpoint that does not fit the run its settings describe (a hand edit: its step
    and time disagree, its outputs are not those of the steps up to it, a setting is invalid, ...), naming the
    field (``element``, e.g. ``"checkpoint t"``) before anything runs.

    Example
    -------
    >>> import os, tempfile
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> path = os.path.join(tempfile.mkdtemp(), "run.ckpt")
    >>> full = simulate(simple_pendulum(), [0.1], [0.0], 2.0, method="RK4", h=1e-3, checkpoint=path, every=0.5)
    >>> again = resume(path)              # a finished run's checkpoint: its Result at once
    >>> bool(np.array_equal(again.q, full.q))
    True
    """
    from multibody.io import checkpoints as checkpoint_file

    progress = arg.flag(progress, "progress", none_allowed=True)
    ck = checkpoint_file.read(path)
    s = ck.settings
    try:
        options = dict(s["options"] or {})
    except (TypeError, ValueError):
        raise ResultFileError(f"checkpoint '{ck.path}' does not fit its run: settings options = {s['options']!r} is "
                              "not a mapping (edited or damaged?)", path=ck.path,
                              element="checkpoint options") from None
    try:
        return _simulate(ck.model, ck.q0, ck.v0, s["t_end"], s["method"], s["h"], s["rtol"], s["atol"], ck.t_eval,
                         s["n_out"], s["formulation"], ck.tau, progress, s["max_steps"], None, s["t0"], s["energy"],
                         s["output_every"], path, s["every"], options, restart=ck, contact=s.get("contact"))
    except ResultFileError:
        raise
    except ModelError as exc:
        if getattr(exc, "result", None) is not None:   # met during the run: not the checkpoint's fault
            raise
        raise ResultFileError(f"checkpoint '{ck.path}' does not fit its run: its settings: {exc} (edited or "
                              "damaged?)", path=ck.path, element=f"checkpoint {exc.element}") from exc


#: the most checkpoints a run writes: each rewrites the outputs so far, so their cost grows with their square
MAX_CHECKPOINTS = 10_000


def _checkpoint_writer(path, every, model, q0, v0, tau, t_eval, events, t0, t_end, settings, step=None):
    """The :class:`multibody.io.checkpoints.Writer` of a run and its interval (None, None without a checkpoint);
    ``step``: the fixed step (a checkpoint is written every ``max(every, step)``), None for adaptive runs."""
    if path is None:
        if every is not None:
            raise ModelError("every is the interval of the checkpoints: give checkpoint= too", element="every")
        return None, None
    every = (t_end - t0) / 20.0 if every is None else every
    every = arg.number(every, "every", "every (the interval of the checkpoints in simulated seconds)")
    if not (math.isfinite(every) and every > 0.0):
        raise ModelError(f"every must be a positive number of simulated seconds, got {every}", element="every")
    count = (t_end - t0) / max(every, step or 0.0)
    if count > MAX_CHECKPOINTS:
        raise ModelError(f"every = {every:g} s makes {count:.3g} checkpoints of the span {t_end - t0:g} s, more than "
                         f"{MAX_CHECKPOINTS} (each rewrites the outputs so far): take a larger every",
                         element="every")
    from multibody.io.checkpoints import Writer

    settings = dict(settings, every=every)
    return Writer(path, model, settings, q0=q0, v0=v0, tau=tau, t_eval=t_eval, events=events), every


def _simulate(model, q0, v0, t_end, method, h, rtol, atol, t_eval, n_out, formulation, tau, progress, max_steps,
              events, t0, energy, output_every, checkpoint, every, options, restart=None, contact=None):
    """``simulate`` (and, with ``restart`` a :class:`multibody.io.checkpoints.Checkpoint`, ``resume``)."""
    if not isinstance(formulation, str) or formulation not in FORMULATIONS:
        raise ModelError(f"formulation {formulation!r} is unknown; registered: {', '.join(sorted(FORMULATIONS))}",
                         element="formulation")
    _check_model(model, formulation)
    system = None
    if contact is not None:   # ---- a contact model (contact/models.py) with its own parameters
        check_contact_run(model, contact, options, method, h, (t0, t_end))
        contact_options = dict(options)
        system = contact_system(contact, model, q0, v0, tau, energy, formulation, options)
        options = {}
        if isinstance(system, SteppingSystem):
            t0, t_end = arg.time_span(t0, t_end)
            nsteps, h_used = fixed_step_count(t0, t_end, h, "stepping")
            if restart is not None and not separations(model):   # (a separating run's: Structures.restore)
                from multibody.io.checkpoints import check_resumable

                grid = (nsteps, h_used, output_steps(nsteps, h_used, t0, t_eval, n_out, output_every))
                check_resumable(restart, system.q0.shape[0] + system.v0.shape[0] + 1, t0, t_end, grid=grid)
            writer, every = _checkpoint_writer(
                checkpoint, every, model, q0, v0, tau, t_eval, events, t0, t_end,
                {"method": str(method), "h": h, "n_out": n_out, "output_every": output_every, "formulation": formulation,
                 "options": contact_options, "t0": t0, "t_end": t_end, "energy": energy, "max_steps": max_steps,
                 "contact": contact}, h)
            return simulate_stepping(system, model, t0, t_end, method, h, t_eval, n_out, output_every, progress,
                                     events, writer, every, restart, max_steps)
    accepted = formulation_options(formulation)
    if accepted is not None:
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise ModelError(f"formulation {formulation!r} has no option {', '.join(map(repr, unknown))}; it accepts: "
                             f"{', '.join(accepted) or 'no options'}", element=unknown[0])
    t0, t_end = arg.time_span(t0, t_end)
    mkey = str(method).upper()
    fixed = mkey in FIXED_METHODS
    if fixed:
        nsteps, h_used = fixed_step_count(t0, t_end, h, method)
    elif _adaptive_key(method) is None:
        raise ModelError(f"method {method!r} is unknown; adaptive: DOP853, RK45, RK23, Radau, BDF, LSODA; "
                         f"fixed step: {', '.join(sorted(set(FIXED_METHODS)))}", element="method")
    # every argument checked before anything is computed (integrate/arguments.py)
    rtol = arg.tolerance(rtol, "rtol", 1e-9)
    atol = arg.tolerance(atol, "atol", 1e-12)
    q0, v0 = arg.state_vector(q0, "q0"), arg.state_vector(v0, "v0")
    tau = arg.real_forces(tau)
    progress = arg.flag(progress, "progress", none_allowed=True)
    energy = arg.flag(energy, "energy")
    events = arg.event_functions(events)
    if max_steps is not None:
        step_budget(max_steps)
    given = [name for name, x in (("t_eval", t_eval), ("n_out", n_out), ("output_every", output_every))
             if x is not None]
    if len(given) > 1:
        raise ModelError(f"give one of t_eval, n_out, output_every, not {' and '.join(given)}", element=given[1])
    if t_eval is not None:
        t_eval = arg.output_times(t_eval, t0, t_end)
    if n_out is not None:
        n_out = arg.whole(n_out, "n_out", 2)
    if output_every is not None:
        if not fixed:
            raise ModelError("output_every is for the fixed-step methods (RK4, ...); adaptive methods take t_eval or "
                             "n_out", element="output_every")
        output_every = arg.whole(output_every, "output_every", 1)
    if fixed and events is not None:
        raise ModelError("events need an adaptive method (DOP853, RK45, Radau, ...)", element="events")
    writer, every = _checkpoint_writer(
        checkpoint, every, model, q0, v0, tau, t_eval, events, t0, t_end,
        {"method": str(method), "h": h, "rtol": rtol, "atol": atol, "n_out": n_out, "output_every": output_every,
         "formulation": formulation, "options": contact_options if contact is not None else options, "t0": t0,
         "t_end": t_end, "energy": energy, "max_steps": max_steps, "contact": contact}, h_used if fixed else None)
    if getattr(model, "unilateral", None):   # joint limits, latches, releases: a run across switches
        return simulate_switching(model, q0, v0, t0, t_end, mkey, h, rtol, atol, t_eval, n_out, output_every,
                                  formulation, tau, max_steps, events, energy, writer, options, every=every,
                                  restart=restart, progress=progress)
    check_supported(formulation, model, t0)   # a moving base, general joints, controllers: what it declared
    if system is None:
        system = FORMULATIONS[formulation](model, q0, v0, tau=tau, energy=energy, **options)
    names = _state_names(model, formulation, options, system.x0.shape[0])
    if restart is not None:
        from multibody.io.checkpoints import check_resumable

        grid = (nsteps, h_used, output_steps(nsteps, h_used, t0, t_eval, n_out, output_every)) if fixed else None
        times = np.linspace(t0, t_end, n_out) if n_out is not None and not fixed else t_eval
        check_resumable(restart, system.x0.shape[0], t0, t_end, grid=grid, t_eval=times,
                        nobs=system.nobs if fixed and system.observe is not None else 0)
    info = {"method": str(method), "model": getattr(model, "name", ""), **system.info}
    if writer is not None:
        info["checkpoint"] = str(checkpoint)
    if restart is not None:
        info["resumed_from"] = restart.t
    cpu = time.process_time()
    wall = time.perf_counter()

    def finish(t, X, status, message, extra, obs=None):
        info.update(extra)
        info["status"] = status
        info["message"] = message
        info["cpu_seconds"] = time.process_time() - cpu
        info["wall_seconds"] = time.perf_counter() - wall
        t, X = np.asarray(t, dtype=float), np.asarray(X, dtype=float)
        if obs is None:
            return system.make_result(t, X, info)
        return system.make_result(t, X, info, obs=obs)

    def failed(t, X, reason, extra, obs=None, cause=None):
        named = system.diagnose() if system.diagnose is not None else None   # e.g. a compiled law that raised
        reason = reason if named is None else named[0]
        res = finish(t, X, "failed", reason, extra, obs)
        if isinstance(cause, ModelError) and not isinstance(cause, ResultFileError):
            cause.result = res      # bad input met during the run: its ModelError, with what was computed
            raise cause
        raise IntegrationError(f"{method} integration of model '{info['model']}' failed: {reason}", result=res,
                               reason=reason, element=None if named is None else named[1]) from cause

    if fixed:
        compiled = system.rhs is not None and not system.python_only
        arg.fixed_budget(nsteps, h_used, max_steps, "compiled" if compiled else "python")
        width = system.x0.shape[0] + system.nobs + 2
        arg.check_output_size(arg.output_count(nsteps, t_eval, n_out, output_every), width,
                              given[0] if given else "output_every")
        save = output_steps(nsteps, h_used, t0, t_eval, n_out, output_every)
        extra = {"h": h_used, "nsteps_requested": nsteps}
        obs = None
        if compiled:
            try:
                t, X, status, done, obs = _run_fixed_checkpointed(system, t0, h_used, nsteps, mkey, save, progress,
                                                                  writer, every, restart)
            except ResultFileError as exc:  # a checkpoint that could not be written: what was computed, kept
                if not hasattr(exc, "partial"):
                    raise
                t, X, obs, done = exc.partial
                extra.update(steps=int(done), nfev=int(done) * STAGES[FIXED_METHODS[mkey]], path="compiled")
                failed(t, X, f"the checkpoint could not be written at step {done}: {exc}", extra,
                       obs if system.observe is not None else None, exc)
            extra["path"] = "compiled"
            if system.observe is None:
                obs = None
        elif writer is not None:
            raise ModelError(f"checkpoint=: a fixed-step run is checkpointed in its compiled loop, and this one "
                             f"runs as a Python loop (the model's torque expressions of model '{info['model']}'); "
                             "use an adaptive method (DOP853, ...) for a checkpointed run", element="checkpoint")
        else:
            extra["path"] = "python"
            try:
                t, X, status, done = rk_fixed_python(system.fun, system.project_py, system.x0, t0, h_used, nsteps,
                                                     save, mkey, nsplit=system.nsplit, progress=progress,
                                                     on_step=system.on_step)
            except Exception as exc:
                if not hasattr(exc, "partial"):
                    raise
                t, X, done = exc.partial
                extra.update(steps=done, nfev=done * STAGES[FIXED_METHODS[mkey]])
                failed(t, X, f"{type(exc).__name__} raised at step {done + 1} (t = {t0 + done * h_used:.17g}): "
                       f"{exc}", extra, cause=exc)
        extra.update(steps=int(done), nfev=int(done) * STAGES[FIXED_METHODS[mkey]])
        if status != STATUS_OK:
            reason = (f"{STATUS_MESSAGES[status]} at step {done + 1} (t = {t0 + (done + 1) * h_used:.17g}); "
                      f"the step h = {h_used:g} may be too large or the forces unbounded"
                      + _derivative_note(system, t0 + done * h_used, X[-1] if len(X) else system.x0, names))
            failed(t, X, reason, extra, obs)
        return finish(t, X, "success", "completed", extra, obs)

    key = _adaptive_key(method)
    ny = system.x0.shape[0]
    for name, tol in (("rtol", rtol), ("atol", atol)):
        if np.ndim(tol) == 1 and np.shape(tol) != (ny,):
            raise ModelError(f"{name} must be a number or {ny} numbers (one per state entry), got {np.size(tol)}",
                             element=name)
    if n_out is not None:
        arg.check_output_size(n_out, ny + 2, "n_out")
        t_eval = np.linspace(t0, t_end, n_out)
    elif t_eval is not None:
        arg.check_output_size(t_eval.size, ny + 2, "t_eval")
    ev_wrapped = None
    if events is not None:
        ev_wrapped = [_event(system, ev, k) for k, ev in enumerate(events)]
    project = system.project_py if key in PROJECTABLE else None
    run = _solve_adaptive_checkpointed(system, key, t0, t_end, rtol, atol, t_eval, ev_wrapped, max_steps, project,
                                       progress, writer, every, restart, names)
    extra = {"rtol": rtol if np.ndim(rtol) == 0 else np.asarray(rtol).tolist(),
             "atol": atol if np.ndim(atol) == 0 else np.asarray(atol).tolist(),
             "steps": run.nsteps, "nfev": run.nfev, "njev": run.njev, "nlu": run.nlu}
    if ev_wrapped is not None:
        extra["t_events"] = [te.tolist() for te in run.t_events]
    if run.status == "failed":
        failed(run.t, run.y, run.reason, extra, cause=run.error)
    res = finish(run.t, run.y, run.status, run.message, extra)
    res.dense = None if run.sol is None else DenseOutput(run.sol, system.make_result)   # (the steps' interpolants)
    return res


def _event(system, ev, k):
    """The event function ``g(t, q, v)`` as ``solve_adaptive`` calls it, ``g(t, x)``; a value that is not one
    finite real number is a ModelError naming the event."""
    def g(t, x):
        q, v = system.split(x) if system.split_t is None else system.split_t(t, x)
        return arg.event_value(ev(t, q, v), k, ev, t)

    g.terminal = getattr(ev, "terminal", False)
    g.direction = getattr(ev, "direction", 0.0)
    return g


def _derivative_note(system, t, x, names):
    """``"; the derivative at t = ...: v 'joint' = nan"`` when the right-hand side is not finite at the last finite
    state ``x`` of a failed fixed-step run (what made it fail), else ``""``."""
    try:
        with np.errstate(all="ignore"):
            f = np.asarray(system.fun(t, np.array(x, dtype=float)), dtype=float)
    except Exception:  # the note is a courtesy: the failure is reported anyway
        return ""
    if f.shape != np.shape(x) or np.all(np.isfinite(f)):
        return ""
    return f"; the derivative at t = {t:.17g} (the last finite state): {nonfinite_entries(f, names)}"


def _run_fixed_checkpointed(system, t0, h, nsteps, mkey, save, progress, writer, every, restart):
    """``run_fixed`` of a compiled system; with a checkpoint ``writer``, in chunks of ``round(every / h)`` whole
    steps with a checkpoint after each (and at the start and the end), continuing from ``restart`` (the state at
    its step number, the outputs so far) when given. Returns ``(t, X, status, last step done, obs)``."""
    observing = system.observe is not None
    first = 0 if restart is None else int(restart.step)
    prev = None
    if restart is not None and first > 0:   # the checkpoint at step 0 holds no outputs: a fresh start
        prev = (restart.out_t, restart.out_x, restart.out_obs if observing else None)
    x_start = restart.x if prev is not None else system.x0
    if prev is not None and (restart.finished or first >= nsteps):
        return (*prev[:2], STATUS_OK, first, prev[2])
    todo = save[save > first] if prev is not None else save
    chunk = on_chunk = None
    last = [x_start]
    if writer is not None:
        chunk = max(1, int(round(every / h)))

        def outputs(parts):
            got = ([prev] if prev is not None else []) + list(parts)
            cols = (np.concatenate([p[0] for p in got]), np.concatenate([p[1] for p in got]))
            return cols + ((np.concatenate([p[2] for p in got]) if observing else None),)

        def on_chunk(done, x, parts):
            last[:] = [x.copy()]
            if done < nsteps:  # the last one is written as finished below
                writer.write(t0 + done * h, done, x, *outputs(parts), stats={"steps": done})

        if prev is None:
            writer.write(t0, 0, system.x0, np.zeros(0), np.zeros((0, system.x0.shape[0])), None, {"steps": 0})

    def joined(t, X, obs):
        if prev is None:
            return t, X, obs
        return (np.concatenate([prev[0], t]), np.concatenate([prev[1], X]),
                np.concatenate([prev[2], obs]) if observing else obs)

    try:
        t, X, status, done, obs = run_fixed(system.rhs, x_start, t0, h, nsteps, system.params, method=mkey,
                                            project=system.project, save=todo, nsplit=system.nsplit,
                                            progress=progress, chunk=chunk, observe=system.observe, nobs=system.nobs,
                                            first=first if prev is not None else 0, on_chunk=on_chunk)
    except ResultFileError as exc:   # a checkpoint that could not be written: the outputs so far go with it
        if hasattr(exc, "partial"):
            exc.partial = joined(*exc.partial[:3]) + exc.partial[3:]
        raise
    t, X, obs = joined(t, X, obs)
    if writer is not None and status == STATUS_OK:
        try:
            writer.write(t0 + done * h, done, last[0], t, X, obs if observing else None, {"steps": done},
                         finished=True)
        except ResultFileError as exc:
            exc.partial = (t, X, obs, done)
            raise
    return t, X, status, done, obs


def _solve_adaptive_checkpointed(system, key, t0, t_end, rtol, atol, t_eval, events, max_steps, project, progress,
                                 writer, every, restart, names=None):
    """``solve_adaptive`` of a system; with a checkpoint ``writer``, a checkpoint at the start, at the first
    accepted step past each multiple of ``every`` and at the end; from ``restart`` (a checkpoint after the
    start) a new adaptive run from its time and state to the outputs still to come, joined to its outputs."""
    prev = None
    if restart is not None and restart.t > t0:   # the checkpoint at t0 holds no outputs: a fresh start
        prev = restart
    t_start, y_start, rest, stats0 = t0, system.x0, t_eval, {"steps": 0, "nfev": 0, "njev": 0, "nlu": 0}
    if prev is not None:
        t_start, y_start = prev.t, prev.x
        stats0.update({k: int(v) for k, v in prev.stats.items() if k in stats0})
        if t_eval is not None:
            rest = np.asarray(t_eval, dtype=float)[np.asarray(t_eval, dtype=float) > t_start]
        budget = step_budget(max_steps)
        if budget != math.inf:
            max_steps = max(1, budget - stats0["steps"])
    nxt = [t_start + every] if writer is not None else None

    def callback(t, y, ts, ys, stats):
        if system.on_step is not None:
            system.on_step(t, y)
        if writer is not None and t >= nxt[0]:
            nxt[0] = t0 + every * (math.floor((t - t0) / every) + 1)
            out_t, out_x = _joined(prev, ts, ys, y.shape[0])
            writer.write(t, None, y, out_t, out_x, None, {k: stats0[k] + v for k, v in stats.items()})

    if writer is None and system.on_step is None:
        callback = None
    if writer is not None and prev is None:
        writer.write(t0, None, system.x0, np.zeros(0), np.zeros((0, system.x0.shape[0])), None, stats0)
    if prev is not None and (prev.finished or t_start >= t_end or (rest is not None and rest.size == 0)):
        from multibody.integrate.adaptive import AdaptiveRun

        run = AdaptiveRun(prev.out_t, prev.out_x, "success", "the end of the interval was reached")
    else:
        run = solve_adaptive(system.fun, (t_start, t_end), y_start, method=key, rtol=rtol, atol=atol, t_eval=rest,
                             events=events, max_steps=max_steps, project=project, progress=progress,
                             project_output=system.project_output if project is not None else None,
                             callback=callback, names=names, max_output_bytes=arg.memory_limit(),
                             dense_output=DENSE_STEPS if rest is None and prev is None else False)
        if prev is not None:
            skip = 1 if t_eval is None else 0   # a run without t_eval outputs its start, the checkpoint's last output
            run.t, run.y = _joined(prev, run.t[skip:], run.y[skip:], y_start.shape[0])
    run.nsteps += stats0["steps"]
    run.nfev, run.njev, run.nlu = run.nfev + stats0["nfev"], run.njev + stats0["njev"], run.nlu + stats0["nlu"]
    if writer is not None and run.status == "success" and not (prev is not None and prev.finished):
        try:
            writer.write(run.t[-1] if t_eval is None else t_end, None, run.y[-1], run.t, run.y, None,
                         {"steps": run.nsteps, "nfev": run.nfev, "njev": run.njev, "nlu": run.nlu}, finished=True)
        except ResultFileError as exc:   # the run is complete: its Result goes with the error
            run.status, run.error = "failed", exc
            run.reason = f"the run reached its end, but its last checkpoint could not be written: {exc}"
    return run


def _joined(prev, ts, ys, n):
    """The outputs of a checkpoint ``prev`` (or none) followed by the times ``ts`` and states ``ys``."""
    t = np.asarray(ts, dtype=float).reshape(-1)
    y = np.asarray(ys, dtype=float).reshape(len(t), n)
    if prev is None:
        return t, y
    return np.concatenate([prev.out_t, t]), np.concatenate([prev.out_x, y])


simulate.__doc__ += "\n    Formulations\n    ------------\n" + "\n".join(
    "    " + line for line in describe_formulations().splitlines()) + "\n"


def simulate_batch(model, Q0=None, V0=None, t_end=1.0, method="RK4", h=None, params=None, t0=0.0, t_eval=None,
                   n_out=None, output_every=None, tau=None, energy=True, lanes=None, max_steps=None, contact=None,
                   **options):
    """Integrate many runs of ``model`` in one compiled parallel call; return a :class:`BatchResult`.

    The fast path under sweeps and Monte-Carlo studies: the runs are split between threads
    (``numba.set_num_threads`` chooses how many), eight at a time in the SIMD lanes of the processor where the
    model allows it (``lanes`` below), and each run is computed with the operations, in the same order, of
    ``simulate(model, Q0[b], V0[b], t_end, method, h, tau=..., ...)``: run b equals that single run exactly,
    whatever the number of threads.

    Parameters
    ----------
    Q0, V0 : initial states, (runs, nq) and (runs, nv); a single (nq,) or (nv,) row, or None (neutral
        configuration, rest), is the same for every run.
    method, h : a fixed-step method (``"RK4"``, ``"RK2"``, ``"HEUN"``, ``"VERLET"``) and its step, as in
        ``simulate``. Adaptive methods cannot run in the compiled parallel loop: use ``simulate`` for them
        (Python torque callbacks: ``tau`` below).
    params : dict of what varies per run, each an array with the runs as first axis:
        ``"tau"`` (runs, nv) constant generalized forces (added to the model's efforts, replacing the ``tau``
        argument for that run); ``"mass"`` (runs, nbodies) the mass of every body, in the model's body order
        (the centre of mass and the inertia about it stay the model's); ``"gravity"`` (runs, 3). Everything
        else is the model's. Missing keys: the model's values.
    t_eval, n_out, output_every : the output times, as for fixed-step ``simulate`` (default every step).
    tau : constant generalized forces (nv,) for every run, or a numba function ``tau(t, q, v, out)``; a Python
        callable ``tau(t, q, v)`` (or Python constraints with contact) makes the runs one by one through
        ``simulate`` (``integrate/run_by_run.py``: ``info["path"]`` says so; ``params`` may then vary tau only).
    energy : compute the energies of the outputs in the loop (``result.energy``).
    lanes : run ``LANES`` (8) runs at once in the SIMD lanes of the processor (``kernels/lanes.py``), with the
        same numbers as the per-run loop: None (default) does it for every model it can compute — trees of
        Revolute, Prismatic and Fixed joints on a fixed ground, with joint spring-dampers and efforts and PD
        controllers but no point-to-point springs, computed-torque controllers or numba torque laws, methods RK2,
        HEUN, RK4, VERLET — and runs the others one by one; False always
        runs them one by one; True requires the lanes (a ``ModelError`` says why a model cannot take them).
        ``result.info["path"]`` says which ran.

    max_steps : the step limit of each run (default: the compiled loop's budget, as in ``simulate``); a run that
        needs more steps is refused before it starts.
    contact : ``"stepping"``: each run with the time-stepping model (its contacts, joint stops, latches, loops and
        controllers as in ``simulate(..., contact="stepping")``; ``options`` its parameters), the runs split between
        threads, each compiled loop running without the GIL (``contact/stepping_batch.py``); give ``h``, no
        method. ``result.contacts[b]``: the contacts of run b.

    The number of runs is the first axis of Q0, V0 or the params; all must agree (``ModelError`` naming the
    argument otherwise). A run whose state becomes non-finite is marked failed (``result.status``) and does
    not stop the others. Every argument is checked before anything runs, as in ``simulate`` (a ``ModelError``
    naming it), and so is the memory the outputs of all the runs need.

    Example
    -------
    >>> import numpy as np
    >>> from multibody.systems.pendulums import simple_pendulum
    >>> model = simple_pendulum(length=1.0, mass=1.0, g=9.81)
    >>> batch = simulate_batch(model, np.linspace(0.1, 1.0, 10)[:, None], None, 2.0, h=1e-3, n_out=5)
    >>> batch.q.shape, batch.energy["total"].shape
    ((10, 5, 1), (10, 5))
    >>> single = simulate(model, [1.0], [0.0], 2.0, method="RK4", h=1e-3, n_out=5)
    >>> bool(np.array_equal(batch[9].q, single.q))
    True
    """
    _check_model(model)
    mkey = str(method).upper()
    if contact is not None:
        if contact != "stepping":
            raise ModelError(f"simulate_batch runs contact='stepping' (its compiled loop), not {contact!r}: simulate "
                             "each run of the compliant model", element="contact")
        mkey = "RK4"    # (its own semi-implicit Euler step; the checks below need a fixed-step method)
    elif options:
        raise ModelError(f"simulate_batch has no option {sorted(options)[0]!r} (contact parameters need contact=)",
                         element=sorted(options)[0])
    if mkey not in FIXED_METHODS:
        raise ModelError(f"simulate_batch runs the compiled fixed-step methods ({', '.join(sorted(set(FIXED_METHODS)))}"
                         f"), not {method!r}; use simulate for adaptive methods", element="method")
    law = getattr(model, "torque_callback", None) if tau is None else tau
    t0, t_end = arg.time_span(t0, t_end)
    nsteps, h_used = fixed_step_count(t0, t_end, h, method)
    arg.fixed_budget(nsteps, h_used, max_steps, "compiled")
    tau = arg.real_forces(tau)
    energy = arg.flag(energy, "energy")
    for name, x in (("Q0", Q0), ("V0", V0)):
        if x is not None and np.ndim(x) > 2:
            raise ModelError(f"{name} must be (runs, n) or (n,), got an array of shape {np.shape(x)}", element=name)
    given = [name for name, x in (("t_eval", t_eval), ("n_out", n_out), ("output_every", output_every))
             if x is not None]
    rows = arg.output_count(nsteps, None if t_eval is None else arg.output_times(t_eval, t0, t_end),
                            None if n_out is None else arg.whole(n_out, "n_out", 2),
                            None if output_every is None else arg.whole(output_every, "output_every", 1))
    if params is not None and not isinstance(params, dict):
        raise ModelError(f"params must be a dict of per-run arrays, got {type(params).__name__}", element="params")
    leading = [(name, np.shape(x)[0]) for name, x, n in (("Q0", Q0, model.nq), ("V0", V0, model.nv))
               if x is not None and np.ndim(x) == 2]
    leading += [(f"params['{k}']", np.shape(x)[0]) for k, x in (params or {}).items() if np.ndim(x) == 2]
    if not leading:
        raise ModelError("simulate_batch needs the runs as the first axis of Q0 (runs, nq), V0 (runs, nv) or the "
                         "params arrays", element="Q0")
    runs = leading[0][1]
    if runs == 0:
        raise ModelError(f"simulate_batch needs a run, {leading[0][0]} has 0 rows", element=leading[0][0].split("[")[0])
    for name, r in leading[1:]:
        if r != runs:
            raise ModelError(f"{name} has {r} runs, {leading[0][0]} has {runs}", element=name.split("[")[0])
    arg.check_output_size(rows, model.nq + model.nv + 3, given[0] if given else "output_every", runs=runs)
    save = output_steps(nsteps, h_used, t0, t_eval, n_out, output_every)
    Q = arg.batch_states(model, model.neutral() if Q0 is None else Q0, model.nq, "Q0", runs)
    V = arg.batch_states(model, np.zeros(model.nv) if V0 is None else V0, model.nv, "V0", runs)
    python_law = callable(law) and not is_compiled_torque(law)
    why = needs_python(model, python_law, contact)
    if why is not None:   # Python at every step: each run through simulate (integrate/run_by_run.py)
        return run_by_run(simulate, BatchResult, why, model, Q, V, t0, t_end, method, h, params, t_eval, n_out,
                          output_every, law, python_law, energy, contact, options)
    if contact is not None:   # the time-stepping model: each run its compiled loop, on threads
        if str(method).upper() not in ("RK4", "STEPPING"):
            raise ModelError(f"contact='stepping' makes its own steps (semi-implicit Euler); method {method!r} does "
                             "not apply: give h only", element="method")
        *arrays, contacts = stepping_batch(model, Q, V, t0, t_end, h, t_eval, n_out, output_every, tau, energy,
                                           params, options)
        batch = BatchResult(*arrays, model)
        batch.contacts = contacts
        return batch
    if getattr(model, "unilateral", None):   # joint limits, latches, releases: each run across its switches
        *arrays, events, qn, vn = switching_batch(model, Q, V, t0, t_end, mkey, h, t_eval, n_out, output_every, tau,
                                                  energy, params)
        batch = BatchResult(*arrays, model)
        batch.events, batch.q_names, batch.v_names = events, qn, vn
        return batch
    refuse_general_joints(model, "simulate_batch (one compiled loop for all runs)")
    system = FORMULATIONS["tree"](model, Q[0] if runs else None, V[0] if runs else None, tau=tau, energy=energy)
    batch = system.batch(runs, params)
    X = np.concatenate([Q, V], axis=1)
    for x in X:
        system.project(x, system.params)  # normalise the quaternions, as simulate does with its x0
    import numba

    simd = None
    if lanes not in (None, True, False):
        raise ModelError(f"lanes must be None (where the model allows), True or False, got {shown(lanes)!r}",
                         element="lanes")
    if lanes is None or lanes:
        from multibody.integrate.fixed_step import METHODS
        from multibody.integrate.lanes import LANE_METHODS
        from multibody.kernels.lanes import lanes_supported
        from multibody.model.packing import joint_force_table
        from multibody.kernels.kinematics import F_MASS
        from multibody.model.controllers import ControllerTable

        why = lanes_supported(model)
        if why is None and is_compiled_torque(law):
            why = "a compiled torque law runs in the per-run loop"
        if why is None and METHODS[mkey] not in LANE_METHODS:
            why = f"method {method!r} is not one of RK2, HEUN, RK4, VERLET"
        if why is not None and lanes:
            raise ModelError(f"model '{model.name}' cannot run in SIMD lanes: {why} (lanes=None takes the per-run "
                             "loop then)", element="lanes")
        if why is None and system.run_params is not None:
            tau_runs, mass, gravity = batch
            mf = system.params.mf
            MG = np.concatenate([mass if mass.shape[0] else np.tile(mf[1:, F_MASS], (runs, 1)),
                                 gravity if gravity.shape[0] else np.tile(mf[0, :3], (runs, 1))], axis=1)
            TAU = tau_runs if tau_runs.shape[0] else np.tile(system.params.tau, (runs, 1))
            simd = (system.params.mi, mf, joint_force_table(system.params), TAU, MG,
                    ControllerTable(model.controllers, model.nv).arrays())
    cpu, wall = time.process_time(), time.perf_counter()
    t, XS, status, done, OBS = run_fixed_batch(system.rhs, X, t0, h_used, nsteps, system.params, batch,
                                               system.run_params, method=mkey, project=system.project, save=save,
                                               nsplit=system.nsplit, observe=system.observe, nobs=system.nobs,
                                               lanes=simd)
    nq = model.nq
    en = {}
    if energy:
        en = {"kinetic": OBS[:, :, 0].copy(), "potential": OBS[:, :, 1].copy()}
        en["total"] = en["kinetic"] + en["potential"]
    info = {"method": str(method), "model": getattr(model, "name", ""), "formulation": "tree", "h": h_used,
            "nsteps_requested": nsteps, "runs": runs, "threads": numba.get_num_threads(),
            "path": "compiled batch" if simd is None else "compiled lanes",
            "cpu_seconds": time.process_time() - cpu, "wall_seconds": time.perf_counter() - wall,
            "varied": sorted(params or {})}
    return BatchResult(t, np.ascontiguousarray(XS[:, :, :nq]), np.ascontiguousarray(XS[:, :, nq:]), en,
                       np.where(status == STATUS_OK, "success", "failed"), done, info, model)
