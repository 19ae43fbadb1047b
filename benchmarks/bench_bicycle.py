"""Whipple bicycle (seed 003): time of the 10 000-speed eigenvalue sweep, ours against LAPACK and bicycleparameters.

Run: python benchmarks/bench_bicycle.py [N_SPEEDS]   (also part of ``multibody bench --only bicycle``)
"""
import sys

from multibody.bench.bicycle import bench_bicycle

if __name__ == "__main__":
    bench_bicycle(n_speeds=int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
