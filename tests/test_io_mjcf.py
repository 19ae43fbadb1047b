"""MJCF import (issue 36): MuJoCo's own models give MuJoCo's numbers.

* Every model of gymnasium's ``envs/mujoco/assets`` and dm_control's ``suite`` folder (the 33 files MuJoCo loads)
  loads, with MuJoCo's qpos/qvel order; at random states the mass matrix equals ``mj_fullM`` mapped by the velocity
  map of ``state_from_mujoco`` (M_ours = Jᵀ M_MuJoCo J) and the energies equal ``mj_energyVel``/``mj_energyPos``
  (``mjENBL_ENERGY``), armature and joint springs included. Bound 1e-10 (M) and 1e-9 (energies) relative, the
  issue's: both sides are sums of O(n) products of the same numbers (round-off ~n·eps ≈ 1e-14), and the inertias of
  mesh geoms are MuJoCo's to ~1e-12 (its own eigen-decomposition of them). The potential is compared as a difference
  from the reference state qpos0: bodies welded to the world weigh in MuJoCo's (a constant) and not here; the spring
  of a fixed tendon (dm_control's fish) is not carried (named in the file's warning) and taken out of MuJoCo's number.
* The contact-free models run 2 s with MuJoCo's RK4 at the model's step, limits and contacts disabled in MuJoCo and
  left out here (``limits=False``, ``contact=False``), fluid forces off in MuJoCo (the swimmers): both are the same
  RK4 map of the same ODE, so they agree to the round-off growth of 2 s (bound 1e-8, the issue's; measured 5e-14).
  dm_control's reacher is run at a tenth of its step: its damped wrist (time constant 5 ms) makes MuJoCo's RK4 at
  0.02 s unstable (h λ = −4.3), which amplifies any round-off difference, so both runs are compared where RK4 is
  stable.
* gymnasium's Hopper and Ant dropped from their initial state (qpos0 with gymnasium's reset noise of 5e-3, a fixed
  seed) with zero control come to rest with their base heights within 5 % of MuJoCo's: the Hopper with its joint
  stops, the Ant without (on both sides: its reference state is outside its ankles' ranges).
* A hand-written MJCF of the UR5 (``tests/mjcf/ur5.xml``, with defaults, child classes, several orientation forms, a
  tendon and actuators) gives the mass matrix and bias forces of example-robot-data's URDF of the same robot to 1e-12.
* What a file says that the Model does not carry is named in one warning per file; a malformed file, an entity, an
  include loop and a path out of the model's folder are each one ``ModelFileError``.

Skipped where mujoco, gymnasium or dm_control is not installed (test extras).
"""
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelWarning
from multibody.io.documents import ModelFileError
from multibody.io.mjcf import (MjcfWarning, actuator_forces, initial_state, keyframe, load_mjcf, parse_mjcf,
                               state_from_mujoco, state_to_mujoco)

mujoco = pytest.importorskip("mujoco")
gymnasium = pytest.importorskip("gymnasium")
dm_control = pytest.importorskip("dm_control")

GYM = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
SUITE = Path(dm_control.__file__).parent / "suite"
FILES = sorted(GYM.glob("*.xml")) + sorted(SUITE.glob("*.xml"))
HERE = Path(__file__).parent / "mjcf"


@pytest.fixture(scope="module", autouse=True)
def quiet_mujoco():
    """MuJoCo's compiler warnings (a deprecated attribute of two files) go nowhere: by default MuJoCo appends them to
    MUJOCO_LOG.TXT in the working directory."""
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: None)
    yield
    mujoco.set_mju_user_warning(previous)


def _mujoco_model(path, flags=0):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = mujoco.MjModel.from_xml_path(str(path))
    m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
    m.opt.disableflags |= flags
    return m


@pytest.fixture(scope="module")
def models():
    """{file name: (our Model, MuJoCo's model)} of the 33 files, each read once."""
    out = {}
    for path in FILES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelWarning)
            ours = load_mjcf(path, ctrl=None)
        out[f"{path.parent.name}/{path.name}"] = (ours, _mujoco_model(path))
    return out


