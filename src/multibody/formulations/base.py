"""What every formulation hands to ``simulate``: :class:`OdeSystem`, and the registry of formulations.

A formulation turns a Model into a first-order system ``ẋ = f(t, x)`` for the integrators. It is a
factory ``factory(model, q0, v0, tau=None, energy=True, **options) -> OdeSystem`` registered under a name
with :func:`register_formulation`; ``simulate(model, ..., formulation=name, **options)`` looks it up in
:data:`FORMULATIONS`. Formulations never import ``multibody.simulation``: the data path goes one way
(Model → formulation → integrator → Result).

The options a factory accepts are read from its signature, so ``simulate`` can report a misspelt option
with the accepted names (:func:`formulation_options`), and ``help(multibody.simulate)`` lists every
registered formulation with its options and the first line of its docstring (:func:`describe_formulations`).

A formulation declares, when it registers, what it takes beyond a tree of built-in joints on a fixed ground
(:data:`FEATURES`: a moving base, general joints, batches, controllers); ``simulate`` asks the registry
(:func:`check_supported`, :func:`supports`) instead of naming formulations.
"""
import inspect
from dataclasses import dataclass, field

import numpy as np

from multibody.model.data import refuse_general_joints
from multibody.errors import ModelError, shown
from multibody.integrate.adaptive import nonfinite_entries
from multibody.integrate.fixed_step import no_project

__all__ = ["OdeSystem", "FORMULATIONS", "FEATURES", "register_formulation", "supports", "supporting",
           "check_supported", "formulation_options", "describe_formulations", "check_state"]

#: arguments every factory takes (not options of its own)
COMMON_ARGS = ("model", "q0", "v0", "tau", "energy")


@dataclass
class OdeSystem:
    """What a formulation hands to ``simulate``.

    ``x0``: initial state. ``rhs``/``project``/``params``: numba functions ``rhs(t, x, params, out)`` and
    ``project(x, params)`` for the compiled fixed-step loop (``rhs=None``: no compiled path). ``fun(t, x)``:
    the Python right-hand side (adaptive methods; the fixed-step Python loop when ``rhs`` is None or
    ``python_only``). ``project_py(t, x) -> x`` or None: after every step; ``project_output(t, x) -> x``: for
    the interpolated outputs and events of adaptive runs (None: ``project_py``), without the per-step checks.
    ``on_step(t, x)`` or None: after every accepted step of the Python loops (adaptive, and fixed-step when
    ``python_only`` or ``rhs`` is None) with the state the run goes on from, e.g. to follow joint angles through
    whole turns between sparse outputs. ``nsplit``: number of position coordinates
    (VERLET). ``make_result(t, X, info) -> Result``. ``split(x) -> (q, v)`` for event functions; ``split_t(t, x)
    -> (q, v)`` in its place for a state that holds part of (q, v) only (prescribed coordinates).

    Optional, for the compiled loop (``integrate/rk_template.py``): ``observe(x, params, obs, k)`` records
    ``nobs`` numbers with each saved state (then ``make_result(t, X, info, obs=obs)`` receives them);
    ``run_params(params, batch, b)`` gives the parameters of run b of ``simulate_batch`` and ``batch(runs,
    params_dict)`` builds its ``batch`` argument (both None: the formulation runs no batches).
    ``diagnose() -> (reason, element)`` or None: after a failed run, what in its compiled code failed it when the
    formulation can name it (a compiled torque law that raised or returned non-finite torques), which the run's
    ``IntegrationError`` then reports in place of its generic reason.
    """

    x0: np.ndarray
    fun: object
    make_result: object
    split: object
    rhs: object = None
    project: object = no_project
    params: tuple = ()
    project_py: object = None
    project_output: object = None
    nsplit: int = 0
    python_only: bool = False
    info: dict = field(default_factory=dict)
    observe: object = None
    nobs: int = 0
    run_params: object = None
    batch: object = None
    split_t: object = None
    on_step: object = None
    diagnose: object = None


#: formulation name -> factory(model, q0, v0, tau=None, energy=True, **options) -> OdeSystem
FORMULATIONS = {}

#: what a formulation may take beyond a tree of built-in joints on a fixed ground, declared when it registers
FEATURES = {
    "moving base": "a model whose ground moves in a prescribed way (model.base_motion), from any t0",
    "moving base from t = 0": "a model whose ground moves in a prescribed way, in runs that start at t0 = 0",
    "general joints": "GeneralJoint (seed 001 §3.4.2): kinematics from generated code before each evaluation",
    "batch": "simulate_batch: many runs in one compiled parallel loop (OdeSystem.run_params and batch)",
    "controllers": "the model's controllers (model.controllers: JointPD, ComputedTorque) in its right-hand side",
}

