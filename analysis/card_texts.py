"""The text of every card a run played, for the dashboard's card pages: read from the pool the run
names in its manifest (its sets, and its card files from the run folder's inputs/ copies), and,
when a card file changed a card, the official text beside it. Cards are data: nothing is compiled
from code, and a run whose copies cannot be read shows no text rather than a wrong one."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.runfolder import RunDirError, load_inputs
from sim.cards.loader import CardDataError
from sim.pool import Pool, load_pool


@dataclass(frozen=True)
class CardText:
    """One card as a designer reads it: its boxes' text in the run's pool, and the official text
    when a card file of the run changed it (None otherwise)."""

    name: str
    protocol: str
    set: str
    value: int
    text: tuple[str, str, str]                   # top, middle, bottom
    official: tuple[str, str, str] | None        # the official text, when the run's card files changed the card
    official_value: int | None                   # the official value, likewise
    source: str                                  # the file the run's text comes from


def _faces(pool: Pool) -> dict[str, tuple[int, tuple[str, str, str]]]:
    return {c.name: (c.value, (c.top, c.middle, c.bottom)) for c in pool.cards}


def _pool_with_files(sets: list[str], files: list[tuple[str, str]]) -> tuple[Pool, dict[str, str]]:
    """The pool of `sets` with the card files (path, text) applied in order, as the run built it,
    and each written copy's path -> the run's name for the file (what a card's source names)."""
    with tempfile.TemporaryDirectory(prefix="protolab-card-texts-") as d:
        named = {}
        for i, (path, text) in enumerate(files):
            p = Path(d) / f"{i:02d}-{Path(path).name}"
            p.write_text(text, encoding="utf-8")
            named[str(p)] = path
        return load_pool(sets, [Path(p) for p in named], require_encoded=False), named


def card_texts(block: dict[str, Any]) -> tuple[dict[str, CardText], list[str]]:
    """(card name -> CardText, notes) for the pool of one run (or arm) as its provenance block
    (analysis/provenance.py) names it; notes say why texts are missing (a card file without its
    inputs/ copy, a run.json without sets)."""
    sets, path = [str(s) for s in block.get("sets") or []], block.get("path")
    if not sets or not path:
        return {}, [f"{path or 'the run'}: run.json names no sets; card texts are not shown"]
    try:
        inputs = load_inputs(path) if block.get("card_files") else {}
        files = []
        for c in block.get("card_files") or []:
            text = inputs.get(c.get("path"))
            if text is None or (c.get("sha256") and hashlib.sha256(text.encode()).hexdigest() != c["sha256"]):
                return {}, [f"{path}: no copy of card file {c.get('path')} in inputs/; card texts are not shown"]
            files.append((str(c.get("path")), text))
        pool, named = _pool_with_files(sets, files)
        official = _faces(load_pool(sets, require_encoded=False)) if files else {}
    except (RunDirError, CardDataError, OSError) as e:
        return {}, [f"card texts are not shown: {e}"]
    out = {}
    for c in pool.cards:
        text, before = (c.top, c.middle, c.bottom), official.get(c.name)
        changed = before is not None and before != (c.value, text)
        out[c.name] = CardText(c.name, c.protocol, c.set, c.value, text, before[1] if changed else None,
                               before[0] if changed else None, named.get(c.source, "official"))
    return out, []
