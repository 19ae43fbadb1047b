"""Symbolic equations and the seed 004 split of the inertial forces (Telegin 2024; reference notes
seed002-004.md PART B, claims 15–29 of PART C): the six manipulators against the paper's expressions (as
corrected in the notes), the zero power of the gyroscopic forces, an independent derivation by Lagrange's
equations, the order dependence, the table of generalized coordinates and of the generating bodies.

Every comparison of expressions is exact: the difference is reduced to its canonical form in the sines and
cosines of the joint angles (``is_zero``), no numbers involved."""
import numpy as np
import pytest
import sympy as sp

import multibody as mb
from multibody.errors import ModelError
from multibody.symbolic import equations_of_motion, split_inertial_forces
from multibody.symbolic.algebra import coordinate_symbols, is_zero
from multibody.systems import manipulators


def setup(name):
    """(split, equations, parameters, q, qd, s, c) of manipulator ``name`` with symbolic parameters."""
    model = manipulators.SYSTEMS[name](symbolic=True)
    p = manipulators.parameters(name, symbolic=True)
    q, qd = coordinate_symbols(model.nq)
    s = [None] + [sp.sin(x) for x in q]  # s[i] = sin q_i, 1-based as in the paper
    c = [None] + [sp.cos(x) for x in q]
    return split_inertial_forces(model), equations_of_motion(model), p, q, (None,) + qd, s, c


def assert_same(ours, expected):
    ours, expected = sp.Matrix(ours), sp.Matrix(expected)
    assert ours.shape == expected.shape
    for a, b in zip(ours, expected):
        assert is_zero(a - b), f"{a} != {b}"


def assert_split(split, centrifugal, coriolis, gyroscopic, shared=None):
    assert_same(split.centrifugal, centrifugal)
    assert_same(split.coriolis, coriolis)
    assert_same(split.gyroscopic, gyroscopic)
    if shared is not None:
        assert_same(split.shared, shared)


def lagrange_inertial_forces(H, q, qd):
    """h = Ḣ q̇ − ∂T/∂q with T = ½ q̇ᵀ H q̇, by sympy differentiation of the given H (Lagrange's equations,
    the step 2 of the proof of statement 1)."""
    qdv = sp.Matrix(qd)
    Hdot = sum((H.diff(x) * v for x, v in zip(q, qd)), sp.zeros(*H.shape))
    T = (qdv.T * H * qdv)[0] / 2
    return Hdot * qdv - sp.Matrix([T.diff(x) for x in q])


def check_common(split, eqs, H_paper):
    """Claims 15–17 and an independent derivation: H equals the paper's; h_c + h_o + h_g equals the
    Newton–Euler h of the model and Lagrange's h of the paper's H; q̇ᵀ h_g ≡ 0 (eq. 5);
    q̇ᵀ(h_c + h_o) = ½ q̇ᵀ Ḣ q̇ (notes B.3)."""
    q, qd = split.q, split.qd
    assert_same(split.mass_matrix, H_paper)
    assert_same(split.total, eqs.inertial)
    assert_same(split.total, lagrange_inertial_forces(sp.Matrix(H_paper), q, qd))
    assert split.gyroscopic_power == 0
    qdv = sp.Matrix(qd)
    Hdot = sum((split.mass_matrix.diff(x) * v for x, v in zip(q, qd)), sp.zeros(len(q), len(q)))
    assert is_zero((qdv.T * (split.centrifugal + split.coriolis))[0] - (qdv.T * Hdot * qdv)[0] / 2)


