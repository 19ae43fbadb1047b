"""The heavy hoop on a curved profile written by hand in the seed's own variables and equations (seed 000, Sec. 3–4):
the independent reference for the library's hoop, which is a builder model (a body on a planar joint with a
``RollingOnProfile`` constraint) run through the generic ``stabilized`` formulation.

State ``X = [x, z, θ, ẋ, ż, θ̇, α]`` (centre, rotation angle counter-clockwise, velocities, and the angle α
from the x axis to the vector centre → contact point, −π < α < 0); unknown "reactions"
``N = [R_x, R_z, Q, U]`` with ``α̇ = U`` (eq. 3.6). Equations of motion (eq. 3.1):

    M ẍ = R_x,   M z̈ = −M g + R_z,   J θ̈ = Q,   J = M r²,

and four constraints (the contact point ``x_a = x + r cos α``, ``z_a = z + r sin α``):

    f1 = h(x_a, z_a)                                       contact          (eq. 3.2)
    f2 = M(ẋ² + ż²)/2 + M r² θ̇²/2 + M g z − E0             energy           (eq. 3.3)
    f3 = −ẋ sin α + ż cos α + r θ̇                          no slip          (eq. 3.4)
    f4 = h'_x(x_a, z_a) sin α − h'_z(x_a, z_a) cos α        tangency         (eq. 3.5)

The relative degrees (2, 1, 1, 1), ``A(X)`` and ``φ(X, λ)`` (eqs. 3.7–3.11) are derived automatically by
:func:`multibody.symbolic.dae.derive` from these expressions.

Profile orientation. The seed's formulas use ``(η, μ) = ‖∇h‖`` on the manifold, i.e. ``∇h`` points from
the hoop's centre towards the contact (downwards, ``h'_z < 0``). A user profile ``h(x, z)`` of either
sign is accepted and multiplied by −1 when ``h'_z > 0``. The paper's profile is
``z = x⁴ + a x³ − b x² − a x − (1 − b)``, a = 0.13, b = 0.5, with M = 1, r = 0.01 (seed 000, Sec. 4).

Turning points. On the manifold ``det A = −2 d ‖∇h‖ θ̇`` (seed 000, Sec. 3): ``A`` is singular exactly
where the hoop stops (θ̇ = 0). :func:`solve_hoop` eliminates ``U`` and ``Q`` and splits the remaining
2 × 2 solve into the part that stays finite on the manifold (its limit at θ̇ = 0 is the seed's
``R*_x, R*_z, Q*, U* = 0``) and a part proportional to the residuals divided by ``s ≈ 2 r θ̇``, which is
regularized as ``s/(s² + ε²)`` (``ε`` = ``eps_turn``, a speed, default :data:`EPS_TURN`). The reactions
are therefore continuous and bounded through the turning points and exactly the seed's solution for
``|s| ≫ ε``. The price: inside the window ``|s| < ε`` the residual-driven part of the energy row is damped, so
with λ = 0 the energy residual f2 is no longer an exact constant but changes by about ``π ε |E|/|ṡ|`` per
turning point (|E| ~ the residuals); ``eps_turn = 0`` gives the plain closed form of eq. (2.9).

Solvers. ``solver="hoop"`` (default) is :func:`solve_hoop`; ``solver="exact"`` is
:func:`multibody.kernels.stabilization.solve_exact`, the seed's plain ``N = −A⁻¹φ`` of eq. (2.3)/(2.9)
without any regularization (what the seed's closed-form substitution computes), kept to reproduce Sec. 4;
``solver="dls"`` the generic damped least squares.

Why λ = 0 fails (seed 000, Sec. 2 and Sec. 4, Fig. 4). With λ = 0 the residuals obey eq. (2.2):
``f̈1 = 0``, ``ḟ2 = ḟ3 = ḟ4 = 0`` (A and φ are exact), so ``f1(t) = f1(0) + ḟ1(0) t`` up to the term
``−r f4 (α − α(0))`` dropped from ``ḟ1`` (see :func:`multibody.symbolic.dae.derive`). The seed's bound on the
initial errors, ``max_i |δ_i(0)| < 1e-6``, concerns ``f1..f4`` only, not ``ḟ1 = (η, v)`` (≈ ‖∇h‖ times the
centre's velocity along the normal): a normal velocity ``n`` changes the energy f2 by only ``M n²/2``, so
``n = 1e-3`` keeps every ``|f_i(0)| ≤ 5e-7`` while ``f1`` grows by ``‖∇h‖ n`` per time unit, 1.4e-2 (more than the
radius r) after two passes back and forth. With such an error the exact solve also fails at the first turning
point: the residual part ``E/s`` of the tangential reaction does not vanish there (E ∝ n) and, for a normal
velocity into the profile, repels ``s ≈ 2 r θ̇`` from 0 — the hoop never rolls back but hovers (``R = (0, M g)``)
at the top of its swing, drifting horizontally at ≈ 0.85 n (measured with RK2 h = 1e-5 and with DOP853
rtol 1e-10, n = 1e-3); for a normal velocity away from the profile it attracts, and N blows up in finite time at
θ̇ = 0 (DOP853 stops there). An accurate integration of the plain equations does not pass the first turning
point for n down to 1e-6 either, but RK2 with h = 1e-5 jumps across it when n ≲ 1e-5 or n < 0 (with a kick:
f2 jumps by 1.4e-5 for n = −1e-3): errors of 1e-6 in ``ḟ1`` as well as in the f_i give only ``|f1| ≈ 6e-6`` after
two passes, with the exact solve and with :func:`solve_hoop` alike — the turning-point regularization does not
hide the seed's failure. λ > 0 removes every error like ``exp(−λ t)``; with the exact
solve and λ = 1e3 the residual part has decayed long before the first turning point.
"""
import math

