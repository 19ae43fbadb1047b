"""Elastic beams and cables as rigid finite elements (seed 001, introduction: "a nonlinear elastic structure —
beams, cables, plates — modelled as rigid bodies joined by joints with elastic elements"; its references [5], [7]:
Dmitrochenko, Mikhailov, Pogorelov 1998 on rod systems; Wittbrodt, Adamiec-Wójcik, Wojciech, *Dynamics of
Flexible Multibody Systems: Rigid Finite Element Method*, Springer 2006, ch. 3).

A straight beam of length L along the x axis of its ``placement`` is divided into ``n`` segments of length
l = L/n (the *primary division*). An elastic element (a spring-damper on joint coordinates) sits at the centre of
each segment, x_j = (j − ½) l for j = 1..n, and the rigid elements span the beam between them (the *secondary
division*): element 0 is [0, l/2], elements 1..n−1 are [(k − ½) l, (k + ½) l] and element n is [L − l/2, L]. So
the end elements are half-length; element 0 is clamped to the parent (or carried by the ``root`` joint), and
element k's frame sits at the node x_k = k l, which is its centre for 0 < k < n (the root for k = 0, the tip for
k = n). ``docs/elastic.md`` derives the layout:

* a spring at x_j carries the deformation of the segment [(j − 1) l, j l] around it: its stiffnesses are
  ``EI/l`` (bending), ``GJ/l`` (torsion), ``EA/l`` (stretch), so that the rotation it takes under the
  bending moment M(x_j) is M(x_j) l / EI — the midpoint rule for ∫ M/EI dx. The midpoint rule is exact to
  O(l²), so the tip deflection and rotation of a cantilever converge at second order (PL³/3EI − P L l²/12EI
  for a tip load P: the midpoint sum of ∫ (L − x)² dx), whereas springs at the element ends (x = 0, l, ...)
  would give the first-order rectangle rule;
* the rigid elements carry the mass μ of their length and, optionally, the section's rotary inertia
  (ρJ about the axis, ρI_y, ρI_z across it) times their length: the kinetic energy of the beam lumped on the
  rigid elements, again to O(l²).

The elastic element at x_j is a chain of joints between element j − 1 and element j: a ``Cylindrical``,
``Revolute`` or ``Prismatic`` joint about/along x for torsion and stretch (those that the beam has), then a
``Universal`` joint (axes y, z) or a ``Revolute`` one for bending — through massless intermediate bodies
``"{name}.sde{j}"`` when there is more than one. A deformation whose stiffness is None is rigid: it has no
coordinate (``EA=None``: inextensible; ``GJ=None``: rigid in torsion; ``EI=(EIy, None)``: bends about y only, a
planar beam in the x–z plane of its placement with one coordinate per element). The springs are the joints'
spring-dampers (``ModelBuilder.add_joint(stiffness=, damping=)``, ``kernels/forces.py``), so every formulation
and derivative that knows joint springs knows beams. ``damping=β`` adds the stiffness-proportional structural
damping c = β k to each spring (Rayleigh's C = β K: every mode has the damping ratio ζ = β ω / 2).

With Cardan (universal-joint) angles the bending springs are exact in a plane; in space the two angles differ
from the rotation vector of the element pair by terms of second order in the element rotation, which are small
for small deformation (the modes) and add an O(l) error to combined large bending about both axes.

A *cable* (:class:`Cable`) is the same chain of ``n`` equal links with a pin at every node x = k l, k = 0..n−1
(the root is a pin too), without bending or torsional stiffness unless given: a hanging chain whose nodes tend to
the catenary at second order in l.

Example
-------
>>> import multibody as mb
>>> b = mb.ModelBuilder(gravity=(0, 0, 0))
>>> b.add_beam("rod", "ground", length=1.0, segments=4, EI=(2.0, None), GJ=None, mass_per_length=0.5)
'rod'
>>> model = b.build()
>>> model.nv, model.body_names[1:3], model.frame("rod.tip").body
(4, ('rod.0', 'rod.1'), 5)
>>> [float(k) for k in model.dof_stiffness]      # EI / l
[8.0, 8.0, 8.0, 8.0]
"""
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError
from multibody.model.geometry import positive_number
from multibody.model.joints import Cylindrical, Fixed, Joint, Prismatic, Revolute, Universal
from multibody.model.placement import Placement

