"""The Whipple bicycle benchmark: linearized lean and steer dynamics (seed 003).

Seed 003 is J. P. Meijaard, J. M. Papadopoulos, A. Ruina, A. L. Schwab, "Linearized dynamics equations
for the balance and steer of a bicycle: a benchmark and review", Proc. R. Soc. A 463 (2007) 1955-1982.
Equation numbers below are the paper's.

The model: four rigid, laterally symmetric bodies (rear wheel R, rear frame with rider B, front frame
H, front wheel F) joined by ideal hinges; knife-edge wheels rolling without slip on a level plane;
gravity the only applied force. Linearized about upright straight running at forward speed ``v``, the
lean angle ``phi`` and the steer angle ``delta`` obey (eq. 5.3)

    M q'' + v C1 q' + (g K0 + v^2 K2) q = f,      q = [phi, delta],  f = [T_phi, T_delta],

and the forward motion decouples (eq. 5.2). Conventions (SAE J670e, seed 003 §2): x forward from the
rear contact P, y to the right, z **down**; ``lam`` is the steer-axis tilt from the vertical; the trail
``c`` is positive when the front contact lies behind the steer-axis ground point; positive lean is to
the right, positive steer is to the right, and the rear-wheel angle ``thetaR`` grows when rolling
backwards, so ``v = -rR * dthetaR/dt``.

Parameters are a mapping with exactly the keys of :data:`PARAMETER_NAMES` (Table 1 in ASCII, SI units,
``lam`` in radians). Inertias are about each body's own centre of mass in the reference configuration,
as the matrix ``[[Ixx, 0, Ixz], [0, Iyy, 0], [Ixz, 0, Izz]]`` (tensor entries, so ``IBxz`` is the
off-diagonal entry of the inertia matrix).

Example
-------
>>> from multibody.systems import bicycle
>>> p = bicycle.benchmark_parameters()
>>> M, C1, K0, K2 = bicycle.linear_matrices(p)
>>> round(float(M[0, 0]), 5)
80.81722
>>> weave, capsize = bicycle.critical_speeds(p)
>>> round(weave, 6), round(capsize, 6)
(4.292383, 6.024262)
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from multibody.errors import ModelError

__all__ = [
    "PARAMETER_NAMES",
    "PARAMETER_INFO",
    "BicycleParameters",
    "benchmark_parameters",
    "validate_parameters",
    "load_parameters",
    "save_parameters",
    "intermediate_quantities",
    "linear_matrices",
    "characteristic_coefficients",
    "state_matrices",
    "EigenSweep",
    "eigenvalues",
    "mode_shapes",
    "CriticalSpeeds",
    "critical_speeds",
    "forward_inertia",
    "forward_acceleration",
    "LinearSimulation",
    "simulate",
    "plot_eigenvalues",
    "plot_time_history",
]

# ----------------------------------------------------------------------------------------------------
# Parameters (seed 003, Table 1)
# ----------------------------------------------------------------------------------------------------

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
        raise ModelError(f"bicycle parameter '{name}' must be a real number, got {value!r} "
                         f"({type(value).__name__})", element=f"parameter '{name}'")
    value = float(value)
    if not math.isfinite(value):
        raise ModelError(f"bicycle parameter '{name}' must be finite, got {value!r}", element=f"parameter '{name}'")
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
        raise ModelError(f"bicycle parameter '{name}' = {p[name]!r} is invalid: expected {expected} "
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


def _coerce(params, validate):
    return validate_parameters(params) if validate else _from_mapping(params)


# ----------------------------------------------------------------------------------------------------
# YAML files
# ----------------------------------------------------------------------------------------------------

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
        return _coerce(data, validate)
    except ModelError as exc:
        raise ModelError(f"{path}: {exc}", element=exc.element) from None


def save_parameters(params, path):
    """Write a parameter set as YAML (one ``name: value`` line per parameter, full double precision)."""
    import yaml

    p = _from_mapping(params)
    lines = ["# Whipple bicycle parameters (seed 003, Table 1 names; SI units, lam in radians)"]
    for name in PARAMETER_NAMES:
        text = yaml.safe_dump({name: float(p[name])}, default_flow_style=False).strip()
        lines.append(f"{text:<32s} # {PARAMETER_INFO[name][0]}: {PARAMETER_INFO[name][1]}")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


# ----------------------------------------------------------------------------------------------------
# Appendix A: coefficients of M, C1, K0, K2
# ----------------------------------------------------------------------------------------------------

def intermediate_quantities(params, validate=True):
    """All intermediate quantities of Appendix A (seed 003, eqs. A.1-A.19), named as in the paper.

    Keys: ``mT, xT, zT`` (A.1-A.3), ``ITxx, ITxz, IRzz, IFzz, ITzz`` (A.4-A.7), ``mA, xA, zA`` (A.8-A.9),
    ``IAxx, IAxz, IAzz`` (A.10-A.12), ``uA`` (A.13), ``IAll, IAlx, IAlz`` for I_A-lambda-lambda,
    I_A-lambda-x, I_A-lambda-z (A.14-A.16), ``mu`` (A.17), ``SR, SF, ST`` (A.18), ``SA`` (A.19).
    Also ``mTzT`` and ``mTxT``, the products formed without dividing by mT (the same numbers, fewer
    roundings). ``validate=False`` skips the physical checks (for degenerate limits in analysis).
    """
    p = _coerce(params, validate)
    w, c, lam = p.w, p.c, p.lam
    sl, cl = math.sin(lam), math.cos(lam)
    rR, mR, rF, mF = p.rR, p.mR, p.rF, p.mF
    xB, zB, mB, xH, zH, mH = p.xB, p.zB, p.mB, p.xH, p.zH, p.mH

    mT = mR + mB + mH + mF                                                       # (A.1)
    mTxT = xB * mB + xH * mH + w * mF
    mTzT = -rR * mR + zB * mB + zH * mH - rF * mF
    xT = mTxT / mT                                                               # (A.2)
    zT = mTzT / mT                                                               # (A.3)
    ITxx = (p.IRxx + p.IBxx + p.IHxx + p.IFxx
            + mR * rR ** 2 + mB * zB ** 2 + mH * zH ** 2 + mF * rF ** 2)         # (A.4)
    ITxz = p.IBxz + p.IHxz - mB * xB * zB - mH * xH * zH + mF * w * rF           # (A.5)
    IRzz, IFzz = p.IRxx, p.IFxx                                                  # (A.6)
    ITzz = IRzz + p.IBzz + p.IHzz + IFzz + mB * xB ** 2 + mH * xH ** 2 + mF * w ** 2   # (A.7)
    mA = mH + mF                                                                 # (A.8)
    xA = (xH * mH + w * mF) / mA                                                 # (A.9)
    zA = (zH * mH - rF * mF) / mA
    IAxx = p.IHxx + IFzz + mH * (zH - zA) ** 2 + mF * (rF + zA) ** 2             # (A.10)
    IAxz = p.IHxz - mH * (xH - xA) * (zH - zA) + mF * (w - xA) * (rF + zA)       # (A.11)
    IAzz = p.IHzz + IFzz + mH * (xH - xA) ** 2 + mF * (w - xA) ** 2              # (A.12)
    uA = (xA - w - c) * cl - zA * sl                                             # (A.13)
    IAll = mA * uA ** 2 + IAxx * sl ** 2 + 2.0 * IAxz * sl * cl + IAzz * cl ** 2  # (A.14)
    IAlx = -mA * uA * zA + IAxx * sl + IAxz * cl                                 # (A.15)
    IAlz = mA * uA * xA + IAxz * sl + IAzz * cl                                  # (A.16)
    mu = c / w * cl                                                              # (A.17)
    SR = p.IRyy / rR                                                             # (A.18)
    SF = p.IFyy / rF
    ST = SR + SF
    SA = mA * uA + mu * mTxT                                                     # (A.19)
    return dict(mT=mT, xT=xT, zT=zT, ITxx=ITxx, ITxz=ITxz, IRzz=IRzz, IFzz=IFzz, ITzz=ITzz,
                mA=mA, xA=xA, zA=zA, IAxx=IAxx, IAxz=IAxz, IAzz=IAzz, uA=uA,
                IAll=IAll, IAlx=IAlx, IAlz=IAlz, mu=mu, SR=SR, SF=SF, ST=ST, SA=SA,
                mTxT=mTxT, mTzT=mTzT)


def linear_matrices(params, validate=True):
    """The constant matrices ``(M, C1, K0, K2)`` of the lean/steer equations (seed 003, eqs. A.20-A.27).

    ``M q'' + v C1 q' + (g K0 + v^2 K2) q = f`` with ``q = [phi, delta]`` (eq. 5.3). For Table 1 these are
    eqs. (6.1)-(6.4). ``K0[0, 0] = mT zT`` is formed as the sum ``-rR mR + zB mB + zH mH - rF mF`` (the
    numerator of A.3), which is the same quantity without a division and multiplication by mT.
    """
    p = _coerce(params, validate)
    q = intermediate_quantities(p, validate=False)
    sl, cl = math.sin(p.lam), math.cos(p.lam)
    w = p.w
    mu, SA, SF, ST = q["mu"], q["SA"], q["SF"], q["ST"]
    mTzT = q["mTzT"]

    Mpp = q["ITxx"]                                                              # (A.20)
    Mpd = q["IAlx"] + mu * q["ITxz"]
    Mdd = q["IAll"] + 2.0 * mu * q["IAlz"] + mu ** 2 * q["ITzz"]
    M = np.array([[Mpp, Mpd], [Mpd, Mdd]])                                       # (A.21)

    K0pp = mTzT                                                                  # (A.22)
    K0pd = -SA
    K0dd = -SA * sl
    K0 = np.array([[K0pp, K0pd], [K0pd, K0dd]])                                  # (A.23)

    K2pd = (ST - mTzT) / w * cl                                                  # (A.24)
    K2dd = (SA + SF * sl) / w * cl
    K2 = np.array([[0.0, K2pd], [0.0, K2dd]])                                    # (A.25)

    C1pd = mu * ST + SF * cl + q["ITxz"] / w * cl - mu * mTzT                    # (A.26)
    C1dp = -(mu * ST + SF * cl)
    C1dd = q["IAlz"] / w * cl + mu * (SA + q["ITzz"] / w * cl)
    C1 = np.array([[0.0, C1pd], [C1dp, C1dd]])                                   # (A.27)
    return M, C1, K0, K2


# ----------------------------------------------------------------------------------------------------
# Characteristic polynomial, state space, eigenvalues
# ----------------------------------------------------------------------------------------------------

def _mixed(A, B):
    """A11 B22 + A22 B11 - A12 B21 - A21 B12: the bilinear form with det(A + B) = det A + det B + mixed(A, B)."""
    return A[0, 0] * B[1, 1] + A[1, 1] * B[0, 0] - A[0, 1] * B[1, 0] - A[1, 0] * B[0, 1]


def _det(A):
    return A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]


def _poly_in_v(params, validate=True):
    """Coefficients a4..a0 of eq. (6.5) as polynomials in v: list of 5 arrays (highest power of v first)."""
    M, C1, K0, K2 = linear_matrices(params, validate)
    g = _from_mapping(params).g
    # det(M s^2 + v C1 s + g K0 + v^2 K2) = a4 s^4 + a3 s^3 + a2 s^2 + a1 s + a0, each a_i a polynomial in v
    a4 = np.array([_det(M)])
    a3 = np.array([_mixed(M, C1), 0.0])
    a2 = np.array([_mixed(M, K2) + _det(C1), 0.0, g * _mixed(M, K0)])
    a1 = np.array([_mixed(C1, K2), 0.0, g * _mixed(C1, K0), 0.0])
    a0 = np.array([_det(K2), 0.0, g * _mixed(K0, K2), 0.0, g * g * _det(K0)])
    return [a4, a3, a2, a1, a0]


def characteristic_coefficients(params, speeds, validate=True):
    """Coefficients ``(a4, a3, a2, a1, a0)`` of ``det(M s^2 + v C1 s + g K0 + v^2 K2) = 0`` (seed 003, eq. 6.5).

    Vectorised over ``speeds``; each coefficient has the shape of ``speeds``.
    """
    v = np.asarray(speeds, dtype=float)
    return tuple(np.polyval(c, v) * np.ones_like(v) for c in _poly_in_v(params, validate))


def state_matrices(params, speeds, validate=True):
    """First-order form ``x' = A(v) x + B f`` of eq. (5.3) with ``x = [phi, delta, phi', delta']``.

    ``A = [[0, I], [-M^-1 (g K0 + v^2 K2), -v M^-1 C1]]``, ``B = [[0], [M^-1]]``, ``f = [T_phi, T_delta]``
    (seed 003, eq. 5.3; §5b for the generalized forces). Vectorised: a scalar speed gives ``A`` of shape
    (4, 4), an array of N speeds gives (N, 4, 4). ``B`` is (4, 2) in both cases.
    """
    p = _coerce(params, validate)
    M, C1, K0, K2 = linear_matrices(p, validate=False)
    Minv = np.array([[M[1, 1], -M[0, 1]], [-M[1, 0], M[0, 0]]]) / _det(M)
    gMK0 = p.g * (Minv @ K0)
    MK2 = Minv @ K2
    MC1 = Minv @ C1
    v = np.asarray(speeds, dtype=float)
    vf = v.reshape(-1)
    A = np.zeros((vf.size, 4, 4))
    A[:, 0, 2] = 1.0
    A[:, 1, 3] = 1.0
    A[:, 2:, :2] = -(gMK0[None] + (vf * vf)[:, None, None] * MK2[None])
    A[:, 2:, 2:] = -vf[:, None, None] * MC1[None]
    B = np.zeros((4, 2))
    B[2:, :] = Minv
    if v.ndim == 0:
        A = A[0]
    return A, B


@dataclass(frozen=True)
class EigenSweep:
    """Eigenvalues of eq. (5.3) over a set of speeds, labelled by mode (seed 003, §6b and Table 2).

    ``values`` has shape (N, 4) and columns ``[weave+, weave-, capsize, castor]``. Labels follow the paper:
    where one complex pair exists it is the weave (``+`` the positive imaginary part first), and of the
    two real roots the larger is the capsize and the smaller the castor. Where all four are real (below
    the speed v_d at which weave oscillation starts) the two largest are the weave pair (they merge at
    v_d), the third is the capsize, the fourth the castor. Where there are two complex pairs (not the case
    for the benchmark) the pair with the larger real part is called weave and the other pair fills the
    capsize and castor columns.
    """

    speeds: np.ndarray
    values: np.ndarray

    @property
    def weave(self):
        """(N, 2) complex: the weave pair."""
        return self.values[:, :2]

    @property
    def capsize(self):
        """(N,) complex: the capsize eigenvalue (real where the weave is a complex pair)."""
        return self.values[:, 2]

    @property
    def castor(self):
        """(N,) complex: the castor eigenvalue."""
        return self.values[:, 3]

    @property
    def oscillatory(self):
        """(N,) bool: True where the weave is a complex (oscillatory) pair."""
        return self.values[:, 0].imag != 0.0

    @property
    def max_real(self):
        """(N,) largest real part; the upright motion is asymptotically stable where it is negative."""
        return self.values.real.max(axis=1)

    @property
    def stable(self):
        """(N,) bool: all four eigenvalues in the open left half-plane."""
        return self.max_real < 0.0


def _label_modes(ev):
    """Reorder each row of eigenvalues into [weave+, weave-, capsize, castor] (see EigenSweep)."""
    re, im = ev.real, ev.imag
    is_real = (im == 0.0)
    # complex roots first, then by decreasing real part, then by decreasing imaginary part
    order = np.lexsort((-im, -re, is_real), axis=-1)
    return np.take_along_axis(ev, order, axis=-1)


@njit(cache=True, inline="always")
def _horner4(c3, c2, c1, c0, z):
    """p(z) = z^4 + c3 z^3 + c2 z^2 + c1 z + c0 and p'(z) (monic quartic), by Horner's rule."""
    p = z + c3
    dp = 1.0 + 0.0 * z
    dp = dp * z + p
    p = p * z + c2
    dp = dp * z + p
    p = p * z + c1
    dp = dp * z + p
    p = p * z + c0
    return p, dp


@njit(cache=True, error_model="numpy")
def _aberth4(c3, c2, c1, c0, z, maxit):
    """Refine the 4 root estimates ``z`` of the monic quartic in place (Aberth-Ehrlich, Gauss-Seidel sweeps).

    Returns True when every correction fell below a few ulps of its root.
    """
    for _ in range(maxit):
        done = True
        for k in range(4):
            zk = z[k]
            p, dp = _horner4(c3, c2, c1, c0, zk)
            if p == 0.0:
                continue
            s = 0.0 + 0.0j
            for j in range(4):
                if j != k:
                    d = zk - z[j]
                    if d == 0.0:      # coincident estimates: separate them
                        d = 1e-8 * (abs(zk) + 1.0) * (0.6 + 0.8j)
                        z[j] = zk - d
                    s += 1.0 / d
            if dp == 0.0:             # stationary point of p: step off it
                z[k] = zk + 1e-6 * (abs(zk) + 1.0) * (0.8 + 0.6j)
                done = False
                continue
            ratio = p / dp
            den = 1.0 - ratio * s
            corr = ratio / den if den != 0.0 else ratio
            if not (abs(corr) < 1e300):   # nan or inf: give up (the caller falls back to LAPACK)
                return False
            z[k] = zk - corr
            if abs(corr) > 4.0 * 2.220446049250313e-16 * abs(z[k]):
                done = False
        if done:
            return True
    return False


@njit(cache=True, inline="always")
def _newton_real(c3, c2, c1, c0, x):
    """One Newton step on a real root of the monic quartic (real arithmetic)."""
    p = x + c3
    dp = 1.0
    dp = dp * x + p
    p = p * x + c2
    dp = dp * x + p
    p = p * x + c1
    dp = dp * x + p
    p = p * x + c0
    if dp != 0.0:
        x -= p / dp
    return x


@njit(cache=True, parallel=True, error_model="numpy")
def _sweep_kernel(speeds, poly, out, ok, nchunks):
    """Roots of eq. (6.5) for every speed, written as [weave+, weave-, capsize, castor] into ``out``.

    ``poly`` = (a4, b3, f2, f0, h3, h1, k4, k2, k0) with a4 = det M, a3 = b3 v, a2 = f2 v^2 + f0,
    a1 = h3 v^3 + h1 v, a0 = k4 v^4 + k2 v^2 + k0. Speeds are split into ``nchunks`` contiguous chunks run
    in parallel; inside a chunk each speed starts from the previous speed's roots (continuation).
    ``ok[i]`` is False where the iteration did not converge (the caller recomputes those speeds).
    """
    n = speeds.shape[0]
    a4, b3, f2, f0, h3, h1, k4, k2, k0 = (poly[0], poly[1], poly[2], poly[3], poly[4], poly[5], poly[6],
                                          poly[7], poly[8])
    for ch in prange(nchunks):
        lo = ch * n // nchunks
        hi = (ch + 1) * n // nchunks
        z = np.empty(4, dtype=np.complex128)      # per-chunk workspace
        warm = False
        for i in range(lo, hi):
            v = speeds[i]
            v2 = v * v
            c3 = b3 * v / a4
            c2 = (f2 * v2 + f0) / a4
            c1 = (h3 * v2 + h1) * v / a4
            c0 = ((k4 * v2 + k2) * v2 + k0) / a4
            if warm:
                # continuation from the previous speed; nudge off the real axis so real pairs can split
                for k in range(4):
                    z[k] = z[k] + (1e-3 * (abs(z[k]) + 1.0)) * (0.3 + 0.7j if k % 2 == 0 else 0.4 - 0.6j)
            else:
                r = max(abs(c0) ** 0.25, 1e-3)
                for k in range(4):
                    ang = 0.4 + 1.5707963267948966 * k
                    z[k] = r * (np.cos(ang) + 1j * np.sin(ang))
            conv = _aberth4(c3, c2, c1, c0, z, 80)
            if not conv:
                r = max(abs(c0) ** 0.25, abs(c3), 1e-3)
                for k in range(4):
                    ang = 0.4 + 1.5707963267948966 * k
                    z[k] = r * (np.cos(ang) + 1j * np.sin(ang))
                conv = _aberth4(c3, c2, c1, c0, z, 400)
            ok[i] = conv
            warm = conv
            # sort by imaginary part, descending (insertion sort on 4 entries)
            for k in range(1, 4):
                t = z[k]
                j = k - 1
                while j >= 0 and z[j].imag < t.imag:
                    z[j + 1] = z[j]
                    j -= 1
                z[j + 1] = t
            # real polynomial: (z0, z3) and (z1, z2) are the candidate conjugate pairs
            outer = z[0].imag > 64.0 * 2.220446049250313e-16 * abs(z[0])
            inner = z[1].imag > 64.0 * 2.220446049250313e-16 * abs(z[1])
            if outer and inner:
                xa, ya = 0.5 * (z[0].real + z[3].real), 0.5 * (z[0].imag - z[3].imag)
                xb, yb = 0.5 * (z[1].real + z[2].real), 0.5 * (z[1].imag - z[2].imag)
                if xb > xa or (xb == xa and yb > ya):
                    xa, ya, xb, yb = xb, yb, xa, ya
                out[i, 0] = complex(xa, ya)
                out[i, 1] = complex(xa, -ya)
                out[i, 2] = complex(xb, yb)
                out[i, 3] = complex(xb, -yb)
            elif outer:
                xa, ya = 0.5 * (z[0].real + z[3].real), 0.5 * (z[0].imag - z[3].imag)
                r1 = _newton_real(c3, c2, c1, c0, z[1].real)
                r2 = _newton_real(c3, c2, c1, c0, z[2].real)
                if r2 > r1:
                    r1, r2 = r2, r1
                out[i, 0] = complex(xa, ya)
                out[i, 1] = complex(xa, -ya)
                out[i, 2] = r1
                out[i, 3] = r2
            else:
                r0 = _newton_real(c3, c2, c1, c0, z[0].real)
                r1 = _newton_real(c3, c2, c1, c0, z[1].real)
                r2 = _newton_real(c3, c2, c1, c0, z[2].real)
                r3 = _newton_real(c3, c2, c1, c0, z[3].real)
                # sort four reals descending (sorting network)
                if r1 > r0:
                    r0, r1 = r1, r0
                if r3 > r2:
                    r2, r3 = r3, r2
                if r2 > r0:
                    r0, r2 = r2, r0
                if r3 > r1:
                    r1, r3 = r3, r1
                if r2 > r1:
                    r1, r2 = r2, r1
                out[i, 0] = r0
                out[i, 1] = r1
                out[i, 2] = r2
                out[i, 3] = r3
            # keep the (unlabelled) roots in z for the next speed's warm start
            for k in range(4):
                z[k] = out[i, k]


def _poly_scalars(params, validate):
    """(a4, b3, f2, f0, h3, h1, k4, k2, k0): eq. (6.5) coefficients as polynomials in v (see _sweep_kernel)."""
    a4, a3, a2, a1, a0 = _poly_in_v(params, validate)
    return np.array([a4[0], a3[0], a2[0], a2[2], a1[0], a1[2], a0[0], a0[2], a0[4]])


def eigenvalues(params, speeds, validate=True, method="quartic"):
    """Eigenvalues of eq. (5.3) at each speed, sorted and labelled by mode (seed 003, eq. 6.5, Table 2).

    ``method="quartic"`` (default): the roots of the characteristic quartic (6.5),
    ``det(M s^2 + v C1 s + g K0 + v^2 K2) = 0``, by a compiled Aberth-Ehrlich iteration to a few ulps,
    continued from speed to speed along the sweep (parallel over chunks of speeds); conjugate pairs are
    made exact and real roots polished by a real Newton step. ``method="eig"``: the eigenvalues of the
    4x4 state matrix ``A(v)`` (:func:`state_matrices`), in one batched LAPACK call (about 10x slower).
    Both agree to about 1e-14 on the benchmark (tests compare them on random bicycles). Returns an
    :class:`EigenSweep` (``speeds`` as a 1-D array, ``values`` of shape (N, 4)).
    """
    v = np.ascontiguousarray(np.atleast_1d(np.asarray(speeds, dtype=float)).reshape(-1))
    if not np.all(np.isfinite(v)):
        raise ValueError(f"eigenvalues: speeds must be finite, got {v[~np.isfinite(v)][:3]}")
    if method == "eig":
        A, _ = state_matrices(params, v, validate)
        return EigenSweep(speeds=v, values=_label_modes(np.linalg.eigvals(A)))
    if method != "quartic":
        raise ValueError(f"eigenvalues: unknown method {method!r}; expected 'quartic' or 'eig'")
    poly = _poly_scalars(params, validate)
    out = np.empty((v.size, 4), dtype=np.complex128)
    ok = np.zeros(v.size, dtype=np.bool_)
    nchunks = max(1, min(v.size // 64, 32))
    _sweep_kernel(v, poly, out, ok, nchunks)
    if not ok.all():  # not converged (e.g. a multiple root exactly at that speed): LAPACK for those speeds
        bad = np.nonzero(~ok)[0]
        A, _ = state_matrices(params, v[bad], validate=False)
        out[bad] = _label_modes(np.linalg.eigvals(A))
    return EigenSweep(speeds=v, values=out)


def mode_shapes(params, speeds, validate=True):
    """Steer-to-lean amplitude ratios ``delta / phi`` of the four labelled modes (seed 003, §6b).

    For each eigenvalue ``s`` of :func:`eigenvalues` the eigenvector ``q = [phi, delta]`` solves
    ``(M s^2 + v C1 s + g K0 + v^2 K2) q = 0`` (eq. 5.3 with q = q0 exp(s t)); its ratio is taken from the
    row of larger magnitude. Returns ``(sweep, ratios)`` with ``ratios`` of shape (N, 4) complex, columns as
    in :class:`EigenSweep`. ``abs(ratio)`` is the steer amplitude per unit lean; ``-angle(ratio)`` the steer's
    phase lag behind the lean (weave: the steer lags slightly, §8 of the paper).
    """
    p = _coerce(params, validate)
    M, C1, K0, K2 = linear_matrices(p, validate=False)
    sw = eigenvalues(p, speeds, validate=False)
    s = sw.values
    v = sw.speeds[:, None]
    D = [[M[i, j] * s * s + v * C1[i, j] * s + p.g * K0[i, j] + v * v * K2[i, j] for j in range(2)]
         for i in range(2)]
    row0 = np.abs(D[0][0]) + np.abs(D[0][1]) >= np.abs(D[1][0]) + np.abs(D[1][1])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(row0, -D[0][0] / D[0][1], -D[1][0] / D[1][1])
    return sw, ratios


# ----------------------------------------------------------------------------------------------------
# Critical speeds
# ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CriticalSpeeds:
    """Critical speeds of the linearized bicycle (seed 003, §6b and Table 2a).

    ``weave`` (v_w, Hopf: the weave pair crosses the imaginary axis), ``capsize`` (v_c, the capsize root
    crosses zero), ``oscillation`` (v_d: two real roots meet and the weave becomes oscillatory),
    ``double_root`` (the real double root lambda_d at v_d), ``weave_frequency`` (omega at v_w, the weave
    eigenvalues there are +-i omega). Each is ``None`` when it does not occur in the searched range.
    Unpacks as ``weave, capsize = critical_speeds(p)`` (the DESIGN contract).
    """

    weave: float | None
    capsize: float | None
    oscillation: float | None = None
    double_root: float | None = None
    weave_frequency: float | None = None

    def __iter__(self):
        return iter((self.weave, self.capsize))

    def __len__(self):
        return 2

    v_w = property(lambda self: self.weave)
    v_c = property(lambda self: self.capsize)
    v_d = property(lambda self: self.oscillation)

    @property
    def stable_interval(self):
        """(v_w, v_c) when v_w < v_c (the self-stable speed range of the paper), else None."""
        if self.weave is None or self.capsize is None or not self.weave < self.capsize:
            return None
        return (self.weave, self.capsize)


def _hurwitz(coeffs_v, v):
    """Hurwitz determinant a3 a2 a1 - a4 a1^2 - a3^2 a0 of the quartic (6.5) at speed v."""
    a4, a3, a2, a1, a0 = (np.polyval(c, v) for c in coeffs_v)
    return a3 * a2 * a1 - a4 * a1 * a1 - a3 * a3 * a0


def _double_root_newton(coeffs_v, lam0, v0, iters=50):
    """Solve P(s, v) = 0, dP/ds(s, v) = 0 for a real double root s at speed v by Newton's method."""
    s, v = float(lam0), float(v0)
    d_coeffs = [np.polyder(c) if len(c) > 1 else np.zeros(1) for c in coeffs_v]
    for _ in range(iters):
        a = [np.polyval(c, v) for c in coeffs_v]          # a4..a0 at v
        da = [np.polyval(c, v) for c in d_coeffs]         # d a_i / dv
        F1 = np.polyval(a, s)
        F2 = np.polyval(np.polyder(a), s)
        J11 = F2
        J12 = np.polyval(da, s)
        J21 = np.polyval(np.polyder(a, 2), s)
        J22 = np.polyval(np.polyder(da), s)
        det = J11 * J22 - J12 * J21
        if det == 0.0:
            break
        ds = (F1 * J22 - F2 * J12) / det
        dv = (J11 * F2 - J21 * F1) / det
        s, v = s - ds, v - dv
        if abs(ds) <= 2e-16 * max(1.0, abs(s)) and abs(dv) <= 2e-16 * max(1.0, abs(v)):
            break
    return s, v


