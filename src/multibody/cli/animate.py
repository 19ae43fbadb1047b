"""``multibody animate``: an animation (GIF, or MP4 with ffmpeg) of a Result saved with ``Result.save``.

Examples::

    multibody animate run.npz --model multibody.systems.slider_crank:model --out crank.gif
    multibody animate run.npz --model my_models.py:build --out run.mp4 --fps 30 --frames 200
    multibody animate run.npz --model robot.urdf --out robot.gif       # model files: see below

A Result file holds the motion (t, q, v, ...), not the model, so ``--model`` says where the Model comes from:

* ``MODULE:FUNCTION`` or ``FILE.py:FUNCTION`` — an importable module (``package.module``) or a Python file
  (``path/to/file.py``) and the name of a function in it that returns the Model (a function returning a tuple
  whose first Model is the one, such as ``slider_crank.model`` → ``(model, q0, v0)``, is accepted too), or the
  name of a Model in it; read by :mod:`multibody.cli.targets`, as ``multibody sweep`` reads its TARGET;
* ``FILE`` with suffix ``.yaml``, ``.yml``, ``.json``, ``.urdf`` or ``.xml`` (MJCF) — a model file, read with
  ``multibody.io.load_model`` (imported when needed; an installation without it says so).

The drawing is :func:`multibody.viz.animation.animate`'s: links, body frames, sliders, springs and rolling discs,
2-D for planar systems and 3-D otherwise. ``--html OUT.html`` writes instead the 3-D viewer page of
:mod:`multibody.viz.viewer` (one self-contained file for any browser)::

    multibody animate run.npz --model robot.urdf --html robot.html
"""
import importlib
from pathlib import Path

from multibody.errors import ModelError

#: suffixes of model files, read by ``multibody.io.load_model``
MODEL_FILE_SUFFIXES = (".yaml", ".yml", ".json", ".urdf", ".xml")


def _first_model(obj, spec):
    from multibody.model.model import Model

    if isinstance(obj, Model):
        return obj
    if isinstance(obj, (tuple, list)):
        for item in obj:
            if isinstance(item, Model):
                return item
    raise ModelError(f"--model {spec}: expected a Model (or a tuple holding one), got {type(obj).__name__}",
                     element="--model")


def model_from_spec(spec):
    """The Model named by ``spec``: a model file (``.yaml``/``.yml``/``.json``/``.urdf``, through
    ``multibody.io.load_model``) or ``MODULE:FUNCTION`` / ``FILE.py:FUNCTION`` (see the module docstring)."""
    spec = str(spec)
    if Path(spec).suffix.lower() in MODEL_FILE_SUFFIXES:
        if not Path(spec).is_file():
            raise ModelError(f"--model {spec}: no such model file", element="--model")
        try:
            io = importlib.import_module("multibody.io")
        except ModuleNotFoundError as exc:
            if exc.name not in ("multibody.io",):
                raise
            io = None
        loader = getattr(io, "load_model", None)
        if loader is None:
            raise ModelError(f"--model {spec}: reading model files needs multibody.io.load_model, which this "
                             "installation does not have; give --model MODULE:FUNCTION (a Python function that "
                             "returns the Model) instead", element="--model")
        return _first_model(loader(spec), spec)
    if ":" not in spec:
        raise ModelError(f"--model {spec}: expected MODULE:FUNCTION, FILE.py:FUNCTION or a model file "
                         f"({', '.join(MODEL_FILE_SUFFIXES)})", element="--model")
    from multibody.cli.targets import load_object
    from multibody.model.model import Model

    obj = load_object(spec, "--model")
    if callable(obj) and not isinstance(obj, Model):
        try:
            obj = obj()
        except Exception as exc:
            raise ModelError(f"--model {spec}: calling it failed ({type(exc).__name__}: {exc})",
                             element="--model") from None
    return _first_model(obj, spec)


def _size(text):
    try:
        w, h = (int(x) for x in str(text).lower().split("x"))
    except ValueError:
        raise ModelError(f"--size must be WIDTHxHEIGHT in pixels (e.g. 640x480), got {text!r}",
                         element="--size") from None
    if w < 16 or h < 16:
        raise ModelError(f"--size must be at least 16x16 pixels, got {text!r}", element="--size")
    return w, h


def run(args):
    from multibody.result import Result
    from multibody.viz.animation import animate

    from multibody.cli.paths import output_file

    if not Path(args.result).is_file():
        raise ModelError(f"no such result file '{args.result}'", element="RESULT")
    output_file(args.out, "--out")
    res = Result.load(args.result)
    if args.model is None:
        raise ModelError(f"'{args.result}' holds the motion of model '{res.info.get('model', '?')}', not the model "
                         "itself: give --model MODULE:FUNCTION (a function returning the Model, e.g. "
                         f"multibody.systems.slider_crank:model) or --model FILE ({', '.join(MODEL_FILE_SUFFIXES)})",
                         element="--model")
    model = model_from_spec(args.model)
    if res.q.shape[1] != model.nq:
        raise ModelError(f"'{args.result}' has {res.q.shape[1]} coordinates per sample, model '{model.name}' from "
                         f"--model {args.model} has nq = {model.nq}", element="--model")
    if args.html is not None:
        from multibody.viz.viewer import to_html

        out = to_html(res, args.html, model=model)
        print(f"3-D view of {len(res)} samples of model '{model.name}' written to {out} "
              f"({out.stat().st_size / 1e6:.1f} MB)")
        return 0
    out = animate(res, args.out, model=model, frames=args.frames, fps=args.fps, size=_size(args.size),
                  view=args.view)
    print(f"animation of {len(res)} samples of model '{model.name}' written to {out}")
    return 0


def cli_register(subparsers):
    p = subparsers.add_parser("animate", help="animation (GIF/MP4, or a 3-D HTML page) of a saved Result",
                              description="Write an animation of a Result saved with Result.save (.npz or .csv): "
                                          "links, body frames, sliders, springs and rolling discs; 2-D for planar "
                                          "systems, 3-D otherwise. MP4 needs ffmpeg.")
    p.add_argument("result", metavar="RESULT", help="a Result file (.npz or .csv, from Result.save)")
    p.add_argument("--model", metavar="SPEC", default=None,
                   help="where the Model comes from: MODULE:FUNCTION, FILE.py:FUNCTION, or a model file "
                        "(.yaml, .yml, .json, .urdf, .xml, read with multibody.io.load_model)")
    p.add_argument("--out", default="animation.gif", help="output file, .gif or .mp4 (default animation.gif)")
    p.add_argument("--fps", type=float, default=20.0, help="frames per second (default 20)")
    p.add_argument("--frames", type=int, default=None, help="number of frames, evenly spaced in the samples "
                                                            "(default: the run in real time, at most 20 s)")
    p.add_argument("--size", default="640x480", help="WIDTHxHEIGHT in pixels (default 640x480)")
    p.add_argument("--view", choices=["2d", "3d"], default=None,
                   help="force a 2-D or 3-D view (default: 2-D when the system moves in one plane)")
    p.add_argument("--html", metavar="OUT.html", default=None,
                   help="write instead one self-contained HTML page: the bodies in 3-D from their geometry, played "
                        "in time, with the energies (needs: pip install 'multibody[viewer]')")
    p.set_defaults(func=run)
