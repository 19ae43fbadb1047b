"""Tree + cut-joint constraints (seed 001 §3.6), drift control, consistent initial values, redundancy,
singular configurations, and the Cartesian twin of a builder Model (seed 001 ch. 2)."""

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ConstraintError
from multibody.formulations.cartesian import cartesian_from_model, model_state_from_cartesian
from multibody.formulations.constrained import ConstrainedTree
from multibody.rows.constraint_rows import ConstraintRows
from multibody.systems import slider_crank as sc

from models import loop_model


CUTS = {
    "revolute": mb.Revolute(axis=(0, 0, 1)), "spherical": mb.Spherical(), "prismatic": mb.Prismatic(axis=(1, 0, 0)),
    "cylindrical": mb.Cylindrical(axis=(0, 1, 0)), "universal": mb.Universal((1, 0, 0), (0, 1, 0)),
    "planar": mb.Planar(), "fixed": mb.Fixed(),
}


@pytest.mark.parametrize("kind", sorted(CUTS))
def test_cut_joint_rows_are_derivatives_of_the_residuals(kind):
    """ḟ = G v and f̈ = G a − γ along q(t) = q ⊕ (v t + a t²/2), on the constraint manifold
    (seed 001 §3.6.1: H q̈ = −Ḣ q̇; §3.6.2: the cut-joint Jacobians H_z, H_Ω)."""
    model = loop_model(CUTS[kind])
    ct = ConstrainedTree(model)
    for seed in range(20):   # a random start near the neutral pose that the loop can be closed from
        rng = np.random.default_rng(seed)
        try:
            q = ct.project_position(model.integrate(model.neutral(), rng.normal(scale=0.3, size=model.nv), 1.0))
            break
        except ConstraintError:
            continue
    else:
        raise AssertionError("no assembled configuration found")
    v = ct.project_velocity(q, rng.normal(size=model.nv))
    v /= np.linalg.norm(v)
    a = rng.normal(size=model.nv)
    a /= np.linalg.norm(a)
    cons = ConstraintRows(model)
    f0, G, gam = cons.evaluate(q, v)

    def f(t):
        return cons.evaluate(model.integrate(q, v * t + 0.5 * a * t * t, 1.0), None)[0]

    h = 1e-4
    d1 = (f(h) - f(-h)) / (2 * h)
    d2 = (f(h) - 2 * f(0.0) + f(-h)) / h ** 2
    assert np.abs(f0).max() < 1e-11
    assert np.allclose(d1, G @ v, rtol=0, atol=1e-7 * (1 + np.abs(d1).max()))
    assert np.allclose(d2, G @ a - gam, rtol=0, atol=2e-5 * (1 + np.abs(d2).max()))


def test_slider_crank_rows_and_multipliers_match_the_cartesian_form():
    """Tree + cut pin B vs the book's Cartesian slider-crank (eqs. 2.47–2.49): same crank acceleration;
    the cut pin's planar reaction equals the Cartesian pin-B force."""
    model, q0, v0 = sc.model()
    ct = ConstrainedTree(model)
    vd, lam = ct.accelerations(0.0, q0, v0)
    s, emb = cartesian_from_model(model, q0, v0)
    assert emb.dim == 2 and s.nc == 8          # the book's planar system (eq. 2.48)
    a, lamc = s.accelerations(0.0, s.x0, s.v0)
    assert vd[0] == pytest.approx(a[2], rel=1e-12)
    # cut-joint multipliers: force on the slider (child) at B in ground axes = λ_point
    R = s.reactions(0.0, s.x0, s.v0)
    fB = dict(R["B"])["slider"][:2]
    assert np.allclose(lam[:2], fB, rtol=1e-9, atol=1e-9)
    assert np.allclose(lam[2:], 0.0, rtol=0, atol=1e-9)   # out-of-plane rows: identically zero, dropped


def test_consistent_initial_values_and_impossible_assembly():
    model, q0, v0 = sc.model()
    ct = ConstrainedTree(model)
    qp = ct.project_position(q0 + np.array([0.0, 0.05, 0.01]))
    assert np.abs(ct.cons.evaluate(qp)[0]).max() < 1e-12
    vp = ct.project_velocity(qp, v0 + 0.3)
    assert np.abs(ct.cons.evaluate(qp)[1] @ vp).max() < 1e-12
    # a loop that cannot close: the cut pin placed 10 m away from the rod tip
    b = mb.ModelBuilder(gravity=(0, -9.81, 0))
    b.add_body("crank", 1.0, com=(0.1, 0, 0), inertia=[1e-6, 1e-3, 1e-3])
    b.add_body("slider", 1.0, inertia=[1e-3, 1e-3, 1e-3])
    b.add_joint("O", mb.Revolute(axis=(0, 0, 1)), "ground", "crank")
    b.add_joint("guide", mb.Prismatic(axis=(1, 0, 0)), "ground", "slider")
    b.add_joint("far", mb.Revolute(axis=(0, 0, 1)), "crank", "slider", placement=(np.eye(3), (0.2, 0, 0)),
                child_placement=(np.eye(3), (0, 10.0, 0)), cut=True)
    bad = b.build()
    with pytest.raises(ConstraintError) as exc:
        mb.simulate(bad, None, None, 0.1, formulation="constrained")
    assert "far" in str(exc.value) and exc.value.joints == ("far",)


