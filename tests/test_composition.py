"""One run takes everything the model has (issue 32): the time-stepping model with contacts, joint stops, latches,
held coordinates, loops, controllers and torque laws as rows and forces of one step, with checkpoints, events and
batches as services of its run loop (contact/stepping_run.py, docs/validation.md "Combinations").

Bounds, and where they come from:

* restitution on the unilateral rows (Newton's target u⁺ ≥ −e u⁻ in the step of the impact): a ball dropped with
  e = 0.8 reaches apex heights e^{2k} H; the scheme errs by the gap at the start of the impact step (< h |u|,
  4.4e-4 m at h = 1e-4 from 1 m) and semi-implicit Euler's O(h g) in flight, so 1e-3 H (the issue's bound) holds
  with room; two equal spheres head-on with e = 0.5 leave at 0.25 and 0.75 of the incoming speed: momentum and
  Newton's law alone, exact but for round-off (1e-12);
* a pendulum on a stop: the step at which the stepping run rebounds lies within one step of the impact located by
  the run across switches (event location, Newton's law), and its velocities before and after agree with that
  run's to what the velocity changes over a step, |q̈|max h, plus the stop's −e ratio; the stepping impact itself
  follows Newton's law exactly (u⁺ = −e u⁻ to round-off);
* a latch locks in the step its coordinate reaches the value and stays on it to round-off (its bilateral row's
  gap is corrected each step);
* a run where a feature has no effect equals the run without it bit for bit: limits far from the motion (Solo12's
  ±10 rad joints) against limits=False; an event that never fires; a Python torque callback against the same law
  compiled (the same floating-point operations); a checkpointed run resumed from its middle; each run of a batch
  against its single run;
* a stage separation (a release of mode "separate") in a stepping run: each structure's part is that structure's
  own stepping run, bit for bit; in flight, the run across switches plus semi-implicit Euler's exact error on a
  parabola, −½ g h t (round-off: 1e-12); linear momentum P(0) + M g t + h Σ F through the separation and the
  floor's impulses, to the round-off of n steps (n · 8 ε max|P|);
* Solo12 from its URDF with its limits as stops, a JointPD posture and foot contacts stands: base height within
  5 mm of MuJoCo's (the issue's bound; tests/test_contact_solo12.py checks the same robot with a compiled law),
  feet sliding less than 1 mm over 5 s;
* Theo Jansen's walker (systems/jansen.py): the distance per crank turn within 2 % (the issue's bound) of the
  kinematic prediction, the strokes of the lowest feet, computed from the linkage's closed-form position analysis
  (measured: 1.0 %); its loops closed to the second-order term of a step.
"""
import math
import os

import numpy as np
import pytest
from numba import njit

import multibody as mb
from multibody.bench.contact import FEET, FOOT_RADIUS, KP, KD, Q_REF, posture_law, solo12_path, standing_state
from multibody.errors import ModelError
from checkpoint_copies import copy_at

G = 9.81
EPS = np.finfo(float).eps


def spheres(e, gravity=(0.0, 0.0, -G), n=1, floor=True):
    b = mb.ModelBuilder(gravity=gravity)
    for k in range(n):
        b.add_body(f"s{k}", mass=1.0, inertia=np.eye(3) * 0.004)
        b.add_joint(f"s{k}", mb.Free(), "ground", f"s{k}")
        b.add_collision(f"s{k}", f"s{k}", mb.Sphere(0.1), restitution=e)
    if floor:
        b.add_collision("floor", "ground", mb.HalfSpace())
    return b.build()


def pendulum(**joint):
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", **joint)
    return b.build()


# ---- restitution ---------------------------------------------------------------------------------------------------
def test_bouncing_ball_apex_heights():
    model = spheres(0.8)
    q0 = model.neutral()
    q0[2] = 1.1                                          # 1 m of fall to the floor
    res = mb.simulate(model, q0, None, 3.2, h=1e-4, contact="stepping")
    z = res.q[:, 2] - 0.1
    apex = [z[i] for i in range(1, len(z) - 1) if z[i] >= z[i - 1] and z[i] > z[i + 1]][:5]
    assert len(apex) == 5
    np.testing.assert_allclose(apex, 0.8 ** (2 * np.arange(1, 6)), rtol=0, atol=1e-3)


def test_two_spheres_head_on():
    model = spheres(0.5, gravity=(0, 0, 0), n=2, floor=False)
    q0 = model.neutral()
    q0[7] = 0.3
    v0 = np.zeros(12)
    v0[3] = 1.0
    res = mb.simulate(model, q0, v0, 0.3, h=1e-4, contact="stepping", n_out=2)
    assert res.v[-1, 3] == pytest.approx(0.25, abs=1e-12) and res.v[-1, 9] == pytest.approx(0.75, abs=1e-12)


def test_restitution_in_model_files_and_pairs(tmp_path):
    model = spheres(0.8)
    path = tmp_path / "ball.yaml"
    mb.io.save_model(model, path)
    again = mb.load_model(path)
    assert [c.restitution for c in again.collisions] == [0.8, 0.0]
    assert again.with_collisions([("pad", "ground", mb.Sphere(0.01), None, 1.0, 0.3)]).collisions[-1].restitution == 0.3
    from multibody.contact.collision_sets import pack_collisions

    assert pack_collisions(again).pair_e.tolist() == [0.8]     # the larger of the two
    with pytest.raises(ModelError, match="restitution must be a finite number in \\[0, 1\\]"):
        spheres(1.5)


