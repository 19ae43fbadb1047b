"""The table a sweep streams into: one row per finished point, kept on disk as the points finish.

Columns: the grid's parameters, the function's outputs, ``error`` (the message of a point that raised,
empty otherwise) and ``point`` (the point's flat index in the grid, which identifies it on resume).

* ``.csv``: rows are appended to the file itself about once a second (one ``write`` of whole lines, then
  ``fsync``); a line cut short by a killed process is dropped when the sweep is resumed. When a later row
  brings a new output column, the file is rewritten with it.
* ``.parquet`` (pyarrow): a Parquet file cannot be appended to, and is unreadable until its footer is
  written. Rows are therefore written about once a second as small Parquet files in the folder
  ``<out>.parts/`` (each written under a temporary name, then renamed: a part is complete or absent), and
  gathered into ``<out>`` when the sweep ends, is interrupted, or raises; the folder is then removed. A
  resumed sweep reads ``<out>`` and any parts a killed run left.

On resume, the rows are checked against the grid (same parameter values at the same point index), rows
without a point index are dropped, and a point found twice is kept once.
"""
import math
import os
import shutil
import time

import numpy as np

from multibody.errors import ModelError

#: a table writes its new rows at least this often (seconds) ...
FLUSH_SECONDS = 1.0
#: ... or when this many are waiting
FLUSH_ROWS = 10_000


def open_table(out, grid, resume):
    """The table for ``out`` (None: in memory only; ``.parquet``/``.pq`` or ``.csv``), with ``done`` filled
    from the existing file when ``resume``."""
    if out is None:
        return _Table(grid, None)
    path = os.fspath(out)
    suffix = os.path.splitext(path)[1].lower()
    kinds = {".parquet": _ParquetTable, ".pq": _ParquetTable, ".csv": _CsvTable}
    if suffix not in kinds:
        raise ModelError(f"sweep: out '{path}' has suffix {suffix!r}; expected .parquet or .csv", element="out")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ModelError(f"sweep: the folder of out '{path}' does not exist", element="out")
    if kinds[suffix] is _ParquetTable:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ModelError(f"sweep: out '{path}' needs pyarrow for Parquet; install pyarrow or use a .csv file",
                             element="out") from None
    return kinds[suffix](grid, path, resume)


def _order(columns, grid):
    """Grid parameters first, then the outputs in their order of appearance, then ``error`` and ``point``."""
    rest = [c for c in columns if c not in grid.names and c not in ("error", "point")]
    return [*grid.names, *dict.fromkeys(rest), "error", "point"]


def _frame(grid, rows):
    """A DataFrame of rows ``(point, outputs or None, error or None)``."""
    import pandas as pd

    idx = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    data = dict(grid.columns(idx))
    keys = dict.fromkeys(k for r in rows if r[1] is not None for k in r[1])
    for k in keys:
        data[k] = np.array([r[1].get(k, math.nan) if r[1] is not None else math.nan for r in rows], dtype=float)
    data["error"] = np.array([r[2] for r in rows], dtype=object)
    data["point"] = idx
    return pd.DataFrame(data)


def _combine(frames, grid):
    """One DataFrame of ``frames`` (columns ordered, each point once, sorted by point)."""
    import pandas as pd

    frames = [f for f in frames if f is not None and len(f)]
    if not frames:
        return _frame(grid, [])
    columns = _order([c for f in frames for c in f.columns], grid)
    df = pd.concat([f.reindex(columns=columns) for f in frames], ignore_index=True)
    df = df.drop_duplicates(subset="point", keep="first").sort_values("point", kind="stable")
    err = df["error"].astype(object)
    df["error"] = err.where(err.notna() & (err != ""), None)
    return df.reset_index(drop=True)


def _result(df):
    return df.set_index("point")


def _check_existing(df, grid, path):
    """The rows of a table read back for resume, checked against ``grid``."""
    import pandas as pd

    missing = [c for c in ("point", *grid.names) if c not in df.columns]
    if missing:
        raise ModelError(f"sweep: resume: the table '{path}' has no column {', '.join(map(repr, missing))}; "
                         f"expected a table of a sweep over {', '.join(grid.names)}", element="out")
    point = pd.to_numeric(df["point"], errors="coerce")
    df = df[point.notna()].copy()
    df["point"] = point[point.notna()].astype(np.int64)
    bad = (df["point"] < 0) | (df["point"] >= grid.size)
    if bad.any():
        raise ModelError(f"sweep: resume: the table '{path}' holds point {int(df['point'][bad].iloc[0])}, outside "
                         f"the grid's {grid.size} points; expected the grid of the interrupted sweep (or "
                         "resume=False to start over)", element="out")
    df = df.drop_duplicates(subset="point", keep="first")
    expected = grid.columns(df["point"].to_numpy())
    for name in grid.names:
        exp = expected[name]
        got = df[name].to_numpy()
        if exp.dtype.kind in "biuf":
            try:
                same = np.isclose(got.astype(float), exp.astype(float), rtol=1e-12, atol=0.0)
            except (TypeError, ValueError):
                same = np.zeros(len(got), dtype=bool)
        else:
            same = got.astype(str) == exp.astype(str)
        if not same.all():
            k = int(np.argmin(same))
            raise ModelError(f"sweep: resume: the table '{path}' holds point {int(df['point'].iloc[k])} with "
                             f"{name}={got[k]!r}, but the grid has {name}={exp[k].item()!r} there; expected the grid "
                             "of the interrupted sweep (or resume=False to start over)", element="out")
    return df


