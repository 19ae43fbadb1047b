"""General joints given by their own kinematics (seed 001 §3.4.2, eqs. 3.101–3.107; notes part 2 §8.2).

The built-in joints written as a rotation R(q) and a joint vector z(q) must give the built-in joints' dynamics;
a rheonomic joint (R, z depending on t) must give the closed-form equations of motion derived by hand.

Tolerances. The general and the built-in joints run the same recursions; only S, R_J and the bias are formed
by other formulas (sympy's derivatives against the kernels' closed forms), which agree to a few units of
roundoff. Over the ~100 flops per body and the 3 bodies here the results can differ by about
3 · 100 · 2.2e-16 ≈ 7e-14 of their scale; 1e-12 of the scale bounds it with a margin of >10.
"""
import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation

import multibody as mb
from multibody.errors import ModelError

TOL = 1e-12


def _rot(axis, angle):
    """sympy rotation about the unit ``axis`` (Rodrigues), the convention of ``mb.rotation_about``."""
    a = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    K = sp.Matrix([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return sp.eye(3) + sp.sin(angle) * K + (1 - sp.cos(angle)) * K * K


def _three_body(joint, rng=7):
    """ground –revolute– a –``joint``– b –prismatic– c, with placements and a child placement on b."""
    r = np.random.default_rng(rng)
    b = mb.ModelBuilder(gravity=(0.3, -1.1, -9.81), name="three")
    for name in "abc":
        m = r.uniform(0.5, 2.0)
        d = r.uniform(0.05, 0.2, 3)
        b.add_body(name, mass=m, com=r.uniform(-0.4, 0.4, 3), inertia=np.diag([d[0] + d[1], d[1] + d[2], d[0] + d[2]]))
    b.add_joint("ja", mb.Revolute(axis=(0.2, 1.0, 0.1)), "ground", "a",
                placement=(mb.rotation_about((1, 0, 1), 0.3), (0.1, 0.0, 0.2)))
    b.add_joint("jb", joint, "a", "b", placement=(mb.rotation_about((0, 1, 1), -0.7), (0.3, -0.2, -0.6)),
                child_placement=(mb.rotation_about((1, 2, 3), 0.5), (0.05, 0.1, 0.3)))
    b.add_joint("jc", mb.Prismatic(axis=(0.0, 0.6, 0.8)), "b", "c", placement=(np.eye(3), (0.0, 0.2, -0.4)))
    return b.build()


def _scale_err(x, ref):
    return np.max(np.abs(np.asarray(x) - ref)) / max(1.0, np.max(np.abs(ref)))


q1, q2, q3 = sp.symbols("q1 q2 q3")
AXIS1, AXIS2 = np.array([0.3, -0.5, 0.8]), np.array([0.6, 0.8, 0.0])
#: (built-in joint, the same joint as R(q), z(q))
EQUIVALENT = {
    "revolute": (mb.Revolute(axis=AXIS1), mb.GeneralJoint([q1], rotation=_rot(AXIS1, q1))),
    "prismatic": (mb.Prismatic(axis=AXIS1),
                  mb.GeneralJoint([q1], translation=sp.Matrix(AXIS1 / np.linalg.norm(AXIS1)) * q1)),
    "universal": (mb.Universal(AXIS1, AXIS2), mb.GeneralJoint([q1, q2], rotation=_rot(AXIS1, q1) * _rot(AXIS2, q2))),
    "cylindrical": (mb.Cylindrical(axis=AXIS1),
                    mb.GeneralJoint([q1, q2], rotation=_rot(AXIS1, q1),
                                    translation=sp.Matrix(AXIS1 / np.linalg.norm(AXIS1)) * q2)),
}


@pytest.mark.parametrize("kind", sorted(EQUIVALENT))
def test_builtin_joints_as_general_joints(kind):
    """Revolute, Prismatic, Universal and Cylindrical written as R(q), z(q): aba, rnea and crba agree with the
    built-in joints at random states (same coordinates, same velocities)."""
    builtin, general = EQUIVALENT[kind]
    m1, m2 = _three_body(builtin), _three_body(general)
    assert (m1.nq, m1.nv) == (m2.nq, m2.nv)
    rng = np.random.default_rng(11)
    for _ in range(5):
        q, v, x = rng.uniform(-2, 2, m1.nq), rng.normal(size=m1.nv), rng.normal(size=m1.nv)
        assert _scale_err(mb.aba(m2, q, v, x), mb.aba(m1, q, v, x)) < TOL
        assert _scale_err(mb.rnea(m2, q, v, x), mb.rnea(m1, q, v, x)) < TOL
        assert _scale_err(mb.crba(m2, q), mb.crba(m1, q)) < TOL
        assert abs(mb.energy(m2, q, v)[0] - mb.energy(m1, q, v)[0]) < TOL * max(1.0, mb.energy(m1, q, v)[0])


def _euler():
    """R = Rz(q1) Ry(q2) Rx(q3), and the map J(φ) of the Euler rates to the child-frame angular velocity,
    ω = (Rᵀ Ṙ)^∨ = J φ̇ (derived here in the child frame, independently of the joint's parent-frame p_ak), with
    its rate J̇ = Σ_l ∂J/∂φ_l φ̇_l."""
    R = _rot((0, 0, 1), q1) * _rot((0, 1, 0), q2) * _rot((1, 0, 0), q3)
    phi = (q1, q2, q3)
    rates = sp.symbols("r1:4")
    cols = []
    for qk in phi:
        W = R.T * R.diff(qk)
        cols.append(sp.Matrix([W[2, 1], W[0, 2], W[1, 0]]))
    J = sp.Matrix.hstack(*cols)
    Jdot = sum((J.diff(ql) * rl for ql, rl in zip(phi, rates)), sp.zeros(3, 3))
    return R, sp.lambdify([phi], R), sp.lambdify([phi], J), sp.lambdify([phi, rates], Jdot)


def test_spherical_as_three_euler_angles():
    """A Spherical joint written as three Euler angles reproduces the built-in (quaternion) Spherical joint
    through the equivalent state: q: quaternion of R(φ); v = P v_φ, q̈ = P a_φ + Ṗ v_φ with P = diag(1, J, 1).
    Then τ_φ = Pᵀ τ, M_φ = Pᵀ M P and q̈_φ = P⁻¹ (aba(q, P v_φ, P⁻ᵀ τ_φ) − Ṗ v_φ)."""
    R, fR, fJ, fJd = _euler()
    m1 = _three_body(mb.Spherical())
    m2 = _three_body(mb.GeneralJoint([q1, q2, q3], rotation=R))
    rng = np.random.default_rng(5)
    for _ in range(5):
        phi = np.array([rng.uniform(-3, 3), rng.uniform(-1.2, 1.2), rng.uniform(-3, 3)])  # away from gimbal lock
        qa, qc = rng.uniform(-2, 2, 2)
        v, x = rng.normal(size=5), rng.normal(size=5)
        w, xq, yq, zq = np.roll(Rotation.from_matrix(np.asarray(fR(phi), dtype=float)).as_quat(), 1)
        q_sph = np.array([qa, w, xq, yq, zq, qc])
        q_gen = np.array([qa, *phi, qc])
        P = np.eye(5)
        P[1:4, 1:4] = fJ(phi)
        Pd = np.zeros((5, 5))
        Pd[1:4, 1:4] = fJd(phi, v[1:4])
        tau_sph = mb.rnea(m1, q_sph, P @ v, P @ x + Pd @ v)
        assert _scale_err(mb.rnea(m2, q_gen, v, x), P.T @ tau_sph) < TOL
        M = mb.crba(m1, q_sph)
        assert _scale_err(mb.crba(m2, q_gen), P.T @ M @ P) < TOL
        qdd = np.linalg.solve(P, mb.aba(m1, q_sph, P @ v, np.linalg.solve(P.T, x)) - Pd @ v)
        assert _scale_err(mb.aba(m2, q_gen, v, x), qdd) < TOL * np.linalg.cond(P)


# ---- rheonomic joints ----------------------------------------------------------------------------------------
L0, LA, LW = 1.0, 0.25, 2.0          # l(t) = L0 + LA sin(LW t)
MASS, JYY, G = 1.5, 0.02, 9.81
t_sym, th = sp.symbols("t theta")


def _length(t):
    return L0 + LA * np.sin(LW * t), LA * LW * np.cos(LW * t)


def _variable_pendulum():
    """A body of mass MASS (inertia JYY about the y axis through its centre) on a massless rod of prescribed
    length l(t), hinged about y: R = rot(y, θ), z = R (0, 0, −l(t))."""
    Ry = _rot((0, 1, 0), th)
    l_t = L0 + LA * sp.sin(LW * t_sym)
    joint = mb.GeneralJoint([th], rotation=Ry, translation=Ry * sp.Matrix([0, 0, -l_t]), time=t_sym)
    b = mb.ModelBuilder(gravity=(0, 0, -G), name="variable_pendulum")
    b.add_body("bob", mass=MASS, inertia=np.diag([JYY, JYY, JYY]))
    b.add_joint("rod", joint, "ground", "bob")
    return b.build()


def _closed_form_qdd(t, theta, omega):
    """From T = ½ m (l̇² + l² θ̇²) + ½ J θ̇², V = −m g l cos θ (Lagrange, by hand):
    (m l² + J) θ̈ + 2 m l l̇ θ̇ + m g l sin θ = 0 (for J = 0: l θ̈ + 2 l̇ θ̇ + g sin θ = 0)."""
    l, ld = _length(t)
    return -(2 * MASS * l * ld * omega + MASS * G * l * np.sin(theta)) / (MASS * l * l + JYY)


def test_variable_length_pendulum_right_hand_side():
    """aba of the rheonomic joint at (θ, θ̇, t) is the closed-form θ̈; rnea and crba are consistent with it."""
    model = _variable_pendulum()
    rng = np.random.default_rng(3)
    for _ in range(10):
        t, theta, omega = rng.uniform(0, 5), rng.uniform(-3, 3), rng.normal()
        qdd = mb.aba(model, np.array([theta]), np.array([omega]), np.zeros(1), t=t)[0]
        ref = _closed_form_qdd(t, theta, omega)
        assert abs(qdd - ref) < TOL * max(1.0, abs(ref))
        l, _ = _length(t)
        assert abs(mb.crba(model, np.array([theta]), t=t)[0, 0] - (MASS * l * l + JYY)) < TOL * 10
        assert abs(mb.rnea(model, np.array([theta]), np.array([omega]), np.array([ref]), t=t)[0]) < TOL * 10


def test_variable_length_pendulum_simulation():
    """simulate (tree formulation, fixed-step RK4) of the rheonomic pendulum matches the closed-form equation
    integrated to 1e-13 (DOP853). RK4's global error is C h⁴; Richardson's estimate from the steps h and h/2,
    |x_h − x_{h/2}| · 16/15, is asymptotically exact; the test allows 4 times it."""
    model = _variable_pendulum()
    q0, v0, t_end = np.array([0.9]), np.array([-0.3]), 4.0
    ref = solve_ivp(lambda t, y: [y[1], _closed_form_qdd(t, y[0], y[1])], (0.0, t_end), [q0[0], v0[0]],
                    method="DOP853", rtol=1e-13, atol=1e-13, dense_output=True)
    t_eval = np.linspace(0.0, t_end, 41)
    runs = {h: mb.simulate(model, q0, v0, t_end=t_end, method="RK4", h=h, t_eval=t_eval) for h in (0.01, 0.005)}
    res = runs[0.01]
    assert res.info["path"] == "python"
    fine = runs[0.005]
    assert np.array_equal(res.t, fine.t)
    est = 16.0 / 15.0 * np.max(np.abs(res.q[:, 0] - fine.q[:, 0]))
    err = np.max(np.abs(res.q[:, 0] - ref.sol(res.t)[0]))
    assert 0.0 < est < 1e-6
    assert err < 4.0 * est
    # the energy is not conserved (the rod's drive does work); it is reported at each sample's time
    T = res.energy["kinetic"]
    l, ld = _length(res.t)
    theta, omega = res.q[:, 0], res.v[:, 0]
    assert np.max(np.abs(T - (0.5 * MASS * (ld ** 2 + l ** 2 * omega ** 2) + 0.5 * JYY * omega ** 2))) < 1e-12 * 10
    assert np.max(np.abs(res.energy["potential"] + MASS * G * l * np.cos(theta))) < 1e-12 * 10


def test_rheonomic_rotation_matches_a_driven_chain():
    """A hinge θ about y on a turntable turned by the prescribed angle f(t) about z: R = rot(z, f(t)) rot(y, θ).
    Its rnea and aba equal those of the two-revolute chain with the first coordinate driven, q1 = f(t),
    q̇1 = f'(t), q̈1 = f''(t) (the terms p_a0 and ∂p/∂t of eqs. 3.104, 3.107)."""
    f = 0.7 * sp.sin(1.3 * t_sym) + 0.2 * t_sym
    ff = sp.lambdify(t_sym, [f, f.diff(t_sym), f.diff(t_sym, 2)])

    def build(first, second):
        b = mb.ModelBuilder(gravity=(0, 0, -9.81))
        if second is not None:
            b.add_body("table", mass=1.0, inertia=np.diag([0.1, 0.1, 0.2]))
            b.add_joint("spin", first, "ground", "table", placement=(np.eye(3), (0.1, 0.2, 0.3)))
            first, parent, place = second, "table", (np.eye(3), (0.0, 0.0, 0.0))
        else:
            parent, place = "ground", (np.eye(3), (0.1, 0.2, 0.3))
        b.add_body("arm", mass=0.8, com=(0.2, 0.1, -0.5), inertia=np.diag([0.05, 0.04, 0.03]))
        b.add_joint("hinge", first, parent, "arm", placement=place)
        return b.build()

    general = build(mb.GeneralJoint([th], rotation=_rot((0, 0, 1), f) * _rot((0, 1, 0), th), time=t_sym), None)
    chain = build(mb.Revolute(axis=(0, 0, 1)), mb.Revolute(axis=(0, 1, 0)))
    rng = np.random.default_rng(9)
    for _ in range(5):
        t, theta, omega, acc = rng.uniform(0, 5), rng.uniform(-3, 3), rng.normal(), rng.normal()
        f0, f1, f2 = ff(t)
        q, v = np.array([f0, theta]), np.array([f1, omega])
        tau = mb.rnea(chain, q, v, np.array([f2, acc]))[1]
        assert abs(mb.rnea(general, np.array([theta]), np.array([omega]), np.array([acc]), t=t)[0] - tau) \
            < TOL * max(1.0, abs(tau))
        M = mb.crba(chain, q)
        b = mb.rnea(chain, q, v, np.array([f2, 0.0]))[1]      # everything but M22 θ̈
        qdd = (0.3 - b) / M[1, 1]
        assert abs(mb.aba(general, np.array([theta]), np.array([omega]), np.array([0.3]), t=t)[0] - qdd) \
            < TOL * max(1.0, abs(qdd))


# ---- validation ----------------------------------------------------------------------------------------------
def _add(joint):
    b = mb.ModelBuilder()
    b.add_body("a", mass=1.0)
    b.add_joint("my_joint", joint, "ground", "a")
    return b


@pytest.mark.parametrize("kwargs, words", [
    (dict(coordinates=[q1], rotation=sp.Matrix([[1, q1, 0], [0, 1, 0], [0, 0, 1]])), "proper rotation"),
    (dict(coordinates=[q1], rotation=sp.diag(1, 1, -1)), "proper rotation"),
    (dict(coordinates=[q1], rotation=sp.eye(2)), "3x3"),
    (dict(coordinates=[q1], translation=sp.Matrix([q1, 0])), "3-vector"),
    (dict(coordinates=["q1"], translation=sp.Matrix([q1, 0, 0])), "Symbols"),
    (dict(coordinates=[q1, q1], translation=sp.Matrix([q1, 0, 0])), "not distinct"),
    (dict(coordinates=[q1], translation=sp.Matrix([q1 * q2, 0, 0])), "only"),
    (dict(coordinates=[q1], translation=sp.Matrix([t_sym, 0, 0])), "only"),
    (dict(coordinates=[], translation=sp.Matrix([0, 0, 0])), "1 to 6"),
    (dict(coordinates=[q1], translation=sp.Matrix([q1, 0, 0]), time=q1), "time"),
])
def test_bad_general_joints_are_refused(kwargs, words):
    with pytest.raises(ModelError, match=words) as info:
        _add(mb.GeneralJoint(**kwargs))
    assert "my_joint" in str(info.value) and info.value.element == "joint 'my_joint'"


def test_general_joints_where_they_are_not_taken(tmp_path):
    """Methods without the general joints' fill step refuse them, naming the joint; batched calls loop."""
    model = _variable_pendulum()
    with pytest.raises(ModelError, match="'rod' is a GeneralJoint"):
        mb.simulate(model, t_end=0.1, formulation="constrained")
    with pytest.raises(ModelError, match="'rod' is a GeneralJoint"):
        mb.simulate_batch(model, np.zeros((2, 1)), t_end=0.1, h=0.01)
    with pytest.raises(ModelError, match="'rod' is a GeneralJoint"):
        mb.linearize(model, np.zeros(1), np.zeros(1))
    with pytest.raises(ModelError, match="'rod' is a GeneralJoint"):
        mb.save_model(model, tmp_path / "m.yaml")
    from multibody.kernels.configuration import motion_subspace

    with pytest.raises(ModelError, match="joint_kinematics"):
        motion_subspace(model.joints[1].joint, np.zeros(1))
    Q, V = np.array([[0.3], [0.5]]), np.array([[0.1], [-0.2]])
    out = mb.aba_batch(model, Q, V, np.zeros((2, 1)))
    assert np.array_equal(out[1], mb.aba(model, Q[1], V[1], np.zeros(1)))
    b = mb.ModelBuilder()
    b.add_body("a", mass=1.0)
    b.add_joint("j", mb.Revolute(), "ground", "a")
    b.add_joint("loop", mb.GeneralJoint([q1], rotation=_rot((0, 0, 1), q1)), "a", "ground",
                child_placement=mb.Placement())
    with pytest.raises(ModelError, match="'loop' is a GeneralJoint that closes a loop"):
        b.build()


def test_model_with_general_joints_pickles():
    """A model carries its compiled general-joint code as a cache only: pickling leaves it out, and the copy
    compiles (or loads) it again on first use (as a process of a parallel sweep would)."""
    import pickle

    model = _variable_pendulum()
    args = np.array([0.4]), np.array([0.2]), np.zeros(1)
    ref = mb.aba(model, *args, t=0.3)
    copy = pickle.loads(pickle.dumps(model))
    assert "_multibody_general_joints" not in copy.__dict__
    assert np.array_equal(mb.aba(copy, *args, t=0.3), ref)
