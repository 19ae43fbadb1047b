"""A Model's arrays packed for the kernels: two row-per-body arrays, so a call passes few arguments.

``mi`` (n, 14) int64 — parent, joint type, idx_q, nq_j, idx_v, nv_j, "joint placement rotation is E" flag,
the kind of each velocity coordinate of the joint (``kinematics.DOF_*``: rotation or translation, axis
fixed in the joint or in the child frame), and ±(k + 1) for a hinge about the coordinate axis ±e_k
(``kinematics.AXIS``), or for a general joint the first row of its block in the workspace;
``mf`` (n, 52) float64 — jplace_R (9, row-major), jplace_p (3), axis 1 (3), axis 2 (3), mass, com (3), inertia
about the com (xx, xy, xz, yy, yz, zz), the axis of each velocity coordinate (6 x 3), the armature of each velocity
coordinate (6; ``kinematics.armature``); row 0 (the ground)
holds the gravity in columns 0..2 and, in column ``G_MOVING``, 1.0 when the ground moves in a prescribed way
(``model.base_motion``; its state at the time of a call is then written into the workspace's base block,
``Data.set_time``).

The columns are those of ``kernels/kinematics.py``; the Model reads the packed integers for its
configuration-space methods (:func:`packed_integers`, ``kernels/configuration.py``) and ``multibody.model.data.Data``
holds both with its workspace.
"""
import numpy as np

from multibody.errors import ModelError, shown
from multibody.kernels import kinematics as K
from multibody.kernels.frames import FI_BODY, FI_DEPTH, FI_PATH
from multibody.kernels.kinematics import (AXIS, F_A1, F_A2, F_ARM, F_COM, F_DAX, F_IC, F_JP, F_JR, F_MASS, G_MOVING,
                                          M_DOF, MF_WIDTH, MI_WIDTH)
from multibody.kernels.ltl import dof_paths

__all__ = ["pack_model", "packed_integers", "packed_paths", "general_rows", "pack_frames"]

#: the attributes of a Model under which its packed arrays ``(mi, mf)`` and the paths of its velocity coordinates
#: (``kernels.ltl.dof_paths``) are kept (caches: the Model is unchanged)
PACKED_ATTR, PATHS_ATTR = "_multibody_packed", "_multibody_dof_paths"

_E = np.eye(3)


def _dof_table(jtype, axes):
    """(kind, axis) of each velocity coordinate of a joint (see ``kinematics.M_DOF``): what its column of the
    motion subspace is, per docs/model-arrays.md."""
    a1, a2 = axes[0], axes[1]
    TJ, RJ, TC, RC = K.DOF_TRANS_JOINT, K.DOF_ROT_JOINT, K.DOF_TRANS_CHILD, K.DOF_ROT_CHILD
    return {K.FIXED: [],
            K.REVOLUTE: [(RJ, a1)],
            K.PRISMATIC: [(TJ, a1)],
            K.CYLINDRICAL: [(RJ, a1), (TJ, a1)],
            K.UNIVERSAL: [(RJ, a1), (RC, a2)],  # a2 is fixed in the child
            K.SPHERICAL: [(RC, _E[0]), (RC, _E[1]), (RC, _E[2])],  # ω in the child frame
            K.PLANAR: [(TJ, _E[0]), (TJ, _E[1]), (RJ, _E[2])],  # ẋ, ẏ in the joint frame; θ̇ about its z
            K.FREE: [(RC, _E[0]), (RC, _E[1]), (RC, _E[2]), (TC, _E[0]), (TC, _E[1]), (TC, _E[2])],
            K.GENERAL: [],  # its columns come from the workspace (kinematics module docstring)
            }[jtype]


def pack_model(model):
    """The packed integer and float arrays (``mi``, ``mf``) of a Model (see the module docstring): new copies of
    the ones :func:`_packed` keeps on it (a run's setup packs it several times, 0.2 ms each); a ``ModelError``
    naming the first symbolic element of a symbolic model (the kernels need numbers)."""
    mi, mf = _packed(model)
    return mi.copy(), mf.copy()


def _kept(model, attr, make):
    """``make(model)``, made on the first call and kept on the model under ``attr`` (an object without
    ``__dict__``: made anew each time): not to be written into."""
    cache = getattr(model, "__dict__", None)
    value = cache.get(attr) if cache is not None else None
    if value is None:
        value = make(model)
        if cache is not None:
            cache[attr] = value
    return value


def _packed(model):
    """(mi, mf) of ``model``, kept on it (:data:`PACKED_ATTR`)."""
    return _kept(model, PACKED_ATTR, _pack)


def packed_paths(model):
    """The paths of ``model``'s velocity coordinates to the root (``kernels.ltl.dof_paths`` of its packed tree),
    made once and kept on the model; a new copy each call."""
    return _kept(model, PATHS_ATTR, lambda m: dof_paths(_packed(m)[0])).copy()


