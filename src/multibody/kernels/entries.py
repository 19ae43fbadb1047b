"""C-level entry points of the single-state algorithms: a control loop's calls without numba's argument handling.

A kernel called from Python through numba's entry point unboxes every array argument into a reference-counted view
(a MemInfo allocated per argument), and the public function in front of it checks each array's dtype and ndim and
allocates the output in Python. On a robot of six joints that was 0.2-0.35 µs of a 0.5-1 µs call, more than
Pinocchio's whole binding (``bench/robotics.bench_call_split``). Here each algorithm has a numba ``cfunc`` with
CPython's ``METH_FASTCALL`` signature::

    PyObject *entry(PyObject *held, PyObject *const *args, Py_ssize_t nargs)

made a Python builtin by ``PyCFunction_NewEx`` (:func:`bind`), ``held`` a tuple of the model's arrays (its Data,
``model/data.py``) after an int64 array of constants (:data:`C_NDARRAY` ...). The entry reads the headers of its
argument arrays directly (numpy's ``PyArrayObject_fields``: data, nd, dimensions, descr, flags), views them without
a MemInfo (``numba.carray``), allocates the output with numpy's ``PyArray_Empty`` (slot 184 of numpy's C-API table)
and calls the kernel. It takes an array only when it is exactly an ndarray of the native float64 dtype object (what
``q.dtype is np.dtype(np.float64)`` tests) and of the expected ndim, C-contiguous and aligned, and writeable for an
output; a frame when it is exactly an int (a handle) or exactly a str that the model's handles by name hold. Anything
else — another dtype, layout or subclass, a size that does not fit (the kernel's error code), an exception raised in
the kernel (a zero quaternion) — returns None and leaves no Python error set: the public function then takes its
general path, which converts the arguments or names what is wrong.

:func:`available` checks, once per process, that this interpreter lays objects out as the entries read them (64-bit
CPython with the GIL: the offsets of :data:`ARRAY_DATA` ... and of a tuple's size and items, read back through
``ctypes`` from objects of known contents) and that slot 184 makes an array. Where not, or with the environment
variable ``MULTIBODY_C_ENTRIES=0`` or numba's ``NUMBA_DISABLE_JIT``, :func:`bind` returns None and the public
functions keep their Python fast path (the kernels' numba entry points). The entries are compiled on first use, one
per kind of call, and cached like the kernels (``cache=True``; the install's warm-up compiles them).
"""
import ctypes
import functools
import os
import struct
import sys
import sysconfig

import llvmlite.ir as ir
import numpy as np
from numba import carray, cfunc, njit, types
from numba.core import config as numba_config
from numba.core import cgutils
from numba.extending import intrinsic

from multibody.kernels.aba import aba_kernel
from multibody.kernels.centroidal import centroidal_map_kernel, com_jacobian_kernel
from multibody.kernels.crba import crba_kernel
from multibody.kernels.derivatives import rnea_derivatives_kernel
from multibody.kernels.derivatives_aba import aba_derivatives_kernel
from multibody.kernels.derivatives_minv import minv_kernel
from multibody.kernels.frames import frame_jacobian_kernel, frame_placement_kernel
from multibody.kernels.rnea import rnea_kernel
from multibody.kernels.spatial import helper

#: offsets (bytes) in an ndarray's header (numpy's ``PyArrayObject_fields`` after ``PyObject_HEAD``), in a tuple
#: (its size, its first item) and in any object (its type); checked by :func:`available`
OB_TYPE, ARRAY_DATA, ARRAY_NDIM, ARRAY_DIMS, ARRAY_DESCR, ARRAY_FLAGS = 8, 16, 24, 32, 56, 64
TUPLE_SIZE, TUPLE_ITEMS = 16, 24
#: numpy's flags an input must have (C-contiguous, aligned) and an output besides (writeable)
INPUT_FLAGS, OUTPUT_FLAGS = 0x0001 | 0x0100, 0x0001 | 0x0100 | 0x0400
#: the slot of ``PyArray_Empty(nd, dims, descr, fortran)`` in numpy's C-API table (numpy 1.x and 2.x)
EMPTY_SLOT = 184
#: the entries of the constants array, ``held[0]``: the addresses of ndarray, of the float64 dtype, of None, of int,
#: of numpy's C-API table, the output's dimensions (the last one twice for a vector), which of its algorithms an entry
#: computes (:data:`KINDS`), and the addresses of str and tuple
C_NDARRAY, C_F64, C_NONE, C_INT, C_API, C_D0, C_D1, C_KIND, C_STR, C_TUPLE = range(10)
N_CONSTANTS = 10

