"""Solvers of the reaction system ``A N = −φ`` of seed 000's stabilization (eqs. 2.6–2.9).

With the reactions taken as controls, every constraint's residual obeys a stable linear law and the reactions
solve ``A(X) N = −φ(X, λ)`` at every evaluation of the right-hand side (``formulations/stabilized.py`` on a
Model, ``formulations/stabilized_dae.py`` on a derived DAE). ``A`` is singular on parts of the manifold (the
hoop's turning points, seed 000 Sec. 3), so the default solve is regularized.

:func:`solve_dls` is the damped least-squares (Tikhonov / Levenberg–Marquardt) solution

    N = argmin ‖A N + φ‖² + ε² ‖N‖²,   ε = eps_rel · ‖A‖_F   (eps_rel = sparams[0], default 1e-10),

computed by Householder QR of the stacked matrix ``[A; ε E]`` (no normal equations, so no squaring of
the condition number). It is continuous in ``X``, equals ``A⁻¹(−φ)`` up to a relative ``ε²/σ_min²`` when
the smallest singular value ``σ_min ≫ ε``, and is bounded by ``‖φ‖ / (2ε)`` always: never a blow-up or a
NaN. :func:`solve_exact` is the plain, unregularized ``N = −A⁻¹φ`` of the seed's closed-form substitution,
for reproducing the seed's experiments (NaN where ``A`` is exactly singular). :func:`solve_shifted_energy`
adds an energy row solved by its shifted Schur complement (the ``stabilized`` formulation's
``energy_constraint``).

Every solver has the signature ``solve(A, phi, x, sparams, N)`` that the generated DAE modules call
(:mod:`multibody.symbolic.dae`).
"""
import math

import numpy as np
from numba import njit

from multibody.kernels.spatial import COMPILED, KERNEL

__all__ = ["DLS_EPS_REL", "EXACT_WHEN", "solve_dls", "dls_into", "solve_exact", "shifted_energy_into",
           "solve_shifted_energy"]

#: default relative damping of :func:`solve_dls`
DLS_EPS_REL = 1e-10


@njit(**COMPILED)
def solve_dls(A, phi, x, sparams, N):
    """Damped least squares ``N = argmin ‖A N + φ‖² + ε²‖N‖²``, ``ε = sparams[0]·‖A‖_F`` (seed 000, eq. 2.9).

    Householder QR of ``[A; ε E]`` (2m × m) with the right-hand side ``[−φ; 0]``; continuous in
    ``(A, φ)``, bounded by ``‖φ‖/(2ε)``, equal to ``−A⁻¹φ`` up to a relative ``(ε/σ_min)²``. ``x`` (the
    state) is unused here; it is part of the common solver signature.
    """
    m = phi.shape[0]
    dls_into(A, phi, sparams, N, np.zeros((2 * m, m + 1)))


@njit(**KERNEL)
def dls_into(A, phi, sparams, N, W):
    """:func:`solve_dls` with its QR workspace ``W`` (at least 2m x (m + 1)) given: it allocates nothing, for the
    compiled right-hand side."""
    m = phi.shape[0]
    eps_rel = sparams[0] if sparams.shape[0] > 0 else 1e-10
    fro = 0.0
    for i in range(m):
        for j in range(m):
            fro += A[i, j] * A[i, j]
    eps = eps_rel * math.sqrt(fro)
    if eps < 1e-150:  # A = 0: the limit ε → 0+ of the damped solution is N = 0
        eps = 1e-150
    rows = 2 * m
    for i in range(rows):
        for j in range(m + 1):
            W[i, j] = 0.0
    for i in range(m):
        for j in range(m):
            W[i, j] = A[i, j]
        W[i, m] = -phi[i]
        W[m + i, i] = eps
    for k in range(m):
        # Householder reflection zeroing W[k+1:, k]
        nrm = 0.0
        for i in range(k, rows):
            nrm += W[i, k] * W[i, k]
        nrm = math.sqrt(nrm)
        if nrm == 0.0:
            continue
        alpha = -nrm if W[k, k] >= 0.0 else nrm
        v0 = W[k, k] - alpha
        # v = [v0, W[k+1:, k]]; beta = 2 / (v.v)
        vv = v0 * v0
        for i in range(k + 1, rows):
            vv += W[i, k] * W[i, k]
        if vv == 0.0:
            continue
        beta = 2.0 / vv
        for j in range(k + 1, m + 1):
            s = v0 * W[k, j]
            for i in range(k + 1, rows):
                s += W[i, k] * W[i, j]
            s *= beta
            W[k, j] -= s * v0
            for i in range(k + 1, rows):
                W[i, j] -= s * W[i, k]
        W[k, k] = alpha
    for k in range(m - 1, -1, -1):
        s = W[k, m]
        for j in range(k + 1, m):
            s -= W[k, j] * N[j]
        N[k] = s / W[k, k] if W[k, k] != 0.0 else 0.0


