"""Contact: Solo12 standing on the ground under a joint PD posture controller, here and in MuJoCo.

The quadruped of example-robot-data (``solo_description/robots/solo12.urdf``, loaded by ``multibody.io.load_urdf``
with a floating base) gets a sphere of radius ``FOOT_RADIUS`` centred on each of its four foot frames (``FL_FOOT``,
``FR_FOOT``, ``HL_FOOT``, ``HR_FOOT``) and a floor (``Model.with_collisions``; its mesh collisions are dropped),
Coulomb friction 1. A PD law holds the joints at the "straight_standing" posture of the robot's SRDF
(``τ = KP (q_ref − q) − KD q̇``); it is a compiled torque law ``law(t, q, v, out)`` called inside the loop.

MuJoCo gets the same robot from the same URDF (its meshes removed): a free joint on ``base_link``, the same foot
spheres on the foot links, a ground plane, friction 1 (sliding), the same PD law as actuators inside its step
(gain KP, biases −KP q and −KD q̇), its default soft contacts, Newton solver and semi-implicit Euler, with elliptic
friction cones and ``impratio = 100``, which its documentation recommends to make friction hard ("to prevent
slip"): with the default pyramidal cones and impratio 1 its regularized friction lets the feet creep apart under
the legs' steady tangential forces — 15 mm in 5 s, the base 12 mm lower (``MUJOCO_OPTIONS = {}`` shows it).

:func:`solo12_standing` runs ours (``contact="stepping"``) and reports the base height, the feet's horizontal slide
and the penetration; :func:`solo12_mujoco_standing` the same for MuJoCo; :func:`bench_contact` times both in one
process (interleaved rounds of process time per simulated second) and prints the ratios.
"""
import importlib.metadata as md
import re
import time
from pathlib import Path

import numpy as np
from numba import njit

#: the foot spheres' radius (m): the foot mesh of the robot is a ball of 16 mm about the foot frame
FOOT_RADIUS = 0.016
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
#: the PD gains (N m/rad, N m s/rad) and the posture ("straight_standing" of solo.srdf), joint by joint
KP, KD = 6.0, 0.3
POSTURE = {"FL_HAA": 0.0, "FL_HFE": 0.8, "FL_KFE": -1.6, "FR_HAA": 0.0, "FR_HFE": 0.8, "FR_KFE": -1.6,
           "HL_HAA": 0.0, "HL_HFE": -0.8, "HL_KFE": 1.6, "HR_HAA": 0.0, "HR_HFE": -0.8, "HR_KFE": 1.6}
#: the posture in the order of the model's joints (after the free joint: 7 coordinates, 6 velocities)
Q_REF = np.array([POSTURE[j] for j in ("FL_HAA", "FL_HFE", "FL_KFE", "FR_HAA", "FR_HFE", "FR_KFE", "HL_HAA", "HL_HFE",
                                       "HL_KFE", "HR_HAA", "HR_HFE", "HR_KFE")])
#: height of the foot spheres' lowest points above the floor at the start (m)
DROP = 1e-3
#: MuJoCo's options changed from its defaults (``mjOption`` fields; the module docstring says why)
MUJOCO_OPTIONS = {"cone": "elliptic", "impratio": 100.0}


@njit(cache=True)
def posture_law(t, q, v, out):
    """τ = KP (q_ref − q) − KD q̇ on the twelve joints (a compiled torque law of ``simulate``)."""
    for k in range(12):
        out[6 + k] = KP * (Q_REF[k] - q[7 + k]) - KD * v[6 + k]


def solo12_path():
    """(URDF file, package folder) of Solo12 in example-robot-data, or None when it is not installed."""
    try:
        root = Path(md.distribution("example-robot-data").locate_file("cmeel.prefix/share"))
    except md.PackageNotFoundError:
        return None
    urdf = root / "example-robot-data/robots/solo_description/robots/solo12.urdf"
    return (urdf, root) if urdf.is_file() else None


