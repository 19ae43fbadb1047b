"""Linearization of a model about an equilibrium or a steady motion, with its constraints eliminated.

The state of the full equations is ``x = (δ, v)``: δ the configuration in the tangent chart at q0
(``q = q0 ⊕ δ``, ``model.integrate``), v the velocities; ``ẋ = F(x) = (δ̇, v̇)`` with v̇ from the model's
constrained equations (the tree's equations plus the constraint rows with multipliers, seed 001 §3.6; no
drift control). The constraints tie the components together: position rows ``f(q) = 0`` (linearized
``G_h δ = 0``) and all rows at the velocity level ``G(q) v = 0`` (linearized ``G δv + D δ = 0`` with
``D = ∂(G(q) v0)/∂δ``). With a choice of independent coordinates δ_i and independent speeds u (the dependent
ones follow from the constraint Jacobians), the reduced state is ``y = (δ_i, u)`` and

    ẏ = S J T y,      J = ∂F/∂x at (0, v0),

T the map y → x along the linearized constraints and S the selection of the independent components. This is
the coordinate-partitioning linearization of constrained (holonomic and nonholonomic) systems: SPACAR's
semi-analytic linearization and AutoSim's numeric one, which seed 003 §7 uses to check the bicycle
benchmark, are of this kind. The derivatives in J are exact: for a model without constraints (every coordinate
independent, S and T identities) the analytical derivatives of the dynamics (``mb.aba_derivatives`` with the
model's applied forces: Carpentier & Mansard's recursions, ``kernels/derivatives*.py``), with the chart
kinematics' ∂δ̇/∂δ = −½ ad_v0 and ∂δ̇/∂v = E; otherwise complex steps through the compiled kernels
(``F(x0 + i h T e_k)``, h = 1e-30), no difference quotient. ``Linearization.info["path"]`` says which ran:
``"analytic"``, ``"complex step"`` or ``"central differences"``.

For a steady motion (v0 ≠ 0) the coordinates that move (the bicycle's position, heading and wheel angles) are
cyclic: no equation depends on them, so they add zero eigenvalues and leave the others alone.
"""
import weakref
from dataclasses import dataclass, field

import numpy as np

from multibody.algorithms.derivatives import aba_derivatives
from multibody.errors import ConstraintError, ModelError
from multibody.kernels.kinematics import FREE, SPHERICAL

__all__ = ["linearize", "Linearization", "consistent_velocities", "modes"]


#: model -> (velocity names, the state names of a linearization without constraints, [(first velocity index,
#: joint code) of each Spherical and Free joint]): what every linearization of a model reads, made once (a sweep
#: linearizes the same model many times)
_MODEL_INFO = weakref.WeakKeyDictionary()


def _model_info(model):
    info = _MODEL_INFO.get(model)
    if info is None:
        names = list(model.velocity_names())
        info = (names, names + [f"d({n})" for n in names],
                [(j.v_slice.start, j.joint.code) for j in model.joints[1:] if j.joint.code in (SPHERICAL, FREE)])
        _MODEL_INFO[model] = info
    return info


def _names(model):
    return list(_model_info(model)[0])


def _indices(model, names, what):
    if not names:
        return []
    all_names = _model_info(model)[0]
    out = []
    for n in names:
        if n not in all_names:
            raise ModelError(f"{what}: '{n}' is not a velocity coordinate of model '{model.name}' (coordinates: "
                             f"{', '.join(all_names)})", element=str(n))
        out.append(all_names.index(n))
    if len(set(out)) != len(out):
        raise ModelError(f"{what}: a coordinate is named twice in {list(names)}", element=what)
    return out


def _rows(model, q, v, t=0.0):
    """All constraint rows at (q, v): residuals, Jacobian G (m × nv), levels; the Python rows included."""
    from multibody.analysis.derivatives import analysis_work
    from multibody.rows.constraint_rows import ConstraintRows

    rows = ConstraintRows(model, work=analysis_work(model))
    f, G, _ = rows.evaluate(q, v, t)
    return f, G, rows.level[:len(f)]


