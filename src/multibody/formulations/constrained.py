"""Tree dynamics + constraint equations with Lagrange multipliers; drift control (seed 001 §3.6).

A model whose joint graph has loops is split into a spanning tree and cut joints; the cut joints
become constraint equations ``f(q) = 0`` on top of the tree's equations ``A q̈ = B`` (seed 001,
eqs. 3.189–3.192: ``−A q̈ + B + B* + Hᵀλ = 0``).  The holonomic constraints are used at the
acceleration level ``H q̈ = −Ḣ q̇`` and solved together with the dynamics:

    [[M, Hᵀ], [H, 0]] [v̇; μ] = [τ − C; γ],   λ = −μ        (seed 001 §3.6.1; KKT as in eq. 2.49)

Drift control: Baumgarte (``γ − 2α H v − β² f``), projection of positions and velocities after
every integration step (Newton, mass-weighted), or a user hook (``stabilizer=`` e.g. seed 000's
method from :mod:`multibody.formulations.stabilized`).  Redundant constraints (rank-deficient H,
e.g. planar loops closed by spatial hinges, Bricard) are solved by a rank-revealing least squares;
an ill-conditioned configuration is reported with the time and the joints involved.

This module also holds the generic projected integrator used by the Cartesian formulation.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import DOP853, RK45, Radau

from ..errors import ConstraintError, IntegrationError

__all__ = ["integrate_projected"]


def integrate_projected(fun, y0, t_span, t_eval=None, project=None, rtol=1e-10, atol=1e-10,
                        method="DOP853", max_step=np.inf, dt=None):
    """Integrate ``ẏ = fun(t, y)``; after every accepted step apply ``y ← project(t, y)``.

    ``method``: ``"DOP853"`` / ``"RK45"`` (adaptive; the FSAL derivative is recomputed after each
    projection) or ``"RK4"`` (fixed step ``dt``).  Outputs at ``t_eval`` come from the step's dense
    output and are projected too.  Returns ``(t, Y, stats)``.
    """
    t0, t1 = float(t_span[0]), float(t_span[1])
    y0 = np.asarray(y0, float)
    if t_eval is None:
        t_eval = np.array([t0, t1])
    t_eval = np.asarray(t_eval, float)
    out = np.empty((len(t_eval), y0.size))
    k = 0
    nfev = [0]

    def f(t, y):
        nfev[0] += 1
        return fun(t, y)

    while k < len(t_eval) and t_eval[k] <= t0:
        out[k] = y0
        k += 1
    nsteps = 0
    if method == "RK4":
        if dt is None:
            raise IntegrationError("method 'RK4' needs a step dt", reason="missing dt")
        t, y = t0, y0.copy()
        while t < t1 - 1e-14 * max(1.0, abs(t1)):
            h = min(dt, t1 - t)
            k1 = f(t, y)
            k2 = f(t + h / 2, y + h / 2 * k1)
            k3 = f(t + h / 2, y + h / 2 * k2)
            k4 = f(t + h, y + h * k3)
            yn = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            if project is not None:
                yn = project(t + h, yn)
            while k < len(t_eval) and t_eval[k] <= t + h + 1e-12 * h:
                s = (t_eval[k] - t) / h   # cubic Hermite between the step's ends
                fn = f(t + h, yn)
                h00, h10, h01, h11 = 2 * s**3 - 3 * s**2 + 1, s**3 - 2 * s**2 + s, -2 * s**3 + 3 * s**2, s**3 - s**2
                yk = h00 * y + h10 * h * k1 + h01 * yn + h11 * h * fn
                out[k] = project(t_eval[k], yk) if project is not None else yk
                k += 1
            t, y = t + h, yn
            nsteps += 1
        return t_eval, out, dict(nfev=nfev[0], nsteps=nsteps)
    cls = {"DOP853": DOP853, "RK45": RK45, "Radau": Radau}[method]
    solver = cls(f, t0, y0, t1, rtol=rtol, atol=atol, max_step=max_step)
    while k < len(t_eval):
        msg = solver.step()
        if solver.status == "failed":
            raise IntegrationError(f"integration failed at t = {solver.t:.6g}: {msg}", reason=msg)
        nsteps += 1
        dense = solver.dense_output() if k < len(t_eval) and t_eval[k] <= solver.t else None
        while k < len(t_eval) and t_eval[k] <= solver.t:
            yk = dense(t_eval[k])
            out[k] = project(t_eval[k], yk) if project is not None else yk
            k += 1
        if project is not None and solver.status == "running":
            yp = project(solver.t, solver.y)
            solver.y = yp
            if hasattr(solver, "f"):
                solver.f = f(solver.t, yp)
        if solver.status == "finished":
            while k < len(t_eval):
                out[k] = solver.y
                k += 1
    return t_eval, out, dict(nfev=nfev[0], nsteps=nsteps)
