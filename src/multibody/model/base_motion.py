"""A prescribed motion of body 0, the base (seed 001 §3.1–3.2: "body 0 is the external body whose motion is
prescribed"; seed 002 allows the same).

The ground body 0 of a Model is fixed by default. Given a :class:`BaseMotion`, it moves: at time t its frame
has the rotation R0(t) (body-0 to inertial coordinates) and the origin p0(t) (inertial coordinates), with the
velocity ṗ0, angular velocity ω0, acceleration p̈0 and angular acceleration ω̇0 (all in inertial coordinates).
The joints on the ground are placed in body 0's frame and move with it; gravity, the energies and every
result of the algorithms (placements, velocities, ``forward_kinematics``, ``point_position``, ...) stay in
the inertial ("ground") coordinates, and the velocities are absolute.

What the kernels receive (the base block of the workspace, ``kernels/kinematics.X_R``): R0, p0 and the
spatial velocity and acceleration of body 0 in the ground-frame Plücker coordinates every body has there —
the velocity of the body-0 point that is at the ground origin O, and its time derivative:

    v_0 = [ω0; ṗ0 + ω0 × (O − p0)] = [ω0; ṗ0 − ω0 × p0]
    a_0 = d/dt v_0 = [ω̇0; p̈0 − ω̇0 × p0 − ω0 × ṗ0]

(a_0 is the spatial acceleration of RBDA §2.11, not the classical acceleration of a point: the classical
acceleration of the body-0 point at p is ``a_lin + ω̇0 × p + ω0 × (v_lin + ω0 × p)``, which at p = p0 gives
back p̈0). The recursions then carry v_0 and a_0 − [0; g] to every body; these are the base terms of the
book's equations: r̈_0 and the acceleration of the inboard joint point r̈_0 + ω̇_0 × c_01 + ω_0 × (ω_0 × c_01)
in eqs. 3.26–3.30 and 3.32 (−M b_i0 × r̈_0 ...).

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> shake = mb.BaseMotion.harmonic(axis=(1, 0, 0), amplitude=0.01, omega=30.0)
>>> s = shake.state(0.0)
>>> s.position.tolist(), s.acceleration.tolist()
([0.01, 0.0, 0.0], [-9.0, 0.0, 0.0])
>>> spin = mb.BaseMotion.rotation(axis=(0, 0, 1), rate=2.0)
>>> np.round(spin.state(np.pi / 4).rotation, 12).tolist()
[[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
"""
from collections import namedtuple

import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.rotations import direction, rotation_about

__all__ = ["BaseMotion", "BaseState", "BASE_KINDS"]

ELEMENT = "base motion"

#: the state of the base at one time, inertial coordinates: origin p0 (3,), rotation R0 (3, 3) body 0 →
#: inertial, ṗ0, ω0, p̈0, ω̇0 (3,) each
BaseState = namedtuple("BaseState", "position rotation velocity angular_velocity acceleration angular_acceleration")

#: kinds of base motion that a model file can give as data: name -> (parameters, meaning)
BASE_KINDS = {
    "harmonic": ("axis, amplitude, omega, phase (default 0)",
                 "a shake along a fixed axis: p0 = amplitude · cos(omega t + phase) · axis"),
    "rotation": ("axis, rate, angle (default 0)",
                 "a constant-rate rotation about a fixed axis through the ground origin: R0 = R(axis, angle + rate t)"),
}

_ROTATION_TOL = 1e-9


def _vec(x, shape, what, t):
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{ELEMENT}: {what} at t = {t} must be numbers of shape {shape}, got {shown(x)!r}",
                         element=ELEMENT) from None
    if a.shape != shape:
        raise ModelError(f"{ELEMENT}: {what} at t = {t} must have shape {shape}, got shape {a.shape}",
                         element=ELEMENT)
    if not np.all(np.isfinite(a)):
        raise ModelError(f"{ELEMENT}: {what} at t = {t} must be finite, got {a.tolist()}", element=ELEMENT)
    return a


def check_rotation(R, what, t):
    """``R`` as a (3, 3) float array, or a ModelError naming ``what`` when it is not a rotation matrix
    (orthonormal to 1e-9, determinant +1)."""
    R = _vec(R, (3, 3), what, t)
    err = float(np.max(np.abs(R.T @ R - np.eye(3))))
    if not err <= _ROTATION_TOL or np.linalg.det(R) < 0.0:
        raise ModelError(f"{ELEMENT}: {what} at t = {t} is not a rotation matrix (max |RᵀR − E| = {err:.3g}, "
                         f"det = {np.linalg.det(R):.6g}; expected orthonormal with determinant +1)", element=ELEMENT)
    return R