def consistent_velocities(model, q, fixed, t=0.0):
    """The velocities at q that satisfy every constraint row (G v = 0) with the components named in ``fixed``
    (velocity names → values) given; ``ConstraintError`` when those do not determine the others."""
    nv = model.nv
    idx = _indices(model, list(fixed), "fixed speeds")
    _, G, _ = _rows(model, np.asarray(q, float), np.zeros(nv), t)
    dep = [k for k in range(nv) if k not in idx]
    v = np.zeros(nv)
    v[idx] = [float(fixed[n]) for n in fixed]
    if G.shape[0]:
        Gd = G[:, dep]
        if np.linalg.matrix_rank(Gd) < len(dep):
            raise ConstraintError(f"model '{model.name}': the speeds {list(fixed)} do not determine the others "
                                  f"through the constraints (rank {np.linalg.matrix_rank(Gd)} < {len(dep)})",
                                  joints=[c.name for c in model.constraints])
        v[dep] = np.linalg.lstsq(Gd, -G[:, idx] @ v[idx], rcond=None)[0]
    elif dep:
        raise ConstraintError(f"model '{model.name}' has no constraints: give every speed", joints=())
    return v


def _partition(G, prefer, n, what):
    """Independent columns of the constraint Jacobian G (m × n) for ``prefer`` (explicit indices) or chosen by
    QR with column pivoting (the columns that can be dependent, pivoted first, are made dependent)."""
    m_rank = np.linalg.matrix_rank(G) if G.size else 0
    if prefer is not None:
        ind = list(prefer)
        dep = [k for k in range(n) if k not in ind]
        if len(dep) != m_rank or (dep and np.linalg.matrix_rank(G[:, dep]) < len(dep)):
            raise ConstraintError(f"{what}: the independent coordinates {ind} leave {len(dep)} dependent ones, but "
                                  f"the constraints determine {m_rank} (their Jacobian has rank {m_rank}) or the "
                                  "dependent block is singular: choose other independent coordinates", joints=())
        return ind, dep
    if m_rank == 0:
        return list(range(n)), []
    import scipy.linalg as sla

    _, _, piv = sla.qr(G, pivoting=True)
    dep = sorted(piv[:m_rank].tolist())
    return [k for k in range(n) if k not in dep], dep


@dataclass
class Linearization:
    """``ẏ = A y + B u_in`` with named states (``state_names``) and inputs (``input_names``); the state is the
    independent coordinates' perturbations followed by the independent speeds' perturbations."""

    A: np.ndarray
    B: np.ndarray
    state_names: list
    input_names: list
    info: dict = field(default_factory=dict)

    def eigenvalues(self):
        return np.linalg.eigvals(self.A)

    def select(self, states):
        """The sub-system of the named states (rows and columns of A, rows of B)."""
        idx = []
        for s in states:
            if s not in self.state_names:
                raise ModelError(f"no state '{s}' in the linearization (states: {', '.join(self.state_names)})",
                                 element=str(s))
            idx.append(self.state_names.index(s))
        return Linearization(self.A[np.ix_(idx, idx)], self.B[idx], [self.state_names[i] for i in idx],
                             list(self.input_names), dict(self.info))

    def modes(self):
        """See :func:`modes`."""
        return modes(self)


def modes(lin):
    """Eigenvalues of ``lin.A`` with their natural frequencies |s| (rad/s), damped frequencies |Im s|, damping
    ratios −Re s/|s| and shapes (eigenvectors as dicts of the named states, scaled to a largest entry of 1)."""
    w, V = np.linalg.eig(lin.A)
    order = np.argsort(-w.real)
    out = []
    for k in order:
        s = w[k]
        vec = V[:, k]
        vec = vec / vec[np.argmax(np.abs(vec))]
        nat = abs(s)
        out.append(dict(eigenvalue=complex(s), natural_frequency=float(nat), damped_frequency=float(abs(s.imag)),
                        damping_ratio=float(-s.real / nat) if nat > 0 else float("nan"),
                        shape=dict(zip(lin.state_names, vec))))
    return out


