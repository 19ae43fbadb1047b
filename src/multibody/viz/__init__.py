"""Plots of results and systems (matplotlib, written to files; the Agg backend when there is no display), and
animations of any model's motion (:func:`animate`, ``multibody.viz.animation``)."""
from multibody.viz.animation import animate

__all__ = ["animate"]
