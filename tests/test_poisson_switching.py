"""Joint limits, latches and releases in the Poisson-impulse formulation (``switching/poisson.py``;
seed 002: the impact as a jump of the impulses, Δp = Jᵀ Λ).

Each run is compared with the tree formulation's run of the same model (an independent integration: other
variables, other steps), and the jump of p at each impact with the impulse of the log and with M(q) v from
``crba`` (independent of the O(N) solver of system (6)). Bounds: the two integrations each err by about rtol per
step, so switch times differ by at most 3 (N₁ + N₂) rtol over the rate at which the guard closes; the jumps and
p = M v are a few roundings of an O(N) solve: 1e-12 relative (κ(M) eps ≈ 1e-14 here, with a margin of 100).
"""
import numpy as np
import pytest
from test_switching import PULL, _momenta, double_pendulum, pendulum, rows_at, tilted_pendulum, two_stages

import multibody as mb
from multibody.errors import ModelError

KW = {"method": "DOP853", "rtol": 1e-12, "atol": 1e-14}


def both(model, q0, v0, t_end, **kw):
    """The runs of ``model`` in the tree and the Poisson formulations."""
    opts = {**KW, **kw}
    return (mb.simulate(model, q0, v0, t_end, **opts),
            mb.simulate(model, q0, v0, t_end, formulation="poisson", **opts))


def times_bound(a, b, rate):
    return 3.0 * (a.info["steps"] + b.info["steps"]) * a.info["rtol"] / rate


def test_double_pendulum_impacts_as_jumps_of_p():
    """The upper hinge of a double pendulum hits its stops (e = 0.7): the impacts come at the tree run's instants
    (bound of the module docstring, the rate the joint velocity before the impact), p jumps by Jᵀ Λ — the
    log's generalized impulse on the shoulder, nothing on the elbow — and p = M(q) v before and after."""
    model = double_pendulum(0.7)
    tree, poisson = both(model, [0.5, 0.3], [0.0, 0.0], 3.0)
    assert poisson.info["formulation"] == "poisson" and poisson.info["status"] == "success"
    assert [e["kind"] for e in poisson.events] == [e["kind"] for e in tree.events] == ["impact", "impact"]
    P = poisson.series["p"]
    for e, et in zip(poisson.events, tree.events):
        assert abs(e["t"] - et["t"]) <= times_bound(tree, poisson, abs(e["velocity_before"]))
        before, after = rows_at(poisson, e["t"])
        scale = np.abs(P[[before, after]]).max()
        np.testing.assert_allclose(P[after] - P[before], [e["impulse"], 0.0], rtol=0, atol=1e-12 * scale)
        for row in (before, after):
            np.testing.assert_allclose(P[row], mb.crba(model, poisson.q[row]) @ poisson.v[row], rtol=0,
                                       atol=1e-12 * scale)
        assert abs(e["velocity_after"] + 0.7 * e["velocity_before"]) <= 1e-12 * abs(e["velocity_before"])


def test_pendulum_impact_times_and_user_events_as_in_the_tree():
    """The pendulum on its stop: the same impact instants and user event times as the tree run (bound of the
    module docstring; the rates: the impact velocity, |θ̇| ≥ 0.5 at θ = −0.2)."""
    model = pendulum(e=0.7)
    crossing = lambda t, q, v: q[0] + 0.2
    tree, poisson = both(model, [-0.5], [0.0], 3.0, events=[crossing])
    assert len(poisson.events) == len(tree.events) == 3
    for e, et in zip(poisson.events, tree.events):
        assert abs(e["t"] - et["t"]) <= times_bound(tree, poisson, abs(et["velocity_before"]))
    np.testing.assert_allclose(poisson.info["t_events"][0], tree.info["t_events"][0], rtol=0,
                               atol=times_bound(tree, poisson, 0.5))


def test_resting_contact_in_momentum_form():
    """The pendulum of ``test_switching.test_resting_contact_holds_until_the_reaction_would_pull`` in (q, p):
    while it rests, the reaction enters ṗ and keeps it on the stop and at rest (to round-off: the reaction is
    computed from v = M⁻¹ p, so q and v drift by a few eps per step at most, N eps ≪ 1e-12), and it leaves when
    the reaction comes down to zero — the torque then balances gravity's moment (to 1e-9, as in the tree)."""
    model, tau = tilted_pendulum()
    pull = PULL
    res = mb.simulate(model, [0.0], [0.0], 4.0, method="DOP853", rtol=1e-11, atol=1e-13, tau=tau,
                      formulation="poisson")
    kinds = [e["kind"] for e in res.events]
    assert kinds.count("contact") == 1 and kinds.count("separate") == 1
    contact = next(e for e in res.events if e["kind"] == "contact")
    leave = next(e for e in res.events if e["kind"] == "separate")
    resting = (res.t > contact["t"]) & (res.t < leave["t"])
    assert np.count_nonzero(resting) > 5
    assert np.all(np.abs(res.q[resting, 0] + 0.2) <= 1e-12) and np.all(np.abs(res.v[resting, 0]) <= 1e-12)
    gravity_torque = -mb.rnea(model, np.array([-0.2]), np.zeros(1), np.zeros(1))[0]
    assert abs(gravity_torque + pull * (leave["t"] - 2.0)) < 1e-9
    assert np.all(res.q[res.t > leave["t"], 0] > -0.2)


