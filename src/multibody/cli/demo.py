"""``multibody demo``: a short tour that reproduces the headline results of the reference texts.

Every section computes its numbers live, compares them with the values printed in the texts, writes its
plots into the output folder and adds rows to ``results.md`` / ``results.json`` there.

``--brief`` runs every section with short runs, few frames and small grids (:meth:`Tour.span`): the same calls
through the same code, so the same compiled functions, in a few seconds instead of about thirty; its numbers are
not the texts'. The install's warm-up runs it (``multibody.warmup``, case ``demo``): the full demo that follows
compiles nothing and its runs are not paid twice.
"""
import json
import os
import time
from dataclasses import asdict, dataclass


@dataclass
class Row:
    section: str
    quantity: str
    computed: str
    reference: str
    source: str


class Tour:
    """Collects rows and files of the demo's sections."""

    def __init__(self, out, brief=False):
        self.out = out
        self.brief = brief
        self.rows = []
        self.files = []

    def span(self, value, brief):
        """``value`` (a duration, a count of frames or points), or the shorter ``brief`` one in a brief tour."""
        return brief if self.brief else value

    def row(self, section, quantity, computed, reference="", source=""):
        fmt = (lambda x: x if isinstance(x, str) else f"{x:.15g}")
        self.rows.append(Row(section, quantity, fmt(computed), fmt(reference), source))

    def path(self, name):
        """The path of the output file ``name`` (listed once, however often it is asked for)."""
        p = os.path.join(self.out, name)
        if p not in self.files:
            self.files.append(p)
        return p


def markdown_cell(text):
    """``text`` as one cell of a Markdown table: ``|`` escaped, line breaks as spaces."""
    return " ".join(str(text).split()).replace("|", "\\|")


def markdown_table(rows):
    """The Markdown table (header, rule, one line per row) of the demo's rows."""
    fields = ["section", "quantity", "computed", "reference", "source"]
    lines = ["| " + " | ".join(fields) + " |", "|" + "---|" * len(fields)]
    lines += ["| " + " | ".join(markdown_cell(getattr(r, f)) for f in fields) + " |" for r in rows]
    return lines


def section_bicycle(tour):
    from multibody.systems import bicycle
    from multibody.viz.bicycle import plot_eigenvalues

    p = bicycle.benchmark_parameters()
    cs = bicycle.critical_speeds(p)
    src = "seed 003 (Meijaard et al. 2007), Table 2"
    tour.row("Whipple bicycle", "weave speed v_w [m/s]", cs.weave, 4.29238253634111, src)
    tour.row("Whipple bicycle", "capsize speed v_c [m/s]", cs.capsize, 6.02426201538837, src)
    ev = bicycle.eigenvalues(p, [0.0])
    tour.row("Whipple bicycle", "capsize eigenvalue at v = 0 [1/s]", float(ev.capsize[0].real), -3.13164324790656, src)
    plot_eigenvalues(p, tour.path("bicycle_eigenvalues.png"))
    # the same bicycle as a generic model (bodies, hinges, rolling discs), linearized by the library
    import numpy as np

    from multibody.viz.bicycle import animate_top_view, plot_nonlinear

    speeds = np.linspace(0.0, 10.0, tour.span(11, 3))
    diff = np.abs(bicycle.model_eigenvalues(p, speeds).values - bicycle.eigenvalues(p, speeds).values).max()
    tour.row("Whipple bicycle", "generic model (4 bodies, 3 hinges, 2 rolling discs) linearized: max |eigenvalue "
             "- closed form| at v = 0..10 m/s", f"{diff:.1e}", "< 1e-9", "seed 003 §7")
    vw, vc = bicycle.model_critical_speeds(p)
    tour.row("Whipple bicycle", "v_w, v_c from the generic model [m/s]", f"{vw:.12f}, {vc:.12f}",
             "4.29238253634111, 6.02426201538837", src)
    res = bicycle.simulate_nonlinear(p, 4.6, 0.5, tour.span(5.0, 0.1), n_out=tour.span(501, 11))
    dv = res.series["forward_speed"][-1] - res.series["forward_speed"][0]
    tour.row("Whipple bicycle", "nonlinear, 4.6 m/s, lean rate 0.5 rad/s: forward speed gain after 5 s [m/s]",
             f"{dv:.4f}", "about 0.022", "seed 003 §8, Fig. 4")
    E = res.energy_total
    tour.row("Whipple bicycle", "nonlinear run: energy variation (max - min)/E0", f"{np.ptp(E) / abs(E[0]):.1e}",
             "0 (no dissipation)", "")
    plot_nonlinear(res, tour.path("bicycle_nonlinear.png"), title="Whipple bicycle, seed 003 Fig. 4 run")
    animate_top_view(res, tour.path("bicycle_top_view.gif"), frames=tour.span(60, 2))


