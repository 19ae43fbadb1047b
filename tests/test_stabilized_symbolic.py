"""``simulate(model, ..., formulation="stabilized", symbolic=True)``: the stabilized DAE of seed 000 (Sec. 1–2)
derived symbolically from the Model and compiled (``multibody.symbolic.stabilized``), checked against the generic
path (the same Model through the compiled constraint kernels), against the hand-written hoop equations
(``reference_hoop.py``) and against the paper's Sec. 4 bound.

Tolerances. Both paths compute the same A, φ and ẋ in different orders of floating-point operations, so one
evaluation differs by a few roundings u = 2.2e-16 of the terms, amplified by the solve of A N = −φ (κ(A)) and,
in φ, by the gains: λ² f of a position row carries the rounding of f's terms (≤ 10 in size for these models at
|q| ≤ 1) times λ², which reaches ẋ through B (``|B|``): the bound ``1000 κ(A) u (max|ẋ| + 10 λ² |B|)`` below
(1000 for the operation counts of A, φ, the solve and ẋ, with the cancellations of the profile polynomial).
For the rolling hoop max|ẋ| is replaced by the size of the terms of θ̈ where they are larger: θ̈ is the tangential
acceleration divided by r, and that acceleration's terms, g and v² times the profile's curvature, cancel to a
much smaller sum (measured: the difference reaches 780 κ u max|ẋ| at a state where |ẋ| = 200, a twentieth of
(g + v²|p''|)/r).
Along a run these
differences add up at most linearly: n steps of size h change the state by ≤ n h δ (the residual directions are
damped by λ, the motion along the manifold is neutral), δ ≈ 1e-13 max|ẋ| ≈ 5e-11 for the hoop: ≤ 1e-11 over
0.2 time units, so 1e-9 keeps a factor 100."""
import sys

import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.errors import ModelError
from multibody.formulations.stabilized import stabilized_system
from multibody.kernels.stabilization import DLS_EPS_REL, shifted_energy_into, solve_shifted_energy
from multibody.systems import hoop_on_profile as H

U = np.finfo(float).eps


@pytest.fixture(scope="module")
def model():
    return H.hoop_model()


def _kappa_B(system, x):
    """cond(A) and max|B| of the generated system at x."""
    mod = sys.modules[system.rhs.py_func.__module__]
    m = mod.N_REACTIONS
    A, phi = np.empty((m, m)), np.empty(m)
    p = system.params
    mod.eval_A_phi(x, p, p[mod.COEF_OFFSET:mod.SOLVER_OFFSET], A, phi)
    dae = mod.dae
    B = np.array(sp.lambdify([dae.states, dae.params], dae.B, "numpy")(x, p[:len(dae.params)]), dtype=float)
    return np.linalg.cond(A), np.abs(B).max()


def _compare_rhs(model, states, energy, lams=(0.0, 1e3), terms=0.0):
    """Generated and generic right-hand sides at ``states`` to the rounding bound of the module docstring;
    ``terms``: the size of the terms of ẋ before they cancel, where larger than max|ẋ|."""
    for q, v in states:
        for lam in lams:
            kw = dict(energy_constraint=energy, lam=lam, consistent=False)
            gen = stabilized_system(model, q, v, **kw)
            sym = stabilized_system(model, q, v, symbolic=True, **kw)
            assert np.array_equal(gen.x0, sym.x0)
            a, b = gen.fun(0.0, gen.x0), sym.fun(0.0, sym.x0)
            kappa, Bmax = _kappa_B(sym, sym.x0)
            tol = 1000 * kappa * U * (max(np.abs(a).max(), terms) + 10 * lam**2 * Bmax)
            assert np.abs(a - b).max() <= tol, (lam, a - b, tol)


def test_hoop_rhs_equals_generic_and_seed_system(model):
    """The generated right-hand side equals the generic one at consistent and perturbed states (every residual
    nonzero: f1, f3, f4, energy), λ = 0 and 1e3, to the rounding bound; its DAE is seed 000's: relative
    degrees (2, 1, 1, 1), the U term of ḟ1 dropped (Sec. 3), A(X) with the structure of eq. 3.11."""
    from multibody.symbolic.stabilized import stabilized_dae

    pert = np.array([1e-5, -2e-5, 0.3, 3e-4, -1e-4, 2e-2])
    states = []
    for xa, speed, k in [(-0.8, 1.1, 0), (-0.2, -2.0, 1), (0.4, 0.3, 1), (0.9, -0.05, 0)]:
        q, v = H.initial_state(model, xa, speed)
        states.append((q + k * pert[:3], v + k * pert[3:]))
    # θ̈'s terms: (g + v² |p''|)/r, |p''| ≤ 9.9 on |x| ≤ 1
    r = model.constraint("contact").radius
    terms = max((9.81 + float(v[:2] @ v[:2]) * 9.9) / r for _, v in states)
    _compare_rhs(model, states, energy=True, terms=terms)
    _compare_rhs(model, states[:2], energy=False, terms=terms)
    sd = stabilized_dae(model, True)
    assert sd.names == ("contact.contact", "contact.no_slip", "contact.tangency", "energy")
    assert sd.dae.relative_degrees == (2, 1, 1, 1)
    assert sd.dae.dropped == [("contact.contact", 1)]
    A = sd.dae.A
    assert A[2, 0] == 0 and A[2, 1] == 0 and A[2, 3] == 0 and A[3, 2] == 0   # tangency row: d U only


