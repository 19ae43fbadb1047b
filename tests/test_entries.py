"""The C-level entries of the single-state algorithms (``kernels/entries.py``): the same bits as the Python paths,
a miss (None, no error left set) for everything they do not take, no reference leaked, none pickled.

The three paths of a call are compared on random trees of every joint type: the entry (no ``data``), the Python fast
path (the same Data given) and the general path (lists, converted): one kernel, the same arithmetic, so the same bits.
"""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from models import tree_with_tool
from multibody.bench.dynamics import random_tree_builder
from multibody.errors import ModelError
from multibody.kernels import entries
from multibody.model.data import ENTRY_ALGORITHMS, ENTRY_ATTRS, default_data, no_entry

_BUILTIN = type(len)


class _Subclass(np.ndarray):
    """An ndarray subclass: the entries take exact ndarrays only."""


def _calls(model, q, v, a):
    """``{algorithm: function of (q, v, a, data)}`` for every algorithm with an entry."""
    tool = model.frame_id("tool")
    return {"aba": lambda q, v, a, d: mb.aba(model, q, v, a, data=d),
            "rnea": lambda q, v, a, d: mb.rnea(model, q, v, a, data=d),
            "crba": lambda q, v, a, d: mb.crba(model, q, data=d),
            "centroidal_map": lambda q, v, a, d: mb.centroidal_map(model, q, data=d),
            "com_jacobian": lambda q, v, a, d: mb.com_jacobian(model, q, data=d),
            "minv": lambda q, v, a, d: mb.minv(model, q, data=d),
            "frame_jacobian": lambda q, v, a, d: mb.frame_jacobian(model, q, tool, "world", data=d),
            "frame_placement": lambda q, v, a, d: np.concatenate([x.ravel() for x in mb.frame_placement(
                model, q, "tool", data=d)]),
            "rnea_derivatives": lambda q, v, a, d: np.stack(mb.rnea_derivatives(model, q, v, a, data=d)),
            "aba_derivatives": lambda q, v, a, d: np.stack(mb.aba_derivatives(model, q, v, a, data=d))}


def test_the_entries_are_available_on_this_interpreter():
    """64-bit CPython with the GIL: the layout checks pass (a machine where they did not would fall back silently,
    so the suite says it)."""
    if sys.implementation.name != "cpython" or sys.maxsize < 2**63 - 1:
        pytest.skip("entries exist on 64-bit CPython only")
    assert entries.available() is not None
    assert set(entries.KINDS) == set(ENTRY_ALGORITHMS)


@given(n=st.integers(1, 7), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=12, deadline=None, derandomize=True, database=None)
def test_an_entry_gives_the_bits_of_the_python_paths(n, seed):
    """Random trees (every joint type): the entry's result, the Python fast path's (the Data given) and the general
    path's (q, v, a as lists) are the same bits; the entry is a builtin that took the call (not a miss)."""
    model, q, v, a = tree_with_tool(n, seed)
    d = default_data(model)
    for name, f in _calls(model, q, v, a).items():
        ours = f(q, v, a, None)
        entry = model.__dict__["_multibody_entry_" + name]
        assert entry.__class__ is _BUILTIN, name
        assert np.array_equal(ours, f(q, v, a, d)), name
        assert np.array_equal(ours, f(list(q), list(v), list(a), None)), name
        assert ours.flags.owndata and ours.flags.writeable and ours.flags.c_contiguous
        again = f(q, v, a, None)
        assert again is not ours and not np.shares_memory(again, ours) and np.array_equal(again, ours), name


@pytest.fixture(scope="module")
def arm():
    """A random tree of revolute and spherical joints with every entry bound, at a state."""
    model, q, v, a = tree_with_tool(4, 7, joint_types=("Revolute", "Spherical"))
    for f in _calls(model, q, v, a).values():
        f(q, v, a, None)
    return model, q, v, a


def _entry(model, name):
    return model.__dict__["_multibody_entry_" + name]


