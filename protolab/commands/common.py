"""What every `protolab` subcommand shares: the user-error type, range checks, the option families
(`--format`, `--workers`/`--address`/`--connect-timeout`, `--out` of a run folder, `--no-progress`, the
pool and the timeouts; each declared once here, with one help text), and the console. The floor of the
command modules: it imports no command."""

from __future__ import annotations

import argparse
import csv
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from rich.console import Console

from analysis.runs.models import describe_models, models_used
from analysis.runs.storage import DEFAULT_TIMEOUT as STORAGE_TIMEOUT
from analysis.runs.storage import set_storage_timeout
from protolab.commands.errors import UsageError
from protolab.experiment import stopnote
from protolab.experiment.jobs import Local, OnRay
from protolab.experiment.session import CONNECT_TIMEOUT
from sim.pool import DEFAULT_SETS, Pool, load_pool
from strategies.user import DEFAULT_TIMEOUT as DECISION_TIMEOUT
from strategies.user import set_decision_timeout

MAX_GAME_SEED = 2**64 - 1  # a game's seed is an unsigned 64-bit number (replay)


MAX_FIRST_SEED = 2**63 - 1  # simulate, bench, ladder: seeds seed .. seed+games-1 as numpy int64


MAX_BATCH_GAMES = 1_000_000  # simulate, bench, ladder hold every game's row in memory (~0.5 KB each)


MAX_TURN_CAP = 10_000


MAX_WORKERS = 100_000  # --workers with --address: tasks in flight


def check_range(flag: str, value: float | None, lo: float, hi: float) -> None:
    """A numeric option within [lo, hi] (None: not given), else UsageError naming the option."""
    if value is not None and not lo <= value <= hi:  # also refuses nan
        raise UsageError(f"{flag}: expected {lo:,} to {hi:,}, got {value:,}")


def check_batch(games: int, seed: int, turn_cap: int | None = None) -> None:
    """--games, --seed and --turn-cap of a batch of games played in this process."""
    check_range("--games", games, 1, MAX_BATCH_GAMES)
    check_range("--seed", seed, 0, MAX_FIRST_SEED - games + 1)
    check_range("--turn-cap", turn_cap, 1, MAX_TURN_CAP)


FORMATS = ("table", "json", "csv")


def add_format(p: argparse.ArgumentParser, says: str, csv: bool = True, json_alias: bool = False) -> None:
    """`--format table|json|csv` (`table|json` where `csv` is False), the same on every command: `says`
    what the output holds; `--json` stays as an alias where it existed."""
    choices = FORMATS if csv else FORMATS[:2]
    formats = "table (default), json, or csv" if csv else "table (default) or json"
    p.add_argument("--format", choices=choices, default="table", help=f"{formats}: {says}")
    if json_alias:
        p.add_argument("--json", dest="format", action="store_const", const="json", help="same as --format json")


def add_ray(p: argparse.ArgumentParser, local: str) -> None:
    """`--workers`, `--address` and `--connect-timeout`, on every command that plays its games on Ray;
    `local` says what the command plays on without them. check_ray checks what was given."""
    p.add_argument("--workers", type=int, metavar="K", help=f"games played at once, one CPU each (default: {local})")
    p.add_argument(
        "--address", metavar="ADDR", help="join this Ray cluster (e.g. 10.0.0.1:6379) instead of starting a local one"
    )
    p.add_argument(
        "--connect-timeout",
        type=float,
        metavar="S",
        default=CONNECT_TIMEOUT,
        help=f"with --address: give up after S seconds if the cluster does not answer (default {CONNECT_TIMEOUT:g})",
    )


def check_ray(args: argparse.Namespace) -> None:
    """--workers and --connect-timeout in range: a local Ray starts one worker process per CPU it is
    given, so more than a few per core here only fills memory."""
    check_range("--workers", args.workers, 1, MAX_WORKERS if args.address else 4 * (os.cpu_count() or 1))
    if not args.connect_timeout > 0:  # also refuses nan
        raise UsageError(f"--connect-timeout: expected a number of seconds above 0, got {args.connect_timeout:g}")


def ray_runner(args: argparse.Namespace, local_by_default: bool = False) -> Local | OnRay:
    """Where the jobs of a command with add_ray play: this process for `--workers 1` without `--address`
    (and with neither option when `local_by_default`), else Ray, local or the cluster at --address."""
    here = args.workers == 1 or (local_by_default and args.workers is None)
    if here and not args.address:
        return Local()
    return OnRay(args.address, args.workers, args.connect_timeout)


@contextmanager
def ray_jobs(args: argparse.Namespace, local_by_default: bool = False) -> Iterator[Local | OnRay]:
    """The ray_runner of a command's work, closed (its Ray stopped) however the work ends."""
    runner = ray_runner(args, local_by_default)
    try:
        yield runner
    finally:
        runner.close()


def add_run_out(p: argparse.ArgumentParser, default: str) -> None:
    """`--out DIR`, on every command that writes a run folder: where it is created."""
    p.add_argument("--out", metavar="DIR", help=f"folder to create the run folder in (default: {default})")


def add_no_progress(p: argparse.ArgumentParser) -> None:
    """`--no-progress`, on every command that shows progress bars while it plays."""
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def add_run_folder(p: argparse.ArgumentParser, out: str, resume: str, code: str = "the spec names") -> None:
    """The options of a command that plays a run folder on Ray (run, cardvalue; RunOptions.of_args
    reads them): where it plays, where the folder goes (default `out`), `--resume` of an
    interrupted one (`resume` says how), progress bars and `--allow-code` (for the `code`)."""
    add_ray(p, "every core here, or every CPU of the cluster")
    add_run_out(p, out)
    p.add_argument("--resume", metavar="RUN_DIR", help=resume)
    add_no_progress(p)
    add_allow_code(p, code)


