"""Contact manifolds (contact/manifolds.py) and the time-stepping contact of bodies resting, rolling and landing on faces.

Bounds, and where they come from:

* the manifold of a pair touching face to face is the overlap of the two faces: its corners are intersections of
  straight edges with the reference face's sides, computed here independently (numpy) from the corners; the
  clipping is exact arithmetic on them, so 1e-15 m;
* a capsule or a cylinder lying on a box, and a stack of boxes, at rest (stepping model): with two or more contacts
  across the support, the resting impulses cancel gravity exactly (to the solver's tolerance, 1e-10 relative), so
  the bodies keep their pose to round-off; the bounds are the issue's (no rocking: orientation change < 1e-6 rad;
  no creep: < 1e-6 m; the stack's top box < 1 mm, its landing included);
* a cylinder on an incline: rolling without slipping, a = (2/3) g sin θ (the centre's equation m a = m g sin θ − F
  and the spin's I α = F r with I = m r²/2, α = a/r); slipping (μ < tan θ / 3), a = g (sin θ − μ cos θ). The scheme
  reproduces both exactly in the velocity (each step's impulse is the force of the closed form times h, as for the
  block on the incline in test_contact.py), so the issue's 1e-3 holds with a wide margin;
* a box tossed with spin onto the floor comes to rest on a face (one body axis vertical to 1e-9, its height the half
  side along it to 1e-9: the gap condition holds the face on the plane to round-off), and MuJoCo with the same box,
  toss and friction comes to rest on a face too (to its soft contact's penetration, m g / its stiffness, < 1 mm);
* a step longer than the fall (h = 0.5 s from 0.9 m) still sees the floor: candidates are chosen from the step's
  swept motion (``detection.swept_distance``), so the ball lands at the floor (gap condition: to round-off);
* ``Sphere(0)`` is a point: a tripod of three point feet rests on the floor with its feet at height 0 to round-off.
"""
import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import multibody as mb
from multibody.contact.detection import C_DIST, C_N, C_PA, C_PB, C_WIDTH, MAX_MANIFOLD, detect, pair_distance
from test_contact_detection import WS, pack

G = 9.81
I3 = np.eye(3)
LYING = Rotation.from_euler("x", 90, degrees=True).as_matrix()      # a capsule's or cylinder's axis along −y


def contacts(a, b, margin=1e-3):
    """The contact rows of shapes a and b (dicts of tests/contact_reference.py)."""
    gi, gf, gw, verts = pack([a, b])
    out = np.zeros((2 * MAX_MANIFOLD, C_WIDTH))
    k = detect(gi, gf, verts, np.array([[0, 1]]), gw, margin, out, WS)
    return out[:k]


def square_clip(points, lo, hi):
    """The polygon ``points`` (k, 2), in order, cut to the square [lo, hi]² (independent of the kernels)."""
    poly = [np.asarray(p, float) for p in points]
    for axis in (0, 1):
        for bound, sign in ((hi, 1.0), (lo, -1.0)):
            out = []
            for a, b in zip(poly, poly[1:] + poly[:1]):
                da, db = sign * (a[axis] - bound), sign * (b[axis] - bound)
                if da <= 0:
                    out.append(a)
                if da * db < 0:
                    out.append(a + da / (da - db) * (b - a))
            poly = out
    return poly


TABLE = dict(kind="box", R=I3, p=np.array([0.0, 0.0, 0.1]), half_sizes=np.array([0.3, 0.3, 0.1]))


