"""Speed of the O(N) kernels (ABA, RNEA, CRBA) against Pinocchio, the same models built in both.

``bench_dynamics(sizes=(7, 30, 100, 1000), batch=10000)`` times, for revolute chains of N bodies and a
binary tree, one call from Python of ``multibody.aba`` / ``rnea`` / ``crba`` and of ``pin.aba`` / ``pin.rnea``
/ ``pin.crba`` (when ``pinocchio`` is importable), per call and per body, and the batch throughput of
``aba_batch`` for ``batch`` states at N = 30 against a Python loop over ``pin.aba``. Before timing it checks
that both libraries give the same accelerations, so the comparison is of the same model. Timings interleave
the two libraries in rounds of process time (``bench/timing.py``) so that a busy machine affects both alike;
the tables give the median and the range of the ratio over the rounds. Read the ratios, not the absolute
times (DESIGN.md, performance rules).

The model generators (``revolute_chain``, ``binary_tree``, ``random_tree``) and ``to_pinocchio`` are also
used by the tests.
"""
import time

import numpy as np

from multibody.bench.timing import environment, interleaved, number_for, spread
from multibody.errors import ModelError

#: Pinocchio's Data grows cubically with the number of joints (measured: 10 MB at N = 50, 63 MB at N = 100,
#: 475 MB at N = 200), so a 1000-joint Data would need tens of GB; larger models are timed for multibody only.
PIN_MAX_BODIES = 200


def _mb():
    import multibody as mb

    return mb


# ---- models ----------------------------------------------------------------------------------------------
def revolute_chain(n, axis=(0.0, 1.0, 0.0), length=1.0, mass=1.0):
    """A chain of n identical links hinged about ``axis``: link k hangs from the end of link k − 1
    (joint placement (0, 0, −length)), centre of mass at (0, 0, −length/2), inertia
    diag(0.1, 0.1, 0.01) about it."""
    mb = _mb()
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81), name=f"revolute_chain_{n}")
    parent = "ground"
    for k in range(n):
        b.add_body(f"link{k + 1}", mass=mass, com=(0.0, 0.0, -0.5 * length), inertia=np.diag([0.1, 0.1, 0.01]))
        b.add_joint(f"joint{k + 1}", mb.Revolute(axis=axis), parent=parent, child=f"link{k + 1}",
                    placement=mb.Placement(np.eye(3), (0.0, 0.0, -length if k else 0.0)))
        parent = f"link{k + 1}"
    return b.build()


def binary_tree(n, length=1.0):
    """n links in a balanced binary tree (link k's parent is link (k − 1) // 2), hinges alternating about
    y and x, children offset ±0.3 sideways."""
    mb = _mb()
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81), name=f"binary_tree_{n}")
    for k in range(n):
        b.add_body(f"link{k}", mass=1.0, com=(0.0, 0.0, -0.5 * length), inertia=np.diag([0.1, 0.1, 0.01]))
        parent = "ground" if k == 0 else f"link{(k - 1) // 2}"
        side = 0.3 if k % 2 else -0.3
        b.add_joint(f"joint{k}", mb.Revolute(axis=(0.0, 1.0, 0.0) if k % 2 else (1.0, 0.0, 0.0)), parent=parent,
                    child=f"link{k}", placement=mb.Placement(np.eye(3), (side, 0.0, -length) if k else (0, 0, 0)))
    return b.build()


def random_rotation(rng):
    """A rotation matrix drawn uniformly (the unit quaternion of four normal numbers, normalized)."""
    q = rng.normal(size=4)
    w, x, y, z = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def random_unit(rng):
    """A unit 3-vector drawn uniformly on the sphere."""
    a = rng.normal(size=3)
    return a / np.linalg.norm(a)


def random_tree(n, rng, joint_types=None, fixed_on_ground=True, gravity=None, base_motion=None):
    """A random tree of n bodies: each body hangs from the ground or an earlier body by a joint drawn from
    ``joint_types`` (names: "Fixed", "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical",
    "Planar", "Free"; default all) with random unit axes, a random joint placement (rotation, translation in
    [−1, 1]³), random mass in [0.2, 3], centre of mass in [−0.5, 0.5]³ and a random inertia about it
    (principal moments in [0.2, 2] satisfying the triangle inequality, random principal axes).
    ``fixed_on_ground=False`` keeps Fixed joints off the ground (Pinocchio ignores bodies welded to it).
    ``base_motion``: a prescribed motion of the ground (``ModelBuilder(base_motion=...)``)."""
    return random_tree_builder(n, rng, joint_types, fixed_on_ground, gravity, base_motion)[0].build()


