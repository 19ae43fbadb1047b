"""Beams, cables and loads with the rest of the library (docs/validation.md, "Beams, cables and loads"): batches,
checkpoints, controllers, contact; and what the statics refuse in one line."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError


def _pendulum_with_load(n=6, **joint):
    """A flexible pendulum (pinned root) with a harmonic follower force at its tip."""
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("hub", 0.5, inertia=(0.01, 0.01, 0.01))
    b.add_joint("pin", mb.Revolute(axis=(0, 1, 0)), "ground", "hub", **joint)
    b.add_beam("rod", "hub", length=1.0, segments=n, EI=(2.0, None), GJ=None, mass_per_length=1.0)
    b.add_load("kick", "rod.tip", force=(0, 0, 1.0), reference="local", curve=mb.LoadCurve.harmonic(6.0))
    return b.build()


def test_batches_of_a_beam_with_loads_equal_single_runs():
    """simulate_batch (the per-run compiled loop: the SIMD lanes refuse loads, by name) gives each run of
    simulate bit for bit."""
    from multibody.kernels.lanes import lanes_supported

    model = _pendulum_with_load()
    assert lanes_supported(model) == "the model has loads"
    Q0 = np.zeros((3, model.nq))
    Q0[:, 0] = (0.0, 0.3, -0.4)
    batch = mb.simulate_batch(model, Q0, None, 0.5, method="RK4", h=1e-3, n_out=11)
    for k in range(3):
        single = mb.simulate(model, Q0[k], np.zeros(model.nv), 0.5, method="RK4", h=1e-3, n_out=11)
        assert np.array_equal(batch.q[k], single.q)


def test_a_checkpointed_beam_run_resumes_bit_for_bit(tmp_path):
    """A model file holds the beam and its load (io/writer.py), so a checkpoint does: resuming from the middle of a
    run ends where the uninterrupted run ends, bit for bit."""
    model = _pendulum_with_load()
    path = tmp_path / "run.ckpt"
    full = mb.simulate(model, model.neutral(), np.zeros(model.nv), 0.4, method="RK4", h=1e-3, n_out=9)
    mb.simulate(model, model.neutral(), np.zeros(model.nv), 0.4, method="RK4", h=1e-3, n_out=9, checkpoint=path,
                every=0.2)
    resumed = mb.resume(path)
    assert np.array_equal(resumed.q[-1], full.q[-1])


def test_a_controller_on_a_beams_root_acts_as_the_spring_it_equals():
    """A JointPD without gravity compensation at the root is the spring-damper kp, kd with rest at its target: the
    run with the controller equals the run with the joint spring-damper, to the integrators' tolerance."""
    spring = _pendulum_with_load(stiffness=5.0, damping=0.5, rest=0.2)
    pd = _pendulum_with_load().with_controllers(
        {"hold": mb.JointPD(kp=5.0, kd=0.5, target=[0.2], gravity_compensation=False, joints=["pin"])})
    a = mb.simulate(spring, spring.neutral(), np.zeros(spring.nv), 1.0, rtol=1e-10, atol=1e-12, n_out=5)
    b = mb.simulate(pd, pd.neutral(), np.zeros(pd.nv), 1.0, rtol=1e-10, atol=1e-12, n_out=5)
    assert b.q[-1] == pytest.approx(a.q[-1], abs=1e-8)
    assert abs(a.q[-1][0]) > 0.05


def _landed_tip(load):
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_beam("pendulum", "ground", length=2.0, segments=6, EI=(1.0, None), GJ=None, mass_per_length=1.0,
               root=mb.Revolute(axis=(0, 1, 0)))
    if load:
        b.add_load("press", "pendulum.tip", force=(0, 0, -load))
    floor = mb.Placement(translation=(0, 0, -0.5))
    model = b.build().with_collisions([("floor", "ground", mb.HalfSpace(), floor, 1.0)],
                                      spheres={"pendulum.tip": 0.05})
    run = mb.simulate(model, model.neutral(), np.zeros(model.nv), 3.0, contact="compliant", rtol=1e-6, atol=1e-8,
                      n_out=31)
    assert len(run.contacts.at(len(run.t) - 1)["point"]) >= 1
    return mb.frame_placement(model, run.q[-1], "pendulum.tip")[1][2]


def test_a_beam_lands_on_the_ground_with_contact():
    """A flexible pendulum with a sphere at its tip falls onto a floor (the compliant contact model): the tip comes
    to rest on it, the sphere's penetration a fraction of its radius; a load pressing the tip down (in the contact
    model's right-hand side) presses it deeper."""
    free, pressed = _landed_tip(0.0), _landed_tip(20.0)
    assert -0.5 + 0.05 - 0.01 < free < -0.5 + 0.05 + 0.01
    assert pressed < free - 1e-4


def test_statics_refuse_what_they_do_not_hold():
    """Controllers and a torque callback are forces the statics do not form; an equilibrium beyond a joint stop is
    not one: each refused in one line naming it."""
    pd = _pendulum_with_load().with_controllers({"hold": mb.JointPD(kp=5.0, kd=0.5, target=[0.0], joints=["pin"])})
    with pytest.raises(ModelError, match=r"controller 'hold'") as err:
        mb.static_equilibrium(pd, pd.neutral())
    assert "\n" not in str(err.value)
    with pytest.raises(ModelError, match=r"controller 'hold'"):
        mb.modes(pd, pd.neutral(), check=False)
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_beam("rod", "ground", length=1.0, segments=4, EI=(0.5, None), GJ=None, mass_per_length=1.0)
    b.set_torque(lambda t, q, v: np.zeros(4))
    with pytest.raises(ModelError, match=r"torque callback"):
        mb.static_equilibrium(b.build(), np.zeros(4))
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("bob", 1.0, com=(0.5, 0, 0), inertia=(0.01, 0.01, 0.01))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", stiffness=1.0, limits=(-0.5, 0.5))
    with pytest.raises(ModelError, match=r"coordinate 'hinge.angle' .* beyond its stop 0.5"):
        mb.static_equilibrium(b.build(), np.zeros(1))
