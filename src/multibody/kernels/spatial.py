"""6-D spatial algebra, scalar-unrolled, for the O(N) kernels.

Conventions (``docs/model-arrays.md``): spatial vectors are ``[angular; linear]``. A motion vector
``m = [ω; v]`` and a force vector ``f = [n; f]`` are in Plücker coordinates of some frame; the kernels use the
ground frame ("world convention"), so spatial quantities of different bodies add without transforms and
the only transforms are those of the joints (R. Featherstone, *Rigid Body Dynamics Algorithms* (RBDA),
Springer 2008, ch. 2; seed 001 §3.4: angular and linear partial velocities of the bodies).

Every helper is a :func:`helper` (compiled once, inlined by LLVM into the kernels) and works on tuples of
floats (3-tuples, 9-tuples of a 3x3 matrix in row-major order, 6-tuples of spatial vectors) or on one row of a
2-D workspace array, so kernel loops contain no numpy temporaries. Symmetric 6x6 matrices (spatial and
articulated inertias) are stored as the 21 entries of their upper triangle, row by row (``SYM6_INDEX`` gives
the packing).
"""
import math

import numpy as np
from numba import config as numba_config
from numba import njit, types
from numba.core.registry import CPUDispatcher
from numba.core.target_extension import CPU, dispatcher_registry, target_registry

from multibody.kernels.addresses import SlimFunctionCache, route_calls

#: SYM6_INDEX[r, c] = position of entry (r, c) of a symmetric 6x6 matrix in its 21-entry packed row
SYM6_INDEX = np.zeros((6, 6), dtype=np.int64)
_k = 0
for _r in range(6):
    for _c in range(_r, 6):
        SYM6_INDEX[_r, _c] = SYM6_INDEX[_c, _r] = _k
        _k += 1
del _k, _r, _c

#: numba-IR inlining (``@njit(inline=INLINE)``), still used by the functions that return arrays (a caller with
#: NRT counts the references of a returned array, which a :func:`helper`, compiled without NRT, does not), by
#: a few functions with two call sites whose callees would otherwise go once more through LLVM, and by the parts
#: of a large function called from it alone (the time step's parts: ``contact/stepping_solver.py``): numba compiles
#: each function of its own with the code of every function it calls linked in and optimized again, so a part that
#: calls the contact solver was the solver compiled once more (``_push``: 3.6 CPU s of the install), where inlined
#: it is typed and lowered once in its caller (the time step's 13 parts: 6 CPU s less, the step's speed the same)
INLINE = "always"

#: options of the helpers made by :func:`helper`
HELPER = dict(nopython=True, _nrt=False, forceinline=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)


class KernelDispatcher(CPUDispatcher):
    """The dispatcher of the kernels (``@njit(**KERNEL)``) and the helpers: numba's, except that a call from compiled
    code that passes a constant (a column offset such as B_V, a flag, a level) compiles the function for the
    constant's type (int64, bool), not once per distinct value: numba would otherwise compile a specialization per
    literal value (measured on the warm-up: 16 CPU s of its compilations were such copies). A large function is
    called from other compiled code by address instead of being linked into it, and its cache entries are slimmer
    (:mod:`multibody.kernels.addresses`)."""

    #: whether other compiled code calls this function through its address (:mod:`multibody.kernels.addresses`)
    #: instead of linking its code; the helpers are linked, to be inlined
    by_address = True

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(types.unliteral(a) for a in args),
                                         {k: types.unliteral(a) for k, a in kws.items()})

    def enable_caching(self):
        self._cache = SlimFunctionCache(self.py_func)

    def add_overload(self, cres):
        super().add_overload(cres)
        if self.by_address and not cres.objectmode and not self.targetoptions.get("forceinline"):
            route_calls(self, cres)


class KernelTarget(CPU):
    """numba's CPU target under the name ``"multibody_kernel"``, whose dispatcher is :class:`KernelDispatcher`
    (``njit(_target=...)`` picks a function's dispatcher by its target's name; numba's target-extension registry)."""


target_registry["multibody_kernel"] = KernelTarget
dispatcher_registry[KernelTarget] = KernelDispatcher


