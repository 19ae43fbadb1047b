"""The centre of mass, the centroidal momentum matrix and its time derivative, the rate of the centroidal momentum.

Order: a centroidal quantity here is ``[angular; linear]`` like every spatial vector of the library — the
angular momentum about the centre of mass c, then the linear momentum, in ground axes (Pinocchio's ``hg`` is
``[linear; angular]``). The centroidal momentum is h_G = A_G(q) v (Orin & Goswami, "Centroidal momentum matrix
of a humanoid robot", 2008; Orin, Goswami & Lee, Auton. Robots 35, 2013), and ḣ_G = A_G q̈ + Ȧ_G v is the sum of
the external forces about c.

Method (RBDA §6.2, the composite rigid bodies, in ground Plücker coordinates, as Pinocchio's
``computeCentroidalMap``): with Y_j the spatial inertia of body j about the ground origin and Y^c_i = Σ_{j in the
subtree of i} Y_j the composite inertia of the bodies that joint i carries, the momentum about the ground origin
is h_O = Σ_j Y_j v_j = Σ_k Y^c_{i(k)} S_k v_k: column k of A_O is Y^c_i S_k. Moving the moment to c:
A_G = [E, −c̃; 0, E] A_O. The time derivative: a rigid inertia carried by a rigid motion of velocity v stays a
rigid inertia of the same mass, Ẏ = v ×* Y − Y v× = [[İ_O, ḣ̃], [ḣ̃ᵀ, 0]] with ḣ = ω × h + m v_O and
İ_O = ω̃ I_O − I_O ω̃ + 2 (h·v_O) E − h v_Oᵀ − v_O hᵀ (the (m, h, I_O) form of ``spatial.rigid_inertia_world``), so
column k of Ȧ_O is Ẏ^c_i S_k + Y^c_i Ṡ_k (Ṡ_k: ``frames.column_rate``), and Ȧ_G = [E, −c̃; 0, E] Ȧ_O −
[0, (ċ)~; 0, 0] A_O with ċ the velocity of the centre of mass. The rate: ḣ_O = Σ_j (Y_j a_j + v_j ×* Y_j v_j)
(the Newton–Euler equations of the bodies, RBDA Table 5.1, without gravity), ḣ_G = ḣ_O − [c × ṗ; 0] (since
ċ × p = 0 for p = m ċ).

The composite inertias go in the per-body workspace's columns ``B_IA`` (which the forward pass leaves free):
(m, h, I_O) of Y^c in the first 10, (0, ḣ, İ_O) of Ẏ^c in the next 10.
"""
from numba import njit

from multibody.kernels.frames import column_rate
from multibody.kernels.kinematics import (B_A, B_IA, B_V, BASE_WIDTH, IQ, IV, NQ, NV, PARENT, WB_WIDTH, WD_WIDTH,
                                          body_inertia_world, body_inertia_world_call, body_kinematics,
                                          kinematics_kernel, set_ground, strided, workspace_views)
from multibody.kernels.spatial import (KERNEL, cross3, force_cross_motion, helper, load6, load_rigid_inertia,
                                       rigid_inertia_times_motion, store_rigid_inertia)

#: ``out`` of :func:`centroidal_kernel`: total mass, centre of mass (3), h_G (6), ḣ_G (6)
O_MASS, O_COM, O_H, O_HDOT = 0, 1, 4, 10
OUT_WIDTH = 16
Y, DY = B_IA, B_IA + 10


@helper
def rigid_inertia_rate(m, h, I, w0, w1, w2, u0, u1, u2):
    """(ḣ, İ_O) of the rigid inertia (m, h, I_O) carried by the motion [ω; v_O] (module docstring)."""
    a0, a1, a2 = cross3(w0, w1, w2, h[0], h[1], h[2])
    hd = (a0 + m * u0, a1 + m * u1, a2 + m * u2)
    # ω̃ I (row-major, I symmetric packed (xx, xy, xz, yy, yz, zz)); the rate is ω̃ I + (ω̃ I)ᵀ + ...
    c0 = (I[0], I[1], I[2])
    c1 = (I[1], I[3], I[4])
    c2 = (I[2], I[4], I[5])
    x0 = cross3(w0, w1, w2, c0[0], c0[1], c0[2])      # column 0 of ω̃ I
    x1 = cross3(w0, w1, w2, c1[0], c1[1], c1[2])
    x2 = cross3(w0, w1, w2, c2[0], c2[1], c2[2])
    hv = 2.0 * (h[0] * u0 + h[1] * u1 + h[2] * u2)
    Id = (2.0 * x0[0] + hv - 2.0 * h[0] * u0,
          x1[0] + x0[1] - h[0] * u1 - u0 * h[1],
          x2[0] + x0[2] - h[0] * u2 - u0 * h[2],
          2.0 * x1[1] + hv - 2.0 * h[1] * u1,
          x2[1] + x1[2] - h[1] * u2 - u1 * h[2],
          2.0 * x2[2] + hv - 2.0 * h[2] * u2)
    return hd, Id


