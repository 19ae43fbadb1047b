"""Dense matrix products in compiled code through BLAS (``dgemm`` of scipy's ``cython_blas``).

The kernels are compiled without numba's reference counting (``spatial.KERNEL``), where ``np.dot`` is not
available; they call the BLAS routine that scipy links (OpenBLAS in its wheels) by its address, which
``llvmlite`` binds to a symbol when this module is imported, so that the kernels that call it are cached on disk
like the others. A 30 x 30 product takes about a quarter of the time of the same triple loop written in the kernel
(measured: the loop does not vectorize, its arrays may alias).
"""
import llvmlite.binding as llvm
import numpy as np
from numba import njit, types
from numba.extending import get_cython_function_address

from multibody.kernels.spatial import KERNEL

_SYMBOL = "multibody_cython_blas_dgemm"
llvm.add_symbol(_SYMBOL, get_cython_function_address("scipy.linalg.cython_blas", "dgemm"))
_vp = types.voidptr
#: dgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc): Fortran BLAS, every argument a pointer
_dgemm = types.ExternalFunction(_SYMBOL, types.void(_vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp, _vp))

#: floats of the scratch that :func:`matmul` needs for the arguments it passes by address
MATMUL_SCRATCH = 6


@njit(**KERNEL)
def matmul(A, B, out, alpha, scratch):
    """out = alpha A B for C-contiguous float64 arrays A (m, k), B (k, n), out (m, n) (not overlapping);
    ``scratch``: ``MATMUL_SCRATCH`` floats. In BLAS's column-major terms, outᵀ = alpha Bᵀ Aᵀ."""
    m = A.shape[0]
    k = A.shape[1]
    n = B.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:
        for r in range(m):
            for c in range(n):
                out[r, c] = 0.0
        return
    scratch[0] = alpha
    scratch[1] = 0.0
    dims = scratch[2:5].view(np.int32)          # n, m, k (6 int32 slots in 3 floats)
    dims[0] = n
    dims[1] = m
    dims[2] = k
    op = scratch[5:6].view(np.uint8)
    op[0] = 78                                   # 'N': no transpose
    _dgemm(op.ctypes, op.ctypes, dims[0:1].ctypes, dims[1:2].ctypes, dims[2:3].ctypes, scratch[0:1].ctypes,
           B.ctypes, dims[0:1].ctypes, A.ctypes, dims[2:3].ctypes, scratch[1:2].ctypes, out.ctypes,
           dims[0:1].ctypes)