_I8P, _I32, _I64 = ir.IntType(8).as_pointer(), ir.IntType(32), ir.IntType(64)


# ---- reading CPython objects from compiled code ------------------------------------------------------------------
@intrinsic
def _word(typingctx, address, offset):
    """The int64 at ``address + offset``."""
    def codegen(context, builder, sig, args):
        return builder.load(builder.inttoptr(builder.add(args[0], args[1]), _I64.as_pointer()))
    return types.int64(types.intp, types.intp), codegen


@intrinsic
def _int32(typingctx, address, offset):
    """The int32 at ``address + offset``, widened."""
    def codegen(context, builder, sig, args):
        return builder.sext(builder.load(builder.inttoptr(builder.add(args[0], args[1]), _I32.as_pointer())), _I64)
    return types.int64(types.intp, types.intp), codegen


@intrinsic
def _pointer(typingctx, address):
    """``address`` as a ``void *`` (what ``numba.carray`` views, given the dtype)."""
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(types.voidptr))
    return types.voidptr(types.intp), codegen


def _c_api_void(name):
    @intrinsic
    def call(typingctx, obj):
        def codegen(context, builder, sig, args):
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [_I8P]), name)
            builder.call(fn, [builder.inttoptr(args[0], _I8P)])
            return args[0]
        return types.intp(types.intp), codegen
    return call


#: ``Py_IncRef(obj)``, ``Py_DecRef(obj)``: each returns ``obj``
_incref, _decref = _c_api_void("Py_IncRef"), _c_api_void("Py_DecRef")


@intrinsic
def _as_int(typingctx, obj):
    """``PyLong_AsLongLongAndOverflow(obj, &overflow)`` of an exact int, and whether it overflowed (no error set)."""
    def codegen(context, builder, sig, args):
        overflow = cgutils.alloca_once_value(builder, ir.Constant(_I32, 0))
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I64, [_I8P, _I32.as_pointer()]),
                                            "PyLong_AsLongLongAndOverflow")
        value = builder.call(fn, [builder.inttoptr(args[0], _I8P), overflow])
        return context.make_tuple(builder, sig.return_type,
                                  [value, builder.icmp_signed("!=", builder.load(overflow), ir.Constant(_I32, 0))])
    return types.Tuple((types.int64, types.boolean))(types.intp), codegen


@intrinsic
def _lookup(typingctx, mapping, key):
    """``PyDict_GetItem(mapping, key)``: a borrowed reference, 0 when the key is missing (no error set)."""
    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I8P, [_I8P, _I8P]), "PyDict_GetItem")
        found = builder.call(fn, [builder.inttoptr(args[0], _I8P), builder.inttoptr(args[1], _I8P)])
        return builder.ptrtoint(found, _I64)
    return types.intp(types.intp, types.intp), codegen


def _tuple_codegen(context, builder, sig, args):
    """A new tuple of ``args`` (object addresses) that takes over their references (0 with MemoryError set, all
    dropped)."""
    new = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I8P, [_I64]), "PyTuple_New")
    put = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_I32, [_I8P, _I64, _I8P]), "PyTuple_SetItem")
    drop = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [_I8P]), "Py_DecRef")
    made = builder.call(new, [ir.Constant(_I64, len(args))])
    items = [builder.inttoptr(x, _I8P) for x in args]
    with builder.if_else(cgutils.is_null(builder, made)) as (failed, done):
        with failed:
            for item in items:
                builder.call(drop, [item])
        with done:
            for k, item in enumerate(items):
                builder.call(put, [made, ir.Constant(_I64, k), item])
    return builder.ptrtoint(made, _I64)


@intrinsic
def _pair(typingctx, first, second):
    """A new tuple ``(first, second)`` that takes over both references (:func:`_tuple_codegen`)."""
    return types.intp(types.intp, types.intp), _tuple_codegen


@intrinsic
def _triple(typingctx, first, second, third):
    """A new tuple ``(first, second, third)`` that takes over the three references (:func:`_tuple_codegen`)."""
    return types.intp(types.intp, types.intp, types.intp), _tuple_codegen


