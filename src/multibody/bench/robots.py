"""Robots of ``example-robot-data``: the cost of control inside the compiled loop, batches of controlled runs, and ABA
against Pinocchio on the largest robot (issue 23).

``bench_robots()`` prints three tables (ratios measured in this process, interleaved rounds of process time;
``bench/timing.py``):

* the UR5 holding a posture for 2 s (RK4, h = 1e-3) with a PD + gravity compensation — as a controller element
  (``mb.JointPD``), as a numba torque law ``tau(t, q, v, out)`` calling ``mb``'s gravity kernel, and as a Python
  callback — against the same run with constant torques (the cost of the dynamics alone);
* 1 000 runs of the controlled UR5 in ``simulate_batch`` (the SIMD lanes and the per-run loop), processor time per
  run, against one single run;
* ABA of the largest robot that loads (TIAGo dual-arm, floating base: 102 bodies, nv = 107) against ``pin.aba``,
  with the agreement of the two (``bench.urdf.pinocchio_agreement``).

Skipped, with a line saying so, where ``example-robot-data`` (or ``pin`` for the last table) is not installed.
"""
import importlib.metadata as md
import warnings

import numpy as np

#: the posture the UR5 holds, and the largest robot of example-robot-data that loads (with its floating base)
POSTURE = (0.3, -1.2, 1.5, -0.8, 1.2, 0.4)
LARGEST = "tiago_description/robots/tiago_dual.urdf"


def robots_folder():
    """The ``robots`` folder of the installed ``example-robot-data``, or None."""
    try:
        root = md.distribution("example-robot-data").locate_file("cmeel.prefix/share/example-robot-data/robots")
    except md.PackageNotFoundError:
        return None
    return root if root.is_dir() else None


def ur5_holding(posture=POSTURE, omega=40.0):
    """(the UR5 without controllers, the UR5 with a ``JointPD`` + gravity compensation holding ``posture``): per
    joint Kp = ω² M_ii, Kd = 2 ω M_ii (M at the posture) — each joint a critically damped oscillator of natural
    frequency ω, were M diagonal (``tests/test_controllers.py`` shows the decay from the closed loop's eigenvalues)."""
    import multibody as mb

    root = robots_folder()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.io.load_urdf(root / "ur_description/urdf/ur5_robot.urdf", limits=False)  # (no stops: controlled)
    posture = np.asarray(posture, dtype=float)
    d = np.diag(mb.crba(model, posture))
    return model, model.with_controllers({"hold": mb.JointPD(omega**2 * d, 2 * omega * d, posture)})


def _pd_law(model, kp, kd, posture):
    """A numba torque law ``tau(t, q, v, out)``: PD + the gravity torques of ``kernels.control.gravity_kernel``, the
    model's packed arrays constants of the closure and its scratch allocated per call (what a user writes with the
    library's kernels)."""
    from numba import njit

    from multibody.model.data import Data
    from multibody.kernels.control import gravity_kernel

    d = Data(model)
    mi, mf, size = d.mi, d.mf, d.work.shape[0]     # (constants of the compiled law)
    n, nv = model.nbodies + 1, model.nv
    kp, kd, posture = (np.ascontiguousarray(x, dtype=float) for x in (kp, kd, posture))

    @njit
    def law(t, q, v, out):
        g = np.empty(nv)
        gravity_kernel(mi, mf, q, np.empty(size), np.empty((n, 4)), g)
        for k in range(out.shape[0]):
            out[k] = kp[k] * (posture[k] - q[k]) - kd[k] * v[k] + g[k]

    return law


def bench_control(rounds=7, t_end=2.0, h=1e-3, verbose=True):
    """The UR5 holding its posture, controlled four ways, against constant torques: rows of ratios."""
    import multibody as mb
    from multibody.bench.timing import fmt_spread, interleaved, spread

    model, held = ur5_holding()
    posture = np.asarray(POSTURE)
    c = held.controllers[0].controller
    g = mb.gravity_forces(model, posture)
    q0 = posture + 0.05
    kw = dict(method="RK4", h=h, n_out=3, energy=False)

    def python_pd(t, q, v):
        return c.kp * (posture - q) - c.kd * v + mb.gravity_forces(model, q)

    law = _pd_law(model, c.kp, c.kd, posture)
    runs = {
        "constant torques g(q*)": lambda: mb.simulate(model, q0, np.zeros(6), t_end, tau=g, **kw),
        "mb.JointPD element": lambda: mb.simulate(held, q0, np.zeros(6), t_end, **kw),
        "numba law tau(t, q, v, out)": lambda: mb.simulate(model, q0, np.zeros(6), t_end, tau=law, **kw),
    }
    for f in runs.values():
        f()                                   # compile
    err = np.abs(runs["mb.JointPD element"]().q[-1] - posture).max()
    times = interleaved(list(runs.values()), 1, rounds)
    rows = [{"run": name, "ms": spread(times[:, k])[0] * 1e3,
             "ratio": fmt_spread(times[:, k] / times[:, 0])} for k, name in enumerate(runs)]
    # the Python callback: far slower, timed in fewer rounds against the constant-torque run
    slow = interleaved([runs["constant torques g(q*)"],
                        lambda: mb.simulate(model, q0, np.zeros(6), t_end, tau=python_pd, **kw)], 1, 3)
    rows.append({"run": "Python callback tau(t, q, v)", "ms": spread(slow[:, 1])[0] * 1e3,
                 "ratio": fmt_spread(slow[:, 1] / slow[:, 0])})
    if verbose:
        print(f"UR5 holding a posture (PD + gravity compensation), RK4 h = {h:g} for {t_end:g} s from 0.05 rad off: "
              f"final error {err:.1e} rad")
        print("| run | ms per run | ratio to constant torques |")
        print("|---|---:|---:|")
        for r in rows:
            print(f"| {r['run']} | {r['ms']:.1f} | {r['ratio']} |")
    return {"final_error": err, "rows": rows}


