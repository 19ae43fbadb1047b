"""The kinds of the rows of a step's problem (``rows/solver.py``), and the force law of a compliant row.

* :data:`BILATERAL` — λ free, ``u = 0`` (loop joints and constraints, latched or held coordinates);
* :data:`UNILATERAL` — ``0 ≤ λ ⊥ u ≥ 0`` (joint stops, rigid contact normals);
* :data:`FRICTION` — two rows right after their normal row r: ``|λ_t| ≤ μ_r λ_r``, maximal dissipation;
* :data:`OPEN` — a unilateral row held open, ``λ = 0`` with its friction rows: the row solver's own, for its
  attempt with the contacts that its best iterate pushes apart opened (``rows/solver.py``); never assembled;
* :data:`COMPLIANT` — a contact normal of the ``"compliant"`` model in its implicit step: its impulse is the
  Hunt–Crossley force (``contact/compliant_forces.py``) at the step's end, with the penetration δ⁺ = −φ − h u
  (φ the gap at the step's start, in ``gap``) and the approach speed −u,

      λ = h k (δ⁺)^p (1 − (3/2) α u)      (0 when δ⁺ ≤ 0 or the bracket is negative),

  a backward-Euler treatment of the contact force, so that a stiffness that would make an explicit step unstable
  costs nothing; its friction rows stay Coulomb's, exact. The law's parameters (``law``: :data:`K_STIFF`,
  :data:`K_EXP`, :data:`K_DAMP`, :data:`K_H`) are the run's.
"""
from numba import njit

from multibody.kernels.spatial import KERNEL

__all__ = ["BILATERAL", "UNILATERAL", "FRICTION", "COMPLIANT", "OPEN", "K_STIFF", "K_EXP", "K_DAMP", "K_H", "LAW_WIDTH",
           "compliant_impulse", "compliant_row"]

#: the kinds of rows
BILATERAL, UNILATERAL, FRICTION, COMPLIANT, OPEN = 0, 1, 2, 3, 4
#: entries of a compliant row's law: stiffness k, exponent p, damping α, the step h
K_STIFF, K_EXP, K_DAMP, K_H = 0, 1, 2, 3
LAW_WIDTH = 4


@njit(**KERNEL)
def compliant_impulse(u, gap, law):
    """The impulse h f of a compliant row at the end-of-step velocity u (module docstring) and its derivative with
    respect to u: ``(impulse, d impulse / d u)`` (≤ 0: the impulse falls as the row separates)."""
    k, p, alpha, h = law[K_STIFF], law[K_EXP], law[K_DAMP], law[K_H]
    delta = -gap - h * u
    damp = 1.0 - 1.5 * alpha * u
    if delta <= 0.0 or damp <= 0.0:
        return 0.0, 0.0
    elastic = k * delta ** p
    return h * elastic * damp, h * (-h * p * k * delta ** (p - 1.0) * damp - 1.5 * alpha * elastic)


@njit(**KERNEL)
def compliant_row(lam, w, diag, gap, law):
    """The impulse λ of a compliant row whose velocity is ``w`` at the impulse ``lam`` and varies as ``diag`` (its
    Delassus entry) with it: the root of λ = h f(w + diag (λ − lam)), by Newton's method kept in a bracket (the
    left side grows with λ, the right side falls: one root, in [0, h f(w − diag lam)])."""
    lo, hi = 0.0, compliant_impulse(w - diag * lam, gap, law)[0]
    x = min(max(lam, lo), hi)
    for _ in range(60):
        f, df = compliant_impulse(w + diag * (x - lam), gap, law)
        g = x - f
        if g > 0.0:
            hi = x
        else:
            lo = x
        if g == 0.0 or hi - lo <= 1e-15 * hi:
            break
        slope = 1.0 - df * diag
        y = x - g / slope if slope > 0.0 else 0.5 * (lo + hi)
        x = y if lo < y < hi else 0.5 * (lo + hi)
    return x
