"""Plots of results and systems (matplotlib, written to files; the Agg backend when there is no display), animations
of any model's motion (:func:`animate`, ``multibody.viz.animation``) and the 3-D viewer in the browser
(:func:`to_html`, :func:`show`, ``multibody.viz.viewer``). Every plot of the package is here: :func:`plot_result`
for any run, one module per system for its own figures (``viz.bicycle``, ``viz.hoop``, ``viz.slider_crank``, ...);
``viz.figures`` makes their figures."""
from multibody.viz.animation import animate
from multibody.viz.results import plot_result
from multibody.viz.viewer import show, to_html

__all__ = ["animate", "plot_result", "show", "to_html"]
