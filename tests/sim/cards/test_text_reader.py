"""Printed card text read into the card language and written back (issue 28): sim/cards/phrasing.py,
grammar.py, reader.py, writer.py, agreement.py; the text-only hook of the loader; `cards check`."""

import json
from pathlib import Path

import pytest
from conftest import read_refused

from protolab.cli import main
from sim.cards import phrasing, vocabulary
from sim.cards.agreement import check_cards
from sim.cards.loader import (
    AMOUNT_PASSIVES,
    DENY_PASSIVES,
    FLAG_PASSIVES,
    PASSIVE_KEYS,
    CardDataError,
    K,
    load_file,
)
from sim.cards.loader import (
    OFFICIAL_DIR as OFFICIAL,
)
from sim.cards.reader import ReadError, read_box
from sim.cards.writer import write_box
from sim.pool import load_pool
from strategies.seats import play_games

ECHO = Path(__file__).parents[2] / "fixtures_text" / "echo.toml"


@pytest.fixture(scope="module")
def official_checks(pool):
    return check_cards([pool.specs[c.id] for c in pool.cards])


# -- the phrasing covers the vocabulary -------------------------------------------------------------


def test_every_verb_has_a_phrasing_or_a_reason():
    phrased = {p.verb for p in phrasing.PHRASES}
    for v in vocabulary.VERBS:
        assert v.name in phrased or v.name in phrasing.IN_SENTENCE or phrasing.NOT_PRINTABLE.get(v.name), (
            f"verb {v.name} has no phrasing in sim/cards/phrasing.py"
        )
    assert phrased <= {v.name for v in vocabulary.VERBS}, "a phrasing names a verb the vocabulary lacks"


def test_every_trigger_and_passive_has_a_phrasing():
    assert set(phrasing.WHEN_WORDS) | set(phrasing.AFTER_WORDS) == set(K["when"])
    said = {k for _, keys in (*phrasing.PASSIVES, *phrasing.restriction_examples()) for k in keys}
    assert PASSIVE_KEYS <= said, PASSIVE_KEYS - said
    denied = {keys["deny"] for _, keys in phrasing.RESTRICTION_TEMPLATES}
    assert denied == set(K["deny"]), set(K["deny"]) ^ denied
    assert {*AMOUNT_PASSIVES, *FLAG_PASSIVES} <= said and len(DENY_PASSIVES) == sum(
        "deny_play" in keys for _, keys in phrasing.PASSIVES
    )


def test_every_amount_phrase_names_a_count_of_the_vocabulary():
    words = {c.word for c in vocabulary.COUNTS}
    assert set(phrasing.AMOUNT_WORDS) <= words and set(phrasing.HAND_COUNTS) <= words


# -- the official pool -----------------------------------------------------------------------------


def test_official_boxes_read_to_their_encoding(official_checks):
    """At least 90% read to exactly their encoding; the rest differ only where the engine does
    not read the record (a deck play's face selector and count), never in play."""
    agree = sum(c.agree for c in official_checks)
    assert len(official_checks) == 215 and agree / len(official_checks) >= 0.9
    rest = {c.card: c.verdict for c in official_checks if not c.agree}
    assert set(rest.values()) <= {"same play"}, rest


def test_every_official_encoding_writes_back_to_text_that_reads_the_same(official_checks):
    bad = [(c.card, c.box, c.written) for c in official_checks if not c.round_trip]
    assert not bad, bad
    assert sum(c.same_text for c in official_checks) >= 150


def test_a_wrong_encoding_is_caught():
    """The check can fail: Fire 1 encoded without its "If you do" disagrees with its text."""
    spec = next(c for c in load_file(OFFICIAL / "fire.toml").cards if c.name == "Fire 1")
    spec.boxes["middle"].do = [{"discard": 1}, {"delete": 1}]
    (check,) = check_cards([spec])
    assert not check.agree and check.verdict == "differs"


