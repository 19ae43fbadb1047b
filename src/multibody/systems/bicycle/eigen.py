"""Eigenvalues and mode shapes of the linearized bicycle over a range of speeds (seed 003, §6b and Table 2),
labelled by mode: weave, capsize, castor."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from multibody.kernels.threads import in_threads
from multibody.systems.bicycle.linear import coefficient_polynomials, linear_matrices, state_matrices
from multibody.systems.bicycle.parameters import coerce_parameters
from multibody.systems.bicycle.quartic import sweep_roots


@dataclass(frozen=True)
class EigenSweep:
    """Eigenvalues of eq. (5.3) over a set of speeds, labelled by mode (seed 003, §6b and Table 2).

    ``values`` has shape (N, 4) and columns ``[weave+, weave-, capsize, castor]``. Labels follow the paper:
    where one complex pair exists it is the weave (``+`` the positive imaginary part first), and of the
    two real roots the larger is the capsize and the smaller the castor. Where all four are real (below
    the speed v_d at which weave oscillation starts) the two largest are the weave pair (they merge at
    v_d), the third is the capsize, the fourth the castor. Where there are two complex pairs (not the case
    for the benchmark) the pair with the larger real part is called weave and the other pair fills the
    capsize and castor columns.
    """

    speeds: np.ndarray
    values: np.ndarray

    @property
    def weave(self):
        """(N, 2) complex: the weave pair."""
        return self.values[:, :2]

    @property
    def capsize(self):
        """(N,) complex: the capsize eigenvalue (real where the weave is a complex pair)."""
        return self.values[:, 2]

    @property
    def castor(self):
        """(N,) complex: the castor eigenvalue."""
        return self.values[:, 3]

    @property
    def oscillatory(self):
        """(N,) bool: True where the weave is a complex (oscillatory) pair."""
        return self.values[:, 0].imag != 0.0

    @property
    def max_real(self):
        """(N,) largest real part; the upright motion is asymptotically stable where it is negative."""
        return self.values.real.max(axis=1)

    @property
    def stable(self):
        """(N,) bool: all four eigenvalues in the open left half-plane."""
        return self.max_real < 0.0


def label_modes(ev):
    """Reorder each row of eigenvalues into [weave+, weave-, capsize, castor] (see EigenSweep)."""
    re, im = ev.real, ev.imag
    is_real = (im == 0.0)
    # complex roots first, then by decreasing real part, then by decreasing imaginary part
    order = np.lexsort((-im, -re, is_real), axis=-1)
    return np.take_along_axis(ev, order, axis=-1)

def _poly_scalars(params, validate):
    """(a4, b3, f2, f0, h3, h1, k4, k2, k0): eq. (6.5) coefficients as polynomials in v (see sweep_roots)."""
    a4, a3, a2, a1, a0 = coefficient_polynomials(params, validate)
    return np.array([a4[0], a3[0], a2[0], a2[2], a1[0], a1[2], a0[0], a0[2], a0[4]])


def eigenvalues(params, speeds, validate=True, method="quartic"):
    """Eigenvalues of eq. (5.3) at each speed, sorted and labelled by mode (seed 003, eq. 6.5, Table 2).

    ``method="quartic"`` (default): the roots of the characteristic quartic (6.5),
    ``det(M s^2 + v C1 s + g K0 + v^2 K2) = 0``, by a compiled Aberth-Ehrlich iteration to a few ulps,
    continued from speed to speed along the sweep (parallel over chunks of speeds); conjugate pairs are
    made exact and real roots polished by a real Newton step. ``method="eig"``: the eigenvalues of the
    4x4 state matrix ``A(v)`` (:func:`state_matrices`), in one batched LAPACK call (about 10x slower).
    Both agree to about 1e-14 on the benchmark (tests compare them on random bicycles). Returns an
    :class:`EigenSweep` (``speeds`` as a 1-D array, ``values`` of shape (N, 4)).
    """
    v = np.ascontiguousarray(np.atleast_1d(np.asarray(speeds, dtype=float)).reshape(-1))
    if not np.all(np.isfinite(v)):
        raise ValueError(f"eigenvalues: speeds must be finite, got {v[~np.isfinite(v)][:3]}")
    if method == "eig":
        A, _ = state_matrices(params, v, validate)
        return EigenSweep(speeds=v, values=label_modes(np.linalg.eigvals(A)))
    if method != "quartic":
        raise ValueError(f"eigenvalues: unknown method {method!r}; expected 'quartic' or 'eig'")
    poly = _poly_scalars(params, validate)
    out = np.empty((v.size, 4), dtype=np.complex128)
    ok = np.zeros(v.size, dtype=np.bool_)
    in_threads(sweep_roots, (v, poly, out, ok), v.size, slices=max(1, min(v.size // 64, 32)))
    if not ok.all():  # not converged (e.g. a multiple root exactly at that speed): LAPACK for those speeds
        bad = np.nonzero(~ok)[0]
        A, _ = state_matrices(params, v[bad], validate=False)
        out[bad] = label_modes(np.linalg.eigvals(A))
    return EigenSweep(speeds=v, values=out)


def mode_shapes(params, speeds, validate=True):
    """Steer-to-lean amplitude ratios ``delta / phi`` of the four labelled modes (seed 003, §6b).

    For each eigenvalue ``s`` of :func:`eigenvalues` the eigenvector ``q = [phi, delta]`` solves
    ``(M s^2 + v C1 s + g K0 + v^2 K2) q = 0`` (eq. 5.3 with q = q0 exp(s t)); its ratio is taken from the
    row of larger magnitude. Returns ``(sweep, ratios)`` with ``ratios`` of shape (N, 4) complex, columns as
    in :class:`EigenSweep`. ``abs(ratio)`` is the steer amplitude per unit lean; ``-angle(ratio)`` the steer's
    phase lag behind the lean (weave: the steer lags slightly, §8 of the paper).
    """
    p = coerce_parameters(params, validate)
    M, C1, K0, K2 = linear_matrices(p, validate=False)
    sw = eigenvalues(p, speeds, validate=False)
    s = sw.values
    v = sw.speeds[:, None]
    D = [[M[i, j] * s * s + v * C1[i, j] * s + p.g * K0[i, j] + v * v * K2[i, j] for j in range(2)]
         for i in range(2)]
    row0 = np.abs(D[0][0]) + np.abs(D[0][1]) >= np.abs(D[1][0]) + np.abs(D[1][1])
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(row0, -D[0][0] / D[0][1], -D[1][0] / D[1][1])
    return sw, ratios
