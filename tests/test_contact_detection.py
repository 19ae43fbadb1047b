"""Contact detection (contact/detection.py, contact/gjk.py) against an independent computation, on random pairs of
every two primitives (hypothesis): sphere, capsule, cylinder, box, half-space and convex hull.

The reference (tests/contact_reference.py) knows nothing of our routines: the signed distance of two convex
shapes is ``max_{|u|=1} -(h_A(u) + h_B(-u))`` of their support functions h (numpy), maximized over directions by
a dense sphere of starts, the separating axes of the polytopes and Nelder-Mead (scipy). Each pair must give

* the distance to 1e-9 (the issue's bound; shapes of 0.05-1 m): ``|d - d_ref| <= 1e-9``;
* witness points on the two surfaces (each shape's signed distance function, textbook formulas) to 1e-9, with
  ``p_B - p_A = d n`` to 1e-12 (what the routines construct, to round-off);
* a normal that attains the distance: ``g(n) >= d - 1e-9``, since g(n) <= d_ref.

Exceptions, measured and documented (docs/contact.md): pairs with a cylinder that go through GJK/EPA (capsule,
box, cylinder or hull with a cylinder) converge on the cylinder's curved rim to a tolerance limited by round-off
in the thin simplices of the last steps (~1e-11 m in the distance). Their distance still meets 1e-9 and their
witness points lie on the surfaces to 1e-7 (measured 2.3e-9: combinations of support points on a curve lie
inside it by the square of their spacing), but the normal of a distance known to ~1e-11 is known only to
sqrt(2e-11 / d) rad (the closest point of a convex set, ``|v - v*|^2 <= |v|^2 - |v*|^2``), ~3e-5 rad at
d = 0.05 m; where the contact is a rim on a face, g falls linearly off its kink at the true normal (slope up to
the shapes' size, 2 m), so the check is ``g(n) >= d - 2e-4`` (measured up to 4e-5).

The pairs are generic (random rotations, sizes and positions): two parallel cylinders, whose contact is a segment
and whose EPA converges slowly along it (4e-7 measured for an exactly parallel pair), are left to the documented
limitation.

The distance of a pair with a half-space is checked against the support function of the other shape directly.
"""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.spatial import ConvexHull
from scipy.spatial.transform import Rotation

from contact_reference import reference_distance, support_value, surface_gap
from multibody.contact.detection import C_DIST, C_N, C_PA, C_PB, C_WIDTH, MAX_MANIFOLD, pair_distance
from multibody.contact.detection import detect as collision_detect
from multibody.contact.gjk import gjk_workspace
from multibody.contact.shapes import (GF_RAD, GF_SIZE, GF_WIDTH, GI_NV, GI_TYPE, GI_V0, GI_WIDTH, GW_WIDTH,
                                      SHAPE_CODES)

KINDS = ["halfspace", "sphere", "capsule", "cylinder", "box", "hull"]
CODE = {k: SHAPE_CODES["mesh" if k == "hull" else k] for k in KINDS}
PAIRS = [(a, b) for i, a in enumerate(KINDS) for b in KINDS[i:] if not a == b == "halfspace"]
#: pairs whose normal converges to a tolerance only (see the module docstring)
CURVED_GJK = {("capsule", "cylinder"), ("cylinder", "cylinder"), ("cylinder", "box"), ("cylinder", "hull")}
TOL = 1e-9
WS = gjk_workspace()


def random_shape(kind, offset, seed):
    """A random shape of ``kind`` from the seed: uniform random rotation, centre uniform in the cube of half-side
    ``offset``, sizes uniform in [0.05, 1] m (a hull: the hull of 16 normal points scaled by up to 1 m per axis).
    Drawn from a seed, so that hypothesis shrinks towards other generic pairs, not towards coincident shapes (whose
    contact normal is not unique)."""
    rng = np.random.default_rng(seed)
    s = dict(kind=kind, R=Rotation.random(random_state=rng).as_matrix(), p=rng.uniform(-offset, offset, 3))
    if kind in ("sphere", "capsule", "cylinder"):
        s["radius"] = rng.uniform(0.05, 1.0)
    if kind in ("capsule", "cylinder"):
        s["half"] = rng.uniform(0.05, 1.0)
    if kind == "box":
        s["half_sizes"] = rng.uniform(0.05, 1.0, 3)
    if kind == "hull":
        pts = rng.normal(size=(16, 3)) * rng.uniform(0.1, 1.0, 3)
        s["verts"] = pts[ConvexHull(pts).vertices]
    return s


