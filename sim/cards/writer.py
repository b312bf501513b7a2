"""Write an encoded box (`when`/`do`/`passive`) back to printed text, from sim/cards/phrasing.py.

The text is the reader's canonical phrasing: reading it gives the encoding back (checked for
every official box by `protolab cards check`), and most boxes come out as printed.
"""

from __future__ import annotations

import re
from typing import Any

from sim.cards import phrasing as ph
from sim.cards import vocabulary as vocab
from sim.cards.counting import counted_words


class WriteError(ValueError):
    """An encoding the phrasing tables cannot print."""


_DECK_SOURCES = ("deck_top", "opponent_deck")
_FIELD_WORDS = {v.word for v in vocab.VERBS if v.on_field and not v.keyword}
# the words of the selectors and destinations, as the vocabulary declares them (Member.printed, .played)
_LINES = vocab.printed("line")
_EACH = vocab.printed("each")
_TO = vocab.printed("to")
_PLAY_TO = vocab.printed("to", played=True)


def _verb_key(step: dict[str, Any]) -> str:
    return next(k for k in step if k in {v.word for v in vocab.VERBS})


def _plain(step: dict[str, Any]) -> dict[str, Any]:
    """The step as printed: a deck play says it is face-down, `covered = false` goes unsaid."""
    out = dict(step)
    if out.get("covered") is False:
        del out["covered"]
    if "play" in out and out.get("from") in _DECK_SOURCES:
        out["face"] = "down"
    if "play" in out and out.get("play") == "each" and out.get("from") in _DECK_SOURCES and "each" in out:
        out["play"] = 1  # a deck play per line plays one card per line whatever the count
    return out