def section_triple_pendulum(tour):
    import numpy as np

    from multibody.systems import pendulums
    from multibody.viz import plot_result

    res = pendulums.simulate_triple_pendulum_seed001(t_end=10.0)
    ref = {1.0: [-0.245186, -0.007221, -0.000042], 10.0: [-1.888975, -2.812204, -2.965351]}
    src = "seed 001 §3.5, Fig. 3.20 (reference values: notes part 2 §9.2)"
    for t, qref in ref.items():
        k = int(np.argmin(np.abs(res.t - t)))
        qabs = pendulums.absolute_angles(res.q[k])
        tour.row("triple pendulum", f"absolute angles at t = {t:g} s", np.array2string(qabs, precision=6),
                 str(qref), src)
    tour.row("triple pendulum", "max |T + П| over 10 s", float(np.max(np.abs(res.energy_total))), "0", src)
    plot_result(res, energy=True, path=tour.path("triple_pendulum.png"), title="seed 001 triple pendulum (relative angles)")


def section_solar_panel(tour):
    import numpy as np

    from multibody.systems import solar_panels
    from multibody.viz.solar_panels import plot_deployment

    params = solar_panels.SolarPanelParameters()
    table = solar_panels.barycentric_table(params)
    res = solar_panels.deploy(params, t_end=12.0)
    summary = solar_panels.deployment_summary(res, params)
    src = "seed 001 §3.2.1, Table 3.1"
    p = params
    mu1, mu2 = p.m1 / (p.m1 + p.m2), p.m2 / (p.m1 + p.m2)
    closed = {  # the printed closed forms of Table 3.1
        "b10": np.hypot(mu2 * p.s12 + p.s10, mu2 * p.h12 + p.h10),
        "b12": mu1 * np.hypot(p.s12, p.h12),
        "b22": mu1 * np.hypot(p.s21, p.h21),
    }
    for key, ref in closed.items():
        tour.row("solar panel", f"|{key}| [m] from the model (Table 3.1 closed form)", float(table[key]), ref, src)
    phi = solar_panels.absolute_angles(res.q[-1])
    tour.row("solar panel", "final absolute angles φ1, φ2 [deg]", np.array2string(np.degrees(phi), precision=3),
             "[0, 0] (deployed)", src)
    plot_deployment(res, tour.path("solar_panel_deployment.png"), params)
    return summary


