"""The words of a quantity (`per = { ... }`, `count = { ... }`, docs/cards.md "Quantities"), for the
writer: what "for each ..." and "the number of ..." name. The reader reads the same words through
the grammar's `counted` rule (sim/cards/grammar.py); every table the loader accepts is printed.
"""

from __future__ import annotations

from typing import Any

_ZONES = {"hand": ("hand", "hands"), "trash": ("trash", "trashes"), "deck": ("deck", "decks")}
_ADJECTIVES = (("other", True, "other"), ("face", "up", "face-up"), ("face", "down", "face-down"))
_COVERED = {True: "covered", False: "uncovered"}


def _owner(whose: str, who: str) -> str:
    """A side as printed; "their" when the step's subject is the opponent (as in selections)."""
    return {"you": "your", "opponent": "their" if who == "opponent" else "your opponent's"}[whose]


def counted_words(table: dict[str, Any], each: bool, who: str = "you") -> str:
    """The counted things: after "for each" (`each`: "face-down card", "of your cards") or after
    "the number of" ("face-down cards", "your cards"). `who` is the step's subject."""
    of = table.get("of", "cards")
    whose = table.get("whose", "you" if of in _ZONES else "any")
    if of in _ZONES:
        place = "both players' " + _ZONES[of][1] if whose == "any" else _owner(whose, who) + " " + _ZONES[of][0]
        return ("card" if each else "cards") + " in " + place
    if of == "lines":
        return ("other " if table.get("line") == "other" else "") + ("line" if each else "lines")
    poss = "" if whose == "any" else _owner(whose, who)
    plural = not each or bool(poss)
    if of in ("protocols", "compiled_protocols"):
        words = ["compiled"] if of == "compiled_protocols" else []
        words.append("protocols" if plural else "protocol")
    else:
        words = _field_card_words(table, plural)
    if poss:
        words.insert(0, ("of " if each else "") + poss)
    return " ".join(words)


def _field_card_words(table: dict[str, Any], plural: bool) -> list[str]:
    """Counted field cards: "other face-down covered PROTOCOL cards in this line"."""
    words = [w for key, value, w in _ADJECTIVES if table.get(key) == value]
    if table.get("covered", "any") in _COVERED:
        words.append(_COVERED[table["covered"]])
    if "protocol" in table:
        words.append("PROTOCOL" if table["protocol"] == "same" else "non-PROTOCOL")
    words.append("cards" if plural else "card")
    return words + {"this": ["in this line"], "other": ["in other lines"]}.get(table.get("line", "any"), [])
