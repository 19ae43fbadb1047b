"""What joint limits cost: a chain of N rods with limits on every joint against the same chain without them.

``bench_switching()`` prints one table. For each size, the chain of ``bench/simulate.py`` (hinged rods, 1 kg,
0.5 m) is run for 2 s from the same state:

* ``RK4`` at h = 1e-3: the chain without limits (the compiled loop of ``integrate/rk_template.py``) against the
  chain with stops at ±3 rad on every joint, which the motion never reaches — the cost of a run *between
  impacts*: the switching loop (``switching/modes.py``) checks the 2N gaps after every step inside the same
  compiled loop, and calls the same ABA;
* ``DOP853`` at rtol 1e-10: the same, where the limits are a terminal event of scipy's step loop (one compiled
  evaluation of the guards per step, no Python per guard);
* the chain with stops at ±0.1 rad (its first angle clipped to 0.1), which the motion does hit (impacts, contacts,
  separations), for the cost of a run with switches: its number of switches is printed.

Process time, interleaved rounds, the median and the range of the ratio over the rounds (``bench/timing.py``).
Read the ratios, not the absolute times (DESIGN.md, performance rules).
"""
import numpy as np

from multibody.bench.simulate import LENGTH, MASS, RADIUS, initial_angles
from multibody.bench.timing import environment, fmt_spread, interleaved


def limited_chain(n, bound=None, restitution=0.0):
    """The rod chain of ``bench/simulate.py`` with stops at ±``bound`` on every hinge (None: no stops)."""
    import multibody as mb

    across = MASS * LENGTH ** 2 / 12.0
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81), name=f"rod_chain_{n}" + ("" if bound is None else "_limited"))
    parent = "ground"
    for k in range(n):
        b.add_body(f"rod{k + 1}", mass=MASS, com=(0.0, 0.0, -LENGTH / 2),
                   inertia=np.diag([across, across, MASS * RADIUS ** 2 / 2]))
        b.add_joint(f"hinge{k + 1}", mb.Revolute(axis=(0, 1, 0)), parent, f"rod{k + 1}",
                    placement=mb.Placement(np.eye(3), (0.0, 0.0, -LENGTH if k else 0.0)),
                    limits=None if bound is None else (-bound, bound),
                    restitution=None if bound is None else restitution)
        parent = f"rod{k + 1}"
    return b.build()


def bench_limits(sizes=(30,), t_end=2.0, h=1e-3, rounds=11, verbose=True):
    """The table of the module docstring; rows of dicts."""
    import multibody as mb

    rows = []
    for n in sizes:
        free, wide, tight = limited_chain(n), limited_chain(n, 3.0), limited_chain(n, 0.1, 0.5)
        q0, v0 = initial_angles(n), np.zeros(n)
        runs = {
            "RK4": (lambda m: mb.simulate(m, np.clip(q0, -0.1, 0.1) if m is tight else q0, v0, t_end, method="RK4",
                                          h=h, n_out=11)),
            "DOP853": (lambda m: mb.simulate(m, np.clip(q0, -0.1, 0.1) if m is tight else q0, v0, t_end,
                                             method="DOP853", rtol=1e-10, atol=1e-12, n_out=11)),
        }
        for name, run in runs.items():
            a, b = run(free), run(wide)       # compile, and check that the limits change nothing here
            assert not b.events and np.max(np.abs(a.q[-1] - b.q[-1])) < 1e-9, "the wide stops were reached"
            times = interleaved([lambda: run(free), lambda: run(wide), lambda: run(tight)], rounds=rounds)
            switches = len(run(tight).events)
            row = {"n": n, "method": name, "free_s": float(np.median(times[:, 0])),
                   "ratio_between_impacts": fmt_spread(times[:, 1] / times[:, 0]),
                   "ratio_with_impacts": fmt_spread(times[:, 2] / times[:, 0]), "switches": switches}
            rows.append(row)
            if verbose:
                print(f"  N = {n:3d} {name:7s}: no limits {row['free_s'] * 1e3:8.1f} ms; with limits, between "
                      f"impacts: x {row['ratio_between_impacts']}; with {switches} switches: "
                      f"x {row['ratio_with_impacts']}", flush=True)
    return rows


def bench_switching(verbose=True):
    """``multibody bench --only switching``."""
    if verbose:
        print(environment())
        print("A chain of N hinged rods, 2 s, limits on every joint: the time of a run with limits over the time "
              "of the same run without (process time, median (range) of 11 interleaved rounds)")
    return bench_limits(verbose=verbose)
