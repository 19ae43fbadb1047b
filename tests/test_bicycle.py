"""Whipple bicycle benchmark (seed 003: Meijaard, Papadopoulos, Ruina, Schwab 2007).

Reference numbers are the paper's printed 14-decimal values: eqs. (6.1)-(6.4) and Table 2, with the
corrections of ../shared/reference/seed003-bicycle.md §0 (restored minus signs of K0 and C1[delta, phi],
IHxz = -0.00756, the transposed digits of Table 2(b) at v = 2 m/s). Tolerances: 1e-13 absolute for the
matrices, 1e-12 for eigenvalues and speeds (notes §12: the printed v = 7 castor value is itself 6e-13
off the exact root).
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from multibody.errors import ModelError
from multibody.systems import bicycle
from multibody.viz.bicycle import plot_eigenvalues, plot_time_history

P = bicycle.benchmark_parameters()

# seed 003, eqs. (6.1)-(6.4), signs restored as in notes §0
M_REF = [[80.81722, 2.31941332208709], [2.31941332208709, 0.29784188199686]]
K0_REF = [[-80.95, -2.59951685249872], [-2.59951685249872, -0.80329488458618]]
K2_REF = [[0.0, 76.59734589573222], [0.0, 2.65431523794604]]
C1_REF = [[0.0, 33.86641391492494], [-0.85035641456978, 1.68540397397560]]

# seed 003, Table 2(b): weave Re, Im for v = 1..10 m/s (v = 2 Re: OCR fix, notes §0)
WEAVE_REF = {
    1: (3.52696170990070, 0.80774027519930),
    2: (2.68234517512745, 1.68066296590675),
    3: (1.70675605663975, 2.31582447384325),
    4: (0.41325331521125, 3.07910818603206),
    5: (-0.77534188219585, 4.46486771378823),
    6: (-1.52644486584142, 5.87673060598709),
    7: (-2.13875644258362, 7.19525913329805),
    8: (-2.69348683581097, 8.46037971396931),
    9: (-3.21675402252485, 9.69377351531791),
    10: (-3.72016840437287, 10.90681139476287),
}
# seed 003, Table 2(c): capsize and castor for v = 0..10 m/s
REAL_REF = {
    0: (-3.13164324790656, -5.53094371765393),
    1: (-3.13423125066578, -7.11008014637442),
    2: (-3.07158645641514, -8.67387984831735),
    3: (-2.63366137253667, -10.35101467245920),
    4: (-1.42944427361326, -12.15861426576447),
    5: (-0.32286642900409, -14.07838969279822),
    6: (-0.00406690076970, -16.08537123098026),
    7: (0.10268170574766, -18.15788466125262),
    8: (0.14327879765713, -20.27940894394569),
    9: (0.15790184030917, -22.43788559040858),
    10: (0.16105338653172, -24.62459635017404),
}
# the exact roots where Table 2 is printed further off them than its 14 decimals say (notes §8.5: every other
# printed eigenvalue is within 1e-13 of the exact root)
TABLE2_EXACT = {("castor", 7): -18.157884661252021}     # printed -18.15788466125262, 6e-13 off
# seed 003, Table 2(a)
V_D, LAMBDA_D = 0.68428307889246, 3.78290405129320
V_W, OMEGA_W = 4.29238253634111, 3.43503384866144
V_C = 6.02426201538837
V0_PAIRS = (3.13164324790656, 5.53094371765393)


# ---------------------------------------------------------------------------------------- parameters

def test_benchmark_parameters_mapping_and_names():
    assert tuple(P) == bicycle.PARAMETER_NAMES
    assert len(P) == 26 and set(bicycle.PARAMETER_INFO) == set(bicycle.PARAMETER_NAMES)
    d = dict(P)
    assert d["lam"] == math.pi / 10 and d["IHxz"] == -0.00756 and d["g"] == 9.81   # Table 1, notes §0
    assert P["mB"] == P.mB == 85.0
    # plain dicts are accepted everywhere
    for a, b in zip(bicycle.linear_matrices(d), bicycle.linear_matrices(P)):
        np.testing.assert_array_equal(a, b)
    assert bicycle.validate_parameters(d) == P


def test_intermediate_quantities():
    """Notes §5.2 ([derived] from A.1-A.19, 40-digit arithmetic)."""
    q = bicycle.intermediate_quantities(P)
    ref = dict(mT=94.0, xT=0.34212765957446809, zT=-0.86117021276595745, ITxx=80.81722, ITxz=28.93344,
               ITzz=17.01908, mA=7.0, xA=0.95142857142857143, zA=-0.55, IAxx=0.40942, IAxz=-0.07956,
               IAzz=0.17226571428571429, uA=0.028659521628083981, IAll=0.1538973160142678,
               IAlx=0.16119083966867188, IAlz=0.3301214520762362, mu=0.074592667944717927,
               SR=0.4, SF=0.8, ST=1.2, SA=2.5995168524987164)
    for key, value in ref.items():
        assert q[key] == pytest.approx(value, abs=1e-14, rel=1e-14), key
    assert q["mT"] * q["zT"] == pytest.approx(-80.95, abs=1e-13)


def test_linear_matrices_match_paper_to_1e13():
    """Every entry of eqs. (6.1)-(6.4) (seed 003) to 1e-13 absolute."""
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    for got, ref, name in ((M, M_REF, "M"), (C1, C1_REF, "C1"), (K0, K0_REF, "K0"), (K2, K2_REF, "K2")):
        assert got.shape == (2, 2)
        err = np.abs(got - np.array(ref)).max()
        assert err <= 1e-13, (name, err)
    # exact zeros and structure (A.20-A.27): M, K0 symmetric; K2 first column and C1[0, 0] zero
    assert K2[0, 0] == 0.0 and K2[1, 0] == 0.0 and C1[0, 0] == 0.0
    assert M[0, 1] == M[1, 0] and K0[0, 1] == K0[1, 0]
    assert K0[1, 1] == pytest.approx(K0[0, 1] * math.sin(P.lam), abs=1e-15)
    assert np.linalg.det(M) == pytest.approx(18.691074743878835, rel=1e-14)   # notes §5.2


def test_against_bicycleparameters_package():
    """Third-party implementation of Appendix A (bicycleparameters.bicycle.benchmark_par_to_canonical)."""
    bp = pytest.importorskip("bicycleparameters.bicycle")
    theirs = bp.benchmark_par_to_canonical(dict(P))
    for ours, other in zip(bicycle.linear_matrices(P), theirs):
        np.testing.assert_allclose(ours, np.asarray(other, dtype=float), rtol=0, atol=2e-14)
    A_theirs, _ = bp.ab_matrix(*[np.asarray(x, dtype=float) for x in theirs], 5.0, 9.81)
    A_ours, _ = bicycle.state_matrices(P, 5.0)
    np.testing.assert_allclose(A_ours, A_theirs, rtol=1e-13, atol=1e-13)


def _tensor(Ixx, Iyy, Izz, Ixz):
    return np.array([[Ixx, 0.0, Ixz], [0.0, Iyy, 0.0], [Ixz, 0.0, Izz]])


def _steiner(m, r):
    r = np.asarray(r, dtype=float)
    return m * (r @ r * np.eye(3) - np.outer(r, r))


def _independent_quantities(p):
    """Appendix A quantities recomputed from 3-D inertia tensors and the parallel-axis theorem.

    Bodies are placed in the x-z plane (z down) of seed 003 §2.3; the products about the steer axis
    lam_hat = (sin lam, 0, cos lam) are lam_hat^T I x_hat (about the steer-axis ground point) and
    lam_hat^T I z_hat (about the point where the steer axis meets the z-axis through P): the definitions
    in the text after A.13. No formula of Appendix A is reused.
    """
    bodies = {  # mass, centre of mass, inertia about the centre of mass
        "R": (p["mR"], (0.0, 0.0, -p["rR"]), _tensor(p["IRxx"], p["IRyy"], p["IRxx"], 0.0)),
        "B": (p["mB"], (p["xB"], 0.0, p["zB"]), _tensor(p["IBxx"], p["IByy"], p["IBzz"], p["IBxz"])),
        "H": (p["mH"], (p["xH"], 0.0, p["zH"]), _tensor(p["IHxx"], p["IHyy"], p["IHzz"], p["IHxz"])),
        "F": (p["mF"], (p["w"], 0.0, -p["rF"]), _tensor(p["IFxx"], p["IFyy"], p["IFxx"], 0.0)),
    }

    def about(point, names):
        return sum(I + _steiner(m, np.subtract(r, point)) for m, r, I in (bodies[n] for n in names))

    IT = about((0.0, 0.0, 0.0), "RBHF")
    lam = p["lam"]
    lh = np.array([math.sin(lam), 0.0, math.cos(lam)])
    ground = np.array([p["w"] + p["c"], 0.0, 0.0])             # steer axis meets the ground
    on_z = ground - (ground[0] / lh[0]) * lh                   # steer axis meets the z-axis through P
    mA = p["mH"] + p["mF"]
    rA = (p["mH"] * np.array(bodies["H"][1]) + p["mF"] * np.array(bodies["F"][1])) / mA
    # distance of A's centre of mass from the steer axis, positive ahead of it
    d = rA - ground
    uA = np.cross(lh, d)[1]   # y-component of lam_hat x d: positive when A is ahead (forward) of the axis
    IA_line = about(ground, "HF")
    return dict(ITxx=IT[0, 0], ITxz=IT[0, 2], ITzz=IT[2, 2], uA=uA,
                IAll=lh @ IA_line @ lh, IAlx=lh @ IA_line @ np.array([1.0, 0, 0]),
                IAlz=lh @ about(on_z, "HF") @ np.array([0, 0, 1.0]))


def test_appendix_a_against_inertia_tensors():
    """A.4-A.16 checked by an independent 3-D parallel-axis computation (benchmark and a variant)."""
    for p in (P, P.replace(c=-0.05, lam=0.31, xH=0.8, zH=-0.95, IHxz=0.002, w=1.1)):
        ours = bicycle.intermediate_quantities(p)
        for key, value in _independent_quantities(p).items():
            assert ours[key] == pytest.approx(value, abs=1e-13), key


def test_appendix_b_derivation_with_sympy():
    """Eliminate FFy from the balance equations (B.1)-(B.3) with the constraints (B.6), (B.7) symbolically
    and compare the resulting lean and steer equations with (A.20)-(A.27)."""
    sp = pytest.importorskip("sympy")
    q = bicycle.intermediate_quantities(P)
    (v, g, phi, dl, phid, dld, phidd, dldd, FFy, Tphi, Tdel) = sp.symbols(
        "v g phi delta phid deltad phidd deltadd FFy Tphi Tdelta")
    w, c, lam = sp.Float(P.w, 30), sp.Float(P.c, 30), sp.Float(P.lam, 30)
    cl, sl = sp.cos(lam), sp.sin(lam)
    S = {k: sp.Float(val, 30) for k, val in q.items()}
    psid = (v * dl + c * dld) / w * cl                                        # (B.6)
    psidd = (v * dld + c * dldd) / w * cl
    ypdd = (v ** 2 * dl + v * c * dld) / w * cl                               # (B.7)
    B1 = (-S["mT"] * ypdd * S["zT"] + S["ITxx"] * phidd + S["ITxz"] * psidd + S["IAlx"] * dldd
          + psid * v * S["ST"] + dld * v * S["SF"] * cl
          - (Tphi - g * S["mT"] * S["zT"] * phi + g * S["SA"] * dl))           # (B.1)
    B2 = (S["mT"] * ypdd * S["xT"] + S["ITxz"] * phidd + S["ITzz"] * psidd + S["IAlz"] * dldd
          - phid * v * S["ST"] - dld * v * S["SF"] * sl - w * FFy)              # (B.2)
    B3 = (S["mA"] * ypdd * S["uA"] + S["IAlx"] * phidd + S["IAlz"] * psidd + S["IAll"] * dldd
          + v * S["SF"] * (-phid * cl + psid * sl)
          - (Tdel - c * FFy * cl + g * (phi + dl * sl) * S["SA"]))              # (B.3)
    steer = sp.expand(B3.subs(FFy, sp.solve(B2, FFy)[0]))
    lean = sp.expand(B1)
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    for row, eq, T in ((0, lean, Tphi), (1, steer, Tdel)):
        assert float(eq.coeff(T)) == pytest.approx(-1.0, abs=1e-14)
        for col, acc in ((0, phidd), (1, dldd)):
            assert float(eq.coeff(acc)) == pytest.approx(M[row, col], abs=1e-12)
        for col, rate in ((0, phid), (1, dld)):
            assert float(eq.coeff(rate).coeff(v)) == pytest.approx(C1[row, col], abs=1e-12)
        for col, ang in ((0, phi), (1, dl)):
            assert float(eq.coeff(ang).coeff(g)) == pytest.approx(K0[row, col], abs=1e-12)
            assert float(eq.coeff(ang).coeff(v, 2)) == pytest.approx(K2[row, col], abs=1e-12)


# ---------------------------------------------------------------------------------------- eigenvalues

@pytest.mark.parametrize("method", ["quartic", "eig"])
def test_table2_eigenvalues_to_1e12(method):
    """Seed 003, Table 2(b) and 2(c): weave, capsize and castor for v = 0..10 m/s (both root finders), to 1e-12:
    the printed values are within 1e-13 of the exact roots (notes §8.5; the v = 7 castor, 6e-13 off, is replaced
    by its exact root, TABLE2_EXACT), and float64 adds about eps ‖A‖ κ (κ the eigenvalue's condition number of
    the state matrix A), at most 3.4e-13 here (v = 10 weave); measured at most 1.04e-13."""
    sw = bicycle.eigenvalues(P, np.arange(11.0), method=method)
    for v, (cap, cas) in REAL_REF.items():
        cas = TABLE2_EXACT.get(("castor", v), cas)
        assert abs(sw.capsize[v].real - cap) <= 1e-12 and sw.capsize[v].imag == 0.0, v
        assert abs(sw.castor[v].real - cas) <= 1e-12 and sw.castor[v].imag == 0.0, v
    for v, (re, im) in WEAVE_REF.items():
        assert sw.oscillatory[v]
        assert abs(sw.weave[v, 0] - complex(re, im)) <= 1e-12, v
        assert abs(sw.weave[v, 1] - complex(re, -im)) <= 1e-12, v
    # v = 5 m/s printed spectrum: all four in the left half-plane
    assert sw.stable[5] and not sw.stable[4] and not sw.stable[7]


@pytest.mark.parametrize("method", ["quartic", "eig"])
def test_v0_pairs(method):
    """Table 2(a): at v = 0 the spectrum is +-3.13164324790656, +-5.53094371765393 (all real)."""
    ev = bicycle.eigenvalues(P, 0.0, method=method).values[0]
    assert np.all(ev.imag == 0.0)
    np.testing.assert_allclose(np.sort(ev.real), [-V0_PAIRS[1], -V0_PAIRS[0], V0_PAIRS[0], V0_PAIRS[1]],
                               rtol=0, atol=1e-12)
    # and they are the roots of det(M s^2 + g K0) = 0 (eq. 6.5 at v = 0)
    M, _, K0, _ = bicycle.linear_matrices(P)
    for s in ev.real:
        assert abs(np.linalg.det(M * s * s + P.g * K0)) < 1e-9 * np.linalg.det(M) * s ** 4


def test_critical_speeds():
    """Table 2(a): v_d, lambda_d, v_w, omega_w, v_c to 1e-12."""
    cs = bicycle.critical_speeds(P)
    weave, capsize = cs                                   # DESIGN contract: unpacks as weave, capsize
    assert abs(weave - V_W) <= 1e-12 and abs(capsize - V_C) <= 1e-12
    assert abs(cs.v_d - V_D) <= 1e-12
    assert abs(cs.double_root - LAMBDA_D) <= 1e-12
    assert abs(cs.weave_frequency - OMEGA_W) <= 1e-12
    assert cs.stable_interval == (cs.weave, cs.capsize)
    # notes §8.5: 50-digit roots; ours agree to a few ulps
    assert abs(weave - 4.2923825363411040) < 2e-14
    assert abs(capsize - 6.0242620153883589) < 2e-14
    assert abs(cs.oscillation - 0.68428307889245580) < 1e-13


def test_critical_speeds_are_what_they_claim():
    """At v_w the weave pair is +-i omega; at v_c the capsize root is 0; below/above v_d real/complex;
    v_c cross-checked by Brent's method on det K(v) (eq. 6.5, a0 = 0)."""
    from scipy.optimize import brentq

    cs = bicycle.critical_speeds(P)
    sw = bicycle.eigenvalues(P, [cs.weave, cs.capsize, cs.oscillation - 1e-6, cs.oscillation + 1e-6])
    assert abs(sw.weave[0, 0].real) < 1e-12 and abs(sw.weave[0, 0].imag - OMEGA_W) < 1e-12
    assert abs(sw.capsize[1]) < 1e-12
    assert not sw.oscillatory[2] and sw.oscillatory[3]
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    vc = brentq(lambda v: np.linalg.det(P.g * K0 + v * v * K2), 5.0, 7.0, xtol=1e-15)
    # Brent on a float64 determinant: det(g K0 + v² K2) = a00 a11 − a01 a10 is a difference of two products of
    # about 7e4 that cancel, each (and the entries before them) rounded to a few eps of its size, so the root is
    # off by about 4 eps (|a00 a11| + |a01 a10|) / |d det/dv| ≈ 3e-14, plus Brent's xtol 1e-15 + 4 eps |v|; the
    # closed form is closer to the 50-digit root (notes §8.5)
    A, dA = P.g * K0 + vc * vc * K2, 2 * vc * K2
    slope = dA[0, 0] * A[1, 1] + A[0, 0] * dA[1, 1] - dA[0, 1] * A[1, 0] - A[0, 1] * dA[1, 0]
    eps = np.finfo(float).eps
    err = 4 * eps * (abs(A[0, 0] * A[1, 1]) + abs(A[0, 1] * A[1, 0])) / abs(slope) + 1e-15 + 4 * eps * vc
    assert abs(vc - 6.0242620153883589) < 3 * err and abs(vc - cs.capsize) < 3 * err, (vc, err)
    # other roots at the special speeds (notes §8.5, 50-digit)
    np.testing.assert_allclose(np.sort(sw.values[0, 2:].real), [-12.709441052374715, -0.98492458527774466],
                               rtol=0, atol=1e-12)


