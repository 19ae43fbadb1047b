"""A ground (body 0) that moves in a prescribed way (seed 001 §3.1–3.2, the base terms of eqs. 3.26–3.30).

Checked against independent derivations: a pendulum on a horizontally shaken support and a physical pendulum on
a turntable against their Lagrange equations in the relative angle (integrated with the same fixed-step
method); rnea(aba(τ)) = τ and aba = M⁻¹(τ − bias) on random trees on a base that translates and turns about a
moving axis; the energy balance d(T + V)/dt = q̇ᵀτ + (power of the base) against a numerical derivative of the
energy; body 0's own placement, velocity and acceleration from ``forward_kinematics``; Kapitza's inverted
pendulum, which the shaking keeps upright, in a plot.
"""
import numpy as np
import pytest

import multibody as mb
from multibody.bench.dynamics import random_tree
from multibody.errors import ModelError
from multibody.model.rotations import rotation_about
from multibody.systems.pendulums import kapitza_pendulum

EPS = np.finfo(float).eps
E_X, E_Z = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0])


def general_base(t):
    """A base that translates and turns about an axis that itself turns (ω × ω̇ ≠ 0): R0 = Rz(φ1) Rx(φ2),
    ω0 = φ̇1 e_z + φ̇2 Rz e_x, ω̇0 = φ̈1 e_z + φ̈2 Rz e_x + φ̇2 φ̇1 e_z × Rz e_x (from Ṙ0 = ω̃0 R0)."""
    f1, f1d, f1dd = 0.7 * np.sin(1.3 * t) + 0.4 * t, 0.91 * np.cos(1.3 * t) + 0.4, -1.183 * np.sin(1.3 * t)
    f2, f2d, f2dd = 0.5 * np.cos(0.9 * t), -0.45 * np.sin(0.9 * t), -0.405 * np.cos(0.9 * t)
    Rz = rotation_about(E_Z, f1)
    ex = Rz @ E_X
    w = f1d * E_Z + f2d * ex
    al = f1dd * E_Z + f2dd * ex + f2d * f1d * np.cross(E_Z, ex)
    p = np.array([0.3 * np.sin(2 * t), 0.2 * np.cos(3 * t), 0.1 * t * t + 0.5])
    pd = np.array([0.6 * np.cos(2 * t), -0.6 * np.sin(3 * t), 0.2 * t])
    pdd = np.array([-1.2 * np.sin(2 * t), -1.8 * np.cos(3 * t), 0.2])
    return p, Rz @ rotation_about(E_X, f2), pd, w, pdd, al


def _richardson(f, x, h):
    """f'(x) by central differences with Richardson extrapolation (error O(h⁴)), and an estimate of its error:
    the difference from the same extrapolation with step 2h (16 times the O(h⁴) term)."""
    def central(k):
        return (f(x + k) - f(x - k)) / (2 * k)

    r1 = (4 * central(h / 2) - central(h)) / 3
    r2 = (4 * central(h) - central(2 * h)) / 3
    return r1, float(np.max(np.abs(r2 - r1)))


def test_general_base_derivatives_are_consistent():
    """The test's own base motion: ṗ0, p̈0, ω0 (Ṙ0 = ω̃0 R0) and ω̇0 agree with numerical derivatives (error
    O(h⁴) of the extrapolation, bounded a posteriori)."""
    for t in (0.0, 0.37, 1.9):
        p, R, pd, w, pdd, al = general_base(t)
        for val, fun in ((pd, lambda s: general_base(s)[0]), (pdd, lambda s: general_base(s)[2]),
                         (al, lambda s: general_base(s)[3])):
            d, err = _richardson(fun, t, 1e-2)
            assert np.max(np.abs(d - val)) <= 3 * err + 1e-10
        Rd, err = _richardson(lambda s: general_base(s)[1], t, 1e-2)
        W = Rd @ R.T
        assert np.max(np.abs(W + W.T)) <= 3 * np.max(err) + 1e-10
        assert np.allclose([W[2, 1], W[0, 2], W[1, 0]], w, rtol=0, atol=3 * np.max(err) + 1e-10)


