"""The boxes a run cannot play: a text the reader refused, or a text given with no steps (docs/cards.md,
"Printed text"). Collected over whole files, so a designer learns every problem in one pass, each
quoted as written; `protolab cards check` lists them and `sim.pool.load_pool` refuses a pool with any."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sim.cards.loader import BOXES, CardSpec

HINT = "write the box with do/passive (docs/cards.md)"


@dataclass(frozen=True)
class Refusal:
    """One box that cannot be played: where it is, its text as written, and why."""

    file: str
    card: str
    box: str
    text: str
    reason: str  # the reader's message (quoting the words as written), or why a text without steps is refused
    unread: tuple[str, ...]  # the words it could not read, as written (none when not one place of the text)
    read: bool  # refused by the reader (else: a text given with empty steps)

    @property
    def key(self) -> str:
        return f"{self.box}.text" if self.read else self.box

    def line(self) -> str:
        """One line naming the file, the card, the box, the text as written and what is wrong."""
        return f"{self.file}: {self.card}: key '{self.key}' \"{self.text}\": {self.reason}"

    def as_data(self) -> dict[str, object]:
        return {
            "file": self.file,
            "card": self.card,
            "box": self.box,
            "key": self.key,
            "text": self.text,
            "reason": self.reason,
            "unread": list(self.unread),
        }


_BLANK = (
    "the text has no 'do' or 'passive', so the engine would play it as blank; "
    "encode it (docs/cards.md) or remove the text"
)

_SHORT_BLANK = "text and no steps (would play as blank)"


def card_refusals(card: CardSpec) -> list[Refusal]:
    """The card's boxes that cannot be played, top to bottom."""
    out = []
    for name in BOXES:
        box = card.boxes.get(name)
        if box is None or box.encoded:
            continue
        reason = box.refused or _BLANK
        out.append(Refusal(card.source, card.name, name, box.text, reason, box.unread, bool(box.refused)))
    return out


def refusals(cards: Iterable[CardSpec]) -> list[Refusal]:
    return [r for c in cards for r in card_refusals(c)]


def refusal_message(found: list[Refusal]) -> str:
    """The error of a load that meets refused boxes, one line (sim: errors are printed as one): the
    box with its text for one box, else every box with its reason."""
    if len(found) == 1:
        return found[0].line() + (f"; {HINT}" if found[0].read else "")
    listed = "; ".join(f"{r.file}: {r.card}: key '{r.key}': {r.reason if r.read else _SHORT_BLANK}" for r in found)
    return (
        f"{len(found)} boxes cannot be played (fix each text or write the box with do/passive, docs/cards.md; "
        f"`protolab cards check FILE` quotes each text): {listed}"
    )
