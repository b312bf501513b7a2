"""`protolab run`: validate a spec (or a run folder to resume), then play every missing shard on
Ray and record each as it finishes; Ctrl-C stops cleanly with every finished shard kept.

The parts: session.py starts or joins Ray and ends it however the run ends; shardloop.py hands out
the shards through the job mapper of every feature (jobs.py: Ray's back-pressure, a lost worker's
task run again); ledger.py records them (run.json, the journal, receipts). A driver that dies loses
nothing recorded: `--resume` verifies every recorded shard by checksum and plays only what is
missing or damaged."""

from __future__ import annotations

import argparse
import dataclasses
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console

from analysis.runs import runfolder
from analysis.runs.manifest import Manifest, ShardEntry
from analysis.runs.runfolder import RunDirError
from analysis.runs.storage import Location
from analysis.runs.verify import stray_files
from analysis.studies import open_study
from protolab.experiment.jobs import in_flight, remote
from protolab.experiment.progress import Progress
from protolab.experiment.run import nodes
from protolab.experiment.run.ledger import Ledger, new_manifest, record_verified, verify_recorded
from protolab.experiment.run.memory import record_driver_peak
from protolab.experiment.run.nodes import NodeWatch
from protolab.experiment.run.plan import Plan, ShardPlan, card_files, make_plan
from protolab.experiment.run.report import print_run
from protolab.experiment.run.shardloop import (
    RunFailed,
    dictionaries,
    finished_shards,
    make_task,
    play_shard,
    shards_per_task,
)
from protolab.experiment.run.stopping import batches, planned_shards, play_until_settled
from protolab.experiment.session import (
    CONNECT_TIMEOUT,
    BrokenRayWatch,
    StopSignals,
    local_ray_failure,
    start_ray,
    stop_ray,
)
from protolab.experiment.spec import Spec, SpecError, load_spec, parse_spec
from sim.pool import ENGINE_VERSION

__all__ = [
    "RunFailed",
    "RunOptions",
    "RunResult",
    "analyse",
    "dictionaries",
    "main_run",
    "make_task",
    "new_manifest",
    "prepare",
    "run",
    "start_ray",
    "stop_ray",
]


@dataclass
class RunOptions:
    """How `run` plays a spec: the `protolab run` command's options.

    Attributes:
        workers: shards played at once (a local Ray with this many CPUs; on a cluster, tasks in
            flight); None: every core, or every CPU of the cluster.
        address: a running Ray cluster to join instead of starting a local Ray.
        out: where the run folder is made, instead of the spec's `output`.
        resume: a run folder to finish (only its missing shards are played).
        games: games per matchup instead of the spec's `games` (part of the spec hash).
        show_progress: draw the progress bar.
        connect_timeout: seconds to wait for `address` to answer.
        allow_code: run the Python modules the spec names as user strategies.

    Example:
        >>> opts = RunOptions(games=2000, show_progress=False)
        >>> opts.workers is None, opts.games
        (True, 2000)
    """

    workers: int | None = None
    address: str | None = None
    out: str | None = None
    resume: str | None = None
    games: int | None = None
    show_progress: bool = True
    connect_timeout: float = CONNECT_TIMEOUT
    allow_code: bool = False  # the spec may name Python user strategies (plan.check_seats)

    @classmethod
    def of_args(cls, args: argparse.Namespace, **given: Any) -> RunOptions:
        """The options protolab.commands.common.add_run_folder declares, as the command line gave them; `given`: the
        fields a command sets its own way (run's --games, cardvalue's allow_code)."""
        return cls(
            workers=args.workers,
            address=args.address,
            connect_timeout=args.connect_timeout,
            out=args.out,
            resume=args.resume,
            show_progress=not args.no_progress,
            **given,
        )


@dataclass
class RunResult:
    run_dir: Path | Location  # a pathlib.Path when local (Location.public)
    status: str  # "complete", "interrupted", "failed"
    games: int  # games in the run folder now
    seconds: float  # this session, Ray start-up included
    games_computed: int = 0  # games played by this session
    computed_shards: int = 0
    kept_shards: int = 0
    recomputed: list[str] = field(default_factory=list)
    manifest: Manifest | None = None  # run.json as this session leaves it
    signum: int = signal.SIGINT  # the signal that stopped an interrupted run
    session: dict[str, Any] | None = None  # this session's entry in run.json, if it played


# -- the run ----------------------------------------------------------------------------------------


