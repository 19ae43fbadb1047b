"""The first calls after ``pip install``: each in a new process of a freshly installed copy of the package.

``multibody bench --only first-use`` copies the installed package into a temporary folder as the wheel installed
it — the files listed in its ``RECORD`` whose hashes still match, so the numba caches compiled when the wheel was
built (``multibody.warmup``) come along and nothing compiled since then does — and runs every probe below
in a new Python process on that copy, with empty user caches (``NUMBA_CACHE_DIR`` unset, ``MULTIBODY_CACHE`` an
empty folder). Run from a source tree (no install record) the copy has no compiled code at all: the figures are
then those of the JIT alone.

Each probe reports the CPU seconds of its timed part (``time.process_time`` around it, all threads of the
process) and of the whole process (``resource.getrusage`` of the child: interpreter start and imports included).
CPU seconds are what the targets of issue 27 are stated in: other processes on the same cores change them far less
than wall time. It also lists the package's functions that numba compiled during the timed part (numba's
``"numba:compile"`` events, sent only for a compilation, not for a load from the cache; counted when numba was
already imported by the setup): none, when the wheel's caches serve the call.
"""
import hashlib
import base64
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

#: the setup shared by the probes: a model that no warm-up case builds (a new model: numba specializes on types)
_MODEL = r"""
import numpy as np
import multibody as mb
b = mb.ModelBuilder(name="probe")
parent = "ground"
for k, joint in enumerate([mb.Revolute(axis=(0, 1, 0)), mb.Revolute(axis=(1, 0, 0)), mb.Prismatic(axis=(0, 0, 1)),
                           mb.Revolute(axis=(0, 0.6, 0.8)), mb.Revolute(axis=(0, 1, 0))]):
    b.add_body(f"b{k}", mass=1.0 + 0.1 * k, com=(0.0, 0.0, -0.3), inertia=[0.02, 0.03, 0.01])
    b.add_joint(f"j{k}", joint, parent, f"b{k}", placement=mb.Placement(translation=(0.0, 0.0, -0.5 if k else 0.0)))
    parent = f"b{k}"
model = b.build()
q = np.full(model.nq, 0.2); v = np.full(model.nv, 0.1); tau = np.zeros(model.nv)
"""

#: a compiled torque law of the user's (numba compiles it in the user's process: its own compilation is counted
#: in the timed part, not as the package's)
_LAW = r"""
import numba
@numba.njit
def law(t, q, v, out):
    for k in range(v.shape[0]):
        out[k] = -0.3 * v[k]
"""

#: a ball of another size than the warm-up's, on a tilted floor (docs/contact.md)
_BALL = r"""
import numpy as np
import multibody as mb
b = mb.ModelBuilder(name="probe ball")
b.add_body("ball", mass=2.0, inertia=(0.02, 0.02, 0.02))
b.add_joint("free", mb.Free(), parent="ground", child="ball")
b.add_collision("ball", "ball", mb.Sphere(0.15), friction=0.8)
b.add_collision("floor", "ground", mb.HalfSpace(), placement=mb.Placement(rotation=mb.rotation_about((0, 1, 0), 0.1)))
ball = b.build()
q0 = ball.neutral(); q0[2] = 0.5
"""

#: a double pendulum on stops, with a PD controller on its first hinge (docs/variable-structure.md, docs/robots.md)
_STOPS = r"""
import numpy as np
import multibody as mb
b = mb.ModelBuilder(name="probe stops")
b.add_body("upper", mass=1.0, com=(0, 0, -0.5), inertia=[0.02, 0.02, 0.001])
b.add_body("lower", mass=0.5, com=(0, 0, -0.4), inertia=[0.01, 0.01, 0.001])
b.add_joint("shoulder", mb.Revolute(axis=(0, 1, 0)), "ground", "upper", limits=(-0.5, 0.5), restitution=0.6)
b.add_joint("elbow", mb.Revolute(axis=(0, 1, 0)), "upper", "lower", placement=mb.Placement(translation=(0, 0, -1)),
            limits=(-1.0, 1.0), restitution=0.3)
stops = b.build()
"""

