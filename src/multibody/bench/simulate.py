"""Whole simulations against MuJoCo, and many runs at once.

``bench_simulate()`` prints two tables (the first calls after install are ``multibody bench --only first-use``,
:mod:`multibody.bench.first_use`):

1. a planar chain of N hinged rods (1 kg, 0.5 m, thin-rod inertia), 2 s of fixed-step RK4 at h = 1e-3:
   ``multibody.simulate(..., method="RK4", h=1e-3)`` (every step saved, with its energies) against the same
   model in MuJoCo (hinge joints, contacts and constraints disabled, ``integrator="RK4"``, ``timestep=1e-3``)
   stepped with ``mujoco.mj_step`` from a Python loop, and — in a second column — ``simulate`` keeping only the
   final state (``n_out=2, energy=False``). Process time, interleaved rounds, the ratio's median and range
   over the rounds. The final angles of the two libraries must agree to 1e-9 or the benchmark fails.
   MuJoCo is an optional extra: without it this table is skipped with a message;
2. ``simulate_batch`` of 1 000 initial states of the 5-rod chain against a loop of ``simulate`` calls: cost
   per trajectory (wall time, since the batch runs on every core numba uses, and process time), and the check
   that the batch's trajectories are those of the single runs, exactly.

Read the ratios, not the absolute times (DESIGN.md, performance rules).
"""
import time

import numpy as np

from multibody.bench.timing import environment, fmt_spread, interleaved, spread
from multibody.errors import shown

#: the rods of the chain: mass, length, and the radius of their thin-rod inertia (m L²/12 across, m r²/2 along)
MASS, LENGTH, RADIUS = 1.0, 0.5, 0.01


def rod_chain(n):
    """A planar chain of n rods hinged about y, each hanging from the end of the previous one."""
    import multibody as mb

    across = MASS * LENGTH ** 2 / 12.0
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81), name=f"rod_chain_{n}")
    parent = "ground"
    for k in range(n):
        b.add_body(f"rod{k + 1}", mass=MASS, com=(0.0, 0.0, -LENGTH / 2),
                   inertia=np.diag([across, across, MASS * RADIUS ** 2 / 2]))
        b.add_joint(f"hinge{k + 1}", mb.Revolute(axis=(0, 1, 0)), parent, f"rod{k + 1}",
                    placement=mb.Placement(np.eye(3), (0.0, 0.0, -LENGTH if k else 0.0)))
        parent = f"rod{k + 1}"
    return b.build()


def rod_chain_mujoco(n, h=1e-3):
    """The same chain as a MuJoCo model: hinge joints, contacts and constraints disabled, RK4 with step h."""
    import mujoco

    across = MASS * LENGTH ** 2 / 12.0
    body = ""
    for k in reversed(range(n)):
        body = (f'<body pos="0 0 {-LENGTH if k else 0.0}"><joint type="hinge" axis="0 1 0"/>'
                f'<inertial pos="0 0 {-LENGTH / 2}" mass="{MASS}" diaginertia="{shown(across)!r} {shown(across)!r} '
                f'{MASS * RADIUS ** 2 / 2!r}"/>{body}</body>')
    xml = (f'<mujoco><option timestep="{shown(h)!r}" integrator="RK4" gravity="0 0 -9.81">'
           f'<flag contact="disable" constraint="disable"/></option><worldbody>{body}</worldbody></mujoco>')
    return mujoco.MjModel.from_xml_string(xml)


def initial_angles(n):
    """The initial angles: the chain hanging 0.3 rad off the vertical, slightly bent (a start from which 2 s of
    motion stays regular enough for the two libraries to agree to 1e-9)."""
    q = np.full(n, 0.02)
    q[0] = 0.3
    return q


def bench_chain(sizes=(5, 30, 100), t_end=2.0, h=1e-3, rounds=5, verbose=True):
    """Table 1 (see the module docstring); rows of dicts, or [] without MuJoCo."""
    try:
        import mujoco
    except ImportError:
        if verbose:
            print("MuJoCo is not installed (optional bench extra: pip install mujoco): chain table skipped")
        return []
    import multibody as mb

    nsteps = int(round(t_end / h))
    rows = []
    for n in sizes:
        model, q0, v0 = rod_chain(n), initial_angles(n), np.zeros(n)
        mjm = rod_chain_mujoco(n, h)
        mjd = mujoco.MjData(mjm)

        def ours():
            return mb.simulate(model, q0, v0, t_end, method="RK4", h=h)

        def ours_final():
            return mb.simulate(model, q0, v0, t_end, method="RK4", h=h, n_out=2, energy=False)

        def theirs():
            mujoco.mj_resetData(mjm, mjd)
            mjd.qpos[:] = q0
            for _ in range(nsteps):
                mujoco.mj_step(mjm, mjd)
            return mjd.qpos.copy()

        a, b, c = ours(), ours_final(), theirs()  # compile / load, and the same numbers
        diff = float(np.max(np.abs(a.q[-1] - c)))
        if diff > 1e-9 or not np.array_equal(a.q[-1], b.q[-1]):
            raise AssertionError(f"rod chain N={n}: final angles of multibody and MuJoCo differ by {diff:.3e} "
                                 "(more than 1e-9): the benchmark does not compare the same motion")
        t = interleaved([ours, ours_final, theirs], 1, rounds)
        rows.append(dict(N=n, ours_ms=spread(t[:, 0] * 1e3)[0], ours_final_ms=spread(t[:, 1] * 1e3)[0],
                         mujoco_ms=spread(t[:, 2] * 1e3)[0], ratio=spread(t[:, 0] / t[:, 2]),
                         ratio_final=spread(t[:, 1] / t[:, 2]), final_angle_difference=diff))
        if verbose:
            print(f"  N = {n}: ratio {fmt_spread(t[:, 0] / t[:, 2])}", flush=True)
    if verbose:
        print(format_chain(rows, t_end, h, rounds))
    return rows


