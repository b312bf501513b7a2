"""Each option of a decision as the play page groups it: the card it concerns (its name as the
deciding seat may see it, None for a card hidden from them), where that card is, and the option's
words without the card's name ("face-down, left"), so the page shows one card with its text and
its options under it instead of "Water 0 down left" per button. Card instance numbers are never
sent: they would tell which card a hidden one is."""

from __future__ import annotations

from typing import Any

from sim.engine._core import constants, unpack_play

from sim.describe import DK, LINES, SEAT_NAMES, Namer
from sim.enums import Zone

K = constants()
OPT_REFRESH, OPT_DONE = K["opt_refresh"], K["opt_done"]
PLAYS = ("action", "play")
CARD_KINDS = ("discard_more", "target", "each_card", "hand", "discard", "deck", "trash")
ZONE_WORDS = {Zone.HAND: "hand", Zone.DECK: "deck", Zone.TRASH: "trash"}


def card_of(word: str, value: int) -> int | None:
    """The card instance an option of this kind concerns, None for one about no card."""
    if word in PLAYS and value != OPT_REFRESH:
        return unpack_play(value)[0]
    if word in CARD_KINDS and not (word == "discard_more" and value == OPT_DONE):
        return value
    return None


def where(nm: Namer, c: int) -> str:
    """Where card `c` is, in the viewer's words ("B's left line, top", "your hand")."""
    s, viewer = nm.state, nm.viewer
    zone = s["zone"][c]
    if zone == Zone.FIELD:
        for p in (0, 1):
            for line, stack in enumerate(s["stacks"][p]):
                if c in stack:
                    below = len(stack) - 1 - stack.index(c)
                    place = "top" if below == 0 else f"covered by {below}"
                    return f"{_whose(p, viewer)} {LINES[line]} line, {place}"
    owner = s["owner"][c]
    return f"{_whose(owner, viewer)} {ZONE_WORDS.get(zone, 'cards')}"


def _whose(p: int, viewer: int | None) -> str:
    return "your" if p == viewer else f"{SEAT_NAMES[p]}'s"


def short(nm: Namer, word: str, value: int, c: int | None) -> str:
    """The option's words under its card: how and where a play puts it, else where the card is."""
    if c is None:
        return ""
    if word in PLAYS:
        _, line, up, other_side = unpack_play(value)
        side = f" on {SEAT_NAMES[1 - nm.viewer]}'s side" if other_side and nm.viewer is not None else ""
        return f"{'face-up' if up else 'face-down'}, {LINES[line]}{side}"
    return where(nm, c)


def grouped(nm: Namer, kind: int, values: list[int], labels: list[str]) -> list[dict[str, Any]]:
    """GET /api/state's `options`: per option its index, full label, card (None: none, or hidden
    from the viewer), whether that card is hidden, and the words shown under the card."""
    word = DK[kind]
    out = []
    for i, (value, label) in enumerate(zip(values, labels, strict=True)):
        c = card_of(word, value)
        name = None if c is None else nm.card(c)
        hidden = c is not None and name != nm.pool.cards[nm.state["cdef"][c]].name
        out.append(
            {
                "option": i,
                "label": label,
                "card": None if hidden else name,
                "hidden_card": hidden,
                "short": short(nm, word, value, c),
            }
        )
    return out
