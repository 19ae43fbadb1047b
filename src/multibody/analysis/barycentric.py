"""Augmented bodies, barycentres and the vectors d_ij, b_ij of a tree (seed 001, §3.2, eqs. 3.13, 3.19–3.21, 3.24).

Works from the incidence matrix S (n x n, the ground row S0 left out), the path matrix T (n x n, T S = E) and
per-body data, as the book's MATLAB listings ``GetBaricenterVectors`` and ``Get_b`` do. S and T come from
:class:`multibody.model.graph.Graph` (``incidence()``, ``path_matrix()``). Bodies 1..n are rows 0..n-1,
joints (arcs) are columns of S / rows of T, 0-based.

Inputs
------
``c`` : array (n, n, k), ``c[i-1, a]`` = joint vector c_ia from the centre of mass C_i of body i to the point
    of joint a, in body-i coordinates (k = 3, or 2 for planar examples); zero where body i is not on joint a.
    (The book's C_ia = S_ia c_ia of eq. 3.5 is formed inside.) ``c_0a = 0`` is assumed for body 0 (§3.2).
``m`` : array (n,) of masses (the ground excluded).

Functions
---------
``subtree_masses(T, m)``           (n,) mass outboard of each joint, ``|T m|``
``inboard_joints(S, T)``           (n,) the inboard (preceding) joint of each body
``d_vectors(S, T, c)``             (n, n, k) d_ij = Σ_a S_ia c_ia T_aj (eq. 3.13)
``barycenter_vectors(S, T, c, m)`` (n, k) B_i − C_i = −b_ii (``GetBaricenterVectors``)
``b_vectors(S, T, B, c)``          (n, n, k) b_ij (``Get_b``); ``b[i-1, j-1]`` = b_ij
``b0_vectors(S, T, B, c)``         (n, k) b_i0, from the barycentre B_i to the inboard joint point
``model_joint_vectors(model)``     ``(S, T, c, m)`` of a built Model's tree (joint points at q = neutral)
``augmented_inertia(v, m, J)``     (n, 3, 3) J_i + Σ_k m_k (|v_ik|² E − v_ik v_ikᵀ): K_i for v = d (eq. 3.24),
                                   the inertia about the barycentre for v = b

The functions accept ``dtype=object`` arrays (e.g. sympy symbols) as well as floats, so the book's symbolic
Table 3.1 can be reproduced exactly. Unlike the MATLAB listings they do not need a regular numbering: the
inboard joint of body i is found as the one joint with S_ia T_ai ≠ 0 (seed 001, §1.1.2); with a regular
numbering the results are those of the listings.
"""

from __future__ import annotations

import numpy as np

from multibody.errors import ModelError

__all__ = [
    "subtree_masses",
    "inboard_joints",
    "d_vectors",
    "barycenter_vectors",
    "b_vectors",
    "b0_vectors",
    "augmented_inertia",
    "model_joint_vectors",
]


def _st(S, T):
    S = np.asarray(S)
    T = np.asarray(T)
    n = S.shape[0]
    if S.shape != (n, n) or T.shape != (n, n):
        raise ModelError(f"S and T must both be n x n (the ground row left out); got {S.shape} and {T.shape}")
    return S, T, n


def _c(c, n):
    c = np.asarray(c)
    if c.ndim != 3 or c.shape[:2] != (n, n):
        raise ModelError(f"joint vectors c must have shape (n, n, k) = ({n}, {n}, k); got {c.shape}")
    return c


def subtree_masses(T, m):
    """Mass of the bodies outboard of each joint: ``ma = |T m|`` (seed 001, §3.2.1, ``GetBaricenterVectors``).

    Entry a is the total mass of the bodies whose path from body 0 passes through joint a. All nonzero
    entries of a row of T share one sign, so the absolute value of the row sum is that mass.
    """
    T = np.asarray(T)
    m = np.asarray(m)
    return np.abs(T @ m)


