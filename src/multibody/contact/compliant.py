"""The ``"compliant"`` contact model: Hunt–Crossley contact forces in the tree's right-hand side.

State ``x = [q, v, D]``: the tree's coordinates and the energy D dissipated so far, with

    q̇ = q̇(q, v),   v̇ = aba(q, v, τ_applied + τ, f_contact(q, v)),   Ḋ = P_contact + P_dampers,

the contact forces of every penetrating pair (``contact/detection.py``, margin 0) from ``contact/compliant_forces.py``
(Hunt–Crossley normal force k δ^p (1 + (3/2) α δ̇), Coulomb friction regularized by the velocity scale v_s) as
external spatial forces of ABA. The right-hand side is compiled, so fixed-step runs are one compiled loop and
adaptive runs call it; a Python torque callback or a compiled torque law takes the Python right-hand side.

Energies of the Result: kinetic, potential (gravity, springs, and the contacts' elastic k δ^(p+1)/(p+1)), and
``dissipated`` = D, so that ``total + dissipated`` stays at its initial value to the integration error when no
other force does work.
"""
import numpy as np
from numba import njit

from multibody.errors import ModelError
from multibody.formulations.base import OdeSystem, callback_forces, check_state
from multibody.contact.models import (contact_parameter, contact_setup, contacts_record, register_contact_model,
                                      state_writer, time_stepping, torques)
from multibody.model.data import default_data
from multibody.formulations.tree_control import control_extra, controls_tuple
from multibody.formulations.tree_rhs import tree_energy
from multibody.integrate.fixed_step import no_project
from multibody.integrate.manifold import has_quaternions, normalize_quaternions, quaternion_projection
from multibody.kernels.aba import aba_kernel
from multibody.contact.detection import C_DIST, C_FEAT, C_N, C_PAIR, detect
from multibody.kernels.configuration import qdot_kernel
from multibody.contact.compliant_forces import compliant_forces, contact_force
from multibody.contact.stepping_solver import R_DIST, R_FEAT, R_FN, R_FT, R_NORMAL, R_PAIR, R_POINT, R_WIDTH
from multibody.kernels.forces import applied_forces_kernel
from multibody.model.packing import extended, tree_params
from multibody.kernels.kinematics import kinematics_kernel, workspace_views
from multibody.contact.shapes import world_poses
from multibody.kernels.spatial import COMPILED, KERNEL
from multibody.result import Result

__all__ = ["compliant_system", "compliant_rhs", "compliant_rhs_extra"]

#: the parameters of the compliant right-hand side: the tree's (``model.packing``), the collision set
#: (``stepping_solver.Geometry``), the external forces (n, 6) and the settings (stiffness, exponent, damping α,
#: friction velocity scale; ``compliant_forces.K_*``)
CompliantParams = extended("CompliantParams", ("geometry", "fext", "settings"), __name__)


@njit(**KERNEL)
def _contacts(mi, mf, work, G, q, v, nv):
    """Kinematics at (q, v) and the penetrating contacts; returns their number."""
    kinematics_kernel(mi, mf, q, v, v, work, 1)
    wb, _ = workspace_views(work, mi.shape[0], nv)
    world_poses(G.gi, G.gf, wb, G.gw)
    return detect(G.gi, G.gf, G.verts, G.pairs, G.gw, 0.0, G.rows, G.ws)


@njit(**KERNEL)
def compliant_rhs_extra(t, x, p, tau_extra, out):
    """ẋ = [q̇, v̇, Ḋ] of the module docstring with the generalized forces ``tau_extra`` besides the model's."""
    mi, mf, work, G = p.mi, p.mf, p.work, p.geometry
    nv = p.tau_buffer.shape[0]
    nq = x.shape[0] - nv - 1
    q = x[:nq]
    v = x[nq:nq + nv]
    tau = p.tau_buffer
    power = 0.0
    if p.applied:
        _, power = applied_forces_kernel(mi, mf, q, v, p.forces, t, work, p.body_forces, tau)
        for k in range(nv):
            tau[k] += tau_extra[k]
    else:
        for k in range(nv):
            tau[k] = tau_extra[k]
    m = _contacts(mi, mf, work, G, q, v, nv)
    wb, _ = workspace_views(work, mi.shape[0], nv)
    _, pc = compliant_forces(G.rows, m, G.gi, G.pairs, wb, p.settings, p.fext)
    aba_kernel(mi, mf, q, v, tau, p.fext, work, out[nq:nq + nv])
    qdot_kernel(mi, q, v, out[:nq])
    out[nq + nv] = power + pc