def section_variable_structure(tour):
    """Stops, latches, loops (seed 001 introduction: variable structure; seed 002: Δp = Jᵀ Λ): a pendulum on an end
    stop against Newton's law and the closed-form (elliptic) impact instants, the solar panel's latches against
    the plastic-impact loss, and a four-bar loop bouncing into rest on its stop."""
    import math

    import numpy as np
    from scipy.special import ellipk

    import multibody as mb
    from multibody.examples import path as example_path
    from multibody.systems import solar_panels
    from multibody.viz import plot_result

    src = "seed 001 introduction (variable structure), seed 002 (Δp = JᵀΛ)"
    g, theta0 = 9.81, 0.8

    def pendulum(e):
        b = mb.ModelBuilder(gravity=(0.0, 0.0, -g), name="pendulum on a stop")
        b.add_body("bob", mass=1.0, com=(0.0, 0.0, -1.0), inertia=np.diag([1e-3] * 3))
        b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=(-math.inf, 0.0), restitution=e)
        return b.build()

    res = mb.simulate(pendulum(0.7), [-theta0], [0.0], 3.0, rtol=1e-12, atol=1e-12)
    ratios = [e["velocity_after"] / e["velocity_before"] for e in res.events if e["kind"] == "impact"][:3]
    tour.row("variable structure", "pendulum on a stop, e = 0.7: u⁺/u⁻ at the first impacts",
             np.array2string(np.array(ratios), precision=15), "-0.7 (Newton's law)", src)
    T = 4.0 * math.sqrt((1.0 + 1e-3) / g) * ellipk(math.sin(theta0 / 2.0) ** 2)
    res = mb.simulate(pendulum(1.0), [-theta0], [0.0], 10.25 * T, rtol=1e-12, atol=1e-12)
    times = np.array([e["t"] for e in res.events])
    exact = T / 4.0 + T / 2.0 * np.arange(len(times))
    E = res.energy["total"]
    tour.row("variable structure", f"e = 1: {len(times)} impact instants, max |t − (T/4 + (n−1)T/2)| [s]",
             float(np.max(np.abs(times - exact))), "0 (T: elliptic period)", src)
    tour.row("variable structure", "e = 1: energy variation over the impacts (relative)",
             float(np.ptp(E) / abs(E).max()), "0", src)

    deploy = solar_panels.deploy(t_end=5.0, rtol=1e-10, atol=1e-12)
    for lock in solar_panels.lock_losses(deploy):
        tour.row("variable structure",
                 f"solar panel: {lock['element']} locks at t = {lock['t']:.6f} s, energy lost [J]", lock["lost"],
                 f"{lock['plastic']:.15g} (plastic impact from crba)", "seed 001 §3.2.1")

    loop = mb.load_model(example_path("four_bar_stops"))
    res = mb.simulate(loop, np.zeros(3), np.array([-1.0, -1.0, 1.0]), 3.0, formulation="constrained",
                      rtol=1e-10, atol=1e-12, t_eval=np.linspace(0.0, 3.0, 601))
    hits = [e for e in res.events if e["kind"] in ("impact", "contact")]
    newton = max(abs(e["velocity_after"] + 0.7 * e["velocity_before"]) / abs(e["velocity_before"])
                 for e in hits if e["kind"] == "impact")
    tour.row("variable structure", f"four-bar loop on its stop: {len(hits)} impacts, then {hits[-1]['kind']}; "
             "max |u⁺ + e u⁻| / |u⁻|", newton, "0 (Newton's law, e = 0.7)", "seed 001 §3.6 with stops")
    tour.row("variable structure", "four-bar loop: max constraint residual",
             max(float(np.max(np.abs(r))) for r in res.residuals.values()), "0", "seed 001 §3.6")
    plot_result(res, coords=["A0.angle"], path=tour.path("four_bar_stops.png"),
                title="four-bar loop bouncing into rest on its stop (switches marked)")