# ---- closed forms -------------------------------------------------------------------------------------------
def _rk4(f, t0, x0, h, nsteps):
    """Classical RK4 with the step h (the method of ``simulate(method="RK4")``): the states at every step."""
    xs = [np.array(x0, dtype=float)]
    t = t0
    x = xs[0]
    for _ in range(nsteps):
        k1 = f(t, x)
        k2 = f(t + h / 2, x + h / 2 * k1)
        k3 = f(t + h / 2, x + h / 2 * k2)
        k4 = f(t + h, x + h * k3)
        x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t = t0 + h * (len(xs))
        xs.append(x)
    return np.array(xs)


def _compare_runs(model, f_closed, theta0, omega0, t_end, h):
    """simulate(RK4, h) of ``model`` against the same RK4 on the closed-form θ̈ = f_closed(t, θ, θ̇).

    The right-hand sides agree to D (checked first on random states). The two discrete runs then differ per
    step by δ ≤ h D + 10 ε |x| (the round-off of a step), and these differences propagate as a perturbation of
    the initial state does, amplified at most G times (G measured on the closed form with a perturbed initial
    state, the same steps): the bound is N δ G."""
    rng = np.random.default_rng(3)
    D = 0.0
    for _ in range(50):
        t, th, thd = rng.uniform(0, t_end), rng.uniform(-np.pi, np.pi), rng.uniform(-3, 3)
        a = mb.aba(model, np.array([th]), np.array([thd]), np.zeros(1), t=t)[0]
        ref = f_closed(t, th, thd)
        assert abs(a - ref) <= 200 * EPS * (1 + abs(ref))
        D = max(D, 200 * EPS * (1 + abs(ref)))
    n = int(round(t_end / h))
    res = mb.simulate(model, [theta0], [omega0], t_end, method="RK4", h=h, n_out=n + 1)

    def closed(x0):
        return _rk4(lambda t, x: np.array([x[1], f_closed(t, x[0], x[1])]), 0.0, x0, h, n)

    X = closed([theta0, omega0])
    d0 = 1e-7
    G = max(np.max(np.abs(closed([theta0 + d0 * e0, omega0 + d0 * e1]) - X)) / d0 for e0, e1 in ((1, 0), (0, 1)))
    assert np.allclose(res.t, h * np.arange(n + 1), rtol=0, atol=1e-12)
    bound = n * (h * D + 10 * EPS * np.max(np.abs(X))) * G
    assert bound < 1e-10
    err = max(np.max(np.abs(res.q[:, 0] - X[:, 0])), np.max(np.abs(res.v[:, 0] - X[:, 1])))
    assert err <= bound, (err, bound)
    return res, X


def test_pendulum_on_a_horizontally_shaken_support():
    """x0(t) = a cos Ωt along x; a physical pendulum (mass m, centre at distance l below the hinge, central
    inertia J about the hinge axis y) hinged on it. Lagrange in the relative angle θ (bob at
    (x0 − l sin θ, −l cos θ)): (J + m l²) θ̈ = m l (ẍ0 cos θ − g sin θ)."""
    g, m, l, J, a, W = 9.81, 1.3, 0.7, 0.05, 0.08, 6.0
    b = mb.ModelBuilder(gravity=(0, 0, -g), base_motion=mb.BaseMotion.harmonic((1, 0, 0), a, W))
    b.add_body("bob", mass=m, com=(0, 0, -l), inertia=np.diag([0.02, J, 0.03]))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="bob")
    model = b.build()

    def f(t, th, thd):
        x0dd = -a * W * W * np.cos(W * t)
        return m * l * (x0dd * np.cos(th) - g * np.sin(th)) / (J + m * l * l)

    res, X = _compare_runs(model, f, 0.4, 0.0, 2.0, 1e-3)
    # the support's shaking does work: the energy is not constant (it would be on a fixed support)
    E = res.energy["kinetic"] + res.energy["potential"]
    assert np.ptp(E) > 0.01 * np.max(np.abs(E))


