"""External loads: a force and a torque applied at a frame, constant or varying in time, fixed in the world
("dead" loads) or turning with the frame (follower loads).

``ModelBuilder.add_load(name, frame, force=, torque=, reference="world" | "local", curve=None)``: at time t the
load is

    F(t) = s(t) F₀,   T(t) = s(t) T₀     (ground axes for ``reference="world"``; the frame's axes for ``"local"``)

acting at the frame's origin, with the load curve s(t) (:class:`LoadCurve`, the "load curve" of finite-element
codes): ``offset + amplitude sin(ω t + φ) + table(t)``, ``table`` the piecewise-linear interpolation of
(time, value) knots, held at its end values outside them. A curve is data (it goes into model files), and the
compiled right-hand sides evaluate it (``kernels/forces.py``), so a load acts in every formulation that forms the
tree's applied forces.

The generalized force of a load follows the principle of virtual power (seed 001 §3.4): τ_k = J_k · F + s_ω,k · T
for the coordinates k on the path of the frame's body (J_k: the column of the point's Jacobian, s_ω,k: the angular
part of the motion subspace). Its derivative with respect to q, which the statics and the linearization need, is
in ``kernels/derivatives_forces.py``: a follower load turns with its body (∂F/∂q_j = s_ω,j × F), so its stiffness
is not symmetric.

>>> import multibody as mb
>>> b = mb.ModelBuilder(gravity=(0, 0, 0))
>>> b.add_body("box", mass=1.0, inertia=(0.1, 0.1, 0.1))
'box'
>>> b.add_joint("slide", mb.Prismatic(axis=(1, 0, 0)), parent="ground", child="box")
'slide'
>>> b.add_load("push", "box", force=(2.0, 0, 0), curve=mb.LoadCurve.ramp(1.0))
'push'
>>> model = b.build()
>>> model.loads[0].curve.at(0.5), model.loads[0].curve.at(3.0)
(0.5, 1.0)
"""
import math
from dataclasses import dataclass, field

import numpy as np

from multibody.errors import ModelError
from multibody.kernels.forces import (LF_FORCE, LF_OFFSET, LF_PHASE, LF_POINT, LF_TORQUE, LF_WIDTH,
                                      LI_BODY, LI_KNOT, LI_LOCAL, LI_NKNOT, LI_WIDTH)

__all__ = ["LoadCurve", "Load", "LoadTable", "checked_load", "as_curve"]

REFERENCES = ("world", "local")


def _number(value, what, element):
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be a number, got {value!r}", element=element) from None
    if not math.isfinite(x):
        raise ModelError(f"{element}: {what} must be finite, got {value!r}", element=element)
    return x


