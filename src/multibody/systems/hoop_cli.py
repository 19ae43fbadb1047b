"""``multibody hoop``: the heavy hoop on the curved profile of seed 000 (Sec. 3–4) with stabilized constraints.

Examples::

    multibody hoop --lam 1e3 --h 1e-5 --t-end 100 --method rk2 --json
    multibody hoop --method dop853 --lam 10 --rtol 1e-9 --t-end 100 --plot hoop.png
    multibody hoop --fig4 fig4.png        # seed 000, Fig. 4: the unstabilized run (λ = 0) leaves the profile

``--json`` prints ``max_residual`` (max over i of |f_i| over the second half of the run),
``max_residual_by_constraint``, ``steps``, ``cpu_seconds`` (and the run's settings).
"""
import json

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


#: the Fig. 4 experiment (seed 000, Sec. 4): start, normal-velocity error, duration (two passes back and forth
#: of the consistent motion: turning points at t = 1.57, 3.20, 4.84, 6.48), RK2 step
FIG4 = {"x_contact": -0.9, "speed": 0.3, "normal_speed": 1e-3, "t_end": 6.6, "h": 1e-5}


def fig4_runs(hoop, normal_speed=FIG4["normal_speed"], t_end=FIG4["t_end"], h=FIG4["h"], save_every=50):
    """The runs of seed 000, Fig. 4: RK2 (step ``h``) from the consistent state at ``x_a = −0.9`` moving at 0.3,
    with the centre's velocity changed by ``normal_speed`` along the normal into the profile (f1 = f3 = f4 = 0,
    f2 = M n²/2 = 5e-7 < 1e-6 for n = 1e-3 — the seed's ``max_i |δ_i(0)| < 1e-6`` — but ``ḟ1(0) = ‖∇h‖ n``).

    Returns ``(runs, E0)``, ``runs`` a dict label → Result: λ = 0 with the seed's plain solve (``solver="exact"``,
    eq. 2.3), λ = 0 with the turning-point solve :func:`~multibody.systems.hoop_on_profile.solve_hoop`, and
    λ = 1e3 with the plain solve. See :mod:`multibody.systems.hoop_on_profile` for what they show.
    """
    X1 = hoop.initial_state(FIG4["x_contact"], FIG4["speed"])
    E0 = float(hoop.energy(X1))
    X0 = hoop.with_normal_velocity(X1, normal_speed)
    runs = {}
    for label, lam, solver in (("λ = 0, plain A N = −φ (eq. 2.3)", 0.0, "exact"),
                               ("λ = 0, turning-point solve", 0.0, "hoop"),
                               ("λ = 1e3, plain A N = −φ", 1e3, "exact")):
        runs[label] = hoop.simulate(X0, t_end, lam=lam, method="rk2", h=h, save_every=save_every, E0=E0,
                                    solver=solver, record_reactions=False)
    return runs, E0


def plot_fig4(hoop, runs, path):
    """Seed 000, Fig. 4: the contact point's path over the profile for the given runs (dict label → Result; a
    float label is shown as ``λ = label``), a zoom on the end of the path, and the contact point's distance
    from the profile ``|h(x_a, z_a)|/‖∇h‖`` against time (log scale)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(17, 4.8))
    styles = ["r-", "m--", "b:", "g-."]
    paths = []
    for (label, res), st in zip(runs.items(), styles):
        name = f"λ = {label:g}" if isinstance(label, (int, float)) else str(label)
        xa, za = hoop.contact_point(res.q)
        paths.append((xa, za))
        dev = np.abs(hoop.contact_offset(res.q))
        for ax in (ax1, ax2):
            ax.plot(xa, za, st, lw=0.9, label=name)
        ax3.semilogy(res.t, np.maximum(dev, 1e-16), st, lw=0.8, label=name)
    lo = min(hoop.x_range[0], *(p[0].min() for p in paths))
    hi = max(hoop.x_range[1], *(p[0].max() for p in paths))
    xs = np.linspace(lo, hi, 1200)
    ax1.plot(xs, hoop.profile_z(xs), "k-", lw=1.4, label="profile", zorder=0)
    # zoom: the end of the first path (the plain λ = 0 run) and its neighbourhood
    xe, ze = paths[0][0][-1], paths[0][1][-1]
    w = max(0.05, 4 * float(np.max(np.abs(hoop.contact_offset(next(iter(runs.values())).q)))))
    xz = np.linspace(xe - w, xe + w, 400)
    ax2.plot(xz, hoop.profile_z(xz), "k-", lw=1.4, label="profile", zorder=0)
    ax2.set_xlim(xe - w, xe + w)
    ax2.set_ylim(ze - w, ze + w)
    ax1.set_xlabel("x")
    ax1.set_ylabel("z")
    ax1.legend(fontsize=8)
    ax1.set_title("contact point path over the profile (seed 000, Fig. 4)")
    ax2.set_xlabel("x")
    ax2.set_ylabel("z")
    ax2.set_title("zoom at the end of the λ = 0 path")
    ax3.set_xlabel("t")
    ax3.set_ylabel("distance of the contact point from the profile")
    ax3.legend(fontsize=8)
    ax3.set_title("departure from the profile")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def fig4_summary(hoop, runs):
    """Per run of :func:`fig4_runs`: max and final contact distance from the profile, max |f_i|, and the
    times where θ̇ changes sign (turning points)."""
    out = {}
    for label, res in runs.items():
        off = np.abs(hoop.contact_offset(res.q))
        th = res.q[:, 5]
        turns = res.t[1:][np.diff(np.sign(th)) != 0]
        out[str(label)] = {"max_contact_distance": float(off.max()), "final_contact_distance": float(off[-1]),
                           "max_residual_by_constraint": {k: float(np.max(np.abs(v)))
                                                          for k, v in res.residuals.items()},
                           "turning_points": [round(float(t), 4) for t in turns]}
    return out


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

    if args.fig4:
        return run_fig4(args)
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


def run_fig4(args):
    """``multibody hoop --fig4 FILE``: the λ = 0 failure of seed 000, Fig. 4 (see :func:`fig4_runs`)."""
    from multibody.errors import MultibodyError
    from multibody.systems.hoop_on_profile import HoopOnProfile

    try:
        hoop = HoopOnProfile(r=args.r, M=args.M)
        runs, _E0 = fig4_runs(hoop)
    except MultibodyError as exc:
        print(f"error: {exc}")
        return 2
    plot_fig4(hoop, runs, args.fig4)
    s = fig4_summary(hoop, runs)
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
    p.add_argument("--fig4", default=None, metavar="FILE",
                   help="reproduce seed 000, Fig. 4 (λ = 0 vs λ = 1e3, RK2, h = 1e-5) into FILE and exit")
    p.set_defaults(func=run)
