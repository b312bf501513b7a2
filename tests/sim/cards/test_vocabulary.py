"""The card vocabulary is declared once (sim/cards/vocabulary/): the engine, the loader, the pool
hash and docs/cards.md all follow that one table."""

from pathlib import Path
from string import Formatter

import pytest
from conftest import load_refused, six_cards

from sim import enums
from sim.cards import vocabulary as vocab
from sim.cards.compiler import compile_card
from sim.cards.loader import load_file
from sim.describe import FIELDS, OPTION_READERS
from sim.engine import _core, vocab_gen
from sim.pool import FIRST_BOX, load_pool

DOC = Path(__file__).resolve().parents[3] / "docs" / "cards.md"
ENGINE_DOC = DOC.with_name("engine.md")


def test_doc_carries_the_generated_verb_tables():
    """To refresh docs/cards.md: python -m sim.cards.vocabulary --markdown (paste between the markers)."""
    assert vocab.markdown() in DOC.read_text()


def test_docs_carry_the_generated_selector_trigger_and_engine_tables():
    """Refresh with python -m sim.cards.vocabulary --selectors / --triggers / --restrictions (docs/cards.md) and
    --engine (docs/engine.md), pasting each between its markers."""
    assert vocab.selectors_markdown() in DOC.read_text()
    assert vocab.triggers_markdown() in DOC.read_text()
    assert vocab.restrictions_markdown() in DOC.read_text()
    assert vocab.engine_markdown() in ENGINE_DOC.read_text()


def test_engine_enums_are_the_tables():
    """Every enum of ENUMS compiled with the table's words and codes (`constants()` reads them)."""
    K = _core.constants()
    for e in vocab.ENUMS:
        assert _core.ENUM_WORDS[e.key] == e.words(), e.name
    assert K["whose"] == {"any": 0, "you": 1, "opponent": 2}
    assert K["end_reason"] == enums.names("end_reason") and K["event_kind"] == enums.names("event_kind")
    assert K["cond_cmp"] == enums.Cond.CMP


def test_python_enums_are_the_tables():
    """sim/enums.py: each enum's members under their C names less the prefix, with the table's codes."""
    for e in vocab.ENUMS:
        py = enums.ENUMS[e.name]
        assert {m.name: m.value for m in py} == {m.name: code for m, code in e.codes()}, e.name
    assert enums.Zone.FIELD == 3 and enums.Restrict.NO_FACEUP == 4 and enums.EventKind.DRAW == 1
    assert [k.name.lower() for k in enums.LogKind] == list(vocab.log_kinds())


def test_generated_declarations_name_every_member_and_note():
    """The C side: each member and log note is a constant of the generated declarations."""
    decl = vocab_gen.decl_text()
    for e in vocab.ENUMS:
        assert f"cdef enum {e.name}:" in decl
        for m, code in e.codes():
            assert f"    {e.cname(m)} = {code}" in decl
    for f in vocab.LOG_FORMS:
        for name, code in f.constants():
            assert f"    {name} = {code}\n" in decl


def test_enum_table_is_consistent():
    """C names are unique across the enums and the log notes; codes unique within an enum; every
    verb's source is a `from` word; every log kind reads somehow; `state`'s notes are its modes."""
    cnames = [e.cname(m) for e in vocab.ENUMS for m in e.members]
    cnames += [name for f in vocab.LOG_FORMS for name, _ in f.constants()]
    assert len(set(cnames)) == len(cnames)
    for e in vocab.ENUMS:
        codes = [c for _, c in e.codes()]
        assert len(set(codes)) == len(codes) and len(e.words()) == len({str(w) for w in e.words()}), e.name
    assert {s for v in vocab.VERBS for s in v.sources} <= set(vocab.enum("from").words())
    assert set(vocab.log_forms()) == set(vocab.log_kinds()) - set(vocab.UNWRITTEN_LOG_KINDS)
    engine = "".join(f.read_text() for f in Path(vocab_gen.HERE).glob("*.pxi") if not f.name.startswith("_vocab"))
    assert not [k for k in vocab.UNWRITTEN_LOG_KINDS if f"LG_{k.upper()}" in engine]
    state = vocab.log_forms()["state"]
    assert [state.zero, *(n.name for n in state.notes)] == [m.upper() for m in vocab.by_word("state").modes]


def test_every_log_text_names_known_fields():
    """A log text may only use the fields sim/describe.py works out (FIELDS)."""
    for form in vocab.log_forms().values():
        for text in (form.text, *(n.text for n in form.notes)):
            named = {name for _, name, _, _ in Formatter().parse(text) if name}
            assert named <= set(FIELDS), (form.kind, named - set(FIELDS))


def test_every_decision_kind_has_an_option_reader():
    """sim/describe.py names the options of every decision kind of the table."""
    assert set(OPTION_READERS) == set(vocab.enum("decision").words())


@pytest.mark.parametrize("key", vocab.WORD_SELECTOR_KEYS + ("to",))
def test_every_selector_word_loads_and_compiles_to_its_code(tmp_path, key):
    """A word in the table is a word of the card language: the loader takes it and the step record
    holds the table's code."""
    verb = "shift" if key == "to" else "delete"
    for word, code in vocab.enum(key).words().items():
        value = str(word).lower() if isinstance(word, bool) else f'"{word}"'
        spec = load_file(_one_step_file(tmp_path, f"{{ {verb} = 1, {key} = {value} }}"))
        steps: list[dict[str, int]] = []
        compile_card(spec.cards[0], 0, steps)
        assert steps[0][key] == code, (key, word)


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
    assert pool.hash == "56922ba8f7efbd99"  # the golden trace's pool (tests/golden/trace.json)


def _one_step_file(tmp_path, step: str) -> Path:
    f = tmp_path / "x.toml"
    f.write_text(six_cards(f"middle.do = [ {step} ]\n"))
    return f


@pytest.mark.parametrize(
    ("step", "fragment"),
    [
        ("{ shuffle = true }", "key 'middle.do[0].mode': 'shuffle' needs a mode"),
        ('{ shuffle = true, mode = "hand" }', "key 'middle.do[0].mode': expected one of ['deck', 'trash_into_deck']"),
        ('{ shuffle = "deck" }', "key 'middle.do[0].shuffle': expected true"),
        ('{ draw = 1, mode = "deck" }', "key 'middle.do[0].mode': unknown key for verb 'draw'"),
        ('{ reveal = "all" }', "count 'all' does not apply to 'reveal'"),
        ('{ delete = "hand" }', "count 'hand' does not apply to 'delete'"),
        ('{ take = "all", from = "field" }', "count 'all' does not apply to 'take'"),
        ('{ draw = 1, from = "field" }', "key 'middle.do[0].from': expected one of ['deck', 'opponent_deck']"),
    ],
)
def test_checks_follow_the_table(tmp_path, step, fragment):
    message = load_refused(_one_step_file(tmp_path, step))
    assert fragment in message, message


def test_a_keyword_picks_its_engine_verb_by_source():
    assert vocab.engine_verb("reveal", None).name == "reveal"
    assert vocab.engine_verb("reveal", "trash").name == "reveal_zone"
    assert vocab.engine_verb("take", "field").name == "take_field"
    assert vocab.engine_verb("take", None).name == "take"
