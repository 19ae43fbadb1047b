"""The analytical derivatives against Pinocchio's (``computeRNEADerivatives``, ``computeABADerivatives``,
``computeMinverse``, ``computeCoriolisMatrix``), an independent implementation of the same recursions, on random
trees mirrored into Pinocchio (``bench.dynamics.to_pinocchio``) and on real robots of example-robot-data loaded by
both libraries from the same URDF.

Pinocchio's derivatives fill the rows of each joint over its subtree as one contiguous range of velocity indices,
which holds for depth-first numberings only; our regular numbering of a random tree need not be one, so the random
trees compared here are depth-first (``_depth_first``). Both sides are exact to rounding (sums of O(N·depth)
products of numbers of order one, the ABA derivatives multiplied by the condition of M): 1e-12 relative to the
largest entry, as issue 24 asks. The ABA derivatives, −M⁻¹ ∂τ/∂x, carry the rounding of ∂τ/∂x multiplied by the
condition of M, which reaches 1e4 on random trees of 40 coordinates and 1e6 on the robots (Talos: masses from 0.1
to 15 kg, rotational inertias from 1e-5 to 1 kg m²): they are compared at max(1e-12, 100 eps cond(M)) (the largest
difference seen was 1.7 eps cond(M)).
"""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.bench.derivatives import ROBOT, robots_dir
from multibody.bench.dynamics import random_tree, revolute_chain, to_pinocchio
from multibody.kernels.derivatives_minv import subtree_tables

pin = pytest.importorskip("pinocchio")

#: the joints whose Pinocchio twins (its own joints, or a composite of joints along one axis) it differentiates right
SAME = ("Fixed", "Revolute", "Prismatic", "Cylindrical", "Spherical", "Free")
BASIC = ("Revolute", "Prismatic", "Spherical", "Free")
TOL = 1e-12


def _close(ours, ref, tol=TOL):
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    np.testing.assert_allclose(ours, ref, rtol=0, atol=tol * scale)


def _tol_aba(M):
    """The tolerance of the ABA derivatives: the rounding of ∂τ/∂x times the condition of M (module docstring)."""
    return max(TOL, 100 * np.finfo(float).eps * np.linalg.cond(M))


def _depth_first(model):
    """Whether each joint's subtree has a contiguous range of velocity indices right after the joint's own (the
    depth-first positions of ``derivatives_minv.subtree_tables`` are the indices themselves), as Pinocchio needs."""
    n, nv = model.nbodies + 1, model.nv
    coord = subtree_tables(model.parent, model.idx_v, model.nv_j)[2 * n:2 * n + nv]
    return bool(np.array_equal(coord, np.arange(nv)))


def _depth_first_tree(n, rng, types):
    """A random tree of n bodies (``bench.dynamics.random_tree``) drawn again until it is depth-first: a few draws
    for n ≤ 6, about ten for n = 8 (larger trees take a hundred draws and more; the robots and chains are larger)."""
    model = random_tree(n, rng, joint_types=types, fixed_on_ground=False)
    while model.nv == 0 or not _depth_first(model):
        model = random_tree(n, rng, joint_types=types, fixed_on_ground=False)
    return model


def _sym(M):
    """Pinocchio fills the upper triangle of M⁻¹ and M only."""
    return np.triu(M) + np.triu(M, 1).T


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_random_depth_first_trees(n, seed):
    """Revolute, prismatic, spherical and free joints as Pinocchio's own, cylindrical ones as its composite of a
    revolute and a prismatic joint along one axis, fixed joints merged into their parent."""
    rng = np.random.default_rng(seed)
    model = _depth_first_tree(n, rng, SAME)
    pm, pq, pv = to_pinocchio(model)
    pd = pm.createData()
    q = model.random_configuration(rng)
    v, x = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    qp, vp, xp = q[pq], v[pv], x[pv]
    P = np.ix_(pv, pv)
    dq, dv, M = mb.rnea_derivatives(model, q, v, x)
    pin_dq, pin_dv, pin_M = (np.array(a) for a in pin.computeRNEADerivatives(pm, pd, qp, vp, xp))
    _close(dq[P], pin_dq)
    _close(dv[P], pin_dv)
    _close(M[P], _sym(pin_M))
    da_dq, da_dv, Minv = mb.aba_derivatives(model, q, v, x)
    pin_da_dq, pin_da_dv, pin_Minv = (np.array(a) for a in pin.computeABADerivatives(pm, pd, qp, vp, xp))
    tol = _tol_aba(M)
    _close(da_dq[P], pin_da_dq, tol)
    _close(da_dv[P], pin_da_dv, tol)
    _close(Minv[P], _sym(pin_Minv), tol)
    _close(mb.minv(model, q)[P], _sym(np.array(pin.computeMinverse(pm, pd, qp))), tol)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_universal_and_planar_joints_against_pinocchios_finite_differences(n, seed):
    """Our Universal and Planar joints are Pinocchio composites (two unaligned revolute joints; PX, PY, RZ) whose
    motion subspace turns with their coordinates; ``computeRNEADerivatives`` differs from Pinocchio's own finite
    differences on them (by 0.35 and 4.2 at random states of one such joint), so ours are compared with central
    differences of ``pin.rnea`` along ``pin.integrate``: step h = 1e-6, error h² |τ‴| / 6 + eps |τ| / h, about
    1e-10 for these trees (τ and its derivatives of order 1 to 10), compared at 1e-7 relative. (The complex steps
    of test_derivatives.py check the same derivatives exactly.)"""
    rng = np.random.default_rng(seed)
    model = _depth_first_tree(n, rng, ("Revolute", "Universal", "Planar"))
    pm, pq, pv = to_pinocchio(model)
    pd = pm.createData()
    q = model.random_configuration(rng)
    v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    qp, vp, ap = q[pq], v[pv], a[pv]
    h = 1e-6
    fd_q = np.empty((pm.nv, pm.nv))
    fd_v = np.empty((pm.nv, pm.nv))
    for k, e in enumerate(np.eye(pm.nv) * h):
        fd_q[:, k] = (pin.rnea(pm, pd, pin.integrate(pm, qp, e), vp, ap)
                      - pin.rnea(pm, pd, pin.integrate(pm, qp, -e), vp, ap)) / (2 * h)
        fd_v[:, k] = (pin.rnea(pm, pd, qp, vp + e, ap) - pin.rnea(pm, pd, qp, vp - e, ap)) / (2 * h)
    dq, dv, _ = mb.rnea_derivatives(model, q, v, a)
    P = np.ix_(pv, pv)
    _close(dq[P], fd_q, 1e-7)
    _close(dv[P], fd_v, 1e-7)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 9), st.integers(0, 2**32 - 1))
