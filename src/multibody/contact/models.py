"""Contact models, chosen by name: ``simulate(model, ..., contact="compliant" | "stepping", **parameters)``.

A contact model turns a Model with collision elements (``model.collisions``; ``multibody.model.collisions``) into
something ``simulate`` runs, on the tree's coordinates (q, v):

``"compliant"`` (``contact/compliant.py``)
    Hunt–Crossley normal forces and regularized Coulomb friction (``contact/compliant_forces.py``) added to the
    tree's right-hand side: an ODE for every method, adaptive or fixed-step (compiled loop). Smooth, so the
    adaptive methods control its error; stiff contact needs small steps, and friction holds a body on a slope
    only up to a creep of about the velocity scale.
``"stepping"`` (this module, ``contact/stepping_solver.py``)
    velocity-level time stepping: impulses in exact Coulomb cones, the contacts' gap kept closed at the end of
    each step (semi-implicit Euler, Moreau–Jean / Stewart–Trinkle). No contact parameters beyond friction: rigid,
    no penetration, sticking is sticking; first order in h, and impacts are perfectly inelastic.

Each model is a factory ``factory(model, q0, v0, tau=None, energy=True, **parameters)`` registered with
:func:`register_contact_model`; its parameters are read from its signature (:func:`contact_options`), so
``simulate`` reports a misspelt one. Both take ``contact_pairs`` (only these pairs of collision or body names
collide) and ``exclude`` (pairs that never collide); see ``multibody.contact.collision_sets.pack_collisions`` for the
default pairs. ``tau`` may be constant generalized forces (nv,), a Python callable ``tau(t, q, v) -> (nv,)``, or
a compiled torque law: a numba function ``law(t, q, v, out)`` that writes ``out`` (nv,), called inside the
compiled loops.

The Result carries ``result.contacts`` (:class:`multibody.result.Contacts`: per output time, the active contacts
with their pair, point, normal, normal and friction forces) and ``energy["dissipated"]``.
"""
import inspect
import time

import numpy as np
from numba.core.registry import CPUDispatcher

from multibody.data import default_data
from multibody.errors import IntegrationError, ModelError
from multibody.formulations.base import check_state
from multibody.formulations.tree import tree_energy, tree_params
from multibody.integrate import arguments as arg
from multibody.integrate.arguments import fixed_step_count, output_steps
from multibody.contact.stepping_loop import STEPPING_OK, SteppingSystem, run_stepping
from multibody.contact.detection import C_WIDTH
from multibody.contact.stepping_solver import (R_DIST, R_FN, R_FT, R_NORMAL, R_PAIR, R_POINT, R_WIDTH,
                                              AppliedForces, Geometry, Solver)
from multibody.contact.gjk import gjk_workspace
from multibody.contact.shapes import GW_WIDTH
from multibody.contact.collision_sets import pack_collisions
from multibody.result import Contacts, Result

__all__ = ["CONTACT_MODELS", "register_contact_model", "contact_options", "contact_system", "stepping_system",
           "contact_parameter",
           "contact_setup", "contacts_record", "torques"]

#: contact model name -> factory(model, q0, v0, tau=None, energy=True, **parameters)
CONTACT_MODELS = {}
#: the attribute of a Model that caches its packed collision sets (by filters; ``with_collisions`` drops it)
COLLISION_CACHE = "_multibody_collision_sets"
COMMON_ARGS = ("model", "q0", "v0", "tau", "energy")


def register_contact_model(name, factory):
    """Make ``simulate(..., contact=name)`` use ``factory``."""
    CONTACT_MODELS[str(name)] = factory
    return factory


def contact_options(name):
    """The parameters the contact model ``name`` accepts (besides model, q0, v0, tau, energy)."""
    return tuple(p for p in inspect.signature(CONTACT_MODELS[name]).parameters if p not in COMMON_ARGS)


def contact_system(name, model, q0, v0, tau, energy, formulation, options):
    """The system of contact model ``name`` (an ``OdeSystem`` or a ``SteppingSystem``), its options checked."""
    if name not in CONTACT_MODELS:
        raise ModelError(f"contact model {name!r} is unknown; registered: {', '.join(sorted(CONTACT_MODELS))}",
                         element="contact")
    if formulation != "tree":
        raise ModelError(f"contact={name!r} runs on the tree formulation's coordinates; formulation {formulation!r} "
                         "does not take contact yet", element="formulation")
    accepted = contact_options(name)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ModelError(f"contact model {name!r} has no parameter {', '.join(map(repr, unknown))}; it accepts: "
                         f"{', '.join(accepted)}", element=unknown[0])
    return CONTACT_MODELS[name](model, q0, v0, tau=tau, energy=energy, **options)


# ---- shared set-up ----------------------------------------------------------------------------------------------
def contact_parameter(value, name, allow_zero=False):
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"contact parameter {name} must be a number, got {value!r}", element=name) from None
    if not np.isfinite(x) or x < 0.0 or (x == 0.0 and not allow_zero):
        raise ModelError(f"contact parameter {name} must be {'>= 0' if allow_zero else '> 0'} and finite, got "
                         f"{value!r}", element=name)
    return x


