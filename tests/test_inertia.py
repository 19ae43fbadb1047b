"""Which inertias a body may have (multibody.model.inertia): physical tensors and their limits (point masses, thin
rods, massless links) accepted; the others refused, kept with one InertiaWarning, or moved to the nearest physical
tensor, by the builder's policy; and a model whose mass matrix is singular refused when it is built, naming the
body and its joint — a refusal checked against the mass matrix itself (its smallest eigenvalue vanishes with the
regularizing inertia)."""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import multibody as mb
from multibody.errors import InertiaWarning, ModelError
from multibody.model.inertia import (INERTIA_RTOL, inertia_defect, nearest_physical, principal_moments,
                                     spatial_inertia)

ROD = (1 / 12, 1 / 12, 0.0)     # a thin rod of 1 kg, 1 m along z: no moment about its own axis


def _one(joint, com=(0, 0, -0.5), inertia=ROD, mass=1.0, policy="refuse"):
    b = mb.ModelBuilder(inertia=policy)
    b.add_body("rod", mass, com=com, inertia=inertia)
    b.add_joint("hinge", joint, "ground", "rod")
    return b.build()


def test_a_thin_rod_is_a_body_where_its_axis_is_not_a_coordinate():
    """Docs and code agree (issue 20): a zero principal moment is a valid idealization; a hinge across the rod sees
    m l²/3 about its end; a hinge along it, or a ball joint, would need the missing moment and is refused."""
    model = _one(mb.Revolute((0, 1, 0)))
    assert mb.crba(model, [0.3])[0, 0] == pytest.approx(1 / 12 + 0.25, rel=1e-15)
    for joint, what in ((mb.Revolute((0, 0, 1)), "rotation about its axis"), (mb.Spherical(), "motion")):
        with pytest.raises(ModelError, match=f"body 'rod' on joint 'hinge' makes the mass matrix singular: the bodies "
                                             f"it carries have no inertia for its {what}") as err:
            _one(joint)
        assert err.value.element == "body 'rod'"


def test_a_point_mass_on_its_hinge_axis_is_refused_and_the_refusal_is_right():
    """The refusal agrees with the mass matrix: with a moment ε about the axis, M = ε; the point mass beside the
    axis (distance d) has M = m d²."""
    with pytest.raises(ModelError, match=r"body 'rod' on joint 'hinge' makes the mass matrix singular.*eigenvalues "
                                         r"\[0\].*'rod' \(mass 2, principal moments \[0, 0, 0\]\)"):
        _one(mb.Revolute((0, 0, 1)), com=(0, 0, 1.0), inertia=(0, 0, 0), mass=2.0)
    for eps in (1e-3, 1e-6):
        model = _one(mb.Revolute((0, 0, 1)), com=(0, 0, 1.0), inertia=(eps, eps, eps), mass=2.0)
        assert mb.crba(model, [0.4])[0, 0] == pytest.approx(eps, rel=1e-12)
    assert mb.crba(_one(mb.Revolute((0, 0, 1)), com=(0.1, 0, 1.0), inertia=(0, 0, 0), mass=2.0), [0.0])[0, 0] == \
        pytest.approx(2.0 * 0.01, rel=1e-14)


def _chain(axes, masses, inertias, coms):
    b = mb.ModelBuilder()
    parent = "ground"
    for k, (axis, m, inertia, com) in enumerate(zip(axes, masses, inertias, coms)):
        b.add_body(f"b{k}", m, com=com, inertia=inertia)
        b.add_joint(f"j{k}", mb.Revolute(axis), parent, f"b{k}")
        parent = f"b{k}"
    return b.build()