# ---- stops, latches, held coordinates ------------------------------------------------------------------------------
def test_stop_restitution_is_newtons_law():
    model = pendulum(limits=(-0.3, 0.3), restitution=0.6)
    h = 1e-4
    switching = mb.simulate(model, [0.0], [3.0], 0.5, method="RK4", h=h)
    impacts = [e for e in switching.events if e["kind"] == "impact"][:2]
    res = mb.simulate(model, [0.0], [3.0], 0.5, h=h, contact="stepping")
    v = res.v[:, 0]
    turns = np.flatnonzero(np.sign(v[1:]) != np.sign(v[:-1]))[:2]
    qdd_max = 1.0 * G * 0.5 / 0.35                   # m g l_c / I about the hinge
    (k1, k2), (e1, e2) = turns, impacts
    assert abs(res.t[k1] - e1["t"]) <= h                  # the first impact: within a step, velocities to q̈ h
    assert abs(v[k1] - e1["velocity_before"]) <= 2 * qdd_max * h
    assert abs(v[k1 + 1] - e1["velocity_after"]) <= 2 * qdd_max * h
    for k in (k1, k2):                                    # every stepping impact: Newton's law to round-off
        assert v[k + 1] == pytest.approx(-0.6 * v[k], rel=1e-12)
    # the second: the velocity error of the first (2 q̈ h) moves it by that times the flight over the speed
    assert abs(res.t[k2] - e2["t"]) <= h + 2 * qdd_max * h * (e2["t"] - e1["t"]) / abs(e2["velocity_before"])


def test_latch_locks_in_the_step_it_is_reached():
    model = pendulum(latch=0.2)
    res = mb.simulate(model, [0.0], [2.0], 0.3, h=1e-3, contact="stepping")
    switching = mb.simulate(model, [0.0], [2.0], 0.3, method="RK4", h=1e-3)
    t_lock = next(e["t"] for e in switching.events if e["kind"] == "lock")
    after = res.t >= t_lock + 1e-3
    assert np.all(np.abs(res.q[after, 0] - 0.2) < 1e-12) and np.all(np.abs(res.v[after, 0]) < 1e-12)
    assert np.all(res.q[res.t < t_lock - 1e-3, 0] < 0.2)


def test_unlock_release_holds_then_frees():
    model = pendulum(release=mb.Release(0.1, mode="unlock"))
    res = mb.simulate(model, [0.5], [0.0], 0.3, h=1e-3, contact="stepping")
    held = res.t <= 0.1 + 1e-12
    assert np.all(np.abs(res.q[held, 0] - 0.5) < 1e-14) and np.all(np.abs(res.v[held, 0]) < 1e-14)
    free = mb.simulate(pendulum(), [0.5], [0.0], 0.2, h=1e-3, contact="stepping")   # from the release on
    np.testing.assert_allclose(res.q[~held, 0], free.q[1:, 0], rtol=0, atol=1e-12)



def test_a_start_beyond_a_stop_or_moving_while_held():
    """The run across switches refuses a start beyond a stop or moving on a held coordinate (one line naming the
    joint); the stepping model (and the implicit compliant one) brings it back, as it does an overlap, and says so
    (a ``ModelWarning``, ``info["start_outside_stops"]``; for a batch, naming the first such run): the stop's row
    pushes 0.2 rad beyond the stop back by h / recovery of what is left per step (after 100 steps at most
    0.2 · 0.9¹⁰⁰ + SLOP beyond it), the held coordinate's row stops it at the first step. A release before t0 holds
    nothing."""
    from multibody.contact.stepping_solver import SLOP

    stops, held = pendulum(limits=(-0.3, 0.3)), pendulum(release=mb.Release(0.1, mode="unlock"))
    beyond = "joint 'hinge': q0 of coordinate 'angle' = 0.5 is outside its limits \\[-0.3, 0.3\\]"
    moving = "joint 'hinge' is held until its release at t = 0.1: its velocity v0\\[0\\] must be 0, got 1.0"
    with pytest.raises(ModelError, match=beyond + "$"):
        mb.simulate(stops, [0.5], [0.0], 0.01, h=1e-3, method="RK4")
    with pytest.raises(ModelError, match=moving + "$"):
        mb.simulate(held, [0.5], [1.0], 0.01, h=1e-3, method="RK4")
    for run in (dict(contact="stepping"), dict(contact="compliant", implicit=True)):
        with pytest.warns(mb.errors.ModelWarning, match=beyond + ": the stepping model brings it back"):
            res = mb.simulate(stops, [0.5], [0.0], 0.1, h=1e-3, **run)
        assert res.info["start_outside_stops"] == ["joint 'hinge': q0 of coordinate 'angle' = 0.5 is outside its "
                                                   "limits [-0.3, 0.3]"]
        assert res.q[-1, 0] <= 0.3 + 0.2 * 0.9 ** 100 + SLOP
        with pytest.warns(mb.errors.ModelWarning, match=moving):
            res = mb.simulate(held, [0.5], [1.0], 0.01, h=1e-3, **run)
        eps = np.finfo(float).eps                       # the held row's direct solve: round-off of v0 = 1
        assert abs(res.v[1, 0]) <= 8 * eps and abs(res.q[1, 0] - 0.5) <= 8 * eps
    with pytest.warns(mb.errors.ModelWarning, match=beyond + " \\(run 1 and 1 more\\)"):
        mb.simulate_batch(stops, [[0.0], [0.5], [0.6]], None, 0.01, h=1e-3, contact="stepping")
    later = mb.simulate(held, [0.5], [1.0], 0.21, t0=0.2, h=1e-3, contact="stepping")
    assert later.v[1, 0] != 0.0                               # released before t0: free from the start


