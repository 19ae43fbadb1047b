"""Cartesian formulation (seed 001 ch. 2): constraint library, KKT solvers, tree LDLᵀ, reactions.

Reference claims are from the notes ../shared/reference/seed001-part1.md §5 ("Testable claims"),
numbered as there.
"""
import math

import numpy as np
import pytest

import multibody as mb
from multibody.errors import ConstraintError
from multibody.formulations.cartesian import (
    CartesianSystem, FixedJoint, HingeJoint, PlanarAngle, PlanarPointLine, PlanarPrismatic,
    PlanarRevolute, PointPlane, PrismaticJoint, RelativeRotation, SphericalJoint, cartesian_from_model,
    tree_ldlt_solve,
)
from multibody.integrate.adaptive import solve_adaptive
from multibody.model.rotations import quat_to_matrix


def _random_rot(rng):
    q = rng.normal(size=4)
    return quat_to_matrix(q / np.linalg.norm(q))


def _dense(Q):
    return Q if isinstance(Q, np.ndarray) else Q.toarray()


def _spatial_pair(rng, joint_factory):
    s = CartesianSystem(dim=3, gravity=(0, -9.81, 0))
    for name in ("a", "b"):
        I = np.diag(rng.uniform(0.5, 2.0, 3))
        s.add_body(name, mass=rng.uniform(0.5, 2.0), inertia=I,
                   position=(rng.normal(size=3), _random_rot(rng)),
                   velocity=(rng.normal(size=3), rng.normal(size=3)))
    s.add_joint(joint_factory(rng))
    return s


def _planar_pair(rng, joint_factory):
    s = CartesianSystem(dim=2)
    for name in ("a", "b"):
        s.add_body(name, mass=rng.uniform(0.5, 2.0), inertia=rng.uniform(0.1, 1.0),
                   position=rng.normal(size=3), velocity=rng.normal(size=3))
    s.add_joint(joint_factory(rng))
    return s


SPATIAL = {
    "point-plane": lambda r: PointPlane("j", "a", "b", r.normal(size=3), r.normal(size=3), r.normal(size=3)),
    "relative-rotation": lambda r: RelativeRotation("j", "a", "b", r.normal(size=3), _random_rot(r)),
    "spherical": lambda r: SphericalJoint("j", "a", "b", r.normal(size=3), r.normal(size=3)),
    "hinge": lambda r: HingeJoint("j", "a", "b", r.normal(size=3), r.normal(size=3), r.normal(size=3), r.normal(size=3)),
    "prismatic": lambda r: PrismaticJoint("j", "a", "b", r.normal(size=3), r.normal(size=3), r.normal(size=3)),
    "fixed": lambda r: FixedJoint("j", "a", "b", r.normal(size=3), r.normal(size=3)),
    "to-ground": lambda r: HingeJoint("j", "ground", "b", r.normal(size=3), r.normal(size=3), r.normal(size=3), r.normal(size=3)),
}
PLANAR = {
    "point-line": lambda r: PlanarPointLine("j", "a", "b", r.normal(size=2), r.normal(size=2), r.normal(size=2)),
    "revolute": lambda r: PlanarRevolute("j", "a", "b", r.normal(size=2), r.normal(size=2)),
    "angle": lambda r: PlanarAngle("j", "a", "b", 0.3),
    "prismatic": lambda r: PlanarPrismatic("j", "a", "b", r.normal(size=2), r.normal(size=2), r.normal(size=2)),
    "to-ground": lambda r: PlanarRevolute("j", "ground", "b", r.normal(size=2), r.normal(size=2)),
}


def _check_identities(s, rng):
    """d/dt φ = Q V and d²/dt² φ = Q Ẍ − b along x(t) = x ⊕ (V t + Ẍ t²/2) (claims 16–18)."""
    s.finalize()
    x, V = s.x0, s.v0
    acc = rng.normal(size=s.nv)
    Q, b, phi = s._assemble(x, V)
    Q = _dense(Q)

    def ph(t):
        return s._assemble(s.retract(x, V * t + 0.5 * acc * t * t), None, need_b=False)[2]

    h = 1e-4
    d1 = (ph(h) - ph(-h)) / (2 * h)
    d2 = (ph(h) - 2 * ph(0.0) + ph(-h)) / h ** 2
    assert np.allclose(d1, Q @ V, rtol=0, atol=1e-6 * (1 + np.abs(d1).max()))
    assert np.allclose(d2, Q @ acc - b, rtol=0, atol=1e-5 * (1 + np.abs(d2).max()))


