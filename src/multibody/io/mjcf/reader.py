"""The state of one MJCF reading: the document, the options, names, assets, and what is not carried.

Every attribute and element of the file is either read (carried, or approximated as ``docs/mjcf.md`` says) or named:
:meth:`Reader.not_carried` collects what the Model does not carry and :meth:`Reader.approximated` what it carries
differently, and the reading ends with one ``ModelWarning`` that names them all, with where they are
(:meth:`Reader.warn`). Elements that only draw (cameras, lights, textures, the visual settings) are named in it too.
"""
import warnings
from pathlib import Path

import numpy as np

from multibody.errors import ModelError, ModelWarning
from multibody.io.documents import ModelFileError, Problem
from multibody.io.mjcf.bodies import KNOWN, SOFT
from multibody.io.mjcf.document import fail, numbers
from multibody.io.mjcf.inertia import mesh_properties
from multibody.model import GROUND

__all__ = ["Reader", "MjcfWarning", "DISABLE_FLAGS"]

#: the ``<option><flag>`` switches that change what the Model carries (the others change MuJoCo's solver only)
DISABLE_FLAGS = ("constraint", "equality", "frictionloss", "limit", "contact", "spring", "damper", "gravity",
                 "clampctrl", "actuation", "filterparent", "passive")
#: option attributes of MuJoCo's solver (how it solves, not what): read as the exact rigid solution here
SOLVER_OPTIONS = {"timestep", "gravity", "integrator", "cone", "impratio", "iterations", "tolerance", "ls_iterations",
                  "ls_tolerance", "noslip_iterations", "noslip_tolerance", "mpr_iterations", "mpr_tolerance",
                  "ccd_iterations", "ccd_tolerance", "sdf_iterations", "sdf_initpoints", "solver", "jacobian",
                  "apirate", "magnetic", "actuatorgroupdisable", "density", "viscosity", "wind"}


class MjcfWarning(ModelWarning):
    """What an MJCF file says that the Model does not carry (or carries differently): one per file, naming each."""