def _random_qpos(m, rng):
    free, ball = int(mujoco.mjtJoint.mjJNT_FREE), int(mujoco.mjtJoint.mjJNT_BALL)
    qpos = m.qpos0.copy()
    for j in range(m.njnt):
        a, kind = m.jnt_qposadr[j], int(m.jnt_type[j])
        if kind not in (free, ball):
            qpos[a] += rng.uniform(-1.0, 1.0)
        else:
            k = 3 if kind == free else 0
            qpos[a:a + k] += rng.uniform(-1.0, 1.0, k)
            quat = rng.normal(size=4)
            qpos[a + k:a + k + 4] = quat / np.linalg.norm(quat)
    return qpos


def _velocity_map(model, q):
    """J with v_MuJoCo = J v (columns: state_to_mujoco of the unit velocities)."""
    return np.column_stack([state_to_mujoco(model, q, e)[1] for e in np.eye(model.nv)]) if model.nv else \
        np.zeros((0, 0))


def test_every_model_loads_in_mujocos_order(models):
    assert len(models) == len(FILES) == 33
    for name, (ours, mj) in models.items():
        assert (ours.nq, ours.nv) == (mj.nq, mj.nv), name
        for j in range(mj.njnt):
            jname = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_JOINT, j) or f"joint{j}"
            info = ours.joint(jname)
            assert (info.q_slice.start, info.v_slice.start) == (mj.jnt_qposadr[j], mj.jnt_dofadr[j]), (name, jname)
        np.testing.assert_allclose(ours.gravity, mj.opt.gravity if not mj.opt.disableflags &
                                   mujoco.mjtDisableBit.mjDSBL_GRAVITY else 0.0, rtol=0, atol=0)
        q0, v0 = initial_state(ours)
        np.testing.assert_allclose(q0, mj.qpos0, rtol=0, atol=1e-15)


def _tendon_spring_energy(mj, data):
    """The potential of MuJoCo's tendon springs (not carried here: named in the file's warning)."""
    k = mj.tendon_stiffness
    if not np.any(k):
        return 0.0
    lo, hi = mj.tendon_lengthspring[:, 0], mj.tendon_lengthspring[:, 1]
    L = data.ten_length
    stretch = np.where(L > hi, L - hi, np.where(L < lo, L - lo, 0.0))
    return 0.5 * float(np.sum(k * stretch * stretch))


def _potential(model, q):
    """Gravity and joint springs (what mj_energyPos counts of what the Model carries)."""
    V = mb.energy(model, q, np.zeros(model.nv))[1]
    for j in model.joints[1:]:
        if j.joint.linear_coordinates:
            s = j.v_slice
            V += 0.5 * float(np.sum(model.dof_stiffness[s] * (q[j.q_slice] - model.dof_rest[s]) ** 2))
    return V


def test_mass_matrix_and_energies_equal_mujocos(models):
    rng = np.random.default_rng(36)
    for name, (ours, mj) in models.items():
        data = mujoco.MjData(mj)
        mujoco.mj_forward(mj, data)
        V0_mj = data.energy[0] - _tendon_spring_energy(mj, data)
        V0 = _potential(ours, initial_state(ours)[0])
        for _ in range(3):
            data.qpos[:] = _random_qpos(mj, rng)
            data.qvel[:] = rng.normal(size=mj.nv)
            mujoco.mj_forward(mj, data)
            q, v = state_from_mujoco(ours, data.qpos, data.qvel)
            if ours.nv:
                M_mj = np.zeros((mj.nv, mj.nv))
                mujoco.mj_fullM(mj, data, M_mj)
                J = _velocity_map(ours, q)
                M = mb.crba(ours, q)
                assert np.abs(M - J.T @ M_mj @ J).max() <= 1e-10 * np.abs(M_mj).max(), name
            T = mb.energy(ours, q, v)[0]
            assert abs(T - data.energy[1]) <= 1e-9 * abs(data.energy[1]), name
            dV_mj = data.energy[0] - _tendon_spring_energy(mj, data) - V0_mj
            dV = _potential(ours, q) - V0
            assert abs(dV - dV_mj) <= 1e-9 * (abs(data.energy[0]) + abs(V0_mj) + T), name


