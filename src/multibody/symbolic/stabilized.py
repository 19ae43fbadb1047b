"""The stabilized DAE of a Model, derived symbolically (seed 000, Sec. 1–2): the generated-code twin of the
``stabilized`` formulation (``simulate(model, ..., formulation="stabilized", symbolic=True)``).

From the Model alone:

* states ``X = [q, v, s]``: the coordinates, their rates (plain coordinates, q̇ = v) and the auxiliary variables
  of the constraints (the contact angle α of a ``RollingOnProfile``, seed 000 eq. 3.6);
* reactions ``N = [λ, U, μ]``: the multipliers of the constraint rows (forces ``Gᵀλ``, G = ∂ḟ/∂v), the rates
  ``U = ṡ`` and, with the energy constraint, the factor μ of the force ``μ H v`` along the momentum — the same
  reactions as the generic path (:class:`multibody.formulations.stabilized.StabilizedModel`);
* ``Ẋ = B(X) N + F(X)`` (eq. 1.1) with ``F = [v; H⁻¹(−h − g); 0]`` and the columns of B ``[0; H⁻¹G_iᵀ; 0]``,
  ``[0; 0; e_k]``, ``[0; v; 0]``, from the model's symbolic equations of motion H(q) q̈ + h + g = τ
  (:func:`multibody.symbolic.equations.equations_of_motion`). H⁻¹ is formed symbolically: exactly (numbers)
  when H is constant, as the adjugate over the determinant when it depends on q (at most
  :data:`MAX_SYMBOLIC_INVERSE` velocity coordinates; beyond, the expressions grow too fast to pay);
* the constraints ``f_i(X) = 0`` (eq. 1.2) from each constraint's own symbolic rows
  (``Constraint.symbolic``) in the generic row order — compiled rows, auxiliary rows, the energy
  ``f_E = T + V − E0`` (eq. 3.3) last — with the relative degrees of their kinds (position rows 2, velocity,
  auxiliary and energy rows 1).

:func:`multibody.symbolic.dae.derive` forms ``A(X)`` and ``φ(X)`` of eq. 2.1 by Lie differentiation (the
coefficient of U in ḟ of a position row, which vanishes on the manifold, is dropped at the lower order as in
seed 000 §3); the energy row is the power balance of a conservative model, ``Ė = (G v)ᵀλ + μ vᵀHv``
(its free term ``vᵀ(½Ḣ − C)v`` vanishes identically), written as the generic path writes it. The module is
generated and compiled by :mod:`multibody.symbolic.dae` (cached on disk by the hash of its source), with the
generic path's reaction solver :func:`multibody.kernels.stabilization.solve_shifted_energy` (damped least
squares and the shifted Schur complement of the energy row).
"""
import numpy as np
import sympy as sp

from multibody.errors import ModelError

__all__ = [
    "MAX_SYMBOLIC_INVERSE",
    "StabilizedDAE",
    "SymbolicKinematics",
    "compile_stabilized",
    "solver_source",
    "stabilized_dae",
]

#: the largest nv whose q-dependent mass matrix is inverted symbolically (adjugate / determinant)
MAX_SYMBOLIC_INVERSE = 3

_CACHE_ATTR = "_multibody_stabilized_dae"


class SymbolicKinematics:
    """Ground positions, directions and angular velocities of a model's bodies as sympy expressions of the
    coordinates ``q`` and rates ``v`` (the symbols of the model's symbolic equations), and the auxiliary
    variables of the constraints: what ``Constraint.symbolic(kin)`` reads. Points and directions are given in
    the user's body frame (``"ground"`` for the ground), as in the constraints' own arguments."""

    def __init__(self, model, eqs):
        from multibody.symbolic.equations import ground_kinematics

        self.model = model
        self.q, self.v = tuple(eqs.q), tuple(eqs.qd)
        A = eqs.algebra

        def ex(p):
            return A.expr(p, tidy=False)

        self._frames = [(sp.Matrix([[ex(x) for x in row] for row in R]), sp.Matrix([ex(x) for x in p]),
                         sp.Matrix([ex(x) for x in w])) for R, p, w in ground_kinematics(eqs)]
        self.aux = []

    def _body(self, name):
        return self.model.body_index(name)

    def point(self, body, r):
        """The ground position of the material point ``r`` (user frame of ``body``)."""
        b = self._body(body)
        R, p, _ = self._frames[b]
        rk = self.model.body_frames[b].act(np.asarray(r, float))
        return p + R * sp.Matrix([sp.Float(x) for x in rk])

    def direction(self, body, n):
        """The ground components of the direction ``n`` fixed in ``body`` (user frame)."""
        b = self._body(body)
        nk = self.model.body_frames[b].rotation @ np.asarray(n, float)
        return self._frames[b][0] * sp.Matrix([sp.Float(x) for x in nk])

    def kernel_frame(self, i):
        """``(R, p)``: the rotation and origin of body i's kernel frame (the frame of the model arrays) in ground
        coordinates."""
        return self._frames[i][:2]

    def angular_velocity(self, body):
        """The angular velocity of ``body`` in ground coordinates."""
        return self._frames[self._body(body)][2]

    def rate(self, expr):
        """d/dt of an expression of q along the motion (q̇ = v)."""
        return sum(sp.diff(expr, qk) * vk for qk, vk in zip(self.q, self.v))

    @staticmethod
    def plane_coordinates(P, origin, e1, e2):
        """``((P − O)·e1, (P − O)·e2)``: the coordinates of a ground point in a plane of the ground."""
        d = [P[k] - float(origin[k]) for k in range(3)]
        return (sum(d[k] * float(e1[k]) for k in range(3)), sum(d[k] * float(e2[k]) for k in range(3)))

    def auxiliary(self, name):
        """A new auxiliary state variable (its symbol)."""
        s = sp.Symbol(f"s{len(self.aux) + 1}")
        self.aux.append((name, s))
        return s


