"""`protolab run SPEC`: the experiment subcommand, registered by protolab/cli.py."""

from __future__ import annotations

import argparse
import os

from protolab.commands.common import (
    add_allow_code,
    add_decision_timeout,
    add_storage_timeout,
    check_range,
    report_console,
    until_interrupted,
)
from protolab.commands.registry import summary
from protolab.experiment.meta.psro import main_psro
from protolab.experiment.run.runner import RunOptions, main_run
from protolab.experiment.spec import Spec, load_spec

MAX_WORKERS = 100_000  # --workers with --address: tasks in flight


def add_commands(subparsers) -> None:
    p = subparsers.add_parser(
        "run",
        help=summary("run"),
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
    p.add_argument(
        "--workers",
        type=int,
        metavar="K",
        help="shards played at once (default: every core here, or every CPU of the cluster)",
    )
    p.add_argument(
        "--address", metavar="ADDR", help="join this Ray cluster (e.g. 10.0.0.1:6379) instead of starting a local one"
    )
    p.add_argument(
        "--connect-timeout",
        type=float,
        metavar="S",
        default=None,
        help="with --address: give up after S seconds if the cluster does not answer (default 20)",
    )
    p.add_argument("--out", metavar="DIR", help="folder to create the run folder in (default: the spec's output)")
    p.add_argument(
        "--resume", metavar="RUN_DIR", help="finish an interrupted run, replaying only missing or damaged shards"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_allow_code(p)

    add_decision_timeout(p)
    add_storage_timeout(p)
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    # a local Ray starts one worker process per CPU it is given: more than a few per core only fills memory
    check_range("--workers", args.workers, 1, MAX_WORKERS if args.address else 4 * (os.cpu_count() or 1))
    opts = RunOptions(
        workers=args.workers,
        address=args.address,
        out=args.out,
        resume=args.resume,
        games=args.games,
        show_progress=not args.no_progress,
        allow_code=args.allow_code,
    )
    if args.connect_timeout is not None:
        opts.connect_timeout = args.connect_timeout
    console = report_console(120)  # logs and pipes: room for the A/B table

    def work() -> int:
        # the spec is read once, here (a bad spec or run folder: protolab.cli.main reports it)
        spec = load_spec(args.spec, games=args.games) if args.spec and not args.resume else args.spec
        if isinstance(spec, Spec) and spec.meta is not None:  # [meta]: the PSRO loop
            return main_psro(spec, opts, console)
        return main_run(spec, opts, console)

    return until_interrupted(work)
