"""``multibody.linearize``: exact linearization (complex steps through the kernels) of trees and of models with
holonomic and nonholonomic constraints, against closed forms and central differences."""
import math

import numpy as np
import pytest

import multibody as mb
from multibody.analysis.linearize import consistent_velocities, linearize
from multibody.errors import ConstraintError, ModelError
from multibody.systems.pendulums import simple_pendulum


def test_simple_pendulum_closed_form():
    """About the lower equilibrium ẏ = [[0, 1], [−g/L, 0]] y; about θ = π/3, −(g/L) cos θ (exact to 1e-13)."""
    L, g = 0.7, 9.81
    model = simple_pendulum(length=L, mass=2.0, g=g)
    for th in (0.0, math.pi / 3):
        lin = linearize(model, [th], [0.0])
        assert lin.state_names == ["j.angle" if "j.angle" in lin.state_names[0] else lin.state_names[0],
                                   f"d({lin.state_names[0]})"]
        assert np.allclose(lin.A, [[0, 1], [-g / L * math.cos(th), 0]], rtol=1e-13, atol=1e-13)
    lin = linearize(model, [0.0], [0.0], inputs=[model.velocity_names()[0]])
    assert np.allclose(lin.B[:, 0], [0.0, 1.0 / (2.0 * L * L)], rtol=1e-13)
    ev = lin.eigenvalues()
    assert np.allclose(sorted(ev.imag), [-math.sqrt(g / L), math.sqrt(g / L)], rtol=1e-13)
    m = lin.modes()[0]
    assert m["natural_frequency"] == pytest.approx(math.sqrt(g / L), rel=1e-13) and abs(m["damping_ratio"]) < 1e-13


def double_pendulum(m1=1.3, m2=0.7, l1=0.9, l2=0.6, g=9.81):
    """Two point masses on massless rods, hinges about y (the textbook double pendulum)."""
    b = mb.ModelBuilder(gravity=(0, 0, -g))
    b.add_body("a", m1, com=(0, 0, -l1))
    b.add_body("b", m2, com=(0, 0, -l2))
    b.add_joint("j1", mb.Revolute((0, 1, 0)), "ground", "a")
    b.add_joint("j2", mb.Revolute((0, 1, 0)), "a", "b", placement=(None, (0, 0, -l1)))
    return b.build()


def test_double_pendulum_closed_form_and_central_differences():
    """About the lower equilibrium: M = [[(m1+m2) l1², m2 l1 l2], [m2 l1 l2, m2 l2²]], K = diag((m1+m2) g l1,
    m2 g l2), A = [[0, E], [−M⁻¹K, 0]] (absolute angles θ1, θ2 = relative + θ1 mapped to the joint angles).
    At a moving state, the exact A equals central differences of the right-hand side to their accuracy."""
    m1, m2, l1, l2, g = 1.3, 0.7, 0.9, 0.6, 9.81
    model = double_pendulum(m1, m2, l1, l2, g)
    # joint angles φ1 = θ1, φ2 = θ2 − θ1: M and K in joint coordinates by the change of variables
    Tm = np.array([[1.0, 0.0], [1.0, 1.0]])        # θ = Tm φ
    M = Tm.T @ np.array([[(m1 + m2) * l1 ** 2, m2 * l1 * l2], [m2 * l1 * l2, m2 * l2 ** 2]]) @ Tm
    K = Tm.T @ np.diag([(m1 + m2) * g * l1, m2 * g * l2]) @ Tm
    lin = linearize(model, [0.0, 0.0], [0.0, 0.0])
    assert np.allclose(lin.A[2:, :2], -np.linalg.solve(M, K), rtol=1e-12, atol=1e-12)
    assert np.allclose(lin.A[:2, 2:], np.eye(2), rtol=0, atol=1e-15)
    q, v = np.array([0.4, -0.9]), np.array([1.1, -0.3])
    exact = linearize(model, q, v).A
    approx = linearize(model, q, v, derivative="central").A
    assert np.allclose(exact, approx, rtol=1e-7, atol=1e-7 * np.abs(exact).max())
    assert not np.allclose(exact, approx, rtol=1e-13, atol=0)     # the central differences are the inexact ones


