"""Calls between compiled functions by address: a kernel's code compiled once, not again in every caller.

numba compiles a function with the code of every compiled function it calls linked into its module, and
optimizes and emits the linked module again (numba's ``CodeLibrary.finalize``). A loop that calls the tree's
kernels therefore pays for them once more, and so does its cache entry, which holds the linked code and its
bitcode: measured on the install's warm-up, the linked modules were 57 % of the compilation and most of the
wheel (``docs/first-use.md``, "Where the install's CPU goes").

A function of the package's dispatcher (``@njit(**KERNEL)`` or ``@njit(**COMPILED)``,
:class:`~multibody.kernels.spatial.KernelDispatcher`) whose optimized code is large (:data:`LINKED_BELOW`) is
called from other compiled code through a pointer instead: each caller's module holds one slot per callee, a
pointer that is null in a new process. The first call through a slot asks :func:`_address` (a C callback
registered with LLVM under :data:`RESOLVER`) for the callee, with a key written into the caller: the callee's
module, qualified name, argument and return types. The callback loads the callee as a call from Python would
(numba's cache, or a compilation) and returns the address of its compiled function, the one numba's linked call
would reach; the slot keeps it. Later calls cost a load, a test and an indirect call (nanoseconds, against the
microseconds of a pass over the bodies). The arguments, the result and a raised error (numba's status and
exception) pass exactly as in numba's linked call, so the numbers are the same bits.

What the caller no longer does is inline a large callee, which LLVM would not inline anyway. A small one is
linked as before, and so are the :func:`~multibody.kernels.spatial.helper` functions (the 6-D arithmetic inside
the loops), the functions LLVM is told to inline (``forceinline``), a call with a function or dispatcher
argument, and the functions outside the package (a generated module may not be importable by name elsewhere).

A cached caller names its callees by key, not by numba's symbol (which carries an id of the compiling process),
so a callee compiled again, in another process or after its source changed, is found by the same key, and no
order of loading matters; a callee whose return type changed is refused rather than called with another layout.
The cache entries (:class:`SlimFunctionCache`) keep a stand-in for a large callee's bitcode (it is never linked)
and no type annotation text.
"""
import ctypes
import importlib
import pickle
import sys
import threading

from llvmlite import binding as ll
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.caching import CompileResultCacheImpl, FunctionCache
from numba.core.imputils import fix_returning_optional, impl_ret_borrowed, impl_ret_new_ref, user_function
from numba.extending import intrinsic

from multibody.cache import package_fingerprint

#: the size (LLVM instructions of the callee's optimized function, its own callees inlined) from which a call goes
#: by address; a smaller callee is linked, as numba does, for LLVM to inline it (a triangular solve, a line of the
#: row solver): compiled again in each caller, it costs little. Measured side by side from empty caches (the first
#: cases, contact and the formulations in one process): 150 compiled 4 % less and made Solo12's contact step 6–8 %
#: slower; 600 compiled 9 % more with no faster step
LINKED_BELOW = 300

#: the name under which the compiled callers find :func:`_address`
RESOLVER = "multibody_address_of_callee"

_addresses = {}
_lock = threading.RLock()


def callee(key):
    """The compiled function named by ``key`` (pickled ``(module, qualname, argument types, return type)``): its
    dispatcher loads or compiles it for those types; returns the address of numba's compiled function. A
    callee whose return type is no longer the one its caller was compiled for (a source changed under a cached
    caller) raises :class:`TypeError` instead of being called with another layout."""
    module, qualname, args, restype = pickle.loads(key)
    dispatcher = importlib.import_module(module)
    for part in qualname.split("."):
        dispatcher = getattr(dispatcher, part)
    dispatcher.compile(args)
    cres = dispatcher.overloads[args]
    if cres.signature.return_type != restype:
        raise TypeError(f"{module}.{qualname}{args} returns {cres.signature.return_type}, its caller expects "
                        f"{restype}: clear the stale numba cache of the caller")
    return cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)


@ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
def _address(key, size):
    """The C callback behind a null slot (ctypes takes the GIL): the callee's address, or 0 after printing why
    it could not be had (the caller then raises)."""
    data = ctypes.string_at(key, size)
    with _lock:
        address = _addresses.get(data)
        if address is None:
            try:
                address = _addresses[data] = callee(data)
            except BaseException:          # nothing may cross the C boundary; the caller raises instead
                sys.excepthook(*sys.exc_info())
                return 0
    return address


ll.add_symbol(RESOLVER, ctypes.cast(_address, ctypes.c_void_p).value)


def reachable(dispatcher):
    """Whether ``dispatcher`` is a function of the package found again by its module and qualified name (what a
    key names; a generated module may not be importable by name in another process)."""
    func = dispatcher.py_func
    if not func.__module__.startswith("multibody."):
        return False
    try:
        obj = sys.modules[func.__module__]
        for part in func.__qualname__.split("."):
            obj = getattr(obj, part)
    except (KeyError, AttributeError):
        return False
    return obj is dispatcher


def nameable(ty):
    """Whether an argument type can be written into a key and read back in another process as the same type: not
    a function or a dispatcher (nor a tuple holding one), whose identity is an object of this process."""
    if isinstance(ty, (types.Dispatcher, types.Function, types.FunctionType, types.ExternalFunctionPointer,
                       types.WrapperAddressProtocol)):
        return False
    if isinstance(ty, types.BaseTuple):
        return all(nameable(t) for t in ty.types)
    return True


def instructions(cres):
    """The number of LLVM instructions of ``cres``'s optimized function (its callees inlined); a callee loaded
    with a :func:`stand_in` counts as large (:data:`LINKED_BELOW`)."""
    library = cres.library
    module = library._shared_module or library._final_module
    try:
        function = module.get_function(cres.fndesc.llvm_func_name)
    except NameError:
        return LINKED_BELOW
    return sum(1 for block in function.blocks for _ in block.instructions)


def stand_in(module):
    """The bitcode numba's cache stores beside a large callee's machine code, instead of its whole module: numba
    keeps the module to link the function into callers (which call it by address instead) and reads from it the
    names the library defines (``_load_defined_symbols``: the Python and C wrappers found by name), so the
    stand-in defines those names, as bytes that are never compiled (and, having no function, it counts as large
    in :func:`instructions`). The bitcode was most of a large callee's cache entry, about twice its machine code."""
    names = [f.name for f in module.functions if not f.is_declaration]
    names += [g.name for g in module.global_variables if not g.is_declaration]
    quoted = (n.replace("\\", "\\5c").replace('"', "\\22") for n in names)
    return ll.parse_assembly("".join(f'@"{n}" = global i8 0\n' for n in quoted)).as_bitcode()


class SlimCacheImpl(CompileResultCacheImpl):
    """numba's cache entry of a compiled function without what the package never reads back: the text of numba's
    type annotation (``inspect_types``' listing, 10 of the wheel's 34 MB of cache entries, and a listing printed
    at every save), and the bitcode of a large callee, which is only ever called by address (:func:`stand_in`).

    Its entries are keyed on the whole package, not only on the function's own source file as numba keys them
    (``multibody.cache.package_fingerprint``: every ``.py`` file of the package and numba's version). A function
    holds the code of the helpers it inlines, which live in other files — the stepping loop holds the step, its
    rows and its solver's assembly — and numba would load its old machine code after one of them changed (a
    source tree's ``__pycache__`` after an edit: the tests would run the old step). An installed package does not
    change, and its entries keep loading."""

    def __init__(self, py_func):
        super().__init__(py_func)
        own = self._locator.get_source_stamp
        self._locator.get_source_stamp = lambda: (own(), package_fingerprint())

    def reduce(self, cres):
        payload = list(cres._reduce())
        if len(payload) == 9 and isinstance(payload[6], str):      # numba's CompileResult._reduce (0.59 and on)
            payload[6] = "(the type annotation is not kept in multibody's cache)"
        if getattr(cres.library, "multibody_stand_in", False):
            library = cres.library
            payload[0] = library.name, "object", (library._get_compiled_object(), stand_in(library._final_module))
        return tuple(payload)


