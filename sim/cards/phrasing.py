"""How the card language is printed: the words of each verb, trigger, condition, amount and
passive, keyed by the vocabulary's names (sim/cards/vocabulary/, the loader's passive keys).

The reader (sim/cards/reader.py) builds its grammar from these tables and the writer
(sim/cards/writer.py) prints from them, so a new verb is its vocabulary row plus its phrasing
here. A phrase is a string of words and slots:

- a plain word is printed as written; a word starting with `~` is the verb, which also reads in
  its third-person form ("Your opponent draws ...");
- `<slot>` is a part shared by many phrases (`<amount>`, `<target>`, `<dest>` ...), read and
  written by the reader's and the writer's slot rules; `<slot>?` may be left out;
- `PROTOCOL` stands for this card's own protocol name ("another Unity card").

Each phrase carries the step keys it fixes; the slots give the rest. The first phrase of a verb
that can say a step is the one the writer prints.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Phrase:
    """One way of printing a step of `verb` (an engine verb name of the vocabulary)."""

    verb: str
    words: str
    keys: dict[str, Any] = field(default_factory=dict)


# Steps. The engine verbs `reveal_zone` and `take_field` are written with the keyword of their main
# verb (`reveal`, `take`) plus `from`, as in the card files.
PHRASES: tuple[Phrase, ...] = (
    Phrase("draw", "~draw the top card of <deck>", {"draw": 1}),
    Phrase("draw", "~draw <amount> <filter>? revealed this way", {"from": "deck"}),
    Phrase("draw", "~draw all PROTOCOL cards from it", {"draw": "all", "from": "deck", "protocol": "same"}),
    Phrase("draw", "~draw <amount>"),
    Phrase("discard", "~discard the top card of <deck>", {"discard": 1}),
    Phrase("discard", "~discard your entire deck", {"discard": "all", "from": "deck_top"}),
    Phrase("discard", "~discard <amount> into their trash", {"into": "opponent_trash"}),
    Phrase("discard", "~discard <dcount> random card", {"random": True}),
    Phrase("discard", "~discard <amount>"),
    Phrase("flip", "~flip <target> , ignoring its middle command", {"ignore_middle": True}),
    Phrase("flip", "~flip <target>"),
    Phrase("delete", "~delete <target>"),
    Phrase("return", "~return <target>"),
    Phrase("shift", "~shift <target> <dest>?"),
    Phrase("reveal", "~reveal <target>"),
    Phrase("reveal_zone", "~reveal the top card of your deck", {"reveal": 1, "from": "deck_top"}),
    Phrase("reveal_zone", "~reveal your deck", {"reveal": 1, "from": "deck"}),
    Phrase("reveal_zone", "~reveal <target> from your trash", {"from": "trash"}),
    Phrase("reveal_zone", "~reveal <target> drawn <filter>?", {"from": "drawn"}),
    Phrase(
        "play",
        "for every 2 cards in this line , ~play the top card of <deck> face-down <pdest>?",
        {"play": "per_2_in_line", "face": "down"},
    ),
    Phrase("play", "~play the top card of <deck> face-down <pdest>?", {"play": 1, "face": "down"}),
    Phrase("play", "~play <ptarget> from your trash", {"from": "trash"}),
    Phrase("play", "~play <ptarget> <pdest>?"),
    Phrase("refresh", "~refresh", {"refresh": True}),
    Phrase("rearrange", "~rearrange your protocols", {"rearrange": True, "mode": "yours"}),
    Phrase("rearrange", "~rearrange your opponent's protocols", {"rearrange": True, "mode": "theirs"}),
    Phrase("rearrange", "~rearrange their protocols", {"rearrange": True, "mode": "theirs"}),
    Phrase("swap", "~swap the positions of 2 of your protocols", {"swap": "yours"}),
    Phrase("reveal_hand", "~reveal their hand", {"reveal_hand": True}),
    Phrase("reveal_hand", "~reveal your hand", {"reveal_hand": True}),
    Phrase("reveal_from_hand", "~reveal <target> from your hand"),
    # a phrase key `_subject` says whose sentence it is ("Your opponent gives you ...")
    Phrase("take_trash", "~put <target> from your trash into your hand", {"from": "trash"}),
    Phrase("take_trash", "~draw <amount> from your trash", {"from": "trash"}),
    Phrase("give", "~give you <amount> from their hand", {"_subject": "opponent"}),
    Phrase("give", "~give <amount> from your hand to your opponent", {"_subject": "you"}),
    Phrase("take", "~take <dcount> random card from your opponent's hand"),
    Phrase("take_field", "~put <target> into your hand", {"from": "field"}),
    Phrase("deny_compile", "your opponent cannot compile on their next turn", {"deny_compile": "next_turn"}),
    Phrase("state", "~state a number", {"state": True, "mode": "number"}),
    Phrase("state", "~state a protocol", {"state": True, "mode": "protocol"}),
    Phrase("shuffle", "~shuffle <owndeck>", {"shuffle": True, "mode": "deck"}),
    Phrase("shuffle", "~shuffle your trash into your deck", {"shuffle": True, "mode": "trash_into_deck"}),
    Phrase(
        "swap_stacks",
        "~swap all of your cards in one of your stacks with another one of your stacks",
        {"swap_stacks": "yours"},
    ),
    Phrase("copy_middle", "~resolve the middle command of <target> as if it were on this card"),
    Phrase("compile_protocol", "~flip the PROTOCOL protocol to the compiled side", {"compile_protocol": "this"}),
)

# Verbs printed by the shape of a sentence rather than by a phrase of their own (sim/cards/grammar.py).
IN_SENTENCE: dict[str, str] = {
    "either": '"Either <step> or <step>", "<verb> or <verb> <target>" (Fear 0), "Both players <step>" (Peace 1)',
}
# Verbs of the vocabulary that no card prints, with the reason (none today: every verb is printed).
NOT_PRINTABLE: dict[str, str] = {}

# "the discarded card" presupposes a discard: read with `if = "did"` (Luck 2, Luck 4).
DISCARDED_VALUE = "the value of the discarded card"
# Amounts (count words and compared amounts of the vocabulary) as printed. The first is written.
AMOUNT_WORDS: dict[str, tuple[str, ...]] = {
    "protocols_in_line": ("the number of different protocols on cards in this line",),
    "protocols_in_field": ("the number of different protocols on cards in the field",),
    "protocol_cards_in_field": ("the number of PROTOCOL cards in the field",),
    "hand": ("the number of cards in your hand",),
    "value_of_that": ("that card's value", DISCARDED_VALUE),
}

# Quantities (docs/cards.md "Quantities"): "<n> cards for each <counted>" is the step's `per`,
# "cards equal to the number of <counted>" (and "a value less than the number of <counted>") the
# amount `count` with its `count` table; a count of this protocol's cards counts face-up ones.
# <counted> is read by the grammar's `counted` rule and written by sim/cards/counting.py. An
# amount word that a quantity also says is read as the amount word in a comparison (Peace 3:
# `value_gt = "hand"`); after "equal to" and in a condition only those of COUNTED_COUNTS are
# (Unity 1 and 2 read as before), since the count word "hand" prints as "your hand", the whole hand.
COUNTED_AMOUNTS: dict[str, dict[str, Any]] = {"hand": {"of": "hand"}, "protocol_cards_in_field": {"protocol": "same"}}
COUNTED_COUNTS = ("protocol_cards_in_field",)

# Counts of cards in hand or deck ("Draw ..."); `{n}` is a number.
HAND_COUNTS: dict[str, tuple[str, ...]] = {
    "1+": ("1 or more cards",),
    "0+": ("any number of cards",),
    "discarded+1": ("the amount discarded plus 1", "the amount of cards discarded plus 1"),
    "discarded-1": ("the amount discarded minus 1", "the amount of cards discarded minus 1"),
    "discarded": ("that many cards",),
    "hand": ("your hand", "their hand"),
}

# Conditions (`if = ...`), read after "If". A value with `{n}` takes the number printed there.
CONDITIONS: tuple[tuple[str, str], ...] = (
    ("you do", "did"),
    ("this card is covered", "this_covered"),
    ("this card is covering a card", "this_covering"),
    ("the discarded card matched the stated protocol", "that_matches_stated"),
    ("your hand is empty", "hand == 0"),
    ("you have no cards in hand", "hand == 0"),
    ("you have no cards in your hand", "hand == 0"),
    ("you have more than <n> card in your hand", "hand > {n}"),
    ("your opponent has a higher total value than you do in this line", "opponent_value_here > your_value_here"),
    ("your opponent has a higher value in this line than you do", "opponent_value_here > your_value_here"),
    ("there are <n> different protocols on cards in the field", "protocols_in_field >= {n}"),
    ("there are not at least <n> different protocols on cards in the field", "protocols_in_field < {n}"),
    ("there is another PROTOCOL card in the field", "other_protocol_cards_in_field >= 1"),
    ("there are <n> or more PROTOCOL cards in the field", "protocol_cards_in_field >= {n}"),
    ("there are any cards in your trash", "trash > 0"),
)

# Conditions on a quantity (`if = "count >= 2"` with its `count = { ... }` table), read after "If";
# `<counted>` is the counted set, as after "the number of".
COUNT_CONDITIONS: tuple[tuple[str, str], ...] = (
    ("there are <n> or more <counted>", "count >= {n}"),
    ("there are fewer than <n> <counted>", "count < {n}"),
    ("there are no <counted>", "count == 0"),
)

# Triggers (`when = ...`). "After" triggers are "After <actor> <action>:" with the actor giving `by`.
WHEN_WORDS: dict[str, str] = {
    "start": "start",
    "end": "end",
    "covered": "when this card would be covered",
    "covered_or_flipped": "when this card would be covered or flipped",
    "compile_delete": "when this card would be deleted by compiling",
}
AFTER_WORDS: dict[str, str] = {
    "after_discard": "~discard cards",
    "after_draw": "~draw cards",
    "after_delete": "~delete cards",
    "after_clear_cache": "~clear cache",
    "after_play": "~play a card",
    "after_refresh": "~refresh",
    "after_compile": "~compile",
    "after_shuffle": "~shuffle your deck",
}
ACTORS: dict[str, str] = {"you": "you", "opponent": "your opponent", "any": "a player"}
DURING_WORDS: dict[str, str] = {"your_turn": "during your turn", "opponent_turn": "during your opponent's turn"}
# A "would" trigger's steps start with "First," (and go on with "Then,").
FIRST_TRIGGERS = ("covered", "covered_or_flipped")

# Passive sentences; `<n>` is the passive's amount (`<-n>`: printed as "reduced by n").
PASSIVES: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "your total value in this line is increased by <n> for each face-down card in this line",
        {"line_value_per_facedown": "n"},
    ),
    ("your total value in this line is increased by <n> for each card in your hand", {"line_value_per_hand_card": "n"}),
    (
        "your total value in this line is increased by <n> for each of your opponent's cards in this line",
        {"line_value_per_opponent_card": "n"},
    ),
    (
        "your total value in this line is increased by <n> if there are any non-PROTOCOL face-up cards in this stack",
        {"line_value": "n", "if": "other_protocol_faceup_in_stack"},
    ),
    ("your opponent's total value in this line is reduced by <n>", {"line_value": "-n", "whose": "opponent"}),
    ("your total value in this line is increased by <n>", {"line_value": "n"}),
    ("all face-down cards in this stack have a value of <n>", {"facedown_value": "n"}),
    ("your opponent cannot play cards face-down in this line", {"deny_play": "facedown", "scope": "this_line"}),
    ("your opponent cannot play cards in this line", {"deny_play": "any", "scope": "this_line"}),
    ("your opponent can only play cards face-down", {"deny_play": "faceup"}),
    ("when you play cards face-up , they may be played without matching protocols", {"play_faceup_anywhere": True}),
    ("ignore all middle commands of cards in this line", {"ignore_middle": True}),
    ("skip your check cache phase", {"skip_check_cache": True}),
    ("this card may be played without matching protocols", {"play_anywhere": True}),
    (
        "this card may be played on either player's side without matching protocols",
        {"play_anywhere": True, "play_either_side": True},
    ),
    (
        "when a card would be returned to your opponent's hand : put that card on top of their deck face-down instead",
        {"return_to_deck_top": True},
    ),
    ("this card cannot be flipped", {"unflippable": True}),
    ("if you have any cards in your hand , you cannot draw cards", {"no_draw_with_hand": True}),
    ("during your turn , your opponent's cards do not have middle commands", {"no_opponent_middle_on_your_turn": True}),
    ("PROTOCOL cards may be played face-up in this line", {"protocol_faceup_here": True}),
)


def third_person(verb: str) -> str:
    """`draw` -> `draws`, `refresh` -> `refreshes`."""
    return verb + ("es" if verb.endswith(("sh", "ch", "s", "x")) else "s")


# Restrictions (a passive `{ deny = ... }`, docs/cards.md "Restrictions"): a sentence is a
# template (RESTRICTION_TEMPLATES, one grammar alternative each) whose slots compose the parts
# below; the reader merges the slots' keys into the template's, the writer prints them in the
# order of the parts. A key left out is its default (`whose`/`face`/`by`/`covered` "any", every
# line, any value and protocol).
DENY_WHOSE: dict[str, str] = {"any": "", "you": "your", "opponent": "your opponent's"}
DENY_COVERED: dict[Any, str] = {"any": "", True: "covered", False: "uncovered"}
DENY_FACE: dict[str, str] = {"any": "", "up": "face-up", "down": "face-down"}
DENY_PROTOCOL: dict[str, str] = {"any": "", "same": "PROTOCOL", "other": "non-PROTOCOL"}
DENY_BY: dict[str, str] = {"any": "", "you": "by you", "opponent": "by your opponent"}
DENY_ACTORS: dict[str, str] = {"any": "players", "you": "you", "opponent": "your opponent"}
# the side a play lands on (`whose` of a play restriction)
DENY_SIDE: dict[str, str] = {"you": "on your side", "opponent": "on your opponent's side"}
DENY_LINE = "in this line"
# the selection keys of a card restriction (the field verbs' own selector keys) and their words,
# in the order printed before "cards"; `value` and the line follow it
DENY_CARD_PARTS: dict[str, dict[Any, str]] = {
    "whose": DENY_WHOSE,
    "covered": DENY_COVERED,
    "face": DENY_FACE,
    "protocol": DENY_PROTOCOL,
}
DENY_DEFAULTS: dict[str, Any] = {"whose": "any", "covered": "any", "face": "any", "protocol": "any", "by": "any"}
# "<cards> cannot <words> <by>": the card is selected by whose, covered, face, protocol, value
# and (in this line) scope
DENY_CARD_WORDS: dict[str, str] = {
    "flip": "be flipped",
    "flip_up": "be flipped face-up",
    "flip_down": "be flipped face-down",
    "delete": "be deleted",
    "return": "be returned",
}
# "<cards> cannot <words>": the line is in the words
DENY_SHIFT_WORDS: dict[tuple[str, str | None], str] = {
    ("shift", None): "be shifted",
    ("shift", "this_line"): "shift from or to this line",
    ("shift_from", "this_line"): "shift from this line",
    ("shift_to", "this_line"): "shift to this line",
}
# "cards cannot <words> <on a side> <in this line> <by>", or with a side and a player:
# "<actor> cannot play cards <face> <on a side> <in this line>"
DENY_PLAY_WORDS: dict[str, str] = {
    "play": "be played",
    "play_faceup": "be played face-up",
    "play_facedown": "be played face-down",
}
DENY_PLAY_ACTIVE: dict[str, str] = {"play": "", "play_faceup": "face-up", "play_facedown": "face-down"}
# "<actor> cannot <words> <this line>"
DENY_PLAYER_WORDS: dict[str, str] = {"draw": "draw cards", "refresh": "refresh", "discard": "discard cards"}


def _deny_keys(deny: str, **keys: Any) -> dict[str, Any]:
    """A restriction's modifier with its defaults left out."""
    return {"deny": deny, **{k: v for k, v in keys.items() if v is not None and v != DENY_DEFAULTS.get(k)}}


