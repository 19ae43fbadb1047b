"""Reduced models (``model.reduced``, ``multibody.model.reduction``; issue 35).

A locked joint is a joint whose coordinates stay at their values with zero velocity and acceleration, so on random
trees of every joint type (bodies' frames differing from the kernels') the reduced model's quantities are the full
model's with the locked coordinates held: M is the full M's block of the coordinates kept, RNEA the full RNEA's kept
entries at zero locked velocity and acceleration, and every frame's placement and Jacobian (its kept columns) the
same — products of the same numbers, so to round-off (1e-12 relative). Against Pinocchio's ``buildReducedModel`` on
the Panda with its fingers locked (a 7-DoF arm): M and RNEA to 1e-12 relative.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.bench.dynamics import random_rotation, random_tree_builder
from multibody.bench.robots import robots_folder
from multibody.errors import ModelError

ROOT = robots_folder()


def _close(x, y, rel=1e-12):
    np.testing.assert_allclose(x, y, rtol=0, atol=rel * max(1.0, np.abs(y).max(initial=0.0)))


@given(n=st.integers(2, 7), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=15, deadline=None, derandomize=True, database=None)
def test_a_locked_joint_is_a_joint_held_still(n, seed):
    rng = np.random.default_rng(seed)
    b, _ = random_tree_builder(n, rng, child_placements=0.5)
    for k in range(n):
        b.add_frame(f"frame{k + 1}", f"body{k + 1}", mb.Placement(random_rotation(rng), rng.uniform(-1, 1, 3)))
    model = b.build()
    q = model.random_configuration(rng)
    chosen = [j for j in model.joints[1:] if j.joint.nq and rng.random() < 0.5] or [model.joints[1]]
    locked = {j.name: q[j.q_slice] for j in chosen}
    small = model.reduced(locked=locked)
    keep_v = np.ones(model.nv, dtype=bool)
    keep_q = np.ones(model.nq, dtype=bool)
    for j in chosen:
        keep_v[j.v_slice] = False
        keep_q[j.q_slice] = False
    assert small.nv == keep_v.sum() and small.nq == keep_q.sum()
    assert small.frame_names == model.frame_names and small.collisions == model.collisions
    qr = q[keep_q]
    v, a = np.where(keep_v, rng.uniform(-2, 2, model.nv), 0.0), np.where(keep_v, rng.uniform(-2, 2, model.nv), 0.0)
    _close(mb.crba(small, qr), mb.crba(model, q)[np.ix_(keep_v, keep_v)])
    _close(mb.rnea(small, qr, v[keep_v], a[keep_v]), mb.rnea(model, q, v, a)[keep_v])
    R, p = mb.frame_placements(model, q)
    Rr, pr = mb.frame_placements(small, qr)
    _close(Rr, R)
    _close(pr, p)
    _close(mb.frame_jacobians(small, qr, reference="world"), mb.frame_jacobians(model, q, reference="world")[:, :, keep_v])
    # the reduced configuration maps back: the neutral of the reduced model, locked values in place
    assert np.array_equal(small.neutral(), model.neutral()[keep_q])


def test_limits_controllers_and_refusals():
    b = mb.ModelBuilder()
    for k in (1, 2, 3):
        b.add_body(f"link{k}", mass=1.0, com=(0.5, 0, 0), inertia=np.diag([0.01, 0.1, 0.1]))
    b.add_joint("j1", mb.Revolute(axis=(0, 0, 1)), "ground", "link1", limits=(-1.0, 1.0), damping=0.3)
    b.add_joint("j2", mb.Revolute(axis=(0, 1, 0)), "link1", "link2", placement=mb.Placement(translation=(1, 0, 0)),
                limits=(-2.0, 2.0), damping=0.5)
    b.add_joint("j3", mb.Prismatic(axis=(1, 0, 0)), "link2", "link3", limits=(0.0, 0.2), release=3.0)
    b.add_controller("hold", mb.JointPD(kp=10.0, kd=1.0, target=0.0, joints=["j1"]))
    model = b.build()
    small = model.reduced(locked={"j2": 0.4})
    assert small.nq == 2 and small.lower_limits.tolist() == [-1.0, 0.0] and small.upper_limits.tolist() == [1.0, 0.2]
    assert small.dof_damping.tolist() == [0.3, 0.0]
    assert small.controllers[0].iv == (0,) and small.metadata["reduced"] == {"j2": (0.4,)}
    with pytest.raises(ModelError, match="joint 'j3' has a release"):
        model.reduced(locked={"j3": 0.1})
    with pytest.raises(ModelError, match="controller 'hold' acts on joint 'j1', which is locked"):
        model.reduced(locked={"j1": 0.1})
    with pytest.raises(ModelError, match="has no joint 'elbow'"):
        model.reduced(locked={"elbow": 0.1})
    with pytest.raises(ModelError, match="the value of joint 'j2' must be 1 number"):
        model.reduced(locked={"j2": [0.1, 0.2]})
    assert model.reduced(locked=["j2"]).joints[2].joint == mb.Fixed()


@pytest.mark.skipif(ROOT is None, reason="example-robot-data is not installed")
def test_panda_as_a_seven_dof_arm_equals_pinocchio():
    pin = pytest.importorskip("pinocchio")
    path = str(ROOT / "panda_description/urdf/panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.io.load_urdf(path)
        pm = pin.buildModelFromUrdf(path)
    fingers = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.03}
    arm = model.reduced(locked=fingers)
    assert arm.nq == arm.nv == 7 and set(arm.frame_names) == set(model.frame_names)
    qref = pin.neutral(pm)
    for name, value in fingers.items():
        qref[pm.joints[pm.getJointId(name)].idx_q] = value
    pr = pin.buildReducedModel(pm, [pm.getJointId(n) for n in fingers], qref)
    pd = pr.createData()
    rng = np.random.default_rng(5)
    for _ in range(3):
        q = rng.uniform(arm.lower_limits, arm.upper_limits)
        v, a = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7)
        M = mb.crba(arm, q)
        M_pin = np.triu(pin.crba(pr, pd, q))
        _close(M, M_pin + np.triu(M_pin, 1).T)
        _close(mb.rnea(arm, q, v, a), pin.rnea(pr, pd, q, v, a))
        pin.framesForwardKinematics(pr, pd, q)
        _close(mb.frame_placement(arm, q, "panda_hand")[1], pd.oMf[pr.getFrameId("panda_hand")].translation)
