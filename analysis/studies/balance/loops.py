"""Loop draws: games the loop bound ended (texts that kept triggering each other, a loop a player may
choose), per protocol in play and per card whose text repeated, each with its rate and 95% Wilson
interval. A design that lets a losing player force a draw shows here even when its win rate does not."""

from __future__ import annotations

import pandas as pd

from analysis.pages.shell import table_html
from analysis.runs.open import Runs
from analysis.runs.schema import PROTOCOL_COLUMNS
from analysis.stats.proportions import add_rate
from analysis.studies.balance.queries import tally

LOOP = "loop_guard"  # the end reason of the loop bound (sim/cards/vocabulary/engine_enums.py, EndReason)
COLUMNS = ["kind", "name", "protocol", "games", "loops", "loop_rate", "loop_rate_low", "loop_rate_high"]


def has_loop_card(runs: Runs) -> bool:
    """Runs written before the games table named the loop's card have no `loop_card` column."""
    return "loop_card" in set(runs.sql("select * from games limit 0").columns)


def loop_draws(runs: Runs) -> pd.DataFrame:
    """One row per protocol that took part in a loop draw and per card whose text repeated: games with
    it in play (either seat, counted once), loop draws among them, their rate. Empty when no game
    ended by the loop bound."""
    if not loop_count(runs):  # from the tallies: a run with no loop draw reads no game rows
        return pd.DataFrame(
            {c: pd.Series(dtype="object" if c in ("kind", "name", "protocol") else "float") for c in COLUMNS}
        )
    card = "loop_card::varchar" if has_loop_card(runs) else "null"
    df = _query(runs, card)
    return add_rate(df, "loops", "games", "loop_rate")[COLUMNS]


def loop_count(runs: Runs) -> int:
    """Games the loop bound ended, from the game-length tally (analysis/runs/tallies.py)."""
    h = tally(runs, "length")
    return int(h.loc[h["end_reason"] == LOOP, "games"].sum())


def _query(runs: Runs, card: str) -> pd.DataFrame:
    """Protocol rows from the games with each looping protocol in play; card rows share their
    protocol's game count (the card was in play wherever its protocol was)."""
    in_play = " or ".join(f"{c}::varchar = p.name" for c in PROTOCOL_COLUMNS)
    names = ", ".join(f"{c}::varchar" for c in PROTOCOL_COLUMNS)
    loop = f"end_reason::varchar = '{LOOP}'"
    protocols = runs.sql(f"""
        with protos as (select distinct unnest([{names}]) as name from games where {loop})
        select 'protocol' as kind, p.name as name, p.name as protocol, count(*) as games,
               count(*) filter (where {loop}) as loops
        from protos p join games on ({in_play})
        group by p.name""")
    cards = runs.sql(f"""
        select 'card' as kind, {card} as name, count(*) as loops from games
        where {loop} and {card} is not null group by name""")
    if cards.empty:
        return protocols.sort_values(["loops", "name"], ascending=[False, True]).reset_index(drop=True)
    cards["protocol"] = [protocol_of(n, protocols["name"]) for n in cards["name"]]
    cards = cards.merge(protocols[["name", "games"]].rename(columns={"name": "protocol"}), on="protocol")
    out = pd.concat([protocols, cards], ignore_index=True)
    return out.sort_values(["kind", "loops", "name"], ascending=[False, False, True]).reset_index(drop=True)


def protocol_of(card: str, protocols: pd.Series) -> str:
    """The protocol of a card name ("Speed 3" -> "Speed"): the longest protocol name it starts with."""
    return max((p for p in protocols if card.startswith(p + " ")), key=len, default=card.rsplit(" ", 1)[0])


LOOP_COLUMNS = [
    ("", "kind", "text"),
    ("protocol or card", "name", "text"),
    ("loop draws", "loops", "int"),
    ("games in play", "games", "int"),
    ("rate", "loop_rate", "pct"),
    ("95% CI low", "loop_rate_low", "pct"),
    ("95% CI high", "loop_rate_high", "pct"),
]


def loops_html(table: pd.DataFrame | None) -> str:
    """The dashboard's loop-draw section: shown only when some game ended by the loop bound."""
    if table is None or table.empty:
        return ""
    return (
        '<section id="loops"><h2>Loop draws: games the loop bound ended</h2>'
        '<p class="muted">A text that kept triggering itself (a loop a player may choose, or none can leave) '
        "ends the game as a draw; per protocol in play and per card whose text repeated.</p>"
        f'<div class="scroll">{table_html(table, LOOP_COLUMNS, "loop-table", ("protocol", None))}</div></section>'
    )
