"""Identities every switch of a run with end stops must satisfy, on random planar chains (hypothesis), each checked
from the states just before and just after the switch with the mass matrix of ``crba`` only — not from the
switch's own log or its Delassus matrix:

* the impulse equation M Δv = Jᵀ Λ (seed 002, Δp = Jᵀ Λ): the momentum jump M Δv is zero on every coordinate that
  is not on a stop after the switch, and pushes away from the stop (≥ 0 on a lower stop, ≤ 0 on an upper one)
  on those that are;
* no stop is left with a velocity into it; the kinetic energy does not grow (e ≤ 1), however many stops are closed
  at once — also when a stop is closed but separating (u > 0) while another is hit, where Newton's law on the
  coupled rows would create energy and the switch lowers the rebounds instead
  (``switching.structure.energy_consistent_impulse``): such states are drawn on purpose below;
* Carnot's theorem for plastic impacts (e = 0 on every stop): the kinetic energy lost equals the kinetic energy
  of the lost velocities, T⁻ − T⁺ = ½ Δvᵀ M Δv — it holds for any number of simultaneous rows exactly when
  every row is complementary (Λᵢ u⁺ᵢ = 0), so it checks the LCP's solution on the whole tree.

A cascade of bounces on one stop must end (the run returns; ``switching.structure.unresolved_rebound``).

Bounds: one switch is a Cholesky solve and a few products of size n (≤ 5): its round-off is bounded by
c n ε κ(M) times the size of the terms (κ the condition number of M at the switch, c = 64 a safe constant for the
solves and the products; the identities are exact in exact arithmetic), plus what the switch's rest velocity
(REST_VELOCITY: a velocity within it of zero on a stop is set to exactly zero) changes: REST_VELOCITY |M| n on a
momentum, REST_VELOCITY |M| n |v| on an energy.
"""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import multibody as mb
from multibody.switching.structure import REST_VELOCITY

EPS = np.finfo(float).eps
G = 9.81
#: the step budget of a drawn run (over all its modes: a few thousand steps in 2 s for these chains), so that no draw
#: can run without end
STEPS = 50_000


def chain(n, seed, e):
    """A planar chain of n links about y under gravity, random masses, lengths and stops; restitution ``e``
    (None: a random one per joint)."""
    rng = np.random.default_rng(seed)
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name=f"chain {n}")
    parent, offset = "ground", 0.0
    lower, upper = -rng.uniform(0.1, 0.8, n), rng.uniform(0.1, 0.8, n)
    for k in range(n):
        length, mass = rng.uniform(0.3, 1.0), rng.uniform(0.5, 2.0)
        Iy = mass * length**2 / 12.0
        b.add_body(f"link{k}", mass=mass, com=(0.0, 0.0, -length / 2), inertia=np.diag([Iy, Iy, 0.01 * Iy]))
        b.add_joint(f"j{k}", mb.Revolute(axis=(0, 1, 0)), parent, f"link{k}",
                    placement=mb.Placement(translation=(0.0, 0.0, offset)), limits=(lower[k], upper[k]),
                    restitution=rng.uniform(0.0, 1.0) if e is None else e)
        parent, offset = f"link{k}", -length
    model = b.build()
    q0 = rng.uniform(0.8 * lower, 0.8 * upper)
    v0 = rng.normal(0.0, 3.0, n)
    return model, q0, v0


def switches(res):
    """The (before, after) rows of every switch of ``res``: consecutive rows at the same t (two per switch; switches
    that follow one another at one instant give more)."""
    times = sorted({e["t"] for e in res.events})
    for t in times:
        rows = np.flatnonzero(res.t == t)
        assert len(rows) >= 2 and len(rows) % 2 == 0, f"the switch at t = {t} has rows {rows}"
        yield from zip(rows[:-1], rows[1:])


def kinetic(M, v):
    return 0.5 * v @ M @ v


def check_switch(model, lower, upper, q, v0, v1, plastic):
    """The identities of the module docstring at one switch; returns the number of coordinates on a stop."""
    M = mb.crba(model, q)
    n = len(q)
    kappa = np.linalg.cond(M)
    tol = 64 * n * EPS * kappa
    dv = v1 - v0
    dp = M @ dv
    # the switch sets the velocity of a coordinate that comes to rest on its stop to exactly 0 when it is within
    # the rest velocity of 0 (REST_VELOCITY): a change of at most that much on each coordinate on a stop
    rest = REST_VELOCITY * np.abs(M).max() * n
    scale_p = np.abs(M).max() * max(np.abs(v0).max(), np.abs(v1).max(), 1e-300)
    on_lower, on_upper = q == lower, q == upper
    free = ~(on_lower | on_upper)
    assert np.all(np.abs(dp[free]) <= tol * scale_p + rest), (dp, free)
    assert np.all(dp[on_lower] >= -tol * scale_p - rest) and np.all(dp[on_upper] <= tol * scale_p + rest)
    scale_v = max(np.abs(v0).max(), np.abs(v1).max())
    assert np.all(v1[on_lower] >= -tol * scale_v) and np.all(v1[on_upper] <= tol * scale_v)
    T0, T1 = kinetic(M, v0), kinetic(M, v1)
    scale_T = np.abs(M).max() * scale_v**2 * n
    assert T1 <= T0 + tol * scale_T + rest * scale_v, (T0, T1)
    if plastic:
        assert abs((T0 - T1) - kinetic(M, dv)) <= tol * scale_T + rest * scale_v
    return int(np.sum(~free))


