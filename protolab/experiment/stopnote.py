"""Whether a stop (Ctrl-C, SIGTERM) was asked for in this command: one note that the signal handlers
write and the places that can stop read. Imports nothing, so the `protolab` entry point can set its
handler before any layer loads."""

from __future__ import annotations

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
