"""`protolab power SPEC`: before a run, how many games it needs to see an effect of a given size, and
how small an effect the spec's own `games` would see; from a pilot of the spec's own players on its
own pool (and arms), played here in seconds for greedy."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import pandas as pd
from rich.table import Table

from analysis.stats.power import protocol_power
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
from protolab.experiment.pools import pool_of
from protolab.experiment.spec import check_code, load_spec, spec_strategies
from protolab.experiment.tune.tuneplay import arm_files, arm_job, player, search_seeds


def add_commands(subparsers) -> None:
    p = command_parser(
        subparsers,
        "power",
        description="Play a pilot of the spec's players on its pool (random drafts) and answer, per protocol: with "
        "[[arms]], how many games per arm a paired A/B needs to see a change of --effect points, and "
        "the smallest change the spec's `games` would see; without arms, the same for a protocol's "
        "distance from 50%. Spreads come from the pilot's paired per-game differences, so a design in "
        'which most seeds play alike in both arms is credited for it (docs/analysis.md, "How many '
        'games").',
    )
    p.add_argument("spec", metavar="SPEC", help="an experiment spec, or a shipped example's name (fire1_ab)")
    p.add_argument(
        "--effect",
        type=float,
        default=3.0,
        metavar="POINTS",
        help="the change (or distance from 50%%) to see, in win-rate points (default 3)",
    )
    p.add_argument("--pilot", type=int, default=4000, metavar="N", help="pilot games per arm (default 4000)")
    p.add_argument("--power", type=float, default=0.8, help="chance of seeing the effect (default 0.8)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided error rate (default 0.05)")
    add_ray(p, "the pilot in this process, without Ray")
    add_format(p, "the games each protocol needs")
    add_allow_code(p)
    p.set_defaults(func=cmd_power)


def _table(df, title: str, games: int, effect: float) -> Table:
    t = Table("protocol", "plays", "spread", f"games for {effect:g} pts", f"seen at {games:,}", title=title)
    for r in df.sort_values("games_needed", na_position="last").itertuples():
        needed = "-" if r.games_needed != r.games_needed else f"{int(r.games_needed):,}"
        seen = "-" if r.detectable != r.detectable else f"{100 * r.detectable:.1f} pts"
        t.add_row(r.protocol, f"{100 * r.plays:.0f}%", f"{r.spread:.3f}", needed, seen)
    return t


def cmd_power(args: argparse.Namespace) -> int:
    check_range("--effect", args.effect, 0.1, 50)
    check_range("--pilot", args.pilot, 100, 10_000_000)
    check_range("--power", args.power, 0.5, 0.999)
    check_range("--alpha", args.alpha, 1e-6, 0.5)
    check_ray(args)
    spec = load_spec(args.spec)
    check_code(spec.source, spec_strategies(spec), args.allow_code)
    if spec.draft.mode != "random":
        raise UsageError(
            f"{spec.source}: key 'draft.mode': protolab power plays a random-draft pilot; expected "
            f'"random", got {spec.draft.mode!r}'
        )
    if any(a.strategies != spec.arms[0].strategies for a in spec.arms[1:]):
        raise UsageError(
            f"{spec.source}: key 'tiers': a tier study compares players, not cards; give protolab "
            "power an A/B of card pools or a single pool"
        )

    def work() -> int:
        with ray_jobs(args, local_by_default=True) as runner:
            seeds = search_seeds(spec.seed, 0, args.pilot)
            jobs = [arm_job(spec, a, seeds) for a in spec.arms]
            results = [np.asarray(r) for r in player(runner)(jobs)]
        names = pool_of(tuple(spec.arms[0].sets), arm_files(spec.arms[0])).protocols
        effect = args.effect / 100
        frames = (
            [("distance from 50%", protocol_power(results[0], None, names, effect, spec.games, args.alpha, args.power))]
            if len(results) == 1
            else [
                (
                    f"{a.name} - {spec.arms[0].name}",
                    protocol_power(results[0], r, names, effect, spec.games, args.alpha, args.power),
                )
                for a, r in zip(spec.arms[1:], results[1:], strict=True)
            ]
        )
        emit(frames, args, spec.games)
        return 0

    return until_interrupted(work)


def emit(frames, args: argparse.Namespace, games: int) -> None:
    if args.format == "json":
        json.dump(
            {
                "effect": args.effect,
                "power": args.power,
                "alpha": args.alpha,
                "pilot": args.pilot,
                "games": games,
                "comparisons": [{"comparison": t, "protocols": df.to_dict("records")} for t, df in frames],
            },
            sys.stdout,
            indent=1,
            default=float,
        )
        print()
        return
    if args.format == "csv":
        pd.concat([df.assign(comparison=t) for t, df in frames]).to_csv(sys.stdout, index=False)
        return
    console = report_console(120)
    for title, df in frames:
        console.print(_table(df, title, games, args.effect))
    console.print(
        f"Pilot: {args.pilot:,} games per arm; games needed for {100 * args.power:.0f}% power at "
        f"alpha {args.alpha:g} (two-sided, fixed size); `seen at` is the smallest effect the spec's "
        f"{games:,} games per arm would see with that power."
    )
