"""Natural modes of a structure about a static equilibrium: M(q) φ̈ + C φ̇ + K φ = 0 linearized at rest.

At an equilibrium q (``static_equilibrium``) the small motions δ (tangent space) obey

    M(q) δ̈ + C δ̇ + K δ = 0,    K = ∂r/∂q − H,  C = −∂τ_app/∂q̇,

with M from CRBA, K the tangent stiffness of the statics (``kernels/statics.py``: the RNEA derivatives at rest —
gravity's geometric stiffness —, the springs', the loads'; H = ∂(Gᵀλ)/∂q the constraints' curvature weighted by
their reactions) and C the dampers' (joint and point dampers; a beam's β K). With constraints (a loop, a beam
clamped at both ends) the motion keeps G δ = 0: δ = N z with N an orthonormal basis of the null space of G, and
the reduced matrices are Nᵀ M N, Nᵀ K N, Nᵀ C N.

The modes are the generalized eigenproblem K φ = ω² M φ (``scipy.linalg.eigh``; K symmetric: every conservative
force; a follower load makes K unsymmetric, then ``scipy.linalg.eig``, and ``info["symmetric"]`` is False): ω
ascending, φ normalized to φᵀ M φ = 1. A negative eigenvalue ω² is an unstable equilibrium: its ``omega`` is
reported as −√|ω²| (the growth rate, with a minus sign), so that the ascending order puts it first. With dampers,
``damping_ratios`` ζ_k = φ_kᵀ C φ_k / (2 ω_k) — exact for proportional (Rayleigh) damping C = α M + β K, where
ζ = α/(2ω) + β ω/2, the first-order estimate otherwise — and ``poles``, the eigenvalues s of the damped
linearization (``[[0, I], [−M⁻¹K, −M⁻¹C]]``) with Im s ≥ 0, sorted by |s|: the exact answer.
"""
from dataclasses import dataclass, field

import numpy as np

from multibody.algorithms.dynamics import crba
from multibody.analysis.statics import StaticProblem
from multibody.errors import ModelError

__all__ = ["modes", "Modes"]


@dataclass
class Modes:
    """The natural modes (module docstring): ``omega`` (rad/s, ascending), ``frequencies`` (Hz), ``shapes`` (nv, k:
    column j is mode j in the tangent coordinates of q, named ``names``; φᵀ M φ = 1), ``damping_ratios`` (or None
    without dampers), ``poles`` (the damped eigenvalues, or None), ``eigenvalues`` (ω², complex for an unsymmetric
    K), ``info``."""

    omega: np.ndarray
    shapes: np.ndarray
    names: list
    eigenvalues: np.ndarray
    damping_ratios: np.ndarray = None
    poles: np.ndarray = None
    info: dict = field(default_factory=dict)

    @property
    def frequencies(self):
        """The natural frequencies in Hz (ω / 2π)."""
        return self.omega / (2.0 * np.pi)

    def __len__(self):
        return self.omega.shape[0]


def _null_space(G, nv):
    if G.shape[0] == 0:
        return np.eye(nv)
    u, s, vt = np.linalg.svd(G)
    rank = int(np.sum(s > 1e-10 * max(1.0, s[0])))
    return vt[rank:].T


def modes(model, q, tau=None, t=0.0, count=None, check=True):
    """The natural modes of ``model`` linearized about the configuration at rest ``q`` (module docstring), with the
    loads at time ``t`` and the generalized forces ``tau``; ``count``: the number of lowest modes kept (default
    all). ``q`` should be an equilibrium (``mb.static_equilibrium``): with ``check`` a ``ModelError`` names the
    coordinate whose forces do not balance (residual above 1e-6 of the forces in balance). Returns :class:`Modes`.

    >>> import numpy as np, multibody as mb
    >>> b = mb.ModelBuilder(gravity=(0, 0, 0))
    >>> b.add_beam("rod", "ground", length=1.0, segments=32, EI=(1.0, None), GJ=None, mass_per_length=1.0)
    'rod'
    >>> model = b.build()
    >>> m = mb.modes(model, model.neutral(), count=2)
    >>> np.round(m.omega / np.array([1.875104, 4.694091]) ** 2, 3)     # ω = (βL)² √(EI/ρA L⁴), to O(l²)
    array([1.   , 1.001])
    """
    problem = StaticProblem(model, tau, t, what="modes")
    q = problem.configuration(q, "q")
    problem.scale(1.0)
    p = problem.at(q)
    r, K, C, f, G = p.r, p.K, p.C, p.f, p.G
    nv = model.nv
    lam = np.zeros(f.shape[0])
    if f.shape[0]:
        if np.abs(f).max() > 1e-8:
            raise ModelError(f"modes: q violates the constraints of model '{model.name}' (residual "
                             f"{np.abs(f).max():.2e}); bring it onto them (static_equilibrium)", element="q")
        lam = np.linalg.lstsq(G.T, r, rcond=None)[0]
        K = K - problem.curvature(q, lam)
    R = r - G.T @ lam
    scale = problem.force_scale(p)
    if check and np.abs(R).max(initial=0.0) > 1e-6 * scale:
        k = int(np.argmax(np.abs(R)))
        raise ModelError(f"modes: q is not an equilibrium of model '{model.name}': the forces at coordinate "
                         f"'{problem.names[k]}' leave {abs(R[k]):.3g} (find it with mb.static_equilibrium, or pass "
                         "check=False for the tangent modes at q)", element=f"coordinate '{problem.names[k]}'")
    M = crba(model, q)
    N = _null_space(G, nv)
    Mr, Kr, Cr = (N.T @ X @ N for X in (M, K, C))
    asym = np.abs(Kr - Kr.T).max(initial=0.0) / max(np.abs(Kr).max(initial=0.0), 1e-300)
    symmetric = asym <= 1e-8
    import scipy.linalg as sla

    if symmetric:
        lam2, Z = sla.eigh(0.5 * (Kr + Kr.T), 0.5 * (Mr + Mr.T))
    else:
        lam2, Z = sla.eig(Kr, Mr)
        order = np.argsort(lam2.real)
        lam2, Z = lam2[order], Z[:, order]
        Z = Z / np.sqrt(np.einsum("ij,ij->j", Z.conj(), Mr @ Z)).real
    k = len(lam2) if count is None else min(int(count), len(lam2))
    lam2, Z = lam2[:k], Z[:, :k]
    lr = lam2.real
    omega = np.sign(lr) * np.sqrt(np.abs(lr))
    shapes = N @ Z
    out = Modes(omega=omega, shapes=shapes, names=list(problem.names), eigenvalues=lam2,
                info=dict(symmetric=bool(symmetric), asymmetry=float(asym), constraints=int(G.shape[0]),
                          dof=int(N.shape[1]), residual=float(np.abs(R).max(initial=0.0)),
                          unstable=int(np.sum(lr < 0.0))))
    if np.any(Cr):
        with np.errstate(divide="ignore", invalid="ignore"):
            out.damping_ratios = np.real(np.einsum("ij,ij->j", Z.conj(), Cr @ Z)) / (2.0 * omega)
        n = Mr.shape[0]
        A = np.zeros((2 * n, 2 * n))
        A[:n, n:] = np.eye(n)
        Minv = np.linalg.inv(Mr)
        A[n:, :n] = -Minv @ Kr
        A[n:, n:] = -Minv @ Cr
        s = np.linalg.eigvals(A)
        s = s[s.imag >= 0.0]
        out.poles = s[np.argsort(np.abs(s))]
    return out
