"""`protolab tune SPEC`: the balance search subcommand (protolab/experiment/tune/tune.py), registered by
protolab/cli.py."""

from __future__ import annotations

import argparse
import dataclasses

from analysis.pages.cells import shown_path
from analysis.pages.shell import write_page
from analysis.studies import open_study
from protolab.commands.common import (
    UsageError,
    add_allow_code,
    add_format,
    add_ray,
    check_range,
    check_ray,
    ray_jobs,
    report_console,
    until_interrupted,
)
from protolab.commands.registry import command_parser
from protolab.experiment.spec import SpecError, check_code, load_spec, spec_strategies
from protolab.experiment.tune.tune import main_tune, read_done, tune_folder
from protolab.experiment.tune.tuneplay import player


def add_commands(subparsers) -> None:
    p = command_parser(
        subparsers,
        "tune",
        description='A balance search (docs/experiments.md, "Balance search"): candidates of at most '
        "tune.max_changes knob turns, proposed by Optuna, each judged against the baseline on the same "
        "seeds until its effect is settled (anytime-valid intervals), the Pareto front of imbalance and "
        "changed cards re-played on fresh seeds and written as variant files.",
    )
    p.add_argument("spec", metavar="SPEC", help="a spec with a [tune] table, or a shipped example's name (tune_fire)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="the search folder (default: a new folder in the spec's output); "
        "a folder holding this spec's search resumes it",
    )
    p.add_argument("--trials", type=int, metavar="N", help="candidates to judge, instead of tune.trials")
    add_ray(p, "every core; 1: in this process, without Ray")
    add_format(p, "the verified result as tables or one JSON object", csv=False)
    add_allow_code(p)
    p.set_defaults(func=cmd_tune)


def cmd_tune(args: argparse.Namespace) -> int:
    try:
        import optuna  # noqa: F401  (the search's optimizer, an optional extra)
    except ImportError:
        raise UsageError(
            'protolab tune needs the optional package Optuna: pip install "protolab[tune]" (or pip install optuna)'
        ) from None
    check_ray(args)
    check_range("--trials", args.trials, 1, 2000)
    spec = load_spec(args.spec)
    check_code(spec.source, spec_strategies(spec), args.allow_code)
    if spec.tune is None:
        raise UsageError(
            f"{spec.source}: key 'tune': missing; `protolab tune` needs a spec with a [tune] table "
            '(see docs/experiments.md, "Balance search")'
        )
    if args.trials is not None:
        spec = dataclasses.replace(spec, tune={**spec.tune, "trials": args.trials})
    folder = tune_folder(spec, args.out)
    console = report_console(120, stderr=args.format == "json")

    def work() -> int:
        with ray_jobs(args) as runner:
            main_tune(spec, folder, player(runner), console.print)
        study = open_study([str(folder)])
        if args.format == "json":
            print(study.to_json())
            write_page(folder / "dashboard.html", study.page())
        else:
            study.conclude(report_console(120), folder)
            console.print(f"Search folder: {shown_path(folder)}")
        return 0

    def kept() -> str | None:
        try:
            n = len(read_done(folder, spec))
        except SpecError:
            n = 0
        where = shown_path(folder)
        return (
            f"{n} trial{'s' * (n != 1)} kept in {where}/ (protolab tune {args.spec} --out {where} goes on from them)"
            if n
            else f"no trial finished; nothing kept in {where}/"
        )

    return until_interrupted(work, kept)