class StabilizedDAE:
    """The derived DAE of a model (:func:`stabilized_dae`): ``dae`` (a :class:`multibody.symbolic.dae.DAE`),
    ``names`` of its rows (generic layout), ``levels`` (relative degrees), ``nrows`` constraint rows (with
    multipliers), ``naux`` auxiliary rows, ``energy`` (0/1: the energy row is last, its parameter E0 the
    DAE's only parameter)."""

    def __init__(self, dae, names, levels, nrows, naux, energy):
        self.dae, self.names, self.levels = dae, tuple(names), tuple(levels)
        self.nrows, self.naux, self.energy = nrows, naux, int(energy)
        self._modules = {}

    def module(self, cache_dir=None):
        """The compiled numba module (:func:`multibody.symbolic.dae.generate_module`) with the reaction solver
        of :func:`solver_source` (generated next to it)."""
        from multibody.symbolic.dae import import_module_source

        if cache_dir not in self._modules:
            src = solver_source(self)
            if src is None:
                solver = ("multibody.kernels.stabilization", "solve_shifted_energy")
            else:
                solver = (import_module_source("_mb_solve_", src, cache_dir).__name__, "solve")
            self._modules[cache_dir] = self.dae.compile(solver=solver, cache_dir=cache_dir)
        return self._modules[cache_dir]


