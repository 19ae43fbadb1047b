"""An MJCF file as a checked document: safe XML, ``<include>`` expanded, ``<compiler>`` settings, default classes.

The XML is read with :mod:`xml.etree.ElementTree` after the text is checked: a document type definition
(``<!DOCTYPE``, ``<!ENTITY``) is refused, so no entity is ever expanded. ``<include file="..."/>`` is replaced by the
children of the included file's ``<mujoco>`` root, recursively; a file that includes itself (directly or through
others), a path that leaves the folder of the main model file (``..``, an absolute path elsewhere, a link out of
it) and a file that cannot be read are each one :class:`~multibody.io.documents.ModelFileError` naming the element
and the file. Include paths are relative to the main file's folder, as MuJoCo reads them.

Default classes (MuJoCo's ``<default>``): the top ``<default>`` is the class ``main``; a nested ``<default
class="x">`` starts from its parent's values. Each class keeps, per element type, the attributes its defaults set
(:meth:`Defaults.attributes`); an element's own attributes replace them. The class of an element is its ``class``
attribute, else the ``childclass`` of the nearest enclosing ``<body>`` or ``<frame>`` that has one, else ``main``.
The actuator types (``general``, ``motor``, ``position``, ``velocity``, ...) share one default per class, kept as
the parameters of a general actuator (:func:`multibody.io.mjcf.actuators.apply_actuator`).
"""
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from multibody.io.documents import MAX_BYTES, ModelFileError, Problem, read_text

__all__ = ["Document", "Defaults", "Compiler", "parse_document", "read_document", "fail", "numbers", "ACTUATOR_TAGS"]

#: the actuator elements (all share the class's one actuator default)
ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder", "muscle",
                 "adhesion", "plugin")
#: deepest nesting of includes followed, and the most files an expansion reads (an include that fans out cannot
#: multiply the document beyond them: their text together stays under the limit of one file, ``MAX_BYTES``)
MAX_INCLUDE_DEPTH = 32
MAX_INCLUDES = 1000


def fail(source, path, message):
    """Raise the one :class:`ModelFileError` of ``source`` at ``path`` (the element, e.g. ``body[@name='torso']``)."""
    raise ModelFileError([Problem(path, message)], source)


def numbers(text, n, where, source, at_least=None):
    """The floats of an attribute's text: exactly ``n`` of them (or ``at_least``..``n`` when given), finite."""
    try:
        values = [float(x) for x in str(text).split()]
    except ValueError:
        fail(source, where, f"expected {n} number{'s' * (n > 1)}, got '{str(text)[:60]}'")
    low = n if at_least is None else at_least
    if not low <= len(values) <= n or not all(math.isfinite(x) for x in values):
        count = f"{n}" if at_least is None else f"{at_least} to {n}"
        fail(source, where, f"expected {count} finite number{'s' * (n > 1)}, got '{str(text)[:60]}'")
    return np.array(values)


@dataclass
class Compiler:
    """The ``<compiler>`` settings that change the model (MuJoCo's defaults)."""

    angle: str = "degree"
    eulerseq: str = "xyz"
    autolimits: bool = True
    inertiafromgeom: str = "auto"
    inertiagrouprange: tuple = (0, 5)
    boundmass: float = 0.0
    boundinertia: float = 0.0
    settotalmass: float = -1.0
    meshdir: str = ""
    given: dict = field(default_factory=dict)
    unread: list = field(default_factory=list)

    @property
    def degree(self):
        return self.angle == "degree"

    def angle_value(self, x):
        """An angle of the file in radians (``angle="degree"``: converted)."""
        return x * math.pi / 180.0 if self.degree else x


def _boolean(text, where, source):
    if text in ("true", "false"):
        return text == "true"
    fail(source, where, f"expected true or false, got '{text}'")


#: compiler attributes read, or that change nothing here (drawing, file names, threads; static bodies are merged
#: here anyway); the others are named in the file's warning (``Compiler.unread``)
COMPILER_READ = {"angle", "eulerseq", "autolimits", "inertiafromgeom", "inertiagrouprange", "boundmass", "boundinertia",
                 "settotalmass", "meshdir", "assetdir", "texturedir", "coordinate", "fusestatic", "usethread",
                 "strippath", "discardvisual"}