class HelperDispatcher(KernelDispatcher):
    """The dispatcher of a :func:`helper`: :class:`KernelDispatcher`, except that a call from Python runs a twin
    compiled with a Python entry point (on the first such call; the helper itself has none, see :func:`helper`)."""

    by_address = False

    def __call__(self, *args, **kws):
        twin = self.__dict__.get("_python_twin")
        if twin is None:
            twin = self._python_twin = njit(self.py_func)
        return twin(*args, **kws)


def helper(func=None, *, inline=True):
    """``@helper``: a small function of the kernels (3x3 / 6x6 arithmetic, one step of a pass over the bodies),
    compiled once per argument types as a function of its own and inlined by LLVM wherever it is called
    (``forceinline``: LLVM's ``alwaysinline``), so that the kernels run as if it were written out in them.
    ``@helper(inline=False)``: the same, left to LLVM to inline or not (the rarely taken branches of the
    kernels: general joints, joints of several coordinates).

    The alternative, numba's own inlining (``@njit(inline="always")``), types and lowers a copy of the helper,
    and of every helper it calls, at each call site of each kernel: measured on a fresh install, the first
    ``aba`` took 14 s with it and 6 s with helpers, the first ``rnea`` after it 6 s and 0.7 s. A helper has no
    Python entry point (with the CPython and C wrappers of its 45 helpers, the first ``aba`` took 2 s longer):
    a call from Python runs a twin that has one (``HelperDispatcher``). Compiled without NRT, as the kernels are
    (``KERNEL``), so a helper must not allocate or return arrays; cached on disk."""
    if func is None:
        return lambda f: helper(f, inline=inline)
    if numba_config.DISABLE_JIT:
        return func
    disp = HelperDispatcher(py_func=func, locals={}, targetoptions=dict(HELPER, forceinline=inline))
    disp.enable_caching()
    return disp


#: options of every compiled kernel that allocates no array (all but the batches' slice kernels): cached on
#: disk, and compiled without numba's reference counting of arrays (NRT). With it, every array a kernel
#: receives, slices or hands to a helper is counted (a call and an atomic add on entry and again on exit):
#: measured on ABA, that was half of the time per body at N = 100 and most of a call at N = 5, and from
#: Python it costs one more allocation per array argument. Such a kernel cannot allocate (numba refuses to
#: compile ``np.empty`` in it), which is what the performance rules ask anyway; the caller owns the arrays. Its
#: dispatcher is a :class:`KernelDispatcher` (one specialization per argument types, not per constant value).
KERNEL = dict(cache=True, _nrt=False, _target="multibody_kernel")

#: options of the package's other compiled functions (those that allocate arrays or hold the loops, compiled with
#: reference counting): cached on disk by the kernels' dispatcher, so that they too are called by address from
#: compiled code and cached without numba's type annotation (:mod:`multibody.kernels.addresses`)
COMPILED = dict(cache=True, _target="multibody_kernel")


# ---- 3-vectors and 3x3 matrices ---------------------------------------------------------------------------
@helper
def cross3(a0, a1, a2, b0, b1, b2):
    """a × b."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@helper
def unit_perpendicular(a0, a1, a2):
    """A unit vector perpendicular to a (a non-zero)."""
    if abs(a0) <= abs(a1) and abs(a0) <= abs(a2):
        p0, p1, p2 = cross3(a0, a1, a2, 1.0, 0.0, 0.0)
    elif abs(a1) <= abs(a2):
        p0, p1, p2 = cross3(a0, a1, a2, 0.0, 1.0, 0.0)
    else:
        p0, p1, p2 = cross3(a0, a1, a2, 0.0, 0.0, 1.0)
    s = 1.0 / math.sqrt(p0 * p0 + p1 * p1 + p2 * p2)
    return p0 * s, p1 * s, p2 * s


@helper
def load3(arr, i):
    """Row i of an (n, 3) array as a 3-tuple."""
    return arr[i, 0], arr[i, 1], arr[i, 2]


@helper
def load6(arr, i, o):
    """Entries o..o+5 of row i of a 2-D array as a 6-tuple (a spatial vector)."""
    return arr[i, o], arr[i, o + 1], arr[i, o + 2], arr[i, o + 3], arr[i, o + 4], arr[i, o + 5]


@helper
def store6(arr, i, o, x):
    """arr[i, o:o+6] = the 6-tuple x."""
    arr[i, o] = x[0]
    arr[i, o + 1] = x[1]
    arr[i, o + 2] = x[2]
    arr[i, o + 3] = x[3]
    arr[i, o + 4] = x[4]
    arr[i, o + 5] = x[5]


@helper
def load9(arr, i):
    """Row i of an (n, 9) array (a row-major 3x3 matrix) as a 9-tuple."""
    return (arr[i, 0], arr[i, 1], arr[i, 2], arr[i, 3], arr[i, 4], arr[i, 5], arr[i, 6], arr[i, 7],
            arr[i, 8])


@helper
def store_placement(R, p0, p1, p2, R_out, p_out):
    """R_out (3 x 3) = R (a row-major 9-tuple), p_out (3) = (p0, p1, p2)."""
    for r in range(3):
        for c in range(3):
            R_out[r, c] = R[3 * r + c]
    p_out[0] = p0
    p_out[1] = p1
    p_out[2] = p2


@helper
def mat3_mul(A, B):
    """A B for row-major 9-tuples."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
            A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
            A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
            A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@helper