def test_example1_polar():
    """Example 1 (notes B.9): H = diag(I1z + I2z + m02 q2², m02); h_o1 = h_g1 = m02 q2 q̇1 q̇2,
    h_g2 = −m02 q2 q̇1², no centrifugal force (claim 23): the classical radial 'centrifugal' force is
    gyroscopic here. Bodies symmetric about x: I_z = I_y."""
    split, eqs, p, q, qd, s, c = setup("polar")
    m02, I1z, I2z = p["m02"], p["I1y"], p["I2y"]
    check_common(split, eqs, [[I1z + I2z + m02 * q[1] ** 2, 0], [0, m02]])
    hg1 = m02 * q[1] * qd[1] * qd[2]
    assert_split(split, [0, 0], [hg1, 0], [hg1, -m02 * q[1] * qd[1] ** 2], shared=[hg1, 0])
    assert split.dependencies == {(0, 0): (q[1],)}  # the ТОК: one row (1,1 | q2)


def test_example2_cartesian_and_its_reversed_order():
    """Example 2: H31 = a3 c3, H32 = −a3 s3; h_c1 = −a3 s3 q̇3², h_c2 = −a3 c3 q̇3², no Coriolis or
    gyroscopic forces, h_3 = 0 (claim 24). Reversed to (q3, q2, q1) the same forces on q1, q2 are
    gyroscopic and the q3 equation gets h_o = −h_g = −a3 q̇3 (s3 q̇1 + c3 q̇2) (notes B.3, claim 21)."""
    split, eqs, p, q, qd, s, c = setup("cartesian")
    a3, m1, m2, I3z = p["a3"], p["m01"] + p["m02"] + p["m03"], p["m02"] + p["m03"], p["I3y"]
    H31, H32 = a3 * c[3], -a3 * s[3]
    check_common(split, eqs, [[m1, 0, H31], [0, m2, H32], [H31, H32, I3z]])
    assert_split(split, [H32 * qd[3] ** 2, -H31 * qd[3] ** 2, 0], [0, 0, 0], [0, 0, 0])
    assert split.dependencies == {(2, 0): (q[2],), (2, 1): (q[2],)}

    rev = split_inertial_forces(manipulators.cartesian(symbolic=True), order=["q3", "q2", "q1"])
    assert rev.q == (q[2], q[1], q[0])
    pair = a3 * qd[3] * (s[3] * qd[1] + c[3] * qd[2])
    assert_split(rev, [0, 0, 0], [-pair, 0, 0], [pair, -a3 * c[3] * qd[3] ** 2, -a3 * s[3] * qd[3] ** 2])
    assert rev.gyroscopic_power == 0
    assert_same(rev.total, [split.total[2], split.total[1], split.total[0]])  # the whole force is the same


def test_example3_cylindrical():
    """Example 3: H = diag(I1y + I2y + I3y + m2 q2² − 2 a2 q2, m2, m3), m_q2 = m2 q2 − a2;
    h_o1 = h_g1 = m_q2 q̇1 q̇2, h_g2 = −m_q2 q̇1², h_3 = 0 (claim 25)."""
    split, eqs, p, q, qd, s, c = setup("cylindrical3")
    m2, m3, a2 = p["m02"] + p["m03"], p["m03"], p["a2"]
    check_common(split, eqs, sp.diag(p["I1y"] + p["I2y"] + p["I3y"] + m2 * q[1] ** 2 - 2 * a2 * q[1], m2, m3))
    mq2 = m2 * q[1] - a2
    assert_split(split, [0, 0, 0], [mq2 * qd[1] * qd[2], 0, 0], [mq2 * qd[1] * qd[2], -mq2 * qd[1] ** 2, 0])


