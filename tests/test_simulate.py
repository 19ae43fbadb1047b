"""simulate(): compiled and Python paths, manifold, applied forces, energy balance, failures, registry.

Energy balance (issue 2 "Must show"): with joint and point spring-dampers, d(T + V)/dt = v·effort − P where
P = Σ C_k v_k² + Σ c l̇² is the power dissipated by the dampers (V includes the spring potentials).
"""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import IntegrationError, ModelError
from multibody.kernels.forces import applied_forces_kernel
from multibody.result import Result
from multibody.formulations.base import FORMULATIONS, OdeSystem, register_formulation
from multibody.formulations.tree_rhs import tree_energy, tree_rhs
from multibody.model.packing import tree_params
from multibody.simulation import simulate
from multibody.systems.pendulums import spatial_chain, triple_pendulum_seed001
from models import sprung_model


def random_state(model, rng):
    q = model.random_configuration(rng, scale=1.0)
    v = rng.normal(size=model.nv)
    return q, v


def applied(model, q, v, params=None):
    p = tree_params(model) if params is None else params
    tau = np.zeros(model.nv)
    V, P = applied_forces_kernel(p.mi, p.mf, np.ascontiguousarray(q), np.ascontiguousarray(v), p.forces, 0.0, p.work,
                                 p.body_forces, tau)
    return tau, V, P


def test_spring_forces_are_minus_potential_gradient():
    """Without damping, τ·w = −dV/dε along q(ε) with q̇ = qdot(q, w) (virtual work, seed 001 §3.4)."""
    m = sprung_model()
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, _ = random_state(m, rng)
        zero_v = np.zeros(m.nv)
        tau, V, P = applied(m, q, zero_v)
        assert P == 0.0
        for _ in range(4):
            w = rng.normal(size=m.nv)
            dq = m.qdot(q, w)
            eps = 1e-6
            Vp = applied(m, q + eps * dq, zero_v)[1]
            Vm = applied(m, q - eps * dq, zero_v)[1]
            dV = (Vp - Vm) / (2 * eps)
            assert abs(tau @ w + dV) < 1e-7 * max(1.0, abs(dV))


def test_damper_power():
    """The dampers' generalized forces do work −P: τ(q, v) − τ(q, 0) dotted with v equals −P."""
    m = sprung_model()
    rng = np.random.default_rng(4)
    for _ in range(5):
        q, v = random_state(m, rng)
        tau, V, P = applied(m, q, v)
        tau0, V0, _ = applied(m, q, np.zeros(m.nv))
        assert V == V0 and P > 0
        assert abs((tau - tau0) @ v + P) < 1e-12 * max(1.0, P)


@pytest.mark.parametrize("effort", [0.0, 0.7])
def test_energy_rate_instantaneous(effort):
    """d(T + V)/dt = v·effort − P at random states (central difference along ẋ)."""
    m = sprung_model(effort)
    params = tree_params(m)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, v = random_state(m, rng)
        x = np.concatenate([q, v])
        f = np.empty_like(x)
        tree_rhs(0.0, x, params, f)
        eps = 1e-6
        xs = np.array([x + eps * f, x - eps * f])
        T, V, _ = tree_energy(m, xs[:, :m.nq], xs[:, m.nq:])
        dE = ((T[0] + V[0]) - (T[1] + V[1])) / (2 * eps)
        _, _, P = tree_energy(m, q[None], v[None])
        expected = effort * v[m.joint("ja").v_slice][0] - P[0]
        assert abs(dE - expected) < 1e-6 * max(1.0, abs(expected))


