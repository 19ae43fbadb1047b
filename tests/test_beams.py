"""Beams and cables of rigid finite elements (seed 001, introduction; docs/elastic.md) against the closed forms and an
independent shooting solution: the cantilever's tip deflection (second order in the segment length), the elastica,
the natural frequencies of bending, torsion and stretch, the hanging cable's catenary; bad input.

Tolerances come from the discretization error, which is O(l²) (docs/elastic.md): the tests check the observed order
between two divisions, the bound the issue sets at the finer one, and that Richardson's extrapolation (4 w_2n − w_n)/3
removes the leading error.
"""
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import multibody as mb
from multibody.errors import ConvergenceError, ModelError


def cantilever(n, EI=(1.0, None), load=None, GJ=None, EA=None, inertia=None, mu=1.0, L=1.0, **kw):
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    b.add_beam("rod", "ground", length=L, segments=n, EI=EI, GJ=GJ, mass_per_length=mu, EA=EA,
               inertia_per_length=inertia, **kw)
    if load is not None:
        b.add_load("tip", "rod.tip", force=load)
    return b.build()


def tip(model, q):
    return mb.frame_placement(model, q, "rod.tip")[1]


def order(e_coarse, e_fine):
    return math.log2(abs(e_coarse) / abs(e_fine))


# ---- statics -------------------------------------------------------------------------------------------------------
def test_cantilever_tip_deflection_converges_at_second_order():
    """PL³/3EI with a small tip load: order ≥ 1.8 over 8/16/32 segments, error < 1e-3 at 32; and the exact sum of the
    discretization, P/EI (L³/3 − L l²/12) (the midpoint rule of ∫(L − x)² dx, docs/elastic.md), to the geometric
    nonlinearity of the load, O((PL²/EI)²) = 1e-6 relative."""
    P = 1e-3
    exact = P / 3.0
    errors = []
    for n in (8, 16, 32):
        model = cantilever(n, load=(0, 0, -P))
        q = mb.static_equilibrium(model, model.neutral())
        assert q.info["converged"] and q.info["residual"] <= 1e-10 * q.info["force_scale"]
        w = -tip(model, q)[2]
        l = 1.0 / n
        assert w == pytest.approx(P * (1.0 / 3.0 - l * l / 12.0), rel=1e-5)
        errors.append((exact - w) / exact)
    assert order(errors[0], errors[1]) >= 1.8 and order(errors[1], errors[2]) >= 1.8
    assert abs(errors[2]) < 1e-3


def _elastica(alpha):
    """The inextensible cantilever under the dead tip load P (α = PL²/EI) by shooting: θ'' = −α cos θ, θ(0) = 0,
    θ'(1) = 0 (s in units of L), x' = cos θ, z' = sin θ; returns (u/L, v/L) of the tip to ~1e-10."""
    def end(k0):
        sol = solve_ivp(lambda s, y: [y[1], -alpha * math.cos(y[0]), math.cos(y[0]), math.sin(y[0])], (0.0, 1.0),
                        [0.0, k0, 0.0, 0.0], rtol=1e-12, atol=1e-13)
        return sol.y[:, -1]
    k0 = brentq(lambda k: end(k)[1], 0.0, alpha, xtol=1e-14)
    y = end(k0)
    return 1.0 - y[2], y[3]


@pytest.mark.parametrize("alpha, reference", [(1.0, (0.056433, 0.301721)), (3.0, (0.254420, 0.603253)),
                                              (10.0, (0.554996, 0.810609))])