def test_massless_links_carry_their_children():
    """A ball joint written as three hinges (z, x, z: Euler angles) with two massless links and a body at the end:
    accepted (the mass matrix is singular only at the gimbal lock, q2 = 0 — the neutral configuration — not
    everywhere); a massless leaf link is refused."""
    zxz = [(0, 0, 1), (1, 0, 0), (0, 0, 1)]
    inertia = (0.1, 0.2, 0.3)
    model = _chain(zxz, [0.0, 0.0, 1.0], [(0, 0, 0), (0, 0, 0), inertia], [(0, 0, 0)] * 3)
    w_lock = np.linalg.eigvalsh(mb.crba(model, model.neutral()))
    w = np.linalg.eigvalsh(mb.crba(model, [0.3, 0.8, -0.5]))
    assert abs(w_lock[0]) < 1e-15 * w_lock[-1] and w[0] > 0.01
    with pytest.raises(ModelError, match="body 'b2' on joint 'j2' makes the mass matrix singular"):
        _chain(zxz, [0.0, 1.0, 0.0], [(0, 0, 0), inertia, (0, 0, 0)], [(0, 0, 0)] * 3)
    # two parallel sliders with a massless body between them move the same mass: singular, named
    b = mb.ModelBuilder()
    b.add_body("carriage", 0.0)
    b.add_body("slide", 1.0, inertia=(1, 1, 1))
    b.add_joint("rail", mb.Prismatic((1, 0, 0)), "ground", "carriage")
    b.add_joint("rail2", mb.Prismatic((1, 0, 0)), "carriage", "slide")
    with pytest.raises(ModelError, match="body 'carriage' on joint 'rail' makes the mass matrix singular: the "
                                         "articulated inertia for its translation along its axis is singular"):
        b.build()