# -- reading ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, box",
    [
        (
            "End: You may discard 1 card. If you do, flip 1 card.",
            {"when": "end", "do": [{"discard": 1, "may": True}, {"flip": 1, "if": "did"}]},
        ),
        ("Flip 1 of your opponent's face-down cards.", {"do": [{"flip": 1, "whose": "opponent", "face": "down"}]}),
        ("Delete 1 card from each other line.", {"do": [{"delete": 1, "each": "other_line"}]}),
        ("Return all cards with a value of 2.", {"do": [{"return": "all", "value": [2], "covered": "any"}]}),
        (
            "After you discard cards: Your opponent discards 1 card.",
            {"when": "after_discard", "do": [{"discard": 1, "who": "opponent"}]},
        ),
        (
            "When this card would be covered: First, draw 1 card. Then, flip this card.",
            {"when": "covered", "do": [{"draw": 1}, {"flip": "this"}]},
        ),
        (
            "If you have more than 2 cards in your hand, delete this card.",
            {"do": [{"delete": "this", "if": "hand > 2"}]},
        ),
        ("This card cannot be flipped.", {"passive": [{"unflippable": True}]}),
        (
            "Your opponent's total value in this line is reduced by 3.",
            {"passive": [{"line_value": -3, "whose": "opponent"}]},
        ),
    ],
)
def test_reads_triggers_conditions_selectors_and_passives(text, box):
    assert read_box(text, "Echo") == box


def test_its_own_protocol_name_is_this_protocol():
    """A card's own protocol is "this protocol"; another name before "card" is that protocol."""
    assert read_box("Draw cards equal to the number of Echo cards in the field.", "Echo") == {
        "do": [{"draw": "protocol_cards_in_field"}]
    }
    assert read_box("Draw cards equal to the number of Fire cards in the field.", "Echo") == {
        "do": [{"draw": "count", "count": {"protocol": "Fire"}}]
    }
    with pytest.raises(ReadError, match="unknown word 'FIRE'"):
        read_box("Draw cards equal to the number of FIRE cards in the field.", "Echo")


@pytest.mark.parametrize(
    "text, message",
    [
        ("Frobnicate 2 cards.", "unknown word 'Frobnicate'"),
        ("Draw 1 card; delete 1 card.", "unknown character ';'"),
        ("Draw 1 card. Flip 1 card sideways.", "unknown word 'sideways'"),
        (
            "Flip 1 face-up face-down card.",
            'ambiguous: the cards are described both as face = "up" and as face = "down"',
        ),
        ("Play it face-down.", "ambiguous: 'it'"),
        ("Flip that card. Draw 1 card.", "ambiguous: 'that'"),
        ("Discard 1 card. Draw 2 cards draw.", "could not read 'draw' (after 'Draw 2 cards')"),
        ("Draw 1 card. Delete", "the sentence 'Delete' stops before it is complete"),
        ("Delete 1 card with a value of 1 or draw 1 card.", "could not read 'draw 1 card'"),
    ],
)
def test_reader_errors_are_one_line(text, message):
    assert message in read_refused(text, "Echo")


def test_writer_prints_a_canonical_text():
    box = {"when": "after_play", "by": "opponent", "where": "this_line", "do": [{"discard": 1, "who": "opponent"}]}
    text = write_box(box, "Echo")
    assert text == "After your opponent plays a card in this line: Your opponent discards 1 card."
    assert read_box(text, "Echo") == box


# -- text-only files ---------------------------------------------------------------------------------


def test_text_only_protocol_loads_with_every_box_read():
    spec = load_file(ECHO)
    boxes = [b for c in spec.cards for b in c.boxes.values()]
    assert len(boxes) == 11 and all(b.read and (b.do or b.passive) for b in boxes)
    echo1 = next(c for c in spec.cards if c.name == "Echo 1")
    assert echo1.boxes["top"].when == "start" and echo1.boxes["top"].do == [
        {"discard": 1, "may": True},
        {"draw": 2, "if": "did"},
    ]


def test_text_only_protocol_plays_with_invariants_checked():
    pool = load_pool(cards=[ECHO])
    cols = play_games(
        pool,
        range(1, 301),
        strategies=("greedy", "greedy"),
        check_invariants=True,
        protocols=[
            (("Echo", "Fire", "Water"), ("Hate", "Light", "Life")),
            (("Death", "Spirit", "Metal"), ("Echo", "Plague", "Gravity")),
        ],
    )
    assert (cols["violation"] == 0).all() and (cols["winner"] >= 0).all()