def mat3_vec(A, x0, x1, x2):
    """A x."""
    return (A[0] * x0 + A[1] * x1 + A[2] * x2,
            A[3] * x0 + A[4] * x1 + A[5] * x2,
            A[6] * x0 + A[7] * x1 + A[8] * x2)


@helper
def mat3T_vec(A, x0, x1, x2):
    """Aᵀ x."""
    return (A[0] * x0 + A[3] * x1 + A[6] * x2,
            A[1] * x0 + A[4] * x1 + A[7] * x2,
            A[2] * x0 + A[5] * x1 + A[8] * x2)


@helper
def mat3_T(A):
    """Aᵀ."""
    return A[0], A[3], A[6], A[1], A[4], A[7], A[2], A[5], A[8]


@helper
def skew(p0, p1, p2):
    """p̃, the matrix of p × (row-major)."""
    return 0.0, -p2, p1, p2, 0.0, -p0, -p1, p0, 0.0


@helper
def rotation_axis_angle(a0, a1, a2, c, s):
    """rot(a, θ) from the unit axis a, c = cos θ, s = sin θ (Rodrigues: E cos θ + (1 − cos θ) a aᵀ + sin θ ã)."""
    t = 1.0 - c
    ta0 = t * a0
    ta1 = t * a1
    return (ta0 * a0 + c, ta0 * a1 - s * a2, ta0 * a2 + s * a1,
            ta0 * a1 + s * a2, ta1 * a1 + c, ta1 * a2 - s * a0,
            ta0 * a2 - s * a1, ta1 * a2 + s * a0, t * a2 * a2 + c)


@helper
def mat3_times_axis_rotation(A, axis, c, s):
    """A rot(±e_k, θ) for ``axis`` = ±(k + 1) (a coordinate axis, k = 0, 1, 2) from c = cos θ, s = sin θ.

    rot(e_k, θ) keeps column k of A and turns the other two, (k+1) and (k+2) mod 3, in their plane:
    12 products where ``mat3_mul`` with the full rotation takes 27 (Pinocchio's RX/RY/RZ joints likewise)."""
    if axis < 0:
        s = -s
    k = abs(axis) - 1
    if k == 0:
        return (A[0], c * A[1] + s * A[2], c * A[2] - s * A[1],
                A[3], c * A[4] + s * A[5], c * A[5] - s * A[4],
                A[6], c * A[7] + s * A[8], c * A[8] - s * A[7])
    if k == 1:
        return (c * A[0] - s * A[2], A[1], c * A[2] + s * A[0],
                c * A[3] - s * A[5], A[4], c * A[5] + s * A[3],
                c * A[6] - s * A[8], A[7], c * A[8] + s * A[6])
    return (c * A[0] + s * A[1], c * A[1] - s * A[0], A[2],
            c * A[3] + s * A[4], c * A[4] - s * A[3], A[5],
            c * A[6] + s * A[7], c * A[7] - s * A[6], A[8])


@helper
def rotation_z(c, s):
    """rot(z, θ) from c = cos θ, s = sin θ."""
    return (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0)


