"""Constraints as elements of the Model (``multibody.model.constraints``): one description used by every
formulation. The rows of each element are checked as derivatives of their residuals (seed 001 §2.1: ḟ = G v,
f̈ = G v̇ − γ), the same model gives the same motion in the constrained, Cartesian and stabilized formulations,
and bad input is refused at build time with the element's name."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.errors import ConstraintError, ModelError
from multibody.formulations.constrained import ConstrainedTree
from multibody.rows.constraint_rows import ConstraintRows


def free_body(constraint=None, gravity=(0.0, 0.0, -9.81), inertia=(0.02, 0.03, 0.04), com=(0.0, 0.0, 0.0)):
    b = mb.ModelBuilder(gravity=gravity)
    b.add_body("body", 1.3, com=com, inertia=inertia)
    b.add_joint("free", mb.Free(), "ground", "body")
    if constraint is not None:
        b.add_constraint(constraint)
    return b.build()


def sphere_model():
    """A free body whose origin stays on the unit sphere about the ground origin: f(q) = |p|² − 1 = 0 given as
    a Python function of the coordinates (a user constraint)."""
    return free_body(mb.UserConstraint("sphere", lambda q, t: np.array([q[0] ** 2 + q[1] ** 2 + q[2] ** 2 - 1.0])),
                     com=(0.05, -0.02, 0.1))


def test_user_constraint_same_trajectory_in_every_formulation():
    """A point on a sphere given as f(q) = 0 (issue: one model, every formulation): the constrained (tree +
    multipliers), Cartesian (absolute coordinates, the row carried over through the tree's velocity map) and
    stabilized (seed 000's law) formulations give the same q(t) to 1e-9 over 1 s, with the constraint held."""
    m = sphere_model()
    q0 = m.neutral()
    q0[:3] = (1.0, 0.0, 0.0)
    v0 = np.array([0.3, 0.1, -0.2, 0.0, 0.5, 0.4])
    te = np.linspace(0.0, 1.0, 11)
    runs = {f: mb.simulate(m, q0, v0, 1.0, formulation=f, rtol=1e-12, atol=1e-12, t_eval=te, **kw)
            for f, kw in (("constrained", {}), ("cartesian", {}), ("stabilized", {"lam": 50.0}))}
    ref = runs["constrained"]
    for name, r in runs.items():
        assert np.abs(r.q - ref.q).max() < 1e-9, name
        assert np.abs(np.sum(r.q[:, :3] ** 2, axis=1) - 1.0).max() < 1e-10, name
    assert np.ptp(ref.energy_total) < 1e-9 * abs(ref.energy_total).max()


def _path(model, q, v, a, h):
    """(q, v) at times ±h of the motion through (q, v) with v̇ = a (second order in h)."""
    return [(model.integrate(q, v * t + 0.5 * a * t * t, 1.0), v + a * t) for t in (h, -h)]


def _check_rows(model, q, v, a, tol_fd=1e-6):
    """ḟ = G v and f̈ = G a − γ for position rows, ġ = G a − γ for velocity rows, by central differences."""
    rows = ConstraintRows(model)
    f0, G, gam = rows.evaluate(q, v)
    lev = rows.level[:len(f0)]
    h = 1e-4
    (qp, vp), (qm, vm) = _path(model, q, v, a, h)
    fp, fm = rows.evaluate(qp, vp)[0], rows.evaluate(qm, vm)[0]
    d1 = (fp - fm) / (2 * h)
    pos = lev == 2
    # position rows: first derivative = G v; second = G a − γ; velocity rows: first derivative = G a − γ
    assert np.allclose(d1[pos], (G @ v)[pos], rtol=0, atol=tol_fd * (1 + np.abs(d1).max()))
    assert np.allclose(d1[~pos], (G @ a - gam)[~pos], rtol=0, atol=tol_fd * (1 + np.abs(d1).max()))
    d2 = (fp - 2 * f0 + fm) / h ** 2
    assert np.allclose(d2[pos], (G @ a - gam)[pos], rtol=0, atol=2e-4 * (1 + np.abs(d2[pos]).max(initial=0)))
    assert np.allclose(f0[~pos], (G @ v)[~pos], rtol=0, atol=1e-13)
    return f0, G, gam


ELEMENTS = {
    "point-on-plane": lambda: free_body(mb.PointOnPlane("plane", "body", point=(0.1, 0.2, -0.3),
                                                        normal=(0.3, -0.2, 1.0), origin=(0.0, 0.0, -1.0))),
    "point-on-profile": lambda: free_body(mb.PointOnProfile("curve", "body", mb.Profile.graph(
        0.3 * sp.Symbol("x") ** 2 - 0.1 * sp.Symbol("x") ** 3, sp.Symbol("x")), point=(0.1, 0.0, -0.2))),
    "rolling-disc": lambda: free_body(mb.RollingDisc("wheel", "body", radius=0.35, axis=(0.1, 1.0, 0.2),
                                                     center=(0.0, 0.05, 0.0))),
}


@pytest.mark.parametrize("kind", sorted(ELEMENTS))
def test_element_rows_are_derivatives_of_their_residuals(kind):
    model = ELEMENTS[kind]()
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = model.random_configuration(rng, scale=0.7)
        v = rng.normal(size=model.nv)
        a = rng.normal(size=model.nv)
        _check_rows(model, q, v, a)


def test_rolling_on_profile_rows():
    """A disc on a curve (seed 000's contact, no slip and tangency, eqs. 3.2–3.5), away from the curve and on
    it; with the contact angle solved from the tangency the contact row's rate has no α̇ term (∂f1/∂α ∝ f4)."""
    from multibody.systems.hoop_on_profile import hoop_model, initial_state

    model = hoop_model(r=0.05)
    rng = np.random.default_rng(1)
    for xa, speed in ((-0.7, 0.4), (0.3, -1.2)):
        q, v = initial_state(model, xa, speed)
        q = q + rng.normal(scale=1e-3, size=3)
        v = v + rng.normal(scale=0.1, size=3)
        f0, G, gam = _check_rows(model, q, v, rng.normal(size=3))
        assert abs(f0[0]) > 1e-5            # off the curve: the check is not only on the manifold


def test_rolling_disc_contact_forces_and_a_rolling_coin():
    """A coin (thin disc) rolling upright in a straight line stays upright at constant speed; its contact force
    is its weight (normal row) with no tangential force; the rows are satisfied along the run."""
    r, m = 0.1, 0.2
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81))
    b.add_body("coin", m, inertia=(m * r * r / 4, m * r * r / 2, m * r * r / 4))
    b.add_joint("free", mb.Free(), "ground", "coin")
    b.add_constraint(mb.RollingDisc("contact", "coin", radius=r, axis=(0.0, 1.0, 0.0)))
    model = b.build()
    q0 = model.neutral()
    q0[2] = r
    w = 3.0                                   # spin about the axle (body y): rolls along +x at r w
    v0 = np.array([0.0, w, 0.0, r * w, 0.0, 0.0])
    res = mb.simulate(model, q0, v0, 1.0, formulation="constrained", rtol=1e-11, atol=1e-11, n_out=11)
    assert np.allclose(res.q[-1, :3], [r * w * 1.0, 0.0, r], rtol=0, atol=1e-8)
    lam = res.reactions["contact"]
    assert np.allclose(lam[:, 0], m * 9.81, rtol=1e-9) and np.abs(lam[:, 1:]).max() < 1e-9
    assert max(v.max() for v in res.residuals.values()) < 1e-10


