"""The six industrial-robot manipulators of Telegin (2024), seed 004 §2, Figs. 1–6 (reference notes
seed002-004.md §B.8–B.9), built with the public ``ModelBuilder``.

| function | example | joints (base to tip) | N |
|---|---|---|---|
| :func:`polar` | 1, polar, vertical plane | R(z), P(x) | 2 |
| :func:`cartesian` | 2, Cartesian, vertical plane | P(y), P(x), R(z) | 3 |
| :func:`cylindrical3` | 3, cylindrical | R(y), P(x), P(−y) | 3 |
| :func:`cylindrical4` | 4, cylindrical | R(y), P(y), P(x), R(z) | 4 |
| :func:`angular` | 5, angular (anthropomorphic) | R(y), R(z), R(z) | 3 |
| :func:`universal` | 6, universal with a Cartesian base | P(z), P(x), R(y), P(−y), R(z), R(y) | 6 |

Conventions of the paper (§B.8): at q = 0 every body frame is parallel to the ground frame, Ox horizontal to
the right, **Oy vertical, up** (gravity ``(0, −g, 0)``), Oz toward the viewer. Body i's frame has its origin
at the *pole* O_i of the body (the joint that carries it) and is principal for the body, with two equal
moments of inertia. The parameters are named as in the paper:

* ``m0i`` the mass of body i (the paper's m_i is the mass of the *subsystem* i, i+1, …, N);
* ``ai = m0i |O_i C_i|`` the static moment of body i (its centre of mass C_i lies on the axis of symmetry
  of the body, on the side the paper draws);
* ``Iix``, ``Iiy``, ``Iiz`` the moments of inertia about the axes of frame i **through the pole** O_i; the
  two equal moments are one parameter (``Iiz`` is ``Iix`` for a body symmetric about its y axis, ``Iiy`` for
  a body symmetric about its x axis), so only independent names appear in :data:`DEFAULTS`;
* ``L = |O_2 O_3|`` (Example 5), ``g`` the gravity.

Each function takes ``symbolic=False`` (numbers from :data:`DEFAULTS`) or ``symbolic=True`` (sympy symbols of
these names, positive); keyword arguments override single parameters (numbers or expressions). The
geometry where the scan of the paper is illegible follows the reconstruction of the notes (marked [R]
there), checked by reproducing every printed mass-matrix element (``tests/test_symbolic.py``).

Example
-------
>>> from multibody.systems import manipulators
>>> model = manipulators.polar()
>>> model.nq, model.coordinate_names()
(2, ['q1.angle', 'q2.displacement'])
"""
import numpy as np

from multibody.model import ModelBuilder, Placement, Prismatic, Revolute

__all__ = ["DEFAULTS", "SYSTEMS", "parameters", "polar", "cartesian", "cylindrical3", "cylindrical4", "angular",
           "universal"]

#: default numeric parameters of each example (SI units); moments of inertia about the poles
DEFAULTS = {
    "polar": dict(m01=8.0, a1=2.4, I1x=0.05, I1y=1.2, m02=3.0, I2x=0.02, I2y=0.3, g=9.81),
    "cartesian": dict(m01=20.0, I1x=1.0, I1y=1.5, m02=10.0, I2x=0.4, I2y=0.6, m03=4.0, a3=1.2, I3x=0.02,
                      I3y=0.5, g=9.81),
    "cylindrical3": dict(m01=15.0, a1=3.0, I1x=1.6, I1y=0.4, m02=6.0, a2=0.9, I2x=0.03, I2y=0.7, m03=2.0,
                         a3=0.3, I3x=0.1, I3y=0.01, g=9.81),
    "cylindrical4": dict(m01=15.0, a1=3.0, I1x=1.6, I1y=0.4, m02=8.0, a2=1.2, I2x=0.5, I2y=0.2, m03=5.0,
                         a3=0.8, I3x=0.02, I3y=0.6, m04=2.0, a4=0.4, I4x=0.005, I4y=0.12, g=9.81),
    "angular": dict(m01=12.0, a1=2.4, I1x=0.9, I1y=0.3, m02=6.0, a2=1.8, I2x=0.8, I2y=0.02, m03=3.0, a3=0.75,
                    I3x=0.3, I3y=0.01, L=0.6, g=9.81),
    "universal": dict(m01=25.0, I1x=2.0, I1y=3.0, m02=15.0, I2x=1.0, I2y=1.5, m03=8.0, a3=0.8, I3x=0.5,
                      I3y=0.2, m04=5.0, a4=1.0, I4x=0.6, I4y=0.05, m05=2.0, a5=0.3, I5x=0.08, I5y=0.01,
                      m06=1.0, a6=0.25, I6x=0.09, I6y=0.004, g=9.81),
}


