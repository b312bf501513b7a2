"""A played game ends cleanly however it ends: by the loop bound (a variant's text a person may repeat,
Speed 3 shifting one card onto itself and off again) or at the turn cap, both draws. Each is written
as its shard with its reason (and the loop's card), shows its ending on the page's state, and replays
exactly from the run folder."""

from __future__ import annotations

import pyarrow.parquet as pq

from protolab.experiment.run.replay import check, locate, open_run, play
from protolab.play.game import LiveGame
from protolab.play.playtest import create, spec_of

TRIOS = [["Speed", "Water", "Darkness"], ["Fire", "Light", "Life"]]
LOOP = """variant = "Speed 3 shifts 2"

[[cards]]
replaces = "Speed 3"
middle.text = "Shift 2 of your other cards."
middle.do = [ { shift = 2, whose = "you", other = true } ]
"""


def play_first_options(out, cards: list[str], seed: int, turn_cap: int = 200) -> LiveGame:
    """One game against `random`, the person always taking the first option (which, with the variant
    and seed 2, shifts Speed 2 onto Speed 3 and off again until the bound ends the game)."""
    playtest = create(str(out), spec_of("random", seed, 1, TRIOS, cards, None, turn_cap))
    live = LiveGame(playtest, playtest.record(0, {}))
    while not live.over:
        live.decide(0)
    return live


def ended_row(out) -> dict:
    table = pq.read_table(out / "games" / sorted(p.name for p in (out / "games").iterdir())[0])
    return {k: table.column(k)[0].as_py() for k in ("winner", "end_reason", "loop_card", "turns")}


def test_a_game_the_loop_bound_ends_is_kept_with_its_card_and_replays(tmp_path):
    variant = tmp_path / "speed3.toml"
    variant.write_text(LOOP)
    out = tmp_path / "pt"
    live = play_first_options(out, [str(variant)], seed=2)
    result = live.state()["result"]
    assert (result["winner"], result["end_reason"], result["loop_card"]) == (None, "loop_guard", "Speed 3")
    assert "Speed 3" in result["ending"] and "draw" in result["ending"]
    assert ended_row(out) == {"winner": -1, "end_reason": "loop_guard", "loop_card": "Speed 3", "turns": 24}
    located = locate(str(out), 0, open_run(out))
    assert check(located, play(located)) > 30  # the replay gives the stored row, column by column


def test_a_game_the_turn_cap_ends_is_kept_and_replays(tmp_path):
    out = tmp_path / "pt"
    live = play_first_options(out, [], seed=5, turn_cap=3)
    result = live.state()["result"]
    assert (result["winner"], result["end_reason"], result["loop_card"]) == (None, "turn_cap", None)
    assert ended_row(out) == {"winner": -1, "end_reason": "turn_cap", "loop_card": None, "turns": 3}
    located = locate(str(out), 0, open_run(out))
    assert check(located, play(located)) > 30
