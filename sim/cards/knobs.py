"""The change space of a balance search: the numbers a card's data encodes and the keywords that can
be switched, as knobs a search may turn. Read from the cards themselves (any pool, variant or new
protocol brings its own knobs), and turned into a variant file `protolab run --cards` accepts, with
the changed boxes' printed text rewritten from their new encoding."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sim.cards import vocabulary as vocab
from sim.cards.agreement import same_records
from sim.cards.loader import AMOUNT_PASSIVES, BOXES, KEYWORDS, CardDataError, CardSpec
from sim.cards.reader import ReadError, read_box
from sim.cards.wording import wording_faults
from sim.cards.writer import WriteError, write_box

# The kinds of knob, declared once: every other list of kinds (specs, docs, errors) derives from it.
KINDS: dict[str, str] = {
    "value": "the card's value, kept within the value range",
    "count": "a verb's number (draw 2, delete 1, ...), kept at 1 or more",
    "amount": "a passive's number (+1 to this line's value, ...), never 0 and never changing sign",
    "may": 'whether a step is optional ("You may ..."): switched on or off',
    "whose": "whose cards a step acts on (any, yours, your opponent's), on steps that choose cards",
}
VALUES = (0, 6)  # the printed values of the game's cards
COUNT_RANGE = (1, 30)  # what the loader accepts for a verb's count

WHOSE = ("any", "you", "opponent")  # "any" is written by leaving the key out
Path = tuple[str | int, ...]  # where a knob sits in the card's data, e.g. ("bottom", "do", 0, "discard")


@dataclass(frozen=True)
class Knob:
    """One turn of one knob: the card, the kind, where it sits, the number (or switch) before and after."""

    card: str
    kind: str
    path: Path
    old: int | bool | str
    new: int | bool | str

    @property
    def key(self) -> str:
        """The key as a card file spells it: `value`, `bottom.do[0].discard`, `top.passive[0].line_value`."""
        out = ""
        for part in self.path:
            out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
        return out

    def label(self) -> str:
        return f"{self.card} {self.key}: {json.dumps(self.old)} -> {json.dumps(self.new)}"


def _steps(steps: list[dict[str, Any]], at: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every step of a box with its path, including the steps inside `either` branches."""
    for i, step in enumerate(steps):
        yield at + (i,), step
        if "either" in step:
            for b, branch in enumerate(step["either"]):
                yield from _steps(branch, at + (i, "either", b))


def _turns(old: int, steps: Iterable[int], lo: int, hi: int) -> Iterator[int]:
    for s in sorted(set(steps)):
        for new in (old - s, old + s):
            if lo <= new <= hi:
                yield new


def _step_knobs(name: str, path: Path, step: dict[str, Any], kinds: set[str], steps: tuple[int, ...]) -> list[Knob]:
    verb = next(k for k in step if k in KEYWORDS)
    out = []
    count = step[verb]
    counted = vocab.engine_verb(verb, step.get("from")).value == vocab.COUNT
    if "count" in kinds and counted and isinstance(count, int) and not isinstance(count, bool):
        out += [Knob(name, "count", path + (verb,), count, n) for n in _turns(count, steps, *COUNT_RANGE)]
    if "may" in kinds and verb != "either":
        may = bool(step.get("may", False))
        out.append(Knob(name, "may", path + ("may",), may, not may))
    if "whose" in kinds and vocab.engine_verb(verb, step.get("from")).on_field:
        whose = step.get("whose", "any")
        out += [Knob(name, "whose", path + ("whose",), whose, w) for w in WHOSE if w != whose]
    return out


def _passive_knobs(name: str, path: Path, mod: dict[str, Any], steps: tuple[int, ...]) -> list[Knob]:
    out = []
    for k in AMOUNT_PASSIVES:
        old = mod.get(k)
        if isinstance(old, int) and not isinstance(old, bool) and old != 0:
            lo, hi = (1, 30) if old > 0 else (-30, -1)
            out += [Knob(name, "amount", path + (k,), old, n) for n in _turns(old, steps, lo, hi)]
    return out