class _Slots:
    """Slot writers: each takes the keys left to say and returns its words (or None), removing
    the keys it said."""

    def __init__(self, keys: dict[str, Any], verb: str, who: str, own_filter: bool = False):
        self.keys, self.verb, self.who = keys, verb, who
        self.own_filter = own_filter  # the phrase says the filter itself, after its target
        self.n = 1

    def take(self, k: str) -> Any:
        return self.keys.pop(k)

    def amount(self) -> str | None:
        count = self.keys.get(self.verb)
        if isinstance(count, int) and not isinstance(count, bool):
            self.take(self.verb)
            return f"{count} card{'s' if count != 1 else ''}" + self._per()
        if count == "count":
            self.take(self.verb)
            return "cards equal to " + self._amount_words("count")
        if count == "hand":
            self.take(self.verb)
            return "your hand" if self.who == "you" else "their hand"
        if count in ph.HAND_COUNTS:
            return ph.HAND_COUNTS[self.take(self.verb)][0]
        if count in ph.AMOUNT_WORDS:
            return "cards equal to " + self._amount_words(self.take(self.verb))
        return None

    def _per(self) -> str:
        """ " for each ..." when the step's number is counted (`per`), else nothing."""
        return " for each " + counted_words(self.take("per"), True, self.who) if "per" in self.keys else ""

    def _amount_words(self, word: str) -> str:
        if word == "count":
            return "the number of " + counted_words(self.take("count"), False, self.who)
        if word == "value_of_that" and self.keys.get("if") == "did":
            self.take("if")
            return ph.DISCARDED_VALUE
        return ph.AMOUNT_WORDS[word][0]

    def dcount(self) -> str | None:
        count = self.keys.get(self.verb)
        if isinstance(count, int) and not isinstance(count, bool):
            self.n = self.take(self.verb)
            return str(self.n)
        return None

    def deck(self) -> str | None:
        src = self.keys.pop("from", None)
        if src not in _DECK_SOURCES:
            return None
        own = src == "deck_top"
        if self.who == "opponent":
            return "their deck" if own else "your deck"
        return "your deck" if own else "your opponent's deck"

    def owndeck(self) -> str:
        """The deck a player shuffles: always their own."""
        return "their deck" if self.who == "opponent" else "your deck"

    def filter(self) -> str | None:
        v = self.keys.get("value")
        if isinstance(v, list):
            self.take("value")
            return "with a value of " + " or ".join(str(x) for x in v)
        if v == "stated":
            self.take("value")
            return "with the face-up value of your stated number"
        if v == "that" and self.keys.get("if") == "did":
            self.take("value"), self.take("if")
            return "that shares a value with the discarded card"
        if "value_lt" in self.keys:
            return "with a value less than " + self._amount_words(self.take("value_lt"))
        if "value_gt" in self.keys:
            return "that has a value greater than " + self._amount_words(self.take("value_gt"))
        return None

    def target(self) -> str | None:
        count = self.keys.get(self.verb)
        if count == "this":
            self.take(self.verb)
            return "this card"
        if count == "that":
            self.take(self.verb)
            if self.keys.get("if") == "did":
                self.take("if")
                return "it"
            return "that card"
        if not (isinstance(count, int) or count in ("all", "each")) or isinstance(count, bool):
            return None
        return self._selection(self.take(self.verb))

    def _selection(self, count: Any) -> str:
        k = self.keys
        whose = k.pop("whose", "any")
        pick = k.pop("pick", None)
        adjs = self._adjectives(count, pick)
        many = count == "all" or (isinstance(count, int) and count > 1)
        count = f"up to {count}" if k.pop("up_to", False) else count
        head, many = self._head(whose, pick, count, many)
        words = [head, *adjs, "cards" if many else "card"]
        words += self._places()
        f = None if self.own_filter else self.filter()
        return " ".join(words + ([f] if f else [])) + self._per()

    def _adjectives(self, count: Any, pick: str | None) -> list[str]:
        """The selection's words before "card": other, highest value, face-down, covered, PROTOCOL."""
        k = self.keys
        adjs = ["other"] if k.pop("other", False) else []
        if pick:
            adjs.append(f"{pick} value")
        if "face" in k:
            adjs.append("face-" + k.pop("face"))
        covered = _covered_word(k.pop("covered", False), count, pick)
        adjs += [covered] if covered else []
        proto = k.pop("protocol", None)
        if proto:
            adjs.append("PROTOCOL" if proto == "same" else "non-PROTOCOL")
        return adjs

    def _head(self, whose: str, pick: str | None, count: Any, many: bool) -> tuple[str, bool]:
        """The selection's first words ("the", "2 of your", "a", "all") and whether it names several cards."""
        poss = {"any": "", "you": "your", "opponent": "their" if self.who == "opponent" else "your opponent's"}[whose]
        if pick:
            return poss or "the", many
        if poss:
            return f"{count} of {poss}", True
        k = self.keys
        return "a" if count == 1 and "value" in k and isinstance(k["value"], list) else str(count), many

    def _places(self) -> list[str]:
        out = []
        if "line" in self.keys:
            out.append(_LINES[self.take("line")])
        if "each" in self.keys:
            out.append(_EACH[self.take("each")])
        if "min_cards" in self.keys:
            out.append(f"with {self.take('min_cards')} or more cards")
        return out

    def dest(self) -> str | None:
        to = self.keys.pop("to", None)
        return _TO.get(to) if to else None

    def ptarget(self) -> str | None:
        count = self.keys.get(self.verb)
        if count == "that":
            return self.target()
        d = self.dcount()
        if d is None:
            return None
        proto = self.keys.pop("protocol", None)
        adj = {"same": "PROTOCOL ", "other": "non-PROTOCOL "}.get(proto, "")
        f = self.filter()
        return f"{d} {adj}card{'s' if self.n != 1 else ''}" + (f" {f}" if f else "")

    def pdest(self) -> str | None:
        out = []
        if self.keys.get("face") == "down":
            self.take("face")
            out.append("face-down")
        for key, table in (("to", _PLAY_TO), ("each", _EACH)):
            if key in self.keys:
                out.append(table[self.take(key)])
        if self.keys.pop("under", None) == "this":
            out.append("under this card")
        if self.keys.pop("side", None) == "opponent":
            out.append("on your opponent's side")
        return " ".join(out) or None


def _covered_word(covered: Any, count: Any, pick: str | None) -> str:
    """How a selection says `covered`: only where it differs from what its count implies ("" if not)."""
    if covered is True:
        return "covered"
    if covered == "any" and count != "all":
        return "covered or uncovered"
    if covered is False and (count == "all" or pick):
        return "uncovered"
    return ""


def _phrase_text(p: ph.Phrase, step: dict[str, Any], who: str) -> tuple[str, bool] | None:
    """`step` in the words of phrase `p` and whether those words already say its `if` ("it", "the
    discarded card"); None if `p` cannot say all of it."""
    keys = {k: v for k, v in step.items() if k not in ("who", "may")}
    fixed = {k: v for k, v in p.keys.items() if k != "_subject"}
    if any(keys.get(k) != v for k, v in fixed.items()) or p.keys.get("_subject", who) != who:
        return None
    for k in fixed:
        keys.pop(k)
    slots = _Slots(keys, vocab.engine_verb(_verb_key(step), step.get("from")).word, who, "<filter>?" in p.words)
    out = _phrase_words(p, slots, who)
    if out is None or set(keys) - {"if"}:
        return None
    return _join(out), "if" in step and "if" not in keys