def random_tree_builder(n, rng, joint_types=None, fixed_on_ground=True, gravity=None, base_motion=None,
                        child_placements=0.0):
    """``(builder, joints)``: the ``ModelBuilder`` of :func:`random_tree` (before ``build``: frames, controllers ...
    may be added) and its (joint name, joint) pairs in the order added, with a random child placement (the body's own
    frame apart from its joint's) on each joint with probability ``child_placements``."""
    mb = _mb()
    rng = np.random.default_rng(rng)
    types = list(joint_types or ("Fixed", "Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical",
                                 "Planar", "Free"))
    g = rng.normal(size=3) * 5.0 if gravity is None else gravity
    b = mb.ModelBuilder(gravity=g, name=f"random_tree_{n}", base_motion=base_motion)
    joints = []
    names = ["ground"]
    for k in range(n):
        name = f"body{k + 1}"
        moments = np.sort(rng.uniform(0.2, 2.0, 3))
        moments[2] = rng.uniform(moments[1], moments[0] + moments[1])
        Q = random_rotation(rng)
        b.add_body(name, mass=rng.uniform(0.2, 3.0), com=rng.uniform(-0.5, 0.5, 3),
                   inertia=Q @ np.diag(rng.permutation(moments)) @ Q.T)
        kind = types[rng.integers(len(types))]
        parent = names[rng.integers(len(names))]
        if kind == "Fixed" and parent == "ground" and not fixed_on_ground:
            kind = "Revolute"
        a1 = random_unit(rng)
        a2 = random_unit(rng)
        while abs(a1 @ a2) > 0.9:
            a2 = random_unit(rng)
        joint = {"Fixed": lambda: mb.Fixed(), "Revolute": lambda: mb.Revolute(a1),
                 "Prismatic": lambda: mb.Prismatic(a1), "Cylindrical": lambda: mb.Cylindrical(a1),
                 "Universal": lambda: mb.Universal(a1, a2), "Spherical": lambda: mb.Spherical(),
                 "Planar": lambda: mb.Planar(), "Free": lambda: mb.Free()}[kind]()
        child = None
        if child_placements and rng.random() < child_placements:
            child = mb.Placement(random_rotation(rng), rng.uniform(-1.0, 1.0, 3))
        b.add_joint(f"joint{k + 1}", joint, parent=parent, child=name,
                    placement=mb.Placement(random_rotation(rng), rng.uniform(-1.0, 1.0, 3)), child_placement=child)
        joints.append((f"joint{k + 1}", joint))
        names.append(name)
    return b, joints


# ---- the same model in Pinocchio --------------------------------------------------------------------------
def _aligned(axis):
    for k, name in enumerate("XYZ"):
        e = np.zeros(3)
        e[k] = 1.0
        if np.allclose(axis, e, atol=0, rtol=0):
            return name
    return None