def test_characteristic_polynomial_coefficients():
    """Notes §8.1: a4..a0 at v = 5 m/s, and the roots of the quartic equal the eigenvalues."""
    a = bicycle.characteristic_coefficients(P, 5.0)
    ref = (18.691074743878835, 298.15890072271443, 886.20800505949892, 5659.5751329050018, 1744.7379413103253)
    # each a_k is a sum of products of matrix entries (2x2 determinants and mixed terms, eq. 6.5); the entries
    # and every product carry a few rounding errors, so a_k is good to about eps Σ|terms| (measured: at most 1.1
    # eps Σ|terms|). a0 = det(g K0 + v^2 K2) loses digits to cancellation: Σ|terms| is 8 times |a0|.
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    v, g = 5.0, P.g

    def det_abs(A):
        return abs(A[0, 0] * A[1, 1]) + abs(A[0, 1] * A[1, 0])

    def mixed_abs(A, B):
        return abs(A[0, 0] * B[1, 1]) + abs(A[1, 1] * B[0, 0]) + abs(A[0, 1] * B[1, 0]) + abs(A[1, 0] * B[0, 1])

    terms = (det_abs(M), v * mixed_abs(M, C1), v * v * (mixed_abs(M, K2) + det_abs(C1)) + g * mixed_abs(M, K0),
             v ** 3 * mixed_abs(C1, K2) + v * g * mixed_abs(C1, K0),
             v ** 4 * det_abs(K2) + v * v * g * mixed_abs(K0, K2) + g * g * det_abs(K0))
    for got, want, size in zip(a, ref, terms):
        assert abs(float(got) - want) <= 8 * np.finfo(float).eps * size, (got, want)
    roots = np.sort_complex(np.roots([float(x) for x in a]))
    ev = np.sort_complex(bicycle.eigenvalues(P, 5.0).values[0])
    np.testing.assert_allclose(roots, ev, rtol=0, atol=1e-11)


