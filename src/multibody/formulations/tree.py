"""The ``"tree"`` formulation: minimal coordinates on a tree (seed 001 §3.4–3.5).

State ``x = [q, v]``, ``ẋ = [q̇(q, v), aba(q, v, τ)]`` with ``τ = τ_applied(q, v) + τ_extra``: the joint
spring-dampers and efforts and the point spring-dampers of the model (``kernels/forces.py``), gravity being
inside ``aba``. The right-hand side :func:`tree_rhs` is a numba function, so fixed-step runs are one compiled
loop; a Python torque callback forces the Python right-hand side (see ``multibody.simulation``).
"""
import numpy as np
from numba import njit

from multibody.data import Data
from multibody.errors import ModelError
from multibody.formulations.base import OdeSystem, check_state, register_formulation
from multibody.integrate.fixed_step import no_project
from multibody.integrate.manifold import has_quaternions, normalize_quaternions, normalize_quaternions_q, qdot_kernel
from multibody.kernels.aba import aba_kernel
from multibody.kernels.energy import energy_kernel
from multibody.kernels.forces import applied_forces_kernel
from multibody.kernels.spatial import KERNEL
from multibody.result import Result

__all__ = ["tree_system", "tree_rhs", "tree_rhs_extra", "tree_params", "tree_energy", "tree_energies"]




@njit(**KERNEL)
def tree_rhs_extra(t, x, p, tau_extra, out):
    """ẋ for x = [q, v] on a tree: out[:nq] = q̇(q, v), out[nq:] = aba(q, v, τ_applied(q, v) + τ_extra)
    (seed 001 §3.5 separate-bodies / articulated-body forward dynamics; kernels/aba.py)."""
    mi = p[0]
    mf = p[1]
    nq = p[2].shape[0]
    q = x[:nq]
    v = x[nq:]
    tau = p[12]
    qdot_kernel(mi, q, v, out[:nq])
    applied_forces_kernel(mi, mf, q, v, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[13], p[14], tau)
    for k in range(tau.shape[0]):
        tau[k] += tau_extra[k]
    aba_kernel(mi, mf, q, v, tau, p[15], p[13], out[nq:])


@njit(**KERNEL)
def tree_rhs(t, x, p, out):
    """The compiled right-hand side ``rhs(t, x, params, out)``: :func:`tree_rhs_extra` with the constant
    generalized forces ``params[16]``."""
    tree_rhs_extra(t, x, p, p[16], out)


@njit(**KERNEL)
def tree_energies(p, Q, V, out):
    """Per sample: out[s] = (T, V_gravity + V_springs, dissipated power) (kernels/energy.py, kernels/forces.py)."""
    mi = p[0]
    mf = p[1]
    tau = p[12]
    for s in range(Q.shape[0]):
        q = Q[s]
        v = V[s]
        T, Vg = energy_kernel(mi, mf, q, v, p[13])
        Vs, P = applied_forces_kernel(mi, mf, q, v, p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[13],
                                      p[14], tau)
        out[s, 0] = T
        out[s, 1] = Vg + Vs
        out[s, 2] = P


def tree_params(model, tau_const=None):
    """The parameter tuple of :func:`tree_rhs` for ``model`` (packed arrays, force arrays, fresh workspaces)."""
    d = Data(model)
    n = model.nbodies + 1
    nv = model.nv
    tc = np.zeros(nv) if tau_const is None else np.ascontiguousarray(tau_const, dtype=np.float64)
    return (d.mi, d.mf, np.zeros(model.nq),
            np.ascontiguousarray(model.dof_stiffness, dtype=np.float64),
            np.ascontiguousarray(model.dof_damping, dtype=np.float64),
            np.ascontiguousarray(model.dof_rest, dtype=np.float64),
            np.ascontiguousarray(model.dof_effort, dtype=np.float64),
            np.ascontiguousarray(model.spring_body, dtype=np.int64).reshape(-1, 2),
            np.ascontiguousarray(model.spring_point, dtype=np.float64).reshape(-1, 2, 3),
            np.ascontiguousarray(model.spring_k, dtype=np.float64),
            np.ascontiguousarray(model.spring_c, dtype=np.float64),
            np.ascontiguousarray(model.spring_l0, dtype=np.float64),
            np.zeros(nv),  # 12: τ buffer
            d.work,  # 13: kinematics / ABA workspace
            np.zeros((n, 6)),  # 14: per-body force accumulator
            np.zeros((0, 6)),  # 15: no external spatial forces
            tc)  # 16: constant generalized forces


