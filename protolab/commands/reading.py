"""Opening run folders for the analysis commands (report, compare, dashboard, meta): the shared
options, verification and how its warnings reach the reader."""

from __future__ import annotations

import argparse
import sys

from analysis.runs.open import RunError, Runs, open_runs
from analysis.runs.verify import LEVELS as VERIFY_LEVELS
from analysis.stats.proportions import CORRECTIONS
from analysis.studies.balance.arms import arm_paths
from protolab.commands.common import UsageError, add_storage_timeout


def open_given(paths: list[str], args: argparse.Namespace) -> Runs:
    try:
        return open_runs(paths, threads=args.threads, verify=args.verify, trust=args.trust)
    except RunError as e:
        raise UsageError(str(e)) from None


def warn(runs: Runs, shown_with_figures: bool) -> None:
    """Warnings (with --trust: what verification found) go to stderr when the output itself
    (json, csv, a dashboard file) would not show them in front of the reader."""
    if not shown_with_figures:
        for w in runs.warnings:
            print(f"protolab: warning: {w}", file=sys.stderr)


def arms_of(paths: list[str]) -> list[str] | None:
    """`RUN#arm` for each arm when `paths` is one A/B run, else None (analysis.studies.balance.arms.arm_paths)."""

    try:
        return arm_paths(paths)
    except RunError as e:
        raise UsageError(str(e)) from None


def add_read_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--correction",
        choices=sorted(CORRECTIONS),
        default="holm",
        help="multiple-comparison correction: holm (family-wise) or bh (false discovery rate); default holm",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level after correction (default 0.05)")
    p.add_argument("--threads", type=int, help="DuckDB threads (default: all cores)")
    p.add_argument(
        "--verify",
        choices=VERIFY_LEVELS,
        default="fast",
        help="checks against run.json before reading: fast (default) checksums every file the "
        "figures come from and checks size and row count of the others; full checksums every "
        "file, events included",
    )
    p.add_argument(
        "--trust",
        action="store_true",
        help="report what verification finds as warnings and compute the figures anyway "
        "(a run given twice is opened once)",
    )
    add_storage_timeout(p)


MAX_THREADS = 256