def card_knobs(
    card: CardSpec,
    kinds: Iterable[str] = tuple(KINDS),
    steps: Iterable[int] = (1,),
    values: tuple[int, int] = VALUES,
    printable: bool = True,
) -> list[Knob]:
    """Every single turn of every knob of `card`, in a fixed order (value, then box by box).

    With `printable` (the default) a turn whose box has no printed wording (the writer knows no
    phrasing for, say, drawing 2 from the opponent's deck), whose wording fails the grammar check
    (sim/cards/wording.py), or which makes a card whose only effect harms its owner out of one that
    was not (`harms_only`), is left out: a search should propose only changes a designer can print."""
    kinds, steps = set(kinds), tuple(steps)
    _check_turns(kinds, steps)
    data = card.as_data()
    out = []
    if "value" in kinds:
        out += [Knob(card.name, "value", ("value",), card.value, n) for n in _turns(card.value, steps, *values)]
    for box in BOXES:
        out += _box_knobs(card.name, box, data.get(box, {}), kinds, steps)
    return [k for k in out if _prints(card, k)] if printable else out


def _check_turns(kinds: set[str], steps: tuple[int, ...]) -> None:
    """The kinds of knob asked for exist, and each step is a whole number 1 or more."""
    unknown = kinds - set(KINDS)
    if unknown:
        raise CardDataError(f"unknown kind of knob {sorted(unknown)[0]!r}; expected one of {', '.join(KINDS)}")
    if not steps or any(isinstance(s, bool) or not isinstance(s, int) or s < 1 for s in steps):
        raise CardDataError(f"knob steps must be whole numbers 1 or more, got {list(steps)!r}")


def _box_knobs(name: str, box: str, raw: dict[str, Any], kinds: set[str], steps: tuple[int, ...]) -> list[Knob]:
    """The turns of one box's steps, then of its modifiers' amounts."""
    out = []
    for path, step in _steps(raw.get("do", []), (box, "do")):
        out += _step_knobs(name, path, step, kinds, steps)
    if "amount" in kinds:
        for i, mod in enumerate(raw.get("passive", [])):
            out += _passive_knobs(name, (box, "passive", i), mod, steps)
    return out


def _prints(card: CardSpec, knob: Knob) -> bool:
    try:
        turned(card, [knob])
    except CardDataError:
        return False
    return not card_faults(card, [knob])


# -- the shipped constraints (issue 37) ------------------------------------------------------------

_REMOVES = ("delete", "return")  # verbs that take a field card away from its owner


def _harms_owner(step: dict[str, Any]) -> bool:
    """A step the card's owner must take (not "may") that only costs them: deleting or returning
    one of their own field cards, or discarding from their own hand."""
    if step.get("may") or "either" in step:
        return False
    actor = step.get("who", "you")
    verb = next((k for k in step if k in KEYWORDS), "")
    if verb in _REMOVES:
        # `whose` is said from the actor's side: "your opponent deletes 1 of their cards" is whose "you"
        return step.get("whose", "any") == ("you" if actor == "you" else "opponent")
    return verb == "discard" and actor == "you" and step.get("from") is None and step.get("into") is None


def harms_only(data: dict[str, Any]) -> bool:
    """Whether every effect of a card (as `CardSpec.as_data()` or a turned copy) harms its owner:
    it has steps, no passive, and each step (`_harms_owner`) costs its owner."""
    steps = [s for box in BOXES for _, s in _steps(data.get(box, {}).get("do", []), (box, "do"))]
    passives = [p for box in BOXES for p in data.get(box, {}).get("passive", [])]
    return bool(steps) and not passives and all(_harms_owner(s) for s in steps)


def turned_data(card: CardSpec, knobs: Iterable[Knob]) -> dict[str, Any]:
    """The card's whole data with `knobs` turned (no text rewritten)."""
    new = copy.deepcopy(card.as_data())
    for knob in knobs:
        _set(new, knob.path, knob.new)
    return new


def card_faults(card: CardSpec, knobs: Iterable[Knob]) -> list[str]:
    """The shipped constraints one turned card breaks: no card whose only effect harms its owner,
    unless the official one already does."""
    if harms_only(turned_data(card, knobs)) and not harms_only(card.as_data()):
        return [f"{card.name} would only harm its owner"]
    return []


