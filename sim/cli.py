"""The `protolab` command line: one entry point, a subcommand per job, `--help` everywhere."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import sys
import time
from collections.abc import Sequence

from sim.cards.loader import CardDataError
from sim.pool import DEFAULT_SETS, Pool, load_pool

# Subcommands that live with their subsystem: each module defines add_commands(subparsers).
PLUGIN_MODULES = ("strategies.cli", "sim.experiment.cli", "analysis.cli")


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


def _pool(args: argparse.Namespace, require_encoded: bool = True) -> Pool:
    return load_pool(sets=args.set or DEFAULT_SETS, cards=args.cards or (), require_encoded=require_encoded)


def _add_pool_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--set", action="append", metavar="SET",
                   help='card set to include (repeatable; default all four: Main 1, Aux 1, Main 2, Aux 2)')
    p.add_argument("--cards", action="append", metavar="FILE",
                   help="extra protocol or variant file (repeatable); see docs/cards.md")


def _console():
    from rich.console import Console

    return Console()


# -- cards -----------------------------------------------------------------------------------------

def cmd_cards_list(args: argparse.Namespace) -> int:
    pool = _pool(args, require_encoded=False)
    rows = [c for c in pool.cards if not args.set or c.set in args.set or c.source in (args.cards or [])]
    if args.format == "json":
        print(json.dumps([{"name": c.name, "protocol": c.protocol, "set": c.set, "value": c.value,
                           "top": c.top, "middle": c.middle, "bottom": c.bottom, "encoded": c.encoded}
                          for c in rows], indent=1))
        return 0
    from rich.table import Table

    t = Table(title=f"{len(rows)} cards (pool {pool.hash})")
    for col in ("card", "set", "value", "top", "middle", "bottom", "encoded"):
        t.add_column(col, overflow="fold")
    for c in rows:
        t.add_row(c.name, c.set, str(c.value), c.top, c.middle, c.bottom, "yes" if c.encoded else "NO")
    _console().print(t)
    return 0


def cmd_cards_show(args: argparse.Namespace) -> int:
    pool = _pool(args, require_encoded=False)
    try:
        c = pool.card(args.name)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    data = pool.specs[c.id].as_data()
    if args.format == "json":
        print(json.dumps({**data, "protocol": c.protocol, "set": c.set, "source": c.source, "encoded": c.encoded},
                         indent=1))
        return 0
    print(f"{c.name}  ({c.set}, value {c.value}, from {c.source})")
    for box in ("top", "middle", "bottom"):
        if box not in data:
            continue
        keys = dict(data[box])
        print(f"  {box}: {keys.pop('text', '')}")
        for key, value in keys.items():
            for item in value if isinstance(value, list) else [value]:
                print(f"    {key}: {item}")
    print(f"  encoded: {'yes' if c.encoded else 'no'}")
    return 0


def cmd_cards_check(args: argparse.Namespace) -> int:
    from sim.cards.loader import ProtocolSpec, load_file

    for f in args.files:
        spec = load_file(f)
        pool = load_pool(cards=[f], require_encoded=False)     # against the official pool: names, targets
        if isinstance(spec, ProtocolSpec):
            missing = [c.name for c in spec.cards if not c.encoded]
            print(f"{f}: OK, protocol {spec.name} ({spec.set}), 6 cards"
                  + (f"; not encoded: {', '.join(missing)}" if missing else ", all encoded"))
            continue
        print(f"{f}: OK, variant {spec.name!r} replacing {', '.join(spec.replaces)}")
        for name, raw in spec.replaces.items():
            card = pool.card(name)
            for box in ("top", "middle", "bottom"):
                named = raw.get(box) if isinstance(raw.get(box), dict) else {}
                kept = pool.specs[card.id].boxes.get(box)
                if "text" in named and not {"do", "passive"} & set(named) and kept and (kept.do or kept.passive):
                    print(f"  note: {card.name}: {box}.text changed but {box}.do/{box}.passive not named: "
                          "the card keeps its old steps")
            same = [o.name for o in pool.cards
                    if o.protocol == card.protocol and o.value == card.value and o is not card]
            if same:
                print(f"  note: {card.name} now has value {card.value}, like {', '.join(same)}")
    return 0


# -- games -----------------------------------------------------------------------------------------

def cmd_simulate(args: argparse.Namespace) -> int:
    from sim.batch import play_columns
    from sim.summary import summarize

    if args.games < 1:
        raise UsageError(f"--games must be at least 1, got {args.games}")
    pool = _pool(args)
    seeds = range(args.seed, args.seed + args.games)
    strategies = tuple(args.strategies)
    _check_strategies(strategies, pool)
    t0 = time.perf_counter()
    cols = play_columns(pool, seeds, turn_cap=args.turn_cap, strategies=strategies)
    dt = time.perf_counter() - t0
    summary = summarize(pool, cols)
    summary["strategies"] = list(strategies)
    summary["sets"] = list(args.set or DEFAULT_SETS)
    summary["variants"] = pool.variants
    summary["first_seed"] = args.seed
    summary["seconds"] = round(dt, 3)
    summary["games_per_second"] = round(args.games / dt, 1)
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    from sim.summary import print_summary

    print_summary(summary, _console())
    return 0


def _check_strategies(specs: Sequence[str], pool: Pool) -> None:
    from strategies.spec import StrategyError, make_seat

    for spec in specs:
        try:
            make_seat(spec, pool)
        except StrategyError as e:
            raise UsageError(str(e)) from None


def cmd_replay(args: argparse.Namespace) -> int:
    from sim.game import Game

    pool = _pool(args)
    protocols = None
    if args.protocols:
        protocols = [[x.strip() for x in side.split(",")] for side in args.protocols]
        if len(protocols) != 2 or any(len(s) != 3 for s in protocols):
            raise UsageError('--protocols takes two trios, e.g. --protocols "Fire,Water,Death" "Hate,Light,Life"')
    from strategies.spec import StrategyError, make_seat

    try:
        game = Game(pool, seed=args.seed, protocols=protocols, first_player=args.first_player,
                    turn_cap=args.turn_cap, auto=(0, 1))
        seats = tuple(make_seat(s, pool) for s in args.strategies)
    except (KeyError, StrategyError) as e:
        raise UsageError(e.args[0]) from None
    game.strategies = seats
    game.core.run([], seats)
    rec = game.record(tuple(args.strategies))
    print(f"seed {args.seed}  pool {pool.hash}  engine {rec['engine_version']}")
    for line in game.log():
        print(line)
    w = {0: "A", 1: "B", -1: "nobody (draw)"}[rec["winner"]]
    print(f"Result: {w} wins after {rec['turns']} turns ({rec['end_reason']}); "
          f"A = {', '.join(rec['protocols_0'])}; B = {', '.join(rec['protocols_1'])}; "
          f"first player {'AB'[rec['first_player']]}")
    return 0


def cmd_scenario(args: argparse.Namespace) -> int:
    from sim.scenario import run_file

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


def cmd_bench(args: argparse.Namespace) -> int:
    from sim.bench import run_bench
    from strategies.spec import StrategyError, make_seat

    pool = _pool(args)
    try:
        make_seat(args.strategy, pool)
    except StrategyError as e:
        raise UsageError(str(e)) from None
    games = args.games if args.games is not None else _default_bench_games(args.strategy)
    if args.ray:
        from sim.bench import run_ray_bench

        res = run_ray_bench(pool, workers=args.ray, games=games * 10, seed=args.seed, strategy=args.strategy)
        if args.json:
            print(json.dumps(res))
        else:
            print(f"{res['games']} games ({res['strategy']} vs {res['strategy']}, random drafts, events on) on "
                  f"{res['where']}: {res['games_per_second']:,.0f} games/s, "
                  f"{res['games_per_second_per_worker']:,.0f} games/s per worker (Ray start-up excluded)")
        return 0
    res = run_bench(pool, games=games, seed=args.seed, repeats=args.repeats, strategy=args.strategy)
    if args.json:
        print(json.dumps(res))
    else:
        print(f"{res['games']} games ({res['strategy']} vs {res['strategy']}, random drafts, 1 core): "
              f"{res['games_per_second']:,.0f} games/s (best of {res['repeats']}), "
              f"{res['turns_per_game']:.1f} turns/game")
    return 0


def _default_bench_games(strategy: str) -> int:
    base = strategy.split("+")[0].split(":")[0]
    return {"random": 20000, "search": 40}.get(base, 2000)


# -- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="protolab", description="Balance lab for the card game Compile.")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("simulate", help="play a batch of games (greedy vs greedy unless told) and print a summary")
    p.add_argument("--games", type=int, default=10000, help="number of games (default 10000)")
    p.add_argument("--strategies", nargs=2, default=("greedy", "greedy"), metavar="SPEC",
                   help="strategy of seat A and seat B (default: greedy greedy; random is for exploring rules, "
                        "not for balance: its protocol ranking is close to the reverse of competent play)")
    p.add_argument("--seed", type=int, default=1, help="first seed; game i uses seed+i (default 1)")
    p.add_argument("--turn-cap", type=int, default=200, help="turns before a game is a draw (default 200)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    _add_pool_args(p)
    p.set_defaults(func=cmd_simulate)

    cards = sub.add_parser("cards", help="list, show and check card data")
    csub = cards.add_subparsers(dest="cards_command", required=True, metavar="SUBCOMMAND")
    p = csub.add_parser("list", help="list the cards of the pool")
    p.add_argument("--format", choices=("table", "json"), default="table")
    _add_pool_args(p)
    p.set_defaults(func=cmd_cards_list)
    p = csub.add_parser("show", help='one card and every key it is encoded with: protolab cards show "Fire 1"')
    p.add_argument("name")
    p.add_argument("--format", choices=("table", "json"), default="table",
                   help="json: the card as data, the keys a card file would write")
    _add_pool_args(p)
    p.set_defaults(func=cmd_cards_show)
    p = csub.add_parser("check", help="validate protocol or variant files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_cards_check)

    p = sub.add_parser("replay", help="print the readable log of the game a seed produces")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--protocols", nargs=2, metavar="TRIO",
                   help='fixed trios, e.g. "Fire,Water,Death" "Hate,Light,Life"')
    p.add_argument("--first-player", type=int, choices=(0, 1))
    p.add_argument("--strategies", nargs=2, default=("random", "random"), metavar="SPEC",
                   help="strategy of seat A and seat B (default: random random)")
    p.add_argument("--turn-cap", type=int, default=200)
    _add_pool_args(p)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("scenario", help="run scenario files (docs/scenarios.md)")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--log", action="store_true", help="print each scenario's game log")
    p.set_defaults(func=cmd_scenario)

    p = sub.add_parser("bench", help="measure games per second on one core")
    p.add_argument("--games", type=int, default=None, help="games per timed run (default by strategy)")
    p.add_argument("--strategy", default="random", help="strategy spec playing both seats (default random)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--repeats", type=int, default=3, help="timed runs; the best is reported")
    p.add_argument("--json", action="store_true", help='print one JSON object ({"games_per_second": ...})')
    p.add_argument("--ray", type=int, metavar="WORKERS",
                   help="instead: the runner's batch path on a local Ray with this many workers (10x the games)")
    _add_pool_args(p)
    p.set_defaults(func=cmd_bench)
    for module in PLUGIN_MODULES:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:          # the parent package is not there either
            found = False
        if found:
            importlib.import_module(module).add_commands(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (CardDataError, UsageError) as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    # Run the importable module's main, so plugins that import sim.cli share its UsageError.
    from sim.cli import main as importable_main

    sys.exit(importable_main())
