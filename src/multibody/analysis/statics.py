"""Static equilibrium: the configuration where the forces balance at rest, by Newton's method with analytical
derivatives and load stepping.

At rest the equations of motion of the tree reduce to r(q) = g(q) − τ_app(t, q, 0) − τ = 0 (``kernels/statics.py``:
gravity, joint and point springs, efforts, loads, given forces τ). With constraints (loops closed by cut joints,
``add_constraint``; seed 001 §3.6) the reactions Gᵀλ join the balance and the position rows f(q) = 0 hold:

    r(q) − G(q)ᵀ λ = 0,   f(q) = 0,

solved by Newton's method on (q, λ) in the tangent space of q (``model.integrate``):

    [K − H   −Gᵀ] [δ ]     [r − Gᵀλ]
    [G        0 ] [Δλ] = − [f      ],      K = ∂r/∂q,  H = ∂(G(q)ᵀ λ)/∂q,

K from the RNEA derivatives at rest and the springs' and loads' derivatives (``kernels/statics.py``), G the
constraint rows' Jacobian (``rows/constraint_rows.py``); H, the curvature of the constraints weighted by their
reactions, by central differences of the analytical G(q)ᵀλ (step 1e-6 in each tangent direction: an error
O(1e-12) in H, which slows no Newton step). Redundant rows (a planar loop's out-of-plane rows) are handled by a
least-squares solve of the KKT system. The multipliers start from the least-squares reactions of the first residual
(λ = argmin ‖r − Gᵀλ‖) and each Newton step is damped by a backtracking line search on the residual.

Load stepping (continuation, as Exudyn's ``SolveStatic`` with ``loadStepGeometric``, or any nonlinear FE code):
the loads — gravity, the loads' curves, efforts and τ — are multiplied by a factor s that goes from 0 to 1; the
solver tries the whole load first and, when Newton does not converge within ``max_iterations``, goes back to the
last converged state and tries half the increment (growing it again after each success). Large deflections of a
beam (the elastica) need a few steps; ``steps=n`` imposes n equal increments.

The result is q (an :class:`Equilibrium`, a numpy array with ``.info``: iterations, residual, constraint residual,
the load factors, multipliers); when no equilibrium is reached, a ``ConvergenceError`` names the coordinate with
the worst residual and carries the last iterate.
"""
import math
import weakref
from collections import namedtuple

import numpy as np

from multibody.model.data import default_data, refuse_general_joints
from multibody.errors import ConvergenceError, ModelError
from multibody.kernels.forces import LF_FORCE, LF_TORQUE
from multibody.kernels.statics import static_residual_kernel

__all__ = ["static_equilibrium", "Equilibrium", "StaticProblem", "Point"]


class Equilibrium(np.ndarray):
    """The configuration q of a static equilibrium (a numpy array), with ``info``: ``converged``, ``iterations``
    (Newton steps in all), ``residual`` (the largest |r − Gᵀλ| at the end), ``force_scale`` (the size of the forces
    in balance, against which ``tol`` is relative), ``constraint_residual``, ``load_factors`` (the increments
    taken), ``multipliers`` (λ, one per position row), ``potential`` (the springs' energy)."""

    def __array_finalize__(self, obj):
        self.info = getattr(obj, "info", None)


