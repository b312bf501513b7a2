"""Quantities in printed text (docs/cards.md, Quantities): "for each X", "equal to the number of X",
"up to N", read by sim/cards/reader.py into `per` / `count` / `up_to` and written back by
sim/cards/writer.py (sim/cards/counting.py). The scenarios in tests/scenarios/quantities/measure_*
play the fixture tests/fixtures_quantities/measure.toml, written in text only."""

from pathlib import Path

import pytest
from conftest import read_refused

from sim.cards.loader import CardDataError, load_file
from sim.cards.reader import ReadError, read_box
from sim.cards.writer import write_box

MEASURE = Path(__file__).parents[2] / "fixtures_quantities" / "measure.toml"
QUORUM = MEASURE.with_name("quorum.toml")

# every sentence shape, with the step it reads to; the writer prints each back exactly
SHAPES = [
    ("Draw 1 card for each face-down card.", {"draw": 1, "per": {"face": "down"}}),
    (
        "Draw 2 cards for each of your opponent's face-down cards.",
        {"draw": 2, "per": {"whose": "opponent", "face": "down"}},
    ),
    (
        "Draw 1 card for each of your opponent's uncovered cards in this line.",
        {"draw": 1, "per": {"whose": "opponent", "covered": False, "line": "this"}},
    ),
    (
        "Draw 1 card for each of your covered cards in other lines.",
        {"draw": 1, "per": {"whose": "you", "covered": True, "line": "other"}},
    ),
    ("Return 1 card for each other face-up card.", {"return": 1, "per": {"other": True, "face": "up"}}),
    ("Delete 1 card for each card in your hand.", {"delete": 1, "per": {"of": "hand"}}),
    ("Draw 1 card for each Measure card.", {"draw": 1, "per": {"protocol": "same"}}),
    (
        "Draw 1 card for each face-up non-Measure card in this line.",
        {"draw": 1, "per": {"face": "up", "protocol": "other", "line": "this"}},
    ),
    (
        "Draw cards equal to the number of Measure cards in this line.",
        {"draw": "count", "count": {"protocol": "same", "line": "this"}},
    ),
    ("Draw 1 card for each card in both players' hands.", {"draw": 1, "per": {"of": "hand", "whose": "any"}}),
    ("Draw 1 card for each card in your opponent's trash.", {"draw": 1, "per": {"of": "trash", "whose": "opponent"}}),
    (
        "Your opponent discards 1 card for each card in their hand.",
        {"discard": 1, "per": {"of": "hand", "whose": "opponent"}, "who": "opponent"},
    ),
    (
        "Your opponent discards 1 card for each card in your hand.",
        {"discard": 1, "per": {"of": "hand"}, "who": "opponent"},
    ),
    ("Draw 1 card for each line.", {"draw": 1, "per": {"of": "lines"}}),
    ("Draw 1 card for each other line.", {"draw": 1, "per": {"of": "lines", "line": "other"}}),
    ("Discard 1 card for each protocol.", {"discard": 1, "per": {"of": "protocols"}}),
    (
        "Delete 1 of your opponent's cards for each compiled protocol.",
        {"delete": 1, "whose": "opponent", "per": {"of": "compiled_protocols"}},
    ),
    (
        "Delete 1 card for each of your opponent's compiled protocols.",
        {"delete": 1, "per": {"of": "compiled_protocols", "whose": "opponent"}},
    ),
    (
        "Shift 1 of your cards for each card in your opponent's deck to this line.",
        {"shift": 1, "whose": "you", "per": {"of": "deck", "whose": "opponent"}, "to": "this_line"},
    ),
    ("Draw cards equal to the number of cards in this line.", {"draw": "count", "count": {"line": "this"}}),
    ("Draw cards equal to the number of cards in your trash.", {"draw": "count", "count": {"of": "trash"}}),
    ("Draw cards equal to the number of cards in your hand.", {"draw": "count", "count": {"of": "hand"}}),
    (
        "Draw cards equal to the number of your opponent's protocols.",
        {"draw": "count", "count": {"of": "protocols", "whose": "opponent"}},
    ),
    ("Draw cards equal to the number of compiled protocols.", {"draw": "count", "count": {"of": "compiled_protocols"}}),
    ("Draw cards equal to the number of lines.", {"draw": "count", "count": {"of": "lines"}}),
    (
        "Flip 1 card with a value less than the number of face-down cards.",
        {"flip": 1, "value_lt": "count", "count": {"face": "down"}},
    ),
    (
        "Flip 1 card that has a value greater than the number of other face-down cards in this line.",
        {"flip": 1, "value_gt": "count", "count": {"other": True, "face": "down", "line": "this"}},
    ),
    ("Flip up to 2 cards.", {"flip": 2, "up_to": True}),
    ("Return up to 1 card.", {"return": 1, "up_to": True}),
    (
        "Delete up to 2 of your opponent's face-down cards.",
        {"delete": 2, "up_to": True, "whose": "opponent", "face": "down"},
    ),
    ("Flip up to 2 cards for each compiled protocol.", {"flip": 2, "up_to": True, "per": {"of": "compiled_protocols"}}),
    # "any number of": up to every match, each pick a different card (count "0+")
    ("Flip any number of your face-down cards.", {"flip": "0+", "whose": "you", "face": "down"}),
    (
        "Delete any number of your opponent's covered cards in this line.",
        {"delete": "0+", "whose": "opponent", "covered": True, "line": "this"},
    ),
    ("Return any number of face-up cards.", {"return": "0+", "face": "up"}),
    ("Shift any number of other cards to this line.", {"shift": "0+", "other": True, "to": "this_line"}),
    ("Gain control of any number of cards in this line.", {"gain_control": "0+", "line": "this"}),
    # another protocol, named ("Fire card"): face-up cards of that protocol
    ("Draw 1 card for each Fire card.", {"draw": 1, "per": {"protocol": "Fire"}}),
    (
        "Draw 1 card for each of your opponent's face-up Fire cards in this line.",
        {"draw": 1, "per": {"whose": "opponent", "face": "up", "protocol": "Fire", "line": "this"}},
    ),
    (
        "Draw cards equal to the number of Water cards in other lines.",
        {"draw": "count", "count": {"protocol": "Water", "line": "other"}},
    ),
    (
        "If there are 2 or more Fire cards in this line, draw 1 card.",
        {"draw": 1, "if": "count >= 2", "count": {"protocol": "Fire", "line": "this"}},
    ),
    ("Return 1 of your opponent's Fire cards.", {"return": 1, "whose": "opponent", "protocol": "Fire"}),
    ("Delete 1 non-Measure card.", {"delete": 1, "protocol": "other"}),
    # the trailing place: before "for each" it is the target's, after it the count's
    ("Delete 1 card in this line for each face-down card.", {"delete": 1, "line": "this", "per": {"face": "down"}}),
    ("Delete 1 card for each face-down card in this line.", {"delete": 1, "per": {"face": "down", "line": "this"}}),
]


