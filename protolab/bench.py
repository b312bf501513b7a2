"""`protolab bench`: whole games per second on one core (a strategy against itself, random drafts)."""

from __future__ import annotations

import os
import time
from typing import Any

from strategies._learned import DENSE_BUILD

from protolab.experiment.jobs import OnRay
from sim.batch import play_columns
from sim.pool import Pool, load_pool
from strategies.seats import Seats, make_seats


def run_bench(
    pool: Pool, seats: Seats, strategy: str, games: int = 20000, seed: int = 1, repeats: int = 3
) -> dict[str, Any]:
    """Time `repeats` runs of the same fixed seeds in this process (one core) with these seats (both
    playing the spec `strategy`) and report the best.

    `decisions_per_second` counts turns per second: each turn is one action decision (both seats
    run the strategy), the decision the search bots spend their budget on, so it compares bots'
    cost per decision whatever their games' lengths."""
    best = float("inf")
    turns = 0.0
    play_columns(pool, range(seed, seed + max(1, min(games // 10, 500))), seats.configs)  # warm-up
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        cols = play_columns(pool, range(seed, seed + games), seats.configs)
        best = min(best, time.perf_counter() - t0)
        turns = float(cols["turns"].mean())
    return {
        "games": games,
        "seconds": round(best, 4),
        "games_per_second": round(games / best, 1),
        "turns_per_game": round(turns, 2),
        "decisions_per_second": round(games * turns / best, 1),
        "strategy": strategy,
        "pool_hash": pool.hash,
        "repeats": max(1, repeats),
        "cpu_count": os.cpu_count(),
        "dense_build": DENSE_BUILD,  # the model layers' build this CPU runs (strategies/_dense.pxi)
    }


_POOLS: dict[tuple[str, ...], Pool] = {}


def _ray_play(job: tuple[tuple[str, ...], str, int, int]) -> tuple[int, float]:
    """One shard of the batch path (sets, strategy, first seed, games), as the runner's Ray tasks
    play it (no Parquet writing); the pool is compiled once per worker process, as the runner does."""

    sets, strategy, first, games = job
    pool = _POOLS.get(sets) or _POOLS.setdefault(sets, load_pool(sets=sets))
    t0 = time.perf_counter()
    play_columns(pool, range(first, first + games), make_seats(pool, (strategy, strategy)).configs, events=True)
    return games, time.perf_counter() - t0


def run_ray_bench(
    pool: Pool, workers: int = 2, games: int = 200000, seed: int = 1, strategy: str = "random", shard: int = 10000
) -> dict[str, Any]:
    """The runner's batch path under a local Ray with `workers` workers: whole-run games/s, and per
    worker, timed after every worker has played a warm-up shard (Ray start-up excluded)."""
    sets = tuple(sorted({pool.protocol_sets[p] for p in pool.protocols}))
    runner = OnRay(None, workers)
    n, where = runner.workers, runner.where
    try:
        runner.map(_ray_play, [(sets, strategy, seed, 500)] * n)  # warm-up
        t0 = time.perf_counter()
        results = runner.map(
            _ray_play, [(sets, strategy, seed + i, min(shard, games - i)) for i in range(0, games, shard)]
        )
        done = sum(g for g, _ in results)
        wall = time.perf_counter() - t0
    finally:
        runner.close()
    return {
        "games": done,
        "workers": n,
        "seconds": round(wall, 3),
        "games_per_second": round(done / wall, 1),
        "games_per_second_per_worker": round(done / wall / n, 1),
        "strategy": strategy,
        "where": where,
        "events": True,
        "pool_hash": pool.hash,
    }