class StaticProblem:
    """The residual r(q; s) and its derivatives for the loads scaled by s (module docstring), from the model's
    packed arrays: ``scale(s)`` sets the load factor, ``at(q)`` gives the :class:`Point` (r, K, C, the position rows),
    ``curvature(q, λ)`` the constraints' H."""

    def __init__(self, model, tau=None, t=0.0, what="static_equilibrium"):
        for c in getattr(model, "controllers", ()):
            raise ModelError(f"{what}: model '{model.name}' has controller '{c.name}', whose torques the statics do not "
                             "form: use the model without its controllers (a joint spring is a PD at rest)",
                             element=f"controller '{c.name}'")
        if getattr(model, "torque_callback", None) is not None:
            raise ModelError(f"{what}: model '{model.name}' has a torque callback, which the statics do not form "
                             "(pass constant generalized forces as tau, or loads with add_load)", element="torque callback")
        if getattr(model, "symbolic", False):
            raise ModelError(f"model '{model.name}' is symbolic: its static equilibrium is numeric",
                             element=model.name)
        if getattr(model, "base_motion", None) is not None:
            raise ModelError(f"model '{model.name}': its ground moves (base motion), so it has no static equilibrium",
                             element="base motion")
        self.model = model
        self.d = d = default_data(model)
        if d.fill is not None:
            refuse_general_joints(model, "static_equilibrium")
        self.w = d.derivative_work()
        self.nv = model.nv
        self.t = float(t)
        tau = np.zeros(self.nv) if tau is None else np.asarray(tau, dtype=float).reshape(-1)
        if tau.shape != (self.nv,) or not np.all(np.isfinite(tau)):
            raise ModelError(f"tau must be {self.nv} finite numbers for model '{model.name}', got {tau.shape}",
                             element="tau")
        self.tau = tau
        self.zero = np.zeros(self.nv)
        self.mf = d.mf.copy()
        self.gravity = d.mf[0, :3].copy()
        F = self.w.forces       # (copies of the efforts and loads, which the load factor scales)
        self.effort = F.dof_effort.copy()
        self.load_floats = F.load_float.copy()
        self.forces = F._replace(dof_effort=F.dof_effort.copy(), load_float=F.load_float.copy())
        self.fb = np.zeros((model.nbodies + 1, 6))
        self.rows = None
        if model.constraints:
            from multibody.rows.constraint_rows import ConstraintRows

            self.rows = ConstraintRows(model)
            self.position = self.rows.position_rows()
            level = np.asarray(self.rows.level)
            velocity_rows = [name for name, sl in self.rows.slices.items() if np.any(level[sl] != 2)]
            if velocity_rows:
                raise ModelError(f"{what}: model '{model.name}' has velocity constraints ({', '.join(velocity_rows)}), "
                                 "which restrict no configuration at rest (the motions about a steady state: "
                                 "mb.linearize(...).modes())", element="constraints")

    def configuration(self, q, what="q0"):
        """``q`` as nq finite floats (a copy), or a ``ModelError`` naming ``what``."""
        q = np.array(q, dtype=float).reshape(-1)
        if q.shape != (self.model.nq,) or not np.all(np.isfinite(q)):
            raise ModelError(f"{what} must be {self.model.nq} finite numbers for model '{self.model.name}', got "
                             f"shape {q.shape}", element=what)
        return q

    @property
    def names(self):
        """The velocity coordinates' names (for messages; made when asked)."""
        return list(self.model.velocity_names())

    def scale(self, s):
        """Set the load factor s: gravity, efforts, loads and τ times s."""
        self.mf[0, :3] = s * self.gravity
        self.forces.dof_effort[:] = s * self.effort
        floats = self.forces.load_float
        floats[:, LF_FORCE:LF_TORQUE + 3] = s * self.load_floats[:, LF_FORCE:LF_TORQUE + 3]
        self.s = s

    def at(self, q):
        """The :class:`Point` q: r, τ_app, K, C, the springs' energy, the position rows (f, G) at the current load
        factor."""
        nv = self.nv
        q = np.ascontiguousarray(q, dtype=float)
        r, applied = np.empty(nv), np.empty(nv)
        K, C = np.empty((nv, nv)), np.empty((nv, nv))
        d = self.d
        V = static_residual_kernel(d.mi, self.mf, q, self.s * self.tau, self.forces, self.t, self.fb, d.no_fext,
                                   d.work, self.w.dwork, self.w.dint, self.zero, r, applied, K, C)
        f, G = self.constraint_rows(q)
        return Point(q, r, applied, K, C, V, f, G)

    def constraint_rows(self, q):
        """(f, G) of the position rows at q (empty without constraints)."""
        if self.rows is None:
            return np.zeros(0), np.zeros((0, self.nv))
        f, G, _ = self.rows.evaluate(q, None, self.t)
        return f[self.position], G[self.position]

    def curvature(self, q, lam, h=1e-6):
        """H = ∂(G(q)ᵀ λ)/∂q by central differences in the tangent directions (module docstring)."""
        nv = self.nv
        H = np.empty((nv, nv))
        e = np.zeros(nv)
        model = self.model
        for j in range(nv):
            e[j] = h
            Gp = self.constraint_rows(model.integrate(q, e, 1.0))[1]
            e[j] = -h
            Gm = self.constraint_rows(model.integrate(q, e, 1.0))[1]
            e[j] = 0.0
            H[:, j] = (Gp - Gm).T @ lam / (2.0 * h)
        return H

    def force_scale(self, p):
        """The size of the forces in balance at the :class:`Point` p — gravity's, the joint springs', the other
        applied forces', τ, and the change of r under a unit change of a coordinate (max |K|: the scale where all the
        others vanish, as a pendulum's gravity upright) — what ``tol`` is relative to (their sum, r, vanishes)."""
        tables = _SPRINGS.get(self.model)
        if tables is None:
            k = np.asarray(self.model.dof_stiffness)
            qi = np.full(self.nv, -1)
            for j in self.model.joints[1:]:
                if j.joint.linear_coordinates:
                    qi[j.v_slice] = np.arange(j.q_slice.start, j.q_slice.stop)
            tables = _SPRINGS[self.model] = ((qi >= 0) & (k != 0), np.maximum(qi, 0), k,
                                             np.asarray(self.model.dof_rest))
        on, qi, k, rest = tables
        spring = np.where(on, k * (p.q[qi] - rest), 0.0)      # the joint springs' part of τ_app is −spring
        tau = self.s * self.tau
        g = p.r + p.applied + tau
        return max(1e-300, *(np.abs(x).max(initial=0.0) for x in (g, spring, p.applied + spring, tau, p.K)))

    def residual(self, p, lam):
        """r − Gᵀλ at the :class:`Point` p."""
        return p.r - p.G.T @ lam if p.f.shape[0] else p.r


