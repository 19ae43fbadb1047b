"""Animations of a model's motion, written to GIF (Pillow) or MP4 (ffmpeg) files.

What is drawn, frame by frame, from the library's public kinematics only (``forward_kinematics`` and
``Model.joint_frames``) — the stick figures of seed 001's own animation of the triple pendulum (§3.5, Fig. 3.21,
``start.m``: one straight rod per body from joint to joint), for any model:

* **links**: for every body, straight segments from the origin of its tree joint's frame (the point where it
  hangs on its parent) to each joint frame it carries — the joints of its children and the cut joints that
  close a loop on it (seed 001 §1.1: a joint is located on both bodies) — and to the points where springs hold
  it; a body that carries no joint (a pendulum's bob, a wheel, the last rod of a chain) runs to its centre of
  mass and is drawn whole there: the three principal axes of the solid ellipsoid of its mass and inertia
  (``multibody.viz.shapes.inertia_ellipsoid``), so that a spring held at a rod's tip meets the rod;
* **body frames**: a small triad per body (x red, y green, z blue) in the body's own frame;
* **sliding joints** (``Prismatic``, ``Cylindrical``): a thin grey line from the joint's frame on the parent to
  the joint's frame on the child — the stroke of a slider;
* **point springs**: a dashed line between their two points; **rolling discs** (``RollingDisc``,
  ``RollingOnProfile``): the rim; the profile of a ``RollingOnProfile`` as a grey curve;
* the ground's joint points as black squares (not those of a floating ``Free`` or ``Planar`` joint), the
  centres of mass as dots;
* **collision shapes** (``model.collisions``; meshes excepted) as grey wireframes — a sphere's three great
  circles, a capsule's or cylinder's rims and sides, a box's edges — and a half-space on the ground as a square
  of the window's size in its plane; the **contacts** of a run with contact (``result.contacts``) as red crosses.

Planar systems are drawn in 2-D. A system is planar when every tree joint keeps its child in one plane of the
ground — every revolute axis and the normal of every ``Planar`` joint parallel to one direction n, every prismatic
axis perpendicular to it, and no spherical, universal, cylindrical or free joint — the planar systems of seed 001
§2.5 and of the parallel hinges of §3.2.2. The picture is then the projection on that plane, with "up" (against
gravity) pointing up. Every other system is drawn in a 3-D matplotlib projection, again with "up" up.

``animate(model_or_result, path, q=None, t=None, frames=None, fps=20)``: the file type follows the suffix of
``path`` — ``.gif`` (matplotlib's ``PillowWriter``) or ``.mp4`` (``FFMpegWriter``; a ``ModelError`` when ffmpeg is
not installed). Example::

    from multibody.systems import slider_crank
    from multibody.viz import animate

    res = slider_crank.simulate_turns(turns=1, n_out=121)
    animate(res, "slider_crank.gif", frames=40)        # planar: drawn in the plane of the crank

The command line does the same from a saved Result: ``multibody animate run.npz --model MODULE:FUNCTION``.
"""
from pathlib import Path

import numpy as np

from multibody.errors import ModelError, ResultFileError, shown
from multibody.files import writable_file
from multibody.model.joints import CYLINDRICAL, FIXED, FREE, PLANAR, PRISMATIC, REVOLUTE
from multibody.viz.shapes import inertia_ellipsoid

__all__ = ["animate", "planar_basis", "Scene", "read_motion", "collision_outline"]

_TOL = 1e-9
#: the longest default animation, in seconds: a longer run plays faster than real time
MAX_SECONDS = 20.0
_AXIS_COLOURS = ("tab:red", "tab:green", "tab:blue")


def _unit(v):
    n = np.linalg.norm(v)
    return v / n if n > 0 else v


def up_direction(model):
    """The direction against gravity (world z when there is none)."""
    g = np.asarray(model.gravity, dtype=float)
    return _unit(-g) if np.linalg.norm(g) > 0 else np.array([0.0, 0.0, 1.0])


