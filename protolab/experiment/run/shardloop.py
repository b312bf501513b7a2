"""Hand out a run's shards to Ray and collect them as they finish.

The generic part (submit with Ray's back-pressure, at most `max_pending` tasks pending; `ray.wait`
over that set returning what has finished, many at once; a lost worker's task run again; a broken
local Ray seen) is jobs.py's `finished`, as for every feature. This module keeps what is the run's
own: shards grouped into tasks, and the failures named by shard with what is kept. The driver
records each batch of finished shards in one journal write (ledger.py). Tiny shards travel several
to a task (`shards_per_task`): Ray's own cost per task (submit, wait, get: most of the driver's time
per shard, benchmarks/driver.py) is then paid once per group, and the group's receipts come back
together. Faults are Ray's to retry: a worker that dies mid-task has its task run again (a shard's
files appear only when whole, and playing a shard again writes the same bytes)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from analysis.runs import runfolder
from protolab.experiment.jobs import MAX_RETRIES, JobFailed, RayBroken, finished
from protolab.experiment.run import nodes
from protolab.experiment.run.plan import Plan, ShardPlan
from protolab.experiment.run.shards import Dictionaries, ShardTask, execute
from sim.pool import ENGINE_VERSION

TASK_GAMES = 1_000  # games a task carries at least, shards permitting (fewer, larger tasks)
MAX_SHARDS_PER_TASK = 32  # so that a group's receipts stay small and a lost task costs little


class RunFailed(RuntimeError):
    """A shard failed for a reason retrying cannot fix (an error in the code or the data)."""


class ShardFailed(RuntimeError):
    """Raised in a worker: shard `index` of a task's group failed (the cause is in the message)."""

    def __init__(self, index: int, cause: str):
        super().__init__(index, cause)
        self.index, self.cause = index, cause


def shards_per_task(shard_games: int, shards: int, workers: int) -> int:
    """Shards sent in one Ray task: one for shards of TASK_GAMES games or more (every ordinary run),
    more for tiny shards, up to MAX_SHARDS_PER_TASK, and never so many that the `shards` to play
    make fewer than four tasks per worker (every worker busy, batches still recorded as they come)."""
    return max(1, min(MAX_SHARDS_PER_TASK, TASK_GAMES // max(1, shard_games), shards // (4 * max(1, workers))))


def play_shard(tasks: tuple[ShardTask, ...]) -> list[dict[str, Any]]:
    """The Ray task: a group of shards, played one after another, and their receipts (its process
    title is `ray::play_shard` while it runs)."""
    out = []
    nodes.mark_started(nodes.session_key(tasks[0].run_id, tasks[0].token), tasks[0].index)
    for task in tasks:
        try:
            out.append(execute(task))
        except Exception as e:  # noqa: BLE001 - named with its shard, re-raised for Ray to report
            raise ShardFailed(task.index, repr(e)) from e
    return out


def dictionaries(plan: Plan) -> Dictionaries:
    return Dictionaries.of(
        [a.name for a in plan.spec.arms], plan.pools, [s for a in plan.spec.arms for s in a.strategies]
    )


def make_task(plan: Plan, shard: ShardPlan, run_id: str, run_dir: Any, token: str, dicts: Dictionaries) -> ShardTask:
    """Everything a worker needs to play `shard`, on any machine."""
    spec, arm = plan.spec, plan.spec.arms[shard.arm]
    arm_first, games = plan.arm_first[shard.arm], spec.arm_games(arm)
    lo = plan.matchup_of(shard.arm, shard.first_game - arm_first)[0]
    hi = plan.matchup_of(shard.arm, shard.first_game - arm_first + shard.games - 1)[0]
    return ShardTask(
        run_id=run_id,
        index=shard.index,
        name=shard.name,
        arm_index=shard.arm,
        arm_name=arm.name,
        strategies=(arm.strategies[0], arm.strategies[1]),
        sets=tuple(arm.sets),
        cards=tuple((cf.path, cf.text) for cf in arm.cards),
        pool_hash=plan.pools[shard.arm].hash,
        first_game=shard.first_game,
        games=shard.games,
        arm_first_game=arm_first,
        games_per_matchup=games,
        arm_matchup_first=plan.arm_matchups(shard.arm)[0],
        matchup_base=lo,
        matchups=tuple(plan.matchups[lo : hi + 1]) if plan.matchups else (),
        master_seed=spec.seed,
        swap=spec.swap,
        turn_cap=spec.turn_cap,
        events=spec.events,
        spec_hash=spec.hash,
        engine_version=ENGINE_VERSION,
        dicts=dicts,
        run_dir=runfolder.open_location(run_dir).uri,
        token=token,
        draft=tuple(spec.draft.policy) if spec.draft.mode == "draft" else ("random", "random"),
        draft_files=tuple((t.path, t.text) for t in spec.draft.tables),
    )


Finished = list[tuple[ShardPlan, dict[str, Any]]]  # shards that finished together, with their results


def finished_shards(
    remote: Any,
    tasks: Iterable[tuple[ShardPlan, Any]],
    max_pending: int,
    busy: int,
    broken: Callable[[], str | None],
    kept: Callable[[], str],
    group: int = 1,
    submitted: Callable[[list[int]], None] = lambda shards: None,
) -> Iterator[Finished]:
    """Submit `tasks` ((shard, task argument), built as they are submitted), `group` shards to a
    call of the Ray remote function `remote` (play_shard: a tuple of task arguments in, their
    results out), at most `max_pending` calls at a time; yield the finished shards with their
    results in batches, an empty one every jobs.WAIT seconds without any. Each wait returns once all but
    `busy` pending calls (the workers' worth, kept running meanwhile) have finished, so a batch is
    as large as it can be without idling a worker. RunFailed when a shard fails for good or
    `broken()` names a dead part of the local Ray; `kept()` says what is kept then; `submitted` is
    told each call's shard indices as it is submitted (nodes.NodeWatch)."""
    todo = iter(tasks)
    chunks = iter(lambda: list(itertools.islice(todo, group)), [])  # the next `group` shards, as submitted

    def calls() -> Iterator[tuple[list[ShardPlan], tuple[Any, ...]]]:
        for chunk in chunks:
            submitted([shard.index for shard, _ in chunk])
            yield [shard for shard, _ in chunk], tuple(task for _, task in chunk)

    try:
        for batch in finished(remote, calls(), max_pending, busy, broken):
            yield [pair for shards, group_results in batch for pair in zip(shards, group_results, strict=True)]
    except RayBroken as e:
        raise RunFailed(f"{e}; {kept()}") from None
    except JobFailed as e:
        raise RunFailed(f"{_failure(e)}; {kept()}") from None


def _failure(e: JobFailed) -> str:
    """What failed, by shard: the shard that raised, or the group whose task was lost."""
    shards: list[ShardPlan] = e.key
    what = f"shard {shards[0].index}" if len(shards) == 1 else f"shards {shards[0].index} to {shards[-1].index}"
    if isinstance(e.cause, ShardFailed):
        return f"shard {e.cause.index} failed: {e.cause.cause}"
    if e.cause is not None:
        return f"{what} failed: {e.cause!r}"
    return f"{what} could not be played after {MAX_RETRIES} retries ({e.error})"
