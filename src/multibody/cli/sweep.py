"""``multibody sweep TARGET --grid NAME=SPEC ... --out TABLE [--scheduler ADDR] [--resume]``: run a function over the
Cartesian product of parameter grids, on local processes or a Dask cluster, into a Parquet or CSV table.

Examples::

    multibody sweep multibody.parallel.studies:bicycle_stability --grid c=-0.1:0.3:100 --grid lam=-0.3:1.7:100 \\
        --out stability.parquet
    multibody sweep multibody.parallel.studies:bicycle_stability --grid c=-0.1:0.3:100 --grid lam=-0.3:1.7:100 \\
        --out stability.parquet --scheduler tcp://10.0.0.5:8786 --resume
    multibody sweep mypackage.study:point --grid "method=rk2,rk4" --grid h=1e-3,1e-4 --out study.csv

A grid SPEC is ``a:b:n`` (n values from a to b, ends included), a comma-separated list of values (numbers or
words), or one value (a fixed parameter). TARGET is ``module:function`` or ``file.py:function`` (as for
``multibody animate --model``); the function takes the grid's names as keyword arguments and returns a dict
of numbers (:func:`multibody.sweep`). The current folder is importable, as with ``python -m``.
"""
import json
import math
import os
import sys

from multibody.errors import ModelError, MultibodyError, SweepError, shown

#: file suffix -> function(path) returning a picklable point function. Model files plug in here: such a
#: resolver returns e.g. ``functools.partial(module_level_function, path)``.
FILE_TARGETS = {}


def resolve_target(target):
    """The point function named by TARGET: ``MODULE:FUNCTION``, ``FILE.py:FUNCTION`` (:mod:`multibody.cli.targets`,
    the loader ``animate --model`` uses too), or a file whose suffix is in ``FILE_TARGETS``."""
    from multibody.cli.targets import load_function

    if not isinstance(target, str) or not target.strip():
        raise ModelError("TARGET must be MODULE:FUNCTION or FILE.py:FUNCTION", element="TARGET")
    target = target.strip()
    suffix = os.path.splitext(target)[1].lower()
    if suffix in FILE_TARGETS:
        if not os.path.isfile(target):
            raise ModelError(f"TARGET file '{target}' does not exist", element="TARGET")
        return FILE_TARGETS[suffix](target)
    if ":" not in target and (os.path.exists(target) or os.sep in target):
        kinds = ", ".join(sorted(FILE_TARGETS)) or "none yet"
        raise ModelError(f"TARGET '{target}' is a file; expected MODULE:FUNCTION or FILE.py:FUNCTION (other file "
                         f"targets supported: {kinds})", element="TARGET")
    return load_function(target, "TARGET")


def _value(text):
    """A number when ``text`` reads as one (int before float), else the stripped word; ValueError when it is
    empty or a number that is not finite (inf, nan)."""
    text = text.strip()
    if not text:
        raise ValueError("empty value")
    for kind in (int, float):
        try:
            v = kind(text)
        except ValueError:
            continue
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"{text} is not a finite number")
        return v
    return text


def parse_grid(specs):
    """``["name=a:b:n", "name=v1,v2", "name=v"]`` -> ``{name: values}`` (a:b:n as ``numpy.linspace``)."""
    import numpy as np

    from multibody.parallel.sweep import MAX_POINTS

    grid = {}
    for spec in specs or ():
        name, eq, body = spec.partition("=")
        name = name.strip()
        where = f"--grid {shown(spec)!r}"
        if not eq or not name.isidentifier():
            raise ModelError(f"{where}: expected NAME=a:b:n, NAME=v1,v2,... or NAME=v with NAME a Python identifier",
                             element="--grid")
        if name in grid:
            raise ModelError(f"{where}: parameter '{name}' is given twice; expected each name once", element="--grid")
        body = body.strip()
        if body.count(":") == 2:
            a, b, n = body.split(":")
            try:
                a, b = float(a), float(b)
                n = int(n)
            except ValueError:
                raise ModelError(f"{where}: expected a:b:n with numbers a, b and an integer n", element="--grid") \
                    from None
            if not (math.isfinite(a) and math.isfinite(b)) or n < 1 or (n == 1 and a != b):
                raise ModelError(f"{where}: expected finite a, b and n >= 1 (n = 1 only when a = b)",
                                 element="--grid")
            if n > MAX_POINTS:
                raise ModelError(f"{where}: n = {n} values; at most {MAX_POINTS} points fit in one sweep",
                                 element="--grid")
            grid[name] = np.linspace(a, b, n)
        elif ":" in body:
            raise ModelError(f"{where}: expected a:b:n (three fields)", element="--grid")
        else:
            try:
                values = [_value(v) for v in body.split(",")]
            except ValueError as exc:
                raise ModelError(f"{where}: {exc}; expected NAME=v1,v2,... with finite numbers or words",
                                 element="--grid") from None
            if len({type(v) is str for v in values}) > 1:
                raise ModelError(f"{where}: mixes numbers and words; expected one kind", element="--grid")
            grid[name] = values
    if not grid:
        raise ModelError("expected at least one --grid NAME=SPEC", element="--grid")
    size = math.prod(len(v) for v in grid.values())
    if size > MAX_POINTS:
        raise ModelError(f"the grid has {' x '.join(str(len(v)) for v in grid.values())} = {size} points; at most "
                         f"{MAX_POINTS} fit in one sweep (split it into several)", element="--grid")
    return grid


