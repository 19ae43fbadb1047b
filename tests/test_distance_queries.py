"""Distance and collision queries (``multibody.contact.queries``, ``multibody.io.srdf``; issue 35).

Against coal (Pinocchio's collision library, installed with ``pin``), an independent implementation of GJK/EPA
and of the closed forms, run with its tolerances at 1e-13: the signed distance and the witness points of random
pairs of spheres, capsules, cylinders, boxes and convex hulls at random placements, to the issue's 1e-9 (m). Our
GJK stops at 1e-12 relative to the sizes (~1 m): polytopes are exact to round-off, curved shapes within 1e-12. The
witness points of two faces or edges in parallel contact are not unique: there the points are checked on the
shapes' surfaces instead (their distance along the normal is d) and compared with coal's only where both are
unique. On the Panda's collision meshes: every pair's distance equals coal's on the same convex hulls placed by our
kinematics (Pinocchio's are the same to 1e-12: tests/test_frames.py), and a folded configuration is found in
collision while the SRDF's disabled pairs are left out.
"""
import warnings

import numpy as np
import pytest

import multibody as mb
from multibody.bench.robots import robots_folder
from multibody.errors import ModelError
from multibody.model.collisions import mesh_hull

coal = pytest.importorskip("coal")
trimesh = pytest.importorskip("trimesh")
ROOT = robots_folder()
TOL = 1e-9
KINDS = ("sphere", "capsule", "cylinder", "box", "hull")


def random_rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q *= np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


@pytest.fixture(scope="module")
def hull_files(tmp_path_factory):
    """Three convex hulls of random points, written as STL files (their vertices are the hulls' vertices)."""
    rng = np.random.default_rng(11)
    paths = []
    for k in range(3):
        pts = rng.normal(size=(30, 3)) * rng.uniform(0.1, 0.4, 3)
        path = tmp_path_factory.mktemp("hulls") / f"hull{k}.stl"
        trimesh.convex.convex_hull(pts).export(path)
        paths.append(str(path))
    return paths


def to_coal(shape):
    """coal's twin of one of our shapes (same conventions: full lengths and sides; a mesh's convex hull)."""
    if shape.kind == "sphere":
        return coal.Sphere(shape.radius)
    if shape.kind == "capsule":
        return coal.Capsule(shape.radius, shape.length)
    if shape.kind == "cylinder":
        return coal.Cylinder(shape.radius, shape.length)
    if shape.kind == "box":
        return coal.Box(*shape.size)
    points = coal.StdVec_Vec3s()
    for p in mesh_hull(shape):
        points.append(p)
    return coal.Convex.convexHull(points, False, "")


def shapes(kind, rng, hull_files):
    """(ours, coal's) of a random shape of ``kind``."""
    r, h = rng.uniform(0.05, 0.3), rng.uniform(0.1, 0.6)
    shape = {"sphere": lambda: mb.Sphere(r), "capsule": lambda: mb.Capsule(r, h), "cylinder": lambda: mb.Cylinder(r, h),
             "box": lambda: mb.Box(rng.uniform(0.1, 0.6, 3)),
             "hull": lambda: mb.Mesh(hull_files[rng.integers(len(hull_files))])}[kind]()
    return shape, to_coal(shape)


def coal_distance(ga, Ta, gb, Tb):
    req = coal.DistanceRequest()
    req.gjk_tolerance = req.epa_tolerance = 1e-13
    req.gjk_max_iterations = req.epa_max_iterations = 1000
    res = coal.DistanceResult()
    d = coal.distance(ga, coal.Transform3s(*Ta), gb, coal.Transform3s(*Tb), req, res)
    return d, res.getNearestPoint1(), res.getNearestPoint2()


def two_bodies(a, b, Ta, Tb):
    """A model with shape a on the ground at Ta and shape b on a free body placed at Tb (by its q)."""
    bld = mb.ModelBuilder()
    bld.add_body("mover", mass=1.0, inertia=(0.01, 0.01, 0.01))
    bld.add_joint("free", mb.Free(), "ground", "mover")
    bld.add_collision("A", "ground", a, mb.Placement(*Ta))
    bld.add_collision("B", "mover", b)
    model = bld.build()
    from multibody.model.rotations import matrix_to_quat

    q = np.concatenate([Tb[1], matrix_to_quat(Tb[0])])
    return model, q


