"""The tree's compiled right-hand side and energies, which the formulations built on the tree share.

``ẋ = [q̇(q, v), aba(q, v, τ)]`` for x = [q, v] with ``τ = τ_applied(q, v) + τ_extra``: the joint spring-dampers
and efforts and the point spring-dampers of the model (``kernels/forces.py``), gravity being inside ``aba``
(seed 001 §3.4–3.5). The functions are numba functions over the parameter tuple of
:mod:`multibody.model.packing` (``p.work``, ...), so fixed-step runs are one compiled loop. The ``"tree"``
formulation (``formulations/tree.py``) integrates them; the ``"constrained"`` and ``"stabilized"`` formulations
take the free dynamics from :func:`tree_rhs_extra`, prescribed coordinates (``formulations/prescribed.py``) take
:func:`tree_rhs_hybrid`, and every formulation in tree coordinates reports :func:`tree_energy`.
"""
import numpy as np
from numba import njit

from multibody.model.data import Data, default_data
from multibody.errors import ModelError
from multibody.integrate.manifold import qdot_kernel
from multibody.kernels.aba import aba_kernel
from multibody.kernels.energy import energy_kernel
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.hybrid import hybrid_kernel
from multibody.kernels.kinematics import GENERAL, W_KINETIC, W_POTENTIAL
from multibody.kernels.spatial import COMPILED, KERNEL
from multibody.model.packing import tree_params

__all__ = ["tree_applied", "tree_rhs", "tree_rhs_plain", "tree_rhs_extra", "tree_rhs_hybrid", "tree_energy", "tree_energies",
           "tree_energies_plain", "tree_observe", "general_fill"]


@njit(**COMPILED, inline="always")
def _qdot_aba(p, x, tau, out):
    """out = [q̇(q, v), aba(q, v, τ)] for x = [q, v]."""
    nq = p.q.shape[0]
    qdot_kernel(p.mi, x[:nq], x[nq:], out[:nq])
    aba_kernel(p.mi, p.mf, x[:nq], x[nq:], tau, p.no_fext, p.work, out[nq:])


@njit(**COMPILED, inline="always")
def tree_applied(p, t, q, v, tau):
    """``tau`` := the applied generalized forces of the parameters ``p`` at (t, q, v) (the model's joint and point
    forces and loads, ``kernels/forces.py``); returns ``(potential, dissipated power)``."""
    return applied_forces_kernel(p.mi, p.mf, q, v, p.forces, t, p.work, p.body_forces, tau)


@njit(**COMPILED, inline="always")
def _applied_tau(p, t, x, tau_extra):
    """τ_applied(t, q, v) + τ_extra for x = [q, v] (:func:`tree_applied`; in the buffer ``p.tau_buffer``), or
    ``tau_extra`` itself when the model has none."""
    tau = tau_extra
    if p.applied:
        nq = p.q.shape[0]
        tau = p.tau_buffer
        Va, _ = tree_applied(p, t, x[:nq], x[nq:], tau)
        p.vapplied[0] = Va
        for k in range(tau.shape[0]):
            tau[k] += tau_extra[k]
    return tau


@njit(**KERNEL)
def tree_rhs_extra(t, x, p, tau_extra, out):
    """ẋ for x = [q, v] on a tree: out[:nq] = q̇(q, v), out[nq:] = aba(q, v, τ_applied(q, v) + τ_extra)
    (seed 001 §3.5 separate-bodies / articulated-body forward dynamics; kernels/aba.py)."""
    _qdot_aba(p, x, _applied_tau(p, t, x, tau_extra), out)


@njit(**KERNEL)
def tree_rhs_hybrid(t, x, p, tau_extra, known, qdd, force, out):
    """:func:`tree_rhs_extra` with prescribed coordinates: the velocity coordinates with ``known[k] != 0`` have
    the accelerations ``qdd[k]`` (x holds their prescribed q and v); out[nq:] = q̈ by hybrid dynamics
    (``kernels/hybrid.py``; seed 001 §3.3.1, eqs. 3.92–3.94; RBDA §9.2), ``qdd`` the same q̈, and ``force`` the
    drive forces of the prescribed coordinates (besides the applied ones). Returns the kernel's error code."""
    nq = p.q.shape[0]
    tau = _applied_tau(p, t, x, tau_extra)
    qdot_kernel(p.mi, x[:nq], x[nq:], out[:nq])
    err = hybrid_kernel(p.mi, p.mf, x[:nq], x[nq:], tau, known, p.no_fext, p.work, qdd, force)
    for k in range(qdd.shape[0]):
        out[nq + k] = qdd[k]
    return err