def test_physical_pendulum_on_a_turntable():
    """The base turns at the constant rate Ω about the vertical z axis; the hinge, about the base's y axis, sits
    at (d, 0, 0) on it. Body angular velocity (body axes) (−Ω sin θ, θ̇, Ω cos θ); the centre at base
    coordinates (d − l sin θ, 0, −l cos θ) moves across the plane of the swing at Ω (d − l sin θ), so
    T = ½ m (l² θ̇² + Ω² (d − l sin θ)²) + ½ (Jx Ω² sin²θ + Jy θ̇² + Jz Ω² cos²θ), V = −m g l cos θ, and
    (m l² + Jy) θ̈ = −m l (g sin θ + Ω² (d − l sin θ) cos θ) + (Jx − Jz) Ω² sin θ cos θ
    (centrifugal terms; the Coriolis force is normal to the swing plane and does no work)."""
    g, m, l, d, Om = 9.81, 0.9, 0.6, 0.4, 2.5
    Jx, Jy, Jz = 0.05, 0.04, 0.02
    b = mb.ModelBuilder(gravity=(0, 0, -g), base_motion=mb.BaseMotion.rotation((0, 0, 1), Om, angle=0.3))
    b.add_body("bob", mass=m, com=(0, 0, -l), inertia=np.diag([Jx, Jy, Jz]))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="bob",
                placement=mb.Placement(translation=(d, 0, 0)))
    model = b.build()

    def f(t, th, thd):
        s, c = np.sin(th), np.cos(th)
        return (-m * l * (g * s + Om * Om * (d - l * s) * c) + (Jx - Jz) * Om * Om * s * c) / (m * l * l + Jy)

    res, X = _compare_runs(model, f, 0.2, 0.5, 2.0, 1e-3)
    # the steady angle leans outwards: the mean angle is negative (the bob moves towards +x, away from the axis)
    assert np.mean(res.q[:, 0]) < 0.0


# ---- identities on random trees -------------------------------------------------------------------------------
def _moving_tree(n, seed, base=True):
    """A random tree with at least one degree of freedom on the base ``general_base`` (``base=False``: the same
    tree on a fixed ground)."""
    rng = np.random.default_rng(seed)
    motion = mb.BaseMotion(general_base) if base else None
    model = random_tree(n, rng, base_motion=motion)
    while model.nv == 0:
        model = random_tree(n, rng, base_motion=motion)
    return model, rng


@pytest.mark.parametrize("n, seed", [(1, 0), (3, 1), (7, 2), (12, 3), (30, 4)])
def test_rnea_inverts_aba_on_a_moving_base(n, seed):
    """rnea(q, v, aba(q, v, τ, t), t) = τ; aba = M⁻¹(τ − bias(t)) with M from crba (which the base leaves
    unchanged); the batch twins equal single calls; a fixed base gives other numbers (the base terms are there).
    Tolerance: backward stable O(N) recursions, ~ N ε |M| |q̈| (RBDA)."""
    model, rng = _moving_tree(n, seed)
    for t in (0.0, 0.8, 2.3):
        q = model.random_configuration(rng)
        v = rng.uniform(-1, 1, model.nv)
        tau = rng.uniform(-1, 1, model.nv)
        qdd = mb.aba(model, q, v, tau, t=t)
        back = mb.rnea(model, q, v, qdd, t=t)
        M = mb.crba(model, q)
        scale = (1 + np.max(np.abs(M))) * (1 + np.max(np.abs(qdd))) * (1 + np.max(np.abs(tau)))
        assert np.max(np.abs(back - tau)) <= 1e3 * n * EPS * scale
        alt = np.linalg.solve(M, tau - mb.bias_forces(model, q, v, t=t))
        assert np.max(np.abs(alt - qdd)) <= 1e3 * n * EPS * scale * np.linalg.cond(M)
        Q, V, TAU = np.array([q, q]), np.array([v, v]), np.array([tau, tau])
        assert np.allclose(mb.aba_batch(model, Q, V, TAU, t=t)[1], qdd, rtol=0, atol=1e-12 * scale)
        assert np.allclose(mb.rnea_batch(model, Q, V, np.array([qdd, qdd]), t=t)[0], back, rtol=0,
                           atol=1e-12 * scale)
    fixed, _ = _moving_tree(n, seed, base=False)
    assert fixed.nv == model.nv
    q, v, tau = model.neutral(), np.ones(model.nv), np.zeros(model.nv)
    assert np.max(np.abs(mb.aba(fixed, q, v, tau) - mb.aba(model, q, v, tau, t=0.5))) > 1e-3


