"""A heavy hoop rolling without slip on a curved profile (seed 000, Sec. 3–4), built with the builder.

One body, the hoop (mass M, radius r, J = M r² about its axis), on a ``Planar`` joint whose plane is the
vertical (x, z) plane of the ground: q = (x, z, θ), the centre and the rotation angle (counter-clockwise in
the (x, z) picture, about −y). A ``RollingOnProfile`` constraint keeps it rolling without slip on the profile
``h(x, z) = 0``: contact f1 = h(x_a, z_a) (position row), no slip f3 = −ẋ sin α + ż cos α + r θ̇ (velocity row),
with the contact angle α and the tangency f4 (seed 000, eqs. 3.2, 3.4, 3.5). Simulated with
``formulation="stabilized", energy_constraint=True`` it is seed 000's system: state (x, z, θ, ẋ, ż, θ̇, α),
reactions equivalent to (R_x, R_z, Q, U), and the energy f2 = T + V − E0 (eq. 3.3) as the fourth constraint.

The paper's profile (Sec. 4): ``z = x⁴ + a x³ − b x² − a x − (1 − b)``, a = 0.13, b = 0.5, with M = 1,
r = 0.01, RK2 at h = 1e-5 and λ_i = 1e3.

Example
-------
>>> import multibody as mb
>>> model = hoop_model()
>>> q0, v0 = initial_state(model, x_contact=-0.9, speed=0.0)
>>> res = mb.simulate(model, q0, v0, 0.01, formulation="stabilized", energy_constraint=True, lam=1e3,
...                   method="RK2", h=1e-5, n_out=3)
>>> bool(max(abs(r).max() for r in res.residuals.values()) < 1e-9)
True
"""
import math

import numpy as np
import sympy as sp

import multibody as mb
from multibody.errors import ModelError

#: parameters of seed 000, Sec. 4
PAPER = {"a": 0.13, "b": 0.5, "M": 1.0, "r": 0.01, "g": 9.81}

#: the Planar joint's frame: joint x → ground x, joint y → ground z, joint z (the hoop's axis) → ground −y
PLANE_XZ = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


def paper_profile(a=PAPER["a"], b=PAPER["b"]):
    """The profile of seed 000, Sec. 4, ``z = x⁴ + a x³ − b x² − a x − (1 − b)``, as a ``Profile``."""
    x = sp.Symbol("x")
    return mb.Profile.graph(x**4 + a * x**3 - b * x**2 - a * x - (1 - b), x)


def hoop_model(profile=None, M=PAPER["M"], r=PAPER["r"], g=PAPER["g"], x_range=(-1.2, 1.2)):
    """The hoop on ``profile`` (a ``multibody.Profile``; default :func:`paper_profile`); the profile is checked
    admissible over ``x_range`` (``h'_z ≠ 0``, radius of curvature > r where it bends towards the hoop)."""
    for name, val in (("M", M), ("r", r), ("g", g)):
        if not (np.isfinite(val) and val > 0):
            raise ModelError(f"hoop parameter {name} must be positive and finite, got {val}", element=f"hoop.{name}")
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -g), name="hoop on a profile")
    b.add_body("hoop", M, com=(0.0, 0.0, 0.0), inertia=(M * r * r / 2, M * r * r / 2, M * r * r))
    b.add_joint("plane", mb.Planar(), "ground", "hoop", placement=(PLANE_XZ, (0.0, 0.0, 0.0)))
    b.add_constraint(mb.RollingOnProfile("contact", "hoop", radius=r, profile=profile or paper_profile(),
                                         plane="xz", x_range=x_range))
    return b.build()


def _parts(model):
    c = model.constraint("contact")
    return c.profile, c.radius


def initial_state(model, x_contact, speed=0.0):
    """A consistent state: the contact at abscissa ``x_contact``, the centre moving with ``speed`` along the
    tangent (> 0: towards +x), rolling without slip. Returns (q0, v0)."""
    profile, r = _parts(model)
    lo, hi = model.constraint("contact").x_range
    if not lo <= x_contact <= hi:
        raise ModelError(f"contact abscissa {x_contact} is outside the checked range {(lo, hi)}", element="x_contact")
    za = profile.height(float(x_contact))
    _, hx, hz = profile.evaluate(float(x_contact), za)[:3]
    nh = math.hypot(hx, hz)
    mx, mz = hx / nh, hz / nh                     # μ: centre → contact
    al = math.atan2(mz, mx)
    chx, chz = -math.sin(al), math.cos(al)        # χ: the tangent with positive x component
    xd, zd = speed * chx, speed * chz
    return np.array([x_contact - r * mx, za - r * mz, 0.0]), np.array([xd, zd, -(chx * xd + chz * zd) / r])


def contact_point(model, result):
    """(x_a, z_a) of every sample of a ``stabilized`` result (from the centre and the contact-angle state)."""
    _, r = _parts(model)
    al = result.series["contact.angle"]
    return result.q[:, 0] + r * np.cos(al), result.q[:, 1] + r * np.sin(al)


