"""Seed 000 (Matrosov, Morozov, Pesterev 2021): a heavy hoop rolling without slip on a curved profile, integrated
with the constraints stabilized by treating the reactions as controls.

The hoop is a builder model — one body on a planar joint and a ``RollingOnProfile`` constraint — run through the
generic ``stabilized`` formulation with the energy as the fourth constraint (seed 000's system). Reproduces
Sec. 4: RK2 with h = 1e-5 and λ_i = 1e3 keeps max_i |f_i| below 7e-9; Fig. 2 (residual decay from perturbed
initial data for λ = 10 and λ = 100) and Fig. 4 (λ = 0 leaves the profile). Writes PNG files into the folder
given as the first argument (default: the current folder).

    python examples/hoop_on_profile.py [OUTDIR] [T_END]
"""
import os
import sys

import numpy as np

import multibody as mb
from multibody.systems.hoop_on_profile import fig4_runs, fig4_summary, hoop_model, initial_state
from multibody.viz.hoop import plot_fig4, plot_run


def stabilized(model, q0, v0, t_end, lam, **kw):
    return mb.simulate(model, q0, v0, t_end, formulation="stabilized", energy_constraint=True, lam=lam,
                       method="RK2", h=1e-5, **kw)


def main(out=".", t_end=10.0):
    os.makedirs(out, exist_ok=True)
    model = hoop_model()  # the paper's profile, M = 1, r = 0.01

    # Sec. 4 / Fig. 3: RK2, h = 1e-5, λ = 1e3, from rest with the contact at x_a = -0.9
    q0, v0 = initial_state(model, -0.9, 0.0)
    res = stabilized(model, q0, v0, t_end, 1e3, n_out=int(round(t_end / 1e-5)) // 100 + 1, progress=True)
    print("relative degrees found from the rows:", res.info["relative_degrees"])
    half = res.t >= t_end / 2
    worst = max(float(np.max(np.abs(v[half]))) for v in res.residuals.values())
    print(f"RK2, h = 1e-5, λ = 1e3, t_end = {t_end:g}: max residual over the second half {worst:.2e} "
          f"(seed 000: < 7e-9); {res.info['cpu_seconds']:.2f} s cpu")
    plot_run(model, res, os.path.join(out, "hoop_rk2.png"), title="RK2, h = 1e-5, λ = 1e3")

    # Fig. 2: perturbed initial data, λ = 10 and λ = 100
    q1, v1 = initial_state(model, -0.5, 1.5)
    E0 = float(sum(mb.energy(model, q1, v1)))
    for lam in (10.0, 100.0):
        r = stabilized(model, q1 + [0, 1e-4, 0], v1 + [1e-4, 0, 1e-2], 1.0, lam, energy_level=E0, consistent=False,
                       n_out=10001)
        sel = (r.t > 1 / lam) & (r.t < 8 / lam)
        rate = -np.polyfit(r.t[sel], np.log(np.abs(r.residuals["contact.no_slip"][sel])), 1)[0]
        print(f"Fig. 2: λ = {lam:g}: measured decay rate of the no-slip residual f3 = {rate:.3f}")
        plot_run(model, r, os.path.join(out, f"hoop_fig2_lambda{lam:g}.png"), title=f"Fig. 2, λ = {lam:g}")

    # Fig. 4: λ = 0 (the plain eq. 2.3) against λ = 1e3, two passes back and forth, from an initial error within
    # the seed's bound |f_i(0)| < 1e-6 that carries a normal velocity of the centre (see fig4_runs)
    runs, _ = fig4_runs(model)
    for label, s in fig4_summary(model, runs).items():
        print(f"Fig. 4: {label}: largest contact-point distance from the profile {s['max_contact_distance']:.2e}")
    plot_fig4(model, runs, os.path.join(out, "hoop_fig4.png"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".", float(sys.argv[2]) if len(sys.argv) > 2 else 10.0)
