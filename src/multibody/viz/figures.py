"""How the plots of multibody make their figures, with no display needed.

:func:`figure` gives a ``matplotlib.figure.Figure`` on its own Agg canvas, outside pyplot's state (nothing to
close, safe in threads and libraries); :func:`pyplot` gives ``matplotlib.pyplot`` on the Agg backend, for the
plots written with pyplot's calls (``plt.subplots``; close the figure after saving it).
"""

__all__ = ["figure", "pyplot"]


def figure(figsize, **options):
    """A ``Figure(figsize=figsize, **options)`` with an Agg canvas (write it with ``fig.savefig``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, **options)
    FigureCanvasAgg(fig)
    return fig


def pyplot():
    """``matplotlib.pyplot`` with the Agg backend selected (left as it is when a backend is already in use and
    cannot be switched)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt
