"""Plots of the Poisson-impulse benchmark (seed 002, ``multibody bench --only poisson``): the cost of one
right-hand side against the number of bodies."""
import numpy as np

from multibody.viz.figures import figure, save_figure


def plot_cost(rows, path):
    """Log-log plot of the time per right-hand side against N (cardan chains, random trees) and the cost per
    body; written to ``path`` (PNG)."""
    fig = figure((11, 4.4), constrained_layout=True)
    ax1, ax2 = fig.subplots(1, 2)
    styles = {"sweep": ("C0", "o"), "cholesky": ("C1", "s"), "aba": ("C2", "^"), "dense": ("C3", "v")}
    for kind, ls in (("cardan chain", "-"), ("random tree", "--")):
        sel = [r for r in rows if r["model"] == kind]
        for name, (color, marker) in styles.items():
            pts = [(r["N"], r[f"{name}_us"], r[f"{name}_ns_per_body"]) for r in sel if f"{name}_us" in r]
            if not pts:
                continue
            N, us, nsb = map(np.array, zip(*pts))
            label = f"{name} ({kind})"
            ax1.loglog(N, us, ls, color=color, marker=marker, ms=4, label=label)
            if name != "dense":
                ax2.semilogx(N, nsb, ls, color=color, marker=marker, ms=4, label=label)
    chains = [r for r in rows if r["model"] == "cardan chain"]
    if chains:  # slopes 1 and 3 through the largest chains' sweep and dense points
        last = chains[-1]
        Ns = np.array([chains[0]["N"], last["N"]], dtype=float)
        ax1.loglog(Ns, last["sweep_us"] * Ns / last["N"], ":", color="0.5", lw=1, label="∝ N")
        dense = [r for r in chains if "dense_us" in r][-1]
        Nd = np.array([dense["N"] / 10, dense["N"]], dtype=float)
        ax1.loglog(Nd, dense["dense_us"] * (Nd / dense["N"]) ** 3, "-.", color="0.5", lw=1, label="∝ N³")
    ax1.set_xlabel("N (bodies)")
    ax1.set_ylabel("time per right-hand side, µs")
    ax1.set_title("cost of one right-hand side")
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize="x-small", ncol=2, loc="upper left")
    ax2.set_xlabel("N (bodies)")
    ax2.set_ylabel("ns per body")
    ax2.set_title("cost per body (O(N) methods)")
    ax2.set_ylim(0, 1.3 * max(r[f"{m}_ns_per_body"] for r in rows for m in ("sweep", "cholesky", "aba")))
    ax2.grid(True, which="both", alpha=0.3)
    fig.suptitle("Poisson impulses (seed 002): sweep and Cholesky vs ABA and dense CRBA + Cholesky")
    return save_figure(fig, path, 110, "Poisson plot")