@intrinsic
def _new_array(typingctx, table, descr, ndim, d0, d1):
    """A new ndarray (a new reference; 0 with MemoryError set) of ``ndim`` (1 or 2) dimensions ``d0, d1`` and dtype
    ``descr``: ``PyArray_Empty`` from numpy's C-API ``table`` (it steals a reference to ``descr``: one is added)."""
    def codegen(context, builder, sig, args):
        table, descr, ndim, d0, d1 = args
        dims = cgutils.alloca_once(builder, _I64, size=2)
        builder.store(d0, dims)
        builder.store(d1, builder.gep(dims, [ir.Constant(_I32, 1)]))
        incref = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [_I8P]), "Py_IncRef")
        builder.call(incref, [builder.inttoptr(descr, _I8P)])
        fnty = ir.FunctionType(_I64, [_I32, _I64.as_pointer(), _I64, _I32])
        slot = builder.inttoptr(builder.add(table, ir.Constant(_I64, EMPTY_SLOT * 8)), fnty.as_pointer().as_pointer())
        return builder.call(builder.load(slot), [builder.trunc(ndim, _I32), dims, descr, ir.Constant(_I32, 0)])
    return types.intp(types.intp, types.intp, types.intp, types.intp, types.intp), codegen


# ---- the parts every entry shares ---------------------------------------------------------------------------------
@njit(inline="always")
def _constants(held):
    return _vector(_word(held, TUPLE_ITEMS), np.int64)


@helper
def _held(held, k):
    """Item ``k`` of the tuple ``held`` (a borrowed reference)."""
    return _word(held, TUPLE_ITEMS + 8 * k)


@helper
def _fits(obj, c, dtype, ndim, flags):
    """Whether ``obj`` is exactly an ndarray of the dtype object ``c[dtype]`` with ``ndim`` dimensions and ``flags``."""
    return (_word(obj, OB_TYPE) == c[C_NDARRAY] and _word(obj, ARRAY_DESCR) == c[dtype]
            and _int32(obj, ARRAY_NDIM) == ndim and (_int32(obj, ARRAY_FLAGS) & flags) == flags)


@njit(inline="always")
def _vector(obj, dtype=np.float64):
    """The data of the 1-D ndarray ``obj`` (checked by :func:`_fits`, or the model's own) as a view, no MemInfo."""
    return carray(_pointer(_word(obj, ARRAY_DATA)), (_word(_word(obj, ARRAY_DIMS), 0),), dtype)


@njit(inline="always")
def _matrix(obj, dtype=np.float64):
    """The data of the 2-D ndarray ``obj`` as a view, as :func:`_vector`."""
    dims = _word(obj, ARRAY_DIMS)
    return carray(_pointer(_word(obj, ARRAY_DATA)), (_word(dims, 0), _word(dims, 8)), dtype)


@helper
def _inputs(c, args, first, count):
    """Whether ``args[first:first + count]`` are float64 vectors the entries take."""
    for k in range(first, first + count):
        if not _fits(args[k], c, C_F64, 1, INPUT_FLAGS):
            return False
    return True


@helper
def _output(c, out, ndim):
    """The output array (a new reference): a new one of the constants' dimensions when ``out`` is None, ``out`` when
    it fits; 0 when the allocation failed (MemoryError set), -1 when ``out`` does not fit."""
    if out == c[C_NONE]:
        return _new_array(c[C_API], c[C_F64], ndim, c[C_D0], c[C_D1])
    if _fits(out, c, C_F64, ndim, OUTPUT_FLAGS):
        return _incref(out)
    return -1


@helper
def _miss(c, out):
    """None (a new reference) after dropping the output ``out`` (a new reference, or -1 for none)."""
    if out > 0:
        _decref(out)
    return _incref(c[C_NONE])


@helper
def _result(c, out, err):
    """``out`` when the kernel returned 0, else None (module docstring)."""
    return out if err == 0 else _miss(c, out)


#: ``PyObject *(PyObject *held, PyObject *const *args, Py_ssize_t nargs)`` with objects as addresses
SIGNATURE = types.intp(types.intp, types.CPointer(types.intp), types.intp)


