"""Speed of the derivatives of the dynamics against Pinocchio, the same models built in both, in one process.

``bench_derivatives(sizes=(7, 30), robot=True, batch=1000)`` times, for revolute chains of N bodies (those of
``bench.dynamics``) and for the largest robot of example-robot-data that both libraries load from its URDF (Talos,
50 velocity coordinates, floating base), one call from Python of

* ``multibody.aba_derivatives`` against ``pin.computeABADerivatives`` (∂q̈/∂q, ∂q̈/∂q̇, M⁻¹),
* ``multibody.rnea_derivatives`` against ``pin.computeRNEADerivatives`` (∂τ/∂q, ∂τ/∂q̇, M),
* ``multibody.minv`` against ``pin.computeMinverse`` and ``multibody.coriolis_matrix`` against
  ``pin.computeCoriolisMatrix``,
* ``multibody.linearize`` (its analytical path) against one ``multibody.aba_derivatives`` call,

and the batch throughput of ``aba_derivatives_batch`` for ``batch`` states at N = 30 against a Python loop over
``pin.computeABADerivatives``. Before timing, it checks that both libraries give the same derivatives, so the
comparison is of the same numbers. Timings interleave the calls in rounds of process time (``bench/timing.py``):
the table gives the median and the range of each ratio over the rounds. Read the ratios, not the absolute times
(DESIGN.md, performance rules).
"""
import os
import time

import numpy as np

from multibody.bench.dynamics import revolute_chain, to_pinocchio
from multibody.bench.timing import environment, interleaved, number_for, spread

#: the largest robot of example-robot-data that the benchmark loads (URDF path below its robots/, floating base)
ROBOT = ("Talos", "talos_data/robots/talos_full_v2.urdf", True)