def test_example4_cylindrical():
    """Example 4: h_q = m3 q3 + a4 c4 − a3, l_q = [a4 q3 + (I4y − I4x) c4] s4 (the inertia superscripts
    in l_q are illegible in the scan; the order (I4y − I4x) follows from body 4's moment about the vertical,
    I4y c4² + I4x s4², notes B.9); h_o1 = h_g1 = (h_q q̇3 − l_q q̇4) q̇1, h_c2 = −a4 s4 q̇4²,
    h_c3 = −a4 c4 q̇4², h_g3 = −h_q q̇1², h_g4 = l_q q̇1² (claim 26). Body 4 is symmetric about x4: I4z = I4y.
    The printed ∂T/∂q4 = ½ H114 q̇1² omits q̇2 H424 q̇4 + q̇3 H434 q̇4, which cancel in h_g4 (eq. 15)."""
    split, eqs, p, q, qd, s, c = setup("cylindrical4")
    m2, m3 = p["m02"] + p["m03"] + p["m04"], p["m03"] + p["m04"]
    a3, a4, I4x, I4y = p["a3"], p["a4"], p["I4x"], p["I4y"]
    H11 = p["I1y"] + p["I2y"] + p["I3y"] + I4y * c[4] ** 2 + I4x * s[4] ** 2 + m3 * q[2] ** 2 - 2 * a3 * q[2] \
        + 2 * a4 * q[2] * c[4]
    H42, H43 = a4 * c[4], -a4 * s[4]
    check_common(split, eqs, [[H11, 0, 0, 0], [0, m2, 0, H42], [0, 0, m3, H43], [0, H42, H43, I4y]])
    hq = m3 * q[2] + a4 * c[4] - a3
    lq = (a4 * q[2] + (I4y - I4x) * c[4]) * s[4]
    hg1 = (hq * qd[3] - lq * qd[4]) * qd[1]
    assert_split(split, [0, H43 * qd[4] ** 2, -H42 * qd[4] ** 2, 0], [hg1, 0, 0, 0],
                 [hg1, 0, -hq * qd[1] ** 2, lq * qd[1] ** 2], shared=[hg1, 0, 0, 0])
    assert split.dependencies == {(0, 0): (q[2], q[3]), (3, 1): (q[3],), (3, 2): (q[3],)}  # claim 29


def test_example5_angular():
    """Example 5: H11 in the printed form H22 + I1y + (I2y − I2x − m3 L²) c2² + (I3y − I3x) c23²
    − 2 L a3 c2 c23, the printed derivatives H112, H113, H223, H323 and h_o1 = h_g1 = ½ q̇1 (H112 q̇2 + H113 q̇3),
    h_c2 = −L a3 s3 q̇3², h_o2 = −L a3 s3 q̇2 q̇3, h_g2 = ½(H223 q̇2 q̇3 − H112 q̇1²),
    h_g3 = −½(H113 q̇1² + H223 q̇2²) (claim 27). Bodies symmetric about y: I_z = I_x."""
    split, eqs, p, q, qd, s, c = setup("angular")
    L, a3, m3 = p["L"], p["a3"], p["m03"]
    I2x, I2y, I3x, I3y = p["I2x"], p["I2y"], p["I3x"], p["I3y"]
    c23 = sp.cos(q[1] + q[2])
    H22 = I2x + I3x + m3 * L ** 2 + 2 * L * a3 * c[3]
    H32 = I3x + L * a3 * c[3]
    H11 = H22 + p["I1y"] + (I2y - I2x - m3 * L ** 2) * c[2] ** 2 + (I3y - I3x) * c23 ** 2 - 2 * L * a3 * c[2] * c23
    check_common(split, eqs, [[H11, 0, 0], [0, H22, H32], [0, H32, I3x]])
    H112 = (I2x - I2y + m3 * L ** 2) * sp.sin(2 * q[1]) + (I3x - I3y) * sp.sin(2 * (q[1] + q[2])) \
        + 2 * L * a3 * sp.sin(2 * q[1] + q[2])
    H113 = (I3x - I3y) * sp.sin(2 * (q[1] + q[2])) + 2 * L * a3 * s[2] * c23
    H223, H323 = -2 * L * a3 * s[3], -L * a3 * s[3]
    assert_same([split.mass_matrix[0, 0].diff(q[1]), split.mass_matrix[0, 0].diff(q[2]),
                 split.mass_matrix[1, 1].diff(q[2]), split.mass_matrix[2, 1].diff(q[2])], [H112, H113, H223, H323])
    hg1 = qd[1] * (H112 * qd[2] + H113 * qd[3]) / 2
    assert_split(split, [0, H323 * qd[3] ** 2, 0], [hg1, H323 * qd[2] * qd[3], 0],
                 [hg1, (H223 * qd[2] * qd[3] - H112 * qd[1] ** 2) / 2, -(H113 * qd[1] ** 2 + H223 * qd[2] ** 2) / 2])
    assert split.dependencies == {(0, 0): (q[1], q[2]), (1, 1): (q[2],), (2, 1): (q[2],)}  # claim 29


