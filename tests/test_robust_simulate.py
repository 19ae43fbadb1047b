"""Runs that must end, with one clear error and what was computed (issue 20's run-time classes).

Each class of fault is tried on every method it can reach — the six adaptive methods, the fixed-step methods
(compiled loop and the Python loop of a torque callback), the tree, constrained and poisson formulations where
their paths differ, and ``simulate_batch``: a right-hand side that is NaN at the initial state (scipy's DOP853 and
RK45 looped forever on it), a span of 1e300 s (ran forever), invalid settings (accepted, or bare Python errors),
complex torques (their imaginary part dropped), outputs too large for memory (numpy errors after minutes), a bad
event function. Every test runs under :func:`hang_guard`: a regression to an endless run fails the test instead of
hanging the suite (the bound is a hang detector, not a timing: these runs take well under a second of computing,
and it leaves room for numba's first compilation on a slow machine).
"""
import math
import signal

import numpy as np
import pytest

import multibody as mb
from multibody.errors import IntegrationError, ModelError
from multibody.integrate import adaptive, arguments
from multibody.integrate.arguments import FIXED_MAX_STEPS
from multibody.systems.pendulums import simple_pendulum

ADAPTIVE = ["DOP853", "RK45", "RK23", "Radau", "BDF", "LSODA"]
FIXED = ["RK4", "RK2", "HEUN", "VERLET"]
#: seconds after which a test counts as hung (see the module docstring)
GUARD = 300


class Hang(BaseException):
    """Raised by the guard's alarm: a BaseException, so that no ``except Exception`` of the code under test
    can take it for a failure of the run."""


@pytest.fixture(autouse=True)
def hang_guard():
    def expired(signum, frame):
        raise Hang(f"still running after {GUARD} s: an endless run")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(GUARD)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def nan_at_start(t, q, v):
    """A torque law undefined everywhere near the initial state (the square root of a negative number)."""
    with np.errstate(invalid="ignore"):
        return np.full(v.shape, np.sqrt(-1.0 - q[0] ** 2))


def system(formulation):
    """(model, q0, v0) for a formulation: a pendulum (tree, poisson), the IFToMM four-bar (constrained)."""
    if formulation == "constrained":
        from multibody.systems.iftomm import four_bar_model

        return four_bar_model(1)
    return simple_pendulum(), np.array([0.1]), np.zeros(1)


# ---- hangs --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("formulation", ["tree", "constrained", "poisson"])
@pytest.mark.parametrize("method", ADAPTIVE)
def test_nan_at_the_initial_state_ends_at_once(method, formulation):
    """DOP853 and RK45 made a NaN initial step of a NaN derivative and looped forever; now every method stops
    before its first step, with the initial state as the partial result and the entry named."""
    model, q0, v0 = system(formulation)
    with pytest.raises(IntegrationError) as info:
        mb.simulate(model, q0, v0, 1.0, method=method, tau=nan_at_start, formulation=formulation)
    err = info.value
    assert "not finite at the initial state (t = 0)" in err.reason
    assert ("p 'hinge.angle' = nan" if formulation == "poisson" else "v '") in err.reason and "= nan" in err.reason
    assert err.result.info["status"] == "failed" and err.result.t.tolist() == [0.0]
    assert np.array_equal(err.result.q[0], np.asarray(q0, float)) or formulation == "constrained"


@pytest.mark.parametrize("method", FIXED)
def test_nan_at_the_initial_state_fixed_step(method):
    """Fixed steps (the Python loop of a callback) stop at the first step, naming the entry that was NaN."""
    model = simple_pendulum()
    with pytest.raises(IntegrationError) as info:
        mb.simulate(model, [0.1], [0.0], 1.0, method=method, h=0.01, tau=nan_at_start)
    assert "non-finite" in info.value.reason and len(info.value.result) == 1


def test_nan_effort_expression_of_a_model_file():
    """The same through a model file's effort expression: the compiled fixed-step loop and DOP853 both end with
    the derivative of the hinge named (the compiled loop after its first step, DOP853 before it)."""
    mf = mb.io.load_text("""
name: undefined effort
bodies: [{name: bob, mass: 1.0, com: [0, 0, -1.0]}]
joints: [{name: hinge, type: revolute, axis: [0, 1, 0], parent: ground, child: bob,
          effort: "sqrt(-1 - q.hinge**2)"}]
""")
    for kw in (dict(method="DOP853"), dict(method="RK45"), dict(method="RK4", h=0.01)):
        with np.errstate(invalid="ignore"), pytest.raises(IntegrationError) as info:
            mb.simulate(mf.model, [0.1], [0.0], 1.0, **kw)
        assert "v 'hinge.angle' = nan" in info.value.reason, info.value.reason


