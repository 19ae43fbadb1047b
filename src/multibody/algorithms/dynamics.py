"""The numeric algorithms on a Model: ``algo(model, q, v, ..., data=None)`` returning numpy arrays.

Arguments are float64 arrays (anything else is converted). For ``aba``, ``rnea`` and ``crba``, float64
ndarrays take a fast path straight to the compiled kernel; strided ones are copied first.

Conventions (``docs/model-arrays.md``): q has ``model.nq`` entries, v and τ have ``model.nv``; velocities of
quaternion joints are angular velocities in the child frame. Optional external forces ``fext`` are an
(N+1, 6) array of spatial forces ``[moment; force]`` on each body (row 0, the ground, is ignored), in ground
coordinates with the moment taken about the ground origin (a force F through the ground point r has moment
r × F).

A model whose ground moves in a prescribed way (``model.base_motion``, seed 001 §3.1–3.2) is evaluated with
the base at time ``t`` (every function takes ``t=``, default 0; ignored for a fixed ground): positions,
velocities and accelerations are then absolute (inertial coordinates), and τ, q̈ include the base's
acceleration terms (eqs. 3.26–3.30).

``out=``: ``aba``, ``rnea`` and ``crba`` (and the calls of a control loop: ``frame_jacobian``, ``frame_jacobians``,
``frame_placement``, ``centroidal_map``, ``com_jacobian``, ``minv``) write their result into a preallocated array
given as ``out`` and return it, so that a loop allocates nothing: a writeable C-contiguous float64 ndarray of the
result's shape (anything else is a ``ModelError`` naming ``out``, and nothing is written). ``out`` may be the very
array passed as an input of ``aba`` or ``rnea`` (every input is read before the result is written); an ``out``
that shares memory with an input otherwise (an overlapping view) gives undefined results.

| function | result | method |
|---|---|---|
| ``rnea(model, q, v, a)`` | τ = M q̈ + C q̇ + g − Jᵀf_ext | recursive Newton–Euler, O(N) (RBDA Table 5.1) |
| ``crba(model, q)`` | M(q), symmetric positive definite | composite rigid bodies (RBDA Table 6.2) |
| ``aba(model, q, v, tau)`` | q̈ | articulated bodies, O(N): seed 001 §3.5 (separate bodies), RBDA Table 7.1 |
| ``hybrid_dynamics(model, q, v, tau, known, qdd_known)`` | (q̈, drive forces) | some q̈ prescribed: hybrid ABA, O(N): seed 001 §3.3.1, RBDA §9.2 |
| ``energy(model, q, v)`` | (T, V) kinetic and gravitational energy | |
| ``forward_kinematics`` | placements, velocities, accelerations of all bodies | |
| ``point_position / point_velocity / point_jacobian`` | a point fixed in a body | |
| ``aba_batch``, ``rnea_batch`` | the same on a leading batch axis, in parallel | slices in threads |

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> from multibody.algorithms.dynamics import aba, rnea, crba, energy
>>> b = mb.ModelBuilder(gravity=(0, 0, -9.81))
>>> b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
'rod'
>>> b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="rod")
'hinge'
>>> model = b.build()
>>> q, v = np.array([np.pi / 2]), np.zeros(1)
>>> qdd = aba(model, q, v, np.zeros(1))       # −m g l / (I + m l²) = −9.81·0.5/0.35
>>> round(float(qdd[0]), 6)
-14.014286
>>> bool(np.allclose(rnea(model, q, v, qdd), 0.0))
True
>>> float(crba(model, q)[0, 0])
0.35
"""
from collections import namedtuple

import numba
import numpy as np

from multibody.model.data import (FAST_ATTR, MASS_ATTR, Data, base_block, default_data, no_entry,
                                  refuse_kinematics_only)
from multibody.errors import ModelError, shown
from multibody.model.model import Model
from multibody.kernels.aba import aba_batch_kernel, aba_kernel
from multibody.kernels.crba import crba_kernel
from multibody.kernels.energy import energy_kernel
from multibody.kernels.hybrid import hybrid_kernel
from multibody.kernels.kinematics import body_frames_kernel, com_kernel, point_kernel
from multibody.kernels.rnea import rnea_batch_kernel, rnea_kernel
from multibody.kernels.threads import in_threads

