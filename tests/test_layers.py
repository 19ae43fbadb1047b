"""The package's layers as a contract over its import graph (docs/architecture.md, "The layers").

Every ``import`` of ``src/multibody`` is read from the source (``ast``), those inside functions too, and checked:
imports go one way, from a layer to the layers below it (:data:`LAYERS`, bottom first; the parts of one layer
do not import each other); no import cycle between files; no module imports another module's private
(underscore) name; matplotlib only under ``viz/`` and ``cli/``; no file over 800 lines. docs/architecture.md's
table of the layers is the same list, and ``import multibody`` stays free of the heavy optional libraries. The last
test builds a throw-away package that breaks each rule and checks that the same checks find every break.
"""
import ast
import collections
import os
import pathlib
import re
import subprocess
import sys

import pytest

SRC = pathlib.Path(__file__).resolve().parent.parent / "src"
ARCHITECTURE = SRC.parent / "docs" / "architecture.md"

#: the layers, bottom first: a part (a subpackage or a top-level module of ``multibody``) imports only the parts of
#: the layers below its own. ``multibody`` itself (the package's ``__init__``, the public face) sits just above
#: the highest part it imports at its top level; what it imports on first use (``__getattr__``) is free.
LAYERS = (
    ("errors", "compile_notice"),
    ("cache", "codegen", "files"),
    ("kernels",),
    ("model",),
    ("algorithms",),
    ("result", "integrate"),
    ("rows",),
    ("symbolic",),
    ("formulations",),
    ("switching",),
    ("contact",),
    ("io",),
    ("simulation",),
    ("analysis",),
    ("systems", "examples"),
    ("viz",),
    ("parallel",),
    ("bench",),
    ("cli",),
    ("warmup", "__main__"),
)
FACE = "multibody"
#: the highest part whose public names the face exports (imported on first use, through ``__getattr__``): the face
#: sits just above it, however little it imports at its top level
FACE_ABOVE = "analysis"
MAX_LINES = 800
PLOTTING = ("viz", "cli")  # the parts that may import matplotlib