@pytest.mark.parametrize("kind", ["capsule", "cylinder"])
def test_lying_on_a_box_face_touches_along_a_segment(kind):
    """A capsule or a cylinder (radius 0.05, half length 0.1) lying 0.1 mm into a box's top: two contacts, at the
    two ends of its lowest line, each 0.1 mm deep along the face normal."""
    shape = dict(kind=kind, R=LYING, p=np.array([0.05, 0.02, 0.25 - 1e-4]), radius=0.05, half=0.1)
    rows = contacts(shape, TABLE)
    assert len(rows) == 2
    np.testing.assert_allclose(rows[:, C_DIST], -1e-4, rtol=0, atol=1e-15)
    np.testing.assert_allclose(rows[:, C_N:C_N + 3], np.tile([0.0, 0.0, -1.0], (2, 1)), rtol=0, atol=1e-15)
    np.testing.assert_allclose(sorted(rows[:, C_PB + 1]), [0.02 - 0.1, 0.02 + 0.1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(rows[:, C_PB + 2], 0.2, rtol=0, atol=1e-15)          # on the box's top
    np.testing.assert_allclose(rows[:, C_PA + 2], 0.2 - 1e-4, rtol=0, atol=1e-15)   # the lowest line


def test_cylinder_standing_over_an_edge():
    """A standing cylinder whose cap hangs over the box's edge x = 0.3: its cap (the octagon of manifolds.RIM
    corners) cut to the face, every point 0.1 mm deep."""
    r = 0.05
    cyl = dict(kind="cylinder", R=I3, p=np.array([0.28, 0.0, 0.3 - 1e-4]), radius=r, half=0.1)
    rows = contacts(cyl, TABLE)
    th = 2 * np.pi * np.arange(8) / 8
    octagon = np.c_[0.28 + r * np.cos(th), r * np.sin(th)]
    expected = square_clip(list(octagon), -0.3, 0.3)
    assert len(rows) == len(expected) == 7
    np.testing.assert_allclose(rows[:, C_DIST], -1e-4, rtol=0, atol=1e-15)
    got = rows[:, C_PA:C_PA + 2]
    np.testing.assert_allclose(sorted(map(tuple, got)), sorted(map(tuple, expected)), rtol=0, atol=1e-15)


CUBE = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])


@pytest.mark.parametrize("support", ["box", "halfspace"])
def test_hull_face_on_a_face(support):
    """A convex hull (a cube's eight vertices), yawed 0.3 rad, 0.1 mm into a box's top or a half-space: its four
    bottom corners, 0.1 mm deep."""
    R = Rotation.from_euler("z", 0.3).as_matrix()
    if support == "box":
        hull = dict(kind="hull", R=R, p=np.array([0.0, 0.0, 0.3 - 1e-4]), verts=CUBE)
        rows = contacts(TABLE, hull)
    else:
        hull = dict(kind="hull", R=R, p=np.array([0.0, 0.0, 0.1 - 1e-4]), verts=CUBE)
        rows = contacts(dict(kind="halfspace", R=I3, p=np.zeros(3)), hull)
    corners = (R @ CUBE[CUBE[:, 2] < 0].T).T[:, :2]
    assert len(rows) == 4
    np.testing.assert_allclose(rows[:, C_DIST], -1e-4, rtol=0, atol=1e-15)
    np.testing.assert_allclose(sorted(map(tuple, rows[:, C_PB:C_PB + 2])), sorted(map(tuple, corners)), rtol=0,
                               atol=1e-15)


def test_many_sided_hull_on_a_plane():
    """A hull of 64 vertices (a 32-gon prism, radius 0.1) standing on a plane: its patch is the eight vertices
    extreme along eight directions (manifolds.hull_patch), all on the bottom rim, at height 0."""
    th = np.linspace(0, 2 * np.pi, 33)[:-1]
    rim = np.c_[0.1 * np.cos(th), 0.1 * np.sin(th)]
    verts = np.r_[np.c_[rim, np.full(32, -0.05)], np.c_[rim, np.full(32, 0.05)]]
    rows = contacts(dict(kind="halfspace", R=I3, p=np.zeros(3)), dict(kind="hull", R=I3, p=np.array([0, 0, 0.05]),
                                                                      verts=verts))
    assert len(rows) == 8
    np.testing.assert_allclose(rows[:, C_DIST], 0.0, rtol=0, atol=1e-16)
    np.testing.assert_allclose(np.hypot(rows[:, C_PB], rows[:, C_PB + 1]), 0.1, rtol=0, atol=1e-15)