def _restriction_templates() -> list[tuple[str, dict[str, Any]]]:
    """Every sentence shape; `<rcards>`, `<rside>`, `<rline>` and `<rby>` are composed slots
    (grammar.py), which add their keys to the template's."""
    out = [(f"<rcards> cannot {words} <rby>?", {"deny": deny}) for deny, words in DENY_CARD_WORDS.items()]
    for (deny, scope), words in DENY_SHIFT_WORDS.items():
        out.append((f"<rcards> cannot {words}", _deny_keys(deny, scope=scope)))
    for deny, words in DENY_PLAY_WORDS.items():
        out.append((f"<rcards> cannot {words} <rside>? <rline>? <rby>?", {"deny": deny}))
    for by, actor in DENY_ACTORS.items():
        for deny, face in DENY_PLAY_ACTIVE.items():
            if by != "any":  # "Players cannot play ..." is "Cards cannot be played ..."
                words = " ".join(w for w in (actor, "cannot play cards", face, "<rside> <rline>?") if w)
                out.append((words, _deny_keys(deny, by=by)))
        for deny, words in DENY_PLAYER_WORDS.items():
            out.append((f"{actor} cannot {words}", _deny_keys(deny, by=by)))
        out.append((f"{actor} cannot compile", _deny_keys("compile", by=by)))
        out.append((f"{actor} cannot compile this line", _deny_keys("compile", by=by, scope="this_line")))
    for whose in DENY_WHOSE:
        text = " ".join(w for w in (DENY_WHOSE[whose], "protocols cannot be rearranged <rby>?") if w)
        out.append((text, _deny_keys("rearrange", whose=whose)))
    return out


