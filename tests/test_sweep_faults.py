"""A sweep's faults: nothing a point function does ends a sweep silently (``sys.exit``, ``KeyboardInterrupt`` or
another ``BaseException`` is that point's error), a point that never returns is stopped by ``timeout`` (local
processes and a Dask LocalCluster), two sweeps never write the same table, and bad grids, outputs, tables and
resumes are one clear ``multibody.errors`` exception. The sweeps that could hang run in a subprocess with a
time limit."""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import multibody as mb  # noqa: E402
from multibody.errors import ModelError, SweepError  # noqa: E402
from multibody.parallel import Grid  # noqa: E402
from multibody.parallel.table import TableLock  # noqa: E402

import sweep_points  # noqa: E402
from sweep_points import escapes, square  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(TESTS), "src")
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, TESTS]))
#: a sweep script that hangs fails the test after this many seconds (a sweep here takes seconds; the worker
#: start-up on a loaded two-core machine takes most of them)
LIMIT = 300

ESCAPED = [None, "SystemExit: the function called sys.exit(3)",
           "KeyboardInterrupt: raised by the function on a worker", "Escape: escaped", None]


def run_script(code, *args):
    """Run ``code`` in a fresh interpreter (killed after LIMIT s); its last stdout line is JSON."""
    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], env=ENV, capture_output=True, text=True,
                          timeout=LIMIT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------------- escapes

def test_system_exit_is_a_failed_point_in_this_process_and_keyboard_interrupt_stops(tmp_path):
    df = mb.sweep(escapes, {"x": [0, 1, 3, 4]}, scheduler="serial", progress=False)
    assert df["error"].tolist() == [None, ESCAPED[1], ESCAPED[3], None]
    assert df["s"].tolist()[::3] == [0.0, 4.0]
    # scheduler="serial": a KeyboardInterrupt may be Ctrl-C, so it stops the sweep (keeping the finished points)
    with pytest.raises(KeyboardInterrupt):
        mb.sweep(escapes, {"x": [0, 2, 4]}, scheduler="serial", out=tmp_path / "t.csv", chunk_size=1, progress=False)
    assert pd.read_csv(tmp_path / "t.csv")["point"].tolist() == [0]


def test_on_error_raise_turns_system_exit_into_a_sweep_error_naming_the_point(tmp_path, capsys):
    with pytest.raises(SweepError, match=r"sys.exit\(3\)") as info:
        mb.sweep(escapes, {"x": [0, 1, 4]}, scheduler="serial", on_error="raise", progress=False)
    assert "at sweep point 1: x=1" in info.value.__notes__
    from multibody.cli import main

    args = ["sweep", "sweep_points:escapes", "--grid", "x=0,1,4", "--out", str(tmp_path / "t.csv"), "--scheduler",
            "serial", "--no-progress"]
    assert main(args + ["--on-error", "raise"]) == 2
    err = capsys.readouterr().err.strip()
    assert "sys.exit(3)" in err and "point 1" in err and "\n" not in err
    assert main(args) == 0                                   # recorded: the table holds every point
    assert "3/3 points" in capsys.readouterr().out
    assert pd.read_csv(tmp_path / "t.csv")["error"].tolist()[1] == ESCAPED[1]


#: what ``sweep_points.faulty`` over x = 0..6 gives: the escapes are failed points, point 4 timed out
FAULTY = ESCAPED[:4] + ["timeout after 1 s", None, None]

PROCESSES = """
import json, sys, multibody as mb, sweep_points
if __name__ == "__main__":
    df = mb.sweep(sweep_points.faulty, {"x": range(7)}, workers=2, chunk_size=3, timeout=1.0, out=sys.argv[1],
                  progress=False)
    print(json.dumps({"errors": df["error"].tolist(), "s": df["s"].tolist(), "computed": df.attrs["computed"]}))
"""