def test_example6_universal():
    """Example 6: with a = a5 + a6, A = I3y + I4y + I5x + I6x, B = I5x − I5y + I6x − I6y the printed H,
    the totals h1 … h6 and the split (claim 28), with two corrections of the notes (B.9, B.5):

    * the printed line 'h_g3 = B s5 c5 q̇3 q̇5 − I6 s5 q̇5 q̇6' is a misprint: the second term belongs to
      h_o3 (by eq. 15 the terms of H315 = H513 and H325 = H523 cancel), and with it q̇ᵀ h_g ≠ 0;
    * eq. (17)'s 'h_o1 = h_g1 = h^g_o1' of Examples 1–5 does not hold here: h_o1 = −2 a c3 c5 q̇3 q̇5 ≠ 0
      while h_g1 = h^g_o1 = 0; only h_g1 = h^g_o1 holds in general.
    Bodies symmetric about y: I_z = I_x."""
    split, eqs, p, q, qd, s, c = setup("universal")
    a = p["a5"] + p["a6"]
    A = p["I3y"] + p["I4y"] + p["I5x"] + p["I6x"]
    B = p["I5x"] - p["I5y"] + p["I6x"] - p["I6y"]
    I6y = p["I6y"]
    m1 = sum(p[f"m0{i}"] for i in range(1, 7))
    m2 = sum(p[f"m0{i}"] for i in range(2, 7))
    m4 = p["m04"] + p["m05"] + p["m06"]
    H = sp.Matrix([[m1, 0, -a * c[3] * s[5], 0, -a * s[3] * c[5], 0],
                   [0, m2, -a * s[3] * s[5], 0, a * c[3] * c[5], 0],
                   [0, 0, A - B * c[5] ** 2, 0, 0, I6y * c[5]],
                   [0, 0, 0, m4, -a * s[5], 0],
                   [0, 0, 0, 0, p["I5x"] + p["I6x"], 0],
                   [0, 0, 0, 0, 0, I6y]])
    H = H + H.T - sp.diag(*H.diagonal())
    check_common(split, eqs, H)
    sq = qd[3] ** 2 + qd[5] ** 2
    totals = [a * (s[3] * s[5] * sq - 2 * c[3] * c[5] * qd[3] * qd[5]),
              -a * (c[3] * s[5] * sq + 2 * s[3] * c[5] * qd[3] * qd[5]),
              (2 * B * c[5] * qd[3] - I6y * qd[6]) * s[5] * qd[5],
              -a * c[5] * qd[5] ** 2,
              (I6y * qd[6] - B * c[5] * qd[3]) * s[5] * qd[3],
              -I6y * s[5] * qd[3] * qd[5]]
    assert_same(split.total, totals)
    hog3 = B * s[5] * c[5] * qd[3] * qd[5]
    centrifugal = [a * s[3] * s[5] * sq, -a * c[3] * s[5] * sq, 0, -a * c[5] * qd[5] ** 2, 0, 0]
    coriolis = [-2 * a * c[3] * c[5] * qd[3] * qd[5], -2 * a * s[3] * c[5] * qd[3] * qd[5],
                hog3 - I6y * s[5] * qd[5] * qd[6], 0, 0, 0]
    gyroscopic = [0, 0, hog3, 0, I6y * s[5] * qd[3] * qd[6] - B * c[5] * s[5] * qd[3] ** 2,
                  -I6y * s[5] * qd[3] * qd[5]]
    assert_split(split, centrifugal, coriolis, gyroscopic, shared=[0, 0, hog3, 0, 0, 0])
    printed_hg3 = hog3 - I6y * s[5] * qd[5] * qd[6]  # the misprinted line: its power is not zero
    assert not is_zero(printed_hg3 * qd[3] + gyroscopic[4] * qd[5] + gyroscopic[5] * qd[6])
    assert split.dependencies == {(2, 0): (q[2], q[4]), (2, 1): (q[2], q[4]), (2, 2): (q[4],),
                                  (4, 0): (q[2], q[4]), (4, 1): (q[2], q[4]), (4, 3): (q[4],), (5, 2): (q[4],)}


