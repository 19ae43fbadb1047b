"""``multibody iftomm A01|A02|A03|A04|A05 [--t-end T] [--formulation F] [--json]``: run an IFToMM benchmark problem.

Each problem is one builder model (:mod:`multibody.systems.iftomm`) run in the formulation asked for
(default: Cartesian coordinates for A01–A04, the tree for A05). For A03 (Andrews' squeezing mechanism) it
prints the seven angles β, Θ, γ, Φ, δ, Ω, ε at the end time (JSON keys ``beta, Theta, gamma, Phi, delta,
Omega, epsilon``), the CPU time, the energy balance and the constraint residuals; for A05 (stiff flyball
governor) the slider coordinate s at the end, its extremes and its values every 0.5 s (keys ``t``, ``s_t``), the
shaft speed and the drifts of the axial angular momentum and of the energy balance with the damper work; for
the others the energy variation, residuals and the benchmark's points: A01 the mass P1 (``x_P1, y_P1``), A02 the
crank tip B0 (``x_B0, y_B0, vx_B0, vy_B0``) and the crank angle, A04 the rod 2–rod 3 hinge P3 (``x_P3, y_P3,
z_P3``). A05 in Cartesian coordinates is refused, with the reason, when it would run for more than about a minute.
"""
import json
import math

from multibody.errors import ModelError


def cli_register(subparsers):
    p = subparsers.add_parser("iftomm", help="run an IFToMM multibody benchmark problem (A01..A05)")
    p.add_argument("problem", choices=["A01", "A02", "A03", "A04", "A05"], type=str.upper)
    p.add_argument("--t-end", type=float, default=None, help="end time (default: the problem's own)")
    p.add_argument("--N", type=int, default=2, help="A02: number of four-bar windows (default 2)")
    p.add_argument("--formulation", choices=["cartesian", "constrained", "tree"], default=None,
                   help="cartesian (absolute coordinates; default for A01-A04), constrained (tree + cut joints), "
                        "tree (A01, A05; default for A05)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(func=run)


def run(args):
    from multibody.systems.iftomm import run_problem

    if args.t_end is not None and not (math.isfinite(args.t_end) and args.t_end > 0):
        raise ModelError(f"--t-end must be a positive time, got {args.t_end}", element="--t-end")
    if args.N < 1:
        raise ModelError(f"--N must be at least 1, got {args.N}", element="--N")
    out = run_problem(args.problem, t_end=args.t_end, N=args.N, formulation=args.formulation)
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for k, v in out.items():
            if isinstance(v, list):
                v = " ".join(f"{x:.10g}" for x in v)
            print(f"{k:>32s}  {v:.16g}" if isinstance(v, float) else f"{k:>32s}  {v}")
    return 0