def format_chain(rows, t_end=2.0, h=1e-3, rounds=5):
    lines = [f"rod chain, {t_end:g} s of RK4 at h = {h:g}; process time per run, median of {rounds} interleaved "
             "rounds; ratio = multibody / MuJoCo, median (range over the rounds)", "",
             "| N | multibody ms | MuJoCo ms | ratio | final state only: ms | ratio | final angles differ by |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['N']} | {r['ours_ms']:.1f} | {r['mujoco_ms']:.1f} | {_fmt(r['ratio'])} | "
                     f"{r['ours_final_ms']:.1f} | {_fmt(r['ratio_final'])} | {r['final_angle_difference']:.1e} |")
    lines.append("")
    lines.append("multibody: simulate(..., method='RK4', h=1e-3) saving every step with its energies; final state "
                 "only: n_out=2, energy=False. MuJoCo: mj_step in a Python loop.")
    return "\n".join(lines)


def _fmt(s):
    return f"{s[0]:.2f} ({s[1]:.2f}–{s[2]:.2f})"


def bench_batch(runs=1000, n=5, t_end=2.0, h=1e-3, n_out=101, singles=50, rounds=3, verbose=True):
    """Table 2 (see the module docstring): a dict."""
    import numba

    import multibody as mb

    model = rod_chain(n)
    rng = np.random.default_rng(0)
    Q0 = initial_angles(n) + rng.uniform(-0.05, 0.05, (runs, n))
    V0 = rng.uniform(-0.1, 0.1, (runs, n))
    batch = mb.simulate_batch(model, Q0, V0, t_end, method="RK4", h=h, n_out=n_out)  # compile / load
    for b in range(0, runs, max(1, runs // 7)):
        single = mb.simulate(model, Q0[b], V0[b], t_end, method="RK4", h=h, n_out=n_out)
        if not (np.array_equal(batch.q[b], single.q) and np.array_equal(batch.v[b], single.v)
                and np.array_equal(batch.energy["total"][b], single.energy["total"])):
            raise AssertionError(f"simulate_batch run {b} differs from the single run")

    def run_batch():
        mb.simulate_batch(model, Q0, V0, t_end, method="RK4", h=h, n_out=n_out)

    def run_loop():
        for b in range(singles):
            mb.simulate(model, Q0[b], V0[b], t_end, method="RK4", h=h, n_out=n_out)

    wall = np.empty((rounds, 2))
    cpu = np.empty((rounds, 2))
    for r in range(rounds):
        for k, (f, count) in enumerate(((run_batch, runs), (run_loop, singles))):
            w0, c0 = time.perf_counter(), time.process_time()
            f()
            wall[r, k] = (time.perf_counter() - w0) / count
            cpu[r, k] = (time.process_time() - c0) / count
    row = dict(runs=runs, N=n, threads=numba.get_num_threads(), n_out=n_out,
               batch_ms=spread(wall[:, 0] * 1e3)[0], loop_ms=spread(wall[:, 1] * 1e3)[0],
               ratio=spread(wall[:, 0] / wall[:, 1]), batch_cpu_ms=spread(cpu[:, 0] * 1e3)[0],
               loop_cpu_ms=spread(cpu[:, 1] * 1e3)[0], cpu_ratio=spread(cpu[:, 0] / cpu[:, 1]))
    if verbose:
        print(f"simulate_batch of {runs} initial states of the {n}-rod chain ({t_end:g} s, RK4, h = {h:g}, "
              f"n_out = {n_out}, energies) on {row['threads']} threads, against a loop of simulate calls "
              f"({singles} runs); per trajectory, median (range) of {rounds} rounds; trajectories identical")
        print()
        print("| per trajectory | simulate_batch | loop of simulate | ratio |")
        print("|---|---:|---:|---:|")
        print(f"| wall ms | {row['batch_ms']:.2f} | {row['loop_ms']:.2f} | {_fmt(row['ratio'])} |")
        print(f"| process ms (all threads) | {row['batch_cpu_ms']:.2f} | {row['loop_cpu_ms']:.2f} | "
              f"{_fmt(row['cpu_ratio'])} |")
    return row


def bench_simulate(sizes=(5, 30, 100), rounds=5, runs=1000, verbose=True):
    """The two tables of the module docstring; returns {"chain": rows, "batch": row}."""
    if verbose:
        print(environment("mujoco"))
    out = {"chain": bench_chain(sizes, rounds=rounds, verbose=verbose)}
    if verbose:
        print()
    out["batch"] = bench_batch(runs=runs, verbose=verbose)
    return out


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description="whole simulations against MuJoCo, simulate_batch")
    p.add_argument("--sizes", type=int, nargs="+", default=[5, 30, 100])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=1000)
    args = p.parse_args(argv)
    bench_simulate(tuple(args.sizes), args.rounds, args.runs)
    return 0
