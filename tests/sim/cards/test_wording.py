"""The grammar check of printed card text (sim/cards/wording.py) and the shipped constraints of the
balance search's change space (sim/cards/knobs.py): every official box reads as sentences, the
fragments a search once printed are refused, and no offered knob makes a card the designer would
not print (two cards of one protocol with one value; a card whose only effect harms its owner)."""

import pytest

from sim.cards.knobs import Knob, candidate_faults, card_knobs, harms_only
from sim.cards.loader import BOXES, load_file, official_files
from sim.cards.wording import wording_faults
from sim.pool import load_pool

ALL_SETS = sorted({load_file(p).set for p in official_files()})


@pytest.fixture(scope="module")
def cards():
    return {c.name: c for c in load_pool(ALL_SETS).specs}


def test_every_official_box_reads_as_sentences(cards):
    assert len(cards) == 180
    for card in cards.values():
        for box in BOXES:
            text = card.as_data().get(box, {}).get("text", "")
            assert wording_faults(text) == [], f"{card.name} {box}: {text!r}"


@pytest.mark.parametrize(
    "text, fault",
    [
        ("Draw 2 cards. You may your opponent cannot compile on their next turn.", '"may your"'),
        ("You may for every 2 cards in this line, play the top card of your deck face-down.", '"may for"'),
        ("Delete 1 of your cards in a line where they have a higher total value than you do.", '"they" names no'),
        ("Discard 1 card into their trash.", '"their" names no'),
    ],
)
def test_fragments_and_dangling_pronouns_are_named(text, fault):
    faults = wording_faults(text)
    assert faults and fault in faults[0]


def test_the_knobs_that_printed_fragments_are_not_offered(cards):
    offered = {k.label() for c in ("Metal 1", "Courage 1", "Gravity 0") for k in card_knobs(cards[c], steps=(1, 2))}
    assert "Metal 1 middle.do[1].may: false -> true" not in offered
    assert not any(x.startswith("Courage 1 middle.do[0].whose") for x in offered)
    assert "Gravity 0 middle.do[0].may: false -> true" not in offered
    assert "Courage 1 middle.do[0].may: false -> true" in offered  # "You may delete ..." reads


def test_a_card_that_only_harms_its_owner_is_refused_unless_the_official_one_does(cards):
    hate0 = cards["Hate 0"]
    own = Knob("Hate 0", "whose", ("middle", "do", 0, "whose"), "any", "you")
    assert not harms_only(hate0.as_data())
    assert candidate_faults(cards.values(), [own]) == ["Hate 0 would only harm its owner"]
    assert own not in card_knobs(hate0, kinds=["whose"])
    official = [c.name for c in cards.values() if harms_only(c.as_data())]
    for name in official:  # such a card may still be turned
        assert not candidate_faults(cards.values(), [k for k in card_knobs(cards[name]) if k.kind == "count"][:1])


def test_a_protocol_keeps_six_distinct_values(cards):
    fire3_as_2 = Knob("Fire 3", "value", ("value",), 3, 2)
    fire2_as_3 = Knob("Fire 2", "value", ("value",), 2, 3)
    assert candidate_faults(cards.values(), [fire3_as_2]) == ["two Fire cards would have the same value"]
    assert candidate_faults(cards.values(), [fire3_as_2, fire2_as_3]) == []  # a swap keeps them distinct