def test_large_deflection_matches_the_elastica(alpha, reference):
    """The tip of a 64-segment cantilever under a dead load within 2e-3 of the elastica (the shooting solution, which
    reproduces the published six digits); O(l²): order ≥ 1.8 from 32 to 64, Richardson removes the leading error."""
    exact = np.array(_elastica(alpha))
    assert np.abs(exact - reference).max() <= 5e-7
    tips = []
    for n in (32, 64):
        model = cantilever(n, load=(0, 0, -alpha))
        q = mb.static_equilibrium(model, model.neutral())
        p = tip(model, q)
        tips.append(np.array([1.0 - p[0], -p[2]]))
    e32, e64 = tips[0] - exact, tips[1] - exact
    assert np.abs(e64).max() < 2e-3
    assert order(e32[1], e64[1]) >= 1.8
    richardson = (4.0 * tips[1] - tips[0]) / 3.0
    assert np.abs(richardson - exact).max() <= 0.1 * np.abs(e64).max()


def test_load_stepping_reaches_what_one_step_reaches():
    """Ten equal load increments end where the whole load in one go ends (the same equilibrium), and the info lists
    the increments."""
    model = cantilever(16, load=(0, 0, -10.0))
    q1 = mb.static_equilibrium(model, model.neutral())
    q10 = mb.static_equilibrium(model, model.neutral(), steps=10)
    assert q10.info["load_factors"] == pytest.approx(np.linspace(0.1, 1.0, 10))
    assert np.abs(q10 - q1).max() <= 1e-9


