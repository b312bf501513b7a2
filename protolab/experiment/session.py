"""The Ray session of a run: start a private local Ray on 127.0.0.1 or join a cluster, and end it
however the run ends.

No process of a local Ray outlives the run: Ctrl-C and SIGTERM stop it cleanly (once; repeats
cannot interrupt the clean-up, StopSignals), a broken local Ray (gcs_server or raylet gone) fails
the run at once (BrokenRayWatch), and a watcher process (reaper.py) ends the Ray of a driver that
was killed.

A process that runs many small experiments (a notebook, the test suite) can keep one local Ray
across them (`keep_local_ray`): Ray's start-up, seconds each time, is then paid once."""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.runs.runfolder import RunDirError
from analysis.runs.storage import Location
from protolab.experiment import reaper
from protolab.experiment.stopnote import (
    BEFORE_EXIT,
    StopDeadline,
    forget_stop,
    request_stop,
    stop_requested,
    whole_ray,
)

LOCAL_IP = "127.0.0.1"
CONNECT_TIMEOUT = 20.0  # seconds `--address` may take to answer (--connect-timeout)


class ConnectError(RunDirError):
    """`--address` did not answer in time (a user's error: exit status 2)."""


class Stop(KeyboardInterrupt):
    """SIGINT or SIGTERM: stop the run as Ctrl-C does (exit status 128 + the signal's number)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def versions() -> dict[str, str]:
    """The versions of what plays and writes a run (kept in run.json)."""
    import numpy
    import pyarrow
    import ray

    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "pyarrow": pyarrow.__version__,
        "ray": ray.__version__,
    }


def _quiet_ray_logs() -> None:
    for name in ("ray", "ray._private.authentication.authentication_token_setup"):
        logging.getLogger(name).setLevel(logging.ERROR)
    _route_cluster_errors()


CLUSTER_ERRORS = logging.getLogger("protolab.ray")  # silent unless a user's logging asks for it
CLUSTER_ERRORS.addHandler(logging.NullHandler())  # not logging's last resort (stderr) either


def _route_cluster_errors() -> None:
    """Ray's driver prints every error the cluster publishes (a raylet's death with its state dump,
    a task's retry) on the terminal, even with log_to_driver=False. protolab says what matters in
    its own words (a lost node and its shards: nodes.py; a shard that failed for good: RunFailed),
    so those prints go to the logger `protolab.ray` instead; Ray's log files keep them whole."""
    import ray._private.worker as ray_worker

    original = getattr(ray_worker, "print_to_stdstream", None)
    if original is None or getattr(original, "routed", False):
        return

    def routed(data: dict, ignore_prefix: bool) -> None:
        if data.get("pid") == "raylet":  # published errors, as listen_error_messages sends them
            for line in data.get("lines", ()):
                CLUSTER_ERRORS.warning("%s", line)
        else:
            original(data, ignore_prefix)

    routed.routed = True  # type: ignore[attr-defined]
    ray_worker.print_to_stdstream = routed


