"""The outcome of a simulation: time histories of q, v, energies, constraint residuals and reactions.

A :class:`Result` is a plain container of numpy arrays with **time as the first axis**:

``t`` (n,), ``q`` (n, nq), ``v`` (n, nv);
``energy``: dict with ``"kinetic"``, ``"potential"``, ``"total"`` arrays of shape (n,) (empty if not computed), and
for a run with contact ``"dissipated"``, the energy its contacts and dampers dissipated since the start (so that
``total + dissipated`` is conserved when no other force does work);
``residuals``: dict constraint name -> array (n,) or (n, k);
``reactions``: dict joint or constraint name -> array (n, k). One convention in every formulation
(``multibody.rows.reactions``): for a joint — tree or cut — (n, 6), the spatial force ``[moment; force]`` the
joint applies to its child body, the moment about the joint frame's origin, both in the axes of the joint
frame on the child's side; the whole force the joint transmits (reaction and drive: its projection on the
joint's motion subspace is the joint's τ; seed 001 §3.5, eq. 3.175). For a constraint that is not a joint,
(n, rows): its multipliers λ in the order of its rows (force ``Gᵀλ`` on the coordinates, ``M v̇ = τ − C +
Gᵀλ``), and for a ``RollingOnProfile`` in the stabilized formulation also ``"<name>.rate"``, the rate of its
contact angle. The tree formulation computes its joint reactions when ``reactions`` is first read;
``multibody.joint_reactions`` gives them for any state;
``series``: other time histories by name, array (n,) or (n, k) (e.g. auxiliary state variables);
``info``: dict of JSON-serialisable facts (method, steps, cpu_seconds, status, message, ...);
``q_names`` / ``v_names``: labels of the coordinates (used by the plots and the CSV header);
``contacts``: for a run with contact (``simulate(..., contact=...)``), the active contacts at each output time
(:class:`Contacts`; None for other runs). Saved with the Result in ``.npz`` and ``.h5`` files (arrays
``contacts/<field>``, the pairs' names in the metadata), bit for bit; a ``.csv`` file, one row per time, cannot
hold them and says so (a warning).
``events``: the switches of a run with joint limits, latches or releases
(``multibody.switching.run``), a list of dicts with keys ``t``, ``element``, ``kind``
(``"impact"``, ``"contact"``, ``"separate"``, ``"lock"``, ``"release"``), ``impulse`` and more (empty for other
runs); ``structures``: the models such a run went through, ``[{"t": from when, "model": Model}]`` (None for other
runs; not saved to files, like ``model``).
``dense``: for an adaptive run whose outputs are its accepted steps (no ``t_eval``, ``n_out``) and that took at most
``DENSE_STEPS`` of them, the integrator's dense output between them: ``dense(t)`` is the Result of the states at the
times ``t`` (coordinates, energies; the plots draw the run from it, not through its few steps); None otherwise (not
saved to files).

Files: ``save(path)`` / ``Result.load(path)`` pick the format from the suffix: ``.npz`` (exact, binary) or
``.csv`` (one row per time, columns ``t``, ``q.<name>``, ``v.<name>``, ``energy.<kind>``, ...; a first comment
line carries the layout (with the number of times) and ``info`` as JSON, a last comment line ``# end`` closes it;
values are written with 17 significant digits, so a round trip is exact). Files are replaced atomically; a
missing, truncated, foreign or damaged file is a ``ResultFileError`` naming it and what is wrong.

Views: ``plot``, ``to_html``, ``show`` and ``animate`` hand the Result to the functions of the same purpose in
``multibody.viz`` (``plot_result``, ``to_html``, ``show``, ``animate``). This module sits below ``viz`` and does
not import it: the view module is named by :data:`VIEWS` and looked up when a view is asked for (late binding,
as pandas finds its plotting backend), so no import edge runs from here up to ``viz``.
"""
import importlib
import json
import warnings

import numpy as np

from multibody.errors import ModelError, ResultFileError, shown
from multibody.files import as_path, atomic_write, check_options, check_readable, unreadable

ENERGY_KEYS = ("kinetic", "potential", "total", "dissipated")
#: prefix of the series that hold the drive forces of prescribed coordinates (``Result.drive_forces``)
DRIVE_FORCE = "drive force "
#: the module that draws Results (looked up by name on the first view; see the module docstring)
VIEWS = "multibody.viz"


