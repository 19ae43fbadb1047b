"""Fixed-step explicit integrators running entirely inside one compiled (numba) loop.

A whole run ``x(t0) -> x(t0 + nsteps h)`` is one call of a compiled loop (:func:`run_fixed`,
:func:`integrate_fixed`); Python is not entered between steps. The system is given by numba ``@njit``
functions and a parameter tuple:

``rhs(t, x, params, out)``
    writes dx/dt at ``(t, x)`` into ``out`` (float64 1-D arrays of the same length);
``project(x, params)``
    modifies ``x`` in place after every completed step (normalise quaternions, project onto a
    constraint manifold, ...); use :func:`no_project` for a plain ODE;
``observe(x, params, obs, k)`` (optional)
    records what goes with saved state k into ``obs[k]``; :func:`no_observe` records nothing;
``params``
    any tuple (arrays, scalars) that numba can type; it is passed through unchanged to all of them.

Methods (``method`` argument, see :data:`METHODS`):

=========  ====  ==========================================================================================
name       code  scheme
=========  ====  ==========================================================================================
``RK2``     0    explicit midpoint rule, the 2nd-order Runge–Kutta method:
                 ``k1 = f(t, x)``, ``k2 = f(t + h/2, x + h/2 k1)``, ``x+ = x + h k2``
``HEUN``    1    Heun's 2nd-order Runge–Kutta method (explicit trapezoid):
                 ``k1 = f(t, x)``, ``k2 = f(t + h, x + h k1)``, ``x+ = x + h/2 (k1 + k2)``
``RK4``     2    the classical 4th-order Runge–Kutta method
``VERLET``  3    Störmer / velocity-Verlet splitting for ``x = [positions (nsplit); velocities]``:
                 kick ``v½ = v + h/2 a(q, v)``, drift ``q+ = q + h qdot(q, v½)``,
                 kick ``v+ = v½ + h/2 a(q+, v½)``. Symplectic and of order 2 when ``qdot = v`` and the
                 accelerations depend on positions only; otherwise a 2nd-order-consistent splitting
                 that is not symplectic (order 1 in general for velocity-dependent forces).
``STORMER6`` 4   6th-order composition of the symmetric Störmer–Verlet scheme for a partitioned system
                 ``x = [q (nsplit); p]``, ``q̇ = f(q, p)``, ``ṗ = g(q, p)`` (see below); symplectic for a
                 Hamiltonian system in canonical coordinates, time-symmetric and of order 6 for any.
=========  ====  ==========================================================================================

``STORMER6``. Seed 002 (reference notes §A.9) integrates its equations in Poisson impulses with "the Störmer
method [Hairer, Nørsett & Wanner] of approximation order 6"; the scheme itself is not printed. Here it is the
composition ``Φ_{γ9 h} ∘ … ∘ Φ_{γ1 h}`` of the Störmer–Verlet (Lobatto IIIA–IIIB) step

    p½ = p + c/2 g(q, p½),   q+ = q + c/2 (f(q, p½) + f(q+, p½)),   p+ = p½ + c/2 g(q+, p½)

(Hairer, Lubich & Wanner, *Geometric Numerical Integration* (GNI), 2nd ed., §II.2, §VI.3: symmetric and of
order 2 for any partitioned system, symplectic for canonical Hamiltonian ones, explicit when the Hamiltonian
is separable), with the coefficients γ1..γ9 of Kahan & Li's s9odr6a, *Math. Comp.* 66 (1997) 1089–1099, as
printed in GNI §V.3.2: the symmetric composition of a symmetric 2nd-order method with these coefficients
is of order 6. The two implicit equations (q̇ = H_p depends on q and ṗ = −H_q on p when the mass matrix varies)
are solved by fixed-point iteration to round-off: until the relative change of an iterate is ≤ ``SV_TOL``,
or is ≤ ``SV_FLOOR`` and no longer halves from one iteration to the next — the round-off of the right-hand
side, amplified by the conditioning of the mass matrix, sets that floor (about 2e-15 on cardan chains).
An iteration still above these after ``SV_MAX_ITER`` times (divergence: h too large for the fastest motion)
stops the run with ``STATUS_NOT_CONVERGED``. The starting guesses are explicit Euler steps. A stage costs
2 + (iterations of the two equations) evaluations of ``rhs``, each iteration gaining a factor ≈ h·‖∂f/∂x‖:
measured about 18 per stage, 160 per step, at h = 0.02 on a 5-body cardan chain (``tests/test_poisson.py``),
40 times an RK4 step. The method is the choice for long runs that must keep the energy without drift.



Seed 000 (§4) integrates its stabilized hoop equations with "an explicit second-order Runge–Kutta
method with constant step h = 1e-5" without naming the variant; both 2nd-order forms are provided, and
``"RK2"`` is the explicit midpoint rule.

Caching note (numba 0.68). numba types a *function argument* by the identity of the dispatcher object,
so an on-disk cache entry of a function taking ``rhs`` as an argument can never be reused by another
process (every new process misses the cache and appends one more entry to the ``__pycache__`` index,
measured), and closures over ``rhs`` are refused ("dynamic globals"). The loops are therefore written once,
in the template module ``integrate/rk_template.py``, with ``rhs``, ``project``, ``observe`` and ``run_params``
as *globals*; :func:`specialize` writes (once) a copy of it under ``$MULTIBODY_CACHE/<fingerprint>/fixed_step``
(``multibody.cache``) that imports the system's functions under those names, named by a hash of its source
(which includes the sources of the functions), and numba caches its loops on disk: later processes load them.
The functions must then be importable module-level ``@njit(cache=True)`` functions; for others (defined in
``__main__`` or in a closure) the same source is compiled in memory, once per process. The generated module
holds only the system's small parts (its functions taking their parameters from a pointer, the entry, the
batch); the loop itself (``integrate/rk_loop.py``) is compiled once for every system and calls them by address.

Outputs. The loops save the state at given step numbers (:func:`save_steps`: the initial state, every k-th
step and the last one; or any ascending list) and, with each saved state, what an ``observe(x, params, obs,
k)`` function records into ``obs[k]`` (the energies of the tree formulation), inside the compiled loop.
Many runs at once: :func:`run_fixed_batch` (slices of the runs in threads over loops compiled without the GIL,
:func:`in_threads`, ``kernels/threads.py``; each run computed exactly as a single run).
"""
import inspect
import os
import sys
import time

