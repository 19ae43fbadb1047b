"""``multibody bicycle`` (seed 003): text report, --json, --speeds/--csv, --params, --plot.

Reference numbers: seed 003 eqs. (6.1)-(6.4) and Table 2 (signs restored as in the notes §0).
"""
import json

import numpy as np
import pytest

from multibody.cli import main
from multibody.systems import bicycle
from multibody.cli.bicycle import parse_speeds


def test_text_report(capsys):
    assert main(["bicycle"]) == 0
    out = capsys.readouterr().out
    for text in ("33.86641391492494", "-0.85035641456978", "76.59734589573222", "-2.59951685249872",
                 "0.29784188199686",                                      # eqs. 6.1-6.4
                 "0.68428307889246", "4.29238253634110", "6.02426201538836",  # Table 2a (last digit: exact root)
                 "3.78290405129320", "3.43503384866144",
                 "-0.77534188219584", "4.46486771378823", "-14.07838969279823", "0.16105338653171"):
        assert text in out, text
    assert out.count("\n") > 30


def test_json_output_parses_and_holds_the_numbers(capsys):
    assert main(["bicycle", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("M", "C1", "K0", "K2", "weave_speed", "capsize_speed", "eigenvalues"):
        assert key in data
    np.testing.assert_allclose(data["M"], [[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]],
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(data["K0"], [[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]],
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(data["C1"], [[0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]],
                               rtol=0, atol=1e-13)
    np.testing.assert_allclose(data["K2"], [[0, 76.59734589573222], [0, 2.65431523794604]], rtol=0, atol=1e-13)
    assert abs(data["weave_speed"] - 4.29238253634111) < 1e-12
    assert abs(data["capsize_speed"] - 6.02426201538837) < 1e-12
    assert abs(data["oscillation_speed"] - 0.68428307889246) < 1e-12
    assert data["stable_interval"] == [data["weave_speed"], data["capsize_speed"]]
    rows = data["eigenvalues"]
    assert [r["v"] for r in rows] == list(range(11))
    v5 = rows[5]                                        # Table 2, v = 5 m/s
    assert abs(v5["weave"][0][0] + 0.77534188219585) < 1e-12 and abs(v5["weave"][0][1] - 4.46486771378823) < 1e-12
    assert v5["weave"][1][1] == -v5["weave"][0][1]
    assert abs(v5["capsize"][0] + 0.32286642900409) < 1e-12 and v5["capsize"][1] == 0.0
    assert abs(v5["castor"][0] + 14.07838969279822) < 1e-12
    assert v5["stable"] and not rows[4]["stable"]
    assert data["parameters"]["IHxz"] == -0.00756


def test_speeds_sweep_to_csv(tmp_path, capsys):
    csv = tmp_path / "sweep.csv"
    assert main(["bicycle", "--speeds", "0:10:0.01", "--csv", str(csv)]) == 0
    assert "wrote 1001 speeds" in capsys.readouterr().out
    table = np.genfromtxt(csv, delimiter=",", names=True)
    assert table.shape == (1001,)
    np.testing.assert_allclose(table["v"][::100], np.arange(11.0), rtol=0, atol=1e-12)
    i5 = 500
    assert abs(table["weave1_re"][i5] + 0.77534188219585) < 1e-12
    assert abs(table["castor_re"][i5] + 14.07838969279822) < 1e-12
    stable = table["stable"].astype(bool)
    assert stable[430:602].all() and not stable[:429].any() and not stable[603:].any()


def test_default_csv_name_and_json_with_speeds(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["bicycle", "--speeds", "0,2.5,5", "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)                   # stdout holds only the JSON object
    assert [r["v"] for r in data["eigenvalues"]] == [0.0, 2.5, 5.0]
    assert (tmp_path / "bicycle_eigenvalues.csv").exists() and "wrote 3 speeds" in captured.err


def test_params_file_and_plot(tmp_path, capsys):
    import matplotlib.image as mpimg

    other = bicycle.benchmark_parameters().replace(c=0.06, mB=70.0)
    yml = tmp_path / "bike.yaml"
    bicycle.save_parameters(other, yml)
    png = tmp_path / "eig.png"
    assert main(["bicycle", "--params", str(yml), "--json", "--plot", str(png)]) == 0
    data = json.loads(capsys.readouterr().out)
    M, C1, K0, K2 = bicycle.linear_matrices(other)
    np.testing.assert_array_equal(data["M"], M.tolist())
    assert data["weave_speed"] == bicycle.critical_speeds(other).weave
    img = mpimg.imread(png)
    assert img.ndim == 3 and img.shape[0] > 300 and img.shape[1] > 500


def test_malformed_params_file_is_one_clear_error(tmp_path, capsys):
    yml = tmp_path / "bad.yaml"
    bicycle.save_parameters(bicycle.benchmark_parameters(), yml)
    yml.write_text(yml.read_text().replace("IFyy: 0.28", "IFyy: lots"))
    assert main(["bicycle", "--params", str(yml)]) == 2
    err = capsys.readouterr().err
    assert err.count("error") == 1 and "'IFyy'" in err and str(yml) in err


def test_parse_speeds():
    np.testing.assert_allclose(parse_speeds("0:10:0.01"), np.linspace(0, 10, 1001), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(parse_speeds("1:3"), [1, 2, 3])
    np.testing.assert_array_equal(parse_speeds("4.5"), [4.5])
    for bad in ("0:10:0", "5:1:1", "a:b", "", "1:2:3:4"):
        with pytest.raises(ValueError, match="--speeds"):
            parse_speeds(bad)
