"""Bind a local Ray's lifetime to the driver that started it.

Ray kills the processes it starts itself (gcs_server, raylet, ...) when the driver dies, but not
the raylet's own children: its agents (one holding a listening port) and idle workers outlive a
SIGKILLed driver or a crashed gcs_server. So protolab gives every local Ray a private temporary
folder (`ray.init(_temp_dir=ROOT)`) and recognises the session's processes by that folder: every
one of them keeps a log file or socket under ROOT open. Nothing else on the machine does, so other
Ray sessions (other users, tests, helpers) are never touched.

Two parts:
- `sweep(root)` ends every process of the session (SIGTERM, then SIGKILL) and is what the driver
  calls when a run ends;
- a watcher process (`python -I reaper.py DRIVER_PID ROOT`, started by `Watcher`) that sleeps until
  the driver is gone, however it ended, then sweeps and removes ROOT. The driver tells it `done`
  after a clean stop, and it exits without doing anything.

Only the standard library is used, so the watcher starts in a few tens of milliseconds."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROC = Path("/proc")
GRACE = 1.0  # seconds between SIGTERM and SIGKILL
DEADLINE = 15.0  # a sweep gives up after this long (processes we may not kill)
POLL = 0.2  # the watcher's check of its parent


def _opens_under(pid: int, prefix: str) -> bool:
    """Whether process `pid` has a file or socket under `prefix` open, or names it on its command line."""
    base = PROC / str(pid)
    try:
        if prefix.encode() in (base / "cmdline").read_bytes():
            return True
        for fd in os.listdir(base / "fd"):
            try:
                if os.readlink(base / "fd" / fd).startswith(prefix):
                    return True
            except OSError:
                continue
    except OSError:  # gone, or another user's process (which we could not kill anyway)
        return False
    return False


def _is_zombie(pid: int) -> bool:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def session_pids(root: str | Path, exclude: set[int] | None = None) -> list[int]:
    """Live processes that belong to the Ray session kept under `root` (ours: never other sessions)."""
    prefix = str(Path(root).resolve()).rstrip("/") + "/"
    skip = {os.getpid()} | (exclude or set())
    out = []
    for entry in os.listdir(PROC):
        if (
            entry.isdigit()
            and int(entry) not in skip
            and _opens_under(int(entry), prefix)
            and not _is_zombie(int(entry))
        ):
            out.append(int(entry))
    return out


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def sweep(
    root: str | Path, exclude: set[int] | None = None, grace: float = GRACE, deadline: float = DEADLINE
) -> list[int]:
    """End every process of the session under `root`: SIGTERM, and SIGKILL what is left after
    `grace` seconds. Returns the pids that were found alive."""
    found: set[int] = set()
    t0 = time.monotonic()
    term_sent: dict[int, float] = {}
    while time.monotonic() - t0 < deadline:
        alive = session_pids(root, exclude)
        if not alive:
            break
        found.update(alive)
        now = time.monotonic()
        fresh = [p for p in alive if p not in term_sent]
        _signal_all(fresh, signal.SIGTERM)
        term_sent.update({p: now for p in fresh})
        _signal_all([p for p in alive if now - term_sent[p] >= grace], signal.SIGKILL)
        time.sleep(0.1)
    return sorted(found)


def private_root() -> Path:
    """A new folder for one Ray session's files. Short, because Ray puts Unix sockets under it
    (a socket path is limited to 107 bytes)."""
    base = tempfile.gettempdir()
    if len(base) > 40:
        base = "/tmp"
    return Path(tempfile.mkdtemp(prefix="protolab-ray-session-", dir=base))


class Watcher:
    """The watcher process of one local Ray session (see the module docstring)."""

    def __init__(self, root: Path):
        self.root = root
        self.proc = subprocess.Popen(
            [sys.executable, "-I", str(Path(__file__).resolve()), str(os.getpid()), str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # a terminal's Ctrl-C or hang-up does not reach it

    def done(self) -> None:
        """The driver has cleaned up itself: let the watcher exit without sweeping."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(b"done\n")
            self.proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _driver_gone(driver: int, line: bytes | None) -> bool:
    return line == b"" or os.getppid() != driver


def watch(driver: int, root: Path) -> int:
    """Wait for `driver` to end (its pipe closes, or we are re-parented), then sweep the session."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    stdin = sys.stdin.buffer
    while True:
        ready, _, _ = select.select([stdin], [], [], POLL)
        line = stdin.readline() if ready else None
        if line == b"done\n":
            return 0
        if _driver_gone(driver, line):
            break
    sweep(root)
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(watch(int(sys.argv[1]), Path(sys.argv[2])))
