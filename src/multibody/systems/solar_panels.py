"""Deployment of a two-leaf solar-array panel (seed 001, §3.2.1, Figs. 3.7, 3.8, Table 3.1; §3.2.2, eqs. 3.41–3.43).

The book's example: a spacecraft (body 0, the ground here: it "moves uniformly in a straight line" and
neither drives nor feels the deployment) carries one panel of two leaves in a chain
``spacecraft —joint 1— leaf 1 —joint 2— leaf 2``; both joints are hinges with parallel axes n = e_3.
The leaf geometry uses the book's symbols (rebuilt in reference/seed001-part2.md §3.1), in leaf axes
(x along e_1^(i), y along e_2^(i)), from the centre of mass C_i:

* c_11 = (−s10, +h10): C_1 → joint 1 (the root hinge on the spacecraft),
* c_12 = (+s12, −h12): C_1 → joint 2,
* c_22 = (−s21, −h21): C_2 → joint 2,

so the hinge lines sit on alternate faces of the leaves, which fold as a "Z" (accordion) against the
spacecraft wall.

Model (:func:`solar_panel`): bodies ``leaf1``, ``leaf2``; revolute joints ``hinge1`` (ground → leaf1) and
``hinge2`` (leaf1 → leaf2) about z. Each body frame sits at its inboard hinge with the orientation of the
book's leaf frame, and at q = 0 every leaf frame is parallel to the inertial axes: the **deployed**
configuration, both leaves along +e_1 (the spacecraft wall is the plane x = 0, the spacecraft on x < 0).
Our coordinates are the relative hinge angles q = (θ1, θ2); the book's are the absolute angles φ_i from e_1
to e_1^(i):  φ1 = θ1, φ2 = θ1 + θ2 (:func:`absolute_angles`, :func:`relative_angles`; the same linear map
converts the rates). Stowed: θ = (+90°, −180°), i.e. φ = (90°, −90°): leaf 1 lies along the wall (+y),
leaf 2 folded back onto leaf 1, outside it.

Hinge torques (relative coordinates, the generalized force of hinge k):

* deployment torsion spring with preload, ``τ = −k (θ − θ_rest)``: the rest angle lies *beyond* the
  deployed angle, so the spring still pushes at full deployment; with the default rest angles the torque
  at deployment is half the stowed torque (``θ_rest = θ_dep + (θ_dep − θ_stow)``);
* viscous rotary damper ``τ = −c θ̇``.

Latches at the deployed angles (``SolarPanelParameters.latches``):

* ``"exact"`` (default): each hinge locks when it reaches its deployed angle — a plastic impact on the whole
  panel (the impulse of ``switching/impulse.py``), after which the hinge is rigid: one degree of freedom less
  (the hinges' ``latch=`` elements, ``multibody.model.unilateral``; ``result.events`` logs each lock with its
  time and impulse). The preloaded spring's torque is then carried by the latch;
* ``"spring"``, kept for comparison: a stiff one-sided spring (``latch_stiffness > 0``) with Hunt–Crossley
  damping on the penetration δ = σ (θ − θ_dep) > 0 (σ = sign of the deployment motion),
  ``τ = −σ K_L δ max(0, 1 + λ δ̇)``, the model's torque callback (:class:`HingeLatch`). The preloaded spring
  holds the leaf against it, so the leaf comes to rest at the penetration δ* = k |θ_rest − θ_dep| / (K_L + k)
  (≈ 0.07° with the defaults), after rebounds whose number and size depend on K_L and λ.

The spring and damper are the builder's joint spring-dampers (``stiffness``, ``rest``, ``damping``).

Default values (:class:`SolarPanelParameters`). The book gives no numbers (seed001-part2.md §0.4). The
defaults describe a rigid panel of a small (≈100 kg class) spacecraft and are chosen inside the ranges of
published small-satellite deployment mechanisms; they are round, illustrative values, not copied from one
design:

* leaves 0.60 m (span, along e_1^(i)) × 0.50 m (along the hinge) × 0.02 m, aluminium-honeycomb
  substrate with cells, areal density ≈ 5 kg/m² → m1 = m2 = 1.5 kg; central inertia of a uniform plate;
* hinge lines 10 mm beyond the leaf edges and 15 mm off the mid-plane (hinge brackets):
  s10 = s12 = s21 = 0.31 m, h10 = h12 = h21 = 0.015 m;
* preloaded torsion springs k1 = 0.15, k2 = 0.08 N·m/rad (torque 0.47 / 0.50 N·m stowed, 0.24 / 0.25 N·m
  at deployment) and viscous rotary dampers c1 = 0.5, c2 = 0.25 N·m·s/rad: hinge 2 latches at ≈ 2.4 s,
  hinge 1 at ≈ 3.5 s (exact latches: then the panel is locked; spring latches: it is at rest on them after
  ≈ 10 s). This is the regime of
  spring-driven, damper-controlled hinges of small satellites: e.g. the torsion-spring + rotary-damper
  mechanism of Scientific Reports, doi:10.1038/s41598-026-37568-x, which deploys a panel through 90° in
  ≈ 5–6 s; rigid-panel arrays of this size are the subject of Watt & Pellegrino, "Rigid deployable solar
  array", Cambridge report CUED/D-STRUCT/TR214, 2004;
* the spring latch's end stop K_L = 200 N·m/rad (a stiff latch), Hunt–Crossley λ = 20 s/rad.

The spacecraft is in orbit, so gravity is zero by default. Collisions between the leaves and the
spacecraft are not modelled.

Book quantities: :func:`barycentric_table` gives Table 3.1 (d_ij, b_ij moduli, α_ij, β_i with the corrected
β, erratum 7 of seed001-part2.md §13) computed from the built Model with ``analysis.barycentric``;
:func:`planar_hinge_equations` writes out the book's planar equations (3.41)–(3.43), an independent
formulation checked against ``crba``/``rnea`` in the tests.

Example
-------
>>> from multibody.systems import solar_panels as sp
>>> p = sp.SolarPanelParameters()
>>> model = sp.solar_panel(p)
>>> model.nq, model.joint_names[1:]
(2, ('hinge1', 'hinge2'))
>>> [round(float(x), 6) for x in sp.absolute_angles(p.stowed)]
[1.570796, -1.570796]
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.integrate import cumulative_simpson

from multibody.errors import ModelError, shown
from multibody.model import ModelBuilder, Placement, Revolute

__all__ = [
    "SolarPanelParameters",
    "HingeLatch",
    "solar_panel",
    "absolute_angles",
    "relative_angles",
    "hinge_torques",
    "energy_budget",
    "barycentric_table",
    "lock_losses",
    "planar_hinge_equations",
    "planar_accelerations",
    "planar_trajectory",
    "latch_of",
    "deploy",
    "deployment_summary",
    "result_parameters",
]

HINGE_AXIS = (0.0, 0.0, 1.0)
#: absolute angles from relative ones: φ = P θ (φ1 = θ1, φ2 = θ1 + θ2)
P_ABS = np.array([[1.0, 0.0], [1.0, 1.0]])


def _plate_inertia(m, length, width, thickness):
    """Central principal moments of a uniform rectangular plate: x along ``length``, y along ``thickness``,
    z along ``width`` (the hinge axis)."""
    return (m * (thickness**2 + width**2) / 12.0,
            m * (length**2 + width**2) / 12.0,
            m * (length**2 + thickness**2) / 12.0)


@dataclass(frozen=True)
class SolarPanelParameters:
    """Parameters of the two-leaf panel (SI units; angles in rad). See the module docstring for the sources.

    Geometry (seed 001, §3.2.1, Fig. 3.7): ``s10, h10`` locate joint 1 from C_1 (c_11 = (−s10, h10)),
    ``s12, h12`` joint 2 from C_1 (c_12 = (s12, −h12)), ``s21, h21`` joint 2 from C_2 (c_22 = (−s21, −h21)).
    ``m1, m2``: leaf masses. ``inertia1``, ``inertia2``: central principal moments (J_x, J_y, J_z) in leaf
    axes, z along the hinge; ``None`` = a uniform plate ``length × width × thickness`` (x, z, y).
    ``k1, k2``: torsion-spring stiffness (N·m/rad); ``rest1, rest2``: the spring's relaxed hinge angle
    (``None`` = ``deployed + (deployed − stowed)``: deployment torque half the stowed torque);
    ``c1, c2``: viscous dampers (N·m·s/rad); ``latches``: how each hinge stops at its deployed angle —
    ``"exact"`` (default) latches that lock it there with a plastic impact (model elements, ``Latch``; the panel
    has one degree of freedom less after each lock), ``"spring"`` the stiff one-sided spring :class:`HingeLatch`
    with ``latch_stiffness`` K_L (N·m/rad, 0 = no latch) and ``latch_damping`` λ (s/rad), kept for comparison,
    or ``"none"``; ``stowed``, ``deployed``: relative hinge angles (θ1, θ2); ``gravity``: inertial gravity (zero
    in orbit).
    """

    s10: float = 0.31
    h10: float = 0.015
    s12: float = 0.31
    h12: float = 0.015
    s21: float = 0.31
    h21: float = 0.015
    m1: float = 1.5
    m2: float = 1.5
    length: float = 0.60
    width: float = 0.50
    thickness: float = 0.02
    inertia1: tuple | None = None
    inertia2: tuple | None = None
    k1: float = 0.15
    k2: float = 0.08
    rest1: float | None = None
    rest2: float | None = None
    c1: float = 0.50
    c2: float = 0.25
    latch_stiffness: float = 200.0
    latch_damping: float = 20.0
    latches: str = "exact"
    stowed: tuple = (0.5 * math.pi, -math.pi)
    deployed: tuple = (0.0, 0.0)
    gravity: tuple = (0.0, 0.0, 0.0)

    def __post_init__(self):
        for name in ("s10", "h10", "s12", "h12", "s21", "h21", "length", "width", "thickness"):
            val = getattr(self, name)
            if not (np.isfinite(val) and val >= 0):
                raise ModelError(f"solar panel: {name} must be a finite length >= 0, got {shown(val)!r}", element=name)
        for name in ("m1", "m2"):
            val = getattr(self, name)
            if not (np.isfinite(val) and val > 0):
                raise ModelError(f"solar panel: {name} must be a positive mass, got {shown(val)!r}", element=name)
        for name in ("k1", "k2", "c1", "c2", "latch_stiffness", "latch_damping"):
            val = getattr(self, name)
            if not (np.isfinite(val) and val >= 0):
                raise ModelError(f"solar panel: {name} must be finite and >= 0, got {shown(val)!r}", element=name)
        for name in ("stowed", "deployed"):
            val = np.asarray(getattr(self, name), dtype=float)
            if val.shape != (2,) or not np.all(np.isfinite(val)):
                raise ModelError(f"solar panel: {name} must be two finite hinge angles, got {shown(val)!r}", element=name)
            object.__setattr__(self, name, tuple(float(x) for x in val))
        for k, name in enumerate(("inertia1", "inertia2")):
            val = getattr(self, name)
            if val is None:
                val = _plate_inertia(self.m1 if k == 0 else self.m2, self.length, self.width, self.thickness)
            val = np.asarray(val, dtype=float)
            if val.shape != (3,):
                raise ModelError(f"solar panel: {name} must be 3 principal moments (Jx, Jy, Jz), got {shown(val)!r}",
                                 element=name)
            object.__setattr__(self, name, tuple(float(x) for x in val))
        for k, name in enumerate(("rest1", "rest2")):
            if getattr(self, name) is None:
                object.__setattr__(self, name, 2.0 * self.deployed[k] - self.stowed[k])
        if self.latches not in ("exact", "spring", "none"):
            raise ModelError(f"solar panel: latches must be 'exact', 'spring' or 'none', got {self.latches!r}",
                             element="latches")
        if self.direction[0] == 0 or self.direction[1] == 0:
            raise ModelError("solar panel: stowed and deployed angles must differ for both hinges",
                             element="stowed")

    # derived quantities ---------------------------------------------------------------------------------
    @property
    def rest(self):
        return (self.rest1, self.rest2)

    @property
    def stiffness(self):
        return (self.k1, self.k2)

    @property
    def damping(self):
        return (self.c1, self.c2)

    @property
    def direction(self):
        """σ_k = sign(θ_dep − θ_stow): the sense of the deployment motion of each hinge."""
        return tuple(float(np.sign(d - s)) for d, s in zip(self.deployed, self.stowed))

    @property
    def joint_vectors(self):
        """The book's c_11, c_12, c_22 (seed 001, §3.2.1) as 3-vectors in leaf axes."""
        return {"c11": np.array([-self.s10, self.h10, 0.0]),
                "c12": np.array([self.s12, -self.h12, 0.0]),
                "c22": np.array([-self.s21, -self.h21, 0.0])}

    def to_dict(self):
        """JSON-ready dict (stored in ``Result.info["solar_panel"]`` by :func:`deploy`)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d):
        return cls(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items()})


class HingeLatch:
    """End stop / latch at the deployed hinge angles, a torque callback ``tau(t, q, v)`` (seed 001, §3.2.1:
    the hinge torques Y_a of the deployment are left to the user, seed001-part2.md §3.2).

    For hinge k with deployment sense σ_k, penetration δ = σ_k (θ_k − θ_dep,k) and δ̇ = σ_k θ̇_k, the torque
    is ``τ_k = −σ_k K_L δ max(0, 1 + λ δ̇)`` when δ > 0, else 0 (a linear Hunt–Crossley contact: continuous,
    never pulling). Its potential is ½ K_L δ² and the power it dissipates is
    ``K_L δ δ̇ (max(0, 1 + λ δ̇) − 1)`` ≥ 0 (:meth:`potential`, :meth:`dissipation`).
    """

    def __init__(self, deployed, direction, stiffness, damping):
        self.deployed = np.asarray(deployed, dtype=float).copy()
        self.direction = np.asarray(direction, dtype=float).copy()
        self.stiffness = float(stiffness)
        self.damping = float(damping)

    def _delta(self, q, v):
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        d = self.direction * (q - self.deployed)
        dd = self.direction * v
        return np.maximum(d, 0.0), dd

    def __call__(self, t, q, v):
        d, dd = self._delta(q, v)
        return -self.direction * self.stiffness * d * np.maximum(0.0, 1.0 + self.damping * dd)

    def potential(self, q):
        """½ K_L δ² summed over the hinges; ``q`` (..., 2)."""
        d, _ = self._delta(q, np.zeros_like(np.asarray(q, dtype=float)))
        return 0.5 * self.stiffness * np.sum(d * d, axis=-1)

    def dissipation(self, q, v):
        """Power dissipated by the latch, ``−d(½K_L δ²)/dt − τ·θ̇`` ≥ 0, summed over the hinges; (..., 2)."""
        d, dd = self._delta(q, v)
        return np.sum(self.stiffness * d * dd * (np.maximum(0.0, 1.0 + self.damping * dd) - 1.0), axis=-1)

    def __repr__(self):
        return (f"HingeLatch(deployed={self.deployed.tolist()}, direction={self.direction.tolist()}, "
                f"stiffness={self.stiffness}, damping={self.damping})")


def _params(params):
    if params is None:
        return SolarPanelParameters()
    if isinstance(params, dict):
        return SolarPanelParameters.from_dict(params)
    if not isinstance(params, SolarPanelParameters):
        raise ModelError(f"solar panel: expected SolarPanelParameters, got {type(params).__name__}",
                         element="params")
    return params


def latch_of(params=None):
    """The :class:`HingeLatch` of ``params`` (``None`` unless ``latches == "spring"`` with ``latch_stiffness >
    0``)."""
    p = _params(params)
    if p.latches != "spring" or p.latch_stiffness == 0:
        return None
    return HingeLatch(p.deployed, p.direction, p.latch_stiffness, p.latch_damping)


def solar_panel(params=None):
    """Build the two-leaf panel of seed 001, §3.2.1 (Figs. 3.7, 3.8) as a Model (see the module docstring).

    Body frames at the inboard hinges, parallel to the book's leaf frames e^(i); centre of mass of leaf i at
    −c_ii (so C_1 = (s10, −h10), C_2 = (s21, h21)); joint 2 at C_1 + c_12 = (s10 + s12, −h10 − h12) in leaf 1;
    joint 1 at the inertial origin (r_0 = 0, §3.2.1). Hinge springs, dampers and the latches as in
    :class:`SolarPanelParameters`: exact latches (default) are ``latch=`` elements of the hinges at their
    deployed angles (``multibody.model.unilateral``).
    """
    p = _params(params)
    exact = p.latches == "exact"
    b = ModelBuilder(gravity=p.gravity, name="two-leaf solar panel")
    b.add_body("leaf1", mass=p.m1, com=(p.s10, -p.h10, 0.0), inertia=np.diag(p.inertia1))
    b.add_body("leaf2", mass=p.m2, com=(p.s21, p.h21, 0.0), inertia=np.diag(p.inertia2))
    b.add_joint("hinge1", Revolute(axis=HINGE_AXIS), parent="ground", child="leaf1", placement=Placement(),
                stiffness=p.k1, damping=p.c1, rest=p.rest1, latch=p.deployed[0] if exact else None)
    b.add_joint("hinge2", Revolute(axis=HINGE_AXIS), parent="leaf1", child="leaf2",
                placement=Placement(translation=(p.s10 + p.s12, -p.h10 - p.h12, 0.0)),
                stiffness=p.k2, damping=p.c2, rest=p.rest2, latch=p.deployed[1] if exact else None)
    latch = latch_of(p)
    if latch is not None:
        b.set_torque(latch)
    return b.build()


# ------------------------------------------------------------------------------------------------ angles
def absolute_angles(theta):
    """The book's absolute angles φ (seed 001, §3.2.1: φ_i from e_1 to e_1^(i)) from our relative hinge
    angles θ: φ1 = θ1, φ2 = θ1 + θ2. Works on the last axis (time histories, rates)."""
    theta = np.asarray(theta, dtype=float)
    return theta @ P_ABS.T


def relative_angles(phi):
    """Relative hinge angles θ from the book's absolute angles φ: θ1 = φ1, θ2 = φ2 − φ1 (last axis)."""
    phi = np.asarray(phi, dtype=float)
    out = phi.copy()
    out[..., 1] = phi[..., 1] - phi[..., 0]
    return out


