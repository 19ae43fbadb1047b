"""The equations of motion in Poisson impulses (seed 002, reference notes PART A) and the STORMER6 method.

* q̇ from the sweep (§A.6) and the Cholesky (§A.7.3) solvers of system (6) equals H(q)⁻¹ p, H from CRBA and a
  dense solve, on random trees with every joint type (the notes' own check, §A.12: 2e-13 on trees of ≤ 12
  bodies);
* ṗ of eq. (7) equals d/dt (M(q) v) along the motion (finite differences of CRBA, §A.12: "ṗ agreed with
  ∂T/∂q + Q");
* trajectories mapped back to (q, v) equal those of the ABA (tree) formulation, and the Hamiltonian is
  conserved; STORMER6 is of order 6 and keeps the Hamiltonian error bounded;
* the seed's test systems, cardan chains of 5–50 bodies (§A.9).
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.algorithms.dynamics import aba, crba
from multibody.bench.dynamics import random_tree
from multibody.errors import IntegrationError, ModelError
from multibody.formulations.poisson import impulses, poisson_system, velocity
from multibody.integrate.fixed_step import KAHAN_LI_S9ODR6
from multibody.result import Result
from multibody.systems.cardan_chain import cardan_chain

from models import loop_model

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
trees = st.tuples(st.integers(1, 12), st.integers(0, 2**32 - 1))
SOLVERS = ("sweep", "cholesky")


def _model(n, seed):
    """A random tree of n bodies with every joint type (``bench.dynamics.random_tree``) and its generator."""
    rng = np.random.default_rng(seed)
    model = random_tree(n, rng)
    assume(model.nv > 0)  # every joint Fixed: nothing moves
    return model, rng


def every_joint_tree(damping=0.0, effort=0.0, gravity=(0.0, 0.0, 0.0)):
    """A floating (Free) base carrying bodies on every other joint type — Revolute, Prismatic, Cylindrical and
    Universal on the base, Spherical, Planar and Fixed on the Universal's body — with joint springs on the
    plain coordinates, a point spring, optional dampers and a constant effort. Weightless by default, so
    that the base does not fall away: the motion stays small and smooth (not chaotic) for 5 s."""
    b = mb.ModelBuilder(gravity=gravity, name="every joint")
    rng = np.random.default_rng(7)

    def body(name, m):
        b.add_body(name, mass=m, com=rng.uniform(-0.2, 0.2, 3), inertia=np.diag(rng.uniform(0.06, 0.11, 3)))

    body("base", 3.0)
    b.add_joint("free", mb.Free(), "ground", "base", damping=damping)
    specs = [("rev", mb.Revolute((0.0, 0.6, 0.8)), dict(stiffness=4.0, effort=effort)),
             ("pri", mb.Prismatic((1.0, 0.0, 0.0)), dict(stiffness=20.0)),
             ("cyl", mb.Cylindrical((0.0, 0.0, 1.0)), dict(stiffness=(3.0, 25.0))),
             ("uni", mb.Universal((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)), dict(stiffness=5.0)),
             ("sph", mb.Spherical(), dict()),
             ("pla", mb.Planar(), dict(stiffness=(20.0, 20.0, 4.0))),
             ("fix", mb.Fixed(), dict())]
    for k, (name, joint, forces) in enumerate(specs):
        body(name + "_body", 0.5 + 0.1 * k)
        b.add_joint(name, joint, "base" if k < 4 else "uni_body", name + "_body",
                    placement=(mb.rotation_about(rng.normal(size=3), 0.5), rng.uniform(-0.5, 0.5, 3)),
                    damping=damping if joint.nv else None, **forces)
    b.add_spring("tie", "sph_body", (0.1, 0.0, 0.0), "base", (0.0, 0.2, 0.0), stiffness=30.0, damping=damping,
                 rest_length=0.3)
    return b.build()


def _every_joint_state(model, scale=0.3):
    rng = np.random.default_rng(1)
    q0 = model.integrate(model.neutral(), scale * rng.uniform(-1, 1, model.nv))
    return q0, scale * rng.uniform(-1, 1, model.nv)


# ---- system (6): q̇ = H⁻¹ p ----------------------------------------------------------------------------------
@SETTINGS
@given(trees)
def test_solvers_equal_dense_solve(args):
    """Both O(N) solvers give v = H(q)⁻¹ p, H = CRBA, with the forward error of a backward-stable solve:
    ≤ 1e-12 relative for cond(H) ≤ 1e3, ≤ 1e-15·cond(H) above (≈ 4.5 u cond; measured ≤ 0.13 of this bound
    over 1000 solves, 1–12 bodies). Their backward error |H v − p| is round-off (measured ≤ 4.4e-15)."""
    model, rng = _model(*args)
    q = model.random_configuration(rng)
    p = rng.uniform(-1.0, 1.0, model.nv)
    H = crba(model, q)
    ref = np.linalg.solve(H, p)
    tol = max(1e-12, 1e-15 * np.linalg.cond(H)) * max(1.0, np.abs(ref).max())
    v = {s: velocity(model, q, p, s) for s in SOLVERS}
    for s in SOLVERS:
        assert np.abs(v[s] - ref).max() <= tol, s
        assert np.abs(H @ v[s] - p).max() <= 1e-13 * np.abs(H).max() * np.abs(v[s]).max(), s
    # the two algorithms are algebraically identical (notes §A.7.3)
    assert np.abs(v["sweep"] - v["cholesky"]).max() <= tol


@SETTINGS
@given(trees)
def test_impulses_are_H_v(args):
    """p = ∂T/∂v = H v from one backward accumulation of the subtree momenta (§A.11), to round-off."""
    model, rng = _model(*args)
    q = model.random_configuration(rng)
    v = rng.uniform(-1.0, 1.0, model.nv)
    ref = crba(model, q) @ v
    assert np.abs(impulses(model, q, v) - ref).max() <= 1e-13 * max(1.0, np.abs(ref).max())


# ---- eq. (7): ṗ ---------------------------------------------------------------------------------------------
def _rhs(model, q, p, solver="sweep", tau=None):
    system = poisson_system(model, q, None, tau=tau, solver=solver)
    x = np.concatenate([q, p])
    return system.fun(0.0, x)


def _momentum_rate(model, q, v, a, h=1e-3):
    """d/dt (M(q) v) at (q, v) when v̇ = a, by central differences along q(t) = q ⊕ (v t + ½ a t²),
    v(t) = v + a t (exact to O(t³) on the manifold), Richardson-extrapolated: error O(h⁴ p⁽⁵⁾) + O(u |p| / h),
    about 1e-12 |p| for motions of a few rad/s."""
    def P(t):
        return crba(model, model.integrate(q, v * t + 0.5 * a * t * t, 1.0)) @ (v + a * t)

    d1 = (P(h) - P(-h)) / (2 * h)
    d2 = (P(2 * h) - P(-2 * h)) / (4 * h)
    return (4 * d1 - d2) / 3


@SETTINGS
@given(trees, st.sampled_from(SOLVERS))
def test_impulse_rate_is_momentum_derivative(args, solver):
    """ṗ of eq. (7) (with Ȧᵀμ: the columns of S that turn with the parent or the child) equals the rate of
    change of M v along the motion computed by ABA, to the finite-difference error (measured ≤ 3e-10 relative
    on 100 trees; bound 1e-8). With q̇ = v this is Lagrange's d/dt ∂T/∂q̇ = ∂T/∂q + Q (notes §A.12)."""
    model, rng = _model(*args)
    q = model.random_configuration(rng)
    v = rng.uniform(-1.0, 1.0, model.nv)
    xdot = _rhs(model, q, impulses(model, q, v), solver)
    a = aba(model, q, v, np.zeros(model.nv))
    ref = _momentum_rate(model, q, v, a)
    assert np.abs(xdot[model.nq:] - ref).max() <= 1e-8 * max(1.0, np.abs(ref).max())
    # q̇ = q̇(q, v) with v solved from M v = p: v carries a relative error up to a few eps·cond(M) (backward-stable
    # solves), and q̇ is linear in v with coefficients of order 1 (unit quaternions, rotation matrices)
    bound = 100 * np.finfo(float).eps * np.linalg.cond(mb.crba(model, q)) * max(1.0, np.abs(v).max())
    np.testing.assert_allclose(xdot[:model.nq], model.qdot(q, v), rtol=0, atol=bound)


