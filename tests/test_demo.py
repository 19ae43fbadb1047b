"""The README's main job: ``multibody demo`` writes its plots and a results table that match the texts."""
import json
import re

import matplotlib.image as mpimg
import pytest

from multibody.cli import main
from multibody.cli.demo import Row, Tour, markdown_table

#: a Markdown table row: cells split at '|' that is not escaped
CELLS = re.compile(r"(?<!\\)\|")


@pytest.fixture(scope="module")
def full_demo(tmp_path_factory):
    """The full tour's folder and printed output (run once for the tests of this file)."""
    import contextlib
    import io

    folder = tmp_path_factory.mktemp("demo")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["demo", "--out", str(folder)]) == 0
    return folder, printed.getvalue()


def test_demo_writes_plots_and_results(full_demo):
    tmp_path, out = full_demo
    assert str(tmp_path) in out
    pngs = sorted(tmp_path.glob("*.png"))
    assert len(pngs) >= 4
    for png in pngs:
        img = mpimg.imread(png)
        assert img.shape[0] > 300 and img.shape[1] > 300
        assert img[..., :3].std() > 0.05  # not blank
    rows = json.loads((tmp_path / "results.json").read_text())
    by = {(r["section"], r["quantity"]): r for r in rows}
    # seed 003, Table 2: weave and capsize speeds
    weave = by[("Whipple bicycle", "weave speed v_w [m/s]")]
    assert abs(float(weave["computed"]) - 4.29238253634111) < 1e-12
    capsize = by[("Whipple bicycle", "capsize speed v_c [m/s]")]
    assert abs(float(capsize["computed"]) - 6.02426201538837) < 1e-12
    # seed 001 §3.5: T + П = 0 for the triple pendulum released from rest
    assert float(by[("triple pendulum", "max |T + П| over 10 s")]["computed"]) < 1e-9
    # the stability-map sweep passes through the benchmark bicycle: the same Table 2 speeds
    sweep = next(r for r in rows if r["section"] == "parameter sweeps")
    vw, vc = map(float, sweep["computed"].split(","))
    assert abs(vw - 4.29238253634111) < 1e-12 and abs(vc - 6.02426201538837) < 1e-12
    # variable structure: Newton's law at a stop (one impulse: round-off, 1e-12), the elastic pendulum's impact
    # instants against the elliptic period (1e-10 s, as tests/test_switching.py derives for DOP853 at rtol 1e-12),
    # the solar panel's lock losses against the plastic impact from crba (1e-10 J), the loop's Newton's law and
    # its constraint residual (projection to round-off: 64 eps)
    vs = [r for r in rows if r["section"] == "variable structure"]
    ratios = [float(x) for x in vs[0]["computed"].strip("[]").split()]
    assert len(ratios) == 3 and all(abs(r + 0.7) < 1e-12 for r in ratios)
    assert float(vs[1]["computed"]) < 1e-10
    locks = [r for r in vs if "locks at" in r["quantity"]]
    assert len(locks) == 2
    for r in locks:
        assert abs(float(r["computed"]) - float(r["reference"].split()[0])) < 1e-10
    assert "then contact" in vs[-2]["quantity"] and float(vs[-2]["computed"]) < 1e-12
    assert float(vs[-1]["computed"]) < 64 * 2.2e-16
    lines = (tmp_path / "results.md").read_text().splitlines()
    assert len(lines) == len(rows) + 2 and all(len(CELLS.findall(line)) == 6 for line in lines)
    listed = [line.strip() for line in out.split("files to", 1)[1].splitlines()[1:] if line.strip()]
    assert len(listed) == len(set(listed)) and str(tmp_path / "four_bar_saved.yaml") in listed


def test_results_table_escapes_bars_and_line_breaks_and_files_are_listed_once(tmp_path):
    rows = [Row("a|b", "max |x - y|", "[1 2\n 3]", "< 1e-9", "seed 003 | Table 2")]
    header, rule, line = markdown_table(rows)
    assert header == "| section | quantity | computed | reference | source |" and rule == "|---|---|---|---|---|"
    assert line == "| a\\|b | max \\|x - y\\| | [1 2 3] | < 1e-9 | seed 003 \\| Table 2 |"
    assert [c.strip() for c in CELLS.split(line)[1:-1]] == ["a\\|b", "max \\|x - y\\|", "[1 2 3]", "< 1e-9",
                                                            "seed 003 \\| Table 2"]
    tour = Tour(str(tmp_path))
    assert tour.path("m.yaml") == tour.path("m.yaml") and tour.files == [str(tmp_path / "m.yaml")]


def test_cli_reports_model_errors_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("w: 1.02\nmR: -2.0\n")
    assert main(["bicycle", "--params", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "error" in err and "Traceback" not in err


def test_the_brief_tour_makes_the_same_calls_into_the_same_files(full_demo, tmp_path, capsys):
    """``multibody demo --brief`` (the install's warm-up runs it): every section, every row and every file of the
    full tour, from short runs; the numbers that do not depend on the runs' lengths are the full tour's (the
    closed-form speeds of the bicycle, Table 2, to the digit)."""
    folder, _ = full_demo
    assert main(["demo", "--brief", "--out", str(tmp_path)]) == 0
    assert "A brief tour" in capsys.readouterr().out
    full = json.loads((folder / "results.json").read_text())
    brief = json.loads((tmp_path / "results.json").read_text())
    def keys(rows):        # a quantity's text may name a count (of points, of impacts): the words are compared
        return [(r["section"], re.sub(r"\d+", "#", r["quantity"])) for r in rows]

    assert keys(brief) == keys(full)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in folder.iterdir())
    for quantity in ("weave speed v_w [m/s]", "capsize speed v_c [m/s]"):
        same = [r["computed"] for rows in (full, brief) for r in rows if r["quantity"] == quantity]
        assert same[0] == same[1]
    assert (tmp_path / "results.md").read_text().startswith("A brief tour")