#: model -> the joint springs' tables of ``StaticProblem.force_scale`` (made once per model)
_SPRINGS = weakref.WeakKeyDictionary()

Point = namedtuple("Point", "q r applied K C potential f G")
Point.__doc__ = """The statics at a configuration: q, r(q), τ_app(q), K = ∂r/∂q, C = ∂r/∂q̇, the springs' potential, the
position rows f(q) and their Jacobian G(q) (``StaticProblem.at``)."""


def _newton(problem, q, lam, tol, max_iterations, info):
    """Newton iterations at the current load factor from (q, λ); returns (point, λ, converged)."""
    model = problem.model
    nv = problem.nv
    p = problem.at(q)
    m = p.f.shape[0]
    if m:   # the reactions that balance r best at the start (the first-order multiplier estimate)
        lam = np.linalg.lstsq(p.G.T, p.r, rcond=None)[0]
    scale = problem.force_scale(p)     # the forces in balance at the start; again at a candidate solution
    for it in range(max_iterations + 1):
        R = problem.residual(p, lam)
        res = np.abs(R).max(initial=0.0)
        cres = np.abs(p.f).max(initial=0.0)
        if res <= tol * scale and cres <= 1e-10:
            scale = problem.force_scale(p)
        info.update(residual=res, constraint_residual=cres, force_scale=scale, potential=p.potential)
        if res <= tol * scale and cres <= 1e-10:
            return p, lam, True
        if it == max_iterations:
            break
        if m:
            A = np.zeros((nv + m, nv + m))
            A[:nv, :nv] = p.K - problem.curvature(p.q, lam)
            A[:nv, nv:] = -p.G.T
            A[nv:, :nv] = p.G
            sol = np.linalg.lstsq(A, -np.concatenate([R, p.f]), rcond=1e-13)[0]
            delta, dlam = sol[:nv], sol[nv:]
        else:
            try:
                delta = np.linalg.solve(p.K, -R)
            except np.linalg.LinAlgError:
                delta = np.linalg.lstsq(p.K, -R, rcond=1e-13)[0]
            dlam = np.zeros(0)
        if not np.isfinite(delta).all():
            break
        info["iterations"] += 1
        # backtracking on the merit ‖r − Gᵀλ‖² + ‖f‖²
        merit = R @ R + p.f @ p.f
        alpha = 1.0
        for _ in range(12):
            pn = problem.at(model.integrate(p.q, delta, alpha))
            ln = lam + alpha * dlam
            Rn = problem.residual(pn, ln)
            mn = Rn @ Rn + pn.f @ pn.f
            if math.isfinite(mn) and mn <= (1.0 - 1e-4 * alpha) * merit:
                break
            alpha *= 0.5
        else:
            break
        p, lam = pn, ln
    return p, lam, False


