"""Stabilized hoop of seed 000: the paper's RK2 (1e7 steps) against adaptive DOP853 at the same residual bound.

Run: python benchmarks/bench_hoop.py [--no-rk2]   (also part of ``multibody bench --only hoop``)
"""
import sys

from multibody.bench.hoop import bench_hoop

if __name__ == "__main__":
    bench_hoop(rk2="--no-rk2" not in sys.argv)
