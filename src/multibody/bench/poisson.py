"""Cost of the right-hand side in Poisson impulses (seed 002): the sweep and Cholesky solvers against ABA and a
dense CRBA + Cholesky solve, from the paper's cardan chains (N = 5…50) to chains and random trees of 10⁴ bodies.

``bench_poisson()`` times one evaluation of each right-hand side, called ``number`` times in a compiled loop
(no Python in between), in interleaved rounds with process time; it prints the median time per call, the
spread (min–max) over the rounds, the cost per body, and the ratios per round (every model and method is
timed once per round, all interleaved, so that the load of the machine affects them alike):

* ``sweep``, ``cholesky``: ``formulations.poisson.poisson_rhs`` (q̇ from p by system (6), ṗ by eq. (7),
  applied forces) with the solver of §A.6 or §A.7.3;
* ``aba``: ``formulations.tree.tree_rhs`` (q̇ = v, q̈ by the articulated-body algorithm, applied forces);
* ``dense``: :func:`dense_rhs`, q̇ = H⁻¹ p with H from CRBA, a dense Cholesky factorization and two
  triangular solves, and ṗ by the same O(N) eq. (7) pass (``kernels.poisson.impulses_kernel``) — the
  O(N²) + O(N³) alternative; timed up to ``dense_max`` bodies.

It also runs the check of the targets: a fixed-step RK4 run of a 1000-body cardan chain under the tree and
both Poisson formulations (CPU time of the integration, interleaved rounds), and writes a log-log plot of the
cost against N (``plot``, PNG). The paper's own measurement (notes §A.9, Fig. 3) is the ratio of the solve
times sweep / Cholesky, 1.3–1.4 for N = 5…50; the ratio of whole right-hand sides is printed for the same
chains (``docs/poisson.md`` explains the difference with operation counts).
"""
import math
import statistics
import time

import numpy as np
from numba import njit

from multibody.kernels.configuration import qdot_kernel
from multibody.kernels.crba import crba_kernel
from multibody.kernels.poisson import impulses_kernel
from multibody.viz.poisson import plot_cost

CARDAN_SIZES = (5, 10, 15, 20, 25, 30, 35, 40, 45, 50)
LARGE_SIZES = (100, 300, 1000, 3000, 10000)
TREE_SIZES = (10, 100, 1000, 10000)
METHODS = ("sweep", "cholesky", "aba", "dense")