def critical_speeds(params, v_max=100.0, n_grid=4001, validate=True):
    """Weave speed v_w, capsize speed v_c and oscillation speed v_d (seed 003, §6b, eq. 6.5, Table 2a).

    Each speed is bracketed on a grid of ``n_grid`` speeds in ``[0, v_max]`` (the first occurrence
    is reported) and then found to full double precision:

    * v_c: the capsize root is zero where ``a0 = det(g K0 + v^2 K2) = 0``. Because K2 has a zero first
      column, ``a0`` is linear in v^2 and v_c^2 = -g det K0 / (K0pp K2dd - K2pd K0dp), exactly.
    * v_w: the weave pair is purely imaginary, ``+-i omega``, where the Hurwitz determinant
      ``a3 a2 a1 - a4 a1^2 - a3^2 a0`` vanishes (Brent's method, ``xtol`` 1e-15); ``omega^2 = a1 / a3``.
    * v_d: the two real roots that become the weave meet in a double root ``lambda_d``: Newton's method on
      ``P(s, v) = 0, dP/ds(s, v) = 0``, started from the grid.

    Returns :class:`CriticalSpeeds` (unpacks as ``weave, capsize``).
    """
    from scipy.optimize import brentq

    p = _coerce(params, validate)
    coeffs_v = _poly_in_v(p, validate=False)
    M, C1, K0, K2 = linear_matrices(p, validate=False)

    # capsize: a0(v) = g^2 det K0 + g v^2 mixed(K0, K2) (+ v^4 det K2 = 0 since K2[:, 0] = 0)
    v_c = None
    denom = _mixed(K0, K2)
    if K2[0, 0] == 0.0 and K2[1, 0] == 0.0 and denom != 0.0:
        vc2 = -p.g * _det(K0) / denom
        if vc2 > 0.0 and math.sqrt(vc2) <= v_max:
            v_c = math.sqrt(vc2)
    else:  # general a0 (not reached for eq. A.25, kept for completeness)
        roots = np.roots(coeffs_v[4])
        pos = sorted(r.real for r in roots if abs(r.imag) < 1e-12 * max(1, abs(r)) and 0 < r.real <= v_max)
        v_c = pos[0] if pos else None

    grid = np.linspace(0.0, v_max, n_grid)
    sweep = eigenvalues(p, grid, validate=False)
    osc = sweep.oscillatory
    wre = sweep.weave[:, 0].real

    # weave speed: first sign change of Re(weave) from + to - where the weave is oscillatory
    v_w = omega = None
    # (at v = 0 a conservative pendulum pair +-i omega has Re = 0 up to rounding: not a crossing)
    crossing = osc[:-1] & osc[1:] & (wre[:-1] > 0.0) & (wre[1:] <= 0.0)
    crossing[0] &= wre[0] > 1e-12 * abs(sweep.weave[0, 0])
    f = lambda v: _hurwitz(coeffs_v, v)  # noqa: E731
    tol = dict(xtol=1e-15, rtol=4 * np.finfo(float).eps, maxiter=200)
    for i in np.nonzero(crossing)[0]:
        lo, hi = grid[i], grid[i + 1]
        if lo == 0.0:  # H(0) = 0 trivially (a3 = a1 = 0 at rest): bracket from just above zero
            lo = 1e-9 * hi
        cand = None
        if f(lo) * f(hi) < 0.0:
            cand = brentq(f, lo, hi, **tol)
        else:  # H has a second zero in the bracket: bisect the weave's real part itself
            re = lambda v: eigenvalues(p, v, validate=False).weave[0, 0].real  # noqa: E731
            if re(lo) * re(hi) < 0.0:
                cand = brentq(re, lo, hi, **tol)
        if cand is None:
            continue
        # H = 0 where two roots sum to zero: a pair ±iω (the weave crossing, ω² = a1/a3 > 0) or a real pair ±r
        # (ω² < 0), which a change of the weave's label between two grid speeds can bracket: not a crossing
        a3 = np.polyval(coeffs_v[1], cand)
        a1 = np.polyval(coeffs_v[3], cand)
        w = eigenvalues(p, cand, validate=False).weave[0, 0]
        if a3 != 0.0 and a1 / a3 > 0 and abs(w.real) <= 1e-9 * max(1.0, abs(w)):
            v_w, omega = cand, math.sqrt(a1 / a3)
            break

    # oscillation onset: first grid step where the weave turns from real to complex
    v_d = lam_d = None
    idx = np.nonzero(~osc[:-1] & osc[1:])[0]
    if idx.size:
        i = idx[0]
        lam0 = 0.5 * (sweep.weave[i, 0].real + sweep.weave[i, 1].real)
        s, v = _double_root_newton(coeffs_v, lam0, 0.5 * (grid[i] + grid[i + 1]))
        if grid[max(i - 1, 0)] <= v <= grid[min(i + 2, n_grid - 1)]:
            v_d, lam_d = float(v), float(s)

    return CriticalSpeeds(weave=None if v_w is None else float(v_w), capsize=v_c, oscillation=v_d,
                          double_root=lam_d, weave_frequency=omega)