@helper
def rotate_sym3(R, I):
    """R I Rᵀ for a symmetric I given as (xx, xy, xz, yy, yz, zz); returns the same packing."""
    # B = R I (full 3x3)
    b0 = R[0] * I[0] + R[1] * I[1] + R[2] * I[2]
    b1 = R[0] * I[1] + R[1] * I[3] + R[2] * I[4]
    b2 = R[0] * I[2] + R[1] * I[4] + R[2] * I[5]
    b3 = R[3] * I[0] + R[4] * I[1] + R[5] * I[2]
    b4 = R[3] * I[1] + R[4] * I[3] + R[5] * I[4]
    b5 = R[3] * I[2] + R[4] * I[4] + R[5] * I[5]
    b6 = R[6] * I[0] + R[7] * I[1] + R[8] * I[2]
    b7 = R[6] * I[1] + R[7] * I[3] + R[8] * I[4]
    b8 = R[6] * I[2] + R[7] * I[4] + R[8] * I[5]
    return (b0 * R[0] + b1 * R[1] + b2 * R[2],
            b0 * R[3] + b1 * R[4] + b2 * R[5],
            b0 * R[6] + b1 * R[7] + b2 * R[8],
            b3 * R[3] + b4 * R[4] + b5 * R[5],
            b3 * R[6] + b4 * R[7] + b5 * R[8],
            b6 * R[6] + b7 * R[7] + b8 * R[8])


@helper
def rotate_diag3(R, d0, d1, d2):
    """R diag(d) Rᵀ in the packing of :func:`rotate_sym3` (principal axes along the body axes: 27 products
    where the general symmetric case takes 45)."""
    b0 = R[0] * d0
    b1 = R[1] * d1
    b2 = R[2] * d2
    b3 = R[3] * d0
    b4 = R[4] * d1
    b5 = R[5] * d2
    b6 = R[6] * d0
    b7 = R[7] * d1
    b8 = R[8] * d2
    return (b0 * R[0] + b1 * R[1] + b2 * R[2],
            b0 * R[3] + b1 * R[4] + b2 * R[5],
            b0 * R[6] + b1 * R[7] + b2 * R[8],
            b3 * R[3] + b4 * R[4] + b5 * R[5],
            b3 * R[6] + b4 * R[7] + b5 * R[8],
            b6 * R[6] + b7 * R[7] + b8 * R[8])


# ---- quaternions (scalar first: w, x, y, z) ---------------------------------------------------------------
@helper
def quat_to_rotation(w, x, y, z):
    """Rotation matrix of the unit quaternion (w, x, y, z) (Euler parameters), row-major."""
    xx = x * x
    yy = y * y
    zz = z * z
    xy = x * y
    xz = x * z
    yz = y * z
    wx = w * x
    wy = w * y
    wz = w * z
    return (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
            2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
            2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy))


@helper
def quat_mul(a0, a1, a2, a3, b0, b1, b2, b3):
    """Hamilton product a ⊗ b (scalar first)."""
    return (a0 * b0 - a1 * b1 - a2 * b2 - a3 * b3,
            a0 * b1 + a1 * b0 + a2 * b3 - a3 * b2,
            a0 * b2 - a1 * b3 + a2 * b0 + a3 * b1,
            a0 * b3 + a1 * b2 - a2 * b1 + a3 * b0)


@helper
def quat_exp(w0, w1, w2):
    """exp of the rotation vector w (angle |w| about w/|w|) as a unit quaternion."""
    th = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    half = 0.5 * th
    if th < 1e-8:
        # sin(θ/2)/θ = 1/2 − θ²/48 + …
        k = 0.5 - th * th / 48.0
    else:
        k = np.sin(half) / th
    return np.cos(half), k * w0, k * w1, k * w2


@helper
def quat_log(w, x, y, z):
    """Rotation vector of a unit quaternion (the inverse of ``quat_exp``, angle in [0, π])."""
    if w < 0.0:
        w, x, y, z = -w, -x, -y, -z
    s = np.sqrt(x * x + y * y + z * z)
    th = 2.0 * math.atan2(s, w)
    if s < 1e-8:
        k = 2.0 / w if w > 0.0 else 2.0
    else:
        k = th / s
    return k * x, k * y, k * z


