"""Plots of results and systems (matplotlib, written to files; the Agg backend when there is no display)."""
