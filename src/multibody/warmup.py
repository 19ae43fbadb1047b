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

Each case belongs to one public capability of :data:`CAPABILITIES` (``--list`` prints them); ``multibody bench
--only first-use`` times the first call of each in a new process after the install, and
``tests/test_first_use.py`` checks that none compiles. numba specializes on the types of the arguments (dtypes,
layouts, read-only flags, tuple lengths), not on their values: one call of each kind compiles it, and a case that
only repeats the signatures of another costs its run time and compiles nothing.

Adding a case: a function of no arguments, decorated with ``@case("capability")``, that calls the new code the way
a user does (a small model, a short run). A case that raises is reported and the others still run (a case cannot
break an install; its code then compiles on first use). ``--jobs 2`` runs the first cases (:data:`FIRST`, which
compile what every other case calls) in this process, then the others in two processes (their costs in
:data:`COST`), then once more in this process the cases of a process that compiled a function the other one
compiled too (numba's index of a function, rewritten by both, may have lost an entry), and last the demo (in
one of the processes it would compile again what the other one compiled). ``--profile FILE`` writes
every compilation (function, signature, seconds) as JSON lines, the table of docs/first-use.md.
"""
import json
import os
import sys
import time
import traceback

import numpy as np

#: the public capabilities whose first calls the warm-up compiles, with what their cases call
CAPABILITIES = {
    "dynamics": "aba, rnea, crba, energy, kinematics, point quantities, wrenches, reactions, hybrid dynamics",
    "derivatives": "rnea/aba derivatives, M^-1, Coriolis matrix, their batched twins",
    "frames": "frame placement, velocity, acceleration, Jacobian and its rate in every reference",
    "centroidal": "centre-of-mass Jacobian, centroidal map, momentum, their rates",
    "robotics": "inverse kinematics, distance and collision queries",
    "simulate": "the tree formulation, every fixed-step and adaptive method",
    "batches": "simulate_batch (SIMD lanes, per-run loops), aba_batch, rnea_batch",
    "formulations": "constrained, cartesian, stabilized, poisson",
    "linearize": "linearize (complex step) of trees and constrained models",
    "controllers": "JointPD, ComputedTorque on a Trajectory, a compiled torque law, in fixed-step, adaptive and "
                   "batched runs",
    "switching": "stops, latches and loops: runs across impacts and rests, fixed-step and adaptive",
    "contact": "contact with friction: the stepping and the compliant model",
    "systems": "the bicycle, the IFToMM problems",
    "demo": "multibody demo, the README's first command",
}

#: the registered cases: (capability, name, function)
CASES = []


def case(capability):
    """Register the decorated function as a warm-up case of ``capability`` (a key of :data:`CAPABILITIES`)."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}; expected one of {', '.join(CAPABILITIES)}")

    def register(func):
        CASES.append((capability, func.__name__, func))
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

@case("dynamics")
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
        if model.nv:
            mb.hybrid_dynamics(model, q, v, np.zeros(model.nv), [0], np.zeros(model.nv))


@case("derivatives")
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


@case("frames")
def frames():
    import multibody as mb

    for model in every_joint_models()[:1] + every_joint_models()[-1:]:
        q, v = state(model)
        a = np.zeros(model.nv)
        frame = model.bodies[-1].name
        mb.frame_placement(model, q, frame)
        for reference in ("local", "world", "local_world_aligned"):
            mb.frame_velocity(model, q, v, frame, reference=reference)
            mb.frame_acceleration(model, q, v, a, frame, reference=reference)
            mb.frame_acceleration(model, q, v, a, frame, reference=reference, classical=True)
            mb.frame_jacobian(model, q, frame, reference=reference)
            mb.frame_jacobian_time_variation(model, q, v, frame, reference=reference)
        mb.frame_placement(model, q, frame)     # again: the first call made the model's Data, this one its fast path
        mb.frame_jacobians(model, q)
        mb.frame_jacobians(model, q, [frame])


@case("centroidal")
def centroidal():
    import multibody as mb

    for model in every_joint_models()[:1] + every_joint_models()[-1:]:
        q, v = state(model)
        mb.com_jacobian(model, q)
        mb.centroidal_map(model, q)
        mb.centroidal_momentum(model, q, v)
        mb.centroidal_map_time_variation(model, q, v)
        mb.centroidal_bias(model, q, v)
        mb.com_jacobian(model, q)               # again: the first call made the model's Data, this one its fast path


