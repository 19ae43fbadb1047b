"""Keeping q on its manifold during integration.

The integrators project the state after every step (``project(x, params)`` of
``multibody.integrate.fixed_step``). For the tree formulation the projection normalises the quaternion of
every Spherical and Free joint (Euler parameters, seed 001 §3.1: |e| = 1), so |e| does not drift; q̇ itself
comes from ``multibody.kernels.configuration.qdot_kernel`` (ė = ½ e ⊗ (0, ω)).
"""
import numpy as np
from numba import njit

from multibody.kernels.configuration import normalize_kernel, qdot_kernel  # noqa: F401 (re-exported)
from multibody.kernels.kinematics import FREE, JTYPE, SPHERICAL
from multibody.kernels.spatial import KERNEL


@njit(**KERNEL)
def normalize_quaternions_q(mi, q):
    """e ← e/|e| in place for the quaternion of every Spherical and Free joint of q (or of x = [q, v])."""
    normalize_kernel(mi, q, q)


@njit(**KERNEL)
def normalize_quaternions(x, params):
    """The fixed-step projection ``project(x, params)`` of the tree formulation: normalise the quaternions in
    q = x[:nq] (``params.mi`` is the packed ``mi`` of ``multibody.model.packing.TreeParams``)."""
    normalize_kernel(params.mi, x, x)


def has_quaternions(mi):
    """Whether any joint of the packed model ``mi`` has a quaternion (Spherical or Free)."""
    jt = np.asarray(mi)[1:, JTYPE]
    return bool(np.any((jt == SPHERICAL) | (jt == FREE)))


def quaternion_projection(params):
    """The adaptive integrators' projection ``project(t, x)`` of a formulation whose state is x = [q, v, ...] with
    the packed ``params`` of :func:`normalize_quaternions`: a copy of x with its quaternions normalised."""
    def project(t, x):
        x = np.array(x, dtype=np.float64)
        normalize_quaternions(x, params)
        return x

    return project
