"""The rules that keep the suite's verdict the same on every machine, read from the test files themselves:

* no test depends on an optimizer's or a root finder's success flag or iteration path (``res.success``,
  ``res.nit``, ``sol.converged`` of ``scipy.optimize``): what such a solver reports depends on the machine's rounding
  and the library's version (BFGS "precision loss" near its tolerance); a test checks the point found against a
  bound derived from it (its residual or gradient), as ``test_iftomm.py`` does;
* every hypothesis test runs derandomized and without an example database (the ``"multibody"`` profile of
  ``conftest.py``; no test turns it off or fixes a random seed of its own);
* a test that draws a model with joint stops (``@given`` and ``limits=``) gives its runs a step budget
  (``max_steps=``): no draw can run without end.
"""
import ast
import functools
from pathlib import Path

from hypothesis import settings

TESTS = Path(__file__).parent
#: the solvers of scipy.optimize whose result objects carry a success flag or iteration counts
SOLVERS = {"minimize", "minimize_scalar", "root", "root_scalar", "least_squares", "linprog", "milp", "shgo",
           "basinhopping", "differential_evolution", "dual_annealing", "fsolve", "brentq", "brenth", "ridder",
           "bisect", "newton", "toms748", "curve_fit"}
#: what they report about their own run
FLAGS = {"success", "status", "message", "nit", "nfev", "njev", "nhev", "converged", "iterations", "flag"}


@functools.lru_cache(maxsize=None)
def _sources():
    """``(path, text)`` of the suite's files, this one excepted."""
    return tuple((p, p.read_text()) for p in sorted(TESTS.glob("*.py")) if p.name != Path(__file__).name)


@functools.lru_cache(maxsize=None)
def _tree(path):
    return ast.parse(dict(_sources())[path])


def _called(node):
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def solver_flag_reads(tree):
    """``(line, name.flag)`` of every read of a solver's report (:data:`FLAGS`) on a name bound to a
    :data:`SOLVERS` call's result (``res = minimize(...)``, ``x, info, ier, msg = fsolve(..., full_output=True)``),
    in any function of the module ``tree``."""
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        bound, reports = set(), set()    # result objects; the report entries of a full_output tuple
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _called(node.value) in SOLVERS:
                full = any(k.arg == "full_output" for k in node.value.keywords)
                for target in node.targets:
                    names = target.elts if isinstance(target, ast.Tuple) else [target]
                    for k, n in enumerate(names):
                        if isinstance(n, ast.Name) and not isinstance(target, ast.Tuple):
                            bound.add(n.id)
                        elif isinstance(n, ast.Name) and full and k > 0:
                            bound.add(n.id)
                            reports.add(n.id)
        if not bound:
            continue
        asserted = {id(n) for a in ast.walk(fn) if isinstance(a, ast.Assert) for n in ast.walk(a)}
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr in FLAGS and isinstance(node.value, ast.Name) and \
                    node.value.id in bound:
                found.append((node.lineno, f"{node.value.id}.{node.attr}"))
            elif isinstance(node, ast.Name) and node.id in reports and id(node) in asserted:
                found.append((node.lineno, node.id))   # a full_output report (ier, info) asserted directly
    return sorted(set(found))


def test_rule_checker_finds_a_success_flag():
    """The checker below is not blind: it finds the pattern this suite once had."""
    tree = ast.parse("from scipy.optimize import minimize\n"
                     "def f():\n    res = minimize(g, x0)\n    assert res.success, res.message\n    return res.x\n")
    assert [r for _, r in solver_flag_reads(tree)] == ["res.message", "res.success"]
    tree = ast.parse("def f():\n    x, info, ier, msg = fsolve(g, x0, full_output=True)\n    assert ier == 1\n")
    assert [r for _, r in solver_flag_reads(tree)] == ["ier"]
    clean = ast.parse("def f():\n    res = minimize(g, x0)\n    assert abs(grad(res.x)).max() < 1e-9\n")
    assert solver_flag_reads(clean) == []


def test_no_test_reads_a_solvers_success_flag():
    bad = []
    for path, text in _sources():
        if any(f"{name}(" in text for name in SOLVERS):
            bad += [f"{path.name}:{line}: {what}" for line, what in solver_flag_reads(_tree(path))]
    assert not bad, "tests that read a solver's own report instead of checking its point: " + "; ".join(bad)


def _settings_calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _called(node) in ("settings", "seed"):
            yield node


def test_hypothesis_is_derandomized_without_a_database():
    """The profile is loaded (this test runs under it) and no test file overrides it."""
    assert settings.default.derandomize and settings.default.database is None and settings.default.deadline is None
    bad = []
    for path, text in _sources():
        if "settings(" not in text and "seed(" not in text:
            continue
        for call in _settings_calls(_tree(path)):
            if _called(call) == "seed":
                bad.append(f"{path.name}:{call.lineno}: @seed")
            for k in call.keywords:
                if k.arg == "derandomize" and not (isinstance(k.value, ast.Constant) and k.value.value is True):
                    bad.append(f"{path.name}:{call.lineno}: derandomize={ast.unparse(k.value)}")
                if k.arg == "database" and not (isinstance(k.value, ast.Constant) and k.value.value is None):
                    bad.append(f"{path.name}:{call.lineno}: database={ast.unparse(k.value)}")
                if k.arg == "deadline" and not (isinstance(k.value, ast.Constant) and k.value.value is None):
                    bad.append(f"{path.name}:{call.lineno}: deadline={ast.unparse(k.value)}")
    assert not bad, "; ".join(bad)


def test_drawn_runs_with_stops_have_a_step_budget():
    """A hypothesis test whose models have joint stops (``limits=``) and that simulates them passes ``max_steps``
    to every ``simulate`` call of the test function."""
    bad = []
    for path, text in _sources():
        if "limits=" not in text or "@given" not in text:
            continue
        for fn in ast.walk(_tree(path)):
            if not isinstance(fn, ast.FunctionDef) or not any(
                    isinstance(d, ast.Call) and _called(d) == "given" for d in fn.decorator_list):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Call) and _called(node) == "simulate" and \
                        "max_steps" not in {k.arg for k in node.keywords}:
                    bad.append(f"{path.name}:{node.lineno} ({fn.name})")
    assert not bad, "simulate calls of drawn models with stops without max_steps: " + "; ".join(bad)