# ---- the entries: (model arrays) + arguments -> a new array or None -------------------------------------------------
def dynamics_entry(held, args, nargs):
    """``entry(q, v, x, out)`` with ``held = (constants, mi, mf, no_fext, work)``: q̈ of ``aba`` (x = τ) or τ of
    ``rnea`` (x = q̈) as the constant :data:`C_KIND` says (:data:`KINDS`; ``kernels/aba.py``, ``kernels/rnea.py``)."""
    c = _constants(held)
    if nargs != 4 or not _inputs(c, args, 0, 3):
        return _miss(c, -1)
    out = _output(c, args[3], 1)
    if out <= 0:
        return out if out == 0 else _miss(c, out)
    mi, mf, no_fext, work = (_matrix(_held(held, 1), np.int64), _matrix(_held(held, 2)), _matrix(_held(held, 3)),
                             _vector(_held(held, 4)))
    try:
        if c[C_KIND] == 0:
            err = aba_kernel(mi, mf, _vector(args[0]), _vector(args[1]), _vector(args[2]), no_fext, work,
                             _vector(out))
        else:
            err = rnea_kernel(mi, mf, _vector(args[0]), _vector(args[1]), _vector(args[2]), no_fext, work,
                              _vector(out))
    except Exception:  # noqa: BLE001 - the general path meets it again and names it
        err = -1
    return _result(c, out, err)


def configuration_entry(held, args, nargs):
    """``entry(q, out)`` with ``held = (constants, mi, mf, work)``: M of ``crba``, A_G of ``centroidal_map``, J_c of
    ``com_jacobian``, or with ``held = (constants, mi, mf, work, dwork, dint)`` M⁻¹ of ``minv``, as :data:`C_KIND`
    says (``kernels/crba.py``, ``kernels/centroidal.py``, ``kernels/derivatives_minv.py``)."""
    c = _constants(held)
    if nargs != 2 or not _inputs(c, args, 0, 1):
        return _miss(c, -1)
    out = _output(c, args[1], 2)
    if out <= 0:
        return out if out == 0 else _miss(c, out)
    mi, mf, q, work, result = (_matrix(_held(held, 1), np.int64), _matrix(_held(held, 2)), _vector(args[0]),
                               _vector(_held(held, 3)), _matrix(out))
    try:
        kind = c[C_KIND]
        if kind == 0:
            err = crba_kernel(mi, mf, q, work, result)
        elif kind == 1:
            err = centroidal_map_kernel(mi, mf, q, work, result)
        elif kind == 2:
            err = com_jacobian_kernel(mi, mf, q, work, result)
        else:
            err = minv_kernel(mi, mf, q, work, _vector(_held(held, 4)), _vector(_held(held, 5), np.int64), result)
    except Exception:  # noqa: BLE001
        err = -1
    return _result(c, out, err)


@helper
def _frame(c, frame, ids):
    """The handle of ``frame`` — an exact int, or a str looked up in the dict ``ids`` — and whether it is one."""
    if _word(frame, OB_TYPE) == c[C_STR]:
        frame = _lookup(ids, frame)
        if frame == 0:
            return 0, False
    if _word(frame, OB_TYPE) != c[C_INT]:
        return 0, False
    handle, overflow = _as_int(frame)
    return handle, not overflow


def frame_jacobian_entry(held, args, nargs):
    """``frame_jacobian(q, frame, reference, out)`` with ``held = (constants, mi, mf, fi, ff, work, ids)``: the frame a
    handle or a name of ``ids``, the reference a code (an exact int; ``kernels/frames.py``)."""
    c = _constants(held)
    if nargs != 4 or not _inputs(c, args, 0, 1) or _word(args[2], OB_TYPE) != c[C_INT]:
        return _miss(c, -1)
    frame, named = _frame(c, args[1], _held(held, 6))
    reference, overflow = _as_int(args[2])
    if not named or overflow:
        return _miss(c, -1)
    out = _output(c, args[3], 2)
    if out <= 0:
        return out if out == 0 else _miss(c, out)
    try:
        err = frame_jacobian_kernel(_matrix(_held(held, 1), np.int64), _matrix(_held(held, 2)),
                                    _matrix(_held(held, 3), np.int64),
                                    _matrix(_held(held, 4)), _vector(args[0]), _vector(_held(held, 5)), frame,
                                    reference, _matrix(out))
    except Exception:  # noqa: BLE001
        err = -1
    return _result(c, out, err)


