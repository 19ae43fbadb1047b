"""multibody.sweep: the grid, the table, resume after an interruption or a killed process, local processes, a
Dask LocalCluster (also with a worker killed mid-sweep), and the point functions of the reference systems."""
import functools
import itertools
import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import multibody as mb  # noqa: E402
from multibody.errors import ModelError  # noqa: E402
from multibody.parallel import Grid  # noqa: E402

import sweep_points  # noqa: E402
from sweep_points import calls, flaky, logged, square  # noqa: E402

TESTS = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(os.path.dirname(TESTS), "src")
#: seconds a test waits for another process before it calls it hung: a guard against hangs, far beyond what any
#: load makes of the few seconds these steps take (never a speed requirement)
HANG_GUARD = 600


@pytest.fixture
def log(tmp_path, monkeypatch):
    """A fresh call log for ``sweep_points.logged`` (inherited by worker processes through the environment)."""
    d = tmp_path / "log"
    d.mkdir()
    monkeypatch.setenv("SWEEP_LOG", str(d))
    monkeypatch.setenv("SWEEP_SLEEP", "0")
    monkeypatch.delenv("SWEEP_STOP_AT", raising=False)
    return str(d)


def expected_square(xs, ys):
    return pd.DataFrame([{"x": x, "y": y, "sq": x * x + y, "neg": -x} for x, y in itertools.product(xs, ys)])


def check_complete(df, size, s_of):
    """Every point exactly once, with its right value and no error."""
    assert df.index.name == "point"
    assert df.index.is_unique and list(df.index) == list(range(size))
    assert df["error"].isna().all()
    assert np.array_equal(df["s"].to_numpy(), [s_of(r) for r in df.itertuples()])


# ---------------------------------------------------------------------------------------------------- grid

def test_grid_is_the_cartesian_product_last_name_fastest():
    g = Grid({"a": [1, 2, 3], "b": np.array([0.5, 1.5]), "m": "rk4"})
    assert g.size == 6 and g.shape == (3, 2, 1)
    assert [g.point(i) for i in range(g.size)] == list(itertools.product([1, 2, 3], [0.5, 1.5], ["rk4"]))
    cols = g.columns([5, 0])
    assert cols["a"].tolist() == [3, 1] and cols["b"].tolist() == [1.5, 0.5]


@pytest.mark.parametrize("grid, match", [
    ({}, "non-empty mapping"),
    ({"a": []}, "non-empty 1-D"),
    ({"a": [[1, 2], [3, 4]]}, "non-empty 1-D"),
    ({"error": [1]}, "clashes"),
    ({"not a name": [1]}, "identifier"),
    ({"a": [1.0, math.nan]}, "non-finite"),
])
def test_bad_grids_raise_model_error_naming_the_parameter(grid, match):
    with pytest.raises(ModelError, match=match):
        Grid(grid)


# ---------------------------------------------------------------------------------------------------- serial

def test_serial_sweep_table_grid_columns_first():
    df = mb.sweep(square, {"x": [1, 2, 3], "y": [0.0, 0.5]}, scheduler="serial", progress=False)
    assert list(df.columns) == ["x", "y", "sq", "neg", "error"]
    exp = expected_square([1, 2, 3], [0.0, 0.5])
    assert np.array_equal(df[["x", "y", "sq", "neg"]].to_numpy(), exp.to_numpy())
    assert df.attrs["computed"] == 6


def test_failing_points_are_recorded_and_the_sweep_goes_on():
    df = mb.sweep(flaky, {"x": range(6)}, scheduler="serial", progress=False)
    assert len(df) == 6
    assert df.loc[3, "error"] == "ValueError: x = 3 is not allowed" and math.isnan(df.loc[3, "sq"])
    assert df.loc[4, "error"] is None and math.isnan(df.loc[4, "sq"])        # None -> NaN, not an error
    assert df["error"].notna().sum() == 1 and df.loc[5, "sq"] == 25.0