def torques(model, tau):
    """``(constant (nv,), compiled law or None, Python callable or None)`` from ``simulate``'s ``tau`` (or the
    model's torque callback)."""
    nv = model.nv
    if tau is None:
        tau = model.torque_callback
    if tau is None:
        return np.zeros(nv), None, None
    if isinstance(tau, CPUDispatcher):
        return np.zeros(nv), tau, None
    if callable(tau):
        return np.zeros(nv), None, tau
    try:
        arr = np.array(tau, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        arr = None
    if arr is None or arr.shape != (nv,) or not np.all(np.isfinite(arr)):
        raise ModelError(f"tau must be {nv} finite numbers, a callable tau(t, q, v) or a compiled law(t, q, v, out) "
                         f"(model '{model.name}'), got {tau!r}", element="tau")
    return arr, None, None


def contact_setup(model, contact_pairs, exclude, what):
    """The packed collision set of ``model`` and the shared kernel arguments: ``(collision set, (mi, mf, work),
    Geometry, AppliedForces)`` (a workspace of its own; the packed arrays of ``data.default_data``); models contact
    cannot run yet are refused with a ``ModelError`` naming why."""
    if not getattr(model, "collisions", ()):
        raise ModelError(f"model '{model.name}' has no collision elements; add them (ModelBuilder.add_collision, "
                         "Model.with_collisions) to simulate contact", element="collisions")
    extra = [f"cut joint '{j.name}'" for j in model.cut_joints]
    extra += [f"constraint '{c.name}'" for c in model.constraints]
    if extra:
        raise ModelError(f"model '{model.name}' has {', '.join(extra)}: the {what} contact model runs on tree "
                         "coordinates only", element=extra[0])
    if model.base_motion is not None:
        raise ModelError(f"model '{model.name}' has a moving base: the {what} contact model needs a fixed ground",
                         element="base motion")
    data = default_data(model)
    if data.fill is not None:
        raise ModelError(f"model '{model.name}' has general joints: the {what} contact model does not take them",
                         element="general joints")
    cache = model.__dict__.setdefault(COLLISION_CACHE, {})   # packed once per model and filters (a cache only)
    key = (repr(contact_pairs), repr(exclude))
    cs = cache.get(key)
    if cs is None:
        cs = cache[key] = pack_collisions(model, contact_pairs, exclude)
    cap = max(cs.capacity, 1)
    geometry = Geometry(cs.gi, cs.gf, cs.verts, cs.pairs, np.zeros((cs.gi.shape[0], GW_WIDTH)),
                        np.zeros((cap, C_WIDTH)), gjk_workspace())
    forces = [np.ascontiguousarray(getattr(model, name), dtype=np.float64)
              for name in ("dof_stiffness", "dof_damping", "dof_rest", "dof_effort")]
    springs = np.ascontiguousarray(model.spring_k, dtype=np.float64)
    applied = int(bool(np.any(forces[0]) or np.any(forces[1]) or np.any(forces[3]) or springs.shape[0]))
    F = AppliedForces(applied, *forces, np.ascontiguousarray(model.spring_body, dtype=np.int64).reshape(-1, 2),
                      np.ascontiguousarray(model.spring_point, dtype=np.float64).reshape(-1, 2, 3), springs,
                      np.ascontiguousarray(model.spring_c, dtype=np.float64),
                      np.ascontiguousarray(model.spring_l0, dtype=np.float64),
                      np.zeros((model.nbodies + 1, 6)), np.zeros(model.nv))
    return cs, (data.mi, data.mf, np.zeros_like(data.work)), geometry, F


def contacts_record(cs, counts, records):
    """The :class:`multibody.result.Contacts` of the contact records (``stepping_solver.R_WIDTH`` columns) at each
    output: ``counts`` (n,), ``records`` (n, capacity, R_WIDTH)."""
    counts = np.asarray(counts, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    rows = np.concatenate([records[k, :counts[k]] for k in range(len(counts))]) if len(counts) else \
        np.zeros((0, R_WIDTH))
    pairs = [cs.pair_names(p) for p in range(cs.pairs.shape[0])]
    return Contacts(offsets, pairs, rows[:, R_PAIR].astype(np.int64), rows[:, R_POINT:R_POINT + 3],
                    rows[:, R_NORMAL:R_NORMAL + 3], rows[:, R_FN], rows[:, R_FT:R_FT + 3], rows[:, R_DIST])


# ---- the time-stepping model ------------------------------------------------------------------------------------
def stepping_system(model, q0, v0, tau=None, energy=True, margin=1e-3, tolerance=1e-10, iterations=200,
                    recovery=0.01, contact_pairs=None, exclude=None):
    """Velocity-level time stepping with exact Coulomb friction cones (``contact/stepping_solver.py``).

    ``margin`` (m): pairs closer than this (plus the distance their speeds cover in a step) enter each step's
    contact problem; ``tolerance``: the projected Gauss–Seidel sweeps stop when no impulse changes by more than
    this fraction of the largest; ``iterations``: at most this many sweeps per step; ``recovery`` (s): an
    overlap (a body started inside another) is undone in this time (at least a step). Needs ``h`` (the method is
    the model's own semi-implicit Euler step)."""
    q0, v0 = check_state(model, q0, v0)
    margin = contact_parameter(margin, "margin", allow_zero=True)
    tolerance = contact_parameter(tolerance, "tolerance")
    recovery = contact_parameter(recovery, "recovery", allow_zero=True)
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ModelError(f"contact parameter iterations must be a whole number >= 1, got {iterations!r}",
                         element="iterations")
    cs, arrays, G, F = contact_setup(model, contact_pairs, exclude, "stepping")
    nv = model.nv
    cap = max(cs.capacity, 1)
    S = Solver(np.zeros((nv, nv)), np.zeros((nv, nv)), np.zeros((3 * cap, nv)), np.zeros((3 * cap, nv)),
               np.zeros((3 * cap, 3 * cap)), np.zeros(3 * cap), np.zeros(3 * cap), np.zeros(nv), np.zeros(nv),
               np.zeros((0, 6)), np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.int64), np.zeros((cap, 4)),
               np.zeros((cap, R_WIDTH)), np.array([margin, tolerance, float(iterations), recovery]),
               np.zeros(2, dtype=np.int64))
    tau_const, law, callback = torques(model, tau)

    def make_result(t, Q, V, dissipated, counts, records, info):
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V, params=tree_params(model, data=default_data(model)))
            en = {"kinetic": T, "potential": Vp, "dissipated": dissipated}
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model, contacts=contacts_record(cs, counts, records))

    return SteppingSystem(q0=q0, v0=v0, params=(*arrays, G, F, S), tau=tau_const,
                          capacity=cs.capacity, make_result=make_result, law=law, callback=callback,
                          info={"formulation": "tree", "contact": "stepping", "contact_pairs": int(cs.pairs.shape[0]),
                                "torque_law": law is not None, "torque_callback": callback is not None})


