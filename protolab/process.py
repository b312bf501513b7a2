"""The `protolab` command's process: the layers checked before they load, Ctrl-C as one line and
status 130 at any moment, and the same exit every time (protolab/__init__.py sets the first handler).

The lower layers keep the short import names of the repository's layout; `check_layers_installed`
makes a clash with another package of the same name (a notebook's own `analysis.py`) one clear
error instead of a confusing ImportError deep inside a run."""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.util
import os
import signal
import sys
from pathlib import Path
from typing import NoReturn

import protolab
from protolab.experiment.stopnote import BEFORE_EXIT, interrupt, request_stop, stop_requested, whole_ray

LAYERS = ("sim", "strategies", "analysis")


class LayerShadowed(ImportError):
    """Another module answers to one of protolab's import names."""


def check_layers_installed() -> None:
    """Each lower layer must resolve to the package installed beside this one."""
    home = Path(__file__).resolve().parent.parent
    for name in LAYERS:
        spec = importlib.util.find_spec(name)
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
        if origin != home / name / "__init__.py":
            where = origin or "nowhere"
            raise LayerShadowed(
                f"the module name {name!r} resolves to {where}, not protolab's package at "
                f"{home / name}: rename or move that module, or run from another folder"
            )


def _unraisable(u) -> None:
    """Python's report of an exception it could not raise, except a Ctrl-C's: that one was noted
    (stop_requested) and is acted on where the command can stop, so "Exception ignored" would be
    noise beside the stop's one line. So is the failure of Ray's own exit function after a stop cut
    `import ray` short (it imports Ray again, half loaded; no Ray was started)."""
    if stop_requested() and (isinstance(u.exc_value, KeyboardInterrupt) or _ray_cut_short(u)):
        return
    sys.__unraisablehook__(u)


def _ray_cut_short(u) -> bool:
    """The unraisable exception is a callback of Ray's while Ray is not imported whole."""
    module = getattr(u.object, "__module__", None) or ""
    return module.split(".")[0] == "ray" and whole_ray() is None


def main() -> int:
    """The `protolab` command: the layers are checked before any of them is imported, so a
    shadowed name is one line and exit status 2, like every other user error. Ctrl-C while the
    layers load (a second or two) is the same one line as Ctrl-C later. A crash in native code (the
    engine, Ray, pyarrow) prints the Python stack of every thread on stderr (faulthandler)."""
    if not faulthandler.is_enabled():
        faulthandler.enable()
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, protolab._early_interrupt):
        signal.signal(signal.SIGINT, interrupt)  # not when started with SIGINT ignored
    if protolab.early:  # a Ctrl-C whose KeyboardInterrupt an import swallowed before this line
        request_stop(protolab.early[-1])
    sys.unraisablehook = _unraisable
    try:
        check_layers_installed()
        from protolab.cli import main as run  # after the check: importing a shadowed layer would fail first
    except LayerShadowed as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("protolab: interrupted", file=sys.stderr)
        _exit_stopped()
    if stop_requested():  # a Ctrl-C whose exception an import swallowed ("Exception ignored in ...")
        print("protolab: interrupted", file=sys.stderr)
        _exit_stopped()
    try:
        code = run()
    except KeyboardInterrupt:  # between the command's end and _exit's handler
        print("protolab: interrupted", file=sys.stderr)
        code = STOPPED
    storage = sys.modules.get("analysis.runs.storage")  # loaded only by commands that read or write runs
    if storage is not None and storage.requests_left_behind():
        _exit_now(code)
    _exit(code)


STOPPED = 130  # the exit status of a command stopped by Ctrl-C
EXIT_WITHIN = 2.0  # seconds a stopped command's exit (threads, exit functions) may take before it is cut short


def _exit_stopped() -> NoReturn:
    _exit(STOPPED)


def _exit_within(seconds: float) -> None:
    """A stopped command whose exit still waits after `seconds` (a thread of Ray's start-up that does
    not end, an exit function blocked in Ray's C++ code) is ended: the local Ray's processes swept as
    the reaper would, then status 130."""
    import time

    time.sleep(seconds)
    for end in BEFORE_EXIT:
        with contextlib.suppress(Exception):
            end()
    _flush()
    os._exit(STOPPED)


def _exit(code: int) -> NoReturn:
    """End the process with `code` once the command is done, the same way every time.

    Two ways the interpreter's own exit turned a clean Ctrl-C into a death by SIGINT (status -2, a
    shell shows 130 but nothing was said): a KeyboardInterrupt that lands inside `exec` of a string
    (dataclasses, namedtuple and typing build their methods so while a module is imported) marks
    the interpreter as ended by an unhandled Ctrl-C even though protolab caught it; and a Ctrl-C in
    the last second of the interpreter's tear-down of DuckDB, pyarrow and pandas (after Python has
    put back SIGINT's default) kills it outright. So the command's threads are joined, the exit
    functions run (Ray's shutdown, logging, temporary folders) with a Ctrl-C now only noted, the
    streams are flushed, and the process exits itself: with 130 if a Ctrl-C came meanwhile."""
    import atexit
    import threading

    late: list[int] = []
    with contextlib.suppress(ValueError):  # not in the main thread (an embedding caller): no handler
        signal.signal(signal.SIGINT, lambda signum, _frame: late.append(signum))
    if code == STOPPED or stop_requested():  # the stop line is said: what is left may not hold it up
        threading.Thread(target=_exit_within, args=(EXIT_WITHIN,), name="protolab-exit-deadline", daemon=True).start()
    for t in threading.enumerate():
        if t is not threading.current_thread() and not t.daemon:
            t.join()
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    _flush()
    # The last word: a Ctrl-C from here on is held back (blocked, then dropped with the process), so
    # one that came while the streams were flushed is still seen and said; nothing is flushed after.
    with contextlib.suppress(ValueError, OSError):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    if _noted(late) and code != STOPPED:
        print("protolab: interrupted", file=sys.stderr)
        code = STOPPED
        _flush()
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


def _noted(late: list[int]) -> bool:
    """A Ctrl-C came during the exit (a call: its handler, if pending, runs on the way in)."""
    return bool(late) or bool(stop_requested())


def _exit_now(code: int) -> None:
    """After an object-store request was given up on (--storage-timeout, Ctrl-C), pyarrow's clean-up
    at exit would wait for that request, up to minutes: flush, stop a local Ray, and exit at once."""
    _flush()
    ray = sys.modules.get("ray")
    if ray is not None and ray.is_initialized():
        ray.shutdown()
    os._exit(code)