def prepare(spec_arg: str | Spec | None, opts: RunOptions) -> tuple[Plan, Location | None, Manifest | None]:
    """All validation, before anything is started or written: (plan, run folder to resume, manifest).
    `spec_arg` is a spec file or name, or a Spec built in code (`protolab cardvalue`)."""
    if opts.workers is not None and opts.workers < 1:
        raise SpecError(f"--workers: expected at least 1, got {opts.workers}")
    if not opts.connect_timeout > 0:
        raise SpecError(f"--connect-timeout: expected a number of seconds above 0, got {opts.connect_timeout:g}")
    if opts.resume is None:
        return make_plan(_new_spec(spec_arg, opts), allow_code=opts.allow_code), None, None
    if opts.out is not None:
        raise SpecError("--out cannot be combined with --resume: a run stays in its folder")
    run_dir = runfolder.open_location(opts.resume)
    manifest = runfolder.read_manifest(run_dir)  # its keys and types checked (analysis/runs/manifest.py)
    spec = _stored_spec(run_dir, manifest)
    _check_resumed_as_given(spec_arg, opts, spec, run_dir)
    # the layout the run was started with (runs made before shards were capped record none: uncapped)
    plan = make_plan(spec, shard_games=manifest.shard_games or spec.shard_games, allow_code=opts.allow_code)
    _check_layout(run_dir, manifest, plan)
    return plan, run_dir, manifest


def _new_spec(spec_arg: str | Spec | None, opts: RunOptions) -> Spec:
    """The spec of a new run: one played as one run (not a [meta] loop or a [tune] search)."""
    if spec_arg is None:
        raise SpecError("expected SPEC (an experiment file, e.g. datasets/experiments/demo.toml) or --resume RUN_DIR")
    spec = spec_arg if isinstance(spec_arg, Spec) else load_spec(spec_arg, games=opts.games)
    if spec.meta:  # a [meta] loop plays one ordinary run per iteration (psro.py)
        raise SpecError(
            f"{spec.source}: key 'meta': a metagame loop, played by `protolab run SPEC` one run per "
            "iteration; it cannot be played as one run"
        )
    if spec.tune:  # a [tune] search plays its own candidates (tune.py)
        raise SpecError(f"{spec.source}: key 'tune': a balance search; run it with `protolab tune SPEC`")
    return spec


def _stored_spec(run_dir: Location, manifest: Manifest) -> Spec:
    """The spec a resumed run was started with, exactly as stored; its card files come from the run's
    copies (card_texts), never from beside `base`."""
    spec = parse_spec(
        manifest.spec.stored,
        str(run_dir / runfolder.MANIFEST),
        run_dir,  # type: ignore[arg-type]
        card_texts=runfolder.load_inputs(run_dir),
        within="spec",
    )
    if spec.hash != manifest.spec_hash:
        raise RunDirError(f"{run_dir}: run.json's spec does not match its spec_hash; the folder was edited")
    return spec


def _check_resumed_as_given(spec_arg: str | Spec | None, opts: RunOptions, spec: Spec, run_dir: Location) -> None:
    """A SPEC or --games given with --resume must be the run's own."""
    if spec_arg is not None:
        given = spec_arg if isinstance(spec_arg, Spec) else load_spec(spec_arg, games=opts.games)
        if given.hash != spec.hash:
            raise SpecError(
                f"{spec_arg}: differs from the spec {run_dir} was started with (spec hash "
                f"{given.hash}, run {spec.hash}); resume without SPEC, or start a new run"
            )
    elif opts.games is not None and opts.games != spec.games:
        raise SpecError(f"--games: the run has {spec.games} games per matchup; a resumed run cannot change it")


def _check_layout(run_dir: Location, manifest: Manifest, plan: Plan) -> None:
    """The resumed run's plan has the layout, pools and engine its run.json records."""
    if manifest.shard_count is not None and len(plan.shards) != manifest.shard_count:
        raise RunDirError(
            f"{run_dir / runfolder.MANIFEST}: key 'shard_count': expected {len(plan.shards)} shards "
            f"of {plan.shard_games:,} games, the manifest says {manifest.shard_count}; was it edited?"
        )
    for arm, pool in zip(plan.spec.arms, plan.pools, strict=True):
        want = (manifest.pool_hashes or {}).get(arm.name, manifest.pool_hash)
        if pool.hash != want:
            raise RunDirError(
                f"{run_dir}: arm {arm.name!r} builds pool {pool.hash} today but the run used {want} "
                "(a different protolab version?); start a new run"
            )
    if manifest.engine_version != ENGINE_VERSION:
        raise RunDirError(
            f"{run_dir}: made by engine {manifest.engine_version}, this is {ENGINE_VERSION}; start a new run"
        )


