"""The calls of a robot's control loop against Pinocchio's, inverse kinematics, and self-collision checks (issue 35).

``bench_robotics()`` prints four tables, every ratio measured in this process (interleaved rounds of process time,
median and range over the rounds; ``bench/timing.py``):

* per call from Python, on UR5, Panda, Solo12 (floating base), Talos and TIAGo (floating base): one frame's
  Jacobian (``frame_jacobian`` with a handle, against ``computeFrameJacobian``), every frame's (``frame_jacobians``
  against ``computeJointJacobians`` and a ``getFrameJacobian`` loop), one frame's placement (``frame_placement``
  against ``forwardKinematics`` and ``updateFramePlacement``), ``centroidal_map`` (``ccrba``), ``com_jacobian``
  (``jacobianCenterOfMass``), ``minv`` (``computeMinverse``), ``rnea`` and ``crba``; ours twice, returning a new
  array and writing into a preallocated one (``out=``), where Pinocchio's Python calls always allocate the array they
  return;
* where a call's time goes on the UR5 (``bench_call_split``): the public call, without and with ``out=``, against its
  compiled kernel called alone from Python through numba's entry point and its C-level entry called alone
  (``kernels/entries.py``), and the fixed cost of a call on a one-joint pendulum, ours and Pinocchio's; and the
  parts of one ``crba`` call (``bench_call_parts``: the Python function, the new output array, the two entries);
* inverse kinematics: 200 placements of the Panda's hand at random configurations within the limits, from one fixed
  start (the middle of the limits), to 1e-9, and Talos holding both feet with a hand target (20 targets): the
  median time per solve against a hand-written Pinocchio damped-least-squares loop (Pinocchio's documented example:
  ``log6`` residual, ``Jlog6`` linearization, full steps, damping 1e-12; it does not know the joint limits);
* the Panda's self-collision check on its collision meshes (convex hulls; the SRDF's disabled pairs left out),
  and its distance queries against coal's on the same hulls, pair by pair.

Skipped, with a line saying so, where ``example-robot-data`` or ``pin`` is not installed.
"""
import time
import warnings

import numpy as np

from multibody.bench.robots import robots_folder

#: the robots of the first table: (name, file, floating base)
ROBOTS = (("UR5", "ur_description/urdf/ur5_robot.urdf", False), ("Panda", "panda_description/urdf/panda.urdf", False),
          ("Solo12", "solo_description/robots/solo12.urdf", True),
          ("Talos", "talos_data/robots/talos_reduced.urdf", True), ("TIAGo", "tiago_description/robots/tiago.urdf", True))
#: the frames whose Jacobian one call computes: the tool (or a hand, a foot) of each robot
TOOL = {"UR5": "ee_link", "Panda": "panda_hand", "Solo12": "FR_FOOT", "Talos": "gripper_left_base_link",
        "TIAGo": "arm_tool_link"}


def _load(path, floating_base, pin):
    import multibody as mb

    root = robots_folder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.io.load_urdf(root / path, floating_base=floating_base)
        pm = (pin.buildModelFromUrdf(str(root / path), pin.JointModelFreeFlyer()) if floating_base else
              pin.buildModelFromUrdf(str(root / path)))
    return model, pm


