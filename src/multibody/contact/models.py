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
import functools
import inspect
import warnings

import numpy as np
from numba.core.registry import CPUDispatcher

from multibody.model.data import default_data
from multibody.kernels.packing import packed_paths
from multibody.errors import ConvergenceWarning, ModelError, ModelWarning, shown
from multibody.formulations.base import check_state
from multibody.integrate.arguments import fixed_step_count, time_span
from multibody.formulations.constrained import ConstrainedTree, consistent_state, constraint_residuals
from multibody.formulations.tree_control import PythonTorque, controls_tuple
from multibody.rows.constraint_rows import ConstraintRows, make_work
from multibody.rows.solver import ST_FIRST, ST_MOST, ST_STEPS, ST_UNCONVERGED, ST_WORST, row_solver
from multibody.rows.unit_rows import unit_row_count, unit_rows
from multibody.formulations.tree_rhs import tree_energy
from multibody.model.packing import tree_params
from multibody.contact.stepping_loop import Prescribed, SteppingParams, SteppingSystem
from multibody.contact.stepping_structures import check_separations
from multibody.kernels.general_joint import compile_general_joints, fill_address
from multibody.kernels.kinematics import BASE_WIDTH
from multibody.contact.detection import C_WIDTH
from multibody.contact.stepping_solver import (N_PYTHON, R_DIST, R_FN, R_FT, R_NORMAL, R_PAIR, R_POINT, R_WIDTH,
                                               SLOP, Geometry, Solver, deepest_overlap)
from multibody.contact.gjk import gjk_workspace
from multibody.contact.shapes import GW_WIDTH
from multibody.contact.collision_sets import pack_collisions
from multibody.result import Contacts, Result

__all__ = ["CONTACT_MODELS", "register_contact_model", "contact_options", "contact_system", "stepping_system",
           "time_stepping", "check_contact_run", "check_stepping_method", "contact_parameter", "contact_setup",
           "contacts_record", "torques", "solver_info", "warn_unconverged", "contact_potential", "state_writer",
           "prescribed_motion", "BASE_TABLE_ROWS"]

#: contact model name -> factory(model, q0, v0, tau=None, energy=True, **parameters)
CONTACT_MODELS = {}
#: the attribute of a Model that caches its packed collision sets (by filters; ``with_collisions`` drops it)
COLLISION_CACHE = "_multibody_collision_sets"
#: the steps whose base states a stepping run over a moving ground tables at once (its chunks have at most so many)
BASE_TABLE_ROWS = 1024
COMMON_ARGS = ("model", "q0", "v0", "tau", "energy")


def register_contact_model(name, factory):
    """Make ``simulate(..., contact=name)`` use ``factory``."""
    CONTACT_MODELS[str(name)] = factory
    return factory


def contact_options(name):
    """The parameters the contact model ``name`` accepts (besides model, q0, v0, tau, energy)."""
    return _options(CONTACT_MODELS[name])


@functools.lru_cache(maxsize=None)
def _options(factory):
    return tuple(p for p in inspect.signature(factory).parameters if p not in COMMON_ARGS)


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
        raise ModelError(f"contact parameter {name} must be a number, got {shown(value)!r}", element=name) from None
    if not np.isfinite(x) or x < 0.0 or (x == 0.0 and not allow_zero):
        raise ModelError(f"contact parameter {name} must be {'>= 0' if allow_zero else '> 0'} and finite, got "
                         f"{shown(value)!r}", element=name)
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
                         f"(model '{model.name}'), got {shown(tau)!r}", element="tau")
    return arr, None, None


