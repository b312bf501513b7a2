"""`protolab cardvalue PROTOCOL|CARD...`: what each card is worth, by restricted play on Ray
(protolab/experiment/run/cardvalue.py builds and analyses the experiment)."""

from __future__ import annotations

import argparse

from protolab.commands.common import (
    add_format,
    add_run_folder,
    add_storage_timeout,
    check_ray,
    report_console,
    until_interrupted,
)
from protolab.commands.registry import command_parser
from protolab.experiment.run.cardvalue import DEFAULT_GAMES, main_cardvalue


def cmd_cardvalue(args: argparse.Namespace) -> int:
    """Bad input (a spec, run folder, card file) ends in protolab.cli.main as one line, exit 2."""
    check_ray(args)
    console = report_console(160, stderr=args.format != "table")  # json/csv: stdout holds only the table
    return until_interrupted(lambda: main_cardvalue(args, console))


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    p = command_parser(
        subparsers,
        "cardvalue",
        description="Card value by restricted play (docs/strategies.md, Card value): for each card, the side "
        "holding its protocol plays S+avoid:CARD and S+noup:CARD against S on the seeds and trios of a "
        "baseline S vs S, seats swapped; the baseline plays every protocol's matchups once, a card's arms "
        "only its own protocol's. Value = unrestricted minus restricted win rate, in points, with "
        "a paired 95% interval and a Holm-corrected p-value. Writes a normal run folder.",
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="PROTOCOL|CARD",
        help="a protocol (its six cards) or a card, e.g. Fire or 'Fire 1' (repeatable)",
    )
    p.add_argument("--strategy", metavar="S", help="the strategy both sides play (default greedy)")
    p.add_argument(
        "--games",
        type=int,
        metavar="N",
        help=f"games per card and restriction, even (default {DEFAULT_GAMES}: {DEFAULT_GAMES // 2} "
        "matchups of one seat-swapped pair)",
    )
    p.add_argument("--seed", type=int, metavar="S", help="master seed (default 1)")
    p.add_argument("--set", action="append", metavar="SET", help="card set of the pool (repeatable; default all four)")
    p.add_argument("--cards", action="append", metavar="FILE", help="protocol or variant file to add (repeatable)")
    add_format(p, "the card values (json and csv on stdout, progress on stderr)")
    add_run_folder(
        p,
        "runs",
        "finish an interrupted card-value run",
        "the spec of a --resume run names (--strategy needs no flag: named here, not in a file)",
    )
    add_storage_timeout(p)
    p.set_defaults(func=cmd_cardvalue)
