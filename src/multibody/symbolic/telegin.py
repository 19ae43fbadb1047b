"""Telegin's split of the inertial forces (seed 004, statement 1) on arrays of any numbers, and the models it
applies to.

The formulas need only the mass matrix H(q) and its partial derivatives ∂H/∂q_k; :func:`telegin_split`
evaluates them on arrays of floats (the numeric twin, ``multibody.analysis.inertial_forces``) or of sympy
polynomials (:mod:`multibody.symbolic.inertial_forces`): the same code serves both. sympy is not imported here.
"""
import numpy as np

from multibody.errors import ModelError, shown

__all__ = ["telegin_split", "permutation", "check_tree"]


def telegin_split(H, dH, qd):
    """The generalized centrifugal, Coriolis and gyroscopic inertial forces and their shared part
    (seed 004, statement 1, eqs. 2, 3, 5 and eq. 10):

        h_ci = ½ H_iii q̇_i² + Σ_{j>i} H_jij q̇_j²                                             (2)
        h_oi = ½ q̇_i Σ_{k≠i} H_iik q̇_k + Σ_{j>i} q̇_j Σ_{k≠j} H_jik q̇_k                          (3)
        h_gi = Σ_{j<i} Ḣ_ij q̇_j + ½ Ḣ_ii q̇_i − ∂T/∂q_i,    ∂T/∂q_i = ½ q̇ᵀ (∂H/∂q_i) q̇          (5), (4)
        h^g_oi = ½ Ḣ_ii q̇_i, the part of both h_oi and h_gi                                     (10)

    with H_jik = ∂H_ji/∂q_k and Ḣ = Σ_k (∂H/∂q_k) q̇_k; h_c + h_o + h_g = Ḣ q̇ − ∂T/∂q, the whole
    velocity-dependent inertial force (eq. 1). ``H`` (n, n), ``dH`` (n, n, n) with ``dH[k] = ∂H/∂q_k``, ``qd``
    (n,): float arrays, or object arrays of anything with + and * (sympy polynomials). The split depends on
    the order of the coordinates (notes B.3): permute the arrays first (:func:`permutation`).
    Returns ``(centrifugal, coriolis, gyroscopic, shared)``, arrays (n,)."""
    Hdot = np.einsum("kij,k->ij", dH, qd)
    P = np.einsum("jji->ij", dH)  # P[i, j] = H_jij = ∂H_ji/∂q_j
    qd2 = qd * qd
    own = 0.5 * np.diagonal(P) * qd2  # ½ H_iii q̇_i²
    carried = np.triu(P, 1) @ qd2  # Σ_{j>i} H_jij q̇_j²
    shared = 0.5 * np.diagonal(Hdot) * qd
    dT = 0.5 * np.einsum("kab,a,b->k", dH, qd, qd)
    centrifugal = own + carried
    coriolis = shared - own + np.triu(Hdot.T, 1) @ qd - carried
    gyroscopic = np.tril(Hdot, -1) @ qd + shared - dT
    return centrifugal, coriolis, gyroscopic, shared


def permutation(model, order):
    """The coordinate order of the split as an index array: ``None`` is the model's order (regular
    numbering: base to tip, every parent before its children); else a sequence of indices or coordinate
    names (``"<joint>.<coordinate>"`` or the joint's name for a one-coordinate joint), a permutation of all
    coordinates. Raises ``ModelError`` otherwise."""
    n = model.nv
    if order is None:
        return np.arange(n)
    names = model.coordinate_names()
    short = {j.name: j.v_slice.start for j in model.joints[1:] if j.joint.nv == 1}
    out = []
    for item in order:
        if isinstance(item, str):
            if item in names:
                item = names.index(item)
            elif item in short:
                item = short[item]
            else:
                raise ModelError(f"order: model '{model.name}' has no coordinate {shown(item)!r} (coordinates: "
                                 f"q1 … q{n}, or {', '.join(names)})", element="order")
        out.append(int(item))
    if sorted(out) != list(range(n)):
        raise ModelError(f"order must be a permutation of the {n} coordinates of model '{model.name}', got "
                         f"{list(order)!r}", element="order")
    return np.array(out)


def check_tree(model, constraints=True):
    """Raise ``ModelError`` unless ``model`` is a tree whose joints have plain coordinates (q̇ = v): the
    split and the symbolic equations are written in such coordinates. ``constraints=False``: cut joints and
    constraints are allowed (the check is then on the spanning tree's joints only)."""
    extra = []
    if constraints:
        extra = [f"cut joint '{j.name}'" for j in model.cut_joints]
        extra += [f"constraint {getattr(c, 'name', type(c).__name__)!r}" for c in model.constraints]
    if extra:
        raise ModelError(f"model '{model.name}' has {extra[0]}; the equations here are those of a tree",
                         element=extra[0])
    if getattr(model, "base_motion", None) is not None:
        raise ModelError(f"model '{model.name}' has a moving base (base motion); the equations here are those of a "
                         "tree on a fixed ground", element="base motion")
    for i in range(1, model.nbodies + 1):
        if model.nq_j[i] != model.nv_j[i]:
            name = model.joint_names[i]
            raise ModelError(f"joint '{name}': these equations need joints whose coordinates are plain numbers "
                             f"(Revolute, Prismatic, Cylindrical, Universal, Planar, Fixed); a "
                             f"{type(model.joints[i].joint).__name__} joint has quaternion coordinates",
                             element=f"joint '{name}'")