import numpy as np
from numba import njit

from multibody.integrate.progress import progress_bar
from multibody.integrate.tableaux import (KAHAN_LI_S9ODR6, METHODS, SV_FLOOR, SV_MAX_ITER, SV_TOL, TABLEAU_A, TABLEAU_B,
                                          TABLEAU_C, TABLEAU_DIV, TABLEAU_STAGES)
from multibody.kernels.spatial import COMPILED, KERNEL
from multibody.kernels.threads import in_threads

#: seconds of computing between two updates of the progress bar of a compiled run (pieces of whole steps)
PIECE_SECONDS = 0.25

#: Status codes returned by the loops.
STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_NOT_CONVERGED = 2
STATUS_MESSAGES = {
    STATUS_OK: "completed",
    STATUS_NONFINITE: "the state became non-finite (NaN or inf)",
    STATUS_NOT_CONVERGED: ("the implicit Störmer–Verlet equations of STORMER6 did not converge "
                           "(fixed-point iteration)"),
}


@njit(**KERNEL)
def no_project(x, params):
    """The identity projection (plain ODEs)."""
    return


@njit(**KERNEL)
def no_observe(x, params, obs, k):
    """Record nothing with the saved states."""
    return


@njit(**KERNEL)
def no_rhs(t, x, params, out):
    """ẋ = 0 (the template's placeholder right-hand side)."""
    for j in range(out.shape[0]):
        out[j] = 0.0


@njit(**COMPILED)
def shared_params(params, batch, b):
    """Every run of a batch with the same parameters (the template's placeholder: a system whose parameters
    hold workspaces needs a ``run_params`` of its own, one workspace per run)."""
    return params