def inboard_joints(S, T):
    """The inboard (preceding) joint a(i) of each body: the one joint with S_ia ≠ 0 and T_ai ≠ 0 (seed 001, §1.1.2).

    Returns an int64 array (n,); entry i-1 is the column of S of body i's inboard joint (i-1 itself under a
    regular numbering). Raises :class:`ModelError` if S and T are not the incidence and path matrices of a tree.
    """
    S, T, n = _st(S, T)
    P = (S != 0) & (T.T != 0)
    count = P.sum(axis=1)
    bad = np.flatnonzero(count != 1)
    if len(bad):
        i = int(bad[0]) + 1
        raise ModelError(
            f"body {i}: expected exactly one joint a with S_ia != 0 and T_ai != 0 (its inboard joint), "
            f"found {int(count[i - 1])}; S and T must be the incidence and path matrices of one tree"
        )
    return np.argmax(P, axis=1).astype(np.int64)


def d_vectors(S, T, c):
    """d_ij = (C T)_ij = Σ_a S_ia c_ia T_aj, fixed in body i (seed 001, eqs. 3.13, 3.15).

    ``d[i-1, j-1]`` = d_ij: zero unless body i is on the path from body 0 to body j (s_i ≤ s_j); d_ii is the
    vector from C_i to the inboard joint point of i; for s_i < s_j it runs from the joint of i leading toward
    j to the inboard joint point. With spherical joints and c_0a = 0, r_i = r_0 − Σ_j d_ji (eq. 3.14).
    """
    S, T, n = _st(S, T)
    c = _c(c, n)
    return np.stack([(S * c[:, :, k]) @ T for k in range(c.shape[2])], axis=-1)


def barycenter_vectors(S, T, c, m):
    """Barycentres of the augmented bodies: row i-1 is B_i − C_i = −b_ii in body-i coordinates (seed 001, §3.2,
    listing ``GetBaricenterVectors(S, T, C, m)``; columns are −b_ii, not −b_i0 as the text says).

    Augmented body i = body i plus, at the point of each joint a of body i, a point mass equal to the total
    mass connected to i through a (eq. 3.19 defines B_i by Σ_j m_j b_ij = 0): the outboard subtree mass
    ``|T m|_a`` at an outboard joint, M − (mass outboard of the inboard joint) at the inboard joint. The body's
    own mass sits at C_i and adds nothing. Returns an array (n, k) (the listing returns its transpose).
    """
    S, T, n = _st(S, T)
    c = _c(c, n)
    m = np.asarray(m)
    if m.shape != (n,):
        raise ModelError(f"masses m must have shape ({n},), got {m.shape}")
    M = m.sum()
    ma = subtree_masses(T, m)
    inb = inboard_joints(S, T)
    rows = np.arange(n)
    W = np.abs(S) * ma[None, :]  # mass behind each outboard joint
    W = W.astype(np.result_type(W.dtype, m.dtype))
    W[rows, inb] = M - ma[inb]  # everything not outboard of i sits at its inboard joint
    return np.stack([(W * c[:, :, k]).sum(axis=1) for k in range(c.shape[2])], axis=-1) / M


def b_vectors(S, T, B, c):
    """The vectors b_ij, fixed in body i, from the barycentre B_i (seed 001, §3.2, eqs. 3.19–3.21, listing ``Get_b``).

    ``B`` is the output of :func:`barycenter_vectors`. ``b[i-1, j-1]`` = b_ij runs from B_i to: C_i when
    j = i; the joint point of i leading toward j when j is outboard of i (s_i < s_j); the inboard joint point
    of i for every other j (so b_ij = b_i0 there). Satisfies Σ_j m_j b_ij = 0 and d_ij = b_i0 − b_ij (3.20).
    """
    S, T, n = _st(S, T)
    c = _c(c, n)
    B = np.asarray(B)
    if B.shape != (n, c.shape[2]):
        raise ModelError(f"barycentre vectors B must have shape ({n}, {c.shape[2]}), got {B.shape}")
    inb = inboard_joints(S, T)
    rows = np.arange(n)
    O = (S != 0).astype(np.int64)
    O[rows, inb] = 0  # outboard joints of each body
    # the outboard joint of i on the path to j (at most one); 0 when j is not outboard of i (as in Get_b)
    sel = O @ ((T != 0).astype(np.int64) * (np.arange(n, dtype=np.int64) + 1)[:, None])
    a = np.where(sel > 0, sel - 1, inb[:, None])
    b = c[rows[:, None], a, :] - B[:, None, :]
    b[rows, rows] = -B
    return b


