"""The README's API tour runs as written."""
import pathlib
import re

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"


def test_readme_tour_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    ns = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert (tmp_path / "run.png").exists() and (tmp_path / "run.npz").exists()
    assert abs(ns["weave"] - 4.29238253634111) < 1e-12  # seed 003, Table 2
    assert abs(ns["capsize"] - 6.02426201538837) < 1e-12