def solo12_model(radius=FOOT_RADIUS, friction=1.0):
    """Solo12 with a floating base, a sphere at each foot frame and a floor (its mesh collisions dropped)."""
    import multibody as mb

    urdf, _ = solo12_path()
    model = mb.io.load_urdf(urdf, floating_base=True, limits=False)   # its ±10 rad limits: data, not stops
    return model.with_collisions([("floor", "ground", mb.HalfSpace(), None, friction)],
                                 spheres={f: radius for f in FEET}, friction=friction, keep=False)


def standing_state(model, radius=FOOT_RADIUS):
    """q0: the posture, the base level, its height such that the lowest foot sphere is DROP above the floor."""
    import multibody as mb

    q = model.neutral()
    names = model.coordinate_names()
    for joint, value in POSTURE.items():
        q[names.index(f"{joint}.angle")] = value
    K = mb.forward_kinematics(model, q)
    feet = [K.p[f.body] + K.R[f.body] @ f.placement.translation for f in map(model.frame, FEET)]
    q[2] = -min(p[2] for p in feet) + radius + DROP
    return q


def foot_positions(model, Q):
    """(n, 4, 3): the foot frames' origins along the states Q."""
    import multibody as mb

    frames = [model.frame(f) for f in FEET]
    out = np.empty((len(Q), len(FEET), 3))
    for s, q in enumerate(Q):
        K = mb.forward_kinematics(model, q)
        for j, f in enumerate(frames):
            out[s, j] = K.p[f.body] + K.R[f.body] @ f.placement.translation
    return out


def solo12_standing(t_end=5.0, h=1e-3, model=None, n_out=51):
    """Ours: the run and its summary (base height at the end, the feet's largest horizontal slide from the first
    output after landing (t = 0.5 s) to the end, the deepest penetration, the process time per simulated second)."""
    import multibody as mb

    model = solo12_model() if model is None else model
    q0 = standing_state(model)
    res = mb.simulate(model, q0, None, t_end, h=h, contact="stepping", tau=posture_law, n_out=n_out)
    return res, summary(model, res.t, res.q, res.contacts.distance if res.contacts is not None else np.zeros(0),
                        res.info["cpu_seconds"] / t_end)


def summary(model, t, Q, distances, cpu_per_second):
    feet = foot_positions(model, Q)
    k = int(np.searchsorted(t, 0.5))
    slide = float(np.max(np.linalg.norm(feet[k:, :, :2] - feet[k, :, :2], axis=2)))
    return {"base_height": float(Q[-1, 2]), "slide": slide,
            "penetration": float(max(0.0, -np.min(distances))) if len(distances) else 0.0,
            "feet_height": float(np.min(feet[-1, :, 2])), "cpu_per_second": cpu_per_second}


# ---- MuJoCo --------------------------------------------------------------------------------------------------
def mujoco_solo12(h=1e-3, radius=FOOT_RADIUS, friction=1.0):
    """(MjModel, MjData, qpos address of each of our coordinates) of Solo12 in MuJoCo (module docstring)."""
    import mujoco

    urdf, _ = solo12_path()
    text = Path(urdf).read_text()
    text = re.sub(r"<visual>.*?</visual>|<collision>.*?</collision>", "", text, flags=re.S)
    text = text.replace("<robot name=\"solo\">", "<robot name=\"solo\"><mujoco><compiler discardvisual=\"true\" "
                        "fusestatic=\"false\" balanceinertia=\"false\"/></mujoco>", 1)
    spec = mujoco.MjSpec.from_string(text)
    spec.option.timestep = h
    for key, value in MUJOCO_OPTIONS.items():
        setattr(spec.option, key, mujoco.mjtCone.mjCONE_ELLIPTIC if value == "elliptic" else value)
    base = spec.body("base_link")
    base.add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], friction=[friction, 0.005, 1e-4])
    for foot in FEET:
        spec.body(foot).add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[radius, 0, 0],
                                 friction=[friction, 0.005, 1e-4])
    for joint, value in POSTURE.items():
        act = spec.add_actuator(name=joint, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT)
        act.gaintype = mujoco.mjtGain.mjGAIN_FIXED
        act.biastype = mujoco.mjtBias.mjBIAS_AFFINE
        act.gainprm[0] = KP
        act.biasprm[0:3] = [0.0, -KP, -KD]
    m = spec.compile()
    d = mujoco.MjData(m)
    d.ctrl[:] = [POSTURE[m.actuator(a).name] for a in range(m.nu)]
    return m, d