# ----------------------------------------------------------------------------------------------------
# Forward motion (5.2) and time simulation with the ignorable coordinates (Appendix B)
# ----------------------------------------------------------------------------------------------------

def forward_inertia(params, validate=True):
    """Effective inertia of the forward motion, ``mT rR^2 + IRyy + (rR/rF)^2 IFyy`` (seed 003, eq. 5.2)."""
    p = _coerce(params, validate)
    mT = p.mR + p.mB + p.mH + p.mF
    return mT * p.rR ** 2 + p.IRyy + (p.rR / p.rF) ** 2 * p.IFyy


def forward_acceleration(params, drive_torque, validate=True):
    """Forward acceleration ``dv/dt`` from the rear-wheel torque ``T_thetaR`` (seed 003, eq. 5.2).

    ``(mT rR^2 + IRyy + (rR/rF)^2 IFyy) thetaR'' = T_thetaR`` and ``v = -rR thetaR'``, so
    ``dv/dt = -rR T_thetaR / I``. ``T_thetaR`` is positive in the direction of increasing thetaR, i.e.
    backwards (seed 003, Fig. 2); a propulsive torque is negative.
    """
    p = _coerce(params, validate)
    return -p.rR * np.asarray(drive_torque, dtype=float) / forward_inertia(p, validate=False)