@pytest.mark.parametrize("kind", sorted(SPATIAL))
def test_spatial_constraint_rows_match_finite_differences(kind):
    """Book eqs. 2.22, 2.29, 2.44, 2.46: Q_i Ẍ_i + Q_j Ẍ_j − b is the second derivative of the
    position-level residual (seed 001 part 1, testable claims 16, 17)."""
    rng = np.random.default_rng(1)
    s = _spatial_pair(rng, SPATIAL[kind])
    # rotation residuals (hinge alignment, locked orientation) have the book's Q as their derivative
    # on the constraint manifold: assemble the pair there first (Newton projection)
    jt = s.joints[0]
    if hasattr(jt, "R0"):   # lock the relative orientation the bodies have now (R_err = E)
        jt.R0 = quat_to_matrix(s.bodies[0].x0[3:]).T @ quat_to_matrix(s.bodies[1].x0[3:])
    x, v = s.consistent_initial()
    for k, b in enumerate(s.bodies):
        b.x0, b.v0 = x[7 * k: 7 * k + 7], v[6 * k: 6 * k + 6]
    s._final = False
    _check_identities(s, rng)


@pytest.mark.parametrize("kind", sorted(PLANAR))
def test_planar_constraint_rows_match_finite_differences(kind):
    """Book eq. 2.43 and 2.32 (planar point–line and relative angle), testable claim 18."""
    rng = np.random.default_rng(2)
    _check_identities(_planar_pair(rng, PLANAR[kind]), rng)


def test_dof_counts():
    """Claim 14: spherical removes 3, hinge ("cylindrical") 5 of 12; planar revolute 2 of 6."""
    rng = np.random.default_rng(3)
    for kind, m in (("spherical", 3), ("hinge", 5), ("prismatic", 5), ("point-plane", 1), ("fixed", 6)):
        s = _spatial_pair(rng, SPATIAL[kind])
        s.finalize()
        assert s.nc == m and np.linalg.matrix_rank(_dense(s.constraint_jacobian(s.x0))) == m
    s = _planar_pair(rng, PLANAR["revolute"])
    s.finalize()
    assert s.nc == 2 and s.nv == 6


def test_reactions_are_q_transpose_lambda_equal_and_opposite():
    """Claim 20: point–plane reactions are equal and opposite forces along A_i n; moments ρ × R."""
    rng = np.random.default_rng(4)
    s = _spatial_pair(rng, SPATIAL["spherical"])
    x, V = s.consistent_initial()
    R = s.reactions(0.0, x, V)["j"]
    (na, ga), (nb_, gb) = R
    assert na == "a" and nb_ == "b"
    assert np.allclose(ga[:3], -gb[:3], rtol=0, atol=1e-10 * np.abs(ga).max())
    # moment on b (body axes) = ρ_jb × (A_bᵀ F_b)
    Ab = quat_to_matrix(x[10:14])
    assert np.allclose(gb[3:], np.cross(s.joints[0].rho, Ab.T @ gb[:3]), rtol=0, atol=1e-10 * np.abs(gb).max())
    # rotation constraint: no force, equal and opposite moments
    s = _spatial_pair(rng, SPATIAL["relative-rotation"])
    x, V = s.x0, s.v0
    (_, ga), (_, gb) = s.reactions(0.0, x, V)["j"]
    Aa, Ab = quat_to_matrix(x[3:7]), quat_to_matrix(x[10:14])
    assert np.allclose(ga[:3], 0, rtol=0, atol=1e-12 * np.abs(ga).max())
    assert np.allclose(gb[:3], 0, rtol=0, atol=1e-12 * np.abs(gb).max())
    assert np.allclose(Aa @ ga[3:], -(Ab @ gb[3:]), rtol=0, atol=1e-10 * np.abs(ga).max())


def _chain(n, dim=2, solver="auto", seed=5):
    """A planar n-pendulum (tree) with random geometry; one joint to the ground."""
    rng = np.random.default_rng(seed)
    s = CartesianSystem(dim=dim, solver=solver)
    prev, tip = "ground", np.zeros(2 if dim == 2 else 3)
    for k in range(n):
        L = rng.uniform(0.5, 1.5)
        if dim == 2:
            s.add_body(f"b{k}", 1.0, L * L / 12, position=(0, 0, 0), velocity=rng.normal(size=3))
            s.add_joint(PlanarRevolute(f"j{k}", prev, f"b{k}", tip, (-L / 2, 0)))
            tip = np.array([L / 2, 0])
        else:
            s.add_body(f"b{k}", 1.0, np.diag([0.01, L * L / 12, L * L / 12]), position=(np.zeros(3), np.eye(3)),
                       velocity=(rng.normal(size=3), rng.normal(size=3)))
            s.add_joint(SphericalJoint(f"j{k}", prev, f"b{k}", tip, (-L / 2, 0, 0)))
            tip = np.array([L / 2, 0, 0])
        prev = f"b{k}"
    return s


