"""The learned player's pruning (`learned:prune=K`, strategies/_learned_prune.pxi): the parameter is
declared once and bounded, the action-value model (`qmodel=`) is loaded only with it, only K
candidates are played out at a decision (the seat's counts and its explanations say so), and a
pruned player repeats its games for a seed; prune=0 plays as the player without the parameter
(tests/strategies/test_strategies.py, test_a_setting_changes_play_and_repeats_for_a_seed)."""

from __future__ import annotations

import numpy as np
import pytest
from sim.engine._core import SeatConfig

from analysis.pages import board_why
from protolab.experiment.run import replay
from sim.batch import play_columns
from strategies.declared import LEARNED, by_key
from strategies.model import ModelError
from strategies.seats import play_games
from strategies.spec import StrategyError, learned_player, make_seat, parse


def test_prune_is_declared_once_with_its_bounds():
    knob = by_key(LEARNED)["prune"]
    assert (knob.default, knob.lo, knob.hi, knob.whole) == (0, 0, 32, True) and knob.doc
    assert parse("learned:prune=3,qmodel=qlearned").params == {"prune": 3.0, "qmodel": "qlearned"}
    assert learned_player({"prune": 32.0}).qmodel_hash == learned_player({"prune": 2.0}).qmodel_hash != ""
    assert learned_player({}).qmodel_hash == ""  # no action-value model without pruning


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("learned:prune=33", "prune must be a whole number 0..32"),
        ("learned:prune=-1", "prune must be a whole number 0..32"),
        ("learned:prune=1.5", "prune must be a whole number 0..32"),
        ("learned:prune=x", "parameter prune needs a number"),
        ("learned:qmodel=qlearned", "qmodel is used with prune=K"),
        ("learned:prune=2,qmodel=", "qmodel needs a shipped model's name or a model file"),
    ],
)
def test_a_bad_prune_is_one_line(pool, spec, message):
    with pytest.raises(StrategyError, match=message):
        make_seat(spec, pool)


def test_the_action_value_model_is_loaded_by_name(pool):
    with pytest.raises(ModelError, match="nosuch"):
        make_seat("learned:prune=2,qmodel=nosuch", pool)
    with pytest.raises(ModelError, match="kind"):
        make_seat("learned:prune=2,qmodel=learned", pool)  # a value model is no action-value model


def _counts(pool, params: dict, seeds: int = 20) -> tuple[int, int, int]:
    player, seat = learned_player(params), SeatConfig()
    player.install(seat)
    play_columns(pool, np.arange(1, seeds + 1, dtype=np.uint64), (seat, make_seat("greedy", pool)))
    return player.playout_counts()


@pytest.mark.parametrize("k", [1, 2, 3])
def test_only_k_candidates_are_played_out(pool, k):
    weighed, played, widest = _counts(pool, {"prune": float(k)})
    assert weighed > 100 and widest == k and played <= k * weighed
    weighed0, played0, widest0 = _counts(pool, {})
    assert widest0 > 3 and played0 / weighed0 > played / weighed  # without pruning, more


def test_the_explanation_tells_the_pruned_candidates(pool):
    """Each explained decision of a pruned player has at most K candidates played out (count > 0),
    the move played among them; the others are allowed, not played out, valued -1."""
    k, pruned = 2, 0
    game = replay.new_game(pool, 3, (f"learned:prune={k}", "greedy"), turn_cap=30)
    for d in board_why.decisions(game):
        if d["player"] != 0 or d["measure"] != "model":
            continue
        assert d["chosen"] == d["played"]
        out = [a for a in d["alternatives"] if a[2] == 0]
        kept = [a for a in d["alternatives"] if a[2] > 0]
        assert len(kept) <= k and d["played"] in [a[0] for a in kept], d
        assert all(a[3] and a[1] == -1 and a[4] == -1 for a in out), d
        pruned += len(out)
    assert pruned > 0


def test_pruned_play_repeats_for_a_seed_and_prune_changes_it(pool):
    keys = ("winner", "turns", "plays_up", "plays_down", "compile_turn")
    a, b, c = (play_games(pool, range(30), (s, "greedy")) for s in ("learned:prune=2", "learned:prune=2", "learned"))
    assert all(np.array_equal(a[key], b[key]) for key in keys)
    assert not all(np.array_equal(a[key], c[key]) for key in keys)