def test_coriolis_matrix_is_pinocchios(n, seed):
    """Pinocchio's ``computeCoriolisMatrix``, C = Σ Jᵀ (I J̇ + ½ D J), entry by entry (joints whose motion subspace
    is constant in the child frame: Pinocchio's composite joints take J̇ = v × J, which is not the derivative of
    their columns)."""
    rng = np.random.default_rng(seed)
    model = _depth_first_tree(n, rng, BASIC)
    pm, pq, pv = to_pinocchio(model)
    pd = pm.createData()
    q = model.random_configuration(rng)
    v = rng.uniform(-1, 1, model.nv)
    C = mb.coriolis_matrix(model, q, v)
    _close(C[np.ix_(pv, pv)], np.array(pin.computeCoriolisMatrix(pm, pd, q[pq], v[pv])))


def test_the_benchmark_chains():
    """The revolute chains of ``multibody bench --only derivatives``."""
    rng = np.random.default_rng(0)
    for n in (7, 30):
        model = revolute_chain(n)
        pm, _, _ = to_pinocchio(model)
        pd = pm.createData()
        q, v, tau = (rng.uniform(-1, 1, n) for _ in range(3))
        tol = _tol_aba(mb.crba(model, q))
        da_dq, da_dv, Minv = mb.aba_derivatives(model, q, v, tau)
        p = [np.array(x) for x in pin.computeABADerivatives(pm, pd, q, v, tau)]
        _close(da_dq, p[0], tol)
        _close(da_dv, p[1], tol)
        _close(Minv, _sym(p[2]), tol)


# ---- robots of example-robot-data, loaded from their URDF by both libraries ------------------------------------
#: (name, URDF path below example-robot-data's robots/, floating base)
ROBOTS = [("UR5", "ur_description/urdf/ur5_robot.urdf", False),
          ("Panda", "panda_description/urdf/panda.urdf", False),
          ("Solo12", "solo_description/robots/solo12.urdf", True),
          ROBOT]


@pytest.mark.parametrize("name,path,floating", ROBOTS, ids=[r[0] for r in ROBOTS])
def test_robots(name, path, floating):
    from multibody.bench.urdf import pinocchio_state

    root = robots_dir()
    if root is None or not os.path.exists(os.path.join(root, path)):
        pytest.skip("example-robot-data is not installed")
    urdf = os.path.join(root, path)
    model = mb.load_model(urdf, floating_base=floating)
    pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(urdf)
    pd = pm.createData()
    rng = np.random.default_rng(1)
    for _ in range(2):
        q = model.random_configuration(rng, scale=1.5)
        v = rng.uniform(-2, 2, model.nv)
        tau = rng.uniform(-20, 20, model.nv)
        qp, T, Td = pinocchio_state(model, pm, q, v)
        assert not Td.any()         # no planar joints: a_pin = T a, and the tangent maps by T as the velocities
        TT = lambda X: T @ X @ T.T  # noqa: E731
        a = mb.aba(model, q, v, tau)
        dq, dv, M = mb.rnea_derivatives(model, q, v, a)
        p = [np.array(x) for x in pin.computeRNEADerivatives(pm, pd, qp, T @ v, T @ a)]
        _close(TT(dq), p[0])
        _close(TT(dv), p[1])
        _close(TT(M), _sym(p[2]))
        tol = _tol_aba(M)
        da_dq, da_dv, Minv = mb.aba_derivatives(model, q, v, tau)
        p = [np.array(x) for x in pin.computeABADerivatives(pm, pd, qp, T @ v, T @ tau)]
        _close(TT(da_dq), p[0], tol)
        _close(TT(da_dv), p[1], tol)
        _close(TT(Minv), _sym(p[2]), tol)
        _close(TT(mb.minv(model, q)), _sym(np.array(pin.computeMinverse(pm, pd, qp))), tol)
        C = mb.coriolis_matrix(model, q, v)
        _close(TT(C), np.array(pin.computeCoriolisMatrix(pm, pd, qp, T @ v)))