def to_pinocchio(model):
    """The Model built in Pinocchio: returns (pin_model, perm_q, perm_v) with q_pin = q[perm_q],
    v_pin = v[perm_v] (and τ, q̈ likewise). Fixed joints are merged into their parent's Pinocchio joint;
    Cylindrical, Universal and Planar joints become composite joints (R(a)+P(a), R(a1)+R(a2), PX+PY+RZ);
    axis-aligned hinges and sliders use Pinocchio's specialized RX/RY/RZ, PX/PY/PZ joints."""
    import pinocchio as pin

    from multibody.model import joints as J

    pm = pin.Model()
    pm.gravity = pin.Motion(np.asarray(model.gravity, dtype=float), np.zeros(3))
    frame_of = {0: (0, pin.SE3.Identity())}  # body -> (pin joint id, body frame in that joint's frame)
    perm_q = []
    perm_v = []
    for i in range(1, model.nbodies + 1):
        jt = int(model.jtype[i])
        par = int(model.parent[i])
        pj, X = frame_of[par]
        place = X * pin.SE3(np.array(model.jplace_R[i]), np.array(model.jplace_p[i]))
        inertia = pin.Inertia(float(model.mass[i]), np.array(model.com[i]), np.array(model.inertia_com[i]))
        a1 = np.array(model.jaxis[i, 0])
        a2 = np.array(model.jaxis[i, 1])
        iq = int(model.idx_q[i])
        iv = int(model.idx_v[i])
        name = model.joint_names[i] or f"joint{i}"
        if jt == J.FIXED:
            pm.appendBodyToJoint(pj, inertia, place)
            frame_of[i] = (pj, place)
            continue
        if jt == J.REVOLUTE:
            ax = _aligned(a1)
            jm = getattr(pin, f"JointModelR{ax}")() if ax else pin.JointModelRevoluteUnaligned(a1)
            qp, vp = [iq], [iv]
        elif jt == J.PRISMATIC:
            ax = _aligned(a1)
            jm = getattr(pin, f"JointModelP{ax}")() if ax else pin.JointModelPrismaticUnaligned(a1)
            qp, vp = [iq], [iv]
        elif jt == J.CYLINDRICAL:
            jm = pin.JointModelComposite(pin.JointModelRevoluteUnaligned(a1))
            jm.addJoint(pin.JointModelPrismaticUnaligned(a1))
            qp, vp = [iq, iq + 1], [iv, iv + 1]
        elif jt == J.UNIVERSAL:
            jm = pin.JointModelComposite(pin.JointModelRevoluteUnaligned(a1))
            jm.addJoint(pin.JointModelRevoluteUnaligned(a2))
            qp, vp = [iq, iq + 1], [iv, iv + 1]
        elif jt == J.PLANAR:
            jm = pin.JointModelComposite(pin.JointModelPX())
            jm.addJoint(pin.JointModelPY())
            jm.addJoint(pin.JointModelRZ())
            qp, vp = [iq, iq + 1, iq + 2], [iv, iv + 1, iv + 2]
        elif jt == J.SPHERICAL:
            jm = pin.JointModelSpherical()
            qp, vp = [iq + 1, iq + 2, iq + 3, iq], [iv, iv + 1, iv + 2]
        elif jt == J.FREE:
            jm = pin.JointModelFreeFlyer()
            qp = [iq, iq + 1, iq + 2, iq + 4, iq + 5, iq + 6, iq + 3]
            vp = [iv + 3, iv + 4, iv + 5, iv, iv + 1, iv + 2]
        else:
            raise ModelError(f"joint type {jt} of body {i} has no Pinocchio equivalent here", element=name)
        jid = pm.addJoint(pj, jm, place, name)
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        frame_of[i] = (jid, pin.SE3.Identity())
        perm_q += qp
        perm_v += vp
    return pm, np.array(perm_q, dtype=np.int64), np.array(perm_v, dtype=np.int64)


