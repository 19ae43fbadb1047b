"""Plots of pendulum runs: Kapitza's inverted pendulum on a shaken support (a moving base, seed 001 §3.1–3.2)."""
import numpy as np

from multibody.viz.figures import pyplot, save_figure


def plot_kapitza(shaken, still, path, title=None):
    """The hinge angle θ(t) of Kapitza's pendulum (``systems.pendulums.kapitza_pendulum``; θ = 0 upright) for a
    run with the support shaken (``shaken``, a Result) and one without (``still``), in degrees, with the upright
    position and the horizontal (|θ| = 90°) marked; written to ``path`` (PNG). Returns ``path``."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.5))
    ax.plot(shaken.t, np.degrees(shaken.q[:, 0]), "b-", lw=0.8, label="support shaken: stays upright")
    ax.plot(still.t, np.degrees(still.q[:, 0]), "r--", lw=1.2, label="support still: falls")
    ax.axhline(0.0, color="k", lw=0.6)
    for s in (-90.0, 90.0):
        ax.axhline(s, color="0.6", lw=0.6, ls=":")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("θ [deg] (0 = upright)")
    ax.set_title(title or "Kapitza's pendulum: inverted pendulum on a vertically shaken support")
    ax.legend(loc="best")
    fig.tight_layout()
    try:
        return save_figure(fig, path, 110, "pendulum plot")
    finally:
        plt.close(fig)
