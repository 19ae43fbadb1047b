"""A motion in 3-D in the browser: one self-contained HTML page (``to_html``), or the same view inline in Jupyter
(``show``).

The page draws every body from its geometry (``multibody.viz.shapes``: visual elements, collision shapes, or a
shape inferred from its joints and inertia) with plotly's 3-D meshes (an optional extra: ``pip install
'multibody[viewer]'``), and plays the motion: play/pause, a time slider, real time or slowed down, orbit and zoom
with the mouse, the body frames (x red, y green, z blue) and the contact points on demand, and the energies of the
Result as a plot linked to the time (a line marks the time shown; a click on the plot goes there).

What the file holds, to stay small: each body's triangles once, in its own frame, and per frame only the bodies'
placements — the origin (float64, exactly ``forward_kinematics``) and the orientation (a quaternion) — which a
short script of this package (``viewer.js``) applies; the plotly.js bundle is embedded gzip-compressed and unpacked
by the browser (``DecompressionStream``), so the page opens from disk with no network. The frames are samples of
the Result (evenly spaced, at most ``frame_rate`` per second of motion and ``max_frames`` in all); the page shows,
at every moment, the last frame whose time has come (no interpolation), so what it reports is the Result itself.

For scripts and tests the page exposes ``window.multibodyViewer``: ``time()`` (the time of the frame shown),
``frame()``, ``frameCount``, ``bodyNames()``, ``bodyPosition(name)`` (the origin of the body's frame in ground
coordinates), ``play()``, ``pause()``, ``isPlaying()``, ``seek(t)``, ``setSpeed(s)``, ``showFrames(on)``,
``showContacts(on)``, ``ready`` (true once drawn).

Example::

    from multibody.systems import solar_panels

    res = solar_panels.deploy(t_end=4.0, n_out=401)
    to_html(res, "panel.html")                  # or: multibody animate run.npz --model SPEC --html panel.html
"""
import base64
import functools
import gzip
import html
import json
import math
from importlib import resources
from pathlib import Path

import numpy as np

from multibody.errors import ModelError, shown
from multibody.files import check_options, writable_file, write_text
from multibody.model.rotations import matrix_to_quat
from multibody.viz.animation import Scene, read_motion, up_direction
from multibody.viz.shapes import body_parts, characteristic_length

__all__ = ["page", "to_html", "show"]

#: body colours (matplotlib's "tab10", as in the GIF animations: body i has colour i mod 10)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")


def _b64(array, dtype):
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def _contacts(model, result, Q, K):
    """Contact points per frame (f, c, 3), from the rolling constraints: a ``RollingDisc``'s lowest rim point
    ``C + r ρ̂`` (``ρ̂`` along −(n − (a·n) a), the constraint's own definition) and, when the Result records its
    contact angle (series ``"<name>.angle"``, the stabilized formulation), a ``RollingOnProfile``'s point
    ``centre + r (cos α e1 + sin α e2)``; and the contacts of a run with contact (``result.contacts``: as many
    columns as the most contacts at a frame, NaN — not drawn — where a frame has fewer). None when there is
    none."""
    cols = []
    recorded = getattr(result, "contacts", None) if result is not None else None
    if recorded is not None and len(recorded) == len(result.t) and int(np.max(recorded.count[Q], initial=0)) > 0:
        pts = np.full((len(Q), int(np.max(recorded.count[Q])), 3), np.nan)
        for f, k in enumerate(Q):
            at = recorded.at(int(k))["point"]
            pts[f, :len(at)] = at
        cols += list(np.moveaxis(pts, 1, 0))
    for c in model.constraints:
        kind = type(c).__name__
        b = model.body_index(c.body) if kind in ("RollingDisc", "RollingOnProfile") else None
        if kind == "RollingDisc":
            C = np.einsum("fij,j->fi", K[0][:, b], c.center) + K[1][:, b]
            a = np.einsum("fij,j->fi", K[0][:, b], c.axis)
            rho = -(c.normal - (a @ c.normal)[:, None] * a)
            cols.append(C + c.radius * rho / np.linalg.norm(rho, axis=1)[:, None])
        elif kind == "RollingOnProfile" and result is not None and f"{c.name}.angle" in result.series:
            al = result.series[f"{c.name}.angle"][Q]
            C = np.einsum("fij,j->fi", K[0][:, b], c.center) + K[1][:, b]
            cols.append(C + c.radius * (np.cos(al)[:, None] * c.e1 + np.sin(al)[:, None] * c.e2))
    return np.stack(cols, axis=1) if cols else None


