"""Seats built from specs: where strategy and draft specs become engine seats, once, before any
game is played. The batch layer below (sim.batch) takes built seats and never sees a spec."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sim.engine._core import SeatConfig

from sim.batch import play_columns
from sim.pool import Pool
from strategies.spec import install_draft, make_seat, parse_draft

Trios = list[list[str]]


@dataclass(frozen=True)
class Seats:
    """The two engine seats of a batch, each with its strategy and draft installed; `trios`: the
    matchup a `fixed` draft names (None otherwise)."""

    configs: tuple[SeatConfig, SeatConfig]
    trios: Trios | None


def make_seats(
    pool: Pool,
    strategies: Sequence[str],
    draft: str | Sequence[str] = "random",
    draft_read: Callable[[str], str] | None = None,
) -> Seats:
    """The engine seats for these strategy specs, each drafting by its draft strategy (one for
    both seats, or one per seat); `draft_read(path)` gives the text of a draft table it names (a
    run's copy). The one place seats are built, so a replay plays exactly what the batch played."""
    configs = tuple(make_seat(s, pool) for s in strategies)
    trios = None
    for seat, text in zip(configs, (draft, draft) if isinstance(draft, str) else draft, strict=True):
        kind, payload = parse_draft(text, pool, draft_read)
        if kind == "fixed":
            assert isinstance(payload, list)  # the two trios' protocol names (spec.parse_draft)
            trios = payload
        install_draft(seat, kind, payload)
    return Seats(configs, trios)


def play_games(
    pool: Pool,
    seeds: Sequence[int] | np.ndarray,
    strategies: Sequence[str] = ("random", "random"),
    draft: str | Sequence[str] = "random",
    draft_read: Callable[[str], str] | None = None,
    protocols: Sequence[Sequence[Sequence[str]]] | None = None,
    **options,
) -> dict[str, np.ndarray]:
    """One game per seed between these strategy specs, at C speed with the GIL released.

    Args:
        pool: the card pool (`sim.pool.load_pool`).
        seeds: one game per seed.
        strategies: seat 0's and seat 1's strategy specs (docs/strategies.md: "greedy",
            "search:sims=50,depth=2", "greedy+avoid:Fire 1", a user's "pkg.mod:Class", ...).
        draft: the draft strategy of both seats, or one per seat ("random", "fixed:A,B,C/D,E,F",
            "table:FILE", "fitted:FILE"); a `fixed` draft plays its trios unless `protocols` names matchups.
        draft_read: gives the text of a draft table a draft names (a run's copy); None reads the file.
        protocols: matchups ((a, b, c), (d, e, f)) used round-robin by game index instead of drafts.
        **options: `turn_cap`, `first_player`, `check_invariants`, `events` (sim.batch.play_columns).

    Returns:
        Numpy columns, one row per game (the columns of sim.batch.play_columns).

    Example:
        >>> from sim.pool import load_pool
        >>> cols = play_games(load_pool(["Main 1"]), range(4), ("greedy", "greedy"))
        >>> len(cols["winner"]), sorted(set(cols["end_reason"].tolist())) != []
        (4, True)
    """
    seats = make_seats(pool, strategies, draft, draft_read)
    if seats.trios is not None and not protocols:
        protocols = [seats.trios]
    return play_columns(pool, seeds, seats.configs, protocols=protocols, **options)
