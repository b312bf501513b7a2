"""The pool of a job: card sets plus card files carried as text, so that a worker on any machine
builds the same pool. Shared by every feature that sends games to workers (training, the balance
search, `protolab power`); a run's arms build theirs from the spec instead (run/plan.py)."""

from __future__ import annotations

import contextlib
import functools
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from protolab.experiment import stopnote
from sim.pool import Pool, load_pool


@contextlib.contextmanager
def written(files: Sequence[tuple[str, str]], prefix: str) -> Iterator[list[Path]]:
    """The card files (name, text) as paths the loader reads, for as long as the block runs: in a
    private temporary folder removed on every way out (the block's end, an exception, a stop cut
    short by stopnote.StopDeadline, whose os._exit runs no `finally`); none at all without files,
    so an official pool leaves nothing behind even where its process is killed mid-load."""
    if not files:
        yield []
        return
    folder = Path(tempfile.mkdtemp(prefix=prefix))

    def remove() -> None:
        shutil.rmtree(folder, ignore_errors=True)

    stopnote.BEFORE_EXIT.append(remove)
    try:
        paths = []
        for i, (name, text) in enumerate(files):
            path = folder / f"{i:02d}-{Path(name).name}"
            path.write_text(text, encoding="utf-8")
            paths.append(path)
        yield paths
    finally:
        remove()
        stopnote.BEFORE_EXIT.remove(remove)


@functools.lru_cache(maxsize=64)
def pool_of(sets: tuple[str, ...], cards: tuple[tuple[str, str], ...]) -> Pool:
    """The pool of a job, built once per worker process for each distinct set of files."""
    with written(cards, "protolab-tune-") as paths:
        return load_pool(sets, cards=paths)