__all__ = ["Data", "forward_kinematics", "rnea", "crba", "aba", "hybrid_dynamics", "energy", "bias_forces", "gravity_forces",
           "point_position", "point_velocity", "point_jacobian", "center_of_mass", "aba_batch", "rnea_batch",
           "Kinematics"]

_F64 = np.dtype(np.float64)
_EMPTY = np.zeros(0)
_ndarray = np.ndarray

#: result of ``forward_kinematics``: R (N+1, 3, 3) body-to-ground rotations, p (N+1, 3) body origins,
#: velocity (N+1, 6) [ω; ṗ] and acceleration (N+1, 6) [ω̇; p̈] of the body origins, all in ground coordinates
#: (velocity / acceleration are None when not requested)
Kinematics = namedtuple("Kinematics", "R p velocity acceleration")


def _data(model, data, t=None):
    """The Data to use (``data``, or the one cached on the model), with the moving base's state at ``t``
    (default 0) written into its workspace."""
    if not isinstance(model, Model):
        raise ModelError(f"model must be a multibody Model (ModelBuilder.build(), load_model, ...), got "
                         f"{type(model).__name__}", element="model")
    if data is None:
        data = default_data(model)
    elif not isinstance(data, Data):
        raise ModelError(f"data must be a multibody Data workspace (multibody.Data(model)), got "
                         f"{type(data).__name__}", element="data")
    elif data.model is not model:
        raise ModelError(f"Data was made for model '{data.model.name}', not for model '{model.name}'",
                         element="data")
    if data.base_motion is not None:
        data.set_time(0.0 if t is None else _time(t))
    return data


def _time(t):
    try:
        t = float(t)
    except (TypeError, ValueError):
        raise ModelError(f"t must be a number (the time of the base motion), got {shown(t)!r}", element="t") from None
    if not np.isfinite(t):
        raise ModelError(f"t must be finite, got {shown(t)!r}", element="t")
    return t


def _real(x, what, expected):
    """x as a contiguous float64 array, or a ModelError naming ``what``: complex numbers (whose imaginary part
    numpy would drop with a warning only), text and other objects are refused."""
    if np.iscomplexobj(x):
        raise ModelError(f"{what} must be real numbers ({expected}), got complex values", element=what)
    try:
        return np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be {expected}, got {shown(x)!r}", element=what) from None


def _vector(x, n, what, model):
    """x as a float64 vector of length n (x itself when it already is one), or a ModelError naming what was
    expected."""
    if x.__class__ is _ndarray and x.dtype is _F64 and x.shape == (n,) and x.flags.c_contiguous:
        return x
    arr = _real(x, what, f"an array of {n} numbers for model '{model.name}'")
    if arr.shape != (n,):
        raise ModelError(f"{what} must have shape ({n},) for model '{model.name}' "
                         f"(nq={model.nq}, nv={model.nv}), got shape {arr.shape}", element=what)
    if not arr.flags.writeable:  # numba types read-only arrays apart: copy rather than compile again
        arr = arr.copy()
    return arr


def _output(out, shape, model, what="out"):
    """The array a result of ``shape`` is written into: a new one when ``out`` is None, else ``out`` itself, checked (a
    writeable, C-contiguous, aligned float64 ndarray of that shape), or a ModelError naming ``what`` (the argument)
    and what was expected."""
    if out is None:
        return np.empty(shape)
    got = (type(out).__name__ if not isinstance(out, np.ndarray) else f"dtype {out.dtype}" if out.dtype != _F64
           else f"shape {out.shape}" if out.shape != shape else None if out.flags.carray
           else "a read-only array" if not out.flags.writeable else "an unaligned array" if not out.flags.aligned
           else "a non-contiguous array")
    if got is not None:
        raise ModelError(f"{what} must be a writeable C-contiguous float64 array of shape {shape} for model "
                         f"'{model.name}', got {got}", element=what)
    return out


def _batch(x, n, what, model, nb=None):
    arr = _real(x, what, f"a (batch, {n}) array for model '{model.name}'")
    if arr.ndim != 2 or arr.shape[1] != n or (nb is not None and arr.shape[0] != nb):
        want = f"({'batch' if nb is None else nb}, {n})"
        raise ModelError(f"{what} must have shape {want} for model '{model.name}' (nq={model.nq}, nv={model.nv}), "
                         f"got shape {arr.shape}", element=what)
    return arr if arr.flags.writeable else arr.copy()