def test_applied_forces_enter_impulse_rate():
    """Joint springs, dampers, efforts, the point spring and the extra torques: ṗ = d/dt (M v) again, with
    ABA's accelerations under the same forces (the generalized forces Q of eq. 7)."""
    model = every_joint_tree(damping=0.3, effort=0.7, gravity=(0.0, -2.0, -9.81))
    q, v = _every_joint_state(model, scale=1.0)
    tau = np.linspace(-1.0, 1.0, model.nv)
    from multibody.formulations.tree import tree_system
    a = tree_system(model, q, v, tau=tau).fun(0.0, np.concatenate([q, v]))[model.nq:]
    ref = _momentum_rate(model, q, v, a)
    for solver in SOLVERS:
        xdot = _rhs(model, q, impulses(model, q, v), solver, tau=tau)
        assert np.abs(xdot[model.nq:] - ref).max() <= 1e-8 * np.abs(ref).max()
        # a torque callback takes the Python path: the same derivative
        cb = _rhs(model, q, impulses(model, q, v), solver, tau=lambda t, q_, v_: tau)
        np.testing.assert_allclose(cb, xdot, rtol=0, atol=1e-13 * np.abs(xdot).max())


# ---- trajectories -------------------------------------------------------------------------------------------
def _compare_with_tree(model, q0, v0, t_end=5.0, tol=1e-13):
    tree = mb.simulate(model, q0, v0, t_end, rtol=tol, atol=tol, n_out=51)
    runs = {s: mb.simulate(model, q0, v0, t_end, rtol=tol, atol=tol, n_out=51, formulation="poisson", solver=s)
            for s in SOLVERS}
    return tree, runs