RESTRICTION_TEMPLATES: tuple[tuple[str, dict[str, Any]], ...] = tuple(_restriction_templates())


def deny_cards(mod: dict[str, Any]) -> str:
    """The printed card selection of a restriction: "your covered face-down PROTOCOL cards with a
    value of 0 or 1 in this line" (the reader's `rcards`, written back in its fixed order)."""
    words = [DENY_CARD_PARTS[k][mod.get(k, DENY_DEFAULTS[k])] for k in DENY_CARD_PARTS]
    words.append("cards")
    values = mod.get("value")
    if values:
        words.append("with a value of " + " or ".join(str(v) for v in values))
    if mod.get("scope") == "this_line":
        words.append(DENY_LINE)
    return " ".join(w for w in words if w)


# A sentence and the modifier keys it reads to.
Example = tuple[str, dict[str, Any]]


def restriction_examples() -> list[Example]:
    """Sentences covering every part of every template once with each of its words (not every
    product of them), each with the keys it reads to: the round-trip tests read and write these."""
    out = [*_card_examples(), *_shift_examples(), *_play_examples(), *_template_examples()]
    return list(dict(out).items())


def _card_examples() -> Iterator[Example]:
    """ "<cards> cannot be deleted <by>": each card part's word with each actor, and the values and line."""
    for deny, words in DENY_CARD_WORDS.items():
        for key, part in DENY_CARD_PARTS.items():
            for v in part:
                for by, by_words in DENY_BY.items():
                    mod = _deny_keys(deny, **{key: v, "by": by})
                    yield " ".join(w for w in (deny_cards(mod), "cannot", words, by_words) if w), mod
        for extra in ({"value": [0]}, {"value": [0, 1]}, {"scope": "this_line"}):
            mod = {**_deny_keys(deny, whose="you", face="down"), **extra}
            yield f"{deny_cards(mod)} cannot {words}", mod


