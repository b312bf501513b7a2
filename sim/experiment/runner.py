"""Drive a run on Ray: start or join Ray, hand out shards, record each finished shard at once,
show progress, and stop cleanly on Ctrl-C with every finished shard kept.

Faults are Ray's to retry: a worker that dies mid-shard has its task run again (the shard's files
appear only when whole, so a half-written attempt leaves at most a hidden temporary file, removed
at the end). A driver that dies loses nothing recorded: `--resume` verifies every recorded shard
by checksum and plays only what is missing or damaged."""

from __future__ import annotations

import contextlib
import logging
import os
import platform
import resource
import signal
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sim.experiment import dataset
from sim.experiment.dataset import RunDirError
from sim.experiment.plan import Plan, ShardPlan, card_files, make_plan
from sim.experiment.seeds import SEED_SCHEME
from sim.experiment.shards import Dictionaries, ShardTask, execute
from sim.experiment.spec import SpecError, load_spec, spec_from_manifest
from sim.pool import ENGINE_VERSION
from sim.record import END_REASONS

MAX_RETRIES = 5                    # per shard, for workers or nodes that die (not for errors in code)
MANIFEST_EVERY = 5.0               # seconds between run.json rewrites (the journal covers the gap)
LOCAL_IP = "127.0.0.1"


class RunFailed(RuntimeError):
    """A shard failed for a reason retrying cannot fix (an error in the code or the data)."""


@dataclass
class RunOptions:
    workers: int | None = None
    address: str | None = None
    out: str | None = None
    resume: str | None = None
    games: int | None = None
    show_progress: bool = True


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


def play_shard(task: ShardTask) -> dict:
    """The Ray task (its process title is `ray::play_shard` while it runs)."""
    return execute(task)


# -- versions and dictionaries ----------------------------------------------------------------------

def protolab_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("protolab")
    except PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
        if pyproject.is_file():
            import tomllib

            return tomllib.loads(pyproject.read_text())["project"]["version"]
        return "unknown"


def versions() -> dict[str, str]:
    import numpy
    import pyarrow
    import ray

    return {"python": platform.python_version(), "numpy": numpy.__version__, "pyarrow": pyarrow.__version__,
            "ray": ray.__version__}


