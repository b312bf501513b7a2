"""The grammar of printed card text (Lark, LALR), for the reader (sim/cards/reader.py).

The verb, trigger, condition, amount and passive rules are generated from sim/cards/phrasing.py,
which is keyed by the vocabulary's names; the parts every verb shares (amounts, targets,
destinations, sentences) are written out below. Rule `name_i` is entry i of that name's table.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING

from sim.cards import phrasing as ph
from sim.cards import vocabulary as vocab

if TYPE_CHECKING:
    from lark import Lark

PROTOCOL_WORD = "this-protocol"
_WORD = re.compile(r"[a-z0-9][a-z0-9'\-]*|[.,:]")
UNREAD_CHARS = re.compile(r"[^a-z0-9'\-.,:\s]")  # any other character is refused, never skipped
# Word pairs read as one word (", then" -> ",then"; "from each" -> "from+each"), so that one word
# of look-ahead tells a new clause from the end of the last one ("Flip that card, ignoring ...").
JOINED = {",": ("then", "and", "ignoring", "even"), "from": ("each",)}


def _joined(first: str, second: str) -> str:
    return first + second if first == "," else first + "+" + second


def tokens(text: str, protocol: str = "") -> list[str]:
    """Lower-case words and punctuation; the card's own protocol becomes PROTOCOL_WORD, and
    plurals of "card" read as "card" (agreement carries no meaning in the card language)."""
    return [w for w, _, _ in token_spans(text, protocol)]


def token_spans(text: str, protocol: str = "") -> list[tuple[str, int, int]]:
    """`tokens` with each token's (start, end) in `text`, so that an error can quote the words
    as the designer wrote them."""
    low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text).replace("\u2019", "'")
    origin = list(range(len(low)))  # origin[i]: the index in `text` of character i of `low`
    if protocol:
        pieces, origin, at = [], [], 0
        for m in re.finditer(rf"\b{re.escape(protocol.lower())}\b", low):
            pieces += [low[at : m.start()], PROTOCOL_WORD]
            origin += [*range(at, m.start()), *[m.start()] * (len(PROTOCOL_WORD) - 1), m.end() - 1]
            at = m.end()
        pieces.append(low[at:])
        origin += range(at, len(low))
        low = "".join(pieces)
    out: list[tuple[str, int, int]] = []
    for m in _WORD.finditer(low):
        w, start, end = m.group(), origin[m.start()], origin[m.end() - 1] + 1
        if out and w in JOINED.get(out[-1][0], ()):
            out[-1] = (_joined(out[-1][0], w), out[-1][1], end)
        else:
            out.append(("card" if w == "cards" else w, start, end))
    return out


def template_tokens(words: str) -> list[str]:
    return tokens(words.replace("PROTOCOL", PROTOCOL_WORD))


# -- grammar ------------------------------------------------------------------------------------

_SLOTS = r"""
n: NUMBER
amount: NUMBER "card" per?                              -> amount_n
      | "card" "equal" "to" amount_expr                 -> amount_expr_count
      | hand_count
dcount: NUMBER | "a"
deck: "your" "deck"                                     -> deck_own
    | "your" "opponent's" "deck"                        -> deck_opp
    | "their" "deck"                                    -> deck_their
owndeck: "your" "deck"                                  -> deck_own
       | "their" "deck"                                 -> deck_their
target: "this" "card" even_covered?                     -> this_card
      | "that" "card"                                   -> that_card
      | "it"                                            -> it
      | quant ("of" poss)? adj* "card" mod* per?        -> selection
      | poss adj* "card" mod*                           -> selection_one
      | "the" adj* "card" mod*                          -> selection_one
quant: NUMBER                                           -> q_n
     | "up" "to" NUMBER                                 -> q_up_to
     | "a"                                              -> q_one
     | "all"                                            -> q_all
     | "each"                                           -> q_each
poss: "your"                                            -> poss_you
    | "your" "opponent's"                               -> poss_opp
    | "their"                                           -> poss_opp
// a selected card's adjectives: a counted card's (cadj) and an extreme value
?adj: cadj
    | "highest" "value"                                 -> adj_highest
    | "lowest" "value"                                  -> adj_lowest
mod: place | filter
place: "in" "this" "line"                               -> in_this_line
     | "in" "this" "stack"                              -> in_this_stack
     | "in" "each" "line"                               -> in_each_line
     | ("in" "each" | "from+each") "other" "line"       -> in_each_other_line
     | "in" NUMBER "line"                               -> in_chosen_line
     | "in" NUMBER "other" "line"                       -> in_chosen_other_line
     | "in" "the" "same" "line"                         -> in_same_line
     | "in" "that" "line"                               -> in_that_line
     | "in" "a" "line" "where" "they" "have" "a" "higher" "total" "value" "than" "you" "do" -> in_opponent_ahead
     | "with" NUMBER "or" "more" "card"                 -> with_min_cards
filter: "with" ("a" "value" | "values") "of" NUMBER ("or" NUMBER)* -> value_list
      | "with" "the" "face-up" "value" "of" "your" "stated" "number" -> value_stated
      | "that" "shares" "a" "value" "with" "the" "discarded" "card"  -> value_that
      | "with" "a" "value" "less" "than" amount_expr    -> value_lt
      | "that" "has" "a" "value" "greater" "than" amount_expr -> value_gt