def _shift_examples() -> Iterator[Example]:
    """ "<cards> cannot be shifted out of this line": each card part's word."""
    for (deny, scope), words in DENY_SHIFT_WORDS.items():
        for key, part in DENY_CARD_PARTS.items():
            for v in part:
                mod = _deny_keys(deny, scope=scope, **{key: v})
                cards = deny_cards({k: x for k, x in mod.items() if k != "scope"})
                yield f"{cards} cannot {words}", mod


def _play_examples() -> Iterator[Example]:
    """ "Cards cannot be played face-down <side> <line> <by>": each side, line and actor (a side with
    an actor is written with the player as the subject: _template_examples)."""
    for deny, words in DENY_PLAY_WORDS.items():
        for scope, line in ((None, ""), ("this_line", DENY_LINE)):
            for side, side_words in (("any", ""), *DENY_SIDE.items()):
                for by, by_words in DENY_BY.items():
                    if side != "any" and by != "any":
                        continue
                    text = " ".join(w for w in ("cards cannot", words, side_words, line, by_words) if w)
                    yield text, _deny_keys(deny, whose=side, by=by, scope=scope)


def _template_examples() -> Iterator[Example]:
    """The templates with a player as the subject: each side and line of a play, each actor of the
    others (the <rcards> templates are the examples above)."""
    for words, keys in RESTRICTION_TEMPLATES:
        if "<rside>" in words and not words.startswith("<rcards>"):
            for side, side_words in DENY_SIDE.items():
                for scope, line in ((None, ""), ("this_line", DENY_LINE)):
                    text = " ".join(w for w in (words.split(" <")[0], side_words, line) if w)
                    yield text, _deny_keys(keys["deny"], by=keys.get("by", "any"), whose=side, scope=scope)
        elif "<" not in words:
            yield words, keys
        elif not words.startswith("<rcards>"):
            for by, by_words in DENY_BY.items():
                mod = {**keys, **({"by": by} if by != "any" else {})}
                yield " ".join(w for w in (words.split(" <")[0], by_words) if w), mod
