"""Benchmark: the eigenvalue sweep of the Whipple bicycle (seed 003, eq. 6.5) over 10 000 speeds.

Ours: :func:`multibody.systems.bicycle.eigenvalues` with the compiled quartic solver (default) and with
one batched LAPACK call on the state matrices (``method="eig"``). Peer: the bicycleparameters package
(``benchmark_par_to_canonical`` once, then ``ab_matrix`` and ``numpy.linalg.eigvals`` per speed, its
documented way of building the state matrix), when installed. Issue 3 target: < 50 ms for the sweep.
"""
import time

import numpy as np


def _best(f, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times), float(np.median(times))


def bench_bicycle(n_speeds=10_000, repeats=7, peer=True, verbose=True):
    """Time the 0-10 m/s eigenvalue sweep of the benchmark bicycle; returns a dict (best of ``repeats``)."""
    from multibody.systems import bicycle

    p = bicycle.benchmark_parameters()
    v = np.linspace(0.0, 10.0, n_speeds)
    bicycle.eigenvalues(p, v[:10])                     # compile / load the kernel once
    bicycle.eigenvalues(p, v[:10], method="eig")
    bicycle.critical_speeds(p)                          # imports scipy.optimize once
    best_q, med_q = _best(lambda: bicycle.eigenvalues(p, v), repeats)
    best_e, med_e = _best(lambda: bicycle.eigenvalues(p, v, method="eig"), repeats)
    t0 = time.perf_counter()
    cs = bicycle.critical_speeds(p)
    t_crit = time.perf_counter() - t0
    diff = float(np.abs(bicycle.eigenvalues(p, v).values - bicycle.eigenvalues(p, v, method="eig").values).max())
    result = {
        "name": "bicycle eigenvalue sweep (seed 003, eq. 6.5)",
        "n_speeds": n_speeds,
        "repeats": repeats,
        "quartic_best_s": best_q,
        "quartic_median_s": med_q,
        "lapack_best_s": best_e,
        "lapack_median_s": med_e,
        "quartic_us_per_speed": 1e6 * best_q / n_speeds,
        "ratio_lapack_over_quartic": best_e / best_q,
        "max_abs_difference": diff,
        "critical_speeds_s": t_crit,
        "weave_speed": cs.weave,
        "capsize_speed": cs.capsize,
        "target_s": 0.05,
        "meets_target": best_q < 0.05,
    }
    if peer:
        try:
            from bicycleparameters.bicycle import ab_matrix, benchmark_par_to_canonical
        except ImportError:
            result["peer"] = None
        else:
            def peer_sweep():
                M, C1, K0, K2 = (np.asarray(x, dtype=float) for x in benchmark_par_to_canonical(dict(p)))
                return [np.linalg.eigvals(ab_matrix(M, C1, K0, K2, s, p.g)[0]) for s in v]

            best_p, _ = _best(peer_sweep, 1)
            result.update(peer="bicycleparameters (ab_matrix + eigvals per speed)", peer_best_s=best_p,
                          ratio_peer_over_quartic=best_p / best_q)
    if verbose:
        print(f"Whipple bicycle: eigenvalues at {n_speeds} speeds, 0-10 m/s (best of {repeats})")
        print(f"  compiled quartic solver  {1e3 * best_q:8.2f} ms  ({result['quartic_us_per_speed']:.2f} us/speed;"
              f" target < 50 ms: {'met' if result['meets_target'] else 'NOT met'})")
        print(f"  LAPACK, batched eigvals  {1e3 * best_e:8.2f} ms  (x{result['ratio_lapack_over_quartic']:.1f})")
        if result.get("peer_best_s") is not None:
            print(f"  bicycleparameters loop   {1e3 * result['peer_best_s']:8.2f} ms  "
                  f"(x{result['ratio_peer_over_quartic']:.0f})")
        print(f"  max |quartic - LAPACK| = {diff:.2e};  critical_speeds() {1e3 * t_crit:.1f} ms: "
              f"v_w = {cs.weave:.14f}, v_c = {cs.capsize:.14f}")
    return result