def test_speed_reversal_symmetry():
    """Notes §8.1, §10: spectrum(-v) = -spectrum(v)."""
    v = np.linspace(0.1, 10, 37)
    plus = bicycle.eigenvalues(P, v).values
    minus = bicycle.eigenvalues(P, -v).values
    for a, b in zip(plus, minus):
        np.testing.assert_allclose(np.sort_complex(-a), np.sort_complex(b), rtol=0, atol=1e-11)


def test_coordinate_change_invariance():
    """Notes §12 item 17: q = T q' gives T^T M T etc. with the same eigenvalues."""
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    T = np.array([[1.3, -0.4], [0.7, 2.1]])
    for v in (0.0, 2.0, 5.0, 9.0):
        ours = np.sort_complex(bicycle.eigenvalues(P, v).values[0])
        Mt, Ct, Kt = (T.T @ X @ T for X in (M, v * C1, P.g * K0 + v * v * K2))
        Mi = np.linalg.inv(Mt)
        A = np.block([[np.zeros((2, 2)), np.eye(2)], [-Mi @ Kt, -Mi @ Ct]])
        np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(A)), ours, rtol=0, atol=1e-11)


def test_mass_and_length_scaling():
    """§3a (seed 003): mass scaling leaves the eigenvalues unchanged; with lengths scaled by L and inertias
    by L^2 the eigenvalues at speed sqrt(L) v are those at v divided by sqrt(L) (Froude scaling)."""
    v = np.linspace(0, 10, 21)
    ref = bicycle.eigenvalues(P, v).values
    k = 3.7
    heavy = P.replace(**{n: P[n] * k for n in P if n[0] in "mI"})
    np.testing.assert_allclose(bicycle.eigenvalues(heavy, v).values, ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bicycle.linear_matrices(heavy)[0], k * bicycle.linear_matrices(P)[0], rtol=1e-14)
    L = 1.9
    big = P.replace(**{n: P[n] * (L if n in ("w", "c", "rR", "rF", "xB", "zB", "xH", "zH") else
                                  L * L if n[0] == "I" else 1.0) for n in P})
    np.testing.assert_allclose(bicycle.eigenvalues(big, v * math.sqrt(L)).values * math.sqrt(L), ref,
                               rtol=1e-11, atol=1e-11)
    cs, cs_big = bicycle.critical_speeds(P), bicycle.critical_speeds(big)
    assert cs_big.weave == pytest.approx(cs.weave * math.sqrt(L), rel=1e-13)
    assert cs_big.capsize == pytest.approx(cs.capsize * math.sqrt(L), rel=1e-13)


