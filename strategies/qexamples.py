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
from strategies.learned import checked_seeds, recorded_rows
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
    seeds = checked_seeds(seeds, explore, "qexamples")
    seats = make_seats(pool, strategies, draft)
    return recorded_rows(pool, seeds, seats, QRecorder(float(explore)), turn_cap)