# ------------------------------------------------------------------------------------------------ forces
def hinge_torques(params, q, v):
    """The hinge torques (generalized forces on θ1, θ2) along a motion: dict of arrays shaped like ``q``:
    ``"spring"`` −k(θ − θ_rest), ``"damper"`` −c θ̇, ``"latch"`` (zeros without a latch), ``"total"``."""
    p = _params(params)
    q = np.asarray(q, dtype=float)
    v = np.asarray(v, dtype=float)
    k, c, rest = np.array(p.stiffness), np.array(p.damping), np.array(p.rest)
    out = {"spring": -k * (q - rest), "damper": -c * v}
    latch = latch_of(p)
    out["latch"] = np.zeros_like(q) if latch is None else latch(0.0, q, v)
    out["total"] = out["spring"] + out["damper"] + out["latch"]
    return out


def energy_budget(params, q, v, t=None):
    """Energies along a motion (q, v of shape (n, 2)): ``"kinetic"`` ½ φ̇ᵀ A φ̇ from the book's planar mass
    matrix (eq. 3.42), ``"spring"`` ½ Σ k (θ − θ_rest)², ``"latch"`` ½ K_L Σ δ², ``"gravity"``
    −Σ m_i g·r_Ci, ``"total"``, and the dissipated powers ``"damper_power"`` Σ c θ̇², ``"latch_power"``;
    with ``t`` also ``"dissipated"``: the cumulative work of the dampers and the latch (composite Simpson
    rule on the samples, ``scipy.integrate.cumulative_simpson``; accurate where the power is smooth, i.e.
    away from spring-latch impacts, which need fine samples), plus the energy taken by each lock of an exact latch
    (a run's two samples at the instant of a lock).
    Energy balance (zero gravity, no other forces): total(t) + dissipated(t) = total(0).
    """
    p = _params(params)
    q = np.atleast_2d(np.asarray(q, dtype=float))
    v = np.atleast_2d(np.asarray(v, dtype=float))
    phi = absolute_angles(q)
    phid = absolute_angles(v)
    n = q.shape[0]
    geo = _planar_geometry(p)
    # ½ φ̇ᵀ A φ̇ with A of eq. 3.42, vectorized over the samples
    a12 = geo["M"] * geo["d"][0, 1] * geo["b0"][1] * np.cos(
        phi[:, 0] - phi[:, 1] + geo["alpha"][0, 1] - geo["beta"][1])
    T = 0.5 * (geo["K3"][0] * phid[:, 0] ** 2 + 2.0 * a12 * phid[:, 0] * phid[:, 1] + geo["K3"][1] * phid[:, 1] ** 2)
    k, c, rest = np.array(p.stiffness), np.array(p.damping), np.array(p.rest)
    Vs = 0.5 * np.sum(k * (q - rest) ** 2, axis=1)
    latch = latch_of(p)
    Vl = np.zeros(n) if latch is None else latch.potential(q)
    Pl = np.zeros(n) if latch is None else latch.dissipation(q, v)
    Vg = _gravity_potential(p, q)
    out = {"kinetic": T, "spring": Vs, "latch": Vl, "gravity": Vg, "total": T + Vs + Vl + Vg,
           "damper_power": np.sum(c * v * v, axis=1), "latch_power": Pl}
    if t is not None:
        t = np.asarray(t, dtype=float)
        P = out["damper_power"] + Pl
        W = np.zeros(n)
        # between the instants of the exact latches' locks (two samples at one time: before, after) the work is
        # the integral of the power; at a lock it grows by the energy the plastic impact takes
        cuts = [0] + [k + 1 for k in np.flatnonzero(np.diff(t) == 0.0)] + [n]
        for a, b in zip(cuts[:-1], cuts[1:]):
            if a > 0:
                W[a] = W[a - 1] + out["total"][a - 1] - out["total"][a]
            seg = (cumulative_simpson(P[a:b], x=t[a:b], initial=0.0) if b - a > 2 else
                   np.concatenate([[0.0], np.cumsum(0.5 * (P[a + 1:b] + P[a:b - 1]) * np.diff(t[a:b]))]))
            W[a:b] = W[a] + seg
        out["dissipated"] = W
    return out


