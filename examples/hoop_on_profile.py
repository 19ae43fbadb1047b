"""Seed 000 (Matrosov, Morozov, Pesterev 2021): a heavy hoop rolling without slip on a curved profile, integrated
with the constraints stabilized by treating the reactions as controls.

Reproduces Sec. 4: RK2 with h = 1e-5 and λ_i = 1e3 keeps max_i |f_i| below 7e-9; Fig. 2 (residual decay
from perturbed initial data for λ = 10 and λ = 100) and the λ = 0 run of Fig. 4. Writes PNG files into the
folder given as the first argument (default: the current folder).

    python examples/hoop_on_profile.py [OUTDIR] [T_END]
"""
import os
import sys

import numpy as np

from multibody.formulations.stabilized import max_residual
from multibody.systems.hoop_on_profile import fig4_runs, fig4_summary
from multibody.viz.hoop import plot_fig4, plot_run
from multibody.systems.hoop_on_profile import HoopOnProfile


def main(out=".", t_end=10.0):
    os.makedirs(out, exist_ok=True)
    hoop = HoopOnProfile()  # the paper's profile, M = 1, r = 0.01
    print("relative degrees found automatically:", hoop.dae.relative_degrees)

    # Sec. 4 / Fig. 3: RK2, h = 1e-5, λ = 1e3, from rest with the contact at x_a = -0.9
    X0 = hoop.initial_state(-0.9, 0.0)
    res = hoop.simulate(X0, t_end, lam=1e3, method="rk2", h=1e-5, save_every=10, progress=True)
    worst, by = max_residual(res)
    print(f"RK2, h = 1e-5, λ = 1e3, t_end = {t_end:g}: max residual over the second half {worst:.2e} "
          f"(seed 000: < 7e-9); {res.info['cpu_seconds']:.2f} s cpu")
    plot_run(hoop, res, os.path.join(out, "hoop_rk2.png"), title="RK2, h = 1e-5, λ = 1e3")

    # Fig. 2: perturbed initial data, λ = 10 and λ = 100
    X1 = hoop.initial_state(-0.5, 1.5)
    E0 = hoop.energy(X1)
    Xp = X1 + np.array([0, 1e-4, 0, 1e-4, 0, 1e-2, 1e-4])
    for lam in (10.0, 100.0):
        r = hoop.simulate(Xp, 1.0, lam=lam, method="rk2", h=1e-5, save_every=10, E0=E0)
        sel = (r.t > 1 / lam) & (r.t < 8 / lam)
        rate = -np.polyfit(r.t[sel], np.log(np.abs(r.residuals["f3"][sel])), 1)[0]
        print(f"Fig. 2: λ = {lam:g}: measured decay rate of f3 = {rate:.3f}")
        plot_run(hoop, r, os.path.join(out, f"hoop_fig2_lambda{lam:g}.png"), title=f"Fig. 2, λ = {lam:g}")

    # Fig. 4: λ = 0 (the plain eq. 2.3) against λ = 1e3, two passes back and forth, from an initial error within
    # the seed's bound |f_i(0)| < 1e-6 that carries a normal velocity of the centre (see fig4_runs)
    runs, _ = fig4_runs(hoop)
    for label, s in fig4_summary(hoop, runs).items():
        print(f"Fig. 4: {label}: largest contact-point distance from the profile {s['max_contact_distance']:.2e}")
    plot_fig4(hoop, runs, os.path.join(out, "hoop_fig4.png"))

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".", float(sys.argv[2]) if len(sys.argv) > 2 else 10.0)
