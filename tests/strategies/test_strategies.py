"""Strategies: honesty (hidden information never changes a choice), strength, restrictions,
specs, user strategies, drafts and the ladder."""

import json
import sys

import numpy as np
import pytest
from fixtures_strategies.positions import positions
from fixtures_strategies.user_bots import write_user_bots
from strategies._learned import dense_builds

from protolab.cli import main
from sim.state import State
from strategies.human import HUMAN
from strategies.seats import play_games
from strategies.spec import PLAYERS, StrategyError, make_seat, parse

# Every built-in player of the registry (strategies.spec.PLAYERS) is checked, so a new one is covered
# the day it is registered; the slow ones at a small setting, and the variants whose choices take
# other paths besides.
CHEAP = {"search": "search:sims=6,depth=1", "ismcts": "ismcts:iters=40"}
VARIANTS = [
    "learned:sims=2,depth=1,inner=4,branch=8",
    "ismcts:iters=40,rollout=random",
    "ismcts:iters=40,leaf=model",
    "learned:reply=2",
    "ismcts:iters=40,leaf=model,choices=rules",
    "ismcts:iters=40,choices=model",
    "learned:prune=2",
]
BUILTINS = [CHEAP.get(name, name) for name in PLAYERS if name != HUMAN] + VARIANTS


@pytest.mark.parametrize("spec", BUILTINS)
def test_strategy_is_honest(pool, spec):
    seat = make_seat(spec, pool)
    checked = 0
    for g in positions(pool):
        base = g.core.decide_with(seat)
        for k in range(3):
            assert g.core.decide_with(seat, permute_seed=k) == base, (spec, g.seed, g.pending())
        checked += 1
    assert checked >= 15


def test_honesty_check_catches_a_cheater(pool):
    """A strategy that peeks at the opponent's hand must be caught by the same check."""
    from strategies.user import PythonSeat

    class Peeker(PythonSeat):
        def _choose(self, view, player, kind, options):
            s = view.state()
            secret = sum(s["cdef"][c] for c in s["hand"][1 - player]) + sum(s["cdef"][c] for c in s["deck"][player][:3])
            return secret % len(options)

    seat = make_seat("random", pool)
    seat.set_python(Peeker(None, pool))
    changed = 0
    for g in positions(pool):
        if len(g.pending().options) < 2:
            continue
        base = g.core.decide_with(seat)
        changed += any(g.core.decide_with(seat, permute_seed=k) != base for k in range(3))
    assert changed > 0


def _win_rate(pool, a, b, games, seed=1):
    half = games // 2
    ab = play_games(pool, range(seed, seed + half), strategies=(a, b))
    ba = play_games(pool, range(seed, seed + half), strategies=(b, a))
    return ((ab["winner"] == 0).sum() + (ba["winner"] == 1).sum()) / (2 * half)


def test_greedy_beats_random(pool):
    assert _win_rate(pool, "greedy", "random", 200) >= 0.8


@pytest.mark.parametrize("style", ["rush", "disrupt", "control"])
def test_styles_beat_random(pool, style):
    assert _win_rate(pool, style, "random", 200) >= 0.7


def test_search_beats_greedy(pool):
    assert _win_rate(pool, "search:sims=20,depth=2", "greedy", 60, seed=500) > 0.55


def test_ismcts_beats_random(pool):
    assert _win_rate(pool, "ismcts:iters=40", "random", 20) >= 0.8


def test_ismcts_is_deterministic_for_a_seed(pool):
    """The same position and seed give the same choice; whole games replay identically."""
    seat = make_seat("ismcts:iters=60", pool)
    choices = []
    for g in positions(pool, n_games=3):
        first = g.core.decide_with(seat)
        assert first in g.core.pending()[2]
        assert all(g.core.decide_with(seat) == first for _ in range(2))
        choices.append(first)
    assert len(choices) >= 8
    a = play_games(pool, range(3), strategies=("ismcts:iters=30", "random"))
    b = play_games(pool, range(3), strategies=("ismcts:iters=30", "random"))
    assert all(np.array_equal(a[k], b[k]) for k in ("winner", "turns", "plays_up", "plays_down"))