def test_special_geometries_where_terms_vanish():
    """Exact zeros of (A.24)-(A.26): C1[phi,phi] = K2[phi,phi] = K2[delta,phi] = 0 always; C1[delta,phi]
    = -(mu ST + SF cos lam) vanishes with zero trail and no wheel spin inertia; K2[delta,delta] =
    (SA + SF sin lam) cos lam / w vanishes when moreover the front assembly's centre of mass lies on the
    steer axis (uA = 0, so SA = 0); with lam = 0 and zero trail M, C1, K0 and K2 have no steer-lean
    gravity coupling (K0[phi,delta] = -SA = 0). At v = 0 eq. (6.5) is det(M s^2 + g K0) = 0."""
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    assert C1[0, 0] == 0.0 and K2[0, 0] == 0.0 and K2[1, 0] == 0.0
    # zero trail, no gyroscopic wheels, front assembly centre of mass on the steer axis (lam = 0: xA = w)
    special = P.replace(c=0.0, lam=0.0, IRyy=0.0, IFyy=0.0, xH=P.w)
    q = bicycle.intermediate_quantities(special, validate=False)
    assert q["mu"] == 0.0 and q["uA"] == 0.0 and q["SA"] == 0.0 and q["ST"] == 0.0
    M, C1, K0, K2 = bicycle.linear_matrices(special, validate=False)
    assert C1[1, 0] == 0.0 and K2[1, 1] == 0.0 and K0[0, 1] == 0.0 and K0[1, 1] == 0.0
    # the remaining entries are what (A.24), (A.26) leave: K2[phi,delta] = -mT zT / w, C1[phi,delta] = ITxz / w
    assert K2[0, 1] == pytest.approx(-q["mT"] * q["zT"] / special.w, rel=1e-15)
    assert C1[0, 1] == pytest.approx(q["ITxz"] / special.w, rel=1e-15)
    with pytest.raises(ModelError, match="IRyy"):
        bicycle.linear_matrices(special)          # degenerate wheels are refused unless validate=False