import numpy as np
import sympy as sp
from numba import njit

from multibody.errors import ConstraintError, ModelError

#: parameters of seed 000, Sec. 4
PAPER = {"a": 0.13, "b": 0.5, "M": 1.0, "r": 0.01, "g": 9.81}

#: regularization speed of the turning-point solve (see :func:`solve_hoop`): the residual-driven part of the
#: tangential reaction is multiplied by s²/(s² + ε²), s ≈ 2 r θ̇ (the centre's speed times 2). With
#: RK2, h = 1e-5 and λ = 1e3 its largest kick per step is h |E|/(2ε) with |E| ≈ λ |f| ≈ 1e-6, i.e. below
#: 1e-9 for ε = 1e-2; the window |s| < ε lasts a few milliseconds per turning point.
EPS_TURN = 1e-2

STATE_NAMES = ("x", "z", "theta", "xdot", "zdot", "thetadot", "alpha")
REACTION_NAMES = ("R_x", "R_z", "Q", "U")
CONSTRAINT_NAMES = ("f1", "f2", "f3", "f4")


@njit
def solve_hoop(A, phi, x, sparams, N):
    """``A N = −φ`` for the hoop (seed 000, eqs. 3.11, 2.9), continuous through the turning points θ̇ = 0.

    Structure of ``A`` (rows f̈1, ḟ2, ḟ3, ḟ4; columns R_x, R_z, Q, U): ``A[0, 2] = A[1, 3] = 0``,
    ``A[3, :3] = 0``. Steps: ``U = −φ4/d`` (d = A[3, 3] > 0 for an admissible profile); ``Q`` from row 3;
    row 2 minus ``m`` times row 3 (``m = θ̇ / A[2, 2] = M r θ̇``) leaves ``w · R = b2 − m b3`` with
    ``w = v − r θ̇ χ``, which tends to ``w0 = −2 r θ̇ χ`` on the manifold (``v = −r θ̇ χ``). With
    ``R = a η̂ + c t̂`` (``a`` from row 1) the tangential part is

        c = P/(2k) + (E − e_t P/(2k)) / s,    s = w · t̂,  k = χ · t̂ (= ±1/M),

    where ``P = b3 − 2 a χ·η̂`` stays finite and ``E = b2 − a e·η̂``, ``e_t = e·t̂`` (``e = w − w0``) vanish
    on the manifold. The limit at θ̇ = 0 on the manifold is ``c = P/(2k)``, which gives the seed's
    ``R*_x, R*_z, Q*`` (Sec. 3). The residual part is regularized, ``1/s → s/(s² + ε²)`` with
    ``ε = sparams[0]``; ``ε = 0`` gives the plain closed-form solution of eq. (2.9) (NaN where it has none,
    ``s = 0`` with a nonzero residual part).
    """
    eps = sparams[0]
    # row 4: d U = -phi4
    U = -phi[3] / A[3, 3]
    b1 = -phi[0] - A[0, 3] * U
    b2 = -phi[1] - A[1, 3] * U
    b3 = -phi[2] - A[2, 3] * U
    # row 1: eta . R = b1
    ex = A[0, 0]
    ez = A[0, 1]
    ne = math.sqrt(ex * ex + ez * ez)
    ehx = ex / ne
    ehz = ez / ne
    thx = -ehz  # t^ = eta^ rotated by +90 degrees
    thz = ehx
    a = b1 / ne
    # row 3: chi_row . R + A22 Q = b3
    cx = A[2, 0]
    cz = A[2, 1]
    mm = A[1, 2] / A[2, 2]
    wx = A[1, 0] - mm * cx
    wz = A[1, 1] - mm * cz
    w0x = -2.0 * mm * cx
    w0z = -2.0 * mm * cz
    edx = wx - w0x
    edz = wz - w0z
    k = cx * thx + cz * thz
    s = wx * thx + wz * thz
    P = b3 - 2.0 * a * (cx * ehx + cz * ehz)
    E = b2 - a * (edx * ehx + edz * ehz)
    et = edx * thx + edz * thz
    c0 = P / (2.0 * k)
    num = E - et * c0
    if eps > 0.0:
        c = c0 + num * s / (s * s + eps * eps)
    elif s != 0.0:
        c = c0 + num / s
    elif num == 0.0:
        c = c0
    else:  # the plain equations have no solution here
        c = math.nan
    Rx = a * ehx + c * thx
    Rz = a * ehz + c * thz
    N[0] = Rx
    N[1] = Rz
    N[2] = (b3 - cx * Rx - cz * Rz) / A[2, 2]
    N[3] = U