@pytest.mark.parametrize("n, seed", [(1, 5), (4, 6), (9, 7)])
def test_energy_balance_with_the_power_of_the_base(n, seed):
    """d(T + V)/dt = q̇ᵀτ + P_base, where P_base = Σ over the joints on the ground of n_J · ω0 +
    F · (ṗ0 + ω0 × (p_J − p0)): the wrench (moment n_J about the joint origin p_J, force F) the base exerts
    through that joint (``joint_wrenches``) times the velocity of the base there — written with p0, ṗ0, ω0 only,
    not with the spatial velocity and acceleration the kernels receive. dE/dt is a numerical derivative of
    ``energy`` along (q ⊕ s v, v + s q̈, t + s), with q̈ from ``aba``; its error is bounded a posteriori."""
    model, rng = _moving_tree(n, seed)
    roots = [i for i in range(1, model.nbodies + 1) if model.parent[i] == 0]
    for t in (0.3, 1.7):
        q = model.random_configuration(rng)
        v = rng.uniform(-1, 1, model.nv)
        tau = rng.uniform(-1, 1, model.nv)
        qdd = mb.aba(model, q, v, tau, t=t)

        def E(s):
            return sum(mb.energy(model, model.integrate(q, v, s), v + s * qdd, t=t + s))

        dE, err = _richardson(E, 0.0, 1e-3)
        p0, R0, pd0, w0, _, _ = general_base(t)
        f = mb.joint_wrenches(model, q, v, qdd, t=t)
        pJ = mb.forward_kinematics(model, q, frames="kernel", t=t).p
        P = sum(f[i - 1, :3] @ w0 + f[i - 1, 3:] @ (pd0 + np.cross(w0, pJ[i] - p0)) for i in roots)
        balance = tau @ v + P
        scale = abs(E(0.0)) + abs(tau @ v) + abs(P) + 1.0
        assert abs(dE - balance) <= 3 * err + 1e3 * EPS * scale / 1e-3, (dE, balance, err)
        assert abs(P) > 1e-3   # the base does work