#: formulation name -> the names of :data:`FEATURES` it declared
SUPPORTS = {}


def callback_forces(callback, t, q, v, nv, model_name):
    """The generalized forces ``callback(t, q, v)`` returns, checked the same way in every formulation: an
    array of ``nv`` numbers (shape (nv,)); anything else is a ``ModelError`` naming the model and the time.
    ``q`` and ``v`` are given as copies, so the callback cannot change the state. A numba function
    ``callback(t, q, v, out)`` (the compiled torque law of ``formulations/tree_control.py``, which the 'tree'
    formulation calls in its compiled loop) is called from Python here, with out zeroed."""
    if getattr(callback, "py_func", None) is not None and hasattr(callback, "signatures"):   # a numba dispatcher
        out = np.zeros(nv)
        callback(float(t), np.array(q, dtype=np.float64), np.array(v, dtype=np.float64), out)
    else:
        out = callback(t, q.copy(), v.copy())
    where = f"torque callback of model '{model_name}'"
    if out is None:
        raise ModelError(f"{where} returned None at t = {t}, expected an array of nv = {nv} numbers",
                         element="torque callback")
    if np.iscomplexobj(out):   # numpy would drop the imaginary part with a warning only
        raise ModelError(f"{where} returned complex values at t = {t}, expected nv = {nv} real numbers",
                         element="torque callback")
    try:
        arr = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{where} returned {type(out).__name__} at t = {t}, expected an array of nv = {nv} "
                         "numbers", element="torque callback") from None
    if arr.shape != (nv,):
        raise ModelError(f"{where} returned {arr.size} values of shape {arr.shape} at t = {t}, expected nv = {nv} "
                         f"values of shape ({nv},)", element="torque callback")
    return arr


def register_formulation(name, factory, supports=()):
    """Make ``simulate(..., formulation=name)`` use ``factory`` (see :class:`OdeSystem`); ``supports``: the
    names of :data:`FEATURES` it takes (a ``ModelError`` names an unknown one)."""
    unknown = sorted(set(supports) - set(FEATURES))
    if unknown:
        raise ModelError(f"formulation {name!r}: unknown feature(s) {', '.join(map(repr, unknown))}; features: "
                         f"{', '.join(map(repr, FEATURES))}", element="supports")
    FORMULATIONS[str(name)] = factory
    SUPPORTS[str(name)] = frozenset(supports)
    return factory


def supports(name, feature):
    """Whether the registered formulation ``name`` declared ``feature`` (a key of :data:`FEATURES`)."""
    return feature in SUPPORTS.get(name, ())


def supporting(feature):
    """The names of the registered formulations that declared ``feature``, sorted."""
    return sorted(name for name in FORMULATIONS if supports(name, feature))


def _names(names):
    quoted = [repr(n) for n in names]
    return " and ".join(quoted) if len(quoted) <= 2 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def check_supported(name, model, t0=0.0):
    """A ``ModelError`` when the formulation ``name`` does not take ``model`` as it is: a moving base
    (``model.base_motion``) it did not declare, or one from a start ``t0`` other than 0 when it declared it from
    t = 0 only, or general joints or controllers it did not declare (naming the first of them)."""
    mname = getattr(model, "name", "")
    if getattr(model, "base_motion", None) is not None:
        if not (supports(name, "moving base") or supports(name, "moving base from t = 0")):
            able = supporting("moving base") + supporting("moving base from t = 0")
            raise ModelError(f"model '{mname}' has a moving base (base motion): the {_names(sorted(able))} "
                             f"formulations integrate it; formulation {name!r} does not support it yet",
                             element="base motion")
        if not supports(name, "moving base") and t0 != 0.0:
            raise ModelError(f"model '{mname}' has a moving base (base motion): the {name!r} formulation forms the "
                             f"initial state with the base at t = 0 (it takes a moving base from t = 0 only); got "
                             f"t0 = {t0}", element="t0")
    if not supports(name, "general joints"):
        refuse_general_joints(model, f"the {name!r} formulation")
    controllers = getattr(model, "controllers", ())
    if controllers and not supports(name, "controllers"):
        names = ", ".join(c.name for c in controllers)
        raise ModelError(f"model '{mname}' has controllers ({names}): the {_names(supporting('controllers'))} "
                         f"formulation evaluates them; formulation {name!r} does not",
                         element=f"controller '{controllers[0].name}'")