def test_state_maps_are_inverse_and_carry_trajectories(models):
    ours, mj = models["assets/ant.xml"]
    rng = np.random.default_rng(1)
    qpos = np.array([_random_qpos(mj, rng) for _ in range(4)])
    qvel = rng.normal(size=(4, mj.nv))
    q, v = state_from_mujoco(ours, qpos, qvel)          # a trajectory: one state per row
    back = state_to_mujoco(ours, q, v)
    np.testing.assert_allclose(back[0], qpos, rtol=0, atol=0)
    np.testing.assert_allclose(back[1], qvel, rtol=0, atol=1e-15)
    # the free joint's velocity: [ω; v] in the body's axes here, (v in the world; ω in the body) in MuJoCo
    R = mb.forward_kinematics(ours, q[0]).R[ours.body_index("torso")] if hasattr(mb, "forward_kinematics") else None
    if R is not None:
        np.testing.assert_allclose(R @ v[0, 3:6], qvel[0, 0:3], rtol=0, atol=1e-14)
    np.testing.assert_array_equal(v[0, 0:3], qvel[0, 3:6])


def test_contact_free_models_follow_mujocos_rk4(models):
    cases = [("assets/inverted_pendulum.xml", 1), ("assets/inverted_double_pendulum.xml", 1),
             ("assets/reacher.xml", 1), ("assets/swimmer.xml", 1), ("suite/acrobot.xml", 1),
             ("suite/cartpole.xml", 1), ("suite/pendulum.xml", 1), ("suite/reacher.xml", 10),
             ("suite/swimmer.xml", 1)]
    rng = np.random.default_rng(7)
    off = mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    for name, split in cases:
        path = (GYM if name.startswith("assets") else SUITE) / name.split("/")[1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ModelWarning)
            ours = load_mjcf(path, limits=False, contact=False)
        mj = _mujoco_model(path, off)
        mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
        mj.opt.density = mj.opt.viscosity = 0.0
        h = mj.opt.timestep / split
        mj.opt.timestep = h
        data = mujoco.MjData(mj)
        data.qpos[:] = mj.qpos0 + rng.uniform(-0.3, 0.3, mj.nq)
        data.qvel[:] = rng.uniform(-0.5, 0.5, mj.nv)
        q0, v0 = state_from_mujoco(ours, data.qpos, data.qvel)
        n = int(round(2.0 / h))
        Q = [data.qpos.copy()]
        for _ in range(n):
            mujoco.mj_step(mj, data)
            Q.append(data.qpos.copy())
        run = mb.simulate(ours, q0, v0, n * h, method="RK4", h=h, output_every=1)
        assert np.abs(run.q - np.array(Q)).max() <= 1e-8, name