def test_what_an_entry_does_not_take_is_a_miss(arm):
    """Another dtype, ndim, layout or subclass of q, an output of another dtype, shape, order or read-only, a frame
    that is not an exact int in range, a reference code out of range, a wrong count of arguments: None, with no
    Python error left set (a builtin returning with one set would raise SystemError here)."""
    model, q, v, a = arm
    nv = model.nv
    crba, rnea, jac = _entry(model, "crba"), _entry(model, "rnea"), _entry(model, "frame_jacobian")
    tool = model.frame_id("tool")
    assert crba(q, None) is not None and rnea(q, v, a, None) is not None and jac(q, tool, 0, None) is not None
    read_only = np.zeros((nv, nv))
    read_only.flags.writeable = False
    misses_q = [q.astype(np.float32), q.astype(np.int64), q[:-1], q.reshape(1, -1), np.repeat(q, 2)[::2], list(q),
                q.astype(q.dtype.newbyteorder()), q.view(_Subclass)]
    for bad in misses_q:
        assert crba(bad, None) is None
        assert rnea(bad, v, a, None) is None
    for bad in (np.zeros((nv, nv), np.float32), np.zeros((nv, nv + 1)), np.zeros((nv + 1, nv), order="F")[:nv],
                read_only, np.zeros((2 * nv, nv))[::2], np.zeros(nv * nv), np.zeros((nv, nv)).view(_Subclass), "out"):
        assert crba(q, bad) is None
    assert np.array_equal(jac(q, "tool", 0, None), jac(q, tool, 0, None))    # a name is looked up
    for frame in ("no such frame", True, 2**70, -1, 10**6, 2.0, None, ["tool"]):
        assert jac(q, frame, 0, None) is None
    assert jac(q, tool, 7, None) is None and jac(q, tool, 2**70, None) is None
    placement = _entry(model, "frame_placement")
    R, p = placement(q, "tool", None)
    pair = (np.empty((3, 3)), np.empty(3))
    assert placement(q, tool, pair) is pair and np.array_equal(pair[0], R) and np.array_equal(pair[1], p)
    for bad in ([R, p], (R, p, p), (R,), (p, R), (R.T, p), (R, p[::2]), (R.astype(np.float32), p), "out"):
        assert placement(q, tool, bad) is None
    assert crba(q) is None and crba(q, None, None) is None and rnea(q, v, None) is None
    assert crba(q, None) is not None    # still takes calls after the misses


def test_the_public_calls_answer_misses_as_before(arm):
    """Through the public functions a miss takes the general path: converted inputs give the same bits, wrong ones
    the same ModelError as with the Data given (the Python path)."""
    model, q, v, a = arm
    d = default_data(model)
    for f in _calls(model, q, v, a).values():
        q32 = q.astype(np.float32)
        assert np.array_equal(f(q32, v, a, None), f(q32, v, a, d))
        for bad in (q[:-1], np.full_like(q, np.nan)[:0]):
            with pytest.raises(ModelError) as ours:
                f(bad, v, a, None)
            with pytest.raises(ModelError) as theirs:
                f(bad, v, a, d)
            assert str(ours.value) == str(theirs.value)
    for reference in ("world", "local", "local_world_aligned"):
        assert np.array_equal(mb.frame_jacobian(model, q, "tool", reference),
                              mb.frame_jacobian(model, q, model.frame_id("tool"), reference))
    with pytest.raises(ModelError, match="out"):
        mb.crba(model, q, out=np.zeros((model.nv, model.nv), np.float32))


def test_a_zero_quaternion_is_named_as_on_the_python_path():
    """An exception raised in the kernel (a zero quaternion divides by zero) is a miss in the entry; the general path
    then names it, as it does when the Data is given."""
    model, q, v, a = tree_with_tool(3, 11, joint_types=("Free", "Revolute"))
    mb.crba(model, q)
    bad = q.copy()
    bad[3:7] = 0.0
    d = default_data(model)
    for f in _calls(model, q, v, a).values():
        try:
            f(bad, v, a, d)
        except Exception as theirs:  # noqa: BLE001 - whatever the Python path raises, the entry's call raises too
            with pytest.raises(type(theirs)) as ours:
                f(bad, v, a, None)
            assert str(ours.value) == str(theirs)
        else:
            assert np.array_equal(f(bad, v, a, None), f(bad, v, a, d))


