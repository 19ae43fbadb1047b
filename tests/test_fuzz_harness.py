"""The atheris harness ``tests/fuzz/fuzz_model_files.py`` runs: a fixed number of inputs from a fixed seed (about
20 s), and it finds nothing — every generated file or builder call ends in a Model or a ``ModelError`` naming the
element. ``.ci/run`` runs it for longer. Skipped where atheris is not installed (it is not a dependency)."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris")

HARNESS = Path(__file__).resolve().parent / "fuzz" / "fuzz_model_files.py"
SRC = Path(__file__).resolve().parents[1] / "src"
#: inputs of the short run (libFuzzer's -runs: a count, so the run does the same work on any machine)
RUNS = 300


def test_atheris_harness_finds_nothing(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(HARNESS), str(corpus), f"-runs={RUNS}", "-seed=1", "-timeout=120",
                           f"-artifact_prefix={tmp_path}/"], capture_output=True, text=True, env=env,
                          timeout=1800)     # a guard against a hang, not a speed requirement
    findings = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("crash-", "timeout-", "oom-")))
    assert proc.returncode == 0 and not findings, (findings, proc.stderr[-4000:])
    assert f"Done {RUNS} runs" in proc.stderr, proc.stderr[-2000:]
