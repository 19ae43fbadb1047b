"""Plots of any run: chosen coordinates of a :class:`multibody.Result` against time, its energies and its
constraint residuals, with the switches of a run across structure changes marked (``result.events``)."""
import numpy as np

from multibody.result import ENERGY_KEYS
from multibody.viz.figures import figure, save_figure
from multibody.viz.switches import mark_switches

__all__ = ["plot_result"]


#: where a residual that is exactly zero is drawn on the log axis (below the round-off of O(1) quantities, without
#: stretching the axis over hundreds of decades)
RESIDUAL_FLOOR = 1e-18


def plot_result(result, coords=None, energy=True, path=None, residuals=True, title=None):
    """Plot chosen coordinates of a :class:`multibody.Result` against time, and the energies (and residuals if
    any) below.

    ``coords``: list of q indices, names or ``"q[i]"``/``"v[i]"`` (default: every q, at most 12;
    ``Result.coordinate``).
    Uses matplotlib's Agg canvas (no display, no pyplot state). Writes a PNG if ``path`` is given.
    Returns the ``matplotlib.figure.Figure``.
    """
    if coords is None:
        coords = list(range(min(result.q.shape[1], 12)))
    series = [result.coordinate(c) for c in coords]
    panels = 1 if series else 0
    show_energy = bool(energy) and bool(result.energy)
    show_res = bool(residuals) and bool(result.residuals)
    panels += show_energy + show_res
    panels = max(panels, 1)
    fig = figure((8, 2.8 * panels), constrained_layout=True)
    axes = fig.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    k = 0
    if series:
        ax = axes[k]
        for label, s in series:
            ax.plot(result.t, s, label=label)
        ax.set_ylabel("coordinates")
        ax.legend(loc="best", fontsize="small", ncol=min(4, len(series)))
        ax.grid(True, alpha=0.3)
        k += 1
    if show_energy:
        ax = axes[k]
        labels = {"kinetic": "T", "potential": "V", "total": "T + V", "dissipated": "dissipated"}
        for key in ENERGY_KEYS:
            if key in result.energy:
                ax.plot(result.t, result.energy[key], label=labels[key])
        ax.set_ylabel("energy")
        ax.legend(loc="best", fontsize="small")
        ax.grid(True, alpha=0.3)
        k += 1
    if show_res:
        ax = axes[k]
        for name, r in result.residuals.items():
            rr = np.abs(r.reshape(len(result), -1))
            ax.semilogy(result.t, np.maximum(rr.max(axis=1), RESIDUAL_FLOOR), label=name)
        ax.set_ylabel(f"|residual| (0 at {RESIDUAL_FLOOR:g})")
        ax.legend(loc="best", fontsize="small")
        ax.grid(True, alpha=0.3)
    if result.events:  # the switches of a run with limits, latches or releases: a line at each instant
        kinds = mark_switches(axes, result.events, label=True)
        axes[0].legend(loc="best", fontsize="small", ncol=min(4, len(series) + len(kinds)))
    axes[-1].set_xlabel("t, s")
    if title is None:
        title = result.info.get("title") or result.info.get("model")
    if title:
        fig.suptitle(str(title))
    if path is not None:
        save_figure(fig, path, 100, "plot_result")
    return fig
