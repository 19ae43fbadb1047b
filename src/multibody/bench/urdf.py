"""A URDF robot loaded by multibody and by Pinocchio's own parser: agreement, then ABA speed.

``humanoid_urdf()`` writes a realistic 30-joint humanoid (floating pelvis; waist 2, neck 2, arms 7 + 7, legs
6 + 6 revolute joints, one of them continuous, a tilted hip-yaw axis; small intermediate links, sensor and
tool frames fixed to their links (some massless), inertial frames rotated by ``rpy``, full inertia tensors,
mesh visuals, limits, damping and friction). ``bench_urdf()`` loads it with
``multibody.io.load_urdf(floating_base=True)`` and with ``pinocchio.buildModelFromUrdf(path,
JointModelFreeFlyer())``, checks that ABA, RNEA and the mass matrix agree, then times one ABA call of each
library in interleaved rounds (best of each) and prints the ratio ours/pin.

``pinocchio_state(model, pin_model, q, v)`` maps our state to Pinocchio's by joint name (its quaternion order
(x, y, z, w), its free-flyer velocity [v; ω], its continuous joints (cos θ, sin θ), its planar velocity in the
child frame); the tests use it too.
"""
import math
import os
import tempfile

import numpy as np

from multibody.errors import shown

#: (joint, link, parent link, joint type, axis, origin xyz, origin rpy, mass, box size (x, y, z) of the link's inertia)
HUMANOID_LINKS = [
    # torso: waist yaw, pitch; neck yaw, pitch
    ("waist_yaw", "waist_yaw_link", "pelvis", "revolute",
     (0, 0, 1), (0.0, 0.0, 0.10), (0, 0, 0), 1.0, (0.10, 0.10, 0.08)),
    ("waist_pitch", "torso", "waist_yaw_link", "revolute",
     (0, 1, 0), (0.0, 0.0, 0.06), (0, 0, 0), 15.0, (0.22, 0.32, 0.40)),
    ("neck_yaw", "neck_link", "torso", "revolute",
     (0, 0, 1), (0.0, 0.0, 0.32), (0, 0, 0), 0.4, (0.06, 0.06, 0.08)),
    ("neck_pitch", "head", "neck_link", "revolute",
     (0, 1, 0), (0.0, 0.0, 0.06), (0, 0, 0), 3.5, (0.18, 0.16, 0.22)),
]
ARM = [  # per side (y sign s): shoulder pitch, roll, yaw; elbow; wrist yaw, pitch, roll (continuous)
    ("shoulder_pitch", "shoulder_pitch_link", "torso", "revolute",
     (0, 1, 0), (0.0, 0.20, 0.26), (0.15, 0, 0), 0.8, (0.08, 0.08, 0.08)),
    ("shoulder_roll", "shoulder_roll_link", "shoulder_pitch_link", "revolute",
     (1, 0, 0), (0.0, 0.05, 0.0), (0, 0, 0), 0.6, (0.07, 0.07, 0.07)),
    ("shoulder_yaw", "upper_arm", "shoulder_roll_link", "revolute",
     (0, 0, 1), (0.0, 0.0, -0.06), (0, 0, 0), 2.0, (0.08, 0.08, 0.26)),
    ("elbow", "forearm", "upper_arm", "revolute",
     (0, 1, 0), (0.0, 0.0, -0.24), (0, 0, 0), 1.2, (0.07, 0.07, 0.24)),
    ("wrist_yaw", "wrist_yaw_link", "forearm", "revolute",
     (0, 0, 1), (0.0, 0.0, -0.22), (0, 0, 0), 0.3, (0.05, 0.05, 0.05)),
    ("wrist_pitch", "wrist_pitch_link", "wrist_yaw_link", "revolute",
     (0, 1, 0), (0.0, 0.0, -0.03), (0, 0, 0), 0.2, (0.04, 0.04, 0.04)),
    ("wrist_roll", "hand", "wrist_pitch_link", "continuous",
     (1, 0, 0), (0.0, 0.0, -0.03), (0, 0, 0), 0.5, (0.04, 0.09, 0.10)),
]
LEG = [  # per side: hip yaw (tilted axis), roll, pitch; knee; ankle pitch, roll
    ("hip_yaw", "hip_yaw_link", "pelvis", "revolute",
     (0, -0.2588190451, 0.9659258263), (0.0, 0.09, -0.06), (0, 0, 0), 1.0, (0.08, 0.08, 0.08)),
    ("hip_roll", "hip_roll_link", "hip_yaw_link", "revolute",
     (1, 0, 0), (0.0, 0.0, -0.07), (0, 0, 0), 1.2, (0.09, 0.09, 0.09)),
    ("hip_pitch", "thigh", "hip_roll_link", "revolute",
     (0, 1, 0), (0.0, 0.0, -0.04), (0, 0, 0), 7.0, (0.14, 0.14, 0.40)),
    ("knee", "shin", "thigh", "revolute",
     (0, 1, 0), (0.0, 0.0, -0.40), (0, 0.05, 0), 4.0, (0.11, 0.11, 0.40)),
    ("ankle_pitch", "ankle_link", "shin", "revolute",
     (0, 1, 0), (0.0, 0.0, -0.40), (0, 0, 0), 0.4, (0.06, 0.06, 0.06)),
    ("ankle_roll", "foot", "ankle_link", "revolute",
     (1, 0, 0), (0.0, 0.0, -0.04), (0, 0, 0), 1.2, (0.24, 0.10, 0.05)),
]
#: links fixed to others: (name, parent, origin xyz, origin rpy, mass or 0 (a massless frame), box)
HUMANOID_FIXED = [
    ("imu_link", "pelvis", (0.0, 0.0, 0.02), (0, 0, 0), 0.0, None),
    ("backpack", "torso", (-0.14, 0.0, 0.05), (0, 0, 0.1), 2.0, (0.08, 0.26, 0.30)),
    ("chest_camera", "torso", (0.12, 0.0, 0.18), (0, 0.3, 0), 0.0, None),
    ("camera_link", "head", (0.09, 0.0, 0.05), (0, 0.1, 0), 0.15, (0.03, 0.10, 0.03)),
]
HUMANOID_FIXED_SIDE = [
    ("fingers", "hand", (0.0, 0.0, -0.08), (0, 0, 0), 0.2, (0.03, 0.08, 0.06)),
    ("tool_frame", "hand", (0.0, 0.0, -0.12), (0, 0, 0), 0.0, None),
    ("sole", "foot", (0.03, 0.0, -0.05), (0, 0, 0), 0.0, None),
]