def test_guided_ismcts_scores_leaves_with_the_model(pool):
    """leaf=model: the same seed gives the same game; its new nodes stop at their turn's end and are
    scored by the model, so it plays other games than the rollout search with the same budget."""
    guided = "ismcts:iters=30,leaf=model"
    a = play_games(pool, range(4), strategies=(guided, "random"))
    b = play_games(pool, range(4), strategies=(guided, "random"))
    assert all(np.array_equal(a[k], b[k]) for k in ("winner", "turns", "plays_up", "plays_down"))
    rollout = play_games(pool, range(4), strategies=("ismcts:iters=30", "random"))
    assert not all(np.array_equal(a[k], rollout[k]) for k in ("turns", "plays_up", "plays_down"))
    assert _win_rate(pool, guided, "random", 20) >= 0.8


@pytest.mark.parametrize(
    "spec, same, other, seeds",
    [
        # choices=model (leaf=model's default): the seat's own choices inside the turn of the action it
        # chose are the model's planner's, not the rule's
        (
            "ismcts:iters=30,leaf=model",
            "ismcts:iters=30,leaf=model,choices=model",
            "ismcts:iters=30,leaf=model,choices=rules",
            6,
        ),
        # leaf=model explores with c=0.2 unless told (DEFAULT_MODEL_C), rollout leaves with 0.7
        ("ismcts:iters=30,leaf=model", "ismcts:iters=30,leaf=model,c=0.2", "ismcts:iters=30,leaf=model,c=0.7", 6),
        # reply=K (2 by default): the K best candidates are scored again after the opponent's reply
        ("learned", "learned:reply=2", "learned:reply=0", 8),
        # prune=K (0 by default): only the K candidates the action-value model ranks best played out
        ("learned", "learned:prune=0", "learned:prune=2", 8),
    ],
)
def test_a_setting_changes_play_and_repeats_for_a_seed(pool, spec, same, other, seeds):
    keys = ("winner", "turns", "plays_up", "plays_down")
    games = {s: play_games(pool, range(seeds), strategies=(s, "greedy")) for s in (spec, same, other)}
    assert all(np.array_equal(games[spec][k], games[same][k]) for k in keys)
    assert not all(np.array_equal(games[spec][k], games[other][k]) for k in keys)


def test_ismcts_arena_is_sized_at_configure(pool):
    from strategies._ismcts import arena_nodes

    make_seat("ismcts:iters=1234", pool)
    assert min(arena_nodes()) >= 1235


def test_styles_play_differently(pool):
    cols = {s: play_games(pool, range(200), strategies=(s, "random")) for s in ("greedy", "rush", "control")}
    turns = {s: c["turns"].mean() for s, c in cols.items()}
    gains = {s: c["control_gains"][:, 0].mean() for s, c in cols.items()}
    assert len(set(np.round(list(turns.values()), 3))) == 3
    assert gains["control"] > gains["rush"]


def _action_plays(ev, seat, kinds, cards=None):
    """Plays chosen as the turn's action (not played from a deck by an effect) by one seat."""
    m = np.isin(ev["kind"], kinds) & (ev["player"] == seat) & (ev["extra"] == 0)
    if cards is not None:
        m &= np.isin(ev["card"], list(cards))
    return int(m.sum())


def test_restriction_nodown(pool):
    free = play_games(pool, range(300), strategies=("greedy", "random"), events=True)["events"]
    tied = play_games(pool, range(300), strategies=("greedy+nodown", "random"), events=True)["events"]
    base = _action_plays(free, 0, [3])
    assert base > 500 and _action_plays(tied, 0, [3]) < 0.1 * base


def test_restriction_avoid_protocol_and_card(pool):
    seeds = range(400)
    fixed = "fixed:Fire,Water,Death/Hate,Light,Life"
    c = play_games(pool, seeds, strategies=("random+noproto:Fire", "random"), draft=fixed, events=True)
    fire = {card.id for card in pool.cards if card.protocol == "Fire"}
    base = play_games(pool, seeds, strategies=("random", "random"), draft=fixed, events=True)["events"]
    base_fire = _action_plays(base, 0, [2, 3], fire)
    assert base_fire > 500 and _action_plays(c["events"], 0, [2, 3], fire) < 0.1 * base_fire
    up = play_games(pool, seeds, strategies=("random+noup:Fire 1", "random"), draft=fixed, events=True)["events"]
    fire1 = pool.card("Fire 1").id
    assert _action_plays(base, 0, [2], [fire1]) > 20 and _action_plays(up, 0, [2], [fire1]) == 0


