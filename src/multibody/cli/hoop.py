"""``multibody hoop``: the heavy hoop on the curved profile of seed 000 (Sec. 3–4) with stabilized constraints.

Examples::

    multibody hoop --lam 1e3 --h 1e-5 --t-end 100 --method rk2 --json
    multibody hoop --method dop853 --lam 10 --rtol 1e-9 --t-end 100 --plot hoop.png
    multibody hoop --fig4 fig4.png        # seed 000, Fig. 4: the unstabilized run (λ = 0) leaves the profile

The hoop is the builder model of :mod:`multibody.systems.hoop_on_profile` simulated with
``formulation="stabilized", energy_constraint=True`` and ``symbolic=True`` (the model's DAE derived and compiled;
``--generic``: the generic kernels, the same numbers to rounding, about 20 times slower). ``--json`` prints ``max_residual`` (max over i of |f_i|
over the second half of the run), ``max_residual_by_constraint``, ``steps``, ``cpu_seconds`` (and the run's
settings).
"""
import json
import math

import numpy as np

import multibody as mb
from multibody.errors import ModelError
from multibody.simulation import fixed_step_count
from multibody.systems.hoop_on_profile import fig4_runs, fig4_summary, hoop_model, initial_state
from multibody.viz.hoop import plot_fig4, plot_run


#: the seed's names of the hoop's residuals (seed 000, eqs. 3.2–3.5)
SEED_NAMES = {"contact.contact": "f1 (contact)", "energy": "f2 (energy)", "contact.no_slip": "f3 (no slip)",
              "contact.tangency": "f4 (tangency)"}


def summary(result):
    """The ``--json`` summary of a run: residuals over its second half, by the seed's names."""
    half = result.t >= result.t[0] + 0.5 * (result.t[-1] - result.t[0])
    by = {SEED_NAMES.get(k, k): float(np.max(np.abs(v[half]))) for k, v in result.residuals.items()}
    return {"max_residual": max(by.values()), "max_residual_by_constraint": by, "steps": result.info.get("steps"),
            "cpu_seconds": result.info.get("cpu_seconds"), "method": result.info.get("method"),
            "lambda": result.info.get("lambda"), "h": result.info.get("h"), "t_end": float(result.t[-1]),
            "rhs_evaluations": result.info.get("nfev")}


#: the most fixed steps ``multibody hoop`` takes (the paper's run is 1e7 steps; 1e9 take hours)
MAX_STEPS = 10**9


