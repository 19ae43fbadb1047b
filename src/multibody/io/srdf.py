"""SRDF files (the Semantic Robot Description Format of MoveIt): the pairs of links whose collisions a robot's
makers disabled (``<disable_collisions link1 link2 reason>``: adjacent links, links that never meet, or that always
do), as pairs of body names for the collision queries' ``exclude`` (``multibody.contact.queries``), Pinocchio's
``removeCollisionPairs``.

A link merged into a body (a link fixed to its parent, ``multibody.io.urdf``) is named by its body; a pair of links
on one body is dropped (two elements of one body are never tried); a link the model does not have is reported by
name. Read with :mod:`xml.etree.ElementTree`; a document type definition is refused, as in URDF files.

Example
-------
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> _ = b.add_body("link1", mass=1.0, inertia=(0.01, 0.01, 0.01))
>>> _ = b.add_joint("j1", mb.Revolute(), "ground", "link1")
>>> text = '<robot name="r"><disable_collisions link1="ground" link2="link1" reason="Adjacent"/></robot>'
>>> srdf_disabled_pairs(text, b.build())
[('ground', 'link1')]
"""
import xml.etree.ElementTree as ET

from multibody.errors import ModelError
from multibody.io.documents import read_text

__all__ = ["srdf_disabled_pairs"]


def srdf_disabled_pairs(source, model):
    """The disabled collision pairs of an SRDF (a path, or the text of the file) as pairs of ``model``'s body names
    (module docstring)."""
    text = source if str(source).lstrip().startswith("<") else read_text(source)
    where = "SRDF text" if text is source else f"'{source}'"
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ModelError(f"{where}: a document type definition is not read (no entities are expanded)",
                         element=where)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise ModelError(f"{where}: not an XML document ({exc})", element=where) from None
    pairs, seen = [], set()
    for k, el in enumerate(root.iter("disable_collisions")):
        names = el.get("link1"), el.get("link2")
        if None in names:
            raise ModelError(f"{where}: disable_collisions[{k + 1}] needs link1 and link2", element=where)
        bodies = []
        for name in names:
            try:
                bodies.append(model.frame(name).body_name)
            except ModelError:
                raise ModelError(f"{where}: disable_collisions[{k + 1}] names link '{name}', which model "
                                 f"'{model.name}' does not have", element=f"link '{name}'") from None
        key = frozenset(bodies)
        if bodies[0] != bodies[1] and key not in seen:
            seen.add(key)
            pairs.append(tuple(bodies))
    return pairs