@case("robotics")
def robot_toolkit():
    import multibody as mb

    arm = controlled_arm()[0]
    frame = arm.bodies[-1].name
    q, _ = state(arm)
    R, p = mb.frame_placement(arm, q, frame)
    start = arm.neutral()
    mb.inverse_kinematics(arm, {frame: p}, start)
    mb.inverse_kinematics(arm, {frame: (R, p)}, start, limits=False)
    model, q0 = ball_on_floor(0.3)
    mb.distance(model, q0, ("ball", "floor"))
    mb.collisions(model, q0, margin=np.inf)


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


@case("batches")
def batches():
    import multibody as mb

    for model in every_joint_models():
        q, v = state(model)
        Q = np.array([q, q])
        V = np.array([v, v])
        mb.aba_batch(model, Q, V, np.zeros_like(V))
        mb.rnea_batch(model, Q, V, np.zeros_like(V))
    model = chain()
    q, v = state(model)
    for method in ("RK4", "RK2", "HEUN", "VERLET"):
        mb.simulate_batch(model, np.tile(q, (9, 1)), None, 0.01, method=method, h=1e-3)
    mb.simulate_batch(model, np.tile(q, (3, 1)), None, 0.01, h=1e-3, lanes=False)
    other = every_joint_models()[-1]
    q, v = state(other)
    mb.simulate_batch(other, np.tile(q, (3, 1)), np.tile(v, (3, 1)), 0.01, h=1e-3)


@case("formulations")
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


@case("linearize")
def linearizations():
    import multibody as mb
    from multibody.systems import slider_crank

    for model in (chain(), *every_joint_models()[-2:]):
        q, v = state(model)
        mb.linearize(model, q, np.zeros(model.nv))
        mb.linearize(model, q, v)
    model, q0, v0 = slider_crank.model()
    mb.linearize(model, q0, np.zeros(model.nv))
    q, v = state(chain())
    mb.linearize(chain(), q, v, derivative="complex")      # the trees' complex steps, the check of the analytic path


# ---- controllers, switching, contact -----------------------------------------------------------------------

def controlled_arm():
    """A six-hinge arm (random, fixed seed) held at its neutral posture by a PD law with gravity compensation
    (docs/robots.md)."""
    import multibody as mb
    from multibody.bench.dynamics import random_tree

    arm = random_tree(6, np.random.default_rng(7), joint_types=("Revolute",))
    posture = arm.neutral()
    d = np.diag(mb.crba(arm, posture))
    return arm, arm.with_controllers({"hold": mb.JointPD(1600.0 * d, 80.0 * d, posture)}), posture


def viscous_law():
    """A compiled torque law (docs/robots.md): numba compiles it in the user's process, the loops take it through
    a pointer and compile nothing more."""
    from numba import njit

    @njit
    def friction(t, q, v, out):
        for k in range(v.shape[0]):
            out[k] = -0.5 * v[k]
    return friction


@case("controllers")
def controllers():
    import multibody as mb

    arm, held, posture = controlled_arm()
    start = posture + 0.05
    mb.controller_torques(held, posture, np.zeros(arm.nv))
    mb.simulate(held, start, np.zeros(arm.nv), 0.01, method="RK4", h=1e-3)
    mb.simulate(held, start, np.zeros(arm.nv), 0.01)
    mb.simulate(held, start, np.zeros(arm.nv), 0.01, method="RK4", h=1e-3, tau=viscous_law())
    for opts in (dict(method="RK4", h=1e-3), {}):            # a Python torque callback besides the controllers
        mb.simulate(held, start, np.zeros(arm.nv), 0.01, tau=lambda t, q, v: -0.1 * v, **opts)
    move = mb.Trajectory([0.0, 1.0], [posture, posture + 0.3])
    tracked = arm.with_controllers({"track": mb.ComputedTorque(100.0, 20.0, move)})
    mb.simulate(tracked, posture, np.zeros(arm.nv), 0.01, method="RK4", h=1e-3)
    mb.simulate(tracked, posture, np.zeros(arm.nv), 0.01)
    starts = np.tile(start, (9, 1))
    mb.simulate_batch(held, starts, None, 0.01, h=1e-3, n_out=2)
    mb.simulate_batch(tracked, starts[:2], None, 0.01, h=1e-3, n_out=2)


def pendulum_on_stops(gravity=(4.9, 0.0, -9.81), limits=(-0.2, 0.2), restitution=0.5):
    """docs/variable-structure.md's pendulum between two stops."""
    import multibody as mb

    b = mb.ModelBuilder(gravity=gravity)
    b.add_body("bob", mass=1.0, com=(0, 0, -1.0), inertia=np.diag([1e-3] * 3))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob", limits=limits, restitution=restitution)
    return b.build()


