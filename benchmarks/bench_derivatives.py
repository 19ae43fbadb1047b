"""The derivatives of the dynamics (aba_derivatives, rnea_derivatives, minv, coriolis_matrix, linearize) per call for
revolute chains (N = 7, 30) and the Talos robot of example-robot-data, and batch throughput at N = 30, against
Pinocchio.

Run: ``python benchmarks/bench_derivatives.py [--sizes 7 30] [--batch 1000] [--no-robot]`` (also ``multibody bench
--only derivatives``).
"""
import sys

from multibody.bench.derivatives import main

if __name__ == "__main__":
    sys.exit(main())