def read_compiler(elements, source):
    c = Compiler()
    for e in elements:
        c.given.update(e.attrib)
    g = c.given
    c.unread = sorted(k for k in g if k not in COMPILER_READ)
    where = "compiler"
    if "angle" in g:
        if g["angle"] not in ("degree", "radian"):
            fail(source, f"{where}/@angle", f"expected degree or radian, got '{g['angle']}'")
        c.angle = g["angle"]
    if "eulerseq" in g:
        seq = g["eulerseq"]
        if len(seq) != 3 or any(ch not in "xyzXYZ" for ch in seq):
            fail(source, f"{where}/@eulerseq", f"expected three of x, y, z, X, Y, Z, got '{seq}'")
        c.eulerseq = seq
    if "autolimits" in g:
        c.autolimits = _boolean(g["autolimits"], f"{where}/@autolimits", source)
    if "inertiafromgeom" in g:
        if g["inertiafromgeom"] not in ("auto", "true", "false"):
            fail(source, f"{where}/@inertiafromgeom", f"expected auto, true or false, got '{g['inertiafromgeom']}'")
        c.inertiafromgeom = g["inertiafromgeom"]
    if "inertiagrouprange" in g:
        lo, hi = numbers(g["inertiagrouprange"], 2, f"{where}/@inertiagrouprange", source)
        c.inertiagrouprange = (int(lo), int(hi))
    for key in ("boundmass", "boundinertia", "settotalmass"):
        if key in g:
            setattr(c, key, float(numbers(g[key], 1, f"{where}/@{key}", source)[0]))
    c.meshdir = g.get("meshdir", g.get("assetdir", ""))
    if g.get("coordinate", "local") != "local":
        fail(source, f"{where}/@coordinate", "global coordinates are not supported (MuJoCo 2.x removed them too): "
                                             "write the model in local coordinates")
    return c


class Defaults:
    """The default classes of a document (module docstring)."""

    def __init__(self, root, source, apply_actuator):
        self.source = source
        #: class name -> {element tag -> attributes}
        self.classes = {"main": {}}
        #: class name -> the general actuator parameters of its actuator default
        self.actuators = {}
        self._apply = apply_actuator
        top = root.findall("default")
        if len(top) > 1:
            fail(source, "default", "a model has one top-level <default> (the class main); nest the others in it")
        self.actuators["main"] = apply_actuator(None, None, None, source)
        if top:
            self._read(top[0], "main", None)

    def _read(self, elem, name, parent):
        if parent is not None:
            if name in self.classes:
                fail(self.source, f"default[@class='{name}']", f"the default class '{name}' is defined twice")
            self.classes[name] = {tag: dict(a) for tag, a in self.classes[parent].items()}
            self.actuators[name] = dict(self.actuators[parent])
        for child in elem:
            if child.tag == "default":
                cname = child.get("class")
                if not cname:
                    fail(self.source, f"default[@class='{name}']/default", "a nested <default> needs a class name")
                self._read(child, cname, name)
            elif child.tag in ACTUATOR_TAGS:
                self.actuators[name] = self._apply(dict(self.actuators[name]), child, f"default[@class='{name}']",
                                                   self.source)
            else:
                self.classes[name].setdefault(child.tag, {}).update(child.attrib)

    def check(self, cls, where):
        if cls not in self.classes:
            fail(self.source, where, f"the default class '{cls}' is not defined (classes: "
                                     f"{', '.join(list(self.classes)[:20])})")
        return cls

    def attributes(self, tag, elem, cls, where):
        """The element's attributes over its class's defaults for ``tag``."""
        cls = self.check(elem.get("class", cls), where)
        out = dict(self.classes[cls].get(tag, {}))
        out.update({k: v for k, v in elem.attrib.items() if k != "class"})
        return out

    def actuator(self, elem, cls, where):
        """The general parameters of an actuator element over its class's actuator default."""
        cls = self.check(elem.get("class", cls), where)
        return self._apply(dict(self.actuators[cls]), elem, where, self.source)


