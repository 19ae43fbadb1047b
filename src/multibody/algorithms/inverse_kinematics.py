"""Inverse kinematics: a configuration q that places frames where they are wanted, within the joint limits.

``inverse_kinematics(model, targets, q0)`` moves from ``q0`` until every frame of ``targets`` sits at its target:

* ``{frame: (R, p)}`` (or a ``Placement``): the frame's axes R (frame to ground coordinates) and origin p;
* ``{frame: p}``: the frame's origin only (3 numbers), its axes free.

A frame is a name or a handle (``model.frame_id(name)``), as in ``algorithms.frames``. Several frames are solved at
once (a humanoid with both feet held and a hand reaching). The residual of a frame is, in ground axes,
e = [log(R_t Rᵀ); p_t − p] (the rotation vector of the rotation still to make, and the displacement still to make),
and its derivative along v is −[J_r⁻¹(log(R_t Rᵀ)) J_ω; J_p] with J the frame's Jacobian in
``"local_world_aligned"`` and J_r⁻¹ the inverse right Jacobian of SO(3) (Sola, Deray & Atchuthan, "A micro Lie
theory for state estimation in robotics", 2018, eq. 144), so the steps are Gauss–Newton steps of the exact
linearization and the last ones converge quadratically.

Each step is a damped least-squares (Levenberg–Marquardt) step with Sugihara's damping λ = E + ``damping``
(E = ½ eᵀ W e; T. Sugihara, "Solvability-unconcerned inverse kinematics by the Levenberg–Marquardt method", IEEE
Trans. Robotics 27(5), 2011), solved as a small quadratic program whose box keeps the coordinates with limits
within ``model.lower_limits``/``upper_limits`` (a primal active-set method: Nocedal & Wright, *Numerical
Optimization*, 2nd ed., Algorithm 16.3); a step that does not lower the error is retried with ten times the
damping. ``weights`` scale a frame's rows (a number, or 6 numbers [angular; linear], 3 for a position target).
``posture`` (a configuration) is followed in the null space of the targets: after each step, the move towards it
that does not change the linearized residuals, shortened to stay within the limits.

The result (:class:`IKResult`) has ``.q``, ``.converged`` (every residual at most ``tol``), ``.error`` (the largest
residual: metres and radians), ``.errors`` (per frame: angular, linear), ``.iterations`` and ``.info`` (the worst
residual, the iterations, why it stopped). A run that stops before it converges — the iterations used up, or no
step lowers the error any more: a target out of reach, or beyond the joint limits — warns
(``ConvergenceWarning``) with one line naming the frame that is farthest from its target, and returns the closest
configuration it found.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> for k in (1, 2):
...     _ = b.add_body(f"link{k}", mass=1.0, com=(0.5, 0, 0), inertia=np.diag([0.01, 0.1, 0.1]))
>>> _ = b.add_joint("shoulder", mb.Revolute(axis=(0, 0, 1)), "ground", "link1", limits=(-2, 2))
>>> _ = b.add_joint("elbow", mb.Revolute(axis=(0, 0, 1)), "link1", "link2",
...                 placement=mb.Placement(translation=(1, 0, 0)), limits=(0, 2.5))
>>> _ = b.add_frame("tip", "link2", mb.Placement(translation=(1, 0, 0)))
>>> model = b.build()
>>> ik = inverse_kinematics(model, {"tip": [1.0, 1.0, 0.0]}, q0=[0.0, 0.1])
>>> bool(ik.converged), (np.round(ik.q, 9) + 0.0).tolist()    # the elbow bends the way its limits allow
(True, [0.0, 1.570796327])
"""
import warnings
from dataclasses import dataclass, field

import numpy as np

from multibody.algorithms.dynamics import as_vector, bind_on_first_call, data_at, fill_general
from multibody.algorithms.frames import frame_rows
from multibody.errors import ConvergenceWarning, ModelError
from multibody.kernels.frames import LOCAL_WORLD_ALIGNED, OUT_WIDTH, frame_jacobians_kernel
from multibody.kernels.inverse_kinematics import box_least_squares_kernel, ik_residual_kernel

__all__ = ["inverse_kinematics", "IKResult", "box_least_squares"]

#: the compiled entry points of the kernels called at each step (``algorithms.dynamics``, "the fast path")
_FJS = bind_on_first_call(frame_jacobians_kernel, "_FJS", globals())
_RESIDUAL = bind_on_first_call(ik_residual_kernel, "_RESIDUAL", globals())
_BOX = bind_on_first_call(box_least_squares_kernel, "_BOX", globals())