def output_every(nsteps, at_most=20000):
    """Every how many steps a fixed-step run saves its state, for at most ``at_most`` outputs (and the last)."""
    return max(1, -(-nsteps // at_most))


def run(args):
    from multibody.cli.paths import output_file

    output_file(args.plot, "--plot")
    output_file(args.fig4, "--fig4")
    if args.fig4:
        return run_fig4(args)
    model = hoop_model(r=args.r, M=args.M)
    q0, v0 = initial_state(model, args.x0, args.speed)
    kw = {}
    method = args.method.upper()
    if not (math.isfinite(args.t_end) and args.t_end > 0):
        raise ModelError(f"--t-end must be a positive time, got {args.t_end}", element="--t-end")
    if method in ("RK2", "RK4", "HEUN"):
        nsteps, _ = fixed_step_count(0.0, args.t_end, args.h, method)
        if nsteps > MAX_STEPS:
            raise ModelError(f"--t-end {args.t_end:g} with --h {args.h:g} is {nsteps:.3g} steps; at most {MAX_STEPS:.0e} "
                             "(take a larger h, or --method dop853)", element="--h")
        # the residuals decay as exp(−λ t) (seed 000, eq. 2.5); an explicit Runge-Kutta step is stable on that
        # mode only for h λ inside its real stability interval: 2 for RK2 and Heun, 2.785 for RK4
        limit = 2.785 if method == "RK4" else 2.0
        if args.h * args.lam > limit:
            raise ModelError(f"--h {args.h:g} with --lam {args.lam:g}: h·λ = {args.h * args.lam:.3g} exceeds {limit}, "
                             f"where {args.method} is unstable on the residuals' decay exp(-λt); take h <= "
                             f"{limit / args.lam:.3g}", element="--h")
        kw = {"h": args.h, "output_every": output_every(nsteps), "progress": nsteps >= 2_000_000 and not args.json}
    else:
        for option, tol in (("--rtol", args.rtol), ("--atol", args.atol)):
            if not (math.isfinite(tol) and tol > 0):
                raise ModelError(f"{option} must be a positive number, got {tol}", element=option)
        kw = {"rtol": args.rtol, "atol": args.atol, "n_out": 20001}
    res = mb.simulate(model, q0, v0, args.t_end, formulation="stabilized", energy_constraint=True, lam=args.lam,
                      method=method, symbolic=not args.generic, **kw)
    s = summary(res)
    if args.plot:
        plot_run(model, res, args.plot, title=f"{args.method}, λ = {args.lam:g}")
        s["plot"] = args.plot
    if args.json:
        print(json.dumps(s, indent=2))
    else:
        print(f"hoop on the seed 000 profile: {args.method}, λ = {args.lam:g}, t_end = {args.t_end:g}")
        print(f"  steps {s['steps']}, cpu {s['cpu_seconds']:.2f} s")
        print(f"  max residual over the second half: {s['max_residual']:.3e}")
        for k, v in s["max_residual_by_constraint"].items():
            print(f"    {k}: {v:.3e}")
        if args.plot:
            print(f"  plot written to {args.plot}")
    return 0


def run_fig4(args):
    """``multibody hoop --fig4 FILE``: the λ = 0 failure of seed 000, Fig. 4 (see :func:`fig4_runs`)."""
    model = hoop_model(r=args.r, M=args.M)
    runs, _E0 = fig4_runs(model)
    plot_fig4(model, runs, args.fig4)
    s = fig4_summary(model, runs)
    s["plot"] = args.fig4
    if args.json:
        print(json.dumps(s, indent=2))
    else:
        print("seed 000, Fig. 4: RK2, h = 1e-5, normal velocity error 1e-3 (max_i |f_i(0)| = 5e-7)")
        for label, v in s.items():
            if label == "plot":
                continue
            print(f"  {label}: max distance from the profile {v['max_contact_distance']:.3e}, "
                  f"turning points at {v['turning_points']}")
        print(f"  figure written to {args.fig4}")
    return 0


def cli_register(subparsers):
    p = subparsers.add_parser("hoop", help="heavy hoop rolling on a curved profile, stabilized constraints (seed 000)")
    p.add_argument("--lam", type=float, default=1e3, help="stabilization gain λ_i of every constraint (default 1e3)")
    p.add_argument("--h", type=float, default=1e-5, help="fixed step (rk2, rk4; default 1e-5)")
    p.add_argument("--t-end", type=float, default=10.0, help="end time (default 10)")
    p.add_argument("--method", choices=["rk2", "heun", "rk4", "dop853"], default="rk2", type=str.lower)
    p.add_argument("--rtol", type=float, default=1e-9, help="dop853 relative tolerance")
    p.add_argument("--atol", type=float, default=1e-11, help="dop853 absolute tolerance")
    p.add_argument("--x0", type=float, default=-0.9, help="initial contact abscissa (default -0.9)")
    p.add_argument("--speed", type=float, default=0.0, help="initial speed of the centre along the tangent")
    p.add_argument("--r", type=float, default=0.01, help="hoop radius (default 0.01)")
    p.add_argument("--M", type=float, default=1.0, help="hoop mass (default 1)")
    p.add_argument("--plot", nargs="?", const="hoop.png", default=None, metavar="FILE",
                   help="write the residuals and the contact path to FILE (default hoop.png)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.add_argument("--generic", action="store_true",
                   help="the generic stabilized path (compiled constraint kernels) instead of the generated code")
    p.add_argument("--fig4", default=None, metavar="FILE",
                   help="reproduce seed 000, Fig. 4 (λ = 0 vs λ = 1e3, RK2, h = 1e-5) into FILE and exit")
    p.set_defaults(func=run)