def test_natural_four_bar_closure_needs_the_child_side_location():
    """A four-bar written as four joints in a row: the last one closes the loop; without its child placement
    the builder refuses (naming the joint); with it, the mechanism is the four-bar: a parallelogram keeps the
    coupler's orientation (θ_B = −θ_A) and the rocker follows the crank (θ_C = −θ_B)."""
    def build(child):
        b = mb.ModelBuilder(gravity=(0, -9.81, 0))
        for n in ("crank", "coupler", "rocker"):
            b.add_body(n, 1.0, com=(0.5, 0, 0), inertia=(1e-3, 1 / 12, 1 / 12))
        up = mb.rotation_about((0, 0, 1), np.pi / 2)
        z = (0, 0, 1)
        b.add_joint("A", mb.Revolute(z), "ground", "crank", placement=(up, (0, 0, 0)))
        b.add_joint("B", mb.Revolute(z), "crank", "coupler", placement=(up.T, (1, 0, 0)))
        b.add_joint("C", mb.Revolute(z), "coupler", "rocker", placement=(up.T, (1, 0, 0)))
        b.add_joint("D", mb.Revolute(z), "rocker", "ground", placement=(None, (1, 0, 0)),
                    child_placement=child)
        return b.build()

    with pytest.raises(ModelError, match="joint 'D' closes a loop"):
        build(None)
    model = build(mb.Placement(translation=(1.0, 0, 0)))
    v0 = np.array([1.0, -1.0, 1.0])
    r = mb.simulate(model, None, v0, 2.0, formulation="constrained", rtol=1e-11, atol=1e-11, n_out=21)
    qA, qB, qC = r.q.T
    assert np.abs(qB + qA).max() < 1e-8 and np.abs(qC + qB).max() < 1e-8
    assert np.ptp(qA) > 0.5


