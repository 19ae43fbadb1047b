"""Benchmarks run by ``multibody bench``: speed of the library's algorithms, measured against peers in the same run.

Each module of this package measures one area and returns rows (dicts) that are printed as a table;
the ratios ours/peer matter, not the absolute times. Benchmarks are not tests: the tests check numbers.
"""
#: (name, module, function) of every benchmark; run in this order
BENCHMARKS = [
    ("dynamics", "multibody.bench.dynamics", "bench_dynamics"),
    ("derivatives", "multibody.bench.derivatives", "bench_derivatives"),
    ("simulate", "multibody.bench.simulate", "bench_simulate"),
    ("bicycle", "multibody.bench.bicycle", "bench_bicycle_all"),
    ("hoop", "multibody.bench.hoop", "bench_hoop"),
    ("constrained", "multibody.bench.constrained", "bench_constrained"),
    ("poisson", "multibody.bench.poisson", "bench_poisson"),
    ("symbolic", "multibody.bench.symbolic", "bench_symbolic"),
    ("urdf", "multibody.bench.urdf", "bench_urdf"),
    ("robots", "multibody.bench.robots", "bench_robots"),
    ("robotics", "multibody.bench.robotics", "bench_robotics"),
    ("sweep", "multibody.bench.sweep", "bench_sweep"),
    ("contact", "multibody.bench.contact", "bench_contact"),
    ("contact-batch", "multibody.bench.contact", "bench_contact_batch"),
    ("switching", "multibody.bench.switching", "bench_switching"),
    ("beams", "multibody.bench.beams", "bench_beams"),
    ("first-use", "multibody.bench.first_use", "bench_first_use"),
]
