"""External loads (``model/loads.py``): their generalized forces are the frame Jacobian's transpose times the force
and torque (the principle of virtual power, seed 001 §3.4), their analytical derivatives equal complex steps through
the compiled right-hand side, their curves are those the kernels evaluate, and they act alike in every formulation."""
import math

import numpy as np
import pytest

import multibody as mb
from multibody.model.data import default_data
from multibody.model.forces import applied_forces
from multibody.errors import ModelError
from multibody.kernels.forces import applied_forces_kernel

CURVES = [mb.LoadCurve(), mb.LoadCurve.constant(-0.7), mb.LoadCurve.ramp(0.8, start=0.3),
          mb.LoadCurve.harmonic(3.0, amplitude=0.5, phase=0.2, offset=1.0),
          mb.LoadCurve.table([0.0, 0.5, 1.5, 2.0], [0.0, 2.0, -1.0, 0.5])]


def spatial_model(gravity=(0.0, 0.0, -9.81)):
    """A tree of every joint type with plain and quaternion coordinates, and loads of both references."""
    b = mb.ModelBuilder(gravity=gravity)
    b.add_body("a", 1.0, com=(0.1, 0.2, 0.0), inertia=(0.1, 0.2, 0.15))
    b.add_joint("ja", mb.Free(), "ground", "a")
    b.add_body("b", 0.8, com=(0.1, 0.0, 0.3), inertia=(0.1, 0.2, 0.15))
    b.add_joint("jb", mb.Spherical(), "a", "b", placement=mb.Placement(translation=(0.3, 0.1, 0.0)))
    b.add_body("c", 1.2, com=(0.1, 0.0, 0.3), inertia=(0.1, 0.2, 0.15))
    b.add_joint("jc", mb.Universal(axis1=(1, 0, 0), axis2=(0, 1, 1)), "b", "c",
                placement=mb.Placement(translation=(0.3, 0.1, 0.2)), stiffness=3.0)
    b.add_body("d", 0.5, com=(0.1, 0.0, 0.3), inertia=(0.1, 0.2, 0.15))
    b.add_joint("jd", mb.Prismatic(axis=(1, 1, 0)), "c", "d", placement=mb.Placement(translation=(0.3, 0.1, 0.2)),
                child_placement=mb.Placement(rotation=mb.rotation_about((0, 0, 1), 0.4), translation=(0.1, 0, 0)))
    b.add_frame("fd", "d", mb.Placement(rotation=mb.rotation_about((1, 2, 3), 0.7), translation=(0.2, -0.1, 0.3)))
    b.add_load("follower", "fd", force=(1, 2, 3), torque=(0.3, -0.2, 0.5), reference="local", curve=CURVES[3])
    b.add_load("dead", "c", force=(-1, 0.5, 3), torque=(0.1, 0.2, 0.3), curve=CURVES[4])
    b.add_load("dead_at_frame", "fd", force=(0.3, 0.1, -2), torque=(0, 0, 0.4))
    return b.build()


def load_forces(model, q, t, v=None):
    """τ of the model's applied forces (here: loads and the joint spring) by the kernel."""
    d = default_data(model)
    F, _ = applied_forces(model)
    tau = np.zeros(model.nv)
    v = np.zeros(model.nv) if v is None else v
    applied_forces_kernel(d.mi, d.mf, q, v, F, t, d.work, np.zeros((model.nbodies + 1, 6)), tau)
    return tau


@pytest.fixture(scope="module")
def model():
    return spatial_model()


def test_curves_of_the_kernel_are_those_of_python():
    """The kernel's s(t) (a load of unit force along x on a slider: τ = s(t)) equals LoadCurve.at, for every kind."""
    for curve in CURVES:
        b = mb.ModelBuilder(gravity=(0, 0, 0))
        b.add_body("box", 1.0, inertia=(0.1, 0.1, 0.1))
        b.add_joint("rail", mb.Prismatic(axis=(1, 0, 0)), "ground", "box")
        b.add_load("push", "box", force=(1.0, 0, 0), curve=curve)
        m = b.build()
        for t in (-1.0, 0.0, 0.3, 0.7, 1.1, 1.9, 2.5):
            assert load_forces(m, np.zeros(1), t)[0] == pytest.approx(curve.at(t), abs=1e-15)
    assert CURVES[2].at(0.7) == pytest.approx(0.5)
    assert mb.LoadCurve.from_dict(CURVES[4].as_dict()) == CURVES[4]