@pytest.mark.parametrize("dim", [2, 3])
def test_tree_ldlt_equals_dense_solve(dim):
    """Claim 27: the tree-ordered block LDLᵀ gives the dense solution (seed 001 §2.7, eqs. 2.55–2.61)."""
    s = _chain(6, dim)
    x, V = s.consistent_initial()
    assert s.tree is not None and s._solver == "tree"
    Q, b, _ = s._assemble(x, V)
    F = s.applied_forces(0.0, x, V)
    rhs = np.concatenate([F, b])
    K = _dense(s._kkt(Q)).copy()
    assert np.allclose(tree_ldlt_solve(s, Q, rhs), np.linalg.solve(K, rhs), rtol=1e-11, atol=1e-11)


def test_tree_ldlt_has_no_fill_in():
    """Claim 27/28: with children before parents the block factor has nonzeros only where H has them."""
    s = _chain(5, 2)
    s.finalize()
    tr = s.tree
    for v, p in enumerate(tr["parent"]):
        if p >= 0:  # every L block couples a vertex to its parent, and they are adjacent in H
            assert (v < s.nb) != (p < s.nb)   # bodies only meet joints: a bipartite tree, no new blocks


def test_all_solvers_agree_on_the_kkt_system():
    """Claim 24: Schur complement (eqs. 2.52–2.54) = full KKT solve (eq. 2.49) = sparse = tree."""
    base = _chain(5, 3, "dense")
    x, V = base.consistent_initial()
    ref = base.accelerations(0.0, x, V)
    for solver in ("schur", "sparse", "tree", "robust"):
        s = _chain(5, 3, solver)
        a, lam = s.accelerations(0.0, x, V)
        assert np.allclose(a, ref[0], rtol=1e-9, atol=1e-9), solver
        assert np.allclose(lam, ref[1], rtol=1e-8, atol=1e-8), solver


def test_single_pendulum_and_free_body():
    """A rod pinned at its end: φ̈ = −(3 g / 2L) cos φ; a free body: Jω̇ = −ω×Jω (claim 23)."""
    s = CartesianSystem(dim=2, gravity=(0, -9.81))
    s.add_body("rod", 2.0, 2.0 * 0.8 ** 2 / 12, position=(0.4 * math.cos(0.3), 0.4 * math.sin(0.3), 0.3))
    s.add_joint(PlanarRevolute("pin", "ground", "rod", (0, 0), (-0.4, 0)))
    a, lam = s.accelerations(0.0, s.x0, s.v0)
    assert a[2] == pytest.approx(-1.5 * 9.81 / 0.8 * math.cos(0.3), rel=1e-12)
    s = CartesianSystem(dim=3, gravity=(0, 0, 0))
    J = np.diag([1.0, 2.0, 3.0])
    w = np.array([0.3, -1.0, 2.0])
    s.add_body("free", 1.0, J, position=(np.zeros(3), np.eye(3)), velocity=(np.zeros(3), w))
    a, _ = s.accelerations(0.0, s.x0, s.v0)
    assert np.allclose(a[3:], np.linalg.solve(J, -np.cross(w, J @ w)), rtol=0, atol=1e-14)    # Euler's equations
    run = solve_adaptive(s.rhs, (0.0, 2.0), np.concatenate([s.x0, s.v0]), rtol=1e-11, atol=1e-11,
                         t_eval=np.linspace(0.0, 2.0, 5))
    assert np.ptp([s.energy(y[:s.nq], y[s.nq:]) for y in run.y]) < 1e-10


def _bob_on_a_rod(jacobian):
    """A bob (1 kg) moving in the vertical xy plane, held 1 m from the origin by a user constraint
    f(q) = x² + y² − 1 = 0 of its planar-joint coordinates (a massless rod)."""
    b = mb.ModelBuilder(gravity=(0, -9.81, 0))
    b.add_body("bob", 1.0, inertia=(0.01, 0.01, 0.01))
    b.add_joint("plane", mb.Planar(), "ground", "bob")
    jac = (lambda q, t: np.array([[2 * q[0], 2 * q[1], 0.0]])) if jacobian else None
    b.add_constraint(mb.UserConstraint("rod", lambda q, t: np.array([q[0] ** 2 + q[1] ** 2 - 1.0]), jacobian=jac))
    return b.build()