def _nice(x):
    """1, 2 or 5 times a power of ten, at least x."""
    e = 10.0 ** math.floor(math.log10(x))
    return next(m * e for m in (1.0, 2.0, 5.0, 10.0) if m * e >= x * (1 - 1e-12))


def _planes(model, lo, hi, size):
    """Static patches with grid lines: the floors of the rolling discs and the half-spaces on the ground, over the
    box ``lo``–``hi`` of the motion: ``(mesh traces, line points)``."""
    planes = []
    for c in model.constraints:
        if type(c).__name__ == "RollingDisc":
            planes.append((np.asarray(c.origin, dtype=float), np.asarray(c.normal, dtype=float)))
    for e in model.collisions:
        if e.body == 0 and e.shape.kind == "halfspace":
            planes.append((np.asarray(e.placement.translation, dtype=float), e.placement.rotation[:, 2]))
    meshes, lines = [], []
    seen = []
    for o, n in planes:
        if any(np.allclose(o, o2) and np.allclose(n, n2) for o2, n2 in seen):
            continue
        seen.append((o, n))
        u = np.cross(n, [1.0, 0.0, 0.0]) if abs(n[0]) < 0.9 else np.cross(n, [0.0, 1.0, 0.0])
        u /= np.linalg.norm(u)
        w = np.cross(n, u)
        corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
        cu, cw = (corners - o) @ u, (corners - o) @ w
        step = _nice(max(size, (max(np.ptp(cu), np.ptp(cw)) + 1e-12) / 100.0))
        a0, a1 = step * math.floor(cu.min() / step), step * math.ceil(cu.max() / step)
        b0, b1 = step * math.floor(cw.min() / step), step * math.ceil(cw.max() / step)
        quad = np.array([o + a * u + b * w for a, b in ((a0, b0), (a1, b0), (a1, b1), (a0, b1))])
        meshes.append(dict(type="mesh3d", x=quad[:, 0], y=quad[:, 1], z=quad[:, 2], i=[0, 0], j=[1, 2], k=[2, 3],
                           color="#bbbbbb", opacity=0.35, hoverinfo="skip", showscale=False))
        for a in np.arange(a0, a1 + 0.5 * step, step):
            lines += [o + a * u + b0 * w, o + a * u + b1 * w, None]
        for b in np.arange(b0, b1 + 0.5 * step, step):
            lines += [o + a0 * u + b * w, o + a1 * u + b * w, None]
    return meshes, lines


def _polyline(points):
    """x, y, z lists of a polyline with gaps (None) for plotly."""
    xs, ys, zs = [], [], []
    for p in points:
        for lst, k in ((xs, 0), (ys, 1), (zs, 2)):
            lst.append(None if p is None else float(p[k]))
    return dict(x=xs, y=ys, z=zs)


def _beam_centrelines(model, R, P):
    """The centre line of every beam and cable (``model.elastic``) at each frame: (f, m, 3), NaN between two of them
    — a beam's root, each elastic joint's point (l/2 before an element's frame, on its x axis) and each element's
    frame, its tip; a cable's pins and its tip — so that the page draws its segments as one bending body."""
    rows = []
    for beam in model.elastic:
        idx = [model.body_index(name) for name in beam.element_bodies]
        l = beam.segment_length
        pts = []
        for k, i in enumerate(idx):
            if beam.kind == "cable":
                pts.append(P[:, i])
            else:
                if k > 0:
                    pts.append(P[:, i] - 0.5 * l * R[:, i, :, 0])
                pts.append(P[:, i])
        if beam.kind == "cable":
            pts.append(P[:, idx[-1]] + l * R[:, idx[-1], :, 0])
        rows += pts + [np.full_like(P[:, 0], np.nan)]
    return np.stack(rows, axis=1)


def _elastic_bodies(model):
    """The indices of the bodies of beams and cables (their elements and the massless bodies between joints)."""
    names = set()
    for beam in model.elastic:
        names |= set(beam.element_bodies) | {n for n in model.body_names if n.startswith(f"{beam.name}.sde")}
    return {model.body_index(n) for n in names if n in model.body_names}