@pytest.mark.parametrize("text, step", SHAPES)
def test_every_quantity_sentence_reads_to_its_step_and_back(text, step):
    box = read_box(text, "Measure")
    assert box == {"do": [step]}
    assert write_box(box, "Measure") == text


@pytest.mark.parametrize(
    "text, steps",
    [
        (
            "If there are 2 or more face-down cards in this line, draw 1 card.",
            [{"draw": 1, "if": "count >= 2", "count": {"face": "down", "line": "this"}}],
        ),
        (
            "If there are fewer than 3 cards in your opponent's trash, delete 1 card.",
            [{"delete": 1, "if": "count < 3", "count": {"of": "trash", "whose": "opponent"}}],
        ),
        (
            "If there are no cards in your hand, draw 2 cards and flip 1 card.",
            [{"draw": 2, "if": "count == 0", "count": {"of": "hand"}}, {"flip": 1, "if": "same"}],
        ),
    ],
)
def test_a_condition_on_a_count_reads_and_writes_back(text, steps):
    box = read_box(text, "Measure")
    assert box == {"do": steps}
    assert write_box(box, "Measure") == text


def test_a_step_that_would_count_twice_is_refused():
    with pytest.raises(ReadError, match="ambiguous: a step counts one thing"):
        read_box("If there are 2 or more compiled protocols, draw cards equal to the number of lines.", "Measure")


def test_the_quantity_sentences_say_distinct_steps():
    steps = [repr(s) for _, s in SHAPES]
    assert len(set(steps)) == len(steps)


@pytest.mark.parametrize(
    "text, step",
    [
        # a designer's wordings of the same quantity (the writer prints the first form of each)
        (
            "Delete 1 card for each of your opponent's protocols that is Compiled.",
            {"delete": 1, "per": {"of": "compiled_protocols", "whose": "opponent"}},
        ),
        ("Draw 1 card for each face-down card in the field.", {"draw": 1, "per": {"face": "down"}}),
        ("Draw 1 card for each Fire card in play.", {"draw": 1, "per": {"protocol": "Fire"}}),
        ("Draw 1 card for each card of this protocol.", {"draw": 1, "per": {"protocol": "same"}}),
        (
            "Draw cards equal to the number of face-up cards of this protocol in this line.",
            {"draw": "count", "count": {"face": "up", "protocol": "same", "line": "this"}},
        ),
        (
            "Draw 1 card for each face-down cards in the other lines.",
            {"draw": 1, "per": {"face": "down", "line": "other"}},
        ),
        ("Draw 1 card for each covered or uncovered card.", {"draw": 1, "per": {}}),
        ("Draw cards equal to the number of protocol.", {"draw": "count", "count": {"of": "protocols"}}),
        ("If you have no cards in your hand, draw 2 cards.", {"draw": 2, "if": "hand == 0"}),
    ],
)
def test_other_wordings_read_to_the_same_step(text, step):
    assert read_box(text, "Measure") == {"do": [step]}


