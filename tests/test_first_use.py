"""The way to first results after install: the shipped generated modules (``multibody.cache``), the notice
while numba compiles (``multibody.compile_notice``), the warm-up's registry (``multibody.warmup``), the build
backend's switches (``build_backend/backend.py``) and the first-use bench's fresh copy of the package."""
import io
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from numba import njit
from numba.core import event

import multibody
from multibody import cache, compile_notice, warmup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _events(dispatcher):
    data = dict(dispatcher=dispatcher, args=(), return_type=None)
    return (event.Event("numba:compile", event.EventStatus.START, data=data),
            event.Event("numba:compile", event.EventStatus.END, data=data))


@njit
def _outer():
    return 1


@njit
def _inner():
    return 2


def test_notice_after_the_delay_with_progress_and_total(monkeypatch):
    """Nothing before DELAY seconds; then one line naming the outermost function of the package and counting the
    functions compiled; a last line 'done' when it ends."""
    stream = io.StringIO()
    notice = compile_notice.listener(stream, watch=False)
    monkeypatch.setattr(_outer.py_func, "__module__", "multibody.kernels.example")
    start, end = _events(_outer)
    inner_start, inner_end = _events(_inner)
    notice.on_start(start)
    t0 = notice.start
    notice.on_start(inner_start)
    notice.on_end(inner_end)
    assert notice.tick(t0 + 0.5 * compile_notice.DELAY) is True
    assert stream.getvalue() == ""
    notice.tick(t0 + compile_notice.DELAY + 1.0)
    first = stream.getvalue().splitlines()
    assert len(first) == 1
    assert first[0].startswith("multibody: compiling _outer for this machine (first use; cached afterwards)...")
    assert first[0].endswith(f"{compile_notice.DELAY + 1.0:.0f} s, 1 function")
    notice.on_end(end)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].endswith("2 functions done")
    assert notice.tick(t0 + 100.0) is False           # nothing compiling: no more lines
    assert len(stream.getvalue().splitlines()) == 2


def test_no_notice_for_other_code_or_short_compilations(monkeypatch):
    stream = io.StringIO()
    notice = compile_notice.listener(stream, watch=False)
    start, end = _events(_outer)                        # a function of this test module: not the package's
    notice.on_start(start)
    assert notice.tick(notice.start + 60.0) is False
    notice.on_end(end)
    monkeypatch.setattr(_inner.py_func, "__module__", "_mb_rk_0123")
    start, end = _events(_inner)
    notice.on_start(start)
    notice.tick(notice.start + 0.1)
    notice.on_end(end)                                  # ended before the delay: silent
    assert stream.getvalue() == ""


def test_notice_is_registered_with_numba_by_the_kernels():
    import multibody.kernels  # noqa: F401

    if os.environ.get("MULTIBODY_COMPILE_NOTICE", "1") == "0":
        pytest.skip("MULTIBODY_COMPILE_NOTICE=0")
    assert compile_notice._INSTALLED
    assert compile_notice._INSTALLED[0] in event._registered["numba:compile"]


def test_generated_module_shipped_with_the_package_is_used(tmp_path, monkeypatch):
    """A module whose source is in ``precompiled/<kind>`` is imported from there, not from the user cache."""
    source = "VALUE = 42  # shipped\n"
    shipped = tmp_path / "precompiled"
    user = tmp_path / "user"
    monkeypatch.setattr(cache, "PRECOMPILED", str(shipped))
    monkeypatch.setenv("MULTIBODY_CACHE", str(user))
    import hashlib

    name = "_mb_test_" + hashlib.sha1(source.encode()).hexdigest()[:16]
    (shipped / "kind").mkdir(parents=True)
    (shipped / "kind" / f"{name}.py").write_text(source)
    try:
        mod = cache.import_generated("_mb_test_", source, "kind")
        assert mod.VALUE == 42 and os.path.dirname(mod.__file__) == str(shipped / "kind")
        assert not user.exists()
        other = cache.import_generated("_mb_test_", "VALUE = 7\n", "kind")   # not shipped: the user cache
        assert other.VALUE == 7 and os.path.commonpath([other.__file__, str(user)]) == str(user)
    finally:
        for key in [k for k in sys.modules if k.startswith("_mb_test_")]:
            del sys.modules[key]