def _frames(t, n, frame_rate, max_frames):
    """Indices of the samples shown: evenly spaced, at most ``frame_rate`` per second of motion (configurations
    without times: each one) and ``max_frames``."""
    count = min(n, int(max_frames))
    if t is not None and n > 1:
        count = min(count, max(2, int(math.ceil(float(t[-1] - t[0]) * frame_rate)) + 1))
    return np.unique(np.linspace(0, n - 1, count).round().astype(int))


def _meshes(parts, nb):
    """The parts as meshes for the page, one per body, role and colour: (list of dicts, each body's reach — the
    largest distance of its vertices from its origin)."""
    groups = {}
    for part in parts:
        groups.setdefault((part.body, part.role, part.color), []).append(part)
    has_visual = {p.body for p in parts if p.role == "visual"}
    meshes, reach = [], np.zeros(nb)
    for (b, role, rgba), items in groups.items():
        V = np.concatenate([p.vertices for p in items])
        offsets = np.cumsum([0] + [len(p.vertices) for p in items])[:-1]
        F = np.concatenate([p.faces + o for p, o in zip(items, offsets)])
        reach[b] = max(reach[b], float(np.max(np.linalg.norm(V, axis=1))))
        overlay = role == "collision" and b in has_visual          # shown on demand, half-transparent
        meshes.append({"body": b, "role": role, "vertices": _b64(V, "<f4"), "faces": _b64(F, "<u4"),
                       "color": (f"rgb({', '.join(str(round(255 * c)) for c in rgba[:3])})" if rgba is not None
                                 else PALETTE[b % 10]),
                       "opacity": (rgba[3] if rgba is not None else 1.0) * (0.5 if overlay else 1.0),
                       "visible": not overlay})
    return meshes, reach


def _window(P, reach, scene, parts, follow, moving_base):
    """The box of the whole motion ``(lo, hi)``, and the view's half side and centre per frame: a cube around the
    whole motion (and the static drawings), or — ``follow`` — around each frame's bodies, the size of the largest."""
    nb = len(reach)
    moving = slice(1 if nb > 1 and not moving_base else 0, nb)         # a fixed ground is not part of the motion
    ext_lo = (P[:, moving] - reach[None, moving, None]).min(axis=1)    # (f, 3): each frame's box of the bodies
    ext_hi = (P[:, moving] + reach[None, moving, None]).max(axis=1)
    for arr in (scene.springs, scene.slides):
        if arr.size:
            ext_lo = np.minimum(ext_lo, arr.reshape(len(P), -1, 3).min(axis=1))
            ext_hi = np.maximum(ext_hi, arr.reshape(len(P), -1, 3).max(axis=1))
    lo, hi = ext_lo.min(axis=0), ext_hi.max(axis=0)
    if follow:
        return lo, hi, 0.6 * max(float(np.max(ext_hi - ext_lo)), 1e-9), 0.5 * (ext_lo + ext_hi)
    static = list(scene.curves) + [scene.ground] + [p.vertices for p in parts if p.body == 0 and not moving_base]
    for pts in static:
        if len(pts):
            lo, hi = np.minimum(lo, pts.min(axis=0)), np.maximum(hi, pts.max(axis=0))
    return lo, hi, 0.55 * max(float(np.max(hi - lo)), 1e-9), np.repeat([0.5 * (lo + hi)], len(P), axis=0)


def _camera_eye(up):
    """plotly's camera eye (in units of the scene's half side): from the side, between +x and −y where "up" is z,
    somewhat above."""
    side = np.array([1.0, -1.6, 0.0]) if abs(up[2]) > 0.9 else np.cross(up, [0.0, 0.0, 1.0])
    side = side - (side @ up) * up
    return 1.7 * side / np.linalg.norm(side) + 0.6 * up


def _plotly_script(compress):
    """The plotly.js bundle as a script element: gzip-packed and base64-encoded (``viewer.js`` unpacks it), or plain."""
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise ModelError("the 3-D viewer needs plotly (pip install 'multibody[viewer]')", element="plotly") from None
    return _script(get_plotlyjs(), bool(compress))