def test_norefresh_with_control(pool):
    """Seat 0 never refreshes while holding control (a refresh with control spends it)."""
    for spec in ("greedy+norefresh",):
        g = State(pool, seed=4)
        g.core.run([], (make_seat(spec, pool), make_seat("random", pool)), True)
        from sim.describe import format_log

        lines = format_log(pool, g.core.state(), g.core.log_entries())
        for i, ln in enumerate(lines):
            if ln.strip() == "A refreshes":
                assert "A returns control to neutral" not in (lines[i + 1] if i + 1 < len(lines) else "")


@pytest.mark.parametrize(
    "bad,fragment",
    [
        ("wizard", "unknown strategy"),
        ("greedy:w_bogus=1", "unknown parameter"),
        ("search:sims=abc", "needs a number"),
        ("greedy+teleport", "unknown restriction"),
        ("greedy+avoid", "needs a card"),
        ("nosuchmodule_xyz:Bot", "cannot import"),
        ("ismcts:sims=5", "unknown parameter"),
        ("ismcts:rollout=greedy", "rollout must be one of"),
        ("ismcts:iters=0", "iters must be"),
        ("ismcts:iters=2.5", "iters must be"),
        ("ismcts:c=-1", "c must be"),
        ("ismcts:leaf=oracle", "leaf must be one of"),
        ("ismcts:model=learned", "model is used with leaf=model or choices=model only"),
        ("ismcts:choices=plan", "choices must be one of rules, model"),
        ("learned:reply=65", "reply must be a whole number 0..64"),
        ("ismcts:leaf=model,model=no_such_model_file.json", "no_such_model_file.json"),
    ],
)
def test_bad_specs(pool, bad, fragment):
    with pytest.raises(StrategyError, match=fragment):
        make_seat(bad, pool)


def test_unknown_card_in_restriction(pool):
    with pytest.raises(StrategyError, match="unknown card"):
        make_seat("greedy+avoid:Fire 9", pool)


def test_spec_roundtrip():
    s = parse("search:sims=30,depth=1+nodown+avoid:Fire 1")
    assert s.base == "search" and s.params == {"sims": 30.0, "depth": 1.0}
    assert s.restrictions == [("nodown", None), ("avoid", "Fire 1")]
    s = parse("ismcts:iters=300,c=1.2,rollout=random")
    assert s.base == "ismcts" and s.params == {"iters": 300.0, "c": 1.2, "rollout": "random"}


def test_user_strategy_plays_full_games(pool, tmp_path, monkeypatch):
    write_user_bots(tmp_path, monkeypatch, "mybots")
    c = play_games(pool, range(20), strategies=("mybots:Cautious", "random"))
    assert set(np.unique(c["end_reason"])) <= {1, 2}
    assert c["plays_down"][:, 0].sum() > c["plays_down"][:, 1].sum()
    with pytest.raises(ValueError, match="expected an option index"):
        play_games(pool, range(2), strategies=("mybots:Broken", "random"))
    sys.modules.pop("mybots", None)


def test_table_draft(pool, tmp_path):
    t = tmp_path / "wr.csv"
    t.write_text("protocol,win_rate\nSpeed,0.9\nLove,0.8\nApathy,0.7\nLife,0.6\nGravity,0.55\nDarkness,0.54\n")
    c = play_games(pool, range(10), draft=f"table:{t}")
    for row in c["protocols"]:
        assert {pool.protocols[i] for i in row} == {"Speed", "Love", "Apathy", "Life", "Gravity", "Darkness"}


def test_ladder_json(capsys):
    code = main(["ladder", "random", "greedy", "--games", "40", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    (pair,) = out["pairs"]
    assert {"a", "b", "games", "wins_a"} <= set(pair) and pair["games"] == 40
    assert pair["wins_a"] + pair["wins_b"] + pair["draws"] == 40
    assert out["ratings"][0]["strategy"] == "greedy"


def test_ladder_rejects_bad_strategy(capsys):
    assert main(["ladder", "random", "wizard", "--games", "10"]) == 2
    assert "unknown strategy" in capsys.readouterr().err


def test_bench_strategy_json(capsys):
    assert main(["bench", "--strategy", "greedy", "--games", "50", "--repeats", "1", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["strategy"] == "greedy" and res["games_per_second"] > 0
    assert res["dense_build"] in dense_builds()
    assert res["decisions_per_second"] == pytest.approx(res["games_per_second"] * res["turns_per_game"], rel=0.02)
