"""Whole simulations: a chain of N rods against MuJoCo (N = 5, 30, 100), simulate_batch of 1 000 runs against a
loop of simulate calls.

Run: ``python benchmarks/bench_simulate.py [--sizes 5 30 100] [--rounds 5] [--runs 1000]``
(also ``multibody bench --only simulate``).
"""
import sys

from multibody.bench.simulate import main

if __name__ == "__main__":
    sys.exit(main())
