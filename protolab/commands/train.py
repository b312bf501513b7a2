"""`protolab train SPEC`: the training loop (protolab/experiment/train/train.py), registered by protolab/cli.py."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from analysis.pages.shell import write_page
from analysis.studies import open_study
from protolab.commands.common import (
    UsageError,
    add_allow_code,
    add_format,
    add_no_progress,
    add_ray,
    check_ray,
    ray_jobs,
    report_console,
    until_interrupted,
)
from protolab.commands.registry import command_parser
from protolab.experiment.spec import check_code
from protolab.experiment.spec.files import read_spec_file
from protolab.experiment.train.fit import EXTRA_HINT, FitUnavailable, libraries
from protolab.experiment.train.qtrain import parse_qtrain, run_qtrain
from protolab.experiment.train.train import Trainer, main_train, recorded_models, resumed_spec, train_folder
from protolab.experiment.train.trainspec import load_train_spec, train_strategies

DEFAULT_MODELS = "datasets/models"


def add_commands(subparsers) -> None:
    p = command_parser(
        subparsers,
        "train",
        description="Train a learned player (docs/training.md): each generation plays its example games on Ray "
        "(generation 0 by an expert, later ones by the current model against itself), keeps them as "
        "Parquet, fits the value network (scikit-learn, the [train] extra), measures the model with the "
        "ladder and records everything in train.json; the chosen model is written with its model card.",
    )
    p.add_argument("spec", nargs="?", metavar="SPEC", help="a training spec, or a shipped one's name (train_learned)")
    p.add_argument(
        "--out",
        metavar="DIR",
        help="the training folder (default: a new folder in the spec's output); "
        "a folder holding this spec's training resumes it",
    )
    p.add_argument(
        "--resume",
        metavar="DIR",
        help="go on with the training in DIR (its recorded spec unless SPEC "
        "is given), after checking its finished generations' files",
    )
    p.add_argument(
        "--models",
        metavar="DIR",
        help=f"where the model NAME.json and its card NAME.md are written (default: the folder the training "
        f"was first given, else {DEFAULT_MODELS}, relative to this folder)",
    )
    add_ray(p, "every core; 1: in this process, without Ray")
    add_no_progress(p)
    add_format(p, "the finished training as tables or one JSON object", csv=False)
    add_allow_code(p)
    p.set_defaults(func=cmd_train)


def cmd_qtrain(args: argparse.Namespace, raw: dict, source: str) -> int:
    """An action-value spec (a [qtrain] table): one process, no Ray (protolab/experiment/train/qtrain.py)."""
    spec = parse_qtrain(raw, source)
    models = Path(args.models) if args.models else Path(DEFAULT_MODELS)
    console = report_console(120, stderr=args.format == "json")

    def work() -> int:
        record = run_qtrain(spec, models, console.print)
        if args.format == "json":
            print(json.dumps(record, default=str))
        else:
            console.print(f"model {record['model_hash']}: {models / spec.model}.json and its card {spec.model}.md")
        return 0

    return until_interrupted(work)


def cmd_train(args: argparse.Namespace) -> int:
    if args.spec and not args.resume:
        raw, source, _ = read_spec_file(args.spec)
        if "qtrain" in raw:
            return cmd_qtrain(args, raw, source)
    try:
        libraries()
    except FitUnavailable:
        raise UsageError(EXTRA_HINT) from None
    check_ray(args)
    if not args.spec and not args.resume:
        raise UsageError("expected SPEC (a training spec or a shipped one's name) or --resume DIR")
    if args.resume and args.out and Path(args.resume) != Path(args.out):
        raise UsageError("--resume DIR is the training folder; give --out only without --resume")
    spec = load_train_spec(args.spec) if args.spec else resumed_spec(Path(args.resume))
    check_code(spec.source, train_strategies(spec), args.allow_code)
    folder = Path(args.resume) if args.resume else train_folder(spec, args.out)
    models = Path(args.models) if args.models else recorded_models(folder) or Path(DEFAULT_MODELS)
    console = report_console(120, stderr=args.format == "json")

    def work() -> int:
        with ray_jobs(args) as runner:
            trainer = Trainer(spec, folder, runner, console.print, progress=not args.no_progress)
            trainer.console = console
            try:
                main_train(trainer, models)
            except KeyboardInterrupt:
                print(
                    f"protolab: stopped; the finished generations are kept in {folder}/ "
                    f"(protolab train --resume {folder})",
                    file=sys.stderr,
                )
                return 130
        study = open_study([str(folder)])
        write_page(folder / "dashboard.html", study.page())
        if args.format == "json":
            print(study.to_json())
        else:
            study.print(report_console(120))
            console.print(f"Training folder: {folder}; {study.PAGE_LABEL}: {folder / 'dashboard.html'}")
        return 0

    return until_interrupted(work)