# ---- a stage separation: a release that separates a joint, across the floor ------------------------------------------
def stage(release=0.3, floor=True):
    """A booster (a free box, 2 kg) with a payload (0.5 kg) spinning on it about z (a Revolute 0.3 m above its
    centre), thrown up and across a floor (friction 0.5); the clamp separates at ``release`` (None: never)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -G), name="stage")
    b.add_body("booster", mass=2.0, inertia=np.diag([0.05, 0.05, 0.02]))
    b.add_body("payload", mass=0.5, inertia=np.diag([0.01, 0.01, 0.004]))
    b.add_joint("flight", mb.Free(), "ground", "booster")
    b.add_joint("clamp", mb.Revolute(axis=(0, 0, 1)), "booster", "payload",
                placement=mb.Placement(translation=(0, 0, 0.3)))
    b.add_collision("booster", "booster", mb.Box((0.2, 0.2, 0.2)), friction=0.5)
    if floor:
        b.add_collision("floor", "ground", mb.HalfSpace(), friction=0.5)
    if release is not None:
        b.add_release("clamp", at=release, mode="separate")
    return b.build()


STAGE_Q0 = np.array([0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0])
STAGE_V0 = np.array([0.0, 0.0, 0.0, 0.4, 0.0, 2.0, 5.0])       # 0.4 m/s across, 2 m/s up, the payload at 5 rad/s


def stage_momentum(res):
    """(total mass, linear momentum (n, 3)) at each output row, each in the model of its row's structure (the first
    of the two rows at a separation in the structure before it)."""
    P, M = np.zeros((len(res.t), 3)), np.zeros(len(res.t))
    for k, t in enumerate(res.t):
        before = k + 1 < len(res.t) and res.t[k + 1] == t
        model = [s for s in res.structures if s["t"] <= t][-2 if before else -1]["model"]
        qc = [res.q_names.index(n) for n in model.coordinate_names()]
        vc = [res.v_names.index(n) for n in model.velocity_names()]
        M[k], _, P[k] = mb.center_of_mass(model, res.q[k, qc], res.v[k, vc])
    return M, P


@pytest.fixture(scope="module")
def separated():
    return mb.simulate(stage(), STAGE_Q0, STAGE_V0, 1.5, h=1e-3, contact="stepping", output_every=1)


def test_a_stage_separates_in_a_stepping_run(separated):
    """The clamp separates at t = 0.3 in flight (on the grid); the booster lands on the floor at t ≈ 0.555 and slides
    to rest while the payload flies on. Up to the release the run is the stepping run of the model without it, after
    it the stepping run of the separated model (the structure the switching wing makes, ``restructure``) from the
    row after the release, bit for bit, floor contacts included. Before the booster reaches the floor, the bodies'
    positions differ from the run across switches (DOP853, exact on these parabolas but for round-off) by
    semi-implicit Euler's exact error on a parabola, −½ g h t in z (z_n = z₀ + v₀ t − ½ g t² − ½ g h t), to
    1e-12. Linear momentum balances across the separation and the floor's impulses: P(t) = P(0) + M g t + h Σ F
    over the steps' contact forces, to the round-off of 1500 steps (n · 8 ε max|P|)."""
    res, h = separated, 1e-3
    assert [e["kind"] for e in res.events] == ["release"] and len(res.structures) == 2
    assert res.info["structures"] == [{"t": 0.0, "nq": 8, "nv": 7}, {"t": 0.3, "nq": 14, "nv": 12}]
    n1 = int(np.flatnonzero(res.t == 0.3)[0]) + 1                      # the rows of the first structure
    assert res.t[n1] == 0.3 and np.all(np.isnan(res.q[:n1, 8:])) and np.all(np.isnan(res.q[n1:, 7]))
    whole = mb.simulate(stage(None), STAGE_Q0, STAGE_V0, 0.3, h=h, contact="stepping", output_every=1)
    np.testing.assert_array_equal(res.q[:n1, :8], whole.q)
    np.testing.assert_array_equal(res.v[:n1, :7], whole.v)
    new = res.structures[1]["model"]
    qc = [res.q_names.index(n) for n in new.coordinate_names()]
    vc = [res.v_names.index(n) for n in new.velocity_names()]
    after = mb.simulate(new, res.q[n1, qc], res.v[n1, vc], 1.5, t0=0.3, h=h, contact="stepping", output_every=1)
    np.testing.assert_array_equal(res.q[n1:][:, qc], after.q)
    np.testing.assert_array_equal(res.v[n1:][:, vc], after.v)
    np.testing.assert_array_equal(res.contacts.normal_force[res.contacts.offsets[n1]:], after.contacts.normal_force)
    first_contact = res.t[np.flatnonzero(res.contacts.count)[0]]
    assert 0.5 < first_contact < 0.56 and abs(res.q[-1, 2] - 0.1) < 1e-3 and abs(res.v[-1, 3]) < 1e-9
    # against the run across switches, without contact, before the booster reaches the floor
    t_eval = np.arange(0.0, 0.5001, 0.01)
    switching = mb.simulate(stage(floor=False), STAGE_Q0, STAGE_V0, 0.5, t_eval=t_eval)
    for t in t_eval:
        k, j = (np.flatnonzero(np.abs(r.t - t) < 1e-12)[-1] for r in (res, switching))
        for cols in ([[0, 1, 2], [8, 9, 10]] if t >= 0.3 else [[0, 1, 2]]):     # the booster's, the payload's
            d = res.q[k, cols] - switching.q[j, cols]
            np.testing.assert_allclose(d, [0.0, 0.0, -0.5 * G * h * res.t[k]], rtol=0, atol=1e-12)
    # the momentum balance
    M, P = stage_momentum(res)
    steps = np.concatenate([[False], np.diff(res.t) > 0])             # each step once (not the release's second row)
    impulses = np.cumsum(np.where(steps[:, None], res.contacts.total_force(), 0.0), axis=0) * h
    expected = P[0] + np.outer(res.t, [0.0, 0.0, -G]) * M[0] + impulses
    assert np.all(M == 2.5) and impulses[-1, 2] > 20.0               # the floor took the booster's fall
    np.testing.assert_allclose(P, expected, rtol=0, atol=len(res.t) * 8 * EPS * np.abs(P).max())