def _centres(p, q):
    """Inertial positions (x, y) of C_1, C_2 for relative angles q (n, 2) (eq. 3.14: r_i = r_0 − Σ_j d_ji)."""
    phi = absolute_angles(q)
    c = p.joint_vectors

    def rot(a, v):
        return np.stack([np.cos(a) * v[0] - np.sin(a) * v[1], np.sin(a) * v[0] + np.cos(a) * v[1]], axis=-1)

    r1 = -rot(phi[..., 0], c["c11"])
    r2 = r1 + rot(phi[..., 0], c["c12"]) - rot(phi[..., 1], c["c22"])
    return r1, r2


def _gravity_potential(p, q):
    g = np.asarray(p.gravity, dtype=float)
    if not g[:2].any():
        return np.zeros(np.shape(q)[0])
    r1, r2 = _centres(p, q)
    return -(p.m1 * (r1 @ g[:2]) + p.m2 * (r2 @ g[:2]))


# ------------------------------------------------------------------------------------------------ the book
def _angle(v):
    return float(math.atan2(v[1], v[0]) % (2.0 * math.pi))


def barycentric_table(params=None):
    """Table 3.1 of seed 001, §3.2.1 ("System parameters"), computed from the built Model with
    ``multibody.analysis.barycentric`` (eqs. 3.13, 3.19–3.21, listings GetBaricenterVectors / Get_b).

    Returns a dict of floats: the moduli ``d11, d12, d21, d22`` of d_ij and ``b11, b10, b12, b22, b20, b21``
    of b_ij (projections on the hinge plane), the angles ``alpha11, alpha12, alpha21, alpha22`` of d_ij and
    ``beta1, beta2`` of b_i0 in leaf frame i (in [0, 2π); 0 for a zero vector), with β corrected
    (seed001-part2.md §13, erratum 7: the printed β1 = β2 = 0 is wrong), ``M`` = m1 + m2 and ``K13, K23``,
    the moments of inertia of the augmented leaves about their inboard hinges (K_i3, eq. 3.24).
    Under the key ``"vectors"``: ``d`` (2, 2, 3), ``b`` (2, 2, 3), ``b0`` (2, 3), ``B`` (2, 3) (barycentre
    B_i − C_i), ``K`` (2, 3, 3), all in leaf axes.
    """
    from multibody.analysis.barycentric import (augmented_inertia, b0_vectors, b_vectors, barycenter_vectors,
                                                d_vectors, model_joint_vectors)

    p = _params(params)
    model = solar_panel(p)
    S, T, c, m = model_joint_vectors(model)
    n_axis = np.asarray(HINGE_AXIS)
    proj = np.eye(3) - np.outer(n_axis, n_axis)  # projection on the hinge plane (§3.2.2)
    d = d_vectors(S, T, c) @ proj
    B = barycenter_vectors(S, T, c, m) @ proj
    b = b_vectors(S, T, B, c @ proj)
    b0 = b0_vectors(S, T, B, c @ proj)
    K = augmented_inertia(d, m, np.asarray(model.inertia_com[1:]))
    norm = np.linalg.norm
    out = {"M": float(m.sum())}
    for i in range(2):
        for j in range(2):
            out[f"d{i + 1}{j + 1}"] = float(norm(d[i, j]))
            out[f"alpha{i + 1}{j + 1}"] = _angle(d[i, j]) if norm(d[i, j]) > 0 else 0.0
    out.update(b11=float(norm(b[0, 0])), b10=float(norm(b0[0])), b12=float(norm(b[0, 1])),
               b22=float(norm(b[1, 1])), b20=float(norm(b0[1])), b21=float(norm(b[1, 0])))
    out["beta1"] = _angle(b0[0])
    out["beta2"] = _angle(b0[1])
    out["K13"] = float(n_axis @ K[0] @ n_axis)
    out["K23"] = float(n_axis @ K[1] @ n_axis)
    out["vectors"] = {"d": d, "b": b, "b0": b0, "B": B, "K": K}
    return out


