"""Calls between compiled functions by address (``multibody.kernels.addresses``): a large kernel is called through
a slot of its caller, not linked into it; a small one is linked; the numbers are those of the direct call, in this
process and in a new one that loads the cached callers; a stale callee is refused, not called."""
import ctypes
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from numba import njit, types

import multibody as mb
from multibody.algorithms.dynamics import data_at
from multibody.kernels import addresses
from multibody.kernels.aba import aba_kernel
from multibody.kernels.ltl import ltl_solve
from models import sprung_model

TESTS = os.path.dirname(os.path.abspath(__file__))


@njit
def aba_twice(mi, mf, q, v, tau, fext, work, out):
    """Two calls of the ABA kernel from compiled code (the second on the first's result)."""
    err = aba_kernel(mi, mf, q, v, tau, fext, work, out)
    first = out.copy()
    err += aba_kernel(mi, mf, q, v, first, fext, work, out)
    return err, first


@njit
def solve_in_place(L, path, inv, x):
    ltl_solve(L, path, inv, x)


def _arguments(seed):
    model = sprung_model()
    rng = np.random.default_rng(seed)
    q = model.neutral() + 0.0
    q[:1] += rng.uniform(-1, 1, 1)
    v = rng.normal(size=model.nv)
    tau = rng.normal(size=model.nv)
    d = data_at(model, None)
    return model, q, v, tau, d


@pytest.mark.parametrize("seed", [0, 1])
def test_large_kernel_goes_by_address_with_the_same_bits(seed):
    model, q, v, tau, d = _arguments(seed)
    out = np.empty(model.nv)
    err, first = aba_twice(d.mi, d.mf, q, v, tau, d.no_fext, d.work, out)
    assert err == 0
    assert np.array_equal(first, mb.aba(model, q, v, tau))
    assert np.array_equal(out, mb.aba(model, q, v, first))
    llvm = next(iter(aba_twice.inspect_llvm().values()))
    assert addresses.RESOLVER in llvm and "multibody.slot." in llvm
    name = aba_kernel.overloads[next(iter(aba_kernel.overloads))].fndesc.llvm_func_name
    assert not any(line.startswith("define") and name in line for line in llvm.splitlines())


def test_an_error_raised_by_address_reaches_the_caller():
    """numba's status and exception pass through the slot as through a linked call: a zero quaternion divides by
    zero inside the ABA kernel, and the compiled caller raises the same error."""
    model, q, v, tau, d = _arguments(0)
    q[3:7] = 0.0                                   # the spherical joint 'jc'
    with pytest.raises(ZeroDivisionError):
        aba_twice(d.mi, d.mf, q, v, tau, d.no_fext, d.work, np.empty(model.nv))


def test_small_kernel_is_linked():
    L = np.array([[2.0, 0.0], [1.0, 4.0]])
    path = np.array([3, 3, 4, 0], dtype=np.uint64)        # (kernels.ltl.dof_paths: coordinate 1's parent is 0)
    x = np.array([2.0, 9.0])
    solve_in_place(L, path, 1.0 / np.diag(L), x)
    assert np.array_equal(x, [1.0, 2.0])
    llvm = next(iter(solve_in_place.inspect_llvm().values()))
    assert "multibody.slot." not in llvm and addresses.RESOLVER not in llvm       # linked (and inlined by LLVM)


def test_a_new_process_loads_the_cached_callers():
    """The ABA derivatives in a fresh process run their cached callers, whose slots are filled there by key, and
    give the bits of this process."""
    code = (f"import numpy as np, multibody as mb, sys; sys.path.insert(0, {TESTS!r}); from models import sprung_model;"
            "m = sprung_model(); q = m.neutral(); v = np.linspace(-1, 1, m.nv);"
            "print(float(mb.aba_derivatives(m, q, v, np.ones(m.nv))[0].sum()).hex())")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    m = sprung_model()
    q = m.neutral()
    v = np.linspace(-1, 1, m.nv)
    assert float.fromhex(there) == mb.aba_derivatives(m, q, v, np.ones(m.nv))[0].sum()


def test_a_stale_callee_is_refused():
    """A key whose return type no longer matches (a callee changed under a cached caller): the callback returns 0
    (the caller then raises RuntimeError) instead of the address of a function of another layout."""
    model, q, v, tau, d = _arguments(0)
    aba_twice(d.mi, d.mf, q, v, tau, d.no_fext, d.work, np.empty(model.nv))    # the kernel compiled or loaded here
    args = next(iter(aba_kernel.overloads))
    good = pickle.dumps(("multibody.kernels.aba", "aba_kernel", args, types.int64), protocol=4)
    stale = pickle.dumps(("multibody.kernels.aba", "aba_kernel", args, types.float64), protocol=4)
    resolve = ctypes.cast(addresses._address, ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64))
    assert resolve(good, len(good)) == addresses.callee(good) != 0
    with pytest.raises(TypeError, match="returns int64, its caller expects float64"):
        addresses.callee(stale)
    assert not resolve(stale, len(stale))
