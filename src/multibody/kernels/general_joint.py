"""Kinematics of general joints (seed 001 §3.4.2, eqs. 3.101–3.107), derived with sympy and compiled.

A :class:`multibody.model.joints.GeneralJoint` gives the rotation R(q, t) of its child frame in the joint
frame J (the notes' R_rel,a = G_aᵀ) and the joint vector z(q, t) (the notes' z_a). With the angular and linear
partial velocities

    p_ak = (∂R/∂q_k Rᵀ)^∨,  k_ak = ∂z/∂q_k,  p_a0 = (∂R/∂t Rᵀ)^∨,  k_a0 = ∂z/∂t      (eqs. 3.101, 3.104)

(``^∨``: the vector of a skew matrix, Ṙ Rᵀ = [Ω×]), the relative angular velocity is Ω = Σ p_ak q̇_k + p_a0
and the relative velocity of the child origin, seen from J, is z̊ = Σ k_ak q̇_k + k_a0. The child's twist
relative to J, in Plücker coordinates at J's origin, is therefore

    ν = [Ω; z̊ + z × Ω] = Σ_k S_k q̇_k + σ,   S_k = [p_ak; k_ak + z × p_ak],  σ = [p_a0; k_a0 + z × p_a0],

and its derivative in J is ν̇ = Σ_k S_k q̈_k + β with β = Σ_k (∂ν/∂q_k) q̇_k + ∂ν/∂t: the angular part of β is
w_a of eq. 3.107 and the linear part is s_a of eq. 3.103 plus the terms of z × Ω. The kernels take S, σ and β
from the workspace (``kernels/kinematics.py``, module docstring); :func:`compile_general_joints` writes the
numba function that puts them there:

* ``fill(q, v, t, work)``: for every general joint of the model, R_J, z, σ, β and the columns S_k at
  (q, q̇ = v, t) into its block of the flat workspace ``work`` of ``multibody.model.data.Data``.

A compiled loop that takes general joints (the time-stepping model's, ``contact/stepping_loop.py``) calls ``fill``
through a C function pointer (:func:`fill_address`; ``kernels.control.call_torque`` with the workspace as its
``out``), so that the loop is compiled once for an integer and not for each model's function.

The module is generated once per model, with common subexpressions eliminated (``sympy.cse``, by
:func:`multibody.codegen.function_body`), under the
on-disk cache of generated modules (``multibody.cache.import_generated``: named by a hash of the
source, so numba's own cache serves later processes).
"""
import sympy as sp
from numba import carray, cfunc

from multibody.codegen import function_body
from multibody.kernels import kinematics as K
from multibody.kernels.control import TORQUE_SIGNATURE

__all__ = ["joint_kinematics", "compile_general_joints", "fill_address", "source"]

#: bumped whenever the generated source changes shape (part of the module's hash)
CODEGEN_VERSION = 1
_CACHE_ATTR = "_multibody_general_joints"


