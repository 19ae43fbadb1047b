// The player of multibody's 3-D viewer page (multibody/viz/viewer.py writes the page and its data).
// Each body's triangles come once, in the body's frame; per frame only the placements (origin, quaternion
// w x y z), which this script applies before handing the coordinates to plotly.js. The page shows, at every
// moment, the last frame whose time has come (no interpolation).
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("mb-data").textContent);
  const note = document.getElementById("mb-note");

  function bytes(text) {
    const raw = atob(text);
    const out = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out.buffer;
  }
  const f64 = (s) => new Float64Array(bytes(s));
  const f32 = (s) => new Float32Array(bytes(s));
  const u32 = (s) => new Uint32Array(bytes(s));

  async function loadPlotly() {
    if (window.Plotly) return;
    const packed = document.getElementById("mb-plotly");
    if (!packed) throw new Error("plotly.js is missing from the page");
    if (typeof DecompressionStream === "undefined") {
      throw new Error("this browser cannot unpack the plotly.js of this page (no DecompressionStream); " +
                      "write the page with compress=False");
    }
    const stream = new Blob([bytes(packed.textContent.trim())]).stream()
      .pipeThrough(new DecompressionStream("gzip"));
    const code = await new Response(stream).text();
    const script = document.createElement("script");
    script.textContent = code;
    document.head.appendChild(script);
  }

  const times = f64(data.times);
  const nf = times.length;
  const nb = data.bodies.length;
  const poses = f64(data.poses);                       // (frame, body, [x y z qw qx qy qz])
  const meshes = data.meshes.map((m) => Object.assign({}, m, { V: f32(m.vertices), F: u32(m.faces) }));
  const segments = data.segments ? f32(data.segments) : null;   // (frame, segment, 2, 3)
  const contacts = data.contacts ? f64(data.contacts) : null;   // (frame, contact, 3)
  const beams = data.beams ? f32(data.beams.points) : null;      // (frame, point, 3), NaN between two beams
  const centres = f64(data.window.centres);

  function placement(f, b) {
    const o = (f * nb + b) * 7;
    const w = poses[o + 3], x = poses[o + 4], y = poses[o + 5], z = poses[o + 6];
    const R = [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
               2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
               2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)];
    return { p: [poses[o], poses[o + 1], poses[o + 2]], R: R };
  }

  function placed(m, f) {
    const { p, R } = placement(f, m.body);
    const n = m.V.length / 3;
    const x = new Float64Array(n), y = new Float64Array(n), z = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const a = m.V[3 * i], b = m.V[3 * i + 1], c = m.V[3 * i + 2];
      x[i] = R[0] * a + R[1] * b + R[2] * c + p[0];
      y[i] = R[3] * a + R[4] * b + R[5] * c + p[1];
      z[i] = R[6] * a + R[7] * b + R[8] * c + p[2];
    }
    return [x, y, z];
  }

  function triads(f, axis) {
    const xs = [], ys = [], zs = [];
    for (let b = 1; b < nb; b++) {
      const { p, R } = placement(f, b);
      xs.push(p[0], p[0] + data.triad * R[axis], null);
      ys.push(p[1], p[1] + data.triad * R[3 + axis], null);
      zs.push(p[2], p[2] + data.triad * R[6 + axis], null);
    }
    return [xs, ys, zs];
  }

  function lines(f) {
    const xs = [], ys = [], zs = [];
    for (let s = 0; s < data.nsegments; s++) {
      const o = (f * data.nsegments + s) * 6;
      xs.push(segments[o], segments[o + 3], null);
      ys.push(segments[o + 1], segments[o + 4], null);
      zs.push(segments[o + 2], segments[o + 5], null);
    }
    return [xs, ys, zs];
  }

  function centrelines(f) {
    const xs = [], ys = [], zs = [], n = data.beams.npoints;
    for (let k = 0; k < n; k++) {
      const o = (f * n + k) * 3;
      const gap = Number.isNaN(beams[o]);
      xs.push(gap ? null : beams[o]); ys.push(gap ? null : beams[o + 1]); zs.push(gap ? null : beams[o + 2]);
    }
    return [xs, ys, zs];
  }

  function points(f) {
    const xs = [], ys = [], zs = [];
    for (let c = 0; c < data.ncontacts; c++) {
      const o = (f * data.ncontacts + c) * 3;
      xs.push(contacts[o]); ys.push(contacts[o + 1]); zs.push(contacts[o + 2]);
    }
    return [xs, ys, zs];
  }

  // the dynamic traces, in plotly's order: meshes, segments, the three triad axes, contacts
  const dynamic = [];
  meshes.forEach((m) => dynamic.push({
    trace: { type: "mesh3d", i: m.F.filter((_, k) => k % 3 === 0), j: m.F.filter((_, k) => k % 3 === 1),
             k: m.F.filter((_, k) => k % 3 === 2), color: m.color, opacity: m.opacity, visible: m.visible,
             name: data.bodies[m.body], hovertemplate: data.bodies[m.body] + " (" + m.role + ")<extra></extra>",
             lighting: { ambient: 0.55, diffuse: 0.8, specular: 0.15 }, flatshading: false },
    coords: (f) => placed(m, f), role: m.role,
  }));
  if (beams) {
    dynamic.push({ trace: { type: "scatter3d", mode: "lines", line: { color: data.beams.color, width: 9 },
                            name: "beams", hoverinfo: "skip" }, coords: centrelines, role: "beams" });
  }
  if (segments) {
    dynamic.push({ trace: { type: "scatter3d", mode: "lines", line: { color: "#808000", width: 3, dash: "dash" },
                            hoverinfo: "skip" }, coords: lines, role: "segments" });
  }
  ["#d62728", "#2ca02c", "#1f77b4"].forEach((color, axis) => dynamic.push({
    trace: { type: "scatter3d", mode: "lines", line: { color: color, width: 4 }, visible: false, hoverinfo: "skip" },
    coords: (f) => triads(f, axis), role: "frames" }));
  if (contacts) {
    dynamic.push({ trace: { type: "scatter3d", mode: "markers", visible: false, hoverinfo: "skip",
                            marker: { color: "#e31a1c", size: 5, symbol: "diamond" } },
                   coords: points, role: "contacts" });
  }
  const nstatic = data.static.length;
  const ids = dynamic.map((_, k) => k);

  const sceneDiv = document.getElementById("mb-scene");
  const energyDiv = document.getElementById("mb-energy");
  const slider = document.getElementById("mb-slider");
  const label = document.getElementById("mb-time");
  const button = document.getElementById("mb-play");
  let frame = 0, shown = -1, busy = false, playing = false, speed = 1, clock = times[0], last = null;

  function axisRanges(f) {
    const h = data.window.half, c = [centres[3 * f], centres[3 * f + 1], centres[3 * f + 2]];
    return { "scene.xaxis.range": [c[0] - h, c[0] + h], "scene.yaxis.range": [c[1] - h, c[1] + h],
             "scene.zaxis.range": [c[2] - h, c[2] + h] };
  }

  function draw() {                                       // bring the plot to the current frame
    if (busy || shown === frame) return;
    busy = true;
    const f = frame;
    const xs = [], ys = [], zs = [];
    dynamic.forEach((d) => { const c = d.coords(f); xs.push(c[0]); ys.push(c[1]); zs.push(c[2]); });
    const layout = data.window.follow ? axisRanges(f) : {};
    const t = times[f];
    const energy = data.energy ? Plotly.relayout(energyDiv, { "shapes[0].x0": t, "shapes[0].x1": t }) : null;
    Promise.all([Plotly.update(sceneDiv, { x: xs, y: ys, z: zs }, layout, ids), energy]).then(() => {
      shown = f;
      busy = false;
      draw();
    }, (err) => { busy = false; fail(err); });
  }

  function setFrame(k) {
    frame = Math.max(0, Math.min(nf - 1, k));
    slider.value = String(frame);
    label.textContent = "t = " + times[frame].toFixed(3) + " s (" + (frame + 1) + " of " + nf + ")";
    draw();
  }

  function frameAt(t) {                                   // the last frame whose time has come
    let lo = 0, hi = nf - 1;
    if (t >= times[hi]) return hi;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (times[mid] <= t) lo = mid; else hi = mid;
    }
    return lo;
  }

  function tick(now) {
    if (!playing) return;
    if (last !== null) clock += (now - last) / 1000 * speed;
    last = now;
    if (clock >= times[nf - 1]) {
      setFrame(nf - 1);
      pause();
      return;
    }
    setFrame(frameAt(clock));
    requestAnimationFrame(tick);
  }

  function play() {
    if (playing) return;
    if (frame >= nf - 1) setFrame(0);
    clock = times[frame];
    last = null;
    playing = true;
    button.innerHTML = "&#10074;&#10074; pause";
    requestAnimationFrame(tick);
  }

  function pause() {
    playing = false;
    button.innerHTML = "&#9654; play";
  }

  function seek(t) {
    setFrame(frameAt(t));
    clock = times[frame];
  }

  function setVisible(role, on) {
    const which = [];
    dynamic.forEach((d, k) => { if (d.role === role) which.push(k); });
    if (which.length) Plotly.restyle(sceneDiv, { visible: on }, which);
  }

  function fail(err) {
    note.textContent = "The viewer could not start: " + err;
    console.error(err);
  }

  function start() {
    const traces = dynamic.map((d) => {
      const c = d.coords(0);
      return Object.assign({ x: c[0], y: c[1], z: c[2], showlegend: false, meta: d.role }, d.trace);
    }).concat(data.static.map((s) => Object.assign({ showlegend: false }, s)));
    const h = data.window.half;
    const axis = (name, k) => ({ title: { text: name }, range: [centres[k] - h, centres[k] + h], autorange: false });
    const up = data.up, eye = data.eye;
    const layout = {
      margin: { l: 0, r: 0, t: 0, b: 0 }, showlegend: false, uirevision: "keep",
      scene: { aspectmode: "cube", xaxis: axis("x", 0), yaxis: axis("y", 1), zaxis: axis("z", 2),
               camera: { up: { x: up[0], y: up[1], z: up[2] }, eye: { x: eye[0], y: eye[1], z: eye[2] } } },
    };
    const config = { responsive: true, displaylogo: false };
    const ready = [Plotly.newPlot(sceneDiv, traces, layout, config)];
    if (data.energy) {
      const t = f64(data.energy.t);
      const names = { kinetic: "T", potential: "V", total: "T + V" };
      const curves = ["kinetic", "potential", "total"].filter((k) => data.energy[k]).map((k) => ({
        type: "scatter", mode: "lines", name: names[k], x: Array.from(t), y: Array.from(f64(data.energy[k])) }));
      ready.push(Plotly.newPlot(energyDiv, curves, {
        margin: { l: 60, r: 20, t: 24, b: 40 }, xaxis: { title: { text: "t, s" } },
        yaxis: { title: { text: "energy, J" } },
        legend: { orientation: "h", x: 1, xanchor: "right", y: 1, yanchor: "bottom" },
        shapes: [{ type: "line", xref: "x", yref: "paper", x0: times[0], x1: times[0], y0: 0, y1: 1,
                   line: { color: "black", width: 1.5 } }] }, config));
    } else {
      energyDiv.style.display = "none";
    }
    return Promise.all(ready).then(() => {
      shown = 0;
      if (data.energy) energyDiv.on("plotly_click", (ev) => { pause(); seek(ev.points[0].x); });
      slider.max = String(nf - 1);
      slider.addEventListener("input", () => { setFrame(parseInt(slider.value, 10)); clock = times[frame]; });
      button.addEventListener("click", () => (playing ? pause() : play()));
      document.getElementById("mb-speed").addEventListener("change", (ev) => { speed = parseFloat(ev.target.value); });
      document.getElementById("mb-frames").addEventListener("change", (ev) => setVisible("frames", ev.target.checked));
      const contactBox = document.getElementById("mb-contacts");
      if (contacts) contactBox.addEventListener("change", (ev) => setVisible("contacts", ev.target.checked));
      else document.getElementById("mb-contacts-label").style.display = "none";
      const collisionBox = document.getElementById("mb-collision");
      const hidden = meshes.some((m) => m.role === "collision" && !m.visible);
      if (hidden) collisionBox.addEventListener("change", (ev) => setVisible("collision", ev.target.checked));
      else document.getElementById("mb-collision-label").style.display = "none";
      document.addEventListener("keydown", (ev) => {
        if (ev.code === "Space" && ev.target === document.body) { ev.preventDefault(); playing ? pause() : play(); }
      });
      setFrame(0);
      if (data.notes.length) {
        note.textContent = "Not drawn: " + data.notes.slice(0, 2).join("; ") +
          (data.notes.length > 2 ? "; and " + (data.notes.length - 2) + " more" : "");
      }
      window.multibodyViewer.ready = true;
    });
  }

  window.multibodyViewer = {
    ready: false,
    frameCount: nf,
    staticTraces: nstatic,
    time: () => times[frame],
    frame: () => frame,
    shownFrame: () => shown,
    sample: () => data.samples[frame],
    bodyNames: () => data.bodies.slice(),
    bodyPosition(name) {
      const b = data.bodies.indexOf(name);
      if (b < 0) throw new Error("no body '" + name + "' (bodies: " + data.bodies.join(", ") + ")");
      return placement(frame, b).p;
    },
    play, pause, seek,
    isPlaying: () => playing,
    setSpeed(s) { speed = s; },
    showFrames(on) { document.getElementById("mb-frames").checked = on; setVisible("frames", on); },
    showContacts(on) { document.getElementById("mb-contacts").checked = on; setVisible("contacts", on); },
  };

  loadPlotly().then(start).catch(fail);
})();