@njit(cache=True)
def dense_rhs(t, x, prm, out):
    """The Poisson right-hand side with a dense solve of H q̇ = p: H = CRBA (``prm[2]``), factorized in place
    H = L Lᵀ (Cholesky–Banachiewicz, single-threaded like the O(N) kernels), two triangular solves, then ṗ by
    the O(N) pass of eq. (7) (gravity only) and q̇(q, v) (seed 002, eqs. 6, 7; the notes' dense reference,
    §A.12)."""
    mi = prm[0]
    mf = prm[1]
    L = prm[2]
    work = prm[3]
    v = prm[4]
    nv = v.shape[0]
    nq = x.shape[0] - nv
    q = x[:nq]
    p = x[nq:]
    crba_kernel(mi, mf, q, work, L)
    for j in range(nv):  # H = L Lᵀ in the lower triangle
        for i in range(j, nv):
            s = L[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = math.sqrt(s) if i == j else s / L[j, j]
    for i in range(nv):  # L y = p
        s = p[i]
        for k in range(i):
            s -= L[i, k] * v[k]
        v[i] = s / L[i, i]
    for i in range(nv - 1, -1, -1):  # Lᵀ v = y
        s = v[i]
        for k in range(i + 1, nv):
            s -= L[k, i] * v[k]
        v[i] = s / L[i, i]
    impulses_kernel(mi, mf, q, v, work, prm[5], out[nq:])
    qdot_kernel(mi, q, v, out[:nq])


@njit
def _repeat(rhs, x, params, out, number):
    """``number`` calls of ``rhs`` in one compiled loop (not cached: numba types ``rhs`` by its identity)."""
    for _ in range(number):
        rhs(0.0, x, params, out)


def _cases(model, rng, dense_max):
    """(name, rhs, x, params) of every method for ``model`` at a random state."""
    from multibody.model.data import Data
    from multibody.formulations.poisson import impulses, poisson_rhs, poisson_system
    from multibody.formulations.tree_rhs import tree_rhs
    from multibody.model.packing import tree_params

    q = model.random_configuration(rng, scale=0.2)
    v = rng.uniform(-0.5, 0.5, model.nv)
    xq = np.concatenate([q, v])
    xp = np.concatenate([q, impulses(model, q, v)])
    cases = []
    for solver in ("sweep", "cholesky"):
        cases.append((solver, poisson_rhs, xp, poisson_system(model, q, v, solver=solver).params))
    cases.append(("aba", tree_rhs, xq, tree_params(model)))
    if model.nbodies <= dense_max:
        d = Data(model)
        cases.append(("dense", dense_rhs, xp, (d.mi, d.mf, np.zeros((model.nv, model.nv)), d.work,
                                               np.zeros(model.nv), np.zeros(model.nv))))
    return cases


def prepare(model, rng, budget=0.03, dense_max=1000):
    """The cases of ``model`` ready to time: (name, rhs, x, params, out, number) with ``number`` calls taking
    ≈ ``budget`` s. Checks first, up to 100 bodies, that every method gives the same ẋ (to 1e-6; longer chains
    are too ill-conditioned for a fixed tolerance; the tests check the numbers)."""
    cases = []
    for name, rhs, x, params in _cases(model, rng, dense_max):
        out = np.empty(x.shape[0])
        _repeat(rhs, x, params, out, 1)  # compiles
        c0 = time.process_time()
        n = 1
        while time.process_time() - c0 < 0.2 * budget:
            _repeat(rhs, x, params, out, n)
            n *= 2
        per_call = max((time.process_time() - c0) / (2 * n - 1), 1e-9)
        cases.append((name, rhs, x, params, out, max(1, int(budget / per_call))))
    outs = {c[0]: c[4] for c in cases}
    if model.nbodies <= 100:
        nq = model.nq
        ref = outs["aba"][:nq]
        scale = max(1.0, np.abs(outs["sweep"]).max())
        for name in ("cholesky", "dense"):
            if name in outs and not np.allclose(outs[name], outs["sweep"], rtol=0, atol=1e-6 * scale):
                raise AssertionError(f"{model.name}: {name} and sweep right-hand sides differ")
        if not np.allclose(outs["sweep"][:nq], ref, rtol=0, atol=1e-6 * max(1.0, np.abs(ref).max())):
            raise AssertionError(f"{model.name}: q̇ of the Poisson and tree right-hand sides differ")
    return cases


def time_rounds(prepared, rounds=5):
    """Time every case of every model once per round, models and methods interleaved (process time), so that a
    change of the machine's load affects all alike. ``prepared``: list of case lists (:func:`prepare`).
    Returns, per model, {method: [time per call in each round]}."""
    times = [{c[0]: [] for c in cases} for cases in prepared]
    for _ in range(rounds):
        for cases, t in zip(prepared, times):
            for name, rhs, x, params, out, number in cases:
                c0 = time.process_time()
                _repeat(rhs, x, params, out, number)
                t[name].append((time.process_time() - c0) / number)
    return times


def _row(label, model, times):
    row = dict(model=label, N=model.nbodies, nv=model.nv)
    for name, ts in times.items():
        row[f"{name}_us"] = statistics.median(ts) * 1e6
        row[f"{name}_spread"] = (min(ts) * 1e6, max(ts) * 1e6)
        row[f"{name}_ns_per_body"] = statistics.median(ts) * 1e9 / model.nbodies
    for a, b in (("sweep", "cholesky"), ("sweep", "aba"), ("cholesky", "aba")):
        r = [x / y for x, y in zip(times[a], times[b])]
        row[f"{a}/{b}"] = (statistics.median(r), min(r), max(r))
    if "dense" in times:
        r = [x / y for x, y in zip(times["dense"], times["sweep"])]
        row["dense/sweep"] = (statistics.median(r), min(r), max(r))
    return row


def rk4_check(n=1000, steps=200, h=1e-3, rounds=3):
    """CPU time of a fixed-step RK4 run (``steps`` steps of ``h``) of an ``n``-body cardan chain bent evenly
    (every α = 0.2, β = 0.1, at rest) under the tree and the two Poisson formulations, interleaved rounds.
    Returns {method: [cpu seconds per round]} and the largest |v_poisson − v_tree| at the end (the (q, p)
    variables have a much larger RK4 truncation error on long chains; see ``docs/poisson.md``)."""
    import multibody as mb
    from multibody.systems.cardan_chain import cardan_chain

    model = cardan_chain(n)
    q0 = np.tile([0.2, 0.1], n)
    runs = {"aba": dict(formulation="tree"), "sweep": dict(formulation="poisson", solver="sweep"),
            "cholesky": dict(formulation="poisson", solver="cholesky")}
    for kw in runs.values():  # compile / load the compiled loops
        mb.simulate(model, q0, None, 2 * h, method="RK4", h=h, energy=False, n_out=2, **kw)
    cpu = {k: [] for k in runs}
    last = {}
    for _ in range(rounds):
        for k, kw in runs.items():
            res = mb.simulate(model, q0, None, steps * h, method="RK4", h=h, energy=False, n_out=2, **kw)
            cpu[k].append(res.info["cpu_seconds"])
            last[k] = res.v[-1]
    return cpu, max(float(np.abs(last[k] - last["aba"]).max()) for k in ("sweep", "cholesky"))


def format_rows(rows):
    """The timing rows as a Markdown table."""
    lines = ["| model | N | nv | sweep µs | Cholesky µs | ABA µs | dense µs | sweep / Cholesky | sweep / ABA | "
             "Cholesky / ABA | ns/body sweep, Chol., ABA |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def ratio(r, key):
        m, lo, hi = r[key]
        return f"{m:.2f} ({lo:.2f}–{hi:.2f})"

    for r in rows:
        dense = f"{r['dense_us']:.1f}" if "dense_us" in r else "–"
        lines.append(f"| {r['model']} | {r['N']} | {r['nv']} | {r['sweep_us']:.2f} | {r['cholesky_us']:.2f} | "
                     f"{r['aba_us']:.2f} | {dense} | {ratio(r, 'sweep/cholesky')} | {ratio(r, 'sweep/aba')} | "
                     f"{ratio(r, 'cholesky/aba')} | {r['sweep_ns_per_body']:.0f}, {r['cholesky_ns_per_body']:.0f}, "
                     f"{r['aba_ns_per_body']:.0f} |")
    lines.append("")
    lines.append("Median over interleaved rounds of process time per call (compiled loop); ratios: median (min–max) "
                 "of the per-round ratios.")
    return "\n".join(lines)


def bench_poisson(cardan_sizes=CARDAN_SIZES, large_sizes=LARGE_SIZES, tree_sizes=TREE_SIZES, rounds=5,
                  budget=0.03, dense_max=1000, rk4_n=1000, plot="poisson_cost.png", seed=0, verbose=True):
    """Run the benchmark (see the module docstring); returns a dict with the timing ``rows``, the per-body
    flatness from N = 100 to the largest N, the RK4 check and the plot path."""
    from multibody.bench.dynamics import random_tree
    from multibody.systems.cardan_chain import cardan_chain

    rng = np.random.default_rng(seed)
    models = [("cardan chain", cardan_chain(n)) for n in tuple(cardan_sizes) + tuple(large_sizes)]
    models += [("random tree", random_tree(n, np.random.default_rng(seed + n))) for n in tree_sizes]
    prepared = [prepare(model, rng, budget, dense_max) for _, model in models]
    times = time_rounds(prepared, rounds)
    rows = [_row(label, model, t) for (label, model), t in zip(models, times)]
    flat = {}
    for kind in ("cardan chain", "random tree"):
        sel = [r for r in rows if r["model"] == kind and r["N"] >= 100]
        for name in ("sweep", "cholesky", "aba"):
            per_body = [r[f"{name}_ns_per_body"] for r in sel]
            if len(per_body) > 1:
                flat[f"{kind}, {name}"] = max(per_body) / min(per_body)
        for name in ("sweep", "cholesky"):  # against ABA timed in the same rounds: the machine's load cancels
            ratio = [r[f"{name}/aba"][0] for r in sel]
            if len(ratio) > 1:
                flat[f"{kind}, {name} / aba"] = max(ratio) / min(ratio)
    paper = [r["sweep/cholesky"][0] for r in rows if r["model"] == "cardan chain" and r["N"] <= 50]
    out = dict(rows=rows, flatness=flat, sweep_over_cholesky_N5_50=(min(paper), max(paper)) if paper else None)
    if rk4_n:
        cpu, dv = rk4_check(rk4_n)
        out["rk4"] = {k: dict(median_s=statistics.median(v), rounds=v,
                              ratio_to_aba=statistics.median([a / b for a, b in zip(v, cpu["aba"])]))
                      for k, v in cpu.items()}
        out["rk4_max_dv"] = dv
    if plot:
        out["plot"] = str(plot_cost(rows, plot))
    if verbose:
        print()
        print(format_rows(rows))
        print("\nPer-body cost, max/min over N = 100 … " f"{max(r['N'] for r in rows)} (target ≤ 1.10 for sweep "
              "and Cholesky on chains; the random trees differ in their joint mix; '/ aba': the per-body cost "
              "relative to ABA's in the same rounds):")
        for k, f in flat.items():
            print(f"  {k:28s} {f:.3f}")
        if paper:
            print(f"\nsweep / Cholesky, whole right-hand side, cardan chains N = 5…50: {min(paper):.2f} … "
                  f"{max(paper):.2f} (paper, solve part only: 1.3–1.4)")
        if rk4_n:
            print(f"\nRK4, {rk4_n}-body cardan chain, CPU s per run (median of rounds) and ratio to ABA (target ≤ 2):")
            for k, d in out["rk4"].items():
                print(f"  {k:9s} {d['median_s']:.3f} s   ×{d['ratio_to_aba']:.2f}   rounds "
                      + ", ".join(f"{x:.3f}" for x in d["rounds"]))
            print(f"  max |v_poisson − v_tree| at the end: {out['rk4_max_dv']:.1e} (RK4 truncation error of (q, p))")
        if plot:
            print(f"\nplot written to {out['plot']}")
    return out


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description="Poisson-impulse right-hand sides (seed 002) against ABA and dense")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--plot", default="poisson_cost.png", help="PNG of the cost against N")
    p.add_argument("--max-n", type=int, default=10000, help="largest chain / tree")
    args = p.parse_args(argv)
    bench_poisson(large_sizes=tuple(n for n in LARGE_SIZES if n <= args.max_n),
                  tree_sizes=tuple(n for n in TREE_SIZES if n <= args.max_n), rounds=args.rounds, plot=args.plot)
    return 0
