"""The controllers' torques, compiled: references, gravity compensation, computed torque (``model/controllers.py``).

The controllers of a model come packed as a table (``model.controllers.ControllerTable``): one integer row per
controlled velocity coordinate (columns ``C_IV`` ... below), its gains (kp, kd), and the polynomial pieces of its
reference.
:func:`control_kernel` evaluates them at (t, q, v):

* reference (:func:`reference_at`): the piecewise quintic Σ a_i τ^i (τ = t − t_s on the segment [t_s, t_s+1) found
  by bisection; ``model.controllers.Trajectory``, at rest at both ends), its first and second derivative; held at
  the first knot's value before the first knot and at the last one from the last on;
* ``MODE_PD``: τ = kp (q_ref − q) + kd (q̇_ref − q̇) (:func:`pd_torque`);
* ``MODE_PD_GRAVITY``: the same + g(q), the generalized gravity forces (:func:`gravity_kernel`): with the first
  moment h_i = m_i c_i of each body about the ground origin and the subtree sums M_i = Σ m_j, H_i = Σ h_j (leaves to
  root), the gravity force on the subtree of body i is [H_i × g; M_i g] (ground Plücker coordinates) and joint i
  holds it with τ_k = −S_k · [H_i × g; M_i g] — the τ of RNEA at q̇ = q̈ = 0 (RBDA Table 5.1 with a_0 = −g), without
  the velocity and inertia terms;
* ``MODE_COMPUTED_TORQUE``: τ = RNEA(q, q̇, q̈*) with q̈*_k = q̈_ref + kd (q̇_ref − q̇) + kp (q_ref − q) on the computed-
  torque coordinates and 0 elsewhere (``kernels/rnea.py``): M(q) q̈* + C(q, q̇) q̇ + g(q).

The SIMD lanes (``kernels/lanes.py``) compute the PD and gravity terms of each lane with the same helpers, in the
same order, so that a run in the lanes equals the run alone bit for bit.

A user's compiled torque law ``tau(t, q, v, out)`` is called through a C function pointer of the signature
:data:`TORQUE_SIGNATURE` (``formulations/tree_control.py`` wraps it), held as its address, an integer
(:func:`call_torque`): a tuple of arrays and numbers is typed by numba's fast path when a Python caller passes it
to a compiled function, whereas a function object in it sends every call through the slow one (about 1 ms).
"""
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from multibody.kernels.kinematics import (B_P, F_COM, F_MASS, IV, NV, PARENT, joint_placement_world, set_ground,
                                          workspace_views)
from multibody.kernels.rnea import rnea_kernel
from multibody.kernels.spatial import KERNEL, cross3, helper, load9, mat3_vec

#: the degree of the references' polynomial pieces (``model.controllers.Trajectory``)
DEGREE = 5
#: controller modes
MODE_PD, MODE_PD_GRAVITY, MODE_COMPUTED_TORQUE = 0, 1, 2
#: columns of the table's integer rows: velocity index, q index, mode, first knot, number of knots, first row of
#: polynomial coefficients
C_IV, C_IQ, C_MODE, C_KNOT, C_NKNOT, C_ROW = range(6)
CI_WIDTH = 6

_P = types.CPointer(types.float64)
#: the C signature of a compiled torque law: ``f(t, q, v, out, nq, nv)`` with pointers to the nq + nv + nv floats
TORQUE_SIGNATURE = types.void(types.float64, _P, _P, _P, types.int64, types.int64)
#: the C signature of a compiled event function: ``g(t, q, v, nq, nv) -> float``
EVENT_SIGNATURE = types.float64(types.float64, _P, _P, types.int64, types.int64)


@intrinsic
def call_torque(typingctx, address, t, q, v, out):
    """Call the C function of :data:`TORQUE_SIGNATURE` at ``address`` (an integer, ``numba.cfunc(...).address``)
    with ``(t, q.ctypes, v.ctypes, out.ctypes, q.size, v.size)``; q, v, out: contiguous float64 arrays."""
    def codegen(context, builder, signature, args):
        f64p = ir.DoubleType().as_pointer()
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.VoidType(), [ir.DoubleType(), f64p, f64p, f64p, i64, i64])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        arrays = [context.make_array(ty)(context, builder, value) for ty, value in zip(signature.args[2:], args[2:])]
        builder.call(fn, [args[1], arrays[0].data, arrays[1].data, arrays[2].data, arrays[0].nitems, arrays[1].nitems])
        return context.get_dummy_value()

    return types.void(address, t, q, v, out), codegen


@intrinsic
def call_event(typingctx, address, t, q, v):
    """The value of the C function of :data:`EVENT_SIGNATURE` at ``address`` for ``(t, q.ctypes, v.ctypes, q.size,
    v.size)``; q, v: contiguous float64 arrays."""
    def codegen(context, builder, signature, args):
        f64p = ir.DoubleType().as_pointer()
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType(), f64p, f64p, i64, i64])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        arrays = [context.make_array(ty)(context, builder, value) for ty, value in zip(signature.args[2:], args[2:])]
        return builder.call(fn, [args[1], arrays[0].data, arrays[1].data, arrays[0].nitems, arrays[1].nitems])

    return types.float64(address, t, q, v), codegen


