"""The documentation (docs/) stays true: every ```python block of every page runs (the blocks of a page in order,
in one namespace, in a temporary directory; its asserts are the page's checks), the API reference is what
``docs/make_api.py`` writes from the docstrings, and the links and figures the pages name exist.

A block is left out only with a ``<!-- no-test -->`` line right before it, and that is kept rare (``SKIPPED``)."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
sys.path.insert(0, str(DOCS))

from doc_blocks import code_blocks, run_page  # noqa: E402

PAGES = sorted(p for p in DOCS.glob("*.md") if any(not b.skip for b in code_blocks(p.read_text())))

#: the blocks that do not run, by page: code for a module this installation may lack, or a synopsis with
#: placeholders
SKIPPED = {"poisson.md": 1}


def _seed004_checks(ns):
    """The printed claims of docs/seed004-inertial-forces.md (the seed 004 split, its numeric twin, generated code
    against the O(N) kernels, a symbolic model of one's own)."""
    assert ns["twin"].power_residual < 1e-12
    assert np.max(np.abs(ns["generated"].q - ns["kernels"].q)) < 1e-12
    assert str(ns["eqs"].mass_matrix) == "Matrix([[l**2*m]])"


#: checks of a page's namespace beyond the asserts in its blocks
CHECKS = {"seed004-inertial-forces.md": _seed004_checks}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_page_code_runs(page, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    ns = run_page(page, tmp_path)
    if page.name in CHECKS:
        CHECKS[page.name](ns)


def test_no_test_markers_are_rare():
    found = {}
    for page in DOCS.glob("*.md"):
        n = sum(b.skip for b in code_blocks(page.read_text()))
        if n:
            found[page.name] = n
    assert found == SKIPPED


def test_code_blocks_parser():
    text = ("intro\n```python\na = 1\n```\n<!-- no-test -->\n```python\nb = 2\n```\n"
            "* item:\n\n  ```python\n  c = 3\n  ```\n```bash\nls\n```\n")
    blocks = code_blocks(text)
    assert [(b.line, b.code, b.skip) for b in blocks] == [(3, "a = 1\n", False), (7, "b = 2\n", True),
                                                          (12, "c = 3\n", False)]
    with pytest.raises(ValueError, match="not closed"):
        code_blocks("```python\nx = 1\n")


def test_api_reference_is_up_to_date():
    """docs/api.md is what ``python docs/make_api.py`` writes from the docstrings of this checkout."""
    import make_api

    assert (DOCS / "api.md").read_text() == make_api.generate(), "run: python docs/make_api.py"


def _links(text):
    """Targets of the Markdown links and images of a page, without anchors and web addresses."""
    out = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        target = target.split("#")[0]
        if target and not re.match(r"[a-z]+:", target):
            out.append(target)
    return out


def test_links_and_index():
    """Every relative link of every page exists; the index links every page."""
    pages = sorted(DOCS.glob("*.md"))
    for page in pages:
        for target in _links(page.read_text()):
            assert (page.parent / target).exists(), f"{page.name}: broken link {target}"
    index = set(_links((DOCS / "README.md").read_text()))
    missing = [p.name for p in pages if p.name != "README.md" and p.name not in index]
    assert not missing, f"docs/README.md does not link {missing}"


def test_figures_are_drawn_by_make_figures():
    """Every image under docs/img/ is used by a page and written by docs/make_figures.py, and every figure it
    writes is used."""
    import make_figures

    drawn = {name for names in make_figures.FIGURES for name in names}
    used = {Path(t).name for p in DOCS.glob("*.md") for t in _links(p.read_text()) if t.startswith("img/")}
    on_disk = {p.name for p in (DOCS / "img").iterdir()}
    assert used <= drawn, f"images not drawn by make_figures.py: {sorted(used - drawn)}"
    assert drawn <= used, f"figures no page uses: {sorted(drawn - used)}"
    assert on_disk == drawn, f"docs/img differs from make_figures.py: {sorted(on_disk ^ drawn)}"
