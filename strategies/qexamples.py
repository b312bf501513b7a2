"""Training examples for the action-value player: games played at C level by built seats, one row per
(action decision, action weighed) with the deciding seat's view and the action's features.

    rows = qexamples(pool, range(1000), ("learned", "learned"), explore=0.05)
    rows["inputs"]     float32, n x (len(FEATURES) + len(ACTION_FEATURES))  (strategies/_qlearned.pyx)
    rows["teacher"]    the teacher's value of the action, 0..1 (the learned player's model value at the
                       end of the action's turn, a search's mean result); -1 where it gave none
    rows["taken"]      1 for the action played
    rows["outcome"]    the game's result for the deciding seat (1, 0, 0.5): the Monte Carlo return"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.pool import Pool
from strategies._qlearned import QRecorder
from strategies.learned import play_columns_for
from strategies.seats import make_seats


def qexamples(
    pool: Pool,
    seeds: Sequence[int] | np.ndarray,
    strategies: Sequence[str] = ("learned", "learned"),
    draft: str | Sequence[str] = "random",
    explore: float = 0.0,
    turn_cap: int = 200,
) -> dict[str, Any]:
    """Play one game per seed (distinct seeds) and return its rows (module docstring). `explore`: the
    probability of a uniform action at a decision, from the seat's own stream (a seed is one game)."""
    if not 0.0 <= explore <= 1.0:
        raise ValueError(f"explore={explore!r}: expected a probability 0..1")
    seeds = np.ascontiguousarray(np.asarray(seeds, dtype=np.uint64))
    if len(np.unique(seeds)) != len(seeds):
        raise ValueError("qexamples: seeds must be distinct (a row names its game by its seed)")
    seats = make_seats(pool, strategies, draft)
    recorder = QRecorder(float(explore))
    recorder.install(*seats.configs)
    cols = play_columns_for(pool, seeds, seats, turn_cap)
    rows: dict[str, Any] = recorder.rows()
    order = np.argsort(seeds)
    game = order[np.searchsorted(seeds[order], rows["seed"])]
    winner = cols["winner"][game]
    rows["outcome"] = np.where(winner == 2, 0.5, (winner == rows["player"]).astype(np.float32)).astype(np.float32)
    return rows