def pack(shapes_):
    """The kernels' arrays of the shapes (world poses given directly)."""
    G = len(shapes_)
    gi, gf, gw = np.zeros((G, GI_WIDTH), np.int64), np.zeros((G, GF_WIDTH)), np.zeros((G, GW_WIDTH))
    verts = []
    for g, s in enumerate(shapes_):
        k = s["kind"]
        gi[g, GI_TYPE] = CODE[k]
        gw[g, :9], gw[g, 9:] = s["R"].reshape(9), s["p"]
        if k == "sphere":
            gf[g, GF_SIZE] = gf[g, GF_RAD] = s["radius"]
        elif k in ("capsule", "cylinder"):
            gf[g, GF_SIZE:GF_SIZE + 2] = s["radius"], s["half"]
            gf[g, GF_RAD] = s["radius"] + s["half"]
        elif k == "box":
            gf[g, GF_SIZE:GF_SIZE + 3] = s["half_sizes"]
            gf[g, GF_RAD] = np.linalg.norm(s["half_sizes"])
        elif k == "hull":
            gi[g, GI_V0], gi[g, GI_NV] = sum(len(v) for v in verts), len(s["verts"])
            verts.append(s["verts"])
            gf[g, GF_RAD] = np.max(np.linalg.norm(s["verts"], axis=1))
    return gi, gf, gw, np.ascontiguousarray(np.concatenate(verts) if verts else np.zeros((0, 3)))


def detect(a, b):
    gi, gf, gw, verts = pack([a, b])
    d, n0, n1, n2, a0, a1, a2, b0, b1, b2 = pair_distance(gi, gf, gw, verts, 0, 1, WS)
    return d, np.array([n0, n1, n2]), np.array([a0, a1, a2]), np.array([b0, b1, b2])


@pytest.mark.parametrize("kinds", PAIRS, ids=[f"{a}-{b}" for a, b in PAIRS])
def test_pair_against_reference(kinds):
    ka, kb = kinds

    @settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, 2 ** 32 - 1), st.integers(0, 2 ** 32 - 1))
    def check(seed_a, seed_b):
        a, b = random_shape(ka, 0.0, seed_a), random_shape(kb, 1.5, seed_b + 2 ** 32)   # never the same stream
        d, n, pa, pb = detect(a, b)
        assert abs(np.linalg.norm(n) - 1.0) <= 1e-12
        np.testing.assert_allclose(pb - pa, d * n, rtol=0, atol=1e-12)
        on_surface = 1e-7 if kinds in CURVED_GJK else TOL
        assert abs(surface_gap(a, pa)) <= on_surface and abs(surface_gap(b, pb)) <= on_surface
        d_ref, _ = reference_distance(a, b, extra=[n], n_sphere=300, refine=6)
        assert abs(d - d_ref) <= TOL, (d, d_ref)
        if ka != "halfspace":
            g_n = -(support_value(a, n) + support_value(b, -n))
            assert g_n >= d - (2e-4 if kinds in CURVED_GJK else TOL), (g_n, d)

    check()


