"""The centrifugal / Coriolis / gyroscopic split of the generalized inertial forces (seed 004), numerically.

Telegin's formulas (statement 1, eqs. 2–5) need only the mass matrix H(q) and its partial derivatives
∂H/∂q_k. ``telegin_split`` (:mod:`multibody.symbolic.telegin`) evaluates them on arrays — of floats here, of
polynomials in :mod:`multibody.symbolic.inertial_forces` (the same code serves both). :func:`mass_matrix_derivatives`
gives H and the exact ∂H/∂q_k of a numeric model from one pass of the composite-rigid-body kernel
(``kernels/crba.py``), by differentiating its ground-frame recursion analytically: a model too large for
sympy gets the Christoffel symbols (:func:`christoffel_symbols`) and the three groups of forces
(:func:`numeric_split`) at any state, with the zero-power check of the gyroscopic forces.

Derivatives of the CRBA (ground frame, seed 001 eq. 3.167 / RBDA Table 6.2). With S_i the ground-frame
motion-subspace column of velocity coordinate i and I^c_b the composite inertia of the subtree of body b,
H_ij = S_iᵀ I^c_b(j) S_j when i ≼ j (i is j or precedes it on the path to the ground; the columns of one
joint are ordered as the joint composes its motions). A change of q_k moves every column and inertia of
its subtree rigidly with the twist S_k (∂S/∂q_k = S_k × S, ∂I/∂q_k = S_k ×* I − I S_k ×), hence, for i ≼ j:

    ∂H_ij/∂q_k = S_iᵀ (S_k ×*) I^c_b(j) S_j                     if i ≺ k ≼ j,
               = S_iᵀ (S_k ×* I^c_b(k) − I^c_b(k) S_k ×) S_j     if j ≺ k,
               = 0                                               otherwise (k ≼ i, or k off the path of j).

Example
-------
>>> import numpy as np
>>> from multibody.systems import manipulators
>>> model = manipulators.polar()
>>> split = numeric_split(model, np.array([0.3, 0.5]), np.array([1.0, 2.0]))
>>> bool(abs(split.gyroscopic_power) < 1e-12)
True
"""
from dataclasses import dataclass

import numpy as np

from multibody.symbolic.telegin import check_tree, permutation, telegin_split

__all__ = ["mass_matrix_derivatives", "christoffel_symbols", "numeric_split", "NumericSplit"]


