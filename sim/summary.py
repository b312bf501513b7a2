"""The quick summary `protolab simulate` prints: who wins, how long games last, which protocols
win more often than their share, each with a 95% interval and the game count beside it."""

from __future__ import annotations

from typing import Any

import numpy as np

from sim.pool import Pool
from sim.record import END_REASONS
from sim.stats import wilson


def summarize(pool: Pool, cols: dict[str, np.ndarray]) -> dict[str, Any]:
    n = len(cols["seed"])
    winner = cols["winner"].astype(np.int64)
    decided = winner >= 0
    nd = int(decided.sum())
    first_wins = int((decided & (winner == cols["first_player"])).sum())
    protos = cols["protocols"]
    rows = []
    for pid, name in enumerate(pool.protocols):
        in0 = (protos[:, :3] == pid).any(axis=1)
        in1 = (protos[:, 3:] == pid).any(axis=1)
        games = int(((in0 | in1) & decided).sum())
        if games == 0:
            continue
        wins = int((in0 & (winner == 0)).sum() + (in1 & (winner == 1)).sum())
        lo, hi = wilson(wins, games)
        rows.append({"protocol": name, "games": games, "win_rate": wins / games, "ci_low": lo, "ci_high": hi})
    rows.sort(key=lambda r: -r["win_rate"])
    lo, hi = wilson(first_wins, nd)
    reasons = {END_REASONS[int(k)]: int(v) for k, v in zip(*np.unique(cols["end_reason"], return_counts=True),
                                                             strict=True)}
    return {
        "games": n,
        "pool_hash": pool.hash,
        "decided": nd,
        "draws": n - nd,
        "end_reasons": reasons,
        "first_player_win_rate": first_wins / nd if nd else None,
        "first_player_ci": [lo, hi],
        "mean_turns": float(cols["turns"].mean()),
        "median_turns": float(np.median(cols["turns"])),
        "mean_compiles": float(cols["n_compiles"].mean()),
        "protocols": rows,
    }


def print_summary(s: dict[str, Any], console) -> None:
    from rich.table import Table

    console.print(f"[bold]{s['games']:,} games[/bold], {' vs '.join(s['strategies'])}, seeds {s['first_seed']:,}-"
                  f"{s['first_seed'] + s['games'] - 1:,}; sets {', '.join(s['sets'])}"
                  + (f"; variants {', '.join(s['variants'])}" if s["variants"] else "")
                  + f"; pool {s['pool_hash']}; {s['seconds']} s = {s['games_per_second']:,.0f} games/s")
    fp = s["first_player_win_rate"]
    if fp is not None:
        lo, hi = s["first_player_ci"]
        console.print(f"First player wins {fp:.1%} (95% CI {lo:.1%}-{hi:.1%}) of {s['decided']:,} decided games")
    console.print(f"Turns: mean {s['mean_turns']:.1f}, median {s['median_turns']:.0f}; "
                  f"compiles per game {s['mean_compiles']:.2f}; end reasons {s['end_reasons']}")
    t = Table(title="Protocol win rate (as part of a trio)")
    for col in ("protocol", "win rate", "95% CI", "games"):
        t.add_column(col, justify="right" if col != "protocol" else "left")
    for r in s["protocols"]:
        t.add_row(r["protocol"], f"{r['win_rate']:.1%}", f"{r['ci_low']:.1%}-{r['ci_high']:.1%}", f"{r['games']:,}")
    console.print(t)