def _phrase_words(p: ph.Phrase, slots: _Slots, who: str) -> list[str] | None:
    """The words of phrase `p`, its slots filled from the step's keys (which they take); None if a
    slot that must be said cannot be."""
    out = []
    for w in p.words.split():
        if w.startswith("<"):
            said = getattr(slots, w.strip("<>?"))()
            if said is None and not w.endswith("?"):
                return None
            out.extend([said] if said else [])
        elif w.startswith("~"):
            out.append(ph.third_person(w[1:]) if who == "opponent" else w[1:])
        elif w == "card" and slots.n != 1:
            out.append("cards")
        else:
            out.append(w)
    return out


def _join(words: list[str]) -> str:
    return re.sub(r" ([,:])", r"\1", " ".join(words))


def _action(step: dict[str, Any], who: str) -> tuple[str, bool]:
    """The words of one step without its subject, `may` and condition."""
    if "either" in step:
        return _either(step["either"], who), False
    verb = vocab.engine_verb(_verb_key(step), step.get("from")).name
    for p in ph.PHRASES:
        if p.verb == verb:
            said = _phrase_text(p, step, who)
            if said is not None:
                return said
    raise WriteError(f"no phrasing prints the step {step}")


def _either(branches: list[list[dict[str, Any]]], who: str) -> str:
    a, b = ([_plain(s) for s in br] for br in branches)
    if len(a) == 2 and a == b[::-1] and a[1] == {**a[0], "who": "opponent"}:
        return "both players " + _action(a[0], "both")[0]
    if len(a) != 1 or len(b) != 1:
        raise WriteError(f"no phrasing prints an either with several steps: {branches}")
    va, vb = _verb_key(a[0]), _verb_key(b[0])
    rest_a, rest_b = ({k: v for k, v in s.items() if k != verb} for s, verb in ((a[0], va), (b[0], vb)))
    if va != vb and {va, vb} <= _FIELD_WORDS and rest_a == rest_b and a[0][va] == b[0][vb]:
        return f"{va} or " + _action(b[0], who)[0]
    return f"either {_action(a[0], who)[0]} or {_action(b[0], who)[0]}"


def _clause(step: dict[str, Any]) -> tuple[str, bool]:
    step = _plain(step)
    who = step.get("who", "you")
    words, if_said = _action(step, "you" if step.get("may") else who)
    if words.startswith("both players"):
        return words, if_said
    if step.get("may"):
        words = ("your opponent may " if who == "opponent" else "you may ") + words
    elif who == "opponent" and not words.startswith("your opponent"):
        words = "your opponent " + words
    return words, if_said


def _condition(cond: str, counted: dict[str, Any] | None = None) -> str:
    if counted is not None:
        return _count_condition(cond, counted)
    for words, value in ph.CONDITIONS:
        m = re.fullmatch(re.escape(value).replace(r"\{n\}", r"(-?\d+)"), cond)
        if m:
            return "if " + words.replace("<n>", m.group(1) if m.groups() else "")
    raise WriteError(f"no phrasing prints the condition {cond!r}")


def _count_condition(cond: str, counted: dict[str, Any]) -> str:
    """A condition on the step's `count` quantity ("if there are 2 or more face-down cards")."""
    for words, value in ph.COUNT_CONDITIONS:
        m = re.fullmatch(re.escape(value).replace(r"\{n\}", r"(\d+)"), cond)
        if m:
            said = words.replace("<n>", m.group(1) if m.groups() else "")
            return "if " + said.replace("<counted>", counted_words(counted, False))
    raise WriteError(f"no phrasing prints the condition {cond!r} on a count")


def _counted_condition(step: dict[str, Any]) -> dict[str, Any] | None:
    """The `count` table the step's condition names (None: its condition counts nothing)."""
    cond = step.get("if")
    return step.get("count") if isinstance(cond, str) and "count" in re.findall(r"\w+", cond) else None


def _sentences(steps: list[dict[str, Any]]) -> list[str]:
    groups: list[tuple[str, list[str]]] = []
    for step in steps:
        counted = _counted_condition(step)
        words, if_said = _clause({k: v for k, v in step.items() if k != "count"} if counted else step)
        cond = step.get("if")
        if cond == "same" and groups:
            groups[-1][1].append(words)
        elif cond and not if_said:
            groups.append((_condition(cond, counted) + ", ", [words]))
        else:
            groups.append(("", [words]))
    out = []
    for cond, clauses in groups:
        body = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + ", and " + clauses[-1]
        if len(clauses) == 2:
            body = " and ".join(clauses)
        out.append(cond + body)
    return out