class _Table:
    """In memory only (``out=None``); the base of the file tables."""

    def __init__(self, grid, existing):
        self.grid = grid
        self.frames = [existing] if existing is not None and len(existing) else []
        self.done = (np.sort(existing["point"].to_numpy(dtype=np.int64)) if existing is not None
                     else np.zeros(0, dtype=np.int64))
        self._seen = set(self.done.tolist())
        self._buffer = []
        self._last = time.monotonic()

    @property
    def computed(self):
        """Points added by this run (not read from the file)."""
        return len(self._seen) - self.done.size

    def add(self, rows):
        """Rows ``(point, outputs or None, error or None)`` of finished points (a point already here is skipped)."""
        for r in rows:
            if r[0] not in self._seen:
                self._seen.add(r[0])
                self._buffer.append(r)

    def maybe_flush(self):
        if self._buffer and (len(self._buffer) >= FLUSH_ROWS or time.monotonic() - self._last >= FLUSH_SECONDS):
            self.flush()

    def flush(self):
        self._last = time.monotonic()
        if not self._buffer:
            return
        frame = _frame(self.grid, self._buffer)
        self._buffer = []
        self.frames.append(frame)
        self._write(frame)

    def _write(self, frame):
        pass

    def _finish(self, df):
        pass

    def close(self):
        """Write what is left; returns every row as a DataFrame indexed by ``point``."""
        self.flush()
        df = _combine(self.frames, self.grid)
        self._finish(df)
        return _result(df)


class _CsvTable(_Table):
    """Rows appended to one CSV file."""

    def __init__(self, grid, path, resume):
        import pandas as pd

        self.path = path
        self.header = None
        existing = None
        if not resume:
            _remove(path)
        elif os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path, "rb+") as fh:   # a line cut short by a killed writer is dropped
                data = fh.read()
                if not data.endswith(b"\n"):
                    fh.truncate(data.rfind(b"\n") + 1)
            try:
                # floats are written with repr; read them back exactly (pandas >= 3 does by default)
                exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
                existing = pd.read_csv(path, keep_default_na=False, na_values=[""], **exact)
            except pd.errors.EmptyDataError:
                existing = None
            except (pd.errors.ParserError, UnicodeDecodeError) as exc:
                raise ModelError(f"sweep: resume: cannot read the table '{path}': {exc}", element="out") from None
            if existing is not None:
                self.header = list(existing.columns)
                existing = _check_existing(existing, grid, path)
        super().__init__(grid, existing)

    def _write(self, frame):
        if self.header is not None and set(frame.columns) <= set(self.header):
            text = frame.reindex(columns=self.header).to_csv(header=False, index=False, lineterminator="\n")
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, text.encode())
                os.fsync(fd)
            finally:
                os.close(fd)
            return
        # first rows, or a new output column: (re)write the whole file
        df = _combine(self.frames, self.grid)
        self.header = list(df.columns)
        _atomic(self.path, lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n"))

    def _finish(self, df):
        if list(df.columns) != self.header:   # nothing written yet, or columns to put in order
            self.header = list(df.columns)
            _atomic(self.path, lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n"))


class _ParquetTable(_Table):
    """Parts in ``<out>.parts/`` while running, one Parquet file at the end."""

    def __init__(self, grid, path, resume):
        import pandas as pd

        self.path = path
        self.parts = path + ".parts"
        self._seq = 0
        existing = None
        if not resume:
            _remove(path)
            shutil.rmtree(self.parts, ignore_errors=True)
        else:
            frames = []
            files = [path] if os.path.exists(path) else []
            if os.path.isdir(self.parts):
                files += [os.path.join(self.parts, f) for f in sorted(os.listdir(self.parts))
                          if f.endswith(".parquet")]
            for f in files:
                try:
                    frames.append(pd.read_parquet(f))
                except Exception as exc:
                    raise ModelError(f"sweep: resume: cannot read the table '{f}': {exc}", element="out") from None
            if frames:
                columns = _order([c for f in frames for c in f.columns], grid)
                existing = _check_existing(pd.concat([f.reindex(columns=columns) for f in frames],
                                                     ignore_index=True), grid, path)
        self._changed = os.path.isdir(self.parts)
        super().__init__(grid, existing)

    def _write(self, frame):
        os.makedirs(self.parts, exist_ok=True)
        self._seq += 1
        name = os.path.join(self.parts, f"part-{time.time_ns()}-{os.getpid()}-{self._seq:06d}.parquet")
        _atomic(name, lambda tmp: frame.to_parquet(tmp, index=False))
        self._changed = True

    def _finish(self, df):
        if self._changed or not os.path.exists(self.path):
            _atomic(self.path, lambda tmp: df.to_parquet(tmp, index=False))
            shutil.rmtree(self.parts, ignore_errors=True)


def _atomic(path, write):
    """``write(tmp)`` then rename ``tmp`` to ``path``: readers see the old file or the whole new one."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
