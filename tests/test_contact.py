"""Contact with friction (issue 26): the two contact models against the mechanics they must reproduce.

Bounds, and where they come from:

* block on an incline (stepping model): the issue's bounds — a sticking block drifts < 1e-6 m over 2 s, a sliding
  one accelerates at g (sin θ − μ cos θ) to 1e-3. The discrete scheme reproduces both exactly: with the block's
  four corners on the plane, each step's impulses cancel gravity's normal part and give friction μ N h (sliding)
  or the whole tangential part (sticking), to the solver's tolerance 1e-10 (relative impulse change); the
  dissipated energy is then friction's work on the exact motion, and the scheme's energy defect a closed form;
* a ball dropped on the floor (stepping): at rest at height r with penetration < 1e-4 m (the issue's bound; the
  gap condition φ + h u_n ≥ 0 keeps it 0 to round-off), and its energy never increases from one step to the next
  (semi-implicit Euler in free fall loses ½ m g² h² per step; inelastic impacts and resting contact take energy
  out), to the round-off of the energy, 1e-12 E;
* restitution (compliant model): an impact at v_in leaves at v_out with α (v_in + v_out) = (2/3) ln((1 + 3α v_in/2)
  / (1 − 3α v_out/2)), the first integral of the Hunt–Crossley contact (contact/compliant_forces.py); without gravity
  the run must match it to the integrator's error. The force's power 3/2 at first touch (its second derivative is
  unbounded there) defeats the error estimate of the step that straddles it, so the error is not rtol per step:
  over start positions and tolerances 1e-10 to 1e-13 (two spheres and a ball on the floor) it stayed below
  200 rtol v_in, which at rtol 1e-13 gives 2e-11 v_in; the bound 1e-9 v_in holds with a margin of 50;
* a ball launched sliding without spin: angular momentum about the contact point is conserved, so it rolls at
  v = 5/7 v0 (the issue's 1e-3): exactly in the stepping model (impulses at the contact point), and in the
  compliant one up to its contact radius r − δ/2 (δ = (mg/k)^(1/p)): (2/7)(δ/r) = 3e-4 at k = 1e7;
* energy balance of the compliant model: total + dissipated is constant to the integration error (rtol 1e-10).
"""
import math
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.errors import IntegrationError, ModelError
from multibody.contact.compliant_forces import hunt_crossley_damping, hunt_crossley_restitution
from checkpoint_copies import copy_at

G = 9.81


def ball(r=0.1, m=1.0, mu=0.5, g=G, floor_mu=0.0):
    b = mb.ModelBuilder(gravity=(0, 0, -g))
    inertia = 0.4 * m * r * r
    b.add_body("ball", mass=m, inertia=(inertia, inertia, inertia))
    b.add_joint("free", mb.Free(), parent="ground", child="ball")
    b.add_collision("ball", "ball", mb.Sphere(r), friction=mu)
    b.add_collision("floor", "ground", mb.HalfSpace(), friction=floor_mu)
    return b.build()


