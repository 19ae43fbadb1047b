"""Fixed-step and adaptive integrators on ODEs with known solutions.

Reference solutions: the harmonic oscillator x'' = -w^2 x has x = cos(w t), x' = -w sin(w t) for
x(0) = 1, x'(0) = 0; the global error of a method of order p scales like h^p (Hairer, Nørsett & Wanner,
*Solving ODEs I*, Thm. II.3.6), so halving h divides it by 2^p.
"""
import numpy as np
import pytest
from numba import njit

from multibody.integrate.fixed_step import (METHODS, STATUS_NONFINITE, STATUS_OK, integrate_fixed, n_saved,
                                            no_project, rk_fixed)


@njit
def oscillator(t, x, params, out):
    w = params[0]
    out[0] = x[1]
    out[1] = -w * w * x[0]


@njit
def unit_circle(x, params):
    r = np.sqrt(x[0] * x[0] + x[1] * x[1])
    x[0] /= r
    x[1] /= r


@njit
def rotation(t, x, params, out):
    # x' = A x with A the rotation generator: |x| is conserved exactly
    out[0] = -x[1]
    out[1] = x[0]


@njit
def blow_up(t, x, params, out):
    # x' = x^2, x(0) = 1: x = 1/(1 - t) is infinite at t = 1
    out[0] = x[0] * x[0]


@njit
def allocating(t, x, params, out):
    # a right-hand side that allocates (as generated ones do): the compiled loop must allow it
    tmp = np.empty(2)
    tmp[0] = x[1]
    tmp[1] = -x[0]
    out[:] = tmp


@njit
def time_dependent(t, x, params, out):
    # x' = cos(t), x(0) = 0: x = sin(t) (checks the stage times)
    out[0] = np.cos(t)


def oscillator_error(method, h, t_end=2.0, w=3.0):
    nsteps = int(round(t_end / h))
    x0 = np.array([1.0, 0.0])
    nsplit = 1 if METHODS[method] == 3 else 0
    t, x, status, done = integrate_fixed(oscillator, x0, 0.0, h, nsteps, (w,), method=method, nsplit=nsplit)
    assert status == STATUS_OK and done == nsteps
    exact = np.array([np.cos(w * t[-1]), -w * np.sin(w * t[-1])])
    return np.max(np.abs(x[-1] - exact))


@pytest.mark.parametrize("method,order", [("RK2", 2), ("HEUN", 2), ("RK4", 4), ("VERLET", 2)])
def test_global_error_order(method, order):
    h = 2.0 / 400
    e1 = oscillator_error(method, h)
    e2 = oscillator_error(method, h / 2)
    e3 = oscillator_error(method, h / 4)
    p1 = np.log2(e1 / e2)
    p2 = np.log2(e2 / e3)
    assert abs(p1 - order) < 0.05, (e1, e2, p1)
    assert abs(p2 - order) < 0.05, (e2, e3, p2)


@pytest.mark.parametrize("method", ["RK2", "HEUN", "RK4"])
def test_stage_times(method):
    t, x, status, _ = integrate_fixed(time_dependent, np.zeros(1), 0.3, 1e-3, 1000, method=method)
    order = 4 if method == "RK4" else 2
    assert abs(x[-1, 0] - (np.sin(t[-1]) - np.sin(0.3))) < 10 * 1e-3 ** order


def test_allocating_right_hand_side():
    t, x, status, _ = integrate_fixed(allocating, np.array([1.0, 0.0]), 0.0, 1e-3, 1000, method="RK4")
    assert status == STATUS_OK and abs(x[-1, 0] - np.cos(1.0)) < 1e-12


def test_rk4_accuracy_absolute():
    # RK4 with h = 1e-3 on w = 3 over 2 s: error ~ C h^4 << 1e-9
    assert oscillator_error("RK4", 1e-3) < 1e-10


def test_saving_layout():
    x0 = np.array([1.0, 0.0])
    for nsteps, every in [(10, 1), (10, 3), (9, 3), (0, 2)]:
        t, x, status, done = integrate_fixed(oscillator, x0, 1.0, 0.1, nsteps, (1.0,), "RK4", save_every=every)
        assert len(t) == n_saved(nsteps, every) == x.shape[0]
        assert t[0] == 1.0 and np.all(x[0] == x0)
        assert abs(t[-1] - (1.0 + 0.1 * nsteps)) < 1e-12
        assert np.all(np.diff(t) > 0)


