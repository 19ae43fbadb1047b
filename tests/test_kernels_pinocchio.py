"""The kernels against Pinocchio (an independent implementation of RBDA's algorithms) on the same models.

Random chains and trees of revolute, prismatic, spherical and free joints (and, through Pinocchio's composite
joints, cylindrical, universal and planar ones; fixed joints merged into their parent), random placements and
inertias: ABA, RNEA, CRBA, kinetic and potential energy, body placements and Jacobians agree to rounding.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from multibody.algorithms.dynamics import aba, crba, energy, forward_kinematics, point_jacobian
from multibody.bench.dynamics import random_tree, revolute_chain, to_pinocchio

pin = pytest.importorskip("pinocchio")

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BASIC = ("Revolute", "Prismatic", "Spherical", "Free")
ALL = ("Fixed", "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", "Planar", "Free")


def _compare(model, rng):
    pm, pq, pv = to_pinocchio(model)
    pd = pm.createData()
    q = model.random_configuration(rng)
    v = rng.uniform(-1, 1, model.nv)
    tau = rng.uniform(-1, 1, model.nv)
    qp, vp, tp = q[pq], v[pv], tau[pv]
    qdd = aba(model, q, v, tau)
    scale = max(1.0, np.abs(qdd).max())
    np.testing.assert_allclose(pin.aba(pm, pd, qp, vp, tp), qdd[pv], rtol=0, atol=1e-10 * scale)
    np.testing.assert_allclose(pin.rnea(pm, pd, qp, vp, qdd[pv]), tau[pv], rtol=0, atol=1e-10 * scale)
    if _depth_first(model):
        M = pin.crba(pm, pd, qp)
        M = np.triu(M) + np.triu(M, 1).T
    else:
        # pin.crba fills the upper triangle over each joint's subtree as a contiguous range of v, which holds
        # only for depth-first joint orders; our regular numbering of a tree need not be one, so build
        # Pinocchio's M column by column from its RNEA: M e_k = rnea(q, 0, e_k) − rnea(q, 0, 0)
        z = np.zeros(pm.nv)
        g = pin.rnea(pm, pd, qp, z, z)
        M = np.array([pin.rnea(pm, pd, qp, z, e) - g for e in np.eye(pm.nv)]).T
    Mo = crba(model, q)
    np.testing.assert_allclose(M, Mo[np.ix_(pv, pv)], rtol=0, atol=1e-12 * max(1.0, np.abs(Mo).max()))
    T, V = energy(model, q, v)
    assert pin.computeKineticEnergy(pm, pd, qp, vp) == pytest.approx(T, rel=1e-12, abs=1e-12)
    assert pin.computePotentialEnergy(pm, pd, qp) == pytest.approx(V, rel=1e-12, abs=1e-11)
    return pm, pd, q, qp, pv


def _depth_first(model):
    """True when every body's subtree is numbered contiguously right after it (a depth-first order): the
    parent of body i is body i − 1 or one of its ancestors."""
    for i in range(2, model.nbodies + 1):
        j = i - 1
        while j != model.parent[i] and j > 0:
            j = model.parent[j]
        if j != model.parent[i]:
            return False
    return True


@SETTINGS
@given(st.integers(1, 30), st.integers(0, 2**32 - 1), st.booleans())
def test_chains_and_trees_of_basic_joints(n, seed, chain):
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng, joint_types=BASIC)
    if chain:  # a serial chain: each body hangs from the previous one
        model = _as_chain(n, rng)
    _compare(model, rng)


def _as_chain(n, rng):
    import multibody as mb
    from multibody.bench.dynamics import random_rotation, random_unit
    b = mb.ModelBuilder(gravity=rng.normal(size=3) * 5)
    parent = "ground"
    for k in range(n):
        b.add_body(f"b{k}", mass=rng.uniform(0.2, 3), com=rng.uniform(-0.5, 0.5, 3),
                   inertia=np.diag(rng.uniform(1.0, 1.5, 3)))
        kind = BASIC[rng.integers(len(BASIC))]
        a = random_unit(rng)
        joint = {"Revolute": mb.Revolute(a), "Prismatic": mb.Prismatic(a), "Spherical": mb.Spherical(),
                 "Free": mb.Free()}[kind]
        b.add_joint(f"j{k}", joint, parent=parent, child=f"b{k}",
                    placement=mb.Placement(random_rotation(rng), rng.uniform(-1, 1, 3)))
        parent = f"b{k}"
    return b.build()


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_trees_of_every_joint_type(n, seed):
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng, joint_types=ALL, fixed_on_ground=False)
    if model.nv == 0:
        return
    pm, pd, q, qp, pv = _compare(model, rng)
    # placements of the bodies and point Jacobians in ground coordinates
    pin.forwardKinematics(pm, pd, qp)
    pin.computeJointJacobians(pm, pd, qp)
    kin = forward_kinematics(model, q)
    jid = 0
    for i in range(1, model.nbodies + 1):
        if model.jtype[i] == 0:
            continue
        jid += 1
        oMi = pd.oMi[jid]
        np.testing.assert_allclose(oMi.rotation, kin.R[i], rtol=0, atol=1e-12)
        np.testing.assert_allclose(oMi.translation, kin.p[i], rtol=0, atol=1e-12)
        Jp = np.reshape(pin.getJointJacobian(pm, pd, jid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED), (6, pm.nv))[:3]
        np.testing.assert_allclose(Jp, point_jacobian(model, q, i)[:, pv], rtol=0, atol=1e-12)


def test_revolute_chains_of_the_benchmark():
    """The models timed in benchmarks/bench_dynamics.py are the same in both libraries."""
    rng = np.random.default_rng(0)
    for n in (7, 30, 100):
        _compare(revolute_chain(n), rng)
