"""The ``"poisson"`` formulation: equations of motion of a tree in Poisson impulses (seed 002, eqs. 6, 7).

State ``x = [q, p]`` with p the generalized (Poisson) impulses, p = ∂T/∂v = M(q) v (for Spherical and Free
joints the impulse conjugate to the angular velocity in the child frame). At every evaluation the O(N)
solver of ``kernels/poisson.py`` solves the paper's system (6) for the velocities v (``solver="sweep"``,
block Gaussian elimination over the tree, §A.6; or ``solver="cholesky"``, the block LᵀDL factorization,
§A.7.3), and

    q̇ = q̇(q, v)  (quaternion kinematics for quaternions),    ṗ = (Ȧᵀ − AᵀΩ) μ + Q                    (7)

with Q the gravity, the joint spring-dampers and efforts, the point spring-dampers of the model
(``kernels/forces.py``) and the extra torques ``tau``. No N×N matrix is formed.

The seed's integrator is the 6th-order Störmer-type composition ``method="STORMER6"`` of
``integrate/fixed_step.py`` (symplectic in canonical coordinates: the Hamiltonian error stays bounded); every
other method works too.

Result. Like every formulation, ``simulate`` returns (q, v): v is recomputed from (q, p) by the same solver
at each output time. The impulses are kept in ``result.series["p"]`` (shape (n, nv), columns in the order of
``result.v_names``), and the energies are those of the Hamiltonian: ``energy["kinetic"]`` = ½ pᵀ v =
½ pᵀ M(q)⁻¹ p, ``energy["potential"]`` = gravity + springs, ``energy["total"]`` = H(q, p), conserved without
damping and applied efforts. ``result.info["nfev"]`` counts the right-hand-side evaluations exactly (those
of STORMER6's fixed-point iterations included); ``info["solver"]`` names the solver.

A ground that moves in a prescribed way (``model.base_motion``; seed 001 §3.1–3.2, which seed 002 allows for
its body 0) runs the Python right-hand side, which writes the base's state at t into the workspace first: the
body velocities are then absolute, p = ∂T/∂v of the absolute kinetic energy (it includes the base's share),
and eq. (7) holds as written (ṗ_k = s_kᵀ (f*_i − u_k ×* h_i) follows from the Newton–Euler equations in the
inertial frame, whatever moves body 0). The run starts at t0 = 0 (p0 is formed with the base at t = 0), and the
energies reported are the absolute ones (``kernels/energy.py``), not conserved since the base does work.

Models with loop-closing (cut) joints or constraints are refused with a ``ModelError``: the paper's (6)–(7)
hold for trees (closing them by velocity-level constraints is its suggested future work, §A.5, §A.11).

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> from multibody.systems.cardan_chain import cardan_chain
>>> model = cardan_chain(5)
>>> q0 = np.full(model.nq, 0.2)
>>> res = mb.simulate(model, q0, None, 1.0, method="STORMER6", h=0.01, formulation="poisson", solver="cholesky")
>>> res.series["p"].shape, res.info["solver"]
((101, 10), 'cholesky')
>>> bool(res.energy_drift() < 1e-9)
True
"""
import numpy as np
from numba import njit

from multibody.model.data import Data, default_data
from multibody.errors import ModelError
from multibody.formulations.base import OdeSystem, callback_forces, check_state, register_formulation
from multibody.formulations.tree_rhs import tree_energy
from multibody.integrate.fixed_step import no_project
from multibody.integrate.manifold import has_quaternions, normalize_quaternions, normalize_quaternions_q, qdot_kernel
from multibody.kernels.forces import joint_forces_kernel, point_forces_kernel
from multibody.kernels.poisson import CHOLESKY, SWEEP, impulses_kernel, poisson_kernel
from multibody.kernels.spatial import COMPILED, KERNEL
from multibody.result import Result
from multibody.model.packing import extended, tree_params

__all__ = ["PoissonParams", "poisson_system", "poisson_rhs", "poisson_rhs_extra", "impulses", "velocity", "SOLVERS"]

#: solver name -> code of ``kernels.poisson.poisson_kernel``
SOLVERS = {"sweep": SWEEP, "cholesky": CHOLESKY}

#: the parameters: those of ``tree_params(model, tau_const)`` (``multibody.model.packing``), then the solver of
#: system (6) (``kernels.poisson``), the velocities it solved for last, and the count of evaluations
PoissonParams = extended("PoissonParams", ("solver", "v", "nfev"), __name__)