@njit
def _no_torque(t, q, v, out):
    out[:] = 0.0


def test_a_stage_separates_within_a_step(tmp_path, monkeypatch):
    """A release between grid times (t = 0.3004) splits its step: two rows at the release, the grid again after it,
    the momentum P(0) + M g t to round-off at every row; a checkpointed run resumed after the separation (and after
    the booster's landing) is the whole run bit for bit. Refused in one line each: a batch (one structure per
    batch), the implicit compliant model, a compiled torque law (it reads q, v by position)."""
    model = stage(0.3004)
    res = mb.simulate(model, STAGE_Q0, STAGE_V0, 0.4, h=1e-3, contact="stepping", output_every=1)
    k = np.flatnonzero(res.t == 0.3004)
    assert len(k) == 2 and res.t[k[0] - 1] == 0.3 and abs(res.t[k[1] + 1] - 0.301) < 1e-15
    M, P = stage_momentum(res)
    np.testing.assert_allclose(P, P[0] + np.outer(res.t, [0.0, 0.0, -G]) * 2.5, rtol=0,
                               atol=len(res.t) * 8 * EPS * np.abs(P).max())
    path, middle = str(tmp_path / "run.ckpt"), str(tmp_path / "middle.ckpt")
    copy_at(monkeypatch, middle, lambda t, step: t >= 0.6)
    done = mb.simulate(model, STAGE_Q0, STAGE_V0, 1.0, h=1e-3, contact="stepping", output_every=10,
                       checkpoint=path, every=0.1)
    again = mb.resume(middle)
    assert 0.6 <= again.info["resumed_from"] < 0.7 and len(again.structures) == 2    # (the first after t = 0.6)
    np.testing.assert_array_equal(again.q, done.q)
    np.testing.assert_array_equal(again.v, done.v)
    np.testing.assert_array_equal(again.contacts.normal_force, done.contacts.normal_force)
    with pytest.raises(ModelError, match="joint 'clamp' separates.*simulate_batch runs one structure"):
        mb.simulate_batch(model, np.tile(STAGE_Q0, (2, 1)), np.tile(STAGE_V0, (2, 1)), 0.1, h=1e-3,
                          contact="stepping")
    with pytest.raises(ModelError, match="joint 'clamp' separates.*contact='compliant' runs one structure"):
        mb.simulate(model, STAGE_Q0, STAGE_V0, 0.1, h=1e-3, contact="compliant", implicit=True)
    with pytest.raises(ModelError, match="'clamp' cannot separate with a compiled torque law") as err:
        mb.simulate(model, STAGE_Q0, STAGE_V0, 0.1, h=1e-3, contact="stepping", tau=_no_torque)
    assert err.value.element == "tau"


# ---- Solo12: stops, controllers, laws, checkpoints, events, batches -------------------------------------------------
pytestmark_solo = pytest.mark.skipif(solo12_path() is None, reason="example-robot-data is not installed")


@pytest.fixture(scope="module")
def solo():
    urdf, _ = solo12_path()
    model = mb.load_model(str(urdf), floating_base=True)       # its URDF limits become stops
    model = model.with_collisions([("floor", "ground", mb.HalfSpace(), None, 1.0)],
                                  spheres={f: FOOT_RADIUS for f in FEET}, friction=1.0, keep=False)
    return model


@pytest.fixture(scope="module")
def posture(solo):
    return solo.with_controllers({"hold": mb.JointPD(KP, KD, target=Q_REF, gravity_compensation=False)})


@pytest.fixture(scope="module")
def standing(posture):
    q0 = standing_state(posture)
    return q0, mb.simulate(posture, q0, None, 5.0, h=1e-3, contact="stepping", n_out=51)


@pytestmark_solo
def test_solo12_stands_with_stops_and_a_posture_controller(posture, standing):
    from multibody.bench.contact import solo12_mujoco_standing, summary

    q0, res = standing
    assert len(posture.unilateral.limits) == 12
    ours = summary(posture, res.t, res.q, res.contacts.distance, 0.0)
    assert ours["slide"] < 1e-3 and res.contacts.count[-1] == 4
    pytest.importorskip("mujoco")
    theirs = solo12_mujoco_standing(5.0, 1e-3, posture)
    assert abs(theirs["base_height"] - ours["base_height"]) < 5e-3