def _drop(name, seconds, h, limits):
    """(MuJoCo's, ours) base height after ``seconds`` of a drop from qpos0 + gymnasium's reset noise, and the largest
    final speeds (ours, MuJoCo's); ``limits``: the joints' stops on both sides, or on neither."""
    path = GYM / f"{name}.xml"
    mj = _mujoco_model(path, 0 if limits else mujoco.mjtDisableBit.mjDSBL_LIMIT)
    data = mujoco.MjData(mj)
    data.qpos[:] = mj.qpos0 + np.random.default_rng(0).uniform(-5e-3, 5e-3, mj.nq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        ours = load_mjcf(path, limits=limits)
    q0, v0 = state_from_mujoco(ours, data.qpos)
    for _ in range(int(round(seconds / mj.opt.timestep))):
        mujoco.mj_step(mj, data)
    beyond = ours.unilateral.start_problems(ours, q0, v0, 0.0) if limits else []
    with warnings.catch_warnings(record=True) as caught:  # the reset noise puts the Hopper's knee beyond its range
        warnings.simplefilter("always", ModelWarning)
        run = mb.simulate(ours, q0, v0, seconds, contact="stepping", h=h, n_out=11)
    said = [str(w.message).split(": the stepping")[0] for w in caught]
    assert said == [f"model '{name}': {m}" for m, _ in beyond[:1]], name
    assert run.info.get("start_outside_stops", []) == [m for m, _ in beyond]
    assert run.info["solves"]["step"]["unconverged"] == 0, name
    k = {"hopper": 1, "ant": 2}[name]          # rootz of the hopper, the torso's z of the ant
    return data.qpos[k], run.q[-1, k], float(np.abs(run.v[-1]).max()), float(np.abs(data.qvel).max())


@pytest.mark.parametrize("name, seconds, h, limits", [("hopper", 5.0, 2e-3, True), ("ant", 5.0, 1e-2, False)])
def test_hopper_and_ant_land_and_rest_at_mujocos_height(name, seconds, h, limits):
    """The Hopper with its joint stops (MuJoCo's limits on too). The Ant without them on either side: its reference
    state puts its ankles at 0, outside their ranges (30° to 70°), which a stop cannot start from and MuJoCo's soft
    limits take 20 s to undo."""
    theirs, ours, speed, their_speed = _drop(name, seconds, h, limits)
    assert speed < 1e-3 and their_speed < 1e-3            # both at rest (the drop: metres per second)
    assert abs(ours - theirs) <= 0.05 * theirs


def test_hand_written_ur5_equals_its_urdf():
    from multibody.bench.robots import robots_folder

    root = robots_folder()
    if root is None:
        pytest.skip("example-robot-data is not installed")
    urdf = mb.load_model(root / "ur_description" / "urdf" / "ur5_robot.urdf")
    mjcf = mb.load_model(HERE / "ur5.xml")
    assert mjcf.joint_names == urdf.joint_names
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, v = rng.uniform(-3.0, 3.0, 6), rng.normal(size=6)
        M = mb.crba(urdf, q)
        assert np.abs(mb.crba(mjcf, q) - M).max() <= 1e-12 * np.abs(M).max()
        b = mb.rnea(urdf, q, v, np.zeros(6))
        assert np.abs(mb.rnea(mjcf, q, v, np.zeros(6)) - b).max() <= 1e-12 * np.abs(b).max()
    # its actuators: the position servo at ctrl = 0 is a PD controller; as inputs they are MuJoCo's forces
    assert [c.name for c in mjcf.controllers] == ["elbow"]
    mj = _mujoco_model(HERE / "ur5.xml")
    data = mujoco.MjData(mj)
    for _ in range(3):
        data.qpos[:], data.qvel[:], data.ctrl[:] = rng.uniform(-3, 3, 6), rng.normal(size=6), rng.uniform(-200, 200, 4)
        mujoco.mj_forward(mj, data)
        tau = actuator_forces(mjcf, data.ctrl, data.qpos, data.qvel)
        np.testing.assert_allclose(tau, data.qfrc_actuator, rtol=0, atol=1e-12 * np.abs(data.qfrc_actuator).max())
    q, v, ctrl = keyframe(mjcf, "home")
    np.testing.assert_array_equal(q, mj.key_qpos[0])


def test_actuator_forces_equal_mujocos(models):
    """Joint and fixed-tendon transmissions, gains and biases; activation dynamics taken at act = ctrl."""
    rng = np.random.default_rng(3)
    for name in ("suite/quadruped.xml", "assets/humanoid.xml", "suite/fish.xml", "suite/manipulator.xml"):
        ours, mj = models[name]
        data = mujoco.MjData(mj)
        for _ in range(3):
            data.qpos[:] = _random_qpos(mj, rng)
            data.qvel[:] = rng.normal(size=mj.nv)
            data.ctrl[:] = rng.uniform(-1.0, 1.0, mj.nu)
            for i in range(mj.nu):     # a filter's activation at its (clamped) control, which our forces take
                if mj.actuator_actadr[i] >= 0:
                    data.act[mj.actuator_actadr[i]] = np.clip(data.ctrl[i], *mj.actuator_ctrlrange[i])
            mujoco.mj_forward(mj, data)
            q, v = state_from_mujoco(ours, data.qpos, data.qvel)
            tau = actuator_forces(ours, data.ctrl, q, v)
            J = _velocity_map(ours, q)
            carried = [a["transmission"] is not None for a in ours.metadata["mjcf"]["actuators"]]
            if all(carried):
                expected = J.T @ data.qfrc_actuator
                np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_keyframes_and_reference_state(models):
    ours, mj = models["assets/humanoid.xml"]
    assert len(ours.metadata["mjcf"]["keyframes"]) == mj.nkey == 5
    for k in range(mj.nkey):
        q, v, ctrl = keyframe(ours, k)
        np.testing.assert_array_equal(q, mj.key_qpos[k])
        assert q.shape == (ours.nq,) and ctrl.shape == (mj.nu,)


def test_collision_pairs_follow_mujocos_filters(models):
    """The pairs detection tries are MuJoCo's candidate pairs — collision bits, bodies welded together, a body and
    its parent, ``<exclude>`` — among the geoms carried (planes, spheres, capsules, cylinders, boxes, meshes)."""
    from multibody.contact.collision_sets import pack_collisions

    for name in ("assets/ant.xml", "assets/humanoid.xml", "suite/quadruped.xml", "suite/finger.xml",
                 "suite/humanoid_CMU.xml"):
        ours, mj = models[name]
        cs = pack_collisions(ours)
        got = {frozenset((cs.names[a], cs.names[b])) for a, b in cs.pairs}
        carried = set(cs.names)
        excluded = {frozenset(divmod(int(s), 1 << 16)) for s in mj.exclude_signature}     # MuJoCo's body pairs
        expected = set()
        weld, parent = mj.body_weldid, mj.body_parentid
        for g1 in range(mj.ngeom):
            for g2 in range(g1 + 1, mj.ngeom):
                n1 = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g1) or f"geom{g1}"
                n2 = mujoco.mj_id2name(mj, mujoco.mjtObj.mjOBJ_GEOM, g2) or f"geom{g2}"
                if n1 not in carried or n2 not in carried:
                    continue
                b1, b2 = weld[mj.geom_bodyid[g1]], weld[mj.geom_bodyid[g2]]
                if b1 == b2 or (b1 and b2 and (b1 == weld[parent[b2]] or b2 == weld[parent[b1]])):
                    continue
                if not (mj.geom_contype[g1] & mj.geom_conaffinity[g2] or mj.geom_contype[g2] & mj.geom_conaffinity[g1]):
                    continue
                bodies = frozenset((int(mj.geom_bodyid[g1]), int(mj.geom_bodyid[g2])))
                if bodies in excluded or mj.geom_type[g1] == mj.geom_type[g2] == int(mujoco.mjtGeom.mjGEOM_PLANE):
                    continue
                expected.add(frozenset((n1, n2)))
        assert got == expected, name