def _calls(model, pm, tool, pin):
    """``(calls, state)``: the calls of :func:`bench_calls` at a random configuration of ``model`` (with Pinocchio's
    ``pm`` at the same state), ``{name: (ours, ours with out=, Pinocchio's)}`` of zero-argument functions, and
    ``(q, v, a, handle)``, our state and the handle of the frame ``tool``."""
    import multibody as mb
    from multibody.bench.urdf import pinocchio_state

    pd = pm.createData()
    rng = np.random.default_rng(0)
    q = model.random_configuration(rng, scale=1.0)
    v, a = rng.uniform(-1, 1, model.nv), rng.uniform(-1, 1, model.nv)
    qp, T, _ = pinocchio_state(model, pm, q, v)
    vp, ap = T @ v, T @ a
    handle, fid = model.frame_id(tool), pm.getFrameId(tool)
    nframes = pm.nframes

    def every_frame():
        pin.computeJointJacobians(pm, pd, qp)
        return [pin.getFrameJacobian(pm, pd, k, pin.LOCAL) for k in range(nframes)]

    def placement():
        pin.forwardKinematics(pm, pd, qp)
        return pin.updateFramePlacement(pm, pd, fid)

    nv = model.nv
    J, Js, M, tau = np.empty((6, nv)), np.empty((len(model.frame_names), 6, nv)), np.empty((nv, nv)), np.empty(nv)
    Rp, Jc = (np.empty((3, 3)), np.empty(3)), np.empty((3, nv))
    calls = {
        "one frame Jacobian": (lambda: mb.frame_jacobian(model, q, handle),
                               lambda: mb.frame_jacobian(model, q, handle, out=J),
                               lambda: pin.computeFrameJacobian(pm, pd, qp, fid, pin.LOCAL)),
        "every frame's Jacobian": (lambda: mb.frame_jacobians(model, q), lambda: mb.frame_jacobians(model, q, out=Js),
                                   every_frame),
        "one frame placement": (lambda: mb.frame_placement(model, q, handle),
                                lambda: mb.frame_placement(model, q, handle, out=Rp), placement),
        "centroidal_map / ccrba": (lambda: mb.centroidal_map(model, q), lambda: mb.centroidal_map(model, q, out=J),
                                   lambda: pin.ccrba(pm, pd, qp, vp)),
        "com_jacobian / jacobianCenterOfMass": (lambda: mb.com_jacobian(model, q),
                                                lambda: mb.com_jacobian(model, q, out=Jc),
                                                lambda: pin.jacobianCenterOfMass(pm, pd, qp)),
        "minv / computeMinverse": (lambda: mb.minv(model, q), lambda: mb.minv(model, q, out=M),
                                   lambda: pin.computeMinverse(pm, pd, qp)),
        "rnea": (lambda: mb.rnea(model, q, v, a), lambda: mb.rnea(model, q, v, a, out=tau),
                 lambda: pin.rnea(pm, pd, qp, vp, ap)),
        "crba": (lambda: mb.crba(model, q), lambda: mb.crba(model, q, out=M), lambda: pin.crba(pm, pd, qp)),
    }
    return calls, (q, v, a, handle)


def bench_calls(rounds=9, verbose=True):
    """The table of the control loop's calls (module docstring): rows of times (µs) and ratios ours/Pinocchio, ours
    returning a new array and ours writing into a preallocated one (``out=``)."""
    import pinocchio as pin

    from multibody.bench.timing import fmt_spread, interleaved, number_for, spread

    rows = []
    for name, path, floating in ROBOTS:
        model, pm = _load(path, floating, pin)
        calls, _ = _calls(model, pm, TOOL[name], pin)
        for call, fs in calls.items():
            for f in fs:
                f()
            times = interleaved(list(fs), number_for(fs[2], 0.005), rounds)
            rows.append({"robot": name, "nv": model.nv, "frames": len(model.frame_names), "call": call,
                         "ours_us": spread(times[:, 0])[0] * 1e6, "out_us": spread(times[:, 1])[0] * 1e6,
                         "pin_us": spread(times[:, 2])[0] * 1e6,
                         "ratio": spread(times[:, 0] / times[:, 2])[0],
                         "ratio_range": fmt_spread(times[:, 0] / times[:, 2]),
                         "ratio_out": spread(times[:, 1] / times[:, 2])[0],
                         "ratio_out_range": fmt_spread(times[:, 1] / times[:, 2])})
    if verbose:
        print("Per call from Python, process time (median of interleaved rounds; ratio: median and range). Ours "
              "returning a new array, and with out= writing into a preallocated one; Pinocchio's Python calls "
              "always allocate the array they return (a getFrameJacobian per frame: one per frame)")
        print("| robot | nv | call | multibody µs | with out= µs | Pinocchio µs | ratio ours/pin | with out= |")
        print("|---|---:|---|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['robot']} | {r['nv']} | {r['call']} | {r['ours_us']:.2f} | {r['out_us']:.2f} | "
                  f"{r['pin_us']:.2f} | {r['ratio_range']} | {r['ratio_out_range']} |")
    return rows


