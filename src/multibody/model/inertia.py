"""Which inertias a body may have, what is done with the others, and when the dynamics become singular.

**Physical inertia.** The inertia tensor ``I`` of a body about its centre of mass is that of some mass
distribution exactly when it is symmetric, its principal moments are non-negative and they obey the triangle
inequalities ``I1 + I2 >= I3`` (each moment is a sum of two of the non-negative second moments
``∫x², ∫y², ∫z²``; equality for a flat body). A body of zero mass has zero inertia. Zero principal moments are
physical limits, not defects: a point mass (``I = 0``), a thin rod (``[m l²/12, m l²/12, 0]``), a massless link
(a link of a kinematic chain that only carries its children). What such idealizations may not do is make the
dynamics singular (below). The checks allow round-off: a moment or a triangle inequality off by at most
``INERTIA_RTOL`` times the body's inertia scale — the largest principal moment of its inertia about the body
frame's origin (parallel-axis theorem), so that iCub's ``head`` link, a point mass of 1.3 kg 0.11 m from its
frame with a tensor written as ``ixz = 2.4e-35``, is a point mass.

**Policies** (``ModelBuilder(inertia=...)``, and ``strict=``/``repair=`` of the file readers) for an inertia
that is not physical:

``"refuse"``  a ``ModelError`` naming the body and the numbers (the builder's default);
``"warn"``    kept as written, with one ``InertiaWarning`` per model listing the bodies (the URDF reader's
              default: robot files carry CAD inertias that break the triangle inequality, which leave the
              dynamics well defined);
``"repair"``  replaced by the nearest physical inertia (:func:`nearest_physical`) with one ``InertiaWarning``
              listing each body and how far it moved;
``"accept"``  kept as written, silently.

A tensor with a negative principal moment (beyond round-off) is refused by every policy but ``"repair"``: it
gives some motions a negative kinetic energy.

**Singular dynamics.** Whatever the policy, a model whose mass matrix is singular is refused when it is built
(:func:`singular_joint`): in the articulated-body recursion (Featherstone, *Rigid Body Dynamics Algorithms*,
2008, §7.3, Table 7.1) the matrix ``D_i = S_iᵀ I^A_i S_i`` of every joint must be positive definite — M(q) is
positive definite exactly then, since the D_i are the pivots of its block factorization — and a point mass on
its hinge axis, a massless leaf body or a rod spinning about its own axis make one of them singular. The recursion
keeps each articulated inertia symmetric: computed as written, its round-off grows an antisymmetric part by about
1.7 per link along a chain (cardan chains at random angles: D of link 45 of 100 came out with an eigenvalue of −0.2
against 0.72 in 50-digit arithmetic, which refused regular long chains); symmetrized, D agrees with the 50-digit
values to the digits shown down the whole chain.
"""
import itertools

import numpy as np

from multibody.errors import ModelError, shown
from multibody.model.joints import CYLINDRICAL, FREE, GENERAL, PLANAR, PRISMATIC, REVOLUTE, SPHERICAL, UNIVERSAL
from multibody.model.rotations import rotation_about

#: relative tolerance of the symmetry, sign and triangle-inequality checks (times the body's inertia scale)
INERTIA_RTOL = 1e-10
#: a joint whose D = Sᵀ I^A S has an eigenvalue below this fraction of the composite inertia it moves makes the
#: mass matrix singular: a truly singular one gives round-off (~1e-16); over the 130 robots of example-robot-data
#: that load (fixed and floating base) the smallest fraction is 9e-4 (iCub)
SINGULAR_RTOL = 1e-12
#: what may be done with a non-physical inertia (see the module docstring)
POLICIES = ("refuse", "warn", "repair", "accept")
#: the key of ``Model.metadata`` that holds why a model was built for its kinematics only (its dynamics undefined)
KINEMATICS_ONLY = "kinematics_only"
#: the mass (kg) and the principal moments (kg m²) that ``repair=True`` of the readers gives a moving link that has
#: none, nor anything it carries (MuJoCo's ``boundmass`` and ``boundinertia``): 1 mg and the moments of a 1 mg bead
#: of radius 1.6 cm — the mass matrix becomes invertible (its condition number ~1e10 on a metre-and-kilogram robot),
#: the motion of the other bodies changes by a millionth of a gram's share
BOUND_MASS = 1e-6
BOUND_INERTIA = 1e-10


