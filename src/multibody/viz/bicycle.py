"""Plots of the bicycle (seed 003): the eigenvalues against speed (Fig. 3) and runs of the linearized equations;
the nonlinear bicycle's time histories and contact paths (§8), and a top-view animation."""
import numpy as np

from multibody.errors import ResultFileError
from multibody.files import writable_file
from multibody.systems import bicycle
from multibody.viz.figures import figure, pyplot, save_figure


def plot_nonlinear(result, path, title=None):
    """Forward speed, lean and steer rates (seed 003 Fig. 4), lean, steer and yaw, and the contact paths of a
    result of ``bicycle.simulate_nonlinear``; written to ``path`` (PNG)."""
    plt = pyplot()
    s = result.series
    fig, axes = plt.subplots(2, 2, figsize=(12, 7.5))
    ax = axes[0, 0]
    ax.plot(result.t, s["forward_speed"], "k-")
    ax.set_ylabel("forward speed v (m/s)")
    ax.set_title(title or "forward speed (seed 003, Fig. 4)")
    ax = axes[0, 1]
    model = result.model
    ax.plot(result.t, result.v[:, 0], label="lean rate φ̇ (rad/s)")
    ax.plot(result.t, result.v[:, model.joint("steer").v_slice.start], label="steer rate δ̇ (rad/s)")
    ax.legend()
    ax.set_title("lean and steer rates")
    ax = axes[1, 0]
    for key in ("lean", "steer", "yaw"):
        ax.plot(result.t, s[key], label=f"{key} (rad)")
    ax.set_xlabel("t (s)")
    ax.legend()
    ax = axes[1, 1]
    ax.plot(*s["rear_contact_xy"].T, "b-", label="rear contact")
    ax.plot(*s["front_contact_xy"].T, "r--", label="front contact")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m, left)")
    ax.legend()
    ax.set_title("contact paths, seen from above")
    for a in axes.ravel():
        a.grid(True, alpha=0.3)
    fig.tight_layout()
    try:
        return save_figure(fig, path, 100, "bicycle plot")
    finally:
        plt.close(fig)


def _unit(d):
    n = np.linalg.norm(d)
    return d / n if n > 0 else d


def animate_top_view(result, path, frames=60, fps=15):
    """A GIF of the bicycle seen from above: the contact paths drawn so far, the rear frame (rear contact to
    the steer axis), the front frame and the wheels' ground lines, over ``frames`` frames of the result."""
    plt = pyplot()
    from matplotlib.animation import FuncAnimation, PillowWriter

    import multibody as mb

    model = result.model
    s = result.series
    rear, front = s["rear_contact_xy"], s["front_contact_xy"]
    idx = np.linspace(0, len(result.t) - 1, int(frames)).round().astype(int)
    names = ("rear_frame", "front_frame", "rear_wheel", "front_wheel")
    bodies = [model.body_index(n) for n in names]
    points = []
    for k in idx:
        K = mb.forward_kinematics(model, result.q[k])
        # a wheel's ground line: the direction of its plane along the floor, axle × z (the body's own x axis
        # turns with the wheel)
        points.append([K.p[i][:2] for i in bodies] + [_unit(np.array([K.R[i][1, 1], -K.R[i][0, 1]]))
                                                      for i in bodies[2:]])
    span = np.concatenate([rear, front])
    lo, hi = span.min(axis=0) - 1.0, span.max(axis=0) + 1.0
    fig, ax = plt.subplots(figsize=(8, 8 * (hi[1] - lo[1]) / max(hi[0] - lo[0], 1e-9) + 0.5))
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")
    ax.set_xlabel("x (m)")
    ax.set_ylabel("y (m, left)")
    path_r, = ax.plot([], [], "b-", lw=1, label="rear contact")
    path_f, = ax.plot([], [], "r-", lw=1, label="front contact")
    frame_line, = ax.plot([], [], "k-", lw=3)
    wheels = [ax.plot([], [], "-", color=c, lw=4)[0] for c in ("tab:blue", "tab:red")]
    label = ax.text(0.02, 0.95, "", transform=ax.transAxes)
    ax.legend(loc="lower right")
    radii = [model.constraint("rear_contact").radius, model.constraint("front_contact").radius]

    def draw(n):
        k = idx[n]
        path_r.set_data(rear[:k + 1, 0], rear[:k + 1, 1])
        path_f.set_data(front[:k + 1, 0], front[:k + 1, 1])
        pb, ph, pr, pf, dr, df = points[n]
        frame_line.set_data([pr[0], pb[0], ph[0], pf[0]], [pr[1], pb[1], ph[1], pf[1]])
        for line, c, d, r in zip(wheels, (pr, pf), (dr, df), radii):
            line.set_data([c[0] - r * d[0], c[0] + r * d[0]], [c[1] - r * d[1], c[1] + r * d[1]])
        label.set_text(f"t = {result.t[k]:.2f} s")
        return (path_r, path_f, frame_line, *wheels, label)

    anim = FuncAnimation(fig, draw, frames=len(idx), blit=False)
    path = writable_file(path, "bicycle animation")
    try:
        anim.save(str(path), writer=PillowWriter(fps=fps))
    except OSError as exc:
        raise ResultFileError(f"bicycle animation '{path}' could not be written: {exc.strerror or exc}",
                              path=path) from None
    finally:
        plt.close(fig)
    return path


