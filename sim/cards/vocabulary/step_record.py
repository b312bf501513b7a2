"""The compiled step record (`Step` in the engine): its fields, their defaults, and the form the
pool hash reads."""

from __future__ import annotations

from dataclasses import dataclass

from sim.cards.vocabulary.verbs import VERBS

PICKS = "picks"  # StepField.chosen: the field shapes what the step's verb asks its decider to pick (Verb.picks)


@dataclass(frozen=True)
class StepField:
    """One field of the compiled step record. `later`: added after the first release; it enters
    the pool hash only when it differs from `default`, so old pools keep their hash. `chosen`: the
    choice a player makes while the step resolves that this field shapes, a DecisionKind word
    (`may`, `either`, `each_line`, `line`) or PICKS; "" for a field no player's choice reads (a
    count drawn from the top, a condition, a trigger). A variant that changes such a field changes
    a choice the bots' fixed rule may take (analysis/studies/balance/choice_changes.py, docs/analysis.md)."""

    name: str
    ctype: str
    default: int = 0
    later: bool = False
    doc: str = ""
    chosen: str = ""


STEP_RECORD: tuple[StepField, ...] = (
    StepField("verb", "uint8_t", doc="engine verb code (VERBS)", chosen=PICKS),
    StepField("count_kind", "uint8_t", doc="CountKind of the verb's count", chosen=PICKS),
    StepField("n", "int8_t", doc="the count, when count_kind is CK_N (else 1)", chosen=PICKS),
    StepField("whose", "uint8_t", chosen=PICKS),
    StepField("covered", "uint8_t", chosen=PICKS),
    StepField("face", "uint8_t", chosen=PICKS),
    StepField("other", "uint8_t", chosen=PICKS),
    StepField("line", "uint8_t", chosen=PICKS),
    StepField("value_mask", "uint16_t", doc="bit v set: value v allowed; 0: any value", chosen=PICKS),
    StepField("min_cards", "uint8_t", chosen=PICKS),
    StepField("pick", "uint8_t", chosen=PICKS),
    StepField("each", "uint8_t", chosen="each_line"),
    StepField("to", "uint8_t", chosen="line"),
    StepField("source", "uint8_t", chosen=PICKS),
    StepField("face_down", "uint8_t"),
    StepField("under_this", "uint8_t"),
    StepField("who_opp", "uint8_t", doc="the opponent performs and decides the step", chosen=PICKS),
    StepField("may", "uint8_t", chosen="may"),
    StepField("cond", "uint8_t"),
    StepField("alt_a", "int16_t", doc="either: first step index and length of each alternative", chosen="either"),
    StepField("alt_a_len", "int16_t", chosen="either"),
    StepField("alt_b", "int16_t", chosen="either"),
    StepField("alt_b_len", "int16_t", chosen="either"),
    StepField(
        "value_op", "uint8_t", 255, True, "dynamic value selector: CmpOp against value_expr (255: none)", chosen=PICKS
    ),
    StepField("value_expr", "uint8_t", 0, True, "CountKind of the compared amount", chosen=PICKS),
    StepField("cond_a", "uint8_t", 0, True, "COND_CMP: CountKind cond_a <cond_op> (cond_b or cond_n)"),
    StepField("cond_op", "uint8_t", 0, True),
    StepField("cond_b", "uint8_t", 0, True),
    StepField("cond_n", "int8_t", 0, True),
    StepField("side_opp", "uint8_t", 0, True, "play onto the opponent's side"),
    StepField("random", "uint8_t", 0, True, "discard at random", chosen=PICKS),
    StepField("no_middle", "uint8_t", 0, True, "flip without resolving the middle text (Luck 1)"),
    StepField(
        "proto_filter",
        "uint8_t",
        0,
        True,
        "1: cards of this text's protocol, 2: cards of other protocols",
        chosen=PICKS,
    ),
    StepField("into_opp", "uint8_t", 0, True, "discard into the opponent's trash (ownership changes)"),
    StepField("mode", "uint8_t", 0, True, "index of the step's `mode` among its verb's modes"),
    StepField("per", "int16_t", -1, True, "index of the step's quantity record (-1: none): n for each counted", PICKS),
    StepField("count", "int16_t", -1, True, "index of the quantity record a comparison names as `count` (-1: none)"),
    StepField("of", "uint8_t", 0, True, "a quantity record: what it counts (Counted); its selectors say which"),
    StepField("up_to", "uint8_t", 0, True, "up to the count: the decider may stop before each pick", chosen="may"),
)

STEP_FIELDS = tuple(f.name for f in STEP_RECORD)
LATER_STEP_FIELDS = {f.name: f.default for f in STEP_RECORD if f.later}
CHOICE_FIELDS = {f.name: f.chosen for f in STEP_RECORD if f.chosen}
CODES_WITH_MODES = {v.code for v in VERBS if v.modes}


def new_step_record() -> dict[str, int]:
    """A step record with every field at its default."""
    return {f.name: f.default for f in STEP_RECORD}


def first_release_form(rec: dict[str, int]) -> dict[str, int]:
    """A step record as the first release wrote it, which the pool hash reads: a verb's mode was
    kept in `n` then (verbs with modes have no count), and later fields at their default are left
    out. So a pool's hash does not change when the record grows."""
    out = {k: v for k, v in rec.items() if k not in LATER_STEP_FIELDS or v != LATER_STEP_FIELDS[k]}
    if rec["verb"] in CODES_WITH_MODES:
        out["n"] = rec["mode"]
        out.pop("mode", None)
    return out