def test_local_processes_record_escapes_and_time_out_a_point_that_never_returns(tmp_path):
    """Two worker processes, chunks of 3 points: the escapes are failed points; with timeout=1 the hanging point 4
    is recorded as 'timeout after 1 s', its worker killed (the pool restarts) and the rest of its chunk (points 3
    and 5) sent again. Before, sys.exit(3) in a worker ended the calling program with status 3 and no table."""
    out = tmp_path / "t.csv"
    res = run_script(PROCESSES, out)
    assert res["errors"] == FAULTY
    assert [res["s"][i] for i in (0, 5, 6)] == [0.0, 5.0, 6.0]
    assert res["computed"] == 7
    on_disk = pd.read_csv(out).set_index("point").sort_index()
    assert on_disk["error"].fillna("").tolist() == [e or "" for e in FAULTY]
    assert not os.path.exists(str(out) + ".lock")


DASK = """
import json, sys, distributed, multibody as mb, sweep_points
if __name__ == "__main__":
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        df = mb.sweep(sweep_points.faulty, {"x": range(7)}, scheduler=c.scheduler_address, chunk_size=3,
                      timeout=1.0, progress=False)
        after = mb.sweep(sweep_points.square, {"x": range(4)}, scheduler=c, progress=False)
    print(json.dumps({"errors": df["error"].tolist(), "s": df["s"].tolist(), "after": after["sq"].tolist()}))
"""


def test_dask_local_cluster_records_escapes_and_times_out_a_point_that_never_returns():
    """A two-process LocalCluster: before, a point's sys.exit killed its worker, the scheduler ran it again on
    the next one and the sweep never ended; now it is the point's error. The hanging point is recorded, its
    worker restarted by its nanny, and the cluster still computes."""
    pytest.importorskip("distributed")
    res = run_script(DASK)
    assert res["errors"] == FAULTY
    assert [res["s"][i] for i in (0, 5, 6)] == [0.0, 5.0, 6.0]
    assert res["after"] == [0.0, 1.0, 4.0, 9.0]


def test_timeout_is_checked_before_anything_runs():
    for bad in (0, -1.0, math.nan, math.inf, "5"):
        with pytest.raises(ModelError, match="timeout must be a positive number of seconds"):
            mb.sweep(square, {"x": [1]}, timeout=bad)
    with pytest.raises(ModelError, match="timeout needs worker processes"):
        mb.sweep(square, {"x": [1]}, scheduler="serial", timeout=1.0)


# ---------------------------------------------------------------------------------------------------- the lock

HOLD = """
import json, sys, os
from multibody.parallel.table import TableLock
lock = TableLock(sys.argv[1])
print(json.dumps({"pid": os.getpid()}), flush=True)
sys.stdin.read()
lock.release()
print(json.dumps({"released": not os.path.exists(sys.argv[1] + ".lock")}))
"""


def test_a_second_sweep_into_a_locked_table_is_refused_and_the_table_kept(tmp_path):
    out = tmp_path / "t.csv"
    mb.sweep(square, {"x": [1, 2]}, scheduler="serial", out=out, progress=False)
    before = out.read_text()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], env=ENV, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        pid = json.loads(holder.stdout.readline())["pid"]
        for resume in (False, True):
            with pytest.raises(SweepError, match=f"being written by another sweep \\(pid {pid} on host"):
                mb.sweep(square, {"x": [1, 2]}, scheduler="serial", out=out, resume=resume, progress=False)
        assert out.read_text() == before
        text, _ = holder.communicate("", timeout=LIMIT)
    finally:
        holder.kill()
    assert json.loads(text.strip().splitlines()[-1]) == {"released": True}
    df = mb.sweep(square, {"x": [1, 2]}, scheduler="serial", out=out, resume=True, progress=False)
    assert df.attrs["computed"] == 0 and not os.path.exists(str(out) + ".lock")


def test_a_lock_left_by_a_killed_sweep_is_taken_over_with_a_message(tmp_path, capsys):
    out = tmp_path / "t.parquet"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock = tmp_path / "t.parquet.lock"
    lock.write_text(json.dumps({"pid": int(dead.stdout), "host": "somewhere"}))
    df = mb.sweep(square, {"x": [1, 2]}, scheduler="serial", out=out, progress=False)
    assert len(df) == 2 and not lock.exists()
    assert f"locked by pid {int(dead.stdout)} on host somewhere, which ended without unlocking it" in \
        capsys.readouterr().err
    held = TableLock(str(out))          # the lock is exclusive within one process too
    try:
        with pytest.raises(SweepError, match="being written by another sweep"):
            TableLock(str(out))
    finally:
        held.release()
    assert not lock.exists()


# ---------------------------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("values, match", [
    ([1, "a"], "mixes numbers and strings"),
    ([1 + 2j], "real numbers or strings, got values of type complex"),
    ([None], "values of type NoneType"),
    ([2**70], "values of type int"),
    (["", "a"], "empty or unprintable string"),
    ([b"a"], "values of type bytes"),
    (range(10**9), "at most 100000000 points"),
])
def test_bad_grid_values_are_model_errors(values, match):
    with pytest.raises(ModelError, match=match):
        Grid({"a": values})


def test_a_huge_product_and_a_function_that_cannot_take_the_grid_are_refused_before_running():
    with pytest.raises(ModelError, match="100000 x 100000 = 10000000000 points"):
        Grid({"a": np.zeros(100_000), "b": np.zeros(100_000)})
    with pytest.raises(ModelError, match=r"cannot take the grid's parameters x, z"):
        mb.sweep(square, {"x": [1], "z": [2]}, scheduler="serial", progress=False)


def test_outputs_that_cannot_go_into_a_table_are_errors_of_their_point():
    df = mb.sweep(sweep_points.odd_outputs, {"x": range(4)}, scheduler="serial", progress=False)
    err = df["error"].tolist()
    assert "the key ''" in err[0] and "the key 'a\\nb'" in err[1]
    assert err[2] == "OverflowError: int too large to convert to float"
    assert err[3] == "Unprintable: <its message cannot be shown>"


def test_a_table_that_cannot_be_written_is_refused_before_anything_runs(tmp_path):
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(ModelError, match="is a folder; expected a table file"):
        mb.sweep(square, {"x": [1]}, out=tmp_path / "d.csv")
    (tmp_path / "f").write_text("")
    with pytest.raises(ModelError, match="does not exist"):
        mb.sweep(square, {"x": [1]}, out=tmp_path / "f" / "t.csv")
    (tmp_path / "t.parquet.parts").write_text("")
    with pytest.raises(ModelError, match="parts.* is a file"):
        mb.sweep(square, {"x": [1]}, out=tmp_path / "t.parquet")


def test_a_sweep_that_computed_nothing_leaves_an_earlier_table_as_it_was(tmp_path, monkeypatch):
    out = tmp_path / "t.csv"
    mb.sweep(square, {"x": [1, 2]}, scheduler="serial", out=out, progress=False)
    before = out.read_text()
    monkeypatch.setenv("SWEEP_STOP_AT", "0")                  # Ctrl-C at the first point
    with pytest.raises(KeyboardInterrupt):
        mb.sweep(sweep_points.logged, {"x": [0, 1]}, scheduler="serial", out=out, progress=False)
    assert out.read_text() == before


@pytest.mark.parametrize("name, content, match", [
    ("junk.csv", bytes(range(11, 256)) * 2, "holds no complete line"),
    ("frac.csv", b"x,v,error,point\n1,2,,0.5\n", "holds point 0.5, which is not an index"),
    ("huge.csv", b"x,v,error,point\n1,2,,1e30\n", "holds point 1e\\+30, which is not an index"),
    ("text.csv", b"x,v,error,point\n1,abc,,0\n", "holds 'abc' in the output column 'v'"),
    ("other.csv", b"a,b\n1,2", "has no column 'point', 'x'"),
    ("binary.csv", b"\xff\xfe\x00x\n\x00\x01\n", "cannot read the table .* as CSV"),
    ("junk.parquet", b"not parquet", "cannot read the table .* as Parquet"),
])
def test_resume_of_a_foreign_or_corrupt_table_is_refused_and_leaves_it_alone(tmp_path, name, content, match):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ModelError, match=match):
        mb.sweep(square, {"x": [1.0, 2.0]}, scheduler="serial", out=path, resume=True, progress=False)
    assert path.read_bytes() == content and not os.path.exists(str(path) + ".lock")
