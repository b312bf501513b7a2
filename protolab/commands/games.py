"""`protolab simulate`, `replay` and `scenario`: games played in this process, one batch, one
game's log, or a rules scenario."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from rich.console import Console

from analysis.pages import board, board_page
from analysis.pages.cells import ci, num, pct, table
from analysis.runs.open import open_table
from analysis.studies.balance import queries
from analysis.studies.balance.rule_note import note_lines, pool_notes
from protolab.commands.common import (
    MAX_GAME_SEED,
    MAX_TURN_CAP,
    UsageError,
    add_allow_code,
    add_decision_timeout,
    add_format,
    add_pool_args,
    add_storage_timeout,
    check_batch,
    check_range,
    console,
    pool_from,
    print_csv,
)
from protolab.commands.registry import DEFAULT_STRATEGIES, command_parser
from protolab.experiment.run.replay import (
    ReplayError,
    ReplayMismatch,
    board_data,
    log_lines,
    replay_run,
    result_line,
)
from protolab.experiment.run.shards import batch_games
from sim.batch import play_columns
from sim.pool import DEFAULT_SETS, Pool, load_pool
from sim.record import END_REASONS
from sim.scenario import run_file
from sim.state import State
from strategies.seats import make_seats
from strategies.spec import StrategyError, make_seat

MAX_ROLLOUTS = 10_000  # per turn end: a 200-turn page would otherwise take hours
DEFAULT_ROLLOUTS = 16


def cmd_simulate(args: argparse.Namespace) -> int:
    check_batch(args.games, args.seed, args.turn_cap)
    pool = pool_from(args)
    seeds = range(args.seed, args.seed + args.games)
    strategies = tuple(args.strategies)
    try:
        seats = make_seats(pool, strategies)
    except StrategyError as e:
        raise UsageError(str(e)) from None
    t0 = time.perf_counter()
    cols = play_columns(pool, seeds, seats.configs, turn_cap=args.turn_cap)
    dt = time.perf_counter() - t0
    summary = summarize(pool, cols, strategies)
    summary["strategies"] = list(strategies)
    summary["sets"] = list(args.set or DEFAULT_SETS)
    summary["variants"] = pool.variants
    summary["first_seed"] = args.seed
    summary["seconds"] = round(dt, 3)
    summary["games_per_second"] = round(args.games / dt, 1)
    if args.cards:  # changes the players take by a rule are said (analysis/studies/balance/rule_note.py)
        official = load_pool(sets=args.set or DEFAULT_SETS, require_encoded=False)
        summary["rule_notes"] = pool_notes(official, pool, list(strategies))
    if args.format == "json":
        print(json.dumps(summary, indent=1))
        return 0
    if args.format == "csv":
        print_csv(summary["protocols"])
        return 0
    print_summary(summary, console())
    return 0


def summarize(pool: Pool, cols: dict[str, np.ndarray], strategies: Sequence[str]) -> dict[str, Any]:
    """Who wins, how long games last, which protocols win more often than their share: the games
    as the rows a run writes, their figures from the analysis's own queries (one definition each)."""
    runs = open_table(batch_games(pool, cols, strategies))
    ov = queries.overview(runs).iloc[0]
    protos = queries.protocol_win_rates(runs)
    reasons = {
        END_REASONS[int(k)]: int(v) for k, v in zip(*np.unique(cols["end_reason"], return_counts=True), strict=True)
    }
    return {
        "games": int(ov["games"]),
        "pool_hash": pool.hash,
        "decided": int(ov["decided"]),
        "draws": int(ov["draws"]),
        "end_reasons": reasons,
        "first_player_win_rate": None if ov["decided"] == 0 else float(ov["first_player_win_rate"]),
        "first_player_ci": [float(ov["first_player_win_rate_low"]), float(ov["first_player_win_rate_high"])],
        "mean_turns": float(ov["mean_turns"]),
        "median_turns": float(ov["median_turns"]),
        "mean_compiles": float(cols["n_compiles"].mean()),
        "protocols": [
            {
                "protocol": r.protocol,
                "games": int(r.games),
                "win_rate": float(r.win_rate),
                "ci_low": float(r.win_rate_low),
                "ci_high": float(r.win_rate_high),
            }
            for r in protos.itertuples()
            if r.games > 0
        ],
    }


