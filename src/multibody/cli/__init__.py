"""The ``multibody`` command.

One module of this package per sub-command: each exposes ``cli_register(subparsers)``, which adds its
parser and sets ``func`` (called with the parsed args, returns an exit code). Arguments are validated by the
sub-command; a ``multibody.errors`` exception is printed as one line and exits with status 2.
"""
import argparse
import importlib
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


def build_parser():
    parser = argparse.ArgumentParser(
        prog="multibody",
        description="Dynamics of systems of rigid bodies: models, O(N) dynamics, simulation, reference problems.",
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
    return parser


def main(argv=None):
    """Run the command; a ``multibody.errors`` exception is printed as one line and exits with status 2."""
    from multibody.errors import MultibodyError

    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except MultibodyError as exc:
        print(f"multibody {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into a reader that stopped (`| head`)
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