def paper_profile(a=PAPER["a"], b=PAPER["b"]):
    """``(h, (X, Z))``: the seed's profile ``z = x⁴ + a x³ − b x² − a x − (1 − b)`` as ``h(X, Z) = 0``,
    oriented with ``h'_z < 0`` (seed 000, Sec. 4)."""
    X, Z = sp.symbols("X Z")
    return X**4 + a * X**3 - b * X**2 - a * X - (1 - b) - Z, (X, Z)


def hoop_equations(h=None, profile_symbols=None):
    """Eqs. (3.1)–(3.6) of seed 000 for the profile ``h(X, Z) = 0`` (default: the paper's profile):
    ``(states, reactions, params, F, B, constraints)`` with params ``(M, r, g, E0)``."""
    if h is None:
        h, profile_symbols = paper_profile()
    PX, PZ = profile_symbols
    x, z, th, xd, zd, thd, al = sp.symbols("x z theta xdot zdot thetadot alpha")
    Rx, Rz, Q, U = sp.symbols("R_x R_z Q U")
    M, r, g, E0 = sp.symbols("M r g E0", positive=True)
    xa, za = x + r * sp.cos(al), z + r * sp.sin(al)
    hx, hz = sp.diff(h, PX), sp.diff(h, PZ)
    at = {PX: xa, PZ: za}
    f1 = h.xreplace(at)
    f2 = M * (xd**2 + zd**2) / 2 + M * r**2 * thd**2 / 2 + M * g * z - E0
    f3 = -xd * sp.sin(al) + zd * sp.cos(al) + r * thd
    f4 = hx.xreplace(at) * sp.sin(al) - hz.xreplace(at) * sp.cos(al)
    F = [xd, zd, thd, 0, -g, 0, 0]
    B = sp.zeros(7, 4)
    B[3, 0] = 1 / M
    B[4, 1] = 1 / M
    B[5, 2] = 1 / (M * r**2)
    B[6, 3] = 1
    return ((x, z, th, xd, zd, thd, al), (Rx, Rz, Q, U), (M, r, g, E0), F, B, [f1, f2, f3, f4])


