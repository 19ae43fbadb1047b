"""Plots of the slider-crank mechanism (seed 001 §2.6.2): the joint reactions over a crank cycle."""
import math

import numpy as np

from multibody.systems import slider_crank
from multibody.viz.figures import pyplot, save_figure


def plot_reactions(result, path=None, one_cycle=True):
    """Plot the joint reaction forces over a crank cycle (``slider_crank.reactions_over_cycle``; matplotlib); returns
    the figure."""
    plt = pyplot()
    phi = slider_crank.crank_angle(result)
    R = slider_crank.reactions_over_cycle(result)
    sel = slice(None)
    if one_cycle:
        k1 = np.searchsorted(phi, phi[0] + 2 * math.pi)
        sel = slice(0, max(k1, 2))
    fig, axes = plt.subplots(2, 2, figsize=(10, 7), sharex=True)
    for ax, (name, arr) in zip(axes.ravel(), R.items()):
        ax.plot(np.degrees(phi[sel]), arr[sel, 0], label="F_x")
        ax.plot(np.degrees(phi[sel]), arr[sel, 1], label="F_y")
        ax.set_title(f"joint {name}: reaction on its child body (N)")
        ax.grid(True)
        ax.legend()
    for ax in axes[1]:
        ax.set_xlabel("crank angle (deg)")
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, 100, "slider-crank plot")
    return fig
