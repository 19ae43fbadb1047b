"""``multibody bicycle``: the Whipple bicycle benchmark of seed 003 (Meijaard et al. 2007).

Prints M, C1, K0, K2 (eqs. 6.1-6.4), the critical speeds v_d, v_w, v_c and the eigenvalue table of the
paper's Table 2 (speeds 0, 1, ..., 10 m/s). Examples::

    multibody bicycle
    multibody bicycle --params mybike.yaml --plot eig.png
    multibody bicycle --speeds 0:10:0.01 --csv sweep.csv
    multibody bicycle --json > bench.json

``--speeds START:STOP:STEP`` (STOP included, e.g. ``0:10:0.01`` gives 1001 speeds) or ``V1,V2,...``
replaces the Table 2 speeds and writes the sweep as CSV (``--csv FILE``, default
``bicycle_eigenvalues.csv``); columns ``v, weave1_re, weave1_im, weave2_re, weave2_im, capsize_re,
capsize_im, castor_re, castor_im, stable``.

``--json`` prints one JSON object instead of the text report: ``M``, ``C1``, ``K0``, ``K2`` (2x2 lists),
``weave_speed``, ``capsize_speed``, ``oscillation_speed`` (v_d), ``double_root`` (lambda_d),
``weave_frequency``, ``stable_interval`` ([v_w, v_c] or null), ``parameters`` and ``eigenvalues``: a list
with one object per speed, ``{"v", "weave": [[re, im], [re, im]], "capsize": [re, im], "castor": [re, im],
"stable"}``. Every complex number is a ``[re, im]`` pair. Speeds that do not occur are ``null``.
"""
import dataclasses
import io
import json
import sys

import numpy as np

from multibody.files import write_text

DEFAULT_CSV = "bicycle_eigenvalues.csv"
TABLE2_SPEEDS = np.arange(11.0)


def parse_speeds(text):
    """``"0:10:0.01"`` (stop included), ``"0:10"`` (step 1) or ``"0,1,2.5"`` -> 1-D array of speeds."""
    text = text.strip()
    try:
        if ":" in text:
            parts = [float(x) for x in text.split(":")]
            if len(parts) == 2:
                parts.append(1.0)
            if len(parts) != 3:
                raise ValueError
            start, stop, step = parts
            if step <= 0 or stop < start:
                raise ValueError
            n = int(round((stop - start) / step)) + 1
            if n > 10_000_000:
                raise ValueError
            return start + step * np.arange(n)
        values = np.array([float(x) for x in text.split(",") if x.strip()])
        if values.size == 0:
            raise ValueError
        return values
    except ValueError:
        raise ValueError(f"--speeds {text!r}: expected START:STOP:STEP with STEP > 0 and STOP >= START "
                         "(e.g. 0:10:0.01) or a comma-separated list of speeds") from None


def _pair(z):
    return [float(np.real(z)), float(np.imag(z))]


def _opt(x):
    return None if x is None else float(x)


def results(params, speeds, from_model=False):
    """The JSON-ready results (see the module docstring) for a parameter set and speeds: from the paper's
    closed form (Appendix A), or with ``from_model`` from the generic model (``bicycle.whipple_model``)
    linearized by the library."""
    from multibody.systems import bicycle

    if from_model:
        M, C1, K0, K2 = bicycle.model_matrices(params)
        cs = bicycle.critical_speeds(params)
        vw, vc = bicycle.model_critical_speeds(params)
        cs = dataclasses.replace(cs, weave=vw, capsize=vc)
        sw = bicycle.model_eigenvalues(params, speeds)
    else:
        M, C1, K0, K2 = bicycle.linear_matrices(params)
        cs = bicycle.critical_speeds(params)
        sw = bicycle.eigenvalues(params, speeds)
    stable = sw.stable
    rows = [{"v": float(v), "weave": [_pair(sw.weave[i, 0]), _pair(sw.weave[i, 1])],
             "capsize": _pair(sw.capsize[i]), "castor": _pair(sw.castor[i]), "stable": bool(stable[i])}
            for i, v in enumerate(sw.speeds)]
    return {
        "parameters": bicycle.validate_parameters(params).to_dict(),
        "M": M.tolist(), "C1": C1.tolist(), "K0": K0.tolist(), "K2": K2.tolist(),
        "weave_speed": _opt(cs.weave), "capsize_speed": _opt(cs.capsize),
        "oscillation_speed": _opt(cs.oscillation), "double_root": _opt(cs.double_root),
        "weave_frequency": _opt(cs.weave_frequency),
        "stable_interval": None if cs.stable_interval is None else list(cs.stable_interval),
        "complex_format": "[re, im]",
        "eigenvalues": rows,
    }, sw