def section_hoop(tour):
    import numpy as np

    import multibody as mb
    from multibody.systems.hoop_on_profile import FIG4, fig4_runs, fig4_summary, hoop_model, initial_state
    from multibody.viz.hoop import plot_fig4, plot_run

    model = hoop_model()
    q0, v0 = initial_state(model, 0.0, 1.0)
    # rtol 1e-10: at 1e-9 the no-slip and energy rows reach 1e-8 (multibody bench --only hoop)
    res = mb.simulate(model, q0, v0, tour.span(10.0, 0.2), formulation="stabilized", energy_constraint=True,
                      lam=10.0, method="DOP853", rtol=1e-10, atol=1e-12, n_out=tour.span(10001, 201), symbolic=True)
    worst = max(float(np.max(np.abs(v))) for v in res.residuals.values())
    src = "seed 000 §4 (paper: < 7e-9 with RK2, h = 1e-5, λ = 1e3)"
    tour.row("hoop on a profile", "max constraint residual, 10 time units (builder model, generated code, DOP853 rtol 1e-10, λ = 10)", worst,
             "< 7e-9", src)
    tour.row("hoop on a profile", "steps / CPU seconds", f"{res.info.get('steps')} / {res.info.get('cpu_seconds'):.2f}",
             "1e6 RK2 steps", src)
    plot_run(model, res, tour.path("hoop_residuals.png"), title="hoop on the seed 000 profile, DOP853, λ = 10")

    # Fig. 4: without stabilization (λ = 0) an initial error within the seed's bound drives the hoop off the profile
    runs, _ = fig4_runs(model, t_end=tour.span(FIG4["t_end"], 0.002), n_out=tour.span(13201, 21))
    for label, s in fig4_summary(model, runs).items():
        tour.row("hoop on a profile", f"Fig. 4, {label}: max contact distance from profile", s["max_contact_distance"],
                 "visible (λ = 0) / ~0 (λ = 1e3)", "seed 000 §4, Fig. 4")
    plot_fig4(model, runs, tour.path("hoop_fig4.png"))


def section_constrained(tour):
    import numpy as np

    from multibody.systems import iftomm, slider_crank
    from multibody.viz.slider_crank import plot_reactions

    res = slider_crank.simulate_turns(turns=tour.span(2, 0.1), n_out=tour.span(401, 21))
    worst = max(float(np.max(res.residuals[k])) for k in ("position", "velocity", "acceleration"))
    tour.row("slider-crank", "max constraint residual over 2 crank turns (projection)", worst, "< 1e-10",
             "seed 001 §2.6.2")
    fig = plot_reactions(res, tour.path("slider_crank_reactions.png"))
    import matplotlib.pyplot as plt

    plt.close(fig)
    a03 = iftomm.run_problem("A03")
    names = ["beta", "Theta", "gamma", "Phi", "delta", "Omega", "epsilon"]
    tour.row("IFToMM A03 Andrews", "β, Θ, γ, Φ, δ, Ω, ε at t = 0.03 s",
             np.array2string(np.array([a03[k] for k in names]), precision=9, max_line_width=200),
             np.array2string(iftomm.ANDREWS_REF_003, precision=9, max_line_width=200),
             "Hairer & Wanner II §VII.7; IVP test set 'andrews'")
    tour.row("IFToMM A03 Andrews", "max |error| vs. reference / CPU s",
             f"{a03['max_abs_error_vs_reference']:.2e} / {a03['cpu_seconds']:.2f}", "", "")


