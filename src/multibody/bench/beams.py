"""Beams of rigid finite elements against Exudyn's ANCF cable (``bench/exudyn_beams.py``) for the same accuracy, and
the cost per segment (``multibody bench --only beams``).

* **Statics**: the cantilever under a dead tip load α = PL²/EI = 3 (the elastica, ``systems/elastic.cantilever``):
  ``mb.static_equilibrium`` against Exudyn's ``SolveStatic``. The error is the tip's distance from
  the elastica (shooting to 1e-10, :func:`elastica_tip`), over L. For each target (1e-3, 1e-4) each side takes its
  cheapest discretization that meets it (ours: 8…256 segments; Exudyn: 2…32 elements with 1, 2 or 5 load steps,
  those that converge), and the two solves are timed in rounds of process time (Exudyn's solve alone, its model
  built before the clock; ours the whole call).
* **Dynamics**: the flexible pendulum (``systems/elastic.flexible_pendulum``: L = 2, EI = 1, ρA = 1, pinned,
  released horizontal, 2 s): our compiled RK4 run (a step inside the stability limit of the highest mode) against
  Exudyn's generalized-α run of the ANCF cable. The error is the largest distance of the tip's path from the
  reference — Exudyn's 32 elements at h = 5e-4 s (whose own change from h = 1e-3 s is 1e-5 L) — over L; the same
  choice of the cheapest configuration per target (1e-2, 2e-3), interleaved timing of whole runs.
* **O(N)**: the right-hand side of a beam's tree (``tree_rhs``: applied forces and ABA) per segment, for 16 … 1024
  segments: constant, as for any chain.

Ratios are ours / Exudyn (below 1: ours is cheaper), median (range) over the rounds.
"""
import math

import numpy as np

from multibody.bench.timing import environment, fmt_spread, interleaved, number_for

__all__ = ["bench_beams", "elastica_tip", "statics_rows", "pendulum_rows", "cost_per_segment"]


