"""Model files: a YAML or JSON description of everything the ``ModelBuilder`` expresses, and back.

A model file is data; the JSON Schema ``multibody/io/model.schema.json`` describes every key::

    name: pendulum
    gravity: [0, 0, -9.81]
    base_motion: {kind: harmonic, axis: [1, 0, 0], amplitude: 0.01, omega: 30}   # optional: a moving ground
    bodies:
      - {name: rod, mass: 1.0, com: [0, 0, -0.5], inertia: [0.1, 0.1, 0.01]}
    joints:
      - {name: hinge, type: revolute, axis: [0, 1, 0], parent: ground, child: rod, damping: 0.01}
    initial: {q: {hinge: 0.5}}
    simulation: {method: DOP853, t_end: 5, rtol: 1e-10}

Loading goes through the public ``ModelBuilder`` (every check of the builder applies) after the schema: the
loader collects every problem with its path in the file (``bodies[3].inertia: ...``) and raises one
:class:`~multibody.io.documents.ModelFileError` listing them all. Time-varying efforts and constraint
functions are expressions checked by :mod:`multibody.io.expressions` (never evaluated as Python).

Saving writes the Model's own description (``model.bodies``, ``model.joints``, ``model.cut_joints``,
``model.springs``, ``model.constraints``, the joint spring-damper arrays, ``model.metadata``), so that
``load(save(model))`` builds the same packed arrays. What a file cannot hold is refused with a
``ModelError`` naming it: a symbolic model, a Python torque callback, a ``UserConstraint`` or
``VelocityConstraint`` holding Python functions (those made from expressions are saved), a base motion given by
Python functions (the kinds ``harmonic`` and ``rotation`` are saved as data).

The file's words are in ``vocabulary.py``, the reading in ``loader.py``, the writing in ``writer.py``; this
module holds the loaded file (:class:`ModelFile`) and the public functions.
"""
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from multibody.errors import InertiaWarning, ModelError, shown
from multibody.io.documents import ModelFileError, Problem, parse_text, read_document, schema_problems
from multibody.io.loader import ModelLoader

__all__ = ["ModelFile", "load", "load_model", "load_text", "validate_file", "model_from_dict"]


@dataclass
class ModelFile:
    """A loaded model file: the ``model``, the initial state ``q0``, ``v0`` (defaults: neutral, at rest) and the
    ``simulation`` settings (keys of ``multibody.simulate``: formulation, method, t_end, h, rtol, atol, n_out,
    contact, and the formulation's or the contact model's ``options``)."""

    model: object
    q0: np.ndarray
    v0: np.ndarray
    simulation: dict = field(default_factory=dict)
    source: str = None

    def settings(self, **overrides):
        """The keyword arguments of ``multibody.simulate`` for this file, ``overrides`` (not None) replacing the
        file's values; the formulation's options are flattened in."""
        s = {k: v for k, v in self.simulation.items() if k != "options"}
        opts = dict(self.simulation.get("options", {}))
        for k, v in overrides.items():
            if v is not None:
                s[k] = v
        if "t_end" not in s:
            raise ModelError(f"{self.source or 'model file'}: simulation.t_end is not given (set it in the file or "
                             "pass it)", element="simulation.t_end")
        return {**s, **opts}


def inertia_policy(strict, repair):
    """The inertia policy the readers' ``strict`` and ``repair`` ask for (None: the file's own)."""
    if strict and repair:
        raise ModelError("strict=True refuses the inertias that repair=True would move: choose one", element="strict")
    return "refuse" if strict else "repair" if repair else None


def load_data(data, lines, problems, source, inertia=None, limits=True):
    problems = list(problems)
    if isinstance(data, dict):   # values already reported (an unsafe YAML tag: null now) are not reported again
        seen = [p.path for p in problems]
        problems += [p for p in schema_problems(data, lines)
                     if not any(p.path == s or p.path.startswith(s + ".") or p.path.startswith(s + "[")
                                for s in seen)]
    loader = ModelLoader(data, lines, problems, inertia, stops=limits)
    model = loader.build() if isinstance(data, dict) else None
    q0 = v0 = None
    sim = {}
    if model is not None:
        with loader.element("initial"):
            init = data.get("initial") or {}
            q0 = loader.state(model, init.get("q"), "initial.q", "q")
            v0 = loader.state(model, init.get("v"), "initial.v", "v")
    if isinstance(data, dict) and isinstance(data.get("simulation"), dict):
        sim = loader.simulation(data["simulation"])
    if loader.problems or model is None:
        probs = loader.problems or [Problem("", "the model could not be built")]
        raise ModelFileError(sorted(dict.fromkeys(probs), key=lambda p: (p.line or 0, p.path)), source)
    notes = [f"body '{b.name}': {b.inertia_note}" for b in model.bodies if b.inertia_note]
    if notes:
        what = "kept as written" if loader.builder.inertia == "warn" else "moved to the nearest physical ones"
        warnings.warn(InertiaWarning(f"{source}: {len(notes)} inertia{'s' * (len(notes) > 1)} that no body has, "
                                     f"{what}: " + "; ".join(notes)), stacklevel=3)
    return ModelFile(model, q0, v0, sim, source)


