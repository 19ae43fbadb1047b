"""Joint stops, latches and held coordinates as rows of one coordinate: the unit rows of a step.

A Model's unilateral elements (``model.unilateral``, ``model/unilateral.py``) act on single coordinates, so their
rows in the tree's velocity coordinates are unit rows ``±e_k`` (the coordinate's velocity v_k):

* a joint stop ``lower ≤ q_k ≤ upper``: a :data:`~multibody.rows.solver.UNILATERAL` row ``+e_k`` with the gap
  ``q_k − lower`` for the lower stop and ``−e_k`` with ``upper − q_k`` for the upper one, when the stop is within
  reach of the step (the margin plus the distance the coordinate can cover), with the stop's restitution;
* a latch: armed with the side of its value the coordinate starts on; in the step in which the coordinate reaches
  its value it locks (a plastic impact) and stays locked: a :data:`~multibody.rows.solver.BILATERAL` row ``e_k``
  whose gap ``q_k − value`` brings it onto the value;
* a joint held until its release (``Release(mode="unlock")``): a bilateral row per coordinate, the gap to the
  value it was held at, until the first step that starts at or after the release time.

:class:`UnitRows` holds their packed arrays and the state the run changes (``latch_side``: ±1 armed, 0 locked);
:func:`held_rows` and :func:`stop_rows` write the rows of a step (``contact/stepping_solver.py`` assembles them
with the loop rows and the contact rows). Each row has a key (negative: the contacts' keys are the others) by
which the next step's solve starts from its impulse.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from multibody.kernels.spatial import INLINE, KERNEL
from multibody.rows.solver import BILATERAL, UNILATERAL

__all__ = ["UnitRows", "unit_rows", "held_rows", "stop_rows", "unit_row_count"]

#: the unit rows of a model: per limited coordinate its q and v index, limits, restitution and the latch or hold
#: on the same coordinate (−1: none); per latch its q and v index, value and side (±1 armed, 0 locked); per held
#: coordinate its q and v index, the value it is held at and the release time
UnitRows = namedtuple("UnitRows", "lim_q lim_v lower upper restitution lim_latch lim_hold latch_q latch_v latch_value "
                                  "latch_side hold_q hold_v hold_value hold_until")


def unit_rows(model, q0, t0=0.0):
    """The :class:`UnitRows` of ``model`` for a run from the configuration ``q0`` at ``t0``: latches armed on the
    side of their value that q0 is on (locked at once when q0 is on the value), the joints with an ``"unlock"``
    release after t0 held at q0."""
    u = model.unilateral
    q0 = np.asarray(q0, dtype=np.float64)
    side = np.sign(q0[u.latch_q] - u.latch_value) if len(u.latches) else np.zeros(0)
    hold_q, hold_v, until = [], [], []
    for rel in u.releases:
        if rel.mode == "unlock" and rel.at > t0:
            j = model.joint(rel.joint)
            hold_q += list(range(j.q_slice.start, j.q_slice.stop))
            hold_v += list(range(j.v_slice.start, j.v_slice.stop))
            until += [rel.at] * (j.v_slice.stop - j.v_slice.start)
    hold_q = np.array(hold_q, dtype=np.int64)
    lim_latch = np.array([next((j for j, la in enumerate(u.latches) if la.v_index == lm.v_index), -1)
                          for lm in u.limits], dtype=np.int64)
    lim_hold = np.array([next((k for k, iv in enumerate(hold_v) if iv == lm.v_index), -1) for lm in u.limits],
                        dtype=np.int64)
    return UnitRows(np.array(u.lim_q), np.array(u.lim_v), np.array(u.lower), np.array(u.upper),
                    np.array(u.restitution), lim_latch, lim_hold, np.array(u.latch_q), np.array(u.latch_v),
                    np.array(u.latch_value), side.astype(np.float64), hold_q, np.array(hold_v, dtype=np.int64),
                    q0[hold_q].copy(), np.array(until, dtype=np.float64))


def unit_row_count(U):
    """The most unit rows a step of :class:`UnitRows` ``U`` can have."""
    return 2 * U.lim_q.shape[0] + U.latch_q.shape[0] + U.hold_q.shape[0]


@njit(**KERNEL)
def _unit(J, r, k, sign):
    for j in range(J.shape[1]):
        J[r, j] = 0.0
    J[r, k] = sign


@njit(**KERNEL)
def _locked(U, k, t):
    """Whether the limited coordinate k is latched or held at time t (its stops then have no row)."""
    j = U.lim_latch[k]
    if j >= 0 and U.latch_side[j] == 0.0:
        return True
    j = U.lim_hold[k]
    return j >= 0 and t < U.hold_until[j]


@njit(**KERNEL, inline=INLINE)
def held_rows(U, q, vf, t, h, J, kind, gap, key, r):
    """The bilateral rows from row r (module docstring): latches locked before or in this step (one reaches its
    value in the step when ``q + h vf`` is past it, vf the free velocity), joints held until their release.
    Returns the next free row."""
    nlim = U.lim_q.shape[0]
    for j in range(U.latch_q.shape[0]):
        iq = U.latch_q[j]
        value = U.latch_value[j]
        if U.latch_side[j] != 0.0 and U.latch_side[j] * (q[iq] + h * vf[U.latch_v[j]] - value) <= 0.0:
            U.latch_side[j] = 0.0
        if U.latch_side[j] == 0.0:
            _unit(J, r, U.latch_v[j], 1.0)
            kind[r] = BILATERAL
            gap[r] = q[iq] - value
            key[r] = -(1 + 2 * nlim + j)
            r += 1
    nlat = U.latch_q.shape[0]
    for k in range(U.hold_q.shape[0]):
        if t < U.hold_until[k]:
            _unit(J, r, U.hold_v[k], 1.0)
            kind[r] = BILATERAL
            gap[r] = q[U.hold_q[k]] - U.hold_value[k]
            key[r] = -(1 + 2 * nlim + nlat + k)
            r += 1
    return r


@njit(**KERNEL, inline=INLINE)
def stop_rows(U, q, v, vf, t, h, margin, J, kind, gap, e, key, r):
    """The unilateral rows from row r of the stops within reach of the step (the gap below ``margin`` plus the
    distance the coordinate can cover, h (|v| + |vf|)), with their restitution; not those of a latched or held
    coordinate. Returns the next free row."""
    for k in range(U.lim_q.shape[0]):
        if _locked(U, k, t):
            continue
        iq, iv = U.lim_q[k], U.lim_v[k]
        reach = margin + h * (abs(v[iv]) + abs(vf[iv]))
        for side in range(2):
            phi = q[iq] - U.lower[k] if side == 0 else U.upper[k] - q[iq]
            if phi < reach:
                _unit(J, r, iv, 1.0 if side == 0 else -1.0)
                kind[r] = UNILATERAL
                gap[r] = phi
                e[r] = U.restitution[k]
                key[r] = -(1 + 2 * k + side)
                r += 1
    return r
