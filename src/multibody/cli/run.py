"""``multibody run FILE [--t-end T] [--method M] [--out DIR]``: simulate a model file and write the results.

``FILE`` is a model file (``.yaml``, ``.yml``, ``.json``; see ``multibody validate``) or a URDF robot (``.urdf``,
``--floating-base`` to set it free). The file's ``simulation:`` settings are used, each flag given on the
command line replacing the file's value; the initial state is the file's ``initial:`` (default: neutral, at
rest). Written into ``--out`` (default ``<file name>_run``): ``result.npz`` (exact, binary), ``result.csv`` (one
row per time), ``result.h5`` (when h5py is installed) and ``result.png`` (coordinates, energies, constraint
residuals against time). A file with problems is reported like ``multibody validate`` does, exit status 2.
The output folder is made and checked before the run (a place that cannot be written fails at once); a run that
fails writes its partial result there; a result that cannot be written at the end is kept in a new folder of
the system's temporary folder, and the message says where.
"""
import math
import sys
from pathlib import Path

from multibody.errors import IntegrationError, ModelError, ResultFileError


def output_every(t_end, h, method, at_most=2001):
    """output_every for a fixed-step run: every k-th step (and the last), at most ``at_most`` outputs."""
    from multibody.simulation import fixed_step_count

    nsteps, _ = fixed_step_count(0.0, t_end, h, method)
    return max(1, -(-nsteps // (at_most - 1)))


def load_for_run(path, floating_base=False, strict=False):
    """The ModelFile of ``path`` (a URDF gets the neutral state and no settings); ``strict``: refuse every inertia
    that no body has (``multibody.model.inertia``)."""
    import numpy as np

    from multibody.io import load, load_urdf
    from multibody.io.model_files import ModelFile

    if Path(path).suffix.lower() == ".urdf":
        model = load_urdf(path, floating_base=floating_base, strict=strict)
        return ModelFile(model, model.neutral(), np.zeros(model.nv), {}, str(path))
    return load(path, strict=strict)


def simulate_file(mf, t_end=None, method=None, h=None, rtol=None, atol=None, formulation=None, n_out=None):
    """Run the ModelFile ``mf`` with its settings, the arguments that are not None replacing them."""
    from multibody.integrate.fixed_step import METHODS
    from multibody.simulation import simulate

    settings = mf.settings(t_end=t_end, method=method, h=h, rtol=rtol, atol=atol, formulation=formulation,
                           n_out=n_out)
    te = float(settings["t_end"])
    if not (math.isfinite(te) and te > 0):
        raise ModelError(f"t_end must be a positive time, got {te}", element="--t-end")
    m = str(settings.get("method", "DOP853")).upper()
    if settings.get("n_out") is None and settings.get("output_every") is None and settings.get("t_eval") is None:
        if m in METHODS:
            if settings.get("h") is None:
                raise ModelError(f"the fixed-step method {m} needs the step h (--h, or simulation.h in the file)",
                                 element="--h")
            settings["output_every"] = output_every(te, settings["h"], m)
        else:
            settings["n_out"] = 1001
    return simulate(mf.model, mf.q0, mf.v0, **mf.settings(**settings))


def output_files(out):
    """The files ``multibody run`` writes into the folder ``out``."""
    from multibody.io.results import have_h5py

    names = ["result.npz", "result.csv"] + (["result.h5"] if have_h5py() else []) + ["result.png"]
    return [Path(out) / name for name in names]


def prepare_outputs(out):
    """Make the folder ``out`` (with its parents) and check that every output file can be written there, before
    anything is computed; a ``ResultFileError`` naming ``--out`` otherwise. Returns the folders it made (to be
    removed again if nothing is written)."""
    from multibody.files import check_writable

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ResultFileError(f"--out '{out}' is a file, not a folder", path=out, element="--out")
    made = [p for p in [out, *out.parents] if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultFileError(f"--out '{out}': the folder cannot be made: {exc.strerror or exc}", path=out,
                              element="--out") from None
    try:
        for f in output_files(out):
            check_writable(f, "--out: result file")
    except ResultFileError:
        remove_empty(made)
        raise
    return made


def remove_empty(folders):
    """Remove the folders of ``folders`` (innermost first) that are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass


def write_outputs(result, out, title=None):
    """Write result.npz, result.csv, result.h5 (with h5py) and result.png into ``out``; returns the paths. Each
    file is replaced atomically; a file that cannot be written is a ``ResultFileError`` naming it."""
    from multibody.io.results import save_result
    from multibody.viz import plot_result

    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultFileError(f"--out '{out}': the folder cannot be made: {exc.strerror or exc}", path=out,
                              element="--out") from None
    files = []
    for path in output_files(out):
        if path.suffix == ".png":
            plot_result(result, path=path, title=title)
        else:
            save_result(result, path)
        files.append(path)
    return files


def keep_elsewhere(result, out, exc):
    """Write ``result`` to a new folder of the system's temporary folder after writing into ``out`` failed
    (``exc``); print where it is kept (or that it could not be kept) to stderr."""
    import tempfile

    try:
        kept = Path(tempfile.mkdtemp(prefix="multibody-run-")) / "result.npz"
        result.save(kept)
    except (OSError, ModelError) as again:
        print(f"multibody run: error: {exc}; keeping the result elsewhere failed too: {again}", file=sys.stderr)
        return
    print(f"multibody run: error: {exc}; the result is kept in {kept}", file=sys.stderr)


def report_problems(exc, stream=None):
    """Print a ModelFileError's problems one per line (``FILE:LINE: PATH: MESSAGE``)."""
    print(exc.report(), file=stream or sys.stderr)


def run(args):
    from multibody.io.documents import ModelFileError

    try:
        mf = load_for_run(args.file, args.floating_base, getattr(args, "strict", False))
    except ModelFileError as exc:
        report_problems(exc)
        return 2
    out = Path(args.out) if args.out else Path(f"{Path(args.file).stem}_run")
    made = prepare_outputs(out)       # before the run: a place that cannot be written fails now, not after it
    try:
        res = simulate_file(mf, t_end=args.t_end, method=args.method, h=args.h, rtol=args.rtol, atol=args.atol,
                            formulation=args.formulation, n_out=args.n_out)
    except IntegrationError as exc:   # the partial result up to the failure is written, and said so
        if exc.result is None:
            remove_empty(made)
            raise
        title = f"{mf.model.name}: {exc.result.info.get('method')} (failed at t = {exc.result.t[-1]:g})"
        try:
            files = write_outputs(exc.result, out, title=title)
        except ResultFileError as again:
            keep_elsewhere(exc.result, out, again)
            raise exc from None
        print(f"multibody run: error: {exc}", file=sys.stderr)
        print(f"  the partial result up to t = {exc.result.t[-1]:g} s is in {files[0]} (and {out}/result.*)",
              file=sys.stderr)
        return 2
    except BaseException:
        remove_empty(made)
        raise
    try:
        files = write_outputs(res, out, title=f"{mf.model.name}: {res.info.get('method')}")
    except ResultFileError as exc:
        keep_elsewhere(res, out, exc)
        return 2
    info = res.info
    print(f"model '{mf.model.name}': {mf.model.nbodies} bodies, nq = {mf.model.nq}, nv = {mf.model.nv}")
    print(f"  {info.get('formulation', mf.simulation.get('formulation', 'tree'))} formulation, {info.get('method')}, "
          f"t = {res.t[0]:g} .. {res.t[-1]:g} s, {info.get('steps')} steps, {info.get('cpu_seconds', 0):.2f} s CPU, "
          f"{info.get('status')}")
    if res.energy:
        print(f"  largest change of T + V (relative; 0 for a conservative system): {res.energy_drift():.3e}")
    if res.residuals:
        worst = max(float(abs(v).max()) for v in res.residuals.values())
        print(f"  largest constraint residual: {worst:.3e}")
    for f in files:
        print(f"  wrote {f}")
    return 0


def cli_register(subparsers):
    p = subparsers.add_parser("run", help="simulate a model file (YAML, JSON) or a URDF robot and write the results",
                              description=__doc__.split("\n\n")[1].replace("``", ""))
    p.add_argument("file", help="model file (.yaml, .yml, .json) or URDF (.urdf)")
    p.add_argument("--t-end", type=float, default=None, help="end time (replaces simulation.t_end)")
    p.add_argument("--method", default=None, help="DOP853, RK45, Radau, BDF, ... or fixed step RK4, RK2, HEUN, VERLET")
    p.add_argument("--h", type=float, default=None, help="fixed step")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance (adaptive methods)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance (adaptive methods)")
    p.add_argument("--formulation", default=None, help="tree, constrained, cartesian, stabilized, poisson")
    p.add_argument("--n-out", type=int, default=None, help="number of output times")
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (default: <file name>_run)")
    p.add_argument("--floating-base", action="store_true", help="URDF: put the root link on a free joint")
    p.add_argument("--strict", action="store_true", help="refuse every inertia that no body has (a URDF's are kept "
                                                         "with a warning otherwise)")
    p.set_defaults(func=run)