def mujoco_state(m, model, q0):
    """MuJoCo's qpos of our q0 (the free joint's pose, the joints by name)."""
    qpos = np.zeros(m.nq)
    qpos[:7] = q0[:7]
    names = model.coordinate_names()
    for j in range(m.njnt):
        name = m.joint(j).name
        if f"{name}.angle" in names:
            qpos[m.jnt_qposadr[j]] = q0[names.index(f"{name}.angle")]
    return qpos


def solo12_mujoco_standing(t_end=5.0, h=1e-3, model=None, n_out=51, built=None):
    """MuJoCo: the base height, slide and penetration as :func:`solo12_standing` reports them (our model's
    kinematics evaluated on MuJoCo's joint angles), and its process time per simulated second of the stepping
    loop alone. ``built``: the (MjModel, MjData) of :func:`mujoco_solo12` at this ``h``, reset here (its data are
    overwritten), so that a timed call, like ours, does not compile its model."""
    import mujoco

    model = solo12_model() if model is None else model
    m, d = mujoco_solo12(h) if built is None else built
    mujoco.mj_resetData(m, d)
    d.ctrl[:] = [POSTURE[m.actuator(a).name] for a in range(m.nu)]
    q0 = standing_state(model)
    d.qpos[:] = mujoco_state(m, model, q0)
    mujoco.mj_forward(m, d)
    steps = int(round(t_end / h))
    every = steps // (n_out - 1)
    t, Q, depth = [0.0], [q0.copy()], []
    names = model.coordinate_names()
    back = [(names.index(f"{m.joint(j).name}.angle"), m.jnt_qposadr[j]) for j in range(1, m.njnt)]
    cpu = time.process_time()
    for k in range(n_out - 1):
        mujoco.mj_step(m, d, nstep=every)
        q = np.empty(model.nq)
        q[:7] = d.qpos[:7]
        for ours, theirs in back:
            q[ours] = d.qpos[theirs]
        t.append(d.time)
        Q.append(q)
        depth += [d.contact[c].dist for c in range(d.ncon)]
    cpu = time.process_time() - cpu
    return summary(model, np.array(t), np.array(Q), np.array(depth), cpu / t_end)


def bench_rimless_wheel(t_end=10.0, h=1e-4, stiffness=1e7, rounds=3, verbose=True):
    """The rimless wheel (``systems/rimless_wheel.py``) rolling down its slope with the compliant model's implicit
    step (``contact="compliant", implicit=True``, plastic impacts: damping 1000 s/m): its process time per
    simulated second (the median of ``rounds`` runs after one that compiles) and its mean step period over ten
    settled steps against McGeer's closed form (tests/test_contact_implicit.py checks it)."""
    import multibody as mb
    from multibody.systems.rimless_wheel import (WHEEL, mean_step_period, rimless_wheel, rimless_wheel_period,
                                                 rimless_wheel_start)

    model = rimless_wheel(**WHEEL)
    q0, v0 = rimless_wheel_start(**WHEEL)
    n_out = int(round(t_end / 1e-3)) + 1

    def run():
        return mb.simulate(model, q0, v0, t_end, h=h, contact="compliant", implicit=True, stiffness=stiffness,
                           damping=1000.0, n_out=n_out)

    res = run()
    cpu = []
    for _ in range(rounds):
        start = time.process_time()
        run()
        cpu.append((time.process_time() - start) / t_end)
    error = mean_step_period(res, WHEEL["n"]) / rimless_wheel_period(**WHEEL) - 1.0
    row = {"h": h, "stiffness": stiffness, "cpu_per_s": float(np.median(cpu)), "period_error": float(error)}
    if verbose:
        print(f"\nRimless wheel ({WHEEL['n']} spokes of {WHEEL['length']:g} m, slope {WHEEL['slope']:g} rad), "
              f"contact='compliant', implicit=True, stiffness {stiffness:g}, h = {h:g} s: CPU s per simulated s "
              f"{row['cpu_per_s']:.3f}, step period {error:+.2e} from McGeer's closed form.")
    return row


