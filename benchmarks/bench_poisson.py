"""Poisson impulses (seed 002): time per right-hand side of the sweep and Cholesky solvers against ABA and a dense
CRBA + Cholesky solve, cardan chains N = 5…50 and chains / random trees up to 10⁴ bodies; RK4 run of a 1000-body
chain under both formulations; log-log plot of the cost against N.

Run: ``python benchmarks/bench_poisson.py [--rounds 5] [--plot docs/poisson_cost.png] [--max-n 10000]``
(also ``multibody bench --only poisson``, which writes ``poisson_cost.png`` in the current folder).
"""
import sys

from multibody.bench.poisson import main

if __name__ == "__main__":
    sys.exit(main())