@njit(**KERNEL)
def poisson_rhs_extra(t, x, prm, tau_extra, out):
    """ẋ for x = [q, p]: v from p by system (6) (the solver ``prm.solver``; v is left in ``prm.v``),
    out[:nq] = q̇(q, v), out[nq:] = ṗ of eq. (7) with Q = gravity + applied forces + ``tau_extra``
    (seed 002, eqs. 6, 7; kernels/poisson.py). A singular joint block makes ``out`` NaN."""
    mi = prm.mi
    mf = prm.mf
    nq = prm.q.shape[0]
    work = prm.work
    tau = prm.tau_buffer
    v = prm.v
    q = x[:nq]
    pdot = out[nq:]
    prm.nfev[0] += 1
    if poisson_kernel(mi, mf, q, x[nq:], work, v, pdot, prm.solver) != 0:
        for k in range(out.shape[0]):
            out[k] = np.nan
        return
    qdot_kernel(mi, q, v, out[:nq])
    if not prm.applied:  # no joint springs, dampers, efforts, point springs or loads: skip their pass
        for k in range(tau_extra.shape[0]):
            pdot[k] += tau_extra[k]
        return
    for k in range(tau.shape[0]):
        tau[k] = 0.0
    F = prm.forces
    joint_forces_kernel(mi, q, v, F.dof_stiffness, F.dof_damping, F.dof_rest, F.dof_effort, tau)
    point_forces_kernel(mi, mf, q, v, F.spring_body, F.spring_point, F.spring_k, F.spring_c, F.spring_l0,
                        (F.load_int, F.load_float, F.load_knots), t, work, prm.body_forces, tau, True)
    for k in range(tau.shape[0]):
        pdot[k] += tau[k] + tau_extra[k]


@njit(**KERNEL)
def poisson_rhs(t, x, prm, out):
    """The compiled right-hand side ``rhs(t, x, params, out)``: :func:`poisson_rhs_extra` with the constant
    generalized forces ``prm.tau`` (seed 002, eqs. 6, 7)."""
    poisson_rhs_extra(t, x, prm, prm.tau, out)


@njit(**COMPILED)
def poisson_outputs(prm, Q, P, V, T):
    """Per sample s: V[s] = velocities solving system (6) at (Q[s], P[s]) and T[s] = ½ P[s]ᵀ V[s], the kinetic
    part of the Hamiltonian (seed 002, eq. 6). Returns the first nonzero kernel code, or 0."""
    mi = prm.mi
    mf = prm.mf
    pdot = prm.tau_buffer
    for s in range(Q.shape[0]):
        err = poisson_kernel(mi, mf, Q[s], P[s], prm.work, V[s], pdot, prm.solver)
        if err != 0:
            return err
        e = 0.0
        for k in range(V.shape[1]):
            e += P[s, k] * V[s, k]
        T[s] = 0.5 * e
    return 0


def solver_code(solver):
    """The kernel code of a solver name ("sweep" or "cholesky"), or a ModelError."""
    try:
        return SOLVERS[str(solver).lower()]
    except KeyError:
        raise ModelError(f"solver {solver!r} of the 'poisson' formulation is unknown; expected one of "
                         f"{', '.join(SOLVERS)}", element="solver") from None


def _vectors(model, q, x, what):
    q = np.ascontiguousarray(q, dtype=np.float64).reshape(-1)
    x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
    if q.shape != (model.nq,) or x.shape != (model.nv,):
        raise ModelError(f"q must have nq = {model.nq} and {what} nv = {model.nv} entries (model '{model.name}'), "
                         f"got {q.shape[0]} and {x.shape[0]}", element=f"q/{what}")
    return q, x


def impulses(model, q, v, data=None):
    """The Poisson impulses p = ∂T/∂v = M(q) v at (q, v), in O(N): one forward pass for the body velocities, one
    backward accumulation of the subtree momenta μ (seed 002 §A.4; §A.11, "initial data"). ``data``: a
    ``multibody.model.data.Data`` workspace (default: the model's cached one)."""
    q, v = _vectors(model, q, v, "v")
    d = default_data(model) if data is None else data
    p = np.empty(model.nv)
    impulses_kernel(d.mi, d.mf, q, v, d.work, p, np.empty(model.nv))
    return p


def velocity(model, q, p, solver="sweep", data=None):
    """The velocities v = M(q)⁻¹ p solving the seed's system (6) at (q, p) with the O(N) ``solver``, "sweep"
    (§A.6) or "cholesky" (§A.7.3) (seed 002, eq. 6). ``data`` as for :func:`impulses`."""
    code = solver_code(solver)
    q, p = _vectors(model, q, p, "p")
    d = default_data(model) if data is None else data
    v = np.empty(model.nv)
    err = poisson_kernel(d.mi, d.mf, q, p, d.work, v, np.empty(model.nv), code)
    if err < 0:
        raise ModelError(f"the joint block AᵀM*A of body '{model.body_names[-err]}' (the articulated inertia of "
                         "its subtree about the joint's axes) is singular at this q; system (6) has no solution",
                         element=f"body '{model.body_names[-err]}'")
    if not np.all(np.isfinite(v)):
        raise ModelError(f"the mass matrix of model '{model.name}' is singular at this q; system (6) has no solution",
                         element="q")
    return v