@dataclass
class IKResult:
    """What :func:`inverse_kinematics` found: ``q`` (nq), ``converged`` (every residual at most the tolerance),
    ``error`` (the largest residual: rad for an orientation, m for a position), ``errors`` ({frame name:
    (angular, linear)} residual norms; angular 0 for a position target), ``iterations`` and ``info`` (``worst_residual``,
    ``iterations``, ``reason``: "converged", "iterations" or "stalled")."""

    q: np.ndarray
    converged: bool
    error: float
    errors: dict
    iterations: int
    info: dict = field(default_factory=dict)


def box_least_squares(A, e, damping, lower, upper, max_iterations=None):
    """x minimizing ½ |A x − e|² + ½ ``damping`` |x|² (damping > 0) subject to ``lower`` ≤ x ≤ ``upper`` (lower ≤ 0 ≤
    upper, infinite bounds allowed), by the primal active-set method (``kernels/inverse_kinematics.py``). Returns
    ``(x, done)``, ``done`` False when ``max_iterations`` (default 3 n + 10) ran out."""
    A, e, lower, upper = (np.ascontiguousarray(a, dtype=np.float64) for a in (A, e, lower, upper))
    x = np.empty(A.shape[1])
    it = _BOX(A, e, float(damping), lower, upper, x, 3 * x.shape[0] + 10 if max_iterations is None
              else int(max_iterations))
    return x, it >= 0


# ---- the targets -----------------------------------------------------------------------------------------------
def _target(model, name, value):
    """``(R or None, p)`` of one target (module docstring), or a ModelError naming the frame."""
    if hasattr(value, "rotation") and hasattr(value, "translation"):
        value = (value.rotation, value.translation)
    try:
        arr = np.asarray(value, dtype=float)
        if arr.shape == (3,):
            return None, arr.copy()
    except (TypeError, ValueError):
        pass
    try:
        R, p = value
        R = np.array(R, dtype=float)
        p = np.array(p, dtype=float).reshape(3)
    except (TypeError, ValueError):
        R = p = None
    if R is None or R.shape != (3, 3) or not (np.all(np.isfinite(R)) and np.all(np.isfinite(p))):
        raise ModelError(f"inverse_kinematics: the target of frame '{name}' must be (R, p) — a 3x3 rotation and 3 "
                         f"numbers —, a Placement, or 3 numbers (a position), got {value!r}",
                         element=f"frame '{name}'")
    if np.abs(R @ R.T - np.eye(3)).max() > 1e-9 or np.linalg.det(R) < 0.0:
        raise ModelError(f"inverse_kinematics: the target rotation of frame '{name}' is not a rotation matrix "
                         "(RᵀR = E and det R = +1 to 1e-9)", element=f"frame '{name}'")
    return R, p


def _weights(name, value, rotation):
    n = 6 if rotation else 3
    try:
        w = np.broadcast_to(np.asarray(value, dtype=float), (n,)).copy()
    except (TypeError, ValueError):
        w = None
    if w is None or not np.all(np.isfinite(w)) or np.any(w <= 0.0):
        raise ModelError(f"inverse_kinematics: the weight of frame '{name}' must be a positive number or {n} positive "
                         f"numbers ({'[angular; linear]' if rotation else 'a position target'}), got {value!r}",
                         element=f"frame '{name}'")
    return w if rotation else np.concatenate([np.zeros(3), w])


def coordinate_bounds(model, limits):
    """``(kv, kq, lower, upper)``: the velocity coordinates with a finite limit, the entries of q they move (joints
    whose coordinates are their own velocities) and their limits; ``limits`` True (the model's), False (none) or
    ``(lower, upper)`` (nq floats each)."""
    if limits is False:
        lo = hi = np.full(model.nq, np.nan)
    elif limits is True:
        lo, hi = model.lower_limits, model.upper_limits
    else:
        try:
            lo, hi = (np.asarray(x, dtype=float).reshape(model.nq) for x in limits)
        except (TypeError, ValueError):
            raise ModelError(f"inverse_kinematics: limits must be True, False or (lower, upper) with {model.nq} numbers "
                             f"each, got {limits!r}", element="limits") from None
    kv, kq = [], []
    for j in model.joints[1:]:
        if j.joint.linear_coordinates and j.joint.nq == j.joint.nv:
            for k in range(j.joint.nq):
                iq = j.q_slice.start + k
                if np.isfinite(lo[iq]) or np.isfinite(hi[iq]):
                    kv.append(j.v_slice.start + k)
                    kq.append(iq)
    kq = np.array(kq, dtype=np.int64)
    return np.array(kv, dtype=np.int64), kq, np.nan_to_num(lo[kq], nan=-np.inf), np.nan_to_num(hi[kq], nan=np.inf)