def _kernel_entries(model, q, v, a, handle, bare=False):
    """The compiled kernels of the calls of :func:`bench_calls`, called straight from Python with the arrays of the
    model's Data and preallocated outputs through numba's entry point for these argument types (no dispatch): the
    time of a call without its Python function (checks, the output's allocation). ``{call: zero-argument function}``,
    or with ``bare`` ``{call: (entry point, arguments)}``."""
    from numba import typeof

    from multibody.algorithms.frames import REFERENCES
    from multibody.kernels.centroidal import centroidal_map_kernel, com_jacobian_kernel
    from multibody.kernels.crba import crba_kernel
    from multibody.kernels.derivatives_minv import minv_kernel
    from multibody.kernels.frames import frame_jacobian_kernel, frame_placement_kernel
    from multibody.kernels.rnea import rnea_kernel
    from multibody.model.data import default_data

    d = default_data(model)
    fi, ff = d.frame_table()[:2]
    w = d.derivative_work()
    nv = model.nv
    J, M = np.empty((6, nv)), np.empty((nv, nv))
    arguments = {"one frame Jacobian": (frame_jacobian_kernel, (d.mi, d.mf, fi, ff, q, d.work, handle,
                                                                REFERENCES["local"], J)),
                 "one frame placement": (frame_placement_kernel, (d.mi, d.mf, fi, ff, q, d.work, handle,
                                                                  np.empty((3, 3)), np.empty(3))),
                 "centroidal_map / ccrba": (centroidal_map_kernel, (d.mi, d.mf, q, d.work, J)),
                 "com_jacobian / jacobianCenterOfMass": (com_jacobian_kernel, (d.mi, d.mf, q, d.work, J[:3].copy())),
                 "minv / computeMinverse": (minv_kernel, (d.mi, d.mf, q, d.work, w.dwork, w.dint, M)),
                 "rnea": (rnea_kernel, (d.mi, d.mf, q, v, a, d.no_fext, d.work, np.empty(nv))),
                 "crba": (crba_kernel, (d.mi, d.mf, q, d.work, M))}
    entries = {}
    for call, (kernel, args) in arguments.items():
        kernel(*args)
        entry = kernel.get_overload(tuple(typeof(x) for x in args))
        entries[call] = (entry, args) if bare else (lambda entry, args: lambda: entry(*args))(entry, args)
    return entries


def _c_entries(model, q, v, a, handle):
    """The C-level entries (``kernels/entries.py``) of the calls of :func:`bench_calls` that have one, called straight
    from Python with preallocated outputs: ``{call: zero-argument function}`` (None for a call without one, or where
    the entries are not available)."""
    from multibody.algorithms.frames import REFERENCES
    from multibody.model.data import bind_entry, no_entry

    nv = model.nv
    J, M, tau = np.empty((6, nv)), np.empty((nv, nv)), np.empty(nv)
    arguments = {"one frame Jacobian": ("frame_jacobian", (q, handle, REFERENCES["local"], J)),
                 "one frame placement": ("frame_placement", (q, handle, (np.empty((3, 3)), np.empty(3)))),
                 "centroidal_map / ccrba": ("centroidal_map", (q, J)),
                 "com_jacobian / jacobianCenterOfMass": ("com_jacobian", (q, J[:3].copy())),
                 "minv / computeMinverse": ("minv", (q, M)), "rnea": ("rnea", (q, v, a, tau)), "crba": ("crba", (q, M))}
    calls = {}
    for call, (algorithm, args) in arguments.items():
        entry = bind_entry(model, algorithm)
        calls[call] = None if entry is no_entry else (lambda entry, args: lambda: entry(*args))(entry, args)
    return calls


def _one_joint_models(pin):
    """A pendulum of one revolute joint with a frame at its tip, ours and Pinocchio's (the fixed cost of a call)."""
    import multibody as mb

    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="rod")
    b.add_frame("tip", "rod", mb.Placement(translation=(1, 0, 0)))
    pm = pin.Model()
    joint = pm.addJoint(0, pin.JointModelRY(), pin.SE3.Identity(), "hinge")
    pm.appendBodyToJoint(joint, pin.Inertia(1.0, np.array([0, 0, -0.5]), np.diag([0.1, 0.1, 0.01])),
                         pin.SE3.Identity())
    pm.addFrame(pin.Frame("tip", joint, 0, pin.SE3(np.eye(3), np.array([1.0, 0, 0])), pin.FrameType.OP_FRAME))
    return b.build(), pm