def test_energy_balance_along_trajectory():
    """E(t) − E(0) = −∫ P dt along a damped run (Simpson's rule on 4001 samples)."""
    m = sprung_model()
    rng = np.random.default_rng(6)
    q0, v0 = random_state(m, rng)
    res = simulate(m, q0, v0, 2.0, rtol=1e-12, atol=1e-12, n_out=4001)
    _, _, P = tree_energy(m, res.q, res.v)
    dt = res.t[1] - res.t[0]
    work = np.concatenate([[0.0], np.cumsum((P[:-1] + P[1:]) * dt / 2)])  # trapezoid, for the curve
    simpson = dt / 3 * (P[0] + P[-1] + 4 * P[1:-1:2].sum() + 2 * P[2:-1:2].sum())
    e = res.energy["total"]
    assert e[-1] < e[0]  # dissipative
    assert abs((e[-1] - e[0]) + simpson) < 1e-8 * (abs(e[0] - e[-1]) + 1.0)
    assert np.max(np.abs((e - e[0]) + work)) < 1e-4 * work[-1]


def test_fixed_step_compiled_equals_python_path():
    """The compiled loop and the Python loop (forced by a torque callback) give the same run."""
    m = sprung_model()
    rng = np.random.default_rng(8)
    q0, v0 = random_state(m, rng)
    tau_c = rng.normal(size=m.nv)
    r1 = simulate(m, q0, v0, 0.2, method="RK4", h=1e-3, tau=tau_c, n_out=11)
    r2 = simulate(m, q0, v0, 0.2, method="RK4", h=1e-3, tau=lambda t, q, v: tau_c, n_out=11)
    assert r1.info["path"] == "compiled" and r2.info["path"] == "python" and r2.info["torque_callback"]
    np.testing.assert_allclose(r1.q, r2.q, rtol=0, atol=1e-13)
    np.testing.assert_allclose(r1.v, r2.v, rtol=0, atol=1e-12)
    # the same through the adaptive path
    r3 = simulate(m, q0, v0, 0.2, tau=tau_c, rtol=1e-12, atol=1e-12, n_out=11)
    r4 = simulate(m, q0, v0, 0.2, tau=lambda t, q, v: tau_c, rtol=1e-12, atol=1e-12, n_out=11)
    np.testing.assert_array_equal(r3.q, r4.q)
    np.testing.assert_allclose(r1.q, r3.q, rtol=0, atol=1e-9)


def test_time_dependent_torque():
    """A pendulum driven by τ = A cos(ωt) from the callback: RK4 and DOP853 agree."""
    m = spatial_chain(2, joint="revolute")

    def drive(t, q, v):
        return np.array([2.0 * np.cos(3.0 * t), 0.0])

    r1 = simulate(m, None, None, 1.0, method="RK4", h=1e-3, tau=drive, n_out=11)
    r2 = simulate(m, None, None, 1.0, tau=drive, rtol=1e-12, atol=1e-12, n_out=11)
    np.testing.assert_allclose(r1.q, r2.q, rtol=0, atol=1e-10)
    assert np.max(np.abs(r1.q)) > 0.05


@pytest.mark.parametrize("method", ["RK4", "RK2", "DOP853", "RK45", "Radau"])
def test_quaternions_stay_unit(method):
    m = spatial_chain(3, joint="spherical")
    rng = np.random.default_rng(9)
    q0 = m.random_configuration(rng)
    v0 = 3 * rng.normal(size=m.nv)
    kw = dict(h=2e-3) if method in ("RK4", "RK2") else dict(rtol=1e-6, atol=1e-8)
    res = simulate(m, q0, v0, 1.0, method=method, **kw)
    norms = np.linalg.norm(res.q.reshape(len(res), 3, 4), axis=2)
    assert np.max(np.abs(norms - 1)) < 1e-15