class _Problem:
    """The frames, targets and weights of one solve, and the residual and its Jacobian at q."""

    def __init__(self, model, d, targets, weights, t):
        if not hasattr(targets, "items") or not targets:
            raise ModelError(f"inverse_kinematics: targets must be a non-empty mapping frame -> target, got "
                             f"{targets!r}", element="targets")
        weights = {} if weights is None else weights
        fi, ff, rows = frame_rows(model, d, list(targets))
        self.model, self.d, self.t = model, d, t
        self.fi, self.ff, self.rows = fi, ff, rows
        names = model.frame_names
        self.names = [names[k] for k in rows]
        nf = len(rows)
        self.Rt, self.pt, self.w = np.zeros((nf, 9)), np.zeros((nf, 3)), np.zeros((nf, 6))
        self.rotation = np.zeros(nf, dtype=np.int64)
        for k, (key, name) in enumerate(zip(targets, self.names)):
            R, p = _target(model, name, targets[key])
            if R is not None:
                self.Rt[k] = R.reshape(9)
                self.rotation[k] = 1
            self.pt[k] = p
            self.w[k] = np.sqrt(_weights(name, weights.get(key, weights.get(name, 1.0)), R is not None))
        unknown = [k for k in weights if k not in targets and k not in self.names]
        if unknown:
            raise ModelError(f"inverse_kinematics: weights name frames without a target: {unknown}",
                             element="weights")
        self.J = np.empty((nf, 6, d.nv))
        self.out = np.empty((nf, OUT_WIDTH))
        self.zero = np.zeros(d.nv)

    def evaluate(self, q, jacobian=True):
        """``(e, A, per_frame)``: the weighted residual (6 per frame; zero rows for free axes), the weighted
        derivative of −e along v and the unweighted (angular, linear) residual norms of each frame (nf, 2)."""
        d = self.d
        fill_general(d, q, self.zero, self.t)
        try:
            _FJS(d.mi, d.mf, self.fi, self.ff, q, self.zero, d.work, self.rows, LOCAL_WORLD_ALIGNED, self.J,
                 self.out)
        except ZeroDivisionError:
            self.model.check_quaternions(q)
            raise
        nf = self.rows.shape[0]
        e = np.empty(6 * nf)
        A = np.empty((6 * nf, d.nv))
        per = np.empty((nf, 2))
        _RESIDUAL(self.J, self.out, self.Rt, self.pt, self.rotation, self.w, e, A, per, jacobian)
        return e, A, per


def _worst(per_frame):
    return float(per_frame.max())


def inverse_kinematics(model, targets, q0, weights=None, tol=1e-9, max_iterations=200, damping=1e-8,
                       limits=True, posture=None, restarts=0, seed=0, data=None, t=None):
    """A configuration q that places the frames of ``targets`` at their targets within the joint limits, from
    ``q0``, by damped least squares with the limits as a box on each step (module docstring): an
    :class:`IKResult`.

    ``targets``: {frame (name or handle): (R, p), a Placement, or p (3 numbers, the origin only)}; ``weights``:
    {frame: a number or [angular (3); linear (3)]}; ``tol``: the largest residual accepted (rad, m); ``damping``: the
    constant part of the damping λ = ½ eᵀWe + damping; ``limits``: True (the model's, ``model.lower_limits`` /
    ``upper_limits``), False, or (lower, upper) with nq numbers each; ``posture``: a configuration followed in the null
    space of the targets (default none). A ``q0`` outside the limits is moved onto them first. ``restarts``: how many
    times a run that stalls short of its targets (a local minimum of the error, often against a limit) starts again
    from a configuration drawn uniformly within the limits (``seed``: of the draws; the coordinates without limits
    keep q0's values), keeping the closest result. Warns (``ConvergenceWarning``) when it stops before converging."""
    d = data_at(model, data, t)
    q = as_vector(q0, d.nq, "q0", model).copy()
    problem = _Problem(model, d, targets, weights, t)
    bounds = coordinate_bounds(model, limits)
    kv, kq, lower, upper = bounds
    q[kq] = np.clip(q[kq], lower, upper)
    q_posture = None if posture is None else as_vector(posture, d.nq, "posture", model)
    if isinstance(restarts, bool) or not isinstance(restarts, (int, np.integer)) or restarts < 0:
        raise ModelError(f"inverse_kinematics: restarts must be a whole number >= 0, got {restarts!r}",
                         element="restarts")
    best, total, rng = None, 0, None
    for attempt in range(int(restarts) + 1):
        if attempt:
            rng = np.random.default_rng(seed) if rng is None else rng
            q = q.copy()
            finite = np.isfinite(lower) & np.isfinite(upper)
            q[kq[finite]] = rng.uniform(lower[finite], upper[finite])
        run = _solve(model, problem, q, bounds, q_posture, tol, max_iterations, damping)
        total += run[4]
        if best is None or run[3] < best[3]:
            best = run
        if best[3] <= tol:
            break
    q, per_frame, reason, worst, iterations = best
    converged = worst <= tol
    errors = {name: (float(a), float(b)) for name, (a, b) in zip(problem.names, per_frame)}
    info = {"worst_residual": worst, "iterations": total, "restarts": attempt, "reason": reason}
    if not converged:
        name, (ang, lin) = max(errors.items(), key=lambda item: max(item[1]))
        why = ("no step lowers the error any more: the target may be out of reach or beyond the joint limits"
               if reason == "stalled" else f"after max_iterations={max_iterations}")
        warnings.warn(ConvergenceWarning(f"inverse_kinematics stopped before converging ({why}; {attempt} "
                                         f"restart{'s' * (attempt != 1)}): frame '{name}' is {lin:.3g} m and "
                                         f"{ang:.3g} rad from its target (tolerance {tol:g}); the result holds the "
                                         "closest configuration found"), stacklevel=2)
    return IKResult(q=q, converged=converged, error=worst, errors=errors, iterations=total, info=info)


