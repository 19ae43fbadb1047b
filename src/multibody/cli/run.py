"""``multibody run FILE [--t-end T] [--method M] [--out DIR] [--controller pd --posture Q,...]``: simulate a model file
and write the results.

``FILE`` is a model file (``.yaml``, ``.yml``, ``.json``; see ``multibody validate``), a URDF robot (``.urdf``,
``--floating-base`` to set it free) or a MuJoCo model (MJCF ``.xml``: from its reference state ``qpos0``, with RK4
at its ``timestep``; ``--contact stepping`` for its collisions). The file's ``simulation:`` settings are used, each
flag given on the command line replacing the file's value; the initial state is the file's ``initial:`` (default:
neutral, at rest). Written into ``--out`` (default ``<file name>_run``): ``result.npz`` (exact, binary), ``result.csv`` (one
row per time), ``result.h5`` (when h5py is installed) and ``result.png`` (coordinates, energies, constraint
residuals against time). A file with problems is reported like ``multibody validate`` does, exit status 2.
The output folder is made and checked before the run (a place that cannot be written fails at once); a run that
fails writes its partial result there; a result that cannot be written at the end is kept in a new folder of
the system's temporary folder, and the message says where.
``--controller pd`` (or ``computed-torque``) adds a controller on every joint with plain coordinates holding
``--posture`` (``multibody.model.controllers``), evaluated inside the compiled loop (the joints' limits are then
kept as data, not stops).
The joints' limits are end stops (a URDF's ``<limit lower upper>``, a model file's ``limits``); ``--no-stops`` keeps
them as data only. A run starts inside them: a coordinate whose initial value is the neutral one (a URDF's, or one a
model file does not give) and lies outside its limits starts at their middle (or at the one finite limit), and the
run says so; ``--q0`` gives the initial configuration (nq numbers) instead.
"""
import math
import sys
from pathlib import Path

from multibody.errors import IntegrationError, ModelError, ResultFileError

#: the line ``run`` prints with ``Result.energy_drift()``: max_t |E(t) − E(0)| / max(|E(0)|, max_t T(t)), E = T + V
ENERGY_LINE = ("largest change of T + V, relative to max(|T + V at t = 0|, largest T of the run) "
               "(0 for a conservative system)")


