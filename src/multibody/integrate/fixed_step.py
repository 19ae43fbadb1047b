"""Fixed-step explicit integrators running entirely inside one compiled (numba) loop.

A whole run ``x(t0) -> x(t0 + nsteps h)`` is one call of :func:`rk_fixed`; Python is not entered between
steps. The system is given by two numba ``@njit`` functions and a parameter tuple:

``rhs(t, x, params, out)``
    writes dx/dt at ``(t, x)`` into ``out`` (float64 1-D arrays of the same length);
``project(x, params)``
    modifies ``x`` in place after every completed step (normalise quaternions, project onto a
    constraint manifold, ...); use :func:`no_project` for a plain ODE;
``params``
    any tuple (arrays, scalars) that numba can type; it is passed through unchanged to both.

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
process: with ``cache=True`` every new process misses the cache and appends one more entry to the
``__pycache__`` index (measured); closures over ``rhs`` and cached wrappers calling ``rk_fixed(rhs, ...)``
with a global ``rhs`` are refused too ("dynamic globals"). Two entry points therefore exist:

* :func:`rk_fixed` — generic, ``cache=False``: compiled once per process and per ``(rhs, project, params
  types)``; with the big tree right-hand side this costs seconds of LLVM time in every process;
* :func:`specialize` — writes (once) a small module under ``$MULTIBODY_CACHE/fixed_step`` (default
  ``~/.cache/multibody/fixed_step``) containing the same loop with ``rhs`` and ``project`` imported as
  *globals*, named by a hash of their modules, names and sources; that loop is ``cache=True`` and is loaded
  from numba's cache in later processes. ``rhs`` and ``project`` must then be importable module-level
  ``@njit(cache=True)`` functions (not defined in ``__main__``); :func:`integrate_fixed` uses it when
  possible and falls back to :func:`rk_fixed` otherwise. As with any numba cache, an edit of a function
  called *indirectly* (a kernel called by ``rhs``) is not detected: clear the cache folders after editing
  kernels.
"""
import inspect
import sys

import numpy as np
from numba import njit

#: Method name -> integer code understood by :func:`rk_fixed`.
METHODS = {"RK2": 0, "MIDPOINT": 0, "HEUN": 1, "RK4": 2, "VERLET": 3, "STORMER": 3, "STORMER6": 4}

#: Number of right-hand-side evaluations per step, by method code (STORMER6: its 9 Störmer–Verlet stages;
#: each takes three or more evaluations, as many as its fixed-point iterations need).
STAGES = {0: 2, 1: 2, 2: 4, 3: 3, 4: 9}

#: Kahan & Li's s9odr6a composition coefficients (Math. Comp. 66 (1997) 1089–1099; GNI §V.3.2), for STORMER6
KAHAN_LI_S9ODR6 = (0.39216144400731413927925056, 0.33259913678935943859974864, -0.70624617255763935980996482,
                   0.08221359629355080023149045, 0.79854399093482996339895035, 0.08221359629355080023149045,
                   -0.70624617255763935980996482, 0.33259913678935943859974864, 0.39216144400731413927925056)
#: STORMER6 fixed-point iterations: the relative change that ends them; the change accepted when they stop
#: contracting (at the round-off floor of the right-hand side); their limit per implicit equation
SV_TOL = 1e-15
SV_FLOOR = 1e-12
SV_MAX_ITER = 50

#: Status codes returned by :func:`rk_fixed`.
STATUS_OK = 0
STATUS_NONFINITE = 1
STATUS_NOT_CONVERGED = 2
STATUS_MESSAGES = {
    STATUS_OK: "completed",
    STATUS_NONFINITE: "the state became non-finite (NaN or inf)",
    STATUS_NOT_CONVERGED: ("the implicit Störmer–Verlet equations of STORMER6 did not converge "
                           "(fixed-point iteration)"),
}


@njit(cache=True)
def no_project(x, params):
    """The identity projection (plain ODEs)."""
    return


