"""Time simulation of the linearized bicycle with its forward motion (seed 003, eq. 5.2) and the ignorable
coordinates: yaw, rear contact path and rear wheel angle (Appendix B)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from multibody.systems.bicycle.linear import linear_matrices
from multibody.systems.bicycle.parameters import coerce_parameters


def forward_inertia(params, validate=True):
    """Effective inertia of the forward motion, ``mT rR^2 + IRyy + (rR/rF)^2 IFyy`` (seed 003, eq. 5.2)."""
    p = coerce_parameters(params, validate)
    mT = p.mR + p.mB + p.mH + p.mF
    return mT * p.rR ** 2 + p.IRyy + (p.rR / p.rF) ** 2 * p.IFyy


def forward_acceleration(params, drive_torque, validate=True):
    """Forward acceleration ``dv/dt`` from the rear-wheel torque ``T_thetaR`` (seed 003, eq. 5.2).

    ``(mT rR^2 + IRyy + (rR/rF)^2 IFyy) thetaR'' = T_thetaR`` and ``v = -rR thetaR'``, so
    ``dv/dt = -rR T_thetaR / I``. ``T_thetaR`` is positive in the direction of increasing thetaR, i.e.
    backwards (seed 003, Fig. 2); a propulsive torque is negative.
    """
    p = coerce_parameters(params, validate)
    return -p.rR * np.asarray(drive_torque, dtype=float) / forward_inertia(p, validate=False)


@dataclass(frozen=True)
class LinearSimulation:
    """Time history of the linearized bicycle (seed 003, eqs. 5.2, 5.3, B.6, B.8).

    Arrays over ``t``: lean ``phi``, steer ``delta`` and their rates, yaw ``psi`` (positive clockwise seen
    from above, i.e. towards +y), rear contact ``xP, yP`` in the ground frame, rear wheel angle
    ``thetaR`` (positive backwards) and forward speed ``v``.
    """

    t: np.ndarray
    phi: np.ndarray
    delta: np.ndarray
    phidot: np.ndarray
    deltadot: np.ndarray
    psi: np.ndarray
    xP: np.ndarray
    yP: np.ndarray
    thetaR: np.ndarray
    v: np.ndarray


def _as_function(f):
    if f is None:
        return lambda t: 0.0
    if callable(f):
        return f
    value = float(f)
    return lambda t: value


def simulate_linear(params, speed, t_end, x0=(0.0, 0.0, 0.5, 0.0), *, psi0=0.0, xP0=0.0, yP0=0.0, thetaR0=0.0,
             lean_torque=None, steer_torque=None, drive_torque=None, n_out=501, rtol=1e-10, atol=1e-12,
             validate=True):
    """Simulate the linearized bicycle in time and reconstruct the ignorable coordinates.

    Lean and steer follow eq. (5.3) at the current speed ``v(t)``; the speed follows eq. (5.2) with the
    rear-wheel torque ``drive_torque`` (constant speed when it is None; by §4(c2) the lateral equations at
    varying speed are those at constant speed with v(t) inserted). The yaw follows the first relation of
    (B.6), ``psi' = (v delta + c delta') cos(lam) / w``, and the rear contact the large-angle form (B.8),
    ``xP' = v cos psi, yP' = v sin psi``; ``thetaR' = -v / rR`` (Fig. 2). ``x0 = (phi, delta, phi', delta')``;
    torques are constants or functions of t. Integrated with DOP853 (``rtol``, ``atol``); output at
    ``n_out`` equally spaced times.
    """
    from scipy.integrate import solve_ivp

    p = coerce_parameters(params, validate)
    M, C1, K0, K2 = linear_matrices(p, validate=False)
    Minv = np.linalg.inv(M)
    g, w, c, cl, rR = p.g, p.w, p.c, math.cos(p.lam), p.rR
    Tphi, Tdelta, Tdrive = _as_function(lean_torque), _as_function(steer_torque), _as_function(drive_torque)
    Ifwd = forward_inertia(p, validate=False)

    def rhs(t, y):
        phi, delta, phid, deltad, psi, xP, yP, thR, v = y
        q = np.array([phi, delta])
        qd = np.array([phid, deltad])
        f = np.array([Tphi(t), Tdelta(t)])
        qdd = Minv @ (f - v * (C1 @ qd) - (g * K0 + v * v * K2) @ q)            # (5.3)
        psid = (v * delta + c * deltad) * cl / w                                # (B.6)
        return [phid, deltad, qdd[0], qdd[1], psid, v * math.cos(psi), v * math.sin(psi),   # (B.8)
                -v / rR, -rR * Tdrive(t) / Ifwd]                                # (5.2)

    y0 = [*map(float, x0), psi0, xP0, yP0, thetaR0, float(speed)]
    t_eval = np.linspace(0.0, float(t_end), int(n_out))
    sol = solve_ivp(rhs, (0.0, float(t_end)), y0, method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        from multibody.errors import IntegrationError
        raise IntegrationError(f"bicycle simulation failed: {sol.message}", reason=sol.message)
    y = sol.y
    return LinearSimulation(t=sol.t, phi=y[0], delta=y[1], phidot=y[2], deltadot=y[3], psi=y[4],
                            xP=y[5], yP=y[6], thetaR=y[7], v=y[8])
