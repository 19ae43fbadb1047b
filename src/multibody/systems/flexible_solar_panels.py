"""The deployment of seed 001's two-leaf solar-array panel (§3.2.1) with flexible leaves: each leaf a beam of rigid
finite elements (seed 001, introduction; ``multibody.model.beams``, ``docs/elastic.md``).

The hinges, springs, dampers, latches, stowed and deployed angles and the leaf geometry are those of the rigid panel
(:mod:`multibody.systems.solar_panels`, :class:`~multibody.systems.solar_panels.SolarPanelParameters`): hinge 1 on
the spacecraft (the ground) at the origin, hinge 2 on leaf 1, both about z, the hinge lines 10 mm beyond the leaves'
edges and 15 mm off their mid-planes. Each hinge carries a massless bracket (``"bracket1"``, ``"bracket2"``) to which
its leaf — a beam ``"leaf1"``, ``"leaf2"`` of the leaf's length and mass per length, on the leaf's mid-line — is
clamped; hinge 2 sits on leaf 1's tip element, so it moves with leaf 1's bending. The leaves bend out of their plane,
about the hinge axis (the only deformation the deployment excites; ``EI=(None, EI)`` of ``add_beam``: inextensible,
rigid in torsion and in-plane bending), with the stiffness-proportional damping ``beta``.

Defaults (:class:`FlexiblePanelParameters`): EI = 40 N·m² — a light panel (a blanket on a frame) whose first
bending frequency is a few hertz, so that the deployment excites it visibly — 8 segments per leaf, β = 2e-4 s (ζ ≈ 0.2 %
in the first mode). The deployment unfolds as the rigid one (the leaves bend under the spring torques and their own
inertia), each hinge latches (a plastic impact, ``latch=`` elements), and the locked array then vibrates in the
modes of the deployed array: :func:`deployed_modes` gives them (``mb.modes`` of the array with both hinges welded at
their deployed angles), :func:`modal_coordinates` projects a run onto them.

>>> from multibody.systems import flexible_solar_panels as fsp
>>> model = fsp.flexible_solar_panel()
>>> model.nv, model.joint_names[1:3]
(18, ('hinge1', 'leaf1.root'))
"""
import math
from dataclasses import dataclass, field

import numpy as np

import multibody as mb
from multibody.errors import ModelError
from multibody.systems.solar_panels import HINGE_AXIS, SolarPanelParameters

__all__ = ["FlexiblePanelParameters", "flexible_solar_panel", "deploy", "deployed_modes", "modal_coordinates",
           "elastic_coordinates"]


@dataclass(frozen=True)
class FlexiblePanelParameters:
    """The rigid panel's parameters (``panel``, a ``SolarPanelParameters``: geometry, masses, hinge springs,
    dampers, latches, stowed and deployed angles), the leaves' bending stiffness ``EI`` (N·m², about the hinge
    axis), ``segments`` per leaf and the structural damping ``beta`` (s: c = β k on each elastic joint)."""

    panel: SolarPanelParameters = field(default_factory=SolarPanelParameters)
    EI: float = 40.0
    segments: int = 8
    beta: float = 2e-4

    def __post_init__(self):
        if not (math.isfinite(self.EI) and self.EI > 0):
            raise ModelError(f"flexible solar panel: EI must be a finite stiffness > 0, got {self.EI!r}", element="EI")
        if self.panel.latches == "spring":
            raise ModelError("flexible solar panel: latches must be 'exact' or 'none' (the spring latch is a torque "
                             "callback of the rigid panel's two coordinates)", element="latches")


def flexible_solar_panel(params=None, deployed=False):
    """The flexible panel (module docstring). ``deployed=True``: the array after both latches, the hinges welded
    (``Fixed``) at their deployed angles — the structure whose modes :func:`deployed_modes` computes."""
    p = params or FlexiblePanelParameters()
    s = p.panel
    exact = s.latches == "exact"
    half = 0.5 * s.length
    b = mb.ModelBuilder(gravity=s.gravity, name="flexible two-leaf solar panel" + (" (deployed)" if deployed else ""))
    for k, (parent, place) in enumerate((("ground", mb.Placement()),
                                         (f"leaf1.{p.segments}", mb.Placement(translation=(s.s12 - half, -s.h12, 0.0))))):
        bracket = f"bracket{k + 1}"
        b.add_body(bracket, 0.0)
        if deployed:
            b.add_joint(f"hinge{k + 1}", mb.Fixed(), parent, bracket,
                        placement=place * mb.Placement(mb.rotation_about(HINGE_AXIS, s.deployed[k])))
        else:
            b.add_joint(f"hinge{k + 1}", mb.Revolute(axis=HINGE_AXIS), parent, bracket, placement=place,
                        stiffness=s.stiffness[k], damping=s.damping[k], rest=s.rest[k],
                        latch=s.deployed[k] if exact else None)
        offset = (s.s10 - half, -s.h10, 0.0) if k == 0 else (s.s21 - half, s.h21, 0.0)
        b.add_beam(f"leaf{k + 1}", bracket, length=s.length, segments=p.segments, EI=(None, p.EI), GJ=None,
                   mass_per_length=(s.m1, s.m2)[k] / s.length, placement=mb.Placement(translation=offset),
                   damping=p.beta)
    return b.build()


def elastic_coordinates(model):
    """The indices in v (and q: the bending coordinates are plain numbers) of the leaves' bending joints."""
    return np.array([k for k, name in enumerate(model.velocity_names()) if ".bend" in name], dtype=int)


def deployed_modes(params=None, count=None):
    """``mb.modes`` of the deployed array (hinges welded at their deployed angles; the leaves straight, an equilibrium
    without gravity) — the frequencies the latched panel vibrates at."""
    model = flexible_solar_panel(params, deployed=True)
    return model, mb.modes(model, model.neutral(), count=count)


def modal_coordinates(result, params=None, count=3):
    """The motion of a deployment after its last lock projected on the deployed array's first ``count`` modes:
    (t, η (n, count)) with η = Φᵀ M (q_bend), M the deployed array's mass matrix and Φ its mass-normalized shapes."""
    model, m = deployed_modes(params, count)
    M = mb.crba(model, model.neutral())
    locks = [e["t"] for e in result.events if e["kind"] == "lock"]
    t0 = max(locks) if locks else result.t[0]
    rows = result.t > t0
    ours = elastic_coordinates(result.model)
    theirs = elastic_coordinates(model)
    X = np.zeros((int(rows.sum()), model.nv))
    X[:, theirs] = result.q[rows][:, ours]
    return result.t[rows], X @ (M @ m.shapes)


def deploy(params=None, t_end=6.0, rtol=1e-8, atol=1e-10, n_out=1201, **options):
    """Simulate the deployment from the stowed configuration, straight leaves at rest: ``mb.simulate`` across the
    latches' locks. Returns the Result."""
    p = params or FlexiblePanelParameters()
    model = flexible_solar_panel(p)
    q0 = model.neutral()
    for k in range(2):
        q0[model.joint(f"hinge{k + 1}").q_slice] = p.panel.stowed[k]
    return mb.simulate(model, q0, np.zeros(model.nv), t_end, rtol=rtol, atol=atol, n_out=n_out, **options)