@njit(**COMPILED)  # allocates its QR workspace: compiled with reference counting
def solve_exact(A, phi, x, sparams, N):
    """The plain solution ``N = −A⁻¹ φ`` of ``A N = −φ`` (seed 000, eqs. 2.3, 2.9), no regularization.

    Gaussian elimination with partial pivoting (scalar loops on a copy of ``A``). This is the seed's
    closed-form substitution of ``N`` into the right-hand side, kept to reproduce the seed's experiments
    (Sec. 4, Fig. 4): where ``A`` is singular it divides by a vanishing pivot, so the reactions are unbounded
    near a singular point and NaN on it (a fixed-step run then stops with a non-finite state).
    Never the default; use :func:`solve_dls` or a system's own solver for production runs. ``x`` and
    ``sparams`` are unused (common solver signature).
    """
    m = phi.shape[0]
    W = np.empty((m, m + 1))
    for i in range(m):
        for j in range(m):
            W[i, j] = A[i, j]
        W[i, m] = -phi[i]
    for k in range(m):
        piv = k
        big = abs(W[k, k])
        for i in range(k + 1, m):
            if abs(W[i, k]) > big:
                big = abs(W[i, k])
                piv = i
        if big == 0.0:  # exactly singular: no solution of the plain equations
            for j in range(m):
                N[j] = math.nan
            return
        if piv != k:
            for j in range(k, m + 1):
                tmp = W[k, j]
                W[k, j] = W[piv, j]
                W[piv, j] = tmp
        for i in range(k + 1, m):
            f = W[i, k] / W[k, k]
            if f != 0.0:
                for j in range(k + 1, m + 1):
                    W[i, j] -= f * W[k, j]
    for k in range(m - 1, -1, -1):
        s = W[k, m]
        for j in range(k + 1, m):
            s -= W[k, j] * N[j]
        N[k] = s / W[k, k]


@njit(**KERNEL)
def shifted_energy_into(A, phi, sp, window, R, re, N, X0, X1, W):
    """A N = −φ (seed 000, eq. 2.6) for the first ``R`` rows: the rows without the energy row by damped least
    squares (:func:`dls_into`, ``sp`` its parameters), and the energy row (the last, ``re`` = 1) by its Schur
    complement σ = a22 − a21ᵀA11⁻¹a12 ≈ 2T shifted by ``window``: μ = −(φ_E + a21ᵀX0)/(σ + window), so the
    energy correction fades where the kinetic energy vanishes (the turning points, where A is singular; seed
    000 §3). ``X0``, ``X1`` (R) and ``W`` (2R × (R + 1)) are workspaces."""
    n1 = R - re
    A11 = A[:n1, :n1]
    dls_into(A11, phi[:n1], sp, X0[:n1], W)
    if re == 0:
        for j in range(n1):
            N[j] = X0[j]
        return
    dls_into(A11, A[:n1, n1], sp, X1[:n1], W)     # A11 X1 = −a12
    sig = A[n1, n1]
    rho = phi[n1]
    for j in range(n1):
        sig += A[n1, j] * X1[j]
        rho += A[n1, j] * X0[j]
    mu = -rho / (sig + window)
    for j in range(n1):
        N[j] = X0[j] + mu * X1[j]
    N[n1] = mu


