"""Robots of example-robot-data: the UR5 holding a posture with a PD + gravity compensation (controller element,
numba torque law, Python callback) against constant torques; 1 000 controlled runs in ``simulate_batch`` (SIMD lanes
and the per-run loop); ABA on the largest robot (TIAGo dual-arm, nv = 107) against Pinocchio, with the agreement.

Run: ``python benchmarks/bench_robots.py`` (also ``multibody bench --only robots``).
"""
from multibody.bench.robots import bench_robots

if __name__ == "__main__":
    bench_robots()
