"""The roots of the bicycle's characteristic quartic (seed 003, eq. 6.5) at many speeds, compiled: Aberth's
simultaneous iteration polished by Newton steps, slices of the speeds in threads."""
from __future__ import annotations

import numpy as np
from numba import njit

from multibody.kernels.spatial import COMPILED


@njit(**COMPILED, inline="always")
def _horner4(c3, c2, c1, c0, z):
    """p(z) = z^4 + c3 z^3 + c2 z^2 + c1 z + c0 and p'(z) (monic quartic), by Horner's rule."""
    p = z + c3
    dp = 1.0 + 0.0 * z
    dp = dp * z + p
    p = p * z + c2
    dp = dp * z + p
    p = p * z + c1
    dp = dp * z + p
    p = p * z + c0
    return p, dp


@njit(**COMPILED, error_model="numpy")
def _aberth4(c3, c2, c1, c0, z, maxit):
    """Refine the 4 root estimates ``z`` of the monic quartic in place (Aberth-Ehrlich, Gauss-Seidel sweeps).

    Returns True when every correction fell below a few ulps of its root.
    """
    for _ in range(maxit):
        done = True
        for k in range(4):
            zk = z[k]
            p, dp = _horner4(c3, c2, c1, c0, zk)
            if p == 0.0:
                continue
            s = 0.0 + 0.0j
            for j in range(4):
                if j != k:
                    d = zk - z[j]
                    if d == 0.0:      # coincident estimates: separate them
                        d = 1e-8 * (abs(zk) + 1.0) * (0.6 + 0.8j)
                        z[j] = zk - d
                    s += 1.0 / d
            if dp == 0.0:             # stationary point of p: step off it
                z[k] = zk + 1e-6 * (abs(zk) + 1.0) * (0.8 + 0.6j)
                done = False
                continue
            ratio = p / dp
            den = 1.0 - ratio * s
            corr = ratio / den if den != 0.0 else ratio
            if not (abs(corr) < 1e300):   # nan or inf: give up (the caller falls back to LAPACK)
                return False
            z[k] = zk - corr
            if abs(corr) > 4.0 * 2.220446049250313e-16 * abs(z[k]):
                done = False
        if done:
            return True
    return False


@njit(**COMPILED, inline="always")
def _newton_real(c3, c2, c1, c0, x):
    """One Newton step on a real root of the monic quartic (real arithmetic)."""
    p = x + c3
    dp = 1.0
    dp = dp * x + p
    p = p * x + c2
    dp = dp * x + p
    p = p * x + c1
    dp = dp * x + p
    p = p * x + c0
    if dp != 0.0:
        x -= p / dp
    return x


@njit(**COMPILED, nogil=True, error_model="numpy")
def sweep_roots(speeds, poly, out, ok, lo, hi):
    """Roots of eq. (6.5) for the speeds lo ≤ i < hi, written as [weave+, weave-, capsize, castor] into ``out``.

    ``poly`` = (a4, b3, f2, f0, h3, h1, k4, k2, k0) with a4 = det M, a3 = b3 v, a2 = f2 v^2 + f0,
    a1 = h3 v^3 + h1 v, a0 = k4 v^4 + k2 v^2 + k0. Each speed after the first starts from the previous speed's
    roots (continuation); the caller runs contiguous slices of the speeds in threads (compiled without the GIL,
    ``kernels.threads.in_threads``). ``ok[i]`` is False where the iteration did not converge (the caller
    recomputes those speeds).
    """
    a4, b3, f2, f0, h3, h1, k4, k2, k0 = (poly[0], poly[1], poly[2], poly[3], poly[4], poly[5], poly[6],
                                          poly[7], poly[8])
    z = np.empty(4, dtype=np.complex128)      # the slice's workspace
    warm = False
    for i in range(lo, hi):
        v = speeds[i]
        v2 = v * v
        c3 = b3 * v / a4
        c2 = (f2 * v2 + f0) / a4
        c1 = (h3 * v2 + h1) * v / a4
        c0 = ((k4 * v2 + k2) * v2 + k0) / a4
        if warm:
            # continuation from the previous speed; nudge off the real axis so real pairs can split
            for k in range(4):
                z[k] = z[k] + (1e-3 * (abs(z[k]) + 1.0)) * (0.3 + 0.7j if k % 2 == 0 else 0.4 - 0.6j)
        else:
            r = max(abs(c0) ** 0.25, 1e-3)
            for k in range(4):
                ang = 0.4 + 1.5707963267948966 * k
                z[k] = r * (np.cos(ang) + 1j * np.sin(ang))
        conv = _aberth4(c3, c2, c1, c0, z, 80)
        if not conv:
            r = max(abs(c0) ** 0.25, abs(c3), 1e-3)
            for k in range(4):
                ang = 0.4 + 1.5707963267948966 * k
                z[k] = r * (np.cos(ang) + 1j * np.sin(ang))
            conv = _aberth4(c3, c2, c1, c0, z, 400)
        ok[i] = conv
        warm = conv
        # sort by imaginary part, descending (insertion sort on 4 entries)
        for k in range(1, 4):
            t = z[k]
            j = k - 1
            while j >= 0 and z[j].imag < t.imag:
                z[j + 1] = z[j]
                j -= 1
            z[j + 1] = t
        # real polynomial: (z0, z3) and (z1, z2) are the candidate conjugate pairs
        outer = z[0].imag > 64.0 * 2.220446049250313e-16 * abs(z[0])
        inner = z[1].imag > 64.0 * 2.220446049250313e-16 * abs(z[1])
        if outer and inner:
            xa, ya = 0.5 * (z[0].real + z[3].real), 0.5 * (z[0].imag - z[3].imag)
            xb, yb = 0.5 * (z[1].real + z[2].real), 0.5 * (z[1].imag - z[2].imag)
            if xb > xa or (xb == xa and yb > ya):
                xa, ya, xb, yb = xb, yb, xa, ya
            out[i, 0] = complex(xa, ya)
            out[i, 1] = complex(xa, -ya)
            out[i, 2] = complex(xb, yb)
            out[i, 3] = complex(xb, -yb)
        elif outer:
            xa, ya = 0.5 * (z[0].real + z[3].real), 0.5 * (z[0].imag - z[3].imag)
            r1 = _newton_real(c3, c2, c1, c0, z[1].real)
            r2 = _newton_real(c3, c2, c1, c0, z[2].real)
            if r2 > r1:
                r1, r2 = r2, r1
            out[i, 0] = complex(xa, ya)
            out[i, 1] = complex(xa, -ya)
            out[i, 2] = r1
            out[i, 3] = r2
        else:
            r0 = _newton_real(c3, c2, c1, c0, z[0].real)
            r1 = _newton_real(c3, c2, c1, c0, z[1].real)
            r2 = _newton_real(c3, c2, c1, c0, z[2].real)
            r3 = _newton_real(c3, c2, c1, c0, z[3].real)
            # sort four reals descending (sorting network)
            if r1 > r0:
                r0, r1 = r1, r0
            if r3 > r2:
                r2, r3 = r3, r2
            if r2 > r0:
                r0, r2 = r2, r0
            if r3 > r1:
                r1, r3 = r3, r1
            if r2 > r1:
                r1, r2 = r2, r1
            out[i, 0] = r0
            out[i, 1] = r1
            out[i, 2] = r2
            out[i, 3] = r3
        # keep the (unlabelled) roots in z for the next speed's warm start
        for k in range(4):
            z[k] = out[i, k]