def test_fingerprint_ignores_the_shipped_modules(tmp_path, monkeypatch):
    """Shipping generated modules does not change the package's fingerprint (the key of the user cache)."""
    before = cache.package_fingerprint()
    package = os.path.dirname(os.path.abspath(multibody.__file__))
    folder = os.path.join(package, "precompiled", "fingerprint-test")
    existed = os.path.exists(os.path.join(package, "precompiled"))
    os.makedirs(folder, exist_ok=True)
    try:
        with open(os.path.join(folder, "_mb_x.py"), "w") as fh:
            fh.write("X = 1\n")
        cache.package_fingerprint.cache_clear()
        assert cache.package_fingerprint() == before
    finally:
        import shutil

        shutil.rmtree(os.path.join(package, "precompiled") if not existed else folder)
        cache.package_fingerprint.cache_clear()


def test_warmup_registry():
    names = [name for _, name, _ in warmup.CASES]
    assert len(names) == len(set(names))
    assert set(warmup.COST) <= set(names) and set(warmup.FIRST) <= set(names) and set(warmup.LAST) <= set(names)
    assert {c for c, _, _ in warmup.CASES} == set(warmup.CAPABILITIES)       # every capability has a case
    with pytest.raises(ValueError, match="unknown capability"):
        warmup.case("no such capability")


def test_every_capability_has_a_first_use_probe():
    """``multibody bench --only first-use`` prints the first call of every public capability the warm-up covers."""
    from multibody.bench import first_use

    probed = {name.split(":")[0] for name, _, _, _ in first_use.CAPABILITY_PROBES}
    covered = set(warmup.CAPABILITIES) - {"dynamics", "simulate", "formulations", "linearize", "systems", "demo"}
    assert covered <= probed       # the others: the probes of issue 27 (aba, simulate, linearize, M2, the demo)


def test_warmup_reports_a_failing_case_and_goes_on(monkeypatch, capsys):
    calls = []

    def broken():
        raise ValueError("no such model")

    monkeypatch.setattr(warmup, "CASES", [("g", "broken", broken), ("g", "fine", lambda: calls.append(1))])
    done = warmup.run()
    assert done["broken"] == "ValueError: no such model" and calls == [1] and done["fine"] >= 0.0
    assert "broken failed: ValueError: no such model" in capsys.readouterr().out


def test_partition_shares_the_cost_and_keeps_the_demo_last(monkeypatch):
    monkeypatch.setattr(warmup, "COST", {"a": 5, "b": 4, "c": 3, "demo": 6})
    lists = warmup.partition(["a", "b", "c", "d", "demo"], 2)
    assert sorted(n for names in lists for n in names) == ["a", "b", "c", "d", "demo"]
    assert [names[-1] for names in lists if "demo" in names] == ["demo"]
    loads = [sum(warmup.COST.get(n, 1) for n in names) for names in lists]
    assert max(loads) - min(loads) <= 1


def test_partition_keeps_a_group_in_one_process(monkeypatch):
    monkeypatch.setattr(warmup, "COST", {"a": 5, "b": 4, "c": 3, "d": 3})
    monkeypatch.setattr(warmup, "TOGETHER", (("b", "c"),))
    lists = warmup.partition(["a", "b", "c", "d"], 2)
    assert sorted(sorted(names) for names in lists) == [["a", "d"], ["b", "c"]]
    assert all(set(group) <= set(names) or not set(group) & set(names)
               for group in warmup.TOGETHER for names in warmup.partition([n for _, n, _ in warmup.CASES], 2))


