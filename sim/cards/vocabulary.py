"""The card language's vocabulary, declared once: the verbs, the counts a verb may take, the
fields of the engine's compiled step record, the engine's other enums (selectors, destinations,
conditions, triggers, passives, zones, phases, end reasons, decision kinds, restriction flags,
event kinds: ENUMS) and how each log kind reads (LOG_FORMS).

Everything else is derived from these tables: the loader's checks (sim/cards/loader.py), the
engine's enums, `Step` struct, log kinds and notes and verb dispatch (generated into
sim/engine/_vocab_*.pxi by sim/engine/vocab_gen.py on every build), the Python enums
(sim/enums.py), the step fields the pool hash reads (sim/pool.py), the log texts
(sim/describe.py) and the tables of docs/cards.md and docs/engine.md (`python -m
sim.cards.vocabulary --markdown`, `--selectors`, `--triggers`, `--engine`).

Plain data with no imports beyond the standard library, so the build can read it before the
engine exists. Engine codes are stored in compiled records and in the pool hash: never renumber
a verb or a count; a new one takes a new code.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass, field

# -- counts (rule 6.3): what a verb's value or a comparison may name ------------------------------


@dataclass(frozen=True)
class Count:
    """A count word; `cname` is its CountKind in the engine (code = position in COUNTS)."""

    word: str
    cname: str
    meaning: str
    as_count: bool = True  # may be a verb's value (`delete = "all"`)
    amount: bool = False  # may be compared (`if = "hand > 1"`, `value_gt = "hand"`)


COUNTS: tuple[Count, ...] = (
    Count("n", "CK_N", "`1`, `2`, ...: that many (targets chosen one at a time by the deciding player)"),
    Count("this", "CK_THIS", "this card, wherever it is (6.3)"),
    Count("that", "CK_THAT", 'the card the previous card-step of this box acted on ("that card")'),
    Count("all", "CK_ALL", "every matching card at once, simultaneous (6.4)"),
    Count("each", "CK_EACH", "every matching card, noted first, then one at a time in the decider's order (6.4)"),
    Count("1+", "CK_ONE_OR_MORE", "one or more, the decider stops when they like (Fire 4, Plague 2)"),
    Count("discarded+1", "CK_DISCARDED_PLUS1", "the number of cards discarded earlier in this box, plus 1"),
    Count(
        "value_of_that",
        "CK_VALUE_OF_THAT",
        'the current value of "that card" (Light 0: in the trash, the printed value)',
        amount=True,
    ),
    Count("per_2_in_line", "CK_PER2_IN_LINE", "one for every 2 cards in this line, both sides (Gravity 0)"),
    Count(
        "hand",
        "CK_HAND",
        "every card in the player's hand, at once (Chaos 4, Fear 1, Peace 1); compared: the number of cards in it",
        amount=True,
    ),
    Count(
        "0+",
        "CK_ANY_NUMBER",
        "any number, including none (War 1); a field verb: matching cards one at a time, each a "
        "different card, the decider stopping when they like (up to every match)",
    ),
    Count("discarded", "CK_DISCARDED", "the number of cards discarded earlier in this text", amount=True),
    Count("discarded-1", "CK_DISCARDED_MINUS1", "the same minus 1, never below 0"),
    Count("stated", "CK_STATED", "the number stated earlier in this text", amount=True),
    Count(
        "protocols_in_field",
        "CK_PROTOCOLS_IN_FIELD",
        "different protocols among face-up cards in the field, both sides (face-down cards have none)",
        amount=True,
    ),
    Count("protocols_in_line", "CK_PROTOCOLS_IN_LINE", "the same, in this line", amount=True),
    Count(
        "protocol_cards_in_field",
        "CK_PROTO_CARDS_IN_FIELD",
        "face-up cards of this text's protocol in the field (Unity 2)",
        amount=True,
    ),
    Count(
        "other_protocol_cards_in_field",
        "CK_OTHER_PROTO_CARDS_IN_FIELD",
        'the same, not counting this card ("another Unity card")',
        as_count=False,
        amount=True,
    ),
    Count("your_value_here", "CK_YOUR_VALUE_HERE", "your total in this line", as_count=False, amount=True),
    Count(
        "opponent_value_here", "CK_OPP_VALUE_HERE", "your opponent's total in this line", as_count=False, amount=True
    ),
    Count("deck", "CK_DECK", "cards in the player's deck", as_count=False, amount=True),
    Count("trash", "CK_TRASH", "cards in the player's trash", as_count=False, amount=True),
    Count(
        "count",
        "CK_COUNTED",
        "as many as the step's `count = { ... }` counts ([Quantities](#quantities)): "
        '"cards equal to the number of ..."',
        amount=True,
    ),
)

COUNT_WORDS = tuple(c.word for c in COUNTS if c.as_count and c.word != "n")
AMOUNTS = tuple(c.word for c in COUNTS if c.amount)
# A field verb acts on chosen cards: one at a time, this/that card, each, or all at once.
FIELD_COUNTS = ("this", "that", "each")

# -- verbs ---------------------------------------------------------------------------------------

COUNT = "count"  # Verb.value: a number 1-30 or one of the verb's count words
STEPS = "steps"  # Verb.value: two arrays of steps (either)


@dataclass(frozen=True)
class Verb:
    """One engine verb. `name` is its engine name: the code is V_<NAME> and the implementation is
    bound by name, `verb_<name>` / `possible_<name>` in sim/engine/verbs.pxi (a field verb:
    `act_<name>`, applied to each chosen card by the shared field-verb code). `keyword` is the
    card-language key it is written with; a keyword with several engine verbs picks one by `from`."""

    name: str
    code: int
    does: str
    value: str | tuple = COUNT  # COUNT, STEPS, or the literal values the verb key takes
    counts: tuple[str, ...] = COUNT_WORDS  # the count words allowed when value is COUNT
    modes: dict[str, str] = field(default_factory=dict)  # `mode = ...`: the mode's meaning
    sources: dict[str, str] = field(default_factory=dict)  # `from = ...`: the source's meaning
    options: dict[str, str] = field(default_factory=dict)  # other verb-specific modifiers (docs)
    keyword: str = ""  # default: name
    on_field: bool = False  # targets are field cards chosen by the selectors
    possible: bool = True  # has possible_<name>; False: the step is always tried
    log: str = ""  # a log kind of the verb's own
    log_text: str = ""  # its readable text (str.format; see sim/describe.py)
    bot_target: str = "first"  # the built-in bots' default target: first, remove, flip, random
    asks: str = ""  # the decision (DecisionKind word) its decider answers to pick
    # what it acts on; "": it picks nothing (field verbs: `target`)

    @property
    def word(self) -> str:
        return self.keyword or self.name

    @property
    def picks(self) -> str:
        """The decision its decider answers to pick what the step acts on (a DecisionKind word), or
        "" when the step acts without a pick (a draw from the top, a random take)."""
        return self.asks or ("target" if self.on_field else "")

    @property
    def cname(self) -> str:
        return "V_" + self.name.upper()


ALL_COUNT = (*FIELD_COUNTS, "all", "0+")

VERBS: tuple[Verb, ...] = (
    Verb(
        "draw",
        1,
        "draw from your deck (6.5)",
        sources={
            "opponent_deck": "the top card of the opponent's deck, which becomes yours (Love 1)",
            "deck": "the drawer chooses matching cards out of their (revealed) deck; with count "
            '`"all"` every match (Clarity 2, Unity 4). A draw (Ice 6 stops it, after_draw '
            "sees it), never a reshuffle",
        },
    ),
    Verb(
        "discard",
        2,
        'discard from hand; with `who = "opponent"` the opponent chooses and discards from theirs',
        asks="discard",
        sources={
            "deck_top": 'the top card(s) of your deck go to your trash and become "that card"; '
            'count `"all"` is the whole deck (Time 1). A discard by the text\'s player; '
            "no reshuffle",
            "opponent_deck": "the same from the top of the opponent's deck, into their trash",
        },
        options={
            'into = "opponent_trash"': "the discarded card goes to the opponent's trash and becomes "
            "theirs (Assimilation 1)",
            "random = true": "cards leave the hand at random (Fear 4)",
        },
    ),
    Verb(
        "flip",
        3,
        "flip chosen field cards",
        counts=ALL_COUNT,
        on_field=True,
        bot_target="flip",
        options={"ignore_middle = true": "flip without resolving the middle text (Luck 1)"},
    ),
    Verb("delete", 4, "delete chosen field cards", counts=ALL_COUNT, on_field=True, bot_target="remove"),
    Verb(
        "return",
        5,
        "return chosen field cards to their owner's hand",
        counts=ALL_COUNT,
        on_field=True,
        bot_target="remove",
    ),
    Verb(
        "shift",
        6,
        "move chosen field cards to another line of their side (destination `to`)",
        counts=ALL_COUNT,
        on_field=True,
        bot_target="random",
    ),
    Verb(
        "reveal",
        7,
        "reveal chosen field cards",
        counts=FIELD_COUNTS,
        on_field=True,
        sources={"field": "(default) cards on the field chosen by the selectors"},
    ),
    Verb(
        "play",
        8,
        'play a card: face-up unless `face = "down"`; destination by `to`; `under = "this"` lands '
        'it under this card (Gravity 0); `who = "opponent"` makes the opponent play (Gravity 6)',
        sources={
            "hand": "(default) a card from your hand",
            "deck_top": "the top card of your deck, face-down; it keeps its owner (9.4). "
            '`side = "opponent"` plays onto the opponent\'s side (Assimilation 6); '
            '`to = "this_stack"` onto this card\'s stack (Assimilation 2)',
            "opponent_deck": "the same from the top of the opponent's deck",
            "trash": 'a card from your trash (Time 0); count `"that"` plays "that card" from your hand '
            "or trash (Luck 0, Time 3)",
        },
        asks="play",
    ),
    Verb("refresh", 9, "the refresh action (4.5)", value=(True,)),
    Verb(
        "rearrange",
        10,
        "rearrange a side's protocols, ending in a different order (4.4)",
        value=(True,),
        asks="rearrange",
        modes={"yours": "your protocols", "theirs": "your opponent's protocols"},
        possible=False,
    ),
    Verb("swap", 11, "swap the positions of 2 of your protocols", value=("yours",), possible=False, asks="line"),
    Verb("reveal_hand", 12, "the player (`who`) reveals their hand", value=(True,), possible=False),
    Verb("reveal_from_hand", 13, "reveal 1 card from your hand (write `1`)", asks="hand"),
    Verb(
        "give",
        14,
        "give N cards from your hand to the opponent (ownership changes, 9.1)",
        asks="hand",
        log="give",
        log_text="{who} gives {tgt} to {opponent}",
    ),
    Verb("take", 15, "take N random cards from the opponent's hand (ownership changes)"),
    Verb(
        "deny_compile",
        16,
        "your opponent cannot compile on their next turn (Metal 1)",
        value=("next_turn",),
        log="deny",
        log_text="{src}: {opponent} cannot compile on turn {b}",
        possible=False,
    ),
    Verb(
        "either",
        17,
        "the decider picks one of the two that can change the game state (6.2)",
        value=STEPS,
        asks="either",
    ),
    Verb(
        "state",
        18,
        'state something, remembered for `value = "stated"` and `if = "that_matches_stated"` (Luck 0, Luck 3)',
        value=(True,),
        modes={"number": "a number 0-6", "protocol": "a protocol: any protocol of the pool, even one not in this game"},
        log="state",
        possible=False,
        asks="state_number",
    ),
    Verb(
        "shuffle",
        19,
        "shuffle your deck (Clarity 4, Time 0)",
        value=(True,),
        modes={"deck": "your deck", "trash_into_deck": "put your trash into your deck, then shuffle"},
    ),
    Verb(
        "swap_stacks",
        20,
        "swap two of your non-empty stacks, keeping their order; no card is covered or uncovered by it (Mirror 2)",
        value=("yours",),
        asks="line",
        log="swap_stacks",
        log_text="{src} swaps {who}'s {line_a} and {line_b} stacks",
    ),
    Verb(
        "copy_middle",
        21,
        "resolve the middle text of a chosen card as this card's own text (rule 10, "
        "Mirror 1): only face-up cards with a middle text that is not ignored (Apathy 2) or "
        "suppressed (Fear 0)",
        counts=FIELD_COUNTS,
        on_field=True,
        log="copy",
        log_text="{src} copies the middle text of {tgt}",
    ),
    Verb(
        "compile_protocol",
        22,
        "turn the controller's protocol of this text's protocol to Compiled; "
        "not a compile (no control, no deletions, no after_compile); three Compiled "
        "protocols still win (Diversity 0, Unity 1)",
        value=("this",),
        possible=False,
    ),
    Verb(
        "reveal_zone",
        23,
        "",
        keyword="reveal",
        asks="trash",
        sources={
            "deck_top": "reveal the top card of your deck (information only, 6.8)",
            "deck": "reveal your whole deck",
            "trash": 'choose 1 card of your trash; it becomes "that card"',
            "drawn": 'choose 1 of the cards this text drew; it becomes "that card"',
        },
    ),
    Verb(
        "take_field",
        24,
        "",
        keyword="take",
        counts=FIELD_COUNTS,
        on_field=True,
        sources={
            "field": "put a chosen field card (selectors apply) into your hand; you own it from now on (Assimilation 0)"
        },
    ),
    Verb(
        "take_trash",
        25,
        "",
        keyword="take",
        asks="trash",
        sources={"trash": "put N chosen cards of your trash into your hand, one at a time (not a draw)"},
    ),
    Verb(
        "gain_control",
        26,
        "move chosen field cards to your side of the same line, on top of its stack, keeping their face; "
        "the owner does not change (9.1, 9.4), the side does (9.2); uncovers and covers as a shift does",
        counts=ALL_COUNT,
        on_field=True,
        bot_target="remove",
        log="gain_control",
        log_text="{src}: {who} gains control of {tgt} in {line_a}",
    ),
)

BOT_TARGETS = ("first", "remove", "flip", "random")

# Log kinds of the engine that no verb owns (order kept from the first release; the numbers are
# not stored anywhere). Verbs add their own after these, in code order.
BASE_LOG_KINDS = (
    "turn",
    "decision",
    "play",
    "draw",
    "discard",
    "flip",
    "delete",
    "return",
    "shift",
    "compile",
    "control",
    "refresh",
    "rearrange",
    "trigger",
    "win",
    "reveal",
    "take",
    "cancel",
    "draft",
    "phase",
    "shuffle",
    "skip",
)
# declared but never written by the engine (kept so that the kinds after it keep their numbers)
UNWRITTEN_LOG_KINDS = ("phase",)


def log_kinds() -> tuple[str, ...]:
    """Every log kind, in engine order (LG_<KIND> = 1, 2, ...)."""
    return BASE_LOG_KINDS + tuple(v.log for v in VERBS if v.log)


def log_texts() -> dict[str, str]:
    """Log kind -> text template, for the verbs that give one."""
    return {v.log: v.log_text for v in VERBS if v.log and v.log_text}


def verb_codes() -> dict[str, int]:
    """Card-language keyword -> engine code of its main verb (the one not picked by `from`)."""
    return {v.word: v.code for v in VERBS if not v.keyword}


def engine_verb(word: str, source: str | None) -> Verb:
    """The engine verb a step `{ word = ..., from = source }` compiles to."""
    rows = [v for v in VERBS if v.word == word]
    for v in rows:
        if v.keyword and source in v.sources:
            return v
    return next(v for v in rows if not v.keyword)


def sources_of(word: str) -> tuple[str, ...]:
    """The `from` values a keyword accepts (over all its engine verbs)."""
    return tuple(s for v in VERBS if v.word == word for s in v.sources)


def by_word(word: str) -> Verb:
    return next(v for v in VERBS if v.word == word and not v.keyword)


# -- the compiled step record (`Step` in the engine) ----------------------------------------------


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
        "1: cards of this text's protocol, 2: cards of other protocols, 3: of protocol_id",
        chosen=PICKS,
    ),
    StepField("into_opp", "uint8_t", 0, True, "discard into the opponent's trash (ownership changes)"),
    StepField("mode", "uint8_t", 0, True, "index of the step's `mode` among its verb's modes"),
    StepField("per", "int16_t", -1, True, "index of the step's quantity record (-1: none): n for each counted", PICKS),
    StepField("count", "int16_t", -1, True, "index of the quantity record a comparison names as `count` (-1: none)"),
    StepField("of", "uint8_t", 0, True, "a quantity record: what it counts (Counted); its selectors say which"),
    StepField("up_to", "uint8_t", 0, True, "up to the count: the decider may stop before each pick", chosen="may"),
    StepField("protocol_id", "int16_t", -1, True, "the protocol a named protocol selector names (-1: none)", PICKS),
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


# -- the rest of the card language and the engine's enums -----------------------------------------


@dataclass(frozen=True)
class Member:
    """One member of an engine enum. In C it is the enum's prefix + `name` (W_ + ANY), on the
    Python side (sim/enums.py) `Enum.name` (Whose.ANY). `word` is how card files, `constants()` and
    the docs spell it; None: the engine's own (TR_MIDDLE, D_NONE)."""

    name: str
    word: str | bool | None = None
    meaning: str = ""
    example: str = ""  # a card that uses it (docs)
    printed: str = ""  # how card text says it (sim/cards/writer.py prints it; `to`: after a shift)
    played: str = ""  # `to` only: how card text says it after a play


