"""Writing a Model as a model file: :func:`model_to_dict` (the Model's own description, so that
``load(save(model))`` builds the same packed arrays) and :func:`save_model`; what a file cannot hold is refused with
a ``ModelError`` naming it."""
import math

import numpy as np

from multibody.errors import ModelError, shown
from multibody.files import as_path, writable_file, write_text
from multibody.io.documents import MAX_BYTES
from multibody.io.expression_callables import ExpressionMatrix, ExpressionTorque, ExpressionVector, velocity_names
from multibody.io.mimic import Mimic
from multibody.io.vocabulary import FORMAT, JOINT_NAMES, PLANES
from multibody.model import (GROUND, PointOnPlane, PointOnProfile, RollingDisc, RollingOnProfile, Universal,
                             UserConstraint, VelocityConstraint)
from multibody.model.beams import beam_parts
from multibody.model.loop_joints import LoopJoint
from multibody.model.inertia import inertia_defect

__all__ = ["model_to_dict", "HEADER", "save_model"]


def _num(x):
    """A Python float (int when integral and small) for a file: exact (repr) and plain."""
    x = float(x)
    return x


def _vec(a):
    return [_num(x) for x in np.asarray(a, dtype=float).ravel()]


def _placement_dict(P):
    out = {}
    if np.any(P.translation != 0):
        out["translation"] = _vec(P.translation)
    if not np.array_equal(P.rotation, np.eye(3)):
        out["rotation"] = [_vec(r) for r in P.rotation]
    return out


def _inertia(I):
    I = np.asarray(I, dtype=float)
    if not np.any(I):
        return None
    if np.array_equal(I, np.diag(np.diag(I))):
        return _vec(np.diag(I))
    return [_vec(r) for r in I]


def _per_dof(values):
    values = np.asarray(values, dtype=float)
    if not np.any(values):
        return None
    return _num(values[0]) if np.all(values == values[0]) else _vec(values)


def _profile_text(profile):
    """The polynomial ``h(x, z)`` of a Profile's terms (exact coefficients, repr)."""
    parts = []
    for i, j, c in profile.terms:
        i, j = int(i), int(j)
        mono = "*".join(([f"x**{i}" if i > 1 else "x"] if i else []) + ([f"z**{j}" if j > 1 else "z"] if j else []))
        text = repr(abs(float(c))) + (f"*{mono}" if mono else "")
        parts.append(("- " if c < 0 else "+ ") + text)
    s = " ".join(parts)
    return s[2:] if s.startswith("+ ") else "-" + s[2:]


def _plane(e1, e2):
    for name, (a, b) in PLANES.items():
        if np.array_equal(e1, a) and np.array_equal(e2, b):
            return name
    return [_vec(e1), _vec(e2)]


def _constraint_dict(c):
    d = {"name": c.name}
    if isinstance(c, PointOnPlane):
        d.update(type="point_on_plane", body=c.body, point=_vec(c.point), normal=_vec(c.normal),
                 origin=_vec(c.origin))
        if c.plane_body != GROUND:
            d["plane_body"] = c.plane_body
    elif isinstance(c, PointOnProfile):
        d.update(type="point_on_profile", body=c.body, profile={"h": _profile_text(c.profile)}, point=_vec(c.point),
                 plane=_plane(c.e1, c.e2), origin=_vec(c.origin))
    elif isinstance(c, RollingDisc):
        d.update(type="rolling_disc", body=c.body, radius=_num(c.radius), axis=_vec(c.axis), center=_vec(c.center),
                 normal=_vec(c.normal), origin=_vec(c.origin))
    elif isinstance(c, RollingOnProfile):
        d.update(type="rolling_on_profile", body=c.body, radius=_num(c.radius),
                 profile={"h": _profile_text(c.profile)}, center=_vec(c.center), plane=_plane(c.e1, c.e2),
                 origin=_vec(c.origin), x_range=_vec(c.x_range))
    elif isinstance(c, UserConstraint) and isinstance(c.f, Mimic):
        d.update(type="mimic", joint=c.f.joint, reference=c.f.reference, multiplier=c.f.multiplier, offset=c.f.offset)
    elif isinstance(c, UserConstraint) and isinstance(c.f, ExpressionVector) and c.jacobian is None:
        d.update(type="position", f=c.f.sources)
    elif isinstance(c, VelocityConstraint) and isinstance(c.jacobian, ExpressionMatrix) and (
            c.bias is None or isinstance(c.bias, ExpressionVector)):
        d.update(type="velocity", jacobian=c.jacobian.sources)
        if c.bias is not None:
            d["bias"] = c.bias.sources
    else:
        raise ModelError(f"{c.element} ({type(c).__name__}) holds Python functions, which a model file cannot hold; "
                         "write it with expressions (a position constraint's f, a velocity constraint's jacobian and "
                         "bias) or save the model without it", element=c.element)
    return d