__all__ = ["Beam", "Cable", "beam_parts", "stiffness_value"]

X_AXIS, Y_AXIS, Z_AXIS = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)


def stiffness_value(value, what, element):
    """A section stiffness: a positive number, or None (rigid in that deformation)."""
    return None if value is None else positive_number(value, what, element)


def _segments(value, element, least=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
        raise ModelError(f"{element}: segments must be an integer >= {least}, got {value!r}", element=element)
    return int(value)


def _bending(EI, element):
    if EI is None:
        return None, None
    if np.ndim(EI) == 0:
        v = stiffness_value(EI, "EI", element)
        return v, v
    try:
        EIy, EIz = EI
    except (TypeError, ValueError):
        raise ModelError(f"{element}: EI must be a number or a pair (EIy, EIz), got {EI!r}", element=element) from None
    return stiffness_value(EIy, "EIy", element), stiffness_value(EIz, "EIz", element)


def _section_inertia(value, element):
    """(ρJ, ρI_y, ρI_z) per length from a number ρJ (then ρI_y = ρI_z = ρJ/2) or three numbers; zeros for None."""
    if value is None:
        return 0.0, 0.0, 0.0
    if np.ndim(value) == 0:   # ρJ of a section with ρI_y = ρI_z = ρJ/2 (a round or square one: J = I_y + I_z)
        rJ = positive_number(value, "inertia_per_length", element, allow_zero=True)
        return rJ, 0.5 * rJ, 0.5 * rJ
    try:
        a, b, c = value
    except (TypeError, ValueError):
        raise ModelError(f"{element}: inertia_per_length must be ρJ or (ρJ, ρIy, ρIz), got {value!r}",
                         element=element) from None
    return tuple(positive_number(x, "inertia_per_length", element, allow_zero=True) for x in (a, b, c))


@dataclass(frozen=True)
class Beam:
    """A straight elastic beam of rigid finite elements (module docstring), as given to
    ``ModelBuilder.add_beam``: ``EIy``, ``EIz``, ``GJ``, ``EA`` (None: rigid in that deformation),
    ``mass_per_length`` μ, ``inertia`` (ρJ, ρI_y, ρI_z) per length, ``damping`` β (c = β k), ``placement`` of the
    root frame in ``parent``'s frame, ``root`` (None: clamped; or the joint at the root), ``tip`` (None: free; or
    the body the tip is clamped to, with ``tip_placement`` on it and ``tip_joint``, a Fixed joint by default)."""

    name: str
    parent: str
    length: float
    segments: int
    EIy: float
    EIz: float
    GJ: float
    EA: float
    mass_per_length: float
    inertia: tuple = (0.0, 0.0, 0.0)
    damping: float = 0.0
    placement: Placement = Placement()
    root: Joint = None
    tip: str = None
    tip_placement: Placement = None
    tip_joint: Joint = None
    kind: str = "beam"

    @classmethod
    def checked(cls, name, parent, length, segments, EI, GJ, mass_per_length, EA=None, inertia_per_length=None,
                placement=None, damping=None, root=None, tip=None, tip_placement=None, tip_joint=None, kind="beam"):
        """A Beam from the arguments of ``add_beam``, each checked (a ``ModelError`` names the beam and the
        argument)."""
        element = f"{kind} '{name}'"
        if not isinstance(name, str) or not name:
            raise ModelError(f"{kind} name must be a non-empty string, got {name!r}", element=repr(name))
        EIy, EIz = _bending(EI, element)
        inertia = _section_inertia(inertia_per_length, element)
        beam = cls(name=name, parent=parent, length=positive_number(length, "length", element),
                   segments=_segments(segments, element), EIy=EIy, EIz=EIz, GJ=stiffness_value(GJ, "GJ", element),
                   EA=stiffness_value(EA, "EA", element),
                   mass_per_length=positive_number(mass_per_length, "mass_per_length", element),
                   inertia=inertia, damping=positive_number(damping or 0.0, "damping", element, allow_zero=True),
                   placement=placement if placement is not None else Placement(), root=root, tip=tip,
                   tip_placement=tip_placement, tip_joint=tip_joint, kind=kind)
        for what, joint in (("root", root), ("tip_joint", tip_joint)):
            if joint is not None and not isinstance(joint, Joint):
                raise ModelError(f"{element}: {what} must be a joint type (Revolute, Spherical, ...), got {joint!r}",
                                 element=element)
        if beam.GJ is not None and inertia[0] == 0.0:
            raise ModelError(f"{element}: torsion (GJ) needs the section's polar inertia per length "
                             "(inertia_per_length=ρJ, or (ρJ, ρIy, ρIz)); GJ=None makes the beam rigid in torsion",
                             element=element)
        if kind == "beam" and beam.EIy is None and beam.EIz is None and beam.GJ is None and beam.EA is None:
            raise ModelError(f"{element}: every stiffness (EI, GJ, EA) is None: the beam would be one rigid body "
                             "(add_body)", element=element)
        return beam

    @property
    def element(self):
        return f"{self.kind} '{self.name}'"

    @property
    def segment_length(self):
        return self.length / self.segments

    def body_name(self, k):
        """The name of rigid element k (0 at the root, ``segments`` at the tip)."""
        return f"{self.name}.{k}"

    @property
    def tip_frame(self):
        return f"{self.name}.tip"

    @property
    def element_bodies(self):
        """The names of the rigid elements, root to tip."""
        return tuple(self.body_name(k) for k in range(self.segments + 1))


@dataclass(frozen=True)
class Cable(Beam):
    """A cable (module docstring): ``segments`` equal links pinned at the nodes, with no bending stiffness unless
    ``EI`` is given (the pins then carry EI/l, the root pin none), rigid in torsion, inextensible unless ``EA`` is
    given; ``planar=True`` pins about the placement's y axis only (a cable in its x–z plane)."""

    kind: str = "cable"

    @classmethod
    def checked(cls, name, parent, length, segments, mass_per_length, EA=None, EI=None, planar=False,
                placement=None, damping=None, root=None, tip=None, tip_placement=None, tip_joint=None):
        element = f"cable '{name}'"
        if EI is None:
            bending = (0.0, 0.0)
        elif np.ndim(EI) == 0:
            bending = (positive_number(EI, "EI", element, allow_zero=True),) * 2
        else:
            try:
                EIy, EIz = EI
            except (TypeError, ValueError):
                raise ModelError(f"{element}: EI must be a number or a pair (EIy, EIz), got {EI!r}",
                                 element=element) from None
            bending = tuple(positive_number(x, "EI", element, allow_zero=True) for x in (EIy, EIz))
        if planar:
            bending = (bending[0], None)
        beam = Beam.checked(name, parent, length, segments, None, None, mass_per_length, EA=EA, placement=placement,
                            damping=damping, root=root, tip=tip, tip_placement=tip_placement, tip_joint=tip_joint,
                            kind="cable")
        fields = {f: getattr(beam, f) for f in beam.__dataclass_fields__}
        fields.update(EIy=bending[0], EIz=bending[1], kind="cable")
        return cls(**fields)

    @property
    def planar(self):
        return self.EIz is None

    @property
    def element_bodies(self):
        return tuple(self.body_name(k) for k in range(self.segments))


# ---- the parts a beam adds to a model ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Part:
    """One body and the joint that carries it (``kind`` "body"), or a cut joint (``kind`` "cut"), or a frame."""

    kind: str
    name: str
    mass: float = 0.0
    com: tuple = (0.0, 0.0, 0.0)
    inertia: tuple = (0.0, 0.0, 0.0)
    joint: Joint = None
    joint_name: str = None
    parent: str = None
    placement: Placement = None
    child_placement: Placement = None
    stiffness: tuple = None
    damping: tuple = None


def _element_inertia(beam, length, lo):
    """(mass, com x, principal moments about the com) of a rigid element of ``length`` starting at x = ``lo`` in
    its frame (a uniform slender rod with the section's rotary inertia)."""
    m = beam.mass_per_length * length
    rJ, rIy, rIz = beam.inertia
    across = m * length * length / 12.0
    return m, lo + 0.5 * length, (rJ * length, across + rIy * length, across + rIz * length)


def _sde_joints(beam):
    """The joints of one elastic element (module docstring): [(suffix, joint, stiffnesses per coordinate)], the
    torsion/stretch joint first, then the bending joint; stiffnesses per unit length (× 1/l later)."""
    out = []
    twist, stretch = beam.GJ, beam.EA
    if twist is not None and stretch is not None:
        out.append(("twist_stretch", Cylindrical(axis=X_AXIS), (twist, stretch)))
    elif twist is not None:
        out.append(("twist", Revolute(axis=X_AXIS), (twist,)))
    elif stretch is not None:
        out.append(("stretch", Prismatic(axis=X_AXIS), (stretch,)))
    EIy, EIz = beam.EIy, beam.EIz
    if EIy is not None and EIz is not None:
        out.append(("bend", Universal(axis1=Y_AXIS, axis2=Z_AXIS), (EIy, EIz)))
    elif EIy is not None:
        out.append(("bend", Revolute(axis=Y_AXIS), (EIy,)))
    elif EIz is not None:
        out.append(("bend", Revolute(axis=Z_AXIS), (EIz,)))
    return out


def _chain(beam, name, parent, placement, child_placement, sde, scale, mass_props, k):
    """The parts of rigid element ``name`` carried by the joints ``sde`` (stiffnesses per length × ``scale``):
    massless intermediate bodies between the joints, the element's own body last."""
    out = []
    for idx, (suffix, joint, per_length) in enumerate(sde):
        last = idx == len(sde) - 1
        stiff = tuple(s * scale for s in per_length)
        child = name if last else f"{beam.name}.sde{k}" + ("" if idx == 0 else f".{idx}")
        m, com, moments = mass_props if last else (0.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))
        out.append(Part("body", child, m, com, moments, joint, f"{beam.name}.{suffix}{k}", parent,
                        placement if idx == 0 else Placement(), child_placement if last else None, stiff,
                        tuple(beam.damping * c for c in stiff)))
        parent = child
    return out