@dataclass(frozen=True)
class LinearSimulation:
    """Time history of the linearized bicycle (seed 003, eqs. 5.2, 5.3, B.6, B.8).

    Arrays over ``t``: lean ``phi``, steer ``delta`` and their rates, yaw ``psi`` (positive clockwise seen
    from above, i.e. towards +y), rear contact ``xP, yP`` in the ground frame, rear wheel angle
    ``thetaR`` (positive backwards) and forward speed ``v``.
    """

    t: np.ndarray
    phi: np.ndarray
    delta: np.ndarray
    phidot: np.ndarray
    deltadot: np.ndarray
    psi: np.ndarray
    xP: np.ndarray
    yP: np.ndarray
    thetaR: np.ndarray
    v: np.ndarray


def _as_function(f):
    if f is None:
        return lambda t: 0.0
    if callable(f):
        return f
    value = float(f)
    return lambda t: value


def simulate(params, speed, t_end, x0=(0.0, 0.0, 0.5, 0.0), *, psi0=0.0, xP0=0.0, yP0=0.0, thetaR0=0.0,
             lean_torque=None, steer_torque=None, drive_torque=None, n_out=501, rtol=1e-10, atol=1e-12,
             validate=True):
    """Simulate the linearized bicycle in time and reconstruct the ignorable coordinates.

    Lean and steer follow eq. (5.3) at the current speed ``v(t)``; the speed follows eq. (5.2) with the
    rear-wheel torque ``drive_torque`` (constant speed when it is None; by §4(c2) the lateral equations at
    varying speed are those at constant speed with v(t) inserted). The yaw follows the first relation of
    (B.6), ``psi' = (v delta + c delta') cos(lam) / w``, and the rear contact the large-angle form (B.8),
    ``xP' = v cos psi, yP' = v sin psi``; ``thetaR' = -v / rR`` (Fig. 2). ``x0 = (phi, delta, phi', delta')``;
    torques are constants or functions of t. Integrated with DOP853 (``rtol``, ``atol``); output at
    ``n_out`` equally spaced times.
    """
    from scipy.integrate import solve_ivp

    p = _coerce(params, validate)
    M, C1, K0, K2 = linear_matrices(p, validate=False)
    Minv = np.linalg.inv(M)
    g, w, c, cl, rR = p.g, p.w, p.c, math.cos(p.lam), p.rR
    Tphi, Tdelta, Tdrive = _as_function(lean_torque), _as_function(steer_torque), _as_function(drive_torque)
    Ifwd = forward_inertia(p, validate=False)

    def rhs(t, y):
        phi, delta, phid, deltad, psi, xP, yP, thR, v = y
        q = np.array([phi, delta])
        qd = np.array([phid, deltad])
        f = np.array([Tphi(t), Tdelta(t)])
        qdd = Minv @ (f - v * (C1 @ qd) - (g * K0 + v * v * K2) @ q)            # (5.3)
        psid = (v * delta + c * deltad) * cl / w                                # (B.6)
        return [phid, deltad, qdd[0], qdd[1], psid, v * math.cos(psi), v * math.sin(psi),   # (B.8)
                -v / rR, -rR * Tdrive(t) / Ifwd]                                # (5.2)

    y0 = [*map(float, x0), psi0, xP0, yP0, thetaR0, float(speed)]
    t_eval = np.linspace(0.0, float(t_end), int(n_out))
    sol = solve_ivp(rhs, (0.0, float(t_end)), y0, method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        from multibody.errors import IntegrationError
        raise IntegrationError(f"bicycle simulation failed: {sol.message}", reason=sol.message)
    y = sol.y
    return LinearSimulation(t=sol.t, phi=y[0], delta=y[1], phidot=y[2], deltadot=y[3], psi=y[4],
                            xP=y[5], yP=y[6], thetaR=y[7], v=y[8])


# ----------------------------------------------------------------------------------------------------
# The nonlinear Whipple bicycle from generic bodies, joints and rolling discs
# ----------------------------------------------------------------------------------------------------
#: the ground frame of the generic model (x forward, y left, z up) seen from the paper's SAE frame
#: (x forward, y right, z down): a half turn about x
_SAE = np.diag([1.0, -1.0, -1.0])


def _inertia_ours(xx, yy, zz, xz):
    """A body inertia of Table 1 (SAE axes) in the model's axes: R I Rᵀ with R = diag(1, −1, −1)."""
    I = np.array([[xx, 0.0, xz], [0.0, yy, 0.0], [xz, 0.0, zz]])
    return _SAE @ I @ _SAE.T


def whipple_model(params=None, validate=True):
    """The Whipple bicycle (seed 003 §2) as a generic model: four bodies, three hinges and two discs rolling
    without slip, built with the public builder from the 25 parameters (no bicycle equation anywhere).

    Ground frame: x forward, y to the left, z up (the paper's SAE frame turned half a turn about x), the
    rear contact P at the origin in the reference configuration (upright, steer zero, both wheels on the
    ground). Bodies and joints:

    ========== ====================================================================================
    rear_frame  B with the rider; a ``Free`` joint from the ground (frame at the rear axle, axes of the
                ground frame in the reference configuration): q = (position, quaternion)
    rear_wheel  R; ``Revolute`` ``rear_axle`` about y at the rear axle; its angle grows when rolling
                forward (the paper's θR with the sign reversed)
    front_frame H; ``Revolute`` ``steer`` about the downward steer axis (sin λ, 0, −cos λ) through the
                steer axis' ground point (w + c, 0, 0); positive to the right, as the paper's δ
    front_wheel F; ``Revolute`` ``front_axle`` about y at the front axle (w, 0, rF)
    ========== ====================================================================================

    Constraints: ``RollingDisc`` ``rear_contact`` and ``front_contact`` on the floor z = 0, each giving the
    contact height (position row) and the two tangential no-slip rows (velocity rows): 9 − 2 = 7 coordinates,
    9 − 6 = 3 speeds (seed 003 §2.4). Gravity (0, 0, −g) is the only applied force.
    """
    import multibody as mb

    p = _coerce(params if params is not None else benchmark_parameters(), validate)
    rR, rF, w, c, lam = p.rR, p.rF, p.w, p.c, p.lam
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -p.g), name="Whipple bicycle")
    b.add_body("rear_frame", p.mB, com=(p.xB, 0.0, -p.zB - rR), inertia=_inertia_ours(p.IBxx, p.IByy, p.IBzz, p.IBxz))
    b.add_body("rear_wheel", p.mR, inertia=(p.IRxx, p.IRyy, p.IRxx))
    S = np.array([w + c, 0.0, 0.0])                          # the steer axis' ground point
    b.add_body("front_frame", p.mH, com=(p.xH - S[0], 0.0, -p.zH),
               inertia=_inertia_ours(p.IHxx, p.IHyy, p.IHzz, p.IHxz))
    b.add_body("front_wheel", p.mF, inertia=(p.IFxx, p.IFyy, p.IFxx))
    b.add_joint("rear_frame", mb.Free(), "ground", "rear_frame")
    b.add_joint("rear_axle", mb.Revolute(axis=(0.0, 1.0, 0.0)), "rear_frame", "rear_wheel")
    b.add_joint("steer", mb.Revolute(axis=(math.sin(lam), 0.0, -math.cos(lam))), "rear_frame", "front_frame",
                placement=(None, S - np.array([0.0, 0.0, rR])))
    b.add_joint("front_axle", mb.Revolute(axis=(0.0, 1.0, 0.0)), "front_frame", "front_wheel",
                placement=(None, (w - S[0], 0.0, rF)))
    b.add_constraint(mb.RollingDisc("rear_contact", "rear_wheel", radius=rR, axis=(0.0, 1.0, 0.0)))
    b.add_constraint(mb.RollingDisc("front_contact", "front_wheel", radius=rF, axis=(0.0, 1.0, 0.0)))
    return b.build()


