"""Controllers in the tree's compiled right-hand side: the model's controller elements and a compiled torque law.

``simulate(model, ..., tau=f)`` with ``f`` a numba function (``@numba.njit``) ``f(t, q, v, out)`` — t a float, q
(nq,), v (nv,) and out (nv,) float64 arrays, out set to zero before the call; ``f`` writes the generalized forces
into out and returns nothing — runs ``f`` inside the compiled loop, like the controllers of the model
(``model.controllers``: ``mb.JointPD``, ``mb.ComputedTorque``, ``multibody.model.controllers``). The tree's
right-hand side then adds to the constant generalized forces ``tau_const`` of the run

    τ_extra = τ_const + τ_controllers(t, q, v) + f(t, q, v)

(:func:`tree_rhs_control`), in this order, before the model's applied forces are added and ABA runs. ``f`` is
called through a C function pointer (:func:`compiled_torque` wraps it in a ``numba.cfunc`` of
``kernels.control.TORQUE_SIGNATURE``, compiled once per function and process, and kept alive here), held in the
tuple as its address (``kernels.control.call_torque``): the compiled loops are compiled for an integer, not for
each function, and stay cached on disk; and a Python caller passes the tuple to a compiled function without
numba's slow typing of function objects.

A law that raises, or returns a torque that is not finite, ends the run: an exception cannot leave compiled code
called through a pointer, so the wrapper catches it and returns NaN torques; :func:`control_extra` records the
first call whose torques are not finite (its time, and the copies of q and v the law was given, in the tuple's
``fail``, ``user_q``, ``user_v``) and from then on gives NaN forces, which stop the run at that step; and
:func:`law_failure` calls the law again from Python at that (t, q, v), where it raises its own exception, to name
the law and what it did in the run's ``IntegrationError``.

The tree's parameters (``model.packing.TreeParams``) get one more entry, ``control``: the
``model.packing.Controls`` of the model's controllers and the law (``model.packing.ControlledParams``,
:func:`control_params`).
"""
import ctypes

import numpy as np
from numba import carray, cfunc, njit
from numba.core.errors import NumbaError
from numba.core.registry import CPUDispatcher

from multibody.errors import ModelError
from multibody.formulations.base import callback_forces
from multibody.formulations.tree_rhs import tree_rhs_extra
from multibody.integrate.adaptive import nonfinite_entries
from multibody.kernels.control import C_IV, EVENT_SIGNATURE, TORQUE_SIGNATURE, call_torque, control_kernel
from multibody.kernels.spatial import COMPILED, KERNEL
from multibody.model.packing import Controls, controlled_params, controls

__all__ = ["compiled_event", "control_params", "controls_tuple", "is_controlled", "compiled_torque", "is_compiled_torque",
           "PythonTorque",
           "control_extra", "control_torques", "run_controls", "tree_rhs_control", "tree_rhs_control_extra", "law_failure"]

def is_compiled_torque(tau):
    """Whether ``tau`` is a numba-compiled function (a torque law for the compiled loops)."""
    return isinstance(tau, CPUDispatcher)


_WRAPPED = {}


def compiled_torque(tau):
    """The ``numba.cfunc`` (``kernels.control.TORQUE_SIGNATURE``) that calls the numba function ``tau(t, q, v, out)``
    (module docstring), made once per function; a ``ModelError`` when ``tau`` does not compile for these types."""
    key = id(tau)
    if key in _WRAPPED and _WRAPPED[key][0] is tau:
        return _WRAPPED[key][1]

    def call(t, q, v, out, nq, nv):
        torques = carray(out, nv)
        try:
            tau(t, carray(q, nq), carray(v, nv), torques)
        except Exception:   # (it cannot leave the C function: NaN torques say it raised; module docstring)
            for k in range(nv):
                torques[k] = np.nan

    try:
        wrapped = cfunc(TORQUE_SIGNATURE)(call)
    except NumbaError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"tau: the numba function {getattr(tau, '__name__', tau)!r} must compile as tau(t, q, v, out) "
                         f"with t a float and q, v, out float64 arrays (out: the nv generalized forces), returning "
                         f"nothing: {first}", element="tau") from None
    _WRAPPED[key] = (tau, wrapped)
    return wrapped