def test_spherical_pendulum_on_the_manifold():
    """A body on a spherical joint (quaternion coordinates, chart of the exponential map): about hanging at
    rest, pendulum frequency √(m g l / (I + m l²)) about both horizontal axes and a zero mode about the
    vertical."""
    m, l, I = 2.0, 0.8, 0.05
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("bob", m, com=(0, 0, -l), inertia=(I, I, 0.02))
    b.add_joint("ball", mb.Spherical(), "ground", "bob")
    model = b.build()
    lin = linearize(model, model.neutral(), np.zeros(3))
    w = math.sqrt(m * 9.81 * l / (I + m * l * l))
    ev = np.sort(np.abs(lin.eigenvalues().imag))
    assert np.allclose(ev, [0, 0, w, w, w, w], rtol=0, atol=1e-12)


def test_holonomic_and_nonholonomic_elimination():
    """A four-bar (cut joint, 1 degree of freedom) linearized about a hanging equilibrium: the dependent
    coordinates and speeds are eliminated; the single frequency equals that of the energy method
    ω² = V''/T'' along the mechanism's one coordinate, computed here from the model by central differences of
    the potential and the kinetic energy along the constraint manifold."""
    b = mb.ModelBuilder(gravity=(0, -9.81, 0))
    for n, L in (("crank", 1.0), ("coupler", 1.6), ("rocker", 1.0)):
        b.add_body(n, 1.0, com=(L / 2, 0, 0), inertia=(1e-3, L * L / 12, L * L / 12))
    z = (0, 0, 1)
    b.add_joint("A", mb.Revolute(z), "ground", "crank", placement=(mb.rotation_about(z, -math.pi / 2), (0, 0, 0)))
    b.add_joint("B", mb.Revolute(z), "crank", "coupler", placement=(mb.rotation_about(z, math.pi / 2), (1, 0, 0)))
    b.add_joint("C", mb.Revolute(z), "coupler", "rocker", placement=(mb.rotation_about(z, math.pi / 2), (1.6, 0, 0)))
    b.add_joint("D", mb.Revolute(z), "rocker", "ground", placement=(None, (1, 0, 0)),
                child_placement=mb.Placement(translation=(1.6, 0, 0)))
    model = b.build()
    q0 = np.zeros(3)
    lin = linearize(model, q0, np.zeros(3), coordinates=["A.angle"], speeds=["A.angle"])
    assert lin.A.shape == (2, 2) and lin.info["dependent_coordinates"] == ["B.angle", "C.angle"]
    omega2 = -lin.A[1, 0]
    # energy method: along the parallelogram θ_B = −θ_A, θ_C = θ_A
    def energies(s):
        q = np.array([s, -s, s])
        T = 0.5 * np.array([1.0, -1.0, 1.0]) @ mb.crba(model, q) @ np.array([1.0, -1.0, 1.0])
        return T, mb.energy(model, q, np.zeros(3))[1]
    h = 1e-4
    Vpp = (energies(h)[1] - 2 * energies(0.0)[1] + energies(-h)[1]) / h ** 2
    Teff = 2 * energies(0.0)[0]
    assert omega2 == pytest.approx(Vpp / Teff, rel=1e-6)
    with pytest.raises(ConstraintError, match="violates the constraints"):
        linearize(model, np.array([0.1, 0.0, 0.0]), np.zeros(3))
    with pytest.raises(ConstraintError, match="independent coordinates"):
        linearize(model, q0, np.zeros(3), coordinates=["A.angle", "B.angle"])
    with pytest.raises(ModelError, match="'nothing' is not a velocity coordinate"):
        linearize(model, q0, np.zeros(3), coordinates=["nothing"])


def test_consistent_velocities():
    model = double_pendulum()
    with pytest.raises(ConstraintError, match="no constraints"):
        consistent_velocities(model, model.neutral(), {"j1.angle": 1.0})
