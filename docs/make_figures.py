"""Draw the figures of the documentation (docs/img/) with the library itself.

    python docs/make_figures.py            # every figure (a few minutes: the texts' experiments at full length)
    python docs/make_figures.py seed003    # only the figures whose name starts with "seed003"
    python docs/make_figures.py --list     # the names

The library is imported from this checkout (``src/`` next to ``docs/``), so the figures show the code they sit
beside. Each figure is one function below, named after its file; the runs are the texts' own (seed 000 Fig. 4:
RK2 at h = 1e-5 over two passes; seed 003 Fig. 4 and the IFToMM maneuvers; seed 001's examples) — the numbers
they show are checked by the tests cited on the pages.
"""
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

DOCS = Path(__file__).resolve().parent
IMG = DOCS / "img"
if "multibody" not in sys.modules:             # the library of this checkout, unless one is loaded already
    sys.path.insert(0, str(DOCS.parent / "src"))
sys.path.insert(0, str(DOCS))

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

import multibody as mb  # noqa: E402

FIGURES = {}


def figure(*names):
    """Register a function that writes the files ``names`` (in docs/img)."""
    def register(fn):
        FIGURES[names] = fn
        return fn
    return register


def _figure(w, h):
    fig = Figure(figsize=(w, h), constrained_layout=True)
    FigureCanvasAgg(fig)
    return fig


# ------------------------------------------------------------------------------------------------ getting started
@figure("getting-started-plot.png", "getting-started-animation.gif")
def getting_started(out):
    """The files the code of getting-started.md writes: its plot_result and its animation."""
    from doc_blocks import run_page

    with tempfile.TemporaryDirectory() as tmp:
        run_page("getting-started.md", tmp)
        shutil.copy(Path(tmp) / "double_pendulum.png", out[0])
        shutil.copy(Path(tmp) / "double_pendulum.gif", out[1])


# ------------------------------------------------------------------------------------------------ seed 001
@figure("seed001-slider-crank.png")
def seed001_slider_crank(out):
    """Slider-crank (seed 001 §2.6.2): residuals over 10 turns in Cartesian coordinates, the crank angle of the
    Cartesian and the tree + cut-joint formulations, the joint reactions over one cycle (eqs. 2.26, 2.47)."""
    from multibody.systems import slider_crank as sc

    cart = sc.simulate_turns(turns=10, n_out=2401)
    tree = sc.simulate_turns(t_end=cart.t[-1], formulation="constrained", n_out=len(cart.t))
    phi = sc.crank_angle(cart)
    turns = (phi - phi[0]) / (2 * math.pi)
    fig = _figure(15, 4.2)
    a1, a2, a3 = fig.subplots(1, 3)
    for level in ("position", "velocity", "acceleration"):
        a1.semilogy(turns, np.maximum(cart.residuals[level], 1e-18), label=level)
    a1.axhline(1e-10, color="k", lw=0.8, ls=":", label="bound 1e-10")
    a1.set_xlabel("crank turns")
    a1.set_ylabel("max |constraint residual|")
    a1.set_title("Cartesian coordinates (ch. 2), projection on")
    a1.legend(fontsize=8)
    a2.semilogy(turns, np.maximum(np.abs(sc.crank_angle(tree) - phi), 1e-18), color="C3")
    a2.set_xlabel("crank turns")
    a2.set_ylabel("|crank angle, tree − Cartesian| (rad)")
    a2.set_title("tree coordinates + cut pin B (§3.6) vs ch. 2")
    k1 = int(np.searchsorted(phi, phi[0] + 2 * math.pi))
    for name, arr in sc.reactions_over_cycle(cart).items():
        a3.plot(np.degrees(phi[:k1] - phi[0]), np.hypot(arr[:k1, 0], arr[:k1, 1]), label=f"joint {name}")
    a3.set_xlabel("crank angle from the start (deg)")
    a3.set_ylabel("reaction force |Qᵀλ| (N)")
    a3.set_title("joint reactions over one cycle")
    a3.legend(fontsize=8)
    for a in (a1, a2, a3):
        a.grid(True, alpha=0.3)
    fig.savefig(out[0], dpi=100)


@figure("seed001-solar-panel.png")
def seed001_solar_panel(out):
    """The two-leaf panel's deployment (seed 001 §3.2.1)."""
    from multibody.systems import solar_panels as sp
    from multibody.viz.solar_panels import plot_deployment

    plot_deployment(sp.deploy(t_end=12.0, n_out=1201), out[0])


