"""Inverse kinematics (``algorithms/inverse_kinematics.py``, issue 35).

Every solve is checked by numbers computed apart from the solver: the frame's placement at the returned q
(``frame_placement``, itself equal to Pinocchio's to 1e-12 in tests/test_frames.py) against the target, to the
issue's 1e-9 (rad for the rotation angle of R_t Rᵀ, m for the origin), and the joint limits. The targets are
reachable by construction: placements of the frames at random configurations within the limits. The step's parts
are checked on their own: the residual's Jacobian against central differences of the residual (h = 1e-6, error
O(h²) ≈ 1e-12 plus round-off eps/h ≈ 1e-10, relative), and the box-constrained step against its optimality
conditions (KKT: zero gradient on the free coordinates, multipliers of the right sign on the bounds).
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.algorithms.inverse_kinematics import box_least_squares
from multibody.bench.dynamics import random_rotation, random_tree_builder
from multibody.bench.robots import robots_folder
from multibody.errors import ConvergenceWarning, ModelError
from multibody.kernels.frames import LOCAL_WORLD_ALIGNED, OUT_WIDTH, frame_jacobians_kernel
from multibody.kernels.inverse_kinematics import ik_residual_kernel

ROOT = robots_folder()
needs_robots = pytest.mark.skipif(ROOT is None, reason="example-robot-data is not installed")
TOL = 1e-9


def _load(path, floating_base=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mb.io.load_urdf(ROOT / path, floating_base=floating_base)


@pytest.fixture(scope="module")
def panda():
    return _load("panda_description/urdf/panda.urdf")


@pytest.fixture(scope="module")
def talos():
    return _load("talos_data/robots/talos_reduced.urdf", floating_base=True)


def rotation_angle(R):
    """The angle of the rotation R: atan2(sin, cos) from its skew and symmetric parts (accurate near 0, where
    arccos of the trace loses half the digits)."""
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return float(np.arctan2(0.5 * np.linalg.norm(w), 0.5 * (np.trace(R) - 1.0)))


def placement_error(model, q, frame, target):
    """(angle of R_t Rᵀ, distance of the origins) at q, from frame_placement."""
    R, p = mb.frame_placement(model, q, frame)
    if isinstance(target, tuple):
        return rotation_angle(target[0] @ R.T), float(np.linalg.norm(target[1] - p))
    return 0.0, float(np.linalg.norm(np.asarray(target) - p))


def within_limits(model, q):
    lo, hi = model.lower_limits, model.upper_limits
    return bool(np.all(q >= lo) and np.all(q <= hi))


def check(model, result, targets):
    """The solve's q places every frame on its target to TOL within the limits, and the result says so."""
    assert within_limits(model, result.q)
    worst = max(max(placement_error(model, result.q, f, t)) for f, t in targets.items())
    assert worst <= TOL, (worst, result.info)
    assert result.converged and result.error <= TOL
    # the result's own residuals are those measured here (rotation angle and distance, to round-off)
    for f, t in targets.items():
        name = f if isinstance(f, str) else model.frame_names[f]
        np.testing.assert_allclose(result.errors[name], placement_error(model, result.q, f, t), rtol=0, atol=1e-12)


@needs_robots
def test_panda_hand_reaches_random_placements_within_the_limits(panda):
    """20 placements of the hand at random configurations within the limits, from one fixed start (the middle of
    the limits); the benchmark does 200 (``multibody bench``)."""
    rng = np.random.default_rng(35)
    lo, hi = panda.lower_limits, panda.upper_limits
    q0 = 0.5 * (lo + hi)
    hand = panda.frame_id("panda_hand")
    for _ in range(20):
        target = mb.frame_placement(panda, rng.uniform(lo, hi), hand)
        result = mb.inverse_kinematics(panda, {hand: target}, q0, restarts=20)
        check(panda, result, {hand: target})


@needs_robots
def test_talos_holds_both_feet_and_reaches_with_a_hand(talos):
    """Several frames at once on a floating base: both soles held where they are at the start, the left gripper sent
    to the placement it has when the arm's joints are drawn within their limits."""
    rng = np.random.default_rng(7)
    lo, hi = talos.lower_limits, talos.upper_limits
    q0 = talos.neutral()
    feet = {f: mb.frame_placement(talos, q0, f) for f in ("left_sole_link", "right_sole_link")}
    for _ in range(3):
        qt = q0.copy()
        for k in range(1, 8):
            s = talos.joint(f"arm_left_{k}_joint").q_slice
            qt[s] = rng.uniform(lo[s], hi[s])
        targets = {**feet, "gripper_left_base_link": mb.frame_placement(talos, qt, "gripper_left_base_link")}
        result = mb.inverse_kinematics(talos, targets, q0, restarts=5)
        check(talos, result, targets)