def beam_parts(beam):
    """The bodies, joints, cut joint and frames that ``beam`` adds to a model, as :class:`Part` records in the
    order to add them (module docstring)."""
    n = beam.segments
    l = beam.segment_length
    sde = _sde_joints(beam)
    parts = []
    if beam.kind == "cable":
        # n equal links [k l, (k + 1) l], each frame at its inboard pin; the root is a pin too (no bending spring)
        for k in range(n):
            m, cx, moments = _element_inertia(beam, l, 0.0)
            props = (m, (cx, 0.0, 0.0), moments)
            if k == 0:
                root = [(s, j, tuple(0.0 for _ in c) if s == "bend" else c) for s, j, c in sde]
                if beam.root is not None:
                    root = [("root", beam.root, (0.0,) * beam.root.nv)]
                parts += _chain(beam, beam.body_name(0), beam.parent, beam.placement, None, root, 1.0 / l, props, 0)
            else:
                parts += _chain(beam, beam.body_name(k), beam.body_name(k - 1), Placement(translation=(l, 0.0, 0.0)),
                                None, sde, 1.0 / l, props, k)
        tip_x = l
    else:
        # element 0 = [0, l/2] at the root, k = [(k − ½) l, (k + ½) l], n = [L − l/2, L]; frames at x_k = k l
        for k in range(n + 1):
            lo, hi = max(0.0, (k - 0.5) * l), min(beam.length, (k + 0.5) * l)
            m, cx, moments = _element_inertia(beam, hi - lo, lo - k * l)
            props = (m, (cx, 0.0, 0.0), moments)
            if k == 0:
                joint = beam.root if beam.root is not None else Fixed()
                parts.append(Part("body", beam.body_name(0), *props, joint, f"{beam.name}.root", beam.parent,
                                  beam.placement, None, (0.0,) * joint.nv, (0.0,) * joint.nv))
            else:   # the elastic element at x = (k − ½) l: l/2 beyond the previous frame, l/2 before this one
                parts += _chain(beam, beam.body_name(k), beam.body_name(k - 1),
                                Placement(translation=(0.5 * l, 0.0, 0.0)), Placement(translation=(-0.5 * l, 0.0, 0.0)),
                                sde, 1.0 / l, props, k)
        tip_x = 0.0
    last = beam.element_bodies[-1]
    parts.append(Part("frame", beam.tip_frame, parent=last, placement=Placement(translation=(tip_x, 0.0, 0.0))))
    if beam.tip is not None:
        joint = beam.tip_joint if beam.tip_joint is not None else Fixed()
        parts.append(Part("cut", f"{beam.name}.tip_joint", joint=joint, joint_name=f"{beam.name}.tip_joint",
                          parent=beam.tip, placement=beam.tip_placement,
                          child_placement=Placement(translation=(tip_x, 0.0, 0.0))))
    return parts