def test_trajectories_equal_tree_formulation():
    """5 s of the every-joint floating tree (Free base, springs, dampers, an effort) by DOP853: the (q, v) of the
    Poisson formulation equal the tree (ABA) formulation's to 1e-10. The difference is the sum of both runs'
    global errors, proportional to the tolerance: measured max |Δv| = 8.0e-10, 8.5e-11, 8.0e-12 at rtol =
    atol = 1e-11, 1e-12, 1e-13 without dampers and effort; with them 1.0e-11 at 1e-13, 10× below 1e-10."""
    model = every_joint_tree(damping=0.05, effort=0.2)
    q0, v0 = _every_joint_state(model)
    tree, runs = _compare_with_tree(model, q0, v0)
    for s, res in runs.items():
        assert np.abs(res.q - tree.q).max() <= 1e-10, s
        assert np.abs(res.v - tree.v).max() <= 1e-10, s
        # the impulses kept in the result are H(q) v
        k = len(res.t) // 2
        np.testing.assert_allclose(res.series["p"][k], crba(model, res.q[k]) @ res.v[k], rtol=1e-12, atol=1e-12)


def _cardan_state(model):
    rng = np.random.default_rng(2)
    return rng.uniform(-0.2, 0.2, model.nq), rng.uniform(-0.2, 0.2, model.nv)


@pytest.mark.parametrize("system", ["every joint", "cardan chain"])
def test_hamiltonian_conserved_like_aba_energy(system):
    """Without dampers and efforts H(q, p) = ½ pᵀ v + V is conserved. At equal work — RK4, the same step
    h = 0.01, 5 s — the relative drift of H in the Poisson run is no worse than that of T + V in the ABA run
    (measured ratio 0.93 on the every-joint tree, 0.70 on the 5-body cardan chain; bound 3). (At equal DOP853
    tolerance the (q, p) run takes 25–35 % fewer steps, its error being controlled on p, and drifts more.)"""
    if system == "every joint":
        model = every_joint_tree()
        q0, v0 = _every_joint_state(model)
    else:
        model = cardan_chain(5)
        q0, v0 = _cardan_state(model)
    tree = mb.simulate(model, q0, v0, 5.0, method="RK4", h=0.01)
    for s in SOLVERS:
        res = mb.simulate(model, q0, v0, 5.0, method="RK4", h=0.01, formulation="poisson", solver=s)
        assert res.energy_drift() <= 3 * tree.energy_drift(), s