def test_generating_bodies_universal():
    """Statement 2's table (notes B.4) on Example 6: centrifugal forces from squares of carried bodies'
    velocities; Coriolis from products of different velocities of carried bodies and of the body's own
    with carried ones; gyroscopic forces involve a carrier, or the body's own velocity with a carried one."""
    split = split_inertial_forces(manipulators.universal(symbolic=True))
    gb = split.generating_bodies
    assert gb["q1"]["centrifugal"] == (("body3", "body3"), ("body5", "body5"))
    assert gb["q3"]["coriolis"] == (("body3", "body5"), ("body5", "body6"))
    assert gb["q5"]["gyroscopic"] == (("body3", "body3"), ("body3", "body6"))
    assert split.relation("body5", "body3") == "carrier" and split.relation("body3", "body6") == "carried"
    assert "q3 (body3) gyroscopic: body3 (itself) x body5 (carried)" in split.table()


def test_symbolic_model_refused_by_numeric_algorithms():
    """A symbol where a number is needed raises ModelError naming the element."""
    model = manipulators.angular(symbolic=True, m02=2.0)
    assert model.symbolic and not manipulators.angular().symbolic
    for call in (lambda: mb.crba(model, np.zeros(3)), lambda: mb.rnea(model, np.zeros(3), np.zeros(3), np.zeros(3)),
                 lambda: mb.simulate(model, t_end=0.1), lambda: mb.simulate(model, t_end=0.1, formulation="symbolic")):
        with pytest.raises(ModelError, match="body 'body1': mass is symbolic") as err:
            call()
        assert err.value.element == "body 'body1'"
    m = sp.Symbol("m")
    b = mb.ModelBuilder()
    b.add_body("link", mass=1.0)
    b.add_joint("hinge", mb.Revolute(), "ground", "link", placement=(np.eye(3), (0, 0, m)))
    with pytest.raises(ModelError, match="joint 'hinge': placement is symbolic"):
        mb.energy(b.build(), np.zeros(1), np.zeros(1))


def test_symbolic_builder_checks():
    """What sympy can decide is still checked: a negative mass, an unsymmetric inertia, a rotation that is
    not orthonormal; an exact symbolic rotation is accepted."""
    m, t = sp.symbols("m t")
    with pytest.raises(ModelError, match="body 'x': mass must be positive"):
        mb.Body("x", mass=-sp.Symbol("k", positive=True))
    with pytest.raises(ModelError, match="body 'x': inertia must be symmetric"):
        mb.Body("x", mass=m, inertia=[[m, 1, 0], [0, m, 0], [0, 0, m]])
    with pytest.raises(ModelError, match="orthonormal"):
        mb.Placement([[sp.cos(t), 0, 0], [0, 1, 0], [0, 0, 1]])
    R = [[sp.cos(t), -sp.sin(t), 0], [sp.sin(t), sp.cos(t), 0], [0, 0, 1]]
    assert mb.Placement(R).symbolic