def test_flush_boxes_with_round_off_turns():
    """A cube of 0.1 m resting on one of 0.2 m, faces flush, each turned by round-off (the state of a resting
    stack: quaternions 1e-16 off the identity): their face manifold, four corners at distance 0 (to round-off)
    along z. EPA from GJK's simplex that only touches the origin once ended on a face inside the Minkowski
    difference here (one contact, 2.8 cm deep along (0.50, −0.76, −0.42)); the depth is now checked against the
    overlap along the normal (``detection.overlap_along``)."""
    low = dict(kind="box", R=Rotation.from_quat([1.0, -2.490356e-18, 1.344801e-18, -5.892428e-19],
                                                scalar_first=True).as_matrix(),
               p=np.array([-6.579658e-19, 2.621876e-19, 0.1]), half_sizes=np.array([0.1, 0.1, 0.1]))
    top = dict(kind="box", R=Rotation.from_quat([1.0, -9.011183e-17, -3.449042e-17, -1.638227e-18],
                                                scalar_first=True).as_matrix(),
               p=np.array([0.02, 8.988231e-18, 0.25]), half_sizes=np.array([0.05, 0.05, 0.05]))
    for a, b, up in ((low, top, 1.0), (top, low, -1.0)):
        rows = contacts(a, b)
        assert len(rows) == 4
        np.testing.assert_allclose(rows[:, C_DIST], 0.0, rtol=0, atol=1e-15)
        np.testing.assert_allclose(rows[:, C_N:C_N + 3], np.tile([0.0, 0.0, up], (4, 1)), rtol=0, atol=1e-15)


# ---- runs ----------------------------------------------------------------------------------------------------------
def free_body(shape, support, m=1.0, inertia=(0.003, 0.004, 0.002), mu=0.5, place=None):
    b = mb.ModelBuilder()
    b.add_body("obj", mass=m, inertia=inertia)
    b.add_joint("free", mb.Free(), parent="ground", child="obj")
    b.add_collision("obj", "obj", shape, friction=mu)
    b.add_collision("support", "ground", support, place, friction=mu)
    return b.build()


def angle_between(q, q0):
    return (Rotation.from_quat(q, scalar_first=True) * Rotation.from_quat(q0, scalar_first=True).inv()).magnitude()


@pytest.mark.parametrize("shape,roll", [(mb.Capsule(0.05, 0.2), 0.0), (mb.Cylinder(0.05, 0.2), 0.0),
                                        (mb.Cylinder(0.05, 0.2), 0.3), (mb.Cylinder(0.05, 0.2), 1.0)],
                         ids=["capsule", "cylinder", "cylinder-rolled-0.3", "cylinder-rolled-1.0"])
def test_lying_on_a_box_for_ten_seconds(shape, roll):
    """Lying still, whatever the angle it lies at about its own axis (``roll``: the rotation matrix then has no exact
    zeros, and the closest points' normal comes from GJK's witness points, not from an exact axis)."""
    model = free_body(shape, mb.Box((0.6, 0.6, 0.2)), place=mb.Placement(translation=(0, 0, 0.1)))
    q0 = model.neutral()
    q0[:3] = [0.05, 0.02, 0.25]
    q0[3:7] = Rotation.from_matrix(LYING @ Rotation.from_euler("z", roll).as_matrix()).as_quat(scalar_first=True)
    res = mb.simulate(model, q0, None, 10.0, h=1e-3, contact="stepping", n_out=101)
    assert np.max(np.abs(res.q[:, :3] - q0[:3])) < 1e-6
    assert max(angle_between(q, q0[3:7]) for q in res.q[:, 3:7]) < 1e-6
    assert res.contacts.count[-1] == 2


def test_stack_of_five_boxes_stands():
    n, s = 5, 0.1
    b = mb.ModelBuilder()
    for i in range(n):
        b.add_body(f"box{i}", mass=1.0, inertia=(s * s / 6,) * 3)
        b.add_joint(f"free{i}", mb.Free(), parent="ground", child=f"box{i}")
        b.add_collision(f"box{i}", f"box{i}", mb.Box((s, s, s)), friction=0.5)
    b.add_collision("floor", "ground", mb.HalfSpace(), friction=0.5)
    model = b.build()
    q0 = model.neutral()
    rng = np.random.default_rng(0)
    for i in range(n):       # each 0.1 mm above the one below, off-centre by up to 1 cm
        q0[7 * i:7 * i + 3] = [*rng.uniform(-0.01, 0.01, 2), s / 2 + i * s + 1e-4 * (i + 1)]
    res = mb.simulate(model, q0, None, 10.0, h=1e-3, contact="stepping", n_out=11)
    top = res.q[:, 7 * (n - 1):7 * (n - 1) + 3]
    assert np.max(np.linalg.norm(top - q0[7 * (n - 1):7 * (n - 1) + 3], axis=1)) < 1e-3
    np.testing.assert_allclose(res.q[-1, 2::7], s / 2 + s * np.arange(n), rtol=0, atol=1e-6)


