"""``multibody sweep``: grid specs, TARGET resolution, one-line errors (exit 2), a run, resume, and a real target."""
import functools
import json
import math

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

from multibody.cli import main  # noqa: E402
from multibody.cli import sweep as cli_sweep  # noqa: E402
from multibody.errors import ModelError  # noqa: E402

import sweep_points  # noqa: E402


def test_parse_grid_specs():
    g = cli_sweep.parse_grid(["c=-0.1:0.3:5", "method=rk2,rk4", "n=3", "h=1e-3,1e-4"])
    assert np.allclose(g["c"], np.linspace(-0.1, 0.3, 5), rtol=0, atol=1e-16)
    assert g["method"] == ["rk2", "rk4"] and g["n"] == [3] and g["h"] == [1e-3, 1e-4]


@pytest.mark.parametrize("args, message", [
    (["--grid", "c=1:2"], "expected a:b:n (three fields)"),
    (["--grid", "c=1:2:0"], "n >= 1"),
    (["--grid", "c=a:2:3"], "numbers a, b and an integer n"),
    (["--grid", "c=1:2:3", "--grid", "c=4"], "given twice"),
    (["--grid", "2c=1"], "Python identifier"),
    (["--grid", "c=1,,2"], "empty value"),
    (["--grid", "c=1e999"], "1e999 is not a finite number"),
    (["--grid", "c=nan,1"], "nan is not a finite number"),
    (["--grid", "c=0:1:1000000000000"], "at most 100000000 points"),
    (["--grid", "a=0:1:100000", "--grid", "b=0:1:100000"], "100000 x 100000 = 10000000000 points"),
    (["--grid", "c=1:0:0"], "n >= 1"),
    (["--grid", "x=1", "--out", "t.csv", "--timeout", "0"], "--timeout must be a positive number of seconds"),
    (["--grid", "x=1", "--out", "t.csv", "--timeout", "inf"], "--timeout must be a positive number of seconds"),
    (["--grid", "x=1", "--out", "t.csv", "--timeout", "1", "--scheduler", "serial"], "timeout needs worker processes"),
    (["--grid", "y=1"], "cannot take the grid's parameters y"),
    (["--grid", "c=1,rk4"], "mixes numbers and words"),
    (["--grid", "c=1:2:3", "--out", "t.xlsx"], "expected a .parquet or .csv file"),
    (["--grid", "c=1:2:3", "--out", "t.csv", "--workers", "0"], "--workers must be a positive integer"),
    (["--grid", "c=1:2:3", "--out", "t.csv", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"],
     "a --scheduler cluster has its own workers"),
    (["--grid", "c=1:2:3", "--out", "missing.csv", "--resume"], "no table 'missing.csv' to resume"),
])
def test_bad_arguments_exit_2_with_one_line(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if "--out" not in args:
        args = [*args, "--out", "t.csv"]
    assert main(["sweep", "sweep_points:square", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("multibody sweep: error:") and message in err and "\n" not in err


@pytest.mark.parametrize("target, message", [
    ("sweep_points", "expected MODULE:FUNCTION or FILE.py:FUNCTION"),
    ("no_such_module_xyz:f", "cannot import module 'no_such_module_xyz'"),
    ("sweep_points:nope", "'sweep_points' has no 'nope'"),
    ("sweep_points:os", "expected a function"),
    ("./model.yaml", "is a file; expected MODULE:FUNCTION or FILE.py:FUNCTION"),
    ("./missing.py:f", "no such Python file"),
])
def test_bad_targets_exit_2_with_one_line(target, message, capsys, tmp_path):
    assert main(["sweep", target, "--grid", "x=1", "--out", str(tmp_path / "t.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_file_targets_plug_in_by_suffix(tmp_path, monkeypatch):
    path = tmp_path / "m.model"
    path.write_text("")
    monkeypatch.setitem(cli_sweep.FILE_TARGETS, ".model", lambda p: functools.partial(sweep_points.square, y=1.0))
    fn = cli_sweep.resolve_target(str(path))
    assert fn(x=2.0) == {"sq": 5.0, "neg": -2.0}
    with pytest.raises(ModelError, match="does not exist"):
        cli_sweep.resolve_target(str(tmp_path / "other.model"))


def test_run_resume_and_json_summary(tmp_path, capsys):
    out = str(tmp_path / "t.parquet")
    args = ["sweep", "sweep_points:square", "--grid", "x=0:2:3", "--grid", "y=0,0.5", "--out", out,
            "--scheduler", "serial", "--json"]
    assert main(args) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["points"] == 6 and s["rows"] == 6 and s["computed"] == 6 and s["errors"] == 0
    df = pd.read_parquet(out)
    assert list(df.columns) == ["x", "y", "sq", "neg", "error", "point"]
    assert np.array_equal(df["sq"], [x * x + y for x in (0.0, 1.0, 2.0) for y in (0.0, 0.5)])
    assert main(args + ["--resume"]) == 0
    assert json.loads(capsys.readouterr().out)["computed"] == 0


def test_on_error_raise_is_one_line_naming_the_point(tmp_path, capsys):
    assert main(["sweep", "sweep_points:flaky", "--grid", "x=0:5:6", "--out", str(tmp_path / "t.csv"),
                 "--scheduler", "serial", "--on-error", "raise", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert "ValueError: x = 3 is not allowed" in err and "point 3" in err and "\n" not in err


def test_bicycle_stability_target(tmp_path, capsys):
    out = str(tmp_path / "map.csv")
    assert main(["sweep", "multibody.parallel.studies:bicycle_stability", "--grid", "c=0.08", "--grid",
                 f"lam={math.pi / 10!r},1.6", "--out", out, "--scheduler", "serial", "--no-progress"]) == 0
    assert "2/2 points" in capsys.readouterr().out
    df = pd.read_csv(out)
    assert abs(df.loc[0, "v_w"] - 4.29238253634111) < 1e-12    # seed 003, Table 2
    assert df.loc[1, "error"].startswith("ModelError: bicycle parameter 'lam'")
