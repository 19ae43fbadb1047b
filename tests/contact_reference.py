"""An independent reference for contact detection: signed distances of convex shapes from their support
functions, by optimization over the directions (numpy + scipy; no code of multibody's detection).

For convex A and B, with h_X(u) = max_{x in X} u.x,

    d(A, B) = max_{|u| = 1} g(u),   g(u) = -(h_A(u) + h_B(-u)),

the distance when they are apart, minus the penetration depth when they overlap (the shortest translation of B
that parts them is d u at the maximizer). :func:`reference_distance` takes the best of g over a Fibonacci
sphere of directions and the separating-axis candidates of the polytopes (face normals, products of edge
directions), and refines the best few with Nelder-Mead in a chart of the sphere around each. :func:`surface_gap`
is each shape's signed distance function (from the textbook formulas), to check that witness points lie on
the surfaces.

A shape is a dict: ``kind`` ("sphere", "capsule", "cylinder", "box", "hull", "halfspace"), ``R`` (3x3) and ``p``
(3,) its pose in world, and ``radius``, ``half`` (half length), ``half_sizes`` or ``verts`` (local, (k, 3)).
"""
import numpy as np
from scipy.optimize import minimize
from scipy.spatial import ConvexHull


def support_value(s, u):
    """h_S(u) for a world direction u (any length)."""
    R, p = s["R"], s["p"]
    lu = R.T @ u
    k = s["kind"]
    base = float(p @ u)
    if k == "sphere":
        return base + s["radius"] * np.linalg.norm(u)
    if k == "capsule":
        return base + s["half"] * abs(lu[2]) + s["radius"] * np.linalg.norm(u)
    if k == "cylinder":
        return base + s["half"] * abs(lu[2]) + s["radius"] * np.hypot(lu[0], lu[1])
    if k == "box":
        return base + float(np.abs(lu) @ s["half_sizes"])
    if k == "hull":
        return base + float(np.max(s["verts"] @ lu))
    raise ValueError(k)


def surface_gap(s, x):
    """The signed distance of the world point x from the surface of shape s (0 on it; for a hull, the largest
    face-plane offset, 0 on its surface too)."""
    R, p = s["R"], s["p"]
    lx = R.T @ (np.asarray(x, float) - p)
    k = s["kind"]
    if k == "halfspace":
        return lx[2]
    if k == "sphere":
        return np.linalg.norm(lx) - s["radius"]
    if k == "capsule":
        z = np.clip(lx[2], -s["half"], s["half"])
        return np.linalg.norm(lx - [0.0, 0.0, z]) - s["radius"]
    if k == "cylinder":
        d = np.array([np.hypot(lx[0], lx[1]) - s["radius"], abs(lx[2]) - s["half"]])
        return np.linalg.norm(np.maximum(d, 0.0)) + min(max(d[0], d[1]), 0.0)
    if k == "box":
        q = np.abs(lx) - s["half_sizes"]
        return np.linalg.norm(np.maximum(q, 0.0)) + min(q.max(), 0.0)
    if k == "hull":
        eq = ConvexHull(s["verts"]).equations
        return float(np.max(eq[:, :3] @ lx + eq[:, 3]))
    raise ValueError(k)


def _fibonacci(n):
    k = np.arange(n) + 0.5
    z = 1.0 - 2.0 * k / n
    r = np.sqrt(1.0 - z * z)
    phi = np.pi * (1.0 + 5 ** 0.5) * k
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _axes(s):
    """Separating-axis candidates of a shape: face normals and edge directions (world), each a list."""
    R = s["R"]
    k = s["kind"]
    if k == "box":
        return list(R.T), list(R.T)
    if k == "hull":
        hull = ConvexHull(s["verts"])
        faces = [R @ e[:3] for e in hull.equations]
        edges = []
        for simplex in hull.simplices:
            for i in range(3):
                e = s["verts"][simplex[(i + 1) % 3]] - s["verts"][simplex[i]]
                edges.append(R @ e)
        return faces, edges
    if k in ("capsule", "cylinder"):
        return [R[:, 2]], [R[:, 2]]
    return [], []


def reference_distance(a, b, extra=(), n_sphere=600, refine=8):
    """max over unit u of g(u) (see the module docstring) and its maximizer; ``extra``: more starting directions."""
    if a["kind"] == "halfspace":
        n = a["R"][:, 2]
        return -support_value(b, -n) - float(-n @ a["p"]), n

    def g(u):
        u = u / np.linalg.norm(u)
        return -(support_value(a, u) + support_value(b, -u))

    cands = list(_fibonacci(n_sphere)) + [np.asarray(e, float) for e in extra]
    fa, ea = _axes(a)
    fb, eb = _axes(b)
    cands += fa + fb
    for x in ea:
        for y in eb:
            c = np.cross(x, y)
            if np.linalg.norm(c) > 1e-9 * np.linalg.norm(x) * np.linalg.norm(y):
                cands.append(c)
    cands = [c / np.linalg.norm(c) for c in cands if np.linalg.norm(c) > 0]
    cands += [-c for c in cands]
    vals = np.array([g(c) for c in cands])
    best_val, best_u = -np.inf, None
    for i in np.argsort(-vals)[:refine]:
        c = cands[i]
        t1 = np.cross(c, [1.0, 0, 0] if abs(c[0]) < 0.9 else [0, 1.0, 0])
        t1 /= np.linalg.norm(t1)
        t2 = np.cross(c, t1)

        def chart(x, c=c, t1=t1, t2=t2):
            return c + x[0] * t1 + x[1] * t2

        res = minimize(lambda x: -g(chart(x)), np.zeros(2), method="Nelder-Mead",
                       options={"xatol": 1e-13, "fatol": 1e-15, "maxiter": 4000, "initial_simplex":
                                np.array([[0, 0], [1e-3, 0], [0, 1e-3]])})
        for val, u in ((vals[i], c), (-res.fun, chart(res.x))):
            if val > best_val:
                best_val, best_u = val, u / np.linalg.norm(u)
    return best_val, best_u
