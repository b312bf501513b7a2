"""Drive a run on Ray: start or join Ray, hand out shards, record each finished shard at once,
show progress, and stop cleanly on Ctrl-C with every finished shard kept.

Faults are Ray's to retry: a worker that dies mid-shard has its task run again (the shard's files
appear only when whole, so a half-written attempt leaves at most a hidden temporary file, removed
at the end). A driver that dies loses nothing recorded: `--resume` verifies every recorded shard
by checksum and plays only what is missing or damaged.

No process of a local Ray outlives the run, however it ends: Ctrl-C and SIGTERM stop it cleanly
(once; repeats cannot interrupt the clean-up), a broken local Ray (gcs_server or raylet gone)
fails the run at once, and a watcher process (reaper.py) ends the Ray of a driver that was killed."""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import platform
import resource
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from analysis import runfolder
from analysis.ab import ab_compare, print_ab, render_ab
from analysis.cardvalue import is_card_value_run
from analysis.dashboard import render, write_page
from analysis.open import open_runs
from analysis.report import build_report, print_report
from analysis.runfolder import RunDirError
from analysis.tiers import print_tiers, render_tiers, tier_study
from protolab.experiment import reaper
from protolab.experiment.plan import Plan, ShardPlan, card_files, make_plan
from protolab.experiment.report import print_run
from protolab.experiment.seeds import SEED_SCHEME
from protolab.experiment.shards import Dictionaries, ShardTask, execute
from protolab.experiment.spec import Spec, SpecError, load_spec, spec_from_manifest
from protolab.version import protolab_version
from sim.pool import ENGINE_VERSION

MAX_RETRIES = 5                    # per shard, for workers or nodes that die (not for errors in code)
MANIFEST_EVERY = 5.0               # seconds between run.json rewrites (the journal covers the gap)
LOCAL_IP = "127.0.0.1"
CONNECT_TIMEOUT = 20.0             # seconds `--address` may take to answer (--connect-timeout)


class RunFailed(RuntimeError):
    """A shard failed for a reason retrying cannot fix (an error in the code or the data)."""


class ConnectError(RunDirError):
    """`--address` did not answer in time (a user's error: exit status 2)."""