#: (name, target CPU seconds of the timed part, setup code, timed code): the probes of issue 27, then the first call
#: of each capability of ``multibody.warmup.CAPABILITIES`` (a model the warm-up did not build)
PROBES = [
    ("import multibody", 0.3, "", "import multibody"),
    ("first aba", 1.0, _MODEL, "mb.aba(model, q, v, tau)"),
    ("first rnea", 1.0, _MODEL, "mb.rnea(model, q, v, tau)"),
    ("first crba", 1.0, _MODEL, "mb.crba(model, q)"),
    ("first simulate RK4", 2.0, _MODEL, "mb.simulate(model, q, v, 0.1, method='RK4', h=1e-3)"),
    ("first simulate DOP853", 2.0, _MODEL, "mb.simulate(model, q, v, 0.1)"),
    ("first linearize", 3.0, _MODEL, "mb.linearize(model, q, np.zeros(model.nv))"),
    ("first IFToMM bicycle M2", 3.0, "from multibody.systems import bicycle",
     "bicycle.iftomm_maneuver('M2', rtol=1e-5, atol=1e-5, n_out=201)"),
    ("sweep worker, first point", 3.0, "",
     "from multibody.bench.first_use import sweep_point; from multibody.parallel.backends import run_chunk; "
     "import pickle; out = run_chunk(pickle.dumps(sweep_point), ['length'], [(0, (0.8,))], False, True); "
     "assert out['rows'][0][2] is None, out"),
    ("derivatives: aba_derivatives", 1.0, _MODEL, "mb.aba_derivatives(model, q, v, tau)"),
    ("frames: frame_jacobian", 1.0, _MODEL, "mb.frame_jacobian(model, q, 'b4', reference='world')"),
    ("centroidal: centroidal_map", 1.0, _MODEL, "mb.centroidal_map(model, q)"),
    ("robotics: inverse_kinematics", 1.0, _MODEL + "R, p = mb.frame_placement(model, q, 'b4')",
     "mb.inverse_kinematics(model, {'b4': p}, np.zeros(model.nq))"),
    ("robotics: distance", 1.0, _BALL, "mb.distance(ball, q0, ('ball', 'floor'))"),
    ("batches: simulate_batch RK4", 2.0, _MODEL,
     "mb.simulate_batch(model, np.tile(q, (16, 1)), None, 0.1, method='RK4', h=1e-3)"),
    ("controllers: JointPD, RK4", 2.0, _MODEL,
     "held = model.with_controllers({'pd': mb.JointPD(50.0, 5.0, q)}); "
     "mb.simulate(held, q + 0.1, v, 0.1, method='RK4', h=1e-3)"),
    ("controllers: compiled torque law", 2.0, _MODEL + _LAW,
     "mb.simulate(model, q, v, 0.1, method='RK4', h=1e-3, tau=law)"),
    ("switching: stops, DOP853", 2.0, _STOPS, "mb.simulate(stops, [0.4, 0.0], [1.0, 0.0], 1.0, rtol=1e-8)"),
    ("switching: stops, RK4", 2.0, _STOPS, "mb.simulate(stops, [0.4, 0.0], [1.0, 0.0], 1.0, method='RK4', h=1e-3)"),
    ("contact: stepping", 2.0, _BALL, "mb.simulate(ball, q0, None, 0.5, h=1e-3, contact='stepping')"),
    ("contact: compliant", 2.0, _BALL, "mb.simulate(ball, q0, None, 0.5, contact='compliant')"),
]

#: probes run only when named (``python -m multibody.bench.first_use --only demo``): the README's first command,
#: a minute of CPU, with the functions it compiles (none after the install)
OPTIONAL = [
    ("demo", 120.0, "import tempfile, numba; from multibody.cli import main",
     "with tempfile.TemporaryDirectory() as out: main(['demo', '--out', out])"),
]

#: the probes of the public capabilities (``tests/test_first_use.py`` runs them in one process)
CAPABILITY_PROBES = [p for p in PROBES if ":" in p[0]]