def elastica_tip(alpha):
    """(u/L, v/L) of the inextensible cantilever's tip under the dead load α = PL²/EI (shooting, rtol 1e-12)."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import brentq

    def end(k0):
        sol = solve_ivp(lambda s, y: [y[1], -alpha * math.cos(y[0]), math.cos(y[0]), math.sin(y[0])], (0.0, 1.0),
                        [0.0, k0, 0.0, 0.0], rtol=1e-12, atol=1e-13)
        return sol.y[:, -1]
    y = end(brentq(lambda k: end(k)[1], 0.0, alpha, xtol=1e-14))
    return np.array([1.0 - y[2], y[3]])


def _cheapest(candidates, target):
    """The candidate of least ``cost`` (one timing) whose error is at most ``target``, else None."""
    good = [c for c in candidates if c["error"] <= target]
    return min(good, key=lambda c: c["cost"]) if good else None


def statics_rows(targets=(1e-3, 1e-4), alpha=3.0, rounds=5, verbose=True):
    import multibody as mb
    from multibody.bench.exudyn_beams import exudyn_cantilever_statics
    from multibody.systems.elastic import cantilever

    exact = elastica_tip(alpha)
    ours, peer = [], []
    for n in (8, 16, 32, 64, 128, 256):
        model = cantilever(n, load=alpha)
        q0 = model.neutral()
        p = mb.frame_placement(model, mb.static_equilibrium(model, q0), "rod.tip")[1]
        run = (lambda m=model, q=q0: mb.static_equilibrium(m, q))
        ours.append({"n": n, "error": float(np.hypot(1.0 - p[0] - exact[0], -p[2] - exact[1])), "run": run,
                     "cost": interleaved([run], number=number_for(run, 0.01), rounds=3).min()})
    for m in (2, 4, 8, 16, 32):
        for steps in (1, 2, 5):      # Exudyn's load steps: the fewest that converge are the cheapest
            try:
                outs = [exudyn_cantilever_statics(m, alpha, load_steps=steps) for _ in range(3)]
            except Exception:        # (Exudyn raises when its Newton fails)
                continue
            tip = outs[0]["tip"]
            peer.append({"n": m, "steps": steps, "error": float(np.hypot(1.0 - tip[0] - exact[0], -tip[1] - exact[1])),
                         "run": (lambda m=m, s=steps: exudyn_cantilever_statics(m, alpha, load_steps=s)),
                         "cost": min(o["cpu_seconds"] for o in outs)})
    rows = []
    for target in targets:
        a, b = _cheapest(ours, target), _cheapest(peer, target)
        if a is None or b is None:
            continue
        number = number_for(a["run"], 0.05)
        t = np.empty((rounds, 2))
        for r in range(rounds):      # Exudyn's time is its solve's alone (building its model each call costs more)
            t[r, 0] = interleaved([a["run"]], number=number, rounds=1)[0, 0]
            t[r, 1] = np.mean([b["run"]()["cpu_seconds"] for _ in range(min(number, 20))])
        row = {"case": "statics", "target": target, "segments": a["n"], "error": a["error"], "ours_s": float(
            np.median(t[:, 0])), "exudyn_elements": b["n"], "exudyn_error": b["error"],
            "exudyn_steps": b["steps"], "exudyn_s": float(np.median(t[:, 1])), "ratio": fmt_spread(t[:, 0] / t[:, 1])}
        rows.append(row)
        if verbose:
            print(f"  statics, error <= {target:.0e} L: ours {a['n']} segments ({a['error']:.1e}) "
                  f"{row['ours_s'] * 1e3:.2f} ms; Exudyn {b['n']} ANCF elements, {b['steps']} load steps "
                  f"({b['error']:.1e}) "
                  f"{row['exudyn_s'] * 1e3:.2f} ms; ours/Exudyn x {row['ratio']}", flush=True)
    return rows


def _our_pendulum(n):
    """(model, run) of the flexible pendulum with n segments: RK4 at a step inside the stability limit of its highest
    mode (h ω_max ≤ 2, and 2 s in a multiple of 200 steps for the 201 outputs)."""
    import multibody as mb
    from multibody.systems.elastic import flexible_pendulum

    model = flexible_pendulum(n)
    hanging = model.neutral()
    hanging[0] = 0.5 * math.pi
    w = mb.modes(model, hanging).omega.max()
    steps = 200 * math.ceil(w / 200)
    h = 2.0 / steps
    return model, (lambda: mb.simulate(model, model.neutral(), np.zeros(model.nv), 2.0, method="RK4", h=h, n_out=201,
                                       energy=False, progress=False))


def pendulum_rows(targets=(1e-2, 2e-3), rounds=3, verbose=True):
    from multibody.bench.exudyn_beams import exudyn_flexible_pendulum
    from multibody.systems.elastic import tip_positions

    ref = exudyn_flexible_pendulum(32, step_size=5e-4)["tip"]
    ours, peer = [], []
    for n in (8, 16, 32, 64):
        model, run = _our_pendulum(n)
        run()
        cost = interleaved([run], rounds=1)[0, 0]
        tip = tip_positions(model, run().q, "pendulum.tip")
        ours.append({"n": n, "error": float(np.hypot(tip[:, 0] - ref[:, 0], tip[:, 2] - ref[:, 1]).max() / 2.0),
                     "run": run, "cost": cost})
    for m, h in ((4, 2e-3), (8, 2e-3), (8, 1e-3), (16, 2e-3), (16, 1e-3), (32, 1e-3)):
        out = exudyn_flexible_pendulum(m, step_size=h)
        peer.append({"n": m, "h": h, "error": float(np.hypot(*(out["tip"] - ref).T).max() / 2.0),
                     "run": (lambda m=m, h=h: exudyn_flexible_pendulum(m, step_size=h)), "cost": out["cpu_seconds"]})
    rows = []
    for target in targets:
        a, b = _cheapest(ours, target), _cheapest(peer, target)
        if a is None or b is None:
            continue
        t = np.empty((rounds, 2))
        for r in range(rounds):
            t[r, 0] = interleaved([a["run"]], rounds=1)[0, 0]
            t[r, 1] = b["run"]()["cpu_seconds"]
        row = {"case": "flexible pendulum", "target": target, "segments": a["n"], "error": a["error"],
               "ours_s": float(np.median(t[:, 0])), "exudyn_elements": b["n"], "exudyn_step": b["h"],
               "exudyn_error": b["error"], "exudyn_s": float(np.median(t[:, 1])),
               "ratio": fmt_spread(t[:, 0] / t[:, 1])}
        rows.append(row)
        if verbose:
            print(f"  flexible pendulum 2 s, path error <= {target:.0e} L: ours {a['n']} segments RK4 "
                  f"({a['error']:.1e}) {row['ours_s'] * 1e3:.1f} ms; Exudyn {b['n']} ANCF elements, h = {b['h']} "
                  f"({b['error']:.1e}) {row['exudyn_s'] * 1e3:.1f} ms; ours/Exudyn x {row['ratio']}", flush=True)
    return rows


def cost_per_segment(sizes=(16, 64, 256, 1024), rounds=5, verbose=True):
    """Seconds per call of the tree's compiled right-hand side over the number of segments, for each size."""
    from multibody.formulations.tree_rhs import tree_rhs
    from multibody.systems.elastic import flexible_pendulum
    from multibody.model.packing import tree_params

    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        model = flexible_pendulum(n)
        p = tree_params(model)
        x = np.concatenate([rng.uniform(-0.1, 0.1, model.nq), rng.uniform(-0.1, 0.1, model.nv)])
        out = np.empty(x.shape[0])

        def call(p=p, x=x, out=out):
            tree_rhs(0.0, x, p, out)
        t = interleaved([call], number=number_for(call), rounds=rounds)[:, 0]
        rows.append({"case": "rhs per segment", "segments": n, "us_per_segment": float(np.median(t)) / n * 1e6})
        if verbose:
            print(f"  right-hand side, {n:5d} segments: {rows[-1]['us_per_segment']:.3f} µs per segment", flush=True)
    return rows


def bench_beams(verbose=True):
    """``multibody bench --only beams``."""
    if verbose:
        print(environment("exudyn"))
        print("Beams of rigid finite elements against Exudyn's ANCF cable, each at its cheapest discretization for "
              "the same accuracy (process time, median (range) of interleaved rounds)")
    rows = cost_per_segment(verbose=verbose)
    try:
        import exudyn  # noqa: F401
    except ImportError:
        if verbose:
            print("  (Exudyn is not installed: pip install exudyn)")
        return rows
    return rows + statics_rows(verbose=verbose) + pendulum_rows(verbose=verbose)