@njit(cache=True)
def n_saved(nsteps, save_every):
    """Number of states :func:`rk_fixed` stores: the initial state, every ``save_every``-th step, and the
    last step if ``nsteps`` is not a multiple of ``save_every``."""
    n = nsteps // save_every + 1
    if nsteps % save_every != 0:
        n += 1
    return n


@njit(cache=False)
def rk_fixed(rhs, project, x0, t0, h, nsteps, save_every, params, method, nsplit=0):
    """Integrate ``dx/dt = rhs(t, x)`` with ``nsteps`` constant steps ``h`` from ``(t0, x0)``.

    ``project(x, params)`` is applied after each step. States are saved at step 0 (the initial state,
    which is *not* projected), every ``save_every`` steps, and at the last step. ``method`` is an integer
    code of :data:`METHODS`; ``nsplit`` is the number of position coordinates (methods ``VERLET`` and
    ``STORMER6``). The step is the classical Butcher tableau of each method (Hairer, Nørsett & Wanner,
    *Solving ODEs I*, §II.1), or the composition of Störmer–Verlet steps of ``STORMER6``; see the module
    docstring.

    Returns ``(t_saved, x_saved, status, nsteps_done)``: ``status`` is ``STATUS_OK``, ``STATUS_NONFINITE``
    (the run stops at the first step producing a non-finite state; the saved arrays then end with the last
    finite state, and ``nsteps_done`` counts the finite steps) or ``STATUS_NOT_CONVERGED`` (likewise, for a
    STORMER6 step whose fixed-point iterations did not converge).
    """
    n = x0.shape[0]
    nsave = n_saved(nsteps, save_every)
    ts = np.empty(nsave)
    xs = np.empty((nsave, n))
    x = x0.copy()
    xt = np.empty(n)
    k1 = np.empty(n)
    k2 = np.empty(n)
    k3 = np.empty(n)
    k4 = np.empty(n)
    ts[0] = t0
    for j in range(n):
        xs[0, j] = x[j]
    isave = 1
    status = 0
    done = 0
    half = 0.5 * h
    converged = True
    for step in range(nsteps):
        t = t0 + step * h
        if method == 0:  # explicit midpoint
            rhs(t, x, params, k1)
            for j in range(n):
                xt[j] = x[j] + half * k1[j]
            rhs(t + half, xt, params, k2)
            for j in range(n):
                xt[j] = x[j] + h * k2[j]
        elif method == 1:  # Heun
            rhs(t, x, params, k1)
            for j in range(n):
                xt[j] = x[j] + h * k1[j]
            rhs(t + h, xt, params, k2)
            for j in range(n):
                xt[j] = x[j] + half * (k1[j] + k2[j])
        elif method == 2:  # classical RK4
            rhs(t, x, params, k1)
            for j in range(n):
                xt[j] = x[j] + half * k1[j]
            rhs(t + half, xt, params, k2)
            for j in range(n):
                xt[j] = x[j] + half * k2[j]
            rhs(t + half, xt, params, k3)
            for j in range(n):
                xt[j] = x[j] + h * k3[j]
            rhs(t + h, xt, params, k4)
            c = h / 6.0
            for j in range(n):
                xt[j] = x[j] + c * (k1[j] + 2.0 * k2[j] + 2.0 * k3[j] + k4[j])
        elif method == 4:  # STORMER6: Störmer–Verlet stages γ_s h (Kahan & Li s9odr6a) on x = [q (nsplit), p]
            for j in range(n):
                xt[j] = x[j]
            tstage = t
            for s in range(9):
                c = KAHAN_LI_S9ODR6[s] * h
                hc = 0.5 * c
                for j in range(n):
                    k2[j] = xt[j]  # (q, p) at the start of the stage
                # p½ = p + c/2 g(q, p½): iterate from p; k1 = rhs at the last iterate
                rhs(tstage, xt, params, k1)
                done_iter = False
                last = np.inf
                for it in range(SV_MAX_ITER):
                    change = 0.0
                    for j in range(nsplit, n):
                        new = k2[j] + hc * k1[j]
                        change = max(change, abs(new - xt[j]) / (1.0 + abs(new)))
                        xt[j] = new
                    rhs(tstage, xt, params, k1)
                    if not change > SV_TOL:  # converged (or NaN: left to the finiteness check)
                        done_iter = True
                        break
                    if change <= SV_FLOOR and change > 0.5 * last:  # no longer contracting: round-off floor
                        done_iter = True
                        break
                    last = change
                converged = converged and done_iter
                # q+ = q + c/2 (f(q, p½) + f(q+, p½)): iterate from q + c f(q, p½)
                for j in range(nsplit):
                    k4[j] = k1[j]
                    xt[j] = k2[j] + c * k1[j]
                rhs(tstage + c, xt, params, k1)
                done_iter = False
                last = np.inf
                for it in range(SV_MAX_ITER):
                    change = 0.0
                    for j in range(nsplit):
                        new = k2[j] + hc * (k4[j] + k1[j])
                        change = max(change, abs(new - xt[j]) / (1.0 + abs(new)))
                        xt[j] = new
                    rhs(tstage + c, xt, params, k1)
                    if not change > SV_TOL:
                        done_iter = True
                        break
                    if change <= SV_FLOOR and change > 0.5 * last:
                        done_iter = True
                        break
                    last = change
                converged = converged and done_iter
                # p+ = p½ + c/2 g(q+, p½)
                for j in range(nsplit, n):
                    xt[j] += hc * k1[j]
                tstage += c
        else:  # Störmer / velocity Verlet on x = [q (nsplit), v]
            rhs(t, x, params, k1)
            for j in range(n):
                xt[j] = x[j]
            for j in range(nsplit, n):
                xt[j] = x[j] + half * k1[j]  # kick
            rhs(t + half, xt, params, k2)
            for j in range(nsplit):
                xt[j] = x[j] + h * k2[j]  # drift with qdot(q, v_half)
            rhs(t + h, xt, params, k3)
            for j in range(nsplit, n):
                xt[j] = xt[j] + half * k3[j]  # kick
        project(xt, params)
        finite = True
        for j in range(n):
            if not np.isfinite(xt[j]):
                finite = False
                break
        if not finite:
            status = 1
            break
        if not converged:
            status = 2
            break
        for j in range(n):
            x[j] = xt[j]
        done = step + 1
        if done % save_every == 0 or done == nsteps:
            ts[isave] = t0 + done * h
            for j in range(n):
                xs[isave, j] = x[j]
            isave += 1
    if status != 0 and (done % save_every != 0 or done == 0):
        # keep the last finite state, unless it was just saved (or is the initial state)
        if done != 0:
            ts[isave] = t0 + done * h
            for j in range(n):
                xs[isave, j] = x[j]
            isave += 1
    return ts[:isave].copy(), xs[:isave].copy(), status, done