# ---- seed 002's own systems: cardan chains ------------------------------------------------------------------
@pytest.mark.parametrize("n", [5, 50])
def test_cardan_chain_solvers(n):
    """Chains of 5 and 50 bodies on cardan joints (§A.9): both solvers equal H⁻¹p (to 1e-12, or 1e-15·cond(H)
    as in ``test_solvers_equal_dense_solve``: a 50-link chain folded at random is ill-conditioned) and give the
    same ṗ; the chain hangs at rest at q = 0 (ṗ = 0: gravity along the links)."""
    model = cardan_chain(n)
    assert model.nv == 2 * n and model.nbodies == n
    rng = np.random.default_rng(n)
    q = rng.uniform(-1.0, 1.0, model.nq)
    p = rng.uniform(-1.0, 1.0, model.nv)
    H = crba(model, q)
    ref = np.linalg.solve(H, p)
    rel = max(1e-12, 1e-15 * np.linalg.cond(H))
    rates = []
    for s in SOLVERS:
        assert np.abs(velocity(model, q, p, s) - ref).max() <= rel * np.abs(ref).max()
        rates.append(_rhs(model, q, p, s)[model.nq:])
    # ṗ is quadratic in v: twice its relative error
    np.testing.assert_allclose(rates[0], rates[1], rtol=0, atol=2 * rel * np.abs(rates[0]).max())
    assert np.abs(_rhs(model, model.neutral(), np.zeros(model.nv))).max() <= 1e-12


def test_cardan_chain_trajectory_and_stormer6():
    """The 5-body cardan chain, 5 s: Poisson (DOP853, 1e-13) equals ABA to 1e-10 (measured 2.0e-12 in q,
    3.1e-11 in v). With the paper's 6th-order Störmer-type method (STORMER6, h = 0.02) |H − H0| stays bounded
    over 20 s (measured max 1.7e-7 in the first half, 2.2e-7 in the second), whereas RK4 with the tree
    formulation at the same step loses energy steadily (1.6e-3, then 3.2e-3): no drift means the second half
    is not much worse than the first. (STORMER6's accuracy: ``test_stormer6_coefficients_and_order``.)"""
    model = cardan_chain(5)
    q0, v0 = _cardan_state(model)
    tree, runs = _compare_with_tree(model, q0, v0)
    for s, res in runs.items():
        assert np.abs(res.q - tree.q).max() <= 1e-10, s
        assert np.abs(res.v - tree.v).max() <= 1e-10, s
    sv = mb.simulate(model, q0, v0, 20.0, method="STORMER6", h=0.02, formulation="poisson", n_out=1001)
    e = np.abs(sv.energy["total"] - sv.energy["total"][0])
    rk4 = mb.simulate(model, q0, v0, 20.0, method="RK4", h=0.02, n_out=1001)
    e4 = np.abs(rk4.energy["total"] - rk4.energy["total"][0])
    assert e[500:].max() <= 3 * e[:500].max()
    assert e4[500:].max() >= 1.5 * e4[:500].max()
    assert e.max() <= 1e-2 * e4.max()


# ---- STORMER6 ------------------------------------------------------------------------------------------------
def test_stormer6_coefficients_and_order():
    """Kahan & Li's s9odr6a: symmetric, Σγ = 1, Σγ³ = Σγ⁵ = 0 (necessary order conditions of a symmetric
    composition of order 6, GNI §V.3.2). The measured order on a cardan chain, errors at t = 1 s against
    DOP853 (rtol 1e-13) for h = 0.025, 0.0125, 0.00625: 2.6e-7, 4.1e-9, 6.4e-11, i.e. orders 6.003 and 6.0004
    (h = 0.1 and 0.05 are not yet asymptotic: 6.76, 5.70)."""
    g = np.array(KAHAN_LI_S9ODR6)
    assert np.array_equal(g, g[::-1])
    assert abs(g.sum() - 1.0) <= 4e-16
    assert abs((g ** 3).sum()) <= 1e-15 and abs((g ** 5).sum()) <= 1e-15
    model = cardan_chain(3)
    q0 = np.array([0.3, -0.2, 0.1, 0.4, -0.3, 0.2])
    ref = mb.simulate(model, q0, None, 1.0, rtol=1e-13, atol=1e-13, n_out=2).q[-1]
    errors = [np.abs(mb.simulate(model, q0, None, 1.0, method="STORMER6", h=h, formulation="poisson",
                                 n_out=2).q[-1] - ref).max() for h in (0.025, 0.0125, 0.00625)]
    orders = np.log2(np.array(errors[:-1]) / errors[1:])
    assert np.all((orders >= 5.8) & (orders <= 6.2)), orders


