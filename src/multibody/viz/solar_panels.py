"""Plots of the two-leaf solar panel (seed 001 §3.2.1): a deployment's angles, hinge torques and energy budget."""

import numpy as np

from multibody.systems import solar_panels
from multibody.viz.figures import figure, save_figure


def plot_deployment(result, path, params=None, title=None):
    """Plot a deployment (a ``Result`` of ``solar_panels.deploy``) to a PNG file: the book's absolute angles φ1, φ2
    (degrees, seed 001 §3.2.1) against time, the hinge torques (preloaded springs and latches, N·m), and the
    energy budget (kinetic, springs + latch, dissipated), with the instants the exact latches lock marked. Uses the Agg canvas (no display). Returns the path."""
    p = solar_panels.result_parameters(result, params)
    t, q, v = result.t, result.q, result.v
    phi = np.degrees(solar_panels.absolute_angles(q))
    tq = solar_panels.hinge_torques(p, q, v)
    e = solar_panels.energy_budget(p, q, v, t)
    fig = figure((8.0, 9.0), constrained_layout=True)
    ax1, ax2, ax3 = fig.subplots(3, 1, sharex=True)
    dep = np.degrees(solar_panels.absolute_angles(np.array(p.deployed)))
    for k, colour in enumerate(("tab:blue", "tab:orange")):
        ax1.plot(t, phi[:, k], color=colour, label=f"φ{k + 1} (leaf {k + 1})")
        ax1.axhline(dep[k], color=colour, lw=0.8, ls=":")
    ax1.set_ylabel("absolute angle φ [deg]")
    ax1.set_title(title or "Two-leaf solar panel deployment (seed 001 §3.2.1)")
    ax1.legend(loc="best")
    ax1.grid(True, alpha=0.3)
    for k, colour in enumerate(("tab:blue", "tab:orange")):
        ax2.plot(t, tq["spring"][:, k], color=colour, label=f"spring, hinge {k + 1}")
        if np.any(tq["latch"][:, k]):
            ax2.plot(t, tq["latch"][:, k], color=colour, ls="--", lw=0.8, label=f"latch, hinge {k + 1}")
    ax2.set_ylabel("hinge torque [N·m]")
    ax2.legend(loc="best", fontsize="small")
    ax2.grid(True, alpha=0.3)
    ax3.plot(t, e["kinetic"], label="kinetic")
    ax3.plot(t, e["spring"] + e["latch"], label="springs + latch")
    ax3.plot(t, e["dissipated"], label="dissipated (dampers + latch)")
    ax3.plot(t, e["total"] + e["dissipated"], color="k", lw=0.8, ls="--", label="total + dissipated")
    ax3.set_ylabel("energy [J]")
    ax3.set_xlabel("t [s]")
    ax3.legend(loc="best", fontsize="small")
    ax3.grid(True, alpha=0.3)
    for ev in getattr(result, "events", ()):   # the instants the exact latches lock
        for ax in (ax1, ax2, ax3):
            ax.axvline(ev["t"], color="k", lw=0.8, ls=":")
        ax1.annotate(f"{ev['element']} locks", (ev["t"], 0.98), xycoords=("data", "axes fraction"), rotation=90,
                     va="top", ha="right", fontsize="x-small")
    return save_figure(fig, path, 110, "solar panel plot")