def test_cable_sags_as_the_catenary():
    """A chain of links hung between two points at the same height: the sag at mid-span → a (cosh(D/2a) − 1) with
    2a sinh(D/2a) = L, O(l²); 1e-3 at 32 links."""
    D, L = 1.0, 1.2
    a = brentq(lambda a: 2.0 * a * math.sinh(D / (2.0 * a)) - L, 0.05, 100.0, xtol=1e-14)
    sag = a * (math.cosh(D / (2.0 * a)) - 1.0)
    errors = []
    for n in (16, 32):
        b = mb.ModelBuilder(gravity=(0, 0, -9.81))
        b.add_cable("c", "ground", length=L, segments=n, mass_per_length=0.3, planar=True, tip="ground",
                    tip_placement=mb.Placement(translation=(D, 0, 0)), tip_joint=mb.Revolute(axis=(0, 1, 0)))
        model = b.build()
        q0 = np.zeros(model.nq)          # a V of the cable's length between the supports: on the constraints
        q0[0], q0[n // 2] = math.acos(D / L), -2.0 * math.acos(D / L)
        q = mb.static_equilibrium(model, q0)
        assert q.info["constraint_residual"] <= 1e-10
        errors.append((-mb.frame_placement(model, q, f"c.{n // 2}")[1][2] - sag) / sag)
    assert abs(errors[1]) < 1e-3 and order(errors[0], errors[1]) >= 1.8


def test_beam_clamped_at_both_ends():
    """A beam clamped at both ends (the tip closes a loop) under a mid-span load: w = PL³/192EI, O(l²) (order ≥ 1.8,
    and Richardson's extrapolation removes the leading error)."""
    P = 1e-3
    deflections = []
    for n in (16, 32):
        b = mb.ModelBuilder(gravity=(0, 0, 0))
        b.add_beam("rod", "ground", length=1.0, segments=n, EI=(1.0, None), GJ=None, mass_per_length=1.0,
                   tip="ground")
        b.add_load("mid", f"rod.{n // 2}", force=(0, 0, -P))
        model = b.build()
        q = mb.static_equilibrium(model, model.neutral())
        deflections.append(-mb.frame_placement(model, q, f"rod.{n // 2}")[1][2])
    exact = P / 192.0
    e16, e32 = (d / exact - 1.0 for d in deflections)
    assert order(e16, e32) >= 1.8
    assert abs((4.0 * deflections[1] - deflections[0]) / 3.0 / exact - 1.0) <= 0.1 * abs(e32)


# ---- modes ---------------------------------------------------------------------------------------------------------
BETA_L = np.array([1.875104, 4.694091, 7.854757])


def test_cantilever_bending_frequencies():
    """ω_k = (β_k L)² √(EI/ρA L⁴) for the first three modes, each within 2e-3 at 64 segments, order ≥ 1.8."""
    EI, mu, L = 2.0, 0.5, 1.5
    exact = BETA_L ** 2 * math.sqrt(EI / (mu * L ** 4))
    errs = []
    for n in (32, 64):
        model = cantilever(n, EI=(EI, None), mu=mu, L=L)
        m = mb.modes(model, model.neutral(), count=3)
        assert m.frequencies == pytest.approx(m.omega / (2 * math.pi))
        errs.append(m.omega / exact - 1.0)
    assert np.abs(errs[1]).max() < 2e-3
    assert all(order(a, b) >= 1.8 for a, b in zip(*errs))


def test_mode_shapes_are_mass_normalized_and_give_the_stiffness():
    """φᵀ M φ = I and φᵀ K φ = diag(ω²) (K = M ω² φ): the shapes of eigh, checked against crba and the statics'
    stiffness; the first bending shape of a cantilever has no node, the second one."""
    model = cantilever(24)
    q = model.neutral()
    m = mb.modes(model, q, count=4)
    M = mb.crba(model, q)
    assert m.shapes.T @ M @ m.shapes == pytest.approx(np.eye(4), abs=1e-9)
    angles = np.cumsum(m.shapes, axis=0)     # the absolute angle of each element (planar: sum of the bends)
    for k, nodes in ((0, 0), (1, 1)):
        w = np.cumsum(np.sin(angles[:, k]))
        assert np.sum(np.diff(np.sign(w[np.abs(w) > 1e-9])) != 0) == nodes


def test_torsion_and_stretch_frequencies():
    """Fixed-free torsion ω = (2k − 1)π/(2L) √(GJ/ρJ) and stretch ω = (2k − 1)π/(2L) √(EA/ρA): a chain of lumped
    inertias and springs, whose relative error is (ω l/c)²/24 + O(l⁴) (the dispersion 2 sin(κl/2)/l of the lumped
    chain): each within twice that at 32 segments."""
    GJ, rJ, EA, mu, L, n = 2.0, 0.5, 3.0, 1.0, 1.0, 32
    model = cantilever(n, EI=None, GJ=GJ, EA=EA, inertia=rJ, mu=mu, L=L)
    m = mb.modes(model, model.neutral(), count=6)
    k = np.arange(1, 4)
    beta = (2 * k - 1) * math.pi / (2 * L)
    expected = np.sort(np.concatenate([beta * math.sqrt(GJ / rJ), beta * math.sqrt(EA / mu)]))
    bound = 2.0 * np.sort(np.concatenate([beta, beta])) ** 2 * (L / n) ** 2 / 24.0
    assert np.all(np.abs(m.omega / expected - 1.0) <= bound)


def test_structural_damping_ratios():
    """damping=β is C = β K: every mode has ζ = β ω / 2 (modal) and the damped poles s = −ζω ± iω√(1 − ζ²)."""
    beta = 1e-3
    model = cantilever(16, damping=beta)
    m = mb.modes(model, model.neutral(), count=3)
    assert m.damping_ratios == pytest.approx(beta * m.omega / 2.0, rel=1e-9)
    zeta = beta * m.omega / 2.0
    poles = -zeta * m.omega + 1j * m.omega * np.sqrt(1.0 - zeta ** 2)
    assert m.poles[:3] == pytest.approx(poles, rel=1e-8)


def test_modes_of_a_pendulum_under_gravity():
    """Gravity's geometric stiffness: a rigid pendulum hanging at rest, ω² = m g c / (I_O) (the RNEA derivative at
    rest), and the same pendulum upside down is unstable (ω reported negative, the growth rate)."""
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("bob", mass=2.0, com=(0, 0, -0.5), inertia=(0.01, 0.01, 0.01))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob")
    model = b.build()
    omega2 = 2.0 * 9.81 * 0.5 / (0.01 + 2.0 * 0.25)
    assert mb.modes(model, np.zeros(1)).omega[0] == pytest.approx(math.sqrt(omega2), rel=1e-12)
    up = mb.modes(model, np.array([math.pi]))
    assert up.omega[0] == pytest.approx(-math.sqrt(omega2), rel=1e-9) and up.info["unstable"] == 1


# ---- bad input -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, words", [
    (dict(EI=0.0), "EI must be positive and finite"),
    (dict(EI=(-1.0, 1.0)), "EIy must be positive and finite"),
    (dict(GJ=0.0, inertia_per_length=1.0), "GJ must be positive and finite"),
    (dict(EA=-3.0), "EA must be positive and finite"),
    (dict(segments=0), "segments must be an integer >= 1"),
    (dict(segments=2.5), "segments must be an integer >= 1"),
    (dict(length=0.0), "length must be positive and finite"),
    (dict(mass_per_length=math.nan), "mass_per_length must be positive and finite"),
    (dict(GJ=1.0), "torsion (GJ) needs the section's polar inertia"),
    (dict(EI=None), "every stiffness (EI, GJ, EA) is None"),
    (dict(parent="hub"), "parent body 'hub' is not defined"),
])
def test_bad_beams_are_one_line_errors(kwargs, words):
    args = dict(name="rod", parent="ground", length=1.0, segments=4, EI=1.0, GJ=None, mass_per_length=1.0)
    args.update(kwargs)
    b = mb.ModelBuilder()
    with pytest.raises(ModelError) as err:
        b.add_beam(**args)
    assert words in str(err.value) and "beam 'rod'" in str(err.value) and "\n" not in str(err.value)