def two_link():
    b = mb.ModelBuilder()
    for k in (1, 2):
        b.add_body(f"link{k}", mass=1.0, com=(0.5, 0, 0), inertia=np.diag([0.01, 0.1, 0.1]))
    b.add_joint("shoulder", mb.Revolute(axis=(0, 0, 1)), "ground", "link1", limits=(-2.0, 2.0))
    b.add_joint("elbow", mb.Revolute(axis=(0, 0, 1)), "link1", "link2", placement=mb.Placement(translation=(1, 0, 0)),
                limits=(0.0, 2.5))
    b.add_frame("tip", "link2", mb.Placement(translation=(1, 0, 0)))
    return b.build()


def test_position_targets_and_the_elbow_that_the_limits_allow():
    """A planar two-link arm: the tip at (1, 1) has two solutions, elbow ±π/2; the limits leave +π/2."""
    model = two_link()
    result = mb.inverse_kinematics(model, {"tip": [1.0, 1.0, 0.0]}, [0.0, 0.1])
    check(model, result, {"tip": np.array([1.0, 1.0, 0.0])})
    np.testing.assert_allclose(result.q, [0.0, np.pi / 2], atol=1e-9)


def test_a_target_out_of_reach_is_reported():
    """The tip cannot be 3 m from the shoulder (the arm is 2 m long): the run warns naming the frame and how far it is
    left, returns the closest configuration (the arm stretched towards the target: 1 m short) and converged False."""
    model = two_link()
    with pytest.warns(ConvergenceWarning, match=r"frame 'tip' is 1 m and 0 rad from its target"):
        result = mb.inverse_kinematics(model, {"tip": [0.0, 3.0, 0.0]}, [0.3, 0.2])
    assert not result.converged and result.info["reason"] in ("stalled", "iterations")
    assert abs(result.error - 1.0) < 1e-6 and abs(placement_error(model, result.q, "tip", [0.0, 3.0, 0.0])[1] - 1.0) < 1e-6
    assert within_limits(model, result.q)


def test_a_target_beyond_the_limits_stops_on_the_limit():
    """The tip 0.5 m from the shoulder needs the elbow at arccos((0.5² − 2)/2) = 2.636 rad, beyond its upper limit 2.5:
    the solve ends on the limit, where the tip is √(2 + 2 cos 2.5) − 0.5 = 0.1307 m from the target."""
    model = two_link()
    with pytest.warns(ConvergenceWarning, match="frame 'tip' is 0.131 m"):
        result = mb.inverse_kinematics(model, {"tip": [0.5, 0.0, 0.0]}, [0.0, 0.5])
    assert not result.converged and within_limits(model, result.q)
    assert result.q[1] == 2.5
    assert abs(result.error - (np.sqrt(2 + 2 * np.cos(2.5)) - 0.5)) < 1e-6


@needs_robots
def test_posture_is_followed_in_the_null_space(panda):
    """A position target leaves the Panda four redundant directions: with a posture the solution reaches the same
    target and ends nearer the posture than without."""
    rng = np.random.default_rng(3)
    lo, hi = panda.lower_limits, panda.upper_limits
    q0 = 0.5 * (lo + hi)
    posture = q0 + 0.3 * (hi - lo) * rng.uniform(-0.5, 0.5, panda.nq)
    target = {"panda_hand": mb.frame_placement(panda, rng.uniform(lo, hi), "panda_hand")[1]}
    plain = mb.inverse_kinematics(panda, target, q0)
    held = mb.inverse_kinematics(panda, target, q0, posture=posture)
    check(panda, plain, target)
    check(panda, held, target)
    assert np.linalg.norm(held.q - posture) < np.linalg.norm(plain.q - posture)


