"""The card language's vocabulary, declared once: the counts a verb may take (counts.py), the verbs
(verbs.py), the fields of the engine's compiled step record (step_record.py), the engine's other
enums (selectors, destinations, conditions, triggers, passives, zones, phases, end reasons,
decision kinds, restriction flags, event kinds: engine_enums.py) and how each log kind reads
(log_forms.py).

Everything else is derived from these tables: the loader's checks (sim/cards/loader.py), the
engine's enums, `Step` struct, log kinds and notes and verb dispatch (generated into
sim/engine/_vocab_*.pxi by sim/engine/vocab_gen.py on every build, with the digest of digest.py),
the Python enums (sim/enums.py), the step fields the pool hash reads (sim/pool.py), the log texts
(sim/describe.py) and the tables of docs/cards.md and docs/engine.md (docs.py: `python -m
sim.cards.vocabulary --markdown`, `--selectors`, `--triggers`, `--engine`).

Plain data with no imports beyond the standard library, so the build can read it before the
engine exists. Engine codes are stored in compiled records and in the pool hash: never renumber
a verb or a count; a new one takes a new code. This package's names are those of its modules.
"""

from sim.cards.vocabulary.counts import AMOUNTS, COUNT_WORDS, COUNTS, FIELD_COUNTS, Count
from sim.cards.vocabulary.digest import engine_digest
from sim.cards.vocabulary.docs import (
    engine_markdown,
    markdown,
    restrictions_markdown,
    selectors_markdown,
    triggers_markdown,
)
from sim.cards.vocabulary.engine_enums import (
    DENY_IN_LINE,
    DENY_ON_CARDS,
    DENY_ON_FIELD,
    ENUMS,
    SELECTOR_KEYS,
    WORD_SELECTOR_KEYS,
    EngineEnum,
    Member,
    enum,
    printed,
)
from sim.cards.vocabulary.log_forms import (
    BASE_LOG_KINDS,
    LOG_FORMS,
    UNWRITTEN_LOG_KINDS,
    LogForm,
    LogNote,
    log_forms,
    log_kinds,
    log_texts,
)
from sim.cards.vocabulary.step_record import (
    CHOICE_FIELDS,
    CODES_WITH_MODES,
    LATER_STEP_FIELDS,
    PICKS,
    STEP_FIELDS,
    STEP_RECORD,
    StepField,
    first_release_form,
    new_step_record,
)
from sim.cards.vocabulary.verbs import (
    ALL_COUNT,
    BOT_TARGETS,
    COUNT,
    STEPS,
    VERBS,
    Verb,
    by_word,
    engine_verb,
    sources_of,
    verb_codes,
)

__all__ = [
    "ALL_COUNT",
    "AMOUNTS",
    "BASE_LOG_KINDS",
    "BOT_TARGETS",
    "CHOICE_FIELDS",
    "CODES_WITH_MODES",
    "COUNT",
    "COUNTS",
    "COUNT_WORDS",
    "DENY_IN_LINE",
    "DENY_ON_CARDS",
    "DENY_ON_FIELD",
    "ENUMS",
    "FIELD_COUNTS",
    "LATER_STEP_FIELDS",
    "LOG_FORMS",
    "PICKS",
    "SELECTOR_KEYS",
    "STEPS",
    "STEP_FIELDS",
    "STEP_RECORD",
    "UNWRITTEN_LOG_KINDS",
    "VERBS",
    "WORD_SELECTOR_KEYS",
    "Count",
    "EngineEnum",
    "LogForm",
    "LogNote",
    "Member",
    "StepField",
    "Verb",
    "by_word",
    "engine_digest",
    "engine_markdown",
    "engine_verb",
    "enum",
    "first_release_form",
    "log_forms",
    "log_kinds",
    "log_texts",
    "markdown",
    "new_step_record",
    "printed",
    "restrictions_markdown",
    "selectors_markdown",
    "sources_of",
    "triggers_markdown",
    "verb_codes",
]