def inertia_matrix(inertia, element):
    """A symmetric 3x3 float array from 3 principal moments, 6 components ``(Ixx, Iyy, Izz, Ixy, Ixz, Iyz)`` or
    a 3x3 matrix; a ``ModelError`` naming ``element`` when it is not finite or not symmetric."""
    try:
        arr = np.array(inertia, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ModelError(f"{element}: inertia must be numeric, got {shown(inertia)!r}", element=element) from None
    if arr.shape == (3,):
        arr = np.diag(arr)
    elif arr.shape == (6,):
        ixx, iyy, izz, ixy, ixz, iyz = arr
        arr = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    elif arr.shape != (3, 3):
        raise ModelError(f"{element}: inertia must be a 3x3 matrix, 3 principal moments or 6 components, got shape "
                         f"{arr.shape}", element=element)
    if not np.all(np.isfinite(arr)):
        raise ModelError(f"{element}: inertia must be finite, got {arr.tolist()}", element=element)
    if not np.any(arr):
        return arr
    scale = np.max(np.abs(arr))
    if np.max(np.abs(arr - arr.T)) > INERTIA_RTOL * scale:
        raise ModelError(f"{element}: inertia must be symmetric, got {arr.tolist()}", element=element)
    return 0.5 * arr + 0.5 * arr.T   # (not 0.5 * (arr + arr.T): that overflows for components near 1e308)


def principal_moments(inertia):
    """The principal moments of a symmetric 3x3 tensor, ascending (computed on the scaled tensor: no overflow)."""
    scale = np.max(np.abs(inertia))
    if scale == 0:
        return np.zeros(3)
    return np.linalg.eigvalsh(inertia / scale) * scale


def inertia_scale(mass, com, inertia):
    """The body's inertia scale: the largest principal moment of its inertia about the body frame's origin."""
    c = np.asarray(com, dtype=float)
    with np.errstate(over="ignore", invalid="ignore"):
        about_origin = inertia + mass * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    if not np.all(np.isfinite(about_origin)):
        return float(np.max(np.abs(inertia)))
    return float(max(principal_moments(about_origin)[-1], np.max(np.abs(inertia))))


def _shown(values):
    return "[" + ", ".join(f"{float(x):.6g}" for x in values) + "]"


def inertia_defect(mass, com, inertia):
    """Why ``inertia`` (symmetric 3x3, about the centre of mass) is not that of a body of ``mass`` with its centre
    at ``com``: ``(kind, text)`` with kind ``"negative"`` (a negative principal moment), ``"triangle"`` (the
    triangle inequality fails) or ``"massless"`` (a non-zero inertia without mass); ``None`` when it is physical
    to within round-off (see the module docstring)."""
    if not np.any(inertia):
        return None
    moments = principal_moments(inertia)
    tol = INERTIA_RTOL * inertia_scale(mass, com, inertia)
    i1, i2, i3 = moments
    if i1 < -tol:
        return "negative", (f"inertia has a negative principal moment (principal moments {_shown(moments)}; expected "
                            "a positive semi-definite tensor)")
    if mass == 0 and i3 > tol:
        return "massless", (f"a body of mass 0 has a non-zero inertia (principal moments {_shown(moments)}); no mass "
                            "distribution has it")
    if i1 + i2 < i3 - tol:
        return "triangle", (f"principal moments {_shown(moments)} violate the triangle inequality I1 + I2 >= I3 "
                            f"(short by {i3 - i1 - i2:.3g}); no mass distribution has this inertia")
    return None


#: the half-spaces a·λ >= 0 of physical principal moments: λ_k >= 0 and the three triangle inequalities
_CONE = np.array([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, -1], [1, -1, 1], [-1, 1, 1]])


