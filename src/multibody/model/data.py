"""Data: the preallocated workspace of one Model (one per thread or process), and the packed model arrays.

The kernels (``multibody.kernels``) take the Model's arrays packed into two row-per-body arrays, ``mi`` (integers)
and ``mf`` (floats), so a call from Python passes few arguments (``kernels/packing.py`` describes them).

``Data(model)`` holds these and a flat float workspace (per body, per velocity coordinate, and the state of a
moving base) that the kernels overwrite; results are
returned in fresh arrays. The algorithms in ``multibody.algorithms.dynamics`` use a Data cached on the model when
none is given; the kernels hold the GIL, so sharing it between Python threads is safe. Compiled code that
calls the kernels directly (e.g. a fixed-step integrator loop) passes ``data.mi, data.mf, ..., data.work``.

Example
-------
>>> import numpy as np
>>> import multibody as mb
>>> b = mb.ModelBuilder()
>>> b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=np.diag([0.1, 0.1, 0.01]))
'rod'
>>> b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="rod")
'hinge'
>>> data = Data(b.build())
>>> data.mi.shape, data.mf.shape
((2, 14), (2, 52))
"""
import numpy as np

from multibody.errors import ModelError
from multibody.kernels import kinematics as K
from multibody.kernels.derivatives_minv import derivative_workspace_size, subtree_tables
from multibody.kernels.kinematics import BASE_WIDTH, workspace_size
from multibody.kernels.packing import general_rows, pack_model
from multibody.model.forces import applied_forces

#: the attribute of a Model under which :func:`default_data` keeps its Data (a cache: the Model is unchanged)
CACHE_ATTR = "_multibody_data"
#: the attributes under which that Data's fast-path tuples (``Data.fast``, ``mass_fast``, ``frame_fast``,
#: ``DerivativeWork.fast``) are kept on the Model as well, once made: a call reads its tuple with one attribute
#: lookup, where ``model._multibody_data.fast`` takes two (measured: 40 ns of a frame Jacobian's 0.75 µs)
FAST_ATTR, MASS_ATTR, FRAME_ATTR, DERIVATIVE_ATTR = ("_multibody_fast", "_multibody_mass_fast",
                                                     "_multibody_frame_fast", "_multibody_derivative_fast")
CACHED_ATTRS = (CACHE_ATTR, FAST_ATTR, MASS_ATTR, FRAME_ATTR, DERIVATIVE_ATTR)
#: the algorithms with a C-level entry (``kernels/entries.py``) and the attributes of the Model under which
#: :func:`bind_entry` keeps each one's entry over the default Data (builtins: never pickled, ``Model.__getstate__``;
#: the class's :class:`EntryAttribute` binds it on first read)
ENTRY_ALGORITHMS = ("aba", "rnea", "crba", "centroidal_map", "com_jacobian", "minv", "frame_jacobian",
                    "frame_placement", "rnea_derivatives", "aba_derivatives")
ENTRY_ATTRS = tuple("_multibody_entry_" + name for name in ENTRY_ALGORITHMS)


def publish(data, attr, value):
    """Keep ``value`` (a fast-path tuple of ``data``) on ``data.model`` under ``attr`` when ``data`` is the Data
    cached on the model (:func:`default_data`)."""
    cache = getattr(data.model, "__dict__", None)
    if cache is not None and cache.get(CACHE_ATTR) is data:
        cache[attr] = value


def no_entry(*args):
    """The stand-in entry of an algorithm that has no C-level entry on a model (general joints, a moving base, a model
    read for its kinematics only, or none in this process: ``kernels.entries.available``): None, a miss."""
    return None


def bind_entry(model, algorithm):
    """The C-level entry of ``algorithm`` (one of :data:`ENTRY_ALGORITHMS`) over the default Data of ``model``, kept on
    the model under ``"_multibody_entry_" + algorithm``: made on the algorithm's first call (which compiles the entry,
    or loads it from the cache, once per process), the builtin of ``kernels.entries.bind``, or :func:`no_entry` where
    the Data has no fast path for it or the entries are not available. An object that keeps no attributes or is no
    model gets :func:`no_entry`, kept nowhere."""
    cache = getattr(model, "__dict__", None)
    if cache is None or not hasattr(model, "nv"):
        return no_entry
    d = default_data(model)
    nv = d.nv
    if algorithm == "crba":
        arrays, shape = (None if d.mass_fast is None else (d.mi, d.mf, d.work)), (nv, nv)
    elif algorithm == "minv":
        w = d.derivative_work()
        arrays, shape = (None if w.fast is None else (d.mi, d.mf, d.work, w.dwork, w.dint)), (nv, nv)
    elif algorithm in ("rnea_derivatives", "aba_derivatives"):
        w = d.derivative_work()
        arrays = None if w.fast is None else (d.mi, d.mf, d.no_fext, d.work, w.dwork, w.dint, w.qdd)
        shape = (nv, nv)
    elif algorithm in ("frame_jacobian", "frame_placement"):
        fi, ff, ids, _, fast = d.frame_table()
        arrays, shape = (None if fast is None else (d.mi, d.mf, fi, ff, d.work, ids)), (6, nv)
    elif algorithm in ("aba", "rnea"):
        arrays, shape = (None if d.fast is None else (d.mi, d.mf, d.no_fext, d.work)), (nv,)
    else:  # centroidal_map, com_jacobian
        arrays, shape = (None if d.fast is None else (d.mi, d.mf, d.work)), (6 if algorithm == "centroidal_map" else 3,
                                                                               nv)
    entry = None
    if arrays is not None:
        from multibody.kernels.entries import bind

        entry = bind(algorithm, arrays, shape)
    entry = cache["_multibody_entry_" + algorithm] = no_entry if entry is None else entry
    return entry