@dataclass(frozen=True)
class EngineEnum:
    """An engine enum and its words. Codes follow the order of `members` from `first` (flags: bit
    0, 1, 2, ...). Codes are stored in compiled records and in the pool hash: append a member,
    never reorder."""

    name: str  # the C enum and the Python enum (sim/enums.py)
    prefix: str  # of every member's C name
    key: str  # the `constants()` key; for a card-language enum, the key it is written with
    members: tuple[Member, ...]
    doc: str = ""
    first: int = 0
    flags: bool = False
    card: bool = False  # part of the card language (docs/cards.md); else the engine's (docs/engine.md)

    def codes(self) -> tuple[tuple[Member, int], ...]:
        """Each member with its code."""
        return tuple((m, 1 << i if self.flags else self.first + i) for i, m in enumerate(self.members))

    def cname(self, m: Member) -> str:
        return self.prefix + m.name

    def words(self) -> dict[str | bool, int]:
        """Word -> code, for the members that have a word."""
        return {m.word: code for m, code in self.codes() if m.word is not None}


M = Member
ENUMS: tuple[EngineEnum, ...] = (
    # selectors of field verbs (targets.pxi)
    EngineEnum(
        "Whose",
        "W_",
        "whose",
        (M("ANY", "any", "either side"), M("YOU", "you", "your side"), M("OPP", "opponent", "your opponent's side")),
        "side of the field the card stands on",
        card=True,
    ),
    EngineEnum(
        "Covered",
        "C_",
        "covered",
        (
            M("UNCOVERED", False, "uncovered cards only"),
            M("COVERED", True, "covered cards only"),
            M("ANY", "any", "covered and uncovered"),
        ),
        "whether the card may be covered",
        card=True,
    ),
    EngineEnum(
        "Face",
        "F_",
        "face",
        (M("ANY", "any", "either face"), M("UP", "up", "face-up cards"), M("DOWN", "down", "face-down cards")),
        "the card's face",
        card=True,
    ),
    EngineEnum(
        "LineSel",
        "L_",
        "line",
        (
            M("ANY", "any", "every line"),
            M("THIS", "this", "this card's line", printed="in this line"),
            M("OTHER", "other", "not this line"),
            M("CHOSEN", "chosen", "the decider picks 1 line in which something matches", printed="in 1 line"),
            M("CHOSEN_OTHER", "chosen_other", "the same, not this line", printed="in 1 other line"),
            M("THIS_STACK", "this_stack", "this card's line on this card's side", printed="in this stack"),
            M("THAT", "that", 'the line of "that card"', "Mirror 3", printed="in the same line"),
            M(
                "OPP_AHEAD",
                "opponent_ahead",
                "lines where the opponent's total is higher",
                "Courage 1",
                printed="in a line where they have a higher total value than you do",
            ),
            M(
                "PROTOCOL",
                "protocol",
                "the line of the controller's protocol of this text's protocol",
                "Unity 1",
                printed="in that line",
            ),
        ),
        "the lines the cards may stand in",
        card=True,
    ),
    EngineEnum(
        "Pick",
        "P_",
        "pick",
        (
            M("NONE"),
            M("HIGHEST", "highest", "highest value among the matches (ties: the decider chooses)"),
            M("LOWEST", "lowest", "lowest value among the matches"),
        ),
        "only the extreme values",
        card=True,
    ),
    EngineEnum(
        "Each",
        "E_",
        "each",
        (
            M("NONE"),
            M("OTHER_LINE", "other_line", "every line but this one", printed="in each other line"),
            M(
                "LINE_WITH_YOUR_CARD",
                "line_with_your_card",
                "every line holding one of your cards",
                printed="in each line where you have a card",
            ),
            M("EVERY_LINE", "line", "every line", printed="in each line"),
            M(
                "LINE_WITH_FACEDOWN",
                "line_with_facedown",
                "every line holding a face-down card, either side",
                "Smoke 0",
                printed="in each line with a face-down card",
            ),
        ),
        "run the step once per noted line, in the decider's order",
        card=True,
    ),
    # what a quantity counts (`per = { of = ... }`, docs/cards.md "Quantities")
    EngineEnum(
        "Counted",
        "Q_",
        "of",
        (
            M("CARDS", "cards", "field cards matching the quantity's selectors (covered ones too unless it says)"),
            M("HAND", "hand", "cards in a hand (`whose`: **yours**, your opponent's or both)"),
            M("TRASH", "trash", "cards in a trash"),
            M("DECK", "deck", "cards in a deck"),
            M("LINES", "lines", "lines (`line`: every line or the other lines)"),
            M("PROTOCOLS", "protocols", "protocols (`whose`: **both sides**, yours or your opponent's)"),
            M("COMPILED", "compiled_protocols", "compiled protocols"),
        ),
        "what a quantity counts",
        card=True,
    ),
    # destinations and sources of shift and play
    EngineEnum(
        "Dest",
        "T_",
        "to",
        (
            M("ANY", "any", "any line allowed by the rules (shift: any other line of the card's side)"),
            M("THIS_LINE", "this_line", "this card's line", printed="to this line", played="in this line"),
            M(
                "OTHER_LINE",
                "other_line",
                "a line other than this card's line",
                printed="to another line",
                played="in another line",
            ),
            M(
                "TO_OR_FROM",
                "to_or_from_this_line",
                "a card in this line goes to another line; any other card comes to this line",
                printed="either to or from this line",
            ),
            M(
                "OPP_HIGHEST",
                "opponent_highest",
                "a line where the opponent has their highest total (ties: the decider chooses)",
                "Courage 3",
                printed="to the line where your opponent has their highest total value",
            ),
            M(
                "LINE_WITH_FACEDOWN",
                "line_with_facedown",
                "a line holding a face-down card on either side",
                "Smoke 3",
                played="in a line with a face-down card",
            ),
            M(
                "THIS_STACK",
                "this_stack",
                "(play from a deck) onto this card's stack",
                "Assimilation 2",
                played="in this stack",
            ),
        ),
        "where `shift` and `play` put the card",
        card=True,
    ),
    EngineEnum(
        "Source",
        "S_",
        "from",
        (
            M("HAND", "hand"),
            M("DECK_TOP", "deck_top"),
            M("OPP_DECK", "opponent_deck"),
            M("DECK", "deck"),
            M("TRASH", "trash"),
            M("FIELD", "field"),
            M("DRAWN", "drawn"),
        ),
        "where a verb takes its cards (meanings: the verbs' `sources`)",
    ),
    # conditions
    EngineEnum(
        "Cond",
        "COND_",
        "if",
        (
            M("NONE"),
            M("DID", "did", 'only if the previous step actually happened ("If you do")'),
            M("THIS_COVERED", "this_covered", "only if this card is covered"),
            M("THIS_COVERING", "this_covering", "only if this card is covering a card"),
            M("CMP", None, "a comparison `AMOUNT OP AMOUNT-or-N`"),
            M("THAT_STATED", "that_matches_stated", '"that card" is of the stated protocol', "Luck 3"),
            M(
                "SAME",
                "same",
                "the same condition as the previous conditional step: one sentence split into steps",
                "Unity 1",
            ),
        ),
        "a step's condition",
        card=True,
    ),
    EngineEnum(
        "CmpOp",
        "OP_",
        "ops",
        (M("EQ", "=="), M("NE", "!="), M("LT", "<"), M("LE", "<="), M("GT", ">"), M("GE", ">=")),
        "the comparisons of `if` and `value_gt`/`value_lt`",
    ),
    # triggers (a box's `when`)
    EngineEnum(
        "Trigger",
        "TR_",
        "when",
        (
            M("NONE"),
            M("MIDDLE"),
            M("START", "start", "Start phase of the owner's turn (3.1)", "Light 1"),
            M("END", "end", "End phase of the owner's turn (3.6)", "Light 1"),
            M("COVERED", "covered", '"When this card would be covered: First, ..." (5.3)', "Fire 0"),
            M(
                "COVERED_OR_FLIPPED",
                "covered_or_flipped",
                "also before the card would be flipped; a flip replaced this way is used up",
                "Metal 6",
            ),
            M(
                "COMPILE_DELETE",
                "compile_delete",
                '"When this card would be deleted by compiling: ..." (replaces that delete)',
                "Speed 2",
            ),
            M("AFTER_DISCARD", "after_discard", '"After you/your opponent discard ...:" (7.3), with `by`', "Plague 1"),
            M("AFTER_DRAW", "after_draw", '"After ... draw ...:", with `by`', "Spirit 3"),
            M("AFTER_DELETE", "after_delete", '"After ... delete ...:", with `by`', "Hate 3"),
            M("AFTER_CLEAR_CACHE", "after_clear_cache", '"After ... clear cache:", with `by`', "Speed 1"),
            M("PASSIVE"),
            M("AFTER_PLAY", "after_play", '"After ... plays a card"', "Ice 1"),
            M("AFTER_REFRESH", "after_refresh", '"After ... refreshes"', "War 0"),
            M("AFTER_COMPILE", "after_compile", '"After ... compiles"', "War 2"),
            M("AFTER_SHUFFLE", "after_shuffle", '"After ... shuffles their deck"', "Time 2"),
        ),
        "when a box's steps run",
        card=True,
    ),
    # passive flags (bits of CardDef.passive[box]); their card syntax: loader.py and docs/cards.md
    EngineEnum(
        "Passive",
        "PA_",
        "passive",
        (
            M("FACEDOWN_VALUE", "facedown_value"),
            M("LINE_VALUE", "line_value"),
            M("PER_FACEDOWN", "line_value_per_facedown"),
            M("DENY_FACEDOWN_LINE", "deny_facedown_line"),
            M("DENY_ANY_LINE", "deny_any_line"),
            M("DENY_FACEUP", "deny_faceup"),
            M("FACEUP_ANYWHERE", "play_faceup_anywhere"),
            M("IGNORE_MIDDLE", "ignore_middle"),
            M("SKIP_CACHE", "skip_check_cache"),
            M("PER_HAND", "line_value_per_hand_card", "+n per card in your hand (Clarity 0)"),
            M("PER_OPP_CARD", "line_value_per_opponent_card", "+n per opponent's card in this line (Mirror 0)"),
            M("RETURN_TO_DECK", "return_to_deck_top", "cards returned to your opponent's hand go to their deck top"),
            M("UNFLIPPABLE", "unflippable", "this card cannot be flipped (Ice 4)"),
            M("NO_DRAW_WITH_HAND", "no_draw_with_hand", "you cannot draw while you hold cards (Ice 6)"),
            M(
                "NO_OPP_MIDDLE",
                "no_opponent_middle_on_your_turn",
                "during your turn the opponent's cards have no middle text",
            ),
            M("PROTO_FACEUP_HERE", "protocol_faceup_here", "cards of this protocol may be played face-up in this line"),
            M("DENY", "deny", "the box holds a restriction (CardDef.deny[box], docs/cards.md)"),
        ),
        "passive modifiers (bits of CardDef.passive[box])",
        flags=True,
    ),
    # restrictions (a passive `{ deny = ... }`: CardDef.deny[box]); matched by denied() in zones.pxi
    EngineEnum(
        "Deny",
        "DN_",
        "deny",
        (
            M("NONE"),
            M("PLAY", "play", "play a card (either face)"),
            M("PLAY_UP", "play_faceup", "play a card face-up"),
            M("PLAY_DOWN", "play_facedown", "play a card face-down"),
            M("FLIP", "flip", "flip a card (either way)"),
            M("FLIP_UP", "flip_up", "flip a face-down card face-up"),
            M("FLIP_DOWN", "flip_down", "flip a face-up card face-down"),
            M("SHIFT", "shift", "shift a card from or to the line"),
            M("SHIFT_FROM", "shift_from", "shift a card out of the line"),
            M("SHIFT_TO", "shift_to", "shift a card into the line"),
            M("DELETE", "delete", "delete a card by a text (a compile still deletes it, 4.1)"),
            M("RETURN", "return", "return a card to its owner's hand"),
            M("REARRANGE", "rearrange", "rearrange or swap protocols (4.4), by control or by a text"),
            M("COMPILE", "compile", "compile a line (3.3; a forced compile that is refused is skipped)"),
            M("DRAW", "draw", "draw cards (a refresh draws too)"),
            M("REFRESH", "refresh", "refresh as the action (3.4)"),
            M("DISCARD", "discard", "discard cards by a text (clearing cache, 3.5, still discards)"),
        ),
        "the action a restriction forbids",
        card=True,
    ),
    EngineEnum(
        "SelfPlay",
        "SP_",
        "self_play",
        (
            M("ANYWHERE", "anywhere", "may be played face-up without matching protocols"),
            M("EITHER_SIDE", "either_side", "may be played face-up on either player's side"),
            M("EITHER_SIDE_DOWN", "either_side_down", "... and face-down too (an alternate reading of Corruption 0)"),
        ),
        "card-level play permissions (CardDef.self_play), read while the card is in hand",
        flags=True,
    ),
    # the engine's own
    EngineEnum(
        "Event",
        "EV_",
        "event",
        (
            M("DISCARD", "discard"),
            M("DRAW", "draw"),
            M("DELETE", "delete"),
            M("CLEAR_CACHE", "clear_cache"),
            M("PLAY", "play"),
            M("REFRESH", "refresh"),
            M("COMPILE", "compile"),
            M("SHUFFLE", "shuffle"),
        ),
        'events that open "after" windows (bits of State.ev[player])',
        flags=True,
    ),
    EngineEnum(
        "Zone",
        "Z_",
        "zone",
        (
            M("OUT", "out", "not in the game"),
            M("DECK", "deck"),
            M("HAND", "hand"),
            M("FIELD", "field"),
            M("TRASH", "trash"),
            M("TRANSIT", "transit", "being played (between hand and field)"),
        ),
        "where a card instance is (State.zone)",
    ),
    EngineEnum(
        "Phase",
        "PH_",
        "phase",
        (
            M("DRAFT", "draft"),
            M("START", "start"),
            M("CONTROL", "control"),
            M("COMPILE", "compile"),
            M("ACTION", "action"),
            M("CACHE", "cache"),
            M("END", "end"),
            M("OVER", "over", "the game has ended"),
        ),
        "the phase of the turn (State.phase; rule 3)",
    ),
    EngineEnum(
        "EndReason",
        "ER_",
        "end_reason",
        (
            M("NONE", "none"),
            M("COMPILED", "compiled", "three protocols Compiled"),
            M("TURN_CAP", "turn_cap", "the turn cap was reached: a draw"),
            M("LOOP_GUARD", "loop_guard", "texts triggered each other too long: a draw"),
        ),
        "why the game ended (State.end_reason; the records' `end_reason`)",
    ),
    EngineEnum(
        "DecisionKind",
        "D_",
        "decision",
        (
            M("NONE"),
            M("DRAFT", "draft", "pick a protocol"),
            M("ACTION", "action", "play a card or refresh"),
            M("COMPILE_LINE", "compile_line", "which line to compile"),
            M("ORDER", "order", "which simultaneous text resolves next"),
            M("MAY", "may", "do an optional step"),
            M("EITHER", "either", "which of two alternatives"),
            M("TARGET", "target", "a field card"),
            M("LINE", "line", "a line"),
            M("DISCARD", "discard", "a card to discard"),
            M("DISCARD_MORE", "discard_more", "another card to discard, or done"),
            M("HAND", "hand", "a card of the hand"),
            M("CONTROL_REARRANGE", "control_rearrange", "rearrange with control, or skip"),
            M("REARRANGE", "rearrange", "a new order of protocols"),
            M("PLAY", "play", "a play asked by a text"),
            M("EACH_LINE", "each_line", "the next noted line"),
            M("EACH_CARD", "each_card", "the next noted card"),
            M("STATE_NUMBER", "state_number", "a number to state"),
            M("STATE_PROTOCOL", "state_protocol", "a protocol to state"),
            M("DECK", "deck", "a card of the (revealed) deck"),
            M("TRASH", "trash", "a card of the trash"),
        ),
        "what a decision asks (State.dkind); its options: sim/engine/options.pxd",
    ),
    EngineEnum(
        "Restrict",
        "R_",
        "restrict",
        (
            M("NO_FACEDOWN", "nodown", "never play a card face-down (when another action exists)"),
            M("NO_REFRESH_WITH_CONTROL", "norefresh", "never refresh while holding the control component"),
            M("NO_FACEUP", "noup", "never play a card face-up"),
        ),
        "restrictions any strategy can be wrapped in (bits of a seat's `restrict`; the spec suffixes "
        "`+nodown`, `+norefresh`, `+noup`)",
        flags=True,
    ),
    EngineEnum(
        "EventKind",
        "EK_",
        "event_kind",
        (
            M("DRAW", "draw"),
            M("PLAY_UP", "play_face_up"),
            M("PLAY_DOWN", "play_face_down"),
            M("DELETE", "delete"),
            M("COMPILE", "compile"),
            M("RECOMPILE", "recompile"),
            M("CONTROL", "control"),
        ),
        "the per-game events of the dataset (EventRec.kind; the events table's `kind`)",
        first=1,
    ),
)
del M