def b0_vectors(S, T, B, c):
    """b_i0: from the barycentre B_i to the inboard joint point of body i, fixed in body i (seed 001, §3.2, eq. 3.20).

    Equals (1/M) Σ_j m_j d_ij; r_C = r_0 − Σ_i b_i0 for the system's centre of mass when c_0a = 0.
    """
    S, T, n = _st(S, T)
    c = _c(c, n)
    B = np.asarray(B)
    inb = inboard_joints(S, T)
    return c[np.arange(n), inb, :] - B


def augmented_inertia(v, m, J):
    """J_i + Σ_k m_k (|v_ik|² E − v_ik v_ikᵀ) for each body i (seed 001, eq. 3.24).

    With ``v = d_vectors(...)`` this is K_i, the inertia tensor of augmented body i about its inboard joint
    point (3.24); with ``v = b_vectors(...)`` it is the inertia of augmented body i about its barycentre, and
    K_i = K*_i + M (|b_i0|² E − b_i0 b_i0ᵀ) (parallel-axis theorem). ``J`` (n, 3, 3): central inertia tensors
    in body coordinates; ``v`` (n, n, 3) in body-i coordinates along row i.
    """
    v = np.asarray(v)
    m = np.asarray(m)
    J = np.asarray(J)
    n = m.shape[0]
    if v.shape != (n, n, 3) or J.shape != (n, 3, 3):
        raise ModelError(f"expected v of shape ({n}, {n}, 3) and J of shape ({n}, 3, 3); got {v.shape}, {J.shape}")
    sq = (v * v).sum(axis=2)  # |v_ik|²
    K = np.array(J, copy=True, dtype=np.result_type(J.dtype, v.dtype, m.dtype))
    for i in range(n):
        K[i] += (m * sq[i]).sum() * np.eye(3) - (m[:, None, None] * v[i][:, :, None] * v[i][:, None, :]).sum(axis=0)
    return K


def model_joint_vectors(model):
    """``(S, T, c, m)`` of the tree of a built Model, ready for the functions above (seed 001, §3.2, eq. 3.5).

    Joint k (1..N) is column k-1 of S and joins ``parent[k]`` (arc leaves it, i+) to body k (i−). Its joint
    point is the origin of the joint frame: ``jplace_p[k]`` in the parent's frame and, since the child frame
    coincides with the joint frame at the neutral configuration, the child frame's origin. So
    c_{k,k} = −com_k and c_{parent,k} = jplace_p[k] − com_parent, each in its own body's frame (c_0a = 0 for
    the ground). The joint point is fixed in both bodies for revolute, universal and spherical joints, as in
    the book's §3.2; for sliding joints these are the vectors at q = neutral. Cut joints are left out.
    """
    from multibody.model.graph import Graph

    n = int(model.nbodies)
    parent = np.asarray(model.parent)
    g = Graph(n, [(int(parent[k]), k) for k in range(1, n + 1)])
    S0, S = g.incidence()
    T = g.path_matrix()
    com = np.asarray(model.com, dtype=float)
    jp = np.asarray(model.jplace_p, dtype=float)
    c = np.zeros((n, n, 3))
    for k in range(1, n + 1):
        c[k - 1, k - 1] = -com[k]
        p = int(parent[k])
        if p:
            c[p - 1, k - 1] = jp[k] - com[p]
    return S, T, c, np.array(model.mass[1:], dtype=float)