@pytestmark_solo
def test_solo12_far_stops_and_laws_change_nothing(solo, posture, standing):
    q0, res = standing
    short = dict(h=1e-3, contact="stepping", n_out=11)
    free = mb.io.load_urdf(solo12_path()[0], floating_base=True, limits=False).with_collisions(
        [("floor", "ground", mb.HalfSpace(), None, 1.0)], spheres={f: FOOT_RADIUS for f in FEET}, friction=1.0,
        keep=False)
    a = mb.simulate(solo, q0, None, 0.5, tau=posture_law, **short)       # stops far from the motion: no rows
    b = mb.simulate(free, q0, None, 0.5, tau=posture_law, **short)
    np.testing.assert_array_equal(a.q, b.q)

    def python_law(t, q, v):
        out = np.zeros(18)
        out[6:] = KP * (Q_REF - q[7:]) - KD * v[6:]
        return out

    c = mb.simulate(free, q0, None, 0.05, tau=python_law, h=1e-3, contact="stepping")
    d = mb.simulate(free, q0, None, 0.05, tau=posture_law, h=1e-3, contact="stepping")
    np.testing.assert_array_equal(c.q, d.q)
    assert c.info["path"] == "compiled" and d.info["path"] == "compiled" and c.info["torque_callback"]


@pytestmark_solo
def test_solo12_checkpoint_resumes_bit_for_bit(posture, standing, tmp_path, monkeypatch):
    q0, full = standing
    path, middle = str(tmp_path / "run.ckpt"), str(tmp_path / "middle.ckpt")
    copy_at(monkeypatch, middle, lambda t, step: t >= 2.5)
    done = mb.simulate(posture, q0, None, 5.0, h=1e-3, contact="stepping", n_out=51, checkpoint=path, every=0.5)
    np.testing.assert_array_equal(done.q, full.q)
    again = mb.resume(middle)
    assert again.info["resumed_from"] == pytest.approx(2.5)
    np.testing.assert_array_equal(again.q, full.q)
    np.testing.assert_array_equal(again.v, full.v)
    np.testing.assert_array_equal(again.contacts.normal_force, full.contacts.normal_force)
    assert os.path.exists(path)


@pytestmark_solo
def test_solo12_events(posture, standing):
    """A terminal event that is never reached changes nothing (bit for bit), as a numba function (evaluated in the
    compiled loop) or in Python; one that is reached ends the run at the step after its sign change."""
    from numba import njit

    q0, full = standing

    def fallen(t, q, v):
        return q[2] - 0.15
    fallen_jit = njit(fallen)
    for g in (fallen, fallen_jit):
        g.terminal = True
        res = mb.simulate(posture, q0, None, 5.0, h=1e-3, contact="stepping", n_out=51, events=[g])
        np.testing.assert_array_equal(res.q, full.q)
        assert res.info["t_events"] == [[]] and res.info["status"] == "success"

    def low(t, q, v):                                   # the base settles below its start: reached
        return q[2] - (q0[2] - 1e-3)
    low_jit = njit(low)
    for g in (low, low_jit):
        g.terminal = True
        res = mb.simulate(posture, q0, None, 5.0, h=1e-3, contact="stepping", n_out=51, events=[g])
        assert res.info["status"] == "event" and len(res.info["t_events"][0]) == 1
        te = res.info["t_events"][0][0]
        assert res.t[-1] == pytest.approx(te, abs=1e-3) and res.q[-1, 2] <= q0[2] - 1e-3
        assert res.t[-2] < res.t[-1] and np.array_equal(res.q[:-1], full.q[:len(res.t) - 1])


@pytestmark_solo
def test_solo12_batch_equals_single_runs(posture):
    q0 = standing_state(posture)
    Q0 = np.tile(q0, (3, 1))
    Q0[:, 2] += [0.0, 0.01, 0.02]                        # drop heights
    batch = mb.simulate_batch(posture, Q0, None, 0.3, h=1e-3, contact="stepping", n_out=7)
    assert batch.info["path"].startswith("compiled stepping")
    for b in range(3):
        single = mb.simulate(posture, Q0[b], None, 0.3, h=1e-3, contact="stepping", n_out=7)
        np.testing.assert_array_equal(batch.q[b], single.q)
        np.testing.assert_array_equal(batch[b].contacts.normal_force, single.contacts.normal_force)


# ---- loops with contact: the Jansen walker ------------------------------------------------------------------------
def test_jansen_walker_advances_its_stance_strokes():
    from multibody.systems import jansen

    model = jansen.walker(turns=2.0)
    q0 = jansen.initial_state(model)
    feet = [("floor", c.name) for c in model.collisions if c.name != "floor"]
    res = mb.simulate(model, q0, None, 8.6, h=1e-3, contact="stepping", output_every=10, contact_pairs=feet)
    theta = jansen.crank_angle(model, res.q)
    x = np.interp([2 * math.pi, 4 * math.pi], theta, res.q[:, 0])    # the second turn, after the start
    assert (x[1] - x[0]) == pytest.approx(jansen.advance_per_turn(), rel=0.02)
    assert res.info["solves"]["step"]["unconverged"] == 0      # (tests/test_row_problems.py: its feet side by side)
    # the loops stay closed: each step corrects the residual of the last, which leaves the second-order term of a
    # step, ½ h² |ω|² L (joint rates ω, links up to 0.66 m)
    position = max(np.abs(r).max() for name, r in res.residuals.items() if name != "velocity")
    assert position < 0.5 * 1e-3 ** 2 * np.abs(res.v).max() ** 2 * 0.66



