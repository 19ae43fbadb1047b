"""The first calls after install (``import multibody``, the first aba/rnea/crba, RK4 and DOP853 simulate,
linearize, the IFToMM bicycle M2, a sweep worker's first point), each in a new process on a fresh copy of the
installed package, in CPU seconds.

Run: ``python benchmarks/bench_first_use.py [--only NAME ...]`` (also ``multibody bench --only first-use``).
"""
import sys

from multibody.bench.first_use import main

if __name__ == "__main__":
    sys.exit(main())
