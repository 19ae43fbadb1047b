"""Plots of results and systems (matplotlib, written to files; the Agg backend when there is no display), animations
of any model's motion (:func:`animate`, ``multibody.viz.animation``) and the 3-D viewer in the browser
(:func:`to_html`, :func:`show`, ``multibody.viz.viewer``)."""
from multibody.viz.animation import animate
from multibody.viz.viewer import show, to_html

__all__ = ["animate", "show", "to_html"]
