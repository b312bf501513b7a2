"""`protolab cardvalue PROTOCOL|CARD...`: what a card is worth to the player holding it, measured by
restricted play (docs/strategies.md, "Card value"), as one ordinary experiment on Ray.

The command builds a spec (draft mode `holding`: for each tested protocol P, GAMES/2 matchups whose
seat-0 trio holds P with two other protocols drawn from the pool, against three more; seats swapped on
paired seeds) with a `baseline` arm (S against S) and, per card, an arm `avoid-CARD` (S+avoid:CARD
against S) and an arm `noup-CARD` (S+noup:CARD against S). The baseline plays every protocol's block of
matchups; a card's arms play only its own protocol's block (`holds`, spec.Arm.holds), on the baseline's
seeds and trios, so the games grow with the cards, not with protocols x cards. The run folder is a
normal, resumable A/B run; analysis/studies/balance/card_values.py turns it into the table."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from rich.console import Console

from analysis.pages.shell import write_page
from analysis.runs import runfolder
from analysis.runs.manifest import Manifest
from analysis.runs.provenance import csv_header, print_lines, provenance
from analysis.runs.storage import Location
from analysis.studies import Options
from analysis.studies.balance.card_values import design_of, print_card_value, restriction_problems
from analysis.studies.balance.report import records
from analysis.studies.cardvalue.study import CardValue
from protolab.experiment.run.plan import load_arm_pool
from protolab.experiment.run.runner import RunFailed, RunOptions, RunResult, run
from protolab.experiment.spec import MAX_ARMS, Spec, SpecError, check_strategy, parse_spec
from protolab.experiment.spec.strategy import NOT_NAME
from sim.pool import DEFAULT_SETS, CardInfo, Pool

DEFAULT_GAMES = 2000
SOURCE = "protolab cardvalue"


# -- the spec ---------------------------------------------------------------------------------------


def expand_targets(pool: Pool, items: list[str]) -> list[CardInfo]:
    """The cards to test: a protocol name stands for its six cards (by value), a card for itself;
    each card once, in the order given."""
    out: dict[str, CardInfo] = {}
    for item in items:
        name = item.strip().lower()
        if name in pool.protocol_id:
            proto = pool.protocols[pool.protocol_id[name]]
            cards = sorted((c for c in pool.cards if c.protocol == proto), key=lambda c: (c.value, c.name))
        elif name in pool.by_name:
            cards = [pool.by_name[name]]
        else:
            raise SpecError(
                f"{item!r}: not a protocol or card of the pool; expected a protocol "
                f"({', '.join(pool.protocols)}) or a card such as 'Fire 1'"
            )
        for c in cards:
            out.setdefault(c.name, c)
    return list(out.values())


def arm_name(restriction: str, card: str, taken: set[str]) -> str:
    """A spec-safe, unique arm name such as `avoid-Fire_1` (the card itself is read from the strategy)."""
    base = f"{restriction}-{NOT_NAME.sub('_', card).strip('_')}"[:60]
    name, k = base, 2
    while name in taken:
        name, k = f"{base[:57]}-{k}", k + 1
    taken.add(name)
    return name


def _raw_spec(
    strategy: str,
    games: int,
    seed: int,
    sets: list[str],
    cards: list[str],
    output: str,
    holders: list[str],
    tested: list[CardInfo],
    label: str,
) -> dict[str, Any]:
    """The TOML tables of a card-value spec (docs/experiments.md), before validation."""
    taken = {"baseline"}
    arms: list[dict[str, Any]] = [{"name": "baseline"}]
    for c in tested:
        for restriction in ("avoid", "noup"):
            arms.append(
                {
                    "name": arm_name(restriction, c.name, taken),
                    "strategies": [f"{strategy}+{restriction}:{c.name}", strategy],
                    "holds": c.protocol,
                }
            )
    return {
        "name": f"cardvalue-{NOT_NAME.sub('_', label).strip('_')}"[:64],
        "seed": seed,
        "games": 2,
        "description": f"card value under {strategy} of {label} ({SOURCE})",
        "output": output,
        "events": True,
        "pool": {"sets": sets, "cards": cards},
        "seats": {"strategies": [strategy, strategy], "swap": True},
        "draft": {"mode": "holding", "protocols": holders, "samples": games // 2},
        "arms": arms,
    }


def card_value_spec(
    items: list[str],
    strategy: str = "greedy",
    games: int = DEFAULT_GAMES,
    seed: int = 1,
    sets: list[str] | None = None,
    cards: list[str] | None = None,
    output: str = "runs",
) -> Spec:
    """Validate the command's input and build its spec; every bad input is a one-line SpecError."""

    if not items:
        raise SpecError("expected at least one PROTOCOL or CARD (e.g. Fire, or 'Fire 1'), or --resume RUN_DIR")
    try:
        strategy = check_strategy(strategy)
    except ValueError as e:
        raise SpecError(f"--strategy: {e}") from None
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise SpecError(
            f"--games: expected an even number of games per card, at least 2 (each seed is played "
            f"twice, seats swapped), got {games}"
        )
    if not 0 <= seed < 2**63:
        raise SpecError(f"--seed: expected a whole number 0 .. 2^63-1, got {seed}")
    sets, cards = list(sets or DEFAULT_SETS), list(cards or [])
    try:
        base = parse_spec(
            {"name": "cardvalue", "seed": seed, "games": 2, "pool": {"sets": sets, "cards": cards}}, SOURCE, Path.cwd()
        )
        pool = load_arm_pool(base.arms[0], SOURCE, "--set/--cards")
    except SpecError as e:  # name the command's options, not the spec keys they fill
        msg = re.sub(rf"^{SOURCE}: key '(pool\.cards\[\d+\]|--set/--cards)': ", "", str(e))
        raise SpecError(f"--set/--cards: {msg.replace('the spec' + chr(39) + 's folder', 'this folder')}") from None
    tested = expand_targets(pool, items)
    if 1 + 2 * len(tested) > MAX_ARMS:
        raise SpecError(
            f"expected at most {(MAX_ARMS - 1) // 2} cards in one run (each takes two arms, a run has at "
            f"most {MAX_ARMS}), got {len(tested)}: split them over several runs"
        )
    holders = list(dict.fromkeys(c.protocol for c in tested))
    raw = _raw_spec(strategy, games, seed, sets, cards, output, holders, tested, "_".join(items))
    return parse_spec(raw, SOURCE, Path.cwd())