register_contact_model("stepping", stepping_system)


def check_contact_run(model, checkpoint, events):
    """Refuse what a run with contact does not take yet (a ``ModelError`` naming it): checkpoints, events, the
    model's controller elements (their torques can be given as a compiled torque law, ``tau=``) and its joint
    stops, latches and releases (``multibody.model.unilateral``; a URDF read with ``limits=False`` has none)."""
    for name, value in (("checkpoint", checkpoint), ("events", events)):
        if value is not None:
            raise ModelError(f"{name}= is not available with contact yet", element=name)
    if getattr(model, "controllers", ()):
        raise ModelError(f"model '{model.name}': controller elements are not available with contact yet (give "
                         "their torques as a compiled torque law, tau=)", element="controllers")
    if getattr(model, "unilateral", None):
        raise ModelError(f"model '{model.name}': joint stops, latches and releases are not available with contact "
                         "yet (read a URDF with limits=False, or 'stops: false' in a model file, to keep its limits as "
                         "data)", element="unilateral")


def simulate_stepping(system, model, t0, t_end, method, h, t_eval, n_out, output_every, progress):
    """``simulate`` with the time-stepping contact model: its own semi-implicit Euler step of size ``h``
    (``contact/stepping_loop.py``); the outputs on the step grid as for the fixed-step methods."""
    if str(method).upper() not in ("DOP853", "STEPPING"):
        raise ModelError(f"contact='stepping' makes its own steps (semi-implicit Euler); method {method!r} does not "
                         "apply: give h only", element="method")
    t0, t_end = arg.time_span(t0, t_end)
    nsteps, h_used = fixed_step_count(t0, t_end, h, "stepping")
    save = output_steps(nsteps, h_used, t0, t_eval, n_out, output_every)
    cpu, wall = time.process_time(), time.perf_counter()
    t, Q, V, D, counts, recs, status, done = run_stepping(system, t0, h_used, nsteps, save,
                                                          progress=bool(progress) or nsteps >= 1_000_000)
    info = {"method": "stepping", "model": model.name, **system.info, "h": h_used, "nsteps_requested": nsteps,
            "steps": int(done), "path": "python" if system.callback is not None else "compiled",
            "cpu_seconds": time.process_time() - cpu, "wall_seconds": time.perf_counter() - wall}
    if status != STEPPING_OK:
        reason = (f"the state became non-finite (NaN or inf) at step {done + 1} (t = {t0 + (done + 1) * h_used:.17g})")
        info.update(status="failed", message=reason)
        raise IntegrationError(f"stepping integration of model '{model.name}' failed: {reason}",
                               result=system.make_result(t, Q, V, D, counts, recs, info), reason=reason)
    info.update(status="success", message="completed")
    return system.make_result(t, Q, V, D, counts, recs, info)
