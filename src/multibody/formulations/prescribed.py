"""Prescribed (driven) coordinates of the ``"tree"`` formulation: ``simulate(..., prescribed={name: f})``.

Seed 001 §3.3.1 (reference seed001-part2.md §7): some coordinates are driven — by motors — along known
functions of time φ_k(t), and the drive torques that produce that motion are wanted. The book's algorithm:
insert φ_k(t), φ̇_k(t), φ̈_k(t) into the state; solve the reduced system A' φ̈' = B' − η φ̈_k(t) (eq. 3.94) for
the free accelerations; the drive torque follows from row k, M_k^m = B*_k − A_k φ̈ (eq. 3.93); integrate the
free coordinates only. Here the reduced system and the drive forces come from the O(N) hybrid articulated-body
algorithm (``kernels/hybrid.py``, Featherstone RBDA §9.2) instead of the dense A.

The state integrated is ``x = [q_free, v_free]``; the prescribed entries of q and v are filled in from
``f(t) = (q, q̇, q̈)`` wherever the full state is needed (each right-hand side, each output, events). The
``Result`` holds the full q and v and the drive force of each prescribed coordinate at each output time
(``result.drive_forces``, the series ``"drive force <name>"``): the generalized force the drive adds to the
model's own forces (springs, efforts, ``tau``) on that coordinate, positive when it does positive work on q̇.

A coordinate can be prescribed when q̇ = v for it: the coordinates of Revolute, Prismatic, Cylindrical,
Universal and Planar joints. The drive functions are Python callables, so the run takes the Python
right-hand side (adaptive methods, or the Python fixed-step loop).
"""
import numpy as np

from multibody.errors import ModelError, shown
from multibody.formulations.base import OdeSystem, callback_forces
from multibody.formulations.tree_rhs import tree_energy, tree_rhs_hybrid
from multibody.integrate.manifold import has_quaternions, normalize_quaternions, normalize_quaternions_q
from multibody.result import DRIVE_FORCE, Result

__all__ = ["prescribed_system", "prescribed_indices"]


def prescribed_indices(model, prescribed):
    """``(names, iq, iv, functions)`` of the dict ``prescribed`` {"joint.coordinate": f}: the coordinates'
    positions in q and v (numpy int arrays, in the model's order) and their functions. A ``ModelError`` names
    an unknown coordinate (with the names accepted), one that cannot be prescribed, or a value that is not
    callable."""
    if not isinstance(prescribed, dict):
        raise ModelError(f"prescribed must be a dict {{'joint.coordinate': f}} with f(t) -> (q, q̇, q̈), got "
                         f"{type(prescribed).__name__}", element="prescribed")
    where = {}      # name -> (iq, iv) of the coordinates that can be prescribed
    refused = {}    # name -> why not
    for j in model.joints[1:]:
        for k, c in enumerate(j.joint.coordinate_names):
            name = f"{j.name}.{c}"
            if j.joint.linear_coordinates:
                where[name] = (j.q_slice.start + k, j.v_slice.start + k)
            else:
                refused[name] = (f"coordinate '{name}' of the {type(j.joint).__name__} joint '{j.name}' cannot be "
                                 "prescribed: its q̇ is not one of the velocities (quaternion); only coordinates with "
                                 "q̇ = v can (Revolute, Prismatic, Cylindrical, Universal, Planar joints)")
    rows = []
    for name, f in prescribed.items():
        if name in refused:
            raise ModelError(f"model '{model.name}': {refused[name]}", element=name)
        if name not in where:
            raise ModelError(f"model '{model.name}' has no coordinate {name!r} to prescribe; coordinates that can be "
                             f"prescribed: {', '.join(where) or 'none'}", element=str(name))
        if not callable(f):
            raise ModelError(f"prescribed[{name!r}] must be a callable f(t) -> (q, q̇, q̈), got {shown(f)!r}", element=name)
        rows.append((where[name][1], where[name][0], name, f))
    if not rows:
        raise ModelError("prescribed is empty: give at least one coordinate, or leave prescribed out",
                         element="prescribed")
    if len(rows) == model.nv:
        raise ModelError(f"every coordinate of model '{model.name}' is prescribed: nothing is left to integrate "
                         "(the forces along a given motion are mb.rnea's)", element="prescribed")
    rows.sort()
    return ([r[2] for r in rows], np.array([r[1] for r in rows], dtype=np.int64),
            np.array([r[0] for r in rows], dtype=np.int64), [r[3] for r in rows])


