"""The Cartesian system (seed 001 ch. 2): bodies in absolute coordinates, joints as constraint rows, the
Newton–Euler equations solved with the rows for the accelerations and multipliers (eq. 2.49); the KKT solves are
in ``solvers.py``."""
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from multibody.errors import ConstraintError, ModelError
from multibody.formulations.base import POLISH
from multibody.formulations.cartesian.forces import BodyTorque, PointLoad, PointSpring, RelativeTorque
from multibody.formulations.cartesian.joints import RowBlock
from multibody.formulations.cartesian.primitives import EVALUATORS, OMEGA
from multibody.formulations.cartesian.solvers import KKTSolver
from multibody.model.rotations import matrix_to_quat, quat_exp, quat_mul, quat_to_matrix, rotation_2d


@dataclass
class SystemBody:
    name: str
    mass: float
    inertia: np.ndarray
    x0: np.ndarray
    v0: np.ndarray


class CartesianSystem(KKTSolver):
    """Bodies in absolute coordinates + the book's constraint library (seed 001, ch. 2).

    >>> s = CartesianSystem(dim=2, gravity=(0, -9.81))
    >>> s.add_body("rod", mass=1.0, inertia=1 / 12, position=(0.5, 0.0, 0.0))
    1
    >>> s.add_joint(PlanarRevolute("pin", "ground", "rod", (0, 0), (-0.5, 0)))
    >>> xdd, lam = s.accelerations(0.0, s.x0, s.v0)
    >>> round(float(xdd[2]), 4)   # φ̈ = −(3/2) g / L for a rod pinned at its end
    -14.715
    """

    def __init__(self, dim=2, gravity=None, solver="auto"):
        if dim not in (2, 3):
            raise ModelError(f"dim must be 2 (planar) or 3 (spatial), got {dim}", element="CartesianSystem")
        self.dim = dim
        self.nd = 3 if dim == 2 else 6          # velocity coordinates per body
        self.nx = 3 if dim == 2 else 7          # position coordinates per body
        if gravity is None:
            gravity = (0.0, -9.81) if dim == 2 else (0.0, 0.0, -9.81)
        self.gravity = np.asarray(gravity, float)
        self.solver = solver
        self.bodies: list[SystemBody] = []
        self.joints = []
        self.user_constraints = []
        self.springs = []
        self.torques = []
        self.rel_torques = []
        self.loads = []
        self.force_callback = None
        self._final = False
        self.stats = {"solves": 0, "fallbacks": 0}

    # -------------------------------------------------------------------- description
    def add_body(self, name, mass, inertia, position, velocity=None):
        """Add a body; returns its index (1-based; 0 is the ground).

        planar: ``inertia`` = J about the centre of mass, ``position = (x, y, φ)``, ``velocity = (ẋ, ẏ, φ̇)``;
        spatial: ``inertia`` 3x3 about the centre of mass in body axes, ``position = (r, R)`` with R a
        rotation matrix or a quaternion (w, x, y, z), ``velocity = (ṙ inertial, ω body axes)``.
        """
        if self._final:
            raise ModelError("the system is finalized; add bodies before the first computation", element=name)
        if name == "ground" or name in [b.name for b in self.bodies]:
            raise ModelError(f"body name {name!r} is reserved or already used", element=f"body {name!r}")
        if not mass > 0:
            raise ModelError(f"mass must be positive, got {mass}", element=f"body {name!r}")
        if self.dim == 2:
            J = float(inertia)
            if J < 0:
                raise ModelError(f"inertia must be >= 0, got {J}", element=f"body {name!r}")
            x0 = np.asarray(position, float).reshape(3)
            v0 = np.zeros(3) if velocity is None else np.asarray(velocity, float).reshape(3)
            I = np.array(J)
        else:
            I = np.asarray(inertia, float).reshape(3, 3)
            if not np.allclose(I, I.T) or np.linalg.eigvalsh(I).min() < 0:
                raise ModelError("inertia must be symmetric positive semi-definite", element=f"body {name!r}")
            r, R = position
            R = np.asarray(R, float)
            q = matrix_to_quat(R) if R.shape == (3, 3) else R / np.linalg.norm(R)
            x0 = np.concatenate([np.asarray(r, float).reshape(3), q])
            v0 = np.zeros(6) if velocity is None else np.concatenate(
                [np.asarray(velocity[0], float), np.asarray(velocity[1], float)])
        self.bodies.append(SystemBody(name, float(mass), I, x0, v0))
        return len(self.bodies)

    def add_joint(self, joint):
        """Add a joint of the library (a :class:`RowBlock` is accepted too)."""
        if self._final:
            raise ModelError("the system is finalized; add joints before the first computation",
                             element=getattr(joint, "name", "?"))
        if isinstance(joint, RowBlock):
            self.user_constraints.append(joint)
            return
        if joint.dim != self.dim:
            raise ModelError(f"joint {joint.name!r} is {joint.dim}-D, the system is {self.dim}-D",
                             element=f"joint {joint.name!r}")
        self.joints.append(joint)

    def add_force(self, force):
        if isinstance(force, PointSpring):
            self.springs.append(force)
        elif isinstance(force, BodyTorque):
            self.torques.append(force)
        elif isinstance(force, RelativeTorque):
            self.rel_torques.append(force)
        elif isinstance(force, PointLoad):
            self.loads.append(force)
        elif callable(force):
            self.force_callback = force
        else:
            raise ModelError(f"unknown force element {force!r}", element="force")

    def body_index(self, name):
        """0 for the ground, 1..nb for bodies (names or indices accepted)."""
        if isinstance(name, (int, np.integer)):
            if not 0 <= name <= len(self.bodies):
                raise ModelError(f"no body with index {name}", element=f"body {name}")
            return int(name)
        if name == "ground":
            return 0
        for k, b in enumerate(self.bodies):
            if b.name == name:
                return k + 1
        raise ModelError(f"no body named {name!r}; known: ground, "
                         + ", ".join(b.name for b in self.bodies), element=f"body {name!r}")

    # -------------------------------------------------------------------- set-up
    @property
    def nb(self):
        return len(self.bodies)

    @property
    def nv(self):
        return self.nd * self.nb

    @property
    def nq(self):
        return self.nx * self.nb

    @property
    def x0(self):
        return np.concatenate([b.x0 for b in self.bodies])

    @property
    def v0(self):
        return np.concatenate([b.v0 for b in self.bodies])

    def finalize(self):
        """Group the constraint primitives by kind, build the sparsity pattern and the tree ordering."""
        if self._final:
            return
        nb, nd = self.nb, self.nd
        if nb == 0:
            raise ModelError("the system has no bodies", element="CartesianSystem")
        # mass matrix (dense blocks per body)
        self.mass = np.array([b.mass for b in self.bodies])
        if self.dim == 2:
            self.J = np.array([float(b.inertia) for b in self.bodies])
            self.Mdiag = np.repeat(self.mass, 3).reshape(nb, 3)
            self.Mdiag[:, 2] = self.J
            self.Mdiag = self.Mdiag.ravel()
            Mblocks = np.zeros((nb, 3, 3))
            Mblocks[:, 0, 0] = Mblocks[:, 1, 1] = self.mass
            Mblocks[:, 2, 2] = self.J
        else:
            self.J = np.array([b.inertia for b in self.bodies])
            Mblocks = np.zeros((nb, 6, 6))
            for k in range(3):
                Mblocks[:, k, k] = self.mass
            Mblocks[:, 3:, 3:] = self.J
        self.Mblocks = Mblocks
        self.M = sp.block_diag(list(Mblocks), format="csc")
        self._Minv_diag = 1.0 / np.maximum(self.M.diagonal(), 1e-300 + 0 * self.M.diagonal().max())
        self._Minv_diag[self.M.diagonal() <= 0] = 1.0 / max(self.M.diagonal().max(), 1e-300)
        self._Minv_clip = 1.0 / np.maximum(self.M.diagonal(), 1e-3 * self.M.diagonal().max())
        self.Mdense_ok = nb * nd <= 400
        # constraint primitives
        groups = {}
        row = 0
        self.joint_rows = {}
        self.joint_bodies = {}
        for jt in self.joints:
            bi, bj = self.body_index(jt.body_i), self.body_index(jt.body_j)
            if bi == bj:
                raise ModelError(f"joint {jt.name!r} connects body {jt.body_i!r} to itself",
                                 element=f"joint {jt.name!r}")
            start = row
            for kind, m, params in jt.primitives(self):
                g = groups.setdefault((kind, m), dict(bi=[], bj=[], rows=[], params=[]))
                g["bi"].append(bi)
                g["bj"].append(bj)
                g["rows"].append(np.arange(row, row + m))
                g["params"].append(params)
                row += m
            if jt.name in self.joint_rows:
                raise ModelError(f"joint name {jt.name!r} used twice", element=f"joint {jt.name!r}")
            self.joint_rows[jt.name] = np.arange(start, row)
            self.joint_bodies[jt.name] = (bi, bj)
        self.n_lib_rows = row
        self.groups = []
        for (kind, m), g in groups.items():
            params = {key: np.array([p[key] for p in g["params"]], dtype=float) for key in g["params"][0]}
            bi = np.array(g["bi"])
            bj = np.array(g["bj"])
            rows = np.array(g["rows"])
            # ground slot = index nb in the gathered arrays
            gi = np.where(bi == 0, nb, bi - 1)
            gj = np.where(bj == 0, nb, bj - 1)
            self.groups.append(dict(kind=kind, m=m, params=params, gi=gi, gj=gj, bi=bi, bj=bj, rows=rows))
        vel_rows = []
        for uc in self.user_constraints:
            for name, sl in uc.slices.items():
                self.joint_rows[name] = np.arange(row + sl.start, row + sl.stop)
                self.joint_bodies[name] = None
            vel_rows += [row + k for k in np.flatnonzero(np.asarray(getattr(uc, "level", np.full(uc.m, 2))) == 1)]
            row += uc.m
        self.velocity_rows = np.array(vel_rows, dtype=int)
        self.nc = row
        # COO pattern of Q for the library rows
        r_list, c_list = [], []
        for g in self.groups:
            k, m = g["rows"].shape
            cols_i = (g["bi"] - 1)[:, None] * nd + np.arange(nd)[None, :]
            cols_j = (g["bj"] - 1)[:, None] * nd + np.arange(nd)[None, :]
            rr = np.broadcast_to(g["rows"][:, :, None], (k, m, nd))
            ci = np.broadcast_to(cols_i[:, None, :], (k, m, nd))
            cj = np.broadcast_to(cols_j[:, None, :], (k, m, nd))
            mi = np.broadcast_to((g["bi"] > 0)[:, None, None], (k, m, nd))
            mj = np.broadcast_to((g["bj"] > 0)[:, None, None], (k, m, nd))
            g["mask_i"], g["mask_j"] = mi.ravel(), mj.ravel()
            r_list += [rr.ravel()[g["mask_i"]], rr.ravel()[g["mask_j"]]]
            c_list += [ci.ravel()[g["mask_i"]], cj.ravel()[g["mask_j"]]]
        self._qrows = np.concatenate(r_list) if r_list else np.zeros(0, int)
        self._qcols = np.concatenate(c_list) if c_list else np.zeros(0, int)
        self._qflat = self._qrows * self.nv + self._qcols
        self.dense = self.nv + self.nc <= 300
        if self.dense:
            self._Mdense = self.M.toarray()
            self._Kbuf = np.zeros((self.nv + self.nc, self.nv + self.nc))
            self._Kbuf[: self.nv, : self.nv] = self._Mdense
        self._final = True
        self._setup_tree()
        if self.solver == "auto":
            self._solver = "tree" if self.tree is not None else "al"
        else:
            self._solver = self.solver
        # redundancy check at the initial configuration (rank of Q)
        self.redundant = False
        if self.nc:
            Q = self.constraint_jacobian(self.x0)
            Q = Q if self.dense else Q.toarray()
            if min(Q.shape) <= 600:
                sv = np.linalg.svd(Q, compute_uv=False)
                rank = int(np.sum(sv > sv[0] * 1e-10)) if sv.size else 0
                self.redundant = rank < self.nc
                self.rank0 = rank
        if self.redundant and self.solver == "auto":
            self._solver = "al"

    def _setup_tree(self):
        """Tree ordering of the KKT graph (seed 001 §2.7).

        Vertices: the bodies and the body–body joints.  The joints to the ground are merged into their
        body's block, which is made the root of its connected component, so no constraint vertex is a
        leaf with a zero pivot.  Usable when the graph *with the ground* is a tree (a forest after the
        ground is removed, with at most one grounded body per component); otherwise ``self.tree`` is None.
        """
        self.tree = None
        if self.user_constraints or self.nc == 0:
            return
        nb, nd = self.nb, self.nd
        ground_rows = [[] for _ in range(nb)]
        grounded = [0] * nb
        jverts = []
        for name, rows in self.joint_rows.items():
            bi, bj = self.joint_bodies[name]
            if bi == 0 or bj == 0:
                k = (bj if bi == 0 else bi) - 1
                ground_rows[k].extend(rows.tolist())
                grounded[k] += 1
            else:
                jverts.append((name, rows, bi - 1, bj - 1))
        nvert = nb + len(jverts)
        adj = [[] for _ in range(nvert)]
        for k, (_, _, a, b) in enumerate(jverts):
            v = nb + k
            adj[v] += [a, b]
            adj[a].append(v)
            adj[b].append(v)
        parent = [-2] * nvert
        order = []
        starts = [k for k in range(nb) if grounded[k]] + list(range(nb))
        for root in starts:
            if parent[root] != -2:
                continue
            parent[root] = -1
            comp, stack = [], [root]
            while stack:
                v = stack.pop()
                comp.append(v)
                for w in adj[v]:
                    if parent[w] == -2:
                        parent[w] = v
                        stack.append(w)
                    elif w != parent[v] and parent[w] != v:
                        return  # a loop among the bodies
            if sum(grounded[v] > 0 for v in comp if v < nb) > 1:
                return      # a loop closed through the ground
            order += comp[::-1]
        nvar = self.nv + self.nc
        idx = []
        for v in range(nvert):
            if v < nb:
                idx.append(np.concatenate([np.arange(v * nd, (v + 1) * nd),
                                           self.nv + np.array(ground_rows[v], dtype=int)]))
            else:
                idx.append(self.nv + jverts[v - nb][1])
        children = [[] for _ in range(nvert)]
        for v in range(nvert):
            if parent[v] >= 0:
                children[parent[v]].append(v)
        self.tree = dict(order=order, parent=parent, children=children, idx=idx, nvar=nvar, nb=nb)

    # -------------------------------------------------------------------- kinematics
    def _body_state(self, x, V):
        """Per-body arrays with one extra slot (index nb) for the ground."""
        nb = self.nb
        if self.dim == 2:
            X = x.reshape(nb, 3)
            W = V.reshape(nb, 3)
            ph = np.append(X[:, 2], 0.0)
            A = rotation_2d(ph)
            r = np.vstack([X[:, :2], np.zeros((1, 2))])
            v = np.vstack([W[:, :2], np.zeros((1, 2))])
            w = np.append(W[:, 2], 0.0)
            return dict(A=A, r=r, v=v, w=w, ph=ph)
        X = x.reshape(nb, 7)
        W = V.reshape(nb, 6)
        A = np.concatenate([quat_to_matrix(X[:, 3:]), np.eye(3)[None]], axis=0)
        r = np.vstack([X[:, :3], np.zeros((1, 3))])
        v = np.vstack([W[:, :3], np.zeros((1, 3))])
        w = np.vstack([W[:, 3:], np.zeros((1, 3))])
        return dict(A=A, r=r, v=v, w=w)

    def _eval_groups(self, x, V):
        B = self._body_state(x, V)
        out = []
        for g in self.groups:
            gi, gj = g["gi"], g["gj"]
            K = dict(Ai=B["A"][gi], ri=B["r"][gi], vi=B["v"][gi], wi=B["w"][gi],
                     Aj=B["A"][gj], rj=B["r"][gj], vj=B["v"][gj], wj=B["w"][gj])
            if self.dim == 2:
                K["phi"], K["phj"] = B["ph"][gi], B["ph"][gj]
            out.append(EVALUATORS[g["kind"]](g["params"], K))
        return out

    def _assemble(self, x, V, need_b=True):
        """Q (sparse csr, nc × nv), b (nc,), position residual (nc,) (seed 001 eq. 2.48 stacked)."""
        ev = self._eval_groups(x, V if V is not None else np.zeros(self.nv))
        data = []
        b = np.zeros(self.nc)
        phi = np.zeros(self.nc)
        for g, (Qi, Qj, bb, ph) in zip(self.groups, ev):
            data += [Qi.ravel()[g["mask_i"]], Qj.ravel()[g["mask_j"]]]
            b[g["rows"].ravel()] = bb.ravel()
            phi[g["rows"].ravel()] = ph.ravel()
        vals = np.concatenate(data) if data else np.zeros(0)
        if self.dense:
            Q = np.zeros(self.nc * self.nv)
            Q[self._qflat] = vals
            Q = Q.reshape(self.nc, self.nv)
        else:
            Q = sp.csr_matrix((vals, (self._qrows, self._qcols)), shape=(self.nc, self.nv))
        if self.user_constraints:
            bu, pu = [], []
            Qu = [Q[: self.n_lib_rows]]
            for uc in self.user_constraints:
                Ju, bb, ph = self._user_rows(uc, x, V, need_b)
                Qu.append(Ju if self.dense else sp.csr_matrix(Ju))
                bu.append(bb)
                pu.append(ph)
            Q = np.vstack(Qu) if self.dense else sp.vstack(Qu, format="csr")
            b[self.n_lib_rows:] = np.concatenate(bu)
            phi[self.n_lib_rows:] = np.concatenate(pu)
        return Q, b, phi

    def _user_rows(self, uc, x, V, need_b):
        return uc.rows(x, V if V is not None else np.zeros(self.nv), need_b)

    def constraint_jacobian(self, x):
        self.finalize()
        return self._assemble(x, None, need_b=False)[0]

    def retract(self, x, dv):
        """Move coordinates x by a velocity-space increment dv (quaternions by the exponential map)."""
        if self.dim == 2:
            return x + dv
        X = x.reshape(self.nb, 7).copy()
        D = dv.reshape(self.nb, 6)
        X[:, :3] += D[:, :3]
        q = quat_mul(X[:, 3:], quat_exp(D[:, 3:]))
        X[:, 3:] = q / np.linalg.norm(q, axis=1)[:, None]
        return X.ravel()

    def qdot(self, x, V):
        """Time derivative of the coordinates (quaternion kinematics for spatial bodies)."""
        if self.dim == 2:
            return V.copy()
        X = x.reshape(self.nb, 7)
        W = V.reshape(self.nb, 6)
        out = np.empty((self.nb, 7))
        out[:, :3] = W[:, :3]
        w0 = np.zeros((self.nb, 4))
        w0[:, 1:] = W[:, 3:]
        out[:, 3:] = 0.5 * quat_mul(X[:, 3:], w0)
        return out.ravel()

    # -------------------------------------------------------------------- forces
    def point_position(self, x, body, point):
        """Inertial position of a point of a body (point from the centre of mass, body axes)."""
        k = self.body_index(body)
        point = np.asarray(point, float)
        if k == 0:
            return point.copy()
        if self.dim == 2:
            X = x[3 * (k - 1): 3 * k]
            return X[:2] + rotation_2d(X[2]) @ point
        X = x[7 * (k - 1): 7 * k]
        return X[:3] + quat_to_matrix(X[3:]) @ point

    def _point_vel(self, x, V, k, point):
        if k == 0:
            return point.copy(), np.zeros(self.dim), None
        if self.dim == 2:
            X = x[3 * (k - 1): 3 * k]
            W = V[3 * (k - 1): 3 * k]
            Ap = rotation_2d(X[2]) @ point
            return X[:2] + Ap, W[:2] + W[2] * (OMEGA @ Ap), Ap
        X = x[7 * (k - 1): 7 * k]
        W = V[6 * (k - 1): 6 * k]
        A = quat_to_matrix(X[3:])
        return X[:3] + A @ point, W[:3] + A @ np.cross(W[3:], point), A

    def applied_forces(self, t, x, V):
        """Generalized applied forces F (gravity, springs, torques, callback) minus gyroscopic terms (eq. 2.9)."""
        nb, nd = self.nb, self.nd
        F = np.zeros((nb, nd))
        F[:, : self.dim] = self.mass[:, None] * self.gravity[None, :]
        if self.dim == 3:
            W = V.reshape(nb, 6)[:, 3:]
            Jw = np.einsum("kab,kb->ka", self.J, W)
            F[:, 3:] -= np.cross(W, Jw)
        for s in self.springs:
            ka, kb = self.body_index(s.body_a), self.body_index(s.body_b)
            pa, va, Aa = self._point_vel(x, V, ka, s.pa)
            pb, vb, Ab = self._point_vel(x, V, kb, s.pb)
            d = pb - pa
            L = np.linalg.norm(d)
            u = d / L
            f = -(s.k * (L - s.l0) + s.c * float(u @ (vb - va))) * u   # force on b
            for kk, ff, A, pt in ((kb, f, Ab, s.pb), (ka, -f, Aa, s.pa)):
                if kk == 0:
                    continue
                F[kk - 1, : self.dim] += ff
                if self.dim == 2:
                    Ap = A
                    F[kk - 1, 2] += Ap[0] * ff[1] - Ap[1] * ff[0]
                else:
                    F[kk - 1, 3:] += np.cross(pt, A.T @ ff)
        for tq in self.torques:
            k = self.body_index(tq.body)
            F[k - 1, self.dim:] += tq.torque
        for load in self.loads:
            k = self.body_index(load.body)
            s = load.curve.at(t)
            _, _, A = self._point_vel(x, V, k, load.point)
            if self.dim == 2:   # A: the point turned into the plane; the body's angle X[2] turns a local force
                f = s * (rotation_2d(x[3 * (k - 1) + 2]) @ load.force if load.local else load.force)
                F[k - 1, :2] += f
                F[k - 1, 2] += A[0] * f[1] - A[1] * f[0] + s * load.torque[0]
            else:               # A: the body's rotation; moments in body axes
                f = s * (A @ load.force if load.local else load.force)
                T = s * (load.torque if load.local else A.T @ load.torque)
                F[k - 1, :3] += f
                F[k - 1, 3:] += np.cross(load.point, A.T @ f) + T
        for tq in self.rel_torques:
            ki, kj = self.body_index(tq.body_i), self.body_index(tq.body_j)
            if self.dim == 2:
                if kj:
                    F[kj - 1, 2] += tq.torque[0]
                if ki:
                    F[ki - 1, 2] -= tq.torque[0]
            else:  # torque given in body-i axes
                Ai = np.eye(3) if ki == 0 else quat_to_matrix(x[7 * (ki - 1) + 3: 7 * ki])
                Aj = np.eye(3) if kj == 0 else quat_to_matrix(x[7 * (kj - 1) + 3: 7 * kj])
                if kj:
                    F[kj - 1, 3:] += Aj.T @ Ai @ tq.torque
                if ki:
                    F[ki - 1, 3:] -= tq.torque
        F = F.ravel()
        if self.force_callback is not None:
            F = F + np.asarray(self.force_callback(t, x, V), float)
        return F

    # -------------------------------------------------------------------- dynamics
    def accelerations(self, t, x, V, baumgarte=None):
        """Accelerations Ẍ and multipliers λ (``M Ẍ = F + Qᵀλ``, ``Q Ẍ = b``; seed 001 eqs. 2.45, 2.49).

        ``baumgarte=(alpha, beta)`` replaces b by ``b − 2α Q V − β² φ`` (Baumgarte stabilization).
        """
        self.finalize()
        Q, b, phi = self._assemble(x, V)
        if baumgarte is not None:
            a, bt = baumgarte
            b = b - 2.0 * a * (Q @ V) - bt * bt * phi
        F = self.applied_forces(t, x, V)
        xdd, mu = self.solve_kkt(Q, F, b, t=t)
        return xdd, -mu

    def rhs(self, t, y, baumgarte=None):
        """State derivative of ``y = [x; V]`` for an ODE integrator.

        Quiet about floating-point overflow: an adaptive method's trial step on a stiff model (A05's
        spring-dampers) may reach a state far off, whose derivative overflows; the method rejects that step,
        and a state that stays non-finite ends the run with its reason."""
        x, V = y[: self.nq], y[self.nq:]
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            xdd, _ = self.accelerations(t, x, V, baumgarte)
            return np.concatenate([self.qdot(x, V), xdd])

    def residuals(self, t, x, V):
        """Position, velocity and acceleration constraint residuals (max-abs each)."""
        self.finalize()
        Q, b, phi = self._assemble(x, V)
        xdd, _ = self.accelerations(t, x, V)
        return (float(np.abs(phi).max(initial=0.0)), float(np.abs(Q @ V).max(initial=0.0)),
                float(np.abs(Q @ xdd - b).max(initial=0.0)))

    def reactions(self, t, x, V):
        """Per joint: ``{name: [(body_i, Q_iᵀλ), (body_j, Q_jᵀλ)]}`` (seed 001, eqs. 2.23–2.26).

        Planar: (F_x, F_y, M_z) on the body; spatial: (force inertial, moment about c in body axes).
        Ground entries are omitted.
        """
        self.finalize()
        Q, b, phi = self._assemble(x, V)
        xdd, lam = self.accelerations(t, x, V)
        Qd = Q if self.dense else Q.tocsr()
        out = {}
        nd = self.nd
        for name, rows in self.joint_rows.items():
            gen = np.asarray(Qd[rows].T @ lam[rows]).ravel()   # contributions to all bodies of this joint
            pairs = []
            bodies = self.joint_bodies[name]
            if bodies is None:
                bodies = [k + 1 for k in range(self.nb) if np.any(gen[k * nd:(k + 1) * nd])]
            for k in bodies:
                if k == 0:
                    continue
                pairs.append((self.bodies[k - 1].name, np.asarray(gen[(k - 1) * nd: k * nd]).ravel()))
            out[name] = pairs
        return out

    def energy(self, x, V):
        """Kinetic + potential energy (gravity, springs)."""
        self.finalize()
        nb = self.nb
        if self.dim == 2:
            W = V.reshape(nb, 3)
            X = x.reshape(nb, 3)
            T = 0.5 * np.sum(self.mass * (W[:, 0] ** 2 + W[:, 1] ** 2) + self.J * W[:, 2] ** 2)
            U = -np.sum(self.mass * (X[:, :2] @ self.gravity))
        else:
            W = V.reshape(nb, 6)
            X = x.reshape(nb, 7)
            T = 0.5 * np.sum(self.mass * np.sum(W[:, :3] ** 2, axis=1)) + 0.5 * np.einsum(
                "ka,kab,kb->", W[:, 3:], self.J, W[:, 3:])
            U = -np.sum(self.mass * (X[:, :3] @ self.gravity))
        for s in self.springs:
            d = self.point_position(x, s.body_b, s.pb) - self.point_position(x, s.body_a, s.pa)
            U += 0.5 * s.k * (np.linalg.norm(d) - s.l0) ** 2
        return float(T + U)

    # -------------------------------------------------------------------- projections
    def _min_norm_correction(self, Q, rhs_b):
        """Δ minimizing ΔᵀMΔ with Q Δ = rhs_b (the KKT system with zero force)."""
        d, _ = self.solve_kkt(Q, np.zeros(self.nv), rhs_b)
        return d

    def project_position(self, x, tol=0.0, maxiter=20, t=None):
        """Newton projection of the coordinates onto φ(x) = 0 (mass-weighted least change), down to
        ``|φ| ≤ tol`` (0: round-off: once below ``POLISH``, until a step no longer halves ``|φ|``; near a
        singular position a small residual alone is no small distance, see ``formulations/base.py``)."""
        self.finalize()
        x = x.copy()
        if self.dim == 3:  # renormalize quaternions
            X = x.reshape(self.nb, 7)
            X[:, 3:] /= np.linalg.norm(X[:, 3:], axis=1)[:, None]
        prev = np.inf
        for it in range(maxiter):
            Q, phi = self._position_rows(x)
            err = np.abs(phi).max(initial=0.0)
            if err <= tol or (prev <= POLISH and not err < 0.5 * prev):
                return x
            prev = err
            x = self.retract(x, self._min_norm_correction(Q, -phi))
        Q, phi = self._position_rows(x)
        err = np.abs(phi).max(initial=0.0)
        if err > max(tol, 1e-8):
            bad = self._worst_joints(phi)
            raise ConstraintError(f"position projection did not converge (max residual {err:.3e}) in "
                                  f"joints {', '.join(bad)}: the positions cannot be assembled",
                                  time=t, joints=bad)
        return x

    def _position_rows(self, x):
        """Q and φ with the velocity-level rows (rolling without slip: not derivatives of positions) zeroed, so
        that a position projection leaves them alone."""
        Q, _, phi = self._assemble(x, None, need_b=False)
        vel = self.velocity_rows
        if len(vel):
            Q = Q.copy() if self.dense else Q.tolil()
            Q[vel] = 0.0
            Q = Q if self.dense else Q.tocsr()
            phi = phi.copy()
            phi[vel] = 0.0
        return Q, phi

    def project_velocity(self, x, V):
        """Mass-orthogonal projection of the velocities onto Q V = 0."""
        self.finalize()
        Q = self._assemble(x, None, need_b=False)[0]
        return V + self._min_norm_correction(Q, -(Q @ V))

    def _worst_joints(self, phi):
        out = []
        for name, rows in self.joint_rows.items():
            if np.abs(phi[rows]).max(initial=0) > 1e-8:
                out.append(name)
        return out or list(self.joint_rows)[:1]

    def consistent_initial(self, x0=None, v0=None):
        """Project user initial values onto the position and velocity constraint manifolds."""
        x0 = self.x0 if x0 is None else np.asarray(x0, float)
        v0 = self.v0 if v0 is None else np.asarray(v0, float)
        x = self.project_position(x0, t=0.0)
        return x, self.project_velocity(x, v0)