# ---- spatial vectors --------------------------------------------------------------------------------------
@helper
def motion_cross_motion(w0, w1, w2, v0, v1, v2, m0, m1, m2, n0, n1, n2):
    """[ω; v] × [m; n] (RBDA ch. 2): [ω × m; ω × n + v × m]."""
    a0, a1, a2 = cross3(w0, w1, w2, m0, m1, m2)
    b0, b1, b2 = cross3(w0, w1, w2, n0, n1, n2)
    c0, c1, c2 = cross3(v0, v1, v2, m0, m1, m2)
    return a0, a1, a2, b0 + c0, b1 + c1, b2 + c2


@helper
def force_cross_motion(w0, w1, w2, v0, v1, v2, n0, n1, n2, f0, f1, f2):
    """[ω; v] ×* [n; f] (RBDA ch. 2): [ω × n + v × f; ω × f]."""
    a0, a1, a2 = cross3(w0, w1, w2, n0, n1, n2)
    b0, b1, b2 = cross3(v0, v1, v2, f0, f1, f2)
    c0, c1, c2 = cross3(w0, w1, w2, f0, f1, f2)
    return a0 + b0, a1 + b1, a2 + b2, c0, c1, c2


@helper
def transform_motion_to_child(R, p, w0, w1, w2, v0, v1, v2):
    """Motion [ω; v] in parent coordinates -> child coordinates, child at (R, p) in the parent:
    [Rᵀ ω; Rᵀ (v − p × ω)] (RBDA ch. 2, X = child_X_parent)."""
    c0, c1, c2 = cross3(p[0], p[1], p[2], w0, w1, w2)
    a0, a1, a2 = mat3T_vec(R, w0, w1, w2)
    b0, b1, b2 = mat3T_vec(R, v0 - c0, v1 - c1, v2 - c2)
    return a0, a1, a2, b0, b1, b2


@helper
def transform_motion_to_parent(R, p, w0, w1, w2, v0, v1, v2):
    """Motion [ω; v] in child coordinates -> parent coordinates: [R ω; R v + p × R ω]."""
    a0, a1, a2 = mat3_vec(R, w0, w1, w2)
    b0, b1, b2 = mat3_vec(R, v0, v1, v2)
    c0, c1, c2 = cross3(p[0], p[1], p[2], a0, a1, a2)
    return a0, a1, a2, b0 + c0, b1 + c1, b2 + c2


@helper
def transform_force_to_parent(R, p, n0, n1, n2, f0, f1, f2):
    """Force [n; f] in child coordinates -> parent coordinates: [R n + p × R f; R f] (RBDA ch. 2)."""
    a0, a1, a2 = mat3_vec(R, n0, n1, n2)
    b0, b1, b2 = mat3_vec(R, f0, f1, f2)
    c0, c1, c2 = cross3(p[0], p[1], p[2], b0, b1, b2)
    return a0 + c0, a1 + c1, a2 + c2, b0, b1, b2


@helper
def transform_force_to_child(R, p, n0, n1, n2, f0, f1, f2):
    """Force [n; f] in parent coordinates -> child coordinates: [Rᵀ (n − p × f); Rᵀ f]."""
    c0, c1, c2 = cross3(p[0], p[1], p[2], f0, f1, f2)
    a0, a1, a2 = mat3T_vec(R, n0 - c0, n1 - c1, n2 - c2)
    b0, b1, b2 = mat3T_vec(R, f0, f1, f2)
    return a0, a1, a2, b0, b1, b2


@helper
def dot6(a0, a1, a2, a3, a4, a5, b0, b1, b2, b3, b4, b5):
    return a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3 + a4 * b4 + a5 * b5


# ---- rigid-body inertia (m, h, I_O) -----------------------------------------------------------------------
@helper
def rigid_inertia_world(R, p, m, c, Ic):
    """Inertia of a body at placement (R, p) in ground coordinates about the ground origin.

    ``c`` is the centre of mass and ``Ic`` = (xx, xy, xz, yy, yz, zz) the inertia about it, both in the body
    frame. Returns (h, I_O) with h = m c_w the first moment (c_w = p + R c) and
    I_O = R I_c Rᵀ + m (|c_w|² E − c_w c_wᵀ) (Huygens–Steiner, as in seed 001 eq. 3.24). The spatial inertia is
    [[I_O, h̃], [h̃ᵀ, m E]] (RBDA ch. 2).
    """
    r0, r1, r2 = mat3_vec(R, c[0], c[1], c[2])
    c0 = p[0] + r0
    c1 = p[1] + r1
    c2 = p[2] + r2
    if Ic[1] == 0.0 and Ic[2] == 0.0 and Ic[4] == 0.0:
        J = rotate_diag3(R, Ic[0], Ic[3], Ic[5])
    else:
        J = rotate_sym3(R, Ic)
    cc = c0 * c0 + c1 * c1 + c2 * c2
    h = (m * c0, m * c1, m * c2)
    I = (J[0] + m * (cc - c0 * c0), J[1] - h[0] * c1, J[2] - h[0] * c2,
         J[3] + m * (cc - c1 * c1), J[4] - h[1] * c2, J[5] + m * (cc - c2 * c2))
    return h, I