def solver_source(sd):
    """Source of a module with ``solve(A, phi, x, sparams, N)``: :func:`multibody.kernels.stabilization.
    solve_shifted_energy` written out for the sparsity of this DAE's A (straight-line code, no loops).

    The block A11 without the energy row is ``[[S, C], [0, D]]`` here: S = G H⁻¹ Gᵀ (symmetric, positive definite
    for independent rows) and D the diagonal of the auxiliary rows (the tangency depends on q and its own
    auxiliary variable only, seed 000 eq. 3.10), so Gaussian elimination needs no pivoting (on S it is
    Cholesky's, stable); the entries that are zero in the symbolic A are left out. The exactness test and the
    fallback (the damped least squares of the generic path, when A11 is nearly singular) are those of
    ``solve_shifted_energy``. Returns None when A11 lacks that structure (``solve_shifted_energy`` is then used
    as it is)."""
    A = sd.dae.A
    m, re = sd.dae.m, sd.energy
    n1 = m - re
    nr = sd.nrows
    zero = [[A[i, j] == 0 for j in range(m)] for i in range(m)]
    if any(zero[i][j] != zero[j][i] for i in range(nr) for j in range(nr)) or \
            any(not zero[i][j] for i in range(nr, n1) for j in range(n1) if j != i) or \
            any(zero[i][i] for i in range(n1)):
        return None
    names = iter(f"_w{k}" for k in range(10 ** 6))
    lines = []
    U = [[None] * (n1 + 2) for _ in range(n1)]          # [A11 | −φ1 | −a12]: names of the nonzero entries
    for i in range(n1):
        for j in range(n1):
            if not zero[i][j]:
                U[i][j] = next(names)
                lines.append(f"{U[i][j]} = A[{i}, {j}]")
        U[i][n1] = next(names)
        lines.append(f"{U[i][n1]} = -phi[{i}]")
        if re and not zero[i][n1]:
            U[i][n1 + 1] = next(names)
            lines.append(f"{U[i][n1 + 1]} = -A[{i}, {n1}]")
    fro = " + ".join(f"{U[i][j]} * {U[i][j]}" for i in range(n1) for j in range(n1) if U[i][j])
    lines.append(f"fro = {fro}")
    inv = [None] * n1
    for k in range(n1):                                  # elimination, no pivoting
        inv[k] = next(names)
        lines.append(f"{inv[k]} = 1.0 / {U[k][k]}")
        for i in range(k + 1, n1):
            if U[i][k] is None:
                continue
            f = next(names)
            lines.append(f"{f} = {U[i][k]} * {inv[k]}")
            for j in range(k + 1, n1 + 2):
                if U[k][j] is None:
                    continue
                new = next(names)
                lines.append(f"{new} = {U[i][j]} - {f} * {U[k][j]}" if U[i][j] else f"{new} = -{f} * {U[k][j]}")
                U[i][j] = new
    det = " * ".join(U[k][k] for k in range(n1))
    lines.append(f"det = {det}")
    # ε/σ_min ≤ EXACT_WHEN with σ_min ≥ |det| ((n−1)/‖A11‖_F²)^((n−1)/2), squared and multiplied out (no
    # division; false for NaN, A11 = 0 or an underflow: then the general solve)
    lines.append(f"if not (sparams[0] * sparams[0] * fro ** {n1} < EXACT_WHEN * EXACT_WHEN * "
                 f"{float((n1 - 1) ** (n1 - 1))!r} * det * det):")
    lines.append("    _general(A, phi, x, sparams, N)")
    lines.append("    return")
    X = [[None] * n1 for _ in range(2)]
    for c in range(2 if re else 1):                      # back substitution
        for k in range(n1 - 1, -1, -1):
            if U[k][n1 + c] is None and all(U[k][j] is None or X[c][j] is None for j in range(k + 1, n1)):
                continue
            terms = [U[k][n1 + c]] if U[k][n1 + c] else ["0.0"]
            terms += [f" - {U[k][j]} * {X[c][j]}" for j in range(k + 1, n1) if U[k][j] and X[c][j]]
            X[c][k] = next(names)
            lines.append(f"{X[c][k]} = ({''.join(terms)}) * {inv[k]}")
    if re:
        sig = "".join(f" + A[{n1}, {j}] * {X[1][j]}" for j in range(n1) if not zero[n1][j] and X[1][j])
        rho = "".join(f" + A[{n1}, {j}] * {X[0][j]}" for j in range(n1) if not zero[n1][j] and X[0][j])
        lines.append(f"mu = -(phi[{n1}]{rho}) / (A[{n1}, {n1}]{sig} + sparams[1])")
        for j in range(n1):
            x0 = X[0][j] or "0.0"
            lines.append(f"N[{j}] = {x0} + mu * {X[1][j]}" if X[1][j] else f"N[{j}] = {x0}")
        lines.append(f"N[{n1}] = mu")
    else:
        lines += [f"N[{j}] = {X[0][j] or '0.0'}" for j in range(n1)]
    body = "\n".join("    " + line for line in lines)
    return f'''"""Generated by multibody.symbolic.stabilized: the reaction solve of a stabilized DAE written out for its
sparsity (seed 000, eq. 2.9; multibody.kernels.stabilization.solve_shifted_energy) -- do not edit."""
import math
from numba import njit
from multibody.kernels.stabilization import EXACT_WHEN
from multibody.kernels.stabilization import solve_shifted_energy as _general


@njit(cache=True, error_model="numpy")   # a zero pivot gives inf/nan, caught by the test below
def solve(A, phi, x, sparams, N):
    """A N = -phi: A11 by elimination without pivoting, the energy row by the shifted Schur complement."""
{body}
'''


def _inverse(H, nv, name):
    """H⁻¹: numbers when H is constant, else the adjugate over the determinant (nv ≤ MAX_SYMBOLIC_INVERSE)."""
    if not H.free_symbols:
        return sp.Matrix(np.linalg.inv(np.array(H.tolist(), dtype=float)))
    if nv > MAX_SYMBOLIC_INVERSE:
        raise ModelError(f"model '{name}': its mass matrix depends on q and it has nv = {nv} > "
                         f"{MAX_SYMBOLIC_INVERSE} velocity coordinates; the symbolic inverse is not formed for "
                         "symbolic=True (use the generic stabilized formulation)", element=name)
    return H.adjugate() / H.det()


