"""`cards check` warns of a box whose own steps can set it off again (sim/cards/selfloops.py): a middle
text that can cover this card and uncover it (Speed 3 shifting 2), one that plays into this line and then
returns, an "After you draw" that draws; none of the 180 official cards is warned of."""

from __future__ import annotations

import json

from protolab.cli import main
from sim.cards.selfloops import self_loops
from sim.pool import load_pool

VARIANT = """variant = "three loops"

[[cards]]
replaces = "Speed 3"
middle.text = "Shift 2 of your other cards."
middle.do = [ { shift = 2, whose = "you", other = true } ]

[[cards]]
replaces = "Fire 1"
middle.text = "Play 1 card in this line. Return 1 of your cards."
middle.do = [ { play = 1, to = "this_line" }, { return = 1, whose = "you" } ]

[[cards]]
replaces = "Spirit 3"
top.text = "After you draw cards: Draw 1 card."
top.when = "after_draw"
top.do = [ { draw = 1 } ]
"""


def test_no_official_card_is_warned_of():
    assert [line for spec in load_pool().specs for line in self_loops(spec)] == []


def test_cards_check_warns_of_each_self_loop_and_still_accepts_the_file(tmp_path, capsys):
    f = tmp_path / "loops.toml"
    f.write_text(VARIANT)
    assert main(["cards", "check", str(f), "--format", "json"]) == 0
    loops = json.loads(capsys.readouterr().out)["loops"]
    assert [line.split(":")[0:2] for line in loops] == [
        ["Fire 1", " middle"],
        ["Speed 3", " middle"],
        ["Spirit 3", " top"],
    ]
    assert "cover this card and its return uncover it" in loops[0]
    assert "shift of 2 can move a card onto this card and off again" in loops[1]
    assert "its own draw is an action it triggers after" in loops[2]
    assert main(["cards", "check", str(f)]) == 0
    assert capsys.readouterr().out.count("  loop: ") == 3