@helper
def rigid_inertia_times_motion(m, h, I, w0, w1, w2, v0, v1, v2):
    """[[I, h̃], [h̃ᵀ, m E]] [ω; v] = [I ω + h × v; m v − h × ω] (RBDA ch. 2)."""
    a0, a1, a2 = cross3(h[0], h[1], h[2], v0, v1, v2)
    b0, b1, b2 = cross3(h[0], h[1], h[2], w0, w1, w2)
    return (I[0] * w0 + I[1] * w1 + I[2] * w2 + a0,
            I[1] * w0 + I[3] * w1 + I[4] * w2 + a1,
            I[2] * w0 + I[4] * w1 + I[5] * w2 + a2,
            m * v0 - b0, m * v1 - b1, m * v2 - b2)


@helper
def rigid_inertia_sym6(m, h, I):
    """The spatial inertia [[I, h̃], [h̃ᵀ, m E]] as its 21 packed entries (a tuple, upper triangle row by row)."""
    return (I[0], I[1], I[2], 0.0, -h[2], h[1],     # row 0: (0,0) .. (0,5)
            I[3], I[4], h[2], 0.0, -h[0],           # row 1: (1,1) .. (1,5)
            I[5], -h[1], h[0], 0.0,                 # row 2: (2,2) .. (2,5)
            m, 0.0, 0.0, m, 0.0, m)                 # rows 3..5: m E


@helper
def store21(out, i, a):
    """out[i, 0:21] = the 21-tuple a (constant indices: a loop over a tuple would index it through a switch)."""
    out[i, 0], out[i, 1], out[i, 2], out[i, 3], out[i, 4], out[i, 5] = a[0], a[1], a[2], a[3], a[4], a[5]
    out[i, 6] = a[6]
    out[i, 7], out[i, 8], out[i, 9], out[i, 10], out[i, 11], out[i, 12] = a[7], a[8], a[9], a[10], a[11], a[12]
    out[i, 13], out[i, 14], out[i, 15], out[i, 16], out[i, 17] = a[13], a[14], a[15], a[16], a[17]
    out[i, 18], out[i, 19], out[i, 20] = a[18], a[19], a[20]


@helper
def add21(out, i, a):
    """out[i, 0:21] += the 21-tuple a (constant indices, as :func:`store21`)."""
    out[i, 0] += a[0]
    out[i, 1] += a[1]
    out[i, 2] += a[2]
    out[i, 3] += a[3]
    out[i, 4] += a[4]
    out[i, 5] += a[5]
    out[i, 6] += a[6]
    out[i, 7] += a[7]
    out[i, 8] += a[8]
    out[i, 9] += a[9]
    out[i, 10] += a[10]
    out[i, 11] += a[11]
    out[i, 12] += a[12]
    out[i, 13] += a[13]
    out[i, 14] += a[14]
    out[i, 15] += a[15]
    out[i, 16] += a[16]
    out[i, 17] += a[17]
    out[i, 18] += a[18]
    out[i, 19] += a[19]
    out[i, 20] += a[20]


@helper
def store_rigid_inertia_sym6(out, i, m, h, I):
    """Write the spatial inertia [[I, h̃], [h̃ᵀ, m E]] into the packed symmetric row out[i, 0:21]."""
    a = rigid_inertia_sym6(m, h, I)
    store21(out, i, a)