def test_body_zero_and_points_follow_the_base():
    """forward_kinematics reports body 0 at (R0, p0) with velocity [ω0; ṗ0] and acceleration [ω̇0; p̈0] (the
    classical ones, converted back from the spatial velocity and acceleration of the base block); a point's
    velocity is the time derivative of its position (numerically, error bounded a posteriori)."""
    model, rng = _moving_tree(4, 11)
    q = model.random_configuration(rng)
    v = rng.uniform(-1, 1, model.nv)
    qdd = rng.uniform(-1, 1, model.nv)
    for t in (0.0, 1.1):
        p0, R0, pd0, w0, pdd0, al0 = general_base(t)
        k = mb.forward_kinematics(model, q, v, qdd, t=t)
        assert np.allclose(k.R[0], R0, rtol=0, atol=1e-14) and np.allclose(k.p[0], p0, rtol=0, atol=1e-14)
        assert np.allclose(k.velocity[0], np.r_[w0, pd0], rtol=0, atol=1e-13)
        assert np.allclose(k.acceleration[0], np.r_[al0, pdd0], rtol=0, atol=1e-13)
        body, point = model.nbodies, (0.1, -0.2, 0.3)
        vel = mb.point_velocity(model, q, v, body, point, t=t)
        d, err = _richardson(lambda s: mb.point_position(model, model.integrate(q, v, s), body, point, t=t + s),
                             0.0, 1e-3)
        assert np.max(np.abs(d - vel)) <= 3 * np.max(err) + 1e-9
        # the body-0 point at its origin moves at ṗ0
        assert np.allclose(mb.point_velocity(model, q, np.zeros(model.nv), 0, (0, 0, 0), t=t), pd0, rtol=0, atol=1e-13)


# ---- Kapitza's pendulum ----------------------------------------------------------------------------------------
def test_kapitza_pendulum_stays_upright_and_the_plot(tmp_path):
    """Kapitza: the upright pendulum on a support shaken vertically, z0 = a cos Ωt, is stable when a²Ω² > 2 g l
    (point mass; Landau & Lifshitz §30). Here a²Ω² = 5.8 · 2 g l: the shaken run stays within the slow
    oscillation of the averaged motion (|θ| ≤ θ0 plus the fast jitter a/l · |θ|, both small), the unshaken one
    falls past the horizontal. Both are plotted; the PNG is read back and shows both curves."""
    import matplotlib.image as mpimg

    from multibody.viz.pendulums import plot_kapitza

    g, l, a, W = 9.81, 0.5, 0.02, 2 * np.pi * 60.0
    assert a * a * W * W > 5 * 2 * g * l
    shaken = kapitza_pendulum(length=l, amplitude=a, omega=W, g=g)
    still = kapitza_pendulum(length=l, amplitude=0.0, omega=W, g=g)
    th0 = 0.2
    rs = mb.simulate(shaken, [th0], [0.0], 3.0, method="DOP853", rtol=1e-9, atol=1e-11, n_out=1501)
    rf = mb.simulate(still, [th0], [0.0], 3.0, method="DOP853", rtol=1e-9, atol=1e-11, n_out=1501)
    # averaged (Kapitza) motion: a harmonic oscillation about θ = 0 of amplitude θ0, plus a jitter of relative
    # size a/l = 0.04
    assert np.max(np.abs(rs.q[:, 0])) <= th0 * (1 + 3 * a / l) + 0.02
    assert np.min(rs.q[:, 0]) < -0.5 * th0          # it swings through upright, it does not just lean
    assert np.max(np.abs(rf.q[:, 0])) > np.pi / 2   # falls
    # the slow oscillation has the period of Kapitza's effective potential, 2π / sqrt(a²Ω²/(2 l²) − g/l): the
    # averaging neglects terms of relative order (a/l)², (ω/Ω)² < 0.2 %, and the amplitude θ0 shifts the period by
    # about θ0²/4 = 1 %
    th, t = rs.q[:, 0], rs.t
    i = np.flatnonzero((th[:-1] < 0) & (th[1:] >= 0))
    up = t[i] - th[i] * (t[i + 1] - t[i]) / (th[i + 1] - th[i])
    up = up[np.r_[True, np.diff(up) > 0.1]]          # upward crossings of the slow motion, not of the jitter
    period = np.mean(np.diff(up))
    assert len(up) >= 4
    assert period == pytest.approx(2 * np.pi / np.sqrt(a * a * W * W / (2 * l * l) - g / l), rel=0.03)
    path = plot_kapitza(rs, rf, tmp_path / "kapitza.png")
    img = mpimg.imread(path)
    assert img.shape[0] > 200 and img.shape[1] > 400
    rgb = img[..., :3]
    blue = np.sum((rgb[..., 2] > 0.6) & (rgb[..., 0] < 0.3) & (rgb[..., 1] < 0.3))
    red = np.sum((rgb[..., 0] > 0.6) & (rgb[..., 1] < 0.3) & (rgb[..., 2] < 0.3))
    assert blue > 200 and red > 200


