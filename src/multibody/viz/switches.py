"""Plots of a run across switches (joint limits, latches, releases; ``result.events``): the instants of the
impacts, contacts, separations, locks and releases marked on the time axes."""

import numpy as np

from multibody.viz.figures import figure, save_figure

__all__ = ["SWITCH_COLORS", "mark_switches", "plot_switches"]

#: the colour of each kind of switch
SWITCH_COLORS = {"impact": "tab:red", "contact": "tab:purple", "separate": "tab:green", "lock": "black",
                 "release": "tab:orange"}


def mark_switches(axes, events, label=True):
    """A dotted vertical line at the instant of every switch of ``events`` (``result.events``) on each of
    ``axes``, coloured by kind; with ``label`` the first axes gets a legend entry per kind and the locks and
    releases are annotated with their joint. Returns the kinds drawn."""
    axes = list(np.atleast_1d(axes))
    kinds = []
    for ax in axes:
        for e in events:
            kind = e.get("kind")
            first = label and ax is axes[0] and kind not in kinds
            ax.axvline(e["t"], color=SWITCH_COLORS.get(kind, "gray"), lw=0.8, ls=":", alpha=0.9,
                       label=kind if first else None)
            if first:
                kinds.append(kind)
            if label and ax is axes[0] and kind in ("lock", "release"):
                ax.annotate(f"{kind} {e.get('element')}", (e["t"], 1.0), xycoords=("data", "axes fraction"),
                            rotation=90, va="top", ha="right", fontsize="x-small")
    return kinds


def plot_switches(result, path=None, coords=None, degrees=False, title=None):
    """The coordinates ``coords`` (names or indices of q; default every q, at most 8), their velocities and the
    energies of ``result`` against time, with every switch marked (:func:`mark_switches`); ``degrees`` shows
    angles in degrees. Writes a PNG when ``path`` is given (Agg canvas, no display). Returns the figure, or the
    path when one was given."""
    if coords is None:
        coords = list(range(min(result.q.shape[1], 8)))
    idx = [c if isinstance(c, (int, np.integer)) else result.q_names.index(c) for c in coords]
    scale = 180.0 / np.pi if degrees else 1.0
    panels = 3 if result.energy else 2
    fig = figure((8.0, 2.6 * panels + 0.6), constrained_layout=True)
    axes = fig.subplots(panels, 1, sharex=True)
    for i in idx:
        axes[0].plot(result.t, scale * result.q[:, i], label=result.q_names[i])
        vi = result.v_names.index(result.q_names[i]) if result.q_names[i] in result.v_names else None
        if vi is not None:
            axes[1].plot(result.t, scale * result.v[:, vi], label=result.v_names[vi])
    axes[0].set_ylabel("q [deg]" if degrees else "q")
    axes[1].set_ylabel("v [deg/s]" if degrees else "v")
    if result.energy:
        for key in ("kinetic", "potential", "total"):
            if key in result.energy:
                axes[2].plot(result.t, result.energy[key], label=key)
        axes[2].set_ylabel("energy [J]")
    kinds = mark_switches(axes, result.events)
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small", ncol=2 if ax is not axes[0] else 2 + (len(kinds) > 2))
    axes[-1].set_xlabel("t [s]")
    fig.suptitle(title or result.info.get("model", ""))
    if path is None:
        return fig
    return save_figure(fig, path, 100, "switches plot")