def test_parallel_warmup_runs_again_the_cases_that_compiled_a_function_twice(monkeypatch):
    """The first cases here, the others in ``jobs`` processes; then here the cases of a process that compiled a
    function another process compiled too (its index entry may be lost), and no other case."""
    reports = {("x", "y"): dict(done={"x": 1.0, "y": 1.0}, compiled={"x": ["multibody.k.f"], "y": ["multibody.k.g"]}),
               ("z",): dict(done={"z": 1.0}, compiled={"z": ["multibody.k.f", "multibody.k.h"]})}
    started = []

    class Process:
        def __init__(self, args):
            self.names = args[args.index("--case") + 1:args.index("--report")]
            self.report = args[args.index("--report") + 1]
            started.append(self.names)

        def wait(self):
            with open(self.report, "w") as fh:
                json.dump(reports[tuple(self.names)], fh)

    monkeypatch.setattr(subprocess, "Popen", Process)
    monkeypatch.setattr(warmup, "CASES", [("dynamics", n, None) for n in ("first", "x", "y", "z")])
    monkeypatch.setattr(warmup, "FIRST", ("first",))
    monkeypatch.setattr(warmup, "COST", {"x": 2, "y": 1, "z": 3})
    ran = []
    monkeypatch.setattr(warmup, "run", lambda names, verbose=True, label="": ran.append(list(names)) or
                        {n: 0.0 for n in names})
    done = warmup.run_parallel(2, verbose=False)
    assert ran[0] == ["first"] and sorted(started) == [["x", "y"], ["z"]]
    assert sorted(ran[1]) == ["x", "z"] and len(ran) == 2          # y compiled nothing the other one did
    assert set(done) == {"first", "x", "y", "z"}


def test_build_backend_switches(monkeypatch):
    backend = _backend()
    monkeypatch.delenv("MULTIBODY_NO_PRECOMPILE", raising=False)
    assert backend.precompile()
    monkeypatch.setenv("MULTIBODY_NO_PRECOMPILE", "0")
    assert backend.precompile()
    monkeypatch.setenv("MULTIBODY_NO_PRECOMPILE", "1")
    assert not backend.precompile()
    reqs = backend.runtime_requirements()
    assert any(r.startswith("numba") for r in reqs) and any(r.startswith("numpy") for r in reqs)
    monkeypatch.setenv("MULTIBODY_BUILD_CACHE", "0")
    assert backend.cache_root() is None
    monkeypatch.setenv("MULTIBODY_BUILD_CACHE", "/somewhere")
    assert backend.cache_root() == "/somewhere"
    monkeypatch.delenv("MULTIBODY_BUILD_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/xdg")
    assert backend.cache_root() == os.path.join("/xdg", "multibody", "build")


def test_a_build_without_the_warm_up_ships_nothing_compiled(tmp_path):
    """setuptools reuses a checkout's ``build/lib``: what an earlier build compiled into it is removed by the next
    build, the one with ``MULTIBODY_NO_PRECOMPILE=1`` too (``backend.clear``), the sources kept."""
    backend = _backend()
    build = tmp_path / "build"
    (build / "multibody" / "kernels" / "__pycache__").mkdir(parents=True)
    (build / "multibody" / "precompiled" / "fixed_step").mkdir(parents=True)
    (build / "multibody" / "kernels" / "aba.py").write_text("def aba(): pass\n")
    (build / "multibody" / "kernels" / "__pycache__" / "aba.aba_kernel-10.py311.nbi").write_bytes(b"index")
    (build / "multibody" / "kernels" / "__pycache__" / "aba.aba_kernel-10.py311.1.nbc").write_bytes(b"code")
    (build / "multibody" / "precompiled" / "fixed_step" / "_mb_rk_0.py").write_text("loop = 1\n")
    assert len(backend.artifacts(str(build))) == 3
    backend.clear(str(build))
    assert backend.artifacts(str(build)) == [] and not (build / "multibody" / "precompiled").exists()
    assert (build / "multibody" / "kernels" / "aba.py").read_text() == "def aba(): pass\n"


def _backend():
    sys.path.insert(0, os.path.join(ROOT, "build_backend"))
    try:
        import backend
    finally:
        sys.path.pop(0)
    return backend


