"""Constrained systems: CPU time per simulated second of the IFToMM A02 N-four-bar (N = 100) in the
Cartesian formulation (seed 001 ch. 2: 201 planar bodies, 602 constraint rows, sparse KKT) and in tree +
cut-joint coordinates (seed 001 §3.6: 201 joint coordinates, 100 cut hinges).  The A03 Andrews run
(0.03 s) is timed too.  Both A02 runs start at the benchmark's initial state and stop before the first
singular position (t < 0.7 s); DOP853 with rtol = atol = 1e-10, projection after every step.
"""
import time

import numpy as np


def _time_per_second(run, t_sim):
    c0 = time.process_time()
    info = run(t_sim)
    return (time.process_time() - c0) / t_sim, info


def bench_constrained(N=100, t_sim=0.5):
    import multibody as mb
    import multibody.formulations.constrained  # noqa: F401  (registers the formulations)
    from multibody.systems import iftomm as I

    rows = []
    s = I.four_bar_cartesian(N)
    s.finalize()

    def run_cart(t):
        r = s.simulate(t, rtol=1e-10, atol=1e-10, n_out=3)
        return dict(steps=r.stats["nsteps"], residual=float(r.residuals["position"].max()))

    cps, info = _time_per_second(run_cart, t_sim)
    rows.append(dict(problem=f"A02 N={N}", formulation="cartesian", unknowns=s.nv + s.nc,
                     cpu_s_per_simulated_s=cps, **info))
    model, q0, v0 = I.four_bar_model(N)

    def run_tree(t):
        r = mb.simulate(model, q0, v0, t, formulation="constrained", rtol=1e-10, atol=1e-10, n_out=3,
                        al_eps=I.A02_AL_EPS)
        return dict(steps=r.info["steps"], residual=float(max(v.max() for k, v in r.residuals.items())))

    cps, info = _time_per_second(run_tree, t_sim)
    rows.append(dict(problem=f"A02 N={N}", formulation="tree+cut joints", unknowns=model.nv,
                     cpu_s_per_simulated_s=cps, **info))
    c0 = time.process_time()
    out = I.run_problem("A03")
    rows.append(dict(problem="A03 Andrews (0.03 s)", formulation="7 angles, index-1 DAE", unknowns=13,
                     cpu_s_per_simulated_s=(time.process_time() - c0) / 0.03, steps=out["steps"],
                     residual=out["max_position_residual"]))
    for r in rows:
        print(f"{r['problem']:>22s}  {r['formulation']:>22s}  unknowns {r['unknowns']:5d}  "
              f"{r['cpu_s_per_simulated_s']:10.3f} CPU s / simulated s   steps {r['steps']}  "
              f"max residual {r['residual']:.1e}", flush=True)
    if len(rows) >= 2 and rows[1]["cpu_s_per_simulated_s"] > 0:
        print(f"  ratio cartesian / tree+cut: {rows[0]['cpu_s_per_simulated_s'] / rows[1]['cpu_s_per_simulated_s']:.2f}")
    return rows
