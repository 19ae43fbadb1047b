"""The constraint primitives of the Cartesian formulation (seed 001 §§2.3–2.5), vectorized over the rows of one
kind: each gives the book's ``Q_i``, ``Q_j``, ``b`` of ``Q_i Ẍ_i + Q_j Ẍ_j = b`` (eqs. 2.22, 2.28, 2.43) and the
position residual of every row (:data:`EVALUATORS` by kind)."""
import numpy as np

from multibody.errors import ModelError
from multibody.model.rotations import perpendicular_axes


OMEGA = np.array([[0.0, -1.0], [1.0, 0.0]])


def unit_vector(v):
    v = np.asarray(v, dtype=float)
    n = np.linalg.norm(v)
    if n == 0:
        raise ModelError("a joint axis or normal must be a non-zero vector", element=str(v))
    return v / n


def perpendicular_frame(a):
    """Two unit vectors n2, n3 with (a, n2, n3) right-handed and orthonormal."""
    return perpendicular_axes(unit_vector(a))


def eval_planar_pointline(P, K):
    """Planar point–line constraints, seed 001 eq. 2.43 (verified form of §2.5).

    ``n`` (k, m, 2) normals fixed in body i, ``p`` (k, 2) a point of the line (body i, from c_i),
    ``rho`` (k, 2) the point of body j (body j axes, from c_j).  Position residual
    ``nᵀ(A_iᵀ ρ_ik − p)`` (eq. 2.34, sign chosen so its time derivative is ``Q_i V_i + Q_j V_j``).
    """
    n, p, rho = P["n"], P["p"], P["rho"]
    Ai, ri, vi, wi = K["Ai"], K["ri"], K["vi"], K["wi"]
    Aj, rj, vj, wj = K["Aj"], K["rj"], K["vj"], K["wj"]
    Ajrho = np.einsum("kab,kb->ka", Aj, rho)
    rho_ik = rj + Ajrho - ri
    nA = np.einsum("kma,kba->kmb", n, Ai)                      # nᵀ A_iᵀ
    OT_rho = np.stack([rho_ik[:, 1], -rho_ik[:, 0]], axis=-1)  # Ωᵀ ρ_ik
    O_Ajrho = np.stack([-Ajrho[:, 1], Ajrho[:, 0]], axis=-1)   # Ω A_j ρ_jk
    k, m = n.shape[0], n.shape[1]
    Qi = np.empty((k, m, 3))
    Qj = np.empty((k, m, 3))
    Qi[:, :, :2] = -nA
    Qi[:, :, 2] = np.einsum("kmb,kb->km", nA, OT_rho)
    Qj[:, :, :2] = nA
    Qj[:, :, 2] = np.einsum("kmb,kb->km", nA, O_Ajrho)
    rhod = vj - vi + wj[:, None] * O_Ajrho                       # eq. 2.39
    OT_rhod = np.stack([rhod[:, 1], -rhod[:, 0]], axis=-1)
    vec = (wi ** 2)[:, None] * rho_ik - 2.0 * wi[:, None] * OT_rhod + (wj ** 2)[:, None] * Ajrho
    b = np.einsum("kmb,kb->km", nA, vec)
    phi = np.einsum("kmb,kb->km", nA, rho_ik) - np.einsum("kma,ka->km", n, p)
    return Qi, Qj, b, phi


def eval_planar_angle(P, K):
    """Planar relative rotation ``φ_j − φ_i − θ0 = 0`` (seed 001, eq. 2.32; the book writes φ_i − φ_j)."""
    k = P["theta0"].shape[0]
    Qi = np.zeros((k, 1, 3))
    Qj = np.zeros((k, 1, 3))
    Qi[:, 0, 2] = -1.0
    Qj[:, 0, 2] = 1.0
    b = np.zeros((k, 1))
    phi = (K["phj"] - K["phi"] - P["theta0"])[:, None]
    return Qi, Qj, b, phi


def eval_point_plane(P, K):
    """Spatial point–plane constraints, seed 001 eq. 2.22 (one row per normal; 3 rows = spherical, eq. 2.44).

    ``n`` (k, m, 3) normals fixed in body i, ``p`` (k, 3) a point of the plane (body i axes, from c_i),
    ``rho`` (k, 3) the point of body j (ρ_ji, body j axes).  Position residual ``nᵀ(ρ_ij^(i) − p)``.
    """
    n, p, rho = P["n"], P["p"], P["rho"]
    Ai, ri, vi, wi = K["Ai"], K["ri"], K["vi"], K["wi"]
    Aj, rj, vj, wj = K["Aj"], K["rj"], K["vj"], K["wj"]
    Ajrho = np.einsum("kab,kb->ka", Aj, rho)
    d0 = Ajrho + rj - ri                                     # ρ_ij^(0), eq. 2.15
    di = np.einsum("kba,kb->ka", Ai, d0)                     # ρ_ij^(i)
    nA = np.einsum("kma,kba->kmb", n, Ai)                    # nᵀ A_iᵀ  (= (A_i n)ᵀ)
    nj = np.einsum("kba,kmb->kma", Aj, nA)                   # A_jᵀ A_i n
    k, m = n.shape[0], n.shape[1]
    Qi = np.empty((k, m, 6))
    Qj = np.empty((k, m, 6))
    Qi[:, :, :3] = -nA
    Qi[:, :, 3:] = np.cross(n, di[:, None, :])               # nᵀ ρ̃_ij^(i)
    Qj[:, :, :3] = nA
    Qj[:, :, 3:] = np.cross(rho[:, None, :], nj)             # −nᵀ A_iᵀ A_j ρ̃_ji
    d0dot = np.einsum("kab,kb->ka", Aj, np.cross(wj, rho)) + vj - vi   # eq. 2.16
    wxr = np.cross(wj, np.cross(wj, rho))
    vec_i = 2.0 * np.cross(wi, np.einsum("kba,kb->ka", Ai, d0dot)) - np.cross(wi, np.cross(wi, di))
    b = np.einsum("kma,ka->km", n, vec_i) - np.einsum("kma,ka->km", nj, wxr)
    phi = np.einsum("kma,ka->km", n, di - p)
    return Qi, Qj, b, phi


