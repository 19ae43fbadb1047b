"""Every code block of docs/seed004-inertial-forces.md runs, in order, in one namespace; its printed claims hold."""
import pathlib
import re

import numpy as np

PAGE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "seed004-inertial-forces.md"


def test_docs_page_code_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
    assert len(blocks) == 4
    ns = {}
    for k, code in enumerate(blocks):
        exec(compile(code, f"{PAGE.name} block {k + 1}", "exec"), ns)
    assert ns["twin"].power_residual < 1e-12
    assert np.max(np.abs(ns["generated"].q - ns["kernels"].q)) < 1e-12
    assert str(ns["eqs"].mass_matrix) == "Matrix([[l**2*m]])"
