"""Solo12 (example-robot-data) standing on the ground under a joint PD posture law, with a sphere at each of its
four foot frames (issue 26; the model, the law and MuJoCo's twin are in multibody/bench/contact.py).

* the time-stepping model holds it at h = 1 ms and 2 ms without tuning: the feet slide less than 1 mm over 5 s
  (the issue's bound) and the base settles — its height changes by less than 1e-6 m over the last second (the
  standing equilibrium of the discrete scheme is exact: resting contacts have zero velocity) — with the spheres
  on the floor (penetration below 1e-9 m: the gap condition keeps it at round-off);
* MuJoCo, compiled from the same URDF with the same spheres, floor and law, gives a base height within 5 mm (the
  issue's bound; its soft contacts sink about 1.9 mm).

Speed is not tested (no test depends on time): ``multibody bench --only contact`` prints it against MuJoCo.
"""
import numpy as np
import pytest

from multibody.bench.contact import (solo12_model, solo12_mujoco_standing, solo12_path, solo12_standing)

pytestmark = pytest.mark.skipif(solo12_path() is None, reason="example-robot-data is not installed")


@pytest.fixture(scope="module")
def model():
    return solo12_model()


@pytest.fixture(scope="module")
def ours(model):
    return {h: solo12_standing(5.0, h, model) for h in (1e-3, 2e-3)}


@pytest.mark.parametrize("h", [1e-3, 2e-3])
def test_solo12_stands(model, ours, h):
    res, summary = ours[h]
    assert summary["slide"] < 1e-3
    last = res.t >= res.t[-1] - 1.0
    assert np.ptp(res.q[last, 2]) < 1e-6
    assert np.max(np.abs(res.v[-1])) < 1e-6
    assert summary["penetration"] < 1e-9
    assert res.contacts.count[-1] == 4
    # the four feet carry the robot's weight
    assert res.contacts.total_force()[-1, 2] == pytest.approx(9.81 * sum(b.mass for b in model.bodies), rel=1e-6)
    assert set(p[1] for p in res.contacts.pairs) == {"FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"}


def test_solo12_matches_mujoco(model, ours):
    pytest.importorskip("mujoco")
    theirs = solo12_mujoco_standing(5.0, 1e-3, model)
    assert abs(theirs["base_height"] - ours[1e-3][1]["base_height"]) < 5e-3