@helper
def add_rigid_inertia(wb, i, o, m, h, I):
    """wb[i, o:o+10] += (m, h, I) (``spatial.store_rigid_inertia``'s layout)."""
    wb[i, o] += m
    for k in range(3):
        wb[i, o + 1 + k] += h[k]
    for k in range(6):
        wb[i, o + 4 + k] += I[k]


@helper
def composite_inertias(mi, wb, n, with_rate):
    """Y^c_i = Σ over the subtree of i of Y_j (and, ``with_rate``, Ẏ^c_i), leaves to root, in the columns ``Y``
    (``DY``) of ``wb``; the ground's row ends with those of the whole system (module docstring)."""
    for i in range(n - 1, 0, -1):
        par = mi[i, PARENT]
        m, h, I = load_rigid_inertia(wb, i, Y)
        add_rigid_inertia(wb, par, Y, m, h, I)
        if with_rate:
            m, h, I = load_rigid_inertia(wb, i, DY)
            add_rigid_inertia(wb, par, DY, 0.0, h, I)


@helper
def map_columns(mi, wb, wd, n, c0, c1, c2, cd0, cd1, cd2, level, Ag, dAg):
    """The columns of A_G (``Ag``) and, at level ≥ 1 when ``dAg`` has columns, of Ȧ_G, from the composite inertias
    in ``wb`` (module docstring), with c the centre of mass and ċ its velocity."""
    for i in range(1, n):
        m, h, I = load_rigid_inertia(wb, i, Y)
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            s = load6(wd, k, 0)
            col = rigid_inertia_times_motion(m, h, I, s[0], s[1], s[2], s[3], s[4], s[5])
            x0, x1, x2 = cross3(c0, c1, c2, col[3], col[4], col[5])
            if Ag.shape[1] > 0:
                Ag[0, k] = col[0] - x0
                Ag[1, k] = col[1] - x1
                Ag[2, k] = col[2] - x2
                Ag[3, k] = col[3]
                Ag[4, k] = col[4]
                Ag[5, k] = col[5]
            if level >= 1 and dAg.shape[1] > 0:
                _, hd, Id = load_rigid_inertia(wb, i, DY)
                d1 = rigid_inertia_times_motion(0.0, hd, Id, s[0], s[1], s[2], s[3], s[4], s[5])
                ds = column_rate(i, k, mi, wb, wd)
                d2 = rigid_inertia_times_motion(m, h, I, ds[0], ds[1], ds[2], ds[3], ds[4], ds[5])
                y0, y1, y2 = cross3(c0, c1, c2, d1[3] + d2[3], d1[4] + d2[4], d1[5] + d2[5])
                z0, z1, z2 = cross3(cd0, cd1, cd2, col[3], col[4], col[5])
                dAg[0, k] = d1[0] + d2[0] - y0 - z0
                dAg[1, k] = d1[1] + d2[1] - y1 - z1
                dAg[2, k] = d1[2] + d2[2] - y2 - z2
                dAg[3, k] = d1[3] + d2[3]
                dAg[4, k] = d1[4] + d2[4]
                dAg[5, k] = d1[5] + d2[5]