class SlimFunctionCache(FunctionCache):
    """numba's on-disk cache of a function's compile results, written by :class:`SlimCacheImpl`."""
    _impl_class = SlimCacheImpl


def route_calls(dispatcher, cres):
    """Make compiled callers of ``cres`` (just added to ``dispatcher``) call it through :func:`call_by_address`
    instead of numba's linked call, where it can be named by a key."""
    impl = call_by_address(dispatcher, cres)
    if impl is not None:
        context = dispatcher.targetctx
        context.remove_user_function(cres.entry_point)          # numba's user_function, linking the library
        context._defns[cres.entry_point].append(impl, impl.signature)


def slot_address(context, builder, key, slot_name, qualname):
    """The address held by the caller's slot ``slot_name`` (an ``i8*``): on its first use (null) asked of the
    resolver by ``key`` and kept; a null answer raises ``RuntimeError`` in the caller."""
    module = builder.module
    pointer = ir.IntType(8).as_pointer()
    slot = module.globals.get(slot_name)
    if slot is None:
        slot = ir.GlobalVariable(module, pointer, slot_name)
        slot.linkage = "internal"
        slot.initializer = ir.Constant(pointer, None)
    address = builder.load_atomic(slot, "monotonic", 8)
    with builder.if_then(cgutils.is_null(builder, address), likely=False):
        resolver = cgutils.get_or_insert_function(
            module, ir.FunctionType(pointer, [pointer, ir.IntType(64)]), RESOLVER)
        text = context.insert_const_bytes(module, key)
        found = builder.call(resolver, [text, ir.Constant(ir.IntType(64), len(key))])
        with builder.if_then(cgutils.is_null(builder, found), likely=False):
            context.call_conv.return_user_exc(
                builder, RuntimeError, (f"multibody: could not load the compiled {qualname}",))
        builder.store_atomic(found, slot, "monotonic", 8)
    return builder.load_atomic(slot, "monotonic", 8)


def call_by_address(dispatcher, cres):
    """numba's implementation of a call to ``cres`` (``numba.core.imputils.user_function``) made through a slot
    of the caller instead of a linked library; ``None`` when the dispatcher cannot be named by a key."""
    if not reachable(dispatcher):
        return None
    fndesc = cres.fndesc
    args = tuple(cres.signature.args)
    if not all(nameable(a) for a in args):
        return None
    try:
        key = pickle.dumps((dispatcher.py_func.__module__, dispatcher.py_func.__qualname__, args,
                            cres.signature.return_type), protocol=4)
        if pickle.loads(key)[2:] != (args, cres.signature.return_type):
            return None
    except Exception:                      # an argument type that does not pickle: linked
        return None
    slot_name = "multibody.slot." + fndesc.mangled_name
    library = cres.library
    size = []
    if library._shared_module is None:                 # compiled now, not loaded: its cache entry is written next
        size.append(instructions(cres))
        library.multibody_stand_in = size[0] >= LINKED_BELOW

    def imp(context, builder, sig, values, loc=None):
        if not size:
            size.append(instructions(cres))
        if size[0] < LINKED_BELOW:
            imp.libs = (library,)
            return user_function(fndesc, imp.libs)(context, builder, sig, values)
        address = slot_address(context, builder, key, slot_name, fndesc.qualname)
        fnty = context.call_conv.get_function_type(fndesc.restype, fndesc.argtypes)
        function = builder.bitcast(address, fnty.as_pointer())
        status, result = context.call_conv.call_function(builder, function, fndesc.restype, fndesc.argtypes,
                                                         values)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        result = fix_returning_optional(context, builder, sig, status, result)
        return impl_ret_new_ref(context, builder, fndesc.restype, result)

    imp.signature = fndesc.argtypes
    imp.libs = ()
    return imp