@dataclass(frozen=True)
class LoadCurve:
    """s(t) = offset + amplitude sin(ω t + φ) + table(t) (module docstring). Make one with :meth:`constant`,
    :meth:`ramp`, :meth:`harmonic` or :meth:`table`; ``as_dict`` / ``from_dict`` are its model-file form."""

    offset: float = 1.0
    amplitude: float = 0.0
    omega: float = 0.0
    phase: float = 0.0
    times: tuple = ()
    values: tuple = ()

    @classmethod
    def constant(cls, value=1.0):
        return cls(offset=_number(value, "value", "load curve"))

    @classmethod
    def ramp(cls, duration, start=0.0):
        """0 until ``start``, rising linearly to 1 at ``start + duration``, then 1: a load applied gradually."""
        d = _number(duration, "duration", "load curve")
        if d <= 0.0:
            raise ModelError(f"load curve: ramp duration must be > 0, got {duration!r}", element="load curve")
        s = _number(start, "start", "load curve")
        return cls.table((s, s + d), (0.0, 1.0))

    @classmethod
    def harmonic(cls, omega, amplitude=1.0, phase=0.0, offset=0.0):
        """offset + amplitude sin(ω t + phase) (ω in rad/s)."""
        return cls(offset=_number(offset, "offset", "load curve"), amplitude=_number(amplitude, "amplitude",
                                                                                      "load curve"),
                   omega=_number(omega, "omega", "load curve"), phase=_number(phase, "phase", "load curve"))

    @classmethod
    def table(cls, times, values):
        """The piecewise-linear interpolation of the knots (times increasing), held at the end values."""
        element = "load curve"
        try:
            t = np.asarray(times, dtype=float).reshape(-1)
            y = np.asarray(values, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise ModelError(f"{element}: times and values must be numbers", element=element) from None
        if t.shape != y.shape or t.size == 0 or not (np.isfinite(t).all() and np.isfinite(y).all()):
            raise ModelError(f"{element}: times and values must be as many finite numbers (at least one), got "
                             f"{t.size} and {y.size}", element=element)
        if np.any(np.diff(t) <= 0.0):
            raise ModelError(f"{element}: times must increase, got {t.tolist()}", element=element)
        return cls(offset=0.0, times=tuple(t.tolist()), values=tuple(y.tolist()))

    def at(self, t):
        """s(t) (the numbers the kernels compute: ``kernels.forces.curve_value``)."""
        s = self.offset + (self.amplitude * math.sin(self.omega * t + self.phase) if self.amplitude else 0.0)
        if self.times:
            s += float(np.interp(t, self.times, self.values))
        return s

    @property
    def is_constant(self):
        return self.amplitude == 0.0 and not self.times

    def as_dict(self):
        out = {}
        for key in ("offset", "amplitude", "omega", "phase"):
            if getattr(self, key) != LoadCurve.__dataclass_fields__[key].default:
                out[key] = getattr(self, key)
        if self.times:
            out["times"] = list(self.times)
            out["values"] = list(self.values)
        return out

    @classmethod
    def from_dict(cls, data, element="load curve"):
        if not isinstance(data, dict):
            raise ModelError(f"{element}: a load curve must be a mapping (offset, amplitude, omega, phase, times, "
                             f"values), got {data!r}", element=element)
        unknown = set(data) - {"offset", "amplitude", "omega", "phase", "times", "values"}
        if unknown:
            raise ModelError(f"{element}: unknown load-curve key(s) {sorted(unknown)}", element=element)
        table = cls.table(data["times"], data.get("values", ())) if "times" in data else None
        default = 0.0 if table is not None else 1.0
        return cls(offset=_number(data.get("offset", default), "offset", element),
                   amplitude=_number(data.get("amplitude", 0.0), "amplitude", element),
                   omega=_number(data.get("omega", 0.0), "omega", element),
                   phase=_number(data.get("phase", 0.0), "phase", element),
                   times=table.times if table else (), values=table.values if table else ())


def as_curve(curve, element):
    """``curve`` as a LoadCurve (None: the constant 1; a number: that constant; a mapping: ``from_dict``)."""
    if curve is None:
        return LoadCurve()
    if isinstance(curve, LoadCurve):
        return curve
    if isinstance(curve, dict):
        return LoadCurve.from_dict(curve, element)
    return LoadCurve.constant(_number(curve, "curve", element))


@dataclass(frozen=True)
class Load:
    """A load as added (module docstring): ``frame`` (a frame or a body), ``force`` F₀ and ``torque`` T₀ (3 numbers
    each), ``reference`` "world" or "local", ``curve`` s(t). ``body`` (index) and ``point``, ``axes`` (the frame
    in the body's kernel frame) are filled when the model is built."""

    name: str
    frame: str
    force: np.ndarray
    torque: np.ndarray
    reference: str = "world"
    curve: LoadCurve = field(default_factory=LoadCurve)
    body: int = -1
    point: np.ndarray = None
    axes: np.ndarray = None

    @property
    def element(self):
        return f"load '{self.name}'"

    def at(self, t):
        """(F, T) at time t, in the axes of ``reference``."""
        s = self.curve.at(t)
        return s * self.force, s * self.torque

    def as_dict(self):
        out = {"frame": self.frame}
        if np.any(self.force):
            out["force"] = self.force.tolist()
        if np.any(self.torque):
            out["torque"] = self.torque.tolist()
        if self.reference != "world":
            out["reference"] = self.reference
        if self.curve != LoadCurve():
            out["curve"] = self.curve.as_dict()
        return out


def checked_load(name, frame, force, torque, reference, curve):
    """A :class:`Load` from ``add_load``'s arguments, each checked (a ``ModelError`` names the load)."""
    element = f"load '{name}'"
    if not isinstance(name, str) or not name:
        raise ModelError(f"load name must be a non-empty string, got {name!r}", element=repr(name))
    vectors = []
    for what, value in (("force", force), ("torque", torque)):
        if value is None:
            vectors.append(np.zeros(3))
            continue
        try:
            arr = np.asarray(value, dtype=float).reshape(3)
        except (TypeError, ValueError, OverflowError):
            raise ModelError(f"{element}: {what} must be 3 numbers, got {value!r}", element=element) from None
        if not np.isfinite(arr).all():
            raise ModelError(f"{element}: {what} must be finite, got {arr.tolist()}", element=element)
        vectors.append(arr)
    if reference not in REFERENCES:
        raise ModelError(f"{element}: reference must be 'world' or 'local', got {reference!r}", element=element)
    return Load(name, frame, vectors[0], vectors[1], reference, as_curve(curve, element))


class LoadTable:
    """The loads packed for the kernels (``kernels/forces.py``): ``(ints (nl, 4), floats (nl, 13), knots (K, 2))``
    with the columns ``LI_*`` and ``LF_*``: the body, whether the vectors turn with it, the knots of its table; the
    point and the vectors in the body's kernel frame (local) or ground axes (world), the harmonic part of the
    curve."""

    @staticmethod
    def arrays(loads):
        nl = len(loads)
        ints = np.zeros((nl, LI_WIDTH), dtype=np.int64)
        floats = np.zeros((nl, LF_WIDTH))
        knots = []
        for r, load in enumerate(loads):
            local = load.reference == "local"
            ints[r, LI_BODY] = load.body
            ints[r, LI_LOCAL] = int(local)
            ints[r, LI_KNOT] = len(knots)
            ints[r, LI_NKNOT] = len(load.curve.times)
            knots += list(zip(load.curve.times, load.curve.values))
            floats[r, LF_POINT:LF_POINT + 3] = load.point
            axes = load.axes if local else np.eye(3)
            floats[r, LF_FORCE:LF_FORCE + 3] = axes @ load.force
            floats[r, LF_TORQUE:LF_TORQUE + 3] = axes @ load.torque
            c = load.curve
            floats[r, LF_OFFSET:LF_PHASE + 1] = c.offset, c.amplitude, c.omega, c.phase
        return ints, floats, np.array(knots, dtype=float).reshape(-1, 2)