def test_generalized_force_is_the_jacobian_transpose(model):
    """τ = Σ J_frameᵀ [T; F] (J in world-aligned axes at the frame's origin; a follower load's vectors turned by the
    frame's rotation), minus the joint spring: the principle of virtual power, by an independent route."""
    rng = np.random.default_rng(7)
    for _ in range(3):
        q = model.integrate(model.neutral(), rng.normal(size=model.nv), 1.0)
        t = float(rng.uniform(0, 2))
        expected = np.zeros(model.nv)
        for load in model.loads:
            F, T = load.at(t)
            if load.reference == "local":
                R = mb.frame_placement(model, q, load.frame)[0]
                F, T = R @ F, R @ T
            J = mb.frame_jacobian(model, q, load.frame, reference="local_world_aligned")
            expected += J.T @ np.concatenate([T, F])
        spring = np.zeros(model.nv)
        jc = model.joints[model.joint_names.index("jc")]
        spring[jc.v_slice] = -3.0 * q[jc.q_slice]
        assert load_forces(model, q, t) == pytest.approx(expected + spring, abs=1e-12)


def test_derivatives_equal_complex_steps(model):
    """The linearization with the analytical derivatives (the loads' ∂τ/∂q of kernels/derivatives_forces.py, a
    follower load's unsymmetric one included) equals complex steps through the compiled right-hand side."""
    rng = np.random.default_rng(3)
    q = model.integrate(model.neutral(), rng.normal(size=model.nv), 1.0)
    v = rng.normal(size=model.nv)
    analytic = mb.linearize(model, q, v, t=0.9)
    complex_step = mb.linearize(model, q, v, t=0.9, derivative="complex")
    assert analytic.info["path"] == "analytic" and complex_step.info["path"] == "complex step"
    assert analytic.A == pytest.approx(complex_step.A, rel=1e-9, abs=1e-9 * np.abs(analytic.A).max())


def test_statics_of_a_follower_load():
    """A cantilever whose tip force turns with the tip (reference "local", perpendicular to it): its equilibrium
    against an independent shooting solution of EI θ'' = −P cos(θ(L) − θ), θ(0) = θ'(L) = 0 (the moment of the
    turned force), O(l²) as the dead load's."""
    from scipy.integrate import solve_ivp
    from scipy.optimize import fsolve

    alpha = 1.0

    def shoot(x):
        k0, theta1 = x
        sol = solve_ivp(lambda s, y: [y[1], -alpha * math.cos(theta1 - y[0]), math.cos(y[0]), math.sin(y[0])],
                        (0.0, 1.0), [0.0, k0, 0.0, 0.0], rtol=1e-12, atol=1e-13)
        return sol.y[:, -1]

    x = fsolve(lambda x: [shoot(x)[1], shoot(x)[0] - x[1]], [0.8, 0.4], xtol=1e-13)
    end = shoot(x)
    assert abs(end[1]) < 1e-10 and abs(end[0] - x[1]) < 1e-10     # the shooting's own residuals
    tip_exact = end[2:]
    tips = []
    for n in (32, 64):
        b = mb.ModelBuilder(gravity=(0, 0, 0))
        b.add_beam("rod", "ground", length=1.0, segments=n, EI=(1.0, None), GJ=None, mass_per_length=1.0)
        b.add_load("tip", "rod.tip", force=(0, 0, -alpha), reference="local")
        m = b.build()
        q = mb.static_equilibrium(m, m.neutral())
        p = mb.frame_placement(m, q, "rod.tip")[1]
        tips.append(np.array([p[0], -p[2]]))
    e32, e64 = tips[0] - tip_exact, tips[1] - tip_exact
    assert np.abs(e64).max() < 2e-3 and np.abs(e64).max() <= 0.3 * np.abs(e32).max()


def _double_pendulum():
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("l1", 1.0, com=(0.5, 0, 0), inertia=(0.01, 0.1, 0.1))
    b.add_joint("j1", mb.Revolute(axis=(0, 1, 0)), "ground", "l1")
    b.add_body("l2", 0.5, com=(0.4, 0, 0), inertia=(0.01, 0.05, 0.05))
    b.add_joint("j2", mb.Revolute(axis=(0, 1, 0)), "l1", "l2", placement=mb.Placement(translation=(1, 0, 0)))
    b.add_frame("end", "l2", mb.Placement(translation=(0.8, 0, 0)))
    b.add_load("push", "end", force=(0, 0, 3.0), curve=mb.LoadCurve.harmonic(4.0, amplitude=1.0))
    b.add_load("twist", "l1", torque=(0, 0.5, 0), reference="local", curve=mb.LoadCurve.ramp(0.5))
    return b.build(), np.array([0.3, -0.2]), np.zeros(2)


