"""The driver's ceiling: how many finished shards per second the driver of `protolab run` records.

A run of many tiny shards (2 games each, or --games), recorded by the runner's own loop and ledger
(runner.drive, ledger.Ledger: the journal and run.json in a real folder). Three modes:

  ledger   no Ray: the ledger alone commits real shard receipts in batches of --batch
  stand-in a local Ray whose tasks return a real shard's receipt without playing (the driver and
           Ray's task round trip, not the games)
  play     a local Ray playing the tiny shards for real (what this machine's workers give)

Prints shards committed per second (wall), the driver process's CPU time per shard and the ceiling
it implies (1 / CPU per shard), the journal writes (batches) it took, and the seconds a worker
reports per shard (in mode play, the cost of playing and writing one; --games sets the shard size).

    python benchmarks/driver.py --mode stand-in --shards 5000
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from analysis.runs import runfolder
from protolab.experiment.jobs import remote as ray_remote
from protolab.experiment.progress import Progress
from protolab.experiment.run.ledger import Ledger, new_manifest
from protolab.experiment.run.plan import Plan, make_plan
from protolab.experiment.run.runner import RunOptions, drive, max_pending
from protolab.experiment.run.shardloop import dictionaries, make_task, play_shard
from protolab.experiment.run.shards import execute
from protolab.experiment.session import start_ray, stop_ray
from protolab.experiment.spec import load_spec

SPEC = """
name = "driverbench"
seed = 1
games = {games}
shard_games = {size}
events = "none"
"""


class CountingLedger(Ledger):
    """The ledger, counting its journal writes (one per commit)."""

    writes = 0

    def commit(self, finished, say) -> None:
        if finished:
            self.writes += 1
        super().commit(finished, say)


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def setup(folder: Path, shards: int, size: int) -> tuple[Plan, Path, dict, dict]:
    """The plan, a new run folder, its manifest, and one real shard's receipt (shard 0, played)."""
    (folder / "spec.toml").write_text(SPEC.format(games=size * shards, size=size))
    plan = make_plan(load_spec(folder / "spec.toml"))
    run_dir, run_id = runfolder.create_run_dir(folder / "runs", "driverbench", "bench")
    manifest = new_manifest(plan, run_id)
    runfolder.write_manifest(run_dir, manifest)
    token = runfolder.write_token(run_dir)
    receipt = execute(make_task(plan, plan.shards[0], run_id, run_dir, token, dictionaries(plan)))
    return plan, run_dir, manifest, receipt


def stand_in(receipt: dict):
    """A task that returns `receipt` renamed for each shard of its group, as a worker that played
    them would (shardloop.play_shard's signature)."""

    def play_shard(tasks) -> list[dict]:
        return [
            {
                "entry": receipt["entry"].model_copy(
                    update={"index": t.index, "first_game": t.first_game, "games": t.games}
                ),
                "data": None,
                "worker": receipt["worker"],
            }
            for t in tasks
        ]

    return play_shard


def ledger_only(plan: Plan, ledger: Ledger, receipt: dict, batch: int) -> None:
    todo = plan.shards
    for i in range(0, len(todo), batch):
        finished = list(zip(todo[i : i + batch], stand_in(receipt)(todo[i : i + batch]), strict=True))
        ledger.commit(finished, lambda *a, **k: None)
        ledger.checkpoint()


def measure(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="driverbench-") as tmp:
        plan, run_dir, manifest, receipt = setup(Path(tmp), args.shards, args.games)
        session = {"where": args.mode, "workers": args.workers, "address": None, "resumed": False}
        if args.mode != "ledger":
            workers, _ = start_ray(None, args.workers)
            fn = play_shard if args.mode == "play" else stand_in(receipt)
            remote = ray_remote(fn)
        try:
            ledger = CountingLedger(run_dir, manifest, plan, session)
            t0, c0 = time.perf_counter(), cpu_seconds()
            if args.mode == "ledger":
                ledger_only(plan, ledger, receipt, args.batch)
            else:
                pending = args.pending or max_pending(workers, RunOptions(workers=args.workers))
                drive(
                    plan,
                    ledger,
                    remote,
                    pending,
                    workers,
                    Progress(None, plan.total_games, 0, False),
                    print,
                    args.per_task,
                )
            ledger.close("complete")
            wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        finally:
            if args.mode != "ledger":
                stop_ray()
        n = ledger.session["shards_computed"]
        worker = sum((e.worker or {}).get("seconds", 0.0) for e in ledger.done.values()) / n
        print(
            f"mode {args.mode}: {n:,} shards of {args.games} games in {wall:.2f} s: "
            f"{n / wall:,.0f} shards/s committed; "
            f"driver CPU {1000 * cpu / n:.3f} ms per shard (ceiling {n / cpu:,.0f} shards/s); "
            f"{ledger.writes:,} journal writes ({n / max(1, ledger.writes):.1f} shards each); "
            f"run.json {(run_dir / runfolder.MANIFEST).stat().st_size / 1e6:.2f} MB"
            + (
                f"; worker {1000 * worker:.1f} ms per shard ({1e6 * worker / args.games:.0f} us per game)"
                if args.mode == "play"
                else ""
            )
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=("ledger", "stand-in", "play"), default="stand-in")
    p.add_argument("--shards", type=int, default=5000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--games", type=int, default=2, help="games per shard (even)")
    p.add_argument("--pending", type=int, default=0, help="shards in flight (default: as protolab run)")
    p.add_argument("--batch", type=int, default=16, help="shards per commit in mode ledger")
    p.add_argument("--per-task", type=int, default=0, help="shards per Ray task (default: as protolab run)")
    measure(p.parse_args())


if __name__ == "__main__":
    main()
