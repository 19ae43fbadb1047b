"""Coverage-guided fuzzing of model files and builder calls with atheris (run on demand, not by pytest).

    pip install atheris
    python tests/fuzz/fuzz_model_files.py [atheris/libFuzzer options, e.g. -max_total_time=600 -timeout=10]

Each input is turned into one of the cases of ``tests/fuzz_cases.py`` (the same mutated example files and builder
calls as ``tests/test_fuzz_model_files.py``, with the choices read from the fuzzer's bytes), plus the raw bytes as
a file of their own. A case must end in a valid Model or a ``multibody.errors.ModelError`` naming the element; any
other exception is a finding (libFuzzer stops and writes the input as ``crash-*``), a hang is one with
``-timeout=N``.
"""
import atexit
import importlib.util
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/, for fuzz_cases

try:
    import atheris
except ImportError:   # pragma: no cover - an optional tool
    sys.exit("atheris is not installed: pip install atheris (it is not a dependency of multibody)")


def compiled_modules():
    """The modules of multibody that define numba-compiled functions: numba reads their functions' bytecode,
    which atheris' instrumentation would change (a compile of an instrumented function fails), so they stay
    as they are."""
    package = Path(importlib.util.find_spec("multibody").origin).parent     # the multibody this run imports
    found = []
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if re.search(r"^\s*@(numba\.)?(njit|jit|cfunc|vectorize|generated_jit|helper)\b|\bnjit\(|\bcfunc\(", text, re.M):
            parts = path.relative_to(package.parent).with_suffix("").parts
            found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


# coverage of multibody's model and file readers and of the case generator only (instrumenting sympy, numpy, ...
# takes many minutes); `import multibody` itself loads only the errors, so the modules are imported here
with atheris.instrument_imports(include=["multibody", "fuzz_cases"], exclude=compiled_modules()):
    import multibody as mb
    import multibody.io
    import multibody.model  # noqa: F401
    from fuzz_cases import Case, builder_calls, check_file, make_file, run_builder

WORKDIR = tempfile.mkdtemp(prefix="multibody-fuzz-")
atexit.register(shutil.rmtree, WORKDIR, True)


class Choices:
    """``random.Random``'s choice/randint/random, read from the fuzzer's bytes."""

    def __init__(self, fdp):
        self.fdp = fdp

    def choice(self, seq):
        seq = list(seq)
        return seq[self.fdp.ConsumeIntInRange(0, len(seq) - 1)]

    def randint(self, a, b):
        return self.fdp.ConsumeIntInRange(a, b)

    def random(self):
        return self.fdp.ConsumeProbability()


def test_one_input(data):
    fdp = atheris.FuzzedDataProvider(data)
    what = fdp.ConsumeIntInRange(0, 3)
    rnd = Choices(fdp)
    if what == 0:   # the bytes as a file of their own
        suffix = rnd.choice([".yaml", ".json"])
        check_file(Case("raw bytes", suffix, fdp.ConsumeBytes(fdp.remaining_bytes())), WORKDIR)
    elif what == 1:
        run_builder(builder_calls(rnd, mb), mb)
    else:
        check_file(make_file(rnd), WORKDIR)


def seed_corpus():
    """A folder of seed inputs: every bundled example as a YAML file and as JSON, in the byte layout
    test_one_input reads (the file first; at the end, read first, the suffix choice and then case 0)."""
    import json

    import yaml

    from fuzz_cases import EXAMPLES

    folder = Path(WORKDIR) / "seeds"
    folder.mkdir()
    for name, text in EXAMPLES.items():
        (folder / f"{name}.yaml").write_bytes(text.encode() + b"\x00\x00")
        (folder / f"{name}.json").write_bytes(json.dumps(yaml.safe_load(text)).encode() + b"\x01\x00")
    return str(folder)


def main():
    argv = list(sys.argv)
    inputs = [a for a in argv[1:] if not a.startswith("-")]
    if all(Path(a).is_dir() for a in inputs):       # fuzzing (not replaying files): start from the examples
        argv.append(seed_corpus())
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