# Restrictions: the Deny actions on a field card (`face` selects it), on a card at all (`whose`:
# the side it stands on or is played to; the line is the card's, a shift's destination or a
# play's line) and those a `scope = "this_line"` may narrow.
DENY_ON_FIELD = (
    "flip",
    "flip_up",
    "flip_down",
    "shift",
    "shift_from",
    "shift_to",
    "delete",
    "return",
)
DENY_ON_CARDS = ("play", "play_faceup", "play_facedown", *DENY_ON_FIELD)
DENY_IN_LINE = (*DENY_ON_CARDS, "compile")


def enum(name: str) -> EngineEnum:
    """The engine enum called `name` (C and Python), or by its `constants()` key."""
    return next(e for e in ENUMS if name in (e.name, e.key))


# -- the readable log: its entries' notes and texts ------------------------------------------------


@dataclass(frozen=True)
class LogNote:
    """One meaning of a log entry's note number: LN_<KIND>_<NAME> = code in the engine."""

    name: str
    code: int
    text: str


@dataclass(frozen=True)
class LogForm:
    """How an engine log kind reads (sim/describe.py). A log entry has a player, a card, a target
    and two numbers a and b; `note` says which of them ("a" or "b") picks one of `notes`, whose text
    then replaces `text`. Texts are str.format templates over the fields of sim/describe.py
    (`who`, `src`, `tgt`, `line_a`, ...)."""

    kind: str
    text: str
    note: str = ""
    notes: tuple[LogNote, ...] = ()
    zero: str = ""  # the name of note 0 when `text` is its reading (LN_<KIND>_<ZERO> = 0)
    bits: tuple[str, ...] = ()  # instead of notes: the note number's flags (LN_<KIND>_<BIT> = 1, 2, 4, ...)
    top_level: bool = False  # printed one indentation step less (turn headers)

    def constants(self) -> tuple[tuple[str, int], ...]:
        """The engine's names for this kind's note numbers (LN_<KIND>_<NAME>)."""
        named = [(self.zero, 0)] if self.zero else []
        named += [(n.name, n.code) for n in self.notes] + [(b, 1 << i) for i, b in enumerate(self.bits)]
        return tuple((f"LN_{self.kind.upper()}_{name}", code) for name, code in named)


