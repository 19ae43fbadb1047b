"""Every URDF file of example-robot-data that Pinocchio's own parser (``pin.buildModelFromUrdf``) loads is loaded
here too, with a fixed and with a floating base (issues 23, 35), with the same joints, and gives the same mass
matrix, inverse dynamics and forward dynamics as Pinocchio at random states; the frames of its links sit where
Pinocchio's do, and at the last state every frame's Jacobian, the centroidal map, the Jacobian of the centre of mass
and the derivatives of RNEA and ABA are Pinocchio's. 68 of the 69 files load: ``ur3.urdf`` has no link (Pinocchio
refuses it too); two rotor bodies with a fixed base have no moving link (they load with a floating base); the two
Romeo files, whose massless moving links (and a negative principal moment) leave the dynamics undefined, load with
``repair=True`` (the links' masses and inertias bounded: ``model.inertia.BOUND_MASS``) — compared with Pinocchio's
model given the same inertias — and for their kinematics with ``kinematics_only=True``, where the dynamics refuse the
model naming the link. The refusals are listed with the reason, which the test shows holds in Pinocchio's own model
(a mass matrix that is singular or indefinite there too, or no joint at all).

Tolerances, relative to the scale of each quantity (the issue asks 1e-9): M and RNEA are sums of O(N) products
of the same numbers in another order (round-off ~N eps ≈ 1e-14 for N ~ 100 bodies); ABA is compared by its
backward error — Pinocchio's acceleration put into our inverse dynamics must give back the torque — since the
forward error of any solver is κ(M) times larger and κ(M) reaches 1e9 on iCub (links of 1e-8 kg m²) and 6e11 on the
repaired Romeo (1 mg links): the forward error is checked against max(1e-9, 1e-12 κ(M)) (1e-7 at κ = 1e5). The ABA
derivatives likewise by their backward error, M ∂q̈/∂x + ∂τ/∂x = 0 with Pinocchio's M and RNEA derivatives. Frames
and Jacobians: forward kinematics round-off on a chain of ~30 placements of a few metres (< 1e-13 m); the
centroidal map, the centre of mass's Jacobian and the RNEA derivatives are sums of O(N) products like M (1e-9
relative to their largest entry).

Skipped where ``pin`` or ``example-robot-data`` is not installed (both are test extras)."""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.bench.robots import robots_folder
from multibody.bench.urdf import pinocchio_state
from multibody.errors import ModelError, ModelWarning
from multibody.io.urdf import load_urdf

pin = pytest.importorskip("pinocchio")


ROOT = robots_folder()
FILES = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.urdf")) if ROOT is not None else []
TOL = 1e-9

#: the files Pinocchio loads that are refused here, and why (a part of our message)
REFUSED = {
    ("hector_description/robots/quadrotor_base.urdf", False): "the robot has no moving link",
    ("iris_description/robots/iris_simple.urdf", False): "the robot has no moving link",
}
#: the files refused as written that load with ``repair=True``, and what the plain load says
REPAIRED = {
    ("romeo_description/urdf/romeo.urdf", False): "link 'LFinger11Link' has no mass",
    ("romeo_description/urdf/romeo.urdf", True): "link 'LFinger11Link' has no mass",
    ("romeo_description/urdf/romeo_laas_small.urdf", False): "link 'l_gripper' has no mass",
    ("romeo_description/urdf/romeo_laas_small.urdf", True): "link 'l_gripper' has no mass",
}
#: every file with a fixed and a floating base: 138 cases, 35 s on a 2-core machine (most of it Pinocchio's parser)
CASES = [pytest.param(f, fb, id=f"{f}-{'floating' if fb else 'fixed'}") for f in FILES for fb in (False, True)]


def _pinocchio(path, floating_base):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if floating_base
                    else pin.buildModelFromUrdf(path))
    except Exception:    # (urdfdom's own error, printed on stderr)
        return None


def _sym(M):
    upper = np.triu(M)
    return upper + np.triu(upper, 1).T