def model_to_dict(model, q0=None, v0=None, simulation=None):
    """The data of a model file describing ``model`` (and optionally its initial state and simulation settings):
    what :func:`save_model` writes. ``ModelError`` for what a file cannot hold (see the module docstring)."""
    if model.symbolic:
        element, what, value = model.symbolic_element()
        raise ModelError(f"model '{model.name}' is symbolic ({element}: {what} = {value}); a model file holds "
                         "numbers: substitute values first", element=element)
    from multibody.model.data import refuse_general_joints

    refuse_general_joints(model, "a model file (it names the built-in joint types)")
    meta = {k: v for k, v in model.metadata.items()}
    limits = _plain(meta.pop("limits")) if meta.get("limits") else {}     # written with the joints
    d = {"format": FORMAT, "version": 1, "name": model.name, "gravity": _vec(model.gravity)}
    if getattr(model, "base_motion", None) is not None:
        d["base_motion"] = model.base_motion.to_data()
    if any(inertia_defect(b.mass, b.com, b.inertia) for b in model.bodies):
        d["inertia_check"] = "warn"     # the model keeps inertias that no body has (a URDF's, or inertia="warn")
    elastic = {p.name for beam in model.elastic for p in beam_parts(beam)}      # written as their beams
    elastic |= {p.joint_name for beam in model.elastic for p in beam_parts(beam) if p.joint_name}
    if model.elastic:
        for kind in ("beams", "cables"):
            entries = [_elastic_dict(beam) for beam in model.elastic if beam.kind == kind[:-1]]
            if entries:
                d[kind] = entries
    bodies = []
    for body in model.bodies:
        if body.name in elastic:
            continue
        e = {"name": body.name, "mass": _num(body.mass)}
        if np.any(body.com != 0):
            e["com"] = _vec(body.com)
        inertia = _inertia(body.inertia)
        if inertia is not None:
            e["inertia"] = inertia
        bodies.append(e)
    if bodies:
        d["bodies"] = bodies
    joints = []
    for j in list(model.joints[1:]) + list(model.cut_joints):
        if j.name in elastic:
            continue
        e = {"name": j.name, **_joint_type(j.joint)}
        e["parent"] = model.body_names[j.parent]
        e["child"] = model.body_names[j.child]
        place = _placement_dict(j.placement)
        if place:
            e["placement"] = place
        if j.is_cut:
            e["child_placement"] = _placement_dict(j.child_placement)
            e["cut"] = True
        elif not j.child_placement.is_identity(tol=0.0):
            e["child_placement"] = _placement_dict(j.child_placement)
        if not j.is_cut:
            for key, arr in (("stiffness", model.dof_stiffness), ("damping", model.dof_damping),
                             ("rest", model.dof_rest), ("effort", model.dof_effort), ("armature", model.dof_armature)):
                val = _per_dof(arr[j.v_slice])
                if val is not None:
                    e[key] = val
        if j.name in limits:
            e["limits"] = limits[j.name]
        _write_unilateral(e, model, j)
        joints.append(e)
    if joints:
        d["joints"] = joints
    if model.springs:
        d["springs"] = [{"name": s.name, "body_a": s.body_a, "point_a": _vec(s.point_a), "body_b": s.body_b,
                         "point_b": _vec(s.point_b), "stiffness": _num(s.stiffness), "damping": _num(s.damping),
                         "rest_length": _num(s.rest_length)} for s in model.springs]
    cons = [_constraint_dict(c) for c in model.constraints if not isinstance(c, LoopJoint)]
    if cons:
        d["constraints"] = cons
    _write_elements(d, model, elastic)
    if model.loads:
        d["loads"] = [_plain({"name": load.name, **load.as_dict()}) for load in model.loads]
    if model.controllers:
        d["controllers"] = [_plain({"name": c.name, **c.controller.as_dict()}) for c in model.controllers]
    tau = model.torque_callback
    if tau is not None:
        if not isinstance(tau, ExpressionTorque):
            raise ModelError(f"model '{model.name}': its torque callback {shown(tau)!r} is Python code, which a model file "
                             "cannot hold; write the efforts as expressions (joints[].effort, torque:) or save the "
                             "model without it", element="torque callback")
        _write_torque(d, model, tau)
    if q0 is not None or v0 is not None:
        d["initial"] = _initial(model, q0, v0)
    if simulation:
        d["simulation"] = _plain({k: v for k, v in simulation.items() if v is not None})
    if meta:
        d["metadata"] = _plain(meta)
    return d