def bench_batch(runs=1000, t_end=2.0, h=1e-3, rounds=3, verbose=True):
    """``runs`` runs of the controlled UR5 in ``simulate_batch`` through the SIMD lanes and through the per-run loop
    (``lanes=False``), and single runs: the processor time per run (of every thread: the cost of a run, which a busy
    machine does not change as it changes the wall clock), in interleaved rounds."""
    import multibody as mb
    from multibody.bench.timing import interleaved, spread

    _, held = ur5_holding()
    rng = np.random.default_rng(0)
    Q0 = np.asarray(POSTURE) + rng.uniform(-0.05, 0.05, (runs, 6))
    kw = dict(h=h, n_out=3, energy=False)
    calls = [lambda: mb.simulate_batch(held, Q0, None, t_end, **kw),
             lambda: mb.simulate_batch(held, Q0, None, t_end, lanes=False, **kw),
             lambda: mb.simulate(held, Q0[0], np.zeros(6), t_end, method="RK4", **kw)]
    batch = mb.simulate_batch(held, Q0[:9], None, t_end, **kw)       # compile
    mb.simulate_batch(held, Q0[:9], None, t_end, lanes=False, **kw)
    calls[2]()
    times = interleaved(calls, 1, rounds)            # process time: the threads' processor time added
    lanes, loop, single = (spread(times[:, k])[0] for k in range(3))
    batch = calls[0]()
    err = np.abs(batch.q[:, -1] - np.asarray(POSTURE)).max()
    row = {"runs": runs, "path": batch.info["path"], "threads": batch.info["threads"], "lanes_s": lanes,
           "loop_s": loop, "single_ms": single * 1e3, "lanes_per_run_ms": lanes / runs * 1e3,
           "loop_per_run_ms": loop / runs * 1e3, "final_error": err}
    if verbose:
        print(f"\n{runs} runs of the controlled UR5 in simulate_batch, {row['threads']} threads, processor time (median "
              f"of {rounds} interleaved rounds); largest final error {err:.1e} rad")
        print("| path | CPU s for the batch | CPU ms per run | ratio to a single run |")
        print("|---|---:|---:|---:|")
        for name, total in ((batch.info["path"], lanes), ("compiled batch (lanes=False)", loop)):
            print(f"| {name} | {total:.2f} | {total / runs * 1e3:.2f} | {total / runs / single:.2f} |")
        print(f"| single simulate | | {single * 1e3:.2f} | 1.00 |")
    return row


def bench_largest(rounds=25, verbose=True):
    """ABA on the largest robot of example-robot-data (``LARGEST``, floating base) against Pinocchio's."""
    import multibody as mb
    from multibody.bench.timing import fmt_spread, interleaved, number_for, spread
    from multibody.bench.urdf import pinocchio_agreement, pinocchio_state

    try:
        import pinocchio as pin
    except ImportError:
        if verbose:
            print("\nPinocchio (`pin`) is not installed: no comparison on the largest robot.")
        return None
    path = str(robots_folder() / LARGEST)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.io.load_urdf(path, floating_base=True)
        pm = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    pd = pm.createData()
    rng = np.random.default_rng(0)
    q = model.random_configuration(rng, scale=1.0)
    v = rng.uniform(-1, 1, model.nv)
    tau = rng.uniform(-10, 10, model.nv)
    qp, T, _ = pinocchio_state(model, pm, q, v)
    vp, tp = T @ v, T @ tau
    calls = [lambda: mb.aba(model, q, v, tau), lambda: pin.aba(pm, pd, qp, vp, tp)]
    times = interleaved(calls, number_for(calls[0]), rounds)
    row = {"model": LARGEST.split("/")[-1] + " (floating base)", "bodies": model.nbodies, "nv": model.nv,
           "ours_us": spread(times[:, 0])[0] * 1e6, "pin_us": spread(times[:, 1])[0] * 1e6,
           "ratio": spread(times[:, 0] / times[:, 1])[0], "ratio_range": fmt_spread(times[:, 0] / times[:, 1]),
           "agreement": pinocchio_agreement(model, pm, np.random.default_rng(1))}
    if verbose:
        ag = row["agreement"]
        print("\n| model | bodies | nv | ABA multibody µs | ABA Pinocchio µs | ratio ours/pin |")
        print("|---|---:|---:|---:|---:|---:|")
        print(f"| {row['model']} | {row['bodies']} | {row['nv']} | {row['ours_us']:.2f} | {row['pin_us']:.2f} | "
              f"{row['ratio_range']} |")
        print(f"\nAgreement with Pinocchio (bench.urdf.pinocchio_agreement): ABA backward error {ag['aba']:.1e}, RNEA "
              f"{ag['rnea']:.1e}, mass matrix {ag['crba']:.1e}.")
    return row


def bench_robots(verbose=True):
    """The three tables of the module docstring."""
    if robots_folder() is None:
        if verbose:
            print("example-robot-data is not installed: no robot benchmarks.")
        return None
    return {"control": bench_control(verbose=verbose), "batch": bench_batch(verbose=verbose),
            "largest": bench_largest(verbose=verbose)}
