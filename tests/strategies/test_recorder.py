"""The example recorder (strategies/_features.pyx, Recorder) changes no game: installed on any seats,
they play exactly the games they play without it, planners included (the learned player, ismcts with
choices=model), and its rows are one per (game, turn end, seat view) of those very games.

Before this fix the recorder replayed the rest of each turn on a copy with the seats' own deciders, and
a seat following a plan (Plan's cursor, its turn-start copy) consumed its planned answers in that copy:
in the real game it then answered by the default rule (most of 30 learned games changed)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import numpy as np
import pytest
from strategies._features import FEATURES, Recorder

from strategies.learned import examples, play_columns_for
from strategies.seats import make_seats, play_games

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from play_hash import columns_hash  # noqa: E402

GUIDED = "ismcts:iters=30,leaf=model"  # the training's improver: choices planned by the model

SPECS = {  # seats, games
    "learned": (("learned", "learned"), 30),
    "guided": ((GUIDED, GUIDED), 6),
    "learned-greedy": (("learned", "greedy"), 10),
    "search": (("search:sims=8,depth=1", "greedy"), 6),
    "ismcts": (("ismcts:iters=30", "ismcts:iters=30,leaf=model,choices=rules"), 4),
    "greedy": (("greedy", "greedy"), 20),
}


def recorded(pool, strategies, seeds, explore=0.0, policy=False):
    """The games of these seats with a recorder installed, and the recorder."""
    seats = make_seats(pool, strategies)
    recorder = Recorder(explore, policy)
    recorder.install(*seats.configs)
    return play_columns_for(pool, seeds, seats, 200), recorder


@pytest.mark.parametrize("name", sorted(SPECS))
def test_the_recorder_changes_no_game(pool, name):
    strategies, n = SPECS[name]
    seeds = np.arange(1, n + 1, dtype=np.uint64)
    alone = play_games(pool, seeds, strategies)
    cols, recorder = recorded(pool, strategies, seeds)
    assert columns_hash(cols) == columns_hash(alone), f"{name}: the recorder changed the games"
    check_rows(recorder.rows(), cols, seeds)


def test_the_policy_recorder_changes_no_guided_game(pool):
    seeds = np.arange(1, 5, dtype=np.uint64)
    alone = play_games(pool, seeds, (GUIDED, GUIDED))
    cols, recorder = recorded(pool, (GUIDED, GUIDED), seeds, policy=True)
    assert columns_hash(cols) == columns_hash(alone)
    assert len(recorder.policy_rows()["seed"]) > 10 * len(seeds)
    check_rows(recorder.rows(), cols, seeds)


def test_a_planners_own_answers_stand_when_the_recorder_explores(pool):
    """With explore > 0 the recorder takes some actions at random (by design); the rest of each turn
    is the seats' own. Replaying the very actions the exploring recorder took, as a script of actions
    that leaves every other decision to the seat, is out of reach here; what is checked: the planned
    answers of the learned seats fall back to the rule in about the share they do without the
    recorder (0.50 on these seeds), where the replaying recorder made it 0.70."""
    from sim.engine._core import SeatConfig

    from sim.batch import play_columns
    from strategies.spec import learned_player

    seeds = np.arange(1, 31, dtype=np.uint64)
    counts = {}
    for explore in (None, 0.1):
        players, configs = [], []
        for _ in range(2):
            player, seat = learned_player({}), SeatConfig()
            player.install(seat)
            players.append(player)
            configs.append(seat)
        if explore is not None:
            recorder = Recorder(explore, False)
            recorder.install(*configs)
        play_columns(pool, seeds, configs)
        followed = sum(p.plan_counts()[0] for p in players)
        fallback = sum(p.plan_counts()[1] for p in players)
        counts[explore] = fallback / max(1, followed + fallback)
        if explore is not None:
            assert len(recorder.rows()["seed"]) > 0
    assert counts[0.1] < counts[None] + 0.05, counts


def check_rows(rows, cols, seeds):
    """A row per (game, turn end, seat view): both views of a turn together (seat 0 then 1), the turns of
    a game increasing, every one before the game's last turn (a game's last turn gives none), and each
    row's turn and active-seat features those of the turn that ended."""
    n = len(rows["seed"])
    assert n > 0 and n % 2 == 0 and rows["features"].shape == (n, len(FEATURES))
    assert (rows["player"][0::2] == 0).all() and (rows["player"][1::2] == 1).all()
    assert (rows["seed"][0::2] == rows["seed"][1::2]).all() and (rows["turn"][0::2] == rows["turn"][1::2]).all()
    turns = dict(zip(seeds.tolist(), cols["turns"].tolist(), strict=True))
    first = dict(zip(seeds.tolist(), cols["first_player"].tolist(), strict=True))
    for seed in np.unique(rows["seed"]).tolist():
        mine = rows["seed"][0::2] == seed
        t = rows["turn"][0::2][mine].astype(int)
        assert (np.diff(t) > 0).all() and t.min() >= 1 and t.max() < turns[seed], seed
    turn_at = FEATURES.index("turn")
    mine_at = FEATURES.index("active_is_me")
    active = np.array([first[s] for s in rows["seed"].tolist()]) ^ ((rows["turn"].astype(int) - 1) & 1)
    np.testing.assert_array_equal(rows["features"][:, mine_at], (active == rows["player"]).astype(np.float32))
    assert (rows["features"][:, turn_at] > 0).all()


# sha256 of greedy's rows (seeds 1-40; with explore 0.1 too) as the replaying recorder wrote them: for
# seats that keep no plan, its copy reached the very turn ends the real game reaches, so the rows are
# unchanged by recording them in the real game
GREEDY_ROWS = {0.0: "53e00dc95f161af7", 0.2: "70e55b39fc50bf52"}


@pytest.mark.parametrize("explore", sorted(GREEDY_ROWS))
def test_rows_of_seats_without_plans_are_the_replaying_recorders(pool, explore):
    rows = examples(pool, np.arange(1, 41), ("greedy", "greedy"), explore=explore)
    h = hashlib.sha256()
    for k in ("seed", "turn", "player", "features", "outcome"):
        a = np.ascontiguousarray(rows[k])
        h.update(f"{k}:{a.dtype}:{a.shape}".encode())
        h.update(a.tobytes())
    assert h.hexdigest()[:16] == GREEDY_ROWS[explore]