def test_simulate_constrained_projection_baumgarte_and_hook():
    """Projection keeps residuals at round-off; Baumgarte (α = β = 20) keeps them small without it; a
    stabilizer hook (seed 000's method plugs in here) receives f, G, γ."""
    model, q0, v0 = sc.model()
    r = mb.simulate(model, q0, v0, 0.5, formulation="constrained", rtol=1e-10, atol=1e-10, n_out=11)
    assert r.residuals["B"].max() < 1e-11 and r.residuals["velocity"].max() < 1e-11
    assert r.reactions["B"].shape == (11, 6)     # the cut pin in its joint frame
    rb = mb.simulate(model, q0, v0, 0.5, formulation="constrained", stabilization="baumgarte",
                     baumgarte=(20.0, 20.0), rtol=1e-8, atol=1e-8, n_out=11)
    assert rb.residuals["B"].max() < 1e-6
    # from a violated position (f0 = 2e-5, ḟ0 = 7.5e-5): Baumgarte's f̈ + 2α ḟ + β² f = 0 with α = β = λ = 20 is
    # critically damped, |f(t)| ≤ (|f0| + (|ḟ0| + λ |f0|) t) exp(−λt) (1.2e-8 at t = 0.5; measured 9.4e-9),
    # while without stabilization f̈ = 0 and the residual grows (f0 + ḟ0 t: measured 4.2e-5)
    q_bad = q0 + np.array([0.0, 1e-4, 0.0])
    rb, rn = (mb.simulate(model, q_bad, v0, 0.5, formulation="constrained", stabilization=how, consistent=False,
                          rtol=1e-10, atol=1e-10, n_out=11, **kw)
              for how, kw in (("baumgarte", {"baumgarte": (20.0, 20.0)}), ("none", {})))
    f0, df0, lam = rb.residuals["B"][0], rb.residuals["velocity"][0], 20.0
    assert rb.residuals["B"][-1] < 3 * (f0 + (df0 + lam * f0) * 0.5) * np.exp(-lam * 0.5)
    assert rn.residuals["B"][-1] > f0 and rn.residuals["B"][-1] > 1000 * rb.residuals["B"][-1]
    # seed 000 (eqs. 2.4, 2.7): an initial residual decays like exp(−λ t)
    q_bad = q0 + np.array([0.0, 1e-4, 0.0])
    rs = mb.simulate(model, q_bad, v0, 0.1, formulation="constrained", stabilization="seed000", seed000_lambda=200.0,
                     consistent=False, rtol=1e-10, atol=1e-10, n_out=11)
    # critically damped: |f(t)| ≤ |f0| (1 + λt) e^{−λt} = 21 e^{−20} |f0| ≈ 4e-8 |f0| at t = 0.1
    assert rs.residuals["B"][0] > 1e-6 and rs.residuals["B"][-1] < 1e-7 * rs.residuals["B"][0]
    calls = []

    def hook(t, q, v, f, G, gam):
        calls.append(t)
        return gam - 40.0 * (G @ v) - 400.0 * f

    rh = mb.simulate(model, q0, v0, 0.2, formulation="constrained", stabilizer=hook, rtol=1e-8, atol=1e-8, n_out=3)
    assert calls and rh.info["stabilization"] == "hook"