def tree_energy(model, Q, V, params=None):
    """(kinetic, potential, dissipated power) arrays along the samples Q (n, nq), V (n, nv): potential =
    gravity (``kernels/energy.py``, zero at the ground origin) + joint and point springs."""
    p = tree_params(model) if params is None else params
    Q = np.ascontiguousarray(Q, dtype=np.float64).reshape(-1, model.nq)
    V = np.ascontiguousarray(V, dtype=np.float64).reshape(-1, model.nv)
    out = np.empty((Q.shape[0], 3))
    tree_energies(p, Q, V, out)
    return out[:, 0], out[:, 1], out[:, 2]


def tree_system(model, q0=None, v0=None, tau=None, energy=True):
    """The ``"tree"`` formulation (see the module docstring). Models with loop-closing (cut) joints or
    constraints are refused: minimal tree coordinates would silently ignore them."""
    extra = [f"cut joint '{j.name}'" for j in getattr(model, "cut_joints", ())]
    extra += [f"constraint {getattr(c, 'name', type(c).__name__)!r}" for c in getattr(model, "constraints", ())]
    if extra:
        raise ModelError(f"model '{model.name}' has {', '.join(extra)}; the 'tree' formulation integrates "
                         "tree coordinates only (use a constrained formulation)", element=extra[0])
    q0, v0 = check_state(model, q0, v0)
    nq, nv = model.nq, model.nv
    callback = model.torque_callback if tau is None else tau
    tau_const = None
    if callback is not None and not callable(callback):
        tau_const = np.array(callback, dtype=float).reshape(-1)
        if tau_const.shape != (nv,) or not np.all(np.isfinite(tau_const)):
            raise ModelError(f"tau must be a callable tau(t, q, v) or {nv} finite numbers (model '{model.name}'), "
                             f"got {callback!r}", element="tau")
        callback = None
    params = tree_params(model, tau_const)
    mi = params[0]
    quats = has_quaternions(mi)
    x0 = np.concatenate([q0, v0])
    if quats:
        normalize_quaternions(x0, params)

    if callback is None:
        def fun(t, x):
            out = np.empty(nq + nv)
            tree_rhs(float(t), np.ascontiguousarray(x, dtype=np.float64), params, out)
            return out
    else:
        def fun(t, x):
            x = np.ascontiguousarray(x, dtype=np.float64)
            extra = np.asarray(callback(t, x[:nq].copy(), x[nq:].copy()), dtype=np.float64).reshape(-1)
            if extra.shape != (nv,):
                raise ModelError(f"torque callback of model '{model.name}' returned {extra.shape[0]} values at "
                                 f"t = {t}, expected nv = {nv}", element="torque callback")
            if tau_const is not None:
                extra = extra + tau_const
            out = np.empty(nq + nv)
            tree_rhs_extra(float(t), x, params, np.ascontiguousarray(extra), out)
            return out

    def project_py(t, x):
        x = np.array(x, dtype=np.float64)
        normalize_quaternions(x, params)
        return x

    def make_result(t, X, info):
        X = np.asarray(X, dtype=float).reshape(len(t), nq + nv)
        Q = X[:, :nq].copy()
        V = X[:, nq:].copy()
        if quats:
            for row in Q:
                normalize_quaternions_q(mi, row)
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V)
            en = {"kinetic": T, "potential": Vp}
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model)

    return OdeSystem(x0=x0, fun=fun, make_result=make_result, split=lambda x: (x[:nq], x[nq:]),
                     rhs=tree_rhs, project=normalize_quaternions if quats else no_project, params=params,
                     project_py=project_py if quats else None, nsplit=nq, python_only=callback is not None,
                     info={"formulation": "tree", "torque_callback": callback is not None})


register_formulation("tree", tree_system)