def test_fixed_step_grid():
    m = triple_pendulum_seed001()
    res = simulate(m, None, None, 1.0, method="RK4", h=0.3)  # 4 steps of 0.25 end exactly at t_end
    np.testing.assert_allclose(res.t, [0, 0.25, 0.5, 0.75, 1.0], rtol=0, atol=1e-15)
    assert res.info["h"] == 0.25 and res.info["steps"] == 4 and res.info["nfev"] == 16
    with pytest.raises(ValueError, match="n_out"):
        simulate(m, None, None, 1.0, method="RK4", h=0.1, n_out=4)
    with pytest.raises(ValueError, match="needs the step h"):
        simulate(m, None, None, 1.0, method="RK4")
    with pytest.raises(ValueError, match="unknown"):
        simulate(m, None, None, 1.0, method="Euler")
    with pytest.raises(ModelError, match="q0 must have 3"):
        simulate(m, np.zeros(2), None, 1.0)
    for q0, v0, shown in (([0.1, np.nan, 0.0], None, "q0 'joint2.angle' = nan"),
                          (None, [0.0, 0.0, -np.inf], "v0 'joint3.angle' = -inf"),
                          ([np.nan] * 3, None, "q0 'joint1.angle' = nan and 2 more")):
        with pytest.raises(ModelError, match=f"must be finite .model '{m.name}'.: {shown}$") as err:
            simulate(m, q0, v0, 1.0, method="RK4", h=0.1)
        assert err.value.element == shown[:2]


def test_result_info_and_energy():
    m = triple_pendulum_seed001()
    res = simulate(m, None, None, 1.0, rtol=1e-10, n_out=5)
    assert isinstance(res, Result) and res.info["status"] == "success" and res.info["steps"] > 0
    assert res.info["cpu_seconds"] >= 0 and res.info["formulation"] == "tree"
    assert res.q_names == m.coordinate_names() == ["joint1.angle", "joint2.angle", "joint3.angle"]
    assert set(res.energy) == {"kinetic", "potential", "total"}


# ---- failures -------------------------------------------------------------------------------------------
def test_max_steps_gives_partial_result():
    m = triple_pendulum_seed001()
    with pytest.raises(IntegrationError) as info:
        simulate(m, None, None, 10.0, rtol=1e-12, max_steps=5)
    err = info.value
    assert "max_steps" in err.reason and "max_steps" in str(err)
    assert isinstance(err.result, Result) and len(err.result) == 6 and err.result.t[-1] < 10
    assert err.result.info["status"] == "failed"
    assert np.all(np.isfinite(err.result.energy["total"]))


def nan_after(t_fail, nv):
    def tau(t, q, v):
        return np.full(nv, np.nan) if t > t_fail else np.zeros(nv)

    return tau


@pytest.mark.parametrize("method", ["DOP853", "RK4"])
def test_nan_torque_gives_integration_error(method):
    m = triple_pendulum_seed001()
    kw = dict(h=1e-2) if method == "RK4" else {}
    with pytest.raises(IntegrationError) as info:
        simulate(m, None, None, 2.0, method=method, tau=nan_after(0.5, 3), **kw)
    err = info.value
    assert "non-finite" in err.reason
    r = err.result
    assert 0.4 < r.t[-1] <= 0.5 + 1e-12 and np.all(np.isfinite(r.q)) and r.info["status"] == "failed"


def test_exception_in_callback_gives_integration_error():
    m = triple_pendulum_seed001()

    def tau(t, q, v):
        if t > 0.3:
            raise RuntimeError("sensor offline")
        return np.zeros(3)

    for method, kw in (("RK2", dict(h=1e-2)), ("DOP853", {})):
        with pytest.raises(IntegrationError, match="sensor offline") as info:
            simulate(m, None, None, 1.0, method=method, tau=tau, **kw)
        assert info.value.result.t[-1] <= 0.3 + 1e-12 and len(info.value.result) > 1


def test_wrong_torque_length():
    m = triple_pendulum_seed001()
    with pytest.raises(ModelError, match="tau"):
        simulate(m, None, None, 1.0, tau=np.zeros(2))
    with pytest.raises(ModelError, match="returned 2 values"):
        simulate(m, None, None, 1.0, method="RK4", h=0.1, tau=lambda t, q, v: np.zeros(2))