def test_singular_configuration_is_reported():
    """A parallelogram four-bar through its horizontal position: the cut joint's Jacobian loses rank;
    the time and the joint are recorded (or raised with on_singular='raise')."""
    b = mb.ModelBuilder(gravity=(0, -9.81, 0), name="parallelogram")
    up = mb.rotation_about((0, 0, 1), np.pi / 2)
    for k in range(2):
        b.add_body(f"crank{k}", 1.0, com=(0.5, 0, 0), inertia=[1e-6, 1 / 12, 1 / 12])
        b.add_joint(f"A{k}", mb.Revolute(axis=(0, 0, 1)), "ground", f"crank{k}", placement=(up, (k, 0, 0)))
    b.add_body("coupler", 1.0, com=(0.5, 0, 0), inertia=[1e-6, 1 / 12, 1 / 12])
    b.add_joint("B0", mb.Revolute(axis=(0, 0, 1)), "crank0", "coupler", placement=(up.T, (1, 0, 0)))
    b.add_joint("B1", mb.Revolute(axis=(0, 0, 1)), "coupler", "crank1", placement=(np.eye(3), (1, 0, 0)),
                child_placement=(np.eye(3), (1, 0, 0)), cut=True)
    model = b.build()
    v0 = np.zeros(model.nv)
    v0[model.joint("A0").v_slice] = -1.0
    v0[model.joint("A1").v_slice] = -1.0
    v0[model.joint("B0").v_slice] = 1.0
    r = mb.simulate(model, None, v0, 1.0, formulation="constrained", rtol=1e-10, atol=1e-10, n_out=11)
    ev = r.info["singular_configurations"]
    assert ev and ev[0]["joints"] == ["B1"] and 0.5 < ev[0]["time"] < 1.0
    with pytest.raises((ConstraintError, mb.IntegrationError)) as exc:
        mb.simulate(model, None, v0, 1.0, formulation="constrained", on_singular="raise", rtol=1e-10, atol=1e-10)
    assert "singular configuration" in str(exc.value) and "B1" in str(exc.value)


def test_cartesian_formulation_of_a_builder_model_agrees():
    """simulate(model, formulation="cartesian") on the builder's slider-crank (spatial bodies, hinges,
    a prismatic joint): the same joint-coordinate history as the tree + cut-joint formulation."""
    model, q0, v0 = sc.model()
    t_eval = np.linspace(0.0, 0.25, 6)
    r1 = mb.simulate(model, q0, v0, 0.25, formulation="constrained", rtol=1e-11, atol=1e-11, t_eval=t_eval)
    r2 = mb.simulate(model, q0, v0, 0.25, formulation="cartesian", rtol=1e-11, atol=1e-11, t_eval=t_eval)
    assert np.allclose(r1.q, r2.q, rtol=0, atol=1e-8)
    assert np.allclose(r1.v, r2.v, rtol=0, atol=1e-6)
    assert np.allclose(r1.energy["total"], r2.energy["total"], rtol=1e-8)
    assert r2.residuals["position"].max() < 1e-10
    s, emb = cartesian_from_model(model, q0, v0)
    q, v = model_state_from_cartesian(model, emb, s.x0, s.v0)
    # the round trip rounds a few times (16 eps of the largest entry; measured 1 ulp of 33.8)
    eps = np.finfo(float).eps
    assert np.allclose(q, q0, rtol=0, atol=16 * eps * np.abs(q0).max())
    assert np.allclose(v, v0, rtol=0, atol=16 * eps * np.abs(v0).max())


def test_time_dependent_constraint_is_projected_at_the_step_time():
    """A rheonomic constraint x = 0.3 sin 2t (a Python UserConstraint: the fixed-step run is the Python loop) on
    a bob free in the vertical plane: after every step positions and velocities are projected onto the rows
    at that step's time, in the fixed-step run as in the adaptive one. The row is linear in q and the fall
    y = −g t²/2 a quadratic that RK4 and DOP853 integrate exactly, so both runs give x = 0.3 sin 2t,
    ẋ = 0.6 cos 2t and y to round-off (1e-12 on values <= 5); a projection at t = 0 held x near 0."""
    b = mb.ModelBuilder(gravity=(0, -9.81, 0))
    b.add_body("bob", 1.0, inertia=(0.01, 0.01, 0.01))
    b.add_joint("plane", mb.Planar(), "ground", "bob")
    b.add_constraint(mb.UserConstraint("drive", lambda q, t: np.array([q[0] - 0.3 * np.sin(2 * t)])))
    model = b.build()
    runs = [mb.simulate(model, [0, 0, 0], [0.6, 0, 0], t_end=1.0, formulation="constrained", method=method,
                        n_out=11, **kw) for method, kw in (("RK4", dict(h=0.01)), ("DOP853", dict(rtol=1e-10)))]
    assert runs[0].info["path"] == "python"
    for r in runs:
        exact = np.stack([0.3 * np.sin(2 * r.t), -9.81 / 2 * r.t ** 2, 0 * r.t], axis=1)
        np.testing.assert_allclose(r.q, exact, rtol=0, atol=1e-12)
        np.testing.assert_allclose(r.v[:, 0], 0.6 * np.cos(2 * r.t), rtol=0, atol=1e-12)