class Stop(KeyboardInterrupt):
    """SIGINT or SIGTERM: stop the run as Ctrl-C does (exit status 128 + the signal's number)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@dataclass
class RunOptions:
    workers: int | None = None
    address: str | None = None
    out: str | None = None
    resume: str | None = None
    games: int | None = None
    show_progress: bool = True
    connect_timeout: float = CONNECT_TIMEOUT
    allow_code: bool = False       # the spec may name Python user strategies (plan.check_seats)


@dataclass
class RunResult:
    run_dir: Path
    status: str                    # "complete", "interrupted", "failed"
    games: int                     # games in the run folder now
    seconds: float                 # this session, Ray start-up included
    games_computed: int = 0        # games played by this session
    computed_shards: int = 0
    kept_shards: int = 0
    recomputed: list[str] = field(default_factory=list)
    manifest: dict[str, Any] = field(default_factory=dict)
    signum: int = signal.SIGINT    # the signal that stopped an interrupted run
    session: dict[str, Any] | None = None    # this session's entry in run.json, if it played


def play_shard(task: ShardTask) -> dict:
    """The Ray task (its process title is `ray::play_shard` while it runs)."""
    return execute(task)


# -- versions and dictionaries ----------------------------------------------------------------------

def versions() -> dict[str, str]:
    import numpy
    import pyarrow
    import ray

    return {"python": platform.python_version(), "numpy": numpy.__version__, "pyarrow": pyarrow.__version__,
            "ray": ray.__version__}


def dictionaries(plan: Plan) -> Dictionaries:
    return Dictionaries.of([a.name for a in plan.spec.arms], plan.pools,
                           [s for a in plan.spec.arms for s in a.strategies])


def make_task(plan: Plan, shard: ShardPlan, run_id: str, run_dir: Path, token: str,
              dicts: Dictionaries) -> ShardTask:
    spec = plan.spec
    arm_first = shard.arm * plan.games_per_arm
    lo = (shard.first_game - arm_first) // spec.games
    hi = (shard.first_game - arm_first + shard.games - 1) // spec.games
    return ShardTask(
        run_id=run_id, index=shard.index, name=shard.name, arm_index=shard.arm, arm=spec.arms[shard.arm],
        pool_hash=plan.pools[shard.arm].hash, first_game=shard.first_game, games=shard.games,
        arm_first_game=arm_first, games_per_matchup=spec.games, matchup_base=lo,
        matchups=tuple(plan.matchups[lo:hi + 1]) if plan.matchups else (),
        master_seed=spec.seed, swap=spec.swap, turn_cap=spec.turn_cap, events=spec.events, spec_hash=spec.hash,
        engine_version=ENGINE_VERSION, dicts=dicts, run_dir=runfolder.open_location(run_dir).uri, token=token,
        draft=tuple(spec.draft.policy) if spec.draft.mode == "draft" else ("random", "random"),
        draft_files=tuple((t.path, t.text) for t in spec.draft.tables))


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_manifest(plan: Plan, run_id: str) -> dict[str, Any]:
    spec = plan.spec
    return {
        "run_id": run_id, "format": runfolder.FORMAT, "complete": False,
        "spec": spec.to_dict(), "spec_hash": spec.hash,
        "pool_hash": plan.pools[0].hash, "pool_hashes": {a.name: p.hash for a, p in zip(spec.arms, plan.pools,
                                                                                         strict=True)},
        "engine_version": ENGINE_VERSION, "protolab_version": protolab_version(), "versions": versions(),
        "seed_scheme": SEED_SCHEME,
        "games": plan.total_games, "arms": len(spec.arms), "matchups": plan.n_matchups,
        "games_per_matchup": spec.games, "shard_count": len(plan.shards),
        "shard_games": plan.shard_games,
        "inputs": {cf.path: cf.sha256 for cf in card_files(spec)},
        "created": _now(), "finished": None, "sessions": [], "shards": [],
    }


# -- Ray --------------------------------------------------------------------------------------------

def _quiet_ray_logs() -> None:
    for name in ("ray", "ray._private.authentication.authentication_token_setup"):
        logging.getLogger(name).setLevel(logging.ERROR)


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


_local: LocalRay | None = None


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
    return (f"cannot reach a Ray cluster at {address} within {timeout:g} s ({why}); is Ray running there "
            "(`ray start --head`)? --connect-timeout sets the wait")


def _join_cluster(address: str, workers: int | None, timeout: float) -> tuple[int, str]:
    """Join the Ray cluster at `address`, giving up after `timeout` seconds: Ray itself retries an
    address that does not answer for minutes. Nothing of the cluster is started or stopped here."""
    import ray

    t0 = time.monotonic()
    _wait_for_listener(address, timeout)

    def give_up() -> None:                    # ray.init is blocked in Ray's C++ code: end the process
        print(f"protolab: error: {_unreachable(address, timeout, 'no answer from Ray')}", file=sys.stderr,
              flush=True)
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


def _absolute_pythonpath() -> None:
    """The driver's PYTHONPATH with relative entries made absolute: a local Ray's workers inherit it
    but start in another folder, where `PYTHONPATH=.` would not find a user strategy `mypkg.bots:MyBot`."""
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if parts:
        os.environ["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in parts)


def start_ray(address: str | None, workers: int | None,
              connect_timeout: float = CONNECT_TIMEOUT) -> tuple[int, str]:
    """Join `address`, or start a local Ray on 127.0.0.1 only; returns (workers, where).

    A local Ray lives in a private folder watched by a reaper process, so that none of its
    processes outlives this one, however this one ends; `stop_ray` ends it."""
    global _local
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")     # a one-node, local-only Ray
    import ray

    _quiet_ray_logs()
    if address:
        return _join_cluster(address, workers, connect_timeout)
    _absolute_pythonpath()
    root = str(Path(__file__).resolve().parents[2])
    if "site-packages" not in root and "dist-packages" not in root:
        # a source checkout: let the workers import this very code
        parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in parts:
            os.environ["PYTHONPATH"] = os.pathsep.join([root, *parts])
    n = workers or os.cpu_count() or 1
    ray_root = reaper.private_root()
    _local = LocalRay(ray_root, reaper.Watcher(ray_root))     # watching before any Ray process exists
    try:
        with _neutral_cwd():
            ray.init(num_cpus=n, include_dashboard=False, _node_ip_address=LOCAL_IP, logging_level=logging.ERROR,
                     log_to_driver=False, _temp_dir=str(ray_root))
    except BaseException:
        stop_ray()
        raise
    return n, f"local Ray on {LOCAL_IP} ({n} workers)"


def local_ray_failure() -> str | None:
    """What died, when a process the local Ray cannot run without (gcs_server, raylet, ...) has
    exited; None while it is whole, or when joined to a cluster (the cluster's to heal)."""
    if _local is None:
        return None
    import ray

    node = getattr(ray._private.worker, "_global_node", None)
    try:
        dead = [kind for kind, _ in node.dead_processes()] if node is not None else []
    except Exception:  # noqa: BLE001 - a private API: never let the check itself stop a run
        return None
    return ", ".join(sorted(set(dead))) or None


class BrokenRayWatch:
    """Ends the driver when its local Ray has lost a process it cannot run without (gcs_server,
    raylet) and the play loop has not noticed within GRACE seconds: Ray calls such as `ray.wait`
    can block for good once the gcs_server is gone, and no exception reaches them. Finished shards
    are already in the journal, so the run resumes; the exit is the one RunFailed would give."""

    GRACE = 5.0
    POLL = 0.5

    def __init__(self, run_dir: Path, finished: Any):
        self.run_dir, self.finished = run_dir, finished       # finished(): shards recorded so far
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="protolab-ray-watch", daemon=True)

    def start(self) -> BrokenRayWatch:
        if _local is not None:           # on a cluster, the cluster's to heal
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
                print(f"protolab: error: the local Ray stopped ({broken} exited); {self.finished()} finished shards "
                      f"are kept in {self.run_dir}/ (protolab run --resume {self.run_dir})", file=sys.stderr,
                      flush=True)
                local = _local
                if local is not None:
                    reaper.sweep(local.root, exclude={local.watcher.proc.pid})
                    local.watcher.done()
                    shutil.rmtree(local.root, ignore_errors=True)
                os._exit(1)