def _fext(fext, d, model):
    if fext is None:
        return d.no_fext
    n = d.nbodies + 1
    arr = _real(fext, "fext", f"an ({n}, 6) array of spatial forces for model '{model.name}'")
    if arr.shape != (n, 6):
        raise ModelError(f"fext must have shape ({n}, 6) (one [moment; force] per body, ground first) for model "
                         f"'{model.name}', got shape {arr.shape}", element="fext")
    return arr if arr.flags.writeable else arr.copy()


def _body(model, body):
    if isinstance(body, str):
        return model.body_index(body)
    if isinstance(body, (bool, np.bool_)) or not isinstance(body, (int, np.integer)):
        raise ModelError(f"body must be a body name or an index 0..{model.nbodies} for model '{model.name}', got "
                         f"{body!r}", element="body")
    b = int(body)
    if not 0 <= b <= model.nbodies:
        raise ModelError(f"body index {b} out of range 0..{model.nbodies} for model '{model.name}'",
                         element=f"body {b}")
    return b


def _point(point):
    r = _real(point, "point", "3 numbers (body coordinates)")
    if r.size != 3:
        raise ModelError(f"point must be 3 numbers (body coordinates), got {shown(point)!r}", element="point")
    r = r.reshape(3)
    return float(r[0]), float(r[1]), float(r[2])


# ---- single-state algorithms ------------------------------------------------------------------------------
# The C-level entry: without ``data`` (and ``fext``), a call goes first to the model's builtin entry of the algorithm
# (``kernels/entries.py``, bound on the model's first read of ``_multibody_entry_<algorithm>``, ``model.data``),
# which checks the arrays itself, makes the output and calls the kernel; it returns None for anything it does not
# take (a non-model gets ``no_entry``), and the call goes on to the fast path below and then the slow one.
# The fast path of aba / rnea / crba (float64 1-D ndarrays, no fext, the Data cached on the model) is a few
# attribute checks (the kernels' arguments are one tuple, ``Data.fast``), one allocation and the call of the
# kernel's compiled entry point for these argument types (``_ABA``, ``_RNEA``, ``_CRBA``, bound on the first
# call), which skips numba's type dispatch: about 60 ns per array argument, a third of a call at N = 7. The
# kernels check sizes and contiguity themselves (``kinematics.check_sizes``) and return an error code; anything
# else goes through the slow path, which converts the arguments (rather than letting numba compile a
# specialization for them) or names what was expected. A preallocated ``out`` replaces the allocation by three
# checks that numba's unboxing does not make (it reads an int64 array as floats, writes one shape and stride per
# dimension into a struct made for the declared ones and writes into read-only or strided memory as if it were
# contiguous): its dtype, its ndim, and ``flags.carray`` (C-contiguous, aligned and writeable); the kernel checks its
# shape.
_empty = np.empty
#: what sends a call from the fast path to the slow one, which converts the arguments or names what is wrong:
#: AttributeError (not ndarrays, or no Data cached on the model yet), TypeError (a Data whose fast path is None:
#: general joints, a moving base, a model read for its kinematics only) and ZeroDivisionError (a zero quaternion,
#: which the slow path names)
_SLOW = (AttributeError, TypeError, ZeroDivisionError)
_ARG_NAMES = {1: "q", 2: "v", 4: "fext", 5: "data.work", 6: "output"}
assert (FAST_ATTR, MASS_ATTR) == ("_multibody_fast", "_multibody_mass_fast")  # the attributes the fast paths read


def _bind_on_first_call(kernel, name, namespace=None):
    """A stand-in for the module global ``name`` (of ``namespace``, default this module's globals): it calls
    ``kernel`` through numba's dispatcher (which compiles or loads it), replaces itself by the compiled entry
    point for these argument types, and returns the result."""
    space = globals() if namespace is None else namespace

    def first_call(*args):
        result = kernel(*args)
        space[name] = kernel.get_overload(tuple(numba.typeof(a) for a in args))
        return result

    return first_call


_ABA = _bind_on_first_call(aba_kernel, "_ABA")
_RNEA = _bind_on_first_call(rnea_kernel, "_RNEA")
_CRBA = _bind_on_first_call(crba_kernel, "_CRBA")


def _size_error(model, d, code, third):
    what = third if code == 3 else _ARG_NAMES.get(code, "argument")
    want = {1: f"({d.nq},)", 2: f"({d.nv},)", 3: f"({d.nv},)", 4: f"({d.nbodies + 1}, 6)"}.get(code, "")
    return ModelError(f"{what} does not fit model '{model.name}' (nq={d.nq}, nv={d.nv}): expected shape {want}",
                      element=what)


