"""The bundled model files (multibody/examples/*.yaml) against their Python twins in multibody.systems.

Each file is loaded and compared with the model built by the system's function: the same packed arrays bit for
bit (tests/io_models.same_model), the same initial state where the system defines one, and the same trajectory
over a short run with the file's own settings (the two runs do the same arithmetic, so they agree to round-off:
the tolerance is 100 eps times the magnitude of the state). The two examples whose efforts are expressions are
run against the Python callbacks they stand for (the spring-latched solar panel's HingeLatch, the arm's PD law
written in Python).
"""
import math

import numpy as np
import pytest

from io_models import same_model
from multibody import examples, simulate
from multibody.io import load
from multibody.systems import elastic, hoop_on_profile, iftomm, manipulators, pendulums, slider_crank, solar_panels

EPS = np.finfo(float).eps


def _arm_pd(t, q, v):
    """The PD laws of robot_arm.yaml, in Python."""
    return np.array([60 * (0.5 * math.sin(t) - q[0]) - 12 * v[0], 400 * (0.3 - q[1]) - 40 * v[1],
                     150 * (-0.6 + 0.2 * math.sin(2 * t) - q[2]) - 15 * v[2]])


def _hoop():
    m = hoop_on_profile.hoop_model()
    return m, *hoop_on_profile.initial_state(m, -0.9, 0.3)


def _solar(latches="exact"):
    p = solar_panels.SolarPanelParameters(latches=latches)
    return solar_panels.solar_panel(p), np.array(p.stowed), np.zeros(2)


#: example -> (twin: () -> (model, q0 or None, v0 or None), tau for the twin's run, short run's settings)
TWINS = {
    "simple_pendulum": (lambda: (pendulums.simple_pendulum(), None, None), None, dict(t_end=0.5)),
    "spherical_double_pendulum": (lambda: (pendulums.spatial_chain(2, "spherical"), None, None), None,
                                  dict(t_end=0.2)),
    "triple_pendulum": (lambda: (pendulums.triple_pendulum_seed001(), np.zeros(3), np.zeros(3)), None,
                        dict(t_end=0.5)),
    "slider_crank": (slider_crank.model, None, dict(t_end=0.02)),
    "four_bar": (lambda: iftomm.four_bar_model(1), None, dict(t_end=0.1)),
    "four_bar_stops": (lambda: iftomm.four_bar_model(1, stops=(-math.pi / 4, math.pi / 4), restitution=0.7), None,
                       {"t_end": 0.6}),   # through its first impact (t = 0.503)
    "andrews": (iftomm.andrews_model, None, dict(t_end=0.002)),
    "solar_panel": (_solar, None, dict(t_end=4.0, method="RK4", h=2e-3, n_out=None)),
    "solar_panel_spring_latch": (lambda: _solar("spring"), "model", dict(t_end=4.0, method="RK4", h=2e-3,
                                                                         n_out=None)),
    "robot_arm": (lambda: (manipulators.angular(), None, None), _arm_pd, dict(t_end=0.5, method="RK4", h=1e-3,
                                                                             n_out=None)),
    "hoop_on_profile": (_hoop, None, dict(t_end=0.05)),
    "flexible_pendulum": (lambda: (elastic.flexible_pendulum(16), None, None), None,
                          dict(t_end=0.1, n_out=None)),
}


def test_every_example_has_a_twin():
    assert sorted(TWINS) == examples.names()
    for name in examples.names():
        assert examples.description(name), name


@pytest.mark.parametrize("name", sorted(TWINS))
def test_example_file_is_its_python_twin(name):
    make, tau, run = TWINS[name]
    mf = load(examples.path(name))
    twin, q0, v0 = make()
    same_model(twin, mf.model, torque=tau is None)
    if q0 is not None:
        assert np.array_equal(mf.q0, q0) and np.array_equal(mf.v0, v0)
    settings = mf.settings(**run)
    ours = simulate(mf.model, mf.q0, mf.v0, **settings)
    theirs = simulate(twin, mf.q0, mf.v0, **settings, tau=None if tau in (None, "model") else tau)
    assert ours.info["status"] == theirs.info["status"] == "success"
    scale = max(1.0, np.abs(theirs.x).max())
    np.testing.assert_allclose(ours.x, theirs.x, rtol=0, atol=100 * EPS * scale)
    if name == "solar_panel_spring_latch":   # the run goes through the latches of both hinges (deployed angles 0)
        assert ours.q[:, 0].min() < 0 < ours.q[:, 1].max()
    if name == "solar_panel":   # both hinges lock at their deployed angles
        assert [e["kind"] for e in ours.events] == ["lock", "lock"] and np.all(ours.q[-1] == 0.0)
        assert ours.events == theirs.events