def _project_moments(lam):
    """The nearest point (Euclidean) to ``lam`` of the cone of physical principal moments: the best feasible
    projection onto the faces of the cone (every set of at most 3 active constraints), which is the projection
    onto the convex cone."""
    best, best_d = np.zeros(3), float(np.dot(lam, lam))
    tol = 1e-12 * max(1.0, float(np.max(np.abs(lam))))
    for k in range(4):
        for active in itertools.combinations(range(6), k):
            A = _CONE[list(active)]
            if k and np.linalg.matrix_rank(A) < k:
                continue
            x = lam - A.T @ np.linalg.solve(A @ A.T, A @ lam) if k else lam.copy()
            if np.all(_CONE @ x >= -tol):
                d = float(np.dot(x - lam, x - lam))
                if d < best_d:
                    best, best_d = x, d
    return best


def nearest_physical(mass, inertia):
    """The physical inertia nearest to ``inertia`` in the Frobenius norm, and that distance: the principal axes
    are kept and the principal moments projected onto the cone ``λ_k >= 0``, ``λ_i + λ_j >= λ_k`` (the set of
    physical tensors is invariant under rotations, so its nearest point keeps the eigenvectors: A. S. Lewis,
    "Convex analysis on the Hermitian matrices", SIAM J. Optim. 6, 1996). A body of mass 0 gets inertia 0."""
    inertia = np.asarray(inertia, dtype=float)
    if mass == 0 or not np.any(inertia):
        return np.zeros((3, 3)), float(np.linalg.norm(inertia))
    scale = np.max(np.abs(inertia))
    lam, V = np.linalg.eigh(inertia / scale)
    lam_new = np.maximum(_project_moments(lam), 0.0)
    i1, i2, i3 = np.argsort(lam_new)              # the projection's round-off: made exactly physical
    lam_new[i3] = min(lam_new[i3], lam_new[i1] + lam_new[i2])
    fixed = (V * lam_new) @ V.T * scale
    fixed = 0.5 * fixed + 0.5 * fixed.T
    return fixed, float(np.linalg.norm(lam - lam_new) * scale)


def apply_policy(mass, com, inertia, policy, element, keep_negative=False):
    """``(inertia, note)``: the tensor the body keeps under ``policy`` and, when it is not physical, a note for
    the model's one ``InertiaWarning`` (None when there is nothing to say); a ``ModelError`` naming ``element``
    for what the policy refuses. ``keep_negative``: a negative principal moment is kept too under ``"warn"`` and
    ``"accept"`` (for a part of a body, such as a URDF link fixed to another: the body it is part of is checked)."""
    if policy not in POLICIES:
        raise ModelError(f"{element}: inertia policy must be one of {', '.join(POLICIES)}, got {policy!r}",
                         element=element)
    defect = inertia_defect(mass, com, inertia)
    if defect is None:
        return inertia, None
    kind, text = defect
    if policy == "repair":
        fixed, distance = nearest_physical(mass, inertia)
        size = float(np.linalg.norm(inertia))
        return fixed, (f"{text}; repaired to principal moments {_shown(principal_moments(fixed))}, moved by "
                       f"{distance:.3g} kg m² ({distance / size:.2g} of its norm)")
    if policy == "refuse" or (kind == "negative" and not keep_negative):
        hint = ("; the inertia policy 'repair' moves it to the nearest physical one" if kind == "negative" else
                "; the inertia policy 'warn' keeps it as written, 'repair' moves it to the nearest physical one")
        hint += " (ModelBuilder(inertia=...), a model file's inertia_check, repair=True of the readers)"
        raise ModelError(f"{element}: {text}{hint}", element=element)
    return inertia, (text if policy == "warn" else None)


