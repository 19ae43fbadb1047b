"""The scalar-unrolled spatial algebra of kernels/spatial.py against dense 6x6 numpy (RBDA ch. 2 formulas).

Spatial vectors are [angular; linear]; the child frame is at (R, p) in the parent (R child -> parent).
"""
import numpy as np
import pytest

from multibody.kernels import spatial as sp
from multibody.model.rotations import rotation_about

rng = np.random.default_rng(0)


def skew(p):
    return np.array([[0, -p[2], p[1]], [p[2], 0, -p[0]], [-p[1], p[0], 0]])


def crm(m):
    """The 6x6 matrix of m× on motion vectors (RBDA ch. 2)."""
    out = np.zeros((6, 6))
    out[:3, :3] = skew(m[:3])
    out[3:, :3] = skew(m[3:])
    out[3:, 3:] = skew(m[:3])
    return out


def X_child_parent(R, p):
    """Motion transform parent -> child coordinates (RBDA ch. 2)."""
    X = np.zeros((6, 6))
    X[:3, :3] = R.T
    X[3:, 3:] = R.T
    X[3:, :3] = -R.T @ skew(p)
    return X


def random_rotation():
    return rotation_about(rng.normal(size=3), rng.uniform(-np.pi, np.pi))


def unpack(I21):
    M = np.zeros((6, 6))
    for r in range(6):
        for c in range(6):
            M[r, c] = I21[sp.SYM6_INDEX[r, c]]
    return M


def pack(M):
    return tuple(M[r, c] for r in range(6) for c in range(r, 6))


def T(x):
    return tuple(float(a) for a in np.ravel(x))


def test_cross_products():
    m, n = rng.normal(size=6), rng.normal(size=6)
    np.testing.assert_allclose(sp.motion_cross_motion(*m, *n), crm(m) @ n, rtol=0, atol=1e-14)
    np.testing.assert_allclose(sp.force_cross_motion(*m, *n), -crm(m).T @ n, rtol=0, atol=1e-14)
    np.testing.assert_allclose(sp.cross3(*m[:3], *n[:3]), np.cross(m[:3], n[:3]), rtol=0, atol=1e-15)
    assert sp.dot6(*m, *n) == pytest.approx(m @ n, rel=1e-15)


def test_transforms():
    R, p = random_rotation(), rng.normal(size=3)
    m, f = rng.normal(size=6), rng.normal(size=6)
    X = X_child_parent(R, p)
    np.testing.assert_allclose(sp.transform_motion_to_child(T(R), T(p), *m), X @ m, rtol=0, atol=1e-14)
    np.testing.assert_allclose(sp.transform_motion_to_parent(T(R), T(p), *m), np.linalg.solve(X, m), rtol=0, atol=1e-13)
    np.testing.assert_allclose(sp.transform_force_to_parent(T(R), T(p), *f), X.T @ f, rtol=0, atol=1e-14)
    np.testing.assert_allclose(sp.transform_force_to_child(T(R), T(p), *f), np.linalg.solve(X.T, f), rtol=0, atol=1e-13)
    # power is invariant: (X m)·f_child = m·(Xᵀ f_child)
    fc = rng.normal(size=6)
    assert np.dot(sp.transform_motion_to_child(T(R), T(p), *m), fc) == pytest.approx(
        np.dot(m, sp.transform_force_to_parent(T(R), T(p), *fc)), rel=1e-13)


def test_inertias():
    R, p = random_rotation(), rng.normal(size=3)
    m = 2.5
    c = rng.normal(size=3)
    Q = random_rotation()
    Ic = Q @ np.diag([1.0, 1.5, 2.0]) @ Q.T
    Ic6 = (Ic[0, 0], Ic[0, 1], Ic[0, 2], Ic[1, 1], Ic[1, 2], Ic[2, 2])
    h, I = sp.rigid_inertia_world(T(R), T(p), m, T(c), Ic6)
    cw = p + R @ c
    np.testing.assert_allclose(h, m * cw, rtol=0, atol=1e-14)
    IO = R @ Ic @ R.T + m * (cw @ cw * np.eye(3) - np.outer(cw, cw))
    np.testing.assert_allclose(I, [IO[0, 0], IO[0, 1], IO[0, 2], IO[1, 1], IO[1, 2], IO[2, 2]], rtol=0, atol=1e-13)
    dense = np.block([[IO, skew(m * cw)], [skew(m * cw).T, m * np.eye(3)]])
    v = rng.normal(size=6)
    np.testing.assert_allclose(sp.rigid_inertia_times_motion(m, h, I, *v), dense @ v, rtol=0, atol=1e-13)
    # the same inertia built in the body frame and transformed with transform_inertia_to_parent
    body = np.block([[Ic + m * (c @ c * np.eye(3) - np.outer(c, c)), skew(m * c)], [skew(m * c).T, m * np.eye(3)]])
    np.testing.assert_allclose(unpack(sp.transform_inertia_to_parent(T(R), T(p), pack(body))), dense,
                               rtol=0, atol=1e-12)
    # a general symmetric (articulated) inertia: Xᵀ I X
    G = rng.normal(size=(6, 6))
    G = G @ G.T
    X = X_child_parent(R, p)
    np.testing.assert_allclose(unpack(sp.transform_inertia_to_parent(T(R), T(p), pack(G))), X.T @ G @ X,
                               rtol=0, atol=1e-12)
    out = np.zeros((2, 21))
    sp.store_rigid_inertia_sym6(out, 1, m, h, I)
    np.testing.assert_allclose(unpack(out[1]), dense, rtol=0, atol=1e-13)
    sp.add_rigid_inertia_sym6(out, 1, m, h, I)
    np.testing.assert_allclose(unpack(out[1]), 2 * dense, rtol=0, atol=1e-13)