def run(args):
    if args.out is None:
        raise ModelError("--out TABLE is required (.parquet or .csv)", element="--out")
    if os.path.splitext(args.out)[1].lower() not in (".parquet", ".pq", ".csv"):
        raise ModelError(f"--out '{args.out}': expected a .parquet or .csv file", element="--out")
    if args.workers is not None and args.workers < 1:
        raise ModelError(f"--workers must be a positive integer, got {args.workers}", element="--workers")
    if args.workers is not None and args.scheduler not in (None, "processes"):
        raise ModelError("--workers sets the number of local processes; a --scheduler cluster has its own workers",
                         element="--workers")
    if args.chunk_size is not None and args.chunk_size < 1:
        raise ModelError(f"--chunk-size must be a positive integer, got {args.chunk_size}", element="--chunk-size")
    if args.timeout is not None and not (math.isfinite(args.timeout) and args.timeout > 0):
        raise ModelError(f"--timeout must be a positive number of seconds, got {args.timeout}", element="--timeout")
    if args.resume and not os.path.exists(args.out) and not os.path.isdir(args.out + ".parts"):
        raise ModelError(f"--resume: there is no table '{args.out}' to resume", element="--resume")
    grid = parse_grid(args.grid)
    fn = resolve_target(args.target)

    from multibody.parallel import sweep

    size = math.prod(len(v) for v in grid.values())
    try:
        df = sweep(fn, grid, scheduler=args.scheduler, out=args.out, resume=args.resume, on_error=args.on_error,
                   workers=args.workers, chunk_size=args.chunk_size, timeout=args.timeout,
                   progress=not args.no_progress and not args.json)
    except KeyboardInterrupt:
        print(f"multibody sweep: interrupted; the finished points are in {args.out} (--resume continues)",
              file=sys.stderr)
        return 130
    except Exception as exc:   # --on-error raise: the point's own exception, as one line naming the point
        notes = "; ".join(getattr(exc, "__notes__", ()))
        if isinstance(exc, MultibodyError) and not notes:
            raise
        name = "" if isinstance(exc, MultibodyError) else f"{type(exc).__name__}: "
        raise SweepError(f"{name}{exc}" + (f" ({notes})" if notes else "")) from None
    new, seconds = df.attrs["computed"], df.attrs["seconds"]
    summary = {"target": args.target, "points": size, "rows": int(len(df)), "computed": new,
               "errors": int(df["error"].notna().sum()), "seconds": seconds,
               "points_per_second": (new / seconds) if new and seconds > 0 else None,
               "workers": df.attrs["workers"], "scheduler": args.scheduler or "processes", "out": args.out}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        rate = f", {summary['points_per_second']:.1f} points/s" if summary["points_per_second"] else ""
        print(f"sweep {args.target}: {summary['rows']}/{size} points in {args.out} ({new} computed now in "
              f"{seconds:.1f} s{rate}); {summary['errors']} with an error")
    return 0


def cli_register(subparsers):
    p = subparsers.add_parser("sweep", help="run a function over a parameter grid (local processes or Dask) into a "
                                            "table")
    p.add_argument("target", metavar="TARGET", help="MODULE:FUNCTION or FILE.py:FUNCTION: a function taking the "
                                                    "grid's names, returning a dict of numbers")
    p.add_argument("--grid", action="append", metavar="NAME=SPEC",
                   help="a parameter: a:b:n (n values from a to b), v1,v2,... or one value; repeat for each")
    p.add_argument("--out", metavar="TABLE", help="the table (.parquet or .csv), written as the points finish")
    p.add_argument("--scheduler", metavar="ADDR", default=None,
                   help="a Dask scheduler address (tcp://host:port); 'serial' for this process; default: local "
                        "processes")
    p.add_argument("--workers", type=int, default=None, help="local processes (default: one per CPU)")
    p.add_argument("--chunk-size", type=int, default=None, help="points per task (default: adaptive)")
    p.add_argument("--resume", action="store_true", help="keep the points already in TABLE, compute the others")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="a point running longer is recorded as failed ('timeout after N s') and its worker replaced "
                        "(local processes or Dask; default: no limit)")
    p.add_argument("--on-error", choices=["record", "raise"], default="record",
                   help="a point that raises: record its message in the 'error' column (default) or stop")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON summary (points, errors, seconds, points/s)")
    p.set_defaults(func=run)