def upright_state(model, speed, roll_rate=0.0, steer_rate=0.0, rear_wheel_angle=0.0):
    """The reference configuration of :func:`whipple_model` (upright, steer zero, rear contact at the origin)
    and the velocities of straight running at forward ``speed`` with the lean rate ``roll_rate`` and the
    steer rate ``steer_rate`` (the other speeds follow from the no-slip rows): ``(q0, v0)``."""
    from multibody.analysis.linearize import consistent_velocities

    q0 = model.neutral()
    fr = model.joint("rear_frame").q_slice
    rR = model.constraint("rear_contact").radius
    q0[fr.start + 2] = rR
    q0[model.joint("rear_axle").q_slice] = rear_wheel_angle
    v0 = consistent_velocities(model, q0, {"rear_frame.wx": roll_rate, "steer.angle": steer_rate,
                                           "rear_axle.angle": speed / rR})
    return q0, v0


#: the independent coordinates and speeds of the generic model's linearization: lean (roll of the rear frame),
#: heading and position of the rear frame, steer and the wheel angles; speeds: lean rate, steer rate, rear wheel
LINEAR_COORDINATES = ("rear_frame.wx", "rear_frame.wz", "rear_frame.vx", "rear_frame.vy", "steer.angle",
                      "rear_axle.angle", "front_axle.angle")