def test_fore_aft_symmetric_bicycle_is_never_asymptotically_stable():
    """Seed 003 §4(c3): a fore-aft symmetric bicycle (vertical central steer axis, front assembly a mirror
    of the rear) cannot be asymptotically stable."""
    w = 1.0
    sym = P.replace(w=w, c=-w / 2, lam=0.0, rF=P.rR, mF=P.mR, IFxx=P.IRxx, IFyy=P.IRyy,
                    mB=10.0, xB=0.3, zB=-0.6, IBxx=0.5, IByy=0.6, IBzz=0.2, IBxz=0.05,
                    mH=10.0, xH=w - 0.3, zH=-0.6, IHxx=0.5, IHyy=0.6, IHzz=0.2, IHxz=-0.05)
    sw = bicycle.eigenvalues(sym, np.linspace(0.0, 20.0, 401))
    assert np.all(sw.max_real > -1e-9)


def test_eigenvalues_input_shapes_and_bad_speeds():
    assert bicycle.eigenvalues(P, []).values.shape == (0, 4)
    assert bicycle.eigenvalues(P, 3.0).values.shape == (1, 4)
    assert bicycle.eigenvalues(P, np.ones((2, 3))).values.shape == (6, 4)
    with pytest.raises(ValueError, match="finite"):
        bicycle.eigenvalues(P, [1.0, float("nan")])


def test_root_finders_agree_on_the_benchmark_sweep():
    """The compiled quartic solver and LAPACK on the state matrix agree along 0-10 m/s (incl. near v_d),
    in any order of the speeds (the quartic solver continues from speed to speed). The speed of this 10 000-speed
    sweep (issue 3 target: < 50 ms) is not a test: ``multibody bench --only bicycle`` times it
    (``multibody.bench.bicycle``)."""
    v = np.linspace(0.0, 10.0, 10_000)
    a = bicycle.eigenvalues(P, v).values
    b = bicycle.eigenvalues(P, v, method="eig").values
    cs = bicycle.critical_speeds(P)
    far = np.abs(v - cs.oscillation) > 1e-3          # a double root is ill-conditioned for both
    assert np.abs(a - b)[far].max() < 1e-12
    assert np.abs(a - b).max() < 1e-6
    perm = np.random.default_rng(1).permutation(v.size)
    shuffled = bicycle.eigenvalues(P, v[perm]).values
    np.testing.assert_allclose(shuffled[far[perm]], a[perm][far[perm]], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="method"):
        bicycle.eigenvalues(P, v, method="qr")


@pytest.mark.parametrize("method", ["quartic", "eig"])
def test_eigen_sweep_labelling_and_ordering(method):
    v = np.linspace(0.0, 10.0, 1001)
    sw = bicycle.eigenvalues(P, v, method=method)
    assert sw.values.shape == (1001, 4) and sw.speeds.shape == (1001,)
    osc = sw.oscillatory
    cs = bicycle.critical_speeds(P)
    np.testing.assert_array_equal(osc, v > cs.oscillation)
    # real capsize and castor, castor below capsize; weave conjugate with positive imaginary part first
    assert np.all(sw.capsize[osc].imag == 0) and np.all(sw.castor.real < sw.capsize.real)
    assert np.all(sw.weave[osc, 0].imag > 0) and np.all(sw.weave[osc, 0] == np.conj(sw.weave[osc, 1]))
    np.testing.assert_array_equal(sw.stable, (v > cs.weave) & (v < cs.capsize))
    # the continuous curves have no jumps (labelling is consistent along the sweep)
    jumps = np.abs(np.diff(sw.values.real, axis=0)).max()
    assert jumps < 0.5


# ---------------------------------------------------------------------------------------- hypothesis