#: :data:`kernels.control.TORQUE_SIGNATURE` as a ctypes function type (the pointers as addresses)
_TORQUE_CTYPE = ctypes.CFUNCTYPE(None, ctypes.c_double, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64,
                                 ctypes.c_int64)


class PythonTorque:
    """A Python torque callback ``tau(t, q, v) -> (nv,)`` as a C function of ``kernels.control.TORQUE_SIGNATURE``
    (through ctypes; ``address``), which a compiled loop calls at each step where it calls a compiled torque law
    (the stepping model's loop: ``contact/models.py``), instead of Python calling the loop one step at a time — each
    such call types and unboxes the loop's tuples of arrays anew, about 40 µs of a quadruped's step. The forces are
    checked as in every formulation (``formulations.base.callback_forces``: copies of q and v in, nv numbers out). An
    exception (a bad output's ``ModelError``, the callback's own, an interrupt) cannot leave the C call: it is kept in
    ``error``, the forces are NaN, which stop the run at that step (and the loop calls the law no more), and the run
    raises it with the steps made before it (``contact/stepping_run.py``)."""

    def __init__(self, callback, nv, model_name):
        self.callback, self.nv, self.model_name = callback, int(nv), model_name
        self.error = None
        self._views = {}
        self._function = _TORQUE_CTYPE(self._call)       # (kept: the address is valid while it lives)
        self.address = ctypes.cast(self._function, ctypes.c_void_p).value

    def _view(self, address, n):
        """The n floats at ``address`` as an array (the loop passes the same buffers at every step: made once)."""
        view = self._views.get(address)
        if view is None or view.shape[0] != n:
            view = np.ctypeslib.as_array((ctypes.c_double * n).from_address(address)) if n else np.zeros(0)
            self._views[address] = view
        return view

    def _call(self, t, q, v, out, nq, nv):
        forces = self._view(out, nv)
        if self.error is None:
            try:
                forces[:] = callback_forces(self.callback, t, self._view(q, nq), self._view(v, nv), nv,
                                            self.model_name)
                return
            except BaseException as exc:    # noqa: BLE001 -- kept for the run, which raises it (class docstring)
                self.error = exc
        forces[:] = np.nan


def compiled_event(g, k):
    """The ``numba.cfunc`` (``kernels.control.EVENT_SIGNATURE``) that calls the numba function ``g(t, q, v)``, the
    event ``events[k]`` of a run, made once per function; a ``ModelError`` when ``g`` does not compile for these
    types or does not return a number."""
    key = ("event", id(g))
    if key in _WRAPPED and _WRAPPED[key][0] is g:
        return _WRAPPED[key][1]

    def call(t, q, v, nq, nv):
        return g(t, carray(q, nq), carray(v, nv))

    try:
        wrapped = cfunc(EVENT_SIGNATURE)(call)
    except NumbaError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelError(f"events[{k}]: the numba function {getattr(g, '__name__', g)!r} must compile as g(t, q, v) "
                         f"with t a float and q, v float64 arrays, returning one number: {first}",
                         element=f"events[{k}]") from None
    _WRAPPED[key] = (g, wrapped)
    return wrapped


def controls_tuple(model, params, torque=None):
    """The :class:`~multibody.model.packing.Controls` of the model's controllers and the torque law ``torque`` (a
    numba function, a :class:`PythonTorque`, or None) for the tree parameters ``params``; with neither, a tuple of
    the same numba type that adds nothing (:func:`is_controlled` false)."""
    address = (0 if torque is None else torque.address if isinstance(torque, PythonTorque) else
               compiled_torque(torque).address)
    return controls(model, params.mf, address)


def control_params(model, params, torque=None):
    """``params`` (``model.packing.tree_params``) with the controllers' tuple (module docstring): the model's
    controllers and the compiled torque law ``torque`` (a numba function, or None), a
    ``model.packing.ControlledParams``."""
    return controlled_params(params, controls_tuple(model, params, torque))


@njit(**COMPILED, inline="always")
def is_controlled(c):
    """Whether the controllers' tuple ``c`` has a controller or a compiled torque law."""
    return c.ci.shape[0] > 0 or c.has_user