LINEAR_SPEEDS = ("rear_frame.wx", "steer.angle", "rear_axle.angle")
LEAN_STEER = ("rear_frame.wx", "steer.angle", "d(rear_frame.wx)", "d(steer.angle)")


def model_linearization(model, speed, inputs=()):
    """The generic model linearized about upright straight running at ``speed`` (``multibody.linearize``, exact
    derivatives), in the independent coordinates :data:`LINEAR_COORDINATES` and speeds :data:`LINEAR_SPEEDS`;
    pitch, height and the other speeds are eliminated through the rolling constraints."""
    from multibody.analysis.linearize import linearize

    if not math.isfinite(float(speed)):
        raise ModelError(f"the forward speed must be finite, got {speed}", element="speed")
    q0, v0 = upright_state(model, float(speed))
    return linearize(model, q0, v0, coordinates=LINEAR_COORDINATES, speeds=LINEAR_SPEEDS, inputs=inputs)


def model_eigenvalues(params, speeds, validate=True):
    """Eigenvalues of the lean and steer motion at each speed from the generic model (:func:`whipple_model`)
    linearized by the library (seed 003 §7: the check of a general multibody code against Table 2): the 4x4
    lean/steer block of the linearization, whose other states (heading, position, wheel angles, forward speed)
    are cyclic or decoupled. Returns an :class:`EigenSweep` labelled like :func:`eigenvalues`."""
    v = np.atleast_1d(np.asarray(speeds, dtype=float)).reshape(-1)
    if not np.all(np.isfinite(v)):
        raise ModelError(f"model_eigenvalues: speeds must be finite, got {v[~np.isfinite(v)][:3].tolist()}",
                         element="speeds")
    model = whipple_model(params, validate)
    out = np.array([model_linearization(model, s).select(LEAN_STEER).eigenvalues() for s in v])
    return EigenSweep(speeds=v, values=_label_modes(out.reshape(-1, 4)))


