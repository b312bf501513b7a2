"""Restrictions (a passive `{ deny = ... }`, docs/cards.md "Restrictions"): the loader's checks,
the compiled record, and the printed sentences read and written back."""

from pathlib import Path

import pytest
from sim.engine._core import constants

from sim.cards import phrasing as ph
from sim.cards.loader import CardDataError, load_file
from sim.cards.reader import read_box
from sim.cards.writer import write_box

K = constants()


def _protocol(tmp_path, passive: str):
    cards = "".join(f"\n[[cards]]\nvalue = {v}\n" for v in range(1, 6))
    path = tmp_path / "ward.toml"
    path.write_text(f'protocol = "Ward"\nset = "Test"\n\n[[cards]]\nvalue = 0\ntop.passive = [{passive}]\n{cards}')
    return path


@pytest.mark.parametrize(("words", "keys"), ph.RESTRICTIONS, ids=[w for w, _ in ph.RESTRICTIONS])
def test_every_sentence_reads_to_its_restriction_and_back(words, keys):
    text = words[0].upper() + words[1:] + "."
    box = read_box(text, "Ward")
    assert box == {"passive": [keys]}
    assert write_box(box, "Ward") == text


def test_the_sentences_are_distinct_and_say_distinct_restrictions():
    assert len({w for w, _ in ph.RESTRICTIONS}) == len(ph.RESTRICTIONS)
    assert len({tuple(sorted(k.items())) for _, k in ph.RESTRICTIONS}) == len(ph.RESTRICTIONS)


def test_the_writer_leaves_defaults_out():
    box = {"passive": [{"deny": "delete", "whose": "any", "face": "down", "by": "any", "scope": "this_line"}]}
    assert write_box(box, "Ward") == "Face-down cards in this line cannot be deleted."


def test_a_restriction_compiles_into_the_box_record(tmp_path):
    spec = load_file(_protocol(tmp_path, '{ deny = "flip_up", face = "down", by = "opponent", scope = "this_line" }'))
    from sim.cards.loader import compile_card

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
    ],
)
def test_a_bad_restriction_is_refused_in_one_line(tmp_path, passive, says):
    with pytest.raises(CardDataError) as e:
        load_file(_protocol(tmp_path, passive))
    message = str(e.value)
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