def static_equilibrium(model, q0, tau=None, t=0.0, *, tol=1e-10, max_iterations=25, steps=None,
                       min_increment=1.0 / 1024.0):
    """The static equilibrium of ``model`` near ``q0`` (module docstring): q where gravity, the springs, the loads at
    time ``t``, the efforts and the generalized forces ``tau`` balance (with the reactions of the constraints).

    ``tol``: the largest residual |r − Gᵀλ| relative to the forces in balance (``info["force_scale"]``);
    ``max_iterations``: Newton steps per load increment; ``steps``: n equal load increments (default: the whole
    load, halved on failure down to ``min_increment``). Returns an :class:`Equilibrium` (q with ``.info``).
    Raises ``ConvergenceError`` (naming the coordinate with the worst residual; ``.result`` the last iterate) when
    no equilibrium is reached, ``ModelError`` for a model that has none to find (a moving ground).

    >>> import numpy as np, multibody as mb
    >>> b = mb.ModelBuilder(gravity=(0, 0, 0))
    >>> b.add_beam("rod", "ground", length=1.0, segments=8, EI=(1.0, None), GJ=None, mass_per_length=1.0)
    'rod'
    >>> b.add_load("tip", "rod.tip", force=(0, 0, -0.01))
    'tip'
    >>> model = b.build()
    >>> q = mb.static_equilibrium(model, model.neutral())
    >>> w = -float(mb.frame_placement(model, q, "rod.tip")[1][2])
    >>> round(w, 7), round(0.01 / 3 - 0.01 / 12 / 64, 7)     # PL³/3EI − P L l²/12EI (docs/elastic.md)
    (0.0033203, 0.0033203)
    """
    problem = StaticProblem(model, tau, t)
    q = problem.configuration(q0)
    m = problem.position.size if problem.rows is not None else 0
    lam = np.zeros(m)
    info = dict(converged=False, iterations=0, residual=np.inf, constraint_residual=0.0, load_factors=[],
                force_scale=1.0, potential=0.0)
    done = 0.0
    inc = 1.0 if steps is None else 1.0 / int(steps)
    if steps is not None and int(steps) < 1:
        raise ModelError(f"steps must be a positive integer, got {steps!r}", element="steps")
    while done < 1.0:
        target = done + inc
        if target > 1.0 - 1e-9:
            target = 1.0
        problem.scale(target)
        pn, ln, ok = _newton(problem, q, lam, tol, max_iterations, info)
        if ok:
            q, lam, done = pn.q, ln, target
            info["load_factors"].append(target)
            if steps is None:
                inc = min(2.0 * inc, 1.0)
            continue
        inc *= 0.5
        if inc < min_increment:
            R = problem.residual(pn, ln)
            worst = int(np.argmax(np.abs(R))) if R.size else 0
            out = np.asarray(pn.q).view(Equilibrium)
            out.info = dict(info, converged=False)
            name = problem.names[worst] if problem.names else "?"
            raise ConvergenceError(
                f"static_equilibrium: model '{model.name}' reaches no equilibrium at load factor {target:.4g} (the "
                f"last converged was {done:.4g}): the worst residual is {abs(R[worst]):.3g} at coordinate '{name}' "
                f"after {info['iterations']} Newton steps (the forces there do not balance: a mechanism, a load "
                "beyond a limit point, or a start too far)", result=out, element=f"coordinate '{name}'")
    for lim in model.unilateral.limits:      # a stop is not part of the statics: the answer must not pass one
        x = q[lim.q_index]
        if not lim.lower <= x <= lim.upper:
            bound = lim.lower if x < lim.lower else lim.upper
            raise ModelError(f"static_equilibrium: the equilibrium of model '{model.name}' puts coordinate "
                             f"'{lim.joint}.{lim.coordinate}' at {x:.6g}, beyond its stop {bound:g} (stops are not "
                             "part of the statics: start nearer, or load less)", element=f"joint '{lim.joint}'")
    out = np.asarray(q).view(Equilibrium)
    out.info = dict(info, converged=True, multipliers=lam)
    return out
