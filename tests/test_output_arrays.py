"""``out=``: the calls of a control loop write into a preallocated array (``algorithms.dynamics``, module docstring).

The result written into ``out`` is the result returned without it, bit for bit, on the fast path (float64 arrays,
the Data cached on the model or given), on the slow path (other inputs, a moving base) and for any tree; ``out``
itself is returned; a wrong ``out`` (shape, dtype, layout, read-only, not an array) is a ModelError naming ``out``
and leaves it as it was.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from models import tree_with_tool
from multibody.bench.dynamics import random_tree_builder
from multibody.errors import ModelError


def _calls(model, q, v, a):
    """``{name: (function of out, shape of the result)}`` for every call that takes ``out``."""
    nv, nf, tool = model.nv, len(model.frame_names), model.frame_id("tool")
    return {
        "rnea": (lambda out=None, **k: mb.rnea(model, q, v, a, out=out, **k), (nv,)),
        "aba": (lambda out=None, **k: mb.aba(model, q, v, a, out=out, **k), (nv,)),
        "crba": (lambda out=None, **k: mb.crba(model, q, out=out, **k), (nv, nv)),
        "minv": (lambda out=None, t=None, **k: mb.minv(model, q, out=out, **k), (nv, nv)),   # M⁻¹ is the same at any t
        "frame_jacobian": (lambda out=None, **k: mb.frame_jacobian(model, q, tool, "world", out=out, **k), (6, nv)),
        "frame_jacobians": (lambda out=None, **k: mb.frame_jacobians(model, q, out=out, **k), (nf, 6, nv)),
        "centroidal_map": (lambda out=None, **k: mb.centroidal_map(model, q, out=out, **k), (6, nv)),
        "com_jacobian": (lambda out=None, **k: mb.com_jacobian(model, q, out=out, **k), (3, nv)),
    }


def _same_with_out(model, q, v, a, **kw):
    for name, (f, shape) in _calls(model, q, v, a).items():
        want = f(**kw)
        out = np.full(shape, np.nan)
        assert f(out=out, **kw) is out, name
        assert want.shape == shape and np.array_equal(out, want), name
    R, p = mb.frame_placement(model, q, "tool", **kw)
    pair = (np.full((3, 3), np.nan), np.full(3, np.nan))
    assert mb.frame_placement(model, q, "tool", out=pair, **kw) is pair
    assert np.array_equal(pair[0], R) and np.array_equal(pair[1], p)


@given(n=st.integers(1, 8), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=10, deadline=None, derandomize=True, database=None)
def test_out_gives_the_same_bits(n, seed):
    """On random trees: the fast path (float64 arrays; the cached Data, then a Data given), the slow path (lists)
    and the fast and slow paths against each other."""
    model, q, v, a = tree_with_tool(n, seed)
    _same_with_out(model, q, v, a)
    _same_with_out(model, q, v, a, data=mb.Data(model))
    _same_with_out(model, list(q), list(v), list(a))
    for name, (f, _) in _calls(model, q, v, a).items():
        slow = _calls(model, list(q), list(v), list(a))[name][0]
        assert np.array_equal(f(), slow()), name


def test_out_with_a_moving_base():
    """A moving base takes the slow path (its state is written before each kernel): out is written all the same."""
    base = mb.BaseMotion(lambda t: ((0.3 * t, np.sin(t), 0.0), mb.rotation_about((0, 0, 1), 0.5 * t * t),
                                    (0.3, np.cos(t), 0.0), (0.0, 0.0, t), (0.0, -np.sin(t), 0.0), (0.0, 0.0, 1.0)))
    model, q, v, a = tree_with_tool(4, 3, base_motion=base)
    _same_with_out(model, q, v, a, t=0.7)


def test_out_may_be_an_input_of_rnea_and_aba():
    """Every input of rnea and aba is read before the result is written: out may be q, v or a (τ) itself (a tree of
    joints with nq = nv, several of them with more than one coordinate)."""
    rng = np.random.default_rng(11)
    model = random_tree_builder(8, rng, joint_types=("Revolute", "Universal", "Cylindrical", "Planar"))[0].build()
    assert model.nq == model.nv
    q, v, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    for f in (mb.rnea, mb.aba):
        want = f(model, q, v, a)
        for k in range(3):
            args = [x.copy() for x in (q, v, a)]
            assert np.array_equal(f(model, *args, out=args[k]), want)


@pytest.fixture(scope="module")
def small():
    return tree_with_tool(3, 1)


def _bad_outs(shape):
    ro = np.zeros(shape)
    ro.flags.writeable = False
    wide = np.zeros(shape[:-1] + (2 * shape[-1],))
    return {"shape": (np.zeros(shape[:-1] + (shape[-1] + 1,)), "shape"),
            "ndim": (np.zeros((1,) + shape), "shape"),
            "float32": (np.zeros(shape, np.float32), "dtype float32"),
            "int64": (np.zeros(shape, np.int64), "dtype int64"),
            "big-endian": (np.zeros(shape, ">f8"), "dtype >f8"),
            "Fortran": (np.zeros(shape, order="F"), "non-contiguous") if len(shape) > 1 else None,
            "strided": (wide[..., ::2], "non-contiguous"),
            "reversed": (np.zeros(shape)[::-1], "non-contiguous") if shape[0] > 1 else None,
            "read-only": (ro, "read-only"),
            "list": (np.zeros(shape).tolist(), "list")}


@pytest.mark.parametrize("call", ["rnea", "aba", "crba", "minv", "frame_jacobian", "frame_jacobians", "centroidal_map",
                                  "com_jacobian"])
def test_a_wrong_out_is_named(small, call):
    """Each wrong out (fast path and slow path) is a ModelError naming out and what was expected; nothing is
    written into it."""
    model, q, v, a = small
    for inputs in ((q, v, a), (list(q), list(v), list(a))):
        f, shape = _calls(model, *inputs)[call]
        for case, (out, got) in ((k, c) for k, c in _bad_outs(shape).items() if c is not None):
            before = np.array(out, copy=True)
            with pytest.raises(ModelError, match=f"out must be a writeable C-contiguous float64 array of shape "
                                                 rf"\({shape[0]},.*got .*{got}") as err:
                f(out=out)
            assert err.value.element == "out", case
            assert np.array_equal(np.asarray(out), before), case


def test_a_wrong_placement_out_is_named(small):
    model, q, _, _ = small
    with pytest.raises(ModelError, match=r"out must be a tuple \(R, p\)") as err:
        mb.frame_placement(model, q, "tool", out=[np.zeros((3, 3)), np.zeros(3)])
    assert err.value.element == "out"
    for k, (R, p) in enumerate([(np.zeros((3, 3), np.float32), np.zeros(3)), (np.zeros((3, 3)), np.zeros(4))]):
        with pytest.raises(ModelError, match=rf"out\[{k}\] \({'Rp'[k]}\) must be") as err:
            mb.frame_placement(model, q, "tool", out=(R, p))
        assert err.value.element.startswith(f"out[{k}]")
