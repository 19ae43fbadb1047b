"""The rows of a Model's constraints in its tree coordinates, below the formulations that use them.

A model's constraints (``model.constraints``: the cut joints that close loops, points on planes and curves,
rolling discs, user functions; ``multibody.model.constraints``) give rows written on the bodies' motion
(``kernels/constraints.py``); :func:`eval_rows` maps the compiled ones to the tree's coordinates: residuals
``f``, rates ``ḟ = G v`` (velocity rows: ``g``), the Jacobian ``G`` and ``γ`` of ``G v̇ = γ`` (seed 001 §3.6).
:class:`ConstraintRows` adds the Python constraints' rows. :data:`Work` holds everything the compiled
right-hand sides of the ``constrained`` and ``stabilized`` formulations read and write (one per run; its
settings ``cfg`` by the ``CFG_*`` positions); the Cartesian formulation and the analyses (linearization,
reactions) read the same rows.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from multibody.errors import ConstraintError
from multibody.kernels.constraints import constraint_rows_kernel, initial_contact_angles, rows_jacobian
from multibody.kernels.kinematics import kinematics_kernel
from multibody.kernels.spatial import KERNEL
from multibody.model.packing import tree_params, with_dtype
from multibody.rows.solver import BILATERAL

__all__ = ["loop_rows", "CFG_STAB", "CFG_ALPHA", "CFG_BETA", "CFG_LAMBDA", "CFG_EPS", "CFG_ITER", "CFG_M", "CFG_TOL", "CFG_MAXIT",
           "CFG_PROJECT", "Work", "make_work", "eval_rows", "ConstraintRows"]


# entries of the settings array ``cfg``
CFG_STAB, CFG_ALPHA, CFG_BETA, CFG_LAMBDA, CFG_EPS, CFG_ITER, CFG_M, CFG_TOL, CFG_MAXIT, CFG_PROJECT = range(10)

#: everything the compiled right-hand side of a constrained model reads and writes (one per run)
Work = namedtuple("Work", [
    "tree",                      # tree_params(model): packed model, force arrays, workspace
    "ci", "cf", "pi", "pt",      # the compiled constraint table
    "level", "sel_pos", "sel_all",
    "s", "mode",                 # auxiliary variables (contact angles) and how they are treated
    "f", "fd", "cb", "cv", "gam", "ucoef", "auxd", "G",
    "M", "L", "Y", "S", "LS", "keep", "tmp", "w", "lam", "b",
    "xdot", "tau0", "qdd0", "dv", "qbuf", "cfg",
])


def make_work(model, mode=0, tau_const=None, extra_rows=0, dtype=np.float64):
    """A fresh :data:`Work` for ``model`` (``extra_rows``: room for rows added after the model's own, e.g. an
    energy row). ``dtype=complex`` makes every state-dependent array complex, for complex-step derivatives
    (``multibody.analysis.derivatives``)."""
    tab = model.constraint_table
    m = tab.m + extra_rows
    nv, nq, naux = model.nv, model.nq, tab.naux
    rows = m + naux

    def z(shape, dtype=dtype):
        return np.zeros(shape, dtype=dtype)
    cfg = np.zeros(10)
    cfg[CFG_EPS], cfg[CFG_ITER], cfg[CFG_M], cfg[CFG_TOL], cfg[CFG_MAXIT] = 1e-10, 3, tab.m_compiled, 0.0, 25
    cfg[CFG_PROJECT] = 1.0
    # rows: compiled, [auxiliary (mode 1)], Python, extra; the auxiliary rows are velocity-level (degree 1)
    mc = tab.m_compiled
    aux_rows = np.ones(naux, dtype=np.int64)
    parts = [tab.level[:mc], aux_rows, tab.level[mc:]] if mode == 1 else [tab.level, aux_rows]
    level = np.concatenate(parts + [np.ones(extra_rows, dtype=np.int64)]).astype(np.int64)
    tree = tree_params(model, tau_const)
    if dtype != np.float64:   # the workspaces the kernels write into take the state's type
        tree = with_dtype(tree, dtype)
    return Work(tree=tree, ci=tab.ci, cf=tab.cf, pi=tab.pi, pt=tab.pt, level=level,
                sel_pos=(level == 2).astype(np.int64), sel_all=np.ones(rows, dtype=np.int64),
                s=z(naux), mode=np.array([mode], dtype=np.int64),
                f=z(rows), fd=z(rows), cb=z((rows, 2), dtype=np.int64), cv=z((rows, 2, 6)), gam=z(rows),
                ucoef=z((max(tab.m_compiled, 1), max(naux, 1))), auxd=z(max(naux, 1)), G=z((rows, nv)),
                M=z((nv, nv)), L=z((nv, nv)), Y=z((nv, rows)), S=z((rows, rows)), LS=z((rows, rows)),
                keep=z(rows, dtype=np.int64), tmp=z(rows), w=z(rows), lam=z(rows), b=z(rows),
                xdot=z(nq + nv), tau0=z(nv), qdd0=z(nv), dv=z(nv), qbuf=z(nq), cfg=cfg)


# compiled pieces
@njit(**KERNEL)
def eval_rows(q, v, w):
    """Kinematics at v̇ = 0, then the compiled rows: residuals ``f``, rates ``fd = G v`` (position rows: ḟ;
    velocity rows: g), Jacobian ``G`` and ``γ`` (``kernels/constraints.py``). Returns the number of rows
    written (compiled rows, then the auxiliary rows when ``mode = 1``)."""
    mi = w.tree.mi
    mf = w.tree.mf
    work = w.tree.work
    n = mi.shape[0]
    nv = v.shape[0]
    kinematics_kernel(mi, mf, q, v, w.qdd0, work, 2)
    mc = int(w.cfg[CFG_M])
    constraint_rows_kernel(work, n, nv, w.ci, w.cf, w.pi, w.pt, w.s, w.mode[0], w.f, w.cb, w.cv, w.gam,
                           w.ucoef, w.auxd)
    rows = mc + (w.s.shape[0] if w.mode[0] == 1 else 0)
    rows_jacobian(mi, work, nv, 0, rows, w.cb, w.cv, w.G)
    for r in range(rows):
        s = 0.0
        for k in range(nv):
            s += w.G[r, k] * v[k]
        w.fd[r] = s
    return rows


@njit(**KERNEL)
def loop_rows(w, q, v, J, kind, gap, key, r):
    """The compiled constraint rows at (q, v) (:func:`eval_rows`) as bilateral rows of a step from row r
    (``rows/solver.py``): J the rows of G, the gap the residual f of a position row (0 for a velocity row, whose
    condition G v = 0 has no position to correct). Returns the next free row."""
    m = eval_rows(q, v, w)
    nv = J.shape[1]
    for i in range(m):
        for k in range(nv):
            J[r, k] = w.G[i, k]
        kind[r] = BILATERAL
        gap[r] = w.f[i] if w.level[i] == 2 else 0.0
        key[r] = -(1 << 40) - i
        r += 1
    return r


class ConstraintRows:
    """The rows of a Model's constraints in its tree coordinates: ``evaluate(q, v, t) -> (f, G, γ)`` over all
    rows (compiled rows, then the Python constraints'), with ``f`` the residuals of position rows and the
    velocity residuals ``g = G v`` of velocity rows, ``ḟ = G v`` (+ ∂f/∂t) and ``G v̇ = γ`` the
    acceleration-level rows. ``names``: constraint names; ``slices[name]``: its rows; ``level``: 2 for a
    position row, 1 for a velocity row; ``row_names``."""

    def __init__(self, model, mode=0, work=None):
        self.model = model
        tab = model.constraint_table
        self.m, self.mc = tab.m, tab.m_compiled
        self.w = make_work(model, mode) if work is None else work
        self.level = self.w.level
        self.slices = dict(tab.slices)
        if mode == 1:   # the auxiliary rows sit between the compiled and the Python rows
            for c, r0 in tab.python:
                self.slices[c.name] = slice(r0 + tab.naux, r0 + tab.naux + c.nrows)
        self.names = [c.name for c in model.constraints]
        self.row_names = tab.row_names
        self.python = tab.python
        self._aux_ready = False

    def init_aux(self, q):
        """Contact angles for the configuration q (a scan + Newton per disc on a curve)."""
        if self.w.s.shape[0]:
            d = self.w.tree
            kinematics_kernel(d.mi, d.mf, np.ascontiguousarray(q, float), np.zeros(self.model.nv), self.w.qdd0,
                              d.work, 0)
            initial_contact_angles(d.work, d.mi.shape[0], self.model.nv, self.w.ci, self.w.cf, self.w.pi, self.w.pt,
                                   self.w.s)
            if not np.all(np.isfinite(self.w.s)):
                bad = [c.name for c in self.model.constraints if type(c).__name__ == "RollingOnProfile"]
                raise ConstraintError(f"model '{self.model.name}': no contact point of the disc on its profile near "
                                      f"the initial configuration (constraint(s) {', '.join(bad)})", joints=bad)
        self._aux_ready = True

    def fill(self, q, v, t=0.0):
        """Evaluate every row into the work arrays (``w.f``, ``w.fd``, ``w.G``, ``w.gam``) at time ``t``; returns m.
        ``t`` None (a configuration without a time, e.g. the initial one) is taken as 0, as ``project_position``
        does; the projections after each step pass the step's time (``rk_fixed_python``, ``solve_adaptive``)."""
        t = 0.0 if t is None else t
        q = np.ascontiguousarray(q, dtype=np.float64)
        v = np.zeros(self.model.nv) if v is None else np.ascontiguousarray(v, dtype=np.float64)
        if not self._aux_ready:
            self.init_aux(q)
        eval_rows(q, v, self.w)
        shift = self.w.s.shape[0] if self.w.mode[0] == 1 else 0    # auxiliary rows come first in mode 1
        for c, r0 in self.python:
            r0 += shift
            r1 = r0 + c.nrows
            val, G, gam, rate = c.rows(self.model, q, v, t)
            self.w.f[r0:r1], self.w.G[r0:r1], self.w.gam[r0:r1], self.w.fd[r0:r1] = val, G, gam, rate
        return self.m + shift

    def evaluate(self, q, v=None, t=0.0):
        m = self.fill(q, v, t)
        return self.w.f[:m].copy(), self.w.G[:m].copy(), self.w.gam[:m].copy()

    def position_rows(self):
        return np.flatnonzero(self.level == 2)

    def worst(self, f, tol=1e-8):
        """Names of the constraints whose position residual exceeds ``tol`` (the first one if none does)."""
        bad = [n for n, s in self.slices.items()
               if not np.abs(f[s][self.level[s] == 2]).max(initial=0.0) <= tol]
        return bad or self.names[:1]