# ---- a gripper: two fingers of one closed-loop mechanism hold a box by friction -----------------------------------
def gripper(mu=0.8, box_mass=0.2, r=0.03, link=0.08, phi0=0.6, kp=4.0):
    """A crank on the ground turns about y; two links from its pins (±r) drive two fingers on prismatic joints along
    x, each link closed onto its finger by a cut hinge (two slider-cranks on one crank: one loop mechanism, both
    fingers move together). Each finger carries a pad of two balls 0.1 m below its joint; a box hangs between the
    pads, 0.5 mm from each at q = 0. A JointPD holds the crank 0.1 rad past closing: the pads squeeze the box."""
    half = 0.03
    b = mb.ModelBuilder()
    y = (0.0, -1.0, 0.0)
    c, s = math.cos(phi0), math.sin(phi0)
    x0 = r * c + math.sqrt(link ** 2 - (r * s) ** 2)          # the fingers' joints at ±x0 (closed form)
    b.add_body("crank", 0.05, inertia=np.eye(3) * 1e-5)
    b.add_joint("crank", mb.Revolute(axis=y), "ground", "crank")
    for side, sign in (("right", 1.0), ("left", -1.0)):
        pin = np.array([sign * r * c, 0.0, sign * r * s])
        b.add_body(f"{side}.link", 0.02, inertia=np.eye(3) * 1e-6)
        b.add_body(f"{side}.finger", 0.1, com=(0, 0, -0.05), inertia=np.eye(3) * 1e-4)
        b.add_joint(f"{side}.pin", mb.Revolute(axis=y), "crank", f"{side}.link", mb.Placement(translation=pin))
        b.add_joint(f"{side}.slide", mb.Prismatic(axis=(1.0, 0, 0)), "ground", f"{side}.finger",
                    mb.Placement(translation=(sign * x0, 0, 0)))
        b.add_joint(f"{side}.wrist", mb.Revolute(axis=y), f"{side}.link", f"{side}.finger",
                    mb.Placement(translation=(sign * x0, 0, 0) - pin), mb.Placement(), cut=True)
        for k, dz in enumerate((-0.01, 0.01)):               # two balls per pad, 0.5 mm off the box's side
            b.add_collision(f"{side}.pad{k}", f"{side}.finger", mb.Sphere(0.005),
                            mb.Placement(translation=(-sign * (x0 - half - 0.0055), 0, -0.1 + dz)), friction=mu)
    b.add_body("box", box_mass, inertia=np.eye(3) * box_mass * (2 * half) ** 2 / 6)
    b.add_joint("box", mb.Free(), "ground", "box")
    b.add_collision("box", "box", mb.Box((2 * half, 2 * half, 2 * half)), friction=mu)
    b.add_controller("squeeze", mb.JointPD(kp, 0.05, target=[0.1], gravity_compensation=False, joints=["crank"]))
    model = b.build()
    q0 = model.neutral()
    q0[model.joint("box").q_slice.start + 2] = -0.1
    return model, q0


def test_gripper_holds_a_box_by_friction():
    model, q0 = gripper()
    pads = [(c.name, "box") for c in model.collisions if ".pad" in c.name]
    res = mb.simulate(model, q0, None, 2.5, h=1e-3, contact="stepping", output_every=10, contact_pairs=pads)
    z = res.q[:, model.joint("box").q_slice.start + 2]
    held = res.t >= 0.5
    assert np.ptp(z[held]) < 1e-3                         # no slip over 2 s
    assert res.contacts.count[-1] == 4
    # friction carries the weight: the pads' vertical forces sum to m g
    assert abs(res.contacts.total_force()[-1, 2]) == pytest.approx(0.2 * G, rel=1e-6)
    assert res.info["solves"]["step"]["unconverged"] == 0      # (tests/test_row_problems.py: its first squeeze)


