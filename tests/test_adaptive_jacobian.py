"""Implicit methods (Radau, BDF) with our fixed-step forward-difference Jacobian."""
import numpy as np

import multibody as mb
from multibody.integrate.adaptive import ForwardDifferenceJacobian
from multibody.systems import iftomm


def test_forward_difference_jacobian_of_a_linear_system():
    A = np.array([[0.0, 1.0, 0.0], [-4.0, -0.5, 2.0], [0.0, 0.0, -1e3]])
    jac = ForwardDifferenceJacobian(lambda t, y: A @ y + np.sin(t))
    J = jac(0.3, np.array([1.0, -2.0, 1e4]))
    assert np.allclose(J, A, rtol=1e-6, atol=1e-6)


def test_radau_through_a_cyclic_coordinate():
    """IFToMM A05: the freely spinning shaft's angle enters nothing (a zero Jacobian column); scipy's own
    finite-difference Jacobian grows its step for that column until it overflows (the run failed at
    t = 6.68 s with NaNs). With ours Radau runs through and agrees with DOP853."""
    m, q0, v0 = iftomm.flyball_model()
    js = m.joint("slider").q_slice.start
    ref = mb.simulate(m, q0, v0, 10.0, method="DOP853", rtol=1e-11, atol=1e-11, n_out=3)
    res = mb.simulate(m, q0, v0, 10.0, method="Radau", rtol=1e-8, atol=1e-8, n_out=3)
    assert res.info["status"] == "success"
    assert abs(res.q[-1, js] - ref.q[-1, js]) < 1e-8