def test_unsupported_elements_are_named_once(tmp_path):
    text = """<mujoco model="odds">
      <option density="1.2" viscosity="0.01"/>
      <asset><hfield name="terrain" nrow="2" ncol="2" size="1 1 0.1 0.1"/></asset>
      <worldbody>
        <light pos="0 0 3"/>
        <body name="a"><joint name="j" type="hinge" frictionloss="0.3"/>
          <geom type="ellipsoid" size="0.1 0.2 0.3"/><camera name="c"/></body>
        <body name="b" pos="1 0 0"><joint name="k" type="ball" stiffness="2"/><geom size="0.1"/></body>
      </worldbody>
      <tendon><fixed name="t" stiffness="5"><joint joint="j" coef="1"/></fixed></tendon>
      <sensor><jointpos joint="j"/></sensor>
    </mujoco>"""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = parse_mjcf(text, "odds.xml")
    found = [w for w in caught if issubclass(w.category, MjcfWarning)]
    assert len(found) == 1 and model.nq == 5
    message = str(found[0].message)
    for what in ("option@density", "option@viscosity", "asset/hfield", "joint@frictionloss", "geom of type ellipsoid",
                 "joint@stiffness of a ball joint", "tendon@stiffness", "<sensor>", "camera",
                 "light"):
        assert what in message, what
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)     # a file that says nothing uncarried: no warning
        parse_mjcf('<mujoco><worldbody><body><joint/><geom size=".1"/></body></worldbody></mujoco>')


