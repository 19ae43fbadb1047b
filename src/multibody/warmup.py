"""Compile the package's kernels, loops and generated code once, so that numba's on-disk caches hold them.

``python -m multibody.warmup`` runs every registered case: small calls of the public API that go through the
same code paths as a user's first calls (the same argument types: the Model's read-only arrays, the user's
writable ones, the right-hand sides the formulations bind into the compiled loops). numba writes what it compiles
beside each source file (``__pycache__/*.nbi``, ``*.nbc``) and the generated modules go to
``multibody.cache.cache_dir``; a later process loads them instead of compiling.

The package build runs it (``build_backend/backend.py``: the wheel ships the caches, so the first calls after
``pip install`` are loads, not compilations; docs/first-use.md). A Dask cluster or a container image can run it
once per machine too.

The caches are keyed on the machine's CPU: on another CPU they miss and numba compiles on first use as before.

Adding a case: a function of no arguments, decorated with ``@case("group")``, that calls the new code the way a
user does (a small model, a short run); a case that compiles for minutes gets a weight in :data:`COST`. A case
that raises is reported and the others still run (a case cannot break an install; its code then compiles on
first use). ``--jobs 2`` runs the cases in two processes, then checks them all in one.
"""
import os
import sys
import time
import traceback

import numpy as np

#: the registered cases: (group, name, function)
CASES = []


def case(group):
    """Register the decorated function as a warm-up case of ``group``."""
    def register(func):
        CASES.append((group, func.__name__, func))
        return func
    return register


def every_joint_models():
    """Small models that together have every joint type, springs, dampers and efforts, and a welded body."""
    import multibody as mb
    from multibody.bench.dynamics import random_tree

    models = [random_tree(8, np.random.default_rng(seed)) for seed in (1, 2, 3)]
    models += [random_tree(4, np.random.default_rng(4), joint_types=(kind,))
               for kind in ("Revolute", "Prismatic", "Cylindrical", "Universal", "Spherical", "Planar", "Free")]
    b = mb.ModelBuilder(name="sprung")
    b.add_body("a", mass=1.0, com=(0.1, 0.0, -0.3), inertia=[0.1, 0.12, 0.05])
    b.add_body("b", mass=0.7, com=(0.0, 0.1, -0.2), inertia=[0.05, 0.06, 0.02])
    b.add_body("c", mass=0.5, com=(0.0, 0.0, -0.1), inertia=[0.02, 0.02, 0.01])
    b.add_joint("ja", mb.Revolute(axis=(0, 1, 0)), "ground", "a", stiffness=3.0, damping=0.4, rest=0.2, effort=0.5)
    b.add_joint("jb", mb.Spherical(), "a", "b", placement=mb.Placement(translation=(0, 0, -0.6)), damping=0.2)
    b.add_joint("jc", mb.Prismatic(axis=(0, 0, 1)), "b", "c", stiffness=20.0, damping=1.0, rest=-0.1)
    b.add_spring("s", "ground", (0.5, 0.5, 0.5), "c", (0.1, 0.0, 0.0), stiffness=15.0, damping=0.7, rest_length=0.3)
    models.append(b.build())
    return models


def chain(n=5):
    """The planar chain of n hinged rods of ``multibody bench``."""
    from multibody.bench.simulate import rod_chain

    return rod_chain(n)


def state(model, seed=0):
    """A random configuration (on the manifold) and velocity of ``model``."""
    rng = np.random.default_rng(seed)
    q = model.integrate(model.neutral(), rng.normal(size=model.nv) * 0.3, 1.0)
    return q, rng.normal(size=model.nv) * 0.3


# ---- algorithms --------------------------------------------------------------------------------------------

@case("algorithms")
def dynamics_of_every_joint():
    import multibody as mb

    for model in every_joint_models():
        q, v = state(model)
        a = mb.aba(model, q, v, np.zeros(model.nv))
        mb.rnea(model, q, v, a)
        mb.crba(model, q)
        mb.energy(model, q, v)
        mb.bias_forces(model, q, v)
        mb.gravity_forces(model, q)
        mb.forward_kinematics(model, q, v, a)
        body = model.bodies[-1].name
        mb.point_position(model, q, body)
        mb.point_velocity(model, q, v, body)
        mb.point_jacobian(model, q, body)
        mb.center_of_mass(model, q, v)
        mb.joint_wrenches(model, q, v, a)
        mb.joint_reactions(model, q, v, a)
        Q = np.array([q, q])
        V = np.array([v, v])
        mb.aba_batch(model, Q, V, np.zeros_like(V))
        mb.rnea_batch(model, Q, V, np.zeros_like(V))
        if model.nv:
            mb.hybrid_dynamics(model, q, v, np.zeros(model.nv), [0], np.zeros(model.nv))


