"""Compliant contact forces, compiled: Hunt–Crossley in the normal, regularized Coulomb friction in the tangent.

For a contact of signed distance d < 0 (penetration δ = −d), normal n (from body A to body B) and point x (the
midpoint of the witness points), with v_rel the velocity of B's point at x relative to A's:

* normal force (K. H. Hunt & F. R. E. Crossley, "Coefficient of restitution interpreted as damping in vibroimpact",
  J. Appl. Mech. 42 (1975) 440–445):

      f_n = max(0, k δ^p (1 + (3/2) α δ̇)),     δ̇ = −n·v_rel,

  stiffness k (N/m^p), exponent p (3/2 for Hertz's spheres), damping α (s/m). An impact at speed v_in leaves at
  v_out with ``α (v_in + v_out) = (2/3) ln((1 + (3/2) α v_in) / (1 − (3/2) α v_out))`` whatever k, p and the mass
  (:func:`hunt_crossley_restitution`; the first integral of m δ̈ = −k δ^p (1 + c δ̇), c = 3α/2, from δ = 0 to δ = 0),
  so e = v_out / v_in ≈ 1 − α v_in for small α v_in, Hunt & Crossley's relation;
* friction (Coulomb's law, regularized by a velocity scale v_s):

      f_t = −μ f_n v_t / sqrt(|v_t|² + v_s²),     v_t = v_rel − (n·v_rel) n,

  smooth, within 1 − v_s²/(2|v_t|²) of μ f_n when sliding fast, and a viscous v_t μ f_n / v_s near rest (a body on
  a slope creeps at about v_s tan θ / sqrt(μ² − tan² θ)).

B receives the force F = f_n n + f_t at x and A the opposite, as spatial forces [x × F; F] about the ground
origin (the kernels' convention) added to ``fext``. The elastic part stores the potential ``k δ^(p+1) / (p+1)``;
the power dissipated, ``(f_n − k δ^p) δ̇ − f_t·v_t`` (≥ 0), is what the run integrates as the dissipated energy.
"""
import math

from numba import njit

from multibody.errors import shown
from multibody.contact.detection import C_DIST, C_MU, C_N, C_PA, C_PAIR, C_PB
from multibody.kernels.forces import add_point_force
from multibody.kernels.kinematics import B_V
from multibody.contact.shapes import GI_BODY
from multibody.kernels.spatial import KERNEL, cross3, helper

#: settings of the compliant model: stiffness, exponent, damping α, friction velocity scale
K_STIFF, K_EXP, K_DAMP, K_VS = 0, 1, 2, 3


@helper
def point_velocity(wb, b, x0, x1, x2):
    """The velocity of the point x of body b (wb's body velocity [ω; v_O], ground Plücker coordinates)."""
    e0, e1, e2 = cross3(wb[b, B_V], wb[b, B_V + 1], wb[b, B_V + 2], x0, x1, x2)
    return wb[b, B_V + 3] + e0, wb[b, B_V + 4] + e1, wb[b, B_V + 5] + e2