def _drive_values(names, functions, t):
    """(q, q̇, q̈) of every prescribed coordinate at t, as an array (3, k), checked: 3 finite numbers each."""
    out = np.empty((3, len(names)))
    for k, (name, f) in enumerate(zip(names, functions)):
        val = f(t)
        try:
            arr = np.asarray(val, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.shape != (3,):
            raise ModelError(f"prescribed[{name!r}] returned {shown(val)!r} at t = {t}, expected (q, q̇, q̈): 3 numbers",
                             element=name)
        if not np.all(np.isfinite(arr)):
            raise ModelError(f"prescribed[{name!r}] returned non-finite values {arr.tolist()} at t = {t}",
                             element=name)
        out[:, k] = arr
    return out


def prescribed_system(model, q0, v0, params, callback, tau_const, prescribed, energy, data):
    """The ``"tree"`` formulation of ``model`` with the coordinates of ``prescribed`` driven (module docstring);
    ``params`` from ``model.packing.tree_params`` on ``data`` (whose workspace receives a moving base's state at every
    evaluation), ``callback`` a Python torque callback or None, ``tau_const`` the constant generalized forces or
    None. The prescribed entries of q0 and v0 are ignored (f(t0) replaces them)."""
    from multibody.rows.reactions import tree_reactions_along

    names, iq, iv, functions = prescribed_indices(model, prescribed)
    nq, nv = model.nq, model.nv
    free_q = np.setdiff1d(np.arange(nq), iq)
    free_v = np.setdiff1d(np.arange(nv), iv)
    free_x = np.concatenate([free_q, nq + free_v])
    known = np.zeros(nv)
    known[iv] = 1.0
    mi = params.mi
    quats = has_quaternions(mi)
    qdd = np.zeros(nv)
    force = np.zeros(nv)

    def full_state(t, xr):
        """[q, v] with the free entries of ``xr`` and the prescribed ones of f(t); q̈ of f(t) into ``qdd``."""
        vals = _drive_values(names, functions, t)
        x = np.empty(nq + nv)
        x[free_x] = xr
        x[iq] = vals[0]
        x[nq + iv] = vals[1]
        qdd[:] = 0.0
        qdd[iv] = vals[2]
        return x

    def evaluate(t, xr):
        """(full state, ẋ of the full state) at t; the drive forces are left in ``force``."""
        x = full_state(t, xr)
        if callback is not None:
            extra = callback_forces(callback, t, x[:nq], x[nq:], nv, model.name)
            if tau_const is not None:
                extra = extra + tau_const
            extra = np.ascontiguousarray(extra)
        else:
            extra = params.tau
        out = np.empty(nq + nv)
        data.set_time(float(t))                 # a moving base's state at t (nothing for a fixed ground)
        if data.fill is not None:               # general joints: their kinematics at (q, q̇, t)
            data.fill(x[:nq], x[nq:], float(t), data.work)
        tree_rhs_hybrid(float(t), x, params, extra, known, qdd, force, out)
        return x, out

    def fun(t, xr):
        return evaluate(t, np.asarray(xr, dtype=np.float64))[1][free_x]

    def project_py(t, xr):
        x = np.zeros(nq + nv)
        x[free_x] = xr
        normalize_quaternions(x, params)     # no quaternion is prescribed: the filled-in entries do not matter
        return x[free_x]

    def split_t(t, xr):
        x = full_state(t, np.asarray(xr, dtype=np.float64))
        return x[:nq], x[nq:]

    def make_result(t, X, info):
        X = np.asarray(X, dtype=float).reshape(len(t), len(free_x))
        Q = np.empty((len(t), nq))
        V = np.empty((len(t), nv))
        A = np.empty((len(t), nv))
        drive = np.empty((len(t), len(names)))
        for s, (ts, xr) in enumerate(zip(t, X)):
            x, xd = evaluate(float(ts), xr)
            Q[s], V[s], A[s] = x[:nq], x[nq:], xd[nq:]
            drive[s] = force[iv]
        if quats:
            for row in Q:
                normalize_quaternions_q(mi, row)
        en = {}
        if energy and len(t):
            T, Vp, _ = tree_energy(model, Q, V, t=t)
            en = {"kinetic": T, "potential": Vp}
        series = {DRIVE_FORCE + name: drive[:, k] for k, name in enumerate(names)}
        return Result(t, Q, V, energy=en, info=info, q_names=model.coordinate_names(),
                      v_names=model.velocity_names(), model=model, series=series,
                      reactions=lambda: tree_reactions_along(model, Q, V, A, t=t))

    x0 = np.concatenate([q0, v0])
    normalize_quaternions(x0, params)
    return OdeSystem(x0=x0[free_x], fun=fun, make_result=make_result, split=None, split_t=split_t,
                     project_py=project_py if quats else None, nsplit=len(free_q), python_only=True,
                     info={"formulation": "tree", "torque_callback": callback is not None, "prescribed": names})