N = LogNote
LOG_FORMS: tuple[LogForm, ...] = (
    LogForm("turn", "Turn {b}: {who}", top_level=True),
    LogForm("decision", "{who} chooses {decision_a}: {choice}"),
    LogForm("play", "{who} plays {tgt} {face_b} in {where}{under_b}{by_src}", "b", bits=("FACE_UP", "SIDE_B", "UNDER")),
    LogForm(
        "draw", "{who} draws {a}", "b", (N("REVEALED", 1, "{who} draws {a} from their revealed deck"),), zero="DECK"
    ),
    LogForm(
        "discard",
        "{who} discards {tgt}",
        "a",
        zero="HAND",
        notes=(
            N("DECK_TOP", 1, "{who} discards {tgt} from the top of their deck"),
            N("OPP_DECK", 2, "{who} discards {tgt} from the top of {opponent}'s deck"),
            N("RANDOM", 3, "{who} discards {tgt} at random"),
            N("INTO_OPP", 4, "{who} discards {tgt} into {opponent}'s trash"),
        ),
    ),
    LogForm("flip", "{src} flips {tgt} face-down", "a", (N("UP", 1, "{src} flips {tgt} face-up"),), "DOWN"),
    LogForm("delete", "{src} deletes {tgt}", "a", (N("BY_COMPILE", 1, "compile deletes {tgt}"),), "BY_TEXT"),
    LogForm(
        "return",
        "{src} returns {tgt}",
        "a",
        (N("TO_DECK", 1, "{tgt} goes on top of {opponent}'s deck instead"),),
        "TO_HAND",
    ),
    LogForm("shift", "{src} shifts {tgt} from {line_b} to {line_a}"),
    LogForm(
        "compile",
        "{who} compiles {line_a}",
        "b",
        (
            N("RECOMPILE", 1, "{who} recompiles {line_a}"),
            N("BY_TEXT", 2, "{src} flips {who}'s {line_a} protocol to Compiled"),
        ),
        "FIRST",
    ),
    LogForm(
        "control",
        "{who} returns control to neutral",
        "a",
        (N("TAKEN", 1, "{who} takes the control component"),),
        "NEUTRAL",
    ),
    LogForm("refresh", "{who} refreshes"),
    LogForm("rearrange", "{who} rearranges {seat_a}'s protocols ({order_b})"),
    LogForm("trigger", "{src} {box_a} resolves{copy_of_b}"),
    LogForm("win", "{who} wins"),
    LogForm(
        "reveal",
        "{src} reveals {tgt}",
        "a",
        (
            N("HAND", 1, "{who} reveals their hand ({b} cards)"),
            N("FROM_HAND", 2, "{who} reveals {tgt} from hand"),
            N("DECK_TOP", 3, "{who} reveals {tgt} from the top of their deck"),
            N("DECK", 4, "{who} reveals their deck ({b} cards)"),
            N("TRASH_OR_DRAWN", 5, "{who} reveals {tgt}"),
        ),
        "FIELD",
    ),
    LogForm(
        "take",
        "{who} takes {tgt} from {opponent}",
        "a",
        (
            N("RANDOM", 0, "{who} takes {tgt} from {opponent} (at random)"),
            N("DECK_TOP", 1, "{who} takes {tgt} from {opponent} (top of deck)"),
            N("FIELD", 2, "{who} takes {tgt} from {opponent} (from the field)"),
            N("TRASH", 3, "{who} takes {tgt} from their trash into their hand"),
        ),
    ),
    LogForm("cancel", "{src}: text interrupted"),
    LogForm("draft", "{who} drafts {protocol_b}"),
    LogForm(
        "shuffle",
        "{who} shuffles their trash into their deck",
        "a",
        (N("DECK", 1, "{who} shuffles their deck"),),
        "TRASH_INTO_DECK",
    ),
    LogForm(
        "skip", "{src}: middle text ignored", "a", (N("NO_ACTION", 1, "{who} has no legal action"),), "MIDDLE_IGNORED"
    ),
    # a verb's own kind without a fixed text: its notes are the verb's modes (st.mode)
    LogForm("state", "{who} states {b}", "a", (N("PROTOCOL", 1, "{who} states {protocol_b}"),), "NUMBER"),
)
del N