_CHILD = r"""
import json, sys, time
clock = time.process_time
compiled = []
def _count(module, name):
    if module.startswith(("multibody", "_mb_")):
        compiled.append(module + "." + name)
def _listen():
    from numba.core import event
    class Compilations(event.Listener):
        def on_start(self, ev):
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            _count(getattr(func, "__module__", "") or "", getattr(func, "__name__", "?"))
        def on_end(self, ev):
            pass
    event.register("numba:compile", Compilations())
t0 = clock()
{setup}
t1 = clock()
if "numba" in sys.modules:
    _listen()
    timed_compiled = True
else:
    timed_compiled = False
{timed}
t2 = clock()
print("FIRST-USE " + json.dumps(dict(setup=t1 - t0, timed=t2 - t1, compiled=compiled if timed_compiled else None,
    modules=sorted(m for m in ("numba", "scipy", "sympy", "matplotlib", "pandas") if m in sys.modules))))
"""


def sweep_point(length):
    """The point function of the sweep probe: a pendulum of this length, 1 s of DOP853 (what a worker runs
    first)."""
    import numpy as np

    import multibody as mb
    from multibody.systems.pendulums import simple_pendulum

    model = simple_pendulum(length=length)
    res = mb.simulate(model, np.array([0.5]), np.zeros(1), 1.0)
    return {"angle": float(res.q[-1, 0])}


def _record_files(package_dir):
    """``[(path relative to site-packages, sha256 digest or None)]`` of the wheel's install record of the package
    at ``package_dir``, or None when it was not installed from a wheel (a source tree, an editable install)."""
    from importlib import metadata

    try:
        dist = metadata.distribution("multibody")
    except metadata.PackageNotFoundError:
        return None
    files = dist.files or []
    site = os.path.dirname(package_dir)
    rows = []
    for f in files:
        path = os.path.realpath(os.path.join(site, str(f)))
        if path.startswith(os.path.realpath(package_dir) + os.sep):
            digest = None
            if f.hash is not None and f.hash.mode == "sha256":
                digest = f.hash.value
            rows.append((os.path.relpath(path, site), digest))
    return rows or None


def shipped_indexes():
    """``(shipped, for this machine)``: how many numba cache indexes (``.nbi``) the wheel install record of the
    imported package lists, and how many of them hold an entry for this numba and this CPU (numba's key: the
    target triple, CPU name and features). ``(0, 0)`` for a source tree."""
    import pickle

    import multibody
    import numba
    from numba.core.registry import cpu_target

    package_dir = os.path.dirname(os.path.abspath(multibody.__file__))
    rows = [rel for rel, _ in _record_files(package_dir) or () if rel.endswith(".nbi")]
    magic = cpu_target.target_context.codegen().magic_tuple()
    mine = 0
    for rel in rows:
        try:
            with open(os.path.join(os.path.dirname(package_dir), rel), "rb") as fh:
                if pickle.load(fh) != numba.__version__:
                    continue
                _, overloads = pickle.loads(fh.read())
        except (OSError, pickle.UnpicklingError, ValueError, EOFError):
            continue
        mine += any(key[1] == magic for key in overloads)
    return len(rows), mine


def _sha256(path):
    with open(path, "rb") as fh:
        return base64.urlsafe_b64encode(hashlib.sha256(fh.read()).digest()).rstrip(b"=").decode()


def fresh_copy(dest):
    """Copy the imported package into ``dest/multibody`` as it was installed (see the module docstring); returns
    ``"wheel"`` (the install record's files, unchanged ones only) or ``"source"`` (a tree without records: its
    files without ``__pycache__`` and ``precompiled`` folders)."""
    import multibody

    package_dir = os.path.dirname(os.path.abspath(multibody.__file__))
    rows = _record_files(package_dir)
    if rows is None:
        shutil.copytree(package_dir, os.path.join(dest, "multibody"),
                        ignore=shutil.ignore_patterns("__pycache__", "precompiled"))
        return "source"
    site = os.path.dirname(package_dir)
    for rel, digest in rows:
        src = os.path.join(site, rel)
        # numba's index (.nbi) of a function only gains entries when more is compiled: copied as it is, the entries
        # whose data (.nbc) the wheel did not ship find no file and count as misses
        changed = digest is not None and not rel.endswith(".nbi") and _sha256(src) != digest \
            if os.path.exists(src) else True
        if changed:
            continue
        os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel))
    return "wheel"


