"""`protolab bench`: whole games per second on one core (a strategy against itself, random drafts)."""

from __future__ import annotations

import os
import time
from typing import Any

from sim.batch import play_columns
from sim.pool import Pool


def run_bench(pool: Pool, games: int = 20000, seed: int = 1, repeats: int = 3,
              strategy: str = "random") -> dict[str, Any]:
    """Time `repeats` runs of the same fixed seeds in this process (one core) and report the best."""
    best = float("inf")
    turns = 0.0
    strategies = (strategy, strategy)
    play_columns(pool, range(seed, seed + max(1, min(games // 10, 500))), strategies=strategies)   # warm-up
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        cols = play_columns(pool, range(seed, seed + games), strategies=strategies)
        best = min(best, time.perf_counter() - t0)
        turns = float(cols["turns"].mean())
    return {
        "games": games,
        "seconds": round(best, 4),
        "games_per_second": round(games / best, 1),
        "turns_per_game": round(turns, 2),
        "strategy": strategy,
        "pool_hash": pool.hash,
        "repeats": max(1, repeats),
        "cpu_count": os.cpu_count(),
    }