def log_forms() -> dict[str, LogForm]:
    """Every log kind -> how it reads: the forms above, and the verbs' fixed texts."""
    forms = {f.kind: f for f in LOG_FORMS}
    forms.update({k: LogForm(k, text) for k, text in log_texts().items()})
    return forms


# -- docs/cards.md -------------------------------------------------------------------------------

MARKDOWN_BEGIN = "<!-- verb tables: generated by `python -m sim.cards.vocabulary --markdown`; do not edit -->"
MARKDOWN_END = "<!-- end of generated verb tables -->"


def _value_text(v: Verb) -> str:
    if v.value == COUNT:
        return "a count"
    if v.value == STEPS:
        return "two step arrays"
    return " or ".join("`true`" if x is True else x if " " in str(x) else f'`"{x}"`' for x in v.value)


def _counts_markdown() -> list[str]:
    out = ["| count | meaning |", "|---|---|"]
    for c in COUNTS:
        if c.as_count:
            word = "`1`, `2`, ..." if c.word == "n" else f'`"{c.word}"`'
            out.append(f"| {word} | {c.meaning.removeprefix('`1`, `2`, ...: ')} |")
    return out


def _verbs_markdown() -> list[str]:
    out = ["| verb | value | does |", "|---|---|---|"]
    for v in VERBS:
        if v.keyword:
            continue
        value = _value_text(v)
        if v.value == COUNT and v.counts != COUNT_WORDS:
            value += " (" + ", ".join(f'`"{c}"`' for c in v.counts) + ")"
        modes = "; ".join(f'`mode = "{m}"`: {text}' for m, text in v.modes.items())
        does = v.does + (f". Needs a mode: {modes}" if modes else "")
        if v.on_field:
            does += "; selectors choose the cards"
        out.append(f"| `{v.word}` | {value} | {does} |")
    return out


