"""MuJoCo's model files (MJCF) as Models: ``load_mjcf(path)``, ``mb.load_model("model.xml")``.

What is read and how (``docs/mjcf.md`` has the whole table of what is carried, approximated, refused):

* the document (``document.py``): safe XML (no DTD, no entities), ``<include>`` (no loops, no path out of the
  model's folder), ``<compiler>`` (angle, eulerseq, autolimits, meshdir, inertiafromgeom, inertiagrouprange,
  boundmass, boundinertia, settotalmass), nested ``<default>`` classes and ``childclass``;
* the tree (``bodies.py``): bodies with every orientation form (``frames.py``), ``<frame>``, hinge, slide, ball and
  free joints (several in one body), ``range``/``limited`` as end stops, ``damping``, ``stiffness``/``springref``,
  ``armature``, ``ref``; inertias from ``<inertial>`` or the geoms (``inertia.py``); welded bodies and sites as
  frames; geoms as visual and collision elements (plane, sphere, capsule, cylinder, box, mesh) with their sliding
  friction and collision bits;
* the rest (``elements.py``, ``actuators.py``): ``<equality>`` connect, weld, joint and fixed-tendon ones as rigid
  constraints; ``<contact>`` exclusions and pairs; fixed tendons; actuators as inputs (:func:`actuator_forces`) or,
  at a constant control, as efforts and controllers; ``<keyframe>``; gravity, timestep and the ``<flag>`` switches
  of ``<option>``.

Whatever the file says that the Model does not carry is named in one ``MjcfWarning`` per file (``reader.py``); a
malformed file, an ``<include>`` loop, a path out of the model's folder, an entity, or an element this reader cannot
build (``<composite>``, ``<replicate>``, ``<flexcomp>``, ``<attach>``) is one ``ModelFileError``.

The Model's coordinates are MuJoCo's ``qpos`` in its order; velocities are ``qvel`` but for free joints
(``state.py``: :func:`state_from_mujoco`, :func:`state_to_mujoco`). Names are the file's; an unnamed body, joint,
geom, site, equality, tendon or actuator is named after its kind and its number among its kind in the file (from 0,
the world body being body 0: ``body3``, ``joint5``, ``geom12``, MuJoCo's ids), and a joint that shares a body with
the joints after it gets a massless body ``<body>/<joint>``. ``model.metadata["mjcf"]`` keeps the file's ``qpos0``,
keyframes, actuators, tendons, the joints' places in ``qpos``/``qvel``, the timestep and the integrator.

Example
-------
>>> import multibody as mb
>>> from multibody.io.mjcf import parse_mjcf
>>> model = parse_mjcf('''<mujoco model="pendulum"><option timestep="0.01"/><worldbody>
...   <body name="pole" pos="0 0 1"><joint name="hinge" type="hinge" axis="0 1 0" damping="0.1"/>
...     <geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.02" mass="1"/></body></worldbody></mujoco>''')
>>> model.nq, model.joint_names[1], round(float(model.mass[1]), 12)
(1, 'hinge', 1.0)
"""
from pathlib import Path

import numpy as np

from multibody.io.mjcf.actuators import actuator_forces, apply_actuator
from multibody.io.mjcf.bodies import add_tree, read_tree, tree_inertias
from multibody.io.mjcf.document import parse_document, read_document
from multibody.io.mjcf.elements import (add_actuators, add_contacts, add_equalities, read_actuators, read_keyframes,
                                        read_tendons, world_poses)
from multibody.io.mjcf.reader import MjcfWarning, Reader
from multibody.io.mjcf.state import initial_state, keyframe, state_from_mujoco, state_to_mujoco
from multibody.model import ModelBuilder
from multibody.model.rotations import matrix_to_quat

__all__ = ["load_mjcf", "parse_mjcf", "state_from_mujoco", "state_to_mujoco", "initial_state", "keyframe",
           "actuator_forces", "MjcfWarning"]


def _qpos0(rd):
    """MuJoCo's reference configuration: hinge and slide joints at ``ref``, balls at the identity, free joints at
    their body's pose in the world."""
    poses = world_poses(rd)
    q = []
    for b in rd.bodies[1:]:
        for j in b.joints:
            if j.kind in ("hinge", "slide"):
                q.append(j.ref)
            elif j.kind == "ball":
                q += [1.0, 0.0, 0.0, 0.0]
            else:
                P = poses[b.id]
                q += [*P.translation, *matrix_to_quat(P.rotation)]
    return np.array(q, dtype=float)