def _fill(d, q, v, t):
    """Write the general joints' kinematics at (q, v, t) into the workspace of ``d`` (``Data.fill``; seed 001
    §3.4.2), for a model that has general joints; t is the time of rheonomic joints."""
    if d.fill is not None:
        try:
            t = 0.0 if t is None else float(t)
        except (TypeError, ValueError):
            raise ModelError(f"t must be a number (the time of the rheonomic joints), got {shown(t)!r}", element="t") from None
        d.fill(q, v, t, d.work)


def _call3(kernel, model, q, v, x, data, fext, third, t, out):
    """Slow path of ``aba``/``rnea``: convert and validate the arguments, then call the kernel."""
    d = _data(model, data, t)
    refuse_kinematics_only(model, "aba" if kernel is aba_kernel else "rnea")
    q = _vector(q, d.nq, "q", model)
    v = _vector(v, d.nv, "v", model)
    x = _vector(x, d.nv, third, model)
    out = _output(out, (d.nv,), model)
    _fill(d, q, v, t)
    try:
        err = kernel(d.mi, d.mf, q, v, x, _fext(fext, d, model), d.work, out)
    except ZeroDivisionError:  # a quaternion of zero length
        model.check_quaternions(q)
        raise
    if err:
        raise _size_error(model, d, err, third)
    return out


#: the argument handling of the algorithms, shared with the derivatives of the dynamics (``algorithms.derivatives``)
data_at, as_vector, as_batch, as_fext, as_output, size_error, bind_on_first_call = (
    _data, _vector, _batch, _fext, _output, _size_error, _bind_on_first_call)
#: the exceptions that send a call from a fast path to its slow path (``_SLOW``), shared likewise
FAST_PATH_MISSES = _SLOW


def base_copy(d):
    """The base block of ``d``'s workspace (a copy, as the batch kernels take it)."""
    return _base(d)


#: writing the general joints' kinematics before a kernel, shared with the frame and centroidal algorithms
fill_general = _fill


def aba(model, q, v, tau, data=None, fext=None, t=None, out=None):
    """Forward dynamics q̈ = M⁻¹(τ − C q̇ − g + Jᵀ f_ext) by the articulated-body algorithm, O(N)
    (seed 001 §3.5, the separate-bodies method, eqs. 3.176–3.179; Featherstone RBDA Table 7.1). ``t``: the
    time of a moving base (seed 001 §3.1–3.2) and of rheonomic general joints (§3.4.2), default 0. ``out``: an
    array to write q̈ into and return (module docstring)."""
    # the C-level entry (see above)
    if data is None and fext is None and (
            qdd := getattr(model, "_multibody_entry_aba", no_entry)(q, v, tau, out)) is not None:
        return qdd
    try:  # the fast path (see above); AttributeError: not ndarrays, or no Data cached on the model yet
        if fext is None and q.dtype is v.dtype is tau.dtype is _F64 and q.ndim == v.ndim == tau.ndim == 1:
            mi, mf, no_fext, work, nv, _, owner = model._multibody_fast if data is None else data.fast
            if owner is model:
                if out is None:
                    qdd = _empty(nv)
                    if _ABA(mi, mf, q, v, tau, no_fext, work, qdd) == 0:
                        return qdd
                elif out.dtype is _F64 and out.ndim == 1 and out.flags.carray and _ABA(
                        mi, mf, q, v, tau, no_fext, work, out) == 0:
                    return out
    except _SLOW:
        pass
    return _call3(aba_kernel, model, q, v, tau, data, fext, "tau", t, out)