@settings(max_examples=12, deadline=None)
@given(n=st.integers(2, 5), seed=st.integers(0, 2**31 - 1), plastic=st.booleans())
def test_every_switch_is_an_impulse_on_the_tree(n, seed, plastic):
    """The identities of the module docstring at every switch of a 2 s run of a random chain (DOP853)."""
    model, q0, v0 = chain(n, seed, 0.0 if plastic else None)
    lower, upper = model.lower_limits, model.upper_limits
    res = mb.simulate(model, q0, v0, 2.0, method="DOP853", rtol=1e-10, atol=1e-12, n_out=3, max_steps=STEPS)
    # most random chains meet their stops within 2 s; one that swings clear of them has no switch to check
    # (hypothesis draws others, and fails as unsatisfiable should none of the draws switch)
    assume(res.events)
    for before, after in switches(res):
        check_switch(model, lower, upper, res.q[after], res.v[before], res.v[after], plastic)


@settings(max_examples=40)
@given(n=st.integers(2, 5), seed=st.integers(0, 2**31 - 1), e=st.sampled_from([1.0, 0.9, 0.7, 0.3, 0.0]),
       data=st.data())
def test_closed_separating_stop_next_to_a_hit_one_gives_no_energy(n, seed, e, data):
    """A stop exactly closed and separating (u > 0) at the instant another is hit (drawn: the run starts there, so
    the first switch is that impact): the identities hold — the separating row stays separating or is held at
    u⁺ = 0 by a pushing impulse, and the kinetic energy does not rise, whatever the restitution e ≤ 1. (Newton's
    law on the rows as they are, without the switch's correction, gives energy in about a third of these draws:
    up to several joules on a 3-link chain.)"""
    model, q0, v0 = chain(n, seed, e)
    lower, upper = model.lower_limits, model.upper_limits
    leaving, hit = data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    side_leaving, side_hit = data.draw(st.booleans()), data.draw(st.booleans())
    # on the stop, leaving it slowly (u > 0: an impulse elsewhere may bring it back), and on a stop, approaching it
    q0[leaving] = lower[leaving] if side_leaving else upper[leaving]
    v0[leaving] = data.draw(st.floats(1e-3, 1.0)) * (1.0 if side_leaving else -1.0)
    q0[hit] = lower[hit] if side_hit else upper[hit]
    v0[hit] = -(abs(v0[hit]) + 0.1) * (1.0 if side_hit else -1.0)
    res = mb.simulate(model, q0, v0, 1e-9, method="RK4", h=1e-9, max_steps=STEPS)   # the switch at t = 0, one step
    assert res.events and res.events[0]["t"] == 0.0
    check_switch(model, lower, upper, res.q[0], v0, res.v[0], plastic=e == 0.0)


def test_energy_consistent_impulse_lowers_the_rebounds_only_where_newton_would_give_energy():
    """Two coupled rows, J = I and M⁻¹ = D: row 1 hit (u = −1, e = 1), row 2 closed and separating (u = 0.1).
    Newton's law gives Λ = (2.6, 1.2) and ΔT = ½ Λ₂ u₂ = +0.06 (derived by hand); the law lowers the rebound
    until ΔT = 0 (to the bisection's 2⁻⁴⁰), keeping u⁺ ≥ 0 on both rows. With the separating row alone moving
    away freely (no coupling) the rebound is Newton's, s = 1."""
    from multibody.switching.impulse import mixed_lcp
    from multibody.switching.structure import energy_consistent_impulse

    def solve(D):
        def lcp(b):
            lam, w = np.empty(2), np.empty(2)
            assert mixed_lcp(D, np.ascontiguousarray(b), np.zeros(2, dtype=np.bool_), lam, w) >= 0
            return lam
        return lcp

    D, u, e = np.array([[1.0, -0.5], [-0.5, 1.0]]), np.array([-1.0, 0.1]), np.array([1.0, 0.0])
    newton = solve(D)(u + e * np.minimum(u, 0.0))
    np.testing.assert_allclose(newton, [2.6, 1.2], rtol=1e-14)
    assert u @ newton + 0.5 * newton @ D @ newton == pytest.approx(0.06, rel=1e-12)
    lam, s = energy_consistent_impulse(solve(D), D, u, e)
    assert 0.0 < s < 1.0
    du = u + D @ lam
    assert np.all(du >= -1e-15) and np.all(lam >= 0.0)
    assert abs(u @ lam + 0.5 * lam @ D @ lam) <= 2.0**-39 * 2.0     # ΔT = 0 to the bisection (|∂ΔT/∂s| < 2)
    D0 = np.eye(2)
    lam, s = energy_consistent_impulse(solve(D0), D0, u, e)
    assert s == 1.0 and np.allclose(u + D0 @ lam, [1.0, 0.1])


def test_simultaneous_rows_carnot():
    """A plastic chain that comes to rest on its stops: switches with several coordinates on stops at once (rows of
    one LCP) occur, and each satisfies the identities, Carnot's theorem included."""
    model, q0, v0 = chain(4, 3, 0.0)
    res = mb.simulate(model, q0, v0, 3.0, method="DOP853", rtol=1e-10, atol=1e-12, n_out=3)
    most = max(check_switch(model, model.lower_limits, model.upper_limits, res.q[a], res.v[b], res.v[a], True)
               for b, a in switches(res))
    assert most >= 2
