"""The ``multibody`` command.

One module of this package per sub-command: each exposes ``cli_register(subparsers)``, which adds its
parser and sets ``func`` (called with the parsed args, returns an exit code); a sub-command's ``--help``
opens with the first paragraph of its module's docstring (:func:`describe`), unless it sets its own
description. :mod:`multibody.cli.targets` (Python objects named ``MODULE:NAME`` or ``FILE.py:NAME``) and
:mod:`multibody.cli.paths` (output files checked before the work) serve several sub-commands.

Every error ends in one line on stderr, ``multibody COMMAND: error: ...``, and a non-zero status: 2 for bad
arguments (argparse's own errors too), a ``multibody.errors`` exception or a file that cannot be read or
written; 130 for Ctrl-C; 1 for an unexpected exception (a bug: ``MULTIBODY_TRACEBACK=1`` shows where).
"""
import argparse
import importlib
import os
import re
import sys

# (command name, module that registers it)
COMMANDS = [
    ("demo", "multibody.cli.demo"),
    ("bench", "multibody.cli.bench"),
    ("bicycle", "multibody.cli.bicycle"),
    ("iftomm", "multibody.cli.iftomm"),
    ("hoop", "multibody.cli.hoop"),
    ("forces", "multibody.cli.forces"),
    ("animate", "multibody.cli.animate"),
    ("run", "multibody.cli.run"),
    ("validate", "multibody.cli.validate"),
    ("examples", "multibody.cli.examples"),
    ("sweep", "multibody.cli.sweep"),
]


class Formatter(argparse.HelpFormatter):
    """argparse's help, with lines broken at spaces only (a name such as ``first-use`` stays whole)."""

    def _split_lines(self, text, width):
        import textwrap

        return textwrap.wrap(self._whitespace_matcher.sub(" ", text).strip(), width, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """``argparse`` with its errors on one line, naming the command and where its help is; status 2."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def describe(doc):
    """The first paragraph of a module docstring as plain text for ``--help``: reStructuredText markup
    (````code````, ``:func:`~a.b```, a trailing ``::``) removed, and a leading ````multibody X ...``:`` dropped."""
    text = " ".join((doc or "").strip().split("\n\n")[0].split())
    text = re.sub(r"^``multibody[^`]*``:\s*", "", text)
    text = re.sub(r":[a-z]+:`~?([^`]*)`", lambda m: m[1].rsplit(".", 1)[-1] if m[0].count("~") else m[1], text)
    text = text.replace("``", "").replace("`", "")
    text = re.sub(r"::$", ":", text)
    return text[:1].upper() + text[1:]


def build_parser():
    parser = Parser(
        prog="multibody",
        description="Dynamics of systems of rigid bodies: models, O(N) dynamics, simulation, reference problems.",
        epilog="`multibody COMMAND --help` describes a command.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, modname in COMMANDS:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as exc:
            if exc.name == modname:  # the command is not part of this build yet
                continue
            raise
        mod.cli_register(sub)
        p = sub.choices[name]
        if not p.description:
            p.description = describe(mod.__doc__)
    parser.commands = sub.choices     # name -> the sub-command's parser
    return parser


def main(argv=None):
    """Run the command; every error is one line on stderr (see the module docstring for the exit status)."""
    from multibody.cache import use_package_opt_level
    from multibody.errors import MultibodyError

    use_package_opt_level()           # the command compiles as the install did (multibody.cache.PACKAGE_OPT_LEVEL)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    command = getattr(args, "command", None)
    if extra:
        parser.commands.get(command, parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    where = f"multibody {command}"
    try:
        return int(args.func(args) or 0)
    except MultibodyError as exc:
        print(f"{where}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped (`| head`)
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"{where}: interrupted", file=sys.stderr)
        return 130
    except OSError as exc:   # a file or folder that cannot be read or written
        place = f": '{exc.filename}'" if exc.filename else ""
        print(f"{where}: error: {exc.strerror or _one_line(exc)}{place}", file=sys.stderr)
        return 2
    except MemoryError as exc:
        print(f"{where}: error: out of memory ({exc or 'MemoryError'})", file=sys.stderr)
        return 2
    except Exception as exc:
        if os.environ.get("MULTIBODY_TRACEBACK"):
            raise
        print(f"{where}: internal error: {type(exc).__name__}: {_one_line(exc)} (a bug; MULTIBODY_TRACEBACK=1 "
              "shows where)", file=sys.stderr)
        return 1


def _one_line(exc):
    return " ".join(str(exc).split())


if __name__ == "__main__":
    sys.exit(main())
