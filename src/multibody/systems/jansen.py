"""Theo Jansen's linkage walker (the Strandbeest leg), built once with the builder: closed loops that walk.

One leg is Jansen's eight-bar linkage with his published lengths (``LENGTHS``, in units of :data:`SCALE` m): a
crank OA of length m about the axle O, a fixed pivot B at (−a, −l) from O on the frame, and, with the points in
the vertical (x, z) plane (the crank angle θ counter-clockwise from +x),

=========  ==============================================================================================
A          the crank pin, O + m (cos θ, sin θ)
C          |AC| = j, |BC| = b (above the line AB)               — link j, and the rigid triangle B–C–E
D          |AD| = k, |BD| = c (below the line AB)               — link k, link c
E          |BE| = d, |CE| = e (outside, to the left)            — triangle B–C–E (sides b, d, e)
F          |EF| = f, |DF| = g                                   — link f, and the foot triangle D–F–G
G          |FG| = h, |DG| = i (the lowest point): the foot       — triangle D–F–G (sides g, h, i)
=========  ==============================================================================================

(:func:`leg_points`: the closed-form position analysis, circle by circle.) The walker has ``pairs`` leg pairs
phased evenly around the crank (three by default, 120° apart); a pair is two legs on one crank pin, the second the
mirror image of the first about the vertical through O (its fixed pivot at (+a, −l)). The frame (``chassis``)
slides in x and z on the ground (two prismatic joints; it does not pitch), the crank turns on it, driven by a
joint PD controller along a steady rotation (``crank_drive``); each foot is a sphere of radius ``foot`` at G, on
a floor at z = 0, with Coulomb friction ``friction``.

Tree and loops: the triangles B–C–E and the links c hinge on the chassis at B, the links j and k on the crank at
A, link f on the triangle at E, the foot triangle on link c at D; three cut joints close each leg's loops — j to
the triangle at C, k to link c at D, f to the foot triangle at F (seed 001 §3.6): 6 bodies, 6 tree joints and 3
cut joints per leg, 18 constraint rows of which 12 are independent (a planar loop closed by a spatial hinge has
redundant rows), one degree of freedom per leg beyond the crank — none: every leg follows the crank.

:func:`advance_per_turn` predicts from the kinematic paths alone how far the frame moves per crank turn when it
rests on its lowest foot and that foot does not slip: the sum over the turn of the backward travel of the foot
that is lowest (relative to the frame) — the stance strokes of the feet, each while it carries the walker.
"""
import math

import numpy as np

import multibody as mb

__all__ = ["LENGTHS", "SCALE", "leg_points", "foot_path", "advance_per_turn", "walker", "initial_state",
           "crank_angle"]

#: Jansen's "holy numbers"
LENGTHS = dict(a=38.0, b=41.5, c=39.3, d=40.1, e=55.8, f=39.4, g=36.7, h=65.7, i=49.0, j=50.0, k=61.9, l=7.8,
               m=15.0)
#: metres per unit of LENGTHS (a walker about a metre tall)
SCALE = 0.01
#: the y of the plane of each leg pair (m), and the order of the points of a leg
PAIR_SPACING = 0.05
POINTS = ("O", "A", "B", "C", "D", "E", "F", "G")


def _intersection(p, r, q, s, side):
    """The intersection of the circles (centre p, radius r) and (q, s) on the left of the line p → q (side +1) or
    on its right (−1)."""
    dx, dy = q[0] - p[0], q[1] - p[1]
    d = math.hypot(dx, dy)
    a = (r * r - s * s + d * d) / (2.0 * d)
    h = math.sqrt(max(r * r - a * a, 0.0))
    return np.array([p[0] + (a * dx - side * h * dy) / d, p[1] + (a * dy + side * h * dx) / d])


def leg_points(theta, mirror=False, lengths=LENGTHS):
    """The points O, A, B, C, D, E, F, G of a leg (module docstring) at crank angle ``theta``, as an (8, 2) array
    of (x, z) in the units of LENGTHS; ``mirror``: the mirrored leg of the pair (on the same crank pin)."""
    L = lengths
    t = math.pi - theta if mirror else theta
    O = np.zeros(2)
    A = np.array([L["m"] * math.cos(t), L["m"] * math.sin(t)])
    B = np.array([-L["a"], -L["l"]])
    C = _intersection(A, L["j"], B, L["b"], -1)
    D = _intersection(A, L["k"], B, L["c"], +1)
    E = _intersection(B, L["d"], C, L["e"], +1)
    F = _intersection(E, L["f"], D, L["g"], -1)
    G = _intersection(F, L["h"], D, L["i"], -1)
    P = np.array([O, A, B, C, D, E, F, G])
    if mirror:
        P[:, 0] *= -1.0
    return P


def _legs(pairs):
    """(name, phase, mirror, y) of each leg."""
    return [(f"{'LR'[s]}{k}", 2.0 * math.pi * k / pairs, bool(s), PAIR_SPACING * k)
            for k in range(pairs) for s in range(2)]


def foot_path(theta, pairs=3):
    """(len(theta), 2 pairs, 2): each foot's (x, z) relative to the axle O (m) at the crank angles ``theta``."""
    return np.array([[leg_points(t + phase, mirror)[7] * SCALE for _, phase, mirror, _ in _legs(pairs)]
                     for t in np.asarray(theta, dtype=float).reshape(-1)])


