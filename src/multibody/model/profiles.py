"""Plane curves ``h(x, z) = 0`` (polynomials) that points and discs of a Model move on (``PointOnProfile``,
``RollingOnProfile``; seed 000 §3): :class:`Profile`, and the plane a curve lies in."""
import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.joints import unit_vector as _unit3

__all__ = ["Profile", "plane_axes"]


# plane curves
class Profile:
    """A plane curve ``h(x, z) = 0``, a polynomial in ``x`` and ``z`` (seed 000 §3: the profile).

    ``Profile(h, x, z)`` takes a sympy expression and its two symbols; ``Profile.graph(f, x)`` the graph
    ``z = f(x)`` (``h = f(x) − z``). ``h'_z`` must not vanish on the curve (no vertical parts). The curve is
    oriented so that ``∇h`` points downwards (``h'_z < 0``): a disc rolls on the side ``h < 0`` (above the
    curve) and ``∇h`` points from its centre to the contact point, as in seed 000 §3. A polynomial keeps the
    curve plain data (a coefficient table) that compiled code evaluates exactly with its derivatives.

    >>> import sympy as sp
    >>> x = sp.Symbol("x")
    >>> p = Profile.graph(x**2 / 2, x)
    >>> p.evaluate(1.0, 0.5)[0], p.height(1.0)
    (0.0, 0.5)
    """

    def __init__(self, h, x, z, element="profile"):
        import sympy as sp

        self.element = element
        try:
            h = sp.sympify(h)
        except (sp.SympifyError, TypeError) as exc:
            raise ModelError(f"{element}: h must be a sympy expression in {x}, {z}: {exc}", element=element) from None
        extra = h.free_symbols - {x, z}
        if extra:
            raise ModelError(f"{element}: h depends on {sorted(map(str, extra))}; only {x}, {z} are allowed",
                             element=element)
        try:
            poly = sp.Poly(h, x, z)
        except sp.PolynomialError:
            raise ModelError(f"{element}: h = {h} must be a polynomial in {x} and {z} (approximate other curves by "
                             "a polynomial)", element=element) from None
        try:
            terms = [(int(i), int(j), float(c)) for (i, j), c in poly.terms() if c != 0]
        except TypeError:   # a complex coefficient (sqrt(-1) or I) or one sympy cannot evaluate to a number
            raise ModelError(f"{element}: h = {h} must have real coefficients", element=element) from None
        if not all(np.isfinite(c) for _, _, c in terms):
            raise ModelError(f"{element}: h = {h} has a coefficient beyond the floating-point range",
                             element=element)
        if not terms:
            raise ModelError(f"{element}: h is identically zero", element=element)
        if not any(j > 0 for _, j, _ in terms):
            raise ModelError(f"{element}: h = {h} does not depend on {z}: the curve would be vertical lines",
                             element=element)
        self.h, self.x, self.z = h, x, z
        self.terms = np.array(terms, dtype=float)
        self.sign = 1.0

    @classmethod
    def graph(cls, f, x, element="profile"):
        """The curve ``z = f(x)``, ``f`` a polynomial in the sympy symbol ``x``."""
        import sympy as sp

        z = sp.Dummy("z")
        return cls(sp.sympify(f) - z, x, z, element=element)

    def oriented(self, x_probe, element=None):
        """This curve with ``h`` multiplied by −1 if ``h'_z > 0`` at the curve point above ``x_probe``."""
        z0 = self.height(x_probe)
        if self.evaluate(x_probe, z0)[2] > 0:
            self.terms[:, 2] *= -1.0
            self.sign = -self.sign
        return self

    def evaluate(self, x, z):
        """``(h, h_x, h_z, h_xx, h_xz, h_zz)`` at ``(x, z)``."""
        out = np.zeros(6)
        for i, j, c in self.terms:
            i, j = int(i), int(j)
            xi, zj = x ** i, z ** j
            out[0] += c * xi * zj
            if i:
                out[1] += c * i * x ** (i - 1) * zj
            if j:
                out[2] += c * j * xi * z ** (j - 1)
            if i > 1:
                out[3] += c * i * (i - 1) * x ** (i - 2) * zj
            if i and j:
                out[4] += c * i * j * x ** (i - 1) * z ** (j - 1)
            if j > 1:
                out[5] += c * j * (j - 1) * xi * z ** (j - 2)
        return out

    def expression(self, x, z):
        """``h(x, z)`` as a sympy expression of the given arguments, from the coefficient table the compiled code
        evaluates (``Σ c xⁱ zʲ``, with the orientation of :meth:`oriented`): the symbolic twin of :meth:`evaluate`."""
        import sympy as sp

        return sp.Add(*[sp.Float(c) * x ** int(i) * z ** int(j) for i, j, c in self.terms])

    def height(self, x, z0=0.0):
        """The curve's height ``z`` above abscissa ``x``: the root of ``h(x, z) = 0`` near ``z0`` (Newton)."""
        z = float(z0)
        for _ in range(100):
            hv, _, hz = self.evaluate(x, z)[:3]
            if hz == 0.0:
                raise ModelError(f"{self.element}: h'_z = 0 at ({x}, {z}): the curve must not have vertical parts "
                                 "(seed 000, Sec. 3)", element=self.element)
            dz = -hv / hz
            z += dz
            if abs(dz) <= 1e-15 * max(1.0, abs(z)):
                return z
        if abs(self.evaluate(x, z)[0]) > 1e-12:
            raise ModelError(f"{self.element}: no curve point above abscissa {x} (h(x, z) = 0 has no root in z)",
                             element=self.element)
        return z

    def curvature_radius(self, x, z):
        """Signed radius of curvature ``ρ = ‖∇h‖³ / (τ, H τ)``, τ = (−h_z, h_x); > 0 where the curve bends
        towards the side ``h < 0`` (seed 000 §3)."""
        _, hx, hz, hxx, hxz, hzz = self.evaluate(x, z)
        tx, tz = -hz, hx
        q = tx * tx * hxx + 2 * tx * tz * hxz + tz * tz * hzz
        n3 = (hx * hx + hz * hz) ** 1.5
        return n3 / q if q != 0 else np.inf

    def check_disc(self, radius, x_range, element, npts=2001):
        """Raise ``ModelError`` unless ``h'_z < 0`` and ``radius < ρ`` wherever ρ > 0 over ``x_range`` (the
        admissible curves of seed 000 §3); returns the smallest positive ρ."""
        worst = np.inf
        z = None
        for xv in np.linspace(x_range[0], x_range[1], npts):
            z = self.height(float(xv), 0.0 if z is None else z)
            _, hx, hz = self.evaluate(float(xv), z)[:3]
            if not hz < 0:
                raise ModelError(f"{element}: the profile has h'_z = {hz:.3g} at x = {xv:.6g}: it must not be vertical "
                                 "and must keep one orientation (seed 000, Sec. 3)", element=element)
            rho = self.curvature_radius(float(xv), z)
            if 0 < rho <= radius:
                raise ModelError(f"{element}: the profile is not admissible for a disc of radius r = {radius:g}: its "
                                 f"radius of curvature is rho = {rho:.6g} <= r at x = {xv:.6g}, z = {z:.6g} (seed 000, "
                                 "Sec. 3 requires r < rho)", element=element)
            if rho > 0:
                worst = min(worst, rho)
        return worst

    def __repr__(self):
        return f"Profile({self.sign * self.h if self.sign < 0 else self.h} = 0)"


def plane_axes(plane, element):
    """World unit vectors (e1, e2) spanning the vertical plane of a profile (e1 the curve's x, e2 its z)."""
    if isinstance(plane, str):
        axes = {"xz": ((1.0, 0, 0), (0, 0, 1.0)), "yz": ((0, 1.0, 0), (0, 0, 1.0)), "xy": ((1.0, 0, 0), (0, 1.0, 0))}
        if plane not in axes:
            raise ModelError(f"{element}: plane must be 'xz', 'yz', 'xy' or two orthonormal vectors, got {shown(plane)!r}",
                             element=element)
        e1, e2 = axes[plane]
        return np.array(e1), np.array(e2)
    try:
        e1, e2 = plane
    except (TypeError, ValueError):
        raise ModelError(f"{element}: plane must be 'xz', 'yz', 'xy' or two orthonormal vectors", element=element) \
            from None
    e1, e2 = _unit3(e1, "plane axis 1", element), _unit3(e2, "plane axis 2", element)
    if abs(e1 @ e2) > 1e-9:
        raise ModelError(f"{element}: the two plane axes must be orthogonal", element=element)
    return e1, e2
