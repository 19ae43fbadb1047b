"""simulate_batch of runs that call Python at every step (``integrate/run_by_run.py``): each run through
``simulate``, so run b equals the single run bit for bit; varied torques added to the law's output; a run that
fails keeps what it computed and does not stop the others; what cannot vary run by run is refused in one line."""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError
from multibody.systems.pendulums import simple_pendulum


@pytest.fixture(scope="module")
def pendulum():
    return simple_pendulum(length=1.0, mass=1.0, g=9.81)


def damping(t, q, v):
    return -0.3 * v


def test_a_python_law_runs_run_by_run_and_equals_the_single_runs(pendulum):
    Q0 = np.array([[0.2], [0.5], [1.0]])
    TAU = np.array([[0.0], [0.4], [-0.7]])
    batch = mb.simulate_batch(pendulum, Q0, None, 0.5, method="RK4", h=1e-3, n_out=6, tau=damping,
                              params={"tau": TAU})
    assert batch.info["path"] == "python, run by run" and batch.info["why"] == "a Python torque callback"
    assert batch.q.shape == (3, 6, 1) and list(batch.status) == ["success"] * 3 and list(batch.steps) == [500] * 3
    for b in range(3):
        single = mb.simulate(pendulum, Q0[b], [0.0], 0.5, method="RK4", h=1e-3, n_out=6,
                             tau=lambda t, q, v, c=TAU[b]: damping(t, q, v) + c)
        np.testing.assert_array_equal(batch.q[b], single.q)
        np.testing.assert_array_equal(batch.v[b], single.v)
        np.testing.assert_array_equal(batch.energy["total"][b], single.energy["total"])
        np.testing.assert_array_equal(batch[b].q, single.q)
    np.testing.assert_array_equal(batch.t, single.t)


def test_a_failing_run_keeps_what_it_computed_and_the_others_go_on(pendulum):
    def fault(t, q, v):
        if abs(v[0]) > 1.0:        # reached by the run from 1 rad only (near t = 0.1)
            raise RuntimeError("actuator fault")
        return np.zeros(1)

    batch = mb.simulate_batch(pendulum, np.array([[0.3], [1.0]]), None, 0.5, method="RK4", h=1e-3, n_out=6,
                              tau=fault)
    assert list(batch.status) == ["success", "failed"]
    assert np.all(np.isfinite(batch.q[0])) and np.isnan(batch.q[1, -1, 0]) and np.isfinite(batch.q[1, 0, 0])
    assert 0 < batch.steps[1] < 500


def test_a_python_law_with_contact_runs_each_stepping_run(pendulum):
    b = mb.ModelBuilder()
    b.add_body("ball", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_joint("free", mb.Free(), "ground", "ball")
    b.add_collision("ball", "ball", mb.Sphere(0.1), friction=0.5)
    b.add_collision("floor", "ground", mb.HalfSpace(), friction=0.5)
    model = b.build()
    Q0 = np.tile(model.neutral(), (2, 1))
    Q0[:, 2] = [0.1, 0.3]

    def push(t, q, v):
        tau = np.zeros(6)
        tau[3] = 0.5
        return tau

    batch = mb.simulate_batch(model, Q0, None, 0.4, h=1e-3, contact="stepping", tau=push, output_every=50)
    assert batch.info["path"] == "python, run by run" and batch.info["contact"] == "stepping"
    for r in range(2):
        single = mb.simulate(model, Q0[r], None, 0.4, h=1e-3, contact="stepping", tau=push, output_every=50)
        np.testing.assert_array_equal(batch.q[r], single.q)
        np.testing.assert_array_equal(batch.contacts[r].total_force(), single.contacts.total_force())


def test_what_cannot_vary_run_by_run_is_refused(pendulum):
    with pytest.raises(ModelError, match=r"params\['gravity'\] with a Python torque callback.*build a model per run"):
        mb.simulate_batch(pendulum, [[0.2]], None, 0.1, h=1e-3, tau=damping, params={"gravity": [[0.0, 0.0, -1.0]]})
    shape, numbers = r"must be \(runs, nv\) = \(1, 1\)", r"must be a \(1, 1\) array of real numbers"
    for bad, what in (([[0.0, 1.0]], shape), ("abc", numbers), ([[1j]], numbers), ([["x"]], numbers),
                      ([[np.nan]], "must be finite")):
        with pytest.raises(ModelError, match=r"params\['tau'\] " + what) as err:
            mb.simulate_batch(pendulum, [[0.2]], None, 0.1, h=1e-3, tau=damping, params={"tau": bad})
        assert err.value.element == "tau"