def model_from_dict(data, source="<data>", *, strict=False, repair=False):
    """A :class:`ModelFile` from the data of a model file (a dict as ``yaml.safe_load`` gives it)."""
    return load_data(data, {}, [] if isinstance(data, dict) else [Problem("", "a model file is a mapping")], source,
                      inertia_policy(strict, repair))


def load(path, *, strict=False, repair=False, limits=True):
    """Load a YAML or JSON model file: a :class:`ModelFile` (model, q0, v0, simulation settings). Every problem of
    the file is reported at once, with its path, in a :class:`~multibody.io.documents.ModelFileError`. Inertias
    that no body has follow the file's ``inertia_check`` (default: refused); ``strict=True`` refuses them whatever
    the file says, ``repair=True`` moves each to the nearest physical one (``multibody.model.inertia``).
    ``limits=False`` keeps the joints' limits as data only, no end stops (as ``stops: false`` on each joint; their
    restitution goes with them)."""
    data, lines, problems = read_document(path)
    return load_data(data, lines, problems, str(path), inertia_policy(strict, repair), limits)


def load_text(text, suffix=".yaml", source="<text>", *, strict=False, repair=False):
    """A :class:`ModelFile` from the text of a model file."""
    data, lines, problems = parse_text(text, suffix)
    return load_data(data, lines, problems, source, inertia_policy(strict, repair))


def load_model(path, floating_base=False, *, strict=False, repair=False, package_dirs=None, mimic=False,
               limits=True):
    """The Model of a file, by extension: ``.yaml``/``.yml``/``.json`` model files, ``.urdf`` robots
    (``floating_base=True`` adds a free joint at the root link, ``package_dirs`` locate its meshes, ``mimic=True``
    makes its mimic joints constraints: see ``multibody.io.urdf``; model files say these themselves), ``.xml`` MuJoCo models
    (MJCF, ``multibody.io.mjcf``).
    ``strict=True`` refuses every inertia that no body has, ``repair=True`` moves each to the nearest physical one.
    ``limits=False`` (every format) keeps the joints' limits as data only: no end stops, so that a robot's runs
    take the fast paths of a model without switches (``simulate_batch``'s lanes)."""
    if not isinstance(limits, (bool, np.bool_)):
        raise ModelError(f"limits must be True or False, got {shown(limits)!r}", element="limits")
    suffix = Path(path).suffix.lower()
    if suffix == ".urdf":
        from multibody.io.urdf import load_urdf

        return load_urdf(path, floating_base=floating_base, strict=strict, repair=repair, package_dirs=package_dirs,
                         mimic=mimic, limits=bool(limits))
    if suffix == ".xml":
        from multibody.io.mjcf import load_mjcf

        for key, value in (("floating_base", floating_base), ("package_dirs", package_dirs), ("mimic", mimic)):
            if value:
                raise ModelError(f"'{path}': {key} applies to URDF files; an MJCF file says it itself (a free joint, "
                                 "its meshdir, equality constraints)", element=key)
        return load_mjcf(path, limits=bool(limits), strict=strict, repair=repair)
    for key, value in (("floating_base", floating_base), ("package_dirs", package_dirs), ("mimic", mimic)):
        if value:
            raise ModelError(f"'{path}': {key} applies to URDF files; a model file says it itself (a free joint at "
                             "the root, mesh paths, mimic constraints)", element=key)
    return load(path, strict=strict, repair=repair, limits=bool(limits)).model


def validate_file(path, *, strict=False):
    """Every problem of a model file (YAML, JSON, URDF or MJCF) as a list of :class:`Problem` (empty: valid);
    ``strict=True`` counts every inertia that no body has as a problem."""
    try:
        if Path(path).suffix.lower() in (".urdf", ".xml"):
            load_model(path, strict=strict)
        else:
            load(path, strict=strict)
    except ModelFileError as exc:
        return exc.problems
    except ModelError as exc:
        return [Problem(getattr(exc, "element", "") or "", str(exc))]
    return []