@njit(**KERNEL)
def compliant_rhs(t, x, p, out):
    """The compiled right-hand side ``rhs(t, x, params, out)``: :func:`compliant_rhs_extra` with the constant
    generalized forces ``p.tau``."""
    compliant_rhs_extra(t, x, p, p.tau, out)


@njit(**COMPILED)
def compliant_outputs(p, Q, V, counts, records, potential):
    """For every output state: its contacts (records of ``stepping_solver.R_WIDTH`` numbers: pair, point, normal,
    normal force, friction force, distance, feature) and the contacts' elastic potential."""
    mi, mf, work, G = p.mi, p.mf, p.work, p.geometry
    nv = V.shape[1]
    for s in range(Q.shape[0]):
        m = _contacts(mi, mf, work, G, Q[s], V[s], nv)
        wb, _ = workspace_views(work, mi.shape[0], nv)
        counts[s] = m
        total = 0.0
        for c in range(m):
            x0, x1, x2, F0, F1, F2, fn, Vc, _ = contact_force(G.rows, c, G.gi, G.pairs, wb, p.settings)
            n0, n1, n2 = G.rows[c, C_N], G.rows[c, C_N + 1], G.rows[c, C_N + 2]
            rec = records[s, c]
            rec[R_PAIR] = G.rows[c, C_PAIR]
            rec[R_POINT], rec[R_POINT + 1], rec[R_POINT + 2] = x0, x1, x2
            rec[R_NORMAL], rec[R_NORMAL + 1], rec[R_NORMAL + 2] = n0, n1, n2
            rec[R_FN] = fn
            rec[R_FT], rec[R_FT + 1], rec[R_FT + 2] = F0 - fn * n0, F1 - fn * n1, F2 - fn * n2
            rec[R_DIST] = G.rows[c, C_DIST]
            rec[R_FEAT] = G.rows[c, C_FEAT]
            total += Vc
        potential[s] = total


def _exponent(exponent):
    p = contact_parameter(exponent, "exponent")
    if p < 1.0:
        raise ModelError(f"contact parameter exponent must be >= 1 (1: linear, 3/2: Hertz), got {exponent!r}",
                         element="exponent")
    return p