def test_sym6_rows():
    A = np.zeros((3, 21))
    G = rng.normal(size=(6, 6))
    G = G + G.T
    H = rng.normal(size=(6, 6))
    H = H + H.T
    A[0] = pack(G)
    A[2] = pack(H)
    x = rng.normal(size=6)
    np.testing.assert_allclose(sp.sym6_times(A, 0, *x), G @ x, rtol=0, atol=1e-14)
    u = rng.normal(size=6)
    sp.sym6_add_rank1_update(A, 2, A, 0, 0.7, *u)
    np.testing.assert_allclose(unpack(A[2]), H + G - 0.7 * np.outer(u, u), rtol=0, atol=1e-14)
    sp.sym6_copy(A, 1, A, 0)
    sp.sym6_add(A, 1, A, 0)
    np.testing.assert_allclose(unpack(A[1]), 2 * G, rtol=0, atol=1e-14)
    B = np.zeros((1, 8))
    sp.store6(B, 0, 2, tuple(x))
    np.testing.assert_array_equal(sp.load6(B, 0, 2), x)


def test_rotations_and_quaternions():
    a = rng.normal(size=3)
    a /= np.linalg.norm(a)
    th = 0.8
    np.testing.assert_allclose(np.reshape(sp.rotation_axis_angle(*a, np.cos(th), np.sin(th)), (3, 3)),
                               rotation_about(a, th), rtol=0, atol=1e-15)
    np.testing.assert_allclose(np.reshape(sp.rotation_z(np.cos(th), np.sin(th)), (3, 3)),
                               rotation_about((0, 0, 1), th), rtol=0, atol=1e-15)
    A, B = random_rotation(), random_rotation()
    np.testing.assert_allclose(np.reshape(sp.mat3_mul(T(A), T(B)), (3, 3)), A @ B, rtol=0, atol=1e-15)
    x = rng.normal(size=3)
    np.testing.assert_allclose(sp.mat3_vec(T(A), *x), A @ x, rtol=0, atol=1e-15)
    np.testing.assert_allclose(sp.mat3T_vec(T(A), *x), A.T @ x, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(np.reshape(sp.mat3_T(T(A)), (3, 3)), A.T)
    np.testing.assert_allclose(np.reshape(sp.skew(*x), (3, 3)) @ a, np.cross(x, a), rtol=0, atol=1e-15)
    S = rng.normal(size=(3, 3))
    S = S + S.T
    S6 = (S[0, 0], S[0, 1], S[0, 2], S[1, 1], S[1, 2], S[2, 2])
    RS = A @ S @ A.T
    np.testing.assert_allclose(sp.rotate_sym3(T(A), S6), [RS[0, 0], RS[0, 1], RS[0, 2], RS[1, 1], RS[1, 2], RS[2, 2]],
                               rtol=0, atol=1e-14)
    D = A @ np.diag(x) @ A.T
    np.testing.assert_allclose(sp.rotate_diag3(T(A), *x), [D[0, 0], D[0, 1], D[0, 2], D[1, 1], D[1, 2], D[2, 2]],
                               rtol=0, atol=1e-14)
    for axis in (1, -1, 2, -2, 3, -3):  # A rot(±e_k, θ)
        e = np.zeros(3)
        e[abs(axis) - 1] = np.sign(axis)
        np.testing.assert_allclose(np.reshape(sp.mat3_times_axis_rotation(T(A), axis, np.cos(th), np.sin(th)), (3, 3)),
                                   A @ rotation_about(e, th), rtol=0, atol=1e-15)
    # quaternion (cos θ/2, sin θ/2 a) is rot(a, θ); products compose rotations; exp and log are inverse
    qa = (np.cos(th / 2), *(np.sin(th / 2) * a))
    np.testing.assert_allclose(np.reshape(sp.quat_to_rotation(*qa), (3, 3)), rotation_about(a, th), rtol=0, atol=1e-15)
    np.testing.assert_allclose(sp.quat_exp(*(th * a)), qa, rtol=0, atol=1e-15)
    np.testing.assert_allclose(sp.quat_log(*qa), th * a, rtol=0, atol=1e-15)
    np.testing.assert_allclose(sp.quat_log(*(-np.array(qa))), th * a, rtol=0, atol=1e-15)  # q and −q: same rotation
    b = rng.normal(size=3)
    qb = sp.quat_exp(*b)
    np.testing.assert_allclose(np.reshape(sp.quat_to_rotation(*sp.quat_mul(*qa, *qb)), (3, 3)),
                               rotation_about(a, th) @ np.reshape(sp.quat_to_rotation(*qb), (3, 3)), rtol=0, atol=1e-14)
    np.testing.assert_allclose(sp.quat_exp(1e-10, 0.0, 0.0), (1.0, 5e-11, 0.0, 0.0), rtol=0, atol=1e-20)
    np.testing.assert_allclose(sp.quat_log(*sp.quat_exp(3e-9, -1e-9, 2e-9)), (3e-9, -1e-9, 2e-9), rtol=1e-12)