def modules(root, package="multibody"):
    """{module name: path} of the package under ``root``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        name = ".".join(path.relative_to(root).with_suffix("").parts)
        out[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return out


Import = collections.namedtuple("Import", "source target names lazy line")


def imports(root, package="multibody"):
    """Every import of the package's modules: ``Import(source, target, names, lazy, line)`` with ``target`` the
    module imported (a name imported from a package that is a module of its own counts as that module), ``names``
    the names taken from it (empty for ``import x``) and ``lazy`` True inside a function or class body."""
    mods = modules(root, package)

    def resolve(name):
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name

    out = []
    for src, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        top = {id(n) for n in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    out.append(Import(src, a.name, (), id(node) not in top, node.lineno))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    pkg = src if path.name == "__init__.py" else src.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    base = pkg + ("." + base if base else "")
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    if sub in mods:
                        out.append(Import(src, sub, (), id(node) not in top, node.lineno))
                    else:
                        out.append(Import(src, base, (a.name,), id(node) not in top, node.lineno))
    return [i._replace(target=resolve(i.target)) if i.target.split(".")[0] == package else i for i in out], mods


def part(module, package="multibody"):
    """The part of ``module``: its subpackage or top-level module (``multibody`` for the package's face)."""
    bits = module.split(".")
    return bits[1] if len(bits) > 1 else package


def level_of(layers, package="multibody"):
    return {p: k for k, names in enumerate(layers) for p in names}


def layer_breaks(edges, layers, package="multibody"):
    """The imports against the layers: ``(source, target, why)``."""
    level = level_of(layers, package)
    face_level = max((level.get(part(i.target, package), -1) for i in edges
                      if i.source == package and not i.lazy and i.target.startswith(package + ".")),
                     default=-1)
    if package == FACE:
        face_level = max(face_level, level[FACE_ABOVE])
    out = []
    for i in edges:
        if not i.target.startswith(package) or i.source == i.target:
            continue
        a, b = part(i.source, package), part(i.target, package)
        if a == package or a == b:
            continue
        la = level.get(a)
        if la is None:
            out.append((i.source, i.target, f"part '{a}' is in no layer"))
            continue
        lb = face_level + 0.5 if b == package else level.get(b)
        if lb is None:
            out.append((i.source, i.target, f"part '{b}' is in no layer"))
        elif lb >= la:
            out.append((i.source, i.target, f"'{a}' (layer {la}) imports '{b}' (layer {lb})"))
    return out


def file_cycles(edges, package="multibody"):
    """The strongly connected components (of more than one module) of the graph of imports between modules."""
    graph = collections.defaultdict(set)
    for i in edges:
        if i.target.startswith(package) and i.target != i.source:
            graph[i.source].add(i.target)
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def private_imports(edges, package="multibody"):
    """Imports of another module's private names (``from x import _y``)."""
    return [(i.source, i.target, n) for i in edges if i.target.startswith(package) and i.target != i.source
            for n in i.names if n.startswith("_") and not n.startswith("__")]


def plotting_imports(edges, package="multibody", allowed=PLOTTING):
    return [(i.source, i.target) for i in edges if i.target.split(".")[0] == "matplotlib"
            and part(i.source, package) not in allowed]


def long_files(mods, limit=MAX_LINES):
    return [(name, n) for name, path in mods.items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > limit]


@pytest.fixture(scope="module")
def graph():
    return imports(SRC)


def test_every_part_has_a_layer(graph):
    edges, mods = graph
    parts = {part(m) for m in mods} - {FACE}
    assert sorted(parts - set(level_of(LAYERS))) == []


def test_imports_go_down_the_layers(graph):
    assert layer_breaks(graph[0], LAYERS) == []


def test_no_import_cycle_between_files(graph):
    assert file_cycles(graph[0]) == []


def test_no_private_name_imported_from_another_module(graph):
    assert private_imports(graph[0]) == []


def test_matplotlib_only_in_viz_and_cli(graph):
    assert plotting_imports(graph[0]) == []


def test_no_file_over_800_lines(graph):
    assert long_files(graph[1]) == []


def test_architecture_lists_the_layers():
    """docs/architecture.md's table of the layers names the parts of :data:`LAYERS`, a row per layer, in order."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    assert [tuple(re.findall(r"`([\w.]+)`", cell)) for cell in rows] == list(LAYERS)


def test_import_multibody_stays_light():
    """``import multibody`` (and the command line's module) imports none of sympy, matplotlib, pandas, dask or
    scipy.integrate: they are imported where they are used."""
    code = ("import sys, multibody, multibody.cli; "
            "print(sorted(m for m in ('sympy', 'matplotlib', 'pandas', 'dask', 'scipy.integrate') if m in sys.modules))")
    env = dict(os.environ, PYTHONPATH=str(SRC))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "[]"


def test_the_checks_find_a_violating_package(tmp_path):
    """A throw-away package ``pkg`` with layers low → high that breaks every rule once: each check finds that
    break and nothing else."""
    root = tmp_path / "src"
    files = {
        "pkg/__init__.py": "from pkg.mid.c import api\n",
        "pkg/low.py": "def helper():\n    from pkg.high import api  # lazily, upwards\n    import pkg  # the face, above\n",
        "pkg/mid/__init__.py": "",
        "pkg/mid/a.py": "from pkg.mid import b\nfrom pkg.mid.c import _secret\n",
        "pkg/mid/b.py": "from pkg.mid.a import x\nimport matplotlib.pyplot\n",
        "pkg/mid/c.py": "api = 1\n_secret = 2\n",
        "pkg/high.py": "import pkg.mid.a\n" + "\n" * 802,
        "pkg/stray.py": "",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    layers = (("low",), ("mid",), ("high",))
    edges, mods = imports(root, "pkg")
    assert sorted((s, t) for s, t, _ in layer_breaks(edges, layers, "pkg")) == [("pkg.low", "pkg"),
                                                                               ("pkg.low", "pkg.high")]
    assert file_cycles(edges, "pkg") == [["pkg.mid.a", "pkg.mid.b"]]
    assert private_imports(edges, "pkg") == [("pkg.mid.a", "pkg.mid.c", "_secret")]
    assert plotting_imports(edges, "pkg", allowed=("high",)) == [("pkg.mid.b", "matplotlib.pyplot")]
    assert long_files(mods) == [("pkg.high", 803)]
    assert {part(m, "pkg") for m in mods} - {"pkg"} - set(level_of(layers)) == {"stray"}
