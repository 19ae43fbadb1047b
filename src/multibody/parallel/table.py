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

On resume, the rows are checked against the grid (same parameter values at the same point index, integer
point indices, numbers in the output columns: a table of something else is refused), rows without a point
index are dropped, and a point found twice is kept once.

Without ``resume``, an existing table is replaced when the first points are written (a sweep that stops
before it computed anything leaves it as it was).

While a sweep writes a table, it holds ``<out>.lock``: a file next to the table holding the owner's pid and
host, locked with ``flock`` (released by the system when its process ends, however it ends). A second sweep
into the same table raises :class:`~multibody.errors.SweepError` naming the owner; the file of an owner that
ended without removing it (killed) is taken over, with a message.
"""
import json
import math
import os
import shutil
import socket
import sys
import time

import numpy as np

from multibody.errors import ModelError, SweepError

try:
    import fcntl
except ImportError:    # not POSIX: the lock file alone, created exclusively (see TableLock)
    fcntl = None

#: columns the table adds to the grid's and the function's
RESERVED = ("point", "error")
#: a table writes its new rows at least this often (seconds) ...
FLUSH_SECONDS = 1.0
#: ... or when this many are waiting
FLUSH_ROWS = 10_000


def open_table(out, grid, resume):
    """The table for ``out`` (None: in memory only; ``.parquet``/``.pq`` or ``.csv``), locked, with ``done``
    filled from the existing file when ``resume``. Everything that would stop the sweep from writing it is
    checked here, before any point runs."""
    if out is None:
        return _Table(grid, None)
    path = os.fspath(out)
    suffix = os.path.splitext(path)[1].lower()
    kinds = {".parquet": _ParquetTable, ".pq": _ParquetTable, ".csv": _CsvTable}
    if suffix not in kinds:
        raise ModelError(f"sweep: out '{path}' has suffix {suffix!r}; expected .parquet or .csv", element="out")
    if os.path.isdir(path):
        raise ModelError(f"sweep: out '{path}' is a folder; expected a table file (.parquet or .csv)", element="out")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ModelError(f"sweep: the folder of out '{path}' does not exist", element="out")
    if kinds[suffix] is _ParquetTable:
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ModelError(f"sweep: out '{path}' needs pyarrow for Parquet; install pyarrow or use a .csv file",
                             element="out") from None
        if os.path.exists(path + ".parts") and not os.path.isdir(path + ".parts"):
            raise ModelError(f"sweep: '{path}.parts' (where the Parquet parts go) is a file; expected a folder or "
                             "nothing", element="out")
    if os.path.exists(path) and not os.path.isfile(path):
        raise ModelError(f"sweep: out '{path}' exists and is not a regular file", element="out")
    if resume and os.path.exists(path) and not os.access(path, os.R_OK | os.W_OK):
        raise ModelError(f"sweep: resume: the table '{path}' cannot be read and written (permissions)", element="out")
    lock = TableLock(path)      # also proves that the folder is writable
    try:
        return kinds[suffix](grid, path, resume, lock)
    except BaseException:
        lock.release()
        raise


class TableLock:
    """The exclusive lock of the table ``path``: the file ``<path>.lock`` (next to the real file), holding the
    owner's pid and host as JSON, locked with ``flock`` while the owner runs.

    A lock that another running process holds raises :class:`~multibody.errors.SweepError` naming it. A lock file
    left by an owner that ended without removing it is taken over, with a message on stderr. Without ``flock``
    (not POSIX) the file is created exclusively, and one left behind is removed by hand.
    """

    def __init__(self, path):
        self.table = path
        self.path = os.path.realpath(path) + ".lock"
        self.fd = None
        while self.fd is None:
            fd = self._open()
            if fd is None:
                continue
            previous = _owner(fd)
            if previous:
                print(f"sweep: the table '{path}' was locked by {_describe_owner(previous)}, which ended without "
                      f"unlocking it; taking the lock over", file=sys.stderr)
            me = json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}).encode()
            os.ftruncate(fd, 0)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, me)
            os.fsync(fd)
            self.fd = fd

    def _open(self):
        """The locked file descriptor, or None to try again (its last owner removed the file under us)."""
        try:
            flags = os.O_RDWR | os.O_CREAT | (0 if fcntl else os.O_EXCL)
            fd = os.open(self.path, flags, 0o644)
        except FileExistsError:               # no flock: the file is the lock, removed by hand if its owner died
            with open(self.path, "rb") as fh:
                owner = _parse_owner(fh.read(4096))
            raise SweepError(self._busy(owner) + "; if that sweep no longer runs, remove the lock file") from None
        except OSError as exc:
            raise ModelError(f"sweep: cannot write next to the table '{self.table}' ({exc.strerror}: "
                             f"'{self.path}'); expected a writable folder", element="out") from None
        if fcntl is None:
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            owner = _owner(fd)
            os.close(fd)
            raise SweepError(self._busy(owner)) from None
        try:                                  # the file we locked may have been removed by its last owner
            same = os.stat(self.path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            return None
        return fd

    def _busy(self, owner):
        return (f"sweep: the table '{self.table}' is being written by another sweep ({_describe_owner(owner)}); "
                f"wait for it to end or choose another out (lock file '{self.path}')")

    def release(self):
        """Remove the lock file, then unlock it (idempotent)."""
        if self.fd is None:
            return
        fd, self.fd = self.fd, None
        if fcntl is None:
            os.close(fd)
        try:
            os.remove(self.path)
        except FileNotFoundError:
            pass
        if fcntl is not None:
            os.close(fd)


def _owner(fd):
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return _parse_owner(os.read(fd, 4096))
    except OSError:
        return None


def _parse_owner(data):
    try:
        owner = json.loads(data.decode())
    except (UnicodeDecodeError, ValueError):
        return {"unreadable": True} if data else None
    return owner if isinstance(owner, dict) else {"unreadable": True}


def _describe_owner(owner):
    if not owner or owner.get("unreadable"):
        return "a process that left an unreadable lock file"
    return f"pid {owner.get('pid')} on host {owner.get('host')}"


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
    """The rows of a table read back for resume, checked against ``grid`` (a table of something else is refused)."""
    import pandas as pd

    def refuse(what):
        raise ModelError(f"sweep: resume: the table '{path}' {what}; expected the table of the interrupted sweep "
                         "(or resume=False to start over)", element="out")

    missing = [c for c in ("point", *grid.names) if c not in df.columns]
    if missing:
        refuse(f"has no column {', '.join(map(repr, missing))} (a table of a sweep over {', '.join(grid.names)} has)")
    point = pd.to_numeric(df["point"], errors="coerce")
    df = df[point.notna()].copy()
    point = point[point.notna()].to_numpy(dtype=float)
    bad = (point != np.floor(point)) | (point < 0) | (point >= grid.size)
    if bad.any():
        refuse(f"holds point {float(point[bad][0]):g}, which is not an index of the grid's {grid.size} points")
    df["point"] = point.astype(np.int64)
    for col in df.columns:
        if col in grid.names or col in ("point", "error"):
            continue
        values = pd.to_numeric(df[col], errors="coerce")
        text = values.isna() & df[col].notna()
        if text.any():
            refuse(f"holds {df[col][text].iloc[0]!r} in the output column '{col}'; a sweep's outputs are numbers")
        df[col] = values.astype(float)
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
            refuse(f"holds point {int(df['point'].iloc[k])} with {name}={got[k]!r}, but the grid has "
                   f"{name}={exp[k].item()!r} there")
    return df


class _Table:
    """In memory only (``out=None``); the base of the file tables."""

    def __init__(self, grid, existing, lock=None, resumed=False):
        self.grid = grid
        self.lock, self.resumed = lock, resumed
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
        """Write what is left and unlock; returns every row as a DataFrame indexed by ``point``. A sweep that
        neither resumed nor computed anything leaves the file as it was."""
        try:
            self.flush()
            df = _combine(self.frames, self.grid)
            if self.frames or self.resumed:
                self._finish(df)
        finally:
            if self.lock is not None:
                self.lock.release()
        return _result(df)


class _CsvTable(_Table):
    """Rows appended to one CSV file."""

    def __init__(self, grid, path, resume, lock):
        self.path = path
        self.header = None
        existing = None
        if resume and os.path.exists(path) and os.path.getsize(path) > 0:
            with open(path, "rb") as fh:
                data = fh.read()
            whole = data[:data.rfind(b"\n") + 1]    # a line cut short by a killed writer is dropped
            if not whole:                            # a sweep writes its header and first rows at once
                raise ModelError(f"sweep: resume: the table '{path}' holds no complete line; expected the table of "
                                 "the interrupted sweep (or resume=False to start over)", element="out")
            existing = _read_csv(whole, path)
            if existing is not None:
                self.header = list(existing.columns)
                existing = _check_existing(existing, grid, path)
            if len(whole) < len(data):
                with open(path, "rb+") as fh:
                    fh.truncate(len(whole))
        super().__init__(grid, existing, lock, resume)

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
        # first rows (replacing a table of an earlier sweep), or a new output column: (re)write the whole file
        df = _combine(self.frames, self.grid)
        self.header = list(df.columns)
        _atomic(self.path, lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n"))

    def _finish(self, df):
        if list(df.columns) != self.header:   # nothing written yet, or columns to put in order
            self.header = list(df.columns)
            _atomic(self.path, lambda tmp: df.to_csv(tmp, index=False, lineterminator="\n"))


def _read_csv(data, path):
    """The DataFrame of a CSV table's bytes (None when it has no header); a file that is not CSV is a ModelError."""
    import io

    import pandas as pd

    try:
        # floats are written with repr; read them back exactly (pandas >= 3 does by default)
        exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
        return pd.read_csv(io.BytesIO(data), keep_default_na=False, na_values=[""], **exact)
    except pd.errors.EmptyDataError:
        return None
    except Exception as exc:
        raise ModelError(f"sweep: resume: cannot read the table '{path}' as CSV ({type(exc).__name__}: "
                         f"{str(exc).strip()[:200]})", element="out") from None