def run_probe(setup, timed, timeout=1800):
    """One probe in a new process on a fresh copy of the package: ``dict(setup, timed, process, wall, modules)``
    (CPU seconds; ``process`` from ``getrusage`` of the child)."""
    with tempfile.TemporaryDirectory(prefix="mb-first-use-") as tmp:
        kind = fresh_copy(os.path.join(tmp, "site"))
        env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
        env.update(PYTHONPATH=os.path.join(tmp, "site"), MULTIBODY_CACHE=os.path.join(tmp, "user-cache"),
                   PYTHONDONTWRITEBYTECODE="1", MULTIBODY_COMPILE_NOTICE="0")
        code = _CHILD.format(setup=setup, timed=timed)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp,
                              timeout=timeout)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"first-use probe failed:\n{timed}\n{proc.stderr[-3000:]}")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("FIRST-USE ")][-1]
    out = json.loads(line[len("FIRST-USE "):])
    out.update(process=(after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), wall=wall,
               package=kind, lines=[ln for ln in proc.stdout.splitlines() if ln.startswith("PROBE ")])
    return out


_EACH = r"""
for _name, _setup, _timed in {probes!r}:
    _ns = {{}}
    _n = len(compiled)
    exec(_setup, _ns)
    exec(_timed, _ns)
    print("PROBE " + json.dumps([_name, compiled[_n:]]))
"""


def compiled_by_capability(probes=None):
    """The probes of the capabilities (default :data:`CAPABILITY_PROBES`), one after the other in one new process
    on a fresh copy of the installed package: ``{probe name: the package's functions compiled by its setup and
    its call}`` (empty lists when the wheel's caches serve them all), and ``"wheel"`` or ``"source"``."""
    probes = [(name, setup, timed) for name, _, setup, timed in (probes or CAPABILITY_PROBES)]
    out = run_probe("import numba, multibody", _EACH.format(probes=probes))
    return dict(json.loads(line[len("PROBE "):]) for line in out["lines"]), out["package"]


def bench_first_use(verbose=True, only=None):
    """Every probe of :data:`PROBES` (or those named in ``only``) in a new process of a fresh copy of the
    installed package; returns ``{name: probe dict}`` and prints a table."""
    import multibody

    rows = {}
    if verbose:
        print("first calls after install: each in a new process on a fresh copy of "
              f"{os.path.dirname(multibody.__file__)}")
    for name, target, setup, timed in PROBES + OPTIONAL:
        if (only and name not in only) or (not only and (name, target, setup, timed) in OPTIONAL):
            continue
        rows[name] = dict(run_probe(setup, timed), target=target)
        if verbose:
            r = rows[name]
            if len(rows) == 1:
                origin = "the wheel install record" if r["package"] == "wheel" else "a source tree: no precompiled code"
                print(f"(package copied from {origin})")
                print()
                print("| first call | CPU s | target | process CPU s | wall s | compiled | loaded |")
                print("|---|---:|---:|---:|---:|---:|---|")
            compiled = "-" if r["compiled"] is None else len(r["compiled"])
            print(f"| {name} | {r['timed']:.2f} | {target:g} | {r['process']:.2f} | {r['wall']:.1f} | {compiled} | "
                  f"{', '.join(r['modules'])} |", flush=True)
    return rows


def main(argv=None):
    import argparse

    p = argparse.ArgumentParser(description="the first calls after install, each in a fresh process")
    p.add_argument("--only", nargs="+", help="probe names (\"demo\": the README's first command, only when named)")
    args = p.parse_args(argv)
    bench_first_use(only=args.only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