class EntryAttribute:
    """The class attribute ``Model._multibody_entry_<algorithm>``: read on a model that has no entry of the algorithm
    yet, it binds one (:func:`bind_entry`), which the model keeps in its ``__dict__``; a non-data descriptor, so every
    later read finds that entry first, at the price of a plain attribute. The public algorithms read it with
    ``getattr(model, ..., no_entry)``, so that an object that is no Model goes on to the general path's error."""

    def __init__(self, algorithm):
        self.algorithm = algorithm

    def __get__(self, model, owner=None):
        return self if model is None else bind_entry(model, self.algorithm)


def base_block(work):
    """The base block of a flat workspace (a view of its last ``BASE_WIDTH`` floats; ``kinematics.X_R``)."""
    return work[work.shape[0] - BASE_WIDTH:]


def refuse_kinematics_only(model, what):
    """A ``ModelError`` for ``what`` (a dynamics computation) on a model read for its kinematics only
    (``Model.kinematics_only``), in one line with the reason (the link whose mass or inertia leaves the dynamics
    undefined)."""
    reason = getattr(model, "kinematics_only", None)
    if reason:
        raise ModelError(f"model '{model.name}' was read for its kinematics only, so {what} is not defined: {reason} "
                         "(repair=True gives such links a bounded mass and inertia)", element="model")


def refuse_general_joints(model, what):
    """A ``ModelError`` naming the first general joint of ``model`` (seed 001 §3.4.2), for ``what`` (a method
    that does not take them: their kinematics come from a generated function called before each kernel, which
    only the numeric algorithms and the ``"tree"`` formulation do)."""
    for j in getattr(model, "joints", ())[1:]:
        if j.joint.code == K.GENERAL:
            raise ModelError(f"joint '{j.name}' is a GeneralJoint: {what} does not take general joints (use the "
                             "numeric algorithms aba/rnea/crba or simulate with the 'tree' formulation)",
                             element=f"joint '{j.name}'")