@pytest.mark.parametrize("text, files, what", [
    ("<mujoco><worldbody><body></worldbody></mujoco>", {}, "XML"),
    ('<!DOCTYPE m [<!ENTITY x "y">]><mujoco/>', {}, "document type definition"),
    ('<mujoco><include file="a.xml"/></mujoco>', {"a.xml": '<mujoco><include file="b.xml"/></mujoco>',
                                                    "b.xml": '<mujoco><include file="a.xml"/></mujoco>'}, "loop"),
    ('<mujoco><include file="../outside.xml"/></mujoco>', {}, "outside the model's folder"),
    ("<mujoco>" + '<include file="a.xml"/>' * 40 + "</mujoco>",
     {"a.xml": "<mujoco>" + '<include file="b.xml"/>' * 40 + "</mujoco>", "b.xml": "<mujoco/>"}, "1000 files"),
    ('<mujoco><asset><mesh file="/etc/hosts"/></asset></mujoco>', {}, "outside the model's folder"),
    ('<mujoco><worldbody><body><replicate count="2"/></body></worldbody></mujoco>', {}, "replicate"),
    ('<mujoco><worldbody><body quat="1 0 0 0" euler="0 0 1"><joint/></body></worldbody></mujoco>', {}, "one orientation"),
])
def test_bad_files_are_one_clear_error(tmp_path, text, files, what):
    folder = tmp_path / "model"
    folder.mkdir()
    (tmp_path / "outside.xml").write_text("<mujoco/>")
    for name, content in files.items():
        (folder / name).write_text(content)
    path = folder / "model.xml"
    path.write_text(text)
    with pytest.raises(ModelFileError) as info:
        load_mjcf(path)
    assert what in str(info.value) and "\n" not in str(info.value)


def test_orientations_equal_mujocos_compiled_poses():
    """Every orientation form and ``<frame>``, with the compiler's angle unit and euler sequences."""
    forms = ['quat="0.3 0.4 -0.5 0.7"', 'axisangle="1 2 3 40"', 'euler="10 -20 30"', 'xyaxes="1 1 0 -1 2 0.5"',
             'zaxis="0.2 -1 0.4"']
    for seq in ("xyz", "ZYX", "xYz"):
        bodies = "".join(f'<body name="b{k}" pos="{k} 0.1 0.2" {f}><joint name="j{k}" axis="0 1 1" ref="15"/>'
                         f'<geom size="0.1"/></body>' for k, f in enumerate(forms))
        text = (f'<mujoco><compiler eulerseq="{seq}"/><worldbody><frame pos="0 0 1" euler="0 0 45">{bodies}</frame>'
                f'</worldbody></mujoco>')
        ours = parse_mjcf(text)
        mj = mujoco.MjModel.from_xml_string(text)
        data = mujoco.MjData(mj)
        data.qpos[:] = np.linspace(-1, 1, mj.nq)
        mujoco.mj_kinematics(mj, data)
        frames = mb.forward_kinematics(ours, data.qpos.copy())
        for k in range(len(forms)):
            i = ours.body_index(f"b{k}")
            np.testing.assert_allclose(frames.R[i], data.xmat[k + 1].reshape(3, 3), rtol=0, atol=1e-14)
            np.testing.assert_allclose(frames.p[i], data.xpos[k + 1], rtol=0, atol=1e-14)