def contact_setup(model, contact_pairs, exclude, what, tau_const=None, needs_collisions=True):
    """The packed collision set of ``model`` and the shared kernel arguments: ``(collision set, TreeParams,
    Geometry)`` (``model.packing.tree_params``: a workspace of its own, the packed arrays of
    ``data.default_data``, the constant generalized forces ``tau_const``); models contact cannot run yet are refused
    with a ``ModelError`` naming why. ``needs_collisions``: a model without collision elements is refused."""
    if needs_collisions and not getattr(model, "collisions", ()):
        raise ModelError(f"model '{model.name}' has no collision elements; add them (ModelBuilder.add_collision, "
                         "Model.with_collisions) to simulate contact", element="collisions")
    data = default_data(model)
    cache = model.__dict__.setdefault(COLLISION_CACHE, {})   # packed once per model and filters (a cache only)
    key = (repr(contact_pairs), repr(exclude))
    cs = cache.get(key)
    if cs is None:
        cs = cache[key] = pack_collisions(model, contact_pairs, exclude)
    cap = max(cs.capacity, 1)
    geometry = Geometry(cs.gi, cs.gf, cs.verts, cs.pairs, cs.pair_e, np.zeros((cs.gi.shape[0], GW_WIDTH)),
                        np.zeros((cap, C_WIDTH)), gjk_workspace())
    p = tree_params(model, tau_const, data)._replace(work=np.zeros_like(data.work))
    return cs, p, geometry


def prescribed_motion(model, nwork):
    """The ``stepping_loop.Prescribed`` motion of ``model``, whose workspaces have ``nwork`` floats: a table of
    ``BASE_TABLE_ROWS`` base blocks for a moving base (filled by ``SteppingSystem.write_base``; no rows for a fixed
    ground) and the address of the general joints' kinematics (``kernels.general_joint.fill_address``; 0 without
    them)."""
    data = default_data(model)
    rows = BASE_TABLE_ROWS if data.base_motion is not None else 0
    fill = 0 if data.fill is None else fill_address(compile_general_joints(model, data.mi), int(nwork))
    return Prescribed(np.zeros((rows, BASE_WIDTH)), fill)


def state_writer(model, works):
    """For a model with a moving base or general joints: ``write(t, q, v, h=None)``, which writes the base's state at t
    and the general joints' kinematics at (q, v, t) into each workspace of ``works`` before the kernels run there
    (``model.data.Data.set_time``, ``Data.fill``) — the Python step of a run that the compiled loops cannot make;
    None for a model with neither."""
    data = default_data(model)
    moving, fill = data.base_motion is not None, data.fill
    if not moving and fill is None:
        return None

    def write(t, q, v, h=None):
        for work in works:
            if moving:
                data.set_time(float(t), work)
            if fill is not None:
                fill(q, v, float(t), work)
    return write


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
                    recovery=0.01, restitution_velocity=1e-2, contact_pairs=None, exclude=None):
    """Velocity-level time stepping with exact Coulomb friction cones (``contact/stepping_solver.py``): one problem
    per step over the rows of the model's contacts, joint stops, latches, held coordinates, loops and constraints.

    ``margin`` (m): pairs closer than this (plus the distance their speeds cover in a step) enter each step's
    problem, and stops as near; ``tolerance``: each step's rows are solved to this residual relative to the largest
    impulse (``rows/solver.py``); ``iterations``: at most this many sweeps and Newton iterations per step (a step
    left above the tolerance is counted in ``result.info["solver"]`` and the run warns); ``recovery`` (s): an
    overlap (a body started inside another) is undone in this time (at least a step); ``restitution_velocity``
    (m/s or rad/s): impacts slower than this are plastic (a bouncing body comes to rest). Needs ``h`` (the method
    is the model's own semi-implicit Euler step). A model with constraints starts from (q0, v0) projected onto
    them (``result.info["initial_correction"]``)."""
    return time_stepping(model, q0, v0, tau, energy, margin, tolerance, iterations, recovery, restitution_velocity,
                         contact_pairs, exclude)