@given(seed=st.integers(0, 2**31 - 1), rotation=st.booleans())
@settings(max_examples=15, deadline=None, derandomize=True, database=None)
def test_the_residual_jacobian_is_its_derivative(seed, rotation):
    """A of ``ik_residual_kernel`` is −de/dv: central differences of the residual along q ⊕ h v (h = 1e-6)."""
    rng = np.random.default_rng(seed)
    b, _ = random_tree_builder(4, rng, child_placements=0.5)
    for k in range(4):
        b.add_frame(f"frame{k + 1}", f"body{k + 1}", mb.Placement(random_rotation(rng), rng.uniform(-1, 1, 3)))
    model = b.build()
    d = mb.Data(model)
    fi, ff, _, _, _ = d.frame_table()
    rows = np.array([1, 3], dtype=np.int64)
    Rt = np.stack([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in rows])
    Rt *= np.sign(np.linalg.det(Rt))[:, None, None]
    pt, w = rng.normal(size=(2, 3)), rng.uniform(0.5, 2.0, (2, 6))
    rot = np.full(2, int(rotation))

    def residual(q, jacobian=False):
        J, out = np.empty((2, 6, model.nv)), np.empty((2, OUT_WIDTH))
        frame_jacobians_kernel(d.mi, d.mf, fi, ff, q, np.zeros(model.nv), d.work, rows, LOCAL_WORLD_ALIGNED, J, out)
        e, A, per = np.empty(12), np.empty((12, model.nv)), np.empty((2, 2))
        ik_residual_kernel(J, out, Rt.reshape(2, 9), pt, rot, w, e, A, per, jacobian)
        return e, A

    q = model.random_configuration(rng)
    v = rng.normal(size=model.nv)
    h = 1e-6
    de = (residual(model.integrate(q, h * v))[0] - residual(model.integrate(q, -h * v))[0]) / (2 * h)
    A = residual(q, True)[1]
    np.testing.assert_allclose(-A @ v, de, rtol=0, atol=1e-7 * max(1.0, np.abs(de).max()))


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 12))
@settings(max_examples=40, deadline=None, derandomize=True, database=None)
def test_box_least_squares_meets_its_optimality_conditions(seed, n):
    """KKT of min ½|A x − e|² + ½ λ|x|² in a box: x within it; on a free coordinate the gradient Aᵀ(A x − e) + λ x is
    zero, on a lower bound ≥ 0, on an upper bound ≤ 0 — with A taller and wider than square (both ways of solving). The
    systems solved have the condition κ = (σ_max(A)² + λ)/λ, and a solve's residual is κ eps relative: the gradient is
    checked at 1e-12 n κ relative to the scale of its terms."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(int(rng.integers(1, 2 * n + 2)), n))
    e = rng.normal(size=A.shape[0]) * 3
    lam = 10.0 ** rng.uniform(-4, 0)
    lower = np.where(rng.random(n) < 0.7, -rng.uniform(0, 1, n), -np.inf)
    upper = np.where(rng.random(n) < 0.7, rng.uniform(0, 1, n), np.inf)
    x, done = box_least_squares(A, e, lam, lower, upper)
    assert done
    assert np.all(x >= lower) and np.all(x <= upper)
    g = A.T @ (A @ x - e) + lam * x
    H = A.T @ A + lam * np.eye(n)
    kappa = (np.linalg.norm(A, 2) ** 2 + lam) / lam
    scale = (np.abs(H).max() * max(1.0, np.abs(x).max()) + np.abs(A.T @ e).max()) * kappa
    free = (x > lower) & (x < upper)
    assert np.all(np.abs(g[free]) <= 1e-12 * scale * n)
    assert np.all(g[x == lower] >= -1e-12 * scale * n) and np.all(g[x == upper] <= 1e-12 * scale * n)


def test_bad_input_is_named():
    model = two_link()
    with pytest.raises(ModelError, match="targets must be a non-empty mapping"):
        mb.inverse_kinematics(model, {}, [0.0, 0.0])
    with pytest.raises(ModelError, match="no frame 'hand'"):
        mb.inverse_kinematics(model, {"hand": [1.0, 0.0, 0.0]}, [0.0, 0.0])
    with pytest.raises(ModelError, match="the target of frame 'tip' must be"):
        mb.inverse_kinematics(model, {"tip": [1.0, 0.0]}, [0.0, 0.0])
    with pytest.raises(ModelError, match="target rotation of frame 'tip' is not a rotation"):
        mb.inverse_kinematics(model, {"tip": (2 * np.eye(3), [1.0, 0.0, 0.0])}, [0.0, 0.0])
    with pytest.raises(ModelError, match="the weight of frame 'tip'"):
        mb.inverse_kinematics(model, {"tip": [1.0, 0.0, 0.0]}, [0.0, 0.0], weights={"tip": -1.0})
    with pytest.raises(ModelError, match=r"q0 must have shape \(2,\)"):
        mb.inverse_kinematics(model, {"tip": [1.0, 0.0, 0.0]}, [0.0])
    with pytest.raises(ModelError, match="restarts must be"):
        mb.inverse_kinematics(model, {"tip": [1.0, 0.0, 0.0]}, [0.0, 0.0], restarts=-1)