# ---- singular dynamics -------------------------------------------------------------------------------------------
def combine_rigid(parts):
    """Mass, centre and inertia about the centre (all in one frame) of rigidly joined parts ``[(m, c, I_c)]``: the
    masses add, the centre is their weighted mean, the inertias are moved to it (parallel axes). Massless parts add
    their inertia alone."""
    parts = list(parts)
    if not parts:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    if len(parts) == 1:
        return parts[0]
    m = sum(p[0] for p in parts)
    if m == 0:
        return 0.0, np.zeros(3), sum((np.asarray(p[2]) for p in parts), np.zeros((3, 3)))
    c = sum(p[0] * np.asarray(p[1]) for p in parts) / m
    inertia = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = np.asarray(ci) - c
        inertia += Ii + mi * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, 0.5 * (inertia + inertia.T)


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def spatial_inertia(mass, com, inertia):
    """The 6x6 spatial inertia ``[angular; linear]`` about the frame's origin (Featherstone 2008, eq. 2.63)."""
    C = _skew(com)
    out = np.empty((6, 6))
    out[:3, :3] = inertia + mass * (C @ C.T)
    out[:3, 3:] = mass * C
    out[3:, :3] = mass * C.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def _joint_motion(jt, axes, rng):
    """A generic relative transform (R, p) of a joint (child frame in the joint frame) and its motion subspace S
    (6 x nv, child coordinates) there — for the joint's column space only, which is all the rank test needs."""
    a, b = axes[0], axes[1]
    th, d = rng.uniform(-np.pi, np.pi), rng.uniform(-1.0, 1.0)
    E, z = np.eye(3), np.zeros(3)
    ang = (lambda *cols: np.vstack([np.column_stack(cols), np.zeros((3, len(cols)))]))
    lin = (lambda *cols: np.vstack([np.zeros((3, len(cols))), np.column_stack(cols)]))
    if jt == REVOLUTE:
        return rotation_about(a, th), z, ang(a)
    if jt == PRISMATIC:
        return E, d * a, lin(a)
    if jt == CYLINDRICAL:
        return rotation_about(a, th), d * a, np.hstack([ang(a), lin(a)])
    if jt == UNIVERSAL:
        R2 = rotation_about(b, rng.uniform(-np.pi, np.pi))
        return rotation_about(a, th) @ R2, z, ang(R2.T @ a, b)
    if jt == PLANAR:
        return rotation_about((0, 0, 1), th), np.array([d, rng.uniform(-1, 1), 0.0]), np.hstack(
            [ang(E[2]), lin(E[0], E[1])])
    R = rotation_about(rng.normal(size=3), th)
    if jt == SPHERICAL:
        return R, z, ang(E[0], E[1], E[2])
    if jt == FREE:
        return R, rng.uniform(-1, 1, 3), np.eye(6)
    return E, z, np.zeros((6, 0))   # FIXED


def random_motions(arrays, rng):
    """For each body i (1..n): ``X[i]``, the 6x6 transform of motion vectors from its parent's frame to its own
    at a random configuration of its joint drawn from ``rng``, and ``S[i]``, the joint's motion subspace there."""
    n = len(arrays["parent"]) - 1
    X = [None] * (n + 1)
    S = [None] * (n + 1)
    for i in range(1, n + 1):
        Rj, pj, S[i] = _joint_motion(arrays["jtype"][i], arrays["jaxis"][i], rng)
        R = arrays["jplace_R"][i] @ Rj
        p = arrays["jplace_p"][i] + arrays["jplace_R"][i] @ pj
        X[i] = np.zeros((6, 6))                       # X_{child <- parent}, motion vectors [angular; linear]
        X[i][:3, :3] = X[i][3:, 3:] = R.T
        X[i][3:, :3] = -R.T @ _skew(p)
    return X, S