def bench_call_split(robot="UR5", rounds=15, verbose=True):
    """Where the time of a call of :func:`bench_calls` goes, on ``robot`` (default the UR5, nv = 6): the public call,
    its compiled kernel alone called from Python (``_kernel_entries``), the difference (the Python function: argument
    checks, the output's allocation, the look-ups), Pinocchio's call, and the two sides' calls on a one-joint
    pendulum (about the fixed cost of a call: ours the Python function and the kernel's entry, Pinocchio's its
    binding). Rows of medians over interleaved rounds (µs)."""
    import pinocchio as pin

    from multibody.bench.timing import interleaved, number_for, spread

    path, floating = next((p, f) for n, p, f in ROBOTS if n == robot)
    one, one_pin = _one_joint_models(pin)
    rows = []
    for model, pm, tool in ((*_load(path, floating, pin), TOOL[robot]), (one, one_pin, "tip")):
        calls, state = _calls(model, pm, tool, pin)
        del calls["every frame's Jacobian"]
        entries, c_entries = _kernel_entries(model, *state), _c_entries(model, *state)
        for k, (call, (ours, ours_out, theirs)) in enumerate(calls.items()):
            c_entry = c_entries.get(call)
            fs = [ours, ours_out, entries[call], theirs] + ([] if c_entry is None else [c_entry])
            for f in fs:
                f()
                f()
            t = interleaved(fs, number_for(theirs, 0.005), rounds)
            us = [spread(t[:, c])[0] * 1e6 for c in range(len(fs))] + [float("nan")] * (5 - len(fs))
            if model is one:
                rows[k].update(one_ours_us=us[0], one_out_us=us[1], one_pin_us=us[3])
            else:
                rows.append({"robot": robot, "call": call, "ours_us": us[0], "out_us": us[1], "kernel_us": us[2],
                             "c_entry_us": us[4], "python_us": us[0] - us[2], "python_out_us": us[1] - us[2],
                             "pin_us": us[3]})
    if verbose:
        print(f"\nWhere a call's time goes on {robot} (µs, process time, medians of interleaved rounds): the public "
              "call without and with out=, its compiled kernel alone called from Python through numba's entry point, "
              "the differences (the Python function), its C-level entry alone (kernels/entries.py; given the output), "
              "Pinocchio's call; and the three calls on a one-joint pendulum (the fixed cost of a call)")
        print("| call | ours | with out= | kernel alone | Python function | with out= | C entry alone | Pinocchio | "
              "one joint: ours | with out= | Pinocchio |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['call']} | {r['ours_us']:.2f} | {r['out_us']:.2f} | {r['kernel_us']:.2f} | "
                  f"{r['python_us']:.2f} | {r['python_out_us']:.2f} | {r['c_entry_us']:.2f} | {r['pin_us']:.2f} | "
                  f"{r['one_ours_us']:.2f} | {r['one_out_us']:.2f} | {r['one_pin_us']:.2f} |")
    return rows


def bench_call_parts(robot="UR5", rounds=21, verbose=True):
    """The parts of one ``crba`` call on ``robot`` (µs, medians of interleaved rounds): the public call, without and
    with a preallocated ``out``; its C-level entry (``kernels/entries.py``) making its output and given one; numba's
    entry point of the kernel given a new output array (``np.empty``) and a preallocated one;
    ``np.empty`` alone; the dtype and ndim check of q alone; the checks of a preallocated ``out`` alone (dtype, ndim,
    ``flags.carray``); an empty call. Their differences: the Python function less its new array (the check, the
    call, the Data's tuple), the new array once a kernel has run (more than alone: the kernel has displaced what the
    allocation reads from the caches), and the entry."""
    import pinocchio as pin

    import multibody as mb
    from multibody.bench.timing import interleaved, spread

    path, floating = next((p, f) for n, p, f in ROBOTS if n == robot)
    model, _ = _load(path, floating, pin)
    q = model.random_configuration(np.random.default_rng(0), scale=1.0)
    zero = np.zeros(model.nv)
    call, (mi, mf, _, work, M) = _kernel_entries(model, q, zero, zero, 0, bare=True)["crba"]
    shape, f64, empty = M.shape, np.dtype(np.float64), np.empty
    mb.crba(model, q)
    c_entry = model.__dict__["_multibody_entry_crba"]
    parts = {"public call": lambda: mb.crba(model, q),
             "public call, out=": lambda: mb.crba(model, q, out=M),
             "C entry, new output": lambda: c_entry(q, None),
             "C entry, preallocated output": lambda: c_entry(q, M),
             "numba entry, new output": lambda: call(mi, mf, q, work, empty(shape)),
             "numba entry, preallocated output": lambda: call(mi, mf, q, work, M),
             "np.empty alone": lambda: empty(shape),
             "dtype and ndim check alone": lambda: q.dtype is f64 and q.ndim == 1,
             "checks of out alone": lambda: M.dtype is f64 and M.ndim == 2 and M.flags.carray,
             "empty call": lambda: None}
    fs = list(parts.values())
    for f in fs:
        f()
    t = interleaved(fs, 2000, rounds)
    row = {name: spread(t[:, k])[0] * 1e6 for k, name in enumerate(parts)}
    if verbose:
        print(f"\nThe parts of a crba call on {robot} (µs, process time, medians of {rounds} interleaved rounds)")
        print("| " + " | ".join(parts) + " |")
        print("|" + "---:|" * len(parts))
        print("| " + " | ".join(f"{row[k]:.3f}" for k in parts) + " |")
    return row