def frame_placement_entry(held, args, nargs):
    """``frame_placement(q, frame, out)`` with ``held`` as :func:`frame_jacobian_entry`'s: a new tuple ``(R, p)``
    (3 x 3, 3) when ``out`` is None, else ``out`` itself, a tuple of two such arrays, written
    (``kernels/frames.py``)."""
    c = _constants(held)
    if nargs != 3 or not _inputs(c, args, 0, 1):
        return _miss(c, -1)
    frame, named = _frame(c, args[1], _held(held, 6))
    if not named:
        return _miss(c, -1)
    given = args[2]
    if given == c[C_NONE]:
        R = _new_array(c[C_API], c[C_F64], 2, 3, 3)
        if R == 0:
            return 0
        p = _new_array(c[C_API], c[C_F64], 1, 3, 3)
        if p == 0:
            _decref(R)
            return 0
    elif (_word(given, OB_TYPE) == c[C_TUPLE] and _word(given, TUPLE_SIZE) == 2
          and _fits(_held(given, 0), c, C_F64, 2, OUTPUT_FLAGS) and _fits(_held(given, 1), c, C_F64, 1, OUTPUT_FLAGS)):
        R, p = _held(given, 0), _held(given, 1)
    else:
        return _miss(c, -1)
    try:
        err = frame_placement_kernel(_matrix(_held(held, 1), np.int64), _matrix(_held(held, 2)),
                                     _matrix(_held(held, 3), np.int64),
                                     _matrix(_held(held, 4)), _vector(args[0]), _vector(_held(held, 5)), frame,
                                     _matrix(R), _vector(p))
    except Exception:  # noqa: BLE001
        err = -1
    if given != c[C_NONE]:
        return _incref(given) if err == 0 else _miss(c, -1)
    if err != 0:
        _decref(p)
        return _miss(c, R)
    return _pair(R, p)


def derivatives_entry(held, args, nargs):
    """``entry(q, v, x)`` with ``held = (constants, mi, mf, no_fext, work, dwork, dint, qdd)``: a new tuple of the
    three (nv, nv) derivatives of ``rnea_derivatives`` (x = q̈) or of ``aba_derivatives`` (x = τ) as :data:`C_KIND`
    says (``kernels/derivatives.py``, ``kernels/derivatives_aba.py``)."""
    c = _constants(held)
    if nargs != 3 or not _inputs(c, args, 0, 3):
        return _miss(c, -1)
    A = _new_array(c[C_API], c[C_F64], 2, c[C_D0], c[C_D1])
    if A == 0:
        return 0
    B = _new_array(c[C_API], c[C_F64], 2, c[C_D0], c[C_D1])
    if B == 0:
        _decref(A)
        return 0
    C = _new_array(c[C_API], c[C_F64], 2, c[C_D0], c[C_D1])
    if C == 0:
        _decref(A)
        _decref(B)
        return 0
    mi, mf, no_fext, work = (_matrix(_held(held, 1), np.int64), _matrix(_held(held, 2)), _matrix(_held(held, 3)),
                             _vector(_held(held, 4)))
    dwork, dint, qdd = _vector(_held(held, 5)), _vector(_held(held, 6), np.int64), _vector(_held(held, 7))
    try:
        if c[C_KIND] == 0:
            err = rnea_derivatives_kernel(mi, mf, _vector(args[0]), _vector(args[1]), _vector(args[2]), no_fext, work,
                                          dwork, qdd, _matrix(A), _matrix(B), _matrix(C))
        else:
            err = aba_derivatives_kernel(mi, mf, _vector(args[0]), _vector(args[1]), _vector(args[2]), no_fext, work,
                                         dwork, dint, qdd, _matrix(A), _matrix(B), _matrix(C))
    except Exception:  # noqa: BLE001
        err = -1
    if err != 0:
        _decref(B)
        _decref(C)
        return _miss(c, A)
    return _triple(A, B, C)


#: per algorithm: (its entry, its kind (:data:`C_KIND`), its output's ndim)
KINDS = {"aba": (dynamics_entry, 0, 1), "rnea": (dynamics_entry, 1, 1), "crba": (configuration_entry, 0, 2),
         "centroidal_map": (configuration_entry, 1, 2), "com_jacobian": (configuration_entry, 2, 2),
         "minv": (configuration_entry, 3, 2), "frame_jacobian": (frame_jacobian_entry, 0, 2),
         "frame_placement": (frame_placement_entry, 0, 2), "rnea_derivatives": (derivatives_entry, 0, 2),
         "aba_derivatives": (derivatives_entry, 1, 2)}