def _random_bicycle(draw_vals):
    (w, c, lam, rR, rF, mR, mB, mH, mF, kR, kF, xB, zB, xH, zH, b1, b2, th_b, h1, h2, th_h,
     fR, fF, fB, fH) = draw_vals
    # body inertias from positive principal moments obeying the triangle inequality, rotated in x-z
    def body(p1, p2, th, f):
        # principal moments (p1, p2, yy) obeying the triangle inequality: |p1 - p2| < yy < p1 + p2
        yy = abs(p1 - p2) + f * 2.0 * min(p1, p2)
        cth, sth = math.cos(th), math.sin(th)
        xx = p1 * cth ** 2 + p2 * sth ** 2
        zz = p1 * sth ** 2 + p2 * cth ** 2
        xz = (p1 - p2) * sth * cth
        return xx, zz, xz, yy

    IBxx, IBzz, IBxz, IByy = body(b1, b2, th_b, fB)
    IHxx, IHzz, IHxz, IHyy = body(h1, h2, th_h, fH)
    IRxx = kR * mR * rR ** 2
    IFxx = kF * mF * rF ** 2
    return dict(w=w, c=c, lam=lam, g=9.81, rR=rR, mR=mR, IRxx=IRxx, IRyy=fR * 2 * IRxx,
                xB=xB * w, zB=-zB, mB=mB, IBxx=IBxx, IByy=IByy, IBzz=IBzz, IBxz=IBxz,
                xH=xH * w, zH=-zH, mH=mH, IHxx=IHxx, IHyy=IHyy, IHzz=IHzz, IHxz=IHxz,
                rF=rF, mF=mF, IFxx=IFxx, IFyy=fF * 2 * IFxx)


_f = st.floats
bicycles = st.tuples(
    _f(0.6, 1.6), _f(-0.1, 0.2), _f(-0.6, 0.6), _f(0.2, 0.5), _f(0.2, 0.5), _f(0.5, 5), _f(20, 110),
    _f(1, 8), _f(0.5, 5), _f(0.2, 0.6), _f(0.2, 0.6), _f(0.1, 0.7), _f(0.4, 1.3), _f(0.7, 1.1),
    _f(0.3, 1.0), _f(0.5, 12), _f(0.5, 12), _f(-1.5, 1.5), _f(0.01, 0.3), _f(0.01, 0.3), _f(-1.5, 1.5),
    _f(0.2, 1.0), _f(0.2, 1.0), _f(0.05, 0.95), _f(0.05, 0.95)).map(_random_bicycle)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(p=bicycles, v=_f(0.0, 12.0), k=_f(0.1, 20.0))
def test_random_bicycles_eigenvalues_are_roots_and_mass_scaling(p, v, k):
    """On random valid parameter sets: (i) each eigenvalue of the state matrix is a root of
    det(M s^2 + v C1 s + g K0 + v^2 K2) (eq. 6.5); (ii) scaling every mass and inertia by k leaves the
    eigenvalues unchanged and scales M, C1, K0, K2 by k (seed 003 §3a)."""
    bicycle.validate_parameters(p)
    M, C1, K0, K2 = bicycle.linear_matrices(p)
    ev = bicycle.eigenvalues(p, v).values[0]
    a = [float(x) for x in bicycle.characteristic_coefficients(p, v)]
    roots = np.roots(a)
    scale = max(1.0, np.abs(ev).max())
    for s in ev:
        D = M * s * s + v * C1 * s + p["g"] * K0 + v * v * K2
        # |det D| relative to the size of its terms
        size = (np.abs(M) * abs(s) ** 2 + np.abs(v * C1) * abs(s) + np.abs(p["g"] * K0 + v * v * K2)).max() ** 2
        assert abs(np.linalg.det(D)) <= 1e-9 * size
        assert np.min(np.abs(roots - s)) <= 1e-6 * scale
    # the compiled quartic solver and LAPACK on the state matrix give the same labelled spectrum
    lapack = bicycle.eigenvalues(p, v, method="eig").values[0]
    gap = min(abs(x - y) for i, x in enumerate(ev) for y in ev[i + 1:])
    if gap > 1e-4 * scale:                    # away from multiple roots (ill-conditioned for both)
        np.testing.assert_allclose(ev, lapack, rtol=0, atol=1e-9 * scale)
    heavy = {n: (x * k if n[0] in "mI" else x) for n, x in p.items()}
    for X, Y in zip(bicycle.linear_matrices(heavy), (M, C1, K0, K2)):
        np.testing.assert_allclose(X, k * Y, rtol=1e-12, atol=1e-12 * k * np.abs(Y).max())
    ev_heavy = bicycle.eigenvalues(heavy, v).values[0]
    np.testing.assert_allclose(np.sort_complex(ev_heavy), np.sort_complex(ev), rtol=1e-8, atol=1e-8 * scale)


@settings(max_examples=25, deadline=None)
@given(p=bicycles)
@example(p=_random_bicycle((0.8125, -0.046875, 0.265625, 0.5, 0.25, 1.0, 41.0, 7.0, 2.0, 0.5, 0.25, 0.28125, 1.0,
                            0.8125, 0.8125, 1.0, 6.0, -0.25, 0.25, 0.09375, 0.0, 1.0, 0.5, 0.5, 0.5)))
@example(p=_random_bicycle((0.625, 0.0, 0.5, 0.5, 0.5, 0.5, 20.0, 1.0, 1.0, 0.25, 0.25, 0.375, 1.25, 1.0, 1.0,
                            1.0, 1.0, 0.0, 0.25, 0.03125, -1.25, 0.5, 0.25, 0.5, 0.5)))
def test_random_bicycles_critical_speeds(p):
    """Where found, v_w makes the weave pair purely imaginary and v_c makes the capsize root zero. The example:
    the unstable oscillatory pair turns into a real pair ±r near v_c, so the weave's label jumps to the other
    complex pair between two grid speeds; the Hurwitz determinant vanishes there too (two roots summing to
    zero), which is not a weave crossing."""
    cs = bicycle.critical_speeds(p, v_max=30.0)
    if cs.capsize is not None:
        M, C1, K0, K2 = bicycle.linear_matrices(p)
        K = p["g"] * K0 + cs.capsize ** 2 * K2
        assert abs(np.linalg.det(K)) <= 1e-10 * np.abs(K).max() ** 2
    if cs.weave is not None:
        w = bicycle.eigenvalues(p, cs.weave).weave[0]
        assert abs(w[0].real) <= 1e-9 * max(1.0, abs(w[0]))
        assert cs.weave_frequency == pytest.approx(abs(w[0].imag), rel=1e-9)