def time_stepping(model, q0, v0, tau, energy, margin, tolerance, iterations, recovery, restitution_velocity,
                  contact_pairs, exclude, law=None, name="stepping"):
    """The :class:`SteppingSystem` of :func:`stepping_system`; with ``law`` = (stiffness, exponent, damping) its
    contact normals are compliant rows (``rows/kinds.py``: the compliant model's implicit step, ``name``
    "compliant"), whose elastic energy the Result's potential energy holds."""
    q0, v0 = check_state(model, q0, v0)
    separate = [r.joint for r in model.unilateral.releases if r.mode == "separate"]
    if separate and law is not None:
        raise ModelError(f"model '{model.name}': joint '{separate[0]}' separates (a release with mode 'separate'), "
                         f"which changes the model's coordinates: contact={name!r} runs one structure (its releases "
                         "may unlock coordinates); use contact='stepping', which goes on in the new structure",
                         element=f"release '{separate[0]}'")
    torque = model.torque_callback if tau is None else tau
    check_separations(model, torque if callable(torque) else None)    # (contact/stepping_structures.py)
    settings = np.array([contact_parameter(margin, "margin", allow_zero=True), contact_parameter(tolerance, "tolerance"),
                         float(_whole(iterations, "iterations")), contact_parameter(recovery, "recovery", allow_zero=True),
                         contact_parameter(restitution_velocity, "restitution_velocity", allow_zero=True)])
    tau_const, torque_law, callback = torques(model, tau)
    cs, p, G = contact_setup(model, contact_pairs, exclude, name, tau_const, needs_collisions=False)
    info = {"formulation": "tree", "contact": name, "contact_pairs": int(cs.pairs.shape[0]),
            "torque_law": torque_law is not None, "torque_callback": callback is not None}
    if law is not None:
        info["implicit"] = True
    elif G.gi.shape[0] > 0 and state_writer(model, []) is None:    # (the kinematics at q0 need no state written)
        _initial_overlap(model, p, G, cs, q0, info, name, recovery)
    python = None
    if model.constraints:
        q0, v0, loops, python, info["initial_correction"] = _loop_rows(model, q0, v0)
    else:   # a workspace without rows: one compiled loop for runs with and without loops (the rows skipped at once)
        loops = make_work(model)
    # the controllers' tuple even without controllers (it then adds nothing): one compiled loop for runs with and
    # without them
    torque = None
    if callback is not None and python is None:     # the loop calls the callback (else the Python loop of steps)
        torque = PythonTorque(callback, model.nv, model.name)
    control = controls_tuple(model, p, torque_law if torque is None else torque)
    if model.controllers or torque_law is not None:
        info["controllers"] = [c.name for c in model.controllers]
    U = unit_rows(model, q0)
    nv = model.nv
    cap = max(cs.capacity, 1)
    npy = 0 if python is None else sum(c.nrows for c, _ in python.python)
    n = 3 * cap + unit_row_count(U) + loops.G.shape[0] + npy
    S = Solver(M=np.zeros((nv, nv)), L=np.zeros((nv, nv)), J=np.zeros((n, nv)), Y=np.zeros((nv, n)),
               W=np.zeros((n, n)), lam=np.zeros(n), b=np.zeros(n), vfree=np.zeros(nv), acc=np.zeros(nv),
               fext=np.zeros((0, 6)), kind=np.zeros(n, dtype=np.int64), gap=np.zeros(n), e=np.zeros(n),
               mu=np.zeros(n), key=np.zeros(n, dtype=np.int64), prev_key=np.zeros(n, dtype=np.int64),
               prev_lam=np.zeros((n, 4)), rec=np.zeros((cap, R_WIDTH)), settings=settings,
               count=np.zeros(7, dtype=np.int64), rs=row_solver(n, law), xg=np.zeros((max(npy, 1), nv)),
               xgap=np.zeros(max(npy, 1)), path=packed_paths(model),
               reach=np.zeros(n, dtype=np.int64), inv=np.zeros(nv))

    def make_result(t, Q, V, dissipated, counts, records, info):
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V, params=tree_params(model, data=default_data(model)), t=t)
            en = {"kinetic": T, "potential": Vp, "dissipated": dissipated}
            if law is not None:     # the contacts' elastic energy, which the impulses' work put there
                elastic = contact_potential(counts, records, *law)
                en["potential"] = Vp + elastic
                en["dissipated"] = dissipated - (elastic - elastic[0])
        residuals = constraint_residuals(loops_rows[0], t, Q, V) if loops_rows else None
        solves = solver_info(S.rs.stats)
        info.setdefault("solves", {})["step"] = solves
        warn_unconverged(solves, model.name, name, float(settings[1]))
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model, contacts=contacts_record(cs, counts, records),
                      residuals=residuals)

    loops_rows = [ConstraintRows(model)] if model.constraints else []
    motion = prescribed_motion(model, p.work.shape[0])
    if model.base_motion is not None or motion.fill:
        info["state_written"] = "moving base" if model.base_motion is not None else "general joints"

    def remake(other, q, v, tau_other):
        return time_stepping(other, q, v, tau_other, energy, margin, tolerance, iterations, recovery,
                             restitution_velocity, contact_pairs, exclude, law, name)

    return SteppingSystem(q0=q0, v0=v0, params=SteppingParams(p, G, S, U, loops, control, motion), tau=tau_const,
                          capacity=cs.capacity, make_result=make_result, callback=callback, info=info, model=model,
                          before_step=None if python is None else _with_python_rows(python, S),
                          pair_names=tuple(cs.pair_names(k) for k in range(cs.pairs.shape[0])), remake=remake,
                          torque=torque)