per: "for" "each" counted
counted: ("of"? poss)? cadj* "card" cplace?             -> counted_cards
       | "card" "in" zone_owner zone                    -> counted_zone
       | lines                                          -> counted_lines
       | "other" lines                                  -> counted_other_lines
       | ("of"? poss)? protocols                        -> counted_protocols
       | ("of"? poss)? "compiled" protocols             -> counted_compiled
       | ("of"? poss)? protocols "that" ("is" | "are") "compiled" -> counted_compiled
lines: "line" | "lines"
protocols: "protocol" | "protocols"
cadj: "other"                                           -> adj_other
    | "face-up"                                         -> adj_up
    | "face-down"                                       -> adj_down
    | "covered"                                         -> adj_covered
    | "uncovered"                                       -> adj_uncovered
    | "covered" "or" "uncovered"                        -> adj_any_covered
    | "non-this-protocol"                               -> adj_other_protocol
    | "this-protocol"                                   -> adj_same_protocol
cplace: "in" "this" "line"                              -> in_this_line
      | "in" "the"? "other" lines                       -> in_other_lines
      | "in" "the" "field"                              -> in_the_field
zone_owner: "your"                                      -> poss_you
          | "your" "opponent's"                         -> poss_opp
          | "their"                                     -> poss_opp
          | "both" "players'"                           -> poss_any
zone: ("hand" | "hands")                                -> zone_hand
    | ("trash" | "trashes")                             -> zone_trash
    | ("deck" | "decks")                                -> zone_deck
dest: "to" "this" "line"                                -> to_this_line
    | "to" "another" "line"                             -> to_other_line
    | "either" "to" "or" "from" "this" "line"           -> to_or_from_this_line
    | "to" "the" "line" "where" "your" "opponent" "has" "their" "highest" "total" "value" -> to_opponent_highest
ptarget: dcount adj* "card" filter?                     -> ptarget
       | "it"                                           -> it
even_covered: ",even" "if" "this" "card" "is" "covered"
rcards: poss? radj* "card" rmod*
      | poss? radj* "this-protocol" "card" rmod*        -> rcards_same
radj: "face-up"                                         -> adj_up
    | "face-down"                                       -> adj_down
    | "covered"                                         -> adj_covered
    | "uncovered"                                       -> adj_uncovered
    | "non-this-protocol"                               -> adj_other_protocol
rmod: "with" ("a" "value" | "values") "of" NUMBER ("or" NUMBER)* -> value_list
    | "of" "this" "protocol"                            -> adj_same_protocol
    | rline
rline: "in" "this" "line"                               -> in_this_line
rside: "on" "your" "side"                               -> poss_you
     | "on" "your" "opponent's" "side"                  -> poss_opp
rby: "by" "you"                                         -> by_you
   | "by" "your" "opponent"                             -> by_opponent
pdest: face_down pplace? | pplace
face_down: "face-down"
pplace: "in" "another" "line"                           -> to_other_line
      | "in" "this" "line"                              -> to_this_line
      | "in" "a" "line" "with" "a" "face-down" "card"   -> to_line_with_facedown
      | "in" "this" "stack"                             -> to_this_stack
      | "under" "this" "card"                           -> under_this
      | "on" "your" "opponent's" "side"                 -> on_opponent_side
      | "in" "each" "line" "where" "you" "have" "a" "card" -> each_line_with_your_card
      | "in" "each" "other" "line"                      -> each_other_line
      | "in" "each" "line" "with" "a" "face-down" "card" -> each_line_with_facedown
"""

_STRUCTURE = r"""
start: trigger body | body | passives
passives: ((passive | restriction) ".")+
body: sentence+
sentence: opener? ("if" (condition | count_condition) ",")? clauses "."
opener: "first" "," | "then" ","
clauses: clause (sep clause)*
sep: "," | ",then" | "and" | ",and"
clause: subject? may? action                            -> clause
      | "both" "players" action                         -> both_players
subject: "you"                                          -> subject_you
       | "your" "opponent"                              -> subject_opp
may: "may"
action: phrase
      | "either" action "or" action                     -> either
      | field_verb "or" action                          -> verb_or
actor: "you"                                            -> by_you
     | "your" "opponent"                                -> by_opponent
     | "a" "player"                                     -> by_any
trigger: when_phrase by_same? ":"                       -> trigger
       | "after" actor after_phrase where_here? during? ":" -> after_trigger
by_same: "by" "a" "this-protocol" "card"
where_here: "in" "this" "line"
NUMBER: /\d+/
%ignore " "
"""


def _rule_body(words: str) -> str:
    """A phrase's words as a Lark rule body (`~verb` also reads as `verbs`; `<slot>?` optional)."""
    out = []
    for w in words.split():
        if w.startswith("<"):
            name = w.strip("<>?")
            out.append(name + ("?" if w.endswith("?") else ""))
        elif w.startswith("~"):
            base = w[1:]
            out.append(f'("{base}" | "{ph.third_person(base)}")')
        else:
            for t in template_tokens(w):
                if out and t in JOINED.get(out[-1].strip('"'), ()):
                    out[-1] = '"' + _joined(out[-1].strip('"'), t) + '"'
                else:
                    out.append(f"number_{t}" if t.isdigit() else f'"{t}"')
    return " ".join(out)