def _solve(model, problem, q, bounds, q_posture, tol, max_iterations, damping):
    """One run of damped least-squares steps from q (module docstring): ``(q, per-frame residuals, reason, worst
    residual, iterations)``."""
    kv, kq, lower, upper = bounds
    nv = problem.d.nv
    lo_v, hi_v = np.full(nv, -np.inf), np.full(nv, np.inf)
    e, A, per_frame = problem.evaluate(q)
    energy = 0.5 * (e @ e)
    mu, iterations, reason = damping, 0, "iterations"
    dv = np.empty(nv)
    while iterations < max_iterations:
        if _worst(per_frame) <= tol:
            reason = "converged"
            break
        iterations += 1
        if q_posture is not None:
            q, e, A, per_frame, energy = _posture_step(model, problem, q, q_posture, A, e, energy, per_frame, kv, kq,
                                                       lower, upper)
        lo_v[kv] = lower - q[kq]
        hi_v[kv] = upper - q[kq]
        accepted = False
        while mu < 1e12:
            _BOX(A, e, energy + mu, lo_v, hi_v, dv, 3 * nv + 10)
            q_new = model.integrate(q, dv)
            q_new[kq] = np.clip(q_new[kq], lower, upper)
            e_new, A_new, per_new = problem.evaluate(q_new)
            energy_new = 0.5 * (e_new @ e_new)
            if energy_new < energy:
                accepted = True
                mu = max(damping, mu / 10.0)
                break
            mu *= 10.0
        if not accepted:
            reason = "stalled"
            break
        q, e, A, per_frame, energy = q_new, e_new, A_new, per_new, energy_new
    worst = _worst(per_frame)
    return q, per_frame, "converged" if worst <= tol else reason, worst, iterations


def _posture_step(model, problem, q, q_posture, A, e, energy, per_frame, kv, kq, lower, upper, gain=0.5):
    """Half the way towards ``q_posture`` in the null space of A (the targets' linearized residuals unchanged), as far
    as the limits allow: the move (I − A⁺A)(q_posture ⊖ q) of closed-loop inverse kinematics (Siciliano et al.,
    *Robotics*, 2009, eq. 3.54). Kept when the error grows at most fourfold (by the second-order terms that the next
    damped step removes)."""
    _, s, Vt = np.linalg.svd(A, full_matrices=True)
    rank = int(np.sum(s > 1e-9 * s[0])) if s.size and s[0] > 0.0 else 0
    N = Vt[rank:]
    if N.shape[0] == 0:
        return q, e, A, per_frame, energy
    z = gain * (N.T @ (N @ model.difference(q, q_posture)))
    alpha = 1.0
    for m, (k, i) in enumerate(zip(kv, kq)):
        if q[i] + z[k] > upper[m]:
            alpha = min(alpha, (upper[m] - q[i]) / z[k])
        elif q[i] + z[k] < lower[m]:
            alpha = min(alpha, (lower[m] - q[i]) / z[k])
    if alpha <= 0.0:
        return q, e, A, per_frame, energy
    q_new = model.integrate(q, alpha * z)
    q_new[kq] = np.clip(q_new[kq], lower, upper)
    e_new, A_new, per_new = problem.evaluate(q_new)
    energy_new = 0.5 * (e_new @ e_new)
    if energy_new <= 4.0 * energy:
        return q_new, e_new, A_new, per_new, energy_new
    return q, e, A, per_frame, energy