@helper
def store_rigid_inertia(out, i, o, m, h, I):
    """out[i, o:o+10] = (m, h, I): a rigid-body inertia about the origin in its 10 numbers (mass, first moment,
    rotational inertia packed as (xx, xy, xz, yy, yz, zz)). A sum of rigid inertias about one point is again
    one (the composite inertias of CRBA), and ``rigid_inertia_times_motion`` multiplies it in 24 products
    where the packed 21-entry form takes 36."""
    out[i, o] = m
    out[i, o + 1] = h[0]
    out[i, o + 2] = h[1]
    out[i, o + 3] = h[2]
    for k in range(6):
        out[i, o + 4 + k] = I[k]


@helper
def load_rigid_inertia(arr, i, o):
    """(m, h, I) stored by :func:`store_rigid_inertia` in arr[i, o:o+10]."""
    return (arr[i, o], (arr[i, o + 1], arr[i, o + 2], arr[i, o + 3]),
            (arr[i, o + 4], arr[i, o + 5], arr[i, o + 6], arr[i, o + 7], arr[i, o + 8], arr[i, o + 9]))


@helper
def add_rigid_inertia_sym6(out, i, m, h, I):
    """out[i] += [[I, h̃], [h̃ᵀ, m E]] (packed symmetric rows)."""
    out[i, 0] += I[0]
    out[i, 1] += I[1]
    out[i, 2] += I[2]
    out[i, 4] -= h[2]
    out[i, 5] += h[1]
    out[i, 6] += I[3]
    out[i, 7] += I[4]
    out[i, 8] += h[2]
    out[i, 10] -= h[0]
    out[i, 11] += I[5]
    out[i, 12] -= h[1]
    out[i, 13] += h[0]
    out[i, 15] += m
    out[i, 18] += m
    out[i, 20] += m


# ---- symmetric 6x6 (packed upper triangle, 21 entries) ----------------------------------------------------
@helper
def transform_inertia_to_parent(R, p, I):
    """A spatial (or articulated) inertia, packed 21-tuple in child coordinates, in parent coordinates; the child
    is at (R, p) in the parent: I_p = Xᵀ I X with X = child_X_parent (RBDA ch. 2). With the blocks
    I = [[A, B], [Bᵀ, C]] rotated to A' = R A Rᵀ etc.: I_p = [[A' + p̃B'ᵀ − B'p̃ − p̃C'p̃, B' + p̃C'],
    [(B' + p̃C')ᵀ, C']]."""
    A = (I[0], I[1], I[2], I[1], I[6], I[7], I[2], I[7], I[11])
    B = (I[3], I[4], I[5], I[8], I[9], I[10], I[12], I[13], I[14])
    C = (I[15], I[16], I[17], I[16], I[18], I[19], I[17], I[19], I[20])
    RT = mat3_T(R)
    A1 = mat3_mul(mat3_mul(R, A), RT)
    B1 = mat3_mul(mat3_mul(R, B), RT)
    C1 = mat3_mul(mat3_mul(R, C), RT)
    P = skew(p[0], p[1], p[2])
    PB = mat3_mul(P, mat3_T(B1))
    BP = mat3_mul(B1, P)
    PC = mat3_mul(P, C1)
    PCP = mat3_mul(PC, P)
    return (A1[0] + PB[0] - BP[0] - PCP[0], A1[1] + PB[1] - BP[1] - PCP[1], A1[2] + PB[2] - BP[2] - PCP[2],
            B1[0] + PC[0], B1[1] + PC[1], B1[2] + PC[2],
            A1[4] + PB[4] - BP[4] - PCP[4], A1[5] + PB[5] - BP[5] - PCP[5],
            B1[3] + PC[3], B1[4] + PC[4], B1[5] + PC[5],
            A1[8] + PB[8] - BP[8] - PCP[8],
            B1[6] + PC[6], B1[7] + PC[7], B1[8] + PC[8],
            C1[0], C1[1], C1[2], C1[4], C1[5], C1[8])