@helper
def reference_at(t, RT, RC, k0, m, r0):
    """(q, q̇, q̈) of a reference: knots RT[k0:k0 + m], quintics RC[r0:r0 + m] (module docstring)."""
    if m == 1 or t < RT[k0]:
        return RC[r0, 0], 0.0, 0.0
    if t >= RT[k0 + m - 1]:
        return RC[r0 + m - 1, 0], 0.0, 0.0
    lo = 0
    hi = m - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if RT[k0 + mid] <= t:
            lo = mid
        else:
            hi = mid
    s = t - RT[k0 + lo]
    r = r0 + lo
    a0 = RC[r, 0]
    a1 = RC[r, 1]
    a2 = RC[r, 2]
    a3 = RC[r, 3]
    a4 = RC[r, 4]
    a5 = RC[r, 5]
    q = a0 + s * (a1 + s * (a2 + s * (a3 + s * (a4 + s * a5))))
    v = a1 + s * (2.0 * a2 + s * (3.0 * a3 + s * (4.0 * a4 + s * 5.0 * a5)))
    a = 2.0 * a2 + s * (6.0 * a3 + s * (12.0 * a4 + s * 20.0 * a5))
    return q, v, a


@helper
def pd_torque(kp, kd, qr, vr, q, v):
    """kp (q_ref − q) + kd (q̇_ref − q̇)."""
    return kp * (qr - q) + kd * (vr - v)


@helper
def first_moment(R, p0, p1, p2, m, c0, c1, c2):
    """m (p + R c): the first moment about the ground origin of a body at (R, p) with its centre of mass at c (body
    coordinates) — the operations of ``spatial.rigid_inertia_world``."""
    r0, r1, r2 = mat3_vec(R, c0, c1, c2)
    return m * (p0 + r0), m * (p1 + r1), m * (p2 + r2)


@helper
def gravity_torque(s0, s1, s2, s3, s4, s5, M, h0, h1, h2, g0, g1, g2):
    """−S · [H × g; M g]: the generalized force that holds a subtree of mass M and first moment H against gravity g,
    for the ground-frame column S of its joint (module docstring)."""
    n0, n1, n2 = cross3(h0, h1, h2, g0, g1, g2)
    return -(s0 * n0 + s1 * n1 + s2 * n2) - M * (s3 * g0 + s4 * g1 + s5 * g2)


@njit(**KERNEL)
def gravity_kernel(mi, mf, q, work, G, out):
    """out = g(q) (nv), the generalized gravity forces (module docstring), with the placements in ``work`` and the
    subtree sums (M, H) in the rows of ``G`` (n, 4)."""
    n = mi.shape[0]
    nv = out.shape[0]
    wb, wd = workspace_views(work, n, nv)
    set_ground(mf, work, wb, nv)
    for i in range(1, n):
        joint_placement_world(i, mi, mf, q, wb, wd)
        m = mf[i, F_MASS]
        h = first_moment(load9(wb, i), wb[i, B_P], wb[i, B_P + 1], wb[i, B_P + 2], m, mf[i, F_COM], mf[i, F_COM + 1],
                         mf[i, F_COM + 2])
        G[i, 0] = m
        G[i, 1] = h[0]
        G[i, 2] = h[1]
        G[i, 3] = h[2]
    g0 = mf[0, 0]
    g1 = mf[0, 1]
    g2 = mf[0, 2]
    for i in range(n - 1, 0, -1):
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            out[k] = gravity_torque(wd[k, 0], wd[k, 1], wd[k, 2], wd[k, 3], wd[k, 4], wd[k, 5], G[i, 0], G[i, 1],
                                    G[i, 2], G[i, 3], g0, g1, g2)
        par = mi[i, PARENT]
        G[par, 0] += G[i, 0]
        G[par, 1] += G[i, 1]
        G[par, 2] += G[i, 2]
        G[par, 3] += G[i, 3]


@njit(**KERNEL)
def control_kernel(t, q, v, mi, mf, CI, CF, RT, RC, gravity, inverse, work, G, A, TG, TI, no_fext, out):
    """out (nv) = the controllers' generalized forces at (t, q, v) (module docstring; zero on the coordinates no
    controller acts on). ``mf``: the model as built (the controllers' model); ``gravity`` / ``inverse``: whether a
    controller compensates gravity / computes torques; ``work``: a kinematics workspace; ``G`` (n, 4), ``A``,
    ``TG``, ``TI`` (nv): scratch."""
    nv = out.shape[0]
    for k in range(nv):
        out[k] = 0.0
    if gravity:
        G[0, 0] = G[0, 1] = G[0, 2] = G[0, 3] = 0.0
        gravity_kernel(mi, mf, q, work, G, TG)
    if inverse:
        for k in range(nv):
            A[k] = 0.0
        for r in range(CI.shape[0]):
            if CI[r, C_MODE] == MODE_COMPUTED_TORQUE:
                iv = CI[r, C_IV]
                qr, vr, ar = reference_at(t, RT, RC, CI[r, C_KNOT], CI[r, C_NKNOT], CI[r, C_ROW])
                A[iv] = ar + pd_torque(CF[r, 0], CF[r, 1], qr, vr, q[CI[r, C_IQ]], v[iv])
        rnea_kernel(mi, mf, q, v, A, no_fext, work, TI)
    for r in range(CI.shape[0]):
        iv = CI[r, C_IV]
        mode = CI[r, C_MODE]
        if mode == MODE_COMPUTED_TORQUE:
            out[iv] = TI[iv]
        else:
            qr, vr, ar = reference_at(t, RT, RC, CI[r, C_KNOT], CI[r, C_NKNOT], CI[r, C_ROW])
            f = pd_torque(CF[r, 0], CF[r, 1], qr, vr, q[CI[r, C_IQ]], v[iv])
            out[iv] = f + TG[iv] if mode == MODE_PD_GRAVITY else f
