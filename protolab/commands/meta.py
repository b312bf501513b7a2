"""`protolab meta RUN... [--format table|json|csv] [--bootstrap N] [--compare BASE_RUN]`: the metagame
of one or more runs or a PSRO loop folder (analysis/studies/balance/meta.py, docs/analysis.md "Metagame")."""

from __future__ import annotations

import argparse
import sys

from analysis.runs.open import RunError
from analysis.runs.verify import LEVELS as VERIFY_LEVELS
from analysis.studies.balance import meta as M
from analysis.studies.balance.meta_report import TABLES, moved_table, print_meta, table_of, to_json
from analysis.studies.balance.picks import draft_section
from protolab.commands.common import UsageError, add_format, add_storage_timeout, console
from protolab.commands.reading import MAX_THREADS, arms_of, open_given, warn
from protolab.commands.registry import command_parser

MAX_BOOTSTRAP = 1000


def _expand(paths: list[str]) -> tuple[list[str], dict | None]:
    """Run folders to open: a loop folder stands for its iteration runs (and brings its manifest)."""

    out, loop = [], None
    for p in paths:
        try:
            found = M.loop_runs(p)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if found is None:
            out.append(p)
        else:
            out.extend(found[0])
            loop = found[1]
    return out, loop


def _analyse(paths: list[str], args: argparse.Namespace) -> M.MetaResult:
    runs_paths, loop = _expand(paths)
    if len(runs_paths) == 1 and arms_of(runs_paths):
        raise UsageError(f"{runs_paths[0]}: an A/B run; give one arm ({runs_paths[0]}#ARM): arms are never pooled")
    runs = open_given(runs_paths, args)
    warn(runs, args.format == "table")
    try:
        res = M.analyse_runs(runs, args.bootstrap, args.seed, args.prior_games, args.rank_alpha, args.population)
        draft = draft_section(runs)
        if draft is not None:
            res.picks, res.first_pick = draft["picks"], draft["first_pick"]
    except (RunError, ValueError) as e:
        raise UsageError(f"{', '.join(paths)}: {e}") from None
    finally:
        runs.close()
    if loop is not None:
        res.iterations = M.iterations_table(loop)
        res.meta["stopped"] = loop.get("stopped")
    return res


def _check(args: argparse.Namespace) -> None:
    checks = [
        (
            not 0 <= args.bootstrap <= MAX_BOOTSTRAP,
            f"--bootstrap: expected 0 to {MAX_BOOTSTRAP} replicates, got {args.bootstrap}",
        ),
        (not 0 <= args.prior_games <= 1e6, f"--prior-games: expected 0 to 1,000,000, got {args.prior_games:g}"),
        (
            not 0 < args.rank_alpha <= 1e4,
            f"--rank-alpha: expected a number above 0 and at most 10,000, got {args.rank_alpha:g}",
        ),
        (not 2 <= args.population <= 10_000, f"--population: expected 2 to 10,000, got {args.population}"),
        (not 0 <= args.seed < 2**63, f"--seed: expected 0 .. 2^63-1, got {args.seed}"),
        (
            args.threads is not None and not 1 <= args.threads <= MAX_THREADS,
            f"--threads: expected 1 to {MAX_THREADS}, got {args.threads}",
        ),
    ]
    for bad, msg in checks:
        if bad:
            raise UsageError(msg)


def cmd_meta(args: argparse.Namespace) -> int:
    _check(args)
    if args.table not in TABLES:
        raise UsageError(f"--table: unknown table {args.table!r}; tables: {', '.join(TABLES)}")
    res = _analyse(args.runs, args)
    moved = moved_table(_analyse([args.compare], args), res) if args.compare else None
    if args.format == "json":
        print(to_json(res, moved))
    elif args.format == "csv":
        (moved if moved is not None and args.table == "protocols" else table_of(res, args.table)).to_csv(
            sys.stdout, index=False
        )
    else:
        print_meta(res, console(wide=True), moved=moved)
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    """Register `protolab meta` (called from protolab/commands/analysis.py's add_commands)."""
    p = command_parser(
        sub,
        "meta",
        description="The symmetric zero-sum game 'choose a trio' over a run's trio-vs-trio games "
        "(unplayed pairs from a logistic payoff model): its Nash equilibrium, Nash-averaged "
        "ratings, alpha-rank and meta health, with bootstrap intervals over matchups "
        "(docs/analysis.md, Metagame). RUN may be a PSRO loop folder.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folder(s), RUN#arm, or a metagame loop folder")
    add_format(p, "the metagame's tables; json: all of them with its health; csv: one table (--table)")
    p.add_argument(
        "--table",
        default="protocols",
        help="with --format csv: protocols (default), trios, fit, "
        "iterations, picks or first_pick (a drafted run's picks)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=M.BOOTSTRAP,
        help=f"bootstrap replicates over matchups for the intervals (default {M.BOOTSTRAP}; 0: none)",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of the bootstrap and the cross-validation folds")
    p.add_argument(
        "--prior-games",
        type=float,
        default=M.PRIOR_GAMES,
        help=f"shrink each played pair's rate toward the model by this many games (default "
        f"{M.PRIOR_GAMES:g}; 0: raw rates)",
    )
    p.add_argument(
        "--rank-alpha", type=float, default=M.ALPHA, help=f"alpha-rank selection intensity (default {M.ALPHA:g})"
    )
    p.add_argument(
        "--population", type=int, default=M.POPULATION, help=f"alpha-rank population size (default {M.POPULATION})"
    )
    p.add_argument("--compare", metavar="BASE_RUN", help="also show how the equilibrium moved from BASE_RUN")
    p.add_argument("--threads", type=int, help="DuckDB threads (default: all cores)")
    p.add_argument("--verify", choices=VERIFY_LEVELS, default="fast", help="checks against run.json (as report)")
    p.add_argument("--trust", action="store_true", help="verification problems as warnings (as report)")
    add_storage_timeout(p)
    p.set_defaults(func=cmd_meta)