@njit(**COMPILED, inline="always")
def control_extra(t, x, tau_const, c, mi, nq, work):
    """τ_extra = τ_const + τ_controllers(t, q, v) + f(t, q, v) for x = [q, v] (module docstring), into ``c.extra``,
    which it returns; ``work``: a kinematics workspace (for the gravity pass and the inverse dynamics)."""
    return control_torques(t, x[:nq], x[nq:], tau_const, c, mi, work)


@njit(**COMPILED, inline="always")
def control_torques(t, q, v, tau_const, c, mi, work):
    """:func:`control_extra` at (t, q, v) given apart."""
    nq = q.shape[0]
    out = c.out
    extra = c.extra
    CI = c.ci
    nv = extra.shape[0]
    for k in range(nv):
        extra[k] = tau_const[k]
    if CI.shape[0] > 0:
        control_kernel(t, q, v, mi, c.mf, CI, c.cf, c.rt, c.rc, c.gravity, c.inverse, work, c.g, c.a, c.tg, c.ti,
                       c.no_fext, out)
        for r in range(CI.shape[0]):
            iv = CI[r, C_IV]
            extra[iv] = tau_const[iv] + out[iv]
    if c.has_user:       # the law gets copies of q and v: it cannot change the state
        uq = c.user_q
        uv = c.user_v
        u = c.user_out
        fail = c.fail
        if fail[0] == 0.0:
            for k in range(nq):
                uq[k] = q[k]
            for k in range(nv):
                uv[k] = v[k]
                u[k] = 0.0
            call_torque(c.user, t, uq, uv, u)
            for k in range(nv):
                if not np.isfinite(u[k]):   # raised or not finite: keep where (module docstring)
                    fail[0] = 1.0
                    fail[1] = t
                    break
        for k in range(nv):
            extra[k] += u[k] if fail[0] == 0.0 else np.nan
    return extra


@njit(**COMPILED)
def run_controls(c):
    """The controllers' tuple of one run of a batch: the same table and law, scratch of its own."""
    return Controls(c.ci, c.cf, c.rt, c.rc, c.mf, c.gravity, c.inverse, np.zeros_like(c.g), np.zeros_like(c.a),
                    np.zeros_like(c.tg), np.zeros_like(c.ti), c.no_fext, np.zeros_like(c.out), np.zeros_like(c.extra),
                    np.zeros_like(c.user_q), np.zeros_like(c.user_v), np.zeros_like(c.user_out), c.user, c.has_user,
                    np.zeros_like(c.fail))


@njit(**KERNEL)
def tree_rhs_control(t, x, p, out):
    """``tree_rhs`` with the model's controllers and a compiled torque law (their tuple ``p.control``) added
    to the constant generalized forces (module docstring)."""
    tree_rhs_extra(t, x, p, control_extra(t, x, p.tau, p.control, p.mi, p.q.shape[0], p.work), out)


@njit(**KERNEL)
def tree_rhs_control_extra(t, x, p, extra, out):
    """:func:`tree_rhs_control` with the generalized forces ``extra`` (a Python torque callback's and the constant
    ones) in place of the constant ones."""
    tree_rhs_extra(t, x, p, control_extra(t, x, extra, p.control, p.mi, p.q.shape[0], p.work), out)


def law_failure(c, law, v_names=None):
    """What the compiled torque law ``law`` did when it stopped a run (module docstring), from its controllers'
    tuple ``c``: ``(reason, element)`` — the law named, the exception it raises at the (t, q, v) of its first failed
    call, or its non-finite torques there (labelled by ``v_names``) —, or None when it did not fail."""
    fail = c.fail
    if law is None or fail[0] == 0.0:
        return None
    t, q, v = float(fail[1]), np.array(c.user_q), np.array(c.user_v)
    name = getattr(law, "__name__", repr(law))
    element = f"torque law '{name}'"
    out = np.zeros(v.shape[0])
    try:
        with np.errstate(all="ignore"):
            law(t, q.copy(), v.copy(), out)
    except Exception as exc:  # noqa: BLE001 -- the law's own exception is what the reason reports
        return f"the compiled torque law '{name}' raised {type(exc).__name__}: {exc} at t = {t:.17g}", element
    labels = None if v_names is None else [f"out[{i}] ({n})" for i, n in enumerate(v_names)]
    entries = nonfinite_entries(out, labels) or "not finite in compiled code (finite when called from Python)"
    return f"the compiled torque law '{name}' returned torques that are not finite at t = {t:.17g}: {entries}", element