def _refuse_unlisted(run_dir: Location, plan: Plan, manifest: Manifest, kept: list[ShardEntry]) -> None:
    """Refuse to resume a folder holding Parquet files that are neither a verified shard's nor one this
    run will write: a glob over games/*.parquet would read them with the run's own rows. They are the
    user's to move; nothing is deleted, and the folder is left as it was."""
    unfinished = dataclasses.replace(manifest, shards=kept, complete=False)
    stray = stray_files(run_dir, unfinished, len(plan.shards))
    if stray:
        more = f" (and {len(stray) - 1} more)" if len(stray) > 1 else ""
        raise RunDirError(
            f"{stray[0]}: not a file of this run{more}: run.json does not list it and no shard "
            f"will write it; move it out of {run_dir} and resume again"
        )


def run(spec_arg: str | Spec | None, opts: RunOptions, console: Console | None = None) -> RunResult:
    """`protolab run`: validate, then play every missing shard; see the module docstring."""
    plan, run_dir, manifest = prepare(spec_arg, opts)
    say = console.print if console is not None else (lambda *a, **k: None)
    t_start = time.perf_counter()
    recomputed: list[str] = []
    if run_dir is not None:
        assert manifest is not None
        with runfolder.locked(run_dir):
            kept, recomputed = verify_recorded(run_dir, manifest.shards)
            _refuse_unlisted(run_dir, plan, manifest, kept)
            record_verified(run_dir, manifest, kept, planned_shards(manifest, len(plan.shards)))
            for r in recomputed:
                say(f"[yellow]{r}: recomputing[/yellow]")
            if manifest.complete:
                say(f"{run_dir}: complete, {len(kept)} shards verified; nothing to do")
                games = sum(e.games for e in kept)
                return RunResult(run_dir.public, "complete", games, 0.0, 0, 0, len(kept), recomputed, manifest)

    if run_dir is None:  # a folder the run cannot be written in fails now, before Ray starts
        where = f"--out {opts.out}" if opts.out else f"{plan.spec.source}: key 'output'"
        runfolder.check_writable(opts.out or plan.spec.output, where)
    with StopSignals() as signals:
        return _start_and_play(plan, run_dir, manifest, opts, console, recomputed, t_start, signals)


def _start_and_play(
    plan: Plan,
    run_dir: Location | None,
    manifest: Manifest | None,
    opts: RunOptions,
    console: Console | None,
    recomputed: list[str],
    t_start: float,
    signals: StopSignals,
) -> RunResult:
    """Start or join Ray, create the run folder if new, play; Ray is stopped however this ends."""
    spec = plan.spec
    result: RunResult | None = None
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
        session = {"where": where, "workers": workers, "address": opts.address, "resumed": opts.resume is not None}
        with runfolder.locked(run_dir):
            ledger = Ledger(run_dir, manifest, plan, session)
            result = _play(plan, ledger, workers, opts, console)
        result.recomputed = recomputed
        result.seconds = time.perf_counter() - t_start
        result.signum = signals.signum or result.signum
        return result
    finally:  # a complete run left nothing in flight: a kept local Ray may serve the next
        complete = result is not None and result.status == "complete"
        stop_ray(clean=complete)
        if run_dir is not None and not complete:
            _remove_temp_files_after(run_dir)


def _remove_temp_files_after(run_dir: Location) -> None:
    """A stopped or failed session's half-written shard files, once its Ray has ended and with it the
    workers that were writing them (removed while they ran, a worker's rename failed and Ray printed
    its traceback under the stop's one line). Another driver already holding the folder cleans them
    itself (record_verified)."""
    try:
        with runfolder.locked(run_dir):
            runfolder.remove_temp_files(run_dir)
    except (RunDirError, OSError):
        pass


def max_pending(workers: int, opts: RunOptions) -> int:
    """Shards in flight at once: locally and by default, the workers' worth running, as many again
    and jobs.QUEUED more waiting in Ray's queue, ready the moment a worker is free (so that the driver
    records what finished in batches: ledger.py); on a cluster an explicit --workers is the number."""
    return in_flight(workers, exact=bool(opts.address and opts.workers))