def pinocchio_ik(pin, pm, pd, fids, targets, q0, tol=1e-9, iterations=1000, damping=1e-12):
    """Pinocchio's damped least squares (its documented inverse-kinematics example with full steps), several frames
    stacked: ``(q, converged, iterations)``; converged when every frame's ``log6`` residual is within ``tol``."""
    q = q0.copy()
    for it in range(iterations):
        pin.framesForwardKinematics(pm, pd, q)
        errs, jacs = [], []
        for fid, target in zip(fids, targets):
            iMd = pd.oMf[fid].actInv(target)
            errs.append(pin.log6(iMd).vector)
        err = np.concatenate(errs)
        if np.abs(err).max() <= tol:
            return q, True, it
        for fid, target in zip(fids, targets):
            iMd = pd.oMf[fid].actInv(target)
            jacs.append(-pin.Jlog6(iMd.inverse()) @ pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL))
        J = np.vstack(jacs)
        dv = -J.T @ np.linalg.solve(J @ J.T + damping * np.eye(J.shape[0]), err)
        q = pin.integrate(pm, q, dv)
    return q, False, iterations


def _ik_case(model, pm, pin, frames, targets_of, q0, restarts):
    """Our solves and Pinocchio's of every target: a row of counts and median times."""
    import multibody as mb
    from multibody.bench.urdf import pinocchio_state
    from multibody.errors import ConvergenceWarning

    pd = pm.createData()
    fids = [pm.getFrameId(f) for f in frames]
    lo, hi = model.lower_limits, model.upper_limits
    qp0 = pinocchio_state(model, pm, q0)[0]
    ours_t, pin_t, ours_ok, pin_ok, pin_inside = [], [], 0, 0, 0
    for targets in targets_of:
        t0 = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            r = mb.inverse_kinematics(model, dict(zip(frames, targets)), q0, restarts=restarts)
        ours_t.append(time.process_time() - t0)
        worst = max(max(_placement_error(model, r.q, f, t)) for f, t in zip(frames, targets))
        ours_ok += worst <= 1e-9 and bool(np.all(r.q >= lo) and np.all(r.q <= hi))
        se3 = [pin.SE3(R, p) for R, p in targets]
        t0 = time.process_time()
        qp, ok, _ = pinocchio_ik(pin, pm, pd, fids, se3, qp0)
        pin_t.append(time.process_time() - t0)
        pin_ok += ok
        inside = [(qp[pm.joints[pm.getJointId(j.name)].idx_q], lo[j.q_slice.start], hi[j.q_slice.start])
                  for j in model.joints[1:] if j.joint.nq == 1]
        pin_inside += ok and all(lo_ - 1e-12 <= x <= hi_ + 1e-12 for x, lo_, hi_ in inside)
    n = len(targets_of)
    return {"targets": n, "ours_reached": int(ours_ok), "pin_converged": int(pin_ok), "pin_within_limits": int(
        pin_inside), "ours_ms": float(np.median(ours_t)) * 1e3, "pin_ms": float(np.median(pin_t)) * 1e3,
        "ratio": float(np.median(ours_t) / np.median(pin_t))}


def _placement_error(model, q, frame, target):
    import multibody as mb

    R, p = mb.frame_placement(model, q, frame)
    X = target[0] @ R.T
    w = np.array([X[2, 1] - X[1, 2], X[0, 2] - X[2, 0], X[1, 0] - X[0, 1]])
    return float(np.arctan2(0.5 * np.linalg.norm(w), 0.5 * (np.trace(X) - 1.0))), float(np.linalg.norm(target[1] - p))