def test_an_amount_word_a_quantity_also_says_keeps_its_reading():
    """In a comparison "the number of cards in your hand" is the amount `hand` (Peace 3 reads as
    before); after "equal to" it is a quantity, since `draw = "hand"` prints as "your hand"."""
    assert read_box("Flip 1 card that has a value greater than the number of cards in your hand.", "Peace") == {
        "do": [{"flip": 1, "value_gt": "hand"}]
    }
    assert read_box("Draw cards equal to the number of Unity cards in the field.", "Unity") == {
        "do": [{"draw": "protocol_cards_in_field"}]
    }
    assert read_box("If there are 5 or more Unity cards in the field, draw 1 card.", "Unity") == {
        "do": [{"draw": 1, "if": "protocol_cards_in_field >= 5"}]
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("Draw 1 card for each face-dwn card.", "unknown word 'face-dwn'"),
        # a capitalised word before "card" names a protocol (the loader checks it); written otherwise
        # it is an unknown word
        ("Draw 1 card for each purple card.", "unknown word 'purple'"),
        ("Draw 1 card for each card in your pocket.", "unknown word 'pocket'"),
        ("Draw 1 card for each speed card.", "unknown word 'speed'"),
        ("Draw 1 card for each.", "the sentence 'Draw 1 card for each' stops before it is complete"),
        ("Flip up to cards.", "could not read 'cards'"),
    ],
)
def test_a_quantity_the_reader_cannot_read_is_refused_quoting_the_words(text, message):
    assert message in read_refused(text, "Measure")


@pytest.mark.parametrize("path", [MEASURE, QUORUM], ids=lambda p: p.stem)
def test_the_text_only_fixture_loads_every_box_from_its_text(path):
    spec = load_file(path)
    cards = spec.cards
    assert all(c.boxes["middle"].read and not c.boxes["middle"].refused for c in cards)
    assert [c.boxes["middle"].do for c in cards] == [read_box(c.text("middle"), c.protocol)["do"] for c in cards]


@pytest.mark.parametrize(
    "step, says",
    [
        ("{ draw = 2, up_to = true }", "'up_to' is a choice of 0 up to a number of field cards"),
        ('{ flip = "each", up_to = true }', "'up_to' is a choice of 0 up to a number of field cards"),
        ('{ draw = "count" }', "no count = { ... } saying what to count"),
        ('{ draw = 1, per = { of = "lines", line = "this" } }', "this line is 1 line"),
        ('{ reveal = "0+" }', "count '0+' does not apply to 'reveal'"),
        ('{ flip = "0+", up_to = true }', "'up_to' is a choice of 0 up to a number of field cards"),
    ],
)
def test_a_bad_quantity_is_refused_in_one_line(tmp_path, step, says):
    f = tmp_path / "bad.toml"
    rest = "".join(f"\n[[cards]]\nvalue = {v}\n" for v in range(1, 6))
    f.write_text(f'protocol = "Bad"\nset = "Test"\n[[cards]]\nvalue = 0\nmiddle.do = [{step}]\n{rest}')
    with pytest.raises(CardDataError) as e:
        load_file(f)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_a_named_protocol_compiles_to_its_id_in_the_pool():
    """`protocol = "Fire"` is the pool's id of Fire (proto_filter 3); an official protocol that is
    not in the pool counts no card (-1); a name that is no protocol is refused when the pool loads."""
    from sim.pool import load_pool  # noqa: PLC0415

    pool = load_pool(("Main 1",), cards=[QUORUM])
    named = [s for s in pool.step_records if s.get("proto_filter") == 3]
    assert named and all(s["protocol_id"] == pool.protocol_id["fire"] for s in named)


def test_a_named_protocol_outside_the_pool(tmp_path):
    from sim.cards.compiler import compile_card  # noqa: PLC0415

    f = tmp_path / "named.toml"
    rest = "".join(f"\n[[cards]]\nvalue = {v}\n" for v in range(1, 6))
    for name, says in (("Fire", None), ("Firre", "protocol 'Firre': no such protocol")):
        text = f"Draw 1 card for each {name} card."
        f.write_text(f'protocol = "Named"\nset = "Test"\n[[cards]]\nvalue = 0\nmiddle.text = "{text}"\n{rest}')
        card = load_file(f).cards[0]
        if says is None:
            steps: list[dict[str, int]] = []
            compile_card(card, 0, steps, {"named": 0})
            assert [s["protocol_id"] for s in steps if s.get("proto_filter") == 3] == [-1]
        else:
            with pytest.raises(CardDataError, match=says):
                compile_card(card, 0, [], {"named": 0})
