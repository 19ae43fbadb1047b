"""Maps of sweep tables over two grid parameters (matplotlib, written to PNG files)."""
import numpy as np

from multibody.viz.figures import pyplot, save_figure


def _pivot(table, x, y, column):
    """(xs, ys, Z) with Z[j, i] the value of ``column`` at (xs[i], ys[j]); NaN where the table has none."""
    t = table.reset_index() if "point" not in table.columns and table.index.name == "point" else table
    for name in (x, y, column):
        if name not in t.columns:
            from multibody.errors import ModelError

            raise ModelError(f"plot: the sweep table has no column '{name}'; expected one of {', '.join(t.columns)}",
                             element=f"column '{name}'")
    p = t.pivot_table(index=y, columns=x, values=column, aggfunc="first", dropna=False)
    return p.columns.to_numpy(dtype=float), p.index.to_numpy(dtype=float), p.to_numpy(dtype=float)


def _edges(v):
    """Cell edges around sorted centres ``v`` (for pcolormesh)."""
    if v.size == 1:
        return np.array([v[0] - 0.5, v[0] + 0.5])
    mid = 0.5 * (v[1:] + v[:-1])
    return np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])


def plot_map(table, path, x, y, columns, labels=None, title=None, dpi=110):
    """One colour map per column of a sweep table over the grid parameters ``x`` (horizontal) and ``y``.

    NaN cells are left blank (grey background); cells whose point raised (``error`` set) are marked with a
    cross. Returns ``path``.
    """
    plt = pyplot()
    columns = list(columns)
    fig, axes = plt.subplots(1, len(columns), figsize=(5.2 * len(columns), 4.4), squeeze=False)
    t = table.reset_index() if table.index.name == "point" else table
    err = t[t["error"].notna()] if "error" in t.columns else t.iloc[:0]
    for ax, col in zip(axes[0], columns):
        xs, ys, Z = _pivot(t, x, y, col)
        ax.set_facecolor("0.85")
        mesh = ax.pcolormesh(_edges(xs), _edges(ys), np.ma.masked_invalid(Z), shading="flat", cmap="viridis")
        fig.colorbar(mesh, ax=ax, label=(labels or {}).get(col, col))
        if len(err):
            ax.plot(err[x], err[y], "x", color="0.4", ms=3, label="invalid (error)")
            ax.legend(loc="upper left", fontsize=8)
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.set_title((labels or {}).get(col, col))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    try:
        return save_figure(fig, path, dpi, "sweep plot")
    finally:
        plt.close(fig)


def plot_stability_map(table, path, x="c", y="lam", title=None, dpi=110):
    """The bicycle's stability map (seed 003, §6b, over two design parameters): the weave speed v_w and the
    capsize speed v_c of each point of a ``bicycle_stability`` sweep, with the boundary of the region where
    a self-stable speed range exists (v_w < v_c) drawn in white; points whose parameters were invalid
    (``error`` set) are dark grey. Returns ``path``."""
    plt = pyplot()
    from matplotlib.colors import ListedColormap

    t = table.reset_index() if table.index.name == "point" else table
    labels = {"v_w": "weave speed v_w (m/s)", "v_c": "capsize speed v_c (m/s)"}
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 4.6))
    xs, ys, S = _pivot(t, x, y, "stable")
    err = t[t["error"].notna()] if "error" in t.columns else t.iloc[:0]
    for ax, col in zip(axes, ("v_w", "v_c")):
        _, _, Z = _pivot(t, x, y, col)
        finite = Z[np.isfinite(Z)]
        vmax = float(np.percentile(finite, 98)) if finite.size else 1.0
        ax.set_facecolor("0.85")
        mesh = ax.pcolormesh(_edges(xs), _edges(ys), np.ma.masked_invalid(Z), shading="flat", cmap="viridis",
                             vmin=0.0, vmax=vmax)
        fig.colorbar(mesh, ax=ax, label=labels[col], extend="max")
        if xs.size > 1 and ys.size > 1 and np.nanmax(np.nan_to_num(S)) > 0:
            ax.contour(xs, ys, np.nan_to_num(S), levels=[0.5], colors="w", linewidths=1.2)
        if len(err):   # the points that raised, in dark grey
            _, _, E = _pivot(t.assign(_err=t["error"].notna().astype(float)), x, y, "_err")
            ax.pcolormesh(_edges(xs), _edges(ys), np.ma.masked_where(~(E > 0.5), E), shading="flat",
                          cmap=ListedColormap(["0.45"]), vmin=0.0, vmax=1.0)
        if (x, y) == ("c", "lam"):   # the benchmark bicycle of seed 003, Table 1
            ax.plot(0.08, np.pi / 10, "r*", ms=9, label="benchmark bicycle (seed 003, Table 1)")
            ax.legend(loc="lower right", fontsize=8)
        ax.set_xlabel({"c": "trail c (m)", "lam": "steer-axis tilt λ (rad)"}.get(x, x))
        ax.set_ylabel({"c": "trail c (m)", "lam": "steer-axis tilt λ (rad)"}.get(y, y))
        ax.set_title(labels[col] + "\nwhite line: edge of the self-stable region (v_w < v_c)", fontsize=10)
    note = f"dark grey: invalid parameters ({len(err)} points, error recorded); " if len(err) else ""
    fig.suptitle((title or f"benchmark bicycle stability map, {len(t)} parameter points (seed 003)") + "\n" +
                 note + "grey: no such speed in the searched range", fontsize=11)
    fig.tight_layout()
    try:
        return save_figure(fig, path, dpi, "sweep plot")
    finally:
        plt.close(fig)
