"""Nothing computed is lost, every bad file is one clear error (issue 20's data-loss and bare-error classes).

Result files (``.npz``, ``.csv``, ``.h5``) and checkpoints that are missing, folders, truncated, foreign or damaged
are a :class:`~multibody.errors.ResultFileError` naming the file (it is a ``ModelError`` and an ``OSError``, as the
errors it replaces were); places that cannot be written are refused before a run starts (checkpoints,
``multibody run --out``); a checkpoint that fails in the middle of a run, or a result that cannot be written at its
end, keeps what was computed; a hand-edited checkpoint whose fields disagree is refused by ``resume``, naming the
field. The machine's root user may write anywhere, so places that cannot be written are made of files standing
where a folder should be (and ``/proc``). Every test runs under the hang guard of ``test_robust_simulate``.
"""
import json
import os
import shutil

import numpy as np
import pytest

import multibody as mb
from multibody.errors import IntegrationError, ModelError, ResultFileError
from multibody.io import checkpoints as ckpt
from multibody.io import load_result, save_result
from multibody.systems.pendulums import simple_pendulum, triple_pendulum_seed001
from multibody.viz import plot_result
from test_robust_simulate import hang_guard  # noqa: F401  (autouse: every test here is guarded too)

SUFFIXES = [".npz", ".csv", ".h5"]


@pytest.fixture(scope="module")
def result():
    return mb.simulate(triple_pendulum_seed001(), [0.5, -0.3, 0.2], None, 0.2, method="RK4", h=1e-2)


def read(path):
    if path.suffix == ".h5":
        pytest.importorskip("h5py")
    return load_result(path)


def one_line(exc, path):
    text = str(exc)
    assert "\n" not in text and str(path) in text, text
    assert isinstance(exc, ModelError) and isinstance(exc, OSError)


# ---- reading ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_missing_folder_and_garbage_files(tmp_path, suffix):
    path = tmp_path / f"r{suffix}"
    for make, what in ((lambda: None, "does not exist"), (lambda: path.mkdir(), "is a folder"),
                       (lambda: path.write_bytes(b""), "is not a "),
                       (lambda: path.write_bytes(b"\xff\xfe\x00 garbage \x00" * 20), "is not a "),
                       (lambda: path.write_text("# {bad json\nt\n1\n"), "is not a ")):
        if path.is_dir():
            path.rmdir()
        elif path.exists():
            path.unlink()
        make()
        with pytest.raises(ResultFileError, match=what) as info:
            read(path)
        one_line(info.value, path)


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_truncated_files(tmp_path, result, suffix):
    """Every cut of a saved file (a copy interrupted, a disk that filled up) is one clear error, never a
    BadZipFile, EOFError, KeyError or a numpy ValueError."""
    if suffix == ".h5":
        pytest.importorskip("h5py")
    path = tmp_path / f"r{suffix}"
    save_result(result, path)
    data = path.read_bytes()
    for cut in (len(data) // 10, len(data) // 2, len(data) - 7):
        path.write_bytes(data[:cut])
        with pytest.raises(ResultFileError) as info:
            read(path)
        one_line(info.value, path)


def test_foreign_and_damaged_files(tmp_path, result):
    path = tmp_path / "r.npz"
    np.savez(path, a=np.zeros(3))
    with pytest.raises(ResultFileError, match="not a multibody Result file"):
        read(path)
    result.save(path)
    with np.load(path) as z:
        arrays = dict(z)
    for change, what in ((lambda a: a.pop("q"), "has no array 'q'"),
                         (lambda a: a.update(meta=np.array(json.dumps({"format": "multibody.Result"}))),
                          "has no list 'q_names'"),
                         (lambda a: a.update(meta=np.array("[1, 2]")), "not a multibody Result file"),
                         (lambda a: a.update(q=np.zeros((3, 3))), "'q' must have shape")):
        damaged = dict(arrays)
        change(damaged)
        np.savez(path, **damaged)
        with pytest.raises(ResultFileError, match=what) as info:
            read(path)
        one_line(info.value, path)
    csv = tmp_path / "r.csv"
    csv.write_text("a,b\n1,2\n")
    with pytest.raises(ResultFileError, match="no metadata line"):
        read(csv)
    result.save(csv)
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join(lines[:2] + [lines[2] + ",1.0"] + lines[3:]) + "\n")   # a row with a column too many
    with pytest.raises(ResultFileError):
        read(csv)
    csv.write_text("# {}\nt\n1\n")
    with pytest.raises(ResultFileError, match="not a multibody Result file"):
        read(csv)


