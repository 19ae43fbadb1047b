"""What every formulation hands to ``simulate``: :class:`OdeSystem`, and the registry of formulations.

A formulation turns a Model into a first-order system ``ẋ = f(t, x)`` for the integrators. It is a
factory ``factory(model, q0, v0, tau=None, energy=True, **options) -> OdeSystem`` registered under a name
with :func:`register_formulation`; ``simulate(model, ..., formulation=name, **options)`` looks it up in
:data:`FORMULATIONS`. Formulations never import ``multibody.simulation``: the data path goes one way
(Model → formulation → integrator → Result).

The options a factory accepts are read from its signature, so ``simulate`` can report a misspelt option
with the accepted names (:func:`formulation_options`), and ``help(multibody.simulate)`` lists every
registered formulation with its options and the first line of its docstring (:func:`describe_formulations`).
"""
import inspect
from dataclasses import dataclass, field

import numpy as np

from multibody.errors import ModelError
from multibody.integrate.fixed_step import no_project

__all__ = ["OdeSystem", "FORMULATIONS", "register_formulation", "formulation_options", "describe_formulations",
           "check_state"]

#: arguments every factory takes (not options of its own)
COMMON_ARGS = ("model", "q0", "v0", "tau", "energy")


@dataclass
class OdeSystem:
    """What a formulation hands to ``simulate``.

    ``x0``: initial state. ``rhs``/``project``/``params``: numba functions ``rhs(t, x, params, out)`` and
    ``project(x, params)`` for the compiled fixed-step loop (``rhs=None``: no compiled path). ``fun(t, x)``:
    the Python right-hand side (adaptive methods; the fixed-step Python loop when ``rhs`` is None or
    ``python_only``). ``project_py(t, x) -> x`` or None. ``nsplit``: number of position coordinates
    (VERLET). ``make_result(t, X, info) -> Result``. ``split(x) -> (q, v)`` for event functions.

    Optional, for the compiled loop (``integrate/rk_template.py``): ``observe(x, params, obs, k)`` records
    ``nobs`` numbers with each saved state (then ``make_result(t, X, info, obs=obs)`` receives them);
    ``run_params(params, batch, b)`` gives the parameters of run b of ``simulate_batch`` and ``batch(runs,
    params_dict)`` builds its ``batch`` argument (both None: the formulation runs no batches).
    """

    x0: np.ndarray
    fun: object
    make_result: object
    split: object
    rhs: object = None
    project: object = no_project
    params: tuple = ()
    project_py: object = None
    nsplit: int = 0
    python_only: bool = False
    info: dict = field(default_factory=dict)
    observe: object = None
    nobs: int = 0
    run_params: object = None
    batch: object = None


#: formulation name -> factory(model, q0, v0, tau=None, energy=True, **options) -> OdeSystem
FORMULATIONS = {}


def register_formulation(name, factory):
    """Make ``simulate(..., formulation=name)`` use ``factory`` (see :class:`OdeSystem`)."""
    FORMULATIONS[str(name)] = factory
    return factory


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
    q0 = model.neutral() if q0 is None else np.array(q0, dtype=float).reshape(-1)
    v0 = np.zeros(model.nv) if v0 is None else np.array(v0, dtype=float).reshape(-1)
    if q0.shape != (model.nq,):
        raise ModelError(f"q0 must have {model.nq} entries (model '{model.name}', nq={model.nq}), got {q0.shape[0]}",
                         element="q0")
    if v0.shape != (model.nv,):
        raise ModelError(f"v0 must have {model.nv} entries (model '{model.name}', nv={model.nv}), got {v0.shape[0]}",
                         element="v0")
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(v0))):
        raise ModelError(f"initial state of model '{model.name}' must be finite", element="q0/v0")
    return q0, v0