class Data:
    """Preallocated workspace for one Model: ``Data(model)``.

    Attributes: ``model``, ``nq``, ``nv``, ``nbodies``, the packed arrays ``mi`` and ``mf``, the flat
    workspace ``work``, ``no_fext`` (an empty (0, 6) array meaning "no external forces") and ``fill`` (None,
    or for a model with general joints the function ``fill(q, v, t, work)`` to call before a kernel). The kernels
    write only into ``work``; make one Data per thread when calling kernels that release the GIL.

    ``mi`` and ``mf`` are the Model's numbers: never change them. They are writable arrays all the same, like
    every array the kernels receive, because numba compiles a kernel once per combination of argument types
    and a read-only array is another type: so the first ``aba`` and the first ``simulate`` (whose batched runs
    copy ``mf`` to vary masses or gravity) share one compiled ABA.
    """

    __slots__ = ("model", "nq", "nv", "nbodies", "mi", "mf", "work", "no_fext", "base_motion", "fill", "fast",
                 "mass_fast", "mshape", "derivatives", "frames", "frame_fast", "refused")

    def __init__(self, model):
        self.model = model
        self.nq = int(model.nq)
        self.nv = int(model.nv)
        self.nbodies = int(model.nbodies)
        self.mi, self.mf = pack_model(model)
        rows = general_rows(model)
        self.work = np.zeros(workspace_size(self.nbodies + 1, self.nv, rows))
        self.no_fext = np.zeros((0, 6))
        #: ``fill(q, v, t, work)``: the compiled function that writes the general joints' kinematics at
        #: (q, q̇ = v, t) into ``work`` (``kernels/general_joint.py``), or None for a model without them
        self.fill = None
        if rows:
            from multibody.kernels.general_joint import compile_general_joints

            self.fill = compile_general_joints(model, self.mi).fill

        #: the model's prescribed base motion (None: a fixed ground)
        self.base_motion = getattr(model, "base_motion", None)
        if self.base_motion is not None:
            self.set_time(0.0)
        #: True for a model read for its kinematics only (``Model.kinematics_only``): the dynamics refuse it
        self.refused = bool(getattr(model, "kinematics_only", None))
        #: the shape of the mass matrix (``algorithms.crba``)
        self.mshape = (self.nv, self.nv)
        #: the kernels' arguments on the fast path of ``algorithms.aba``/``rnea``/``centroidal_map`` (the "fast path"
        #: of ``algorithms.dynamics``), one attribute to read per call: ``(mi, mf, no_fext, work, nv, (6, nv),
        #: model)``; None when general joints or a moving base need their step before a kernel
        self.fast = (None if self.fill is not None or self.base_motion is not None or self.refused
                     else (self.mi, self.mf, self.no_fext, self.work, self.nv, (6, self.nv), model))
        #: those of ``algorithms.crba``, which a moving base does not change: ``(mi, mf, work, (nv, nv), model)``
        self.mass_fast = (None if self.fill is not None or self.refused
                          else (self.mi, self.mf, self.work, self.mshape, model))
        #: the workspaces of the derivatives of the dynamics (:class:`DerivativeWork`), made on first use
        self.derivatives = None
        #: the frame table of the model's frames (:meth:`frame_table`), made on first use, and the arguments of the
        #: frame kernels on the fast path of ``algorithms.frames`` (its last entry), None until then
        self.frames = None
        self.frame_fast = None

    def frame_table(self):
        """``(fi, ff, ids, every, fast)``: the frame table of every frame of the model (``Model.all_frames``, in the
        order of the handles ``Model.frame_id``; ``kernels/frames.py``), the handles by name, every handle (an int64
        array), and the arguments of the frame
        kernels on the fast path of ``algorithms.frames`` — ``(mi, mf, fi, ff, work, nv, ids, zero, model, (6, nv))``
        with ``zero`` nv zeros (the velocity of a call for placements only), or None where general joints or a moving
        base need a step before each kernel (as ``fast``; kept as ``frame_fast`` too). Made on the first call."""
        if self.frames is None:
            from multibody.kernels.packing import pack_frames

            model = self.model
            frames = model.all_frames()
            placed = [(f.body, P.rotation, P.translation)
                      for f in frames for P in (model.body_frames[f.body] * f.placement,)]
            fi, ff = pack_frames(model.parent, placed)
            ids = model.frame_ids
            fast = (None if self.fill is not None or self.base_motion is not None else
                    (self.mi, self.mf, fi, ff, self.work, self.nv, ids, np.zeros(self.nv), model, (6, self.nv)))
            self.frames = (fi, ff, ids, np.arange(fi.shape[0], dtype=np.int64), fast)
            self.frame_fast = fast
            publish(self, FRAME_ATTR, fast)
        return self.frames

    def derivative_work(self):
        """The :class:`DerivativeWork` of this Data (made on the first call)."""
        if self.derivatives is None:
            self.derivatives = DerivativeWork(self)
            publish(self, DERIVATIVE_ATTR, self.derivatives.fast)
        return self.derivatives

    def set_time(self, t, work=None):
        """Write the state of the moving base at time ``t`` into the base block of ``work`` (default: this
        Data's workspace), where the kernels read it (seed 001 §3.1–3.2; ``kinematics.set_ground``). Nothing
        to do for a fixed ground."""
        if self.base_motion is not None:
            self.base_motion.block(t, base_block(self.work if work is None else work))

    def __repr__(self):
        return f"Data(model={self.model.name!r}, nbodies={self.nbodies}, nq={self.nq}, nv={self.nv})"


class DerivativeWork:
    """The workspaces of the derivative kernels (``kernels/derivatives*.py``) for one :class:`Data`, made on first
    use: ``dwork`` (floats; with M⁻¹'s n·6·nv, which the other algorithms do not need), ``dint`` (the subtree
    tables), ``forces`` (the model's applied forces, ``model.forces.AppliedForces``), ``fb`` (a per-body scratch),
    ``applied`` (whether the model has any), ``qdd`` (nv), and ``fast``: the arguments of the
    kernels on the fast path of ``algorithms.derivatives``, ``(mi, mf, no_fext, work, dwork, dint, forces, fb, qdd,
    (nv, nv), applied, model)`` (None where general joints or a moving base need a step before each call, as
    ``Data.fast``)."""

    __slots__ = ("dwork", "dint", "forces", "fb", "applied", "qdd", "fast")

    def __init__(self, data):
        model = data.model
        n = data.nbodies + 1
        self.dwork = np.zeros(derivative_workspace_size(n, data.nv))
        self.dint = subtree_tables(np.asarray(model.parent), np.asarray(model.idx_v), np.asarray(model.nv_j))
        self.forces, self.applied = applied_forces(model)
        self.fb = np.zeros((n, 6))
        self.qdd = np.zeros(data.nv)
        self.fast = None if data.fast is None else (data.mi, data.mf, data.no_fext, data.work, self.dwork, self.dint,
                                                    self.forces, self.fb, self.qdd, data.mshape, self.applied, model)


def default_data(model):
    """The Data cached on ``model`` (created on first use). A cache only: the Model's arrays are unchanged."""
    try:
        return model.__dict__[CACHE_ATTR]
    except KeyError:
        d = Data(model)
        model.__dict__[CACHE_ATTR] = d
        publish(d, FAST_ATTR, d.fast)
        publish(d, MASS_ATTR, d.mass_fast)
        return d
    except AttributeError:  # an object without __dict__: no caching
        return Data(model)