def _metadata(rd, keys):
    joints = [{"name": name, "type": j.kind, "qposadr": j.qposadr, "dofadr": j.dofadr, "ref": j.ref}
              for name, j in rd.joints.items()]
    info = {"path": rd.source, "model": rd.doc.name, "timestep": rd.option["timestep"],
            "integrator": rd.option["integrator"], "qpos0": rd.qpos0.tolist(), "joints": joints, "keyframes": keys,
            "actuators": rd.actuators, "tendons": rd.tendons}
    meta = {"mjcf": info}
    if rd.limits:
        meta["limits"] = rd.limits
    return meta


def _with_springdampers(rd, probe):
    """A builder of the tree again, the joints with a ``springdamper`` now with MuJoCo's stiffness and damping: from
    the inertia m = 1/(M⁻¹)_kk of their coordinate at qpos0 (MuJoCo's ``dof_invweight0``), k = m/(τ ζ)², c = 2 m/τ
    (τ the time constant, ζ the damping ratio)."""
    from multibody.algorithms.derivatives import minv

    model = rd.guard(lambda: probe.build(warn=False), "")
    inverse = np.diag(minv(model, rd.qpos0))
    for name, j in rd.joints.items():
        if "springdamper" in j.attrs:
            rd.springdamper_mass[name] = 1.0 / inverse[j.dofadr]
    notes, approx = dict(rd.notes), dict(rd.approx)
    builder = ModelBuilder(gravity=rd.option["gravity"], name=rd.doc.name, inertia=rd.options["inertia"])
    add_tree(rd, builder)
    rd.notes, rd.approx = notes, approx
    return builder


def _read(doc, limits, contact, ctrl, strict, repair, stacklevel):
    if strict and repair:
        from multibody.errors import ModelError

        raise ModelError("load_mjcf: strict=True refuses the inertias that repair=True would move: choose one",
                         element="strict")
    rd = Reader(doc, {"limits": limits, "contact": contact, "ctrl": ctrl,
                      "inertia": "refuse" if strict else "repair" if repair else "warn"})
    rd.read_sections()
    rd.read_option()
    rd.read_assets()
    read_tree(rd)
    tree_inertias(rd)
    rd.nq, rd.nv = rd.counts["qpos"], rd.counts["dof"]
    read_tendons(rd)
    read_actuators(rd)
    rd.paired = {e.get(k) for e in doc.section("contact") if e.tag == "pair" for k in ("geom1", "geom2")}
    if "contact" in rd.disabled:
        rd.options["contact"] = False
    builder = ModelBuilder(gravity=rd.option["gravity"], name=doc.name, inertia=rd.options["inertia"])
    add_tree(rd, builder)
    rd.qpos0 = _qpos0(rd)
    if rd.springdampers:
        builder = _with_springdampers(rd, builder)
    add_actuators(rd, builder)
    add_equalities(rd, builder, rd.qpos0)
    add_contacts(rd, builder)
    builder.metadata = _metadata(rd, read_keyframes(rd))
    model = rd.guard(lambda: builder.build(), "")
    for name, j in rd.joints.items():      # the coordinates come in MuJoCo's order (bodies.py)
        info = model.joint(name)
        assert info.q_slice.start == j.qposadr and info.v_slice.start == j.dofadr, (name, info.q_slice, j.qposadr)
    rd.warn(stacklevel)
    return model


def load_mjcf(path, *, limits=True, contact=True, ctrl=0.0, strict=False, repair=False):
    """The Model of the MJCF file ``path`` (module docstring). ``limits=False`` keeps the joints' ranges as data
    (``model.metadata["limits"]``), not end stops; ``contact=False`` reads no collision elements (the geoms are still
    drawn and weigh); ``ctrl``: the constant control under which the actuators act in the Model (one value, one per
    actuator, or ``{name: value}``; default 0, MuJoCo's initial control), or None to leave them out of the Model
    (inputs only: :func:`actuator_forces`). Inertias that no body has are kept with one ``InertiaWarning``;
    ``strict=True`` refuses them, ``repair=True`` moves each to the nearest physical one."""
    return _read(read_document(path, apply_actuator), limits, contact, ctrl, strict, repair, 4)


def parse_mjcf(text, source="<mjcf>", folder=".", *, limits=True, contact=True, ctrl=0.0, strict=False, repair=False):
    """The Model of an MJCF text (:func:`load_mjcf`); ``folder``: where its includes and meshes are."""
    return _read(parse_document(text, source, Path(folder), apply_actuator), limits, contact, ctrl, strict, repair, 4)
