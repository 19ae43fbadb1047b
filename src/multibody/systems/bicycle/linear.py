"""The linearized equations of the Whipple bicycle (seed 003, eq. 5.3): the coefficients of Appendix A, the
matrices M, C1, K0, K2, the characteristic polynomial (eq. 6.5) and the state-space matrices."""
from __future__ import annotations

import math

import numpy as np

from multibody.systems.bicycle.parameters import coerce_parameters


def intermediate_quantities(params, validate=True):
    """All intermediate quantities of Appendix A (seed 003, eqs. A.1-A.19), named as in the paper.

    Keys: ``mT, xT, zT`` (A.1-A.3), ``ITxx, ITxz, IRzz, IFzz, ITzz`` (A.4-A.7), ``mA, xA, zA`` (A.8-A.9),
    ``IAxx, IAxz, IAzz`` (A.10-A.12), ``uA`` (A.13), ``IAll, IAlx, IAlz`` for I_A-lambda-lambda,
    I_A-lambda-x, I_A-lambda-z (A.14-A.16), ``mu`` (A.17), ``SR, SF, ST`` (A.18), ``SA`` (A.19).
    Also ``mTzT`` and ``mTxT``, the products formed without dividing by mT (the same numbers, fewer
    roundings). ``validate=False`` skips the physical checks (for degenerate limits in analysis).
    """
    p = coerce_parameters(params, validate)
    w, c, lam = p.w, p.c, p.lam
    sl, cl = math.sin(lam), math.cos(lam)
    rR, mR, rF, mF = p.rR, p.mR, p.rF, p.mF
    xB, zB, mB, xH, zH, mH = p.xB, p.zB, p.mB, p.xH, p.zH, p.mH

    mT = mR + mB + mH + mF                                                       # (A.1)
    mTxT = xB * mB + xH * mH + w * mF
    mTzT = -rR * mR + zB * mB + zH * mH - rF * mF
    xT = mTxT / mT                                                               # (A.2)
    zT = mTzT / mT                                                               # (A.3)
    ITxx = (p.IRxx + p.IBxx + p.IHxx + p.IFxx
            + mR * rR ** 2 + mB * zB ** 2 + mH * zH ** 2 + mF * rF ** 2)         # (A.4)
    ITxz = p.IBxz + p.IHxz - mB * xB * zB - mH * xH * zH + mF * w * rF           # (A.5)
    IRzz, IFzz = p.IRxx, p.IFxx                                                  # (A.6)
    ITzz = IRzz + p.IBzz + p.IHzz + IFzz + mB * xB ** 2 + mH * xH ** 2 + mF * w ** 2   # (A.7)
    mA = mH + mF                                                                 # (A.8)
    xA = (xH * mH + w * mF) / mA                                                 # (A.9)
    zA = (zH * mH - rF * mF) / mA
    IAxx = p.IHxx + IFzz + mH * (zH - zA) ** 2 + mF * (rF + zA) ** 2             # (A.10)
    IAxz = p.IHxz - mH * (xH - xA) * (zH - zA) + mF * (w - xA) * (rF + zA)       # (A.11)
    IAzz = p.IHzz + IFzz + mH * (xH - xA) ** 2 + mF * (w - xA) ** 2              # (A.12)
    uA = (xA - w - c) * cl - zA * sl                                             # (A.13)
    IAll = mA * uA ** 2 + IAxx * sl ** 2 + 2.0 * IAxz * sl * cl + IAzz * cl ** 2  # (A.14)
    IAlx = -mA * uA * zA + IAxx * sl + IAxz * cl                                 # (A.15)
    IAlz = mA * uA * xA + IAxz * sl + IAzz * cl                                  # (A.16)
    mu = c / w * cl                                                              # (A.17)
    SR = p.IRyy / rR                                                             # (A.18)
    SF = p.IFyy / rF
    ST = SR + SF
    SA = mA * uA + mu * mTxT                                                     # (A.19)
    return dict(mT=mT, xT=xT, zT=zT, ITxx=ITxx, ITxz=ITxz, IRzz=IRzz, IFzz=IFzz, ITzz=ITzz,
                mA=mA, xA=xA, zA=zA, IAxx=IAxx, IAxz=IAxz, IAzz=IAzz, uA=uA,
                IAll=IAll, IAlx=IAlx, IAlz=IAlz, mu=mu, SR=SR, SF=SF, ST=ST, SA=SA,
                mTxT=mTxT, mTzT=mTzT)