def _layout(res):
    return (sorted(res.residuals), {k: np.shape(v) for k, v in res.reactions.items()}, sorted(res.series),
            sorted(res.energy), sorted(res.info["relative_degrees"].items()), sorted(res.info["lambda"].items()))


def test_hoop_trajectory_equals_generic(model):
    """Same Model, λ = 1e3, RK2 at h = 1e-5 over 0.2 time units (20000 steps) from a moving start: the same
    trajectory, residuals, reactions and energies to 1e-9 (module docstring), the same Result layout."""
    q0, v0 = H.initial_state(model, -0.5, 0.8)
    kw = dict(formulation="stabilized", energy_constraint=True, lam=1e3, method="RK2", h=1e-5, n_out=201)
    gen = mb.simulate(model, q0, v0, 0.2, **kw)
    sym = mb.simulate(model, q0, v0, 0.2, symbolic=True, **kw)
    assert sym.info["symbolic"] and not gen.info["symbolic"] and sym.info["path"] == "compiled"
    assert _layout(sym) == _layout(gen)
    assert sym.info["E0"] == gen.info["E0"]
    assert np.abs(sym.q - gen.q).max() < 1e-9 and np.abs(sym.v - gen.v).max() < 1e-9
    for k in gen.residuals:
        assert np.abs(sym.residuals[k] - gen.residuals[k]).max() < 1e-9, k
    for k in gen.series:
        assert np.abs(sym.series[k] - gen.series[k]).max() < 1e-9, k
    for k in gen.reactions:   # reactions ~ M g = 10 (λ_contact), 1e3 (U): relative 1e-9
        scale = max(1.0, float(np.abs(gen.reactions[k]).max()))
        assert np.abs(sym.reactions[k] - gen.reactions[k]).max() < 1e-9 * scale, k
    for k in gen.energy:
        assert np.abs(sym.energy[k] - gen.energy[k]).max() < 1e-9, k
    # the adaptive path too (DOP853 steps from Python): a few steps, the same states to its tolerance
    kw = dict(formulation="stabilized", energy_constraint=True, lam=10.0, method="DOP853", rtol=1e-10, atol=1e-12,
              n_out=11)
    gen = mb.simulate(model, q0, v0, 0.05, **kw)
    sym = mb.simulate(model, q0, v0, 0.05, symbolic=True, **kw)
    assert np.abs(sym.q - gen.q).max() < 1e-9