def test_inertia_policies_of_the_builder():
    """refuse (default) / warn / repair / accept, one InertiaWarning per build listing every body."""
    bad = (1.0, 1.0, 3.0)              # the triangle inequality fails by 1
    with pytest.raises(ModelError, match=r"body 'rod': principal moments \[1, 1, 3\] violate the triangle "
                                         r"inequality I1 \+ I2 >= I3 \(short by 1\)"):
        _one(mb.Spherical(), inertia=bad)
    with pytest.warns(InertiaWarning, match=r"model 'model': 1 inertia that no body has, kept as written: body "
                                            r"'rod': principal moments \[1, 1, 3\]") as caught:
        kept = _one(mb.Spherical(), inertia=bad, policy="warn")
    assert len(caught) == 1 and np.array_equal(kept.bodies[0].inertia, np.diag(bad))
    with pytest.warns(InertiaWarning, match=r"repaired to principal moments \[1.33333, 1.33333, 2.66667\], moved by "
                                            r"0.577 kg m²"):
        fixed = _one(mb.Spherical(), inertia=bad, policy="repair")
    # the projection onto the plane I1 + I2 = I3 of (1, 1, 3): (4/3, 4/3, 8/3), at distance 1/√3
    np.testing.assert_allclose(np.diag(fixed.bodies[0].inertia), [4 / 3, 4 / 3, 8 / 3], rtol=1e-14, atol=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.array_equal(_one(mb.Spherical(), inertia=bad, policy="accept").bodies[0].inertia, np.diag(bad))
    # a negative moment: refused but by repair; a massless body with inertia: a defect like the triangle
    with pytest.raises(ModelError, match=r"negative principal moment \(principal moments \[-0.1, 1, 1\]"):
        _one(mb.Spherical(), inertia=(1.0, -0.1, 1.0), policy="warn")
    with pytest.raises(ModelError, match="a body of mass 0 has a non-zero inertia"):
        mb.Body("flywheel", 0.0, inertia=(1, 1, 1))
    with pytest.raises(ModelError, match="inertia must be one of refuse, warn, repair, accept"):
        mb.ModelBuilder(inertia="ignore")
    # round-off is no defect: iCub's head, a point mass 0.11 m from its frame, written with ixz = 2.4e-35
    head = mb.Body("head", 1.33687, com=(0.0185, -0.1108, 0.0), inertia=(0, 0, 0, 0, 2.40741e-35, 0))
    assert head.inertia_note is None


def test_masses_are_finite_normal_numbers():
    with pytest.raises(ModelError, match=r"body 'x': mass 9.99989e-321 is below the smallest normal float"):
        mb.Body("x", 1e-320)
    with pytest.raises(ModelError, match="body 'x': mass must be a finite number >= 0, got -1.0"):
        mb.Body("x", -1.0)
    with pytest.raises(ModelError, match="body 'x': mass must be a finite number >= 0, got inf"):
        mb.Body("x", float("inf"))


moments = st.lists(st.floats(-1.0, 1.0), min_size=3, max_size=3)


@settings(max_examples=200, deadline=None)
@given(lam=moments, seed=st.integers(0, 2**32 - 1))
def test_nearest_physical_is_the_projection(lam, seed):
    """The repaired tensor is physical, keeps the principal axes, and is the nearest physical tensor: the
    projection onto a convex set leaves (I − P(I)) · (Y − P(I)) <= 0 for every physical Y (Frobenius product),
    checked on physical tensors Y drawn around it; a physical tensor is its own projection."""
    rng = np.random.default_rng(seed)
    R = mb.rotation_about(rng.normal(size=3), rng.uniform(0, np.pi))
    inertia = R @ np.diag(lam) @ R.T
    fixed, distance = nearest_physical(1.0, inertia)
    assert inertia_defect(1.0, np.zeros(3), fixed) is None
    scale = max(1.0, np.abs(lam).max())
    roundoff = 64 * np.finfo(float).eps * scale     # rebuilding V Λ Vᵀ: a few eps of the largest moment per entry
    assert abs(distance - np.linalg.norm(inertia - fixed)) <= roundoff
    for _ in range(20):
        a = rng.uniform(0, 1, 3)                        # physical moments: sums of two second moments
        Q = mb.rotation_about(rng.normal(size=3), rng.uniform(0, np.pi))
        Y = Q @ np.diag([a[1] + a[2], a[0] + a[2], a[0] + a[1]]) @ Q.T
        assert np.sum((inertia - fixed) * (Y - fixed)) <= 1e-12 * scale
    again, d2 = nearest_physical(1.0, fixed)
    np.testing.assert_allclose(again, fixed, rtol=0, atol=roundoff)


def test_the_singular_check_agrees_with_the_mass_matrix_on_random_trees():
    """Random trees of every joint type with random physical inertias build, and their mass matrices are positive
    definite (Cholesky); dropping the inertia of a leaf on a ball joint (a point mass at its joint) is refused."""
    from multibody.bench.dynamics import random_tree

    for seed in range(5):
        model = random_tree(12, seed)
        q = model.random_configuration(np.random.default_rng(seed))
        np.linalg.cholesky(mb.crba(model, q))
    b = mb.ModelBuilder()
    b.add_body("a", 1.0, com=(0.2, 0, 0), inertia=(0.1, 0.2, 0.25))
    b.add_body("ball", 1.0)
    b.add_joint("ja", mb.Revolute((0, 0, 1)), "ground", "a")
    b.add_joint("socket", mb.Spherical(), "a", "ball", placement=(None, (0.5, 0, 0)))
    with pytest.raises(ModelError, match="body 'ball' on joint 'socket' makes the mass matrix singular"):
        b.build()


def test_long_chains_of_regular_bodies_build():
    """The check's articulated recursion, without keeping I^A symmetric, grew round-off along a chain (about 1.7 per
    link on cardan chains at random angles: link 45 of 100 came out with D's eigenvalue -0.2 against 0.72) and
    refused regular long chains. Cardan chains of 100 and 1000 links (seed 002's test system) build; every D of the
    100-link chain is the one of the same recursion in 50-digit arithmetic, to 1e-9 of its scale (symmetrized, each
    link adds a few eps times ‖U D⁻¹ Uᵀ‖ / ‖D‖ ≤ 50 here: 100 links stay below 1e-11; unsymmetrized, the error passed
    1e-9 by link 70 and O(1) by link 45); a massless link in the middle of
    a 100-link chain, which only the recursion can judge (its child carries it), builds; a point mass at a ball
    joint at the end of that chain is still refused."""
    mpmath = pytest.importorskip("mpmath")
    import multibody.model.builder as builder
    from multibody.model.inertia import articulated_pivots, random_motions, spatial_inertia
    from multibody.systems.cardan_chain import cardan_chain

    for n in (100, 1000):
        assert cardan_chain(n).nv == 2 * n
    arrays = {}
    with pytest.MonkeyPatch.context() as mp:       # the arrays the builder checks
        mp.setattr(builder, "singular_joint", lambda a, *_: arrays.update(a))
        cardan_chain(100)
    X, S = random_motions(arrays, np.random.default_rng(20_241_126))
    mpmath.mp.dps = 50
    exact = [mpmath.matrix(
        spatial_inertia(arrays["mass"][i], arrays["com"][i], arrays["inertia_com"][i]).tolist()) if i else None
        for i in range(len(X))]
    for i, D, _ in articulated_pivots(arrays, X, S):
        Sm, Xm = mpmath.matrix(S[i].tolist()), mpmath.matrix(X[i].tolist())
        U = exact[i] * Sm
        Dm = Sm.T * U
        assert np.abs(D - np.array(Dm.tolist(), dtype=float)).max() <= 1e-9 * max(1.0, np.abs(D).max()), i
        if arrays["parent"][i] > 0:
            exact[arrays["parent"][i]] += Xm.T * (exact[i] - U * Dm ** -1 * U.T) * Xm
    for singular in (False, True):
        b = mb.ModelBuilder()
        parent = "ground"
        for k in range(100):
            if k == 50:
                b.add_body(f"l{k}", 0.0)
            else:
                b.add_body(f"l{k}", 1.0, com=(0, 0, -0.5), inertia=(0.1, 0.1, 0.01))
            b.add_joint(f"j{k}", mb.Revolute((1, 0, 0)), parent, f"l{k}", placement=(None, (0, 0, -1.0 if k else 0)))
            parent = f"l{k}"
        if singular:
            b.add_body("ball", 1.0)
            b.add_joint("socket", mb.Spherical(), parent, "ball", placement=(None, (0, 0, -1.0)))
            with pytest.raises(ModelError, match="body 'ball' on joint 'socket' makes the mass matrix singular"):
                b.build()
        else:
            q = np.random.default_rng(3).uniform(-1, 1, 100)
            np.linalg.cholesky(mb.crba(b.build(), q))


def test_spatial_inertia_is_featherstones():
    """I = [[I_c + m c̃ c̃ᵀ, m c̃], [m c̃ᵀ, m E]] (Featherstone 2008, eq. 2.63): the kinetic energy of a twist
    [ω; v] of the frame is ½ (m |v + ω × c|² + ωᵀ I_c ω)."""
    rng = np.random.default_rng(1)
    m, c = 2.5, rng.normal(size=3)
    Ic = np.diag([0.3, 0.4, 0.5])
    w, v = rng.normal(size=3), rng.normal(size=3)
    twist = np.concatenate([w, v])
    vc = v + np.cross(w, c)
    assert twist @ spatial_inertia(m, c, Ic) @ twist == pytest.approx(m * vc @ vc + w @ Ic @ w, rel=1e-14)


def test_tolerance_is_relative_to_the_body():
    """Round-off below INERTIA_RTOL of the body's scale is no defect, a defect above it is one: the scale is the
    inertia about the body frame's origin."""
    s = 2.0 * 0.5 ** 2                                   # m |c|², the point mass's moment about the origin
    for off, defect in ((0.1 * INERTIA_RTOL * s, None), (10 * INERTIA_RTOL * s, "negative")):
        d = inertia_defect(2.0, (0.5, 0, 0), np.diag([-off, 0.0, 0.0]))
        assert (d and d[0]) == defect
    assert principal_moments(np.diag([3.0, 1.0, 2.0])).tolist() == [1.0, 2.0, 3.0]
    for perm in itertools.permutations((0.1, 0.2, 0.3)):   # the disc-like boundary I1 + I2 = I3 is physical
        assert inertia_defect(1.0, np.zeros(3), np.diag(perm)) is None