def stop_ray() -> None:
    """Disconnect from Ray; for a local Ray, also end every one of its processes and remove its folder."""
    global _local
    import ray

    local, broken = _local, local_ray_failure()
    if local is not None and broken:         # Ray's own shutdown can wait on a dead gcs_server
        reaper.sweep(local.root, exclude={local.watcher.proc.pid})
    if ray.is_initialized():
        ray.shutdown()
    if local is not None:
        reaper.sweep(local.root, exclude={local.watcher.proc.pid})
        local.watcher.done()
        shutil.rmtree(local.root, ignore_errors=True)
    _local = None


# -- progress ---------------------------------------------------------------------------------------

class Progress:
    """A rich progress bar with games done, games/s and ETA (plain lines when not a terminal)."""

    def __init__(self, console, total: int, done: int, enabled: bool):
        self.total, self.start_done, self.t0 = total, done, time.perf_counter()
        self.bar = None
        self.last_line = time.perf_counter()
        self.console = console
        self.enabled = enabled
        if enabled and console is not None and console.is_terminal:
            from rich.progress import BarColumn, Progress, TextColumn

            self.bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                TextColumn("{task.completed:,.0f}/{task.total:,.0f} games"),
                                TextColumn("{task.fields[rate]}"), TextColumn("ETA {task.fields[eta]}"),
                                console=console, transient=False)
            self.task = self.bar.add_task("playing", total=total, completed=done, rate="", eta="-")
            self.bar.start()

    def rate_eta(self, done: int) -> tuple[float, float | None]:
        dt = time.perf_counter() - self.t0
        rate = (done - self.start_done) / dt if dt > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else None
        return rate, eta

    def update(self, done: int) -> None:
        rate, eta = self.rate_eta(done)
        eta_s = "-" if eta is None else time.strftime("%H:%M:%S", time.gmtime(eta))
        if self.bar is not None:
            self.bar.update(self.task, completed=done, rate=f"{rate:,.0f} games/s", eta=eta_s)
        elif self.enabled and self.console is not None and (time.perf_counter() - self.last_line > 10
                                                            or done == self.total):
            self.last_line = time.perf_counter()
            self.console.print(f"  {done:,}/{self.total:,} games, {rate:,.0f} games/s, ETA {eta_s}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


# -- signals and memory -----------------------------------------------------------------------------

class StopSignals:
    """SIGINT (Ctrl-C) and SIGTERM raise Stop, once: from then on until the block ends they are
    ignored, so that pressing Ctrl-C again cannot cut the clean-up short (Ray's shutdown, the
    sweep of its processes, the last run.json) and leave processes or a half-written run behind."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.active = threading.current_thread() is threading.main_thread()
        self.stopped = False
        self.signum = 0                # the signal that stopped the run (Ray may re-raise it as a bare Ctrl-C)
        self.previous: dict[int, Any] = {}

    def _first(self, signum: int, _frame) -> None:
        self.stopped, self.signum = True, signum
        for k in self.SIGNALS:
            signal.signal(k, signal.SIG_IGN)
        raise Stop(signum)

    def arm(self) -> None:
        """(Re)install the handlers: ray.init puts its own on SIGTERM, which aborts the process."""
        if self.active and not self.stopped:
            for k in self.SIGNALS:
                signal.signal(k, self._first)

    def __enter__(self) -> StopSignals:
        if self.active:
            self.previous = {k: signal.getsignal(k) for k in self.SIGNALS}
        self.arm()
        return self

    def __exit__(self, *exc) -> None:
        for k, handler in self.previous.items():
            signal.signal(k, handler)


def own_peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def peak_rss_mb(pid: int) -> float | None:
    """A process's peak resident memory so far (VmHWM), None if it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        return None
    return None


class MemoryLedger:
    """Peak memory of every process of one session: the workers (their own reports, from any node)
    and, for a local Ray, Ray's own processes (sampled from /proc). See docs/data.md, `sessions`."""

    def __init__(self) -> None:
        self.workers: dict[tuple[str, int], float] = {}
        self.ray: dict[int, float] = {}

    def worker_reported(self, facts: dict[str, Any]) -> None:
        key = (str(facts.get("node")), int(facts.get("pid", 0)))
        self.workers[key] = max(self.workers.get(key, 0.0), float(facts.get("peak_rss_mb", 0.0)))

    def sample_local(self) -> None:
        """Read the peak of every process of the local Ray (a peak only grows: sampling now and at
        the end misses only processes that came and went in between, which are Ray's retries)."""
        if _local is None:
            return
        for pid in [*reaper.session_pids(_local.root), _local.watcher.proc.pid]:
            mb = peak_rss_mb(pid)
            if mb is not None:
                self.ray[pid] = max(self.ray.get(pid, 0.0), mb)

    def fields(self, driver_mb: float) -> dict[str, Any]:
        """The session's memory keys, in MB (docs/data.md)."""
        if _local is not None:                      # every worker is on this machine: sampled ones too
            for key in self.workers:
                if key[1] in self.ray:
                    self.workers[key] = max(self.workers[key], self.ray.pop(key[1]))
        workers = list(self.workers.values())
        ray_total = round(sum(self.ray.values()), 1) if _local is not None else None
        workers_total = round(sum(workers), 1)
        return {"driver_peak_rss_mb": driver_mb, "driver_play_peak_rss_mb": driver_mb,
                "worker_peak_rss_mb": max(workers, default=0.0), "workers_total_peak_rss_mb": workers_total,
                "worker_processes": len(workers), "ray_total_peak_rss_mb": ray_total,
                "total_peak_rss_mb": round(driver_mb + workers_total + (ray_total or 0.0), 1)}


def record_driver_peak(session: dict[str, Any]) -> None:
    """Raise the session's driver and total figures to the driver's peak now (after the report and
    dashboard, which run in the driver once the games are played)."""
    now = own_peak_rss_mb()
    before = session.get("driver_peak_rss_mb", now)
    session["driver_peak_rss_mb"] = now
    if session.get("total_peak_rss_mb") is not None:
        session["total_peak_rss_mb"] = round(session["total_peak_rss_mb"] - before + now, 1)


# -- the run ----------------------------------------------------------------------------------------

def prepare(spec_arg: str | Spec | None, opts: RunOptions) -> tuple[Plan, Path | None, dict[str, Any] | None]:
    """All validation, before anything is started or written: (plan, run folder to resume, manifest).
    `spec_arg` is a spec file or name, or a Spec built in code (`protolab cardvalue`)."""
    if opts.workers is not None and opts.workers < 1:
        raise SpecError(f"--workers: expected at least 1, got {opts.workers}")
    if not opts.connect_timeout > 0:
        raise SpecError(f"--connect-timeout: expected a number of seconds above 0, got {opts.connect_timeout:g}")
    if opts.resume is None:
        if spec_arg is None:
            raise SpecError("expected SPEC (an experiment file, e.g. datasets/experiments/demo.toml) "
                            "or --resume RUN_DIR")
        spec = spec_arg if isinstance(spec_arg, Spec) else load_spec(spec_arg, games=opts.games)
        if spec.meta:                      # a [meta] loop plays one ordinary run per iteration (psro.py)
            raise SpecError(f"{spec.source}: key 'meta': a metagame loop, played by `protolab run SPEC` one run per "
                            "iteration; it cannot be played as one run")
        return make_plan(spec, allow_code=opts.allow_code), None, None
    if opts.out is not None:
        raise SpecError("--out cannot be combined with --resume: a run stays in its folder")
    run_dir = runfolder.open_location(opts.resume)
    manifest = runfolder.read_manifest(run_dir)
    try:
        spec = spec_from_manifest(manifest["spec"], runfolder.load_inputs(run_dir), str(run_dir / runfolder.MANIFEST))
        manifest["spec_hash"], manifest["pool_hash"], manifest["run_id"], manifest["sessions"]  # noqa: B018
    except (KeyError, TypeError, AttributeError) as e:
        raise RunDirError(f"{run_dir / runfolder.MANIFEST}: not a complete manifest (missing {e}); "
                          "was it edited?") from None
    if spec.hash != manifest["spec_hash"]:
        raise RunDirError(f"{run_dir}: run.json's spec does not match its spec_hash; the folder was edited")
    if spec_arg is not None:
        given = load_spec(spec_arg, games=opts.games)
        if given.hash != spec.hash:
            raise SpecError(f"{spec_arg}: differs from the spec {run_dir} was started with (spec hash "
                            f"{given.hash}, run {spec.hash}); resume without SPEC, or start a new run")
    elif opts.games is not None and opts.games != spec.games:
        raise SpecError(f"--games: the run has {spec.games} games per matchup; a resumed run cannot change it")
    # the layout the run was started with (runs made before shards were capped record none: uncapped)
    plan = make_plan(spec, shard_games=manifest.get("shard_games") or spec.shard_games, allow_code=opts.allow_code)
    if len(plan.shards) != manifest.get("shard_count", len(plan.shards)):
        raise RunDirError(f"{run_dir / runfolder.MANIFEST}: key 'shard_count': expected {len(plan.shards)} shards "
                          f"of {plan.shard_games:,} games, the manifest says {manifest['shard_count']}; was it edited?")
    for arm, pool in zip(spec.arms, plan.pools, strict=True):
        want = manifest.get("pool_hashes", {}).get(arm.name, manifest["pool_hash"])
        if pool.hash != want:
            raise RunDirError(f"{run_dir}: arm {arm.name!r} builds pool {pool.hash} today but the run used {want} "
                              "(a different protolab version?); start a new run")
    if manifest.get("engine_version") != ENGINE_VERSION:
        raise RunDirError(f"{run_dir}: made by engine {manifest.get('engine_version')}, this is {ENGINE_VERSION}; "
                          "start a new run")
    return plan, run_dir, manifest


def _refuse_unlisted(run_dir: Path, plan: Plan, kept: list[dict[str, Any]]) -> None:
    """Refuse to resume a folder holding Parquet files that are neither a verified shard's nor one this
    run will write: a glob over games/*.parquet would read them with the run's own rows. They are the
    user's to move; nothing is deleted, and the folder is left as it was."""
    pending = runfolder.pending_files(run_dir, len(plan.shards), {e["index"] for e in kept}, plan.spec.events)
    stray = runfolder.unlisted_files(run_dir, kept, pending)
    if stray:
        more = f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""
        raise RunDirError(f"{stray[0]}: not a file of this run{more}: run.json does not list it and no shard "
                          f"will write it; move it out of {run_dir} and resume again")


def run(spec_arg: str | Spec | None, opts: RunOptions, console=None) -> RunResult:
    """`protolab run`: validate, then play every missing shard; see the module docstring."""
    plan, run_dir, manifest = prepare(spec_arg, opts)
    say = console.print if console is not None else (lambda *a, **k: None)
    t_start = time.perf_counter()
    recomputed: list[str] = []
    if run_dir is not None:
        assert manifest is not None
        with runfolder.locked(run_dir):
            kept = []
            for entry in manifest["shards"]:
                why = runfolder.verify_shard(run_dir, entry)
                if why is None:
                    kept.append(entry)
                else:
                    recomputed.append(f"shard {entry['index']}: {why}")
            _refuse_unlisted(run_dir, plan, kept)
            manifest["shards"] = kept
            runfolder.remove_temp_files(run_dir)
            for r in recomputed:
                say(f"[yellow]{r}: recomputing[/yellow]")
            manifest["complete"] = len(kept) == len(plan.shards)
            if manifest["complete"]:
                manifest["finished"] = manifest.get("finished") or _now()
            runfolder.write_manifest(run_dir, manifest)      # the verified shards, journal folded in
            runfolder.clear_journal(run_dir)
            if manifest["complete"]:
                say(f"{run_dir}: complete, {len(kept)} shards verified; nothing to do")
                return RunResult(run_dir.public, "complete", plan.total_games, 0.0, 0, 0, len(kept), recomputed,
                                 manifest)

    if run_dir is None:               # a folder the run cannot be written in fails now, before Ray starts
        where = f"--out {opts.out}" if opts.out else f"{plan.spec.source}: key 'output'"
        runfolder.check_writable(opts.out or plan.spec.output, where)
    with StopSignals() as signals:
        return _start_and_play(plan, run_dir, manifest, opts, console, recomputed, t_start, signals)


def _start_and_play(plan: Plan, run_dir: Path | None, manifest: dict[str, Any] | None, opts: RunOptions,
                    console, recomputed: list[str], t_start: float, signals: StopSignals) -> RunResult:
    """Start or join Ray, create the run folder if new, play; Ray is stopped however this ends."""
    spec = plan.spec
    try:
        workers, where = start_ray(opts.address, opts.workers, opts.connect_timeout)
        signals.arm()
        if run_dir is None:
            parent = opts.out or spec.output
            run_dir, run_id = runfolder.create_run_dir(parent, spec.name, datetime.now().strftime("%Y%m%d-%H%M%S"))
            manifest = new_manifest(plan, run_id)
            runfolder.save_inputs(run_dir, {cf.path: cf.text for cf in card_files(spec)})
            runfolder.write_manifest(run_dir, manifest)
        assert manifest is not None
        with runfolder.locked(run_dir):
            result = _play(plan, run_dir, manifest, workers, where, opts, console, recomputed, t_start)
        result.signum = signals.signum or result.signum
        return result
    finally:
        stop_ray()


def _play(plan: Plan, run_dir: Path, manifest: dict[str, Any], workers: int, where: str, opts: RunOptions,
          console, recomputed: list[str], t_start: float) -> RunResult:
    import ray

    say = console.print if console is not None else (lambda *a, **k: None)
    run_id = manifest["run_id"]
    runfolder.make_table_dirs(run_dir)
    token = runfolder.write_token(run_dir)
    dicts = dictionaries(plan)
    done: dict[int, dict[str, Any]] = {e["index"]: e for e in manifest["shards"]}
    todo = deque(s for s in plan.shards if s.index not in done)
    games_done = sum(e["games"] for e in done.values())
    session = {"started": _now(), "where": where, "workers": workers, "address": opts.address,
               "resumed": opts.resume is not None, "shards_computed": 0, "games_computed": 0,
               "driver_received_bytes": 0, "shards_via_driver": 0}
    manifest["sessions"].append(session)
    say(f"Run [bold]{run_id}[/bold]: {plan.total_games:,} games in {len(plan.shards)} shards "
        f"({len(todo)} to play) on {where}\n  -> {run_dir}/")
    remote = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(play_shard)
    inflight: dict[Any, ShardPlan] = {}
    # Locally Ray runs `workers` tasks at once and the rest wait queued; on a cluster an explicit
    # --workers is the number of shards in flight.
    max_inflight = workers if (opts.address and opts.workers) else 2 * workers
    progress = Progress(console, plan.total_games, games_done, opts.show_progress)
    last_manifest = time.perf_counter()
    memory = MemoryLedger()
    status, signum = "failed", 0
    t0 = time.perf_counter()
    watch = BrokenRayWatch(run_dir, lambda: len(done)).start()
    try:
        while todo or inflight:
            while todo and len(inflight) < max_inflight:
                s = todo.popleft()
                inflight[remote.remote(make_task(plan, s, run_id, run_dir, token, dicts))] = s
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=0.5)
            broken = local_ray_failure()
            if broken and not ready:
                raise RunFailed(f"the local Ray stopped ({broken} exited); {len(done)} finished shards are kept "
                                f"in {run_dir}/ (protolab run --resume {run_dir})")
            for ref in ready:
                shard = inflight.pop(ref)
                try:
                    res = ray.get(ref)
                except ray.exceptions.RayTaskError as e:
                    raise RunFailed(f"shard {shard.index} failed: {e.cause!r}; {len(done)} finished shards are "
                                    f"kept in {run_dir}/ (protolab run --resume {run_dir})") from None
                except ray.exceptions.RayError as e:
                    raise RunFailed(f"shard {shard.index} could not be played after {MAX_RETRIES} retries ({e}); "
                                    f"{len(done)} finished shards are kept (protolab run --resume {run_dir})") from None
                entry = res["entry"]
                session["driver_received_bytes"] += received_bytes(res)
                if res["data"] is not None:            # the fallback: the worker could not reach the run
                    say(f"[yellow]shard {shard.index}: the worker on {res['worker'].get('node')} cannot reach "
                        f"{run_dir}; its files came back through the driver (fallback)[/yellow]")
                    session["shards_via_driver"] += 1
                    paths = runfolder.shard_paths(run_dir, shard.name)
                    for kind, blob in res["data"].items():
                        runfolder.write_atomic(paths[kind], blob)
                entry["worker"] = res["worker"]
                memory.worker_reported(res["worker"])
                entry["written_by"] = "driver" if res["data"] is not None else "worker"
                runfolder.append_journal(run_dir, entry)
                done[shard.index] = entry
                games_done += shard.games
                session["shards_computed"] += 1
                session["games_computed"] += shard.games
            progress.update(games_done)
            if time.perf_counter() - last_manifest > MANIFEST_EVERY:
                memory.sample_local()
                manifest["shards"] = list(done.values())
                runfolder.write_manifest(run_dir, manifest)
                last_manifest = time.perf_counter()
        status = "complete"
    except KeyboardInterrupt as e:
        status, signum = "interrupted", getattr(e, "signum", signal.SIGINT)
    finally:
        watch.stop()
        memory.sample_local()
        progress.close()
        # Shards still in flight are not cancelled one by one (ray.cancel can race with a task that
        # is just finishing): they end with the driver's Ray session, and their results are dropped.
        session["ended"] = _now()
        session["seconds"] = round(time.perf_counter() - t0, 3)
        session["outcome"] = status
        session.update(memory.fields(own_peak_rss_mb()))
        manifest["shards"] = list(done.values())
        manifest["complete"] = status == "complete" and len(done) == len(plan.shards)
        if manifest["complete"]:
            manifest["finished"] = _now()
        runfolder.write_manifest(run_dir, manifest)
        if manifest["complete"]:
            runfolder.clear_journal(run_dir)
        runfolder.remove_temp_files(run_dir)
    seconds = time.perf_counter() - t_start
    if status == "interrupted":
        say(f"\n[yellow]Stopped.[/yellow] {len(done)} of {len(plan.shards)} shards ({games_done:,} games) are kept in "
            f"{run_dir}/\nFinish with: protolab run --resume {run_dir}")
    if status == "complete":
        (run_dir / runfolder.TOKEN).unlink(missing_ok=True)
    return RunResult(run_dir.public, status, games_done, seconds, session["games_computed"], session["shards_computed"],
                     len(done) - session["shards_computed"], recomputed, manifest, signum, session)