def test_equality_constraints_hold_in_the_reference_state():
    text = """<mujoco><worldbody>
      <body name="a" pos="0 0 1"><joint name="ja" axis="0 1 0"/><geom fromto="0 0 0 1 0 0" size=".05" type="capsule"/>
        <body name="b" pos="1 0 0"><joint name="jb" axis="0 1 0"/><geom fromto="0 0 0 1 0 0" size=".05" type="capsule"/>
        </body></body>
      <body name="c" pos="2 0 1"><joint name="jc" axis="0 1 0"/><joint name="jd" type="slide" axis="1 0 0"/>
        <geom size=".1"/></body>
    </worldbody>
    <tendon><fixed name="t"><joint joint="ja" coef="1"/><joint joint="jb" coef="2"/></fixed></tendon>
    <equality><connect name="pin" body1="b" body2="c" anchor="1 0 0"/>
      <joint name="follow" joint1="jb" joint2="ja" polycoef="0 -1 0.2 0 0"/></equality>
    </mujoco>"""
    from multibody.rows.constraint_rows import ConstraintRows

    model = parse_mjcf(text)
    assert [c.name for c in model.constraints] == ["pin", "follow"]
    q0, v0 = initial_state(model)
    f, G, gamma = ConstraintRows(model).evaluate(q0, v0)
    assert f.shape == (4,) and np.abs(f).max() <= 1e-15        # the ball joint's 3 rows and the coupling's 1
    q = q0 + np.array([0.1, 0.0, 0.0, 0.0])
    f = ConstraintRows(model).evaluate(q, v0)[0]
    assert f[3] == pytest.approx(0.0 + 0.1 - 0.2 * 0.01, abs=1e-15)       # jb − (−(ja) + 0.2 ja²) at ja = 0.1


def test_load_model_cli_and_public_names(tmp_path, capsys):
    from multibody.cli import main

    path = GYM / "inverted_pendulum.xml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        assert mb.load_model(path).nq == 2 and mb.io.load_mjcf(path).nv == 2
        assert main(["validate", str(HERE / "ur5.xml")]) == 0
        assert main(["run", str(path), "--t-end", "0.2", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert "valid: model 'ur5', 6 bodies" in out and (tmp_path / "run" / "result.npz").is_file()


def test_model_file_keeps_collision_bits_and_filters(tmp_path):
    """An MJCF model saved as a model file and read back: the same arrays, collision elements (with their bits) and
    contact filters (humanoid_CMU: the exclusions of bodies with several joints and its own <exclude>s)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        model = load_mjcf(SUITE / "humanoid_CMU.xml")
    mb.io.save_model(model, tmp_path / "cmu.yaml")
    back = mb.load_model(tmp_path / "cmu.yaml")
    assert all(np.array_equal(a, b) for a, b in zip(model.arrays(), back.arrays()))
    assert model.contact_exclude == back.contact_exclude and len(model.contact_exclude) > 0
    for a, b in zip(model.collisions, back.collisions, strict=True):
        assert (a.name, a.body, a.contype, a.conaffinity, a.friction) == (b.name, b.body, b.contype, b.conaffinity,
                                                                         b.friction)
        np.testing.assert_array_equal(a.placement.translation, b.placement.translation)


def test_a_constant_control_as_efforts_and_controllers():
    """``load_mjcf(ctrl=u)``: the efforts (motors, through joints and a tendon) and the PD controller (the position
    servo) of the Model give the actuators' forces at u (``actuator_forces``) at any state."""
    ctrl = {"pan": 0.5, "lift": 0.3, "elbow": 0.2, "wrists": -0.4}
    held = load_mjcf(HERE / "ur5.xml", ctrl=ctrl)
    inputs = load_mjcf(HERE / "ur5.xml", ctrl=None)
    assert not inputs.controllers and not np.any(inputs.dof_effort)
    rng = np.random.default_rng(11)
    u = [ctrl[a["name"]] for a in inputs.metadata["mjcf"]["actuators"]]
    for _ in range(3):
        q, v = rng.uniform(-3.0, 3.0, 6), rng.normal(size=6)
        tau = held.dof_effort + mb.controller_torques(held, q, v)
        np.testing.assert_allclose(tau, actuator_forces(inputs, u, q, v), rtol=0, atol=1e-12)