def section_sweep(tour):
    """Parameter sweeps (``multibody.sweep``): the bicycle's stability map over trail and steer-axis tilt on local
    worker processes, and a Monte-Carlo of the hoop's initial conditions."""
    import math

    import numpy as np

    import multibody as mb
    from multibody.parallel.studies import bicycle_stability, hoop_monte_carlo
    from multibody.viz.sweep import plot_stability_map

    # the grids pass exactly through the benchmark bicycle (c = 0.08, lam = pi/10); lam >= pi/2 is invalid
    grid = {"c": 0.08 + 0.02 * np.arange(-8, 12), "lam": math.pi / 10 + 0.1 * np.arange(-5, 14)}
    if tour.brief:        # the benchmark point, one invalid tilt; this process (its workers load what it compiles)
        grid = {"c": np.array([0.08]), "lam": math.pi / 10 + np.array([0.0, 1.3])}
    df = mb.sweep(bicycle_stability, grid, out=tour.path("bicycle_stability_map.parquet"), progress=False,
                  scheduler=tour.span(None, "serial"))
    bench = df[(df["c"] == 0.08) & (df["lam"] == math.pi / 10)].iloc[0]
    src = "seed 003 (Meijaard et al. 2007), Table 2"
    tour.row("parameter sweeps", f"bicycle stability map, {len(df)} points (c, lam) on {df.attrs['workers']} local "
             "processes: v_w, v_c at the benchmark point [m/s]", f"{bench['v_w']:.15g}, {bench['v_c']:.15g}",
             "4.29238253634111, 6.02426201538837", src)
    tour.row("parameter sweeps", "points with a self-stable speed range (v_w < v_c) / invalid (lam >= pi/2, "
             "error recorded)", f"{int((df['stable'] == 1).sum())} / {int(df['error'].notna().sum())}",
             f"- / {int(np.sum(grid['lam'] >= math.pi / 2)) * grid['c'].size}", "")
    tour.row("parameter sweeps", "stability map throughput [points/s] (worker start-up included)",
             f"{df.attrs['computed'] / df.attrs['seconds']:.1f}", "", "")
    plot_stability_map(df, tour.path("bicycle_stability_map.png"))
    mc = mb.sweep(hoop_monte_carlo, {"sample": range(tour.span(6, 1))}, scheduler="serial", progress=False)
    tour.row("parameter sweeps", "hoop Monte-Carlo, 6 random starts (x0 ~ U(-0.95, 0.95), speed ~ N(0, 0.3)): "
             "first turning times [s]", np.array2string(mc["t_turn"].to_numpy(), precision=3), "", "seed 000 §4")
    tour.row("parameter sweeps", "hoop Monte-Carlo: max constraint residual over all runs (DOP853, λ = 10)",
             float(mc["max_residual"].max()), "< 1e-6", "seed 000 §4")


def section_poisson(tour):
    """Seed 002: the cardan chain in Poisson impulses, both O(N) solvers against the dense H⁻¹p and the
    trajectory against the articulated-body formulation."""
    import numpy as np

    import multibody as mb
    from multibody.formulations.poisson import impulses, velocity
    from multibody.systems.cardan_chain import cardan_chain

    model = cardan_chain(5)
    rng = np.random.default_rng(2)
    q0, v0 = rng.uniform(-0.5, 0.5, model.nq), rng.uniform(-1.0, 1.0, model.nv)
    p = impulses(model, q0, v0)
    dense = np.linalg.solve(mb.crba(model, q0), p)
    gap = max(float(np.abs(velocity(model, q0, p, solver=s) - dense).max()) for s in ("sweep", "cholesky"))
    src = "seed 002 (Ivanov 2017), eqs. 6-7"
    tour.row("Poisson impulses", "5-body cardan chain: max |q̇(sweep, Cholesky) - H⁻¹p|", f"{gap:.1e}", "< 1e-12", src)
    kw = dict(rtol=1e-13, atol=1e-13, n_out=101)
    tree = mb.simulate(model, q0, v0, 2.0, **kw)
    pois = mb.simulate(model, q0, v0, 2.0, formulation="poisson", solver="cholesky", **kw)
    tour.row("Poisson impulses", "2 s in (q, p) vs. the ABA formulation: max |Δq|, |Δv|",
             f"{np.abs(pois.q - tree.q).max():.1e}, {np.abs(pois.v - tree.v).max():.1e}", "< 1e-10", src)


