"""The parameters of the Whipple bicycle (seed 003, Table 1): :class:`BicycleParameters`, the benchmark values,
their physical checks (§2.2–2.3) and YAML files.

Parameters are a mapping with exactly the keys of :data:`PARAMETER_NAMES` (Table 1 in ASCII, SI units, ``lam``
in radians). Inertias are about each body's own centre of mass in the reference configuration, as the matrix
``[[Ixx, 0, Ixz], [0, Iyy, 0], [Ixz, 0, Izz]]`` (tensor entries, so ``IBxz`` is the off-diagonal entry of the
inertia matrix).
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError, shown
from multibody.files import write_text


#: Parameter names, in the order of the paper's Table 1 (ASCII spelling; ``lam`` is the steer-axis tilt).
PARAMETER_NAMES = (
    "w", "c", "lam", "g",
    "rR", "mR", "IRxx", "IRyy",
    "xB", "zB", "mB", "IBxx", "IByy", "IBzz", "IBxz",
    "xH", "zH", "mH", "IHxx", "IHyy", "IHzz", "IHxz",
    "rF", "mF", "IFxx", "IFyy",
)

#: Unit and meaning of each parameter (seed 003, Table 1 and §2.3).
PARAMETER_INFO = {
    "w": ("m", "wheelbase: distance from rear contact P to front contact Q"),
    "c": ("m", "trail: distance of Q behind the steer-axis ground point (c > 0 usual)"),
    "lam": ("rad", "steer-axis tilt from the vertical, -pi/2 < lam < pi/2 (pi/2 - head angle)"),
    "g": ("N/kg", "gravitational acceleration"),
    "rR": ("m", "rear wheel radius"),
    "mR": ("kg", "rear wheel mass"),
    "IRxx": ("kg m^2", "rear wheel moment of inertia about a diameter (IRzz = IRxx)"),
    "IRyy": ("kg m^2", "rear wheel moment of inertia about its axle"),
    "xB": ("m", "rear frame B centre of mass, x (forward of P)"),
    "zB": ("m", "rear frame B centre of mass, z (down; negative above the ground)"),
    "mB": ("kg", "rear frame (with rider) mass"),
    "IBxx": ("kg m^2", "rear frame inertia, xx entry, about its centre of mass"),
    "IByy": ("kg m^2", "rear frame inertia, yy entry"),
    "IBzz": ("kg m^2", "rear frame inertia, zz entry"),
    "IBxz": ("kg m^2", "rear frame inertia, xz entry of the inertia matrix"),
    "xH": ("m", "front frame H centre of mass, x"),
    "zH": ("m", "front frame H centre of mass, z (down)"),
    "mH": ("kg", "front frame (handlebar and fork) mass"),
    "IHxx": ("kg m^2", "front frame inertia, xx entry, about its centre of mass"),
    "IHyy": ("kg m^2", "front frame inertia, yy entry"),
    "IHzz": ("kg m^2", "front frame inertia, zz entry"),
    "IHxz": ("kg m^2", "front frame inertia, xz entry of the inertia matrix"),
    "rF": ("m", "front wheel radius"),
    "mF": ("kg", "front wheel mass"),
    "IFxx": ("kg m^2", "front wheel moment of inertia about a diameter (IFzz = IFxx)"),
    "IFyy": ("kg m^2", "front wheel moment of inertia about its axle"),
}


@dataclass(frozen=True)
class BicycleParameters(Mapping):
    """The 25 design parameters of the Whipple bicycle plus ``g`` (seed 003, Table 1).

    A read-only mapping (``p["mB"]``, ``dict(p)``) as well as a dataclass (``p.mB``). Construction checks
    only that every value is a finite real number; :func:`validate_parameters` checks physical validity.
    Use :meth:`replace` to derive a modified set.
    """

    w: float
    c: float
    lam: float
    g: float
    rR: float
    mR: float
    IRxx: float
    IRyy: float
    xB: float
    zB: float
    mB: float
    IBxx: float
    IByy: float
    IBzz: float
    IBxz: float
    xH: float
    zH: float
    mH: float
    IHxx: float
    IHyy: float
    IHzz: float
    IHxz: float
    rF: float
    mF: float
    IFxx: float
    IFyy: float

    def __post_init__(self):
        for name in PARAMETER_NAMES:
            object.__setattr__(self, name, _as_real(name, getattr(self, name)))

    # Mapping protocol
    def __getitem__(self, key):
        if key not in PARAMETER_INFO:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self):
        return iter(PARAMETER_NAMES)

    def __len__(self):
        return len(PARAMETER_NAMES)

    def replace(self, **changes):
        """A copy with some parameters changed (unknown names raise ModelError)."""
        for key in changes:
            if key not in PARAMETER_INFO:
                raise ModelError(f"unknown bicycle parameter '{key}'; expected one of {', '.join(PARAMETER_NAMES)}",
                                 element=f"parameter '{key}'")
        return dataclasses.replace(self, **changes)

    def to_dict(self):
        """A plain ``dict`` of Python floats, in Table 1 order."""
        return {name: float(getattr(self, name)) for name in PARAMETER_NAMES}


def _as_real(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(f"bicycle parameter '{name}' must be a real number, got {shown(value)!r} "
                         f"({type(value).__name__})", element=f"parameter '{name}'")
    value = float(value)
    if not math.isfinite(value):
        raise ModelError(f"bicycle parameter '{name}' must be finite, got {shown(value)!r}", element=f"parameter '{name}'")
    return value


def _from_mapping(params):
    """BicycleParameters from any mapping with exactly the keys of PARAMETER_NAMES (type checks only)."""
    if isinstance(params, BicycleParameters):
        return params
    if not isinstance(params, Mapping):
        raise ModelError(f"bicycle parameters must be a mapping of {len(PARAMETER_NAMES)} named numbers, "
                         f"got {type(params).__name__}", element="parameters")
    for key in params:
        if key not in PARAMETER_INFO:
            raise ModelError(f"unknown bicycle parameter '{key}'; expected one of {', '.join(PARAMETER_NAMES)}",
                             element=f"parameter '{key}'")
    for name in PARAMETER_NAMES:
        if name not in params:
            raise ModelError(f"bicycle parameter '{name}' is missing ({PARAMETER_INFO[name][1]}, "
                             f"{PARAMETER_INFO[name][0]})", element=f"parameter '{name}'")
    return BicycleParameters(**{name: params[name] for name in PARAMETER_NAMES})


def benchmark_parameters():
    """The benchmark bicycle of seed 003, Table 1 (exact values; IHxz = -0.00756, lam = pi/10, g = 9.81).

    The lower-left entry of the front-frame inertia is printed without its minus sign in the translated
    text; the matrix is symmetric, and only IHxz = -0.00756 reproduces eqs. (6.1)-(6.4) (seed 003 §0).
    """
    return BicycleParameters(
        w=1.02, c=0.08, lam=math.pi / 10.0, g=9.81,
        rR=0.3, mR=2.0, IRxx=0.0603, IRyy=0.12,
        xB=0.3, zB=-0.9, mB=85.0, IBxx=9.2, IByy=11.0, IBzz=2.8, IBxz=2.4,
        xH=0.9, zH=-0.7, mH=4.0, IHxx=0.05892, IHyy=0.06, IHzz=0.00708, IHxz=-0.00756,
        rF=0.35, mF=3.0, IFxx=0.1405, IFyy=0.28,
    )


def _check_body_inertia(body, xx, yy, zz, xz):
    """Principal moments of [[xx,0,xz],[0,yy,0],[xz,0,zz]] positive and obeying the triangle inequality."""
    names = f"I{body}xx, I{body}yy, I{body}zz, I{body}xz"
    label = {"B": "rear frame B", "H": "front frame H"}[body]
    mean = 0.5 * (xx + zz)
    rad = math.hypot(0.5 * (xx - zz), xz)
    principal = sorted((mean - rad, mean + rad, yy))
    scale = max(abs(xx), abs(yy), abs(zz), abs(xz), 1e-300)
    if principal[0] <= 0.0:
        bad = f"I{body}yy" if yy <= 0.0 else (f"I{body}xz" if xx > 0 and zz > 0 else
                                              (f"I{body}xx" if xx <= zz else f"I{body}zz"))
        raise ModelError(f"bicycle parameter '{bad}': inertia of the {label} ({names} = {xx}, {yy}, {zz}, {xz}) "
                         f"is not positive definite (principal moments {principal}); "
                         f"expected three positive principal moments", element=f"parameter '{bad}'")
    if principal[2] > principal[0] + principal[1] + 1e-12 * scale:
        raise ModelError(f"bicycle parameter '{names}': inertia of the {label} violates the triangle inequality "
                         f"(principal moments {principal}: largest exceeds the sum of the other two)",
                         element=f"parameter '{names}'")


def validate_parameters(params):
    """Check a parameter mapping and return it as :class:`BicycleParameters` (seed 003, §2.2-2.3).

    Raises one :class:`ModelError` naming the first offending parameter. Checks: exactly the 26 keys;
    finite real values; w, rR, rF, masses positive; g >= 0; -pi/2 < lam < pi/2; centres of mass above the
    ground (zB, zH < 0); body inertias symmetric positive definite with the lateral symmetry the model
    assumes (only xx, yy, zz, xz entries) and obeying the triangle inequality; wheel inertias positive with
    IRyy <= 2 IRxx and IFyy <= 2 IFxx (axisymmetric wheels, IRzz = IRxx).
    """
    p = _from_mapping(params)

    def fail(name, expected):
        raise ModelError(f"bicycle parameter '{name}' = {shown(p[name])!r} is invalid: expected {expected} "
                         f"({PARAMETER_INFO[name][1]})", element=f"parameter '{name}'")

    for name in ("w", "rR", "rF", "mR", "mB", "mH", "mF"):
        if not p[name] > 0.0:
            fail(name, "a positive value")
    if not p.g >= 0.0:
        fail("g", "a value >= 0")
    if not -math.pi / 2 < p.lam < math.pi / 2:
        fail("lam", "-pi/2 < lam < pi/2 (radians)")
    for name in ("zB", "zH"):
        if not p[name] < 0.0:
            fail(name, "a negative value (z points down; the centre of mass is above the ground)")
    for wheel in ("R", "F"):
        ixx, iyy = p[f"I{wheel}xx"], p[f"I{wheel}yy"]
        if not ixx > 0.0:
            fail(f"I{wheel}xx", "a positive moment of inertia")
        if not iyy > 0.0:
            fail(f"I{wheel}yy", "a positive moment of inertia")
        if iyy > 2.0 * ixx * (1.0 + 1e-12):
            fail(f"I{wheel}yy", f"I{wheel}yy <= 2 I{wheel}xx = {2.0 * ixx!r} (triangle inequality of an "
                                "axisymmetric wheel)")
    _check_body_inertia("B", p.IBxx, p.IByy, p.IBzz, p.IBxz)
    _check_body_inertia("H", p.IHxx, p.IHyy, p.IHzz, p.IHxz)
    return p


def coerce_parameters(params, validate):
    """``params`` as :class:`BicycleParameters`: checked by :func:`validate_parameters` when ``validate``, else
    for its names and real values only."""
    return validate_parameters(params) if validate else _from_mapping(params)


def load_parameters(path, validate=True):
    """Read a bicycle parameter set from a YAML file (``yaml.safe_load``; a flat mapping name: value).

    A top-level ``bicycle:`` mapping is also accepted. Any problem raises one :class:`ModelError` that
    names the file and the offending parameter.
    """
    import yaml

    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except OSError as exc:
        raise ModelError(f"cannot read bicycle parameter file '{path}': {exc.strerror or exc}",
                         element=f"file '{path}'") from exc
    except yaml.YAMLError as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        raise ModelError(f"bicycle parameter file '{path}' is not valid YAML{where}: "
                         f"{getattr(exc, 'problem', None) or exc}", element=f"file '{path}'") from exc
    if isinstance(data, Mapping) and set(data) == {"bicycle"} and isinstance(data["bicycle"], Mapping):
        data = data["bicycle"]
    if not isinstance(data, Mapping):
        raise ModelError(f"bicycle parameter file '{path}' must hold a mapping of parameter names to numbers, "
                         f"got {type(data).__name__}", element=f"file '{path}'")
    try:
        return coerce_parameters(data, validate)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}", element=exc.element) from None


def save_parameters(params, path):
    """Write a parameter set as YAML (one ``name: value`` line per parameter, full double precision); returns the
    path (a place that cannot be written: ``ResultFileError``, ``multibody.files``)."""
    import yaml

    p = _from_mapping(params)
    lines = ["# Whipple bicycle parameters (seed 003, Table 1 names; SI units, lam in radians)"]
    for name in PARAMETER_NAMES:
        text = yaml.safe_dump({name: float(p[name])}, default_flow_style=False).strip()
        lines.append(f"{text:<32s} # {PARAMETER_INFO[name][0]}: {PARAMETER_INFO[name][1]}")
    return write_text(path, "\n".join(lines) + "\n", "bicycle parameters")