def _planar_geometry(p):
    """Scalars of eqs. 3.41–3.43 from :func:`barycentric_table`: M, K_i3, d_ij, α_ij, b_i0, β_i and the
    ancestor relation s_i < s_j of the chain (1 < 2)."""
    tab = barycentric_table(p)
    d = np.array([[tab["d11"], tab["d12"]], [tab["d21"], tab["d22"]]])
    alpha = np.array([[tab["alpha11"], tab["alpha12"]], [tab["alpha21"], tab["alpha22"]]])
    return dict(M=tab["M"], K3=np.array([tab["K13"], tab["K23"]]), d=d, alpha=alpha,
                b0=np.array([tab["b10"], tab["b20"]]), beta=np.array([tab["beta1"], tab["beta2"]]),
                below=np.array([[False, True], [False, False]]), m=np.array([p.m1, p.m2]))


def _planar_terms(geo, phi, phid, base_acceleration=(0.0, 0.0), forces=None, moments=None):
    """A, B, R of eq. 3.42 for one state (see :func:`planar_hinge_equations`)."""
    n = 2
    M, K3, d, al, b0, be, below = (geo[k] for k in ("M", "K3", "d", "alpha", "b0", "beta", "below"))
    A = np.zeros((n, n))
    B = np.zeros((n, n))
    for i in range(n):
        A[i, i] = K3[i]
        for j in range(n):
            if below[i, j]:  # s_i < s_j
                arg = phi[i] - phi[j] + al[i, j] - be[j]
                A[i, j] = M * d[i, j] * b0[j] * math.cos(arg)
                B[i, j] = M * d[i, j] * b0[j] * math.sin(arg)
            elif below[j, i]:  # s_j < s_i
                arg = phi[i] - phi[j] - al[j, i] + be[i]
                A[i, j] = M * d[j, i] * b0[i] * math.cos(arg)
                B[i, j] = M * d[j, i] * b0[i] * math.sin(arg)
    rx, ry = float(base_acceleration[0]), float(base_acceleration[1])
    F = np.zeros((n, 2)) if forces is None else np.asarray(forces, dtype=float).reshape(n, -1)[:, :2]
    Mi = np.zeros(n) if moments is None else np.asarray(moments, dtype=float).reshape(n)
    R = np.array(Mi, dtype=float)
    for i in range(n):
        R[i] -= M * b0[i] * (rx * math.sin(phi[i] + be[i]) - ry * math.cos(phi[i] + be[i]))
        for j in range(n):
            if i == j or below[i, j]:  # s_i <= s_j
                a = phi[i] + al[i, j]
                R[i] += d[i, j] * (F[j, 0] * math.sin(a) - F[j, 1] * math.cos(a))
    return A, B, R