@case("switching")
def switching():
    import multibody as mb
    from multibody.examples import path as example_path
    from multibody.systems import solar_panels

    model = pendulum_on_stops()
    for opts in (dict(method="RK4", h=1e-3), dict(rtol=1e-10, atol=1e-12)):
        mb.simulate(model, [0.0], [0.0], 0.8, **opts)                   # impacts, then rest on the stop
    stopped = pendulum_on_stops(limits=(-np.inf, 0.0), restitution=0.7).with_controllers(
        {"pd": mb.JointPD(50.0, 5.0, [0.3])})
    for opts in (dict(method="RK4", h=1e-3), dict(rtol=1e-10, atol=1e-12)):
        mb.simulate(stopped, [-0.3], [0.0], 0.5, **opts)
    for opts in (dict(method="RK4", h=1e-3), dict(rtol=1e-10, atol=1e-12)):   # a Python torque callback
        mb.simulate(model, [0.0], [0.0], 0.8, tau=lambda t, q, v: -0.1 * v, **opts)
    solar_panels.deploy(t_end=3.0, n_out=3)                            # a latch locks
    loop = mb.load_model(example_path("four_bar_stops"))
    for opts in (dict(rtol=1e-10, atol=1e-12), dict(method="RK4", h=1e-3)):
        mb.simulate(loop, np.zeros(3), np.array([-1.0, -1.0, 1.0]), 0.3, formulation="constrained", **opts)
    mb.simulate(model, [0.0], [0.0], 0.8, formulation="poisson", rtol=1e-10, atol=1e-12)


def ball_on_floor(height):
    """docs/contact.md's first example: a ball dropped on a floor."""
    import multibody as mb

    b = mb.ModelBuilder()
    b.add_body("ball", mass=1.0, inertia=(0.004, 0.004, 0.004))
    b.add_joint("free", mb.Free(), parent="ground", child="ball")
    b.add_collision("ball", "ball", mb.Sphere(0.1), friction=0.5)
    b.add_collision("floor", "ground", mb.HalfSpace())
    model = b.build()
    q0 = model.neutral()
    q0[2] = height
    return model, q0


@case("contact")
def contact():
    import multibody as mb

    model, q0 = ball_on_floor(0.102)
    mb.simulate(model, q0, None, 0.02, h=1e-3, contact="stepping", n_out=3)
    mb.simulate(model, q0, None, 0.02, h=1e-3, contact="stepping", n_out=3, tau=viscous_law())
    mb.simulate(model, q0, None, 0.02, contact="compliant", n_out=3)
    mb.simulate(model, q0, None, 0.02, contact="compliant", method="RK4", h=1e-3, n_out=3)


@case("contact")
def stepping_rows():
    """The time-stepping model's loop in its compiled variants (with and without loops), its Python loop (a torque
    callback), checkpoints' and events' chunks and a batch on threads."""
    import tempfile

    import multibody as mb
    from multibody.systems import slider_crank

    b = mb.ModelBuilder()
    b.add_body("ball", mass=1.0, inertia=np.eye(3) * 0.004)
    b.add_joint("free", mb.Free(), "ground", "ball")
    b.add_collision("floor", "ground", mb.HalfSpace())
    b.add_collision("ball", "ball", mb.Sphere(0.1), restitution=0.5)
    ball = b.build()
    q0 = ball.neutral()
    q0[2] = 0.2
    mb.simulate(ball, q0, None, 0.01, h=1e-3, contact="stepping")
    mb.simulate(ball, q0, None, 0.01, h=1e-3, contact="stepping", tau=lambda t, q, v: np.zeros(6))
    event = lambda t, q, v: q[2] - 0.15    # noqa: E731
    mb.simulate(ball, q0, None, 0.01, h=1e-3, contact="stepping", events=[event])
    with tempfile.TemporaryDirectory() as folder:
        mb.simulate(ball, q0, None, 0.01, h=1e-3, contact="stepping", checkpoint=f"{folder}/run.ckpt")
    mb.simulate_batch(ball, np.tile(q0, (2, 1)), None, 0.01, h=1e-3, contact="stepping")
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", limits=(-0.3, 0.3), restitution=0.5,
                latch=0.2)
    b.add_controller("hold", mb.JointPD(1.0, 0.1, target=[0.1]))
    mb.simulate(b.build(), [0.0], [1.0], 0.01, h=1e-3, contact="stepping")
    model, q, v = slider_crank.model()
    mb.simulate(model, q, v, 0.01, h=1e-3, contact="stepping")
    mb.simulate(model.with_controllers({"hold": mb.JointPD(1.0, 0.1, target=[0.0], joints=["O"])}), q, v, 0.01,
                h=1e-3, contact="stepping")


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