def advance_per_turn(pairs=3, samples=36000):
    """How far (m) the frame moves along +x per crank turn resting on its lowest foot without slip (module
    docstring), from the feet's kinematic paths (:func:`foot_path`) sampled at ``samples`` crank angles."""
    th = np.linspace(0.0, 2.0 * math.pi, samples + 1)
    P = foot_path(th, pairs)
    low = np.argmin(P[:-1, :, 1], axis=1)
    rows = np.arange(samples)
    return float(-np.sum(P[rows + 1, low, 0] - P[rows, low, 0]))


def crank_angle(model, q):
    """The crank angle θ of the configurations q (its joint coordinate plus the angle at q = 0)."""
    return model.metadata["theta0"] + np.asarray(q)[..., model.joint("crank").q_slice.start]


def walker(pairs=3, foot=0.01, friction=1.0, chassis_mass=2.0, link_mass=0.05, omega=math.pi / 2, kp=400.0, kd=20.0,
           turns=3.0, theta0=0.0):
    """The walker (module docstring) at crank angle ``theta0`` (its q = 0), with the crank driven at ``omega``
    rad/s for ``turns`` turns after a start from rest (a quintic ramp over the first second, then steady; JointPD
    of gains ``kp``, ``kd``); links of mass ``link_mass`` (uniform over their pivots' triangle), a chassis of
    ``chassis_mass`` kg."""
    b = mb.ModelBuilder(name=f"jansen walker ({pairs} pairs)", metadata={"theta0": float(theta0)})
    ydir = (0.0, -1.0, 0.0)     # positive joint angles turn counter-clockwise in the (x, z) plane
    small = np.eye(3) * 1e-5
    b.add_body("carriage", 0.1, inertia=small)
    b.add_body("chassis", chassis_mass, inertia=np.eye(3) * 0.05)
    b.add_body("crank", 0.1, inertia=np.eye(3) * 1e-4)
    b.add_joint("x", mb.Prismatic(axis=(1.0, 0, 0)), "ground", "carriage")
    b.add_joint("z", mb.Prismatic(axis=(0, 0, 1.0)), "carriage", "chassis")
    b.add_joint("crank", mb.Revolute(axis=ydir), "chassis", "crank")

    def at(p, y):
        return (p[0] * SCALE, y, p[1] * SCALE)

    def link(name, pts, y):
        com = np.mean([at(p, y) for p in pts], axis=0) - at(pts[0], y)
        b.add_body(name, link_mass, com=com, inertia=np.eye(3) * link_mass * 1e-3)

    def hinge(name, parent, child, where, parent_origin, y, cut_child_origin=None):
        place = mb.Placement(translation=np.subtract(at(where, y), at(parent_origin, y)) if parent_origin is not None
                             else at(where, y))
        if cut_child_origin is None:
            b.add_joint(name, mb.Revolute(axis=ydir), parent, child, place)
        else:
            b.add_joint(name, mb.Revolute(axis=ydir), parent, child, place,
                        mb.Placement(translation=np.subtract(at(where, y), at(cut_child_origin, y))), cut=True)

    for leg, phase, mirror, y in _legs(pairs):
        O, A, B, C, D, E, F, G = leg_points(theta0 + phase, mirror)
        link(f"{leg}.bce", (B, C, E), y)
        link(f"{leg}.c", (B, D), y)
        link(f"{leg}.j", (A, C), y)
        link(f"{leg}.k", (A, D), y)
        link(f"{leg}.f", (E, F), y)
        link(f"{leg}.foot", (D, F, G), y)
        hinge(f"{leg}.B1", "chassis", f"{leg}.bce", B, None, y)
        hinge(f"{leg}.B2", "chassis", f"{leg}.c", B, None, y)
        hinge(f"{leg}.A1", "crank", f"{leg}.j", A, None, y)
        hinge(f"{leg}.A2", "crank", f"{leg}.k", A, None, y)
        hinge(f"{leg}.E", f"{leg}.bce", f"{leg}.f", E, B, y)
        hinge(f"{leg}.D", f"{leg}.c", f"{leg}.foot", D, B, y)
        hinge(f"{leg}.C", f"{leg}.j", f"{leg}.bce", C, A, y, cut_child_origin=B)
        hinge(f"{leg}.Dk", f"{leg}.k", f"{leg}.c", D, A, y, cut_child_origin=B)
        hinge(f"{leg}.F", f"{leg}.f", f"{leg}.foot", F, E, y, cut_child_origin=D)
        b.add_collision(f"{leg}.sole", f"{leg}.foot", mb.Sphere(foot),
                        mb.Placement(translation=np.subtract(at(G, y), at(D, y))), friction=friction)
    b.add_collision("floor", "ground", mb.HalfSpace(), friction=friction)
    ramp = 1.0
    times = np.concatenate([[0.0], ramp + np.arange(0.0, turns * 2.0 * math.pi / omega + 1e-9, 0.25)])
    angles = np.concatenate([[0.0], omega * (times[1:] - ramp / 2.0)])
    b.add_controller("drive", mb.JointPD(kp, kd, target=mb.Trajectory(times, angles[:, None]),
                                         gravity_compensation=False, joints=["crank"]))
    return b.build()


def initial_state(model, pairs=3, drop=1e-4):
    """q0: the walker assembled at q = 0, its chassis at the height that puts the lowest foot sphere ``drop`` above
    the floor."""
    q = model.neutral()
    foot = next(c for c in model.collisions if c.shape.kind == "sphere").shape.radius
    feet = foot_path([model.metadata["theta0"]], pairs)[0]
    q[model.joint("z").q_slice.start] = -feet[:, 1].min() + foot + drop
    return q