def _pack(model):
    """(mi, mf) of :func:`pack_model`, made anew."""
    if model.symbolic:
        element, what, value = model.symbolic_element()
        raise ModelError(f"{element}: {what} is symbolic ({shown(value)!r}) in model '{model.name}'; the numeric "
                         "algorithms need numbers (build the model with numeric values, or derive its "
                         "equations with multibody.symbolic)", element=element)
    n = model.nbodies + 1
    mi = np.zeros((n, MI_WIDTH), dtype=np.int64)
    mf = np.zeros((n, MF_WIDTH), dtype=np.float64)
    mi[:, 0] = model.parent
    mi[:, 1] = model.jtype
    mi[:, 2] = model.idx_q
    mi[:, 3] = model.nq_j
    mi[:, 4] = model.idx_v
    mi[:, 5] = model.nv_j
    R = np.asarray(model.jplace_R, dtype=np.float64).reshape(n, 3, 3)
    mi[:, 6] = [1 if np.array_equal(R[i], np.eye(3)) else 0 for i in range(n)]
    mf[:, F_JR:F_JR + 9] = R.reshape(n, 9)
    mf[:, F_JP:F_JP + 3] = model.jplace_p
    mf[:, F_A1:F_A1 + 3] = model.jaxis[:, 0, :]
    mf[:, F_A2:F_A2 + 3] = model.jaxis[:, 1, :]
    mf[:, F_MASS] = model.mass
    mf[:, F_COM:F_COM + 3] = model.com
    Ic = np.asarray(model.inertia_com, dtype=np.float64)
    mf[:, F_IC:F_IC + 6] = np.stack([Ic[:, 0, 0], Ic[:, 0, 1], Ic[:, 0, 2], Ic[:, 1, 1], Ic[:, 1, 2], Ic[:, 2, 2]],
                                    axis=1)
    armature = np.asarray(model.dof_armature, dtype=np.float64)
    for i in range(1, n):
        iv = int(model.idx_v[i])
        mf[i, F_ARM:F_ARM + int(model.nv_j[i])] = armature[iv:iv + int(model.nv_j[i])]
        for k, (kind, axis) in enumerate(_dof_table(int(model.jtype[i]), model.jaxis[i])):
            mi[i, M_DOF + k] = kind
            mf[i, F_DAX + 3 * k:F_DAX + 3 * k + 3] = axis
        a = np.asarray(model.jaxis[i, 0], dtype=np.float64)
        if int(model.jtype[i]) in (K.REVOLUTE, K.CYLINDRICAL) and np.count_nonzero(a) == 1 and np.max(np.abs(a)) == 1:
            k = int(np.flatnonzero(a)[0])
            mi[i, AXIS] = (k + 1) * int(np.sign(a[k]))
    row = model.nv
    for i in range(1, n):
        if int(model.jtype[i]) == K.GENERAL:
            mi[i, AXIS] = row
            row += K.general_rows(int(model.nv_j[i]))
    mf[0, :] = 0.0
    mf[0, 0:3] = model.gravity
    mf[0, G_MOVING] = 0.0 if getattr(model, "base_motion", None) is None else 1.0
    return mi, mf



def general_rows(model):
    """Rows of the workspace's ``wd`` that the general joints' blocks take (``kinematics`` module docstring)."""
    return sum(K.general_rows(int(model.nv_j[i])) for i in range(1, model.nbodies + 1)
               if int(model.jtype[i]) == K.GENERAL)


def packed_integers(model):
    """The packed integer array ``mi`` of ``model``, made once and kept on the model (what the configuration-space
    kernels read: ``kernels/configuration.py``)."""
    return _packed(model)[0]


def pack_frames(parent, frames):
    """The frame table of ``kernels/frames.py`` (its module docstring): ``(fi, ff)`` for ``frames``, a sequence of
    ``(body, R, p)`` — the frame's body and its placement in that body's kernel frame — with ``parent`` the model's
    parent array (the bodies numbered regularly, seed 001 §1.1.2). Row k of ``fi``: body, the length of its path
    from the ground and the path (root first); of ``ff``: R row-major (9) and p (3)."""
    parent = np.asarray(parent, dtype=np.int64)
    paths = []
    for body, _, _ in frames:
        path, i = [], int(body)
        while i > 0:
            path.append(i)
            i = int(parent[i])
        paths.append(path[::-1])
    fi = np.zeros((len(paths), FI_PATH + max(map(len, paths), default=0)), dtype=np.int64)
    ff = np.zeros((len(paths), 12))
    for k, ((body, R, p), path) in enumerate(zip(frames, paths)):
        fi[k, FI_BODY] = body
        fi[k, FI_DEPTH] = len(path)
        fi[k, FI_PATH:FI_PATH + len(path)] = path
        ff[k, :9] = np.asarray(R, dtype=np.float64).reshape(9)
        ff[k, 9:] = np.asarray(p, dtype=np.float64).reshape(3)
    return fi, ff