# ---- runs across switches: a separation with a controller ---------------------------------------------------------
def upper_stage(free=False):
    """The upper stage and its gimballed nozzle (a JointPD steering it to 0.2 rad) on a lower stage (a Fixed adapter
    released at t = 0.5), or flying alone (``free``)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, 0.0), name="stages")
    if not free:
        b.add_body("stage1", mass=120.0, com=(0.0, 0.0, -1.0), inertia=np.diag([40.0, 40.0, 9.0]))
        b.add_joint("flight", mb.Free(), "ground", "stage1")
    b.add_body("stage2", mass=45.0, com=(0.0, 0.01, 0.7), inertia=np.diag([7.0, 8.0, 3.0]))
    b.add_body("nozzle", mass=5.0, com=(0.0, 0.0, -0.2), inertia=np.diag([0.3, 0.3, 0.1]))
    if free:
        b.add_joint("adapter", mb.Free(), "ground", "stage2")
    else:
        b.add_joint("adapter", mb.Fixed(), "stage1", "stage2", placement=mb.Placement(translation=(0.05, 0, 0.4)),
                    release=0.5)
    b.add_joint("gimbal", mb.Revolute(axis=(1.0, 0, 0)), "stage2", "nozzle", placement=mb.Placement(
        translation=(0.0, 0.0, 0.1)))
    b.add_controller("steer", mb.JointPD(40.0, 8.0, target=[0.2], gravity_compensation=False, joints=["gimbal"]))
    return b.build()


def test_stage_separation_with_a_controller_on_the_upper_stage():
    """The controller acts on the upper stage before and after the separation (it carries across by joint name):
    after it, the upper stage moves as the upper stage flying alone from the state at the separation, with the same
    controller — to DOP853's error: rtol 1e-12 of positions of about 10 m, over about 100 steps, 1e-10 (measured
    7e-14)."""
    model = upper_stage()
    v0 = np.array([0.3, -0.2, 1.5, 2.0, 0.5, 10.0, 0.0])
    res = mb.simulate(model, model.neutral(), v0, 1.5, method="DOP853", rtol=1e-12, atol=1e-14)
    assert [e["kind"] for e in res.events] == ["release"]
    after = res.structures[1]["model"]
    assert [c.name for c in after.controllers] == ["steer"] and res.info["controllers"] == ["steer"]
    k = int(np.flatnonzero(res.t == 0.5)[-1])            # the row just after the separation
    alone = upper_stage(free=True)
    qn, vn = res.q_names, res.v_names
    q1 = np.array([res.q[k, qn.index(n)] for n in alone.coordinate_names()])
    v1 = np.array([res.v[k, vn.index(n)] for n in alone.velocity_names()])
    ref = mb.simulate(alone, q1, v1, 1.5, t0=0.5, method="DOP853", rtol=1e-12, atol=1e-14, t_eval=[1.5])
    end = np.array([res.q[-1, qn.index(n)] for n in alone.coordinate_names()])
    np.testing.assert_allclose(end, ref.q[-1], rtol=0, atol=1e-10)
    assert abs(res.q[-1, qn.index("gimbal.angle")] - 0.2) < 0.05      # steered towards its target


def test_a_loop_separates():
    """The four-bar of tests/test_switching_loops.py whose crank hinge A1 separates at t = 0.5: crank1 flies on,
    held by the loop's cut hinge alone (its rows made again on the new coordinates). No impulse at the release and
    no dissipation after it: the energy stays constant to DOP853's error (at most rtol per step, over the run's
    steps; measured 4e-12 over 131 steps); the loop stays closed (the projection after each step: round-off,
    measured 7e-16)."""
    from test_switching_loops import four_bar

    model, q0, v0 = four_bar(limits=None, release=0.5)
    res = mb.simulate(model, q0, v0, 1.5, method="DOP853", rtol=1e-11, atol=1e-13, formulation="constrained")
    assert [e["kind"] for e in res.events] == ["release"]
    assert [s["model"].nv for s in res.structures] == [3, 8]
    E = res.energy["kinetic"] + res.energy["potential"]
    assert np.max(np.abs(E - E[0])) < res.info["steps"] * 1e-11 * np.abs(E).max()
    position = max(np.nanmax(r) for name, r in res.residuals.items() if name != "velocity")
    assert position < 1e-12


# ---- a moving base, general joints -----------------------------------------------------------------------------------
def test_ball_on_a_shaken_floor():
    """A ball resting on a floor that the ground shakes up and down (BaseMotion.harmonic, amplitude A, ω, below
    g so the ball stays on it): the floor pushes it with N = m (g + a_base(t)) (its motion is the base's). The step's
    impulse over h is the mean force over the step, so it differs from N at the step's end by at most m A ω³ h."""
    A, w, m = 0.01, 20.0, 1.0
    b = mb.ModelBuilder(base_motion=mb.BaseMotion.harmonic((0, 0, 1), A, w))
    b.add_body("ball", mass=m, inertia=np.eye(3) * 0.004)
    b.add_joint("free", mb.Free(), "ground", "ball")
    b.add_collision("floor", "ground", mb.HalfSpace())
    b.add_collision("ball", "ball", mb.Sphere(0.1))
    model = b.build()
    q0 = model.neutral()
    q0[2] = 0.1
    h = 1e-3
    res = mb.simulate(model, q0, None, 0.5, h=h, contact="stepping", output_every=10)
    assert res.info["path"] == "compiled" and res.info["state_written"] == "moving base"
    later = res.t > 0.05
    N = res.contacts.normal_force[res.contacts.offsets[:-1]][later]
    a_base = -A * w * w * np.cos(w * res.t[later])
    np.testing.assert_allclose(N, m * (G + a_base), rtol=0, atol=m * A * w ** 3 * h)
    assert np.all(np.abs(res.q[later, 2] - 0.1) < 1e-9)
    # a batch of drops onto the shaken floor: the runs step together through the chunks of the base's table (1024
    # steps; 2.5 s are three chunks), each equal to its single run
    Q0 = np.tile(q0, (3, 1))
    Q0[:, 2] += [0.0, 0.05, 0.1]
    batch = mb.simulate_batch(model, Q0, None, 2.5, h=h, contact="stepping", output_every=50)
    for b in range(3):
        single = mb.simulate(model, Q0[b], None, 2.5, h=h, contact="stepping", output_every=50)
        np.testing.assert_array_equal(batch.q[b], single.q)
        np.testing.assert_array_equal(batch[b].contacts.normal_force, single.contacts.normal_force)
    # a Python torque callback (zero), which the compiled loop calls at each step: the compiled run, bit for bit,
    # across the chunks of the table
    python = mb.simulate(model, Q0[2], None, 2.5, h=h, contact="stepping", output_every=50,
                         tau=lambda t, q, v: np.zeros(6))
    assert python.info["path"] == "compiled" and python.info["torque_callback"]
    np.testing.assert_array_equal(python.q, single.q)
    np.testing.assert_array_equal(python.contacts.normal_force, single.contacts.normal_force)


def test_general_joint_pendulum_on_the_floor():
    """A pendulum on a GeneralJoint (its rotation as a sympy matrix) swinging into the floor moves as the same
    pendulum on a Revolute, through the impact: the two kinematics differ by round-off (1e-12 over the run)."""
    import sympy as sp

    q = sp.Symbol("q")
    rotation = sp.Matrix([[sp.cos(q), 0, sp.sin(q)], [0, 1, 0], [-sp.sin(q), 0, sp.cos(q)]])
    runs = []
    for joint in (mb.Revolute(axis=(0, 1, 0)), mb.GeneralJoint([q], rotation=rotation)):
        b = mb.ModelBuilder()
        b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
        b.add_joint("hinge", joint, "ground", "rod", placement=mb.Placement(translation=(0, 0, 0.92)))
        b.add_collision("tip", "rod", mb.Sphere(0.05), mb.Placement(translation=(0, 0, -0.9)))
        b.add_collision("floor", "ground", mb.HalfSpace())
        model = b.build()
        runs.append(mb.simulate(model, [1.2], [0.0], 1.0, h=1e-3, contact="stepping"))
    assert runs[1].info["state_written"] == "general joints" and runs[1].info["path"] == "compiled"
    assert runs[0].contacts.count.max() == 1                     # the tip reaches the floor
    np.testing.assert_allclose(runs[1].q, runs[0].q, rtol=0, atol=1e-12)
    Q0 = np.array([[1.2], [0.8], [-0.6]])                        # a batch: each run its single run, bit for bit
    batch = mb.simulate_batch(model, Q0, None, 1.0, h=1e-3, contact="stepping", n_out=11)
    for k in range(3):
        np.testing.assert_array_equal(batch.q[k], mb.simulate(model, Q0[k], None, 1.0, h=1e-3, contact="stepping",
                                                              n_out=11).q)


@pytestmark_solo
def test_urdf_collisions_take_friction_and_restitution():
    model = mb.io.load_urdf(solo12_path()[0], floating_base=True, friction=0.6, restitution=0.3)
    assert model.collisions and all(c.friction == 0.6 and c.restitution == 0.3 for c in model.collisions)


def test_compliant_contact_with_a_controller():
    """The compliant model takes the model's controllers: with the floor out of reach the run is the tree
    formulation's run of the same controlled model, bit for bit (RK4: the same stages on [q, v]; the contact force
    is an exact zero)."""
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "rod")
    b.add_collision("tip", "rod", mb.Sphere(0.05), mb.Placement(translation=(0, 0, -1.0)))
    b.add_collision("floor", "ground", mb.HalfSpace(), mb.Placement(translation=(0, 0, -5.0)))
    b.add_controller("hold", mb.JointPD(20.0, 2.0, target=[0.3]))
    model = b.build()
    compliant = mb.simulate(model, [0.0], [0.0], 1.0, method="RK4", h=1e-3, contact="compliant")
    tree = mb.simulate(model, [0.0], [0.0], 1.0, method="RK4", h=1e-3)
    np.testing.assert_array_equal(compliant.q, tree.q)
    np.testing.assert_array_equal(compliant.v, tree.v)