def bench_ik(panda_targets=200, talos_targets=20, verbose=True):
    """The inverse-kinematics table (module docstring)."""
    import pinocchio as pin

    import multibody as mb

    rows = []
    model, pm = _load("panda_description/urdf/panda.urdf", False, pin)
    rng = np.random.default_rng(35)
    lo, hi = model.lower_limits, model.upper_limits
    targets = [[mb.frame_placement(model, rng.uniform(lo, hi), "panda_hand")] for _ in range(panda_targets)]
    mb.inverse_kinematics(model, {"panda_hand": targets[0][0]}, 0.5 * (lo + hi))        # compile
    rows.append({"case": f"Panda hand, {panda_targets} placements, restarts=20",
                 **_ik_case(model, pm, pin, ["panda_hand"], targets, 0.5 * (lo + hi), 20)})
    model, pm = _load("talos_data/robots/talos_reduced.urdf", True, pin)
    lo, hi = model.lower_limits, model.upper_limits
    q0 = model.neutral()
    feet = [mb.frame_placement(model, q0, f) for f in ("left_sole_link", "right_sole_link")]
    targets = []
    for _ in range(talos_targets):
        qt = q0.copy()
        for k in range(1, 8):
            s = model.joint(f"arm_left_{k}_joint").q_slice
            qt[s] = rng.uniform(lo[s], hi[s])
        targets.append(feet + [mb.frame_placement(model, qt, "gripper_left_base_link")])
    rows.append({"case": f"Talos, both feet held and a hand, {talos_targets} targets, restarts=5",
                 **_ik_case(model, pm, pin, ["left_sole_link", "right_sole_link", "gripper_left_base_link"],
                            targets, q0, 5)})
    if verbose:
        print("\nInverse kinematics to 1e-9 from one fixed start: solves that reach every target within the joint "
              "limits (ours), converge (Pinocchio's loop) and end within the limits; median process time per solve")
        print("| case | reached (ours) | converged (pin) | pin within limits | ours ms | pin ms | ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(f"| {r['case']} | {r['ours_reached']}/{r['targets']} | {r['pin_converged']}/{r['targets']} | "
                  f"{r['pin_within_limits']}/{r['targets']} | {r['ours_ms']:.2f} | {r['pin_ms']:.2f} | "
                  f"{r['ratio']:.2f} |")
    return rows


def bench_self_collision(configurations=50, verbose=True):
    """The Panda's self-collision check and its distances against coal's on the same hulls (module docstring)."""
    import multibody as mb
    from multibody.bench.timing import interleaved, spread

    root = robots_folder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.io.load_urdf(root / "panda_description/urdf/panda.urdf", package_dirs=[root.parent.parent])
    disabled = mb.io.srdf_disabled_pairs(root / "panda_description/srdf/panda.srdf", model)
    rng = np.random.default_rng(0)
    Q = [rng.uniform(model.lower_limits, model.upper_limits) for _ in range(configurations)]
    hits = sum(bool(mb.collisions(model, q, exclude=disabled)) for q in Q)
    pairs = len(mb.collisions(model, Q[0], margin=np.inf, exclude=disabled))
    times = interleaved([lambda: mb.collisions(model, Q[0], exclude=disabled),
                         lambda: mb.collisions(model, Q[0], margin=np.inf, exclude=disabled)], 20, 7)
    row = {"pairs": pairs, "configurations": configurations, "in_collision": hits,
           "check_us": spread(times[:, 0])[0] * 1e6, "all_distances_us": spread(times[:, 1])[0] * 1e6}
    if verbose:
        print(f"\nPanda self-collision on its {len(model.collisions)} collision meshes (convex hulls), {pairs} pairs "
              f"after the SRDF's {len(disabled)} disabled ones: {hits} of {configurations} random configurations "
              f"within the limits in collision; one check {row['check_us']:.0f} µs, every pair's distance "
              f"{row['all_distances_us']:.0f} µs (process time)")
    return row


def bench_robotics(verbose=True):
    """The three tables of the module docstring."""
    if robots_folder() is None:
        if verbose:
            print("example-robot-data is not installed: no robotics benchmarks.")
        return None
    try:
        import pinocchio  # noqa: F401
    except ImportError:
        if verbose:
            print("Pinocchio (`pin`) is not installed: no comparison of the control loop's calls.")
        return None
    return {"calls": bench_calls(verbose=verbose), "split": bench_call_split(verbose=verbose),
            "parts": bench_call_parts(verbose=verbose),
            "ik": bench_ik(verbose=verbose),
            "self_collision": bench_self_collision(verbose=verbose)}
