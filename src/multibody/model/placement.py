"""Placements: rigid transforms ``(R, p)``.

``R`` rotates child coordinates into parent coordinates and ``p`` is the child origin in parent
coordinates, so a point with child coordinates ``x`` has parent coordinates ``R @ x + p``.
"""
import numpy as np

from multibody.errors import ModelError


def rotation_about(axis, angle):
    """Rotation matrix of ``angle`` (rad) about the unit ``axis`` (Rodrigues' formula)."""
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    k = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


class Placement:
    """A rigid placement of a frame in another: rotation (child -> parent) and translation.

    Example
    -------
    >>> import numpy as np
    >>> X = Placement(rotation_about((0, 0, 1), np.pi / 2), (1.0, 0.0, 0.0))
    >>> np.round(X.act((1.0, 0.0, 0.0)), 12).tolist()
    [1.0, 1.0, 0.0]
    """

    __slots__ = ("rotation", "translation")

    def __init__(self, rotation=None, translation=(0.0, 0.0, 0.0), element="placement"):
        R = np.eye(3) if rotation is None else np.asarray(rotation, dtype=float)
        p = np.asarray(translation, dtype=float)
        if R.shape != (3, 3) or not np.all(np.isfinite(R)):
            raise ModelError(f"{element}: rotation must be a finite 3x3 matrix", element=element)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise ModelError(f"{element}: translation must be 3 finite numbers, got {translation!r}", element=element)
        if np.max(np.abs(R.T @ R - np.eye(3))) > 1e-9 or np.linalg.det(R) < 0:
            raise ModelError(f"{element}: rotation must be a proper orthonormal matrix (RᵀR = E, det R = +1)",
                             element=element)
        R = R.copy()
        p = p.copy()
        R.flags.writeable = False
        p.flags.writeable = False
        self.rotation = R
        self.translation = p

    @classmethod
    def identity(cls):
        return cls()

    def act(self, x):
        """Parent coordinates of a point given in child coordinates."""
        return self.rotation @ np.asarray(x, dtype=float) + self.translation

    def inverse(self):
        return Placement(self.rotation.T, -self.rotation.T @ self.translation)

    def __mul__(self, other):
        """Composition: ``(A * B)`` places B's child in A's parent."""
        return Placement(self.rotation @ other.rotation, self.rotation @ other.translation + self.translation)

    def is_identity(self, tol=1e-14):
        return bool(np.max(np.abs(self.rotation - np.eye(3))) <= tol and np.max(np.abs(self.translation)) <= tol)

    def __repr__(self):
        return f"Placement(rotation={self.rotation.tolist()}, translation={self.translation.tolist()})"
