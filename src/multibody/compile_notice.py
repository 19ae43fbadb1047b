"""A one-line notice on stderr while numba compiles the package's code for more than two seconds.

The compiled code of a wheel built on this machine is loaded from numba's caches (``multibody.warmup``); what
was not compiled then (another CPU, another numba, a new kind of call) compiles on first use, which can take
seconds to a minute. Instead of a silent pause, a listener of numba's ``"numba:compile"`` events (sent only when a
function is compiled, not when it is loaded from the cache) prints, once a compilation of the package's code has
run for :data:`DELAY` seconds::

    multibody: compiling aba_kernel for this machine (first use; cached afterwards)... 7 s, 12 functions

On a terminal the line counts on every second and ends with the total; elsewhere (a log) it is printed once, with
a line every 30 s while it lasts, and the total at the end. ``MULTIBODY_COMPILE_NOTICE=0`` turns it off.
"""
import os
import sys
import threading
import time

#: seconds of compilation before the notice shows
DELAY = 2.0


class _Notice:
    """The state of the compilation under way (numba compiles under one global lock: one at a time)."""

    def __init__(self, stream, watch=True):
        self.stream = stream
        self.watch = watch        # False: no thread, :meth:`tick` is called by the owner
        self.lock = threading.Lock()
        self.depth = 0
        self.name = None          # the outermost function being compiled, when it is the package's
        self.start = 0.0
        self.count = 0            # functions compiled since the outermost one started
        self.shown = 0.0          # when the notice was last written (0: not yet)
        self.wake = threading.Event()
        self.thread = None

    # numba's listener interface (numba.core.event.Listener)
    def on_start(self, event):
        with self.lock:
            self.depth += 1
            if self.depth == 1:
                func = getattr(event.data.get("dispatcher"), "py_func", None)
                module = getattr(func, "__module__", "") or ""
                ours = module.startswith(("multibody", "_mb_"))
                self.name = getattr(func, "__name__", "?") if ours else None
                self.start, self.count, self.shown = time.perf_counter(), 0, 0.0
                if ours and self.watch:
                    self._watch()

    def on_end(self, event):
        with self.lock:
            self.depth -= 1
            self.count += 1
            if self.depth == 0 and self.name is not None:
                if self.shown:
                    self._write(f"{self._line()} done", end=True)
                self.name = None

    def _line(self, now=None):
        elapsed = (time.perf_counter() if now is None else now) - self.start
        return (f"multibody: compiling {self.name} for this machine (first use; cached afterwards)... "
                f"{elapsed:.0f} s, {self.count} function{'s' * (self.count != 1)}")

    def _write(self, text, end=False):
        tty = getattr(self.stream, "isatty", lambda: False)()
        try:
            if tty:
                self.stream.write("\r\033[K" + text + ("\n" if end else ""))
            else:
                self.stream.write(text + "\n")
            self.stream.flush()
        except (OSError, ValueError):
            pass
        self.shown = time.perf_counter()

    def _watch(self):
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="multibody-compile-notice", daemon=True)
            self.thread.start()
        self.wake.set()

    def _run(self):
        while True:
            self.wake.wait()
            time.sleep(0.25)
            self.tick(time.perf_counter())

    def tick(self, now):
        """Write the notice when due at time ``now`` (``time.perf_counter``); False when nothing is compiling."""
        with self.lock:
            if self.name is None:
                self.wake.clear()      # under the lock: on_start sets it again under the same lock
                return False
            tty = getattr(self.stream, "isatty", lambda: False)()
            if now - self.start >= DELAY and (not self.shown or now - self.shown >= (1.0 if tty else 30.0)):
                self._write(self._line(now))
            return True


_INSTALLED = []


def listener(stream, watch=True):
    """A new notice writing to ``stream``, as a numba event listener (not registered)."""
    from numba.core import event

    return type("CompileNotice", (_Notice, event.Listener), {})(stream, watch)


def install(stream=None):
    """Register the notice with numba (once per process; not when ``MULTIBODY_COMPILE_NOTICE=0``)."""
    if _INSTALLED or os.environ.get("MULTIBODY_COMPILE_NOTICE", "1") == "0":
        return
    from numba.core import event

    notice = listener(stream or sys.stderr)
    event.register("numba:compile", notice)
    _INSTALLED.append(notice)
