"""The ``multibody`` command's help and error paths: every sub-command has a help line and a plain-text
description, every argument error is one line with status 2 (never a traceback), output files are checked
before the work, and ``MODULE:FUNCTION`` / ``FILE.py:FUNCTION`` are read by one loader for every sub-command."""
import pickle
import re
import sys

import pytest

from multibody.cli import COMMANDS, build_parser, describe, main
from multibody.cli.targets import FileFunction, load_function, load_object
from multibody.errors import ModelError

NAMES = [name for name, _ in COMMANDS]
#: reStructuredText that must not reach a --help page
MARKUP = re.compile(r"``|:(func|mod|class|meth|attr):`|::\s*$", re.M)


def help_of(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0
    return capsys.readouterr().out


def test_every_command_is_listed_with_a_help_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    text = help_of([], capsys)
    for name in NAMES:
        line = next((ln for ln in text.splitlines() if ln.split()[:1] == [name]), None)
        assert line is not None and len(line.split()) > 2, (name, text)


@pytest.mark.parametrize("name", NAMES)
def test_every_command_has_a_plain_description_and_one_line_argument_errors(name, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")          # narrow: help text is wrapped, at spaces only
    text = help_of([name], capsys)
    parser = build_parser().commands[name]
    assert parser.description and not MARKUP.search(parser.description), parser.description
    assert not MARKUP.search(text), text
    with pytest.raises(SystemExit) as info:
        main([name, "--bogus"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"multibody {name}: error: ") and err.count("\n") == 1, err
    assert f"see `multibody {name} --help`" in err


def test_bench_help_names_every_benchmark_whole(capsys, monkeypatch):
    from multibody.bench import BENCHMARKS

    monkeypatch.setenv("COLUMNS", "60")
    words = set(re.findall(r"[a-z]+(?:-[a-z]+)*", help_of(["bench"], capsys)))   # "first-use" is one name
    assert {b[0] for b in BENCHMARKS} <= words               # no name split across lines ("constrai ned")


def test_describe_turns_a_docstring_into_plain_text():
    doc = """``multibody thing FILE [--x]``: draws :func:`~multibody.viz.animation.animate`'s scene of
    :mod:`multibody.io` ``Result`` files. Examples::

        multibody thing f.npz
    """
    assert describe(doc) == "Draws animate's scene of multibody.io Result files. Examples:"


def test_bicycle_maneuver_without_iftomm_suggests_the_command(capsys):
    assert main(["bicycle", "M1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "multibody bicycle: error: M1 is an IFToMM maneuver: run it with `multibody bicycle iftomm M1`"
    assert main(["bicycle", "wobble"]) == 2
    err = capsys.readouterr().err
    assert "unexpected argument 'wobble'" in err and "action" not in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [
    ["bicycle", "--csv", "{d}", "--speeds", "0:1:0.5"],
    ["bicycle", "--save-params", "{d}"],
    ["bicycle", "--plot", "{d}"],
    ["hoop", "--fig4", "{d}/no/such/fig.png"],
    ["hoop", "--plot", "{d}", "--method", "dop853"],
    ["bench", "--json", "{d}", "--only", "sweep"],
    ["demo", "--out", "{f}"],
    ["examples", "four_bar", "--run", "--out", "{f}"],
    ["animate", "{d}/run.npz", "--out", "{d}"],
    ["hoop", "--h", "1e-300"],                                 # 1e301 steps: refused, not run for ever
    ["hoop", "--method", "dop853", "--rtol", "0"],
])
def test_unusable_outputs_are_refused_before_the_work(argv, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    (tmp_path / "run.npz").write_text("")
    argv = [a.format(d=tmp_path, f=tmp_path / "file") for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"multibody {argv[0]}: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_file_errors_and_bugs_are_one_line(tmp_path, capsys, monkeypatch):
    """An OSError the checks did not foresee is status 2, any other exception status 1 ('internal error'),
    both on one line; MULTIBODY_TRACEBACK=1 lets the exception through."""
    import multibody.cli.examples as examples_cmd

    def broken(args):
        open(tmp_path)                          # IsADirectoryError

    monkeypatch.setattr(examples_cmd, "run", lambda args: broken(args))
    assert main(["examples"]) == 2
    assert capsys.readouterr().err.strip() == f"multibody examples: error: Is a directory: '{tmp_path}'"
    monkeypatch.setattr(examples_cmd, "run", lambda args: {}["key\nwith a line break"])
    assert main(["examples"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("multibody examples: internal error: KeyError:") and err.count("\n") == 1
    monkeypatch.setenv("MULTIBODY_TRACEBACK", "1")
    with pytest.raises(KeyError):
        main(["examples"])


# ---------------------------------------------------------------------------------------------------- targets

def test_one_loader_reads_module_and_file_targets(tmp_path):
    path = tmp_path / "study.py"
    path.write_text("import helper\n\ndef point(x):\n    return {'y': helper.twice(x)}\n\nclass K:\n"
                    "    @staticmethod\n    def f(x):\n        return {'y': -x}\n")
    (tmp_path / "helper.py").write_text("def twice(x):\n    return 2 * x\n")   # the file's folder is importable
    fn = load_function(f"{path}:point", "TARGET")
    assert isinstance(fn, FileFunction) and fn(x=3) == {"y": 6}
    again = pickle.loads(pickle.dumps(fn))                         # what a worker process receives
    assert again(x=4) == {"y": 8} and str(again.__signature__) == "(x)"
    assert load_object(f"{path}:K.f", "--model")(2) == {"y": -2}
    from multibody.parallel.studies import bicycle_stability

    assert load_function("multibody.parallel.studies:bicycle_stability", "TARGET") is bicycle_stability
    for spec, match in [("study.py", "expected MODULE:FUNCTION or FILE.py:FUNCTION"),
                        (f"{tmp_path}/none.py:f", "no such Python file"),
                        (f"{path}:nope", "has no 'nope'"),
                        ("a-b:f", "neither a module name"),
                        ("no_such_module_xyz:f", "cannot import module 'no_such_module_xyz'")]:
        with pytest.raises(ModelError, match=match):
            load_object(spec, "TARGET")
    bad = tmp_path / "bad.py"
    bad.write_text("raise RuntimeError('broken at import')\n")
    with pytest.raises(ModelError, match="running .* failed \\(RuntimeError: broken at import\\)"):
        load_object(f"{bad}:f", "--model")


def test_sweep_takes_a_file_target_on_local_processes(tmp_path, capsys):
    """``multibody sweep FILE.py:FUNCTION`` (accepted by ``animate --model`` before, refused by sweep): the worker
    process loads the file by its path."""
    pd = pytest.importorskip("pandas")
    path = tmp_path / "study.py"
    path.write_text("import os\n\ndef point(x):\n    return {'y': 2 * x, 'pid': os.getpid()}\n")
    out = tmp_path / "t.csv"
    assert main(["sweep", f"{path}:point", "--grid", "x=0:3:4", "--out", str(out), "--workers", "1",
                 "--no-progress"]) == 0
    assert "4/4 points" in capsys.readouterr().out
    df = pd.read_csv(out).sort_values("point")
    assert df["y"].tolist() == [0.0, 2.0, 4.0, 6.0] and df["error"].isna().all()
    import os

    assert os.getpid() not in set(df["pid"])                       # computed by the worker process


def test_file_targets_behave_like_imported_modules(tmp_path):
    """A file is a module in sys.modules while it runs (a dataclass needs that), two files named alike stay
    apart, and a file that calls sys.exit is a ModelError, not the end of the program."""
    for sub, value in (("a", 1), ("b", 2)):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "m.py").write_text("from __future__ import annotations\nimport dataclasses\n\n"
                                             "@dataclasses.dataclass\nclass P:\n    x: int = " + str(value) + "\n")
    assert load_object(f"{tmp_path}/a/m.py:P", "--model")().x == 1
    assert load_object(f"{tmp_path}/b/m.py:P", "--model")().x == 2
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(0)\n")
    with pytest.raises(ModelError, match="running .* failed \\(SystemExit: 0\\)"):
        load_object(f"{tmp_path}/exits.py:f", "TARGET")
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ModelError, match="importing module 'exits' failed \\(SystemExit: 0\\)"):
            load_object("exits:f", "TARGET")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("exits", None)