class Reader:
    """One reading of an MJCF document ``doc`` with the options of ``load_mjcf`` (``limits``, ``contact``, ``ctrl``,
    ``gravity``)."""

    def __init__(self, doc, options):
        self.doc = doc
        self.source = doc.source
        self.options = options
        self.notes = {}            # label -> [places]
        self.approx = {}           # label -> [places]
        self.visual = set()
        self.names = {"body": {GROUND}, "frame": set(), "joint": set(), "geom": set(), "controller": set()}
        self.labels = {}
        self.joints = {}           # Model joint name -> MjJoint
        self.collisions = {}       # collision name -> (MjGeom, MjBody)
        self.meshes = {}
        self.materials = {}
        self.disabled = set()
        self.limits = {}           # joint -> {lower, upper}: every range, also those not made stops
        self.efforts = {}          # joint -> constant generalized force of the actuators
        self.springdamper_mass = {}   # joint -> 1/(M⁻¹)_kk at qpos0 (joints with a springdamper)
        self.springdampers = False    # whether a joint has one (then the tree is built twice)
        self.option = {"timestep": 0.002, "gravity": np.array([0.0, 0.0, -9.81]), "integrator": "Euler"}

    # ---- what is not carried ------------------------------------------------------------------------------------
    def not_carried(self, label, where):
        self.notes.setdefault(label, []).append(where)

    def approximated(self, label, where):
        self.approx.setdefault(label, []).append(where)

    def visual_only(self, tag):
        self.visual.add(tag)

    def check_known(self, tag, attrs, where):
        """Name each attribute of ``attrs`` (an element ``tag``'s, defaults included) that is not read."""
        known = KNOWN.get(tag, set())
        if tag == "joint" and float(attrs.get("margin", 0) or 0) != 0 and attrs.get("type", "hinge") in ("hinge",
                                                                                                      "slide"):
            self.approximated("joint@margin (a stop acts at its limit here)", where)
        for key in attrs:
            if key in SOFT and key in known:
                self.approximated(f"{tag}@{key} (rigid here: stops, contacts and equalities are exact constraints)",
                                  where)
            elif key not in known:
                self.not_carried(f"{tag}@{key}", where)
        if tag == "joint" and float(attrs.get("frictionloss", 0) or 0) != 0:
            self.not_carried("joint@frictionloss (dry friction of the joint)", where)

    def warn(self, stacklevel=4):
        """The file's one warning (module docstring), if anything is named."""
        parts = []
        for title, table in (("not carried", self.notes), ("approximated", self.approx)):
            if table:
                items = [f"{k} ({len(v)}x, e.g. {v[0]})" if len(v) > 1 else f"{k} ({v[0]})" for k, v in table.items()]
                parts.append(f"{title}: " + "; ".join(items))
        if self.visual:
            parts.append("drawing only, not read: " + ", ".join(sorted(self.visual)))
        if parts:
            warnings.warn(MjcfWarning(f"{self.source}: " + " | ".join(parts)), stacklevel=stacklevel)

    def guard(self, call, where):
        """``call()``; a ``ModelError`` of the builder becomes the file's error at ``where``."""
        try:
            return call()
        except ModelFileError:
            raise
        except ModelError as exc:
            raise ModelFileError([Problem(where, str(exc))], self.source) from None

    # ---- names --------------------------------------------------------------------------------------------------
    def unique(self, space, name, key=None):
        """``name`` in the name space ``space`` (bodies and frames share one), made unique by a suffix when taken
        (``key`` keeps one answer per element)."""
        key = (space, name) if key is None else key
        if key in self.labels:
            return self.labels[key]
        taken = self.names["body"] | self.names["frame"] if space in ("body", "frame") else self.names[space]
        out, k = name, 1
        while out in taken:
            out = f"{name}_{space}" if k == 1 else f"{name}_{space}{k}"
            k += 1
        self.names[space].add(out)
        self.labels[key] = out
        return out

    def body_name(self, name):
        return self.unique("body", name)

    def frame_name(self, name, key):
        """The frame of a welded body or a site (``key``: ("body" | "site", its number))."""
        return self.unique("frame", name, key=key)

    def joint_name(self, j):
        return self.unique("joint", j.name, key=("joint", j.id))

    # ---- sections, options and assets ---------------------------------------------------------------------------
    def read_sections(self):
        """Name the top-level sections that are not read (sensors, custom data, plugins, flexes, ...)."""
        read = {"compiler", "option", "size", "default", "asset", "worldbody", "contact", "equality", "tendon",
                "actuator", "keyframe"}
        for key in self.doc.compiler.unread:
            self.not_carried(f"compiler@{key}", "compiler")
        for k, sec in enumerate(self.doc.root):
            if sec.tag in ("visual", "statistic"):
                self.visual_only(sec.tag)
            elif sec.tag not in read:
                self.not_carried(f"<{sec.tag}>" + (f" ({len(sec)} element{'s' * (len(sec) != 1)})" if len(sec) else ""),
                                 sec.tag)


    def read_option(self):
        for opt in self.doc.root.findall("option"):
            where = "option"
            a = opt.attrib
            for key in a:
                if key not in SOLVER_OPTIONS:
                    self.not_carried(f"option@{key}", where)
            if "timestep" in a:
                self.option["timestep"] = float(numbers(a["timestep"], 1, f"{where}/@timestep", self.source)[0])
            if "gravity" in a:
                self.option["gravity"] = numbers(a["gravity"], 3, f"{where}/@gravity", self.source)
            if "integrator" in a:
                self.option["integrator"] = a["integrator"]
            for key in ("density", "viscosity"):
                if float(a.get(key, 0)) != 0:
                    self.not_carried(f"option@{key} (fluid forces)", where)
            if "wind" in a and np.any(numbers(a["wind"], 3, f"{where}/@wind", self.source)):
                self.not_carried("option@wind (fluid forces)", where)
            for flag in opt.findall("flag"):
                for key, value in flag.attrib.items():
                    if value not in ("enable", "disable"):
                        fail(self.source, f"{where}/flag/@{key}", f"expected enable or disable, got '{value}'")
                    if key in DISABLE_FLAGS and value == "disable":
                        self.disabled.add(key)
                    elif key == "override" and value == "enable":
                        self.not_carried("option/flag@override (the o_solref, o_solimp, o_margin overrides)", where)
        if "passive" in self.disabled:
            self.disabled |= {"spring", "damper"}
        if "constraint" in self.disabled:
            self.disabled |= {"equality", "limit", "contact"}
        if "gravity" in self.disabled:
            self.option["gravity"] = np.zeros(3)
        if "filterparent" in self.disabled:
            self.not_carried("option/flag@filterparent=disable (a body and its parent never collide here)", "option")

    def read_assets(self):
        for k, a in enumerate(self.doc.section("asset")):
            where = f"asset/{a.tag}[@name='{a.get('name')}']" if a.get("name") else f"asset/{a.tag}[{k + 1}]"
            if a.tag == "mesh":
                attrs = self.doc.defaults.attributes("mesh", a, "main", where)
                if "file" not in attrs:
                    self.not_carried("asset/mesh without a file (vertices given inline)", where)
                    continue
                name = attrs.get("name") or attrs["file"].replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
                path = self.doc.inside(Path(self.doc.compiler.meshdir) / attrs["file"], where, "mesh file")
                scale = numbers(attrs["scale"], 3, f"{where}/@scale", self.source) if "scale" in attrs else np.ones(3)
                inertia = attrs.get("inertia", "legacy")
                if inertia not in ("legacy", "exact", "convex"):
                    self.not_carried(f"mesh@inertia={inertia} (legacy inertia used)", where)
                    inertia = "legacy"
                for key in attrs:
                    if key not in ("name", "file", "scale", "class", "content_type", "inertia"):
                        self.not_carried(f"mesh@{key}", where)
                self.meshes[name] = {"file": str(path), "scale": scale, "where": where, "inertia": inertia}
            elif a.tag == "material":
                attrs = self.doc.defaults.attributes("material", a, "main", where)
                if "rgba" in attrs:
                    self.materials[attrs.get("name")] = tuple(numbers(attrs["rgba"], 4, f"{where}/@rgba", self.source))
                self.visual_only("material (but its rgba)")
            elif a.tag in ("texture", "skin"):
                self.visual_only(a.tag)
            else:
                self.not_carried(f"asset/{a.tag}", where)

    def mesh(self, name, where, properties=False):
        """The mesh asset ``name`` (file, scale) and, with ``properties``, the (volume, centre, inertia per unit
        density) of the solid it bounds (read with trimesh)."""
        m = self.meshes.get(name)
        if m is None:
            fail(self.source, f"{where}/@mesh", f"the mesh '{name}' is not defined in <asset>")
        if properties and "properties" not in m:
            try:
                import trimesh
            except ImportError:
                fail(self.source, where, "the mass of a mesh geom needs trimesh to read the mesh (pip install trimesh)")
            try:
                mesh = trimesh.load(m["file"], force="mesh", process=False)
                V = np.asarray(mesh.vertices, dtype=float) * m["scale"]
                F = np.asarray(mesh.faces, dtype=np.int64)
                if m["inertia"] == "convex":
                    hull = mesh.convex_hull
                    V, F = np.asarray(hull.vertices, dtype=float) * m["scale"], np.asarray(hull.faces)
            except Exception as exc:     # trimesh's own errors: a missing or unreadable file
                fail(self.source, m["where"], f"the mesh file '{m['file']}' cannot be read: {exc}")
            m["properties"] = mesh_properties(V, F, "exact" if m["inertia"] == "convex" else m["inertia"])
        m.setdefault("properties", None)
        return m

    def color(self, attrs):
        if "rgba" in attrs:
            rgba = numbers(attrs["rgba"], 4, "geom/@rgba", self.source)
        elif attrs.get("material") in self.materials:
            rgba = self.materials[attrs["material"]]
        else:
            return None
        return tuple(float(min(max(c, 0.0), 1.0)) for c in rgba)

    def friction(self, g):
        """The sliding friction of a geom (0 when ``condim="1"``: frictionless); torsional and rolling friction (condim
        4, 6) are named as not carried."""
        condim = int(float(g.attrs.get("condim", 3)))
        if condim == 1:
            return 0.0
        if condim > 3:
            self.not_carried("geom@condim 4 or 6 (torsional and rolling friction)", g.where)
        if "friction" in g.attrs:
            return float(numbers(g.attrs["friction"], 3, f"{g.where}/@friction", self.source, at_least=1)[0])
        return 1.0

    # ---- joints -------------------------------------------------------------------------------------------------
    def joint_options(self, j):
        """The builder's keyword arguments of joint ``j``: damping, stiffness and rest, armature, limits."""
        a, c, where = j.attrs, self.doc.compiler, j.where
        value = (lambda key, default=0.0: float(numbers(a[key], 1, f"{where}/@{key}", self.source)[0]) if key in a
                 else default)
        angle = (lambda x: c.angle_value(x)) if j.kind == "hinge" else (lambda x: x)
        kw = {}
        stiffness, damping = value("stiffness"), value("damping")
        sd = numbers(a["springdamper"], 2, f"{where}/@springdamper", self.source) if "springdamper" in a else (0, 0)
        if sd[0] > 0 and sd[1] > 0:      # MuJoCo's: the joint's inertia m = 1/(M⁻¹)_kk at qpos0
            m = self.springdamper_mass.get(self.joint_name(j))
            if m is not None:
                stiffness, damping = m / (sd[0] * sd[0] * sd[1] * sd[1]), 2.0 * m / sd[0]
            else:
                self.springdampers = True
        if damping and "damper" not in self.disabled:
            kw["damping"] = damping
        if stiffness and "spring" not in self.disabled:
            if j.kind in ("hinge", "slide"):
                kw["stiffness"] = stiffness
                kw["rest"] = angle(value("springref"))
            else:
                self.not_carried(f"joint@stiffness of a {j.kind} joint (its quaternion has no spring here)", where)
        if self.efforts.get(self.joint_name(j)):
            kw["effort"] = self.efforts[self.joint_name(j)]
        if value("armature"):
            kw["armature"] = value("armature")
            if j.kind == "free":
                self.approximated("joint@armature of a free joint (the translational part taken along the body's "
                                  "axes, MuJoCo's along the world's)", where)
        flag = a.get("limited", "auto")
        limited = flag == "true" or (flag == "auto" and c.autolimits and "range" in a)
        if limited:
            lo, hi = numbers(a.get("range", "0 0"), 2, f"{where}/@range", self.source)
            if j.kind in ("hinge", "slide"):
                self.limits[self.joint_name(j)] = {"lower": angle(lo), "upper": angle(hi)}
                if self.options["limits"] and "limit" not in self.disabled:
                    if angle(lo) > angle(hi):
                        fail(self.source, f"{where}/@range", f"the lower limit {lo} is above the upper limit {hi}")
                    kw["limits"] = (angle(lo), angle(hi))
            else:
                self.not_carried(f"joint@range of a {j.kind} joint (a cone limit)", where)
        return kw