# ---- making them Python builtins ------------------------------------------------------------------------------------
class _MethodDef(ctypes.Structure):
    """CPython's ``PyMethodDef``."""
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p), ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


_METH_FASTCALL = 0x0080


def _array_api_table():
    """The address of numpy's C-API table (the capsule ``_ARRAY_API``), or None."""
    try:
        from numpy._core import _multiarray_umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath
    capsule = getattr(_multiarray_umath, "_ARRAY_API", None)
    if capsule is None:
        return None
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_void_p, [ctypes.py_object]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_void_p]
    return pointer(capsule, name(capsule)) or None


@functools.lru_cache(maxsize=1)
def available():
    """The address of numpy's C-API table when this process can use the entries (module docstring), else None."""
    if os.environ.get("MULTIBODY_C_ENTRIES", "1") == "0" or numba_config.DISABLE_JIT:
        return None
    if (sys.implementation.name != "cpython" or struct.calcsize("P") != 8
            or sysconfig.get_config_var("Py_GIL_DISABLED")):
        return None
    try:
        table = _array_api_table()
        if table is None:
            return None
        word = lambda address: ctypes.c_int64.from_address(address).value  # noqa: E731
        int32 = lambda address: ctypes.c_int32.from_address(address).value  # noqa: E731
        a = np.zeros((2, 3))
        held = (a, 7)
        a_ = id(a)
        if not (word(a_ + OB_TYPE) == id(np.ndarray) and word(a_ + ARRAY_DATA) == a.ctypes.data
                and int32(a_ + ARRAY_NDIM) == 2 and word(word(a_ + ARRAY_DIMS)) == 2
                and word(word(a_ + ARRAY_DIMS) + 8) == 3 and word(a_ + ARRAY_DESCR) == id(a.dtype)
                and int32(a_ + ARRAY_FLAGS) == a.flags.num and word(id(held) + TUPLE_ITEMS) == id(a)
                and word(id(held) + TUPLE_ITEMS + 8) == id(7) and word(id(held) + TUPLE_SIZE) == 2):
            return None
        empty = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.c_void_p,
                                 ctypes.c_int)(word(table + EMPTY_SLOT * 8))
        f64 = np.dtype(np.float64)
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(f64))
        made = empty(2, (ctypes.c_int64 * 2)(4, 5), id(f64), 0)
        if made.__class__ is not np.ndarray or made.shape != (4, 5) or made.dtype is not f64 or not made.flags.carray:
            return None
    except (AttributeError, ImportError, OSError, TypeError, ValueError):
        return None
    return table


@functools.lru_cache(maxsize=None)
def _compiled(entry):
    """The cfunc of ``entry`` (compiled, or loaded from the cache, on first use)."""
    return cfunc(SIGNATURE, cache=True)(entry)


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype, _new_function.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.py_object,
                                                                   ctypes.py_object]
#: the method definitions of the builtins made (CPython keeps a pointer to them)
_DEFINITIONS = {}


def bind(algorithm, arrays, shape):
    """The builtin entry of ``algorithm`` (a key of :data:`KINDS`) over the model's ``arrays`` (the ``held`` of its
    entry after the constants), making outputs of ``shape`` (one or two dimensions); None where the entries are not
    available (:func:`available`)."""
    table = available()
    if table is None:
        return None
    entry, kind, ndim = KINDS[algorithm]
    assert len(shape) == ndim
    compiled = _compiled(entry)
    definition = _DEFINITIONS.get(algorithm)
    if definition is None:
        definition = _DEFINITIONS[algorithm] = _MethodDef(algorithm.encode(), compiled.address, _METH_FASTCALL, None)
    constants = np.zeros(N_CONSTANTS, dtype=np.int64)
    constants[[C_NDARRAY, C_F64, C_NONE, C_INT, C_API, C_KIND, C_STR, C_TUPLE]] = (
        id(np.ndarray), id(np.dtype(np.float64)), id(None), id(int), table, kind, id(str), id(tuple))
    constants[C_D0] = shape[0]
    constants[C_D1] = shape[-1]
    return _new_function(ctypes.addressof(definition), (constants, *arrays), None)
