"""Restrictions (a passive `{ deny = ... }`, docs/cards.md "Restrictions"): the loader's checks,
the compiled record, and the printed sentences read and written back."""

from pathlib import Path

import pytest
from conftest import load_refused
from sim.engine._core import constants

from sim.cards import phrasing as ph
from sim.cards.loader import load_file
from sim.cards.reader import read_box
from sim.cards.writer import write_box

K = constants()


def _protocol(tmp_path, passive: str):
    cards = "".join(f"\n[[cards]]\nvalue = {v}\n" for v in range(1, 6))
    path = tmp_path / "ward.toml"
    path.write_text(f'protocol = "Ward"\nset = "Test"\n\n[[cards]]\nvalue = 0\ntop.passive = [{passive}]\n{cards}')
    return path


EXAMPLES = ph.restriction_examples()


@pytest.mark.parametrize(("words", "keys"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_every_sentence_reads_to_its_restriction_and_back(words, keys):
    text = (words[0].upper() + words[1:] + ".").replace("PROTOCOL", "Ward")
    box = read_box(text, "Ward")
    assert box == {"passive": [keys]}
    assert write_box(box, "Ward") == text


def test_the_sentences_are_distinct_and_say_distinct_restrictions():
    assert len({w for w, _ in EXAMPLES}) == len(EXAMPLES)
    assert len({tuple(sorted((k, str(v)) for k, v in m.items())) for _, m in EXAMPLES}) == len(EXAMPLES)


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        ("Cards with a value of 0 cannot be deleted.", {"deny": "delete", "value": [0]}),
        ("Covered cards cannot be shifted.", {"deny": "shift", "covered": True}),
        ("Cards of this protocol cannot be flipped.", {"deny": "flip", "protocol": "same"}),
        ("Ward cards cannot be flipped.", {"deny": "flip", "protocol": "same"}),
        (
            "Your uncovered cards in this line cannot be returned.",
            {"deny": "return", "whose": "you", "covered": False, "scope": "this_line"},
        ),
        (
            "Covered face-down cards with a value of 1 or 2 cannot be deleted by your opponent.",
            {"deny": "delete", "covered": True, "face": "down", "value": [1, 2], "by": "opponent"},
        ),
        (
            "Your opponent cannot play cards face-down on your side.",
            {"deny": "play_facedown", "by": "opponent", "whose": "you"},
        ),
        (
            "Cards cannot be played on your opponent's side in this line.",
            {"deny": "play", "whose": "opponent", "scope": "this_line"},
        ),
    ],
)
def test_composed_selectors_read(text, keys):
    """The verbs' selectors (value, protocol, covered) and the side a play lands on, in any of
    the wordings a designer prints ("of this protocol" or the protocol's name)."""
    assert read_box(text, "Ward") == {"passive": [keys]}


def test_a_play_restriction_names_no_cards():
    from sim.cards.reader import ReadError

    with pytest.raises(ReadError, match="names no cards"):
        read_box("Face-down cards cannot be played.", "Ward")


def test_the_selectors_compile_into_the_box_record(tmp_path):
    from sim.cards.compiler import compile_card

    passive = '{ deny = "delete", value = [0, 3], protocol = "same", covered = true }'
    rec = compile_card(load_file(_protocol(tmp_path, passive)).cards[0], 0, [])
    assert rec["deny_values"][0] == 0b1001 and rec["deny_protocol"][0] == 1 and rec["deny_covered"][0] == 1
    rec = compile_card(load_file(_protocol(tmp_path, '{ deny = "delete", covered = false }')).cards[0], 0, [])
    assert rec["deny_values"][0] == 0 and rec["deny_protocol"][0] == 0 and rec["deny_covered"][0] == 2


def test_the_writer_leaves_defaults_out():
    box = {"passive": [{"deny": "delete", "whose": "any", "face": "down", "by": "any", "scope": "this_line"}]}
    assert write_box(box, "Ward") == "Face-down cards in this line cannot be deleted."