@case("algorithms")
def derivatives_of_every_joint():
    import multibody as mb

    for model in every_joint_models():
        q, v = state(model)
        a = np.zeros(model.nv)
        mb.rnea_derivatives(model, q, v, a)
        mb.aba_derivatives(model, q, v, a)
        mb.aba_derivatives(model, q, v, a, applied=True)
        mb.minv(model, q)
        mb.coriolis_matrix(model, q, v)
        Q, V = np.array([q, q]), np.array([v, v])
        mb.rnea_derivatives_batch(model, Q, V, np.zeros_like(V))
        mb.aba_derivatives_batch(model, Q, V, np.zeros_like(V))


# ---- simulate ----------------------------------------------------------------------------------------------

@case("simulate")
def tree_fixed_and_adaptive():
    import multibody as mb

    for model in (chain(), every_joint_models()[-1], every_joint_models()[0]):
        q, v = state(model)
        mb.simulate(model, q, v, 0.01, method="RK4", h=1e-3)
        mb.simulate(model, q, v, 0.01)
        mb.simulate(model, q, v, 0.01, n_out=2)
    q, v = state(chain())
    for method in ("RK2", "HEUN", "MIDPOINT", "STORMER", "STORMER6", "VERLET"):
        mb.simulate(chain(), q, v, 0.01, method=method, h=1e-3)
    for method in ("RK45", "RK23", "Radau", "BDF", "LSODA"):
        mb.simulate(chain(), q, v, 0.01, method=method)


@case("simulate")
def batches():
    import multibody as mb

    model = chain()
    q, v = state(model)
    for method in ("RK4", "RK2", "HEUN", "VERLET"):
        mb.simulate_batch(model, np.tile(q, (9, 1)), None, 0.01, method=method, h=1e-3)
    mb.simulate_batch(model, np.tile(q, (3, 1)), None, 0.01, h=1e-3, lanes=False)
    other = every_joint_models()[-1]
    q, v = state(other)
    mb.simulate_batch(other, np.tile(q, (3, 1)), np.tile(v, (3, 1)), 0.01, h=1e-3)


@case("simulate")
def formulations():
    import multibody as mb
    from multibody.systems import slider_crank
    from multibody.systems.cardan_chain import cardan_chain

    model, q0, v0 = slider_crank.model()
    for formulation in ("constrained", "cartesian", "stabilized"):
        mb.simulate(model, q0, v0, 0.01, formulation=formulation)
        mb.simulate(model, q0, v0, 0.01, formulation=formulation, method="RK4", h=1e-3)
    cardan = cardan_chain(4)
    q, v = state(cardan)
    mb.simulate(cardan, q, v, 0.01, formulation="poisson")
    mb.simulate(cardan, q, v, 0.01, formulation="poisson", method="RK4", h=1e-3)


@case("simulate")
def linearizations():
    import multibody as mb
    from multibody.systems import slider_crank

    for model in (chain(), *every_joint_models()[-2:]):
        q, v = state(model)
        mb.linearize(model, q, np.zeros(model.nv))
        mb.linearize(model, q, v)
    model, q0, v0 = slider_crank.model()
    mb.linearize(model, q0, np.zeros(model.nv))


@case("simulate")
def statics_and_modes():
    """A beam with a follower load: its static equilibrium, modes and a short run (the statics' kernel, the loads in
    the right-hand side)."""
    import multibody as mb

    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_beam("rod", "ground", length=1.0, segments=4, EI=(5.0, None), GJ=None, mass_per_length=1.0)
    b.add_load("tip", "rod.tip", force=(0.0, 0.0, -1.0), reference="local")
    model = b.build()
    q = mb.static_equilibrium(model, model.neutral())
    mb.modes(model, q)
    mb.simulate(model, q, np.zeros(model.nv), 0.01, method="RK4", h=1e-3)
    mb.simulate(model, q, np.zeros(model.nv), 0.01)


