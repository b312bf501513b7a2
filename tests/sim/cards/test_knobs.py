"""The change space of a balance search (sim/cards/knobs.py): every knob of every official card turns
into a variant the lab loads and checks, that plays differently from the card it replaces, and whose
printed text reads back to its new encoding."""

import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from sim.cards.agreement import check_box
from sim.cards.compiler import compile_card
from sim.cards.knobs import KINDS, WHOSE, Knob, card_faults, card_knobs, toml_value, turned, variant_toml
from sim.cards.loader import BOXES, CardDataError, CardSpec, load_file, official_files
from sim.cards.wording import wording_faults
from sim.pool import load_pool

ALL_SETS = sorted({load_file(p).set for p in official_files()})
ECHO = Path(__file__).resolve().parents[2] / "fixtures_text" / "echo.toml"


@pytest.fixture(scope="module")
def every():
    return load_pool(ALL_SETS)


def rounds(knobs: list[Knob]) -> list[list[Knob]]:
    """Knobs grouped so that no round turns one card twice (a variant file replaces a card once)."""
    by_card: dict[str, list[Knob]] = defaultdict(list)
    for k in knobs:
        by_card[k.card].append(k)
    return [[ks[i] for ks in by_card.values() if i < len(ks)] for i in range(max(map(len, by_card.values())))]


def played(card: CardSpec) -> tuple[dict, list]:
    """What the engine reads of a card: its record and its own step records."""
    steps: list = []
    return compile_card(card, 0, steps), steps


def box_of(knob: Knob) -> str | None:
    return knob.path[0] if knob.path[0] in BOXES else None


def test_every_knob_of_every_card_makes_a_variant_that_loads_plays_differently_and_reads_back(every, tmp_path):
    """Every knob the search may turn (steps 1 and 2, every kind) over all 180 cards; a failure names
    the knob and shows the text it prints."""
    specs = {c.name: c for c in every.specs}
    knobs = [k for c in specs.values() for k in card_knobs(c, steps=(1, 2))]
    assert {k.kind for k in knobs} == set(KINDS)
    assert len(knobs) > 500
    for i, batch in enumerate(rounds(knobs)):
        path = tmp_path / f"round{i}.toml"
        path.write_text(variant_toml(f"round {i}", [turned(specs[k.card], [k]) for k in batch]))
        pool = load_pool(ALL_SETS, cards=[path])
        changed = {c.name: c for c in pool.specs}
        for k in batch:
            assert played(specs[k.card]) != played(changed[k.card]), f"{k.label()} changed nothing the engine reads"
            for b in BOXES:  # the printed text reads as sentences (not only back to its encoding)
                text = changed[k.card].as_data().get(b, {}).get("text", "")
                assert not wording_faults(text), f"{k.label()} prints {text!r}: {wording_faults(text)}"
            box = box_of(k)
            if box and check_box(specs[k.card], box).verdict == "agree":
                assert check_box(changed[k.card], box).verdict in ("agree", "same play"), (
                    f"{k.label()}: the new text does not read back to the new encoding"
                )


def test_a_turned_card_keeps_its_name_and_every_key_it_did_not_turn(every):
    fire3 = next(c for c in every.specs if c.name == "Fire 3")
    knobs = card_knobs(fire3)
    may = next(k for k in knobs if k.kind == "may")
    value = next(k for k in knobs if k.kind == "value" and k.new == 4)
    table = turned(fire3, [may, value])
    assert table["replaces"] == "Fire 3" and table["value"] == 4
    assert "may" not in table["bottom"]["do"][0] and "when" not in table["bottom"]
    assert table["bottom"]["text"].lower().startswith("end: discard 1 card")
    assert tomllib.loads(variant_toml("fire 3", [table]))["cards"][0] == table


def test_knobs_follow_the_data_of_a_new_protocol():
    echo = load_file(ECHO)
    knobs = [k for c in echo.cards for k in card_knobs(c, kinds=["count"])]
    assert {k.card for k in knobs} >= {"Echo 0", "Echo 1"}
    assert all(k.kind == "count" and k.new >= 1 for k in knobs)


def test_unprintable_turns_are_left_out_and_would_fail(every):
    """Drawing 2 from the opponent's deck has no printed wording: such a turn is not offered."""
    for card in every.specs:
        offered = set(card_knobs(card, steps=(1, 2)))
        for k in card_knobs(card, steps=(1, 2), printable=False):
            if k not in offered and not card_faults(card, [k]):  # else left out by the shipped constraints
                with pytest.raises(CardDataError, match="cannot be printed"):
                    turned(card, [k])
    assimilation1 = next(c for c in every.specs if c.name == "Assimilation 1")
    assert len(card_knobs(assimilation1, printable=False)) > len(card_knobs(assimilation1))


def test_ranges_are_kept():
    pool = load_pool(ALL_SETS)
    for card in pool.specs:
        for k in card_knobs(card, steps=(1, 2, 3)):
            if k.kind == "value":
                assert 0 <= k.new <= 6
            elif k.kind == "count":
                assert k.new >= 1
            elif k.kind == "amount":
                assert k.new != 0 and (k.new > 0) == (k.old > 0)
            elif k.kind == "whose":
                assert k.new in WHOSE and k.old in WHOSE and k.new != k.old


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"kinds": ["value", "colour"]}, "unknown kind of knob 'colour'"),
        ({"steps": [0]}, "steps must be whole numbers 1 or more"),
        ({"steps": []}, "steps must be whole numbers 1 or more"),
    ],
)
def test_a_bad_change_space_is_refused_by_name(every, kwargs, message):
    with pytest.raises(CardDataError, match=message):
        card_knobs(every.specs[0], **kwargs)


def test_a_knob_turned_on_another_card_is_refused(every):
    a, b = every.specs[0], every.specs[1]
    with pytest.raises(CardDataError, match="does not belong"):
        turned(b, card_knobs(a)[:1])


def test_toml_values_round_trip():
    data = {"s": 'say "hi"\n', "n": -3, "b": True, "l": [1, {"x-y": "z", "odd key": False}]}
    text = "\n".join(f"{k} = {toml_value(v)}" for k, v in data.items())
    assert tomllib.loads(text) == data