def quat_matrix(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def incline(theta, mu, half=(0.2, 0.15, 0.05), m=2.0):
    """A box on a half-space tilted by theta about y (its downhill direction R x), bottom face on the plane."""
    hx, hy, hz = half
    b = mb.ModelBuilder()
    b.add_body("block", mass=m, inertia=(m / 3 * (hy * hy + hz * hz), m / 3 * (hx * hx + hz * hz),
                                         m / 3 * (hx * hx + hy * hy)))
    b.add_joint("free", mb.Free(), parent="ground", child="block")
    b.add_collision("block", "block", mb.Box((2 * hx, 2 * hy, 2 * hz)), friction=mu)
    R = mb.rotation_about((0, 1, 0), theta)
    b.add_collision("slope", "ground", mb.HalfSpace(), mb.Placement(R, (0, 0, 0)), friction=0.0)
    model = b.build()
    q0 = model.neutral()
    q0[:3] = R @ np.array([0.0, 0.0, hz])
    q0[3:7] = [np.cos(theta / 2), 0.0, np.sin(theta / 2), 0.0]
    return model, q0, R


@pytest.mark.parametrize("theta, mu", [(0.3, 0.5), (0.45, 0.5), (0.5, 0.3), (0.6, 0.2)])
def test_block_on_incline(theta, mu):
    model, q0, R = incline(theta, mu)
    res = mb.simulate(model, q0, None, 2.0, h=1e-3, contact="stepping", n_out=201)
    downhill = R @ [1.0, 0.0, 0.0]
    s = (res.q[:, :3] - q0[:3]) @ downhill
    height = (res.q[:, :3] - q0[:3]) @ (R @ [0.0, 0.0, 1.0])
    assert np.max(np.abs(height)) <= 1e-9                       # it stays on the plane
    E, D, t = res.energy["total"], res.energy["dissipated"], res.t - res.t[0]
    if np.tan(theta) < mu:
        assert np.max(np.abs(s)) < 1e-6
        assert np.max(np.abs(D)) < 1e-9 and np.max(np.abs(E - E[0])) < 1e-9   # static friction does no work
    else:
        a = G * (np.sin(theta) - mu * np.cos(theta))
        speed = (quat_matrix(res.q[-1, 3:7]) @ res.v[-1, 3:]) @ downhill
        assert abs(speed / res.t[-1] / a - 1.0) < 1e-3
        # friction force on the block: μ N against the motion, N = m g cos θ over the corners
        F = res.contacts.total_force()[-1]
        assert F @ downhill == pytest.approx(-mu * 2.0 * G * np.cos(theta), rel=1e-6)
        # the dissipated energy is friction's work on the exact motion, μ m g cos θ a t²/2 (the impulse μ N h times
        # the step's mean velocity); the scheme's total energy falls short of the balance by its own defect: the
        # position takes the step's end velocity, so gravity's work runs ahead of the kinetic energy by
        # ½ m g sin θ a h² per step, ½ m g sin θ a h t in all
        np.testing.assert_allclose(D[1:], mu * 2.0 * G * np.cos(theta) * a * t[1:] ** 2 / 2, rtol=1e-9, atol=0)
        np.testing.assert_allclose(E + D - E[0], -0.5 * 2.0 * G * np.sin(theta) * a * 1e-3 * t, rtol=0, atol=1e-9)


def test_ball_dropped_comes_to_rest_and_never_gains_energy():
    r = 0.1
    model = ball(r)
    q0 = model.neutral()
    q0[2] = 1.0
    res = mb.simulate(model, q0, None, 2.0, h=1e-3, contact="stepping")
    assert res.q[-1, 2] == pytest.approx(r, abs=1e-12)
    assert -np.min(res.contacts.distance) < 1e-4
    assert np.min(res.q[:, 2]) > r - 1e-4
    E = res.energy["total"]
    assert np.max(np.diff(E)) <= 1e-12 * E[0]
    # the energy that left is in "dissipated" (up to the integrator's ½ m g² h² per step of free fall)
    fall = int(np.sqrt(2 * (1.0 - r) / G) / 1e-3) + 1
    assert E[-1] + res.energy["dissipated"][-1] == pytest.approx(E[0], abs=fall * 0.5 * G * G * 1e-6 * 1.01)
    at_rest = res.contacts.at(len(res) - 1)
    assert at_rest["names"] == [("floor", "ball", "ground", "ball")]
    assert at_rest["normal_force"][0] == pytest.approx(G, rel=1e-12)


@pytest.mark.parametrize("alpha, v_in", [(0.5, 1.0), (0.2, 2.0)])
def test_compliant_restitution_follows_hunt_crossley(alpha, v_in):
    model = ball(g=0.0)
    q0 = model.neutral()
    q0[2] = 0.2
    v0 = np.zeros(6)
    v0[5] = -v_in
    res = mb.simulate(model, q0, v0, 0.3, contact="compliant", damping=alpha, rtol=1e-13, atol=1e-15, n_out=31)
    e = res.v[-1, 5] / v_in
    assert e == pytest.approx(hunt_crossley_restitution(alpha, v_in), abs=1e-9)
    assert hunt_crossley_damping(e, v_in) == pytest.approx(alpha, rel=1e-6)
    E = res.energy["total"] + res.energy["dissipated"]
    assert np.max(np.abs(E - E[0])) <= 1e-8 * E[0]


@pytest.mark.parametrize("contact, options", [("stepping", {"h": 1e-3}),
                                              ("compliant", {"stiffness": 1e7, "rtol": 1e-9, "atol": 1e-11})])
def test_ball_rolls_at_five_sevenths(contact, options):
    r, v0 = 0.1, 2.0
    model = ball(r, mu=0.3)
    q0 = model.neutral()
    q0[2] = r
    if contact == "compliant":   # start at its resting penetration
        q0[2] = r - (G / options["stiffness"]) ** (1 / 1.5)
    v = np.zeros(6)
    v[3] = v0
    res = mb.simulate(model, q0, v, 2.0, contact=contact, n_out=21, **options)
    speed = quat_matrix(res.q[-1, 3:7]) @ res.v[-1, 3:]
    assert speed[0] / (5 / 7 * v0) == pytest.approx(1.0, abs=1e-3)
    spin = quat_matrix(res.q[-1, 3:7]) @ res.v[-1, :3]
    assert spin[1] * r / speed[0] == pytest.approx(1.0, abs=1e-3)  # rolling: ω r = v


def test_compliant_ball_settles_with_energy_balance():
    model = ball(0.1)
    q0 = model.neutral()
    q0[2] = 0.5
    res = mb.simulate(model, q0, None, 2.0, contact="compliant", rtol=1e-10, atol=1e-12, n_out=101)
    E = res.energy["total"] + res.energy["dissipated"]
    assert np.max(np.abs(E - E[0])) <= 1e-6 * E[0]
    assert np.all(np.diff(res.energy["dissipated"]) >= -1e-12)
    delta = (G / 1e6) ** (1 / 1.5)                       # weight = k δ^p
    assert res.q[-1, 2] == pytest.approx(0.1 - delta, abs=1e-6)
    fixed = mb.simulate(model, q0, None, 2.0, contact="compliant", method="RK4", h=2e-4, n_out=101)
    assert fixed.info["path"] == "compiled"
    assert fixed.q[-1, 2] == pytest.approx(0.1 - delta, abs=1e-6)


def test_torque_laws_compiled_and_python_agree():
    """A compiled torque law and a Python callback of the same torques give the same run, both in the compiled loop."""
    from numba import njit

    @njit
    def push(t, q, v, out):
        out[3] = 1.0

    model = ball(0.1, mu=0.2, floor_mu=0.2)
    q0 = model.neutral()
    q0[2] = 0.1
    a = mb.simulate(model, q0, None, 0.2, h=1e-3, contact="stepping", tau=push, n_out=11)
    b = mb.simulate(model, q0, None, 0.2, h=1e-3, contact="stepping", n_out=11,
                    tau=lambda t, q, v: np.array([0, 0, 0, 1.0, 0, 0]))
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-15)
    # the compiled loop calls the Python callback through its C address as it calls the compiled law
    assert a.info["path"] == "compiled" and b.info["path"] == "compiled" and b.info["torque_callback"]


