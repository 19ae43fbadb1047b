"""Unilateral elements of a Model: joint limits (end stops) with restitution, latches that lock, releases that open.

Seed 001's introduction names the feature of rocket and space mechanisms these describe: *variable structure*,
"the number of degrees of freedom and the connection topology change during the motion" — stage separation,
the release of spent blocks and fairings, the deployment of solar arrays that latch open (seed 001 §3.2.1).
They are descriptions only; what happens at a switch (the impulse on the tree, seed 002's equations in impulses
``Δp = Jᵀ Λ``) is computed by ``switching/impulse.py`` and the run across switches (``switching/events.py``,
``switching/run.py``).

* :class:`JointLimit` — ``lower ≤ q ≤ upper`` on one plain coordinate of a joint (``±inf``: no stop on that
  side), with Newton's coefficient of restitution ``e ∈ [0, 1]`` for the impacts on the stop (``u⁺ = −e u⁻``
  for the joint velocity u). A joint that stays on its stop is held there by a one-sided constraint until its
  reaction would pull.
* :class:`Latch` — the coordinate locks when it reaches ``value`` (a plastic impact), and stays locked: the
  system has one degree of freedom less from then on.
* :class:`Release` — the joint opens at the time ``at``: ``mode="separate"`` (default) cuts it, and the child's
  subtree goes on as a free body (a ``Free`` joint to the ground) with its momentum; ``mode="unlock"`` frees the
  coordinates of a joint that is held (locked) until then.

Limits and latches are defined for joints whose coordinates are plain numbers (``q̇ = v``: Revolute, Prismatic,
Cylindrical, Universal, Planar, general joints), one value per coordinate. ``model.lower_limits`` and
``model.upper_limits`` have one entry per entry of q (``±inf`` where there is no stop, and on the quaternion
coordinates of Spherical and Free joints, which take no limits).

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
'rod'
>>> b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", limits=(-0.5, 0.5), restitution=0.7)
'hinge'
>>> model = b.build()
>>> model.lower_limits.tolist(), model.upper_limits.tolist(), model.unilateral.limits[0].restitution
([-0.5], [0.5], 0.7)
"""
import math
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError, shown

__all__ = ["JointLimit", "Latch", "Release", "Unilateral", "RELEASE_MODES", "joint_unilateral"]

#: how a :class:`Release` opens its joint
RELEASE_MODES = ("separate", "unlock")


class _OnCoordinate:
    """An element on one coordinate of a joint: its name ``"<joint>.<coordinate>"``."""

    @property
    def name(self):
        return f"{self.joint}.{self.coordinate}"


@dataclass(frozen=True)
class JointLimit(_OnCoordinate):
    """The end stops ``lower ≤ q ≤ upper`` of coordinate ``coordinate`` of joint ``joint`` (``±inf``: none on
    that side) and the restitution ``e`` of their impacts. ``q_index``/``v_index``: its entry of q and v."""

    joint: str
    coordinate: str
    lower: float
    upper: float
    restitution: float
    q_index: int = -1
    v_index: int = -1


@dataclass(frozen=True)
class Latch(_OnCoordinate):
    """Coordinate ``coordinate`` of joint ``joint`` locks when it reaches ``value`` (a plastic impact) and stays
    locked."""

    joint: str
    coordinate: str
    value: float
    q_index: int = -1
    v_index: int = -1


@dataclass(frozen=True)
class Release:
    """Joint ``joint`` opens at time ``at``: ``mode="separate"`` cuts it (its child's subtree goes on as a free body,
    a ``Free`` joint to the ground, with its momentum); ``mode="unlock"`` frees its coordinates, held until
    then. ``joint`` is filled in by ``ModelBuilder.add_joint(..., release=...)``."""

    at: float
    mode: str = "separate"
    joint: str = None

    def checked(self, joint, element):
        """This release for ``joint`` (its name), validated: a ``ModelError`` naming ``element`` otherwise."""
        try:
            at = float(self.at)
        except (TypeError, ValueError):
            raise ModelError(f"{element}: the release time must be a number, got {shown(self.at)!r}",
                             element=element) from None
        if not math.isfinite(at):
            raise ModelError(f"{element}: the release time must be finite, got {shown(self.at)!r}", element=element)
        if self.mode not in RELEASE_MODES:
            raise ModelError(f"{element}: release mode must be one of {', '.join(RELEASE_MODES)}, got "
                             f"{self.mode!r}", element=element)
        return Release(at, self.mode, joint)