def _sec4(model, t_end):
    q0, v0 = H.initial_state(model, -0.9, 0.0)
    nsteps = int(round(t_end / 1e-5))
    res = mb.simulate(model, q0, v0, t_end, formulation="stabilized", energy_constraint=True, lam=1e3,
                      method="RK2", h=1e-5, n_out=nsteps // 10 + 1, symbolic=True)
    half = res.t >= t_end / 2
    assert np.all(np.isfinite(res.q))
    return {k: float(np.abs(v[half]).max()) for k, v in res.residuals.items()}, res


def test_sec4_bound_symbolic(model):
    """Seed 000, Sec. 4: RK2, h = 1e-5, λ_i = 1e3 → max_i |f_i| < 7e-9, over the second half of 3.4 time units
    from rest at x_a = −0.9 (turning points at t ≈ 0, 1.64, 3.28)."""
    by, res = _sec4(model, 3.4)
    assert np.sum(np.diff(np.sign(res.v[1:, 2])) != 0) >= 2
    assert max(by.values()) < 7e-9, by


@pytest.mark.slow
def test_sec4_bound_symbolic_bench_horizon(model):
    """The same over the benchmark's horizon, 100 time units (1e7 RK2 steps, some 60 passes back and forth):
    max_i |f_i| < 7e-9 over its second half (seed 000, Sec. 4, Fig. 3: t ∈ [86, 101])."""
    by, _ = _sec4(model, 100.0)
    assert max(by.values()) < 7e-9, by


def test_reaction_solver_is_the_generic_one():
    """The generated solve (and ``solve_shifted_energy``) equals the generic path's damped least squares with the
    shifted energy row to 1e-13 relative where A11 is regular, and is that solve where A11 is singular."""
    from multibody.symbolic.stabilized import stabilized_dae

    model = H.hoop_model()
    mod = stabilized_dae(model, True).module()
    solve = mod._solve
    rng = np.random.default_rng(3)
    m = 4
    sp_ = np.array([DLS_EPS_REL, 1e-4, 1.0])
    for case in range(40):
        A = np.zeros((m, m))
        G = rng.normal(size=(2, 3))
        A[:2, :2] = G @ G.T
        A[:2, 2] = rng.normal(size=2)
        A[2, 2] = rng.uniform(0.5, 2.0) if case < 30 else 0.0          # d = 0: A11 singular
        A[:2, 3] = A[3, :2] = rng.normal(size=2)
        A[3, 3] = rng.uniform(0.0, 2.0)
        phi = rng.normal(size=m)
        ref = np.empty(m)
        shifted_energy_into(A, phi, sp_[:1], sp_[1], m, 1, ref, np.empty(m), np.empty(m), np.empty((2 * m, m + 1)))
        for fn in (solve, solve_shifted_energy):
            N = np.empty(m)
            fn(A.copy(), phi.copy(), np.zeros(1), sp_, N)
            assert np.all(np.isfinite(N))
            assert np.abs(N - ref).max() <= 1e-13 * np.abs(ref).max() * np.linalg.cond(A[:3, :3]) if case < 30 \
                else np.array_equal(N, ref)


def _bead_model(com=(0.1, 0.0, 0.05), constraint="plane"):
    """A body on a planar joint (q-dependent H: the centre of mass off the joint axis) with a point of it on an
    inclined line (``PointOnPlane``) or on a parabola (``PointOnProfile``)."""
    b = mb.ModelBuilder(gravity=(0.0, 0.0, -9.81), name=f"bead on a {constraint}")
    b.add_body("body", 2.0, com=com, inertia=(0.02, 0.03, 0.04))
    b.add_joint("plane", mb.Planar(), "ground", "body", placement=(H.PLANE_XZ, (0.0, 0.0, 0.0)))
    if constraint == "plane":
        beta = 0.3
        b.add_constraint(mb.PointOnPlane("slide", "body", point=(0.2, 0.0, 0.0),
                                         normal=(np.sin(beta), 0.0, np.cos(beta))))
    else:
        x = sp.Symbol("x")
        b.add_constraint(mb.PointOnProfile("curve", "body", mb.Profile.graph(x**2 / 2, x), point=(0.2, 0.0, 0.0)))
    return b.build()


@pytest.mark.parametrize("constraint", ["plane", "profile"])
def test_holonomic_rows_equal_generic(constraint):
    """``PointOnPlane`` and ``PointOnProfile`` rows, a mass matrix that depends on q (inverted symbolically): the
    generated right-hand side equals the generic one at random states, with and without the energy row."""
    model = _bead_model(constraint=constraint)
    rng = np.random.default_rng(5)
    states = [(rng.uniform(-0.5, 0.5, 3), rng.normal(size=3)) for _ in range(3)]
    _compare_rhs(model, states, energy=True)
    _compare_rhs(model, states, energy=False)


def test_errors():
    """What the derivation cannot write is refused by name: a constraint without symbolic rows, applied forces
    other than gravity, tau."""
    b = mb.ModelBuilder()
    b.add_body("disc", 1.0, inertia=(0.1, 0.1, 0.2))
    b.add_joint("free", mb.Free(), "ground", "disc")
    b.add_constraint(mb.RollingDisc("roll", "disc", radius=0.3))
    model = b.build()
    with pytest.raises(ModelError, match="quaternion|plain"):
        mb.simulate(model, t_end=0.01, formulation="stabilized", symbolic=True, method="RK2", h=1e-3,
                    consistent=False)
    b = mb.ModelBuilder()
    b.add_body("bob", 1.0, com=(0.0, 0.0, -1.0))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "bob")
    b.add_constraint(mb.UserConstraint("user", lambda q, t: [q[0] - 0.1], nrows=1))
    with pytest.raises(ModelError, match="not available with symbolic=True"):
        mb.simulate(b.build(), t_end=0.01, formulation="stabilized", symbolic=True, method="RK2", h=1e-3,
                    consistent=False)
    model = _bead_model()
    with pytest.raises(ModelError, match="tau"):
        mb.simulate(model, t_end=0.01, formulation="stabilized", symbolic=True, method="RK2", h=1e-3,
                    consistent=False, tau=np.ones(3))
    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("body", 2.0, inertia=(0.02, 0.03, 0.04))
    b.add_joint("plane", mb.Planar(), "ground", "body", placement=(H.PLANE_XZ, (0.0, 0.0, 0.0)), damping=0.1)
    b.add_constraint(mb.PointOnPlane("slide", "body", normal=(0.0, 0.0, 1.0)))
    with pytest.raises(ModelError, match="dampers"):
        mb.simulate(b.build(), t_end=0.01, formulation="stabilized", symbolic=True, method="RK2", h=1e-3,
                    consistent=False)