def test_build_cache_keeps_the_compiled_files_of_one_package_and_machine(tmp_path, monkeypatch):
    """The build cache (``build_backend/backend.py``): a build stores what the warm-up wrote (numba's caches, the
    generated modules) under a key of every other file of the package and of the machine; a build of the same files
    on the same machine gets them back; a changed source, another machine or a damaged entry gets nothing."""
    backend = _backend()
    build = tmp_path / "build"
    (build / "multibody" / "kernels" / "__pycache__").mkdir(parents=True)
    (build / "multibody" / "precompiled" / "fixed_step").mkdir(parents=True)
    (build / "multibody" / "kernels" / "aba.py").write_text("def aba(): pass\n")
    compiled = {"multibody/kernels/__pycache__/aba.aba_kernel-10.py311.nbi": b"index",
                "multibody/kernels/__pycache__/aba.aba_kernel-10.py311.1.nbc": b"machine code",
                "multibody/precompiled/fixed_step/_mb_rk_0.py": b"loop = 1\n"}
    for rel, data in compiled.items():
        (build / rel).write_bytes(data)
    monkeypatch.setattr(backend, "machine", lambda env: "cpu A")
    key = backend.build_key(str(build), {})
    assert sorted(backend.artifacts(str(build))) == sorted(os.path.normpath(r) for r in compiled)
    root = tmp_path / "cache"
    backend.store(str(root), key, str(build))
    for rel in compiled:
        (build / rel).unlink()
    assert backend.build_key(str(build), {}) == key                # the compiled files are not part of the key
    assert backend.restore(str(root), key, str(build))
    assert all((build / rel).read_bytes() == data for rel, data in compiled.items())
    (build / "multibody" / "kernels" / "aba.py").write_text("def aba(): return 1\n")
    assert backend.build_key(str(build), {}) != key                 # a changed source: another key
    monkeypatch.setattr(backend, "machine", lambda env: "cpu B")
    (build / "multibody" / "kernels" / "aba.py").write_text("def aba(): pass\n")
    assert backend.build_key(str(build), {}) != key                 # another machine: another key
    assert not backend.restore(str(root), "no such key", str(build))
    entry = root / key / "files" / "multibody" / "kernels" / "__pycache__" / "aba.aba_kernel-10.py311.1.nbc"
    entry.write_bytes(b"damaged")
    assert not backend.restore(str(root), key, str(build))          # checked against its digests
    monkeypatch.setattr(backend, "machine", lambda env: None)
    assert backend.build_key(str(build), {}) is None                # a machine that cannot be told: no cache


def test_build_cache_keeps_the_most_recently_used_entries(tmp_path):
    backend = _backend()
    for k in range(backend.KEEP + 2):
        (tmp_path / f"entry{k}").mkdir()
        os.utime(tmp_path / f"entry{k}", (1e9 + k, 1e9 + k))
    (tmp_path / ".incoming-x").mkdir()                              # another build writing: left alone
    backend.prune(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == [".incoming-x"] + [
        f"entry{k}" for k in range(2, backend.KEEP + 2)]


def test_fresh_copy_of_a_source_tree_has_no_compiled_code(tmp_path, monkeypatch):
    from multibody.bench import first_use

    monkeypatch.setattr(first_use, "_record_files", lambda package_dir: None)
    assert first_use.fresh_copy(str(tmp_path)) == "source"
    copied = tmp_path / "multibody"
    assert (copied / "kernels" / "aba.py").exists()
    assert not [p for p in copied.rglob("*") if p.suffix in (".nbi", ".nbc") or p.name == "__pycache__"]


def test_probe_runs_in_a_new_process():
    from multibody.bench import first_use

    out = first_use.run_probe("", "import multibody")
    assert out["timed"] > 0.0 and out["process"] >= out["timed"] and out["package"] in ("wheel", "source")


_COMPILED_CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from numba.core import event
compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__name__)
    def on_end(self, ev):
        pass
event.register("numba:compile", Count())
import kernel
print(json.dumps(dict(value=kernel.twice(21.0), compiled=compiled)))
"""


def test_numba_cache_found_after_a_copy_with_new_times(tmp_path):
    """What the wheel's shipped caches rest on: numba's cache index of a function keys on its source file's content
    (not its path's modification time), so caches compiled in one folder serve a copy of it (pip writes every
    file anew) without compiling, on the same machine."""
    source = textwrap.dedent("""
        from numba import njit

        @njit(cache=True)
        def twice(x):
            return 2.0 * x
    """)
    built, installed = tmp_path / "build", tmp_path / "site"
    built.mkdir()
    (built / "kernel.py").write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}

    def run(folder):
        out = subprocess.run([sys.executable, "-c", _COMPILED_CHILD, str(folder)], capture_output=True, text=True,
                             env=env, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run(built)
    assert first["value"] == 42.0 and first["compiled"] == ["twice"]
    assert [p.suffix for p in (built / "__pycache__").iterdir() if p.suffix in (".nbi", ".nbc")]
    shutil.copytree(built, installed, copy_function=shutil.copy)      # new files: new modification times
    for path in installed.rglob("*"):
        os.utime(path, (1.0e9, 1.0e9))
    again = run(installed)
    assert again["value"] == 42.0 and again["compiled"] == []


_PACKAGE_CHANGED_CHILD = """
import sys
import multibody.cache
if sys.argv[2] == "changed":     # what an edit of any other file of the package does to its fingerprint
    multibody.cache.package_fingerprint = lambda: "another package"