# ---------------------------------------------------------------------------------------- validation, YAML

def test_validation_errors_name_the_parameter():
    cases = [
        (dict(mB=-1.0), "mB"), (dict(w=0.0), "'w'"), (dict(lam=2.0), "lam"), (dict(zB=0.3), "zB"),
        (dict(IRyy=0.2), "IRyy"), (dict(IFxx=-0.1), "IFxx"), (dict(IBxz=9.0), "IB"),
        (dict(IHyy=0.2), "IH"), (dict(rF=-0.35), "rF"),
    ]
    for change, name in cases:
        with pytest.raises(ModelError, match=name) as info:
            bicycle.validate_parameters(P.replace(**change))
        assert info.value.element and "parameter" in info.value.element
    d = dict(P)
    del d["IFyy"]
    with pytest.raises(ModelError, match="'IFyy' is missing"):
        bicycle.linear_matrices(d)
    with pytest.raises(ModelError, match="'mass'"):
        bicycle.linear_matrices({**dict(P), "mass": 3.0})
    with pytest.raises(ModelError, match="'c' must be a real number"):
        bicycle.linear_matrices({**dict(P), "c": "0.08"})
    with pytest.raises(ModelError, match="'g' must be finite"):
        bicycle.linear_matrices({**dict(P), "g": float("nan")})
    with pytest.raises(ModelError, match="unknown"):
        P.replace(lambda_=0.3)


def test_yaml_round_trip(tmp_path):
    path = tmp_path / "bench.yaml"
    bicycle.save_parameters(P, path)
    text = path.read_text()
    assert "lam: 0.3141592653589793" in text and "IHxz: -0.00756" in text
    assert bicycle.load_parameters(path) == P
    other = P.replace(c=0.05, mB=70.0)
    bicycle.save_parameters(other, path)
    assert bicycle.load_parameters(path) == other
    # a nested "bicycle:" mapping is accepted too
    import yaml
    (tmp_path / "nested.yaml").write_text(yaml.safe_dump({"bicycle": dict(P)}))
    assert bicycle.load_parameters(tmp_path / "nested.yaml") == P