@njit(**KERNEL)
def tree_rhs(t, x, p, out):
    """The compiled right-hand side ``rhs(t, x, params, out)``: :func:`tree_rhs_extra` with the constant
    generalized forces ``p.tau``."""
    tree_rhs_extra(t, x, p, p.tau, out)


@njit(**KERNEL)
def tree_rhs_plain(t, x, p, out):
    """:func:`tree_rhs` of a model without joint springs, dampers, efforts or point springs (``p.applied``
    false): the same numbers, and its first compilation skips the applied-forces pass (and the kinematics
    that point springs need) — several seconds on a fresh install."""
    _qdot_aba(p, x, p.tau, out)


@njit(**KERNEL)
def tree_energies(p, times, Q, V, out):
    """Per sample: out[s] = (T, V_gravity + V_springs, dissipated power) (kernels/energy.py, kernels/forces.py) at
    the times ``times`` (the loads' curves)."""
    mi = p.mi
    mf = p.mf
    for s in range(Q.shape[0]):
        q = Q[s]
        v = V[s]
        T, Vg = energy_kernel(mi, mf, q, v, p.work)
        Vs, P = tree_applied(p, times[s], q, v, p.tau_buffer)
        out[s, 0] = T
        out[s, 1] = Vg + Vs
        out[s, 2] = P


@njit(**KERNEL)
def tree_energies_plain(p, times, Q, V, out):
    """:func:`tree_energies` of a model without applied forces, from ABA's first pass (the numbers of
    ``energy_kernel``; ``kernels/aba.py``): it compiles nothing but a loop around the ABA already compiled for
    the right-hand side. out[s] = (T, V_gravity, 0)."""
    for s in range(Q.shape[0]):
        aba_kernel(p.mi, p.mf, Q[s], V[s], p.tau, p.no_fext, p.work, p.tau_buffer)
        out[s, 0] = p.work[W_KINETIC]
        out[s, 1] = p.work[W_POTENTIAL] + p.vapplied[0]
        out[s, 2] = 0.0


@njit(**KERNEL)
def tree_observe(x, p, obs, k):
    """What the compiled loop records with saved state k: obs[k] = (kinetic, potential) energy at x, read from
    what :func:`tree_rhs` just left in the workspaces at x (``aba_kernel``'s energies, the applied forces'
    potential): the numbers :func:`tree_energy` computes for the saved q and v."""
    work = p.work
    obs[k, 0] = work[W_KINETIC]
    obs[k, 1] = work[W_POTENTIAL] + p.vapplied[0]


def general_fill(model):
    """``Data.fill`` of ``model`` (the compiled writer of its general joints' kinematics, seed 001 §3.4.2) or
    None for a model without general joints; kept out of the parameter tuple, whose numba type it would
    change."""
    return default_data(model).fill if GENERAL in np.asarray(model.jtype) else None


def tree_energy(model, Q, V, params=None, t=None):
    """(kinetic, potential, dissipated power) arrays along the samples Q (n, nq), V (n, nv): potential =
    gravity (``kernels/energy.py``, zero at the ground origin) + joint and point springs. ``t``: the time of each
    sample (n,), which a model with a moving base needs (its energies are absolute) and rheonomic general joints
    use (default 0)."""
    moving = getattr(model, "base_motion", None) is not None
    d = Data(model) if params is None or moving else None
    p = tree_params(model, data=d) if params is None else params
    Q = np.ascontiguousarray(Q, dtype=np.float64).reshape(-1, model.nq)
    V = np.ascontiguousarray(V, dtype=np.float64).reshape(-1, model.nv)
    out = np.empty((Q.shape[0], 3))
    energies = tree_energies if p.applied else tree_energies_plain
    fill = general_fill(model)
    if moving and (t is None or np.shape(t) != (Q.shape[0],)):
        raise ModelError(f"model '{model.name}' has a moving base: its energies need the time of each of the "
                         f"{Q.shape[0]} samples", element="t")
    t = np.zeros(Q.shape[0]) if t is None else np.ascontiguousarray(t, dtype=np.float64).reshape(-1)
    if t.shape[0] != Q.shape[0]:
        t = np.zeros(Q.shape[0])
    if not moving and fill is None:
        energies(p, t, Q, V, out)
    else:  # the base's state and the general joints' kinematics at each sample first
        for s in range(Q.shape[0]):
            if moving:
                d.set_time(float(t[s]), p.work)
            if fill is not None:
                fill(Q[s], V[s], float(t[s]), p.work)
            energies(p, t[s:s + 1], Q[s:s + 1], V[s:s + 1], out[s:s + 1])
    return out[:, 0], out[:, 1], out[:, 2]