def plot_eigenvalues(params, path, speeds=None, dpi=120, validate=True):
    """Eigenvalues versus speed, real parts solid and imaginary parts dashed (seed 003, Fig. 3), to PNG.

    ``speeds`` defaults to 1001 points on 0-10 m/s. The self-stable interval v_w < v < v_c is shaded and
    v_d, v_w, v_c are marked. Returns ``path``.
    """
    p = bicycle.coerce_parameters(params, validate)
    v = np.linspace(0.0, 10.0, 1001) if speeds is None else np.asarray(speeds, dtype=float)
    sw = bicycle.eigenvalues(p, v, validate=False)
    cs = bicycle.critical_speeds(p, v_max=max(100.0, float(v.max())), validate=False)
    fig = figure((7.0, 5.0))
    ax = fig.add_subplot(1, 1, 1)
    if cs.stable_interval is not None:
        ax.axvspan(*cs.stable_interval, color="0.88", zorder=0, label="self-stable  $v_w < v < v_c$")
    styles = [("weave", sw.weave[:, 0], "C0"), (None, sw.weave[:, 1], "C0"),
              ("capsize", sw.capsize, "C1"), ("castor", sw.castor, "C2")]
    for label, lam, color in styles:
        ax.plot(v, lam.real, "-", color=color, lw=1.6, label=f"{label} (Re)" if label else None)
    ax.plot(v, np.abs(sw.weave[:, 0].imag), "--", color="C0", lw=1.4, label="weave (|Im|)")
    ax.axhline(0.0, color="k", lw=0.6)
    for name, value in (("$v_d$", cs.oscillation), ("$v_w$", cs.weave), ("$v_c$", cs.capsize)):
        if value is not None and v.min() <= value <= v.max():
            ax.axvline(value, color="0.4", lw=0.6, ls=":")
            ax.annotate(name, (value, 0.97), xycoords=("data", "axes fraction"), ha="center", va="top")
    ax.set_xlim(float(v.min()), float(v.max()))
    ax.set_ylim(-10.0, 10.0)
    ax.set_xlabel("speed $v$ (m/s)")
    ax.set_ylabel(r"eigenvalue $\lambda$ (1/s)")
    ax.set_title("Whipple bicycle: eigenvalues vs speed (Meijaard et al. 2007, Fig. 3)")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(True, lw=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi, "bicycle plot")


def plot_time_history(sim, path, dpi=120):
    """Lean and steer angles versus time and the rear contact path of a ``bicycle.LinearSimulation`` (``bicycle.simulate_linear``), to PNG.

    (Seed 003, Fig. 4 shows the rates of the nonlinear model; eqs. B.6 and B.8 give the path.)
    Returns ``path``.
    """
    fig = figure((7.0, 6.5))
    ax1 = fig.add_subplot(2, 1, 1)
    ax1.plot(sim.t, np.degrees(sim.phi), label=r"lean $\phi$")
    ax1.plot(sim.t, np.degrees(sim.delta), label=r"steer $\delta$")
    ax1.plot(sim.t, np.degrees(sim.psi), label=r"yaw $\psi$", lw=0.9, ls="--")
    ax1.set_xlabel("time $t$ (s)")
    ax1.set_ylabel("angle (deg)")
    ax1.grid(True, lw=0.3)
    ax1.legend(fontsize=8)
    ax1.set_title(f"Whipple bicycle, linearized: v = {sim.v[0]:.3g} m/s at t = 0")
    ax2 = fig.add_subplot(2, 1, 2)
    # y points to the right of the rider and z down: plot -y upward so the path looks as seen from above
    ax2.plot(sim.xP, -sim.yP, color="C3")
    ax2.set_xlabel("$x_P$ (m)")
    ax2.set_ylabel("$-y_P$ (m)  (left)")
    ax2.set_title("rear contact path (eq. B.8)", fontsize=9)
    ax2.grid(True, lw=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi, "bicycle plot")
