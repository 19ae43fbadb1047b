"""``multibody run FILE [--t-end T] [--method M] [--out DIR]``: simulate a model file and write the results.

``FILE`` is a model file (``.yaml``, ``.yml``, ``.json``; see ``multibody validate``) or a URDF robot (``.urdf``,
``--floating-base`` to set it free). The file's ``simulation:`` settings are used, each flag given on the
command line replacing the file's value; the initial state is the file's ``initial:`` (default: neutral, at
rest). Written into ``--out`` (default ``<file name>_run``): ``result.npz`` (exact, binary), ``result.csv`` (one
row per time), ``result.h5`` (when h5py is installed) and ``result.png`` (coordinates, energies, constraint
residuals against time). A file with problems is reported like ``multibody validate`` does, exit status 2.
"""
import math
import sys
from pathlib import Path

from multibody.errors import ModelError


def output_count(t_end, h, method, at_most=2001):
    """n_out for a fixed-step run: equally spaced outputs, (n_out − 1) dividing the number of steps, at most
    ``at_most`` of them."""
    from multibody.simulation import fixed_step_count

    nsteps, _ = fixed_step_count(0.0, t_end, h, method)
    every = max(1, -(-nsteps // (at_most - 1)))
    while nsteps % every:
        every += 1
    return nsteps // every + 1


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

    settings = mf.settings(t_end=t_end, method=method, h=h, rtol=rtol, atol=atol, formulation=formulation,
                           n_out=n_out)
    te = float(settings["t_end"])
    if not (math.isfinite(te) and te > 0):
        raise ModelError(f"t_end must be a positive time, got {te}", element="--t-end")
    m = str(settings.get("method", "DOP853")).upper()
    if settings.get("n_out") is None:
        if m in METHODS:
            if settings.get("h") is None:
                raise ModelError(f"the fixed-step method {m} needs the step h (--h, or simulation.h in the file)",
                                 element="--h")
            settings["n_out"] = output_count(te, settings["h"], m)
        else:
            settings["n_out"] = 1001
    return mf.simulate(**settings)


def write_outputs(result, out, title=None):
    """Write result.npz, result.csv, result.h5 (with h5py) and result.png into ``out``; returns the paths."""
    from multibody.io.results import have_h5py, save_result

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = [save_result(result, out / "result.npz"), save_result(result, out / "result.csv")]
    if have_h5py():
        files.append(save_result(result, out / "result.h5"))
    result.plot(path=out / "result.png", title=title)
    files.append(out / "result.png")
    return files


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
    res = simulate_file(mf, t_end=args.t_end, method=args.method, h=args.h, rtol=args.rtol, atol=args.atol,
                        formulation=args.formulation, n_out=args.n_out)
    out = Path(args.out) if args.out else Path(f"{Path(args.file).stem}_run")
    files = write_outputs(res, out, title=f"{mf.model.name}: {res.info.get('method')}")
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
