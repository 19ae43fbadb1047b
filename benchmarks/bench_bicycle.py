"""Whipple bicycle (seed 003): the closed-form eigenvalue sweep against LAPACK and bicycleparameters, the generic
model built, linearized and solved at 100 speeds in a fresh process, and the IFToMM maneuver M2 against Exudyn.

Run: python benchmarks/bench_bicycle.py   (the same as ``multibody bench --only bicycle``)
"""
from multibody.bench.bicycle import bench_bicycle_all

if __name__ == "__main__":
    bench_bicycle_all()