def linearize(model, q0, v0, coordinates=None, speeds=None, inputs=(), t=0.0, derivative="auto"):
    """Linearize the model's equations about (q0, v0) (see the module docstring).

    ``coordinates``: velocity names (``model.velocity_names()``) of the independent configuration coordinates
    of the tangent chart at q0; ``speeds``: those of the independent speeds; default for both: chosen by QR
    with column pivoting on the constraint Jacobian. ``inputs``: velocity names on which a generalized force
    acts (the columns of B). (q0, v0) must satisfy the constraints (``ConstraintError`` naming them otherwise).
    ``derivative``: ``"auto"`` (the analytical derivatives for a model without constraints, complex steps
    otherwise), ``"analytic"`` (a ``ModelError`` for a model with constraints), ``"complex"`` or ``"central"``
    (central differences, step 1e-6: an approximate check). Returns a :class:`Linearization` with states
    ``"<name>"`` for the coordinates and ``"d(<name>)"`` for the speeds; ``info["path"]`` names the method
    that ran.
    """
    from multibody.analysis.derivatives import directional_derivatives, reduced_dynamics
    from multibody.model.data import default_data, refuse_general_joints

    if getattr(model, "base_motion", None) is not None:
        raise ModelError(f"linearize: model '{model.name}' has a moving base (base motion), whose equations depend on "
                         "time; linearization about a time-varying base is not supported", element="base motion")
    if default_data(model).fill is not None:
        refuse_general_joints(model, "linearize (complex steps through the kernels)")
    q0 = np.array(q0, dtype=float).reshape(-1)
    v0 = np.array(v0, dtype=float).reshape(-1)
    if q0.shape != (model.nq,) or v0.shape != (model.nv,):
        raise ModelError(f"linearize: q0 must have {model.nq} and v0 {model.nv} entries, got {q0.shape} and {v0.shape}",
                         element="q0/v0")
    if not (np.isfinite(q0).all() and np.isfinite(v0).all()):
        raise ModelError("linearize: the state must be finite", element="q0/v0")
    if derivative not in ("auto", "analytic", "complex", "central"):
        raise ModelError(f"derivative must be 'auto', 'analytic', 'complex' or 'central', got {derivative!r}",
                         element="derivative")
    if derivative in ("auto", "analytic"):
        if not model.constraints:
            return _linearize_analytic(model, q0, v0, coordinates, speeds, inputs, derivative, t)
        if derivative == "analytic":
            raise ModelError(f"linearize: model '{model.name}' has constraints "
                             f"({', '.join(c.name for c in model.constraints)}), whose elimination the analytical "
                             "derivatives do not do: use derivative='auto' or 'complex'", element="derivative")
    method = "complex" if derivative == "auto" else derivative
    nv = model.nv
    names = _names(model)
    f, G, level = _rows(model, q0, v0, t)
    pos = level == 2
    viol = np.abs(f).max(initial=0.0)
    rate = np.abs(G @ v0).max(initial=0.0)
    if viol > 1e-9 or rate > 1e-9:
        bad = [c.name for c in model.constraints]
        raise ConstraintError(f"model '{model.name}': the linearization point violates the constraints (position "
                              f"residual {viol:.2e}, velocity residual {rate:.2e}) in {', '.join(bad)}", joints=bad)
    Gh = G[pos]
    ci, cd = _partition(Gh, None if coordinates is None else _indices(model, coordinates, "coordinates"), nv,
                        "coordinates")
    si, sd = _partition(G, None if speeds is None else _indices(model, speeds, "speeds"), nv, "speeds")
    inp = _indices(model, list(inputs), "inputs")
    # δ = Pq δ_i (G_h δ = 0)
    Pq = np.zeros((nv, len(ci)))
    Pq[ci, np.arange(len(ci))] = 1.0
    if cd:
        Pq[cd] = -np.linalg.solve(Gh[:, cd], Gh[:, ci]) if Gh[:, cd].shape[0] == len(cd) else \
            -np.linalg.lstsq(Gh[:, cd], Gh[:, ci], rcond=None)[0]
    # D = ∂(G(q0 ⊕ δ) v0)/∂δ: the velocity residual's change with the configuration
    F = reduced_dynamics(model, q0, v0, t)
    D = directional_derivatives(F.velocity_residual, np.zeros(nv), np.eye(nv), method)
    # δv = Pv u + K δ_i (G δv + D δ = 0)
    Pv = np.zeros((nv, len(si)))
    Pv[si, np.arange(len(si))] = 1.0
    K = np.zeros((nv, len(ci)))
    if sd:
        Gd = G[:, sd]
        sol = np.linalg.lstsq(Gd, -np.hstack([G[:, si], D @ Pq]), rcond=None)[0]
        Pv[sd] = sol[:, :len(si)]
        K[sd] = sol[:, len(si):]
    ny = len(ci) + len(si)
    T = np.zeros((2 * nv, ny))
    T[:nv, :len(ci)] = Pq
    T[nv:, :len(ci)] = K
    T[nv:, len(ci):] = Pv
    J = directional_derivatives(F.state_derivative, np.concatenate([np.zeros(nv), v0]), T, method)
    S = np.concatenate([ci, nv + np.array(si, dtype=int)]).astype(int)
    A = J[S]
    # inputs: a generalized force on coordinate k enters v̇ through the constrained equations
    Bfull = np.column_stack([F.input_response(k) for k in inp]) if inp else np.zeros((2 * nv, 0))
    B = Bfull[S]
    state_names = [names[k] for k in ci] + [f"d({names[k]})" for k in si]
    return Linearization(A, B, state_names, [names[k] for k in inp],
                         info=dict(dependent_coordinates=[names[k] for k in cd],
                                   dependent_speeds=[names[k] for k in sd], derivative=derivative,
                                   path=_PATHS[method]))