def test_projection_keeps_norm():
    x0 = np.array([1.0, 0.0])
    # RK2 alone drifts in |x| on x' = Ax (|x| grows like (1 + h^4/4)^(n/2)); the projection removes it
    t, x, status, _ = integrate_fixed(rotation, x0, 0.0, 0.1, 1000, (), "RK2", save_every=10)
    drift_free = abs(np.hypot(x[-1, 0], x[-1, 1]) - 1)
    t, x, status, _ = integrate_fixed(rotation, x0, 0.0, 0.1, 1000, (), "RK2", project=unit_circle, save_every=10)
    assert drift_free > 1e-4
    assert np.max(np.abs(np.hypot(x[:, 0], x[:, 1]) - 1)) < 1e-15


def test_nonfinite_stops_with_partial_result():
    t, x, status, done = integrate_fixed(blow_up, np.ones(1), 0.0, 0.01, 1000, (), "RK4", save_every=7)
    assert status == STATUS_NONFINITE
    assert 0 < done < 1000
    assert np.all(np.isfinite(x))
    assert abs(t[-1] - 0.01 * done) < 1e-12  # the last finite state is kept
    assert t[-1] > 0.98  # blows up near t = 1


def test_progress_chunks_equal_single_call():
    x0 = np.array([1.0, 0.0])
    t1, x1, s1, d1 = integrate_fixed(oscillator, x0, 0.0, 1e-3, 1003, (2.0,), method="RK4", save_every=5)
    t2, x2, s2, d2 = integrate_fixed(oscillator, x0, 0.0, 1e-3, 1003, (2.0,), method="RK4", save_every=5,
                                     progress=True, chunk=100)
    assert d1 == d2 == 1003 and s1 == s2 == STATUS_OK
    np.testing.assert_array_equal(t1, t2)  # step k at t0 + k h in every chunk: the numbers of one call
    np.testing.assert_array_equal(x1, x2)


def test_run_from_a_step_and_chunk_callback():
    """run_fixed from the state at step `first` continues the grid t0 + k h: (the first part) + (the rest from
    its last state) equals one call bit for bit; on_chunk sees every chunk's end (the checkpoint hook)."""
    from multibody.integrate.fixed_step import run_fixed, save_steps

    x0, save = np.array([1.0, 0.0]), save_steps(1003, 5)
    t1, x1, s1, d1, _ = run_fixed(oscillator, x0, 0.1, 1e-3, 1003, (2.0,), save=save)
    seen = []
    t2, x2, s2, d2, _ = run_fixed(oscillator, x0, 0.1, 1e-3, 600, (2.0,), save=save[save <= 600], chunk=250,
                                  on_chunk=lambda done, x, parts: seen.append((done, x.copy(), len(parts))))
    assert [s[0] for s in seen] == [250, 500, 600] and [s[2] for s in seen] == [1, 2, 3]
    np.testing.assert_array_equal(seen[-1][1], x2[-1])
    t3, x3, s3, d3, _ = run_fixed(oscillator, seen[-1][1], 0.1, 1e-3, 1003, (2.0,), save=save[save > 600],
                                  first=600)
    assert d2 == 600 and d3 == d1 == 1003 and s3 == STATUS_OK
    np.testing.assert_array_equal(np.concatenate([t2, t3]), t1)
    np.testing.assert_array_equal(np.concatenate([x2, x3]), x1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown"):
        integrate_fixed(oscillator, np.zeros(2), 0.0, 0.1, 10, (1.0,), method="RK7")
    with pytest.raises(ValueError, match="nsplit"):
        integrate_fixed(oscillator, np.zeros(2), 0.0, 0.1, 10, (1.0,), method="VERLET")
    with pytest.raises(ValueError, match="step h"):
        integrate_fixed(oscillator, np.zeros(2), 0.0, -0.1, 10, (1.0,))


# ----------------------------------------------------------------------------------------------------------
# adaptive (scipy solvers stepped from Python)

from multibody.integrate.adaptive import solve_adaptive  # noqa: E402


def osc_py(t, y, w=3.0):
    return np.array([y[1], -w * w * y[0]])


@pytest.mark.parametrize("method", ["DOP853", "RK45", "Radau", "LSODA", "BDF"])
def test_adaptive_oscillator(method):
    te = np.linspace(0, 2, 21)
    run = solve_adaptive(osc_py, (0, 2), [1.0, 0.0], method=method, rtol=1e-10, atol=1e-12, t_eval=te)
    assert run.status == "success" and run.reason is None
    np.testing.assert_array_equal(run.t, te)
    assert run.y.shape == (21, 2)
    tol = {"DOP853": 1e-9, "RK45": 1e-8, "Radau": 1e-8, "LSODA": 1e-7, "BDF": 1e-7}[method]
    np.testing.assert_allclose(run.y[:, 0], np.cos(3 * te), rtol=0, atol=tol)


def test_adaptive_matches_solve_ivp_steps():
    from scipy.integrate import solve_ivp

    ref = solve_ivp(osc_py, (0, 2), [1.0, 0.0], method="DOP853", rtol=1e-9, atol=1e-12)
    run = solve_adaptive(osc_py, (0, 2), [1.0, 0.0], method="DOP853", rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(run.t, ref.t)
    np.testing.assert_array_equal(run.y, ref.y.T)
    assert run.nfev == ref.nfev


def test_adaptive_event_and_dense():
    # x = cos(3 t) crosses zero downward at t = pi/6 and 5 pi/6 (period 2 pi / 3)
    def zero(t, y):
        return y[0]

    zero.direction = -1
    run = solve_adaptive(osc_py, (0, 3), [1.0, 0.0], rtol=1e-12, atol=1e-14, events=zero, dense_output=True)
    np.testing.assert_allclose(run.t_events[0], [np.pi / 6, 5 * np.pi / 6], rtol=0, atol=1e-12)
    assert abs(run.sol(1.234)[0] - np.cos(3 * 1.234)) < 1e-11

    zero.terminal = True
    run = solve_adaptive(osc_py, (0, 3), [1.0, 0.0], rtol=1e-12, atol=1e-14, events=zero)
    assert run.status == "event" and run.success
    assert abs(run.t[-1] - np.pi / 6) < 1e-12 and abs(run.y[-1, 0]) < 1e-12


def test_adaptive_failures_return_partial():
    run = solve_adaptive(osc_py, (0, 100), [1.0, 0.0], max_steps=10)
    assert run.status == "failed" and "max_steps" in run.reason
    assert len(run.t) == 11 and run.t[-1] < 100

    def nan_after_1(t, y):
        return np.array([y[1], np.nan if t > 1 else -y[0]])

    run = solve_adaptive(nan_after_1, (0, 5), [1.0, 0.0])
    assert run.status == "failed" and "non-finite" in run.reason
    assert 0.9 < run.t[-1] <= 1.0 + 1e-12 and np.all(np.isfinite(run.y))

    def raises(t, y):
        if t > 0.5:
            raise RuntimeError("torque table exhausted")
        return np.array([y[1], -y[0]])

    run = solve_adaptive(raises, (0, 5), [1.0, 0.0])
    assert run.status == "failed" and "torque table exhausted" in run.reason and run.t[-1] <= 0.5


def test_adaptive_projection():
    def rot(t, y):
        return np.array([-y[1], y[0]])

    def proj(t, y):
        return y / np.hypot(y[0], y[1])

    run = solve_adaptive(rot, (0, 50), [1.0, 0.0], method="RK45", rtol=1e-4, atol=1e-6, project=proj,
                         t_eval=np.linspace(0, 50, 101))
    assert np.max(np.abs(np.hypot(run.y[:, 0], run.y[:, 1]) - 1)) < 1e-15
    with pytest.raises(ValueError, match="projection"):
        solve_adaptive(rot, (0, 1), [1.0, 0.0], method="LSODA", project=proj)


def test_adaptive_progress_runs():
    run = solve_adaptive(osc_py, (0, 1), [1.0, 0.0], progress=True)
    assert run.status == "success"


@pytest.mark.parametrize("method", ["RK2", "HEUN", "RK4", "VERLET"])
def test_python_loop_equals_compiled(method):
    from multibody.integrate.fixed_step import rk_fixed_python

    x0 = np.array([1.0, 0.0])
    def f(t, x):
        out = np.empty(2)
        oscillator(t, x, (3.0,), out)
        return out

    t1, x1, s1, d1 = integrate_fixed(oscillator, x0, 0.5, 0.01, 57, (3.0,), method, save_every=4, nsplit=1)
    t2, x2, s2, d2 = rk_fixed_python(f, None, x0, 0.5, 0.01, 57, 4, method, nsplit=1)
    assert s1 == s2 == STATUS_OK and d1 == d2 == 57
    np.testing.assert_array_equal(t1, t2)  # the same tableau, the same operations
    np.testing.assert_array_equal(x1, x2)


def test_python_loop_nonfinite_and_exception():
    from multibody.integrate.fixed_step import rk_fixed_python

    with np.errstate(over="ignore", invalid="ignore"):
        t, x, status, done = rk_fixed_python(lambda t, x: x * x, None, np.ones(1), 0.0, 0.01, 1000, 7, "RK4")
    t_c, x_c, status_c, done_c = integrate_fixed(blow_up, np.ones(1), 0.0, 0.01, 1000, (), "RK4", save_every=7)
    assert status == status_c == STATUS_NONFINITE and done == done_c
    np.testing.assert_allclose(x, x_c, rtol=1e-14)

    def bad(t, x):
        if t > 0.05:
            raise RuntimeError("boom")
        return -x

    with pytest.raises(RuntimeError, match="boom") as info:
        rk_fixed_python(bad, None, np.ones(1), 0.0, 0.01, 100, 3, "RK2")
    ts, xs, done = info.value.partial
    assert done == 5 and ts[-1] == pytest.approx(0.05, abs=1e-15) and len(ts) == len(xs)


def cached_rotation(folder):
    """``rotation`` as an importable module-level ``@njit(cache=True)`` function, from a module written to
    ``folder``: numba then keeps its cache there (a cached function defined in this file would write it into
    ``tests/__pycache__``)."""
    import importlib
    import sys

    (folder / "rotation_rhs.py").write_text(
        "from numba import njit\n\n\n@njit(cache=True)\ndef rotation(t, x, params, out):\n"
        "    out[0] = -x[1]\n    out[1] = x[0]\n")
    sys.path.insert(0, str(folder))
    try:
        sys.modules.pop("rotation_rhs", None)
        return importlib.import_module("rotation_rhs").rotation
    finally:
        sys.path.remove(str(folder))


def test_specialized_loop_is_cached_module(tmp_path):
    """specialize() writes a module with rhs/project as globals (cacheable by numba) whose loop gives the same
    numbers as integrate_fixed; functions that cannot be imported get the same loops compiled in memory."""
    import sys

    from numba.core.caching import FunctionCache

    from multibody.integrate.fixed_step import save_steps, specialize

    loops = specialize(cached_rotation(tmp_path), no_project)
    assert loops.CACHE and isinstance(loops.rk_run._cache, FunctionCache)  # cache=True
    with open(sys.modules[loops.__name__].__file__) as fh:
        assert "import rotation as rhs" in fh.read()
    x0 = np.array([1.0, 0.0])
    x, ts, xs, obs = x0.copy(), np.empty(12), np.empty((12, 2)), np.empty((12, 0))
    k, status, done = loops.rk_run(x, 0.0, 0.01, 0, 100, save_steps(100, 10), (), 2, 0, ts, xs, obs, np.empty(2),
                                   np.empty((4, 2)))
    b = rk_fixed(rotation, no_project, x0, 0.0, 0.01, 100, 10, (), 2, 0)
    for u, w in zip((ts[:k], xs[:k], status, done), b):
        np.testing.assert_array_equal(u, w)
    np.testing.assert_array_equal(x, xs[k - 1])

    def local_rhs(t, x, params, out):
        out[0] = -x[0]

    assert not specialize(njit(local_rhs)).CACHE  # a closure-level function: compiled in memory
    t, x, status, done = integrate_fixed(njit(local_rhs), np.ones(1), 0.0, 0.1, 10, method="RK4")
    assert status == STATUS_OK and abs(x[-1, 0] - np.exp(-1.0)) < 1e-6


def test_one_loop_serves_every_system_and_passes_their_errors(tmp_path):
    """The fixed-step loop (``integrate/rk_loop.py``) is compiled once: two systems whose parameters have other
    types run through its one compilation; an error raised in a right-hand side called by address reaches the
    caller with its message."""
    from multibody.integrate.rk_loop import rk_loop

    @njit
    def scaled(t, x, params, out):
        out[0] = -params[0] * x[0]

    @njit
    def refusing(t, x, params, out):
        if x[0] < params:
            raise ValueError("the state left the domain of the law")
        out[0] = -x[0]

    t, x, status, done = integrate_fixed(scaled, np.ones(1), 0.0, 0.01, 100, params=np.array([2.0]), method="RK4")
    z = -2.0 * 0.01        # RK4 on x' = -2x is x_n = R(z)^n, R its stability polynomial, to round-off (100 steps)
    assert status == STATUS_OK and abs(x[-1, 0] - (1 + z + z**2 / 2 + z**3 / 6 + z**4 / 24) ** 100) < 1e-13
    with pytest.raises(ValueError, match="left the domain"):
        integrate_fixed(refusing, np.ones(1), 0.0, 0.1, 100, params=0.5, method="RK4")
    t, x, status, done = integrate_fixed(refusing, np.ones(1), 0.0, 0.1, 5, params=0.1, method="HEUN")
    assert status == STATUS_OK and done == 5
    assert len(rk_loop.overloads) == 1