def cylinder_on_incline(theta, mu, r=0.1, length=0.2, m=2.0):
    """A cylinder lying across a half-space tilted by theta about y (its axis along y), touching it."""
    R = mb.rotation_about((0, 1, 0), theta)
    axial, across = 0.5 * m * r * r, m * (3 * r * r + length * length) / 12
    model = free_body(mb.Cylinder(r, length), mb.HalfSpace(), m=m, inertia=(across, across, axial), mu=mu,
                      place=mb.Placement(R, (0, 0, 0)))
    q0 = model.neutral()
    q0[:3] = R @ [0.0, 0.0, r]
    q0[3:7] = Rotation.from_matrix(R @ mb.rotation_about((1, 0, 0), -np.pi / 2)).as_quat(scalar_first=True)
    return model, q0, R


@pytest.mark.parametrize("mu", [0.5, 0.05], ids=["rolls", "slips"])
def test_cylinder_down_an_incline(mu):
    theta = 0.3
    model, q0, R = cylinder_on_incline(theta, mu)
    res = mb.simulate(model, q0, None, 1.0, h=1e-3, contact="stepping", n_out=11)
    downhill = R @ [1.0, 0.0, 0.0]
    speed = Rotation.from_quat(res.q[-1, 3:7], scalar_first=True).as_matrix() @ res.v[-1, 3:] @ downhill
    rolls = mu >= np.tan(theta) / 3
    a = 2 / 3 * G * np.sin(theta) if rolls else G * (np.sin(theta) - mu * np.cos(theta))
    assert speed / res.t[-1] / a == pytest.approx(1.0, abs=1e-3)
    spin = abs(res.v[-1, 2])                                 # about its own axis (body z)
    assert (spin * 0.1 / speed == pytest.approx(1.0, abs=1e-3)) == rolls
    assert np.max(np.abs((res.q[:, :3] - q0[:3]) @ (R @ [0.0, 0.0, 1.0]))) < 1e-9      # on the plane


def test_tossed_box_comes_to_rest_on_a_face():
    half = np.array([0.1, 0.075, 0.05])
    m = 1.0
    inertia = m / 3 * np.array([half[1] ** 2 + half[2] ** 2, half[0] ** 2 + half[2] ** 2, half[0] ** 2 + half[1] ** 2])
    model = free_body(mb.Box(2 * half), mb.HalfSpace(), m=m, inertia=tuple(inertia))
    q0 = model.neutral()
    q0[2] = 0.5
    q0[3:7] = Rotation.from_euler("xyz", [0.3, 0.5, 0.2]).as_quat(scalar_first=True)
    v0 = np.array([3.0, -2.0, 5.0, 0.5, 0.2, 1.0])           # spin and velocity in the body's axes
    res = mb.simulate(model, q0, v0, 4.0, h=1e-3, contact="stepping", n_out=5)
    up = Rotation.from_quat(res.q[-1, 3:7], scalar_first=True).as_matrix()[2]   # the world z in body axes
    k = int(np.argmax(np.abs(up)))
    assert abs(abs(up[k]) - 1.0) < 1e-9 and res.q[-1, 2] == pytest.approx(half[k], abs=1e-9)
    assert np.max(np.abs(res.v[-1])) < 1e-9 and res.info["solves"]["step"]["unconverged"] == 0
    mujoco = pytest.importorskip("mujoco")
    xml = (f'<mujoco><option timestep="0.001" cone="elliptic" impratio="100"/><worldbody>'
           f'<geom type="plane" size="0 0 1" friction="0.5 0.005 0.0001"/><body pos="0 0 0.5"><freejoint/>'
           f'<geom type="box" size="{half[0]} {half[1]} {half[2]}" mass="{m}" friction="0.5 0.005 0.0001"/></body>'
           f'</worldbody></mujoco>')
    M = mujoco.MjModel.from_xml_string(xml)
    D = mujoco.MjData(M)
    D.qpos[:] = q0
    D.qvel[:3] = Rotation.from_quat(q0[3:7], scalar_first=True).as_matrix() @ v0[3:]   # world linear velocity
    D.qvel[3:] = v0[:3]                                                                 # body spin
    mujoco.mj_step(M, D, nstep=4000)
    up = Rotation.from_quat(D.qpos[3:7], scalar_first=True).as_matrix()[2]
    j = int(np.argmax(np.abs(up)))
    assert abs(abs(up[j]) - 1.0) < 1e-9 and abs(D.qpos[2] - half[j]) < 1e-3
    assert np.max(np.abs(D.qvel)) < 1e-6


