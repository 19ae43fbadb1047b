"""Plots of the hoop on a profile (seed 000): residuals, the contact point's path, Fig. 4."""
import numpy as np

from multibody.systems.hoop_on_profile import contact_offset, contact_point
from multibody.viz.figures import pyplot, save_figure


def _profile_z(model, xs):
    prof = model.constraint("contact").profile
    out, z = [], 0.0
    for x in xs:
        z = prof.height(float(x), z)
        out.append(z)
    return np.array(out)


def plot_run(model, result, path, title=None):
    """Residuals ``|f_i(t)|`` (log scale) and the contact point's path over the profile (seed 000, Figs. 1, 3)."""
    plt = pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    for k, v in result.residuals.items():
        ax1.semilogy(result.t, np.maximum(np.abs(v), 1e-18), lw=0.6, label=k)
    ax1.set_xlabel("t")
    ax1.set_ylabel("|f_i|")
    ax1.legend()
    ax1.set_title(title or "constraint residuals")
    xa, za = contact_point(model, result)
    x_range = model.constraint("contact").x_range
    lo, hi = min(x_range[0], xa.min()), max(x_range[1], xa.max())
    xs = np.linspace(lo, hi, 800)
    ax2.plot(xs, _profile_z(model, xs), "k-", lw=1.0, label="profile")
    ax2.plot(xa, za, "r--", lw=0.8, label="contact point")
    ax2.set_xlabel("x")
    ax2.set_ylabel("z")
    ax2.legend()
    ax2.set_title("contact point over the profile")
    fig.tight_layout()
    try:
        return save_figure(fig, path, 110, "hoop plot")
    finally:
        plt.close(fig)



def plot_fig4(model, runs, path):
    """Seed 000, Fig. 4: the contact point's path over the profile for the given runs (dict label → Result; a
    float label is shown as ``λ = label``), a zoom on the end of the path, and the contact point's distance
    from the profile ``|h(x_a, z_a)|/‖∇h‖`` against time (log scale)."""
    plt = pyplot()
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(17, 4.8))
    styles = ["r-", "m--", "b:", "g-."]
    paths = []
    for (label, res), st in zip(runs.items(), styles):
        name = f"λ = {label:g}" if isinstance(label, (int, float)) else str(label)
        xa, za = contact_point(model, res)
        paths.append((xa, za))
        dev = np.abs(contact_offset(model, xa, za))
        for ax in (ax1, ax2):
            ax.plot(xa, za, st, lw=0.9, label=name)
        ax3.semilogy(res.t, np.maximum(dev, 1e-16), st, lw=0.8, label=name)
    x_range = model.constraint("contact").x_range
    lo = min(x_range[0], *(p[0].min() for p in paths))
    hi = max(x_range[1], *(p[0].max() for p in paths))
    xs = np.linspace(lo, hi, 1200)
    ax1.plot(xs, _profile_z(model, xs), "k-", lw=1.4, label="profile", zorder=0)
    # zoom: the end of the first path (the plain λ = 0 run) and its neighbourhood
    xe, ze = paths[0][0][-1], paths[0][1][-1]
    w = max(0.05, 4 * float(np.max(np.abs(contact_offset(model, *paths[0])))))
    xz = np.linspace(xe - w, xe + w, 400)
    ax2.plot(xz, _profile_z(model, xz), "k-", lw=1.4, label="profile", zorder=0)
    ax2.set_xlim(xe - w, xe + w)
    ax2.set_ylim(ze - w, ze + w)
    ax1.set_xlabel("x")
    ax1.set_ylabel("z")
    ax1.legend(fontsize=8)
    ax1.set_title("contact point path over the profile (seed 000, Fig. 4)")
    ax2.set_xlabel("x")
    ax2.set_ylabel("z")
    ax2.set_title("zoom at the end of the λ = 0 path")
    ax3.set_xlabel("t")
    ax3.set_ylabel("distance of the contact point from the profile")
    ax3.legend(fontsize=8)
    ax3.set_title("departure from the profile")
    fig.tight_layout()
    try:
        return save_figure(fig, path, 110, "hoop plot")
    finally:
        plt.close(fig)