def parameters(system, symbolic=False, **values):
    """The parameters of ``system`` (a key of :data:`DEFAULTS`): numbers, or sympy symbols of the same names
    (positive) when ``symbolic``; ``values`` override single entries."""
    names = DEFAULTS[system]
    if symbolic:
        import sympy as sp

        out = {k: sp.Symbol(k) for k in names}
    else:
        out = dict(names)
    out.update(values)
    return out


def _rigid_body(b, name, m, moments, static_moment=0, axis=(0, 0, 0)):
    """Add body ``name`` whose centre of mass lies on the unit ``axis`` of its frame at ``static_moment / m``
    from the pole, with principal ``moments`` (x, y, z) **about the pole**: the builder takes the inertia
    about the centre of mass, ``I_pole − (a²/m)(E − e eᵀ)`` (parallel-axis theorem)."""
    e = np.asarray(axis, dtype=int)
    c = [static_moment * k / m for k in e]
    shift = [static_moment * static_moment / m * (1 - k * k) for k in e]
    b.add_body(name, mass=m, com=c, inertia=[moments[k] - shift[k] for k in range(3)])


X, Y, Z, DOWN, BACK = (1, 0, 0), (0, 1, 0), (0, 0, 1), (0, -1, 0), (-1, 0, 0)


def _chain(system, name, symbolic, values, links):
    """The serial chain ``system`` of the paper: link i is ``(joint, symmetry, com, pole)`` — the joint
    ``qi`` carrying ``bodyi`` from the previous body, the body's axis of symmetry (``"x"``: I_z = I_y,
    ``"y"``: I_z = I_x), the direction of its centre of mass from the pole (None: at the pole; else at
    distance ``ai / m0i``) and the pole in the previous body's frame as a function of the parameters (None:
    at the previous pole)."""
    p = parameters(system, symbolic, **values)
    b = ModelBuilder(gravity=(0, -p["g"], 0), name=name)
    parent = "ground"
    for i, (joint, symmetry, com, pole) in enumerate(links, start=1):
        Ix, Iy = p[f"I{i}x"], p[f"I{i}y"]
        moments = (Ix, Iy, Ix) if symmetry == "y" else (Ix, Iy, Iy)
        _rigid_body(b, f"body{i}", p[f"m0{i}"], moments, p[f"a{i}"] if com else 0, com or (0, 0, 0))
        b.add_joint(f"q{i}", joint, parent=parent, child=f"body{i}",
                    placement=Placement(translation=pole(p) if pole else (0, 0, 0)))
        parent = f"body{i}"
    return b.build()


def polar(symbolic=False, **values):
    """Example 1 (Fig. 1): polar manipulator in a vertical plane. Body 1 turns about z (q1), body 2 slides
    along x1 (q2 = |O1O2|). Bodies symmetric about their x axes; C1 on x1 (a1), C2 at O2 ([R]: H11 has no
    term linear in q2). H = diag(I1z + I2z + m02 q2², m02)."""
    return _chain("polar", "polar manipulator", symbolic, values,
                  [(Revolute(Z), "x", X, None), (Prismatic(X), "x", None, None)])


