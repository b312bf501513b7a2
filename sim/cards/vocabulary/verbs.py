"""The verbs of the card language: one row per engine verb, and the lookups the loader and the
engine generator make by keyword. A verb's code is stored in compiled records and in the pool hash:
never renumber one; a new verb takes a new code."""

from __future__ import annotations

from dataclasses import dataclass, field

from sim.cards.vocabulary.counts import COUNT_WORDS, FIELD_COUNTS

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


ALL_COUNT = (*FIELD_COUNTS, "all")

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
)

BOT_TARGETS = ("first", "remove", "flip", "random")


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
