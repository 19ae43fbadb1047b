"""Rigid bodies: mass, centre of mass and inertia about the centre of mass, in the body's own frame.

A body's frame is located by the joint that carries it (see ``multibody.model.joints``): at the neutral
configuration it coincides with that joint's frame. ``com`` is the centre of mass in body coordinates and
``inertia`` the inertia tensor about the centre of mass, with body-frame axes (seed 001, §1.1: the inertia
parameters of body i are m_i and J_i about its centre of mass C_i).

Mass, com and inertia may be sympy expressions with symbols (a *symbolic* body, ``body.symbolic``; see
``multibody.model.placement``): only what sympy can decide is checked then (a mass known to be
non-positive, an unsymmetric tensor); positive definiteness is the user's responsibility.

Which numeric inertias are accepted, and what is done with the others, is :mod:`multibody.model.inertia`.
"""
from dataclasses import dataclass

import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.inertia import INERTIA_RTOL, apply_policy, inertia_matrix  # noqa: F401 (INERTIA_RTOL: its home)
from multibody.model.placement import has_symbols, numbers_or_symbols


def vector3(value, what, element):
    """``value`` as 3 finite floats, or a ``ModelError`` naming ``element``."""
    try:
        arr = np.asarray(value, dtype=float).reshape(3)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: {what} must be 3 numbers, got {shown(value)!r}", element=element) from None
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


def check_inertia(inertia, element, mass=1.0, com=(0.0, 0.0, 0.0), policy="refuse"):
    """Validate an inertia tensor about the centre of mass and return it as a symmetric 3x3 array.

    Accepts a 3x3 matrix, the 3 principal moments ``(Ixx, Iyy, Izz)`` or the 6 components
    ``(Ixx, Iyy, Izz, Ixy, Ixz, Iyz)``. Raises ``ModelError`` naming ``element`` when the tensor is not finite or
    not symmetric, and applies ``policy`` to a tensor that is not physical (:mod:`multibody.model.inertia`:
    negative principal moments, the triangle inequality ``I1 + I2 >= I3``, inertia without mass). Zero principal
    moments are accepted: the zero tensor is a point mass, ``[I, I, 0]`` a thin rod.
    """
    return _checked_inertia(inertia, element, mass, com, policy)[0]


def _checked_inertia(inertia, element, mass, com, policy):
    if has_symbols(inertia):
        return _symbolic_inertia(np.asarray(inertia, dtype=object), element), None
    if has_symbols(mass) or has_symbols(com):   # a numeric tensor of a symbolic body: its own checks only
        mass, com = 1.0, (0.0, 0.0, 0.0)
    return apply_policy(mass, com, inertia_matrix(inertia, element), policy, element)


@dataclass(frozen=True)
class Body:
    """A rigid body.

    Parameters
    ----------
    name : str
    mass : float, >= 0 (or a sympy expression); 0 is a massless link, which the model's dynamics check
        accepts where other bodies give its joint inertia (see ``multibody.model.inertia``)
    com : 3-vector, centre of mass in the body frame
    inertia : inertia about the centre of mass, body axes (3x3, 3 principal moments, or 6 components)
    policy : what to do with an inertia that is not physical: ``"refuse"`` (default), ``"warn"``, ``"repair"``,
        ``"accept"`` (``multibody.model.inertia``); ``inertia_note`` then says what was found (None otherwise)

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

    def __init__(self, name, mass, com=(0.0, 0.0, 0.0), inertia=(0.0, 0.0, 0.0), policy="refuse"):
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
                raise ModelError(f"{element}: mass must be a number, got {shown(mass)!r}", element=element) from None
            if not np.isfinite(mass) or mass < 0.0:
                raise ModelError(f"{element}: mass must be a finite number >= 0, got {mass}", element=element)
            if 0.0 < mass < np.finfo(float).tiny:
                raise ModelError(f"{element}: mass {mass:g} is below the smallest normal float "
                                 f"({np.finfo(float).tiny:.3g} kg): write 0 for a massless body", element=element)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "mass", mass)
        object.__setattr__(self, "com", numbers_or_symbols(com, (3,), "com", element))
        inertia, note = _checked_inertia(inertia, element, mass, self.com, policy)
        object.__setattr__(self, "inertia", inertia)
        #: what the inertia policy found when the given inertia was not physical (kept or repaired), else None
        object.__setattr__(self, "inertia_note", note)
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