class HoopOnProfile:
    """The hoop of seed 000 (Sec. 3) on a profile ``h(X, Z) = 0``.

    Parameters
    ----------
    h : sympy expression in the two symbols ``profile_symbols`` (default: the paper's profile).
    M, r, g : mass, radius, gravity.
    x_range : abscissas of the contact point over which admissibility is checked (``h'_z ≠ 0`` and the
        radius of curvature ``ρ > r`` where the profile curves towards the hoop; seed 000, Sec. 3).
    eps_turn : regularization speed of :func:`solve_hoop` (default :data:`EPS_TURN`).

    ``simulate``, ``reactions`` and ``params`` take ``solver``: ``"hoop"`` (default, :func:`solve_hoop`),
    ``"exact"`` (the seed's plain eq. 2.3, no regularization — reproduction of Sec. 4, Fig. 4 only) or
    ``"dls"``; the compiled system of each is built on first use.

    >>> hoop = HoopOnProfile()
    >>> X0 = hoop.initial_state(x_contact=-0.9, speed=0.0)
    >>> res = hoop.simulate(X0, t_end=0.01, lam=1e3, method="rk2", h=1e-5)
    """

    def __init__(self, h=None, profile_symbols=None, M=PAPER["M"], r=PAPER["r"], g=PAPER["g"],
                 x_range=(-1.2, 1.2), eps_turn=EPS_TURN, cache_dir=None):
        if h is None:
            h, profile_symbols = paper_profile()
        elif profile_symbols is None:
            raise ModelError("a user profile h needs its two symbols profile_symbols=(X, Z)", element="profile")
        self.X, self.Z = profile_symbols
        h = sp.sympify(h)
        extra = h.free_symbols - {self.X, self.Z}
        if extra:
            raise ModelError(f"profile h depends on {sorted(map(str, extra))}; only {self.X}, {self.Z} allowed",
                             element="profile")
        for name, val in (("M", M), ("r", r), ("g", g)):
            if not (np.isfinite(val) and val > 0):
                raise ModelError(f"hoop parameter {name} must be positive and finite, got {val}",
                                 element=f"hoop.{name}")
        self.M, self.r, self.g = float(M), float(r), float(g)
        self.eps_turn = float(eps_turn)
        self._h_num = sp.lambdify((self.X, self.Z), [h, sp.diff(h, self.X), sp.diff(h, self.Z)], "math")
        # orientation: grad h must point from the centre to the contact (downwards)
        x_mid = 0.5 * (x_range[0] + x_range[1])
        z_mid = self._solve_z(x_mid, h_num=self._h_num)
        if self._h_num(x_mid, z_mid)[2] > 0:
            h = -h
        self.h = h
        hx, hz = sp.diff(h, self.X), sp.diff(h, self.Z)
        self._h_num = sp.lambdify((self.X, self.Z), [h, hx, hz], "math")
        self._h2_num = sp.lambdify((self.X, self.Z), [sp.diff(hx, self.X), sp.diff(hx, self.Z),
                                                      sp.diff(hz, self.Z)], "math")
        self.x_range = tuple(map(float, x_range))
        self.check_admissible()
        self._build(cache_dir)

    # ------------------------------------------------------------------------------------------------
    # profile geometry
    def _solve_z(self, xa, h_num=None, z0=None):
        """The profile height at abscissa ``xa``: the root of ``h(xa, z) = 0`` (``h'_z ≠ 0``)."""
        h_num = h_num or self._h_num
        z = 0.0 if z0 is None else z0
        for _ in range(100):
            hv, _hx, hz = h_num(xa, z)
            if hz == 0:
                raise ModelError(f"h'_z = 0 at ({xa}, {z}): the profile must not have vertical parts "
                                 f"(seed 000, Sec. 3)", element="profile")
            dz = -hv / hz
            z += dz
            if abs(dz) < 1e-15 * max(1.0, abs(z)):
                return z
        hv = h_num(xa, z)[0]
        if abs(hv) > 1e-12:
            raise ModelError(f"no profile point found above abscissa {xa} (h(x, z) = 0 has no root in z)",
                             element="profile")
        return z

    def profile_z(self, xa):
        """Heights ``z`` of the profile at the abscissas ``xa`` (array)."""
        xa = np.atleast_1d(np.asarray(xa, dtype=float))
        out = np.empty_like(xa)
        z = None
        for k, xv in enumerate(xa):
            z = self._solve_z(float(xv), z0=z)
            out[k] = z
        return out

    def curvature_radius(self, xa, za):
        """Signed ρ = ‖∇h‖³ / (τ, H2 τ) (seed 000, Sec. 3); > 0 where the profile curves towards the hoop."""
        _h, hx, hz = self._h_num(xa, za)
        hxx, hxz, hzz = self._h2_num(xa, za)
        tx, tz = -hz, hx
        q = tx * tx * hxx + 2 * tx * tz * hxz + tz * tz * hzz
        n3 = (hx * hx + hz * hz) ** 1.5
        return n3 / q if q != 0 else math.inf

    def check_admissible(self, npts=4001):
        """Raise ``ModelError`` unless ``h'_z ≠ 0`` and ``r < ρ`` (where ρ > 0) over ``x_range`` (seed 000, Sec. 3)."""
        xs = np.linspace(self.x_range[0], self.x_range[1], npts)
        zs = self.profile_z(xs)
        worst = math.inf
        for xv, zv in zip(xs, zs):
            _h, hx, hz = self._h_num(xv, zv)
            if not (hz < 0):
                raise ModelError(f"profile has h'_z = {hz:.3g} at x = {xv:.6g}: it must not be vertical and keep one "
                                 f"orientation (seed 000, Sec. 3)", element="profile")
            rho = self.curvature_radius(xv, zv)
            if 0 < rho <= self.r:
                raise ModelError(f"profile is not admissible for a hoop of radius r = {self.r:g}: its radius of "
                                 f"curvature is rho = {rho:.6g} <= r at x = {xv:.6g}, z = {zv:.6g} (seed 000, Sec. 3 "
                                 f"requires r < rho)", element="profile")
            if rho > 0:
                worst = min(worst, rho)
        self.min_curvature_radius = worst
        return worst

    # ------------------------------------------------------------------------------------------------
    def symbolic(self):
        """The symbols and expressions of eqs. (3.1)–(3.6), see :func:`hoop_equations`."""
        return hoop_equations(self.h, (self.X, self.Z))

    def _build(self, cache_dir):
        from multibody.formulations.stabilized_dae import StabilizedSystem
        from multibody.symbolic.dae import derive

        states, reactions, params, F, B, fs = self.symbolic()
        # consistent test points of one energy level E0 (the manifold depends on E0)
        xas = np.linspace(self.x_range[0], self.x_range[1], 7)[1:-1]
        zc = [self._consistent(xa, 0.0)[0][1] for xa in xas]
        E0 = self.M * self.g * max(zc) + self.M * 1.0
        keep = []
        for xa, zcv in zip(xas, zc):
            v = math.sqrt((E0 - self.M * self.g * zcv) / self.M)
            for sgn in (1.0, -1.0):
                keep.append(self._consistent(xa, sgn * v)[0])
        self.dae = derive(states, reactions, F, B, fs, params=params,
                          param_values=[self.M, self.r, self.g, E0], names=CONSTRAINT_NAMES,
                          manifold_points=keep)
        A = self.dae.A
        if not (A[0, 2] == 0 and A[1, 3] == 0 and A[3, 0] == 0 and A[3, 1] == 0 and A[3, 2] == 0):
            raise ModelError("unexpected structure of A(X) for the hoop (seed 000, eq. 3.11)", element="A")
        self.system = StabilizedSystem(self.dae, solver=("reference_hoop", "solve_hoop"),
                                       solver_params=[self.eps_turn], cache_dir=cache_dir)
        self._cache_dir = cache_dir
        self._systems = {"hoop": self.system}

    def stabilized(self, solver="hoop"):
        """The compiled :class:`multibody.formulations.stabilized_dae.StabilizedSystem` of ``solver``: ``"hoop"``
        (:func:`solve_hoop`), ``"exact"`` (the seed's plain ``N = −A⁻¹φ``, eqs. 2.3/2.9, no regularization) or
        ``"dls"`` (damped least squares)."""
        from multibody.formulations.stabilized_dae import StabilizedSystem

        solver = "hoop" if solver is None else solver
        if solver not in self._systems:
            if solver not in ("exact", "dls"):
                raise ModelError(f"hoop reaction solver {solver!r} is unknown; expected 'hoop', 'exact' or 'dls'",
                                 element="solver")
            self._systems[solver] = StabilizedSystem(self.dae, solver=solver, cache_dir=self._cache_dir)
        return self._systems[solver]

    # ------------------------------------------------------------------------------------------------
    # states
    def _consistent(self, x_contact, speed):
        za = self._solve_z(float(x_contact))
        _h, hx, hz = self._h_num(float(x_contact), za)
        nh = math.hypot(hx, hz)
        mx, mz = hx / nh, hz / nh  # mu: centre -> contact (f4 = 0 and (eta, mu) = |grad h|)
        al = math.atan2(mz, mx)
        xc, zc = x_contact - self.r * mx, za - self.r * mz
        chx, chz = -math.sin(al), math.cos(al)  # chi: the tangent with positive x component
        xd, zd = speed * chx, speed * chz
        thd = -(chx * xd + chz * zd) / self.r  # f3 = 0
        X0 = np.array([xc, zc, 0.0, xd, zd, thd, al])
        return X0, self.energy(X0)

    def initial_state(self, x_contact, speed=0.0):
        """A consistent state (all f_i = 0 with ``E0`` = its energy) with the contact at abscissa
        ``x_contact`` and the centre moving with ``speed`` along the tangent (> 0: towards +x)."""
        if not (self.x_range[0] <= x_contact <= self.x_range[1]):
            raise ModelError(f"contact abscissa {x_contact} is outside the checked range {self.x_range}",
                             element="x_contact")
        X0, _E = self._consistent(x_contact, speed)
        return X0

    def energy(self, X):
        """Total energy ``M(ẋ² + ż²)/2 + M r² θ̇²/2 + M g z`` (eq. 3.3 without E0)."""
        X = np.asarray(X, dtype=float)
        return (self.M * (X[..., 3] ** 2 + X[..., 4] ** 2) / 2 + self.M * self.r**2 * X[..., 5] ** 2 / 2
                + self.M * self.g * X[..., 1])

    def contact_point(self, X):
        """``(x_a, z_a)`` of the states ``X`` (rows)."""
        X = np.asarray(X, dtype=float)
        return X[..., 0] + self.r * np.cos(X[..., 6]), X[..., 1] + self.r * np.sin(X[..., 6])

    def params(self, lam, E0, eps_turn=None, solver="hoop"):
        """Parameter array of the compiled right-hand side for gains ``lam`` and energy ``E0``."""
        if eps_turn is not None and solver not in (None, "hoop"):
            raise ModelError(f"eps_turn is a parameter of the 'hoop' solver, not of {solver!r}", element="eps_turn")
        return self.stabilized(solver).params(lam, param_values=[self.M, self.r, self.g, E0],
                                              solver_params=None if eps_turn is None else [eps_turn])

    def reactions(self, X, lam=1e3, E0=None, eps_turn=None, solver="hoop"):
        """``N = [R_x, R_z, Q, U]`` at state ``X`` (eq. 2.9 through :func:`solve_hoop` or ``solver``)."""
        E0 = self.energy(X) if E0 is None else E0
        return self.stabilized(solver).reactions(X, self.params(lam, E0, eps_turn, solver=solver))

    def contact_offset(self, X):
        """Signed distance of the contact point ``(x_a, z_a)`` from the profile, ``h(x_a, z_a)/‖∇h(x_a, z_a)‖``
        (first order in the offset; > 0: below the profile, ∇h pointing downwards), for one state or rows."""
        X = np.asarray(X, dtype=float)
        xa, za = self.contact_point(X)
        xa, za = np.atleast_1d(xa), np.atleast_1d(za)
        out = np.empty(xa.shape)
        for k in range(xa.size):
            hv, hx, hz = self._h_num(float(xa[k]), float(za[k]))
            out[k] = hv / math.hypot(hx, hz)
        return out if X.ndim > 1 else float(out[0])

    def with_normal_velocity(self, X, n):
        """The state ``X`` with the centre's velocity changed by ``n`` along ``μ`` (the profile's normal at the
        contact, towards the profile): an error in the hidden constraint ``ḟ1 = (η, v)`` (``ḟ1`` changes by
        ``‖∇h‖ n``) that leaves f1, f3, f4 unchanged and changes the energy f2 by ``M (μ·v) n + M n²/2``
        (seed 000, Sec. 4, Fig. 4: ``max_i |f_i(0)| < 1e-6`` does not bound ``ḟ1(0)``)."""
        X = np.array(X, dtype=float)
        X[3] += n * math.cos(X[6])
        X[4] += n * math.sin(X[6])
        return X

    def turning_point_reactions(self, X):
        """The seed's limit at a turning point (θ̇ = 0 on the manifold, Sec. 3):
        ``R*_x = M g h'_z cos α/(2‖∇h‖)``, ``R*_z = M g/2 + M g h'_z sin α/(2‖∇h‖)``, ``Q* = M g r cos α/2``,
        ``U* = 0``."""
        X = np.asarray(X, dtype=float)
        al = X[6]
        xa, za = X[0] + self.r * math.cos(al), X[1] + self.r * math.sin(al)
        _h, hx, hz = self._h_num(xa, za)
        nh = math.hypot(hx, hz)
        Mg = self.M * self.g
        return np.array([Mg * hz * math.cos(al) / (2 * nh), Mg / 2 + Mg * hz * math.sin(al) / (2 * nh),
                         Mg * self.r * math.cos(al) / 2, 0.0])

    def residuals(self, X, E0):
        """``[f1, f2, f3, f4]`` at the state(s) ``X``."""
        return self.system.constraints(X, self.params(0.0, E0))

    def simulate(self, X0, t_end, lam=1e3, method="rk2", h=1e-5, E0=None, eps_turn=None, solver="hoop", **kw):
        """Integrate the stabilized hoop from ``X0`` (``E0`` defaults to the energy of ``X0``); returns a
        :class:`multibody.result.Result` with residuals ``f1..f4``, ``info['E0']`` and ``info['solver']``.
        ``solver="exact"`` integrates the seed's plain closed form ``N = −A⁻¹φ`` (eq. 2.9) without the
        turning-point regularization (see the module notes on Fig. 4)."""
        if eps_turn is not None and solver not in (None, "hoop"):
            raise ModelError(f"eps_turn is a parameter of the 'hoop' solver, not of {solver!r}", element="eps_turn")
        E0 = float(self.energy(X0)) if E0 is None else float(E0)
        res = self.stabilized(solver).simulate(X0, t_end, lam, method=method, h=h,
                                               param_values=[self.M, self.r, self.g, E0],
                                               solver_params=None if eps_turn is None else [eps_turn], **kw)
        res.info["E0"] = E0
        res.info["solver"] = solver or "hoop"
        return res


def check_state(hoop, X, E0, tol=1e-6):
    """Raise ``ConstraintError`` if the state violates the constraints by more than ``tol``."""
    f = hoop.residuals(X, E0)
    if np.max(np.abs(f)) > tol:
        raise ConstraintError(f"hoop state violates the constraints: f = {f} (tolerance {tol})",
                              joints=CONSTRAINT_NAMES)