def _trigger(box: dict[str, Any]) -> str:
    when = box["when"]
    if when in ph.WHEN_WORDS:
        return ph.WHEN_WORDS[when] + (" by a PROTOCOL card" if box.get("covered_by") else "") + ":"
    by = box.get("by", "you")
    act = ph.AFTER_WORDS[when]
    verb, _, rest = act[1:].partition(" ")
    verb = verb if by == "you" else ph.third_person(verb)
    if by != "you" and rest.startswith("your "):
        rest = "their " + rest[5:]
    words = ["after", ph.ACTORS[by], verb, rest]
    if box.get("where") == "this_line":
        words.append("in this line")
    if box.get("during"):
        words.append(ph.DURING_WORDS[box["during"]])
    return " ".join(w for w in words if w) + ":"


def _restriction(mod: dict[str, Any]) -> str:
    """A `{ deny = ... }` modifier's sentence, composed from the parts of its template
    (phrasing.RESTRICTION_TEMPLATES): defaults are left out, the parts in their fixed order."""
    keys = {k: v for k, v in mod.items() if v != {**ph.DENY_DEFAULTS, "scope": "all"}.get(k)}
    deny, by, scope = keys["deny"], keys.get("by", "any"), keys.get("scope")
    line = ph.DENY_LINE if scope == "this_line" else ""
    if deny in ph.DENY_CARD_WORDS:
        words = [ph.deny_cards(keys), "cannot", ph.DENY_CARD_WORDS[deny], ph.DENY_BY[by]]
    elif deny in ("shift", "shift_from", "shift_to") and (deny, scope) in ph.DENY_SHIFT_WORDS:
        words = [ph.deny_cards({k: v for k, v in keys.items() if k != "scope"}), "cannot"]
        words.append(ph.DENY_SHIFT_WORDS[deny, scope])
    elif deny in ph.DENY_PLAY_WORDS and keys.keys() <= {"deny", "whose", "by", "scope"}:
        side = ph.DENY_SIDE.get(keys.get("whose", "any"), "")
        if side and by != "any":
            words = [ph.DENY_ACTORS[by], "cannot play cards", ph.DENY_PLAY_ACTIVE[deny], side, line]
        else:
            words = ["cards cannot", ph.DENY_PLAY_WORDS[deny], side, line, ph.DENY_BY[by]]
    else:
        return _other_restriction(keys)
    return " ".join(w for w in words if w)


def _other_restriction(keys: dict[str, Any]) -> str:
    """A restriction of a player (draw, refresh, discard, compile) or of protocols (rearrange)."""
    for words, fixed in ph.RESTRICTION_TEMPLATES:
        if "<" not in words and fixed == keys:
            return words
        rest = {k: v for k, v in keys.items() if k != "by"}
        if words.endswith("<rby>?") and fixed == rest:
            return " ".join(w for w in (words.removesuffix(" <rby>?"), ph.DENY_BY[keys.get("by", "any")]) if w)
    raise WriteError(f"no phrasing prints the restriction {keys}")


def _passive(mod: dict[str, Any]) -> str:
    if "deny" in mod:
        return _restriction(mod)
    for words, keys in ph.PASSIVES:
        amounts = {mod[k] if v == "n" else -mod[k] for k, v in keys.items() if v in ("n", "-n") and k in mod}
        if len(amounts) > 1 or set(keys) != set(mod):
            continue
        n = amounts.pop() if amounts else None
        if all(mod[k] == (n if v == "n" else -n if v == "-n" and n is not None else v) for k, v in keys.items()):
            return words.replace("<n>", str(n))
    raise WriteError(f"no phrasing prints the passive {mod}")


def _sentence_case(text: str) -> str:
    return re.sub(r"(^|[.:] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)


def write_box(box: dict[str, Any], protocol: str) -> str:
    """The printed text of an encoded box (keys as a card file writes them) of a card of `protocol`."""
    sentences = [_passive(m) for m in box.get("passive", [])]
    steps = _sentences(box.get("do", []))
    if box.get("when") in ph.FIRST_TRIGGERS:
        steps = [("first, " if i == 0 else "then, ") + s for i, s in enumerate(steps)]
    sentences += steps
    text = " ".join(_join(s.split()) + "." for s in sentences)
    if box.get("when"):
        text = _trigger(box) + " " + text
    text = _sentence_case(text)
    return text.replace("non-PROTOCOL", "non-" + protocol).replace("PROTOCOL", protocol)