def test_a_python_callback_runs_in_the_compiled_loop():
    """The compiled loop calls a Python torque callback at each step through its C address
    (``formulations.tree_control.PythonTorque``): the callback gets copies of q and v (writing into them changes
    nothing), its run is the compiled law's bit for bit, and a compiled event is evaluated in the loop beside it, at
    the same time as beside the compiled law."""
    from numba import njit

    @njit
    def push(t, q, v, out):
        out[3] = 2.0 * math.sin(10.0 * t)

    @njit
    def low(t, q, v):
        return q[2] - 0.1005
    low.terminal = True

    def python_push(t, q, v):
        q[:] = 0.0            # a copy: the state is not changed
        v[:] = 1.0
        out = np.zeros(6)
        out[3] = 2.0 * math.sin(10.0 * t)
        return out

    model = ball(0.1, mu=0.3, floor_mu=0.3)
    q0 = model.neutral()
    q0[2] = 0.11
    a = mb.simulate(model, q0, None, 0.3, h=1e-3, contact="stepping", tau=push, events=[low], output_every=1)
    b = mb.simulate(model, q0, None, 0.3, h=1e-3, contact="stepping", tau=python_push, events=[low], output_every=1)
    assert b.info["path"] == "compiled" and b.info["torque_callback"]
    assert a.info["t_events"] == b.info["t_events"] and len(b.info["t_events"][0]) == 1
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)