@njit(**KERNEL)
def centroidal_kernel(mi, mf, q, v, a, work, level, Ag, dAg, out):
    """The centroidal quantities of the module docstring at (q, v, a): ``out`` (``O_MASS`` ...; the momentum needs
    ``level`` ≥ 1, its rate level 2), the 6 x nv centroidal momentum matrix ``Ag`` and, at level ≥ 1, its time
    derivative ``dAg`` (either may have 0 columns: not computed)."""
    n = mi.shape[0]
    nv = v.shape[0]
    kinematics_kernel(mi, mf, q, v, a, work, level)
    wb, wd = workspace_views(work, n, nv)
    for k in range(OUT_WIDTH):
        out[k] = 0.0
    for k in range(20):
        wb[0, Y + k] = 0.0
    for i in range(1, n):
        m, h, I = body_inertia_world_call(i, mf, wb)
        store_rigid_inertia(wb, i, Y, m, h, I)
        if level >= 1:
            w = load6(wb, i, B_V)
            f = rigid_inertia_times_motion(m, h, I, w[0], w[1], w[2], w[3], w[4], w[5])
            for k in range(6):
                out[O_H + k] += f[k]
            hd, Id = rigid_inertia_rate(m, h, I, w[0], w[1], w[2], w[3], w[4], w[5])
            store_rigid_inertia(wb, i, DY, 0.0, hd, Id)
            if level >= 2:
                g = rigid_inertia_times_motion(m, h, I, wb[i, B_A], wb[i, B_A + 1], wb[i, B_A + 2], wb[i, B_A + 3],
                                               wb[i, B_A + 4], wb[i, B_A + 5])
                x = force_cross_motion(w[0], w[1], w[2], w[3], w[4], w[5], f[0], f[1], f[2], f[3], f[4], f[5])
                for k in range(6):
                    out[O_HDOT + k] += g[k] + x[k]
    composite_inertias(mi, wb, n, level >= 1)
    mass = wb[0, Y]
    out[O_MASS] = mass
    inv = 1.0 / mass if mass > 0.0 else 0.0
    c0 = wb[0, Y + 1] * inv
    c1 = wb[0, Y + 2] * inv
    c2 = wb[0, Y + 3] * inv
    out[O_COM] = c0
    out[O_COM + 1] = c1
    out[O_COM + 2] = c2
    # the velocity of the centre of mass (Ȧ_G)
    map_columns(mi, wb, wd, n, c0, c1, c2, out[O_H + 3] * inv, out[O_H + 4] * inv, out[O_H + 5] * inv, level, Ag, dAg)
    # moments about the centre of mass
    if level >= 1:
        x0, x1, x2 = cross3(c0, c1, c2, out[O_H + 3], out[O_H + 4], out[O_H + 5])
        out[O_H] -= x0
        out[O_H + 1] -= x1
        out[O_H + 2] -= x2
    if level >= 2:
        x0, x1, x2 = cross3(c0, c1, c2, out[O_HDOT + 3], out[O_HDOT + 4], out[O_HDOT + 5])
        out[O_HDOT] -= x0
        out[O_HDOT + 1] -= x1
        out[O_HDOT + 2] -= x2


@helper
def composite_inertias_at(mi, mf, q, work, out, rows):
    """The checks of :func:`centroidal_map_kernel` and :func:`com_jacobian_kernel` (0, or 1 when q, 5 when the
    workspace, 6 when ``out`` (``rows`` x nv) does not fit) and, when they pass, the bodies' placements and their
    composite inertias (columns ``Y`` of the workspace; the ground's row: those of the whole system)."""
    n = mi.shape[0]
    nv = out.shape[1]
    if q.shape[0] != mi[n - 1, IQ] + mi[n - 1, NQ] or strided(q):
        return 1
    if work.shape[0] < n * WB_WIDTH + nv * WD_WIDTH + BASE_WIDTH:
        return 5
    if out.shape[0] != rows or nv != mi[n - 1, IV] + mi[n - 1, NV]:
        return 6
    wb, wd = workspace_views(work, n, nv)
    set_ground(mf, work, wb, nv)
    for k in range(10):
        wb[0, Y + k] = 0.0
    for i in range(1, n):
        body_kinematics(i, mi, mf, q, q, q, wb, wd, 0)
        m, h, I = body_inertia_world(i, mf, wb)
        store_rigid_inertia(wb, i, Y, m, h, I)
    composite_inertias(mi, wb, n, False)
    return 0


@njit(**KERNEL)
def centroidal_map_kernel(mi, mf, q, work, Ag):
    """A_G alone (6 x nv, ``Ag``; :func:`centroidal_kernel` at level 0), its passes written out for the call from
    Python (Pinocchio's ``ccrba``). Returns 0, or 1 when q, 5 when the workspace, 6 when ``Ag`` does not fit."""
    err = composite_inertias_at(mi, mf, q, work, Ag, 6)
    if err != 0:
        return err
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, Ag.shape[1])
    mass = wb[0, Y]
    inv = 1.0 / mass if mass > 0.0 else 0.0
    map_columns(mi, wb, wd, n, wb[0, Y + 1] * inv, wb[0, Y + 2] * inv, wb[0, Y + 3] * inv, 0.0, 0.0, 0.0, 0, Ag, Ag)
    return 0


@njit(**KERNEL)
def com_jacobian_kernel(mi, mf, q, work, Jc):
    """The Jacobian of the centre of mass (3 x nv, ``Jc``; Pinocchio's ``jacobianCenterOfMass``): the linear rows of
    A_G over the total mass (column k: Y^c_i S_k's force part over m; zero for a massless system). Returns 0, or 1
    when q, 5 when the workspace, 6 when ``Jc`` does not fit."""
    err = composite_inertias_at(mi, mf, q, work, Jc, 3)
    if err != 0:
        return err
    n = mi.shape[0]
    wb, wd = workspace_views(work, n, Jc.shape[1])
    mass = wb[0, Y]
    for i in range(1, n):
        m, h, I = load_rigid_inertia(wb, i, Y)
        for k in range(mi[i, IV], mi[i, IV] + mi[i, NV]):
            s = load6(wd, k, 0)
            col = rigid_inertia_times_motion(m, h, I, s[0], s[1], s[2], s[3], s[4], s[5])
            for r in range(3):
                Jc[r, k] = col[3 + r] / mass if mass > 0.0 else 0.0
    return 0