def articulated_pivots(arrays, X, S):
    """The articulated-body recursion from the leaves to the root (Featherstone 2008, Table 7.1) at the motions
    ``X``, ``S`` (:func:`random_motions`): for each joint that moves, ``(i, D, N)`` — D = Sᵀ I^A S and N = Sᵀ I^C S
    (the composite inertia it moves), the armature on their diagonals. Each I^A is kept symmetric (the module
    docstring); the caller stops at a singular D."""
    parent = arrays["parent"]
    n = len(parent) - 1
    IA = [None] + [spatial_inertia(arrays["mass"][i], arrays["com"][i], arrays["inertia_com"][i])
                   for i in range(1, n + 1)]
    IC = [None] + [x.copy() for x in IA[1:]]
    armature = arrays.get("dof_armature")
    for i in range(n, 0, -1):
        Ia = IA[i]
        if S[i].shape[1]:
            A = 0.0 if armature is None else np.diag(armature[arrays["idx_v"][i]:arrays["idx_v"][i] + S[i].shape[1]])
            U = IA[i] @ S[i]
            D = S[i].T @ U + A      # the rotors' armature on the diagonal (``kinematics.armature``)
            yield i, D, S[i].T @ IC[i] @ S[i] + A
            Ia = IA[i] - U @ np.linalg.solve(D, U.T)
            Ia = 0.5 * (Ia + Ia.T)
        if parent[i] > 0:
            IA[parent[i]] = IA[parent[i]] + X[i].T @ Ia @ X[i]
            IC[parent[i]] = IC[parent[i]] + X[i].T @ IC[i] @ X[i]


def _singular_at(arrays, rng):
    """The first joint (body index, its D, the composite inertia it moves) whose D = Sᵀ I^A S is singular at a
    random configuration drawn from ``rng``, or None."""
    for i, D, N in articulated_pivots(arrays, *random_motions(arrays, rng)):
        scale = np.sqrt(np.clip(np.diag(N), 0.0, None))
        if not np.all(scale > 0) or np.linalg.eigvalsh(D / np.outer(scale, scale))[0] <= SINGULAR_RTOL:
            return i, D, N
    return None


def singular_joint(arrays, body_names, joint_names):
    """``(body name, message)`` naming the joint and body whose articulated inertia makes the mass matrix singular
    (see the module docstring), or None. ``arrays``: the Model's arrays (kernel frames, regular numbering). The
    test runs at a random configuration (a fixed seed) and a singular joint is confirmed at a second one, so
    what is refused is singular at (almost) every configuration; models with a ``GeneralJoint`` are not tested."""
    if np.any(arrays["jtype"] == GENERAL):
        return None
    found = _singular_at(arrays, np.random.default_rng(20_241_126))
    if found is None or _singular_at(arrays, np.random.default_rng(7)) is None:
        return None
    i, D, N = found
    kind = {REVOLUTE: "rotation about its axis", PRISMATIC: "translation along its axis"}.get(
        int(arrays["jtype"][i]), "motion")
    carried = [k for k in range(i, len(body_names)) if _descends(arrays["parent"], k, i)]
    what = (f"the bodies it carries have no inertia for its {kind}" if not np.all(np.diag(N) > 0) else
            f"the articulated inertia for its {kind} is singular")
    bodies = ", ".join(f"'{body_names[k]}' (mass {arrays['mass'][k]:.6g}, principal moments "
                       f"{_shown(principal_moments(arrays['inertia_com'][k]))})" for k in carried[:4])
    more = f" and {len(carried) - 4} more" if len(carried) > 4 else ""
    return body_names[i], (
        f"body '{body_names[i]}' on joint '{joint_names[i]}' makes the mass matrix singular: {what} "
        f"(D = Sᵀ I^A S has eigenvalues {_shown(np.linalg.eigvalsh(D))}, expected positive; bodies moved by the "
        f"joint: {bodies}{more}), as a point mass on a hinge axis, a massless leaf body or a zero principal moment "
        "about the axis do; give the bodies inertia along the joint's motion")


def _descends(parent, k, i):
    while k > i:
        k = parent[k]
    return k == i