_PATHS = {"complex": "complex step", "central": "central differences"}


def _skew(w, scale):
    return scale * np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _linearize_analytic(model, q0, v0, coordinates, speeds, inputs, derivative, t=0.0):
    """:func:`linearize` of a model without constraints by the analytical derivatives (module docstring): J =
    [[∂δ̇/∂δ, E], [∂q̈/∂q, ∂q̈/∂q̇]] with the model's applied forces, ∂δ̇/∂δ = −½ ad_v0 of the chart kinematics
    δ̇ = v + ½ ad_δ v (``ReducedDynamics``) on the Spherical (−½ [ω]) and Free joints (−½ [[ω], 0; [v], [ω]] for
    the twist [ω; v]), zero elsewhere."""
    nv = model.nv
    names, states, lie = _model_info(model)
    ci = list(range(nv)) if coordinates is None else _partition(np.zeros((0, nv)), _indices(model, coordinates,
                                                                                             "coordinates"),
                                                                 nv, "coordinates")[0]
    si = list(range(nv)) if speeds is None else _partition(np.zeros((0, nv)), _indices(model, speeds, "speeds"), nv,
                                                           "speeds")[0]
    inp = _indices(model, inputs, "inputs")
    da_dq, da_dv, Minv = aba_derivatives(model, q0, v0, np.zeros(nv), applied=True, t=t)
    J = np.zeros((2 * nv, 2 * nv))
    np.fill_diagonal(J[:nv, nv:], 1.0)
    J[nv:, :nv] = da_dq
    J[nv:, nv:] = da_dv
    for k, code in lie:
        W = _skew(v0[k:k + 3], -0.5)
        J[k:k + 3, k:k + 3] = W
        if code == FREE:
            J[k + 3:k + 6, k:k + 3] = _skew(v0[k + 3:k + 6], -0.5)
            J[k + 3:k + 6, k + 3:k + 6] = W
    B = np.zeros((2 * nv, len(inp)))
    B[nv:] = Minv[:, inp]
    if coordinates is not None or speeds is not None:
        S = np.concatenate([np.asarray(ci, dtype=int), nv + np.asarray(si, dtype=int)])
        J = J[np.ix_(S, S)]
        B = B[S]
        states = [names[k] for k in ci] + [f"d({names[k]})" for k in si]
    return Linearization(J, B, list(states), [names[k] for k in inp],
                         info=dict(dependent_coordinates=[], dependent_speeds=[], derivative=derivative,
                                   path="analytic"))
