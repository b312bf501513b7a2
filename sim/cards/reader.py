"""Read printed card text into the card language: a box's `when`/`do`/`passive` (docs/cards.md).

`read_box(text, protocol)` parses with the grammar of sim/cards/grammar.py and returns the box's
keys as a card file would write them. What the grammar leaves to context is settled here, after
the parse: who performs a step (the sentence's subject), which deck "your deck" is for that
subject, what "it" and "that line" point to, and how far an "If ..." reaches (the whole sentence:
later steps get `if = "same"`). A text that does not read whole raises `ReadError` with one line
naming the words it could not read; one whose words contradict each other ("1 face-up face-down
card") or point back at nothing ("it" in the first step) is refused as ambiguous.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from sim.cards import grammar as gr
from sim.cards import phrasing as ph
from sim.cards import vocabulary as vocab


class ReadError(ValueError):
    """Card text the reader cannot turn into steps: the message is one line naming the words as
    written. `unread`: the (start, end) spans of the text it could not read (none when the problem
    is not in one place, e.g. an ambiguity)."""

    def __init__(self, message: str, unread: tuple[tuple[int, int], ...] = ()) -> None:
        super().__init__(message)
        self.unread = unread


_KEYWORD = {v.name: v.word for v in vocab.VERBS}
# conditions that name this card, after which "it" is this card ("If this card is covered, ... it")
_THIS_CARD_CONDITIONS = {"this_covered", "this_covering"}


def _num(tok: Any) -> int:
    return int(str(tok))


class _Build:
    """Lark transformer callbacks (bound lazily to lark.Transformer, see `_transformer`). Slots give
    dicts of step keys; keys starting with `_` are settled after the parse. `named`: the other
    protocols the text names, in text order (see `_named_protocols`)."""

    named: list[str]

    # -- slots
    def n(self, c):
        return _num(c[0])

    def amount_n(self, c):
        return {"_count": _num(c[0]), **(c[1] if len(c) > 1 else {})}

    def amount_expr_count(self, c):
        if len(c[0]) > 2:  # "equal to the number of <counted>": the amount `count`
            word = _amount_word(c[0][2])
            return {"_count": word} if word in ph.COUNTED_COUNTS else {"_count": "count", "count": c[0][2]}
        return {"_count": c[0][0], **({"_did": True} if c[0][1] else {})}

    # -- quantities ("for each <counted>", "the number of <counted>"): a `per`/`count` table
    def per(self, c):
        return {"per": c[0]}

    def amount_counted(self, c):
        return ("count", False, c[0])

    def counted_cards(self, c):
        table = self.selection([p for p in c if isinstance(p, dict)])
        return {k: v for k, v in table.items() if (k, v) not in (("covered", "any"), ("line", "any"))}

    def counted_cards_same(self, c):
        return self.counted_cards([*c, {"protocol": "same"}])

    def counted_zone(self, c):
        return {"of": c[1], **({} if c[0] == {"whose": "you"} else c[0])}

    def counted_lines(self, c):
        return {"of": "lines"}

    def counted_other_lines(self, c):
        return {"of": "lines", "line": "other"}

    def counted_protocols(self, c):
        return {"of": "protocols", **next((p for p in c if isinstance(p, dict)), {})}

    def counted_compiled(self, c):
        return {"of": "compiled_protocols", **next((p for p in c if isinstance(p, dict)), {})}

    def lines(self, c):
        return None

    def protocols(self, c):
        return None

    def poss_any(self, c):
        return {"whose": "any"}

    def zone_hand(self, c):
        return "hand"

    def zone_trash(self, c):
        return "trash"

    def zone_deck(self, c):
        return "deck"

    def in_other_lines(self, c):
        return {"line": "other"}

    def in_the_field(self, c):
        return {"line": "any"}

    def dcount(self, c):
        return {"_count": _num(c[0]) if c else 1}

    def deck_own(self, c):
        return {"_deck": "own"}

    def deck_opp(self, c):
        return {"_deck": "opp"}

    def deck_their(self, c):
        return {"_deck": "their"}

    def this_card(self, c):
        return {"_count": "this"}

    def even_covered(self, c):
        return None

    def that_card(self, c):
        return {"_count": "that"}

    def it(self, c):
        return {"_count": "that", "_it": True}

    def selection(self, c):
        out: dict[str, Any] = {}
        for part in c:
            for k, v in part.items():
                if k in out and out[k] != v:
                    raise ReadError(
                        f"ambiguous: the cards are described both as {_said(k, out[k])} and as {_said(k, v)}"
                    )
                out[k] = v
        return out

    def rcards(self, c):
        return self.selection(c)

    def rcards_same(self, c):
        return self.selection([*c, {"protocol": "same"}])

    def radj(self, c):
        return c[0]

    def rmod(self, c):
        return c[0]

    def selection_one(self, c):
        return {"_count": 1, **self.selection(c)}

    def selection_any_number(self, c):
        return {"_count": "0+", **self.selection(c)}

    def q_n(self, c):
        return {"_count": _num(c[0])}

    def q_up_to(self, c):
        return {"_count": _num(c[0]), "up_to": True}

    def q_one(self, c):
        return {"_count": 1}

    def q_all(self, c):
        return {"_count": "all"}

    def q_each(self, c):
        return {"_count": "each"}

    def poss_you(self, c):
        return {"whose": "you"}

    def poss_opp(self, c):
        return {"whose": "opponent"}

    def adj_other(self, c):
        return {"other": True}

    def adj_up(self, c):
        return {"face": "up"}

    def adj_down(self, c):
        return {"face": "down"}

    def adj_covered(self, c):
        return {"covered": True}

    def adj_uncovered(self, c):
        return {"covered": False}

    def adj_any_covered(self, c):
        return {"covered": "any"}

    def adj_other_protocol(self, c):
        return {"protocol": "other"}

    def adj_same_protocol(self, c):
        return {"protocol": "same"}

    def adj_named_protocol(self, c):
        return {"protocol": self.named.pop(0)}

    def adj_highest(self, c):
        return {"pick": "highest"}

    def adj_lowest(self, c):
        return {"pick": "lowest"}

    def mod(self, c):
        return c[0]

    def amount(self, c):
        return c[0]

    def place(self, c):
        return c[0]

    def filter(self, c):
        return c[0]

    def in_this_line(self, c):
        return {"line": "this"}

    def in_this_stack(self, c):
        return {"line": "this_stack"}

    def in_each_line(self, c):
        return {"each": "line"}

    def in_each_other_line(self, c):
        return {"each": "other_line"}

    def in_chosen_line(self, c):
        return {"line": "chosen", "_one": _num(c[0])}

    def in_chosen_other_line(self, c):
        return {"line": "chosen_other", "_one": _num(c[0])}

    def in_same_line(self, c):
        return {"line": "that"}

    def in_that_line(self, c):
        return {"_that_line": True}

    def in_opponent_ahead(self, c):
        return {"line": "opponent_ahead"}

    def with_min_cards(self, c):
        return {"min_cards": _num(c[0])}

    def value_list(self, c):
        return {"value": sorted({_num(x) for x in c})}

    def value_stated(self, c):
        return {"value": "stated"}

    def value_that(self, c):
        return {"value": "that", "_did": True}

    def value_lt(self, c):
        return _compared("value_lt", c[0])

    def value_gt(self, c):
        return _compared("value_gt", c[0])

    def to_this_line(self, c):
        return {"to": "this_line"}

    def to_other_line(self, c):
        return {"to": "other_line"}

    def to_or_from_this_line(self, c):
        return {"to": "to_or_from_this_line"}

    def to_opponent_highest(self, c):
        return {"to": "opponent_highest"}

    def to_line_with_facedown(self, c):
        return {"to": "line_with_facedown"}

    def to_this_stack(self, c):
        return {"to": "this_stack"}

    def under_this(self, c):
        return {"under": "this"}

    def on_opponent_side(self, c):
        return {"side": "opponent"}

    def each_line_with_your_card(self, c):
        return {"each": "line_with_your_card"}

    def each_other_line(self, c):
        return {"each": "other_line"}

    def each_line_with_facedown(self, c):
        return {"each": "line_with_facedown"}

    def ptarget(self, c):
        return self.selection(c)

    def pdest(self, c):
        return self.selection(c)

    def face_down(self, c):
        return {"face": "down"}

    def by_same(self, c):
        return {"covered_by": "same_protocol"}

    def where_here(self, c):
        return {"where": "this_line"}

    # -- sentences
    def phrase(self, c):
        return c[0]

    def either(self, c):
        return {"either": [[c[0]], [c[1]]]}

    def verb_or(self, c):
        other = copy.deepcopy(c[1])
        verb = _verb_of(other)
        other[c[0]] = other.pop(verb)
        return {"either": [[other], [c[1]]]}

    def action(self, c):
        return c[0]

    def subject_you(self, c):
        return "you"

    def subject_opp(self, c):
        return "opponent"

    def may(self, c):
        return "may"

    def clause(self, c):
        subject = next((x for x in c if x in ("you", "opponent")), None)
        return ("clause", subject, "may" in c, c[-1])

    def both_players(self, c):
        return ("both", None, False, c[0])

    def clauses(self, c):
        return [x for x in c if isinstance(x, tuple)]

    def sep(self, c):
        return None

    def opener(self, c):
        return None

    def sentence(self, c):
        cond = next((x for x in c if isinstance(x, (str, tuple))), None)
        return (cond, next(x for x in c if isinstance(x, list)))

    def body(self, c):
        return ("body", c)

    def passives(self, c):
        return ("passives", c)

    def by_you(self, c):
        return "you"

    def by_opponent(self, c):
        return "opponent"

    def by_any(self, c):
        return "any"

    def trigger(self, c):
        out = {"when": c[0]}
        for x in c[1:]:
            out.update(x)
        return ("trigger", out)

    def after_trigger(self, c):
        out: dict[str, Any] = {"when": c[1]}
        if c[0] != "you":
            out["by"] = c[0]
        for x in c[2:]:
            out.update({"during": x[1]} if isinstance(x, tuple) else x)
        return ("trigger", out)

    def start(self, c):
        return list(c)


def _compared(key: str, amount: tuple) -> dict[str, Any]:
    """A value compared with an amount; a quantity that an amount word says is that word (Peace
    3's "the number of cards in your hand" is `hand`), any other is the amount `count`."""
    if len(amount) == 2:
        return {key: amount[0]}
    word = _amount_word(amount[2])
    return {key: word} if word else {key: "count", "count": amount[2]}


def _amount_word(counted: dict[str, Any]) -> str | None:
    """The amount word that says what `counted` counts, if one does (ph.COUNTED_AMOUNTS)."""
    return next((w for w, t in ph.COUNTED_AMOUNTS.items() if t == counted), None)


def _read_phrase(i: int, c: list) -> dict[str, Any]:
    """A verb phrase: its keys, its slots' keys, and the verb's count (true when it says none)."""
    p = ph.PHRASES[i]
    step: dict[str, Any] = copy.deepcopy(p.keys)
    for part in c:
        if isinstance(part, dict):
            step.update(part)
    word = _KEYWORD[p.verb]
    count = step.pop("_count", None)
    if word not in step:
        step[word] = True if count is None else count
    return {word: step.pop(word), **step}


def _read_condition(i: int, c: list) -> str:
    text = gr.CONDITION_VALUES[i]
    return text.format(n=c[0]) if c else text


def _read_count_condition(i: int, c: list) -> Any:
    """(the condition, what it counts), or a condition on an amount word."""
    cond, said = ph.COUNT_CONDITIONS[i][1].format(n=c[0] if len(c) > 1 else 0), _amount_word(c[-1])
    return cond.replace("count", said) if said in ph.COUNTED_COUNTS else (cond, c[-1])


def _read_passive(i: int, c: list) -> dict[str, Any]:
    return {k: (c[0] if v == "n" else -c[0] if v == "-n" else v) for k, v in ph.PASSIVES[i][1].items()}


def _read_restriction(i: int, c: list) -> dict[str, Any]:
    words, keys = ph.RESTRICTION_TEMPLATES[i]
    if keys["deny"] in DENY_PLAYS and words.startswith("<rcards>") and c and c[0]:
        raise ReadError("a play restriction names no cards: 'cards cannot be played ...' (on a side, in this line)")
    return _restriction(dict(keys), c)


def _read_number(i: int, c: list) -> None:
    if _num(c[0]) != i:
        raise ReadError(f"expected the number {i}, got {c[0]}")


# The value of entry i of a generated table rule (`phrase_3`, `condition_0`, ...), by the rule's name.
_TABLE_RULES: dict[str, Callable[[int, list], Any]] = {
    "phrase": _read_phrase,
    "condition": _read_condition,
    "count_condition": _read_count_condition,
    "passive": _read_passive,
    "restriction": _read_restriction,
    "when_phrase": lambda i, c: gr.WHENS[i],
    "after_phrase": lambda i, c: gr.AFTERS[i],
    "during": lambda i, c: ("during", gr.DURINGS[i]),
    "field_verb": lambda i, c: gr.FIELD_VERBS[i],
    "number": _read_number,
    "hand_count": lambda i, c: {"_count": gr.HAND_COUNT_WORDS[i]},
    "amount_expr": lambda i, c: (gr.AMOUNT_EXPR_WORDS[i], gr.AMOUNT_EXPR_DID[i]),
}


DENY_PLAYS = tuple(ph.DENY_PLAY_WORDS)


def _restriction(keys: dict[str, Any], parts: list) -> dict[str, Any]:
    """A restriction template's keys plus its composed slots' (the cards, the side played onto,
    the line, the player): the cards' `line = "this"` is the restriction's `scope`."""
    for part in parts:
        if isinstance(part, str):  # rby
            part = {"by": part}
        for k, v in part.items():
            k, v = ("scope", "this_line") if k == "line" else (k, v)
            if keys.get(k, v) != v:
                raise ReadError(f"ambiguous: the restriction says both {_said(k, keys[k])} and {_said(k, v)}")
            keys[k] = v
    return keys


def _verb_of(step: dict[str, Any]) -> str:
    return next(k for k in step if k in gr.VERB_KEYWORDS)


def _transformer(named: list[str]):
    from lark import Transformer  # third-party; see grammar._parser

    class Build(_Build, Transformer):
        def __default__(self, data, children, meta):
            name, _, i = str(data).rpartition("_")
            if name and i.isdigit():
                return _TABLE_RULES[name](int(i), children)
            raise KeyError(f"no reading for grammar rule {data}")

    build = Build()
    build.named = named
    return build


def _named_protocols(text: str, spans: list[tuple[str, int, int]]) -> tuple[list[tuple[str, int, int]], list[str]]:
    """Another protocol named before "card" ("for each Fire card"): a word the grammar does not know,
    written as a name ("Fire", not "fire" or "FIRE"), becomes NAMED_PROTOCOL_WORD, and its name is
    kept for the reading. Whether such a protocol exists is the loader's to say (sim/cards/loader.py)."""
    out, names = [], []
    for i, (w, s, e) in enumerate(spans):
        name = text[s:e]
        named = (
            w not in gr.known_words()
            and name[:1].isupper()
            and name[1:] == name[1:].lower()
            and i + 1 < len(spans)
            and spans[i + 1][0] == "card"
        )
        out.append((gr.NAMED_PROTOCOL_WORD, s, e) if named else (w, s, e))
        names += [name] if named else []
    return out, names


# -- after the parse: what the grammar leaves to context -------------------------------------------


def _settle(step: dict[str, Any], subject: str | None, prev: dict[str, Any] | None) -> dict[str, Any]:
    """Resolve a step's `_` keys: its deck for this subject, "that line", a count of "all"."""
    out = dict(step)
    if "either" in out:
        out["either"] = [[_settle(s, subject, prev) for s in branch] for branch in out["either"]]
    deck = out.pop("_deck", None)
    verb = _verb_of(out)
    if out.pop("_subject", subject or "you") != (subject or "you"):
        raise ReadError("this wording is the opponent's ('Your opponent gives you 1 card from their hand')")
    if deck is not None:
        _settle_deck(out, deck, verb, subject)
    if out.pop("_that_line", False):
        out["line"] = "protocol" if prev is not None and "compile_protocol" in prev else "that"
    for k in ("_one",):
        if out.pop(k, 1) != 1:
            raise ReadError('a chosen line is written "in 1 line"')
    _settle_covered(out, verb)
    return out


def _settle_deck(out: dict[str, Any], deck: str, verb: str, subject: str | None) -> None:
    """Whose deck: a player shuffles their own (the subject's); otherwise "your deck" is the text's
    player's and "their deck" the subject's."""
    if verb == "shuffle":
        if deck != ("their" if subject == "opponent" else "own"):
            raise ReadError("a player shuffles their own deck ('Your opponent shuffles their deck')")
        return
    own = (deck == "their") if subject == "opponent" else (deck == "own")
    if not (own and verb == "draw"):
        out["from"] = "deck_top" if own else "opponent_deck"


def _settle_covered(out: dict[str, Any], verb: str) -> None:
    """All cards of a line are covered and uncovered (6.4)."""
    if out.get(verb) == "all" and "covered" not in out and vocab.by_word(verb).on_field:
        out["covered"] = "any"
    # a printed "uncovered" stays `covered = false` (the default), so the writer prints it back


def _steps_of(sentences: list, protocol: str) -> list[dict[str, Any]]:
    """The steps of a box's sentences, in order, with conditions, subjects and "it" settled."""
    steps: list[dict[str, Any]] = []
    for cond, clauses in sentences:
        cond, counted = cond if isinstance(cond, tuple) else (cond, None)
        subject = None
        for n, (kind, subj, may, action) in enumerate(clauses):
            subject = subj or subject
            step = _settle(action, subject, steps[-1] if steps else None)
            _settle_it(step, cond, first=not steps)
            if may:
                step["may"] = True
            if subject == "opponent" and kind == "clause":
                step["who"] = "opponent"
            _sentence_keys(step, n, cond, counted)
            if kind == "both":
                other = {**step, "who": "opponent"}
                step = {"either": [[step, other], [other, step]]}
            steps.append(step)
    return steps


def _settle_it(step: dict[str, Any], cond: str | None, first: bool) -> None:
    """ "it" is this card under a condition on this card, else the previous step's card (if it did);
    "it", "that card" or "the same line" in the first step has nothing to point to."""
    it = _pop_flag(step, "_it")
    did = _pop_flag(step, "_did")
    if it and cond in _THIS_CARD_CONDITIONS:
        _set_count(step, "this")
    elif (it or _points_back(step)) and first:
        word = "it" if it else "that"
        raise ReadError(f"ambiguous: '{word}' in the first sentence has nothing before it to point to")
    elif it or did:
        step.setdefault("if", "did")


def _sentence_keys(step: dict[str, Any], n: int, cond: str | None, counted: dict[str, Any] | None) -> None:
    """The sentence's condition on its n-th step ("same" after the first), and what the first counts."""
    if cond is not None:
        step["if"] = cond if n == 0 else "same"
    if counted is not None and n == 0:
        if step.setdefault("count", counted) != counted:
            raise ReadError("ambiguous: a step counts one thing, here its condition and its number both count")


def _said(key: str, value: Any) -> str:
    return f"{key} = {value!r}".replace("'", '"')


def _pop_flag(step: dict[str, Any], key: str) -> bool:
    found = bool(step.pop(key, False))
    for branch in step.get("either", []):
        for s in branch:
            found |= bool(s.pop(key, False))
    return found


def _points_back(step: dict[str, Any]) -> bool:
    """Does the step name "that card" or "the same line" (which need an earlier step)?"""
    if "either" in step:
        return any(_points_back(s) for br in step["either"] for s in br)
    return step.get(_verb_of(step)) == "that" or step.get("line") == "that" or step.get("value") == "that"


def _set_count(step: dict[str, Any], count: str) -> None:
    step[_verb_of(step)] = count


def read_box(text: str, protocol: str) -> dict[str, Any]:
    """The box keys (`when`, `by`, ..., `do` or `passive`) that `text` reads to, for a card of
    `protocol` (its name stands for "this card's protocol")."""
    odd = sorted(set(gr.UNREAD_CHARS.findall(text.lower().replace("\u2019", "'"))))
    if odd:
        raise ReadError("unknown character" + ("s " if len(odd) > 1 else " ") + " ".join(repr(c) for c in odd))
    spans, named = _named_protocols(text, gr.token_spans(text, protocol))
    words = [w for w, _, _ in spans]
    if not words:
        raise ReadError("the text is empty")
    _known_words_only(text, spans)
    if words[-1] != ".":
        words.append(".")
    tree = _parse(words, _Source(text, spans))
    try:
        parts = _transformer(named).transform(tree)
    except Exception as e:  # lark wraps callback errors in VisitError
        inner = getattr(e, "orig_exc", e)
        if isinstance(inner, ReadError):
            raise inner from None
        raise
    return _box_of(parts, protocol)


def _known_words_only(text: str, spans: list[tuple[str, int, int]]) -> None:
    """Refuse the words the grammar does not know, each quoted as first written, all their spans marked."""
    unknown = [(w, s, e) for w, s, e in spans if w not in gr.known_words() and not w.isdigit()]
    if unknown:
        first = {w: text[s:e] for w, s, e in reversed(unknown)}
        raise ReadError(
            f"unknown word{'s' if len(first) > 1 else ''} "
            + ", ".join(f"'{first[w]}'" for w in dict.fromkeys(w for w, _, _ in unknown)),
            tuple((s, e) for _, s, e in unknown),
        )


def _box_of(parts: list, protocol: str) -> dict[str, Any]:
    box: dict[str, Any] = {}
    for kind, value in parts:
        if kind == "trigger":
            box.update(value)
        elif kind == "passives":
            box["passive"] = value
        else:
            box["do"] = _steps_of(value, protocol)
    return box


class _Source:
    """The text as written and its tokens' spans: error messages quote the designer's words."""

    def __init__(self, text: str, spans: list[tuple[str, int, int]]) -> None:
        self.text, self.spans = text, spans

    def span(self, i: int, j: int) -> tuple[int, int]:
        """The characters of tokens i..j-1 (the "." the reader adds at the end has none)."""
        j = min(j, len(self.spans))
        if i >= j:
            return (len(self.text), len(self.text))
        return (self.spans[i][1], self.spans[j - 1][2])

    def words(self, i: int, j: int) -> str:
        s, e = self.span(i, j)
        return self.text[s:e].rstrip(" .")


def _parse(words: list[str], source: _Source):
    from lark.exceptions import UnexpectedEOF, UnexpectedInput, UnexpectedToken  # third-party; see grammar._parser

    text = " ".join(words)
    try:
        return gr._parser().parse(text)
    except (UnexpectedEOF, UnexpectedToken) as e:
        if isinstance(e, UnexpectedToken) and e.token.type != "$END":
            raise _unexpected(words, text, e.token.start_pos, source) from None
        start = _sentence_start(words, len(words) - 1)
        raise ReadError(
            f"the text stops in the middle of a sentence: '{source.words(start, len(words))}'",
            (source.span(start, len(words)),),
        ) from None
    except UnexpectedInput as e:
        raise _unexpected(words, text, e.pos_in_stream, source) from None


def _unexpected(words: list[str], text: str, pos: int | None, source: _Source) -> ReadError:
    """The error for a text that cannot be read from word `pos` (a character offset in `text`)
    on: the words from there to the end of the sentence, quoted as written."""
    at = text[: pos or 0].count(" ")
    start = _sentence_start(words, at - 1)
    said = source.words(start, at)
    rest = words[at:]
    stop = rest.index(".") if "." in rest else len(rest)
    if stop == 0:
        return ReadError(f"the sentence '{said}' stops before it is complete", (source.span(start, at),))
    where = f"after '{said}'" if said else "at the start of a sentence"
    return ReadError(f"could not read '{source.words(at, at + stop)}' ({where})", (source.span(at, at + stop),))


def _sentence_start(words: list[str], i: int) -> int:
    """The first word of the sentence that word i is in (for error messages)."""
    return max((j + 1 for j in range(i) if words[j] == "."), default=0)


def normal_text(text: str) -> str:
    """Text as the reader sees it (case, spacing and plurals of "card" aside), for comparing."""
    return " ".join(gr.tokens(text))
