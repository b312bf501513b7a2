"""Measured strength of a tier study (spec key `[strength]`, docs/analysis.md): each pair of adjacent
tiers played head to head in its own arm (analysis/studies/tiers/duels.py), read apart from the tiers' findings.
The upper tier's score counts a draw as half a win, as `protolab ladder` does, with a 95% Wilson
interval; each tier's label carries it (`search (88% vs greedy)`), and a measurement that contradicts
the listed order (an upper tier whose whole interval lies below 50%) is said in one warning line."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from analysis.pages.cells import ci, pct
from analysis.runs.open import Runs, peek_manifest
from analysis.stats.proportions import add_rate
from analysis.studies.tiers.duels import duels

COLUMNS = [
    "pair",
    "upper",
    "lower",
    "arm",
    "games",
    "upper_wins",
    "lower_wins",
    "draws",
    "win_rate",
    "win_rate_low",
    "win_rate_high",
]
HEADERS = ["pair (upper vs lower)", "games", "upper wins", "lower wins", "draws", "upper win rate (95% CI)"]
STATEMENT = (
    "each pair of adjacent tiers head to head (the upper tier's strategy against the lower's), seats "
    "swapped on paired seeds; the upper tier's win rate, draws counting half, with its 95% Wilson interval"
)

# the upper tier holds seat 0 of every even game of its arm and seat 1 of its seat-swapped partner
_COUNTS = """select count(*) as games, count(*) filter (where winner = game_in_matchup % 2) as upper_wins,
                    count(*) filter (where winner = 1 - game_in_matchup % 2) as lower_wins from games"""


def strength_table(path: str | Path, opener: Callable[[str], Runs]) -> pd.DataFrame:
    """One row per pair of adjacent tiers whose duel has finished shards, weakest pair first; no rows
    for a tier study without [strength]."""
    m = peek_manifest(path)
    played = m.arms_played if m is not None else set()
    rows = []
    for d in duels(m):
        if d.arm not in played:
            continue
        runs = opener(f"{path}#{d.arm}")
        try:
            counts = runs.sql(_COUNTS).iloc[0]
        finally:
            runs.close()
        games, up, low = int(counts["games"]), int(counts["upper_wins"]), int(counts["lower_wins"])
        rows.append(
            {
                "pair": f"{d.upper} vs {d.lower}",
                "upper": d.upper,
                "lower": d.lower,
                "arm": d.arm,
                "games": games,
                "upper_wins": up,
                "lower_wins": low,
                "draws": games - up - low,
                "score": up + (games - up - low) / 2,
            }
        )
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    return add_rate(pd.DataFrame(rows), wins="score", games="games")[COLUMNS]


def labels(tiers: list[str], table: pd.DataFrame) -> dict[str, str]:
    """Each tier with its measured strength: the upper tier of a pair by its win rate against the tier
    below (`search (88% vs greedy)`), the weakest tier by its rate against the one above it."""
    out = {t: t for t in tiers}
    for r in table.itertuples(index=False):
        out[r.upper] = f"{r.upper} ({r.win_rate:.0%} vs {r.lower})"
        if r.lower == tiers[0]:
            out[r.lower] = f"{r.lower} ({1 - r.win_rate:.0%} vs {r.upper})"
    return out


def order_warning(table: pd.DataFrame) -> str | None:
    """One line when a pair contradicts the listed order (the upper tier wins under 50%, its whole 95%
    interval below 50%), else None."""
    wrong = [r for r in table.itertuples(index=False) if r.win_rate < 0.5 and r.win_rate_high < 0.5]
    if not wrong:
        return None
    said = "; ".join(
        f"{r.upper} wins {pct(r.win_rate)} ({ci(r.win_rate_low, r.win_rate_high)}) of {r.games:,} games "
        f"against {r.lower}, listed below it"
        for r in wrong
    )
    return f"the listed order is not the measured one: {said}"


def rows(table: pd.DataFrame) -> list[list[str]]:
    """The table's cells as shown (terminal and page)."""
    return [
        [
            r.pair,
            f"{r.games:,}",
            f"{r.upper_wins:,}",
            f"{r.lower_wins:,}",
            f"{r.draws:,}",
            f"{pct(r.win_rate)} ({ci(r.win_rate_low, r.win_rate_high)})",
        ]
        for r in table.itertuples(index=False)
    ]


def meta(table: pd.DataFrame, tiers: list[str], games: int) -> dict:
    """meta.strength of the tier report: the games per pair, each tier's label, the order warning."""
    return {
        "games": games,
        "statement": STATEMENT,
        "labels": labels(tiers, table),
        "order_warning": order_warning(table),
    }
