"""Checkpoints of long runs: ``simulate(..., checkpoint=, every=)`` and ``mb.resume`` (multibody/io/checkpoints.py)."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import multibody as mb
from checkpoint_copies import copy_at
from multibody.io import checkpoints as ckpt
from multibody.systems.pendulums import triple_pendulum_seed001

Q0 = np.array([0.5, -0.3, 0.2])


def same(a, b):
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("t", "q", "v")) and \
        np.array_equal(a.energy["total"], b.energy["total"])


def test_fixed_step_resume_is_bit_identical(tmp_path, monkeypatch):
    """RK4 on the seed 001 triple pendulum: a run with checkpoints gives the run without them; resumed from the
    checkpoint at step 2000 (t = 2) it gives it again, bit for bit; a finished run's checkpoint gives it at once."""
    model = triple_pendulum_seed001()
    kw = dict(method="RK4", h=1e-3, output_every=7)   # outputs off the checkpoint steps too
    plain = mb.simulate(model, Q0, None, 5.0, **kw)
    path, mid = tmp_path / "run.ckpt", tmp_path / "mid.ckpt"
    copy_at(monkeypatch, mid, lambda t, step: step == 2000)
    full = mb.simulate(model, Q0, None, 5.0, checkpoint=path, every=0.5, **kw)
    assert same(plain, full) and full.info["checkpoint"] == str(path)
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []   # no temporary file left
    c = ckpt.read(mid)
    assert c.step == 2000 and c.t == 2.0 and not c.finished and c.out_t[-1] <= 2.0
    resumed = mb.resume(mid)
    assert same(plain, resumed) and resumed.info["resumed_from"] == 2.0 and resumed.info["steps"] == 5000
    assert ckpt.read(mid).finished                   # the resumed run went on writing to its file
    again = mb.resume(path)
    assert ckpt.read(path).finished and same(plain, again)


def test_sigkill_then_resume(tmp_path):
    """A run killed with SIGKILL while it writes checkpoints resumes from its file to the uninterrupted result."""
    path = tmp_path / "run.ckpt"
    args = "triple_pendulum_seed001(), [0.5, -0.3, 0.2], None, 60.0, method='RK4', h=1e-4, output_every=100"
    # the same run, short, in this process first: its compiled loop is then in the session's cache
    # ($MULTIBODY_CACHE, tests/conftest.py) and the subprocess loads it instead of compiling it
    mb.simulate(triple_pendulum_seed001(), Q0, None, 0.01, method="RK4", h=1e-4, output_every=100,
                checkpoint=tmp_path / "warm.ckpt", every=0.005, progress=False)
    code = ("import multibody as mb\nfrom multibody.systems.pendulums import triple_pendulum_seed001\n"
            f"mb.simulate({args}, checkpoint={str(path)!r}, every=0.5, progress=False)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 600.0     # a guard against a hang, not a speed requirement
        while True:
            assert proc.poll() is None, f"the run ended before it was killed: {proc.stderr.read().decode()}"
            assert time.monotonic() < deadline, "no checkpoint past t = 5 within 600 s"
            if path.exists() and ckpt.read(path).t >= 5.0:
                break
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    c = ckpt.read(path)
    assert not c.finished and 5.0 <= c.t < 60.0
    resumed = mb.resume(path)
    plain = mb.simulate(triple_pendulum_seed001(), Q0, None, 60.0, method="RK4", h=1e-4, output_every=100, progress=False)
    assert same(plain, resumed)
    assert np.array_equal(resumed.q[-1], plain.q[-1]) and resumed.t[-1] == 60.0


def test_adaptive_resume_within_tolerance(tmp_path, monkeypatch):
    """DOP853 restarted at a checkpoint takes other steps after it: the result equals the uninterrupted one to
    the tolerance, not bit for bit. Both runs have local errors of order rtol per step (relative to the state)
    and take ~50 steps here, and the errors propagate through the chaotic triple pendulum; 100 rtol |x| bounds
    the difference with a margin (measured about 2e-11 for rtol = 1e-10)."""
    model = triple_pendulum_seed001()
    rtol = 1e-10
    kw = dict(method="DOP853", rtol=rtol, atol=1e-12, n_out=51)
    plain = mb.simulate(model, Q0, None, 5.0, **kw)
    mid = tmp_path / "mid.ckpt"
    copy_at(monkeypatch, mid, lambda t, step: t >= 2.0)
    full = mb.simulate(model, Q0, None, 5.0, checkpoint=tmp_path / "run.ckpt", every=0.5, **kw)
    assert same(plain, full)                 # writing checkpoints does not change the run
    t_ck = ckpt.read(mid).t
    assert 2.0 <= t_ck < 5.0
    resumed = mb.resume(mid)
    assert np.array_equal(resumed.t, plain.t) and resumed.info["resumed_from"] == t_ck
    bound = 100 * rtol * max(1.0, np.abs(plain.x).max())
    diff = np.abs(resumed.x - plain.x).max()
    assert diff <= bound, (diff, bound)


def test_refusals(tmp_path):
    model = triple_pendulum_seed001()
    path = tmp_path / "run.ckpt"
    with pytest.raises(mb.ModelError, match="tau is a Python callable"):
        mb.simulate(model, Q0, None, 1.0, method="RK4", h=1e-3, tau=lambda t, q, v: np.zeros(3), checkpoint=path)
    b = mb.ModelBuilder()
    b.add_body("rod", mass=1.0, com=(0, 0, -0.5), inertia=[[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.01]])
    b.add_joint("hinge", mb.Revolute(axis=(0, 1, 0)), parent="ground", child="rod")
    b.set_torque(lambda t, q, v: -0.1 * v)
    with pytest.raises(mb.ModelError, match="cannot be written to a checkpoint.*Python code"):
        mb.simulate(b.build(), [0.1], [0.0], 1.0, checkpoint=path)
    with pytest.raises(mb.ModelError, match="give checkpoint= too"):
        mb.simulate(model, Q0, None, 1.0, method="RK4", h=1e-3, every=0.1)
    assert not path.exists()
    with pytest.raises(mb.ModelError, match="does not exist"):
        mb.resume(path)
    path.write_bytes(b"PK\x03\x04 this is not a checkpoint" * 10)
    with pytest.raises(mb.ModelError, match="not a readable multibody checkpoint"):
        mb.resume(path)
    foreign = mb.simulate(model, Q0, None, 0.01, method="RK4", h=1e-3).save(tmp_path / "result.npz")
    with pytest.raises(mb.ModelError, match="not a multibody checkpoint"):
        mb.resume(foreign)
    mb.simulate(model, Q0, None, 0.01, method="RK4", h=1e-3, checkpoint=path)
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(str(arrays["meta"]))
    meta["version"] = ckpt.VERSION + 1
    arrays["meta"] = np.array(json.dumps(meta))
    with open(path, "wb") as fh:
        np.savez(fh, **arrays)
    with pytest.raises(mb.ModelError, match="newer multibody"):
        mb.resume(path)