@njit(**KERNEL)
def contact_force(rows, c, gi, pairs, wb, settings):
    """The force of contact c (row of ``rows``, ``contact/detection.py``) on its body B (``(x, F)``, A receives −F
    at x), its normal force, its elastic potential and the power it dissipates (the module docstring)."""
    x0 = 0.5 * (rows[c, C_PA] + rows[c, C_PB])
    x1 = 0.5 * (rows[c, C_PA + 1] + rows[c, C_PB + 1])
    x2 = 0.5 * (rows[c, C_PA + 2] + rows[c, C_PB + 2])
    n0, n1, n2 = rows[c, C_N], rows[c, C_N + 1], rows[c, C_N + 2]
    p = int(rows[c, C_PAIR])
    ba = gi[pairs[p, 0], GI_BODY]
    bb = gi[pairs[p, 1], GI_BODY]
    ua0, ua1, ua2 = point_velocity(wb, ba, x0, x1, x2)
    ub0, ub1, ub2 = point_velocity(wb, bb, x0, x1, x2)
    r0, r1, r2 = ub0 - ua0, ub1 - ua1, ub2 - ua2
    vn = n0 * r0 + n1 * r1 + n2 * r2
    delta = -rows[c, C_DIST]
    k, expo, alpha, vs = settings[K_STIFF], settings[K_EXP], settings[K_DAMP], settings[K_VS]
    elastic = k * delta ** expo
    fn = max(0.0, elastic * (1.0 - 1.5 * alpha * vn))
    t0, t1, t2 = r0 - vn * n0, r1 - vn * n1, r2 - vn * n2
    vt2 = t0 * t0 + t1 * t1 + t2 * t2
    s = rows[c, C_MU] * fn / math.sqrt(vt2 + vs * vs)
    F0, F1, F2 = fn * n0 - s * t0, fn * n1 - s * t1, fn * n2 - s * t2
    power = (fn - elastic) * (-vn) + s * vt2
    return x0, x1, x2, F0, F1, F2, fn, elastic * delta / (expo + 1.0), power


@njit(**KERNEL)
def compliant_forces(rows, m, gi, pairs, wb, settings, fext):
    """fext ← the spatial forces of the m contacts on the bodies (zeroed first); returns (elastic potential,
    dissipated power) of the contacts."""
    for i in range(fext.shape[0]):
        for j in range(6):
            fext[i, j] = 0.0
    V = 0.0
    P = 0.0
    for c in range(m):
        x0, x1, x2, F0, F1, F2, _, Vc, Pc = contact_force(rows, c, gi, pairs, wb, settings)
        p = int(rows[c, C_PAIR])
        add_point_force(fext, gi[pairs[p, 1], GI_BODY], x0, x1, x2, F0, F1, F2)
        add_point_force(fext, gi[pairs[p, 0], GI_BODY], x0, x1, x2, -F0, -F1, -F2)
        V += Vc
        P += Pc
    return V, P


def hunt_crossley_restitution(alpha, v_in):
    """The coefficient of restitution v_out / v_in of the Hunt–Crossley contact (module docstring) for damping
    ``alpha`` (s/m) and impact speed ``v_in`` (m/s): the root of
    ``c (v_in + v_out) = ln((1 + c v_in) / (1 − c v_out))``, c = 3α/2, in (0, v_in] (bisection to round-off)."""
    c = 1.5 * float(alpha)
    v_in = float(v_in)
    if c * v_in == 0.0:
        return 1.0

    def f(u):
        return c * (v_in + u) - math.log((1.0 + c * v_in) / (1.0 - c * u))

    lo, hi = 0.0, min(v_in, (1.0 - 1e-15) / c)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi) / v_in


def hunt_crossley_damping(restitution, v_in):
    """The damping α (s/m) that gives the coefficient of restitution ``restitution`` at impact speed ``v_in``
    (the inverse of :func:`hunt_crossley_restitution`, from the same relation solved for α)."""
    e = float(restitution)
    v_in = float(v_in)
    if not 0.0 < e <= 1.0 or not v_in > 0.0:
        raise ValueError(f"restitution must be in (0, 1] and v_in > 0, got {shown(restitution)!r}, {shown(v_in)!r}")
    if e == 1.0:
        return 0.0
    u = e * v_in
    # α from c (v_in + u) = ln((1 + c v_in)/(1 − c u)): bisection on c in (0, 1/u)
    lo, hi = 0.0, 1.0 / u
    for _ in range(200):
        c = 0.5 * (lo + hi)
        if c * (v_in + u) - math.log((1.0 + c * v_in) / (1.0 - c * u)) > 0.0:   # (≈ c² (v_in² − u²)/2 > 0 near 0)
            lo = c
        else:
            hi = c
    return 0.5 * (lo + hi) / 1.5