# ---- elements and bad input ------------------------------------------------------------------------------------
def test_contact_spheres_at_frames():
    b = mb.ModelBuilder()
    b.add_body("leg", mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_joint("hip", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="leg")
    b.add_frame("foot", "leg", mb.Placement(translation=(0, 0, -0.5)))
    b.add_contact_sphere("foot", 0.02, friction=0.8)
    model = b.build()
    (c,) = model.collisions
    assert (c.name, c.body_name, c.shape.radius, c.friction) == ("foot", "leg", 0.02, 0.8)
    np.testing.assert_array_equal(c.placement.translation, [0, 0, -0.5])
    m2 = model.with_collisions([("floor", "ground", mb.HalfSpace())], spheres={"foot": 0.03}, keep=False)
    assert [(e.name, e.shape.radius if e.shape.kind == "sphere" else None) for e in m2.collisions] == \
        [("floor", None), ("foot", 0.03)]
    assert m2.collisions[1].placement.translation.tolist() == [0, 0, -0.5]
    assert m2.nv == model.nv and model.collisions == (c,)    # the original is unchanged


@pytest.mark.parametrize("make, element", [
    (lambda b: b.add_collision("c", "leg", mb.Sphere(-0.1)), "Sphere"),
    (lambda b: b.add_collision("c", "leg", mb.Sphere(0.1), friction=-0.5), "collision 'c'"),
    (lambda b: b.add_collision("c", "arm", mb.Sphere(0.1)), "collision 'c'"),
    (lambda b: b.add_contact_sphere("toe", 0.01), "contact sphere at 'toe'"),
    (lambda b: b.add_contact_sphere("leg", -0.01), "contact sphere at 'leg'"),
])
def test_bad_collision_elements(make, element):
    b = mb.ModelBuilder()
    b.add_body("leg", mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_joint("hip", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="leg")
    with pytest.raises(ModelError) as err:
        make(b)
    assert err.value.element == element and element.split("'")[0].strip() in str(err.value)


def test_bad_contact_arguments():
    model = ball()
    with pytest.raises(ModelError, match="no frame 'toe'"):
        model.with_collisions(spheres={"toe": 0.01})
    with pytest.raises(ModelError, match="friction must be a finite number >= 0"):
        model.with_collisions([("c", "ball", mb.Sphere(0.1), None, -1.0)])
    with pytest.raises(ModelError, match="unknown; registered: compliant, stepping"):
        mb.simulate(model, None, None, 0.1, h=1e-3, contact="soft")
    with pytest.raises(ModelError, match="has no parameter 'stifness'"):
        mb.simulate(model, None, None, 0.1, contact="compliant", stifness=1.0)
    with pytest.raises(ModelError, match="stiffness must be > 0"):
        mb.simulate(model, None, None, 0.1, contact="compliant", stiffness=-1.0)
    with warnings.catch_warnings():     # refused before the run is set up: no word on its initial overlap first
        warnings.simplefilter("error")
        with pytest.raises(ModelError, match="makes its own steps"):
            mb.simulate(model, None, None, 0.1, h=1e-3, method="RK4", contact="stepping")
        with pytest.raises(ModelError, match="needs the step h"):
            mb.simulate(model, None, None, 0.1, contact="stepping")
        with pytest.raises(ModelError, match="the implicit compliant model makes its own steps"):
            mb.simulate(model, None, None, 0.1, h=1e-3, method="RK4", contact="compliant", implicit=True)
    with pytest.raises(ModelError, match="no collision elements"):
        mb.simulate(model.with_collisions(keep=False), None, None, 0.1, contact="compliant")
    b = mb.ModelBuilder()                               # a joint stop: refused by the compliant model, not dropped
    b.add_body("leg", mass=1.0, inertia=(0.01, 0.01, 0.01))
    b.add_joint("hip", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="leg", limits=(-1.0, 1.0))
    b.add_collision("foot", "leg", mb.Sphere(0.02))
    b.add_collision("floor", "ground", mb.HalfSpace(), mb.Placement(translation=(0, 0, -1)))
    stopped = b.build()
    with pytest.raises(ModelError, match="stops, latches and releases with contact='compliant'"):
        mb.simulate(stopped, None, None, 0.1, contact="compliant")
    with pytest.raises(ModelError, match="'wall' is neither a collision element nor a body"):
        mb.simulate(model, None, None, 0.1, h=1e-3, contact="stepping", exclude=[("wall", "ball")])


def test_pair_filters():
    model = ball()
    q0 = model.neutral()
    q0[2] = 0.1                                        # resting on the floor
    res = mb.simulate(model, q0, None, 0.01, h=1e-3, contact="stepping", exclude=[("floor", "ball")], n_out=2)
    assert res.info["contact_pairs"] == 0 and res.contacts.count.tolist() == [0, 0]
    assert res.q[-1, 2] < 0.1                          # it falls through
    res = mb.simulate(model, q0, None, 0.01, h=1e-3, contact="stepping", contact_pairs=[("ground", "ball")], n_out=2)
    assert res.info["contact_pairs"] == 1 and res.contacts.count[-1] == 1 and res.q[-1, 2] == 0.1


@pytest.mark.parametrize("depth", [0.05, 1.0])
def test_overlap_is_undone_without_launching(depth):
    """A ball started 5 cm (1 m) into the floor is pushed out at the position level, not thrown: its speed never
    exceeds the slop's SLOP / recovery (1e-6 m / 10 ms: its kinetic energy ½ m (1e-4)² = 5e-9 J; without the split,
    5 m/s and 12.5 J), and each step removes h / recovery of the overlap beyond the slop (the push's target), so after
    100 steps of h = 1 ms at most (1 − 0.1)^100 of it is left (2.7e-5); the Result says that the initial state
    overlapped."""
    from multibody.contact.stepping_solver import SLOP

    model = ball()
    q0 = model.neutral()
    q0[2] = 0.1 - depth
    with pytest.warns(mb.errors.ModelWarning, match=f"{depth:g} m inside 'ball'"):
        res = mb.simulate(model, q0, None, 0.1, h=1e-3, contact="stepping", n_out=11)
    assert res.info["initial_overlap"] == {"depth": pytest.approx(depth, rel=1e-12),
                                           "pair": ["floor", "ball", "ground", "ball"]}
    assert np.max(np.abs(res.v)) <= SLOP / 0.01 * (1 + 1e-9)
    assert np.max(res.energy["kinetic"]) <= 0.5 * (SLOP / 0.01) ** 2 * (1 + 1e-9)
    assert 0.1 - res.q[-1, 2] <= depth * 0.9 ** 100 + SLOP


def test_overlap_at_a_singular_configuration_is_not_undone_by_a_jump():
    """A double pendulum (links of 0.6 m) hanging straight down with its tip (a 5 cm ball) 15 cm inside the floor: there
    the tip cannot move along the normal (the normal row's Jacobian is zero), so the linearized push out turned the
    joints by radians in one step (8.65 rad; the kinetic energy then grew sixfold in 0.3 s). The push's trust region
    (``stepping_solver``: no row faster than the fastest target, u_max = (0.15 − SLOP) / recovery) bounds what a step
    does to the contact point x (a point of the lower link, rows built at the step's start q): Δq = h (v⁺ + v_push)
    exactly (hinges), and the point's velocity under v_push has its normal and two tangential components within
    u_max, so |ẋ(Δq)| ≤ h (|ẋ(v⁺)| + √3 u_max), ẋ(w) = w₁ ŷ × x + w₂ ŷ × (x − elbow)."""
    from multibody.contact.stepping_solver import SLOP

    b = mb.ModelBuilder(gravity=(0, 0, -9.81))
    b.add_body("upper", mass=1.0, com=(0, 0, -0.3), inertia=np.diag([0.02, 0.02, 0.002]))
    b.add_joint("shoulder", mb.Revolute(axis=(0, 1, 0)), "ground", "upper")
    b.add_body("lower", mass=0.5, com=(0, 0, -0.3), inertia=np.diag([0.01, 0.01, 0.001]))
    b.add_joint("elbow", mb.Revolute(axis=(0, 1, 0)), "upper", "lower",
                placement=mb.Placement(translation=(0, 0, -0.6)))
    b.add_collision("tip", "lower", mb.Sphere(0.05), placement=mb.Placement(translation=(0, 0, -0.6)), friction=0.5)
    b.add_collision("floor", "ground", mb.HalfSpace(), placement=mb.Placement(translation=(0, 0, -1.1)), friction=0.5)
    h, recovery = 1e-3, 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the initial overlap's warning; the singular rows' solves
        res = mb.simulate(b.build(), [0.0, 0.0], [1.0, 3.0], 0.05, h=h, contact="stepping", recovery=recovery,
                          output_every=1)
    u_max = (0.15 - SLOP) / recovery

    def point_velocity(x, q, w):                # ŷ × r = (r_z, 0, −r_x)
        elbow = -0.6 * np.array([np.sin(q[0]), 0.0, np.cos(q[0])])
        r1, r2 = x, x - elbow
        return w[0] * np.array([r1[2], 0.0, -r1[0]]) + w[1] * np.array([r2[2], 0.0, -r2[0]])

    checked = 0
    for k in range(1, res.q.shape[0]):
        for x in res.contacts.at(k)["point"]:
            q = res.q[k - 1]
            moved = np.linalg.norm(point_velocity(x, q, res.q[k] - q))
            assert moved <= h * (np.linalg.norm(point_velocity(x, q, res.v[k])) + np.sqrt(3.0) * u_max) * (1 + 1e-9), k
            checked += 1
    assert checked >= 5


def test_failed_run_keeps_its_outputs():
    model = ball()
    q0 = model.neutral()
    q0[2] = 1.0
    v0 = np.zeros(6)
    v0[5] = np.inf
    with pytest.raises(ModelError):
        mb.simulate(model, q0, v0, 0.1, h=1e-3, contact="stepping")
    with pytest.raises(IntegrationError) as err:
        mb.simulate(model, q0, None, 0.1, h=1e-3, contact="stepping", tau=lambda t, q, v: np.full(6, np.nan))
    assert err.value.result is not None and err.value.result.info["status"] == "failed"



@pytest.mark.parametrize("options", [{"contact": "stepping"}, {"contact": "compliant", "implicit": True}])
def test_failed_callbacks_keep_the_steps_before_them(options, tmp_path, monkeypatch):
    """The Python loop of the stepping run (a torque callback, Python events; both contact models that step): a
    callback's wrong output is the ModelError every formulation gives (naming the torque callback and the time), one
    that raises or an event that raises ends the run with an IntegrationError carrying the steps made before it;
    a checkpoint that cannot be written (in the middle, at the end) keeps the run too."""
    model = ball()
    q0 = model.neutral()
    q0[2] = 1.0
    run = dict(h=1e-3, **options)
    for bad, shown in ((lambda t, q, v: np.zeros(7), "returned 7 values"), (lambda t, q, v: None, "returned None")):
        with pytest.raises(ModelError, match=f"torque callback of model .* {shown}.* at t = 0.0") as err:
            mb.simulate(model, q0, None, 0.01, tau=bad, **run)
        assert err.value.result.info["status"] == "failed" and len(err.value.result.t) == 1

    def late(t, q, v):
        if t > 0.0055:
            raise RuntimeError("late")
        return np.zeros(6)
    with pytest.raises(IntegrationError, match="RuntimeError raised after step 6 .*: late") as err:
        mb.simulate(model, q0, None, 0.01, tau=late, output_every=1, **run)
    whole = mb.simulate(model, q0, None, 0.006, tau=lambda t, q, v: np.zeros(6), output_every=1, **run)
    np.testing.assert_array_equal(err.value.result.q, whole.q)       # the six steps before it, as they were

    def late_event(t, q, v):
        return late(t, q, v)[0] + 1.0
    with pytest.raises(IntegrationError, match="RuntimeError raised after step 10 .*: late") as err:
        mb.simulate(model, q0, None, 0.01, events=[late_event], **run)
    assert err.value.result.info["status"] == "failed"
    from multibody.io.checkpoints import Writer

    write = Writer.write

    def full_disk(self, t, step, *args, **kwargs):        # the disk fills up after the first checkpoints
        if step > 4:
            raise mb.errors.ResultFileError(f"{self.path}: no space left on device")
        return write(self, t, step, *args, **kwargs)
    for every, end in ((2e-3, "at step 6"), (0.05, "at step 10")):   # in the middle; at the end
        monkeypatch.setattr(Writer, "write", full_disk)
        with pytest.raises(IntegrationError, match=f"checkpoint could not be written {end}: .*no space") as err:
            mb.simulate(model, q0, None, 0.01, checkpoint=str(tmp_path / "run.ckpt"), every=every, **run)
        monkeypatch.undo()
        assert err.value.result.t[-1] == pytest.approx(int(end.split()[-1]) * 1e-3, abs=1e-15)


def test_model_file_with_contact(tmp_path):
    """A model file's collisions and its contact settings (simulation.contact, the parameters in options)."""
    model = ball()
    q0 = model.neutral()
    q0[2] = 0.5
    path = mb.io.save_model(model, tmp_path / "ball.yaml", q0=q0,
                            simulation={"t_end": 1.0, "h": 1e-3, "contact": "stepping", "options": {"margin": 2e-3}})
    mf = mb.io.load(path)
    assert mf.simulation["contact"] == "stepping" and [c.name for c in mf.model.collisions] == ["ball", "floor"]
    res = mb.simulate(mf.model, mf.q0, mf.v0, **mf.settings(n_out=11))
    assert res.info["contact"] == "stepping" and res.q[-1, 2] == pytest.approx(0.1, abs=1e-12)
    text = path.read_text().replace("margin: 0.002", "stiffness: 1.0")
    (tmp_path / "bad.yaml").write_text(text)
    with pytest.raises(mb.io.ModelFileError, match="the stepping contact model has no option 'stiffness'"):
        mb.io.load(tmp_path / "bad.yaml")


def test_mesh_collisions_are_hulled(tmp_path):
    """A collision mesh is its convex hull (trimesh): a cube mesh file drops and rests on a face, as a box does."""
    trimesh = pytest.importorskip("trimesh")
    cube = trimesh.creation.box(extents=(0.2, 0.2, 0.2))
    cube.export(tmp_path / "cube.stl")
    b = mb.ModelBuilder()
    b.add_body("cube", mass=1.0, inertia=(1 / 150, 1 / 150, 1 / 150))
    b.add_joint("free", mb.Free(), parent="ground", child="cube")
    b.add_collision("cube", "cube", mb.Mesh(str(tmp_path / "cube.stl"), scale=(1.0, 1.0, 0.5)), friction=0.5)
    b.add_collision("floor", "ground", mb.HalfSpace())
    model = b.build()
    q0 = model.neutral()
    q0[2] = 0.3
    res = mb.simulate(model, q0, None, 1.0, h=1e-3, contact="stepping", n_out=11)
    half = 0.5 * float(np.float32(0.1))     # half of its scaled height 0.1; an STL file holds float32 vertices
    assert res.q[-1, 2] == pytest.approx(half, abs=1e-9)
    assert res.contacts.count[-1] >= 3
    missing = model.with_collisions([("ghost", "cube", mb.Mesh(str(tmp_path / "nowhere.stl")))])
    with pytest.raises(ModelError, match="collision 'ghost'.*file not found"):
        mb.simulate(missing, q0, None, 0.01, h=1e-3, contact="stepping")


URDF_CRATE = """<robot name="crate">
  <link name="crate">
    <inertial><mass value="2.0"/><inertia ixx="0.02" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.05"/><geometry>{geometry}</geometry></collision>
  </link>
</robot>"""


@pytest.mark.parametrize("geometry", ["box", "mesh"])
def test_urdf_collisions_rest_on_the_floor(tmp_path, geometry):
    """A URDF link's <collision> (a box primitive, or a mesh file hulled by trimesh) placed 5 cm above the link
    frame: dropped on a floor (stepping model), the frame comes to rest at half the height − 0.05 m (the height as
    the file holds it: float32 in an STL), to 1e-9 m (the gap condition keeps the face on the plane to round-off)."""
    if geometry == "box":
        shape = '<box size="0.3 0.2 0.16"/>'
    else:
        trimesh = pytest.importorskip("trimesh")
        trimesh.creation.box(extents=(0.3, 0.2, 0.16)).export(tmp_path / "crate.stl")
        shape = '<mesh filename="package://crate_description/crate.stl"/>'
    (tmp_path / "crate_description").mkdir()
    if geometry == "mesh":
        (tmp_path / "crate.stl").rename(tmp_path / "crate_description" / "crate.stl")
    path = tmp_path / "crate.urdf"
    path.write_text(URDF_CRATE.format(geometry=shape))
    model = mb.io.load_urdf(path, floating_base=True, package_dirs=[tmp_path])
    model = model.with_collisions([("floor", "ground", mb.HalfSpace(), None, 0.5)])
    assert [c.shape.kind for c in model.collisions] == [geometry, "halfspace"]
    q0 = model.neutral()
    q0[2] = 0.3
    res = mb.simulate(model, q0, None, 1.0, h=1e-3, contact="stepping", n_out=11)
    half = 0.08 if geometry == "box" else float(np.float32(0.08))   # an STL file holds float32 vertices
    assert res.q[-1, 2] == pytest.approx(half - 0.05, abs=1e-9)
    assert res.contacts.total_force()[-1, 2] == pytest.approx(2.0 * G, rel=1e-9)


# ---- contact between two moving bodies ---------------------------------------------------------------------------
def loads(res):
    """The normal force each pair of collision elements carries at the last output: {(A, B): N}."""
    last = res.contacts.at(len(res) - 1)
    out = {}
    for (a, b, _, _), fn in zip(last["names"], last["normal_force"]):
        out[(a, b)] = out.get((a, b), 0.0) + fn
    return out


def free_bodies(shapes, g=G, floor=True):
    """Bodies on free joints from the ground, ``shapes``: (name, mass, inertia (3,), shape, friction)."""
    b = mb.ModelBuilder(gravity=(0, 0, -g))
    for name, m, inertia, shape, mu in shapes:
        b.add_body(name, mass=m, inertia=inertia)
        b.add_joint(name + "_free", mb.Free(), parent="ground", child=name)
        b.add_collision(name, name, shape, friction=mu)
    if floor:
        b.add_collision("floor", "ground", mb.HalfSpace(), friction=0.5)
    return b.build()


def test_ball_on_a_box_carry_their_weights():
    """A 2 kg ball of radius 0.05 m on a 1 kg cube of 0.2 m on the floor (stepping): both come to rest, the ball on
    the box's top face at 0.2 + 0.05 m, and the contacts carry the weights — the floor 3 g, the box's top 2 g (the
    impulses of a resting contact cancel gravity exactly, to the solver's tolerance 1e-10, relative)."""
    model = free_bodies([("box", 1.0, (1 / 150,) * 3, mb.Box((0.2, 0.2, 0.2)), 0.5),
                         ("ball", 2.0, (0.002,) * 3, mb.Sphere(0.05), 0.5)])
    q0 = model.neutral()
    q0[2], q0[9] = 0.101, 0.252                          # 1 mm and 1 mm above their supports
    q0[7] = 0.02                                         # the ball off the box's centre
    res = mb.simulate(model, q0, None, 1.0, h=1e-3, contact="stepping", n_out=11)
    assert res.q[-1, 2] == pytest.approx(0.1, abs=1e-9) and res.q[-1, 9] == pytest.approx(0.25, abs=1e-9)
    assert res.q[-1, 7] == pytest.approx(0.02, abs=1e-9)
    assert np.max(np.abs(res.v[-1])) < 1e-9
    load = loads(res)
    # pairs are stored with the lower shape code first (contact/detection.py): (ball, box)
    assert load == pytest.approx({("floor", "box"): 3.0 * G, ("ball", "box"): 2.0 * G}, rel=1e-9)


@pytest.mark.parametrize("light", [1e-4, 1e-6])
def test_masses_far_apart_converge_with_the_defaults(light):
    """A ball of 1e-4 (1e-6) kg on a 1 kg cube on the floor — masses 1e4 (1e6) apart, the Delassus matrix as badly
    scaled — with the default settings: every step's rows converge to the tolerance (nothing unconverged in
    result.info, no warning), and the contacts carry the weights to the tolerance (1e-10 relative) — the ball's
    contact its own weight, not a share of the cube's."""
    model = free_bodies([("box", 1.0, (1 / 150,) * 3, mb.Box((0.2, 0.2, 0.2)), 0.5),
                         ("ball", light, (0.4 * light * 0.05 ** 2,) * 3, mb.Sphere(0.05), 0.5)])
    q0 = model.neutral()
    q0[2], q0[9] = 0.101, 0.252
    q0[7] = 0.02
    with warnings.catch_warnings():
        warnings.simplefilter("error", mb.errors.ConvergenceWarning)
        res = mb.simulate(model, q0, None, 0.5, h=1e-3, contact="stepping", n_out=6)
    assert res.info["solves"]["step"]["unconverged"] == 0
    assert res.info["solves"]["step"]["worst_residual"] <= 1e-10
    assert loads(res) == pytest.approx({("floor", "box"): (1.0 + light) * G, ("ball", "box"): light * G}, rel=1e-9)


@pytest.mark.parametrize("friction", [0.2, 1.0])
def test_a_pendulum_wedged_on_the_floor_converges(friction):
    """A pendulum whose tip (0.95 from the pivot, 0.92 above the floor) falls onto the floor and wedges there: three
    rows (normal and friction) that one freedom moves. The normal row's correction of the step's penetration asks
    for a velocity that the freedom gives only with a slip, and the merit of the sweeps' iterate has a false
    minimum at a sticking one; Newton's last start (the contacts sliding) reaches the solution: every step
    converges to the tolerance, no warning; the pendulum rests at the wedge angle arccos(0.87/0.9), the sphere on the floor."""
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), "ground", "rod", placement=mb.Placement(translation=(0, 0, 0.92)))
    b.add_collision("tip", "rod", mb.Sphere(0.05), mb.Placement(translation=(0, 0, -0.9)), friction=friction)
    b.add_collision("floor", "ground", mb.HalfSpace(), friction=friction)
    model = b.build()
    for q0 in (0.8, -0.6):
        with warnings.catch_warnings():
            warnings.simplefilter("error", mb.errors.ConvergenceWarning)
            res = mb.simulate(model, [q0], [0.0], 0.8, h=1e-3, contact="stepping", n_out=5)
        assert res.info["solves"]["step"]["unconverged"] == 0
        assert abs(abs(res.q[-1, 0]) - np.arccos(0.87 / 0.9)) < 1e-6 and abs(res.v[-1, 0]) < 1e-9