@pytest.mark.parametrize("edit, name", [
    (lambda t: t.replace("mB: 85.0", "mB: heavy"), "mB"),
    (lambda t: t.replace("mB: 85.0", "mB: -85.0"), "mB"),
    (lambda t: "\n".join(line for line in t.splitlines() if not line.startswith("rF:")), "rF"),
    (lambda t: t + "\nwheelbase: 1.0\n", "wheelbase"),
    (lambda t: t.replace("IHxz: -0.00756", "IHxz: [1, 2]"), "IHxz"),
    (lambda t: t.replace("IBxz: 2.4", "IBxz: 24.0"), "IBxz"),
])
def test_malformed_yaml_gives_one_clear_error(tmp_path, edit, name):
    path = tmp_path / "bad.yaml"
    bicycle.save_parameters(P, path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(ModelError) as info:
        bicycle.load_parameters(path)
    msg = str(info.value)
    assert name in msg and str(path) in msg
    assert name in info.value.element


def test_yaml_syntax_error_and_non_mapping(tmp_path):
    bad = tmp_path / "syntax.yaml"
    bad.write_text("w: 1.02\nc: [0.08\n")
    with pytest.raises(ModelError, match="not valid YAML at line"):
        bicycle.load_parameters(bad)
    lst = tmp_path / "list.yaml"
    lst.write_text("- 1\n- 2\n")
    with pytest.raises(ModelError, match="mapping"):
        bicycle.load_parameters(lst)
    with pytest.raises(ModelError, match="cannot read"):
        bicycle.load_parameters(tmp_path / "missing.yaml")
    unsafe = tmp_path / "unsafe.yaml"
    unsafe.write_text("w: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ModelError):
        bicycle.load_parameters(unsafe)


# ---------------------------------------------------------------------------------------- forward, simulation

def test_forward_equation():
    """Eq. (5.2): (mT rR^2 + IRyy + (rR/rF)^2 IFyy) thetaR'' = T_thetaR, v = -rR thetaR'."""
    I = bicycle.forward_inertia(P)
    assert I == pytest.approx(94 * 0.09 + 0.12 + (0.3 / 0.35) ** 2 * 0.28, rel=1e-15)
    assert float(bicycle.forward_acceleration(P, -2.0)) == pytest.approx(0.6 / I, rel=1e-15)
    sim = bicycle.simulate_linear(P, 5.0, 2.0, x0=(0, 0, 0, 0), drive_torque=-2.0, n_out=11)
    np.testing.assert_allclose(sim.v, 5.0 + 0.6 / I * sim.t, rtol=1e-12)
    # thetaR' = -v / rR integrated
    np.testing.assert_allclose(sim.thetaR, -(5.0 * sim.t + 0.3 / I * sim.t ** 2) / 0.3, rtol=1e-9, atol=1e-12)
    assert np.all(sim.phi == 0) and np.all(sim.yP == 0)


def test_simulation_matches_matrix_exponential_and_reconstructs_path():
    from scipy.linalg import expm

    v = 4.6
    x0 = np.array([0.0, 0.0, 0.5, 0.0])          # seed 003 §8, Fig. 4 initial lateral rate
    sim = bicycle.simulate_linear(P, v, 5.0, x0=x0, n_out=101)
    A, _ = bicycle.state_matrices(P, v)
    for i in (10, 50, 100):
        exact = expm(A * sim.t[i]) @ x0
        np.testing.assert_allclose([sim.phi[i], sim.delta[i], sim.phidot[i], sim.deltadot[i]], exact,
                                   rtol=0, atol=1e-8)
    # stable speed: the lateral motion decays, the period is 2 pi / omega (notes §9: 1.62237 s)
    sw = bicycle.eigenvalues(P, v)
    assert 2 * math.pi / sw.weave[0, 0].imag == pytest.approx(1.6223707, abs=1e-6)
    first, last = np.abs(sim.phi[sim.t <= 1.0]).max(), np.abs(sim.phi[sim.t >= 4.0]).max()
    assert last < 0.5 * first and sw.stable[0]          # self-stable at 4.6 m/s (vw < 4.6 < vc)
    # yaw from (B.6): psi(t) = cos(lam)/w (v int delta dt + c (delta(t) - delta(0)))
    from scipy.integrate import cumulative_trapezoid
    fine = bicycle.simulate_linear(P, v, 5.0, x0=x0, n_out=20001)
    # the trapezoidal rule's error on the 0.00025 s grid, dt²/12 (δ̇(t) − δ̇(0)) (Euler–Maclaurin; up to 1e-8 in ψ),
    # is taken off; what remains is O(dt⁴) and the two integrations' errors (rtol 1e-10 on values <= 1): 1e-9
    k = math.cos(P.lam) / P.w
    dt = fine.t[1] - fine.t[0]
    psi = k * (v * cumulative_trapezoid(fine.delta, fine.t, initial=0) + P.c * fine.delta)
    psi -= k * v * dt ** 2 / 12 * (fine.deltadot - fine.deltadot[0])
    np.testing.assert_allclose(fine.psi, psi, rtol=0, atol=1e-9)
    # rear contact: speed along the path equals v; heading follows psi (B.8)
    dx, dy = np.gradient(fine.xP, fine.t), np.gradient(fine.yP, fine.t)
    np.testing.assert_allclose(np.hypot(dx, dy)[1:-1], v, rtol=1e-6)
    np.testing.assert_allclose(np.arctan2(dy, dx)[1:-1], fine.psi[1:-1], rtol=0, atol=1e-6)


def test_simulation_straight_line_with_initial_heading():
    sim = bicycle.simulate_linear(P, 3.0, 2.0, x0=(0, 0, 0, 0), psi0=0.4, n_out=5)
    np.testing.assert_array_equal(sim.psi, 0.4)          # δ ≡ 0: the heading never changes
    np.testing.assert_allclose(sim.xP, 3.0 * sim.t * math.cos(0.4), rtol=1e-10)
    np.testing.assert_allclose(sim.yP, 3.0 * sim.t * math.sin(0.4), rtol=1e-10)


def test_steer_torque_input_enters_through_M_inverse():
    """A constant steer torque: the steady state of (5.3) at constant speed is K(v) q = f."""
    v = 5.0
    sim = bicycle.simulate_linear(P, v, 90.0, x0=(0, 0, 0, 0), steer_torque=0.1, n_out=3)   # capsize root -0.32/s
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    q_ss = np.linalg.solve(P.g * K0 + v * v * K2, [0.0, 0.1])
    np.testing.assert_allclose([sim.phi[-1], sim.delta[-1]], q_ss, rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------------------------------- plots

def test_eigenvalue_plot_png(tmp_path):
    import matplotlib.image as mpimg

    path = tmp_path / "eig.png"
    assert plot_eigenvalues(P, path, dpi=80) == path
    img = mpimg.imread(path)
    assert img.shape[:2] == (400, 560)           # 7 x 5 inches at 80 dpi
    assert img.std() > 0.05                      # not blank


def test_time_history_plot_png(tmp_path):
    import matplotlib.image as mpimg

    sim = bicycle.simulate_linear(P, 4.6, 5.0, n_out=201)
    path = tmp_path / "history.png"
    plot_time_history(sim, path, dpi=60)
    img = mpimg.imread(path)
    assert img.shape[:2] == (390, 420)
    assert img.std() > 0.05


def test_bench_function_smoke():
    """The benchmark entry point runs and reports consistent numbers (timings are printed by `multibody bench`)."""
    from multibody.bench.bicycle import bench_bicycle

    r = bench_bicycle(n_speeds=200, repeats=1, peer=False, verbose=False)
    assert r["n_speeds"] == 200 and r["quartic_best_s"] > 0 and r["max_abs_difference"] < 1e-6
    assert abs(r["weave_speed"] - V_W) < 1e-12


def test_weave_mode_shape():
    """Notes §8.2 ([derived] linear eigenvectors): at 4.6 m/s delta/phi = 1.2012 - 0.3196 i (|.| = 1.243,
    steer lagging lean by 14.9 deg); at 5 m/s |delta/phi| = 1.298 with a 10.0 deg lag."""
    sw, r = bicycle.mode_shapes(P, [4.6, 5.0])
    w = r[:, 0]
    # to the printed 4 decimals, each of the real and imaginary parts
    assert abs(w[0].real - 1.2012) <= 5e-5 and abs(w[0].imag + 0.3196) <= 5e-5, w[0]
    assert abs(w[0]) == pytest.approx(1.243, abs=5e-4) and -np.degrees(np.angle(w[0])) == pytest.approx(14.9, abs=0.05)
    assert abs(w[1]) == pytest.approx(1.298, abs=5e-4) and -np.degrees(np.angle(w[1])) == pytest.approx(10.0, abs=0.05)
    # every column is a null vector of (M s^2 + v C1 s + g K0 + v^2 K2)
    M, C1, K0, K2 = bicycle.linear_matrices(P)
    for i, v in enumerate(sw.speeds):
        for k in range(4):
            s = sw.values[i, k]
            D = M * s * s + v * C1 * s + P.g * K0 + v * v * K2
            res = D @ np.array([1.0, r[i, k]])
            assert np.abs(res).max() < 1e-10 * np.abs(D).max()