# ---- a loop compiled once for many functions: their addresses as arguments -------------------------------------
# A compiled loop that calls a function given as a global is compiled again for every function (the fixed-step
# loops, one per formulation). Written with these, the loop is compiled once: it receives the addresses of the
# functions (``function_address``, taken by their caller) and a pointer to their parameters (``pointer_to``,
# passed on as an ``opaque`` pointer), and calls them with ``call_at``; each function reads its parameters back
# with ``pointee``. The calls use numba's calling convention, so a raised error propagates as in a direct call.

@intrinsic
def function_address(typingctx, function, args):
    """The address (int64) of numba's compiled ``function`` (a dispatcher given as a global) for the types of the
    tuple ``args``, compiled or loaded as a call would; held in a slot of the caller, filled on its first use by
    key (module, qualified name, argument and return types: the function's module must be importable by name,
    e.g. in ``sys.modules``)."""
    if not isinstance(function, types.Dispatcher) or not isinstance(args, types.BaseTuple):
        return None
    dispatcher = function.dispatcher
    argtypes = tuple(args.types)
    dispatcher.compile(argtypes)
    cres = dispatcher.overloads[argtypes]
    key = pickle.dumps((dispatcher.py_func.__module__, dispatcher.py_func.__qualname__, argtypes,
                        cres.signature.return_type), protocol=4)
    slot_name = "multibody.slot." + cres.fndesc.mangled_name

    def codegen(context, builder, sig, values):
        address = slot_address(context, builder, key, slot_name, cres.fndesc.qualname)
        return builder.ptrtoint(address, ir.IntType(64))
    return types.int64(function, args), codegen


@intrinsic
def call_at(typingctx, address, args):
    """Call the compiled function at ``address`` (:func:`function_address`; it returns nothing) with the arguments
    of the tuple ``args``, in numba's calling convention: an error it raises propagates. Each argument's type must
    pass as the function's own (an :func:`opaque` pointer for a ``CPointer``, arrays of its dimensions and dtype)."""
    if not isinstance(address, types.Integer) or not isinstance(args, types.BaseTuple):
        return None

    def codegen(context, builder, sig, values):
        argtypes = tuple(args.types)
        items = cgutils.unpack_tuple(builder, values[1], len(argtypes))
        fnty = context.call_conv.get_function_type(types.none, argtypes)
        function = builder.inttoptr(values[0], fnty.as_pointer())
        status, _ = context.call_conv.call_function(builder, function, types.none, argtypes, items)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return context.get_dummy_value()
    return types.none(address, args), codegen


@intrinsic
def pointer_to(typingctx, value):
    """A pointer to a copy of ``value`` on the caller's stack, valid while the caller runs (no reference taken: the
    caller holds ``value``)."""
    def codegen(context, builder, sig, args):
        slot = cgutils.alloca_once(builder, context.get_value_type(value))
        builder.store(args[0], slot)
        return builder.bitcast(slot, context.get_value_type(sig.return_type))
    return types.CPointer(value)(value), codegen


@intrinsic
def pointee(typingctx, pointer):
    """The value at a pointer made by :func:`pointer_to` (a new reference)."""
    if not isinstance(pointer, types.CPointer):
        return None
    ty = pointer.dtype

    def codegen(context, builder, sig, args):
        value = builder.load(builder.bitcast(args[0], context.get_value_type(ty).as_pointer()))
        return impl_ret_borrowed(context, builder, ty, value)
    return ty(pointer), codegen


@intrinsic
def opaque(typingctx, pointer):
    """A :func:`pointer_to` pointer as ``void *``, for a loop compiled once for the values of many types."""
    if not isinstance(pointer, types.CPointer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(types.voidptr))
    return types.voidptr(pointer), codegen
