"""A Model's constraints (cut joints, points on planes and curves, rolling discs) as rows of the Cartesian
formulation, from the same compiled rows the tree formulations use (``kernels/constraints.py``)."""
import numpy as np

from multibody.formulations.cartesian.coordinates import cartesian_velocity_map, model_state_from_cartesian
from multibody.formulations.cartesian.joints import RowBlock


class ModelConstraintRows(RowBlock):
    """The Model's constraints that are not joints, as rows of the Cartesian system (seed 001 ch. 2: any
    constraint in the bodies' absolute coordinates). Compiled elements are evaluated by
    ``kernels/constraints.py`` on a workspace filled from the Cartesian state (placements, velocities, and the
    bias accelerations at Ẍ = 0), and each covector c = [c_ω; c_v] of a body becomes its block of Q:
    ``[c_v; Aᵀ(c_ω + c_v × r_C)]`` (spatial) or ``[c_v·e1, c_v·e2, (c_ω + c_v × r_C)·n]`` (planar). Python
    constraints (functions of q) are evaluated at the model coordinates of the state and carried over by
    ``Q = G L``, ``b = γ + G L J̇ v`` with V = J v the Cartesian velocities of the tree and L = J⁺."""

    name = "constraints"

    def __init__(self, model, emb, system):
        from multibody.rows.constraint_rows import ConstraintRows, make_work

        self.model, self.emb, self.system = model, emb, system
        tab = model.constraint_table
        keep = [k for k, c in enumerate(model.constraints) if type(c).__name__ != "LoopJoint"]
        self.rows_src = ConstraintRows(model, work=make_work(model))
        self.m_c = tab.m_compiled
        self.loop_rows = sum(c.nrows for c in model.constraints if type(c).__name__ == "LoopJoint")
        # rows of the non-joint constraints: compiled ones after the loop joints' rows, then the Python ones
        self.idx = np.array([r for r in range(tab.m) if tab.owner[r] in keep], dtype=int)
        self.m = len(self.idx)
        where = {r: j for j, r in enumerate(self.idx)}
        self.slices = {}
        for k in keep:
            sl = tab.slices[model.constraints[k].name]
            self.slices[model.constraints[k].name] = slice(where[sl.start], where[sl.start] + sl.stop - sl.start)
        self.level = tab.level[self.idx]
        self.python = bool(tab.python)
        self._q_prev = None

    def _fill_workspace(self, x, V):
        from multibody.kernels.kinematics import B_A, B_P, B_R, B_V, WB_WIDTH

        model, emb = self.model, self.emb
        w = self.rows_src.w
        wb = w.tree.work[: (model.nbodies + 1) * WB_WIDTH].reshape(model.nbodies + 1, WB_WIDTH)
        R, P = emb.placements(model, x)
        om, vc = emb.velocities(model, x, V)
        C = P + np.einsum("kab,kb->ka", R, np.asarray(model.com))
        C[0] = 0.0
        wb[:, B_R:B_R + 9] = R.reshape(-1, 9)
        wb[:, B_P:B_P + 3] = P
        wb[:, B_V:B_V + 3] = om
        wb[:, B_V + 3:B_V + 6] = vc + np.cross(C, om)              # v_O = v_C + r_C × ω
        wb[:, B_A:B_A + 3] = 0.0
        wb[:, B_A + 3:B_A + 6] = np.cross(vc, om)                   # at Ẍ = 0: ȧ_O = v_C × ω
        return R, C, om

    def rows(self, x, V, need_b=True):
        from multibody.kernels.constraints import constraint_rows_kernel

        model, emb, sysm = self.model, self.emb, self.system
        w = self.rows_src.w
        nvc = sysm.nv
        Q = np.zeros((self.m, nvc))
        b = np.zeros(self.m)
        phi = np.zeros(self.m)
        if self.m_c > self.loop_rows:
            R, C, om = self._fill_workspace(x, V)
            if not self.rows_src._aux_ready:
                from multibody.kernels.constraints import initial_contact_angles
                initial_contact_angles(w.tree.work, model.nbodies + 1, 0, w.ci, w.cf, w.pi, w.pt, w.s)
                self.rows_src._aux_ready = True
            constraint_rows_kernel(w.tree.work, model.nbodies + 1, 0, w.ci, w.cf, w.pi, w.pt, w.s, 0, w.f, w.cb, w.cv,
                                   w.gam, w.ucoef, w.auxd)
            nd = sysm.nd
            for j, r in enumerate(self.idx):
                if r >= self.m_c:
                    break
                phi[j] = w.f[r]
                b[j] = w.gam[r]
                for slot in range(2):
                    k = w.cb[r, slot]
                    if k <= 0:
                        continue
                    cw, cvv = w.cv[r, slot, :3], w.cv[r, slot, 3:]
                    rot = cw + np.cross(cvv, C[k])
                    blk = slice((k - 1) * nd, k * nd)
                    if emb.dim == 3:
                        Q[j, blk] += np.concatenate([cvv, R[k].T @ rot])
                    else:
                        Q[j, blk] += [cvv @ emb.e1, cvv @ emb.e2, rot @ emb.n]
        if self.python:
            self._python_rows(x, V, Q, b, phi)
        return Q, b, phi

    def _python_rows(self, x, V, Q, b, phi):
        """Rows of the Python constraints through the model coordinates (class docstring)."""
        model = self.model
        q, v = model_state_from_cartesian(model, self.emb, x, V, previous=self._q_prev)
        self._q_prev = q
        J, Jdv = cartesian_velocity_map(model, self.emb, q, v)
        L = np.linalg.pinv(J)
        for c, r0 in model.constraint_table.python:
            val, G, gam, _ = c.rows(model, q, v, 0.0)
            rows = [j for j, r in enumerate(self.idx) if r0 <= r < r0 + c.nrows]
            GL = G @ L
            Q[rows] = GL
            b[rows] = gam + GL @ Jdv
            phi[rows] = val