def test_constraint_elements_validate_their_data():
    x = sp.Symbol("x")
    with pytest.raises(ModelError, match="constraint 'w': radius must be positive"):
        mb.RollingDisc("w", "body", radius=0.0)
    with pytest.raises(ModelError, match="constraint 'w': axle axis must be a non-zero finite vector"):
        mb.RollingDisc("w", "body", radius=0.1, axis=(0, 0, 0))
    with pytest.raises(ModelError, match="constraint 'p': normal must be a non-zero finite vector"):
        mb.PointOnPlane("p", "body", normal=(0, 0, 0))
    with pytest.raises(ModelError, match="constraint 'c': profile must be a multibody.Profile"):
        mb.PointOnProfile("c", "body", x ** 2)
    with pytest.raises(ModelError, match="constraint 'u': f must be callable"):
        mb.UserConstraint("u", "not a function")
    b = mb.ModelBuilder()
    b.add_body("body", 1.0, inertia=(1, 1, 1))
    b.add_joint("free", mb.Free(), "ground", "body")
    with pytest.raises(ModelError, match="add_constraint expects a constraint"):
        b.add_constraint("floor")
    with pytest.raises(ModelError, match="constraint 'p': body 'nobody' is not defined"):
        b.add_constraint(mb.PointOnPlane("p", "nobody"))
    b.add_constraint(mb.PointOnPlane("floor", "body"))
    with pytest.raises(ModelError, match="constraint 'floor': the name is already used"):
        b.add_constraint(mb.PointOnPlane("floor", "body"))
    with pytest.raises(ModelError, match="constraint 'free': the name is already used"):
        b.add_constraint(mb.PointOnPlane("free", "body"))
    model = b.build()
    with pytest.raises(ModelError, match="'tree' formulation integrates tree coordinates only"):
        mb.simulate(model, None, None, 0.1)
    with pytest.raises(ModelError, match="has no constraint 'wheel'"):
        model.constraint("wheel")
    with pytest.raises(ModelError, match="constraint 'bad': f.q, t. must return 1 finite numbers"):
        bad = mb.UserConstraint("bad", lambda q, t: np.array([np.nan]), nrows=1)
        bad._nrows = 1
        bad.rows(model, model.neutral(), np.zeros(model.nv), 0.0)


def test_constraints_need_a_constrained_formulation_and_consistent_positions():
    """A point 0.2 m above its plane: the projection onto the constraint would move q0 by 0.2 m, more than the
    default max_correction (0.1): refused in every formulation, naming the coordinate; accepted and reported
    with max_correction=None. A point on a plane it cannot reach: the error names the constraint."""
    model = free_body(mb.PointOnPlane("floor", "body", normal=(0, 0, 1), origin=(0, 0, 0)))
    q0 = model.neutral()
    q0[2] = 0.2
    for formulation in ("constrained", "stabilized", "cartesian"):
        with pytest.raises(ConstraintError, match="free.vz.* by 0.2 .*max_correction"):
            mb.simulate(model, q0, None, 0.2, formulation=formulation, n_out=3)
    r = mb.simulate(model, q0, None, 0.2, formulation="constrained", rtol=1e-10, atol=1e-10, n_out=3,
                    max_correction=None)
    assert abs(r.q[0, 2]) < 1e-12                  # projected onto the plane
    assert r.residuals["floor"].max() < 1e-12
    corr = r.info["initial_correction"]
    assert corr["most_moved"] == "free.vz" and abs(corr["position_correction"] - 0.2) < 1e-12
    rows = ConstraintRows(model)
    assert rows.names == ["floor"] and rows.level.tolist()[:1] == [2]
    ct = ConstrainedTree(model)
    with pytest.raises(ConstraintError, match="floor"):
        ct.project_position(q0 * np.nan)