def candidate_faults(specs: Iterable[CardSpec], knobs: Iterable[Knob]) -> list[str]:
    """The shipped constraints a set of knob turns over a pool's cards (`specs`) breaks: each turned
    card's (`card_faults`), and two cards of one protocol with the same value where that protocol's
    official cards have six distinct values."""
    specs, knobs = list(specs), list(knobs)
    by_name = {c.name: c for c in specs}
    faults: list[str] = []
    for name in dict.fromkeys(k.card for k in knobs):
        faults += card_faults(by_name[name], [k for k in knobs if k.card == name])
    return faults + _value_faults(specs, knobs, by_name)


def _value_faults(specs: list[CardSpec], knobs: list[Knob], by_name: dict[str, CardSpec]) -> list[str]:
    """Two cards of one protocol given the same value, where its cards' values were distinct."""
    value = {c.name: c.value for c in specs}
    value.update({k.card: k.new for k in knobs if k.kind == "value" and isinstance(k.new, int)})
    faults = []
    for proto in dict.fromkeys(by_name[k.card].protocol for k in knobs if k.kind == "value"):
        cards = [c for c in specs if c.protocol == proto]
        if len({c.value for c in cards}) == len(cards) and len({value[c.name] for c in cards}) < len(cards):
            faults.append(f"two {proto} cards would have the same value")
    return faults


def _set(data: Any, path: Path, new: int | bool | str) -> None:
    for part in path[:-1]:
        data = data[part]
    if (path[-1], new) in (("may", False), ("whose", "any")):
        data.pop(path[-1], None)  # the default is written by leaving the key out
    else:
        data[path[-1]] = new


def turned(card: CardSpec, knobs: Iterable[Knob]) -> dict[str, Any]:
    """The variant table of `card` with `knobs` turned: `replaces`, the new value if it changed, and
    each changed box's keys with its printed text written from the new encoding."""
    data = card.as_data()
    new = copy.deepcopy(data)
    for knob in knobs:
        if knob.card != card.name:
            raise CardDataError(f"knob {knob.label()!r} does not belong to card {card.name!r}")
        _set(new, knob.path, knob.new)
    table: dict[str, Any] = {"replaces": card.name}
    if new["value"] != data["value"]:
        table["value"] = new["value"]
    for box in BOXES:
        if box in new and new[box] != data.get(box):
            changed = {k: v for k, v in new[box].items() if k != "text" and v != data[box].get(k)}
            changed["text"] = _printed(card, box, new[box])
            table[box] = changed
    return table


def _printed(card: CardSpec, box: str, data: dict[str, Any]) -> str:
    """The box's printed text, written from its encoding and read back to the same play: a
    wording that would read as something else is no wording."""
    encoding = {k: v for k, v in data.items() if k != "text"}
    try:
        text = write_box(encoding, card.protocol)
        back = read_box(text, card.protocol)
    except (WriteError, ReadError) as e:
        raise CardDataError(f"{card.name}: key '{box}': the turned box cannot be printed ({e})") from None
    faults = wording_faults(text)
    if faults:
        raise CardDataError(
            f"{card.name}: key '{box}': the turned box cannot be printed (its wording {text!r} does not read as "
            f"sentences: {'; '.join(faults)})"
        )
    if not same_records(card, box, encoding, back, True):
        raise CardDataError(
            f"{card.name}: key '{box}': the turned box cannot be printed (its wording {text!r} reads as another effect)"
        )
    return text


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def toml_value(v: Any) -> str:
    """One TOML value, inline (strings as JSON-escaped basic strings, which TOML reads alike)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        pairs = (f"{k if _BARE.match(k) else json.dumps(k)} = {toml_value(x)}" for k, x in v.items())
        return "{ " + ", ".join(pairs) + " }"
    raise TypeError(f"no TOML form for {type(v).__name__}")


def variant_toml(name: str, tables: Iterable[dict[str, Any]], note: str = "") -> str:
    """A variant file (docs/cards.md) replacing one card per table from `turned`."""
    lines = [f"# {line}" for line in note.splitlines()] + [f"variant = {toml_value(name)}"]
    for table in tables:
        lines += ["", "[[cards]]"]
        for key, v in table.items():
            if isinstance(v, dict):
                lines += [f"{key}.{k} = {toml_value(x)}" for k, x in v.items()]
            else:
                lines.append(f"{key} = {toml_value(v)}")
    return "\n".join(lines) + "\n"
