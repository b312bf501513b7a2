"""Training examples for the learned player: games played at C level by built seats, one row per
(game, turn end, seat view) with that seat's features and the game's result for it.

    rows = examples(pool, range(1000), ("greedy", "greedy"), explore=0.1)
    rows["features"]   float32, n x len(FEATURES)   (strategies/_features.pyx)
    rows["outcome"]    float32: 1 the viewing seat won, 0 it lost, 0.5 a draw

The position of a row is the one the learned player's model is asked about: the end of a turn
(after its End phase, before the next turn starts).

    rows = examples(pool, range(20), ("ismcts:iters=100,leaf=model",) * 2, policy=True)
    rows["policy"]     the search's preference at each root action decision (the policy target): one
                       row per root action it considered, its visit share and the deciding seat's
                       features where that action's turn ends (strategies/_features_policy.pxi)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sim.batch import play_columns
from sim.pool import Pool
from strategies._features import FeatureProbe, Recorder
from strategies.seats import make_seats
from strategies.spec import parse

POLICY_PLAYER = "ismcts"  # the players whose root visits are the policy target

EVERY = ("turn",)


def examples(
    pool: Pool,
    seeds: Sequence[int] | np.ndarray,
    strategies: Sequence[str] = ("greedy", "greedy"),
    draft: str | Sequence[str] = "random",
    explore: float = 0.0,
    every: str = "turn",
    turn_cap: int = 200,
    policy: bool = False,
) -> dict[str, Any]:
    """Play one game per seed (seeds distinct) and return its rows: `seed` (uint64), `turn`
    (int16), `player` (int8, whose view), `features` (float32) and `outcome` (float32, for that
    view). `explore`: the probability that a seat takes a uniformly random action at an action
    decision, drawn from the seat's own stream (deterministic for a seed). `policy`: also
    `rows["policy"]`, the visit shares of the search's root actions (both seats an ismcts), the
    games unchanged."""
    if every not in EVERY:
        raise ValueError(f"every={every!r}: expected one of {', '.join(EVERY)}")
    seeds = checked_seeds(seeds, explore, "examples")
    if policy and any(parse(s).base != POLICY_PLAYER for s in strategies):
        raise ValueError(
            f"examples: policy rows are the root visits of {POLICY_PLAYER} on both seats, got {strategies}"
        )
    seats = make_seats(pool, strategies, draft)
    recorder = Recorder(float(explore), policy)
    rows = recorded_rows(pool, seeds, seats, recorder, turn_cap)
    if policy:
        rows["policy"] = recorder.policy_rows()
    return rows


def checked_seeds(seeds: Sequence[int] | np.ndarray, explore: float, who: str) -> np.ndarray:
    """An example generator's seeds as uint64, checked distinct (a row names its game by its seed),
    after checking its `explore` is a probability; `who` names the generator in the error."""
    if not 0.0 <= explore <= 1.0:
        raise ValueError(f"explore={explore!r}: expected a probability 0..1")
    seeds = np.ascontiguousarray(np.asarray(seeds, dtype=np.uint64))
    if len(np.unique(seeds)) != len(seeds):
        raise ValueError(f"{who}: seeds must be distinct (a row names its game by its seed)")
    return seeds


def recorded_rows(pool: Pool, seeds: np.ndarray, seats, recorder: Any, turn_cap: int) -> dict[str, Any]:
    """The rows of a C recorder (Recorder, QRecorder) installed on the seats, one game per seed, each
    with `outcome`: its game's result for the row's `player` (1 won, 0 lost, 0.5 a draw)."""
    recorder.install(*seats.configs)
    cols = play_columns_for(pool, seeds, seats, turn_cap)
    rows: dict[str, Any] = recorder.rows()
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
