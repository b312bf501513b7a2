"""`protolab bench`: games per second on one core (or the runner's batch path on a local Ray)."""

from __future__ import annotations

import argparse
import json
import os

from protolab.bench import run_bench, run_ray_bench
from protolab.commands.common import (
    UsageError,
    add_decision_timeout,
    add_format,
    add_pool_args,
    check_batch,
    check_range,
    model_note,
    pool_from,
    print_csv,
)
from protolab.commands.registry import command_parser
from strategies.seats import make_seats
from strategies.spec import StrategyError, parse


def cmd_bench(args: argparse.Namespace) -> int:
    games = args.games if args.games is not None else _default_bench_games(args.strategy)
    check_batch(games * (10 if args.ray else 1), args.seed)
    check_range("--repeats", args.repeats, 1, 100)
    check_range("--ray", args.ray, 1, 4 * (os.cpu_count() or 1))
    pool = pool_from(args)
    try:
        seats = make_seats(pool, (args.strategy, args.strategy))  # the spec parsed once, here
    except StrategyError as e:
        raise UsageError(str(e)) from None
    if args.ray:
        res = run_ray_bench(pool, workers=args.ray, games=games * 10, seed=args.seed, strategy=args.strategy)
        text = (
            f"{res['games']} games ({res['strategy']} vs {res['strategy']}, random drafts, events on) on "
            f"{res['where']}: {res['games_per_second']:,.0f} games/s, "
            f"{res['games_per_second_per_worker']:,.0f} games/s per worker (Ray start-up excluded)"
        )
    else:
        res = run_bench(pool, seats, args.strategy, games=games, seed=args.seed, repeats=args.repeats)
        text = (
            f"{res['games']} games ({res['strategy']} vs {res['strategy']}, random drafts, 1 core): "
            f"{res['games_per_second']:,.0f} games/s (best of {res['repeats']}), "
            f"{res['turns_per_game']:.1f} turns/game, {res['decisions_per_second']:,.0f} decisions/s"
        )
    models, note = model_note((args.strategy,), pool)
    if args.format == "json":
        print(json.dumps({**res, **({"pool_hash": pool.hash, "models": models} if models else {})}))
    elif args.format == "csv":
        print_csv([res])
    else:
        print(text if note is None else f"{text}\n{note}")
    return 0


def _default_bench_games(strategy: str) -> int:
    """Games per timed run by the strategy's player: a second or so of each."""
    try:
        base = parse(strategy).base
    except StrategyError:
        return 2000  # refused with its reason when the seats are made
    return {"random": 20000, "search": 40, "ismcts": 4}.get(base, 2000)


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "bench")
    p.add_argument("--games", type=int, default=None, help="games per timed run (default by strategy)")
    p.add_argument("--strategy", default="random", help="strategy spec playing both seats (default random)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3, help="timed runs; the best is reported")
    add_format(p, 'one row of the figures; json: one object ({"games_per_second": ...})', json_alias=True)
    p.add_argument(
        "--ray",
        type=int,
        metavar="WORKERS",
        help="instead: the runner's batch path on a local Ray with this many workers (10x the games)",
    )
    add_decision_timeout(p)
    add_pool_args(p)
    p.set_defaults(func=cmd_bench)