@contextlib.contextmanager
def _neutral_cwd():
    """Ray puts the driver's working directory first on every worker's sys.path. Run from a source
    checkout whose engine was built elsewhere (`pip install .`), that folder's `sim/` would shadow
    the installed package; so Ray is started from an empty folder instead."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="protolab-ray-") as empty:
        os.chdir(empty)
        try:
            yield
        finally:
            os.chdir(here)


@dataclass
class LocalRay:
    """The local Ray this process started: its private folder and the watcher bound to it (reaper.py)."""

    root: Path
    watcher: reaper.Watcher
    cpus: int


_local: LocalRay | None = None
_keep: int | None = None  # inside keep_local_ray: the CPUs of the local Ray kept across experiments


def local_ray() -> LocalRay | None:
    """The local Ray this process started, None when joined to a cluster or not started."""
    return _local


def _host_port(address: str) -> tuple[str, int] | None:
    """HOST and PORT of `HOST:PORT` or `ray://HOST:PORT`; None for what Ray resolves itself (`auto`)."""
    hostport = address.removeprefix("ray://")
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def _wait_for_listener(address: str, timeout: float) -> None:
    """Return once something accepts TCP connections at `address`; ConnectError after `timeout` s."""
    target = _host_port(address)
    if target is None:
        return
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        try:
            socket.create_connection(target, timeout=max(0.1, min(2.0, left))).close()
            return
        except OSError as e:
            if time.monotonic() + 0.5 >= deadline:
                raise ConnectError(_unreachable(address, timeout, e.strerror or str(e))) from None
            time.sleep(0.5)


def _unreachable(address: str, timeout: float, why: str) -> str:
    return (
        f"cannot reach a Ray cluster at {address} within {timeout:g} s ({why}); is Ray running there "
        "(`ray start --head`)? --connect-timeout sets the wait"
    )


def _join_cluster(address: str, workers: int | None, timeout: float) -> tuple[int, str]:
    """Join the Ray cluster at `address`, giving up after `timeout` seconds: Ray itself retries an
    address that does not answer for minutes. Nothing of the cluster is started or stopped here."""
    import ray

    t0 = time.monotonic()
    _wait_for_listener(address, timeout)

    def give_up() -> None:  # ray.init is blocked in Ray's C++ code: end the process
        print(f"protolab: error: {_unreachable(address, timeout, 'no answer from Ray')}", file=sys.stderr, flush=True)
        os._exit(2)

    watchdog = threading.Timer(max(1.0, timeout - (time.monotonic() - t0)), give_up)
    watchdog.daemon = True
    watchdog.start()
    try:
        with _neutral_cwd():
            ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - Ray raises several kinds; all mean "cannot join"
        raise RunDirError(f"--address {address}: cannot join the Ray cluster there ({e})") from None
    finally:
        watchdog.cancel()
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return (workers or max(1, cpus)), f"Ray cluster at {address} ({cpus} CPUs)"


def _workers_pythonpath() -> None:
    """The driver's PYTHONPATH with relative entries made absolute: a local Ray's workers inherit it
    but start in another folder, where `PYTHONPATH=.` would not find a user strategy `mypkg.bots:MyBot`.
    From a source checkout, the checkout goes first, so that the workers import this very code."""
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if parts:
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in parts)
    root = str(Path(__file__).resolve().parents[2])
    if "site-packages" not in root and "dist-packages" not in root:
        parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in parts:
            os.environ["PYTHONPATH"] = os.pathsep.join([root, *parts])


def start_ray(address: str | None, workers: int | None, connect_timeout: float = CONNECT_TIMEOUT) -> tuple[int, str]:
    """Join `address`, or start a local Ray on 127.0.0.1 only; returns (workers, where).

    A local Ray lives in a private folder watched by a reaper process, so that none of its
    processes outlives this one, however this one ends; `stop_ray` ends it."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a one-node, local-only Ray
    import ray

    _quiet_ray_logs()
    if address:
        return _join_cluster(address, workers, connect_timeout)
    _workers_pythonpath()
    n = workers or os.cpu_count() or 1
    if _local is not None:  # kept (keep_local_ray): reused inside while whole and large enough
        if _keep is not None and ray.is_initialized() and local_ray_failure() is None and _local.cpus >= n:
            return n, f"local Ray on {LOCAL_IP} ({n} workers)"
        stop_ray()
    _start_local_ray(max(n, _keep or 0))
    return n, f"local Ray on {LOCAL_IP} ({n} workers)"


def _start_local_ray(cpus: int) -> None:
    """A local Ray of `cpus` CPUs on 127.0.0.1, in a private folder a reaper watches from before its
    first process exists; a failed or stopped start ends whatever of it has started."""
    global _local
    import ray

    ray_root = reaper.private_root()
    try:
        watcher = reaper.Watcher(ray_root)
    except BaseException:  # a stop while the watcher starts: nobody else knows of the folder
        shutil.rmtree(ray_root, ignore_errors=True)
        raise
    _local = LocalRay(ray_root, watcher, cpus)  # watching before any Ray process exists
    try:
        with _neutral_cwd():
            ray.init(
                num_cpus=cpus,
                include_dashboard=False,
                _node_ip_address=LOCAL_IP,
                logging_level=logging.ERROR,
                log_to_driver=False,
                _temp_dir=str(ray_root),
            )
        raise_if_stopped()  # a Ctrl-C whose exception Ray's start-up swallowed
    except BaseException:
        stop_ray()
        raise


def local_ray_failure() -> str | None:
    """What died, when a process the local Ray cannot run without (gcs_server, raylet, ...) has
    exited; None while it is whole, or when joined to a cluster (the cluster's to heal)."""
    ray = whole_ray()
    if _local is None or ray is None:
        return None

    node = getattr(ray._private.worker, "_global_node", None)
    try:
        dead = [kind for kind, _ in node.dead_processes()] if node is not None else []
    except Exception:  # noqa: BLE001 - a private API: never let the check itself stop a run
        return None
    return ", ".join(sorted(set(dead))) or None


@contextlib.contextmanager
def keep_local_ray(workers: int | None = None, end: bool = True) -> Iterator[None]:
    """Inside, the experiments this process runs share one local Ray of `workers` CPUs (default: every
    core), started by the first and ended on leaving. An experiment that stopped or failed still ends
    it, so that nothing of it runs on into the next, which starts a fresh one. `end=False` leaves it
    running on leaving, for the next block to take up (the next experiment outside any block ends it
    before it starts its own; stop_ray ends it at any time). Blocks nest: a Ray kept inside has the
    larger of the two sizes, leaving an inner block keeps the outer one's Ray, and only the outermost
    ends it."""
    global _keep
    outer = _keep
    _keep = max(workers or os.cpu_count() or 1, outer or 0)
    try:
        yield
    finally:
        _keep = outer
        if end and outer is None:
            stop_ray()