# ---- API, files and errors -------------------------------------------------------------------------------------
def test_model_file_round_trip(tmp_path):
    """A harmonic shake and a constant-rate rotation are data in a model file (no code); the loaded model has the
    same dynamics; save_model writes them back."""
    text = """
name: shaken pendulum
gravity: [0, 0, -9.81]
base_motion: {kind: harmonic, axis: [1, 0, 0], amplitude: 0.05, omega: 7.0, phase: 0.1}
bodies:
  - {name: bob, mass: 1.0, com: [0, 0, -0.5]}
joints:
  - {name: hinge, type: revolute, axis: [0, 1, 0], parent: ground, child: bob}
"""
    path = tmp_path / "shaken.yaml"
    path.write_text(text)
    model = mb.load_model(path)
    b = mb.ModelBuilder(base_motion=mb.BaseMotion.harmonic((1, 0, 0), 0.05, 7.0, phase=0.1))
    b.add_body("bob", mass=1.0, com=(0, 0, -0.5))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="bob")
    ref = b.build()
    q, v = np.array([0.3]), np.array([0.1])
    assert mb.aba(model, q, v, np.zeros(1), t=0.4) == pytest.approx(mb.aba(ref, q, v, np.zeros(1), t=0.4), abs=1e-14)
    out = tmp_path / "back.yaml"
    mb.save_model(model, out)
    again = mb.load_model(out)
    assert again.base_motion.to_data() == model.base_motion.to_data()
    spin = mb.BaseMotion.rotation((0, 0, 2), 1.5)
    assert mb.BaseMotion.from_data(spin.to_data()).params == spin.params
    # a model with a base motion of data pickles (sweeps send models to worker processes)
    import pickle
    copy = pickle.loads(pickle.dumps(model))
    assert np.array_equal(copy.base_motion.block(0.7), model.base_motion.block(0.7))
    path.write_text(text.replace("kind: harmonic", "kind: wobble"))
    with pytest.raises(ModelError, match="base_motion"):
        mb.load_model(path)
    path.write_text(text.replace("omega: 7.0", "omega: 7.0, rate: 2"))
    with pytest.raises(ModelError, match="base_motion"):
        mb.load_model(path)


def test_translation_constructor_equals_the_harmonic_shake():
    """``BaseMotion.translation`` with the callables of a shake gives the numbers of ``BaseMotion.harmonic``."""
    a, W, e = 0.03, 5.0, np.array([0.0, 0.6, 0.8])
    tr = mb.BaseMotion.translation(lambda t: a * np.cos(W * t) * e, lambda t: -a * W * np.sin(W * t) * e,
                                   lambda t: -a * W * W * np.cos(W * t) * e)
    ha = mb.BaseMotion.harmonic(e, a, W)
    for t in (0.0, 0.4, 2.0):
        assert np.allclose(tr.block(t), ha.block(t), rtol=0, atol=1e-15)
    with pytest.raises(ModelError, match="translation velocity must be a callable"):
        mb.BaseMotion.translation(lambda t: e, None, lambda t: e)