def linear_matrices(params, validate=True):
    """The constant matrices ``(M, C1, K0, K2)`` of the lean/steer equations (seed 003, eqs. A.20-A.27).

    ``M q'' + v C1 q' + (g K0 + v^2 K2) q = f`` with ``q = [phi, delta]`` (eq. 5.3). For Table 1 these are
    eqs. (6.1)-(6.4). ``K0[0, 0] = mT zT`` is formed as the sum ``-rR mR + zB mB + zH mH - rF mF`` (the
    numerator of A.3), which is the same quantity without a division and multiplication by mT.
    """
    p = coerce_parameters(params, validate)
    q = intermediate_quantities(p, validate=False)
    sl, cl = math.sin(p.lam), math.cos(p.lam)
    w = p.w
    mu, SA, SF, ST = q["mu"], q["SA"], q["SF"], q["ST"]
    mTzT = q["mTzT"]

    Mpp = q["ITxx"]                                                              # (A.20)
    Mpd = q["IAlx"] + mu * q["ITxz"]
    Mdd = q["IAll"] + 2.0 * mu * q["IAlz"] + mu ** 2 * q["ITzz"]
    M = np.array([[Mpp, Mpd], [Mpd, Mdd]])                                       # (A.21)

    K0pp = mTzT                                                                  # (A.22)
    K0pd = -SA
    K0dd = -SA * sl
    K0 = np.array([[K0pp, K0pd], [K0pd, K0dd]])                                  # (A.23)

    K2pd = (ST - mTzT) / w * cl                                                  # (A.24)
    K2dd = (SA + SF * sl) / w * cl
    K2 = np.array([[0.0, K2pd], [0.0, K2dd]])                                    # (A.25)

    C1pd = mu * ST + SF * cl + q["ITxz"] / w * cl - mu * mTzT                    # (A.26)
    C1dp = -(mu * ST + SF * cl)
    C1dd = q["IAlz"] / w * cl + mu * (SA + q["ITzz"] / w * cl)
    C1 = np.array([[0.0, C1pd], [C1dp, C1dd]])                                   # (A.27)
    return M, C1, K0, K2


def mixed_det2(A, B):
    """A11 B22 + A22 B11 - A12 B21 - A21 B12: the bilinear form with det(A + B) = det A + det B + mixed(A, B)."""
    return A[0, 0] * B[1, 1] + A[1, 1] * B[0, 0] - A[0, 1] * B[1, 0] - A[1, 0] * B[0, 1]


def det2(A):
    return A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]


def coefficient_polynomials(params, validate=True):
    """Coefficients a4..a0 of eq. (6.5) as polynomials in v: list of 5 arrays (highest power of v first)."""
    M, C1, K0, K2 = linear_matrices(params, validate)
    g = coerce_parameters(params, False).g
    # det(M s^2 + v C1 s + g K0 + v^2 K2) = a4 s^4 + a3 s^3 + a2 s^2 + a1 s + a0, each a_i a polynomial in v
    a4 = np.array([det2(M)])
    a3 = np.array([mixed_det2(M, C1), 0.0])
    a2 = np.array([mixed_det2(M, K2) + det2(C1), 0.0, g * mixed_det2(M, K0)])
    a1 = np.array([mixed_det2(C1, K2), 0.0, g * mixed_det2(C1, K0), 0.0])
    a0 = np.array([det2(K2), 0.0, g * mixed_det2(K0, K2), 0.0, g * g * det2(K0)])
    return [a4, a3, a2, a1, a0]


def characteristic_coefficients(params, speeds, validate=True):
    """Coefficients ``(a4, a3, a2, a1, a0)`` of ``det(M s^2 + v C1 s + g K0 + v^2 K2) = 0`` (seed 003, eq. 6.5).

    Vectorised over ``speeds``; each coefficient has the shape of ``speeds``.
    """
    v = np.asarray(speeds, dtype=float)
    return tuple(np.polyval(c, v) * np.ones_like(v) for c in coefficient_polynomials(params, validate))


def state_matrices(params, speeds, validate=True):
    """First-order form ``x' = A(v) x + B f`` of eq. (5.3) with ``x = [phi, delta, phi', delta']``.

    ``A = [[0, I], [-M^-1 (g K0 + v^2 K2), -v M^-1 C1]]``, ``B = [[0], [M^-1]]``, ``f = [T_phi, T_delta]``
    (seed 003, eq. 5.3; §5b for the generalized forces). Vectorised: a scalar speed gives ``A`` of shape
    (4, 4), an array of N speeds gives (N, 4, 4). ``B`` is (4, 2) in both cases.
    """
    p = coerce_parameters(params, validate)
    M, C1, K0, K2 = linear_matrices(p, validate=False)
    Minv = np.array([[M[1, 1], -M[0, 1]], [-M[1, 0], M[0, 0]]]) / det2(M)
    gMK0 = p.g * (Minv @ K0)
    MK2 = Minv @ K2
    MC1 = Minv @ C1
    v = np.asarray(speeds, dtype=float)
    vf = v.reshape(-1)
    A = np.zeros((vf.size, 4, 4))
    A[:, 0, 2] = 1.0
    A[:, 1, 3] = 1.0
    A[:, 2:, :2] = -(gMK0[None] + (vf * vf)[:, None, None] * MK2[None])
    A[:, 2:, 2:] = -vf[:, None, None] * MC1[None]
    B = np.zeros((4, 2))
    B[2:, :] = Minv
    if v.ndim == 0:
        A = A[0]
    return A, B