@functools.lru_cache(maxsize=2)
def _script(bundle, compress):
    if not compress:
        return f"<script>{bundle}</script>"
    packed = base64.b64encode(gzip.compress(bundle.encode("utf-8"), 9, mtime=0)).decode("ascii")
    return f'<script id="mb-plotly" type="application/octet-stream">{packed}</script>'


def _static_traces(model, scene, lo, hi, size):
    """What does not move (a fixed ground): the floors and half-spaces over the box ``lo``–``hi``, the profiles of
    discs on curves, the ground's joint points — plotly traces."""
    plane_meshes, plane_lines = _planes(model, lo, hi, size)
    traces = list(plane_meshes)
    lines = plane_lines + [p for c in scene.curves for p in list(c) + [None]]
    if lines:
        traces.append(dict(type="scatter3d", mode="lines", line=dict(color="#888888", width=2), hoverinfo="skip",
                           **_polyline(lines)))
    if len(scene.ground):
        traces.append(dict(type="scatter3d", mode="markers", marker=dict(color="black", size=4, symbol="square"),
                           hoverinfo="skip", **_polyline(scene.ground)))
    return traces


def page(result_or_model, model=None, q=None, t=None, *, title=None, frame_rate=50.0, max_frames=2000,
         follow=None, max_faces=3000, compress=True):
    """The HTML text of the viewer page (see the module docstring).

    ``result_or_model``: a ``Result`` (its model, or ``model=`` for a Result loaded from a file) or a ``Model`` with
    configurations ``q`` (default the neutral one) and times ``t``. ``frame_rate``: frames per second of motion
    (the Result's samples are thinned to it); ``max_frames``: at most this many; ``follow``: keep the system in the
    middle of a window of its own size (default: when a body floats on a ``Free`` joint, as the bicycle does);
    ``max_faces``: triangles per mesh file at most; ``compress``: embed plotly.js gzip-compressed (about 2 MB
    instead of 4.8 MB; the browser unpacks it with ``DecompressionStream``, in every current browser).
    """
    import multibody as mb
    from multibody.model.joints import FREE
    from multibody.result import Result

    plotly = _plotly_script(compress)
    model, Q, times = read_motion(result_or_model, q, t, model, who="viewer")
    result = result_or_model if isinstance(result_or_model, Result) else None
    if not frame_rate > 0 or int(max_frames) < 1:
        raise ModelError(f"viewer: frame_rate must be > 0 and max_frames >= 1, got {frame_rate!r}, {shown(max_frames)!r}",
                         element="frame_rate")
    idx = _frames(times, len(Q), frame_rate, max_frames)
    ft = times[idx] if times is not None else np.arange(len(idx), dtype=float) / frame_rate
    moving_base = getattr(model, "base_motion", None) is not None
    if moving_base and times is None:
        raise ModelError(f"viewer: model '{model.name}' has a moving base (base motion): give the times t",
                         element="t")
    nb = model.nbodies + 1
    R = np.empty((len(idx), nb, 3, 3))
    P = np.empty((len(idx), nb, 3))
    for f, k in enumerate(idx):
        K = mb.forward_kinematics(model, Q[k], t=float(ft[f]) if moving_base else None)
        R[f], P[f] = K.R, K.p
    parts, notes = body_parts(model, Q[idx[0]], max_faces=max_faces)
    beams = None
    if getattr(model, "elastic", ()):       # drawn as centre lines, not as the segments' own shapes
        elastic = _elastic_bodies(model)
        parts = [p for p in parts if p.body not in elastic or p.role == "visual"]
        beams = _beam_centrelines(model, R, P)
    scene = Scene(model, Q[idx], ft if moving_base else None)
    size = characteristic_length(model, Q[idx[0]])

    meshes, reach = _meshes(parts, nb)
    if follow is None:
        follow = any(j.parent == 0 and j.joint.code == FREE for j in model.joints[1:])
    lo, hi, half, centres = _window(P, reach, scene, parts, follow, moving_base)

    static = _static_traces(model, scene, lo - half * follow, hi + half * follow, size)
    segs = np.concatenate([scene.springs, scene.slides], axis=1)    # (f, s, 2, 3) drawn as lines, per frame
    contacts = _contacts(model, result, idx, (R, P))
    energy = None
    if result is not None and result.energy:
        energy = {k: _b64(v, "<f8") for k, v in result.energy.items()}
        energy["t"] = _b64(result.t, "<f8")
    up = up_direction(model)
    data = {
        "title": title if title is not None else model.name,
        "bodies": list(model.body_names), "times": _b64(ft, "<f8"), "samples": idx.tolist(),
        "poses": _b64(np.concatenate([P, [[matrix_to_quat(Rb) for Rb in Rf] for Rf in R]], axis=2), "<f8"),
        "meshes": meshes, "static": static, "notes": notes,
        "segments": _b64(segs, "<f4") if segs.size else None, "nsegments": int(segs.shape[1]),
        "contacts": _b64(contacts, "<f8") if contacts is not None else None,
        "beams": None if beams is None else {"points": _b64(beams, "<f4"), "npoints": int(beams.shape[1]),
                                             "color": PALETTE[0]},
        "ncontacts": 0 if contacts is None else int(contacts.shape[1]),
        "window": {"follow": bool(follow), "half": half, "centres": _b64(centres, "<f8")},
        "triad": 0.12 * half, "energy": energy, "up": up.tolist(), "eye": _camera_eye(up).tolist(),
    }
    js = resources.files("multibody.viz").joinpath("viewer.js").read_text()
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False, default=_json).replace("</", "<\\/")
    name = html.escape(str(data["title"]))
    return _TEMPLATE.format(title=name, payload=payload, plotly=plotly, js=js)