class _ParquetTable(_Table):
    """Parts in ``<out>.parts/`` while running, one Parquet file at the end."""

    def __init__(self, grid, path, resume, lock):
        import pandas as pd

        self.path = path
        self.parts = path + ".parts"
        self._seq = 0
        existing = None
        if resume:
            frames = []
            files = [path] if os.path.exists(path) else []
            if os.path.isdir(self.parts):
                files += [os.path.join(self.parts, f) for f in sorted(os.listdir(self.parts))
                          if f.endswith(".parquet")]
            for f in files:
                try:
                    frames.append(pd.read_parquet(f))
                except Exception as exc:
                    raise ModelError(f"sweep: resume: cannot read the table '{f}' as Parquet ({type(exc).__name__}: "
                                     f"{str(exc).strip()[:200]})", element="out") from None
            if frames:
                columns = _order([c for f in frames for c in f.columns], grid)
                existing = _check_existing(pd.concat([f.reindex(columns=columns) for f in frames],
                                                     ignore_index=True), grid, path)
        self._changed = resume and os.path.isdir(self.parts)
        super().__init__(grid, existing, lock, resume)

    def _write(self, frame):
        if self._seq == 0 and not self.resumed:   # the first rows replace the table of an earlier sweep
            _remove(self.path)
            shutil.rmtree(self.parts, ignore_errors=True)
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