def planar_hinge_equations(params, phi, phidot, base_acceleration=(0.0, 0.0), forces=None, moments=None):
    """The book's planar equations of a tree with parallel hinges, written out for the two-leaf panel
    (seed 001, §3.2.2, eqs. 3.41–3.43, corrected and verified in seed001-part2.md §4.4):

        A φ̈ + B [φ̇1², φ̇2²]ᵀ = S Y + R                                            (3.43)

        A_ii = K_i3 = J_i,33 + Σ_k m_k |d_ik|²                                         (3.41), (3.24)
        A_12 = A_21 = M d_12 b_20 cos(φ1 − φ2 + α_12 − β_2)          (s_1 < s_2)      (3.42)
        B_12 = M d_12 b_20 sin(φ1 − φ2 + α_12 − β_2),  B_21 = M d_12 b_20 sin(φ2 − φ1 − α_12 + β_2),
        B_ii = 0
        R_i = M_i − M b_i0 [r̈_0x sin(φ_i + β_i) − r̈_0y cos(φ_i + β_i)]
              + Σ_{j: s_i ≤ s_j} d_ij [F_jx sin(φ_i + α_ij) − F_jy cos(φ_i + α_ij)]

    with the corrections of seed001-part2.md §13 (errata 10, 11, 13: signs inside the cosines, the indices
    of the s_j < s_i case, sin in B, φ_i + β_i in R). M = m1 + m2; d_ij, α_ij, b_i0, β_i are the Table 3.1
    quantities of :func:`barycentric_table`, computed from the Model.

    ``phi``, ``phidot``: the book's absolute angles and rates (:func:`absolute_angles`);
    ``base_acceleration``: r̈_0 (inertial x, y) of the hinge-1 point on the spacecraft; ``forces`` (2, 2 or 3):
    F_j through C_j (inertial components), e.g. ``m_j g``; ``moments`` (2,): external torques M_i about n.
    Returns ``(A, B, R)``; the hinge torques enter as S Y with the incidence matrix S of the chain (for our
    relative-angle torques τ, S Y = P^{-T} τ, P = ∂φ/∂θ). The mass matrix of our relative coordinates is
    ``Pᵀ A P`` and the bias forces of ``rnea(q, v, 0)`` are ``Pᵀ (B φ̇² − R)``.
    """
    p = _params(params)
    geo = _planar_geometry(p)
    phi = np.asarray(phi, dtype=float).reshape(2)
    phidot = np.asarray(phidot, dtype=float).reshape(2)
    return _planar_terms(geo, phi, phidot, base_acceleration, forces, moments)