def _view(name):
    return getattr(importlib.import_module(VIEWS), name)


def _as_2d(a, n, name):
    a = np.asarray(a, dtype=float)
    if a.ndim == 1 and a.shape[0] == n:
        a = a.reshape(n, 1)
    if a.ndim != 2 or a.shape[0] != n:
        raise ModelError(f"Result: '{name}' must have shape (n_times={n}, k), got {a.shape}")
    return a


def _json_default(obj):
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


#: the last line of a CSV Result file (a file cut short, e.g. in the middle of its last number, lacks it)
CSV_END = "# end"
#: the keys of a Result file's metadata and their types (``series``, absent from the first files, defaults to none)
META_KEYS = {"q_names": list, "v_names": list, "energy": list, "residuals": dict, "reactions": dict, "info": dict,
             "series": dict}


def checked_meta(meta, path):
    """The metadata of a Result file, checked: a dict of the format ``multibody.Result`` with every key of
    :data:`META_KEYS` of its type; else a ``ResultFileError`` naming the file and the key."""
    if not isinstance(meta, dict) or meta.get("format") != "multibody.Result":
        found = meta.get("format") if isinstance(meta, dict) else type(meta).__name__
        raise ResultFileError(f"Result file '{path}' is not a multibody Result file (format {shown(found)!r})", path=path)
    meta = dict(meta)
    meta.setdefault("series", {})
    for key, kind in META_KEYS.items():
        if not isinstance(meta.get(key), kind):
            raise ResultFileError(f"Result file '{path}' is damaged: its metadata has no {kind.__name__} "
                                  f"'{key}'", path=path)
    if "contacts" in meta:
        pairs = meta["contacts"].get("pairs") if isinstance(meta["contacts"], dict) else None
        if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 4 and
                                                  all(isinstance(x, str) for x in p) for p in pairs):
            raise ResultFileError(f"Result file '{path}' is damaged: its metadata's 'contacts' has no list of pairs "
                                  "(four names each)", path=path)
    return meta


def _member(arrays, path):
    """``get(name)``: the array ``name`` of an .npz Result file, or a ``ResultFileError`` naming it."""
    def get(name):
        if name not in arrays:
            raise ResultFileError(f"Result file '{path}' is damaged: it has no array '{name}'", path=path)
        return arrays[name]

    return get


def _columns(data, meta, path):
    """``get(name)`` for the columns of a CSV Result file (in the order :meth:`Result.save` writes them)."""
    nq, nv = len(meta["q_names"]), len(meta["v_names"])
    blocks = {"t": data[:, 0], "q": data[:, 1:1 + nq], "v": data[:, 1 + nq:1 + nq + nv]}
    c = 1 + nq + nv
    for k in meta["energy"]:
        blocks[f"energy/{k}"] = data[:, c]
        c += 1
    for group, key in (("residual", "residuals"), ("reaction", "reactions"), ("series", "series")):
        for i, shape in enumerate(meta[key].values()):
            shape = tuple(int(s) for s in shape)
            size = int(np.prod(shape)) if shape else 1
            blocks[f"{group}/{i}"] = data[:, c:c + size].reshape((data.shape[0],) + shape)
            c += size
    if c != data.shape[1]:
        raise ResultFileError(f"Result file '{path}' is damaged: its metadata describes {c} columns, it has "
                              f"{data.shape[1]}", path=path)
    return _member(blocks, path)


