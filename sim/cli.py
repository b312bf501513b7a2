"""The `protolab` command line: one entry point, a subcommand per job, `--help` everywhere."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import NoReturn

from sim.pool import DEFAULT_SETS, Pool, load_pool

# Subcommands that live with their subsystem: each module defines add_commands(subparsers).
PLUGIN_MODULES = ("strategies.cli", "sim.experiment.cli", "analysis.cli")

# The project's errors a user can cause (module, class): `main` prints them as one line, exit status 2.
# Only modules already imported are consulted: an error class never loaded cannot have been raised.
USER_ERRORS = (("sim.cards.loader", "CardDataError"), ("sim.inputs", "InputFileError"),
               ("sim.experiment.spec", "SpecError"), ("sim.experiment.dataset", "RunDirError"),
               ("strategies.spec", "StrategyError"), ("analysis.open", "RunError"), ("sim.scenario", "ScenarioError"))

MAX_GAME_SEED = 2**64 - 1          # a game's seed is an unsigned 64-bit number (replay)
MAX_FIRST_SEED = 2**63 - 1         # simulate, bench, ladder: seeds seed .. seed+games-1 as numpy int64
MAX_BATCH_GAMES = 1_000_000        # simulate, bench, ladder hold every game's row in memory (~0.5 KB each)
MAX_TURN_CAP = 10_000


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse whose errors (a wrong type, a missing argument) are one line like every other error."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("protolab").strip()
        where = f"{command}: " if command else ""
        raise UsageError(f"{where}{message} (see: {self.prog} --help)")


def check_range(flag: str, value: float | None, lo: float, hi: float) -> None:
    """A numeric option within [lo, hi] (None: not given), else UsageError naming the option."""
    if value is not None and not lo <= value <= hi:          # also refuses nan
        raise UsageError(f"{flag}: expected {lo:,} to {hi:,}, got {value:,}")


def check_batch(games: int, seed: int, turn_cap: int | None = None) -> None:
    """--games, --seed and --turn-cap of a batch of games played in this process."""
    check_range("--games", games, 1, MAX_BATCH_GAMES)
    check_range("--seed", seed, 0, MAX_FIRST_SEED - games + 1)
    check_range("--turn-cap", turn_cap, 1, MAX_TURN_CAP)


FORMATS = ("table", "json", "csv")


def add_format(p: argparse.ArgumentParser, csv_is: str, json_alias: bool = False) -> None:
    """`--format table|json|csv`, the same on every command; `--json` stays as an alias where it existed."""
    p.add_argument("--format", choices=FORMATS, default="table",
                   help=f"table (default), json, or csv: {csv_is}")
    if json_alias:
        p.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")


def print_csv(rows: Sequence[dict]) -> None:
    """Rows of one table as CSV on stdout (the header is the first row's keys)."""
    import csv

    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


class _Version(argparse.Action):
    """`protolab --version`: the installed version (read only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help="print the installed protolab version and exit")

    def __call__(self, parser, namespace, values, option_string=None) -> NoReturn:
        from sim.experiment.runner import protolab_version

        print(f"protolab {protolab_version()}")
        parser.exit()


def add_decision_timeout(p: argparse.ArgumentParser) -> None:
    p.add_argument("--decision-timeout", type=float, metavar="SECONDS",
                   help="time limit for each decision of a Python user strategy (default 10; 0: none)")


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
    data = [{"name": c.name, "protocol": c.protocol, "set": c.set, "value": c.value,
             "top": c.top, "middle": c.middle, "bottom": c.bottom, "encoded": c.encoded} for c in rows]
    if args.format == "json":
        print(json.dumps(data, indent=1))
        return 0
    if args.format == "csv":
        print_csv(data)
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
    if args.format == "csv":
        print_csv([{"name": c.name, "protocol": c.protocol, "set": c.set, "value": c.value, "top": c.top,
                    "middle": c.middle, "bottom": c.bottom, "encoded": c.encoded, "source": c.source}])
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

    check_batch(args.games, args.seed, args.turn_cap)
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
    if args.format == "json":
        print(json.dumps(summary, indent=1))
        return 0
    if args.format == "csv":
        print_csv(summary["protocols"])
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


def cmd_replay_run(args: argparse.Namespace) -> int:
    """`replay RUN --game N`: one game of a run, rebuilt from its manifest and checked against its row."""
    from sim.experiment.replay import ReplayError, ReplayMismatch, replay_run

    if args.run is None or args.game is None:
        raise UsageError("replay: a run folder and --game go together: protolab replay RUN --game N")
    given = [f"--{k.replace('_', '-')}" for k in ("seed", "protocols", "first_player", "strategies", "turn_cap",
                                                  "set", "cards") if getattr(args, k) is not None]
    if given:
        raise UsageError(f"replay RUN --game N: {', '.join(given)} cannot be given; the run fixes the seed, trios, "
                         "first player, strategies, turn cap and pool")
    try:
        lines = replay_run(args.run, args.game, states=args.states)
    except ReplayError as e:
        raise UsageError(str(e)) from None
    except ReplayMismatch as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from sim.experiment.replay import log_lines
    from sim.game import Game

    if args.run is not None or args.game is not None:
        return cmd_replay_run(args)
    if args.seed is None:
        raise UsageError("replay: give --seed S, or a run folder and a game: protolab replay RUN --game N")
    args.strategies = args.strategies or ("random", "random")
    args.turn_cap = 200 if args.turn_cap is None else args.turn_cap
    check_range("--seed", args.seed, 0, MAX_GAME_SEED)
    check_range("--turn-cap", args.turn_cap, 1, MAX_TURN_CAP)
    pool = _pool(args)
    protocols = None
    if args.protocols:
        protocols = [[x.strip() for x in side.split(",")] for side in args.protocols]
        if len(protocols) != 2 or any(len(s) != 3 for s in protocols):
            raise UsageError('--protocols takes two trios, e.g. --protocols "Fire,Water,Death" "Hate,Light,Life"')
    from strategies.spec import make_seat

    try:
        game = Game(pool, seed=args.seed, protocols=protocols, first_player=args.first_player,
                    turn_cap=args.turn_cap, auto=(0, 1))
        seats = tuple(make_seat(s, pool) for s in args.strategies)
    except (KeyError, ValueError) as e:           # StrategyError, and two trios sharing a protocol
        raise UsageError(e.args[0]) from None
    game.strategies = seats
    game.core.run([], seats)
    rec = game.record(tuple(args.strategies))
    print(f"seed {args.seed}  pool {pool.hash}  engine {rec['engine_version']}")
    for line in log_lines(game, states=args.states):
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

    games = args.games if args.games is not None else _default_bench_games(args.strategy)
    check_batch(games * (10 if args.ray else 1), args.seed)
    check_range("--repeats", args.repeats, 1, 100)
    check_range("--ray", args.ray, 1, 4 * (os.cpu_count() or 1))
    pool = _pool(args)
    try:
        make_seat(args.strategy, pool)
    except StrategyError as e:
        raise UsageError(str(e)) from None
    if args.ray:
        from sim.bench import run_ray_bench

        res = run_ray_bench(pool, workers=args.ray, games=games * 10, seed=args.seed, strategy=args.strategy)
        if args.format == "json":
            print(json.dumps(res))
        elif args.format == "csv":
            print_csv([res])
        else:
            print(f"{res['games']} games ({res['strategy']} vs {res['strategy']}, random drafts, events on) on "
                  f"{res['where']}: {res['games_per_second']:,.0f} games/s, "
                  f"{res['games_per_second_per_worker']:,.0f} games/s per worker (Ray start-up excluded)")
        return 0
    res = run_bench(pool, games=games, seed=args.seed, repeats=args.repeats, strategy=args.strategy)
    if args.format == "json":
        print(json.dumps(res))
    elif args.format == "csv":
        print_csv([res])
    else:
        print(f"{res['games']} games ({res['strategy']} vs {res['strategy']}, random drafts, 1 core): "
              f"{res['games_per_second']:,.0f} games/s (best of {res['repeats']}), "
              f"{res['turns_per_game']:.1f} turns/game, {res['decisions_per_second']:,.0f} decisions/s")
    return 0


def _default_bench_games(strategy: str) -> int:
    base = strategy.split("+")[0].split(":")[0]
    return {"random": 20000, "search": 40, "ismcts": 4}.get(base, 2000)


# -- parser ----------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="protolab", description="Balance lab for the card game Compile.")
    ap.add_argument("--version", action=_Version)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("simulate", help="play a batch of games (greedy vs greedy unless told) and print a summary")
    p.add_argument("--games", type=int, default=10000, help="number of games (default 10000)")
    p.add_argument("--strategies", nargs=2, default=("greedy", "greedy"), metavar="SPEC",
                   help="strategy of seat A and seat B (default: greedy greedy; random is for exploring rules, "
                        "not for balance: its protocol ranking is close to the reverse of competent play)")
    p.add_argument("--seed", type=int, default=1, help="first seed; game i uses seed+i (default 1)")
    p.add_argument("--turn-cap", type=int, default=200, help="turns before a game is a draw (default 200)")
    add_format(p, "the protocol win rates", json_alias=True)
    add_decision_timeout(p)
    _add_pool_args(p)
    p.set_defaults(func=cmd_simulate)

    cards = sub.add_parser("cards", help="list, show and check card data")
    csub = cards.add_subparsers(dest="cards_command", required=True, metavar="SUBCOMMAND")
    p = csub.add_parser("list", help="list the cards of the pool")
    add_format(p, "one row per card")
    _add_pool_args(p)
    p.set_defaults(func=cmd_cards_list)
    p = csub.add_parser("show", help='one card and every key it is encoded with: protolab cards show "Fire 1"')
    p.add_argument("name")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="json: the card as data, the keys a card file would write; csv: one row, its texts")
    _add_pool_args(p)
    p.set_defaults(func=cmd_cards_show)
    p = csub.add_parser("check", help="validate protocol or variant files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.set_defaults(func=cmd_cards_check)

    p = sub.add_parser("replay", help="print the readable log of a game: one of a run (RUN --game N) or a seed's")
    p.add_argument("run", nargs="?", metavar="RUN",
                   help="a run folder (RUN#arm: one arm); with --game N, replays that row's game exactly and checks "
                        "it against the stored row")
    p.add_argument("--game", type=int, metavar="N",
                   help="the row's game_index (with RUN#arm: the game's index within the arm)")
    p.add_argument("--states", action="store_true",
                   help="print the position at every turn boundary: line values, stacks, hand and deck sizes, control")
    p.add_argument("--seed", type=int, help="without RUN: the seed to play")
    p.add_argument("--protocols", nargs=2, metavar="TRIO",
                   help='fixed trios, e.g. "Fire,Water,Death" "Hate,Light,Life"')
    p.add_argument("--first-player", type=int, choices=(0, 1))
    p.add_argument("--strategies", nargs=2, metavar="SPEC",
                   help="strategy of seat A and seat B (default: random random)")
    p.add_argument("--turn-cap", type=int, help="turns before a draw (default 200)")
    add_decision_timeout(p)
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
    add_format(p, 'one row of the figures; json: one object ({"games_per_second": ...})', json_alias=True)
    p.add_argument("--ray", type=int, metavar="WORKERS",
                   help="instead: the runner's batch path on a local Ray with this many workers (10x the games)")
    add_decision_timeout(p)
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


def is_user_error(e: BaseException) -> bool:
    """An error the user caused (bad input), as opposed to a fault in protolab."""
    kinds = [UsageError] + [getattr(sys.modules[m], name) for m, name in USER_ERRORS if m in sys.modules]
    return isinstance(e, tuple(k for k in kinds if isinstance(k, type)))


def one_line(text: str) -> str:
    """The message with line breaks and control characters escaped: one line, no terminal codes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _apply_decision_timeout(args: argparse.Namespace) -> None:
    if getattr(args, "decision_timeout", None) is not None:
        from strategies.user import set_decision_timeout

        try:
            set_decision_timeout(args.decision_timeout)
        except ValueError as e:
            raise UsageError(f"--decision-timeout: {e}") from None


def _stdout_gone() -> int:
    """The reader of our output left (`protolab ... | head -1`): stop quietly. Later writes,
    including the flush at exit, go to /dev/null instead of raising again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (captured output)
        pass
    return 141                                     # what a shell reports for a program ended by SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every error a user can cause ends here as one line `protolab: error: ...`
    on stderr and exit status 2; faults in protolab itself keep their traceback."""
    try:
        args = build_parser().parse_args(argv)
        _apply_decision_timeout(args)
        return args.func(args)
    except BrokenPipeError:
        return _stdout_gone()
    except KeyboardInterrupt:
        print("protolab: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if not is_user_error(e):
            raise
        print(f"protolab: error: {one_line(str(e))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    # Run the importable module's main, so plugins that import sim.cli share its UsageError.
    from sim.cli import main as importable_main

    sys.exit(importable_main())
