"""`protolab run SPEC`: the experiment subcommand, registered by protolab/cli.py."""

from __future__ import annotations

import argparse

from protolab.commands.common import (
    add_decision_timeout,
    add_run_folder,
    add_storage_timeout,
    check_ray,
    report_console,
    until_interrupted,
)
from protolab.commands.registry import command_parser
from protolab.experiment.meta.psro import main_psro
from protolab.experiment.run.runner import RunOptions, main_run
from protolab.experiment.spec import Spec, load_spec


def add_commands(subparsers) -> None:
    p = command_parser(
        subparsers,
        "run",
        description="Run an experiment (docs/experiments.md): every game seeded, shards on Ray, "
        "a run folder of Parquet files with a run.json manifest (docs/data.md). Without --address, "
        "a local Ray on 127.0.0.1 uses every core and stops afterwards.",
    )
    p.add_argument(
        "spec",
        nargs="?",
        metavar="SPEC",
        help="experiment file, or the name of a shipped example (demo, protocol_balance, fire1_ab)",
    )
    p.add_argument("--games", type=int, metavar="N", help="games per matchup, instead of the spec's `games`")
    add_run_folder(p, "the spec's output", "finish an interrupted run, replaying only missing or damaged shards")
    add_decision_timeout(p)
    add_storage_timeout(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    check_ray(args)
    opts = RunOptions.of_args(args, games=args.games, allow_code=args.allow_code)
    console = report_console(120)  # logs and pipes: room for the A/B table

    def work() -> int:
        # the spec is read once, here (a bad spec or run folder: protolab.cli.main reports it)
        spec = load_spec(args.spec, games=args.games) if args.spec and not args.resume else args.spec
        if isinstance(spec, Spec) and spec.meta is not None:  # [meta]: the PSRO loop
            return main_psro(spec, opts, console)
        return main_run(spec, opts, console)

    return until_interrupted(work)