def test_a_restriction_compiles_into_the_box_record(tmp_path):
    spec = load_file(_protocol(tmp_path, '{ deny = "flip_up", face = "down", by = "opponent", scope = "this_line" }'))
    from sim.cards.compiler import compile_card

    rec = compile_card(spec.cards[0], 0, [])
    assert rec["passive"][0] & K["passive"]["deny"]
    assert rec["deny"][0] == K["deny"]["flip_up"] and rec["deny_face"][0] == K["face"]["down"]
    assert rec["deny_by"][0] == K["whose"]["opponent"] and rec["deny_line"][0] == 1
    assert rec["deny"][1:] == [0, 0] and rec["deny_whose"][0] == K["whose"]["any"]


@pytest.mark.parametrize(
    ("passive", "says"),
    [
        ('{ deny = "rearranged" }', "Ward 0: key 'top.passive[0].deny': expected"),
        ('{ deny = "draw", face = "up" }', "selects no field cards"),
        ('{ deny = "draw", whose = "you" }', "selects no cards"),
        ('{ deny = "draw", scope = "this_line" }', "has no line"),
        ('{ deny = "shift_to" }', 'scope = "this_line"'),
        ('{ deny = "delete", scope = "this_stack" }', '"this_line" or "all"'),
        ('{ line_value = 1, by = "you" }', "belongs to a restriction"),
        ('{ line_value = 1, whose = "any" }', "belongs to a restriction"),
        ('{ deny = "delete" }, { deny = "return" }', "one restriction (deny = ...) per box"),
        ('{ deny = "draw", value = [0] }', "selects no field cards: no 'value'"),
        ('{ deny = "play", covered = true }', "selects no field cards: no 'covered'"),
        ('{ deny = "delete", value = [8] }', "a list of values 0-7"),
        ('{ deny = "delete", protocol = "this" }', "top.passive[0].protocol"),
        ("{ line_value = 1, covered = true }", "belongs to a restriction"),
    ],
)
def test_a_bad_restriction_is_refused_in_one_line(tmp_path, passive, says):
    message = load_refused(_protocol(tmp_path, passive))
    assert "ward.toml" in message and says in message and "\n" not in message


def test_games_with_restrictions_keep_the_invariants():
    """Random and bot games drafting the restriction fixtures: the checks run at every decision
    the bots' lookahead copies and the invariant checks see, and nothing breaks."""
    import numpy as np

    from sim.pool import load_pool
    from strategies.seats import play_games

    fixtures = Path(__file__).parents[2] / "fixtures_restrict"
    pool = load_pool(("Main 1",), cards=[fixtures / "ward.toml", fixtures / "bastion.toml"])
    for strategies in (("random", "random"), ("greedy", "disrupt")):
        cols = play_games(pool, range(3_000, 3_600), check_invariants=True, strategies=strategies)
        bad = np.nonzero(cols["violation"])[0]
        assert len(bad) == 0, f"invariant {cols['violation'][bad[0]]} violated at seed {cols['seed'][bad[0]]}"
        drafted = {pool.protocols[p] for p in np.unique(cols["protocols"]).tolist()}
        assert {"Ward", "Bastion"} <= drafted


def test_the_encoded_fixture_says_what_its_text_reads_to():
    """Bastion's boxes carry both: the printed sentence reads to the hand-written restriction."""
    import tomllib

    raw = tomllib.loads((Path(__file__).parents[2] / "fixtures_restrict" / "bastion.toml").read_text())
    boxes = [card[box] for card in raw["cards"] for box in ("top", "bottom") if box in card]
    assert len(boxes) == 6
    for box in boxes:
        wanted = [{k: v for k, v in m.items() if v != "any"} for m in box["passive"]]
        assert read_box(box["text"], "Bastion") == {"passive": wanted}, box["text"]