def bench_dynamics(sizes=(7, 30, 100, 1000), batch=10000, rounds=7, tree=30, batch_size=30,
                   pin_max=PIN_MAX_BODIES, verbose=True, seed=0):
    """Time ABA, RNEA, CRBA for revolute chains of ``sizes`` bodies and a binary tree of ``tree`` bodies, and
    the batch ABA throughput for ``batch`` states at N = ``batch_size``; compare with Pinocchio when it is
    importable (models up to ``pin_max`` bodies). Returns a list of row dicts
    (model, N, algorithm, ours_us, pin_us, ratio, ours_ns_per_body, pin_ns_per_body) and prints a table."""
    from multibody.algorithms.dynamics import aba, aba_batch, crba, rnea

    try:
        import pinocchio as pin
    except ImportError:
        pin = None
    rng = np.random.default_rng(seed)
    rows = []
    models = [("chain", n, revolute_chain(n)) for n in sizes]
    if tree:
        models.append(("binary tree", tree, binary_tree(tree)))
    for label, n, model in models:
        q = rng.uniform(-1, 1, model.nq)
        v = rng.uniform(-1, 1, model.nv)
        tau = rng.uniform(-1, 1, model.nv)
        qdd = aba(model, q, v, tau)  # compiles on the first run
        ours = {"aba": lambda: aba(model, q, v, tau), "rnea": lambda: rnea(model, q, v, qdd),
                "crba": lambda: crba(model, q)}
        theirs = {}
        if pin is not None and n <= pin_max:
            pm, pq, pv = to_pinocchio(model)
            pd = pm.createData()
            qp, vp, tp, ap = q[pq], v[pv], tau[pv], qdd[pv]
            qdd_pin = pin.aba(pm, pd, qp, vp, tp)
            scale = max(1.0, float(np.abs(qdd).max()))
            if not np.allclose(qdd_pin, qdd[pv], rtol=1e-8, atol=1e-8 * scale):
                raise AssertionError(f"{label} N={n}: multibody and Pinocchio accelerations differ by "
                                     f"{np.abs(qdd_pin - qdd[pv]).max():.3e}; the models are not the same")
            theirs = {"aba": lambda: pin.aba(pm, pd, qp, vp, tp), "rnea": lambda: pin.rnea(pm, pd, qp, vp, ap),
                      "crba": lambda: pin.crba(pm, pd, qp)}
        for algo in ("aba", "rnea", "crba"):
            f = ours[algo]
            g = theirs.get(algo)
            t = interleaved([f] if g is None else [f, g], number_for(f), rounds)
            rows.append(_row(label, n, algo, t, n))
    if batch:
        model = revolute_chain(batch_size)
        Q = rng.uniform(-1, 1, (batch, model.nq))
        V = rng.uniform(-1, 1, (batch, model.nv))
        TAU = rng.uniform(-1, 1, (batch, model.nv))
        QDD = aba_batch(model, Q, V, TAU)
        for k in range(0, batch, max(1, batch // 7)):
            np.testing.assert_allclose(QDD[k], aba(model, Q[k], V[k], TAU[k]), rtol=1e-12, atol=1e-12)
        calls = [lambda: aba_batch(model, Q, V, TAU)]
        if pin is not None:
            pm, pq, pv = to_pinocchio(model)
            pd = pm.createData()
            Qp = np.ascontiguousarray(Q[:, pq])
            Vp = np.ascontiguousarray(V[:, pv])
            Tp = np.ascontiguousarray(TAU[:, pv])
            np.testing.assert_allclose(pin.aba(pm, pd, Qp[0], Vp[0], Tp[0]), QDD[0][pv], rtol=1e-8, atol=1e-8)

            def pin_loop():
                for k in range(batch):
                    pin.aba(pm, pd, Qp[k], Vp[k], Tp[k])

            calls.append(pin_loop)
        t = interleaved(calls, 1, max(3, rounds // 2), clock=time.perf_counter) / batch
        rows.append(_row(f"batch of {batch}", batch_size, "aba_batch", t, batch_size, wall=True))
    if verbose:
        print(environment("pinocchio"))
        print(format_table(rows, pin_available=pin is not None))
    return rows


def _row(label, n, algo, t, bodies, wall=False):
    """A table row from the interleaved times ``t`` (rounds, 1 or 2) of ours and Pinocchio's call."""
    ours = spread(t[:, 0])[0]
    pin = spread(t[:, 1])[0] if t.shape[1] > 1 else None
    ratio = spread(t[:, 0] / t[:, 1]) if t.shape[1] > 1 else (None, None, None)
    return dict(model=label, N=n, algorithm=algo, ours_us=ours * 1e6, pin_us=None if pin is None else pin * 1e6,
                ratio=ratio[0], ratio_min=ratio[1], ratio_max=ratio[2], ours_ns_per_body=ours * 1e9 / bodies,
                pin_ns_per_body=None if pin is None else pin * 1e9 / bodies, clock="wall" if wall else "process")


def format_table(rows, pin_available=True):
    """The rows of ``bench_dynamics`` as a Markdown table."""
    lines = ["| model | N | algorithm | multibody µs | Pinocchio µs | ratio ours/pin (range) | ns/body ours | "
             "ns/body pin |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        pin_us = "n/a" if r["pin_us"] is None else f"{r['pin_us']:.2f}"
        ratio = "n/a" if r["ratio"] is None else f"{r['ratio']:.2f} ({r['ratio_min']:.2f}–{r['ratio_max']:.2f})"
        pnb = "n/a" if r["pin_ns_per_body"] is None else f"{r['pin_ns_per_body']:.0f}"
        lines.append(f"| {r['model']} | {r['N']} | {r['algorithm']} | {r['ours_us']:.2f} | {pin_us} | {ratio} | "
                     f"{r['ours_ns_per_body']:.0f} | {pnb} |")
    notes = ["", "Per call from Python: median of interleaved rounds of process time, the ratio's median and range "
             "over the rounds; batch rows are per state in wall time (aba_batch, slices in threads, vs a Python loop "
             "over pin.aba)."]
    if not pin_available:
        notes.append("Pinocchio (`pin`) is not installed: multibody timings only.")
    else:
        notes.append(f"n/a: Pinocchio not timed above N = {PIN_MAX_BODIES} (its Data grows cubically with N; a "
                     "1000-joint Data does not fit in memory here).")
    return "\n".join(lines + notes)


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description="ABA/RNEA/CRBA speed against Pinocchio")
    p.add_argument("--sizes", type=int, nargs="+", default=[7, 30, 100, 1000])
    p.add_argument("--batch", type=int, default=10000)
    p.add_argument("--rounds", type=int, default=7)
    args = p.parse_args(argv)
    bench_dynamics(sizes=tuple(args.sizes), batch=args.batch, rounds=args.rounds)
    return 0
