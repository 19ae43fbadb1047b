"""Rigid bodies: mass, centre of mass and inertia about the centre of mass, in the body's own frame.

A body's frame is located by the joint that carries it (see ``multibody.model.joints``): at the neutral
configuration it coincides with that joint's frame. ``com`` is the centre of mass in body coordinates and
``inertia`` the inertia tensor about the centre of mass, with body-frame axes (seed 001, §1.1: the inertia
parameters of body i are m_i and J_i about its centre of mass C_i).

Mass, com and inertia may be sympy expressions with symbols (a *symbolic* body, ``body.symbolic``; see
``multibody.model.placement``): only what sympy can decide is checked then (a mass known to be
non-positive, an unsymmetric tensor); positive definiteness is the user's responsibility.
"""
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError
from multibody.model.placement import has_symbols, numbers_or_symbols

#: relative tolerance of the symmetry, definiteness and triangle-inequality checks
INERTIA_RTOL = 1e-10


def vector3(value, what, element):
    """``value`` as 3 finite floats, or a ``ModelError`` naming ``element``."""
    try:
        arr = np.asarray(value, dtype=float).reshape(3)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be 3 numbers, got {value!r}", element=element) from None
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{element}: {what} must be finite, got {arr.tolist()}", element=element)
    return arr


def _symbolic_inertia(arr, element):
    """A 3x3 object array of sympy expressions from 3 moments, 6 components or a 3x3 matrix; symmetric."""
    import sympy as sp

    if arr.shape == (3,):
        arr = np.diag(arr).astype(object)
    elif arr.shape == (6,):
        ixx, iyy, izz, ixy, ixz, iyz = arr
        arr = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=object)
    elif arr.shape != (3, 3):
        raise ModelError(f"{element}: inertia must be a 3x3 matrix, 3 principal moments or 6 components, "
                         f"got shape {arr.shape}", element=element)
    arr = numbers_or_symbols(arr, (3, 3), "inertia", element)
    if any(sp.expand(arr[r, c] - arr[c, r]) != 0 for r in range(3) for c in range(r)):
        raise ModelError(f"{element}: inertia must be symmetric, got {arr.tolist()}", element=element)
    return arr


def check_inertia(inertia, element):
    """Validate an inertia tensor about the centre of mass and return it as a symmetric 3x3 array.

    Accepts a 3x3 matrix, the 3 principal moments ``(Ixx, Iyy, Izz)`` or the 6 components
    ``(Ixx, Iyy, Izz, Ixy, Ixz, Iyz)``. Raises ``ModelError`` naming ``element`` when the tensor is not
    symmetric, not positive definite, or its principal moments violate the triangle inequality
    ``I1 + I2 >= I3`` (a necessary condition for any mass distribution). The zero tensor is accepted:
    it describes a point mass.
    """
    if has_symbols(inertia):
        return _symbolic_inertia(np.asarray(inertia, dtype=object), element)
    try:
        arr = np.asarray(inertia, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: inertia must be numeric, got {inertia!r}", element=element) from None
    if arr.shape == (3,):
        arr = np.diag(arr)
    elif arr.shape == (6,):
        ixx, iyy, izz, ixy, ixz, iyz = arr
        arr = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    elif arr.shape != (3, 3):
        raise ModelError(
            f"{element}: inertia must be a 3x3 matrix, 3 principal moments or 6 components, got shape {arr.shape}",
            element=element,
        )
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{element}: inertia must be finite", element=element)
    if not np.any(arr):
        return arr  # point mass
    scale = np.max(np.abs(arr))
    if np.max(np.abs(arr - arr.T)) > INERTIA_RTOL * scale:
        raise ModelError(f"{element}: inertia must be symmetric, got {arr.tolist()}", element=element)
    arr = 0.5 * arr + 0.5 * arr.T   # (not 0.5 * (arr + arr.T): that overflows for components near 1e308)
    moments = np.linalg.eigvalsh(arr / scale) * scale
    if moments[0] <= INERTIA_RTOL * scale:
        raise ModelError(
            f"{element}: inertia must be positive definite (principal moments {moments.tolist()})",
            element=element,
        )
    i1, i2, i3 = moments
    if i1 + i2 < i3 * (1.0 - INERTIA_RTOL):
        raise ModelError(
            f"{element}: principal moments {moments.tolist()} violate the triangle inequality I1 + I2 >= I3; "
            "no mass distribution has this inertia",
            element=element,
        )
    return arr


@dataclass(frozen=True)
class Body:
    """A rigid body.

    Parameters
    ----------
    name : str
    mass : float, > 0 (or a sympy expression)
    com : 3-vector, centre of mass in the body frame
    inertia : inertia about the centre of mass, body axes (3x3, 3 principal moments, or 6 components)

    Example
    -------
    >>> b = Body("rod", mass=2.0, com=(0, 0, -0.5), inertia=(1/6, 1/6, 1e-4))
    >>> float(b.inertia_origin()[0, 0])   # Steiner: 1/6 + 2 * 0.25
    0.6666666666666666
    """

    name: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def __init__(self, name, mass, com=(0.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0)):
        element = f"body '{name}'"
        if not isinstance(name, str) or not name:
            raise ModelError(f"body name must be a non-empty string, got {name!r}", element=repr(name))
        if has_symbols(mass):
            import sympy as sp

            mass = sp.sympify(mass)
            if mass.is_positive is False:
                raise ModelError(f"{element}: mass must be positive, got {mass}", element=element)
        else:
            try:
                mass = float(mass)
            except (TypeError, ValueError, OverflowError):
                raise ModelError(f"{element}: mass must be a number, got {mass!r}", element=element) from None
            if not np.isfinite(mass) or mass <= 0.0:
                raise ModelError(f"{element}: mass must be positive and finite, got {mass}", element=element)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "com", numbers_or_symbols(com, (3,), "com", element))
        object.__setattr__(self, "inertia", check_inertia(inertia, element))
        self.com.flags.writeable = False
        self.inertia.flags.writeable = False

    @property
    def symbolic(self):
        """True when mass, com or inertia holds sympy expressions with symbols."""
        return self.com.dtype == object or self.inertia.dtype == object or has_symbols(self.mass)

    def inertia_origin(self):
        """Rotational inertia about the body-frame origin (parallel-axis theorem)."""
        c = self.com
        return self.inertia + self.mass * (np.dot(c, c) * np.eye(3, dtype=int) - np.outer(c, c))
