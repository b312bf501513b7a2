"""analysis/studies/balance/choice_changes.py compares a step's quantity (`per`, `count`) by what it
counts, not by where its record stands: the record's index differs by pool, as an either's
alternatives' do."""

from pathlib import Path

from analysis.studies.balance.choice_changes import changed_choices
from sim.pool import load_pool

FIRE0 = '[[cards]]\nreplaces = "Fire 0"\nmiddle.do = [{{ flip = 1, per = {{ face = "{face}" }} }}]\n'
APATHY1 = '[[cards]]\nreplaces = "Apathy 1"\nmiddle.do = [{ draw = 1, per = { face = "down" } }]\n'


def _pool(tmp_path: Path, name: str, body: str):
    f = tmp_path / f"{name}.toml"
    f.write_text(f'variant = "{name}"\n' + body)
    return load_pool(cards=[f])


def _changes(before, after) -> dict[str, set[tuple[str, str]]]:
    return {c.card: {(t.decision, t.verb) for t in c.touched} for c in changed_choices(before, after)}


def test_a_quantity_moved_by_another_card_is_no_change(tmp_path):
    """Apathy 1 gains a quantity record before Fire 0's: Fire 0's index moves, its text does not."""
    before = _pool(tmp_path, "a", FIRE0.format(face="down"))
    after = _pool(tmp_path, "b", APATHY1 + FIRE0.format(face="down"))
    assert before.step_records != after.step_records
    changes = _changes(before, after)
    assert "Fire 0" not in changes and "Apathy 1" in changes


def test_what_a_quantity_counts_is_compared(tmp_path):
    """The same index, another count: the flip's pick (how many cards) changes."""
    before = _pool(tmp_path, "a", FIRE0.format(face="down"))
    after = _pool(tmp_path, "b", FIRE0.format(face="up"))
    assert _changes(before, after) == {"Fire 0": {("target", "flip")}}
