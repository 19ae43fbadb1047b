"""Plots of the nonlinear bicycle (seed 003 §8): time histories, contact paths, and a top-view animation."""
import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def plot_nonlinear(result, path, title=None):
    """Forward speed, lean and steer rates (seed 003 Fig. 4), lean, steer and yaw, and the contact paths of a
    result of ``bicycle.simulate_nonlinear``; written to ``path`` (PNG)."""
    plt = _pyplot()
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
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _unit(d):
    n = np.linalg.norm(d)
    return d / n if n > 0 else d


def animate_top_view(result, path, frames=60, fps=15):
    """A GIF of the bicycle seen from above: the contact paths drawn so far, the rear frame (rear contact to
    the steer axis), the front frame and the wheels' ground lines, over ``frames`` frames of the result."""
    plt = _pyplot()
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
    anim.save(str(path), writer=PillowWriter(fps=fps))
    plt.close(fig)
    return path