def as_release(value, element):
    """A :class:`Release` from a Release, a time, or a dict ``{"at": t, "mode": ...}`` (model files)."""
    if value is None or isinstance(value, Release):
        return value
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"at", "mode"})
        if unknown or "at" not in value:
            raise ModelError(f"{element}: a release is {{at: time, mode: separate|unlock}}, got {shown(value)!r}",
                             element=element)
        return Release(value["at"], value.get("mode", "separate"))
    return Release(value)


def _per_coordinate(value, n, what, element, fill, nan=False):
    """``value`` (a number or n numbers; None, or an entry None → ``fill``) as n floats, or a ModelError naming
    ``element``; NaN is refused unless ``nan`` (where it means "none", as for a latch value)."""
    if value is None:
        return np.full(n, fill)
    if isinstance(value, (list, tuple)):
        value = [fill if v is None else v for v in value]
    try:
        arr = np.array(value, dtype=float)
        arr = np.broadcast_to(arr, (n,)).copy()
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be a number or {n} numbers (one per coordinate), got {shown(value)!r}",
                         element=element) from None
    if not nan and np.isnan(arr).any():
        hint = ", ±inf or None (no stop)" if np.isinf(fill) else ""
        raise ModelError(f"{element}: {what} must be a number{hint}, got nan", element=element)
    return arr