@pytest.mark.parametrize("kind_a", KINDS)
def test_distances_equal_coal(kind_a, hull_files):
    rng = np.random.default_rng(KINDS.index(kind_a))
    compared = 0
    for kind_b in KINDS:
        for _ in range(6):
            a, ca = shapes(kind_a, rng, hull_files)
            b, cb = shapes(kind_b, rng, hull_files)
            Ta = (random_rotation(rng), rng.uniform(-0.2, 0.2, 3))
            Tb = (random_rotation(rng), rng.uniform(-1.0, 1.0, 3))
            model, q = two_bodies(a, b, Ta, Tb)
            ours = mb.distance(model, q, ("A", "B"))
            d, pa, pb = coal_distance(ca, Ta, cb, Tb)
            np.testing.assert_allclose(ours.point_b - ours.point_a, ours.distance * ours.normal, atol=1e-12)
            if ours.distance < 0 or d < 0:
                # penetration: moving B by the depth + 1e-6 along the normal separates them (coal), so the depth is
                # that of a separating move, and it is not deeper than coal's (whose depth is also a separating move's)
                moved = (Tb[0], Tb[1] - (ours.distance - 1e-6) * ours.normal)
                assert coal_distance(ca, Ta, cb, moved)[0] > 0.0, (kind_a, kind_b, ours.distance, d)
                assert -ours.distance <= -d + TOL, (kind_a, kind_b, ours.distance, d)
                continue
            assert abs(ours.distance - d) <= TOL, (kind_a, kind_b, ours.distance, d)
            if d > 0:
                compared += 1
                unique = kind_a in ("sphere", "capsule") or kind_b in ("sphere", "capsule") or \
                    abs(np.linalg.norm(pb - pa) - d) > 1e-6
                if unique and "cylinder" not in (kind_a, kind_b) and not ("box" in (kind_a, kind_b) and
                                                                           "hull" in (kind_a, kind_b)):
                    np.testing.assert_allclose(ours.point_a, pa, atol=1e-6)
                    np.testing.assert_allclose(ours.point_b, pb, atol=1e-6)
    assert compared >= 10


@pytest.mark.skipif(ROOT is None, reason="example-robot-data is not installed")
def test_panda_self_collision_on_its_collision_meshes():
    share = ROOT.parent.parent
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = mb.io.load_urdf(ROOT / "panda_description/urdf/panda.urdf", package_dirs=[share])
    disabled = mb.io.srdf_disabled_pairs(ROOT / "panda_description/srdf/panda.srdf", model)
    assert ("panda_link7", "panda_leftfinger") in disabled      # (the hand is fixed to link 7: one body)
    lo, hi = model.lower_limits, model.upper_limits
    home = np.array([0.0, -0.785398, 0.0, -2.35619, 0.0, 1.5707, 0.785398, 0.02, 0.02])   # the SRDF's default
    assert mb.collisions(model, home, exclude=disabled) == []
    rng = np.random.default_rng(0)
    for _ in range(300):            # a configuration within the limits where the arm runs into itself
        folded = rng.uniform(lo, hi)
        hits = mb.collisions(model, folded, exclude=disabled)
        if hits:
            break
    assert hits and all(h.distance < 0 for h in hits)
    skipped = {frozenset(p) for p in disabled}
    assert all(frozenset((h.body_a, h.body_b)) not in skipped for h in mb.collisions(model, folded, np.inf, exclude=disabled))
    # every pair's distance is coal's on the same hulls at our placements
    hulls = {c.name: to_coal(c.shape) for c in model.collisions}
    kin = mb.forward_kinematics(model, folded)
    for h in mb.collisions(model, folded, margin=np.inf, exclude=disabled):
        ca, cb = model.collisions[[c.name for c in model.collisions].index(h.a)], \
            model.collisions[[c.name for c in model.collisions].index(h.b)]
        Ta = (kin.R[ca.body] @ ca.placement.rotation, kin.R[ca.body] @ ca.placement.translation + kin.p[ca.body])
        Tb = (kin.R[cb.body] @ cb.placement.rotation, kin.R[cb.body] @ cb.placement.translation + kin.p[cb.body])
        d, _, _ = coal_distance(hulls[h.a], Ta, hulls[h.b], Tb)
        assert abs(h.distance - d) <= TOL, (h.a, h.b, h.distance, d)


def test_bad_queries_are_named():
    model, q = two_bodies(mb.Sphere(0.1), mb.Sphere(0.1), (np.eye(3), np.zeros(3)), (np.eye(3), np.ones(3)))
    with pytest.raises(ModelError, match="'C' is neither a collision element nor a body"):
        mb.distance(model, q, ("A", "C"))
    with pytest.raises(ModelError, match="pair must be two collision or body names"):
        mb.distance(model, q, "A")
    with pytest.raises(ModelError, match="margin must be a number"):
        mb.collisions(model, q, margin="x")
    with pytest.raises(ModelError, match="names link 'elbow'"):
        mb.io.srdf_disabled_pairs('<robot><disable_collisions link1="elbow" link2="mover"/></robot>', model)
