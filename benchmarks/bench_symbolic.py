"""Symbolic equations of the 6-DoF universal manipulator of seed 004: ours (CRBA/RNEA recursions + the
centrifugal / Coriolis / gyroscopic split) against sympy.physics.mechanics.KanesMethod, times and operation counts.

Run: python benchmarks/bench_symbolic.py   (also part of ``multibody bench --only symbolic``)
"""
from multibody.bench.symbolic import bench_symbolic

if __name__ == "__main__":
    bench_symbolic()