def dictionaries(plan: Plan) -> Dictionaries:
    from sim.engine._core import constants

    kinds = constants()["event_kind"]
    hashes: list[str] = []
    for p in plan.pools:
        if p.hash not in hashes:
            hashes.append(p.hash)
    return Dictionaries(
        arms=tuple(a.name for a in plan.spec.arms),
        pool_hashes=tuple(hashes),
        strategies=tuple(sorted({s for a in plan.spec.arms for s in a.strategies})),
        protocols=tuple(sorted({n for p in plan.pools for n in p.protocols})),
        cards=tuple(sorted({c.name for p in plan.pools for c in p.cards})),
        end_reasons=tuple(END_REASONS[i] for i in sorted(END_REASONS)),
        event_kinds=tuple(kinds[k] for k in sorted(kinds)),
    )


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
        seed=spec.seed, swap=spec.swap, turn_cap=spec.turn_cap, events=spec.events, spec_hash=spec.hash,
        engine_version=ENGINE_VERSION, dicts=dicts, run_dir=str(run_dir.resolve()), token=token)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_manifest(plan: Plan, run_id: str) -> dict[str, Any]:
    spec = plan.spec
    return {
        "run_id": run_id, "format": dataset.FORMAT, "complete": False,
        "spec": spec.to_dict(), "spec_hash": spec.hash,
        "pool_hash": plan.pools[0].hash, "pool_hashes": {a.name: p.hash for a, p in zip(spec.arms, plan.pools,
                                                                                         strict=True)},
        "engine_version": ENGINE_VERSION, "protolab_version": protolab_version(), "versions": versions(),
        "seed_scheme": SEED_SCHEME,
        "games": plan.total_games, "arms": len(spec.arms), "matchups": plan.n_matchups,
        "games_per_matchup": spec.games, "shard_count": len(plan.shards),
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


def start_ray(address: str | None, workers: int | None) -> tuple[int, str]:
    """Join `address`, or start a local Ray on 127.0.0.1 only; returns (workers, where)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if not address:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")     # a one-node, local-only Ray
    import ray

    _quiet_ray_logs()
    if address:
        try:
            with _neutral_cwd():
                ray.init(address=address, logging_level=logging.ERROR, log_to_driver=False)
        except Exception as e:  # noqa: BLE001 - Ray raises several kinds; all mean "cannot join"
            raise RunDirError(f"--address {address}: cannot join the Ray cluster there ({e})") from None
        cpus = int(ray.cluster_resources().get("CPU", 1))
        return (workers or max(1, cpus)), f"Ray cluster at {address} ({cpus} CPUs)"
    root = str(Path(__file__).resolve().parents[2])
    if "site-packages" not in root and "dist-packages" not in root:
        # a source checkout: let the workers import this very code
        parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in parts:
            os.environ["PYTHONPATH"] = os.pathsep.join([root, *parts])
    n = workers or os.cpu_count() or 1
    with _neutral_cwd():
        ray.init(num_cpus=n, include_dashboard=False, _node_ip_address=LOCAL_IP, logging_level=logging.ERROR,
                 log_to_driver=False)
    return n, f"local Ray on {LOCAL_IP} ({n} workers)"


def stop_ray() -> None:
    import ray

    if ray.is_initialized():
        ray.shutdown()


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


# -- the run ----------------------------------------------------------------------------------------

def prepare(spec_arg: str | None, opts: RunOptions) -> tuple[Plan, Path | None, dict[str, Any] | None]:
    """All validation, before anything is started or written: (plan, run folder to resume, manifest)."""
    if opts.workers is not None and opts.workers < 1:
        raise SpecError(f"--workers: expected at least 1, got {opts.workers}")
    if opts.resume is None:
        if spec_arg is None:
            raise SpecError("expected SPEC (an experiment file, e.g. datasets/experiments/demo.toml) "
                            "or --resume RUN_DIR")
        return make_plan(load_spec(spec_arg, games=opts.games)), None, None
    if opts.out is not None:
        raise SpecError("--out cannot be combined with --resume: a run stays in its folder")
    run_dir = Path(opts.resume)
    manifest = dataset.read_manifest(run_dir)
    try:
        spec = spec_from_manifest(manifest["spec"], dataset.load_inputs(run_dir), str(run_dir / dataset.MANIFEST))
        manifest["spec_hash"], manifest["pool_hash"], manifest["run_id"], manifest["sessions"]  # noqa: B018
    except (KeyError, TypeError, AttributeError) as e:
        raise RunDirError(f"{run_dir / dataset.MANIFEST}: not a complete manifest (missing {e}); "
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
    plan = make_plan(spec)
    for arm, pool in zip(spec.arms, plan.pools, strict=True):
        want = manifest.get("pool_hashes", {}).get(arm.name, manifest["pool_hash"])
        if pool.hash != want:
            raise RunDirError(f"{run_dir}: arm {arm.name!r} builds pool {pool.hash} today but the run used {want} "
                              "(a different protolab version?); start a new run")
    if manifest.get("engine_version") != ENGINE_VERSION:
        raise RunDirError(f"{run_dir}: made by engine {manifest.get('engine_version')}, this is {ENGINE_VERSION}; "
                          "start a new run")
    return plan, run_dir, manifest


def run(spec_arg: str | None, opts: RunOptions, console=None) -> RunResult:
    """`protolab run`: validate, then play every missing shard; see the module docstring."""
    plan, run_dir, manifest = prepare(spec_arg, opts)
    spec = plan.spec
    say = console.print if console is not None else (lambda *a, **k: None)
    t_start = time.perf_counter()
    recomputed: list[str] = []
    if run_dir is not None:
        assert manifest is not None
        with dataset.locked(run_dir):
            kept = []
            for entry in manifest["shards"]:
                why = dataset.verify_shard(run_dir, entry)
                if why is None:
                    kept.append(entry)
                else:
                    recomputed.append(f"shard {entry['index']}: {why}")
            manifest["shards"] = kept
            dataset.remove_temp_files(run_dir)
            for r in recomputed:
                say(f"[yellow]{r}: recomputing[/yellow]")
            manifest["complete"] = len(kept) == len(plan.shards)
            if manifest["complete"]:
                manifest["finished"] = manifest.get("finished") or _now()
            dataset.write_manifest(run_dir, manifest)      # the verified shards, journal folded in
            dataset.clear_journal(run_dir)
            if manifest["complete"]:
                say(f"{run_dir}: complete, {len(kept)} shards verified; nothing to do")
                return RunResult(run_dir, "complete", plan.total_games, 0.0, 0, 0, len(kept), recomputed, manifest)

    workers, where = start_ray(opts.address, opts.workers)
    try:
        if run_dir is None:
            parent = Path(opts.out or spec.output)
            run_dir, run_id = dataset.create_run_dir(parent, spec.name, datetime.now().strftime("%Y%m%d-%H%M%S"))
            manifest = new_manifest(plan, run_id)
            dataset.save_inputs(run_dir, {cf.path: cf.text for cf in card_files(spec)})
            dataset.write_manifest(run_dir, manifest)
        assert manifest is not None
        with dataset.locked(run_dir):
            return _play(plan, run_dir, manifest, workers, where, opts, console, recomputed, t_start)
    finally:
        stop_ray()


def _play(plan: Plan, run_dir: Path, manifest: dict[str, Any], workers: int, where: str, opts: RunOptions,
          console, recomputed: list[str], t_start: float) -> RunResult:
    import ray

    say = console.print if console is not None else (lambda *a, **k: None)
    run_id = manifest["run_id"]
    dataset.make_table_dirs(run_dir)
    token = dataset.write_token(run_dir)
    dicts = dictionaries(plan)
    done: dict[int, dict[str, Any]] = {e["index"]: e for e in manifest["shards"]}
    todo = deque(s for s in plan.shards if s.index not in done)
    games_done = sum(e["games"] for e in done.values())
    session = {"started": _now(), "where": where, "workers": workers, "address": opts.address,
               "resumed": opts.resume is not None, "shards_computed": 0, "games_computed": 0}
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
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    status = "failed"
    t0 = time.perf_counter()
    try:
        while todo or inflight:
            while todo and len(inflight) < max_inflight:
                s = todo.popleft()
                inflight[remote.remote(make_task(plan, s, run_id, run_dir, token, dicts))] = s
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=0.5)
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
                if res["data"] is not None:            # the worker could not see the run folder
                    paths = dataset.shard_paths(run_dir, shard.name)
                    for kind, blob in res["data"].items():
                        dataset.write_atomic(paths[kind], blob)
                entry["worker"] = res["worker"]
                entry["written_by"] = "driver" if res["data"] is not None else "worker"
                dataset.append_journal(run_dir, entry)
                done[shard.index] = entry
                games_done += shard.games
                session["shards_computed"] += 1
                session["games_computed"] += shard.games
            progress.update(games_done)
            if time.perf_counter() - last_manifest > MANIFEST_EVERY:
                manifest["shards"] = list(done.values())
                dataset.write_manifest(run_dir, manifest)
                last_manifest = time.perf_counter()
        status = "complete"
    except KeyboardInterrupt:
        status = "interrupted"
    finally:
        signal.signal(signal.SIGINT, previous)
        progress.close()
        # Shards still in flight are not cancelled one by one (ray.cancel can race with a task that
        # is just finishing): they end with the driver's Ray session, and their results are dropped.
        session["ended"] = _now()
        session["seconds"] = round(time.perf_counter() - t0, 3)
        session["outcome"] = status
        session["driver_peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        manifest["shards"] = list(done.values())
        manifest["complete"] = status == "complete" and len(done) == len(plan.shards)
        if manifest["complete"]:
            manifest["finished"] = _now()
        dataset.write_manifest(run_dir, manifest)
        if manifest["complete"]:
            dataset.clear_journal(run_dir)
        dataset.remove_temp_files(run_dir)
    seconds = time.perf_counter() - t_start
    if status == "interrupted":
        say(f"\n[yellow]Stopped.[/yellow] {len(done)} of {len(plan.shards)} shards ({games_done:,} games) are kept in "
            f"{run_dir}/\nFinish with: protolab run --resume {run_dir}")
    if status == "complete":
        (run_dir / dataset.TOKEN).unlink(missing_ok=True)
    return RunResult(run_dir, status, games_done, seconds, session["games_computed"], session["shards_computed"],
                     len(done) - session["shards_computed"], recomputed, manifest)


def main_run(spec_arg: str | None, opts: RunOptions, console=None) -> int:
    """Run and report; the exit status of `protolab run`."""
    try:
        result = run(spec_arg, opts, console)
    except RunFailed as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        return 1
    if result.status == "interrupted":
        return 130
    if console is not None:
        from sim.experiment.report import print_report

        print_report(result, console)
        if result.status == "complete":
            analyse(result, console)
    return 0


def analyse(result: RunResult, console) -> None:
    """End a finished run with the analysis report (DuckDB over the new files) and a dashboard
    written into the run folder, so one command goes from spec to answers."""
    from analysis.dashboard import render
    from analysis.open import open_runs
    from analysis.report import build_report
    from analysis.report import print_report as print_analysis

    arms = [a["name"] for a in result.manifest["spec"].get("arms") or []]
    if len(arms) > 1:
        from analysis.compare import compare_runs, print_comparison

        for variant in arms[1:]:
            base, var = f"{result.run_dir}#{arms[0]}", f"{result.run_dir}#{variant}"
            console.print(f"\n[bold]{variant} vs {arms[0]}[/bold] (protolab compare {base} {var})")
            print_comparison(compare_runs(open_runs([base]), open_runs([var])), console)
        console.print(f"One arm's full report: protolab report {result.run_dir}#{arms[0]}")
        return
    runs = open_runs([str(result.run_dir)])
    rep = build_report(runs)
    print_analysis(rep, console)
    out = Path(result.run_dir) / "dashboard.html"
    out.write_text(render(rep), encoding="utf-8")
    console.print(f"Dashboard: {out} (self-contained, works offline; protolab dashboard {result.run_dir} --serve)")