# ---- registry -------------------------------------------------------------------------------------------
def test_register_formulation():
    """A formulation plugs in without editing simulate.py: here x'' = −x as a one-'body' system."""

    def factory(model, q0, v0, tau=None, energy=True, omega=1.0):
        x0 = np.array([q0[0], v0[0]])

        def fun(t, x):
            return np.array([x[1], -omega ** 2 * x[0]])

        def make_result(t, X, info):
            return Result(t, X[:, :1], X[:, 1:], info=info)

        return OdeSystem(x0=x0, fun=fun, make_result=make_result, split=lambda x: (x[:1], x[1:]),
                         info={"formulation": "oscillator"})

    register_formulation("oscillator-test", factory)
    try:
        res = simulate(None, [1.0], [0.0], 1.0, formulation="oscillator-test", omega=2.0, rtol=1e-12, atol=1e-12,
                       t_eval=[0.0, 0.5, 1.0])
        np.testing.assert_allclose(res.q[:, 0], np.cos(2 * res.t), rtol=0, atol=1e-11)
        res = simulate(None, [1.0], [0.0], 1.0, formulation="oscillator-test", method="RK4", h=1e-3, omega=2.0)
        assert res.info["path"] == "python" and abs(res.q[-1, 0] - np.cos(2)) < 1e-11
    finally:
        del FORMULATIONS["oscillator-test"]
    with pytest.raises(ValueError, match="registered"):
        simulate(None, [1.0], [0.0], 1.0, formulation="oscillator-test")


def test_tree_refuses_loops():
    """A four-bar loop has a cut joint: the tree formulation refuses it instead of ignoring the closure."""
    b = mb.ModelBuilder(name="four-bar")
    for name in ("crank", "coupler", "rocker"):
        b.add_body(name, mass=1.0, com=(0.5, 0, 0), inertia=np.diag([0.01, 0.1, 0.1]))
    b.add_joint("A", mb.Revolute(axis=(0, 0, 1)), "ground", "crank")
    b.add_joint("B", mb.Revolute(axis=(0, 0, 1)), "crank", "coupler", placement=mb.Placement(translation=(1, 0, 0)))
    b.add_joint("D", mb.Revolute(axis=(0, 0, 1)), "ground", "rocker", placement=mb.Placement(translation=(2, 0, 0)))
    b.add_joint("C", mb.Revolute(axis=(0, 0, 1)), "coupler", "rocker", placement=mb.Placement(translation=(1, 0, 0)),
                child_placement=mb.Placement(translation=(1, 0, 0)))
    m = b.build()
    assert len(m.cut_joints) == 1
    with pytest.raises(ModelError, match="cut joint 'C'"):
        simulate(m, None, None, 1.0)


def test_fixed_step_orders_on_triple_pendulum():
    """Global error at t = 2 s against DOP853 (rtol 1e-13): RK2/HEUN of order 2; VERLET of order 1 here
    (velocity-dependent accelerations, as documented); RK4 error below 1e-10 at h = 2e-3."""
    m = triple_pendulum_seed001()
    ref = simulate(m, None, None, 2.0, rtol=1e-13, atol=1e-13, n_out=2).q[-1]
    rates = {}
    for method in ("RK2", "HEUN", "VERLET"):
        e = [np.max(np.abs(simulate(m, None, None, 2.0, method=method, h=h, n_out=2).q[-1] - ref))
             for h in (4e-3, 2e-3)]
        rates[method] = np.log2(e[0] / e[1])
    assert abs(rates["RK2"] - 2) < 0.05 and abs(rates["HEUN"] - 2) < 0.05
    assert abs(rates["VERLET"] - 1) < 0.05
    assert np.max(np.abs(simulate(m, None, None, 2.0, method="RK4", h=2e-3, n_out=2).q[-1] - ref)) < 1e-10


def test_every_formulation_registered_on_import_and_listed_in_help():
    """The registry is complete as soon as the package is imported, and help(simulate) lists each formulation
    with its options; the module ``multibody.simulation`` is not shadowed by the function."""
    import importlib

    import multibody as mb

    for name in ("tree", "constrained", "cartesian"):
        assert name in FORMULATIONS
        assert f"``{name}``" in mb.simulate.__doc__
    assert "stabilization='projection'" in mb.simulate.__doc__
    mod = importlib.import_module("multibody.simulation")
    assert mod.simulate is mb.simulate and callable(mb.simulate)


