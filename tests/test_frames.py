"""Frame algorithms and the centroidal momentum (``algorithms.frames``, ``algorithms.centroidal``; issue 23).

Identities on random trees of every joint type whose bodies' own frames differ from the kernels' (joints given a
child placement), with random frames on every body and on the ground: J v is the frame's velocity in each
reference, the velocity and acceleration are the time derivatives of the placement and of the velocity, J̇ that of
J, J̇ v + J q̈ the acceleration; A_G v, J_c v and the centroidal momentum summed body by body; Ȧ_G the derivative
of A_G and Ȧ_G v the bias. Derivatives are central differences along q(t) = q ⊕ (v t + ½ q̈ t²) with h = 1e-3,
Richardson-extrapolated: truncation error O(h⁴) ≈ 1e-12 and round-off eps/h ≈ 1e-13, both relative to the
size of the quantity, under a tolerance of 1e-8 relative. Sums of the same products taken in another order
agree to a few ulps of the largest term: 1e-12 relative.

Against Pinocchio (``pin``, with ``example-robot-data``; the issue's robots UR5, Panda, Solo12 with a floating
base, Talos), every frame of each robot in the three references at three random states: the placement, J,
J̇, the velocity, the spatial and classical accelerations, J_c, A_G, h_G and Ȧ_G v agree to 1e-12 relative to
the size of each quantity (forward recursions over ≤ 30 bodies: round-off ≲ 30 · 4 eps ≈ 3e-14 relative).
Pinocchio's ``computeCentroidalMapTimeVariation`` reads the velocity ċ of the centre of mass from its Data (4.1:
as an earlier ``computeCentroidalMomentum`` left it there): on a fresh Data it leaves out the term −[ċ × A_lin; 0]
of moving the moment to the centre of mass (which vanishes on v, ċ × m ċ = 0), so the test calls it after
``computeCentroidalMomentum`` at the same state; Ȧ_G here is the time derivative of A_G (the differences above).
"""
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.bench.dynamics import random_rotation, random_tree_builder
from multibody.bench.robots import robots_folder
from multibody.errors import ModelError

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REFERENCES = ("world", "local", "local_world_aligned")


def tree_with_frames(n, rng, base_motion=None):
    """A random tree of n bodies, every joint type, half of the joints with a random child placement (the body's own
    frame is then not the kernels'), a random frame on every body and one on the ground."""
    b, _ = random_tree_builder(n, rng, base_motion=base_motion, child_placements=0.5)
    for k in range(n):
        b.add_frame(f"frame{k + 1}", f"body{k + 1}", mb.Placement(random_rotation(rng), rng.uniform(-1, 1, 3)))
    b.add_frame("on_ground", "ground", mb.Placement(random_rotation(rng), rng.uniform(-1, 1, 3)))
    return b.build()


def _derivative(f, h=1e-3):
    """Central difference of f at 0, Richardson-extrapolated (error O(h⁴))."""
    d1 = (f(h) - f(-h)) / (2 * h)
    d2 = (f(2 * h) - f(-2 * h)) / (4 * h)
    return (4 * d1 - d2) / 3


def _close(x, y, rel):
    """|x − y| <= rel · max(1, |y|): an absolute bound on the scale of the quantity."""
    np.testing.assert_allclose(x, y, rtol=0, atol=rel * max(1.0, np.abs(y).max(initial=0.0)))


def _skew_vector(W):
    return np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2


def _case(n, seed, base_motion=None):
    """A random tree of n bodies with frames (:func:`tree_with_frames`) and a random state (q, v, q̈) of it."""
    rng = np.random.default_rng(seed)
    model = tree_with_frames(n, rng, base_motion)
    return model, model.random_configuration(rng), rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)