def robots_dir():
    """The ``robots`` folder of example-robot-data installed beside Pinocchio, or None."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("pinocchio")
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    base = os.path.dirname(spec.origin)
    for _ in range(4):          # .../cmeel.prefix/lib/pythonX.Y/site-packages/pinocchio -> .../cmeel.prefix
        base = os.path.dirname(base)
    path = os.path.join(base, "share", "example-robot-data", "robots")
    return path if os.path.isdir(path) else None


def _sym(M):
    return np.triu(M) + np.triu(M, 1).T


def _chain_case(n, rng):
    """(label, model, our calls, Pinocchio's calls) of a revolute chain of n bodies."""
    model = revolute_chain(n)
    pm, pq, pv = to_pinocchio(model)
    q, v, x = (rng.uniform(-1, 1, n) for _ in range(3))
    return _case(f"chain N={n}", model, pm, pm.createData(), q, v, x, np.eye(n), q[pq])


def _robot_case(rng):
    """The calls of :func:`_chain_case` for the robot ``ROBOT``, or None when example-robot-data is missing."""
    import pinocchio as pin

    import multibody as mb
    from multibody.bench.urdf import pinocchio_state

    root = robots_dir()
    if root is None:
        return None
    name, path, floating = ROBOT
    urdf = os.path.join(root, path)
    if not os.path.exists(urdf):
        return None
    model = mb.load_model(urdf, floating_base=floating)
    pm = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromUrdf(urdf)
    pd = pm.createData()
    q = model.random_configuration(rng, scale=1.0)
    v, x = rng.uniform(-1, 1, model.nv), rng.uniform(-10, 10, model.nv)
    qp, T, _ = pinocchio_state(model, pm, q, v)
    return _case(f"{name} (nv={model.nv})", model, pm, pd, q, v, x, T, qp)


def _case(label, model, pm, pd, q, v, x, T, qp):
    """The calls to time for one model, after checking that both libraries agree (``T``: our velocities to
    Pinocchio's, ``qp``: Pinocchio's configuration)."""
    import pinocchio as pin

    import multibody as mb

    vp, xp = T @ v, T @ x
    ours = mb.aba_derivatives(model, q, v, x)
    theirs = pin.computeABADerivatives(pm, pd, qp, vp, xp)
    cond = np.linalg.cond(mb.crba(model, q))
    for a, b in zip(ours, theirs):
        b = np.array(b)
        b = _sym(b) if a is ours[2] else b
        err = np.abs(T @ a @ T.T - b).max() / max(1.0, np.abs(b).max())
        if err > max(1e-12, 100 * np.finfo(float).eps * cond):
            raise AssertionError(f"{label}: multibody's and Pinocchio's ABA derivatives differ by {err:.2e} "
                                 "(relative): the models are not the same")
    ours = {"aba_derivatives": lambda: mb.aba_derivatives(model, q, v, x),
            "rnea_derivatives": lambda: mb.rnea_derivatives(model, q, v, x),
            "minv": lambda: mb.minv(model, q),
            "coriolis_matrix": lambda: mb.coriolis_matrix(model, q, v),
            "linearize": lambda: mb.linearize(model, q, v)}
    theirs = {"aba_derivatives": lambda: pin.computeABADerivatives(pm, pd, qp, vp, xp),
              "rnea_derivatives": lambda: pin.computeRNEADerivatives(pm, pd, qp, vp, xp),
              "minv": lambda: pin.computeMinverse(pm, pd, qp),
              "coriolis_matrix": lambda: pin.computeCoriolisMatrix(pm, pd, qp, vp),
              "linearize": ours["aba_derivatives"]}
    return label, model, ours, theirs


def bench_derivatives(sizes=(7, 30), robot=True, batch=1000, batch_size=30, rounds=9, verbose=True, seed=0):
    """Time the derivatives for revolute chains of ``sizes`` bodies and (``robot``) the largest robot of
    example-robot-data, against Pinocchio, and the batch throughput for ``batch`` states at N = ``batch_size``.
    Returns a list of row dicts (model, algorithm, ours_us, peer, peer_us, ratio, ratio_min, ratio_max) and prints
    a table. Needs Pinocchio (``pin``); without it, returns no rows."""
    try:
        import pinocchio as pin
    except ImportError:
        if verbose:
            print("Pinocchio (`pin`) is not installed: nothing to compare the derivatives with.")
        return []
    import multibody as mb

    rng = np.random.default_rng(seed)
    cases = [_chain_case(n, rng) for n in sizes]
    if robot:
        case = _robot_case(rng)
        if case is not None:
            cases.append(case)
    rows = []
    for label, model, ours, theirs in cases:
        for algo, f in ours.items():
            g = theirs[algo]
            t = interleaved([f, g], number_for(g), rounds)
            peer = "one multibody.aba_derivatives" if algo == "linearize" else "Pinocchio"
            rows.append(_row(label, algo, t, peer))
    if batch:
        model = revolute_chain(batch_size)
        pm, pq, pv = to_pinocchio(model)
        pd = pm.createData()
        Q, V, X = (rng.uniform(-1, 1, (batch, batch_size)) for _ in range(3))
        out = mb.aba_derivatives_batch(model, Q, V, X)
        np.testing.assert_array_equal(out[0][batch // 2], mb.aba_derivatives(model, Q[batch // 2], V[batch // 2],
                                                                             X[batch // 2])[0])

        def pin_loop():
            for k in range(batch):
                pin.computeABADerivatives(pm, pd, Q[k], V[k], X[k])

        t = interleaved([lambda: mb.aba_derivatives_batch(model, Q, V, X), pin_loop], 1, max(3, rounds // 2),
                        clock=time.perf_counter) / batch
        rows.append(_row(f"batch of {batch}, chain N={batch_size}", "aba_derivatives_batch", t,
                         "Python loop over Pinocchio", wall=True))
    if verbose:
        print(environment("pinocchio"))
        print(format_table(rows))
    return rows


def _row(label, algo, t, peer, wall=False):
    ratio = spread(t[:, 0] / t[:, 1])
    return dict(model=label, algorithm=algo, ours_us=spread(t[:, 0])[0] * 1e6, peer=peer,
                peer_us=spread(t[:, 1])[0] * 1e6, ratio=ratio[0], ratio_min=ratio[1], ratio_max=ratio[2],
                clock="wall" if wall else "process")


def format_table(rows):
    """The rows of :func:`bench_derivatives` as a Markdown table."""
    lines = ["| model | algorithm | multibody µs | peer | peer µs | ratio ours/peer (range) |",
             "|---|---|---:|---|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['model']} | {r['algorithm']} | {r['ours_us']:.2f} | {r['peer']} | {r['peer_us']:.2f} | "
                     f"{r['ratio']:.2f} ({r['ratio_min']:.2f}–{r['ratio_max']:.2f}) |")
    lines += ["", "Per call from Python: median of interleaved rounds of process time, the ratio's median and range "
              "over the rounds; the batch row is per state in wall time (aba_derivatives_batch, slices in threads, "
              "against a Python loop over pin.computeABADerivatives). linearize is its analytical path (a model "
              "without constraints), compared with one aba_derivatives call."]
    return "\n".join(lines)


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description="derivatives of the dynamics: speed against Pinocchio")
    p.add_argument("--sizes", type=int, nargs="+", default=[7, 30])
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--no-robot", action="store_true", help="skip the robot of example-robot-data")
    args = p.parse_args(argv)
    bench_derivatives(sizes=tuple(args.sizes), robot=not args.no_robot, batch=args.batch, rounds=args.rounds)
    return 0
