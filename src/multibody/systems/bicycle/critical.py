"""The critical speeds of the linearized bicycle (seed 003, Table 2): weave and capsize speeds bounding the
self-stable interval, and the double root where the weave starts to oscillate."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from multibody.systems.bicycle.eigen import eigenvalues
from multibody.systems.bicycle.linear import det2, mixed_det2, coefficient_polynomials, linear_matrices
from multibody.systems.bicycle.parameters import coerce_parameters


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

    p = coerce_parameters(params, validate)
    coeffs_v = coefficient_polynomials(p, validate=False)
    M, C1, K0, K2 = linear_matrices(p, validate=False)

    # capsize: a0(v) = g^2 det K0 + g v^2 mixed(K0, K2) (+ v^4 det K2 = 0 since K2[:, 0] = 0)
    v_c = None
    denom = mixed_det2(K0, K2)
    if K2[0, 0] == 0.0 and K2[1, 0] == 0.0 and denom != 0.0:
        vc2 = -p.g * det2(K0) / denom
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