def _json(obj):
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(type(obj).__name__)


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 0; }}
#mb-bar {{ display: flex; flex-wrap: wrap; gap: 0.8em; align-items: center; padding: 0.4em 0.8em;
          background: #f4f4f4; border-bottom: 1px solid #ddd; }}
#mb-slider {{ flex: 1; min-width: 12em; }}
#mb-time {{ font-variant-numeric: tabular-nums; min-width: 11em; }}
#mb-note {{ color: #777; padding: 0 0.8em; font-size: 12px; }}
#mb-scene {{ height: 68vh; min-height: 320px; }}
#mb-energy {{ height: 24vh; min-height: 150px; }}
</style></head>
<body>
<div id="mb-bar"><strong>{title}</strong>
<button id="mb-play" type="button">&#9654; play</button>
<input id="mb-slider" type="range" min="0" max="0" step="1" value="0" aria-label="time">
<span id="mb-time"></span>
<label>speed <select id="mb-speed"><option value="2">2&times;</option><option value="1" selected>real time</option>
<option value="0.5">1/2</option><option value="0.25">1/4</option><option value="0.1">1/10</option></select></label>
<label><input id="mb-frames" type="checkbox"> body frames</label>
<label id="mb-contacts-label"><input id="mb-contacts" type="checkbox"> contact points</label>
<label id="mb-collision-label"><input id="mb-collision" type="checkbox"> collision shapes</label>
</div>
<div id="mb-note"></div>
<div id="mb-scene"></div>
<div id="mb-energy"></div>
<script id="mb-data" type="application/json">{payload}</script>
{plotly}
<script>{js}</script>
</body></html>
"""


def to_html(result_or_model, path, model=None, **options):
    """Write the viewer page (:func:`page`; its options) to ``path`` (its missing folders made); returns the path.
    A folder, a folder that cannot be made or an option :func:`page` does not take is refused before the page is
    made (``ResultFileError``, ``ModelError``)."""
    check_options(options, page, "to_html", exclude=("result_or_model", "model"))
    path = writable_file(path, "viewer page")
    return write_text(path, page(result_or_model, model=model, **options), "viewer page")


def show(result_or_model, model=None, height=720, **options):
    """Display the viewer inline in Jupyter (IPython): the page of :func:`page` in an ``<iframe>``, so that its
    scripts run apart from the notebook's. ``ModelError`` without IPython (write a file with :func:`to_html`)."""
    check_options(options, page, "show", exclude=("result_or_model", "model"))
    try:
        from IPython.display import HTML, display
    except ImportError:
        raise ModelError("viewer: show() displays in Jupyter and needs IPython, which is not installed; write the "
                         "page to a file with to_html(path) and open it in a browser", element="IPython") from None
    text = page(result_or_model, model=model, **options)
    frame = (f'<iframe srcdoc="{html.escape(text, quote=True)}" style="width: 100%; height: {int(height)}px; '
             'border: 0" sandbox="allow-scripts"></iframe>')
    display(HTML(frame))