class Result:
    __doc__ = __doc__       # the fields, the one convention of the reactions and the file formats (help(mb.Result))

    def __init__(self, t, q, v, energy=None, residuals=None, reactions=None, info=None, q_names=None,
                 v_names=None, model=None, series=None, contacts=None, events=None):
        self.t = np.asarray(t, dtype=float).reshape(-1)
        n = self.t.shape[0]
        self.q = _as_2d(q, n, "q")
        self.v = _as_2d(v, n, "v")
        self.energy = {}
        for key, val in (energy or {}).items():
            if key not in ENERGY_KEYS:
                raise ModelError(f"Result: energy key '{key}' is unknown; expected {ENERGY_KEYS}")
            val = np.asarray(val, dtype=float).reshape(-1)
            if val.shape[0] != n:
                raise ModelError(f"Result: energy '{key}' has {val.shape[0]} values for {n} times")
            self.energy[key] = val
        if "kinetic" in self.energy and "potential" in self.energy and "total" not in self.energy:
            self.energy["total"] = self.energy["kinetic"] + self.energy["potential"]
        self.residuals = {str(k): self._series(k, val, "residual") for k, val in (residuals or {}).items()}
        self._reactions = None
        self._reactions_source = None
        if callable(reactions):
            self._reactions_source = reactions        # computed when first read (the tree formulation)
        else:
            self.reactions = reactions
        self.series = {str(k): self._series(k, val, "series") for k, val in (series or {}).items()}
        self.info = dict(info or {})
        nq, nv = self.q.shape[1], self.v.shape[1]
        self.q_names = list(q_names) if q_names is not None else [f"q[{i}]" for i in range(nq)]
        self.v_names = list(v_names) if v_names is not None else [f"v[{i}]" for i in range(nv)]
        if len(self.q_names) != nq or len(self.v_names) != nv:
            raise ModelError(f"Result: {len(self.q_names)} q_names / {len(self.v_names)} v_names for "
                             f"nq={nq}, nv={nv}")
        self.model = model  # not saved to files
        if contacts is not None and len(contacts) != n:
            raise ModelError(f"Result: contacts has {len(contacts)} output times for {n} times")
        self.contacts = contacts
        self.events = [dict(e) for e in (events or ())]
        self.structures = None  # not saved to files
        self.dense = None       # not saved to files (module docstring)

    @property
    def reactions(self):
        if self._reactions is None:
            source, self._reactions_source = self._reactions_source, None
            self.reactions = source() if source is not None else {}
        return self._reactions

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_reactions"] = self.reactions        # a pickled Result carries its reactions, not their recipe
        state["_reactions_source"] = None
        return state

    @reactions.setter
    def reactions(self, value):
        self._reactions = {str(k): self._series(k, val, "reaction") for k, val in (value or {}).items()}

    def _series(self, name, val, what):
        val = np.asarray(val, dtype=float)
        if val.ndim == 0 or val.shape[0] != self.t.shape[0]:
            raise ModelError(f"Result: {what} '{name}' must have the time axis first ({self.t.shape[0]} "
                             f"values), got shape {val.shape}")
        return val

    # ------------------------------------------------------------------------------------------------
    def __len__(self):
        return self.t.shape[0]

    def __repr__(self):
        status = self.info.get("status", "")
        return (f"Result({len(self)} times on [{self.t[0] if len(self) else 0:g}, "
                f"{self.t[-1] if len(self) else 0:g}], nq={self.q.shape[1]}, nv={self.v.shape[1]}"
                f"{', ' + status if status else ''})")

    @property
    def drive_forces(self):
        """The drive force of each prescribed coordinate at each output time, ``{"joint.coordinate": (n,)}``
        (``simulate(..., prescribed=...)``; seed 001 §3.3.1, eq. 3.93): the generalized force the drive adds to
        the model's own forces on that coordinate, positive when it does positive work on q̇. Read from the
        series ``"drive force <name>"`` (so saved files keep them); empty for a run without prescribed
        coordinates."""
        return {k[len(DRIVE_FORCE):]: v for k, v in self.series.items() if k.startswith(DRIVE_FORCE)}

    @property
    def energy_total(self):
        """T + V along the run (``energy["total"]``)."""
        return self.energy["total"]

    @property
    def energy_kinetic(self):
        return self.energy["kinetic"]

    @property
    def energy_potential(self):
        return self.energy["potential"]

    @property
    def x(self):
        """The state ``[q, v]`` as one (n, nq + nv) array."""
        return np.hstack([self.q, self.v])

    def energy_drift(self, relative=True):
        """Largest deviation of the total energy from its initial value, ``max_t |E(t) - E(0)|``.

        With ``relative=True`` it is divided by ``max(|E(0)|, max_t T(t))``: the total energy depends on the
        datum of the potential (it is 0 for the seed 001 triple pendulum released from rest), while the
        kinetic energy measures how much energy the motion exchanges. Raises ``ValueError`` when the
        energies were not computed.
        """
        if "total" not in self.energy:
            raise ModelError("Result: energies were not computed for this run")
        e = self.energy["total"]
        drift = float(np.max(np.abs(e - e[0]))) if e.size else 0.0
        if not relative:
            return drift
        scale = abs(float(e[0]))
        if "kinetic" in self.energy and self.energy["kinetic"].size:
            scale = max(scale, float(np.max(np.abs(self.energy["kinetic"]))))
        return drift / scale if scale > 0 else drift

    # ------------------------------------------------------------------------------------------------
    # files
    def _meta(self):
        return {
            "format": "multibody.Result", "version": 1,
            "q_names": self.q_names, "v_names": self.v_names,
            "energy": [k for k in ENERGY_KEYS if k in self.energy],
            "residuals": {k: list(v.shape[1:]) for k, v in self.residuals.items()},
            "reactions": {k: list(v.shape[1:]) for k, v in self.reactions.items()},
            "series": {k: list(v.shape[1:]) for k, v in self.series.items()},
            "length": len(self),
            "info": self.info,
            "events": self.events,
            **({"contacts": {"pairs": [list(p) for p in self.contacts.pairs]}} if self.contacts is not None else {}),
        }

    def metadata_json(self, contacts=True):
        """The layout of the arrays and ``info``, as the JSON text every Result file carries (without the contacts'
        pairs for a file that does not hold the contacts)."""
        meta = self._meta()
        if not contacts:
            meta.pop("contacts", None)
        return json.dumps(meta, default=_json_default)

    def save(self, path):
        """Write to ``path``: ``.npz`` or ``.csv`` by suffix. Returns the path.

        The file is replaced atomically (``multibody.files.atomic_write``): a failed write leaves the previous
        file, never a torn one; a place that cannot be written is a ``ResultFileError`` naming the file."""
        path = as_path(path, "Result file")
        if path.is_dir():
            raise ResultFileError(f"Result file '{path}' is a folder; give the name of a file in it", path=path)
        suffix = path.suffix.lower()
        meta = self.metadata_json(contacts=suffix != ".csv")
        if suffix == ".npz":
            arrays = {"t": self.t, "q": self.q, "v": self.v, "meta": np.array(meta)}
            for k, val in self.energy.items():
                arrays[f"energy/{k}"] = val
            for i, (k, val) in enumerate(self.residuals.items()):
                arrays[f"residual/{i}"] = val
            for i, (k, val) in enumerate(self.reactions.items()):
                arrays[f"reaction/{i}"] = val
            for i, (k, val) in enumerate(self.series.items()):
                arrays[f"series/{i}"] = val
            arrays.update(self.contacts.arrays() if self.contacts is not None else {})
            return atomic_write(path, lambda fh: np.savez(fh, **arrays), "Result file")
        if suffix == ".csv":
            if self.contacts is not None:
                warnings.warn(f"Result.save('{path}'): a CSV file holds one row per time and not the run's contacts "
                              "(result.contacts); save to .npz (or .h5 with multibody.io.save_result) to keep them", stacklevel=2)
            cols = [self.t[:, None], self.q, self.v]
            # q. and v. prefixes: a one-coordinate joint's coordinate and velocity have the same name
            header = ["t"] + [f"q.{n}" for n in self.q_names] + [f"v.{n}" for n in self.v_names]
            for k in ENERGY_KEYS:
                if k in self.energy:
                    cols.append(self.energy[k][:, None])
                    header.append(f"energy.{k}")
            for group, d in (("residual", self.residuals), ("reaction", self.reactions), ("series", self.series)):
                for k, val in d.items():
                    flat = val.reshape(len(self), -1)
                    cols.append(flat)
                    header += [f"{group}.{k}" if flat.shape[1] == 1 and val.ndim == 1 else f"{group}.{k}[{j}]"
                               for j in range(flat.shape[1])]
            data = np.hstack(cols) if len(self) else np.zeros((0, len(header)))
            for name in header:
                if "," in name or "\n" in name:
                    raise ModelError(f"Result.save: column name {name!r} contains a comma or newline (CSV)")

            def write(fh):
                fh.write("# " + meta + "\n")
                fh.write(",".join(header) + "\n")
                np.savetxt(fh, data, delimiter=",", fmt="%.17g")
                fh.write(CSV_END + "\n")

            return atomic_write(path, write, "Result file", mode="w")
        raise ResultFileError(f"Result.save: suffix of '{path}' must be .npz or .csv"
                                  + (" (HDF5 files: multibody.io.save_result)" if suffix in (".h5", ".hdf5") else ""),
                                  path=path)

    @classmethod
    def from_file(cls, get, meta, path):
        """The Result of a file's arrays, ``get(name)`` (``"t"``, ``"q"``, ``"energy/<kind>"``, ``"residual/<k>"``,
        ...), and its checked metadata (:func:`checked_meta`); a file that holds fewer times than its metadata
        records is a ``ResultFileError``."""
        if "length" in meta and np.shape(get("t")) != (meta["length"],):
            raise ResultFileError(f"Result file '{path}' is truncated or damaged: it holds {np.size(get('t'))} of "
                                  f"its {meta['length']} times", path=path)
        return cls(get("t"), get("q"), get("v"), energy={k: get(f"energy/{k}") for k in meta["energy"]},
                   residuals={k: get(f"residual/{i}") for i, k in enumerate(meta["residuals"])},
                   reactions={k: get(f"reaction/{i}") for i, k in enumerate(meta["reactions"])},
                   series={k: get(f"series/{i}") for i, k in enumerate(meta["series"])},
                   info=meta["info"], q_names=meta["q_names"], v_names=meta["v_names"], events=meta.get("events"),
                   contacts=Contacts.from_arrays(get, meta["contacts"]["pairs"]) if "contacts" in meta else None)

    @classmethod
    def load(cls, path):
        """Read a file written by :meth:`save` (``.npz`` or ``.csv``). A missing, truncated, foreign or damaged
        file is a ``ResultFileError`` (a ``ModelError``) naming the file and what is wrong."""
        path = as_path(path, "Result file")
        suffix = path.suffix.lower()
        if suffix not in (".npz", ".csv"):
            raise ResultFileError(f"Result.load: suffix of '{path}' must be .npz or .csv"
                                  + (" (HDF5 files: multibody.io.load_result)" if suffix in (".h5", ".hdf5") else ""),
                                  path=path)
        check_readable(path, "Result file")
        try:
            if suffix == ".npz":
                with np.load(path, allow_pickle=False) as z:
                    if "meta" not in z.files:
                        raise ResultFileError(f"Result file '{path}' is not a multibody Result file (an .npz "
                                              "archive without the Result's metadata)", path=path)
                    meta = checked_meta(json.loads(str(z["meta"])), path)
                    arrays = {name: z[name] for name in z.files if name != "meta"}
                get = _member(arrays, path)
            else:
                with open(path, encoding="utf-8") as fh:
                    first = fh.readline()
                    if not first.startswith("# "):
                        raise ResultFileError(f"Result file '{path}' is not a multibody Result CSV (no metadata "
                                              "line)", path=path)
                    meta = checked_meta(json.loads(first[2:]), path)
                    header = fh.readline().strip().split(",")
                    lines = fh.readlines()
                if "length" in meta and (not lines or lines[-1].rstrip("\n") != CSV_END):
                    raise ResultFileError(f"Result file '{path}' is truncated: its last line is not "
                                          f"'{CSV_END}'", path=path)
                data = np.loadtxt(lines, delimiter=",", ndmin=2)
                if data.size == 0:
                    data = np.zeros((0, len(header)))
                if data.shape[1] != len(header):
                    raise ResultFileError(f"Result file '{path}' has {data.shape[1]} columns, its header names "
                                          f"{len(header)}", path=path)
                get = _columns(data, meta, path)
            return cls.from_file(get, meta, path)
        except Exception as exc:  # BadZipFile, EOFError, JSONDecodeError, UnicodeDecodeError, a shape that misfits
            raise unreadable(path, "Result file", exc, "multibody Result file") from None

    # ------------------------------------------------------------------------------------------------
    def coordinate(self, c):
        """A coordinate selector -> (label, series): an int or ``'q[i]'`` indexes q, ``'v[i]'`` v, or a name of
        ``q_names`` or ``v_names``; a ``ModelError`` (element ``coords``) otherwise."""
        if isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) and \
                -self.q.shape[1] <= int(c) < self.q.shape[1]:
            return self.q_names[int(c)], self.q[:, int(c)]
        c = str(c)
        if c in self.q_names:
            i = self.q_names.index(c)
            return c, self.q[:, i]
        if c in self.v_names:
            i = self.v_names.index(c)
            return c, self.v[:, i]
        for prefix, arr in (("q[", self.q), ("v[", self.v)):
            index = c[2:-1]
            if c.startswith(prefix) and c.endswith("]") and index.isdigit() and int(index) < arr.shape[1]:
                return c, arr[:, int(index)]
        raise ModelError(f"Result: coordinate {shown(c)!r} is unknown; expected an index of q (0..{self.q.shape[1] - 1}),"
                         f" 'q[i]', 'v[i]' or one of {self.q_names + self.v_names}", element="coords")

    # ---- views (multibody.viz, looked up by name) ----------------------------------------------------------
    def plot(self, coords=None, energy=True, path=None, residuals=True, title=None):
        """A figure of chosen coordinates, the energies and the residuals against time:
        ``multibody.viz.plot_result(self, ...)`` (its arguments); written to ``path`` if given."""
        return _view("plot_result")(self, coords=coords, energy=energy, path=path, residuals=residuals, title=title)

    def to_html(self, path, model=None, **options):
        """The 3-D viewer as one self-contained HTML file: ``multibody.viz.to_html(self, path, ...)``; ``model``
        for a Result read from a file (which carries no model). Returns the path."""
        return _view("to_html")(self, path, model=model, **options)

    def show(self, model=None, **options):
        """The 3-D viewer inline in Jupyter: ``multibody.viz.show(self, ...)``."""
        return _view("show")(self, model=model, **options)

    def animate(self, path, **options):
        """A GIF (or MP4) of the motion: ``multibody.viz.animate(self, path, ...)``. Returns the path."""
        check_options(options, _view("animate"), "Result.animate", exclude=("model_or_result", "path"))
        return _view("animate")(self, path, **options)