def test_rows_that_outnumber_their_freedom_converge():
    """The rows of a contact on a one-freedom body (rank-one Delassus matrix, W = J Jᵀ/m) with a normal bias that the
    freedom meets only by slipping, from random warm starts, in every tangent basis: where a solution exists (the
    slip's friction does not press the contact harder: μ |J_t| < |J_n|, else Painlevé's case) the solve reaches
    it to the tolerance; the solution checked against the closed form (u_n = 0, λ_t = −μ λ_n along the slip)."""
    from multibody.rows.kinds import FRICTION, UNILATERAL
    from multibody.rows.solver import row_solver, solve_unilateral

    rng = np.random.default_rng(3)
    kind = np.array([UNILATERAL, FRICTION, FRICTION])
    for _ in range(300):
        m, jn, jt = rng.uniform(0.1, 2.0), rng.choice([-1, 1]) * rng.uniform(0.2, 1.0), rng.uniform(0.2, 1.0)
        mu = rng.uniform(0.0, 0.95) * abs(jn) / jt
        a = rng.uniform(0.0, 2.0 * np.pi)
        J = np.array([jn, jt * np.cos(a), jt * np.sin(a)])
        v, bias = rng.normal(), rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-6, -2)
        W, b = np.outer(J, J) / m, J * v + np.array([bias, 0.0, 0.0])
        lam = np.abs(rng.normal(size=3)) * rng.choice([0.0, 0.01, 1.0])
        S = row_solver(3)
        used, rel = solve_unilateral(W, b, lam, kind, np.full(3, mu), np.zeros(3), S.law, 0, 3, 1e-10, 200, S.newton)
        assert rel <= 1e-10
        w = -bias / jn                                  # the freedom's velocity with the normal row met
        if jn * v + bias >= 0.0:                        # it separates: no impulse
            np.testing.assert_array_equal(lam, 0.0)
            continue
        ln = m * (w - v) / (jn - mu * jt * np.sign(w))  # sliding (λ_t = −μ λ_n along the slip)
        assert lam[0] == pytest.approx(ln, rel=1e-8)
        # on the cone's edge, against the slip (its direction is the slip velocity's: ill-conditioned as the slip
        # vanishes, so the direction is checked by sign, the size to the tolerance)
        assert np.hypot(lam[1], lam[2]) == pytest.approx(mu * lam[0], rel=1e-8, abs=1e-12)
        assert (lam[1] * J[1] + lam[2] * J[2]) * w <= 0.0