# ---- systems and the README's commands ---------------------------------------------------------------------

@case("systems")
def bicycle():
    from multibody.systems import bicycle as bike

    p = bike.benchmark_parameters()
    bike.model_eigenvalues(p, [0.0, 5.0])
    bike.iftomm_maneuver("M2", t_end=0.2, rtol=1e-5, atol=1e-5, n_out=3)
    bike.iftomm_maneuver("M2", t_end=0.2, n_out=3)


@case("systems")
def iftomm_problems():
    from multibody.systems.iftomm import run_problem

    for name in ("A01", "A02", "A03", "A04", "A05"):
        run_problem(name, t_end=0.01)


@case("systems")
def demo():
    """``multibody demo``, the README's first command, into a temporary folder."""
    import tempfile

    from multibody.cli import main

    with tempfile.TemporaryDirectory() as out:
        main(["demo", "--out", out])


# ---- running -----------------------------------------------------------------------------------------------

def run(names=None, verbose=True, label="warm-up"):
    """Run the registered cases (those in ``names``, default all) in this process, one after the other; returns
    ``{name: seconds or the error message}``."""
    done = {}
    selected = [c for c in CASES if not names or c[1] in names]
    for group, name, func in selected:
        t0 = time.perf_counter()
        try:
            func()
        except Exception as exc:  # a case that fails leaves its code to the JIT; report it and go on
            done[name] = f"{type(exc).__name__}: {exc}"
            if verbose:
                print(f"[{label}] {group}: {name} failed: {done[name]}\n{traceback.format_exc()}", end="", flush=True)
            continue
        done[name] = time.perf_counter() - t0
        if verbose:
            print(f"[{label}] {group}: {name} {done[name]:.0f} s", flush=True)
    return done


def run_parallel(jobs, verbose=True):
    """Run every case in its own process, ``jobs`` at a time (the costly ones first), then all of them again in
    this process: two processes that compile the same function at once can each rewrite numba's index of it
    without the other's entry, and the second pass compiles what was lost (it only loads the rest). Returns the
    second pass's ``{name: seconds or the error message}``."""
    import subprocess

    pending = [name for _, name, _ in sorted(CASES, key=lambda c: -COST.get(c[1], 1))]
    running = []
    t0 = time.perf_counter()
    while pending or running:
        while pending and len(running) < jobs:
            if pending[0] in LAST and len(pending) > 1:     # the others first: it calls much of what they compile
                pending.append(pending.pop(0))
            if pending[0] in LAST and running:
                break
            name = pending.pop(0)
            running.append(subprocess.Popen([sys.executable, "-m", "multibody.warmup", "--case", name,
                                             "--label", "warm-up, compiling"]))
        time.sleep(0.2)
        running = [p for p in running if p.poll() is None]
    if verbose:
        print(f"[warm-up] compiled in {time.perf_counter() - t0:.0f} s; checking every case loads", flush=True)
    return run(verbose=verbose, label="warm-up, check")


#: rough relative cost of the cases that compile most (the others count 1): the longest start first
COST = {"bicycle": 6, "iftomm_problems": 4, "derivatives_of_every_joint": 4, "formulations": 3, "statics_and_modes": 3}
#: the cases that run in the parallel pass only once every other case is done (the demo calls the bicycle, the
#: IFToMM problems and more: run beside them, it compiled the same functions twice, each process for itself)
LAST = ("demo",)


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(prog="python -m multibody.warmup", description=__doc__.split("\n\n")[0])
    p.add_argument("--case", nargs="+", metavar="NAME", help="the cases to run (default all)")
    p.add_argument("--jobs", type=int, default=1, help="cases run in this many processes at once, then once "
                   "more all in one (default 1: all in this process)")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument("--label", default="warm-up", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.list:
        for group, name, func in CASES:
            print(f"{group:12s} {name}")
        return 0
    os.environ.setdefault("MPLBACKEND", "Agg")
    t0 = time.perf_counter()
    if args.jobs > 1 and not args.case:
        done = run_parallel(args.jobs)
    else:
        done = run(args.case, label=args.label)
    failed = [n for n, r in done.items() if isinstance(r, str)]
    if args.label == "warm-up":
        failures = f"; failed: {', '.join(failed)}" if failed else ""
        print(f"[warm-up] done in {time.perf_counter() - t0:.0f} s{failures}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