#: bumped whenever the loop template changes (part of the generated modules' names)
TEMPLATE_VERSION = 1
_SPECIALIZED = {}


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


def _loop_source():
    src = inspect.getsource(rk_fixed.py_func)
    head = "@njit(cache=False)\ndef rk_fixed(rhs, project, x0,"
    if not src.startswith(head):
        raise RuntimeError("fixed_step: unexpected source layout of rk_fixed (cannot specialize)")
    return "@njit(cache=True)\ndef rk_loop(x0," + src[len(head):]


def specialize(rhs, project=None, cache_dir=None):
    """A cached compiled loop ``loop(x0, t0, h, nsteps, save_every, params, method, nsplit)`` equal to
    ``rk_fixed(rhs, project, ...)`` (see the module docstring), or ``None`` when ``rhs``/``project`` are not
    importable module-level numba functions."""
    project = no_project if project is None else project
    key = (rhs, project)
    if key in _SPECIALIZED:
        return _SPECIALIZED[key]
    names = [_importable(f) for f in (rhs, project)]
    if None in names:
        return None
    try:
        sources = [inspect.getsource(f.py_func) for f in (rhs, project)]
    except (OSError, TypeError):
        return None
    body = _loop_source()
    src = (
        '"""Generated by multibody.integrate.fixed_step.specialize: the fixed-step loop of '
        f'{names[0][0]}.{names[0][1]} with projection {names[1][0]}.{names[1][1]}."""\n'
        "import numpy as np\nfrom numba import njit\n\n"
        "from multibody.integrate.fixed_step import KAHAN_LI_S9ODR6, SV_FLOOR, SV_MAX_ITER, SV_TOL, n_saved\n"
        f"from {names[0][0]} import {names[0][1]} as rhs\n"
        f"from {names[1][0]} import {names[1][1]} as project\n\n\n" + body
    )
    # the sources of rhs and project go into the hash as a comment: a changed rhs gets a new module
    src = f"# template {TEMPLATE_VERSION}\n" + "".join(f"# {line}\n" for f in sources for line in
                                                      f.splitlines()) + src
    try:
        from multibody.cache import import_generated

        mod = import_generated("_mb_rk_", src, "fixed_step", cache_dir)
    except OSError:  # read-only home, ...: the generic loop still works
        return None
    loop = mod.rk_loop
    _SPECIALIZED[key] = loop
    return loop


