"""The digest of the vocabulary the engine is generated from, compiled into the engine
(sim/engine/vocab_gen.py) and compared by the loader (sim/cards/loader.py) before it loads a card."""

from __future__ import annotations

import hashlib

from sim.cards.vocabulary.counts import COUNTS
from sim.cards.vocabulary.engine_enums import ENUMS
from sim.cards.vocabulary.log_forms import LOG_FORMS, log_kinds
from sim.cards.vocabulary.step_record import STEP_RECORD
from sim.cards.vocabulary.verbs import VERBS


def engine_digest() -> str:
    """A digest of everything the engine is generated from: an engine built from another table
    refuses to load cards (sim/cards/loader.py)."""
    parts = [repr((v.name, v.code, v.on_field, v.possible, v.log, v.bot_target)) for v in VERBS]
    parts += [repr((c.word, c.cname)) for c in COUNTS]
    parts += [repr((f.name, f.ctype)) for f in STEP_RECORD]
    parts += [repr(log_kinds())]
    parts += [repr((e.name, e.prefix, tuple((m.name, m.word, c) for m, c in e.codes()))) for e in ENUMS]
    parts += [repr((f.kind, f.note, f.constants())) for f in LOG_FORMS]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]
