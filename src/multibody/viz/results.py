"""Plots of any run: chosen coordinates of a :class:`multibody.Result` against time, its energies and its
constraint residuals, with the switches of a run across structure changes marked (``result.events``)."""
import numpy as np

from multibody.result import ENERGY_KEYS
from multibody.viz.figures import figure, save_figure
from multibody.viz.switches import mark_switches

__all__ = ["plot_result", "coordinate_unit"]


#: where a residual that is exactly zero is drawn on the log axis (below the round-off of O(1) quantities, without
#: stretching the axis over hundreds of decades)
RESIDUAL_FLOOR = 1e-18


#: the unit of a coordinate by the last part of its name (``joint.angle``, ``joint.x``, ``joint.qw``, ...)
UNITS = {"angle": "rad", "angle1": "rad", "angle2": "rad", "displacement": "m", "x": "m", "y": "m", "z": "m",
         "qw": "1", "qx": "1", "qy": "1", "qz": "1", "wx": "rad/s", "wy": "rad/s", "wz": "rad/s", "vx": "m/s",
         "vy": "m/s", "vz": "m/s"}
#: the points the dense output of an adaptive run is drawn at
DENSE_POINTS = 2000


def coordinate_unit(result, label):
    """The unit of the coordinate ``label`` of ``result`` (``Result.coordinate``'s label): by its name's last
    part (:data:`UNITS`), per second for a velocity; "" when not known (a general joint's, an index)."""
    velocity = label not in result.q_names and (label in result.v_names or label.startswith("v["))
    unit = UNITS.get(label.rsplit(".", 1)[-1], "")
    if velocity and unit and "/s" not in unit:
        unit = "1/s" if unit == "1" else f"{unit}/s"
    return unit


def _legend(ax, ncol=1):
    """A legend beside the axes (never over the curves)."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", ncol=ncol, borderaxespad=0.0)


def plot_result(result, coords=None, energy=True, path=None, residuals=True, title=None):
    """Plot chosen coordinates of a :class:`multibody.Result` against time, and the energies (and residuals if
    any) below.

    ``coords``: list of q indices, names or ``"q[i]"``/``"v[i]"`` (default: every q, at most 12;
    ``Result.coordinate``). Each curve is labelled with its unit, each axis with the units it shows; the legends
    stand beside the axes, so that no curve is hidden. An adaptive run whose outputs are its few accepted steps is
    drawn from the integrator's dense output between them (``Result.dense``), the steps marked.
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
    fig = figure((9, 2.8 * panels), constrained_layout=True)
    axes = fig.subplots(panels, 1, sharex=True, squeeze=False)[:, 0]
    dense = getattr(result, "dense", None)
    sample = dense(np.linspace(result.t[0], result.t[-1], DENSE_POINTS)) if dense is not None and len(result) > 1 \
        else None
    k = 0
    if series:
        ax = axes[k]
        units = []
        for c, (label, s) in zip(coords, series):
            unit = coordinate_unit(result, label)
            units += [unit] if unit and unit not in units else []
            text = f"{label} ({unit})" if unit else label
            if sample is not None:       # the dense output, the steps marked
                line, = ax.plot(sample.t, sample.coordinate(c)[1], label=text)
                ax.plot(result.t, s, ".", color=line.get_color(), ms=3)
            else:
                ax.plot(result.t, s, label=text)
        ax.set_ylabel("coordinates" + (f" ({', '.join(units)})" if units else ""))
        _legend(ax, ncol=1 if len(series) <= 12 else 2)
        ax.grid(True, alpha=0.3)
        k += 1
    if show_energy:
        ax = axes[k]
        labels = {"kinetic": "T", "potential": "V", "total": "T + V", "dissipated": "dissipated"}
        drawn = sample if sample is not None and sample.energy else result
        for key in ENERGY_KEYS:
            if key in drawn.energy:
                ax.plot(drawn.t, drawn.energy[key], label=labels[key])
        ax.set_ylabel("energy (J)")
        _legend(ax)
        ax.grid(True, alpha=0.3)
        k += 1
    if show_res:
        ax = axes[k]
        for name, r in result.residuals.items():
            rr = np.abs(r.reshape(len(result), -1))
            ax.semilogy(result.t, np.maximum(rr.max(axis=1), RESIDUAL_FLOOR), label=name)
        ax.set_ylabel(f"|residual| (m, rad, m/s, rad/s; 0 at {RESIDUAL_FLOOR:g})")
        _legend(ax)
        ax.grid(True, alpha=0.3)
    if result.events:  # the switches of a run with limits, latches or releases: a line at each instant
        mark_switches(axes, result.events, label=True)
        _legend(axes[0], ncol=1 if len(axes[0].get_legend_handles_labels()[0]) <= 12 else 2)
    axes[-1].set_xlabel("t (s)")
    if title is None:
        title = result.info.get("title") or result.info.get("model")
    if title:
        fig.suptitle(str(title))
    if path is not None:
        save_figure(fig, path, 100, "plot_result")
    return fig