def bench_contact(t_end=5.0, steps=(1e-3, 2e-3), rounds=5, verbose=True):
    """Solo12 standing for ``t_end`` s, ours against MuJoCo at each step size: the summaries, and the process
    time per simulated second of each whole call in interleaved rounds, both models built before (median, and the
    ratio's median and range), and the ratio of their stepping loops alone; then the rimless wheel of
    :func:`bench_rimless_wheel`."""
    from multibody.bench.timing import fmt_spread, interleaved, spread

    wheel = bench_rimless_wheel(verbose=verbose)
    if solo12_path() is None:
        print("example-robot-data is not installed: no Solo12")
        return {}
    try:
        import mujoco
    except ImportError:
        mujoco = None
    model = solo12_model()
    rows = []
    for h in steps:
        res, ours = solo12_standing(t_end, h, model)
        row = {"h": h, "ours": ours}
        loops = ([], [])      # each call's stepping loop alone (process time per simulated second)
        calls = [lambda h=h: loops[0].append(solo12_standing(t_end, h, model)[1]["cpu_per_second"])]
        if mujoco is not None:
            built = mujoco_solo12(h)
            row["mujoco"] = solo12_mujoco_standing(t_end, h, model, built=built)
            calls.append(lambda h=h: loops[1].append(solo12_mujoco_standing(t_end, h, model,
                                                                            built=built)["cpu_per_second"]))
        times = interleaved(calls, 1, rounds) / t_end
        row["ours_cpu_per_s"] = spread(times[:, 0])[0]
        if mujoco is not None:
            row["mujoco_cpu_per_s"] = spread(times[:, 1])[0]
            row["ratio"] = fmt_spread(times[:, 0] / times[:, 1])
            row["loop_ratio"] = fmt_spread(np.array(loops[0]) / np.array(loops[1]))
        rows.append(row)
    if verbose:
        print("| h (ms) | base height ours / MuJoCo (mm) | feet slide ours / MuJoCo (mm) | penetration ours / MuJoCo "
              "(mm) | CPU s per simulated s ours / MuJoCo | ratio ours/MuJoCo | stepping loops alone |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            o, mj = r["ours"], r.get("mujoco")
            two = (lambda key: f"{1e3 * o[key]:.3f} / {1e3 * mj[key]:.3f}" if mj else f"{1e3 * o[key]:.3f} / n/a")
            cpu = f"{r['ours_cpu_per_s']:.4f} / " + (f"{r['mujoco_cpu_per_s']:.4f}" if mj else "n/a")
            print(f"| {1e3 * r['h']:g} | {two('base_height')} | {two('slide')} | {two('penetration')} | {cpu} | "
                  f"{r.get('ratio', 'n/a')} | {r.get('loop_ratio', 'n/a')} |")
        print(f"\nSolo12 standing {t_end:g} s under a joint PD posture law (KP {KP}, KD {KD}), foot spheres of "
              f"{1e3 * FOOT_RADIUS:g} mm, friction 1: ours contact='stepping' (a compiled torque law), MuJoCo "
              f"{getattr(mujoco, '__version__', 'n/a')} with the law as actuators, options {MUJOCO_OPTIONS} (else its "
              "defaults). Process time of whole "
              "runs, each model built before (ours: simulate; MuJoCo: reset, mj_step in blocks), interleaved rounds: "
              "median and range of the ratio; then of the stepping loops alone (ours: the Result's cpu_seconds; "
              "MuJoCo: its mj_step calls).")
    return rows + [wheel]


# ---- many runs: simulate_batch against mujoco.rollout -------------------------------------------------------------
def solo12_posture_model(radius=FOOT_RADIUS, friction=1.0):
    """Solo12 as a user loads it: its URDF limits as stops (the default), the foot spheres and floor of
    :func:`solo12_model`, the posture held by a ``mb.JointPD`` controller (the law of :func:`posture_law`)."""
    import multibody as mb

    urdf, _ = solo12_path()
    model = mb.load_model(str(urdf), floating_base=True)
    model = model.with_collisions([("floor", "ground", mb.HalfSpace(), None, friction)],
                                  spheres={f: radius for f in FEET}, friction=friction, keep=False)
    return model.with_controllers({"posture": mb.JointPD(KP, KD, target=Q_REF, gravity_compensation=False)})


def drop_heights(runs, seed=0, highest=0.05):
    """The random extra drop heights (m) of the runs of :func:`bench_contact_batch`."""
    return np.random.default_rng(seed).uniform(0.0, highest, runs)


def bench_contact_batch(runs=1000, t_end=5.0, h=1e-3, threads=2, chunk=100, verbose=True):
    """``runs`` Solo12 standing runs with random drop heights in one ``simulate_batch`` call (the model of
    :func:`solo12_posture_model`: stops, a JointPD posture, foot contacts) against ``mujoco.rollout`` of the same
    runs on ``threads`` threads (its twin of :func:`mujoco_solo12`, the same initial states; its outputs, every step
    of every run, taken ``chunk`` runs at a time to bound their memory), in one process: the process time per run
    of each and their ratio, and the largest difference of the final base heights."""
    import numba

    import multibody as mb

    if solo12_path() is None:
        print("example-robot-data is not installed: no Solo12")
        return {}
    model = solo12_posture_model()
    q0 = standing_state(model)
    Q0 = np.tile(q0, (runs, 1))
    Q0[:, 2] += drop_heights(runs)
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    mb.simulate_batch(model, Q0[:2], None, 10 * h, h=h, contact="stepping", n_out=2)    # compiled before timing
    cpu = time.process_time()
    ours = mb.simulate_batch(model, Q0, None, t_end, h=h, contact="stepping", n_out=2)
    ours_cpu = (time.process_time() - cpu) / runs
    row = {"runs": runs, "t_end": t_end, "h": h, "ours_cpu_per_run": ours_cpu, "threads": ours.info["threads"],
           "failed": int(np.sum(~ours.ok))}
    try:
        import mujoco
        from mujoco import rollout
    except ImportError:
        mujoco = None
    if mujoco is not None:
        m, d = mujoco_solo12(h)
        spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
        states = np.empty((runs, mujoco.mj_stateSize(m, spec)))
        for b in range(runs):
            d.qpos[:] = mujoco_state(m, model, Q0[b])
            d.qvel[:] = 0.0
            mujoco.mj_forward(m, d)
            mujoco.mj_getState(m, d, states[b], spec)
        datas = [mujoco.MjData(m) for _ in range(threads)]
        ctrl = np.array([POSTURE[m.actuator(a).name] for a in range(m.nu)])[None, None, :]
        steps = int(round(t_end / h))
        heights = np.empty(runs)
        cpu = time.process_time()
        for first in range(0, runs, chunk):
            out, _ = rollout.rollout(m, datas, states[first:first + chunk], ctrl, nstep=steps)
            heights[first:first + chunk] = out[:, -1, 1 + 2]     # (time, qpos...): the base's z
        row["mujoco_cpu_per_run"] = (time.process_time() - cpu) / runs
        row["ratio"] = ours_cpu / row["mujoco_cpu_per_run"]
        row["base_height_difference"] = float(np.max(np.abs(ours.q[:, -1, 2] - heights)))
    if verbose:
        print("| runs | simulated s | h (ms) | CPU s per run ours / mujoco.rollout | ratio | threads | largest base "
              "height difference (mm) |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        mj = row.get("mujoco_cpu_per_run")
        print(f"| {runs} | {t_end:g} | {1e3 * h:g} | {ours_cpu:.4f} / " + (f"{mj:.4f}" if mj else "n/a") +
              f" | {row.get('ratio', float('nan')):.2f} | {row['threads']} | "
              f"{1e3 * row.get('base_height_difference', float('nan')):.2f} |")
        print(f"\nSolo12 from its URDF (limits as stops), a JointPD posture (KP {KP}, KD {KD}), foot spheres, "
              f"friction 1, {runs} drops from up to 5 cm above standing: simulate_batch(contact='stepping') against "
              f"mujoco.rollout on {threads} threads (options {MUJOCO_OPTIONS}); process time of the whole batch over "
              "the runs.")
    return [row]
