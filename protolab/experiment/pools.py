"""The pool of a job: card sets plus card files carried as text, so that a worker on any machine
builds the same pool. Shared by every feature that sends games to workers (training, the balance
search, `protolab power`); a run's arms build theirs from the spec instead (run/plan.py)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from sim.pool import Pool, load_pool


@functools.lru_cache(maxsize=64)
def pool_of(sets: tuple[str, ...], cards: tuple[tuple[str, str], ...]) -> Pool:
    """The pool of a job, built once per worker process for each distinct set of files."""
    with tempfile.TemporaryDirectory(prefix="protolab-tune-") as tmp:
        paths = []
        for i, (name, text) in enumerate(cards):
            path = Path(tmp) / f"{i:02d}-{Path(name).name}"
            path.write_text(text)
            paths.append(path)
        return load_pool(sets, cards=paths)