def _write_unilateral(e, model, j):
    """The stops, restitution, latch and release of joint ``j`` into its entry ``e`` (one value or one per
    coordinate; ±inf where a coordinate has no stop on that side)."""
    u = model.unilateral
    coords = j.joint.coordinate_names
    lims = {lm.coordinate: lm for lm in u.limits if lm.joint == j.name}

    def per_coordinate(values):
        return _num(values[0]) if len(set(values)) == 1 else [_num(x) for x in values]

    if lims:
        lim = dict(e.get("limits", {}))
        for key, none in (("lower", -math.inf), ("upper", math.inf)):
            values = [getattr(lims[c], key) if c in lims else none for c in coords]
            if any(x != none for x in values):    # (a side without any stop is left out)
                lim[key] = per_coordinate(values)
        e["limits"] = lim
        e_values = [lims[c].restitution if c in lims else 0.0 for c in coords]
        if any(e_values):
            e["restitution"] = per_coordinate(e_values)
    elif "lower" in e.get("limits", {}) or "upper" in e.get("limits", {}):
        e["limits"] = dict(e["limits"], stops=False)     # limits kept as data only (e.g. load_urdf(limits=False))
    lats = {la.coordinate: la.value for la in u.latches if la.joint == j.name}
    if lats:
        e["latch"] = per_coordinate([lats.get(c, math.nan) for c in coords]) if len(lats) == len(coords) else \
            [_num(lats[c]) if c in lats else None for c in coords]
    rel = u.release_of(j.name)
    if rel is not None:
        e["release"] = _num(rel.at) if rel.mode == "separate" else {"at": _num(rel.at), "mode": rel.mode}


def _joint_type(joint):
    """A joint's type and axes as a file writes them."""
    e = {"type": JOINT_NAMES[type(joint)]}
    if isinstance(joint, Universal):
        e["axis1"], e["axis2"] = _vec(joint.axis1), _vec(joint.axis2)
    elif hasattr(joint, "axis"):
        e["axis"] = _vec(joint.axis)
    return e


def _elastic_dict(beam):
    """A beam or cable (``multibody.model.beams``) as its ``add_beam`` / ``add_cable`` arguments."""
    e = {"name": beam.name, "parent": beam.parent, "length": _num(beam.length), "segments": beam.segments,
         "mass_per_length": _num(beam.mass_per_length)}
    bending = [None if x is None else _num(x) for x in (beam.EIy, beam.EIz)]
    if beam.kind == "cable":
        if beam.planar:
            e["planar"] = True
        if any(bending):
            e["EI"] = bending[0] if beam.planar or bending[0] == bending[1] else bending
    else:
        e["EI"] = bending[0] if bending[0] == bending[1] else bending
        e["GJ"] = None if beam.GJ is None else _num(beam.GJ)
    if beam.EA is not None:
        e["EA"] = _num(beam.EA)
    if any(beam.inertia):
        e["inertia_per_length"] = _vec(beam.inertia)
    if beam.damping:
        e["damping"] = _num(beam.damping)
    for key in ("placement", "tip_placement"):
        place = getattr(beam, key)
        if place is not None and _placement_dict(place):
            e[key] = _placement_dict(place)
    if beam.root is not None:
        e["root"] = _joint_type(beam.root)
    if beam.tip is not None:
        e["tip"] = beam.tip
        if beam.tip_joint is not None:
            e["tip_joint"] = _joint_type(beam.tip_joint)
    return e


def _write_elements(d, model, elastic=()):
    """The model's frames, visual and collision elements (``multibody.model.geometry``), without the frames of its
    beams (``elastic``: their names)."""
    def placed(e):
        out = {"name": e.name, "body": e.body_name}
        place = _placement_dict(e.placement)
        if place:
            out["placement"] = place
        return out

    frames = [placed(f) for f in model.frames if f.name not in elastic]
    if frames:
        d["frames"] = frames
    for kind, elements in (("visuals", model.visuals), ("collisions", model.collisions)):
        if elements:
            d[kind] = []
            for e in elements:
                out = placed(e)
                out["shape"] = _plain(e.shape.as_dict())
                if kind == "visuals" and e.color is not None:
                    out["color"] = _vec(e.color)
                if kind == "collisions":
                    if e.friction != 1.0:
                        out["friction"] = _num(e.friction)
                    if e.restitution != 0.0:
                        out["restitution"] = _num(e.restitution)
                    for key in ("contype", "conaffinity"):
                        if getattr(e, key) != 1:
                            out[key] = int(getattr(e, key))
                d[kind].append(out)
    filters = {key: [list(pair) for pair in getattr(model, f"contact_{key}", ())] for key in ("exclude", "include")}
    if any(filters.values()):
        d["contact"] = {key: pairs for key, pairs in filters.items() if pairs}