# -- running and reporting --------------------------------------------------------------------------


def check_resumable(run_dir: str) -> None:
    """`--resume` takes only a card-value run (a different run resumes with `protolab run --resume`)."""

    if design_of(runfolder.read_manifest(Path(run_dir))) is None:
        raise SpecError(
            f"{run_dir}: not a card-value run (run.json has no baseline arm and restricted arms in "
            "draft mode 'holding'); expected a folder written by protolab cardvalue"
        )


def analyse(run_dir: Path | Location) -> tuple[pd.DataFrame, Path]:
    """Open the finished run as its study (its baseline arm's report, card values from every arm) and
    write its page into the run folder, as `protolab run` does; returns (card-value table, page path)."""

    study = CardValue.open([str(run_dir)], Options())
    out = Path(run_dir) / "dashboard.html"
    write_page(out, study.page())
    return study.report.tables["card_value"], out


def emit(table: pd.DataFrame, fmt: str, meta: dict[str, Any], console: Console) -> None:
    """The table on stdout: a rich table, JSON ({meta, cards}) or CSV."""

    if fmt == "json":
        print(json.dumps({"meta": meta, "cards": records(table)}, indent=1))
    elif fmt == "csv":
        sys.stdout.write(csv_header(meta.get("provenance") or []) + table.to_csv(index=False))
    else:
        print_lines(meta.get("provenance") or [], console)
        print_card_value(table, console)
        console.print(
            f"Run folder: {meta['run_dir']} (protolab report {meta['run_dir']}); dashboard: {meta['dashboard']}"
        )


def baseline_only(manifest: Manifest) -> Manifest:
    """The manifest as `protolab report RUN` opens a card-value run (its baseline arm), so the command's
    provenance header is the report's."""
    return dataclasses.replace(manifest, shards=[s for s in manifest.shards if s.arm == "baseline"])


def main_cardvalue(args: argparse.Namespace, console: Console) -> int:
    """Validate, run on Ray, analyse, print; the exit status (1 when a restriction did not hold)."""

    spec = _spec_of(args)
    # --strategy: named here, not in a file; --resume: the run's spec, a file
    opts = RunOptions.of_args(args, allow_code=not args.resume or args.allow_code)
    t0 = time.perf_counter()
    try:
        result = run(spec, opts, console)
    except RunFailed as e:
        print(f"protolab: error: {e}", file=sys.stderr)
        return 1
    if result.status != "complete":
        return 128 + int(getattr(result, "signum", 2))
    table, dashboard = analyse(result.run_dir)
    meta = _meta(result, table, dashboard, round(time.perf_counter() - t0, 1))
    emit(table, args.format, meta, console)
    problems = restriction_problems(table)
    for p in problems:
        print(f"protolab: error: restriction did not hold: {p}", file=sys.stderr)
    return 1 if problems else 0


def _spec_of(args: argparse.Namespace) -> Spec | None:
    """The card-value spec the arguments ask for; None with --resume (the run's own spec), which
    takes no other choice of cards, strategy, games or seed."""
    given = [f"--{k}" for k in ("strategy", "games", "seed", "set", "cards") if getattr(args, k) is not None]
    if args.resume and (args.targets or given):
        raise SpecError(
            f"--resume: a run keeps its own cards, strategy, games and seed; drop "
            f"{', '.join(given) or ' '.join(args.targets)}"
        )
    if args.resume:
        check_resumable(args.resume)
        return None
    return card_value_spec(
        args.targets,
        args.strategy or "greedy",
        DEFAULT_GAMES if args.games is None else args.games,
        1 if args.seed is None else args.seed,
        args.set,
        args.cards,
        args.out or "runs",
    )


def _meta(result: RunResult, table: pd.DataFrame, dashboard: Path, seconds: float) -> dict[str, Any]:
    """What the output says beside the table: the run, its design, the command's time and where its page is."""
    m = result.manifest
    assert m is not None and m.spec.draft is not None  # a complete card-value run: its run.json, its draft
    return {
        "run_dir": str(result.run_dir),
        "run_id": m.run_id,
        "strategy": table.attrs.get("strategy"),
        "games_per_card": 2 * m.spec.draft.samples,
        "seed": m.spec.seed,
        "games": result.games,
        "games_baseline": table.attrs.get("games_baseline"),
        "seconds": seconds,
        "correction": "holm",
        "dashboard": str(dashboard),
        "provenance": [provenance(baseline_only(m), result.run_dir)],
    }