def output_every(t_end, h, method, at_most=2001):
    """output_every for a fixed-step run: every k-th step (and the last), at most ``at_most`` outputs."""
    from multibody.simulation import fixed_step_count

    nsteps, _ = fixed_step_count(0.0, t_end, h, method)
    return max(1, -(-nsteps // (at_most - 1)))


def load_for_run(path, floating_base=False, strict=False, limits=True):
    """The ModelFile of ``path`` (a URDF gets the neutral state and no settings); ``strict``: refuse every inertia
    that no body has (``multibody.model.inertia``); ``limits=False``: the joints' limits kept as data, not stops."""
    import numpy as np

    from multibody.io import load, load_urdf
    from multibody.io.model_files import ModelFile

    if Path(path).suffix.lower() == ".urdf":
        model = load_urdf(path, floating_base=floating_base, strict=strict, limits=limits)
        return ModelFile(model, model.neutral(), np.zeros(model.nv), {}, str(path))
    if Path(path).suffix.lower() == ".xml":
        from multibody.io.mjcf import initial_state, load_mjcf

        model = load_mjcf(path, strict=strict, limits=limits)
        q0, v0 = initial_state(model)
        return ModelFile(model, q0, v0, {"method": "RK4", "h": model.metadata["mjcf"]["timestep"]}, str(path))
    return load(path, strict=strict, limits=limits)


def inside_limits(mf):
    """The ModelFile ``mf`` with the coordinates of its initial configuration that are neutral and outside the
    joints' limits moved inside them — to the middle of the limits, or to the one finite limit (module docstring) —
    and one line per coordinate moved, saying from where to where."""
    import numpy as np

    from multibody.io.model_files import ModelFile

    model, q = mf.model, np.array(mf.q0, dtype=float)
    lower, upper, neutral = model.lower_limits, model.upper_limits, model.neutral()
    names, lines = model.coordinate_names(), []
    for k in np.flatnonzero(((q < lower) | (q > upper)) & (q == neutral)):
        lo, hi = float(lower[k]), float(upper[k])
        new = 0.5 * (lo + hi) if math.isfinite(lo) and math.isfinite(hi) else lo if math.isfinite(lo) else hi
        lines.append(f"initial {names[k]} = {new:.6g} (the neutral {q[k]:.6g} lies outside its limits [{lo:.6g}, "
                     f"{hi:.6g}]; --q0 sets the initial configuration, --no-stops keeps the limits as data)")
        q[k] = new
    return ModelFile(model, q, mf.v0, mf.simulation, mf.source), lines


def initial_configuration(mf, text):
    """The ModelFile ``mf`` with the initial configuration ``--q0`` (nq comma-separated numbers)."""
    import numpy as np

    from multibody.io.model_files import ModelFile

    values = numbers_option(text, "--q0")
    model = mf.model
    if len(values) != model.nq:
        raise ModelError(f"--q0 has {len(values)} values; model '{model.name}' has nq = {model.nq} coordinates "
                         f"({', '.join(model.coordinate_names())})", element="--q0")
    return ModelFile(model, np.array(values), mf.v0, mf.simulation, mf.source)


def simulate_file(mf, t_end=None, method=None, h=None, rtol=None, atol=None, formulation=None, n_out=None,
                  contact=None):
    """Run the ModelFile ``mf`` with its settings, the arguments that are not None replacing them."""
    from multibody.integrate.fixed_step import METHODS
    from multibody.simulation import simulate

    settings = mf.settings(t_end=t_end, method=method, h=h, rtol=rtol, atol=atol, formulation=formulation,
                           n_out=n_out, contact=contact)
    if settings.get("contact") == "stepping":
        settings["method"] = "stepping"      # its own semi-implicit step of size h (docs/contact.md)
    te = float(settings["t_end"])
    if not (math.isfinite(te) and te > 0):
        raise ModelError(f"t_end must be a positive time, got {te}", element="--t-end")
    m = str(settings.get("method", "DOP853")).upper()
    if settings.get("n_out") is None and settings.get("output_every") is None and settings.get("t_eval") is None:
        if m in METHODS or m == "STEPPING":
            if settings.get("h") is None:
                raise ModelError(f"the fixed-step method {m} needs the step h (--h, or simulation.h in the file)",
                                 element="--h")
            settings["output_every"] = output_every(te, settings["h"], m)
        else:
            settings["n_out"] = 1001
    return simulate(mf.model, mf.q0, mf.v0, **mf.settings(**settings))


def numbers_option(text, option):
    """The comma-separated numbers of a command-line option, or a ModelError naming it."""
    try:
        values = [float(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise ModelError(f"{option} must be comma-separated numbers, got {text!r}", element=option) from None
    if not values or not all(math.isfinite(x) for x in values):
        raise ModelError(f"{option} must be one or more finite numbers, got {text!r}", element=option)
    return values


def add_controller(mf, kind, posture=None, kp=None, kd=None, omega=20.0):
    """The ModelFile ``mf`` with a controller on every joint with plain coordinates (``--controller``): ``"pd"``
    (``mb.JointPD`` with gravity compensation) or ``"computed-torque"`` (``mb.ComputedTorque``), holding ``posture``
    (comma-separated, one value per controlled coordinate; default: the initial configuration's). Gains ``kp``,
    ``kd`` (one or one per coordinate); by default Kp = ω² M_ii, Kd = 2 ω M_ii at the posture (each joint a critically
    damped oscillator of natural frequency ω, were the mass matrix diagonal) for PD, and Kp = ω², Kd = 2 ω for the
    computed torque (whose error obeys ë + Kd ė + Kp e = 0)."""
    import numpy as np

    import multibody as mb
    from multibody.io.model_files import ModelFile
    from multibody.model.controllers import resolve_controller

    kinds = {"pd": mb.JointPD, "computed-torque": mb.ComputedTorque}
    if kind not in kinds:
        raise ModelError(f"--controller must be one of {', '.join(kinds)}, got {kind!r}", element="--controller")
    model = mf.model
    nc = sum(j.joint.nv for j in model.joints[1:] if j.joint.linear_coordinates)
    info = resolve_controller(kind, kinds[kind](1.0, 1.0, np.zeros(nc)), model.joints)   # the coordinates
    q = np.array(mf.q0, dtype=float)
    if posture is not None:
        values = numbers_option(posture, "--posture")
        if len(values) != len(info.iq):
            raise ModelError(f"--posture has {len(values)} values for the {len(info.iq)} controlled coordinates "
                             f"({', '.join(info.coordinates)})", element="--posture")
        q[list(info.iq)] = values
    target = q[list(info.iq)]
    if kind == "pd":
        d = np.diag(mb.crba(model, q))[list(info.iv)]
        gains = omega**2 * d, 2 * omega * d
    else:
        gains = omega**2, 2 * omega
    kp = gains[0] if kp is None else numbers_option(kp, "--kp")
    kd = gains[1] if kd is None else numbers_option(kd, "--kd")
    held = model.with_controllers({kind: kinds[kind](kp, kd, target)})
    return ModelFile(held, mf.q0, mf.v0, mf.simulation, mf.source)


def output_files(out):
    """The files ``multibody run`` writes into the folder ``out``."""
    from multibody.io.results import have_h5py

    names = ["result.npz", "result.csv"] + (["result.h5"] if have_h5py() else []) + ["result.png"]
    return [Path(out) / name for name in names]


def prepare_outputs(out):
    """Make the folder ``out`` (with its parents) and check that every output file can be written there, before
    anything is computed; a ``ResultFileError`` naming ``--out`` otherwise. Returns the folders it made (to be
    removed again if nothing is written)."""
    from multibody.files import check_writable

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ResultFileError(f"--out '{out}' is a file, not a folder", path=out, element="--out")
    made = [p for p in [out, *out.parents] if not p.exists()]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultFileError(f"--out '{out}': the folder cannot be made: {exc.strerror or exc}", path=out,
                              element="--out") from None
    try:
        for f in output_files(out):
            check_writable(f, "--out: result file")
    except ResultFileError:
        remove_empty(made)
        raise
    return made


def remove_empty(folders):
    """Remove the folders of ``folders`` (innermost first) that are empty."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            pass


def write_outputs(result, out, title=None):
    """Write result.npz, result.csv, result.h5 (with h5py) and result.png into ``out``; returns the paths. Each
    file is replaced atomically; a file that cannot be written is a ``ResultFileError`` naming it."""
    from multibody.io.results import save_result
    from multibody.viz import plot_result

    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ResultFileError(f"--out '{out}': the folder cannot be made: {exc.strerror or exc}", path=out,
                              element="--out") from None
    files = []
    for path in output_files(out):
        if path.suffix == ".png":
            plot_result(result, path=path, title=title)
        else:
            save_result(result, path)
        files.append(path)
    return files


def keep_elsewhere(result, out, exc):
    """Write ``result`` to a new folder of the system's temporary folder after writing into ``out`` failed
    (``exc``); print where it is kept (or that it could not be kept) to stderr."""
    import tempfile

    try:
        kept = Path(tempfile.mkdtemp(prefix="multibody-run-")) / "result.npz"
        result.save(kept)
    except (OSError, ModelError) as again:
        print(f"multibody run: error: {exc}; keeping the result elsewhere failed too: {again}", file=sys.stderr)
        return
    print(f"multibody run: error: {exc}; the result is kept in {kept}", file=sys.stderr)


def report_problems(exc, stream=None):
    """Print a ModelFileError's problems one per line (``FILE:LINE: PATH: MESSAGE``)."""
    print(exc.report(), file=stream or sys.stderr)


def run(args):
    from multibody.io.documents import ModelFileError

    try:
        mf = load_for_run(args.file, args.floating_base, getattr(args, "strict", False),
                          limits=not (getattr(args, "controller", None) or getattr(args, "no_stops", False)))
    except ModelFileError as exc:
        report_problems(exc)
        return 2
    if getattr(args, "q0", None) is not None:
        mf = initial_configuration(mf, args.q0)
    else:
        mf, moved = inside_limits(mf)
        for line in moved:
            print(f"multibody run: {line}", file=sys.stderr)
    if getattr(args, "controller", None):
        mf = add_controller(mf, args.controller, args.posture, args.kp, args.kd)
    elif any(getattr(args, k, None) is not None for k in ("posture", "kp", "kd")):
        raise ModelError("--posture, --kp and --kd set the controller of --controller pd|computed-torque; give it",
                         element="--controller")
    out = Path(args.out) if args.out else Path(f"{Path(args.file).stem}_run")
    made = prepare_outputs(out)       # before the run: a place that cannot be written fails now, not after it
    try:
        res = simulate_file(mf, t_end=args.t_end, method=args.method, h=args.h, rtol=args.rtol, atol=args.atol,
                            formulation=args.formulation, n_out=args.n_out, contact=getattr(args, "contact", None))
    except IntegrationError as exc:   # the partial result up to the failure is written, and said so
        if exc.result is None:
            remove_empty(made)
            raise
        title = f"{mf.model.name}: {exc.result.info.get('method')} (failed at t = {exc.result.t[-1]:g})"
        try:
            files = write_outputs(exc.result, out, title=title)
        except ResultFileError as again:
            keep_elsewhere(exc.result, out, again)
            raise exc from None
        print(f"multibody run: error: {exc}", file=sys.stderr)
        print(f"  the partial result up to t = {exc.result.t[-1]:g} s is in {files[0]} (and {out}/result.*)",
              file=sys.stderr)
        return 2
    except BaseException:
        remove_empty(made)
        raise
    try:
        files = write_outputs(res, out, title=f"{mf.model.name}: {res.info.get('method')}")
    except ResultFileError as exc:
        keep_elsewhere(res, out, exc)
        return 2
    info = res.info
    print(f"model '{mf.model.name}': {mf.model.nbodies} bodies, nq = {mf.model.nq}, nv = {mf.model.nv}")
    print(f"  {info.get('formulation', mf.simulation.get('formulation', 'tree'))} formulation, {info.get('method')}, "
          f"t = {res.t[0]:g} .. {res.t[-1]:g} s, {info.get('steps')} steps, {info.get('cpu_seconds', 0):.2f} s CPU, "
          f"{info.get('status')}")
    for c in mf.model.controllers:
        error = abs(res.q[-1][list(c.iq)] - c.controller.reference.at(res.t[-1])[0]).max()
        print(f"  controller '{c.name}': largest |q - target| at the end {error:.3e}")
    if res.energy and not mf.model.controllers:
        print(f"  {ENERGY_LINE}: {res.energy_drift():.3e}")
    if res.residuals:
        worst = max(float(abs(v).max()) for v in res.residuals.values())
        print(f"  largest constraint residual: {worst:.3e}")
    for f in files:
        print(f"  wrote {f}")
    return 0


def cli_register(subparsers):
    p = subparsers.add_parser("run", help="simulate a model file (YAML, JSON), a URDF robot or an MJCF model and write "
                                          "the results",
                              description=__doc__.split("\n\n")[1].replace("``", ""))
    p.add_argument("file", help="model file (.yaml, .yml, .json), URDF (.urdf) or MJCF (.xml)")
    p.add_argument("--t-end", type=float, default=None, help="end time (replaces simulation.t_end)")
    p.add_argument("--method", default=None, help="DOP853, RK45, Radau, BDF, ... or fixed step RK4, RK2, HEUN, VERLET")
    p.add_argument("--h", type=float, default=None, help="fixed step")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance (adaptive methods)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance (adaptive methods)")
    p.add_argument("--formulation", default=None, help="tree, constrained, cartesian, stabilized, poisson")
    p.add_argument("--n-out", type=int, default=None, help="number of output times")
    p.add_argument("--out", default=None, metavar="DIR", help="output folder (default: <file name>_run)")
    p.add_argument("--floating-base", action="store_true", help="URDF: put the root link on a free joint")
    p.add_argument("--contact", choices=("stepping", "compliant"), default=None,
                   help="simulate the model's collision elements with this contact model (docs/contact.md)")
    p.add_argument("--strict", action="store_true", help="refuse every inertia that no body has (a URDF's are kept "
                                                         "with a warning otherwise)")
    p.add_argument("--controller", choices=("pd", "computed-torque"), default=None,
                   help="control every joint with plain coordinates in the compiled loop: PD with gravity "
                        "compensation, or computed torque")
    p.add_argument("--posture", default=None, metavar="Q1,Q2,...",
                   help="the controller's target, one value per controlled joint coordinate (default: the initial "
                        "configuration)")
    p.add_argument("--kp", default=None, metavar="K[,K...]", help="controller stiffness gains (default: from the mass "
                                                                  "matrix, 20 rad/s critically damped)")
    p.add_argument("--kd", default=None, metavar="K[,K...]", help="controller damping gains")
    p.add_argument("--q0", default=None, metavar="Q1,Q2,...",
                   help="the initial configuration, nq numbers (default: the file's; a neutral coordinate outside its "
                        "joint's limits starts inside them)")
    p.add_argument("--no-stops", action="store_true", help="keep the joints' limits as data, not end stops")
    p.set_defaults(func=run)