def test_bad_input_names_the_base_motion():
    def bad_rotation(t):
        return np.zeros(3), np.diag([1.0, 1.0, 2.0]), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)

    with pytest.raises(ModelError, match="base motion.*rotation R0.*not a rotation"):
        mb.BaseMotion(bad_rotation)

    def reflection(t):
        return np.zeros(3), np.diag([1.0, 1.0, -1.0]), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)

    with pytest.raises(ModelError, match="not a rotation"):
        mb.BaseMotion(reflection)

    def short(t):
        return np.zeros(2), np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3), np.zeros(3)

    with pytest.raises(ModelError, match=r"position p0 at t = 0.0 must have shape \(3,\)"):
        mb.BaseMotion(short)
    with pytest.raises(ModelError, match="must return"):
        mb.BaseMotion(lambda t: (np.zeros(3), np.eye(3)))
    with pytest.raises(ModelError, match="base motion"):
        mb.ModelBuilder().set_base_motion(42)
    with pytest.raises(ModelError, match="harmonic axis"):
        mb.BaseMotion.harmonic((0, 0, 0), 0.1, 1.0)
    with pytest.raises(ModelError, match="rotation rate"):
        mb.BaseMotion.rotation((0, 0, 1), "fast")
    with pytest.raises(ModelError, match="Python functions"):
        mb.BaseMotion(general_base).to_data()
    # a motion that goes bad later is reported at that time
    late = mb.BaseMotion(lambda t: general_base(t) if t < 1 else (np.full(3, np.nan),) + general_base(t)[1:])
    model = random_tree(2, np.random.default_rng(0), base_motion=late)
    with pytest.raises(ModelError, match="position p0 at t = 1.5 must be finite"):
        mb.aba(model, model.neutral(), np.zeros(model.nv), np.zeros(model.nv), t=1.5)
    with pytest.raises(ModelError, match="t must be a number"):
        mb.aba(model, model.neutral(), np.zeros(model.nv), np.zeros(model.nv), t="now")


@pytest.mark.parametrize("n, seed", [(1, 21), (5, 22)])
def test_poisson_impulses_on_a_moving_base_match_the_tree_formulation(n, seed):
    """Seed 002's (q, p) equations on the moving base: p = ∂T/∂v of the absolute kinetic energy, eq. (7) as written
    (see ``formulations/poisson.py``). The same motion as the tree formulation (both DOP853 at rtol 1e-11: they
    differ by the two runs' tolerances, ~1e-9 over 1 s), and the same absolute energies."""
    model, rng = _moving_tree(n, seed)
    q0 = model.random_configuration(rng, scale=0.5)
    v0 = rng.uniform(-0.5, 0.5, model.nv)
    kw = dict(rtol=1e-11, atol=1e-12, n_out=11)
    tree = mb.simulate(model, q0, v0, 1.0, **kw)
    pois = mb.simulate(model, q0, v0, 1.0, formulation="poisson", **kw)
    assert np.max(np.abs(pois.q - tree.q)) < 1e-7 and np.max(np.abs(pois.v - tree.v)) < 1e-7
    assert np.allclose(pois.energy["kinetic"], tree.energy["kinetic"], rtol=1e-7, atol=1e-9)
    with pytest.raises(ModelError, match="t0"):
        mb.simulate(model, q0, v0, 1.5, formulation="poisson", t0=0.5)


def test_what_does_not_take_a_moving_base_says_so():
    model = kapitza_pendulum()
    with pytest.raises(ModelError, match="base motion"):
        mb.simulate(model, [0.1], [0.0], 0.1, formulation="constrained")
    with pytest.raises(ModelError, match="base motion"):
        mb.simulate_batch(model, [[0.1], [0.2]], None, 0.01, method="RK4", h=1e-3)
    with pytest.raises(ModelError, match="base motion"):
        mb.linearize(model, [0.0], [0.0])
    from multibody.symbolic import equations_of_motion
    with pytest.raises(ModelError, match="base motion"):
        equations_of_motion(model)


def test_a_fixed_base_is_unchanged_by_time():
    """Without a base motion, ``t`` changes nothing."""
    model = random_tree(5, np.random.default_rng(1))
    assert model.base_motion is None
    q, v, tau = model.neutral(), np.ones(model.nv), np.ones(model.nv)
    assert np.array_equal(mb.aba(model, q, v, tau), mb.aba(model, q, v, tau, t=3.0))
    assert np.array_equal(mb.rnea(model, q, v, tau), mb.rnea(model, q, v, tau, t=3.0))