def joint_unilateral(name, joint, limits=None, restitution=None, latch=None, release=None):
    """The unilateral elements of joint ``name`` (a ``Joint``) from ``ModelBuilder.add_joint``'s arguments:
    ``(limits, latches, release)`` — a tuple of :class:`JointLimit`, a tuple of :class:`Latch`, a
    :class:`Release` or None — validated, with a ``ModelError`` naming the joint and what was expected.

    ``limits``: ``(lower, upper)``, each a number or one number per coordinate (``±inf`` or None: no stop);
    ``restitution``: e in [0, 1] (a number or one per coordinate; default 0, a plastic stop);
    ``latch``: the value (or one per coordinate; None or NaN: none) at which the coordinate locks;
    ``release``: a :class:`Release`, a time, or ``{"at": t, "mode": "separate"|"unlock"}``."""
    element = f"joint '{name}'"
    n = joint.nq
    if (limits is not None or latch is not None) and not joint.linear_coordinates:
        raise ModelError(f"{element}: a {type(joint).__name__} joint has quaternion coordinates; limits and latches "
                         "are defined for joints with plain coordinates (Revolute, Prismatic, ...)", element=element)
    if (limits is not None or latch is not None) and n == 0:
        raise ModelError(f"{element}: a {type(joint).__name__} joint has no coordinates to limit or latch",
                         element=element)
    out_limits = []
    if limits is not None:
        try:
            lower, upper = limits
        except (TypeError, ValueError):
            raise ModelError(f"{element}: limits must be a pair (lower, upper), got {shown(limits)!r}",
                             element=element) from None
        lo = _per_coordinate(lower, n, "the lower limit", element, -np.inf)
        hi = _per_coordinate(upper, n, "the upper limit", element, np.inf)
        e = _per_coordinate(restitution, n, "the restitution", element, 0.0)
        for k, cname in enumerate(joint.coordinate_names):
            where = f"{element}, coordinate '{cname}'"
            if lo[k] == np.inf or hi[k] == -np.inf:
                raise ModelError(f"{where}: lower limit {float(lo[k])} / upper limit {float(hi[k])} leave no room",
                                 element=element)
            if lo[k] > hi[k]:
                raise ModelError(f"{where}: the lower limit {float(lo[k])!r} is above the upper limit "
                                 f"{float(hi[k])!r}", element=element)
            if not (0.0 <= e[k] <= 1.0):
                raise ModelError(f"{where}: the restitution must be in [0, 1], got {float(e[k])!r}", element=element)
            if np.isfinite(lo[k]) or np.isfinite(hi[k]):
                out_limits.append(JointLimit(name, cname, float(lo[k]), float(hi[k]), float(e[k])))
    elif restitution is not None:
        raise ModelError(f"{element}: restitution is the coefficient of the impacts on the joint's limits: give "
                         "limits=(lower, upper) too", element=element)
    out_latches = []
    if latch is not None:
        values = _per_coordinate(latch, n, "the latch value", element, np.nan, nan=True)
        for k, cname in enumerate(joint.coordinate_names):
            if np.isnan(values[k]):
                continue
            where = f"{element}, coordinate '{cname}'"
            if not np.isfinite(values[k]):
                raise ModelError(f"{where}: the latch value must be finite, got {float(values[k])!r}",
                                 element=element)
            lim = next((lm for lm in out_limits if lm.coordinate == cname), None)
            if lim is not None and not (lim.lower <= values[k] <= lim.upper):
                raise ModelError(f"{where}: the latch value {float(values[k])!r} is outside the limits "
                                 f"[{shown(lim.lower)!r}, {shown(lim.upper)!r}]", element=element)
            out_latches.append(Latch(name, cname, float(values[k])))
    rel = as_release(release, element)
    if rel is not None:
        rel = rel.checked(name, element)
        if rel.mode == "unlock" and n == 0:
            raise ModelError(f"{element}: a {type(joint).__name__} joint has no coordinates to unlock; its release "
                             "opens it as a free body (mode 'separate')", element=element)
        if rel.mode == "unlock" and not joint.linear_coordinates:
            raise ModelError(f"{element}: mode 'unlock' holds plain coordinates; a {type(joint).__name__} joint "
                             "has quaternion coordinates (use mode 'separate')", element=element)
    return tuple(out_limits), tuple(out_latches), rel