def _sources_markdown() -> list[str]:
    out = ["| verb | modifier | meaning |", "|---|---|---|"]
    words = list(dict.fromkeys(v.word for v in VERBS))
    for v in sorted(VERBS, key=lambda v: words.index(v.word)):
        for s, text in v.sources.items():
            out.append(f'| `{v.word}` | `from = "{s}"` | {text} |')
        for opt, text in v.options.items():
            out.append(f"| `{v.word}` | `{opt}` | {text} |")
    return out


def markdown() -> str:
    """The verb and count tables of docs/cards.md, between their markers."""
    lines = [
        MARKDOWN_BEGIN,
        "",
        "Counts (the verb's value when it is a count):",
        "",
        *_counts_markdown(),
        "",
        "Verbs:",
        "",
        *_verbs_markdown(),
        "",
        "Sources (`from`) and other modifiers of single verbs:",
        "",
        *_sources_markdown(),
        "",
        MARKDOWN_END,
    ]
    return "\n".join(lines)


SELECTORS_BEGIN = "<!-- selector tables: generated by `python -m sim.cards.vocabulary --selectors`; do not edit -->"
SELECTORS_END = "<!-- end of generated selector tables -->"
TRIGGERS_BEGIN = "<!-- trigger table: generated by `python -m sim.cards.vocabulary --triggers`; do not edit -->"
TRIGGERS_END = "<!-- end of generated trigger table -->"
RESTRICTIONS_BEGIN = (
    "<!-- restriction table: generated by `python -m sim.cards.vocabulary --restrictions`; do not edit -->"
)
RESTRICTIONS_END = "<!-- end of generated restriction table -->"
ENGINE_BEGIN = "<!-- engine enums: generated by `python -m sim.cards.vocabulary --engine`; do not edit -->"
ENGINE_END = "<!-- end of generated engine enums -->"
# every key a field verb's selection may carry (the loader accepts these on a step); those with words
# of their own (an enum: whose, covered, face, line, pick, each) get a table in docs/cards.md
SELECTOR_KEYS = (
    "whose",
    "covered",
    "face",
    "other",
    "line",
    "value",
    "value_gt",
    "value_lt",
    "min_cards",
    "pick",
    "each",
    "protocol",
)
WORD_SELECTOR_KEYS = tuple(k for k in SELECTOR_KEYS if any(e.key == k and e.card for e in ENUMS))


