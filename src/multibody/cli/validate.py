"""``multibody validate FILE [FILE ...]``: check model files (YAML, JSON, URDF, MJCF) without simulating them.

Every problem is printed on one line, ``FILE:LINE: PATH: MESSAGE`` (the line for YAML files), for example::

    pendulum.yaml:7: bodies[0].mass: must be > 0, got -1.0

and the exit status is 2 when any file has a problem (0 otherwise). The checks are those of loading: the
published JSON Schema, then every check of the ``ModelBuilder`` (masses, inertias that a body can have, a mass
matrix that is not singular, orthonormal rotations, bodies that exist, a joint tree reaching every body, ...), the
expressions, the initial state and the simulation settings. What loading keeps with a warning (a URDF's inertias
that no body has, mesh files not found, what an MJCF file says that the Model does not carry) is printed as
``FILE: warning: ...`` and is no problem, unless
``--strict`` (which refuses every inertia that no body has, as ``load_model(strict=True)`` does).
"""
import sys
import warnings


def check(path, strict=False):
    """The problems of one file, as printable lines (empty: valid), a one-line description when valid, and the
    warnings of loading as printable lines: ``(problems, summary, warnings)``."""
    from multibody.errors import ModelWarning, MultibodyError
    from multibody.io import load, load_model
    from multibody.io.documents import ModelFileError

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelWarning)
        try:
            model = load_model(path, strict=strict) if str(path).lower().endswith((".urdf", ".xml")) else \
                load(path, strict=strict).model
        except ModelFileError as exc:
            return exc.report().splitlines(), None, []
        except MultibodyError as exc:
            return [f"{path}: {exc}"], None, []
        except Exception as exc:   # a file the checks did not foresee: still one line, never a traceback
            return [f"{path}: the file could not be checked ({type(exc).__name__}: {exc})"], None, []
    notes = [f"{path}: warning: {str(w.message).removeprefix(f'{path}: ')}" for w in caught
             if issubclass(w.category, ModelWarning)]
    return [], (f"{path}: valid: model '{model.name}', {model.nbodies} bod{'y' if model.nbodies == 1 else 'ies'}, "
                f"nq = {model.nq}, nv = {model.nv}, "
                f"{len(model.constraints)} constraint{'s' * (len(model.constraints) != 1)}"), notes


def run(args):
    status = 0
    for path in args.files:
        problems, summary, notes = check(path, strict=args.strict)
        for line in problems:
            print(line, file=sys.stderr)
        for line in notes:
            print(line, file=sys.stderr)
        if problems:
            status = 2
        elif not args.quiet:
            print(summary)
    return status


def cli_register(subparsers):
    p = subparsers.add_parser("validate", help="check model files (YAML, JSON, URDF, MJCF): every problem with its "
                                               "place",
                              description="Check model files; each problem is printed as FILE:LINE: PATH: MESSAGE "
                                          "and the exit status is 2 when there is any.")
    p.add_argument("files", nargs="+", metavar="FILE", help="model file (.yaml, .yml, .json), URDF (.urdf) or MJCF (.xml)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the problems (and warnings)")
    p.add_argument("--strict", action="store_true", help="count every inertia that no body has as a problem (a "
                                                         "URDF's are kept with a warning otherwise)")
    p.set_defaults(func=run)
