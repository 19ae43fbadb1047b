"""Benchmark: the stabilized hoop of seed 000 over 100 time units — the paper's RK2 (h = 1e-5, 1e7 steps) against
adaptive DOP853 (scipy) reaching the same residual bound max_i |f_i| < 7e-9 (seed 000, Sec. 4)."""
import time

import numpy as np


def _run(hoop, X0, t_end, **kw):
    from multibody.formulations.stabilized import max_residual

    c0 = time.process_time()
    w0 = time.perf_counter()
    res = hoop.simulate(X0, t_end, **kw)
    cpu = time.process_time() - c0
    wall = time.perf_counter() - w0
    worst, by = max_residual(res)
    return res, {"steps": res.info["steps"], "rhs_evaluations": res.info["rhs_evaluations"], "cpu_seconds": cpu,
                 "wall_seconds": wall, "max_residual": worst, "max_residual_by_constraint": by}


def bench_hoop(t_end=100.0, rk2=True, verbose=True):
    """Rows (dicts) of the comparison; prints a table. ``rk2=False`` skips the 1e7-step RK2 run."""
    from multibody.systems.hoop_on_profile import HoopOnProfile

    hoop = HoopOnProfile()
    X0 = hoop.initial_state(-0.9, 0.0)
    # warm-up: compile / load every kernel once so the timings below are the runs alone
    hoop.simulate(X0, 0.01, lam=1e3, method="rk2", h=1e-5)
    hoop.simulate(X0, 0.01, lam=10.0, method="dop853")
    rows = []
    cfg_ad = {"lam": 10.0, "method": "dop853", "rtol": 1e-9, "atol": 1e-11}
    res, row = _run(hoop, X0, t_end, **cfg_ad)
    # residual between the accepted steps: the dense interpolant on a fine grid of the second half
    ts = np.linspace(t_end / 2, t_end, 100_001)
    dense = hoop.simulate(X0, t_end, t_eval=ts, **cfg_ad)
    row.update(name="DOP853 (scipy), λ = 10, rtol 1e-9", t_end=t_end,
               max_residual_dense=float(max(np.max(np.abs(v)) for v in dense.residuals.values())))
    rows.append(row)
    if rk2:
        res, row = _run(hoop, X0, t_end, lam=1e3, method="rk2", h=1e-5, save_every=10)
        row.update(name="RK2 (paper), λ = 1e3, h = 1e-5", t_end=t_end)
        rows.append(row)
    if verbose:
        print(f"hoop on the seed 000 profile, {t_end:g} time units from rest at x_a = -0.9 (target: max_i |f_i| < 7e-9)")
        print(f"{'integrator':40s} {'steps':>10s} {'rhs evals':>10s} {'cpu s':>8s} {'max |f|':>10s}")
        for r in rows:
            print(f"{r['name']:40s} {r['steps']:10d} {r['rhs_evaluations']:10d} {r['cpu_seconds']:8.2f} "
                  f"{r['max_residual']:10.2e}")
        if rk2:
            print(f"cpu ratio RK2 / DOP853: {rows[1]['cpu_seconds'] / rows[0]['cpu_seconds']:.1f}")
        print(f"DOP853 residual on a dense grid of the second half: {rows[0]['max_residual_dense']:.2e}")
    return rows