@pytest.mark.skipif(ROOT is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("name, floating_base", CASES)
def test_robot_loads_as_in_pinocchio(name, floating_base):
    path = ROOT / name
    pm = _pinocchio(str(path), floating_base)
    if pm is None:
        pytest.skip("Pinocchio refuses this file too")
    pd = pm.createData()
    rng = np.random.default_rng(sum(map(ord, name)) + floating_base)
    refused = REFUSED.get((name, floating_base), REPAIRED.get((name, floating_base)))
    if refused:
        with pytest.raises(ModelError, match=refused), warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelWarning)
            load_urdf(path, floating_base=floating_base)
        if pm.nv:   # Pinocchio's own mass matrix is not positive definite: the dynamics are not defined there
            M = _sym(pin.crba(pm, pd, pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))))
            w = np.linalg.eigvalsh(M)
            assert w[0] <= 1e-12 * w[-1], w[:3]
        if (name, floating_base) in REFUSED:
            return
    repair = (name, floating_base) in REPAIRED
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)      # the inertias kept as written: tested elsewhere
        model = load_urdf(path, floating_base=floating_base, repair=repair)
        if repair:
            kinematic = load_urdf(path, floating_base=floating_base, kinematics_only=True)
    assert sorted(pm.names[1:]) == sorted(model.joint_names[1:]) and model.nv == pm.nv
    if repair:      # Pinocchio's model with our (bounded, repaired) inertias; the kinematics-only model refuses
        _same_inertias(model, pm)
        with pytest.raises(ModelError, match="read for its kinematics only, so crba is not defined: link '"):
            mb.crba(kinematic, kinematic.neutral())
    for _ in range(2):
        q = model.random_configuration(rng, scale=1.5)
        v = rng.uniform(-2, 2, model.nv)
        a = rng.uniform(-2, 2, model.nv)
        tau = rng.uniform(-20, 20, model.nv)
        qp, T, Td = pinocchio_state(model, pm, q, v)
        M = T @ mb.crba(model, q) @ T.T
        M_pin = _sym(pin.crba(pm, pd, qp))
        scale = np.abs(M).max()
        assert np.abs(M_pin - M).max() <= TOL * scale
        t_pin = pin.rnea(pm, pd, qp, T @ v, T @ a + Td @ v)
        t = T @ mb.rnea(model, q, v, a)
        assert np.abs(t_pin - t).max() <= TOL * (np.abs(t).max() + scale * np.abs(a).max())
        a_pin = pin.aba(pm, pd, qp, T @ v, T @ tau)
        a_back = T.T @ (a_pin - Td @ v)                          # Pinocchio's acceleration in our coordinates
        residual = T @ mb.rnea(model, q, v, a_back) - T @ tau
        assert np.abs(residual).max() <= TOL * (np.abs(tau).max() + scale * np.abs(a_back).max())
        # forward error: at most κ(M) times a backward error of 1e-12 (50 times N eps), and within TOL where κ <= 1e3
        bound = max(TOL, 1e-12 * np.linalg.cond(M)) * max(1.0, np.abs(a_back).max())
        if repair:          # (1 mg links: κ(M) = 6e11, the bound is void; the backward error above holds)
            bound = np.inf
        assert np.abs(a_back - mb.aba(model, q, v, tau)).max() <= bound
    _jacobians_centroidal_derivatives(model, pm, pd, q, v, tau)
    if repair:
        model = kinematic
    # the links' frames (bodies, and links merged into them) where Pinocchio puts its frames of those links
    qp, _, _ = pinocchio_state(model, pm, q)
    pin.framesForwardKinematics(pm, pd, qp)
    kin = mb.forward_kinematics(model, q)
    for name_f in [f.name for f in model.frames] + list(model.body_names[1:]):
        fid = pm.getFrameId(name_f, pin.FrameType.BODY)
        if fid == len(pm.frames):
            continue            # (the root link of a fixed base is Pinocchio's universe)
        f = model.frame(name_f)
        oMf = pd.oMf[fid]
        np.testing.assert_allclose(kin.R[f.body] @ f.placement.rotation, oMf.rotation, rtol=0, atol=1e-12,
                                   err_msg=name_f)
        np.testing.assert_allclose(kin.R[f.body] @ f.placement.translation + kin.p[f.body], oMf.translation, rtol=0,
                                   atol=1e-12, err_msg=name_f)


def _same_inertias(model, pm):
    """Give Pinocchio's joints the inertias of our bodies (mass, centre and inertia in the joint's frame, which is
    our body's kernel frame), for a file whose inertias we repaired."""
    for jid in range(1, pm.njoints):
        i = model.joint(pm.names[jid]).child
        pm.inertias[jid] = pin.Inertia(float(model.mass[i]), np.array(model.com[i], dtype=float),
                                       np.array(model.inertia_com[i], dtype=float))


def _jacobians_centroidal_derivatives(model, pm, pd, q, v, tau):
    """Every frame's Jacobian (local), the centroidal map, the centre of mass's Jacobian and the derivatives of RNEA
    and ABA against Pinocchio's at (q, v, τ) (module docstring)."""
    qp, T, Td = pinocchio_state(model, pm, q, v)

    def swap(X):
        return np.concatenate([X[3:6], X[0:3]], axis=0)

    def close(ours, ref):
        np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL * max(1.0, np.abs(ref).max(initial=0.0)))

    pin.computeJointJacobians(pm, pd, qp)
    pin.updateFramePlacements(pm, pd)
    J = mb.frame_jacobians(model, q)
    for k, f in enumerate(model.frame_names):
        fid = pm.getFrameId(f, pin.FrameType.BODY)
        if fid < len(pm.frames) and model.frame(f).body > 0:
            close(J[k], swap(pin.getFrameJacobian(pm, pd, fid, pin.LOCAL)) @ T)
    close(mb.centroidal_map(model, q), swap(pin.computeCentroidalMap(pm, pd, qp)) @ T)
    close(mb.com_jacobian(model, q), pin.jacobianCenterOfMass(pm, pd, qp) @ T)
    if Td.any():
        return                  # (planar joints: the derivatives' maps need Ṫ terms, compared in test_derivatives_*)
    a = mb.aba(model, q, v, tau)
    dq, dv, _ = mb.rnea_derivatives(model, q, v, a)
    p = [np.array(x) for x in pin.computeRNEADerivatives(pm, pd, qp, T @ v, T @ a)]
    close(T @ dq @ T.T, p[0])
    close(T @ dv @ T.T, p[1])
    da_dq, da_dv, _ = mb.aba_derivatives(model, q, v, tau)
    M = _sym(p[2])
    for da, dtau in ((da_dq, p[0]), (da_dv, p[1])):         # M ∂q̈/∂x + ∂τ/∂x = 0
        residual = M @ (T @ da @ T.T) + dtau
        scale = np.abs(dtau).max() + np.abs(M).max() * np.abs(da).max()
        assert np.abs(residual).max() <= TOL * max(1.0, scale)