@figure("seed001-triple-pendulum.png")
def seed001_triple_pendulum(out):
    """The triple pendulum of seed 001 §3.5 (Fig. 3.21): configurations every second and T, П, T + П over 10 s."""
    from multibody.systems import pendulums

    res = pendulums.simulate_triple_pendulum_seed001(t_end=10.0, n_out=1001)
    model = res.model
    fig = _figure(12, 5)
    a1, a2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.3]})
    for k, t in enumerate(range(0, 11)):
        i = int(np.argmin(np.abs(res.t - t)))
        pts = [np.zeros(3)] + [mb.point_position(model, res.q[i], f"rod{b}", (2.0, 0.0, 0.0)) for b in (1, 2, 3)]
        pts = np.array(pts)
        a1.plot(pts[:, 0], pts[:, 1], "-o", ms=3, color=matplotlib.colormaps["viridis"](k / 10),
                label=f"t = {t} s" if t in (0, 5, 10) else None)
    a1.set_xlim(-6, 6)
    a1.set_ylim(-6, 6)
    a1.set_aspect("equal")
    a1.set_xlabel("x")
    a1.set_ylabel("y")
    a1.set_title("configurations, t = 0, 1, …, 10 s")
    a1.legend(fontsize=8)
    e = res.energy
    a2.plot(res.t, e["kinetic"], label="T")
    a2.plot(res.t, e["potential"], label="П")
    a2.plot(res.t, e["total"], "k", label="T + П")
    a2.set_xlabel("t, s")
    a2.set_title(f"energies (Fig. 3.21); max |T + П| = {np.abs(e['total']).max():.1e}")
    a2.legend(fontsize=8)
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
    fig.savefig(out[0], dpi=100)


# ------------------------------------------------------------------------------------------------ seed 000
@figure("seed000-hoop-residuals.png")
def seed000_hoop_residuals(out):
    """The paper's integration (seed 000 Sec. 4): RK2, h = 1e-5, λ = 1e3, 3.4 time units from rest at
    x_a = −0.9, through two turning points."""
    from multibody.systems import hoop_on_profile as hoop
    from multibody.viz.hoop import plot_run

    model = hoop.hoop_model()
    q0, v0 = hoop.initial_state(model, -0.9, 0.0)
    res = mb.simulate(model, q0, v0, 3.4, formulation="stabilized", energy_constraint=True, lam=1e3, method="RK2",
                      h=1e-5, n_out=34001)
    plot_run(model, res, out[0], title="RK2, h = 1e-5, λ = 1e3 (seed 000, Sec. 4)")


@figure("seed000-fig4.png")
def seed000_fig4(out):
    """Seed 000, Fig. 4: λ = 0 against λ = 1e3 from a velocity error of 1e-3 along the normal."""
    from multibody.systems import hoop_on_profile as hoop
    from multibody.viz.hoop import plot_fig4

    model = hoop.hoop_model()
    runs, _ = hoop.fig4_runs(model)
    plot_fig4(model, runs, out[0])


# ------------------------------------------------------------------------------------------------ seed 003
@figure("seed003-eigenvalues.png")
def seed003_eigenvalues(out):
    """Seed 003, Fig. 3 from the closed form (lines) and from the generic model linearized by the library
    (dots)."""
    from multibody.systems import bicycle

    p = bicycle.benchmark_parameters()
    v = np.linspace(0.0, 10.0, 1001)
    sw = bicycle.eigenvalues(p, v)
    vg = np.linspace(0.0, 10.0, 41)
    gen = bicycle.model_eigenvalues(p, vg)
    cs = bicycle.critical_speeds(p)
    fig = _figure(8, 5.5)
    ax = fig.subplots()
    ax.axvspan(*cs.stable_interval, color="0.9", label="self-stable $v_w < v < v_c$")
    for j, (label, c) in enumerate((("weave", "C0"), (None, "C0"), ("capsize", "C1"), ("castor", "C2"))):
        ax.plot(v, sw.values[:, j].real, "-", color=c, lw=1.5, label=f"{label} (Re), closed form" if label else None)
        ax.plot(vg, gen.values[:, j].real, "o", color=c, ms=3.5, mfc="none")
    ax.plot(v, np.abs(sw.weave[:, 0].imag), "--", color="C0", lw=1.2, label="weave |Im|, closed form")
    ax.plot(vg, np.abs(gen.weave[:, 0].imag), "o", color="C0", ms=3.5, mfc="none")
    ax.plot([], [], "ko", mfc="none", ms=3.5, label="generic model, linearized")
    ax.axhline(0.0, color="k", lw=0.6)
    for name, val in (("$v_d$", cs.v_d), ("$v_w$", cs.weave), ("$v_c$", cs.capsize)):
        ax.axvline(val, color="0.4", lw=0.6, ls=":")
        ax.annotate(name, (val, 0.97), xycoords=("data", "axes fraction"), ha="center", va="top")
    err = np.abs(gen.values - bicycle.eigenvalues(p, vg).values).max()
    ax.set_title(f"Whipple bicycle: eigenvalues vs speed (seed 003, Fig. 3)\n"
                 f"generic model vs closed form: max difference {err:.1e}", fontsize=10)
    ax.set_xlim(0, 10)
    ax.set_ylim(-10, 10)
    ax.set_xlabel("speed v (m/s)")
    ax.set_ylabel("eigenvalue λ (1/s)")
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.savefig(out[0], dpi=100)


