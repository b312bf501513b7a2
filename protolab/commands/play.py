"""`protolab play`: a person plays in the browser against a player of the lab (or a second person,
hot seat), and each game is written to a run folder that report, dashboard and replay read
(docs/playtesting.md; the page's API: docs/play-api.md)."""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path

from analysis.runs.played import read_played
from analysis.runs.runfolder import RunDirError
from protolab.commands.common import UsageError, add_pool_args, check_range, serve_until_stopped
from protolab.commands.registry import command_parser
from protolab.experiment.spec import SpecError
from protolab.play.playtest import Playtest, PlaytestError, create, reopen, spec_of
from protolab.play.server import Table, make_server
from sim.cards.loader import CardDataError
from strategies.errors import StrategyError
from strategies.spec import parse as parse_strategy

MAX_PLAY_GAMES = 1000
MAX_SEED = 2**63 - 1


def _trios(given: list[str] | None) -> list[list[str]] | None:
    """--protocols A,B,C X,Y,Z (fixed trios) or `draft` (the players draft; the default)."""
    if not given or given == ["draft"]:
        return None
    trios = [[x.strip() for x in side.split(",")] for side in given]
    if len(trios) != 2 or any(len(t) != 3 for t in trios):
        raise UsageError('--protocols takes two trios, e.g. --protocols Fire,Water,Death Hate,Light,Life, or "draft"')
    return trios


def _open(args: argparse.Namespace) -> Playtest:
    """The playtest: the folder --out names if it holds one (its game continues), else a new one."""
    if args.out is not None and (Path(args.out) / "run.json").is_file():
        given = [
            f
            for f, v in (
                ("--cards", args.cards),
                ("--set", args.set),
                ("--opponent", args.opponent),
                ("--seed", args.seed),
                ("--protocols", args.protocols),
                ("--games", args.games),
                ("--hot-seat", args.hot_seat or None),
            )
            if v is not None
        ]
        if given:
            raise UsageError(
                f"--out {args.out} holds a playtest, which fixes its pool, opponent, seed, trios and games; "
                f"{', '.join(given)} cannot be given (a new --out starts a new playtest)"
            )
        return reopen(args.out)
    games = 1 if args.games is None else args.games
    check_range("--games", games, 1, MAX_PLAY_GAMES)
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    check_range("--seed", seed, 0, MAX_SEED)
    opponent = None if args.hot_seat else (args.opponent or "learned")
    check_opponent(opponent)
    if args.hot_seat and args.opponent:
        raise UsageError("--hot-seat hands seat B to a second person; --opponent cannot be given with it")
    spec = spec_of(opponent, seed, games, _trios(args.protocols), args.cards or [], args.set)
    return create(args.out, spec)


def kept_line(playtest: Playtest, game: int) -> str:
    """What the played/ file of an unfinished game holds, read back (what a restart continues from)."""
    where = playtest.run_dir
    try:
        rec = read_played(where, game)
    except RunDirError as e:
        return f"its played/ file cannot be read back ({e})"
    kept = 0 if rec is None else len(rec.answers)
    return (
        f"its {kept} decisions are kept in {where}/played/ (out of win rates); "
        f"`protolab play --out {where}` continues it"
    )


def check_opponent(opponent: str | None) -> None:
    """`play` runs no user code: a `pkg.mod:Class` opponent is refused with what it can do instead."""
    spec = parse_strategy(opponent) if opponent is not None and ":" in opponent else None
    if spec is not None and spec.is_user:
        raise UsageError(
            f"--opponent {opponent}: {spec.module!r} is a user strategy (Python code), which `protolab play` "
            "does not run; "
            "expected a built-in strategy (e.g. greedy, search, learned), or measure it in an "
            "experiment run with --allow-code"
        )


def cmd_play(args: argparse.Namespace) -> int:
    check_range("--port", args.port, 0, 65535)
    names = {seat: n for seat, n in (("A", args.name), ("B", args.name_b)) if n}
    try:
        playtest = _open(args)
        table = Table(playtest, names)
    except (PlaytestError, SpecError, CardDataError, StrategyError, RunDirError) as e:
        raise UsageError(str(e)) from None
    except OSError as e:  # a full disk while the playtest folder is made or a game's result written
        raise UsageError(f"cannot write the playtest: {e}") from None
    try:
        server = make_server(table, args.port)
    except OSError as e:
        raise UsageError(f"cannot serve on 127.0.0.1:{args.port}: {e}") from None
    where = playtest.run_dir
    print(f"playtest {playtest.run_id} in {where}: {playtest.games} game(s), A = {' vs '.join(playtest.strategies)}")
    serve_until_stopped(server, f"play on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C to stop)")
    with table.lock:  # a decision being written (its game's shard, run.json) is finished first
        pass
    live = table.live
    if live is not None and not live.over:
        print(f"game {live.rec.game_index} unfinished: {kept_line(playtest, live.rec.game_index)}")
    done = len(playtest.done())
    print(f"{done} of {playtest.games} game(s) finished in {where}: protolab report {where}")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    p = command_parser(sub, "play")
    p.add_argument(
        "--opponent",
        metavar="SPEC",
        help="the strategy of seat B (default learned, the lab's strongest player); any spec, e.g. greedy",
    )
    p.add_argument("--hot-seat", action="store_true", help="seat B is a second person at the same screen")
    p.add_argument("--seed", type=int, help="the playtest's master seed (default: a random one, recorded)")
    p.add_argument(
        "--protocols",
        nargs="+",
        metavar="TRIO",
        help='two fixed trios, seat A then seat B ("Fire,Water,Death" "Hate,Light,Life"), or draft (the default)',
    )
    p.add_argument("--games", type=int, help="games in this playtest, played one after another (default 1)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="the playtest's run folder (default: a new one under runs/); one that holds a playtest continues it",
    )
    p.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0: any free port)")
    p.add_argument("--name", help="the name of the person in seat A, kept with each game")
    p.add_argument("--name-b", help="with --hot-seat: the name of the person in seat B")
    add_pool_args(p)
    p.set_defaults(func=cmd_play)