def test_outputs_that_are_not_numbers_are_errors_of_their_point():
    df = mb.sweep(sweep_points.bad_value, {"x": [0, 1, 2]}, scheduler="serial", progress=False)
    assert "expected a real number" in df.loc[1, "error"] and df.loc[2, "v"] == 2.0
    df = mb.sweep(sweep_points.not_a_dict, {"x": [0]}, scheduler="serial", progress=False)
    assert "expected a dict of numbers" in df.loc[0, "error"]


def test_on_error_raise_raises_the_points_exception_and_keeps_the_finished(tmp_path):
    out = tmp_path / "t.csv"
    with pytest.raises(ValueError, match="x = 3") as info:
        mb.sweep(flaky, {"x": range(6)}, scheduler="serial", out=out, on_error="raise", chunk_size=1,
                 progress=False)
    assert any("point 3" in n and "x=3" in n for n in getattr(info.value, "__notes__", ["point 3: x=3"]))
    kept = pd.read_csv(out)
    assert sorted(kept["point"]) == [0, 1, 2, 3]     # the failing point is recorded with its message


def test_unpicklable_functions_and_bad_arguments_raise_model_error(tmp_path):
    def nested(x):
        return {"x": x}

    for fn in (lambda x: {"x": x}, nested):
        with pytest.raises(ModelError, match="module level"):
            mb.sweep(fn, {"x": [1]}, scheduler="serial", progress=False)
    with pytest.raises(ModelError, match="resume=True needs"):
        mb.sweep(square, {"x": [1]}, resume=True)
    with pytest.raises(ModelError, match="expected .parquet or .csv"):
        mb.sweep(square, {"x": [1]}, out=tmp_path / "t.xlsx")
    with pytest.raises(ModelError, match="not an address"):
        mb.sweep(square, {"x": [1]}, scheduler="somewhere")
    with pytest.raises(ModelError, match="on_error"):
        mb.sweep(square, {"x": [1]}, on_error="ignore")
    # a partial of a module-level function is fine
    df = mb.sweep(functools.partial(square, y=1.0), {"x": [2]}, scheduler="serial", progress=False)
    assert df.loc[0, "sq"] == 5.0


def test_import_multibody_does_not_import_pandas_or_dask():
    code = ("import sys, multibody; "
            "bad = [m for m in ('pandas', 'dask', 'distributed', 'pyarrow') if m in sys.modules]; "
            "assert not bad, bad; assert callable(multibody.sweep)")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=SRC))


# ---------------------------------------------------------------------------------------------------- resume

@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_keyboard_interrupt_keeps_the_finished_points_and_resume_runs_only_the_rest(tmp_path, log, monkeypatch,
                                                                                   suffix):
    out = tmp_path / f"t{suffix}"
    grid = {"x": range(10), "y": [7]}
    monkeypatch.setenv("SWEEP_STOP_AT", "5")
    with pytest.raises(KeyboardInterrupt):
        mb.sweep(logged, grid, scheduler="serial", out=out, chunk_size=1, progress=False)
    assert not os.path.exists(str(out) + ".parts")          # gathered into the one table
    kept = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert sorted(kept["point"]) == [0, 1, 2, 3, 4]          # every point finished before the interruption
    monkeypatch.delenv("SWEEP_STOP_AT")
    for f in os.listdir(log):
        os.remove(os.path.join(log, f))
    df = mb.sweep(logged, grid, scheduler="serial", out=out, resume=True, progress=False)
    again, _ = calls(log)
    assert set(again) == {(x, 7) for x in range(5, 10)} and set(again.values()) == {1}
    assert df.attrs["computed"] == 5
    check_complete(df, 10, lambda r: r.x + 7000)
    on_disk = pd.read_csv(out) if suffix == ".csv" else pd.read_parquet(out)
    assert sorted(on_disk["point"]) == list(range(10))


def test_resume_after_the_sweeping_process_is_killed(tmp_path, log):
    """SIGKILL the process running the sweep (no chance to clean up); resume computes exactly the missing points."""
    out = str(tmp_path / "t.parquet")
    n = 80
    script = ("import sys, multibody as mb, sweep_points\n"
              "if __name__ == '__main__':\n"
              f"    mb.sweep(sweep_points.logged, {{'x': range({n})}}, scheduler='serial', out=sys.argv[1],\n"
              "             chunk_size=1, progress=False)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, TESTS]), SWEEP_SLEEP="0.04")
    proc = subprocess.Popen([sys.executable, "-c", script, out], env=env)
    parts = out + ".parts"
    try:
        deadline = time.monotonic() + HANG_GUARD
        while proc.poll() is None:
            if os.path.isdir(parts) and len([f for f in os.listdir(parts) if f.endswith(".parquet")]) >= 2:
                break
            assert time.monotonic() < deadline, f"no two points written within {HANG_GUARD} s"
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert not os.path.exists(out)                            # killed: the parts were never gathered
    before = pd.concat([pd.read_parquet(os.path.join(parts, f)) for f in os.listdir(parts)
                        if f.endswith(".parquet")])
    done = set(before["point"])
    assert 0 < len(done) < n and len(before) == len(done)
    for f in os.listdir(log):
        os.remove(os.path.join(log, f))
    df = mb.sweep(logged, {"x": range(n)}, scheduler="serial", out=out, resume=True, progress=False)
    again, _ = calls(log)
    assert {x for x, _ in again} == set(range(n)) - done and set(again.values()) == {1}
    check_complete(df, n, lambda r: r.x)
    assert not os.path.exists(parts) and sorted(pd.read_parquet(out)["point"]) == list(range(n))


def test_resume_drops_a_line_cut_short_and_rejects_another_grid(tmp_path, log):
    out = tmp_path / "t.csv"
    mb.sweep(logged, {"x": range(4)}, scheduler="serial", out=out, progress=False)
    text = out.read_text().splitlines(keepends=True)
    out.write_text("".join(text[:-1]) + text[-1][:5])        # the last row cut in the middle
    df = mb.sweep(logged, {"x": range(4)}, scheduler="serial", out=out, resume=True, progress=False)
    assert df.attrs["computed"] == 1
    check_complete(df, 4, lambda r: r.x)
    with pytest.raises(ModelError, match="but the grid has x=10"):
        mb.sweep(logged, {"x": [0, 10, 20, 30]}, scheduler="serial", out=out, resume=True, progress=False)


# ---------------------------------------------------------------------------------------------------- processes

def test_local_processes_with_a_worker_killed_mid_sweep(tmp_path, log, monkeypatch):
    """The default backend: 2 spawned processes; one is killed, the pool restarts, no point is lost or doubled."""
    monkeypatch.setenv("SWEEP_SLEEP", "0.03")
    killed = _killer(log, after=6)
    df = mb.sweep(logged, {"x": range(30), "y": [0, 1]}, workers=2, chunk_size=2, out=tmp_path / "t.parquet",
                  progress=False)
    killed.join()
    assert killed.pid is not None
    check_complete(df, 60, lambda r: r.x + 1000 * r.y)
    assert df.attrs["computed"] == 60


def _killer(log, after):
    """A thread that SIGKILLs the worker process (not this one) that ran the first points, once ``after``
    points are logged."""
    def run():
        deadline = time.monotonic() + HANG_GUARD
        while time.monotonic() < deadline:
            counts, pids = calls(log)
            pids.discard(os.getpid())
            if sum(counts.values()) >= after and pids:
                t.pid = min(pids)
                os.kill(t.pid, signal.SIGKILL)
                return
            time.sleep(0.01)

    t = threading.Thread(target=run, daemon=True)
    t.pid = None
    t.start()
    return t


# ---------------------------------------------------------------------------------------------------- Dask

@pytest.fixture(scope="module")
def threads_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0") as c:
        yield c


def test_dask_client_address_and_cluster_give_the_serial_table(threads_cluster, tmp_path):
    import distributed

    grid = {"x": np.linspace(-1.0, 1.0, 7), "y": [0.0, 2.0]}
    ref = mb.sweep(square, grid, scheduler="serial", progress=False)
    with distributed.Client(threads_cluster) as client:
        by_client = mb.sweep(square, grid, scheduler=client, progress=False)
        assert client.status == "running"                 # a client passed in is left open
    by_address = mb.sweep(square, grid, scheduler=threads_cluster.scheduler_address, out=tmp_path / "t.csv",
                          progress=False)
    by_cluster = mb.sweep(flaky, {"x": range(6)}, scheduler=threads_cluster, progress=False)
    pd.testing.assert_frame_equal(by_client, ref, check_like=False)
    pd.testing.assert_frame_equal(by_address, ref)
    assert by_cluster.loc[3, "error"] == "ValueError: x = 3 is not allowed"


def test_dask_local_cluster_with_a_worker_killed_mid_sweep(tmp_path, log, monkeypatch):
    """2 worker processes; one is killed while it runs points: the scheduler reruns its tasks, and every point is
    in the table once."""
    distributed = pytest.importorskip("distributed")
    monkeypatch.setenv("SWEEP_SLEEP", "0.03")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c:
        killed = _killer(log, after=6)
        df = mb.sweep(logged, {"x": range(30), "y": [0, 1]}, scheduler=c.scheduler_address, chunk_size=2,
                      out=tmp_path / "t.parquet", progress=False)
        killed.join()
    assert killed.pid is not None
    check_complete(df, 60, lambda r: r.x + 1000 * r.y)
    assert sorted(pd.read_parquet(tmp_path / "t.parquet")["point"]) == list(range(60))


# ---------------------------------------------------------------------------------------------------- studies

def test_bicycle_stability_map_points():
    """The benchmark point reproduces seed 003, Table 2 (15 digits; critical_speeds solves to full precision);
    negative trail has no weave or capsize speed (NaN); lam beyond pi/2 is an invalid bicycle (recorded)."""
    from multibody.parallel.studies import bicycle_stability

    df = mb.sweep(bicycle_stability, {"c": [0.08, -0.05], "lam": [math.pi / 10, 1.6]}, scheduler="serial",
                  progress=False)
    assert abs(df.loc[0, "v_w"] - 4.29238253634111) < 1e-12 and abs(df.loc[0, "v_c"] - 6.02426201538837) < 1e-12
    assert df.loc[0, "stable"] == 1.0
    assert math.isnan(df.loc[2, "v_w"]) and math.isnan(df.loc[2, "v_c"]) and df.loc[2, "stable"] == 0.0
    for i in (1, 3):
        assert df.loc[i, "error"].startswith("ModelError: bicycle parameter 'lam' = 1.6 is invalid")


def test_hoop_turning_point_of_seed_000():
    """From x_a = -0.9 at 0.3 m/s the hoop turns back at t = 1.57 (seed 000, Sec. 4, Fig. 4's consistent motion,
    printed to 0.01: tolerance 0.005). The residual bound: DOP853 at rtol 1e-8 keeps every |f_i| at the
    integrator's error, orders below 1e-6."""
    from multibody.parallel.studies import hoop_monte_carlo, hoop_turning

    out = hoop_turning(-0.9, 0.3, t_end=1.8)
    assert abs(out["t_turn"] - 1.57) < 0.005 and out["max_residual"] < 1e-6
    assert -0.9 < out["x_turn"] < 1.2
    a, b = hoop_monte_carlo(3, t_end=0.05), hoop_monte_carlo(3, t_end=0.05)
    assert a["x0"] == b["x0"] and a["speed"] == b["speed"]    # a sample is reproducible


def test_stability_map_plot(tmp_path):
    from multibody.viz.sweep import plot_stability_map

    c, lam = np.linspace(0.0, 0.1, 3), np.array([0.3, 0.5])
    df = pd.DataFrame([{"c": a, "lam": b, "v_w": 4 + a, "v_c": 6 - b, "stable": 1.0, "error": None}
                       for a in c for b in lam])
    path = plot_stability_map(df, tmp_path / "map.png")
    assert os.path.getsize(path) > 1000
