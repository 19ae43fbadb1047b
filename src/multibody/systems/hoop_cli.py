"""``multibody hoop``: the heavy hoop on the curved profile of seed 000 (Sec. 3–4) with stabilized constraints.

Examples::

    multibody hoop --lam 1e3 --h 1e-5 --t-end 100 --method rk2 --json
    multibody hoop --method dop853 --lam 10 --rtol 1e-9 --t-end 100 --plot hoop.png

``--json`` prints ``max_residual`` (max over i of |f_i| over the second half of the run),
``max_residual_by_constraint``, ``steps``, ``cpu_seconds`` (and the run's settings).
"""
import json
import time

import numpy as np


def plot_run(hoop, result, path, title=None):
    """Residuals ``|f_i(t)|`` (log scale) and the contact point's path over the profile (seed 000, Figs. 1, 3)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for k, v in result.residuals.items():
        ax1.semilogy(result.t, np.maximum(np.abs(v), 1e-18), lw=0.6, label=k)
    ax1.set_xlabel("t")
    ax1.set_ylabel("|f_i|")
    ax1.legend()
    ax1.set_title(title or "constraint residuals")
    xa, za = hoop.contact_point(result.q)
    lo, hi = min(hoop.x_range[0], xa.min()), max(hoop.x_range[1], xa.max())
    xs = np.linspace(lo, hi, 800)
    ax2.plot(xs, hoop.profile_z(xs), "k-", lw=1.0, label="profile")
    ax2.plot(xa, za, "r--", lw=0.8, label="contact point")
    ax2.set_xlabel("x")
    ax2.set_ylabel("z")
    ax2.legend()
    ax2.set_title("contact point over the profile")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_fig4(hoop, runs, path):
    """Seed 000, Fig. 4: the profile and the contact point's path for the given runs (dict λ → Result), and the
    contact point's vertical offset from the profile ``|z_a − z(x_a)|`` against time (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    xs = np.linspace(hoop.x_range[0], hoop.x_range[1], 800)
    ax1.plot(xs, hoop.profile_z(xs), "k-", lw=1.2, label="profile")
    styles = ["r--", "b:", "g-."]
    for (lam, res), st in zip(sorted(runs.items()), styles):
        xa, za = hoop.contact_point(res.q)
        ax1.plot(xa, za, st, lw=0.8, label=f"contact point, λ = {lam:g}")
        dev = np.abs(za - hoop.profile_z(xa))
        ax2.semilogy(res.t, np.maximum(dev, 1e-18), st[0] + "-", lw=0.7, label=f"λ = {lam:g}")
    ax1.set_xlabel("x")
    ax1.set_ylabel("z")
    ax1.legend()
    ax1.set_title("contact point path (seed 000, Fig. 4)")
    ax2.set_xlabel("t")
    ax2.set_ylabel("|z_a − z(x_a)|")
    ax2.legend()
    ax2.set_title("offset of the contact point from the profile")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def summary(result):
    """The ``--json`` summary of a run."""
    from multibody.formulations.stabilized import max_residual

    worst, by = max_residual(result)
    return {"max_residual": worst, "max_residual_by_constraint": by, "steps": result.info.get("steps"),
            "cpu_seconds": result.info.get("cpu_seconds"), "method": result.info.get("method"),
            "lambda": result.info.get("lambda"), "h": result.info.get("h"), "t_end": float(result.t[-1]),
            "rhs_evaluations": result.info.get("rhs_evaluations")}


def run(args):
    from multibody.errors import MultibodyError
    from multibody.systems.hoop_on_profile import HoopOnProfile

    try:
        hoop = HoopOnProfile(r=args.r, M=args.M)
        X0 = hoop.initial_state(args.x0, args.speed)
        kw = {}
        if args.method in ("rk2", "rk4", "heun"):
            nsteps = int(round(args.t_end / args.h))
            # residuals vary on the time scale 1/λ: keep at least ~10 saved states per 1/λ, at most 2e6 saves
            lam_max = max(args.lam, 1.0)
            save_every = max(1, min(int(0.1 / (lam_max * args.h)), nsteps))
            save_every = max(save_every, nsteps // 2_000_000)
            kw = {"h": args.h, "save_every": save_every}
        else:
            kw = {"rtol": args.rtol, "atol": args.atol}
        long_run = args.t_end / (args.h if args.method != "dop853" else 1e-3) > 2e6
        res = hoop.simulate(X0, args.t_end, lam=args.lam, method=args.method,
                            progress=long_run and not args.json, **kw)
    except MultibodyError as exc:
        print(f"error: {exc}")
        return 2
    s = summary(res)
    if args.plot:
        plot_run(hoop, res, args.plot, title=f"{args.method}, λ = {args.lam:g}")
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


def cli_register(subparsers):
    p = subparsers.add_parser("hoop", help="heavy hoop rolling on a curved profile, stabilized constraints (seed 000)")
    p.add_argument("--lam", type=float, default=1e3, help="stabilization gain λ_i of every constraint (default 1e3)")
    p.add_argument("--h", type=float, default=1e-5, help="fixed step (rk2, rk4; default 1e-5)")
    p.add_argument("--t-end", type=float, default=10.0, help="end time (default 10)")
    p.add_argument("--method", choices=["rk2", "heun", "rk4", "dop853"], default="rk2")
    p.add_argument("--rtol", type=float, default=1e-9, help="dop853 relative tolerance")
    p.add_argument("--atol", type=float, default=1e-11, help="dop853 absolute tolerance")
    p.add_argument("--x0", type=float, default=-0.9, help="initial contact abscissa (default -0.9)")
    p.add_argument("--speed", type=float, default=0.0, help="initial speed of the centre along the tangent")
    p.add_argument("--r", type=float, default=0.01, help="hoop radius (default 0.01)")
    p.add_argument("--M", type=float, default=1.0, help="hoop mass (default 1)")
    p.add_argument("--plot", nargs="?", const="hoop.png", default=None, metavar="FILE",
                   help="write the residuals and the contact path to FILE (default hoop.png)")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)
