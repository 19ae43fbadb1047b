"""The ```python blocks of the Markdown pages in docs/: how ``tests/test_docs.py`` runs them and how
``make_figures.py`` takes the files a page's code writes.

A page's blocks run in order, in one namespace, in a working directory of the caller's choice. A block is
skipped only when the line just before its opening fence is ``<!-- no-test -->``.
"""
import os
from collections import namedtuple
from pathlib import Path

DOCS = Path(__file__).resolve().parent
NO_TEST = "<!-- no-test -->"

#: one ```python block: ``line`` the 1-based line of its first code line, ``code``, ``skip`` (marked no-test)
Block = namedtuple("Block", "line code skip")


def code_blocks(text):
    """The ```python blocks of Markdown ``text`` (fences may be indented, as inside a list)."""
    lines = text.splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            indent = len(lines[i]) - len(lines[i].lstrip())
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise ValueError(f"line {i + 1}: a ```python block is not closed")
            code = "\n".join(line[indent:] if line[:indent].strip() == "" else line for line in lines[i + 1:j])
            out.append(Block(i + 2, code + "\n", i > 0 and lines[i - 1].strip() == NO_TEST))
            i = j + 1
        else:
            i += 1
    return out


def run_page(page, workdir, namespace=None):
    """Execute the blocks of ``page`` (a path, or a file name in docs/) that are not marked no-test, in order, in
    one namespace, with ``workdir`` as the working directory; returns the namespace. A failing block's traceback
    names the page and its line numbers."""
    page = Path(page) if Path(page).is_absolute() else DOCS / page
    ns = {"__name__": "__doc_page__"} if namespace is None else namespace
    here = os.getcwd()
    os.chdir(workdir)
    try:
        for block in code_blocks(page.read_text()):
            if not block.skip:
                # pad with blank lines so that the line numbers of a traceback are the page's
                exec(compile("\n" * (block.line - 1) + block.code, str(page), "exec"), ns)
    finally:
        os.chdir(here)
    return ns
