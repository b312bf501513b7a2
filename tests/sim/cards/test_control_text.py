"""The field verb `gain_control` in printed text ("Gain control of ..."): read by
sim/cards/reader.py and written back word for word by sim/cards/writer.py, composed with the
shared selectors, counts and quantities like the other field verbs. The scenarios in
tests/scenarios/text/regent_*.toml play the fixture tests/fixtures_text/regent.toml (text only),
tests/scenarios/examples/trade/ the corpus card Trade 4."""

from pathlib import Path

import pytest

from sim.cards.loader import load_file
from sim.cards.reader import read_box
from sim.cards.writer import write_box

REGENT = Path(__file__).parents[2] / "fixtures_text" / "regent.toml"

SHAPES = [
    (
        "Gain control of 1 of your opponent's uncovered cards in this line.",
        {"gain_control": 1, "whose": "opponent", "covered": False, "line": "this"},
    ),
    ("Gain control of 1 of your opponent's face-down cards.", {"gain_control": 1, "whose": "opponent", "face": "down"}),
    ("Gain control of 1 of your opponent's covered cards.", {"gain_control": 1, "whose": "opponent", "covered": True}),
    (
        "Gain control of all of your opponent's cards in this line.",
        {"gain_control": "all", "whose": "opponent", "line": "this", "covered": "any"},
    ),
    ("Gain control of each other face-up card.", {"gain_control": "each", "other": True, "face": "up"}),
    ("Gain control of a card with a value of 0 or 1.", {"gain_control": 1, "value": [0, 1]}),
    (
        "Gain control of your opponent's highest value uncovered card.",
        {"gain_control": 1, "whose": "opponent", "pick": "highest", "covered": False},
    ),
    ("Gain control of up to 2 cards in 1 line.", {"gain_control": 2, "up_to": True, "line": "chosen"}),
    ("Gain control of 1 card for each compiled protocol.", {"gain_control": 1, "per": {"of": "compiled_protocols"}}),
    ("Gain control of this card.", {"gain_control": "this"}),
    ("Your opponent gains control of 1 of your cards.", {"gain_control": 1, "whose": "you", "who": "opponent"}),
    ("You may gain control of 1 non-Regent card.", {"gain_control": 1, "protocol": "other", "may": True}),
]


@pytest.mark.parametrize("text, step", SHAPES)
def test_every_gain_control_sentence_reads_to_its_step_and_back(text, step):
    box = read_box(text, "Regent")
    assert box == {"do": [step]}
    assert write_box(box, "Regent") == text


def test_gain_control_then_that_card():
    """After it, "that card" names the card gained (the field verbs' shared `that`)."""
    text = "Gain control of 1 of your opponent's cards. Flip that card."
    box = read_box(text, "Regent")
    assert box == {"do": [{"gain_control": 1, "whose": "opponent"}, {"flip": "that"}]}
    assert write_box(box, "Regent") == text


def test_the_fixture_reads_every_box_from_its_text():
    spec = load_file(REGENT)
    assert all(b.read and not b.refused for c in spec.cards for b in c.boxes.values())
    assert spec.cards[0].boxes["middle"].do == [{"gain_control": 1, "whose": "opponent", "face": "down"}]
