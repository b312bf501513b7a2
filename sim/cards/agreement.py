"""Does each box's printed text read to exactly its encoding? A second, independent check of the
hand encodings (`protolab cards check`), and of the writer: an encoding written back to text
must read to the same encoding again.

"Exactly" is judged on the box's compiled card record and step records (sim/cards/loader.py
`compile_card`), so keys that restate a default (`covered = false`) are no difference. "Same
play" also sets aside the record fields the engine never reads for a step: a play from the top
of a deck is face-down whatever its `face` selector, and one made in each of some lines plays
one card per line whatever its count (sim/engine/plays.pxi, `verb_play`).
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import Any

from sim.cards import reader, writer
from sim.cards.compiler import compile_card
from sim.cards.loader import BOXES, Box, CardDataError, CardSpec, K, parse_box

_DECKS = (K["from"]["deck_top"], K["from"]["opponent_deck"])


VERDICTS = ("agree", "same play", "reader gap", "differs")


@dataclass
class BoxCheck:
    card: str
    box: str
    text: str
    encoding: dict[str, Any]
    read: dict[str, Any] | None  # what the text reads to (None: it does not read)
    error: str  # why it does not read, or ""
    agree: bool  # read to exactly the encoding
    same_play: bool  # read to an encoding that plays the same
    written: str  # the encoding written back to text
    round_trip: bool  # the written text reads to an encoding that plays the same
    same_text: bool  # the written text is the printed text (case and spacing aside)

    @property
    def verdict(self) -> str:
        """agree; same play (the records differ only where the engine does not read them);
        reader gap (the text does not read); differs (reads to other steps: check the encoding)."""
        if self.agree:
            return "agree"
        if self.same_play:
            return "same play"
        return "reader gap" if self.read is None else "differs"


def _compiled(card: CardSpec, box_name: str, keys: dict[str, Any]) -> Any:
    """The compiled record of `card` with one box replaced by `keys` (None: keys not valid)."""
    try:
        box = parse_box(card.source, card.name, box_name, keys)
    except CardDataError:
        return None
    boxes = {**card.boxes, box_name: box}
    probe = CardSpec(card.name, card.protocol, card.set, card.value, boxes, card.source)
    steps: list[dict[str, int]] = []
    return compile_card(probe, 0, steps), steps


def _encoding(box: Box) -> dict[str, Any]:
    data = copy.deepcopy(box.as_data())
    data.pop("text", None)
    return data


def _in_play(compiled: Any) -> Any:
    """The compiled form without the fields the engine does not read (see the module doc)."""
    if compiled is None:
        return None
    rec, steps = compiled
    out = []
    for st in steps:
        st = dict(st)
        if st["verb"] == K["verbs"]["play"] and st["source"] in _DECKS:
            st["face"] = 0
            if st["each"]:
                st["count_kind"], st["n"] = K["count"]["n"], 1
        out.append(st)
    return rec, out


def same_records(
    card: CardSpec, box_name: str, a: dict[str, Any], b: dict[str, Any] | None, play_only: bool = False
) -> bool:
    """Do encodings a and b of the box compile alike (in play only: alike where the engine reads)?"""
    if b is None:
        return False
    ca, cb = _compiled(card, box_name, a), _compiled(card, box_name, b)
    if play_only:
        ca, cb = _in_play(ca), _in_play(cb)
    return ca is not None and ca == cb


def check_box(card: CardSpec, box_name: str) -> BoxCheck:
    box = card.boxes[box_name]
    enc = _encoding(box)
    try:
        read, error = reader.read_box(box.text, card.protocol), ""
    except reader.ReadError as e:
        read, error = None, str(e)
    try:
        written = writer.write_box(enc, card.protocol)
        back = reader.read_box(written, card.protocol)
    except (writer.WriteError, reader.ReadError) as e:
        written, back = f"(cannot write: {e})", None
    return BoxCheck(
        card.name,
        box_name,
        box.text,
        enc,
        read,
        error,
        same_records(card, box_name, enc, read),
        same_records(card, box_name, enc, read, True),
        written,
        same_records(card, box_name, enc, back, True),
        reader.normal_text(written) == reader.normal_text(box.text),
    )


def check_cards(cards: list[CardSpec]) -> list[BoxCheck]:
    return [check_box(c, b) for c in cards for b in BOXES if b in c.boxes and c.boxes[b].text]


def read_all_seconds(cards: list[CardSpec]) -> float:
    """Seconds to read every box text of these cards (the reader's speed figure)."""
    t0 = time.perf_counter()
    for c in cards:
        for b in c.boxes.values():
            try:
                reader.read_box(b.text, c.protocol)
            except reader.ReadError:
                pass
    return time.perf_counter() - t0
