"""What the warm-up compiles, and what each compilation costs: the tables of docs/first-use.md.

``python -m multibody.warmup --profile FILE`` (with empty caches: ``NUMBA_CACHE_DIR`` set to an empty folder)
writes one JSON line per compilation (numba's ``"numba:compile"`` events: the function, its signature, the warm-up
case that asked for it, its CPU seconds with and without the functions compiled within it); ``python -m
multibody.bench.compile_times FILE`` prints, in markdown, the share of each case (capability), the costliest
functions with their number of specializations, and the floor: what numba spends on the smallest functions,
whatever they compute.
"""
import collections
import json
import statistics


def load(path):
    """The compilations of a profile (a list of dicts, in the order they ended)."""
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def by_case(records):
    """``[(case, compilations, CPU s)]`` in the order the cases ran (a compilation's own CPU, ``self_cpu``, so a
    function compiled within another counts once)."""
    out = collections.OrderedDict()
    for r in records:
        n, cpu = out.get(r["case"], (0, 0.0))
        out[r["case"]] = (n + 1, cpu + r["self_cpu"])
    return [(case, n, cpu) for case, (n, cpu) in out.items()]


def by_function(records):
    """``{function: (specializations, CPU s)}``."""
    out = {}
    for r in records:
        n, cpu = out.get(r["function"], (0, 0.0))
        out[r["function"]] = (n + 1, cpu + r["self_cpu"])
    return out


def floor(records, small=0.15):
    """``(median CPU s of a compilation that costs less than ``small``, how many there are, their CPU s)``: the
    price of one function, whatever it computes."""
    cheap = [r["self_cpu"] for r in records if r["self_cpu"] < small]
    return (statistics.median(cheap) if cheap else 0.0), len(cheap), sum(cheap)


def markdown(records, top=25):
    """The tables of docs/first-use.md for a profile."""
    total = sum(r["self_cpu"] for r in records)
    lines = [f"{len(records)} compilations, {total:.0f} CPU s (numba's own time, imports and runs excluded)", "",
             "| case (capability) | compilations | CPU s | share |", "|---|---:|---:|---:|"]
    for case, n, cpu in by_case(records):
        lines.append(f"| {case} | {n} | {cpu:.1f} | {100 * cpu / total:.0f} % |")
    lines += ["", "| function | specializations | CPU s |", "|---|---:|---:|"]
    for func, (n, cpu) in sorted(by_function(records).items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(f"| `{func}` | {n} | {cpu:.1f} |")
    median, count, cpu = floor(records)
    lines += ["", f"floor: {count} compilations under 0.15 CPU s each (median {median:.3f} s) cost {cpu:.0f} CPU s"]
    return "\n".join(lines)


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("profile", help="the JSON lines of python -m multibody.warmup --profile")
    p.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    args = p.parse_args(argv)
    print(markdown(load(args.profile), args.top))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
