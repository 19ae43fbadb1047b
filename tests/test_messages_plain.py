"""Messages show numbers as numbers: a value that is a numpy scalar or array (given by the user, or computed, as the
neutral configuration is) reads ``0.0`` or ``[1.0, 2.0]`` in an error, never ``np.float64(0.0)`` or ``array(...)``
(``multibody.errors.shown``). Each call below is refused; its message is checked."""
import math

import numpy as np
import pytest

import multibody as mb
from multibody.errors import MultibodyError, shown
from multibody.systems.pendulums import simple_pendulum

F, I = np.float64, np.int64


def limited(lower, upper):
    b = mb.ModelBuilder(name="limited")
    b.add_body("l", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    b.add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "l", limits=(lower, upper))
    return b.build()


def builder():
    b = mb.ModelBuilder(name="probe")
    b.add_body("l", mass=1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
    return b


CASES = {
    "q0 outside the limits (the neutral one, computed)": lambda: mb.simulate(limited(F(0.5), F(1.0)), None, None, 0.1),
    "limits in the wrong order": lambda: builder().add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "l",
                                                             limits=(F(1.0), F(0.0))),
    "restitution above one": lambda: builder().add_joint("j", mb.Revolute(axis=(0, 1, 0)), "ground", "l",
                                                         limits=(F(-1.0), F(1.0)), restitution=F(2.0)),
    "a negative mass": lambda: builder().add_body("m", mass=F(-1.0), com=(0, 0, 0), inertia=(1, 1, 1)),
    "a negative step": lambda: mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, method="RK4", h=F(-1e-3)),
    "a fractional step budget": lambda: mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, max_steps=F(0.5)),
    "a single output": lambda: mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, n_out=I(1)),
    "a negative tolerance": lambda: mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, rtol=F(-1.0)),
    "a NaN end time": lambda: mb.simulate(simple_pendulum(), [0.1], [0.0], F(math.nan)),
    "negative gains": lambda: mb.JointPD(F(-1.0), 1.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_message_shows_numpy_numbers_plainly(case):
    with pytest.raises(MultibodyError) as err:
        CASES[case]()
    text = str(err.value)
    assert "np." not in text and "array(" not in text and "dtype" not in text, text


def test_shown():
    assert repr(shown(F(0.0))) == "0.0" and repr(shown(I(3))) == "3"
    assert shown(np.array([1.0, 2.0])) == [1.0, 2.0] and shown((F(1.0), "a")) == (1.0, "a")
    assert shown("text") == "text" and shown(None) is None