def print_summary(s: dict[str, Any], out: Console) -> None:
    """The summary as the terminal shows it: a header saying what produced it, then the figures."""
    out.print(
        f"[bold]{s['games']:,} games[/bold], {' vs '.join(s['strategies'])}, seeds {s['first_seed']:,}-"
        f"{s['first_seed'] + s['games'] - 1:,}; sets {', '.join(s['sets'])}"
        + (f"; variants {', '.join(s['variants'])}" if s["variants"] else "")
        + f"; pool {s['pool_hash']}; {s['seconds']} s = {s['games_per_second']:,.0f} games/s"
    )
    fp = s["first_player_win_rate"]
    if fp is not None:
        lo, hi = s["first_player_ci"]
        out.print(f"First player wins {fp:.1%} (95% CI {lo:.1%}-{hi:.1%}) of {s['decided']:,} decided games")
    out.print(
        f"Turns: mean {s['mean_turns']:.1f}, median {s['median_turns']:.0f}; "
        f"compiles per game {s['mean_compiles']:.2f}; end reasons {s['end_reasons']}"
    )
    rows = [[r["protocol"], pct(r["win_rate"]), ci(r["ci_low"], r["ci_high"]), num(r["games"])] for r in s["protocols"]]
    out.print(table("Protocol win rate (as part of a trio)", ["protocol", "win rate", "95% CI", "games"], rows))
    for line in note_lines(s.get("rule_notes")):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


def cmd_replay_run(args: argparse.Namespace) -> int:
    """`replay RUN --game N`: one game of a run, rebuilt from its manifest and checked against its row."""

    if args.run is None or args.game is None:
        raise UsageError("replay: a run folder and --game go together: protolab replay RUN --game N")
    given = [
        f"--{k.replace('_', '-')}"
        for k in ("seed", "protocols", "first_player", "strategies", "turn_cap", "set", "cards")
        if getattr(args, k) is not None
    ]
    if given:
        raise UsageError(
            f"replay RUN --game N: {', '.join(given)} cannot be given; the run fixes the seed, trios, "
            "first player, strategies, turn cap and pool"
        )
    try:
        if args.html is not None:
            return _write_board(board_data(args.run, args.game, args.rollouts, allow_code=args.allow_code), args.html)
        lines = replay_run(args.run, args.game, states=args.states, allow_code=args.allow_code)
    except ReplayError as e:
        raise UsageError(str(e)) from None
    except ReplayMismatch as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    check_range("--rollouts", args.rollouts, 0, MAX_ROLLOUTS)
    if args.html is None and args.rollouts is not None:
        raise UsageError("replay: --rollouts goes with --html FILE (the page's win-probability graph)")
    if args.html is not None and args.states:
        raise UsageError("replay: --states prints the positions, --html FILE draws them; give one")
    args.rollouts = DEFAULT_ROLLOUTS if args.rollouts is None else args.rollouts
    if args.run is not None or args.game is not None:
        return cmd_replay_run(args)
    if args.seed is None:
        raise UsageError("replay: give --seed S, or a run folder and a game: protolab replay RUN --game N")
    defaulted = not args.strategies
    args.strategies = tuple(args.strategies or DEFAULT_STRATEGIES)
    players = f"A = {args.strategies[0]}, B = {args.strategies[1]}" + (
        " (the default players, as simulate's; --strategies A B to change them)" if defaulted else ""
    )
    args.turn_cap = 200 if args.turn_cap is None else args.turn_cap
    check_range("--seed", args.seed, 0, MAX_GAME_SEED)
    check_range("--turn-cap", args.turn_cap, 1, MAX_TURN_CAP)
    pool = pool_from(args)
    game = _played(args, pool, _given_trios(args.protocols))
    if args.html is not None:
        meta = {
            "line": f"seed {args.seed}; pool {pool.hash}; {players}",
            "strategy_0": args.strategies[0],
            "strategy_1": args.strategies[1],
            "seed": args.seed,
        }
        return _write_board(board.game_data(game, f"seed {args.seed}", args.rollouts, meta=meta), args.html)
    rec = game.record(tuple(args.strategies))
    print(f"seed {args.seed}  pool {pool.hash}  engine {rec['engine_version']}  {players}")
    for line in log_lines(game, states=args.states):
        print(line)
    print(result_line(rec))
    return 0


def _given_trios(given: list[str] | None) -> list[list[str]] | None:
    """--protocols A,B,C D,E,F as the two trios; None when not given (the seed draws them)."""
    if not given:
        return None
    protocols = [[x.strip() for x in side.split(",")] for side in given]
    if len(protocols) != 2 or any(len(s) != 3 for s in protocols):
        raise UsageError('--protocols takes two trios, e.g. --protocols "Fire,Water,Death" "Hate,Light,Life"')
    return protocols