def received_bytes(result: dict) -> int:
    """The size of what a shard task sent the driver, serialised: a receipt (a few hundred bytes)
    when the worker wrote its files, the files themselves in the fallback."""

    return len(pickle.dumps(result, protocol=5))


def main_run(spec_arg: str | None, opts: RunOptions, console=None) -> int:
    """Run and report; the exit status of `protolab run`."""
    try:
        result = run(spec_arg, opts, console)
    except RunFailed as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        return 1
    if result.status == "interrupted":
        return 128 + result.signum
    if console is not None:
        print_run(result, console)
        if result.status == "complete":
            analyse(result, console)
    if result.session is not None:               # the report and dashboard count in the driver's peak
        record_driver_peak(result.session)
        runfolder.write_manifest(result.run_dir, result.manifest)
    return 0


def analyse(result: RunResult, console) -> None:
    """End a finished run with the analysis report (DuckDB over the new files) and a dashboard
    written into the run folder, so one command goes from spec to answers."""

    arms = [a["name"] for a in result.manifest["spec"].get("arms") or []]
    if result.manifest["spec"].get("tiers"):           # a tier study: every finding under every tier
        study = tier_study(result.run_dir)
        print_tiers(study, console)
        out = Path(result.run_dir) / "dashboard.html"
        write_page(out, render_tiers(study))
        console.print(f"Tier dashboard: {out} (self-contained, works offline; protolab dashboard {result.run_dir} "
                      "--serve)")
        return
    card_value = is_card_value_run(result.run_dir)      # `protolab cardvalue`: its baseline arm, card values included
    if len(arms) > 1 and not card_value:
        ab = ab_compare([f"{result.run_dir}#{a}" for a in arms])
        print_ab(ab, console)
        out = runfolder.open_location(result.run_dir) / "dashboard.html"
        write_page(out, render_ab(ab))
        console.print(f"One arm's full report: protolab report {result.run_dir}#{arms[0]}")
        console.print(f"A/B dashboard: {out} (self-contained, works offline; protolab dashboard {result.run_dir} "
                      "--serve)")
        return
    runs = open_runs([f"{result.run_dir}#{arms[0]}" if card_value else str(result.run_dir)])
    rep = build_report(runs)
    print_report(rep, console)
    out = runfolder.open_location(result.run_dir) / "dashboard.html"
    write_page(out, render(rep))
    console.print(f"Dashboard: {out} (self-contained, works offline; protolab dashboard {result.run_dir} --serve)")