@pytest.mark.parametrize("jacobian", [True, False])
def test_user_constraint_distance(jacobian):
    """A user constraint f(q) = x² + y² − 1 = 0 (given Jacobian, or complex-step derivatives) acts like a
    massless rod in the Cartesian formulation (rows carried over through Q = G J⁺) and in tree coordinates:
    horizontal at rest the bob falls freely; on the circle at speed 2 its normal acceleration is −v²/L and its
    tangential one the tangential gravity."""
    from multibody.formulations.constrained import ConstrainedTree

    model = _bob_on_a_rod(jacobian)
    for q, v in ((np.array([1.0, 0.0, 0.0]), np.zeros(3)), (np.array([0.6, -0.8, 0.0]), np.array([1.6, 1.2, 0.0]))):
        s, emb = cartesian_from_model(model, q, v)
        a_cart, _ = s.accelerations(0.0, s.x0, s.v0)
        a_tree, _ = ConstrainedTree(model).accelerations(0.0, q, v)
        for a in (a_cart[:2], a_tree[:2]):
            if not v.any():
                assert np.allclose(a, [0.0, -9.81], rtol=0, atol=1e-12)
            else:
                n, tang = q[:2], np.array([0.8, 0.6])
                assert float(a @ n) == pytest.approx(-4.0, abs=1e-9)
                assert float(a @ tang) == pytest.approx(-9.81 * 0.6, abs=1e-9)


def test_redundant_constraints_are_solved_by_least_squares():
    """Claim 25: dependent constraints make H singular; the robust path still gives the accelerations."""
    s = CartesianSystem(dim=2)
    s.add_body("rod", 1.0, 1 / 12, position=(0.5, 0.0, 0.0))
    s.add_joint(PlanarRevolute("pin", "ground", "rod", (0, 0), (-0.5, 0)))
    s.add_joint(PlanarPointLine("dup", "ground", "rod", (0, 0), (0, 1), (-0.5, 0)))  # repeats a row
    s.finalize()
    assert s.redundant and s._solver == "al"   # augmented Lagrangian: never singular
    a, lam = s.accelerations(0.0, s.x0, s.v0)
    assert a[2] == pytest.approx(-1.5 * 9.81, rel=1e-10)


def test_inconsistent_initial_positions_raise():
    s = CartesianSystem(dim=2)
    s.add_body("rod", 1.0, 1 / 12, position=(0.5, 0.0, 0.0))
    s.add_joint(PlanarRevolute("pin", "ground", "rod", (0, 0), (-0.5, 0)))
    s.add_joint(PlanarRevolute("far", "ground", "rod", (5.0, 0), (0.5, 0)))   # cannot be assembled
    with pytest.raises(ConstraintError) as exc:
        s.consistent_initial()
    assert "far" in str(exc.value) or "pin" in str(exc.value)


@pytest.mark.parametrize("method", ["DOP853", "RK4"])
def test_joint_angles_follow_whole_turns_between_sparse_outputs(method):
    """A rod pinned at its end, started at 12 rad/s (24 J of kinetic energy against 9.81 J to the top), turns
    about four times in 2 s. The Cartesian formulation reads its hinge angle from the rod's placement, defined
    up to 2π; it follows the accepted steps, so 3 outputs give the angles of 201 outputs at their common times
    (the same steps: equal to round-off, 1e-12 rad at |θ| <= 24) and of the tree formulation, whose coordinate
    is the angle itself (to tell the branch: 0.01 rad, above RK4's error at h = 0.01, ~ (ωh)⁵/120 per step over
    200 steps = 4e-5 rad, and DOP853's at rtol 1e-10; far below the 2π that an unwrapping between outputs alone
    loses)."""
    b = mb.ModelBuilder(gravity=(0, -9.81, 0))
    b.add_body("rod", 1.0, com=(0.5, 0, 0), inertia=[1e-6, 1 / 12, 1 / 12])
    b.add_joint("pin", mb.Revolute(axis=(0, 0, 1)), "ground", "rod")
    model = b.build()
    kw = dict(rtol=1e-10, atol=1e-10) if method == "DOP853" else dict(h=0.01)
    sparse, dense = (mb.simulate(model, [0.0], [12.0], t_end=2.0, formulation="cartesian", method=method,
                                 n_out=n, **kw) for n in (3, 201))
    tree = mb.simulate(model, [0.0], [12.0], t_end=2.0, method=method, n_out=3, **kw)
    assert tree.q[-1, 0] > 3 * 2 * math.pi                      # several whole turns between the outputs
    np.testing.assert_allclose(sparse.t, dense.t[::100], rtol=0, atol=0)
    np.testing.assert_allclose(sparse.q, dense.q[::100], rtol=0, atol=1e-12)
    np.testing.assert_allclose(sparse.q, tree.q, rtol=0, atol=0.01)