def printed(key: str, played: bool = False) -> dict[str | bool, str]:
    """Word -> how card text says it, for the enum written with `key` (the writer's phrases;
    `played`: a play's destination, where `to` reads "in ..." rather than "to ...")."""
    return {
        m.word: m.played if played else m.printed
        for m in enum(key).members
        if m.word is not None and (m.played if played else m.printed)
    }


def _spelled(word: str | bool) -> str:
    return f"`{str(word).lower()}`" if isinstance(word, bool) else f'`"{word}"`'


def _words_rows(e: EngineEnum, key: bool = False, example: bool = False) -> list[str]:
    """One row per word of an enum; the default (code 0: what a step that leaves the key out gets)
    in bold. With `key`, a first row names the key and what it selects, and examples go in the meaning."""
    out = [f"| `{e.key}` | | {e.doc} |"] if key else []
    for m, code in e.codes():
        if m.word is None:
            continue
        word = f"**{_spelled(m.word)}**" if code == 0 else _spelled(m.word)
        meaning = m.meaning + (f" ({m.example})" if key and m.example else "")
        cells = ([""] if key else []) + [word, meaning] + ([m.example] if example else [])
        out.append("| " + " | ".join(cells) + " |")
    return out


def selectors_markdown() -> str:
    """The selector, destination and condition tables of docs/cards.md, between their markers."""
    lines = [
        SELECTORS_BEGIN,
        "",
        "Selectors of field verbs (defaults in bold):",
        "",
        "| key | value | meaning |",
        "|---|---|---|",
    ]
    for key in WORD_SELECTOR_KEYS:
        lines += _words_rows(enum(key), key=True)
    lines += [
        "",
        "Destinations for `shift` and `play`:",
        "",
        "| `to` | meaning | example |",
        "|---|---|---|",
        *_words_rows(enum("to"), example=True),
        "",
        "Named conditions of any step:",
        "",
        "| `if` | meaning | example |",
        "|---|---|---|",
        *_words_rows(enum("if"), example=True),
        "",
        "What a quantity counts (`per = { of = ... }`, [Quantities](#quantities)):",
        "",
        "| `of` | meaning |",
        "|---|---|",
        *_words_rows(enum("of")),
        "",
        SELECTORS_END,
    ]
    return "\n".join(lines)