def _vee(W):
    """The vector w of the skew-symmetric part of W (W = [w×] when W is skew)."""
    return sp.Matrix([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2


def _twist(p, k, z):
    """[p; k + z × p]: a relative motion given at the child origin z, in Plücker coordinates at J's origin."""
    return sp.Matrix.vstack(p, k + z.cross(p))


def joint_kinematics(joint, velocities):
    """(R, z, S, σ, β) of a ``GeneralJoint`` (module docstring): R, z as given, S a 6 x n matrix whose columns are
    [p_ak; k_ak + z × p_ak] (seed 001 eqs. 3.101, 3.104), σ = [p_a0; k_a0 + z × p_a0] (the rheonomic terms) and
    β (6) the bias of ν̇ = S q̈ + β (eqs. 3.103, 3.107), with ``velocities`` the symbols of q̇_k."""
    R = sp.Matrix(joint.rotation)
    z = sp.Matrix(joint.translation).reshape(3, 1)
    q, t = joint.coordinates, joint.time
    cols = [_twist(_vee(R.diff(qk) * R.T), z.diff(qk), z) for qk in q]
    S = sp.Matrix.hstack(*cols)
    if t is None:
        sigma = sp.zeros(6, 1)
    else:
        sigma = _twist(_vee(R.diff(t) * R.T), z.diff(t), z)
    nu = S * sp.Matrix(velocities) + sigma
    beta = sum((nu.diff(qk) * uk for qk, uk in zip(q, velocities)), sp.zeros(6, 1))
    if t is not None:
        beta += nu.diff(t)
    return R, z, S, sigma, beta


def source(model, mi):
    """Python source of the ``fill`` module for ``model`` whose packed integer array is ``mi``."""
    n = model.nbodies + 1
    tsym = sp.Symbol("_t")
    assignments = []
    outputs = []
    for i in range(1, n):
        if int(mi[i, K.JTYPE]) != K.GENERAL:
            continue
        joint = model.joints[i].joint
        iq, iv, nvi = int(mi[i, K.IQ]), int(mi[i, K.IV]), int(mi[i, K.NV])
        qs = [sp.Symbol(f"_q{iq + k}") for k in range(nvi)]
        vs = [sp.Symbol(f"_v{iv + k}") for k in range(nvi)]
        assignments += [f"{s} = q[{iq + k}]" for k, s in enumerate(qs)]
        assignments += [f"{s} = v[{iv + k}]" for k, s in enumerate(vs)]
        R, z, S, sigma, beta = joint_kinematics(joint, vs)
        sub = dict(zip(joint.coordinates, qs))
        if joint.time is not None:
            sub[joint.time] = tsym
        base = n * K.WB_WIDTH + int(mi[i, K.AXIS]) * K.WD_WIDTH

        def put(offset, exprs):
            outputs.extend((f"work[{base + offset + c}]", sp.sympify(e).xreplace(sub)) for c, e in enumerate(exprs))

        put(K.GEN_R, list(R))
        put(K.GEN_Z, list(z))
        put(K.GEN_SIGMA_J, list(sigma))
        put(K.GEN_BIAS_J, list(beta))
        for k in range(nvi):
            put((1 + k) * K.WD_WIDTH, list(S[:, k]))
    return f'''"""Generated by multibody.kernels.general_joint for the general joints of model {model.name!r} -- do not edit."""
import math
from numba import njit


@njit(cache=True)
def fill(q, v, t, work):
    """R_J, z, sigma, beta and the columns of S of every general joint at (q, v, t) into work."""
    _t = t
{function_body(assignments, outputs)}
'''


def compile_general_joints(model, mi, cache_dir=None):
    """Write (once) and import the numba module of ``model``'s general joints (see the module docstring); returns
    the module."""
    from multibody.cache import import_generated

    cached = model.__dict__.get(_CACHE_ATTR)
    if cached is not None and cache_dir is None:
        return cached
    src = f"# general-joint codegen version {CODEGEN_VERSION}\n" + source(model, mi)
    mod = import_generated("_mb_gj_", src, "general_joints", cache_dir)
    model.__dict__[_CACHE_ATTR] = mod  # a cache only (the Model is immutable): every Data of the model shares it
    return mod


def fill_address(module, nwork):
    """The address of a C function of ``kernels.control.TORQUE_SIGNATURE``, ``f(t, q, v, work, nq, nv)``, that
    calls the generated ``module.fill(q, v, t, work)`` on a workspace of ``nwork`` floats (module docstring): made
    once per module and workspace size, and kept alive with the module."""
    made = module.__dict__.setdefault("_multibody_fill_addresses", {})
    if nwork not in made:
        fill = module.fill

        def call(t, q, v, work, nq, nv):
            fill(carray(q, nq), carray(v, nv), t, carray(work, nwork))

        made[nwork] = cfunc(TORQUE_SIGNATURE)(call)
    return made[nwork].address