def cartesian(symbolic=False, **values):
    """Example 2 (Fig. 2): Cartesian manipulator in a vertical plane. Body 1 slides along y (q1), body 2 along
    x (q2), body 3 turns about z (q3), C3 on x3 (a3). H31 = a3 c3, H32 = −a3 s3."""
    return _chain("cartesian", "Cartesian manipulator", symbolic, values,
                  [(Prismatic(Y), "x", None, None), (Prismatic(X), "x", None, None), (Revolute(Z), "x", X, None)])


def cylindrical3(symbolic=False, **values):
    """Example 3 (Fig. 3): cylindrical manipulator, N = 3. Body 1 turns about the vertical y (q1), body 2
    slides radially along x (q2 = |O1O2|) with C2 behind O2 ([R]: the −2 a2 q2 term), body 3 slides down
    (−y, q3 = |O2O3|). H = diag(I1y + I2y + I3y + m2 q2² − 2 a2 q2, m2, m3)."""
    return _chain("cylindrical3", "cylindrical manipulator (N = 3)", symbolic, values,
                  [(Revolute(Y), "y", Y, None), (Prismatic(X), "x", BACK, None), (Prismatic(DOWN), "y", Y, None)])


def cylindrical4(symbolic=False, **values):
    """Example 4 (Fig. 4): cylindrical manipulator, N = 4. Body 1 turns about the vertical y (q1), body 2
    slides up (q2), body 3 slides radially along x (q3) with C3 behind O3, body 4 turns about z4 (q4) at
    O4 = O3 with C4 on +x4 ([R]). H11 = I1y + I2y + I3y + I4y c4² + I4x s4² + m3 q3² − 2 a3 q3 + 2 a4 q3 c4,
    H42 = a4 c4, H43 = −a4 s4."""
    return _chain("cylindrical4", "cylindrical manipulator (N = 4)", symbolic, values,
                  [(Revolute(Y), "y", Y, None), (Prismatic(Y), "y", Y, None), (Prismatic(X), "x", BACK, None),
                   (Revolute(Z), "x", X, None)])


def angular(symbolic=False, **values):
    """Example 5 (Fig. 5): angular (anthropomorphic) manipulator. Body 1 turns about the vertical y (q1),
    bodies 2 and 3 about horizontal z axes (q2 at O2 = O1 = O, q3 at O3 = O2 + L y2); the links stand
    vertical at q = 0 with C_i on y_i ([R]). H22 = I2z + I3z + m3 L² + 2 L a3 c3, H32 = I3z + L a3 c3."""
    return _chain("angular", "angular manipulator", symbolic, values,
                  [(Revolute(Y), "y", Y, None), (Revolute(Z), "y", Y, None),
                   (Revolute(Z), "y", Y, lambda p: (0, p["L"], 0))])


def universal(symbolic=False, **values):
    """Example 6 (Fig. 6): universal manipulator with a Cartesian base, N = 6. Body 1 slides along z (q1),
    body 2 along x (q2), body 3 turns about the vertical y (q3), body 4 slides down (−y, q4), body 5 turns
    about the horizontal z5 (q5), body 6 spins about its symmetry axis y6 (q6); O3, O4, O5 = O6 on the
    vertical axis of body 3, C5 and C6 hang below O5 ([R]). With a = a5 + a6, A = I3y + I4y + I5x + I6x,
    B = I5x − I5y + I6x − I6y: H33 = A − B c5², H31 = −a c3 s5, H32 = −a s3 s5, H51 = −a s3 c5,
    H52 = a c3 c5, H54 = −a s5, H63 = I6y c5."""
    return _chain("universal", "universal manipulator", symbolic, values,
                  [(Prismatic(Z), "y", None, None), (Prismatic(X), "y", None, None), (Revolute(Y), "y", Y, None),
                   (Prismatic(DOWN), "y", Y, None), (Revolute(Z), "y", DOWN, None), (Revolute(Y), "y", DOWN, None)])


#: name -> function, in the order of the paper
SYSTEMS = {"polar": polar, "cartesian": cartesian, "cylindrical3": cylindrical3, "cylindrical4": cylindrical4,
           "angular": angular, "universal": universal}