def n_saved(nsteps, save_every):
    """Number of states saved with ``save_every``: the initial state, every ``save_every``-th step, and the
    last step if ``nsteps`` is not a multiple of ``save_every``."""
    return len(save_steps(nsteps, save_every))


def save_steps(nsteps, every=1):
    """The step numbers saved by ``every``: 0 (the initial state), every ``every``-th step and the last step."""
    steps = np.arange(0, nsteps + 1, every, dtype=np.int64)
    if steps[-1] != nsteps:
        steps = np.append(steps, np.int64(nsteps))
    return steps


_SPECIALIZED = {}
_TEMPLATE_BINDINGS = ("observe", "project", "rhs", "run_params")


def default_cache_dir():
    """Folder of the generated modules: ``multibody.cache.cache_dir("fixed_step")``, keyed on the package's
    fingerprint so that a changed kernel never meets stale compiled code."""
    from multibody.cache import cache_dir

    return cache_dir("fixed_step")


def _importable(func):
    """(module, qualname) of a module-level numba function, or None."""
    py = getattr(func, "py_func", None)
    if py is None:
        return None
    mod, name = py.__module__, py.__qualname__
    if mod == "__main__" or "<" in name or "." in name or mod not in sys.modules:
        return None
    if getattr(sys.modules[mod], name, None) is not func:
        return None
    return mod, name


