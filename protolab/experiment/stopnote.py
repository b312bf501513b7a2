"""Whether a stop (Ctrl-C, SIGTERM) was asked for in this command: one note that the signal handlers
write and the places that can stop read, and the deadline of a stop. The standard library only, so
the `protolab` entry point and every command can load it before any layer."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from types import ModuleType

BEFORE_EXIT: list[Callable[[], None]] = []  # what StopDeadline does before it ends the process

_requested = 0  # the signal of a stop asked for in this command (0: none)


def request_stop(signum: int) -> None:
    """Note that a stop was asked for (protolab's signal handlers call this before they raise)."""
    global _requested
    _requested = signum


def forget_stop() -> None:
    global _requested
    _requested = 0


def stop_requested() -> int:
    """The signal of a stop asked for and not yet acted on, 0 if none. A signal handler's exception
    is lost when it lands in code that cannot pass it on (a weakref callback of the import system,
    a callback from Ray's C++ code: "Exception ignored in ..."), so the places that can stop look
    here too (protolab/experiment/session.py, raise_if_stopped)."""
    return _requested


def whole_ray() -> ModuleType | None:
    """The ray module if this process imported it whole, else None: a stop that lands during
    `import ray` leaves half its submodules loaded, and importing it again then fails (circular
    import) instead of stopping."""
    ray = sys.modules.get("ray")
    return ray if ray is not None and hasattr(ray, "is_initialized") and hasattr(ray, "shutdown") else None


def interrupt(signum: int, _frame) -> None:
    """A SIGINT handler for commands without StopSignals: KeyboardInterrupt, the stop noted first."""
    request_stop(signum)
    raise KeyboardInterrupt


class StopDeadline:
    """Ends the process STOP_WITHIN seconds after SIGINT or SIGTERM if it has not ended by itself.

    A signal's Python handler runs only when the main thread is back in Python: blocked in Ray's
    C++ code (ray.init connecting its core worker on a loaded machine, Ray's shutdown), it can wait
    longer than anyone waits for Ctrl-C. The C-level handler writes the signal's number to the
    wakeup fd at once (signal.set_wakeup_fd), whatever the main thread does; a thread reading it
    starts the clock. Ending early loses nothing recorded (a run's shards are in its journal, as
    when a driver is killed: `--resume`); the local Ray's processes are swept as the reaper would."""

    STOP_WITHIN = 4.0

    def __init__(self) -> None:
        self.done = threading.Event()
        self.previous = -1
        self.reader: socket.socket | None = None
        self.writer: socket.socket | None = None
        self.thread: threading.Thread | None = None

    def __enter__(self) -> StopDeadline:
        if threading.current_thread() is not threading.main_thread():
            return self
        self.reader, self.writer = socket.socketpair()
        self.reader.setblocking(False)
        self.writer.setblocking(False)
        self.previous = signal.set_wakeup_fd(self.writer.fileno(), warn_on_full_buffer=False)
        self.thread = threading.Thread(target=self._watch, name="protolab-stop-deadline", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        if self.writer is None or self.reader is None:
            return
        signal.set_wakeup_fd(self.previous)
        if self.thread is not None:
            self.thread.join()
        self.reader.close()
        self.writer.close()

    def _watch(self) -> None:
        import select

        assert self.reader is not None
        signum = 0
        while not signum and not self.done.is_set():
            if select.select([self.reader], [], [], 0.2)[0]:
                with contextlib.suppress(OSError):
                    signum = next((b for b in self.reader.recv(64) if b in (signal.SIGINT, signal.SIGTERM)), 0)
        if not signum or self.done.wait(self.STOP_WITHIN):
            return
        print(
            f"protolab: stopped; the clean-up took over {self.STOP_WITHIN:g} s and was cut short "
            "(what was recorded is kept)",
            file=sys.stderr,
            flush=True,
        )
        for end in BEFORE_EXIT:  # the local Ray's processes (session.py)
            with contextlib.suppress(Exception):
                end()
        os._exit(128 + signum)
