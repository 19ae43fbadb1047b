"""Every public entry point that writes a file refuses a bad place with one ``multibody.errors`` line naming the
file — a folder, a folder that cannot be made (a file in its way) — and one that passes keywords on refuses a
keyword it does not take, naming it (``multibody.files``: ``writable_file``, ``check_options``). Nothing is
written, and no bare ``IsADirectoryError``, ``FileExistsError`` or ``TypeError`` of an inner function escapes.
The views and the model and parameter files make a missing folder; a Result file does not (its folder must exist,
as a checkpoint's: ``tests/test_robust_results.py``).
"""
import numpy as np
import pytest

import multibody as mb
from multibody.errors import ModelError, ResultFileError
from multibody.systems.pendulums import simple_pendulum


@pytest.fixture(scope="module")
def run():
    model = simple_pendulum(length=1.0, mass=1.0, g=9.81)
    return model, mb.simulate(model, [0.1], [0.0], 0.5, n_out=5)


def writers(model, res):
    """name -> write(path) of every public writer, each given a file name of its own format."""
    from multibody.systems import bicycle
    from multibody.viz import plot_result
    from multibody.viz.switches import plot_switches

    return {
        "Result.save .npz": (lambda p: res.save(p), "r.npz"),
        "Result.save .csv": (lambda p: res.save(p), "r.csv"),
        "Result.to_html": (lambda p: res.to_html(p), "r.html"),
        "Result.plot": (lambda p: res.plot(path=p), "r.png"),
        "plot_result": (lambda p: plot_result(res, path=p), "r.png"),
        "Result.animate": (lambda p: res.animate(p, frames=2), "r.gif"),
        "save_model": (lambda p: mb.save_model(model, p), "m.yaml"),
        "plot_switches": (lambda p: plot_switches(res, p), "s.png"),
        "save_parameters": (lambda p: bicycle.save_parameters(bicycle.benchmark_parameters(), p), "b.yaml"),
    }


NAMES = ["Result.save .npz", "Result.save .csv", "Result.to_html", "Result.plot", "plot_result", "Result.animate",
         "save_model", "plot_switches", "save_parameters"]


@pytest.mark.parametrize("name", NAMES)
def test_a_writer_refuses_a_folder_and_a_blocked_folder(name, run, tmp_path):
    write, filename = writers(*run)[name]
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(ResultFileError, match=f"'{folder}' is a folder; give the name of a file in it"):
        write(folder)
    blocker = tmp_path / "afile"
    blocker.write_text("in the way")
    with pytest.raises(ResultFileError, match=f"'{blocker}' is a file, not a folder|Not a directory"):
        write(blocker / "sub" / filename)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "folder"] and not any(folder.iterdir())
    if name.startswith("Result.save"):
        with pytest.raises(ResultFileError, match="cannot be written: No such file or directory"):
            write(tmp_path / "made" / filename)
        return
    written = write(tmp_path / "made" / filename)         # a missing folder is made
    assert (tmp_path / "made" / filename).is_file() and written is not None


@pytest.mark.parametrize("call", ["to_html", "show", "animate"])
def test_an_option_that_is_not_taken_is_named(call, run, tmp_path):
    _, res = run
    f = {"to_html": lambda: res.to_html(tmp_path / "x.html", bogus=1),
         "show": lambda: res.show(bogus=1),
         "animate": lambda: res.animate(tmp_path / "x.gif", bogus=1)}[call]
    with pytest.raises(ModelError, match="no option 'bogus'; it takes ") as err:
        f()
    assert err.value.element == "bogus" and not any(tmp_path.iterdir())


def test_a_figure_of_an_unknown_format_is_refused(run, tmp_path):
    _, res = run
    with pytest.raises(ModelError, match=r"its suffix must name an image format \(.*\.png.*\)"):
        res.plot(path=tmp_path / "r.xyz")
    res.plot(path=tmp_path / "plain")        # no suffix: .png added, as matplotlib does
    assert (tmp_path / "plain.png").is_file()
    assert np.isfinite(res.q).all()
