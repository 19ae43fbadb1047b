"""User events (``simulate(..., events=)``) in runs across switches: located alongside the model's own guards on
the same dense output, recorded as in a run without switches (``result.info["t_events"]``, status ``"event"``
of a terminal one), an event at a switch reported once (``switching/events.py``).

The bounds: an event located on the same dense output as in another run is equal to brentq's location precision
(``4 eps (1 + |t|)`` each: :data:`multibody.switching.events.SAME_ROOT` for two); an event compared with a run
that takes other steps differs by the integrators' errors, bounded in the test from the number of steps times
the tolerance, over the rate at which the event function crosses zero.
"""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError
from multibody.switching.events import SAME_ROOT

G = 9.81
RTOL, ATOL = 1e-12, 1e-14


def pendulum(upper=0.0, lower=-np.inf, e=0.7):
    """A pendulum hanging from a hinge about y (q = 0 hangs straight down), its stop at ``upper``."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name="pendulum on a stop")
    b.add_body("bob", mass=1.0, com=(0.0, 0.0, -1.0), inertia=np.diag([0.05**2] * 3) * 0.4)
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=(lower, upper), restitution=e)
    return b.build()


def event(f, direction=0.0, terminal=False):
    f.direction, f.terminal = direction, terminal
    return f


def angle(a, direction=0.0, terminal=False):
    """The event θ = a."""
    return event(lambda t, q, v: q[0] - a, direction, terminal)


def velocity(direction=0.0, terminal=False):
    """The event θ̇ = 0 (the turning points; a bounce reverses it at the stop)."""
    return event(lambda t, q, v: v[0], direction, terminal)


def run(model, t_end=3.0, q0=-0.5, v0=0.0, t0=0.0, **kw):
    return mb.simulate(model, [q0], [v0], t_end, method="DOP853", rtol=RTOL, atol=ATOL, t0=t0, **kw)


def same(a, b):
    """Two roots located on the same dense output: equal to the location precision (module docstring)."""
    return abs(a - b) <= SAME_ROOT * (1.0 + max(abs(a), abs(b)))


def impact_times(res):
    return [e["t"] for e in res.events if e["kind"] == "impact"]


def test_event_times_equal_independent_runs():
    """θ = −0.2 crossings with a stop at 0 (e = 0.7). Up to the first impact the run is the run without limits
    (same right-hand side, same steps): its crossings equal that run's to the location precision. After each
    impact, a run without limits started from the state after it (its time, the stop, the velocity of the log)
    gives the crossings up to the next impact: the two runs take other steps, so they differ by the integrators'
    errors — about rtol per step (DOP853's local error per unit step is ~ rtol |x|, |θ| ≤ 0.5, |θ̇| ≤ 2), over the
    rate |θ̇| ≥ 0.5 at which θ crosses −0.2 — bounded by 3 N rtol / 0.5 with N the steps of both."""
    model, free = pendulum(), pendulum(upper=np.inf)
    res = run(model, events=[angle(-0.2)])
    crossings = np.array(res.info["t_events"][0])
    impacts = impact_times(res)
    assert len(impacts) == 3 and len(crossings) == 5
    assert res.info["status"] == "success"
    reference = run(free, t_end=impacts[0], events=[angle(-0.2)])
    first = crossings[crossings < impacts[0]]
    assert len(first) == 1 and same(first[0], reference.info["t_events"][0][0])
    for k, (t_a, t_b) in enumerate(zip(impacts, impacts[1:] + [3.0])):
        e = next(x for x in res.events if x["t"] == t_a)
        after = run(free, t_end=t_b, q0=0.0, v0=e["velocity_after"], t0=t_a, events=[angle(-0.2)])
        got = crossings[(crossings > t_a) & (crossings < t_b)]
        bound = 3.0 * (res.info["steps"] + after.info["steps"]) * RTOL / 0.5
        assert len(got) == len(after.info["t_events"][0]) == (2 if k < 2 else 0)   # the third rebound stays above −0.2
        np.testing.assert_allclose(got, after.info["t_events"][0], rtol=0, atol=bound)


def test_event_at_the_stop_reported_once_per_impact():
    """θ = 0 is the stop: the pendulum reaches it and rebounds (a touch). Each impact is reported once, at the
    impact's instant (to the location precision), when approached from below (direction +1 or 0); the departure
    from the stop is no crossing (direction −1: none). θ̇ = 0 jumps through zero at each impact (direction −1 or
    0: reported at the impact's instant) and crosses it at the turning points below (direction +1, and the start
    from rest, as in a run without limits)."""
    model = pendulum()
    both = run(model, events=[angle(0.0), velocity()])
    impacts = impact_times(both)
    assert len(impacts) == 3
    assert len(both.info["t_events"][0]) == 3
    assert all(same(a, b) for a, b in zip(both.info["t_events"][0], impacts))
    up = run(model, events=[angle(0.0, +1), velocity(+1)])
    down = run(model, events=[angle(0.0, -1), velocity(-1)])
    assert up.info["t_events"][0] == both.info["t_events"][0] and down.info["t_events"][0] == []
    assert down.info["t_events"][1] == impacts           # reported at the switch instant itself
    assert sorted(up.info["t_events"][1] + down.info["t_events"][1]) == both.info["t_events"][1]
    # the turning points below the stop: those of the run without limits from the state after each impact
    # (bounds as in test_event_times_equal_independent_runs, over the rate |θ̈| ≥ g sin(0.1) at the turning point)
    free = pendulum(upper=np.inf)
    turns = up.info["t_events"][1][1:]
    assert len(turns) == 2
    for t_turn, t_a in zip(turns, impacts):
        e = next(x for x in both.events if x["t"] == t_a)
        ref = run(free, t_end=t_turn + 0.1, q0=0.0, v0=e["velocity_after"], t0=t_a, events=[velocity(+1)])
        bound = 3.0 * (up.info["steps"] + ref.info["steps"]) * RTOL / (G * np.sin(0.1))
        assert abs(ref.info["t_events"][0][0] - t_turn) <= bound


def test_direction_filtering():
    """The crossings of θ = −0.2 with direction +1 and −1 split those of direction 0 between them, alternately,
    each of them on its side: θ increasing (θ̇ > 0) at the upward ones, decreasing at the downward ones."""
    model = pendulum()
    both = run(model, events=[angle(-0.2)])
    up = run(model, events=[angle(-0.2, +1)])
    down = run(model, events=[angle(-0.2, -1)])
    t_up, t_down = up.info["t_events"][0], down.info["t_events"][0]
    assert sorted(t_up + t_down) == both.info["t_events"][0]
    assert len(t_up) == 3 and len(t_down) == 2
    merged = sorted([(t, +1) for t in t_up] + [(t, -1) for t in t_down])
    assert [s for _, s in merged] == [1, -1, 1, -1, 1]
    # the sense of each crossing from the run's outputs at the event instants (t_eval on them)
    for times, sign in ((t_up, 1.0), (t_down, -1.0)):
        res = run(model, t_eval=np.array(times))
        at = np.isin(res.t, times)            # (the other rows: before and after each switch)
        assert np.count_nonzero(at) == len(times) and np.all(sign * res.v[at, 0] > 0.0)
        np.testing.assert_allclose(res.q[at, 0], -0.2, rtol=0, atol=1e-12)   # on the crossing: |θ̇| 4 eps t ≪ 1e-12


def test_terminal_event_after_two_impacts():
    """A terminal event of count 2 on θ = −0.2 going down: the second such crossing comes after the second
    impact and ends the run there, status "event" and the message of a run without switches; the switch log up
    to it is intact (that of the same run without a terminal event), and the last row is the crossing."""
    model = pendulum()
    full = run(model, events=[angle(-0.2, -1)])
    res = run(model, events=[angle(-0.2, -1, terminal=2)])
    t_stop = full.info["t_events"][0][1]
    assert res.info["status"] == "event"
    assert res.info["message"] == f"a terminal event occurred at t = {t_stop:.17g}"
    assert res.info["t_events"][0] == full.info["t_events"][0][:2]
    assert res.events == [e for e in full.events if e["t"] < t_stop] and len(impact_times(res)) == 2
    assert res.t[-1] == t_stop and abs(res.q[-1, 0] + 0.2) <= 1e-12
    # with output times: none after the stop, as in a run without switches
    sparse = run(model, events=[angle(-0.2, -1, terminal=2)], n_out=7)
    assert sparse.t[-1] <= t_stop and sparse.info["t_events"] == res.info["t_events"]


def test_terminal_event_on_a_switch_ends_after_it():
    """A terminal event at the stop (θ = 0) ends the run at the first impact, after the switch: the impact is in
    the log, the last two rows are the states before and after it."""
    model = pendulum()
    res = run(model, events=[angle(0.0, terminal=True)])
    assert res.info["status"] == "event" and len(res.events) == 1 and res.events[0]["kind"] == "impact"
    t_e = res.events[0]["t"]
    assert same(res.info["t_events"][0][0], t_e)
    assert res.t[-1] == res.t[-2] == t_e
    assert res.v[-2, 0] == res.events[0]["velocity_before"] and res.v[-1, 0] == res.events[0]["velocity_after"]


def test_far_limits_equal_no_limits():
    """Limits never reached (±3 rad for a swing of 0.5): the run takes the steps of the run without limits, and
    its events (terminal or not, any direction) equal those of that run to round-off (the same arithmetic)."""
    far, free = pendulum(upper=3.0, lower=-3.0), pendulum(upper=np.inf)
    events = [angle(-0.2), velocity(+1), angle(0.3, -1, terminal=3)]
    a = run(far, t_end=10.0, events=events)
    b = run(free, t_end=10.0, events=events)
    assert a.events == [] and a.info["status"] == b.info["status"] == "event"
    assert a.info["message"] == b.info["message"]
    for ta, tb in zip(a.info["t_events"], b.info["t_events"]):
        assert len(ta) == len(tb) > 0
        np.testing.assert_allclose(ta, tb, rtol=0, atol=SAME_ROOT * 10.0)
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-14)


def test_refusals_and_bad_values():
    """Events with a fixed-step method are refused as in every run; an event that returns no finite number is
    a ModelError naming it, with the Result so far (its switches) attached."""
    model = pendulum()
    with pytest.raises(ModelError, match="adaptive method"):
        mb.simulate(model, [-0.5], [0.0], 1.0, method="RK4", h=1e-3, events=[angle(-0.2)])

    def bad(t, q, v):
        return np.nan if t > 0.8 else q[0] + 0.2

    with pytest.raises(ModelError, match="event 0") as info:
        run(model, events=[bad])
    assert info.value.element == "events[0]"
    partial = info.value.result
    assert partial is not None and partial.t[-1] <= 0.8 + 1e-12 and len(partial.events) == 1