""" + _COMPILED_CHILD


def test_a_kernel_cache_entry_is_keyed_on_the_whole_package(tmp_path):
    """numba keys a function's cache entry on the function's own source file; the package's dispatcher keys it on
    the whole package as well (``kernels.addresses.SlimCacheImpl``): a kernel holds the code of the helpers it
    inlines from other files (the stepping loop holds the step and its rows), and an entry written before one of
    them changed must not be loaded after it. A kernel of the package's dispatcher in a file of its own: compiled
    and cached in one process, loaded in the next, compiled again when the package's fingerprint has changed."""
    (tmp_path / "kernel.py").write_text(textwrap.dedent("""
        from numba import njit
        from multibody.kernels.spatial import KERNEL

        @njit(**KERNEL)
        def twice(x):
            return 2.0 * x
    """))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}

    def run(package):
        out = subprocess.run([sys.executable, "-c", _PACKAGE_CHANGED_CHILD, str(tmp_path), package],
                             capture_output=True, text=True, env=env, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])

    assert run("same") == {"value": 42.0, "compiled": ["twice"]}
    assert run("same") == {"value": 42.0, "compiled": []}            # loaded from its entry
    assert run("changed") == {"value": 42.0, "compiled": ["twice"]}  # the package changed: compiled again
    assert run("changed") == {"value": 42.0, "compiled": []}


def test_installed_wheel_compiles_nothing_on_the_first_calls():
    """Installed from a wheel built on this machine (``pip install .``): the first aba, rnea and crba of a new
    model, then the first call of every capability the warm-up covers (``first_use.CAPABILITY_PROBES``: derivatives,
    frames, centroidal, batches, controllers and a compiled torque law, runs across stops, contact stepping and
    compliant), one after the other in a new process on a copy of the package as the wheel installed it, load the
    shipped code and compile none of the package's functions."""
    from multibody.bench import first_use

    shipped, mine = first_use.shipped_indexes()
    if not shipped:
        pytest.skip("not installed from a wheel that ships compiled code (a source tree or MULTIBODY_NO_PRECOMPILE)")
    if not mine:
        pytest.skip("the wheel was compiled for another CPU or numba: its code compiles on first use")
    setup = [p for p in first_use.PROBES if p[0] == "first aba"][0][2]
    probes = [("first aba, rnea, crba", 1.0, setup, "mb.aba(model, q, v, tau); mb.rnea(model, q, v, tau); "
               "mb.crba(model, q)")] + first_use.CAPABILITY_PROBES
    compiled, package = first_use.compiled_by_capability(probes)
    assert package == "wheel" and list(compiled) == [p[0] for p in probes]
    assert {name: functions for name, functions in compiled.items() if functions} == {}


@pytest.mark.parametrize("setting, expected", [(None, int(cache.PACKAGE_OPT_LEVEL)), ("2", 2)])
def test_the_package_compiles_at_its_opt_level_unless_numba_opt_is_set(setting, expected):
    """The warm-up, the command line and the suite compile at ``PACKAGE_OPT_LEVEL``: numba's code generator, made
    after the call, reads it; a user's ``NUMBA_OPT`` wins."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_OPT"}
    if setting is not None:
        env["NUMBA_OPT"] = setting
    script = ("from multibody.cache import use_package_opt_level; use_package_opt_level()\n"
              "from numba.core import config\nfrom numba.core.registry import cpu_target\n"
              "cpu_target.target_context.codegen()\nprint(int(config.OPT))")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert int(out.stdout.strip()) == expected


def test_a_demo_that_fails_in_the_warm_up_is_reported(monkeypatch):
    """``multibody demo`` reports an error by its status (one line on stderr); the warm-up's case raises it instead
    of counting the demo's code as compiled."""
    import multibody.cli

    monkeypatch.setattr(multibody.cli, "main", lambda argv: 1)
    with pytest.raises(RuntimeError, match="status 1"):
        warmup.demo()
