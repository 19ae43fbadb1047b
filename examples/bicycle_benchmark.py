"""The Whipple bicycle benchmark of Meijaard, Papadopoulos, Ruina and Schwab (2007) -- seed 003.

Prints the matrices of eqs. (6.1)-(6.4), the critical speeds and the eigenvalues of Table 2, writes the
eigenvalues-versus-speed plot (Fig. 3) and a linear simulation at 4.6 m/s with the initial lean rate of
the paper's Fig. 4 (0.5 rad/s), including the reconstructed yaw and rear contact path (eqs. B.6, B.8).

Run: python examples/bicycle_benchmark.py [OUTPUT_DIR]
"""
import math
import os
import sys

import numpy as np

from multibody.systems import bicycle
from multibody.viz.bicycle import plot_eigenvalues, plot_time_history


def main(outdir="."):
    os.makedirs(outdir, exist_ok=True)
    p = bicycle.benchmark_parameters()
    M, C1, K0, K2 = bicycle.linear_matrices(p)
    np.set_printoptions(precision=14, floatmode="fixed", suppress=True)
    for name, A in (("M", M), ("C1", C1), ("K0", K0), ("K2", K2)):
        print(f"{name} =\n{A}")

    cs = bicycle.critical_speeds(p)
    print(f"\nweave oscillation starts at v_d = {cs.oscillation:.14f} m/s (double root {cs.double_root:.14f} 1/s)")
    print(f"weave speed   v_w = {cs.weave:.14f} m/s, eigenvalues +-{cs.weave_frequency:.14f} i")
    print(f"capsize speed v_c = {cs.capsize:.14f} m/s")
    print(f"self-stable for {cs.stable_interval[0]:.4f} < v < {cs.stable_interval[1]:.4f} m/s")

    sw = bicycle.eigenvalues(p, np.arange(11.0))
    print("\n v   weave                                   capsize             castor")
    for v, (wp, _, cap, cas) in zip(sw.speeds, sw.values):
        print(f"{v:2.0f}  {wp.real:18.14f} {wp.imag:+18.14f}i  {cap.real:18.14f}  {cas.real:18.14f}")

    eig_png = plot_eigenvalues(p, os.path.join(outdir, "bicycle_eigenvalues.png"))
    v = 4.6
    sim = bicycle.simulate_linear(p, v, 5.0, x0=(0.0, 0.0, 0.5, 0.0), n_out=1001)
    period = 2 * math.pi / bicycle.eigenvalues(p, v).weave[0, 0].imag
    print(f"\nlinear run at {v} m/s from lean rate 0.5 rad/s: weave period {period:.5f} s (paper: 1.622 s);"
          f" heading after 5 s {math.degrees(sim.psi[-1]):.2f} deg, rear contact at "
          f"({sim.xP[-1]:.3f}, {sim.yP[-1]:.3f}) m")
    hist_png = plot_time_history(sim, os.path.join(outdir, "bicycle_time_history.png"))
    print(f"wrote {eig_png} and {hist_png}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
