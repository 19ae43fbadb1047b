"""What joint limits cost: a chain of 30 rods with limits on every joint against the same chain without them, RK4
and DOP853, between impacts and with impacts (``multibody.bench.switching``).

Run: ``python benchmarks/bench_switching.py`` (also ``multibody bench --only switching``).
"""
from multibody.bench.switching import bench_switching

if __name__ == "__main__":
    bench_switching()
