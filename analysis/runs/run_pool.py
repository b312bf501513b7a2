"""The card pool a run (or arm) played, rebuilt from what its manifest names: its sets, and its card
files from the run folder's inputs/ copies (each checked against the checksum run.json records),
with the official pool of those sets beside it when card files changed it. Read by the dashboard's
card texts (analysis/runs/card_texts.py) and the notes on choices a variant changes
(analysis/studies/balance/rule_note.py)."""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.runs.runfolder import RunDirError, load_inputs
from sim.cards.loader import CardDataError
from sim.pool import Pool, load_pool


@dataclass(frozen=True)
class RunPool:
    """A run's pool; the official pool of its sets when card files changed it (else None); each
    written copy's path -> the run's name for the file (what a card's `source` names)."""

    pool: Pool
    official: Pool | None
    named: dict[str, str]


def _pool_with_files(sets: list[str], files: list[tuple[str, str]]) -> tuple[Pool, dict[str, str]]:
    """The pool of `sets` with the card files (path, text) applied in order, as the run built it."""
    with tempfile.TemporaryDirectory(prefix="protolab-run-pool-") as d:
        named = {}
        for i, (path, text) in enumerate(files):
            p = Path(d) / f"{i:02d}-{Path(path).name}"
            p.write_text(text, encoding="utf-8")
            named[str(p)] = path
        return load_pool(sets, [Path(p) for p in named], require_encoded=False), named


def run_pool(block: dict[str, Any]) -> tuple[RunPool | None, str]:
    """(the pool, "") of one run or arm as its provenance block (analysis/runs/provenance.py) names it;
    (None, why) when it cannot be rebuilt (a run.json without sets, a card file without its inputs/
    copy, a card file the loader refuses)."""
    sets, path = [str(s) for s in block.get("sets") or []], block.get("path")
    if not sets or not path:
        return None, f"{path or 'the run'}: run.json names no sets"
    try:
        inputs = load_inputs(path) if block.get("card_files") else {}
        files = []
        for c in block.get("card_files") or []:
            text = inputs.get(c.get("path"))
            if text is None or (c.get("sha256") and hashlib.sha256(text.encode()).hexdigest() != c["sha256"]):
                return None, f"{path}: no copy of card file {c.get('path')} in inputs/"
            files.append((str(c.get("path")), text))
        pool, named = _pool_with_files(sets, files)
        official = load_pool(sets, require_encoded=False) if files else None
    except (RunDirError, CardDataError, OSError) as e:
        return None, str(e)
    return RunPool(pool, official, named), ""
