"""Card data: the official files load, match the reference texts, and bad files fail clearly."""

import json
from pathlib import Path

import pytest
from conftest import load_refused, six_cards

from sim.cards.loader import BOX_KEYS, BoxTable, CardDataError, MiddleBox, load_file
from sim.pool import load_pool

REFERENCE = Path(__file__).resolve().parents[2] / "reference" / "cards.json"  # see reference/README.md


def reference_cards(sets=("Main 1", "Aux 1", "Main 2", "Aux 2")):
    data = json.loads(REFERENCE.read_text())
    return {c["name"]: c for p in data["protocols"] if p["set"] in sets for c in p["cards"]}


def test_pool_has_180_encoded_cards(pool):
    """The default pool is the whole game: four sets, 30 protocols, every card encoded."""
    assert len(pool.cards) == 180
    assert len(pool.protocols) == 30
    assert all(c.encoded for c in pool.cards), [c.name for c in pool.cards if not c.encoded]
    assert len(load_pool(["Main 1", "Aux 1"]).cards) == 90


def test_texts_and_values_match_reference(pool):
    ref = reference_cards()
    assert {c.name for c in pool.cards} == set(ref)
    for c in pool.cards:
        r = ref[c.name]
        assert (c.value, c.top, c.middle, c.bottom) == (r["value"], r["top"], r["middle"], r["bottom"]), c.name


def test_pool_hash_is_stable_and_content_based(tmp_path):
    a, b = load_pool(), load_pool()
    assert a.hash == b.hash
    v = tmp_path / "fire1.toml"
    v.write_text('variant = "Fire 1 worth 3"\n[[cards]]\nreplaces = "Fire 1"\nvalue = 3\n')
    c = load_pool(cards=[v])
    assert c.hash != a.hash
    assert c.card("Fire 1").value == 3
    assert c.card("Fire 1").middle == a.card("Fire 1").middle


def test_variant_runs_without_rebuild(tmp_path):
    """A designer's variant (Darkness 0 draws 2 instead of 3) changes play immediately."""
    from sim.state import State

    v = tmp_path / "dark0.toml"
    v.write_text(
        'variant = "Darkness 0 draws 2"\n[[cards]]\nreplaces = "Darkness 0"\n'
        'middle.text = "Draw 2 cards. Shift 1 of your opponent\'s covered cards."\n'
        'middle.do = [ { draw = 2 }, { shift = 1, whose = "opponent", covered = true } ]\n'
    )
    for extra, drawn in (((), 3), ((v,), 2)):
        p = load_pool(cards=extra)
        g = State(p, seed=1, protocols=[["Darkness", "Fire", "Water"], ["Hate", "Light", "Life"]], first_player=0)
        hand = g.state()["A"]["hand"]
        opts = g.pending().options
        choice = next((o for o in opts if o.startswith("Darkness 0 up")), None)
        if choice is None:
            pytest.skip("Darkness 0 not in the opening hand for this seed")
        g.answer(choice)
        assert len(g.state()["A"]["hand"]) == len(hand) - 1 + drawn