def test_foreign_hdf5(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "r.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("t", data=np.zeros(3))
    with pytest.raises(ResultFileError, match="without the Result's metadata"):
        read(path)


# ---- writing ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("suffix", SUFFIXES)
def test_unwritable_places(tmp_path, result, suffix):
    if suffix == ".h5":
        pytest.importorskip("h5py")
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    folder = tmp_path / f"d{suffix}"
    folder.mkdir()
    for path in (blocker / f"r{suffix}", tmp_path / "missing" / f"r{suffix}", folder, f"/proc/r{suffix}"):
        with pytest.raises(ResultFileError) as info:
            save_result(result, path)
        one_line(info.value, path)
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_writes_replace_atomically_and_keep_the_permissions(tmp_path, result, suffix):
    if suffix == ".h5":
        pytest.importorskip("h5py")
    path = tmp_path / f"r{suffix}"
    save_result(result, path)
    os.chmod(path, 0o640)
    save_result(result, path)
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o640)
    assert np.array_equal(read(path).q, result.q)
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]    # no temporary file left


# ---- checkpoints ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(method="RK4", h=1e-3), dict(method="DOP853")], ids=["fixed", "adaptive"])
def test_checkpoint_place_checked_before_the_run(tmp_path, kw):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    for path in (tmp_path, blocker / "run.ckpt", tmp_path / "missing" / "run.ckpt", "/proc/run.ckpt"):
        with pytest.raises(ResultFileError) as info:
            mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, checkpoint=path, **kw)
        one_line(info.value, path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def vanishing_folder(monkeypatch, folder, after):
    """Make the checkpoint folder disappear after ``after`` checkpoints were written: the next write fails as on
    a lost disk, for real (the folder is gone)."""
    write = ckpt.Writer.write
    count = [0]

    def spy(self, *args, **kw):
        write(self, *args, **kw)
        count[0] += 1
        if count[0] == after:
            shutil.rmtree(folder)

    monkeypatch.setattr(ckpt.Writer, "write", spy)


@pytest.mark.parametrize("kw", [dict(method="RK4", h=1e-3, output_every=10), dict(method="DOP853", n_out=101)],
                         ids=["fixed", "adaptive"])
def test_checkpoint_failing_mid_run_keeps_what_was_computed(tmp_path, monkeypatch, kw):
    """The checkpoint's folder is lost after three checkpoints (t = 0, 0.1, 0.2): the run fails with an
    IntegrationError whose result is the run so far, equal to the uninterrupted run up to there."""
    model = triple_pendulum_seed001()
    plain = mb.simulate(model, [0.5, -0.3, 0.2], None, 1.0, **kw)
    folder = tmp_path / "ckpts"
    folder.mkdir()
    vanishing_folder(monkeypatch, folder, 3)
    with pytest.raises(IntegrationError, match="checkpoint") as info:
        mb.simulate(model, [0.5, -0.3, 0.2], None, 1.0, checkpoint=folder / "run.ckpt", every=0.1, **kw)
    part = info.value.result
    assert part.info["status"] == "failed" and 0.2 <= part.t[-1] < 1.0
    n = len(part)
    assert np.array_equal(part.t, plain.t[:n]) and np.array_equal(part.q, plain.q[:n])


def edited(path, change):
    """Rewrite the checkpoint ``path`` with ``change(meta, arrays)`` applied (a hand edit)."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays["meta"]))
    change(meta, arrays)
    arrays["meta"] = np.array(json.dumps(meta))
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)


def midway(tmp_path, monkeypatch, **kw):
    """A checkpoint from the middle of a triple-pendulum run (copied when t first passes 0.5)."""
    write = ckpt.Writer.write
    mid = tmp_path / "mid.ckpt"

    def spy(self, t, *args, **kwargs):
        write(self, t, *args, **kwargs)
        if t >= 0.5 and not kwargs.get("finished") and not mid.exists():
            shutil.copy(self.path, mid)

    monkeypatch.setattr(ckpt.Writer, "write", spy)
    mb.simulate(triple_pendulum_seed001(), [0.5, -0.3, 0.2], None, 1.0, checkpoint=tmp_path / "run.ckpt",
                every=0.1, **kw)
    monkeypatch.undo()
    return mid


FIXED_EDITS = [
    ("t", lambda m, a: m.update(t=0.9)),                                     # step 500 at t = 0.9: a truncated run
    ("step", lambda m, a: m.update(step=5000)),
    ("t", lambda m, a: m.update(t=7.0)),
    ("x", lambda m, a: a.update(x=np.full_like(a["x"], np.nan))),
    ("x", lambda m, a: a.update(x=np.zeros(4))),
    ("out_t", lambda m, a: a.update(out_t=a["out_t"][::-1].copy())),
    ("out_t", lambda m, a: (a.update(out_t=a["out_t"][:-1].copy(), out_x=a["out_x"][:-1].copy()))),
    ("finished", lambda m, a: m.update(finished=True)),
    ("stats", lambda m, a: m.update(stats={"steps": -4})),
    ("h", lambda m, a: m["settings"].update(h=-1.0)),
    ("rtol", lambda m, a: m["settings"].update(rtol=0)),
    ("n_out", lambda m, a: m["settings"].update(n_out=1, output_every=None)),
    ("method", lambda m, a: m["settings"].update(method="RK5")),
]


@pytest.mark.parametrize("field, change", FIXED_EDITS, ids=[f"{f}-{k}" for k, (f, _) in enumerate(FIXED_EDITS)])
def test_resume_refuses_a_checkpoint_that_does_not_fit_fixed(tmp_path, monkeypatch, field, change):
    mid = midway(tmp_path, monkeypatch, method="RK4", h=1e-3, output_every=50)
    assert ckpt.read(mid).step == 500
    edited(mid, change)
    with pytest.raises(ResultFileError) as info:
        mb.resume(mid)
    assert info.value.element == f"checkpoint {field}", str(info.value)
    one_line(info.value, mid)


ADAPTIVE_EDITS = [  # (outputs: None every step, 21 at t_eval; field; edit)
    (None, "t", lambda m, a: m.update(t=5.0)),
    (None, "t", lambda m, a: m.update(t=m["t"] + 0.01)),         # no longer the time of the last output
    (21, "out_t", lambda m, a: m.update(t=m["t"] + 0.2)),         # past outputs the checkpoint does not hold
    (None, "step", lambda m, a: m.update(step=3)),
    (None, "out_t", lambda m, a: a.update(out_t=a["out_t"] + 1e-3)),
    (21, "out_t", lambda m, a: a.update(out_t=a["out_t"] * 0.9)),
    (None, "finished", lambda m, a: m.update(finished=True)),
    (21, "x", lambda m, a: a.update(x=np.full_like(a["x"], np.inf))),
]


@pytest.mark.parametrize("n_out, field, change", ADAPTIVE_EDITS,
                         ids=[f"{f}-{k}" for k, (_, f, _) in enumerate(ADAPTIVE_EDITS)])
def test_resume_refuses_a_checkpoint_that_does_not_fit_adaptive(tmp_path, monkeypatch, n_out, field, change):
    mid = midway(tmp_path, monkeypatch, method="DOP853", n_out=n_out)
    edited(mid, change)
    with pytest.raises(ResultFileError) as info:
        mb.resume(mid)
    assert info.value.element == f"checkpoint {field}", str(info.value)
    one_line(info.value, mid)


def test_resume_of_an_untouched_checkpoint_still_works(tmp_path, monkeypatch):
    mid = midway(tmp_path, monkeypatch, method="RK4", h=1e-3, output_every=50)
    plain = mb.simulate(triple_pendulum_seed001(), [0.5, -0.3, 0.2], None, 1.0, method="RK4", h=1e-3,
                        output_every=50)
    resumed = mb.resume(mid)
    assert np.array_equal(resumed.q, plain.q) and resumed.info["resumed_from"] == 0.5


# ---- multibody run --out --------------------------------------------------------------------------------------
def pendulum_file():
    from multibody import examples

    return str(examples.path("simple_pendulum"))


def test_run_checks_its_output_folder_first(tmp_path, monkeypatch, capsys):
    """An --out that is a file, or under one, fails at once with one line naming --out: the simulation is not
    run (nothing printed about it) and nothing is left behind."""
    from multibody.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("x")
    for out in ("file", "file/sub", "/proc/out"):
        assert main(["run", pendulum_file(), "--t-end", "0.5", "--out", out]) == 2
        captured = capsys.readouterr()
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1 and "--out" in lines[0] and "model '" not in captured.out, captured
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_run_writes_the_partial_result_of_a_failed_run(tmp_path, monkeypatch, capsys):
    from multibody.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.yaml").write_text("""
name: undefined effort
bodies: [{name: bob, mass: 1.0, com: [0, 0, -1.0]}]
joints: [{name: hinge, type: revolute, axis: [0, 1, 0], parent: ground, child: bob, effort: "sqrt(0.5 - t)"}]
simulation: {t_end: 1.0}
""")
    with np.errstate(invalid="ignore"):
        assert main(["run", "bad.yaml", "--out", "out"]) == 2
    err = capsys.readouterr().err
    assert "v 'hinge.angle' = nan" in err and "the partial result up to t = " in err
    part = mb.Result.load(tmp_path / "out" / "result.npz")
    assert part.info["status"] == "failed" and 0.4 < part.t[-1] <= 0.5


def test_run_keeps_a_result_it_cannot_write(tmp_path, monkeypatch, capsys):
    """The folder checked before the run is replaced by a file while it runs: the result is kept in a new
    temporary folder and the message says where."""
    from multibody.cli import main
    from multibody.cli import run as run_cmd

    monkeypatch.chdir(tmp_path)
    real = run_cmd.simulate_file

    def then_block(*args, **kw):
        res = real(*args, **kw)
        shutil.rmtree(tmp_path / "out")
        (tmp_path / "out").write_text("in the way")
        return res

    monkeypatch.setattr(run_cmd, "simulate_file", then_block)
    assert main(["run", pendulum_file(), "--t-end", "0.5", "--out", "out"]) == 2
    err = capsys.readouterr().err.strip()
    assert "the result is kept in" in err and len(err.splitlines()) == 1
    kept = err.rsplit("the result is kept in ", 1)[1]
    try:
        assert mb.Result.load(kept).t[-1] == 0.5
    finally:
        shutil.rmtree(os.path.dirname(kept))


def test_too_many_checkpoints_and_plot_arguments(tmp_path, result):
    """A checkpoint every microsecond of a 1-s run would rewrite the outputs a million times: refused, naming
    every; a plot of a coordinate that is not there, or into a place that cannot be written, is one clear error."""
    with pytest.raises(ModelError, match="more than 10000") as info:
        mb.simulate(simple_pendulum(), [0.1], [0.0], 1.0, checkpoint=tmp_path / "run.ckpt", every=1e-6)
    assert info.value.element == "every" and not list(tmp_path.iterdir())
    for coords in ([7], ["q[7]"], ["v[x]"], [True], ["nothing"]):
        with pytest.raises(ModelError, match="coordinate .* is unknown") as info:
            plot_result(result, coords=coords)
        assert info.value.element == "coords"
    with pytest.raises(ResultFileError) as info:
        plot_result(result, path="/proc/plot.png")
    one_line(info.value, "/proc/plot.png")