def test_plates_are_refused_in_one_line():
    with pytest.raises(ModelError, match=r"plate 'deck': plates of rigid finite elements are not built") as err:
        mb.ModelBuilder().add_plate("deck", "ground", 1.0, 1.0, 4, 4)
    assert "\n" not in str(err.value)


def test_bad_loads_are_one_line_errors():
    b = mb.ModelBuilder()
    b.add_beam("rod", "ground", length=1.0, segments=2, EI=1.0, GJ=None, mass_per_length=1.0)
    b.add_load("p", "rod.tipp", force=(0, 0, 1))
    with pytest.raises(ModelError, match=r"load 'p': frame 'rod.tipp' is neither a frame nor a body"):
        b.build()
    b = mb.ModelBuilder()
    b.add_beam("rod", "ground", length=1.0, segments=2, EI=1.0, GJ=None, mass_per_length=1.0)
    b.add_frame("anchor", "ground")
    b.add_load("p", "anchor", force=(0, 0, 1))
    with pytest.raises(ModelError, match=r"load 'p': frame 'anchor' is on the ground"):
        b.build()
    for kwargs, words in ((dict(force=(1, 2)), "force must be 3 numbers"),
                          (dict(reference="body"), "reference must be 'world' or 'local'"),
                          (dict(curve={"times": [0, 0]}),
                           "times and values must be as many")):
        with pytest.raises(ModelError, match=words):
            mb.ModelBuilder().add_load("q", "ground", **kwargs)


def test_unreachable_equilibrium_names_the_coordinate():
    """A slider pushed by a constant load with nothing to hold it has no equilibrium: ConvergenceError naming its
    coordinate, carrying the last iterate."""
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("box", mass=1.0, inertia=(0.1, 0.1, 0.1))
    b.add_joint("rail", mb.Prismatic(axis=(1, 0, 0)), "ground", "box")
    b.add_beam("rod", "box", length=1.0, segments=2, EI=(1.0, None), GJ=None, mass_per_length=1.0)
    b.add_load("push", "box", force=(1.0, 0, 0))
    model = b.build()
    with pytest.raises(ConvergenceError, match=r"coordinate 'rail.displacement'") as err:
        mb.static_equilibrium(model, model.neutral())
    assert err.value.result.shape == (model.nq,) and not err.value.result.info["converged"]
    assert "\n" not in str(err.value)
