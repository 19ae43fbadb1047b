"""Views of a flat workspace as 2-D and 3-D arrays, without a call.

The kernels cut their flat float workspaces into arrays of rows (``kinematics.workspace_views``, the derivatives'
``derivative_views``, ...). numba's ``reshape`` does it by calling a C function of its runtime
(``numba_attempt_nocopy_reshape``) that handles every layout: about 11 ns a view, a tenth of the whole
frame-Jacobian kernel of a six-joint arm, which makes two to eight views per call. A slice of a contiguous vector
needs none of that: :func:`rows_view` builds the array's header in place (data pointer, shape, strides), so LLVM
sees plain arithmetic.

>>> import numpy as np
>>> from numba import njit
>>> @njit
... def corner(work):
...     return rows_view(work[:6], (3,))[1, 2] + rows_view(work, (2, 3))[1, 0, 0]
>>> corner(np.arange(12.0))
11.0
"""
from numba import types
from numba.core.extending import intrinsic
from numba.core.imputils import impl_ret_borrowed
from numba.np.arrayobj import make_array, populate_array


@intrinsic
def rows_view(typingctx, vector, trailing):
    """The C-contiguous vector ``vector`` as an array of shape ``(len(vector) // prod(trailing),) + trailing``
    (``trailing``: a tuple of one or two ints), sharing its memory. The leading size is what the vector holds, so the
    view never reaches past it: slice the vector to the rows wanted (``work[:n * width]``)."""
    if not (isinstance(vector, types.Array) and vector.ndim == 1 and vector.layout == "C"
            and isinstance(trailing, types.UniTuple) and isinstance(trailing.dtype, types.Integer)
            and 1 <= trailing.count <= 2):
        return None
    out_type = vector.copy(ndim=1 + trailing.count, layout="C")

    def codegen(context, builder, sig, args):
        vec = make_array(sig.args[0])(context, builder, args[0])
        dims = [context.cast(builder, builder.extract_value(args[1], k), trailing.dtype, types.intp)
                for k in range(trailing.count)]
        block = dims[0] if len(dims) == 1 else builder.mul(dims[0], dims[1])
        zero = context.get_constant(types.intp, 0)
        # a zero-width block holds no rows (and no division by zero)
        safe = builder.select(builder.icmp_signed("==", block, zero), context.get_constant(types.intp, 1), block)
        rows = builder.select(builder.icmp_signed("==", block, zero), zero,
                              builder.sdiv(builder.extract_value(vec.shape, 0), safe))
        shape = [rows] + dims
        strides = [vec.itemsize]
        for d in reversed(dims):
            strides.insert(0, builder.mul(strides[0], d))
        out = make_array(out_type)(context, builder)
        populate_array(out, data=vec.data, shape=shape, strides=strides, itemsize=vec.itemsize,
                       meminfo=vec.meminfo, parent=vec.parent)
        return impl_ret_borrowed(context, builder, out_type, out._getvalue())

    return out_type(vector, trailing), codegen