def hybrid_dynamics(model, q, v, tau, known, qdd_known, data=None, fext=None, t=None):
    """Hybrid dynamics: the accelerations of the free coordinates and the forces of those whose accelerations
    are prescribed, in O(N) (seed 001 §3.3.1, eqs. 3.92–3.94, controlled coordinates; Featherstone RBDA §9.2,
    the articulated-body algorithm in which a joint with known acceleration is not articulated).

    ``known``: nv booleans (or a list of velocity-coordinate indices) marking the prescribed velocity
    coordinates; ``qdd_known`` (nv,): their accelerations (the other entries are ignored). ``tau`` (nv,): the
    generalized forces applied everywhere (on the free coordinates as in :func:`aba`). Returns ``(qdd, forces)``:
    every acceleration (the prescribed ones as given) and, for each prescribed coordinate, the generalized force
    it needs besides ``tau`` (the drive force of eq. 3.93, positive when it does positive work on q̇; zero on
    the free coordinates), so that ``rnea(model, q, v, qdd) = tau + forces``. With nothing known it is
    :func:`aba`; with everything known, :func:`rnea` minus ``tau``. Any joint type, any subset of its
    coordinates. ``t``: the time of a moving base (seed 001 §3.1–3.2), default 0.

    >>> from multibody.systems.pendulums import triple_pendulum_seed001
    >>> model = triple_pendulum_seed001()
    >>> q, v = np.array([0.3, -0.2, 0.1]), np.array([0.5, 0.0, -1.0])
    >>> qdd, forces = hybrid_dynamics(model, q, v, np.zeros(3), [True, False, False], [2.0, 0.0, 0.0])
    >>> float(qdd[0]), float(forces[1]), float(forces[2])
    (2.0, 0.0, 0.0)
    >>> bool(np.allclose(rnea(model, q, v, qdd), forces))
    True
    """
    d = _data(model, data, t)
    refuse_kinematics_only(model, "hybrid_dynamics")
    q = _vector(q, d.nq, "q", model)
    v = _vector(v, d.nv, "v", model)
    tau = _vector(tau, d.nv, "tau", model)
    mask = known_mask(model, known, d.nv)
    qdd = _vector(qdd_known, d.nv, "qdd_known", model).copy()
    if not np.all(np.isfinite(qdd[mask != 0.0])):
        raise ModelError(f"qdd_known must be finite on the prescribed coordinates (model '{model.name}')",
                         element="qdd_known")
    qdd[mask == 0.0] = 0.0
    _fill(d, q, v, t)
    forces = np.empty(d.nv)
    try:
        err = hybrid_kernel(d.mi, d.mf, q, v, tau, mask, _fext(fext, d, model), d.work, qdd, forces)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    if err:
        raise _size_error(model, d, err, "tau")
    return qdd, forces