def _cross_matrix(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _motion_cross_matrix(s):
    """crm(s) = [[ω×, 0], [v×, ω×]] for s = [ω; v] (RBDA eq. 2.31)."""
    W, V = _cross_matrix(s[:3]), _cross_matrix(s[3:])
    return np.block([[W, np.zeros((3, 3))], [V, W]])


def _precedence(model):
    """before[k, j]: velocity coordinate j precedes k (j ≺ k): j belongs to a joint on the path from k's
    body to the ground, or to k's own joint before k; and body[k], the body each coordinate moves."""
    nv = model.nv
    upto = np.zeros((model.nbodies + 1, nv), dtype=bool)  # coordinates of body i and of its ancestors
    before = np.zeros((nv, nv), dtype=bool)
    body = np.zeros(nv, dtype=np.int64)
    for i in range(1, model.nbodies + 1):
        iv, n = model.idx_v[i], model.nv_j[i]
        body[iv:iv + n] = i
        for k in range(iv, iv + n):
            before[k] = upto[model.parent[i]]
            before[k, iv:k] = True
        upto[i] = upto[model.parent[i]]
        upto[i, iv:iv + n] = True
    return before, body


def _spatial_inertias(packed):
    """(n, 6, 6) spatial inertias [[I, h̃], [h̃ᵀ, m E]] from CRBA's packed rows (m, h, I as xx xy xz yy yz zz)
    (``kernels/spatial.store_rigid_inertia``)."""
    n = packed.shape[0]
    m, h, I6 = packed[:, 0], packed[:, 1:4], packed[:, 4:10]
    out = np.zeros((n, 6, 6))
    sym = np.array([[0, 1, 2], [1, 3, 4], [2, 4, 5]])
    out[:, :3, :3] = I6[:, sym]
    hx = np.zeros((n, 3, 3))
    hx[:, 0, 1], hx[:, 0, 2], hx[:, 1, 2] = -h[:, 2], h[:, 1], -h[:, 0]
    hx -= np.transpose(hx, (0, 2, 1))
    out[:, :3, 3:] = hx
    out[:, 3:, :3] = np.transpose(hx, (0, 2, 1))
    out[:, 3:, 3:] = m[:, None, None] * np.eye(3)
    return out


def mass_matrix_derivatives(model, q, data=None):
    """``(H, dH)``: the mass matrix M(q) and its exact partial derivatives ``dH[k] = ∂H/∂q_k`` (nv, nv, nv),
    from the ground-frame motion subspaces and composite inertias of one CRBA pass (``kernels/crba.py``;
    the formulas are in the module docstring). ``model`` must be numeric, a tree with plain coordinates."""
    from multibody.algorithms.dynamics import as_vector
    from multibody.model.data import Data
    from multibody.kernels.crba import crba_kernel
    from multibody.kernels.kinematics import B_IA, WB_WIDTH, WD_WIDTH

    check_tree(model)
    d = Data(model) if data is None else data
    q = as_vector(q, model.nq, "q", model)
    n, nv = model.nbodies + 1, model.nv
    H = np.empty((nv, nv))
    crba_kernel(d.mi, d.mf, q, d.work, H)
    wb = d.work[:n * WB_WIDTH].reshape(n, WB_WIDTH)
    S = d.work[n * WB_WIDTH:n * WB_WIDTH + nv * WD_WIDTH].reshape(nv, WD_WIDTH)[:, :6].T.copy()  # (6, nv)
    Ic = _spatial_inertias(wb[:, B_IA:B_IA + 10])  # (n, 6, 6) composite inertias, ground frame
    before, body = _precedence(model)
    F = np.einsum("jab,bj->aj", Ic[body], S)  # F[:, j] = I^c_b(j) S_j
    dH = np.zeros((nv, nv, nv))
    for k in range(nv):
        anc = before[k]
        desc = before[:, k].copy()
        desc[k] = True
        crm = _motion_cross_matrix(S[:, k])
        crf = -crm.T
        Ick = Ic[body[k]]
        Sa = S[:, anc]
        block = Sa.T @ (crf @ F[:, desc])  # i ≺ k ≼ j
        dH[k][np.ix_(anc, desc)] = block
        dH[k][np.ix_(desc, anc)] = block.T
        dH[k][np.ix_(anc, anc)] = Sa.T @ (crf @ Ick - Ick @ crm) @ Sa  # j ≺ k
    return H, dH


def christoffel_symbols(model, q, data=None):
    """Γ[i, j, k] = ½ (∂H_ij/∂q_k + ∂H_ik/∂q_j − ∂H_jk/∂q_i), the Christoffel symbols of the first kind:
    the velocity-dependent inertial force is h_i = Σ_jk Γ_ijk q̇_j q̇_k (seed 004, notes B.3: h_c + h_o + h_g)."""
    return _christoffel(mass_matrix_derivatives(model, q, data)[1])


def _christoffel(dH):
    return 0.5 * (np.transpose(dH, (1, 2, 0)) + np.transpose(dH, (1, 0, 2)) - dH)


@dataclass(frozen=True)
class NumericSplit:
    """The seed 004 split at one state (:func:`numeric_split`), in the coordinate ``order`` (indices).

    ``mass_matrix``, ``derivatives`` (``[k] = ∂H/∂q_k``), ``centrifugal``, ``coriolis``, ``gyroscopic``,
    ``shared`` (h^g_o, eq. 10), ``total`` = Σ Γ_ijk q̇_j q̇_k, ``gyroscopic_power`` = q̇ᵀ h_g (zero, eq. 5) and
    ``power_residual`` = |q̇ᵀ h_g| / Σ_i |q̇_i| (|h_ci| + |h_oi| + |h_gi|), the rounding of that zero relative to
    the powers of all three groups; all in ``order``."""

    order: np.ndarray
    qd: np.ndarray
    mass_matrix: np.ndarray
    derivatives: np.ndarray
    centrifugal: np.ndarray
    coriolis: np.ndarray
    gyroscopic: np.ndarray
    shared: np.ndarray
    total: np.ndarray
    gyroscopic_power: float
    power_residual: float


def numeric_split(model, q, qd, order=None, data=None):
    """The centrifugal / Coriolis / gyroscopic split (seed 004, statement 1, eqs. 2–5) of a numeric model at
    (q, q̇), from the exact derivatives of the CRBA (:func:`mass_matrix_derivatives`); ``order`` as in
    ``symbolic.telegin.permutation`` (default: the model's base-to-tip order). The numeric twin of
    ``multibody.symbolic.split_inertial_forces``."""
    p = permutation(model, order)
    H, dH = mass_matrix_derivatives(model, q, data)
    qd = np.asarray(qd, dtype=float).reshape(model.nv)[p]
    H = H[np.ix_(p, p)]
    dH = dH[np.ix_(p, p, p)]
    c, o, g, shared = telegin_split(H, dH, qd)
    total = np.einsum("ijk,j,k->i", _christoffel(dH), qd, qd)
    power = float(qd @ g)
    scale = float(np.abs(qd) @ (np.abs(c) + np.abs(o) + np.abs(g)))
    return NumericSplit(p, qd, H, dH, c, o, g, shared, total, power, abs(power) / scale if scale else 0.0)