def triggers_markdown() -> str:
    """The `when` table of docs/cards.md, between its markers."""
    lines = [
        TRIGGERS_BEGIN,
        "",
        "| `when` | meaning | example |",
        "|---|---|---|",
        *_words_rows(enum("when"), example=True),
        "",
        TRIGGERS_END,
    ]
    return "\n".join(lines)


def restrictions_markdown() -> str:
    """The `deny` table of docs/cards.md (what each action restricts, which keys select), between its markers."""
    rows = []
    for m, _ in enum("deny").codes():
        if m.word is None:
            continue
        keys = ["`by`"] + (["`whose`"] if m.word in (*DENY_ON_CARDS, "rearrange") else [])
        keys += ["`face`", "`covered`", "`value`", "`protocol`"] if m.word in DENY_ON_FIELD else []
        keys += ['`scope = "this_line"`'] if m.word in DENY_IN_LINE else []
        rows.append(f"| {_spelled(m.word)} | {m.meaning} | {', '.join(keys)} |")
    lines = [RESTRICTIONS_BEGIN, "", "| `deny` | forbids | keys |", "|---|---|---|", *rows, "", RESTRICTIONS_END]
    return "\n".join(lines)


def _log_markdown() -> list[str]:
    out = ["| log kind | reads | its note (`a` or `b`): code `LN_<KIND>_<NAME>`: reads |", "|---|---|---|"]
    for kind, form in log_forms().items():
        notes = ([f"0 `{form.zero}`"] if form.zero else []) + [f"{n.code} `{n.name}`: {n.text}" for n in form.notes]
        notes += [f"bit {1 << i} `{b}`" for i, b in enumerate(form.bits)]
        note = f"`{form.note}`: " + "; ".join(notes) if form.note else ""
        out.append(f"| `{kind}` | {form.text} | {note} |")
    return out


def engine_markdown() -> str:
    """The engine enums and log kinds of docs/engine.md, between their markers."""
    lines = [
        ENGINE_BEGIN,
        "",
        "| enum (C and `sim.enums`) | `constants()` key | members: code `word` | what |",
        "|---|---|---|---|",
    ]
    for e in ENUMS:
        members = ", ".join(
            f"{code} `{e.cname(m)}`" + ("" if m.word is None else f" {_spelled(m.word)}") for m, code in e.codes()
        )
        lines.append(f"| `{e.name}` | `{e.key}` | {members} | {e.doc} |")
    lines += [
        "",
        "Log kinds (`LG_<KIND>`) and their notes (`LN_<KIND>_<NAME>`), as `sim/describe.py` reads them:",
        "",
        *_log_markdown(),
        "",
        ENGINE_END,
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Print the card vocabulary's generated documentation.")
    ap.add_argument("--markdown", action="store_true", help="the verb tables of docs/cards.md")
    ap.add_argument("--selectors", action="store_true", help="the selector tables of docs/cards.md")
    ap.add_argument("--triggers", action="store_true", help="the trigger table of docs/cards.md")
    ap.add_argument("--engine", action="store_true", help="the engine enum and log tables of docs/engine.md")
    ap.add_argument("--restrictions", action="store_true", help="the restriction table of docs/cards.md")
    args = ap.parse_args(argv)
    texts = [
        text()
        for flag, text in (
            (args.markdown, markdown),
            (args.selectors, selectors_markdown),
            (args.triggers, triggers_markdown),
            (args.engine, engine_markdown),
            (args.restrictions, restrictions_markdown),
        )
        if flag
    ]
    if not texts:
        ap.print_help()
        return 2
    print("\n\n".join(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