@pytest.mark.parametrize("method", ["DOP853", "RK45", "Radau"])
def test_nan_later_names_the_entry(method):
    """A torque that becomes undefined at t = 0.5: the run ends there with the entry named and the result up
    to it."""
    model = simple_pendulum()

    def tau(t, q, v):
        with np.errstate(invalid="ignore"):
            return np.array([np.sqrt(0.5 - t)])

    with pytest.raises(IntegrationError) as info:
        mb.simulate(model, [0.1], [0.0], 1.0, method=method, tau=tau)
    err = info.value
    assert "v 'hinge.angle' = nan" in err.reason and 0.4 < err.result.t[-1] <= 0.5


@pytest.mark.parametrize("method", ADAPTIVE)
def test_an_endless_span_ends_with_the_step_budget(method):
    """t_end = 1e300: the default budget's early check ends the run after EARLY_CHECK steps (at steps of about
    1e-2..1 s it would need ~1e300 steps), with the reason and the result so far."""
    model = simple_pendulum()
    with pytest.raises(IntegrationError) as info:
        mb.simulate(model, [0.1], [0.0], 1e300, method=method)
    err = info.value
    assert "max_steps = 1000000 cannot be met" in err.reason and "is t_end meant?" in err.reason
    assert err.result.info["steps"] == adaptive.EARLY_CHECK == len(err.result) - 1
    assert np.all(np.isfinite(err.result.q))


def test_step_budget_default_and_explicit(monkeypatch):
    """An explicit max_steps ends the run when it is reached; the default budget is DEFAULT_MAX_STEPS (made
    small here); math.inf removes the limit."""
    model = simple_pendulum()
    with pytest.raises(IntegrationError, match="max_steps = 40 was reached") as info:
        mb.simulate(model, [0.1], [0.0], 1e300, max_steps=40)
    assert info.value.result.info["steps"] == 40 and len(info.value.result) == 41
    monkeypatch.setattr(adaptive, "DEFAULT_MAX_STEPS", 30)
    with pytest.raises(IntegrationError, match="max_steps = 30 was reached"):
        mb.simulate(model, [0.1], [0.0], 100.0)
    res = mb.simulate(model, [0.1], [0.0], 100.0, max_steps=math.inf, n_out=3)
    assert res.info["status"] == "success" and res.info["steps"] > 30


def test_fixed_step_budget_is_checked_before_the_run():
    """A fixed step makes its number of steps known at once: beyond the budget (10⁹ compiled, 10⁷ in the Python
    loop of a callback) or beyond max_steps the run is refused before it starts, naming h or max_steps."""
    model = simple_pendulum()
    with pytest.raises(ModelError, match="more than max_steps = 1000000000") as info:
        mb.simulate(model, [0.1], [0.0], 1e300, method="RK4", h=1e-3, n_out=2)
    assert info.value.element == "h"
    with pytest.raises(ModelError, match=f"max_steps = {FIXED_MAX_STEPS['python']}") as info:
        mb.simulate(model, [0.1], [0.0], 1.0, method="RK4", h=1e-8, tau=lambda t, q, v: np.zeros(1))
    assert info.value.element == "h"
    with pytest.raises(ModelError, match="1000 steps, more than max_steps = 10") as info:
        mb.simulate(model, [0.1], [0.0], 1.0, method="RK4", h=1e-3, max_steps=10)
    assert info.value.element == "max_steps"
    with pytest.raises(ModelError, match="more than max_steps") as info:
        mb.simulate_batch(model, np.zeros((3, 1)), None, 1.0, h=1e-12)
    assert info.value.element == "h"


# ---- the progress bar ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(method="DOP853"), dict(method="RK4", h=1e-3),
                                dict(method="RK4", h=1e-3, tau=lambda t, q, v: np.zeros(1))],
                         ids=["adaptive", "compiled", "python"])
def test_progress_bar(kw, capsys):
    """progress=True draws a tqdm bar (on stderr), False none, None none when the output is not a terminal (as
    under pytest); the bar changes nothing: the compiled loop, cut into timed pieces for it, gives the same
    numbers bit for bit."""
    model = simple_pendulum()
    shown = mb.simulate(model, [0.1], [0.0], 2.0, progress=True, **kw)
    assert "100%" in capsys.readouterr().err
    for progress in (False, None):
        quiet = mb.simulate(model, [0.1], [0.0], 2.0, progress=progress, **kw)
        assert capsys.readouterr().err == ""
        assert np.array_equal(quiet.q, shown.q) and np.array_equal(quiet.t, shown.t)


