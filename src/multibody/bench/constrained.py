"""Constrained systems: CPU time per simulated second of the IFToMM A02 N-four-bar (N = 100) from one builder
model, in Cartesian coordinates (seed 001 ch. 2: 201 planar bodies, 602 constraint rows, sparse KKT) and in
tree + cut-joint coordinates (seed 001 §3.6: 201 joint coordinates, 100 cut hinges).  The A03 Andrews run
(0.03 s) is timed in both too.  Both A02 runs start at the benchmark's initial state and stop before the
first singular position (t < 0.7 s); DOP853 with rtol = atol = 1e-10, projection after every step.
"""
import time

import numpy as np


def _time_per_second(run, t_sim):
    c0 = time.process_time()
    info = run(t_sim)
    return (time.process_time() - c0) / t_sim, info


def bench_constrained(N=100, t_sim=0.5):
    import multibody as mb
    from multibody.systems import iftomm as I

    rows = []
    model, q0, v0 = I.four_bar_model(N)
    for formulation in ("cartesian", "constrained"):
        def run(t):
            r = mb.simulate(model, q0, v0, t, formulation=formulation, rtol=1e-10, atol=1e-10, n_out=51,
                            al_eps=I.A02_AL_EPS[formulation])
            e = r.energy["total"]
            return dict(steps=r.info["steps"], residual=float(max(v.max() for k, v in r.residuals.items()
                                                                  if k not in ("velocity", "acceleration"))),
                        energy_variation=float(np.ptp(e) / abs(e[0])))

        mb.simulate(model, q0, v0, 1e-3, formulation=formulation, rtol=1e-10, atol=1e-10, n_out=2)   # warm-up
        cps, info = _time_per_second(run, t_sim)
        rows.append(dict(problem=f"A02 N={N}", formulation=formulation, cpu_s_per_simulated_s=cps, **info))
    for formulation in ("cartesian", "constrained"):
        c0 = time.process_time()
        out = I.run_problem("A03", formulation=formulation)
        rows.append(dict(problem="A03 Andrews (0.03 s)", formulation=formulation,
                         cpu_s_per_simulated_s=(time.process_time() - c0) / 0.03, steps=out["steps"],
                         residual=out["max_position_residual"]))
    for r in rows:
        print(f"{r['problem']:>22s}  {r['formulation']:>12s}  {r['cpu_s_per_simulated_s']:10.3f} CPU s / simulated s"
              f"   steps {r['steps']}   max residual {r['residual']:.1e}"
              + (f"   energy variation {r['energy_variation']:.1e}" if "energy_variation" in r else ""), flush=True)
    print(f"  A02 ratio constrained / cartesian: {rows[1]['cpu_s_per_simulated_s'] / rows[0]['cpu_s_per_simulated_s']:.2f}")
    return rows
