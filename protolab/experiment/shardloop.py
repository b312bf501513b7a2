"""Hand out a run's shards to Ray and collect them as they finish.

Back-pressure is Ray's idiom: at most `max_pending` tasks are pending, and `ray.wait` over that
set returns what has finished, many at once, so that the driver records each batch of finished
shards in one journal write (ledger.py). Faults are Ray's to retry: a worker that dies
mid-shard has its task run again (a shard's files appear only when whole)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from analysis import runfolder
from protolab.experiment.plan import Plan, ShardPlan
from protolab.experiment.shards import Dictionaries, ShardTask, execute
from sim.pool import ENGINE_VERSION

MAX_RETRIES = 5                    # per shard, for workers or nodes that die (not for errors in code)
WAIT = 0.5                         # seconds one ray.wait blocks, so that a stop or a broken Ray is seen


class RunFailed(RuntimeError):
    """A shard failed for a reason retrying cannot fix (an error in the code or the data)."""


def play_shard(task: ShardTask) -> dict:
    """The Ray task (its process title is `ray::play_shard` while it runs)."""
    return execute(task)


def dictionaries(plan: Plan) -> Dictionaries:
    return Dictionaries.of([a.name for a in plan.spec.arms], plan.pools,
                           [s for a in plan.spec.arms for s in a.strategies])


def make_task(plan: Plan, shard: ShardPlan, run_id: str, run_dir: Any, token: str,
              dicts: Dictionaries) -> ShardTask:
    """Everything a worker needs to play `shard`, on any machine."""
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


Finished = list[tuple[ShardPlan, dict]]         # shards that finished together, with their results


def finished_shards(remote: Any, tasks: Iterable[tuple[ShardPlan, Any]], max_pending: int, busy: int,
                    broken: Callable[[], str | None], kept: Callable[[], str]) -> Iterator[Finished]:
    """Submit `tasks` ((shard, task argument), built as they are submitted) to the Ray remote
    function `remote`, at most `max_pending` at a time; yield the finished shards with their
    results in batches, an empty one every WAIT seconds without any. Each wait returns once all but
    `busy` pending tasks (the workers' worth, kept running meanwhile) have finished, so a batch is
    as large as it can be without idling a worker. RunFailed when a shard fails for good or
    `broken()` names a dead part of the local Ray; `kept()` says what is kept then."""
    import ray

    pending: dict[Any, ShardPlan] = {}
    tasks = iter(tasks)
    while True:
        for shard, task in itertools.islice(tasks, max(0, max_pending - len(pending))):
            pending[remote.remote(task)] = shard
        if not pending:
            return
        ready, _ = ray.wait(list(pending), num_returns=max(1, len(pending) - busy), timeout=WAIT)
        why = broken()
        if why and not ready:
            raise RunFailed(f"the local Ray stopped ({why} exited); {kept()}")
        yield [(pending.pop(ref), res) for ref, res in zip(ready, _results(ready, pending, kept), strict=True)]


def _results(refs: list, pending: dict[Any, ShardPlan], kept: Callable[[], str]) -> list[dict]:
    """The results of finished tasks; RunFailed naming the shard that failed."""
    import ray

    try:
        return ray.get(refs)
    except ray.exceptions.RayError:
        return [_result(ref, pending[ref], kept) for ref in refs]        # which one failed: its error says


def _result(ref: Any, shard: ShardPlan, kept: Callable[[], str]) -> dict:
    import ray

    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        raise RunFailed(f"shard {shard.index} failed: {e.cause!r}; {kept()}") from None
    except ray.exceptions.RayError as e:
        raise RunFailed(f"shard {shard.index} could not be played after {MAX_RETRIES} retries ({e}); "
                        f"{kept()}") from None
