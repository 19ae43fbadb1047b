"""ABA, RNEA, CRBA per call and per body for revolute chains (N = 7, 30, 100, 1000) and a binary tree, and batch
ABA throughput for 10 000 states at N = 30, against Pinocchio when it is installed.

Run: ``python benchmarks/bench_dynamics.py [--sizes 7 30 100 1000] [--batch 10000]`` (also ``multibody bench``).
"""
import sys

from multibody.bench.dynamics import main

if __name__ == "__main__":
    sys.exit(main())