def write_csv(sweep, path):
    """Write an EigenSweep as CSV (full double precision)."""
    v = sweep.values
    cols = [sweep.speeds, v[:, 0].real, v[:, 0].imag, v[:, 1].real, v[:, 1].imag, v[:, 2].real, v[:, 2].imag,
            v[:, 3].real, v[:, 3].imag, sweep.stable.astype(float)]
    header = "v,weave1_re,weave1_im,weave2_re,weave2_im,capsize_re,capsize_im,castor_re,castor_im,stable"
    text = io.StringIO()
    np.savetxt(text, np.column_stack(cols), delimiter=",", header=header, comments="", fmt=["%.17g"] * 9 + ["%d"])
    return write_text(path, text.getvalue(), "--csv")


def _matrix_text(name, A):
    rows = [f"[{A[i, 0]:20.14f} {A[i, 1]:20.14f} ]" for i in range(2)]
    return f"{name:<3s}= {rows[0]}\n     {rows[1]}"


def _report(res, sw, source):
    out = [f"Whipple bicycle, linearized (Meijaard et al. 2007, eq. 5.3): {source}",
           "  M q'' + v C1 q' + (g K0 + v^2 K2) q = f,   q = [lean phi, steer delta]", ""]
    for name in ("M", "C1", "K0", "K2"):
        out.append(_matrix_text(name, np.array(res[name])))
    out.append("")
    fmt = lambda x: "none in 0-100 m/s" if x is None else f"{x:.14f} m/s"  # noqa: E731
    out.append("critical speeds (Table 2a):")
    vd = fmt(res["oscillation_speed"])
    if res["double_root"] is not None:
        vd += f"   (double root lambda_d = {res['double_root']:.14f} 1/s)"
    out.append(f"  v_d  weave oscillation starts  {vd}")
    vw = fmt(res["weave_speed"])
    if res["weave_frequency"] is not None:
        vw += f"   (lambda = +-{res['weave_frequency']:.14f} i)"
    out.append(f"  v_w  weave speed               {vw}")
    out.append(f"  v_c  capsize speed             {fmt(res['capsize_speed'])}")
    si = res["stable_interval"]
    out.append("  self-stable for " + (f"{si[0]:.6f} < v < {si[1]:.6f} m/s" if si else "no speed interval"))
    out.append("")
    out.append("eigenvalues (Table 2b, 2c), 1/s:")
    out.append(f"{'v (m/s)':>8s} {'weave Re':>19s} {'weave Im':>19s} {'capsize':>19s} {'castor':>19s}  stable")
    notes = []
    for i, v in enumerate(sw.speeds):
        w = sw.weave[i, 0]
        if sw.oscillatory[i]:
            wre, wim = f"{w.real:19.14f}", f"{w.imag:19.14f}"
        else:
            wre = wim = f"{'-':>19s}"
            notes.append(f"  v = {v:g}: weave pair real, {sw.weave[i, 0].real:.14f} and {sw.weave[i, 1].real:.14f}")
        cap, cas = sw.capsize[i], sw.castor[i]
        cap_s = f"{cap.real:19.14f}" if cap.imag == 0 else f"{cap.real:.6f}{cap.imag:+.6f}i".rjust(19)
        cas_s = f"{cas.real:19.14f}" if cas.imag == 0 else f"{cas.real:.6f}{cas.imag:+.6f}i".rjust(19)
        out.append(f"{v:8.3f} {wre} {wim} {cap_s} {cas_s}  {'yes' if sw.stable[i] else 'no'}")
    out.extend(notes)
    return "\n".join(out)


def run_iftomm(args):
    """``multibody bicycle iftomm M1|M2|M3``: the IFToMM uncontrolled-bicycle maneuver on the generic model."""
    from multibody.errors import ModelError
    from multibody.systems import bicycle

    if args.maneuver is None or args.maneuver.upper() not in bicycle.IFTOMM_MANEUVERS:
        given = "no maneuver given" if args.maneuver is None else f"unknown maneuver {args.maneuver!r}"
        raise ModelError(f"bicycle iftomm: {given}; expected one of {', '.join(bicycle.IFTOMM_MANEUVERS)}",
                         element="maneuver")
    params = bicycle.load_parameters(args.params) if args.params else bicycle.benchmark_parameters()
    out = bicycle.iftomm_maneuver(args.maneuver, params)
    if args.json:
        print(json.dumps(out, indent=1))
    else:
        for k, v in out.items():
            print(f"{k:>28s}  {v:.12g}" if isinstance(v, float) else f"{k:>28s}  {v}")
    return 0


