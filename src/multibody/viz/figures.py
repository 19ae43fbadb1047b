"""How the plots of multibody make their figures, with no display needed.

:func:`figure` gives a ``matplotlib.figure.Figure`` on its own Agg canvas, outside pyplot's state (nothing to
close, safe in threads and libraries); :func:`pyplot` gives ``matplotlib.pyplot`` on the Agg backend, for the
plots written with pyplot's calls (``plt.subplots``; close the figure after saving it); :func:`save_figure` writes a
figure to a file in the format of its suffix, the place checked first and the file written whole or not at all.
"""
from multibody.errors import ModelError
from multibody.files import atomic_write, writable_file

__all__ = ["figure", "pyplot", "save_figure"]


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


def save_figure(fig, path, dpi, what="figure"):
    """Write ``fig`` to ``path`` in the format of its suffix (``.png``, ``.pdf``, ``.svg``, ...; none: ``.png`` is
    added, as matplotlib does) and return the path written: a folder, a folder that cannot be made or a write that
    fails is a ``ResultFileError`` naming ``what`` and the file (``multibody.files``), an unknown format a
    ``ModelError`` naming the formats."""
    path = writable_file(path, what)
    if not path.suffix:
        path = writable_file(path.with_name(path.name + ".png"), what)
    fmt = path.suffix[1:].lower()
    formats = fig.canvas.get_supported_filetypes()
    if fmt not in formats:
        raise ModelError(f"{what} '{path}': its suffix must name an image format ({', '.join('.' + f for f in formats)})",
                         element=str(path))
    atomic_write(path, lambda fh: fig.savefig(fh, format=fmt, dpi=dpi), what)
    return path