def _box_inertia(m, a, b, c):
    return m * (b * b + c * c) / 12.0, m * (a * a + c * c) / 12.0, m * (a * a + b * b) / 12.0


def _fmt(v):
    return " ".join(repr(float(x)) for x in v)


def humanoid_urdf(seed=0, name="humanoid30"):
    """The text of a 30-joint humanoid URDF (see the module docstring); ``seed`` draws the small offsets of the
    centres of mass and the rotations of the inertial frames (deterministic)."""
    rng = np.random.default_rng(seed)
    links, joints = [], []

    def link(lname, mass, box, visual=True):
        parts = [f'  <link name="{lname}">']
        if mass:
            ixx, iyy, izz = _box_inertia(mass, *box)
            com = rng.uniform(-0.02, 0.02, 3)
            rpy = rng.uniform(-0.3, 0.3, 3)
            parts += ["    <inertial>", f'      <origin xyz="{_fmt(com)}" rpy="{_fmt(rpy)}"/>',
                      f'      <mass value="{shown(mass)!r}"/>',
                      f'      <inertia ixx="{ixx!r}" ixy="0" ixz="0" iyy="{iyy!r}" iyz="0" izz="{izz!r}"/>',
                      "    </inertial>"]
        if visual and box is not None:
            parts += ["    <visual>", '      <origin xyz="0 0 0" rpy="0 0 0"/>',
                      f'      <geometry><mesh filename="package://{name}_description/meshes/{lname}.stl" '
                      'scale="0.001 0.001 0.001"/></geometry>',
                      '      <material name="grey"><color rgba="0.6 0.6 0.6 1"/></material>', "    </visual>",
                      "    <collision>", f'      <geometry><box size="{_fmt(box)}"/></geometry>', "    </collision>"]
        parts.append("  </link>")
        links.append("\n".join(parts))

    def joint(jname, kind, parent, child, xyz, rpy, axis=None, limit=True):
        parts = [f'  <joint name="{jname}" type="{kind}">', f'    <origin xyz="{_fmt(xyz)}" rpy="{_fmt(rpy)}"/>',
                 f'    <parent link="{parent}"/>', f'    <child link="{child}"/>']
        if axis is not None:
            parts.append(f'    <axis xyz="{_fmt(axis)}"/>')
        if kind == "revolute" and limit:
            parts.append('    <limit lower="-2.0" upper="2.0" effort="150.0" velocity="8.0"/>')
        elif kind == "continuous":
            parts.append('    <limit effort="20.0" velocity="10.0"/>')
        if kind != "fixed":
            parts.append('    <dynamics damping="0.1" friction="0.05"/>')
        parts.append("  </joint>")
        joints.append("\n".join(parts))

    link("pelvis", 8.0, (0.20, 0.30, 0.15))
    for jname, lname, parent, kind, axis, xyz, rpy, mass, box in HUMANOID_LINKS:
        link(lname, mass, box)
        joint(f"{jname}_joint", kind, parent, lname, xyz, rpy, axis)
    for side, s in (("left", 1.0), ("right", -1.0)):
        for chain in (ARM, LEG):
            for jname, lname, parent, kind, axis, xyz, rpy, mass, box in chain:
                full = f"{side}_{lname}"
                par = parent if parent in ("torso", "pelvis") else f"{side}_{parent}"
                link(full, mass, box)
                ax = (axis[0], s * axis[1], axis[2]) if jname == "hip_yaw" else axis
                joint(f"{side}_{jname}_joint", kind, par, full, (xyz[0], s * xyz[1], xyz[2]),
                      (s * rpy[0], rpy[1], s * rpy[2]), ax)
    fixed = list(HUMANOID_FIXED) + [(f"{side}_{n}", f"{side}_{p}", x, r, m, b) for side in ("left", "right")
                                    for n, p, x, r, m, b in HUMANOID_FIXED_SIDE]
    for lname, parent, xyz, rpy, mass, box in fixed:
        link(lname, mass, box, visual=box is not None)
        joint(f"{lname}_fixed", "fixed", parent, lname, xyz, rpy)
    return (f'<?xml version="1.0"?>\n<robot name="{name}">\n' + "\n".join(links) + "\n" + "\n".join(joints)
            + '\n  <material name="grey"><color rgba="0.6 0.6 0.6 1"/></material>\n</robot>\n')


# ---- our state in Pinocchio's coordinates ------------------------------------------------------------------------
def pinocchio_state(model, pm, q, v=None):
    """Pinocchio's configuration of our ``q`` and the map of velocities: returns ``(q_pin, T, T_dot)`` with
    ``v_pin = T v``, ``τ_pin = T τ`` (T is orthogonal), ``a_pin = T a + T_dot v`` (``T_dot`` = dT/dt along ``v``;
    zero unless the model has planar joints). Joints are matched by name (Pinocchio's ``model.names``)."""
    q = np.asarray(q, dtype=float)
    v = np.zeros(model.nv) if v is None else np.asarray(v, dtype=float)
    qp = np.zeros(pm.nq)
    T = np.zeros((pm.nv, model.nv))
    Td = np.zeros((pm.nv, model.nv))
    for jid in range(1, pm.njoints):
        jm = pm.joints[jid]
        short = jm.shortname()
        j = model.joint(pm.names[jid])
        iq, iv, pq, pv = j.q_slice.start, j.v_slice.start, jm.idx_q, jm.idx_v
        if "FreeFlyer" in short:
            qp[pq:pq + 3] = q[iq:iq + 3]
            qp[pq + 3:pq + 6] = q[iq + 4:iq + 7]
            qp[pq + 6] = q[iq + 3]
            T[pv:pv + 3, iv + 3:iv + 6] = np.eye(3)
            T[pv + 3:pv + 6, iv:iv + 3] = np.eye(3)
        elif "Planar" in short:
            th, w = q[iq + 2], v[iv + 2]
            c, s = math.cos(th), math.sin(th)
            qp[pq:pq + 4] = q[iq], q[iq + 1], c, s
            T[pv:pv + 2, iv:iv + 2] = [[c, s], [-s, c]]          # the child-frame velocity R(θ)ᵀ (ẋ, ẏ)
            T[pv + 2, iv + 2] = 1.0
            Td[pv:pv + 2, iv:iv + 2] = np.array([[-s, c], [-c, -s]]) * w
        elif "Unbounded" in short or "RUB" in short:
            qp[pq:pq + 2] = math.cos(q[iq]), math.sin(q[iq])
            T[pv, iv] = 1.0
        elif jm.nq == 1 and jm.nv == 1:
            qp[pq] = q[iq]
            T[pv, iv] = 1.0
        else:
            raise ValueError(f"joint '{j.name}': Pinocchio joint {short} is not mapped here")
    return qp, T, Td