def test_misspelt_option_and_bad_step_are_model_errors():
    m = triple_pendulum_seed001()
    with pytest.raises(ModelError, match="no option 'stabilisation'.*accepts: stabilization"):
        simulate(m, None, None, 1.0, formulation="constrained", stabilisation="baumgarte")
    with pytest.raises(ModelError, match="no option 'omega'"):
        simulate(m, None, None, 1.0, omega=1.0)
    for h in (-1e-3, 0.0, float("nan"), float("inf"), "x"):
        with pytest.raises(ModelError, match="step h"):
            simulate(m, None, None, 1.0, method="RK4", h=h)
    with pytest.raises(ModelError, match="needs the step h"):
        simulate(m, None, None, 1.0, method="RK4")
    with pytest.raises(ModelError, match="method 'RK5' is unknown"):
        simulate(m, None, None, 1.0, method="RK5")
    for bad, what in ((dict(q0="x"), "q0 must be an array of numbers"), (dict(v0={"a": 1}), "v0 must be"),
                      (dict(t_end="1 s"), "t_end must be a number"), (dict(t0=[0, 1]), "t0 must be a number"),
                      (dict(t_end=-1.0), "t_end must be a finite time after")):
        kw = dict(q0=None, v0=None, t_end=1.0) | bad
        with pytest.raises(ModelError, match=what):
            simulate(m, **kw)


def test_bench_refuses_an_unknown_benchmark(capsys):
    from multibody.cli import main

    assert main(["bench", "--only", "bogus"]) == 2
    assert "no benchmark named bogus" in capsys.readouterr().err


def test_zero_quaternion_names_the_joint():
    b = mb.ModelBuilder(name="box")
    b.add_body("box", mass=1.0, inertia=np.eye(3))
    b.add_joint("float", mb.Free(), parent="ground", child="box")
    m = b.build()
    q = np.zeros(m.nq)  # the quaternion (0, 0, 0, 0) is no rotation at all
    z = np.zeros(m.nv)
    for call in (lambda: simulate(m, q, None, 0.1), lambda: mb.aba(m, q, z, z), lambda: mb.rnea(m, q, z, z),
                 lambda: mb.crba(m, q), lambda: mb.aba(m, list(q), z, z)):
        with pytest.raises(ModelError, match=r"joint 'float': the quaternion q0?\[3:7\] .* has length 0"):
            call()


@pytest.mark.parametrize("method", ["RK4", "DOP853", "Radau"])
@pytest.mark.parametrize("formulation", ["tree", "constrained", "poisson"])
def test_torque_callback_checked_alike_by_every_method(method, formulation):
    """None, a column (nv, 1) and a wrong length are the same ModelError under every method and formulation;
    the callback's own exception is an IntegrationError with the partial result and the exception chained."""
    if formulation == "constrained":
        from multibody.systems.iftomm import four_bar_model

        m, q0, v0 = four_bar_model(1)
    else:
        m, q0, v0 = triple_pendulum_seed001(), None, None
    n = m.nv
    kw = dict(h=1e-2) if method == "RK4" else {}
    for bad, what in ((lambda t, q, v: None, "returned None"),
                      (lambda t, q, v: np.zeros((n, 1)), rf"returned {n} values of shape \({n}, 1\)"),
                      (lambda t, q, v: np.zeros(n - 1), f"returned {n - 1} values"),
                      (lambda t, q, v: "torque", "returned str")):
        with pytest.raises(ModelError, match=what):
            simulate(m, q0, v0, 0.5, method=method, tau=bad, formulation=formulation, **kw)

    def failing(t, q, v):
        if t > 0.2:
            raise KeyError("sensor offline")
        return np.zeros(n)

    with pytest.raises(IntegrationError, match="sensor offline") as info:
        simulate(m, q0, v0, 0.5, method=method, tau=failing, formulation=formulation, **kw)
    assert isinstance(info.value.__cause__, KeyError)
    assert 0.0 < info.value.result.t[-1] <= 0.2 + 1e-12