class BrokenRayWatch:
    """Ends the driver when its local Ray has lost a process it cannot run without (gcs_server,
    raylet) and the play loop has not noticed within GRACE seconds: Ray calls such as `ray.wait`
    can block for good once the gcs_server is gone, and no exception reaches them. Finished shards
    are already in the journal, so the run resumes; the exit is the one RunFailed would give."""

    GRACE = 5.0
    POLL = 0.5

    def __init__(self, run_dir: Path | Location, finished: Any):
        self.run_dir, self.finished = run_dir, finished  # finished(): shards recorded so far
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="protolab-ray-watch", daemon=True)

    def start(self) -> BrokenRayWatch:
        if _local is not None:  # on a cluster, the cluster's to heal
            self.thread.start()
        return self

    def stop(self) -> None:
        self.stopped.set()

    def _watch(self) -> None:
        since = None
        while not self.stopped.wait(self.POLL):
            broken = local_ray_failure()
            since = None if not broken else since or time.monotonic()
            if since is not None and time.monotonic() - since > self.GRACE and not self.stopped.is_set():
                print(
                    f"protolab: error: the local Ray stopped ({broken} exited); {self.finished()} finished shards "
                    f"are kept in {self.run_dir}/ (protolab run --resume {self.run_dir})",
                    file=sys.stderr,
                    flush=True,
                )
                local = _local
                if local is not None:
                    reaper.sweep(local.root, exclude={local.watcher.proc.pid})
                    local.watcher.done()
                    shutil.rmtree(local.root, ignore_errors=True)
                os._exit(1)


def _sweep_now() -> None:
    """End the local Ray's processes at once (StopDeadline) and remove their folder; the reaper
    sweeps again when this process is gone (and finds the folder gone, should it have been told
    the driver was done already)."""
    local = _local
    if local is not None:
        reaper.sweep(local.root, exclude={local.watcher.proc.pid}, grace=0.0, deadline=1.0)
        shutil.rmtree(local.root, ignore_errors=True)


BEFORE_EXIT.append(_sweep_now)


def stop_ray(clean: bool = False) -> None:
    """Disconnect from Ray; for a local Ray, also end every one of its processes and remove its folder.
    `clean`: the experiment ended with nothing of it still running, so that a local Ray kept across
    experiments (keep_local_ray) is left running for the next one."""
    global _local
    ray = whole_ray()

    if clean and _keep is not None and _local is not None and local_ray_failure() is None:
        return

    local, broken = _local, local_ray_failure()
    if local is not None and broken:  # Ray's own shutdown can wait on a dead gcs_server
        reaper.sweep(local.root, exclude={local.watcher.proc.pid})
    if ray is not None and ray.is_initialized():
        ray.shutdown()
    if local is not None:
        try:
            reaper.sweep(local.root, exclude={local.watcher.proc.pid})
            local.watcher.done()
        finally:  # the folder goes however the sweep ends
            shutil.rmtree(local.root, ignore_errors=True)
    _local = None


# -- signals ----------------------------------------------------------------------------------------


def raise_if_stopped() -> None:
    """Raise Stop if a stop was asked for. A signal handler's exception is lost when it lands in code
    that cannot pass it on (a callback from Ray's C++ code, a finalizer: "Exception ignored in ...");
    the loops that wait on Ray (jobs.finished) and the end of Ray's start-up call this, so such a
    stop still ends the command within one wait (jobs.WAIT)."""
    if stop_requested():
        raise Stop(stop_requested())


class StopSignals:
    """SIGINT (Ctrl-C) and SIGTERM raise Stop, once: from then on until the block ends they are
    ignored, so that pressing Ctrl-C again cannot cut the clean-up short (Ray's shutdown, the
    sweep of its processes, the last run.json) and leave processes or a half-written run behind."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.active = threading.current_thread() is threading.main_thread()
        self.stopped = False
        self.signum = 0  # the signal that stopped the run (Ray may re-raise it as a bare Ctrl-C)
        self.previous: dict[int, Any] = {}
        self.deadline = StopDeadline()

    def _first(self, signum: int, _frame) -> None:
        self.stopped, self.signum = True, signum
        for k in self.SIGNALS:
            signal.signal(k, signal.SIG_IGN)
        request_stop(signum)
        raise Stop(signum)

    def arm(self) -> None:
        """(Re)install the handlers: ray.init puts its own on SIGTERM, which aborts the process."""
        if self.active and not self.stopped:
            for k in self.SIGNALS:
                signal.signal(k, self._first)

    def __enter__(self) -> StopSignals:
        if self.active:
            self.previous = {k: signal.getsignal(k) for k in self.SIGNALS}
        self.deadline.__enter__()
        self.arm()
        return self

    def __exit__(self, *exc) -> None:
        for k, handler in self.previous.items():
            signal.signal(k, handler)
        self.deadline.__exit__()
        forget_stop()