def rotation_rows(n, K):
    Ai, wi, Aj, wj = K["Ai"], K["wi"], K["Aj"], K["wj"]
    Rrel = np.einsum("kba,kbc->kac", Ai, Aj)                  # A_iᵀ A_j
    nj = np.einsum("kba,kmb->kma", Rrel, n)                   # A_jᵀ A_i n
    k, m = n.shape[0], n.shape[1]
    Qi = np.zeros((k, m, 6))
    Qj = np.zeros((k, m, 6))
    Qi[:, :, 3:] = -n
    Qj[:, :, 3:] = nj
    wj_i = np.einsum("kab,kb->ka", Rrel, wj)
    b = np.einsum("kma,ka->km", n, np.cross(wi, wj_i))       # eq. 2.29
    return Qi, Qj, b, Rrel


def eval_rotation_lock(P, K):
    """Relative-rotation constraints about normals fixed in body i, seed 001 eqs. 2.27–2.29.

    Position residual ``nᵀ vee(A_iᵀ A_j R0ᵀ)`` with ``R0`` the locked relative orientation: its time
    derivative equals ``nᵀ(A_iᵀA_jω_j − ω_i)`` where the relative rotation is R0.
    """
    Qi, Qj, b, Rrel = rotation_rows(P["n"], K)
    Rerr = np.einsum("kab,kcb->kac", Rrel, P["R0"])
    vee = 0.5 * np.stack([Rerr[:, 2, 1] - Rerr[:, 1, 2], Rerr[:, 0, 2] - Rerr[:, 2, 0],
                          Rerr[:, 1, 0] - Rerr[:, 0, 1]], axis=-1)
    phi = np.einsum("kma,ka->km", P["n"], vee)
    return Qi, Qj, b, phi


def eval_rotation_align(P, K):
    """The two rotation rows of a hinge (seed 001 §2.6.1, k = 4, 5): rotation blocked about n2, n3 ⟂ axis.

    Position residual ``−(a_i × n)ᵀ A_iᵀ A_j a_j`` (axis a_i in body i, a_j in body j): zero when the
    axes are aligned, and its derivative there is ``nᵀ(A_iᵀA_jω_j − ω_i)``.
    """
    Qi, Qj, b, Rrel = rotation_rows(P["n"], K)
    aj_i = np.einsum("kab,kb->ka", Rrel, P["aj"])
    phi = -np.einsum("kma,ka->km", np.cross(P["ai"][:, None, :], P["n"]), aj_i)
    return Qi, Qj, b, phi


def eval_rotation_perp(P, K):
    """Axis ``u`` of body i and axis ``w`` of body j keep a constant angle: ``uᵀ A_iᵀ A_j w = c`` (1 row).

    The book's relative-rotation row (seed 001 §2.4, eqs. 2.27–2.29) about the common normal
    ``n = (A_iᵀA_j w) × u``, which is not fixed in body i: its time derivative is
    ``ḟ = nᵀ(A_iᵀA_jω_j − ω_i)`` exactly, and the second derivative adds ``ṅᵀ ω_rel`` to eq. 2.29,
    ``b = nᵀ ω̃_i A_iᵀA_j ω_j − ṅᵀ ω_rel`` with ``ω_rel = A_iᵀA_jω_j − ω_i`` (body i axes) and
    ``ṅ = (ω_rel × A_iᵀA_j w) × u``.  Used for the cross of a universal joint.
    """
    u, w = P["u"], P["w"]
    Rrel = np.einsum("kba,kbc->kac", K["Ai"], K["Aj"])        # A_iᵀ A_j
    w_i = np.einsum("kab,kb->ka", Rrel, w)                     # w in body i axes
    n = np.cross(w_i, u)
    Qi, Qj, b, Rrel = rotation_rows(n[:, None, :], K)
    w_rel = np.einsum("kab,kb->ka", Rrel, K["wj"]) - K["wi"]
    ndot = np.cross(np.cross(w_rel, w_i), u)
    b = b - np.einsum("ka,ka->k", ndot, w_rel)[:, None]
    phi = (np.einsum("ka,ka->k", u, w_i) - P["c"])[:, None]
    return Qi, Qj, b, phi


EVALUATORS = {
    "pl": eval_planar_pointline, "pa": eval_planar_angle,
    "pp": eval_point_plane, "rl": eval_rotation_lock, "ra": eval_rotation_align,
    "rp": eval_rotation_perp,
}
