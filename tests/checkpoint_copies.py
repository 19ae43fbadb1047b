"""A checkpoint from the middle of a run, taken deterministically: the tests of resuming (test_checkpoint.py, the
runs across switches) copy it while the run itself goes on to its end."""
import os
import shutil

from multibody.io import checkpoints as ckpt


def copy_at(monkeypatch, target, when):
    """Make the first checkpoint written with ``when(t, step)`` true (not the final one) also be copied to
    ``target``."""
    write = ckpt.Writer.write

    def spy(self, t, step, x, *args, **kw):
        write(self, t, step, x, *args, **kw)
        if not kw.get("finished") and when(t, step) and not os.path.exists(target):
            shutil.copy(self.path, target)

    monkeypatch.setattr(ckpt.Writer, "write", spy)
