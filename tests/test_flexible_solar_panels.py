"""The flexible two-leaf solar panel (seed 001 §3.2.1 with beam leaves, ``systems/flexible_solar_panels.py``): it
deploys as the rigid panel does, both hinges latch, and the locked array then vibrates at the frequencies
``mb.modes`` predicts for the deployed array."""
import math

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError
from multibody.systems import flexible_solar_panels as fsp
from multibody.systems import solar_panels as sp


@pytest.fixture(scope="module")
def deployment():
    return fsp.deploy(t_end=6.0)


def _crossing_frequency(t, x):
    """ω from the zero crossings of x (linear interpolation between samples): π (crossings − 1) / their span."""
    s = np.sign(x)
    k = np.flatnonzero(s[1:] * s[:-1] < 0)
    tc = t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])
    return math.pi * (len(tc) - 1) / (tc[-1] - tc[0]), len(tc)


def test_it_latches_as_the_rigid_panel_does(deployment):
    """Hinge 2 locks first, then hinge 1, within 1 % of the rigid panel's lock times (the leaves have its mass and,
    to (t/L)² = 0.1 %, its inertia; their bending changes the motion by little)."""
    locks = [(e["element"], e["t"]) for e in deployment.events if e["kind"] == "lock"]
    rigid = [(e["element"], e["t"]) for e in sp.deploy(t_end=4.0, n_out=401).events if e["kind"] == "lock"]
    assert [name for name, _ in locks] == [name for name, _ in rigid] == ["hinge2", "hinge1"]
    for (_, t), (_, tr) in zip(locks, rigid):
        assert t == pytest.approx(tr, rel=0.01)
    model = deployment.model
    final = deployment.q[-1]
    for k in (1, 2):
        assert final[model.joint(f"hinge{k}").q_slice][0] == pytest.approx(0.0, abs=1e-9)


def test_it_vibrates_at_the_deployed_arrays_frequencies(deployment):
    """After the last lock each modal coordinate of the deployed array (η = Φᵀ M q_bend) oscillates at its ω from
    mb.modes: the first two within 1e-3 (the damping shifts ω by ζ²/2 < 2e-5, the amplitudes — a few mrad — by
    O(θ²) ≈ 1e-5; the bound leaves room for the crossings' interpolation on the 5 ms output grid)."""
    _, modes = fsp.deployed_modes(count=3)
    assert np.all(np.diff(modes.omega) > 0) and modes.damping_ratios == pytest.approx(2e-4 * modes.omega / 2)
    t, eta = fsp.modal_coordinates(deployment)
    assert np.abs(eta[:, 0]).max() > 1e-3                   # the lock excited the first mode
    for k in (0, 1):
        omega, crossings = _crossing_frequency(t, eta[:, k])
        assert crossings >= 6
        assert omega == pytest.approx(modes.omega[k], rel=1e-3)


def test_parameters_are_checked():
    with pytest.raises(ModelError, match="EI must be a finite stiffness > 0"):
        fsp.FlexiblePanelParameters(EI=0.0)
    with pytest.raises(ModelError, match="latches must be 'exact' or 'none'"):
        fsp.FlexiblePanelParameters(panel=sp.SolarPanelParameters(latches="spring"))
    model = fsp.flexible_solar_panel(fsp.FlexiblePanelParameters(segments=4))
    assert model.nv == 2 + 2 * 4 and mb.modes(model, model.neutral(), check=False).omega.shape == (10,)