def model_matrices(params=None, validate=True):
    """M, C1, K0, K2 of eq. (5.3) from the generic model: its linearization with the lean torque (a moment about
    the rear frame's x axis) and the steer torque as inputs has, in the lean/steer block, ``A = [[0, E],
    [−M⁻¹K(v), −M⁻¹C(v)]]`` and ``B = [0; M⁻¹]``; at v = 0 and v = 1 m/s this gives M = (B₂)⁻¹,
    g K0 = K(0), K2 = K(1) − K(0) and C1 = C(1) (K and C are polynomials in v, and the derivatives exact)."""
    p = _coerce(params if params is not None else benchmark_parameters(), validate)
    model = whipple_model(p, validate=False)
    lins = [model_linearization(model, v, inputs=("rear_frame.wx", "steer.angle")).select(LEAN_STEER)
            for v in (0.0, 1.0)]
    M = np.linalg.inv(lins[0].B[2:])
    K = [-M @ lin.A[2:, :2] for lin in lins]
    C = [-M @ lin.A[2:, 2:] for lin in lins]
    return M, C[1] - C[0], K[0] / p.g, K[1] - K[0]


def model_critical_speeds(params, bracket_weave=(3.0, 5.5), bracket_capsize=(5.5, 7.0), validate=True):
    """Weave and capsize speeds of the generic model: where the weave pair's and the capsize root's real parts
    cross zero (Brent's method on :func:`model_eigenvalues`, to 1e-12 m/s)."""
    from scipy.optimize import brentq

    def weave(s):
        return float(model_eigenvalues(params, [s], validate).weave[0, 0].real)

    def capsize(s):
        return float(model_eigenvalues(params, [s], validate).capsize[0].real)

    return (brentq(weave, *bracket_weave, xtol=1e-13, rtol=1e-15),
            brentq(capsize, *bracket_capsize, xtol=1e-13, rtol=1e-15))


#: the IFToMM uncontrolled-bicycle maneuvers: forward speed (m/s) and initial lean rate (rad/s), 20 s
IFTOMM_MANEUVERS = {"M1": (4.0, 0.05), "M2": (4.6, 0.5), "M3": (8.0, 0.05)}


def simulate_nonlinear(params=None, speed=4.6, roll_rate=0.5, t_end=5.0, steer_rate=0.0, n_out=501,
                       method="DOP853", rtol=1e-10, atol=1e-10, h=None, validate=True, **options):
    """The nonlinear generic bicycle (:func:`whipple_model`) from upright straight running at ``speed`` with
    the lean rate ``roll_rate`` (seed 003 §8, Fig. 4: 4.6 m/s and 0.5 rad/s), in tree coordinates with the
    rolling constraints (``formulation="constrained"``: projection onto the constraints after every step).
    Returns the :class:`~multibody.Result` with series ``forward_speed`` (rR × the rear wheel's rate), ``lean``,
    ``steer``, ``yaw`` (the rear frame's heading from x, positive to the left) and the contact points
    ``rear_contact_xy`` and ``front_contact_xy`` (n, 2)."""
    import multibody as mb

    model = whipple_model(params, validate)
    q0, v0 = upright_state(model, speed, roll_rate=roll_rate, steer_rate=steer_rate)
    kw = dict(method=method, n_out=n_out, **options)
    kw.update(dict(h=h) if h is not None else dict(rtol=rtol, atol=atol))
    res = mb.simulate(model, q0, v0, t_end, formulation="constrained", **kw)
    res.series.update(bicycle_outputs(model, res.q, res.v))
    return res