def test_animation_draws_the_moving_base(tmp_path):
    """The stick figure of a model on a moving base puts each body where it is at the configuration's time: the
    hinge of Kapitza's pendulum (body 1's origin) rides on the support at z0(t) = a cos Ωt; the times are
    required."""
    from multibody.viz.animation import Scene

    a, W = 0.02, 2 * np.pi * 60.0
    model = kapitza_pendulum(amplitude=a, omega=W)
    t = np.linspace(0.0, 0.02, 7)
    Q = np.linspace(0.1, -0.1, 7)[:, None]
    scene = Scene(model, Q, t)
    z0 = np.c_[0 * t, 0 * t, a * np.cos(W * t)]
    # the rod starts at the hinge; the support's joint point
    assert np.allclose(scene.links[:, scene.link_body == 1][:, 0, 0], z0, rtol=0, atol=1e-15)
    assert np.allclose(scene.links[:, scene.link_body == 0][:, 0, 1], z0, rtol=0, atol=1e-15)
    assert scene.ground.shape == (0, 3)
    with pytest.raises(ModelError, match="moving base"):
        Scene(model, Q)
    res = mb.simulate(model, [0.1], [0.0], 0.05, rtol=1e-8, n_out=11)
    from multibody.viz import animate

    path = animate(res, tmp_path / "kapitza.gif", frames=5)
    assert path.exists() and path.stat().st_size > 1000


def test_shaken_support_equals_a_prescribed_prismatic_support():
    """Seed 001 §3.1–3.2 against §3.3.1: the pendulum on a support shaken as x0(t) = a cos Ωt (a moving base)
    equals the same pendulum on a support body that slides on a prismatic joint whose coordinate is prescribed
    as x0(t) — the same equation for θ reached two ways. Same fixed-step RK4 grid: only rounding separates
    them (bound 1e-10 on θ, θ̇ and the hinge's reaction of about 10 N)."""
    g, m, l, J, a, W = 9.81, 1.3, 0.7, 0.05, 0.08, 6.0

    def pendulum(b, parent):
        b.add_body("bob", mass=m, com=(0, 0, -l), inertia=np.diag([0.02, J, 0.03]))
        b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent=parent, child="bob")
        return b

    shaken = pendulum(mb.ModelBuilder(gravity=(0, 0, -g), base_motion=mb.BaseMotion.harmonic((1, 0, 0), a, W)),
                      "ground").build()
    b = mb.ModelBuilder(gravity=(0, 0, -g))
    b.add_body("support", mass=2.0, inertia=np.diag([0.1, 0.1, 0.1]))
    b.add_joint("slide", mb.Prismatic(axis=(1, 0, 0)), parent="ground", child="support")
    sliding = pendulum(b, "support").build()

    def x0(t):
        return a * np.cos(W * t), -a * W * np.sin(W * t), -a * W * W * np.cos(W * t)

    r1 = mb.simulate(shaken, [0.4], [0.0], 2.0, method="RK4", h=1e-3, n_out=201)
    r2 = mb.simulate(sliding, [a, 0.4], [0.0, 0.0], 2.0, method="RK4", h=1e-3, n_out=201,
                     prescribed={"slide.displacement": x0})
    assert np.ptp(r1.q[:, 0]) > 0.5                                    # a real swing
    np.testing.assert_allclose(r2.q[:, 1], r1.q[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(r2.v[:, 1], r1.v[:, 0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(r2.q[:, 0], a * np.cos(W * r2.t), rtol=0, atol=1e-15)
    np.testing.assert_allclose(r2.reactions["hinge"], r1.reactions["hinge"], rtol=0, atol=1e-10)
