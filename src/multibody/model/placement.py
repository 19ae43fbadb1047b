"""Placements: rigid transforms ``(R, p)``.

``R`` rotates child coordinates into parent coordinates and ``p`` is the child origin in parent
coordinates, so a point with child coordinates ``x`` has parent coordinates ``R @ x + p``.

Symbolic values. Entries may be sympy expressions with symbols (a length ``L``, an angle ``alpha`` inside
a rotation): such a placement is *symbolic* (``placement.symbolic``); its arrays are then numpy arrays of
sympy expressions (dtype object). A model built from symbolic placements or bodies is symbolic: the
equations of ``multibody.symbolic`` accept it, the numeric algorithms refuse it (``ModelError``).
"""
import numpy as np

from multibody.errors import ModelError, shown


def has_symbols(value):
    """True when ``value`` (a number, an expression or an array of them) holds a sympy expression with free
    symbols. sympy is never imported here: plain numbers are checked by their missing ``free_symbols``."""
    return any(getattr(e, "free_symbols", None) for e in np.asarray(value, dtype=object).flat)


def numbers_or_symbols(value, shape, what, element):
    """``value`` as a float array of ``shape``, or — when it holds a sympy expression with symbols — as an
    object array of sympy expressions. Raises ``ModelError`` naming ``element`` when the shape is wrong or a
    number is not finite."""
    try:
        arr = np.asarray(value, dtype=object).reshape(shape)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must have shape {shape}, got {shown(value)!r}", element=element) from None
    if has_symbols(arr):
        import sympy as sp

        out = np.empty(shape, dtype=object)
        for idx, e in np.ndenumerate(arr):
            out[idx] = sp.sympify(e)
        return out
    try:
        arr = arr.astype(float)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be numbers or sympy expressions, got {shown(value)!r}",
                         element=element) from None
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{element}: {what} must be finite, got {arr.tolist()}", element=element)
    return arr


def _check_symbolic_rotation(R, element):
    """RᵀR = E and det R = +1, decided by sympy (a symbolic rotation)."""
    import sympy as sp

    M = sp.Matrix(R)
    if any(sp.simplify(e) != 0 for e in M.T * M - sp.eye(3)) or sp.simplify(M.det() - 1) != 0:
        raise ModelError(f"{element}: rotation must be a proper orthonormal matrix (RᵀR = E, det R = +1)",
                         element=element)


def _proper_rotation(R):
    """Whether the finite 3×3 R is a proper orthonormal matrix (RᵀR = E to 1e-9, det R > 0); entries far outside
    [−1, 1] are not (checked first: their products would overflow)."""
    if np.max(np.abs(R)) > 2.0:
        return False
    return bool(np.max(np.abs(R.T @ R - np.eye(3))) <= 1e-9 and np.linalg.det(R) >= 0)


#: the default tolerance of :meth:`Placement.is_identity`
IDENTITY_TOL = 1e-14


class Placement:
    """A rigid placement of a frame in another: rotation (child -> parent) and translation.

    Example
    -------
    >>> import numpy as np
    >>> from multibody.model.rotations import rotation_about
    >>> X = Placement(rotation_about((0, 0, 1), np.pi / 2), (1.0, 0.0, 0.0))
    >>> np.round(X.act((1.0, 0.0, 0.0)), 12).tolist()
    [1.0, 1.0, 0.0]
    """

    __slots__ = ("rotation", "translation", "_identity")

    def __init__(self, rotation=None, translation=(0.0, 0.0, 0.0), element="placement"):
        R = np.eye(3) if rotation is None else numbers_or_symbols(rotation, (3, 3), "rotation", element)
        p = numbers_or_symbols(translation, (3,), "translation", element)
        if R.dtype == object:
            _check_symbolic_rotation(R, element)
        elif not _proper_rotation(R):
            raise ModelError(f"{element}: rotation must be a proper orthonormal matrix (RᵀR = E, det R = +1)",
                             element=element)
        R = R.copy()
        p = p.copy()
        R.flags.writeable = False
        p.flags.writeable = False
        self.rotation = R
        self.translation = p
        self._identity = None       # whether it is the identity (to IDENTITY_TOL), once asked: it never changes

    @classmethod
    def identity(cls):
        return cls()

    @property
    def symbolic(self):
        """True when the rotation or the translation holds sympy expressions (see the module docstring)."""
        return self.rotation.dtype == object or self.translation.dtype == object

    def act(self, x):
        """Parent coordinates of a point given in child coordinates."""
        return self.rotation @ np.asarray(x, dtype=self.translation.dtype) + self.translation

    def inverse(self):
        return Placement(self.rotation.T, -self.rotation.T @ self.translation)

    def __mul__(self, other):
        """Composition: ``(A * B)`` places B's child in A's parent."""
        return Placement(self.rotation @ other.rotation, self.rotation @ other.translation + self.translation)

    def is_identity(self, tol=IDENTITY_TOL):
        """Whether the rotation is E and the translation 0, each entry to ``tol`` (exactly for a symbolic one).
        With the default tolerance the answer is kept (a placement does not change): the kinematics of every call
        ask it of each body's frame."""
        if tol == IDENTITY_TOL and getattr(self, "_identity", None) is not None:
            return self._identity
        if self.symbolic:
            out = all(e == 0 for e in (self.rotation - np.eye(3, dtype=int)).flat) and all(
                e == 0 for e in self.translation)
        else:
            out = bool(np.max(np.abs(self.rotation - np.eye(3))) <= tol and np.max(np.abs(self.translation)) <= tol)
        if tol == IDENTITY_TOL:
            self._identity = out
        return out

    def __repr__(self):
        return f"Placement(rotation={self.rotation.tolist()}, translation={self.translation.tolist()})"