def test_unreadable_text_names_file_card_box_and_words(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text(ECHO.read_text().replace("Delete 1 face-down card.", "Delete 1 purple card."))
    with pytest.raises(CardDataError) as e:
        load_pool(cards=[f])
    msg = str(e.value)
    assert str(f) in msg and "Echo 1" in msg and "middle.text" in msg and "'purple'" in msg and "\n" not in msg
    assert main(["cards", "check", str(f)]) == 1


def test_official_pool_loads_without_reading_text(monkeypatch):
    """Boxes with steps are never read: the pool loads as fast as before the reader."""
    import sim.cards.loader as loader

    monkeypatch.setattr(loader, "read_box", lambda *a: pytest.fail("read a box that has steps"))
    assert len(load_pool().cards) == 180


# -- the command ---------------------------------------------------------------------------------------


def test_cards_check_reports_the_agreement_as_json(capsys):
    assert main(["cards", "check", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["boxes"] == 215 and report["agree"] >= 194 and report["differs"] == 0
    assert len(report["disagreements"]) == report["boxes"] - report["agree"]


def test_cards_show_says_a_box_was_read(capsys):
    assert main(["cards", "show", "Echo 3", "--cards", str(ECHO)]) == 0
    out = capsys.readouterr().out
    assert "(steps read from the text)" in out and "after_discard" in out


def test_cards_check_file_counts_read_boxes(capsys):
    assert main(["cards", "check", str(ECHO)]) == 0
    assert "11 boxes read from their text" in capsys.readouterr().out


def test_grammar_has_no_silent_choice_but_value_lists_and_counted_sets(caplog):
    """LALR settles a shift/reduce conflict by reading on; the only places allowed to do so are a
    list of values ("with a value of 1 or 2" goes on at "or") and a counted set, which takes the
    place after it ("for each face-down card in this line": the count's line, docs/cards.md
    Quantities) and "that is compiled". A new phrase that makes another word ambiguous fails
    here instead of being read one way silently."""
    import logging

    from lark import Lark

    from sim.cards.grammar import grammar

    with caplog.at_level(logging.DEBUG, logger="lark"):
        Lark(grammar(), parser="lalr", lexer="contextual", debug=True)
    lines = [line.strip() for r in caplog.records for line in r.getMessage().splitlines()]
    conflicts = [m for m in lines if "conflict" in m.lower()]
    assert conflicts and all(m.split("terminal ")[1].split(":")[0] in ("OR", "IN", "THAT") for m in conflicts)
    rules = [m for m in lines if m.startswith("* <")]
    assert rules and all(r.startswith(("* <filter :", "* <counted :")) for r in rules), rules


@pytest.mark.parametrize(
    ("text", "box"),
    [
        ("Your opponent shuffles their deck.", {"do": [{"shuffle": True, "mode": "deck", "who": "opponent"}]}),
        (
            "After your opponent shuffles their deck: Draw 1 card.",
            {"when": "after_shuffle", "by": "opponent", "do": [{"draw": 1}]},
        ),
        ("Your opponent gives you 1 card from their hand.", {"do": [{"give": 1, "who": "opponent"}]}),
        (
            "End: If you have no cards in your hand, draw 2 cards.",
            {"when": "end", "do": [{"draw": 2, "if": "hand == 0"}]},
        ),
    ],
)
def test_wordings_of_the_example_corpus_read(text, box):
    """Wordings a designer printed (datasets/protocols/examples/): each reads, and the writer's
    own wording of the opponent's shuffle reads back to the same box."""
    assert read_box(text, "Herald") == box
    assert read_box(write_box(box, "Herald"), "Herald") == box


def test_a_player_shuffles_only_their_own_deck():
    with pytest.raises(ReadError, match="their own deck"):
        read_box("Your opponent shuffles your deck.", "Herald")


def test_a_wording_of_the_opponent_needs_the_opponent_as_subject():
    with pytest.raises(ReadError, match="the opponent's"):
        read_box("Give you 1 card from their hand.", "Trade")
