"""Why each move (strategies/_explain.pyx): at every action decision of a watched game the bot's
explanation names the action it then plays, watching changes no game, the explanation is honest
(re-dealing what the mover cannot see changes none of it), and players that cannot say why are not
watched."""

from __future__ import annotations

import sys

import pytest
from fixtures_strategies.positions import action_positions
from fixtures_strategies.user_bots import write_user_bots
from strategies._explain import watch

from analysis.pages import board_why
from protolab.experiment.run import replay
from strategies.spec import make_seat

EXPLAINED = [
    ("greedy", "rush"),
    ("search:sims=8,depth=1", "control"),
    ("ismcts:iters=40", "ismcts:iters=40,rollout=random"),
]


@pytest.mark.parametrize("strategies", EXPLAINED, ids="-".join)
def test_the_explained_choice_is_the_one_played(pool, strategies):
    games = 4 if strategies[0] == "greedy" else 1
    said = weighed = 0
    for seed in range(1, 1 + games):
        game = replay.new_game(pool, seed, strategies)
        record = game.record()
        decisions = board_why.decisions(game)
        assert game.record() == record  # watching plays the very same game
        for d in decisions:
            assert d["chosen"] == d["played"], (strategies, seed, d)
            options = [a[0] for a in d["alternatives"]]
            assert d["played"] in options or len(options) == 0, d
            weighed += len(options) > 1
        said += len(decisions)
        assert {d["player"] for d in decisions} == {0, 1}
    assert said >= 20 and weighed >= 10, (said, weighed)
    measure = {"search": "mean evaluation", "ismcts": "visits"}  # greedy and its styles: evaluation
    assert {d["measure"] for d in decisions} == {measure.get(s.split(":")[0], "evaluation") for s in strategies}


def test_greedy_scores_are_its_one_ply_evaluations(pool):
    """The played action has the best score among those allowed (ties: one of them); loop
    avoidance sets aside an action taken before at the same view."""
    game = replay.new_game(pool, 170, ("greedy", "greedy"))  # a view repeats at turn 60 or so
    aside = 0
    for d in board_why.decisions(game):
        alts = d["alternatives"]
        if len(alts) < 2:
            continue
        allowed = [a for a in alts if a[3]]
        played = next(a for a in alts if a[0] == d["played"])
        assert played[3] and played[1] >= max(a[1] for a in allowed) - 1e-9, d
        aside += len(alts) - len(allowed)
    assert aside == 1


@pytest.mark.parametrize("spec", ["greedy", "search:sims=6,depth=1", "ismcts:iters=30", "learned"])
def test_explanations_are_honest(pool, spec):
    """The engine's honesty hook re-deals what the mover cannot see: the explanation is the same."""
    checked = 0
    for g in action_positions(pool):
        seat = make_seat(spec, pool)
        watcher = watch(seat)
        g.core.decide_with(seat)
        for k in range(2):
            g.core.decide_with(seat, permute_seed=k)
        said = watcher.decisions()
        assert len(said) == 3 and said[0]["alternatives"], (spec, g.seed)
        assert said[1] == said[0] and said[2] == said[0], (spec, g.seed, said)
        checked += 1
    assert checked >= 8


def test_players_that_cannot_say_why_are_not_watched(pool, tmp_path, monkeypatch):
    write_user_bots(tmp_path, monkeypatch, "whybots")
    assert watch(make_seat("random", pool)) is None
    assert watch(make_seat("whybots:First", pool)) is None
    game = replay.new_game(pool, 3, ("random", "whybots:First"))
    assert board_why.decisions(game) == []
    seat = make_seat("greedy", pool)
    watcher = watch(seat)
    assert watcher is not None and watcher.decisions() == []
    watcher.release()
    assert watch(seat) is not None  # released: the seat decides with greedy again
    sys.modules.pop("whybots", None)


@pytest.mark.parametrize(
    "strategies", [("learned", "learned"), ("ismcts:iters=30,leaf=model", "learned:reply=0")], ids="-".join
)
def test_the_model_players_explain_the_move_they_play_and_its_plan(pool, strategies):
    """The learned player (and guided ismcts) on a few games: each explanation's choice is the move
    played, watching changes no game, the learned player's values are the model's win probabilities
    (the played one the best compared, among those allowed), and the plans it tells are the answers
    its seat then follows."""
    planned = {}
    for seed in (2, 7):
        game = replay.new_game(pool, seed, strategies, turn_cap=20)
        record = game.record()
        decisions = board_why.decisions(game)
        assert game.record() == record
        assert {d["player"] for d in decisions} == {0, 1}
        for d in decisions:
            assert d["chosen"] == d["played"], (strategies, seed, d)
            planned[d["measure"]] = planned.get(d["measure"], 0) + (len(d["plan"]) > 0)
            if d["measure"] != "model" or len(d["alternatives"]) < 2:
                continue
            allowed = [a for a in d["alternatives"] if a[3]]
            played = next(a for a in d["alternatives"] if a[0] == d["played"])
            assert all(0 <= a[4] <= 1 for a in allowed) and played[1] >= max(a[1] for a in allowed) - 1e-9, d
    assert set(planned) == ({"model", "visits"} if strategies[0].startswith("ismcts") else {"model"})
    assert all(n > 0 for n in planned.values()), planned  # each player tells the answers it planned