def _expanded_size(value, budget):
    """The bytes of text of JSON-like ``value`` with shared values counted each time they appear (as a file writes
    them), counted up to just beyond ``budget`` (so it takes a time proportional to at most ``budget``)."""
    total, stack = 0, [value]
    while stack and total <= budget:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
            total += 2
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
            total += 2
        else:
            total += len(v) + 2 if isinstance(v, str) else 8
    return total


def _write_torque(d, model, tau):
    by_joint = {e["name"]: e for e in d.get("joints", [])}
    where = {n: (j, k) for j in model.joints[1:] for k, n in enumerate(velocity_names(j))}
    extra = {}
    for name, expr, origin in tau.entries:
        j, k = where[name]
        e = by_joint[j.name]
        if origin == "joint":
            const = model.dof_effort[j.v_slice]
            current = e.get("effort")
            values = list(current) if isinstance(current, list) else [
                _num(const[i]) for i in range(j.joint.nv)]
            if isinstance(values[k], str):   # a second joint-level expression on this coordinate: a sum
                values[k] = f"({values[k]}) + ({expr.source})"
            else:
                values[k] = expr.source
            e["effort"] = values[0] if j.joint.nv == 1 else values
        else:
            extra[name] = f"({extra[name]}) + ({expr.source})" if name in extra else expr.source
    if extra:
        d["torque"] = extra


def _initial(model, q0, v0):
    out = {}
    for key, x, n, slc in (("q", q0, model.nq, "q_slice"), ("v", v0, model.nv, "v_slice")):
        if x is None:
            continue
        x = np.asarray(x, dtype=float).reshape(-1)
        if x.shape != (n,):
            raise ModelError(f"{key}0 must have {n} entries for model '{model.name}', got {x.shape[0]}",
                             element=f"{key}0")
        out[key] = {j.name: (_num(x[getattr(j, slc)][0]) if getattr(j, slc).stop - getattr(j, slc).start == 1
                             else _vec(x[getattr(j, slc)]))
                    for j in model.joints[1:] if getattr(j, slc).stop > getattr(j, slc).start}
    return out


def _plain(value):
    """JSON-like data with numpy values and tuples turned into Python floats and lists."""
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, (np.floating, float)):
        return float(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    return value


HEADER = ("# multibody model file (format multibody-model, version 1): bodies, joints, forces, constraints,\n"
          "# initial state and simulation settings. Schema: multibody/io/model.schema.json; "
          "check it with `multibody validate FILE`.\n")


def save_model(model, path, q0=None, v0=None, simulation=None, header=None):
    """Write ``model`` (and optionally its initial state ``q0``, ``v0`` and ``simulation`` settings) to ``path``:
    YAML (``.yaml``/``.yml``) or JSON (``.json``) by the extension. Returns the path. Loading the file builds
    the same packed arrays (see the module docstring for what cannot be saved)."""
    path = as_path(path, "model file")
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json") and not path.is_dir():
        raise ModelError(f"'{path}': save_model writes .yaml, .yml or .json files", element=str(path))
    path = writable_file(path, "model file")     # not a folder, its folder made: before the model is converted
    d = model_to_dict(model, q0, v0, simulation)
    for key, value in d.items():   # what load_model would refuse is not written (and not spent time on)
        if _expanded_size(value, MAX_BYTES) > MAX_BYTES:
            raise ModelError(f"model '{model.name}': its {key} would take more than {MAX_BYTES} bytes in the file, "
                             "more than a model file holds (load_model refuses it)", element=key)
    if suffix == ".json":
        import json

        text = json.dumps(d, indent=2) + "\n"
    else:
        import yaml

        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)   # libyaml's: the same text, ~100x faster
        text = (HEADER if header is None else header) + yaml.dump(d, Dumper=dumper, sort_keys=False,
                                                                  default_flow_style=None, width=120,
                                                                  allow_unicode=True)
    return write_text(path, text, "model file")