def pinocchio_agreement(model, pm, rng, samples=3):
    """Largest differences between ours and Pinocchio at ``samples`` random states, each relative to the scale of
    the terms it sums (so that cancellation in a small result is not counted as disagreement):
    ``{"aba": ..., "rnea": ..., "crba": ...}``.

    ABA by its backward error: our q̈ put into Pinocchio's inverse dynamics gives back τ up to
    |rnea_pin(q, v, q̈) − τ| / (|τ| + ‖M‖ |q̈|) — the forward error of any solver is κ(M) times larger (κ reaches 1e9
    on iCub, whose links weigh grams); RNEA relative to |τ| + ‖M‖ |q̈| (τ = M q̈ + b is a sum of such terms); the
    mass matrix relative to its largest entry."""
    import pinocchio as pin

    from multibody.algorithms.dynamics import aba, crba, rnea

    pd = pm.createData()
    out = {"aba": 0.0, "rnea": 0.0, "crba": 0.0}
    for _ in range(samples):
        q = model.random_configuration(rng, scale=1.5)
        v = rng.uniform(-2, 2, model.nv)
        tau = rng.uniform(-20, 20, model.nv)
        qp, T, Td = pinocchio_state(model, pm, q, v)
        M = crba(model, q)
        norm_M = np.abs(M).max()
        a = aba(model, q, v, tau)
        residual = pin.rnea(pm, pd, qp, T @ v, T @ a + Td @ v) - T @ tau
        out["aba"] = max(out["aba"], np.abs(residual).max() / (np.abs(tau).max() + norm_M * np.abs(a).max()))
        t = rnea(model, q, v, a)
        t_pin = pin.rnea(pm, pd, qp, T @ v, T @ a + Td @ v)
        out["rnea"] = max(out["rnea"], np.abs(t_pin - T @ t).max() / (np.abs(t).max() + norm_M * np.abs(a).max()))
        M_pin = np.triu(pin.crba(pm, pd, qp))
        M_pin = M_pin + np.triu(M_pin, 1).T
        out["crba"] = max(out["crba"], np.abs(M_pin - T @ M @ T.T).max() / max(1.0, norm_M))
    return out


def bench_urdf(rounds=25, seed=0, verbose=True):
    """Load the 30-joint humanoid (floating base) in both libraries, check agreement, time ABA (interleaved
    rounds of process time; the median and, for the ratio, the range over the rounds). Returns a dict of the times (µs), the ratio ours/pin and the agreement."""
    from multibody.algorithms.dynamics import aba
    from multibody.bench.timing import fmt_spread, interleaved, number_for, spread
    from multibody.io.urdf import load_urdf

    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "humanoid30.urdf")
        with open(path, "w") as fh:
            fh.write(humanoid_urdf(seed))
        model = load_urdf(path, floating_base=True)
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer()) if pin is not None else None
    rng = np.random.default_rng(seed)
    q = model.random_configuration(rng, scale=1.0)
    v = rng.uniform(-1, 1, model.nv)
    tau = rng.uniform(-10, 10, model.nv)
    aba(model, q, v, tau)   # compiles on the first run
    calls = [lambda: aba(model, q, v, tau)]
    row = {"model": "humanoid30 (floating base)", "bodies": model.nbodies, "nq": model.nq, "nv": model.nv}
    if pm is not None:
        row["agreement"] = pinocchio_agreement(model, pm, np.random.default_rng(seed + 1))
        pd = pm.createData()
        qp, T, _ = pinocchio_state(model, pm, q, v)
        vp, tp = T @ v, T @ tau
        calls.append(lambda: pin.aba(pm, pd, qp, vp, tp))
    times = interleaved(calls, number_for(calls[0]), rounds)          # (rounds, calls), process time
    row["ours_us"] = spread(times[:, 0])[0] * 1e6
    row["pin_us"] = spread(times[:, 1])[0] * 1e6 if pm is not None else None
    row["ratio"] = spread(times[:, 0] / times[:, 1])[0] if pm is not None else None
    row["ratio_range"] = fmt_spread(times[:, 0] / times[:, 1]) if pm is not None else None
    if verbose:
        print("| model | bodies | nv | ABA multibody µs | ABA Pinocchio µs | ratio ours/pin |")
        print("|---|---:|---:|---:|---:|---:|")
        pin_us = "n/a" if row["pin_us"] is None else f"{row['pin_us']:.2f}"
        ratio = "n/a" if row["ratio"] is None else row["ratio_range"]
        print(f"| {row['model']} | {row['bodies']} | {row['nv']} | {row['ours_us']:.2f} | {pin_us} | {ratio} |")
        if pm is not None:
            ag = row["agreement"]
            print(f"\nBoth loaded from the same URDF file; largest differences to Pinocchio relative to the scale of "
                  f"the terms: ABA (backward error) {ag['aba']:.1e}, RNEA {ag['rnea']:.1e}, mass matrix "
                  f"{ag['crba']:.1e}.")
        else:
            print("\nPinocchio (`pin`) is not installed: multibody timings only.")
        print("Per call from Python, process time: median of interleaved rounds (ratio: median and range over the rounds).")
    return row