def _check_forces(model):
    """Gravity is the only applied force the derivation writes; refuse the others by name."""
    found = []
    if len(model.spring_k):
        found.append("point-to-point springs")
    for key, what in (("dof_stiffness", "joint springs"), ("dof_damping", "joint dampers"),
                      ("dof_effort", "joint efforts")):
        arr = getattr(model, key, None)
        if arr is not None and np.any(np.asarray(arr, dtype=float)):
            found.append(what)
    if model.torque_callback is not None:
        found.append("a torque callback")
    if found:
        raise ModelError(f"model '{model.name}' has {', '.join(found)}: not available with symbolic=True, which "
                         "writes gravity as the only applied force (use the generic stabilized formulation)",
                         element=model.name)


def stabilized_dae(model, energy_constraint=False):
    """The stabilized DAE of ``model`` (see the module docstring), cached on the model per energy flag.

    Raises ``ModelError`` for what it cannot write: quaternion joints, symbolic (non-numeric) models, applied
    forces other than gravity, constraints without symbolic rows (``Constraint.symbolic``), a q-dependent mass
    matrix with more than :data:`MAX_SYMBOLIC_INVERSE` velocity coordinates."""
    from multibody.symbolic.dae import derive
    from multibody.symbolic.equations import equations_of_motion

    cache = model.__dict__.setdefault(_CACHE_ATTR, {})
    key = bool(energy_constraint)
    if key in cache:
        return cache[key]
    if model.symbolic:
        raise ModelError(f"model '{model.name}' has symbolic parameters; symbolic=True needs numbers",
                         element=model.name)
    if not model.constraints:
        raise ModelError(f"model '{model.name}' has no constraints", element=model.name)
    _check_forces(model)
    eqs = equations_of_motion(model, free=True)
    kin = SymbolicKinematics(model, eqs)
    rows, aux = [], []
    for c in model.constraints:
        r, a = c.symbolic(kin)
        rows += r
        aux += a
    nv = model.nv
    q, v = sp.Matrix(kin.q), sp.Matrix(kin.v)
    s = [sym for _, sym, _ in aux]
    H = eqs.mass_matrix
    Hinv = _inverse(H, nv, model.name)
    nr, na = len(rows), len(aux)
    energy = int(bool(energy_constraint))
    m = nr + na + energy
    n = 2 * nv + na
    # G = ∂ḟ/∂v of every row (position rows: ∂f/∂q, q̇ = v; velocity rows: ∂g/∂v)
    G = sp.Matrix([[sp.diff(f if lvl == 1 else kin.rate(f), vk) for vk in v] for _, lvl, f in rows])
    F = sp.Matrix(list(v) + list(Hinv * (-eqs.bias)) + [0] * na)
    B = sp.zeros(n, m)
    if nr:
        B[nv:2 * nv, :nr] = Hinv * G.T
    for k in range(na):
        B[2 * nv + k, nr + k] = 1
    params, pvals = (), None
    fs = [f for _, _, f in rows] + [f for _, _, f in aux]
    if energy:
        E0 = sp.Symbol("E0")
        params, pvals = (E0,), [0.0]
        B[nv:2 * nv, m - 1] = v
        g = [float(x) for x in model.gravity]
        V = 0
        for i in range(1, model.nbodies + 1):
            R, p = kin.kernel_frame(i)
            hi = sp.Matrix([sp.Float(float(x)) for x in model.h[i]])
            com_moment = float(model.mass[i]) * p + R * hi        # m_i × (centre of mass in ground)
            V -= sum(g[k] * com_moment[k] for k in range(3))
        fs.append((v.T * H * v)[0] / 2 + V - E0)
    names = [nm for nm, _, _ in rows] + [nm for nm, _, _ in aux] + (["energy"] if energy else [])
    levels = [lvl for _, lvl, _ in rows] + [1] * na + [1] * energy
    dae = derive(list(q) + list(v) + s, sp.symbols(f"N1:{m + 1}"), F, B, fs, params=params, param_values=pvals,
                 names=names, relative_degrees=levels, manifold_points=())
    if energy:   # the power balance of a conservative model, as the generic path writes the energy row
        Gv = G * v
        for j in range(m):
            dae.A[m - 1, j] = Gv[j] if j < nr else 0
        dae.A[m - 1, m - 1] = (v.T * H * v)[0]
        dae.phi0[m - 1] = 0
    out = StabilizedDAE(dae, names, levels, nr, na, energy)
    cache[key] = out
    return out


def compile_stabilized(model, energy_constraint=False, cache_dir=None):
    """``(StabilizedDAE, module)``: :func:`stabilized_dae` of ``model`` and its compiled numba module."""
    sd = stabilized_dae(model, energy_constraint)
    return sd, sd.module(cache_dir)
