"""The summary `protolab run` prints when a run is complete: straight from the Parquet files, so
it is also a first check that the dataset opens in DuckDB."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from sim.stats import wilson

SEATS = [f"seat{s}_protocol_{side}" for s in (0, 1) for side in ("left", "middle", "right")]


def summarize_run(run_dir: Path) -> dict[str, Any]:
    """Per arm: games, first-player win rate, draws, turns, and win rate of each protocol as part of
    a trio (wins over decided games it played), with 95% Wilson intervals."""
    from sim.experiment.storage import location, parquet_view

    con = duckdb.connect()
    parquet_view(con, "g", (location(run_dir) / "games").glob("*.parquet"))
    arms: dict[str, Any] = {}
    rows = con.execute("""
        select arm::varchar, count(*), count(*) filter (winner >= 0),
               count(*) filter (winner >= 0 and winner = first_player), avg(turns), median(turns)
        from g group by 1 order by min(game_index)""").fetchall()
    for arm, n, decided, first_wins, mean_turns, median_turns in rows:
        lo, hi = wilson(first_wins, decided)
        arms[arm] = {"games": n, "decided": decided, "draws": n - decided,
                     "first_player_win_rate": first_wins / decided if decided else None,
                     "first_player_ci": [lo, hi], "mean_turns": mean_turns, "median_turns": median_turns,
                     "protocols": {}}
    union = " union all ".join(
        f"select arm::varchar as arm, {c}::varchar as protocol, (winner = {0 if c.startswith('seat0') else 1}) as win "
        f"from g where winner >= 0" for c in SEATS)
    for arm, proto, n, wins in con.execute(
            f"select arm, protocol, count(*), count(*) filter (win) from ({union}) group by 1, 2").fetchall():
        lo, hi = wilson(wins, n)
        arms[arm]["protocols"][proto] = {"games": n, "wins": wins, "win_rate": wins / n, "ci": [lo, hi]}
    return {"arms": arms}


def print_report(result, console) -> None:
    s = summarize_run(result.run_dir)
    m = result.manifest
    spec = m["spec"]
    shape = ("random drafts" if spec["draft"]["mode"] == "random"
             else f"{m['matchups']:,} matchups x {m['games_per_matchup']:,} games")
    if m["arms"] > 1:
        shape += f" x {m['arms']} arms"
    line = f"\n[bold]{m['run_id']}[/bold]: {result.games:,} games ({shape})"
    if result.games_computed:
        rate = result.games_computed / result.seconds if result.seconds else 0
        line += (f"; played {result.games_computed:,} in {result.seconds:.1f} s "
                 f"({rate:,.0f} games/s, Ray start-up included)")
    console.print(line)
    from rich.table import Table

    arms = list(s["arms"])
    for arm, a in s["arms"].items():
        fp = a["first_player_win_rate"]
        lo, hi = a["first_player_ci"]
        label = f"{arm}: " if len(arms) > 1 else ""
        if fp is None:
            console.print(f"{label}no decided games", markup=False)
            continue
        console.print(f"{label}first player wins {fp:.1%} (95% CI {lo:.1%}-{hi:.1%}) of {a['decided']:,} decided "
                      f"games; {a['draws']:,} draws; turns mean {a['mean_turns']:.1f}, "
                      f"median {a['median_turns']:.0f}", markup=False)
    t = Table(title="Protocol win rate (as part of a trio), 95% CI")
    t.add_column("protocol")
    if len(arms) == 1:
        for col in ("win rate", "95% CI", "games"):
            t.add_column(col, justify="right")
    else:
        for arm in arms:
            t.add_column(arm, justify="right")
        t.add_column(f"{arms[-1]} - {arms[0]}", justify="right")
        t.add_column("games per arm", justify="right")
    protos = sorted({p for a in s["arms"].values() for p in a["protocols"]},
                    key=lambda p: -s["arms"][arms[0]]["protocols"].get(p, {"win_rate": 0})["win_rate"])
    for p in protos:
        rs = [s["arms"][arm]["protocols"].get(p) for arm in arms]
        if len(arms) == 1:
            r = rs[0]
            t.add_row(p, f"{r['win_rate']:.1%}", f"{r['ci'][0]:.1%}-{r['ci'][1]:.1%}", f"{r['games']:,}")
            continue
        cells = [f"{r['win_rate']:.1%} ±{(r['ci'][1] - r['ci'][0]) * 50:.1f}" if r else "-" for r in rs]
        diff = f"{(rs[-1]['win_rate'] - rs[0]['win_rate']) * 100:+.1f} pts" if rs[0] and rs[-1] else "-"
        t.add_row(p, *cells, diff, f"{rs[0]['games']:,}" if rs[0] else "-")
    console.print(t)
    console.print(f"Dataset: {result.run_dir}/ (games/, events/, cards/, run.json; docs/data.md). In Python:\n"
                  f"  duckdb.sql(\"select winner, count(*) from '{result.run_dir}/games/*.parquet' group by 1\")",
                  highlight=False, soft_wrap=True)