def method_code(method):
    """Integer code of a fixed-step method name (case-insensitive), see :data:`METHODS`."""
    key = str(method).upper()
    if key not in METHODS:
        raise ValueError(f"fixed-step method {method!r} is unknown; expected one of {sorted(METHODS)}")
    return METHODS[key]


def integrate_fixed(rhs, x0, t0, h, nsteps, params=(), method="RK4", project=no_project, save_every=1,
                    nsplit=0, progress=False, chunk=None, cached=True):
    """Python front end of :func:`rk_fixed` (of its cached specialization when ``cached`` and possible, see
    :func:`specialize`).

    Validates the arguments and, when ``progress`` is true, runs the compiled loop in chunks of
    ``chunk`` steps (default: about 100 chunks) with a tqdm progress bar between chunks. The saved
    states are those of a single call (the step times agree up to rounding). Returns ``(t, x, status, nsteps_done)`` like :func:`rk_fixed`.
    """
    code = method_code(method)
    x0 = np.ascontiguousarray(x0, dtype=np.float64)
    if x0.ndim != 1:
        raise ValueError(f"initial state x0 must be 1-D, got shape {x0.shape}")
    nsteps = int(nsteps)
    save_every = int(save_every)
    if nsteps < 0:
        raise ValueError(f"nsteps must be >= 0, got {nsteps}")
    if save_every < 1:
        raise ValueError(f"save_every must be >= 1, got {save_every}")
    if not (h > 0 and np.isfinite(h)):
        raise ValueError(f"step h must be positive and finite, got {h}")
    if code in (3, 4) and not (0 < nsplit < x0.shape[0]):
        raise ValueError(f"method {method} needs 0 < nsplit < len(x0) = {x0.shape[0]}, got nsplit={nsplit}")
    loop = specialize(rhs, project) if cached else None
    if loop is None:
        def loop(x0, t0, h, nsteps, save_every, params, code, nsplit):
            return rk_fixed(rhs, project, x0, t0, h, nsteps, save_every, params, code, nsplit)
    if not progress or nsteps == 0:
        return loop(x0, float(t0), float(h), nsteps, save_every, params, code, int(nsplit))

    from tqdm.auto import tqdm

    if chunk is None:
        chunk = max(save_every, (nsteps // 100) // save_every * save_every)
    chunk = max(save_every, int(chunk) // save_every * save_every)
    ts_all, xs_all = [np.array([float(t0)])], [x0[None, :].copy()]
    x, done = x0, 0
    status = STATUS_OK
    with tqdm(total=nsteps, unit="step", desc=f"{method} h={h:g}") as bar:
        while done < nsteps:
            m = min(chunk, nsteps - done)
            # t0 + done*h recomputed each chunk, so the times equal those of a single call
            ts, xs, status, d = loop(x, float(t0) + done * h, float(h), m, save_every, params, code, int(nsplit))
            ts_all.append(ts[1:])
            xs_all.append(xs[1:])
            done += d
            bar.update(d)
            x = xs[-1].copy()
            if status != STATUS_OK:
                break
    return np.concatenate(ts_all), np.concatenate(xs_all), status, done


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


def _stormer6_step(rhs, t, x, h, nsplit):
    """One STORMER6 step of :func:`rk_fixed` for a Python ``rhs(t, x)``: Kahan & Li's composition of
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


def rk_fixed_python(rhs, project, x0, t0, h, nsteps, save_every, method, nsplit=0, progress=False):
    """The same schemes as :func:`rk_fixed` as a Python loop, for right-hand sides that call Python
    (e.g. a joint-torque callback ``tau(t, q, v)``): ``rhs(t, x) -> dx/dt`` and ``project(x) -> x`` (or
    ``None`` for no projection) are plain Python callables. Same saving rules and return values; an
    exception raised by ``rhs`` propagates after ``(t, x)`` so far are attached to it as ``exc.partial``.
    """
    code = method_code(method) if isinstance(method, str) else int(method)
    x = np.array(x0, dtype=np.float64)
    n = x.shape[0]
    ts, xs = [float(t0)], [x.copy()]
    status, done = STATUS_OK, 0
    half = 0.5 * h
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=nsteps, unit="step", desc=f"{method} h={h:g}", miniters=max(1, nsteps // 100))
    try:
        for step in range(nsteps):
            t = t0 + step * h
            if code == 0:
                k1 = rhs(t, x)
                k2 = rhs(t + half, x + half * k1)
                xt = x + h * k2
            elif code == 1:
                k1 = rhs(t, x)
                k2 = rhs(t + h, x + h * k1)
                xt = x + half * (k1 + k2)
            elif code == 2:
                k1 = rhs(t, x)
                k2 = rhs(t + half, x + half * k1)
                k3 = rhs(t + half, x + half * k2)
                k4 = rhs(t + h, x + h * k3)
                xt = x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            elif code == 4:
                xt, converged = _stormer6_step(rhs, t, x, h, nsplit)
                if not converged and np.all(np.isfinite(xt)):
                    status = STATUS_NOT_CONVERGED
                    break
            else:
                k1 = rhs(t, x)
                xt = x.copy()
                xt[nsplit:] += half * k1[nsplit:]
                k2 = rhs(t + half, xt)
                xt[:nsplit] = x[:nsplit] + h * k2[:nsplit]
                k3 = rhs(t + h, xt)
                xt[nsplit:] += half * k3[nsplit:]
            xt = np.asarray(xt, dtype=np.float64)
            if project is not None:
                xt = np.asarray(project(xt), dtype=np.float64)
            if not np.all(np.isfinite(xt)):
                status = STATUS_NONFINITE
                break
            x = xt
            done = step + 1
            if bar is not None:
                bar.update(1)
            if done % save_every == 0 or done == nsteps:
                ts.append(t0 + done * h)
                xs.append(x.copy())
    except Exception as exc:
        if done % save_every != 0 and done != 0:
            ts.append(t0 + done * h)
            xs.append(x.copy())
        exc.partial = (np.array(ts), np.array(xs).reshape(len(ts), n), done)
        raise
    finally:
        if bar is not None:
            bar.close()
    if status != STATUS_OK and done % save_every != 0 and done != 0:
        ts.append(t0 + done * h)
        xs.append(x.copy())
    return np.array(ts), np.array(xs).reshape(len(ts), n), status, done
