"""`protolab ladder`: round robin between strategies (registered into the main CLI)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.console import Console

from protolab.commands.common import (
    UsageError,
    add_decision_timeout,
    add_format,
    check_batch,
    console,
    model_note,
    pool_from,
    print_csv,
)
from protolab.commands.registry import command_parser
from sim.pool import Pool
from strategies.ladder import run_ladder
from strategies.spec import StrategyError, make_seat, parse_draft


def add_commands(sub) -> None:
    p = command_parser(sub, "ladder")
    p.add_argument(
        "strategies",
        nargs="+",
        metavar="STRATEGY",
        help='strategy specs, e.g. random greedy "search:sims=50" "greedy+nodown" (docs/strategies.md)',
    )
    p.add_argument(
        "--games",
        type=int,
        default=2000,
        help="games per pair, even: each seed played twice, seats swapped (default 2000)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--turn-cap", type=int, default=200)
    p.add_argument("--draft", default="random", help="random | fixed:A,B,C/D,E,F | table:FILE")

    add_format(p, "the head-to-head pairs; json: pairs and ratings", json_alias=True)
    p.add_argument("--set", action="append", metavar="SET", help="card set (repeatable)")
    p.add_argument("--cards", action="append", metavar="FILE", help="extra protocol or variant file")

    add_decision_timeout(p)
    p.set_defaults(func=cmd_ladder)


def cmd_ladder(args: argparse.Namespace) -> int:
    pool = _checked_pool(args)
    out = console()
    models, note = model_note(args.strategies, pool)
    if args.format in ("json", "csv"):
        res = run_ladder(pool, args.strategies, args.games, args.seed, args.turn_cap, args.draft)
        if args.format == "json":
            print(json.dumps({**res, **({"pool_hash": pool.hash, "models": models} if models else {})}, indent=1))
        else:
            print_csv(res["pairs"])
        return 0
    res = _ladder_with_progress(args, pool, out)
    _print_tables(res, args.games, out)
    if note:
        out.print(note, markup=False, highlight=False, soft_wrap=True)
    return 0


def _checked_pool(args: argparse.Namespace) -> Pool:
    """The pool, once the strategies, games and draft are known to be playable in it."""
    if len(args.strategies) < 2:
        raise UsageError("a ladder needs at least two strategies")
    if args.games < 2 or args.games % 2:
        raise UsageError(
            f"--games: expected an even number, at least 2 (each seed is played twice, seats swapped), got {args.games}"
        )
    check_batch(args.games, args.seed, args.turn_cap)
    pool = pool_from(args)
    try:
        for s in args.strategies:
            make_seat(s, pool)
        parse_draft(args.draft, pool)
    except StrategyError as e:
        raise UsageError(str(e)) from None
    return pool


def _ladder_with_progress(args: argparse.Namespace, pool: Pool, out: Console) -> dict[str, Any]:
    """The ladder, with a progress bar of its pairs on the terminal."""
    from rich.progress import Progress

    npairs = len(args.strategies) * (len(args.strategies) - 1) // 2
    with Progress(console=out, transient=True) as prog:
        task = prog.add_task("ladder", total=npairs)

        def progress(label: str) -> None:
            prog.update(task, description=label, advance=0)
            prog.advance(task)

        return run_ladder(pool, args.strategies, args.games, args.seed, args.turn_cap, args.draft, progress=progress)


def _print_tables(res: dict[str, Any], games: int, out: Console) -> None:
    """The head-to-head pairs and the ratings as rich tables."""
    from rich.table import Table

    t = Table(title=f"Head to head ({games} games per pair, seats swapped on paired seeds)")
    for c in ("a", "b", "games", "a wins", "b wins", "draws", "a win rate", "95% CI"):
        t.add_column(c, justify="left" if c in ("a", "b") else "right", no_wrap=True)
    for p in res["pairs"]:
        t.add_row(
            p["a"],
            p["b"],
            str(p["games"]),
            str(p["wins_a"]),
            str(p["wins_b"]),
            str(p["draws"]),
            f"{p['win_rate_a']:.1%}",
            f"{p['ci_low']:.1%}-{p['ci_high']:.1%}",
        )
    out.print(t)
    r = Table(title="Bradley-Terry rating (Elo scale, mean 0, 95% bootstrap CI)")
    for c in ("strategy", "rating", "95% CI"):
        r.add_column(c, justify="left" if c == "strategy" else "right")
    for row in res["ratings"]:
        r.add_row(row["strategy"], f"{row['elo']:+.0f}", f"{row['ci_low']:+.0f} .. {row['ci_high']:+.0f}")
    out.print(r)