def _played(args: argparse.Namespace, pool: Pool, protocols: list[list[str]] | None) -> State:
    """The game of --seed, played to its end by the seats' strategies."""
    try:
        game = State(
            pool,
            seed=args.seed,
            protocols=protocols,
            first_player=args.first_player,
            turn_cap=args.turn_cap,
            auto=(0, 1),
        )
        seats = tuple(make_seat(s, pool) for s in args.strategies)
    except (KeyError, ValueError) as e:  # StrategyError, and two trios sharing a protocol
        raise UsageError(e.args[0]) from None
    game.strategies = seats
    game.core.run([], seats)
    return game


def _write_board(data: dict[str, Any], path: str) -> int:
    """`replay --html FILE`: the board page, and one line saying what it holds."""
    try:
        size = board_page.write(data, path)
    except OSError as e:
        raise UsageError(f"--html {path}: cannot write it ({e.strerror or e})") from None
    n = len(data["steps"])
    source = {"model": f"the model ({data['model']})", "rollouts": f"{data['rollouts']} greedy rollouts per step"}
    print(
        f"wrote {path}: {n} steps ({data['result']['turns']} turns), {size:,} bytes "
        f"({size // max(1, n):,} per step); win probability: {source.get(data['win_source'], 'none')}"
        + (f"; {data['meta']['line']}" if data["meta"].get("line") else "")
    )
    return 0


def cmd_scenario(args: argparse.Namespace) -> int:
    failed = invalid = 0
    for f in args.files:
        r = run_file(f)
        if r.invalid:  # a malformed file: one line, exit status 2 (docs/scenarios.md)
            print(f"protolab: error: {r.invalid}", file=sys.stderr)
            invalid += 1
            continue
        print(r.report())
        if args.log and r.game is not None:
            print("\n".join("    | " + ln for ln in r.game.log()))
        failed += not r.ok
    print(f"{len(args.files) - failed - invalid} passed, {failed} failed, {invalid} invalid")
    return 2 if invalid else 1 if failed else 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register simulate, replay and scenario on the `protolab` parser."""
    _add_simulate(sub)
    _add_replay(sub)
    p = command_parser(sub, "scenario")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--log", action="store_true", help="print each scenario's game log")
    p.set_defaults(func=cmd_scenario)


def _add_simulate(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "simulate")
    p.add_argument("--games", type=int, default=10000, help="number of games (default 10000)")
    p.add_argument(
        "--strategies",
        nargs=2,
        default=DEFAULT_STRATEGIES,
        metavar="SPEC",
        help=f"strategy of seat A and seat B (default: {' '.join(DEFAULT_STRATEGIES)}, the strongest affordable "
        "verdict; greedy greedy is about ten times faster for speed studies; random is for exploring rules, not for "
        "balance: its protocol ranking is close to the reverse of competent play)",
    )
    p.add_argument("--seed", type=int, default=1, help="first seed; game i uses seed+i (default 1)")
    p.add_argument("--turn-cap", type=int, default=200, help="turns before a game is a draw (default 200)")
    add_format(p, "the protocol win rates", json_alias=True)
    add_decision_timeout(p)
    add_pool_args(p)
    p.set_defaults(func=cmd_simulate)


def _add_replay(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "replay")
    p.add_argument(
        "run",
        nargs="?",
        metavar="RUN",
        help="a run folder (RUN#arm: one arm); with --game N, replays that row's game exactly and checks "
        "it against the stored row",
    )
    p.add_argument(
        "--game", type=int, metavar="N", help="the row's game_index (with RUN#arm: the game's index within the arm)"
    )
    p.add_argument(
        "--states",
        action="store_true",
        help="print the position at every turn boundary: line values, stacks, hand and deck sizes, control",
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        help="write the game as a self-contained board page (every turn's position and log, the "
        "alternatives the mover weighed, a compile timeline, a win-probability graph) instead of "
        "printing its log",
    )
    p.add_argument(
        "--rollouts",
        type=int,
        metavar="N",
        help="with --html: greedy rollouts from each turn end for the win-probability graph when no player of the "
        "game has a model (a learned player's graph is its model's values; default 16; 0: no graph)",
    )
    p.add_argument("--seed", type=int, help="without RUN: the seed to play")
    p.add_argument(
        "--protocols", nargs=2, metavar="TRIO", help='fixed trios, e.g. "Fire,Water,Death" "Hate,Light,Life"'
    )
    p.add_argument("--first-player", type=int, choices=(0, 1))
    p.add_argument(
        "--strategies",
        nargs=2,
        metavar="SPEC",
        help="strategy of seat A and seat B (default: greedy greedy, as simulate; the page and the log say which)",
    )
    p.add_argument("--turn-cap", type=int, help="turns before a draw (default 200)")
    add_allow_code(p, "the spec of RUN names")
    add_decision_timeout(p)
    add_storage_timeout(p)
    add_pool_args(p)
    p.set_defaults(func=cmd_replay)