def test_an_unconverged_step_is_reported_and_warned():
    """The same stack with the solver held to one iteration per step: the steps that end above the tolerance are
    counted in result.info['solves']['step'] (with the time of the first) and one ConvergenceWarning says so."""
    model = free_bodies([("box", 1.0, (1 / 150,) * 3, mb.Box((0.2, 0.2, 0.2)), 0.5),
                         ("ball", 2.0, (0.002,) * 3, mb.Sphere(0.05), 0.5)])
    q0 = model.neutral()
    q0[2], q0[9] = 0.1, 0.25
    q0[7] = 0.02
    with pytest.warns(mb.errors.ConvergenceWarning, match=r"steps of contact='stepping' stopped before converging"):
        res = mb.simulate(model, q0, None, 0.05, h=1e-3, contact="stepping", iterations=1)
    solves = res.info["solves"]["step"]
    # one iteration of the attempts, one of the closing sweeps (rows/solver.py)
    assert solves["unconverged"] > 0 and solves["worst_residual"] > 1e-10 and solves["iterations"] <= 2
    assert 0.0 <= solves["first_unconverged_t"] < 0.05


@pytest.mark.parametrize("yaw, x", [(0.0, 0.02), (0.5, 0.06)])
def test_stacked_boxes_rest_face_on_face(yaw, x):
    """A 2 kg cube of 0.1 m dropped 1 mm onto a 1 kg cube of 0.2 m on the floor (stepping), off-centre, turned by
    ``yaw`` about z (0.5 rad at x = 0.06: it hangs over the edge, its centre of mass over the support): the box–box
    face manifold holds it flat at 0.2 + 0.05 m where it landed, at rest, the floor carrying 3 g and the lower top
    2 g (resting impulses cancel gravity to the solver's tolerance 1e-10, relative). Heights to 1e-9 m (the gap
    condition); the landing's slide and turn within 1e-6 (the impact's nine redundant contacts stop Gauss–Seidel
    on its impulse change, not on the sliding velocity it leaves, ~1e-7 m/s for a few steps: 4e-9 m measured)."""
    model = free_bodies([("low", 1.0, (1 / 150,) * 3, mb.Box((0.2, 0.2, 0.2)), 0.5),
                         ("top", 2.0, (1 / 300,) * 3, mb.Box((0.1, 0.1, 0.1)), 0.5)])
    q0 = model.neutral()
    q0[2], q0[7], q0[9] = 0.101, x, 0.252
    q0[10:14] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    res = mb.simulate(model, q0, None, 1.0, h=1e-3, contact="stepping", n_out=11)
    np.testing.assert_allclose(res.q[-1, [2, 9]], [0.1, 0.25], rtol=0, atol=1e-9)
    np.testing.assert_allclose(res.q[-1, [0, 1, 7, 8]], [0.0, 0.0, x, 0.0], rtol=0, atol=1e-6)
    np.testing.assert_allclose(res.q[-1, 10:14], q0[10:14], rtol=0, atol=1e-6)
    assert np.max(np.abs(res.v[-1])) < 1e-9
    load = loads(res)
    assert load == pytest.approx({("floor", "low"): 3.0 * G, ("low", "top"): 2.0 * G}, rel=1e-9)