def test_stormer6_python_path_matches_compiled():
    """A torque callback runs the Python twin of the STORMER6 loop (``fixed_step.rk_fixed_python``): the same
    scheme, so the same states up to round-off."""
    model = cardan_chain(3)
    q0 = np.array([0.3, -0.2, 0.1, 0.4, -0.3, 0.2])
    tau = np.linspace(-0.5, 0.5, model.nv)
    kw = dict(method="STORMER6", h=0.05, formulation="poisson", n_out=11)
    compiled = mb.simulate(model, q0, None, 0.5, tau=tau, **kw)
    python = mb.simulate(model, q0, None, 0.5, tau=lambda t, q, v: tau, **kw)
    assert compiled.info["path"] == "compiled" and python.info["path"] == "python"
    np.testing.assert_allclose(python.q, compiled.q, rtol=0, atol=1e-13)
    np.testing.assert_allclose(python.series["p"], compiled.series["p"], rtol=0, atol=1e-13)


@pytest.mark.parametrize("h, reason", [(0.15, "did not converge"), (1.0, "non-finite")])
def test_stormer6_divergence_is_an_integration_error(h, reason):
    """Steps far too large for the 5-body chain (its fixed-point iterations contract by ≈ 0.07 at h = 0.04):
    at h = 0.15 the iterations of the first step do not converge, at h = 1 the state overflows. Both are an
    IntegrationError carrying the partial result (here the initial state) and the reason."""
    model = cardan_chain(5)
    with pytest.raises(IntegrationError, match=reason) as err:
        mb.simulate(model, np.full(model.nq, 0.5), None, 10.0, method="STORMER6", h=h, formulation="poisson")
    assert len(err.value.result.t) == 1 and reason in err.value.reason


# ---- the Result and bad input -------------------------------------------------------------------------------
def test_result_keeps_impulses(tmp_path):
    model = cardan_chain(2)
    res = mb.simulate(model, np.full(4, 0.3), None, 0.1, method="RK4", h=0.01, formulation="poisson",
                      solver="cholesky")
    assert res.info["formulation"] == "poisson" and res.info["solver"] == "cholesky"
    assert res.info["nfev"] == 40
    assert res.series["p"].shape == (11, model.nv)
    for suffix in (".npz", ".csv"):
        back = Result.load(res.save(tmp_path / f"run{suffix}"))
        np.testing.assert_array_equal(back.series["p"], res.series["p"])


def test_refuses_loops_and_constraints():
    """A model the Poisson form cannot take raises ModelError naming the element, not a wrong answer."""
    with pytest.raises(ModelError, match="'poisson'.*cut joint 'cut'"):
        mb.simulate(loop_model(mb.Spherical()), None, None, 1.0, formulation="poisson")
    b = mb.ModelBuilder(name="constrained")
    b.add_body("rod", 1.0, com=(0.5, 0, 0), inertia=(0.01, 0.1, 0.1))
    b.add_joint("hinge", mb.Revolute(), "ground", "rod")

    b.add_constraint(mb.PointOnPlane("pin", "rod", point=(1, 0, 0), normal=(0, 1, 0)))
    with pytest.raises(ModelError, match="constraint 'pin'"):
        mb.simulate(b.build(), None, None, 1.0, formulation="poisson")
    with pytest.raises(ModelError, match="solver 'lu'.*sweep, cholesky"):
        mb.simulate(cardan_chain(2), None, None, 1.0, formulation="poisson", solver="lu")


def test_singular_joint_block_names_the_body():
    """A joint block AᵢᵀM*ᵢAᵢ that is singular at one configuration only (the builder refuses models that are
    singular at every configuration): a massless hub spins about z and carries, through a tilt hinge, a point mass
    that lies on the spin axis at tilt 0. There system (6) has no solution — a ModelError naming the body, from
    both solvers; away from tilt 0 the same model runs."""
    b = mb.ModelBuilder(name="bead")
    b.add_body("hub", 0.0, com=(0, 0, 0), inertia=np.zeros((3, 3)))
    b.add_body("bead", 1.0, com=(0, 0, 1), inertia=np.zeros((3, 3)))
    b.add_joint("spin", mb.Revolute((0, 0, 1)), "ground", "hub")
    b.add_joint("tilt", mb.Revolute((1, 0, 0)), "hub", "bead")
    model = b.build()
    for s in SOLVERS:
        with pytest.raises(ModelError, match="body 'hub'.*singular at this q"):
            mb.simulate(model, None, None, 1.0, formulation="poisson", solver=s)
        assert np.all(np.isfinite(mb.simulate(model, [0.0, 0.3], None, 0.01, formulation="poisson", solver=s).q))


def test_module_example():
    """The example in the formulation's docstring runs as written."""
    import doctest

    import multibody.formulations.poisson as poisson

    assert doctest.testmod(poisson).failed == 0