@SETTINGS
@given(st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_frame_quantities_are_the_derivatives_of_the_placement(n, seed):
    model, q, v, a = _case(n, seed)

    def q_at(t):
        return model.integrate(q, v * t + 0.5 * a * t * t, 1.0)

    for f in model.frames:
        R, p = mb.frame_placement(model, q, f.name)
        dR = _derivative(lambda t: mb.frame_placement(model, q_at(t), f.name)[0])
        dp = _derivative(lambda t: mb.frame_placement(model, q_at(t), f.name)[1])
        lwa = mb.frame_velocity(model, q, v, f.name, "local_world_aligned")
        _close(lwa, np.concatenate([_skew_vector(dR @ R.T), dp]), 1e-8)
        acc = mb.frame_acceleration(model, q, v, a, f.name, "local_world_aligned", classical=True)
        _close(acc, _derivative(lambda t: mb.frame_velocity(model, q_at(t), v + a * t, f.name,
                                                            "local_world_aligned")), 1e-8)
        for ref in REFERENCES:
            J = mb.frame_jacobian(model, q, f.name, ref)
            vel = mb.frame_velocity(model, q, v, f.name, ref)
            _close(J @ v, vel, 1e-12)
            dJ = mb.frame_jacobian_time_variation(model, q, v, f.name, ref)
            _close(dJ, _derivative(lambda t: mb.frame_jacobian(model, model.integrate(q, v * t), f.name, ref)), 1e-8)
            # J̇ v + J q̈: the spatial acceleration in world and local, the classical one in local_world_aligned
            classical = ref == "local_world_aligned"
            _close(dJ @ v + J @ a, mb.frame_acceleration(model, q, v, a, f.name, ref, classical=classical), 1e-12)
        # the three references are one motion: local = X⁻¹ world; local_world_aligned at the frame's origin
        w = mb.frame_velocity(model, q, v, f.name, "world")
        _close(lwa, np.concatenate([w[:3], w[3:] + np.cross(w[:3], p)]), 1e-12)
        _close(mb.frame_velocity(model, q, v, f.name, "local"), np.concatenate([R.T @ lwa[:3], R.T @ lwa[3:]]), 1e-12)
        cl = mb.frame_acceleration(model, q, v, a, f.name, "local", classical=True)
        _close(cl, np.concatenate([R.T @ acc[:3], R.T @ acc[3:]]), 1e-12)


@SETTINGS
@given(st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_body_frames_are_the_forward_kinematics(n, seed):
    """A body's name is the frame of the body (its own frame, where the user placed com and inertia)."""
    model, q, v, a = _case(n, seed)
    kin = mb.forward_kinematics(model, q, v, a)
    for i, name in enumerate(model.body_names[1:], start=1):
        R, p = mb.frame_placement(model, q, name)
        np.testing.assert_allclose(R, kin.R[i], rtol=0, atol=1e-13)
        _close(p, kin.p[i], 1e-13)
        _close(mb.frame_velocity(model, q, v, name, "local_world_aligned"), kin.velocity[i], 1e-12)
        _close(mb.frame_acceleration(model, q, v, a, name, "local_world_aligned", classical=True),
               kin.acceleration[i], 1e-12)
        f = model.frames[i - 1]     # frame{i} on body{i}: its origin is a point of the body
        _close(mb.frame_placement(model, q, f.name)[1], mb.point_position(model, q, f.body, f.placement.translation),
               1e-13)


@SETTINGS
@given(st.integers(1, 12), st.integers(0, 2**32 - 1))
def test_centroidal_momentum(n, seed):
    model, q, v, a = _case(n, seed)
    Ag = mb.centroidal_map(model, q)
    h = mb.centroidal_momentum(model, q, v)
    mass, c, momentum = mb.center_of_mass(model, q, v)
    _close(Ag @ v, h, 1e-12)
    _close(h[3:], momentum, 1e-12)
    _close(mb.com_jacobian(model, q), Ag[3:] / mass, 1e-12)
    # the angular momentum about the centre of mass, body by body from the forward kinematics
    kin = mb.forward_kinematics(model, q, v)
    k = np.zeros(3)
    for i, body in enumerate(model.bodies, start=1):
        R, w = kin.R[i], kin.velocity[i, :3]
        r = R @ body.com
        k += R @ body.inertia @ R.T @ w + body.mass * np.cross(kin.p[i] + r - c, kin.velocity[i, 3:] + np.cross(w, r))
    _close(h[:3], k, 1e-12)
    # Ȧ_G is the time derivative of A_G, Ȧ_G v the rate of h_G at q̈ = 0, A_G q̈ + Ȧ_G v the rate at q̈
    dAg = mb.centroidal_map_time_variation(model, q, v)
    _close(dAg, _derivative(lambda t: mb.centroidal_map(model, model.integrate(q, v * t))), 1e-8)
    bias = mb.centroidal_bias(model, q, v)
    _close(dAg @ v, bias, 1e-12)
    rate = _derivative(lambda t: mb.centroidal_momentum(model, model.integrate(q, v * t + 0.5 * a * t * t),
                                                        v + a * t))
    _close(Ag @ a + bias, rate, 1e-8)


def test_a_moving_base_gives_absolute_velocities():
    """With a prescribed motion of the ground, the frame's velocity and the centroidal momentum are absolute: J v
    plus the base's share, as the forward kinematics give it."""

    def state(t):    # p0 = (0.3 t, sin t, 0), turning about z by t²/2
        return ((0.3 * t, np.sin(t), 0.0), mb.rotation_about((0, 0, 1), 0.5 * t * t), (0.3, np.cos(t), 0.0),
                (0.0, 0.0, t), (0.0, -np.sin(t), 0.0), (0.0, 0.0, 1.0))

    base = mb.BaseMotion(state)
    model, q, v, a = _case(4, 5, base)
    kin = mb.forward_kinematics(model, q, v, a, t=0.7)
    for i, name in enumerate(model.body_names[1:], start=1):
        _close(mb.frame_velocity(model, q, v, name, "local_world_aligned", t=0.7), kin.velocity[i], 1e-12)
        _close(mb.frame_acceleration(model, q, v, a, name, "local_world_aligned", classical=True, t=0.7),
               kin.acceleration[i], 1e-12)
    _close(mb.centroidal_momentum(model, q, v, t=0.7)[3:], mb.center_of_mass(model, q, v, t=0.7)[2], 1e-12)


def test_bad_input_is_named():
    model = tree_with_frames(3, np.random.default_rng(0))
    q = model.neutral()
    with pytest.raises(ModelError, match="no frame 'gripper'") as err:
        mb.frame_jacobian(model, q, "gripper")
    assert err.value.element == "frame 'gripper'"
    with pytest.raises(ModelError, match="reference must be one of 'world', 'local', 'local_world_aligned'"):
        mb.frame_velocity(model, q, np.zeros(model.nv), "frame1", reference="global")
    with pytest.raises(ModelError, match=r"q must have shape"):
        mb.frame_placement(model, q[:-1], "frame1")
    with pytest.raises(ModelError, match="frame must be a frame's name"):
        mb.frame_placement(model, q, 3.0)
    with pytest.raises(ModelError, match="frame handle 999 out of range"):
        mb.frame_jacobian(model, q, 999)
    with pytest.raises(ModelError, match="frames must be a sequence"):
        mb.frame_jacobians(model, q, "frame1")


@given(n=st.integers(1, 8), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=10, deadline=None, derandomize=True, database=None)
def test_many_frames_from_one_pass_equal_each_frame(n, seed):
    """``frame_jacobians`` / ``frame_placements`` / ``frame_velocities`` / ``frame_accelerations`` of every frame
    (one pass over all the bodies) are the one-frame calls (the kinematics of the path only) bit for bit — the same
    products in the same order — and a frame's handle gives what its name gives."""
    rng = np.random.default_rng(seed)
    model = tree_with_frames(n, rng)
    q = model.random_configuration(rng)
    v, a = rng.uniform(-2, 2, model.nv), rng.uniform(-2, 2, model.nv)
    names = model.frame_names
    assert names[:len(model.frames)] == tuple(f.name for f in model.frames)
    assert set(names) == {f.name for f in model.frames} | set(model.body_names)
    R, p = mb.frame_placements(model, q)
    for ref in REFERENCES:
        J = mb.frame_jacobians(model, q, reference=ref)
        V = mb.frame_velocities(model, q, v, reference=ref)
        A = mb.frame_accelerations(model, q, v, a, reference=ref, classical=True)
        for k, name in enumerate(names):
            assert model.frame_id(name) == k
            assert np.array_equal(J[k], mb.frame_jacobian(model, q, name, ref))
            assert np.array_equal(J[k], mb.frame_jacobian(model, q, k, ref))
            assert np.array_equal(V[k], mb.frame_velocity(model, q, v, k, ref))
            assert np.array_equal(A[k], mb.frame_acceleration(model, q, v, a, name, ref, classical=True))
    for k, name in enumerate(names):
        Rk, pk = mb.frame_placement(model, q, k)
        assert np.array_equal(Rk, R[k]) and np.array_equal(pk, p[k])
    some = [names[-1], 0]
    assert np.array_equal(mb.frame_jacobians(model, q, some, REFERENCES[-1]), J[[len(names) - 1, 0]])


# ---- against Pinocchio on the robots of example-robot-data ------------------------------------------------------
ROBOTS = [("ur_description/urdf/ur5_robot.urdf", False), ("panda_description/urdf/panda.urdf", False),
          ("solo_description/robots/solo12.urdf", True), ("talos_data/robots/talos_full_v2.urdf", True)]
TOL = 1e-12


def _ours(x):
    """Pinocchio's [linear; angular] rows (of a vector or a matrix) in our order [angular; linear]."""
    return np.concatenate([x[3:6], x[0:3]], axis=0)


@pytest.mark.skipif(robots_folder() is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("path, floating_base", ROBOTS, ids=[p.split("/")[-1] for p, _ in ROBOTS])
def test_frames_and_centroidal_equal_pinocchio(path, floating_base):
    pin = pytest.importorskip("pinocchio")
    from multibody.bench.urdf import pinocchio_state

    full = str(robots_folder() / path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.io.load_urdf(full, floating_base=floating_base)
        pm = pin.buildModelFromUrdf(full, pin.JointModelFreeFlyer()) if floating_base else pin.buildModelFromUrdf(full)
    pd = pm.createData()
    refs = {"world": pin.WORLD, "local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
    rng = np.random.default_rng(23)
    names = [f.name for f in model.frames] + list(model.body_names[1:])
    compared = 0
    for _ in range(3):
        q = model.random_configuration(rng, scale=1.5)
        v, a = rng.uniform(-2, 2, model.nv), rng.uniform(-2, 2, model.nv)
        qp, T, Td = pinocchio_state(model, pm, q, v)
        assert not Td.any()                     # no planar joints: a_pin = T a, J_ours = J_pin T
        vp, ap = T @ v, T @ a
        pin.forwardKinematics(pm, pd, qp, vp, ap)
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, qp)
        pin.computeJointJacobiansTimeVariation(pm, pd, qp, vp)
        for name in names:
            fid = pm.getFrameId(name, pin.FrameType.BODY)
            if fid == len(pm.frames):
                continue                            # the root link of a fixed base is Pinocchio's universe
            compared += 1
            R, p = mb.frame_placement(model, q, name)
            np.testing.assert_allclose(R, pd.oMf[fid].rotation, rtol=0, atol=TOL, err_msg=name)
            _close(p, pd.oMf[fid].translation, TOL)
            for ref, rf in refs.items():
                where = f"{name} ({ref})"
                J = mb.frame_jacobian(model, q, name, ref)
                np.testing.assert_allclose(J, _ours(pin.getFrameJacobian(pm, pd, fid, rf)) @ T, rtol=0,
                                           atol=TOL * max(1.0, np.abs(J).max()), err_msg=where)
                dJ = mb.frame_jacobian_time_variation(model, q, v, name, ref)
                dJ_pin = _ours(pin.getFrameJacobianTimeVariation(pm, pd, fid, rf)) @ T
                np.testing.assert_allclose(dJ, dJ_pin, rtol=0, atol=TOL * max(1.0, np.abs(dJ).max()), err_msg=where)
                for ours, theirs in (
                        (mb.frame_velocity(model, q, v, name, ref), pin.getFrameVelocity(pm, pd, fid, rf)),
                        (mb.frame_acceleration(model, q, v, a, name, ref), pin.getFrameAcceleration(pm, pd, fid, rf)),
                        (mb.frame_acceleration(model, q, v, a, name, ref, classical=True),
                         pin.getFrameClassicalAcceleration(pm, pd, fid, rf))):
                    np.testing.assert_allclose(ours, _ours(theirs.vector), rtol=0,
                                               atol=TOL * max(1.0, np.abs(ours).max()), err_msg=where)
        Jc = mb.com_jacobian(model, q)
        np.testing.assert_allclose(Jc, pin.jacobianCenterOfMass(pm, pd, qp) @ T, rtol=0, atol=TOL * np.abs(Jc).max())
        Ag = mb.centroidal_map(model, q)
        np.testing.assert_allclose(Ag, _ours(pin.computeCentroidalMap(pm, pd, qp)) @ T, rtol=0,
                                   atol=TOL * np.abs(Ag).max())
        h = mb.centroidal_momentum(model, q, v)
        pin.computeCentroidalMomentum(pm, pd, qp, vp)
        np.testing.assert_allclose(h, _ours(pd.hg.vector), rtol=0, atol=TOL * np.abs(h).max())
        # (after computeCentroidalMomentum at this state: see the module docstring)
        dAg_pin = _ours(pin.computeCentroidalMapTimeVariation(pm, pd, qp, vp).copy()) @ T
        dAg = mb.centroidal_map_time_variation(model, q, v)
        np.testing.assert_allclose(dAg, dAg_pin, rtol=0, atol=TOL * max(1.0, np.abs(dAg).max()))
        bias = mb.centroidal_bias(model, q, v)
        np.testing.assert_allclose(bias, dAg_pin @ v, rtol=0, atol=TOL * max(1.0, np.abs(bias).max()))
    assert compared >= 3 * len(model.body_names[1:])


def test_general_joints():
    """A general joint (seed 001 §3.4.2) written as a universal joint gives the universal joint's frame quantities;
    the rates of its Jacobian's columns are not formed, so J̇ and Ȧ_G refuse it by name."""
    sp = pytest.importorskip("sympy")
    q1, q2 = sp.symbols("q1 q2")
    a1, a2 = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0])
    rot = (sp.Matrix([[sp.cos(q1), -sp.sin(q1), 0], [sp.sin(q1), sp.cos(q1), 0], [0, 0, 1]])
           * sp.Matrix([[1, 0, 0], [0, sp.cos(q2), -sp.sin(q2)], [0, sp.sin(q2), sp.cos(q2)]]))
    models = []
    for joint in (mb.Universal(a1, a2), mb.GeneralJoint([q1, q2], rotation=rot)):
        b = mb.ModelBuilder()
        b.add_body("arm", mass=1.0, com=(0.3, 0.1, 0.0), inertia=np.diag([0.01, 0.02, 0.025]))
        b.add_joint("wrist", joint, "ground", "arm", placement=(mb.rotation_about((1, 1, 0), 0.4), (0.1, 0.2, 0.3)))
        b.add_frame("tool", "arm", mb.Placement(mb.rotation_about((0, 1, 0), 0.3), (0.5, 0.0, 0.1)))
        models.append(b.build())
    universal, general = models
    q, v, a = np.array([0.4, -0.7]), np.array([1.3, -0.5]), np.array([0.2, 0.9])
    for ref in REFERENCES:
        _close(mb.frame_jacobian(general, q, "tool", ref), mb.frame_jacobian(universal, q, "tool", ref), 1e-12)
        _close(mb.frame_acceleration(general, q, v, a, "tool", ref), mb.frame_acceleration(universal, q, v, a, "tool",
                                                                                           ref), 1e-12)
    _close(mb.centroidal_map(general, q), mb.centroidal_map(universal, q), 1e-12)
    with pytest.raises(ModelError, match="joint 'wrist' is a GeneralJoint: frame_jacobian_time_variation"):
        mb.frame_jacobian_time_variation(general, q, v, "tool")
    with pytest.raises(ModelError, match="joint 'wrist' is a GeneralJoint: centroidal_map_time_variation"):
        mb.centroidal_map_time_variation(general, q, v)