def print_csv(rows: Sequence[dict]) -> None:
    """Rows of one table as CSV on stdout (the header is the first row's keys)."""
    writer = csv.DictWriter(sys.stdout, fieldnames=list(rows[0]) if rows else [], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)


def add_decision_timeout(p: argparse.ArgumentParser) -> None:
    """`--decision-timeout`, applied by protolab.cli.main before the command runs (`prepare`)."""
    _add_timeout(p, "decision_timeout")


def add_allow_code(p: argparse.ArgumentParser, what: str = "the spec names") -> None:
    """`--allow-code`, on every command that reads a spec (tests/test_careful.py finds them by it): a
    spec naming Python code is a program, run only when asked (protolab.experiment.spec.check_code)."""
    p.add_argument(
        "--allow-code",
        action="store_true",
        help=f"run the Python modules {what} as strategies (pkg.mod:Class) in this process and every "
        "worker: a spec naming code is a program, run only one you trust",
    )


def add_storage_timeout(p: argparse.ArgumentParser) -> None:
    """`--storage-timeout`, applied by protolab.cli.main before the command runs (`prepare`)."""
    _add_timeout(p, "storage_timeout")


# The timeout options, by argparse dest: the option, what sets it, its help (the default from the setter's module).
TIMEOUTS: dict[str, tuple[str, Callable[[float], None], str]] = {
    "decision_timeout": (
        "--decision-timeout",
        set_decision_timeout,
        f"time limit for each decision of a Python user strategy (default {DECISION_TIMEOUT:g}; 0: none)",
    ),
    "storage_timeout": (
        "--storage-timeout",
        set_storage_timeout,
        f"time limit for each read or write of an object store (s3://...; default {STORAGE_TIMEOUT:g})",
    ),
}


def _add_timeout(p: argparse.ArgumentParser, dest: str) -> None:
    option, _, says = TIMEOUTS[dest]
    p.add_argument(option, type=float, metavar="SECONDS", help=says)
    p.set_defaults(prepare=apply_timeouts)


def apply_timeouts(args: argparse.Namespace) -> None:
    """Every timeout option the command has and was given (a command may have both)."""
    for dest, (option, setter, _) in TIMEOUTS.items():
        value = getattr(args, dest, None)
        if value is not None:
            try:
                setter(value)
            except ValueError as e:
                raise UsageError(f"{option}: {e}") from None


def pool_from(args: argparse.Namespace, require_encoded: bool = True) -> Pool:
    """The card pool the `--set` and `--cards` options name."""
    return load_pool(sets=args.set or DEFAULT_SETS, cards=args.cards or (), require_encoded=require_encoded)


def add_pool_args(p: argparse.ArgumentParser) -> None:
    """`--set` and `--cards`, the same on every command that plays or lists cards."""
    p.add_argument(
        "--set",
        action="append",
        metavar="SET",
        help="card set to include (repeatable; default all four: Main 1, Aux 1, Main 2, Aux 2)",
    )
    p.add_argument(
        "--cards",
        action="append",
        metavar="FILE",
        help="extra protocol or variant file (repeatable); see docs/cards.md",
    )


def console(wide: bool = False) -> Console:
    """The terminal console tables and progress bars print to; `wide`: when the output is not a
    terminal, wide enough for a matchup matrix."""
    if wide and not sys.stdout.isatty() and not os.environ.get("COLUMNS"):
        return Console(width=160)
    return Console()


def report_console(piped_width: int, stderr: bool = False) -> Console:
    """The soft-wrapping console of a run's progress and report; in logs and pipes (not a terminal)
    `piped_width` columns, room for the widest table."""
    out = Console(soft_wrap=True, stderr=stderr)
    return out if out.is_terminal else Console(soft_wrap=True, width=piped_width, stderr=stderr)


def model_note(strategies: Sequence[str], pool: Pool) -> tuple[list[dict], str | None]:
    """The models the strategies play and the note `run`'s provenance prints for them (each model's
    hash and whether it plays the pool it was trained on): ladder and bench say it too."""
    models = models_used(strategies, pool.hash)
    return models, (f"Pool {pool.hash}; {describe_models(models)}" if models else None)


def until_interrupted(work: Callable[[], int], kept: Callable[[], str | None] | None = None) -> int:
    """Run a command that starts Ray with Ctrl-C raising KeyboardInterrupt (whatever handler was set),
    exit status 130. The stop line says what was kept: `kept()` for a command that records as it goes
    (tune's trials), else nothing was (a run's own stop keeps and names its shards before this)."""
    previous = signal.signal(signal.SIGINT, stopnote.interrupt)  # noted too: see stopnote.stop_requested
    try:
        with stopnote.StopDeadline():
            return work()
    except KeyboardInterrupt:
        what = kept() if kept is not None else None
        print(
            f"protolab: stopped; {what}" if what else "protolab: stopped before any shard was played", file=sys.stderr
        )
        return 130
    except Exception:
        if not stopnote.stop_requested():
            raise
        # a library turned the Ctrl-C into its own error (DuckDB's "Query interrupted" in the report)
        print("protolab: interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGINT, previous)
        stopnote.forget_stop()


def serve_until_stopped(server: Any, ready: str) -> None:
    """Say `ready` (the address line), then serve until Ctrl-C, the way a server (dashboard --serve,
    play) is ended: a normal end, exit status 0, the server closed. The line is printed inside the
    guard, so a Ctrl-C the moment a client reads it is a normal end too."""
    try:
        print(ready, flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        stopnote.forget_stop()
    finally:
        server.server_close()