@pytest.mark.parametrize("contact", ["stepping", "compliant"])
def test_head_on_impact_of_two_spheres(contact):
    """Sphere 1 (1 kg) at 1 m/s hits sphere 2 (3 kg) at rest, centre to centre, without gravity: momentum is
    conserved and the relative velocity leaves at e v_in — e = 0 for the stepping model (its impacts are perfectly
    inelastic: both move at m1 v_in / (m1 + m2), to the solver's tolerance), and the Hunt–Crossley e(α, v_in) for the
    compliant one, whatever the masses (the law's first integral holds in the relative coordinate with the reduced
    mass; the run's error bound 1e-9 v_in at rtol 1e-13 as for the ball on the floor). No spin appears."""
    r, v_in, alpha = 0.1, 1.0, 0.5
    model = free_bodies([("one", 1.0, (0.004,) * 3, mb.Sphere(r), 0.5),
                         ("two", 3.0, (0.012,) * 3, mb.Sphere(r), 0.5)], g=0.0, floor=False)
    q0 = model.neutral()
    q0[7] = 0.25
    v0 = np.zeros(12)
    v0[3] = v_in
    if contact == "stepping":
        res = mb.simulate(model, q0, v0, 0.2, h=1e-3, contact="stepping", n_out=3)
        e = 0.0
    else:
        res = mb.simulate(model, q0, v0, 0.2, contact="compliant", damping=alpha, rtol=1e-13, atol=1e-15, n_out=3)
        e = hunt_crossley_restitution(alpha, v_in)
    v1, v2 = res.v[-1, 3], res.v[-1, 9]                 # free joints at rest in orientation: body axes = ground axes
    assert 1.0 * v1 + 3.0 * v2 == pytest.approx(v_in, abs=1e-9)
    assert v2 - v1 == pytest.approx(e * v_in, abs=1e-9)
    np.testing.assert_allclose(res.v[-1, [0, 1, 2, 4, 5, 6, 7, 8, 10, 11]], 0.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("suffix", [".npz", ".h5"])
def test_contacts_round_trip_through_result_files(tmp_path, suffix):
    """``result.contacts`` is saved with the Result and read back bit for bit (a .csv file, one row per time,
    cannot hold them and warns)."""
    if suffix == ".h5":
        pytest.importorskip("h5py")
    model = free_bodies([("box", 1.0, (1 / 150,) * 3, mb.Box((0.2, 0.2, 0.2)), 0.5),
                         ("ball", 2.0, (0.002,) * 3, mb.Sphere(0.05), 0.5)])
    q0 = model.neutral()
    q0[2], q0[9] = 0.101, 0.252
    res = mb.simulate(model, q0, None, 0.2, h=1e-3, contact="stepping", n_out=21)
    back = mb.io.load_result(mb.io.save_result(res, tmp_path / f"run{suffix}"))
    assert back.contacts == res.contacts and back.contacts is not res.contacts
    assert back.contacts.at(20)["names"] == res.contacts.at(20)["names"] and back.contacts.count[-1] == 5
    for f in ("offsets",) + res.contacts.FIELDS:
        a, b = getattr(res.contacts, f), getattr(back.contacts, f)
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
    with pytest.warns(UserWarning, match="CSV file holds one row per time and not the run's contacts"):
        res.save(tmp_path / "run.csv")
    assert mb.io.load_result(tmp_path / "run.csv").contacts is None


def test_contacts_round_trip_through_a_checkpoint(tmp_path, monkeypatch):
    """A run resumed from a checkpoint in its middle (t = 0.1, while the ball and the box land) gives the whole run's
    ``result.contacts`` again, every array bit for bit (the checkpoint holds the contacts of the outputs so far)."""
    model = free_bodies([("box", 1.0, (1 / 150,) * 3, mb.Box((0.2, 0.2, 0.2)), 0.5),
                         ("ball", 2.0, (0.002,) * 3, mb.Sphere(0.05), 0.5)])
    q0 = model.neutral()
    q0[2], q0[9], q0[7] = 0.101, 0.252, 0.02
    plain = mb.simulate(model, q0, None, 0.2, h=1e-3, contact="stepping", n_out=21)
    middle = str(tmp_path / "middle.ckpt")
    copy_at(monkeypatch, middle, lambda t, step: t >= 0.1)
    full = mb.simulate(model, q0, None, 0.2, h=1e-3, contact="stepping", n_out=21,
                       checkpoint=str(tmp_path / "run.ckpt"), every=0.05)
    again = mb.resume(middle)
    assert again.info["resumed_from"] == pytest.approx(0.1)
    for res in (full, again):
        assert res.contacts == plain.contacts and res.contacts.pairs == plain.contacts.pairs
        for f in ("offsets",) + plain.contacts.FIELDS:
            a, b = getattr(plain.contacts, f), getattr(res.contacts, f)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    assert again.contacts.count[-1] == 5 and again.contacts.count[0] == 0