def planar_accelerations(params, q, v, t=0.0):
    """θ̈ of the panel from the book's equations (3.43) with the hinge springs, dampers, latch and gravity of
    ``params`` (gravity enters as the forces F_j = m_j g, eq. 3.42): an integrator-ready right-hand side
    independent of the library's O(N) kernels (seed 001, §3.2.2, eqs. 3.41–3.43)."""
    return _planar_rhs(_params(params))(t, q, v)


def _planar_rhs(p):
    """``f(t, q, v) -> θ̈`` from eq. 3.43: A φ̈ = S Y + R − B φ̇², with S Y = P⁻ᵀ τ for the hinge torques τ of
    our relative coordinates and θ̈ = P⁻¹ φ̈."""
    geo = _planar_geometry(p)
    g = np.asarray(p.gravity, dtype=float)
    F = np.array([p.m1 * g[:2], p.m2 * g[:2]])
    k, c, rest = np.array(p.stiffness), np.array(p.damping), np.array(p.rest)
    latch = latch_of(p)

    def f(t, q, v):
        q = np.asarray(q, dtype=float)
        v = np.asarray(v, dtype=float)
        phid = np.array([v[0], v[0] + v[1]])
        A, B, R = _planar_terms(geo, np.array([q[0], q[0] + q[1]]), phid, forces=F)
        tau = -k * (q - rest) - c * v
        if latch is not None:
            tau += latch(t, q, v)
        SY = np.array([tau[0] - tau[1], tau[1]])  # P⁻ᵀ τ: the hinge torques as the book's S Y
        phidd = np.linalg.solve(A, SY + R - B @ (phid * phid))
        return np.array([phidd[0], phidd[1] - phidd[0]])  # θ̈ = P⁻¹ φ̈

    return f