def _unit(axis, what):
    try:
        a = np.asarray(axis, dtype=np.float64)
    except (TypeError, ValueError):
        raise ModelError(f"{ELEMENT}: {what} must be 3 numbers, got {shown(axis)!r}", element=ELEMENT) from None
    if a.shape != (3,) or not np.all(np.isfinite(a)) or not np.any(a != 0.0):
        raise ModelError(f"{ELEMENT}: {what} must be 3 finite numbers, not all zero, got {shown(axis)!r}", element=ELEMENT)
    return direction(a)


def _number(x, what):
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ModelError(f"{ELEMENT}: {what} must be a number, got {shown(x)!r}", element=ELEMENT) from None
    if not np.isfinite(v):
        raise ModelError(f"{ELEMENT}: {what} must be finite, got {shown(x)!r}", element=ELEMENT)
    return v


_ZERO = np.zeros(3)
_E = np.eye(3)


def _cross(a, b):
    """a × b of two 3-vectors (np.cross costs several times more on three components)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


class BaseMotion:
    """The prescribed motion of body 0 (seed 001 §3.1–3.2): ``BaseMotion(state)`` with ``state(t)`` returning
    ``(p0, R0, ṗ0, ω0, p̈0, ω̇0)`` — the base origin (3,), its rotation matrix (3, 3, body 0 → inertial), the
    origin's velocity, the angular velocity, the origin's acceleration and the angular acceleration (3,
    each), all in inertial coordinates. The derivatives must be those of p0 and R0 (Ṙ0 = ω̃0 R0): they are not
    checked. Give it to ``ModelBuilder(base_motion=...)`` or ``builder.set_base_motion``; the constructors
    :meth:`translation`, :meth:`harmonic` and :meth:`rotation` cover the common cases (the last two can be
    written in model files, see :data:`BASE_KINDS`). Bad values raise a ``ModelError`` naming them
    ("base motion") and the time.

    The kernels receive body 0's spatial velocity [ω0; ṗ0 − ω0 × p0] and spatial acceleration
    [ω̇0; p̈0 − ω̇0 × p0 − ω0 × ṗ0] (:meth:`block`); through a_0 = a_base − [0; g] they supply the book's base
    terms, the acceleration r̈_0 of the inboard joint point in eqs. 3.26–3.30 (with r̈_0 + ω̇_0 × c_01 +
    ω_0 × (ω_0 × c_01) for a joint off body 0's origin)."""

    __slots__ = ("_state", "kind", "params", "_trusted")

    def __init__(self, state, kind="custom", params=None):
        if not callable(state):
            raise ModelError(f"{ELEMENT}: expected a callable state(t) -> (p0, R0, ṗ0, ω0, p̈0, ω̇0), got {shown(state)!r}",
                             element=ELEMENT)
        self._state = state
        self.kind = kind
        #: the parameters of a kind of :data:`BASE_KINDS` (what a model file stores), else None
        self.params = params
        self._trusted = False     # the kinds of BASE_KINDS give checked numbers by construction
        self.state(0.0)   # fail early, at build time

    def __reduce__(self):
        """Pickle the kinds of :data:`BASE_KINDS` as their data (a model is sent to worker processes in sweeps);
        a motion of Python callables pickles when they do."""
        if self.params is not None:
            return BaseMotion.from_data, (self.to_data(),)
        return BaseMotion, (self._state, self.kind)

    def __repr__(self):
        if self.params is not None:
            return f"BaseMotion.{self.kind}({', '.join(f'{k}={shown(v)!r}' for k, v in self.params.items())})"
        return f"BaseMotion({self._state!r})"

    # ---- evaluation ---------------------------------------------------------------------------------------
    def state(self, t):
        """The :data:`BaseState` at time ``t``, checked: shapes, finite numbers, R0 a rotation matrix."""
        try:
            out = self._state(t)
            p, R, v, w, a, al = out
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"{ELEMENT}: state(t) must return (p0, R0, ṗ0, ω0, p̈0, ω̇0) at t = {t} ({exc})",
                             element=ELEMENT) from None
        return BaseState(_vec(p, (3,), "position p0", t), check_rotation(R, "rotation R0", t),
                         _vec(v, (3,), "velocity ṗ0", t), _vec(w, (3,), "angular velocity ω0", t),
                         _vec(a, (3,), "acceleration p̈0", t), _vec(al, (3,), "angular acceleration ω̇0", t))

    def block(self, t, out=None):
        """The 24 numbers the kernels read (the workspace's base block, ``kinematics.X_R``): R0 row-major (9),
        p0 (3), the spatial velocity [ω0; ṗ0 − ω0 × p0] (6) and the spatial acceleration
        [ω̇0; p̈0 − ω̇0 × p0 − ω0 × ṗ0] (6) of body 0 in ground Plücker coordinates (the module docstring derives
        them), into ``out`` when given."""
        p, R, v, w, a, al = self._state(t) if self._trusted else self.state(t)
        out = np.empty(24) if out is None else out
        out[0:9] = np.reshape(R, 9)
        out[9:12] = p
        out[12:15] = w
        out[15:18] = v - _cross(w, p)
        out[18:21] = al
        out[21:24] = a - _cross(al, p) - _cross(w, v)
        return out

    def _trust(self):
        """Skip the checks of :meth:`state` in :meth:`block` (the kinds of :data:`BASE_KINDS`, whose numbers are
        made from checked parameters); a Python right-hand side evaluates the base at every step."""
        self._trusted = True
        return self

    # ---- constructors ---------------------------------------------------------------------------------------
    @classmethod
    def translation(cls, position, velocity, acceleration):
        """A base that translates without turning: ``position(t)``, ``velocity(t)``, ``acceleration(t)``
        (callables returning 3 numbers, inertial coordinates; the velocity and acceleration must be the
        derivatives of the position)."""
        for name, f in (("position", position), ("velocity", velocity), ("acceleration", acceleration)):
            if not callable(f):
                raise ModelError(f"{ELEMENT}: translation {name} must be a callable of t, got {shown(f)!r}", element=ELEMENT)
        return cls(lambda t: (position(t), _E, velocity(t), _ZERO, acceleration(t), _ZERO), kind="translation")

    @classmethod
    def harmonic(cls, axis, amplitude, omega, phase=0.0):
        """A shake along the fixed ``axis``: p0(t) = amplitude · cos(omega t + phase) · axis/|axis|, no rotation
        (the support of a pendulum shaken horizontally, or Kapitza's vertically shaken pendulum)."""
        e = _unit(axis, "harmonic axis")
        A = _number(amplitude, "harmonic amplitude")
        W = _number(omega, "harmonic omega")
        ph = _number(phase, "harmonic phase")

        def state(t):
            c = np.cos(W * t + ph)
            s = np.sin(W * t + ph)
            return A * c * e, _E, -A * W * s * e, _ZERO, -A * W * W * c * e, _ZERO

        return cls(state, kind="harmonic", params=dict(axis=e.tolist(), amplitude=A, omega=W, phase=ph))._trust()

    @classmethod
    def rotation(cls, axis, rate, angle=0.0):
        """A constant-rate rotation about the fixed ``axis`` through the ground origin: R0(t) = R(axis, angle +
        rate t), ω0 = rate · axis/|axis|, ω̇0 = 0, p0 = 0 (a turntable)."""
        e = _unit(axis, "rotation axis")
        r = _number(rate, "rotation rate")
        a0 = _number(angle, "rotation angle")
        w = r * e

        def state(t):
            return _ZERO, rotation_about(e, a0 + r * t), _ZERO, w, _ZERO, _ZERO

        return cls(state, kind="rotation", params=dict(axis=e.tolist(), rate=r, angle=a0))._trust()

    # ---- data (model files) -----------------------------------------------------------------------------------
    def to_data(self):
        """The mapping a model file stores (``{"kind": ..., parameters}``), or a ModelError for a motion given
        by Python callables."""
        if self.params is None:
            raise ModelError(f"{ELEMENT}: a base motion given by Python functions cannot be written to a model "
                             f"file; kinds that can: {', '.join(BASE_KINDS)}", element=ELEMENT)
        return {"kind": self.kind, **self.params}

    @classmethod
    def from_data(cls, data):
        """The BaseMotion of a model file's ``base_motion`` mapping (see :data:`BASE_KINDS`)."""
        if not isinstance(data, dict) or "kind" not in data:
            raise ModelError(f"{ELEMENT}: expected a mapping with 'kind' ({' or '.join(BASE_KINDS)}) and its "
                             f"parameters, got {shown(data)!r}", element=ELEMENT)
        kind = data["kind"]
        if kind not in BASE_KINDS:
            raise ModelError(f"{ELEMENT}: unknown kind {kind!r}; expected one of {', '.join(BASE_KINDS)}",
                             element=ELEMENT)
        params = {k: v for k, v in data.items() if k != "kind"}
        try:
            return getattr(cls, kind)(**params)
        except TypeError:
            raise ModelError(f"{ELEMENT}: kind '{kind}' takes {BASE_KINDS[kind][0]}, got {sorted(params)}",
                             element=ELEMENT) from None


def as_base_motion(value):
    """``value`` as a BaseMotion (a BaseMotion, a callable state(t), a model-file mapping, or None)."""
    if value is None or isinstance(value, BaseMotion):
        return value
    if isinstance(value, dict):
        return BaseMotion.from_data(value)
    if callable(value):
        return BaseMotion(value)
    raise ModelError(f"{ELEMENT}: expected a BaseMotion, a callable state(t) -> (p0, R0, ṗ0, ω0, p̈0, ω̇0) or "
                     f"None, got {shown(value)!r}", element=ELEMENT)