#: the steps up to which an adaptive run with every step as output keeps its dense output (``Result.dense``): a few
#: kilobytes a step, and DOP853's interpolant costs 3 evaluations of the right-hand side a step (12 make the step);
#: a run of more steps than this has enough outputs to be drawn through them, and keeps none
DENSE_STEPS = 2000


class DenseOutput:
    """``Result.dense`` (module docstring): the Result of the states at the times t of the interpolant ``sol`` of an
    adaptive run's steps (an ``OdeSolution``), made by ``make_result(t, X, info)`` (the formulation's: its
    coordinates, energies, residuals)."""

    def __init__(self, sol, make_result):
        self.sol, self.make_result = sol, make_result

    def __call__(self, t):
        t = np.asarray(t, dtype=float).reshape(-1)
        return self.make_result(t, np.asarray(self.sol(t)).T.reshape(len(t), -1), {})


class Contacts:
    """The active contacts of a run at each output time, in flat arrays (one row per contact and time).

    The contacts at output k are rows ``offsets[k]:offsets[k + 1]``; per row: ``pair`` (index into ``pairs``, the
    pair of collision elements ``(collision A, collision B, body A, body B)``), ``point`` (3, the contact point in
    ground coordinates), ``normal`` (3, unit, from A to B), ``normal_force`` (N, on B along the normal; A receives
    the opposite), ``friction_force`` (3, N, on B, tangent to the surfaces) and ``distance`` (m, signed: negative in
    penetration). ``len(contacts)`` is the number of output times; ``count`` the contacts at each; ``at(k)`` the
    rows of output k as a dict; ``total_force()`` (n, 3) the sum of the forces on the B sides at each output.
    """

    FIELDS = ("pair", "point", "normal", "normal_force", "friction_force", "distance")

    def __init__(self, offsets, pairs, pair, point, normal, normal_force, friction_force, distance):
        self.offsets = np.asarray(offsets, dtype=np.int64)
        self.pairs = [tuple(p) for p in pairs]
        self.pair = np.asarray(pair, dtype=np.int64)
        self.point = np.asarray(point, dtype=float).reshape(-1, 3)
        self.normal = np.asarray(normal, dtype=float).reshape(-1, 3)
        self.normal_force = np.asarray(normal_force, dtype=float).reshape(-1)
        self.friction_force = np.asarray(friction_force, dtype=float).reshape(-1, 3)
        self.distance = np.asarray(distance, dtype=float).reshape(-1)

    def __len__(self):
        return self.offsets.shape[0] - 1

    def arrays(self):
        """The arrays of a Result file that hold these contacts: ``{"contacts/<field>": array}`` (``offsets`` and the
        :data:`FIELDS`); the pairs' names go to the file's metadata."""
        return {f"contacts/{f}": getattr(self, f) for f in ("offsets",) + self.FIELDS}

    @classmethod
    def from_arrays(cls, get, pairs):
        """The Contacts of a Result file: ``get(name)`` its arrays (:meth:`arrays`), ``pairs`` the pairs' names."""
        return cls(get("contacts/offsets"), pairs, *(get(f"contacts/{f}") for f in cls.FIELDS))

    def __eq__(self, other):
        """Equal when the pairs and every array are equal (bit for bit)."""
        if not isinstance(other, Contacts) or self.pairs != other.pairs:
            return NotImplemented if not isinstance(other, Contacts) else False
        return all(np.array_equal(a, b) for a, b in zip(self.arrays().values(), other.arrays().values()))

    __hash__ = None

    @property
    def count(self):
        """(n,) the number of contacts at each output time."""
        return np.diff(self.offsets)

    def at(self, k):
        """The contacts at output k: a dict of the fields (arrays) and ``"names"``, their pairs' names."""
        s = slice(self.offsets[k], self.offsets[k + 1])
        out = {f: getattr(self, f)[s] for f in self.FIELDS}
        out["names"] = [self.pairs[p] for p in out["pair"]]
        return out

    def total_force(self):
        """(n, 3): the sum over the contacts at each output of the force on their B sides."""
        F = self.normal_force[:, None] * self.normal + self.friction_force
        out = np.zeros((len(self), 3))
        rows = np.repeat(np.arange(len(self)), self.count)
        np.add.at(out, rows, F)
        return out

    def __repr__(self):
        rows = self.offsets[-1] if len(self) else 0
        return f"Contacts({len(self)} times, {rows} contact rows, {len(self.pairs)} pairs)"

    @classmethod
    def concatenate(cls, parts):
        """The contacts of consecutive pieces of one run, one after the other (the structures of a run across
        separations: each has its own pairs), their pairs joined by name."""
        index = {}
        for part in parts:
            for p in part.pairs:
                index.setdefault(p, len(index))
        pairs = list(index)
        counts = np.concatenate([part.count for part in parts])
        pair = np.concatenate([np.array([index[p] for p in part.pairs], dtype=np.int64)[part.pair] for part in parts])
        fields = {f: np.concatenate([getattr(part, f) for part in parts]) for f in cls.FIELDS[1:]}
        return cls(np.concatenate([[0], np.cumsum(counts)]), pairs, pair, **fields)