def planar_trajectory(params=None, t_end=10.0, t_eval=None, rtol=1e-11, atol=1e-12):
    """Integrate the book's planar equations (3.43) from the stowed state with scipy's DOP853: a reference
    motion independent of the library's kernels (seed 001, §3.2.2, eqs. 3.41–3.43). The work W of the dampers
    and the latch is integrated with the state (Ẇ = Σ c θ̇² + latch dissipation), so the energy balance
    E(t) + W(t) = E(0) holds to the integration tolerance. Returns ``(t, q, v, W)`` with relative angles."""
    from scipy.integrate import solve_ivp

    p = _params(params)
    rhs = _planar_rhs(p)
    c = np.array(p.damping)
    latch = latch_of(p)

    def f(t, y):
        q, v = y[:2], y[2:4]
        power = float(c @ (v * v)) + (0.0 if latch is None else float(latch.dissipation(q, v)))
        return np.concatenate([v, rhs(t, q, v), [power]])

    y0 = np.concatenate([np.asarray(p.stowed, dtype=float), np.zeros(3)])
    sol = solve_ivp(f, (0.0, t_end), y0, method="DOP853", t_eval=t_eval, rtol=rtol, atol=atol)
    if not sol.success:
        raise RuntimeError(f"solar panel: the planar reference integration failed: {sol.message}")
    return sol.t, sol.y[:2].T, sol.y[2:4].T, sol.y[4]