def test_symbolic_placement_angle():
    """A placement rotated by a symbolic angle α (a twist, as in Denavit–Hartenberg parameters): sin α and
    cos α are a pair of the algebra like the joint angles, H₁₁ of two hinges with a twist is exact."""
    al, m, l = sp.symbols("alpha m l")
    R = [[1, 0, 0], [0, sp.cos(al), -sp.sin(al)], [0, sp.sin(al), sp.cos(al)]]
    b = mb.ModelBuilder(gravity=(0, 0, 0))
    b.add_body("a", mass=m, com=(l, 0, 0))
    b.add_body("b", mass=m, com=(l, 0, 0))
    b.add_joint("j1", mb.Revolute((0, 0, 1)), "ground", "a")
    b.add_joint("j2", mb.Revolute((0, 0, 1)), "a", "b", placement=(R, (l, 0, 0)))
    eqs = equations_of_motion(b.build())
    q1, q2 = sp.symbols("q1 q2")
    # body b: point mass at l(cos q2, sin q2, 0) in its frame, the frame twisted by α about x1
    x = sp.Matrix([l, 0, 0]) + sp.Matrix(R) * sp.Matrix([l * sp.cos(q2), l * sp.sin(q2), 0])
    H11 = m * l ** 2 + m * (x[0] ** 2 + x[1] ** 2)
    assert is_zero(eqs.mass_matrix[0, 0] - H11)
    assert al in eqs.parameters


def test_errors():
    """Quaternion joints, cut joints and bad orders are refused with ModelError naming the element."""
    b = mb.ModelBuilder()
    b.add_body("ball", mass=1.0, inertia=(1, 1, 1))
    b.add_joint("socket", mb.Spherical(), "ground", "ball")
    with pytest.raises(ModelError, match="joint 'socket'.*quaternion"):
        split_inertial_forces(b.build())
    with pytest.raises(ModelError, match="order must be a permutation"):
        split_inertial_forces(manipulators.polar(), order=["q1", "q1"])
    with pytest.raises(ModelError, match="no coordinate 'q7'"):
        split_inertial_forces(manipulators.polar(), order=["q7", "q1"])


@pytest.mark.parametrize("name", list(manipulators.SYSTEMS))
def test_chain_endpoints(name):
    """Statement 3, eq. (17) as the notes correct it (B.5): h_cN = h_oN = h^g_oN = 0 and h_g1 = h^g_o1; q1
    is cyclic (no element of H depends on it, so ∂T/∂q1 = 0). (The examples' 'h_o1 = h_g1' holds in
    Examples 1–5 only: see test_example6_universal.)"""
    split = split_inertial_forces(manipulators.SYSTEMS[name](symbolic=True))
    assert split.centrifugal[-1] == split.coriolis[-1] == split.shared[-1] == 0
    assert is_zero(split.gyroscopic[0] - split.shared[0])
    assert all(split.q[0] not in used for used in split.dependencies.values())
    if name != "universal":
        assert is_zero(split.coriolis[0] - split.gyroscopic[0])


def test_cli_forces(capsys):
    """``multibody forces`` prints the split of a bundled manipulator; a bad order exits with status 2."""
    from multibody.cli import main

    assert main(["forces", "cartesian", "--order", "q3,q2,q1"]) == 0
    out = capsys.readouterr().out
    assert "Cartesian manipulator (seed 004, Example 2); coordinates q3, q2, q1" in out
    assert "h_g1 = -a3*qd3**2*sin(q3)      (gyroscopic)" in out
    assert "gyroscopic power qdᵀ h_g = 0" in out
    assert main(["forces", "polar", "--latex"]) == 0
    assert r"h_{g2} = - m_{02} q_{2} \dot{q}_{1}^{2}" in capsys.readouterr().out
    assert main(["forces", "polar", "--order", "q1,q9"]) == 2
    assert "no coordinate 'q9'" in capsys.readouterr().err