def compliant_system(model, q0, v0, tau=None, energy=True, stiffness=1e6, exponent=1.5, damping=1.0,
                     friction_velocity=None, implicit=False, margin=1e-3, tolerance=1e-10, iterations=200,
                     contact_pairs=None, exclude=None):
    """Hunt–Crossley contact forces with regularized Coulomb friction in the tree's right-hand side.

    ``stiffness`` k (N/m^exponent), ``exponent`` p (3/2: Hertz), ``damping`` α (s/m: the coefficient of
    restitution is about 1 − α v at impact speed v; ``contact.compliant_forces.hunt_crossley_damping(e, v)`` gives
    the α of a restitution e at v exactly), ``friction_velocity`` v_s (m/s, default 1e-3: the slip speed below which
    friction fades linearly; a body on a slope creeps at about v_s tan θ / sqrt(μ² − tan² θ)).

    ``implicit=True``: the same normal force in the time-stepping model's step (give ``h``; no method), implicit
    (backward Euler: the force at the step's end, ``rows/kinds.py``), so that a stiffness of 1e7 or 1e9 takes steps
    of a millisecond; its friction is Coulomb's exact law (sticking is sticking: no ``friction_velocity``), and it
    takes what the stepping model takes — joint stops, latches, loops, controllers, checkpoints, events
    (``contact/models.time_stepping``; ``margin``, ``tolerance``, ``iterations`` as there)."""
    if implicit not in (True, False):
        raise ModelError(f"contact parameter implicit must be True or False, got {implicit!r}", element="implicit")
    if implicit:
        if friction_velocity is not None:
            raise ModelError("contact parameter friction_velocity does not apply with implicit=True: the implicit step's "
                             "friction is Coulomb's exact law (it sticks)", element="friction_velocity")
        law = (contact_parameter(stiffness, "stiffness"), _exponent(exponent),
               contact_parameter(damping, "damping", allow_zero=True))
        return time_stepping(model, q0, v0, tau, energy, margin, tolerance, iterations, 0.01, 1e-2, contact_pairs,
                             exclude, law=law, name="compliant")
    q0, v0 = check_state(model, q0, v0)
    settings = np.array([contact_parameter(stiffness, "stiffness"), _exponent(exponent),
                         contact_parameter(damping, "damping", allow_zero=True),
                         contact_parameter(1e-3 if friction_velocity is None else friction_velocity,
                                           "friction_velocity")])
    tau_const, law, callback = torques(model, tau)
    cs, tp, G = contact_setup(model, contact_pairs, exclude, "compliant", tau_const)
    nq, nv = model.nq, model.nv
    params = CompliantParams(*tp, G, np.zeros((model.nbodies + 1, 6)), settings)
    before = state_writer(model, [tp.work])     # a moving base, general joints: written before each evaluation
    control = controls_tuple(model, tp) if model.controllers else None
    quats = has_quaternions(tp.mi)
    x0 = np.concatenate([q0, v0, [0.0]])
    if quats:
        normalize_quaternions(x0, params)

    def fun(t, x):
        x = np.ascontiguousarray(x, dtype=np.float64)
        out = np.empty(nq + nv + 1)
        if before is not None:
            before(t, x[:nq], x[nq:nq + nv])
        extra = tau_const
        if law is not None:
            extra = np.zeros(nv)
            law(float(t), x[:nq].copy(), x[nq:nq + nv].copy(), extra)
            extra = extra + tau_const
        elif callback is not None:
            extra = callback_forces(callback, t, x[:nq], x[nq:nq + nv], nv, model.name) + tau_const
        if control is not None:     # the model's controllers (tree_control.control_extra), in their scratch
            extra = control_extra(float(t), x[:nq + nv], np.ascontiguousarray(extra), control, tp.mi, nq, tp.work)
        try:
            compliant_rhs_extra(float(t), x, params, np.ascontiguousarray(extra), out)
        except ZeroDivisionError:   # a trial state far outside the motion (a stiff contact overshot): NaN makes
            out[:] = np.nan         # the adaptive method reject the step and try a shorter one
        return out

    project_py = quaternion_projection(params)

    def make_result(t, X, info, obs=None):
        X = np.asarray(X, dtype=float).reshape(len(t), nq + nv + 1)
        Q = np.ascontiguousarray(X[:, :nq])
        V = np.ascontiguousarray(X[:, nq:nq + nv])
        if quats:
            for row in Q:
                normalize_quaternions(row, params)
        counts = np.zeros(len(t), dtype=np.int64)
        records = np.zeros((len(t), max(cs.capacity, 1), R_WIDTH))
        potential = np.zeros(len(t))
        if before is None:
            compliant_outputs(params, Q, V, counts, records, potential)
        for s in range(len(t) if before is not None else 0):    # each sample's base state or joint kinematics
            before(t[s], Q[s], V[s])
            compliant_outputs(params, Q[s:s + 1], V[s:s + 1], counts[s:s + 1], records[s:s + 1], potential[s:s + 1])
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V, params=tree_params(model, data=default_data(model)), t=t)
            en = {"kinetic": T, "potential": Vp + potential, "dissipated": X[:, -1].copy()}
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model, contacts=contacts_record(cs, counts, records))

    return OdeSystem(x0=x0, fun=fun, make_result=make_result, split=lambda x: (x[:nq], x[nq:nq + nv]),
                     rhs=compliant_rhs, project=normalize_quaternions if quats else no_project, params=params,
                     project_py=project_py if quats else None, nsplit=nq,
                     python_only=law is not None or callback is not None or before is not None or control is not None,
                     info={"formulation": "tree", "contact": "compliant", "contact_pairs": int(cs.pairs.shape[0]),
                           "torque_law": law is not None, "torque_callback": callback is not None})


register_contact_model("compliant", compliant_system)