# ------------------------------------------------------------------------------------------------ simulation
def deploy(params=None, t_end=12.0, method="DOP853", rtol=1e-10, atol=1e-12, n_out=2401, **options):
    """Simulate the deployment from the stowed configuration at rest (seed 001, §3.2.1) with
    ``multibody.simulate`` (tree formulation: the O(N) kernels, the hinge spring-dampers of the Model and the
    latch callback). Returns the ``Result``; ``result.info["solar_panel"]`` holds the parameters (as a dict)
    for ``viz.solar_panels.plot_deployment`` and :func:`deployment_summary`. ``options`` go to ``simulate`` (``t_eval``
    replaces ``n_out``)."""
    from multibody.simulation import simulate

    p = _params(params)
    model = solar_panel(p)
    if "t_eval" in options:
        n_out = None
    res = simulate(model, np.array(p.stowed, dtype=float), np.zeros(2), t_end, method=method, rtol=rtol,
                   atol=atol, n_out=n_out, **options)
    res.info["solar_panel"] = p.to_dict()
    return res


def result_parameters(result, params):
    """The panel parameters of a deployment: ``params`` when given, else those :func:`deploy` put in
    ``result.info``; a ``ModelError`` when the result carries none."""
    if params is not None:
        return _params(params)
    d = getattr(result, "info", {}).get("solar_panel")
    if d is None:
        raise ModelError("solar panel: the result carries no panel parameters (run deploy(), or pass params)",
                         element="params")
    return SolarPanelParameters.from_dict(d)


def lock_losses(result, params=None):
    """The locks of a deployment with exact latches (``result.events`` of kind ``"lock"``) and their energy: per
    lock a dict ``element``, ``t``, ``lost`` — the drop of T + V across the switch rows of ``result`` — and
    ``plastic`` — the loss of a plastic impact on the hinges locked by then, from the state just before
    (seed 002, Δp = Jᵀ Λ): v⁺ = v⁻ − M⁻¹Jᵀ(J M⁻¹Jᵀ)⁻¹ J v⁻ with M from ``crba``, loss ½ v⁻ᵀ M v⁻ − ½ v⁺ᵀ M v⁺."""
    from multibody.algorithms.dynamics import crba

    model = solar_panel(params)
    E = result.energy["total"]
    locked, out = [], []
    for e in (e for e in result.events if e["kind"] == "lock"):
        locked.append(model.joint(e["element"]).v_slice.start)
        before, after = np.flatnonzero(result.t == e["t"])
        q, v = result.q[before], result.v[before]
        M = crba(model, q)
        J = np.eye(model.nv)[locked]
        Y = np.linalg.solve(M, J.T)
        v_plus = v - Y @ np.linalg.solve(J @ Y, J @ v)
        out.append({"element": e["element"], "t": e["t"], "lost": float(E[before] - E[after]),
                    "plastic": float(0.5 * v @ M @ v - 0.5 * v_plus @ M @ v_plus)})
    return out


def deployment_summary(result, params=None, settle_tol=1e-3):
    """Facts of a deployment run (a ``Result`` of :func:`deploy`): ``latch_time`` (first time each hinge
    reaches its deployed angle; NaN if never), ``latch_rate`` (|θ̇| then, rad/s, linear interpolation),
    ``final_angles_deg`` (the book's φ1, φ2 at the end), ``final_offset_deg`` (θ − θ_dep at the end),
    ``settle_time`` (from when on every |θ̇| < ``settle_tol`` rad/s; NaN if not settled), ``energy_stowed``,
    ``energy_final`` (springs + latch + kinetic) and ``energy_dissipated`` (Simpson rule on the outputs)."""
    p = result_parameters(result, params)
    t, q, v = result.t, result.q, result.v
    sigma = np.array(p.direction)
    dep = np.array(p.deployed)
    delta = sigma * (q - dep)
    out = {"latch_time": [], "latch_rate": []}
    for k in range(2):
        idx = np.flatnonzero(delta[:, k] >= 0.0)
        if len(idx) == 0 or idx[0] == 0:
            out["latch_time"].append(float("nan"))
            out["latch_rate"].append(float("nan"))
            continue
        i = idx[0]
        s = -delta[i - 1, k] / (delta[i, k] - delta[i - 1, k])
        out["latch_time"].append(float(t[i - 1] + s * (t[i] - t[i - 1])))
        out["latch_rate"].append(float(abs(v[i - 1, k] + s * (v[i, k] - v[i - 1, k]))))
    out["final_angles_deg"] = np.degrees(absolute_angles(q[-1])).tolist()
    out["final_offset_deg"] = np.degrees(q[-1] - dep).tolist()
    moving = np.flatnonzero(np.max(np.abs(v), axis=1) >= settle_tol)
    if len(moving) == 0:
        out["settle_time"] = float(t[0])
    elif moving[-1] == len(t) - 1:
        out["settle_time"] = float("nan")
    else:
        out["settle_time"] = float(t[moving[-1] + 1])
    e = energy_budget(p, q, v, t)
    out["energy_stowed"] = float(e["total"][0])
    out["energy_final"] = float(e["total"][-1])
    out["energy_dissipated"] = float(e["dissipated"][-1])
    return out