def test_stage_separation_in_momentum_form():
    """Two stages released at t₁ (Free joints: p holds the impulses conjugate to the body-axis angular
    velocities): the total momenta before and after the release agree to 1e-12, and each stage keeps its own
    momenta afterwards to 1e-10 (as in the tree: DOP853 at rtol 1e-13 over ~200 steps)."""
    model = two_stages(0.5)
    v0 = np.array([0.3, -0.2, 1.5, 2.0, 0.5, 10.0])
    res = mb.simulate(model, model.neutral(), v0, 1.5, method="DOP853", rtol=1e-13, atol=1e-15,
                      formulation="poisson")
    assert [e["kind"] for e in res.events] == ["release"]
    before, after = rows_at(res, 0.5)
    m0, m1 = res.structures[0]["model"], res.structures[1]["model"]

    def cols(m):
        return ([res.q_names.index(n) for n in m.coordinate_names()],
                [res.v_names.index(n) for n in m.velocity_names()])

    (q0c, v0c), (q1c, v1c) = cols(m0), cols(m1)
    P0, L0, _ = _momenta(m0, res.q[before, q0c], res.v[before, v0c])
    P1, L1, per1 = _momenta(m1, res.q[after, q1c], res.v[after, v1c])
    assert np.max(np.abs(P1 - P0)) < 1e-12 * np.abs(P0).max()
    assert np.max(np.abs(L1 - L0)) < 1e-12 * np.abs(L0).max()
    assert np.all(np.isnan(res.series["p"][before, [res.v_names.index("adapter.wx")]]))
    for k in np.flatnonzero(res.t > 0.5):
        _, _, per = _momenta(m1, res.q[k, q1c], res.v[k, v1c])
        for body in ("stage1", "stage2"):
            assert np.max(np.abs(per[body][1] - per1[body][1])) < 1e-10 * np.abs(per1[body][1]).max()


def test_solar_panel_latches_in_momentum_form():
    """The solar panel's latches lock in the same order at the tree run's instants (bound of the module docstring
    at rtol 1e-10, the rate the hinge's velocity before the lock); a locked hinge stays at its deployed angle and
    at rest to round-off (its reaction enters ṗ: N eps ≪ 1e-12)."""
    from multibody.systems import solar_panels as sp

    tree = sp.deploy(t_end=5.0, rtol=1e-10, atol=1e-12, n_out=201)
    poisson = sp.deploy(t_end=5.0, rtol=1e-10, atol=1e-12, n_out=201, formulation="poisson")
    locks = [e for e in poisson.events if e["kind"] == "lock"]
    locks_tree = [e for e in tree.events if e["kind"] == "lock"]
    assert [e["element"] for e in locks] == [e["element"] for e in locks_tree] == ["hinge2", "hinge1"]
    for e, et in zip(locks, locks_tree):
        assert abs(e["t"] - et["t"]) <= times_bound(tree, poisson, abs(et["velocity_before"]))
    for k, e in ((1, locks[0]), (0, locks[1])):
        after = poisson.t > e["t"]
        assert np.all(np.abs(poisson.q[after, k]) <= 1e-12) and np.all(np.abs(poisson.v[after, k]) <= 1e-12)


def test_poisson_switching_refusals():
    """An unknown solver is refused with a ModelError naming it."""
    model = pendulum()
    with pytest.raises(ModelError, match="solver 'lu'"):
        mb.simulate(model, [-0.5], [0.0], 1.0, formulation="poisson", solver="lu")


def test_stormer6_across_switches():
    """The seed's integrator, STORMER6, across the pendulum's impacts in (q, p): its step of any size is the dense
    output the impacts are located on, so they come at the tree run's instants to what both integrations err (the
    module docstring's bound for the tree run's part; STORMER6 at h = 1e-3 errs by ~h⁶ per unit time, below it),
    and each impact follows Newton's law (u⁺ = −e u⁻ to round-off)."""
    model = pendulum(e=0.7)
    tree = mb.simulate(model, [-0.5], [0.0], 2.0, **KW)
    sv = mb.simulate(model, [-0.5], [0.0], 2.0, method="STORMER6", h=1e-3, formulation="poisson")
    assert sv.info["path"] == "python" and sv.info["status"] == "success"
    impacts = [e for e in sv.events if e["kind"] == "impact"]
    assert len(impacts) == len([e for e in tree.events if e["kind"] == "impact"]) >= 2
    for e, et in zip(impacts, [e for e in tree.events if e["kind"] == "impact"]):
        assert abs(e["t"] - et["t"]) <= times_bound(tree, tree, abs(et["velocity_before"])) + 1e-9
        assert abs(e["velocity_after"] + 0.7 * e["velocity_before"]) <= 1e-12 * abs(e["velocity_before"])


def test_checkpoint_of_a_poisson_run_across_switches(tmp_path, monkeypatch):
    """A fixed-step Poisson run across impacts, checkpointed and resumed from the middle: the same run bit for bit
    (the checkpoint holds the state (q, p) itself, not v, so nothing is recomputed)."""
    from checkpoint_copies import copy_at

    model = pendulum(e=0.7)
    kw = dict(method="RK4", h=1e-3, output_every=10, formulation="poisson")
    plain = mb.simulate(model, [-0.5], [0.0], 2.0, **kw)
    mid = tmp_path / "mid.ckpt"
    copy_at(monkeypatch, mid, lambda t, step: step == 1000)
    full = mb.simulate(model, [-0.5], [0.0], 2.0, checkpoint=tmp_path / "run.ckpt", every=0.25, **kw)
    resumed = mb.resume(mid)
    for res in (full, resumed):
        np.testing.assert_array_equal(res.q, plain.q)
        np.testing.assert_array_equal(res.v, plain.v)
        np.testing.assert_array_equal(res.series["p"], plain.series["p"])
        assert res.events == plain.events