def _template_source():
    """The source of ``rk_template`` without its four placeholder imports, and the line they stood on."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rk_template.py")
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().splitlines(keepends=True)
    marked = [k for k, line in enumerate(lines) if line.rstrip().endswith("(bound by specialize)")]
    if len(marked) != len(_TEMPLATE_BINDINGS) or marked[-1] - marked[0] != len(marked) - 1:
        raise RuntimeError("fixed_step: unexpected layout of rk_template.py (cannot specialize)")
    return lines[:marked[0]], lines[marked[-1] + 1:]


def specialize(rhs, project=None, observe=None, run_params=None, cache_dir=None):
    """The compiled loops of ``integrate/rk_template.py`` (a module with ``rk_run`` and ``rk_batch``)
    bound to these functions (defaults: :func:`no_project`, :func:`no_observe`, :func:`shared_params`).

    When all four are importable module-level numba functions the loops are a generated module cached on disk
    (``module.CACHE`` is True), else the same source compiled in memory for this process only.

    ``rk_run`` does not read ``run_params``: the module made for a ``run_params`` of its own takes its ``rk_run``
    from the module of the same functions without it, so that single runs and batches compile the loop of one
    run once (it carries the whole right-hand side through LLVM: seconds on a fresh install)."""
    funcs = {"rhs": rhs, "project": no_project if project is None else project,
             "observe": no_observe if observe is None else observe,
             "run_params": shared_params if run_params is None else run_params}
    key = tuple(funcs[name] for name in _TEMPLATE_BINDINGS)
    if key in _SPECIALIZED:
        return _SPECIALIZED[key]
    single = None
    if funcs["run_params"] is not shared_params:
        single = specialize(rhs, funcs["project"], funcs["observe"], cache_dir=cache_dir)
    head, body = _template_source()
    names = {name: _importable(f) for name, f in funcs.items()}
    mod = None
    if None not in names.values():
        try:
            sources = [inspect.getsource(funcs[name].py_func) for name in _TEMPLATE_BINDINGS]
        except (OSError, TypeError):
            sources = None
        if sources is not None:
            imports = "".join(f"from {names[n][0]} import {names[n][1]} as {n}\n" for n in _TEMPLATE_BINDINGS)
            # the sources of the bound functions go into the hash as a comment: a changed rhs gets a new module
            src = ("".join(f"# {line}\n" for f in sources for line in f.splitlines())
                   + "".join(head) + imports + "".join(body))
            if single is not None and single.CACHE:  # (imported by then: ``single`` is in sys.modules)
                src += f"\nfrom {single.__name__} import rk_run  # noqa: E402,F811  (the loop of one run, shared)\n"
            try:
                from multibody.cache import import_generated

                mod = import_generated("_mb_rk_", src, "fixed_step", cache_dir)
            except OSError:  # read-only home, ...: compile in memory
                mod = None
    if mod is None:
        import types

        src = "".join(head) + "".join(body).replace("\nCACHE = True\n", "\nCACHE = False\n", 1)
        # a name of its own in sys.modules: the entry finds the system's functions by module and name
        mod = types.ModuleType(f"_mb_rk_in_memory_{len(_SPECIALIZED)}")
        mod.__dict__.update(funcs)
        sys.modules[mod.__name__] = mod
        exec(compile(src, "<multibody.integrate.rk_template>", "exec"), mod.__dict__)
        if single is not None:
            mod.rk_run = single.rk_run
    _SPECIALIZED[key] = mod
    return mod


def method_code(method):
    """Integer code of a fixed-step method name (case-insensitive), see :data:`METHODS`."""
    key = str(method).upper()
    if key not in METHODS:
        raise ValueError(f"fixed-step method {method!r} is unknown; expected one of {sorted(METHODS)}")
    return METHODS[key]


def _check(method, x0, nsteps, h, nsplit):
    code = method_code(method)
    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    if x0.ndim != 1:
        raise ValueError(f"initial state x0 must be 1-D, got shape {x0.shape}")
    if int(nsteps) < 0:
        raise ValueError(f"nsteps must be >= 0, got {nsteps}")
    if not (h > 0 and np.isfinite(h)):
        raise ValueError(f"step h must be positive and finite, got {h}")
    if code in (3, 4) and not (0 < nsplit < x0.shape[0]):
        raise ValueError(f"method {method} needs 0 < nsplit < len(x0) = {x0.shape[0]}, got nsplit={nsplit}")
    return code, x0, int(nsteps)


def _save_array(save, nsteps, first=0):
    save = np.ascontiguousarray(save, dtype=np.int64).reshape(-1)
    if save.size and (save[0] < first or save[-1] > nsteps or np.any(np.diff(save) <= 0)):
        raise ValueError(f"save steps must be ascending step numbers in {first}..{nsteps}")
    return save


def run_fixed(rhs, x0, t0, h, nsteps, params=(), method="RK4", project=no_project, save=None, nsplit=0,
              progress=False, chunk=None, observe=None, nobs=0, first=0, on_chunk=None):
    """One fixed-step run in the compiled loop (:func:`specialize`): returns ``(t, x, status, last step done,
    obs)``
    with the states saved at the step numbers ``save`` (default every step, see :func:`save_steps`) and, with
    each, ``obs`` (``nobs`` columns written by ``observe``).

    ``x0`` is the state at step ``first`` of the grid ``t0 + k h`` (default 0, the start); the run makes the
    steps ``first + 1 .. nsteps`` and ``save`` holds step numbers of that grid (``first .. nsteps``).

    ``on_chunk(done, x, parts)`` is called after each ``chunk`` of whole steps (ending on the step numbers
    ``first + j chunk``, and at the end) with the step reached, the state there and the outputs so far (a list of
    ``(t, x, obs)`` arrays); an exception it raises propagates with ``exc.partial = (t, x, obs, done)``, what
    was computed. ``progress``: a tqdm bar of the steps (None: after two seconds, on a terminal; True; False;
    ``integrate/progress.py``), updated between pieces of about ``PIECE_SECONDS`` of computing. Every step time
    is ``t0 + k h`` computed from the step number ``k``, so pieces and chunks give the numbers of a single call,
    bit for bit."""
    code, x0, nsteps = _check(method, x0, nsteps, h, nsplit)
    first = int(first)
    if not 0 <= first <= nsteps:
        raise ValueError(f"first must be a step number in 0..{nsteps}, got {first}")
    if save is None:
        save = save_steps(nsteps)
        save = save[save >= first]
    else:
        save = _save_array(save, nsteps, first)
    run = specialize(rhs, project, observe).rk_run
    x = x0.copy()
    n = x.shape[0]
    xt, K = np.empty(n), np.empty((4, n))

    def loop(start, stop, steps):
        ts, xs, obs = np.empty(steps.shape[0] + 1), np.empty((steps.shape[0] + 1, n)), \
            np.empty((steps.shape[0] + 1, int(nobs)))
        k, status, d = run(x, float(t0), float(h), start, stop, steps, params, code, int(nsplit), ts, xs, obs, xt, K)
        return ts[:k], xs[:k], obs[:k], status, d

    bar = progress_bar(progress, nsteps, f"{method} h={h:g}", "step", initial=first)
    if (bar is None and on_chunk is None) or nsteps == first:
        if bar is not None:
            bar.close()
        t, xs, obs, status, done = loop(first, nsteps, save)
        return t, xs, status, done, obs

    # chunks: whole ``chunk``s between the calls of on_chunk, cut into pieces of about PIECE_SECONDS of computing
    # for the bar (timed, so the bar moves on a slow model too; the numbers do not depend on the cut)
    chunk = max(1, int(chunk) if chunk is not None else nsteps - first)
    piece = min(chunk, 1000) if bar is not None else chunk
    parts = []
    done = first
    status = STATUS_OK
    try:
        while done < nsteps:
            boundary = first + ((done - first) // chunk + 1) * chunk
            stop = min(done + piece, boundary, nsteps)
            lo = done if done == first else done + 1  # the state given is saved with the first chunk only
            part = save[(save >= lo) & (save <= stop)]
            started = time.perf_counter()
            t, xs, obs, status, d = loop(done, stop, part)
            elapsed = time.perf_counter() - started
            parts.append((t, xs, obs))
            if bar is not None:
                bar.update(d - done)
                piece = max(1, min(10 * piece, int(piece * PIECE_SECONDS / max(elapsed, 1e-6))))
            done = d
            if status != STATUS_OK:
                break
            if on_chunk is not None and (done == boundary or done == nsteps):
                on_chunk(done, x, parts)
    except Exception as exc:   # on_chunk failed (a checkpoint that could not be written): keep what was computed
        exc.partial = tuple(np.concatenate([p[k] for p in parts]) for k in range(3)) + (done,)
        raise
    finally:
        if bar is not None:
            bar.close()
    t, xs, obs = (np.concatenate([p[k] for p in parts]) for k in range(3))
    return t, xs, status, done, obs


def integrate_fixed(rhs, x0, t0, h, nsteps, params=(), method="RK4", project=no_project, save_every=1,
                    nsplit=0, progress=False, chunk=None):
    """:func:`run_fixed` saving every ``save_every``-th step (and the last one); returns
    ``(t, x, status, nsteps_done)``."""
    save_every = int(save_every)
    if save_every < 1:
        raise ValueError(f"save_every must be >= 1, got {save_every}")
    if int(nsteps) < 0:
        raise ValueError(f"nsteps must be >= 0, got {nsteps}")
    t, x, status, done, _ = run_fixed(rhs, x0, t0, h, nsteps, params, method, project,
                                      save_steps(int(nsteps), save_every), nsplit, progress, chunk)
    return t, x, status, done


def rk_fixed(rhs, project, x0, t0, h, nsteps, save_every, params, method, nsplit=0):
    """``integrate_fixed`` with positional arguments and an integer ``method`` code (kept for callers of the
    former generic loop)."""
    name = next(k for k, v in METHODS.items() if v == int(method))
    return integrate_fixed(rhs, x0, t0, h, nsteps, params, name, project, save_every, nsplit)


def run_fixed_batch(rhs, X0, t0, h, nsteps, params, batch, run_params, method="RK4", project=no_project,
                    save=None, nsplit=0, observe=None, nobs=0, nchunk=None, lanes=None):
    """Many fixed-step runs, in slices run by threads (:func:`in_threads`): run b starts from ``X0[b]`` with the
    parameters ``run_params(params, batch, b)`` (a numba function returning a parameter tuple with workspaces of its own).
    Each run is computed exactly as :func:`run_fixed` would (the same loop and order of operations), whatever
    the number of threads. Returns ``(t, X, status, done, OBS)``: ``t`` the saved times (of a complete run), X
    (runs, saved, n) and OBS (runs, saved, nobs), rows after a failed run's last finite state set to NaN;
    ``status`` and ``done`` per run.

    ``lanes=(mi, mf, F, TAU, MG, C)``: the runs are trees that ``kernels.lanes`` computes, with the joint forces F
    (``model.packing.joint_force_table``), the generalized forces TAU (runs, nv), the body masses and gravity MG
    (runs, nbodies + 3) and the controllers' table C (``model.controllers.ControllerTable.arrays``): they run
    ``LANES`` at a time in SIMD lanes (``integrate/lanes.py``), with the same numbers;
    ``rhs``, ``project``, ``observe`` and ``run_params`` must then be the tree formulation's (not called).
    ``nchunk``: the number of slices (default four per thread)."""
    code, _, nsteps = _check(method, np.zeros(1 + int(nsplit)), nsteps, h, nsplit)
    X = np.array(X0, dtype=np.float64, order="C")
    if X.ndim != 2:
        raise ValueError(f"initial states X0 must be (runs, n), got shape {X.shape}")
    save = save_steps(nsteps) if save is None else _save_array(save, nsteps)
    nb, n = X.shape
    rows = save.shape[0] + 1
    TS = np.empty((nb, rows))
    XS = np.full((nb, rows, n), np.nan)
    OBS = np.full((nb, rows, int(nobs)), np.nan)
    INFO = np.zeros((nb, 3), dtype=np.int64)
    if lanes is not None:
        from multibody.integrate.lanes import LANES, lanes_groups

        mi, mf, F, TAU, MG, C = lanes
        in_threads(lanes_groups, (mi, mf, F, X, np.ascontiguousarray(TAU, dtype=np.float64),
                                  np.ascontiguousarray(MG, dtype=np.float64), C, float(t0), float(h), nsteps, save, code,
                                  int(nsplit), TS, XS, OBS, INFO), -(-nb // LANES), nchunk)
    else:
        loops = specialize(rhs, project, observe, run_params)
        in_threads(loops.rk_batch, (X, float(t0), float(h), nsteps, save, params, batch, code, int(nsplit)), nb,
                   nchunk, (TS, XS, OBS, INFO))
    status, done = INFO[:, 1].copy(), INFO[:, 2].copy()
    k = save.shape[0]
    XS, OBS = XS[:, :k], OBS[:, :k]
    for b in np.flatnonzero(status != STATUS_OK):  # keep the rows on the time grid only
        kept = np.searchsorted(save, done[b], side="right")
        XS[b, kept:] = np.nan
        OBS[b, kept:] = np.nan
    return float(t0) + save * float(h), XS.copy(), status, done, OBS.copy()


def _fixed_point(update, x, rhs_at):
    """Iterate x <- update(rhs_at(x)) as the compiled STORMER6 loop does; returns (x, rhs at x, converged)."""
    k = rhs_at(x)
    last = np.inf
    for _ in range(SV_MAX_ITER):
        new = update(k)
        change = np.max(np.abs(new - x) / (1.0 + np.abs(new)), initial=0.0)
        x = new
        k = rhs_at(x)
        if not change > SV_TOL:
            return x, k, True
        if change <= SV_FLOOR and change > 0.5 * last:
            return x, k, True
        last = change
    return x, k, False


def stormer6_python_step(rhs, t, x, h, nsplit):
    """One STORMER6 step of the compiled loop (``rk_loop.stormer6_step``) for a Python ``rhs(t, x)``:
    Kahan & Li's composition of
    Störmer–Verlet steps (see the module docstring). Returns ``(x_new, converged)``."""
    x = np.array(x, dtype=np.float64)
    ok = True
    for g in KAHAN_LI_S9ODR6:
        c = g * h
        q, p = x[:nsplit].copy(), x[nsplit:].copy()
        ph, k, ok1 = _fixed_point(lambda k: p + 0.5 * c * k[nsplit:], p,
                                  lambda ph: rhs(t, np.concatenate([q, ph])))
        fq = k[:nsplit]
        qn, k, ok2 = _fixed_point(lambda k: q + 0.5 * c * (fq + k[:nsplit]), q + c * fq,
                                  lambda qn: rhs(t + c, np.concatenate([qn, ph])))
        x = np.concatenate([qn, ph + 0.5 * c * k[nsplit:]])
        ok = ok and ok1 and ok2
        t += c
    return x, ok


def rk_fixed_python(rhs, project, x0, t0, h, nsteps, save, method, nsplit=0, progress=False, on_step=None):
    """The same schemes as the compiled loops as a Python loop, for right-hand sides that call Python
    (e.g. a joint-torque callback ``tau(t, q, v)``): ``rhs(t, x) -> dx/dt`` and ``project(t, x) -> x`` (at the
    time the step reached, as a time-dependent constraint needs; or ``None`` for no projection) are plain Python
    callables; ``on_step(t, x)`` (or None) is called after every step with the state reached. ``save`` is
    ``save_every`` (an int) or the step numbers to save (as in :func:`run_fixed`). Same saving rules and return
    values; an exception raised by ``rhs`` propagates after ``(t, x)`` so far are attached to it as
    ``exc.partial``.
    """
    code = method_code(method) if isinstance(method, str) else int(method)
    save = save_steps(nsteps, int(save)) if np.ndim(save) == 0 else _save_array(save, nsteps)
    x = np.array(x0, dtype=np.float64)
    n = x.shape[0]
    ts, xs = [], []
    k = 0

    def keep(done):
        ts.append(t0 + done * h)
        xs.append(x.copy())

    if save.size and save[0] == 0:
        keep(0)
        k = 1
    status, done = STATUS_OK, 0
    ns0 = TABLEAU_STAGES[code]
    positions = np.arange(n) < nsplit
    bar = progress_bar(progress, nsteps, f"{method} h={h:g}", "step")
    try:
        for step in range(nsteps):
            t = t0 + step * h
            ns = ns0
            if code == 4:
                xt, converged = stormer6_python_step(rhs, t, x, h, nsplit)
                if not converged and np.all(np.isfinite(xt)):
                    status = STATUS_NOT_CONVERGED
                    break
                ns = 0
            else:
                K = [np.asarray(rhs(t, x), dtype=np.float64)]
            for s in range(1, ns + 1):  # as in rk_loop.rk_loop
                final = s == ns
                acc = np.zeros(n)
                for r in range(s):
                    a = np.where(positions, *(TABLEAU_B[code, r] if final else TABLEAU_A[code, s, r]))
                    acc += np.where(a != 0.0, a * K[r], 0.0)
                xt = x + (h / TABLEAU_DIV[code] if final else h) * acc
                if not final:
                    K.append(np.asarray(rhs(t + TABLEAU_C[code, s] * h, xt), dtype=np.float64))
            xt = np.asarray(xt, dtype=np.float64)
            if project is not None:
                xt = np.asarray(project(t0 + (step + 1) * h, xt), dtype=np.float64)
            if not np.all(np.isfinite(xt)):
                status = STATUS_NONFINITE
                break
            x = xt
            done = step + 1
            if on_step is not None:
                on_step(t0 + done * h, x)
            if bar is not None:
                bar.update(1)
            if k < save.size and save[k] == done:
                keep(done)
                k += 1
    except Exception as exc:
        if done != 0 and (k == 0 or save[k - 1] != done):
            keep(done)
        exc.partial = (np.array(ts), np.array(xs).reshape(len(ts), n), done)
        raise
    finally:
        if bar is not None:
            bar.close()
    if status != STATUS_OK and done != 0 and (k == 0 or save[k - 1] != done):
        keep(done)
    return np.array(ts), np.array(xs).reshape(len(ts), n), status, done