def drive(
    plan: Plan,
    ledger: Ledger,
    remote: Any,
    pending: int,
    busy: int,
    progress: Progress,
    say: Callable[..., Any],
    group: int = 0,
) -> None:
    """Play every shard the ledger has not recorded with the Ray remote function `remote`, `group`
    shards to a task (0: shardloop.shards_per_task), recording each batch that finishes together
    in one journal write; KeyboardInterrupt stops it."""
    run_dir, run_id = ledger.run_dir, ledger.manifest.run_id
    runfolder.make_table_dirs(run_dir)
    token = runfolder.write_token(run_dir)
    dicts = dictionaries(plan)

    group = group or shards_per_task(plan.shard_games, len(plan.shards) - len(ledger.done), busy)

    watch = NodeWatch(nodes.session_key(run_id, token))

    def play(shards: list[ShardPlan]) -> None:
        tasks = ((s, make_task(plan, s, run_id, run_dir, token, dicts)) for s in shards if s.index not in ledger.done)
        for batch in finished_shards(
            remote, tasks, pending, busy, local_ray_failure, ledger.kept_message, group, watch.submitted
        ):
            ledger.commit(batch, say)
            ledger.nodes_lost(watch.lost(ledger.node_of), say)
            progress.update(ledger.games_done)
            ledger.checkpoint()

    if plan.spec.stop:  # an A/B run that stops when settled: batch by batch, a look after each
        play_until_settled(plan, ledger, play, say)
    else:
        play(plan.shards)
    ledger.nodes_lost(watch.lost(ledger.node_of, final=True), say)  # one lost as the last shards came in
    # Only here, once every shard is in: after a stop or a failure Ray may be going or gone, and a call
    # to its store could wait for it; a stopped session's marks (a few bytes a shard) end with its Ray.
    watch.forget()


def _play(plan: Plan, ledger: Ledger, workers: int, opts: RunOptions, console: Console | None) -> RunResult:
    """Play the missing shards on the Ray this process is connected to; the session's RunResult."""
    say = console.print if console is not None else (lambda *a, **k: None)
    run_dir, session = ledger.run_dir, ledger.session
    todo = len(plan.shards) - len(ledger.done)
    cap = f" at most, in {len(batches(plan))} looks, stopping once settled" if plan.spec.stop else ""
    say(
        f"Run [bold]{ledger.manifest.run_id}[/bold]: {plan.total_games:,} games{cap} in {len(plan.shards)} shards "
        f"({todo} to play) on {session['where']}\n  -> {run_dir}/"
    )
    shard_remote = remote(play_shard)
    progress = Progress(console, plan.total_games, ledger.games_done, opts.show_progress)
    status, signum = "failed", 0
    watch = BrokenRayWatch(run_dir, lambda: len(ledger.done)).start()
    try:
        drive(plan, ledger, shard_remote, max_pending(workers, opts), workers, progress, say)
        status = "complete"
    except KeyboardInterrupt as e:
        status, signum = "interrupted", getattr(e, "signum", signal.SIGINT)
    finally:
        watch.stop()
        progress.close()
        # Shards still in flight are not cancelled one by one (ray.cancel can race with a task that
        # is just finishing): they end with the driver's Ray session, and their results are dropped.
        ledger.close(status)
    done = len(ledger.done)
    if status == "interrupted":
        say(
            f"\n[yellow]Stopped.[/yellow] {done} of {len(plan.shards)} shards ({ledger.games_done:,} games) are kept "
            f"in {run_dir}/\nFinish with: protolab run --resume {run_dir}"
        )
    if status == "complete":
        (run_dir / runfolder.TOKEN).unlink(missing_ok=True)
    return RunResult(
        run_dir.public,
        status,
        ledger.games_done,
        0.0,
        session["games_computed"],
        session["shards_computed"],
        done - session["shards_computed"],
        [],
        ledger.manifest,
        signum,
        session,
    )


def main_run(spec_arg: str | Spec | None, opts: RunOptions, console: Console | None = None) -> int:
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
    if result.session is not None:  # the report and dashboard count in the driver's peak
        record_driver_peak(result.session)
        assert result.manifest is not None  # a session that played leaves its run.json
        runfolder.write_manifest(result.run_dir, result.manifest)
    return 0


def analyse(result: RunResult, console: Console) -> None:
    """End a finished run with its study's report (DuckDB over the new files) and its page written
    into the run folder, so one command goes from spec to answers (analysis/studies)."""

    if result.manifest is None:
        open_study([str(result.run_dir)]).conclude(console, result.run_dir)
        return
    with runfolder.handed(result.run_dir, result.manifest):  # the run.json just written, not parsed again
        open_study([str(result.run_dir)]).conclude(console, result.run_dir)
