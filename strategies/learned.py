"""Training examples for the learned player: games played at C level by built seats, one row per
(game, turn end, seat view) with that seat's features and the game's result for it.

    rows = examples(pool, range(1000), ("greedy", "greedy"), explore=0.1)
    rows["features"]   float32, n x len(FEATURES)   (strategies/_features.pyx)
    rows["outcome"]    float32: 1 the viewing seat won, 0 it lost, 0.5 a draw

The position of a row is the one the learned player's model is asked about: the end of a turn
(after its End phase, before the next turn starts)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sim.batch import play_columns
from sim.pool import Pool
from strategies._features import FeatureProbe, Recorder
from strategies.seats import make_seats

EVERY = ("turn",)


def examples(
    pool: Pool,
    seeds: Sequence[int] | np.ndarray,
    strategies: Sequence[str] = ("greedy", "greedy"),
    draft: str | Sequence[str] = "random",
    explore: float = 0.0,
    every: str = "turn",
    turn_cap: int = 200,
) -> dict[str, np.ndarray]:
    """Play one game per seed (seeds distinct) and return its rows: `seed` (uint64), `turn`
    (int16), `player` (int8, whose view), `features` (float32) and `outcome` (float32, for that
    view). `explore`: the probability that a seat takes a uniformly random action at an action
    decision, drawn from the seat's own stream (deterministic for a seed)."""
    if every not in EVERY:
        raise ValueError(f"every={every!r}: expected one of {', '.join(EVERY)}")
    if not 0.0 <= explore <= 1.0:
        raise ValueError(f"explore={explore!r}: expected a probability 0..1")
    seeds = np.ascontiguousarray(np.asarray(seeds, dtype=np.uint64))
    if len(np.unique(seeds)) != len(seeds):
        raise ValueError("examples: seeds must be distinct (a row names its game by its seed)")
    seats = make_seats(pool, strategies, draft)
    recorder = Recorder(float(explore))
    recorder.install(*seats.configs)
    cols = play_columns_for(pool, seeds, seats, turn_cap)
    rows = recorder.rows()
    order = np.argsort(seeds)
    game = order[np.searchsorted(seeds[order], rows["seed"])]
    winner = cols["winner"][game]
    rows["outcome"] = np.where(winner == 2, 0.5, (winner == rows["player"]).astype(np.float32)).astype(np.float32)
    return rows


def play_columns_for(pool: Pool, seeds: np.ndarray, seats, turn_cap: int) -> dict[str, np.ndarray]:
    """The games of built seats (their trios, if a fixed draft names them)."""
    return play_columns(
        pool, seeds, seats.configs, turn_cap=turn_cap, protocols=[seats.trios] if seats.trios is not None else None
    )


def features_of(state, player: int, permute_seed: int = -1) -> np.ndarray:
    """The feature vector (len(FEATURES)) of a sim.state.State's position at its pending decision,
    from `player`'s seat; with permute_seed >= 0, after re-dealing what the deciding seat cannot
    see (honesty tests: the vector of the deciding seat must not change)."""
    if state.pending() is None:
        raise ValueError("features_of: the game has no pending decision")
    probe = FeatureProbe(int(player))
    state.core.decide_with(probe.seat, permute_seed)
    return probe.values()