def known_mask(model, known, nv=None):
    """``known`` — nv booleans, or velocity-coordinate indices — as the float mask ``kernels.hybrid`` reads
    (1.0 prescribed, 0.0 free), or a ``ModelError`` naming what was expected."""
    nv = model.nv if nv is None else nv
    try:
        arr = np.asarray(known)
    except (TypeError, ValueError):
        arr = None
    if arr is not None and arr.dtype == bool and arr.shape == (nv,):
        return arr.astype(np.float64)
    mask = np.zeros(nv)
    if arr is not None and arr.ndim == 1 and (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
        if np.all((arr >= 0) & (arr < nv)):
            mask[arr] = 1.0
            return mask
    raise ModelError(f"known must be {nv} booleans or indices in 0..{nv - 1} of the prescribed velocity coordinates "
                     f"of model '{model.name}' (velocity names: {', '.join(model.velocity_names())}), got {known!r}",
                     element="known")


def rnea(model, q, v, a, data=None, fext=None, t=None, out=None):
    """Inverse dynamics τ = M q̈ + C q̇ + g − Jᵀ f_ext by the recursive Newton–Euler algorithm, O(N)
    (Featherstone RBDA Table 5.1; seed 001 eqs. 3.172–3.175). ``t``: the time of a moving base (seed 001
    §3.1–3.2: its acceleration terms, eqs. 3.26–3.30, are in τ), default 0. ``out``: an array to write τ into and
    return (module docstring)."""
    # the C-level entry as in aba
    if data is None and fext is None and (
            tau := getattr(model, "_multibody_entry_rnea", no_entry)(q, v, a, out)) is not None:
        return tau
    try:  # the fast path, as in aba
        if fext is None and q.dtype is v.dtype is a.dtype is _F64 and q.ndim == v.ndim == a.ndim == 1:
            mi, mf, no_fext, work, nv, _, owner = model._multibody_fast if data is None else data.fast
            if owner is model:
                if out is None:
                    tau = _empty(nv)
                    if _RNEA(mi, mf, q, v, a, no_fext, work, tau) == 0:
                        return tau
                elif out.dtype is _F64 and out.ndim == 1 and out.flags.carray and _RNEA(
                        mi, mf, q, v, a, no_fext, work, out) == 0:
                    return out
    except _SLOW:
        pass
    return _call3(rnea_kernel, model, q, v, a, data, fext, "a", t, out)


def joint_wrenches(model, q, v, a, data=None, fext=None, t=None):
    """The spatial force each tree joint transmits from its parent body to its child body at (q, q̇ = v,
    q̈ = a): the joint's reaction together with its driving force, i.e. the bearing load. An array
    (nbodies, 6): row i − 1 belongs to the joint of body i, [moment about the joint's origin; force] in ground
    coordinates. Gravity and ``fext`` (as in :func:`rnea`) act on the bodies; the projection of row i − 1 onto
    the joint's motion subspace is its τ of :func:`rnea`. :func:`multibody.joint_reactions` gives the same
    wrenches in each joint's own frame, by joint name.

    These are the reactions of the separate-bodies method (seed 001 §3.5: each body cut free, the joint
    forces found from the outermost bodies inwards), read from the backward pass of the recursive
    Newton–Euler algorithm (RBDA Table 5.1), where body i's force is the sum of m a − m g and the
    inertial moments over the subtree that joint i carries."""
    return subtree_wrenches(model, q, v, a, data, fext, t)[0]


def subtree_wrenches(model, q, v, a, data=None, fext=None, t=None):
    """``(W, R, p)``: the wrenches of :func:`joint_wrenches` (nbodies, 6) and the placements of the child-side
    joint frames (the kernel frames of the bodies: rotations R (nbodies, 3, 3), origins p (nbodies, 3), ground
    coordinates) that RNEA's pass computed with them."""
    from multibody.kernels.kinematics import B_F, B_P, B_R, WB_WIDTH

    d = _data(model, data)
    rnea(model, q, v, a, data=d, fext=fext, t=t)        # leaves every subtree's force in the workspace
    n = d.nbodies + 1
    wb = d.work[:n * WB_WIDTH].reshape(n, WB_WIDTH)
    f = wb[1:, B_F:B_F + 6].copy()                        # [moment about the ground origin; force]
    p = wb[1:, B_P:B_P + 3].copy()
    f[:, :3] -= np.cross(p, f[:, 3:])                     # about the joint's origin (the kernel frame's origin)
    return f, wb[1:, B_R:B_R + 9].reshape(n - 1, 3, 3).copy(), p


def bias_forces(model, q, v, data=None, fext=None, t=None):
    """C(q, q̇) q̇ + g(q) − Jᵀ f_ext = rnea(q, v, 0) (with a moving base, its terms at time ``t`` too)."""
    d = _data(model, data)
    return rnea(model, q, v, np.zeros(d.nv), data=d, fext=fext, t=t)


def gravity_forces(model, q, data=None, t=None):
    """g(q) = rnea(q, 0, 0): the generalized forces of gravity (with the sign of the left-hand side; with a
    moving base, the terms of its motion at time ``t`` too)."""
    d = _data(model, data)
    z = np.zeros(d.nv)
    return rnea(model, q, z, z, data=d, t=t)


def crba(model, q, data=None, t=0.0, out=None):
    """The joint-space mass matrix M(q) (nv x nv) by the composite-rigid-body algorithm (RBDA Table 6.2);
    T = ½ q̇ᵀ M q̇ (relative to the base); it is A of seed 001 eq. 3.167. A moving base does not change it
    (M is invariant under a rigid motion of the whole system). ``out``: an array to write M into and return
    (module docstring)."""
    # the C-level entry as in aba
    if data is None and (M := getattr(model, "_multibody_entry_crba", no_entry)(q, out)) is not None:
        return M
    try:  # the fast path, as in aba (a moving base included: it does not change M)
        if q.dtype is _F64 and q.ndim == 1:
            mi, mf, work, shape, owner = model._multibody_mass_fast if data is None else data.mass_fast
            if owner is model:
                if out is None:
                    M = _empty(shape)
                    if _CRBA(mi, mf, q, work, M) == 0:
                        return M
                elif out.dtype is _F64 and out.ndim == 2 and out.flags.carray and _CRBA(mi, mf, q, work, out) == 0:
                    return out
    except _SLOW:
        pass
    d = _data(model, data)
    refuse_kinematics_only(model, "crba")
    q = _vector(q, d.nq, "q", model)
    M = _output(out, (d.nv, d.nv), model)
    _fill(d, q, np.zeros(d.nv), t)
    try:
        err = crba_kernel(d.mi, d.mf, q, d.work, M)
    except ZeroDivisionError:
        model.check_quaternions(q)
        raise
    if err:
        raise _size_error(model, d, err, "q")
    return M


def energy(model, q, v, data=None, t=None):
    """(kinetic, potential) energy: T = ½ Σ v_iᵀ I_i v_i, V = −Σ m_i g·c_i (zero at the ground origin); with a
    moving base (at time ``t``), T of the absolute velocities and V of the absolute positions."""
    d = _data(model, data, t)
    refuse_kinematics_only(model, "energy")
    q = _vector(q, d.nq, "q", model)
    v = _vector(v, d.nv, "v", model)
    _fill(d, q, v, t)
    T, V = energy_kernel(d.mi, d.mf, q, v, d.work)
    return float(T), float(V)


def forward_kinematics(model, q, v=None, a=None, data=None, frames="user", t=None):
    """Placements, velocities and accelerations of every body in ground coordinates: a ``Kinematics`` tuple
    (R, p, velocity, acceleration); body 0 is the ground. R[i] rotates body-i coordinates into ground
    coordinates and p[i] is the body origin (the convention of ``Placement``); velocity[i] = [ω; ṗ] and
    acceleration[i] = [ω̇; p̈] of the origin (true time derivatives, without gravity). Velocities need v,
    accelerations need v and a = q̈. ``frames="user"`` (default) reports the bodies' own frames,
    ``"kernel"`` the frames the kernels use (they differ where a tree joint was given a child placement; see
    ``Model``). With a moving base (at time ``t``) body 0 moves and all of these are absolute."""
    d = _data(model, data, t)
    q = _vector(q, d.nq, "q", model)
    level = 0
    if v is not None:
        v = _vector(v, d.nv, "v", model)
        level = 1
        if a is not None:
            a = _vector(a, d.nv, "a", model)
            level = 2
    elif a is not None:
        raise ModelError("forward_kinematics: accelerations a need the velocities v as well", element="v")
    _fill(d, q, np.zeros(d.nv) if v is None else v, t)
    n = d.nbodies + 1
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    vel = np.zeros((n, 6)) if level >= 1 else np.zeros((0, 6))
    acc = np.zeros((n, 6)) if level >= 2 else np.zeros((0, 6))
    body_frames_kernel(d.mi, d.mf, q, np.zeros(d.nv) if v is None else v, _EMPTY if a is None else a, d.work,
                       level, R, p, vel if level >= 1 else np.zeros((n, 6)), acc if level >= 2 else np.zeros((n, 6)))
    if frames == "user":
        _to_user_frames(model, R, p, vel, acc, level)
    elif frames != "kernel":
        raise ModelError(f"frames must be 'user' or 'kernel', got {shown(frames)!r}", element="frames")
    return Kinematics(R, p, vel if level >= 1 else None, acc if level >= 2 else None)


def _to_user_frames(model, R, p, vel, acc, level):
    """Move the kernel frames of ``forward_kinematics`` to the bodies' own frames (``model.body_frames``), in
    place: origin p + R t, axes R R_F, and the origin's velocity and acceleration at the moved point."""
    for i, F in enumerate(getattr(model, "body_frames", ())):
        if i == 0 or F.is_identity():
            continue
        d = R[i] @ F.translation
        if level >= 2:
            w, al = vel[i, :3], acc[i, :3]
            acc[i, 3:] += np.cross(al, d) + np.cross(w, np.cross(w, d))
        if level >= 1:
            vel[i, 3:] += np.cross(vel[i, :3], d)
        p[i] += d
        R[i] = R[i] @ F.rotation


def _point_call(model, q, v, body, point, data, jac, t):
    d = _data(model, data, t)
    q = _vector(q, d.nq, "q", model)
    v = np.zeros(d.nv) if v is None else _vector(v, d.nv, "v", model)
    _fill(d, q, v, t)
    b = _body(model, body)
    r = _point(point)
    frames = getattr(model, "body_frames", ())
    if b < len(frames) and not frames[b].is_identity():
        r = frames[b].act(r)          # the point in the body's kernel frame
    pos = np.empty(3)
    vel = np.empty(3)
    J = np.empty((3, d.nv if jac else 0))
    point_kernel(d.mi, d.mf, q, v, d.work, b, r[0], r[1], r[2], True, pos, vel, J)
    return pos, vel, J


def point_position(model, q, body, point=(0.0, 0.0, 0.0), data=None, t=None):
    """Ground coordinates of the point fixed in ``body`` (name or index) at body coordinates ``point`` (moving
    base: at time ``t``)."""
    return _point_call(model, q, None, body, point, data, False, t)[0]


def point_velocity(model, q, v, body, point=(0.0, 0.0, 0.0), data=None, t=None):
    """Velocity (ground coordinates) of the point fixed in ``body`` at body coordinates ``point`` (moving base:
    the absolute velocity at time ``t``, the base's share included)."""
    return _point_call(model, q, v, body, point, data, False, t)[1]


def point_jacobian(model, q, body, point=(0.0, 0.0, 0.0), data=None, t=None):
    """The 3 x nv Jacobian J(q) of the point fixed in ``body`` (body coordinates ``point``): its velocity
    in ground coordinates is J v (seed 001 §3.4.4: the partial velocities Φ of eq. 3.167, for any point;
    with a moving base, J v + the velocity of the base point there)."""
    return _point_call(model, q, None, body, point, data, True, t)[2]


def center_of_mass(model, q, v=None, data=None, t=None):
    """(total mass, centre of mass (3,), linear momentum (3,)) in ground coordinates (moving base: at time
    ``t``, absolute momentum)."""
    d = _data(model, data, t)
    refuse_kinematics_only(model, "center_of_mass")
    q = _vector(q, d.nq, "q", model)
    v = np.zeros(d.nv) if v is None else _vector(v, d.nv, "v", model)
    _fill(d, q, v, t)
    out = np.empty(7)
    com_kernel(d.mi, d.mf, q, v, d.work, out)
    return float(out[0]), out[1:4].copy(), out[4:7].copy()


# ---- batched twins ---------------------------------------------------------------------------------------
def aba_batch(model, Q, V, TAU, data=None, t=None):
    """``aba`` for every row of Q (B, nq), V (B, nv), TAU (B, nv), in parallel (slices of rows in threads, each
    with its own workspace, ``kernels/threads.py``; ``numba.set_num_threads`` chooses the threads); returns QDD
    (B, nv).

    >>> from multibody.bench.dynamics import revolute_chain
    >>> model = revolute_chain(30)
    >>> Q = np.zeros((1000, 30)); V = np.zeros((1000, 30)); TAU = np.ones((1000, 30))
    >>> bool(np.allclose(aba_batch(model, Q, V, TAU)[17], aba(model, Q[17], V[17], TAU[17])))
    True

    ``t``: the time of a moving base, the same for every row.
    """
    d = _data(model, data, t)
    refuse_kinematics_only(model, "aba_batch")
    Q = _batch(Q, d.nq, "Q", model)
    V = _batch(V, d.nv, "V", model, Q.shape[0])
    TAU = _batch(TAU, d.nv, "TAU", model, Q.shape[0])
    if d.fill is not None:  # general joints: each state needs its kinematics filled in (at t = 0)
        return np.array([aba(model, q, v, tau, data=d) for q, v, tau in zip(Q, V, TAU)]).reshape(-1, d.nv)
    out = np.empty((Q.shape[0], d.nv))
    in_threads(aba_batch_kernel, (d.mi, d.mf, Q, V, TAU, d.no_fext, _base(d), out), Q.shape[0], short_rows=True)
    return out


def rnea_batch(model, Q, V, A, data=None, t=None):
    """``rnea`` for every row of Q (B, nq), V (B, nv), A (B, nv), in parallel (as :func:`aba_batch`); returns
    TAU (B, nv). ``t``: the time of a moving base, the same for every row."""
    d = _data(model, data, t)
    refuse_kinematics_only(model, "rnea_batch")
    Q = _batch(Q, d.nq, "Q", model)
    V = _batch(V, d.nv, "V", model, Q.shape[0])
    A = _batch(A, d.nv, "A", model, Q.shape[0])
    if d.fill is not None:  # general joints, as in aba_batch
        return np.array([rnea(model, q, v, a, data=d) for q, v, a in zip(Q, V, A)]).reshape(-1, d.nv)
    out = np.empty((Q.shape[0], d.nv))
    in_threads(rnea_batch_kernel, (d.mi, d.mf, Q, V, A, d.no_fext, _base(d), out), Q.shape[0], short_rows=True)
    return out


def _base(d):
    """The base block of ``d``'s workspace (a copy, as the batch kernels take it)."""
    return base_block(d.work).copy()