def bicycle_outputs(model, Q, V):
    """Along samples of the generic model: the forward speed (rR × the rear wheel's rate), the lean φ and the
    heading ψ of the rear frame as 3-1-2 Euler angles (R = R_z(ψ) R_x(φ) R_y(θ): φ = arcsin R₃₂, positive to
    the right as in the paper; ψ = atan2(−R₁₂, R₂₂), positive to the left), the steer angle and the two
    contact points (x, y) on the ground."""
    import multibody as mb

    R = np.array([mb.forward_kinematics(model, q).R[model.body_index("rear_frame")] for q in Q])
    out = {"forward_speed": model.constraint("rear_contact").radius * V[:, model.joint("rear_axle").v_slice.start],
           "lean": np.arcsin(np.clip(R[:, 2, 1], -1.0, 1.0)), "yaw": np.arctan2(-R[:, 0, 1], R[:, 1, 1]),
           "steer": Q[:, model.joint("steer").q_slice.start]}
    n = np.array([0.0, 0.0, 1.0])
    for name, body, contact in (("rear_contact_xy", "rear_wheel", "rear_contact"),
                                ("front_contact_xy", "front_wheel", "front_contact")):
        r = model.constraint(contact).radius
        i = model.body_index(body)
        pts = []
        for q in Q:
            K = mb.forward_kinematics(model, q)
            a = K.R[i][:, 1]                          # the axle
            u = n - (a @ n) * a                       # contact point: C − r (n − (a·n) a)/|…| (RollingDisc)
            pts.append((K.p[i] - r * u / np.linalg.norm(u))[:2])
        out[name] = np.array(pts)
    return out


def iftomm_maneuver(name, params=None, t_end=20.0, method="DOP853", rtol=1e-9, atol=1e-9, h=None, n_out=2001):
    """The IFToMM uncontrolled-bicycle benchmark maneuver ``name`` (M1: 4 m/s, lean rate 0.05 rad/s; M2: 4.6,
    0.5; M3: 8, 0.05; 20 s) on the benchmark bicycle. Returns a dict: ``energy_variation_percent`` =
    100 (max E − min E)/E0, ``cpu_seconds``, the final ``roll``, ``steer``, ``forward_speed``, ``yaw``, the final
    rear contact point, the number of steps."""
    key = str(name).upper()
    if key not in IFTOMM_MANEUVERS:
        raise ModelError(f"unknown maneuver {name!r}; expected one of {', '.join(IFTOMM_MANEUVERS)}",
                         element="maneuver")
    speed, roll_rate = IFTOMM_MANEUVERS[key]
    res = simulate_nonlinear(params, speed, roll_rate, t_end, method=method, rtol=rtol, atol=atol, h=h, n_out=n_out)
    E = res.energy_total
    s = res.series
    return dict(maneuver=key, speed=speed, roll_rate=roll_rate, t_end=float(res.t[-1]), method=method,
                energy_variation_percent=float(100.0 * np.ptp(E) / abs(E[0])),
                cpu_seconds=float(res.info["cpu_seconds"]), steps=int(res.info["steps"]),
                roll=float(s["lean"][-1]), steer=float(s["steer"][-1]), forward_speed=float(s["forward_speed"][-1]),
                yaw=float(s["yaw"][-1]), rear_contact=s["rear_contact_xy"][-1].tolist())


# ----------------------------------------------------------------------------------------------------
# Plots (matplotlib, Agg canvas: no GUI backend needed)
# ----------------------------------------------------------------------------------------------------

def _figure(figsize):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    FigureCanvasAgg(fig)
    return fig


def plot_eigenvalues(params, path, speeds=None, dpi=120, validate=True):
    """Eigenvalues versus speed, real parts solid and imaginary parts dashed (seed 003, Fig. 3), to PNG.

    ``speeds`` defaults to 1001 points on 0-10 m/s. The self-stable interval v_w < v < v_c is shaded and
    v_d, v_w, v_c are marked. Returns ``path``.
    """
    p = _coerce(params, validate)
    v = np.linspace(0.0, 10.0, 1001) if speeds is None else np.asarray(speeds, dtype=float)
    sw = eigenvalues(p, v, validate=False)
    cs = critical_speeds(p, v_max=max(100.0, float(v.max())), validate=False)
    fig = _figure((7.0, 5.0))
    ax = fig.add_subplot(1, 1, 1)
    if cs.stable_interval is not None:
        ax.axvspan(*cs.stable_interval, color="0.88", zorder=0, label="self-stable  $v_w < v < v_c$")
    styles = [("weave", sw.weave[:, 0], "C0"), (None, sw.weave[:, 1], "C0"),
              ("capsize", sw.capsize, "C1"), ("castor", sw.castor, "C2")]
    for label, lam, color in styles:
        ax.plot(v, lam.real, "-", color=color, lw=1.6, label=f"{label} (Re)" if label else None)
    ax.plot(v, np.abs(sw.weave[:, 0].imag), "--", color="C0", lw=1.4, label="weave (|Im|)")
    ax.axhline(0.0, color="k", lw=0.6)
    for name, value in (("$v_d$", cs.oscillation), ("$v_w$", cs.weave), ("$v_c$", cs.capsize)):
        if value is not None and v.min() <= value <= v.max():
            ax.axvline(value, color="0.4", lw=0.6, ls=":")
            ax.annotate(name, (value, 0.97), xycoords=("data", "axes fraction"), ha="center", va="top")
    ax.set_xlim(float(v.min()), float(v.max()))
    ax.set_ylim(-10.0, 10.0)
    ax.set_xlabel("speed $v$ (m/s)")
    ax.set_ylabel(r"eigenvalue $\lambda$ (1/s)")
    ax.set_title("Whipple bicycle: eigenvalues vs speed (Meijaard et al. 2007, Fig. 3)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, lw=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    return path


def plot_time_history(sim, path, dpi=120):
    """Lean and steer angles versus time and the rear contact path of a :class:`LinearSimulation`, to PNG.

    (Seed 003, Fig. 4 shows the rates of the nonlinear model; eqs. B.6 and B.8 give the path.)
    Returns ``path``.
    """
    fig = _figure((7.0, 6.5))
    ax1 = fig.add_subplot(2, 1, 1)
    ax1.plot(sim.t, np.degrees(sim.phi), label=r"lean $\phi$")
    ax1.plot(sim.t, np.degrees(sim.delta), label=r"steer $\delta$")
    ax1.plot(sim.t, np.degrees(sim.psi), label=r"yaw $\psi$", lw=0.9, ls="--")
    ax1.set_xlabel("time $t$ (s)")
    ax1.set_ylabel("angle (deg)")
    ax1.grid(True, lw=0.3)
    ax1.legend(fontsize=8)
    ax1.set_title(f"Whipple bicycle, linearized: v = {sim.v[0]:.3g} m/s at t = 0")
    ax2 = fig.add_subplot(2, 1, 2)
    # y points to the right of the rider and z down: plot -y upward so the path looks as seen from above
    ax2.plot(sim.xP, -sim.yP, color="C3")
    ax2.set_xlabel("$x_P$ (m)")
    ax2.set_ylabel("$-y_P$ (m)  (left)")
    ax2.set_title("rear contact path (eq. B.8)", fontsize=9)
    ax2.grid(True, lw=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    return path