@case("demo")
def demo():
    """``multibody demo --brief``: the README's first command with short runs and small grids (the same calls),
    into a temporary folder."""
    import tempfile

    from multibody.cli import main

    with tempfile.TemporaryDirectory() as out:
        # the same calls, short: the full demo then compiles nothing. The command reports an error by its status
        # (one line on stderr), so a failed demo is raised here, not counted as warmed
        status = main(["demo", "--out", out, "--brief"])
    if status != 0:
        raise RuntimeError(f"multibody demo --brief ended with status {status} (its error is printed above)")


# ---- running -----------------------------------------------------------------------------------------------

class Compilations:
    """A listener of numba's ``"numba:compile"`` events (sent when a function is compiled, not when it is loaded
    from the cache): every compilation as a dict of the function, its signature, the case that ran it, the
    seconds it took in all and without the functions compiled within it (``self``)."""

    def __init__(self):
        from numba.core import event

        self.records, self.stack, self.case = [], [], None
        listener = type("Listener", (event.Listener,), dict(on_start=lambda _, ev: self.start(ev),
                                                            on_end=lambda _, ev: self.end(ev)))()
        event.register("numba:compile", listener)

    def start(self, ev):
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        self.stack.append(dict(function=f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', '?')}",
                               signature=str(ev.data.get("args")), case=self.case, t0=time.perf_counter(),
                               c0=time.process_time(), inner=0.0, inner_cpu=0.0))

    def end(self, ev):
        r = self.stack.pop()
        seconds, cpu = time.perf_counter() - r.pop("t0"), time.process_time() - r.pop("c0")
        r.update(seconds=seconds, cpu=cpu, self=seconds - r.pop("inner"), self_cpu=cpu - r.pop("inner_cpu"))
        if self.stack:
            self.stack[-1]["inner"] += seconds
            self.stack[-1]["inner_cpu"] += cpu
        self.records.append(r)

    def functions(self):
        """The package's functions compiled so far (``module.qualname``)."""
        return sorted({r["function"] for r in self.records if r["function"].startswith(("multibody", "_mb_"))})


def run(names=None, verbose=True, label="warm-up", compilations=None):
    """Run the registered cases (those in ``names``, default all) in this process, one after the other; returns
    ``{name: CPU seconds or the error message}``."""
    done = {}
    selected = [c for c in CASES if not names or c[1] in names]
    for group, name, func in selected:
        if compilations is not None:
            compilations.case = name
        t0 = time.process_time()
        try:
            func()
        except Exception as exc:  # a case that fails leaves its code to the JIT; report it and go on
            done[name] = f"{type(exc).__name__}: {exc}"
            if verbose:
                print(f"[{label}] {group}: {name} failed: {done[name]}\n{traceback.format_exc()}", end="", flush=True)
            continue
        done[name] = time.process_time() - t0
        if verbose:
            print(f"[{label}] {group}: {name} {done[name]:.0f} CPU s", flush=True)
    return done


def partition(names, jobs):
    """``names`` in ``jobs`` lists of about equal :data:`COST` (the costliest first, each to the lightest list),
    the cases of a group of :data:`TOGETHER` in one list (they compile the same loops: in two processes both would
    compile them); :data:`LAST` cases at the end of their list."""
    units = [[n for n in group if n in names] for group in TOGETHER]
    units = [u for u in units if u]
    grouped = {n for u in units for n in u}
    units += [[n] for n in names if n not in grouped]
    lists = [[] for _ in range(jobs)]
    loads = [0.0] * jobs
    for unit in sorted(units, key=lambda u: -sum(COST.get(n, 1) for n in u)):
        k = loads.index(min(loads))
        lists[k] += unit
        loads[k] += sum(COST.get(n, 1) for n in unit)
    return [[n for n in names if n not in LAST] + [n for n in names if n in LAST] for names in lists]