@figure("seed003-fig4.png")
def seed003_fig4(out):
    """Seed 003 §8, Fig. 4: the nonlinear generic bicycle from 4.6 m/s and a lean rate of 0.5 rad/s."""
    from multibody.systems import bicycle
    from multibody.viz.bicycle import plot_nonlinear

    res = bicycle.simulate_nonlinear(speed=4.6, roll_rate=0.5, t_end=5.0, n_out=501)
    plot_nonlinear(res, out[0], title="forward speed (seed 003, Fig. 4)")


@figure("seed003-iftomm.png")
def seed003_iftomm(out):
    """The IFToMM maneuvers M1–M3 over 20 s: lean angle and energy variation (E − E0)/E0."""
    from multibody.systems import bicycle

    fig = _figure(13, 4.5)
    a1, a2 = fig.subplots(1, 2)
    for k, (name, (speed, rate)) in enumerate(bicycle.IFTOMM_MANEUVERS.items()):
        res = bicycle.simulate_nonlinear(speed=speed, roll_rate=rate, t_end=20.0, rtol=1e-9, atol=1e-9, n_out=2001)
        E = res.energy_total
        var = 100 * np.ptp(E) / abs(E[0])
        a1.plot(res.t, res.series["lean"], color=f"C{k}", label=f"{name}: {speed:g} m/s, lean rate {rate:g} rad/s")
        a2.semilogy(res.t, np.maximum(np.abs(E - E[0]) / abs(E[0]), 1e-18), color=f"C{k}",
                    label=f"{name}: 100 (max E − min E)/E0 = {var:.1e} %")
    a1.set_xlabel("t (s)")
    a1.set_ylabel("lean φ (rad)")
    a1.set_title("IFToMM uncontrolled bicycle: lean")
    a2.axhline(1e-5, color="k", lw=0.8, ls=":", label="criterion 1e-3 %")
    a2.set_xlabel("t (s)")
    a2.set_ylabel("|E − E0| / E0")
    a2.set_title("energy (DOP853, rtol = atol = 1e-9)")
    for a in (a1, a2):
        a.legend(fontsize=8)
        a.grid(True, alpha=0.3)
    fig.savefig(out[0], dpi=100)


# ------------------------------------------------------------------------------------------------ the 3-D viewer
@figure("viewer.png")
def viewer(out):
    """The viewer's page of the Solo12 as the browser test sees it (tests/test_viewer.py, which copies its screenshot
    where MULTIBODY_DOCS_IMG says): needs Chromium and Playwright, as the test does."""
    import os
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, MULTIBODY_DOCS_IMG=tmp, PYTHONPATH=str(DOCS.parent / "src"))
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_viewer.py",
                        "-k", "browser and solo12"], check=True, env=env, cwd=DOCS.parent)
        shot = Path(tmp) / "viewer.png"
        if not shot.is_file():
            raise RuntimeError("the browser test took no screenshot (skipped: is Chromium or Playwright missing?)")
        shutil.copy(shot, out[0])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--list" in argv:
        for names in FIGURES:
            print(" ".join(names))
        return 0
    IMG.mkdir(exist_ok=True)
    chosen = [(names, fn) for names, fn in FIGURES.items() if not argv or any(n.startswith(a) for a in argv
                                                                            for n in names)]
    if not chosen:
        print(f"no figure starts with {' or '.join(argv)}; --list shows them", file=sys.stderr)
        return 2
    for names, fn in chosen:
        t0 = time.perf_counter()
        fn([IMG / n for n in names])
        print(f"{', '.join('img/' + n for n in names)}: {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