def _refuse_non_trees(model):
    """ModelError if the model has cut joints or constraints: seed 002's (6)–(7) hold for trees."""
    extra = [f"cut joint '{j.name}'" for j in getattr(model, "cut_joints", ())]
    extra += [f"constraint '{c.name}'" for c in getattr(model, "constraints", ()) if type(c).__name__ != "LoopJoint"]
    if extra:
        raise ModelError(f"the 'poisson' formulation takes trees only (seed 002, eqs. 6-7); model '{model.name}' "
                         f"has {', '.join(extra)} (use formulation='constrained')", element=extra[0])


def _torques(model, tau):
    """(Python callback or None, constant torques or None) from ``tau`` (default ``model.torque_callback``)."""
    callback = model.torque_callback if tau is None else tau
    if callback is None or callable(callback):
        return callback, None
    const = np.array(callback, dtype=float).reshape(-1)
    if const.shape != (model.nv,) or not np.all(np.isfinite(const)):
        raise ModelError(f"tau must be a callable tau(t, q, v) or {model.nv} finite numbers (model "
                         f"'{model.name}'), got {callback!r}", element="tau")
    return None, const


def poisson_system(model, q0=None, v0=None, tau=None, energy=True, solver="sweep"):
    """Poisson impulses (q, p), O(N) sweep or Cholesky solution of the velocities (seed 002, eqs. 6–7).

    See the module docstring. ``solver``: "sweep" (§A.6) or "cholesky" (§A.7.3). Trees only: cut joints or
    constraints raise ``ModelError``.
    """
    _refuse_non_trees(model)
    code = solver_code(solver)
    q0, v0 = check_state(model, q0, v0)
    nq, nv = model.nq, model.nv
    callback, tau_const = _torques(model, tau)
    nfev = np.zeros(1, dtype=np.int64)
    data = Data(model)            # its workspace is the right-hand side's (with a moving base at t = 0)
    moving = data.base_motion is not None
    params = PoissonParams(*tree_params(model, tau_const, data), np.int64(code), np.zeros(nv), nfev)
    mi = params.mi
    quats = has_quaternions(mi)
    if quats:
        normalize_quaternions_q(mi, q0)
    x0 = np.concatenate([q0, impulses(model, q0, v0, data=data)])
    velocity(model, q0, x0[nq:], solver, data=data)  # a singular joint block is a ModelError naming the body

    def fun(t, x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        if moving:
            data.set_time(float(t))
        out = np.empty(nq + nv)
        poisson_rhs(float(t), x, params, out)
        if callback is not None:
            extra = callback_forces(callback, t, x[:nq], params.v, nv, model.name)
            out[nq:] += extra
        return out

    def project_py(t, x):
        x = np.array(x, dtype=np.float64)
        normalize_quaternions(x, params)
        return x

    def split(x):   # (a moving base: at the time of the last evaluation of the right-hand side)
        return x[:nq], velocity(model, x[:nq], x[nq:], solver, data=data)

    def make_result(t, X, info):
        X = np.asarray(X, dtype=float).reshape(len(t), nq + nv)
        Q = X[:, :nq].copy()
        P = X[:, nq:].copy()
        if quats:
            for row in Q:
                normalize_quaternions_q(mi, row)
        V = np.empty_like(P)
        T = np.empty(len(t))
        if not moving:
            if poisson_outputs(params, Q, P, V, T) != 0:
                V[:] = np.nan
        else:
            for s in range(len(t)):
                data.set_time(float(t[s]))
                if poisson_outputs(params, Q[s:s + 1], P[s:s + 1], V[s:s + 1], T[s:s + 1]) != 0:
                    V[s] = np.nan
        en = {}
        if energy and len(t):
            T_abs, Vp, _ = tree_energy(model, Q, V, t=t if moving else None)
            en = {"kinetic": T_abs if moving else T, "potential": Vp}
        info["nfev"] = int(nfev[0])
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model, series={"p": P})

    return OdeSystem(x0=x0, fun=fun, make_result=make_result, split=split, rhs=poisson_rhs,
                     project=normalize_quaternions if quats else no_project, params=params,
                     project_py=project_py if quats else None, nsplit=nq,
                     python_only=callback is not None or moving,
                     info={"formulation": "poisson", "solver": str(solver).lower(),
                           "torque_callback": callback is not None})


register_formulation("poisson", poisson_system, supports=("moving base from t = 0",))