def test_a_step_longer_than_the_fall_sees_the_floor():
    model = free_body(mb.Sphere(0.1), mb.HalfSpace(), inertia=(0.004,) * 3)
    q0 = model.neutral()
    q0[2] = 1.0
    res = mb.simulate(model, q0, None, 2.0, h=0.5, contact="stepping")
    assert res.q[1, 2] == pytest.approx(0.1, abs=1e-12) and np.min(res.q[:, 2]) >= 0.1 - 1e-12


def test_point_feet():
    """A tripod on three ``Sphere(0)`` feet 0.1 m below its centre, dropped 1 mm: it rests on its points."""
    b = mb.ModelBuilder()
    b.add_body("tripod", mass=1.0, inertia=(0.01, 0.01, 0.02))
    b.add_joint("free", mb.Free(), parent="ground", child="tripod")
    for k in range(3):
        a = 2 * np.pi * k / 3
        b.add_frame(f"foot{k}", "tripod", mb.Placement(translation=(0.2 * np.cos(a), 0.2 * np.sin(a), -0.1)))
        b.add_contact_sphere(f"foot{k}", 0.0, friction=0.8)
    b.add_collision("floor", "ground", mb.HalfSpace())
    model = b.build()
    assert [c.shape.radius for c in model.collisions if c.shape.kind == "sphere"] == [0.0] * 3
    q0 = model.neutral()
    q0[2] = 0.101
    res = mb.simulate(model, q0, None, 0.5, h=1e-3, contact="stepping", n_out=6)
    assert res.q[-1, 2] == pytest.approx(0.1, abs=1e-12) and res.contacts.count[-1] == 3
    np.testing.assert_allclose(res.contacts.at(5)["distance"], 0.0, rtol=0, atol=1e-12)


def test_cylinder_rolling_on_a_box_keeps_its_rate():
    """A cylinder lying on a box face, given a roll about its axis, rolls on without slipping at the rate its angular
    momentum about the contact line keeps, I ω0 / (I + m r²) (the first step's impulses take it there), on two
    contact points at every step: a tilted normal from the witness points made it drop to one point, tip and
    sink into the box (3 cm after 0.8 s)."""
    m, r, axial = 1.0, 0.05, 0.002
    model = free_body(mb.Cylinder(r, 0.2), mb.Box((0.6, 0.6, 0.2)), m=m, inertia=(0.003, 0.004, axial),
                      place=mb.Placement(translation=(0, 0, 0.1)))
    q0 = model.neutral()
    q0[:3] = [0.05, 0.02, 0.25]
    q0[3:7] = Rotation.from_matrix(LYING).as_quat(scalar_first=True)
    v0 = np.zeros(6)
    v0[2] = 1e-3                                     # ω along the body's axis (ground −y)
    res = mb.simulate(model, q0, v0, 1.0, h=1e-3, contact="stepping", output_every=1)
    rate = axial * v0[2] / (axial + m * r * r)
    # exact but for the solver's tolerance: each impulse within 1e-10 of the largest, m g h / 2 (one contact's
    # share of the weight), so every row's velocity within that times W's largest row sum: six rows (two contacts'
    # normal and friction rows), each entry at most the largest diagonal one (W is positive semidefinite), itself at
    # most 1/m + |ρ|²/I_min with the lever |ρ|² ≤ r² + (L/2)² from the centre of mass: 2.1e-11 m/s, over r in
    # rad/s; the height moves by that over the run's 1 s
    lever2, i_min, rows = r * r + 0.1 ** 2, 0.002, 6
    du = 1e-10 * (0.5 * m * 9.81 * 1e-3) * rows * (1.0 / m + lever2 / i_min)
    np.testing.assert_allclose(res.v[1:, 2], rate, rtol=0, atol=du / r)
    np.testing.assert_allclose(res.v[1:, 3], -rate * r, rtol=0, atol=du)
    assert np.max(np.abs(res.q[:, 2] - q0[2])) < du * 1.0
    assert np.max(np.abs(res.v[1:, :2])) < du / r
    assert np.all(res.contacts.count[1:] == 2)


