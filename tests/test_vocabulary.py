"""The card vocabulary is declared once (sim/cards/vocabulary.py): the engine, the loader, the pool
hash and docs/cards.md all follow that one table."""

from pathlib import Path

import pytest

from sim.cards import vocabulary as vocab
from sim.cards.loader import CardDataError, load_file
from sim.engine import _core
from sim.pool import FIRST_BOX, load_pool

DOC = Path(__file__).resolve().parents[1] / "docs" / "cards.md"


def test_doc_carries_the_generated_verb_tables():
    """To refresh docs/cards.md: python -m sim.cards.vocabulary --markdown (paste between the markers)."""
    assert vocab.markdown() in DOC.read_text()


def test_engine_was_built_from_this_table():
    """The compiled enums are the table's: codes, counts, log kinds and the Step fields."""
    K = _core.constants()
    assert _core.VOCAB_DIGEST == vocab.engine_digest()
    assert K["verbs"] == {v.name: v.code for v in vocab.VERBS}
    assert K["count"] == {c.word: i for i, c in enumerate(vocab.COUNTS)}
    assert list(K["log"]) == list(vocab.log_kinds())
    assert sorted(K["log"].values()) == list(range(1, len(vocab.log_kinds()) + 1))


def test_table_is_consistent():
    """Codes are unique and never 0 (V_NONE); each keyword has one main verb; literals are known."""
    codes = [v.code for v in vocab.VERBS]
    assert len(set(codes)) == len(codes) and 0 not in codes
    for word in {v.word for v in vocab.VERBS}:
        assert vocab.by_word(word).word == word
    for v in vocab.VERBS:
        assert v.bot_target in vocab.BOT_TARGETS, v.name
        assert set(v.counts) <= set(vocab.COUNT_WORDS), v.name
    assert len(set(vocab.log_kinds())) == len(vocab.log_kinds())


def test_every_step_record_has_exactly_the_declared_fields():
    pool = load_pool()
    assert all(list(rec) == list(vocab.STEP_FIELDS) for rec in pool.step_records)


def test_mode_is_its_own_field_and_the_hash_reads_the_first_release_form():
    """`mode` never shares `n`; the pool hash still sees the first release's records (mode in n)."""
    pool = load_pool(FIRST_BOX)
    modes = [r for r in pool.step_records if r["verb"] in vocab.CODES_WITH_MODES]
    assert modes and {r["mode"] for r in modes} == {0, 1}
    assert all(r["n"] == 1 for r in modes)
    old = [vocab.first_release_form(r) for r in modes]
    assert all("mode" not in o for o in old) and [o["n"] for o in old] == [r["mode"] for r in modes]
    assert pool.hash == "56922ba8f7efbd99"          # the golden trace's pool (tests/golden/trace.json)


def _one_step_file(tmp_path, step: str) -> Path:
    f = tmp_path / "x.toml"
    f.write_text('protocol = "X"\nset = "S"\n' + "".join(
        f'[[cards]]\nvalue = {v}\nmiddle.do = [ {step} ]\n' for v in range(6)))
    return f


@pytest.mark.parametrize(("step", "fragment"), [
    ('{ shuffle = true }', "key 'middle.do[0].mode': 'shuffle' needs a mode"),
    ('{ shuffle = true, mode = "hand" }', "key 'middle.do[0].mode': expected one of ['deck', 'trash_into_deck']"),
    ('{ shuffle = "deck" }', "key 'middle.do[0].shuffle': expected true"),
    ('{ draw = 1, mode = "deck" }', "key 'middle.do[0].mode': unknown key for verb 'draw'"),
    ('{ reveal = "all" }', "count 'all' does not apply to 'reveal'"),
    ('{ delete = "hand" }', "count 'hand' does not apply to 'delete'"),
    ('{ take = "all", from = "field" }', "count 'all' does not apply to 'take'"),
    ('{ draw = 1, from = "field" }', "key 'middle.do[0].from': expected one of ['deck', 'opponent_deck']"),
])
def test_checks_follow_the_table(tmp_path, step, fragment):
    with pytest.raises(CardDataError) as e:
        load_file(_one_step_file(tmp_path, step))
    assert fragment in str(e.value), str(e.value)


def test_a_keyword_picks_its_engine_verb_by_source():
    assert vocab.engine_verb("reveal", None).name == "reveal"
    assert vocab.engine_verb("reveal", "trash").name == "reveal_zone"
    assert vocab.engine_verb("take", "field").name == "take_field"
    assert vocab.engine_verb("take", None).name == "take"
