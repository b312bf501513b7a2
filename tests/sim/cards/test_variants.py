"""Variant files change exactly what they say (docs/cards.md, "Variants"): every other key of a
replaced card is inherited, and ambiguous files are refused, naming the file and the card."""

import json

import pytest
from sim.engine._core import MAX_PROTOCOLS, CorePool

from protolab.cli import main
from sim.cards.loader import BOX_KEYS, BOXES, EMPTY_BOX, CardDataError
from sim.pool import load_pool
from strategies.seats import play_games


def _variant(tmp_path, body: str, name: str = "v.toml"):
    f = tmp_path / name
    f.write_text('variant = "test"\n' + body)
    return f


def _without_value(record: dict) -> dict:
    return {k: v for k, v in record.items() if k != "value"}


def test_value_only_variant_of_every_card_changes_only_the_value(pool, tmp_path):
    """All 180 cards restated with another value compile to the same records but for the value."""
    body = "".join(f'[[cards]]\nreplaces = "{c.name}"\nvalue = {c.value + 7}\n' for c in pool.cards)
    varied = load_pool(cards=[_variant(tmp_path, body)])
    assert varied.step_records == pool.step_records
    for before, after in zip(pool.card_records, varied.card_records, strict=True):
        assert after["value"] == before["value"] + 7
        assert _without_value(after) == _without_value(before)
    assert [c.name for c in varied.cards] == [c.name for c in pool.cards]
    assert all(varied.specs[i].source != pool.specs[i].source for i in range(len(pool.cards)))


@pytest.mark.parametrize("key", BOX_KEYS)
def test_every_box_key_survives_a_value_only_variant(pool, tmp_path, key):
    """One case per key the loader knows (the fields of Box), so a new key cannot be forgotten: some
    official card sets it, and restating that card's value keeps it."""
    users = [c for c in pool.specs for b in c.boxes.values() if getattr(b, key) != getattr(EMPTY_BOX, key)]
    assert users, f"no official card sets box key {key!r}; add a variant case for it here"
    card = users[0]
    f = _variant(tmp_path, f'[[cards]]\nreplaces = "{card.name}"\nvalue = {card.value}\n')
    after = load_pool(cards=[f]).specs[pool.card(card.name).id]
    assert after.as_data() == card.as_data()


def test_a_box_key_replaces_that_key_only(pool, tmp_path):
    """`bottom.during` alone keeps Ice 1's text, trigger, steps and `where`."""
    f = _variant(tmp_path, '[[cards]]\nreplaces = "Ice 1"\nbottom.during = "opponent_turn"\n')
    before = pool.specs[pool.card("Ice 1").id].as_data()
    after = load_pool(cards=[f]).specs[pool.card("Ice 1").id].as_data()
    assert after["bottom"] == {**before["bottom"], "during": "opponent_turn"}
    assert after["bottom"]["where"] == "this_line"
    assert after["middle"] == before["middle"]


def test_replacing_one_card_twice_in_a_file_is_refused(tmp_path):
    f = _variant(tmp_path, '[[cards]]\nreplaces = "Hate 0"\nvalue = 5\n[[cards]]\nreplaces = "hate 0"\nvalue = 4\n')
    with pytest.raises(CardDataError, match=r"v\.toml: card #2: key 'replaces': 'hate 0' is already replaced"):
        load_pool(cards=[f])


def _protocol(tmp_path, names_values, name="blaze.toml"):
    body = 'protocol = "Blaze"\nset = "Variant"\n' + "".join(
        f"[[cards]]\nvalue = {v}\n" + (f'name = "{n}"\n' if n else "") for n, v in names_values
    )
    f = tmp_path / name
    f.write_text(body)
    return f


def test_duplicate_values_in_a_protocol_file_are_refused(tmp_path):
    f = _protocol(tmp_path, [("Blaze 3", 3), ("Blaze 3b", 3), (None, 0), (None, 1), (None, 2), (None, 5)])
    with pytest.raises(CardDataError, match=r"blaze\.toml: Blaze 3b: key 'value': value 3 is also Blaze 3's"):
        load_pool(cards=[f])


def test_a_card_name_already_in_the_pool_is_refused(tmp_path):
    f = _protocol(tmp_path, [("Fire 1", 0), (None, 1), (None, 2), (None, 3), (None, 4), (None, 5)])
    with pytest.raises(CardDataError, match=r"blaze\.toml: Fire 1: key 'name': the pool already has a card"):
        load_pool(cards=[f])


def test_cards_check_refuses_with_exit_2_and_notes_a_shared_value(tmp_path, capsys):
    twice = _variant(tmp_path, '[[cards]]\nreplaces = "Hate 0"\nvalue = 5\n[[cards]]\nreplaces = "Hate 0"\n')
    assert main(["cards", "check", str(twice)]) == 2
    assert "already replaced" in capsys.readouterr().err
    shared = _variant(tmp_path, '[[cards]]\nreplaces = "Hate 0"\nvalue = 5\n', "shared.toml")
    assert main(["cards", "check", str(shared)]) == 0
    assert "note: Hate 0 now has value 5, like Hate 5" in capsys.readouterr().out


def test_cards_show_prints_every_encoded_key(pool, capsys):
    assert main(["cards", "show", "Ice 1"]) == 0
    out = capsys.readouterr().out
    assert "where: this_line" in out and "by: opponent" in out and "when: after_play" in out
    assert main(["cards", "show", "Peace 4", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    spec = pool.specs[pool.card("Peace 4").id]
    assert {k: data[k] for k in ("name", "value", *[b for b in BOXES if b in data])} == spec.as_data()
    assert data["bottom"]["during"] == "opponent_turn"


def _protocols(tmp_path, count):
    """`count` new blank protocols (Blaze00, Blaze01, ...), each in its own file."""
    files = []
    for k in range(count):
        f = tmp_path / f"blaze{k:02d}.toml"
        f.write_text(
            f'protocol = "Blaze{k:02d}"\nset = "Variant"\n' + "".join(f"[[cards]]\nvalue = {v}\n" for v in range(6))
        )
        files.append(f)
    return files


def test_a_pool_of_the_engines_protocol_limit_plays_and_one_more_is_refused(tmp_path):
    official = len(load_pool().protocols)
    files = _protocols(tmp_path, MAX_PROTOCOLS - official + 1)
    pool = load_pool(cards=files[:-1])
    assert len(pool.protocols) == MAX_PROTOCOLS
    # the highest protocol id takes part: fixed trios that include it, every invariant checked
    last = pool.protocols[-1]
    others = [p for p in ("Fire", "Water", "Spirit", "Metal", "Life") if p != last]
    cols = play_games(
        pool,
        range(1, 41),
        strategies=("greedy", "random"),
        check_invariants=True,
        protocols=[((last, others[0], others[1]), ("Blaze00", others[2], others[3]))],
    )
    assert (cols["violation"] == 0).all() and (cols["winner"] >= 0).all()
    refusal = rf"a pool holds at most {MAX_PROTOCOLS} protocols; .* give {MAX_PROTOCOLS + 1}"
    with pytest.raises(CardDataError, match=refusal):
        load_pool(cards=files)
    with pytest.raises(ValueError, match=rf"at most {MAX_PROTOCOLS} protocols, not {MAX_PROTOCOLS + 1}"):
        CorePool([], [], [[0] * 6] * (MAX_PROTOCOLS + 1))