def contact_offset(model, xa, za):
    """Signed distance of points from the profile, ``h/‖∇h‖`` (first order; > 0 below the profile)."""
    profile, _ = _parts(model)
    out = np.empty(np.shape(xa))
    for k, (x, z) in enumerate(zip(np.ravel(xa), np.ravel(za))):
        h, hx, hz = profile.evaluate(float(x), float(z))[:3]
        out.flat[k] = h / math.hypot(hx, hz)
    return out


def with_normal_velocity(model, q, v, n):
    """``v`` with the centre's velocity changed by ``n`` along the profile normal at the contact, towards the
    profile: an error in the hidden constraint ḟ1 = (∇h, v) that leaves f1, f3, f4 unchanged (seed 000, Sec. 4,
    Fig. 4: ``max_i |f_i(0)| < 1e-6`` does not bound ḟ1(0))."""
    profile, r = _parts(model)
    xa, za = _contact_of(model, q)
    _, hx, hz = profile.evaluate(xa, za)[:3]
    nh = math.hypot(hx, hz)
    v = np.array(v, dtype=float)
    v[0] += n * hx / nh
    v[1] += n * hz / nh
    return v


def contact_angle(model, q):
    """The contact angle α of the configuration q (the tangency f4 = 0 solved as the constrained formulations
    do: a scan of the circle, then Newton)."""
    from multibody.rows.constraint_rows import ConstraintRows

    rows = ConstraintRows(model)
    rows.init_aux(q)
    return float(rows.w.s[0])


def _contact_of(model, q):
    _, r = _parts(model)
    al = contact_angle(model, q)
    return q[0] + r * math.cos(al), q[1] + r * math.sin(al)


def turning_point_reactions(model, q):
    """The seed's limit of the reactions at a turning point (θ̇ = 0 on the manifold, Sec. 3):
    ``R*_x = M g h'_z cos α/(2‖∇h‖)``, ``R*_z = M g/2 + M g h'_z sin α/(2‖∇h‖)``, ``Q* = M g r cos α/2``."""
    profile, r = _parts(model)
    xa, za = _contact_of(model, q)
    al = math.atan2(za - q[1], xa - q[0])
    _, hx, hz = profile.evaluate(xa, za)[:3]
    nh = math.hypot(hx, hz)
    Mg = float(model.mass[1]) * abs(float(model.gravity[2]))
    return np.array([Mg * hz * math.cos(al) / (2 * nh), Mg / 2 + Mg * hz * math.sin(al) / (2 * nh),
                     Mg * r * math.cos(al) / 2])


#: the Fig. 4 experiment (seed 000, Sec. 4): start, normal-velocity error, duration (two passes back and forth
#: of the consistent motion: turning points at t = 1.57, 3.20, 4.84, 6.48), RK2 step
FIG4 = {"x_contact": -0.9, "speed": 0.3, "normal_speed": 1e-3, "t_end": 6.6, "h": 1e-5}


def fig4_runs(model, normal_speed=FIG4["normal_speed"], t_end=FIG4["t_end"], h=FIG4["h"], n_out=13201):
    """The runs of seed 000, Fig. 4: RK2 (step ``h``) from the consistent state at ``x_a = −0.9`` moving at 0.3,
    with the centre's velocity changed by ``normal_speed`` along the normal into the profile (f1 = f3 = f4 = 0,
    f2 = M n²/2 = 5e-7 < 1e-6 for n = 1e-3 — the seed's ``max_i |δ_i(0)| < 1e-6`` — but ``ḟ1(0) = ‖∇h‖ n``).

    Returns ``(runs, E0)``, ``runs`` a dict label → Result: λ = 0 (the plain eq. 2.3) and λ = 1e3, both with
    the energy constraint of the consistent motion (E0) and no initial projection.
    """
    import multibody as mb

    q1, v1 = initial_state(model, FIG4["x_contact"], FIG4["speed"])
    E0 = float(sum(mb.energy(model, q1, v1)))
    v0 = with_normal_velocity(model, q1, v1, normal_speed)
    runs = {}
    for label, lam in (("λ = 0 (plain A N = −φ, eq. 2.3)", 0.0), ("λ = 1e3", 1e3)):
        try:
            runs[label] = mb.simulate(model, q1, v0, t_end, formulation="stabilized", energy_constraint=True,
                                      energy_level=E0, lam=lam, consistent=False, method="RK2", h=h, n_out=n_out)
        except mb.IntegrationError as exc:   # the plain equations may blow up at a turning point
            runs[label] = exc.result
    return runs, E0


def fig4_summary(model, runs):
    """Per run of :func:`fig4_runs`: max and final contact distance from the profile, max |f_i|, and the
    times where θ̇ changes sign (turning points)."""
    out = {}
    for label, res in runs.items():
        xa, za = contact_point(model, res)
        off = np.abs(contact_offset(model, xa, za))
        th = res.v[:, 2]
        turns = res.t[1:][np.diff(np.sign(th)) != 0]
        out[str(label)] = {"max_contact_distance": float(off.max()), "final_contact_distance": float(off[-1]),
                           "max_residual_by_constraint": {k: float(np.max(np.abs(v)))
                                                          for k, v in res.residuals.items()},
                           "turning_points": [round(float(t), 4) for t in turns]}
    return out