class BatchResult:
    """The runs of :func:`simulate_batch`, with the run as the first axis and time as the second.

    ``t`` (n,) the output times (the same for every run); ``q`` (runs, n, nq), ``v`` (runs, n, nv);
    ``energy``: dict ``"kinetic"``, ``"potential"``, ``"total"`` of arrays (runs, n) (empty with
    ``energy=False``); ``status`` (runs,) ``"success"`` or ``"failed"`` (a failed run — its state became
    non-finite — keeps NaN after its last finite output; the other runs are unaffected) and ``steps`` (runs,)
    the steps each made; ``info``: method, h, runs, threads, cpu and wall seconds of the whole batch.
    ``batch[b]`` is run b as a :class:`multibody.Result`; ``len(batch)`` the number of runs.
    """

    def __init__(self, t, q, v, energy, status, steps, info, model):
        self.t, self.q, self.v, self.energy = t, q, v, energy
        self.status, self.steps, self.info, self.model = status, steps, info, model

    def __len__(self):
        return self.q.shape[0]

    @property
    def ok(self):
        """(runs,) True for the runs that completed."""
        return self.status == "success"

    #: the switch log of each run of a model with stops, latches or releases; its q, v columns (None: the model's);
    #: the contacts of each run of the time-stepping model (``multibody.result.Contacts``)
    events = q_names = v_names = contacts = None

    def __getitem__(self, b):
        b = range(len(self))[b]
        info = {**self.info, "status": str(self.status[b]), "steps": int(self.steps[b]), "run": b}
        return Result(self.t, self.q[b], self.v[b], energy={k: e[b] for k, e in self.energy.items()}, info=info,
                      q_names=self.q_names or self.model.coordinate_names(),
                      v_names=self.v_names or self.model.velocity_names(), model=self.model,
                      events=None if self.events is None else self.events[b],
                      contacts=None if self.contacts is None else self.contacts[b])

    def __repr__(self):
        return (f"BatchResult({len(self)} runs of model '{self.info.get('model', '')}', {self.t.shape[0]} outputs, "
                f"{int(np.sum(~self.ok))} failed)")