def test_entries_keep_no_references(arm):
    """Hits and misses, new outputs and given ones: the reference counts of the arguments are as before."""
    model, q, v, a = arm
    crba, rnea, jac = _entry(model, "crba"), _entry(model, "rnea"), _entry(model, "frame_jacobian")
    M, tau, tool = np.empty((model.nv, model.nv)), np.empty(model.nv), model.frame_id("tool")
    q32 = q.astype(np.float32)
    placement, pair = _entry(model, "frame_placement"), (np.empty((3, 3)), np.empty(3))
    objects = (q, v, a, M, tau, q32, *pair, pair)
    before = [sys.getrefcount(x) for x in objects]
    derivatives = _entry(model, "aba_derivatives")
    for _ in range(2000):
        derivatives(q, v, a)
        derivatives(q[:-1], v, a)
        derivatives(q32, v, a)
        placement(q, "tool", None)
        placement(q, tool, pair)
        placement(q, "nothing", pair)
        placement(q, tool, (pair[0], pair[0]))
        crba(q, M)
        crba(q, None)
        crba(q32, None)
        crba(q, tau)
        rnea(q, v, a, tau)
        rnea(q, v, a, None)
        jac(q, tool, 0, None)
    assert [sys.getrefcount(x) for x in objects] == before
    assert sys.getrefcount(crba(q, None)) == sys.getrefcount(np.empty(3))
    made, fresh = derivatives(q, v, a), (np.empty(3), np.empty(3), np.empty(3))
    assert [sys.getrefcount(x) for x in made] == [sys.getrefcount(x) for x in fresh]
    assert crba(q, M) is M


def test_a_pickled_model_leaves_its_entries_behind(arm):
    """The entries are builtins over this process's memory: a pickled model drops them and binds its own."""
    model, q, v, a = arm
    assert all(attr in model.__dict__ for attr in ENTRY_ATTRS)
    copy = pickle.loads(pickle.dumps(model))
    assert not any(attr in copy.__dict__ for attr in ENTRY_ATTRS)
    assert np.array_equal(mb.crba(copy, q), mb.crba(model, q))
    assert _entry(copy, "crba").__class__ is _BUILTIN


def test_models_without_a_fast_path_get_the_stand_in():
    """A moving base needs a step before each kernel of aba and rnea: no entry for them (the stand-in), the general
    path at the time given; crba, which a moving base does not change, keeps its entry."""
    rng = np.random.default_rng(5)
    b, _ = random_tree_builder(3, rng, joint_types=("Revolute", "Spherical"),
                               base_motion=mb.BaseMotion.harmonic((1, 0, 0), 0.2, 3.0))
    model = b.build()
    q, v, a = model.random_configuration(rng), rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    d = default_data(model)
    for t in (0.0, 0.3):
        assert np.array_equal(mb.rnea(model, q, v, a, t=t), mb.rnea(model, q, v, a, t=t, data=d))
        assert np.array_equal(mb.aba(model, q, v, a, t=t), mb.aba(model, q, v, a, t=t, data=d))
    assert _entry(model, "rnea") is no_entry and _entry(model, "aba") is no_entry
    assert np.array_equal(mb.crba(model, q), mb.crba(model, q, data=d))
    assert _entry(model, "crba").__class__ is _BUILTIN


def test_turned_off_the_python_paths_answer():
    """``MULTIBODY_C_ENTRIES=0``: every algorithm gets the stand-in and the same bits (in a new process)."""
    code = ("import numpy as np, multibody as mb\n"
            "from multibody.model.data import no_entry\n"
            "from multibody.systems.pendulums import triple_pendulum_seed001\n"
            "m = triple_pendulum_seed001(); q = np.array([0.3, -0.2, 0.1])\n"
            "M = mb.crba(m, q); print(m.__dict__['_multibody_entry_crba'] is no_entry, M.tobytes().hex())\n")
    env = dict(os.environ, MULTIBODY_C_ENTRIES="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    off, bits = out.stdout.split()
    from multibody.systems.pendulums import triple_pendulum_seed001

    assert off == "True"
    assert bytes.fromhex(bits) == mb.crba(triple_pendulum_seed001(), np.array([0.3, -0.2, 0.1])).tobytes()
