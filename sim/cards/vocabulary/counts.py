"""The counts (rule 6.3): what a verb's value or a comparison may name. Engine codes (CountKind,
the position in COUNTS) are stored in compiled records and in the pool hash: a new count is appended."""

from __future__ import annotations

from dataclasses import dataclass


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
    Count("0+", "CK_ANY_NUMBER", "any number, including none (War 1)"),
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