@dataclass
class Document:
    """A read MJCF file: ``root`` (``<mujoco>``, includes expanded), ``source`` (the file), ``folder`` (its folder,
    which every path of the model must stay in), ``compiler``, ``defaults``, ``name`` (``<mujoco model>``)."""

    root: ET.Element
    source: str
    folder: Path
    compiler: Compiler
    defaults: Defaults
    name: str

    def section(self, tag):
        """The children of every ``<tag>`` section of the root (``worldbody``, ``actuator``, ...), in order."""
        return [child for sec in self.root.findall(tag) for child in sec]

    def inside(self, relative, where, what="file"):
        """The path of ``relative`` (relative to the model's folder), refused when it leaves the folder."""
        path = (self.folder / relative).resolve()
        if not path.is_relative_to(self.folder.resolve()):
            fail(self.source, where, f"the {what} '{relative}' is outside the model's folder '{self.folder}': paths "
                                     "of a model stay in its folder")
        return path


def _parse(text, source):
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        fail(source, "", "an MJCF file needs no document type definition (<!DOCTYPE>, <!ENTITY>); they are refused")
    try:
        return ET.fromstring(text)
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise ModelFileError([Problem("", f"XML: {exc}", line)], source) from None


def _expand_includes(elem, folder, source, chain, budget):
    """Replace every ``<include>`` below ``elem`` by the children of its file's root (module docstring); ``budget``
    [files, bytes] left for the whole expansion."""
    k = 0
    while k < len(elem):
        child = elem[k]
        if child.tag != "include":
            _expand_includes(child, folder, source, chain, budget)
            k += 1
            continue
        name = child.get("file")
        where = f"include[@file='{name}']"
        if not name:
            fail(source, "include", "<include> needs a file")
        path = (folder / name).resolve()
        if not path.is_relative_to(folder.resolve()):
            fail(source, where, f"the included file '{name}' is outside the model's folder '{folder}': paths of a "
                                "model stay in its folder")
        if path in chain:
            loop = " -> ".join(p.name for p in [*chain, path])
            fail(source, where, f"<include> loop: {loop}")
        if len(chain) > MAX_INCLUDE_DEPTH:
            fail(source, where, f"includes nested deeper than {MAX_INCLUDE_DEPTH}")
        try:
            text = read_text(path)
        except Exception as exc:
            fail(source, where, f"the included file cannot be read: {exc}")
        budget[0] -= 1
        budget[1] -= len(text)
        if budget[0] < 0 or budget[1] < 0:
            fail(source, where, f"the includes expand beyond {MAX_INCLUDES} files or {MAX_BYTES} bytes of text")
        sub = _parse(text, str(path))
        if sub.tag != "mujoco":
            fail(source, where, f"the root element of an included file is <mujoco>, got <{sub.tag}>")
        _expand_includes(sub, folder, str(path), [*chain, path], budget)
        elem.remove(child)
        for j, grand in enumerate(list(sub)):
            elem.insert(k + j, grand)
        k += len(sub)


def parse_document(text, source, folder, apply_actuator):
    """The :class:`Document` of an MJCF text; ``folder``: where its includes and meshes are (and must stay)."""
    root = _parse(text, source)
    if root.tag != "mujoco":
        fail(source, f"/{root.tag}", "the root element of an MJCF file is <mujoco>")
    folder = Path(folder)
    _expand_includes(root, folder, source, [Path(source).resolve()] if not source.startswith("<") else [],
                     [MAX_INCLUDES, MAX_BYTES - len(text)])
    compiler = read_compiler(root.findall("compiler"), source)
    defaults = Defaults(root, source, apply_actuator)
    return Document(root, source, folder, compiler, defaults, root.get("model") or "mjcf")


def read_document(path, apply_actuator):
    """The :class:`Document` of the MJCF file ``path``."""
    path = Path(path)
    return parse_document(read_text(path), str(path), path.resolve().parent, apply_actuator)