def section_inertial_forces(tour):
    """Seed 004: Telegin's split of the inertial forces of the six manipulators, symbolic, with its numeric
    twin and the zero power of the gyroscopic forces."""
    import numpy as np
    import sympy as sp

    from multibody.analysis.inertial_forces import numeric_split
    from multibody.symbolic import split_inertial_forces
    from multibody.systems import manipulators

    split = split_inertial_forces(manipulators.cartesian(symbolic=True))
    src = "seed 004 (Telegin 2024), Example 2"
    tour.row("inertial forces", "Cartesian manipulator: centrifugal forces (q1, q2, q3)",
             str(list(split.centrifugal)), "[-a3*qd3**2*sin(q3), -a3*qd3**2*cos(q3), 0]", src)
    power = sp.simplify((sp.Matrix(split.qd).T * split.gyroscopic)[0])
    tour.row("inertial forces", "gyroscopic power q̇ᵀh_g (symbolic)", str(power), "0", "seed 004, eq. 5")
    model = manipulators.universal()
    rng = np.random.default_rng(4)
    ns = numeric_split(model, rng.uniform(-1, 1, model.nq), rng.uniform(-1, 1, model.nv))
    tour.row("inertial forces", "6-DoF universal manipulator, numeric twin: |q̇ᵀh_g| relative to the powers",
             f"{ns.power_residual:.1e}", "0 (round-off)", "seed 004, Example 6")


def section_model_files(tour):
    """A bundled model file (``multibody examples``): loaded, simulated, saved and loaded again."""
    import numpy as np

    import multibody as mb
    from multibody import examples

    model = mb.load_model(examples.path("four_bar"))
    res = mb.simulate(model, None, None, 2.0, formulation="constrained", rtol=1e-10, atol=1e-10, n_out=201)
    e = res.energy["total"]
    worst = max(float(np.max(np.abs(r))) for k, r in res.residuals.items() if k not in ("velocity", "acceleration"))
    tour.row("model files", "four_bar.yaml, 2 s constrained: energy variation / max position residual",
             f"{np.ptp(e) / max(abs(e[0]), 1.0):.1e} / {worst:.1e}", "< 1e-8 / < 1e-10", "seed 001 §3.6")
    saved = tour.path("four_bar_saved.yaml")
    mb.save_model(model, saved)
    again = mb.load_model(saved)
    from multibody.io import model_to_dict

    tour.row("model files", "saved and loaded again: the same model", str(model_to_dict(model) == model_to_dict(again)),
             "True", "")


SECTIONS = [
    ("Whipple bicycle (seed 003)", section_bicycle),
    ("triple pendulum (seed 001 §3.5)", section_triple_pendulum),
    ("solar panel deployment (seed 001 §3.2.1)", section_solar_panel),
    ("stops, latches and loops (variable structure)", section_variable_structure),
    ("hoop on a curved profile (seed 000)", section_hoop),
    ("constrained mechanisms (seed 001 ch. 2, §3.6; IFToMM)", section_constrained),
    ("Poisson impulses (seed 002)", section_poisson),
    ("inertial forces (seed 004)", section_inertial_forces),
    ("model files", section_model_files),
    ("parameter sweeps (bicycle stability map, hoop Monte-Carlo)", section_sweep),
]


def run(args):
    from multibody.cli.paths import output_folder

    out = os.path.abspath(output_folder(args.out, "--out"))
    tour = Tour(out, brief=getattr(args, "brief", False))
    for name, func in SECTIONS:
        t0 = time.perf_counter()
        print(f"[demo] {name} ...", flush=True)
        func(tour)
        print(f"[demo] {name}: {time.perf_counter() - t0:.1f} s", flush=True)
    lines = markdown_table(tour.rows)
    if tour.brief:
        lines = ["A brief tour (`--brief`): short runs, few frames and small grids; the computed numbers are not the "
                 "texts' (run `multibody demo` for them).", ""] + lines
    with open(tour.path("results.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    with open(tour.path("results.json"), "w") as fh:
        json.dump([asdict(r) for r in tour.rows], fh, indent=2)
    print("\n".join(lines))
    print(f"\nwrote {len(tour.files)} files to {out}:")
    for f in tour.files:
        print(f"  {f}")
    return 0


def cli_register(subparsers):
    p = subparsers.add_parser("demo", help="tour of the headline results: plots and a results table")
    p.add_argument("--out", default="multibody-demo", help="output folder (default: ./multibody-demo)")
    p.add_argument("--brief", action="store_true",
                   help="every section with short runs and small grids (seconds; the numbers are not the texts')")
    p.set_defaults(func=run)