def run_parallel(jobs, verbose=True):
    """:data:`FIRST` in this process; the other cases but :data:`LAST` in ``jobs`` processes (:func:`partition`);
    then, in this process, the cases of each process that compiled a function another process compiled too (numba
    rewrites a function's index whole: of two processes that compiled it at once, the last one's write keeps only
    its own entries; run again, the case compiles what was lost and loads the rest), and :data:`LAST`. Returns
    ``{name: CPU seconds or the error message}``."""
    import subprocess
    import tempfile

    done = run([n for _, n, _ in CASES if n in FIRST], verbose=verbose)
    rest = [n for _, n, _ in CASES if n not in FIRST and n not in LAST]
    with tempfile.TemporaryDirectory(prefix="multibody-warmup-") as tmp:
        procs = []
        for k, names in enumerate(p for p in partition(rest, jobs) if p):
            report = os.path.join(tmp, f"{k}.json")
            procs.append((report, subprocess.Popen([sys.executable, "-m", "multibody.warmup", "--case", *names,
                                                    "--report", report, "--label", f"warm-up {k + 1}"])))
        reports = []
        for report, proc in procs:
            proc.wait()
            try:
                with open(report) as fh:
                    reports.append(json.load(fh))
            except (OSError, ValueError):          # the process died: its cases run here
                reports.append(dict(done={}, compiled={}))
    for r in reports:
        done.update(r["done"])
    again = []
    for k, r in enumerate(reports):
        others = {f for j, o in enumerate(reports) if j != k for fs in o["compiled"].values() for f in fs}
        again += [name for name, fs in r["compiled"].items() if others.intersection(fs)]
    again += [n for n in rest if n not in done]
    if again:
        if verbose:
            print(f"[warm-up] once more here (functions compiled in two processes): {', '.join(again)}", flush=True)
        done.update(run(again, verbose=verbose, label="warm-up, again"))
    last = [n for _, n, _ in CASES if n in LAST]
    if last:
        done.update(run(last, verbose=verbose))
    return done


#: the cases run first, in one process: they compile the kernels and the loops that the others call
FIRST = ("dynamics_of_every_joint", "tree_fixed_and_adaptive")
#: CPU seconds numba spends on the cases after FIRST when they run in one process in the order of :data:`CASES`
#: (``--profile``, docs/first-use.md; the others count 1), to share them among processes
COST = {"contact": 73, "formulations": 66, "derivatives_of_every_joint": 49, "linearizations": 40,
        "stepping_rows": 33, "batches": 28, "switching": 24, "controllers": 16, "demo": 15, "robot_toolkit": 12,
        "statics_and_modes": 5}
#: cases that run last, in this process once the others are done (the demo calls much of what they compile: in
#: one of the processes it would compile again what the other one compiled)
LAST = ("demo",)
#: cases that run in one process (their loops are the same: the stepping loop with and without cut joints; the
#: constrained formulations, their complex-step twins and the modes of the switching runs)
TOGETHER = (("contact", "stepping_rows"), ("formulations", "linearizations", "switching", "controllers"))


def main(argv=None):
    import argparse

    from multibody.cache import use_package_opt_level

    use_package_opt_level()           # before numba is imported (multibody.cache.PACKAGE_OPT_LEVEL)

    p = argparse.ArgumentParser(prog="python -m multibody.warmup", description=__doc__.split("\n\n")[0])
    p.add_argument("--case", nargs="+", metavar="NAME", help="the cases to run (default all)")
    p.add_argument("--jobs", type=int, default=1, help="processes at once after the first cases (default 1: all "
                   "in this process)")
    p.add_argument("--list", action="store_true", help="list the capabilities and their cases and exit")
    p.add_argument("--profile", metavar="FILE", help="write every compilation as a JSON line to FILE")
    p.add_argument("--report", help=argparse.SUPPRESS)
    p.add_argument("--label", default="warm-up", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.list:
        for capability, what in CAPABILITIES.items():
            names = [n for c, n, _ in CASES if c == capability]
            print(f"{capability:13s} {', '.join(names):40s} {what}")
        return 0
    unknown = sorted(set(args.case or ()) - {n for _, n, _ in CASES})
    if unknown:
        p.error(f"no case named {', '.join(unknown)}")
    os.environ.setdefault("MPLBACKEND", "Agg")
    compilations = Compilations() if args.profile or args.report else None
    t0 = time.perf_counter()
    c0 = time.process_time()
    if args.jobs > 1 and not args.case:
        done = run_parallel(args.jobs)
    else:
        done = run(args.case, label=args.label, compilations=compilations)
    if args.report:
        by_case = {}
        for r in compilations.records:
            if r["function"].startswith(("multibody", "_mb_")):
                by_case.setdefault(r["case"], set()).add(r["function"])
        with open(args.report, "w") as fh:
            json.dump(dict(done=done, compiled={k: sorted(v) for k, v in by_case.items()}), fh)
    if args.profile:
        with open(args.profile, "w") as fh:
            for r in compilations.records:
                fh.write(json.dumps(r) + "\n")
    failed = [n for n, r in done.items() if isinstance(r, str)]
    if not args.report:
        failures = f"; failed: {', '.join(failed)}" if failed else ""
        print(f"[warm-up] done in {time.perf_counter() - t0:.0f} s ({time.process_time() - c0:.0f} CPU s in this "
              f"process){failures}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