def _initial_overlap(model, p, G, cs, q0, info, name, recovery):
    """Say (a ``ModelWarning`` and ``info["initial_overlap"]``) when the initial state has bodies inside each other
    deeper than the solver's slop (``contact/stepping_solver.py``: pushed out at the position level)."""
    depth, pair = deepest_overlap(p, G, np.ascontiguousarray(q0, dtype=float))
    if depth < -SLOP:
        names = cs.pair_names(pair)
        info["initial_overlap"] = {"depth": -float(depth), "pair": list(names)}
        warnings.warn(f"model '{model.name}': the initial state has collision '{names[0]}' (body '{names[2]}') "
                      f"{-depth:.6g} m inside '{names[1]}' (body '{names[3]}'): contact={name!r} pushes such overlaps "
                      f"out over recovery = {recovery!r} s at the position level, without giving them speed "
                      "(result.info['initial_overlap'])", ModelWarning, stacklevel=7)


def solver_info(stats):
    """``result.info["solves"]["step"]`` of a run whose row solver gathered ``stats`` (``rows.solver.ST_*``), as the
    switching runs report their solves (``switching/convergence.py``): the steps solved, the most iterations one
    used, the worst residual of a step relative to its largest impulse, the steps left above the tolerance and the
    time of the first."""
    first = float(stats[ST_FIRST])
    return {"solves": int(stats[ST_STEPS]), "iterations": int(stats[ST_MOST]),
            "worst_residual": float(stats[ST_WORST]), "unconverged": int(stats[ST_UNCONVERGED]),
            "first_unconverged_t": first if stats[ST_UNCONVERGED] else None}


def warn_unconverged(solves, model_name, name, tolerance):
    """One ``ConvergenceWarning`` when some steps of a run ended above the solver's tolerance (``solves``:
    :func:`solver_info`)."""
    if solves["unconverged"]:
        warnings.warn(f"model '{model_name}': {solves['unconverged']} of {solves['solves']} steps of contact={name!r} "
                      f"stopped before converging, the first at t = {solves['first_unconverged_t']:.10g} (worst "
                      f"residual {solves['worst_residual']:.3g} of the largest impulse, tolerance {tolerance:.3g}, "
                      f"{solves['iterations']} iterations at most); the run went on from the last iterate "
                      "(result.info['solves']['step']; raise iterations= or loosen tolerance=)", ConvergenceWarning,
                      stacklevel=7)


