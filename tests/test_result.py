"""Result: container checks, NPZ/CSV round trips, energy drift and the PNG plot."""
import numpy as np
import pytest

from multibody.errors import ResultFileError
from multibody.result import Result
from multibody.viz import plot_result


def make_result(n=50):
    t = np.linspace(0.0, 1.0, n)
    q = np.stack([np.sin(t), np.cos(t), t ** 2], axis=1)
    v = np.stack([np.cos(t), -np.sin(t)], axis=1)
    T = 0.5 * (v ** 2).sum(axis=1)
    V = -T + 1e-3 * t  # total energy drifts linearly by 1e-3
    return Result(t, q, v, energy={"kinetic": T, "potential": V},
                  residuals={"loop": 1e-9 * np.sin(7 * t), "contact": np.stack([t, -t], axis=1) * 1e-8},
                  reactions={"hinge A": np.stack([t, 2 * t, 3 * t], axis=1)},
                  info={"method": "DOP853", "steps": 17, "cpu_seconds": 0.25, "status": "success",
                        "rtol": np.float64(1e-12)},
                  q_names=["x", "y", "theta"], v_names=["vx", "vy"])


def assert_same(a, b):
    np.testing.assert_array_equal(a.t, b.t)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.v, b.v)
    assert a.energy.keys() == b.energy.keys()
    for k in a.energy:
        np.testing.assert_array_equal(a.energy[k], b.energy[k])
    assert a.residuals.keys() == b.residuals.keys() and a.reactions.keys() == b.reactions.keys()
    for k in a.residuals:
        np.testing.assert_array_equal(a.residuals[k], b.residuals[k])
    for k in a.reactions:
        np.testing.assert_array_equal(a.reactions[k], b.reactions[k])
    assert a.q_names == b.q_names and a.v_names == b.v_names
    assert b.info["method"] == "DOP853" and b.info["steps"] == 17 and b.info["rtol"] == 1e-12


@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_round_trip(tmp_path, suffix):
    r = make_result()
    path = r.save(tmp_path / f"run{suffix}")
    assert_same(r, Result.load(path))


def test_total_energy_and_drift():
    r = make_result()
    np.testing.assert_allclose(r.energy["total"], 1e-3 * r.t, rtol=0, atol=1e-15)
    assert abs(r.energy_drift(relative=False) - 1e-3) < 1e-15
    # relative to max(|E0|, max T) = max T = 0.5
    assert abs(r.energy_drift() - 2e-3) < 1e-14
    with pytest.raises(ValueError, match="energies"):
        Result(r.t, r.q, r.v).energy_drift()


def test_shapes_checked():
    t = np.linspace(0, 1, 5)
    with pytest.raises(ValueError, match="q"):
        Result(t, np.zeros((4, 2)), np.zeros((5, 2)))
    with pytest.raises(ValueError, match="residual 'c'"):
        Result(t, np.zeros((5, 2)), np.zeros((5, 2)), residuals={"c": np.zeros(3)})
    r = Result(t, np.zeros(5), np.zeros(5))  # a single coordinate as a 1-D series
    assert r.q.shape == (5, 1) and r.x.shape == (5, 2)


def test_plot_png(tmp_path):
    import matplotlib.image as mpimg

    r = make_result()
    path = tmp_path / "run.png"
    fig = plot_result(r, coords=["x", 2, "v[1]"], path=path)
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 300 and img.shape[1] > 300
    assert len(fig.axes) == 3  # coordinates, energy, residuals
    # something was drawn: not a blank image
    assert img[..., :3].std() > 0.05
    with pytest.raises(ValueError, match="unknown"):
        plot_result(r, coords=["nope"])
    # Result.plot hands the same arguments to plot_result (the view module looked up by name)
    again = r.plot(coords=["x", 2, "v[1]"], path=tmp_path / "method.png")
    assert [a.get_ylabel() for a in again.axes] == [a.get_ylabel() for a in fig.axes]
    assert mpimg.imread(tmp_path / "method.png").shape == img.shape


def test_bad_suffix(tmp_path):
    with pytest.raises(ValueError, match="npz or .csv"):
        make_result().save(tmp_path / "x.txt")
    for suffix in (".h5", ".hdf5"):      # HDF5 is written and read by multibody.io, which the message names
        with pytest.raises(ResultFileError, match=r"must be .npz or .csv \(HDF5 files: multibody.io.save_"):
            make_result().save(tmp_path / f"x{suffix}")
        with pytest.raises(ResultFileError, match=r"must be .npz or .csv \(HDF5 files: multibody.io.load_"):
            Result.load(tmp_path / f"x{suffix}")
