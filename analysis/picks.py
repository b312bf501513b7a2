"""Pick metrics of a run that drafted (docs/analysis.md, "Draft"): how often each protocol is picked,
how early, how the seat that picked it fared by pick position, and whether picking first pays.

They read the games' `picks` column (analysis/schema.py PICKS_FIELD: the six protocols in pick order,
A B B A A B with A the first player); games that did not draft (fixed trios, seat-swapped replays)
have no picks and are left out. Win rates count decided games only, as everywhere (queries.py)."""

from __future__ import annotations

import pandas as pd

from analysis.cells import ci, num, pct, table
from analysis.open import Runs
from analysis.schema import PICKS_FIELD
from analysis.stats import add_rate

POSITIONS = (1, 2, 3, 4, 5, 6)
FIRST_PICKER_POSITIONS = (1, 4, 5)      # A's picks; B's are 2, 3 and 6 (rules 1.1)


def has_picks(runs: Runs) -> bool:
    """The run records pick order and at least one of its games drafted."""
    def q() -> bool:
        cols = set(runs.sql("select * from games limit 0").columns)
        if PICKS_FIELD.name not in cols:
            return False
        return bool(runs.sql(f"select count({PICKS_FIELD.name}) as n from games")["n"].iloc[0])
    return runs.memo("has_picks", q)


def _picked_sql() -> str:
    """One row per pick of a drafted game: protocol, position 1-6, the picker's seat, the winner."""
    a_picks = ", ".join(map(str, FIRST_PICKER_POSITIONS))
    return f"""
        select protocol, pos, winner,
               case when pos in ({a_picks}) then first_player else 1 - first_player end as seat
        from (select first_player, winner, unnest(picks) as protocol, generate_subscripts(picks, 1) as pos
              from games where picks is not null)"""


def pick_metrics(runs: Runs) -> pd.DataFrame:
    """Per protocol: times picked, pick rate (share of drafted games it was picked in), average pick
    position (1-6), win rate of the seat that picked it (decided games, 95% Wilson), and its picks,
    decided games and win rate at each pick position (`picks_pN`, `games_pN`, `win_rate_pN`)."""
    by_pos = ", ".join(
        f"count(*) filter (where pos = {p}) as picks_p{p}, "
        f"count(*) filter (where pos = {p} and winner >= 0) as games_p{p}, "
        f"count(*) filter (where pos = {p} and winner = seat) as wins_p{p}" for p in POSITIONS)
    df = runs.sql(f"""
        with picked as ({_picked_sql()}),
             drafted as (select count(*) as n from games where picks is not null)
        select protocol, count(*) as picks, count(*) / any_value(drafted.n) as pick_rate,
               avg(pos) as avg_position,
               count(*) filter (where winner >= 0) as games, count(*) filter (where winner = seat) as wins,
               {by_pos}
        from picked, drafted
        group by protocol
        order by pick_rate desc, avg_position, protocol""")
    add_rate(df, "wins", "games")
    for p in POSITIONS:
        add_rate(df, f"wins_p{p}", f"games_p{p}", f"win_rate_p{p}")
    return df


def first_pick(runs: Runs) -> pd.DataFrame:
    """First-pick advantage over drafted games: the win rate (decided games, 95% Wilson) of the seat
    that picked first (A, who also takes the first turn) and of the seat that picked second."""
    df = runs.sql("""
        select picker, games, wins from (
            select 'first' as picker, 0 as k, count(*) filter (where winner >= 0) as games,
                   count(*) filter (where winner = first_player) as wins
            from games where picks is not null
            union all
            select 'second', 1, count(*) filter (where winner >= 0),
                   count(*) filter (where winner = 1 - first_player)
            from games where picks is not null)
        order by k""")
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

    rows = [[r["protocol"], pct(r["pick_rate"]), f"{r['avg_position']:.2f}", pct(r["win_rate"]),
             ci(r["win_rate_low"], r["win_rate_high"]), num(r["games"]), *[rate(r, p) for p in POSITIONS]]
            for _, r in picks.iterrows()]
    console.print(table("Draft: picks per protocol", ["protocol", "pick rate", "avg pick", "picker wins", "95% CI",
                                                       "games", *[f"won @{p}" for p in POSITIONS]], rows,
                         caption="pick rate: share of drafted games it was picked in; won @N: win rate of the "
                                 "seat that took it with pick N (A B B A A B)"))
    rows = [[r["picker"], pct(r["win_rate"]), ci(r["win_rate_low"], r["win_rate_high"]), num(r["games"])]
            for _, r in first.iterrows()]
    console.print(table("Draft: first-pick advantage", ["seat that picked", "win rate", "95% CI", "games"], rows))


def draft_section(runs: Runs) -> dict[str, pd.DataFrame] | None:
    """The report's "Draft" tables (`picks` per protocol, `first_pick`), or None when nothing drafted;
    the hook for `protolab report` and `protolab meta`."""
    if not has_picks(runs):
        return None
    return {"picks": pick_metrics(runs), "first_pick": first_pick(runs)}