#: the exact solve replaces the damped least squares where they agree to rounding: ε/σ_min ≤ this
EXACT_WHEN = 1e-7


@njit(**COMPILED)  # allocates its workspace: compiled with reference counting
def solve_shifted_energy(A, phi, x, sparams, N):
    """The reaction solver of the generated stabilized DAE (``symbolic=True``; the ``solve(A, phi, x, sparams,
    N)`` hook of :mod:`multibody.symbolic.dae`): the solve of the generic path, :func:`shifted_energy_into`
    (seed 000, eq. 2.9), with ``sparams = [eps_rel, window, energy row (0/1)]``. ``x`` is unused.

    Fast path: the block A11 without the energy row is solved for its two right-hand sides (−φ1 and −a12) by
    Gaussian elimination with partial pivoting. The damped least-squares solution differs from A11⁻¹b by a
    relative ε²/(σ² + ε²) ≤ (ε/σ_min)² per singular direction, and σ_min ≥ |det A11| ((n−1)/‖A11‖_F²)^((n−1)/2)
    (the other n − 1 singular values have the product ≤ (‖A11‖_F²/(n−1))^((n−1)/2), by the arithmetic–geometric
    mean inequality), det A11 the product of the pivots. Where that bound gives ε/σ_min ≤ :data:`EXACT_WHEN`,
    the two solutions agree to 1e-14, the rounding of the solve, and the exact one is taken; the energy row
    follows by the same shifted Schur complement. Elsewhere (A11 nearly singular): the damped least squares of
    the generic path."""
    m = phi.shape[0]
    re = int(sparams[2])
    n1 = m - re
    nc = n1 + 2
    W = np.empty((n1, nc))                         # [A11 | −φ1 | −a12]
    fro = 0.0
    for i in range(n1):
        for j in range(n1):
            W[i, j] = A[i, j]
            fro += A[i, j] * A[i, j]
        W[i, n1] = -phi[i]
        W[i, n1 + 1] = -A[i, n1] if re else 0.0
    det = 1.0
    for k in range(n1):
        piv = k
        big = abs(W[k, k])
        for i in range(k + 1, n1):
            if abs(W[i, k]) > big:
                big = abs(W[i, k])
                piv = i
        det *= big
        if big == 0.0:
            break
        if piv != k:
            for j in range(k, nc):
                tmp = W[k, j]
                W[k, j] = W[piv, j]
                W[piv, j] = tmp
        for i in range(k + 1, n1):
            f = W[i, k] / W[k, k]
            if f != 0.0:
                for j in range(k + 1, nc):
                    W[i, j] -= f * W[k, j]
    smin = det * ((n1 - 1) / fro) ** (0.5 * (n1 - 1)) if n1 > 1 else det
    if not sparams[0] * math.sqrt(fro) <= EXACT_WHEN * smin:
        work = np.empty(2 * m + 2 * m * (m + 1))
        shifted_energy_into(A, phi, sparams[:1], sparams[1], m, re, N, work[:m], work[m:2 * m],
                            work[2 * m:].reshape((2 * m, m + 1)))
        return
    for c in range(n1, nc):                        # back substitution: W[:, c] ← A11⁻¹ W[:, c]
        for k in range(n1 - 1, -1, -1):
            s = W[k, c]
            for j in range(k + 1, n1):
                s -= W[k, j] * W[j, c]
            W[k, c] = s / W[k, k]
    if re == 0:
        for j in range(n1):
            N[j] = W[j, n1]
        return
    sig = A[n1, n1]
    rho = phi[n1]
    for j in range(n1):
        sig += A[n1, j] * W[j, n1 + 1]
        rho += A[n1, j] * W[j, n1]
    mu = -rho / (sig + sparams[1])
    for j in range(n1):
        N[j] = W[j, n1] + mu * W[j, n1 + 1]
    N[n1] = mu
