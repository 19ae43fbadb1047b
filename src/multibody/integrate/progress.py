"""The progress bar of long runs (tqdm), one rule for every integrator.

``progress=None`` (the default of ``simulate``): a bar appears once a run has lasted ``DELAY`` seconds, on a
terminal only (tqdm's ``disable=None``: off when the output is not a TTY, e.g. in a log file or under pytest), and
in the main thread of the main process only (not in the workers of a sweep, whose bars would garble one another),
so a short run prints nothing and a long one is never silent. ``progress=True``: a bar from the start, wherever the
output goes. ``progress=False``: never. The bar only shows the progress; no result depends on it.
"""

#: seconds a run lasts before its bar appears (progress=None)
DELAY = 2.0


def _main_thread_of_main_process():
    import multiprocessing
    import threading

    return (multiprocessing.current_process().name == "MainProcess"
            and threading.current_thread() is threading.main_thread())


def progress_bar(progress, total, desc, unit, initial=0, **kw):
    """A tqdm bar for ``progress`` (None, True or False, see the module docstring), or None when none is shown."""
    if progress is False or progress is None and (total <= initial or not _main_thread_of_main_process()):
        return None
    from tqdm.auto import tqdm

    opts = dict(disable=None, delay=DELAY) if progress is None else dict(disable=False)
    bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, **opts, **kw)
    if bar.disable:
        bar.close()
        return None
    return bar