def _alternatives(name: str, bodies: list[str]) -> str:
    return f"{name}: " + "\n    | ".join(f"{b} -> {name}_{i}" for i, b in enumerate(bodies)) + "\n"


def grammar() -> str:
    """The whole grammar: the shared parts above plus rules generated from the phrasing tables."""
    parts = [
        _STRUCTURE,
        _SLOTS,
        _alternatives("field_verb", [f'"{w}"' for w in FIELD_VERBS]),
        *_number_rules(),
        *(_alternatives(name, bodies) for name, bodies in _phrasing_rules()),
        _alternatives("amount_expr", [_rule_body(w) for w in AMOUNT_EXPR_PRINTED])
        + '    | "the" "number" "of" counted -> amount_counted\n',
    ]
    return "\n".join(parts)


def _number_rules() -> list[str]:
    """A rule for each fixed number a phrase or a hand count says (`number_2`), in name order."""
    said = [p.words for p in ph.PHRASES] + [w for ws in ph.HAND_COUNTS.values() for w in ws]
    return sorted({f"number_{t}: NUMBER\n" for words in said for t in template_tokens(words) if t.isdigit()})


def _phrasing_rules() -> list[tuple[str, list[str]]]:
    """The rules with one alternative per entry of a phrasing table, in the grammar's order; the
    reader reads alternative i of rule `name` by the same table (reader._TABLE_RULES)."""
    return [
        ("phrase", [_rule_body(p.words) for p in ph.PHRASES]),
        ("condition", [_rule_body(c) for c in CONDITION_PRINTED]),
        ("count_condition", [_rule_body(c) for c, _ in ph.COUNT_CONDITIONS]),
        ("passive", [_rule_body(p) for p, _ in ph.PASSIVES]),
        ("restriction", [_rule_body(p) for p, _ in ph.RESTRICTION_TEMPLATES]),
        ("when_phrase", [_rule_body(w) for w in ph.WHEN_WORDS.values()]),
        ("after_phrase", [_rule_body(w) for _, w in AFTER_FORMS]),
        ("during", [_rule_body(w) for w in ph.DURING_WORDS.values()]),
        ("hand_count", [_rule_body(w) for ws in ph.HAND_COUNTS.values() for w in ws]),
    ]


@cache
def _parser() -> Lark:
    """The Lark parser (LALR: the grammar reads left to right with one word of look-ahead; where
    a word could end a part or go on with it, it goes on: "with a value of 1 or 2"), built on first
    use (the official pool never needs it to load)."""
    from lark import Lark  # third-party, imported here so that loading cards does not pay for it

    return Lark(grammar(), parser="lalr", lexer="contextual")


@cache
def known_words() -> frozenset[str]:
    """Every word the grammar uses (a text word outside this set is reported as unknown)."""
    return frozenset(re.findall(r'"([^"]+)"', grammar()))


def _flat(table: dict[str, tuple[str, ...]]) -> list[str]:
    return [k for k, ws in table.items() for _ in ws]


HAND_COUNT_WORDS = _flat(ph.HAND_COUNTS)
# the amount words the grammar reads as they are; the others (ph.COUNTED_AMOUNTS) read through
# "the number of <counted>", which says them too (one reading per sentence, no conflict)
AMOUNT_EXPR_WORDS = [k for k in _flat(ph.AMOUNT_WORDS) if k not in ph.COUNTED_AMOUNTS]
AMOUNT_EXPR_PRINTED = [w for k, ws in ph.AMOUNT_WORDS.items() if k not in ph.COUNTED_AMOUNTS for w in ws]
FIELD_VERBS = sorted({v.word for v in vocab.VERBS if v.on_field and not v.keyword})
VERB_KEYWORDS = frozenset(v.word for v in vocab.VERBS)
# the conditions the grammar reads as they are; a count of cards the quantity grammar also says
# ("there are 5 or more Unity cards in the field") reads through the count condition
CONDITION_PRINTED = [c for c, v in ph.CONDITIONS if v.split()[0] not in ph.COUNTED_COUNTS]
CONDITION_VALUES = [v for _, v in ph.CONDITIONS if v.split()[0] not in ph.COUNTED_COUNTS]
AMOUNT_EXPR_DID = [w == ph.DISCARDED_VALUE for w in AMOUNT_EXPR_PRINTED]
WHENS = list(ph.WHEN_WORDS)
# an action of the opponent's is printed with "their" ("After your opponent shuffles their deck:",
# as the writer prints it); either word reads
AFTER_FORMS = [
    *ph.AFTER_WORDS.items(),
    *((k, w.replace("your ", "their ")) for k, w in ph.AFTER_WORDS.items() if "your " in w),
]
AFTERS = [k for k, _ in AFTER_FORMS]
DURINGS = list(ph.DURING_WORDS)
