"""Benchmark: the bicycle's stability map as a parameter sweep (seed 003, §6b, over two design parameters).

``critical_speeds`` (v_w, v_c) of the benchmark bicycle with the trail c in [-0.1, 0.3] m and the steer-axis
tilt lam in [-0.3, 1.7] rad (lam >= pi/2 is not a bicycle: those points raise ModelError and are recorded),
n x n points (default 100 x 100 = 10^4). Measured in the same run, in points per second:

1. ``multibody sweep`` (the command, in a subprocess) on a Dask ``LocalCluster`` with ``workers`` worker
   processes of one thread, started here (the workers are warmed up first: imports and compiled kernels);
2. ``mb.sweep`` on the default backend, local worker processes started by the sweep itself (their start-up
   is part of the time);
3. the same sweep in this one process (``scheduler="serial"``).

The tables of 1 and 3 are compared point by point, and the map is plotted
(:func:`multibody.viz.sweep.plot_stability_map`). The speed-up is bounded by the number of cores that are
free: on a machine shared with other jobs it is below the worker count.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

TARGET = "multibody.parallel.studies:bicycle_stability"
C_RANGE = (-0.1, 0.3)
LAM_RANGE = (-0.3, 1.7)


def _grid(n):
    return {"c": np.linspace(*C_RANGE, n), "lam": np.linspace(*LAM_RANGE, n)}


def _same(a, b, cols=("v_w", "v_c", "stable")):
    """Largest difference between two tables (NaN where both are NaN counts as equal; inf when they differ
    in rows, errors or NaN pattern)."""
    if len(a) != len(b) or not (a.index == b.index).all() or not (a["error"].isna() == b["error"].isna()).all():
        return float("inf")
    worst = 0.0
    for c in cols:
        x, y = a[c].to_numpy(float), b[c].to_numpy(float)
        if not np.array_equal(np.isnan(x), np.isnan(y)):
            return float("inf")
        ok = ~np.isnan(x)
        worst = max(worst, float(np.max(np.abs(x[ok] - y[ok]), initial=0.0)))
    return worst


def bench_sweep(n=100, workers=2, local=True, serial=True, out_dir=None, verbose=True):
    """Rows (dicts) of the comparison; prints a table and writes the map (PNG) and the table (Parquet) into
    ``out_dir`` (default: a new temporary folder)."""
    import distributed
    import pandas as pd

    import multibody as mb
    from multibody.parallel.studies import bicycle_stability
    from multibody.viz.sweep import plot_stability_map

    out_dir = out_dir or tempfile.mkdtemp(prefix="multibody-bench-sweep-")
    os.makedirs(out_dir, exist_ok=True)
    table = os.path.join(out_dir, "bicycle_stability_map.parquet")
    grid = _grid(n)
    points = n * n
    rows = []
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    if verbose:
        print(f"bicycle stability map: {n} x {n} = {points} points (c in {C_RANGE} m, lam in {LAM_RANGE} rad); "
              f"{cores} cores, load average {load:.2f} before the run", flush=True)

    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        # warm-up: every worker imports the package and loads the compiled kernels once
        mb.sweep(bicycle_stability, {"c": np.linspace(0.0, 0.1, 4 * workers)}, scheduler=cluster.scheduler_address,
                 chunk_size=1, progress=False)
        import multibody

        env = dict(os.environ)
        src = os.path.dirname(os.path.dirname(os.path.abspath(multibody.__file__)))
        env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        cmd = [sys.executable, "-m", "multibody", "sweep", TARGET, "--grid", f"c={C_RANGE[0]}:{C_RANGE[1]}:{n}",
               "--grid", f"lam={LAM_RANGE[0]}:{LAM_RANGE[1]}:{n}", "--scheduler", cluster.scheduler_address,
               "--out", table, "--json"]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"multibody sweep failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}")
        s = json.loads(proc.stdout)
        rows.append({"name": f"multibody sweep, Dask LocalCluster ({workers} processes x 1 thread)",
                     "workers": workers, "points": s["computed"], "seconds": s["seconds"],
                     "points_per_second": s["computed"] / s["seconds"], "command_wall_seconds": wall,
                     "errors": s["errors"]})
    cluster_df = pd.read_parquet(table).set_index("point")

    if local:
        t0 = time.perf_counter()
        df = mb.sweep(bicycle_stability, grid, workers=workers, progress=False)
        sec = time.perf_counter() - t0
        rows.append({"name": f"mb.sweep, local processes ({workers}, start-up included)", "workers": workers,
                     "points": len(df), "seconds": sec, "points_per_second": len(df) / sec,
                     "max_difference_to_cluster": _same(df, cluster_df)})
    if serial:
        bicycle_stability(c=0.08)          # imports and compiled kernels loaded before timing
        t0 = time.perf_counter()
        df = mb.sweep(bicycle_stability, grid, scheduler="serial", progress=False)
        sec = time.perf_counter() - t0
        rows.append({"name": "mb.sweep, one process (serial)", "workers": 1, "points": len(df), "seconds": sec,
                     "points_per_second": len(df) / sec, "max_difference_to_cluster": _same(df, cluster_df)})
    base = rows[-1]["points_per_second"] if serial else None
    for r in rows:
        r["speedup_vs_one_process"] = r["points_per_second"] / base if base else None
    png = plot_stability_map(cluster_df, os.path.join(out_dir, "bicycle_stability_map.png"))
    stable = cluster_df["stable"] == 1.0
    summary = {"points": points, "errors": int(cluster_df["error"].notna().sum()), "stable_points": int(stable.sum()),
               "table": table, "plot": png, "cores": cores, "load_average_before": load}
    if verbose:
        print(f"{'run':58s} {'points':>7s} {'seconds':>8s} {'points/s':>9s} {'speed-up':>8s}")
        for r in rows:
            sp = f"{r['speedup_vs_one_process']:.2f}" if r["speedup_vs_one_process"] else "-"
            print(f"{r['name']:58s} {r['points']:7d} {r['seconds']:8.1f} {r['points_per_second']:9.1f} {sp:>8s}")
        for r in rows[1:]:
            print(f"  {r['name']}: max |difference| to the cluster's table {r['max_difference_to_cluster']:.1e}")
        print(f"  command wall time (interpreter start-up and imports included): "
              f"{rows[0]['command_wall_seconds']:.1f} s")
        print(f"  {summary['errors']} points with lam >= pi/2 recorded as errors; {summary['stable_points']} points "
              f"with a self-stable speed range (v_w < v_c)")
        print(f"  map: {png}\n  table: {table}")
    return {"rows": rows, **summary}