def contact_potential(counts, records, stiffness, exponent, damping):
    """The elastic energy k δ^(p+1) / (p+1) of the compliant contacts at each output (δ = −distance of the records
    that penetrate)."""
    out = np.zeros(len(counts))
    for k, m in enumerate(counts):
        delta = np.maximum(-records[k, :m, R_DIST], 0.0)
        out[k] = float(np.sum(stiffness * delta ** (exponent + 1.0) / (exponent + 1.0)))
    return out


def _whole(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ModelError(f"contact parameter {name} must be a whole number >= 1, got {shown(value)!r}", element=name)
    return int(value)


def _loop_rows(model, q0, v0):
    """(q0, v0) projected onto the model's constraints (``formulations.constrained.consistent_state``: a
    ``ConstraintError`` when they cannot be met nearby), the compiled rows' workspace of the steps, the rows of the
    Python constraints (a ``ConstraintRows``, None without them) and how far the state moved."""
    ct = ConstrainedTree(model)
    q, v, correction = consistent_state(ct, q0, v0)
    python = ConstraintRows(model) if model.constraint_table.python else None
    return q, v, make_work(model), python, correction


def _with_python_rows(rows, S):
    """``write(t, q, v, h)`` before each step of size h: the rows of the Python constraints at (q, v, t) into
    ``S.xg``, ``S.xgap`` (``stepping_solver``: the constant c of ``G v⁺ + c = 0``, times h: a position row's residual
    plus h ∂f/∂t, a velocity row's h (g − G v))."""
    level = rows.level

    def write(t, q, v, h):
        m = rows.fill(q, v, t)
        w = rows.w
        i = 0
        for c, r0 in rows.python:
            for r in range(r0, r0 + c.nrows):
                Gv = float(w.G[r] @ v)
                S.xg[i] = w.G[r]
                S.xgap[i] = w.f[r] + h * (w.fd[r] - Gv) if level[r] == 2 else h * (w.f[r] - Gv)
                i += 1
        S.count[N_PYTHON] = i
        return m
    return write


register_contact_model("stepping", stepping_system)


def check_contact_run(model, contact, options=None, method=None, h=None, span=None):
    """Refuse what a run with the contact model ``contact`` (and its ``options``) does not take (a ``ModelError``
    naming it and why): the compliant model as a force in the tree's right-hand side does not take joint stops,
    latches and releases — switches of the structure, located as events — which the time-stepping steps take
    (contact='stepping', or the compliant model with implicit=True, solve stops and contacts as rows of one
    problem). With ``method`` given, the time-stepping models' own checks of ``method`` and ``h`` over ``span``
    (t0, t_end) too, before the run is set up (whose checks of the initial state would otherwise warn first)."""
    implicit = (options or {}).get("implicit") is True
    if method is not None and (contact == "stepping" or (contact == "compliant" and implicit)):
        check_stepping_method("contact='stepping'" if contact == "stepping" else "the implicit compliant model", method)
        fixed_step_count(*time_span(*span), h, "stepping")
    if contact != "compliant" or implicit:
        return
    if getattr(model, "unilateral", None):
        raise ModelError(f"model '{model.name}': joint stops, latches and releases with contact='compliant' (a force "
                         "law in the tree's right-hand side, without switches): use contact='stepping', or "
                         "contact='compliant' with implicit=True, whose steps solve stops and contacts together (or read "
                         "a URDF with limits=False)", element="unilateral")


def check_stepping_method(how, method):
    """The time-stepping models make their own steps (semi-implicit Euler): a ``method`` other than the default
    (DOP853) or ``"stepping"`` is a ``ModelError`` naming it; ``how`` names the model."""
    if str(method).upper() not in ("DOP853", "STEPPING"):
        raise ModelError(f"{how} makes its own steps (semi-implicit Euler); method {method!r} does not apply: give h "
                         "only", element="method")
