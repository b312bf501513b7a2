"""Pick metrics of a run that drafted (docs/analysis.md, "Draft"): how often each protocol is picked,
how early, how the seat that picked it fared by pick position, and whether picking first pays.

They read the games' `picks` column (analysis/runs/schema.py PICKS_FIELD: the six protocols in pick order,
A B B A A B with A the first player); games that did not draft (fixed trios, seat-swapped replays)
have no picks and are left out. Win rates count decided games only, as everywhere (queries.py).
The counts come from the `drafted` and `picks` tallies (analysis/runs/tallies.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.pages.cells import ci, num, pct, table
from analysis.runs.open import Runs
from analysis.runs.schema import PICKS_FIELD
from analysis.stats.proportions import add_rate
from analysis.studies.balance.queries import tally

POSITIONS = (1, 2, 3, 4, 5, 6)


def has_picks(runs: Runs) -> bool:
    """The run records pick order and at least one of its games drafted."""

    def q() -> bool:
        if not runs.has_tallies and PICKS_FIELD.name not in set(runs.sql("select * from games limit 0").columns):
            return False  # games from before the picks column
        return bool(tally(runs, "drafted")["n"].sum())

    return runs.memo("has_picks", q)


def pick_metrics(runs: Runs) -> pd.DataFrame:
    """Per protocol: times picked, pick rate (share of drafted games it was picked in), average pick
    position (1-6), win rate of the seat that picked it (decided games, 95% Wilson), and its picks,
    decided games and win rate at each pick position (`picks_pN`, `games_pN`, `win_rate_pN`)."""
    t = tally(runs, "picks").astype({"pos": np.int64})
    drafted = np.int64(tally(runs, "drafted")["n"].sum())
    t["pos_n"] = t["pos"] * t["n"]
    g = t.groupby("protocol")
    df = g[["n", "pos_n", "games", "wins"]].sum().rename(columns={"n": "picks"})
    df["pick_rate"] = df["picks"].to_numpy(np.int64) / drafted
    df["avg_position"] = df.pop("pos_n").to_numpy(np.int64) / df["picks"].to_numpy(np.int64)
    by = t.pivot_table(index="protocol", columns="pos", values=["n", "games", "wins"], aggfunc="sum", fill_value=0)
    for p in POSITIONS:
        for name, col in (("picks", "n"), ("games", "games"), ("wins", "wins")):
            df[f"{name}_p{p}"] = by[(col, p)].astype(np.int64) if (col, p) in by.columns else np.int64(0)
    df = df.reset_index()[
        [
            "protocol",
            "picks",
            "pick_rate",
            "avg_position",
            "games",
            "wins",
            *(f"{n}_p{p}" for p in POSITIONS for n in ("picks", "games", "wins")),
        ]
    ]
    df = df.sort_values(["pick_rate", "avg_position", "protocol"], ascending=[False, True, True]).reset_index(drop=True)
    add_rate(df, "wins", "games")
    for p in POSITIONS:
        add_rate(df, f"wins_p{p}", f"games_p{p}", f"win_rate_p{p}")
    return df


def first_pick(runs: Runs) -> pd.DataFrame:
    """First-pick advantage over drafted games: the win rate (decided games, 95% Wilson) of the seat
    that picked first (A, who also takes the first turn) and of the seat that picked second."""
    n = tally(runs, "drafted").set_index("won_by")["n"]
    decided = int(n.drop("draw", errors="ignore").sum())
    df = pd.DataFrame(
        {
            "picker": ["first", "second"],
            "games": [decided, decided],
            "wins": [int(n.get("first", 0)), int(n.get("second", 0))],
        }
    )
    return add_rate(df, "wins", "games")


def report_picks(runs: Runs) -> pd.DataFrame:
    """`pick_metrics`, or an empty table when the run did not draft (the report's `draft_picks`)."""
    return pick_metrics(runs) if has_picks(runs) else pd.DataFrame()


def report_first_pick(runs: Runs) -> pd.DataFrame:
    """`first_pick`, or an empty table when the run did not draft (the report's `draft_first_pick`)."""
    return first_pick(runs) if has_picks(runs) else pd.DataFrame()


def print_draft(picks: pd.DataFrame, first: pd.DataFrame, console) -> None:
    """The report's "Draft" section: one row per protocol, then the first-pick advantage."""

    def rate(r: pd.Series, p: int) -> str:
        return pct(r[f"win_rate_p{p}"]) if r[f"games_p{p}"] else ""

    rows = [
        [
            r["protocol"],
            pct(r["pick_rate"]),
            f"{r['avg_position']:.2f}",
            pct(r["win_rate"]),
            ci(r["win_rate_low"], r["win_rate_high"]),
            num(r["games"]),
            *[rate(r, p) for p in POSITIONS],
        ]
        for _, r in picks.iterrows()
    ]
    console.print(
        table(
            "Draft: picks per protocol",
            ["protocol", "pick rate", "avg pick", "picker wins", "95% CI", "games", *[f"won @{p}" for p in POSITIONS]],
            rows,
            caption="pick rate: share of drafted games it was picked in; won @N: win rate of the "
            "seat that took it with pick N (A B B A A B)",
        )
    )
    rows = [
        [r["picker"], pct(r["win_rate"]), ci(r["win_rate_low"], r["win_rate_high"]), num(r["games"])]
        for _, r in first.iterrows()
    ]
    console.print(table("Draft: first-pick advantage", ["seat that picked", "win rate", "95% CI", "games"], rows))


def draft_section(runs: Runs) -> dict[str, pd.DataFrame] | None:
    """The report's "Draft" tables (`picks` per protocol, `first_pick`), or None when nothing drafted;
    the hook for `protolab report` and `protolab meta`."""
    if not has_picks(runs):
        return None
    return {"picks": pick_metrics(runs), "first_pick": first_pick(runs)}