def run(args):
    from multibody.cli.paths import output_file
    from multibody.errors import ModelError, MultibodyError
    from multibody.systems import bicycle

    if args.action is not None and args.action.lower() != "iftomm":
        if args.action.upper() in bicycle.IFTOMM_MANEUVERS:
            raise ModelError(f"{args.action} is an IFToMM maneuver: run it with `multibody bicycle iftomm "
                             f"{args.action.upper()}`", element="maneuver")
        raise ModelError(f"unexpected argument {args.action!r}; expected `multibody bicycle [options]` or "
                         f"`multibody bicycle iftomm {'|'.join(bicycle.IFTOMM_MANEUVERS)}`", element="action")
    if args.action is not None:
        return run_iftomm(args)
    if args.maneuver is not None:
        raise ModelError(f"unexpected argument {args.maneuver!r}; a maneuver goes after `iftomm` (`multibody bicycle "
                         f"iftomm {args.maneuver}`)", element="maneuver")
    for option, path in (("--csv", args.csv), ("--save-params", args.save_params), ("--plot", args.plot)):
        output_file(path, option)
    if args.speeds is not None and not args.csv:
        output_file(DEFAULT_CSV, "--csv")
    try:
        if args.params:
            params = bicycle.load_parameters(args.params)
            source = f"parameters from {args.params}"
        else:
            params = bicycle.benchmark_parameters()
            source = "benchmark parameters (Table 1)"
        custom = args.speeds is not None
        speeds = parse_speeds(args.speeds) if custom else TABLE2_SPEEDS
        res, sw = results(params, speeds, from_model=args.from_model)
        if args.from_model:
            source += ", from the generic model (whipple_model) linearized"
    except (MultibodyError, ValueError) as exc:
        print(f"multibody bicycle: error: {exc}", file=sys.stderr)
        return 2
    info = sys.stderr if args.json else sys.stdout
    if args.json:
        print(json.dumps(res, indent=1))
    else:
        table = sw if not custom or sw.speeds.size <= 50 else results(params, TABLE2_SPEEDS, args.from_model)[1]
        print(_report(res, table, source))
    if custom or args.csv:
        path = args.csv or DEFAULT_CSV
        write_csv(sw, path)
        print(f"wrote {sw.speeds.size} speeds to {path}", file=info)
    if args.save_params:
        bicycle.save_parameters(params, args.save_params)
        print(f"wrote parameters to {args.save_params}", file=info)
    if args.plot:
        from multibody.viz.bicycle import plot_eigenvalues

        plot_eigenvalues(params, args.plot)
        print(f"wrote eigenvalue plot to {args.plot}", file=info)
    return 0


def cli_register(subparsers):
    from multibody.cli import describe

    p = subparsers.add_parser(
        "bicycle", help="Whipple bicycle benchmark (seed 003): M, C1, K0, K2, eigenvalues, critical speeds",
        description=describe(__doc__) + " Complex numbers in --json output are [re, im] pairs. `multibody bicycle "
                                        "iftomm M1|M2|M3` runs an IFToMM maneuver on the nonlinear model.")
    p.add_argument("action", nargs="?", metavar="iftomm",
                   help="iftomm M1|M2|M3: the IFToMM uncontrolled-bicycle maneuver on the generic nonlinear model")
    p.add_argument("maneuver", nargs="?", help="M1 (4 m/s, lean rate 0.05 rad/s), M2 (4.6, 0.5), M3 (8, 0.05)")
    p.add_argument("--from-model", action="store_true",
                   help="compute the matrices, eigenvalues and critical speeds from the generic model (four bodies, "
                        "three hinges, two rolling discs) linearized by the library")
    p.add_argument("--params", metavar="FILE.yaml", help="bicycle parameters (Table 1 names); default: benchmark")
    p.add_argument("--speeds", metavar="A:B:STEP",
                   help="custom speed sweep, e.g. 0:10:0.01 (stop included) or 0,2.5,5; written as CSV")
    p.add_argument("--csv", metavar="FILE", help=f"CSV file of the sweep (default {DEFAULT_CSV} with --speeds)")
    p.add_argument("--plot", metavar="PNG", help="eigenvalues vs speed, 0-10 m/s, stable interval shaded (Fig. 3)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the text report")
    p.add_argument("--save-params", metavar="FILE.yaml", help="write the parameter set used as YAML")
    p.set_defaults(func=run)