# ---- settings refused up front ------------------------------------------------------------------------------
BAD = [  # (keyword arguments, the element the ModelError names, methods it applies to: "a" adaptive, "f" fixed)
    (dict(rtol=0.0), "rtol", "af"), (dict(rtol=-1e-6), "rtol", "af"), (dict(rtol=math.nan), "rtol", "af"),
    (dict(rtol="tight"), "rtol", "af"), (dict(rtol=[1e-6, 1e-6, 1e-6]), "rtol", "a"),
    (dict(atol=-1.0), "atol", "af"), (dict(atol=math.inf), "atol", "af"), (dict(atol=1j), "atol", "af"),
    (dict(atol=0.0), "atol", "af"), (dict(atol=[1e-12, 0.0]), "atol", "a"),
    (dict(n_out=1), "n_out", "af"), (dict(n_out=0), "n_out", "af"), (dict(n_out=2.5), "n_out", "af"),
    (dict(n_out=True), "n_out", "af"), (dict(n_out="3"), "n_out", "af"),
    (dict(q0=[[0.1]]), "q0", "af"), (dict(v0=[[0.0]]), "v0", "af"),
    (dict(tau=[1 + 1j]), "tau", "af"), (dict(tau="push"), "tau", "af"),
    (dict(max_steps=0), "max_steps", "af"), (dict(max_steps=-3), "max_steps", "af"),
    (dict(max_steps=2.5), "max_steps", "af"), (dict(max_steps="x"), "max_steps", "af"),
    (dict(max_steps=True), "max_steps", "af"),
    (dict(t_eval=[0.0, math.nan]), "t_eval", "af"), (dict(t_eval=[[0.0, 0.5]]), "t_eval", "af"),
    (dict(t_eval=[]), "t_eval", "af"), (dict(t_eval=[0.0, 2.0]), "t_eval", "af"),
    (dict(t_eval=[0.5, 0.2]), "t_eval", "af"), (dict(t_eval="abc"), "t_eval", "af"),
    (dict(events=3), "events", "a"), (dict(events=[lambda t, q, v: q[0], 3]), "events", "a"),
    (dict(events=lambda t, q, v: q[0]), "events", "f"),
    (dict(progress="yes"), "progress", "af"), (dict(energy="no"), "energy", "af"),
    (dict(output_every=2), "output_every", "a"), (dict(output_every=0), "output_every", "f"),
    (dict(output_every=True), "output_every", "f"),
    (dict(t0=math.nan), "t0", "af"), (dict(t_end=math.inf), "t_end", "af"), (dict(t_end=1j), "t_end", "af"),
    (dict(h=0.0), "h", "f"), (dict(h=-1e-3), "h", "f"), (dict(h=5.0), "h", "f"), (dict(h=math.nan), "h", "f"),
    (dict(h="1 ms"), "h", "f"),
]


@pytest.mark.parametrize("kw, element", [(kw, e) for kw, e, where in BAD if "a" in where])
@pytest.mark.parametrize("method", ADAPTIVE)
def test_adaptive_settings_refused(method, kw, element):
    args = dict(q0=[0.1], v0=[0.0], t_end=1.0) | kw
    with pytest.raises(ModelError) as info:
        mb.simulate(simple_pendulum(), method=method, **args)
    assert info.value.element == element, str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("kw, element", [(kw, e) for kw, e, where in BAD if "f" in where])
@pytest.mark.parametrize("method", FIXED)
def test_fixed_step_settings_refused(method, kw, element):
    args = dict(q0=[0.1], v0=[0.0], t_end=1.0, h=1e-2) | kw
    with pytest.raises(ModelError) as info:
        mb.simulate(simple_pendulum(), method=method, **args)
    assert info.value.element == element, str(info.value)


@pytest.mark.parametrize("kw, element", [
    (dict(h=0.0), "h"), (dict(h=5.0), "h"), (dict(n_out=1), "n_out"), (dict(output_every=0), "output_every"),
    (dict(t_eval=[[0.0, 0.5]]), "t_eval"), (dict(t_eval=[0.0, math.nan]), "t_eval"), (dict(energy="no"), "energy"),
    (dict(tau=[1j]), "tau"), (dict(Q0=np.zeros((3, 1)) + 1j), "Q0"), (dict(Q0=np.zeros((3, 1, 1))), "Q0"),
    (dict(max_steps=0), "max_steps"), (dict(max_steps=10), "max_steps"), (dict(t_end=math.nan), "t_end"),
])
def test_batch_settings_refused(kw, element):
    args = dict(Q0=np.zeros((3, 1)), t_end=1.0, h=1e-2) | kw
    with pytest.raises(ModelError) as info:
        mb.simulate_batch(simple_pendulum(), **args)
    assert info.value.element == element, str(info.value)


