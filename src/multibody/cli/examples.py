"""``multibody examples [NAME] [--run] [--out DIR]``: the model files bundled with multibody.

Without NAME: the list of examples with one line each. With NAME: the file's text (a start for your own:
``multibody examples four_bar > my_mechanism.yaml``). With ``--run``: simulate it as ``multibody run`` does
(``--t-end``, ``--method`` and ``--out`` as there).
"""
def run(args):
    from multibody import examples

    names = examples.names()
    if not args.name:
        width = max(len(n) for n in names)
        for n in names:
            print(f"{n:<{width}}  {examples.description(n)}")
        print(f"\n{len(names)} examples in {examples.folder()}; `multibody examples NAME` prints one, "
              "`multibody examples NAME --run` simulates it.")
        return 0
    path = examples.path(args.name)
    if not args.run:
        print(path.read_text(encoding="utf-8"), end="")
        return 0
    from argparse import Namespace

    from multibody.cli import run as run_cmd
    from multibody.cli.paths import output_folder

    output_folder(args.out or f"{args.name}_run", "--out")
    return run_cmd.run(Namespace(file=str(path), t_end=args.t_end, method=args.method, h=None, rtol=None, atol=None,
                                 formulation=None, n_out=None, out=args.out or f"{args.name}_run",
                                 floating_base=False))


def cli_register(subparsers):
    p = subparsers.add_parser("examples", help="list, print or run the bundled model files")
    p.add_argument("name", nargs="?", default=None, help="an example's name (see the list)")
    p.add_argument("--run", action="store_true", help="simulate the example and write its results")
    p.add_argument("--t-end", type=float, default=None, help="end time (replaces the example's)")
    p.add_argument("--method", default=None, help="integration method (replaces the example's)")
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (default: NAME_run)")
    p.set_defaults(func=run)

