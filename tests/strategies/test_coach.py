"""The coach's view (strategies/coach.py): a recorded seat's game replays exactly as recorded while
the learned player says what it would have done at each of the seat's decisions; its advice at an
action decision is the learned player's own choice there, and every decision of the seat is there."""

from __future__ import annotations

import random

import pytest
from sim.engine._core import constants
from strategies._explain import coach

from sim.state import State
from strategies.coach import coach_game, coached_decisions
from strategies.spec import make_seat

ACTION = constants()["decision"]["action"]


def recorded(pool, seed: int, turns: int) -> State:
    """Both seats played from outside (random answers) up to turn `turns`."""
    game = State(pool, seed=seed)
    rng = random.Random(seed)
    while (d := game.pending()) is not None and game.core.state()["turn"] <= turns:
        game.answer(rng.randrange(len(d.options)))
    return game


def test_coaching_replays_the_recorded_game_and_covers_every_decision(pool):
    game = recorded(pool, 4, 12)
    before = (game.core.state(), game.pending())
    said, advisers = coached_decisions(game, [0])
    assert advisers == {0: "learned"} and (game.core.state(), game.pending()) == before
    mine = [d for d in said if "coach" in d]
    # the seat's decisions with more than one option, in order, as the engine asked them
    asked = []
    for k in range(len(game.answers)):
        game.core.run(game.answers[:k], game.strategies)
        player, kind, options = game.core.pending()
        if player == 0 and len(options) > 1:
            asked.append((kind, options[game.answers[k]]))
    game.core.run(game.answers, game.strategies)
    assert [(d["kind"], d["played"]) for d in sorted(mine, key=lambda d: d["turn"])] == asked
    actions = [d for d in mine if d["kind"] == ACTION]
    assert len(actions) >= 4 and all(d["measure"] == "model" and d["alternatives"] for d in actions)
    assert {d["measure"] for d in mine if d["kind"] != ACTION} <= {"rule", "planned"}


def test_the_advice_is_the_learned_players_own_choice(pool):
    """At each recorded action decision, the coach's choice is what a learned seat decides there."""
    game = recorded(pool, 9, 8)
    said = [d for d in coached_decisions(game, [1])[0] if "coach" in d and d["kind"] == ACTION]
    checked = 0
    for k in range(len(game.answers)):
        game.core.run(game.answers[:k], game.strategies)
        player, kind, options = game.core.pending()
        if player != 1 or kind != ACTION or len(options) < 2:
            continue
        advice = said[checked]
        assert advice["chosen"] == game.core.decide_with(make_seat("learned", pool)), advice
        assert advice["played"] == options[game.answers[k]]
        checked += 1
    assert checked == len(said) >= 3


def test_coach_game_reports_decisions_and_the_models_win_probability(pool):
    game = recorded(pool, 6, 10)
    report = coach_game(game, 0)
    assert report["adviser"] == "learned" and len(report["model"]) == 12
    kinds = {d["kind"] for d in report["decisions"]}
    assert "action" in kinds
    for d in report["decisions"]:
        if d["kind"] == "action":
            assert d["how"] == "model" and d["candidates"]
            assert d["advised"] == d["candidates"][0][0] or d["candidates"][0][1] == d["candidates"][1][1]
            assert d["played"] in [c[0] for c in d["candidates"]]
    probs = report["win_probability"]
    assert len(probs) >= 8 and all(0 <= v <= 1 for v in probs.values())
    with pytest.raises(ValueError, match="not a recorded"):
        coach_game(State(pool, seed=6, auto=(0,)), 0)


def test_a_seat_that_cannot_advise_gives_no_coach(pool):
    assert coach(make_seat("random", pool)) is None
    assert coach(make_seat("learned", pool), make_seat("random", pool)) is None