def formulation_options(name):
    """The option names the formulation ``name`` accepts besides model, q0, v0, tau and energy (None when its
    factory takes arbitrary keywords)."""
    sig = inspect.signature(FORMULATIONS[name])
    if any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    return tuple(p for p in sig.parameters if p not in COMMON_ARGS)


def describe_formulations():
    """One paragraph per registered formulation: its name, the first line of its docstring, its options."""
    lines = []
    for name in sorted(FORMULATIONS):
        doc = inspect.getdoc(FORMULATIONS[name]) or ""
        first = doc.split("\n\n")[0].replace("\n", " ")
        opts = formulation_options(name)
        sig = inspect.signature(FORMULATIONS[name])
        shown = "any" if opts is None else ", ".join(
            f"{o}={sig.parameters[o].default!r}" for o in opts) or "none"
        lines.append(f"``{name}``: {first}\n    options: {shown}")
    return "\n".join(lines)


def check_state(model, q0, v0):
    """``(q0, v0)`` as float vectors of the model's sizes (defaults: neutral configuration, rest), or a
    ``ModelError`` naming what is wrong."""
    def vector(x, name):
        try:
            return np.array(x, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ModelError(f"{name} must be an array of numbers (model '{model.name}'), got {shown(x)!r}",
                             element=name) from None

    q0 = model.neutral() if q0 is None else vector(q0, "q0")
    v0 = np.zeros(model.nv) if v0 is None else vector(v0, "v0")
    if q0.shape != (model.nq,):
        raise ModelError(f"q0 must have {model.nq} entries (model '{model.name}', nq={model.nq}), got {q0.shape[0]}",
                         element="q0")
    if v0.shape != (model.nv,):
        raise ModelError(f"v0 must have {model.nv} entries (model '{model.name}', nv={model.nv}), got {v0.shape[0]}",
                         element="v0")
    for name, x, names in (("q0", q0, model.coordinate_names), ("v0", v0, model.velocity_names)):
        if not np.all(np.isfinite(x)):
            entries = nonfinite_entries(x, [f"{name} '{n}'" for n in names()], at_most=1)
            raise ModelError(f"{name} must be finite (model '{model.name}'): {entries}", element=name)
    model.check_quaternions(q0, "q0")
    return q0, v0


#: the largest change (rad or m, per coordinate) that making an initial state consistent may make to q0 without
#: being asked: beyond it q0 is a different configuration, not a rounded one
MAX_INITIAL_CORRECTION = 0.1

#: the position residual below which a Newton projection onto the constraints polishes to round-off: it goes on
#: until a step no longer halves the residual. Near a singular configuration (a row of the constraint Jacobian of
#: size σ → 0) a residual f leaves the coordinates up to f/σ off the constraints along the extra degree of
#: freedom, which the equations of motion then amplify: a fixed residual is no bound on the distance.
POLISH = 1e-8


def initial_correction(model, q0, q1, v0, v1, max_correction=MAX_INITIAL_CORRECTION, constraints=()):
    """How far the projection onto the constraints moved the initial state: a dict for ``result.info``
    (``position_correction``: max |Δq| per coordinate in the tangent space, rad or m; ``velocity_correction``;
    ``most_moved``: the coordinate). A ``ConstraintError`` naming the coordinate when the positions moved by more
    than ``max_correction`` (None: accept any)."""
    from multibody.errors import ConstraintError

    dq = np.abs(model.difference(q0, q1))
    dv = np.abs(np.asarray(v1, float) - np.asarray(v0, float))
    names = model.velocity_names()
    k = int(np.argmax(dq)) if dq.size else 0
    info = {"position_correction": float(dq.max(initial=0.0)), "velocity_correction": float(dv.max(initial=0.0)),
            "most_moved": names[k] if dq.size else None}
    if max_correction is not None and info["position_correction"] > float(max_correction):
        raise ConstraintError(f"model '{model.name}': q0 violates the constraints; making it consistent moves "
                              f"'{names[k]}' by {dq[k]:.3g} (more than max_correction = {float(max_correction):g}): "
                              f"give a q0 on the constraints (e.g. from a closed-loop assembly), or pass "
                              f"max_correction=None to accept the projection", joints=list(constraints))
    return info

