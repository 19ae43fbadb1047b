"""Parameter sweeps: run one function over a grid of parameters on local processes or a Dask cluster.

``sweep(fn, grid, scheduler=None, out=None, resume=False)`` (also ``multibody.sweep``) returns a
``pandas.DataFrame`` with one row per grid point; see :mod:`multibody.parallel.sweep` for the backends and
:mod:`multibody.parallel.table` for how the results are kept on disk while they finish.
:mod:`multibody.parallel.studies` holds ready point functions of the reference systems.
"""
from multibody.parallel.sweep import Grid, sweep

__all__ = ["sweep", "Grid"]
