"""``multibody bench``: speed of the library's algorithms, measured against peers in the same run.

Each module of this package measures one area and returns rows (dicts) that are printed as a table;
the ratios ours/peer matter, not the absolute times. Benchmarks are not tests: the tests check numbers.
"""
import importlib
import json
import time

#: (name, module, function) of every benchmark; run in this order
BENCHMARKS = [
    ("dynamics", "multibody.bench.dynamics", "bench_dynamics"),
    ("bicycle", "multibody.bench.bicycle", "bench_bicycle"),
    ("hoop", "multibody.bench.hoop", "bench_hoop"),
    ("constrained", "multibody.bench.constrained", "bench_constrained"),
]


def run(args):
    wanted = set(args.only.split(",")) if args.only else None
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
    p.add_argument("--only", help="comma-separated subset: " + ",".join(b[0] for b in BENCHMARKS))
    p.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    p.set_defaults(func=run)