def _joint_directions(model, K):
    """World directions of the tree joints at the placements ``K`` (kernel frames): (parallel, perpendicular)
    lists — the revolute axes and Planar normals that a plane of motion must be normal to, the prismatic axes that
    must lie in it — or None when a joint moves its child out of any plane (spherical, universal, cylindrical,
    free)."""
    par, perp = [], []
    for j in model.joints[1:]:
        code = j.joint.code
        if code == FIXED:
            continue
        if code not in (REVOLUTE, PRISMATIC, PLANAR):
            return None
        Pa, _ = model.joint_frames(j)
        Rj = K.R[j.parent] @ Pa.rotation          # the joint frame in ground coordinates
        if code == REVOLUTE:
            par.append(Rj @ j.joint.axis)
        elif code == PRISMATIC:
            perp.append(Rj @ j.joint.axis)
        else:                                      # Planar: motion in the joint frame's xy-plane
            par.append(Rj[:, 2])
    return par, perp


def planar_basis(model, configurations):
    """``(e1, e2, n)`` when every motion of ``model`` through ``configurations`` (an array (k, nq)) stays in planes
    normal to one direction n — the planar systems of seed 001 §2.5 and §3.2.2 (parallel hinges, sliders across
    them; see the module docstring) — else None. e1, e2 span the plane (e1 × e2 = n), e2 is
    "up" (against gravity) projected on the plane, and n is signed so that e1 points along world +x (or +y) where
    it can."""
    import multibody as mb

    Q = np.atleast_2d(np.asarray(configurations, dtype=float))
    n = None
    for q in Q[:: max(1, len(Q) // 20)]:
        dirs = _joint_directions(model, mb.forward_kinematics(model, q, frames="kernel"))
        if dirs is None:
            return None
        par, perp = dirs
        if n is None:
            if par:
                n = _unit(par[0])
            else:                                   # sliders only: the plane spanned by the slider axes
                span = np.array(perp) if perp else np.zeros((0, 3))
                s = np.linalg.svd(span, compute_uv=False) if len(span) else np.zeros(0)
                if len(s) >= 3 and s[2] > _TOL:
                    return None
                if len(span) >= 2 and s[1] > _TOL:
                    n = _unit(np.cross(span[0], span[np.argmax(np.linalg.norm(np.cross(span[0], span), axis=1))]))
                else:                               # one sliding direction (or none): the plane that shows "up"
                    a = _unit(span[0]) if len(span) else np.zeros(3)
                    for cand in (np.cross(a, up_direction(model)), np.cross(a, [0.0, 0.0, 1.0]),
                                 np.cross(a, [0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])):
                        if np.linalg.norm(cand) > 1e-6:
                            n = _unit(cand)
                            break
        if any(np.linalg.norm(np.cross(n, a)) > 1e-7 for a in par) or any(abs(n @ b) > 1e-7 for b in perp):
            return None
    up = up_direction(model)
    e2 = up - (up @ n) * n
    if np.linalg.norm(e2) < 1e-6:                   # gravity normal to the plane: any in-plane "up"
        for cand in ([0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]):
            e2 = np.asarray(cand) - (np.asarray(cand) @ n) * n
            if np.linalg.norm(e2) > 1e-6:
                break
    e2 = _unit(e2)
    e1 = np.cross(e2, n)
    if e1 @ [1.0, 0.0, 0.0] < -1e-9 or (abs(e1 @ [1.0, 0.0, 0.0]) <= 1e-9 and e1 @ [0.0, 1.0, 0.0] < 0):
        n, e1 = -n, -e1
    return e1, e2, n


def _axis_label(e):
    """'x', '−z', ... for a basis vector along a world axis, else its components."""
    for k, name in enumerate("xyz"):
        if abs(abs(e[k]) - 1.0) < 1e-9:
            return name if e[k] > 0 else f"−{name}"
    return "(" + ", ".join(f"{c:.2f}" for c in e) + ")"


class Scene:
    """The drawing of a model at a set of configurations — seed 001's stick figure (§3.5, Fig. 3.21) of any model —
    every element as arrays of ground coordinates, the configuration index first (see the module docstring).

    ``links`` (k, L, 2, 3) segments and ``link_body`` (L,) the body of each; ``slides`` (k, S, 2, 3);
    ``springs`` (k, P, 2, 3); ``triads`` (k, N, 4, 3): each body's origin and the tips of its unit x, y, z axes;
    ``coms`` (k, N, 3); ``discs`` (k, D, 41, 3) rims; ``outlines`` a list of (k, m, 3) polylines (NaN between
    pieces), the wireframes of the collision shapes on the bodies; ``contacts`` a list of k arrays (c, 3), the
    contact points given (none: empty); static: ``ground`` (G, 3) the joint points on the ground (floating joints
    excepted), ``curves`` a list of (m, 3) polylines (profiles), ``planes`` the (point, normal) of the half-spaces
    on the ground.

    A ground that moves in a prescribed way (``model.base_motion``, seed 001 §3.1–3.2) needs the ``times`` of
    the configurations: every body is drawn where it is at its time, and the ground's joint points move, as links
    of body 0 from its origin (``ground`` is then empty)."""

    def __init__(self, model, configurations, times=None, contacts=None):
        import multibody as mb

        self.model = model
        Q = np.atleast_2d(np.asarray(configurations, dtype=float))
        if Q.shape[1] != model.nq:
            raise ModelError(f"animate: configurations must have model.nq = {model.nq} columns for model "
                             f"'{model.name}', got shape {Q.shape}", element="q")
        moving = getattr(model, "base_motion", None) is not None
        if moving and (times is None or len(times) != len(Q)):
            raise ModelError(f"animate: model '{model.name}' has a moving base (base motion): give the time of each "
                             "configuration (t=, or a Result)", element="t")
        N = model.nbodies
        # the points each body carries, in its kernel frame: its links run from its origin to them
        carried = {i: [] for i in range(N + 1)}
        slides = []
        for j in model.joints[1:]:
            Pa, _ = model.joint_frames(j)
            if not (j.parent == 0 and j.joint.code in (FREE, PLANAR)):      # a floating joint has no point
                carried[j.parent].append(Pa.translation)
            if j.joint.code in (PRISMATIC, CYLINDRICAL):
                slides.append((j.parent, Pa.translation, j.child, np.zeros(3)))
        for j in model.cut_joints:
            Pa, Pc = model.joint_frames(j)
            carried[j.parent].append(Pa.translation)
            carried[j.child].append(Pc.translation)
        links = [(0, np.zeros(3), p) for p in carried[0]] if moving else []
        for i in range(1, N + 1):
            joints = [p for p in carried[i] if np.linalg.norm(p) > 1e-12]
            held = [np.asarray(model.spring_point[s, e], dtype=float) for s in range(len(model.spring_k))
                    for e in range(2) if model.spring_body[s, e] == i]
            links += [(i, np.zeros(3), p) for p in joints + [p for p in held if np.linalg.norm(p) > 1e-12]]
            if not carried[i]:                    # a leaf: to its centre of mass, and its principal axes there
                com = np.asarray(model.com[i], dtype=float)
                links.append((i, np.zeros(3), com))
                semi, axes = inertia_ellipsoid(model.mass[i], model.inertia_com[i])
                links += [(i, com - a * e, com + a * e) for a, e in zip(semi, axes.T) if a > 1e-12]
        self.link_body = np.array([i for i, _, _ in links], dtype=int)
        self.ground = np.array(carried[0]) if carried[0] and not moving else np.zeros((0, 3))
        spring_ends = [(int(model.spring_body[s, 0]), model.spring_point[s, 0], int(model.spring_body[s, 1]),
                        model.spring_point[s, 1]) for s in range(len(model.spring_k))]
        discs, self.curves = [], []
        for c in model.constraints:
            kind = type(c).__name__
            if kind == "RollingDisc":
                discs.append((model.body_index(c.body), c.center, c.axis, c.radius, None))
            elif kind == "RollingOnProfile":
                discs.append((model.body_index(c.body), c.center, None, c.radius, (c.e1, c.e2)))
                self.curves.append(_profile_curve(c))
        shapes = [(e.body, e.placement, collision_outline(e.shape)) for e in getattr(model, "collisions", ())]
        shapes = [x for x in shapes if x[2] is not None]
        self.planes = [(np.asarray(e.placement.translation, float), e.placement.rotation[:, 2])
                       for e in getattr(model, "collisions", ()) if e.body == 0 and e.shape.kind == "halfspace"]
        self.outlines = [np.zeros((len(Q), len(o), 3)) for _, _, o in shapes]
        self.contacts = [np.zeros((0, 3)) for _ in Q] if contacts is None else [np.asarray(c) for c in contacts]
        ang = np.linspace(0.0, 2.0 * np.pi, 41)
        k = len(Q)
        self.links = np.zeros((k, len(links), 2, 3))
        self.slides = np.zeros((k, len(slides), 2, 3))
        self.springs = np.zeros((k, len(spring_ends), 2, 3))
        self.triads = np.zeros((k, N, 4, 3))
        self.coms = np.zeros((k, N, 3))
        self.discs = np.zeros((k, len(discs), len(ang), 3))
        for f, q in enumerate(Q):
            tf = None if times is None else float(times[f])
            Kk = mb.forward_kinematics(model, q, frames="kernel", t=tf)
            Ku = mb.forward_kinematics(model, q, t=tf)

            def world(i, p, Kk=Kk):
                return Kk.R[i] @ p + Kk.p[i]

            for m, (i, a, b) in enumerate(links):
                self.links[f, m] = world(i, a), world(i, b)
            for m, (a, pa, b, pb) in enumerate(slides):
                self.slides[f, m] = world(a, pa), world(b, pb)
            for m, (a, pa, b, pb) in enumerate(spring_ends):
                self.springs[f, m] = world(a, pa), world(b, pb)
            for i in range(1, N + 1):
                self.triads[f, i - 1, 0] = Ku.p[i]
                self.triads[f, i - 1, 1:] = Ku.p[i] + Ku.R[i].T      # rows: the body's x, y, z axes (unit)
                self.coms[f, i - 1] = world(i, np.asarray(model.com[i], dtype=float))
            for m, (i, place, outline) in enumerate(shapes):
                self.outlines[m][f] = (Ku.R[i] @ (outline @ place.rotation.T + place.translation).T).T + Ku.p[i]
            for m, (i, centre, axis, r, plane) in enumerate(discs):
                c = Ku.R[i] @ centre + Ku.p[i]
                if plane is None:
                    a = Ku.R[i] @ axis
                    u = _unit(np.cross(a, [0.0, 0.0, 1.0]) if abs(a[2]) < 0.9 else np.cross(a, [1.0, 0.0, 0.0]))
                    w = np.cross(a, u)
                else:
                    u, w = plane
                self.discs[f, m] = c + r * (np.cos(ang)[:, None] * u + np.sin(ang)[:, None] * w)

    def __len__(self):
        return len(self.links)

    def moving_points(self, f):
        """The points that move, of configuration ``f`` (the triads' origins, not their tips), (m, 3)."""
        parts = [self.links[f].reshape(-1, 3), self.slides[f].reshape(-1, 3), self.springs[f].reshape(-1, 3),
                 self.triads[f, :, 0], self.coms[f], self.discs[f].reshape(-1, 3)]
        parts += [o[f][np.isfinite(o[f][:, 0])] for o in self.outlines]
        return np.concatenate(parts)

    def static_points(self):
        """The ground's joint points and the curves, (m, 3)."""
        return np.concatenate([self.ground.reshape(-1, 3)] + list(self.curves))


def _circle(r, z, n=33, plane=(0, 1)):
    t = np.linspace(0.0, 2.0 * np.pi, n)
    P = np.zeros((n, 3))
    P[:, plane[0]], P[:, plane[1]] = r * np.cos(t), r * np.sin(t)
    P[:, 3 - plane[0] - plane[1]] += z
    return P


def collision_outline(shape):
    """A wireframe of a collision shape in its own frame: a polyline (m, 3) with NaN rows between its pieces; None
    for a half-space (drawn as a plane) and a mesh."""
    gap = np.full((1, 3), np.nan)
    kind = shape.kind
    if kind == "sphere":
        pieces = [_circle(shape.radius, 0.0, plane=p) for p in ((0, 1), (1, 2), (0, 2))]
    elif kind in ("capsule", "cylinder"):
        r, h = shape.radius, shape.length / 2.0
        pieces = [_circle(r, -h), _circle(r, h)]
        pieces += [np.array([[r * np.cos(a), r * np.sin(a), -h], [r * np.cos(a), r * np.sin(a), h]])
                   for a in np.arange(4) * np.pi / 2]
        if kind == "capsule":   # the caps: half circles in the xz and yz planes
            t = np.linspace(0.0, np.pi, 17)
            for s in (-1.0, 1.0):
                pieces += [np.stack([r * np.cos(t), np.zeros_like(t), s * (h + r * np.sin(t))], axis=1),
                           np.stack([np.zeros_like(t), r * np.cos(t), s * (h + r * np.sin(t))], axis=1)]
    elif kind == "box":
        hx, hy, hz = np.asarray(shape.size) / 2.0
        c = np.array([[sx * hx, sy * hy, sz * hz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
        edges = [(a, b) for a in range(8) for b in range(a + 1, 8) if bin(a ^ b).count("1") == 1]
        pieces = [c[[a, b]] for a, b in edges]
    else:
        return None
    return np.concatenate([x for p in pieces for x in (p, gap)])[:-1]


def _plane_square(point, normal, centre, half):
    """A square of half-side ``half`` in the plane through ``point`` of ``normal``, around ``centre``'s foot."""
    n = _unit(np.asarray(normal, float))
    u = _unit(np.cross(n, [1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.cross(n, [0.0, 1.0, 0.0]))
    w = np.cross(n, u)
    c = centre - ((centre - point) @ n) * n
    return np.array([c + half * (a * u + b * w) for a, b in ((-1, -1), (1, -1), (1, 1), (-1, 1), (-1, -1))])


def _profile_curve(c, n=400):
    """The profile of a ``RollingOnProfile`` constraint over its checked range, in ground coordinates."""
    xs = np.linspace(c.x_range[0], c.x_range[1], n)
    zs, z = [], 0.0
    for x in xs:
        z = c.profile.height(float(x), z)
        zs.append(z)
    return c.origin + xs[:, None] * c.e1 + np.array(zs)[:, None] * c.e2


def read_motion(model_or_result, q=None, t=None, model=None, who="animate"):
    """``(model, Q (k, nq), t or None)`` from a ``Result`` (its q and t, and its model unless ``model`` is given) or a
    ``Model`` with configurations ``q`` (default its neutral one) and times ``t``; ``ModelError`` (prefixed by
    ``who``) when they do not fit."""
    from multibody.model.model import Model
    from multibody.result import Result

    if isinstance(model_or_result, Result):
        res = model_or_result
        if q is None and model is None and len(res.structures or ()) > 1:    # a run across separations
            return (*last_structure_motion(res), res.t if t is None else t)
        model = model if model is not None else res.model
        if model is None:
            raise ModelError(f"{who}: the Result carries no model (a Result loaded from a file does not); pass "
                             "model=the Model it was computed with", element="model")
        if q is None and res.q.shape[1] > model.nq and np.isnan(res.q).any():
            raise ModelError(f"{who}: the Result is of a run across separations (its columns are those of its "
                             f"structures, {res.q.shape[1]} in all, model '{model.name}' has {model.nq}); it is drawn "
                             "from the Result the run returned, which carries its structures (result.structures) — "
                             "a Result read from a file does not", element="model")
        q = res.q if q is None else q
        t = res.t if t is None else t
    elif isinstance(model_or_result, Model):
        model = model_or_result
        if q is None:
            q = model.neutral()
    else:
        raise ModelError(f"{who}: expected a Model or a Result, got {type(model_or_result).__name__}",
                         element="model_or_result")
    Q = np.atleast_2d(np.asarray(q, dtype=float))
    if Q.shape[1] != model.nq:
        raise ModelError(f"{who}: q must have model.nq = {model.nq} columns for model '{model.name}', got shape "
                         f"{Q.shape}", element="q")
    if t is not None:
        t = np.asarray(t, dtype=float).reshape(-1)
        if len(t) != len(Q):
            raise ModelError(f"{who}: t has {len(t)} values for {len(Q)} configurations", element="t")
    return model, Q, t


def last_structure_motion(res):
    """``(model, Q)``: the motion of a run across separations (``res.structures``, the Result's columns those of all
    its structures, NaN where the structure of a row has none) in the coordinates of its last structure, in which
    every joint that separated is a free joint — each row of an earlier structure given there by the place of the
    separated bodies in it (forward kinematics of that structure), the same bodies drawn in every frame. The
    structure of a row is the one whose coordinates are the row's finite ones."""
    import multibody as mb
    from multibody.model.rotations import matrix_to_quat

    structures = [s["model"] for s in res.structures]
    last = structures[-1]
    cols = {name: i for i, name in enumerate(res.q_names)}
    finite = np.isfinite(res.q)
    Q = np.empty((len(res.t), last.nq))
    for k in range(len(res.t)):
        model = next((m for m in reversed(structures)
                      if all(finite[k, cols[n]] for n in m.coordinate_names())), None)
        if model is None:
            raise ModelError(f"animate: row {k} of the run (t = {res.t[k]:.10g}) fits none of its structures",
                             element="q")
        q = res.q[k, [cols[n] for n in model.coordinate_names()]]
        fk = None
        for j in last.joints[1:]:
            try:
                own = model.joint(j.name)
            except ModelError:
                own = None
            if own is not None and own.joint.code == j.joint.code:
                Q[k, j.q_slice] = q[own.q_slice]
                continue
            if fk is None:
                fk = mb.forward_kinematics(model, q)
            child = model.body_names.index(last.body_names[j.child])    # a free joint now: the child's pose
            Q[k, j.q_slice] = np.concatenate([fk.p[child], matrix_to_quat(fk.R[child])])
    return last, Q


def _writer(path, fps):
    from matplotlib import animation

    suffix = Path(path).suffix.lower()
    if suffix == ".gif":
        return animation.PillowWriter(fps=fps)
    if suffix == ".mp4":
        if not animation.writers.is_available("ffmpeg"):
            raise ModelError(f"animate: writing '{path}' needs ffmpeg, which is not installed (install it, e.g. "
                             "'apt install ffmpeg' or 'conda install ffmpeg', or write a .gif)", element="path")
        return animation.FFMpegWriter(fps=fps)
    raise ModelError(f"animate: the suffix of '{path}' must be .gif or .mp4", element="path")


def _plot_basis(model, basis):
    """Rows of the map from ground coordinates to plot coordinates, and the axis labels: the plane's (e1, e2) for
    a planar system, else (e1, e2, up) with "up" against gravity."""
    if basis is not None:
        E = np.array(basis[:2])
    else:
        up = up_direction(model)
        e1 = np.array([1.0, 0.0, 0.0]) - up[0] * up
        if np.linalg.norm(e1) < 1e-6:
            e1 = np.array([0.0, 1.0, 0.0]) - up[1] * up
        e1 = _unit(e1)
        E = np.array([e1, np.cross(up, e1), up])
    return E, [_axis_label(e) for e in E]


def animate(model_or_result, path, q=None, t=None, frames=None, fps=20, *, model=None, size=(640, 480), dpi=80,
            title=None, view=None, follow=None):
    """Write an animation of a motion to ``path`` (``.gif``, or ``.mp4`` when ffmpeg is installed); returns the path.

    ``model_or_result``: a ``Result`` of ``simulate`` (its ``q`` and ``t``; a Result loaded from a file carries no
    model: pass ``model=``), or a ``Model`` with ``q`` (one configuration or an array (k, nq); default the
    neutral one) and optional times ``t``. ``frames``: at most this many configurations, evenly spaced in the
    samples (default: with times, as many as play the run in real time at ``fps``, at most ``MAX_SECONDS`` = 20 s
    of film — a longer run plays faster; without, 60); ``fps``: frames per second of the file; ``size``: (width,
    height) in pixels. ``view``: ``"2d"`` or
    ``"3d"`` to override the choice (2-D for planar systems, see the module docstring; ``"2d"`` for a system that
    leaves the plane is a ``ModelError``). ``follow``: keep the system in the middle of a window of its own size
    (default: when a body floats on a ``Free`` joint, as the bicycle does) instead of showing the whole path.
    The drawing is seed 001's stick figure (§3.5, Fig. 3.21) of any model: links, body triads, sliders, springs
    and rolling discs (see the module docstring).
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    model, Q, t = read_motion(model_or_result, q, t, model)
    try:
        fps = float(fps)
        if frames is None:
            span = float(t[-1] - t[0]) if t is not None and len(t) > 1 else 0.0
            frames = int(round(min(span, MAX_SECONDS) * fps)) + 1 if span > 0 and fps > 0 else 60
        frames = int(frames)
    except (TypeError, ValueError):
        raise ModelError(f"animate: frames and fps must be numbers, got {shown(frames)!r}, {fps!r}", element="frames") from None
    if frames < 1 or not fps > 0:
        raise ModelError(f"animate: frames must be >= 1 and fps > 0, got {frames}, {fps}", element="frames")
    if view not in (None, "2d", "3d"):
        raise ModelError(f"animate: view must be '2d', '3d' or None, got {view!r}", element="view")
    writer = None if Path(path).is_dir() else _writer(path, fps)    # (by its suffix: .gif, .mp4)
    path = writable_file(path, "animation")   # not a folder, its folder made: before the frames are drawn
    idx = np.unique(np.linspace(0, len(Q) - 1, min(frames, len(Q))).round().astype(int))
    recorded = getattr(model_or_result, "contacts", None)
    contacts = None
    if recorded is not None and len(recorded) == len(Q):
        contacts = [recorded.at(int(k))["point"] for k in idx]
    scene = Scene(model, Q[idx], None if t is None else t[idx], contacts)
    # a moving base may turn the plane of the motion: drawn in 3-D unless view="2d" is asked for
    moving = getattr(model, "base_motion", None) is not None
    basis = None if view == "3d" or (moving and view is None) else planar_basis(model, Q[idx])
    if view == "2d" and basis is None:
        raise ModelError(f"animate: model '{model.name}' does not move in one plane; it needs view='3d'", element="view")
    E, labels = _plot_basis(model, basis)
    dim = len(E)

    def proj(P):
        return np.asarray(P) @ E.T

    # the window: the whole motion, or (follow) a box of the system's own size around it in every frame
    moving = [proj(scene.moving_points(f)) for f in range(len(scene))]
    lo_f = np.array([m.min(axis=0) for m in moving])
    hi_f = np.array([m.max(axis=0) for m in moving])
    if follow is None:
        follow = any(j.parent == 0 and j.joint.code == FREE for j in model.joints[1:])
    if follow:
        half = 0.6 * max(float(np.max(hi_f - lo_f)), 1e-9)
        centres = 0.5 * (lo_f + hi_f)
        lo, hi = centres.min(axis=0) - half, centres.max(axis=0) + half
    else:
        P = np.concatenate(moving + [proj(scene.static_points())])
        lo, hi = P.min(axis=0), P.max(axis=0)
        half = 0.5 * max(float(np.max(hi - lo)), 1e-9)
        centres = np.repeat([0.5 * (lo + hi)], len(scene), axis=0)
    triad = 0.16 * half

    fig = Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    if dim == 2:
        ax = fig.add_axes([0.12, 0.1, 0.83, 0.8])
        ax.set_aspect("equal", adjustable="box")
        ax.grid(True, alpha=0.3)
    else:
        ax = fig.add_axes([0.0, 0.0, 1.0, 0.92], projection="3d")
        ax.set_box_aspect((1.0, 1.0, 1.0))
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):       # white panes: lighter files
            axis.set_pane_color((1.0, 1.0, 1.0, 0.0))
        ax.set_zlabel(labels[2])
    ax.set_xlabel(labels[0])
    ax.set_ylabel(labels[1])
    ax.set_title(title if title is not None else model.name, fontsize=10)

    def set_window(f):
        pad = triad + 0.04 * half                  # room for the triads around the links
        if dim == 2 and not follow:
            ax.set_xlim(lo[0] - pad, hi[0] + pad)
            ax.set_ylim(lo[1] - pad, hi[1] + pad)
        else:
            c = centres[f]
            for k, setter in enumerate((ax.set_xlim, ax.set_ylim, ax.set_zlim)[:dim]):
                setter(c[k] - half - pad, c[k] + half + pad)

    def line(style, **kw):
        return ax.plot(*([[]] * dim), style, **kw)[0]

    def set_line(ln, P):
        P = proj(P)
        if dim == 2:
            ln.set_data(P[:, 0], P[:, 1])
        else:
            ln.set_data_3d(P[:, 0], P[:, 1], P[:, 2])

    set_window(0)
    static = []
    for c in scene.curves:
        static.append(line("-", color="0.55", lw=1.2))
        set_line(static[-1], c)
    if len(scene.ground):
        static += ax.plot(*proj(scene.ground).T, "ks", ms=6)
    links = [line("-", color=f"C{scene.link_body[m] % 10}", lw=3, solid_capstyle="round")
             for m in range(scene.links.shape[1])]
    slides = [line("-", color="0.6", lw=1.5) for _ in range(scene.slides.shape[1])]
    springs = [line("--", color="tab:olive", lw=1.2) for _ in range(scene.springs.shape[1])]
    discs = [line("-", color="0.2", lw=1.5) for _ in range(scene.discs.shape[1])]
    outlines = [line("-", color="0.45", lw=0.8) for _ in scene.outlines]
    touching = line("x", color="tab:red", ms=6, mew=1.5)
    middle = np.mean([scene.moving_points(f).mean(axis=0) for f in range(len(scene))], axis=0)
    for point, normal in scene.planes:
        static.append(line("-", color="0.55", lw=1.0))
        set_line(static[-1], _plane_square(point, normal, middle, 1.5 * half))
    triads = [[line("-", color=_AXIS_COLOURS[a], lw=1.2) for a in range(3)] for _ in range(scene.triads.shape[1])]
    coms = line("o", color="k", ms=3)
    label = fig.text(0.02, 0.96, "", fontsize=9)
    set_window(0)

    def draw(f):
        if follow:
            set_window(f)
        for m, ln in enumerate(links):
            set_line(ln, scene.links[f, m])
        for m, ln in enumerate(slides):
            set_line(ln, scene.slides[f, m])
        for m, ln in enumerate(springs):
            set_line(ln, scene.springs[f, m])
        for m, ln in enumerate(discs):
            set_line(ln, scene.discs[f, m])
        for m, ln in enumerate(outlines):
            set_line(ln, scene.outlines[m][f])
        set_line(touching, scene.contacts[f].reshape(-1, 3))
        for b, lines in enumerate(triads):
            o = scene.triads[f, b, 0]
            for a, ln in enumerate(lines):
                set_line(ln, np.array([o, o + triad * (scene.triads[f, b, a + 1] - o)]))
        set_line(coms, scene.coms[f])
        label.set_text(f"t = {t[idx[f]]:.3f} s" if t is not None else f"frame {f + 1} of {len(idx)}")

    if dim == 2 and not follow:
        # the axes, their ticks and the static artists are drawn once, into an image under every frame: a frame
        # then draws its lines only (a full draw of the axes costs several times more). (A 3-D axes with its axis
        # off changes its projection, and a window that follows the system moves the axes: those frames are
        # drawn in full.)
        fig.canvas.draw()
        background = np.asarray(fig.canvas.buffer_rgba()).copy()
        ax.set_axis_off()
        ax.title.set_visible(False)
        for a in static:
            a.set_visible(False)
        fig.figimage(background, zorder=-1)
    try:
        with writer.saving(fig, str(path), dpi):
            for f in range(len(idx)):
                draw(f)
                writer.grab_frame()
    except OSError as exc:
        raise ResultFileError(f"animation '{path}' could not be written: {exc.strerror or exc}", path=path) from None
    return path