@helper
def sym6_times_packed(a, x0, x1, x2, x3, x4, x5):
    """A x for the packed symmetric 6x6 A given as its 21-tuple ``a`` (:func:`sym6_times` for a row of an array;
    the SIMD lanes of ``kernels/lanes.py`` load the tuple from their own layout)."""
    return (a[0] * x0 + a[1] * x1 + a[2] * x2 + a[3] * x3 + a[4] * x4 + a[5] * x5,
            a[1] * x0 + a[6] * x1 + a[7] * x2 + a[8] * x3 + a[9] * x4 + a[10] * x5,
            a[2] * x0 + a[7] * x1 + a[11] * x2 + a[12] * x3 + a[13] * x4 + a[14] * x5,
            a[3] * x0 + a[8] * x1 + a[12] * x2 + a[15] * x3 + a[16] * x4 + a[17] * x5,
            a[4] * x0 + a[9] * x1 + a[13] * x2 + a[16] * x3 + a[18] * x4 + a[19] * x5,
            a[5] * x0 + a[10] * x1 + a[14] * x2 + a[17] * x3 + a[19] * x4 + a[20] * x5)


@helper
def load21(A, i):
    """Row i of A's first 21 columns (a packed symmetric 6x6) as a 21-tuple."""
    return (A[i, 0], A[i, 1], A[i, 2], A[i, 3], A[i, 4], A[i, 5], A[i, 6], A[i, 7], A[i, 8], A[i, 9], A[i, 10],
            A[i, 11], A[i, 12], A[i, 13], A[i, 14], A[i, 15], A[i, 16], A[i, 17], A[i, 18], A[i, 19], A[i, 20])


@helper
def sym6_times(A, i, x0, x1, x2, x3, x4, x5):
    """A[i] x for the packed symmetric 6x6 in row i of A."""
    return sym6_times_packed(load21(A, i), x0, x1, x2, x3, x4, x5)


@helper
def rank1_downdate_packed(b, s, u0, u1, u2, u3, u4, u5):
    """B − s u uᵀ for the packed symmetric B given as its 21-tuple ``b`` (a 21-tuple; :func:`sym6_add_rank1_update`
    adds it to a row of an array)."""
    w0 = s * u0
    w1 = s * u1
    w2 = s * u2
    w3 = s * u3
    w4 = s * u4
    w5 = s * u5
    return (b[0] - w0 * u0, b[1] - w0 * u1, b[2] - w0 * u2, b[3] - w0 * u3, b[4] - w0 * u4, b[5] - w0 * u5,
            b[6] - w1 * u1, b[7] - w1 * u2, b[8] - w1 * u3, b[9] - w1 * u4, b[10] - w1 * u5,
            b[11] - w2 * u2, b[12] - w2 * u3, b[13] - w2 * u4, b[14] - w2 * u5,
            b[15] - w3 * u3, b[16] - w3 * u4, b[17] - w3 * u5,
            b[18] - w4 * u4, b[19] - w4 * u5,
            b[20] - w5 * u5)


@helper
def sym6_add_rank1_update(A, j, B, i, s, u0, u1, u2, u3, u4, u5):
    """A[j] += B[i] − s u uᵀ (packed symmetric rows): the articulated-inertia hand-over of a
    one-degree-of-freedom joint, IA_parent += IA − U Uᵀ / D (RBDA Table 7.1)."""
    add21(A, j, rank1_downdate_packed(load21(B, i), s, u0, u1, u2, u3, u4, u5))


@helper
def sym6_add(A, j, B, i):
    """A[j] += B[i] (packed symmetric rows)."""
    for k in range(21):
        A[j, k] += B[i, k]


@helper
def sym6_copy(A, j, B, i):
    """A[j] = B[i] (packed symmetric rows)."""
    for k in range(21):
        A[j, k] = B[i, k]


@helper
def sym6_add_low_rank_update(A, j, B, i, W, cw, Z, cz, r0, nk):
    """A[j] += B[i] − Σ_k w_k z_kᵀ (packed symmetric rows) with w_k = W[r0 + k, cw:cw+6] and
    z_k = Z[r0 + k, cz:cz+6], k < nk: the articulated-inertia hand-over of a joint with nk degrees of freedom,
    IA_parent += IA − U D⁻¹ Uᵀ (RBDA Table 7.1; w_k the columns of U D⁻¹, z_k those of U) or IA − Yᵀ Y
    (a Cholesky factor, w_k = z_k the rows of Y). Σ_k w_k z_kᵀ must be symmetric."""
    e = 0
    for r in range(6):
        for c in range(r, 6):
            s = B[i, e]
            for k in range(r0, r0 + nk):
                s -= W[k, cw + r] * Z[k, cz + c]
            A[j, e] += s
            e += 1
