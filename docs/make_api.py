"""Write docs/api.md, the API reference, from the docstrings of the public API.

    python docs/make_api.py            # regenerate docs/api.md
    python docs/make_api.py --check    # exit status 1 when docs/api.md is out of date

What is documented (with ``inspect``): the names of ``multibody.__all__`` (classes with their public methods and
properties), ``multibody.analysis.linearize``, ``multibody.viz.results``, ``multibody.viz.animation`` and
``multibody.viz.viewer`` (their ``__all__``) and every module of ``multibody.systems`` (its docstring and the
public functions and classes it defines, in source order; for a package, those of its modules that its
``__all__`` names). The library is imported from this checkout (``src/`` next to ``docs/``).
``tests/test_docs.py`` fails when the committed file differs from what this script writes.
"""
import importlib
import inspect
import pkgutil
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
OUT = DOCS / "api.md"
if "multibody" not in sys.modules:             # the library of this checkout, unless one is loaded already
    sys.path.insert(0, str(DOCS.parent / "src"))

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _signature(obj, name):
    try:
        sig = str(inspect.signature(obj))
    except (TypeError, ValueError):
        return name
    return name + _ADDRESS.sub("", sig)


def _doc(obj, own=True):
    """The docstring of ``obj`` (its own only, when ``own``: not the one a class inherits)."""
    doc = obj.__doc__ if own else inspect.getdoc(obj)
    if not doc:
        return ""
    return inspect.cleandoc(doc)


def _block(doc):
    if not doc:
        return ["*(no docstring)*", ""]
    fence = "````" if "```" in doc else "```"
    return [fence + "text", doc, fence, ""]


def _anchor(title):
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def _members(cls):
    """Public methods and properties defined in ``cls`` itself, in source order."""
    out = []
    for name, attr in cls.__dict__.items():
        if name.startswith("_"):
            continue
        if isinstance(attr, property):
            out.append((name, attr, "property"))
        elif isinstance(attr, (classmethod, staticmethod)):
            out.append((name, attr.__func__, type(attr).__name__))
        elif inspect.isfunction(attr):
            out.append((name, attr, "method"))
    return out


def _entry(obj, name, level="###"):
    lines = []
    if inspect.isclass(obj):
        sig = _signature(obj, name)
        lines.append(f"{level} class `{sig[:-len(' -> None')] if sig.endswith(' -> None') else sig}`")
        lines.append("")
        lines += _block(_doc(obj))
        for mname, attr, kind in _members(obj):
            if kind == "property":
                lines.append(f"{level}# `{name}.{mname}` (property)")
                lines.append("")
                lines += _block(_doc(attr.fget) if attr.fget else "")
            else:
                sig = _signature(attr, f"{name}.{mname}")
                if kind == "method":        # drop self
                    sig = sig.replace("(self, ", "(", 1).replace("(self)", "()", 1)
                else:
                    sig = sig.replace("(cls, ", "(", 1).replace("(cls)", "()", 1)
                lines.append(f"{level}# `{sig}`" + (f" ({kind})" if kind != "method" else ""))
                lines.append("")
                lines += _block(_doc(attr))
    else:
        lines.append(f"{level} `{_signature(obj, name)}`")
        lines.append("")
        lines += _block(_doc(obj))
    return lines


def _defined_here(module):
    """Public functions and classes defined in ``module`` — for a package, in its modules and named in its
    ``__all__`` — in source order (a package: module by module, in the order of its ``__all__``)."""
    if hasattr(module, "__path__"):
        names = list(getattr(module, "__all__", ()))
        objects = [getattr(module, n) for n in names]
        order = list(dict.fromkeys(o.__module__ for o in objects if inspect.isfunction(o) or inspect.isclass(o)))
        items = []
        for mod in order:
            items += [(n, o) for n, o in _defined_here(sys.modules[mod]) if n in names]
        return items
    items = []
    for name, obj in vars(module).items():
        if name.startswith("_") or not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        try:
            line = inspect.getsourcelines(obj)[1]
        except (OSError, TypeError):
            line = 10 ** 9
        items.append((line, name, obj))
    return [(name, obj) for _, name, obj in sorted(items, key=lambda x: (x[0], x[1]))]


def sections():
    """(title, module docstring or None, [(name, object)]) of every section of the reference."""
    import multibody
    import multibody.systems

    out = [("multibody", _doc(multibody), [(n, getattr(multibody, n)) for n in multibody.__all__])]
    for modname in ("multibody.analysis.linearize", "multibody.viz.results", "multibody.viz.animation",
                    "multibody.viz.viewer"):
        mod = importlib.import_module(modname)
        out.append((modname, _doc(mod), [(n, getattr(mod, n)) for n in mod.__all__]))
    for info in sorted(pkgutil.iter_modules(multibody.systems.__path__), key=lambda m: m.name):
        mod = importlib.import_module(f"multibody.systems.{info.name}")
        out.append((mod.__name__, _doc(mod), _defined_here(mod)))
    return out


def generate():
    """The text of docs/api.md."""
    secs = sections()
    lines = ["# API reference", "",
             "Generated from the docstrings by `python docs/make_api.py`; do not edit by hand (`tests/test_docs.py` "
             "checks that it is up to date). Signatures are Python's; docstrings cite the text and equation each "
             "function implements.", ""]
    for title, _, items in secs:
        lines.append(f"* [`{title}`](#{_anchor(title)}) — " + ", ".join(f"`{n}`" for n, _ in items))
    lines.append("")
    seen = {}
    for title, doc, items in secs:
        lines.append(f"## {title}")
        lines.append("")
        if doc:
            lines += _block(doc)
        again = [(name, seen[id(obj)]) for name, obj in items if id(obj) in seen]
        if again:
            lines.append("Documented above: " + ", ".join(f"`{name}` ([`{where}`](#{_anchor(where)}))"
                                                          for name, where in again) + ".")
            lines.append("")
        for name, obj in items:
            if id(obj) not in seen:
                seen[id(obj)] = title
                lines += _entry(obj, name)
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    text = generate()
    if "--check" in argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is out of date: run python docs/make_api.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT} ({len(text.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
