"""The safe expression parser of model files (multibody.io.expressions): what it accepts, what it refuses (with
the place in the file), and that it computes what the formula says — never by evaluating Python."""
import math

import numpy as np
import pytest
import sympy as sp

from multibody.errors import ModelError
from multibody.io.expressions import constant, parse_expression

VARS = {"t": ("t", 0), "q.a.angle": ("q", 0), "q.a": ("q", 0), "q.b.x": ("q", 1), "v.a": ("v", 0)}


@pytest.mark.parametrize("text, expected", [
    ("1/12", 1 / 12), ("pi/2", math.pi / 2), ("1e-9", 1e-9), ("-(-3)", 3.0), ("+2", 2.0), ("2**-1", 0.5),
    ("sqrt(2)", math.sqrt(2)), ("abs(-2.5)", 2.5), ("min(3, 1, 2)", 1.0), ("max(-1, -2)", -1.0),
    ("exp(1) - tan(0.3)", math.e - math.tan(0.3)), ("2*sin(pi/6)*cos(0)", 2 * math.sin(math.pi / 6)),
    (3, 3.0), (0.25, 0.25),
])
def test_constant_expressions(text, expected):
    assert constant(text, "here") == pytest.approx(expected, rel=4 * np.finfo(float).eps, abs=0)


def test_functions_of_time_and_coordinates():
    e = parse_expression("-10*(q.a.angle - 0.5) - 2*v.a + sin(t) * q.b.x**2", "joints[0].effort")
    assert e.names == {"t", "q.a.angle", "v.a", "q.b.x"}
    f = e.function(VARS)
    t, q, v = 0.7, np.array([0.2, 3.0]), np.array([1.5])
    assert f(t, q, v) == -10 * (0.2 - 0.5) - 2 * 1.5 + math.sin(0.7) * 9.0


@pytest.mark.parametrize("text, what", [
    ("__import__('os').system('ls')", "function '__import__('os').system' is not allowed"),
    ("open('x')", "function 'open' is not allowed"),
    ("q[0]", "Subscript is not allowed"),
    ("().__class__", "attribute access is only allowed in coordinate names"),
    ("x.__class__", "names must not start with '_'"),
    ("lambda: 1", "Lambda is not allowed"),
    ("[i for i in t]", "ListComp is not allowed"),
    ("1 if t else 2", "IfExp is not allowed"),
    ("t < 1", "Compare is not allowed"),
    ("t and 1", "BoolOp is not allowed"),
    ("7 // 2", "the operator FloorDiv is not allowed"),
    ("7 % 2", "the operator Mod is not allowed"),
    ("~1", "the operator Invert is not allowed"),
    ("'text'", "the constant 'text' is not a number"),
    ("True", "the constant True is not a number"),
    ("1j", "the constant 1j is not a number"),
    ("sin(x=1)", "sin() takes plain arguments only"),
    ("sin(*t)", "sin() takes plain arguments only"),
    ("sin(1, 2)", "sin() takes 1 argument, got 2"),
    ("max(1)", "max() takes at least 2 arguments, got 1"),
    ("sin", "'sin' is a function"),
    ("t = 1", "syntax error"),
    ("1 +", "syntax error"),
    ("", "the expression is empty"),
    ("99999999999999999999", "too large"),
])
def test_refused_with_the_place_in_the_file(text, what):
    with pytest.raises(ModelError) as err:
        parse_expression(text, "joints[2].effort")
    msg = str(err.value)
    assert msg.startswith("joints[2].effort: ") and what in msg, msg
    assert err.value.element == "joints[2].effort"


def test_names_are_checked_against_the_context():
    e = parse_expression("q.elbow + t", "torque.x")
    with pytest.raises(ModelError, match=r"torque.x: in 'q.elbow \+ t': unknown name 'q.elbow' \(names allowed here:"):
        e.function(VARS)
    with pytest.raises(ModelError, match="a constant is expected here"):
        constant("2*t", "bodies[0].mass")
    with pytest.raises(ModelError, match=r"cannot be evaluated \(a division by zero\)"):
        constant("1/0", "bodies[0].mass")
    with pytest.raises(ModelError, match=r"cannot be evaluated \(beyond the floating-point range\)"):
        constant("10.0**10**10", "bodies[0].mass")
    with pytest.raises(ModelError, match=r"cannot be evaluated \(invalid value encountered in sqrt\)"):
        constant("sqrt(-1)", "bodies[0].mass")
    with pytest.raises(ModelError, match="expected a number"):
        constant(True, "bodies[0].mass")


def test_complex_steps_give_exact_derivatives_through_abs_min_max():
    """abs, min and max decide by the real part, so f(x + ih)/h has the derivative in its imaginary part."""
    f = parse_expression("abs(q.a) * max(q.a, 0.1) + min(sin(q.a), 2)", "f").function(VARS)
    for x in (-0.7, 0.05, 0.9):
        h = 1e-30
        d = np.imag(f(0.0, np.array([x + 1j * h]), None)) / h
        s = 1.0 if x > 0 else -1.0
        exact = s * max(x, 0.1) + abs(x) * (1.0 if x > 0.1 else 0.0) + math.cos(x)
        assert d == pytest.approx(exact, rel=4 * np.finfo(float).eps)


def test_sympy_form_for_profiles():
    x, z = sp.symbols("x z")
    h = parse_expression("x**4 + 0.13*x**3 - 1/2*x**2 - z", "profile.h").sympy({"x": x, "z": z})
    assert sp.Poly(h, x, z).terms() == sp.Poly(x**4 + 0.13 * x**3 - sp.Rational(1, 2) * x**2 - z, x, z).terms()
    with pytest.raises(ModelError, match="constant integer exponent of at most 64"):
        parse_expression("x**0.5", "profile.h").sympy({"x": x})