@pytest.mark.parametrize("method, kw", [("DOP853", {}), ("Radau", {}), ("RK4", dict(h=0.01))])
def test_complex_torque_callback_refused_with_the_result(method, kw):
    """A callback that returns complex numbers: a ModelError naming it (numpy dropped the imaginary part with a
    warning only), carrying the result up to where it was met."""
    with pytest.raises(ModelError, match="returned complex values at t = 0") as info:
        mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, method=method, tau=lambda t, q, v: np.array([1 + 1j]),
                    **kw)
    assert info.value.element == "torque callback"


@pytest.mark.parametrize("value", [math.nan, 1j, "up", None])
def test_bad_event_value_is_named(value):
    """An event function must return one finite real number: anything else is a ModelError naming the event,
    with the result so far (a NaN event was silently never triggered)."""
    def g(t, q, v):
        return value if t > 0.2 else q[0]

    with pytest.raises(ModelError, match=r"event 0 \('g'\) returned") as info:
        mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, events=[g])
    assert info.value.element == "events[0]" and 0.0 < info.value.result.t[-1] <= 0.2


def test_tolerances_per_state_entry():
    model = simple_pendulum()
    res = mb.simulate(model, [0.1], [0.0], 1.0, rtol=[1e-9, 1e-9], atol=[1e-12, 1e-11], n_out=3)
    assert res.info["status"] == "success" and res.info["rtol"] == [1e-9, 1e-9]
    with pytest.raises(ModelError, match="rtol must be a number or 2 numbers") as info:
        mb.simulate(model, [0.1], [0.0], 1.0, rtol=[1e-9, 1e-9, 1e-9])
    assert info.value.element == "rtol"


# ---- memory --------------------------------------------------------------------------------------------------
def test_outputs_too_large_are_refused_before_allocation():
    """10¹¹ steps saved every step (a 745 GiB MemoryError, or numpy's "Maximum allowed size exceeded") is refused
    at once, saying how much and what to ask for; so are 10¹³ adaptive outputs and a batch's outputs."""
    model = simple_pendulum()
    limit = arguments.memory_limit()
    with pytest.raises(ModelError, match="GiB .*keep fewer outputs") as info:
        mb.simulate(model, [0.1], [0.0], 1.0, method="RK4", h=1e-11, max_steps=math.inf)
    assert info.value.element == "output_every"
    with pytest.raises(ModelError, match="GiB") as info:
        mb.simulate(model, [0.1], [0.0], 1.0, n_out=10 ** 13)
    assert info.value.element == "n_out"
    runs = int(limit // (8 * 1001 * 5)) + 1        # just over the limit with 1001 outputs of 2 + 3 numbers each
    with pytest.raises(ModelError, match=f"for each of {runs} runs"):
        mb.simulate_batch(model, np.zeros((runs, 1)) if runs < 10 ** 7 else np.broadcast_to(0.0, (runs, 1)), None,
                          1.0, h=1e-3)


def test_adaptive_outputs_of_every_step_stop_at_the_memory_limit(monkeypatch):
    """Every accepted step is kept when t_eval is None: the run stops with a reason once they would pass the
    limit (made small here), with what was computed."""
    monkeypatch.setattr(arguments, "memory_limit", lambda: 50_000)
    with pytest.raises(IntegrationError, match="outputs of every step would take more than") as info:
        mb.simulate(simple_pendulum(), [0.1], [0.0], 1e3)
    assert 100 < len(info.value.result) < 300


# ---- the algorithms' arguments ----------------------------------------------------------------------------
def test_model_and_algorithm_arguments_refused():
    model = simple_pendulum()
    z = np.zeros(1)
    for call, element in ((lambda: mb.aba(model, np.array([1j]), z, z), "q"),
                          (lambda: mb.rnea(model, z, z, [1 + 0j]), "a"),
                          (lambda: mb.crba(model, [0.1 + 2j]), "q"),
                          (lambda: mb.aba(model, z, z, z, fext=np.zeros((2, 6)) + 1j), "fext"),
                          (lambda: mb.aba_batch(model, np.zeros((2, 1)) + 1j, np.zeros((2, 1)), np.zeros((2, 1))), "Q"),
                          (lambda: mb.point_position(model, z, 1.7), "body"),
                          (lambda: mb.point_position(model, z, True), "body"),
                          (lambda: mb.point_position(model, z, 1, point=[1j, 0, 0]), "point"),
                          (lambda: mb.aba(model, z, z, z, data="workspace"), "data"),
                          (lambda: mb.aba("pendulum", z, z, z), "model"),
                          (lambda: mb.simulate("pendulum"), "model"),
                          (lambda: mb.simulate(None, method="RK4", h=0.1), "model"),
                          (lambda: mb.simulate_batch(None, np.zeros((2, 1)), h=0.1), "model"),
                          (lambda: mb.energy(model, z, [np.nan + 1j]), "v")):
        with pytest.raises(ModelError) as info:
            call()
        assert info.value.element == element, str(info.value)