BAD_FILES = {
    "not toml": ("protocol = \n", "not valid TOML"),
    "five cards": ('protocol = "X"\nset = "S"\n' + "[[cards]]\nvalue = 1\n" * 5, "expected exactly 6"),
    "unknown verb": (six_cards('middle.text = "t"\nmiddle.do = [ { explode = 1 } ]\n'), "expected exactly one verb"),
    "bad count": (six_cards('middle.do = [ { draw = "lots" } ]\n'), "expected a count"),
    "bad when": (six_cards('top.when = "noon"\ntop.do = [ { draw = 1 } ]\n'), "key 'top.when'"),
    "unknown selector": (six_cards('middle.do = [ { flip = 1, colour = "red" } ]\n'), "middle.do[0].colour"),
    "missing set": ('protocol = "X"\n[[cards]]\nvalue = 1\n', "key 'set'"),
    "bad value": ('protocol = "X"\nset = "S"\n' + '[[cards]]\nvalue = "one"\n' * 6, "key 'value'"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_malformed_files_name_file_and_key(tmp_path, case):
    text, fragment = BAD_FILES[case]
    f = tmp_path / "bad.toml"
    f.write_text(text)
    msg = load_refused(f)
    assert str(f) in msg and fragment in msg, msg


def test_variant_of_unknown_card(tmp_path):
    f = tmp_path / "v.toml"
    f.write_text('variant = "x"\n[[cards]]\nreplaces = "Fire 9"\nvalue = 1\n')
    with pytest.raises(CardDataError, match="Fire 9.*no such card"):
        load_pool(cards=[f])


def test_unknown_card_and_protocol_names(pool):
    with pytest.raises(KeyError, match="unknown card"):
        pool.card("Fire 7")
    with pytest.raises(KeyError, match="unknown protocol"):
        pool.protocol("Frost")


def test_missing_file():
    with pytest.raises(CardDataError, match="file not found"):
        load_file("/nonexistent/protocol.toml")


READINGS = Path(__file__).resolve().parents[3] / "datasets" / "readings"


def test_every_alternate_reading_is_a_selectable_variant():
    """Each card that cards.json marks unconfirmed or gives alternate_readings has a variant file
    in datasets/readings carrying the alternate text, which loads and runs without a rebuild."""
    data = json.loads(REFERENCE.read_text())
    wanted = {
        c["name"]: c
        for p in data["protocols"]
        for c in p["cards"]
        if c.get("alternate_readings") or c.get("unconfirmed")
    }
    assert len(wanted) == 19
    offered: dict[str, dict] = {}
    for f in sorted(READINGS.glob("*.toml")):
        spec = load_file(f)
        offered.update(spec.replaces)
        pool = load_pool(cards=[f])
        assert all(c.encoded for c in pool.cards), f
    for name, card in wanted.items():
        assert name in offered, f"{name}: no variant file for its alternate reading in {READINGS}"
        for alt in card["alternate_readings"]:
            assert offered[name][alt["box"]]["text"] == alt["text"], name


def test_reading_variant_changes_the_card():
    base = load_pool()
    alt = load_pool(cards=[READINGS / "diversity_6_at_least_3.toml"])
    assert base.card("Diversity 6").top != alt.card("Diversity 6").top and base.hash != alt.hash


def test_unencoded_text_is_refused_for_play_but_listed(tmp_path, capsys):
    """A card with text but no steps would play as blank: simulating refuses it, naming the file,
    card and box; `cards list` still shows it as not encoded."""
    from protolab.cli import main

    v = tmp_path / "draft.toml"
    v.write_text('variant = "draft"\n[[cards]]\nreplaces = "Fire 1"\nmiddle.text = "Draw 4 cards."\nmiddle.do = []\n')
    with pytest.raises(CardDataError) as e:
        load_pool(cards=[v])
    assert "Fire 1" in str(e.value) and "middle" in str(e.value) and "blank" in str(e.value)
    assert main(["simulate", "--games", "10", "--cards", str(v)]) == 2
    assert "Fire 1" in capsys.readouterr().err
    assert main(["cards", "list", "--cards", str(v), "--format", "json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows["Fire 1"]["encoded"] is False


def test_box_model_takes_exactly_the_box_keys():
    """The pydantic model of a box (what the loader accepts) and the Box dataclass (what it keeps)
    name the same keys, so neither can gain a key the other ignores."""
    assert set(BoxTable.model_fields) == set(MiddleBox.model_fields) == set(BOX_KEYS)


def test_types_are_strict(tmp_path):
    """1 is no `true` (Python's 1 == True): the schema compares types, as the file means them."""
    f = tmp_path / "bad.toml"
    f.write_text(six_cards("middle.do = [ { flip = 1, covered = 1 } ]\n"))
    with pytest.raises(
        CardDataError,
        match=r"X 0: key 'middle.do\[0\].covered': expected true, false or \"any\", "
        r"got 1",
    ):
        load_file(f)
