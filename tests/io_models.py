"""Helpers of the model-file tests: the identity of two Models (what a file round trip must keep)."""
import numpy as np

from multibody.model.model import ARRAY_NAMES


def same_model(a, b, torque=True):
    """Assert that Models ``a`` and ``b`` are the same description: every packed array equal bit for bit, the
    constraint table, names, placements, springs, constraints' data, torque expressions (unless ``torque`` is
    False), metadata, joint limits, latches and releases, loads, beams and cables, frames, visual and collision
    elements."""
    assert a.name == b.name
    for key in ARRAY_NAMES:
        x, y = getattr(a, key), getattr(b, key)
        assert x.shape == y.shape and x.dtype == y.dtype, key
        assert np.array_equal(x, y), f"array '{key}' differs: max |Δ| = {np.abs(x - y).max()}"
    for key in ("ci", "cf", "pi", "pt", "owner", "level"):
        assert np.array_equal(getattr(a.constraint_table, key), getattr(b.constraint_table, key)), key
    assert a.constraint_table.row_names == b.constraint_table.row_names
    assert a.body_names == b.body_names and a.joint_names == b.joint_names
    assert [c.name for c in a.cut_joints] == [c.name for c in b.cut_joints]
    for ja, jb in zip(a.joints[1:] + a.cut_joints, b.joints[1:] + b.cut_joints):
        assert ja.joint == jb.joint and (ja.parent, ja.child) == (jb.parent, jb.child)
        for what in ("placement", "child_placement"):
            pa, pb = getattr(ja, what), getattr(jb, what)
            assert np.array_equal(pa.rotation, pb.rotation) and np.array_equal(pa.translation, pb.translation)
        assert (ja.q_slice, ja.v_slice) == (jb.q_slice, jb.v_slice)
    for fa, fb in zip(a.body_frames, b.body_frames):
        assert np.array_equal(fa.rotation, fb.rotation) and np.array_equal(fa.translation, fb.translation)
    assert [type(c).__name__ for c in a.constraints] == [type(c).__name__ for c in b.constraints]
    assert [c.name for c in a.constraints] == [c.name for c in b.constraints]
    if torque:
        assert repr(a.torque_callback) == repr(b.torque_callback)
    assert a.metadata == b.metadata
    for kind in ("limits", "latches", "releases"):   # the unilateral elements (multibody.model.unilateral)
        assert getattr(a.unilateral, kind) == getattr(b.unilateral, kind), kind
    assert [(x.name, x.body, x.as_dict()) for x in a.loads] == [(x.name, x.body, x.as_dict()) for x in b.loads]
    for x, y in zip(a.loads, b.loads):
        assert np.array_equal(x.point, y.point) and np.array_equal(x.axes, y.axes), x.name
    assert [(e.kind, e.name, e.segments) for e in a.elastic] == [(e.kind, e.name, e.segments) for e in b.elastic]
    for kind in ("frames", "visuals", "collisions"):
        ea, eb = getattr(a, kind), getattr(b, kind)
        assert [(e.name, e.body, e.body_name) for e in ea] == [(e.name, e.body, e.body_name) for e in eb], kind
        for x, y in zip(ea, eb):
            assert np.array_equal(x.placement.rotation, y.placement.rotation), x.name
            assert np.array_equal(x.placement.translation, y.placement.translation), x.name
            assert getattr(x, "shape", None) == getattr(y, "shape", None), x.name
            assert getattr(x, "color", None) == getattr(y, "color", None), x.name
            assert getattr(x, "friction", None) == getattr(y, "friction", None), x.name