def test_touching_and_nested_shapes():
    """Degenerate configurations: a box resting face to face on a box (touching), a sphere inside a box, a capsule
    whose core crosses another's, concentric spheres: distances from the geometry, normals unit."""
    I = np.eye(3)
    box = dict(kind="box", R=I, p=np.zeros(3), half_sizes=np.array([0.5, 0.5, 0.5]))
    top = dict(kind="box", R=I, p=np.array([0.1, 0.2, 1.0]), half_sizes=np.array([0.3, 0.3, 0.5]))
    d, n, _, _ = detect(box, top)
    assert abs(d) <= 1e-12 and abs(abs(n[2]) - 1.0) <= 1e-12
    ball = dict(kind="sphere", R=I, p=np.array([0.0, 0.0, 0.3]), radius=0.1)
    d, n, pa, pb = detect(ball, box)
    assert d == pytest.approx(-0.3, abs=1e-14) and n @ [0, 0, -1.0] == pytest.approx(1.0, abs=1e-14)
    c1 = dict(kind="capsule", R=I, p=np.zeros(3), radius=0.1, half=0.5)
    c2 = dict(kind="capsule", R=Rotation.from_euler("x", 90, degrees=True).as_matrix(), p=np.zeros(3), radius=0.2,
              half=0.5)
    d, n, _, _ = detect(c1, c2)
    assert d == pytest.approx(-0.3, abs=1e-14) and abs(n[0]) == pytest.approx(1.0, abs=1e-14)
    s1 = dict(kind="sphere", R=I, p=np.zeros(3), radius=0.2)
    d, n, _, _ = detect(s1, dict(s1, radius=0.1))
    assert d == pytest.approx(-0.3, abs=1e-14) and np.linalg.norm(n) == pytest.approx(1.0, abs=1e-14)


def test_touching_pair_has_a_unit_normal():
    """Two boxes face on face to round-off (GJK's distance ~1e-17): the normal is the face normal, not the
    direction of a difference of witness points that has none left."""
    I = np.eye(3)
    yaw = Rotation.from_euler("z", 0.5).as_matrix()
    low = dict(kind="box", R=I, p=np.array([0.0, 0.0, 0.1]), half_sizes=np.array([0.1, 0.1, 0.1]))
    for dz in (0.0, 1e-17, -1e-17, 3e-17):
        top = dict(kind="box", R=yaw, p=np.array([0.06, 0.0, 0.25 + dz]), half_sizes=np.array([0.05, 0.05, 0.05]))
        d, n, _, _ = detect(low, top)
        assert abs(d) <= 1e-15 and np.linalg.norm(n - [0.0, 0.0, 1.0]) <= 1e-12


def test_box_on_box_manifold():
    """A yawed cube of 0.1 m pressed 1 mm into the top of a cube of 0.2 m and hanging over its edge x = 0.1: the
    contacts are the corners of the pressed face over the lower top and the two points where its edges cross
    x = 0.1 (the two squares' intersection, computed here from the corners), each 1 mm deep along z."""
    low = dict(kind="box", R=np.eye(3), p=np.array([0.0, 0.0, 0.1]), half_sizes=np.array([0.1, 0.1, 0.1]))
    R = Rotation.from_euler("z", 0.5).as_matrix()
    top = dict(kind="box", R=R, p=np.array([0.06, 0.0, 0.25 - 1e-3]), half_sizes=np.array([0.05, 0.05, 0.05]))
    gi, gf, gw, verts = pack([low, top])
    out = np.zeros((MAX_MANIFOLD, C_WIDTH))
    k = collision_detect(gi, gf, verts, np.array([[0, 1]]), gw, 1e-3, out, WS)
    corners = [top["p"][:2] + R[:2, :2] @ [sx * 0.05, sy * 0.05] for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
    expected = [c for c in corners if c[0] <= 0.1]
    for a, b in zip(corners, corners[1:] + corners[:1]):
        if (a[0] - 0.1) * (b[0] - 0.1) < 0:
            expected.append(a + (0.1 - a[0]) / (b[0] - a[0]) * (b - a))
    assert k == len(expected) == 5
    np.testing.assert_allclose(out[:k, C_DIST], -1e-3, rtol=0, atol=1e-15)
    np.testing.assert_allclose(out[:k, C_N:C_N + 3], np.tile([0.0, 0.0, 1.0], (k, 1)), rtol=0, atol=1e-15)
    np.testing.assert_allclose(out[:k, C_PA + 2], 0.2, rtol=0, atol=1e-15)           # on the lower top
    got = sorted(map(tuple, out[:k, C_PB:C_PB + 2]))
    np.testing.assert_allclose(got, sorted(map(tuple, expected)), rtol=0, atol=1e-15)