def test_near_touching_normal_is_a_unit_vector():
    """A cylinder lying on a box at any angle about its axis and a gap from 1e-12 to 1e-6 m: GJK's closest points
    give the normal, which must be of unit length to round-off (it was the witness points' difference over GJK's
    own distance, off by the points' round-off over the gap: 4e-7 at 2.4e-11 m, past the face test's 1e-6 at
    smaller gaps), so that the pair makes its two-point manifold along the box's face normal."""
    rng = np.random.default_rng(3)
    box = dict(kind="box", R=np.eye(3), p=np.array([0.0, 0.0, 0.1]), half_sizes=np.array([0.3, 0.3, 0.1]))
    for _ in range(40):
        roll, gap = rng.uniform(0.0, 2.0 * np.pi), 10.0 ** rng.uniform(-12.0, -6.0)
        R = LYING @ Rotation.from_euler("z", roll).as_matrix()
        cyl = dict(kind="cylinder", R=R, p=np.array([*rng.uniform(-0.1, 0.1, 2), 0.25 + gap]), radius=0.05, half=0.1)
        gi, gf, gw, verts = pack([box, cyl])
        d, n0, n1, n2 = pair_distance(gi, gf, gw, verts, 0, 1, WS)[:4]
        # the normalization's round-off (a few ε; 1e-14 leaves margin), 1e8 below the face test's 1e-6 it protects
        assert abs(math.hypot(n0, n1, n2) - 1.0) < 1e-14
        rows = contacts(box, cyl)
        assert len(rows) == 2
        np.testing.assert_allclose(rows[:, C_N:C_N + 3], [[0.0, 0.0, 1.0]] * 2, rtol=0, atol=1e-15)
        np.testing.assert_allclose(rows[:, C_DIST], gap, rtol=0, atol=1e-15)


def test_a_mass_matrix_that_is_not_positive_definite_stops_the_run():
    """The step's free velocity comes from the factor M = LᵀL: a factor that fails (here the body's rotational
    inertia zeroed in the run's own parameters, which a model cannot be built with) ends the run as non-finite,
    with what it computed, instead of stepping on an unfinished factor."""
    from multibody.contact.models import stepping_system
    from multibody.contact.stepping_run import simulate_stepping
    from multibody.errors import IntegrationError
    from multibody.kernels.kinematics import F_IC

    model = free_body(mb.Sphere(0.1), mb.HalfSpace(), inertia=(0.004, 0.004, 0.004))
    q0 = model.neutral()
    q0[2] = 0.1
    system = stepping_system(model, q0, np.zeros(6))
    mf = system.params.tree.mf.copy()               # (the model's own parameters stay as they are)
    mf[1, F_IC:F_IC + 6] = 0.0                      # the inertia about the centre of mass (6 entries)
    system.params = system.params._replace(tree=system.params.tree._replace(mf=mf))
    with pytest.raises(IntegrationError, match="non-finite") as err:
        simulate_stepping(system, model, 0.0, 0.01, "stepping", 1e-3, None, None, None, False)
    assert err.value.result.t[0] == 0.0