def test_a_python_constraint_drives_a_box_on_the_floor():
    """A box resting on the floor, its x driven along 0.3 sin(2t) by a Python UserConstraint f(q, t) = 0 (rows
    evaluated before each step; the step corrects f and its time derivative: G v⁺ = −f/h − ∂f/∂t): x follows the
    drive to the scheme's O(h²) per step, the residual's second-order term ½ h² max|f̈| = ½ h² · 1.2; the box stays on
    the floor (the drive's force, friction μ m g plus m ẍ, stays below m g, which would tip it about an edge): its
    contacts carry its weight at every output, to the solver's tolerance (reached at every step: the reversal of the
    slide at t = π/4, where the box sticks on four corners, takes the row solver some 300 iterations)."""
    b = mb.ModelBuilder()
    b.add_body("box", mass=1.0, inertia=np.eye(3) * 0.01)
    b.add_joint("free", mb.Free(), "ground", "box")
    b.add_collision("box", "box", mb.Box((0.2, 0.2, 0.2)), friction=0.3)
    b.add_collision("floor", "ground", mb.HalfSpace(), friction=0.3)     # sliding, far from tipping: F < m g
    b.add_constraint(mb.UserConstraint("drive", lambda q, t: np.array([q[0] - 0.3 * np.sin(2.0 * t)])))
    model = b.build()
    q0 = model.neutral()
    q0[2] = 0.1
    v0 = np.zeros(6)
    v0[3] = 0.6                                            # on the drive's velocity at t = 0
    h = 1e-3
    res = mb.simulate(model, q0, v0, 1.0, h=h, contact="stepping", output_every=10, iterations=1000)
    assert res.info["path"] == "python" and res.info["solves"]["step"]["unconverged"] == 0
    batch = mb.simulate_batch(model, np.tile(q0, (2, 1)), np.stack([v0, 0.5 * v0]), 0.1, h=h, contact="stepping",
                              output_every=10, iterations=1000)      # each run through simulate (run by run)
    assert batch.info["path"] == "python, run by run" and batch.info["why"] == "Python constraints (drive)"
    first = res.t <= 0.1 + 1e-12
    np.testing.assert_array_equal(batch.q[0], res.q[first])
    single = mb.simulate(model, q0, 0.5 * v0, 0.1, h=h, contact="stepping", output_every=10, iterations=1000)
    np.testing.assert_array_equal(batch.q[1], single.q)
    np.testing.assert_array_equal(batch.contacts[1].total_force(), single.contacts.total_force())
    np.testing.assert_allclose(res.q[:, 0], 0.3 * np.sin(2.0 * res.t), rtol=0, atol=0.5 * h * h * 1.2 + 1e-12)
    np.testing.assert_allclose(res.contacts.total_force()[res.t > 0.1, 2], 9.81, rtol=1e-9)
    assert np.all(np.abs(res.q[:, 2] - 0.1) < 1e-12)
