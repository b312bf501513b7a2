"""The text of every card a run played, for the dashboard's card pages: read from the pool the run
names in its manifest (its sets, and its card files from the run folder's inputs/ copies), and,
when a card file changed a card, the official text beside it. Cards are data: nothing is compiled
from code, and a run whose copies cannot be read shows no text rather than a wrong one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.runs.run_pool import run_pool
from sim.pool import Pool


@dataclass(frozen=True)
class CardText:
    """One card as a designer reads it: its boxes' text in the run's pool, and the official text
    when a card file of the run changed it (None otherwise)."""

    name: str
    protocol: str
    set: str
    value: int
    text: tuple[str, str, str]  # top, middle, bottom
    official: tuple[str, str, str] | None  # the official text, when the run's card files changed the card
    official_value: int | None  # the official value, likewise
    source: str  # the file the run's text comes from


def _faces(pool: Pool) -> dict[str, tuple[int, tuple[str, str, str]]]:
    return {c.name: (c.value, (c.top, c.middle, c.bottom)) for c in pool.cards}


def card_texts(block: dict[str, Any]) -> tuple[dict[str, CardText], list[str]]:
    """(card name -> CardText, notes) for the pool of one run (or arm) as its provenance block
    (analysis/runs/provenance.py) names it; notes say why texts are missing (a card file without its
    inputs/ copy, a run.json without sets)."""
    rebuilt, why = run_pool(block)
    if rebuilt is None:
        return {}, [f"{why}; card texts are not shown"]
    official = _faces(rebuilt.official) if rebuilt.official is not None else {}
    out = {}
    for c in rebuilt.pool.cards:
        text, before = (c.top, c.middle, c.bottom), official.get(c.name)
        changed = before if before is not None and before != (c.value, text) else None
        out[c.name] = CardText(
            c.name,
            c.protocol,
            c.set,
            c.value,
            text,
            changed[1] if changed is not None else None,
            changed[0] if changed is not None else None,
            rebuilt.named.get(c.source, "official"),
        )
    return out, []
