"""``multibody bench [--only NAME,...] [--json FILE]``: speed of the library's algorithms against peers in the
same run (the benchmarks are in :mod:`multibody.bench`; they print ratios, the tests check numbers)."""
import importlib
import json
import time

from multibody.bench import BENCHMARKS
from multibody.errors import ModelError


def run(args):
    from multibody.cli.paths import output_file

    output_file(args.json, "--json")
    wanted = None
    if args.only:
        wanted = {w.strip() for w in args.only.split(",") if w.strip()}
        names = [b[0] for b in BENCHMARKS]
        unknown = sorted(wanted - set(names))
        if unknown or not wanted:
            raise ModelError(f"--only: no benchmark named {', '.join(unknown) or repr(args.only)}; "
                             f"expected a comma-separated subset of {', '.join(names)}", element="--only")
    results = {}
    for name, modname, funcname in BENCHMARKS:
        if wanted and name not in wanted:
            continue
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:
                continue
            raise
        print(f"\n== {name} ==", flush=True)
        t0 = time.perf_counter()
        results[name] = getattr(mod, funcname)()
        print(f"({name}: {time.perf_counter() - t0:.1f} s)", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2, default=str)
        print(f"results written to {args.json}")
    return 0


def cli_register(subparsers):
    p = subparsers.add_parser("bench", help="time the algorithms against peers (Pinocchio when installed)")
    p.add_argument("--only", metavar="NAME,...",
                   help="run only these benchmarks, comma-separated, of: " + ", ".join(b[0] for b in BENCHMARKS))
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.set_defaults(func=run)
