"""A grammar check of printed card text, beyond the reader's round trip (issue 37).

The reader (sim/cards/reader.py) is forgiving: it reads "You may your opponent cannot compile on
their next turn." back as an optional step, and "Delete 1 card in a line where they have a higher
total value than you do." as Courage 1 with its "they" left pointing at nobody. A designer cannot
print either. This check names such faults in any box's text; every official box passes it
(tests/sim/cards/test_wording.py), and the balance search offers no knob whose text fails it
(sim/cards/knobs.py).

Two rules, each one a designer would apply reading the card aloud:
- "may" is followed by a verb in its plain form ("you may draw", "they may be played"), never by
  a subject ("you may your opponent ...") or a clause ("you may for every 2 cards ...");
- "they" and "their" name a player: some player ("your opponent", "a player", "both players")
  is named before them in the box. "they may be ..." and "they are ..." may speak of cards
  named before them ("When you play cards face-up, they may be played ...")."""

from __future__ import annotations

import re

from sim.cards import phrasing as ph

# The plain forms of the verbs the phrasing tables print ("~draw" -> "draw"), and "be" (passives).
VERBS = frozenset({w[1:] for p in ph.PHRASES for w in p.words.split() if w.startswith("~")} | {"be"})
PERSONS = ("opponent", "player", "players")
_WORD = re.compile(r"[a-z0-9'\-]+")


def wording_faults(text: str) -> list[str]:
    """What a reader would trip on in the printed text of one box ([] when it reads as sentences)."""
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    faults = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w == "may" and nxt not in VERBS:
            faults.append(f'"may {nxt}": "may" is not followed by a verb')
        if w in ("they", "their") and not any(x.split("'")[0] in PERSONS for x in words[:i]):
            if not (w == "they" and nxt in ("may", "are") and "cards" in words[:i]):
                faults.append(f'"{w}" names no player named before it')
    return faults