def _slider_crank():
    """A slider-crank (a loop closed by a cut pin) with a follower torque on the crank and a harmonic force on the
    piston; q0 on the loop."""
    r, l, phi = 0.1, 0.3, 0.7
    b = mb.ModelBuilder(gravity=(0, -9.81, 0))
    b.add_body("crank", 1.0, com=(r / 2, 0, 0), inertia=(1e-6, 1e-3, 1e-3))
    b.add_joint("O", mb.Revolute(axis=(0, 0, 1)), "ground", "crank")
    b.add_body("rod", 0.5, com=(l / 2, 0, 0), inertia=(1e-6, 4e-3, 4e-3))
    b.add_joint("A", mb.Revolute(axis=(0, 0, 1)), "crank", "rod", placement=mb.Placement(translation=(r, 0, 0)))
    b.add_body("piston", 0.3, inertia=(1e-4, 1e-4, 1e-4))
    b.add_joint("guide", mb.Prismatic(axis=(1, 0, 0)), "ground", "piston")
    b.add_joint("B", mb.Revolute(axis=(0, 0, 1)), "rod", "piston", placement=mb.Placement(translation=(l, 0, 0)),
                cut=True, child_placement=mb.Placement())
    b.add_load("drive", "crank", torque=(0, 0, 2.0), reference="local")
    b.add_load("gas", "piston", force=(-20.0, 0, 0), curve=mb.LoadCurve.harmonic(10.0, amplitude=1.0, offset=1.0))
    model = b.build()
    psi = -math.asin(r * math.sin(phi) / l)           # the rod's absolute angle on the loop
    q0 = np.zeros(model.nq)
    q0[model.joint("O").q_slice] = phi
    q0[model.joint("A").q_slice] = psi - phi
    q0[model.joint("guide").q_slice] = r * math.cos(phi) + l * math.cos(psi)
    return model, q0, np.zeros(model.nv)


def _runs(build, formulations, t_end):
    model, q0, v0 = build()
    runs = {f: mb.simulate(model, q0, v0, t_end, formulation=f, rtol=1e-10, atol=1e-10) for f in formulations}
    return model, runs


@pytest.fixture(scope="module")
def tree_runs():
    """The double pendulum with loads in the formulations of trees: the same equations, so the same states to the
    integrators' accuracy (adaptive, tolerances 1e-10)."""
    return _runs(_double_pendulum, ["tree", "poisson", "cartesian"], 1.0)


@pytest.fixture(scope="module")
def loop_runs():
    """The slider-crank with loads in the formulations of loops."""
    return _runs(_slider_crank, ["constrained", "stabilized", "cartesian"], 0.4)


@pytest.mark.parametrize("formulation", ["poisson", "cartesian"])
def test_loads_act_alike_in_the_tree_formulations(tree_runs, formulation):
    runs = tree_runs[1]
    assert runs[formulation].q[-1] == pytest.approx(runs["tree"].q[-1], abs=1e-6)
    assert abs(runs["tree"].q[-1][0] - 0.3) > 0.1      # the loads moved it


@pytest.mark.slow
def test_loads_act_in_the_generated_code(tree_runs):
    """The ``symbolic`` formulation's generated right-hand side calls the same applied-forces kernel (its code
    compiles anew in each test session: ~20 s)."""
    model, runs = tree_runs
    run = mb.simulate(model, runs["tree"].q[0], runs["tree"].v[0], 1.0, formulation="symbolic", rtol=1e-10,
                      atol=1e-10)
    assert run.q[-1] == pytest.approx(runs["tree"].q[-1], abs=1e-6)


@pytest.mark.parametrize("formulation", ["stabilized", "cartesian"])
def test_loads_act_alike_in_the_loop_formulations(loop_runs, formulation):
    runs = loop_runs[1]
    assert runs[formulation].q[-1] == pytest.approx(runs["constrained"].q[-1], abs=1e-6)
    assert abs(runs["constrained"].q[-1][0] - 0.7) > 0.05


def test_bad_curves_are_one_line_errors():
    with pytest.raises(ModelError, match="times must increase"):
        mb.LoadCurve.table([0.0, 1.0, 1.0], [0, 1, 2])
    with pytest.raises(ModelError, match="ramp duration must be > 0"):
        mb.LoadCurve.ramp(0.0)
    with pytest.raises(ModelError, match="unknown load-curve key"):
        mb.LoadCurve.from_dict({"omega": 1.0, "sine": 2.0})