class Unilateral:
    """The unilateral elements of a Model (:class:`JointLimit`, :class:`Latch`, :class:`Release`; in the order of
    their coordinates, the releases in the order of the bodies), with the indices of their coordinates in q and v,
    and packed arrays for the compiled switching loop:

    ``lim_q``, ``lim_v`` (int64), ``lower``, ``upper``, ``restitution`` — one entry per limited coordinate;
    ``latch_q``, ``latch_v`` (int64), ``latch_value`` — one per latch. ``bool(unilateral)``: any element."""

    def __init__(self, limits=(), latches=(), releases=()):
        self.limits = tuple(limits)
        self.latches = tuple(latches)
        self.releases = tuple(releases)
        self.lim_q = np.array([lm.q_index for lm in self.limits], dtype=np.int64)
        self.lim_v = np.array([lm.v_index for lm in self.limits], dtype=np.int64)
        self.lower = np.array([lm.lower for lm in self.limits], dtype=float)
        self.upper = np.array([lm.upper for lm in self.limits], dtype=float)
        self.restitution = np.array([lm.restitution for lm in self.limits], dtype=float)
        self.latch_q = np.array([la.q_index for la in self.latches], dtype=np.int64)
        self.latch_v = np.array([la.v_index for la in self.latches], dtype=np.int64)
        self.latch_value = np.array([la.value for la in self.latches], dtype=float)
        for arr in (self.lim_q, self.lim_v, self.lower, self.upper, self.restitution, self.latch_q, self.latch_v,
                    self.latch_value):
            arr.flags.writeable = False

    @classmethod
    def bound(cls, limits, latches, releases, joints):
        """The elements with the q and v indices of their coordinates, from the tree joints ``joints`` (the
        ``JointInfo`` of a built model; a release may name any of them). A ``ModelError`` names an element
        whose joint is not a tree joint of the model."""
        by_name = {j.name: j for j in joints if j is not None}

        def where(el, kind):
            j = by_name.get(el.joint)
            if j is None:
                raise ModelError(f"{kind} of joint '{el.joint}': the model has no tree joint '{el.joint}' (joints: "
                                 f"{', '.join(by_name) or 'none'})", element=f"joint '{el.joint}'")
            return j

        def index(el, kind):
            j = where(el, kind)
            k = j.joint.coordinate_names.index(el.coordinate)
            return dict(q_index=j.q_slice.start + k, v_index=j.v_slice.start + k)

        lims = [JointLimit(lm.joint, lm.coordinate, lm.lower, lm.upper, lm.restitution, **index(lm, "limit"))
                for lm in limits]
        lats = [Latch(la.joint, la.coordinate, la.value, **index(la, "latch")) for la in latches]
        seen = set()
        for r in releases:
            where(r, "release")
            if r.joint in seen:
                raise ModelError(f"joint '{r.joint}' is released twice", element=f"joint '{r.joint}'")
            seen.add(r.joint)
        # in the order of the coordinates (of the tree joints), whatever the order they were given in
        lims.sort(key=lambda lm: lm.q_index)
        lats.sort(key=lambda la: la.q_index)
        rels = sorted(releases, key=lambda r: by_name[r.joint].child)
        return cls(lims, lats, rels)

    def __bool__(self):
        return bool(self.limits or self.latches or self.releases)

    def bounds(self, nq):
        """``(lower, upper)``: nq floats each, the limits of every entry of q (``±inf`` where none)."""
        lo, hi = np.full(nq, -np.inf), np.full(nq, np.inf)
        lo[self.lim_q] = self.lower
        hi[self.lim_q] = self.upper
        return lo, hi

    def joints(self):
        """The names of the joints that carry an element, in order of first mention."""
        names = [el.joint for el in self.limits + self.latches + self.releases]
        return list(dict.fromkeys(names))

    def start_problems(self, model, q, v, t, tolerance=1e-12):
        """The ways a state at time ``t`` does not fit the stops, each ``(message, element)``: a coordinate beyond its
        limits (by more than ``tolerance`` relative to 1 + |q|), or moving on a coordinate that an "unlock" release
        still holds. The run across switches cannot start from such a state (:meth:`check_start`); the stepping
        model brings it back, as it does an overlap, and says so (``contact/stepping_run.py``)."""
        problems = []
        for rel in self.releases:
            if rel.mode == "unlock" and rel.at > t:
                info = model.joint(rel.joint)
                for k in range(info.v_slice.start, info.v_slice.stop):
                    if v[k] != 0.0:
                        problems.append((f"joint '{rel.joint}' is held until its release at t = {rel.at:g}: its "
                                         f"velocity v0[{k}] must be 0, got {shown(v[k])!r}", f"joint '{rel.joint}'"))
        for lm in self.limits:
            qk = q[lm.q_index]
            tol = tolerance * (1.0 + abs(qk))
            if not (lm.lower - tol <= qk <= lm.upper + tol):
                problems.append((f"joint '{lm.joint}': q0 of coordinate '{lm.coordinate}' = {shown(qk)!r} is outside "
                                 f"its limits [{shown(lm.lower)!r}, {shown(lm.upper)!r}]", f"joint '{lm.joint}'"))
        return problems

    def check_start(self, model, q, v, t, tolerance=1e-12):
        """Refuse (a ``ModelError`` naming the joint) the first of :meth:`start_problems`."""
        for message, element in self.start_problems(model, q, v, t, tolerance)[:1]:
            raise ModelError(message, element=element)

    def release_of(self, joint):
        """The :class:`Release` of ``joint``, or None."""
        return next((r for r in self.releases if r.joint == joint), None)

    def __repr__(self):
        return (f"Unilateral({len(self.limits)} limits, {len(self.latches)} latches, {len(self.releases)} "
                f"releases)")
